"""A segment's offset index (``.index``) and time index (``.timeindex``), as Kafka writes them.

Byte layout (big-endian, no header, entries back to back)::

    .index       relativeOffset INT32 | position INT32           8 bytes an entry
    .timeindex   timestamp INT64      | relativeOffset INT32     12 bytes an entry

``relativeOffset`` is the offset minus the segment's base offset. Both indexes are sparse: the
log appends an entry every ``index.interval.bytes`` (offset index) or whenever a batch raises
the segment's maximum timestamp (time index).

Theory of operation (Kafka's AbstractIndex): the file is memory-mapped
(``kafkapy._log.FileMap``, which, unlike ``mmap.mmap``, holds no file descriptor, so an index
costs no file handle). While its segment is active it is preallocated to ``max_index_size``
(``segment.index.bytes``, rounded down to whole entries), mapped, and the number of valid
entries is kept in memory; ``trim()`` cuts the file to its entries when the segment is rolled
or closed. An index is mapped on first use, as Kafka's LazyIndex: opening an inactive
segment's reads only the file's length, ``trim`` leaves it unmapped, and ``unmap`` releases
any (the log unmaps every index once loaded; an active one keeps its preallocated length and
is mapped again at that length), so a broker holds mappings only for the segments being
appended to or read since it started. Opening
an existing file takes every whole entry in it as valid: after a crash a preallocated file holds
zero entries past the real ones, which is why recovery rebuilds the indexes of every segment
past the recovery point rather than trusting them (``sanity_check`` only catches what Kafka's
catches).

Lookups are the compiled binary search of :mod:`kafkapy._log` over the map.

Errors: ``InvalidOffsetError`` for an append that does not increase (a caller bug: the log
appends in order); ``IndexOffsetOverflowError`` when an offset does not fit the relative INT32
(the log rolls a new segment); ``CorruptIndexError`` (KAFKA_STORAGE_ERROR) from
``sanity_check``; ``IndexFullError`` when appending to a full index.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import attrs

from kafkapy._log import FileMap, first_disorder, index_append, largest_lower_bound
from kafkapy.errors import KafkaStorageError

__all__ = [
    "NO_TIMESTAMP",
    "CorruptIndexError",
    "IndexFullError",
    "IndexOffsetOverflowError",
    "InvalidOffsetError",
    "OffsetIndex",
    "OffsetPosition",
    "TimeIndex",
    "TimestampOffset",
    "read_offset_index",
    "read_time_index",
]

NO_TIMESTAMP = -1
_INT32_MAX = 2**31 - 1
_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")


class InvalidOffsetError(ValueError):
    pass


class IndexOffsetOverflowError(ValueError):
    pass


class IndexFullError(ValueError):
    pass


class CorruptIndexError(KafkaStorageError):
    pass


@attrs.frozen
class OffsetPosition:
    offset: int
    position: int


@attrs.frozen
class TimestampOffset:
    timestamp: int
    offset: int


class _Index:
    """The mapped file and its entry count; subclasses give the entry layout."""

    entry_size: int

    def __init__(self, path: Path, base_offset: int, max_index_size: int, *,
                 preallocate: bool = True) -> None:
        """Open or create the index. With ``preallocate`` (an active segment) the file is
        grown to ``max_index_size`` for appends and mapped at once; without (an inactive
        segment) it is read-only and only its length is read now: it is mapped on first use
        (Kafka's LazyIndex), and a missing file is created then, empty."""
        self.path = Path(path)
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        if max_index_size // self.entry_size < 1:
            raise ValueError(f"max index size {max_index_size} holds no entry")
        self._file_map: FileMap | None = None
        fd = -1
        if preallocate:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                self.opened_length = os.fstat(fd).st_size
            except BaseException:
                os.close(fd)
                raise
        else:
            try:
                self.opened_length = os.stat(self.path).st_size
            except FileNotFoundError:
                self.opened_length = -1     # created (empty) on first use or on trim
        # The file's length now (mapping or trimming changes it); -1: no file yet.
        self._file_length = self.opened_length
        self.opened_length = max(self.opened_length, 0)
        # Whole entries only: a torn last entry (crash mid-write) is not an entry.
        self.entries = self.opened_length // self.entry_size
        if preallocate:
            self.max_entries = max_index_size // self.entry_size
            self.entries = min(self.entries, self.max_entries)
            self._file_map = self._map(self.max_entries, fd)     # closes fd
        else:
            self.max_entries = self.entries

    @property
    def _mmap(self) -> FileMap:
        """The mapping, made on first use: a read-only index costs no mapping until a lookup
        needs it (and none again after ``unmap``)."""
        m = self._file_map
        if m is None:
            m = self._file_map = self._map(self.max_entries)
        return m

    @property
    def is_mapped(self) -> bool:
        return self._file_map is not None

    def unmap(self) -> None:
        """Release the mapping (if any) without changing the file; the next use maps again.
        Raises BufferError while a buffer of it is in use."""
        if self._file_map is not None:
            self._file_map.close()
            self._file_map = None

    def _map(self, slots: int, fd: int = -1) -> FileMap:
        """Map the file at ``slots`` entries long (grown or cut to it). ``fd``: the file open
        read-write already (closed here, as a descriptor this opens)."""
        size = slots * self.entry_size
        if fd < 0:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            length = os.fstat(fd).st_size
        else:
            length = self._file_length
        try:
            if length != size:
                os.ftruncate(fd, size)
            self._file_length = size
            return FileMap(fd, size)        # keeps no descriptor: closed below
        finally:
            os.close(fd)

    def resize(self, max_index_size: int | None = None) -> None:
        """Make the index appendable again, preallocated to ``max_index_size`` (Kafka's
        resize, used when a truncated segment becomes the active one)."""
        if max_index_size is not None:
            self.max_index_size = max_index_size
        # No mmap.flush (a synchronous msync) here or in trim: closing a shared mapping keeps
        # its dirty pages in the page cache, and FlushJob's fsync writes them (as Kafka, whose
        # resize does not force either); an msync would block the event loop on every roll.
        self.unmap()
        self.max_entries = max(self.max_index_size // self.entry_size, self.entries)
        self._file_map = self._map(self.max_entries)

    def append_raw(self, data: bytes) -> None:
        """Append entries already encoded (by the compiled segment walk, which checked their
        order). Raises IndexFullError if they do not fit (compiled: ``_log.index_append``,
        which the segment append calls directly)."""
        index_append(self, data)

    def reset(self) -> None:
        """Drop every entry and make the index appendable (before a rebuild)."""
        self.entries = 0
        self.resize()

    @property
    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    @property
    def size_in_bytes(self) -> int:
        return self.entries * self.entry_size

    def _relative(self, offset: int) -> int:
        rel = offset - self.base_offset
        if not 0 <= rel <= _INT32_MAX:
            raise IndexOffsetOverflowError(
                f"offset {offset} does not fit a relative offset from base {self.base_offset}")
        return rel

    def _slot(self, key: int) -> int:
        return largest_lower_bound(self._mmap, self.entries, self.entry_size, key)

    def truncate_to_entries(self, entries: int) -> None:
        self.entries = max(0, min(entries, self.entries))

    def flush(self) -> None:
        # Unmapped: nothing to msync (pages written through an earlier mapping are in the page
        # cache, and the fsync of the file, FlushJob's, writes them).
        if self._file_map is not None:
            self._file_map.flush()

    def trim(self) -> None:
        """Cut the file to its valid entries (on roll and on clean close), as Kafka does.

        The index is read-only afterwards: it is full at exactly its entries, and unmapped
        until its next use (a rolled segment's index is mapped again only when read).
        """
        self.unmap()
        self.max_entries = self.entries
        size = self.entries * self.entry_size
        if self._file_length != size:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                os.ftruncate(fd, size)
            finally:
                os.close(fd)
            self._file_length = size

    def delete(self) -> None:
        self.unmap()
        self.path.unlink(missing_ok=True)

    def rename(self, path: Path) -> None:
        os.rename(self.path, path)
        self.path = Path(path)

    def close(self) -> None:
        self.trim()

    def __enter__(self) -> _Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class OffsetIndex(_Index):
    """``.index``: relative offset -> byte position in the ``.log``."""

    entry_size = 8

    def entry(self, slot: int) -> OffsetPosition:
        rel, position = _OFFSET_ENTRY.unpack_from(self._mmap, slot * 8)
        return OffsetPosition(self.base_offset + rel, position)

    @property
    def last_offset(self) -> int:
        return self.entry(self.entries - 1).offset if self.entries else self.base_offset

    def append(self, offset: int, position: int) -> None:
        if self.is_full:
            raise IndexFullError(f"{self.path}: full at {self.entries} entries")
        if self.entries and offset <= self.last_offset:
            raise InvalidOffsetError(
                f"{self.path}: offset {offset} is not larger than the last one, "
                f"{self.last_offset}")
        if not 0 <= position <= _INT32_MAX:
            raise ValueError(f"{self.path}: position {position} does not fit an INT32")
        _OFFSET_ENTRY.pack_into(self._mmap, self.entries * 8, self._relative(offset), position)
        self.entries += 1

    def lookup(self, offset: int) -> OffsetPosition:
        """The greatest indexed offset <= ``offset`` and its position; (base offset, 0) if none."""
        slot = self._slot(offset - self.base_offset)
        return self.entry(slot) if slot >= 0 else OffsetPosition(self.base_offset, 0)

    def truncate_to(self, offset: int) -> None:
        """Drop every entry for an offset >= ``offset`` (log truncation)."""
        slot = self._slot(offset - self.base_offset)
        if slot >= 0 and self.entry(slot).offset == offset:
            slot -= 1
        self.truncate_to_entries(slot + 1)

    def sanity_check(self, log_size: int = 2**31 - 1) -> None:
        """Kafka's checks (whole entries, last offset not below the base) and, stricter than
        Kafka, the order of every entry, with positions inside a log of ``log_size`` bytes."""
        if self.opened_length % 8:
            raise CorruptIndexError(f"{self.path}: length {self.opened_length} is not a "
                                    f"multiple of 8")
        if self.entries and self.last_offset < self.base_offset:
            raise CorruptIndexError(f"{self.path}: last offset {self.last_offset} is below the "
                                    f"base offset {self.base_offset}")
        bad = first_disorder(self._mmap, self.entries, 8, log_size)
        if bad >= 0:
            raise CorruptIndexError(f"{self.path}: entry {bad} is out of order or points "
                                    f"past the log")


class TimeIndex(_Index):
    """``.timeindex``: max timestamp so far -> the offset of the batch that holds it."""

    entry_size = 12

    def entry(self, slot: int) -> TimestampOffset:
        ts, rel = _TIME_ENTRY.unpack_from(self._mmap, slot * 12)
        return TimestampOffset(ts, self.base_offset + rel)

    @property
    def last_entry(self) -> TimestampOffset:
        return self.entry(self.entries - 1) if self.entries else \
            TimestampOffset(NO_TIMESTAMP, self.base_offset)

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Append when ``timestamp`` is larger than the last one indexed (Kafka's rule)."""
        last = self.last_entry
        if self.entries and offset < last.offset:
            raise InvalidOffsetError(
                f"{self.path}: offset {offset} is below the last indexed one, {last.offset}")
        if self.entries and timestamp <= last.timestamp:
            return
        if self.is_full:
            raise IndexFullError(f"{self.path}: full at {self.entries} entries")
        _TIME_ENTRY.pack_into(self._mmap, self.entries * 12, timestamp, self._relative(offset))
        self.entries += 1

    def lookup(self, timestamp: int) -> TimestampOffset:
        """The last entry with timestamp <= ``timestamp``; (NO_TIMESTAMP, base offset) if none."""
        slot = self._slot(timestamp)
        return self.entry(slot) if slot >= 0 else TimestampOffset(NO_TIMESTAMP, self.base_offset)

    def truncate_to(self, offset: int) -> None:
        """Drop every entry for an offset >= ``offset``."""
        keep = self.entries
        while keep and self.entry(keep - 1).offset >= offset:
            keep -= 1
        self.truncate_to_entries(keep)

    def sanity_check(self) -> None:
        if self.opened_length % 12:
            raise CorruptIndexError(f"{self.path}: length {self.opened_length} is not a "
                                    f"multiple of 12")
        if self.entries and self.last_entry.offset < self.base_offset:
            raise CorruptIndexError(f"{self.path}: last offset below the base offset")
        if self.entries and self.last_entry.timestamp < self.entry(0).timestamp:
            raise CorruptIndexError(f"{self.path}: last timestamp below the first")
        bad = first_disorder(self._mmap, self.entries, 12, 0)
        if bad >= 0:
            raise CorruptIndexError(f"{self.path}: entry {bad} is out of order")


def _whole_entries(path: Path, entry: struct.Struct) -> tuple[list[tuple[int, int]], int]:
    data = Path(path).read_bytes()
    usable = len(data) - len(data) % entry.size
    return list(entry.iter_unpack(memoryview(data)[:usable])), len(data)


def read_offset_index(path: Path, base_offset: int) -> tuple[list[OffsetPosition], int]:
    """Every whole entry of an offset index file, in file order, and the file's length, read
    without mapping, creating or resizing it (offline tools such as ``kafkapy dump-log``,
    which must not change the files they inspect, unlike opening an ``OffsetIndex``).
    Raises OSError (FileNotFoundError) as reading the file does."""
    entries, length = _whole_entries(path, _OFFSET_ENTRY)
    return [OffsetPosition(base_offset + rel, pos) for rel, pos in entries], length


def read_time_index(path: Path, base_offset: int) -> tuple[list[TimestampOffset], int]:
    """Every whole entry of a time index file and the file's length, read-only (see
    ``read_offset_index``)."""
    entries, length = _whole_entries(path, _TIME_ENTRY)
    return [TimestampOffset(ts, base_offset + rel) for ts, rel in entries], length
