"""The coordinators' port (:mod:`kafkapy.coordinator.partition_port`) in memory, for unit
tests: no broker, no files, no sleeps.

``MemoryPartitions`` implements ``CoordinatorPartitions``, ``TxnMarkerWriter`` and
``ProducerIdBlocks`` honestly: each partition is a list of record batches with real offsets
(assigned with ``kafkapy.protocol.records.assign_offsets``), its high watermark is its log end
offset, ``read`` returns whole batches, appends to a partition this "broker" does not lead raise
NotLeaderOrFollowerError. Leadership is the test's to drive (``elect`` / ``resign``), and the
registered coordinator hears of it as it would from the broker (``register``, ``start``,
``create_internal_topic``). Failures are injected per partition (``fail_appends``,
``fail_commits``).

Call it from inside ``trio.run`` (``wait_committed`` checkpoints), one task at a time.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

import attrs
import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.partition_port import (
    LeadershipListener,
    TopicInfo,
    TxnCompletionListener,
)
from kafkapy.errors import (
    KafkaError,
    NotLeaderOrFollowerError,
    UnknownTopicOrPartitionError,
)
from kafkapy.protocol.records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    BatchHeader,
    assign_offsets,
    build_control_batch,
    scan_batches,
)

__all__ = ["OFFSETS_TOPIC", "MemoryPartitions"]

OFFSETS_TOPIC = "__consumer_offsets"


@attrs.define
class _Log:
    batches: list[tuple[int, bytes]] = attrs.Factory(list)     # (base offset, batch)
    start: int = 0
    end: int = 0
    leader_epoch: int | None = 0                                # None: not led here


class MemoryPartitions:
    """Every partition of every topic in memory; this broker leads them at epoch 0 unless a
    test says otherwise."""

    def __init__(self, wall_clock_ms: int = 0) -> None:
        self.wall_clock_ms = wall_clock_ms      # the markers' timestamps
        self.configs: dict[str, dict[str, str]] = {}
        self.listeners: dict[str, LeadershipListener] = {}
        self.txn_completion: TxnCompletionListener | None = None
        self.fail_appends: dict[TopicPartition, Exception] = {}
        self.fail_commits: dict[TopicPartition, Exception] = {}
        self.committed: list[tuple[TopicPartition, int]] = []
        self._topics: dict[str, TopicInfo] = {}
        self._logs: dict[TopicPartition, _Log] = {}
        self._next_producer_id = 0

    # ========================================================= the test's controls

    def register(self, topic: str, listener: LeadershipListener) -> None:
        self.listeners[topic] = listener

    def register_txn_completion(self, listener: TxnCompletionListener) -> None:
        self.txn_completion = listener

    def start(self) -> None:
        """The broker's startup: elect the registered coordinators where this broker leads."""
        for topic in self.listeners:
            for tp, log in sorted(self._logs.items()):
                if tp.topic == topic and log.leader_epoch is not None:
                    self.listeners[topic].on_become_leader(tp.partition, log.leader_epoch)

    def create_topic(self, topic: str, partitions: int,
                     configs: Mapping[str, str] | None = None) -> None:
        """A topic, led here at epoch 0; no coordinator is told (see create_internal_topic)."""
        if topic in self._topics:
            raise ValueError(f"{topic} exists")
        self._topics[topic] = TopicInfo(uuid.uuid4(), partitions)
        self.configs[topic] = dict(configs or {})
        for p in range(partitions):
            self._logs[TopicPartition(topic, p)] = _Log()

    def elect(self, tp: TopicPartition, leader_epoch: int) -> None:
        """This broker becomes the leader of ``tp`` at ``leader_epoch``; its coordinator is
        told."""
        self._log(tp).leader_epoch = leader_epoch
        listener = self.listeners.get(tp.topic)
        if listener is not None:
            listener.on_become_leader(tp.partition, leader_epoch)

    def resign(self, tp: TopicPartition) -> None:
        """This broker stops leading ``tp``; its coordinator is told."""
        log = self._log(tp)
        epoch, log.leader_epoch = log.leader_epoch, None
        listener = self.listeners.get(tp.topic)
        if listener is not None:
            listener.on_resign(tp.partition, epoch)

    def delete_records(self, tp: TopicPartition, offset: int) -> None:
        """DeleteRecords: the log starts at ``offset``; whole batches below it go."""
        log = self._log(tp)
        log.start = offset
        log.batches = [(base, b) for base, b in log.batches
                       if scan_batches(b).batches[0].next_offset > offset]

    def batches(self, tp: TopicPartition) -> list[BatchHeader]:
        """Every batch of ``tp``, decoded."""
        return [h for _base, b in self._log(tp).batches for h in scan_batches(b).batches]

    # ====================================================== CoordinatorPartitions

    def topics(self) -> Mapping[str, TopicInfo]:
        return dict(self._topics)

    def create_internal_topic(self, topic: str, partitions: int, replication_factor: int,
                              configs: Mapping[str, str]) -> None:
        if topic in self._topics:
            return
        self.create_topic(topic, partitions, configs)
        listener = self.listeners.get(topic)
        if listener is not None:
            for p in range(partitions):
                listener.on_become_leader(p, 0)

    def leader_epoch(self, tp: TopicPartition) -> int | None:
        log = self._logs.get(tp)
        return None if log is None else log.leader_epoch

    def append(self, tp: TopicPartition, batch: bytes) -> int:
        log = self._leader_log(tp)
        failure = self.fail_appends.get(tp)
        if failure is not None:
            raise failure
        buf = bytearray(batch)
        result = assign_offsets(buf, log.end, partition_leader_epoch=log.leader_epoch)
        log.batches.append((log.end, bytes(buf)))
        log.end = result.next_offset
        return log.end

    async def wait_committed(self, tp: TopicPartition, end_offset: int) -> None:
        await trio.lowlevel.checkpoint()
        self._leader_log(tp)
        failure = self.fail_commits.get(tp)
        if failure is not None:
            raise failure
        self.committed.append((tp, end_offset))

    def log_start_offset(self, tp: TopicPartition) -> int:
        return self._log(tp).start

    def log_end_offset(self, tp: TopicPartition) -> int:
        return self._log(tp).end

    def read(self, tp: TopicPartition, offset: int, max_bytes: int) -> bytes:
        out = bytearray()
        for _base, batch in self._log(tp).batches:
            if scan_batches(batch).batches[0].next_offset <= offset:
                continue
            if out and len(out) + len(batch) > max_bytes:
                break
            out += batch
        return bytes(out)

    # ============================================================ TxnMarkerWriter

    async def write_txn_markers(self, producer_id: int, producer_epoch: int, commit: bool,
                                coordinator_epoch: int, partitions: Iterable[TopicPartition]
                                ) -> dict[TopicPartition, KafkaError | None]:
        results: dict[TopicPartition, KafkaError | None] = {}
        offsets_partitions: set[int] = set()
        for tp in partitions:
            batch = build_control_batch(CONTROL_COMMIT if commit else CONTROL_ABORT,
                                        coordinator_epoch, producer_id=producer_id,
                                        producer_epoch=producer_epoch,
                                        timestamp_ms=self.wall_clock_ms)
            try:
                end = self.append(tp, batch)
                await self.wait_committed(tp, end)
            except KafkaError as e:
                results[tp] = e
                continue
            results[tp] = None
            if tp.topic == OFFSETS_TOPIC:
                offsets_partitions.add(tp.partition)
        if offsets_partitions and self.txn_completion is not None:
            self.txn_completion.on_txn_completed(producer_id, offsets_partitions, commit)
        return results

    # =========================================================== ProducerIdBlocks

    def allocate_producer_id_block(self, block_size: int) -> int:
        first = self._next_producer_id
        self._next_producer_id += block_size
        return first

    # ==================================================================== helpers

    def _log(self, tp: TopicPartition) -> _Log:
        log = self._logs.get(tp)
        if log is None:
            raise UnknownTopicOrPartitionError(f"no partition {tp}")
        return log

    def _leader_log(self, tp: TopicPartition) -> _Log:
        log = self._log(tp)
        if log.leader_epoch is None:
            raise NotLeaderOrFollowerError(f"this broker does not lead {tp}")
        return log
