"""``kafkapy configs`` end to end: the tool runs as a subprocess (``python -m kafkapy.tools``)
against a real broker (``kafkapy.Broker`` in-process, one for the module); topic configs and the
broker's dynamic configs go through the tool and are read back with confluent-kafka's
``describe_configs``, and the tool's ``--describe`` lines are compared with Kafka 3.7's
ConfigCommand output for that state (Kafka's defaults: log.cleanup.policy=delete,
log.retention.hours=168, message.max.bytes=1048588)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from confluent_kafka.admin import (
    AdminClient,
    ConfigResource,
    ConfigSource,
    NewTopic,
    ResourceType,
)

import kafkapy
from kafkapy.tools.configs import parse_configs_to_add
from kafkapy.tools.topics import UsageError
from tests.tools.support import Run, run_tool

ROOT = Path(__file__).resolve().parents[2]


def tool(*args: str, prelude: str | None = None) -> Run:
    return run_tool("configs", *args, prelude=prelude)


@attrs.frozen
class Env:
    bootstrap: str
    admin: AdminClient
    node: int

    def configs(self, *args: str) -> Run:
        return tool("--bootstrap-server", self.bootstrap, *args)

    def seen(self, kind: Any, name: str) -> dict[str, tuple[str | None, str]]:
        """What a client reads: name -> (value, source) of the configs set at the entity's
        own level (not defaults)."""
        resource = ConfigResource(kind, name)
        entries = self.admin.describe_configs([resource])[resource].result(30)
        return {e.name: (e.value, ConfigSource(e.source).name) for e in entries.values()
                if ConfigSource(e.source) in (ConfigSource.DYNAMIC_TOPIC_CONFIG,
                                              ConfigSource.DYNAMIC_BROKER_CONFIG)}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with kafkapy.Broker({"offsets.topic.num.partitions": "1"},
                        data_dir=tmp_path_factory.mktemp("configs")) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        [node] = admin.describe_cluster().result(30).nodes
        yield Env(broker.bootstrap_servers, admin, node.id)


def create(env: Env, topic: str) -> None:
    env.admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)


# ============================================================================= topics

def test_topic_configs_round_trip(env: Env) -> None:
    create(env, "conf")
    assert env.configs("--describe", "--entity-type", "topics", "--entity-name", "conf").out \
        == ["Dynamic configs for topic conf are:"]

    # Kafka's bracket syntax: a value holding commas.
    done = env.configs("--alter", "--entity-type", "topics", "--entity-name", "conf",
                       "--add-config", "cleanup.policy=[compact,delete],segment.bytes=1048576")
    assert (done.code, done.out, done.err) == (0, ["Completed updating config for topic conf."],
                                               [])
    assert env.seen(ResourceType.TOPIC, "conf") == {
        "cleanup.policy": ("compact,delete", "DYNAMIC_TOPIC_CONFIG"),
        "segment.bytes": ("1048576", "DYNAMIC_TOPIC_CONFIG")}

    done = env.configs("--describe", "--topic", "conf")
    assert (done.code, done.out) == (0, [
        "Dynamic configs for topic conf are:",
        "  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
        "cleanup.policy=compact,delete, DEFAULT_CONFIG:log.cleanup.policy=delete}",
        "  segment.bytes=1048576 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
        "segment.bytes=1048576, DEFAULT_CONFIG:log.segment.bytes=1073741824}",
    ])

    # Set one, delete another, in one request.
    done = env.configs("--alter", "--topic", "conf", "--add-config", "min.insync.replicas=1",
                       "--delete-config", "segment.bytes")
    assert (done.code, done.out) == (0, ["Completed updating config for topic conf."])
    assert env.seen(ResourceType.TOPIC, "conf") == {
        "cleanup.policy": ("compact,delete", "DYNAMIC_TOPIC_CONFIG"),
        "min.insync.replicas": ("1", "DYNAMIC_TOPIC_CONFIG")}
    done = env.configs("--describe", "--topic", "conf", "--output", "json")
    [entity] = [json.loads(line) for line in done.out]
    assert entity["entityType"] == "topics" and entity["entityName"] == "conf"
    # A synonym with the entry's own name (min.insync.replicas at the topic and the broker's
    # default) is listed once per level, the entry's own first.
    assert entity["configs"][1] == {
        "name": "min.insync.replicas", "value": "1", "sensitive": False,
        "source": "DYNAMIC_TOPIC_CONFIG",
        "synonyms": [{"source": "DYNAMIC_TOPIC_CONFIG", "name": "min.insync.replicas",
                      "value": "1"},
                     {"source": "DEFAULT_CONFIG", "name": "min.insync.replicas", "value": "1"}]}

    # --all: every config, sorted, defaults included.
    done = env.configs("--describe", "--topic", "conf", "--all")
    assert done.out[0] == "All configs for topic conf are:"
    names = [line.split("=", 1)[0].strip() for line in done.out[1:]]
    assert names == sorted(names) and len(names) > 20
    assert "  segment.bytes=1073741824 sensitive=false synonyms={DEFAULT_CONFIG:" \
           "log.segment.bytes=1073741824}" in done.out
    assert "  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:" \
           "cleanup.policy=compact,delete, DEFAULT_CONFIG:log.cleanup.policy=delete}" in done.out


def test_topic_alter_refusals(env: Env) -> None:
    create(env, "strict")
    # Deleting a key that is not set: refused before anything is sent.
    done = env.configs("--alter", "--topic", "strict", "--add-config", "retention.ms=1000",
                       "--delete-config", "segment.ms,flush.ms")
    assert (done.code, done.out, done.err) == (1, [], ["Invalid config(s): segment.ms,flush.ms"])
    assert env.seen(ResourceType.TOPIC, "strict") == {}
    # The broker's refusal, as Kafka's tool reports an exception.
    done = env.configs("--alter", "--topic", "strict", "--add-config", "no.such.config=1")
    assert done.code == 1
    assert done.err == [
        "Error while executing config command with args '--bootstrap-server "
        f"{env.bootstrap} --alter --topic strict --add-config no.such.config=1'",
        "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors."
        "InvalidConfigurationException: Unknown topic config name: no.such.config"]
    assert env.seen(ResourceType.TOPIC, "strict") == {}


def test_describe_every_topic(env: Env) -> None:
    create(env, "every")
    done = env.configs("--describe", "--entity-type", "topics")
    headers = [line for line in done.out if not line.startswith("  ")]
    listed = sorted(env.admin.list_topics(timeout=30).topics)
    assert headers == [f"Dynamic configs for topic {t} are:" for t in listed]


# ============================================================================ brokers

def test_broker_dynamic_configs_round_trip(env: Env) -> None:
    n = str(env.node)
    done = env.configs("--alter", "--entity-type", "brokers", "--entity-name", n,
                       "--add-config", "log.retention.ms=7200000,message.max.bytes=2000000")
    assert (done.code, done.out) == (0, [f"Completed updating config for broker {n}."])
    assert env.seen(ResourceType.BROKER, n) == {
        "log.retention.ms": ("7200000", "DYNAMIC_BROKER_CONFIG"),
        "message.max.bytes": ("2000000", "DYNAMIC_BROKER_CONFIG")}
    expected = [
        f"Dynamic configs for broker {n} are:",
        "  log.retention.ms=7200000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
        "log.retention.ms=7200000, DEFAULT_CONFIG:log.retention.hours=168}",
        "  message.max.bytes=2000000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
        "message.max.bytes=2000000, DEFAULT_CONFIG:message.max.bytes=1048588}",
    ]
    assert env.configs("--describe", "--broker", n).out == expected
    # Every broker: one section per broker id.
    assert env.configs("--describe", "--entity-type", "brokers").out == expected

    done = env.configs("--alter", "--broker", n, "--delete-config", "log.retention.ms",
                       "--delete-config", "message.max.bytes")
    assert (done.code, done.out) == (0, [f"Completed updating config for broker {n}."])
    assert env.seen(ResourceType.BROKER, n) == {}
    assert env.configs("--describe", "--broker", n).out == [
        f"Dynamic configs for broker {n} are:"]
    # --all: the static and default configs too.
    done = env.configs("--describe", "--broker", n, "--all")
    assert done.out[0] == f"All configs for broker {n} are:"
    assert "  message.max.bytes=1048588 sensitive=false synonyms={DEFAULT_CONFIG:" \
           "message.max.bytes=1048588}" in done.out


def test_broker_refusals(env: Env) -> None:
    n = str(env.node)
    done = env.configs("--alter", "--broker", n, "--add-config", "broker.id=9")
    assert done.code == 1
    assert done.err[1] == ("java.util.concurrent.ExecutionException: org.apache.kafka.common."
                           "errors.InvalidRequestException: Cannot update these configs "
                           "dynamically: broker.id")
    assert env.seen(ResourceType.BROKER, n) == {}
    done = env.configs("--alter", "--entity-type", "brokers", "--entity-default",
                       "--add-config", "log.retention.ms=1")
    assert done.code == 1
    assert done.err[0].startswith("kafkapy configs cannot reach the cluster-wide broker "
                                  "default (--entity-default)")


# ======================================================================= the command line
# (users, clients and ips: tests/tools/test_configs_quotas.py)

@pytest.mark.parametrize(("args", "message"), [
    (("--entity-type", "topics"), "Command must include exactly one action: --describe, --alter"),
    (("--describe",), "At least one entity type must be specified"),
    (("--describe", "--entity-type", "things"),
     "Invalid entity type things, the entity type must be one of topics, clients, users, "
     "brokers, ips, broker-loggers, client-metrics with a --bootstrap-server or "
     "--bootstrap-controller argument"),
    (("--describe", "--entity-type", "topics", "--entity-type", "topics"),
     "Duplicate entity type(s) specified: topics"),
    (("--describe", "--entity-type", "topics", "--entity-type", "brokers"),
     "Only 'users' and 'clients' entity types may be specified together"),
    (("--describe", "--entity-type", "topics", "--topic", "t"),
     "Duplicate entity type(s) specified: topics"),
    (("--describe", "--entity-type", "brokers", "--entity-name", "one"),
     "The entity name for brokers must be a valid integer broker id, but it is: one"),
    (("--alter", "--entity-type", "topics", "--add-config", "a=b"),
     "an entity name must be specified with --alter of topics"),
    (("--alter", "--entity-type", "brokers", "--add-config", "a=b"),
     "an entity-name or default entity must be specified with --alter of users, clients, "
     "brokers or ips"),
    (("--alter", "--topic", "t"),
     "At least one of --add-config, --add-config-file, or --delete-config must be specified "
     "with --alter"),
    (("--describe", "--topic", "t", "--add-config", "a=b"),
     'Option "[describe]" can\'t be used with option "[add-config]"'),
    (("--alter", "--topic", "t", "--add-config", "a"),
     'requirement failed: Invalid entity config: all configs to be added must be in the '
     'format "key=val".'),
    (("--alter", "--topic", "t", "--add-config", "a b=1"),
     "Invalid character found for config key: a b"),
])
def test_command_line_checks(env: Env, args: tuple[str, ...], message: str) -> None:
    done = env.configs(*args)
    assert (done.code, done.out, done.err) == (1, [], [message])


def test_bootstrap_server_is_required() -> None:
    done = tool("--describe", "--topic", "t")
    assert (done.code, done.err) == (1, [
        "One of the required --bootstrap-server, --boostrap-controller, or --zookeeper "
        "arguments must be specified"])


def test_without_confluent_kafka_the_tool_says_how_to_install_it(env: Env) -> None:
    done = tool("--bootstrap-server", env.bootstrap, "--describe", "--topic", "t",
                prelude="import sys; sys.modules['confluent_kafka'] = None")
    assert (done.code, done.out) == (1, [])
    assert done.err == ["kafkapy configs needs confluent-kafka: pip install 'kafkapy[tools]'"]


# ======================================================== --add-config parsing (pure logic)

def test_add_config_parsing(tmp_path: Path) -> None:
    assert parse_configs_to_add("a=1, b = [x,y] ,c=[z],d=", None) == {
        "a": "1", "b": "x,y", "c": "z", "d": ""}
    # Commas inside brackets stay; a trailing comma is dropped (Java's split).
    assert parse_configs_to_add("k=[a,b,c],", None) == {"k": "a,b,c"}
    file = tmp_path / "add.properties"
    file.write_text("retention.ms=1\nsegment.ms=2\n")
    assert parse_configs_to_add("segment.ms=3", str(file)) == {"retention.ms": "1",
                                                               "segment.ms": "3"}
    for bad in ("a=1=2", "a", "a=1,b"):
        with pytest.raises(UsageError, match="all configs to be added"):
            parse_configs_to_add(bad, None)
