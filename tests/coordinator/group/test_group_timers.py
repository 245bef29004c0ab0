"""The group coordinator's clocks, on Trio's MockClock over an in-memory ``__consumer_offsets``
(no broker, no sleeps): offset expiry (KIP-211, and that it is durable), the initial rebalance
delay (KIP-134), a rebalance signalled to a stable member by its heartbeat."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from kafkapy.config import BrokerConfig
from kafkapy.coordinator.group.classic_group import JoinResult
from kafkapy.coordinator.group.group_coordinator import GroupCoordinator
from kafkapy.coordinator.group.records import OffsetAndMetadata
from kafkapy.errors import RebalanceInProgressError
from tests.coordinator.group.group_support import (
    PROPS,
    T0,
    T1,
    WEEK_MS,
    cluster,
    commit,
    committed,
    coordinator,
    join_member,
    joined,
    run,
    sync,
)

NONE = 0
FAST = BrokerConfig.from_properties({**PROPS, "group.initial.rebalance.delay.ms": "0"})


def commit_value(gc: GroupCoordinator, offset: int) -> OffsetAndMetadata:
    return OffsetAndMetadata(offset, commit_timestamp_ms=gc.time.milliseconds())


# ================================================================================ expiry


def test_offsets_of_an_empty_group_expire_and_stay_expired() -> None:
    async def test() -> None:
        partitions = cluster()
        async with coordinator(partitions, FAST) as gc:
            assert commit(gc, "simple", {T0: 5, T1: 7}) == {T0: NONE, T1: NONE}
            commit(gc, "fresh", {T0: 1})
            now = gc.time.milliseconds()
            # Not yet: offsets.retention.minutes (7 days by default) has not passed.
            assert gc.manager.expire_offsets(now + 60_000) == 0
            assert committed(gc, "simple") == {T0: 5, T1: 7}
            assert gc.manager.expire_offsets(now + WEEK_MS + 60_000) == 3
            assert committed(gc, "simple") == {} and committed(gc, "fresh") == {}
            assert "simple" not in gc.groups and "fresh" not in gc.groups
        # The tombstones are in __consumer_offsets: a reload does not bring them back.
        async with coordinator(partitions, FAST) as gc:
            await trio.testing.wait_all_tasks_blocked()
            assert not gc.manager.loading
            assert committed(gc, "simple") == {} and committed(gc, "fresh") == {}
    run(test)


def test_offsets_expire_on_the_periodic_check() -> None:
    async def test() -> None:
        partitions = cluster()
        config = BrokerConfig.from_properties(
            {**PROPS, "offsets.retention.check.interval.ms": "60000"})
        async with coordinator(partitions, config) as gc:
            commit(gc, "g", {T0: 5})
            await trio.sleep(WEEK_MS / 1000 - 3600)
            assert committed(gc, "g") == {T0: 5}
            await trio.sleep(3600 + 120)
            assert committed(gc, "g") == {} and "g" not in gc.groups
    run(test)


def test_offsets_of_a_group_with_members_do_not_expire() -> None:
    async def test() -> None:
        partitions = cluster()
        async with coordinator(partitions, FAST) as gc:
            first = await joined(join_member(gc, "live"))
            assert first.error == NONE
            assert (await sync(gc, "live", first, {first.member_id: b""})).error == NONE
            assert gc.commit_offsets(
                group_id="live", member_id=first.member_id, group_instance_id=None,
                generation_id=first.generation_id,
                offsets={T0: commit_value(gc, 3)}) == {T0: NONE}
            later = gc.time.milliseconds() + 8 * 24 * 3600 * 1000
            # Subscribed topic "t": kept however old the commit is (KIP-211).
            assert gc.manager.expire_offsets(later) == 0
            assert committed(gc, "live") == {T0: 3}
    run(test)


# ============================================================================ rebalances


def test_initial_delay_waits_one_delay_after_the_latest_join() -> None:
    """KIP-134: a new group's first rebalance waits group.initial.rebalance.delay.ms after its
    latest new member; members joining within that time all land in generation 1."""
    async def test() -> None:
        config = BrokerConfig.from_properties(
            {**PROPS, "group.initial.rebalance.delay.ms": "1000"})
        async with coordinator(cluster(), config) as gc:
            answered_at: dict[int, float] = {}
            results: dict[int, JoinResult] = {}

            async def member(i: int) -> None:
                results[i] = await joined(join_member(gc, "delayed"))
                answered_at[i] = trio.current_time()

            start = trio.current_time()
            async with trio.open_nursery() as nursery:
                for i in range(3):
                    nursery.start_soon(member, i)
                    await trio.sleep(0.5)
            answers = [results[i] for i in range(3)]
            assert {(a.error, a.generation_id) for a in answers} == {(NONE, 1)}
            assert sum(len(a.members) for a in answers) == 3   # the leader lists all three
            # One delay after the latest join (at 1.0 s), not before.
            assert min(answered_at.values()) - start == 2.0
    run(test)


def test_rebalance_in_progress_then_completing() -> None:
    """A stable member learns of a rebalance from its heartbeat (REBALANCE_IN_PROGRESS); once
    the join phase is over, a commit before the SyncGroup is REBALANCE_IN_PROGRESS too."""
    async def test() -> None:
        async with coordinator(cluster(), FAST) as gc:
            first = await joined(join_member(gc, "rb"))
            assert first.error == NONE
            assert (await sync(gc, "rb", first, {first.member_id: b"x"})).error == NONE
            parked = join_member(gc, "rb")              # waits for the first to rejoin
            assert not parked.answered
            assert gc.heartbeat(group_id="rb", member_id=first.member_id,
                                group_instance_id=None, generation_id=first.generation_id) \
                == RebalanceInProgressError.code
            rejoin = await joined(join_member(gc, "rb", first.member_id))
            second = await joined(parked)
            assert (rejoin.error, second.error) == (NONE, NONE)
            assert rejoin.generation_id == second.generation_id == first.generation_id + 1
            with pytest.raises(RebalanceInProgressError):
                gc.commit_offsets(group_id="rb", member_id=second.member_id,
                                  group_instance_id=None, generation_id=second.generation_id,
                                  offsets={T0: commit_value(gc, 1)})
            assert committed(gc, "rb") == {}
    run(test)
