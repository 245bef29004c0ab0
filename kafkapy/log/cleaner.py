"""LogCleaner: compaction of ``cleanup.policy=compact`` logs (Kafka's LogCleaner).

A compacted log keeps, for every key, at least its latest record. Terms, as in Kafka:

- the *clean* part is [log start, first dirty offset): compacted before; the first dirty
  offset per partition is kept in the log dir's ``cleaner-offset-checkpoint``;
- the *dirty* part is [first dirty offset, first uncleanable offset); the first uncleanable
  offset is the lowest of the active segment's base offset, the high watermark, and the base of
  the first segment holding a record newer than ``min.compaction.lag.ms``; only whole
  segments below it are cleaned, so the active segment never is;
- a log is cleaned when dirty bytes / (clean + dirty bytes) >= ``min.cleanable.dirty.ratio``,
  or when its oldest dirty segment is older than ``max.compaction.lag.ms``; the dirtiest goes
  first.

A pass (``compact``) builds the map key -> latest offset over the dirty part, then rewrites the
clean and dirty segments in groups that fit ``segment.bytes``, keeping a record only if no
later record has its key. Batches keep their base offset, their last offset (so offsets only
gain gaps), producer fields, leader epoch, compression and timestamp type; a batch whose
records all stay is copied byte for byte. Tombstones (null value) survive the first pass that
sees them, which stamps the batch with a delete horizon (baseTimestamp = now +
``delete.retention.ms``, attribute bit 6, as Kafka's v2 cleaner does), and are dropped by the
first pass after the horizon. Records without a key are dropped (Kafka's cleaner counts them
as invalid: produce to a compacted topic requires keys).

Transactions (Kafka's cleaner does the same): nothing at or above the last stable offset is
cleaned, so an open transaction's records are never judged; the records of aborted
transactions (found in the ``.txnindex`` files) take no part in the key map, so they never
shadow a committed record of the same key, and are removed; control batches (markers) are
kept as they are, so readers and the producer-state replay still see every transaction end.

Concurrency: ``pick`` runs on the event loop and snapshots what the pass needs, duplicating
each segment's descriptor; ``compact`` runs in a worker thread on that snapshot only, and
writes each group to a fsynced ``<base>.log.cleaned`` file; ``swap`` runs on the event loop and
hands each file to ``Log.replace_segments``, which gives up if retention or truncation removed
a source segment meanwhile. Appends never wait for the cleaner.

Cost: building the map and filtering decode records in Python (``BatchHeader.records``): the
cleaner is background work, off the produce and fetch paths.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.log.log import Log
from kafkapy.log.segment import LogSegment
from kafkapy.protocol.records import BatchHeader, build_batch, scan_batches

__all__ = ["CleanCandidate", "CleanPlan", "LogCleaner"]

logger = logging.getLogger("kafkapy.log.cleaner")

_READ_CHUNK = 4 * 1024 * 1024
_INT32_MAX = 2**31 - 1


@attrs.define
class _SegmentSnapshot:
    segment: LogSegment
    base_offset: int
    next_offset: int
    size: int
    fd: int            # a duplicate: valid even if the segment is closed meanwhile
    max_timestamp: int


@attrs.define
class CleanCandidate:
    """What ``pick`` chose, frozen for the worker thread."""

    tp: TopicPartition
    log: Log
    segments: list[_SegmentSnapshot]     # clean + dirty, in order
    first_dirty: int
    end: int                             # first uncleanable offset (whole segments below)
    now: int
    delete_retention_ms: int
    segment_bytes: int
    index_entries: int
    # producer id -> [(first offset, last offset)] of aborted transactions in the range
    aborted: dict[int, list[tuple[int, int]]] = attrs.field(factory=dict)

    def is_aborted(self, batch: BatchHeader) -> bool:
        """Whether ``batch`` is data of an aborted transaction."""
        if not batch.is_transactional or batch.is_control:
            return False
        return any(first <= batch.base_offset <= last
                   for first, last in self.aborted.get(batch.producer_id, ()))

    def close(self) -> None:
        for s in self.segments:
            if s.fd >= 0:
                os.close(s.fd)
                s.fd = -1


@attrs.define
class CleanPlan:
    """A finished pass: cleaned files to swap in, per group of source segments."""

    tp: TopicPartition
    log: Log
    groups: list[tuple[list[LogSegment], Path]]
    end: int
    records_read: int = 0
    records_kept: int = 0
    bytes_read: int = 0
    bytes_written: int = 0


def _batches(fd: int, size: int) -> list[BatchHeader]:
    """Every whole batch of a segment file, read through ``fd`` in chunks."""
    out: list[BatchHeader] = []
    pos = 0
    while pos < size:
        chunk = os.pread(fd, min(_READ_CHUNK, size - pos), pos)
        scan = scan_batches(chunk, verify_crc=False)
        if not scan.batches:
            if scan.truncated and len(chunk) >= 12:
                need = int.from_bytes(chunk[8:12], "big", signed=True) + 12
                if pos + need <= size:
                    scan = scan_batches(os.pread(fd, need, pos), verify_crc=False)
            if not scan.batches:
                break
        out.extend(scan.batches)
        pos += scan.valid_bytes
    return out


class LogCleaner:
    def __init__(self, clock: Callable[[], int] | None = None) -> None:
        self.clock = clock or (lambda: int(time.time() * 1000))
        self._first_dirty: dict[Path, dict[TopicPartition, int]] = {}

    # -------------------------------------------------------------------- checkpoints

    def load_checkpoint(self, log_dir: Path, offsets: dict[TopicPartition, int]) -> None:
        self._first_dirty[log_dir] = dict(offsets)

    def checkpoint_of(self, log_dir: Path) -> dict[TopicPartition, int]:
        return dict(self._first_dirty.get(log_dir, {}))

    def forget(self, log_dir: Path, tp: TopicPartition) -> None:
        self._first_dirty.get(log_dir, {}).pop(tp, None)

    def first_dirty_offset(self, log_dir: Path, tp: TopicPartition, log: Log) -> int:
        offset = self._first_dirty.get(log_dir, {}).get(tp, log.log_start_offset)
        return min(max(offset, log.log_start_offset), log.log_end_offset)

    # ---------------------------------------------------------------------- choosing

    def _first_uncleanable(self, log: Log, now: int) -> int:
        # The LSO, not the high watermark: an open transaction may still abort.
        end = min(log.active_segment.base_offset, log.last_stable_offset)
        lag = log.config.min_compaction_lag_ms
        if lag > 0:
            for seg in log.segments:
                if seg.base_offset >= end:
                    break
                if seg.max_timestamp > now - lag:
                    end = min(end, seg.base_offset)
                    break
        return end

    def dirty_ratio(self, log: Log, first_dirty: int, end: int) -> tuple[float, int]:
        """(dirty / (clean + dirty) bytes, dirty bytes) over whole segments below ``end``."""
        clean = dirty = 0
        for i, seg in enumerate(log.segments):
            nxt = log.segments[i + 1].base_offset if i + 1 < len(log.segments) else None
            if nxt is None or nxt > end:
                break
            if seg.base_offset >= first_dirty:
                dirty += seg.size
            elif nxt <= first_dirty:
                clean += seg.size
            else:
                dirty += seg.size
        total = clean + dirty
        return (dirty / total if total else 0.0), dirty

    def pick(self, logs: dict[TopicPartition, Log], dir_of: dict[TopicPartition, Path]
             ) -> CleanCandidate | None:
        """The dirtiest compacted log worth cleaning now, or None (event loop)."""
        now = self.clock()
        best: tuple[float, TopicPartition, Log] | None = None
        for tp, log in logs.items():
            if log.closed or not log.config.compact:
                continue
            first_dirty = self.first_dirty_offset(dir_of[tp], tp, log)
            end = self._first_uncleanable(log, now)
            ratio, dirty = self.dirty_ratio(log, first_dirty, end)
            if dirty == 0:
                continue
            overdue = any(
                seg.base_offset >= first_dirty and seg.base_offset < end
                and 0 <= seg.max_timestamp < now - log.config.max_compaction_lag_ms
                for seg in log.segments)
            if ratio >= log.config.min_cleanable_dirty_ratio or overdue:
                score = 2.0 if overdue else ratio
                if best is None or score > best[0]:
                    best = (score, tp, log)
        if best is None:
            return None
        return self.snapshot(best[1], best[2], dir_of[best[1]], now)

    def snapshot(self, tp: TopicPartition, log: Log, log_dir: Path, now: int) -> CleanCandidate:
        first_dirty = self.first_dirty_offset(log_dir, tp, log)
        end = self._first_uncleanable(log, now)
        snaps = []
        for i, seg in enumerate(log.segments):
            nxt = log.segments[i + 1].base_offset if i + 1 < len(log.segments) else None
            if nxt is None or nxt > end:
                break
            snaps.append(_SegmentSnapshot(seg, seg.base_offset, nxt, seg.size,
                                          seg.dup_for_flush(), seg.max_timestamp))
        cfg = log.config
        end = snaps[-1].next_offset if snaps else first_dirty
        aborted: dict[int, list[tuple[int, int]]] = {}
        if snaps:
            for txn in log.collect_aborted_transactions(snaps[0].base_offset, end):
                aborted.setdefault(txn.producer_id, []).append(
                    (txn.first_offset, txn.last_offset))
        return CleanCandidate(tp, log, snaps, first_dirty, end, now, cfg.delete_retention_ms,
                              cfg.segment_bytes, cfg.segment_index_bytes // 8, aborted)

    # ------------------------------------------------------------------------ a pass

    def compact(self, cand: CleanCandidate) -> CleanPlan | None:
        """Build the offset map and write the cleaned groups (worker thread; touches only
        the snapshot ``pick`` took, whose descriptors it closes)."""
        try:
            return self._compact(cand)
        finally:
            cand.close()

    def _compact(self, cand: CleanCandidate) -> CleanPlan | None:
        if not cand.segments:
            return None
        plan = CleanPlan(cand.tp, cand.log, [], cand.end)
        # 1. key -> latest offset over the dirty part.
        latest: dict[bytes, int] = {}
        for s in cand.segments:
            if s.next_offset <= cand.first_dirty:
                continue
            for batch in _batches(s.fd, s.size):
                if batch.is_control or cand.is_aborted(batch):
                    continue
                for r in batch.records():
                    if r.key is not None and r.offset >= cand.first_dirty:
                        latest[r.key] = r.offset
        # 2. group the segments so each output fits segment.bytes and the relative offsets.
        groups: list[list[_SegmentSnapshot]] = []
        for s in cand.segments:
            g = groups[-1] if groups else None
            if g and sum(x.size for x in g) + s.size <= cand.segment_bytes \
                    and s.next_offset - 1 - g[0].base_offset <= _INT32_MAX:
                g.append(s)
            else:
                groups.append([s])
        # 3. rewrite each group.
        directory = cand.log.dir
        try:
            for g in groups:
                out = bytearray()
                for s in g:
                    for batch in _batches(s.fd, s.size):
                        plan.bytes_read += batch.size
                        out += self._filter(batch, latest, cand, plan)
                path = directory / f"{g[0].base_offset:020d}.log.cleaned"
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                try:
                    view = memoryview(out)
                    done = 0
                    while done < len(view):
                        done += os.write(fd, view[done:])
                    os.fsync(fd)
                finally:
                    os.close(fd)
                plan.bytes_written += len(out)
                plan.groups.append(([s.segment for s in g], path))
        except BaseException:
            for _segs, path in plan.groups:
                path.unlink(missing_ok=True)
            raise
        return plan

    def _filter(self, batch: BatchHeader, latest: dict[bytes, int], cand: CleanCandidate,
                plan: CleanPlan) -> bytes:
        raw = bytes(batch.raw)
        if batch.is_control:
            return raw
        if cand.is_aborted(batch):
            plan.records_read += batch.record_count
            return b""
        records = batch.records()
        plan.records_read += len(records)
        horizon_passed = batch.has_delete_horizon and cand.now >= batch.base_timestamp
        kept = []
        tombstones = False
        for r in records:
            if r.key is None:
                continue
            if latest.get(r.key, -1) > r.offset:
                continue
            if r.value is None:
                if horizon_passed:
                    continue
                tombstones = True
            kept.append(r)
        plan.records_kept += len(kept)
        if not kept:
            return b""
        stamp = tombstones and not batch.has_delete_horizon
        if len(kept) == len(records) and not stamp:
            return raw
        base = batch.base_offset
        horizon = None
        if batch.has_delete_horizon and tombstones:
            horizon = batch.base_timestamp
        elif stamp:
            horizon = cand.now + cand.delete_retention_ms
        return build_batch(
            [(r.key, r.value, r.headers, r.timestamp, r.offset - base) for r in kept],
            base_offset=base, compression=batch.compression,
            timestamp_type=batch.timestamp_type, producer_id=batch.producer_id,
            producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
            is_transactional=batch.is_transactional,
            partition_leader_epoch=batch.partition_leader_epoch,
            last_offset_delta=batch.last_offset_delta, delete_horizon=horizon,
            max_timestamp=batch.max_timestamp if batch.timestamp_type == 1 else None)

    # -------------------------------------------------------------------------- swap

    def swap(self, plan: CleanPlan, log_dir: Path) -> int:
        """Swap the cleaned files in (event loop). Returns how many groups were swapped."""
        swapped = 0
        for i, (segments, path) in enumerate(plan.groups):
            if plan.log.replace_segments(segments, path) is None:
                for _segs, rest in plan.groups[i + 1:]:
                    rest.unlink(missing_ok=True)
                logger.info("%s: compaction abandoned: the log changed underneath", plan.tp)
                return swapped
            swapped += 1
        self._first_dirty.setdefault(log_dir, {})[plan.tp] = plan.end
        logger.info("%s: compacted %d segment group(s): %d of %d records kept, %.1f MB -> "
                    "%.1f MB", plan.tp, swapped, plan.records_kept, plan.records_read,
                    plan.bytes_read / 1e6, plan.bytes_written / 1e6)
        return swapped

    def clean_now(self, tp: TopicPartition, log: Log, log_dir: Path) -> int:
        """One whole pass on ``log`` synchronously, ignoring the dirty ratio (tools, tests)."""
        plan = self.compact(self.snapshot(tp, log, log_dir, self.clock()))
        return 0 if plan is None else self.swap(plan, log_dir)
