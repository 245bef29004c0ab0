"""Hostile and broken request frames: a specific Kafka error, never a crash, hang or big allocation.

The only allowed outcomes of ``decode_request`` on any bytes are a Request or a KafkaError
subclass carrying Kafka's error code (INVALID_REQUEST, UNSUPPORTED_VERSION, ...).
"""

from __future__ import annotations

import struct
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkapy.errors import InvalidRequestError, KafkaError, UnsupportedVersionError
from kafkapy.protocol import (
    API_KEYS,
    Request,
    RequestHeader,
    decode_request,
    encode_request,
    request_class,
)
from kafkapy.protocol.classes import class_for
from tests.protocol.strategies import body


def _frame(api_key: int, version: int, value=None, client_id: str | None = "t") -> bytes:
    if value is None:
        value = request_class(api_key)()
    header = RequestHeader(api_key=api_key, api_version=version, correlation_id=99,
                           client_id=client_id)
    return encode_request(Request(header, value))


def _metadata_v1(topics: list[str]) -> bytes:
    cls = request_class(3)
    topic = class_for(API_KEYS[3].request.body.fields[0].type.element)
    return _frame(3, 1, cls(topics=[topic(name=t) for t in topics]))


def test_unknown_api_key_is_invalid_request():
    frame = struct.pack(">hhi", 9999, 0, 1) + b"\x00\x00"
    with pytest.raises(InvalidRequestError) as info:
        decode_request(frame)
    assert info.value.code == 42
    assert "9999" in str(info.value)


def test_unsupported_version_carries_header():
    # Metadata is flexible from v9 on, so v99 has a v2 header: client id, then tagged fields.
    frame = struct.pack(">hhih", 3, 99, 1234, 1) + b"x" + b"\x00"
    with pytest.raises(UnsupportedVersionError) as info:
        decode_request(frame)
    assert info.value.code == 35
    assert info.value.header.correlation_id == 1234
    assert info.value.header.client_id == "x"


def test_api_versions_newer_than_known_still_yields_header():
    # ApiVersions v9 (unknown): the header is v2 (flexible), the body is not parsed.
    frame = struct.pack(">hhih", 18, 9, 77, 3) + b"abc" + b"\x00" + b"\x05garbage"
    with pytest.raises(UnsupportedVersionError) as info:
        decode_request(frame)
    assert info.value.header.api_version == 9
    assert info.value.header.correlation_id == 77


def test_every_truncation_of_a_valid_frame_is_invalid_request():
    frame = _metadata_v1(["alpha", "beta"])
    assert decode_request(frame).header.correlation_id == 99
    for cut in range(len(frame)):
        with pytest.raises(InvalidRequestError):
            decode_request(frame[:cut])


def test_trailing_bytes_are_refused():
    with pytest.raises(InvalidRequestError, match="unexpected bytes"):
        decode_request(_metadata_v1(["a"]) + b"\x00")


def test_negative_string_length_other_than_minus_one():
    frame = bytearray(_metadata_v1(["abc"]))
    # header: 2+2+4 + client id (2+1) = 11; array count 4 bytes; then the topic name length
    struct.pack_into(">h", frame, 15, -5)
    with pytest.raises(InvalidRequestError, match="negative length"):
        decode_request(bytes(frame))


def test_null_in_non_nullable_field():
    frame = bytearray(_metadata_v1(["abc"]))
    struct.pack_into(">h", frame, 15, -1)
    with pytest.raises(InvalidRequestError, match="not nullable"):
        decode_request(bytes(frame))


def test_length_past_the_end():
    frame = bytearray(_metadata_v1(["abc"]))
    struct.pack_into(">h", frame, 15, 300)
    with pytest.raises(InvalidRequestError, match="only"):
        decode_request(bytes(frame))


@pytest.mark.parametrize("count", [2**31 - 1, 1_000_000, 5])
def test_oversized_array_count_allocates_nothing_big(count):
    frame = bytearray(_metadata_v1(["abc"]))
    struct.pack_into(">i", frame, 11, count)
    tracemalloc.start()
    try:
        with pytest.raises(InvalidRequestError):
            decode_request(bytes(frame))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # A few KiB of bookkeeping at most: nothing proportional to the claimed count.
    assert peak < 64 * 1024


def test_invalid_varint():
    # Metadata v9 is flexible: the topics array count is an unsigned varint.
    good = _frame(3, 9)
    header_len = 2 + 2 + 4 + 2 + 1 + 1  # key, version, correlation, client id "t", tags
    bad = good[:header_len] + b"\xff\xff\xff\xff\xff\x01" + good[header_len + 1:]
    with pytest.raises(InvalidRequestError, match="varint"):
        decode_request(bad)
    with pytest.raises(InvalidRequestError, match="varint"):
        decode_request(good[:header_len] + b"\x80")


def test_invalid_utf8():
    frame = bytearray(_metadata_v1(["abc"]))
    frame[17] = 0xFF
    with pytest.raises(InvalidRequestError, match="UTF-8"):
        decode_request(bytes(frame))


def test_tagged_field_size_lies():
    # A Metadata v9 request with one unknown tagged field claiming more bytes than remain.
    good = _frame(3, 9)
    assert good.endswith(b"\x00")
    with pytest.raises(InvalidRequestError):
        decode_request(good[:-1] + b"\x01\x05\x7f" + b"ab")


_VALID_FRAMES = st.sampled_from(sorted(API_KEYS)).flatmap(
    lambda key: st.integers(API_KEYS[key].versions.low, API_KEYS[key].versions.high).flatmap(
        lambda v: body(API_KEYS[key].request, v).map(lambda b: _frame(key, v, b))))


def _decode_or_kafka_error(frame: bytes) -> None:
    try:
        request = decode_request(frame)
    except KafkaError as e:
        assert e.code in (42, 35), e
    else:
        assert isinstance(request, Request)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(frame=_VALID_FRAMES, data=st.data())
def test_fuzz_mutated_valid_frames(frame: bytes, data: st.DataObject) -> None:
    mutated = bytearray(frame)
    for _ in range(data.draw(st.integers(1, 4))):
        if not mutated:
            break
        i = data.draw(st.integers(0, len(mutated) - 1))
        mutated[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(mutated)))
    _decode_or_kafka_error(bytes(mutated[:cut]))
    _decode_or_kafka_error(bytes(mutated))


@settings(max_examples=300, deadline=None)
@given(prefix=st.sampled_from(sorted(API_KEYS)), version=st.integers(-2, 20),
       rest=st.binary(max_size=200))
def test_fuzz_random_bodies(prefix: int, version: int, rest: bytes) -> None:
    _decode_or_kafka_error(struct.pack(">hh", prefix, version) + rest)
