"""kafkapy._produce, the compiled Produce codec, against two independent oracles.

- Requests: kafka-python 3.0's ProduceRequest encodes (v3-11) what the compiled decoder must
  read back field by field; kafkapy's schema-driven codec (``kafkapy.protocol.codec``)
  encodes random bodies, unknown tagged fields included, and its own decoder says what they
  hold. The batch checks the decoder makes are ``check_produce_batch``'s (the same header
  or the same error).
- Truncated and malformed bodies raise InvalidRequestError (never anything else).
- Responses: the bytes equal ``encode_response(ApiKey.PRODUCE, v, ...)`` of the
  ProduceResponse the Python handler builds from the same results, for every version, with
  errors, record errors and throttle times.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.api_header import RequestHeader as KPRequestHeader
from kafka.protocol.producer import ProduceRequest as KPProduceRequest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafkapy import _produce
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    CorruptMessageError,
    InvalidRecordError,
    InvalidRequestError,
    KafkaError,
    NotLeaderOrFollowerError,
    UnknownTopicOrPartitionError,
)
from kafkapy.log.log_validator import RecordError
from kafkapy.protocol import API_KEYS, ApiKey, decode_request_header, encode_response
from kafkapy.protocol.codec import Request, decode_request, encode_request
from kafkapy.protocol.message_classes import (
    PartitionProduceData,
    ProduceRequest,
    RequestHeader,
    TopicProduceData,
)
from kafkapy.protocol.records import BatchHeader, check_produce_batch
from kafkapy.server.handlers.produce import _response
from kafkapy.server.replica_manager import ProducePartitionResult
from tests.protocol.strategies import body

VERSIONS = range(_produce.MIN_VERSION, _produce.MAX_VERSION + 1)
MESSAGE = API_KEYS[ApiKey.PRODUCE].request


def batch(values: int, *, transactional: bool = False, codec: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=transactional,
        producer_id=7 if transactional else -1, producer_epoch=1 if transactional else -1,
        base_sequence=0 if transactional else -1, batch_size=1 << 20)
    for i in range(values):
        assert builder.append(i, 1_700_000_000_000 + i, b"k%d" % i, b"v" * (i + 1), []) \
            is not None
    return bytes(builder.build())


def expected_check(records: Any, version: int) -> tuple[type, Any]:
    """What check_produce_batch makes of ``records``: (BatchHeader, its fields) or (the
    error's type, its message)."""
    try:
        h = check_produce_batch(records, version)
    except KafkaError as exc:
        return type(exc), exc.message
    return BatchHeader, (h.batch_length, h.is_transactional, h.producer_id, h.compression)


def seen_check(checked: Any) -> tuple[type, Any]:
    if isinstance(checked, KafkaError):
        return type(checked), checked.message
    assert isinstance(checked, BatchHeader)
    return BatchHeader, (checked.batch_length, checked.is_transactional, checked.producer_id,
                         checked.compression)


def frame_of(version: int, value: ProduceRequest, correlation_id: int = 5) -> bytes:
    header = RequestHeader(api_key=ApiKey.PRODUCE, api_version=version,
                           correlation_id=correlation_id, client_id="codec-test")
    return encode_request(Request(header, value))


def assert_matches(decoded: Any, value: ProduceRequest, version: int) -> None:
    """``decoded`` (the compiled decoder's) holds what kafkapy's own decoder made of the
    same bytes, ``value``."""
    transactional_id, acks, timeout_ms, topics = decoded
    assert (transactional_id, acks, timeout_ms) == (value.transactional_id, value.acks,
                                                    value.timeout_ms)
    assert [name for name, _ in topics] == [t.name for t in value.topic_data]
    for (_, parts), topic in zip(topics, value.topic_data, strict=True):
        assert [index for index, _, _ in parts] == [p.index for p in topic.partition_data]
        for (_, view, checked), part in zip(parts, topic.partition_data, strict=True):
            if part.records is None:
                assert view is None and checked is None
                continue
            assert isinstance(view, memoryview)
            assert bytes(view) == bytes(part.records)
            assert seen_check(checked) == expected_check(part.records, version)


# ------------------------------------------------------------------------ kafka-python oracle

KP_CASES = [
    # (transactional id, acks, timeout, [(topic, [(index, records)])])
    (None, 1, 30_000, [("t", [(0, batch(1))])]),
    (None, -1, 1_500, [("alpha", [(0, batch(3)), (4, batch(1, codec=1))]),
                       ("beta", [(2, None), (9, b"\x00" * 70)])]),
    ("txn-1", 0, 0, [("tx", [(1, batch(2, transactional=True))])]),
    (None, 1, 100, [(f"topic-{i}", [(p, batch(1)) for p in range(5)]) for i in range(6)]),
    (None, 1, 100, []),
    ("ünïcode-id", 1, 100, [("tøpic", [(0, batch(2)), (1, b"")])]),
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", range(len(KP_CASES)))
def test_decodes_what_kafka_python_encodes(version: int, case: int) -> None:
    transactional_id, acks, timeout_ms, topics = KP_CASES[case]
    PartitionData = KPProduceRequest.TopicProduceData.PartitionProduceData
    request = KPProduceRequest(
        version=version, transactional_id=transactional_id, acks=acks, timeout_ms=timeout_ms,
        topic_data=[KPProduceRequest.TopicProduceData(
            name=name, partition_data=[PartitionData(index=i, records=r) for i, r in parts])
            for name, parts in topics])
    flexible = version >= 9
    kp_header = KPRequestHeader(request_api_key=0, request_api_version=version,
                                correlation_id=99, client_id="kp")
    frame = bytes(kp_header.encode(flexible=flexible)) + bytes(
        request._struct.encode(request, version=version, compact=flexible, tagged=flexible))
    header, offset = decode_request_header(frame)
    assert (header.api_version, header.correlation_id) == (version, 99)
    got_id, got_acks, got_timeout, got_topics, end = _produce.decode_produce(frame, offset,
                                                                             version)
    assert end == len(frame)
    assert (got_id, got_acks, got_timeout) == (transactional_id, acks, timeout_ms)
    assert [(name, [index for index, _, _ in parts]) for name, parts in got_topics] == [
        (name, [index for index, _ in parts]) for name, parts in topics]
    for (_, got_parts), (_, parts) in zip(got_topics, topics, strict=True):
        for (_, view, checked), (_, records) in zip(got_parts, parts, strict=True):
            if records is None:
                assert view is None and checked is None
            else:
                assert bytes(view) == records
                assert seen_check(checked) == expected_check(records, version)
    # the same frame through kafkapy's own decoder
    decoded = decode_request(frame)
    assert_matches((got_id, got_acks, got_timeout, got_topics), decoded.body, version)
    # and through produce_now, header included: the common case appended and answered (to
    # correlation id 99), anything else declined with nothing appended
    keys = [TopicPartition(name, index) for name, parts in topics for index, _ in parts]
    common = transactional_id is None and len(set(keys)) == len(keys) and all(
        records is not None and expected_check(records, version)[0] is BatchHeader and
        not check_produce_batch(records, version).is_transactional
        for _, parts in topics for _, records in parts)
    appender = _Appender()
    answer = _produce.produce_now(bytearray(frame), 0, 11,
                                  {tp: _Partition() for tp in keys}, TopicPartition, appender)
    if not common:
        assert answer is None and not appender.calls
        return
    assert appender.calls == [(acks, {TopicPartition(name, index): records
                                      for name, parts in topics for index, records in parts})]
    if acks == 0:
        assert answer == _produce.NO_RESPONSE
    else:
        assert isinstance(answer, bytes) and answer[:4] == b"\x00\x00\x00\x63"


def test_batch_checks_are_check_produce_batchs() -> None:
    zstd = bytearray(batch(1))
    zstd[22] |= 4               # attributes: zstd (the header check reads no record, no CRC)
    corrupt = bytearray(batch(2))
    corrupt[-1] ^= 0xFF         # the CRC is the log's check, not the header's: still a header
    value = ProduceRequest(acks=1, timeout_ms=10, topic_data=[TopicProduceData(
        name="t", partition_data=[PartitionProduceData(index=0, records=bytes(zstd)),
                                  PartitionProduceData(index=1, records=batch(1) * 2),
                                  PartitionProduceData(index=2, records=bytes(corrupt))])])
    for version in (3, 6, 7, 11):
        frame = frame_of(version, value)
        _, offset = decode_request_header(frame)
        _, _, _, [(_, parts)], _ = _produce.decode_produce(frame, offset, version)
        kinds = [seen_check(checked)[0] for _, _, checked in parts]
        assert kinds[1] is InvalidRecordError           # two batches
        assert kinds[2] is BatchHeader
        if version < 7:
            assert kinds[0] is not BatchHeader          # zstd before v7
        else:
            assert kinds[0] is BatchHeader
        assert kinds[0] is not CorruptMessageError


# -------------------------------------------------------------------- kafkapy's codec oracle

@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_agrees_with_kafkapys_codec(version: int, data: st.DataObject) -> None:
    value = data.draw(body(MESSAGE, version, unknown_tags=True))
    frame = frame_of(version, value)
    _, offset = decode_request_header(frame)
    expected = decode_request(frame).body
    assert_matches(_produce.decode_produce(frame, offset, version)[:4], expected, version)
    # and from a bytearray (the selector's frames), at the same offset, with bytes after the
    # body (ignored, and said where the body ended)
    decoded = _produce.decode_produce(bytearray(frame) + b"xyz", offset, version)
    assert_matches(decoded[:4], expected, version)
    assert decoded[4] == len(frame)


# ------------------------------------------------------------------------ malformed input

def _valid_frame(version: int) -> tuple[bytes, int]:
    value = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=100, topic_data=[
        TopicProduceData(name="abc", partition_data=[
            PartitionProduceData(index=0, records=batch(2)),
            PartitionProduceData(index=1, records=None)]),
        TopicProduceData(name="d", partition_data=[PartitionProduceData(index=3,
                                                                          records=batch(1))])])
    frame = frame_of(version, value)
    _, offset = decode_request_header(frame)
    return frame, offset


@pytest.mark.parametrize("version", VERSIONS)
def test_every_truncation_is_refused(version: int) -> None:
    frame, offset = _valid_frame(version)
    _produce.decode_produce(frame, offset, version)
    for end in range(offset, len(frame)):
        with pytest.raises(InvalidRequestError, match="Produce request"):
            _produce.decode_produce(frame[:end], offset, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_garbage_raises_invalid_request_only(version: int) -> None:
    frame, offset = _valid_frame(version)
    rng = random.Random(version)
    refused = 0
    for _ in range(2000):
        mutated = bytearray(frame)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(offset, len(frame))] = rng.randrange(256)
        try:
            _produce.decode_produce(mutated, offset, version)
        except InvalidRequestError:
            refused += 1
    assert refused > 0


def test_hostile_lengths() -> None:
    head = b"\xff\xff" + b"\x00\x01" + b"\x00\x00\x00\x64"       # null id, acks 1, 100 ms
    cases = {
        "claims": head + b"\x7f\xff\xff\xff",                     # 2**31-1 topics
        "null": head + b"\xff\xff\xff\xff",                       # null TopicData
        "Name": head + b"\x00\x00\x00\x01" + b"\xff\xff" + b"\x00" * 8,     # null name
        "UTF-8": head + b"\x00\x00\x00\x01" + b"\x00\x02\xc3\x28" + b"\x00" * 4,
        "Records": head + b"\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x01\x00\x00\x00\x00"
                          b"\xff\xff\xff\xfe",                      # records length -2
    }
    for what, raw in cases.items():
        with pytest.raises(InvalidRequestError, match=what):
            _produce.decode_produce(raw, 0, 3)
    # flexible: a varint of more than 32 bits
    with pytest.raises(InvalidRequestError, match="varint"):
        _produce.decode_produce(b"\xff\xff\xff\xff\xff\x01", 0, 9)
    with pytest.raises(InvalidRequestError, match="offset"):
        _produce.decode_produce(head, 99, 3)
    for version in (2, 12):
        with pytest.raises(ValueError, match="v3-v11"):
            _produce.decode_produce(head, 0, version)


# ------------------------------------------------------------------------------ responses

def _results(rng: random.Random) -> tuple[list[tuple[str, list[int]]],
                                          dict[TopicPartition, ProducePartitionResult]]:
    order = []
    results = {}
    for t in range(rng.randint(0, 4)):
        name = rng.choice(["t", "tøpic", f"topic-{t}", "x" * 200])
        indexes = rng.sample(range(50), rng.randint(0, 5))
        order.append((name, indexes))
        for index in indexes:
            kind = rng.randrange(4)
            if kind == 0:
                r = ProducePartitionResult(base_offset=rng.randrange(2**40),
                                           log_append_time=rng.choice([-1, 1_700_000_000_123]),
                                           log_start_offset=rng.randrange(100))
            elif kind == 1:
                r = ProducePartitionResult(error=rng.choice([
                    NotLeaderOrFollowerError("not here"), UnknownTopicOrPartitionError(),
                    CorruptMessageError("bad crc")]))
            elif kind == 2:
                r = ProducePartitionResult(
                    error=InvalidRecordError("records refused"), log_start_offset=7,
                    record_errors=(RecordError(0, "no key"), RecordError(3, None)),
                    error_message="One or more records have been rejected")
            else:
                r = ProducePartitionResult(error=InvalidRecordError(), base_offset=5,
                                           log_start_offset=9)
            results[TopicPartition(name, index)] = r
    return order, results


@pytest.mark.parametrize("version", VERSIONS)
def test_response_bytes_equal_encode_response(version: int) -> None:
    rng = random.Random(1000 + version)
    for _ in range(200):
        order, results = _results(rng)
        throttle_ms = rng.choice([0, 1, 2**31 - 1])
        correlation_id = rng.randrange(-(2**31), 2**31)
        expected = _response(version, order, results)
        expected.throttle_time_ms = throttle_ms
        topics = [(name, [(i, results[TopicPartition(name, i)]) for i in indexes])
                  for name, indexes in order]
        assert _produce.encode_produce_response(version, correlation_id, throttle_ms,
                                                topics) == \
            encode_response(ApiKey.PRODUCE, version, correlation_id, expected)


def test_response_refuses_versions_it_does_not_write() -> None:
    for version in (0, 2, 12):
        with pytest.raises(ValueError, match="v3-v11"):
            _produce.encode_produce_response(version, 1, 0, [])


# ------------------------------------------------------------------ produce_now (one call)

class _Log:
    def __init__(self, flushes: bool) -> None:
        self.flushes_on_append = flushes


class _Partition:
    """What ``produce_now`` reads of a partition (pure logic: no broker here)."""

    def __init__(self, *, flushes: bool = False, sole: bool = True) -> None:
        self.log = _Log(flushes)
        self.sole_replica = sole


class _Appender:
    """``append_records_now`` as produce_now calls it: every call recorded; each partition
    answered with a result derived from its name (or ``errors``'s error)."""

    def __init__(self, errors: dict[TopicPartition, KafkaError] | None = None) -> None:
        self.calls: list[tuple[int, dict[TopicPartition, bytes]]] = []
        self.errors = errors or {}

    def __call__(self, acks: int, entries: dict[TopicPartition, memoryview]
                 ) -> dict[TopicPartition, ProducePartitionResult]:
        self.calls.append((acks, {tp: bytes(v) for tp, v in entries.items()}))
        return {tp: ProducePartitionResult(error=self.errors[tp]) if tp in self.errors else
                ProducePartitionResult(base_offset=100 * tp.partition + len(tp.topic),
                                       log_append_time=-1, log_start_offset=3)
                for tp in entries}


def _now(version: int, topics: list[tuple[str, list[tuple[int, bytes | None]]]], *,
         acks: int = 1, transactional_id: str | None = None,
         partitions: dict[TopicPartition, _Partition] | None = None,
         appender: _Appender | None = None, low: int = 0, high: int = 11,
         frame: bytes | None = None) -> Any:
    value = ProduceRequest(transactional_id=transactional_id, acks=acks, timeout_ms=1000,
                           topic_data=[TopicProduceData(name=n, partition_data=[
                               PartitionProduceData(index=i, records=r) for i, r in parts])
                               for n, parts in topics])
    if frame is None:
        frame = frame_of(version, value, correlation_id=77)
    if partitions is None:
        partitions = {TopicPartition(n, i): _Partition() for n, parts in topics
                      for i, _ in parts}
    return _produce.produce_now(bytearray(frame), low, high, partitions, TopicPartition,
                                appender if appender is not None else _Appender())


@pytest.mark.parametrize("version", VERSIONS)
def test_produce_now_answers_what_the_response_encoder_writes(version: int) -> None:
    """The common request: one append of every partition in wire order, and the answer the
    response encoder writes for the same results."""
    topics: list[tuple[str, list[tuple[int, bytes | None]]]] = [
        ("alpha", [(0, batch(1)), (2, batch(3))]), ("b", [(1, batch(2))])]
    appender = _Appender()
    answer = _now(version, topics, appender=appender)
    assert [(acks, list(entries.items())) for acks, entries in appender.calls] == [
        (1, [(TopicPartition(n, i), r) for n, parts in topics for i, r in parts])]
    results = appender(1, {TopicPartition(n, i): memoryview(b"") for n, parts in topics
                           for i, _ in parts})
    assert answer == _produce.encode_produce_response(
        version, 77, 0, [(n, [(i, results[TopicPartition(n, i)]) for i, _ in parts])
                         for n, parts in topics])
    # acks=-1 on partitions that are their only replica: the same, appended once
    assert isinstance(_now(version, topics, acks=-1), bytes)


def test_produce_now_acks_0_answers_nothing_or_closes_on_a_failed_partition() -> None:
    topics: list[tuple[str, list[tuple[int, bytes | None]]]] = [("t", [(0, batch(1)),
                                                                       (1, batch(1))])]
    assert _now(9, topics, acks=0) == _produce.NO_RESPONSE
    failing = _Appender({TopicPartition("t", 1): CorruptMessageError("bad")})
    assert _now(9, topics, acks=0, appender=failing) == _produce.CLOSE_CONNECTION
    assert len(failing.calls) == 1


def _declined(version: int, topics: list[tuple[str, list[tuple[int, bytes | None]]]],
              **kwargs: Any) -> bool:
    appender = _Appender()
    answer = _now(version, topics, appender=appender, **kwargs)
    return answer is None and not appender.calls


@pytest.mark.parametrize("version", [3, 8, 9, 11])
def test_produce_now_declines_before_appending_anything(version: int) -> None:
    """Every request that is not the common case is left to the general path (None) with
    nothing appended, even when other partitions of it qualify."""
    good = ("t", [(0, batch(1))])
    tp = TopicPartition("t", 0)
    assert _declined(version, [good], low=version + 1)          # below the advertised range
    assert _declined(version, [good], high=version - 1)         # above it
    assert _declined(version, [good], transactional_id="tx")
    assert _declined(version, [good], acks=2)
    assert _declined(version, [good, ("u", [(0, None)])])       # null records
    assert _declined(version, [good, ("u", [(0, batch(1) + batch(1))])])   # two batches
    assert _declined(version, [good, ("u", [(0, batch(1, transactional=True))])])
    assert _declined(version, [good, ("u", [(0, batch(1))])],
                     partitions={tp: _Partition()})             # u-0 not hosted
    assert _declined(version, [("t", [(0, batch(1)), (0, batch(1))])])    # named twice
    assert _declined(version, [good], partitions={tp: _Partition(flushes=True)})
    assert _declined(version, [good], acks=-1, partitions={tp: _Partition(sole=False)})
    # acks=1 does not wait for the other replicas: served
    assert _now(version, [good], partitions={tp: _Partition(sole=False)}) is not None


@pytest.mark.parametrize("version", [3, 9, 11])
def test_produce_now_declines_frames_that_do_not_decode(version: int) -> None:
    """A truncated or malformed frame is left to the general path (which closes the
    connection, as Kafka does), never raised and never appended."""
    topics: list[tuple[str, list[tuple[int, bytes | None]]]] = [("t", [(0, batch(2))])]
    frame = frame_of(version, ProduceRequest(acks=1, timeout_ms=1, topic_data=[
        TopicProduceData(name="t", partition_data=[PartitionProduceData(index=0,
                                                                        records=batch(2))])]))
    for end in range(len(frame)):
        assert _declined(version, topics, frame=frame[:end]), end
    # a client id longer than the frame, and a negative one other than null
    for length in (b"\x7f\xff", b"\xff\xfe"):
        assert _declined(version, topics, frame=frame[:8] + length + frame[10:])
    # the whole frame, for contrast, is served
    assert isinstance(_now(version, topics, frame=frame), bytes)
