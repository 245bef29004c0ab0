"""``kafkapy configs`` for users, clients and ips end to end: the tool as a subprocess against
a real broker (one per module), its lines compared with what Kafka 3.x's ConfigCommand
prints for the same state, the state read back over the wire (DescribeClientQuotas)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from kafka import KafkaAdminClient

import kafkapy
from kafkapy.tools.client_quotas_admin import describe_client_quotas
from kafkapy.tools.configs_quotas import java_hash_map_order, java_string_hash
from tests.tools.support import Run, run_tool


@attrs.frozen
class Env:
    bootstrap: str
    admin: Any

    def configs(self, *args: str) -> Run:
        return run_tool("configs", "--bootstrap-server", self.bootstrap, *args)

    def quotas(self, entity: list[tuple[str, str | None]]) -> dict[str, float] | None:
        components = [(t, 0 if n is not None else 1, n) for t, n in entity]
        code, _, entries = describe_client_quotas(self.admin, components, strict=True)
        assert code == 0
        return entries[0].values if entries else None


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with kafkapy.Broker({"offsets.topic.num.partitions": "1"},
                        data_dir=tmp_path_factory.mktemp("quotas")) as broker:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
        try:
            yield Env(broker.bootstrap_servers, admin)
        finally:
            admin.close()


def test_java_hash_map_order() -> None:
    # Java: "a".hashCode() == 97, "producer_byte_rate".hashCode() as the JDK computes it.
    assert java_string_hash("a") == 97
    assert java_string_hash("polygenelubricants") == -2147483648
    assert java_string_hash(None) == 0
    # new HashMap<>(2) with "b" (98) then "a" (97): a table of 4, buckets 2 and 1.
    assert java_hash_map_order(["b", "a"], java_string_hash, 2) == ["a", "b"]
    # same bucket (97 and 101 in a table of 4): insertion order kept
    assert java_hash_map_order(["e", "a"], java_string_hash, 2) == ["e", "a"]


def test_alter_and_describe_user_quotas(env: Env) -> None:
    done = env.configs("--alter", "--entity-type", "users", "--entity-name", "alice",
                       "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048")
    assert (done.code, done.out, done.err) == (
        0, ["Completed updating config for user alice."], [])
    assert env.quotas([("user", "alice")]) == {"producer_byte_rate": 1024.0,
                                               "consumer_byte_rate": 2048.0}
    done = env.configs("--describe", "--entity-type", "users", "--entity-name", "alice")
    assert (done.code, done.err) == (0, [])
    [line] = done.out
    # the two values in Java HashMap order (the order is the JDK's, both keys must appear)
    order = java_hash_map_order(["consumer_byte_rate", "producer_byte_rate"],
                                java_string_hash, 2)
    values = {"consumer_byte_rate": "2048.0", "producer_byte_rate": "1024.0"}
    assert line == "Quota configs for user-principal 'alice' are " + \
        ", ".join(f"{k}={values[k]}" for k in order)
    done = env.configs("--describe", "--user", "alice", "--output", "json")
    assert done.json() == [{"type": "quotas", "entity": {"user": "alice"}, "configs": {
        "producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0}}]
    done = env.configs("--alter", "--user", "alice", "--delete-config", "consumer_byte_rate")
    assert (done.code, done.out) == (0, ["Completed updating config for user alice."])
    assert env.quotas([("user", "alice")]) == {"producer_byte_rate": 1024.0}


def test_defaults_and_user_client_pairs(env: Env) -> None:
    done = env.configs("--alter", "--entity-type", "users", "--entity-default",
                       "--entity-type", "clients", "--entity-default",
                       "--add-config", "request_percentage=50")
    assert (done.code, done.out) == (
        0, ["Completed updating default config for users in the cluster."])
    assert env.quotas([("user", None), ("client-id", None)]) == {"request_percentage": 50.0}
    done = env.configs("--alter", "--user", "bob", "--client", "c1",
                       "--add-config", "consumer_byte_rate=4096")
    # --client comes before --user in Kafka's flag order: the head entity is the client
    assert (done.code, done.out) == (0, ["Completed updating config for client c1."])
    assert env.quotas([("user", "bob"), ("client-id", "c1")]) == {"consumer_byte_rate": 4096.0}
    done = env.configs("--describe", "--entity-type", "users", "--entity-name", "bob",
                       "--entity-type", "clients", "--entity-name", "c1")
    assert done.out == ["Quota configs for user-principal 'bob', client-id 'c1' are "
                        "consumer_byte_rate=4096.0"]
    done = env.configs("--describe", "--entity-type", "users", "--entity-default",
                       "--entity-type", "clients", "--entity-default")
    assert done.out == ["Quota configs for the default user-principal, the default client-id "
                        "are request_percentage=50.0"]
    done = env.configs("--alter", "--client-defaults", "--add-config", "producer_byte_rate=10")
    assert (done.code, done.out) == (
        0, ["Completed updating default config for clients in the cluster."])
    done = env.configs("--describe", "--entity-type", "clients")
    assert done.out == ["Quota configs for the default client-id are producer_byte_rate=10.0"]


def test_ip_quotas(env: Env) -> None:
    done = env.configs("--alter", "--ip", "10.1.2.3", "--add-config",
                       "connection_creation_rate=5")
    assert (done.code, done.out) == (0, ["Completed updating config for ip 10.1.2.3."])
    done = env.configs("--describe", "--entity-type", "ips", "--entity-name", "10.1.2.3")
    assert done.out == ["Quota configs for ip '10.1.2.3' are connection_creation_rate=5.0"]
    done = env.configs("--alter", "--ip", "10.1.2.3", "--add-config", "producer_byte_rate=5")
    assert (done.code, done.out, done.err) == (1, [], [
        "Only connection quota configs can be added for 'ips' using --bootstrap-server. "
        "Unexpected config names: producer_byte_rate"])


@pytest.mark.parametrize(("args", "message"), [
    (("--entity-type", "users", "--entity-name", "u", "--add-config", "bogus=1"),
     "Only quota and SCRAM credential configs can be added for 'users' using "
     "--bootstrap-server. Unexpected config names: List(bogus)"),
    (("--entity-type", "clients", "--entity-name", "c",
      "--add-config", "SCRAM-SHA-256=[password=x]"),
     "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected "
     "config names: List(SCRAM-SHA-256)"),
    (("--entity-type", "users", "--entity-name", "u",
      "--add-config", "SCRAM-SHA-256=[password=x],producer_byte_rate=1"),
     "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using "
     "--bootstrap-server."),
    (("--entity-type", "users", "--entity-default", "--add-config",
      "SCRAM-SHA-256=[password=x]"),
     "The use of --entity-default or --user-defaults is not allowed with User SCRAM "
     "Credentials using --bootstrap-server."),
    (("--entity-type", "users", "--entity-name", "u", "--delete-config", "producer_byte_rate"),
     "Invalid config(s): producer_byte_rate"),
    (("--entity-type", "users", "--entity-name", "u", "--add-config", "producer_byte_rate=x"),
     "Cannot parse quota configuration value for producer_byte_rate: x"),
    (("--entity-type", "users", "--entity-name", "u", "--add-config",
      "SCRAM-SHA-512=[iterations=10,password=x]"),
     "Iterations 10 is less than the minimum 4096 required for SCRAM-SHA-512"),
])
def test_alter_refusals(env: Env, args: tuple[str, ...], message: str) -> None:
    done = env.configs("--alter", *args)
    assert (done.code, done.out, done.err) == (1, [], [message])


def test_broker_errors_as_kafka_prints_them(env: Env) -> None:
    args = ("--alter", "--entity-type", "users", "--entity-name", "u", "--add-config",
            "producer_byte_rate=1.5")
    done = env.configs(*args)
    assert (done.code, done.out) == (1, [])
    assert done.err == [
        f"Error while executing config command with args '--bootstrap-server {env.bootstrap} "
        f"{' '.join(args)}'",
        "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors."
        "InvalidRequestException: Configuration producer_byte_rate must be a LONG value"]
    assert env.quotas([("user", "u")]) is None


def test_scram_credentials_through_configs(env: Env) -> None:
    """SCRAM credentials go through AlterUserScramCredentials / DescribeUserScramCredentials,
    as kafka-configs.sh does with --bootstrap-server."""
    add = ("--alter", "--entity-type", "users", "--entity-name", "scram-user", "--add-config",
           "SCRAM-SHA-256=[iterations=8192,password=alice-secret]")
    assert env.configs(*add).out == ["Completed updating config for user scram-user."]
    describe = ("--describe", "--entity-type", "users", "--entity-name", "scram-user")
    assert env.configs(*describe).out == [
        "SCRAM credential configs for user-principal 'scram-user' are "
        "SCRAM-SHA-256=iterations=8192"]
    remove = ("--alter", "--entity-type", "users", "--entity-name", "scram-user",
              "--delete-config", "SCRAM-SHA-256")
    assert env.configs(*remove).out == ["Completed updating config for user scram-user."]
    assert env.configs(*describe).out == []

