"""Internal topics as their coordinators use them: ``__consumer_offsets`` (the group
coordinator) and ``__transaction_state`` (the transaction coordinator).

Both keep their state in a compacted topic this broker leads, a key's records in partition
``abs(javaHash(key)) % partitions`` so that they stay in order; both append their records as
leader through the partitions port (:mod:`kafkapy.coordinator.partition_port`), wait for them
to be committed before answering, and read a partition back from its log start to its high
watermark when they become its leader. This module holds those shared steps; the formats and
the state are each coordinator's.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Sequence

import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.partition_port import CoordinatorPartitions
from kafkapy.protocol.records import BatchHeader, build_batch, scan_batches

__all__ = ["append_records", "flush_if_due", "java_string_hash", "partition_for",
           "read_batches"]

log = logging.getLogger(__name__)

_READ_CHUNK = 1 << 20


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (UTF-16 code units, 32-bit overflow)."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(key: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(key.hashCode) % partitions`` (abs of Integer.MIN_VALUE is 0)."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def append_records(partitions: CoordinatorPartitions, tp: TopicPartition,
                   records: Sequence[tuple[bytes, bytes | None]], timestamp_ms: int,
                   producer_id: int = -1, producer_epoch: int = -1) -> int:
    """Append ``records`` (key, value) as one batch to ``tp`` as its leader; with a producer
    id as that producer's transactional batch (TxnOffsetCommit). The log end offset after it,
    for ``flush_if_due``. Raises what the append raises."""
    items = [(k, v, None, timestamp_ms) for k, v in records]
    if producer_id >= 0:
        batch = build_batch(items, producer_id=producer_id, producer_epoch=producer_epoch,
                            base_sequence=0, is_transactional=True)
    else:
        batch = build_batch(items)
    return partitions.append(tp, batch)


async def flush_if_due(partitions: CoordinatorPartitions, tp: TopicPartition,
                       end_offset: int) -> None:
    """Wait until what was appended to ``tp`` below ``end_offset`` is committed (the log's
    flush policy; on a replicated partition, the high watermark), before the answer."""
    await partitions.wait_committed(tp, end_offset)


async def read_batches(partitions: CoordinatorPartitions, tp: TopicPartition
                       ) -> AsyncGenerator[BatchHeader, None]:
    """Every batch of ``tp`` from the log start to the log end, in chunks, letting
    other tasks run between them. A batch may start before the log start (DeleteRecords): its
    records below ``partitions.log_start_offset(tp)`` are the caller's to skip. Stops, logging
    why, at bytes that hold no whole batch."""
    offset = partitions.log_start_offset(tp)
    end = partitions.log_end_offset(tp)
    while offset < end:
        scan = scan_batches(partitions.read(tp, offset, _READ_CHUNK))
        if not scan.batches:
            log.error("%s: no whole batch at offset %d (%s); loading stops there",
                      tp, offset, scan.error)
            return
        for batch in scan.batches:
            yield batch
        offset = scan.batches[-1].next_offset
        await trio.lowlevel.checkpoint()
