"""GroupCoordinator: the classic consumer group protocol, and the groups' committed offsets.

Kafka's classic ``GroupCoordinator`` (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch, DescribeGroups, ListGroups, DeleteGroups, OffsetDelete) on the broker's Trio loop.
The group state machine is :class:`~kafkapy.coordinator.group.classic_group.ClassicGroup`;
durability (``__consumer_offsets``, loading, expiry) is
:class:`~kafkapy.coordinator.group.group_metadata_manager.GroupMetadataManager`.

Timers are delayed operations in purgatories, as in Kafka, not polling loops:

- ``DelayedJoin`` (key: the group) completes the join phase when every known member has
  rejoined, or at the rebalance timeout (members that did not rejoin are removed).
  ``InitialDelayedJoin`` is the first rebalance of an empty group: it waits
  ``group.initial.rebalance.delay.ms`` and again while new members keep arriving, up to the
  rebalance timeout.
- ``DelayedHeartbeat`` (key: group and member) removes a member whose session timed out. Every
  heartbeat, join or sync completes the member's current one and arms the next.
- ``DelayedSync`` (key: the group) removes the members that did not send SyncGroup within the
  rebalance timeout after the join phase, then rebalances.

A JoinGroup or SyncGroup that must wait gets a ``Reply`` the handler awaits (its handler task
is released meanwhile: the handler returns ``Parked``).

Everything here runs on the event loop and is synchronous except the handlers' awaits; a
state change and its ``__consumer_offsets`` append happen without another task in between.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs
import trio

from kafkapy.common.purgatory import DelayedOperation, DelayedOperationPurgatory
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig
from kafkapy.coordinator.group.classic_group import (
    ClassicGroup,
    GroupState,
    JoinResult,
    MemberMetadata,
    Reply,
    SyncResult,
    subscribed_topics,
)
from kafkapy.coordinator.group.consumer_group_coordinator import ConsumerGroupCoordinator
from kafkapy.coordinator.group.group_metadata_manager import GroupMetadataManager
from kafkapy.coordinator.group.records import OffsetAndMetadata
from kafkapy.coordinator.partition_port import CoordinatorPartitions
from kafkapy.errors import (
    CoordinatorNotAvailableError,
    FencedInstanceIdError,
    GroupIdNotFoundError,
    GroupMaxSizeReachedError,
    GroupSubscribedToTopicError,
    IllegalGenerationError,
    InconsistentGroupProtocolError,
    InvalidGroupIdError,
    InvalidSessionTimeoutError,
    KafkaError,
    MemberIdRequiredError,
    NonEmptyGroupError,
    NotCoordinatorError,
    OffsetMetadataTooLargeError,
    RebalanceInProgressError,
    UnknownMemberIdError,
    UnknownTopicOrPartitionError,
    error_class,
)

__all__ = ["GroupCoordinator", "GroupSummary"]

log = logging.getLogger(__name__)

NONE = 0
# Kafka's GroupCoordinator.NewMemberJoinTimeoutMs: a new member's first join may wait this
# long for the rebalance (its session timer must not fire meanwhile).
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000
CONSUMER_PROTOCOL_TYPE = "consumer"

# A JoinGroup's (client id, client host, rebalance timeout, session timeout, protocol type,
# protocols).
_JoinArgs = tuple[str, str, int, int, str, list[tuple[str, bytes]]]


@attrs.frozen
class GroupSummary:
    """DescribeGroups' view of one group."""

    error: int
    group_id: str
    state: str
    protocol_type: str
    protocol_data: str
    members: tuple[tuple[str, str | None, str, str, bytes, bytes], ...]


# ========================================================================= delayed operations


class DelayedJoin(DelayedOperation):
    def __init__(self, coordinator: GroupCoordinator, group: ClassicGroup,
                 timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.coordinator = coordinator
        self.group = group

    def try_complete(self) -> bool:
        if self.group.all_members_joined or self.group.is_state(GroupState.DEAD):
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.coordinator._complete_join(self.group)


class InitialDelayedJoin(DelayedJoin):
    """The first rebalance of an empty group waits for more members (KIP-134):
    ``group.initial.rebalance.delay.ms`` after the latest new member joined, up to the
    rebalance timeout.

    Kafka's InitialDelayedJoin starts a whole new window when its window saw a new member, so
    members that join together wait up to twice the delay; here the next window ends one delay
    after the latest join, which is what KIP-134 describes."""

    def __init__(self, coordinator: GroupCoordinator, group: ClassicGroup, delay_ms: int,
                 remaining_ms: int, wait_ms: int | None = None) -> None:
        super().__init__(coordinator, group, delay_ms if wait_ms is None else wait_ms)
        self.configured_delay_ms = delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        if self.group.is_state(GroupState.DEAD):
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        group = self.group
        if group.is_state(GroupState.DEAD):
            return
        extra_ms = (group.last_join_time - self.coordinator.time.monotonic()) * 1000 + \
            self.configured_delay_ms
        if group.new_member_added and self.remaining_ms > 0 and extra_ms >= 1:
            group.new_member_added = False
            wait = min(int(extra_ms), self.remaining_ms)
            self.coordinator.join_purgatory.try_complete_else_watch(
                InitialDelayedJoin(self.coordinator, group, self.configured_delay_ms,
                                   max(self.remaining_ms - wait, 0), wait),
                [("join", group.group_id)])
        else:
            self.coordinator._complete_join(group)


class DelayedHeartbeat(DelayedOperation):
    def __init__(self, coordinator: GroupCoordinator, group: ClassicGroup, member_id: str,
                 is_pending: bool, timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.coordinator = coordinator
        self.group = group
        self.member_id = member_id
        self.is_pending = is_pending

    def _alive(self) -> bool:
        group = self.group
        if self.is_pending:
            # A pending member that joined is a member now: this timer is done.
            return group.has(self.member_id)
        member = group.members.get(self.member_id)
        return member is not None and (member.has_satisfied_heartbeat or member.is_leaving)

    def try_complete(self) -> bool:
        if self._alive() or self.group.is_state(GroupState.DEAD):
            return self.force_complete()
        return False

    def on_expiration(self) -> None:
        self.coordinator._heartbeat_expired(self.group, self.member_id, self.is_pending)

    def on_complete(self) -> None:
        pass


class DelayedSync(DelayedOperation):
    def __init__(self, coordinator: GroupCoordinator, group: ClassicGroup,
                 generation_id: int, timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.coordinator = coordinator
        self.group = group
        self.generation_id = generation_id

    def try_complete(self) -> bool:
        group = self.group
        if group.generation_id != self.generation_id or not group.pending_sync or \
                not group.is_state(GroupState.COMPLETING_REBALANCE, GroupState.STABLE):
            return self.force_complete()
        return False

    def on_expiration(self) -> None:
        self.coordinator._sync_expired(self.group, self.generation_id)

    def on_complete(self) -> None:
        pass


# ============================================================================== coordinator


class GroupCoordinator:
    """The broker's group coordinator: it coordinates the groups of the
    ``__consumer_offsets`` partitions this broker leads (``on_become_leader`` /
    ``on_resign``, from the broker).

    Args:
        partitions: the broker's partitions, as the coordinators' port.
        config: the broker's config now (replaced on dynamic updates, so read each time).
        time: the clock (``milliseconds()`` for what is written down, ``monotonic()`` for
            delays).
    """

    def __init__(self, partitions: CoordinatorPartitions, config: Callable[[], BrokerConfig],
                 time: Time) -> None:
        self.partitions = partitions
        self._config = config
        self.time = time
        self.groups: dict[str, ClassicGroup] = {}
        self.join_purgatory: DelayedOperationPurgatory[DelayedJoin] = \
            DelayedOperationPurgatory("Rebalance")
        self.heartbeat_purgatory: DelayedOperationPurgatory[DelayedHeartbeat] = \
            DelayedOperationPurgatory("Heartbeat")
        self.sync_purgatory: DelayedOperationPurgatory[DelayedSync] = \
            DelayedOperationPurgatory("Sync")
        self.manager = GroupMetadataManager(self, partitions, config, time)
        # TxnOffsetCommit: group -> producer id -> offsets waiting for the transaction's
        # marker (Kafka's pendingTransactionalOffsetCommits).
        self.pending_txn_offsets: dict[str, dict[int, dict[TopicPartition,
                                                           OffsetAndMetadata]]] = {}
        # KIP-848 consumer groups; their offsets live in self.groups
        # (consumer_group_coordinator.py).
        self.consumer_groups = ConsumerGroupCoordinator.for_coordinator(self)

    @property
    def config(self) -> BrokerConfig:
        return self._config()

    def _now_ms(self) -> int:
        return self.time.milliseconds()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(self.join_purgatory.run)
            await nursery.start(self.heartbeat_purgatory.run)
            await nursery.start(self.sync_purgatory.run)
            await nursery.start(self.consumer_groups.run)
            await nursery.start(self.manager.run)
            task_status.started()

    def shutdown(self) -> None:
        for purgatory in (self.join_purgatory, self.heartbeat_purgatory, self.sync_purgatory):
            purgatory.shutdown()
        self.consumer_groups.shutdown()
        # Requests still waiting for a rebalance are answered, so clients retry elsewhere.
        for group in self.groups.values():
            for member in group.members.values():
                group.answer_join(member, JoinResult(
                    CoordinatorNotAvailableError.code, member.member_id))
                group.answer_sync(member, SyncResult(CoordinatorNotAvailableError.code))

    # ================================================================ checks and lookups

    def _check_group_id(self, group_id: str | None) -> None:
        if not group_id:
            raise InvalidGroupIdError(f"The group id {group_id!r} is not valid.")

    def _check_active(self, group_id: str) -> None:
        """COORDINATOR_LOAD_IN_PROGRESS while the group's partition loads."""
        self.manager.check_loaded(group_id)

    def _group(self, group_id: str) -> ClassicGroup | None:
        return self.groups.get(group_id)

    def _add_group(self, group_id: str) -> ClassicGroup:
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = ClassicGroup(group_id,
                                                         state_timestamp_ms=self._now_ms())
        return group

    def committed_offsets(self, group_id: str) -> dict[TopicPartition, OffsetAndMetadata]:
        group = self.groups.get(group_id)
        return {} if group is None else dict(group.offsets)

    # ======================================================================= JoinGroup

    def join_group(self, *, group_id: str, member_id: str, group_instance_id: str | None,
                   require_known_member_id: bool, support_skip_assignment: bool,
                   client_id: str, client_host: str, rebalance_timeout_ms: int,
                   session_timeout_ms: int, protocol_type: str,
                   protocols: list[tuple[str, bytes]]) -> Reply:
        """Kafka's handleJoinGroup. The reply is answered now (errors, MEMBER_ID_REQUIRED,
        a member rejoining a stable group) or when the join phase completes."""
        reply = Reply()
        try:
            self._check_group_id(group_id)
            self._check_active(group_id)
            cfg = self.config
            if not (cfg.group_min_session_timeout_ms <= session_timeout_ms
                    <= cfg.group_max_session_timeout_ms):
                raise InvalidSessionTimeoutError(
                    f"The session timeout {session_timeout_ms} ms is not within "
                    f"[{cfg.group_min_session_timeout_ms}, {cfg.group_max_session_timeout_ms}] "
                    f"(group.min/max.session.timeout.ms).")
        except KafkaError as e:
            reply.answer(JoinResult(e.code, member_id))
            return reply
        if not self.consumer_groups.make_classic(group_id):
            # KIP-848: a consumer group with members takes no classic member.
            reply.answer(JoinResult(InconsistentGroupProtocolError.code, ""))
            return reply
        unknown = member_id == ""
        group = self._group(group_id)
        if group is None:
            if not unknown:
                reply.answer(JoinResult(UnknownMemberIdError.code, member_id))
                return reply
            group = self._add_group(group_id)
        if not self._accept_joining_member(group, member_id):
            # Kafka removes a known member it refuses (a lowered group.max.size).
            refused = group.remove(member_id)
            if refused is not None:
                group.answer_join(refused, JoinResult(GroupMaxSizeReachedError.code, ""))
                self._on_membership_change(group, f"member {member_id} refused: group full")
            reply.answer(JoinResult(GroupMaxSizeReachedError.code, ""))
            self._maybe_drop_empty(group)
            return reply
        args = (client_id, client_host, rebalance_timeout_ms, session_timeout_ms,
                protocol_type, protocols)
        if unknown:
            self._join_unknown_member(group, group_instance_id, require_known_member_id,
                                      support_skip_assignment, args, reply)
        else:
            self._join_current_member(group, member_id, group_instance_id, args, reply)
        if group.is_state(GroupState.PREPARING_REBALANCE):
            # This join may be the last one the rebalance waits for.
            self.join_purgatory.check_and_complete(("join", group.group_id))
        # A group created by this join that ended up with nobody is not kept.
        self._maybe_drop_empty(group)
        return reply

    def _maybe_drop_empty(self, group: ClassicGroup) -> None:
        if group.is_state(GroupState.EMPTY) and not group.members and \
                not group.pending_members and not group.offsets and \
                group.generation_id == 0 and group.group_id not in self.pending_txn_offsets:
            self.groups.pop(group.group_id, None)

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        max_size = self.config.group_max_size
        if group.is_state(GroupState.EMPTY, GroupState.DEAD):
            return True
        if group.is_state(GroupState.PREPARING_REBALANCE):
            member = group.members.get(member_id)
            return (member is not None and member.awaiting_join) or \
                group.awaiting_join < max_size
        return group.has(member_id) or len(group.members) < max_size

    def _join_unknown_member(self, group: ClassicGroup, instance_id: str | None,
                             require_known: bool, skip_ok: bool, args: _JoinArgs,
                             reply: Reply) -> None:
        client_id, _host, _rto, session_timeout_ms, protocol_type, protocols = args
        if group.is_state(GroupState.DEAD):
            reply.answer(JoinResult(CoordinatorNotAvailableError.code, ""))
            return
        if not group.supports_protocols(protocol_type, [n for n, _ in protocols]):
            reply.answer(JoinResult(InconsistentGroupProtocolError.code, ""))
            return
        new_id = f"{client_id}-{uuid.uuid4()}"
        if instance_id is not None:
            old_id = group.static_member_id(instance_id)
            if old_id is not None:
                self._update_static_member(group, old_id, new_id, instance_id, args, skip_ok,
                                           reply)
            else:
                self._add_member_and_rebalance(group, new_id, instance_id, args, reply)
        elif require_known:
            # KIP-394: hand out an id and wait for the member to come back with it.
            group.pending_members.add(new_id)
            self._schedule_heartbeat(group, new_id, session_timeout_ms, pending=True)
            reply.answer(JoinResult(MemberIdRequiredError.code, new_id))
        else:
            self._add_member_and_rebalance(group, new_id, None, args, reply)

    def _join_current_member(self, group: ClassicGroup, member_id: str,
                             instance_id: str | None, args: _JoinArgs, reply: Reply) -> None:
        _client, _host, rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols = args
        if group.is_state(GroupState.DEAD):
            reply.answer(JoinResult(CoordinatorNotAvailableError.code, member_id))
            return
        if not group.supports_protocols(protocol_type, [n for n, _ in protocols]):
            reply.answer(JoinResult(InconsistentGroupProtocolError.code, member_id))
            return
        if group.is_pending(member_id):
            if instance_id is not None:
                # A static member never goes through the pending state (Kafka throws).
                reply.answer(JoinResult(UnknownMemberIdError.code, member_id))
                return
            self._add_member_and_rebalance(group, member_id, None, args, reply)
            return
        error = self._validate_member(group, member_id, instance_id, None)
        if error:
            reply.answer(JoinResult(error, member_id))
            return
        member = group.members[member_id]
        if group.is_state(GroupState.PREPARING_REBALANCE):
            self._update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms,
                                              session_timeout_ms, reply)
        elif group.is_state(GroupState.COMPLETING_REBALANCE):
            if member.matches(protocols):
                # The member lost the join answer: give it again.
                reply.answer(self._join_result(group, member))
            else:
                self._update_member_and_rebalance(group, member, protocols,
                                                  rebalance_timeout_ms, session_timeout_ms,
                                                  reply)
        elif group.is_state(GroupState.STABLE):
            if group.is_leader(member_id) or not member.matches(protocols):
                # The leader rejoins to rebalance (metadata changed), or a member's
                # subscription changed.
                self._update_member_and_rebalance(group, member, protocols,
                                                  rebalance_timeout_ms, session_timeout_ms,
                                                  reply)
            else:
                reply.answer(JoinResult(NONE, member_id, group.generation_id,
                                        group.protocol_type, group.protocol_name,
                                        group.leader_id or ""))
        else:
            reply.answer(JoinResult(UnknownMemberIdError.code, member_id))

    def _join_result(self, group: ClassicGroup, member: MemberMetadata,
                     skip_assignment: bool = False) -> JoinResult:
        leader = group.is_leader(member.member_id)
        return JoinResult(NONE, member.member_id, group.generation_id, group.protocol_type,
                          group.protocol_name, group.leader_id or "",
                          group.join_members() if leader else (), skip_assignment)

    def _add_member_and_rebalance(self, group: ClassicGroup, member_id: str,
                                  instance_id: str | None, args: _JoinArgs, reply: Reply) -> None:
        client_id, host, rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols = args
        member = MemberMetadata(member_id, instance_id, client_id, host, rebalance_timeout_ms,
                                session_timeout_ms, protocol_type, list(protocols))
        member.is_new = True
        # The first generation of a new group waits for more members (InitialDelayedJoin).
        if group.is_state(GroupState.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
            group.last_join_time = self.time.monotonic()
        group.add(member, reply)
        # A new member's session timer starts long: its JoinGroup may wait a whole rebalance.
        self._schedule_heartbeat(group, member_id, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(group, f"Adding new member {member_id}")

    def _update_member_and_rebalance(self, group: ClassicGroup, member: MemberMetadata,
                                     protocols: list[tuple[str, bytes]],
                                     rebalance_timeout_ms: int, session_timeout_ms: int,
                                     reply: Reply) -> None:
        group.update_member(member, list(protocols), rebalance_timeout_ms, session_timeout_ms,
                            reply)
        self._maybe_prepare_rebalance(group, f"Updating metadata for member "
                                             f"{member.member_id}")

    def _update_static_member(self, group: ClassicGroup, old_id: str, new_id: str,
                              instance_id: str, args: _JoinArgs, skip_ok: bool,
                              reply: Reply) -> None:
        """A known static member restarted (Kafka's updateStaticMemberAndRebalance): it takes
        over its old member id's place; a stable group does not rebalance for it unless the
        protocol choice changes."""
        _client, _host, rebalance_timeout_ms, session_timeout_ms, _ptype, protocols = args
        current_leader = group.leader_id or ""
        member = group.replace_static_member(instance_id, old_id, new_id)
        self._schedule_heartbeat(group, new_id, member.session_timeout_ms)
        old = (list(member.protocols), member.rebalance_timeout_ms, member.session_timeout_ms)
        group.update_member(member, list(protocols), rebalance_timeout_ms, session_timeout_ms,
                            reply)
        if group.is_state(GroupState.STABLE):
            if group.protocol_name == group.select_protocol():
                try:
                    self.manager.store_group(group)
                except KafkaError as e:
                    # Not persisted: undo, the old member id stays the instance's.
                    group.update_member(member, old[0], old[1], old[2], None)
                    group.replace_static_member(instance_id, new_id, old_id)
                    self._schedule_heartbeat(group, old_id, member.session_timeout_ms)
                    reply.answer(JoinResult(e.code, "", group.generation_id,
                                            group.protocol_type, group.protocol_name,
                                            current_leader))
                    return
                if skip_ok:
                    # JoinGroup v9+: the leader learns it leads, without reassigning.
                    leader = group.is_leader(new_id)
                    group.answer_join(member, self._join_result(group, member,
                                                                skip_assignment=leader))
                else:
                    # Older clients: name the old leader id, so a restarted static leader
                    # does not compute an assignment the stable group would ignore.
                    group.answer_join(member, JoinResult(
                        NONE, new_id, group.generation_id, group.protocol_type,
                        group.protocol_name, current_leader))
            else:
                self._maybe_prepare_rebalance(
                    group, f"static member {new_id} (instance {instance_id}) changes the "
                           f"group's protocol")
        elif group.is_state(GroupState.COMPLETING_REBALANCE):
            # The leader may be assigning to the old member id: rebalance again.
            self._prepare_rebalance(group, f"Updating metadata for static member {new_id}")

    # ------------------------------------------------------------------- rebalancing

    def _maybe_prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_state(GroupState.STABLE, GroupState.COMPLETING_REBALANCE,
                          GroupState.EMPTY):
            self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_state(GroupState.COMPLETING_REBALANCE):
            # The assignment being computed is void: waiting syncs retry.
            self._propagate_assignment_error(group, RebalanceInProgressError.code)
        group.pending_sync.clear()
        if group.is_state(GroupState.EMPTY):
            delay = self.config.group_initial_rebalance_delay_ms
            op: DelayedJoin = InitialDelayedJoin(
                self, group, delay, max(group.rebalance_timeout_ms - delay, 0))
        else:
            op = DelayedJoin(self, group, group.rebalance_timeout_ms)
        group.transition(GroupState.PREPARING_REBALANCE, self._now_ms())
        log.info("Preparing to rebalance group %s in state PreparingRebalance with old "
                 "generation %d (reason: %s)", group.group_id, group.generation_id, reason)
        self.join_purgatory.try_complete_else_watch(op, [("join", group.group_id)])

    def _complete_join(self, group: ClassicGroup) -> None:
        """The join phase is over (Kafka's onCompleteJoin)."""
        if group.is_state(GroupState.DEAD) or \
                not group.is_state(GroupState.PREPARING_REBALANCE):
            return
        for member in group.not_yet_rejoined():
            if not member.is_static:
                # Dynamic members that did not rejoin in time are gone; static members are
                # kept (they are expected back and expire by their session timeout).
                group.remove(member.member_id)
        group.pending_members.clear()
        group.init_next_generation(self._now_ms())
        if group.is_state(GroupState.EMPTY):
            log.info("Group %s with generation %d is now empty", group.group_id,
                     group.generation_id)
            try:
                self.manager.store_group(group)
            except KafkaError as e:
                log.warning("Failed to write the empty group %s: %s", group.group_id, e)
            return
        log.info("Stabilized group %s generation %d with %d member(s), protocol %s",
                 group.group_id, group.generation_id, len(group.members), group.protocol_name)
        for member in list(group.members.values()):
            group.answer_join(member, self._join_result(group, member))
            member.is_new = False
            self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)
        group.pending_sync = set(group.members)
        self.sync_purgatory.try_complete_else_watch(
            DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms),
            [("sync", group.group_id)])

    def _propagate_assignment_error(self, group: ClassicGroup, error: int) -> None:
        for member in group.members.values():
            group.answer_sync(member, SyncResult(error))

    def _sync_expired(self, group: ClassicGroup, generation_id: int) -> None:
        if group.generation_id != generation_id or \
                not group.is_state(GroupState.COMPLETING_REBALANCE, GroupState.STABLE):
            return
        late = [m for m in list(group.pending_sync) if group.has(m)]
        group.pending_sync.clear()
        for member_id in late:
            member = group.members[member_id]
            log.info("Member %s of group %s did not sync within the rebalance timeout",
                     member_id, group.group_id)
            self._remove_member_and_update_group(group, member, "sync timeout")

    # ======================================================================= SyncGroup

    def sync_group(self, *, group_id: str, generation_id: int, member_id: str,
                   group_instance_id: str | None, protocol_type: str | None,
                   protocol_name: str | None, assignments: Mapping[str, bytes]) -> Reply:
        reply = Reply()
        try:
            self._check_group_id(group_id)
            self._check_active(group_id)
        except KafkaError as e:
            reply.answer(SyncResult(e.code))
            return reply
        group = self._group(group_id)
        if group is None:
            reply.answer(SyncResult(UnknownMemberIdError.code))
            return reply
        if group.is_state(GroupState.DEAD):
            reply.answer(SyncResult(CoordinatorNotAvailableError.code))
            return reply
        error = self._validate_member(group, member_id, group_instance_id, generation_id)
        if not error and ((protocol_type is not None and protocol_type != group.protocol_type)
                          or (protocol_name is not None
                              and protocol_name != group.protocol_name)):
            error = InconsistentGroupProtocolError.code
        if error:
            reply.answer(SyncResult(error))
            return reply
        member = group.members[member_id]
        if group.is_state(GroupState.EMPTY):
            reply.answer(SyncResult(UnknownMemberIdError.code))
        elif group.is_state(GroupState.PREPARING_REBALANCE):
            reply.answer(SyncResult(RebalanceInProgressError.code))
        elif group.is_state(GroupState.COMPLETING_REBALANCE):
            member.sync_reply = reply
            group.pending_sync.discard(member_id)
            if group.is_leader(member_id):
                self._leader_sync(group, dict(assignments))
        elif group.is_state(GroupState.STABLE):
            group.pending_sync.discard(member_id)
            reply.answer(SyncResult(NONE, group.protocol_type, group.protocol_name,
                                    member.assignment))
            self._schedule_heartbeat(group, member_id, member.session_timeout_ms)
        return reply

    def _leader_sync(self, group: ClassicGroup, assignments: dict[str, bytes]) -> None:
        unknown = set(assignments) - set(group.members)
        if unknown:
            log.warning("Group %s: the leader's assignment names unknown members %s (ignored)",
                        group.group_id, sorted(unknown))
        full = {m: assignments.get(m, b"") for m in group.members}
        try:
            self.manager.store_group(group, full)
        except KafkaError as e:
            self._propagate_assignment_error(group, e.code)
            self._maybe_prepare_rebalance(group, f"error storing the assignment: {e}")
            return
        for member_id, member in group.members.items():
            member.assignment = full[member_id]
        group.transition(GroupState.STABLE, self._now_ms())
        for member in group.members.values():
            if member.sync_reply is not None:
                group.answer_sync(member, SyncResult(NONE, group.protocol_type,
                                                     group.protocol_name, member.assignment))
                self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)
        log.info("Assignment received from leader %s for group %s for generation %d. The "
                 "group has %d member(s)", group.leader_id, group.group_id,
                 group.generation_id, len(group.members))

    # ======================================================================= Heartbeat

    def heartbeat(self, *, group_id: str, member_id: str, group_instance_id: str | None,
                  generation_id: int) -> int:
        self._check_group_id(group_id)
        self._check_active(group_id)
        group = self._group(group_id)
        if group is None:
            return UnknownMemberIdError.code
        if group.is_state(GroupState.DEAD):
            return CoordinatorNotAvailableError.code
        if group.is_state(GroupState.EMPTY):
            return UnknownMemberIdError.code
        error = self._validate_member(group, member_id, group_instance_id, generation_id)
        if error:
            return error
        member = group.members[member_id]
        self._schedule_heartbeat(group, member_id, member.session_timeout_ms)
        if group.is_state(GroupState.PREPARING_REBALANCE):
            return RebalanceInProgressError.code
        return NONE

    # ====================================================================== LeaveGroup

    def leave_group(self, group_id: str, leaving: Sequence[tuple[str, str | None]]
                    ) -> tuple[int, list[int]]:
        """(top-level error, per-member errors) for ``leaving`` = [(member id, instance
        id)]."""
        self._check_group_id(group_id)
        self._check_active(group_id)
        group = self._group(group_id)
        if group is None:
            return NONE, [UnknownMemberIdError.code for _ in leaving]
        if group.is_state(GroupState.DEAD):
            return CoordinatorNotAvailableError.code, []
        errors = []
        for member_id, instance_id in leaving:
            errors.append(self._leave_one(group, member_id, instance_id))
        return NONE, errors

    def _leave_one(self, group: ClassicGroup, member_id: str, instance_id: str | None) -> int:
        if member_id == "":
            # An admin removing a static member by instance id (KIP-345).
            current = group.static_member_id(instance_id)
            if current is None:
                return UnknownMemberIdError.code
            member_id = current
        elif group.is_pending(member_id):
            group.pending_members.discard(member_id)
            self.heartbeat_purgatory.check_and_complete(("hb", group.group_id, member_id))
            self._on_membership_change(group, f"pending member {member_id} left")
            return NONE
        error = self._validate_member(group, member_id, instance_id, None)
        if error:
            return error
        member = group.members[member_id]
        member.is_leaving = True
        self.heartbeat_purgatory.check_and_complete(("hb", group.group_id, member_id))
        self._remove_member_and_update_group(group, member, "the consumer is leaving")
        return NONE

    def _remove_member_and_update_group(self, group: ClassicGroup, member: MemberMetadata,
                                        reason: str) -> None:
        # A member waiting for its join answer is told UNKNOWN_MEMBER_ID: it rejoins afresh.
        group.answer_join(member, JoinResult(UnknownMemberIdError.code, ""))
        group.answer_sync(member, SyncResult(UnknownMemberIdError.code))
        group.remove(member.member_id)
        log.info("Removed member %s from group %s: %s", member.member_id, group.group_id,
                 reason)
        self._on_membership_change(group, reason)

    def _on_membership_change(self, group: ClassicGroup, reason: str) -> None:
        if group.is_state(GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, reason)
        elif group.is_state(GroupState.PREPARING_REBALANCE):
            self.join_purgatory.check_and_complete(("join", group.group_id))

    # ====================================================================== heartbeats

    def _schedule_heartbeat(self, group: ClassicGroup, member_id: str, timeout_ms: int,
                            pending: bool = False) -> None:
        """Kafka's completeAndScheduleNextHeartbeatExpiration."""
        key = ("hb", group.group_id, member_id)
        member = group.members.get(member_id)
        if member is not None:
            member.heartbeat_satisfied = True
            self.heartbeat_purgatory.check_and_complete(key)
            member.heartbeat_satisfied = False
        else:
            self.heartbeat_purgatory.check_and_complete(key)
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, member_id, pending, timeout_ms), [key])

    def _heartbeat_expired(self, group: ClassicGroup, member_id: str, pending: bool) -> None:
        if pending:
            if member_id in group.pending_members:
                log.info("Pending member %s of group %s has left (session timeout)",
                         member_id, group.group_id)
                group.pending_members.discard(member_id)
                self._on_membership_change(group, f"pending member {member_id} expired")
            return
        member = group.members.get(member_id)
        if member is None or member.has_satisfied_heartbeat or member.is_leaving:
            return
        log.info("Member %s of group %s has failed (session timeout), removing it",
                 member_id, group.group_id)
        self._remove_member_and_update_group(group, member, "session timeout")

    # ==================================================================== validation

    def _validate_member(self, group: ClassicGroup, member_id: str,
                         instance_id: str | None, generation_id: int | None) -> int:
        """Kafka's validateCurrentMember: fenced static instance, unknown member, wrong
        generation, in that order."""
        if group.is_static_member_fenced(instance_id, member_id):
            return FencedInstanceIdError.code
        if not group.has(member_id):
            return UnknownMemberIdError.code
        if generation_id is not None and generation_id != group.generation_id:
            return IllegalGenerationError.code
        return NONE

    # ==================================================================== OffsetCommit

    def commit_offsets(self, *, group_id: str, member_id: str, group_instance_id: str | None,
                       generation_id: int, offsets: Mapping[TopicPartition, OffsetAndMetadata],
                       api_version: int = 9) -> dict[TopicPartition, int]:
        """Kafka's handleCommitOffsets: per-partition error codes. Raises a KafkaError that
        applies to every partition."""
        self._check_group_id(group_id)
        self._check_active(group_id)
        group = self._group(group_id)
        consumer_group = self.consumer_groups.get(group_id)
        if consumer_group is not None:
            # KIP-848: GenerationIdOrMemberEpoch is the member epoch. Once validated, the
            # commit goes to the group's Empty offsets holder like an admin commit's.
            consumer_group.validate_offset_commit(member_id, generation_id, api_version)
            group = self._add_group(group_id)
            generation_id, member_id, group_instance_id = -1, "", None
        if group is None:
            if generation_id >= 0:
                # Group management claims a generation this coordinator does not know.
                raise IllegalGenerationError(f"group {group_id} has no generation "
                                             f"{generation_id}")
            group = self._add_group(group_id)
        if group.is_state(GroupState.DEAD):
            raise CoordinatorNotAvailableError(f"group {group_id} is being removed")
        if generation_id >= 0 or member_id != "" or group_instance_id is not None:
            error = self._validate_member(group, member_id, group_instance_id, generation_id)
            if error:
                raise error_class(error)(f"offset commit of group {group_id} "
                                                 f"rejected")
            if group.is_state(GroupState.COMPLETING_REBALANCE):
                raise RebalanceInProgressError(f"group {group_id} is rebalancing")
            member = group.members[member_id]
            self._schedule_heartbeat(group, member_id, member.session_timeout_ms)
        elif not group.is_state(GroupState.EMPTY):
            # Only members commit for a group that has members.
            raise UnknownMemberIdError(f"group {group_id} has members: only they commit")
        results, valid = self._checked_offsets(offsets)
        if valid:
            error = self.manager.store_offsets(group_id, valid)
            for tp, om in valid.items():
                results[tp] = error
                if not error:
                    group.offsets[tp] = om
        self._maybe_drop_empty(group)
        return results

    def _checked_offsets(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]
                         ) -> tuple[dict[TopicPartition, int],
                                    dict[TopicPartition, OffsetAndMetadata]]:
        """(error codes of the refused partitions, the offsets that may be written): unknown
        partitions and metadata over ``offset.metadata.max.bytes`` are refused."""
        results: dict[TopicPartition, int] = {}
        valid: dict[TopicPartition, OffsetAndMetadata] = {}
        max_metadata = self.config.offset_metadata_max_bytes
        topics = self.partitions.topics()
        for tp, om in offsets.items():
            record = topics.get(tp.topic)
            if record is None or not 0 <= tp.partition < record.partitions:
                results[tp] = UnknownTopicOrPartitionError.code
            elif len(om.metadata.encode()) > max_metadata:
                results[tp] = OffsetMetadataTooLargeError.code
            else:
                valid[tp] = om
        return results, valid

    # ============================================================ transactional offsets

    def txn_commit_offsets(self, *, group_id: str, producer_id: int, producer_epoch: int,
                           member_id: str, group_instance_id: str | None, generation_id: int,
                           offsets: Mapping[TopicPartition, OffsetAndMetadata]
                           ) -> dict[TopicPartition, int]:
        """Kafka's handleTxnCommitOffsets: the offsets are written as the producer's
        transactional batch and stay pending until the transaction's marker reaches the
        group's partition (``on_txn_completed``). The group's state is not enforced, but a
        member id or generation given (v3+) must match. Per-partition error codes."""
        self._check_group_id(group_id)
        self._check_active(group_id)
        consumer_group = self.consumer_groups.get(group_id)
        if consumer_group is not None:
            if member_id:
                consumer_group.validate_offset_commit(member_id, generation_id, 9)
            generation_id, member_id, group_instance_id = -1, "", None
        group = self._group(group_id) or self._add_group(group_id)
        if group.is_state(GroupState.DEAD):
            raise CoordinatorNotAvailableError(f"group {group_id} is being removed")
        if member_id and member_id not in group.members:
            raise UnknownMemberIdError(f"{member_id} is not a member of group {group_id}")
        if group_instance_id is not None and member_id and \
                group.static_members.get(group_instance_id, member_id) != member_id:
            raise FencedInstanceIdError(f"instance {group_instance_id} of group {group_id} "
                                        f"has another member id")
        if generation_id >= 0 and generation_id != group.generation_id:
            raise IllegalGenerationError(f"group {group_id} is at generation "
                                         f"{group.generation_id}, not {generation_id}")
        results, valid = self._checked_offsets(offsets)
        if valid:
            error = self.manager.store_offsets(group_id, valid, producer_id, producer_epoch)
            for tp in valid:
                results[tp] = error
            if not error:
                self.add_pending_txn_offsets(group_id, producer_id, valid)
        return results

    def add_pending_txn_offsets(self, group_id: str, producer_id: int,
                                offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        self.pending_txn_offsets.setdefault(group_id, {}).setdefault(
            producer_id, {}).update(offsets)

    def has_pending_txn_offset(self, group_id: str, tp: TopicPartition) -> bool:
        """OffsetFetch with RequireStable: UNSTABLE_OFFSET_COMMIT while a transaction holds
        an offset of ``tp`` for the group."""
        return any(tp in offsets
                   for offsets in self.pending_txn_offsets.get(group_id, {}).values())

    def on_txn_completed(self, producer_id: int, offsets_partitions: set[int],
                         commit: bool) -> None:
        """A transaction marker reached these ``__consumer_offsets`` partitions (Kafka's
        scheduleHandleTxnCompletion): the producer's pending offsets of their groups become
        committed (COMMIT) or are dropped (ABORT)."""
        for group_id in list(self.pending_txn_offsets):
            if self.manager.partition_for(group_id) not in offsets_partitions:
                continue
            by_producer = self.pending_txn_offsets[group_id]
            pending = by_producer.pop(producer_id, None)
            if not by_producer:
                del self.pending_txn_offsets[group_id]
            group = self._group(group_id)
            if pending and commit:
                if group is None:
                    group = self._add_group(group_id)
                group.offsets.update(pending)
            elif group is not None:
                self._maybe_drop_empty(group)

    # ===================================================================== OffsetFetch

    def fetch_offsets(self, group_id: str, tps: Iterable[TopicPartition] | None,
                      member_id: str | None = None, member_epoch: int = -1
                      ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The committed offsets of ``tps`` (None: every partition the group has one for);
        None for a partition without one."""
        self._check_group_id(group_id)
        self._check_active(group_id)
        consumer_group = self.consumer_groups.get(group_id)
        if consumer_group is not None:     # KIP-848: a member fetches at its member epoch
            consumer_group.validate_offset_fetch(member_id, member_epoch)
        group = self._group(group_id)
        offsets = {} if group is None else group.offsets
        if tps is None:
            return dict(offsets)
        return {tp: offsets.get(tp) for tp in tps}

    # ================================================================== admin: groups

    def list_groups(self) -> list[ClassicGroup]:
        return [g for g in self.groups.values()
                if not g.is_state(GroupState.DEAD) and self.manager.is_loaded(g.group_id)
                and self.consumer_groups.get(g.group_id) is None]   # not offsets holders

    def describe_group(self, group_id: str) -> GroupSummary:
        self._check_group_id(group_id)
        self._check_active(group_id)
        group = self._group(group_id)
        if self.consumer_groups.get(group_id) is not None:
            raise GroupIdNotFoundError(f"Group {group_id} is not a classic group.")
        if group is None:
            raise GroupIdNotFoundError(f"Group {group_id} not found.")
        members = []
        stable = group.is_state(GroupState.STABLE)
        for m in group.members.values():
            meta = m.metadata(group.protocol_name) if stable and group.protocol_name else b""
            members.append((m.member_id, m.group_instance_id, m.client_id, m.client_host, meta,
                            m.assignment if stable else b""))
        return GroupSummary(NONE, group_id, group.state.value, group.protocol_type or "",
                            (group.protocol_name or "") if stable else "", tuple(members))

    def delete_groups(self, group_ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for group_id in group_ids:
            try:
                self._check_group_id(group_id)
                self._check_active(group_id)
                group = self._group(group_id)
                if self.consumer_groups.delete(group_id):   # KIP-848 group: NON_EMPTY_GROUP
                    group = group or self._add_group(group_id)  # unless empty; then offsets
                if group is None or group.is_state(GroupState.DEAD):
                    raise GroupIdNotFoundError(f"Group {group_id} not found.")
                if not group.is_state(GroupState.EMPTY):
                    raise NonEmptyGroupError(f"Group {group_id} is not empty.")
                self.manager.delete_group(group)
                group.transition(GroupState.DEAD, self._now_ms())
                self.groups.pop(group_id, None)
                out[group_id] = NONE
            except KafkaError as e:
                out[group_id] = e.code
        return out

    def delete_offsets(self, group_id: str, tps: Sequence[TopicPartition]
                       ) -> dict[TopicPartition, int]:
        """OffsetDelete: raises for the whole request (unknown group, a non-empty group of
        another protocol type)."""
        self._check_group_id(group_id)
        self._check_active(group_id)
        group = self._group(group_id)
        if group is None or group.is_state(GroupState.DEAD):
            raise GroupIdNotFoundError(f"Group {group_id} not found.")
        subscribed: set[str] = set()
        if not group.is_state(GroupState.EMPTY):
            if group.protocol_type != CONSUMER_PROTOCOL_TYPE:
                raise NonEmptyGroupError(f"Group {group_id} is not empty.")
            subscribed = self._subscribed_topics(group)
        subscribed |= self.consumer_groups.subscribed_topics(group_id)     # KIP-848 members
        out: dict[TopicPartition, int] = {}
        doomed = []
        topics = self.partitions.topics()
        for tp in tps:
            if tp.topic in subscribed:
                out[tp] = GroupSubscribedToTopicError.code
            elif tp.topic not in topics:
                out[tp] = UnknownTopicOrPartitionError.code
            else:
                out[tp] = NONE
                if tp in group.offsets:
                    doomed.append(tp)
        if doomed:
            self.manager.delete_offsets(group_id, doomed)
            for tp in doomed:
                group.offsets.pop(tp, None)
        return out

    def on_topic_deleted(self, topic: str) -> None:
        """Remove every group's committed offsets of ``topic`` (tombstones written)."""
        for group in list(self.groups.values()):
            doomed = [tp for tp in group.offsets if tp.topic == topic]
            if not doomed:
                continue
            try:
                self.manager.delete_offsets(group.group_id, doomed)
            except KafkaError as e:
                log.warning("Could not remove the offsets of deleted topic %s from group %s: "
                            "%s", topic, group.group_id, e)
                continue
            for tp in doomed:
                group.offsets.pop(tp, None)

    def _subscribed_topics(self, group: ClassicGroup) -> set[str]:
        topics: set[str] = set()
        if group.protocol_name is None:
            return topics
        for m in group.members.values():
            try:
                topics.update(subscribed_topics(m.metadata(group.protocol_name)))
            except Exception:        # opaque bytes of a non-conforming client: no topics
                continue
        return topics

    # ====================================================== leadership (from the broker)

    def on_become_leader(self, partition: int, leader_epoch: int) -> None:
        """Coordinate the groups of ``__consumer_offsets`` partition ``partition`` (loaded
        from its log; meanwhile they answer COORDINATOR_LOAD_IN_PROGRESS)."""
        self.manager.on_become_leader(partition, leader_epoch)

    def on_resign(self, partition: int, leader_epoch: int | None) -> None:
        """Stop coordinating the groups of ``partition`` (NOT_COORDINATOR from now on)."""
        self.manager.on_resign(partition, leader_epoch)

    # ============================================================ loading (from manager)

    def on_partition_unloaded(self, partition: int) -> None:
        """Forget every group of ``partition`` (Kafka's removeGroupsForPartition): requests
        waiting for a rebalance are answered NOT_COORDINATOR, so clients find the new
        coordinator; their timers complete without acting."""
        now = self._now_ms()
        for group_id in [g for g in self.groups if self.manager.partition_for(g) == partition]:
            group = self.groups.pop(group_id)
            previous = group.state
            group.transition(GroupState.DEAD, now)
            for member in group.members.values():
                if previous is GroupState.PREPARING_REBALANCE:
                    group.answer_join(member, JoinResult(NotCoordinatorError.code,
                                                         member.member_id))
                group.answer_sync(member, SyncResult(NotCoordinatorError.code))
            self.join_purgatory.check_and_complete(("join", group_id))
            self.sync_purgatory.check_and_complete(("sync", group_id))
            for member_id in set(group.members) | group.pending_members:
                self.heartbeat_purgatory.check_and_complete(("hb", group_id, member_id))
        for group_id in [g for g in self.pending_txn_offsets
                         if self.manager.partition_for(g) == partition]:
            del self.pending_txn_offsets[group_id]
        self.consumer_groups.unload([g for g in list(self.consumer_groups.groups)
                                     if self.manager.partition_for(g) == partition])


    def on_group_loaded(self, group: ClassicGroup) -> None:
        """A group read from ``__consumer_offsets`` at startup: members get session timers
        (Kafka's onGroupLoaded)."""
        self.groups[group.group_id] = group
        for member in group.members.values():
            self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)

    def on_group_expired(self, group: ClassicGroup) -> None:
        group.transition(GroupState.DEAD, self._now_ms())
        self.groups.pop(group.group_id, None)
