"""ConsumerGroupCoordinator (kafkapy.coordinator.group.consumer_group_coordinator): group creation
and lookup, the
session / rebalance / cleanup timers in their purgatory, group types, describe, list, delete;
then the group coordinator's hooks for consumer groups, over an in-memory ``__consumer_offsets``
(offset commit and fetch by member epoch, ListGroups, DescribeGroups, DeleteGroups,
OffsetDelete).

Persistence: every change writes Kafka's ConsumerGroup* records through the ``write`` callback;
replaying what was written (as the GroupMetadataManager does at startup) and loading it gives
back the same group, after every step of a scenario with joins, revocations, a static member's
temporary leave and replacement, a leave and a session expiry; a loaded group's members keep
their epochs and get fresh session (and rebalance) timers.

The ConsumerGroupCoordinator tests run in ``trio.run`` under ``MockClock(autojump_threshold=0)``
with the
purgatory's reaper running: when every task sleeps the clock jumps to the next deadline, so a
45 s session timeout takes no real time and nothing sleeps to synchronise.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig
from kafkapy.coordinator.group.classic_group import ClassicGroup, GroupState
from kafkapy.coordinator.group.consumer_group import (
    ConsumerGroup,
    ConsumerGroupConfig,
    ConsumerGroupState,
    HeartbeatRequest,
    HeartbeatResponse,
    MemberState,
)
from kafkapy.coordinator.group.consumer_group_coordinator import (
    ConsumerGroupCoordinator,
    Record,
    StoredConsumerGroup,
)
from kafkapy.coordinator.group.group_coordinator import GroupCoordinator
from kafkapy.coordinator.group.records import (
    ConsumerGroupKey,
    OffsetAndMetadata,
    read_key,
)
from kafkapy.errors import (
    CoordinatorLoadInProgressError,
    GroupIdNotFoundError,
    GroupMaxSizeReachedError,
    InvalidGroupIdError,
    InvalidRequestError,
    KafkaStorageError,
    NonEmptyGroupError,
    StaleMemberEpochError,
    UnknownMemberIdError,
    UnsupportedVersionError,
)
from tests.coordinator.group.group_support import committed, coordinator
from tests.coordinator.memory_partitions import MemoryPartitions

FOO = uuid.UUID(int=0xF00)
SESSION_MS, REBALANCE_MS, CLEANUP_MS = 45_000, 10_000, 600_000
TOPICS = {"foo": (FOO, 4)}


def run(test: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with trio.fail_after(24 * 3600):      # virtual time: a hang fails, it does not wait
            await test()

    trio.run(bounded, clock=trio.testing.MockClock(autojump_threshold=0))


@asynccontextmanager
async def running(groups: ConsumerGroupCoordinator) -> AsyncIterator[None]:
    async with trio.open_nursery() as nursery:
        await nursery.start(groups.run)
        try:
            yield
        finally:
            groups.shutdown()


def make(classic: dict[str, ClassicGroup] | None = None, write: Any = None,
         **config: Any) -> ConsumerGroupCoordinator:
    return ConsumerGroupCoordinator(ConsumerGroupConfig(session_timeout_ms=SESSION_MS, **config),
                          topics=lambda: TOPICS, classic_groups=classic,
                          cleanup_interval_ms=CLEANUP_MS, write=write)


def join(groups: ConsumerGroupCoordinator, member_id: str,
         group_id: str = "g") -> HeartbeatResponse:
    return groups.heartbeat(HeartbeatRequest(
        group_id=group_id, member_id=member_id, member_epoch=0, topic_partitions=[],
        subscribed_topic_names=["foo"], rebalance_timeout_ms=REBALANCE_MS))


def beat(groups: ConsumerGroupCoordinator, member_id: str, epoch: int, owned: list[int] | None,
         group_id: str = "g") -> HeartbeatResponse:
    return groups.heartbeat(HeartbeatRequest(
        group_id=group_id, member_id=member_id, member_epoch=epoch,
        topic_partitions=None if owned is None else [(FOO, owned)]))


def parts(response: HeartbeatResponse) -> list[int] | None:
    if response.assignment is None:
        return None
    return [p for _, ps in response.assignment for p in ps]


async def sleep_ms(ms: int) -> None:
    await trio.sleep(ms / 1000)


# ======================================================================= groups and timers


def test_join_creates_the_group_and_assigns_by_topic_id() -> None:
    async def test() -> None:
        groups = make()
        async with running(groups):
            answer = join(groups, "a")
            assert (answer.member_id, answer.member_epoch, answer.assignment,
                    answer.heartbeat_interval_ms) == ("a", 1, [(FOO, [0, 1, 2, 3])], 5000)
            group = groups.get("g")
            assert group is not None and group.state is ConsumerGroupState.STABLE
            assert groups.listed() == [("g", "Stable")]
            assert groups.purgatory.delayed == 1         # a's session timer
    run(test)


def test_a_member_that_heartbeats_stays_and_a_silent_one_expires() -> None:
    async def test() -> None:
        groups = make()
        async with running(groups):
            join(groups, "a")
            join(groups, "b")
            epoch_a = beat(groups, "a", 1, [0, 1, 2, 3]).member_epoch
            # b heartbeats every 5 s for three session timeouts; a says nothing after 10 s.
            for _ in range(3 * SESSION_MS // 5000):
                await sleep_ms(5000)
                b = groups.get("g").members["b"]           # type: ignore[union-attr]
                beat(groups, "b", b.member_epoch, sorted(b.assigned_partitions.get(FOO, ())))
                if trio.current_time() <= 10:
                    a = groups.get("g").members["a"]       # type: ignore[union-attr]
                    beat(groups, "a", a.member_epoch,
                         sorted(a.assigned_partitions.get(FOO, ())))
            group = groups.get("g")
            assert group is not None and set(group.members) == {"b"}
            assert epoch_a >= 1
            b = group.members["b"]
            answer = beat(groups, "b", b.member_epoch, sorted(b.assigned_partitions[FOO]))
            assert sorted(group.members["b"].assigned_partitions[FOO]) == [0, 1, 2, 3]
            assert answer.member_epoch == group.group_epoch
            with pytest.raises(UnknownMemberIdError):
                beat(groups, "a", epoch_a, None)
    run(test)


def test_session_expires_exactly_at_the_session_timeout() -> None:
    async def test() -> None:
        groups = make()
        async with running(groups):
            join(groups, "a")
            await sleep_ms(SESSION_MS - 1)
            assert "a" in groups.get("g").members      # type: ignore[union-attr]
            await sleep_ms(2)
            assert groups.get("g").members == {}       # type: ignore[union-attr]
            assert groups.get("g").state is ConsumerGroupState.EMPTY   # type: ignore[union-attr]
    run(test)


def test_a_member_that_does_not_revoke_is_removed_at_its_rebalance_timeout() -> None:
    async def test() -> None:
        groups = make()
        async with running(groups):
            join(groups, "a")
            join(groups, "b")
            start = trio.current_time()
            # a keeps heartbeating (its session stays alive) but never gives anything up.
            while "a" in groups.get("g").members:        # type: ignore[union-attr]
                assert trio.current_time() - start < 3 * REBALANCE_MS / 1000, "a never removed"
                a = groups.get("g").members["a"]         # type: ignore[union-attr]
                beat(groups, "a", a.member_epoch, [0, 1, 2, 3])
                await sleep_ms(1000)
            assert REBALANCE_MS / 1000 <= trio.current_time() - start <= REBALANCE_MS / 1000 + 1
            b = groups.get("g").members["b"]             # type: ignore[union-attr]
            answer = beat(groups, "b", b.member_epoch, [])
            assert parts(answer) == [0, 1, 2, 3]
    run(test)


def test_a_member_that_revokes_in_time_keeps_its_place() -> None:
    async def test() -> None:
        groups = make()
        async with running(groups):
            join(groups, "a")
            beat(groups, "a", 1, [0, 1, 2, 3])
            join(groups, "b")
            revoking = beat(groups, "a", 1, [0, 1, 2, 3])
            kept = parts(revoking)
            assert kept is not None and len(kept) == 2
            assert groups.get("g").rebalance_deadline("a") is not None  # type: ignore[union-attr]
            await sleep_ms(REBALANCE_MS - 100)
            answer = beat(groups, "a", revoking.member_epoch, kept)
            assert groups.get("g").rebalance_deadline("a") is None      # type: ignore[union-attr]
            await sleep_ms(2 * REBALANCE_MS)
            beat(groups, "a", answer.member_epoch, kept)
            assert set(groups.get("g").members) == {"a", "b"}            # type: ignore[union-attr]
    run(test)


def test_leave_cancels_the_timers_and_an_empty_group_is_cleaned_up() -> None:
    async def test() -> None:
        groups = make()
        async with running(groups):
            join(groups, "a")
            left = beat(groups, "a", -1, None)
            assert (left.member_id, left.member_epoch) == ("a", -1)
            assert groups.get("g").state is ConsumerGroupState.EMPTY   # type: ignore[union-attr]
            assert groups.purgatory.delayed == 1                       # the cleanup timer only
            await sleep_ms(CLEANUP_MS - 1)
            assert groups.get("g") is not None
            await sleep_ms(2)
            assert groups.get("g") is None and groups.purgatory.delayed == 0
    run(test)


def test_an_empty_group_with_offsets_is_kept() -> None:
    async def test() -> None:
        holder = ClassicGroup("g")
        holder.offsets[TopicPartition("foo", 0)] = OffsetAndMetadata(3, -1, "", 0, -1)
        groups = make({"g": holder})
        async with running(groups):
            join(groups, "a")
            beat(groups, "a", -1, None)
            # Half an interval off the cleanup timer's beat: no tie with it.
            await sleep_ms(3 * CLEANUP_MS + CLEANUP_MS // 2)
            assert groups.get("g") is not None
            holder.offsets.clear()
            await sleep_ms(CLEANUP_MS)
            assert groups.get("g") is None
    run(test)


def test_unknown_group_and_failed_joins_leave_nothing() -> None:
    async def test() -> None:
        groups = make(max_size=0)
        async with running(groups):
            with pytest.raises(UnknownMemberIdError, match="the group does not exist"):
                beat(groups, "a", 3, [])
            with pytest.raises(UnknownMemberIdError):
                beat(groups, "a", -1, None)
            with pytest.raises(GroupMaxSizeReachedError):
                join(groups, "a")
            with pytest.raises(InvalidRequestError):     # no subscription in a join
                groups.heartbeat(HeartbeatRequest(group_id="g", member_id="a", member_epoch=0,
                                                  rebalance_timeout_ms=1, topic_partitions=[]))
            assert groups.get("g") is None and groups.purgatory.delayed == 0
    run(test)


def test_a_classic_group_in_use_is_not_taken_over_but_an_empty_one_is() -> None:
    async def test() -> None:
        classic = ClassicGroup("g", state=GroupState.PREPARING_REBALANCE)
        holders = {"g": classic}
        groups = make(holders)
        async with running(groups):
            with pytest.raises(GroupIdNotFoundError, match=r"Group g is not a consumer group\."):
                join(groups, "a")
            with pytest.raises(GroupIdNotFoundError, match=r"Group g is not a consumer group\."):
                groups.describe("g")
            holders["g"] = empty = ClassicGroup("g", state_timestamp_ms=0)
            assert join(groups, "a").member_epoch == 1
            # The holder's offsets start to age only once the consumer group is empty.
            assert empty.state_timestamp_ms > 0
    run(test)


def test_loading_partition_answers_load_in_progress() -> None:
    async def test() -> None:
        def loading(group_id: str) -> None:
            raise CoordinatorLoadInProgressError(f"{group_id} loading")

        groups = ConsumerGroupCoordinator(ConsumerGroupConfig(), topics=lambda: TOPICS,
                                check_loaded=loading)
        async with running(groups):
            with pytest.raises(CoordinatorLoadInProgressError):
                join(groups, "a")
            with pytest.raises(CoordinatorLoadInProgressError):
                groups.describe("g")
    run(test)


def test_describe_delete_and_make_classic() -> None:
    async def test() -> None:
        groups = make()
        async with running(groups):
            with pytest.raises(GroupIdNotFoundError, match=r"Group g not found\."):
                groups.describe("g")
            with pytest.raises(InvalidGroupIdError):
                groups.describe("")
            join(groups, "a")
            described = groups.describe("g")
            assert (described.group_state, described.group_epoch, described.assignor_name) == \
                ("Stable", 1, "uniform")
            [member] = described.members
            assert [(t.topic_name, t.partitions) for t in member.assignment] == \
                [("foo", [0, 1, 2, 3])]
            assert groups.subscribed_topics("g") == {"foo"}
            assert groups.subscribed_topics("other") == set()
            with pytest.raises(NonEmptyGroupError):
                groups.delete("g")
            assert groups.make_classic("g") is False
            beat(groups, "a", -1, None)
            assert groups.make_classic("g") is True
            assert groups.get("g") is None and groups.purgatory.delayed == 0
            assert groups.delete("g") is False
            join(groups, "b")
            beat(groups, "b", -1, None)
            assert groups.delete("g") is True and groups.purgatory.delayed == 0
    run(test)


# ============================================================================ persistence


class RecordLog:
    """The ``write`` callback: keeps every batch, replays them as the manager's loader does."""

    def __init__(self) -> None:
        self.batches: list[tuple[str, list[Record]]] = []
        self.fail: Exception | None = None

    def write(self, group_id: str, records: Sequence[Record]) -> None:
        if self.fail is not None:
            raise self.fail
        self.batches.append((group_id, list(records)))

    def kinds(self, batch: int = -1) -> list[tuple[int, str | None, bool]]:
        """(record type, member id, is a tombstone) of each record of one batch."""
        out = []
        for key, value in self.batches[batch][1]:
            k = read_key(key)
            assert isinstance(k, ConsumerGroupKey)
            out.append((k.record_type, k.member_id, value is None))
        return out

    def replay(self) -> dict[str, StoredConsumerGroup]:
        stored: dict[str, StoredConsumerGroup] = {}
        for _, records in self.batches:
            for key, value in records:
                k = read_key(key)
                assert isinstance(k, ConsumerGroupKey)
                stored.setdefault(k.group, StoredConsumerGroup(k.group)).replay(
                    k.record_type, k.member_id, value)
        return stored


def state(group: ConsumerGroup | None) -> Any:
    if group is None:
        return None
    return (group.group_epoch, group.assignment_epoch, group.subscription_metadata,
            group.members,
            {m: {t: p for t, p in a.items() if p} for m, a in group.target_assignment.items()},
            {p: group.owner_of(*p) for p in [(FOO, i) for i in range(4)]})


def reloaded(log: RecordLog, group_id: str = "g") -> ConsumerGroup | None:
    fresh = make()
    stored = log.replay().get(group_id)
    return None if stored is None else fresh.load(stored)


def test_replayed_records_restore_the_group_after_every_step() -> None:
    async def test() -> None:
        log = RecordLog()
        groups = make(write=log.write)
        checked = 0

        def check() -> None:
            nonlocal checked
            assert state(reloaded(log)) == state(groups.get("g"))
            checked += 1

        async with running(groups):
            join(groups, "a")
            check()
            beat(groups, "a", 1, [0, 1, 2, 3])
            check()
            # A static member joins: a must revoke two partitions (UNREVOKED_PARTITIONS).
            groups.heartbeat(HeartbeatRequest(
                group_id="g", member_id="s1", member_epoch=0, instance_id="inst",
                rack_id="rack-1", topic_partitions=[], subscribed_topic_names=["foo"],
                rebalance_timeout_ms=REBALANCE_MS, server_assignor="range",
                client_id="client-s", client_host="/10.0.0.9"))
            check()
            a = beat(groups, "a", 1, [0, 1, 2, 3])
            g = groups.get("g")
            assert g is not None and g.members["a"].state is MemberState.UNREVOKED_PARTITIONS
            check()
            kept = parts(a)
            assert kept is not None
            a = beat(groups, "a", a.member_epoch, kept)       # revoked: a moves on
            check()
            s1 = beat(groups, "s1", g.members["s1"].member_epoch, [])
            check()
            # The static member leaves temporarily (-2) and is replaced by s2.
            groups.heartbeat(HeartbeatRequest(group_id="g", member_id="s1", member_epoch=-2,
                                              instance_id="inst"))
            check()
            groups.heartbeat(HeartbeatRequest(
                group_id="g", member_id="s2", member_epoch=0, instance_id="inst",
                topic_partitions=[], subscribed_topic_names=["foo"],
                rebalance_timeout_ms=REBALANCE_MS))
            check()
            assert "s1" not in g.members and "s2" in g.members
            join(groups, "c")
            check()
            beat(groups, "c", -1, None)                       # c leaves
            check()
            # s2 falls silent and expires; a keeps heartbeating.
            start = trio.current_time()
            while "s2" in g.members:
                assert trio.current_time() - start < 2 * SESSION_MS / 1000
                a = beat(groups, "a", g.members["a"].member_epoch,
                         sorted(g.members["a"].assigned_partitions.get(FOO, ())))
                await sleep_ms(1000)
            check()
            del s1
        assert checked == 11
    run(test)


def test_each_change_writes_what_changed_in_kafkas_order() -> None:
    async def test() -> None:
        log = RecordLog()
        groups = make(write=log.write)
        async with running(groups):
            join(groups, "a")
            # subscription, partition metadata, group epoch, target, assignment epoch, current
            assert log.kinds() == [(5, "a", False), (4, None, False), (3, None, False),
                                   (7, "a", False), (6, None, False), (8, "a", False)]
            written = len(log.batches)
            beat(groups, "a", 1, [0, 1, 2, 3])
            beat(groups, "a", 1, None)
            assert len(log.batches) == written          # steady heartbeats write nothing
            join(groups, "b")
            # b's subscription, the epoch bump, the new targets of both, b's current assignment
            assert log.kinds() == [(5, "b", False), (3, None, False), (7, "a", False),
                                   (7, "b", False), (6, None, False), (8, "b", False)]
            beat(groups, "a", 1, [0, 1, 2, 3])          # a starts revoking
            assert log.kinds() == [(8, "a", False)]
            beat(groups, "b", -1, None)                 # b leaves
            assert log.kinds() == [(8, "b", True), (7, "b", True), (5, "b", True),
                                   (3, None, False)]
            beat(groups, "a", -1, None)
            assert groups.delete("g") is True
            assert log.kinds() == [(6, None, True), (4, None, True), (3, None, True)]
            assert reloaded(log) is None
    run(test)


def test_a_loaded_group_keeps_its_members_and_times_them_afresh() -> None:
    async def test() -> None:
        log = RecordLog()
        groups = make(write=log.write)
        async with running(groups):
            join(groups, "a")
            beat(groups, "a", 1, [0, 1, 2, 3])
            join(groups, "b")
            beat(groups, "a", 1, [0, 1, 2, 3])        # a must revoke two partitions
        await sleep_ms(SESSION_MS * 10)               # "the broker was down"

        after = make(write=log.write)
        async with running(after):
            loaded = after.load(log.replay()["g"])
            assert loaded is not None and state(loaded) == state(groups.get("g"))
            assert loaded.session_deadline("a") == int(trio.current_time() * 1000) + SESSION_MS
            assert after.purgatory.delayed == 3       # two sessions, a's rebalance timer
            # b carries on at its epoch, without rejoining.
            b = loaded.members["b"]
            answer = beat(after, "b", b.member_epoch, [])
            assert answer.member_epoch == b.member_epoch
            # a does not revoke: it is removed at its rebalance timeout, counted from the load.
            await sleep_ms(REBALANCE_MS + 1)
            assert set(loaded.members) == {"b"}
            with pytest.raises(UnknownMemberIdError):
                beat(after, "a", 1, [0, 1, 2, 3])
            # Its removal was written: a reload has b alone.
            assert state(reloaded(log)) == state(loaded)
            # b falls silent: removed a session timeout after its last heartbeat.
            await sleep_ms(SESSION_MS + 1)
            assert loaded.is_empty()
            assert state(reloaded(log)) == state(loaded)
    run(test)


def test_a_failed_write_fails_the_heartbeat_and_the_next_write_catches_up() -> None:
    async def test() -> None:
        log = RecordLog()
        groups = make(write=log.write)
        async with running(groups):
            join(groups, "a")
            log.fail = KafkaStorageError("disk gone")
            with pytest.raises(KafkaStorageError):
                join(groups, "b")
            # b is a member in memory (Kafka would have rolled the join back) ...
            group = groups.get("g")
            assert group is not None and set(group.members) == {"a", "b"}
            assert set(reloaded(log).members) == {"a"}        # type: ignore[union-attr]
            log.fail = None
            # ... and the next change writes everything since the last successful write.
            beat(groups, "a", 1, [0, 1, 2, 3])
            assert state(reloaded(log)) == state(group)
            # Tombstones too: a group deleted after a failed write leaves nothing behind.
            log.fail = KafkaStorageError("disk gone")
            with pytest.raises(KafkaStorageError):
                beat(groups, "b", -1, None)
            log.fail = None
            beat(groups, "a", -1, None)
            assert groups.delete("g") is True
            assert reloaded(log) is None and log.replay()["g"].subscriptions == {}
    run(test)


# ============================================================ the group coordinator's hooks


def test_coordinator_hooks() -> None:
    async def test() -> None:
        partitions = MemoryPartitions()
        partitions.create_topic("foo", 2)
        config = BrokerConfig.from_properties({"offsets.topic.num.partitions": "1"})
        async with coordinator(partitions, config) as gc:
            hooks(gc)
    run(test)


def hooks(coordinator: GroupCoordinator) -> None:
    groups = coordinator.consumer_groups
    joined = groups.heartbeat(HeartbeatRequest(
        group_id="g", member_id="m", member_epoch=0, topic_partitions=[],
        subscribed_topic_names=["foo"], rebalance_timeout_ms=5000))
    epoch = joined.member_epoch
    offset = OffsetAndMetadata(7, -1, "", 0, -1)
    tp = TopicPartition("foo", 0)

    def commit(member_id: str, member_epoch: int, api_version: int = 9) -> Any:
        return coordinator.commit_offsets(
            group_id="g", member_id=member_id, group_instance_id=None,
            generation_id=member_epoch, offsets={tp: offset}, api_version=api_version)

    # OffsetCommit: by a member at its epoch, in v9+.
    with pytest.raises(StaleMemberEpochError):
        commit("m", epoch + 1)
    with pytest.raises(UnknownMemberIdError):
        commit("stranger", epoch)
    with pytest.raises(UnknownMemberIdError):
        commit("", -1)                  # an admin commit while the group has members
    with pytest.raises(UnsupportedVersionError):
        commit("m", epoch, api_version=8)
    assert committed(coordinator, "g") == {}
    assert commit("m", epoch) == {tp: 0}
    assert committed(coordinator, "g") == {tp: 7}

    # OffsetFetch: a member id (v9+) must come with the member's epoch.
    def fetch(member_id: str | None, member_epoch: int) -> Any:
        return coordinator.fetch_offsets("g", [tp], member_id, member_epoch)
    with pytest.raises(StaleMemberEpochError):
        fetch("m", epoch + 1)
    assert fetch("m", epoch) == {tp: offset}
    assert fetch(None, -1) == {tp: offset}

    # The classic APIs do not see the offsets holder as a classic group.
    assert coordinator.list_groups() == []
    with pytest.raises(GroupIdNotFoundError, match=r"Group g is not a classic group\."):
        coordinator.describe_group("g")
    assert coordinator.delete_groups(["g"]) == {"g": NonEmptyGroupError.code}
    # OffsetDelete: the members subscribe to foo.
    assert coordinator.delete_offsets("g", [tp]) == {tp: 86}

    # The member leaves; the empty group commits like any empty group (admin commit).
    groups.heartbeat(HeartbeatRequest(group_id="g", member_id="m", member_epoch=-1))
    assert commit("", -1) == {tp: 0}
    assert coordinator.delete_groups(["g"]) == {"g": 0}
    assert committed(coordinator, "g") == {}
    assert groups.get("g") is None
    assert coordinator.delete_groups(["g"]) == {"g": GroupIdNotFoundError.code}
