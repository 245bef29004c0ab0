"""Kafka's znode formats (kafkapy.zk.zk_data): what Kafka 3.x writes decodes, what kafkapy
writes has Kafka's fields and types, and bytes that are not the format raise ZkDataError."""

from __future__ import annotations

import json
import uuid

import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.zk.zk_data import (
    PERSISTENT_PATHS,
    BrokerRegistration,
    ControllerRegistration,
    FeatureZNode,
    LeaderAndIsr,
    ProducerIdBlock,
    ReplicaAssignment,
    TopicAssignment,
    ZkDataError,
    cluster_id_decode,
    cluster_id_encode,
    config_change_encode,
    config_decode,
    config_encode,
    controller_epoch_decode,
    controller_epoch_encode,
    desanitize,
    isr_change_decode,
    isr_change_encode,
    partition_state_path,
    reassignment_decode,
    reassignment_encode,
    sanitize,
    topic_id_decode,
    topic_id_encode,
)

# Kafka's own documented v5 registration (BrokerIdZNode.decode's doc comment).
KAFKA_V5 = (b'{"version":5,"host":"localhost","port":9092,"jmx_port":9999,'
            b'"timestamp":"2233345666","endpoints":["CLIENT://host1:9092",'
            b'"REPLICATION://host1:9093"],"rack":"dc1","listener_security_protocol_map":'
            b'{"CLIENT":"SSL","REPLICATION":"PLAINTEXT"},"features":{"feature":'
            b'{"min_version":1,"first_active_version":2,"max_version":3}}}')


def test_broker_registration_reads_kafkas_v5() -> None:
    reg = BrokerRegistration.decode(7, KAFKA_V5)
    assert reg.broker_id == 7
    assert reg.endpoints == (("CLIENT", "SSL", "host1", 9092),
                             ("REPLICATION", "PLAINTEXT", "host1", 9093))
    assert reg.rack == "dc1"
    assert reg.timestamp_ms == 2233345666
    assert reg.jmx_port == 9999


def test_broker_registration_reads_v1_and_v4() -> None:
    v1 = BrokerRegistration.decode(1, b'{"version":1,"host":"h","port":9092,"jmx_port":-1,'
                                      b'"timestamp":"1"}')
    assert v1.endpoints == (("PLAINTEXT", "PLAINTEXT", "h", 9092),)
    v4 = BrokerRegistration.decode(2, b'{"version":4,"host":null,"port":-1,"jmx_port":-1,'
                                      b'"timestamp":"1","endpoints":["INTERNAL://[::1]:9094"],'
                                      b'"listener_security_protocol_map":'
                                      b'{"INTERNAL":"SASL_SSL"}}')
    assert v4.endpoints == (("INTERNAL", "SASL_SSL", "::1", 9094),)
    assert v4.rack is None


def test_broker_registration_writes_kafkas_v5_fields() -> None:
    reg = BrokerRegistration(3, (("EXTERNAL", "SSL", "a", 9093),
                                 ("PLAINTEXT", "PLAINTEXT", "b", 9092)),
                             rack="r1", timestamp_ms=1700000000000)
    obj = json.loads(reg.encode())
    assert obj == {"version": 5, "host": "b", "port": 9092,
                   "endpoints": ["EXTERNAL://a:9093", "PLAINTEXT://b:9092"], "jmx_port": -1,
                   "timestamp": "1700000000000",
                   "listener_security_protocol_map": {"EXTERNAL": "SSL",
                                                      "PLAINTEXT": "PLAINTEXT"},
                   "features": {}, "rack": "r1"}
    assert BrokerRegistration.decode(3, reg.encode()) == reg
    no_plaintext = json.loads(BrokerRegistration(4, (("S", "SSL", "h", 1),)).encode())
    assert (no_plaintext["host"], no_plaintext["port"]) == (None, -1)
    assert "rack" not in no_plaintext


def test_controller_and_epoch() -> None:
    data = ControllerRegistration(2, 1700000000123).encode()
    assert json.loads(data) == {"version": 2, "brokerid": 2, "timestamp": "1700000000123",
                                "kraftControllerEpoch": -1}
    assert ControllerRegistration.decode(data) == ControllerRegistration(2, 1700000000123)
    # Kafka 2.8's v1 (no kraftControllerEpoch) still reads.
    assert ControllerRegistration.decode(
        b'{"version":1,"brokerid":5,"timestamp":"9"}').broker_id == 5
    assert controller_epoch_encode(12) == b"12"
    assert controller_epoch_decode(b"12") == 12
    with pytest.raises(ZkDataError):
        controller_epoch_decode(b"twelve")


def test_cluster_id() -> None:
    assert json.loads(cluster_id_encode("abc")) == {"version": "1", "id": "abc"}
    assert cluster_id_decode(cluster_id_encode("abc")) == "abc"
    with pytest.raises(ZkDataError):
        cluster_id_decode(b'{"version":"1"}')


def test_topic_ids_are_kafkas_base64() -> None:
    # Kafka's Uuid.ONE_UUID (0, 1) prints as "AAAAAAAAAAAAAAAAAAAAAQ".
    one = uuid.UUID(int=1)
    assert topic_id_encode(one) == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert topic_id_decode("AAAAAAAAAAAAAAAAAAAAAQ") == one
    some = uuid.uuid4()
    assert topic_id_decode(topic_id_encode(some)) == some
    with pytest.raises(ZkDataError):
        topic_id_decode("not-a-uuid")


def test_topic_assignment() -> None:
    tid = uuid.UUID(int=1)
    assignment = TopicAssignment("orders", tid, {
        0: ReplicaAssignment((1, 2, 3)), 1: ReplicaAssignment((2, 3, 1), adding=(4,),
                                                               removing=(1,))})
    obj = json.loads(assignment.encode())
    assert obj == {"version": 3, "partitions": {"0": [1, 2, 3], "1": [2, 3, 1]},
                   "adding_replicas": {"1": [4]}, "removing_replicas": {"1": [1]},
                   "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ"}
    assert TopicAssignment.decode("orders", assignment.encode()) == assignment
    # Kafka 2.x's version 1 (no topic id, no adding/removing) reads too.
    old = TopicAssignment.decode("t", b'{"version":1,"partitions":{"0":[1],"1":[2]}}')
    assert old.topic_id is None
    assert old.partitions == {0: ReplicaAssignment((1,)), 1: ReplicaAssignment((2,))}
    with pytest.raises(ZkDataError):
        TopicAssignment.decode("t", b'{"version":3,"partitions":{"x":[1]}}')


def test_partition_state() -> None:
    tp = TopicPartition("orders", 3)
    assert partition_state_path(tp) == "/brokers/topics/orders/partitions/3/state"
    state = LeaderAndIsr(1, 4, (1, 2), controller_epoch=7, partition_epoch=9)
    assert json.loads(state.encode()) == {"version": 1, "leader": 1, "leader_epoch": 4,
                                          "controller_epoch": 7, "isr": [1, 2]}
    # The partition epoch is the znode's version, not part of the JSON.
    assert LeaderAndIsr.decode(tp, state.encode(), 9) == state
    with pytest.raises(ZkDataError):
        LeaderAndIsr.decode(tp, b'{"version":1,"leader":1}', 0)


def test_configs_and_notifications() -> None:
    assert json.loads(config_encode({"retention.ms": "1000"})) == {
        "version": 1, "config": {"retention.ms": "1000"}}
    assert config_decode(config_encode({"a": "b"})) == {"a": "b"}
    assert config_decode(None) == {}
    assert json.loads(config_change_encode("topics", "orders")) == {
        "version": 2, "entity_path": "topics/orders"}


def test_admin_requests_and_isr_changes() -> None:
    reassignment = {TopicPartition("t", 0): (1, 2), TopicPartition("t", 1): (2, 3)}
    data = reassignment_encode(reassignment)
    assert json.loads(data) == {"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 2]},
        {"topic": "t", "partition": 1, "replicas": [2, 3]}]}
    assert reassignment_decode(data) == reassignment
    changed = {TopicPartition("a", 1), TopicPartition("b", 0)}
    assert isr_change_decode(isr_change_encode(changed)) == changed


def test_producer_id_block() -> None:
    block = ProducerIdBlock(1, 1000, 1999)
    assert json.loads(block.encode()) == {"version": 1, "broker": 1, "block_start": "1000",
                                          "block_end": "1999"}
    assert ProducerIdBlock.decode(block.encode()) == block


@pytest.mark.parametrize("data", [b"", b"[]", b"{not json", b"\xff\xfe"])
def test_garbage_raises_zk_data_error(data: bytes) -> None:
    with pytest.raises(ZkDataError):
        BrokerRegistration.decode(1, data)


def test_persistent_paths_are_kafkas() -> None:
    assert set(PERSISTENT_PATHS) == {
        "/consumers", "/brokers/ids", "/brokers/topics", "/config/changes",
        "/admin/delete_topics", "/brokers/seqid", "/isr_change_notification",
        "/latest_producer_id_block", "/log_dir_event_notification", "/config/topics",
        "/config/clients", "/config/users", "/config/brokers", "/config/ips"}


def test_feature_znode_is_kafkas() -> None:
    """Kafka's FeatureZNode: v2 (3.3+) writes only max_version_level; v1 also the min (equal
    to the max when Kafka writes it) and requires it when read."""
    node = FeatureZNode({"group.version": 1, "a.version": 3})
    assert json.loads(node.encode()) == {
        "version": 2, "status": 1,
        "features": {"a.version": {"max_version_level": 3},
                     "group.version": {"max_version_level": 1}}}
    assert FeatureZNode.decode(node.encode()) == node
    v1 = FeatureZNode({"a.version": 2}, version=1)
    assert json.loads(v1.encode())["features"] == {
        "a.version": {"max_version_level": 2, "min_version_level": 2}}
    assert FeatureZNode.decode(
        b'{"version":1,"status":1,"features":{"f":{"min_version_level":1,'
        b'"max_version_level":4}}}') == FeatureZNode({"f": 4}, version=1)
    assert FeatureZNode.decode(b'{"version":2,"status":0,"features":{}}') == \
        FeatureZNode({}, status=0)


@pytest.mark.parametrize("data", [
    b'{"version":3,"status":1,"features":{}}',                  # unknown version
    b'{"version":2,"features":{}}',                             # no status
    b'{"version":2,"status":7,"features":{}}',                  # malformed status
    b'{"version":2,"status":1}',                                # no features
    b'{"version":2,"status":1,"features":{"f":{"max_version_level":0}}}',
    b'{"version":1,"status":1,"features":{"f":{"max_version_level":2}}}',   # v1 needs a min
    b'{"version":1,"status":1,"features":{"f":{"min_version_level":3,"max_version_level":2}}}',
])
def test_feature_znode_refuses_what_kafka_refuses(data: bytes) -> None:
    with pytest.raises(ZkDataError):
        FeatureZNode.decode(data)


@pytest.mark.parametrize(("name", "sanitized"), [
    ("alice", "alice"), ("a b", "a%20b"), ("a*b", "a%2Ab"),
    ("user@example.com", "user%40example.com"), ("x/y", "x%2Fy"), ("t~", "t%7E"),
    ("é", "%C3%A9"), ("a.b-c_d", "a.b-c_d")])
def test_sanitize_as_kafka(name: str, sanitized: str) -> None:
    """Kafka's Sanitizer: user names as znode names (URL-encoded; * and space as %2A, %20)."""
    assert sanitize(name) == sanitized
    assert desanitize(sanitized) == name
