"""The group coordinator over an in-memory ``__consumer_offsets``
(:mod:`tests.coordinator.memory_partitions`) and Trio's MockClock: no broker, no sleeps.

Which groups it coordinates follows the broker's leadership calls: a partition loads from its
log on ``on_become_leader`` (COORDINATOR_LOAD_IN_PROGRESS meanwhile), unloads on ``on_resign``
(NOT_COORDINATOR, waiting JoinGroups answered NOT_COORDINATOR), reloads at a newer epoch and
ignores an older one; the topic is created by the first write; transaction markers commit
pending offsets, also those loaded from the log."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from kafkapy.config import BrokerConfig
from kafkapy.coordinator.group.consumer_group import HeartbeatRequest
from kafkapy.coordinator.group.group_metadata_manager import OFFSETS_TOPIC
from kafkapy.coordinator.group.records import OffsetAndMetadata
from kafkapy.errors import (
    CoordinatorLoadInProgressError,
    NotCoordinatorError,
    NotLeaderOrFollowerError,
)
from tests.coordinator.group.group_support import (
    PARTITIONS,
    PROPS,
    T0,
    T1,
    cluster,
    commit,
    committed,
    coordinator,
    group_in,
    join,
    join_member,
    joined,
    offsets_tp,
    run,
)

NOT_COORDINATOR = NotCoordinatorError.code


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


# ====================================================================== unloading groups


def test_resigning_answers_a_waiting_sync_and_unloads_consumer_groups() -> None:
    async def test() -> None:
        partitions = cluster()
        partitions.create_topic("foo", 2)
        g = group_in(2)
        config = BrokerConfig.from_properties({**PROPS, "group.initial.rebalance.delay.ms": "0"})
        async with coordinator(partitions, config) as gc:
            # A classic group whose follower waits in SyncGroup for the leader's assignment.
            leader = await joined(join_member(gc, g))
            follower_reply = join_member(gc, g)
            rejoin = join_member(gc, g, leader.member_id)
            follower, leader = await joined(follower_reply), await joined(rejoin)
            waiting = gc.sync_group(group_id=g, generation_id=follower.generation_id,
                                    member_id=follower.member_id, group_instance_id=None,
                                    protocol_type="consumer", protocol_name="range",
                                    assignments={})
            assert not waiting.answered
            # A KIP-848 consumer group of the same partition, with its session timer.
            cg = group_in(2, "cg")
            gc.consumer_groups.heartbeat(HeartbeatRequest(
                group_id=cg, member_id="m", member_epoch=0, topic_partitions=[],
                subscribed_topic_names=["foo"], rebalance_timeout_ms=5000))
            await trio.testing.wait_all_tasks_blocked()
            partitions.resign(offsets_tp(g))
            assert waiting.answered and waiting.result.error == NOT_COORDINATOR
            assert g not in gc.groups and gc.consumer_groups.get(cg) is None
            assert gc.consumer_groups.purgatory.delayed == 0
            with pytest.raises(NotCoordinatorError):
                gc.consumer_groups.heartbeat(HeartbeatRequest(
                    group_id=cg, member_id="m", member_epoch=1, topic_partitions=[]))
            # Back at a newer epoch: the consumer group and its member come back from the log.
            partitions.elect(offsets_tp(g), 1)
            await trio.testing.wait_all_tasks_blocked()
            loaded = gc.consumer_groups.get(cg)
            assert loaded is not None and list(loaded.members) == ["m"]
            assert gc.consumer_groups.purgatory.delayed >= 1           # timed afresh
    run(test)
