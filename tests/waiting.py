"""Waiting for a condition, the one way tests do it (instead of sleeping a guessed time).

A test that sleeps "long enough" is slow on a quiet machine and flaky on a loaded one; a test that
awaits the condition it needs is neither. The timeout only bounds a failure: it is generous on
purpose and never part of what a test asserts (wall-clock claims live in tests marked `timing`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

TIMEOUT = 30.0  # seconds before a condition that never comes true fails the test
POLL = 0.01  # seconds between looks


def wait_until(condition: Callable[[], T], timeout: float = TIMEOUT, what: str = "") -> T:
    """Call `condition` until it returns something truthy, and return that; fail the test (an
    AssertionError naming `what`, or the condition) if `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() >= deadline:
            raise AssertionError(f"not reached within {timeout:g} s: {what or _name(condition)}")
        time.sleep(POLL)


def within(condition: Callable[[], object], timeout: float = TIMEOUT, poll: float = POLL) -> bool:
    """Whether `condition` comes true within `timeout` seconds, for a test that does something
    else than fail when it does not (kill a child, say what it printed)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return bool(condition())
        time.sleep(poll)
    return True


async def await_until(condition: Callable[[], T], timeout: float = TIMEOUT, what: str = "") -> T:
    """`wait_until` for a test running in an event loop: the loop keeps running while it waits."""
    deadline = time.monotonic() + timeout
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() >= deadline:
            raise AssertionError(f"not reached within {timeout:g} s: {what or _name(condition)}")
        await asyncio.sleep(POLL)


def _name(condition: Callable[[], object]) -> str:
    code = getattr(condition, "__code__", None)
    if code is None:
        return repr(condition)
    return f"{getattr(condition, '__qualname__', 'condition')} ({code.co_filename}:{code.co_firstlineno})"
