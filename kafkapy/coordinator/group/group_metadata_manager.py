"""GroupMetadataManager: the groups' durable state in the internal topic ``__consumer_offsets``.

Kafka's ``GroupMetadataManager`` for one broker that leads every partition of the topic:

- the topic is created (compacted, ``offsets.topic.num.partitions`` partitions,
  ``offsets.topic.segment.bytes``) the first time a group needs it;
- a group lives in partition ``abs(javaHash(group id)) % partitions`` (Kafka's
  ``partitionFor``), so its records stay in order in one log;
- offset commits, group metadata (after each rebalance), KIP-848 consumer groups' records
  (written by :mod:`~kafkapy.coordinator.group.consumer_group_coordinator` as their state changes)
  and
  their tombstones are appended as leader with acks=all semantics (see
  :mod:`kafkapy.coordinator.group.records` for the formats); an append either succeeds
  before the request is answered or the request gets the error Kafka maps it to;
- at startup each partition is read back from the log start to the high watermark in the
  background (later records win, null values delete), while requests for its groups get
  COORDINATOR_LOAD_IN_PROGRESS; a partition's classic groups go to the coordinator, its
  consumer groups (replayed into ``StoredConsumerGroup``) to ``ConsumerGroupCoordinator.load``;
- every ``offsets.retention.check.interval.ms`` offsets expire (KIP-211): those of an Empty
  group ``offsets.retention.minutes`` after the group became empty (or after the commit, if
  later), those of topics a consumer group no longer subscribes to that long after the
  commit, and any with an explicit expire timestamp (OffsetCommit v1-4) once it passes; an
  Empty group left without offsets is removed (a tombstone).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group.classic_group import ClassicGroup, GroupState
from kafkapy.coordinator.group.consumer_group_coordinator import StoredConsumerGroup
from kafkapy.coordinator.group.records import (
    ConsumerGroupKey,
    GroupKey,
    OffsetAndMetadata,
    OffsetKey,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    read_group_value,
    read_key,
    read_offset_value,
)
from kafkapy.coordinator.internal_topic import (
    append_records,
    flush_if_due,
    partition_for,
    read_batches,
)
from kafkapy.errors import (
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    InvalidCommitOffsetSizeError,
    KafkaError,
    KafkaStorageError,
    MessageTooLargeError,
    NotCoordinatorError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    RecordListTooLargeError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from kafkapy.protocol.records import decode_control_record

if TYPE_CHECKING:
    from kafkapy.coordinator.group.group_coordinator import GroupCoordinator
    from kafkapy.server.partition import Partition

__all__ = ["OFFSETS_TOPIC", "GroupMetadataManager"]

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"


def _now_ms() -> int:
    return int(time.time() * 1000)


# Kafka's GroupMetadataManager.storeGroup / storeOffsets error mapping.
_COORDINATOR_GONE = (UnknownTopicOrPartitionError, NotEnoughReplicasError)
_NOT_COORDINATOR = (NotLeaderOrFollowerError, KafkaStorageError)
_TOO_LARGE = (MessageTooLargeError, RecordListTooLargeError)


class GroupMetadataManager:
    def __init__(self, coordinator: GroupCoordinator) -> None:
        self.coordinator = coordinator
        self.server = coordinator.server
        self.loading: set[int] = set()
        self._end_offsets: dict[int, int] = {}      # partition -> log end after our append

    # ================================================================ partitions

    @property
    def num_partitions(self) -> int:
        record = self.server.metadata_store.topics.get(OFFSETS_TOPIC)
        if record is not None:
            return record.partitions
        return self.server.config.offsets_topic_num_partitions

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def ensure_topic(self) -> None:
        """Create ``__consumer_offsets`` if it does not exist (Kafka creates it on the first
        FindCoordinator for a group)."""
        if OFFSETS_TOPIC in self.server.metadata_store.topics:
            return
        cfg = self.server.config
        self.server.admin.create_topic(
            OFFSETS_TOPIC, cfg.offsets_topic_num_partitions, -1,
            configs={"cleanup.policy": "compact",
                     "segment.bytes": str(cfg.offsets_topic_segment_bytes),
                     "compression.type": "producer"})

    def check_loaded(self, group_id: str) -> None:
        if self.loading and self.partition_for(group_id) in self.loading:
            raise CoordinatorLoadInProgressError(
                f"the coordinator is loading the offsets and groups of partition "
                f"{self.partition_for(group_id)}")

    def is_loaded(self, group_id: str) -> bool:
        return not self.loading or self.partition_for(group_id) not in self.loading

    def _partition(self, group_id: str) -> Partition:
        self.ensure_topic()
        return self.server.replica_manager.get_partition(
            TopicPartition(OFFSETS_TOPIC, self.partition_for(group_id)))

    # ==================================================================== writes

    def _append(self, group_id: str, records: Sequence[tuple[bytes, bytes | None]],
                producer_id: int = -1, producer_epoch: int = -1) -> None:
        """Append ``records`` (key, value) as one batch to the group's partition; with a
        producer id, as a transactional batch of that producer (TxnOffsetCommit)."""
        tp = self._partition(group_id).tp
        self._end_offsets[tp.partition] = append_records(
            self.server.coordinator_partitions, tp, records, _now_ms(), producer_id,
            producer_epoch)

    def store_group(self, group: ClassicGroup, assignments: dict[str, bytes] | None = None
                    ) -> None:
        """Write the group's metadata (after a rebalance). Raises the KafkaError Kafka
        answers a failed write with."""
        value = group_metadata_value(group.to_record(assignments))
        try:
            self._append(group.group_id, [(group_metadata_key(group.group_id), value)])
        except KafkaError as e:
            raise _group_error(e) from e

    def store_consumer_group_records(self, group_id: str,
                                     records: Sequence[tuple[bytes, bytes | None]]) -> None:
        """Write a consumer group's records (and tombstones) as one batch. Raises the
        KafkaError Kafka answers a failed group write with."""
        try:
            self._append(group_id, records)
        except KafkaError as e:
            raise _group_error(e) from e

    def store_offsets(self, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata],
                      producer_id: int = -1, producer_epoch: int = -1) -> int:
        """Write offset commits (with a producer id: a transaction's, pending until its
        marker); the error code for every partition (0 on success)."""
        records = [(offset_commit_key(group_id, tp.topic, tp.partition),
                    offset_commit_value(om)) for tp, om in offsets.items()]
        try:
            self._append(group_id, records, producer_id, producer_epoch)
        except KafkaError as e:
            if isinstance(e, _COORDINATOR_GONE):
                return CoordinatorNotAvailableError.code
            if isinstance(e, _NOT_COORDINATOR):
                return NotCoordinatorError.code
            if isinstance(e, _TOO_LARGE):
                return InvalidCommitOffsetSizeError.code
            return e.code
        return 0

    def delete_offsets(self, group_id: str, tps: Iterable[TopicPartition]) -> None:
        records: list[tuple[bytes, bytes | None]] = [
            (offset_commit_key(group_id, tp.topic, tp.partition), None) for tp in tps]
        if records:
            self._append(group_id, records)

    def delete_group(self, group: ClassicGroup) -> None:
        """Tombstones for every offset of ``group`` and for its metadata."""
        records: list[tuple[bytes, bytes | None]] = [
            (offset_commit_key(group.group_id, tp.topic, tp.partition), None)
            for tp in group.offsets]
        records.append((group_metadata_key(group.group_id), None))
        self._append(group.group_id, records)

    async def flush_if_due(self, group_id: str) -> None:
        """The log's flush policy (flush.messages / flush.ms) after a write, before the
        answer."""
        p = self.partition_for(group_id)
        await flush_if_due(self.server.coordinator_partitions, TopicPartition(OFFSETS_TOPIC, p),
                           self._end_offsets.get(p, 0))

    # ================================================================== loading

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Load every existing partition, then expire offsets periodically."""
        record = self.server.metadata_store.topics.get(OFFSETS_TOPIC)
        if record is not None:
            self.loading = set(range(record.partitions))
        task_status.started()
        if record is not None:
            started = time.monotonic()
            for p in range(record.partitions):
                try:
                    await self._load_partition(p)
                finally:
                    self.loading.discard(p)
            log.info("Loaded %d group(s) from %d partition(s) of %s in %.0f ms",
                     len(self.coordinator.groups), record.partitions, OFFSETS_TOPIC,
                     (time.monotonic() - started) * 1000)
        interval = self.server.config.offsets_retention_check_interval_ms / 1000
        while True:
            await trio.sleep(interval)
            try:
                self.expire_offsets(_now_ms())
            except Exception:
                log.exception("Expiring offsets failed")

    async def _load_partition(self, p: int) -> None:
        tp = TopicPartition(OFFSETS_TOPIC, p)
        partition = self.server.replica_manager.partitions.get(tp)
        if partition is None:
            return
        offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
        groups: dict[str, object] = {}
        consumer_groups: dict[str, StoredConsumerGroup] = {}
        # Transactional offset commits wait for their producer's marker: COMMIT applies
        # them, ABORT drops them; those still open at the end stay pending.
        in_txn: dict[int, list[tuple[bytes, bytes | None]]] = {}
        start = partition.log_start_offset
        async for batch in read_batches(self.server.coordinator_partitions, tp):
            if batch.is_control:
                marker = decode_control_record(batch.records()[0])
                done = in_txn.pop(batch.producer_id, [])
                if marker.type == 1:        # COMMIT
                    for txn_key, txn_value in done:
                        self._apply(tp, txn_key, txn_value, offsets, groups, consumer_groups)
                continue
            for r in batch.records():
                if r.key is None or r.offset < start:
                    continue
                if batch.is_transactional:
                    in_txn.setdefault(batch.producer_id, []).append((r.key, r.value))
                else:
                    self._apply(tp, r.key, r.value, offsets, groups, consumer_groups)
        now = _now_ms()
        for group_id in set(offsets) | set(groups):
            value = groups.get(group_id)
            if value is not None:
                group = ClassicGroup.from_record(group_id, value, now)  # type: ignore[arg-type]
            else:
                group = ClassicGroup(group_id, state_timestamp_ms=now)
            group.offsets = offsets.get(group_id, {})
            if not group.members and not group.offsets and value is None:
                continue
            self.coordinator.on_group_loaded(group)
        for stored in consumer_groups.values():
            self.coordinator.consumer_groups.load(stored)
        for producer_id, records in in_txn.items():
            pending: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
            for txn_key, txn_value in records:
                k = read_key(txn_key)
                if isinstance(k, OffsetKey) and txn_value is not None:
                    pending.setdefault(k.group, {})[TopicPartition(k.topic, k.partition)] = \
                        read_offset_value(txn_value)
            for group_id, group_offsets in pending.items():
                self.coordinator.add_pending_txn_offsets(group_id, producer_id, group_offsets)

    @staticmethod
    def _apply(tp: TopicPartition, key: bytes, value: bytes | None,
               offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]],
               groups: dict[str, object],
               consumer_groups: dict[str, StoredConsumerGroup]) -> None:
        try:
            k = read_key(key)
            if isinstance(k, OffsetKey):
                target = TopicPartition(k.topic, k.partition)
                if value is None:
                    offsets.get(k.group, {}).pop(target, None)
                else:
                    offsets.setdefault(k.group, {})[target] = read_offset_value(value)
            elif isinstance(k, GroupKey):
                if value is None:
                    groups.pop(k.group, None)
                else:
                    groups[k.group] = read_group_value(value)
            elif isinstance(k, ConsumerGroupKey):
                stored = consumer_groups.get(k.group)
                if stored is None:
                    stored = consumer_groups[k.group] = StoredConsumerGroup(k.group)
                stored.replay(k.record_type, k.member_id, value)
            else:
                log.debug("%s: skipping a record of unknown key version %d", tp, k.version)
        except KafkaError as e:
            log.error("%s: skipping an unreadable record: %s", tp, e)

    # ================================================================== expiry

    def expire_offsets(self, now_ms: int) -> int:
        """Kafka's cleanupGroupMetadata: expire offsets, remove empty groups left without
        offsets. Returns how many offsets expired."""
        retention_ms = self.server.config.offsets_retention_minutes * 60_000
        expired_total = 0
        for group in list(self.coordinator.groups.values()):
            if not self.is_loaded(group.group_id):
                continue
            expired = self._expired_offsets(group, now_ms, retention_ms)
            if expired:
                try:
                    self.delete_offsets(group.group_id, expired)
                except KafkaError as e:
                    log.warning("Could not expire offsets of group %s: %s", group.group_id, e)
                    continue
                for tp in expired:
                    group.offsets.pop(tp, None)
                expired_total += len(expired)
            if group.is_state(GroupState.EMPTY) and not group.offsets and \
                    not group.pending_members:
                try:
                    self._append(group.group_id, [(group_metadata_key(group.group_id), None)])
                except KafkaError as e:
                    log.warning("Could not remove group %s: %s", group.group_id, e)
                    continue
                self.coordinator.on_group_expired(group)
                log.info("Group %s expired: it was empty and had no offsets left",
                         group.group_id)
        if expired_total:
            log.info("Removed %d expired offset(s)", expired_total)
        return expired_total

    def _expired_offsets(self, group: ClassicGroup, now_ms: int, retention_ms: int
                         ) -> list[TopicPartition]:
        if group.is_state(GroupState.EMPTY):
            candidates = dict(group.offsets)
            base_state = group.state_timestamp_ms
        elif group.protocol_type == "consumer" and group.protocol_name is not None and \
                group.is_state(GroupState.STABLE):
            from kafkapy.coordinator.group.group_coordinator import subscribed_topics
            subscribed: set[str] = set()
            for m in group.members.values():
                try:
                    subscribed.update(subscribed_topics(m.metadata(group.protocol_name)))
                except Exception:
                    return []        # cannot tell what the group uses: keep everything
            candidates = {tp: om for tp, om in group.offsets.items()
                          if tp.topic not in subscribed}
            base_state = -1
        else:
            return []
        out = []
        for tp, om in candidates.items():
            if om.expire_timestamp_ms >= 0:
                if now_ms >= om.expire_timestamp_ms:
                    out.append(tp)
                continue
            base = max(base_state, om.commit_timestamp_ms) if base_state >= 0 else \
                om.commit_timestamp_ms
            if now_ms - base >= retention_ms:
                out.append(tp)
        return out


def _group_error(e: KafkaError) -> KafkaError:
    if isinstance(e, _COORDINATOR_GONE):
        return CoordinatorNotAvailableError(str(e))
    if isinstance(e, _NOT_COORDINATOR):
        return NotCoordinatorError(str(e))
    if isinstance(e, _TOO_LARGE):
        return UnknownServerError(str(e))
    return e
