"""kafkapy._frames: the TCP stream framer (Kafka's NetworkReceive) and ``size_prefixed``."""

from __future__ import annotations

import itertools
import struct
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkapy import _frames
from kafkapy._frames import FrameSplitter, size_prefixed
from kafkapy.errors import InvalidRequestError, KafkaError

MiB = 1 << 20


def _stream(frames: list[bytes]) -> bytes:
    return b"".join(struct.pack(">i", len(f)) + f for f in frames)


def _feed_all(splitter: FrameSplitter, chunks: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    for chunk in chunks:
        out += splitter.feed(chunk)
    return out


def _cut(stream: bytes, cuts: list[int]) -> list[bytes]:
    return [stream[a:b] for a, b in itertools.pairwise([0, *sorted(cuts), len(stream)])]


def test_extension_is_compiled() -> None:
    assert _frames.__file__ is not None and _frames.__file__.endswith((".so", ".pyd"))


def test_size_prefixed() -> None:
    assert size_prefixed(b"") == b"\x00\x00\x00\x00"
    assert size_prefixed(b"abc") == b"\x00\x00\x00\x03abc"
    payload = bytes(range(256)) * 300
    assert size_prefixed(payload) == struct.pack(">i", len(payload)) + payload
    assert size_prefixed(bytearray(b"xy")) == size_prefixed(memoryview(b"__xy")[2:]) == (
        b"\x00\x00\x00\x02xy")


def test_default_max_frame_size() -> None:
    assert FrameSplitter().max_frame_size == 100 * MiB == _frames.DEFAULT_MAX_FRAME_SIZE
    with pytest.raises(ValueError):
        FrameSplitter(-1)


FRAMES = [b"first", b"", b"x" * 1000, b"\x00\x00\x00\x05", b"last"]


def test_many_frames_in_one_chunk() -> None:
    s = FrameSplitter()
    assert s.feed(_stream(FRAMES)) == FRAMES
    assert s.buffered == 0


def test_byte_at_a_time() -> None:
    data = _stream(FRAMES)
    s = FrameSplitter()
    out = []
    for i in range(len(data)):
        out += s.feed(data[i:i + 1])
        assert s.buffered == i + 1 - sum(4 + len(f) for f in out)
    assert out == FRAMES
    assert s.buffered == 0


def test_every_split_point() -> None:
    data = _stream([b"abcdef", b"", b"gh"])
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            s = FrameSplitter()
            assert _feed_all(s, [data[:i], data[i:j], data[j:]]) == [b"abcdef", b"", b"gh"]


def test_split_prefix_and_buffered() -> None:
    s = FrameSplitter()
    assert s.feed(b"\x00\x00") == []
    assert s.buffered == 2
    assert s.feed(b"\x00") == []
    assert s.buffered == 3
    assert s.feed(b"\x05ab") == []
    assert s.buffered == 6  # the prefix counts until its frame is returned
    assert s.feed(b"cde\x00") == [b"abcde"]
    assert s.buffered == 1
    assert s.feed(b"\x00\x00\x01!") == [b"!"]
    assert s.buffered == 0


def test_empty_frames() -> None:
    s = FrameSplitter()
    assert s.feed(b"\x00\x00\x00\x00" * 3) == [b"", b"", b""]
    assert s.feed(b"\x00\x00") == []
    assert s.feed(b"\x00\x00") == [b""]
    assert s.feed(b"") == []


def test_accepts_any_contiguous_buffer() -> None:
    data = _stream([b"abc", b"defg"])
    s = FrameSplitter()
    assert s.feed(bytearray(data[:5])) + s.feed(memoryview(data)[5:]) == [b"abc", b"defg"]


@pytest.mark.parametrize("prefix", [b"\xff\xff\xff\xff", b"\x80\x00\x00\x00", b"\xff\xff\xff\xfe"])
def test_negative_size(prefix: bytes) -> None:
    s = FrameSplitter()
    assert s.feed(_stream([b"ok"]) + prefix[:2]) == [b"ok"]
    with pytest.raises(InvalidRequestError, match="invalid frame size -"):
        s.feed(prefix[2:] + b"more")
    # The splitter is unusable from now on, even for empty or valid input.
    for data in (b"", _stream([b"valid"])):
        with pytest.raises(InvalidRequestError, match="invalid frame size"):
            s.feed(data)


def test_frames_before_an_invalid_prefix_ride_on_the_error() -> None:
    s = FrameSplitter(max_frame_size=10)
    with pytest.raises(InvalidRequestError) as info:
        s.feed(_stream([b"a", b"bc"]) + b"\x00\x00\x00\x0b" + b"x" * 11)
    assert info.value.frames == [b"a", b"bc"]  # type: ignore[attr-defined]
    with pytest.raises(InvalidRequestError) as again:
        s.feed(_stream([b"d"]))
    assert again.value.frames == []  # type: ignore[attr-defined]


def test_oversize_limit_is_inclusive() -> None:
    s = FrameSplitter(max_frame_size=10)
    assert s.feed(_stream([b"0123456789"])) == [b"0123456789"]
    with pytest.raises(InvalidRequestError) as info:
        s.feed(struct.pack(">i", 11))
    assert info.value.code == 42 and isinstance(info.value, KafkaError)
    with pytest.raises(InvalidRequestError):
        s.feed(b"x" * 11)


@pytest.mark.parametrize("claimed", [100 * MiB + 1, 2**31 - 1])
def test_oversize_rejected_before_allocating(claimed: int) -> None:
    s = FrameSplitter()
    prefix = struct.pack(">i", claimed)
    tracemalloc.start()
    try:
        assert s.feed(prefix[:3]) == []
        with pytest.raises(InvalidRequestError, match="larger than the maximum"):
            s.feed(prefix[3:] + b"x" * 100)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MiB
    assert s.buffered == 0


def test_large_frame_in_64k_chunks() -> None:
    size = 100 * MiB  # exactly the default limit
    payload = bytearray(size)
    payload[::4096] = b"\x5a" * len(payload[::4096])
    payload[-3:] = b"end"
    data = memoryview(bytes(struct.pack(">i", size) + payload + size_prefixed(b"next")))
    del payload
    s = FrameSplitter()
    out: list[bytes] = []
    tracemalloc.start()
    try:
        for off in range(0, len(data), 64 * 1024):
            out += s.feed(data[off:off + 64 * 1024])
            if not out:
                assert s.buffered == off + 64 * 1024
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # One buffer of exactly the frame size, filled in place: no regrowth, no second copy.
    assert size <= peak < size + 4 * MiB
    assert len(out) == 2 and len(out[0]) == size and out[1] == b"next"
    assert out[0] == data[4:4 + size]
    assert s.buffered == 0


@given(st.lists(st.binary(max_size=300), max_size=20), st.data())
def test_random_chunking_yields_the_same_frames(frames: list[bytes], data: st.DataObject) -> None:
    stream = _stream(frames)
    chunks = _cut(stream, data.draw(st.lists(st.integers(0, len(stream)), max_size=30)))
    s = FrameSplitter(max_frame_size=300)
    assert _feed_all(s, chunks) == frames
    assert s.buffered == 0


def _reference(stream: bytes, max_frame_size: int) -> tuple[list[bytes], bool]:
    """Whole-stream model: the frames before the first invalid size, and whether one was hit."""
    frames, pos = [], 0
    while len(stream) - pos >= 4:
        (size,) = struct.unpack_from(">i", stream, pos)
        if size < 0 or size > max_frame_size:
            return frames, True
        if len(stream) - pos - 4 < size:
            break
        frames.append(stream[pos + 4:pos + 4 + size])
        pos += 4 + size
    return frames, False


@given(st.lists(st.one_of(
    st.binary(max_size=40).map(size_prefixed),
    st.binary(max_size=8),  # garbage: may form negative or oversize prefixes
), max_size=12).map(b"".join), st.data())
def test_fuzz_matches_model(stream: bytes, data: st.DataObject) -> None:
    s = FrameSplitter(max_frame_size=64)
    out: list[bytes] = []
    failed = False
    for chunk in _cut(stream, data.draw(st.lists(st.integers(0, len(stream)), max_size=10))):
        try:
            out += s.feed(chunk)
        except InvalidRequestError as e:
            out += e.frames  # type: ignore[attr-defined]
            failed = True
            break
    assert (out, failed) == _reference(stream, 64)
