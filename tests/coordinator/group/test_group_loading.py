"""The group coordinator over an in-memory ``__consumer_offsets``
(:mod:`tests.coordinator.memory_partitions`) and Trio's MockClock: no broker, no sleeps.

Which groups it coordinates follows the broker's leadership calls: a partition loads from its
log on ``on_become_leader`` (COORDINATOR_LOAD_IN_PROGRESS meanwhile), unloads on ``on_resign``
(NOT_COORDINATOR, waiting JoinGroups answered NOT_COORDINATOR), reloads at a newer epoch and
ignores an older one; the topic is created by the first write; offsets expire on the injected
clock; transaction markers commit pending offsets."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
import trio
import trio.testing

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig
from kafkapy.coordinator.group.classic_group import Reply
from kafkapy.coordinator.group.group_coordinator import GroupCoordinator
from kafkapy.coordinator.group.group_metadata_manager import OFFSETS_TOPIC
from kafkapy.coordinator.group.records import OffsetAndMetadata
from kafkapy.coordinator.internal_topic import partition_for
from kafkapy.errors import (
    CoordinatorLoadInProgressError,
    NotCoordinatorError,
    NotLeaderOrFollowerError,
)
from tests.coordinator.memory_partitions import MemoryPartitions

PARTITIONS = 4
PROPS = {
    "offsets.topic.num.partitions": str(PARTITIONS),
    "group.initial.rebalance.delay.ms": "3000",
    "group.min.session.timeout.ms": "1000",
}
CONFIG = BrokerConfig.from_properties(PROPS)
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
NOT_COORDINATOR = NotCoordinatorError.code
WEEK_MS = 7 * 24 * 3600 * 1000


def run(test: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with trio.fail_after(30 * 24 * 3600):    # virtual time: a hang fails, it does not wait
            await test()

    trio.run(bounded, clock=trio.testing.MockClock(autojump_threshold=0))


def group_in(partition: int, prefix: str = "g") -> str:
    """A group id of ``__consumer_offsets`` partition ``partition``."""
    return next(f"{prefix}{i}" for i in range(1000)
                if partition_for(f"{prefix}{i}", PARTITIONS) == partition)


def offsets_tp(group_id: str) -> TopicPartition:
    return TopicPartition(OFFSETS_TOPIC, partition_for(group_id, PARTITIONS))


def cluster() -> MemoryPartitions:
    partitions = MemoryPartitions()
    partitions.create_topic("t", 2)
    return partitions


@asynccontextmanager
async def coordinator(partitions: MemoryPartitions, config: BrokerConfig = CONFIG
                      ) -> AsyncIterator[GroupCoordinator]:
    """A coordinator running over ``partitions``, elected as a broker's startup does."""
    gc = GroupCoordinator(partitions, lambda: config, MockTime())
    partitions.register(OFFSETS_TOPIC, gc)
    partitions.register_txn_completion(gc)
    async with trio.open_nursery() as nursery:
        await nursery.start(gc.run)
        partitions.start()
        try:
            yield gc
        finally:
            gc.shutdown()
            nursery.cancel_scope.cancel()


def commit(gc: GroupCoordinator, group_id: str, offsets: dict[TopicPartition, int]
           ) -> dict[TopicPartition, int]:
    return gc.commit_offsets(group_id=group_id, member_id="", group_instance_id=None,
                             generation_id=-1,
                             offsets={tp: OffsetAndMetadata(o, metadata="m",
                                                            commit_timestamp_ms=gc._now_ms())
                                      for tp, o in offsets.items()})


def committed(gc: GroupCoordinator, group_id: str) -> dict[TopicPartition, int]:
    return {tp: om.offset for tp, om in gc.fetch_offsets(group_id, None).items()
            if om is not None}


def join(gc: GroupCoordinator, group_id: str) -> Reply:
    return gc.join_group(group_id=group_id, member_id="", group_instance_id=None,
                         require_known_member_id=False, support_skip_assignment=True,
                         client_id="c", client_host="/127.0.0.1", rebalance_timeout_ms=10_000,
                         session_timeout_ms=10_000, protocol_type="consumer",
                         protocols=[("range", b"")])


# ============================================================================ the topic


def test_the_first_write_creates_the_topic_and_its_partitions_are_loaded_at_once() -> None:
    async def test() -> None:
        partitions = cluster()
        async with coordinator(partitions) as gc:
            g = group_in(2)
            # No topic yet: nothing is led, every group is empty, requests are served.
            assert committed(gc, g) == {}
            assert OFFSETS_TOPIC not in partitions.topics()
            assert commit(gc, g, {T0: 5, T1: 7}) == {T0: 0, T1: 0}
            assert partitions.topics()[OFFSETS_TOPIC].partitions == PARTITIONS
            assert partitions.configs[OFFSETS_TOPIC]["cleanup.policy"] == "compact"
            assert gc.manager.loaded == set(range(PARTITIONS)) and not gc.manager.loading
            assert committed(gc, g) == {T0: 5, T1: 7}
            assert len(partitions.batches(offsets_tp(g))) == 1
            await gc.manager.flush_if_due(g)
            assert partitions.committed == [(offsets_tp(g), 2)]     # two records
    run(test)


# =============================================================================== loading


def test_a_restarted_coordinator_loads_its_partitions_from_the_log() -> None:
    async def test() -> None:
        partitions = cluster()
        g, h = group_in(1), group_in(3)
        async with coordinator(partitions) as gc:
            commit(gc, g, {T0: 5})
            commit(gc, g, {T0: 6, T1: 1})
            commit(gc, h, {T1: 9})
        async with coordinator(partitions) as gc:
            # start() elected every partition: those with records load in the background.
            assert gc.manager.loading == {1, 3} and gc.manager.loaded == {0, 2}
            with pytest.raises(CoordinatorLoadInProgressError):
                gc.fetch_offsets(g, None)
            with pytest.raises(CoordinatorLoadInProgressError):
                gc.heartbeat(group_id=g, member_id="m", group_instance_id=None,
                             generation_id=1)
            assert gc.list_groups() == []
            await trio.testing.wait_all_tasks_blocked()
            assert gc.manager.loading == set()
            assert committed(gc, g) == {T0: 6, T1: 1}
            assert committed(gc, h) == {T1: 9}
    run(test)


def test_resigning_unloads_the_partitions_groups_and_a_newer_epoch_reloads_them() -> None:
    async def test() -> None:
        partitions = cluster()
        g, other = group_in(1), group_in(2)
        async with coordinator(partitions) as gc:
            commit(gc, g, {T0: 5})
            commit(gc, other, {T0: 8})
            waiting = join(gc, g)          # waits group.initial.rebalance.delay.ms
            assert not waiting.answered
            partitions.resign(offsets_tp(g))
            # The waiting JoinGroup learns at once that this is no longer the coordinator.
            assert waiting.answered and waiting.result.error == NOT_COORDINATOR
            with pytest.raises(NotCoordinatorError):
                gc.fetch_offsets(g, None)
            with pytest.raises(NotCoordinatorError):
                commit(gc, g, {T0: 6})
            assert g not in gc.groups
            assert committed(gc, other) == {T0: 8}      # other partitions are untouched
            with pytest.raises(NotLeaderOrFollowerError):
                partitions.append(offsets_tp(g), b"")
            # Leader again at a newer epoch: the state comes back from the log.
            partitions.elect(offsets_tp(g), 1)
            with pytest.raises(CoordinatorLoadInProgressError):
                gc.fetch_offsets(g, None)
            await trio.testing.wait_all_tasks_blocked()
            assert committed(gc, g) == {T0: 5}
            assert commit(gc, g, {T0: 6}) == {T0: 0}
            assert committed(gc, g) == {T0: 6}
    run(test)


def test_an_election_at_an_older_epoch_is_ignored() -> None:
    async def test() -> None:
        partitions = cluster()
        g = group_in(0)
        async with coordinator(partitions) as gc:
            commit(gc, g, {T0: 5})
            partitions.elect(offsets_tp(g), 5)
            await trio.testing.wait_all_tasks_blocked()
            assert committed(gc, g) == {T0: 5}
            gc.on_become_leader(offsets_tp(g).partition, 3)       # stale: nothing happens
            assert gc.manager.loaded >= {offsets_tp(g).partition}
            assert committed(gc, g) == {T0: 5}
            gc.on_resign(offsets_tp(g).partition, 4)              # stale too
            assert committed(gc, g) == {T0: 5}
            partitions.resign(offsets_tp(g))                      # at epoch 5
            gc.on_become_leader(offsets_tp(g).partition, 4)       # older than the last seen
            with pytest.raises(NotCoordinatorError):
                gc.fetch_offsets(g, None)
    run(test)


def test_a_load_overtaken_by_a_resignation_applies_nothing() -> None:
    async def test() -> None:
        partitions = cluster()
        g = group_in(1)
        async with coordinator(partitions) as gc:
            commit(gc, g, {T0: 5})
        async with coordinator(partitions) as gc:
            assert offsets_tp(g).partition in gc.manager.loading
            partitions.resign(offsets_tp(g))
            await trio.testing.wait_all_tasks_blocked()
            assert g not in gc.groups and not gc.manager.loading
            with pytest.raises(NotCoordinatorError):
                gc.fetch_offsets(g, None)
    run(test)


# ========================================================================== transactions


def test_transactional_offsets_wait_for_the_marker_also_across_a_reload() -> None:
    async def test() -> None:
        partitions = cluster()
        g = group_in(3)
        async with coordinator(partitions) as gc:
            commit(gc, g, {T0: 1})
            assert gc.txn_commit_offsets(
                group_id=g, producer_id=7, producer_epoch=0, member_id="",
                group_instance_id=None, generation_id=-1,
                offsets={T0: OffsetAndMetadata(4)}) == {T0: 0}
            assert committed(gc, g) == {T0: 1} and gc.has_pending_txn_offset(g, T0)
        async with coordinator(partitions) as gc:
            await trio.testing.wait_all_tasks_blocked()
            assert committed(gc, g) == {T0: 1} and gc.has_pending_txn_offset(g, T0)
            results = await partitions.write_txn_markers(7, 0, True, 0, [offsets_tp(g)])
            assert results == {offsets_tp(g): None}
            assert committed(gc, g) == {T0: 4} and not gc.has_pending_txn_offset(g, T0)
        async with coordinator(partitions) as gc:       # the marker is in the log too
            await trio.testing.wait_all_tasks_blocked()
            assert committed(gc, g) == {T0: 4}
    run(test)


# ================================================================================ expiry


def test_offsets_of_an_empty_group_expire_on_the_injected_clock() -> None:
    async def test() -> None:
        partitions = cluster()
        g = group_in(0)
        config = BrokerConfig.from_properties(
            {**PROPS, "offsets.retention.check.interval.ms": "60000"})
        async with coordinator(partitions, config) as gc:
            commit(gc, g, {T0: 5})
            await trio.sleep(WEEK_MS / 1000 - 3600)     # not yet: 7 days by default
            assert committed(gc, g) == {T0: 5}
            await trio.sleep(3600 + 120)
            assert committed(gc, g) == {} and g not in gc.groups
        async with coordinator(partitions) as gc:       # the tombstones are durable
            await trio.testing.wait_all_tasks_blocked()
            assert committed(gc, g) == {}
    run(test)
