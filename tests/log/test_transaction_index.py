"""TransactionIndex (kafkapy.log.transaction_index) and its place in LogSegment.

The file is checked byte for byte against entries packed here with ``struct`` in Kafka's
layout (reference section 8: version INT16 0, producerId, firstOffset, lastOffset,
lastStableOffset INT64, 34 bytes). ``collect_aborted_txns`` is checked against a plain loop
written after Kafka's TransactionIndex.collectAbortedTxns, on examples and on generated
indexes (including LSOs that do not rise, which the binary search must not be fooled by).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkapy.log.config import LogConfig
from kafkapy.log.index import CorruptIndexError
from kafkapy.log.log import Log
from kafkapy.log.producer_state import CompletedTxn
from kafkapy.log.segment import LogSegment
from kafkapy.log.transaction_index import (
    ABORTED_TXN_SIZE,
    AbortedTxn,
    TransactionIndex,
    txn_index_path,
)
from kafkapy.protocol.records import build_batch


def kafka_entry(pid: int, first: int, last: int, lso: int, version: int = 0) -> bytes:
    return struct.pack(">hqqqq", version, pid, first, last, lso)


def kafka_collect(entries: list[AbortedTxn], fetch: int, upper: int
                  ) -> tuple[list[AbortedTxn], bool]:
    """Kafka's collectAbortedTxns, as a plain loop."""
    out = []
    for t in entries:
        if t.last_offset >= fetch and t.first_offset < upper:
            out.append(t)
        if t.last_stable_offset >= upper:
            return out, True
    return out, False


@pytest.fixture
def idx(tmp_path: Path) -> TransactionIndex:
    return TransactionIndex(txn_index_path(tmp_path, 100), 100)


# ------------------------------------------------------------------------------ the file

def test_entry_layout_is_kafkas() -> None:
    t = AbortedTxn(producer_id=7, first_offset=90, last_offset=120, last_stable_offset=121)
    assert ABORTED_TXN_SIZE == 34
    assert t.to_bytes() == kafka_entry(7, 90, 120, 121)
    assert AbortedTxn.from_bytes(b"xx" + kafka_entry(7, 90, 120, 121), 2) == t


def test_file_is_created_by_the_first_append_only(idx: TransactionIndex) -> None:
    assert idx.path.name == "00000000000000000100.txnindex"
    assert idx.is_empty and idx.all_entries() == []
    assert idx.collect_aborted_txns(0, 1000) == ([], False)
    idx.truncate_to(0)
    idx.reset()
    idx.flush()
    idx.sanity_check()
    assert idx.flush_fd() is None
    assert not idx.path.exists()
    idx.append(AbortedTxn(7, 90, 120, 121))
    assert idx.path.read_bytes() == kafka_entry(7, 90, 120, 121)
    idx.append(AbortedTxn(-5, 110, 130, 110))
    assert idx.path.read_bytes() == kafka_entry(7, 90, 120, 121) + kafka_entry(-5, 110, 130, 110)
    fd = idx.flush_fd()
    assert fd is not None
    os.close(fd)
    idx.flush()
    idx.close()


def test_entries_written_by_kafka_are_read(tmp_path: Path) -> None:
    path = txn_index_path(tmp_path, 0)
    path.write_bytes(kafka_entry(1, 0, 10, 11) + kafka_entry(2, 5, 20, 21))
    idx = TransactionIndex(path, 0)
    assert idx.all_entries() == [AbortedTxn(1, 0, 10, 11), AbortedTxn(2, 5, 20, 21)]
    idx.sanity_check()
    # appends go after them, and must still rise
    with pytest.raises(ValueError):
        idx.append(AbortedTxn(3, 15, 20, 21))
    idx.append(AbortedTxn(3, 15, 25, 26))
    assert path.read_bytes()[68:] == kafka_entry(3, 15, 25, 26)
    idx.close()


def test_append_refuses_a_last_offset_that_does_not_rise(idx: TransactionIndex) -> None:
    idx.append(AbortedTxn(1, 100, 110, 111))
    for last in (110, 105):
        with pytest.raises(ValueError):
            idx.append(AbortedTxn(2, 100, last, last + 1))
    assert idx.path.stat().st_size == 34
    idx.close()


def test_sanity_check(tmp_path: Path) -> None:
    path = txn_index_path(tmp_path, 100)
    path.write_bytes(kafka_entry(1, 100, 110, 111) + b"\x00" * 5)     # torn last entry
    idx = TransactionIndex(path, 100)
    assert idx.all_entries() == [AbortedTxn(1, 100, 110, 111)]
    with pytest.raises(CorruptIndexError):
        idx.sanity_check()
    path.write_bytes(kafka_entry(1, 50, 99, 100))                      # below the base
    with pytest.raises(CorruptIndexError):
        TransactionIndex(path, 100).sanity_check()
    path.write_bytes(kafka_entry(1, 100, 110, 111, version=1))        # unknown version
    with pytest.raises(CorruptIndexError):
        TransactionIndex(path, 100).all_entries()


# --------------------------------------------------------------------------- collecting

ENTRIES = [
    AbortedTxn(1, 0, 10, 11),
    AbortedTxn(2, 5, 20, 5),        # another transaction (first offset 5) kept the LSO low
    AbortedTxn(3, 15, 30, 31),
    AbortedTxn(4, 25, 40, 41),
]


@pytest.mark.parametrize(("fetch", "upper", "expected", "found_last"), [
    (0, 100, ENTRIES, False),
    (11, 100, ENTRIES[1:], False),
    (0, 11, ENTRIES[:1], True),           # entry 0's LSO 11 >= 11: stop there
    (0, 12, ENTRIES[:2], True),           # entry 1 (LSO 5) does not stop; entry 2 (31)
                                          # does, but starts at 15: not collected
    (21, 31, ENTRIES[2:3], True),
    (31, 41, ENTRIES[3:], True),
    (41, 100, [], False),
    (0, 5, ENTRIES[:1], True),            # firstOffset 5 is not < 5; LSO 11 >= 5 stops
    (12, 12, ENTRIES[1:2], True),         # entry 0 ends before 12; entry 1 overlaps
])
def test_collect_aborted_txns(idx: TransactionIndex, fetch: int, upper: int,
                              expected: list[AbortedTxn], found_last: bool) -> None:
    for t in ENTRIES:
        idx.append(t)
    assert kafka_collect(ENTRIES, fetch, upper) == (expected, found_last)
    assert idx.collect_aborted_txns(fetch, upper) == (expected, found_last)
    result = idx.collect_aborted_txns(fetch, upper)
    assert result.aborted == expected and result.found_last is found_last
    idx.close()


@st.composite
def indexes(draw: st.DrawFn) -> list[AbortedTxn]:
    n = draw(st.integers(0, 12))
    lasts = sorted(draw(st.sets(st.integers(0, 200), min_size=n, max_size=n)))
    out = []
    for last in lasts:
        first = draw(st.integers(max(0, last - 60), last))
        lso = draw(st.integers(0, last + 1))
        out.append(AbortedTxn(draw(st.integers(0, 3)), first, last, lso))
    return out


@settings(max_examples=300, deadline=None)
@given(entries=indexes(), fetch=st.integers(0, 220), span=st.integers(0, 80),
       unsorted=st.booleans())
def test_collect_matches_kafkas_loop(tmp_path_factory: pytest.TempPathFactory,
                                     entries: list[AbortedTxn], fetch: int, span: int,
                                     unsorted: bool) -> None:
    path = txn_index_path(tmp_path_factory.mktemp("txn"), 0)
    if unsorted and len(entries) > 1:
        entries = entries[::-1]     # a file Kafka would not write: the plain scan is used
    path.write_bytes(b"".join(kafka_entry(t.producer_id, t.first_offset, t.last_offset,
                                          t.last_stable_offset) for t in entries))
    idx = TransactionIndex(path, 0)
    assert idx.collect_aborted_txns(fetch, fetch + span) == \
        kafka_collect(entries, fetch, fetch + span)


# --------------------------------------------------------------------------- truncation

def test_truncate_to(idx: TransactionIndex) -> None:
    txns = [AbortedTxn(1, 100, 110, 111), AbortedTxn(2, 105, 120, 121),
            AbortedTxn(3, 115, 130, 131)]
    for t in txns:
        idx.append(t)
    idx.truncate_to(131)
    assert idx.all_entries() == txns
    idx.truncate_to(121)                  # keeps lastOffset 120 < 121
    assert idx.all_entries() == txns[:2]
    assert idx.path.read_bytes() == b"".join(t.to_bytes() for t in txns[:2])
    idx.truncate_to(120)
    assert idx.all_entries() == txns[:1]
    assert idx.path.stat().st_size == 34
    idx.append(AbortedTxn(4, 112, 115, 116))    # the next append follows the kept entry
    assert idx.path.read_bytes() == txns[0].to_bytes() + kafka_entry(4, 112, 115, 116)
    idx.reset()
    assert idx.is_empty and idx.path.read_bytes() == b""
    idx.append(AbortedTxn(5, 100, 101, 102))
    assert idx.path.read_bytes() == kafka_entry(5, 100, 101, 102)
    idx.close()


def test_truncation_is_seen_by_a_reopened_index(idx: TransactionIndex) -> None:
    for i in range(5):
        idx.append(AbortedTxn(i, 100 + 10 * i, 105 + 10 * i, 106 + 10 * i))
    idx.truncate_to(125)            # last offsets 105, 115 | 125, 135, 145
    idx.close()
    again = TransactionIndex(idx.path, 100)
    assert [t.producer_id for t in again.all_entries()] == [0, 1]


def test_rename_and_delete(idx: TransactionIndex, tmp_path: Path) -> None:
    idx.rename(tmp_path / "x.txnindex.deleted")     # no file yet: only the name changes
    assert idx.path.name == "x.txnindex.deleted" and not idx.path.exists()
    idx.append(AbortedTxn(1, 100, 110, 111))
    assert (tmp_path / "x.txnindex.deleted").exists()
    idx.rename(tmp_path / "y.txnindex")
    idx.append(AbortedTxn(1, 111, 112, 113))        # the open descriptor follows the file
    assert (tmp_path / "y.txnindex").stat().st_size == 68
    idx.delete()
    assert not (tmp_path / "y.txnindex").exists()
    assert idx.is_empty


# ----------------------------------------------------------------------- in the segment

def config() -> LogConfig:
    return LogConfig(index_interval_bytes=100, segment_index_bytes=4096)


def txn_segment(directory: Path, base: int = 0) -> LogSegment:
    """A segment holding offsets base..base+19 (data) whose markers we pretend are at
    base+10 (commit of producer 1), base+15 and base+19 (aborts of producers 2 and 3)."""
    seg = LogSegment.open(directory, base, config(), active=True, create=True)
    for i in range(20):
        seg.append(build_batch([(b"k", b"v" * 20, None, 1000 + i)], base_offset=base + i))
    seg.update_txn_index(CompletedTxn(1, base + 2, base + 10, False), base + 11)
    assert not seg.txn_index.path.exists()       # a commit is not indexed
    seg.update_txn_index(CompletedTxn(2, base + 3, base + 15, True), base + 16)
    seg.update_txn_index(CompletedTxn(3, base + 12, base + 19, True), base + 20)
    return seg


def test_segment_indexes_aborts(tmp_path: Path) -> None:
    seg = txn_segment(tmp_path)
    assert seg.txn_index.path == tmp_path / "00000000000000000000.txnindex"
    assert seg.txn_index.path.read_bytes() == kafka_entry(2, 3, 15, 16) + \
        kafka_entry(3, 12, 19, 20)
    assert seg.collect_aborted_txns(0, 14) == ([AbortedTxn(2, 3, 15, 16)], True)
    assert seg.collect_aborted_txns(16, 30) == ([AbortedTxn(3, 12, 19, 20)], False)
    fd = seg.txn_index_flush_fd()
    assert fd is not None
    os.fsync(fd)
    os.close(fd)
    seg.close()
    again = LogSegment.open(tmp_path, 0, config(), active=False)
    assert again.txn_index.all_entries() == [AbortedTxn(2, 3, 15, 16), AbortedTxn(3, 12, 19, 20)]
    again.close()


def test_segment_without_aborts_has_no_file(tmp_path: Path) -> None:
    seg = LogSegment.open(tmp_path, 0, config(), active=True, create=True)
    seg.append(build_batch([(b"k", b"v", None, 1000)], base_offset=0))
    assert seg.txn_index_flush_fd() is None
    seg.truncate_to(0)
    seg.rename_to_deleted()
    seg.delete_files()
    assert list(tmp_path.iterdir()) == []


def test_segment_truncation_cuts_the_txn_index(tmp_path: Path) -> None:
    seg = txn_segment(tmp_path)
    seg.truncate_to(19)            # the marker at 19 goes, the one at 15 stays
    assert seg.txn_index.all_entries() == [AbortedTxn(2, 3, 15, 16)]
    assert seg.txn_index.path.stat().st_size == 34
    seg.truncate_to(30)            # nothing at or past 30
    assert seg.txn_index.all_entries() == [AbortedTxn(2, 3, 15, 16)]
    seg.truncate_to(12)
    assert seg.txn_index.is_empty
    seg.close()


def test_segment_rename_to_deleted_and_delete(tmp_path: Path) -> None:
    seg = txn_segment(tmp_path, base=1000)
    seg.rename_to_deleted()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "00000000000000001000.txnindex.deleted" in names
    assert "00000000000000001000.txnindex" not in names
    assert all(n.endswith(".deleted") for n in names)
    # a new segment at the same base does not inherit the aborted transactions
    new = LogSegment.open(tmp_path, 1000, config(), active=True, create=True)
    assert new.txn_index.is_empty
    seg.delete_files()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00000000000000001000.index", "00000000000000001000.log",
        "00000000000000001000.timeindex"]
    new.close()


def test_segment_delete_without_rename(tmp_path: Path) -> None:
    seg = txn_segment(tmp_path)
    seg.delete_files()
    assert list(tmp_path.iterdir()) == []


def test_created_segment_removes_a_stale_txn_index(tmp_path: Path) -> None:
    txn_index_path(tmp_path, 0).write_bytes(kafka_entry(9, 0, 5, 6))
    seg = LogSegment.open(tmp_path, 0, config(), active=True, create=True)
    assert seg.txn_index.is_empty and not txn_index_path(tmp_path, 0).exists()
    seg.close()


def test_recover_leaves_the_txn_index_to_the_log(tmp_path: Path) -> None:
    seg = txn_segment(tmp_path)
    seg.recover()
    assert len(seg.txn_index.all_entries()) == 2
    seg.txn_index.reset()
    assert seg.txn_index.is_empty
    seg.close_without_trim()


def test_log_load_removes_a_stray_deleted_txn_index(tmp_path: Path) -> None:
    d = tmp_path / "t-0"
    d.mkdir()
    stray = d / "00000000000000000000.txnindex.deleted"
    stray.write_bytes(kafka_entry(1, 0, 1, 2))
    log = Log.open(d, config())
    assert not stray.exists()
    log.close()


def test_a_read_committed_read_lists_aborted_transactions_only_when_it_read(
        tmp_path: Path) -> None:
    """Log.read with ``include_aborted_txns``: the aborted transactions of what it read (from
    the segment holding the fetch offset up to the next segment's base), an empty list when
    it read nothing (a caught-up consumer, Kafka's emptyFetchDataInfo), None without."""
    from kafkapy.log.producer_state import AppendOrigin
    from kafkapy.protocol.records import build_control_batch
    log = Log.open(tmp_path / "t-0", config())
    log.append_as_leader(build_batch([(b"k", b"aborted", None, 5000)], producer_id=4,
                                     producer_epoch=0, base_sequence=0,
                                     is_transactional=True), leader_epoch=0)
    log.append_as_leader(build_control_batch(0, 0, producer_id=4, producer_epoch=0,
                                             timestamp_ms=5000),
                         leader_epoch=0, origin=AppendOrigin.COORDINATOR)
    log.append_as_leader(build_batch([(b"k", b"plain", None, 5000)]), leader_epoch=0)
    log.update_high_watermark(log.log_end_offset)
    end = log.log_end_offset
    assert end == 3
    read = log.read(0, 1 << 20, end, include_aborted_txns=True)
    assert read.size > 0 and read.aborted_transactions == [AbortedTxn(4, 0, 1, 2)]
    assert log.read(0, 1 << 20, end).aborted_transactions is None
    caught_up = log.read(end, 1 << 20, end, include_aborted_txns=True)
    assert caught_up.size == 0 and caught_up.aborted_transactions == []
    log.close()
