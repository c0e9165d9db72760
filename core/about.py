"""What vaultwatch is, as installed: its version, read from the distribution's metadata (the one
place it is written is pyproject.toml)."""

from __future__ import annotations


def version() -> str:
    """vaultwatch's installed version ("0" when it runs from files that were never installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("vaultwatch")
    except PackageNotFoundError:
        return "0"
