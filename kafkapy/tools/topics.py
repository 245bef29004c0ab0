"""``kafkapy topics``: Kafka's ``kafka-topics.sh`` (``org.apache.kafka.tools.TopicCommand`` of
Kafka 3.7, the first Java version of the tool) as a client of a running cluster.

What it owns: the five actions of Kafka's tool, with Kafka's flags, checks, messages and exit
codes, over confluent-kafka's AdminClient (the ``[tools]`` extra):

- ``--create`` (``--partitions``, ``--replication-factor``, ``--replica-assignment``,
  ``--config k=v`` repeated, ``--if-not-exists``): ``Created topic <t>.``;
- ``--alter --partitions n`` (``--replica-assignment`` for the new partitions, ``--if-exists``):
  CreatePartitions; ``--config`` is refused with Kafka 3.x's message pointing to
  ``kafka-configs``; silent on success, as Kafka's;
- ``--delete`` (``--if-exists``): every topic the ``--topic`` regular expression matches;
  silent on success, as Kafka's;
- ``--describe``: Kafka's ``Topic: ...\\tTopicId: ...\\tPartitionCount: ...`` line per topic
  and ``\\tTopic: ...\\tPartition: ...\\tLeader: ...\\tReplicas: ...\\tIsr: ...`` per partition,
  the report filters (``--under-replicated-partitions``, ``--unavailable-partitions``,
  ``--under-min-isr-partitions``, ``--at-min-isr-partitions``, ``--topics-with-overrides``)
  and ``--exclude-internal``;
- ``--list``: the names, sorted, internal topics included unless ``--exclude-internal``.

``--topic`` is Kafka's topic filter (``IncludeList``: a regular expression matched against the
whole name, ``,`` meaning ``|``) for every action but ``--create``. ``--output json`` (kafkapy's
addition) prints one JSON object per line instead of Kafka's lines.

Errors as Kafka's tool reports them: a bad combination of flags is a message on stderr and exit
code 1; a failure while running (the broker refusing, a topic that does not exist) is
``Error while executing topic command : <message>`` on stdout and exit code 1.

The AdminClient helpers here (``admin_client``, the ``--command-config`` properties file, the
missing-extra message) are shared with ``kafkapy configs``. confluent_kafka is imported only when
a command runs, so that ``kafkapy --help`` and the offline tools work without the extra.
"""

from __future__ import annotations

import argparse
import base64
import importlib
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

import attrs

from kafkapy.tools import command_config as command_config_module
from kafkapy.tools.command_config import install_hint

__all__ = ["ToolError", "UsageError", "add_parser", "admin_client", "load_properties",
           "missing_extra", "run"]

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
# Kafka's `Short.MAX_VALUE`: the largest replication factor a CreateTopics request carries.
MAX_REPLICATION_FACTOR = 32767
# Bounds every AdminClient call (Kafka's tool waits on its futures without a bound; a tool that
# hangs forever on a dead cluster helps nobody).
REQUEST_TIMEOUT_S = 30.0

KAFKA_CONFIGS_CAN_ALTER = " (To alter topic configurations, the kafka-configs tool can be used.)"
ACTIONS = ("create", "list", "alter", "describe", "delete")
# Kafka's allTopicLevelOpts, in the order the checks below report them.
TOPIC_LEVEL = ("alter", "create", "describe", "list", "delete")
REPORTS = ("under_replicated_partitions", "under_min_isr_partitions", "at_min_isr_partitions",
           "unavailable_partitions")


class ToolError(Exception):
    """A failure while the command runs: Kafka's tool prints
    ``Error while executing topic command : <message>`` on stdout and exits 1."""


class UsageError(Exception):
    """A bad command line: the message on stderr, exit code 1 (Kafka's
    ``CommandLineUtils.printUsageAndExit`` / an ``IllegalArgumentException`` before the
    command runs)."""


# ============================================================== the AdminClient (shared)

def confluent(module: str) -> Any:
    """A module of confluent-kafka, imported when a command runs (its names are used untyped:
    the package re-exports them implicitly, which strict mypy does not follow)."""
    return importlib.import_module(module)


def missing_extra(tool: str, err: TextIO) -> int:
    """The one line a network tool prints without confluent-kafka; the exit code."""
    print(install_hint(tool), file=err)
    return 1


def load_properties(path: str) -> dict[str, str]:
    """``command_config.load_properties``; UsageError when the file cannot be read."""
    try:
        return command_config_module.load_properties(path)
    except OSError as e:
        raise UsageError(f"{path} ({e.strerror or e})") from e


def admin_client(bootstrap: str, command_config: str | None) -> Any:
    """An AdminClient for ``--bootstrap-server`` with the ``--command-config`` properties
    (security.protocol, sasl.*, ssl.*: librdkafka's names, most of them Kafka's)."""
    try:
        config = command_config_module.client_config(bootstrap, command_config)
    except OSError as e:
        raise UsageError(f"{command_config} ({e.strerror or e})") from e
    # librdkafka's warnings and errors on stderr, not its informational lines (a closed idle
    # connection, the background queue purged at exit): Kafka's tools log WARN and above.
    config.setdefault("log_level", "4")
    try:
        return confluent("confluent_kafka.admin").AdminClient(config)
    except (confluent("confluent_kafka").KafkaException, ValueError, TypeError) as e:
        raise UsageError(f"Invalid --command-config: {_message(e)}") from e


def _message(exc: BaseException) -> str:
    """The broker's (or librdkafka's) message of a failed AdminClient call, as Kafka's tool
    prints ``e.getMessage()``."""
    error: Any = exc.args[0] if exc.args else None
    return str(error.str()) if hasattr(error, "str") else str(exc)


def result(future: Any) -> Any:
    """A future's value; a KafkaException becomes a ToolError with the broker's message."""
    try:
        return future.result(REQUEST_TIMEOUT_S + 5)
    except confluent("confluent_kafka").KafkaException as e:
        raise ToolError(_message(e)) from e
    except TimeoutError as e:
        raise ToolError(f"Timed out waiting for the cluster after {REQUEST_TIMEOUT_S:.0f}s") \
            from e


def error_code(exc: BaseException) -> str | None:
    """The Kafka error name (``TOPIC_ALREADY_EXISTS``) behind a ToolError, if any."""
    cause = exc.__cause__
    error: Any = cause.args[0] if cause is not None and cause.args else None
    return str(error.name()) if hasattr(error, "name") else None


def kafka_uuid(uuid: Any) -> str:
    """A topic id as Kafka prints it (``Uuid.toString``: URL-safe base64 of the 16 bytes,
    unpadded); confluent-kafka's own ``str`` uses the standard alphabet."""
    raw = b"".join(bits.to_bytes(8, "big", signed=True)
                   for bits in (uuid.get_most_significant_bits(),
                                uuid.get_least_significant_bits()))
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# ====================================================================== command line

def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "topics", help="Kafka's kafka-topics.sh: create, delete, describe, or change a topic",
        description="This tool helps to create, delete, describe, or change a topic.")
    p.add_argument("--bootstrap-server", metavar="server to connect to",
                   help="REQUIRED: The Kafka server to connect to.")
    p.add_argument("--command-config", metavar="command config property file",
                   help="Property file containing configs to be passed to Admin Client.")
    p.add_argument("--list", action="store_true", help="List all available topics.")
    p.add_argument("--create", action="store_true", help="Create a new topic.")
    p.add_argument("--delete", action="store_true", help="Delete a topic.")
    p.add_argument("--alter", action="store_true",
                   help="Alter the number of partitions and replica assignment."
                        + KAFKA_CONFIGS_CAN_ALTER)
    p.add_argument("--describe", action="store_true",
                   help="List details for the given topics.")
    p.add_argument("--topic", metavar="topic",
                   help="The topic to create, alter, describe or delete. It also accepts a "
                        "regular expression, except for --create option. Put topic name in "
                        "double quotes and use the '\\' prefix to escape regular expression "
                        "symbols; e.g. \"test\\.topic\".")
    p.add_argument("--config", action="append", metavar="name=value",
                   help="A topic configuration override for the topic being created. It is "
                        "supported only in combination with --create." + KAFKA_CONFIGS_CAN_ALTER)
    p.add_argument("--partitions", type=int, metavar="# of partitions",
                   help="The number of partitions for the topic being created or altered. If "
                        "not supplied with --create, the topic uses the cluster default.")
    p.add_argument("--replication-factor", type=int, metavar="replication factor",
                   help="The replication factor for each partition in the topic being created. "
                        "If not supplied, the topic uses the cluster default.")
    p.add_argument("--replica-assignment",
                   metavar="broker_id_for_part1_replica1 : broker_id_for_part1_replica2 , "
                           "broker_id_for_part2_replica1 : broker_id_for_part2_replica2 , ...",
                   help="A list of manual partition-to-broker assignments for the topic being "
                        "created or altered.")
    p.add_argument("--under-replicated-partitions", action="store_true",
                   help="If set when describing topics, only show under-replicated partitions.")
    p.add_argument("--unavailable-partitions", action="store_true",
                   help="If set when describing topics, only show partitions whose leader is "
                        "not available.")
    p.add_argument("--under-min-isr-partitions", action="store_true",
                   help="If set when describing topics, only show partitions whose isr count "
                        "is less than the configured minimum.")
    p.add_argument("--at-min-isr-partitions", action="store_true",
                   help="If set when describing topics, only show partitions whose isr count "
                        "is equal to the configured minimum.")
    p.add_argument("--topics-with-overrides", action="store_true",
                   help="If set when describing topics, only show topics that have overridden "
                        "configs.")
    p.add_argument("--if-exists", action="store_true",
                   help="If set when altering or deleting or describing topics, the action "
                        "will only execute if the topic exists.")
    p.add_argument("--if-not-exists", action="store_true",
                   help="If set when creating topics, the create request will not fail if the "
                        "topic already exists, but the request will still be sent.")
    p.add_argument("--exclude-internal", action="store_true",
                   help="Exclude internal topics when listing or describing topics. By "
                        "default, the internal topics are included.")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="kafkapy's addition: 'json' prints one JSON object per line.")
    p.set_defaults(run=run)


def _flag(dest: str) -> str:
    """Kafka's name of an option in its messages: ``[under-replicated-partitions]``."""
    return f"[{dest.replace('_', '-')}]"


def _given(opts: argparse.Namespace, dest: str) -> bool:
    value = getattr(opts, dest)
    return value is not None and value is not False


def check_args(opts: argparse.Namespace) -> None:
    """Kafka's TopicCommandOptions.checkArgs: the same checks in the same order, the same
    messages (raised as UsageError)."""
    if sum(1 for a in ACTIONS if getattr(opts, a)) != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, "
                         "--create, --alter or --delete")
    if opts.bootstrap_server is None:
        raise UsageError("--bootstrap-server must be specified")
    if opts.describe and opts.if_exists and opts.topic is None:
        raise UsageError("--topic or --topic-id is required to describe a topic")
    if not opts.list and not opts.describe and opts.topic is None:
        raise UsageError('Missing required argument "[topic]"')
    if opts.alter:
        if opts.config is not None:
            raise UsageError('Option combination "[bootstrap-server],[config]" can\'t be used '
                             'with option "[alter]"' + KAFKA_CONFIGS_CAN_ALTER)
        if opts.partitions is None:
            raise UsageError('Missing required argument "[partitions]"')

    def invalid(used: str, allowed: Sequence[str], extra: Sequence[str] = ()) -> None:
        if not _given(opts, used):
            return
        for other in [*(a for a in TOPIC_LEVEL if a not in allowed), *extra]:
            if _given(opts, other):
                raise UsageError(f'Option "{_flag(used)}" can\'t be used with option '
                                 f'"{_flag(other)}"')

    invalid("config", ("alter", "create"))
    invalid("partitions", ("alter", "create"))
    invalid("replication_factor", ("create",))
    invalid("replica_assignment", ("alter", "create"))
    if opts.create:
        invalid("replica_assignment", TOPIC_LEVEL, ("partitions", "replication_factor"))
    for report in REPORTS:
        invalid(report, ("describe",), ("topics_with_overrides",))
    invalid("topics_with_overrides", ("describe",), REPORTS)
    invalid("if_exists", ("alter", "delete", "describe"))
    invalid("if_not_exists", ("create",))
    invalid("exclude_internal", ("list", "describe"))


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """Kafka's ``0:1,1:2,...``: the replicas of partition 0, then 1, ... (ToolError on
    duplicates or on partitions with different replication factors, as Kafka's)."""
    assignment: dict[int, list[int]] = {}
    for partition, replicas_text in enumerate(text.split(",")):
        try:
            replicas = [int(r.strip()) for r in replicas_text.split(":")]
        except ValueError as e:
            raise ToolError(f'For input string: "{replicas_text.strip()}"') from e
        duplicates = sorted({r for r in replicas if replicas.count(r) > 1})
        if duplicates:
            raise ToolError("Partition replica lists may not contain duplicate entries: "
                            + ",".join(map(str, duplicates)))
        assignment[partition] = replicas
        if len(replicas) != len(assignment[0]):
            raise ToolError(f"Partition {partition} has different replication factor: "
                            f"[{', '.join(map(str, replicas))}]")
    return assignment


def parse_topic_configs(pairs: Sequence[str] | None) -> dict[str, str]:
    """``--config k=v`` values, split as Kafka's tool splits them (``\\s*=\\s*``, Java's
    split dropping trailing empty parts: ``k=`` and ``k=a=b`` are refused)."""
    configs: dict[str, str] = {}
    for pair in pairs or ():
        parts = re.split(r"\s*=\s*", pair)
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) != 2:
            raise ToolError('requirement failed: Invalid topic config: all configs to be added '
                            'must be in the format "key=val".')
        configs[parts[0].strip()] = parts[1].strip()
    return configs


@attrs.frozen
class TopicFilter:
    """Kafka's ``TopicFilter.IncludeList``: the regular expression (``,`` for ``|``, spaces
    and surrounding quotes dropped) must match the whole name."""

    pattern: re.Pattern[str]

    @classmethod
    def of(cls, raw: str) -> TopicFilter:
        regex = raw.strip().replace(",", "|").replace(" ", "")
        regex = re.sub(r"^[\"']+", "", regex)
        regex = re.sub(r"[\"']+$", "", regex)
        try:
            return cls(re.compile(regex))
        except re.error as e:
            raise ToolError(f"{regex} is an invalid regex.") from e

    def allows(self, topic: str, exclude_internal: bool) -> bool:
        return (self.pattern.fullmatch(topic) is not None
                and not (exclude_internal and topic in INTERNAL_TOPICS))


# ========================================================================= the service

@attrs.define
class Output:
    json: bool
    out: TextIO

    def line(self, text: str) -> None:
        print(text, file=self.out)

    def record(self, kind: str, **fields: object) -> None:
        print(json.dumps({"type": kind, **fields}), file=self.out)


@attrs.frozen
class PartitionState:
    """One partition of a described topic (``leader`` None when it has none)."""

    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@attrs.frozen
class TopicState:
    name: str
    topic_id: str
    partitions: tuple[PartitionState, ...]
    configs: tuple[tuple[str, str | None, bool], ...]   # (name, value, is_default)

    @property
    def overrides(self) -> list[tuple[str, str | None]]:
        return [(n, v) for n, v, is_default in self.configs if not is_default]

    def config_value(self, name: str) -> str | None:
        return next((v for n, v, _ in self.configs if n == name), None)


class TopicService:
    """Kafka's TopicCommand.TopicService: the actions over one AdminClient."""

    def __init__(self, admin: Any, output: Output) -> None:
        self.admin = admin
        self.output = output

    def topics(self, topic: str | None, exclude_internal: bool) -> list[str]:
        """The sorted names ``--topic`` selects (all without it), Kafka's getTopics."""
        try:
            metadata = self.admin.list_topics(timeout=REQUEST_TIMEOUT_S)
        except Exception as e:  # KafkaException: librdkafka's timeout or transport error
            raise ToolError(_message(e)) from e
        names = sorted(metadata.topics)
        if topic is not None:
            selected = TopicFilter.of(topic)
            return [n for n in names if selected.allows(n, exclude_internal)]
        return [n for n in names if not (exclude_internal and n in INTERNAL_TOPICS)]

    @staticmethod
    def ensure_exists(found: Sequence[str], topic: str | None, required: bool) -> None:
        if topic and required and not found:
            # Kafka 3.7-3.8 print Optional[...] here (a bug of the Java port); 3.9 the name.
            raise ToolError(f"Topic '{topic}' does not exist as expected")

    # ------------------------------------------------------------------------ create

    def do_create(self, opts: argparse.Namespace) -> None:
        NewTopic = confluent("confluent_kafka.admin").NewTopic

        name: str = opts.topic
        assignment = (parse_replica_assignment(opts.replica_assignment)
                      if opts.replica_assignment else {})
        configs = parse_topic_configs(opts.config)
        if "." in name or "_" in name:
            self.output.line("WARNING: Due to limitations in metric names, topics with a "
                             "period ('.') or underscore ('_') could collide. To avoid issues "
                             "it is best to use either, but not both.")
        factor = opts.replication_factor
        if factor is not None and not 1 <= factor <= MAX_REPLICATION_FACTOR:
            raise ToolError("The replication factor must be between 1 and "
                            f"{MAX_REPLICATION_FACTOR} inclusive")
        if opts.partitions is not None and opts.partitions < 1:
            raise ToolError("The partitions must be greater than 0")
        if assignment:
            # confluent-kafka wants the count beside an assignment (Kafka's NewTopic does not).
            new = NewTopic(name, num_partitions=len(assignment),
                           replica_assignment=[assignment[p] for p in sorted(assignment)],
                           config=configs)
        else:
            new = NewTopic(name, num_partitions=opts.partitions or -1,
                           replication_factor=factor or -1, config=configs)
        futures = self.admin.create_topics([new], request_timeout=REQUEST_TIMEOUT_S)
        try:
            result(futures[name])
        except ToolError as e:
            if opts.if_not_exists and error_code(e) == "TOPIC_ALREADY_EXISTS":
                return
            raise
        if self.output.json:
            self.output.record("created", topic=name)
        else:
            self.output.line(f"Created topic {name}.")

    # ---------------------------------------------------------------- list and delete

    def do_list(self, opts: argparse.Namespace) -> None:
        names = self.topics(opts.topic, opts.exclude_internal)
        if self.output.json:
            for name in names:
                self.output.record("topic", topic=name)
        else:
            # Kafka prints the names joined by newlines with println: an empty line for none.
            self.output.line("\n".join(names))

    def do_delete(self, opts: argparse.Namespace) -> None:
        names = self.topics(opts.topic, opts.exclude_internal)
        self.ensure_exists(names, opts.topic, not opts.if_exists)
        if not names:
            return
        futures = self.admin.delete_topics(names, request_timeout=REQUEST_TIMEOUT_S)
        for name in names:
            result(futures[name])
            if self.output.json:
                self.output.record("deleted", topic=name)

    # ------------------------------------------------------------------------- alter

    def do_alter(self, opts: argparse.Namespace) -> None:
        NewPartitions = confluent("confluent_kafka.admin").NewPartitions

        names = self.topics(opts.topic, opts.exclude_internal)
        self.ensure_exists(names, opts.topic, not opts.if_exists)
        if not names:
            return
        assignment = (parse_replica_assignment(opts.replica_assignment)
                      if opts.replica_assignment else {})
        requests = []
        for name in names:
            if assignment:
                # Only the new partitions' replicas: those after the current count.
                current = len(self.describe_states([name])[0].partitions)
                extra = [assignment[p] for p in sorted(assignment) if p >= current]
                requests.append(NewPartitions(name, opts.partitions, replica_assignment=extra))
            else:
                requests.append(NewPartitions(name, opts.partitions))
        futures = self.admin.create_partitions(requests, request_timeout=REQUEST_TIMEOUT_S)
        for name in names:
            result(futures[name])
            if self.output.json:
                self.output.record("altered", topic=name, partitionCount=opts.partitions)

    # ---------------------------------------------------------------------- describe

    def describe_states(self, names: Sequence[str]) -> list[TopicState]:
        TopicCollection = confluent("confluent_kafka").TopicCollection
        admin = confluent("confluent_kafka.admin")
        ConfigResource, ResourceType = admin.ConfigResource, admin.ResourceType

        described = self.admin.describe_topics(TopicCollection(list(names)),
                                               request_timeout=REQUEST_TIMEOUT_S)
        resources = {name: ConfigResource(ResourceType.TOPIC, name) for name in names}
        config_futures = self.admin.describe_configs(list(resources.values()),
                                                     request_timeout=REQUEST_TIMEOUT_S)
        by_resource = dict(config_futures.items())
        states = []
        for name in names:
            description = result(described[name])
            entries = result(by_resource[resources[name]])
            partitions = tuple(sorted(
                (PartitionState(p.id, p.leader.id if p.leader is not None else None,
                                tuple(n.id for n in p.replicas), tuple(n.id for n in p.isr))
                 for p in description.partitions),
                key=lambda p: p.partition))
            configs = tuple((e.name, e.value, bool(e.is_default)) for e in entries.values())
            states.append(TopicState(name, kafka_uuid(description.topic_id), partitions,
                                     configs))
        return states

    def live_brokers(self) -> set[int]:
        cluster = result(self.admin.describe_cluster(request_timeout=REQUEST_TIMEOUT_S))
        return {node.id for node in cluster.nodes}

    def do_describe(self, opts: argparse.Namespace) -> None:
        names = self.topics(opts.topic, opts.exclude_internal)
        self.ensure_exists(names, opts.topic, not opts.if_exists)
        if not names:
            return
        states = self.describe_states(names)
        live = self.live_brokers()
        reports = [r for r in REPORTS if getattr(opts, r)]
        describe_configs = not reports
        describe_partitions = not opts.topics_with_overrides
        for state in states:
            if describe_configs and state.partitions and (
                    not opts.topics_with_overrides or state.overrides):
                self._print_topic(state)
            if not describe_partitions:
                continue
            min_isr = int(state.config_value("min.insync.replicas") or 1)
            for partition in state.partitions:
                if describe_configs or any(
                        _REPORT_TESTS[r](partition, min_isr, live) for r in reports):
                    self._print_partition(state.name, partition)

    def _print_topic(self, state: TopicState) -> None:
        replication_factor = len(state.partitions[0].replicas)
        if self.output.json:
            self.output.record("topic", topic=state.name, topicId=state.topic_id,
                               partitionCount=len(state.partitions),
                               replicationFactor=replication_factor,
                               configs=dict(state.overrides))
            return
        configs = ",".join(f"{n}={'null' if v is None else v}" for n, v in state.overrides)
        topic_id = (f"\tTopicId: {state.topic_id}"
                    if state.topic_id != "AAAAAAAAAAAAAAAAAAAAAA" else "")
        self.output.line(f"Topic: {state.name}{topic_id}\tPartitionCount: "
                         f"{len(state.partitions)}\tReplicationFactor: {replication_factor}"
                         f"\tConfigs: {configs}")

    def _print_partition(self, topic: str, p: PartitionState) -> None:
        if self.output.json:
            self.output.record("partition", topic=topic, partition=p.partition,
                               leader=p.leader, replicas=list(p.replicas), isr=list(p.isr))
            return
        leader = "none" if p.leader is None else str(p.leader)
        self.output.line(f"\tTopic: {topic}\tPartition: {p.partition}\tLeader: {leader}"
                         f"\tReplicas: {','.join(map(str, p.replicas))}"
                         f"\tIsr: {','.join(map(str, p.isr))}")


# Kafka's PartitionDescription predicates, by report flag.
_REPORT_TESTS: Mapping[str, Callable[[PartitionState, int, set[int]], bool]] = {
    "under_replicated_partitions": lambda p, _min_isr, _live: len(p.replicas) > len(p.isr),
    "unavailable_partitions": lambda p, _min_isr, live: p.leader is None or p.leader not in live,
    "under_min_isr_partitions": lambda p, min_isr, _live: p.leader is None or len(p.isr) < min_isr,
    "at_min_isr_partitions": lambda p, min_isr, _live: len(p.isr) == min_isr,
}


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the tool; the exit code (0, or 1 after an error)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        check_args(opts)
        try:
            import confluent_kafka  # noqa: F401  (the [tools] extra)
        except ImportError:
            return missing_extra("topics", err)
        service = TopicService(admin_client(opts.bootstrap_server, opts.command_config),
                               Output(opts.output == "json", out))
        action = next(a for a in ACTIONS if getattr(opts, a))
        getattr(service, f"do_{action}")(opts)
    except UsageError as e:
        print(e, file=err)
        return 1
    except (ToolError, ValueError, TypeError) as e:
        # ValueError/TypeError: confluent-kafka refusing an argument before sending anything;
        # Kafka's tool reports every failure of a running command this way.
        print(f"Error while executing topic command : {e}", file=out)
        return 1
    return 0
