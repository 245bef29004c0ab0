"""Record batches (kafkapy.protocol.records) against independent implementations.

Oracles: the ``crc32c`` package for CRC-32C; kafka-python 3.0's record classes (its own
encoder and reader, magic 0, 1 and 2) for the batch format. kafka-python in this environment
only has gzip built in; for snappy, lz4 and zstd its codec hooks are pointed at aiokafka's
cramjam-based codec functions (and a pure-Python xxHash32 for its magic-0 LZ4 quirk), so the
framing decisions (xerial blocks, LZ4 frame flags, the old-Kafka header checksum) are still
kafka-python's and aiokafka's, not ours.

The fuzz test feeds mutated valid batches through every decoding entry point and allows only
KafkaError subclasses out.
"""

from __future__ import annotations

import os
import struct
import types
import zlib

import aiokafka.codec as aio_codec
import cramjam
import crc32c as crc32c_package
import kafka.codec
import kafka.record.default_records as kp_default
import kafka.record.legacy_records as kp_legacy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from kafkapy import _records
from kafkapy.errors import (
    CorruptMessageError,
    InvalidRecordError,
    KafkaError,
    UnsupportedCompressionTypeError,
    UnsupportedForMessageFormatError,
)
from kafkapy.protocol.records import (
    BatchHeader,
    BatchScan,
    ControlRecord,
    LegacyMessage,
    Record,
    assign_offsets,
    build_batch,
    build_control_batch,
    crc32c,
    decode_control_record,
    decode_legacy,
    scan_batches,
)

CODECS = [0, 1, 2, 3, 4]
CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def test_extension_is_compiled() -> None:
    assert _records.__file__.endswith((".so", ".pyd"))
    assert crc32c is _records.crc32c


# ------------------------------------------------------------------ kafka-python codec hooks


def _xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 for inputs shorter than 16 bytes (all the LZ4 descriptor ever needs)."""
    assert len(data) < 16
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    m = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & m

    h = (seed + p5 + len(data)) & m
    i = 0
    while i + 4 <= len(data):
        h = (rotl((h + int.from_bytes(data[i:i + 4], "little") * p3) & m, 17) * p4) & m
        i += 4
    for b in data[i:]:
        h = (rotl((h + b * p5) & m, 11) * p1) & m
    h ^= h >> 15
    h = (h * p2) & m
    h ^= h >> 13
    h = (h * p3) & m
    h ^= h >> 16
    return h


class _XXH32:
    def __init__(self, data: bytes) -> None:
        self._h = _xxh32(bytes(data))

    def digest(self) -> bytes:
        return self._h.to_bytes(4, "big")


def test_xxh32_shim() -> None:
    assert _xxh32(b"") == 0x02CC5D05
    assert _xxh32(b"a") == 0x550D7456
    assert _xxh32(b"abc") == 0x32D153FF
    # And it agrees with the descriptor checksum a real LZ4 encoder writes.
    frame = aio_codec.lz4_encode(b"x" * 1000)
    assert frame[6] == (_xxh32(frame[4:6]) >> 8) & 0xFF


@pytest.fixture
def kp_codecs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Give kafka-python snappy, lz4 and zstd through aiokafka's cramjam-based functions."""
    for name in ("has_snappy", "has_lz4", "has_zstd"):
        monkeypatch.setattr(kafka.codec, name, lambda: True)
    hooks = {
        "snappy_encode": aio_codec.snappy_encode,
        "snappy_decode": aio_codec.snappy_decode,
        "lz4_encode": aio_codec.lz4_encode,
        "lz4_decode": aio_codec.lz4_decode,
        "zstd_encode": aio_codec.zstd_encode,
        "zstd_decode": aio_codec.zstd_decode,
    }
    for module in (kafka.codec, kp_default, kp_legacy):
        for name, fn in hooks.items():
            if hasattr(module, name):
                monkeypatch.setattr(module, name, fn)
    monkeypatch.setattr(kafka.codec, "xxhash", types.SimpleNamespace(xxh32=_XXH32))


# ------------------------------------------------------------------------------------ CRC


def test_crc_known_vectors() -> None:
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    assert crc32c(b"", 0x12345678) == 0x12345678
    assert crc32c(b"\x00" * 32) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert _records._crc32c_with("portable", b"123456789") == 0xE3069283


def test_crc_small_lengths_and_misaligned_starts() -> None:
    data = os.urandom(200)
    for start in range(8):
        for n in range(101):
            chunk = data[start:start + n]
            expected = crc32c_package.crc32c(chunk)
            assert crc32c(chunk) == expected, (start, n)
            assert crc32c(memoryview(data)[start:start + n]) == expected, (start, n)
            assert _records._crc32c_with("portable", memoryview(data)[start:start + n]) == expected


@pytest.mark.parametrize("n", [767, 768, 769, 3071, 3072, 3073, 10_517, 24575, 24576, 24577,
                               100_003, 1 << 20, (3 << 20) + 5])
def test_crc_large_buffers(n: int) -> None:
    data = os.urandom(n + 3)
    for start in (0, 3):
        chunk = memoryview(data)[start:start + n]
        expected = crc32c_package.crc32c(chunk)
        assert crc32c(chunk) == expected
        assert _records._crc32c_with("portable", chunk) == expected


def test_crc_continuation_and_buffer_types() -> None:
    a, b = os.urandom(1000), os.urandom(3001)
    assert crc32c(b, crc32c(a)) == crc32c(a + b) == crc32c_package.crc32c(a + b)
    assert crc32c(bytearray(a)) == crc32c(a)
    with pytest.raises(TypeError):
        crc32c("not bytes")  # type: ignore[arg-type]


def test_crc_implementation_reported() -> None:
    assert _records._crc32c_implementation() in ("sse4.2+vpclmul", "sse4.2", "armv8-crc",
                                                 "portable")
    assert _records._crc32c_paths()[0] == _records._crc32c_implementation()


# ------------------------------------------------------------------------ sample records

def sample_records(n: int = 12) -> list[tuple[bytes | None, bytes | None,
                                              list[tuple[str, bytes | None]], int]]:
    """Null key, null value, empty value, empty key, headers (null value, unicode key),
    timestamps going backwards and forwards, and compressible payloads."""
    out: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]], int]] = [
        (None, b"value-with-null-key" * 5, [], 1_700_000_000_000),
        (b"key-null-value", None, [], 1_700_000_000_005),
        (b"key-empty-value", b"", [("h", b"v")], 1_699_999_999_000),
        (b"", b"empty key" * 3, [("n", None), ("ключ", b"\x00\xff"), ("", b"")], 1_700_000_500_000),
    ]
    for i in range(n - len(out)):
        out.append((f"key-{i}".encode(), b"payload " * (20 + i), [("idx", str(i).encode())],
                    1_700_000_000_100 + i))
    return out


def kp_build(records: list, codec: int, *, producer_id: int = -1, producer_epoch: int = -1,
             base_sequence: int = -1, transactional: bool = False) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=transactional,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        batch_size=1 << 30)
    for offset, (key, value, headers, ts) in enumerate(records):
        assert builder.append(offset, ts, key, value, headers) is not None
    return bytes(builder.build())


def assert_same(ours: list[Record], records: list, base_offset: int = 0) -> None:
    assert len(ours) == len(records)
    for i, (rec, (key, value, headers, ts)) in enumerate(zip(ours, records, strict=True)):
        assert rec.offset == base_offset + i
        assert rec.key == key
        assert rec.value == value
        assert rec.headers == list(headers)
        assert rec.timestamp == ts
        assert rec.attributes == 0


# ------------------------------------------------------------------ kafka-python cross-check


@pytest.mark.parametrize("codec", CODECS, ids=CODEC_NAMES.get)
def test_kafka_python_batches_decode(codec: int, kp_codecs: None) -> None:
    records = sample_records()
    raw = kp_build(records, codec)
    header = BatchHeader(raw)
    assert header.compression == codec        # compressible enough that kafka-python kept it
    assert header.crc_valid
    assert header.record_count == len(records)
    assert_same(header.records(), records)
    # The same through a multi-batch buffer, as kafka-python's MemoryRecords sees it.
    scan = scan_batches(raw * 3)
    assert scan.error is None and len(scan.batches) == 3
    assert [b.position for b in scan.batches] == [0, len(raw), 2 * len(raw)]


@pytest.mark.parametrize("codec", CODECS, ids=CODEC_NAMES.get)
def test_our_batches_decode_under_kafka_python(codec: int, kp_codecs: None) -> None:
    records = sample_records()
    raw = build_batch(records, compression=codec, base_offset=500)
    batch = DefaultRecordBatch(raw)
    assert batch.validate_crc()
    assert batch.compression_type == codec
    assert batch.base_offset == 500
    theirs = list(batch)
    assert len(theirs) == len(records)
    for i, (rec, (key, value, headers, ts)) in enumerate(zip(theirs, records, strict=True)):
        assert rec.offset == 500 + i
        assert rec.key == key
        assert rec.value == value
        assert rec.headers == headers
        assert rec.timestamp == ts
    # And MemoryRecords walks several of ours.
    memory = MemoryRecords(raw + build_batch(records[:2], compression=codec, base_offset=512))
    offsets = [r.offset for b in iter(memory.next_batch, None) for r in b]
    assert offsets == [*range(500, 512), 512, 513]


def test_our_uncompressed_batches_are_byte_identical() -> None:
    records = sample_records(40)
    ours = build_batch(records, partition_leader_epoch=0)
    assert ours == kp_build(records, 0)
    ours = build_batch(records, partition_leader_epoch=0, producer_id=99, producer_epoch=3,
                       base_sequence=17, is_transactional=True)
    assert ours == kp_build(records, 0, producer_id=99, producer_epoch=3, base_sequence=17,
                            transactional=True)


def test_memory_records_builder_batches_decode() -> None:
    builder = MemoryRecordsBuilder(magic=2, compression_type=1, batch_size=1 << 20, offset=0)
    for i in range(50):
        builder.append(1000 + i, f"k{i}".encode(), b"v" * 200, [("a", b"b")])
    builder.close()
    raw = bytes(builder.buffer())
    (header,) = scan_batches(raw).batches
    recs = header.records()
    assert [r.key for r in recs] == [f"k{i}".encode() for i in range(50)]
    assert [r.timestamp for r in recs] == [1000 + i for i in range(50)]


# ---------------------------------------------------------------------------- header view


class _ControlBuilder(DefaultRecordBatchBuilder):
    def _get_attributes(self, include_compression_type: bool = True) -> int:
        return super()._get_attributes(include_compression_type) | self.CONTROL_MASK


def test_header_view_fields_against_kafka_python() -> None:
    builder = _ControlBuilder(magic=2, compression_type=0, is_transactional=True,
                              producer_id=123_456_789_012, producer_epoch=7,
                              base_sequence=42, batch_size=1 << 20)
    for i in range(5):
        builder.append(i, 10_000 + 3 * i, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 9),
                       [])
    raw = bytearray(builder.build())
    # Broker-owned fields (not CRC-covered): base offset and partition leader epoch.
    struct.pack_into(">q", raw, 0, 1_000_000)
    struct.pack_into(">i", raw, 12, 31)
    theirs = DefaultRecordBatch(bytes(raw))
    assert theirs.validate_crc()
    h = BatchHeader(raw)
    assert h.base_offset == theirs.base_offset == 1_000_000
    assert h.batch_length == len(raw) - 12
    assert h.size == theirs.size_in_bytes == len(raw)
    assert h.partition_leader_epoch == theirs.leader_epoch == 31
    assert h.magic == theirs.magic == 2
    assert h.crc == theirs.crc
    assert h.compute_crc() == theirs.crc and h.crc_valid
    assert h.attributes == theirs.attributes == 0x30
    assert h.compression == theirs.compression_type == 0
    assert h.timestamp_type == theirs.timestamp_type == 0
    assert h.is_transactional is True and theirs.is_transactional
    assert h.is_control is True and theirs.is_control_batch
    assert h.has_delete_horizon is False
    assert h.last_offset_delta == theirs.last_offset_delta == 4
    assert h.base_timestamp == theirs.first_timestamp == 10_000
    assert h.max_timestamp == theirs.max_timestamp == 10_012
    assert h.producer_id == theirs.producer_id == 123_456_789_012
    assert h.producer_epoch == theirs.producer_epoch == 7
    assert h.base_sequence == theirs.base_sequence == 42
    assert h.record_count == theirs.records_count == 5
    assert h.last_offset == theirs.last_offset == 1_000_004
    assert h.next_offset == theirs.next_offset == 1_000_005
    assert h.position == 0
    assert bytes(h.raw) == bytes(raw)
    recs = h.records()
    assert [r.sequence for r in recs] == [42, 43, 44, 45, 46]
    assert [decode_control_record(r) for r in recs] == [ControlRecord(0, 1, 9)] * 5
    assert [(r.version, r.type) for r in theirs] == [(0, 1)] * 5
    assert "base_offset=1000000" in repr(h)


def test_header_view_at_offset_and_raw_is_zero_copy() -> None:
    a = build_batch([(b"a", b"1", [], 1)])
    b = build_batch([(b"b", b"2", [], 2)], base_offset=1)
    buf = bytearray(a + b)
    h = BatchHeader(buf, len(a))
    assert h.position == len(a) and h.base_offset == 1
    h.raw[0:8] = (77).to_bytes(8, "big")          # writes through to buf
    assert h.base_offset == 77
    assert BatchHeader(memoryview(buf)[len(a):]).base_offset == 77
    with pytest.raises(ValueError):
        BatchHeader(buf, -1)


def test_sequence_wraps_at_int32_max() -> None:
    raw = build_batch([(None, b"x", [], 0)] * 3, producer_id=1, producer_epoch=0,
                      base_sequence=2**31 - 2)
    assert [r.sequence for r in BatchHeader(raw).records()] == [2**31 - 2, 2**31 - 1, 0]
    theirs = DefaultRecordBatch(raw)
    assert theirs.last_sequence == 0


def test_header_constructor_errors() -> None:
    raw = build_batch([(b"k", b"v", [], 0)])
    with pytest.raises(CorruptMessageError):
        BatchHeader(raw[:60])
    with pytest.raises(CorruptMessageError):
        BatchHeader(raw[:-1])
    with pytest.raises(CorruptMessageError):
        BatchHeader(raw, len(raw) - 40)
    with pytest.raises(CorruptMessageError):
        BatchHeader(raw, len(raw) + 40)
    with pytest.raises(CorruptMessageError):
        BatchHeader(b"")
    short = bytearray(raw)
    struct.pack_into(">i", short, 8, 48)
    with pytest.raises(CorruptMessageError):
        BatchHeader(short)
    magic1 = bytearray(raw)
    magic1[16] = 1
    with pytest.raises(UnsupportedForMessageFormatError) as e:
        BatchHeader(magic1)
    assert e.value.code == 43


# ---------------------------------------------------------------------------- scan_batches


def _batches(n: int) -> list[bytes]:
    return [build_batch([(f"k{i}".encode(), os.urandom(50 + 7 * i), [], i)], base_offset=i)
            for i in range(n)]


def test_scan_several_batches() -> None:
    parts = _batches(5)
    buf = b"".join(parts)
    scan = scan_batches(buf)
    assert isinstance(scan, BatchScan)
    assert scan.error is None and not scan.truncated
    assert scan.valid_bytes == len(buf)
    assert [b.base_offset for b in scan.batches] == [0, 1, 2, 3, 4]
    assert [b.size for b in scan.batches] == [len(p) for p in parts]
    assert "batches=5" in repr(scan)


def test_scan_bad_crc_in_second_batch() -> None:
    parts = _batches(3)
    buf = bytearray(b"".join(parts))
    buf[len(parts[0]) + 70] ^= 0x01
    scan = scan_batches(buf)
    assert scan.valid_bytes == len(parts[0])
    assert len(scan.batches) == 1
    assert isinstance(scan.error, CorruptMessageError) and scan.error.code == 2
    assert not scan.truncated
    # Without CRC checks the walk goes on.
    assert scan_batches(buf, verify_crc=False).valid_bytes == len(buf)


@pytest.mark.parametrize("cut", [1, 5, 16, 17, 30, 60, 61, 62])
def test_scan_truncated_tail(cut: int) -> None:
    parts = _batches(3)
    buf = b"".join(parts)[:-(len(parts[2]) - cut)]
    scan = scan_batches(buf)
    assert scan.truncated
    assert scan.valid_bytes == len(parts[0]) + len(parts[1])
    assert isinstance(scan.error, CorruptMessageError)


def test_scan_length_below_minimum() -> None:
    parts = _batches(2)
    buf = bytearray(b"".join(parts))
    struct.pack_into(">i", buf, len(parts[0]) + 8, 48)
    scan = scan_batches(buf)
    assert scan.valid_bytes == len(parts[0])
    assert isinstance(scan.error, CorruptMessageError)
    assert not scan.truncated
    struct.pack_into(">i", buf, 8, -5)
    assert scan_batches(buf).valid_bytes == 0


def test_scan_magic_1() -> None:
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    for i in range(3):
        builder.append(i, 1000, b"k", b"value" * 10)
    legacy = bytes(builder.build())
    scan = scan_batches(_batches(1)[0] + legacy)
    assert len(scan.batches) == 1
    assert isinstance(scan.error, UnsupportedForMessageFormatError)
    assert scan.error.code == 43
    assert not scan.truncated


def test_scan_empty_buffer() -> None:
    scan = scan_batches(b"")
    assert scan.batches == [] and scan.valid_bytes == 0
    assert scan.error is None and not scan.truncated


# ---------------------------------------------------------------- corrupt records, fixed CRC


def _fix_crc(buf: bytearray) -> bytearray:
    struct.pack_into(">I", buf, 17, crc32c_package.crc32c(bytes(buf[21:])))
    return buf


def _one_record_batch(key: bytes = b"key", value: bytes = b"value") -> bytearray:
    return bytearray(build_batch([(key, value, [("h", b"x")], 5)]))


def test_corrupt_varint_overrun() -> None:
    buf = _one_record_batch()
    # Record body starts at 61 (length varint) / 62 (attributes) / 63 (timestamp delta).
    for i in range(63, len(buf)):
        buf[i] = 0xFF
    with pytest.raises(CorruptMessageError):
        BatchHeader(_fix_crc(buf)).records()


def test_corrupt_key_length_past_end() -> None:
    buf = _one_record_batch()
    # length, attributes, ts delta 0, offset delta 0, then the key length varint at 65.
    assert buf[65] == 6  # zigzag(3)
    buf[65] = 100
    header = BatchHeader(_fix_crc(buf))
    assert header.crc_valid
    with pytest.raises(CorruptMessageError):
        header.records()


def test_corrupt_record_count_larger_than_present() -> None:
    buf = _one_record_batch()
    struct.pack_into(">i", buf, 57, 2)
    with pytest.raises(CorruptMessageError):
        BatchHeader(_fix_crc(buf)).records()
    struct.pack_into(">i", buf, 57, 2**31 - 1)
    with pytest.raises(CorruptMessageError):
        BatchHeader(_fix_crc(buf)).records()
    struct.pack_into(">i", buf, 57, -1)
    with pytest.raises(CorruptMessageError):
        BatchHeader(_fix_crc(buf)).records()


def test_corrupt_record_count_smaller_than_present() -> None:
    buf = bytearray(build_batch([(b"a", b"1", [], 0), (b"b", b"2", [], 0)]))
    struct.pack_into(">i", buf, 57, 1)
    with pytest.raises(CorruptMessageError):
        BatchHeader(_fix_crc(buf)).records()


def test_corrupt_record_length_mismatch() -> None:
    buf = _one_record_batch()
    buf.append(0)                                   # one more byte inside the batch...
    struct.pack_into(">i", buf, 8, len(buf) - 12)
    buf[61] += 2                                    # ...claimed by the record (zigzag +1)
    with pytest.raises(CorruptMessageError, match="fill"):
        BatchHeader(_fix_crc(buf)).records()


def test_corrupt_header_count_and_null_header_key() -> None:
    buf = _one_record_batch(b"", b"")
    # length, attrs, ts, offset, key len 0, value len 0, header count at 67.
    assert buf[67] == 2
    buf[67] = 0x7E                                  # 63 headers
    with pytest.raises(CorruptMessageError):
        BatchHeader(_fix_crc(buf)).records()
    buf = _one_record_batch(b"", b"")
    buf[68] = 1                                     # header key length -1
    with pytest.raises(CorruptMessageError):
        BatchHeader(_fix_crc(buf)).records()


def test_corrupt_compressed_data() -> None:
    buf = bytearray(build_batch(sample_records(), compression=1))
    buf[70:80] = b"\x00" * 10
    with pytest.raises(CorruptMessageError):
        BatchHeader(_fix_crc(buf)).records()


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_unknown_codec(codec: int) -> None:
    buf = _one_record_batch()
    buf[22] |= codec
    with pytest.raises(UnsupportedCompressionTypeError) as e:
        BatchHeader(_fix_crc(buf)).records()
    assert e.value.code == 76


def test_invalid_utf8_header_key_is_replaced() -> None:
    raw = bytearray(build_batch([(b"k", b"v", [("ab", b"x")], 0)]))
    i = raw.index(b"ab")
    raw[i] = 0xFF
    (rec,) = BatchHeader(_fix_crc(raw)).records()
    assert rec.headers == [("\ufffdb", b"x")]


_FUZZ_SEEDS = [
    build_batch(sample_records(6), compression=c, producer_id=5, producer_epoch=1,
                base_sequence=0)
    for c in CODECS
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.sampled_from(_FUZZ_SEEDS),
    edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=6),
    cut=st.integers(0, 10_000),
    fix_crc=st.booleans(),
    extra=st.binary(max_size=40),
)
def test_fuzz_only_kafka_errors(seed: bytes, edits: list[tuple[int, int]], cut: int,
                                fix_crc: bool, extra: bytes) -> None:
    buf = bytearray(seed)
    for pos, byte in edits:
        buf[pos % len(buf)] = byte
    if fix_crc and len(buf) > 21:
        _fix_crc(buf)
    buf = buf[:len(buf) - cut % 80] + extra
    try:
        scan = scan_batches(buf)
        for h in scan.batches:
            h.records()
    except KafkaError:
        pass
    try:
        h = BatchHeader(buf)
        _ = (h.crc_valid, h.last_offset, h.record_count)
        for rec in h.records():
            if h.is_control:
                try:
                    decode_control_record(rec)
                except KafkaError:
                    pass
    except KafkaError:
        pass
    try:
        decode_legacy(buf)
    except KafkaError:
        pass


# --------------------------------------------------------------------------- control records


@pytest.mark.parametrize("ctype", [0, 1])
def test_control_batch_round_trip(ctype: int) -> None:
    raw = build_control_batch(ctype, 17, producer_id=4242, producer_epoch=3, base_offset=90,
                              timestamp_ms=123_456, partition_leader_epoch=8)
    h = BatchHeader(raw)
    assert h.is_control and h.is_transactional
    assert h.crc_valid
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (4242, 3, -1)
    assert (h.base_offset, h.record_count, h.partition_leader_epoch) == (90, 1, 8)
    assert h.base_timestamp == h.max_timestamp == 123_456
    (rec,) = h.records()
    assert rec.offset == 90 and rec.timestamp == 123_456
    assert decode_control_record(rec) == ControlRecord(0, ctype, 17)
    assert repr(ControlRecord(0, ctype, 17)) == f"ControlRecord(version=0, type={ctype}, " \
                                                "coordinator_epoch=17)"
    (theirs,) = list(DefaultRecordBatch(raw))
    assert (theirs.version, theirs.type) == (0, ctype)
    assert theirs.value == struct.pack(">hi", 0, 17)


def test_decode_control_record_errors() -> None:
    with pytest.raises(InvalidRecordError):
        decode_control_record(Record(0, 0, None, b"\x00" * 6))
    with pytest.raises(InvalidRecordError):
        decode_control_record(Record(0, 0, b"\x00\x00", b"\x00" * 6))
    with pytest.raises(InvalidRecordError):
        decode_control_record(Record(0, 0, b"\x00\x00\x00\x01", b"\x00\x00"))
    # KRaft control types carry other values: no coordinator epoch.
    assert decode_control_record(Record(0, 0, b"\x00\x00\x00\x02", b"\x01")) == \
        ControlRecord(0, 2, -1)


# --------------------------------------------------------------------------- assign_offsets


def test_assign_offsets() -> None:
    parts = [build_batch([(b"k", b"v", [], 10 + i)] * (i + 1)) for i in range(3)]
    buf = bytearray(b"".join(parts))
    crcs = [h.crc for h in scan_batches(buf).batches]
    assert assign_offsets(buf, 1000, partition_leader_epoch=12).next_offset == 1006
    scan = scan_batches(buf)
    assert scan.error is None
    assert [h.base_offset for h in scan.batches] == [1000, 1001, 1003]
    assert [h.partition_leader_epoch for h in scan.batches] == [12, 12, 12]
    assert [h.crc for h in scan.batches] == crcs      # nothing CRC-covered changed
    assert [r.offset for h in scan.batches for r in h.records()] == list(range(1000, 1006))
    assert [DefaultRecordBatch(bytes(h.raw)).base_offset for h in scan.batches] == \
        [1000, 1001, 1003]


def test_assign_offsets_log_append_time() -> None:
    buf = bytearray(build_batch([(b"k", b"v", [], 50), (b"k", b"v", [], 70)], compression=1)
                    + build_batch([(b"k", b"v", [], 60)]))
    assert assign_offsets(buf, 7, log_append_time=999_999).next_offset == 10
    scan = scan_batches(buf)
    assert scan.error is None                         # CRCs recomputed
    for h in scan.batches:
        assert h.timestamp_type == 1
        assert h.max_timestamp == 999_999
        assert all(r.timestamp == 999_999 for r in h.records())
        theirs = DefaultRecordBatch(bytes(h.raw))
        assert theirs.validate_crc()
        assert [r.timestamp for r in theirs] == [999_999] * h.record_count
    assert [h.base_timestamp for h in scan.batches] == [50, 60]   # base timestamp stays
    assert scan.batches[0].compression == 1


def test_assign_offsets_refuses_bad_input_without_writing() -> None:
    good = build_batch([(b"k", b"v", [], 0)])
    buf = bytearray(good + good[:30])
    before = bytes(buf)
    with pytest.raises(CorruptMessageError):
        assign_offsets(buf, 5)
    assert bytes(buf) == before
    with pytest.raises(BufferError):
        assign_offsets(good, 5)
    assert assign_offsets(bytearray(), 5).next_offset == 5


# ------------------------------------------------------------------------------ legacy sets


def kp_legacy_build(magic: int, codec: int, records: list) -> bytearray:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for offset, (key, value, ts) in enumerate(records):
        assert builder.append(offset, ts, key, value) is not None
    return bytearray(builder.build())


LEGACY_RECORDS = [
    (None, b"null key " * 10, 1000),
    (b"k1", None, 1001),
    (b"k2", b"", 999),
    (b"k3", b"value " * 30, 2000),
]


@pytest.mark.parametrize("codec", [0, 1, 2, 3], ids=CODEC_NAMES.get)
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_decode(magic: int, codec: int, kp_codecs: None) -> None:
    buf = kp_legacy_build(magic, codec, LEGACY_RECORDS)
    if codec:
        # The broker stamps the wrapper with the absolute offset of the last inner message
        # (magic 1; for magic 0 inner offsets are absolute and the wrapper's is the last one).
        struct.pack_into(">q", buf, 0, 503 if magic == 1 else 3)
    if magic == 0 and codec == 3:
        # kafka-python reproduces old Kafka's LZ4 descriptor checksum (magic hashed in), which a
        # standard LZ4 decoder refuses: the decoder must repair it.
        frame = bytes(buf[26:])
        assert frame[6] != (_xxh32(frame[4:6]) >> 8) & 0xFF
        with pytest.raises(cramjam.DecompressionError):
            cramjam.lz4.decompress(frame)
    ours = decode_legacy(bytes(buf))
    theirs = [r for b in iter(MemoryRecords(bytes(buf)).next_batch, None) for r in b]
    assert all(isinstance(b, LegacyRecordBatch)
               for b in iter(MemoryRecords(bytes(buf)).next_batch, None))
    assert len(ours) == len(theirs) == len(LEGACY_RECORDS)
    for o, t, (key, value, ts) in zip(ours, theirs, LEGACY_RECORDS, strict=True):
        assert o.offset == t.offset
        assert o.key == t.key == key
        assert o.value == t.value == value
        assert o.magic == magic
        assert o.timestamp == (ts if magic == 1 else -1)
        assert o.attributes == 0
    assert [m.offset for m in ours] == ([500, 501, 502, 503] if magic == 1 and codec
                                        else [0, 1, 2, 3])


def test_legacy_log_append_time_wrapper(kp_codecs: None) -> None:
    buf = kp_legacy_build(1, 1, LEGACY_RECORDS)
    buf[17] |= 0x08                                  # wrapper attributes: LogAppendTime
    struct.pack_into(">q", buf, 18, 77_777)          # wrapper timestamp
    struct.pack_into(">I", buf, 12, zlib.crc32(bytes(buf[16:])))
    assert [m.timestamp for m in decode_legacy(buf)] == [77_777] * 4
    assert [r.timestamp for r in LegacyRecordBatch(bytes(buf), 1)] == [77_777] * 4


def test_legacy_several_messages_and_partial_tail() -> None:
    a = kp_legacy_build(1, 0, LEGACY_RECORDS)
    msgs = decode_legacy(bytes(a) + bytes(a[:20]))
    assert len(msgs) == 4
    assert msgs[0] == LegacyMessage(0, 1, 0, 1000, None, b"null key " * 10)
    assert "LegacyMessage(offset=0" in repr(msgs[0])
    assert decode_legacy(b"") == []


def test_legacy_errors(kp_codecs: None) -> None:
    buf = kp_legacy_build(0, 0, LEGACY_RECORDS)
    buf[30] ^= 1
    with pytest.raises(CorruptMessageError):
        decode_legacy(buf)
    with pytest.raises(UnsupportedForMessageFormatError):
        decode_legacy(build_batch([(b"k", b"v", [], 0)]))
    bad = kp_legacy_build(1, 0, LEGACY_RECORDS)
    struct.pack_into(">i", bad, 8, 10)
    with pytest.raises(CorruptMessageError):
        decode_legacy(bad)
    # zstd is not allowed below magic 2.
    zstd = kp_legacy_build(1, 0, [(None, b"x", 0)])
    zstd[17] = 4
    struct.pack_into(">I", zstd, 12, zlib.crc32(bytes(zstd[16:])))
    with pytest.raises(UnsupportedCompressionTypeError):
        decode_legacy(zstd)


# ----------------------------------------------------------------------------- value classes


def test_record_value_class() -> None:
    r = Record(5, 100, b"k", None, [("a", b"b")], sequence=3, attributes=0)
    assert r == Record(5, 100, b"k", None, [("a", b"b")], 3, 0)
    assert r != Record(6, 100, b"k", None, [("a", b"b")], 3, 0)
    assert Record(1, 2, None, None).headers == []
    assert repr(r) == ("Record(offset=5, timestamp=100, key=b'k', value=None, "
                       "headers=[('a', b'b')], sequence=3, attributes=0)")
    with pytest.raises(AttributeError):
        r.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hash(r)


def test_build_batch_argument_errors() -> None:
    with pytest.raises(ValueError):
        build_batch([])
    with pytest.raises(UnsupportedCompressionTypeError):
        build_batch([(b"k", b"v", [], 0)], compression=5)
    with pytest.raises(TypeError):
        build_batch([("str key", b"v", [], 0)])
    with pytest.raises(TypeError):
        build_batch([(b"k", b"v", [(b"bytes-key", b"v")], 0)])


def test_build_batch_accepts_buffers_and_large_values() -> None:
    big = os.urandom(300_000)
    raw = build_batch([(bytearray(b"k"), memoryview(big), [("h", bytearray(b"x"))], 1)])
    (rec,) = BatchHeader(raw).records()
    assert rec.key == b"k" and rec.value == big and rec.headers == [("h", b"x")]
    (theirs,) = list(DefaultRecordBatch(raw))
    assert theirs.value == big


# ------------------------------------------------- the cleaner's builder: kept offsets, horizon

def test_build_batch_with_explicit_offset_deltas_last_delta_and_delete_horizon() -> None:
    raw = build_batch([(b"a", b"1", None, 1000, 2), (b"b", None, [("h", b"x")], 1005, 7)],
                      base_offset=100, last_offset_delta=9, delete_horizon=5_000_000,
                      compression=4)
    header = BatchHeader(raw)
    assert (header.base_offset, header.last_offset, header.record_count) == (100, 109, 2)
    assert header.has_delete_horizon and header.base_timestamp == 5_000_000
    assert header.max_timestamp == 1005 and header.crc_valid
    ours = [(r.offset, r.timestamp, r.key, r.value) for r in header.records()]
    assert ours == [(102, 1000, b"a", b"1"), (107, 1005, b"b", None)]
    # kafka-python decodes the same records from the same bytes.
    theirs = [(r.offset, r.timestamp, r.key, r.value) for r in DefaultRecordBatch(raw)]
    assert theirs == ours


def test_build_batch_keeps_a_log_append_time_max_timestamp() -> None:
    raw = build_batch([(b"k", b"v", None, 10, 0)], timestamp_type=1, max_timestamp=99)
    header = BatchHeader(raw)
    assert header.timestamp_type == 1 and header.max_timestamp == 99
    assert [r.timestamp for r in header.records()] == [99]


@pytest.mark.parametrize("records, kw", [
    ([(b"k", b"v", None, 1, 3), (b"k", b"v", None, 1, 3)], {}),     # deltas must rise
    ([(b"k", b"v", None, 1, 5)], {"last_offset_delta": 4}),          # last below a record
    ([(b"k", b"v", None, 1, -1)], {}),
])
def test_build_batch_refuses_offsets_that_do_not_rise(records: list, kw: dict) -> None:
    with pytest.raises(ValueError):
        build_batch(records, **kw)
