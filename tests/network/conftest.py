"""Fixtures of the network layer's tests."""

from __future__ import annotations

from collections.abc import Iterator

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
