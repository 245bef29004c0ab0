"""A KIP-848 consumer group (``group.protocol=consumer``): members, epochs, the target
assignment, and the reconciliation of each member toward it, driven one ConsumerGroupHeartbeat
at a time.

This module owns the state of *one* group and the rules of Kafka's ``GroupMetadataManager``
(``consumerGroupHeartbeat``, ``consumerGroupLeave``, the fencing paths), ``ConsumerGroup``,
``ConsumerGroupMember`` and ``CurrentAssignmentBuilder``. It is pure and synchronous: no clock
(the caller passes ``now_ms``), no timers, no I/O, no persistence (the caller writes records
of what changed and rebuilds a group with :meth:`ConsumerGroup.restore`). The coordinator that
owns the group map calls it from one task at a time per group; nothing here is thread-safe.

Theory of operation
-------------------
Three epochs, after KIP-848:

- the **group epoch** goes up by one whenever the inputs of the assignment change: a member
  joins or leaves, a member's subscription changes, or the subscribed topics' metadata changes
  (a topic appears, disappears or gains partitions);
- the **assignment epoch** is the group epoch the current *target assignment* was computed for.
  A heartbeat that finds ``group epoch > assignment epoch`` recomputes the target assignment
  for the whole group with the preferred server assignor (the one most members ask for, else
  the first configured) and sets the assignment epoch to the group epoch;
- each **member epoch** trails the assignment epoch. A member reconciles toward its target
  (``reconcile``, Kafka's ``CurrentAssignmentBuilder``):

  - partitions it holds but its target no longer has become *pending revocation*; while the
    member still reports owning any of them it stays ``UNREVOKED_PARTITIONS`` at its old epoch
    and gets no new partition;
  - once it has revoked them, it moves to the assignment epoch and is given the target
    partitions that nobody else holds; a partition still held (assigned or pending revocation)
    by another member is *unreleased* and given later, the member waiting in
    ``UNRELEASED_PARTITIONS``;
  - with nothing left to revoke or wait for it is ``STABLE`` at the assignment epoch.

  So a partition is never held by two members at once (``_owner`` checks it), and a member's
  epoch only advances when it has no unrevoked partition.

The group state follows (Kafka's ``ConsumerGroup.maybeUpdateGroupState``): ``Empty`` without
members, ``Assigning`` while the group epoch is ahead of the assignment epoch, ``Reconciling``
while some member is not stable at the assignment epoch, else ``Stable``.

Heartbeats and their answers (``heartbeat``): MemberEpoch 0 joins (or rejoins with the same
member id, which KIP-1082 clients do after being fenced), -1 leaves, -2 is a static member's
temporary leave (it keeps its partitions until its session expires or it rejoins with a new
member id and the same instance id). Any other epoch must equal the member's epoch, or its
previous epoch when the member reports only partitions it still has (the answer that bumped it
may have been lost); otherwise FENCED_MEMBER_EPOCH. The answer carries the full assignment when
the member joined, sent a full request (after an error the client resends every field), or when
its assigned partitions changed.

Timers belong to the caller. After every call it can read :meth:`ConsumerGroup.session_deadline`
(set by every heartbeat to ``now + session timeout``) and :meth:`ConsumerGroup.rebalance_deadline`
(set when a member starts waiting on a revocation, to ``now + its rebalance timeout``), and when
one fires it calls :meth:`ConsumerGroup.expire_member` or :meth:`ConsumerGroup.expire_rebalance`;
or it calls :meth:`ConsumerGroup.expire_timeouts` with the current time from one periodic timer.

The group does not decide whether it exists: the coordinator creates it only for a MemberEpoch 0
heartbeat and answers GROUP_ID_NOT_FOUND otherwise (``getOrMaybeCreateConsumerGroup``), and
validates each request with :func:`validate_heartbeat_request` before finding the group (Kafka
does it in ``GroupCoordinatorService``; :meth:`ConsumerGroup.heartbeat` repeats it).
"""

from __future__ import annotations

import base64
import enum
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from kafkapy.coordinator.group.assignors import (
    ASSIGNORS,
    GroupAssignment,
    MemberAssignment,
    MemberSpec,
    PartitionAssignor,
    TopicMetadata,
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
    UnsupportedVersionError,
)

__all__ = [
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "ConsumerGroup",
    "ConsumerGroupConfig",
    "ConsumerGroupMember",
    "ConsumerGroupState",
    "DescribedGroup",
    "DescribedMember",
    "DescribedTopicPartitions",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "MemberState",
    "TopicsMetadata",
    "reconcile",
    "validate_heartbeat_request",
]

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

# ConsumerGroupHeartbeat v1+ (KIP-1082): the client generates its member id.
CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION = 1

# Kafka's Topic.isInternal: never matched by a regular expression subscription.
_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state",
                              "__share_group_state"})

TopicsMetadata = Mapping[str, tuple[uuid.UUID, int]]
"""The cluster's topics as the heartbeat sees them: name -> (topic id, partition count)."""

Assignment = Mapping[uuid.UUID, frozenset[int]]


def _freeze(value: Mapping[uuid.UUID, Iterable[int]]) -> dict[uuid.UUID, frozenset[int]]:
    return {topic_id: frozenset(parts) for topic_id, parts in value.items() if parts}


class MemberState(enum.Enum):
    """Kafka's ``MemberState``: where a member is in its reconciliation."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


class ConsumerGroupState(enum.Enum):
    """Kafka's ``ConsumerGroup.ConsumerGroupState``; the value is what Describe reports."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@attrs.frozen
class ConsumerGroupConfig:
    """The ``group.consumer.*`` settings the group needs, with Kafka's defaults."""

    heartbeat_interval_ms: int = 5000        # group.consumer.heartbeat.interval.ms
    session_timeout_ms: int = 45000          # group.consumer.session.timeout.ms
    max_size: int = 2**31 - 1                # group.consumer.max.size
    assignors: tuple[str, ...] = ("uniform", "range")   # group.consumer.assignors


@attrs.frozen
class ConsumerGroupMember:
    """One member, immutable (updates make a new one with :func:`attrs.evolve`).

    Fields and defaults are Kafka's ``ConsumerGroupMember.Builder``: a new member is at epoch 0,
    previous epoch -1, ``STABLE`` with nothing assigned.
    """

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    subscribed_topic_regex: str | None = None
    server_assignor_name: str | None = None
    assigned_partitions: Assignment = attrs.field(factory=dict, converter=_freeze)
    partitions_pending_revocation: Assignment = attrs.field(factory=dict, converter=_freeze)

    def is_reconciled_to(self, assignment_epoch: int) -> bool:
        """Whether the member is stable at ``assignment_epoch`` (Kafka's ``isReconciledTo``)."""
        return self.state is MemberState.STABLE and self.member_epoch == assignment_epoch

    def with_epoch(self, epoch: int, **changes: Any) -> ConsumerGroupMember:
        """The member moved to ``epoch``, its current epoch becoming the previous one."""
        return attrs.evolve(self, member_epoch=epoch, previous_member_epoch=self.member_epoch,
                            **changes)


OwnedPartitions = Sequence[tuple[uuid.UUID, Sequence[int]]]


@attrs.frozen
class HeartbeatRequest:
    """The fields of a ConsumerGroupHeartbeat request; ``None`` / -1 mean "unchanged"."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: Sequence[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: OwnedPartitions | None = None
    api_version: int = 1
    client_id: str = ""
    client_host: str = ""

    @classmethod
    def from_body(cls, body: Any, api_version: int, client_id: str = "",
                  client_host: str = "") -> HeartbeatRequest:
        """A request from a decoded ConsumerGroupHeartbeatRequest (snake_case attributes)."""
        owned = getattr(body, "topic_partitions", None)
        return cls(
            group_id=body.group_id,
            member_id=body.member_id,
            member_epoch=body.member_epoch,
            instance_id=body.instance_id,
            rack_id=body.rack_id,
            rebalance_timeout_ms=body.rebalance_timeout_ms,
            subscribed_topic_names=body.subscribed_topic_names,
            subscribed_topic_regex=getattr(body, "subscribed_topic_regex", None),
            server_assignor=body.server_assignor,
            topic_partitions=None if owned is None else [(tp.topic_id, list(tp.partitions))
                                                         for tp in owned],
            api_version=api_version,
            client_id=client_id,
            client_host=client_host,
        )


@attrs.frozen
class HeartbeatResponse:
    """The fields of a ConsumerGroupHeartbeat response (errors are raised, not returned).

    ``assignment`` is ``None`` when unchanged, else the full assignment as
    ``[(topic id, sorted partitions)]`` sorted by topic id.
    """

    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int = 0
    assignment: list[tuple[uuid.UUID, list[int]]] | None = None
    error_code: int = 0
    error_message: str | None = None


@attrs.frozen
class DescribedTopicPartitions:
    topic_id: uuid.UUID
    topic_name: str
    partitions: list[int]


@attrs.frozen
class DescribedMember:
    """One member of a ConsumerGroupDescribe answer (MemberType 1: a consumer member)."""

    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    subscribed_topic_regex: str | None
    assignment: list[DescribedTopicPartitions]
    target_assignment: list[DescribedTopicPartitions]
    member_type: int = 1


@attrs.frozen
class DescribedGroup:
    """A ConsumerGroupDescribe answer for one group (ErrorCode 0)."""

    group_id: str
    group_state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: list[DescribedMember]
    error_code: int = 0
    error_message: str | None = None


def validate_heartbeat_request(request: HeartbeatRequest, assignors: Iterable[str]) -> None:
    """Kafka's ``throwIfConsumerGroupHeartbeatRequestIsInvalid``.

    Raises:
        InvalidRequestError: an empty MemberId (v1+, or a heartbeat or leave in v0), GroupId,
            InstanceId or RackId; a join (epoch 0) without RebalanceTimeoutMs, with owned
            partitions, or without a subscription; a -2 leave without InstanceId; an epoch
            below -2.
        UnsupportedAssignorError: a ServerAssignor that is not configured.
    """
    epoch = request.member_epoch
    if (request.api_version >= CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION or epoch > 0
            or epoch == LEAVE_GROUP_MEMBER_EPOCH):
        _throw_if_empty(request.member_id, "MemberId can't be empty.")
    _throw_if_empty(request.group_id, "GroupId can't be empty.")
    _throw_if_empty(request.instance_id, "InstanceId can't be empty.")
    _throw_if_empty(request.rack_id, "RackId can't be empty.")
    if epoch == 0:
        if request.rebalance_timeout_ms == -1:
            raise InvalidRequestError("RebalanceTimeoutMs must be provided in first request.")
        if request.topic_partitions is None or len(request.topic_partitions) != 0:
            raise InvalidRequestError("TopicPartitions must be empty when (re-)joining.")
        if not request.subscribed_topic_names and not request.subscribed_topic_regex:
            raise InvalidRequestError(
                "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if request.instance_id is None:
            raise InvalidRequestError("InstanceId can't be null.")
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise InvalidRequestError("MemberEpoch is invalid.")
    supported = list(assignors)
    if request.server_assignor is not None and request.server_assignor not in supported:
        raise UnsupportedAssignorError(
            f"ServerAssignor {request.server_assignor} is not supported. Supported assignors: "
            f"{', '.join(supported)}.")


def _throw_if_empty(value: str | None, message: str) -> None:
    # Kafka's throwIfEmptyString: null is fine, blank (after trim) is not.
    if value is not None and not value.strip():
        raise InvalidRequestError(message)


def reconcile(
    member: ConsumerGroupMember,
    *,
    target_epoch: int,
    target: Assignment,
    subscribed_topic_ids: frozenset[uuid.UUID],
    is_held_by_other: Callable[[uuid.UUID, int], bool],
    owned: OwnedPartitions | None,
    subscription_changed: bool = False,
) -> ConsumerGroupMember:
    """The member's next state toward ``target`` (Kafka's ``CurrentAssignmentBuilder.build``).

    ``owned`` is what the member reported in this heartbeat (``None``: not reported, so it is
    assumed to still own everything); ``is_held_by_other(topic, partition)`` tells whether
    another member still holds a partition (assigned or pending revocation).

    Raises:
        FencedMemberEpochError: the member is in the ``UNKNOWN`` state and did not report an
            empty assignment.
    """
    def owns_any(pending: Assignment) -> bool:
        if owned is None:
            return True
        return any(p in pending.get(topic_id, ()) for topic_id, parts in owned for p in parts)

    def consistent_with_subscription() -> ConsumerGroupMember:
        # Only drop topics the member no longer subscribes to (updateCurrentAssignment).
        assigned = dict(member.assigned_partitions)
        pending = {t: set(p) for t, p in member.partitions_pending_revocation.items()}
        if not subscribed_topic_ids and not pending:
            dropped: dict[uuid.UUID, frozenset[int]] = dict(assigned)
            assigned = {}
        else:
            dropped = {t: p for t, p in assigned.items() if t not in subscribed_topic_ids}
            for t in dropped:
                del assigned[t]
        if not dropped:
            return member
        for t, parts in dropped.items():
            pending.setdefault(t, set()).update(parts)
        if owns_any(_freeze(pending)):
            return member.with_epoch(member.member_epoch, state=MemberState.UNREVOKED_PARTITIONS,
                                     assigned_partitions=assigned,
                                     partitions_pending_revocation=pending)
        return member.with_epoch(member.member_epoch, assigned_partitions=assigned)

    def next_assignment(epoch: int) -> ConsumerGroupMember:
        new_assigned: dict[uuid.UUID, set[int]] = {}
        new_pending: dict[uuid.UUID, set[int]] = {}
        to_assign: dict[uuid.UUID, set[int]] = {}
        unreleased = False
        for topic_id in set(target) | set(member.assigned_partitions):
            wanted = set(target.get(topic_id, ())) if topic_id in subscribed_topic_ids else set()
            current = set(member.assigned_partitions.get(topic_id, ()))
            kept = current & wanted
            revoking = member.partitions_pending_revocation.get(topic_id, frozenset())
            missing = wanted - kept
            # A partition still held by another member is not handed out yet; one this member
            # is itself revoking counts as free (only one member holds a partition at a time).
            free = {p for p in missing if p in revoking or not is_held_by_other(topic_id, p)}
            unreleased = unreleased or free != missing
            if kept:
                new_assigned[topic_id] = kept
            if current - kept:
                new_pending[topic_id] = current - kept
            if free:
                to_assign[topic_id] = free
        if new_pending and owns_any(_freeze(new_pending)):
            # Revoke first: the member stays at its epoch until it no longer owns them.
            return member.with_epoch(epoch, state=MemberState.UNREVOKED_PARTITIONS,
                                     assigned_partitions=new_assigned,
                                     partitions_pending_revocation=new_pending)
        for topic_id, parts in to_assign.items():
            new_assigned.setdefault(topic_id, set()).update(parts)
        state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
        return member.with_epoch(target_epoch, state=state, assigned_partitions=new_assigned,
                                 partitions_pending_revocation={})

    if member.state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return next_assignment(member.member_epoch)
        if subscription_changed:
            return consistent_with_subscription()
        return member
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if owns_any(member.partitions_pending_revocation):
            return consistent_with_subscription() if subscription_changed else member
        return next_assignment(member.member_epoch)
    if member.state is MemberState.UNRELEASED_PARTITIONS:
        return next_assignment(member.member_epoch)
    # UNKNOWN: only a newer coordinator's state could bring it; start the member over.
    if owned is None or len(owned) != 0:
        raise FencedMemberEpochError("The consumer group member is in a unknown state. The "
                                     "member must abandon all its partitions and rejoin.")
    return next_assignment(target_epoch)


def _random_member_id() -> str:
    # Kafka's Uuid.randomUuid().toString(): URL-safe base64 of 16 random bytes, no padding.
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")


def _assignment_list(assignment: Assignment) -> list[tuple[uuid.UUID, list[int]]]:
    return [(topic_id, sorted(parts)) for topic_id, parts in sorted(assignment.items())]


class ConsumerGroup:
    """One KIP-848 consumer group: its epochs, members and target assignment.

    ``assignors`` defaults to the built-in ones named by ``config.assignors``;
    ``member_id_factory`` makes the member id of a v0 client that joins without one.
    """

    def __init__(self, group_id: str, config: ConsumerGroupConfig | None = None, *,
                 assignors: Mapping[str, PartitionAssignor] | None = None,
                 member_id_factory: Callable[[], str] = _random_member_id) -> None:
        self.group_id = group_id
        self.config = config or ConsumerGroupConfig()
        if assignors is None:
            assignors = {name: ASSIGNORS[name] for name in self.config.assignors}
        if not assignors:
            raise ValueError("a consumer group needs at least one assignor")
        self.assignors: dict[str, PartitionAssignor] = dict(assignors)
        self._new_member_id = member_id_factory
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerGroupMember] = {}
        self.target_assignment: dict[str, MemberAssignment] = {}
        # The subscribed topics that exist, as last seen: name -> (topic id, partition count).
        # A difference with the current metadata bumps the group epoch (Kafka: metadata hash).
        self.subscription_metadata: dict[str, tuple[uuid.UUID, int]] = {}
        self._static_members: dict[str, str] = {}            # instance id -> member id
        self._owner: dict[tuple[uuid.UUID, int], str] = {}   # partition -> holding member
        self._session_deadlines: dict[str, int] = {}
        self._rebalance_deadlines: dict[str, tuple[int, int]] = {}   # member -> (epoch, ms)
        self._topic_names: dict[uuid.UUID, str] = {}

    def restore(self, *, group_epoch: int, assignment_epoch: int,
                members: Iterable[ConsumerGroupMember],
                target_assignment: Mapping[str, Mapping[uuid.UUID, Iterable[int]]],
                topics: TopicsMetadata, now_ms: int | None = None,
                subscription_metadata: Mapping[str, tuple[uuid.UUID, int]] | None = None
                ) -> None:
        """Load a group's state as a whole (Kafka replays it from ``__consumer_offsets``).

        The subscription metadata is ``subscription_metadata`` (as stored), else computed from
        ``topics``, so a heartbeat with the same metadata does not bump the group epoch;
        ``topics`` also names the topics for :meth:`describe`. With ``now_ms``, every member's
        session deadline starts then, and a member that was revoking partitions gets a fresh
        rebalance deadline (Kafka schedules both timeouts for the members it loads).

        Raises:
            ValueError: the group is not empty, or two members hold the same partition.
        """
        if self.members:
            raise ValueError(f"group {self.group_id} is not empty")
        self.group_epoch = group_epoch
        self.assignment_epoch = assignment_epoch
        try:
            for member in members:
                self._put_member(member)
        except AssertionError as e:
            raise ValueError(str(e)) from e
        self.target_assignment = {m: _freeze(a) for m, a in target_assignment.items()}
        self._topic_names = {topic_id: name for name, (topic_id, _) in topics.items()}
        self.subscription_metadata = (self._compute_subscription_metadata(topics)
                                      if subscription_metadata is None
                                      else dict(subscription_metadata))
        if now_ms is not None:
            for member_id, member in self.members.items():
                self._session_deadlines[member_id] = now_ms + self.config.session_timeout_ms
                if member.state is MemberState.UNREVOKED_PARTITIONS:
                    self._rebalance_deadlines[member_id] = (
                        member.member_epoch, now_ms + max(member.rebalance_timeout_ms, 0))

    # ------------------------------------------------------------------ queries

    @property
    def state(self) -> ConsumerGroupState:
        """Kafka's group state, computed from the members and the epochs."""
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    @property
    def preferred_assignor(self) -> str:
        """The server assignor most members ask for (ties: by name), else the default one."""
        counts: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor_name is not None:
                counts[m.server_assignor_name] = counts.get(m.server_assignor_name, 0) + 1
        if not counts:
            return next(iter(self.assignors))
        return min(counts, key=lambda name: (-counts[name], name))

    def member(self, member_id: str) -> ConsumerGroupMember:
        """Raises UnknownMemberIdError if ``member_id`` is not a member."""
        try:
            return self.members[member_id]
        except KeyError:
            raise UnknownMemberIdError(
                f"Member {member_id} is not a member of group {self.group_id}.") from None

    def static_member(self, instance_id: str) -> ConsumerGroupMember | None:
        member_id = self._static_members.get(instance_id)
        return None if member_id is None else self.members[member_id]

    def owner_of(self, topic_id: uuid.UUID, partition: int) -> str | None:
        """The member holding a partition (assigned or pending revocation), if any."""
        return self._owner.get((topic_id, partition))

    def session_deadline(self, member_id: str) -> int | None:
        """When the member's session expires (ms), unless it heartbeats first."""
        return self._session_deadlines.get(member_id)

    def rebalance_deadline(self, member_id: str) -> tuple[int, int] | None:
        """``(member epoch, deadline ms)`` while the member must revoke partitions, else None.

        At the deadline the caller calls ``expire_rebalance(member_id, member_epoch)``.
        """
        return self._rebalance_deadlines.get(member_id)

    def is_empty(self) -> bool:
        return not self.members

    # ------------------------------------------------------------------ heartbeat

    def heartbeat(self, request: HeartbeatRequest, topics: TopicsMetadata,
                  now_ms: int) -> HeartbeatResponse:
        """Process one ConsumerGroupHeartbeat of this group; the response fields.

        ``topics`` is the cluster's current topic metadata. The caller (re)arms the member's
        session timer at :meth:`session_deadline` and its revocation timer at
        :meth:`rebalance_deadline` afterwards (or clears them when the member left).

        Raises:
            InvalidRequestError, UnsupportedAssignorError: see
                :func:`validate_heartbeat_request`.
            InvalidRegularExpressionError: a SubscribedTopicRegex that does not compile.
            GroupMaxSizeReachedError: the group is full and this is not one of its members.
            UnknownMemberIdError: a heartbeat or leave from a member (or instance id) the
                group does not know.
            FencedMemberEpochError: a member epoch other than the member's (or its previous
                one with only partitions it still has).
            UnreleasedInstanceIdError: a static member joins with the instance id of a member
                that has not left (-2).
            FencedInstanceIdError: a static member heartbeats or leaves with the instance id
                now owned by another member id.
        """
        validate_heartbeat_request(request, self.assignors)
        self._topic_names = {topic_id: name for name, (topic_id, _) in topics.items()}
        if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return self._leave(request)
        return self._heartbeat(request, topics, now_ms)

    def _heartbeat(self, request: HeartbeatRequest, topics: TopicsMetadata,
                   now_ms: int) -> HeartbeatResponse:
        joining = request.member_epoch == 0
        member_id = request.member_id
        # throwIfConsumerGroupIsFull runs before the member id is made up.
        if len(self.members) >= self.config.max_size and (not member_id
                                                          or member_id not in self.members):
            raise GroupMaxSizeReachedError(
                "The consumer group has reached its maximum capacity of "
                f"{self.config.max_size} members.")
        regex = request.subscribed_topic_regex
        if regex:
            # Checked before anything changes: a failed heartbeat leaves the group as it was.
            _compile_regex(regex)
        if not member_id:
            member_id = self._new_member_id()
        owned = request.topic_partitions

        if request.instance_id is None:
            member = self._dynamic_member(member_id, request.member_epoch, owned, joining)
        else:
            member = self._static_member(member_id, request.member_epoch, request.instance_id,
                                         owned, joining)

        updated = attrs.evolve(
            member,
            instance_id=request.instance_id if request.instance_id is not None
            else member.instance_id,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=request.rebalance_timeout_ms
            if request.rebalance_timeout_ms != -1 else member.rebalance_timeout_ms,
            server_assignor_name=request.server_assignor if request.server_assignor is not None
            else member.server_assignor_name,
            subscribed_topic_names=frozenset(request.subscribed_topic_names)
            if request.subscribed_topic_names is not None else member.subscribed_topic_names,
            # An empty regex is no regex (Kafka's default is the empty string).
            subscribed_topic_regex=(regex or None) if regex is not None
            else member.subscribed_topic_regex,
            client_id=request.client_id,
            client_host=request.client_host,
        )
        subscription_changed = (
            updated.subscribed_topic_names != member.subscribed_topic_names
            or updated.subscribed_topic_regex != member.subscribed_topic_regex)
        self._put_member(updated)

        # 1. Bump the group epoch when the new group must leave epoch 0, a subscription
        # changed, or the subscribed topics' metadata changed.
        metadata = self._compute_subscription_metadata(topics)
        if self.group_epoch == 0 or subscription_changed or metadata != self.subscription_metadata:
            self.group_epoch += 1
        self.subscription_metadata = metadata

        # 2. Recompute the target assignment when the group epoch moved past it.
        if self.group_epoch > self.assignment_epoch:
            self._update_target_assignment(topics)

        # 3. Reconcile the member toward its target.
        updated = self._maybe_reconcile(updated, topics, owned, subscription_changed, now_ms)
        self._session_deadlines[member_id] = now_ms + self.config.session_timeout_ms

        # The full assignment goes out on a join, on a full request (the client sends one after
        # any error) and whenever the assigned partitions changed.
        full_request = (request.rebalance_timeout_ms != -1
                        and (request.subscribed_topic_names is not None
                             or request.subscribed_topic_regex is not None)
                        and owned is not None)
        send = (joining or full_request
                or member.assigned_partitions != updated.assigned_partitions)
        return HeartbeatResponse(
            member_id=updated.member_id,
            member_epoch=updated.member_epoch,
            heartbeat_interval_ms=self.config.heartbeat_interval_ms,
            assignment=_assignment_list(updated.assigned_partitions) if send else None,
        )

    def _dynamic_member(self, member_id: str, epoch: int, owned: OwnedPartitions | None,
                        joining: bool) -> ConsumerGroupMember:
        member = self.members.get(member_id)
        if member is None:
            if not joining:
                raise UnknownMemberIdError(
                    f"Member {member_id} is not a member of group {self.group_id}.")
            return ConsumerGroupMember(member_id)
        self._check_member_epoch(member, epoch, owned)
        return member

    def _static_member(self, member_id: str, epoch: int, instance_id: str,
                       owned: OwnedPartitions | None, joining: bool) -> ConsumerGroupMember:
        existing = self.static_member(instance_id)
        if joining:
            if existing is None:
                return self.members.get(member_id) or ConsumerGroupMember(member_id)
            # The instance id may only move to a new member id once its member left with -2.
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise UnreleasedInstanceIdError(
                    f"Static member {member_id} with instance id {instance_id} cannot join the "
                    f"group because the instance id is owned by {existing.member_id} member.")
            # The new member takes the old one's place: its fields, its current and target
            # assignment, at epoch 0 (replaceMember).
            target = self.target_assignment.get(existing.member_id, {})
            self._remove_member(existing.member_id)
            replacement = attrs.evolve(existing, member_id=member_id, member_epoch=0,
                                       previous_member_epoch=0)
            self._put_member(replacement)
            self.target_assignment[member_id] = target
            return replacement
        if existing is None:
            raise UnknownMemberIdError(f"Instance id {instance_id} is unknown.")
        if existing.member_id != member_id:
            raise FencedInstanceIdError(
                f"Static member {member_id} with instance id {instance_id} was fenced by "
                f"member {existing.member_id}.")
        self._check_member_epoch(existing, epoch, owned)
        return existing

    @staticmethod
    def _check_member_epoch(member: ConsumerGroupMember, epoch: int,
                            owned: OwnedPartitions | None) -> None:
        # Epoch 0 is a (re)join, valid at any time (KIP-848 fenced member recovery).
        if epoch == 0:
            return
        if epoch > member.member_epoch:
            raise FencedMemberEpochError(
                f"The consumer group member has a greater member epoch ({epoch}) than the one "
                f"known by the group coordinator ({member.member_epoch}). The member must "
                "abandon all its partitions and rejoin.")
        if epoch < member.member_epoch:
            # The previous epoch with a subset of the assignment is fine: the response that
            # bumped the epoch may have been lost.
            if epoch != member.previous_member_epoch or not _is_subset(
                    owned, member.assigned_partitions):
                raise FencedMemberEpochError(
                    f"The consumer group member has a smaller member epoch ({epoch}) than the "
                    f"one known by the group coordinator ({member.member_epoch}). The member "
                    "must abandon all its partitions and rejoin.")

    def _maybe_reconcile(self, member: ConsumerGroupMember, topics: TopicsMetadata,
                         owned: OwnedPartitions | None, subscription_changed: bool,
                         now_ms: int) -> ConsumerGroupMember:
        if not subscription_changed and member.is_reconciled_to(self.assignment_epoch):
            return member
        member_id = member.member_id
        updated = reconcile(
            member,
            target_epoch=self.assignment_epoch,
            target=self.target_assignment.get(member_id, {}),
            subscribed_topic_ids=self._subscribed_topic_ids(member, topics),
            is_held_by_other=lambda t, p: self._owner.get((t, p), member_id) != member_id,
            owned=owned,
            subscription_changed=subscription_changed,
        )
        if updated != member:
            self._put_member(updated)
            # The revocation timer restarts on every change while revoking (Kafka reschedules
            # it), and stops once the member no longer waits on a revocation.
            if updated.state is MemberState.UNREVOKED_PARTITIONS:
                self._rebalance_deadlines[member_id] = (
                    updated.member_epoch, now_ms + max(updated.rebalance_timeout_ms, 0))
            else:
                self._rebalance_deadlines.pop(member_id, None)
        return updated

    def _leave(self, request: HeartbeatRequest) -> HeartbeatResponse:
        if request.instance_id is None:
            member = self.member(request.member_id)
            self._fence(member.member_id)
            return HeartbeatResponse(member_id=request.member_id,
                                     member_epoch=request.member_epoch)
        member_or_none = self.static_member(request.instance_id)
        if member_or_none is None:
            raise UnknownMemberIdError(f"Instance id {request.instance_id} is unknown.")
        member = member_or_none
        if member.member_id != request.member_id:
            raise FencedInstanceIdError(
                f"Static member {request.member_id} with instance id {request.instance_id} "
                f"was fenced by member {member.member_id}.")
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # A temporary leave: the member stays, keeping its assignment (its partitions are
            # not given to others) until it rejoins or its session expires.
            self._put_member(attrs.evolve(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                                          partitions_pending_revocation={}))
            self._rebalance_deadlines.pop(member.member_id, None)
            return HeartbeatResponse(member_id=member.member_id,
                                     member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
        self._fence(member.member_id)
        return HeartbeatResponse(member_id=request.member_id, member_epoch=request.member_epoch)

    # ------------------------------------------------------------------ timers

    def expire_member(self, member_id: str) -> bool:
        """The member's session expired: remove it and bump the group epoch.

        Returns False (and changes nothing) if it is no longer a member.
        """
        if member_id not in self.members:
            return False
        self._fence(member_id)
        return True

    def expire_rebalance(self, member_id: str, member_epoch: int) -> bool:
        """The member did not revoke within its rebalance timeout: remove it if it is still at
        ``member_epoch`` (as Kafka's rebalance timeout task checks). Returns whether it was."""
        member = self.members.get(member_id)
        if member is None or member.member_epoch != member_epoch:
            return False
        self._fence(member_id)
        return True

    def expire_timeouts(self, now_ms: int) -> list[str]:
        """Remove every member whose session or revocation deadline is at or before ``now_ms``;
        the removed member ids, sorted."""
        expired = {m for m, deadline in self._session_deadlines.items() if deadline <= now_ms}
        for member_id, (epoch, deadline) in self._rebalance_deadlines.items():
            member = self.members.get(member_id)
            if deadline <= now_ms and member is not None and member.member_epoch == epoch:
                expired.add(member_id)
        for member_id in sorted(expired):
            self.expire_member(member_id)
        return sorted(expired)

    def next_deadline(self) -> int | None:
        """The earliest session or revocation deadline, for a caller with one timer."""
        deadlines = list(self._session_deadlines.values())
        deadlines += [deadline for _, deadline in self._rebalance_deadlines.values()]
        return min(deadlines, default=None)

    # ------------------------------------------------------------------ offsets

    def validate_offset_commit(self, member_id: str, member_epoch: int,
                               api_version: int, is_transactional: bool = False) -> None:
        """Kafka's ``ConsumerGroup.validateOffsetCommit`` for members of this group.

        Raises:
            UnknownMemberIdError: not a member (unless the epoch is negative and the group is
                empty: an admin client or a consumer without group management).
            UnsupportedVersionError: a non-transactional commit older than OffsetCommit v9.
            StaleMemberEpochError: the epoch is not the member's.
        """
        if member_epoch < 0 and not self.members:
            return
        member = self.member(member_id)
        if not is_transactional and api_version < 9:
            raise UnsupportedVersionError("OffsetCommit version 9 or above must be used by "
                                          "members using the modern group protocol")
        if member_epoch != member.member_epoch:
            raise StaleMemberEpochError(
                f"The received member epoch {member_epoch} does not match the expected member "
                f"epoch {member.member_epoch}.")

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        """Kafka's ``ConsumerGroup.validateOffsetFetch``: an OffsetFetch with a member id
        (v9+) must come from a member at its epoch.

        Raises:
            UnknownMemberIdError, StaleMemberEpochError: as for offset commits.
        """
        if member_id is None and member_epoch < 0:
            return
        member = self.member(member_id or "")
        if member_epoch != member.member_epoch:
            raise StaleMemberEpochError(
                f"The received member epoch {member_epoch} does not match the expected member "
                f"epoch {member.member_epoch}.")

    # ------------------------------------------------------------------ describe

    def describe(self, topics: TopicsMetadata | None = None) -> DescribedGroup:
        """The ConsumerGroupDescribe answer for this group; topics absent from ``topics``
        (default: the metadata of the last heartbeat) are left out, as Kafka does."""
        names = (self._topic_names if topics is None
                 else {topic_id: name for name, (topic_id, _) in topics.items()})

        def described(assignment: Assignment) -> list[DescribedTopicPartitions]:
            return [DescribedTopicPartitions(t, names[t], parts)
                    for t, parts in _assignment_list(assignment) if t in names]

        return DescribedGroup(
            group_id=self.group_id,
            group_state=self.state.value,
            group_epoch=self.group_epoch,
            assignment_epoch=self.assignment_epoch,
            assignor_name=self.preferred_assignor,
            members=[DescribedMember(
                member_id=m.member_id,
                instance_id=m.instance_id,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=sorted(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex,
                assignment=described(m.assigned_partitions),
                target_assignment=described(self.target_assignment.get(m.member_id, {})),
            ) for _, m in sorted(self.members.items())],
        )

    # ------------------------------------------------------------------ internals

    def _put_member(self, member: ConsumerGroupMember) -> None:
        """Add or replace a member, keeping partition ownership and static ids consistent."""
        old = self.members.get(member.member_id)
        if old is not None:
            self._release(old)
        for assignment in (member.assigned_partitions, member.partitions_pending_revocation):
            for topic_id, parts in assignment.items():
                for p in parts:
                    holder = self._owner.setdefault((topic_id, p), member.member_id)
                    if holder != member.member_id:
                        raise AssertionError(f"partition {topic_id}-{p} held by {holder} is "
                                             f"also given to {member.member_id}")
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self._static_members[member.instance_id] = member.member_id

    def _release(self, member: ConsumerGroupMember) -> None:
        for assignment in (member.assigned_partitions, member.partitions_pending_revocation):
            for topic_id, parts in assignment.items():
                for p in parts:
                    if self._owner.get((topic_id, p)) == member.member_id:
                        del self._owner[(topic_id, p)]

    def _remove_member(self, member_id: str) -> None:
        member = self.members.pop(member_id)
        self._release(member)
        if member.instance_id is not None and \
                self._static_members.get(member.instance_id) == member_id:
            del self._static_members[member.instance_id]
        self.target_assignment.pop(member_id, None)
        self._session_deadlines.pop(member_id, None)
        self._rebalance_deadlines.pop(member_id, None)

    def _fence(self, member_id: str) -> None:
        """Remove a member and bump the group epoch (consumerGroupFenceMembers); the target
        assignment is recomputed by the next heartbeat of any member."""
        self._remove_member(member_id)
        self.group_epoch += 1
        self.subscription_metadata = {
            name: meta for name, meta in self.subscription_metadata.items()
            if any(name in self._effective_subscription(m, None)
                   for m in self.members.values())}

    def _effective_subscription(self, member: ConsumerGroupMember,
                                topics: TopicsMetadata | None) -> frozenset[str]:
        """The member's topic names: its list plus what its regex matches in ``topics``."""
        if member.subscribed_topic_regex is None:
            return member.subscribed_topic_names
        pool = topics if topics is not None else {
            name: (topic_id, 0) for topic_id, name in self._topic_names.items()}
        pattern = _compile_regex(member.subscribed_topic_regex)
        matched = {name for name in pool
                   if name not in _INTERNAL_TOPICS and pattern.fullmatch(name)}
        return member.subscribed_topic_names | matched

    def _subscribed_topic_ids(self, member: ConsumerGroupMember,
                              topics: TopicsMetadata) -> frozenset[uuid.UUID]:
        return frozenset(topics[name][0] for name in self._effective_subscription(member, topics)
                         if name in topics)

    def _compute_subscription_metadata(self, topics: TopicsMetadata
                                       ) -> dict[str, tuple[uuid.UUID, int]]:
        names: set[str] = set()
        for m in self.members.values():
            names |= self._effective_subscription(m, topics)
        return {name: topics[name] for name in sorted(names) if name in topics}

    def _update_target_assignment(self, topics: TopicsMetadata) -> None:
        assignor = self.assignors[self.preferred_assignor]
        by_id = {topic_id: TopicMetadata(topic_id, name, count)
                 for name, (topic_id, count) in topics.items()}
        specs = [MemberSpec(member_id=m.member_id,
                            subscribed_topics=self._subscribed_topic_ids(m, topics),
                            assignment=self.target_assignment.get(m.member_id, {}),
                            rack_id=m.rack_id, instance_id=m.instance_id)
                 for m in self.members.values()]
        assignment: GroupAssignment = assignor.assign(specs, by_id)
        self.target_assignment = {m: assignment.get(m, {}) for m in self.members}
        self.assignment_epoch = self.group_epoch


def _is_subset(owned: OwnedPartitions | None, assigned: Assignment) -> bool:
    if owned is None:
        return False
    return all(topic_id in assigned and set(parts) <= assigned[topic_id]
               for topic_id, parts in owned)


def _compile_regex(regex: str) -> re.Pattern[str]:
    # Kafka compiles with RE2/J; Python's re accepts the same simple patterns clients use.
    try:
        return re.compile(regex)
    except re.error as e:
        raise InvalidRegularExpressionError(f"SubscribedTopicRegex `{regex}` is not a valid "
                                            f"regular expression: {e}.") from e
