"""Idempotent producers: real clients and raw requests against kafkapy's producer state.

What is proven:

- librdkafka (confluent-kafka, ``enable.idempotence=true``): 10,000 messages (the key is the
  message's number) over three partitions through ``tests/clients/proxy.py``, which drops every
  connection after every 8 forwarded Produce requests, discarding the answers in flight: the
  producer must retry requests the broker has already appended. Afterwards the log holds each
  message exactly once, in the order produced within its partition, at the offset its delivery
  report gave, every report is a success, and the batches carry one producer id per epoch with
  sequences running from 0 without a gap. A control run (idempotence off, same chaos) writes
  duplicates: the chaos does make producers resend appended batches, so the first test is not
  vacuous.
- kafka-python: ``enable_idempotence=True`` (through the proxy, with the same kind of drops)
  and the default producer of kafka-python 3 (idempotent, acks=all, by KIP-679) write each
  message exactly once, in batches that carry a producer id and contiguous sequences.
- aiokafka ``enable_idempotence=True``: the same, and the proxy saw it use InitProducerId v0
  (aiokafka only has v0).
- Raw requests (kafkapy's codec, a plain socket, Produce v9 with hand-built batches):
  InitProducerId without a transactional id answers a fresh producer id with epoch 0 at every
  version 0-4, never the same twice, across a broker restart too; a re-sent batch (same
  producer id, epoch and sequences) is answered NONE with its ORIGINAL base offset and not
  appended again, for any of the last five batches, while an older one is
  OUT_OF_ORDER_SEQUENCE_NUMBER (45); a sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER and leaves
  the state alone (the next in-sequence batch is accepted); a new epoch must start at
  sequence 0 (else 45); an older epoch is INVALID_PRODUCER_EPOCH (47); and all of it survives a
  clean restart and a ``kill -9`` (the broker in a child process, as in test_durability.py),
  on logs of several segments: after recovery the next sequence is accepted at the next
  offset, each producer's last batch re-sent is still recognised as a duplicate (earlier
  ones may instead be refused as out of sequence: a snapshot keeps only the last batch, as
  Kafka's does, but they are never appended twice), gaps and old epochs still refused.

The log is inspected two ways: ``BrokerHandle.read_all`` (records, straight from the log) and
``fetch_batches`` (raw read_uncommitted Fetch requests decoded with kafkapy's batch reader,
for the producer fields of each batch header). test_transactions.py uses the same helpers.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import confluent_kafka
import confluent_kafka.admin
import kafka
import kafka.errors
import pytest
from aiokafka import AIOKafkaProducer

from kafkapy.protocol import API_KEYS
from kafkapy.protocol.classes import struct_classes
from kafkapy.protocol.records import build_batch, scan_batches
from kafkapy.testing import BrokerFactory, BrokerHandle, LogRecord
from tests.clients.client_support import RawClient, produce_body
from tests.clients.proxy import broker_address, proxied_broker
from tests.clients.test_durability import ChildBroker

pytestmark = pytest.mark.timeout(120)

PRODUCE, FETCH, INIT_PRODUCER_ID = 0, 1, 22
PRODUCE_V, FETCH_V = 9, 12
NONE, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH = 0, 45, 47
TIMEOUT = 10.0

INIT_REQUEST = struct_classes(API_KEYS[INIT_PRODUCER_ID].request.body)["InitProducerIdRequest"]
FETCH_CLASSES = struct_classes(API_KEYS[FETCH].request.body)

# librdkafka tuned to come back quickly after a dropped connection.
FAST_RECONNECT = {"reconnect.backoff.ms": 10, "reconnect.backoff.max.ms": 100,
                  "retry.backoff.ms": 10, "retry.backoff.max.ms": 100}


# ================================================================ raw protocol helpers


def init_producer_id(client: RawClient, version: int = 4, transactional_id: str | None = None,
                     timeout_ms: int = 60_000) -> tuple[int, int]:
    """InitProducerId; asserts NONE; returns (producer id, epoch)."""
    body = client.request(INIT_PRODUCER_ID, version, INIT_REQUEST(
        transactional_id=transactional_id, transaction_timeout_ms=timeout_ms))
    assert body.error_code == NONE, f"InitProducerId v{version}: {body}"
    return int(body.producer_id), int(body.producer_epoch)


def idempotent_batch(pid: int, epoch: int, seq: int, count: int, *, tag: bytes = b"",
                     transactional: bool = False) -> bytes:
    """``count`` records with sequences ``seq``.. (the key of each says who and which),
    stamped now: a producer's state expires ``producer.id.expiration.ms`` after the
    timestamp of its last batch (Kafka's rule), so old timestamps would expire it at once."""
    now = int(time.time() * 1000)
    return build_batch([(b"%s%d-%d-%d" % (tag, pid, epoch, seq + i), b"v", [], now)
                        for i in range(count)],
                       producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                       is_transactional=transactional)


def send(client: RawClient, topic: str, batch: bytes, partition: int = 0) -> tuple[int, int]:
    """One acks=all Produce of ``batch``; returns (error code, base offset)."""
    body = client.request(PRODUCE, PRODUCE_V, produce_body(topic, batch, partition=partition))
    [part] = body.responses[0].partition_responses
    assert part.index == partition
    return int(part.error_code), int(part.base_offset)


@attrs.frozen
class BatchInfo:
    """A batch header's producer fields and its records ((offset, key, value) each)."""

    base_offset: int
    last_offset: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    transactional: bool
    control: bool
    records: tuple[tuple[int, bytes | None, bytes | None], ...]


@attrs.frozen
class Fetched:
    batches: list[BatchInfo]
    high_watermark: int
    last_stable_offset: int
    aborted: list[tuple[int, int]]      # (producer id, first offset), as the broker listed


def fetch_batches(address: str, topic: str, partition: int = 0, *, isolation_level: int = 0,
                  start: int = 0) -> Fetched:
    """Every batch from ``start`` up to the high watermark (read_uncommitted) or up to where
    the broker stops answering (read_committed: the last stable offset), by raw Fetch v12."""
    C = FETCH_CLASSES
    batches: list[BatchInfo] = []
    aborted: list[tuple[int, int]] = []
    offset = start
    with RawClient(address) as client:
        while True:
            body = client.request(FETCH, FETCH_V, C["FetchRequest"](
                max_wait_ms=0, min_bytes=0, max_bytes=1 << 22,
                isolation_level=isolation_level, topics=[C["FetchTopic"](
                    topic=topic, partitions=[C["FetchPartition"](
                        partition=partition, fetch_offset=offset,
                        partition_max_bytes=1 << 22)])]))
            [p] = body.responses[0].partitions
            assert p.error_code == NONE, f"Fetch {topic}-{partition} at {offset}: {p}"
            for entry in p.aborted_transactions or ():
                if (entry.producer_id, entry.first_offset) not in aborted:
                    aborted.append((int(entry.producer_id), int(entry.first_offset)))
            scan = scan_batches(bytes(p.records or b""))
            for b in scan.batches:
                if b.last_offset < offset:
                    continue
                batches.append(BatchInfo(
                    b.base_offset, b.last_offset, b.producer_id, b.producer_epoch,
                    b.base_sequence, b.is_transactional, b.is_control,
                    tuple((r.offset, r.key, r.value) for r in b.records())))
            bound = p.high_watermark if isolation_level == 0 else p.last_stable_offset
            if not scan.batches or scan.batches[-1].next_offset >= bound:
                return Fetched(batches, int(p.high_watermark), int(p.last_stable_offset),
                               aborted)
            offset = scan.batches[-1].next_offset


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    """CreateTopics through confluent-kafka's AdminClient (for brokers in child processes)."""
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([confluent_kafka.admin.NewTopic(topic, partitions, 1)])[topic].result(
        TIMEOUT)


def check_sequences(batches: Sequence[BatchInfo], what: str) -> set[int]:
    """Every data batch has a producer id; per (producer id, epoch) the sequences start at 0
    and run on without a gap or a repeat, in offset order. Returns the producer ids."""
    next_seq: dict[tuple[int, int], int] = {}
    for b in batches:
        if b.control:
            continue
        assert b.producer_id >= 0 and b.producer_epoch >= 0, f"{what}: no producer id: {b}"
        key = (b.producer_id, b.producer_epoch)
        expected = next_seq.get(key, 0)
        assert b.base_sequence == expected, \
            f"{what}: batch at {b.base_offset} of {key} has sequence {b.base_sequence}, " \
            f"expected {expected}"
        next_seq[key] = expected + len(b.records)
    return {pid for pid, _ in next_seq}


# ==================================================================== client helpers


def check_exactly_once(records: Sequence[LogRecord], count: int, partitions: int) -> None:
    """Message i (key ``b"%d" % i``) went to partition i % partitions: each partition holds
    its messages once each, none missing, in the order produced, at consecutive offsets."""
    keys = collections.Counter(r.key for r in records)
    twice = sorted(int(k) for k, n in keys.items() if n > 1 and k is not None)
    assert not twice, f"{len(twice)} messages written more than once, e.g. {twice[:10]}"
    for p in range(partitions):
        got = [int(r.key) for r in records if r.partition == p and r.key is not None]
        want = list(range(p, count, partitions))
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        assert not missing, f"partition {p}: {len(missing)} missing, e.g. {missing[:10]}"
        assert not extra, f"partition {p}: {len(extra)} of other partitions, e.g. {extra[:10]}"
        diffs = [(i, g, w) for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
        assert not diffs, f"partition {p}: out of order, first differences {diffs[:5]}"
        offsets = [r.offset for r in records if r.partition == p]
        assert offsets == list(range(offsets[0], offsets[0] + len(offsets))), \
            f"partition {p}: a gap in the offsets"
    for r in records:
        assert r.value == b"value-%s" % r.key, r


def flush_or_fail(producer: confluent_kafka.Producer, timeout: float) -> None:
    """``flush``; a fatal producer error (librdkafka raises it from flush or poll, sometimes
    as a SystemError around the KafkaException) becomes an AssertionError that names it.

    librdkafka reports a fatal error by raising from inside poll/flush, and callbacks of the
    same poll may then run with that exception pending: a callback that calls into
    confluent-kafka's C methods then (``msg.key()``...) can turn it into something that is not
    an exception at all, which takes the whole pytest session down. So delivery callbacks here
    only keep ``(err, msg)``, to be read after the flush, and no ``error_cb`` is set."""
    try:
        left = producer.flush(timeout)
    except (confluent_kafka.KafkaException, SystemError) as e:
        cause = e.__cause__ or e.__context__
        raise AssertionError(f"producer failed: {e!r} (cause: {cause!r})") from e
    assert left == 0, f"{left} messages not delivered within {timeout} s"


def produce_numbered_confluent(producer: confluent_kafka.Producer, topic: str, count: int,
                               partitions: int) -> dict[int, tuple[Any, int, int]]:
    """Messages 0..count-1 to partition i % partitions; returns {i: (error, partition,
    offset)} from the delivery reports, after a flush."""
    delivered: list[tuple[Any, confluent_kafka.Message]] = []

    def report(err: Any, msg: confluent_kafka.Message) -> None:
        delivered.append((err, msg))

    for i in range(count):
        while True:
            try:
                producer.produce(topic, b"value-%d" % i, b"%d" % i, partition=i % partitions,
                                 on_delivery=report)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    flush_or_fail(producer, 60)
    return {int(msg.key()): (err, msg.partition(), msg.offset()) for err, msg in delivered}


def check_reports(reports: Mapping[int, tuple[Any, int, int]], records: Sequence[LogRecord],
                  count: int) -> None:
    failed = {i: r[0] for i, r in reports.items() if r[0] is not None}
    assert not failed, f"{len(failed)} delivery reports failed, e.g. {list(failed.items())[:5]}"
    assert sorted(reports) == list(range(count)), "delivery reports missing or repeated"
    where = {int(r.key): (r.partition, r.offset) for r in records if r.key is not None}
    wrong = {i: (r[1:], where.get(i)) for i, r in reports.items() if where.get(i) != r[1:]}
    assert not wrong, f"delivery reports disagree with the log: {list(wrong.items())[:5]}"


# ======================================================================== librdkafka


TOPIC = "numbered"
CONFLUENT_COUNT = 10_000


def confluent_through_drops(factory: BrokerFactory, idempotence: bool, count: int
                            ) -> tuple[BrokerHandle, dict[int, tuple[Any, int, int]], int]:
    with proxied_broker(factory) as (broker, proxy):
        broker.create_topic(TOPIC, partitions=3)
        producer = confluent_kafka.Producer({
            "bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": idempotence,
            "acks": "all", "linger.ms": 1, "batch.num.messages": 100,
            "message.timeout.ms": 60_000, "log_level": 3, **FAST_RECONNECT})
        # Every 8th Produce request forwarded: every connection closes 50 ms later, the
        # answers to the requests in flight lost.
        proxy.drop_after(8, api_keys={PRODUCE})
        reports = produce_numbered_confluent(producer, TOPIC, count, 3)
        proxy.drop_after(None)
        drops = proxy.drops
        del producer
    return broker, reports, drops


def test_confluent_idempotent_producer_survives_dropped_connections(
        kafka_broker_factory: BrokerFactory) -> None:
    broker, reports, drops = confluent_through_drops(kafka_broker_factory, True,
                                                     CONFLUENT_COUNT)
    assert drops >= 8, f"only {drops} connection drops: the chaos did not happen"
    records = broker.read_all(TOPIC)
    check_exactly_once(records, CONFLUENT_COUNT, 3)
    check_reports(reports, records, CONFLUENT_COUNT)
    host, port = broker_address(broker)
    for p in range(3):
        check_sequences(fetch_batches(f"{host}:{port}", TOPIC, p).batches, f"partition {p}")


def test_control_without_idempotence_the_drops_write_duplicates(
        kafka_broker_factory: BrokerFactory) -> None:
    """The harness works: the same chaos makes a producer with retries but without
    idempotence write some messages twice (the broker appended a request whose answer was
    lost, and the producer sent it again)."""
    # Fewer messages: without the limit of 5 requests in flight every drop loses many
    # answers, and the resends make more drops.
    count = 2000
    broker, _, drops = confluent_through_drops(kafka_broker_factory, False, count)
    assert drops >= 2
    keys = collections.Counter(r.key for r in broker.read_all(TOPIC))
    assert set(keys) == {b"%d" % i for i in range(count)}
    assert sum(n - 1 for n in keys.values()) > 0, "no duplicates: the drops lost no answers"


# ====================================================================== kafka-python


def produce_numbered_kafka_python(bootstrap: str, topic: str, count: int, partitions: int,
                                  config: Mapping[str, Any]) -> list[tuple[int, int]]:
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, **config)
    try:
        futures = [producer.send(topic, b"value-%d" % i, b"%d" % i, partition=i % partitions)
                   for i in range(count)]
        producer.flush(60)
        results = []
        for i, f in enumerate(futures):
            try:
                md = f.get(TIMEOUT)
            except kafka.errors.KafkaError as e:
                raise AssertionError(f"message {i} failed: {e!r}") from e
            results.append((md.partition, md.offset))
        return results
    finally:
        producer.close(timeout=TIMEOUT)


def test_kafka_python_explicit_idempotence_survives_dropped_connections(
        kafka_broker_factory: BrokerFactory) -> None:
    count = 3000
    with proxied_broker(kafka_broker_factory) as (broker, proxy):
        broker.create_topic(TOPIC, partitions=2)
        proxy.drop_after(4, api_keys={PRODUCE})
        results = produce_numbered_kafka_python(
            broker.bootstrap_servers, TOPIC, count, 2,
            {"enable_idempotence": True, "linger_ms": 5, "batch_size": 1024,
             "request_timeout_ms": 10_000, "delivery_timeout_ms": 60_000,
             "reconnect_backoff_ms": 10, "retry_backoff_ms": 10})
        proxy.drop_after(None)
        assert proxy.drops >= 3, f"only {proxy.drops} drops"
    records = broker.read_all(TOPIC)
    check_exactly_once(records, count, 2)
    where = {int(r.key): (r.partition, r.offset) for r in records if r.key is not None}
    assert [where[i] for i in range(count)] == results
    host, port = broker_address(broker)
    for p in range(2):
        check_sequences(fetch_batches(f"{host}:{port}", TOPIC, p).batches, f"partition {p}")


def test_kafka_python_default_producer_is_idempotent(kafka_broker: BrokerHandle) -> None:
    """kafka-python 3's defaults: idempotence on, acks=all (the strict xfail
    test_produce_consume.py::test_kafka_python_default_idempotence tracks the same)."""
    count = 1000
    kafka_broker.create_topic(TOPIC, partitions=2)
    results = produce_numbered_kafka_python(kafka_broker.bootstrap_servers, TOPIC, count, 2,
                                            {})
    records = kafka_broker.read_all(TOPIC)
    check_exactly_once(records, count, 2)
    assert [(r.partition, r.offset) for r in sorted(records, key=lambda r: int(r.key or 0))] \
        == results
    pids: set[int] = set()
    for p in range(2):
        pids |= check_sequences(fetch_batches(kafka_broker.bootstrap_servers, TOPIC, p).batches,
                                f"partition {p}")
    assert len(pids) == 1, f"one producer, one producer id: {pids}"


# ========================================================================== aiokafka


def test_aiokafka_idempotent_producer(kafka_broker_factory: BrokerFactory) -> None:
    count = 1000

    async def main(bootstrap: str) -> list[tuple[int, int]]:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True,
                                    linger_ms=5, max_batch_size=4096,
                                    request_timeout_ms=int(TIMEOUT * 1000))
        await producer.start()
        try:
            futures = [await producer.send(TOPIC, b"value-%d" % i, b"%d" % i,
                                           partition=i % 2) for i in range(count)]
            done = [await asyncio.wait_for(f, TIMEOUT) for f in futures]
            return [(md.partition, md.offset) for md in done]
        finally:
            await producer.stop()

    with proxied_broker(kafka_broker_factory) as (broker, proxy):
        broker.create_topic(TOPIC, partitions=2)
        results = asyncio.run(main(broker.bootstrap_servers))
        versions = {v for (key, v) in proxy.versions if key == INIT_PRODUCER_ID}
    assert versions == {0}, f"aiokafka's InitProducerId versions: {versions}"
    records = broker.read_all(TOPIC)
    check_exactly_once(records, count, 2)
    where = {int(r.key): (r.partition, r.offset) for r in records if r.key is not None}
    assert [where[i] for i in range(count)] == results
    host, port = broker_address(broker)
    for p in range(2):
        check_sequences(fetch_batches(f"{host}:{port}", TOPIC, p).batches, f"partition {p}")


# ============================================================================== raw


RAW = "raw"


def test_raw_init_producer_id_gives_fresh_ids(kafka_broker: BrokerHandle) -> None:
    seen: list[int] = []
    with RawClient(kafka_broker.bootstrap_servers) as client:
        for version in (0, 1, 2, 3, 4):
            for _ in range(2):
                pid, epoch = init_producer_id(client, version)
                assert pid >= 0 and epoch == 0, (version, pid, epoch)
                seen.append(pid)
    assert len(set(seen)) == len(seen), f"a producer id given twice: {seen}"
    kafka_broker.restart()
    with RawClient(kafka_broker.bootstrap_servers) as client:
        after = [init_producer_id(client, version)[0] for version in (0, 2, 4)]
    assert not set(after) & set(seen), f"ids given again after a restart: {after} / {seen}"
    assert len(set(after)) == 3


def test_raw_duplicate_batch_gets_original_offset(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic(RAW)
    with RawClient(kafka_broker.bootstrap_servers) as client:
        pid, epoch = init_producer_id(client)
        b0 = idempotent_batch(pid, epoch, 0, 3)
        b1 = idempotent_batch(pid, epoch, 3, 2)
        assert send(client, RAW, b0) == (NONE, 0)
        assert send(client, RAW, b1) == (NONE, 3)
        # Re-sent (the answer was lost): success, the original offsets, nothing appended.
        assert send(client, RAW, b0) == (NONE, 0)
        assert send(client, RAW, b1) == (NONE, 3)
        assert send(client, RAW, b1) == (NONE, 3)
        assert kafka_broker.end_offsets(RAW) == {0: 5}
        # Five more batches: the broker remembers the last five.
        later = [idempotent_batch(pid, epoch, 5 + i, 1) for i in range(5)]
        for i, b in enumerate(later):
            assert send(client, RAW, b) == (NONE, 5 + i)
        for i, b in enumerate(later):
            assert send(client, RAW, b) == (NONE, 5 + i), f"duplicate of batch {i}"
        # b1 is six batches back: no longer known, so it is out of sequence.
        assert send(client, RAW, b1)[0] == OUT_OF_ORDER_SEQUENCE_NUMBER
        assert send(client, RAW, idempotent_batch(pid, epoch, 10, 2)) == (NONE, 10)
    records = kafka_broker.read_all(RAW)
    assert [r.offset for r in records] == list(range(12))
    assert [r.key for r in records] == [b"%d-%d-%d" % (pid, epoch, s) for s in range(12)]


def test_raw_sequence_gap_is_out_of_order(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic(RAW)
    with RawClient(kafka_broker.bootstrap_servers) as client:
        pid, epoch = init_producer_id(client)
        assert send(client, RAW, idempotent_batch(pid, epoch, 0, 2)) == (NONE, 0)
        assert send(client, RAW, idempotent_batch(pid, epoch, 3, 1))[0] == \
            OUT_OF_ORDER_SEQUENCE_NUMBER
        assert send(client, RAW, idempotent_batch(pid, epoch, 100, 1))[0] == \
            OUT_OF_ORDER_SEQUENCE_NUMBER
        # An overlapping batch that is not one sent before is out of order too.
        assert send(client, RAW, idempotent_batch(pid, epoch, 1, 2))[0] == \
            OUT_OF_ORDER_SEQUENCE_NUMBER
        # The refused batches changed nothing: sequence 2 is next.
        assert send(client, RAW, idempotent_batch(pid, epoch, 2, 1)) == (NONE, 2)
        # Another producer's sequences are its own.
        other, other_epoch = init_producer_id(client)
        assert send(client, RAW, idempotent_batch(other, other_epoch, 0, 1)) == (NONE, 3)
        assert send(client, RAW, idempotent_batch(pid, epoch, 3, 1)) == (NONE, 4)
    assert len(kafka_broker.read_all(RAW)) == 5


def test_raw_older_epoch_is_invalid_producer_epoch(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic(RAW)
    with RawClient(kafka_broker.bootstrap_servers) as client:
        pid, _ = init_producer_id(client)
        assert send(client, RAW, idempotent_batch(pid, 0, 0, 2)) == (NONE, 0)
        # A new epoch starts again at sequence 0 ...
        assert send(client, RAW, idempotent_batch(pid, 2, 5, 1))[0] == \
            OUT_OF_ORDER_SEQUENCE_NUMBER
        assert send(client, RAW, idempotent_batch(pid, 1, 0, 1)) == (NONE, 2)
        # ... and fences the older one.
        assert send(client, RAW, idempotent_batch(pid, 0, 2, 1))[0] == INVALID_PRODUCER_EPOCH
        assert send(client, RAW, idempotent_batch(pid, 0, 0, 2))[0] == INVALID_PRODUCER_EPOCH
        assert send(client, RAW, idempotent_batch(pid, 1, 1, 1)) == (NONE, 3)
    assert [r.key for r in kafka_broker.read_all(RAW)] == [
        b"%d-0-0" % pid, b"%d-0-1" % pid, b"%d-1-0" % pid, b"%d-1-1" % pid]


# -------------------------------------------------------- producer state across restarts

# Small segments: the history spans several segments (and the snapshots taken when they roll).
SMALL_SEGMENTS = {"log.segment.bytes": "300", "num.partitions": "1"}


@attrs.define
class History:
    """What ``write_history`` acknowledged: two producers on one partition."""

    a: int = -1                 # producer id of A (epoch 0, then epoch 1)
    b: int = -1                 # producer id of B (epoch 0)
    sent: dict[str, tuple[bytes, int]] = attrs.field(factory=dict)  # name -> (batch, offset)
    end: int = 0


def write_history(address: str) -> History:
    h = History()
    with RawClient(address) as client:
        h.a, _ = init_producer_id(client)
        h.b, _ = init_producer_id(client)
        plan = [("a0", h.a, 0, 0, 2), ("b0", h.b, 0, 0, 1), ("a1", h.a, 0, 2, 3),
                ("b1", h.b, 0, 1, 2), ("a2", h.a, 0, 5, 1), ("b2", h.b, 0, 3, 1),
                ("a3", h.a, 1, 0, 2), ("b3", h.b, 0, 4, 3), ("a4", h.a, 1, 2, 1),
                ("a5", h.a, 1, 3, 2), ("b4", h.b, 0, 7, 1)]
        for name, pid, epoch, seq, count in plan:
            batch = idempotent_batch(pid, epoch, seq, count, tag=name.encode())
            error, offset = send(client, RAW, batch)
            assert (error, offset) == (NONE, h.end), f"{name}: {(error, offset)}"
            h.sent[name] = (batch, offset)
            h.end += count
    return h


def check_history(address: str, h: History) -> None:
    """After a restart: what the broker must still know of A and B.

    The last batch of each producer is still recognised as a duplicate. Earlier batches may
    be too (when the state was rebuilt from the log, all five are known) or may be refused as
    out of sequence (a ``.snapshot`` keeps only each producer's last batch, as Kafka's does);
    either way they are not appended again."""
    with RawClient(address) as client:
        for name in ("a5", "b4"):
            batch, offset = h.sent[name]
            assert send(client, RAW, batch) == (NONE, offset), f"re-sent {name}"
        for name in ("a4", "a3", "b3"):
            batch, offset = h.sent[name]
            answer = send(client, RAW, batch)
            assert answer == (NONE, offset) or answer[0] == OUT_OF_ORDER_SEQUENCE_NUMBER, \
                f"re-sent {name}: {answer}"
        assert send(client, RAW, idempotent_batch(h.a, 0, 6, 1))[0] == INVALID_PRODUCER_EPOCH
        assert send(client, RAW, idempotent_batch(h.a, 1, 6, 1))[0] == \
            OUT_OF_ORDER_SEQUENCE_NUMBER
        assert send(client, RAW, idempotent_batch(h.b, 0, 9, 1))[0] == \
            OUT_OF_ORDER_SEQUENCE_NUMBER
        assert send(client, RAW, idempotent_batch(h.a, 1, 5, 1, tag=b"a6")) == (NONE, h.end)
        assert send(client, RAW, idempotent_batch(h.b, 0, 8, 2, tag=b"b5")) == \
            (NONE, h.end + 1)
    fetched = fetch_batches(address, RAW)
    assert fetched.high_watermark == h.end + 3
    keys = [r[1] for b in fetched.batches for r in b.records]
    assert len(keys) == len(set(keys)) == h.end + 3, "a batch was appended twice"


def test_raw_producer_state_survives_a_clean_restart(kafka_broker_factory: BrokerFactory,
                                                     tmp_path: Path) -> None:
    broker = kafka_broker_factory(SMALL_SEGMENTS, data_dir=tmp_path / "data")
    broker.create_topic(RAW)
    h = write_history(broker.bootstrap_servers)
    segments = list((tmp_path / "data" / f"{RAW}-0").glob("*.log"))
    assert len(segments) >= 3, f"the history should span segments: {segments}"
    broker.restart()
    check_history(broker.bootstrap_servers, h)
    # And once more, now that the state came back from disk once.
    broker.restart()
    with RawClient(broker.bootstrap_servers) as client:
        assert send(client, RAW, idempotent_batch(h.a, 1, 5, 1, tag=b"a6")) == (NONE, h.end)


def test_raw_producer_state_survives_kill_9(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    child = ChildBroker(data_dir, SMALL_SEGMENTS)
    try:
        create_topic(child.bootstrap, RAW)
        h = write_history(child.bootstrap)
    finally:
        child.kill()
    child = ChildBroker(data_dir, SMALL_SEGMENTS)
    try:
        check_history(child.bootstrap, h)
    finally:
        child.kill()
    # A second crash, after recovering from the first.
    child = ChildBroker(data_dir, SMALL_SEGMENTS)
    try:
        with RawClient(child.bootstrap) as client:
            batch, offset = h.sent["a5"]
            assert send(client, RAW, idempotent_batch(h.a, 1, 5, 1, tag=b"a6")) == \
                (NONE, h.end)
            assert send(client, RAW, batch) == (NONE, offset)
    finally:
        child.kill()
