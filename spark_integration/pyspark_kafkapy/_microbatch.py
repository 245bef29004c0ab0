"""Streaming reads: the stream offset, admission control and the planning of a micro-batch.

Runs in the driver-side Python process that Spark keeps for a streaming source during a
query (``DataSourceStreamReader.initialOffset/latestOffset/partitions``); the files only, as
``_planner``. Theory of operation, after Spark's Kafka source (KafkaMicroBatchStream):

- **The offset** of the stream is the next Kafka offset to read in every topic-partition,
  as Spark's Kafka source writes it: ``{"topicA": {"0": 23, "1": 0}}`` (topics sorted,
  partitions in numeric order, so equal positions are equal JSON: Spark compares offsets as
  JSON text to find out whether there is new data). Spark writes the end offset of every
  micro-batch to its checkpoint before running it, and a batch is the range
  ``[previous end, end)`` of every partition; so a restarted query re-reads exactly the
  batches it had not committed, and the same offsets give the same records (the log below
  the high watermark does not change, but for retention and compaction).
- **initialOffset** is ``{"$initial": "<startingOffsets kind>"}``, not offsets: Spark does
  not keep a query's initial offset in its checkpoint (its Kafka source keeps it in a file
  of its own; a Python source is not told where the checkpoint is), and asks for it again
  when it re-runs the first micro-batch after a restart, by which time "latest" (the
  default) or "earliest" may mean other offsets. So ``startingOffsets`` is resolved against
  the log when the first micro-batch is planned (``latestOffset``), and where it started is
  written into that batch's end offset under ``"$from"``, which Spark does keep: a re-run of
  the first batch reads the same records. Options that do not fit the log (JSON offsets
  missing a partition, a timestamp with no record) fail at ``initialOffset`` already.
- **latestOffset(start, limit)**: every selected partition's latest offset (the
  checkpointed high watermark, or the LSO for read_committed: committed data only).
  Partitions that appear later (a CreatePartitions, or a new topic matching
  ``subscribePattern``) are read from their start, as a Kafka consumer's
  ``auto.offset.reset=earliest`` would. Under ``ReadMaxRows(n)`` (``maxOffsetsPerTrigger``)
  at most ``n`` offsets are admitted, spread over the partitions in proportion to their lag
  (``admit``). For ``Trigger.AvailableNow`` the latest offsets are fixed when the query
  starts (``prepareForTriggerAvailableNow``), so the query ends. With nothing new the
  start is returned as it came, so Spark plans no empty micro-batch (``next_offset``).
- **partitions(start, end)**: one ``OffsetRange`` per partition that moved (cut further with
  ``minPartitions``), checked for data loss: a start below the log start (retention or
  DeleteRecords deleted it), a partition that was there and is gone, a new partition that
  does not start at 0, an end below the start (the log was truncated or the topic
  recreated). With ``failOnDataLoss`` (the default) each is an ``OffsetOutOfRangeError``
  naming the partition and offsets; without, a warning, and the read goes on from what is
  there (the log start, or the end).

Raises ValueError for offsets JSON that is not a kafkapy-log offset, and as ``_planner``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import OffsetOutOfRangeError
from pyspark_kafkapy import _logdir
from pyspark_kafkapy._options import ReadOptions
from pyspark_kafkapy._planner import (
    OffsetRange,
    PartitionState,
    partition_states,
    resolve_start,
    split,
)

__all__ = [
    "FIRST_FROM",
    "INITIAL",
    "Offsets",
    "admit",
    "from_json",
    "initial_offset",
    "initial_offsets",
    "latest_offsets",
    "micro_batch",
    "next_offset",
    "plan_micro_batch",
    "to_json",
]

INITIAL = "$initial"        # the key of a query's initial offset (module doc)
FIRST_FROM = "$from"        # the key, in the first micro-batch's end, of where it started

Offsets = dict[TopicPartition, int]

_log = logging.getLogger("pyspark_kafkapy")
_HINT = " Set failOnDataLoss=false to go on from what is left."


def to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """``{"topic": {"0": offset}}``, topics sorted and partitions in numeric order."""
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = offsets[tp]
    return out


def from_json(data: Any) -> Offsets:
    """The offsets of a stream offset dict (as ``to_json`` makes them, e.g. read back from a
    checkpoint). Raises ValueError for anything else."""
    example = '{"topicA":{"0":23,"1":0}}'
    if not isinstance(data, dict):
        raise ValueError(f"not a kafkapy-log stream offset (e.g. {example}): {data!r}")
    out: Offsets = {}
    for topic, parts in data.items():
        if topic == FIRST_FROM:
            continue
        if not isinstance(topic, str) or not isinstance(parts, dict):
            raise ValueError(f"not a kafkapy-log stream offset (e.g. {example}): {data!r}")
        for partition, offset in parts.items():
            if (not isinstance(partition, str) or not partition.isdigit()
                    or isinstance(offset, bool) or not isinstance(offset, int) or offset < 0):
                raise ValueError(f"not a kafkapy-log stream offset (e.g. {example}): "
                                 f"{json.dumps(data)}")
            out[TopicPartition(topic, int(partition))] = offset
    return out


def initial_offsets(opts: ReadOptions) -> Offsets:
    """Where a new query starts (module doc). Raises ValueError for a starting offset above
    a partition's latest offset, and as ``_planner.resolve_start``."""
    states = partition_states(opts)
    start = resolve_start(opts, states)
    for tp, offset in start.items():
        if offset > states[tp].latest:
            raise ValueError(f"startingOffsets: the offset {offset} of {tp} is above its "
                             f"latest offset {states[tp].latest}")
    return start


def initial_offset(opts: ReadOptions) -> dict[str, Any]:
    """The query's initial offset, ``{"$initial": kind}``, once ``startingOffsets`` is known
    to fit the log (module doc). Raises as ``initial_offsets``."""
    initial_offsets(opts)
    return {INITIAL: opts.starting.kind}


def next_offset(opts: ReadOptions, start: dict[str, Any], max_offsets: int | None,
                target: Offsets | None = None) -> tuple[dict[str, Any], Offsets]:
    """``latestOffset``: the end of the next micro-batch from the stream offset ``start``
    (``start`` itself when there is nothing new), at most ``max_offsets`` offsets on, at most
    ``target`` (available-now); and the latest offsets seen."""
    first = INITIAL in start
    begin = initial_offsets(opts) if first else from_json(start)
    latest, states = latest_offsets(opts, begin, target)
    end = latest
    if max_offsets is not None:
        end = admit(begin, latest, {tp: st.earliest for tp, st in states.items()},
                    max_offsets)
    if not first and end == begin:
        return start, latest
    out: dict[str, Any] = dict(to_json(end))
    if first:
        out[FIRST_FROM] = to_json(begin)
    return out, latest


def micro_batch(opts: ReadOptions, start: dict[str, Any], end: dict[str, Any]
                ) -> list[OffsetRange]:
    """``partitions(start, end)``: the ranges of the micro-batch between two stream
    offsets (the first one's start is in its end, module doc). Raises as
    ``plan_micro_batch``, and ValueError for offsets that are not kafkapy-log's."""
    if INITIAL in start:
        if FIRST_FROM not in end:
            raise ValueError(f"the end offset of a query's first micro-batch has no "
                             f"{FIRST_FROM!r}: {json.dumps(end)}")
        begin = from_json(end[FIRST_FROM])
    else:
        begin = from_json(start)
    return plan_micro_batch(opts, begin, from_json(end))


def latest_offsets(opts: ReadOptions, start: Offsets, target: Offsets | None = None
                   ) -> tuple[Offsets, dict[TopicPartition, PartitionState]]:
    """Every selected partition's latest offset now; and the states read.

    With ``target`` (the available-now bound, fixed when the query started) no partition
    goes past it, and the partitions are those of the target or of ``start``: one already
    past its target (its start was resolved later, e.g. "latest") or missing from it
    (created in between) stays where it is, which is neither data nor data loss.
    """
    states = partition_states(opts, all_assigned=False)
    if target is None:
        return {tp: st.latest for tp, st in states.items()}, states
    out = {}
    for tp in set(target) | set(start):
        if tp in states:
            out[tp] = min(states[tp].latest, max(target.get(tp, 0), start.get(tp, 0)))
    return out, states


def admit(start: Offsets, latest: Offsets, first: Mapping[TopicPartition, int],
          max_offsets: int) -> Offsets:
    """The end offsets of a micro-batch of at most ``max_offsets`` offsets from ``start``
    towards ``latest`` (``first``: where a partition missing from ``start`` begins).

    Spark's Kafka source gives each partition ``max_offsets * lag / total lag`` (at least 1);
    its rounding can admit a few more than ``max_offsets``. Here every lagging partition
    first gets one offset (none is starved by a busy neighbour), then the rest is shared in
    proportion to the remaining lags, rounded down, the offsets left over going to the
    largest remainders: exactly ``max_offsets`` in all. With fewer offsets to give than
    lagging partitions, the partitions lagging most get one each.
    """
    begin = {tp: start[tp] if tp in start else first[tp] for tp in latest}
    lags = {tp: latest[tp] - begin[tp] for tp in sorted(latest) if latest[tp] > begin[tp]}
    total = sum(lags.values())
    if total <= max_offsets:
        return dict(latest)
    by_lag = sorted(lags, key=lambda tp: (-lags[tp], tp))
    give: dict[TopicPartition, int] = dict.fromkeys(lags, 0)
    if max_offsets < len(lags):
        for tp in by_lag[:max_offsets]:
            give[tp] = 1
    else:
        rest = max_offsets - len(lags)
        pool = total - len(lags)          # > rest, since total > max_offsets
        remainders = {}
        for tp, lag in lags.items():
            share, remainders[tp] = divmod(rest * (lag - 1), pool)
            give[tp] = 1 + share
        left = max_offsets - sum(give.values())
        for tp in sorted(lags, key=lambda tp: (-remainders[tp], tp))[:left]:
            give[tp] += 1
    end = dict(latest)
    for tp, n in give.items():
        end[tp] = begin[tp] + n
    return end


def _loss(opts: ReadOptions, message: str) -> None:
    if opts.fail_on_data_loss:
        raise OffsetOutOfRangeError(message + _HINT)
    _log.warning("kafkapy-log: %s (failOnDataLoss=false: going on)", message)


def plan_micro_batch(opts: ReadOptions, start: Offsets, end: Offsets) -> list[OffsetRange]:
    """The ranges of the micro-batch ``[start, end)`` (module doc). Raises
    OffsetOutOfRangeError for data loss with failOnDataLoss."""
    states = partition_states(opts, all_assigned=False) if end else {}
    for tp in sorted(set(start) - set(end)):
        _loss(opts, f"{tp} is gone (its partition folder was deleted, or it is no longer "
                    f"subscribed): records from offset {start[tp]} on may have been missed")
    ranges = []
    for tp in sorted(end):
        until = end[tp]
        st = states.get(tp)
        if tp in start:
            begin = start[tp]
        else:
            begin = st.earliest if st is not None else 0
            if begin != 0:
                _loss(opts, f"added partition {tp} starts at offset {begin} instead of 0: "
                            f"records [0, {begin}) were deleted before they were read")
        if until < begin:
            _loss(opts, f"{tp}: the offset went back from {begin} to {until} (the log was "
                        f"truncated, or the topic deleted and created again): records may "
                        f"have been missed")
            continue
        if until == begin:
            continue
        if st is None:
            _loss(opts, f"{tp} is gone (its partition folder was deleted): records "
                        f"[{begin}, {until}) are no longer there")
            continue
        if begin < st.earliest:
            _loss(opts, f"{tp}: records [{begin}, {min(st.earliest, until)}) are no longer "
                        f"in {st.directory} (deleted by retention or DeleteRecords before "
                        f"they were read)")
            begin = st.earliest
            if begin >= until:
                continue
        rng = OffsetRange(tp.topic, tp.partition, begin, until, str(st.directory))
        if opts.read_committed:
            rng = replace(rng, aborted=tuple(
                _logdir.aborted_transactions(st.directory, begin, until)))
        ranges.append(rng)
    return split(ranges, opts.min_partitions, {tp: st.segments for tp, st in states.items()})
