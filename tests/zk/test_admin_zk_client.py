"""AdminZkClient against a real ZooKeeper: the znodes it writes are Kafka's, byte for byte in
structure (topic config and assignment v3 with topic id, delete marker, change
notifications v2)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from kafkapy.errors import (
    InvalidReplicaAssignmentError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from kafkapy.zk.admin_zk_client import AdminZkClient, TopicAlreadyMarkedForDeletionError
from kafkapy.zk.kafka_zk_client import KafkaZkClient
from kafkapy.zk.zk_data import topic_id_encode


@pytest.fixture
def admin(zk_connect: str) -> Iterator[AdminZkClient]:
    client = KafkaZkClient(zk_connect, session_timeout_ms=10_000)
    client.start()
    try:
        yield AdminZkClient(client)
    finally:
        client.close()


def test_create_topic_writes_config_then_assignment(admin: AdminZkClient) -> None:
    zk = admin.client.zk
    topic_id = uuid.uuid4()
    got = admin.create_topic_with_assignment("t", {"retention.ms": "100"},
                                             {0: [1, 2], 1: [2, 3]}, topic_id)
    assert got == topic_id
    assert json.loads(zk.get("/config/topics/t")[0]) == {
        "version": 1, "config": {"retention.ms": "100"}}
    assert json.loads(zk.get("/brokers/topics/t")[0]) == {
        "version": 3, "partitions": {"0": [1, 2], "1": [2, 3]}, "adding_replicas": {},
        "removing_replicas": {}, "topic_id": topic_id_encode(topic_id)}
    with pytest.raises(TopicAlreadyExistsError, match="already exists"):
        admin.create_topic_with_assignment("t", {}, {0: [1]})


def test_add_partitions_is_conditional(admin: AdminZkClient) -> None:
    admin.create_topic_with_assignment("t", {}, {0: [1]})
    current = admin.get_assignment("t")
    assert current is not None
    assignment, version = current
    admin.add_partitions("t", assignment, version, {1: [2], 2: [1]})
    data = json.loads(admin.client.zk.get("/brokers/topics/t")[0])
    assert data["partitions"] == {"0": [1], "1": [2], "2": [1]}
    assert data["topic_id"] == topic_id_encode(assignment.topic_id)  # type: ignore[arg-type]
    with pytest.raises(InvalidReplicaAssignmentError):
        admin.add_partitions("t", assignment, version, {1: [3]})   # stale version


def test_delete_topic_marks_it(admin: AdminZkClient) -> None:
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.delete_topic("nope")
    admin.create_topic_with_assignment("t", {}, {0: [1]})
    admin.delete_topic("t")
    assert admin.client.zk.exists("/admin/delete_topics/t") is not None
    with pytest.raises(TopicAlreadyMarkedForDeletionError):
        admin.delete_topic("t")
    with pytest.raises(TopicAlreadyExistsError, match="marked for deletion"):
        admin.validate_topic_create("t")


def test_change_configs_notifies(admin: AdminZkClient) -> None:
    zk = admin.client.zk
    admin.change_configs("brokers", "<default>", {"log.retention.ms": "5"})
    admin.change_configs("topics", "t", {"cleanup.policy": "compact"})
    assert admin.fetch_entity_config("brokers", "<default>") == {"log.retention.ms": "5"}
    assert admin.fetch_entity_config("topics", "missing") == {}
    changes = sorted(zk.get_children("/config/changes"))
    assert changes == ["config_change_0000000000", "config_change_0000000001"]
    assert [json.loads(zk.get(f"/config/changes/{c}")[0]) for c in changes] == [
        {"version": 2, "entity_path": "brokers/<default>"},
        {"version": 2, "entity_path": "topics/t"}]
