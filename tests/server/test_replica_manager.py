"""ReplicaManager over real logs: per-partition produce errors, Kafka's fetch limits (KIP-74),
DelayedFetch completed by an append or by its max wait, leader-epoch fencing."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from trio.testing import trio_test

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidRecordError,
    InvalidRequiredAcksError,
    KafkaStorageError,
    MessageTooLargeError,
    UnknownLeaderEpochError,
    UnknownTopicOrPartitionError,
)
from kafkapy.log.log_manager import LogManager
from kafkapy.protocol.records import build_batch, scan_batches
from kafkapy.server.replica_manager import FetchParams, FetchPartitionRequest, ReplicaManager

A = TopicPartition("a", 0)
B = TopicPartition("b", 0)
C = TopicPartition("c", 0)
NOWHERE = TopicPartition("nowhere", 0)     # hosted by no broker


def batch(n: int, size: int = 100, ts: int | None = None) -> bytearray:
    import time
    stamp = int(time.time() * 1000) if ts is None else ts
    return bytearray(build_batch([(b"k%d" % i, bytes(size), [], stamp) for i in range(n)]))


@asynccontextmanager
async def manager(tmp: Path, **props: object) -> AsyncIterator[ReplicaManager]:
    lm = LogManager([tmp], broker_props=props)
    lm.load()
    rm = ReplicaManager(1, lm)
    rm.make_leader(A, uuid.uuid4())
    rm.make_leader(B, uuid.uuid4())
    rm.make_leader(C, uuid.uuid4())
    async with trio.open_nursery() as nursery:
        await nursery.start(rm.run)
        try:
            yield rm
        finally:
            rm.shutdown()
            nursery.cancel_scope.cancel()
    lm.close()


def params(min_bytes: int = 1, max_wait_ms: int = 0, max_bytes: int = 1 << 20) -> FetchParams:
    return FetchParams(max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=max_bytes,
                       isolation_level=0)


@trio_test
async def test_produce_errors_are_per_partition(tmp_path: Path) -> None:
    async with manager(tmp_path, **{"message.max.bytes": "2000"}) as rm:
        with pytest.raises(InvalidRequiredAcksError):
            await rm.append_records(1000, 2, {A: batch(1)})
        results, parked = await rm.append_records(1000, -1, {
            A: batch(3), B: batch(30), NOWHERE: batch(1)})
        assert parked is None                    # one replica: the HW is already there
        assert results[A].error is None and results[A].base_offset == 0
        assert isinstance(results[B].error, MessageTooLargeError)
        assert isinstance(results[NOWHERE].error, UnknownTopicOrPartitionError)
        assert rm.partitions[A].high_watermark == 3
        assert rm.partitions[B].log_end_offset == 0


@trio_test
async def test_refused_records_and_storage_errors_are_results(tmp_path: Path) -> None:
    # A compacted topic refuses records without a key (KIP-467: the partition's answer
    # carries the refused records, the message and the log start offset); a write that fails
    # is the partition's KAFKA_STORAGE_ERROR; the other partitions append.
    async with manager(tmp_path, **{"log.cleanup.policy": "compact"}) as rm:
        stamp = int(time.time() * 1000)
        keyless = bytearray(build_batch([(b"k", b"v", [], stamp), (None, b"v", [], stamp)]))
        segment = rm.partitions[B].log.active_segment
        fd, segment.fd = segment.fd, -1            # every write fails: EBADF
        try:
            results = rm.append_records_now(1, {A: keyless, B: batch(2), C: batch(2)})
        finally:
            segment.fd = fd
    refused, failed, appended = results[A], results[B], results[C]
    assert isinstance(refused.error, InvalidRecordError)
    assert refused.error_message == refused.error.message and "key" in refused.error.message
    assert [e.batch_index for e in refused.record_errors] == [1]
    assert (refused.base_offset, refused.log_start_offset) == (-1, 0)
    assert isinstance(failed.error, KafkaStorageError)
    assert (failed.base_offset, failed.record_errors) == (-1, ())
    assert appended.error is None
    assert (appended.base_offset, appended.last_offset, appended.log_start_offset,
            appended.log_append_time) == (0, 1, 0, -1)
    assert list(results) == [A, B, C]           # the request's order


@trio_test
async def test_append_records_now_answers_as_append_records(tmp_path: Path) -> None:
    async with manager(tmp_path, **{"log.message.timestamp.type": "LogAppendTime"}) as rm:
        now = rm.append_records_now(-1, {A: batch(3), NOWHERE: batch(1)})
        later, parked = await rm.append_records(1000, -1, {A: batch(2)})
        assert parked is None
        with pytest.raises(InvalidRequiredAcksError):
            rm.append_records_now(2, {A: batch(1)})
    assert (now[A].error, now[A].base_offset, now[A].last_offset) == (None, 0, 2)
    assert (later[A].error, later[A].base_offset, later[A].last_offset) == (None, 3, 4)
    assert now[A].log_append_time > 0 and later[A].log_append_time >= now[A].log_append_time
    assert isinstance(now[NOWHERE].error, UnknownTopicOrPartitionError)
    assert rm.partitions[A].high_watermark == 5


@trio_test
async def test_fetch_limits_follow_kip_74(tmp_path: Path) -> None:
    async with manager(tmp_path) as rm:
        await rm.append_records(1000, 1, {A: batch(20, 500)})      # ~10 KB batch
        await rm.append_records(1000, 1, {A: batch(1)})
        await rm.append_records(1000, 1, {B: batch(1)})
        reqs = [FetchPartitionRequest(A, 0, 100), FetchPartitionRequest(B, 0, 100)]
        results, parked = rm.fetch_messages(params(max_bytes=100), reqs)
        assert parked is None
        (_, ra), (_, rb) = results
        # The first non-empty partition returns its first batch whole despite both limits;
        # nothing is left of the response's limit for the next one.
        data = ra.data.read() if ra.data else b""
        assert [b.base_offset for b in scan_batches(data).batches] == [0]
        assert rb.error is None and rb.size == 0
        # Per-partition limit alone, response limit large: A stops after the first batch
        # (cut), B gets its batch.
        results, _ = rm.fetch_messages(params(max_bytes=1 << 20), [
            FetchPartitionRequest(A, 20, 1 << 20), FetchPartitionRequest(B, 0, 1 << 20)])
        assert [r.size > 0 for _, r in results] == [True, True]
        assert results[0][1].high_watermark == 21


@trio_test
async def test_a_parked_fetch_completes_on_append(tmp_path: Path) -> None:
    async with manager(tmp_path) as rm:
        results, parked = rm.fetch_messages(params(max_wait_ms=10_000),
                                            [FetchPartitionRequest(A, 0, 1 << 20)])
        assert parked is not None and results[0][1].size == 0
        started = trio.current_time()
        async with trio.open_nursery() as nursery:
            async def produce() -> None:
                await trio.sleep(0.05)
                await rm.append_records(1000, 1, {A: batch(2)})
            nursery.start_soon(produce)
            await parked.wait()
        waited = trio.current_time() - started
        assert waited < 5       # woken by the append, not by the 10 s max wait
        ((tp, r),) = parked.results
        assert tp == A and r.error is None
        assert [b.record_count for b in scan_batches(r.data.read()).batches] == [2]


@trio_test
async def test_a_parked_fetch_answers_at_max_wait_with_what_there_is(tmp_path: Path) -> None:
    async with manager(tmp_path) as rm:
        await rm.append_records(1000, 1, {A: batch(1)})
        started = trio.current_time()
        _, parked = rm.fetch_messages(params(min_bytes=1 << 20, max_wait_ms=200),
                                      [FetchPartitionRequest(A, 0, 1 << 20)])
        assert parked is not None
        await parked.wait()
        assert trio.current_time() - started >= 0.19
        assert parked.results[0][1].size > 0


@trio_test
async def test_deleting_a_partition_completes_its_parked_fetch(tmp_path: Path) -> None:
    async with manager(tmp_path) as rm:
        _, parked = rm.fetch_messages(params(max_wait_ms=30_000),
                                      [FetchPartitionRequest(B, 0, 1000)])
        assert parked is not None
        rm.remove_partitions([B])
        with trio.fail_after(5):
            await parked.wait()
        assert isinstance(parked.results[0][1].error, UnknownTopicOrPartitionError)


@trio_test
async def test_leader_epoch_fencing(tmp_path: Path) -> None:
    async with manager(tmp_path) as rm:
        results, _ = rm.fetch_messages(params(), [FetchPartitionRequest(A, 0, 1000, 3)])
        assert isinstance(results[0][1].error, UnknownLeaderEpochError)
        results, _ = rm.fetch_messages(params(), [FetchPartitionRequest(A, 0, 1000, 0)])
        assert results[0][1].error is None
