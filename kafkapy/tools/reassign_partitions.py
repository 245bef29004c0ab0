"""``kafkapy reassign-partitions``: Kafka's ``kafka-reassign-partitions.sh``
(``org.apache.kafka.tools.reassign.ReassignPartitionsCommand`` of Kafka 3.x), a client of a
running cluster.

What it owns: the five actions, with Kafka's flags, JSON formats and lines:

- ``--generate --topics-to-move-json-file f --broker-list 1,2,3``: the current assignment of
  the topics (``{"topics": [{"topic": "foo"}], "version": 1}``) and a proposal spreading them
  over the brokers (Kafka's rack-unaware ``assignReplicasToBrokers``: round-robin leaders from
  a random start, followers shifted), as ``Current partition replica assignment`` /
  ``Proposed partition reassignment configuration`` and one line of Kafka's reassignment JSON
  each (``{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],
  "log_dirs":["any","any"]}]}``);
- ``--execute --reassignment-json-file f [--throttle n] [--additional]``: the current
  assignment of those partitions (to save for a rollback), the throttles when asked
  (``leader/follower.replication.throttled.rate`` on the brokers involved,
  ``leader/follower.replication.throttled.replicas`` on the topics), then
  AlterPartitionReassignments: ``Successfully started partition reassignment(s) for t-0,...``;
- ``--verify --reassignment-json-file f [--preserve-throttles]``: ``Status of partition
  reassignment:`` and a line per partition (``Reassignment of partition t-0 is completed.`` /
  ``... is still in progress.`` / ``There is no active reassignment of partition t-0, but
  replica set is 1,2 rather than 2,3.``); once nothing is moving, the throttles are cleared
  (``Clearing broker-level throttles on brokers 1,2,3`` / ``Clearing topic-level throttles on
  topic t``);
- ``--list``: ``Current partition reassignments:`` and ``t-0: replicas: 1,2,3. adding: 3.
  removing: 1.`` lines, or ``No partition reassignments found.``;
- ``--cancel --reassignment-json-file f [--preserve-throttles]``: reverts the listed
  partitions' ongoing reassignments: ``Successfully cancelled partition reassignment(s) for:
  t-0`` or ``None of the specified partition reassignments are active.``

Moving replicas between the log directories of a broker (``log_dirs`` other than ``"any"``) is
refused: kafkapy's tool does not drive AlterReplicaLogDirs. Failures are Kafka's: a bad command
line on stderr, a failed action's message on stdout (``Error: <message>`` for unexpected
ones), exit code 1. ``--output json`` prints one object per line instead (``current`` /
``proposed`` assignments, per-partition ``status``, ``reassignment`` entries).

AlterPartitionReassignments and ListPartitionReassignments are not in confluent-kafka's
AdminClient: kafka-python's (``kafkapy.tools.kafka_python_admin``) sends every request here.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from kafkapy.tools.kafka_python_admin import ClientMissing, error_message, kafka_python_admin

__all__ = ["add_parser", "format_reassignment_json", "parse_reassignment", "propose", "run"]

TOOL = "reassign-partitions"
ANY_LOG_DIR = "any"
ACTIONS = ("generate", "execute", "verify", "cancel", "list")
BROKER_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                    "replica.alter.log.dirs.io.max.bytes.per.second")
TOPIC_THROTTLES = ("leader.replication.throttled.replicas",
                   "follower.replication.throttled.replicas")
EXISTING_REASSIGNMENT = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to "
    "override this and create a new partition assignment in addition to the existing one. "
    "The --additional flag can also be used to change the throttle by resubmitting the "
    "current reassignment.")
RUN_VERIFY = ("Warning: You must run --verify periodically, until the reassignment completes, "
              "to ensure the throttle is removed.")
# the options each action takes (besides --bootstrap-server, --command-config, --output)
PERMITTED = {
    "generate": {"topics_to_move_json_file", "broker_list", "disable_rack_aware"},
    "execute": {"reassignment_json_file", "additional", "throttle",
                "replica_alter_log_dirs_throttle", "timeout"},
    "verify": {"reassignment_json_file", "preserve_throttles"},
    "cancel": {"reassignment_json_file", "preserve_throttles", "timeout"},
    "list": set(),
}
REQUIRED = {"generate": ("topics_to_move_json_file", "broker_list"),
            "execute": ("reassignment_json_file",), "verify": ("reassignment_json_file",),
            "cancel": ("reassignment_json_file",), "list": ()}
DEFAULTS = {"throttle": -1, "replica_alter_log_dirs_throttle": -1, "timeout": 10000}

Partition = tuple[str, int]


class UsageError(Exception):
    """Kafka's printUsageAndExit: the message on stderr, exit code 1."""


class CommandFailed(Exception):
    """Kafka's TerseException / AdminCommandFailedException: the message on stdout, exit 1."""


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        TOOL, help="Kafka's kafka-reassign-partitions.sh: move partitions between brokers",
        description="This tool helps to move topic partitions between replicas.")
    p.add_argument("--bootstrap-server", metavar="Server(s) to use for bootstrapping",
                   help="REQUIRED: the server(s) to use for bootstrapping.")
    p.add_argument("--command-config", metavar="Admin client property file",
                   help="Property file containing configs to be passed to Admin Client.")
    for action, text in (
            ("generate", "Generate a candidate partition reassignment configuration. Note "
                         "that this only generates a candidate assignment, it does not "
                         "execute it."),
            ("execute", "Kick off the reassignment as specified by the "
                        "--reassignment-json-file option."),
            ("verify", "Verify if the reassignment completed as specified by the "
                       "--reassignment-json-file option. If there is a throttle engaged for "
                       "the replicas specified, and the rebalance has completed, the "
                       "throttle will be removed"),
            ("cancel", "Cancel an active reassignment."),
            ("list", "List all active partition reassignments.")):
        p.add_argument(f"--{action}", action="store_true", help=text)
    p.add_argument("--reassignment-json-file", metavar="manual assignment json file path",
                   help="The JSON file with the partition reassignment configuration: "
                        '{"partitions": [{"topic": "foo", "partition": 1, "replicas": [1,2,3], '
                        '"log_dirs": ["any","any","any"]}], "version": 1}')
    p.add_argument("--topics-to-move-json-file", metavar="topics to reassign json file path",
                   help='Generate a reassignment configuration to move the partitions of the '
                        'specified topics to the list of brokers specified by the '
                        '--broker-list option: {"topics": [{"topic": "foo"}], "version": 1}')
    p.add_argument("--broker-list", metavar="brokerlist",
                   help='The list of brokers to which the partitions need to be reassigned in '
                        'the form "0,1,2". This is required if --topics-to-move-json-file is '
                        'used to generate reassignment configuration')
    p.add_argument("--disable-rack-aware", action="store_true",
                   help="Disable rack aware replica assignment")
    p.add_argument("--throttle", type=int, metavar="throttle",
                   help="The movement of partitions between brokers will be throttled to this "
                        "value (bytes/sec).")
    p.add_argument("--replica-alter-log-dirs-throttle", type=int,
                   metavar="replicaAlterLogDirsThrottle",
                   help="The movement of replicas between log directories on the same broker "
                        "will be throttled to this value (bytes/sec).")
    p.add_argument("--timeout", type=int, metavar="timeout",
                   help="The maximum time in ms to wait for log directory replica assignment "
                        "to begin.")
    p.add_argument("--additional", action="store_true",
                   help="Execute this reassignment in addition to any other ongoing ones.")
    p.add_argument("--preserve-throttles", action="store_true",
                   help="Do not modify broker or topic throttles.")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="text: Kafka's lines (the default); json: one JSON object per line "
                        "(kafkapy's addition).")
    p.set_defaults(run=run, parser=p)


# ================================================================================== parsing

def validate(opts: argparse.Namespace) -> str:
    """Kafka's validateAndParseArgs: the one action, its required and permitted options."""
    chosen = [a for a in ACTIONS if getattr(opts, a)]
    if len(chosen) != 1:
        raise UsageError("Command must include exactly one action: --generate, --execute, "
                         "--verify, --cancel, --list")
    action = chosen[0]
    if not opts.bootstrap_server:
        raise UsageError("Please specify either --bootstrap-server or --bootstrap-controller")
    for name in REQUIRED[action]:
        if getattr(opts, name) is None:
            raise UsageError(f'Missing required argument "[{name.replace("_", "-")}]"')
    for name in sorted(set().union(*PERMITTED.values()) - PERMITTED[action]):
        if getattr(opts, name) not in (None, False):
            raise UsageError(f'Option "[{name.replace("_", "-")}]" can\'t be used with action '
                             f'"[{action}]"')
    for name, default in DEFAULTS.items():
        if getattr(opts, name) is None:
            setattr(opts, name, default)
    return action


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise CommandFailed(f"Error: {path} ({e.strerror or e})") from None


def _json(text: str) -> dict[str, Any]:
    try:
        js = json.loads(text)
    except ValueError as e:
        raise CommandFailed(f"Error: {e}") from None
    if not isinstance(js, dict):
        raise CommandFailed("Error: The input string is not a valid JSON")
    version = js.get("version", 1)
    if version != 1:
        raise CommandFailed(f"Error: Not supported version field value {version}")
    return js


def parse_topics(text: str) -> list[str]:
    """``--topics-to-move-json-file``: the topics, in the file's order."""
    return [str(t["topic"]) for t in _json(text).get("topics", [])]


def parse_reassignment(text: str) -> dict[Partition, list[int]]:
    """``--reassignment-json-file`` as Kafka's parseExecuteAssignmentArgs checks it."""
    entries: list[tuple[Partition, list[int]]] = []
    for p in _json(text).get("partitions", []):
        try:
            tp = (str(p["topic"]), int(p["partition"]))
            replicas = [int(r) for r in p["replicas"]]
        except (KeyError, TypeError, ValueError) as e:
            raise CommandFailed(f"Error: No such field exists: `{e.args[0] if e.args else e}`") \
                from None
        log_dirs = p.get("log_dirs", [ANY_LOG_DIR] * len(replicas))
        if len(log_dirs) != len(replicas):
            raise CommandFailed(f"Error: Size of replicas list {_java_list(replicas)} is "
                                f"different from size of log dirs list {_java_list(log_dirs)} "
                                f"for partition {_tp(tp)}")
        if any(d != ANY_LOG_DIR for d in log_dirs):
            raise CommandFailed("Error: kafkapy reassign-partitions does not move replicas "
                                "between log directories: use \"any\" in log_dirs")
        entries.append((tp, replicas))
    if not entries:
        raise CommandFailed("Error: Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in entries):
        raise CommandFailed("Error: Partition replica list cannot be empty")
    seen = [tp for tp, _ in entries]
    duplicates = sorted({tp for tp in seen if seen.count(tp) > 1})
    if duplicates:
        raise CommandFailed("Error: Partition reassignment contains duplicate topic "
                            "partitions: " + ",".join(_tp(tp) for tp in duplicates))
    repeated = [(tp, sorted({r for r in rs if rs.count(r) > 1})) for tp, rs in entries]
    repeated = [(tp, rs) for tp, rs in repeated if rs]
    if repeated:
        raise CommandFailed("Error: Partition replica lists may not contain duplicate entries: "
                            + ". ".join(f"{_tp(tp)} contains multiple entries for "
                                        f"{','.join(map(str, rs))}" for tp, rs in repeated))
    return dict(entries)


def _java_list(values: Iterable[object]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _tp(tp: Partition) -> str:
    return f"{tp[0]}-{tp[1]}"


def format_reassignment_json(assignment: Mapping[Partition, Sequence[int]]) -> str:
    """Kafka's formatAsReassignmentJson: partitions sorted by topic then partition, every
    log dir ``any``, Jackson's compact form."""
    partitions = [{"topic": t, "partition": p, "replicas": list(assignment[(t, p)]),
                   "log_dirs": [ANY_LOG_DIR] * len(assignment[(t, p)])}
                  for t, p in sorted(assignment)]
    return json.dumps({"version": 1, "partitions": partitions}, separators=(",", ":"))


def propose(current: Mapping[Partition, Sequence[int]], brokers: Sequence[int],
            rng: random.Random | None = None) -> dict[Partition, list[int]]:
    """Kafka's calculateAssignment with the rack-unaware ``assignReplicasToBrokers``: per
    topic, its partition count and replication factor over ``brokers`` (sorted), the first
    replica round-robin from a random start, the followers at a shift that grows each time
    the partitions have gone once round the brokers."""
    rng = rng or random.Random()
    ids = sorted(brokers)
    n = len(ids)
    by_topic: dict[str, list[int]] = {}
    for topic, partition in current:
        by_topic.setdefault(topic, []).append(partition)
    proposed: dict[Partition, list[int]] = {}
    for topic in sorted(by_topic):
        partitions = len(by_topic[topic])
        factor = len(current[(topic, min(by_topic[topic]))])
        if factor > n:
            raise CommandFailed(f"Error: Replication factor: {factor} larger than available "
                                f"brokers: {n}.")
        start, shift = rng.randrange(n), rng.randrange(n)
        for pid in range(partitions):
            if pid > 0 and pid % n == 0:
                shift += 1
            first = (pid + start) % n
            replicas = [ids[first]]
            replicas += [ids[(first + 1 + (shift + j) % (n - 1)) % n] for j in range(factor - 1)]
            proposed[(topic, pid)] = replicas
    return proposed


# =============================================================================== the client

class Reassigner:
    """One kafka-python admin client and the requests the actions make."""

    def __init__(self, opts: argparse.Namespace, out: TextIO) -> None:
        self.opts = opts
        self.out = out
        self.json = opts.output == "json"
        self.admin = kafka_python_admin(TOOL, opts.bootstrap_server, opts.command_config,
                                        "reassign-partitions-tool")
        self.kafka = sys.modules["kafka"]

    def print(self, line: str) -> None:
        if not self.json:
            self.out.write(line + "\n")

    def emit(self, obj: dict[str, Any]) -> None:
        if self.json:
            self.out.write(json.dumps(obj) + "\n")

    def close(self) -> None:
        self.admin.close()

    def broker_ids(self) -> set[int]:
        return {int(b["broker_id"]) for b in self.admin.describe_cluster()["brokers"]}

    def assignment(self, topics: Iterable[str], missing_ok: bool = False
                   ) -> dict[Partition, list[int]]:
        """The replicas of every partition of the topics; a topic that does not exist is
        Kafka's ``Topic <t> not found.`` (or left out, with ``missing_ok``)."""
        out: dict[Partition, list[int]] = {}
        names = sorted(set(topics))
        if not names:
            return out
        for topic in self.admin.describe_topics(names):
            if topic["error_code"] and missing_ok:
                continue
            if topic["error_code"]:
                raise CommandFailed(f"Error: org.apache.kafka.common.errors."
                                    f"UnknownTopicOrPartitionException: Topic {topic['name']} "
                                    f"not found.")
            for p in topic["partitions"]:
                out[(topic["name"], int(p["partition_index"]))] = \
                    [int(r) for r in p["replica_nodes"]]
        return out

    def ongoing(self, partitions: Iterable[Partition] | None = None
                ) -> dict[Partition, dict[str, list[int]]]:
        asked = None if partitions is None else \
            [self.kafka.TopicPartition(t, p) for t, p in partitions]
        listed = self.admin.list_partition_reassignments(asked)
        return {(tp.topic, tp.partition): r for tp, r in listed.items()}

    def alter(self, targets: Mapping[Partition, list[int] | None]) -> dict[Partition, str]:
        """AlterPartitionReassignments (None cancels); the partitions' error messages."""
        results = self.admin.alter_partition_reassignments(
            {self.kafka.TopicPartition(t, p): r for (t, p), r in targets.items()})
        return {(tp.topic, tp.partition): error_message(err())
                for tp, err in results.items() if err is not None}

    def alter_configs(self, kind: str, changes: Mapping[str, Mapping[str, str | None]],
                      clearing: bool = False) -> None:
        """IncrementalAlterConfigs (None deletes); a resource the broker refuses is the
        command's failure, as in Kafka. When ``clearing``, a broker that does not know the
        throttle configs at all (an older kafkapy) has none to clear."""
        admin = self.kafka.admin
        resources = [admin.ConfigResource(getattr(admin.ConfigResourceType, kind), name,
                                          configs={k: ("DELETE", None) if v is None
                                                   else ("SET", v) for k, v in ops.items()})
                     for name, ops in changes.items() if ops]
        if not resources:
            return
        response = self.admin.alter_configs(resources, incremental=True,
                                            raise_on_unknown=False)
        for by_name in response.values():
            for error in by_name.values():
                if error == "OK":       # kafka-python's word for error code 0
                    continue
                text = str(error)
                match = re.match(r"\[Error \d+\] (\w+?)(?:Error)?: (.*)$", text, re.S)
                if clearing and match is not None and match.group(2).startswith("Unknown"):
                    continue
                if match is not None:
                    text = f"org.apache.kafka.common.errors.{match.group(1)}Exception: " \
                           f"{match.group(2)}"
                raise CommandFailed(f"Error: {text}")

    # ----------------------------------------------------------------------- actions

    def generate(self) -> None:
        try:
            brokers = [int(b) for b in self.opts.broker_list.split(",")]
        except ValueError as e:
            raise CommandFailed(f"Error: {e}") from None
        dup_brokers = sorted({b for b in brokers if brokers.count(b) > 1})
        if dup_brokers:
            raise CommandFailed(f"Error: Broker list contains duplicate entries: "
                                f"{_java_list(dup_brokers)}")
        topics = parse_topics(_read(self.opts.topics_to_move_json_file))
        dup_topics = sorted({t for t in topics if topics.count(t) > 1})
        if dup_topics:
            raise CommandFailed(f"Error: List of topics to reassign contains duplicate "
                                f"entries: {_java_list(dup_topics)}")
        current = self.assignment(topics)
        live = [b for b in brokers if b in self.broker_ids()]
        proposed = propose(current, live)
        self.print("Current partition replica assignment")
        self.print(format_reassignment_json(current))
        self.print("")
        self.print("Proposed partition reassignment configuration")
        self.print(format_reassignment_json(proposed))
        for kind, assignment in (("current", current), ("proposed", proposed)):
            for (t, p), replicas in sorted(assignment.items()):
                self.emit({"assignment": kind, "topic": t, "partition": p,
                           "replicas": replicas})

    def execute(self) -> None:
        proposed = parse_reassignment(_read(self.opts.reassignment_json_file))
        ongoing = self.ongoing()
        if not self.opts.additional and ongoing:
            raise CommandFailed(EXISTING_REASSIGNMENT)
        known = self.broker_ids()
        for replicas in proposed.values():
            unknown = [b for b in replicas if b not in known]
            if unknown:
                raise CommandFailed(f"Error: Unknown broker id {unknown[0]}")
        current = self.assignment(t for t, _ in proposed)
        missing = sorted(tp for tp in proposed if tp not in current)
        if missing:
            raise CommandFailed("Error: org.apache.kafka.common.errors."
                                "UnknownTopicOrPartitionException: Unable to find partition: "
                                + ", ".join(_tp(tp) for tp in missing))
        rollback = {tp: current[tp] for tp in proposed}
        self.print("Current partition replica assignment")
        self.print("")
        self.print(format_reassignment_json(rollback))
        self.print("")
        self.print("Save this to use as the --reassignment-json-file option during rollback")
        for (t, p), replicas in sorted(rollback.items()):
            self.emit({"assignment": "current", "topic": t, "partition": p,
                       "replicas": replicas})
        if self.opts.throttle >= 0:
            self.print(RUN_VERIFY)
            self.throttle(ongoing, proposed, current)
        errors = self.alter(dict(proposed))
        if errors:
            raise CommandFailed("Error reassigning partition(s):\n" + "\n".join(
                f"{_tp(tp)}: {errors[tp]}" for tp in sorted(errors)))
        started = sorted(proposed)
        self.print(f"Successfully started partition reassignment{'' if len(started) == 1 else 's'}"
                   f" for {','.join(_tp(tp) for tp in started)}")
        for t, p in started:
            self.emit({"started": True, "topic": t, "partition": p,
                       "replicas": proposed[(t, p)]})

    def throttle(self, ongoing: Mapping[Partition, Mapping[str, list[int]]],
                 proposed: Mapping[Partition, list[int]],
                 current: Mapping[Partition, list[int]]) -> None:
        """Kafka's modifyReassignmentThrottle: the moves' sources throttle as leaders, the
        new replicas as followers, and the rate on every broker involved."""
        moves: dict[Partition, tuple[set[int], set[int]]] = {}
        for tp, r in ongoing.items():
            adding = set(r["adding_replicas"])
            moves[tp] = (set(r["replicas"]) - adding, adding)
        for tp, replicas in proposed.items():
            sources = moves[tp][0] if tp in moves else set(current[tp])
            moves[tp] = (sources, set(replicas) - sources)
        leaders: dict[str, set[str]] = {}
        followers: dict[str, set[str]] = {}
        for (topic, partition), (sources, destinations) in moves.items():
            leaders.setdefault(topic, set()).update(f"{partition}:{b}" for b in sources)
            followers.setdefault(topic, set()).update(
                f"{partition}:{b}" for b in destinations - sources)
        self.alter_configs("TOPIC", {
            topic: {TOPIC_THROTTLES[0]: ",".join(sorted(leaders[topic])),
                    TOPIC_THROTTLES[1]: ",".join(sorted(followers.get(topic, set())))}
            for topic in leaders})
        brokers = sorted({b for s, d in moves.values() for b in s | d})
        rate = str(self.opts.throttle)
        self.alter_configs("BROKER", {str(b): {BROKER_THROTTLES[0]: rate,
                                               BROKER_THROTTLES[1]: rate} for b in brokers})
        self.print(f"The inter-broker throttle limit was set to {self.opts.throttle} B/s")

    def verify(self) -> None:
        targets = parse_reassignment(_read(self.opts.reassignment_json_file))
        ongoing = self.ongoing()
        # a partition that does not exist has no replicas (Kafka's verify says so, no error)
        settled = self.assignment((t for t, p in targets if (t, p) not in ongoing),
                                  missing_ok=True)
        self.print("Status of partition reassignment:")
        for tp in sorted(targets):
            target = targets[tp]
            if tp in ongoing:
                status, line = "in_progress", f"Reassignment of partition {_tp(tp)} is still " \
                                              f"in progress."
                replicas = ongoing[tp]["replicas"]
            else:
                replicas = settled.get(tp, [])
                if replicas == target:
                    status, line = "completed", f"Reassignment of partition {_tp(tp)} is " \
                                                f"completed."
                else:
                    status = "not_active"
                    line = (f"There is no active reassignment of partition {_tp(tp)}, but "
                            f"replica set is {','.join(map(str, replicas))} rather than "
                            f"{','.join(map(str, target))}.")
            self.print(line)
            self.emit({"topic": tp[0], "partition": tp[1], "status": status,
                       "replicas": replicas, "target": target})
        if not ongoing and not self.opts.preserve_throttles:
            self.clear_throttles(targets)

    def clear_throttles(self, targets: Mapping[Partition, list[int]]) -> None:
        brokers = self.broker_ids() | {b for rs in targets.values() for b in rs}
        self.print(f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'}"
                   f" {','.join(map(str, sorted(brokers)))}")
        self.alter_configs("BROKER", {str(b): dict.fromkeys(BROKER_THROTTLES)
                                      for b in brokers}, clearing=True)
        topics = sorted({t for t, _ in targets})
        self.print(f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} "
                   f"{','.join(topics)}")
        self.alter_configs("TOPIC", {t: dict.fromkeys(TOPIC_THROTTLES) for t in topics},
                           clearing=True)

    def list(self) -> None:
        ongoing = self.ongoing()
        if not ongoing:
            self.print("No partition reassignments found.")
            return
        self.print("Current partition reassignments:")
        for tp in sorted(ongoing):
            r = ongoing[tp]
            line = f"{_tp(tp)}: replicas: {','.join(map(str, r['replicas']))}."
            if r["adding_replicas"]:
                line += f" adding: {','.join(map(str, r['adding_replicas']))}."
            if r["removing_replicas"]:
                line += f" removing: {','.join(map(str, r['removing_replicas']))}."
            self.print(line)
            self.emit({"topic": tp[0], "partition": tp[1], **r})

    def cancel(self) -> None:
        targets = parse_reassignment(_read(self.opts.reassignment_json_file))
        # a reassignment is active while it adds or removes replicas (Kafka 3.x's Scala tool;
        # the later Java port's test reads `addingReplicas().isEmpty() || ...`)
        active = sorted(tp for tp, r in self.ongoing(targets).items()
                        if r["adding_replicas"] or r["removing_replicas"])
        if active:
            errors = self.alter(dict.fromkeys(active))
            if errors:
                raise CommandFailed(
                    f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} "
                    f"for:\n" + "\n".join(f"{_tp(tp)}: {errors[tp]}" for tp in sorted(errors)))
            self.print(f"Successfully cancelled partition reassignment"
                       f"{'' if len(active) == 1 else 's'} for: "
                       f"{','.join(_tp(tp) for tp in active)}")
        else:
            self.print("None of the specified partition reassignments are active.")
        for t, p in active:
            self.emit({"cancelled": True, "topic": t, "partition": p})
        if not self.json:
            # Kafka prints this one without a line break
            self.out.write("None of the specified partition moves are active.")
        if not self.opts.preserve_throttles:
            self.clear_throttles(targets)


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        action = validate(opts)
    except UsageError as e:
        err.write(f"{e}\n")
        return 1
    reassigner = None
    try:
        reassigner = Reassigner(opts, out)
        getattr(reassigner, action)()
    except ClientMissing as e:
        err.write(f"{e}\n")
        return 1
    except CommandFailed as e:
        out.write(f"{e}\n")
        return 1
    except OSError as e:        # an unreadable --command-config
        out.write(f"Error: {opts.command_config} ({e.strerror or e})\n")
        return 1
    except Exception as e:
        if type(e).__module__.startswith("kafka."):
            out.write(f"Error: {error_message(e)}\n")
            return 1
        raise
    finally:
        if reassigner is not None:
            reassigner.close()
    return 0
