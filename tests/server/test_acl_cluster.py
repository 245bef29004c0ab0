"""ACLs on a 3-broker kafkapy.Cluster: a CreateAcls answered by one broker is written to
ZooKeeper as Kafka writes it (``/kafka-acl``, ``/kafka-acl-extended``, change notifications)
and every other broker serves it after the notification; ACLs written into ZooKeeper by Kafka's
own ZooKeeper-mode tooling are picked up the same way, and enforced by a partition's leader
elsewhere. One module-scoped cluster; every wait bounded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import trio
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

import kafkapy
from kafkapy.clients.network_client import BrokerConnection
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AclCreation,
    CreateAclsRequest,
    DeleteAclsFilter,
    DeleteAclsRequest,
    DescribeAclsRequest,
)

# No super user: a resource without ACLs is open to everyone, so the brokers' own requests
# (CLUSTER_ACTION) and the ACL administration (cluster ALTER) pass while the cluster has no
# cluster ACL, and an ACL created through one broker is enforced by the others.
SETTINGS = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "allow.everyone.if.no.acl.found": "true"}
TIMEOUT = 30.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[kafkapy.Cluster]:
    with kafkapy.Cluster(3, SETTINGS, timeout=60) as c:
        yield c


def request(cluster: kafkapy.Cluster, broker: int, api_key: int, body: Any) -> Any:
    """One request (v3) to that very broker, not to whichever a client library picks."""
    port = cluster.brokers[broker].port

    async def go() -> Any:
        conn = BrokerConnection("127.0.0.1", port, timeout_s=TIMEOUT)
        try:
            return await conn.request(api_key, 3, body)
        finally:
            await conn.close()
    return trio.run(go)


def acls_on(cluster: kafkapy.Cluster, broker: int) -> set[tuple[Any, ...]]:
    every = DescribeAclsRequest(resource_type_filter=1, resource_name_filter=None,
                                pattern_type_filter=1, principal_filter=None,
                                host_filter=None, operation=1, permission_type=1)
    response = request(cluster, broker, ApiKey.DESCRIBE_ACLS, every)
    assert response.error_code == 0, response
    return {(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host,
             a.operation, a.permission_type) for r in response.resources for a in r.acls}


def wait_for(cluster: kafkapy.Cluster, brokers: tuple[int, ...],
             expected: set[tuple[Any, ...]]) -> None:
    for b in brokers:
        cluster.wait_until(lambda b=b: acls_on(cluster, b) == expected,   # type: ignore[misc]
                           f"broker {b} to serve the ACLs {expected}", timeout=TIMEOUT)


# (resource type, name, pattern type, principal, host, operation, permission)
ORDERS_READ = (2, "orders", 3, "User:alice", "*", 3, 3)
APP_GROUPS = (3, "app-", 4, "User:alice", "*", 3, 3)


def test_created_on_one_broker_served_by_all(cluster: kafkapy.Cluster) -> None:
    creations = [AclCreation(resource_type=t, resource_name=n, resource_pattern_type=p,
                             principal=pr, host=h, operation=o, permission_type=pe)
                 for t, n, p, pr, h, o, pe in (ORDERS_READ, APP_GROUPS)]
    response = request(cluster, 1, ApiKey.CREATE_ACLS, CreateAclsRequest(creations=creations))
    assert [r.error_code for r in response.results] == [0, 0]

    # Kafka's znodes and JSON
    zk = cluster._zk()
    data, _ = zk.get(cluster._path("/kafka-acl/Topic/orders"))
    assert json.loads(data) == {"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read",
         "host": "*"}]}
    data, _ = zk.get(cluster._path("/kafka-acl-extended/prefixed/Group/app-"))
    assert json.loads(data)["acls"][0]["principal"] == "User:alice"
    assert [zk.get(cluster._path(f"/kafka-acl-changes/{c}"))[0]
            for c in zk.get_children(cluster._path("/kafka-acl-changes"))] == [b"TOPIC:orders"]
    (change,) = zk.get_children(cluster._path("/kafka-acl-extended-changes"))
    assert json.loads(zk.get(cluster._path(f"/kafka-acl-extended-changes/{change}"))[0]) == {
        "version": 1, "resourceType": "GROUP", "name": "app-", "patternType": "PREFIXED"}

    wait_for(cluster, (1, 2, 3), {ORDERS_READ, APP_GROUPS})

    # a client library sees the same on the cluster
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    found = admin.describe_acls(AclBindingFilter(
        ResourceType.TOPIC, "orders", ResourcePatternType.MATCH, None, None, AclOperation.ANY,
        AclPermissionType.ANY)).result(TIMEOUT)
    assert [(b.name, b.principal, b.operation) for b in found] == \
        [("orders", "User:alice", AclOperation.READ)]

    # deleted through broker 3: gone from broker 1 and 2 too, and from ZooKeeper
    delete = DeleteAclsFilter(resource_type_filter=1, resource_name_filter=None,
                              pattern_type_filter=1, principal_filter="User:alice",
                              host_filter=None, operation=1, permission_type=1)
    response = request(cluster, 3, ApiKey.DELETE_ACLS, DeleteAclsRequest(filters=[delete]))
    (result,) = response.filter_results
    assert result.error_code == 0 and len(result.matching_acls) == 2
    assert zk.exists(cluster._path("/kafka-acl/Topic/orders")) is None
    wait_for(cluster, (1, 2, 3), set())


def test_acls_written_to_zookeeper_by_kafka_tooling(cluster: kafkapy.Cluster) -> None:
    # What Kafka's ZooKeeper-mode kafka-acls.sh (--authorizer-properties zookeeper.connect=)
    # does: the resource's znode, then a change notification.
    zk = cluster._zk()
    zk.create(cluster._path("/kafka-acl/TransactionalId/tx-1"),
              b'{"version":1,"acls":[{"principal":"User:bob","permissionType":"Deny",'
              b'"operation":"Write","host":"10.1.1.1"}]}', makepath=True)
    zk.create(cluster._path("/kafka-acl-changes/acl_changes_"), b"TransactionalId:tx-1",
              sequence=True)
    wait_for(cluster, (1, 2, 3), {(5, "tx-1", 3, "User:bob", "10.1.1.1", 4, 2)})


def produce_error(cluster: kafkapy.Cluster, topic: str) -> Any:
    """The delivery error of one record produced to ``topic`` (None: appended)."""
    from confluent_kafka import Producer
    errors: list[Any] = []
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                         "message.timeout.ms": 10_000})
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(TIMEOUT)
    assert len(errors) == 1
    return errors[0]


def test_a_deny_created_through_one_broker_is_enforced_by_the_leader(
        cluster: kafkapy.Cluster) -> None:
    from confluent_kafka import KafkaError
    cluster.create_topic("locked", {0: [2, 3, 1]})
    cluster.create_topic("open", {0: [3, 1, 2]})
    assert cluster.wait_for_leader("locked", 0) in (1, 2, 3)
    cluster.wait_until(lambda: produce_error(cluster, "locked") is None,
                       "a first record in locked", timeout=TIMEOUT)
    deny = AclCreation(resource_type=2, resource_name="locked", resource_pattern_type=3,
                       principal="User:*", host="*", operation=4, permission_type=2)
    response = request(cluster, 1, ApiKey.CREATE_ACLS, CreateAclsRequest(creations=[deny]))
    assert [r.error_code for r in response.results] == [0]
    cluster.wait_until(
        lambda: getattr(produce_error(cluster, "locked"), "code", lambda: None)()
        == KafkaError.TOPIC_AUTHORIZATION_FAILED,
        "the leader of locked to refuse writes", timeout=TIMEOUT)
    assert produce_error(cluster, "open") is None
