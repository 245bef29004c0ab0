"""Message format conversion (kafkapy._legacy) against kafka-python's independent encoders
and readers of both formats (kafka.record.legacy_records, kafka.record.default_records).

Up-conversion: a legacy message set, as kafka-python's producer writes it for old brokers,
becomes the magic 2 batch kafka-python writes for the same records (byte for byte, but for the
partition leader epoch, which kafka-python's builder leaves at 0 and Kafka's at -1).
Down-conversion: kafka-python's reader sees the records of the magic 2 batch (headers
dropped, control batches skipped) and, uncompressed, the very bytes its legacy builder writes;
the answer's size follows KIP-283 (LazyDownConversionRecords).
"""

from __future__ import annotations

import gzip
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kafkapy.errors import (
    CorruptMessageError,
    InvalidRecordError,
    InvalidTimestampError,
    KafkaError,
    UnsupportedCompressionTypeError,
)
from kafkapy.protocol.records import (
    BatchHeader,
    assign_offsets,
    build_batch,
    build_control_batch,
    down_convert,
    up_convert,
)
from tests.protocol.test_records import kp_codecs  # noqa: F401  (fixture)

RECORDS = [
    (None, b"null key " * 10, 1000),
    (b"k1", None, 1001),
    (b"k2", b"", 999),
    (b"k3", b"value " * 30, 2000),
]
CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4"}


def legacy_set(magic: int, codec: int, records: list, first_offset: int = 0) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i, (key, value, ts) in enumerate(records):
        assert builder.append(first_offset + i, ts if magic else None, key, value) is not None
    return bytes(builder.build())


def kafka_python_v2(records: list, codec: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 20)
    for i, (key, value, ts) in enumerate(records):
        builder.append(i, ts, key, value, [])
    out = bytearray(builder.build())
    out[12:16] = b"\xff\xff\xff\xff"      # partitionLeaderEpoch: Kafka's producers write -1
    return bytes(out)


def read_legacy(buf: bytes) -> list[tuple]:
    records = MemoryRecords(buf)
    out = []
    while records.has_next():
        batch = records.next_batch()
        if batch is None:
            break
        for r in batch:
            out.append((r.offset, r.timestamp, r.timestamp_type, r.key, r.value))
    return out


# ========================================================================= up-conversion


@pytest.mark.parametrize("codec", list(CODECS), ids=CODECS.get)
@pytest.mark.parametrize("magic", [0, 1])
def test_up_convert_is_kafka_python_v2_batch(magic: int, codec: int,
                                             kp_codecs: None) -> None:  # noqa: F811
    converted = up_convert(legacy_set(magic, codec, RECORDS, first_offset=40))
    assert converted is not None
    expected = [(k, v, ts if magic else -1) for k, v, ts in RECORDS]
    header = BatchHeader(converted)
    assert (header.magic, header.compression, header.base_offset, header.record_count,
            header.producer_id, header.crc_valid) == (2, codec, 0, 4, -1, True)
    if codec == 0:
        assert bytes(converted) == kafka_python_v2(expected)
    batch = DefaultRecordBatch(bytes(converted))
    assert batch.validate_crc()
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in batch] == \
        [(i, ts, k, v, []) for i, (k, v, ts) in enumerate(expected)]
    assert header.max_timestamp == (2000 if magic else -1)
    assert header.base_timestamp == (1000 if magic else -1)


@pytest.mark.parametrize("target", [0, 1, 2, 3, 4])
def test_up_convert_writes_the_topics_codec(target: int) -> None:
    """compression.type other than "producer": the batch is written with the topic's
    codec, whatever the producer used (LogValidator's targetCompression)."""
    for source in (0, 1):
        converted = up_convert(legacy_set(1, source, RECORDS), target_codec=target)
        assert converted is not None
        header = BatchHeader(converted)
        assert header.compression == target and header.crc_valid
        assert [(r.key, r.value, r.timestamp) for r in header.records()] == \
            [(k, v, ts) for k, v, ts in RECORDS]


def test_up_convert_leaves_magic_2_alone() -> None:
    assert up_convert(build_batch([(b"k", b"v", [], 5)])) is None


def test_up_convert_several_plain_messages_and_a_partial_tail() -> None:
    """Uncompressed messages are each a "batch" to Kafka: any number in one request; a
    partial message at the end is trimmed, as Kafka's analyzeAndValidateRecords does."""
    data = b"".join(legacy_set(1, 0, [r]) for r in RECORDS)
    converted = up_convert(data + data[:20])
    assert converted is not None
    assert [r.value for r in BatchHeader(converted).records()] == [v for _k, v, _t in RECORDS]


def test_up_convert_refusals(kp_codecs: None) -> None:  # noqa: F811
    plain = legacy_set(1, 0, RECORDS)
    corrupt = bytearray(plain)
    corrupt[-1] ^= 1
    with pytest.raises(CorruptMessageError, match="CRC"):
        up_convert(bytes(corrupt))
    gzip = legacy_set(1, 1, RECORDS)
    with pytest.raises(InvalidRecordError, match="more than one batch"):
        up_convert(gzip + gzip)
    with pytest.raises(InvalidRecordError, match="more than one batch"):
        up_convert(plain + gzip)
    with pytest.raises(InvalidRecordError, match="without key"):
        up_convert(plain, require_key=True)
    assert up_convert(legacy_set(1, 0, RECORDS[1:]), require_key=True) is not None
    with pytest.raises(InvalidRecordError, match="no batches"):
        up_convert(plain[:20])
    with pytest.raises(InvalidRecordError, match="follows"):
        up_convert(plain + build_batch([(b"k", b"v", [], 5)]))


def _wrapper(magic: int, codec: int, inner: bytes, offset: int, attrs: int = 0,
             ts: int = 0) -> bytes:
    """A compressed wrapper message around ``inner`` (already a message set)."""
    value = gzip.compress(inner) if codec == 1 else inner
    body = bytes([magic, codec | attrs]) + (struct.pack(">q", ts) if magic else b"") + \
        struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    body = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(body)) + body


def test_up_convert_refuses_bad_inner_messages() -> None:
    """Kafka's validateRecord on a wrapper's inner messages: its magic, no compression."""
    with pytest.raises(InvalidRecordError, match="magic"):
        up_convert(_wrapper(1, 1, legacy_set(0, 0, RECORDS), 3))
    with pytest.raises(InvalidRecordError, match="compression attribute"):
        up_convert(_wrapper(1, 1, legacy_set(1, 1, RECORDS), 3))
    with pytest.raises(CorruptMessageError, match="cut off"):
        up_convert(_wrapper(1, 1, legacy_set(1, 0, RECORDS)[:-3], 3))


def test_up_convert_producer_log_append_time() -> None:
    """A producer may not set LogAppendTime (INVALID_TIMESTAMP), except on a CreateTime
    topic for a message that carries a timestamp, which Kafka then keeps; a LogAppendTime
    wrapper's inner messages read as the wrapper's timestamp."""
    wrapped = _wrapper(1, 1, legacy_set(1, 0, RECORDS), 3, attrs=0x08, ts=77_777)
    with pytest.raises(InvalidTimestampError, match="LogAppendTime"):
        up_convert(wrapped, log_append_time=True)
    converted = up_convert(wrapped)
    assert converted is not None
    assert [r.timestamp for r in BatchHeader(converted).records()] == [77_777] * 4


def test_up_convert_checks_every_timestamp() -> None:
    """CreateTime: each message's timestamp within message.timestamp.before/after.max.ms of
    the broker's clock (not only the newest); INVALID_TIMESTAMP wins over INVALID_RECORD when
    messages have both, as Kafka's processRecordErrors decides."""
    now = 10_000
    ok = up_convert(legacy_set(1, 0, RECORDS), now=now, before_max_ms=9_100,
                    after_max_ms=0)
    assert ok is not None                             # 999 .. 2000 are within [900, 10000]
    with pytest.raises(InvalidTimestampError, match="out of range"):
        up_convert(legacy_set(1, 0, RECORDS), now=now, before_max_ms=9_000)   # 999 < 1000
    with pytest.raises(InvalidTimestampError, match="out of range"):
        up_convert(legacy_set(1, 0, RECORDS), now=1500, after_max_ms=100)      # 2000 > 1600
    # Magic 0 has no timestamp: nothing to check.
    assert up_convert(legacy_set(0, 0, RECORDS), now=now, before_max_ms=0) is not None
    # LogAppendTime topics stamp the batch: producers' timestamps are not checked.
    assert up_convert(legacy_set(1, 0, RECORDS), log_append_time=True, now=now,
                      before_max_ms=0) is not None
    with pytest.raises(InvalidTimestampError):
        up_convert(legacy_set(1, 0, RECORDS), require_key=True, now=now, before_max_ms=0)


def test_up_convert_refuses_zstd_wrapper() -> None:
    wrapped = bytearray(_wrapper(1, 1, legacy_set(1, 0, RECORDS), 3))
    wrapped[17] = 4                                  # attributes: zstd
    wrapped[12:16] = struct.pack(">I", zlib.crc32(bytes(wrapped[16:])))
    with pytest.raises(UnsupportedCompressionTypeError):
        up_convert(bytes(wrapped))


# ======================================================================= down-conversion

V2_RECORDS = [(b"k%d" % i, b"value %d " % i * 5, [("h", b"dropped")], 5000 + i)
              for i in range(6)]


@pytest.mark.parametrize("magic", [0, 1])
def test_down_convert_uncompressed_is_kafka_python_legacy(magic: int) -> None:
    batch = build_batch(V2_RECORDS, base_offset=100)
    expected = legacy_set(magic, 0, [(k, v, ts) for k, v, _h, ts in V2_RECORDS],
                          first_offset=100)
    converted = down_convert(batch, magic, 100)
    # Magic 0 messages are smaller than the batch with its headers: KIP-283 padding follows.
    assert len(converted) == max(len(batch), len(expected))
    assert converted[:len(expected)] == expected
    got = read_legacy(converted)
    assert [(o, ts, k, v) for o, ts, _t, k, v in got] == \
        [(100 + i, ts if magic else None, k, v) for i, (k, v, _h, ts) in enumerate(V2_RECORDS)]


@pytest.mark.parametrize("codec", [1, 2, 3], ids=CODECS.get)
@pytest.mark.parametrize("magic", [0, 1])
def test_down_convert_compressed_keeps_one_wrapper(magic: int, codec: int,
                                                   kp_codecs: None) -> None:  # noqa: F811
    batch = build_batch(V2_RECORDS, base_offset=100, compression=codec)
    converted = down_convert(batch, magic, 103)
    # One wrapper with the last offset; the whole batch, fetch offset or not (Kafka keeps
    # compressed batches whole).
    (offset, size) = struct.unpack_from(">qi", converted)
    assert offset == 105 and converted[16] == magic and converted[17] & 7 == codec
    assert len(converted) >= 12 + size
    got = read_legacy(converted[:12 + size])
    assert [(o, ts, k, v) for o, ts, _t, k, v in got] == \
        [(100 + i, ts if magic else None, k, v) for i, (k, v, _h, ts) in enumerate(V2_RECORDS)]


def test_down_convert_drops_records_before_the_fetch_offset() -> None:
    batch = build_batch(V2_RECORDS, base_offset=100)
    got = read_legacy(down_convert(batch, 1, 104))
    assert [o for o, *_ in got] == [104, 105]


def test_down_convert_skips_control_batches_and_keeps_aborted_records() -> None:
    """Control records have no legacy form; aborted transactional records are not filtered
    (Kafka does not: a Fetch v0-3 consumer reads uncommitted)."""
    txn = build_batch([(None, b"aborted", [], 1)], base_offset=0, producer_id=7,
                      producer_epoch=0, base_sequence=0, is_transactional=True)
    marker = build_control_batch(0, 5, producer_id=7, producer_epoch=0, base_offset=1,
                                 timestamp_ms=2)
    plain = build_batch([(None, b"after", [], 3)], base_offset=2)
    got = read_legacy(down_convert(txn + marker + plain, 1, 0))
    assert [(o, v) for o, _ts, _t, _k, v in got][:2] == [(0, b"aborted"), (2, b"after")]
    assert down_convert(marker, 1, 1) == b""


def test_down_convert_log_append_time() -> None:
    batch = bytearray(build_batch(V2_RECORDS, base_offset=0))
    assign_offsets(batch, 0, log_append_time=123_456)
    got = read_legacy(down_convert(bytes(batch), 1, 0))
    assert {(ts, t) for _o, ts, t, _k, _v in got} == {(123_456, 1)}


def test_down_convert_pads_as_kip_283() -> None:
    """The answer is max(read size, first converted batch) bytes; a conversion smaller than
    the read is padded with Kafka's overflow message (offset -1, a length past the end), which
    parses as a partial message (LazyDownConversionRecordsSend.buildOverflowBatch)."""
    read = b"".join(build_batch([(b"k", b"v", [], 1)], base_offset=i) for i in range(4))
    whole = legacy_set(1, 0, [(b"k", b"v", 1)] * 4)
    assert len(whole) < len(read)
    padded = down_convert(read, 1, 0)
    assert len(padded) == len(read)
    assert padded[:len(whole)] == whole
    rest = len(read) - len(whole)
    assert padded[len(whole):] == b"\xff" * 8 + struct.pack(">i", max(rest + 1, 61)) + \
        bytes(rest - 12)
    assert read_legacy(padded) == read_legacy(whole)


def test_down_convert_cuts_as_kip_283() -> None:
    """A conversion larger than the read is cut at the read's size (the client drops the
    partial message and fetches the rest), unless the first converted batch alone is
    larger: that one is always sent whole."""
    small = build_batch([(b"k", b"v", [], 1)], base_offset=0)
    big_records = [(None, b"x" * 10, [], 2)] * 50
    big = build_batch(big_records, base_offset=1)
    full = legacy_set(1, 0, [(b"k", b"v", 1)] + [(None, b"x" * 10, 2)] * 50)
    cut = down_convert(small + big, 1, 0)
    assert len(cut) == len(small + big) < len(full)
    assert cut == full[:len(cut)]
    assert [o for o, *_ in read_legacy(cut)] == list(range((len(cut) - 36) // 44 + 1))
    first_alone = down_convert(big, 1, 1)
    assert first_alone == legacy_set(1, 0, [(None, b"x" * 10, 2)] * 50, first_offset=1)
    assert len(first_alone) > len(big)


def test_down_convert_refuses_zstd() -> None:
    with pytest.raises(UnsupportedCompressionTypeError, match="zstandard"):
        down_convert(build_batch(V2_RECORDS, compression=4), 1, 0)


# ========================================================================= hostile input

_GOOD_LEGACY = [legacy_set(m, c, RECORDS) for m in (0, 1) for c in (0, 1)]
_GOOD_V2 = [build_batch(V2_RECORDS, base_offset=100, compression=c) for c in (0, 1, 2)]


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_mutated_input_raises_kafka_errors_only(data: st.DataObject) -> None:
    """Flipped bytes, cut and stretched buffers: a KafkaError or a result, never a crash."""
    base = bytearray(data.draw(st.sampled_from(_GOOD_LEGACY + _GOOD_V2)))
    for _ in range(data.draw(st.integers(0, 4))):
        i = data.draw(st.integers(0, len(base) - 1))
        base[i] = data.draw(st.integers(0, 255))
    base = base[:data.draw(st.integers(0, len(base)))] + \
        data.draw(st.binary(max_size=30))
    for convert in (lambda b: up_convert(b), lambda b: down_convert(b, 1, 100),
                    lambda b: down_convert(b, 0, 0)):
        try:
            convert(bytes(base))
        except KafkaError:
            pass
