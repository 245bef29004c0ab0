"""Planning a batch read: which topic-partitions, which offset range of each, how many splits.

Runs in Spark's planner worker (``DataSourceReader.partitions()``), on the files only (see
``_logdir``): no broker is asked anything. The partitions are those of every log directory
given; a partition held by several (replicas on several brokers) is read from one of them,
the most advanced by its checkpointed high watermark (``_replicas``). Per partition, of the
chosen replica:

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

Pushed filters (``_pushdown.Pushed``) then apply, after the checks above so that they do
not change what is an error: topic-partitions they exclude are left out before anything of
theirs is read, offset bounds cut each range, and a timestamp lower bound moves each start to
the first offset whose record timestamp may pass (``_logdir.offset_for_timestamp``: whole
segments below it skipped with the ``.timeindex``, the start position found with the
``.index``).

Empty ranges are left out. Raises ValueError (options that do not fit the log dir),
OffsetOutOfRangeError (data loss with failOnDataLoss), OSError.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import OffsetOutOfRangeError
from pyspark_kafkapy import _logdir, _replicas
from pyspark_kafkapy._options import EARLIEST, LATEST, Bound, ReadOptions
from pyspark_kafkapy._pushdown import Pushed

__all__ = ["INTERNAL_TOPICS", "OffsetRange", "PartitionState", "narrow", "partition_states",
           "plan", "resolve_start", "split"]

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
                         f"{', '.join(opts.log_dirs)}")
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


@dataclass(frozen=True)
class PartitionState:
    """One topic-partition on disk now, as its chosen replica has it (``_replicas``): its
    folder, segment bases, log start offset and latest offset (the checkpointed HW, or the
    LSO for read_committed); ``replicas``: how many of the log dirs hold it."""

    tp: TopicPartition
    directory: Path
    segments: list[int]
    earliest: int
    latest: int
    replicas: int = 1


def _placement(opts: ReadOptions) -> dict[TopicPartition, list[Path]]:
    """Every partition of the read's log directories, with the directories holding it."""
    return _replicas.holders(_replicas.log_dirs(opts.log_dirs))


def _states(opts: ReadOptions, placement: dict[TopicPartition, list[Path]],
            tps: list[TopicPartition]) -> dict[TopicPartition, PartitionState]:
    out = {}
    for tp, replica in _replicas.choose(placement, tps).items():
        latest = replica.high_watermark
        if opts.read_committed:
            latest = max(_logdir.last_stable_offset(replica.directory, latest),
                         replica.earliest)
        out[tp] = PartitionState(tp, replica.directory, replica.segments, replica.earliest,
                                 latest, len(placement[tp]))
    return out


def partition_states(opts: ReadOptions, *, all_assigned: bool = True
                     ) -> dict[TopicPartition, PartitionState]:
    """The selected topic-partitions as they are on disk now (a streaming query's view).
    With ``assign``, a partition missing from the log dirs is a ValueError, unless not
    ``all_assigned`` (then it is left out: a running query reports it as data loss)."""
    placement = _placement(opts)
    if opts.assign is not None and not all_assigned:
        return _states(opts, placement, [tp for tp in opts.assign if tp in placement])
    return _states(opts, placement, _selected(opts, list(placement)))


def resolve_start(opts: ReadOptions, states: dict[TopicPartition, PartitionState]
                  ) -> dict[TopicPartition, int]:
    """Where ``startingOffsets`` (or the starting timestamps) put each partition's start
    (a streaming query's initial offsets). Raises ValueError as ``plan``."""
    per = (_per_partition(opts.starting, list(states), "startingOffsets")
           if opts.starting.kind in ("offsets", "timestamps") else {})
    return {tp: _resolve(opts.starting, tp, per, s.directory, s.earliest, s.latest,
                         starting=True, no_match_latest=opts.starting_no_match_latest)
            for tp, s in states.items()}


def narrow(rng: OffsetRange, pushed: Pushed | None) -> OffsetRange | None:
    """``rng`` cut by the pushed offset and timestamp bounds; None when nothing is left."""
    if pushed is None:
        return rng
    start, end = pushed.offsets(rng.start, rng.end)
    if start < end and pushed.timestamp_from is not None:
        found = _logdir.offset_for_timestamp(Path(rng.directory), pushed.timestamp_from,
                                             start, end)
        start = end if found is None else found
    if start >= end:
        return None
    if (start, end) == (rng.start, rng.end):
        return rng
    return replace(rng, start=start, end=end,
                   aborted=tuple(a for a in rng.aborted if a[2] >= start and a[1] < end))


def plan(opts: ReadOptions, pushed: Pushed | None = None) -> list[OffsetRange]:
    """The offset ranges to read, one or more per selected topic-partition (module doc)."""
    placement = _placement(opts)
    tps = _selected(opts, list(placement))
    per_start = (_per_partition(opts.starting, tps, "startingOffsets")
                 if opts.starting.kind in ("offsets", "timestamps") else {})
    per_end = (_per_partition(opts.ending, tps, "endingOffsets")
               if opts.ending.kind in ("offsets", "timestamps") else {})
    if pushed is not None:
        tps = [tp for tp in tps if pushed.admits(tp)]
    states = _states(opts, placement, tps)
    ranges: list[OffsetRange] = []
    for tp, st in states.items():
        pdir, earliest, latest = st.directory, st.earliest, st.latest
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
        rng = narrow(OffsetRange(tp.topic, tp.partition, start, end, str(pdir)), pushed) \
            if start < end else None
        if rng is not None:
            if opts.read_committed:
                rng = replace(rng, aborted=tuple(
                    _logdir.aborted_transactions(pdir, rng.start, rng.end)))
            ranges.append(rng)
    return split(ranges, opts.min_partitions, {tp: st.segments for tp, st in states.items()})


def split(ranges: list[OffsetRange], min_partitions: int | None,
          segments: dict[TopicPartition, list[int]]) -> list[OffsetRange]:
    """``ranges`` cut into about ``min_partitions`` pieces at segment bases (module doc);
    unchanged when there are already that many."""
    if min_partitions is None or min_partitions <= len(ranges):
        return ranges
    return _split(ranges, min_partitions, segments)


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
