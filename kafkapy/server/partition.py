"""Partition: one topic-partition as the replica manager sees it: its log, leader, leader and
partition epochs, replicas, ISR, the followers' fetch state and the high watermark.

Kafka's ``kafka.cluster.Partition``.

Theory of operation
-------------------
- Single broker (no ``zookeeper.connect``): the broker leads every partition it hosts with
  itself as the only replica and the whole ISR, so the high watermark follows the log end
  offset after every append (``_sole`` is set; no follower bookkeeping on that path).
- Cluster (ZooKeeper mode): the controller's LeaderAndIsr makes the partition a leader
  (``make_leader``) or a follower (``make_follower``) at a leader epoch and partition epoch
  (the state znode's version). As leader it tracks each follower (``FollowerState``: log end
  offset from its fetches, last caught-up time, Kafka's ``Replica``) and moves the high
  watermark to the smallest log end offset of the *maximal* ISR, forward only (KIP-497: while
  an expansion is in flight the new member already counts; while a shrink is in flight the
  leaving member still does).
- ISR changes are never applied locally: the leader proposes them (``maybe_expand_isr`` when a
  follower's LEO reaches the high watermark and this epoch's start, ``maybe_shrink_isr`` when
  a follower was not caught up for ``replica.lag.time.max.ms``) through ``alter_isr`` (the
  AlterPartitionManager); one proposal at a time (``pending_isr``); the controller's answer
  (``on_alter_partition``) or a new LeaderAndIsr replaces the committed ISR.
- A follower takes batches with their offsets (``append_as_follower``) and a high watermark
  no larger than its own LEO.

Invariants: the high watermark never moves backwards on a leader and is <= LEO; ``isr`` is the
committed ISR (what ZooKeeper holds), used for min.insync.replicas.

Runs on the broker's event loop; the log calls it makes are synchronous and quick (no fsync).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import attrs

from kafkapy import _replica
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    FencedLeaderEpochError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    UnknownLeaderEpochError,
)
from kafkapy.log.index import NO_TIMESTAMP, TimestampOffset
from kafkapy.log.log import FetchData, Log, LogAppendInfo
from kafkapy.log.producer_state import AppendOrigin

__all__ = ["READ_COMMITTED", "READ_UNCOMMITTED", "FollowerState", "Partition",
           "PartitionState"]

READ_UNCOMMITTED = 0
READ_COMMITTED = 1

LATEST_TIMESTAMP = -1
LATEST_TIERED_TIMESTAMP = -5
NO_LEADER = -1

# AlterPartition answers that say the change was not applied, by any controller (Kafka's
# handleAlterPartitionError): OPERATION_NOT_ATTEMPTED, INELIGIBLE_REPLICA. After any other
# refusal the change stays pending until the controller's LeaderAndIsr.
_RESET_TO_COMMITTED = frozenset({55, 107})


@attrs.frozen
class PartitionState:
    """What the controller says about a partition (LeaderAndIsr's partition state)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    replicas: tuple[int, ...]


@attrs.define
class FollowerState:
    """The leader's view of one follower (Kafka's ``Replica``): -1 while unknown."""

    log_end_offset: int = -1
    log_start_offset: int = -1
    last_caught_up_ms: int = 0
    last_fetch_leader_leo: int = -1
    last_fetch_ms: int = 0


@attrs.frozen
class PendingIsr:
    """An ISR change sent to the controller and not answered yet (KIP-497)."""

    new_isr: tuple[int, ...]
    leader_epoch: int
    partition_epoch: int


class Partition:
    """See the module docstring. ``leader=False`` creates a hosted partition with no role yet
    (a LeaderAndIsr makes it leader or follower); the default leads it alone at
    ``leader_epoch`` (single-broker mode)."""

    # Who sends ISR changes to the controller (the ReplicaManager installs its
    # AlterPartitionManager); returns False if a change for this partition is in flight.
    alter_isr: Callable[[Partition, PendingIsr], bool] | None = None

    def __init__(self, tp: TopicPartition, topic_id: uuid.UUID, log: Log, node_id: int,
                 leader_epoch: int = 0, *, leader: bool = True) -> None:
        self.tp = tp
        self.topic_id = topic_id
        self.log = log
        self.node_id = node_id
        self.partition_epoch = 0
        self.followers: dict[int, FollowerState] = {}
        self.pending_isr: PendingIsr | None = None
        self._isr_blocked = False
        self.leader_epoch_start_offset = -1
        # Set by the controller's LeaderAndIsr (not by single-broker leadership).
        self.from_controller = False
        if leader:
            self.leader_id = node_id
            self.leader_epoch = leader_epoch
            self.replicas = [node_id]
            self.isr = [node_id]
            self._sole = True
            # Without replicas to wait for, everything in the log is replicated.
            log.update_high_watermark(log.log_end_offset)
        else:
            self.leader_id = NO_LEADER
            self.leader_epoch = -1
            self.replicas = []
            self.isr = []
            self._sole = False

    def __repr__(self) -> str:
        return f"Partition({self.tp}, leader {self.leader_id}, epoch {self.leader_epoch})"

    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.node_id

    @property
    def sole_replica(self) -> bool:
        """This broker leads the partition and is its only replica: an append is replicated
        (the high watermark covers it) as soon as it is in the log."""
        return self._sole

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def last_stable_offset(self) -> int:
        return self.log.last_stable_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def maximal_isr(self) -> list[int]:
        """The committed ISR plus a pending expansion's new member (a pending shrink's
        leaving members are still in the committed ISR): what the high watermark waits for."""
        pending = self.pending_isr
        if pending is None:
            return self.isr
        return sorted(set(self.isr) | set(pending.new_isr))

    # ================================================================ leader / follower

    def make_leader(self, state: PartitionState, now_ms: int) -> bool:
        """Kafka's makeLeader. Returns True if this broker was not the leader before."""
        was_leader = self.is_leader and self.from_controller
        new_epoch = state.leader_epoch != self.leader_epoch
        self.from_controller = True
        self.leader_id = self.node_id
        self.leader_epoch = state.leader_epoch
        self.partition_epoch = state.partition_epoch
        self.replicas = list(state.replicas)
        self.isr = list(state.isr)
        self.pending_isr = None
        self._isr_blocked = False
        self._sole = self.replicas == [self.node_id] and self.isr == [self.node_id]
        leo = self.log.log_end_offset
        if not was_leader or new_epoch:
            # The epoch starts at the LEO: followers diverging from this leader are told
            # where (Fetch's DivergingEpoch, OffsetForLeaderEpoch).
            self.log.epochs.assign(self.leader_epoch, leo)
            self.leader_epoch_start_offset = leo
        old = self.followers
        self.followers = {}
        for r in self.replicas:
            if r == self.node_id:
                continue
            f = old.get(r)
            if f is None or not was_leader:
                f = FollowerState(last_caught_up_ms=now_ms if r in self.isr else 0,
                                  last_fetch_leader_leo=leo, last_fetch_ms=now_ms)
            self.followers[r] = f
        self.maybe_increment_leader_hw(now_ms)
        return not was_leader

    def make_follower(self, state: PartitionState) -> bool:
        """Kafka's makeFollower. Returns True if the leader or the leader epoch changed (the
        fetcher must be (re)started)."""
        changed = self.leader_id != state.leader or self.leader_epoch != state.leader_epoch
        self.from_controller = True
        self.leader_id = state.leader
        self.leader_epoch = state.leader_epoch
        self.partition_epoch = state.partition_epoch
        self.replicas = list(state.replicas)
        self.isr = list(state.isr)
        self.pending_isr = None
        self.followers = {}
        self._sole = False
        self.leader_epoch_start_offset = -1
        return changed

    def stop_leading(self) -> None:
        """The partition is no longer led or followed here (StopReplica without delete)."""
        self.leader_id = NO_LEADER
        self.followers = {}
        self.pending_isr = None
        self._sole = False

    # =========================================================== the leader's followers

    def update_follower_fetch_state(self, replica_id: int, fetch_offset: int,
                                    follower_start_offset: int, now_ms: int,
                                    leader_leo: int) -> bool:
        """A follower fetched from ``fetch_offset`` (its LEO) while the leader's LEO was
        ``leader_leo`` (Kafka's updateFollowerFetchState). Returns True if the high watermark
        moved. Caught up: it fetched the leader's LEO now, or the LEO the leader had at its
        previous fetch (then it was caught up at that previous fetch's time)."""
        f = self.followers.get(replica_id)
        if f is None:
            return False
        if fetch_offset >= leader_leo:
            f.last_caught_up_ms = max(f.last_caught_up_ms, now_ms)
        elif fetch_offset >= f.last_fetch_leader_leo:
            f.last_caught_up_ms = max(f.last_caught_up_ms, f.last_fetch_ms)
        f.last_fetch_leader_leo = leader_leo
        f.last_fetch_ms = now_ms
        f.log_start_offset = follower_start_offset
        moved = fetch_offset != f.log_end_offset
        f.log_end_offset = fetch_offset
        self.maybe_expand_isr(replica_id)
        return moved and self.maybe_increment_leader_hw(now_ms)

    def _in_sync(self, replica_id: int) -> bool:
        f = self.followers.get(replica_id)
        return f is not None and f.log_end_offset >= self.log.high_watermark and \
            f.log_end_offset >= self.leader_epoch_start_offset

    def maybe_expand_isr(self, replica_id: int) -> None:
        """Propose adding ``replica_id`` to the ISR once it caught up (Kafka's
        maybeExpandIsr); nothing while another change is in flight."""
        if self.pending_isr is not None or replica_id in self.isr or \
                replica_id not in self.replicas or not self._in_sync(replica_id):
            return
        self._propose(tuple(sorted(set(self.isr) | {replica_id})))

    def out_of_sync_replicas(self, now_ms: int, max_lag_ms: int) -> list[int]:
        return [r for r in self.isr if r != self.node_id and
                now_ms - self.followers.get(r, FollowerState()).last_caught_up_ms > max_lag_ms]

    def maybe_shrink_isr(self, now_ms: int, max_lag_ms: int) -> None:
        """Propose removing followers not caught up within ``max_lag_ms`` (Kafka's
        maybeShrinkIsr)."""
        if not self.is_leader or self.pending_isr is not None or self._sole:
            return
        out = self.out_of_sync_replicas(now_ms, max_lag_ms)
        if out:
            self._propose(tuple(r for r in self.isr if r not in out))

    def _propose(self, new_isr: tuple[int, ...]) -> None:
        if self._isr_blocked:
            return
        change = PendingIsr(new_isr, self.leader_epoch, self.partition_epoch)
        if self.alter_isr is not None and self.alter_isr(self, change):
            self.pending_isr = change

    def on_alter_partition(self, change: PendingIsr, error: int, leader_epoch: int,
                           isr: list[int], partition_epoch: int, now_ms: int) -> bool:
        """The controller's answer to ``change``. Returns True if the high watermark moved.

        Kafka's handleAlterPartitionError / handleAlterPartitionUpdate: only
        OPERATION_NOT_ATTEMPTED and INELIGIBLE_REPLICA say the change was certainly not
        applied; the partition then goes back to its committed ISR and proposes again later.
        Any other refusal (INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH, an unknown
        partition, ...) or an answer for another leader epoch leaves the change pending,
        with nothing more proposed, until the controller's LeaderAndIsr brings the truth:
        a pending expansion's new member keeps counting for the high watermark. Dropping it
        would let the high watermark pass a replica that the controller may already have
        put in the ISR, and made leader (issue 18's clean bounce: a leader shutting down
        acknowledged records that its successor, admitted to the ISR by the controller,
        never had)."""
        if self.pending_isr is not change:
            return False        # a LeaderAndIsr came in between
        if error in _RESET_TO_COMMITTED:
            # The maximal ISR shrinks back: the high watermark may pass now what the refused
            # member held back. Nothing else would move it: the remaining followers' log
            # ends need not change again (a dead would-be member left acks=all waiting).
            self.pending_isr = None
            return self.maybe_increment_leader_hw(now_ms)
        if error != 0 or leader_epoch != self.leader_epoch or \
                partition_epoch < self.partition_epoch:
            self._isr_blocked = True
            return False
        self.pending_isr = None
        self.isr = list(isr)
        self.partition_epoch = partition_epoch
        return self.maybe_increment_leader_hw(now_ms)

    def maybe_increment_leader_hw(self, now_ms: int = 0) -> bool:
        """HW = the smallest LEO over the maximal ISR (the leader's own included), forward
        only. Returns True if it moved."""
        log = self.log
        if not self.is_leader:
            return False
        new_hw = log.log_end_offset
        for r in self.maximal_isr:
            if r == self.node_id:
                continue
            f = self.followers.get(r)
            leo = -1 if f is None else f.log_end_offset
            if leo < new_hw:
                new_hw = leo
        if new_hw > log.high_watermark:
            log.update_high_watermark(new_hw)
            return True
        return False

    # ======================================================================= follower

    def append_as_follower(self, records: memoryview | bytes | bytearray) -> LogAppendInfo:
        return self.log.append_as_follower(records)

    # =================================================================== epochs

    def check_leader_epoch(self, current_leader_epoch: int) -> None:
        """KIP-320 fencing: -1 means the client does not know; older is fenced, newer is a
        leader change this broker has not heard of yet."""
        if current_leader_epoch < 0 or current_leader_epoch == self.leader_epoch:
            return
        if current_leader_epoch < self.leader_epoch:
            raise FencedLeaderEpochError(
                f"{self.tp}: leader epoch {current_leader_epoch} is older than the current "
                f"{self.leader_epoch}")
        raise UnknownLeaderEpochError(
            f"{self.tp}: leader epoch {current_leader_epoch} is newer than the current "
            f"{self.leader_epoch}")

    def check_leader(self, current_leader_epoch: int = -1) -> None:
        """Raises NotLeaderOrFollowerError unless this broker leads the partition, then the
        epoch check."""
        if self.leader_id != self.node_id:
            raise NotLeaderOrFollowerError(
                f"this broker is not the leader of {self.tp} (leader {self.leader_id})")
        if current_leader_epoch >= 0 and current_leader_epoch != self.leader_epoch:
            self.check_leader_epoch(current_leader_epoch)

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch / a follower's divergence check: (the largest epoch <=
        ``epoch``, the offset where the next one starts or the LEO); (-1, -1) unknown."""
        return self.log.epochs.end_offset_for(epoch, self.log.log_end_offset)

    # ======================================================================= appends

    def append_records_to_leader(self, records: memoryview | bytes | bytearray,
                                 required_acks: int,
                                 origin: AppendOrigin = AppendOrigin.CLIENT) -> LogAppendInfo:
        """Kafka's appendRecordsToLeader: leadership, min.insync.replicas for acks=all, then
        the log append (offsets, leader epoch), then the high watermark."""
        info: LogAppendInfo = _replica.append_to_leader(self, records, required_acks, origin)
        return info

    def fetch_bound(self, isolation_level: int) -> int:
        """The offset a consumer may read up to (exclusive)."""
        if isolation_level == READ_COMMITTED:
            return self.last_stable_offset
        return self.high_watermark

    def read(self, fetch_offset: int, max_bytes: int, isolation_level: int,
             min_one_message: bool, *, replica: bool = False) -> FetchData:
        """Batches from ``fetch_offset``: consumers up to the HW/LSO, a replica to the LEO.
        Raises OffsetOutOfRangeError (outside [log start, LEO])."""
        if replica:
            return self.log.read(fetch_offset, max_bytes, None, min_one_message)
        committed = isolation_level == READ_COMMITTED
        return self.log.read(fetch_offset, max_bytes,
                             self.last_stable_offset if committed else self.high_watermark,
                             min_one_message, committed)

    def epoch_for_offset(self, offset: int) -> int:
        """The leader epoch that wrote ``offset`` (-1 if none is known)."""
        epoch = -1
        for entry in self.log.epochs.entries:
            if entry.start_offset > offset:
                break
            epoch = entry.epoch
        return epoch

    def fetch_offset_for_timestamp(self, timestamp: int, isolation_level: int | None
                                   ) -> tuple[int, int, int]:
        """ListOffsets for one partition: ``(timestamp, offset, leader epoch)``, offset -1
        when no record qualifies. ``isolation_level`` None: a replica (no HW bound)."""
        log = self.log
        if isolation_level is None:
            bound = log.log_end_offset
        else:
            bound = self.fetch_bound(isolation_level)
        if timestamp == LATEST_TIMESTAMP:
            return NO_TIMESTAMP, bound, self.leader_epoch
        if timestamp == LATEST_TIERED_TIMESTAMP:
            # No tiered storage: nothing is tiered (Kafka answers -1 when it is disabled).
            return NO_TIMESTAMP, -1, -1
        found: TimestampOffset | None = log.fetch_offset_by_timestamp(timestamp)
        if found is None or (timestamp >= 0 and found.offset >= bound):
            return NO_TIMESTAMP, -1, -1
        return found.timestamp, found.offset, self.epoch_for_offset(found.offset)

    def delete_records(self, offset: int) -> int:
        """Advance the log start offset (-1: to the high watermark); returns the new low
        watermark. Raises NotLeaderOrFollowerError on a follower, OffsetOutOfRangeError above
        the high watermark."""
        self.check_leader()
        if offset == -1:
            offset = self.high_watermark
        if offset < 0:
            raise OffsetOutOfRangeError(f"{self.tp}: cannot delete records before offset "
                                        f"{offset}")
        return self.log.delete_records(offset)
