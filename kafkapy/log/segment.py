"""LogSegment: one ``.log`` file of record batches with its ``.index``, ``.timeindex`` and
``.txnindex``.

Files (Kafka's names): ``<base offset, 20 digits>.log`` holds record batches back to back,
exactly as appended, with no file header; the indexes are described in kafkapy.log.index.

Theory of operation (Kafka's LogSegment):

- ``append`` writes batches that the Log has already validated and given offsets, then runs
  the compiled walk (``kafkapy._log.SegmentWalker``) over the same bytes to produce the sparse
  index entries: one offset-index entry (last offset of the batch, its start position) once
  more than ``index.interval.bytes`` were written since the previous one, with a time-index
  entry (the segment's maximum timestamp so far and the last offset of its batch) when that
  maximum rose. The walk is per batch in compiled code; nothing here looks at records.
- A write that fails part-way (disk full, I/O error) is undone by truncating the file back to
  its previous size, then ``KafkaStorageError`` is raised: a segment never holds a partial
  batch that was not there before the call, unless the process dies mid-write, which recovery
  repairs.
- The transaction index (kafkapy.log.transaction_index) is written only through
  ``update_txn_index``, when the log completes an aborted transaction whose marker is in this
  segment; its file exists from the first such abort on. ``recover`` leaves it alone: the log
  rebuilds it (``txn_index.reset()``, then the producer-state replay's aborts), and
  ``truncate_to`` cuts it with the log.
- ``recover`` (after an unclean shutdown) resets both indexes and walks the whole file with
  CRC-32C checks, rebuilding the indexes, and truncates the file at the first invalid or
  partial batch. It returns the number of bytes cut.
- ``translate_offset`` is FileRecords.searchForOffsetWithSize: index lookup, then a forward
  scan of batch headers (compiled ``find_batch``) from the indexed position.
- Reads return ``FileSlice``s (file, position, size) for ``os.sendfile``; no record bytes pass
  through Python on the fetch path.

A segment is owned by one Log and used from the broker's event-loop thread; ``FlushJob``s
(kafkapy.log.log) fsync duplicated descriptors from a worker thread, so closing a segment
never races a flush.
"""

from __future__ import annotations

import mmap
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import attrs

from kafkapy._log import (
    SegmentWalker,
    WalkResult,
    find_batch,
    segment_append,
    segment_should_roll,
)
from kafkapy.errors import (
    CorruptMessageError,
    KafkaStorageError,
    UnsupportedForMessageFormatError,
)
from kafkapy.log.config import LogConfig
from kafkapy.log.index import NO_TIMESTAMP, OffsetIndex, TimeIndex, TimestampOffset
from kafkapy.log.transaction_index import (
    TXN_INDEX_SUFFIX,
    AbortedTxn,
    TransactionIndex,
    TxnIndexSearchResult,
    txn_index_path,
)
from kafkapy.protocol.records import BATCH_HEADER_SIZE, BatchHeader, scan_batches

if TYPE_CHECKING:
    from kafkapy.log.producer_state import CompletedTxn

__all__ = [
    "DELETED_SUFFIX",
    "FileSlice",
    "LogSegment",
    "index_path",
    "log_path",
    "offset_from_file_name",
    "time_index_path",
    "txn_index_path",
]

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
DELETED_SUFFIX = ".deleted"
_READ_CHUNK = 64 * 1024
# translate_offset's first read: the batch sought usually starts within index.interval.bytes
# (4 KiB by default) of the indexed position, and copying 64 KiB to find it cost more than
# the rest of the lookup; a longer scan goes on in _READ_CHUNKs.
_FIRST_READ = 8 * 1024
_SCAN_CHUNK = 1024 * 1024


def _name(base_offset: int) -> str:
    return f"{base_offset:020d}"


def log_path(directory: Path, base_offset: int) -> Path:
    return directory / (_name(base_offset) + LOG_SUFFIX)


def index_path(directory: Path, base_offset: int) -> Path:
    return directory / (_name(base_offset) + INDEX_SUFFIX)


def time_index_path(directory: Path, base_offset: int) -> Path:
    return directory / (_name(base_offset) + TIME_INDEX_SUFFIX)


def offset_from_file_name(name: str) -> int:
    """``00000000000000001234.log`` -> 1234."""
    return int(name.split(".", 1)[0])


@attrs.frozen
class FileSlice:
    """``size`` bytes of ``segment``'s ``.log`` from ``position``: whole batches from a batch
    boundary (the last one may be cut by a byte limit, as in Kafka; clients skip it)."""

    segment: LogSegment
    position: int
    size: int

    @property
    def fd(self) -> int:
        return self.segment.fd

    def read(self) -> bytes:
        """The bytes themselves (tests, tools and non-sendfile paths)."""
        return self.segment.read_bytes(self.position, self.size)


class BatchLocation(NamedTuple):
    """Where a batch is: its position and total size in the file, and its base offset (a
    named tuple: one is made per append)."""

    position: int
    size: int
    base_offset: int


class LogSegment:
    """One segment. ``open`` is the only constructor."""

    fd: int
    size: int

    def __init__(self, directory: Path, base_offset: int, config: LogConfig, fd: int,
                 offset_index: OffsetIndex, time_index: TimeIndex, created_ms: int,
                 txn_index: TransactionIndex | None = None, size: int | None = None) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.config = config
        self.fd = fd
        self.size = os.fstat(fd).st_size if size is None else size
        self.offset_index = offset_index
        self.time_index = time_index
        self.txn_index = txn_index if txn_index is not None else \
            TransactionIndex(txn_index_path(directory, base_offset), base_offset)
        self.created_ms = created_ms
        self.walker = SegmentWalker(base_offset, config.index_interval_bytes)
        # Kafka rolls a segment segment.ms after its first batch's timestamp, less a random
        # jitter drawn once per segment so that many partitions do not roll together.
        jitter = config.segment_jitter_ms
        self.roll_jitter_ms = random.randrange(min(jitter, config.segment_ms)) if jitter else 0
        self.rolling_timestamp = NO_TIMESTAMP   # max timestamp of the first batch
        self.closed = False
        self.renamed_deleted = False
        # Where the last append's first batch is: the offset a caught-up follower or
        # consumer reads next is found without a pread (None after a truncation).
        self._last_append: BatchLocation | None = None

    # ------------------------------------------------------------------ opening and closing

    @classmethod
    def open(cls, directory: Path, base_offset: int, config: LogConfig, *,
             active: bool, create: bool = False, now_ms: int | None = None) -> LogSegment:
        """Open the segment at ``base_offset`` (``create``: a new, empty one, created at
        ``now_ms`` on the log's clock; an existing one dates from its file's mtime)."""
        path = log_path(directory, base_offset)
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT | os.O_EXCL if create else 0)
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as e:
            raise KafkaStorageError(f"cannot open segment {path}: {e}") from e
        try:
            if create:
                for stale in (index_path(directory, base_offset),
                              time_index_path(directory, base_offset),
                              txn_index_path(directory, base_offset)):
                    stale.unlink(missing_ok=True)
            oidx = OffsetIndex(index_path(directory, base_offset), base_offset,
                               config.segment_index_bytes, preallocate=active)
            tidx = TimeIndex(time_index_path(directory, base_offset), base_offset,
                             config.segment_index_bytes, preallocate=active)
        except BaseException:
            os.close(fd)
            raise
        try:
            st = os.fstat(fd)           # one call for the size and the creation time
        except BaseException:
            os.close(fd)
            raise
        if create:
            created = int(time.time() * 1000) if now_ms is None else now_ms
        else:
            created = int(st.st_mtime * 1000)
        seg = cls(directory, base_offset, config, fd, oidx, tidx, created, size=st.st_size)
        if not create:
            seg._read_rolling_timestamp()
        return seg

    @property
    def path(self) -> Path:
        return log_path(self.directory, self.base_offset)

    def close(self) -> None:
        """Clean close: record the final maximum timestamp, trim the indexes, close."""
        if self.closed:
            return
        self.on_become_inactive()
        self.offset_index.close()
        self.time_index.close()
        self.txn_index.close()
        os.close(self.fd)
        self.closed = True

    def close_without_trim(self) -> None:
        if not self.closed:
            self.offset_index.unmap()
            self.time_index.unmap()
            self.txn_index.close()
            os.close(self.fd)
            self.closed = True

    def on_become_inactive(self) -> None:
        """On roll and close, as Kafka: append the maximum (timestamp, offset) to the time
        index if it is not there yet, then trim both indexes to their entries."""
        tidx = self.time_index
        w = self.walker
        # is_full first: a trimmed (inactive) index is full, and its last entry would map it.
        if not tidx.is_full and w.max_timestamp > tidx.last_entry.timestamp:
            tidx.maybe_append(w.max_timestamp, w.offset_of_max_timestamp)
            w.last_index_timestamp = w.max_timestamp
        self.offset_index.trim()
        tidx.trim()

    def unmap_indexes(self) -> None:
        """Release the offset and time index mappings of an inactive segment: they are mapped
        again on their next use (Kafka's LazyIndex)."""
        self.offset_index.unmap()
        self.time_index.unmap()

    def make_active(self) -> None:
        """Preallocate the indexes again (a truncation made this segment the last one)."""
        self.offset_index.resize(self.config.segment_index_bytes)
        self.time_index.resize(self.config.segment_index_bytes)

    def change_config(self, config: LogConfig) -> None:
        self.config = config

    def rename_to_deleted(self) -> None:
        """Step one of Kafka's asynchronous delete: the files get a ``.deleted`` suffix (the
        descriptor stays open for reads still in flight)."""
        for idx in (self.offset_index, self.time_index):
            if idx.path.exists():
                idx.rename(idx.path.with_name(idx.path.name + DELETED_SUFFIX))
        txn = self.txn_index
        txn.rename(txn.path.with_name(txn.path.name + DELETED_SUFFIX))
        if self.path.exists():
            os.rename(self.path, self.path.with_name(self.path.name + DELETED_SUFFIX))
        self.renamed_deleted = True

    def delete_files(self) -> None:
        """Step two: close and remove the files (the ``.deleted`` ones if renamed: a new
        segment with the same base offset, from compaction or truncation, may own the plain
        names by now)."""
        self.close_without_trim()
        suffix = DELETED_SUFFIX if self.renamed_deleted else ""
        for ext in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
            (self.directory / (_name(self.base_offset) + ext + suffix)).unlink(missing_ok=True)

    # ---------------------------------------------------------------------------- appends

    @property
    def next_offset(self) -> int:
        """The offset after the segment's last batch (its base offset when empty)."""
        return self.walker.next_offset

    @property
    def max_timestamp(self) -> int:
        return self.walker.max_timestamp

    @property
    def offset_of_max_timestamp(self) -> int:
        return self.walker.offset_of_max_timestamp

    def largest_timestamp(self) -> int:
        """For time retention: the maximum record timestamp, or the file's mtime without one
        (Kafka's LogSegment.largestTimestamp)."""
        if self.walker.max_timestamp >= 0:
            return self.walker.max_timestamp
        try:
            return int(os.stat(self.fd).st_mtime * 1000)
        except OSError:
            return int(time.time() * 1000)

    def should_roll(self, incoming_bytes: int, incoming_max_timestamp: int,
                    incoming_last_offset: int, batches: int, now_ms: int) -> bool:
        """Kafka's LogSegment.shouldRoll: size, age, a full index, relative-offset overflow
        (compiled: ``_log.segment_should_roll``)."""
        return segment_should_roll(self, incoming_bytes, incoming_max_timestamp,
                                   incoming_last_offset, batches, now_ms)

    def append(self, buf: memoryview | bytes | bytearray) -> WalkResult:
        """Write validated batches with their final offsets and index them (compiled:
        ``_log.segment_append``).

        Raises KafkaStorageError (after undoing a partial write) if the file cannot take them;
        CorruptMessageError if the buffer is not whole batches with rising offsets that fit
        this segment (a caller bug: the Log checks first); nothing is written then.
        """
        return segment_append(self, buf)

    # ----------------------------------------------------------------------------- reads

    def read_bytes(self, position: int, size: int) -> bytes:
        out = os.pread(self.fd, size, position)
        while len(out) < size:
            more = os.pread(self.fd, size - len(out), position + len(out))
            if not more:
                break
            out += more
        return out

    def _read_rolling_timestamp(self) -> None:
        if self.size >= BATCH_HEADER_SIZE:
            try:
                header = BatchHeader.header_only(self.read_bytes(0, BATCH_HEADER_SIZE))
            except (CorruptMessageError, UnsupportedForMessageFormatError):
                return
            self.rolling_timestamp = header.max_timestamp

    def translate_offset(self, offset: int, start_position: int = 0) -> BatchLocation | None:
        """The first batch at or after ``start_position`` whose last offset is >= ``offset``
        (the batch holding ``offset`` or the first one after it); None if there is none."""
        last = self._last_append
        if last is not None and last.base_offset == offset and \
                start_position <= last.position:
            return last
        indexed = self.offset_index.lookup(offset)
        pos = max(start_position, indexed.position)
        chunk_size = _FIRST_READ
        while pos < self.size:
            chunk = os.pread(self.fd, min(chunk_size, self.size - pos), pos)
            found, rel, base, size = find_batch(chunk, offset)
            if found:
                return BatchLocation(pos + rel, size, base)
            if size < 0:
                raise CorruptMessageError(f"{self.path}: no valid batch header at byte "
                                          f"{pos + rel}")
            if rel == 0:
                chunk_size *= 2     # a header longer than the chunk cannot happen; be safe
                if len(chunk) < chunk_size // 2:
                    return None     # fewer than a header's bytes left: a torn tail
                continue
            # On through small batches, read more at once; past a large batch, only the next
            # header is needed.
            chunk_size = _READ_CHUNK if rel <= len(chunk) else _FIRST_READ
            pos += rel
        return None

    def read(self, start_offset: int, max_size: int, max_position: int | None = None,
             min_one_message: bool = False) -> FileSlice | None:
        """Up to ``max_size`` bytes from the batch holding ``start_offset``, not past byte
        ``max_position``; with ``min_one_message`` the whole first batch even if larger.
        None if no batch in this segment reaches ``start_offset``."""
        loc = self.translate_offset(start_offset)
        if loc is None:
            return None
        limit = self.size if max_position is None else min(max_position, self.size)
        if loc.position >= limit:
            return FileSlice(self, loc.position, 0)
        size = min(max_size, limit - loc.position)
        if min_one_message and size < loc.size:
            size = min(loc.size, limit - loc.position)
        return FileSlice(self, loc.position, size)

    def batches(self, start_position: int = 0, end_position: int | None = None
                ) -> Iterator[BatchHeader]:
        """Whole batches from ``start_position`` (a batch boundary), read in chunks. Not for
        the produce or fetch path: compaction, timestamp search and tools use it."""
        pos = start_position
        end = self.size if end_position is None else min(end_position, self.size)
        while pos < end:
            chunk = self.read_bytes(pos, min(_SCAN_CHUNK, end - pos))
            scan = scan_batches(chunk, verify_crc=False)
            if not scan.batches and scan.truncated and len(chunk) >= BATCH_HEADER_SIZE:
                # One batch larger than the chunk: read it whole.
                size = BatchHeader.header_only(chunk).size
                if pos + size <= end:
                    scan = scan_batches(self.read_bytes(pos, size), verify_crc=False)
            if not scan.batches:
                return
            yield from scan.batches
            pos += scan.valid_bytes

    def find_offset_by_timestamp(self, timestamp: int, start_offset: int
                                 ) -> TimestampOffset | None:
        """The first record at or after ``start_offset`` with timestamp >= ``timestamp``
        (Kafka's LogSegment.findOffsetByTimestamp). Decodes the one batch it lands in."""
        indexed = self.time_index.lookup(timestamp)
        pos = self.offset_index.lookup(max(indexed.offset, start_offset)).position
        for batch in self.batches(pos):
            if batch.max_timestamp >= timestamp and batch.last_offset >= start_offset:
                for record in batch.records():
                    if record.timestamp >= timestamp and record.offset >= start_offset:
                        return TimestampOffset(record.timestamp, record.offset)
        return None

    # ------------------------------------------------------------------------- recovery

    def recover(self, verify_crc: bool = True) -> tuple[int, WalkResult]:
        """Rebuild both indexes from the file, truncating it at the first invalid or partial
        batch. Returns (bytes truncated, the walk over the valid batches)."""
        self.offset_index.reset()
        self.time_index.reset()
        self.walker = SegmentWalker(self.base_offset, self.config.index_interval_bytes)
        if self.size:
            with mmap.mmap(self.fd, self.size, access=mmap.ACCESS_READ) as m:
                # The scan reads the file once, front to back.
                if hasattr(mmap, "MADV_SEQUENTIAL"):
                    m.madvise(mmap.MADV_SEQUENTIAL)
                with memoryview(m) as data:
                    result = self.walker.walk(data, 0, verify_crc=verify_crc,
                                              offset_room=self.offset_index.max_entries,
                                              time_room=self.time_index.max_entries)
        else:
            result = self.walker.walk(b"", 0, verify_crc=verify_crc, offset_room=0,
                                      time_room=0)
        self.offset_index.append_raw(result.offset_entries)
        self.time_index.append_raw(result.time_entries)
        cut = self.size - result.valid_bytes
        if cut:
            self.truncate_file(result.valid_bytes)
        self.rolling_timestamp = NO_TIMESTAMP
        self._read_rolling_timestamp()
        return cut, result

    def restore_state(self) -> WalkResult:
        """After a clean load or a truncation: set the walker from the indexes and walk the
        tail after the last offset-index entry (whole batches only) to find the next offset
        and the exact maximum timestamp."""
        last_time = self.time_index.last_entry
        pos = self.offset_index.lookup(2**62).position if self.offset_index.entries else 0
        tail = self.read_bytes(pos, self.size - pos)
        w = SegmentWalker(self.base_offset, self.config.index_interval_bytes)
        w.max_timestamp = last_time.timestamp
        w.offset_of_max_timestamp = last_time.offset
        w.last_index_timestamp = last_time.timestamp
        result = w.walk(tail, pos, verify_crc=False, offset_room=0, time_room=0)
        if self.offset_index.entries and (
                not result.batches
                or BatchHeader(tail).last_offset
                != self.offset_index.entry(self.offset_index.entries - 1).offset):
            # The last entry must name the last offset of the batch at its position.
            raise CorruptMessageError(f"{self.path}: the last index entry does not point at "
                                      f"its batch")
        if result.stop:
            raise CorruptMessageError(f"{self.path}: {result.reason} at byte "
                                      f"{pos + result.valid_bytes}")
        w.bytes_since_index = 0
        if not result.batches and pos == 0:
            w.next_offset = self.base_offset
        self.walker = w
        return result

    # ----------------------------------------------------------------------- truncation

    def truncate_file(self, size: int) -> None:
        os.ftruncate(self.fd, size)
        self.size = size
        self._last_append = None

    def truncate_to(self, offset: int, now_ms: int | None = None) -> int:
        """Drop every batch holding an offset >= ``offset``, and the aborted transactions
        whose markers go with them; returns the bytes removed."""
        self.txn_index.truncate_to(offset)
        loc = self.translate_offset(offset)
        if loc is None:
            return 0
        self.offset_index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        removed = self.size - loc.position
        self.truncate_file(loc.position)
        self.make_active()
        self.restore_state()
        if self.size == 0:
            self.rolling_timestamp = NO_TIMESTAMP
            self.created_ms = int(time.time() * 1000) if now_ms is None else now_ms
        return removed

    # -------------------------------------------------------------------------- flushing

    def dup_for_flush(self) -> int:
        return os.dup(self.fd)

    def txn_index_flush_fd(self) -> int | None:
        """A descriptor of the ``.txnindex`` for the flush job to fsync and close; None while
        the segment has no aborted transaction (no file)."""
        return self.txn_index.flush_fd()

    # --------------------------------------------------------------------- transactions

    def update_txn_index(self, completed_txn: CompletedTxn, last_stable_offset: int) -> None:
        """Index ``completed_txn`` if it was aborted (its marker is in this segment), with the
        partition's LSO right after it (Kafka's LogSegment.updateTxnIndex). Raises ValueError
        if its marker is not after the last one indexed, KafkaStorageError on a write
        failure."""
        if completed_txn.is_aborted:
            self.txn_index.append(AbortedTxn(completed_txn.producer_id,
                                             completed_txn.first_offset,
                                             completed_txn.last_offset, last_stable_offset))

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int
                             ) -> TxnIndexSearchResult:
        """The aborted transactions of this segment's index overlapping [``fetch_offset``,
        ``upper_bound_offset``), and whether the search may stop here (see
        TransactionIndex.collect_aborted_txns)."""
        return self.txn_index.collect_aborted_txns(fetch_offset, upper_bound_offset)

    def __repr__(self) -> str:
        return f"LogSegment({self.path}, size={self.size}, next_offset={self.next_offset})"
