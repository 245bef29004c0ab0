"""The reader's options, parsed and checked once, as Spark's Kafka source parses its own.

Names are case-insensitive (Spark hands a case-insensitive map; plain dicts are lowered
here). Values are strings, as Spark passes them. Invalid values raise ValueError with the
option's name, the way Spark's Kafka source raises IllegalArgumentException, so a bad option
fails when the DataFrame is planned (or the streaming query starts), before any task runs.
Options of Spark's Kafka source that only make sense against a broker
(``kafka.bootstrap.servers``, ``groupIdPrefix``, ...) are accepted and ignored.

Batch and streaming reads differ as in Spark's Kafka source: a stream starts at "latest" by
default, may start at "latest" (-1), has no ending bound, and takes ``maxOffsetsPerTrigger``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkapy.common.topic_partition import TopicPartition

__all__ = [
    "EARLIEST",
    "LATEST",
    "Bound",
    "ReadOptions",
    "log_dirs",
    "parse_options",
]

EARLIEST = -2       # as in Spark's JSON offsets
LATEST = -1


@dataclass(frozen=True)
class Bound:
    """Where a read starts or ends, as the options give it (before resolution on disk).

    ``kind``: "earliest", "latest", "offsets" (``offsets``: per partition, -2 earliest, -1
    latest), "timestamp" (``timestamp`` for every partition) or "timestamps" (per partition).
    """

    kind: str
    offsets: tuple[tuple[TopicPartition, int], ...] = ()
    timestamp: int = 0


@dataclass(frozen=True)
class ReadOptions:
    # The log directories to read (``load()``'s path or paths; see ``log_dirs``): one
    # broker's, or several brokers' (a partition found in several is a set of replicas).
    log_dirs: tuple[str, ...]
    subscribe: tuple[str, ...] | None
    subscribe_pattern: str | None
    assign: tuple[TopicPartition, ...] | None
    starting: Bound
    ending: Bound
    # startingOffsetsByTimestampStrategy: what a starting timestamp with no record at or
    # after it means: an error (Spark's default) or the latest offset.
    starting_no_match_latest: bool
    min_partitions: int | None
    fail_on_data_loss: bool
    include_headers: bool
    read_committed: bool
    # Streaming only: at most this many offsets per micro-batch (None: no limit).
    max_offsets_per_trigger: int | None = None
    # pushFilters=false: never push filters for this read, whatever Spark's setting.
    push_filters: bool = True
    # readStatsDir: a directory where planning and every task write what they read (JSON).
    read_stats_dir: str | None = None


def _bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    value = options.get(name.lower())
    if value is None:
        return default
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise ValueError(f"option {name!r} must be 'true' or 'false', not {value!r}")
    return v == "true"


def _long(text: str, what: str) -> int:
    t = text.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", t):
        raise ValueError(f"{what}: expected a single long value, got {text!r}")
    return int(t)


def _partition_map(text: str, name: str) -> tuple[tuple[TopicPartition, int], ...]:
    example = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
    try:
        data: Any = json.loads(text)
    except ValueError as e:
        raise ValueError(f"option {name!r}: expected e.g. {example}, got {text!r}") from e
    if not isinstance(data, dict):
        raise ValueError(f"option {name!r}: expected e.g. {example}, got {text!r}")
    out = []
    for topic, parts in data.items():
        if not isinstance(parts, dict):
            raise ValueError(f"option {name!r}: expected e.g. {example}, got {text!r}")
        for partition, value in parts.items():
            if (not re.fullmatch(r"[0-9]+", partition) or isinstance(value, bool)
                    or not isinstance(value, int)):
                raise ValueError(f"option {name!r}: expected e.g. {example}, got {text!r}")
            out.append((TopicPartition(topic, int(partition)), value))
    return tuple(sorted(out))


def _bound(options: Mapping[str, str], prefix: str, default: str) -> Bound:
    """Spark's getKafkaOffsetRangeLimit: ``<prefix>Timestamp`` first, then
    ``<prefix>OffsetsByTimestamp``, then ``<prefix>Offsets``."""
    timestamp = options.get(f"{prefix}timestamp")
    if timestamp is not None:
        return Bound("timestamp", timestamp=_long(timestamp, f"option '{prefix}Timestamp'"))
    by_ts = options.get(f"{prefix}offsetsbytimestamp")
    if by_ts is not None:
        return Bound("timestamps", offsets=_partition_map(by_ts, f"{prefix}OffsetsByTimestamp"))
    text = options.get(f"{prefix}offsets", default).strip()
    if text.lower() in ("earliest", "latest"):
        return Bound(text.lower())
    return Bound("offsets", offsets=_partition_map(text, f"{prefix}Offsets"))


def log_dirs(options: Mapping[str, str]) -> tuple[str, ...]:
    """The log directories of a read, from the options Spark's ``load()`` sets (lowered
    names): ``load("/a")`` sets ``path``; ``load(["/a", "/b"])`` sets ``paths`` to a JSON
    array (Spark's DataFrameReader does that for more than one path; one path in a list
    arrives as ``path``). ``path`` is split at commas as Kafka splits ``log.dirs``
    (``load("/a,/b")``); the elements of ``paths`` are taken as they are. Both may be
    present (Spark's legacy path-option behaviour): ``path`` comes first. A directory named
    twice is read once (the first mention counts).

    Raises ValueError when there is none, or ``paths`` is not a JSON array of strings.
    """
    out: list[str] = []
    if options.get("path"):
        out += [d.strip() for d in options["path"].split(",") if d.strip()]
    if options.get("paths"):
        text = options["paths"]
        try:
            data: Any = json.loads(text)
            if not isinstance(data, list) or not all(isinstance(d, str) for d in data):
                raise ValueError(text)
        except ValueError as e:
            raise ValueError(f"option 'paths': expected a JSON array of log directories "
                             f"(as load([dir1, dir2]) sets it), got {text!r}") from e
        out += [d for d in data if d.strip()]
    if not out:
        raise ValueError("kafkapy-log reads log directories: give them to load(<log dir>) "
                         "(a broker's log.dirs), or load([<dir>, <dir>, ...]) for several "
                         "brokers' (a cluster)")
    return tuple(dict.fromkeys(out))


# Options of Spark's Kafka source that kafkapy-log does not implement: refused rather than
# silently ignored, since they change which records a micro-batch holds.
_UNSUPPORTED_STREAM_OPTIONS = ("minOffsetsPerTrigger", "maxTriggerDelay")


def parse_options(raw: Mapping[str, str], *, streaming: bool = False) -> ReadOptions:
    """Check and parse the DataFrameReader (``streaming``: DataStreamReader) options (see the
    package docstring for each).

    Raises ValueError naming the option for anything Spark's Kafka source would refuse:
    not exactly one of subscribe/subscribePattern/assign, an empty topic list or pattern,
    "latest" (or -1) as a starting offset or "earliest" (or -2) as an ending one in a batch
    query, an ending bound in a streaming query, malformed JSON, numbers or booleans,
    minPartitions or maxOffsetsPerTrigger <= 0, an unknown isolation level; for
    minOffsetsPerTrigger and maxTriggerDelay (not implemented); and for no log directory
    (``load(path)``, see ``log_dirs``).
    """
    options = {k.lower(): v for k, v in raw.items()}
    dirs = log_dirs(options)
    strategies = [k for k in ("subscribe", "subscribepattern", "assign") if k in options]
    if len(strategies) != 1:
        raise ValueError("exactly one of the options 'subscribe', 'subscribePattern' or "
                         f"'assign' must be given, not {len(strategies)}")
    subscribe = pattern = assign = None
    if "subscribe" in options:
        subscribe = tuple(t.strip() for t in options["subscribe"].split(",") if t.strip())
        if not subscribe:
            raise ValueError(f"no topics to subscribe to: option 'subscribe' is "
                             f"{options['subscribe']!r}")
    elif "subscribepattern" in options:
        pattern = options["subscribepattern"].strip()
        if not pattern:
            raise ValueError("option 'subscribePattern' is empty")
        try:
            re.compile(pattern)
        except re.error as e:
            raise ValueError(f"option 'subscribePattern': {e}") from e
    else:
        text = options["assign"]
        try:
            data: Any = json.loads(text)
            if not isinstance(data, dict) or not all(
                    isinstance(ps, list) and all(isinstance(p, int) and not isinstance(p, bool)
                                                 for p in ps) for ps in data.values()):
                raise ValueError(text)
        except ValueError as e:
            raise ValueError(f"option 'assign': expected e.g. {{\"topicA\":[0,1]}}, got "
                             f"{text!r}") from e
        assign = tuple(sorted({TopicPartition(t, p) for t, ps in data.items() for p in ps}))

    starting = _bound(options, "starting", "latest" if streaming else "earliest")
    if streaming:
        for name in ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"):
            if name.lower() in options:
                raise ValueError(f"option {name!r} is not valid in streaming queries (a stream "
                                 f"has no end)")
        for name in _UNSUPPORTED_STREAM_OPTIONS:
            if name.lower() in options:
                raise ValueError(f"option {name!r} of Spark's Kafka source is not supported "
                                 f"by kafkapy-log (maxOffsetsPerTrigger is)")
    ending = Bound("latest") if streaming else _bound(options, "ending", "latest")
    if not streaming and (starting.kind == "latest" or (
            starting.kind == "offsets" and any(o == LATEST for _, o in starting.offsets))):
        raise ValueError("startingOffsets can't be latest for batch queries")
    if ending.kind == "earliest" or (ending.kind == "offsets"
                                     and any(o == EARLIEST for _, o in ending.offsets)):
        raise ValueError("endingOffsets can't be earliest for batch queries")
    for bound, name in ((starting, "startingOffsets"), (ending, "endingOffsets")):
        if bound.kind == "offsets" and any(o < EARLIEST for _, o in bound.offsets):
            raise ValueError(f"option {name!r}: offsets must be >= 0, or -2 (earliest) or "
                             f"-1 (latest)")
    if starting.kind == ending.kind == "offsets":
        if {tp for tp, _ in starting.offsets} != {tp for tp, _ in ending.offsets}:
            raise ValueError("startingOffsets and endingOffsets name different partitions")
        ends = dict(ending.offsets)
        for tp, start in starting.offsets:
            if start >= 0 and ends[tp] >= 0 and start > ends[tp]:
                raise ValueError(f"the starting offset {start} of {tp} is greater than its "
                                 f"ending offset {ends[tp]}")

    strategy = options.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy not in ("error", "latest"):
        raise ValueError(f"option 'startingOffsetsByTimestampStrategy' must be 'error' or "
                         f"'latest', not {strategy!r}")
    min_partitions = None
    if "minpartitions" in options:
        min_partitions = _long(options["minpartitions"], "option 'minPartitions'")
        if min_partitions <= 0:
            raise ValueError("option 'minPartitions' must be positive")
    # Spark's Kafka source passes kafka.isolation.level to its consumers; plain
    # isolation.level is accepted too.
    max_offsets = None
    if "maxoffsetspertrigger" in options:       # (ignored by batch queries, as by Spark's)
        max_offsets = _long(options["maxoffsetspertrigger"], "option 'maxOffsetsPerTrigger'")
        if max_offsets <= 0:
            raise ValueError("option 'maxOffsetsPerTrigger' must be positive")
    isolation = options.get("kafka.isolation.level", options.get("isolation.level",
                                                                   "read_uncommitted"))
    if isolation.strip().lower() not in ("read_uncommitted", "read_committed"):
        raise ValueError(f"option 'kafka.isolation.level' must be read_uncommitted or "
                         f"read_committed, not {isolation!r}")
    return ReadOptions(
        log_dirs=dirs,
        subscribe=subscribe,
        subscribe_pattern=pattern,
        assign=assign,
        starting=starting,
        ending=ending,
        starting_no_match_latest=strategy == "latest",
        min_partitions=min_partitions,
        fail_on_data_loss=_bool(options, "failOnDataLoss", True),
        include_headers=_bool(options, "includeHeaders", False),
        read_committed=isolation.strip().lower() == "read_committed",
        max_offsets_per_trigger=max_offsets,
        push_filters=_bool(options, "pushFilters", True),
        read_stats_dir=options.get("readstatsdir") or None,
    )
