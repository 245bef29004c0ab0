"""The standalone broker's garbage-collection policy: full collections that walk only what is
new, and once every few minutes everything.

Why: CPython's full (generation 2) collection walks every container object the collector
tracks, and nothing else runs meanwhile. A broker's objects are mostly long-lived (its logs'
state, connections, the protocol classes), and a busy broker promotes a steady trickle of
short-lived objects to the oldest generation (each young collection promotes whatever is in
flight at that moment), so under load a full collection comes about once a second and walks
all of it: 3-17 ms on a replication leader hosting the ``__consumer_offsets`` partitions
(docs/performance.md, "Pauses of the leader, and the latency tail"), every one of them a
stall of every connection.

What ``install`` does:

- it freezes what exists (``gc.freeze``: the permanent generation, which collections never
  walk): everything loaded at start-up;
- when a full collection ends, what survived it is frozen too, so the next full collection
  walks only the objects created since;
- once ``sweep_interval_s`` has passed since the last sweep, a full collection's end unfreezes
  instead: the next full collection walks every object once, reclaiming cycles among frozen
  objects that died meanwhile (a closed connection's tasks, a deleted partition's state),
  and its survivors are frozen again.

Invariants: reference counting frees frozen objects that are in no cycle, as always; cyclic
garbage among frozen objects waits at most one interval and one full collection, so the memory
it holds is bounded by what such objects a broker sheds in an interval. Only the standalone
server installs this: an embedded broker shares its process with an application whose objects
are not its to freeze.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

__all__ = ["SWEEP_INTERVAL_S", "GcPolicy"]

# Ten minutes: the full sweep over a broker with 10,000 connections takes ~100 ms
# (docs/performance.md); once in ten minutes it is beyond p99.99 of any latency window.
SWEEP_INTERVAL_S = 600.0


class GcPolicy:
    """The collector callback described in the module docstring; ``install`` / ``uninstall``."""

    def __init__(self, sweep_interval_s: float = SWEEP_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.sweep_interval_s = sweep_interval_s
        self._clock = clock
        self._last_sweep = clock()
        self.sweeps = 0         # full collections that walked everything (after the first)

    def install(self) -> None:
        gc.freeze()
        self._last_sweep = self._clock()
        gc.callbacks.append(self._on_collection)

    def uninstall(self) -> None:
        """Remove the callback and unfreeze (tests; a broker keeps it for life)."""
        if self._on_collection in gc.callbacks:
            gc.callbacks.remove(self._on_collection)
        gc.unfreeze()

    def _on_collection(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop" or info["generation"] != 2:
            return
        now = self._clock()
        if now - self._last_sweep >= self.sweep_interval_s:
            self._last_sweep = now
            self.sweeps += 1
            gc.unfreeze()       # the next full collection walks everything once
        else:
            gc.freeze()
