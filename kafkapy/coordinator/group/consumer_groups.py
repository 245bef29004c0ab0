"""ConsumerGroups: the broker's KIP-848 consumer groups (``group.protocol=consumer``), their
timers, and the group coordinator's entry points for ConsumerGroupHeartbeat (68) and
ConsumerGroupDescribe (69).

The rules of one group are :class:`~kafkapy.coordinator.group.consumer_group.ConsumerGroup`
(pure, synchronous, no clock). This module owns what that one leaves to its caller, as Kafka's
``GroupMetadataManager`` does for consumer groups:

- the groups by id. A heartbeat with MemberEpoch 0 creates its group; any other heartbeat for
  an unknown group is UNKNOWN_MEMBER_ID (see *Not persisted* below);
- the clock: ``now`` is ``trio.current_time()`` in milliseconds, the purgatory's clock, so a
  ``trio.testing.MockClock`` drives the groups and their timers together;
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
  (INCONSISTENT_GROUP_PROTOCOL) and converts an empty one (:meth:`ConsumerGroups.make_classic`).

Committed offsets. A consumer group's offsets are kept exactly like a classic group's: in the
group coordinator's ``groups[group_id]``, a :class:`ClassicGroup` that for a consumer group
stays Empty and only holds offsets (its *offsets holder*), written and loaded by the same
``GroupMetadataManager`` path. So OffsetCommit/OffsetFetch, ``committed_offsets``, offset
expiry and the startup load need nothing new; the coordinator only validates a consumer-group
member's commit or fetch by member epoch first, and leaves the holder out of the classic APIs
(ListGroups, DescribeGroups). While the consumer group has members, every heartbeat moves the
holder's state timestamp to now, so offsets only start to age (``offsets.retention.minutes``)
once the group is empty, as Kafka's retention of an empty group.

Not persisted: the membership, epochs and assignments of consumer groups live in memory only
(Kafka writes them to ``__consumer_offsets`` as ConsumerGroup* records). After a broker
restart a group comes back as its offsets holder only; its members' heartbeats are answered
UNKNOWN_MEMBER_ID, and the clients rejoin with MemberEpoch 0 (and resume at the committed
offsets).

Everything here runs on the broker's event loop and is synchronous; a heartbeat is processed
without another task in between.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import trio

from kafkapy.coordinator.group.classic_group import ClassicGroup, GroupState
from kafkapy.coordinator.group.consumer_group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerGroupConfig,
    DescribedGroup,
    HeartbeatRequest,
    HeartbeatResponse,
    TopicsMetadata,
    validate_heartbeat_request,
)
from kafkapy.errors import (
    GroupIdNotFoundError,
    InvalidGroupIdError,
    NonEmptyGroupError,
    UnknownMemberIdError,
)
from kafkapy.server.purgatory import DelayedOperation, DelayedOperationPurgatory

if TYPE_CHECKING:
    from kafkapy.coordinator.group.group_coordinator import GroupCoordinator

__all__ = ["ConsumerGroups"]

log = logging.getLogger(__name__)

SESSION, REBALANCE, CLEANUP = "session", "rebalance", "cleanup"


def _now_ms() -> int:
    return int(trio.current_time() * 1000)


class ConsumerGroupTimer(DelayedOperation):
    """One timer of :class:`ConsumerGroups`, due at ``deadline_ms`` (group clock). It
    completes only by expiring (or at shutdown); a newer timer of the same key cancels it.
    ``epoch`` is the member epoch a rebalance timer was armed for."""

    def __init__(self, groups: ConsumerGroups, kind: str, group_id: str, member_id: str,
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


class ConsumerGroups:
    """The consumer groups of one broker.

    Args:
        config: the ``group.consumer.*`` settings.
        topics: the cluster's topics now, ``{name: (topic id, partition count)}``.
        classic_groups: the group coordinator's classic groups by id (a live mapping): the
            offsets holders, and the classic groups a consumer group may not take over.
        check_loaded: raises COORDINATOR_LOAD_IN_PROGRESS while the group's
            ``__consumer_offsets`` partition loads.
        cleanup_interval_ms: how often an empty group is looked at for removal.
    """

    def __init__(self, config: ConsumerGroupConfig, *, topics: Callable[[], TopicsMetadata],
                 classic_groups: Mapping[str, ClassicGroup] | None = None,
                 check_loaded: Callable[[str], None] = lambda group_id: None,
                 cleanup_interval_ms: int = 600_000) -> None:
        self.config = config
        self.groups: dict[str, ConsumerGroup] = {}
        self.purgatory: DelayedOperationPurgatory[ConsumerGroupTimer] = \
            DelayedOperationPurgatory("ConsumerGroupTimers")
        self._topics = topics
        self._classic_groups: Mapping[str, ClassicGroup] = \
            classic_groups if classic_groups is not None else {}
        self._check_loaded = check_loaded
        self._cleanup_interval_ms = cleanup_interval_ms
        # group id -> (kind, member id) -> the armed timer (its purgatory key adds the group)
        self._timers: dict[str, dict[tuple[str, str], ConsumerGroupTimer]] = {}

    @classmethod
    def for_coordinator(cls, coordinator: GroupCoordinator) -> ConsumerGroups:
        """The consumer groups of a broker's group coordinator, from its broker config."""
        cfg = coordinator.server.config
        store = coordinator.server.metadata_store

        def topics() -> TopicsMetadata:
            return {name: (t.topic_id, t.partitions) for name, t in store.topics.items()}

        return cls(
            ConsumerGroupConfig(
                heartbeat_interval_ms=cfg.group_consumer_heartbeat_interval_ms,
                session_timeout_ms=cfg.group_consumer_session_timeout_ms,
                max_size=cfg.group_consumer_max_size,
                assignors=tuple(cfg.group_consumer_assignors)),
            topics=topics, classic_groups=coordinator.groups,
            check_loaded=coordinator.manager.check_loaded,
            cleanup_interval_ms=cfg.offsets_retention_check_interval_ms)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """The timers' reaper (start it with ``nursery.start``)."""
        await self.purgatory.run(task_status=task_status)

    def shutdown(self) -> None:
        self.purgatory.shutdown()
        self._timers.clear()

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
            GroupIdNotFoundError: the group id is a classic group in use.
            UnknownMemberIdError: a heartbeat or leave (MemberEpoch != 0) for a group that does
                not exist (kafkapy: its membership was lost with a restart), or see
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
        now = _now_ms()
        before = (group.group_epoch, len(group.members))
        member_id = request.member_id
        try:
            response = group.heartbeat(request, self._topics(), now)
            member_id = response.member_id
        finally:
            if group.group_epoch == 0 and group.is_empty():
                # Created by a join that failed: the group never was.
                del self.groups[group_id]
            else:
                # Members other than this one only go with a group epoch bump (a leave, a
                # static member replaced): then every member's timers are looked at.
                unchanged = (group.group_epoch, len(group.members)) == before
                self._after_change(group, now, member_id if unchanged else None)
        if request.member_epoch not in (LEAVE_GROUP_MEMBER_EPOCH,
                                        LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            self._touch_offsets(group_id)
        return response

    def _touch_offsets(self, group_id: str) -> None:
        # The offsets holder's "became Empty at" moves with the live group (module doc).
        holder = self._classic_groups.get(group_id)
        if holder is not None:
            holder.state_timestamp_ms = int(time.time() * 1000)

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
        now = _now_ms()
        member_id = timer.member_id
        if timer.kind == CLEANUP:
            if group.is_empty() and not self._has_offsets(group.group_id):
                self._drop(group.group_id)
                log.info("Consumer group %s removed: empty and without offsets",
                         group.group_id)
                return
            self._after_change(group, now)
            return
        removed = False
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
        else:
            # It heartbeated meanwhile, left, or this timer is stale: look at it afresh.
            self._after_change(group, now, member_id)

    # ================================================================= admin

    def describe(self, group_id: str) -> DescribedGroup:
        """The ConsumerGroupDescribe answer for one group.

        Raises:
            InvalidGroupIdError: an empty group id.
            CoordinatorLoadInProgressError: the group's offsets partition is loading.
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
        is INCONSISTENT_GROUP_PROTOCOL)."""
        group = self.groups.get(group_id)
        if group is None:
            return True
        if not group.is_empty():
            return False
        self._drop(group_id)
        return True

    def _drop(self, group_id: str) -> None:
        del self.groups[group_id]
        for kind, member_id in list(self._timers.get(group_id, {})):
            self._cancel(kind, group_id, member_id)
