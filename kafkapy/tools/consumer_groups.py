"""``kafkapy consumer-groups``: Kafka's ``kafka-consumer-groups.sh``
(``kafka.admin.ConsumerGroupCommand``, as Kafka 3.x prints it), a client of a running cluster.

What it owns: the actions of Kafka's tool over confluent-kafka's AdminClient, printed line for
line as Kafka 3.x prints them, or with ``--output json`` one JSON object per line:

- ``--list`` (group ids; with ``--state [s,...]`` a ``GROUP STATE`` table, filtered by state);
- ``--describe`` (``--group g``... or ``--all-groups``): the offsets view (the default,
  ``--offsets``: per partition the committed offset, the log-end offset, the lag and the
  member it is assigned to; committed partitions assigned to nobody show ``-`` there),
  ``--members`` (``--verbose`` adds the assignment) or ``--state``; an empty group is said on
  stderr (``Consumer group 'g' has no active members.``), a rebalancing one warned about, a
  missing (Dead) one reported as an error;
- ``--delete`` of groups (the broker refuses a non-empty one: Kafka's per-group lines);
- ``--reset-offsets`` with one strategy (``--to-earliest``, ``--to-latest``, ``--to-current``,
  ``--to-offset``, ``--shift-by``, ``--to-datetime``, ``--by-duration``, ``--from-file``) over a
  scope (``--topic t[:p,p]``..., ``--all-topics``; ``--from-file`` is its own scope): the plan
  (``GROUP TOPIC PARTITION NEW-OFFSET``) is printed, and committed only with ``--execute``
  (``--dry-run`` is the default) and only while the group has no active members (Empty or
  Dead, as Kafka requires); ``--export`` prints the plan as Kafka's CSV (``topic,partition,
  offset`` for one group, ``group,topic,partition,offset`` for several), which ``--from-file``
  reads back. Offsets asked for outside a partition's [log-start, log-end] are clamped to it
  with Kafka's warning.

Invariants: nothing is committed unless ``--execute`` was given and every group's plan was
computed; a usage error (Kafka's ``printUsageAndDie``) prints its message on stderr and exits 1
before the cluster is contacted; every error Kafka's tool prints as ``Error: ...`` is printed
the same way and makes the exit code 1 (Kafka's tool exits 0 there: see docs/tools.md).

Rows are printed sorted (groups by id, partitions by topic and partition) where Kafka's order
is a hash map's: the same rows, a stable order. confluent_kafka is imported only when the tool
runs, so that the other tools work without the ``[tools]`` extra.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import re
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

import attrs

from kafkapy.tools import command_config
from kafkapy.tools.command_config import install_hint

__all__ = ["add_parser", "run"]

MISSING = "-"
DEFAULT_TIMEOUT_MS = 5000

# Kafka's ConsumerGroupState names (ConsumerGroupState.toString), by confluent_kafka's enum
# member names; Unknown is not a state one can filter on (Kafka's list of valid states).
STATE_NAMES = {"UNKNOWN": "Unknown", "PREPARING_REBALANCING": "PreparingRebalance",
               "COMPLETING_REBALANCING": "CompletingRebalance", "STABLE": "Stable",
               "DEAD": "Dead", "EMPTY": "Empty"}
FILTER_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty")

# The Java exception (class name, message) a Kafka error code surfaces as in Kafka's tool.
JAVA_ERRORS = {
    3: ("UnknownTopicOrPartitionException", "This server does not host this topic-partition."),
    15: ("CoordinatorNotAvailableException", "The coordinator is not available."),
    16: ("NotCoordinatorException", "This is not the correct coordinator."),
    24: ("InvalidGroupIdException", "The configured groupId is invalid."),
    25: ("UnknownMemberIdException",
         "The coordinator is not aware of this member."),
    30: ("GroupAuthorizationException", "Not authorized to access group: {group}"),
    68: ("GroupNotEmptyException", "The group is not empty."),
    69: ("GroupIdNotFoundException", "The group id does not exist."),
}

RESET_SCENARIOS = ("to_offset", "shift_by", "to_datetime", "by_duration", "to_earliest",
                   "to_latest", "to_current", "from_file")


class ToolError(Exception):
    """A usage error: the message on stderr and exit code 1 (Kafka's printUsageAndDie)."""


class CommandError(Exception):
    """A failure while running: ``Error: Executing consumer group command failed due to
    <message>`` (Kafka's catch-all), exit code 1."""


# ------------------------------------------------------------------------------ arguments


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "consumer-groups",
        help="Kafka's kafka-consumer-groups.sh: list, describe, delete consumer groups and "
             "reset their offsets",
        description="This tool helps to list all consumer groups, describe a consumer group, "
                    "delete consumer group info, or reset consumer group offsets.")
    add_connection_args(p, "Property file containing configs to be passed to Admin Client "
                           "and Consumer.")
    p.add_argument("--group", action="append", metavar="consumer group",
                   help="The consumer group we wish to act on (repeatable).")
    p.add_argument("--topic", action="append", metavar="topic",
                   help="The topic whose consumer group offsets are reset; partitions as "
                        "`topic1:0,1,2`. Repeatable.")
    p.add_argument("--all-topics", action="store_true",
                   help="Consider all topics assigned to a group in the `reset-offsets` "
                        "process.")
    p.add_argument("--list", action="store_true", help="List all consumer groups.")
    p.add_argument("--describe", action="store_true",
                   help="Describe consumer group and list offset lag (number of messages not "
                        "yet processed) related to given group.")
    p.add_argument("--all-groups", action="store_true", help="Apply to all consumer groups.")
    p.add_argument("--delete", action="store_true",
                   help="Pass in groups to delete topic partition offsets and ownership "
                        "information over the entire consumer group.")
    p.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_MS, metavar="timeout (ms)",
                   help="The timeout of each request to the cluster (default: 5000).")
    p.add_argument("--reset-offsets", action="store_true",
                   help="Reset offsets of consumer group (instances must be inactive). "
                        "--dry-run (the default) plans, --execute commits, --export prints "
                        "the plan as CSV.")
    p.add_argument("--dry-run", action="store_true",
                   help="Only show results without executing changes on Consumer Groups.")
    p.add_argument("--execute", action="store_true", help="Execute operation.")
    p.add_argument("--export", action="store_true",
                   help="Export operation execution to a CSV file.")
    p.add_argument("--to-offset", type=int, metavar="offset",
                   help="Reset offsets to a specific offset.")
    p.add_argument("--from-file", metavar="path to CSV file",
                   help="Reset offsets to values defined in CSV file.")
    p.add_argument("--to-datetime", metavar="datetime",
                   help="Reset offsets to offset from datetime. Format: "
                        "'YYYY-MM-DDTHH:mm:SS.sss'")
    p.add_argument("--by-duration", metavar="duration",
                   help="Reset offsets to offset by duration from current timestamp. Format: "
                        "'PnDTnHnMnS'")
    p.add_argument("--to-earliest", action="store_true",
                   help="Reset offsets to earliest offset.")
    p.add_argument("--to-latest", action="store_true", help="Reset offsets to latest offset.")
    p.add_argument("--to-current", action="store_true",
                   help="Reset offsets to current offset.")
    p.add_argument("--shift-by", type=int, metavar="number-of-offsets",
                   help="Reset offsets shifting current offset by 'n', where 'n' can be "
                        "positive or negative.")
    p.add_argument("--members", action="store_true", help="Describe members of the group.")
    p.add_argument("--verbose", action="store_true",
                   help="Provide additional information, if any, when describing the group.")
    p.add_argument("--offsets", action="store_true",
                   help="Describe the group's partitions with their offset lag (the default "
                        "of --describe).")
    p.add_argument("--state", nargs="?", const="", default=None, metavar="states",
                   help="With --describe, the state of the group; with --list, the state of "
                        "every group, optionally only groups in these states "
                        "(e.g. stable,empty).")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="text: Kafka's lines (the default); json: one JSON object per line "
                        "(kafkapy's addition, for scripts).")
    p.set_defaults(run=run, parser=p)


def add_connection_args(p: argparse.ArgumentParser, config_help: str) -> None:
    """``--bootstrap-server`` and ``--command-config``, as every network tool takes them."""
    p.add_argument("--bootstrap-server", metavar="server to connect to",
                   help="REQUIRED: The server(s) to connect to.")
    p.add_argument("--command-config", metavar="command config property file",
                   help=config_help)


def check_args(opts: argparse.Namespace) -> None:
    """Kafka's ConsumerGroupCommandOptions.checkArgs and the one-action rule."""
    actions = [opts.list, opts.describe, opts.delete, opts.reset_offsets]
    if sum(actions) != 1:
        raise ToolError("Command must include exactly one action: --list, --describe, "
                        "--delete, --reset-offsets, --delete-offsets")
    if not opts.bootstrap_server:
        raise ToolError('Missing required argument "[bootstrap-server]"')
    selection = "[group], [all-groups]"
    if opts.group and opts.all_groups:
        raise ToolError('Option "[group]" can\'t be used with option "[all-groups]"')
    if opts.list and opts.group:
        raise ToolError('Option "[group]" can\'t be used with option "[list]"')
    if opts.topic and (opts.list or opts.describe):
        action = "list" if opts.list else "describe"
        raise ToolError(f'Option "[topic]" can\'t be used with option "[{action}]"')
    for flag in ("members", "verbose", "offsets"):
        if getattr(opts, flag) and not opts.describe:
            raise ToolError(f"Option [{flag}] can be used only with [describe]")
    if opts.state is not None and not (opts.describe or opts.list):
        raise ToolError("Option [state] can be used only with [describe], [list]")
    if opts.describe:
        if not opts.group and not opts.all_groups:
            raise ToolError(f"Option [describe] takes one of these options: {selection}")
        if sum([opts.members, opts.offsets, opts.state is not None]) > 1:
            raise ToolError("Option [describe] takes at most one of these options: "
                            "[members], [offsets], [state]")
        if opts.state:
            raise ToolError("Option [describe] does not take a value for [state]")
    if opts.delete:
        if not opts.group and not opts.all_groups:
            raise ToolError(f"Option [delete] takes one of these options: {selection}")
        if opts.topic:
            raise ToolError("The consumer does not support topic-specific offset deletion "
                            "from a consumer group.")
    if opts.reset_offsets:
        if opts.dry_run and opts.execute:
            raise ToolError("Option [reset-offsets] only accepts one of [execute] and "
                            "[dry-run]")
        if not opts.group and not opts.all_groups:
            raise ToolError(f"Option [reset-offsets] takes one of these options: {selection}")
        used = [s for s in RESET_SCENARIOS
                if getattr(opts, s) not in (None, False)]
        if len(used) > 1:
            first, second = (u.replace("_", "-") for u in used[:2])
            raise ToolError(f'Option "[{first}]" can\'t be used with option "[{second}]"')
        if not used:
            raise ToolError("Option '[reset-offsets]' requires one of the following "
                            "scenarios: " + ", ".join(f"[{s.replace('_', '-')}]"
                                                      for s in RESET_SCENARIOS))
        if not opts.topic and not opts.all_topics and not opts.from_file:
            raise ToolError("One of the reset scopes should be defined: --all-topics, --topic.")
    elif opts.all_topics or any(getattr(opts, s) not in (None, False) for s in RESET_SCENARIOS) \
            or opts.dry_run or opts.execute or opts.export:
        raise ToolError("Options --all-topics, --dry-run, --execute, --export and the reset "
                        "scenarios can be used only with [reset-offsets]")


# ------------------------------------------------------------------------------ client


def client_config(opts: argparse.Namespace, extra: dict[str, str] | None = None
                  ) -> dict[str, str]:
    """The tool's confluent-kafka settings (``command_config.client_config``); an unreadable
    ``--command-config`` is a CommandError."""
    try:
        return command_config.client_config(opts.bootstrap_server, opts.command_config, extra)
    except OSError as e:
        raise CommandError(f"{opts.command_config} ({e.strerror or e})") from None


def import_client(tool: str = "consumer-groups") -> Any:
    """confluent_kafka, or ToolError with the install hint."""
    try:
        import confluent_kafka
        import confluent_kafka.admin
    except ImportError:
        raise ToolError(install_hint(tool)) from None
    return confluent_kafka


def admin_client(ck: Any, config: dict[str, str]) -> Any:
    """An AdminClient; a configuration librdkafka refuses (an unknown property in
    ``--command-config``) is a CommandError with librdkafka's words."""
    try:
        return ck.admin.AdminClient(config)
    except (ck.KafkaException, ValueError, TypeError) as e:
        raise CommandError(describe_error(e)) from None


def describe_error(exc: BaseException, group: str = "") -> str:
    """An exception as Kafka's tool prints it: ``org.apache.kafka.common.errors.<Class>:
    <message>`` for Kafka error codes it knows, else the client's own words."""
    error = exc.args[0] if exc.args else None
    code = getattr(error, "code", None)
    if callable(code):
        known = JAVA_ERRORS.get(code())
        if known is not None:
            name, message = known
            return f"org.apache.kafka.common.errors.{name}: {message.format(group=group)}"
        text = getattr(error, "str", None)
        if callable(text):
            return str(text())
    return str(exc)


def wait(future: Any, timeout_s: float) -> Any:
    """A confluent-kafka future's result within the timeout (plus a margin for the client's
    own request timeout to fire first)."""
    return future.result(timeout=timeout_s + 5)


# ------------------------------------------------------------------------------ data


@attrs.frozen
class PartitionRow:
    """A row of ``--describe`` (Kafka's PartitionAssignmentState)."""

    group: str
    topic: str | None
    partition: int | None
    offset: int | None
    log_end_offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None


@attrs.frozen
class MemberRow:
    """A row of ``--describe --members`` (Kafka's MemberAssignmentState)."""

    group: str
    consumer_id: str
    group_instance_id: str
    host: str
    client_id: str
    assignment: tuple[tuple[str, int], ...]


@attrs.frozen
class GroupState:
    """A row of ``--describe --state``."""

    group: str
    coordinator_host: str
    coordinator_port: int
    coordinator_id: int
    assignment_strategy: str
    state: str
    members: int


def _cell(value: object) -> str:
    return MISSING if value is None else str(value)


def _pad(value: object, width: int) -> str:
    # Java's %-<width>s: left-justified, never truncated.
    return f"{value!s:<{width}}"


def format_offsets(rows: Sequence[PartitionRow]) -> list[str]:
    """Kafka 3.x's printOffsets table (after its leading blank line): column widths are the
    longest group/topic/consumer-id/host, at least 15."""
    group_w = max([15] + [len(r.group) for r in rows])
    topic_w = max([15] + [len(_cell(r.topic)) for r in rows])
    consumer_w = max([15] + [len(_cell(r.consumer_id)) for r in rows])
    host_w = max([15] + [len(_cell(r.host)) for r in rows])

    def line(cells: Sequence[object]) -> str:
        widths = (group_w, topic_w, 10, 15, 15, 15, consumer_w, host_w)
        padded = [_pad(c, w) for c, w in zip(cells[:-1], widths, strict=True)]
        return " ".join([*padded, str(cells[-1])])

    lines = ["", line(("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                       "CONSUMER-ID", "HOST", "CLIENT-ID"))]
    for r in rows:
        lines.append(line((r.group, _cell(r.topic), _cell(r.partition), _cell(r.offset),
                           _cell(r.log_end_offset), _cell(r.lag), _cell(r.consumer_id),
                           _cell(r.host), _cell(r.client_id))))
    return lines


def assignment_text(assignment: Sequence[tuple[str, int]]) -> str:
    """Kafka 3.x's ASSIGNMENT cell: ``topic(0,1), other(2)``, topics sorted, or ``-``."""
    if not assignment:
        return MISSING
    by_topic: dict[str, list[int]] = {}
    for topic, partition in assignment:
        by_topic.setdefault(topic, []).append(partition)
    return ", ".join(sorted(topic + "(" + ",".join(str(p) for p in sorted(parts)) + ")"
                            for topic, parts in by_topic.items()))


def format_members(rows: Sequence[MemberRow], verbose: bool) -> list[str]:
    """Kafka 3.x's printMembers table (after its leading blank line); the GROUP-INSTANCE-ID
    column only when a member has one, ASSIGNMENT only with --verbose. Kafka's format ends
    the #PARTITIONS cell with a space, kept."""
    group_w = max([15] + [len(r.group) for r in rows])
    consumer_w = max([15] + [len(r.consumer_id) for r in rows])
    instance_w = max([17] + [len(r.group_instance_id) for r in rows])
    host_w = max([15] + [len(r.host) for r in rows])
    client_w = max([15] + [len(r.client_id) for r in rows])
    with_instance = any(r.group_instance_id for r in rows)

    def line(group: str, consumer: str, instance: str, host: str, client: str,
             partitions: object, assignment: str) -> str:
        cells = [_pad(group, group_w), _pad(consumer, consumer_w)]
        if with_instance:
            cells.append(_pad(instance, instance_w))
        cells += [_pad(host, host_w), _pad(client, client_w), _pad(partitions, 15)]
        return " ".join(cells) + " " + (assignment if verbose else "")

    lines = ["", line("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID",
                      "#PARTITIONS", "ASSIGNMENT")]
    for r in rows:
        lines.append(line(r.group, r.consumer_id, r.group_instance_id, r.host, r.client_id,
                          len(r.assignment), assignment_text(r.assignment)))
    return lines


def format_state(s: GroupState) -> list[str]:
    """Kafka 3.x's printStates: the first column is as wide as the coordinator cell (at least
    25; Kafka's quirk, kept), the coordinator column 25."""
    coordinator = f"{s.coordinator_host}:{s.coordinator_port} ({s.coordinator_id})"
    first_w = max(25, len(coordinator))
    strategy = s.assignment_strategy

    def line(a: object, b: object, c: object, d: object, e: object) -> str:
        return f"{_pad(a, first_w)} {_pad(b, 25)} {_pad(c, 20)} {_pad(d, 15)} {e}"

    return ["", line("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"),
            line(s.group, coordinator, strategy, s.state, s.members)]


def format_group_states(listing: Sequence[tuple[str, str]]) -> list[str]:
    """Kafka 3.x's ``--list --state`` table."""
    width = max([15] + [len(g) for g, _ in listing])
    return [f"{_pad(g, width)} {s}" for g, s in [("GROUP", "STATE"), *listing]]


def format_reset_plan(plan: dict[str, dict[tuple[str, int], int]]) -> list[str]:
    """Kafka 3.x's printOffsetsToReset (a leading blank line, fixed widths; the NEW-OFFSET
    cell is padded to 15, trailing spaces kept)."""
    if not plan:
        return []
    lines = ["", f"{_pad('GROUP', 30)} {_pad('TOPIC', 30)} {_pad('PARTITION', 10)} "
                 f"{_pad('NEW-OFFSET', 15)}"]
    for group in sorted(plan):
        for (topic, partition), offset in sorted(plan[group].items()):
            lines.append(f"{_pad(group, 30)} {_pad(topic, 30)} {_pad(partition, 10)} "
                         f"{_pad(offset, 15)}")
    return lines


def export_csv(plan: dict[str, dict[tuple[str, int], int]], single_group: bool) -> str:
    """Kafka's --export CSV: ``topic,partition,offset`` rows for one group,
    ``group,topic,partition,offset`` for several (Jackson's CsvMapper: no header, quoting
    only where needed)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for group in sorted(plan):
        for (topic, partition), offset in sorted(plan[group].items()):
            writer.writerow([topic, partition, offset] if single_group
                            else [group, topic, partition, offset])
    return buf.getvalue()


def parse_reset_plan(text: str, groups: Sequence[str]) -> dict[str, dict[tuple[str, int], int]]:
    """A ``--from-file`` CSV: the one-group format (``topic,partition,offset``, the group
    from ``--group``) when a single group is named and the first line reads as it, else the
    several-groups format (``group,topic,partition,offset``)."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r and any(c.strip() for c in r)]

    def three(row: list[str]) -> bool:
        return len(row) == 3 and row[1].strip().lstrip("-").isdigit() and \
            row[2].strip().lstrip("-").isdigit()

    plan: dict[str, dict[tuple[str, int], int]] = {}
    try:
        if len(groups) == 1 and rows and three(rows[0]):
            for topic, partition, offset in rows:
                plan.setdefault(groups[0], {})[(topic, int(partition))] = int(offset)
        else:
            for row in rows:
                group, topic, partition, offset = row
                plan.setdefault(group, {})[(topic, int(partition))] = int(offset)
    except ValueError as e:
        raise CommandError(f"Invalid reset plan in the CSV file: {e}") from None
    return plan


_ISO_DATETIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})"
    r"(Z|[+-]\d{2}(?::?\d{2})?)?$")


def parse_datetime(text: str) -> int:
    """Kafka's ``Utils.getDateTime``: ``yyyy-MM-ddTHH:mm:ss.SSS`` with an optional zone
    (``Z``, ``+08``, ``+0800``, ``+08:00``); without one, UTC. Epoch milliseconds."""
    if "T" not in text:
        raise CommandError("Error parsing timestamp. It does not contain a 'T' according to "
                           "ISO8601 format")
    match = _ISO_DATETIME.match(text)
    if match is None:
        raise CommandError(f'Unparseable date: "{text}"')
    year, month, day, hour, minute, second, millis = (int(g) for g in match.groups()[:7])
    zone = match.group(8) or "Z"
    if zone == "Z":
        tz = dt.timezone.utc
    else:
        digits = zone[1:].replace(":", "")
        delta = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        tz = dt.timezone(delta if zone[0] == "+" else -delta)
    try:
        when = dt.datetime(year, month, day, hour, minute, second, millis * 1000, tzinfo=tz)
    except ValueError:
        raise CommandError(f'Unparseable date: "{text}"') from None
    return int(when.replace(microsecond=0).timestamp()) * 1000 + millis


_ISO_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?"
    r"(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$", re.IGNORECASE)


def parse_duration_ms(text: str) -> int:
    """Java's ``Duration.parse`` (``PnDTnHnMn.nS``), in milliseconds."""
    match = _ISO_DURATION.match(text)
    if match is None or text.upper().endswith("T") or \
            all(g is None for g in match.groups()[1:5]):
        raise CommandError(f"Text cannot be parsed to a Duration: {text}")
    sign, days, hours, minutes, seconds, fraction = match.groups()
    total_ms = (int(days or 0) * 86_400_000 + int(hours or 0) * 3_600_000
                + int(minutes or 0) * 60_000 + int(seconds or 0) * 1000)
    if fraction:
        frac_ms = int((fraction + "000")[:3])
        total_ms += -frac_ms if (seconds or "").startswith("-") else frac_ms
    return -total_ms if sign == "-" else total_ms


def parse_topic_arg(arg: str) -> tuple[str, list[int] | None]:
    """``topic`` or ``topic:0,1,2`` (Kafka's parseTopicsWithPartitions)."""
    if ":" not in arg:
        return arg, None
    parts = arg.split(":")
    if len(parts) != 2:
        raise ToolError(f"Invalid topic arg '{arg}', expected topic name and partitions")
    topic, partitions = parts
    out = []
    for p in partitions.split(","):
        try:
            out.append(int(p))
        except ValueError:
            raise ToolError(f"Invalid partition '{p}' specified in topic arg '{arg}''") from None
    return topic, out


# ------------------------------------------------------------------------------ the service


class Output:
    """Kafka's text lines on stdout, or JSON objects; Kafka's stderr lines."""

    def __init__(self, json_mode: bool, out: TextIO, err: TextIO) -> None:
        self.json_mode = json_mode
        self.out = out
        self.err = err
        self.failed = False

    def lines(self, lines: Iterable[str]) -> None:
        if not self.json_mode:
            for line in lines:
                self.out.write(line + "\n")

    def obj(self, obj: dict[str, Any]) -> None:
        if self.json_mode:
            self.out.write(json.dumps(obj) + "\n")

    def stderr(self, text: str) -> None:
        self.out.flush()
        self.err.write(text + "\n")
        self.err.flush()

    def error(self, message: str) -> None:
        """Kafka's printError: ``\\nError: <message>`` on stdout (stderr in JSON mode, so
        that stdout stays JSON); the exit code becomes 1."""
        self.failed = True
        if self.json_mode:
            self.stderr(f"Error: {message}")
        else:
            self.out.write(f"\nError: {message}\n")


class ConsumerGroupService:
    """The actions over one AdminClient."""

    def __init__(self, opts: argparse.Namespace, out: Output) -> None:
        self.ck = import_client()
        self.opts = opts
        self.out = out
        self.timeout_s = opts.timeout / 1000
        self.admin = admin_client(self.ck, client_config(opts))

    # ---------------------------------------------------------------- cluster reads

    def list_groups(self, states: set[str] | None = None) -> list[tuple[str, str]]:
        kwargs: dict[str, Any] = {"request_timeout": self.timeout_s}
        if states:
            kwargs["states"] = {self.ck.ConsumerGroupState[k] for k, v in STATE_NAMES.items()
                                if v in states}
        result = wait(self.admin.list_consumer_groups(**kwargs), self.timeout_s)
        if result.errors:
            raise CommandError(describe_error(result.errors[0]))
        return [(g.group_id, STATE_NAMES.get(g.state.name, "Unknown") if g.state else
                 "Unknown") for g in result.valid]

    def group_ids(self) -> list[str]:
        if self.opts.all_groups:
            return sorted(g for g, _ in self.list_groups())
        # Kafka's --group values, each once, in id order (Kafka prints groups from a TreeMap)
        return sorted(set(self.opts.group))

    def describe_groups(self, groups: Sequence[str]) -> dict[str, Any]:
        if not groups:
            return {}
        futures = self.admin.describe_consumer_groups(list(groups),
                                                      request_timeout=self.timeout_s)
        described = {}
        for group, future in futures.items():
            try:
                described[group] = wait(future, self.timeout_s)
            except self.ck.KafkaException as e:
                raise CommandError(describe_error(e, group)) from None
        return described

    def committed_offsets(self, group: str) -> dict[tuple[str, int], int]:
        request = [self.ck.ConsumerGroupTopicPartitions(group)]
        futures = self.admin.list_consumer_group_offsets(request,
                                                         request_timeout=self.timeout_s)
        try:
            result = wait(futures[group], self.timeout_s)
        except self.ck.KafkaException as e:
            raise CommandError(describe_error(e, group)) from None
        # confluent-kafka reports partitions without a committed offset as -1001
        return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions or []
                if tp.offset >= 0}

    def list_offsets(self, partitions: Iterable[tuple[str, int]], spec: Any
                     ) -> dict[tuple[str, int], int]:
        """Partition -> offset for the OffsetSpec (-1: the broker has none, e.g. no record
        at or after a timestamp)."""
        request = {self.ck.TopicPartition(t, p): spec for t, p in partitions}
        if not request:
            return {}
        futures = self.admin.list_offsets(request, request_timeout=self.timeout_s)
        result = {}
        for tp, future in futures.items():
            try:
                result[(tp.topic, tp.partition)] = wait(future, self.timeout_s).offset
            except self.ck.KafkaException as e:
                raise CommandError(describe_error(e)) from None
        return result

    def topic_partitions(self, topics: Sequence[str]) -> list[tuple[str, int]]:
        if not topics:
            return []
        futures = self.admin.describe_topics(self.ck.TopicCollection(list(topics)),
                                             request_timeout=self.timeout_s)
        out = []
        for topic, future in futures.items():
            try:
                description = wait(future, self.timeout_s)
            except self.ck.KafkaException as e:
                raise CommandError(describe_error(e)) from None
            out += [(topic, p.id) for p in description.partitions]
        return out

    # ---------------------------------------------------------------- --list

    def list_action(self) -> None:
        if self.opts.state is None:
            for group, _ in sorted(self.list_groups()):
                self.out.lines([group])
                self.out.obj({"group": group})
            return
        states = parse_states(self.opts.state) if self.opts.state else set()
        listing = sorted(self.list_groups(states))
        self.out.lines(format_group_states(listing))
        for group, state in listing:
            self.out.obj({"group": group, "state": state})

    # ---------------------------------------------------------------- --describe

    def should_print(self, group: str, state: str, rows: int | None) -> bool:
        return should_print(self.out, group, state, rows)

    def describe(self) -> None:
        groups = self.group_ids()
        described = self.describe_groups(groups)
        for group in sorted(described):
            description = described[group]
            state = STATE_NAMES.get(description.state.name, "Unknown")
            if self.opts.members:
                self.describe_members(group, state, description)
            elif self.opts.state is not None:
                self.describe_state(group, state, description)
            else:
                self.describe_offsets(group, state, description)

    def describe_offsets(self, group: str, state: str, description: Any) -> None:
        committed = self.committed_offsets(group) if state != "Dead" else {}
        members = sorted((m for m in description.members if m.assignment.topic_partitions),
                         key=lambda m: -len(m.assignment.topic_partitions))
        owner: dict[tuple[str, int], Any] = {}
        for m in members:
            for tp in m.assignment.topic_partitions:
                owner[(tp.topic, tp.partition)] = m
        unassigned = sorted(tp for tp in committed if tp not in owner)
        ends = self.list_offsets(list(owner) + unassigned, self.ck.admin.OffsetSpec.latest())
        rows = []
        for m in members:
            for topic, partition in sorted((tp.topic, tp.partition)
                                           for tp in m.assignment.topic_partitions):
                rows.append(self._row(group, topic, partition, committed, ends,
                                      m.member_id, m.host, m.client_id))
        for topic, partition in unassigned:
            # no member: "-" in the table, null in JSON
            rows.append(self._row(group, topic, partition, committed, ends, None, None, None))
        if not self.should_print(group, state, len(rows)):
            return
        self.out.lines(format_offsets(rows))
        for r in rows:
            self.out.obj({"group": r.group, "topic": r.topic, "partition": r.partition,
                          "currentOffset": r.offset, "logEndOffset": r.log_end_offset,
                          "lag": r.lag, "consumerId": r.consumer_id, "host": r.host,
                          "clientId": r.client_id, "state": state})

    @staticmethod
    def _row(group: str, topic: str, partition: int, committed: dict[tuple[str, int], int],
             ends: dict[tuple[str, int], int], consumer: str | None, host: str | None,
             client: str | None) -> PartitionRow:
        offset = committed.get((topic, partition))
        end = ends.get((topic, partition))
        if end is not None and end < 0:
            end = None
        lag = end - offset if offset is not None and end is not None else None
        return PartitionRow(group, topic, partition, offset, end, lag, consumer, host, client)

    def describe_members(self, group: str, state: str, description: Any) -> None:
        rows = [MemberRow(group, m.member_id, m.group_instance_id or "", m.host, m.client_id,
                          tuple((tp.topic, tp.partition)
                                for tp in m.assignment.topic_partitions))
                for m in description.members]
        if not self.should_print(group, state, len(rows)):
            return
        self.out.lines(format_members(rows, self.opts.verbose))
        for r in rows:
            obj: dict[str, Any] = {
                "group": r.group, "consumerId": r.consumer_id,
                "groupInstanceId": r.group_instance_id or None, "host": r.host,
                "clientId": r.client_id, "numPartitions": len(r.assignment), "state": state}
            if self.opts.verbose:
                obj["assignment"] = [{"topic": t, "partition": p}
                                     for t, p in sorted(r.assignment)]
            self.out.obj(obj)

    def describe_state(self, group: str, state: str, description: Any) -> None:
        c = description.coordinator
        s = GroupState(group, c.host, c.port, c.id, description.partition_assignor or "",
                       state, len(description.members))
        if not self.should_print(group, state, 1):
            return
        self.out.lines(format_state(s))
        self.out.obj({"group": group,
                      "coordinator": {"id": c.id, "host": c.host, "port": c.port},
                      "assignmentStrategy": s.assignment_strategy, "state": state,
                      "members": s.members})

    # ---------------------------------------------------------------- --delete

    def delete(self) -> None:
        groups = self.group_ids()
        futures = self.admin.delete_consumer_groups(groups, request_timeout=self.timeout_s) \
            if groups else {}
        failed: dict[str, str] = {}
        deleted: list[str] = []
        for group in groups:
            try:
                wait(futures[group], self.timeout_s)
                deleted.append(group)
            except self.ck.KafkaException as e:
                failed[group] = ("java.util.concurrent.ExecutionException: "
                                 + describe_error(e, group))
        for group in groups:
            self.out.obj({"group": group, "deleted": group in deleted,
                          "error": failed.get(group)})
        quoted = "'" + "', '".join(deleted) + "'"
        if not failed:
            self.out.lines([f"Deletion of requested consumer groups ({quoted}) was "
                            f"successful."])
            return
        self.out.error("Deletion of some consumer groups failed:")
        self.out.lines([f"* Group '{g}' could not be deleted due to: {why}"
                        for g, why in failed.items()])
        if deleted:
            self.out.lines(["", f"These consumer groups were deleted successfully: {quoted}"])

    # ---------------------------------------------------------------- --reset-offsets

    def reset_offsets(self) -> dict[str, dict[tuple[str, int], int]]:
        """Kafka's resetOffsets: per group, the plan; committed with --execute when the
        group is inactive. An active group gets Kafka's error and an empty plan."""
        from_file = None
        if self.opts.from_file:
            from_file = parse_reset_plan(Path(self.opts.from_file).read_text(),
                                         self.opts.group or [])
        groups = self.group_ids()
        described = self.describe_groups(groups)
        plans: dict[str, dict[tuple[str, int], int]] = {}
        for group in groups:
            state = STATE_NAMES.get(described[group].state.name, "Unknown")
            if state not in ("Empty", "Dead"):
                self.out.error(f"Assignments can only be reset if the group '{group}' is "
                               f"inactive, but the current state is {state}.")
                plans[group] = {}
                continue
            plans[group] = self.prepare(group, from_file)
        if self.opts.execute:
            self.execute(plans)
        return plans

    def partitions_to_reset(self, group: str) -> list[tuple[str, int]]:
        if self.opts.all_topics:
            return sorted(self.committed_offsets(group))
        if self.opts.topic:
            named: list[tuple[str, int]] = []
            whole: list[str] = []
            for arg in self.opts.topic:
                topic, partitions = parse_topic_arg(arg)
                if partitions is None:
                    whole.append(topic)
                else:
                    named += [(topic, p) for p in partitions]
            return named + self.topic_partitions(whole)
        return []     # --from-file: the file names the partitions

    def prepare(self, group: str, from_file: dict[str, dict[tuple[str, int], int]] | None
                ) -> dict[tuple[str, int], int]:
        opts = self.opts
        spec = self.ck.admin.OffsetSpec
        if from_file is not None:
            if group not in from_file:
                self.out.error(f"No reset plan for group {group} found")
                return {}
            return self.check_range(from_file[group])
        partitions = self.partitions_to_reset(group)
        if opts.to_offset is not None:
            return self.check_range({tp: opts.to_offset for tp in partitions})
        if opts.to_earliest:
            return self.known(self.list_offsets(partitions, spec.earliest()), "starting")
        if opts.to_latest:
            return self.known(self.list_offsets(partitions, spec.latest()), "ending")
        if opts.shift_by is not None:
            committed = self.committed_offsets(group)
            wanted = {}
            for tp in partitions:
                if tp not in committed:
                    raise ToolError(f"Cannot shift offset for partition {tp[0]}-{tp[1]} since "
                                    f"there is no current committed offset")
                wanted[tp] = committed[tp] + opts.shift_by
            return self.check_range(wanted)
        if opts.to_datetime is not None:
            return self.by_timestamp(partitions, parse_datetime(opts.to_datetime))
        if opts.by_duration is not None:
            duration = parse_duration_ms(opts.by_duration)
            return self.by_timestamp(partitions, int(time.time() * 1000) - duration)
        # --to-current: the committed offset, or the log end for partitions without one
        committed = self.committed_offsets(group)
        have = {tp: committed[tp] for tp in partitions if tp in committed}
        missing = [tp for tp in partitions if tp not in committed]
        return {**have, **self.known(self.list_offsets(missing, spec.latest()), "ending")}

    def known(self, offsets: dict[tuple[str, int], int], which: str
              ) -> dict[tuple[str, int], int]:
        for (topic, partition), offset in offsets.items():
            if offset < 0:
                raise ToolError(f"Error getting {which} offset of topic partition: "
                                f"{topic}-{partition}")
        return offsets

    def by_timestamp(self, partitions: list[tuple[str, int]], timestamp: int
                     ) -> dict[tuple[str, int], int]:
        """Kafka's getLogTimestampOffsets: the first offset at or after the timestamp; a
        partition with none falls back to its log end, with Kafka's warning."""
        found = self.list_offsets(partitions, self.ck.admin.OffsetSpec.for_timestamp(timestamp))
        fallback = sorted(tp for tp, offset in found.items() if offset < 0)
        for topic, partition in fallback:
            self.out.lines(["", f"Warn: Partition {partition} from topic {topic} is empty. "
                                f"Falling back to latest known offset."])
        ends = self.known(self.list_offsets(fallback, self.ck.admin.OffsetSpec.latest()),
                          "ending")
        return {**{tp: o for tp, o in found.items() if o >= 0}, **ends}

    def check_range(self, wanted: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        """Kafka's checkOffsetsRange: clamp into [log start, log end], with its warnings."""
        spec = self.ck.admin.OffsetSpec
        starts = self.list_offsets(wanted, spec.earliest())
        ends = self.list_offsets(wanted, spec.latest())
        result = {}
        for tp, offset in wanted.items():
            name = f"{tp[0]}-{tp[1]}"
            if offset > ends[tp]:
                self.out.stderr(f"WARN New offset ({offset}) is higher than latest offset for "
                                f"topic partition {name}. Value will be set to {ends[tp]}")
                offset = ends[tp]
            elif offset < starts[tp]:
                self.out.stderr(f"WARN New offset ({offset}) is lower than earliest offset for "
                                f"topic partition {name}. Value will be set to {starts[tp]}")
                offset = starts[tp]
            result[tp] = offset
        return result

    def execute(self, plans: dict[str, dict[tuple[str, int], int]]) -> None:
        """Commit each group's plan (Kafka's alterConsumerGroupOffsets); progress on stderr
        when there are many partitions."""
        total = sum(len(p) for p in plans.values())
        done = 0
        committed_groups: list[str] = []
        for group, plan in sorted(plans.items()):
            if not plan:
                continue
            request = self.ck.ConsumerGroupTopicPartitions(
                group, [self.ck.TopicPartition(t, p, o) for (t, p), o in sorted(plan.items())])
            futures = self.admin.alter_consumer_group_offsets(
                [request], request_timeout=self.timeout_s)
            try:
                result = wait(futures[group], self.timeout_s)
                errors = [tp.error for tp in result.topic_partitions or []
                          if tp.error is not None]
                if errors:
                    raise self.ck.KafkaException(errors[0])
            except self.ck.KafkaException as e:
                # never half-done silently: say which groups' offsets did change
                committed = f" (already committed: {', '.join(committed_groups)})" \
                    if committed_groups else ""
                raise CommandError(describe_error(e, group) + committed) from None
            committed_groups.append(group)
            done += len(plan)
            if total >= PROGRESS_MIN_PARTITIONS:
                self.out.stderr(f"Reset {done}/{total} partitions (group {group})")


def should_print(out: Output, group: str, state: str, rows: int | None) -> bool:
    """Kafka's shouldPrintMemberState: the state's message (a missing or Dead group an error,
    an Empty one a note on stderr, a rebalancing one a warning on stderr), and whether rows
    follow."""
    if rows is None:
        out.error(f"The consumer group '{group}' does not exist.")
        return False
    if state == "Dead":
        out.error(f"Consumer group '{group}' does not exist.")
    elif state == "Empty":
        out.stderr(f"\nConsumer group '{group}' has no active members.")
    elif state in ("PreparingRebalance", "CompletingRebalance"):
        out.stderr(f"\nWarning: Consumer group '{group}' is rebalancing.")
    elif state != "Stable":
        raise CommandError(f"Expected a valid consumer group state, but found '{state}'.")
    return state != "Dead" and rows > 0


# Below this many partitions a reset is instant and progress lines would be noise.
PROGRESS_MIN_PARTITIONS = 100


def parse_states(text: str) -> set[str]:
    """Kafka's consumerGroupStatesFromString: comma-separated, case-insensitive."""
    by_upper = {s.upper(): s for s in FILTER_STATES}
    states = set()
    for part in text.split(","):
        state = by_upper.get(part.strip().upper())
        if state is None:
            raise ToolError(f"Invalid state list '{text}'. Valid states are: "
                            + ", ".join(FILTER_STATES))
        states.add(state)
    return states


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the tool; the exit code (0, or 1 after an error)."""
    output = Output(opts.output == "json", out or sys.stdout, err or sys.stderr)
    try:
        check_args(opts)
        if opts.state:
            parse_states(opts.state)
        for arg in opts.topic or []:
            parse_topic_arg(arg)
        service = ConsumerGroupService(opts, output)
        if opts.list:
            service.list_action()
        elif opts.describe:
            service.describe()
        elif opts.delete:
            service.delete()
        else:
            if not opts.dry_run and not opts.execute:
                output.stderr(
                    "WARN: No action will be performed as the --execute option is missing."
                    "In a future major release, the default behavior of this command will be "
                    "to prompt the user before executing the reset rather than doing a dry "
                    "run. You should add the --dry-run option explicitly if you are scripting "
                    "this command and want to keep the current default behavior without "
                    "prompting.")
            plans = service.reset_offsets()
            for group, plan in sorted(plans.items()):
                for (topic, partition), offset in sorted(plan.items()):
                    output.obj({"group": group, "topic": topic, "partition": partition,
                                "newOffset": offset, "executed": bool(opts.execute)})
            if opts.export:
                output.lines([export_csv(plans, len(opts.group or []) == 1)])
            else:
                output.lines(format_reset_plan(plans))
    except ToolError as e:
        output.stderr(str(e))
        return 1
    except (CommandError, OSError) as e:
        output.error(f"Executing consumer group command failed due to {e}")
        return 1
    return 1 if output.failed else 0
