"""The compiled Produce paths (``produce_now``, ``produce_frame``) answer as
``handle_produce`` does.

Three real brokers get the same sequence of raw Produce requests over real sockets: one
serving Produce as it ships (``NOW_HANDLERS`` in the poll task's step, then
``FRAME_HANDLERS``), one with the now-handler taken out, and one with both taken out (every
Produce goes through the decoded body and ``handle_produce``); each table is emptied before
its broker starts. The requests: v3 to v11, acks 1, -1 and 0, several topics and partitions,
a partition that does not exist, a batch that is refused before the log (two batches, null
records, zstd below v7, a control batch), a partition twice in one request, transactional
batches without a transactional id (one partition twice) and with one no coordinator knows,
and acks=2 (which the fast paths leave to the handler). Every answer is byte-equal between
the three, the logs hold the same records, the first broker answered the common requests in
the poll task's step with one compiled call (counted), and the second served them with the
compiled codec (the generic one never touched it). acks=0 with a failed partition closes the
connection on all three.
"""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Iterator
from typing import Any

import pytest

from kafkapy import _produce
from kafkapy.protocol import ApiKey, Request, encode_request
from kafkapy.protocol.message_classes import (
    PartitionProduceData,
    ProduceRequest,
    RequestHeader,
    TopicProduceData,
)
from kafkapy.protocol.records import build_batch
from kafkapy.server.handlers import produce
from kafkapy.testing import BrokerFactory, BrokerHandle

TIMEOUT = 10.0


class _Counting:
    """``kafkapy._produce`` with its calls counted (the fast path's trace)."""

    def __init__(self) -> None:
        self.decoded = 0
        self.encoded = 0
        self.MIN_VERSION = _produce.MIN_VERSION
        self.MAX_VERSION = _produce.MAX_VERSION

    def decode_produce(self, *args: Any) -> Any:
        self.decoded += 1
        return _produce.decode_produce(*args)

    def encode_produce_response(self, *args: Any) -> bytes:
        self.encoded += 1
        return _produce.encode_produce_response(*args)

    def __getattr__(self, name: str) -> Any:       # produce_now and its constants
        return getattr(_produce, name)


def batch(n: int, *, transactional: bool = False, compression: int = 0,
          control: bool = False) -> bytes:
    return build_batch([(b"k%d" % i, b"value-%d" % i, None, 1_700_000_000_000 + i)
                        for i in range(n)],
                       compression=compression, is_transactional=transactional,
                       is_control=control,
                       producer_id=11 if transactional else -1,
                       producer_epoch=0 if transactional else -1,
                       base_sequence=0 if transactional else -1)


def request(topics: list[tuple[str, list[tuple[int, bytes | None]]]], *, acks: int = 1,
            transactional_id: str | None = None) -> ProduceRequest:
    return ProduceRequest(transactional_id=transactional_id, acks=acks,
                          timeout_ms=int(TIMEOUT * 1000), topic_data=[
                              TopicProduceData(name=name, partition_data=[
                                  PartitionProduceData(index=i, records=r) for i, r in parts])
                              for name, parts in topics])


class Conn:
    def __init__(self, broker: BrokerHandle) -> None:
        host, port = broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        self.correlation_id = 0

    def send(self, version: int, body: ProduceRequest, trailing: bytes = b"") -> None:
        self.correlation_id += 1
        header = RequestHeader(api_key=ApiKey.PRODUCE, api_version=version,
                               correlation_id=self.correlation_id, client_id="fast-path")
        payload = encode_request(Request(header, body)) + trailing
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def receive(self) -> bytes:
        (size,) = struct.unpack(">i", self._exactly(4))
        return self._exactly(size)

    def closed(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def _exactly(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise EOFError("the broker closed the connection")
            out += chunk
        return out


def script() -> Iterator[tuple[int, ProduceRequest, bool]]:
    """(version, request, answered) in order."""
    for version in range(3, 12):
        yield version, request([("a", [(0, batch(1))])]), True
        yield version, request([("a", [(1, batch(3)), (2, batch(2))]),
                                ("b", [(0, batch(1)), (1, batch(4))])], acks=-1), True
        yield version, request([("a", [(0, batch(2))]), ("nope", [(0, batch(1))]),
                                ("b", [(7, batch(1))])]), True
        yield version, request([("a", [(0, batch(1) + batch(1)), (1, None),
                                       (2, batch(1, compression=4)), (1, batch(1))])]), True
        yield version, request([("a", [(1, batch(1, control=True)), (1, batch(2))])]), True
        yield version, request([("b", [(0, batch(2))])], acks=0), False
        yield version, request([("b", [(1, batch(1, transactional=True))])]), True
        yield version, request([("b", [(1, batch(1, transactional=True)),
                                       (1, batch(1, transactional=True))])]), True
        yield version, request([("b", [(1, batch(1, transactional=True)), (0, batch(1))])],
                               transactional_id="nobody's"), True
        yield version, request([("b", [(1, batch(1))])], acks=2), True


class _CountingNow:
    """``produce_now`` with the requests it answered counted."""

    def __init__(self) -> None:
        self.answered = 0

    def __call__(self, *args: Any) -> Any:
        answer = produce.produce_now(*args)
        self.answered += answer is not None
        return answer


Brokers = tuple[BrokerHandle, BrokerHandle, BrokerHandle, _CountingNow, _Counting]


@pytest.fixture
def brokers(kafka_broker_factory: BrokerFactory, monkeypatch: pytest.MonkeyPatch) -> Brokers:
    now = _CountingNow()
    monkeypatch.setattr(produce, "NOW_HANDLERS", {ApiKey.PRODUCE: now})
    shipped = kafka_broker_factory()
    counting = _Counting()
    monkeypatch.setattr(produce, "_produce", counting)
    monkeypatch.setattr(produce, "NOW_HANDLERS", {})
    frame = kafka_broker_factory()
    monkeypatch.setattr(produce, "FRAME_HANDLERS", {})
    generic = kafka_broker_factory()
    for broker in (shipped, frame, generic):
        broker.create_topic("a", 3)
        broker.create_topic("b", 2)
    return shipped, frame, generic, now, counting


def test_fast_paths_answer_as_the_handler(brokers: Brokers) -> None:
    shipped, frame, generic, now, counting = brokers
    conns = Conn(shipped), Conn(frame), Conn(generic)
    try:
        answered = _run(conns)
    finally:
        for conn in conns:
            conn.sock.close()
    for topic, partitions in (("a", 3), ("b", 2)):
        for p in range(partitions):
            expected = [(r.offset, r.key, r.value) for r in generic.read_all(topic, p)]
            for broker in (shipped, frame):
                assert [(r.offset, r.key, r.value) for r in broker.read_all(topic, p)] == \
                    expected
    assert len(generic.read_all("a")) > 0 and len(generic.read_all("b")) > 0
    assert answered == 9 * 9
    # The shipped broker answered in the poll task's step (one compiled call, no
    # decode_produce) the requests with every partition hosted and accepted and nothing
    # transactional, 3 per version (acks 1, acks -1, acks 0), and the first after the script.
    assert now.answered == 9 * 3 + 1
    # ``_produce`` (patched after the shipped broker started, but a module global read at
    # each call) counts both fast brokers' decodes: the frame broker decoded every request
    # (9 versions x 10, and 2 more) and encoded its answers, 8 per version and 1 more (acks=2
    # is the handler's; acks=0 has no answer); the shipped broker decoded in produce_frame the
    # 7 per version that produce_now declined and the last request, and encoded the answers
    # of the 6 per version that produce_frame serves (acks=2 is the handler's).
    assert counting.decoded == (9 * 10 + 2) + (9 * 7 + 1)
    assert counting.encoded == (9 * 8 + 1) + 9 * 6


def _run(conns: tuple[Conn, ...]) -> int:
    """The script on every connection; the answers compared as they come; how many."""
    answered = 0
    for version, body, answer in script():
        for conn in conns:
            conn.send(version, body)
        if answer:
            first, *others = (conn.receive() for conn in conns)
            assert all(other == first for other in others), f"v{version} {body}"
            answered += 1
    # the last acks=0 request went unanswered on all; the connections are still open
    for conn in conns:
        conn.send(11, request([("a", [(0, batch(1))])]))
    first, *others = (conn.receive() for conn in conns)
    assert all(other == first for other in others)
    # acks=0 with a failed partition: all close the connection
    for conn in conns:
        conn.send(9, request([("nope", [(0, batch(1))])], acks=0))
        assert conn.closed()
    return answered


def test_bytes_after_the_body_are_ignored_and_logged_at_debug(
        kafka_broker_factory: BrokerFactory, caplog: pytest.LogCaptureFixture) -> None:
    """As the generic path: the request is served, and the request log says what it
    ignored (with DEBUG on, produce_now leaves the request to produce_frame)."""
    broker = kafka_broker_factory()
    broker.create_topic("a", 1)
    conn = Conn(broker)
    try:
        with caplog.at_level(logging.DEBUG, logger="kafkapy.server.kafka_apis"):
            conn.send(9, request([("a", [(0, batch(2))])]), trailing=b"xyz")
            answer = conn.receive()
    finally:
        conn.sock.close()
    assert [(r.offset, r.value) for r in broker.read_all("a", 0)] == \
        [(0, b"value-0"), (1, b"value-1")]
    assert answer[:4] == struct.pack(">i", 1)       # correlation id 1 answered
    assert any("Produce v9 request (correlation id 1)" in m and
               "ignoring 3 bytes after the body" in m for m in caplog.messages), caplog.text
