"""GroupMetadataManager: the groups' durable state in the internal topic ``__consumer_offsets``.

Kafka's ``GroupMetadataManager``, over the coordinators' port
(:class:`~kafkapy.coordinator.partition_port.CoordinatorPartitions`):

- the topic is created (compacted, ``offsets.topic.num.partitions`` partitions,
  ``offsets.topic.segment.bytes``) the first time a group needs it;
- a group lives in partition ``abs(javaHash(group id)) % partitions`` (Kafka's
  ``partitionFor``), so its records stay in order in one log;
- offset commits, group metadata (after each rebalance), KIP-848 consumer groups' records
  (written by :mod:`~kafkapy.coordinator.group.consumer_group_coordinator` as their state
  changes) and their tombstones are appended as leader (see
  :mod:`kafkapy.coordinator.group.records` for the formats); an append either succeeds before
  the request is answered or the request gets the error Kafka maps it to, and the handler
  awaits ``flush_if_due`` (the append committed) before it answers;
- a partition's groups are here only while this broker leads it. ``on_become_leader(p,
  epoch)`` (the broker, at startup, when it creates the topic or gains leadership) loads the
  partition from the log start to the log end in the background (later records win,
  null values delete) while requests for its groups get COORDINATOR_LOAD_IN_PROGRESS; an empty
  partition is loaded at once. Its classic groups go to the coordinator, its consumer groups
  (replayed into ``StoredConsumerGroup``) to ``ConsumerGroupCoordinator.load``.
  ``on_resign(p, epoch)`` unloads them (the coordinator's ``on_partition_unloaded``); from
  then on, and for a partition never loaded, requests answer NOT_COORDINATOR. A newer epoch
  reloads; an older one than the last seen is ignored, and a load overtaken by a resignation
  or a newer election is dropped when it ends. Until the topic exists no partition is led and
  every group is empty: requests are served, and the first write creates the topic;
- every ``offsets.retention.check.interval.ms`` offsets expire (KIP-211): those of an Empty
  group ``offsets.retention.minutes`` after the group became empty (or after the commit, if
  later), those of topics a consumer group no longer subscribes to that long after the
  commit, and any with an explicit expire timestamp (OffsetCommit v1-4) once it passes; an
  Empty group left without offsets is removed (a tombstone).

Everything runs on the broker's Trio loop; loads run in the manager's nursery (``run``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs
import trio

from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig
from kafkapy.coordinator.group.classic_group import ClassicGroup, GroupState, subscribed_topics
from kafkapy.coordinator.group.consumer_group_coordinator import StoredConsumerGroup
from kafkapy.coordinator.group.records import (
    ConsumerGroupKey,
    GroupKey,
    GroupMetadataRecord,
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
from kafkapy.coordinator.partition_port import CoordinatorPartitions
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

__all__ = ["OFFSETS_TOPIC", "GroupMetadataManager"]

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"

# Kafka's GroupMetadataManager.storeGroup / storeOffsets error mapping.
_COORDINATOR_GONE = (UnknownTopicOrPartitionError, NotEnoughReplicasError)
_NOT_COORDINATOR = (NotLeaderOrFollowerError, KafkaStorageError)
_TOO_LARGE = (MessageTooLargeError, RecordListTooLargeError)


@attrs.define
class _LoadedPartition:
    """What one partition's log holds, read back before any of it is applied."""

    offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = attrs.Factory(dict)
    groups: dict[str, GroupMetadataRecord] = attrs.Factory(dict)
    consumer_groups: dict[str, StoredConsumerGroup] = attrs.Factory(dict)
    # producer id -> (key, value) of its transactional batches without a marker yet
    in_txn: dict[int, list[tuple[bytes, bytes | None]]] = attrs.Factory(dict)


class GroupMetadataManager:
    def __init__(self, coordinator: GroupCoordinator, partitions: CoordinatorPartitions,
                 config: Callable[[], BrokerConfig], time: Time) -> None:
        self.coordinator = coordinator
        self.partitions = partitions
        self._config = config
        self._time = time
        self.loading: set[int] = set()
        self.loaded: set[int] = set()
        self._epochs: dict[int, int] = {}           # partition -> latest leader epoch seen
        # partition -> the load (or unload) that is current: a load that ends and finds
        # another one here was overtaken and applies nothing.
        self._load_tokens: dict[int, object] = {}
        self._end_offsets: dict[int, int] = {}      # partition -> log end after our append
        self._nursery: trio.Nursery | None = None
        self._partition_count: int | None = None
        self._queued_loads: list[tuple[int, object]] = []     # asked for before run()

    # ================================================================ partitions

    def _topic_partitions(self) -> int | None:
        """The topic's partition count; None while it does not exist. Read once it does
        (Kafka's groupMetadataTopicPartitionCount): a request asks for it, and the broker's
        topic map is not rebuilt for every request."""
        if self._partition_count is None:
            info = self.partitions.topics().get(OFFSETS_TOPIC)
            if info is not None:
                self._partition_count = info.partitions
        return self._partition_count

    @property
    def num_partitions(self) -> int:
        count = self._topic_partitions()
        return self._config().offsets_topic_num_partitions if count is None else count

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def _tp(self, group_id: str) -> TopicPartition:
        return TopicPartition(OFFSETS_TOPIC, self.partition_for(group_id))

    def ensure_topic(self) -> None:
        """Create ``__consumer_offsets`` if it does not exist (Kafka creates it on the first
        FindCoordinator for a group); the broker then makes this coordinator the leader of
        its partitions, which load at once (they are empty)."""
        if self._topic_partitions() is not None:
            return
        cfg = self._config()
        self.partitions.create_internal_topic(
            OFFSETS_TOPIC, cfg.offsets_topic_num_partitions, -1,
            {"cleanup.policy": "compact",
             "segment.bytes": str(cfg.offsets_topic_segment_bytes),
             "compression.type": "producer"})

    def check_loaded(self, group_id: str) -> None:
        """Raise COORDINATOR_LOAD_IN_PROGRESS while the group's partition loads,
        NOT_COORDINATOR when this broker does not lead it."""
        if self._topic_partitions() is None:
            return
        p = self.partition_for(group_id)
        if p in self.loading:
            raise CoordinatorLoadInProgressError(
                f"the coordinator is loading the offsets and groups of partition {p}")
        if p not in self.loaded:
            raise NotCoordinatorError(f"this broker does not lead {OFFSETS_TOPIC}-{p}")

    def is_loaded(self, group_id: str) -> bool:
        return self._topic_partitions() is None or self.partition_for(group_id) in self.loaded

    # ==================================================================== writes

    def _append(self, group_id: str, records: Sequence[tuple[bytes, bytes | None]],
                producer_id: int = -1, producer_epoch: int = -1) -> None:
        """Append ``records`` (key, value) as one batch to the group's partition; with a
        producer id, as a transactional batch of that producer (TxnOffsetCommit)."""
        self.ensure_topic()
        tp = self._tp(group_id)
        self._end_offsets[tp.partition] = append_records(
            self.partitions, tp, records, self._time.milliseconds(), producer_id,
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
        """Wait until what was appended to the group's partition is committed (the log's
        flush policy), before the answer."""
        if self._topic_partitions() is None:
            return
        tp = self._tp(group_id)
        await flush_if_due(self.partitions, tp, self._end_offsets.get(tp.partition, 0))

    # ======================================================= leadership and loading

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """The loads' nursery; expires offsets periodically. Runs until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            for p, token in self._queued_loads:
                nursery.start_soon(self._load, p, token)
            self._queued_loads.clear()
            task_status.started()
            try:
                while True:
                    await trio.sleep(self._config().offsets_retention_check_interval_ms / 1000)
                    try:
                        self.expire_offsets(self._time.milliseconds())
                    except Exception:
                        log.exception("Expiring offsets failed")
            finally:
                self._nursery = None

    def on_become_leader(self, partition: int, leader_epoch: int) -> None:
        """This broker leads ``partition`` at ``leader_epoch``: load its groups (at once if
        it is empty, else in the background)."""
        current = self._epochs.get(partition)
        if current is not None and leader_epoch < current:
            log.info("Ignoring the election for %s-%d at epoch %d: epoch %d is newer",
                     OFFSETS_TOPIC, partition, leader_epoch, current)
            return
        owned = partition in self.loaded or partition in self.loading
        if owned and leader_epoch == current:
            return
        if owned:
            self._unload(partition)
        self._epochs[partition] = leader_epoch
        token = self._load_tokens[partition] = object()
        tp = TopicPartition(OFFSETS_TOPIC, partition)
        if self.partitions.log_end_offset(tp) <= self.partitions.log_start_offset(tp):
            self.loaded.add(partition)
            return
        self.loading.add(partition)
        if self._nursery is None:
            self._queued_loads.append((partition, token))
        else:
            self._nursery.start_soon(self._load, partition, token)

    def on_resign(self, partition: int, leader_epoch: int | None) -> None:
        """This broker no longer leads ``partition``: unload its groups."""
        current = self._epochs.get(partition)
        if leader_epoch is not None and current is not None and leader_epoch < current:
            log.info("Ignoring the resignation of %s-%d at epoch %d: epoch %d is newer",
                     OFFSETS_TOPIC, partition, leader_epoch, current)
            return
        if leader_epoch is not None:
            self._epochs[partition] = leader_epoch
        self._unload(partition)
        if OFFSETS_TOPIC not in self.partitions.topics():
            # The topic was deleted: the next FindCoordinator creates it again, maybe with
            # another partition count.
            self._partition_count = None

    def _unload(self, partition: int) -> None:
        self._load_tokens[partition] = object()
        self.loading.discard(partition)
        self.loaded.discard(partition)
        self._end_offsets.pop(partition, None)
        self.coordinator.on_partition_unloaded(partition)

    async def _load(self, p: int, token: object) -> None:
        started = self._time.monotonic()
        try:
            state = await self._read_partition(p)
        except Exception:
            log.exception("Loading %s-%d failed", OFFSETS_TOPIC, p)
            if self._load_tokens.get(p) is token:
                self.loading.discard(p)        # not the coordinator of its groups then
            return
        if self._load_tokens.get(p) is not token:
            return                              # resigned or re-elected meanwhile
        self.loading.discard(p)
        self.loaded.add(p)
        groups = self._apply_loaded(state)
        log.info("Loaded %d group(s) from %s-%d in %.0f ms", groups, OFFSETS_TOPIC, p,
                 (self._time.monotonic() - started) * 1000)

    async def _read_partition(self, p: int) -> _LoadedPartition:
        tp = TopicPartition(OFFSETS_TOPIC, p)
        state = _LoadedPartition()
        # Transactional offset commits wait for their producer's marker: COMMIT applies
        # them, ABORT drops them; those still open at the end stay pending.
        in_txn = state.in_txn
        start = self.partitions.log_start_offset(tp)
        async for batch in read_batches(self.partitions, tp):
            if batch.is_control:
                marker = decode_control_record(batch.records()[0])
                done = in_txn.pop(batch.producer_id, [])
                if marker.type == 1:        # COMMIT
                    for txn_key, txn_value in done:
                        self._apply(tp, txn_key, txn_value, state)
                continue
            for r in batch.records():
                if r.key is None or r.offset < start:
                    continue
                if batch.is_transactional:
                    in_txn.setdefault(batch.producer_id, []).append((r.key, r.value))
                else:
                    self._apply(tp, r.key, r.value, state)
        return state

    def _apply_loaded(self, state: _LoadedPartition) -> int:
        """Hand a partition's groups to the coordinator; how many there were."""
        now = self._time.milliseconds()
        count = 0
        for group_id in set(state.offsets) | set(state.groups):
            value = state.groups.get(group_id)
            if value is not None:
                group = ClassicGroup.from_record(group_id, value, now)
            else:
                group = ClassicGroup(group_id, state_timestamp_ms=now)
            group.offsets = state.offsets.get(group_id, {})
            if not group.members and not group.offsets and value is None:
                continue
            self.coordinator.on_group_loaded(group)
            count += 1
        for stored in state.consumer_groups.values():
            if self.coordinator.consumer_groups.load(stored) is not None:
                count += 1
        for producer_id, records in state.in_txn.items():
            pending: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
            for txn_key, txn_value in records:
                k = read_key(txn_key)
                if isinstance(k, OffsetKey) and txn_value is not None:
                    pending.setdefault(k.group, {})[TopicPartition(k.topic, k.partition)] = \
                        read_offset_value(txn_value)
            for group_id, group_offsets in pending.items():
                self.coordinator.add_pending_txn_offsets(group_id, producer_id, group_offsets)
        return count

    @staticmethod
    def _apply(tp: TopicPartition, key: bytes, value: bytes | None,
               state: _LoadedPartition) -> None:
        offsets, groups, consumer_groups = state.offsets, state.groups, state.consumer_groups
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
        retention_ms = self._config().offsets_retention_minutes * 60_000
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
