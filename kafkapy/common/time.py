"""Time: the broker's one clock, passed in (Kafka's ``org.apache.kafka.common.utils.Time``).

Theory of operation
-------------------
Two readings, one source:

- ``milliseconds()``: wall-clock epoch milliseconds, for everything that is written down or
  compared with a client's timestamps (record timestamps, commit and expiry times, a group's
  state timestamp, a transaction's start time).
- ``monotonic()``: seconds on Trio's clock (``trio.current_time()``), for deadlines and
  durations (purgatory timers, session timeouts, rebalance delays). Only valid inside
  ``trio.run``.

``SystemTime`` reads the system clock for the first and Trio's clock for the second. ``MockTime``
derives *both* from Trio's clock, so a test running under ``trio.testing.MockClock`` moves wall
time and deadlines together, as Kafka's ``MockTime`` does: ``milliseconds() == start_ms +
round(trio.current_time() * 1000)``. Code that needs the time takes a ``Time`` and never calls
``time.time()`` or ``trio.current_time()`` itself.
"""

from __future__ import annotations

import time
from typing import Protocol

import trio

__all__ = ["SYSTEM_TIME", "MockTime", "SystemTime", "Time"]


class Time(Protocol):
    def milliseconds(self) -> int:
        """Wall-clock time, epoch milliseconds."""
        ...

    def monotonic(self) -> float:
        """Seconds on Trio's clock (deadlines); only inside ``trio.run``."""
        ...


class SystemTime:
    """The real clocks."""

    def milliseconds(self) -> int:
        return time.time_ns() // 1_000_000

    def monotonic(self) -> float:
        return trio.current_time()


SYSTEM_TIME = SystemTime()


class MockTime:
    """Wall time that follows Trio's (mock) clock from ``start_ms``: with
    ``trio.testing.MockClock`` a test drives both readings by advancing one clock."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self.start_ms = start_ms

    def milliseconds(self) -> int:
        return self.start_ms + round(trio.current_time() * 1000)

    def monotonic(self) -> float:
        return trio.current_time()
