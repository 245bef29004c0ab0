"""The three Python Kafka clients behind one small interface, and a raw-socket client.

Each ``produce_*`` sends ``Msg``s to one partition with one client library and returns what
the client reports per message (the offset, or the exception); each ``consume_*`` assigns
one partition (no consumer group: groups are not implemented yet), seeks and returns the next
``count`` records as ``Got`` tuples, normalised so that records read by different libraries
compare equal. Limits are short (a few seconds): the broker is local, so anything slower is a
failure worth seeing.

``RawClient`` speaks size-prefixed frames over a plain socket with requests built by
``kafkapy.protocol.encode_request``: for the bad-input and concurrency tests, where a client
library would refuse to send what we want.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import confluent_kafka
import kafka
import kafka.errors
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition as AioTopicPartition

from kafkapy.protocol import API_KEYS, Request, RequestHeader, decode_response, encode_request
from kafkapy.protocol.classes import struct_classes

TIMEOUT = 10.0
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
CLIENTS = ("confluent", "kafka-python", "aiokafka")

Headers = list[tuple[str, bytes | None]]


@attrs.frozen
class Msg:
    """A record to produce; ``timestamp`` None lets the client take the time."""

    key: bytes | None
    value: bytes | None
    headers: Headers = attrs.field(factory=list)
    timestamp: int | None = None


@attrs.frozen
class Got:
    """A consumed record, whichever library read it."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp: int


def expected(msgs: Sequence[Msg], offsets: Sequence[int], partition: int = 0) -> list[Got]:
    """The ``Got``s that ``msgs`` produced at ``offsets`` must come back as (explicit
    timestamps only)."""
    assert all(m.timestamp is not None for m in msgs)
    return [Got(partition, o, m.key, m.value, list(m.headers), m.timestamp or 0)
            for m, o in zip(msgs, offsets, strict=True)]


def _fail_short(what: str, got: Sequence[Any], count: int) -> None:
    raise AssertionError(f"{what}: {len(got)} of {count} records within {TIMEOUT} s: {got!r}")


# ------------------------------------------------------------------------ confluent-kafka


def produce_confluent(bootstrap: str, topic: str, msgs: Sequence[Msg], *, partition: int = 0,
                      acks: str = "all", compression: str = "none",
                      config: Mapping[str, Any] | None = None, one_by_one: bool = False
                      ) -> list[int | Exception]:
    """``one_by_one``: each message in its own request, acknowledged before the next is
    sent (so one bad message cannot share a batch with good ones)."""
    results: list[int | Exception | None] = [None] * len(msgs)

    def report(i: int) -> Any:
        def on_delivery(err: Any, msg: Any) -> None:
            # acks=0: delivered without an offset (librdkafka's -1001 shows as None)
            offset = msg.offset()
            results[i] = confluent_kafka.KafkaException(err) if err else \
                -1 if offset is None else offset
        return on_delivery

    producer = confluent_kafka.Producer({
        "bootstrap.servers": bootstrap, "acks": acks, "compression.codec": compression,
        "linger.ms": 5, "message.timeout.ms": int(TIMEOUT * 1000), **(config or {})})
    for i, m in enumerate(msgs):
        kwargs: dict[str, Any] = {"headers": m.headers} if m.headers else {}
        if m.timestamp is not None:
            kwargs["timestamp"] = m.timestamp
        producer.produce(topic, m.value, m.key, partition=partition, on_delivery=report(i),
                         **kwargs)
        if one_by_one:
            producer.flush(TIMEOUT)
        else:
            producer.poll(0)
    remaining = producer.flush(TIMEOUT)
    assert remaining == 0, f"confluent producer: {remaining} messages not delivered"
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


def confluent_consumer(bootstrap: str, config: Mapping[str, Any] | None = None
                       ) -> confluent_kafka.Consumer:
    # group.id is required by librdkafka even without subscribe; nothing is committed.
    return confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": "kafkapy-tests",
        "enable.auto.commit": False, "enable.auto.offset.store": False,
        "fetch.wait.max.ms": 100, **(config or {})})


def consume_confluent(bootstrap: str, topic: str, count: int, *, partition: int = 0,
                      start: int = 0, config: Mapping[str, Any] | None = None) -> list[Got]:
    consumer = confluent_consumer(bootstrap, config)
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, partition, start)])
        got: list[Got] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < count and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is None:
                continue
            if m.error():
                raise confluent_kafka.KafkaException(m.error())
            got.append(Got(m.partition(), m.offset(), m.key(), m.value(),
                           list(m.headers() or []), m.timestamp()[1]))
        if len(got) < count:
            _fail_short("confluent consumer", got, count)
        return got
    finally:
        consumer.close()


# --------------------------------------------------------------------------- kafka-python


def produce_kafka_python(bootstrap: str, topic: str, msgs: Sequence[Msg], *,
                         partition: int = 0, acks: str = "all", compression: str = "none",
                         config: Mapping[str, Any] | None = None, one_by_one: bool = False
                         ) -> list[int | Exception]:
    # Idempotence off: kafka-python 3 turns it on by default (KIP-679), but it needs acks=all
    # and these runs use acks 0 and 1 too. Idempotent producers: tests/clients/
    # test_idempotence.py.
    producer = kafka.KafkaProducer(**{
        "bootstrap_servers": bootstrap,
        "acks": 0 if acks == "0" else 1 if acks == "1" else "all",
        "compression_type": None if compression == "none" else compression, "linger_ms": 5,
        "request_timeout_ms": int(TIMEOUT * 1000), "enable_idempotence": False,
        **(config or {})})
    try:
        futures = []
        for m in msgs:
            futures.append(producer.send(topic, value=m.value, key=m.key, partition=partition,
                                         headers=m.headers or None, timestamp_ms=m.timestamp))
            if one_by_one:
                producer.flush(TIMEOUT)
        producer.flush(TIMEOUT)
        results: list[int | Exception] = []
        for f in futures:
            try:
                results.append(f.get(TIMEOUT).offset)
            except kafka.errors.KafkaError as e:
                results.append(e)
        return results
    finally:
        producer.close(timeout=TIMEOUT)


def kafka_python_consumer(bootstrap: str, config: Mapping[str, Any] | None = None
                          ) -> kafka.KafkaConsumer:
    return kafka.KafkaConsumer(**{"bootstrap_servers": bootstrap, "group_id": None,
                                  "enable_auto_commit": False, "fetch_max_wait_ms": 100,
                                  **(config or {})})


def consume_kafka_python(bootstrap: str, topic: str, count: int, *, partition: int = 0,
                         start: int = 0, config: Mapping[str, Any] | None = None
                         ) -> list[Got]:
    consumer = kafka_python_consumer(bootstrap, config)
    try:
        tp = kafka.TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, start)
        got: list[Got] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < count and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=200).values():
                got.extend(Got(r.partition, r.offset, r.key, r.value, list(r.headers),
                               r.timestamp) for r in records)
        if len(got) < count:
            _fail_short("kafka-python consumer", got, count)
        return got
    finally:
        consumer.close()


# -------------------------------------------------------------------------------- aiokafka


def produce_aiokafka(bootstrap: str, topic: str, msgs: Sequence[Msg], *, partition: int = 0,
                     acks: str = "all", compression: str = "none",
                     config: Mapping[str, Any] | None = None, one_by_one: bool = False
                     ) -> list[int | Exception]:
    async def main() -> list[int | Exception]:
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap,
            acks=0 if acks == "0" else 1 if acks == "1" else "all",
            compression_type=None if compression == "none" else compression, linger_ms=5,
            request_timeout_ms=int(TIMEOUT * 1000), **(config or {}))
        await producer.start()
        try:
            futures = []
            for m in msgs:
                futures.append(await producer.send(topic, m.value, m.key, partition=partition,
                                                   timestamp_ms=m.timestamp,
                                                   headers=m.headers or None))
                if one_by_one:
                    await asyncio.wait([futures[-1]], timeout=TIMEOUT)
            results: list[int | Exception] = []
            for f in futures:
                try:
                    metadata = await asyncio.wait_for(f, TIMEOUT)
                    # acks=0: aiokafka resolves the future with None (no offset)
                    results.append(-1 if metadata is None else metadata.offset)
                except Exception as e:
                    results.append(e)
            return results
        finally:
            await producer.stop()

    return asyncio.run(main())


def consume_aiokafka(bootstrap: str, topic: str, count: int, *, partition: int = 0,
                     start: int = 0, config: Mapping[str, Any] | None = None) -> list[Got]:
    async def main() -> list[Got]:
        consumer = AIOKafkaConsumer(**{"bootstrap_servers": bootstrap, "group_id": None,
                                       "enable_auto_commit": False, "fetch_max_wait_ms": 100,
                                       **(config or {})})
        await consumer.start()
        try:
            tp = AioTopicPartition(topic, partition)
            consumer.assign([tp])
            consumer.seek(tp, start)
            got: list[Got] = []
            deadline = time.monotonic() + TIMEOUT
            while len(got) < count and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=200)
                for records in batches.values():
                    got.extend(Got(r.partition, r.offset, r.key, r.value, list(r.headers),
                                   r.timestamp) for r in records)
            if len(got) < count:
                _fail_short("aiokafka consumer", got, count)
            return got
        finally:
            await consumer.stop()

    return asyncio.run(main())


PRODUCERS = {"confluent": produce_confluent, "kafka-python": produce_kafka_python,
             "aiokafka": produce_aiokafka}
CONSUMERS = {"confluent": consume_confluent, "kafka-python": consume_kafka_python,
             "aiokafka": consume_aiokafka}


# ---------------------------------------------------------------------------- raw sockets

PRODUCE_REQUEST = struct_classes(API_KEYS[0].request.body)
METADATA_REQUEST = struct_classes(API_KEYS[3].request.body)


def produce_body(topic: str, records: bytes, *, partition: int = 0, acks: int = -1) -> Any:
    C = PRODUCE_REQUEST
    return C["ProduceRequest"](
        transactional_id=None, acks=acks, timeout_ms=int(TIMEOUT * 1000),
        topic_data=[C["TopicProduceData"](name=topic, partition_data=[
            C["PartitionProduceData"](index=partition, records=records)])])


def metadata_body(topics: Sequence[str] | None) -> Any:
    C = METADATA_REQUEST
    return C["MetadataRequest"](
        topics=None if topics is None else [C["MetadataRequestTopic"](name=t) for t in topics],
        allow_auto_topic_creation=False)


def request_frame(api_key: int, version: int, body: Any, correlation_id: int = 1) -> bytes:
    """A size-prefixed request."""
    header = RequestHeader(api_key=api_key, api_version=version,
                           correlation_id=correlation_id, client_id="kafkapy-raw")
    payload = encode_request(Request(header, body))
    return struct.pack(">i", len(payload)) + payload


class RawClient:
    """A blocking socket speaking Kafka frames; a context manager that closes it."""

    def __init__(self, bootstrap: str, timeout: float = TIMEOUT) -> None:
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_request(self, api_key: int, version: int, body: Any) -> int:
        """Send a request; returns its correlation id."""
        self.correlation_id += 1
        self.send(request_frame(api_key, version, body, self.correlation_id))
        return self.correlation_id

    def receive_frame(self) -> bytes:
        (size,) = struct.unpack(">i", self._receive_exactly(4))
        return self._receive_exactly(size)

    def receive_response(self, api_key: int, version: int) -> Any:
        """The next response, decoded; raises EOFError if the broker closed instead."""
        response = decode_response(api_key, version, self.receive_frame())
        return response

    def request(self, api_key: int, version: int, body: Any) -> Any:
        """One round trip; returns the response body (asserting the correlation id)."""
        correlation_id = self.send_request(api_key, version, body)
        response = self.receive_response(api_key, version)
        assert response.header.correlation_id == correlation_id
        return response.body

    def closed_by_broker(self, timeout: float = 5.0) -> bool:
        """True once the broker has closed the connection (EOF or reset) without sending
        anything; False if it is still open after ``timeout``. Bytes arriving instead are a
        failure (the broker answered when it should have closed)."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
        finally:
            self.sock.settimeout(TIMEOUT)
        assert data == b"", f"expected the connection to close, got {data[:64]!r}"
        return True

    def _receive_exactly(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = self.sock.recv(min(size - len(data), 1 << 20))
            if not chunk:
                raise EOFError(f"connection closed after {len(data)} of {size} bytes")
            data += chunk
        return bytes(data)
