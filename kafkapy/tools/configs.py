"""``kafkapy configs``: Kafka's ``kafka-configs.sh`` (``kafka.admin.ConfigCommand`` of Kafka
3.7) for topics and brokers, over confluent-kafka's AdminClient, and for users, clients and
ips (``configs_quotas``).

What it owns: Kafka's command line (``--entity-type``/``--entity-name``/``--entity-default``
and the shortcuts ``--topic``, ``--broker``, ``--user``, ``--client``, ...; the same checks and
messages), and two actions:

- ``--describe`` (``--all``): per entity ``Dynamic configs for topic <t> are:`` (``All`` with
  ``--all``), then one ``  k=v sensitive=false synonyms={SOURCE:k=v, ...}`` line per config,
  sorted by name; without ``--all`` only the configs set at the entity's own level
  (DYNAMIC_TOPIC_CONFIG for a topic, DYNAMIC_BROKER_CONFIG for a broker);
- ``--alter`` with ``--add-config k=v,k2=[a,b]`` (Kafka's bracket syntax for values holding
  commas), ``--add-config-file`` and ``--delete-config k,k2``: one IncrementalAlterConfigs
  request (SET and DELETE operations); a key to delete that is not set is refused before
  anything is sent (``Invalid config(s): ...``); ``Completed updating config for topic <t>.``

``users``, ``clients`` and ``ips`` (client quotas, SCRAM credentials) are
:mod:`kafkapy.tools.configs_quotas`'s; ``broker-loggers`` and ``client-metrics`` are refused.

Two limits of confluent-kafka shape what is printed (docs/tools.md says so):

- it returns a config's synonyms keyed by name, so synonyms sharing a name (a broker's
  ``message.max.bytes`` at DYNAMIC_BROKER_CONFIG and DEFAULT_CONFIG) collapse to the last one;
  the entry's own value and source, which Kafka always lists first, are put back in front;
  an intermediate layer with the same name is lost;
- it refuses a broker resource with an empty name, Kafka's cluster-wide broker default: so
  ``--entity-default`` of brokers is refused, and describing every broker prints each broker
  but not Kafka's ``Default configs for brokers in the cluster are:`` section.

``--output json`` (kafkapy's addition) prints one JSON object per entity instead.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import attrs

from kafkapy.tools.configs_quotas import QuotaFailure, QuotaService
from kafkapy.tools.kafka_python_admin import (
    ClientMissing,
    import_kafka_python,
    kafka_python_admin,
)
from kafkapy.tools.kafka_python_admin import error_message as kafka_python_error
from kafkapy.tools.topics import (
    REQUEST_TIMEOUT_S,
    ToolError,
    UsageError,
    admin_client,
    confluent,
    error_code,
    load_properties,
    missing_extra,
    result,
)

__all__ = ["add_parser", "parse_configs_to_add", "run"]

TOPICS, CLIENTS, USERS, BROKERS, IPS = "topics", "clients", "users", "brokers", "ips"
BROKER_LOGGERS, CLIENT_METRICS = "broker-loggers", "client-metrics"
# Kafka's BrokerSupportedConfigTypes, in its order (for the "must be one of" message).
ENTITY_TYPES = (TOPICS, CLIENTS, USERS, BROKERS, IPS, BROKER_LOGGERS, CLIENT_METRICS)
QUOTA_TYPES = (CLIENTS, USERS, IPS)
# The entity-specific flags: (dest, entity type), Kafka's entityFlags / entityDefaultsFlags.
ENTITY_FLAGS = (("topic", TOPICS), ("client", CLIENTS), ("user", USERS), ("broker", BROKERS),
                ("broker_logger", BROKER_LOGGERS), ("ip", IPS))
DEFAULT_FLAGS = (("client_defaults", CLIENTS), ("user_defaults", USERS),
                 ("broker_defaults", BROKERS), ("ip_defaults", IPS))
# Kafka's ConfigEntry.ConfigSource names, by confluent-kafka's ConfigSource member name.
SOURCE_NAMES = {"UNKNOWN_CONFIG": "UNKNOWN"}
# Kafka's exception classes for the error codes a config change meets (the second line Kafka's
# tool prints for a failure is the exception as Java prints it).
EXCEPTIONS = {"INVALID_CONFIG": "InvalidConfigurationException",
              "INVALID_REQUEST": "InvalidRequestException",
              "UNKNOWN_TOPIC_OR_PART": "UnknownTopicOrPartitionException",
              "POLICY_VIOLATION": "PolicyViolationException",
              "TOPIC_AUTHORIZATION_FAILED": "TopicAuthorizationException",
              "CLUSTER_AUTHORIZATION_FAILED": "ClusterAuthorizationException"}
# A comma or `=` outside brackets: Kafka's lookahead `(?=[^\]]*(?:\[|$))`.
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"
_KEY = re.compile(r"[a-zA-Z0-9._-]*")


class CommandFailure(Exception):
    """A failure while the command runs, which Kafka's tool reports as
    ``Error while executing config command with args '<args>'`` and the exception."""


# ====================================================================== command line

class _EntityName(argparse.Action):
    """``--entity-name x`` and ``--entity-default`` in one list, in command-line order (Kafka
    pairs them with the ``--entity-type`` values by position; the default is "")."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        names = list(getattr(namespace, self.dest) or [])
        names.append("" if option_string == "--entity-default" else values)
        setattr(namespace, self.dest, names)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "configs", help="Kafka's kafka-configs.sh: describe and alter topic and broker configs",
        description="This tool helps to manipulate and describe entity config for a topic, "
                    "client, user, broker, ip or client-metrics")
    p.add_argument("--bootstrap-server", metavar="server to connect to",
                   help="The Kafka servers to connect to.")
    p.add_argument("--command-config", metavar="command config property file",
                   help="Property file containing configs to be passed to Admin Client.")
    p.add_argument("--alter", action="store_true", help="Alter the configuration for the entity.")
    p.add_argument("--describe", action="store_true",
                   help="List configs for the given entity.")
    p.add_argument("--all", action="store_true",
                   help="List all configs for the given topic or broker entity (includes "
                        "static configuration when the entity type is brokers)")
    p.add_argument("--entity-type", action="append", metavar="entity type",
                   help="Type of entity (topics/clients/users/brokers/broker-loggers/ips/"
                        "client-metrics)")
    p.add_argument("--entity-name", dest="entity_names", action=_EntityName,
                   metavar="entity name",
                   help="Name of entity (topic name/client id/user principal name/broker id)")
    p.add_argument("--entity-default", dest="entity_names", action=_EntityName, nargs=0,
                   help="Default entity name for clients/users/brokers/ips (applies to "
                        "corresponding entity type in command line)")
    p.add_argument("--add-config", metavar="k1=v1,k2=[v1,v2,v2],k3=v3",
                   help="Key Value pairs of configs to add. Square brackets can be used to "
                        "group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.")
    p.add_argument("--add-config-file", metavar="file",
                   help="Path to a properties file with configs to add. See add-config for a "
                        "list of valid configurations.")
    p.add_argument("--delete-config", action="append", metavar="k1,k2",
                   help="config keys to remove 'k1,k2'")
    p.add_argument("--force", action="store_true", help="Suppress console prompts")
    p.add_argument("--topic", help="The topic's name.")
    p.add_argument("--client", help="The client's ID.")
    p.add_argument("--client-defaults", action="store_true",
                   help="The config defaults for all clients.")
    p.add_argument("--user", help="The user's principal name.")
    p.add_argument("--user-defaults", action="store_true",
                   help="The config defaults for all users.")
    p.add_argument("--broker", help="The broker's ID.")
    p.add_argument("--broker-defaults", action="store_true",
                   help="The config defaults for all brokers.")
    p.add_argument("--broker-logger", help="The broker's ID for its logger config.")
    p.add_argument("--ip", help="The IP address.")
    p.add_argument("--ip-defaults", action="store_true",
                   help="The config defaults for all IPs.")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="kafkapy's addition: 'json' prints one JSON object per entity.")
    p.set_defaults(run=run)


def entity_types(opts: argparse.Namespace) -> list[str]:
    return [*(opts.entity_type or []),
            *(t for dest, t in (*ENTITY_FLAGS, *DEFAULT_FLAGS) if getattr(opts, dest))]


def entity_names(opts: argparse.Namespace) -> list[str]:
    return [*(opts.entity_names or []),
            *(getattr(opts, dest) for dest, _ in ENTITY_FLAGS if getattr(opts, dest)),
            *("" for dest, _ in DEFAULT_FLAGS if getattr(opts, dest))]


def check_args(opts: argparse.Namespace) -> None:
    """Kafka's ConfigCommandOptions.checkArgs (the checks that apply without --zookeeper),
    raising UsageError with Kafka's messages."""
    if (opts.alter, opts.describe).count(True) != 1:
        raise UsageError("Command must include exactly one action: --describe, --alter")
    if opts.describe:
        for dest in ("add_config", "delete_config"):
            if getattr(opts, dest) is not None:
                raise UsageError(f'Option "[describe]" can\'t be used with option '
                                 f'"[{dest.replace("_", "-")}]"')
    types = entity_types(opts)
    duplicates = [t for i, t in enumerate(types) if t in types[:i]]
    if duplicates:
        raise UsageError(f"Duplicate entity type(s) specified: {','.join(duplicates)}")
    for entity_type in types:
        if entity_type not in ENTITY_TYPES:
            raise UsageError(f"Invalid entity type {entity_type}, the entity type must be one "
                             f"of {', '.join(ENTITY_TYPES)} with a --bootstrap-server or "
                             f"--bootstrap-controller argument")
    if not types:
        raise UsageError("At least one entity type must be specified")
    if len(types) > 1 and set(types) != {USERS, CLIENTS}:
        raise UsageError(f"Only '{USERS}' and '{CLIENTS}' entity types may be specified "
                         f"together")
    specific = any(getattr(opts, dest) for dest, _ in (*ENTITY_FLAGS, *DEFAULT_FLAGS))
    if (opts.entity_names or opts.entity_type) and specific:
        raise UsageError("--entity-{type,name,default} should not be used in conjunction with "
                         "specific entity flags")
    names = entity_names(opts)
    has_name = any(names)
    has_default = "" in names
    if opts.bootstrap_server is None:
        # Kafka's message, its typo included.
        raise UsageError("One of the required --bootstrap-server, --boostrap-controller, or "
                         "--zookeeper arguments must be specified")
    if has_name and (BROKERS in types or BROKER_LOGGERS in types):
        for name in names:
            if name and not re.fullmatch(r"[+-]?\d+", name):
                raise UsageError(f"The entity name for {types[0]} must be a valid integer "
                                 f"broker id, but it is: {name}")
    if opts.describe and BROKER_LOGGERS in types and not has_name:
        raise UsageError(f"an entity name must be specified with --describe of "
                         f"{','.join(types)}")
    if opts.alter:
        if any(t in types for t in (USERS, CLIENTS, BROKERS, IPS)):
            if not has_name and not has_default:
                raise UsageError("an entity-name or default entity must be specified with "
                                 "--alter of users, clients, brokers or ips")
        elif not has_name:
            raise UsageError(f"an entity name must be specified with --alter of "
                             f"{','.join(types)}")
        if opts.add_config is not None and opts.add_config_file is not None:
            raise UsageError("Only one of --add-config or --add-config-file must be specified")
        if opts.add_config is None and opts.add_config_file is None \
                and opts.delete_config is None:
            raise UsageError("At least one of --add-config, --add-config-file, or "
                             "--delete-config must be specified with --alter")
        if len(types) != len(names):
            raise UsageError("An entity name must be specified for every entity type")


def _java_split(pattern: str, text: str, keep_trailing: bool = False) -> list[str]:
    """Java's ``String.split``: trailing empty strings dropped unless ``keep_trailing``
    (Java's limit -1)."""
    parts = re.split(pattern, text)
    while not keep_trailing and len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def parse_configs_to_add(add_config: str | None, add_config_file: str | None
                         ) -> dict[str, str]:
    """Kafka's parseConfigsToBeAdded: ``k1=v1,k2=[a,b]`` split at the commas and ``=`` outside
    brackets, the brackets dropped from the values (so ``[a,b]`` is ``a,b``); a properties
    file's pairs first. UsageError for a malformed pair or key."""
    props: dict[str, str] = {}
    if add_config_file is not None:
        props.update(load_properties(add_config_file))
    if add_config is not None:
        pairs = [_java_split(r"\s*=\s*" + _OUTSIDE_BRACKETS, item, keep_trailing=True)
                 for item in _java_split("," + _OUTSIDE_BRACKETS, add_config)]
        if not all(len(pair) == 2 for pair in pairs):
            raise UsageError('requirement failed: Invalid entity config: all configs to be '
                             'added must be in the format "key=val".')
        for key, value in pairs:
            props[key.strip()] = re.sub(r"\[?\]?", "", value).strip()
    for key in props:
        if not _KEY.fullmatch(key):
            raise UsageError(f"Invalid character found for config key: {key}")
    return props


def parse_configs_to_delete(delete_config: Sequence[str] | None) -> list[str]:
    """``--delete-config k1,k2`` (repeatable): the keys, trimmed."""
    return [key.strip() for value in delete_config or () for key in value.split(",")]


# ========================================================================= the service

@attrs.frozen
class Entry:
    """One config as Kafka's tool prints it: synonyms as (source, name, value)."""

    name: str
    value: str | None
    sensitive: bool
    source: str
    synonyms: tuple[tuple[str, str, str | None], ...]

    def line(self) -> str:
        synonyms = ", ".join(f"{source}:{name}={_text(value)}"
                             for source, name, value in self.synonyms)
        return (f"  {self.name}={_text(self.value)} sensitive={str(self.sensitive).lower()} "
                f"synonyms={{{synonyms}}}")

    def record(self) -> dict[str, object]:
        return {"name": self.name, "value": self.value, "sensitive": self.sensitive,
                "source": self.source,
                "synonyms": [{"source": s, "name": n, "value": v} for s, n, v in self.synonyms]}


def _text(value: str | None) -> str:
    return "null" if value is None else value


def _source(source: Any) -> str:
    """Kafka's name of a config source (confluent-kafka gives its enum, or a bare int in
    synonyms)."""
    if isinstance(source, int):
        try:
            source = confluent("confluent_kafka.admin").ConfigSource(source)
        except ValueError:
            return "UNKNOWN"
    name = str(getattr(source, "name", source))
    return SOURCE_NAMES.get(name, name)


def _entry(config: Any) -> Entry:
    synonyms = [(_source(s.source), str(s.name), s.value) for s in config.synonyms.values()]
    own = (_source(config.source), str(config.name), config.value)
    # confluent-kafka keys synonyms by name, keeping the last of a name (the default): Kafka
    # lists the entry's own level first, so it goes back in front when it was lost.
    if own[0] not in ("DEFAULT_CONFIG", "UNKNOWN") and own not in synonyms:
        synonyms.insert(0, own)
    return Entry(str(config.name), config.value, bool(config.is_sensitive), own[0],
                 tuple(synonyms))


class ConfigService:
    def __init__(self, admin: Any, json_output: bool, out: TextIO) -> None:
        self.admin = admin
        self.json = json_output
        self.out = out

    def resource(self, entity_type: str, name: str, **kwargs: Any) -> Any:
        admin = confluent("confluent_kafka.admin")
        kind = admin.ResourceType.TOPIC if entity_type == TOPICS else admin.ResourceType.BROKER
        return admin.ConfigResource(kind, name, **kwargs)

    def entries(self, entity_type: str, name: str, describe_all: bool) -> list[Entry]:
        """Kafka's getResourceConfig: the entity's configs sorted by name, only its own
        level's unless ``describe_all``."""
        resource = self.resource(entity_type, name)
        futures = self.admin.describe_configs([resource], request_timeout=REQUEST_TIMEOUT_S)
        configs = result(futures[resource])
        own = "DYNAMIC_TOPIC_CONFIG" if entity_type == TOPICS else "DYNAMIC_BROKER_CONFIG"
        entries = [_entry(c) for c in configs.values()]
        return sorted((e for e in entries if describe_all or e.source == own),
                      key=lambda e: e.name)

    def describe(self, entity_type: str, name: str | None, describe_all: bool) -> None:
        if name is not None:
            names = [name]
        elif entity_type == TOPICS:
            names = sorted(self.admin.list_topics(timeout=REQUEST_TIMEOUT_S).topics)
        else:
            cluster = result(self.admin.describe_cluster(request_timeout=REQUEST_TIMEOUT_S))
            names = [str(node.id) for node in cluster.nodes]
        for entity in names:
            entries = self.entries(entity_type, entity, describe_all)
            if self.json:
                print(json.dumps({"type": "entity", "entityType": entity_type,
                                  "entityName": entity, "all": describe_all,
                                  "configs": [e.record() for e in entries]}), file=self.out)
                continue
            level = "All" if describe_all else "Dynamic"
            print(f"{level} configs for {entity_type[:-1]} {entity} are:", file=self.out)
            for entry in entries:
                print(entry.line(), file=self.out)

    def alter(self, entity_type: str, name: str, to_add: dict[str, str],
              to_delete: list[str]) -> None:
        """Kafka's alterConfig for topics (and, as Kafka 4 does, brokers): refuse deleting
        what is not set, then one IncrementalAlterConfigs request."""
        admin = confluent("confluent_kafka.admin")
        current = {e.name for e in self.entries(entity_type, name, describe_all=False)}
        invalid = [key for key in to_delete if key not in current]
        if invalid:
            # Kafka's InvalidConfigurationException: the message alone, on stderr.
            raise UsageError(f"Invalid config(s): {','.join(invalid)}")
        ops = [admin.ConfigEntry(k, v, incremental_operation=admin.AlterConfigOpType.SET)
               for k, v in to_add.items()]
        ops += [admin.ConfigEntry(k, "", incremental_operation=admin.AlterConfigOpType.DELETE)
                for k in to_delete]
        resource = self.resource(entity_type, name, incremental_configs=ops)
        futures = self.admin.incremental_alter_configs([resource],
                                                       request_timeout=REQUEST_TIMEOUT_S)
        result(futures[resource])
        if self.json:
            print(json.dumps({"type": "altered", "entityType": entity_type,
                              "entityName": name, "set": to_add, "deleted": to_delete}),
                  file=self.out)
        else:
            print(f"Completed updating config for {entity_type[:-1]} {name}.", file=self.out)


def _unsupported(types: Sequence[str]) -> CommandFailure | None:
    """The failure Kafka's tool meets for an entity type kafkapy's broker does not serve."""
    if types[0] in (BROKER_LOGGERS, CLIENT_METRICS):
        return CommandFailure(f"kafkapy configs does not support --entity-type {types[0]}")
    return None


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None,
        argv: Sequence[str] | None = None) -> int:
    """Run the tool; the exit code (0, or 1 after an error)."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = " ".join(sys.argv[2:] if argv is None else argv)
    try:
        check_args(opts)
        types, names = entity_types(opts), entity_names(opts)
        to_add: dict[str, str] = {}
        to_delete: list[str] = []
        if opts.alter:
            to_add = parse_configs_to_add(opts.add_config, opts.add_config_file)
            to_delete = parse_configs_to_delete(opts.delete_config)
        unsupported = _unsupported(types)
        if unsupported is not None:
            raise unsupported
        if types[0] == BROKERS and "" in names:
            raise UsageError("kafkapy configs cannot reach the cluster-wide broker default "
                             "(--entity-default): confluent-kafka refuses a broker resource "
                             "with an empty name; name a broker id")
        try:
            import confluent_kafka  # noqa: F401  (the [tools] extra)
        except ImportError:
            return missing_extra("configs", err)
        if types[0] in QUOTA_TYPES:
            return _run_quotas(opts, types, names, to_add, to_delete, out)
        service = ConfigService(admin_client(opts.bootstrap_server, opts.command_config),
                                opts.output == "json", out)
        if opts.alter:
            service.alter(types[0], names[0], to_add, to_delete)
        else:
            service.describe(types[0], names[0] if names else None, opts.all)
    except UsageError as e:
        print(e, file=err)
        return 1
    except (CommandFailure, QuotaFailure) as e:
        print(f"Error while executing config command with args '{args}'", file=err)
        print(e, file=err)
        return 1
    except (ToolError, ValueError, TypeError) as e:
        print(f"Error while executing config command with args '{args}'", file=err)
        code = error_code(e)
        exception = EXCEPTIONS.get(code or "", "KafkaException")
        print(f"java.util.concurrent.ExecutionException: "
              f"org.apache.kafka.common.errors.{exception}: {e}", file=err)
        return 1
    return 0


def _run_quotas(opts: argparse.Namespace, types: Sequence[str], names: Sequence[str],
                to_add: dict[str, str], to_delete: list[str], out: TextIO) -> int:
    """users, clients, ips: client quotas (kafka-python) and SCRAM credentials."""
    try:
        import_kafka_python("configs")
    except ClientMissing as e:
        raise UsageError(str(e)) from None
    service = QuotaService(
        lambda: kafka_python_admin("configs", opts.bootstrap_server, opts.command_config,
                                   "kafkapy-configs"),
        lambda: admin_client(opts.bootstrap_server, opts.command_config),
        opts.output == "json", out)
    try:
        if opts.alter:
            service.alter(types, names, to_add, to_delete)
        else:
            service.describe(types, names)
    except Exception as e:
        if not type(e).__module__.startswith("kafka."):
            raise
        # kafka-python's own errors (no broker reachable, a timeout)
        raise CommandFailure(f"org.apache.kafka.common.errors.TimeoutException: "
                             f"{kafka_python_error(e)}") from e
    finally:
        service.close()
    return 0
