"""Replacing a small file so that a crash leaves the old content or the new, never a mix: a
temporary file beside it, written and fsynced, renamed over it, then the directory fsynced
(so the rename itself survives a power loss). The checkpoint files, ``meta.properties`` and
the single broker's metadata, ACL and quota files all go through it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fsync_dir", "write_atomically"]


def write_atomically(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8, with ``\\n`` line ends)."""
    raw = data.encode() if isinstance(data, str) else data
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """fsync a directory: its entries (a rename, a new file) reach the disk."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
