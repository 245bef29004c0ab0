"""Old clients' message formats end to end (Kafka 3.x behaviour): real clients that speak
message format 0 or 1 produce and consume against a real broker, which stores magic 2.

- librdkafka (confluent-kafka) with ``api.version.request=false`` and
  ``broker.version.fallback`` 0.9.0.0 (Produce/Fetch v1) or 0.8.2.2 (Produce/Fetch v0), both
  message format 0, every codec it has (gzip, snappy, lz4; magic 0's lz4 frames carry the old
  broken descriptor checksum). librdkafka 2.x treats any fallback of 0.10 or later as "ask
  with ApiVersions" whatever ``api.version.request`` says, so it never writes magic 1:
  kafka-python covers magic 1;
- what librdkafka's test 0052 (msg_timestamps) checks, reproduced in Python (its C program is
  not built here): CreateTime and LogAppendTime topics, producers at 0.10.1.0 (ApiVersions)
  and 0.9.0.0 (no timestamps), uncompressed and gzip, several message sets per producer;
- kafka-python pinned to ``api_version`` (0, 10) and (0, 9);
- a modern producer's batches with headers and transactions read by old consumers (headers
  dropped, control records dropped, aborted records not filtered: Kafka does not);
- raw Produce v0-2 and Fetch v0-3 requests built by kafka-python's own protocol classes
  (kafka.protocol.old), which must equal kafkapy's encoding, with the broker's answers decoded
  and re-encoded by them byte for byte, and the fetched records equal to what kafka-python's
  legacy encoder writes for the same messages;
- ``message.downconversion.enable=false``: UNSUPPORTED_VERSION for Fetch v0-3 only.

Topic names are long on purpose: librdkafka sizes its Metadata v0 parse buffer from the
response's length and fails on a tiny response (one short topic, one broker).
"""

from __future__ import annotations

import struct
import time
import uuid
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import (
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_NOT_AVAILABLE,
    Consumer,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KPTopicPartition
from kafka.protocol.old.fetch import (
    FetchRequest_v0,
    FetchRequest_v1,
    FetchRequest_v2,
    FetchRequest_v3,
    FetchResponse_v0,
    FetchResponse_v1,
    FetchResponse_v2,
    FetchResponse_v3,
)
from kafka.protocol.old.list_offsets import ListOffsetsRequest_v0, ListOffsetsResponse_v0
from kafka.protocol.old.produce import (
    ProduceRequest_v0,
    ProduceRequest_v1,
    ProduceRequest_v2,
    ProduceResponse_v0,
    ProduceResponse_v1,
    ProduceResponse_v2,
)
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafkapy.common.topic_partition import TopicPartition as KafkapyTopicPartition
from kafkapy.errors import UnknownTopicOrPartitionError
from kafkapy.protocol import API_KEYS
from kafkapy.protocol.classes import struct_classes
from kafkapy.protocol.records import scan_batches
from kafkapy.testing import BrokerHandle
from tests.clients.client_support import TIMEOUT, RawClient, produce_body, request_frame

PRODUCE, FETCH = 0, 1
UNSUPPORTED_VERSION, INVALID_RECORD, UNSUPPORTED_COMPRESSION_TYPE = 35, 87, 76
CODECS = ("none", "gzip", "snappy", "lz4")
T0 = 1_700_000_000_000
FETCH_REQUEST = struct_classes(API_KEYS[FETCH].request.body)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    with BrokerHandle(tmp_path_factory.mktemp("old-clients")) as handle:
        yield handle


def new_topic(broker: BrokerHandle, prefix: str, config: dict[str, str] | None = None) -> str:
    name = f"old-clients-{prefix}-{uuid.uuid4().hex[:8]}"
    broker.create_topic(name, 1, config)
    return name


def old_conf(fallback: str) -> dict[str, Any]:
    return {"api.version.request": False, "broker.version.fallback": fallback,
            "enable.idempotence": False}


def rd_produce(broker: BrokerHandle, topic: str, messages: list[tuple[Any, ...]],
               **conf: Any) -> list[int]:
    """Produce (key, value, timestamp) with librdkafka; the delivery reports' offsets."""
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, **conf})
    reports: list[Any] = []
    for key, value, ts in messages:
        producer.produce(topic, value=value, key=key, timestamp=ts, partition=0,
                         on_delivery=lambda err, msg: reports.append((err, msg)))
    assert producer.flush(TIMEOUT) == 0
    assert [err for err, _m in reports] == [None] * len(messages)
    return [m.offset() for _e, m in reports]


def rd_consume(broker: BrokerHandle, topic: str, count: int, **conf: Any) -> list[Any]:
    """Read ``count`` messages from offset 0 with librdkafka (assigned: no group offsets)."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers,
                         "group.id": f"g-{uuid.uuid4().hex[:6]}", "enable.auto.commit": False,
                         **conf})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got: list[Any] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            got.append((msg.offset(), msg.key(), msg.value(), msg.timestamp(),
                        msg.headers()))
        assert len(got) == count, got
        return got
    finally:
        consumer.close()


def kp_consume(broker: BrokerHandle, topic: str, count: int,
               api_version: tuple[int, int]) -> list[Any]:
    """Read ``count`` messages from offset 0 with kafka-python pinned to ``api_version``."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers,
                             api_version=api_version, enable_auto_commit=False,
                             consumer_timeout_ms=int(TIMEOUT * 1000))
    try:
        tp = KPTopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        got = []
        for m in consumer:
            got.append((m.offset, m.key, m.value, m.timestamp, m.timestamp_type))
            if len(got) == count:
                break
        assert len(got) == count, got
        return got
    finally:
        consumer.close()


def messages(n: int, tag: str) -> list[tuple[bytes | None, bytes, int]]:
    return [(None if i % 3 == 0 else b"key-%d" % i, b"%s value %d " % (tag.encode(), i) * 3,
             T0 + i) for i in range(n)]


# ============================================================================ librdkafka


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("fallback", ["0.8.2.2", "0.9.0.0"])
def test_librdkafka_fallback_round_trip(broker: BrokerHandle, fallback: str,
                                        codec: str) -> None:
    topic = new_topic(broker, f"{fallback}-{codec}")
    sent = messages(12, codec)
    offsets = rd_produce(broker, topic, sent, **old_conf(fallback), **{
        "compression.codec": codec, "batch.num.messages": 4, "linger.ms": 50})
    assert offsets == list(range(12))
    # Stored as magic 2 batches, with the producer's codec.
    stored = broker.read_all(topic)
    assert [(r.offset, r.key, r.value) for r in stored] == \
        [(i, k, v) for i, (k, v, _ts) in enumerate(sent)]
    # Magic 0 has no timestamps: stored as -1 (CreateTime) ...
    assert {r.timestamp for r in stored} == {-1}
    got = rd_consume(broker, topic, 12, **old_conf(fallback))
    assert [(o, k, v) for o, k, v, _ts, _h in got] == \
        [(i, k, v) for i, (k, v, _ts) in enumerate(sent)]
    # ... and fetched as magic 0 again: "not available" (a v2 record would read as -1).
    assert {ts for _o, _k, _v, ts, _h in got} == {(TIMESTAMP_NOT_AVAILABLE, 0)}


TIMESTAMP_1234 = 1234     # 0052's my_timestamp


@pytest.mark.parametrize("codec", ["none", "gzip"])
@pytest.mark.parametrize("fallback", ["0.10.1.0", "0.9.0.0"])
@pytest.mark.parametrize("tstype", ["CreateTime", "LogAppendTime"])
def test_librdkafka_0052_msg_timestamps(broker: BrokerHandle, tstype: str, fallback: str,
                                        codec: str) -> None:
    """librdkafka's 0052-msg_timestamps: 20 messages with timestamp 1234, in message sets of
    4, to a topic with ``message.timestamp.type`` = ``tstype``; a consumer then sees 1234
    (CreateTime, a producer that sends timestamps), the broker's time (LogAppendTime), or
    no timestamp (-1: CreateTime, and a 0.9 producer which cannot send one)."""
    topic = new_topic(broker, f"0052-{tstype}-{fallback}-{codec}",
                      {"message.timestamp.type": tstype})
    conf: dict[str, Any] = {"compression.codec": codec, "batch.num.messages": 4,
                            "broker.version.fallback": fallback}
    if fallback.startswith("0.9"):
        conf.update(old_conf(fallback))
    before = int(time.time() * 1000)
    rd_produce(broker, topic, [(b"key-%d" % i, b"msg %d" % i, TIMESTAMP_1234)
                               for i in range(20)], **conf)
    after = int(time.time() * 1000)
    got = rd_consume(broker, topic, 20)
    assert [v for _o, _k, v, _ts, _h in got] == [b"msg %d" % i for i in range(20)]
    stamps = {ts for _o, _k, _v, ts, _h in got}
    if tstype == "LogAppendTime":
        assert {t for t, _ in stamps} == {TIMESTAMP_LOG_APPEND_TIME}
        assert all(before <= ms <= after for _t, ms in stamps), stamps
    elif fallback.startswith("0.9"):
        assert stamps == {(TIMESTAMP_CREATE_TIME, -1)}
    else:
        assert stamps == {(TIMESTAMP_CREATE_TIME, TIMESTAMP_1234)}
    # An old consumer: magic 1 (kafka-python at 0.10, Fetch v2) carries the same timestamps
    # and their type; magic 0 (librdkafka at 0.9, Fetch v1) none.
    old = kp_consume(broker, topic, 20, (0, 10))
    assert [(t, ms) for _o, _k, _v, ms, t in old] == \
        [(t - 1, ms) for _o, _k, _v, (t, ms), _h in got]
    oldest = rd_consume(broker, topic, 20, **old_conf("0.9.0.0"))
    assert {ts for _o, _k, _v, ts, _h in oldest} == {(TIMESTAMP_NOT_AVAILABLE, 0)}


# =========================================================================== kafka-python


@pytest.mark.parametrize("compression", [None, "gzip"])
@pytest.mark.parametrize("api_version", [(0, 10), (0, 9)], ids=["0.10", "0.9"])
def test_kafka_python_pinned_old(broker: BrokerHandle, api_version: tuple[int, int],
                                 compression: str | None) -> None:
    topic = new_topic(broker, f"kp-{api_version[1]}-{compression}")
    sent = messages(8, "kp")
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers,
                             api_version=api_version, compression_type=compression)
    try:
        futures = [producer.send(topic, key=k, value=v, partition=0, timestamp_ms=ts)
                   for k, v, ts in sent]
        metadata = [f.get(timeout=TIMEOUT) for f in futures]
    finally:
        producer.close()
    assert [m.offset for m in metadata] == list(range(8))
    got = kp_consume(broker, topic, 8, api_version)
    # Magic 1 (0.10) carries the producer's timestamps; magic 0 (0.9) has none.
    assert [(o, k, v, ts) for o, k, v, ts, _t in got] == \
        [(i, k, v, ts if api_version >= (0, 10) else None) for i, (k, v, ts) in enumerate(sent)]


# ============================================================= modern writers, old readers


@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_headers_dropped_for_old_consumers(broker: BrokerHandle, codec: str) -> None:
    topic = new_topic(broker, f"headers-{codec}")
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers,
                         "compression.codec": codec, "linger.ms": 20})
    for i in range(6):
        producer.produce(topic, value=b"value %d" % i, key=b"k%d" % i, partition=0,
                         headers=[("trace", b"t%d" % i)], timestamp=T0 + i)
    assert producer.flush(TIMEOUT) == 0
    modern = rd_consume(broker, topic, 6)
    assert [h for *_rest, h in modern] == [[("trace", b"t%d" % i)] for i in range(6)]
    for fallback in ("0.8.2.2", "0.9.0.0"):
        old = rd_consume(broker, topic, 6, **old_conf(fallback))
        assert [(o, k, v, h) for o, k, v, _ts, h in old] == \
            [(i, b"k%d" % i, b"value %d" % i, None) for i in range(6)]
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, api_version=(0, 10),
                             enable_auto_commit=False, consumer_timeout_ms=int(TIMEOUT * 1000))
    try:
        tp = KPTopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 2)
        got = [(m.offset, m.value, m.headers, m.timestamp) for _i, m in zip(range(4), consumer,
                                                                             strict=False)]
    finally:
        consumer.close()
    assert got == [(i, b"value %d" % i, [], T0 + i) for i in range(2, 6)]


def test_transactions_read_by_an_old_consumer(broker: BrokerHandle) -> None:
    """Fetch v0-3 readers read uncommitted: aborted records are there, control records
    (the markers) are not, so offsets skip them."""
    topic = new_topic(broker, "txn")
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers,
                         "transactional.id": f"old-reader-{uuid.uuid4().hex[:6]}"})
    producer.init_transactions(TIMEOUT)
    for outcome in ("commit", "abort"):
        producer.begin_transaction()
        for i in range(2):
            producer.produce(topic, value=b"%s %d" % (outcome.encode(), i), partition=0)
        producer.flush(TIMEOUT)
        if outcome == "commit":
            producer.commit_transaction(TIMEOUT)
        else:
            producer.abort_transaction(TIMEOUT)
    expected = [(0, b"commit 0"), (1, b"commit 1"), (3, b"abort 0"), (4, b"abort 1")]
    old = rd_consume(broker, topic, 4, **old_conf("0.9.0.0"))
    assert [(o, v) for o, _k, v, _ts, _h in old] == expected
    assert [(o, v) for o, _k, v, _ts, _t in kp_consume(broker, topic, 4, (0, 10))] == expected


# ==================================================================== raw, byte for byte

PRODUCE_CLASSES = {0: (ProduceRequest_v0, ProduceResponse_v0),
                   1: (ProduceRequest_v1, ProduceResponse_v1),
                   2: (ProduceRequest_v2, ProduceResponse_v2)}
FETCH_CLASSES = {0: (FetchRequest_v0, FetchResponse_v0), 1: (FetchRequest_v1, FetchResponse_v1),
                 2: (FetchRequest_v2, FetchResponse_v2), 3: (FetchRequest_v3, FetchResponse_v3)}


def legacy(magic: int, msgs: list[tuple[bytes | None, bytes, int]], first: int = 0,
           codec: int = 0) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i, (key, value, ts) in enumerate(msgs):
        assert builder.append(first + i, ts if magic else None, key, value) is not None
    return bytes(builder.build())


def raw_round_trip(client: RawClient, request: Any, response_class: Any) -> Any:
    client.correlation_id += 1
    request.with_header(correlation_id=client.correlation_id, client_id="kafkapy-raw")
    client.send(request.encode(header=True, framed=True))
    frame = client.receive_frame()
    response = response_class.decode(frame, header=True)
    assert response.header.correlation_id == client.correlation_id
    # kafka-python's schema re-encodes the broker's answer to the same bytes.
    assert response.encode(header=True) == frame
    return response


@pytest.mark.parametrize("tstype", ["CreateTime", "LogAppendTime"])
@pytest.mark.parametrize("version", [0, 1, 2])
def test_raw_produce_v0_2_and_fetch_v0_3(broker: BrokerHandle, version: int,
                                         tstype: str) -> None:
    topic = new_topic(broker, f"raw-p{version}-{tstype}", {"message.timestamp.type": tstype})
    magic = 0 if version < 2 else 1
    msgs = [(b"k%d" % i if i else None, b"raw value %d" % i, T0 + i) for i in range(3)]
    records = legacy(magic, msgs)
    request_cls, response_cls = PRODUCE_CLASSES[version]
    request = request_cls(acks=-1, timeout_ms=int(TIMEOUT * 1000),
                          topic_data=[(topic, [(0, records)])])
    request.with_header(correlation_id=1, client_id="kafkapy-raw")
    # kafkapy encodes the same request to the same bytes.
    assert request.encode(header=True, framed=True) == \
        request_frame(PRODUCE, version, produce_body(topic, records))
    before = int(time.time() * 1000)
    with RawClient(broker.bootstrap_servers) as client:
        response = raw_round_trip(client, request_cls(
            acks=-1, timeout_ms=int(TIMEOUT * 1000), topic_data=[(topic, [(0, records)])]),
            response_cls)
        [(name, [part])] = response.responses
        assert (name, part[0], part[1], part[2]) == (topic, 0, 0, 0)
        if version == 2:
            append_time = part[3]
            if tstype == "CreateTime":
                assert append_time == -1
            else:
                assert before <= append_time <= int(time.time() * 1000)
        for fetch_version, (freq_cls, fresp_cls) in FETCH_CLASSES.items():
            fields: dict[str, Any] = {"replica_id": -1, "max_wait_ms": 100, "min_bytes": 1,
                                      "topics": [(topic, [(0, 0, 1 << 20)])]}
            if fetch_version == 3:
                fields["max_bytes"] = 1 << 20
            theirs = freq_cls(**fields)
            theirs.with_header(correlation_id=1, client_id="kafkapy-raw")
            ours = FETCH_REQUEST["FetchRequest"](
                replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=1 << 20,
                topics=[FETCH_REQUEST["FetchTopic"](topic=topic, partitions=[
                    FETCH_REQUEST["FetchPartition"](partition=0, fetch_offset=0,
                                                    partition_max_bytes=1 << 20)])])
            assert theirs.encode(header=True, framed=True) == \
                request_frame(FETCH, fetch_version, ours)
            fetched = raw_round_trip(client, freq_cls(**fields), fresp_cls)
            [(name, [p])] = fetched.responses
            assert (name, p[0], p[1], p[2]) == (topic, 0, 0, 3)
            data = bytes(p[-1])
            out_magic = 0 if fetch_version <= 1 else 1
            stamp = None if tstype == "CreateTime" else broker.read_all(topic)[0].timestamp
            expected_msgs = [(k, v, (ts if magic == 1 else -1) if stamp is None else stamp)
                             for k, v, ts in msgs]
            expected = legacy(out_magic, expected_msgs)
            if out_magic == 1 and stamp is not None:
                expected = _log_append_time_bits(expected)
            assert data[:len(expected)] == expected
            assert len(data) >= len(expected)


def _log_append_time_bits(messages: bytes) -> bytes:
    """Set the LogAppendTime attribute on each uncompressed magic 1 message (kafka-python's
    legacy builder cannot) and fix its CRC."""
    out = bytearray(messages)
    pos = 0
    while pos < len(out):
        size = struct.unpack_from(">i", out, pos + 8)[0]
        out[pos + 17] |= 0x08
        struct.pack_into(">I", out, pos + 12, zlib.crc32(bytes(out[pos + 16:pos + 12 + size])))
        pos += 12 + size
    return bytes(out)


def test_downconversion_disabled(broker: BrokerHandle) -> None:
    """message.downconversion.enable=false: a consumer's Fetch v0-3 gets UNSUPPORTED_VERSION
    for that partition (and no records); Fetch v4+ is served as before."""
    topic = new_topic(broker, "no-downconversion", {"message.downconversion.enable": "false"})
    rd_produce(broker, topic, messages(3, "x"))
    with RawClient(broker.bootstrap_servers) as client:
        for version in (0, 3):
            freq_cls, fresp_cls = FETCH_CLASSES[version]
            fields: dict[str, Any] = {"replica_id": -1, "max_wait_ms": 100, "min_bytes": 1,
                                      "topics": [(topic, [(0, 0, 1 << 20)])]}
            if version == 3:
                fields["max_bytes"] = 1 << 20
            fetched = raw_round_trip(client, freq_cls(**fields), fresp_cls)
            [(_name, [p])] = fetched.responses
            assert (p[1], p[2], bytes(p[-1])) == (UNSUPPORTED_VERSION, -1, b"")
        body = FETCH_REQUEST["FetchRequest"](
            replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
            topics=[FETCH_REQUEST["FetchTopic"](topic=topic, partitions=[
                FETCH_REQUEST["FetchPartition"](partition=0, fetch_offset=0,
                                                partition_max_bytes=1 << 20)])])
        response = client.request(FETCH, 4, body)
        [part] = response.responses[0].partitions
        assert (part.error_code, part.high_watermark) == (0, 3)
    assert [v for *_r, v, _ts, _h in rd_consume(broker, topic, 3)] == \
        [v for _k, v, _ts in messages(3, "x")]



def test_topic_settings_apply_to_converted_messages(broker: BrokerHandle) -> None:
    """A legacy message set is written as Kafka 3.x's LogValidator writes it: with the topic's
    compression.type, refused (INVALID_RECORD) when a compacted topic gets a null key; a zstd
    topic cannot be fetched below Fetch v10 (UNSUPPORTED_COMPRESSION_TYPE)."""
    gzip_topic = new_topic(broker, "gzip", {"compression.type": "gzip"})
    compacted = new_topic(broker, "compacted", {"cleanup.policy": "compact"})
    zstd_topic = new_topic(broker, "zstd", {"compression.type": "zstd"})
    msgs = [(None, b"no key", T0), (b"k", b"keyed", T0 + 1)]
    with RawClient(broker.bootstrap_servers) as client:
        for topic, expected in ((gzip_topic, 0), (compacted, INVALID_RECORD),
                                (zstd_topic, 0)):
            response = raw_round_trip(client, ProduceRequest_v2(
                acks=-1, timeout_ms=int(TIMEOUT * 1000),
                topic_data=[(topic, [(0, legacy(1, msgs))])]), ProduceResponse_v2)
            [(_name, [part])] = response.responses
            assert part[1] == expected, (topic, part)
        fetched = raw_round_trip(client, FetchRequest_v3(
            replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=1 << 20,
            topics=[(zstd_topic, [(0, 0, 1 << 20)])]), FetchResponse_v3)
        [(_name, [p])] = fetched.responses
        assert (p[1], bytes(p[-1])) == (UNSUPPORTED_COMPRESSION_TYPE, b"")
        # v4-9 too (Kafka's maybeConvertFetchedData, KIP-110); v10 on reads it.
        for version in range(4, 13):       # v13+ names topics by id
            body = FETCH_REQUEST["FetchRequest"](
                replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=1 << 20,
                isolation_level=0, topics=[FETCH_REQUEST["FetchTopic"](
                    topic=zstd_topic, partitions=[
                        FETCH_REQUEST["FetchPartition"](partition=0, fetch_offset=0,
                                                        partition_max_bytes=1 << 20)])])
            [part] = client.request(FETCH, version, body).responses[0].partitions
            if version < 10:
                assert (part.error_code, part.high_watermark) == \
                    (UNSUPPORTED_COMPRESSION_TYPE, -1), version
            else:
                assert (part.error_code, part.high_watermark) == (0, 2), version
                assert len(part.records) > 0
    server = broker.server
    log = broker.call(lambda: server.replica_manager.partitions[
        KafkapyTopicPartition(gzip_topic, 0)].log)
    [header] = scan_batches(broker.call(lambda: log.read(0, 1 << 20).read())).batches
    assert (header.compression, header.record_count) == (1, 2)      # gzip, the topic's
    stored = broker.read_all(gzip_topic)
    assert [(r.key, r.value, r.timestamp) for r in stored] == msgs
    assert broker.read_all(compacted) == []


def test_downconversion_setting_is_dynamic(broker: BrokerHandle) -> None:
    """message.downconversion.enable changes take effect at once, per topic
    (IncrementalAlterConfigs on the topic) and per broker (log.message.downconversion.enable,
    the topics' default)."""
    topic = new_topic(broker, "dynamic-downconversion")
    rd_produce(broker, topic, messages(2, "d"))
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})

    def alter(resource: ConfigResource) -> None:
        for future in admin.incremental_alter_configs([resource]).values():
            future.result(TIMEOUT)

    def fetch_v1_error() -> int:
        with RawClient(broker.bootstrap_servers) as client:
            fetched = raw_round_trip(client, FetchRequest_v1(
                replica_id=-1, max_wait_ms=100, min_bytes=1,
                topics=[(topic, [(0, 0, 1 << 20)])]), FetchResponse_v1)
            [(_name, [p])] = fetched.responses
            return int(p[1])

    def wait_for(error: int) -> None:
        deadline = time.monotonic() + TIMEOUT
        while fetch_v1_error() != error and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fetch_v1_error() == error

    def setting(value: str | None) -> ConfigEntry:
        op = AlterConfigOpType.DELETE if value is None else AlterConfigOpType.SET
        return ConfigEntry("message.downconversion.enable", value or "",
                           incremental_operation=op)

    wait_for(0)
    alter(ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[setting("false")]))
    wait_for(UNSUPPORTED_VERSION)
    alter(ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[setting(None)]))
    wait_for(0)
    node = str(broker.server.node_id)
    broker_setting = ConfigEntry("log.message.downconversion.enable", "false",
                                 incremental_operation=AlterConfigOpType.SET)
    alter(ConfigResource(ResourceType.BROKER, node, incremental_configs=[broker_setting]))
    try:
        wait_for(UNSUPPORTED_VERSION)
    finally:
        broker_setting = ConfigEntry("log.message.downconversion.enable", "",
                                     incremental_operation=AlterConfigOpType.DELETE)
        alter(ConfigResource(ResourceType.BROKER, node, incremental_configs=[broker_setting]))
    wait_for(0)


def test_librdkafka_0_9_group_resumes_from_committed_offsets(broker: BrokerHandle) -> None:
    """A 0.9 consumer group end to end: commit (OffsetCommit v2), then a subscribed member
    (JoinGroup/SyncGroup/Heartbeat v0) resumes from the committed offset (OffsetFetch v1) with
    Fetch v1. (Starting without a committed offset needs ListOffsets v0, not advertised.)"""
    topic = new_topic(broker, "group-0.9")
    group = f"old-group-{uuid.uuid4().hex[:6]}"
    sent = messages(5, "g")
    rd_produce(broker, topic, sent[:3], **old_conf("0.9.0.0"))
    first = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                      "enable.auto.commit": False, **old_conf("0.9.0.0")})
    try:
        first.assign([TopicPartition(topic, 0, 0)])
        got = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < 3 and time.monotonic() < deadline:
            msg = first.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        assert got == [v for _k, v, _ts in sent[:3]]
        first.commit(asynchronous=False)
    finally:
        first.close()
    assert broker.committed_offsets(group) == {(topic, 0): 3}
    rd_produce(broker, topic, sent[3:], **old_conf("0.9.0.0"))
    member = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                       "enable.auto.commit": False, "session.timeout.ms": 6000,
                       **old_conf("0.9.0.0")})
    try:
        member.subscribe([topic])
        rest: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + 3 * TIMEOUT
        while len(rest) < 2 and time.monotonic() < deadline:
            msg = member.poll(0.2)
            if msg is not None and msg.error() is None:
                rest.append((msg.offset(), msg.value()))
    finally:
        member.close()
    assert rest == [(3, sent[3][1]), (4, sent[4][1])]


@pytest.mark.parametrize("api_version", [(0, 10), (0, 9)], ids=["0.10", "0.9"])
@pytest.mark.parametrize("reset", ["earliest", "latest"])
def test_an_old_consumer_without_a_committed_offset_resets(
        broker: BrokerHandle, api_version: tuple[int, int], reset: str) -> None:
    """No committed offset: the consumer asks ListOffsets v0 for the earliest or latest
    offset (``auto_offset_reset``), as kafka-python pinned to 0.9 / 0.10 does."""
    topic = new_topic(broker, f"reset-{api_version[1]}-{reset}")
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers,
                             api_version=api_version)
    for i in range(5):
        producer.send(topic, f"before-{i}".encode(), partition=0)
    producer.flush(TIMEOUT)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers,
                             api_version=api_version, enable_auto_commit=False,
                             auto_offset_reset=reset, group_id=None,
                             consumer_timeout_ms=int(TIMEOUT * 1000))
    try:
        tp = KPTopicPartition(topic, 0)
        consumer.assign([tp])
        assert consumer.position(tp) == (0 if reset == "earliest" else 5)
        producer.send(topic, b"after", partition=0)
        producer.flush(TIMEOUT)
        expected = [f"before-{i}".encode() for i in range(5)] if reset == "earliest" else []
        got = []
        for m in consumer:
            got.append(m.value)
            if m.value == b"after":
                break
        assert got == [*expected, b"after"]
    finally:
        consumer.close()
        producer.close()


def test_raw_list_offsets_v0(broker: BrokerHandle) -> None:
    topic = new_topic(broker, "offsets-v0")
    rd_produce(broker, topic, [(None, b"v%d" % i, 1000 + i) for i in range(7)])
    with RawClient(broker.bootstrap_servers) as client:
        response = raw_round_trip(client, ListOffsetsRequest_v0(
            replica_id=-1, topics=[(topic, [(0, -1, 5), (1, -1, 1)])]), ListOffsetsResponse_v0)
        [(name, parts)] = response.topics
        # One segment: the log end, then its base; partition 1 does not exist.
        assert (name, parts[0]) == (topic, (0, 0, [7, 0]))
        assert parts[1][:2] == (1, UnknownTopicOrPartitionError.code)
        response = raw_round_trip(client, ListOffsetsRequest_v0(
            replica_id=-1, topics=[(topic, [(0, -2, 1)])]), ListOffsetsResponse_v0)
        assert response.topics[0][1][0] == (0, 0, [0])
