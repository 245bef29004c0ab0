"""Fixtures of the network layer's tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kafkapy._selector import Selector


@pytest.fixture
def selector() -> Iterator[Selector]:
    """A fresh compiled selector, closed after the test."""
    sel = Selector()
    try:
        yield sel
    finally:
        sel.close()


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Callable[[bytes], int]]:
    """``log_file(data)``: a read-only descriptor of a new file holding ``data`` (a segment
    to send regions of), closed after the test."""
    fds: list[int] = []

    def make(data: bytes) -> int:
        path = tmp_path / f"{len(fds):020d}.log"
        path.write_bytes(data)
        fds.append(os.open(path, os.O_RDONLY))
        return fds[-1]

    try:
        yield make
    finally:
        for fd in fds:
            os.close(fd)
