"""CreateAcls / DescribeAcls / DeleteAcls on one broker, through real clients: confluent-kafka's
AdminClient and kafka-python's KafkaAdminClient; the ACLs survive a restart; without an
authorizer the answers are SECURITY_DISABLED; without cluster ALTER, CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from kafkapy.testing import BrokerHandle

AUTHORIZER = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
              "super.users": "User:ANONYMOUS"}
TIMEOUT = 30


def admin(broker: BrokerHandle) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def wait(futures: Any) -> Any:
    if isinstance(futures, dict):
        return {k: f.result(TIMEOUT) for k, f in futures.items()}
    return futures.result(TIMEOUT)


def binding(rtype: ResourceType, name: str, principal: str, op: AclOperation,
            perm: AclPermissionType = AclPermissionType.ALLOW,
            ptype: ResourcePatternType = ResourcePatternType.LITERAL,
            host: str = "*") -> AclBinding:
    return AclBinding(rtype, name, ptype, principal, host, op, perm)


def everything() -> AclBindingFilter:
    return AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                            AclOperation.ANY, AclPermissionType.ANY)


def described(client: AdminClient, flt: AclBindingFilter | None = None) -> set[tuple[Any, ...]]:
    return {(b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation,
             b.permission_type) for b in wait(client.describe_acls(flt or everything()))}


def as_tuple(b: AclBinding) -> tuple[Any, ...]:
    return (b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation,
            b.permission_type)


ALICE_READ = binding(ResourceType.TOPIC, "t", "User:alice", AclOperation.READ)
BOB_PREFIXED = binding(ResourceType.TOPIC, "sales-", "User:bob", AclOperation.WRITE,
                       ptype=ResourcePatternType.PREFIXED)
DENY_GROUP = binding(ResourceType.GROUP, "g", "User:*", AclOperation.ALL,
                     perm=AclPermissionType.DENY, host="10.0.0.1")
CLUSTER = binding(ResourceType.BROKER, "kafka-cluster", "User:ops", AclOperation.ALTER_CONFIGS)


@pytest.mark.kafka_broker(AUTHORIZER)
def test_create_describe_delete_and_restart(kafka_broker: BrokerHandle,
                                            kafka_broker_factory: Callable[..., BrokerHandle]
                                            ) -> None:
    client = admin(kafka_broker)
    acls = [ALICE_READ, BOB_PREFIXED, DENY_GROUP, CLUSTER]
    assert set(wait(client.create_acls(acls))) == set(acls)
    assert described(client) == {as_tuple(b) for b in acls}
    # filters: MATCH finds the patterns that apply to a name; a principal filter
    match = AclBindingFilter(ResourceType.TOPIC, "sales-eu", ResourcePatternType.MATCH, None,
                             None, AclOperation.ANY, AclPermissionType.ANY)
    assert described(client, match) == {as_tuple(BOB_PREFIXED)}
    alice = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, "User:alice",
                             None, AclOperation.ANY, AclPermissionType.ANY)
    assert described(client, alice) == {as_tuple(ALICE_READ)}
    # the broker's own authorizer sees them
    authorizer = kafka_broker.server.authorizer
    assert authorizer is not None
    from kafkapy.security.authorizer.acl import AclOperation as Op
    from kafkapy.security.authorizer.acl import ResourceType as RT
    assert authorizer.authorize("User:bob", "127.0.0.1", Op.WRITE, RT.TOPIC, "sales-eu")
    assert authorizer.authorize("User:bob", "127.0.0.1", Op.DESCRIBE, RT.TOPIC, "sales-eu")
    assert not authorizer.authorize("User:bob", "127.0.0.1", Op.READ, RT.TOPIC, "sales-eu")

    # restart on the same data: the ACLs are still there
    kafka_broker.stop()
    again = kafka_broker_factory(AUTHORIZER, data_dir=kafka_broker.data_dir)
    client = admin(again)
    assert described(client) == {as_tuple(b) for b in acls}

    # delete: one filter per ACL kind
    delete_alice = AclBindingFilter(ResourceType.TOPIC, "t", ResourcePatternType.LITERAL,
                                    "User:alice", None, AclOperation.ANY,
                                    AclPermissionType.ANY)
    results = wait(client.delete_acls([delete_alice, match]))
    assert [sorted(map(as_tuple, r)) for r in results.values()] == \
        [[as_tuple(ALICE_READ)], [as_tuple(BOB_PREFIXED)]]
    assert described(client) == {as_tuple(DENY_GROUP), as_tuple(CLUSTER)}


@pytest.mark.kafka_broker(AUTHORIZER)
def test_kafka_python_admin(kafka_broker: BrokerHandle) -> None:
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePattern,
        ResourcePatternFilter,
    )
    from kafka.admin import ResourceType as KResourceType
    client = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap_servers,
                              request_timeout_ms=TIMEOUT * 1000)
    try:
        acl = ACL("User:carol", "*", ACLOperation.DESCRIBE, ACLPermissionType.ALLOW,
                  ResourcePattern(KResourceType.GROUP, "g1", ACLResourcePatternType.PREFIXED))
        created = client.create_acls([acl])
        assert created["failed"] == [] and len(created["succeeded"]) == 1
        any_filter = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                               ResourcePatternFilter(KResourceType.ANY, None,
                                                     ACLResourcePatternType.ANY))
        found, error = client.describe_acls(any_filter)
        assert error.errno == 0
        assert [(a.principal, a.operation, a.resource_pattern.resource_name,
                 a.resource_pattern.pattern_type) for a in found] == \
            [("User:carol", ACLOperation.DESCRIBE, "g1", ACLResourcePatternType.PREFIXED)]
        (deleted,) = client.delete_acls([any_filter])
        assert deleted[0] == any_filter and [m.principal for m in deleted[1]] == \
            ["User:carol"]
        assert deleted[2].errno == 0
        assert client.describe_acls(any_filter)[0] == []
    finally:
        client.close()


@pytest.mark.kafka_broker(AUTHORIZER)
def test_invalid_creations_are_invalid_request(kafka_broker: BrokerHandle) -> None:
    client = admin(kafka_broker)
    bad_cluster = binding(ResourceType.BROKER, "other", "User:ops", AclOperation.ALTER)
    futures = client.create_acls([ALICE_READ, bad_cluster])
    assert wait(futures[ALICE_READ]) is None
    with pytest.raises(KafkaException) as e:
        wait(futures[bad_cluster])
    assert e.value.args[0].name() == "INVALID_REQUEST"
    assert "The only valid name for the CLUSTER resource is kafka-cluster" in \
        e.value.args[0].str()
    assert described(client) == {as_tuple(ALICE_READ)}


def kafka_python_describe_all(broker: BrokerHandle) -> Any:
    """DescribeAcls through kafka-python, which raises the response's top-level error
    (librdkafka 2.x drops DescribeAcls' top-level ErrorCode and reports an empty list)."""
    from kafka.admin import (
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePatternFilter,
    )
    from kafka.admin import ResourceType as KResourceType
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers,
                              request_timeout_ms=TIMEOUT * 1000)
    try:
        return client.describe_acls(ACLFilter(
            None, None, ACLOperation.ANY, ACLPermissionType.ANY,
            ResourcePatternFilter(KResourceType.ANY, None, ACLResourcePatternType.ANY)))
    finally:
        client.close()


def test_without_authorizer_security_disabled(kafka_broker: BrokerHandle) -> None:
    from kafka.errors import SecurityDisabledError
    with pytest.raises(SecurityDisabledError, match="No Authorizer is configured on the broker"):
        kafka_python_describe_all(kafka_broker)
    client = admin(kafka_broker)
    futures = client.create_acls([ALICE_READ])
    with pytest.raises(KafkaException) as e:
        wait(futures[ALICE_READ])
    assert e.value.args[0].name() == "SECURITY_DISABLED"
    assert "No Authorizer is configured." in e.value.args[0].str()


@pytest.mark.kafka_broker({"authorizer.class.name":
                           "org.apache.kafka.metadata.authorizer.StandardAuthorizer"})
def test_anonymous_needs_cluster_alter(kafka_broker: BrokerHandle) -> None:
    # No super user and no ACL: User:ANONYMOUS may not administer ACLs, as with Kafka.
    client = admin(kafka_broker)
    futures = client.create_acls([ALICE_READ])
    with pytest.raises(KafkaException) as e:
        wait(futures[ALICE_READ])
    assert e.value.args[0].name() == "CLUSTER_AUTHORIZATION_FAILED"
    from kafka.errors import ClusterAuthorizationFailedError
    with pytest.raises(ClusterAuthorizationFailedError):
        kafka_python_describe_all(kafka_broker)
