"""kafkapy._fetch: the compiled Fetch request decode and response encode.

The decoder is checked against two independent readings of the same bytes: kafkapy's
schema-driven codec (``kafkapy.protocol``, random bodies with unknown tagged fields) and
kafka-python 3.0's protocol classes (``kafka.protocol.consumer.fetch.FetchRequest``: the bytes
the decoder reads are kafka-python's own encoding), for every version it accepts (0-15:
flexible v12+, sessions and forgotten topics v7+, topic ids v13+, the ReplicaState of v15).
The encoder's frames must be byte-equal to ``encode_response`` / ``encode_response_parts`` of
the equivalent generated FetchResponse for every version. Malformed and truncated frames
raise InvalidRequestError and nothing else.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.consumer.fetch import FetchRequest as KPFetchRequest

from kafkapy import _fetch
from kafkapy.errors import InvalidRequestError, UnsupportedVersionError
from kafkapy.protocol import ApiKey, encode, encode_response, encode_response_parts
from kafkapy.protocol.api_keys import API_KEYS
from kafkapy.protocol.codec import Request, decode_request_header, encode_request
from kafkapy.protocol.message_classes import (
    AbortedTransaction,
    FetchableTopicResponse,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchResponseEpochEndOffset,
    FetchTopic,
    ForgottenTopic,
    PartitionData,
    ReplicaState,
    RequestHeader,
)
from tests.protocol.strategies import body

REQUEST = API_KEYS[ApiKey.FETCH].request
RESPONSE = API_KEYS[ApiKey.FETCH].response
VERSIONS = range(_fetch.MIN_VERSION, _fetch.MAX_VERSION + 1)
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def expected(value: FetchRequest, version: int, end: int) -> tuple[Any, ...]:
    """What decode_fetch_request must return for a generated FetchRequest."""
    ids = version >= 13
    replica_id = value.replica_state.replica_id if version >= 15 else value.replica_id
    replica_epoch = value.replica_state.replica_epoch if version >= 15 else -1
    return (replica_id, replica_epoch, value.max_wait_ms, value.min_bytes, value.max_bytes,
            value.isolation_level, value.session_id, value.session_epoch,
            [(None if ids else t.topic, t.topic_id if ids else None,
              [(p.partition, p.current_leader_epoch, p.fetch_offset, p.last_fetched_epoch,
                p.log_start_offset, p.partition_max_bytes) for p in t.partitions])
             for t in value.topics],
            [(None if ids else t.topic, t.topic_id if ids else None, list(t.partitions))
             for t in value.forgotten_topics_data],
            value.rack_id, value.cluster_id, end)


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(data=st.data())
def test_decode_agrees_with_kafkapys_codec(version: int, data: st.DataObject) -> None:
    value = data.draw(body(REQUEST, version, unknown_tags=True))
    raw = b"\x07\x07" + encode(REQUEST, version, value)      # a body at offset 2
    assert _fetch.decode_fetch_request(raw, 2, version) == expected(value, version, len(raw))
    # a bytearray and a memoryview (the SocketServer's frames) read the same
    assert _fetch.decode_fetch_request(bytearray(raw), 2, version) == \
        _fetch.decode_fetch_request(memoryview(raw), 2, version)


def _kafka_python_view(obj: Any, version: int) -> tuple[Any, ...]:
    """kafka-python's decoded FetchRequest in decode_fetch_request's shape."""
    ids = version >= 13
    zero = uuid.UUID(int=0)

    def topic_id(t: Any) -> uuid.UUID | None:
        # kafka-python reads the all-zero UUID as None; Kafka has no null UUID.
        return (zero if t.topic_id is None else uuid.UUID(str(t.topic_id))) if ids else None

    state = obj.replica_state
    replica_id = (state.replica_id if state is not None else -1) if version >= 15 \
        else obj.replica_id
    replica_epoch = (state.replica_epoch if state is not None else -1) if version >= 15 else -1
    return (replica_id, replica_epoch, obj.max_wait_ms, obj.min_bytes,
            obj.max_bytes if version >= 3 else 0x7FFFFFFF,
            obj.isolation_level if version >= 4 else 0,
            obj.session_id if version >= 7 else 0, obj.session_epoch if version >= 7 else -1,
            [(None if ids else t.topic, topic_id(t),
              [(p.partition, p.current_leader_epoch if version >= 9 else -1, p.fetch_offset,
                p.last_fetched_epoch if version >= 12 else -1,
                p.log_start_offset if version >= 5 else -1, p.partition_max_bytes)
               for p in t.partitions]) for t in obj.topics],
            [(None if ids else t.topic, topic_id(t), list(t.partitions))
             for t in (obj.forgotten_topics_data if version >= 7 else [])],
            obj.rack_id if version >= 11 else "",
            obj.cluster_id if version >= 12 else None)


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(data=st.data())
def test_decode_agrees_with_kafka_python(version: int, data: st.DataObject) -> None:
    value = data.draw(body(REQUEST, version, unknown_tags=False))
    theirs = KPFetchRequest.decode(encode(REQUEST, version, value), version=version)
    flexible = version >= 12
    raw = bytes(theirs._struct.encode(theirs, version=version, compact=flexible,
                                      tagged=flexible))
    decoded = _fetch.decode_fetch_request(raw, 0, version)
    assert decoded[:-1] == _kafka_python_view(theirs, version)
    assert decoded[-1] == len(raw)


def test_decode_a_whole_frame_of_a_follower_with_a_session() -> None:
    """A v15 follower fetch (ReplicaState in the tagged fields) read from after its header."""
    topic_id = uuid.uuid4()
    value = FetchRequest(
        replica_state=ReplicaState(replica_id=2, replica_epoch=41), max_wait_ms=500,
        min_bytes=1, max_bytes=10 << 20, isolation_level=0, session_id=77, session_epoch=3,
        topics=[FetchTopic(topic_id=topic_id, partitions=[FetchPartition(
            partition=4, current_leader_epoch=6, fetch_offset=1000, last_fetched_epoch=5,
            log_start_offset=12, partition_max_bytes=1 << 20)])],
        forgotten_topics_data=[ForgottenTopic(topic_id=topic_id, partitions=[1, 2])],
        rack_id="rack-a")
    frame = encode_request(Request(RequestHeader(api_key=1, api_version=15, correlation_id=9,
                                                 client_id="broker-2"), value))
    _, offset = decode_request_header(frame)
    assert _fetch.decode_fetch_request(frame, offset, 15) == (
        2, 41, 500, 1, 10 << 20, 0, 77, 3, [(None, topic_id, [(4, 6, 1000, 5, 12, 1 << 20)])],
        [(None, topic_id, [1, 2])], "rack-a", None, len(frame))


# ---------------------------------------------------------------------------- bad input

def _sample(version: int) -> bytes:
    value = FetchRequest(
        replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=1 << 20,
        session_id=5 if version >= 7 else 0, session_epoch=1 if version >= 7 else -1,
        topics=[FetchTopic(topic="tópico" if version < 13 else "", topic_id=uuid.uuid4()
                           if version >= 13 else uuid.UUID(int=0),
                           partitions=[FetchPartition(partition=0, fetch_offset=7,
                                                      partition_max_bytes=100)])],
        forgotten_topics_data=[ForgottenTopic(topic="x" if version < 13 else "",
                                              partitions=[3])] if version >= 7 else [],
        rack_id="r" if version >= 11 else "",
        cluster_id="c" if version >= 12 else None)
    return encode(REQUEST, version, value)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_truncation_is_refused(version: int) -> None:
    raw = _sample(version)
    assert _fetch.decode_fetch_request(raw, 0, version)[-1] == len(raw)
    for cut in range(len(raw)):
        with pytest.raises(InvalidRequestError):
            _fetch.decode_fetch_request(raw[:cut], 0, version)


@pytest.mark.parametrize("version", [4, 11, 12, 15])
@settings(max_examples=300, deadline=None)
@given(garbage=st.binary(max_size=80))
def test_garbage_decodes_or_is_refused(version: int, garbage: bytes) -> None:
    try:
        decoded = _fetch.decode_fetch_request(garbage, 0, version)
    except InvalidRequestError:
        return
    assert decoded[-1] <= len(garbage)


def test_hostile_lengths_are_refused() -> None:
    head = struct.pack(">iiiib", -1, 500, 1, 1 << 20, 0)       # v4 up to IsolationLevel
    with pytest.raises(InvalidRequestError, match="claims 1000000"):
        _fetch.decode_fetch_request(head + struct.pack(">i", 1_000_000), 0, 4)
    with pytest.raises(InvalidRequestError, match="negative length"):
        _fetch.decode_fetch_request(head + struct.pack(">i", -2), 0, 4)
    with pytest.raises(InvalidRequestError, match="Topics is null"):
        _fetch.decode_fetch_request(head + struct.pack(">i", -1), 0, 4)
    bad_utf8 = head + struct.pack(">ih", 1, 2) + b"\xff\xfe"
    with pytest.raises(InvalidRequestError, match="not UTF-8"):
        _fetch.decode_fetch_request(bad_utf8, 0, 4)
    flexible = struct.pack(">iiibii", 500, 1, 1 << 20, 0, 0, -1)  # v12 without ReplicaId
    with pytest.raises(InvalidRequestError, match="longer than 32 bits"):
        _fetch.decode_fetch_request(struct.pack(">i", -1) + flexible + b"\xff" * 6, 0, 12)
    with pytest.raises(InvalidRequestError, match="outside a frame"):
        _fetch.decode_fetch_request(head, len(head) + 1, 4)
    with pytest.raises(InvalidRequestError, match="v16"):
        _fetch.decode_fetch_request(head, 0, 16)


def test_a_tagged_field_cannot_read_past_its_size() -> None:
    """ReplicaState (tag 1, v15) declared 4 bytes long but holding 13: refused, not read
    into the bytes after it."""
    base = bytes(_fetch_v15_without_tags())
    state = struct.pack(">iq", 3, 9) + b"\x00"
    with pytest.raises(InvalidRequestError):
        _fetch.decode_fetch_request(base + b"\x01\x01\x04" + state, 0, 15)
    decoded = _fetch.decode_fetch_request(base + b"\x01\x01" + bytes([len(state)]) + state,
                                          0, 15)
    assert decoded[:2] == (3, 9)


def _fetch_v15_without_tags() -> bytes:
    # MaxWaitMs, MinBytes, MaxBytes, IsolationLevel, SessionId, SessionEpoch, no topics, no
    # forgotten topics, RackId ""; the tagged-field section is the caller's
    return struct.pack(">iiibii", 500, 1, 100, 0, 0, -1) + b"\x01\x01\x01"


# ---------------------------------------------------------------------------- encode

def _response_view(value: FetchResponse, version: int, records: Any = None
                   ) -> list[tuple[Any, Any, list[tuple[Any, ...]]]]:
    """A generated FetchResponse's topics as encode_fetch_response takes them."""
    ids = version >= 13
    return [(None if ids else t.topic, t.topic_id if ids else None, [
        (p.partition_index, p.error_code, p.high_watermark, p.last_stable_offset,
         p.log_start_offset,
         None if p.aborted_transactions is None else
         [(a.producer_id, a.first_offset) for a in p.aborted_transactions],
         p.preferred_read_replica, p.records if records is None else records,
         (p.diverging_epoch.epoch, p.diverging_epoch.end_offset),
         (p.current_leader.leader_id, p.current_leader.leader_epoch),
         (p.snapshot_id.end_offset, p.snapshot_id.epoch))
        for p in t.partitions]) for t in value.responses]


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(data=st.data(), correlation_id=st.integers(-(2**31), 2**31 - 1))
def test_encode_is_byte_equal_to_encode_response(version: int, data: st.DataObject,
                                                 correlation_id: int) -> None:
    value = data.draw(body(RESPONSE, version, unknown_tags=False))
    parts = _fetch.encode_fetch_response(
        version, correlation_id, value.throttle_time_ms, value.error_code, value.session_id,
        _response_view(value, version))
    assert parts == [encode_response(ApiKey.FETCH, version, correlation_id, value)]


class FileRecords:
    """Records sent from a file: only a size, no buffer (the log's fetch data)."""

    def __init__(self, size: int) -> None:
        self.size = size


@pytest.mark.parametrize("version", VERSIONS)
def test_records_from_files_are_cut_out_as_encode_response_parts_cuts_them(
        version: int) -> None:
    first, second = FileRecords(1000), FileRecords(70)
    flexible = version >= 12

    def partition(index: int, records: Any, aborted: bool) -> PartitionData:
        return PartitionData(
            partition_index=index, error_code=0, high_watermark=90,
            last_stable_offset=80 if version >= 4 else -1,
            log_start_offset=3 if version >= 5 else -1,
            aborted_transactions=[AbortedTransaction(producer_id=7, first_offset=40)]
            if aborted and version >= 4 else None,
            preferred_read_replica=2 if version >= 11 else -1,
            diverging_epoch=FetchResponseEpochEndOffset(epoch=4, end_offset=66)
            if flexible and index else FetchResponseEpochEndOffset(),
            records=records)

    topic_id = uuid.UUID(int=12345) if version >= 13 else uuid.UUID(int=0)
    value = FetchResponse(
        throttle_time_ms=0, error_code=0, session_id=99 if version >= 7 else 0, responses=[
            FetchableTopicResponse(topic="" if version >= 13 else "a", topic_id=topic_id,
                                   partitions=[partition(0, first, True),
                                               partition(1, b"", False)]),
            FetchableTopicResponse(topic="" if version >= 13 else "b", topic_id=topic_id,
                                   partitions=[partition(0, second, False)])])
    ours = _fetch.encode_fetch_response(version, 5, 0, 0, value.session_id,
                                        _response_view(value, version))
    assert ours == encode_response_parts(ApiKey.FETCH, version, 5, value)
    assert [type(p) for p in ours] == [bytes, FileRecords, bytes, FileRecords, bytes]


def test_values_a_version_cannot_carry_are_refused() -> None:
    no_tags = (None, None, None)
    with pytest.raises(UnsupportedVersionError, match="session_id"):
        _fetch.encode_fetch_response(6, 1, 0, 0, 5, [])
    with pytest.raises(UnsupportedVersionError, match="preferred_read_replica"):
        _fetch.encode_fetch_response(10, 1, 0, 0, 0, [("t", None, [
            (0, 0, 1, 1, 0, None, 3, b"", *no_tags)])])
    with pytest.raises(UnsupportedVersionError, match="version 12"):
        _fetch.encode_fetch_response(11, 1, 0, 0, 0, [("t", None, [
            (0, 0, 1, 1, 0, None, -1, b"", (1, 5), None, None)])])
    with pytest.raises(UnsupportedVersionError):
        _fetch.encode_fetch_response(16, 1, 0, 0, 0, [])
