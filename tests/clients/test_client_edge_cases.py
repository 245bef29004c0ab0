"""Bad input, odd requests and many connections, on raw sockets against a real broker.

Whatever one connection sends, the outcome is an error response or that connection closed:
never a broker that stops serving others. Each bad-input case opens a *witness* connection
first and, after the broker has dealt with the bad one, makes it do a Metadata and a Produce
round trip, then a fresh connection does the same.

Requests are built with ``kafkapy.protocol.encode_request`` and record batches with
``build_batch``; responses are decoded with ``decode_response``. The broker is this module's
own (state from other modules cannot mask or cause a failure here).
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Iterator

import pytest

from kafkapy.protocol import API_KEYS, request_class
from kafkapy.protocol.classes import struct_classes
from kafkapy.protocol.records import build_batch
from kafkapy.testing import BrokerHandle
from tests.clients.client_support import (
    RawClient,
    metadata_body,
    produce_body,
    request_frame,
)

PRODUCE, FETCH, LIST_OFFSETS, METADATA, API_VERSIONS = 0, 1, 2, 3, 18
PRODUCE_V, METADATA_V = 9, 12
TOPIC = "edge"
T0 = 1_700_000_000_000

# error codes
CORRUPT_MESSAGE, INVALID_REQUIRED_ACKS, UNSUPPORTED_VERSION = 2, 21, 35
UNKNOWN_TOPIC_OR_PARTITION, INVALID_RECORD = 3, 87


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    with BrokerHandle(tmp_path_factory.mktemp("edge")) as handle:
        handle.create_topic(TOPIC, partitions=4)
        yield handle


def batch(*values: bytes, key: bytes | None = None) -> bytes:
    return build_batch([(key, v, [], T0) for v in values])


def produce_ok(client: RawClient, value: bytes, partition: int = 0) -> int:
    """One acks=all Produce round trip that must succeed; returns the offset."""
    body = client.request(PRODUCE, PRODUCE_V, produce_body(TOPIC, batch(value),
                                                          partition=partition))
    [part] = body.responses[0].partition_responses
    assert (part.index, part.error_code) == (partition, 0), part
    return int(part.base_offset)


def check_serving(broker: BrokerHandle, client: RawClient) -> None:
    """``client`` still gets Metadata and Produce answered, and the value lands in the log."""
    md = client.request(METADATA, METADATA_V, metadata_body([TOPIC]))
    assert [(t.name, t.error_code, len(t.partitions)) for t in md.topics] == [(TOPIC, 0, 4)]
    value = b"still serving %d" % client.correlation_id
    offset = produce_ok(client, value, partition=3)
    [record] = [r for r in broker.read_all(TOPIC, 3) if r.offset == offset]
    assert record.value == value


# ======================================================================== bad input


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def _produce_frame() -> bytes:
    return request_frame(PRODUCE, PRODUCE_V, produce_body(TOPIC, batch(b"x" * 100)))


def _truncated_body() -> bytes:
    payload = _produce_frame()[4:]
    return _frame(payload[:-20])          # a consistent frame whose body ends too soon


def _header(api_key: int, version: int) -> bytes:
    """A v1 request header (client id "raw") for any key and version, no body."""
    return struct.pack(">hhih", api_key, version, 7, 3) + b"raw"


def _oversized_string() -> bytes:
    """A Metadata v1 request naming a topic whose length runs past the frame."""
    return _frame(_header(METADATA, 1) + struct.pack(">ih", 1, 30000) + b"short")


BAD_FRAMES: dict[str, Callable[[], bytes]] = {
    "garbage": lambda: _frame(bytes(range(251, 256)) * 40),
    "garbage-after-valid-header": lambda: _frame(_header(PRODUCE, PRODUCE_V) + b"\xff" * 64),
    "empty-frame": lambda: _frame(b""),
    "short-header": lambda: _frame(b"\x00\x03\x00"),
    "negative-size": lambda: struct.pack(">i", -5) + b"x" * 16,
    "size-above-socket-request-max-bytes": lambda: struct.pack(">i", 104857600 + 1) + b"x",
    "size-int32-max": lambda: struct.pack(">i", 2**31 - 1),
    "unknown-api-key": lambda: _frame(_header(999, 0) + b"\x00" * 8),
    "negative-api-key": lambda: _frame(_header(-3, 0)),
    "known-but-unserved-api-key": lambda: _frame(_header(27, 1) + b"\x00" * 8),
    "unsupported-version": lambda: _frame(_header(METADATA, 99) + b"\x00" * 8),
    "unsupported-version-fetch": lambda: _frame(_header(FETCH, 3) + b"\x00" * 8),
    "truncated-body": _truncated_body,
    "string-longer-than-frame": _oversized_string,
}


@pytest.mark.parametrize("case", BAD_FRAMES)
def test_bad_frame_closes_only_its_connection(broker: BrokerHandle, case: str) -> None:
    with RawClient(broker.bootstrap_servers) as witness, \
            RawClient(broker.bootstrap_servers) as bad:
        produce_ok(witness, b"before")            # the witness is connected and served
        end = broker.end_offsets(TOPIC)
        bad.send(BAD_FRAMES[case]())
        assert bad.closed_by_broker(), f"{case}: the connection stayed open"
        assert broker.end_offsets(TOPIC) == end, f"{case}: something was appended"
        check_serving(broker, witness)
    with RawClient(broker.bootstrap_servers) as fresh:
        check_serving(broker, fresh)


def test_truncated_on_the_wire(broker: BrokerHandle) -> None:
    """A frame cut short by the client's end of stream: the broker closes, others go on."""
    with RawClient(broker.bootstrap_servers) as witness, \
            RawClient(broker.bootstrap_servers) as bad:
        produce_ok(witness, b"before")
        frame = _produce_frame()
        bad.send(frame[: len(frame) // 2])
        bad.sock.shutdown(1)      # SHUT_WR: no more bytes will come
        assert bad.closed_by_broker()
        check_serving(broker, witness)


def test_good_requests_before_bad_are_answered(broker: BrokerHandle) -> None:
    """Requests pipelined ahead of a bad frame are answered in order, then it closes."""
    with RawClient(broker.bootstrap_servers) as client:
        frames = [request_frame(PRODUCE, PRODUCE_V, produce_body(TOPIC, batch(b"p%d" % i)),
                                correlation_id=100 + i) for i in range(3)]
        client.send(b"".join(frames) + struct.pack(">i", -1))
        offsets = []
        for i in range(3):
            response = client.receive_response(PRODUCE, PRODUCE_V)
            assert response.header.correlation_id == 100 + i
            [part] = response.body.responses[0].partition_responses
            assert part.error_code == 0
            offsets.append(part.base_offset)
        assert offsets == [offsets[0], offsets[0] + 1, offsets[0] + 2]
        assert client.closed_by_broker()


# ======================================================== error responses, not closes


def test_api_versions_newer_than_the_broker(broker: BrokerHandle) -> None:
    """ApiVersions v99: UNSUPPORTED_VERSION in a v0 response that lists ApiVersions'
    supported range, and the connection stays usable."""
    with RawClient(broker.bootstrap_servers) as client:
        # v3+ is flexible, so a newer version comes with request header v2 (tag section)
        client.send(_frame(_header(API_VERSIONS, 99) + b"\x00"))
        response = client.receive_response(API_VERSIONS, 0)
        assert response.header.correlation_id == 7
        assert response.body.error_code == UNSUPPORTED_VERSION
        assert [(k.api_key, k.min_version, k.max_version) for k in response.body.api_keys] == \
            [(API_VERSIONS, 0, 4)]
        check_serving(broker, client)


def test_produce_v2_accepts_a_magic_2_batch(broker: BrokerHandle) -> None:
    """Produce v0-2 are served as Kafka 3.x serves them: a magic 2 batch in v2 is appended
    as in v3+ (legacy message sets: tests/clients/test_old_clients.py)."""
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(PRODUCE, 2, produce_body(TOPIC, batch(b"old")))
        [part] = body.responses[0].partition_responses
        assert (part.error_code, part.log_append_time_ms) == (0, -1)
        [record] = [r for r in broker.read_all(TOPIC, 0) if r.offset == part.base_offset]
        assert record.value == b"old"
        check_serving(broker, client)


def _produce_error(client: RawClient, records: bytes, *, acks: int = -1,
                   topic: str = TOPIC, version: int = PRODUCE_V) -> int:
    body = client.request(PRODUCE, version, produce_body(topic, records, acks=acks))
    [part] = body.responses[0].partition_responses
    return int(part.error_code)


def _corrupt_crc(records: bytes) -> bytes:
    data = bytearray(records)
    data[-1] ^= 0xFF          # the CRC covers the records: it no longer matches
    return bytes(data)


def _magic(records: bytes, magic: int) -> bytes:
    data = bytearray(records)
    data[16] = magic
    return bytes(data)


PRODUCE_ERRORS: dict[str, tuple[Callable[[], bytes], int]] = {
    "corrupt-crc": (lambda: _corrupt_crc(batch(b"v")), CORRUPT_MESSAGE),
    "magic-1": (lambda: _magic(batch(b"v"), 1), INVALID_RECORD),
    "magic-3": (lambda: _magic(batch(b"v"), 3), INVALID_RECORD),
    "two-batches": (lambda: batch(b"a") + batch(b"b"), INVALID_RECORD),
    "not-a-batch": (lambda: b"\x00" * 10, INVALID_RECORD),
    "base-offset-not-0": (lambda: build_batch([(None, b"v", [], T0)], base_offset=5),
                          INVALID_RECORD),
}


@pytest.mark.parametrize("case", PRODUCE_ERRORS)
def test_produce_errors(broker: BrokerHandle, case: str) -> None:
    make, code = PRODUCE_ERRORS[case]
    end = broker.end_offsets(TOPIC)
    with RawClient(broker.bootstrap_servers) as client:
        assert _produce_error(client, make()) == code
        assert broker.end_offsets(TOPIC) == end
        check_serving(broker, client)


def test_produce_invalid_acks(broker: BrokerHandle) -> None:
    with RawClient(broker.bootstrap_servers) as client:
        assert _produce_error(client, batch(b"v"), acks=2) == INVALID_REQUIRED_ACKS
        check_serving(broker, client)


def test_produce_unknown_topic(broker: BrokerHandle) -> None:
    """Produce does not create topics (only Metadata auto-creates)."""
    with RawClient(broker.bootstrap_servers) as client:
        assert _produce_error(client, batch(b"v"), topic="no-such-topic") == \
            UNKNOWN_TOPIC_OR_PARTITION
        check_serving(broker, client)
    assert "no-such-topic" not in broker.topics()


def test_acks_0_success_sends_nothing_and_failure_closes(broker: BrokerHandle) -> None:
    with RawClient(broker.bootstrap_servers) as client:
        end = broker.end_offsets(TOPIC)[0]
        client.send_request(PRODUCE, PRODUCE_V, produce_body(TOPIC, batch(b"fire"), acks=0))
        # No response to acks=0: the next answer on the connection is the Metadata's.
        correlation_id = client.send_request(METADATA, METADATA_V, metadata_body([TOPIC]))
        response = client.receive_response(METADATA, METADATA_V)
        assert response.header.correlation_id == correlation_id
        assert [r.value for r in broker.read_all(TOPIC, 0)][end:] == [b"fire"]
        # A failed acks=0 produce closes the connection, so that the producer notices.
        client.send_request(PRODUCE, PRODUCE_V,
                            produce_body("no-such-topic", batch(b"lost"), acks=0))
        assert client.closed_by_broker()


def test_pipelined_requests_answered_in_order(broker: BrokerHandle) -> None:
    with RawClient(broker.bootstrap_servers) as client:
        frames = []
        for i in range(20):
            if i % 5 == 4:
                frames.append(request_frame(METADATA, METADATA_V, metadata_body([TOPIC]),
                                            correlation_id=i))
            else:
                frames.append(request_frame(PRODUCE, PRODUCE_V,
                                            produce_body(TOPIC, batch(b"pipe%d" % i),
                                                         partition=1), correlation_id=i))
        client.send(b"".join(frames))
        offsets = []
        for i in range(20):
            api = METADATA if i % 5 == 4 else PRODUCE
            response = client.receive_response(api, METADATA_V if api == METADATA
                                               else PRODUCE_V)
            assert response.header.correlation_id == i
            if api == PRODUCE:
                [part] = response.body.responses[0].partition_responses
                assert part.error_code == 0
                offsets.append(part.base_offset)
        assert offsets == list(range(offsets[0], offsets[0] + 16))
        records = {r.offset: r.value for r in broker.read_all(TOPIC, 1)}
        assert [records[o] for o in offsets] == [b"pipe%d" % i for i in range(20)
                                                 if i % 5 != 4]


# ===================================================== request shapes real clients send

LIST_OFFSETS_C = struct_classes(API_KEYS[LIST_OFFSETS].request.body)


@pytest.mark.parametrize("version", range(1, 11))
def test_list_offsets_every_version(broker: BrokerHandle, version: int) -> None:
    """Earliest, latest and by time at every served version (v1-3 have no LeaderEpoch in
    the answer: aiokafka uses them)."""
    topic = f"list-offsets-v{version}"
    broker.create_topic(topic)
    for i in range(3):
        broker.produce(topic, b"v", timestamp=T0 + 10 * i)
    C = LIST_OFFSETS_C
    answers = []
    with RawClient(broker.bootstrap_servers) as client:
        for ts in (-2, -1, T0 + 5, T0 + 100):
            body = C["ListOffsetsRequest"](
                replica_id=-1, isolation_level=0, topics=[C["ListOffsetsTopic"](
                    name=topic, partitions=[C["ListOffsetsPartition"](
                        partition_index=0, timestamp=ts)])])
            [part] = client.request(LIST_OFFSETS, version, body).topics[0].partitions
            answers.append((part.error_code, part.offset, part.timestamp, part.leader_epoch))
    epoch = 0 if version >= 4 else -1       # absent below v4: decoded as its default
    assert answers == [(0, 0, -1, epoch), (0, 3, -1, epoch), (0, 1, T0 + 10, epoch),
                       (0, -1, -1, -1)]


# librdkafka 2.16's Metadata v12 "all topics" request, as captured from confluent-kafka's
# list_topics(): the compact TopicArrayCnt is left as its 4-byte placeholder (00 00 00 00),
# so after the null array come three stray zero bytes and then the real
# AllowAutoTopicCreation (01), IncludeTopicAuthorizedOperations (00) and tags (00). Kafka
# reads the leading fields and ignores what is left; so must kafkapy.
LIBRDKAFKA_ALL_TOPICS = bytes.fromhex("0003000c00000003000772646b61666b610000000000010000")


def test_metadata_all_topics_as_librdkafka_sends_it(broker: BrokerHandle) -> None:
    with RawClient(broker.bootstrap_servers) as client:
        client.send(_frame(LIBRDKAFKA_ALL_TOPICS))
        response = client.receive_response(METADATA, 12)
        assert response.header.correlation_id == 3
        assert sorted(t.name for t in response.body.topics) == sorted(broker.topics())


def test_metadata_empty_and_null_topic_lists(broker: BrokerHandle) -> None:
    """v1+: null asks for every topic, an empty list for none (brokers only)."""
    with RawClient(broker.bootstrap_servers) as client:
        everything = client.request(METADATA, METADATA_V, metadata_body(None))
        assert sorted(t.name for t in everything.topics) == sorted(broker.topics())
        nothing = client.request(METADATA, METADATA_V, metadata_body([]))
        assert nothing.topics == []
        assert [b.node_id for b in nothing.brokers] == [broker.server.node_id]


def test_api_versions_request_body(broker: BrokerHandle) -> None:
    """ApiVersions v3 answers every served API, Produce/Fetch/ListOffsets/Metadata at the
    ranges the clients rely on."""
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(API_VERSIONS, 3, request_class(API_VERSIONS)(
            client_software_name="raw", client_software_version="1"))
        assert body.error_code == 0
        ranges = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
        assert {key: ranges[key] for key in (PRODUCE, FETCH, LIST_OFFSETS, METADATA,
                                             API_VERSIONS)} == \
            {PRODUCE: (0, 11), FETCH: (0, 12), LIST_OFFSETS: (0, 10), METADATA: (0, 12),
             API_VERSIONS: (0, 4)}


# ========================================================= 200 concurrent connections

CONNECTIONS = 200
RECORDS_EACH = 5
PARTITIONS = 4


def test_200_concurrent_producers(tmp_path_factory: pytest.TempPathFactory) -> None:
    """200 connections open at once, each sends one Produce (5 records) at the same moment;
    every record lands exactly once, each connection's batch contiguous at the offset the
    broker answered."""
    with BrokerHandle(tmp_path_factory.mktemp("many")) as handle:
        topic = "many"
        handle.create_topic(topic, partitions=PARTITIONS)
        clients = [RawClient(handle.bootstrap_servers) for _ in range(CONNECTIONS)]
        start = threading.Barrier(CONNECTIONS)
        answers: dict[int, tuple[int, int]] = {}
        errors: list[BaseException] = []

        def run(i: int) -> None:
            try:
                records = build_batch([(b"c%03d-%d" % (i, j), b"value %d of %d" % (j, i),
                                        [("conn", b"%d" % i)], T0 + j)
                                       for j in range(RECORDS_EACH)])
                frame = request_frame(PRODUCE, PRODUCE_V,
                                      produce_body(topic, records, partition=i % PARTITIONS),
                                      correlation_id=i)
                start.wait(timeout=30)
                clients[i].send(frame)
                response = clients[i].receive_response(PRODUCE, PRODUCE_V)
                assert response.header.correlation_id == i
                [part] = response.body.responses[0].partition_responses
                answers[i] = (part.error_code, part.base_offset)
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(CONNECTIONS)]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
        finally:
            for c in clients:
                c.close()
        assert errors == []
        assert len(answers) == CONNECTIONS
        assert {code for code, _ in answers.values()} == {0}
        per_partition = CONNECTIONS // PARTITIONS * RECORDS_EACH
        for p in range(PARTITIONS):
            bases = sorted(base for i, (_, base) in answers.items() if i % PARTITIONS == p)
            assert bases == list(range(0, per_partition, RECORDS_EACH))
        assert handle.end_offsets(topic) == {p: per_partition for p in range(PARTITIONS)}
        records = handle.read_all(topic)
        assert len(records) == CONNECTIONS * RECORDS_EACH
        want = {(i % PARTITIONS, answers[i][1] + j): (b"c%03d-%d" % (i, j),
                                                      b"value %d of %d" % (j, i),
                                                      [("conn", b"%d" % i)], T0 + j)
                for i in range(CONNECTIONS) for j in range(RECORDS_EACH)}
        assert {(r.partition, r.offset): (r.key, r.value, r.headers, r.timestamp)
                for r in records} == want
