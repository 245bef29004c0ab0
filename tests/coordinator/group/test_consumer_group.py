"""KIP-848 consumer groups (kafkapy.coordinator.group.consumer_group), scenario by scenario.

Each expectation comes from Apache Kafka's group coordinator: its GroupMetadataManager
(``consumerGroupHeartbeat`` and the methods it calls), CurrentAssignmentBuilder and
ConsumerGroup, or the GroupMetadataManagerTest case named in the comment.

``Client`` plays a KIP-848 consumer: it reports what it owns, and when an answer carries an
assignment it drops (revokes) what the assignment lacks and takes the rest. After every
heartbeat the scenarios check the safety property of the protocol: no two clients own the
same partition at the same time.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import pytest

from kafkapy.coordinator.group.assignors import GroupAssignment, MemberSpec, TopicMetadata
from kafkapy.coordinator.group.consumer_group import (
    ConsumerGroup,
    ConsumerGroupConfig,
    ConsumerGroupMember,
    ConsumerGroupState,
    HeartbeatRequest,
    HeartbeatResponse,
    MemberState,
    validate_heartbeat_request,
)
from kafkapy.errors import (
    FencedInstanceIdError,
    FencedMemberEpochError,
    GroupMaxSizeReachedError,
    InvalidRegularExpressionError,
    InvalidRequestError,
    StaleMemberEpochError,
    UnknownMemberIdError,
    UnreleasedInstanceIdError,
    UnsupportedAssignorError,
)

FOO = uuid.UUID(int=0xF00)
BAR = uuid.UUID(int=0xBA2)
REBALANCE_TIMEOUT = 5000


def tp(**parts: Iterable[int]) -> dict[uuid.UUID, frozenset[int]]:
    ids = {"foo": FOO, "bar": BAR}
    return {ids[name]: frozenset(p) for name, p in parts.items()}


class Client:
    """A consumer of the group: its member id, epoch and owned partitions."""

    clients: list[Client]

    def __init__(self, group: ConsumerGroup, member_id: str, topics: Iterable[str] = ("foo",),
                 instance_id: str | None = None, assignor: str | None = None) -> None:
        self.group = group
        self.member_id = member_id
        self.topics = list(topics)
        self.instance_id = instance_id
        self.assignor = assignor
        self.epoch = 0
        self.owned: dict[uuid.UUID, frozenset[int]] = {}
        self.last: HeartbeatResponse | None = None

    def _send(self, request: HeartbeatRequest, metadata: Mapping[str, tuple[uuid.UUID, int]],
              now: int) -> HeartbeatResponse:
        response = self.group.heartbeat(request, metadata, now)
        self.last = response
        self.epoch = response.member_epoch
        if response.assignment is not None:
            # Revoke what is gone, take what is new: the client then owns the assignment.
            self.owned = {t: frozenset(p) for t, p in response.assignment if p}
        return response

    def join(self, metadata: Mapping[str, tuple[uuid.UUID, int]], now: int = 0,
             member_id: str | None = None) -> HeartbeatResponse:
        if member_id is not None:
            self.member_id = member_id
        self.owned = {}
        return self._send(HeartbeatRequest(
            "g", self.member_id, 0, instance_id=self.instance_id,
            rebalance_timeout_ms=REBALANCE_TIMEOUT, subscribed_topic_names=self.topics,
            server_assignor=self.assignor, topic_partitions=[]), metadata, now)

    def heartbeat(self, metadata: Mapping[str, tuple[uuid.UUID, int]], now: int = 0,
                  **fields: Any) -> HeartbeatResponse:
        owned = [(t, sorted(p)) for t, p in sorted(self.owned.items())]
        request = HeartbeatRequest("g", self.member_id, self.epoch,
                                   instance_id=self.instance_id, topic_partitions=owned)
        return self._send(attrs.evolve(request, **fields), metadata, now)

    def leave(self, epoch: int = -1) -> HeartbeatResponse:
        response = self.group.heartbeat(HeartbeatRequest(
            "g", self.member_id, epoch, instance_id=self.instance_id), {}, 0)
        self.owned = {}
        return response


def assert_disjoint(clients: Iterable[Client]) -> None:
    seen: dict[tuple[uuid.UUID, int], str] = {}
    for c in clients:
        for t, parts in c.owned.items():
            for p in parts:
                assert (t, p) not in seen, f"{t}-{p} owned by {seen[(t, p)]} and {c.member_id}"
                seen[(t, p)] = c.member_id


def joined(group: ConsumerGroup, metadata: Mapping[str, tuple[uuid.UUID, int]],
           *names: str) -> list[Client]:
    """Clients ``names`` that joined ``group`` in turn (at time 0), not yet reconciled."""
    clients = [Client(group, n) for n in names]
    for c in clients:
        c.join(metadata)
    return clients


def converge(clients: list[Client], metadata: Mapping[str, tuple[uuid.UUID, int]],
             rounds: int = 10) -> None:
    """Heartbeat round-robin until the group is stable, checking ownership after each one."""
    group = clients[0].group
    for _ in range(rounds):
        for c in clients:
            c.heartbeat(metadata)
            assert_disjoint(clients)
        if group.state is ConsumerGroupState.STABLE:
            return
    raise AssertionError(f"not stable after {rounds} rounds: {group.describe()}")


def owned_union(clients: Iterable[Client]) -> set[tuple[uuid.UUID, int]]:
    return {(t, p) for c in clients for t, parts in c.owned.items() for p in parts}


# ------------------------------------------------------------------------ joining and converging

def test_three_members_join_one_by_one_and_converge() -> None:
    # GroupMetadataManagerTest.testReconciliationProcess, CurrentAssignmentBuilder: a partition
    # moves only after its owner revoked it; an owner revoking stays at its epoch.
    metadata = {"foo": (FOO, 6)}
    group = ConsumerGroup("g")
    a, b, c = (Client(group, m) for m in ("a", "b", "c"))

    r = a.join(metadata)
    assert (r.member_epoch, r.assignment) == (1, [(FOO, [0, 1, 2, 3, 4, 5])])
    assert r.heartbeat_interval_ms == 5000
    assert group.state is ConsumerGroupState.STABLE

    # b joins: epoch 2, but every partition is still a's, so b gets nothing yet.
    r = b.join(metadata)
    assert (r.member_epoch, r.assignment) == (2, [])
    assert group.members["b"].state is MemberState.UNRELEASED_PARTITIONS
    assert group.state is ConsumerGroupState.RECONCILING

    # a learns it must give up 3-5; it stays at epoch 1 until it has.
    r = a.heartbeat(metadata)
    assert (r.member_epoch, r.assignment) == (1, [(FOO, [0, 1, 2])])
    assert group.members["a"].state is MemberState.UNREVOKED_PARTITIONS
    assert group.members["a"].partitions_pending_revocation == tp(foo=[3, 4, 5])
    # Until a reports it no longer owns 3-5, b still gets nothing.
    group.heartbeat(HeartbeatRequest("g", "a", 1, topic_partitions=[(FOO, [0, 1, 2, 3, 4, 5])]),
                    metadata, 0)
    assert b.heartbeat(metadata).assignment is None
    assert group.owner_of(FOO, 3) == "a"

    r = a.heartbeat(metadata)                      # reports [0, 1, 2]
    assert (r.member_epoch, r.assignment) == (2, None)
    assert group.members["a"].state is MemberState.STABLE
    r = b.heartbeat(metadata)
    assert (r.member_epoch, r.assignment) == (2, [(FOO, [3, 4, 5])])
    assert group.state is ConsumerGroupState.STABLE

    r = c.join(metadata)
    assert (r.member_epoch, r.assignment) == (3, [])
    converge([a, b, c], metadata)
    assert {m: sorted(p for ps in cl.owned.values() for p in ps)
            for m, cl in (("a", a), ("b", b), ("c", c))} == {"a": [0, 1], "b": [3, 4],
                                                            "c": [2, 5]}
    assert owned_union([a, b, c]) == {(FOO, p) for p in range(6)}
    assert {cl.epoch for cl in (a, b, c)} == {3}
    assert (group.group_epoch, group.assignment_epoch) == (3, 3)


@attrs.frozen
class FixedAssignor:
    """MockPartitionAssignor of Kafka's tests: hands out a prepared assignment."""

    result: GroupAssignment
    name: str = "range"

    def assign(self, members: Iterable[MemberSpec],
               topics: Mapping[uuid.UUID, TopicMetadata]) -> GroupAssignment:
        return {m.member_id: self.result.get(m.member_id, {}) for m in members}


def test_reconciliation_process() -> None:
    # GroupMetadataManagerTest.testReconciliationProcess, step by step.
    metadata = {"foo": (FOO, 6), "bar": (BAR, 3)}
    assignor = FixedAssignor({"m1": tp(foo=[0, 1], bar=[0]), "m2": tp(foo=[2, 3], bar=[2]),
                              "m3": tp(foo=[4, 5], bar=[1])})
    group = ConsumerGroup("g", assignors={"range": assignor})
    common: dict[str, Any] = {
        "member_epoch": 10, "previous_member_epoch": 9, "rebalance_timeout_ms": 5000,
        "subscribed_topic_names": frozenset({"foo", "bar"}), "server_assignor_name": "range"}
    group.restore(group_epoch=10, assignment_epoch=10, members=[
        ConsumerGroupMember("m1", assigned_partitions=tp(foo=[0, 1, 2], bar=[0, 1]), **common),
        ConsumerGroupMember("m2", assigned_partitions=tp(foo=[3, 4, 5], bar=[2]), **common)],
        target_assignment={"m1": tp(foo=[0, 1, 2], bar=[0, 1]), "m2": tp(foo=[3, 4, 5], bar=[2])},
        topics=metadata)
    assert group.state is ConsumerGroupState.STABLE

    def hb(member: str, epoch: int, owned: dict[uuid.UUID, frozenset[int]] | None = None,
           **fields: Any) -> HeartbeatResponse:
        owned_list = None if owned is None else sorted((t, sorted(p)) for t, p in owned.items())
        return group.heartbeat(attrs.evolve(HeartbeatRequest("g", member, epoch,
                                                             topic_partitions=owned_list),
                                            **fields), metadata, 0)

    # Member 3 joins: epoch 11, nothing yet (all owned by others), UNRELEASED_PARTITIONS.
    r = hb("m3", 0, {}, rebalance_timeout_ms=5000, subscribed_topic_names=["foo", "bar"],
           server_assignor="range")
    assert (r.member_epoch, r.assignment) == (11, [])
    assert group.members["m3"].state is MemberState.UNRELEASED_PARTITIONS
    assert group.state is ConsumerGroupState.RECONCILING

    # Member 1 stays at 10, revoking foo-2 and bar-1.
    r = hb("m1", 10)
    assert (r.member_epoch, r.assignment) == (10, sorted([(FOO, [0, 1]), (BAR, [0])]))
    m1 = group.members["m1"]
    assert (m1.state, m1.member_epoch, m1.previous_member_epoch) == (
        MemberState.UNREVOKED_PARTITIONS, 10, 10)
    assert m1.partitions_pending_revocation == tp(foo=[2], bar=[1])

    # Member 2 stays at 10, revoking foo-4 and foo-5.
    r = hb("m2", 10)
    assert (r.member_epoch, r.assignment) == (10, sorted([(FOO, [3]), (BAR, [2])]))
    assert group.members["m2"].partitions_pending_revocation == tp(foo=[4, 5])

    # Member 3 still waits: no assignment in the answer.
    r = hb("m3", 11)
    assert (r.member_epoch, r.assignment) == (11, None)

    # Member 1 acknowledges: epoch 11, stable. (Kafka 3.7, where this test comes from, sent
    # the assignment whenever TopicPartitions was set; Kafka 4 sends it only on a join, a full
    # request or a change, and member 1's assigned partitions did not change.)
    r = hb("m1", 10, tp(foo=[0, 1], bar=[0]))
    assert (r.member_epoch, r.assignment) == (11, None)
    assert group.members["m1"].state is MemberState.STABLE

    # Member 2 heartbeats without acknowledging: a no-op.
    r = hb("m2", 10)
    assert (r.member_epoch, r.assignment) == (10, None)

    # Member 3 gets bar-1 (released by member 1) but still waits for foo-4 and foo-5.
    r = hb("m3", 11)
    assert (r.member_epoch, r.assignment) == (11, [(BAR, [1])])
    assert group.members["m3"].state is MemberState.UNRELEASED_PARTITIONS
    assert hb("m3", 11).assignment is None

    # Member 2 acknowledges: epoch 11 with foo-2 (released by member 1).
    r = hb("m2", 10, tp(foo=[3], bar=[2]))
    assert (r.member_epoch, r.assignment) == (11, sorted([(FOO, [2, 3]), (BAR, [2])]))

    # Member 3 gets the rest and the group is stable.
    r = hb("m3", 11)
    assert (r.member_epoch, r.assignment) == (11, sorted([(FOO, [4, 5]), (BAR, [1])]))
    assert group.state is ConsumerGroupState.STABLE


# ------------------------------------------------------------------------ leaving and fencing

def test_member_leaves_and_others_take_its_partitions() -> None:
    # consumerGroupLeave -> consumerGroupFenceMember: the member is removed and the group epoch
    # bumped; the next heartbeat computes the new target.
    metadata = {"foo": (FOO, 6)}
    group = ConsumerGroup("g")
    clients = [Client(group, m) for m in ("a", "b", "c")]
    for c in clients:
        c.join(metadata)
    converge(clients, metadata)
    epoch = group.group_epoch

    a, b, c = clients
    r = b.leave()
    assert (r.member_id, r.member_epoch, r.assignment) == ("b", -1, None)
    assert "b" not in group.members and group.group_epoch == epoch + 1
    assert group.session_deadline("b") is None
    assert group.state is ConsumerGroupState.ASSIGNING

    converge([a, c], metadata)
    assert owned_union([a, c]) == {(FOO, p) for p in range(6)}
    assert sorted(len(cl.owned[FOO]) for cl in (a, c)) == [3, 3]

    with pytest.raises(UnknownMemberIdError):
        b.leave()


def test_stale_and_future_epochs_are_fenced() -> None:
    # throwIfConsumerGroupMemberEpochIsInvalid.
    metadata = {"foo": (FOO, 4)}
    group = ConsumerGroup("g")
    a, b = joined(group, metadata, "a", "b")
    converge([a, b], metadata)
    member = group.members["a"]
    assert (member.member_epoch, member.previous_member_epoch) == (2, 1)

    with pytest.raises(FencedMemberEpochError):
        a.heartbeat(metadata, member_epoch=3)
    with pytest.raises(FencedMemberEpochError):
        # The previous epoch without TopicPartitions: nothing shows it is a subset.
        a.heartbeat(metadata, member_epoch=1, topic_partitions=None)
    # The previous epoch with a subset of the assignment is accepted: the answer that bumped
    # the epoch may have been lost.
    r = a.heartbeat(metadata, member_epoch=1)
    assert r.member_epoch == 2
    # ... but not with a partition it does not have.
    with pytest.raises(FencedMemberEpochError):
        a.heartbeat(metadata, member_epoch=1, topic_partitions=[(FOO, [0, 1, 2, 3])])


def test_epoch_older_than_the_previous_one_is_fenced() -> None:
    metadata = {"foo": (FOO, 1)}
    group = ConsumerGroup("g")
    group.restore(group_epoch=10, assignment_epoch=10, members=[ConsumerGroupMember(
        "a", member_epoch=10, previous_member_epoch=9, subscribed_topic_names=frozenset({"foo"}),
        assigned_partitions=tp(foo=[0]))], target_assignment={"a": tp(foo=[0])}, topics=metadata,
        now_ms=100)
    assert group.session_deadline("a") == 100 + 45000
    with pytest.raises(ValueError):
        group.restore(group_epoch=1, assignment_epoch=1, members=[], target_assignment={},
                      topics=metadata)
    with pytest.raises(FencedMemberEpochError):
        group.heartbeat(HeartbeatRequest("g", "a", 8, topic_partitions=[]), metadata, 0)
    assert group.heartbeat(HeartbeatRequest("g", "a", 9, topic_partitions=[(FOO, [0])]),
                           metadata, 0).member_epoch == 10


def test_fenced_member_rejoins_with_epoch_zero_and_the_same_id() -> None:
    # KIP-848 fenced member recovery (and KIP-1082 client-side member ids): epoch 0 is a
    # rejoin, and the answer carries the full assignment.
    metadata = {"foo": (FOO, 2)}
    group = ConsumerGroup("g")
    a = Client(group, "a")
    a.join(metadata)
    with pytest.raises(FencedMemberEpochError):
        a.heartbeat(metadata, member_epoch=7)
    r = a.join(metadata)
    assert (r.member_id, r.member_epoch, r.assignment) == ("a", 1, [(FOO, [0, 1])])
    assert group.group_epoch == 1


def test_unknown_member_heartbeat() -> None:
    metadata = {"foo": (FOO, 2)}
    group = ConsumerGroup("g")
    Client(group, "a").join(metadata)
    with pytest.raises(UnknownMemberIdError):
        group.heartbeat(HeartbeatRequest("g", "zz", 1), metadata, 0)


# ------------------------------------------------------------------------ static members

def test_static_member_temporary_leave_and_rejoin() -> None:
    # GroupMetadataManagerTest.testStaticMemberGetsBackAssignmentUponRejoin;
    # consumerGroupStaticMemberGroupLeave (-2 keeps the member and its partitions);
    # getOrMaybeSubscribeStaticConsumerGroupMember (a new member id takes the instance id over).
    metadata = {"foo": (FOO, 4)}
    group = ConsumerGroup("g")
    s = Client(group, "s1", instance_id="inst")
    d = Client(group, "d")
    s.join(metadata)
    d.join(metadata)
    converge([s, d], metadata)
    epoch = group.group_epoch
    static_partitions = s.owned

    r = s.leave(epoch=-2)
    assert (r.member_id, r.member_epoch) == ("s1", -2)
    assert group.members["s1"].member_epoch == -2
    assert group.group_epoch == epoch                       # no rebalance
    # Its partitions stay with it: d gets nothing more.
    assert d.heartbeat(metadata).assignment is None
    assert {group.owner_of(FOO, p) for p in static_partitions[FOO]} == {"s1"}

    # A new process with the same instance id and a new member id gets it all back at once.
    r = s.join(metadata, member_id="s2")
    assert (r.member_id, r.member_epoch) == ("s2", epoch)
    assert r.assignment == [(FOO, sorted(static_partitions[FOO]))]
    assert "s1" not in group.members and group.static_member("inst") is group.members["s2"]
    assert group.group_epoch == epoch and group.state is ConsumerGroupState.STABLE


def test_static_member_instance_id_rules() -> None:
    metadata = {"foo": (FOO, 2)}
    group = ConsumerGroup("g")
    s = Client(group, "s1", instance_id="inst")
    s.join(metadata)
    # throwIfInstanceIdIsUnreleased: the instance id is in use (its member did not send -2).
    with pytest.raises(UnreleasedInstanceIdError):
        Client(group, "s2", instance_id="inst").join(metadata)
    # throwIfInstanceIdIsFenced: another member id heartbeats or leaves with the instance id.
    with pytest.raises(FencedInstanceIdError):
        group.heartbeat(HeartbeatRequest("g", "s2", 1, instance_id="inst"), metadata, 0)
    with pytest.raises(FencedInstanceIdError):
        group.heartbeat(HeartbeatRequest("g", "s2", -2, instance_id="inst"), metadata, 0)
    # throwIfStaticMemberIsUnknown.
    with pytest.raises(UnknownMemberIdError):
        group.heartbeat(HeartbeatRequest("g", "x", 1, instance_id="other"), metadata, 0)
    with pytest.raises(UnknownMemberIdError):
        group.heartbeat(HeartbeatRequest("g", "x", -1, instance_id="other"), metadata, 0)
    # A static member leaving for good (-1) is removed.
    r = s.leave(epoch=-1)
    assert r.member_epoch == -1 and group.static_member("inst") is None


def test_departed_static_member_expires_with_its_session() -> None:
    # The session timer keeps running after -2; when it fires the member is fenced.
    metadata = {"foo": (FOO, 4)}
    group = ConsumerGroup("g")
    s = Client(group, "s1", instance_id="inst")
    d = Client(group, "d")
    s.join(metadata)
    d.join(metadata)
    converge([s, d], metadata)                   # every heartbeat at time 0
    s.heartbeat(metadata, now=1000)
    s.leave(epoch=-2)
    d.heartbeat(metadata, now=40000)
    assert group.session_deadline("s1") == 1000 + 45000
    assert group.expire_timeouts(46000) == ["s1"]
    converge([d], metadata)
    assert d.owned == tp(foo=[0, 1, 2, 3])


# ------------------------------------------------------------------------ metadata changes

def test_new_partitions_are_assigned() -> None:
    # updateSubscriptionMetadata: a changed metadata hash of the subscribed topics bumps the
    # group epoch, and the next target assignment covers the new partitions.
    metadata = {"foo": (FOO, 4)}
    group = ConsumerGroup("g")
    a, b = joined(group, metadata, "a", "b")
    converge([a, b], metadata)
    epoch = group.group_epoch

    grown = {"foo": (FOO, 8)}
    a.heartbeat(grown)
    assert group.group_epoch == epoch + 1 and group.assignment_epoch == epoch + 1
    converge([a, b], grown)
    assert owned_union([a, b]) == {(FOO, p) for p in range(8)}
    assert [len(a.owned[FOO]), len(b.owned[FOO])] == [4, 4]
    # Unchanged metadata bumps nothing.
    a.heartbeat(grown)
    assert group.group_epoch == epoch + 1


def test_deleted_topic_is_revoked() -> None:
    metadata = {"foo": (FOO, 2), "bar": (BAR, 2)}
    group = ConsumerGroup("g")
    a = Client(group, "a", topics=("foo", "bar"))
    a.join(metadata)
    a.heartbeat(metadata)
    assert a.owned == tp(foo=[0, 1], bar=[0, 1])
    without_bar = {"foo": (FOO, 2)}
    r = a.heartbeat(without_bar)
    assert r.assignment == [(FOO, [0, 1])]
    converge([a], without_bar)
    assert a.owned == tp(foo=[0, 1])


def test_subscription_change_revokes_at_once() -> None:
    # CurrentAssignmentBuilder: topics no longer subscribed leave the assignment in the same
    # heartbeat (withEnforceSubscriptionConsistency / the target of an unsubscribed topic is
    # empty), and become pending revocation.
    metadata = {"foo": (FOO, 2), "bar": (BAR, 2)}
    group = ConsumerGroup("g")
    a = Client(group, "a", topics=("foo", "bar"))
    a.join(metadata)
    epoch = group.group_epoch
    r = a.heartbeat(metadata, subscribed_topic_names=["foo"])
    assert group.group_epoch == epoch + 1
    assert r.assignment == [(FOO, [0, 1])]
    member = group.members["a"]
    assert member.partitions_pending_revocation == tp(bar=[0, 1])
    assert member.state is MemberState.UNREVOKED_PARTITIONS
    a.heartbeat(metadata)
    assert group.state is ConsumerGroupState.STABLE


def test_regex_subscription() -> None:
    # SubscribedTopicRegex (v1): matches topic names, never internal topics; a new matching
    # topic changes the subscription metadata and triggers a rebalance.
    offsets = uuid.UUID(int=0xC0FF)
    metadata = {"foo": (FOO, 2), "__consumer_offsets": (offsets, 50)}
    group = ConsumerGroup("g")
    r = group.heartbeat(HeartbeatRequest("g", "a", 0, rebalance_timeout_ms=1000,
                                         subscribed_topic_regex=".*", topic_partitions=[]),
                        metadata, 0)
    assert r.assignment == [(FOO, [0, 1])]
    grown = {**metadata, "bar": (BAR, 1)}
    r = group.heartbeat(HeartbeatRequest("g", "a", 1, topic_partitions=[(FOO, [0, 1])]), grown, 0)
    assert (r.member_epoch, r.assignment) == (2, sorted([(FOO, [0, 1]), (BAR, [0])]))
    with pytest.raises(InvalidRegularExpressionError):
        group.heartbeat(HeartbeatRequest("g", "b", 0, rebalance_timeout_ms=1000,
                                         subscribed_topic_regex="(", topic_partitions=[]),
                        metadata, 0)
    assert "b" not in group.members


# ------------------------------------------------------------------------ timers

def test_session_expiry() -> None:
    # scheduleConsumerGroupSessionTimeout / consumerGroupFenceMemberOperation.
    metadata = {"foo": (FOO, 2)}
    group = ConsumerGroup("g", ConsumerGroupConfig(session_timeout_ms=10000))
    a, _b = joined(group, metadata, "a", "b")
    a.heartbeat(metadata, now=5000)              # a is told to revoke a partition
    assert group.rebalance_deadline("a") == (1, 5000 + REBALANCE_TIMEOUT)
    a.heartbeat(metadata, now=5000)              # and does
    assert group.rebalance_deadline("a") is None
    assert group.session_deadline("a") == 15000 and group.session_deadline("b") == 10000
    assert group.next_deadline() == 10000
    epoch = group.group_epoch
    assert group.expire_timeouts(9999) == []
    assert group.expire_timeouts(10000) == ["b"]
    assert group.group_epoch == epoch + 1 and set(group.members) == {"a"}
    assert group.expire_member("b") is False
    assert group.expire_member("a") is True
    assert group.state is ConsumerGroupState.EMPTY


def test_rebalance_timeout_fences_a_member_that_does_not_revoke() -> None:
    # maybeReconcile schedules the rebalance timeout when the member enters
    # UNREVOKED_PARTITIONS and cancels it when it leaves; scheduleConsumerGroupRebalanceTimeout
    # fences the member only if it is still at the epoch the timer was armed for.
    metadata = {"foo": (FOO, 4)}
    group = ConsumerGroup("g")
    _a, b = joined(group, metadata, "a", "b")
    group.heartbeat(HeartbeatRequest("g", "a", 1, topic_partitions=[(FOO, [0, 1, 2, 3])]),
                    metadata, 100)
    assert group.members["a"].state is MemberState.UNREVOKED_PARTITIONS
    assert group.rebalance_deadline("a") == (1, 100 + REBALANCE_TIMEOUT)
    assert group.expire_rebalance("a", 0) is False            # a stale timer does nothing
    assert group.expire_timeouts(100 + REBALANCE_TIMEOUT) == ["a"]
    assert "a" not in group.members
    converge([b], metadata)
    assert b.owned == tp(foo=[0, 1, 2, 3])


def test_revocation_clears_the_rebalance_deadline() -> None:
    metadata = {"foo": (FOO, 4)}
    group = ConsumerGroup("g")
    a, _b = joined(group, metadata, "a", "b")
    a.heartbeat(metadata)
    assert group.rebalance_deadline("a") is not None
    a.heartbeat(metadata)
    assert group.rebalance_deadline("a") is None
    assert group.expire_rebalance("a", 1) is False


# ------------------------------------------------------------------------ requests and answers

@pytest.mark.parametrize(("request_", "message"), [
    (HeartbeatRequest("g", "", 1), "MemberId can't be empty."),
    (HeartbeatRequest(" ", "m", 1), "GroupId can't be empty."),
    (HeartbeatRequest("g", "m", 1, instance_id=""), "InstanceId can't be empty."),
    (HeartbeatRequest("g", "m", 1, rack_id=" "), "RackId can't be empty."),
    (HeartbeatRequest("g", "m", 0), "RebalanceTimeoutMs must be provided in first request."),
    (HeartbeatRequest("g", "m", 0, rebalance_timeout_ms=5000),
     "TopicPartitions must be empty when (re-)joining."),
    (HeartbeatRequest("g", "m", 0, rebalance_timeout_ms=5000, topic_partitions=[(FOO, [0])]),
     "TopicPartitions must be empty when (re-)joining."),
    (HeartbeatRequest("g", "m", 0, rebalance_timeout_ms=5000, topic_partitions=[],
                      subscribed_topic_names=[]),
     "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."),
    (HeartbeatRequest("g", "m", -2), "InstanceId can't be null."),
    (HeartbeatRequest("g", "m", -3), "MemberEpoch is invalid."),
])
def test_request_validation(request_: HeartbeatRequest, message: str) -> None:
    # GroupMetadataManagerTest.testConsumerHeartbeatRequestValidation.
    with pytest.raises(InvalidRequestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ConsumerGroup("g").heartbeat(request_, {}, 0)


def test_v0_may_join_without_a_member_id() -> None:
    validate_heartbeat_request(HeartbeatRequest("g", "", 0, rebalance_timeout_ms=1,
                                                subscribed_topic_names=["foo"],
                                                topic_partitions=[], api_version=0), ["uniform"])
    group = ConsumerGroup("g", member_id_factory=lambda: "generated")
    r = group.heartbeat(HeartbeatRequest("g", "", 0, rebalance_timeout_ms=1,
                                         subscribed_topic_names=["foo"], topic_partitions=[],
                                         api_version=0), {"foo": (FOO, 1)}, 0)
    assert r.member_id == "generated" and "generated" in group.members
    with pytest.raises(InvalidRequestError):                 # v1: the client makes the id
        group.heartbeat(HeartbeatRequest("g", "", 0, rebalance_timeout_ms=1,
                                         subscribed_topic_names=["foo"], topic_partitions=[]),
                        {"foo": (FOO, 1)}, 0)


def test_group_max_size() -> None:
    # throwIfConsumerGroupIsFull: only members already in the group get through.
    metadata = {"foo": (FOO, 2)}
    group = ConsumerGroup("g", ConsumerGroupConfig(max_size=1))
    a = Client(group, "a")
    a.join(metadata)
    with pytest.raises(GroupMaxSizeReachedError):
        Client(group, "b").join(metadata)
    assert a.heartbeat(metadata).member_epoch == 1


def test_assignor_choice() -> None:
    # computePreferredServerAssignor: the assignor most members name, else the first
    # configured one; an unknown name is UNSUPPORTED_ASSIGNOR.
    metadata = {"foo": (FOO, 3), "bar": (BAR, 3)}
    group = ConsumerGroup("g")
    a = Client(group, "a", topics=("foo", "bar"), assignor="range")
    b = Client(group, "b", topics=("foo", "bar"), assignor="range")
    with pytest.raises(UnsupportedAssignorError):
        Client(group, "x", assignor="sticky").join(metadata)
    assert group.preferred_assignor == "uniform"
    a.join(metadata)
    b.join(metadata)
    converge([a, b], metadata)
    assert group.preferred_assignor == "range"
    # range: a gets the extra partition of both topics (uniform would give 3 and 3).
    assert a.owned == tp(foo=[0, 1], bar=[0, 1]) and b.owned == tp(foo=[2], bar=[2])
    assert group.describe().assignor_name == "range"


def test_full_request_gets_the_assignment() -> None:
    # consumerGroupHeartbeat: the assignment is sent on a join, on a full request (all of
    # RebalanceTimeoutMs, a subscription and TopicPartitions set) and when it changed.
    metadata = {"foo": (FOO, 2)}
    group = ConsumerGroup("g")
    a = Client(group, "a")
    a.join(metadata)
    assert a.heartbeat(metadata).assignment is None
    r = a.heartbeat(metadata, rebalance_timeout_ms=REBALANCE_TIMEOUT,
                    subscribed_topic_names=["foo"])
    assert r.assignment == [(FOO, [0, 1])]


def test_describe() -> None:
    # ConsumerGroup.asDescribedGroup / ConsumerGroupMember.asConsumerGroupDescribeMember.
    metadata = {"foo": (FOO, 4)}
    group = ConsumerGroup("g")
    assert group.describe(metadata).group_state == "Empty"
    a, b = Client(group, "a"), Client(group, "b")
    group.heartbeat(HeartbeatRequest("g", "a", 0, rebalance_timeout_ms=1000, rack_id="r1",
                                     subscribed_topic_names=["foo"], topic_partitions=[],
                                     client_id="cid", client_host="/10.0.0.1"), metadata, 0)
    a.epoch, a.owned = 1, tp(foo=[0, 1, 2, 3])
    b.join(metadata)
    described = group.describe()
    assert (described.group_id, described.group_state, described.group_epoch,
            described.assignment_epoch, described.assignor_name) == (
        "g", "Reconciling", 2, 2, "uniform")
    da, db = described.members
    assert (da.member_id, da.member_epoch, da.client_id, da.client_host, da.rack_id,
            da.subscribed_topic_names, da.member_type) == (
        "a", 1, "cid", "/10.0.0.1", "r1", ["foo"], 1)
    assert [(x.topic_id, x.topic_name, x.partitions) for x in da.assignment] == [
        (FOO, "foo", [0, 1, 2, 3])]
    assert [(x.topic_name, x.partitions) for x in da.target_assignment] == [("foo", [0, 1])]
    assert (db.member_id, db.assignment) == ("b", [])
    converge([a, b], metadata)
    assert group.describe().group_state == "Stable"


def test_offset_commit_validation() -> None:
    # ConsumerGroup.validateOffsetCommit / validateOffsetFetch.
    metadata = {"foo": (FOO, 1)}
    group = ConsumerGroup("g")
    group.validate_offset_commit("", -1, 9)                  # empty group, admin commit
    Client(group, "a").join(metadata)
    group.validate_offset_commit("a", 1, 9)
    with pytest.raises(StaleMemberEpochError):
        group.validate_offset_commit("a", 0, 9)
    with pytest.raises(UnknownMemberIdError):
        group.validate_offset_commit("b", 1, 9)
    group.validate_offset_fetch(None, -1)
    group.validate_offset_fetch("a", 1)
    with pytest.raises(StaleMemberEpochError):
        group.validate_offset_fetch("a", 2)


def test_request_from_decoded_body() -> None:
    @attrs.frozen
    class TP:
        topic_id: uuid.UUID
        partitions: list[int]

    @attrs.frozen
    class Body:
        group_id: str = "g"
        member_id: str = "m"
        member_epoch: int = 3
        instance_id: str | None = None
        rack_id: str | None = None
        rebalance_timeout_ms: int = -1
        subscribed_topic_names: list[str] | None = None
        server_assignor: str | None = None
        topic_partitions: list[TP] | None = attrs.field(factory=lambda: [TP(FOO, [1, 2])])

    request = HeartbeatRequest.from_body(Body(), 0, client_id="c", client_host="/h")
    assert request == HeartbeatRequest("g", "m", 3, topic_partitions=[(FOO, [1, 2])],
                                       api_version=0, client_id="c", client_host="/h")
