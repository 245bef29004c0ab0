"""DescribeTopicPartitions (75) against an embedded ``kafkapy.Broker``: kafka-python's
``describe_topic_partitions`` (which sends it) walking the pages, and raw requests for the
pagination corners and errors of Kafka's DescribeTopicPartitionsRequestHandler.

The broker caps pages at ``max.request.partition.size.limit=5``; topics: a (3 partitions),
b (4), c (1), plus whatever other tests of the session created (only named topics are
asserted, except in the "every topic" walk, which checks its own three in order).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from kafkapy import Broker
from kafkapy.protocol import API_KEYS
from kafkapy.protocol.classes import struct_classes
from tests.clients.client_support import RawClient

TIMEOUT_MS = 10_000
C = struct_classes(API_KEYS[75].request.body)
ALL_TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))


@pytest.fixture(scope="module")
def broker() -> Iterator[Broker]:
    with Broker(config={"max.request.partition.size.limit": "5"}) as b:
        yield b


@pytest.fixture(scope="module")
def admin(broker: Broker) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers,
                              request_timeout_ms=TIMEOUT_MS)
    client.create_topics([NewTopic("dtp-a", 3, 1), NewTopic("dtp-b", 4, 1),
                          NewTopic("dtp-c", 1, 1)])
    yield client
    client.close()


def request(topics: list[str], limit: int = 2000,
            cursor: tuple[str, int] | None = None) -> Any:
    return C["DescribeTopicPartitionsRequest"](
        topics=[C["DescribeTopicPartitionsRequestTopicRequest"](name=t) for t in topics],
        response_partition_limit=limit,
        cursor=None if cursor is None else C["Cursor"](topic_name=cursor[0],
                                                       partition_index=cursor[1]))


def pages(admin: KafkaAdminClient, topics: list[str],
          limit: int) -> list[tuple[list[tuple[str, list[int]]], dict[str, Any] | None]]:
    """Every page of kafka-python's describe_topic_partitions: [(topic, partitions)], cursor."""
    out = []
    cursor = None
    for _ in range(20):
        page = admin.describe_topic_partitions(topics, response_partition_limit=limit,
                                               cursor=cursor)
        out.append(([(t["name"], [p["partition_index"] for p in t["partitions"]])
                     for t in page["topics"]], page["next_cursor"]))
        cursor = page["next_cursor"]
        if cursor is None:
            return out
    raise AssertionError("pagination did not end")


def test_kafka_python_walks_the_pages(admin: KafkaAdminClient) -> None:
    topics = ["dtp-c", "dtp-b", "dtp-a", "dtp-a"]      # answered sorted, once each
    assert pages(admin, topics, 3) == [
        ([("dtp-a", [0, 1, 2])], {"topic_name": "dtp-b", "partition_index": 0}),
        ([("dtp-b", [0, 1, 2])], {"topic_name": "dtp-b", "partition_index": 3}),
        ([("dtp-b", [3]), ("dtp-c", [0])], None),
    ]
    # The broker's max.request.partition.size.limit (5) caps a larger request limit; a
    # limit below 1 is 1.
    assert pages(admin, topics, 2000) == [
        ([("dtp-a", [0, 1, 2]), ("dtp-b", [0, 1])],
         {"topic_name": "dtp-b", "partition_index": 2}),
        ([("dtp-b", [2, 3]), ("dtp-c", [0])], None),
    ]
    assert pages(admin, ["dtp-c"], 0) == [([("dtp-c", [0])], None)]


def test_a_partition_as_kafka_describes_it(admin: KafkaAdminClient) -> None:
    page = admin.describe_topic_partitions(["dtp-c"])
    (topic,) = page["topics"]
    assert topic["error_code"] == 0 and not topic["is_internal"]
    assert topic["topic_id"] is not None
    assert topic["topic_authorized_operations"] == ALL_TOPIC_OPERATIONS
    (partition,) = topic["partitions"]
    assert partition == {
        "error_code": 0, "partition_index": 0, "leader_id": 1, "leader_epoch": 0,
        "replica_nodes": [1], "isr_nodes": [1], "eligible_leader_replicas": None,
        "last_known_elr": None, "offline_replicas": []}
    # The id is the one Metadata reports.
    (described,) = admin.describe_topics(["dtp-c"])
    assert str(topic["topic_id"]) == described["topic_id"]


def test_every_topic_when_none_is_named(broker: Broker, admin: KafkaAdminClient) -> None:
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(75, 0, request([], cursor=("dtp-a", 1)))
    names = [t.name for t in body.topics]
    assert names == sorted(names)
    assert names[:2] == ["dtp-a", "dtp-b"]           # nothing sorting before the cursor
    assert [p.partition_index for p in body.topics[0].partitions] == [1, 2]
    assert [p.partition_index for p in body.topics[1].partitions] == [0, 1, 2]
    assert (body.next_cursor.topic_name, body.next_cursor.partition_index) == ("dtp-b", 3)
    # The ELR lists are empty (not null) on the wire, as Kafka sends a partition without ELR.
    assert body.topics[0].partitions[0].eligible_leader_replicas == []
    assert body.topics[0].partitions[0].last_known_elr == []


def test_unknown_and_invalid_topics(broker: Broker, admin: KafkaAdminClient) -> None:
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(75, 0, request(["dtp-c", "no-such-topic", "bad/name"]))
    assert [(t.name, t.error_code, len(t.partitions)) for t in body.topics] == [
        ("bad/name", 17, 0), ("dtp-c", 0, 1), ("no-such-topic", 3, 0)]
    assert body.topics[0].topic_id.int == 0
    assert [t.topic_authorized_operations for t in body.topics] == [ALL_TOPIC_OPERATIONS] * 3
    assert body.next_cursor is None
    # The limit used up exactly at a topic's end: the cursor names the next topic at 0,
    # which need not exist.
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(75, 0, request(["dtp-c", "zz-missing"], limit=1))
    assert [t.name for t in body.topics] == ["dtp-c"]
    assert (body.next_cursor.topic_name, body.next_cursor.partition_index) == ("zz-missing", 0)


@pytest.mark.parametrize(("topics", "cursor"), [
    (["dtp-a"], ("dtp-b", 0)),          # the cursor's topic is not in the list
    (["dtp-a"], ("dtp-a", -1)),         # a negative partition
])
def test_invalid_cursor(broker: Broker, admin: KafkaAdminClient, topics: list[str],
                        cursor: tuple[str, int]) -> None:
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(75, 0, request(topics, cursor=cursor))
    assert [(t.name, t.error_code, t.partitions, t.is_internal) for t in body.topics] == [
        (name, 42, [], False) for name in topics]


def test_internal_topics_are_flagged(broker: Broker, admin: KafkaAdminClient) -> None:
    # A group commit creates __consumer_offsets.
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id="dtp-g",
                             enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition("dtp-c", 0): OffsetAndMetadata(0, "", -1)})
    finally:
        consumer.close()
    page = admin.describe_topic_partitions(["__consumer_offsets"], response_partition_limit=1)
    (topic,) = page["topics"]
    assert topic["is_internal"] and topic["error_code"] == 0
    assert page["next_cursor"] == {"topic_name": "__consumer_offsets", "partition_index": 1}
