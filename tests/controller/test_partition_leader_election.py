"""The leader election algorithms (kafkapy.controller.partition_leader_election): pure
functions, tested as such."""

from __future__ import annotations

from kafkapy.controller.partition_leader_election import (
    controlled_shutdown_leader,
    offline_leader,
    preferred_leader,
    reassignment_leader,
)


def alive_set(*ids: int):  # type: ignore[no-untyped-def]
    return lambda broker: broker in ids


def test_offline_takes_the_first_live_isr_replica_in_assignment_order() -> None:
    assert offline_leader([1, 2, 3], [3, 2, 1], alive_set(2, 3), False) == (2, (3, 2))
    # Alive but out of the ISR: not eligible unless unclean.
    assert offline_leader([1, 2, 3], [1], alive_set(2, 3), False) == (None, (1,))
    assert offline_leader([1, 2, 3], [1], alive_set(3, 2), True) == (2, (2,))
    assert offline_leader([1, 2], [1], alive_set(), True) == (None, (1,))


def test_preferred_and_reassignment() -> None:
    assert preferred_leader([1, 2], [2, 1], alive_set(1, 2)) == 1
    assert preferred_leader([1, 2], [2], alive_set(1, 2)) is None
    assert preferred_leader([1, 2], [1, 2], alive_set(2)) is None
    assert reassignment_leader([4, 5], [1, 5, 4], alive_set(5)) == 5


def test_controlled_shutdown_skips_brokers_shutting_down() -> None:
    assert controlled_shutdown_leader([1, 2, 3], [1, 2, 3], alive_set(1, 2, 3), {1}) == \
        (2, (2, 3))
    assert controlled_shutdown_leader([1, 2], [1], alive_set(1, 2), {1}) == (None, ())
