"""What vaultwatch is, as installed: its version, read from the distribution's metadata (the one
place it is written is pyproject.toml)."""

from __future__ import annotations

import os
import re
import sys


def version() -> str:
    """vaultwatch's installed version ("0" when it runs from files that were never installed)."""
    return dist_version("vaultwatch") or "0"


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _project(folder: str) -> str:
    """The project part of a metadata folder's name (`name-1.0.dist-info`, `name.egg-info`)."""
    return folder.rsplit(".", 1)[0].split("-")[0]


def dist_version(name: str) -> str | None:
    """The installed version of distribution `name` (None: not installed), as importlib.metadata says.

    Every process start asks (the command line's --version, a stdio server's handshake, the SDK
    check), and importing importlib.metadata costs more than the answer. So the usual case, the
    first distribution of that name on sys.path being one `.dist-info` folder (an installed wheel) or
    `.egg-info` folder (a source checkout installed for development), is read here: its METADATA's
    or PKG-INFO's Version. Anything else (a zip, an unreadable folder, two of them) is left to
    importlib.metadata, so the answer is always the one it gives."""
    wanted = _normal(name)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:
            break  # a zip on the path: importlib.metadata looks inside it
        except OSError:
            continue
        found = [n for n in names if n.endswith((".dist-info", ".egg-info")) and _normal(_project(n)) == wanted]
        if not found:
            continue
        if len(found) == 1:  # importlib.metadata reads an .egg-info folder's PKG-INFO as METADATA
            headers = "METADATA" if found[0].endswith(".dist-info") else "PKG-INFO"
            got = _metadata_version(os.path.join(entry or ".", found[0], headers))
            if got is not None:
                return got
        break  # not the usual layout: importlib.metadata decides
    from importlib.metadata import PackageNotFoundError  # noqa: PLC0415  (see the docstring)
    from importlib.metadata import version as metadata_version  # noqa: PLC0415

    try:
        return metadata_version(name)
    except PackageNotFoundError:
        return None


def _metadata_version(path: str) -> str | None:
    """The Version field of a METADATA file's headers (None when it has none or cannot be read)."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    return None  # the headers end at the first blank line
                if line.startswith("Version:"):
                    return line[len("Version:") :].strip() or None
    except (OSError, UnicodeDecodeError):
        return None
    return None
