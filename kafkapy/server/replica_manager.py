"""ReplicaManager: the partitions this broker hosts, and appends and reads across them.

Kafka's ``kafka.server.ReplicaManager``: ``append_records`` (Produce) appends to each
partition's leader log, answers acks=0/1 at once and parks acks=all as a ``DelayedProduce``
until the high watermark covers the appended offsets; ``fetch_messages`` (Fetch) reads every
partition with the response-wide and per-partition byte limits and parks the fetch as a
``DelayedFetch`` while it has fewer than ``fetch.min.bytes``, until an append to one of its
partitions (``check_and_complete``) or its max wait.

Per-partition errors are results, never exceptions: one bad partition does not fail the others
(Kafka's ``LogAppendResult`` / ``LogReadResult`` with an error).

Everything runs on the broker's event loop. The only awaits are the delayed operations and the
flush that ``flush.messages`` may ask for after an append (fsync in a worker thread).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Sequence

import attrs
import trio

from kafkapy.common.purgatory import DelayedOperationPurgatory
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidRequiredAcksError,
    KafkaError,
    KafkaStorageError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from kafkapy.log.log import FetchData
from kafkapy.log.log_manager import LogManager
from kafkapy.server.delayed_fetch import DelayedFetch
from kafkapy.server.delayed_produce import DelayedProduce
from kafkapy.server.partition import Partition

__all__ = [
    "FetchParams",
    "FetchPartitionRequest",
    "FetchPartitionResult",
    "ProducePartitionResult",
    "ReplicaManager",
]

log = logging.getLogger(__name__)


@attrs.define
class ProducePartitionResult:
    """One partition's produce outcome (Kafka's PartitionResponse)."""

    error: KafkaError | None = None
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    last_offset: int = -1


@attrs.frozen
class FetchParams:
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    replica_id: int = -1


@attrs.frozen
class FetchPartitionRequest:
    tp: TopicPartition
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1


@attrs.define
class FetchPartitionResult:
    """One partition's read (Kafka's LogReadResult): ``data`` None on error."""

    error: KafkaError | None
    data: FetchData | None
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1

    @property
    def size(self) -> int:
        return 0 if self.data is None else self.data.size


def _as_kafka_error(tp: TopicPartition, exc: Exception) -> KafkaError:
    if isinstance(exc, KafkaError):
        return exc
    if isinstance(exc, OSError):
        log.error("%s: storage error: %s", tp, exc)
        return KafkaStorageError(f"{tp}: {exc}")
    log.error("%s: unexpected error", tp, exc_info=exc)
    return UnknownServerError(f"{tp}: {type(exc).__name__}: {exc}")


class ReplicaManager:
    """The hosted partitions. ``KafkaServer`` makes this broker the leader of each partition
    of each topic (``make_leader``) and removes them when topics are deleted."""

    def __init__(self, node_id: int, log_manager: LogManager) -> None:
        self.node_id = node_id
        self.log_manager = log_manager
        self.partitions: dict[TopicPartition, Partition] = {}
        self.produce_purgatory: DelayedOperationPurgatory[DelayedProduce] = \
            DelayedOperationPurgatory("Produce")
        self.fetch_purgatory: DelayedOperationPurgatory[DelayedFetch] = \
            DelayedOperationPurgatory("Fetch")

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """The purgatories' expiration reapers; runs until cancelled."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.produce_purgatory.run)
            await nursery.start(self.fetch_purgatory.run)
            task_status.started()

    def shutdown(self) -> None:
        """Complete every parked operation (their requests get answered) and stop the
        reapers."""
        self.produce_purgatory.shutdown()
        self.fetch_purgatory.shutdown()

    # ================================================================== partitions

    def make_leader(self, tp: TopicPartition, topic_id: uuid.UUID, leader_epoch: int = 0
                    ) -> Partition:
        partition = self.partitions.get(tp)
        if partition is None:
            log_ = self.log_manager.get_or_create_log(tp, topic_id)
            partition = Partition(tp, topic_id, log_, self.node_id, leader_epoch)
            self.partitions[tp] = partition
        return partition

    def remove_partitions(self, tps: Iterable[TopicPartition]) -> None:
        """Stop hosting ``tps`` and delete their logs (DeleteTopics). Parked operations on
        them complete (with errors for these partitions)."""
        for tp in tps:
            if self.partitions.pop(tp, None) is not None:
                self.log_manager.delete_log(tp)
            self.fetch_purgatory.check_and_complete(tp)
            self.produce_purgatory.check_and_complete(tp)

    def get_partition(self, tp: TopicPartition) -> Partition:
        """Raises UnknownTopicOrPartitionError if this broker does not host ``tp``."""
        partition = self.partitions.get(tp)
        if partition is None:
            raise UnknownTopicOrPartitionError(f"this server does not host {tp}")
        return partition

    # ===================================================================== produce

    async def append_records(self, timeout_ms: int, required_acks: int,
                             entries: dict[TopicPartition, memoryview | bytes | bytearray]
                             ) -> tuple[dict[TopicPartition, ProducePartitionResult],
                                        DelayedProduce | None]:
        """Append each partition's records as leader. Returns the results and, for acks=all
        while the high watermark is short of an append, the parked DelayedProduce: the caller
        awaits its ``wait()`` (in its own task, not a handler's), which fills in the results.

        Raises InvalidRequiredAcksError for acks outside {-1, 0, 1} (Kafka answers every
        partition with INVALID_REQUIRED_ACKS then; the handler does that).
        """
        if required_acks not in (-1, 0, 1):
            raise InvalidRequiredAcksError(f"acks must be -1, 0 or 1, not {required_acks}")
        results: dict[TopicPartition, ProducePartitionResult] = {}
        appended: list[Partition] = []
        for tp, records in entries.items():
            result = ProducePartitionResult()
            results[tp] = result
            try:
                partition = self.get_partition(tp)
                info = partition.append_records_to_leader(records, required_acks)
            except Exception as exc:
                result.error = _as_kafka_error(tp, exc)
                continue
            result.base_offset = info.first_offset
            result.last_offset = info.last_offset
            result.log_append_time = info.log_append_time
            result.log_start_offset = info.log_start_offset
            if info.last_offset >= 0:
                appended.append(partition)
        for partition in appended:
            # flush.messages / flush.ms: fsync before the acknowledgement when due.
            try:
                await self.log_manager.maybe_flush(partition.log)
            except OSError as exc:
                results[partition.tp].error = _as_kafka_error(partition.tp, exc)
            self.fetch_purgatory.check_and_complete(partition.tp)
            self.produce_purgatory.check_and_complete(partition.tp)
        if required_acks == -1 and appended:
            op = DelayedProduce(timeout_ms, self, results)
            if not self.produce_purgatory.try_complete_else_watch(
                    op, [p.tp for p in appended]):
                return results, op
        return results, None

    # ======================================================================= fetch

    def read_from_log(self, params: FetchParams, requests: Sequence[FetchPartitionRequest]
                      ) -> list[tuple[TopicPartition, FetchPartitionResult]]:
        """Kafka's readFromLog: partitions in request order, each limited by its own max bytes
        and by what is left of the response's; the first non-empty partition returns at
        least one whole batch (KIP-74)."""
        limit = params.max_bytes
        min_one = True
        out = []
        for req in requests:
            result = self._read_one(params, req, min(req.max_bytes, limit), min_one)
            if result.size > 0:
                min_one = False
                limit = max(0, limit - result.size)
            out.append((req.tp, result))
        return out

    def _read_one(self, params: FetchParams, req: FetchPartitionRequest, max_bytes: int,
                  min_one: bool) -> FetchPartitionResult:
        partition = self.partitions.get(req.tp)
        if partition is None:
            return FetchPartitionResult(
                UnknownTopicOrPartitionError(f"this server does not host {req.tp}"), None)
        hw, lso, start = (partition.high_watermark, partition.last_stable_offset,
                          partition.log_start_offset)
        try:
            partition.check_leader_epoch(req.current_leader_epoch)
            data = partition.read(req.fetch_offset, max_bytes, params.isolation_level,
                                  min_one, replica=params.replica_id >= 0)
        except Exception as exc:
            return FetchPartitionResult(_as_kafka_error(req.tp, exc), None, hw, lso, start)
        return FetchPartitionResult(None, data, hw, lso, start)

    def fetch_messages(self, params: FetchParams, requests: Sequence[FetchPartitionRequest]
                       ) -> tuple[list[tuple[TopicPartition, FetchPartitionResult]],
                                  DelayedFetch | None]:
        """Read now. The results are the answer if the request does not wait (max wait 0,
        enough bytes, an error, nothing asked); else a parked DelayedFetch is returned too,
        whose ``results`` are the answer once its ``wait()`` returns."""
        results = self.read_from_log(params, requests)
        total = sum(r.size for _, r in results)
        if params.max_wait_ms <= 0 or not requests or total >= params.min_bytes or \
                any(r.error is not None for _, r in results):
            return results, None
        op = DelayedFetch(self, params, requests)
        if self.fetch_purgatory.try_complete_else_watch(op, [r.tp for r in requests]):
            return op.results, None
        return results, op
