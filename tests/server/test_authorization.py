"""Requests authorized as Kafka's KafkaApis authorizes them (Produce, Fetch, Metadata,
CreateTopics), on one broker with an AclAuthorizer and no super user: every PLAINTEXT client is
User:ANONYMOUS, given ACLs per topic; real clients (confluent-kafka) and raw requests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafkapy.clients.network_client import BrokerConnection
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    FetchPartition,
    FetchRequest,
    FetchTopic,
    InitProducerIdRequest,
)
from kafkapy.security.authorizer.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafkapy.security.authorizer.acl_store import FileAclStore
from kafkapy.testing import BrokerHandle

ANON = "User:ANONYMOUS"
TIMEOUT = 30.0
TOPICS = ("rw", "ro", "hidden", "denied")


def _acl(op: AclOperation, perm: AclPermissionType = AclPermissionType.ALLOW
         ) -> AccessControlEntry:
    return AccessControlEntry(ANON, "*", op, perm)


ACLS = {
    ResourcePattern(ResourceType.TOPIC, "rw", PatternType.LITERAL):
        {_acl(AclOperation.READ), _acl(AclOperation.WRITE)},
    ResourcePattern(ResourceType.TOPIC, "ro", PatternType.LITERAL): {_acl(AclOperation.READ)},
    ResourcePattern(ResourceType.TOPIC, "denied", PatternType.LITERAL):
        {_acl(AclOperation.ALL), _acl(AclOperation.WRITE, AclPermissionType.DENY)},
    ResourcePattern(ResourceType.TOPIC, "auto-", PatternType.PREFIXED):
        {_acl(AclOperation.CREATE)},
    ResourcePattern(ResourceType.GROUP, "app-", PatternType.PREFIXED): {_acl(AclOperation.READ)},
}


@pytest.fixture
def broker(tmp_path: Path, kafka_broker_factory: Callable[..., BrokerHandle]
           ) -> Iterator[BrokerHandle]:
    # The ACLs are in the log dir before the broker starts (it loads them at start).
    store = FileAclStore(tmp_path)
    for pattern, entries in ACLS.items():
        store.update(pattern, lambda _current, e=frozenset(entries): e)
    handle = kafka_broker_factory(
        {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"},
        data_dir=tmp_path)
    for name in TOPICS:
        handle.create_topic(name)       # the broker's own admin: no authorization
    yield handle


def produce(broker: BrokerHandle, topic: str) -> KafkaError | None:
    errors: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers,
                         "message.timeout.ms": 10_000})
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(TIMEOUT)
    assert len(errors) == 1
    return errors[0]


def test_produce_needs_write(broker: BrokerHandle) -> None:
    assert produce(broker, "rw") is None
    assert broker.end_offsets("rw") == {0: 1}
    for topic in ("ro", "denied", "hidden"):
        error = produce(broker, topic)
        assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, \
            (topic, error)
        assert broker.end_offsets(topic) == {0: 0}      # the log is unchanged


def request(broker: BrokerHandle, api_key: int, version: int, body: Any) -> Any:
    async def go() -> Any:
        conn = BrokerConnection("127.0.0.1", broker.port, timeout_s=TIMEOUT)
        try:
            return await conn.request(api_key, version, body)
        finally:
            await conn.close()
    return trio.run(go)


def raw_fetch(broker: BrokerHandle, topics: list[str], replica_id: int = -1) -> dict[str, int]:
    body = FetchRequest(replica_id=replica_id, max_wait_ms=0, min_bytes=0, topics=[
        FetchTopic(topic=t, partitions=[FetchPartition(partition=0, fetch_offset=0,
                                                       partition_max_bytes=1 << 20)])
        for t in topics])
    response = request(broker, ApiKey.FETCH, 11, body)
    return {t.topic: p.error_code for t in response.responses for p in t.partitions}


def test_fetch_needs_read(broker: BrokerHandle) -> None:
    broker.produce("ro", b"r")          # in-process: no authorization
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "app-fetch",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition("ro", 0, 0)])
        message = consumer.poll(TIMEOUT)
        assert message is not None and message.error() is None and message.value() == b"r"
    finally:
        consumer.close()
    assert raw_fetch(broker, ["ro", "hidden", "rw"]) == {"ro": 0, "hidden": 29, "rw": 0}
    # a replica's fetch needs CLUSTER_ACTION on the cluster: every partition refused
    assert raw_fetch(broker, ["ro"], replica_id=2) == {"ro": 29}


def test_metadata_shows_what_may_be_described(broker: BrokerHandle) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    listed = admin.list_topics(timeout=TIMEOUT)
    assert set(listed.topics) == {"rw", "ro", "denied"}        # READ/WRITE/ALL imply DESCRIBE
    named = admin.list_topics(topic="hidden", timeout=TIMEOUT)
    assert named.topics["hidden"].error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_create_topics_needs_create(broker: BrokerHandle) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    futures = admin.create_topics([NewTopic("auto-1", 1), NewTopic("other", 1)])
    assert futures["auto-1"].result(TIMEOUT) is None
    with pytest.raises(Exception) as e:
        futures["other"].result(TIMEOUT)
    assert e.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert set(broker.topics()) == {*TOPICS, "auto-1"}


def test_idempotent_and_transactional_producers(broker: BrokerHandle) -> None:
    # No IDEMPOTENT_WRITE on the cluster, but WRITE on a topic ("rw"): enough for an
    # idempotent producer (Kafka's authorizeByResourceType).
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers,
                         "enable.idempotence": True, "message.timeout.ms": 10_000})
    errors: list[KafkaError | None] = []
    producer.produce("rw", b"once", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(TIMEOUT)
    assert errors == [None]
    # A transactional id needs WRITE on it: there is no such ACL.
    response = request(broker, ApiKey.INIT_PRODUCER_ID, 4, InitProducerIdRequest(
        transactional_id="tx", transaction_timeout_ms=60_000))
    assert response.error_code == 53          # TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_idempotence_needs_some_write(tmp_path: Path,
                                      kafka_broker_factory: Callable[..., BrokerHandle]) -> None:
    FileAclStore(tmp_path).update(
        ResourcePattern(ResourceType.TOPIC, "*", PatternType.LITERAL),
        lambda _current: frozenset({_acl(AclOperation.READ)}))
    handle = kafka_broker_factory(
        {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"},
        data_dir=tmp_path)
    response = request(handle, ApiKey.INIT_PRODUCER_ID, 4, InitProducerIdRequest(
        transactional_id=None, transaction_timeout_ms=60_000))
    assert (response.error_code, response.producer_id) == (31, -1)   # CLUSTER_AUTHORIZATION_FAILED


def consume_in_group(broker: BrokerHandle, group: str) -> Any:
    """The first message (or error) a consumer in ``group`` subscribed to "ro" gets."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe(["ro"])
        return consumer.poll(TIMEOUT)
    finally:
        consumer.close()


def test_groups_need_read(broker: BrokerHandle) -> None:
    broker.produce("ro", b"g")
    message = consume_in_group(broker, "app-1")
    assert message is not None and message.error() is None and message.value() == b"g"
    refused = consume_in_group(broker, "other")
    assert refused is not None and refused.error() is not None
    assert refused.error().code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    listed = admin.list_consumer_groups().result(TIMEOUT)
    assert [g.group_id for g in listed.valid] == ["app-1"]      # "other" is not described
    from confluent_kafka.admin import AclOperation as Op
    described = admin.describe_consumer_groups(
        ["app-1"], include_authorized_operations=True)["app-1"].result(TIMEOUT)
    assert sorted(described.authorized_operations) == [Op.READ, Op.DESCRIBE]


def test_delete_topics_and_create_partitions(broker: BrokerHandle) -> None:
    from confluent_kafka.admin import NewPartitions
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    futures = admin.delete_topics(["ro", "denied"], operation_timeout=TIMEOUT)
    assert futures["denied"].result(TIMEOUT) is None          # ALL allows DELETE
    with pytest.raises(Exception) as e:
        futures["ro"].result(TIMEOUT)
    assert e.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    futures = admin.create_partitions([NewPartitions("ro", 2)])
    with pytest.raises(Exception) as e:
        futures["ro"].result(TIMEOUT)
    assert e.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert broker.topics() == {"rw": 1, "ro": 1, "hidden": 1}


def test_list_offsets_needs_describe_and_delete_records_delete(broker: BrokerHandle) -> None:
    from kafkapy.protocol.message_classes import (
        DeleteRecordsPartition,
        DeleteRecordsRequest,
        DeleteRecordsTopic,
        ListOffsetsPartition,
        ListOffsetsRequest,
        ListOffsetsTopic,
    )
    body = ListOffsetsRequest(replica_id=-1, topics=[
        ListOffsetsTopic(name=t, partitions=[ListOffsetsPartition(partition_index=0,
                                                                  timestamp=-1)])
        for t in ("ro", "hidden")])
    response = request(broker, ApiKey.LIST_OFFSETS, 5, body)
    assert {t.name: t.partitions[0].error_code for t in response.topics} == \
        {"ro": 0, "hidden": 29}
    broker.produce("ro", b"x")
    body2 = DeleteRecordsRequest(timeout_ms=10_000, topics=[DeleteRecordsTopic(
        name="ro", partitions=[DeleteRecordsPartition(partition_index=0, offset=1)])])
    response = request(broker, ApiKey.DELETE_RECORDS, 2, body2)
    assert response.topics[0].partitions[0].error_code == 29
    earliest = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(
        name="ro", partitions=[ListOffsetsPartition(partition_index=0, timestamp=-2)])])
    response = request(broker, ApiKey.LIST_OFFSETS, 5, earliest)
    assert response.topics[0].partitions[0].offset == 0         # nothing was deleted


def test_configs_need_describe_and_alter_configs(broker: BrokerHandle) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    # "denied" has ALL (DESCRIBE_CONFIGS and ALTER_CONFIGS), "ro" only READ, the cluster none
    futures = admin.describe_configs([ConfigResource("topic", "denied"),
                                      ConfigResource("topic", "ro"),
                                      ConfigResource("broker", str(broker.server.node_id))])
    results = list(futures.values())
    assert "retention.ms" in results[0].result(TIMEOUT)
    for future, code in ((results[1], KafkaError.TOPIC_AUTHORIZATION_FAILED),
                         (results[2], KafkaError.CLUSTER_AUTHORIZATION_FAILED)):
        with pytest.raises(Exception) as e:
            future.result(TIMEOUT)
        assert e.value.args[0].code() == code
    futures = admin.incremental_alter_configs([ConfigResource(
        "topic", "ro", incremental_configs=[ConfigEntry(
            "retention.ms", "1000", incremental_operation=AlterConfigOpType.SET)])])
    with pytest.raises(Exception) as e:
        next(iter(futures.values())).result(TIMEOUT)
    assert e.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert "retention.ms" not in broker.topic_config("ro")


def test_cluster_apis_need_cluster_permissions(broker: BrokerHandle) -> None:
    from kafkapy.protocol.message_classes import DescribeClusterRequest, DescribeLogDirsRequest
    response = request(broker, ApiKey.DESCRIBE_LOG_DIRS, 4, DescribeLogDirsRequest(topics=None))
    assert (response.error_code, response.results) == (31, [])
    # DescribeCluster is answered, with no authorized cluster operation (no ACL on it)
    response = request(broker, ApiKey.DESCRIBE_CLUSTER, 0, DescribeClusterRequest(
        include_cluster_authorized_operations=True))
    assert (response.error_code, response.cluster_authorized_operations) == (0, 0)


def test_offset_commit_needs_read_on_the_topic(broker: BrokerHandle) -> None:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "app-c",
                         "enable.auto.commit": False})
    try:
        try:
            committed = consumer.commit(offsets=[TopicPartition("ro", 0, 1),
                                                 TopicPartition("hidden", 0, 1)],
                                        asynchronous=False)
            errors = {tp.topic: tp.error for tp in committed}
        except Exception as e:        # librdkafka raises when a partition failed
            errors = {"ro": None, "hidden": e.args[0]}
        assert errors["ro"] is None
        assert errors["hidden"].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        consumer.close()
    assert broker.committed_offsets("app-c") == {("ro", 0): 1}


def test_describe_topic_partitions_and_producers(broker: BrokerHandle) -> None:
    from kafkapy.protocol.message_classes import (
        DescribeProducersRequest,
        DescribeTopicPartitionsRequest,
        DescribeTopicPartitionsRequestTopicRequest,
        TopicRequest,
    )
    every = request(broker, ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0,
                    DescribeTopicPartitionsRequest(topics=[], cursor=None))
    assert [t.name for t in every.topics] == ["denied", "ro", "rw"]
    named = request(broker, ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, DescribeTopicPartitionsRequest(
        topics=[DescribeTopicPartitionsRequestTopicRequest(name=n) for n in ("hidden", "ro")],
        cursor=None))
    assert {t.name: t.error_code for t in named.topics} == {"hidden": 29, "ro": 0}
    # "ro" allows READ only: of the topic operations, READ and the DESCRIBE it implies
    (ro,) = [t for t in named.topics if t.name == "ro"]
    assert ro.topic_authorized_operations == (1 << 3) | (1 << 8)
    producers = request(broker, ApiKey.DESCRIBE_PRODUCERS, 0, DescribeProducersRequest(topics=[
        TopicRequest(name=n, partition_indexes=[0]) for n in ("ro", "hidden")]))
    assert {t.name: t.partitions[0].error_code for t in producers.topics} == \
        {"ro": 0, "hidden": 29}


def test_consumer_group_protocol_checks_group_and_topics(broker: BrokerHandle) -> None:
    from kafkapy.protocol.message_classes import ConsumerGroupHeartbeatRequest

    def heartbeat(group: str, topics: list[str]) -> int:
        response = request(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 0,
                           ConsumerGroupHeartbeatRequest(
                               group_id=group, member_id="", member_epoch=0,
                               rebalance_timeout_ms=30_000, subscribed_topic_names=topics,
                               server_assignor=None, topic_partitions=[]))
        return int(response.error_code)

    assert heartbeat("app-k", ["ro"]) == 0
    assert heartbeat("app-k2", ["ro", "hidden"]) == 29      # TOPIC_AUTHORIZATION_FAILED
    assert heartbeat("other", ["ro"]) == 30                  # GROUP_AUTHORIZATION_FAILED
