"""Produce per-record errors (KIP-467) with real clients against an embedded ``kafkapy.Broker``.

- confluent-kafka (librdkafka, librdkafka's test 0011 ``record_fail``): in one batch, the
  records the broker names fail with its error, the batch's other records with
  ``_INVALID_DIFFERENT_RECORD``; one record per batch, only the bad ones fail.
- kafka-python: the named records fail with their message (InvalidRecordError /
  InvalidTimestampError), the others with "part of a batch which had one more more invalid
  records".
- raw Produce v8-v11: RecordErrors and ErrorMessage, byte for byte as kafka-python's own
  ProduceResponse encoder writes what it decodes, and nothing appended.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaProducer
from kafka import errors as kp_errors
from kafka.protocol.producer import ProduceResponse as KPProduceResponse

from kafkapy import Broker
from kafkapy.protocol.records import build_batch
from tests.clients.client_support import RawClient, produce_body

TIMEOUT = 10.0
ONE_HOUR = 3_600_000


@pytest.fixture(scope="module")
def broker() -> Iterator[Broker]:
    with Broker() as b:
        yield b


def _topic(broker: Broker, request: pytest.FixtureRequest, config: dict[str, str]) -> str:
    name = re.sub(r"[^a-zA-Z0-9._-]", "-", request.node.name)[:120]
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    (future,) = admin.create_topics([NewTopic(name, 1, 1, config=config)],
                                    operation_timeout=TIMEOUT).values()
    future.result(timeout=TIMEOUT)
    return name


def _compacted(broker: Broker, request: pytest.FixtureRequest) -> str:
    return _topic(broker, request, {"cleanup.policy": "compact"})


def _confluent_produce(broker: Broker, topic: str, msgs: list[tuple[bytes | None, int | None]],
                       **conf: Any) -> list[int]:
    """Error code per message (0: delivered), in produce order."""
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers,
                                         "linger.ms": 200, "log_level": 3, **conf})
    codes: list[int | None] = [None] * len(msgs)

    def report(i: int) -> Any:
        def cb(err: KafkaError | None, _msg: Any) -> None:
            codes[i] = 0 if err is None else err.code()
        return cb

    for i, (key, ts) in enumerate(msgs):
        kwargs: dict[str, Any] = {"timestamp": ts} if ts is not None else {}
        producer.produce(topic, value=b"v%d" % i, key=key, partition=0,
                         on_delivery=report(i), **kwargs)
    assert producer.flush(TIMEOUT) == 0
    assert None not in codes
    return [c for c in codes if c is not None]


def _end_offset(broker: Broker, topic: str) -> int:
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap_servers,
                                         "group.id": "unused"})
    try:
        _low, high = consumer.get_watermark_offsets(confluent_kafka.TopicPartition(topic, 0),
                                                    timeout=TIMEOUT)
        return int(high)
    finally:
        consumer.close()


KEYLESS = [None if i % 10 == 0 else b"key-%d" % i for i in range(100)]


def test_confluent_one_batch_fails_whole(broker: Broker, request: pytest.FixtureRequest) -> None:
    topic = _compacted(broker, request)
    codes = _confluent_produce(broker, topic, [(k, None) for k in KEYLESS])
    assert [i for i, c in enumerate(codes) if c == KafkaError.INVALID_RECORD] == \
        list(range(0, 100, 10))
    assert sum(c == KafkaError._INVALID_DIFFERENT_RECORD for c in codes) == 90
    assert _end_offset(broker, topic) == 0


def test_confluent_one_record_per_batch(broker: Broker, request: pytest.FixtureRequest) -> None:
    topic = _compacted(broker, request)
    codes = _confluent_produce(broker, topic, [(k, None) for k in KEYLESS], **{
        "batch.size": 1})
    assert [i for i, c in enumerate(codes) if c == KafkaError.INVALID_RECORD] == \
        list(range(0, 100, 10))
    assert sum(c == 0 for c in codes) == 90
    assert _end_offset(broker, topic) == 90


def test_confluent_timestamps(broker: Broker, request: pytest.FixtureRequest) -> None:
    topic = _topic(broker, request, {"message.timestamp.before.max.ms": str(ONE_HOUR),
                                     "message.timestamp.after.max.ms": str(ONE_HOUR)})
    now = int(time.time() * 1000)
    stamps = [now, now - 3 * ONE_HOUR, now, now + 3 * ONE_HOUR, now]
    codes = _confluent_produce(broker, topic, [(b"k", ts) for ts in stamps])
    # The partition's error is INVALID_TIMESTAMP (test_raw_timestamps), but librdkafka 2.16
    # reports the records named in RecordErrors as INVALID_RECORD all the same.
    assert codes == [KafkaError._INVALID_DIFFERENT_RECORD, KafkaError.INVALID_RECORD,
                     KafkaError._INVALID_DIFFERENT_RECORD, KafkaError.INVALID_RECORD,
                     KafkaError._INVALID_DIFFERENT_RECORD]
    assert _end_offset(broker, topic) == 0


def test_kafka_python(broker: Broker, request: pytest.FixtureRequest) -> None:
    topic = _compacted(broker, request)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, linger_ms=200,
                             request_timeout_ms=int(TIMEOUT * 1000))
    try:
        futures = [producer.send(topic, value=b"v", key=k, partition=0)
                   for k in (b"a", None, b"b", None)]
        producer.flush(timeout=TIMEOUT)
    finally:
        producer.close(timeout=TIMEOUT)
    errors = [f.exception for f in futures]
    message = f"Compacted topic cannot accept message without key in topic partition {topic}-0"
    for i in (1, 3):
        assert type(errors[i]) is kp_errors.InvalidRecordError
        assert str(errors[i].args[0]) == message
    for i in (0, 2):
        assert type(errors[i]) is kp_errors.KafkaError
        assert "part of a batch which had one more more invalid records" in str(errors[i])


@pytest.mark.parametrize("version", [7, 8, 9, 10, 11])
def test_raw_produce(broker: Broker, request: pytest.FixtureRequest, version: int) -> None:
    topic = _compacted(broker, request)
    records = build_batch([(b"k", b"v", [], -1), (None, b"v", [], -1), (None, b"w", [], -1)])
    with RawClient(broker.bootstrap_servers) as client:
        client.send_request(0, version, produce_body(topic, records))
        frame = client.receive_frame()
    # kafka-python decodes the response independently and re-encodes it to the same bytes.
    body = KPProduceResponse.decode(frame[_header_size(version):], version=version)
    (topic_response,) = body.responses
    (partition,) = topic_response.partition_responses
    assert partition.error_code == 87
    assert (partition.base_offset, partition.log_append_time_ms) == (-1, -1)
    message = f"Compacted topic cannot accept message without key in topic partition {topic}-0"
    if version >= 8:
        assert partition.log_start_offset == 0
        assert [(e.batch_index, e.batch_index_error_message)
                for e in partition.record_errors] == [(1, message), (2, message)]
        shown = ", ".join(f"RecordError(batchIndex={i}, message='{message}')" for i in (1, 2))
        assert partition.error_message == (
            "One or more records have been rejected due to 2 record errors in total, and "
            f"only showing the first three errors at most: [{shown}]")
    flexible = version >= 9
    again = body._struct.encode(body, version=version, compact=flexible, tagged=flexible)
    assert bytes(again) == frame[_header_size(version):]
    assert _end_offset(broker, topic) == 0


def _header_size(version: int) -> int:
    return 4 if version < 9 else 5          # correlation id (+ empty tagged fields)


def test_raw_timestamps(broker: Broker, request: pytest.FixtureRequest) -> None:
    topic = _topic(broker, request, {"message.timestamp.before.max.ms": str(ONE_HOUR)})
    now = int(time.time() * 1000)
    records = build_batch([(b"k", b"v", [], now), (b"k", b"v", [], now - 2 * ONE_HOUR)])
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(0, 9, produce_body(topic, records))
    (partition,) = body.responses[0].partition_responses
    assert partition.error_code == 32
    assert partition.error_message == ("One or more records have been rejected due to "
                                       "invalid timestamp")
    (error,) = partition.record_errors
    assert error.batch_index == 1
    assert re.fullmatch(rf"Timestamp {now - 2 * ONE_HOUR} of message with offset 1 is out "
                        rf"of range. The timestamp should be within \[(\d+), (\d+)\]",
                        error.batch_index_error_message)
    low, high = map(int, re.findall(r"\d+", error.batch_index_error_message)[-2:])
    # [now - before.max.ms, now + after.max.ms (the default, one hour)] at the broker's now.
    assert high - low == 2 * ONE_HOUR and now - ONE_HOUR <= low <= now
