"""Partition: one topic-partition as the replica manager sees it: its log, leader epoch,
replicas and ISR, and the high watermark.

Kafka's ``kafka.cluster.Partition``. A single broker leads every partition it hosts with
itself as the only replica and the whole ISR, so the high watermark follows the log end offset
after every append (Kafka's ``maybeIncrementLeaderHW`` with one ISR member). The seams for
replication are here: ``replicas``/``isr``, the leader epoch checked against the client's
``CurrentLeaderEpoch`` (KIP-320), and ``min.insync.replicas`` for acks=all.

Runs on the broker's event loop; the log calls it makes are synchronous and quick (no fsync).
"""

from __future__ import annotations

import uuid

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    FencedLeaderEpochError,
    NotEnoughReplicasError,
    OffsetOutOfRangeError,
    UnknownLeaderEpochError,
)
from kafkapy.log.index import NO_TIMESTAMP, TimestampOffset
from kafkapy.log.log import FetchData, Log, LogAppendInfo
from kafkapy.log.producer_state import AppendOrigin

__all__ = ["READ_COMMITTED", "READ_UNCOMMITTED", "Partition"]

READ_UNCOMMITTED = 0
READ_COMMITTED = 1

LATEST_TIMESTAMP = -1
LATEST_TIERED_TIMESTAMP = -5


class Partition:
    def __init__(self, tp: TopicPartition, topic_id: uuid.UUID, log: Log, node_id: int,
                 leader_epoch: int = 0) -> None:
        self.tp = tp
        self.topic_id = topic_id
        self.log = log
        self.leader_id = node_id
        self.leader_epoch = leader_epoch
        self.replicas = [node_id]
        self.isr = [node_id]
        # Without replicas to wait for, everything in the log is replicated.
        log.update_high_watermark(log.log_end_offset)

    def __repr__(self) -> str:
        return f"Partition({self.tp}, epoch {self.leader_epoch})"

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

    def append_records_to_leader(self, records: memoryview | bytes | bytearray,
                                 required_acks: int,
                                 origin: AppendOrigin = AppendOrigin.CLIENT) -> LogAppendInfo:
        """Kafka's appendRecordsToLeader: min.insync.replicas for acks=all, then the log
        append (offsets, leader epoch), then the high watermark."""
        min_isr = self.log.config.min_insync_replicas
        if required_acks == -1 and len(self.isr) < min_isr:
            raise NotEnoughReplicasError(
                f"{self.tp}: the ISR has {len(self.isr)} replica(s), below "
                f"min.insync.replicas {min_isr}")
        info = self.log.append_as_leader(records, self.leader_epoch, origin)
        self.log.update_high_watermark(self.log.log_end_offset)
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
        bound = None if replica else self.fetch_bound(isolation_level)
        data = self.log.read(fetch_offset, max_bytes, bound, min_one_message)
        if isolation_level == READ_COMMITTED and not replica:
            aborted = self.log.collect_aborted_transactions(
                fetch_offset, self.log.fetch_upper_bound(fetch_offset))
            data = attrs.evolve(data, aborted_transactions=aborted)
        return data

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
        watermark. Raises OffsetOutOfRangeError above the high watermark."""
        if offset == -1:
            offset = self.high_watermark
        if offset < 0:
            raise OffsetOutOfRangeError(f"{self.tp}: cannot delete records before offset "
                                        f"{offset}")
        return self.log.delete_records(offset)
