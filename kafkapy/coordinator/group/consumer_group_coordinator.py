"""ConsumerGroupCoordinator: the broker's KIP-848 consumer groups (``group.protocol=consumer``),
their timers, and the group coordinator's entry points for ConsumerGroupHeartbeat (68) and
ConsumerGroupDescribe (69).

The rules of one group are :class:`~kafkapy.coordinator.group.consumer_group.ConsumerGroup`
(pure, synchronous, no clock). This module owns what that one leaves to its caller, as Kafka's
``GroupMetadataManager`` does for consumer groups:

- the groups by id. A heartbeat with MemberEpoch 0 creates its group; any other heartbeat for
  an unknown group is UNKNOWN_MEMBER_ID (a group comes back after a restart: see
  *Persistence* below);
- the clock: ``now`` is the injected ``Time``'s ``monotonic()`` in milliseconds, Trio's clock
  and so the purgatory's, so a ``trio.testing.MockClock`` drives the groups and their timers
  together;
- the timers, as delayed operations in one purgatory (no polling loop):

  - ``session`` (key ``("session", group, member)``): armed by every heartbeat at the group's
    :meth:`~ConsumerGroup.session_deadline`; the previous one is cancelled. When it expires and
    the member has not heartbeated since, the member is removed (Kafka's session timeout).
  - ``rebalance`` (key ``("rebalance", group, member)``): armed while the member must revoke
    partitions, at :meth:`~ConsumerGroup.rebalance_deadline`; when it expires and the member is
    still at that epoch, it is removed (Kafka's rebalance timeout).
  - ``cleanup`` (key ``("cleanup", group)``): armed when a group becomes empty; every
    ``offsets.retention.check.interval.ms`` it removes the group if it is still empty and has
    no committed offsets (Kafka's ``cleanupGroupMetadata``), else looks again later.

  An expiry re-reads the group's own deadline before acting, so a timer that lost a race with
  a heartbeat (or a member that rejoined under the same id) does nothing;
- the topic metadata view (``{name: (topic id, partitions)}``) each heartbeat and describe is
  computed against, read from the broker's metadata store.

Group types. A group id is either a classic group or a consumer group, never both:

- a heartbeat for a group id whose classic group has members (or is rebalancing) is
  GROUP_ID_NOT_FOUND "Group <id> is not a consumer group." (Kafka's
  ``getOrMaybeCreateConsumerGroup``); an *empty* classic group (offsets only) becomes a
  consumer group, keeping its offsets, as Kafka converts it;
- the group coordinator refuses a JoinGroup for a non-empty consumer group
  (INCONSISTENT_GROUP_PROTOCOL) and converts an empty one
  (:meth:`ConsumerGroupCoordinator.make_classic`).

Committed offsets. A consumer group's offsets are kept exactly like a classic group's: in the
group coordinator's ``groups[group_id]``, a :class:`ClassicGroup` that for a consumer group
stays Empty and only holds offsets (its *offsets holder*), written and loaded by the same
``GroupMetadataManager`` path. So OffsetCommit/OffsetFetch, ``committed_offsets``, offset
expiry and the startup load need nothing new; the coordinator only validates a consumer-group
member's commit or fetch by member epoch first, and leaves the holder out of the classic APIs
(ListGroups, DescribeGroups). While the consumer group has members, every heartbeat moves the
holder's state timestamp to now, so offsets only start to age (``offsets.retention.minutes``)
once the group is empty, as Kafka's retention of an empty group.

Persistence. A group's state is written to its ``__consumer_offsets`` partition as Kafka's
ConsumerGroup* records (:mod:`kafkapy.coordinator.group.records`), through the
``GroupMetadataManager``'s append path, after every call that changed it: a heartbeat, a
timer, a deletion. What changed is found by comparing the group with a snapshot taken before
the call (members are immutable, so an unchanged member is the same object and costs an
identity check), and the records go out in the order Kafka's ``consumerGroupHeartbeat`` /
``removeMember`` / ``createGroupTombstoneRecords`` produce them:

- a member gone: tombstones of its current assignment (8), target assignment (7) and
  subscription (5);
- a member new or whose subscription fields changed: its subscription (5);
- the subscription metadata changed: ConsumerGroupPartitionMetadata (4);
- the group epoch changed: ConsumerGroupMetadata (3);
- a member's target changed: its target assignment (7); the assignment epoch changed:
  ConsumerGroupTargetAssignmentMetadata (6);
- a member new or whose epochs, state or partitions changed: its current assignment (8).

A steady heartbeat changes nothing and writes nothing. A deleted (or converted) group gets
tombstones for every record. At startup the manager replays each partition into a
:class:`StoredConsumerGroup` per group (later records win, tombstones delete) and hands it to
:meth:`ConsumerGroupCoordinator.load`, which restores the group with fresh session timers (and
rebalance
timers for members that were revoking), as Kafka's ``onLoaded`` does: members that keep
heartbeating with their member id and epoch carry on without rejoining. A write that fails
fails the heartbeat with the error Kafka maps it to, but the group keeps its new state in
memory (Kafka would roll it back); the next write of the group starts from the state last
written, so what failed goes out then.

Everything here runs on the broker's event loop and is synchronous; a heartbeat is processed
without another task in between.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import trio

from kafkapy.common.purgatory import DelayedOperation, DelayedOperationPurgatory
from kafkapy.common.time import SYSTEM_TIME, Time
from kafkapy.coordinator.group.classic_group import ClassicGroup, GroupState
from kafkapy.coordinator.group.consumer_group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerGroupConfig,
    ConsumerGroupMember,
    DescribedGroup,
    HeartbeatRequest,
    HeartbeatResponse,
    MemberState,
    TopicsMetadata,
    validate_heartbeat_request,
)
from kafkapy.coordinator.group.records import (
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    CONSUMER_GROUP_MEMBER_METADATA,
    CONSUMER_GROUP_METADATA,
    CONSUMER_GROUP_PARTITION_METADATA,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
    CurrentMemberAssignmentRecord,
    SubscriptionRecord,
    TopicPartitions,
    consumer_group_key,
    consumer_group_metadata_value,
    current_member_assignment_value,
    member_metadata_value,
    partition_metadata_value,
    read_consumer_group_metadata_value,
    read_current_member_assignment_value,
    read_member_metadata_value,
    read_partition_metadata_value,
    read_target_assignment_member_value,
    read_target_assignment_metadata_value,
    target_assignment_member_value,
    target_assignment_metadata_value,
)
from kafkapy.errors import (
    GroupIdNotFoundError,
    InvalidGroupIdError,
    KafkaError,
    NonEmptyGroupError,
    UnknownMemberIdError,
)

if TYPE_CHECKING:
    from kafkapy.coordinator.group.group_coordinator import GroupCoordinator

__all__ = [
    "ConsumerGroupCoordinator",
    "GroupSnapshot",
    "Record",
    "StoredConsumerGroup",
    "group_records",
    "tombstones",
]

log = logging.getLogger(__name__)

SESSION, REBALANCE, CLEANUP = "session", "rebalance", "cleanup"


Record = tuple[bytes, bytes | None]
"""A record of ``__consumer_offsets``: (key, value or None for a tombstone)."""

Writer = Callable[[str, Sequence[Record]], None]
"""Appends a group's records to its ``__consumer_offsets`` partition (raises KafkaError)."""


# ======================================================================== records


def _subscription(member: ConsumerGroupMember) -> SubscriptionRecord:
    return SubscriptionRecord(
        instance_id=member.instance_id,
        rack_id=member.rack_id,
        client_id=member.client_id,
        client_host=member.client_host,
        subscribed_topic_names=tuple(sorted(member.subscribed_topic_names)),
        subscribed_topic_regex=member.subscribed_topic_regex,
        rebalance_timeout_ms=member.rebalance_timeout_ms,
        server_assignor=member.server_assignor_name,
    )


def _current(member: ConsumerGroupMember) -> tuple[Any, ...]:
    return (member.member_epoch, member.previous_member_epoch, member.state,
            member.assigned_partitions, member.partitions_pending_revocation)


def _nonempty(assignment: Mapping[uuid.UUID, Iterable[int]]) -> dict[uuid.UUID, frozenset[int]]:
    return {t: frozenset(p) for t, p in assignment.items() if p}


def _member_tombstones(group_id: str, member_id: str) -> list[Record]:
    # Kafka's removeMember: current assignment, target assignment, subscription.
    return [(consumer_group_key(CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id, member_id),
             None),
            (consumer_group_key(CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id, member_id),
             None),
            (consumer_group_key(CONSUMER_GROUP_MEMBER_METADATA, group_id, member_id), None)]


@attrs.frozen
class GroupSnapshot:
    """What of a group the records describe, before a change (shallow: members and target
    assignments are immutable values, replaced rather than mutated)."""

    group_epoch: int = 0
    assignment_epoch: int = 0
    subscription_metadata: Mapping[str, tuple[uuid.UUID, int]] = attrs.Factory(dict)
    members: Mapping[str, ConsumerGroupMember] = attrs.Factory(dict)
    target_assignment: Mapping[str, Mapping[uuid.UUID, frozenset[int]]] = attrs.Factory(dict)

    @classmethod
    def of(cls, group: ConsumerGroup) -> GroupSnapshot:
        return cls(group.group_epoch, group.assignment_epoch, dict(group.subscription_metadata),
                   dict(group.members), dict(group.target_assignment))


def group_records(group: ConsumerGroup, before: GroupSnapshot | None = None) -> list[Record]:
    """The records that bring the stored group from ``before`` (default: nothing stored) to
    ``group``, in Kafka's order (module doc)."""
    before = before or GroupSnapshot()
    group_id = group.group_id
    out: list[Record] = []
    for member_id in before.members:
        if member_id not in group.members:
            out += _member_tombstones(group_id, member_id)
    for member_id, member in group.members.items():
        old = before.members.get(member_id)
        if old is member:
            continue
        subscription = _subscription(member)
        if old is None or _subscription(old) != subscription:
            out.append((consumer_group_key(CONSUMER_GROUP_MEMBER_METADATA, group_id, member_id),
                        member_metadata_value(subscription)))
    if group.subscription_metadata != before.subscription_metadata:
        out.append((consumer_group_key(CONSUMER_GROUP_PARTITION_METADATA, group_id),
                    partition_metadata_value(group.subscription_metadata)))
    if group.group_epoch != before.group_epoch:
        out.append((consumer_group_key(CONSUMER_GROUP_METADATA, group_id),
                    consumer_group_metadata_value(group.group_epoch)))
    for member_id, target in group.target_assignment.items():
        old_target = before.target_assignment.get(member_id)
        if old_target is target or (old_target is not None
                                    and _nonempty(old_target) == _nonempty(target)):
            continue
        out.append((consumer_group_key(CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id,
                                       member_id), target_assignment_member_value(target)))
    for member_id in before.target_assignment:
        if member_id not in group.target_assignment and member_id in group.members:
            out.append((consumer_group_key(CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id,
                                           member_id), None))
    if group.assignment_epoch != before.assignment_epoch:
        out.append((consumer_group_key(CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, group_id),
                    target_assignment_metadata_value(group.assignment_epoch)))
    for member_id, member in group.members.items():
        old = before.members.get(member_id)
        if old is member or (old is not None and _current(old) == _current(member)):
            continue
        out.append((consumer_group_key(CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id,
                                       member_id),
                    current_member_assignment_value(
                        member.member_epoch, member.previous_member_epoch, member.state.value,
                        member.assigned_partitions, member.partitions_pending_revocation)))
    return out


def tombstones(group: ConsumerGroup, also: Iterable[str] = ()) -> list[Record]:
    """Tombstones for every record of the group (and of the members ``also``, whose removal
    may not have been written), in the order of Kafka's
    ``ConsumerGroup.createGroupTombstoneRecords``."""
    group_id = group.group_id
    members = list(group.members) + [m for m in also if m not in group.members]
    out: list[Record] = []
    out += [(consumer_group_key(CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id, m), None)
            for m in members]
    out += [(consumer_group_key(CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id, m), None)
            for m in members]
    out.append((consumer_group_key(CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, group_id), None))
    out += [(consumer_group_key(CONSUMER_GROUP_MEMBER_METADATA, group_id, m), None)
            for m in members]
    out.append((consumer_group_key(CONSUMER_GROUP_PARTITION_METADATA, group_id), None))
    out.append((consumer_group_key(CONSUMER_GROUP_METADATA, group_id), None))
    return out


def _member_state(value: int) -> MemberState:
    try:
        return MemberState(value)
    except ValueError:
        return MemberState.UNKNOWN      # Kafka's MemberState.fromValue


@attrs.define
class StoredConsumerGroup:
    """One consumer group as its records describe it, replayed in log order (Kafka's
    ``GroupMetadataManager.replay`` for the ConsumerGroup* records): a later record replaces
    an earlier one of the same key, a tombstone removes it, and the group's metadata tombstone
    (written last when a group is deleted) forgets the group."""

    group_id: str
    epoch: int | None = None
    subscription_metadata: dict[str, tuple[uuid.UUID, int]] | None = None
    assignment_epoch: int | None = None
    subscriptions: dict[str, SubscriptionRecord] = attrs.Factory(dict)
    targets: dict[str, TopicPartitions] = attrs.Factory(dict)
    current: dict[str, CurrentMemberAssignmentRecord] = attrs.Factory(dict)

    def replay(self, record_type: int, member_id: str | None, value: bytes | None) -> None:
        """Apply one record. Raises CorruptMessageError for a value that does not decode."""
        if record_type == CONSUMER_GROUP_METADATA:
            if value is None:
                self.epoch = self.subscription_metadata = self.assignment_epoch = None
                self.subscriptions.clear()
                self.targets.clear()
                self.current.clear()
            else:
                self.epoch = read_consumer_group_metadata_value(value).epoch
        elif record_type == CONSUMER_GROUP_PARTITION_METADATA:
            self.subscription_metadata = (None if value is None
                                          else read_partition_metadata_value(value))
        elif record_type == CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = (None if value is None
                                     else read_target_assignment_metadata_value(value))
        elif member_id is not None:
            if record_type == CONSUMER_GROUP_MEMBER_METADATA:
                _put(self.subscriptions, member_id, value, read_member_metadata_value)
            elif record_type == CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
                _put(self.targets, member_id, value, read_target_assignment_member_value)
            elif record_type == CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:
                _put(self.current, member_id, value, read_current_member_assignment_value)

    def exists(self) -> bool:
        return self.epoch is not None or bool(self.subscriptions)

    def members(self) -> list[ConsumerGroupMember]:
        """The members: those with a subscription, at the epochs and with the partitions of
        their current assignment (none yet: epoch 0, Kafka's defaults)."""
        out = []
        for member_id, s in self.subscriptions.items():
            member = ConsumerGroupMember(
                member_id,
                instance_id=s.instance_id,
                rack_id=s.rack_id,
                rebalance_timeout_ms=s.rebalance_timeout_ms,
                client_id=s.client_id,
                client_host=s.client_host,
                subscribed_topic_names=frozenset(s.subscribed_topic_names),
                subscribed_topic_regex=s.subscribed_topic_regex or None,
                server_assignor_name=s.server_assignor,
            )
            c = self.current.get(member_id)
            if c is not None:
                member = attrs.evolve(
                    member, member_epoch=c.member_epoch,
                    previous_member_epoch=c.previous_member_epoch,
                    state=_member_state(c.state),
                    assigned_partitions=dict(c.assigned_partitions),
                    partitions_pending_revocation=dict(c.partitions_pending_revocation))
            out.append(member)
        return out


def _put(records: dict[str, Any], member_id: str, value: bytes | None,
         read: Callable[[bytes], Any]) -> None:
    if value is None:
        records.pop(member_id, None)
    else:
        records[member_id] = read(value)


class ConsumerGroupTimer(DelayedOperation):
    """One timer of :class:`ConsumerGroupCoordinator`, due at ``deadline_ms`` (group clock). It
    completes only by expiring (or at shutdown); a newer timer of the same key cancels it.
    ``epoch`` is the member epoch a rebalance timer was armed for."""

    def __init__(self, groups: ConsumerGroupCoordinator, kind: str, group_id: str, member_id: str,
                 now_ms: int, deadline_ms: int, epoch: int = -1) -> None:
        super().__init__(max(deadline_ms - now_ms, 0))
        self.groups = groups
        self.kind = kind
        self.group_id = group_id
        self.member_id = member_id
        self.deadline_ms = deadline_ms
        self.epoch = epoch

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.group_id, self.member_id)

    def try_complete(self) -> bool:
        return False

    def on_expiration(self) -> None:
        self.groups._expired(self)

    def on_complete(self) -> None:
        pass


class ConsumerGroupCoordinator:
    """The consumer groups of one broker.

    Args:
        config: the ``group.consumer.*`` settings.
        topics: the cluster's topics now, ``{name: (topic id, partition count)}``.
        classic_groups: the group coordinator's classic groups by id (a live mapping): the
            offsets holders, and the classic groups a consumer group may not take over.
        check_loaded: raises COORDINATOR_LOAD_IN_PROGRESS while the group's
            ``__consumer_offsets`` partition loads.
        cleanup_interval_ms: how often an empty group is looked at for removal.
        write: appends a group's records to ``__consumer_offsets`` (None: nothing is
            persisted).
        time: the clock (``monotonic()`` for the groups' deadlines, ``milliseconds()`` for
            the offsets holders' state timestamps).
    """

    def __init__(self, config: ConsumerGroupConfig, *, topics: Callable[[], TopicsMetadata],
                 classic_groups: Mapping[str, ClassicGroup] | None = None,
                 check_loaded: Callable[[str], None] = lambda group_id: None,
                 cleanup_interval_ms: int = 600_000, write: Writer | None = None,
                 time: Time = SYSTEM_TIME) -> None:
        self.config = config
        self._time = time
        self.groups: dict[str, ConsumerGroup] = {}
        self.purgatory: DelayedOperationPurgatory[ConsumerGroupTimer] = \
            DelayedOperationPurgatory("ConsumerGroupTimers")
        self._topics = topics
        self._classic_groups: Mapping[str, ClassicGroup] = \
            classic_groups if classic_groups is not None else {}
        self._check_loaded = check_loaded
        self._cleanup_interval_ms = cleanup_interval_ms
        self._write = write
        # group id -> the state last written, for a group whose last write failed: the next
        # write starts from there, so nothing that failed is lost.
        self._unwritten: dict[str, GroupSnapshot] = {}
        # group id -> (kind, member id) -> the armed timer (its purgatory key adds the group)
        self._timers: dict[str, dict[tuple[str, str], ConsumerGroupTimer]] = {}

    @classmethod
    def for_coordinator(cls, coordinator: GroupCoordinator) -> ConsumerGroupCoordinator:
        """The consumer groups of a broker's group coordinator, from its broker config."""
        cfg = coordinator.config
        partitions = coordinator.partitions

        def topics() -> TopicsMetadata:
            return {name: (t.topic_id, t.partitions)
                    for name, t in partitions.topics().items()}

        return cls(
            ConsumerGroupConfig(
                heartbeat_interval_ms=cfg.group_consumer_heartbeat_interval_ms,
                session_timeout_ms=cfg.group_consumer_session_timeout_ms,
                max_size=cfg.group_consumer_max_size,
                assignors=tuple(cfg.group_consumer_assignors)),
            topics=topics, classic_groups=coordinator.groups,
            check_loaded=coordinator.manager.check_loaded,
            cleanup_interval_ms=cfg.offsets_retention_check_interval_ms,
            write=coordinator.manager.store_consumer_group_records, time=coordinator.time)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """The timers' reaper (start it with ``nursery.start``)."""
        await self.purgatory.run(task_status=task_status)

    def shutdown(self) -> None:
        self.purgatory.shutdown()
        self._timers.clear()

    def _now_ms(self) -> int:
        return int(self._time.monotonic() * 1000)

    def unload(self, group_ids: Iterable[str]) -> None:
        """Forget these groups without writing anything: their ``__consumer_offsets``
        partition is no longer led here (Kafka's unload on resignation). Their timers are
        cancelled; a later leader loads them from the log."""
        for group_id in group_ids:
            self.groups.pop(group_id, None)
            self._unwritten.pop(group_id, None)
            for kind, member_id in list(self._timers.get(group_id, {})):
                self._cancel(kind, group_id, member_id)

    # ================================================================ lookups

    def get(self, group_id: str) -> ConsumerGroup | None:
        """The consumer group ``group_id``, if that group id is one."""
        return self.groups.get(group_id)

    def subscribed_topics(self, group_id: str) -> set[str]:
        """The topic names the group's members subscribe to (empty for no such group).
        Regular expressions count with the topics they match now."""
        group = self.groups.get(group_id)
        if group is None:
            return set()
        topics = self._topics()
        names: set[str] = set()
        for member in group.members.values():
            names |= group._effective_subscription(member, topics)
        return names

    def _classic_in_use(self, group_id: str) -> bool:
        classic = self._classic_groups.get(group_id)
        return classic is not None and (bool(classic.members) or bool(classic.pending_members)
                                        or not classic.is_state(GroupState.EMPTY))

    def _has_offsets(self, group_id: str) -> bool:
        holder = self._classic_groups.get(group_id)
        return holder is not None and bool(holder.offsets)

    # ============================================================== heartbeat

    def heartbeat(self, request: HeartbeatRequest) -> HeartbeatResponse:
        """One ConsumerGroupHeartbeat (Kafka's ``consumerGroupHeartbeat``); arms or cancels the
        member's timers.

        Raises:
            InvalidRequestError, UnsupportedAssignorError: the request is invalid
                (:func:`validate_heartbeat_request`).
            CoordinatorLoadInProgressError: the group's offsets partition is loading.
            NotCoordinatorError: this broker does not lead it.
            GroupIdNotFoundError: the group id is a classic group in use.
            UnknownMemberIdError: a heartbeat or leave (MemberEpoch != 0) for a group that does
                not exist (it was deleted, or expired), or see
                :meth:`ConsumerGroup.heartbeat` for the errors of the group itself.
        """
        validate_heartbeat_request(request, self.config.assignors)
        group_id = request.group_id
        self._check_loaded(group_id)
        group = self.groups.get(group_id)
        if group is None:
            if request.member_epoch != 0:
                raise UnknownMemberIdError(
                    f"Member {request.member_id} is not a member of group {group_id}: the "
                    "group does not exist.")
            if self._classic_in_use(group_id):
                raise GroupIdNotFoundError(f"Group {group_id} is not a consumer group.")
            group = self.groups[group_id] = ConsumerGroup(group_id, self.config)
            log.info("Created consumer group %s", group_id)
        now = self._now_ms()
        snapshot = GroupSnapshot.of(group)
        before = (group.group_epoch, len(group.members))
        member_id = request.member_id
        try:
            response = group.heartbeat(request, self._topics(), now)
            member_id = response.member_id
        except BaseException:
            self._settle(group, snapshot, now, member_id, before, strict=False)
            raise
        self._settle(group, snapshot, now, member_id, before, strict=True)
        if request.member_epoch not in (LEAVE_GROUP_MEMBER_EPOCH,
                                        LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            self._touch_offsets(group_id)
        return response

    def _settle(self, group: ConsumerGroup, snapshot: GroupSnapshot, now_ms: int,
                member_id: str, before: tuple[int, int], *, strict: bool) -> None:
        """After a heartbeat: timers, then the records of what changed. A failed write raises
        when ``strict`` (the heartbeat succeeded and its answer becomes the error), else it is
        logged (the heartbeat's own error wins)."""
        if group.group_epoch == 0 and group.is_empty():
            # Created by a join that failed: the group never was (nothing was written).
            self.groups.pop(group.group_id, None)
            return
        # Members other than this one only go with a group epoch bump (a leave, a static
        # member replaced): then every member's timers are looked at.
        unchanged = (group.group_epoch, len(group.members)) == before
        self._after_change(group, now_ms, member_id if unchanged else None)
        try:
            self._persist(group, snapshot)
        except KafkaError:
            if strict:
                raise
            log.exception("Could not write the records of consumer group %s",
                          group.group_id)

    def _persist(self, group: ConsumerGroup, snapshot: GroupSnapshot) -> None:
        """Write the records from ``snapshot`` to the group's state. Raises KafkaError."""
        if self._write is None:
            return
        base = self._unwritten.pop(group.group_id, snapshot)
        records = group_records(group, base)
        if records:
            try:
                self._write(group.group_id, records)
            except KafkaError:
                self._unwritten[group.group_id] = base
                raise

    def _persist_or_log(self, group: ConsumerGroup, snapshot: GroupSnapshot) -> None:
        try:
            self._persist(group, snapshot)
        except KafkaError:
            log.exception("Could not write the records of consumer group %s",
                          group.group_id)

    # ================================================================= loading

    def load(self, stored: StoredConsumerGroup) -> ConsumerGroup | None:
        """Restore a group replayed from ``__consumer_offsets`` (at startup, before any
        heartbeat for it): members get a fresh session timeout, members that were revoking a
        fresh rebalance timeout, an empty group its cleanup timer. None if the records
        describe no group, or an inconsistent one (logged and left out)."""
        if not stored.exists():
            return None
        group = ConsumerGroup(stored.group_id, self.config)
        now = self._now_ms()
        members = stored.members()
        try:
            group.restore(
                group_epoch=stored.epoch or 0,
                assignment_epoch=stored.assignment_epoch or 0,
                members=members,
                target_assignment={m: dict(t) for m, t in stored.targets.items()
                                   if m in stored.subscriptions},
                topics=self._topics(),
                subscription_metadata=stored.subscription_metadata,
                now_ms=now)
        except ValueError as e:
            log.error("Consumer group %s not loaded: its records are inconsistent: %s",
                      stored.group_id, e)
            return None
        self.groups[stored.group_id] = group
        self._after_change(group, now)
        return group

    def _touch_offsets(self, group_id: str) -> None:
        # The offsets holder's "became Empty at" moves with the live group (module doc).
        holder = self._classic_groups.get(group_id)
        if holder is not None:
            holder.state_timestamp_ms = self._time.milliseconds()

    # ================================================================= timers

    def _timer(self, kind: str, group_id: str, member_id: str) -> ConsumerGroupTimer | None:
        return self._timers.get(group_id, {}).get((kind, member_id))

    def _arm(self, kind: str, group_id: str, member_id: str, now_ms: int, deadline_ms: int,
             epoch: int = -1) -> None:
        timer = ConsumerGroupTimer(self, kind, group_id, member_id, now_ms, deadline_ms, epoch)
        self._cancel(kind, group_id, member_id)
        self._timers.setdefault(group_id, {})[(kind, member_id)] = timer
        self.purgatory.try_complete_else_watch(timer, [timer.key])

    def _forget(self, timer: ConsumerGroupTimer) -> bool:
        """Stop tracking ``timer``; False if it is not the one tracked for its key."""
        timers = self._timers.get(timer.group_id)
        if timers is None or timers.get((timer.kind, timer.member_id)) is not timer:
            return False
        del timers[(timer.kind, timer.member_id)]
        if not timers:
            del self._timers[timer.group_id]
        return True

    def _cancel(self, kind: str, group_id: str, member_id: str) -> None:
        timer = self._timer(kind, group_id, member_id)
        if timer is not None:
            self._forget(timer)
            self.purgatory.cancel_for_key(timer.key)

    def _after_change(self, group: ConsumerGroup, now_ms: int,
                      only_member: str | None = None) -> None:
        """Bring the group's timers in line with its members and their deadlines: those of
        ``only_member`` when no other member can have changed, else every member's."""
        group_id = group.group_id
        if only_member is None:
            for kind, member_id in list(self._timers.get(group_id, {})):
                if kind != CLEANUP and member_id not in group.members:
                    self._cancel(kind, group_id, member_id)
            members: list[str] = list(group.members)
        else:
            members = [only_member]
        for member_id in members:
            self._sync_member(group, member_id, now_ms)
        if group.is_empty():
            if self._timer(CLEANUP, group_id, "") is None:
                self._arm(CLEANUP, group_id, "", now_ms, now_ms + self._cleanup_interval_ms)
        else:
            self._cancel(CLEANUP, group_id, "")

    def _sync_member(self, group: ConsumerGroup, member_id: str, now_ms: int) -> None:
        group_id = group.group_id
        session = group.session_deadline(member_id) if member_id in group.members else None
        timer = self._timer(SESSION, group_id, member_id)
        if session is None:
            self._cancel(SESSION, group_id, member_id)
        elif timer is None or timer.deadline_ms != session:
            self._arm(SESSION, group_id, member_id, now_ms, session)
        revocation = group.rebalance_deadline(member_id) if member_id in group.members else None
        timer = self._timer(REBALANCE, group_id, member_id)
        if revocation is None:
            self._cancel(REBALANCE, group_id, member_id)
        elif timer is None or (timer.epoch, timer.deadline_ms) != revocation:
            epoch, deadline = revocation
            self._arm(REBALANCE, group_id, member_id, now_ms, deadline, epoch)

    def _expired(self, timer: ConsumerGroupTimer) -> None:
        """A timer fired (in the purgatory's reaper task)."""
        self._forget(timer)
        group = self.groups.get(timer.group_id)
        if group is None:
            return
        now = self._now_ms()
        member_id = timer.member_id
        if timer.kind == CLEANUP:
            if group.is_empty() and not self._has_offsets(group.group_id):
                try:
                    self._drop(group.group_id)
                except KafkaError:
                    log.exception("Could not remove consumer group %s", group.group_id)
                    self._after_change(group, now)
                    return
                log.info("Consumer group %s removed: empty and without offsets",
                         group.group_id)
                return
            self._after_change(group, now)
            return
        removed = False
        snapshot = GroupSnapshot.of(group)
        if timer.kind == SESSION:
            deadline = group.session_deadline(member_id)
            if deadline is not None and deadline <= now:
                removed = group.expire_member(member_id)
                reason = "session timeout"
        else:
            revocation = group.rebalance_deadline(member_id)
            if revocation is not None and revocation[0] == timer.epoch and \
                    revocation[1] <= now:
                removed = group.expire_rebalance(member_id, timer.epoch)
                reason = "it did not revoke its partitions within its rebalance timeout"
        if removed:
            log.info("Member %s of consumer group %s removed: %s", member_id, group.group_id,
                     reason)
            self._after_change(group, now)
            self._persist_or_log(group, snapshot)
        else:
            # It heartbeated meanwhile, left, or this timer is stale: look at it afresh.
            self._after_change(group, now, member_id)

    # ================================================================= admin

    def describe(self, group_id: str) -> DescribedGroup:
        """The ConsumerGroupDescribe answer for one group.

        Raises:
            InvalidGroupIdError: an empty group id.
            CoordinatorLoadInProgressError: the group's offsets partition is loading.
            NotCoordinatorError: this broker does not lead it.
            GroupIdNotFoundError: no such consumer group ("not found", or "is not a consumer
                group" for a classic group).
        """
        if not group_id:
            raise InvalidGroupIdError(f"The group id {group_id!r} is not valid.")
        self._check_loaded(group_id)
        group = self.groups.get(group_id)
        if group is None:
            if group_id in self._classic_groups:
                raise GroupIdNotFoundError(f"Group {group_id} is not a consumer group.")
            raise GroupIdNotFoundError(f"Group {group_id} not found.")
        return group.describe(self._topics())

    def listed(self) -> list[tuple[str, str]]:
        """``[(group id, state)]`` of every consumer group, for ListGroups."""
        return [(group_id, group.state.value) for group_id, group in self.groups.items()]

    def delete(self, group_id: str) -> bool:
        """Remove an empty consumer group (DeleteGroups); False if ``group_id`` is not a
        consumer group. Its offsets holder is the coordinator's to delete.

        Raises:
            NonEmptyGroupError: the group has members.
            KafkaError: its tombstones could not be written (it stays).
        """
        group = self.groups.get(group_id)
        if group is None:
            return False
        if not group.is_empty():
            raise NonEmptyGroupError(f"Group {group_id} is not empty.")
        self._drop(group_id)
        return True

    def make_classic(self, group_id: str) -> bool:
        """A JoinGroup arrived for ``group_id``: drop the consumer group if it is empty (Kafka
        converts it to a classic group, offsets kept). False if it has members (the JoinGroup
        is INCONSISTENT_GROUP_PROTOCOL). Raises KafkaError if its tombstones could not be
        written (it stays)."""
        group = self.groups.get(group_id)
        if group is None:
            return True
        if not group.is_empty():
            return False
        self._drop(group_id)
        return True

    def _drop(self, group_id: str) -> None:
        """Forget a group after writing its tombstones. Raises KafkaError if they could not be
        written (the group stays)."""
        if self._write is not None:
            base = self._unwritten.get(group_id)
            self._write(group_id, tombstones(self.groups[group_id],
                                             base.members if base is not None else ()))
        self._unwritten.pop(group_id, None)
        del self.groups[group_id]
        for kind, member_id in list(self._timers.get(group_id, {})):
            self._cancel(kind, group_id, member_id)
