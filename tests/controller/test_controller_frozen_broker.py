"""Controller requests while one broker is frozen (SIGSTOP, not past its ZooKeeper session, so
the controller still counts it alive): AlterPartitionReassignments adding it, ElectLeaders of a
partition it replicates, CreateTopics with replicas on it and DeleteTopics of a topic it holds
are all answered without error (Kafka's controller writes ZooKeeper and queues its requests to
the frozen broker on that broker's own channel; it waits for no broker), and once it wakes the
reassignment and the deletion complete, with every record acknowledged with acks=all before,
during and after readable exactly once.

The brokers run with ``num.io.threads=1``: a request that waits while holding the broker's one
request-handler slot (instead of parking, as Kafka's purgatories do) starves the controller's
own UpdateMetadata to its broker and answers REQUEST_TIMED_OUT after its timeout; with the
default 8 slots the same takes 8 waiting admin requests. The clients' request timeout is
longer than the requests' ``timeout_ms``, so a hang shows as the broker's timeout (or, for a
request with none, the client's). See ``admin_of`` for a wait that is kafka-python's own."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from kafka import KafkaAdminClient, KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.admin import NewTopic

import kafkapy
from kafkapy.cluster import Cluster
from kafkapy.zk.zk_data import ReplicaAssignment, TopicAssignment, delete_topic_path, topic_path
from kafkapy.zk.zookeeper_server import ZooKeeperServer

WAIT_S = 120.0       # every wait is bounded; a loaded CI machine is slow after SIGCONT
SERVER_TIMEOUT_MS = 30_000          # the requests' timeout_ms: the broker's longest wait
CLIENT_TIMEOUT_MS = 90_000          # longer: a hung request ends as the broker's timeout
# A short controller.socket.timeout.ms: a freeze of a few seconds outlasts the controller's
# wait for the frozen broker's answer, so its requests are retried (the per-broker queue).
SOCKET_TIMEOUT_MS = 2000
# A long replica.lag.time.max.ms: a follower the leader does not count caught up stays in
# the ISR for the whole test, so a high watermark it holds back stays held back (instead of
# moving on once the ISR shrinks), and the records above it are missing from the read.
SETTINGS = {"zookeeper.session.timeout.ms": 90_000, "num.io.threads": 1,
            "controller.socket.timeout.ms": SOCKET_TIMEOUT_MS,
            "replica.lag.time.max.ms": 180_000,
            "auto.leader.rebalance.enable": "false", "offsets.topic.num.partitions": 1}


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperServer) -> Iterator[Cluster]:
    with kafkapy.Cluster(3, SETTINGS, zookeeper_connect=zookeeper.connect_string,
                         timeout=WAIT_S) as c:
        c.wait_for_controller(timeout=WAIT_S)
        yield c


def roles(cluster: Cluster) -> tuple[int, int, int]:
    """(controller, the broker to freeze, the third)."""
    controller = cluster.wait_for_controller(timeout=WAIT_S)
    frozen, other = (b for b in sorted(cluster.brokers) if b != controller)
    return controller, frozen, other


@contextlib.contextmanager
def frozen_broker(cluster: Cluster, broker_id: int) -> Iterator[None]:
    cluster.pause(broker_id)
    try:
        yield
    finally:
        cluster.resume(broker_id)


@contextlib.contextmanager
def admin_of(cluster: Cluster, *brokers: int) -> Iterator[KafkaAdminClient]:
    """An admin client that knows the controller; enter it before freezing a broker.

    kafka-python looks the controller up (Metadata) on a broker picked at random among all
    it knows, and when that is the frozen one its connection setup times out ("Request timed
    out after 9999 ms", kafka-python's RequestTimedOutError) and the call fails without
    trying another broker (Java's AdminClient retries elsewhere). That is the client's wait,
    not the broker's: these tests look the controller up while every broker answers."""
    admin = KafkaAdminClient(bootstrap_servers=",".join(cluster.brokers[b].bootstrap
                                                        for b in brokers),
                             request_timeout_ms=CLIENT_TIMEOUT_MS)
    try:
        admin.list_partition_reassignments()        # finds and connects to the controller
        yield admin
    finally:
        admin.close()


def assignment(cluster: Cluster, topic: str) -> dict[int, ReplicaAssignment]:
    data, _ = cluster._zk().get(cluster._path(topic_path(topic)))
    return dict(TopicAssignment.decode(topic, data).partitions)


def produce(cluster: Cluster, brokers: list[int], topic: str, values: range) -> None:
    """acks=all; every record must be acknowledged without error."""
    producer = Producer({"bootstrap.servers": ",".join(cluster.brokers[b].bootstrap
                                                      for b in brokers),
                         "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    errors: list[str] = []

    def delivered(err: object, msg: object) -> None:
        if err is not None:
            errors.append(str(err))
    for v in values:
        producer.produce(topic, str(v).encode(), partition=0, on_delivery=delivered)
    assert producer.flush(WAIT_S) == 0
    assert errors == []


def read_all(cluster: Cluster, topic: str, expected: int) -> list[int]:
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id=None,
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             consumer_timeout_ms=int(WAIT_S * 1000))
    try:
        tp = KafkaTopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        out: list[int] = []
        for record in consumer:
            out.append(int(record.value))
            if len(out) >= expected:
                break
        # Anything after what was expected is a duplicate: read what is there.
        extra = consumer.poll(timeout_ms=1000)
        out.extend(int(r.value) for batch in extra.values() for r in batch)
        return out
    finally:
        consumer.close()


def test_a_reassignment_to_a_frozen_broker_is_answered_and_completes_when_it_wakes(
        cluster: Cluster) -> None:
    controller, frozen, other = roles(cluster)
    topic = "moving"
    cluster.create_topic(topic, {0: [controller, other]}, {"min.insync.replicas": "2"})
    cluster.wait_for_isr(topic, 0, 2, timeout=WAIT_S)
    produce(cluster, [controller, other], topic, range(0, 300))
    target = [controller, other, frozen]
    with admin_of(cluster, controller, other) as admin, frozen_broker(cluster, frozen):
        result = admin.alter_partition_reassignments(
            {KafkaTopicPartition(topic, 0): target}, timeout_ms=SERVER_TIMEOUT_MS)
        assert result == {KafkaTopicPartition(topic, 0): None}
        # Started, not finished: the frozen broker is being added.
        assert assignment(cluster, topic)[0] == ReplicaAssignment(tuple(target), (frozen,))
        ongoing = admin.list_partition_reassignments([KafkaTopicPartition(topic, 0)])
        assert [(tp.partition, r["adding_replicas"]) for tp, r in ongoing.items()] == \
            [(0, [frozen])]
        # The ISR is still the two live replicas: acks=all writes go on.
        produce(cluster, [controller, other], topic, range(300, 600))
        # Frozen past the controller's socket timeout: its LeaderAndIsr is sent again.
        time.sleep(2 * SOCKET_TIMEOUT_MS / 1000)
    cluster.wait_until(lambda: assignment(cluster, topic)[0] == ReplicaAssignment(tuple(target)),
                       "the reassignment to complete", timeout=WAIT_S, broker_id=controller)
    assert sorted(cluster.wait_for_isr(topic, 0, 3, timeout=WAIT_S)) == sorted(target)
    produce(cluster, list(cluster.brokers), topic, range(600, 900))
    # Read through the replica that was frozen: it leads once it is the preferred replica.
    # The old leader (which took a leader epoch it wrote nothing in) must be counted caught
    # up by it for the high watermark to reach the records written last.
    with admin_of(cluster, controller, other) as admin:
        admin.alter_partition_reassignments(
            {KafkaTopicPartition(topic, 0): [frozen, controller, other]})
        cluster.wait_until(lambda: assignment(cluster, topic)[0] ==
                           ReplicaAssignment((frozen, controller, other)),
                           "the new replica order", timeout=WAIT_S)
        admin.elect_leaders(0, {topic: [0]}, timeout_ms=SERVER_TIMEOUT_MS)
    assert cluster.leader_of(topic, 0) == frozen
    values = read_all(cluster, topic, 900)
    lost = set(range(900)) - set(values)
    duplicated = len(values) - len(set(values))
    assert (len(lost), duplicated) == (0, 0)
    assert values == sorted(values)


def test_a_preferred_election_is_answered_while_a_replica_is_frozen(cluster: Cluster) -> None:
    controller, frozen, other = roles(cluster)
    topic = "elected"
    cluster.create_topic(topic, {0: [controller, other, frozen]})
    cluster.wait_for_isr(topic, 0, 3, timeout=WAIT_S)
    with admin_of(cluster, controller, other) as admin:
        # The same replicas in another order: complete at once, the leader kept; the
        # preferred leader is now `other`.
        admin.alter_partition_reassignments(
            {KafkaTopicPartition(topic, 0): [other, controller, frozen]})
        cluster.wait_until(lambda: assignment(cluster, topic)[0].replicas ==
                           (other, controller, frozen), "the new replica order",
                           timeout=WAIT_S)
        assert cluster.leader_of(topic, 0) == controller
        with frozen_broker(cluster, frozen):
            response = admin.elect_leaders(0, {topic: [0]}, timeout_ms=SERVER_TIMEOUT_MS)
            errors = [(r.topic, p.partition_id, p.error_code)
                      for r in response.replica_election_results for p in r.partition_result]
            assert errors == [(topic, 0, 0)]
            assert cluster.leader_of(topic, 0) == other


def test_topics_are_created_and_deleted_while_a_replica_is_frozen(cluster: Cluster) -> None:
    controller, frozen, other = roles(cluster)
    cluster.create_topic("doomed", {0: [controller, frozen], 1: [frozen, other]})
    for p in (0, 1):
        cluster.wait_for_isr("doomed", p, 2, timeout=WAIT_S)
    with admin_of(cluster, controller, other) as admin, frozen_broker(cluster, frozen):
        created = admin.create_topics(
            [NewTopic("born", replica_assignments={0: [controller, frozen],
                                                   1: [frozen, other]})],
            timeout_ms=SERVER_TIMEOUT_MS, raise_errors=False)
        assert [(t["name"], t["error_code"]) for t in created["topics"]] == [("born", 0)]
        assert cluster.leader_of("born", 0) == controller
        assert cluster.leader_of("born", 1) == frozen     # alive in ZooKeeper
        deleted = admin.delete_topics(["doomed"], timeout_ms=SERVER_TIMEOUT_MS,
                                      raise_errors=False)
        assert [(t["name"], t["error_code"]) for t in deleted["topics"]] == \
            [("doomed", 0)]
        # Answered once the metadata dropped it; the znodes wait for the frozen replica's
        # StopReplica answer.
        zk = cluster._zk()
        assert zk.exists(cluster._path(delete_topic_path("doomed"))) is not None
        assert zk.exists(cluster._path(topic_path("doomed"))) is not None
    cluster.wait_until(lambda: cluster._zk().exists(cluster._path(topic_path("doomed")))
                       is None, "the deletion to complete", timeout=WAIT_S,
                       broker_id=controller)
    assert cluster._zk().exists(cluster._path(delete_topic_path("doomed"))) is None
    cluster.wait_for_isr("born", 1, 2, timeout=WAIT_S)
