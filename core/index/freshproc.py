"""Worker processes started as fresh interpreters: no forkserver, no resource tracker.

A multi-threaded process (the server, the TUI) cannot safely fork its workers, and
multiprocessing's answer, the forkserver, brings two processes that stay for the rest of the
process's life once a pool ran: the forkserver itself (an interpreter with the parse modules
loaded) and the resource tracker it starts. Both count in the process tree's memory long after
the cold parse is done. A fresh interpreter per worker costs the same start-up the forkserver
paid once, and nothing of it stays: each worker ends with its work.

`FreshContext` offers what the parse pool and the full-text build use of a multiprocessing
context: `Pipe()`, `Process(target=..., args=...)` (a module-level function; `Connection`
arguments are handed over as inherited descriptors) and `Pool(n)` with `imap_unordered`.

A worker imports this module first, so its top holds only what a worker needs: the parent's
side (subprocess, multiprocessing's connections) is imported where it is used, and a worker's
end of a pipe is a `Channel` (multiprocessing's wire format without multiprocessing, whose
imports would be a part of every worker's start-up and memory).
"""

from __future__ import annotations

import base64
import os
import pickle
import sys
from collections.abc import Callable, Iterable, Iterator
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess
    from multiprocessing.connection import Connection

# The worker's bootstrap: find vaultwatch where this process found it, then run the payload.
_BOOT = "import sys; sys.path.insert(0, {home!r}); from vaultwatch.core.index.freshproc import main; main()"
_IN_FLIGHT = 2  # chunks handed to each pool worker at a time: one to work on, one waiting
# with the calling thread working too (imap_shared), a worker gets more queued: it is refilled
# only between the chunks that thread works on, which a busy interpreter may slow down
_SHARED_IN_FLIGHT = 4


def _home() -> str:
    """The folder holding the `vaultwatch` package, as this process imported it."""
    package = sys.modules["vaultwatch"]
    return os.path.dirname(os.path.dirname(os.path.abspath(package.__file__ or "")))


class _Inherited:
    """A Connection argument, as the worker receives it: the descriptor it inherited."""

    def __init__(self, fd: int, readable: bool, writable: bool) -> None:
        self.fd, self.readable, self.writable = fd, readable, writable


_HUGE = 0x7FFFFFFF  # a longer message has its length in 8 more bytes (multiprocessing's format)
_SMALL = 16384  # a message up to this long goes out in one write with its length, as multiprocessing's


class Channel:
    """A worker's end of a pipe to its parent, where the parent holds a multiprocessing
    `Connection`: the same wire format (a 4-byte big-endian signed length, or -1 and an 8-byte
    one, then a pickle), and the parts of Connection the workers use: `send`, `recv`, `poll`,
    `close`."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd

    def fileno(self) -> int:
        if self.fd is None:
            raise OSError("handle is closed")
        return self.fd

    def send(self, obj: object) -> None:
        data = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
        n = len(data)
        if n > _HUGE:
            self._write((-1).to_bytes(4, "big", signed=True) + n.to_bytes(8, "big"))
            self._write(data)
        elif n > _SMALL:
            self._write(n.to_bytes(4, "big", signed=True))
            self._write(data)
        else:
            self._write(n.to_bytes(4, "big", signed=True) + data)

    def recv(self) -> Any:
        size = int.from_bytes(self._read(4, first=True), "big", signed=True)
        if size == -1:
            size = int.from_bytes(self._read(8), "big")
        return pickle.loads(self._read(size))

    def poll(self, timeout: float | None = 0.0) -> bool:
        import select  # noqa: PLC0415  (only the build's workers poll)

        # poll(), not select(): select() refuses a descriptor numbered 1024 or more, which a process
        # holding many files and sockets (a long test run, a server with many agents) reaches
        waiting = select.poll()
        waiting.register(self.fileno(), select.POLLIN)
        return bool(waiting.poll(None if timeout is None else max(0, int(timeout * 1000 + 0.999))))

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fileno(), view) :]

    def _read(self, n: int, first: bool = False) -> bytes:
        parts: list[bytes] = []
        while n:
            part = os.read(self.fileno(), n)
            if not part:  # the parent closed its end (at the start of a message) or went away
                raise EOFError if first and not parts else OSError("got end of file during message")
            parts.append(part)
            n -= len(part)
        return b"".join(parts)


class FreshProcess:
    """`target(*args)` in a fresh interpreter; the parts of multiprocessing.Process used here."""

    def __init__(
        self, target: Callable[..., object], args: tuple = (), name: str | None = None, daemon: bool = True
    ) -> None:
        self.target, self.args, self.name = target, args, name
        self._popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import subprocess  # noqa: PLC0415  (the parent's side: see the module doc)
        from multiprocessing.connection import Connection  # noqa: PLC0415

        if not sys.executable:  # an embedded interpreter: nothing to start (callers work in-process)
            raise OSError("no Python interpreter to start a worker process with")
        fds: list[int] = []
        args: list[object] = []
        for arg in self.args:
            if isinstance(arg, Connection):
                fds.append(arg.fileno())
                args.append(_Inherited(arg.fileno(), arg.readable, arg.writable))
            else:
                args.append(arg)
        payload = (sys.path, self.target.__module__, self.target.__qualname__, tuple(args))
        blob = base64.b64encode(pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)).decode("ascii")
        self._popen = subprocess.Popen(
            [sys.executable, "-c", _BOOT.format(home=_home()), blob],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # a stdio server's stdout is its client's wire
            pass_fds=fds,
        )

    @property
    def pid(self) -> int | None:
        return None if self._popen is None else self._popen.pid

    @property
    def exitcode(self) -> int | None:
        return None if self._popen is None else self._popen.poll()

    def is_alive(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def join(self, timeout: float | None = None) -> None:
        if self._popen is None:
            return
        import subprocess  # noqa: PLC0415  (the parent's side: see the module doc)

        try:
            self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        if self.is_alive():
            assert self._popen is not None
            self._popen.kill()


def main() -> None:
    """A fresh worker's start: the payload from the command line, then `target(*args)`."""
    path, module, qualname, args = pickle.loads(base64.b64decode(sys.argv[1]))
    sys.path[:] = path
    target: Any = import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    real = [Channel(a.fd) if isinstance(a, _Inherited) else a for a in args]
    code = 0
    try:
        target(*real)
    except BaseException:  # the parent sees the exit code; the reason goes to stderr, as multiprocessing's would
        import traceback  # noqa: PLC0415  (only a failed worker needs it)

        traceback.print_exc()
        code = 1
    finally:
        sys.stderr.flush()
    os._exit(code)  # no atexit or finalizers of inherited state: the work is done


def _pool_worker(conn: Channel) -> None:
    """A pool worker: `(module, qualname, item)` in, ("ok", result) or ("error", what) out; None ends it."""
    functions: dict[tuple[str, str], Any] = {}
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        module, qualname, item = job
        fn: Any = functions.get((module, qualname))
        if fn is None:
            fn = import_module(module)
            for part in qualname.split("."):
                fn = getattr(fn, part)
            functions[(module, qualname)] = fn
        try:
            answer: tuple[str, object] = ("ok", fn(item))
        except Exception as exc:
            answer = ("error", f"{exc!r}")
        conn.send(answer)


class FreshPool:
    """`workers` fresh processes and `imap_unordered`, the part of multiprocessing.Pool the parse uses.
    A worker that fails or goes away raises RuntimeError (callers then do the work in-process)."""

    def __init__(self, workers: int) -> None:
        from multiprocessing.connection import Pipe  # noqa: PLC0415  (the parent's side: see the module doc)

        self.procs: list[FreshProcess] = []
        self.conns: list[Connection] = []
        try:
            for _ in range(max(1, workers)):
                mine, theirs = Pipe()
                proc = FreshProcess(_pool_worker, (theirs,), name="vaultwatch-parse")
                proc.start()
                theirs.close()
                self.procs.append(proc)
                self.conns.append(mine)
        except BaseException:
            self.close()
            raise

    def imap_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """fn(item) for every item, in the order they finish. `items` is drawn lazily, here, as
        workers have room: a walk feeding it overlaps the parse."""
        from multiprocessing.connection import Connection, wait  # noqa: PLC0415  (the parent's side)

        name = (fn.__module__, fn.__qualname__)
        source = iter(items)
        busy = dict.fromkeys(range(len(self.conns)), 0)
        exhausted = False

        def feed(i: int) -> None:
            nonlocal exhausted
            while not exhausted and busy[i] < _IN_FLIGHT:
                try:
                    item = next(source)
                except StopIteration:
                    exhausted = True
                    return
                self.conns[i].send((*name, item))
                busy[i] += 1

        for i in busy:
            feed(i)
        while any(busy.values()):
            ready = wait([self.conns[i] for i in busy if busy[i]])
            for conn in ready:
                assert isinstance(conn, Connection)
                i = self.conns.index(conn)
                value = self._answer(conn)
                busy[i] -= 1
                feed(i)
                yield value

    def imap_shared(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """As `imap_unordered`, with the calling thread as one more worker: whenever no worker's
        answer is waiting, it takes the next item and runs `fn` on it itself. The items go to
        whoever is free, so every worker and this thread end within about one item of each other
        however the machine shares its cores, and one process fewer is started (its start-up
        and its memory) for the same number of hands."""
        from multiprocessing.connection import Connection, wait  # noqa: PLC0415  (the parent's side)

        name = (fn.__module__, fn.__qualname__)
        source = iter(items)
        busy = dict.fromkeys(range(len(self.conns)), 0)
        exhausted = False

        def take() -> tuple[bool, Any]:
            nonlocal exhausted
            if not exhausted:
                try:
                    return True, next(source)
                except StopIteration:
                    exhausted = True
            return False, None

        for i in busy:
            while busy[i] < _SHARED_IN_FLIGHT and (got := take())[0]:
                self.conns[i].send((*name, got[1]))
                busy[i] += 1
        while True:
            waiting = [self.conns[i] for i in busy if busy[i]]
            if not waiting and exhausted:
                return
            # with items left, only look (this thread then works); with none left, wait for the rest
            ready = wait(waiting, None if exhausted else 0) if waiting else []
            if not ready:
                got = take()
                if got[0]:
                    yield fn(got[1])
                continue
            for conn in ready:
                assert isinstance(conn, Connection)
                i = self.conns.index(conn)
                yield self._answer(conn)
                busy[i] -= 1
                while busy[i] < _SHARED_IN_FLIGHT and (got := take())[0]:
                    conn.send((*name, got[1]))
                    busy[i] += 1

    @staticmethod
    def _answer(conn: Connection) -> Any:
        try:
            kind, value = conn.recv()
        except (EOFError, OSError) as exc:
            raise RuntimeError(f"a parse process went away ({exc!r})") from None
        if kind != "ok":
            raise RuntimeError(f"a parse process failed: {value}")
        return value

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(None)
            except OSError:
                pass
            conn.close()
        for proc in self.procs:
            proc.join(1.0)
            if proc.is_alive():
                proc.kill()
                proc.join()

    def __enter__(self) -> FreshPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FreshContext:
    """The parts of a multiprocessing context the parse pool and the full-text build use."""

    Process = FreshProcess

    @staticmethod
    def Pipe(duplex: bool = True) -> tuple[Connection, Connection]:  # noqa: N802  (multiprocessing's name)
        from multiprocessing.connection import Pipe  # noqa: PLC0415  (the parent's side: see the module doc)

        return Pipe(duplex)

    @staticmethod
    def Pool(workers: int) -> FreshPool:  # noqa: N802  (multiprocessing's name)
        return FreshPool(workers)


CONTEXT = FreshContext()
