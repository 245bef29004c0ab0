"""``kafkapy get-offsets``: Kafka's ``kafka-get-offsets.sh`` (``GetOffsetShell``, as Kafka 3.x
prints it), a client of a running cluster.

What it owns: choosing partitions (``--topic`` a regular expression that must match the whole
topic name, ``--partitions`` ids, or ``--topic-partitions`` patterns such as
``t1:1,t2:0-3,t3:5-,:-2``; internal topics unless ``--exclude-internal-topics``), asking the
cluster for one offset per partition (``--time``: ``-1``/``latest`` the log end, ``-2``/
``earliest`` the log start, ``-3``/``max-timestamp`` the offset of the record with the largest
timestamp, or a timestamp in ms: the first offset whose timestamp is at or after it), and
printing ``topic:partition:offset`` lines in Kafka's order (by the string ``topic-partition``).
A partition without such an offset (a timestamp after every record) prints no line, as in
Kafka. Errors are Kafka's ``Error occurred: <message>`` on stderr with exit code 1.
``--output json`` prints ``{"topic", "partition", "offset"}`` objects instead.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any, TextIO

import attrs

from kafkapy.tools.consumer_groups import (
    CommandError,
    ToolError,
    add_connection_args,
    admin_client,
    client_config,
    describe_error,
    import_client,
)

__all__ = ["add_parser", "run"]

TIMEOUT_S = 30.0
# Kafka's --topic-partitions pattern: an optional topic regex, then a partition, a range
# (lower inclusive, upper exclusive), an open lower bound or an exclusive upper bound.
TOPIC_PARTITION_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
INT32_MAX = 2**31 - 1
NAMED_TIMES = {"latest": -1, "earliest": -2, "max-timestamp": -3}


class ShellError(Exception):
    """Kafka's TerseException: ``Error occurred: <message>`` on stderr, exit code 1."""


@attrs.frozen
class Rule:
    """One topic/partition filter: the topic regex (full match) and partitions
    (an explicit set, or a [low, high) range)."""

    topic: re.Pattern[str]
    partitions: frozenset[int] | None = None
    low: int = 0
    high: int = INT32_MAX

    def topic_allowed(self, topic: str) -> bool:
        return self.topic.fullmatch(topic) is not None

    def allowed(self, topic: str, partition: int) -> bool:
        if not self.topic_allowed(topic):
            return False
        if self.partitions is not None:
            return not self.partitions or partition in self.partitions
        return self.low <= partition < self.high


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "get-offsets", help="Kafka's kafka-get-offsets.sh: offsets of topic partitions",
        description="An interactive shell for getting topic-partition offsets.")
    add_connection_args(p, "Property file containing configs to be passed to Admin Client.")
    p.add_argument("--topic-partitions", metavar="topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3",
                   help="Comma separated list of topic-partition patterns to get the offsets "
                        "for: a topic regex, then ':' and a partition, a range 'N-M' (upper "
                        "exclusive), 'N-' or '-M'.")
    p.add_argument("--topic", metavar="topic",
                   help="The topic to get the offsets for. It also accepts a regular "
                        "expression. If not present, all authorized topics are queried.")
    p.add_argument("--partitions", metavar="partition ids",
                   help="Comma separated list of partition ids to get the offsets for. If "
                        "not present, all partitions of the authorized topics are queried.")
    p.add_argument("--time", default="latest",
                   metavar="<timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp",
                   help="timestamp of the offsets before that. [Note: No offset is returned, "
                        "if the timestamp greater than recently committed record timestamp "
                        "is given.]")
    p.add_argument("--exclude-internal-topics", action="store_true",
                   help="By default, internal topics are included. If specified, internal "
                        "topics are excluded.")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="text: Kafka's lines (the default); json: one JSON object per line.")
    p.set_defaults(run=run, parser=p)


def parse_time(text: str) -> int:
    """The ListOffsets timestamp for ``--time``."""
    if text in NAMED_TIMES:
        return NAMED_TIMES[text]
    try:
        return int(text)
    except ValueError:
        raise ShellError(f"Malformed time argument {text}. Please use -1 or latest / -2 or "
                         f"earliest / -3 or max-timestamp, or a specified long format "
                         f"timestamp") from None


def _regex(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as e:
        raise ShellError(f"Invalid regular expression {text}: {e}") from None


def rules_from_opts(opts: argparse.Namespace) -> list[Rule]:
    if opts.topic_partitions is not None:
        if opts.topic is not None or opts.partitions is not None:
            raise ShellError("--topic-partitions cannot be used with --topic or --partitions")
        rules = []
        for spec in opts.topic_partitions.split(","):
            match = TOPIC_PARTITION_PATTERN.fullmatch(spec)
            if match is None:
                raise ShellError(f"Invalid rule specification: {spec}")
            topic, single, low, high = (g or None for g in match.groups())
            pattern = _regex(topic or ".*")
            if single is not None:
                rules.append(Rule(pattern, frozenset({int(single)})))
            else:
                rules.append(Rule(pattern, None, int(low or 0),
                                  int(high) if high is not None else INT32_MAX))
        return rules
    partitions: frozenset[int] = frozenset()
    if opts.partitions:
        try:
            partitions = frozenset(int(p) for p in opts.partitions.split(","))
        except ValueError:
            raise ShellError("--partitions expects a comma separated list of numeric partition "
                             f"ids, but received: {opts.partitions}") from None
    return [Rule(_regex(opts.topic if opts.topic is not None else ".*"), partitions)]


def fetch_offsets(opts: argparse.Namespace) -> list[tuple[str, int, int]]:
    ck = import_client("get-offsets")
    rules = rules_from_opts(opts)
    timestamp = parse_time(opts.time)
    spec = {-1: ck.admin.OffsetSpec.latest, -2: ck.admin.OffsetSpec.earliest,
            -3: ck.admin.OffsetSpec.max_timestamp}.get(timestamp)
    offset_spec = spec() if spec is not None else ck.admin.OffsetSpec.for_timestamp(timestamp)
    try:
        admin = admin_client(ck, client_config(opts, {"client.id": "GetOffsetShell"}))
        names = list(admin.list_topics(timeout=TIMEOUT_S).topics)
        candidates = [t for t in names if any(r.topic_allowed(t) for r in rules)]
        partitions: list[tuple[str, int]] = []
        if candidates:
            futures = admin.describe_topics(ck.TopicCollection(candidates),
                                            request_timeout=TIMEOUT_S)
            for topic, future in futures.items():
                description = future.result(timeout=TIMEOUT_S + 5)
                if opts.exclude_internal_topics and description.is_internal:
                    continue
                partitions += [(topic, p.id) for p in description.partitions
                               if any(r.allowed(topic, p.id) for r in rules)]
    except ck.KafkaException as e:
        raise ShellError(describe_error(e)) from None
    except CommandError as e:
        raise ShellError(str(e)) from None
    if not partitions:
        raise ShellError("Could not match any topic-partitions with the specified filters")
    futures = admin.list_offsets({ck.TopicPartition(t, p): offset_spec for t, p in partitions},
                                 request_timeout=TIMEOUT_S)
    found = []
    for tp, future in futures.items():
        try:
            info = future.result(timeout=TIMEOUT_S + 5)
        except ck.KafkaException as e:
            sys.stderr.write(f"Skip getting offsets for topic-partition {tp.topic}-"
                             f"{tp.partition} due to error: {describe_error(e)}\n")
            continue
        if info.offset != -1:   # ListOffsetsResponse.UNKNOWN_OFFSET: no such offset
            found.append((tp.topic, tp.partition, info.offset))
    # Kafka's TreeMap ordered by TopicPartition.toString ("topic-partition", as strings)
    return sorted(found, key=lambda r: f"{r[0]}-{r[1]}")


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    if not opts.bootstrap_server:
        err.write('Missing required argument "[bootstrap-server]"\n')
        return 1
    try:
        rows = fetch_offsets(opts)
    except ToolError as e:
        err.write(f"{e}\n")
        return 1
    except (ShellError, CommandError, OSError) as e:
        err.write(f"Error occurred: {e}\n")
        return 1
    for topic, partition, offset in rows:
        if opts.output == "json":
            out.write(json.dumps({"topic": topic, "partition": partition, "offset": offset})
                      + "\n")
        else:
            out.write(f"{topic}:{partition}:{offset}\n")
    return 0
