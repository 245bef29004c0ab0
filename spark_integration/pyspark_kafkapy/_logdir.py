"""Read-only access to a kafkapy (or Kafka) log directory that a live broker may be writing.

What is read, and why it is safe while the broker appends, rolls and deletes segments:

- Partition folders ``<topic>-<partition>`` and their segments ``<20-digit base>.log``.
  Everything else (``.deleted``, ``.cleaned``, ``.swap``, ``-delete`` folders) is ignored.
  A segment deleted after it was listed is noticed when it is opened (FileNotFoundError) and
  the listing is taken again; once a segment is open, a rename or unlink does not affect the
  open descriptor. Files are read with ``pread`` into our own buffers, never mapped: a file
  truncated under a mapping would kill the process with SIGBUS, a short read is just noticed.
- ``replication-offset-checkpoint``: the high watermark (HW) of every partition, the only
  committed bound the broker writes to disk. Bytes past it may be unacknowledged, may still
  be truncated away by a leader change, or may be a batch half written at the end of the
  active segment. The broker rewrites the file every
  ``replica.high.watermark.checkpoint.interval.ms`` (5 s by default) and at shutdown, so it
  lags the live HW by up to that interval: reads see data committed up to the last
  checkpoint, never beyond. A partition missing from the file has no committed data on disk
  (HW 0). Written by rename, so a reader sees the old or the new file.
- ``log-start-offset-checkpoint``: the log start offset where it is above the first segment's
  base (DeleteRecords); written every 60 s, so it may lag too (it only ever rises).
- ``.index`` / ``.timeindex``: only to seek. An active segment's index is preallocated with
  zeros past its real entries, so only the leading run of well-ordered entries pointing into
  the ``.log`` is used (``first_disorder``), read up to the most entries the ``.log`` could
  need; a seek position is then checked against the batch header it points at, and position
  0 used instead if it does not fit. An index is never trusted for anything but a start
  position (the decoder checks every batch), and, as Kafka's own ListOffsets by timestamp
  trusts it, a rolled segment's largest timestamp: the last entry of its time index, which
  the broker appends and trims before it creates the next segment
  (``_rolled_max_timestamp``); the active segment's batches past its last index entry are
  scanned instead.
- ``.txnindex``: the aborted transactions (read_committed). ``.snapshot``: producer state, to
  find transactions still open at the HW (see ``last_stable_offset``).

Nothing here writes, creates or locks a file. Module functions are plain and stateless (but
for ``bytes_read``, a per-process tally of the bytes read from segment and index files that
the ``readStatsDir`` diagnostics report); the Spark planner calls them from its worker
processes.

Errors: ``OSError`` from the file system; ``kafkapy.errors.KafkaStorageError`` subclasses for a
checkpoint or index that cannot be parsed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from kafkapy._log import first_disorder, largest_lower_bound
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import CorruptMessageError, UnsupportedForMessageFormatError
from kafkapy.log.checkpoints import (
    LOG_START_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    read_offsets,
)
from kafkapy.log.producer_state import CorruptSnapshotError, decode_snapshot
from kafkapy.log.transaction_index import TXN_INDEX_SUFFIX, TransactionIndex
from kafkapy.protocol.records import BATCH_HEADER_SIZE, BatchHeader, scan_batches

__all__ = [
    "BytesRead",
    "aborted_transactions",
    "bytes_read",
    "earliest_offset",
    "high_watermarks",
    "index_position",
    "iter_batches",
    "last_stable_offset",
    "list_partitions",
    "list_segments",
    "log_start_offsets",
    "offset_for_timestamp",
    "partition_dir",
    "segment_path",
]

_PARTITION_DIR = re.compile(r"^(.+)-(0|[1-9][0-9]*)$")
_SEGMENT = re.compile(r"^([0-9]{20})\.log$")
_SNAPSHOT = re.compile(r"^([0-9]{20})\.snapshot$")
_TXN_INDEX = re.compile(r"^([0-9]{20})" + re.escape(TXN_INDEX_SUFFIX) + "$")
_CHUNK = 1 << 20
_FIRST_CHUNK = 16 << 10


def partition_dir(log_dir: Path, tp: TopicPartition) -> Path:
    return Path(log_dir) / f"{tp.topic}-{tp.partition}"


def segment_path(pdir: Path, base_offset: int, suffix: str = ".log") -> Path:
    return pdir / f"{base_offset:020d}{suffix}"


def list_partitions(log_dir: Path) -> list[TopicPartition]:
    """Every ``<topic>-<partition>`` folder of ``log_dir``, sorted."""
    out = []
    with os.scandir(log_dir) as it:
        for entry in it:
            m = _PARTITION_DIR.match(entry.name)
            if m and entry.is_dir():
                out.append(TopicPartition(m.group(1), int(m.group(2))))
    return sorted(out)


def list_segments(pdir: Path) -> list[int]:
    """The base offsets of the partition's segments, rising; [] if the folder is gone."""
    try:
        names = os.listdir(pdir)
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for m in map(_SEGMENT.match, names) if m)


def high_watermarks(log_dir: Path) -> dict[TopicPartition, int]:
    return read_offsets(Path(log_dir) / REPLICATION_OFFSET_CHECKPOINT)


def log_start_offsets(log_dir: Path) -> dict[TopicPartition, int]:
    return read_offsets(Path(log_dir) / LOG_START_OFFSET_CHECKPOINT)


def earliest_offset(segments: list[int], checkpointed_start: int | None) -> int:
    """The log start offset: the first segment's base, or the checkpointed one above it."""
    first = segments[0] if segments else 0
    return max(first, checkpointed_start or 0)


# ------------------------------------------------------------------------------ file reads

class BytesRead:
    """Bytes read from ``.log``, ``.index`` and ``.timeindex`` files by this process (its
    planner and reader calls, one at a time: take differences around a call)."""

    __slots__ = ("total",)

    def __init__(self) -> None:
        self.total = 0


bytes_read = BytesRead()


def _pread_all(fd: int, size: int, position: int) -> bytes:
    """Up to ``size`` bytes at ``position`` (fewer at the end of the file)."""
    parts = []
    while size > 0:
        data = os.pread(fd, size, position)
        if not data:
            break
        parts.append(data)
        bytes_read.total += len(data)
        size -= len(data)
        position += len(data)
    return b"".join(parts)


def _read_index(path: Path, entry_size: int, log_size: int) -> tuple[bytes, int]:
    """The usable entries of an index file: (bytes, count). A missing file has none."""
    # Each entry points at a distinct batch of at least 61 bytes: more cannot be needed.
    most = (log_size // BATCH_HEADER_SIZE + 1) * entry_size
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return b"", 0
    try:
        data = _pread_all(fd, min(os.fstat(fd).st_size, most), 0)
    finally:
        os.close(fd)
    entries = len(data) // entry_size
    bad = first_disorder(data, entries, entry_size, log_size if entry_size == 8 else 0)
    return data, entries if bad < 0 else bad


def _batch_at(fd: int, position: int) -> tuple[int, int] | None:
    """(base offset, last offset) of the batch header at ``position``, or None if no magic-2
    header is there."""
    try:
        header = BatchHeader.header_only(_pread_all(fd, BATCH_HEADER_SIZE, position))
    except (CorruptMessageError, UnsupportedForMessageFormatError):
        return None
    return header.base_offset, header.last_offset


def index_position(fd: int, pdir: Path, base_offset: int, target: int, log_size: int) -> int:
    """A byte position of the segment (open as ``fd``) from which a forward scan meets
    ``target``: the offset index's entry for the greatest indexed offset <= target, if the
    batch header there agrees; else 0."""
    data, entries = _read_index(segment_path(pdir, base_offset, ".index"), 8, log_size)
    slot = largest_lower_bound(data, entries, 8, target - base_offset) if entries else -1
    if slot < 0:
        return 0
    position = int.from_bytes(data[slot * 8 + 4:slot * 8 + 8], "big")
    found = _batch_at(fd, position)
    if found is None or found[0] > target:
        return 0
    return position


def iter_batches(fd: int, position: int, end: int | None = None) -> Iterator[BatchHeader]:
    """The whole batches of an open segment from ``position`` (headers; CRC not checked),
    up to ``end`` bytes or the end of the file. Stops at a batch it cannot frame. Reads
    16 KiB first, then twice as much each time up to 1 MiB: a caller that stops early (a
    search) reads little."""
    want = _FIRST_CHUNK
    while end is None or position < end:
        ask = want if end is None else min(want, end - position)
        chunk = _pread_all(fd, ask, position)
        want = min(want * 2, _CHUNK)
        scan = scan_batches(chunk, verify_crc=False)
        yield from scan.batches
        if not scan.batches:
            if scan.truncated and len(chunk) == ask and len(chunk) >= BATCH_HEADER_SIZE:
                # One batch larger than the chunk: read it whole.
                size = BatchHeader.header_only(chunk).size
                scan = scan_batches(_pread_all(fd, size, position), verify_crc=False)
                yield from scan.batches
                if not scan.batches:
                    return
                position += scan.valid_bytes
                continue
            return
        position += scan.valid_bytes


# ------------------------------------------------------------------------------ timestamps

def _segment_max_timestamp(fd: int, pdir: Path, base_offset: int, log_size: int) -> int:
    """The largest batch maxTimestamp of the segment: its time index's last entry, and the
    batches after the offset index's last entry, which no time-index entry covers yet."""
    best = -1
    data, entries = _read_index(segment_path(pdir, base_offset, ".timeindex"), 12, log_size)
    if entries:
        best = int.from_bytes(data[(entries - 1) * 12:(entries - 1) * 12 + 8], "big",
                              signed=True)
    idx, n = _read_index(segment_path(pdir, base_offset, ".index"), 8, log_size)
    position = int.from_bytes(idx[(n - 1) * 8 + 4:n * 8], "big") if n else 0
    if _batch_at(fd, position) is None:
        position = 0
    for batch in iter_batches(fd, position):
        best = max(best, batch.max_timestamp)
    return best


def _rolled_max_timestamp(pdir: Path, base_offset: int) -> int | None:
    """A rolled segment's largest timestamp as Kafka keeps it: its time index's last entry.
    On a roll the broker (kafkapy and Kafka alike) appends the segment's maximum timestamp to
    the time index and trims the file to its entries before it creates the next segment, and
    Kafka's own ListOffsets by timestamp uses that entry for a segment loaded from disk
    (LogSegment.largestTimestamp). None when the file does not look finished: missing, not a
    whole number of entries, or ending in a preallocated (zero) entry."""
    try:
        fd = os.open(segment_path(pdir, base_offset, ".timeindex"), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size == 0 or size % 12:
            return None
        last = _pread_all(fd, 12, size - 12)
    finally:
        os.close(fd)
    if len(last) < 12 or not any(last):
        return None
    return int.from_bytes(last[0:8], "big", signed=True)


def offset_for_timestamp(pdir: Path, timestamp: int, start: int, bound: int) -> int | None:
    """Kafka's ListOffsets by timestamp on the files: the first offset in ``[start, bound)``
    whose record timestamp is >= ``timestamp`` (control and aborted records included, as
    Kafka's answer does), or None when there is none.

    Segments whose largest timestamp is below ``timestamp`` are skipped whole (for rolled
    segments, read from the time index's last entry: 12 bytes); in the first one that may
    hold a match the scan starts at the ``.index`` position of the last time-index entry
    below ``timestamp``."""
    segments = list_segments(pdir)
    for i, base in enumerate(segments):
        if base >= bound:
            return None
        if i + 1 < len(segments) and segments[i + 1] <= start:
            continue
        try:
            fd = os.open(segment_path(pdir, base), os.O_RDONLY)
        except FileNotFoundError:
            continue            # deleted since listed: it was below the log start
        try:
            size = os.fstat(fd).st_size
            # A rolled segment's maximum is in its time index; the last (active) segment's
            # index lags its batches, which are scanned.
            largest = _rolled_max_timestamp(pdir, base) if i + 1 < len(segments) else None
            if largest is None:
                largest = _segment_max_timestamp(fd, pdir, base, size)
            if largest < timestamp:
                continue
            # Everything up to the last time-index entry below the target is older.
            data, entries = _read_index(segment_path(pdir, base, ".timeindex"), 12, size)
            slot = largest_lower_bound(data, entries, 12, timestamp - 1) if entries else -1
            seek = base
            if slot >= 0:
                seek = base + int.from_bytes(data[slot * 12 + 8:slot * 12 + 12], "big")
            position = index_position(fd, pdir, base, max(seek, start), size)
            for batch in iter_batches(fd, position):
                if batch.base_offset >= bound:
                    return None
                if batch.last_offset < start or batch.max_timestamp < timestamp:
                    continue
                log_append = batch.timestamp_type == 1
                for record in batch.records():
                    ts = batch.max_timestamp if log_append else record.timestamp
                    if start <= record.offset < bound and ts >= timestamp:
                        return record.offset
        finally:
            os.close(fd)
    return None


# ---------------------------------------------------------------------------- transactions

def aborted_transactions(pdir: Path, start: int, end: int) -> list[tuple[int, int, int]]:
    """``(producer id, first offset, last offset)`` of every aborted transaction in the
    partition's ``.txnindex`` files that overlaps ``[start, end)``."""
    try:
        names = os.listdir(pdir)
    except FileNotFoundError:
        return []
    out = []
    for name in sorted(names):
        m = _TXN_INDEX.match(name)
        if not m:
            continue
        for txn in TransactionIndex(pdir / name, int(m.group(1))).all_entries():
            if txn.last_offset >= start and txn.first_offset < end:
                out.append((txn.producer_id, txn.first_offset, txn.last_offset))
    return out


def last_stable_offset(pdir: Path, high_watermark: int) -> int:
    """The read_committed bound on the files: the first offset of the earliest transaction
    still open at the high watermark (no COMMIT or ABORT marker below it), else the HW.

    The LSO itself is not written to disk. It is rebuilt as the broker rebuilds producer
    state: from the newest ``.snapshot`` at or below the HW (the producers' open
    transactions at that offset), then the batch headers from there to the HW (a
    transactional data batch opens its producer's transaction, a control batch of that
    producer closes it). Without a usable snapshot the replay starts at the first segment.
    """
    try:
        names = os.listdir(pdir)
    except FileNotFoundError:
        return high_watermark
    snapshots = sorted((int(m.group(1)) for m in map(_SNAPSHOT.match, names) if m),
                       reverse=True)
    open_txns: dict[int, int] = {}
    replay_from = None
    for offset in snapshots:
        if offset > high_watermark:
            continue
        try:
            entries = decode_snapshot(segment_path(pdir, offset, ".snapshot").read_bytes())
        except (FileNotFoundError, CorruptSnapshotError):
            continue
        open_txns = {e.producer_id: e.current_txn_first_offset for e in entries
                     if e.current_txn_first_offset >= 0}
        replay_from = offset
        break
    segments = list_segments(pdir)
    if replay_from is None:
        replay_from = segments[0] if segments else high_watermark
    i = 0
    while i + 1 < len(segments) and segments[i + 1] <= replay_from:
        i += 1
    for base in segments[i:]:
        if base >= high_watermark:
            break
        try:
            fd = os.open(segment_path(pdir, base), os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            position = index_position(fd, pdir, base, replay_from, os.fstat(fd).st_size)
            for batch in iter_batches(fd, position):
                if batch.base_offset >= high_watermark:
                    break
                if batch.last_offset < replay_from or batch.producer_id < 0:
                    continue
                if batch.is_control:
                    open_txns.pop(batch.producer_id, None)
                elif batch.is_transactional:
                    open_txns.setdefault(batch.producer_id, batch.base_offset)
        finally:
            os.close(fd)
    return min([high_watermark, *open_txns.values()])
