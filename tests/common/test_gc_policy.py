"""GcPolicy: survivors of a full collection are frozen; after the sweep interval, the next full
collection walks everything and reclaims cycles that died while frozen. In this process's own
collector (the policy is uninstalled, and everything unfrozen, after each test)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from kafkapy.common.gc_policy import GcPolicy


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> tuple[weakref.ref[Node], list[Node]]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a), [a]


@pytest.fixture
def clock() -> Iterator[list[float]]:
    yield [1000.0]


@pytest.fixture
def policy(clock: list[float]) -> Iterator[GcPolicy]:
    p = GcPolicy(sweep_interval_s=600, clock=lambda: clock[0])
    p.install()
    try:
        yield p
    finally:
        p.uninstall()


def test_install_freezes_what_exists_and_then_each_full_collections_survivors(
        policy: GcPolicy) -> None:
    assert gc.get_freeze_count() > 0
    alive = Node()

    def seen() -> bool:     # gc.get_objects() lists the generations, not the frozen objects
        return any(o is alive for o in gc.get_objects())

    assert seen()
    gc.collect(1)           # a young collection freezes nothing
    assert seen()
    gc.collect()            # a full one: ``alive`` survives it and is frozen
    assert not seen()


def test_a_cycle_that_dies_frozen_waits_for_the_sweep(policy: GcPolicy,
                                                      clock: list[float]) -> None:
    ref, holder = cycle()
    gc.collect()                  # the cycle survives (held) and is frozen
    holder.clear()                # now unreachable, but frozen: no collection walks it
    gc.collect()
    assert ref() is not None
    assert policy.sweeps == 0
    clock[0] += 600               # the interval has passed: this collection's end unfreezes
    gc.collect()
    assert policy.sweeps == 1
    assert ref() is not None      # (it was frozen while this collection ran)
    gc.collect()                  # the sweep: walks everything, the dead cycle goes
    assert ref() is None
    assert gc.get_freeze_count() > 0   # and the survivors are frozen again


def test_a_cycle_that_dies_unfrozen_goes_at_the_next_full_collection(policy: GcPolicy) -> None:
    ref, holder = cycle()
    holder.clear()                # dies before any full collection saw it
    gc.collect()
    assert ref() is None


def test_uninstall_unfreezes_and_stops_freezing(clock: list[float]) -> None:
    p = GcPolicy(clock=lambda: clock[0])
    p.install()
    p.uninstall()
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert gc.get_freeze_count() == 0
