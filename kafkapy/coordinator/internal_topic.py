"""Internal topics as their coordinators use them: ``__consumer_offsets`` (the group
coordinator) and ``__transaction_state`` (the transaction coordinator).

Both keep their state in a compacted topic this broker leads, a key's records in partition
``abs(javaHash(key)) % partitions`` so that they stay in order; both append their records as
leader (acks=all: with one replica the append is the replication), run the log's flush policy
before answering, and read their partitions back from the log start to the high watermark at
startup. This module holds those shared steps; the formats and the state are each
coordinator's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.log.producer_state import AppendOrigin
from kafkapy.protocol.records import BatchHeader, build_batch, scan_batches

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer
    from kafkapy.server.partition import Partition

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


def append_records(server: KafkaServer, partition: Partition,
                   records: Sequence[tuple[bytes, bytes | None]], producer_id: int = -1,
                   producer_epoch: int = -1) -> None:
    """Append ``records`` (key, value) as one batch, as leader with acks=all; with a
    producer id as that producer's transactional batch (TxnOffsetCommit). Wakes fetches
    waiting on the partition. Raises what the append raises."""
    now = int(time.time() * 1000)
    items = [(k, v, None, now) for k, v in records]
    if producer_id >= 0:
        batch = build_batch(items, producer_id=producer_id, producer_epoch=producer_epoch,
                            base_sequence=0, is_transactional=True)
    else:
        batch = build_batch(items)
    partition.append_records_to_leader(batch, -1, AppendOrigin.COORDINATOR)
    server.replica_manager.fetch_purgatory.check_and_complete(partition.tp)


async def flush_if_due(server: KafkaServer, tp: TopicPartition) -> None:
    """The log's flush policy (flush.messages / flush.ms) after a write, before the
    answer."""
    partition = server.replica_manager.partitions.get(tp)
    if partition is not None:
        await server.log_manager.maybe_flush(partition.log)


async def read_batches(partition: Partition) -> AsyncIterator[BatchHeader]:
    """Every batch from the log start to the high watermark, in chunks, letting other tasks
    run between them. A batch may start before the log start (DeleteRecords): its records
    below ``partition.log_start_offset`` are the caller's to skip. Stops, logging why, at
    bytes that hold no whole batch."""
    offset = partition.log_start_offset
    end = partition.high_watermark
    while offset < end:
        data = partition.log.read(offset, _READ_CHUNK, end, True).read()
        scan = scan_batches(data)
        if not scan.batches:
            log.error("%s: no whole batch at offset %d (%s); loading stops there",
                      partition.tp, offset, scan.error)
            return
        for batch in scan.batches:
            yield batch
        offset = scan.batches[-1].next_offset
        await trio.lowlevel.checkpoint()
