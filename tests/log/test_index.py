"""Offset and time indexes: Kafka's byte layout, read back by an independent parser (struct:
tests.log.kafka_files), and lookups checked against a plain sorted-list model (bisect)."""

from __future__ import annotations

import bisect
import os
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkapy._log import FileMap, largest_lower_bound
from kafkapy.log.index import (
    NO_TIMESTAMP,
    IndexFullError,
    IndexOffsetOverflowError,
    InvalidOffsetError,
    OffsetIndex,
    OffsetPosition,
    TimeIndex,
    TimestampOffset,
    read_offset_index,
    read_time_index,
)
from tests.log.kafka_files import parse_offset_index, parse_time_index

BASE = 1_000


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_mapped_indexes_hold_no_file_descriptor(tmp_path: Path) -> None:
    """An open index costs no file handle (Python's mmap dups one per map), so a broker with
    10,000 partitions needs one handle per segment, as Kafka's does."""
    before = open_fds()
    indexes: list[OffsetIndex | TimeIndex] = []
    for i in range(50):
        indexes.append(OffsetIndex(tmp_path / f"{i:020d}.index", i, max_index_size=800))
        indexes.append(TimeIndex(tmp_path / f"{i:020d}.timeindex", i, max_index_size=1200))
    assert open_fds() == before
    for i, index in enumerate(indexes):
        if isinstance(index, OffsetIndex):
            index.append(i // 2 + 1, 10)
        else:
            index.maybe_append(5, i // 2 + 1)
    for index in indexes:
        index.close()                              # trims: remaps at the final size
    assert open_fds() == before
    assert parse_offset_index(tmp_path / f"{7:020d}.index") == [(1, 10)]
    assert parse_time_index(tmp_path / f"{7:020d}.timeindex") == [(5, 1)]


def test_file_map_writes_through_and_refuses_to_close_while_exported(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(bytes(16))
    fd = os.open(path, os.O_RDWR)
    try:
        mapped = FileMap(fd, 16)
    finally:
        os.close(fd)
    view = memoryview(mapped)
    view[2:5] = b"abc"
    struct.pack_into(">q", mapped, 8, -2)
    with pytest.raises(BufferError):
        mapped.close()
    view.release()
    mapped.flush()
    assert path.read_bytes() == bytes(2) + b"abc" + bytes(3) + struct.pack(">q", -2)
    mapped.close()
    assert mapped.closed
    with pytest.raises(ValueError, match="closed"):
        memoryview(mapped)
    empty = FileMap(-1, 0)                         # nothing to map: an empty buffer
    assert len(empty) == 0 and bytes(memoryview(empty)) == b""


def _vm_flags(path: Path) -> list[str]:
    """The VmFlags of this process's mapping of ``path`` (/proc/self/smaps)."""
    mapping = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if line.split()[-1:] == [str(path)] and "-" in line.split()[0]:
            mapping = path
        elif mapping is not None and line.startswith("VmFlags:"):
            return line.split()[1:]
    raise AssertionError(f"{path} is not mapped")


def test_an_index_mapping_is_advised_random(tmp_path: Path) -> None:
    """The kernel is told not to read around an index's faults ("rr", VM_RAND_READ): the first
    write into a new 10 MiB index otherwise cost 50-120 ms of CPU with the GIL held here
    (benchmarks/index_map_probe.py), a stall of the whole broker per new segment."""
    path = tmp_path / "00000000000000000000.index"
    index = OffsetIndex(path, 0, max_index_size=10 * 1024 * 1024)
    index.append(5, 4096)
    assert "rr" in _vm_flags(path)
    index.close()
    path.write_bytes(bytes(16))           # and a read-only mapping of an existing index
    fd = os.open(path, os.O_RDWR)
    try:
        mapped = FileMap(fd, 16)
    finally:
        os.close(fd)
    assert "rr" in _vm_flags(path)
    mapped.close()


def test_offset_index_bytes_preallocation_and_trim(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000001000.index"
    index = OffsetIndex(path, BASE, max_index_size=8 * 10 + 5)   # rounded down to 10 entries
    assert path.stat().st_size == 80                               # preallocated
    index.append(BASE + 3, 0)
    index.append(BASE + 70, 4100)
    index.close()
    assert path.stat().st_size == 16                               # trimmed on close
    assert parse_offset_index(path) == [(3, 0), (70, 4100)]
    again = OffsetIndex(path, BASE, max_index_size=80)
    assert again.entries == 2 and path.stat().st_size == 80
    assert again.lookup(BASE + 69) == OffsetPosition(BASE + 3, 0)
    again.close()


def _mapped_files(suffix: str) -> set[str]:
    """The files of this process's memory mappings ending in ``suffix`` (/proc/self/maps)."""
    with open("/proc/self/maps") as f:
        return {line.split(None, 5)[5].strip() for line in f
                if len(line.split(None, 5)) == 6 and line.rstrip().endswith(suffix)}


def test_read_only_index_is_mapped_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000001000.index"
    with OffsetIndex(path, BASE, max_index_size=80) as index:
        index.append(BASE + 3, 0)
        index.append(BASE + 70, 4100)
    lazy = OffsetIndex(path, BASE, max_index_size=80, preallocate=False)
    # Opening read the length only: no mapping, the file as it was.
    assert not lazy.is_mapped and str(path) not in _mapped_files(".index")
    assert lazy.entries == 2 and lazy.is_full and path.stat().st_size == 16
    assert lazy.lookup(BASE + 69) == OffsetPosition(BASE + 3, 0)     # maps it
    assert lazy.is_mapped and str(path) in _mapped_files(".index")
    lazy.unmap()
    assert not lazy.is_mapped and str(path) not in _mapped_files(".index")
    assert lazy.lookup(BASE + 70) == OffsetPosition(BASE + 70, 4100)  # mapped again
    lazy.close()
    assert not lazy.is_mapped and parse_offset_index(path) == [(3, 0), (70, 4100)]


def test_lazy_index_trims_a_torn_entry_and_creates_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000001000.timeindex"
    path.write_bytes(struct.pack(">qi", 5000, 3) + b"\x01\x02\x03")     # a torn second entry
    lazy = TimeIndex(path, BASE, max_index_size=120, preallocate=False)
    assert lazy.entries == 1 and not lazy.is_mapped
    lazy.close()                                   # never mapped: cut to its whole entry
    assert path.stat().st_size == 12
    missing = tmp_path / "00000000000000002000.index"
    lazy = OffsetIndex(missing, 2000, max_index_size=80, preallocate=False)
    assert lazy.entries == 0 and not missing.exists()
    lazy.close()
    assert missing.exists() and missing.stat().st_size == 0


def test_offset_lookup_edges(tmp_path: Path) -> None:
    with OffsetIndex(tmp_path / "a.index", BASE, 800) as index:
        assert index.lookup(BASE + 5) == OffsetPosition(BASE, 0)        # empty index
        index.append(BASE + 10, 100)
        index.append(BASE + 20, 200)
        assert index.lookup(BASE + 9) == OffsetPosition(BASE, 0)        # before the first entry
        assert index.lookup(BASE + 10) == OffsetPosition(BASE + 10, 100)
        assert index.lookup(BASE + 19) == OffsetPosition(BASE + 10, 100)
        assert index.lookup(BASE + 10**9) == OffsetPosition(BASE + 20, 200)
        assert index.lookup(0) == OffsetPosition(BASE, 0)                # below the base


def test_offset_index_refuses_bad_appends(tmp_path: Path) -> None:
    with OffsetIndex(tmp_path / "a.index", BASE, 16) as index:
        index.append(BASE + 1, 0)
        with pytest.raises(InvalidOffsetError):
            index.append(BASE + 1, 10)
        with pytest.raises(IndexOffsetOverflowError):
            index.append(BASE + 2**31, 10)
        with pytest.raises(ValueError, match="does not fit an INT32"):
            index.append(BASE + 5, 2**31)
        index.append(BASE + 2, 10)
        assert index.is_full
        with pytest.raises(IndexFullError):
            index.append(BASE + 3, 20)
        assert [index.entry(i) for i in range(index.entries)] == [
            OffsetPosition(BASE + 1, 0), OffsetPosition(BASE + 2, 10)]


def test_offset_truncate_to(tmp_path: Path) -> None:
    with OffsetIndex(tmp_path / "a.index", BASE, 800) as index:
        for i in range(1, 6):
            index.append(BASE + 10 * i, 100 * i)
        index.truncate_to(BASE + 30)          # drops 30, 40, 50
        assert index.entries == 2
        index.truncate_to(BASE + 25)          # nothing at or above 25 left but 20 stays
        assert index.entries == 2
        index.append(BASE + 21, 999)
    assert parse_offset_index(tmp_path / "a.index") == [(10, 100), (20, 200), (21, 999)]


def test_time_index_appends_only_on_new_maximum(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000001000.timeindex"
    with TimeIndex(path, BASE, 12 * 100) as index:
        assert index.lookup(5) == TimestampOffset(NO_TIMESTAMP, BASE)
        index.maybe_append(1_000, BASE + 4)
        index.maybe_append(1_000, BASE + 9)      # not a new maximum: no entry
        index.maybe_append(900, BASE + 12)       # older timestamp: no entry
        index.maybe_append(2_000, BASE + 20)
        with pytest.raises(InvalidOffsetError):
            index.maybe_append(3_000, BASE + 19)
        assert index.lookup(999) == TimestampOffset(NO_TIMESTAMP, BASE)
        assert index.lookup(1_500) == TimestampOffset(1_000, BASE + 4)
        assert index.lookup(2_000) == TimestampOffset(2_000, BASE + 20)
        index.truncate_to(BASE + 20)
        assert index.entries == 1
    assert parse_time_index(path) == [(1_000, 4)]


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.integers(0, 10_000), max_size=300, unique=True).map(sorted),
       targets=st.lists(st.integers(-5, 10_010), min_size=1, max_size=30))
def test_offset_lookup_matches_bisect(tmp_path_factory, keys: list[int],
                                      targets: list[int]) -> None:
    path = tmp_path_factory.mktemp("idx") / "a.index"
    with OffsetIndex(path, BASE, 8 * 400) as index:
        for k in keys:
            index.append(BASE + k, 7 * k)
        for t in targets:
            i = bisect.bisect_right(keys, t) - 1
            expected = OffsetPosition(BASE + keys[i], 7 * keys[i]) if i >= 0 \
                else OffsetPosition(BASE, 0)
            assert index.lookup(BASE + t) == expected


@settings(max_examples=60, deadline=None)
@given(timestamps=st.lists(st.integers(-(2**62), 2**62), max_size=200, unique=True).map(sorted),
       targets=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=30))
def test_time_lookup_matches_bisect(tmp_path_factory, timestamps: list[int],
                                    targets: list[int]) -> None:
    path = tmp_path_factory.mktemp("tidx") / "a.timeindex"
    with TimeIndex(path, BASE, 12 * 300) as index:
        for i, ts in enumerate(timestamps):
            index.maybe_append(ts, BASE + i)
        for t in targets:
            i = bisect.bisect_right(timestamps, t) - 1
            expected = TimestampOffset(timestamps[i], BASE + i) if i >= 0 \
                else TimestampOffset(NO_TIMESTAMP, BASE)
            assert index.lookup(t) == expected


def test_largest_lower_bound_refuses_entries_past_the_buffer() -> None:
    with pytest.raises(ValueError, match="do not fit"):
        largest_lower_bound(b"\x00" * 15, 2, 8, 0)
    with pytest.raises(ValueError, match="neither 8 nor 12"):
        largest_lower_bound(b"", 0, 4, 0)
    assert largest_lower_bound(b"", 0, 8, 0) == -1


def test_sanity_check_catches_an_entry_below_the_base(tmp_path: Path) -> None:
    from kafkapy.log.index import CorruptIndexError

    path = tmp_path / "a.index"
    path.write_bytes(struct.pack(">ii", 3, 0) + struct.pack(">ii", -5, 40))
    index = OffsetIndex(path, BASE, 800)
    with pytest.raises(CorruptIndexError) as info:
        index.sanity_check()
    assert info.value.code == 56
    index.close()
    path.write_bytes(struct.pack(">qi", 50, 1) + struct.pack(">qi", 10, 2))
    tindex = TimeIndex(path, BASE, 1200)
    with pytest.raises(CorruptIndexError):
        tindex.sanity_check()
    tindex.close()


def test_read_index_files_without_changing_them(tmp_path: Path) -> None:
    """The read-only readers (for offline tools) see every whole entry, report the length of a
    torn file, and leave the file exactly as it was (opening an index would resize it)."""
    index = OffsetIndex(tmp_path / "00000000000000000100.index", 100, 8 * 10)
    index.append(103, 0)
    index.append(110, 4096)
    index.close()
    time_index = TimeIndex(tmp_path / "00000000000000000100.timeindex", 100, 12 * 10)
    time_index.maybe_append(1_000, 103)
    time_index.maybe_append(2_000, 110)
    time_index.close()
    torn = index.path.read_bytes() + b"\x00\x01\x02"
    index.path.write_bytes(torn)
    entries, length = read_offset_index(index.path, 100)
    assert entries == [OffsetPosition(103, 0), OffsetPosition(110, 4096)]
    assert length == 19
    assert index.path.read_bytes() == torn
    times, tlength = read_time_index(time_index.path, 100)
    assert times == [TimestampOffset(1_000, 103), TimestampOffset(2_000, 110)]
    assert tlength == 24
    with pytest.raises(FileNotFoundError):
        read_offset_index(tmp_path / "00000000000000000000.index", 0)
    assert not (tmp_path / "00000000000000000000.index").exists()
