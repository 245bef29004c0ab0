"""Planning a batch read: which topic-partitions, which offset range of each, how many splits.

Runs in Spark's planner worker (``DataSourceReader.partitions()``), on the files only (see
``_logdir``): no broker is asked anything. Per partition:

1. earliest = the log start offset (first segment base, or the checkpointed start above it);
   latest = the high watermark from ``replication-offset-checkpoint`` (read_uncommitted) or
   the last stable offset rebuilt from it (read_committed, see
   ``_logdir.last_stable_offset``): what ListOffsets(-2/-1) would answer, as of the last
   checkpoint.
2. start and end from the options, as Spark's Kafka source resolves them: earliest/latest,
   per-partition JSON (-2 earliest, -1 latest; every partition of the subscription must be
   named), or timestamps (the first offset whose record timestamp is >= the timestamp, found
   with the ``.timeindex``; no such record: an error or latest for a start, per
   startingOffsetsByTimestampStrategy; latest for an end).
3. Checks: a start below earliest means the records were deleted (retention,
   DeleteRecords): an error naming them with failOnDataLoss, else the start moves up to
   earliest. An end above latest is cut to latest (only committed data is read). A start
   above the end is an error.
4. read_committed: the aborted transactions overlapping the range, from the ``.txnindex``
   files, travel with the range.
5. minPartitions: when it exceeds the number of partitions, each range is cut into about
   ``minPartitions * its share of all offsets`` pieces (Spark's KafkaOffsetRangeCalculator),
   at segment boundaries only: a piece starts at a segment's base offset, so every task
   starts reading at byte 0 of a segment. A partition with fewer segments gets fewer pieces.

Empty ranges are left out. Raises ValueError (options that do not fit the log dir),
OffsetOutOfRangeError (data loss with failOnDataLoss), OSError.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path

from kafkapy.errors import OffsetOutOfRangeError
from kafkapy.log.checkpoints import TopicPartition
from pyspark_kafkapy import _logdir
from pyspark_kafkapy._options import EARLIEST, LATEST, Bound, ReadOptions

__all__ = ["INTERNAL_TOPICS", "OffsetRange", "plan"]

# What a Kafka consumer's pattern subscription leaves out (exclude.internal.topics=true).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state",
                             "__share_group_state", "__cluster_metadata"})


@dataclass(frozen=True)
class OffsetRange:
    """One Spark task's work: offsets ``[start, end)`` of one topic-partition, read from
    ``directory``; ``aborted`` holds the aborted transactions to drop (read_committed).
    Plain fields only: it is pickled to the executors."""

    topic: str
    partition: int
    start: int
    end: int
    directory: str
    aborted: tuple[tuple[int, int, int], ...] = ()


def _selected(opts: ReadOptions, present: list[TopicPartition]) -> list[TopicPartition]:
    if opts.subscribe is not None:
        topics = set(opts.subscribe)
        return [tp for tp in present if tp.topic in topics]
    if opts.subscribe_pattern is not None:
        pattern = re.compile(opts.subscribe_pattern)
        return [tp for tp in present
                if tp.topic not in INTERNAL_TOPICS and pattern.fullmatch(tp.topic)]
    assert opts.assign is not None
    missing = sorted(set(opts.assign) - set(present))
    if missing:
        raise ValueError(f"option 'assign': {', '.join(map(str, missing))} not in "
                         f"{opts.log_dir}")
    return list(opts.assign)


def _per_partition(bound: Bound, tps: list[TopicPartition], option: str) -> dict[
        TopicPartition, int]:
    given = dict(bound.offsets)
    if set(given) != set(tps):
        raise ValueError(
            f"if {option} contains specific offsets, you must specify all topic-partitions "
            f"(use -2 for earliest, -1 for latest). Specified: "
            f"{sorted(map(str, given))}; assigned: {sorted(map(str, tps))}")
    return given


def _resolve(bound: Bound, tp: TopicPartition, per: dict[TopicPartition, int],
             pdir: Path, earliest: int, latest: int, *, starting: bool,
             no_match_latest: bool) -> int:
    if bound.kind == "earliest":
        return earliest
    if bound.kind == "latest":
        return latest
    if bound.kind == "offsets":
        o = per[tp]
        return earliest if o == EARLIEST else latest if o == LATEST else o
    ts = bound.timestamp if bound.kind == "timestamp" else per[tp]
    found = _logdir.offset_for_timestamp(pdir, ts, earliest, latest)
    if found is not None:
        return found
    if starting and not no_match_latest:
        raise ValueError(f"no offset matched from request of topic-partition {tp} and "
                         f"timestamp {ts}")
    return latest


def plan(opts: ReadOptions) -> list[OffsetRange]:
    """The offset ranges to read, one or more per selected topic-partition (module doc)."""
    log_dir = Path(opts.log_dir)
    if not log_dir.is_dir():
        raise ValueError(f"{log_dir} is not a directory (kafkapy-log reads a broker's "
                         f"log.dirs)")
    tps = _selected(opts, _logdir.list_partitions(log_dir))
    hws = _logdir.high_watermarks(log_dir)
    starts = _logdir.log_start_offsets(log_dir)
    per_start = (_per_partition(opts.starting, tps, "startingOffsets")
                 if opts.starting.kind in ("offsets", "timestamps") else {})
    per_end = (_per_partition(opts.ending, tps, "endingOffsets")
               if opts.ending.kind in ("offsets", "timestamps") else {})
    ranges: list[OffsetRange] = []
    segments: dict[TopicPartition, list[int]] = {}
    for tp in tps:
        pdir = _logdir.partition_dir(log_dir, tp)
        segs = segments[tp] = _logdir.list_segments(pdir)
        earliest = _logdir.earliest_offset(segs, starts.get(tp))
        latest = max(hws.get(tp, earliest), earliest)
        if opts.read_committed:
            latest = max(_logdir.last_stable_offset(pdir, latest), earliest)
        start = _resolve(opts.starting, tp, per_start, pdir, earliest, latest, starting=True,
                         no_match_latest=opts.starting_no_match_latest)
        end = _resolve(opts.ending, tp, per_end, pdir, earliest, latest, starting=False,
                       no_match_latest=True)
        if start < earliest:
            if opts.fail_on_data_loss:
                raise OffsetOutOfRangeError(
                    f"{tp}: the starting offset {start} is below the log start offset "
                    f"{earliest}: records [{start}, {earliest}) are no longer in {pdir} "
                    f"(deleted by retention or DeleteRecords). Set failOnDataLoss=false to "
                    f"read from {earliest} instead.")
            start = earliest
        end = min(end, latest)
        if start > end:
            raise ValueError(f"{tp}: the starting offset {start} is greater than the ending "
                             f"offset {end} (the latest offset is {latest})")
        if start < end:
            aborted = (tuple(_logdir.aborted_transactions(pdir, start, end))
                       if opts.read_committed else ())
            ranges.append(OffsetRange(tp.topic, tp.partition, start, end, str(pdir), aborted))
    if opts.min_partitions is not None and opts.min_partitions > len(ranges):
        ranges = _split(ranges, opts.min_partitions, segments)
    return ranges


def _split(ranges: list[OffsetRange], min_partitions: int,
           segments: dict[TopicPartition, list[int]]) -> list[OffsetRange]:
    total = sum(r.end - r.start for r in ranges)
    out = []
    for r in ranges:
        parts = max(1, round((r.end - r.start) / total * min_partitions))
        segs = segments[TopicPartition(r.topic, r.partition)]
        cuts_at = segs[bisect.bisect_right(segs, r.start):bisect.bisect_left(segs, r.end)]
        chosen: list[int] = []
        for k in range(1, parts):
            ideal = r.start + (r.end - r.start) * k / parts
            candidates = [c for c in cuts_at if not chosen or c > chosen[-1]]
            if candidates:
                chosen.append(min(candidates, key=lambda c: abs(c - ideal)))
        bounds = [r.start, *sorted(set(chosen)), r.end]
        for lo, hi in pairwise(bounds):
            aborted = tuple(a for a in r.aborted if a[2] >= lo and a[1] < hi)
            out.append(replace(r, start=lo, end=hi, aborted=aborted))
    return out
