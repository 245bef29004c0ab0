"""The record-batch layout has one owner, kafkapy/_batch_layout.pxd.

Its numbers, as kafkapy._records exports them, are checked against an independent
implementation (kafka-python's DefaultRecordBase); the compiled modules that read batches are
checked to take them from the .pxd rather than spell offsets of their own, and the Python
callers to read headers through BatchHeader. Also here: the header-only view and the Produce
request's header checks, the two ways in which Python code meets a header without a whole
batch scan.
"""

from __future__ import annotations

import inspect
import re
import struct
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBase  # type: ignore[import-untyped]

from kafkapy import _records
from kafkapy.errors import (
    CorruptMessageError,
    InvalidRecordError,
    UnsupportedCompressionTypeError,
    UnsupportedForMessageFormatError,
)
from kafkapy.protocol.records import (
    BATCH_HEADER_SIZE,
    BatchHeader,
    build_batch,
    build_control_batch,
    check_produce_batch,
)

ROOT = Path(__file__).resolve().parents[2]
KAFKAPY = ROOT / "kafkapy"
# Every compiled module that reads or writes record batches.
BATCH_MODULES = ("_records.pyx", "_log.pyx", "_arrow.pyx")


def test_header_layout_matches_kafka_python() -> None:
    fmt = DefaultRecordBase.HEADER_STRUCT.format
    codes = fmt[1:] if fmt[0] in "<>!=@" else fmt
    assert len(codes) == len(_records.BATCH_HEADER_LAYOUT)
    for i, (name, offset, size) in enumerate(_records.BATCH_HEADER_LAYOUT):
        assert offset == struct.calcsize(">" + codes[:i]), name
        assert size == struct.calcsize(">" + codes[i]), name
    assert BATCH_HEADER_SIZE == DefaultRecordBase.HEADER_STRUCT.size == 61
    layout = {name: offset for name, offset, _ in _records.BATCH_HEADER_LAYOUT}
    assert layout["attributes"] == DefaultRecordBase.ATTRIBUTES_OFFSET
    assert layout["crc"] == DefaultRecordBase.CRC_OFFSET
    assert layout["partitionLeaderEpoch"] == DefaultRecordBase.AFTER_LEN_OFFSET
    masks = _records.BATCH_ATTRIBUTE_MASKS
    assert masks["compression"] == DefaultRecordBase.CODEC_MASK
    assert masks["timestampType"] == DefaultRecordBase.TIMESTAMP_TYPE_MASK
    assert masks["transactional"] == DefaultRecordBase.TRANSACTIONAL_MASK
    assert masks["control"] == DefaultRecordBase.CONTROL_MASK
    assert masks["deleteHorizon"] == 0x40        # KIP-534; kafka-python has no name for it


# A header offset spelled as a number next to a pointer: ``rd32(p + 23)``, ``p[22]``,
# ``wr64(h + 35, ...)``; or a local copy of the layout's constants or varint readers.
_SPELLED = re.compile(
    r"\b(?:rd|wr)(?:16|32|64)\(\w+(?: \+ pos)? \+ (?:8|12|17|21|23|27|35|43|51|53|57)\b(?! \*)"
    r"|\w\[(?:pos \+ )?(?:16|22)\]"
    r"|\b(?:HEADER_SIZE|CRC_START|MIN_BATCH_LENGTH|R_VARINT|F_SHORT) = "
    r"|\bcdef inline \w+\*? _?(?:rd|read)_(?:raw|varint|varlong)\("
    r"|\bcdef inline int _frame\(")


@pytest.mark.parametrize("module", BATCH_MODULES)
def test_compiled_modules_take_the_layout_from_the_pxd(module: str) -> None:
    source = (KAFKAPY / module).read_text()
    assert "from kafkapy._batch_layout cimport" in source
    # The legacy (magic 0/1) decoder has a layout of its own.
    source = source.split("# ------------------------------------------------------------"
                          "------------ legacy messages")[0]
    assert _SPELLED.findall(source) == []


_PYTHON_SPELLED = re.compile(r"= 61\b|\[(?:8:12|16|21|22|23:27|35:43)\]|unpack_from\(\">q")


@pytest.mark.parametrize("path", [
    "kafkapy/log/segment.py",
    "kafkapy/coordinator/transaction/transaction_state_manager.py",
    "spark_integration/pyspark_kafkapy/_logdir.py",
])
def test_python_callers_read_headers_through_the_view(path: str) -> None:
    assert _PYTHON_SPELLED.findall((ROOT / path).read_text()) == []


def test_produce_header_checks_read_through_the_view() -> None:
    from kafkapy.server.handlers import produce

    assert _PYTHON_SPELLED.findall(inspect.getsource(produce)) == []


# ---------------------------------------------------------------------------- header_only

def test_header_only_reads_a_header_without_its_batch() -> None:
    raw = build_batch([(b"k", b"v" * 100, [], 1_000), (None, b"w", [], 1_005)],
                      base_offset=40, producer_id=7, producer_epoch=3, base_sequence=11,
                      is_transactional=True, partition_leader_epoch=5)
    whole = BatchHeader(raw)
    for buf in (raw[:BATCH_HEADER_SIZE], raw[:100], raw):
        h = BatchHeader.header_only(buf)
        for name in ("base_offset", "batch_length", "partition_leader_epoch", "magic", "crc",
                     "attributes", "compression", "timestamp_type", "is_transactional",
                     "is_control", "last_offset_delta", "base_timestamp", "max_timestamp",
                     "producer_id", "producer_epoch", "base_sequence", "record_count",
                     "size", "last_offset", "next_offset"):
            assert getattr(h, name) == getattr(whole, name), name
    assert BatchHeader.header_only(raw).records() == whole.records()
    assert BatchHeader.header_only(b"\x00" * 7 + raw[:61], 7).base_offset == 40


def test_header_only_refuses_what_needs_the_whole_batch() -> None:
    raw = build_batch([(b"k", b"v", [], 0)])
    h = BatchHeader.header_only(raw[:BATCH_HEADER_SIZE + 1])
    with pytest.raises(ValueError, match="only the header"):
        h.records()
    with pytest.raises(ValueError, match="only the header"):
        h.compute_crc()
    with pytest.raises(ValueError, match="only the header"):
        _ = h.crc_valid
    with pytest.raises(ValueError, match="only the header"):
        _ = h.raw


def test_header_only_errors() -> None:
    raw = build_batch([(b"k", b"v", [], 0)])
    with pytest.raises(CorruptMessageError, match="needs 61"):
        BatchHeader.header_only(raw[:60])
    with pytest.raises(CorruptMessageError):
        BatchHeader.header_only(raw, len(raw) + 1)
    with pytest.raises(ValueError):
        BatchHeader.header_only(raw, -1)
    short = bytearray(raw)
    struct.pack_into(">i", short, 8, 48)
    with pytest.raises(CorruptMessageError):
        BatchHeader.header_only(short)
    magic1 = bytearray(raw)
    magic1[16] = 1
    with pytest.raises(UnsupportedForMessageFormatError):
        BatchHeader.header_only(magic1)


# ---------------------------------------------------------------------- Produce's checks

def test_check_produce_batch_accepts_one_client_batch() -> None:
    raw = build_batch([(b"k", b"v", [], 0)], compression=4, producer_id=9, producer_epoch=1,
                      is_transactional=True)
    h = check_produce_batch(raw, 7)
    assert (h.size, h.producer_id, h.producer_epoch, h.is_transactional) == (len(raw), 9, 1,
                                                                               True)
    assert check_produce_batch(memoryview(bytearray(raw)), 11).compression == 4


def _with(raw: bytes, fmt: str, offset: int, value: int) -> bytes:
    out = bytearray(raw)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda raw: b"\x00" * 10, InvalidRecordError, "10 bytes are not a record batch"),
    (lambda raw: _with(raw, ">b", 16, 1), InvalidRecordError,
     "Produce requests with version 5 are only allowed to contain record batches with magic "
     "version 2, not magic 1"),
    (lambda raw: _with(raw, ">B", 16, 0xFF), InvalidRecordError, "not magic 255"),
    (lambda raw: raw[:40], InvalidRecordError, "40 bytes are not a record batch"),
    (lambda raw: raw + raw, InvalidRecordError,
     f"Produce requests with version 3 and above must carry exactly one record batch "
     f"({2 * 70} bytes, the first batch is 70)"),
    (lambda raw: _with(raw, ">q", 0, 3), InvalidRecordError,
     "the batch's base offset is 3, not 0"),
    (lambda raw: build_control_batch(0, 1, producer_id=1, producer_epoch=0, timestamp_ms=0),
     InvalidRecordError, "clients may not produce control batches"),
    (lambda raw: build_batch([(b"k", b"v", [], 0)], compression=4),
     UnsupportedCompressionTypeError, "zstd compression needs Produce v7 or later, not v5"),
])
def test_check_produce_batch_refusals(make: object, error: type[Exception],
                                      message: str) -> None:
    raw = build_batch([(b"k", b"v", [], 0)])
    assert len(raw) == 70
    with pytest.raises(error) as e:
        check_produce_batch(make(raw), 5)      # type: ignore[operator]
    assert message in str(e.value)
