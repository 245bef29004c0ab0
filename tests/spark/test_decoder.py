"""kafkapy._arrow, the compiled batch -> Arrow buffers decoder, against an independent codec.

Batches are built by kafka-python's DefaultRecordBatchBuilder (every codec, through
kafka-python's own lz4/snappy/zstd bindings) and read back by kafka-python's
DefaultRecordBatch; the decoder's buffers, assembled here with pyarrow directly (not through
pyspark_kafkapy), must hold the same records. Also: offset ranges, control batches, aborted
transactions, LogAppendTime, column projection, row budgets, and every kind of damage
(reported with the batch's position, the batch rolled back whole).
"""

from __future__ import annotations

import struct
from typing import Any

import crc32c
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

import kafkapy._arrow as A
from kafkapy.protocol.records import build_control_batch

ALL = (A.COL_KEY | A.COL_VALUE | A.COL_OFFSET | A.COL_TIMESTAMP | A.COL_TIMESTAMP_TYPE
       | A.COL_HEADERS)
FAR = 2**62

Rec = tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


def build(records: list[Rec], *, codec: int = 0, base_offset: int = 0, pid: int = -1,
          transactional: bool = False, deltas: list[int] | None = None) -> bytes:
    """A batch by kafka-python: records (timestamp, key, value, headers), offsets from
    ``base_offset`` (patched in: the base offset is not CRC-covered)."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec,
                                  is_transactional=transactional, producer_id=pid,
                                  producer_epoch=0 if pid >= 0 else -1,
                                  base_sequence=0 if pid >= 0 else -1, batch_size=1 << 24)
    for i, (ts, key, value, headers) in enumerate(records):
        b.append(deltas[i] if deltas else i, timestamp=ts, key=key, value=value,
                 headers=headers)
    data = bytearray(b.build())
    struct.pack_into(">q", data, 0, base_offset)
    return bytes(data)


def oracle(buf: bytes, *, log_append: bool = False) -> list[tuple[Any, ...]]:
    """Rows (offset, timestamp us, key, value, headers, timestamp type) as kafka-python reads
    ``buf`` (one or more batches)."""
    rows: list[tuple[Any, ...]] = []
    pos = 0
    while pos < len(buf):
        size = struct.unpack_from(">i", buf, pos + 8)[0] + 12
        batch = DefaultRecordBatch(buf[pos:pos + size])
        if not batch.is_control_batch:
            for r in batch:
                rows.append((r.offset, r.timestamp * 1000, r.key, r.value,
                             [(k, v) for k, v in r.headers] or None,
                             1 if log_append else 0))
        pos += size
    return rows


def arrays(cols: A.DecodedColumns) -> dict[str, pa.Array]:
    """The decoder's buffers as pyarrow arrays, built here without pyspark_kafkapy."""
    n = cols.rows
    out: dict[str, pa.Array] = {}

    def buf(x: Any) -> Any:
        return None if x is None else pa.py_buffer(x)

    for name in ("key", "value"):
        c = getattr(cols, name)
        if c is not None:
            out[name] = pa.Array.from_buffers(pa.binary(), n, [buf(c[0]), buf(c[1]), buf(c[2])],
                                              null_count=c[3])
    if cols.offset is not None:
        out["offset"] = pa.Array.from_buffers(pa.int64(), n, [None, buf(cols.offset)])
    if cols.timestamp is not None:
        out["timestamp"] = pa.Array.from_buffers(pa.int64(), n, [None, buf(cols.timestamp)])
    if cols.timestamp_type is not None:
        out["timestampType"] = pa.Array.from_buffers(pa.int32(), n,
                                                     [None, buf(cols.timestamp_type)])
    if cols.headers is not None:
        lv, lo, ln, h, ko, kd, vv, vo, vd, vn = cols.headers
        keys = pa.Array.from_buffers(pa.string(), h, [None, buf(ko), buf(kd)])
        values = pa.Array.from_buffers(pa.binary(), h, [buf(vv), buf(vo), buf(vd)],
                                       null_count=vn)
        st_type = pa.struct([("key", pa.string()), ("value", pa.binary())])
        entries = pa.Array.from_buffers(st_type, h, [None], children=[keys, values])
        out["headers"] = pa.Array.from_buffers(pa.list_(st_type), n, [buf(lv), buf(lo)],
                                               null_count=ln, children=[entries])
    for a in out.values():
        a.validate(full=True)
    return out


def rows(cols: A.DecodedColumns) -> list[tuple[Any, ...]]:
    a = {k: v.to_pylist() for k, v in arrays(cols).items()}
    headers = [None if h is None else [(e["key"], e["value"]) for e in h]
               for h in a["headers"]]
    return list(zip(a["offset"], a["timestamp"], a["key"], a["value"], headers,
                    a["timestampType"], strict=True))


def decode(buf: bytes, *, columns: int = ALL, start: int = 0, end: int = FAR,
           aborted: tuple[tuple[int, int, int], ...] = (), verify_crc: bool = True
           ) -> tuple[tuple[int, int, int, str | None], A.DecodedColumns]:
    d = A.RecordBatchDecoder(columns, start, end, verify_crc=verify_crc, aborted=aborted)
    result = d.decode(buf)
    return result, d.take()


SAMPLE: list[Rec] = [
    (1_700_000_000_000, b"k0", b"v0", []),
    (1_700_000_000_005, None, b"no key", [("h", b"1")]),
    (1_699_999_999_990, b"k2", None, [("dup", b"a"), ("dup", None), ("ключ", b"")]),
    (1_700_000_000_001, b"", b"", []),
    (1_700_000_000_002, None, None, [("x", b"\x00\xff" * 50)]),
    (1_700_000_000_003, b"k" * 300, b"v" * 70_000, []),
]


def test_extension_is_compiled() -> None:
    assert A.__file__ is not None and A.__file__.endswith(".so")


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4], ids=["none", "gzip", "snappy", "lz4", "zstd"])
def test_matches_kafka_python_every_codec(codec: int) -> None:
    buf = (build(SAMPLE, codec=codec, base_offset=100)
           + build(SAMPLE[:3], codec=codec, base_offset=106))
    (status, position, size, message), cols = decode(buf)
    assert (status, position, size, message) == (A.STATUS_END_OF_BUFFER, len(buf), 0, None)
    assert cols.rows == 9
    assert rows(cols) == oracle(buf)
    assert cols.key is not None and cols.key[3] == 3      # null keys counted
    assert cols.value is not None and cols.value[3] == 3


def test_log_append_time_gives_every_record_the_max_timestamp() -> None:
    data = bytearray(build(SAMPLE[:3]))
    data[22] |= 0x08
    struct.pack_into(">q", data, 35, 1_800_000_000_000)
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    _, cols = decode(bytes(data))
    got = rows(cols)
    assert {r[1] for r in got} == {1_800_000_000_000 * 1000}
    assert {r[5] for r in got} == {1}
    assert [r[:1] + r[2:5] for r in got] == [r[:1] + r[2:5] for r in oracle(bytes(data))]


def test_offset_range_is_exact_and_stops_at_the_end() -> None:
    first = build(SAMPLE, base_offset=10)             # offsets 10..15
    second = build(SAMPLE, base_offset=16)            # 16..21
    third = build(SAMPLE, base_offset=22)
    buf = first + second + third
    (status, position, _, _), cols = decode(buf, start=12, end=18)
    assert [r[0] for r in rows(cols)] == list(range(12, 18))
    # The batch that reaches the end is used; the next one is not looked at.
    assert (status, position) == (A.STATUS_DONE, len(first) + len(second))
    d = A.RecordBatchDecoder(A.COL_OFFSET, 0, 16)
    assert d.decode(buf)[:2] == (A.STATUS_DONE, len(first))
    assert d.next_offset == 16


def test_batches_before_the_start_are_skipped_unread() -> None:
    first = bytearray(build(SAMPLE, base_offset=0))
    first[70] ^= 0xFF                         # corrupt, but wholly before the start
    buf = bytes(first) + build(SAMPLE, base_offset=6)
    (status, _, _, _), cols = decode(buf, start=6)
    assert status == A.STATUS_END_OF_BUFFER
    assert [r[0] for r in rows(cols)] == list(range(6, 12))


def test_projection_builds_only_the_columns_asked_for() -> None:
    (status, _, _, _), cols = decode(build(SAMPLE), columns=A.COL_OFFSET | A.COL_VALUE)
    assert status == A.STATUS_END_OF_BUFFER
    assert cols.key is None and cols.headers is None and cols.timestamp is None
    a = arrays(cols)
    assert a["offset"].to_pylist() == list(range(6))
    assert a["value"].to_pylist() == [r[2] for r in SAMPLE]
    # No column at all (a schema of topic and partition only): rows are still counted.
    (status, _, _, _), cols = decode(build(SAMPLE), columns=0)
    assert (status, cols.rows, cols.key, cols.offset, cols.headers) == \
        (A.STATUS_END_OF_BUFFER, 6, None, None, None)


def test_control_batches_and_aborted_transactions_are_dropped() -> None:
    aborted_pid, committed_pid = 7, 8
    buf = b"".join([
        build(SAMPLE[:2], base_offset=0),                                        # 0-1 plain
        build(SAMPLE[:2], base_offset=2, pid=aborted_pid, transactional=True),   # 2-3
        build(SAMPLE[:2], base_offset=4, pid=committed_pid, transactional=True),  # 4-5
        build(SAMPLE[:1], base_offset=6, pid=aborted_pid, transactional=True),   # 6
        build_control_batch(0, 0, producer_id=aborted_pid, producer_epoch=0,
                            base_offset=7, timestamp_ms=1),                     # 7 ABORT
        build_control_batch(1, 0, producer_id=committed_pid, producer_epoch=0,
                            base_offset=8, timestamp_ms=1),                     # 8 COMMIT
        build(SAMPLE[:1], base_offset=9, pid=aborted_pid, transactional=True),   # 9 (new txn)
    ])
    _, cols = decode(buf)
    assert [r[0] for r in rows(cols)] == [0, 1, 2, 3, 4, 5, 6, 9]       # markers never shown
    _, cols = decode(buf, aborted=((aborted_pid, 2, 7),))
    assert [r[0] for r in rows(cols)] == [0, 1, 4, 5, 9]


def test_crc_mismatch_is_reported_with_the_batch_position() -> None:
    good = build(SAMPLE[:3], base_offset=0)
    bad = bytearray(build(SAMPLE[:3], base_offset=3))
    bad[-1] ^= 0x01
    buf = good + bytes(bad) + build(SAMPLE[:3], base_offset=6)
    d = A.RecordBatchDecoder(ALL, 0, FAR)
    status, position, size, message = d.decode(buf)
    assert (status, position, size) == (A.STATUS_CORRUPT, len(good), len(bad))
    assert message == "CRC-32C mismatch"
    assert d.rows == 3                        # the batches before it are kept
    # The caller may skip it: its framing is sound.
    status, position, _, _ = d.decode(buf, position + size)
    assert (status, position) == (A.STATUS_END_OF_BUFFER, len(buf))
    assert [r[0] for r in rows(d.take())] == [0, 1, 2, 6, 7, 8]


def test_a_corrupt_record_rolls_the_whole_batch_back() -> None:
    good = build(SAMPLE[:2], base_offset=0)
    bad = bytearray(build(SAMPLE[:3], base_offset=2))
    # The third record's length varint claims more than the batch holds (CRC not checked).
    records = DefaultRecordBatch(bytes(bad))
    assert records.records_count == 3
    first_len = bad[61] >> 1
    second = 61 + 1 + first_len
    second_len = bad[second] >> 1
    bad[second + 1 + second_len] = 0x7E
    buf = good + bytes(bad)
    d = A.RecordBatchDecoder(ALL, 0, FAR, verify_crc=False)
    status, position, size, message = d.decode(buf)
    assert (status, position, size) == (A.STATUS_CORRUPT, len(good), len(bad))
    assert message is not None and message.startswith("corrupt record at byte ")
    assert d.rows == 2
    assert rows(d.take()) == oracle(good)


def test_corrupt_compressed_records_are_reported() -> None:
    bad = bytearray(build(SAMPLE, codec=4))
    bad[70:80] = b"\x00" * 10
    struct.pack_into(">I", bad, 17, crc32c.crc32c(bytes(bad[21:])))
    (status, position, size, message), cols = decode(bytes(bad))
    assert (status, position, size, cols.rows) == (A.STATUS_CORRUPT, 0, len(bad), 0)
    assert message is not None and "decompress" in message


def test_an_incomplete_batch_is_the_end_of_the_buffer() -> None:
    whole = build(SAMPLE[:2], base_offset=0)
    cut = build(SAMPLE[:2], base_offset=2)
    for keep in (5, 20, 61, len(cut) - 1):
        (status, position, _, _), cols = decode(whole + cut[:keep])
        assert (status, position, cols.rows) == (A.STATUS_END_OF_BUFFER, len(whole), 2)


def test_broken_framing_cannot_be_skipped() -> None:
    whole = build(SAMPLE[:2])
    bad = bytearray(build(SAMPLE[:2], base_offset=2))
    struct.pack_into(">i", bad, 8, 10)                    # batchLength below a header
    (status, position, size, message), _ = decode(whole + bytes(bad))
    assert (status, position, size) == (A.STATUS_CORRUPT, len(whole), -1)
    assert message is not None and "batchLength" in message
    bad = bytearray(build(SAMPLE[:2], base_offset=2))
    bad[16] = 9                                           # not a magic we know
    assert decode(whole + bytes(bad))[0][:3] == (A.STATUS_CORRUPT, len(whole), -1)


def test_offsets_going_backwards_are_corrupt() -> None:
    buf = build(SAMPLE[:3], base_offset=5) + build(SAMPLE[:3], base_offset=6)
    (status, position, _, message), _ = decode(buf)
    assert (status, position) == (A.STATUS_CORRUPT, len(buf) // 2)
    assert message is not None and "below the end of the batch before it" in message


def test_legacy_message_sets_are_refused() -> None:
    b = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    b.append(0, timestamp=1, key=b"k", value=b"v")
    (status, position, size, message), _ = decode(bytes(b.build()))
    assert (status, position, size) == (A.STATUS_UNSUPPORTED, 0, -1)
    assert message is not None and "magic 1" in message


def test_row_budget_splits_at_batch_boundaries() -> None:
    buf = b"".join(build(SAMPLE[:4], base_offset=4 * i) for i in range(5))
    d = A.RecordBatchDecoder(ALL, 0, FAR)
    pieces = []
    position = 0
    while True:
        status, position, _, _ = d.decode(buf, position, max_rows=6)
        if status != A.STATUS_FULL:
            break
        pieces.append(d.take())
    pieces.append(d.take())
    assert [p.rows for p in pieces] == [8, 8, 4]
    assert [r for p in pieces for r in rows(p)] == oracle(buf)


def test_every_set_of_columns_is_right_whatever_the_size_of_the_set_before() -> None:
    # After a take the decoder starts the next set in buffers the size of the last one:
    # smaller and larger sets after it, and every set handed over, must stay exact.
    d = A.RecordBatchDecoder(ALL, 0, FAR)
    taken = []
    offset = 0
    for batches in (3, 1, 7, 2):
        buf = b"".join(build(SAMPLE, base_offset=offset + len(SAMPLE) * i)
                       for i in range(batches))
        offset += len(SAMPLE) * batches
        status, position, _, _ = d.decode(buf)
        assert (status, position) == (A.STATUS_END_OF_BUFFER, len(buf))
        taken.append((d.take(), oracle(buf)))
    for cols, want in taken:
        assert rows(cols) == want


def _big_set(seed: int, offset: int) -> list[Rec]:
    # Buffers past the pool's 64 KiB floor: keys, values and header values of kilobytes,
    # nulls where the seed says (each set's bitmaps differ from the last one's).
    return [(1_700_000_000_000 + i,
             None if (i + seed) % 3 == 0 else bytes([seed, i % 256]) * 600,
             None if (i + seed) % 4 == 0 else bytes([i % 256, seed]) * 1_100,
             [] if (i + seed) % 5 == 0 else [("h", None if i % 2 else bytes([seed]) * 900)])
            for i in range(offset, offset + 96)]


def test_buffers_of_dropped_sets_are_reused_and_every_set_stays_exact() -> None:
    # Freed column buffers go to a pool the next set's buffers come from: a reused block
    # holds the last set's bytes (and bitmap bits), none of which may show in the new set.
    d = A.RecordBatchDecoder(ALL, 0, FAR)
    offset = 0
    reused = 0
    for seed in range(1, 9):
        buf = build(_big_set(seed, offset), base_offset=offset)
        offset += 96
        status, position, _, _ = d.decode(buf)
        assert (status, position) == (A.STATUS_END_OF_BUFFER, len(buf))
        kept_before = A._pool_state()[0]
        cols = d.take()               # the next set's buffers: from the pool where one fits
        reused += kept_before - A._pool_state()[0]
        assert rows(cols) == oracle(buf)
        del cols                      # its blocks go back to the pool
    assert reused > 0
    blocks, kept = A._pool_state()
    assert 0 < blocks <= 32 and kept <= 64 << 20


def test_the_pool_keeps_at_most_its_bound_when_many_sets_are_dropped_at_once() -> None:
    d = A.RecordBatchDecoder(ALL, 0, FAR)
    sets = []
    for i in range(40):
        d.decode(build([(1, b"k", b"v" * 300_000, [])], base_offset=i))
        sets.append(d.take())
    del sets
    blocks, kept = A._pool_state()
    assert blocks <= 32 and kept <= 64 << 20
    # Full: every slot taken, or no room left for one more of these blocks (< 600 kB each).
    assert blocks == 32 or kept > (64 << 20) - 600_000


def test_buffers_outlive_the_decoder() -> None:
    d = A.RecordBatchDecoder(ALL, 0, FAR)
    d.decode(build(SAMPLE))
    cols = d.take()
    del d
    assert rows(cols) == oracle(build(SAMPLE))


@given(st.binary(max_size=40))
def test_header_keys_are_repaired_as_python_and_java_decode_utf8(data: bytes) -> None:
    assert A.utf8_repair(data) == data.decode("utf-8", "replace").encode()


def test_invalid_utf8_header_keys_reach_the_column_repaired() -> None:
    # kafka-python encodes str keys; patch raw bytes into one to make it invalid UTF-8.
    buf = bytearray(build([(1, b"k", b"v", [("abc", b"1")])]))
    at = bytes(buf).index(b"abc")
    buf[at:at + 3] = b"a\xffc"
    struct.pack_into(">I", buf, 17, crc32c.crc32c(bytes(buf[21:])))
    _, cols = decode(bytes(buf))
    assert rows(cols)[0][4] == [("a\ufffdc", b"1")]


headers_st = st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=8))),
                      max_size=3)
record_st = st.tuples(st.integers(0, 2**41), st.one_of(st.none(), st.binary(max_size=20)),
                      st.one_of(st.none(), st.binary(max_size=200)), headers_st)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(record_st, min_size=1, max_size=8), st.integers(0, 4)),
                min_size=1, max_size=4),
       st.integers(0, 30), st.integers(0, 30))
def test_round_trip_against_kafka_python(batches: list[tuple[list[Rec], int]], lo: int,
                                         width: int) -> None:
    buf = b""
    offset = 0
    for records, codec in batches:
        buf += build(records, codec=codec, base_offset=offset)
        offset += len(records)
    _, cols = decode(buf, start=lo, end=lo + width)
    assert rows(cols) == [r for r in oracle(buf) if lo <= r[0] < lo + width]
