"""``kafkapy acls`` end to end: the tool as a subprocess against a real broker with an
authorizer, its lines compared with what Kafka 3.x's kafka-acls.sh prints for the same state,
the ACLs checked through the broker's own authorizer."""

from __future__ import annotations

import pytest

from kafkapy.security.authorizer.acl import ANY_FILTER
from kafkapy.testing import BrokerHandle
from tests.tools.support import Run, run_tool

AUTHORIZER = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
              "super.users": "User:ANONYMOUS"}
T_LITERAL = "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)"


def acls(broker: BrokerHandle, *args: str) -> Run:
    return run_tool("acls", "--bootstrap-server", broker.bootstrap_servers, *args)


def entry(principal: str, operation: str, permission: str = "ALLOW", host: str = "*") -> str:
    return (f"(principal={principal}, host={host}, operation={operation}, "
            f"permissionType={permission})")


def block(title: str, *entries: str) -> list[str]:
    """Kafka's ``s"$title: $Newline ${acls.map("\\t" + _).mkString(Newline)} $Newline"``
    printed with println, as lines."""
    text = f"{title}: \n " + "\n".join("\t" + e for e in entries) + " \n"
    return (text + "\n").splitlines()


def stored(broker: BrokerHandle) -> set[str]:
    authorizer = broker.server.authorizer
    assert authorizer is not None
    return {f"{b.pattern} {b.entry}" for b in authorizer.acls(ANY_FILTER)}


@pytest.mark.kafka_broker(AUTHORIZER)
def test_add_list_remove(kafka_broker: BrokerHandle) -> None:
    done = acls(kafka_broker, "--add", "--allow-principal", "User:alice", "--operation", "Read",
                "--operation", "Write", "--topic", "t")
    alice = (entry("User:alice", "READ"), entry("User:alice", "WRITE"))
    assert (done.code, done.err) == (0, [])
    assert done.out == block(f"Adding ACLs for resource `{T_LITERAL}`", *alice) + \
        block(f"Current ACLs for resource `{T_LITERAL}`", *alice)
    assert stored(kafka_broker) == {f"{T_LITERAL} {e}" for e in alice}

    done = acls(kafka_broker, "--add", "--deny-principal", "User:mallory", "--deny-host",
                "10.0.0.9", "--group", "g", "--resource-pattern-type", "prefixed")
    group = "ResourcePattern(resourceType=GROUP, name=g, patternType=PREFIXED)"
    mallory = entry("User:mallory", "ALL", "DENY", "10.0.0.9")
    assert done.code == 0
    assert done.out == block(f"Adding ACLs for resource `{group}`", mallory) + \
        block(f"Current ACLs for resource `{group}`", mallory)

    done = acls(kafka_broker, "--list")
    assert done.code == 0
    assert done.out == block(f"Current ACLs for resource `{group}`", mallory) + \
        block(f"Current ACLs for resource `{T_LITERAL}`", *alice)
    done = acls(kafka_broker, "--list", "--principal", "User:mallory")
    assert done.out == ["ACLs for principal `User:mallory`",
                        *block(f"Current ACLs for resource `{group}`", mallory)]
    done = acls(kafka_broker, "--list", "--output", "json")
    assert done.json() == [
        {"resourceType": "GROUP", "name": "g", "patternType": "PREFIXED", "acls": [
            {"principal": "User:mallory", "host": "10.0.0.9", "operation": "ALL",
             "permissionType": "DENY"}]},
        {"resourceType": "TOPIC", "name": "t", "patternType": "LITERAL", "acls": [
            {"principal": "User:alice", "host": "*", "operation": op,
             "permissionType": "ALLOW"} for op in ("READ", "WRITE")]}]

    # --remove asks first; no "y" on stdin: nothing is removed
    done = acls(kafka_broker, "--remove", "--topic", "t", "--allow-principal", "User:alice",
                "--operation", "Read")
    assert done.code == 0
    assert done.out[:3] == ["Are you sure you want to remove ACLs: ",
                            " \t" + alice[0] + " ",
                            f" from resource filter `{T_LITERAL}`? (y/n)"]
    assert len(stored(kafka_broker)) == 3
    done = acls(kafka_broker, "--remove", "--force", "--topic", "t", "--allow-principal",
                "User:alice", "--operation", "Read")
    assert done.out == block(f"Current ACLs for resource `{T_LITERAL}`", alice[1])
    # no principal: every ACL of the filter
    done = acls(kafka_broker, "--remove", "--force", "--group", "g", "--resource-pattern-type",
                "match")
    assert (done.code, done.out) == (0, [])
    assert stored(kafka_broker) == {f"{T_LITERAL} {alice[1]}"}


@pytest.mark.kafka_broker(AUTHORIZER)
def test_producer_and_consumer_conveniences(kafka_broker: BrokerHandle) -> None:
    done = acls(kafka_broker, "--add", "--producer", "--idempotent", "--allow-principal",
                "User:bob", "--topic", "t", "--transactional-id", "tx")
    tx = "ResourcePattern(resourceType=TRANSACTIONAL_ID, name=tx, patternType=LITERAL)"
    cluster = "ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)"
    topic_ops = [entry("User:bob", op) for op in ("CREATE", "DESCRIBE", "WRITE")]
    tx_ops = [entry("User:bob", op) for op in ("DESCRIBE", "WRITE")]
    idempotent = entry("User:bob", "IDEMPOTENT_WRITE")
    assert done.code == 0, done
    assert done.out == (
        block(f"Adding ACLs for resource `{T_LITERAL}`", *topic_ops)
        + block(f"Adding ACLs for resource `{tx}`", *tx_ops)
        + block(f"Adding ACLs for resource `{cluster}`", idempotent)
        + block(f"Current ACLs for resource `{cluster}`", idempotent)
        + block(f"Current ACLs for resource `{T_LITERAL}`", *topic_ops)
        + block(f"Current ACLs for resource `{tx}`", *tx_ops))
    done = acls(kafka_broker, "--add", "--consumer", "--allow-principal", "User:carol",
                "--topic", "t", "--group", "app")
    assert done.code == 0
    assert {f"{T_LITERAL} {entry('User:carol', op)}" for op in ("READ", "DESCRIBE")} | \
        {f"ResourcePattern(resourceType=GROUP, name=app, patternType=LITERAL) "
         f"{entry('User:carol', 'READ')}"} <= stored(kafka_broker)


@pytest.mark.parametrize(("args", "message"), [
    (("--list", "--add"), "Command must include exactly one action: --list, --add, --remove. "),
    (("--add", "--allow-principal", "User:a"),
     "You must provide at least one resource: --topic <topic> or --cluster or --group <group> "
     "or --delegation-token <Delegation Token ID>"),
    (("--add", "--topic", "t"),
     "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."),
    (("--add", "--topic", "t", "--allow-principal", "User:a", "--resource-pattern-type", "any"),
     "A '--resource-pattern-type' value of 'ANY' is not valid when adding acls."),
    (("--add", "--cluster", "--allow-principal", "User:a", "--operation", "Read"),
     "ResourceType CLUSTER only supports operations All, Create, ClusterAction, "
     "DescribeConfigs, AlterConfigs, IdempotentWrite, Alter, Describe"),
    (("--list", "--producer", "--topic", "t"),
     'Option "[list]" can\'t be used with option "[producer]"'),
    (("--add", "--producer", "--allow-principal", "User:a"),
     "With --producer you must specify a --topic"),
    (("--add", "--consumer", "--topic", "t", "--allow-principal", "User:a"),
     "With --consumer you must specify a --topic and a --group and no --cluster or "
     "--transactional-id option should be specified."),
    (("--add", "--idempotent", "--topic", "t"),
     "The --idempotent option is only available if --producer is set"),
])
def test_usage_errors(kafka_broker: BrokerHandle, args: tuple[str, ...], message: str) -> None:
    done = acls(kafka_broker, *args)
    assert (done.code, done.out, done.err) == (1, [], [message])


def test_without_authorizer_the_error_is_kafkas(kafka_broker: BrokerHandle) -> None:
    done = acls(kafka_broker, "--add", "--allow-principal", "User:a", "--topic", "t")
    assert done.code == 1
    assert done.out[-1] == ("Error while executing ACL command: org.apache.kafka.common.errors."
                            "SecurityDisabledException: No Authorizer is configured.")


@pytest.mark.kafka_broker({"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
def test_not_allowed_to_alter_the_cluster(kafka_broker: BrokerHandle) -> None:
    done = acls(kafka_broker, "--add", "--allow-principal", "User:a", "--topic", "t")
    assert done.code == 1
    assert done.out[-1].startswith("Error while executing ACL command: org.apache.kafka.common."
                                   "errors.ClusterAuthorizationException: Request CreateAcls")
    assert stored(kafka_broker) == set()


def test_without_confluent_kafka_the_tool_says_how_to_install_it(
        kafka_broker: BrokerHandle) -> None:
    done = run_tool("acls", "--bootstrap-server", kafka_broker.bootstrap_servers, "--list",
                    prelude="import sys; sys.modules['confluent_kafka'] = None")
    assert (done.code, done.out) == (1, [])
    assert done.err == ["kafkapy acls needs confluent-kafka: pip install 'kafkapy[tools]'"]
