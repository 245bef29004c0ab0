"""Replication between real brokers (ZooKeeper mode's data plane): LeaderAndIsr v6 and
StopReplica v3 make brokers leaders and followers, followers replicate the leader's bytes at
the same offsets, the high watermark follows the ISR, acks=all waits for it, ISR changes go to
the controller as AlterPartition v2, and a deposed leader's divergent tail is truncated.

The test plays the controller: it reads the elected controller's id and epoch from the real
ZooKeeper the brokers registered in and sends the requests itself (topics it never writes to
``/brokers/topics``, so a real controller leaves them alone). A small recording server
(``FakeController``) answers AlterPartition by committing what was asked, as a controller
would, so the leaders' ISR changes can be seen on the wire.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

import kafkapy
from kafkapy.clients.network_client import BrokerConnection
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.log.checkpoints import read_partition_metadata
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionResponseAlterPartitionPartitionData,
    AlterPartitionResponseAlterPartitionTopicData,
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
    FetchPartition,
    FetchRequest,
    FetchTopic,
    LeaderAndIsrLiveLeader,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrTopicState,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
    PartitionProduceData,
    ProduceRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaTopicState,
    TopicProduceData,
)
from kafkapy.protocol.records import build_batch
from kafkapy.zk.zookeeper_server import ZooKeeperServer
from tests.fake_peer import FakePeer
from tests.log.log_open_spy import spy_log_open

TIMEOUT = 20.0
LAG_MS = 1500
SETTINGS = {
    "replica.lag.time.max.ms": LAG_MS,
    "replica.fetch.wait.max.ms": 200,
    "replica.fetch.backoff.ms": 100,
    # Small enough that fetch responses end in the middle of a batch.
    "replica.fetch.max.bytes": 200,
    "min.insync.replicas": 2,
}
_names = itertools.count()

NONE, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION = 0, 6, 3
STALE_CONTROLLER_EPOCH, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS = 11, 7, 19
NOT_ENOUGH_REPLICAS_AFTER_APPEND, FENCED_LEADER_EPOCH, STALE_BROKER_EPOCH = 20, 74, 77
INCONSISTENT_TOPIC_ID = 103


# ============================================================ the controller's stand-in

class FakeController(FakePeer):
    """Answers AlterPartition v2 by committing the asked ISR (partition epoch + 1), recording
    every request."""

    def __init__(self) -> None:
        super().__init__(self._commit)

    @staticmethod
    def _commit(api_key: int, version: int, body: AlterPartitionRequest) -> Any:
        assert api_key == ApiKey.ALTER_PARTITION
        return AlterPartitionResponse(throttle_time_ms=0, error_code=0, topics=[
            AlterPartitionResponseAlterPartitionTopicData(
                topic_id=t.topic_id, partitions=[
                    AlterPartitionResponseAlterPartitionPartitionData(
                        partition_index=p.partition_index, error_code=0,
                        leader_id=body.broker_id, leader_epoch=p.leader_epoch,
                        isr=list(p.new_isr), partition_epoch=p.partition_epoch + 1)
                    for p in t.partitions]) for t in body.topics])

    def isr_changes(self, topic_id: uuid.UUID) -> list[tuple[int, int, list[int], int]]:
        """(broker id, leader epoch, new ISR, partition epoch) of every change asked for
        ``topic_id``."""
        return [(r.broker_id, p.leader_epoch, list(p.new_isr), p.partition_epoch)
                for _, _, r in self.received() for t in r.topics if t.topic_id == topic_id
                for p in t.partitions]


# ============================================================================ fixtures

@pytest.fixture(scope="module")
def zookeeper() -> Iterator[ZooKeeperServer]:
    with ZooKeeperServer() as zk:
        yield zk


@pytest.fixture(scope="module")
def fake_controller() -> Iterator[FakeController]:
    with FakeController() as fc:
        assert isinstance(fc, FakeController)
        yield fc


def start_broker(zk_connect: str, broker_id: int, fc: FakeController,
                 data_dir: Path | None = None) -> kafkapy.Broker:
    broker = kafkapy.Broker(zookeeper_connect=zk_connect, broker_id=broker_id,
                            data_dir=data_dir,
                            **{k.replace(".", "_"): v for k, v in SETTINGS.items()}).start()
    broker.call(_point_at, broker, fc.port)
    return broker


def _point_at(broker: kafkapy.Broker, port: int) -> None:
    broker.server.replica_manager.alter_partition_manager.controller_endpoint = \
        lambda: ("127.0.0.1", port)


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperServer, fake_controller: FakeController
            ) -> Iterator[dict[int, kafkapy.Broker]]:
    connect = f"{zookeeper.connect_string}/kafkapy-replication"
    brokers: dict[int, kafkapy.Broker] = {}
    try:
        for i in (1, 2, 3):
            brokers[i] = start_broker(connect, i, fake_controller)
        wait_for(lambda: _controller(brokers) is not None, "a controller")
        yield brokers
    finally:
        for b in brokers.values():
            b.stop()


# ============================================================================= helpers

def wait_for(condition: Callable[[], Any], what: str, timeout: float = TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _controller(brokers: dict[int, kafkapy.Broker]) -> tuple[int, int] | None:
    """(controller id, controller epoch) from ZooKeeper."""
    hc = next(iter(brokers.values())).server.healthcheck
    assert hc is not None
    cid = hc.client.get_controller_id()
    epoch = hc.client.get_controller_epoch()
    return None if cid is None or epoch is None else (cid, epoch[0])


def send(broker: kafkapy.Broker, api_key: int, version: int, body: Any) -> Any:
    async def go() -> Any:
        conn = BrokerConnection("127.0.0.1", broker.port, timeout_s=TIMEOUT)
        try:
            return await conn.request(api_key, version, body)
        finally:
            await conn.close()
    return trio.run(go)


def broker_epoch(broker: kafkapy.Broker) -> int:
    hc = broker.server.healthcheck
    assert hc is not None
    return hc.broker_epoch


def leader_and_isr(cluster: dict[int, kafkapy.Broker], to: int, topic: str,
                   topic_id: uuid.UUID, leader: int, leader_epoch: int, isr: list[int],
                   replicas: list[int], *, partition: int = 0, partition_epoch: int = 0,
                   controller_epoch: int | None = None, epoch_of_broker: int | None = None
                   ) -> list[int]:
    """Send LeaderAndIsr v6 for one partition to broker ``to``; returns [top-level error,
    partition error]."""
    found = _controller(cluster)
    assert found is not None
    controller_id, epoch = found
    request = LeaderAndIsrRequest(
        controller_id=controller_id,
        controller_epoch=epoch if controller_epoch is None else controller_epoch,
        broker_epoch=broker_epoch(cluster[to]) if epoch_of_broker is None else epoch_of_broker,
        type=0,
        topic_states=[LeaderAndIsrTopicState(topic_name=topic, topic_id=topic_id,
                                             partition_states=[LeaderAndIsrPartitionState(
            partition_index=partition, controller_epoch=epoch, leader=leader,
            leader_epoch=leader_epoch, isr=isr, partition_epoch=partition_epoch,
            replicas=replicas, adding_replicas=[], removing_replicas=[], is_new=False)])],
        live_leaders=[LeaderAndIsrLiveLeader(broker_id=leader, host_name="127.0.0.1",
                                             port=cluster[leader].port)])
    response = send(cluster[to], ApiKey.LEADER_AND_ISR, 6, request)
    [t] = response.topics
    assert t.topic_id == topic_id
    return [response.error_code, t.partition_errors[0].error_code]


def stop_replica(cluster: dict[int, kafkapy.Broker], to: int, topic: str, delete: bool,
                 leader_epoch: int = -1) -> list[int]:
    found = _controller(cluster)
    assert found is not None
    request = StopReplicaRequest(
        controller_id=found[0], controller_epoch=found[1],
        broker_epoch=broker_epoch(cluster[to]),
        topic_states=[StopReplicaTopicState(topic_name=topic, partition_states=[
            StopReplicaPartitionState(partition_index=0, leader_epoch=leader_epoch,
                                      delete_partition=delete)])])
    response = send(cluster[to], ApiKey.STOP_REPLICA, 3, request)
    return [response.error_code, response.partition_errors[0].error_code]


def produce(broker: kafkapy.Broker, topic: str, values: list[bytes], acks: int = -1,
            timeout_ms: int = 10000, batch: bytes | None = None) -> tuple[int, int]:
    """One batch (``values``, or ``batch`` as given); returns (error code, base offset)."""
    if batch is None:
        batch = build_batch([(None, v, None, int(time.time() * 1000)) for v in values])
    request = ProduceRequest(transactional_id=None, acks=acks, timeout_ms=timeout_ms,
                             topic_data=[TopicProduceData(name=topic, partition_data=[
                                 PartitionProduceData(index=0, records=batch)])])
    response = send(broker, ApiKey.PRODUCE, 9, request)
    p = response.responses[0].partition_responses[0]
    return p.error_code, p.base_offset


def state(broker: kafkapy.Broker, topic: str) -> dict[str, Any] | None:
    """The partition as ``broker`` hosts it, read on its own event loop."""
    def read() -> dict[str, Any] | None:
        partition = broker.server.replica_manager.partitions.get(TopicPartition(topic, 0))
        if partition is None:
            return None
        log = partition.log
        return {"leo": log.log_end_offset, "hw": log.high_watermark,
                "bytes": log.read(log.log_start_offset, 1 << 30, None).read(),
                "isr": list(partition.isr), "leader": partition.leader_id,
                "epoch": partition.leader_epoch, "epochs": list(log.epochs.entries),
                "partition_epoch": partition.partition_epoch}
    result: dict[str, Any] | None = broker.call(read)
    return result


def new_topic() -> tuple[str, uuid.UUID]:
    return f"replicated-{next(_names)}-{uuid.uuid4().hex[:6]}", uuid.uuid4()


# =============================================================================== tests

def test_followers_hold_the_leaders_bytes_at_the_same_offsets(
        cluster: dict[int, kafkapy.Broker]) -> None:
    topic, tid = new_topic()
    seen: list[tuple[list[TopicPartition], list[TopicPartition]]] = []

    def listener(leaders: list[Any], followers: list[Any]) -> None:
        seen.append(([p.tp for p in leaders], [p.tp for p in followers]))
    for b in (1, 2):
        cluster[b].call(cluster[b].server.replica_manager.leadership_listeners.append,
                        listener)
    try:
        for b in (1, 2, 3):
            assert leader_and_isr(cluster, b, topic, tid, 1, 0, [1, 2, 3], [1, 2, 3]) == [0, 0]
    finally:
        for b in (1, 2):
            cluster[b].call(cluster[b].server.replica_manager.leadership_listeners.remove,
                            listener)
    # The coordinators' hook: broker 1 became the leader, broker 2 a follower.
    assert seen == [([TopicPartition(topic, 0)], []), ([], [TopicPartition(topic, 0)])]
    assert state(cluster[2], topic)["leader"] == 1          # type: ignore[index]
    offsets = [produce(cluster[1], topic, [b"v%d-%d" % (i, j) for j in range(i + 1)], acks=1)
               for i in range(5)]
    assert [o[0] for o in offsets] == [0] * 5
    assert [o[1] for o in offsets] == [0, 1, 3, 6, 10]
    # acks=all completes once both followers have it.
    assert produce(cluster[1], topic, [b"last"]) == (0, 15)
    leader = state(cluster[1], topic)
    assert leader is not None and leader["leo"] == 16 and leader["hw"] == 16

    def same_everywhere() -> bool:
        states = [state(cluster[b], topic) for b in (2, 3)]
        return all(s is not None and s["leo"] == 16 and s["hw"] == 16 and
                   s["bytes"] == leader["bytes"] for s in states)
    wait_for(same_everywhere, "the followers to hold the leader's bytes and high watermark")
    assert state(cluster[3], topic)["epochs"] == leader["epochs"]     # type: ignore[index]
    # A follower serves no client: produce, fetch (before v11: KIP-392 lets v11+ consumers
    # read from followers, tests/clients/test_follower_fetching.py), list offsets, offsets
    # for leader epoch.
    assert produce(cluster[2], topic, [b"x"], acks=1)[0] == NOT_LEADER_OR_FOLLOWER
    fetch = send(cluster[2], ApiKey.FETCH, 10, FetchRequest(
        replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, session_epoch=-1,
        topics=[FetchTopic(topic=topic, partitions=[FetchPartition(
            partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])]))
    assert fetch.responses[0].partitions[0].error_code == NOT_LEADER_OR_FOLLOWER
    lo = send(cluster[2], ApiKey.LIST_OFFSETS, 4, ListOffsetsRequest(
        replica_id=-1, topics=[ListOffsetsTopic(name=topic, partitions=[
            ListOffsetsPartition(partition_index=0, timestamp=-1)])]))
    assert lo.topics[0].partitions[0].error_code == NOT_LEADER_OR_FOLLOWER
    ofle = OffsetForLeaderEpochRequest(replica_id=-1, topics=[OffsetForLeaderTopic(
        topic=topic, partitions=[OffsetForLeaderPartition(partition=0, leader_epoch=0)])])
    assert send(cluster[2], ApiKey.OFFSET_FOR_LEADER_EPOCH, 3, ofle
                ).topics[0].partitions[0].error_code == NOT_LEADER_OR_FOLLOWER
    answer = send(cluster[1], ApiKey.OFFSET_FOR_LEADER_EPOCH, 3, ofle).topics[0].partitions[0]
    assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (0, 0, 16)
    # A replica fetch from a broker that is not a replica is refused.
    stranger = send(cluster[1], ApiKey.FETCH, 12, FetchRequest(
        replica_id=7, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, session_epoch=-1,
        topics=[FetchTopic(topic=topic, partitions=[FetchPartition(
            partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])]))
    assert stranger.responses[0].partitions[0].error_code == NOT_LEADER_OR_FOLLOWER


def test_acks_all_waits_for_the_isr_and_min_insync_replicas(
        cluster: dict[int, kafkapy.Broker], fake_controller: FakeController) -> None:
    topic, tid = new_topic()
    # The leader alone in the ISR, below min.insync.replicas = 2: acks=all is refused before
    # the append, acks=1 is taken.
    assert leader_and_isr(cluster, 1, topic, tid, 1, 0, [1], [1, 2]) == [0, 0]
    assert produce(cluster[1], topic, [b"a"]) == (NOT_ENOUGH_REPLICAS, -1)
    assert produce(cluster[1], topic, [b"a"], acks=1) == (0, 0)
    # Now follower 2 starts: it catches up, the leader asks the controller to add it.
    assert leader_and_isr(cluster, 2, topic, tid, 1, 0, [1], [1, 2]) == [0, 0]
    wait_for(lambda: state(cluster[1], topic)["isr"] == [1, 2],        # type: ignore[index]
             "the ISR to grow to [1, 2]")
    assert fake_controller.isr_changes(tid) == [(1, 0, [1, 2], 0)]
    assert state(cluster[1], topic)["partition_epoch"] == 1            # type: ignore[index]
    started = time.monotonic()
    assert produce(cluster[1], topic, [b"b", b"c"]) == (0, 1)
    assert time.monotonic() - started < 5
    assert state(cluster[1], topic)["hw"] == 3                          # type: ignore[index]


def test_acks_all_times_out_without_the_follower(cluster: dict[int, kafkapy.Broker]) -> None:
    topic, tid = new_topic()
    # ISR [1, 2] as the controller says, but broker 2 was never told: nothing replicates.
    assert leader_and_isr(cluster, 1, topic, tid, 1, 0, [1, 2], [1, 2]) == [0, 0]
    started = time.monotonic()
    assert produce(cluster[1], topic, [b"a"], timeout_ms=300) == (REQUEST_TIMED_OUT, -1)
    assert 0.25 < time.monotonic() - started < 5
    assert state(cluster[1], topic)["hw"] == 0                          # type: ignore[index]
    # The follower starts; a parked acks=all completes as soon as it has fetched.
    result: list[tuple[int, int]] = []
    t = threading.Thread(target=lambda: result.append(produce(cluster[1], topic, [b"b"])))
    t.start()
    time.sleep(0.3)
    assert leader_and_isr(cluster, 2, topic, tid, 1, 0, [1, 2], [1, 2]) == [0, 0]
    t.join(TIMEOUT)
    assert result == [(0, 1)]
    assert state(cluster[1], topic)["hw"] == 2                          # type: ignore[index]


def test_epoch_checks_and_topic_ids(cluster: dict[int, kafkapy.Broker]) -> None:
    topic, tid = new_topic()
    assert leader_and_isr(cluster, 1, topic, tid, 1, 3, [1], [1]) == [0, 0]
    # Same leader epoch: ignored, no error; older: FENCED_LEADER_EPOCH.
    assert leader_and_isr(cluster, 1, topic, tid, 1, 3, [1], [1]) == [0, 0]
    assert leader_and_isr(cluster, 1, topic, tid, 1, 2, [1], [1]) == [0, FENCED_LEADER_EPOCH]
    # Another topic id for the same name.
    assert leader_and_isr(cluster, 1, topic, uuid.uuid4(), 1, 4, [1], [1]) == \
        [0, INCONSISTENT_TOPIC_ID]
    found = _controller(cluster)
    assert found is not None
    assert leader_and_isr(cluster, 1, topic, tid, 1, 4, [1], [1],
                          controller_epoch=found[1] - 1) == [STALE_CONTROLLER_EPOCH] * 2
    assert leader_and_isr(cluster, 1, topic, tid, 1, 4, [1], [1],
                          epoch_of_broker=broker_epoch(cluster[1]) - 1) == \
        [STALE_BROKER_EPOCH] * 2
    assert state(cluster[1], topic)["epoch"] == 3                       # type: ignore[index]
    # Not a replica here: UNKNOWN_TOPIC_OR_PARTITION, nothing created.
    assert leader_and_isr(cluster, 3, topic, tid, 1, 4, [1], [1]) == \
        [0, UNKNOWN_TOPIC_OR_PARTITION]
    assert state(cluster[3], topic) is None
    # StopReplica with an older leader epoch is fenced; then a delete removes the log.
    assert stop_replica(cluster, 1, topic, delete=True, leader_epoch=2) == \
        [0, FENCED_LEADER_EPOCH]
    log_dir = cluster[1].data_dir / f"{topic}-0"
    assert log_dir.exists()
    assert stop_replica(cluster, 1, topic, delete=True, leader_epoch=3) == [0, 0]
    assert state(cluster[1], topic) is None
    assert not log_dir.exists()
    assert produce(cluster[1], topic, [b"x"], acks=1)[0] in (UNKNOWN_TOPIC_OR_PARTITION,
                                                            NOT_LEADER_OR_FOLLOWER)


def test_a_new_replicas_log_is_created_off_the_event_loop(
        cluster: dict[int, kafkapy.Broker], monkeypatch: pytest.MonkeyPatch) -> None:
    """LeaderAndIsr creates a new replica's log directory and files in a worker thread
    (ReplicaManager.create_logs), renamed in before the replica is made; a request with a
    stale controller epoch creates nothing."""
    topic, tid = new_topic()
    calls = spy_log_open(monkeypatch, topic)
    found = _controller(cluster)
    assert found is not None
    assert leader_and_isr(cluster, 2, topic, tid, 2, 0, [2], [2],
                          controller_epoch=found[1] - 1) == [STALE_CONTROLLER_EPOCH] * 2
    assert calls == [] and state(cluster[2], topic) is None
    assert not [p for p in cluster[2].data_dir.iterdir() if p.name.startswith(topic)]
    assert leader_and_isr(cluster, 2, topic, tid, 2, 0, [2], [2]) == [0, 0]
    assert [(c.log_name, c.name.endswith("-future"), c.on_event_loop) for c in calls] == \
        [(f"{topic}-0", True, False)]
    assert [p.name for p in cluster[2].data_dir.iterdir() if p.name.startswith(topic)] == \
        [f"{topic}-0"]
    assert produce(cluster[2], topic, [b"x"], acks=1) == (0, 0)
    wait_for(lambda: read_partition_metadata(cluster[2].data_dir / f"{topic}-0") == tid,
             "partition.metadata with the topic id")


def test_a_deposed_leaders_divergent_tail_is_truncated(
        cluster: dict[int, kafkapy.Broker]) -> None:
    topic, tid = new_topic()
    for b in (1, 2):
        assert leader_and_isr(cluster, b, topic, tid, 1, 0, [1, 2], [1, 2]) == [0, 0]
    assert produce(cluster[1], topic, [b"a", b"b"]) == (0, 0)
    assert produce(cluster[1], topic, [b"c"]) == (0, 2)
    wait_for(lambda: state(cluster[2], topic)["leo"] == 3,              # type: ignore[index]
             "the follower to catch up")
    # Broker 2 stops replicating (the log stays); the old leader takes records nobody else
    # ever gets.
    assert stop_replica(cluster, 2, topic, delete=False) == [0, 0]
    assert state(cluster[2], topic) is None
    assert (cluster[2].data_dir / f"{topic}-0").exists()
    assert produce(cluster[1], topic, [b"lost-1", b"lost-2"], acks=1) == (0, 3)
    assert produce(cluster[1], topic, [b"lost-3"], acks=1) == (0, 5)
    assert state(cluster[1], topic)["leo"] == 6                         # type: ignore[index]
    assert state(cluster[1], topic)["hw"] == 3                          # type: ignore[index]
    # Broker 2 becomes the leader at epoch 1 and takes new records from offset 3.
    assert leader_and_isr(cluster, 2, topic, tid, 2, 1, [2], [1, 2], partition_epoch=1) == \
        [0, 0]
    assert produce(cluster[2], topic, [b"new-1"], acks=1) == (0, 3)
    assert produce(cluster[2], topic, [b"new-2", b"new-3"], acks=1) == (0, 4)
    # The old leader follows: its tail [3, 6) diverges from epoch 1 and is cut off.
    assert leader_and_isr(cluster, 1, topic, tid, 2, 1, [2], [1, 2], partition_epoch=1) == \
        [0, 0]
    new_leader = state(cluster[2], topic)
    assert new_leader is not None and new_leader["leo"] == 6

    def converged() -> bool:
        s = state(cluster[1], topic)
        return s is not None and s["leo"] == 6 and s["bytes"] == new_leader["bytes"]
    wait_for(converged, "the old leader to truncate and catch up")
    follower = state(cluster[1], topic)
    assert follower is not None
    assert [(e.epoch, e.start_offset) for e in follower["epochs"]] == [(0, 0), (1, 3)]
    assert follower["epoch"] == 1 and follower["leader"] == 2
    # The ISR grows back (through the controller) and the high watermark reaches the end.
    wait_for(lambda: state(cluster[2], topic)["hw"] == 6,              # type: ignore[index]
             "the new leader's high watermark")


def test_a_new_leader_knows_the_idempotent_producers_of_the_old_one(
        cluster: dict[int, kafkapy.Broker]) -> None:
    topic, tid = new_topic()
    for b in (1, 2):
        assert leader_and_isr(cluster, b, topic, tid, 1, 0, [1, 2], [1, 2]) == [0, 0]
    stamp = int(time.time() * 1000)

    def idempotent(seq: int, n: int) -> bytes:
        return build_batch([(None, b"i%d" % (seq + i), None, stamp) for i in range(n)],
                           producer_id=4242, producer_epoch=0, base_sequence=seq)
    assert produce(cluster[1], topic, [], batch=idempotent(0, 2)) == (0, 0)
    assert produce(cluster[1], topic, [], batch=idempotent(2, 1)) == (0, 2)
    # The leader moves to 2; the producer's retry of its last batch is answered with the
    # original offset, not appended again.
    for b in (2, 1):
        assert leader_and_isr(cluster, b, topic, tid, 2, 1, [1, 2], [1, 2],
                              partition_epoch=1) == [0, 0]
    assert produce(cluster[2], topic, [], batch=idempotent(2, 1)) == (0, 2)
    assert state(cluster[2], topic)["leo"] == 3                        # type: ignore[index]
    assert produce(cluster[2], topic, [], batch=idempotent(3, 1)) == (0, 3)


def test_a_new_follower_starts_at_the_leaders_log_start(
        cluster: dict[int, kafkapy.Broker], fake_controller: FakeController) -> None:
    topic, tid = new_topic()
    assert leader_and_isr(cluster, 1, topic, tid, 1, 0, [1], [1, 3]) == [0, 0]
    for i in range(3):
        assert produce(cluster[1], topic, [b"r%d" % i], acks=1) == (0, i)
    deleted = send(cluster[1], ApiKey.DELETE_RECORDS, 2, DeleteRecordsRequest(
        timeout_ms=5000, topics=[DeleteRecordsTopic(name=topic, partitions=[
            DeleteRecordsPartition(partition_index=0, offset=2)])]))
    assert deleted.topics[0].partitions[0].error_code == 0
    # The empty follower asks for offset 0, is told OFFSET_OUT_OF_RANGE, looks up the
    # leader's log start and end (ListOffsets as a replica) and starts over at 2.
    assert leader_and_isr(cluster, 3, topic, tid, 1, 0, [1], [1, 3]) == [0, 0]
    leader = state(cluster[1], topic)
    assert leader is not None

    def caught_up() -> bool:
        s = state(cluster[3], topic)
        return s is not None and s["leo"] == 3 and s["bytes"] == leader["bytes"]
    wait_for(caught_up, "the follower to start at the leader's log start")
    assert cluster[3].call(lambda: cluster[3].server.replica_manager.partitions[
        TopicPartition(topic, 0)].log_start_offset) == 2
    wait_for(lambda: state(cluster[1], topic)["isr"] == [1, 3],        # type: ignore[index]
             "the ISR to grow")
    assert fake_controller.isr_changes(tid) == [(1, 0, [1, 3], 0)]


def test_a_stopped_follower_leaves_the_isr_through_alter_partition(
        cluster: dict[int, kafkapy.Broker], zookeeper: ZooKeeperServer,
        fake_controller: FakeController) -> None:
    topic, tid = new_topic()
    extra = start_broker(f"{zookeeper.connect_string}/kafkapy-replication", 4,
                         fake_controller)
    try:
        cluster[4] = extra
        for b in (1, 4):
            assert leader_and_isr(cluster, b, topic, tid, 1, 0, [1, 4], [1, 4],
                                  partition_epoch=5) == [0, 0]
        assert produce(cluster[1], topic, [b"a"]) == (0, 0)
        wait_for(lambda: state(extra, topic)["hw"] == 1,               # type: ignore[index]
                 "the follower's high watermark")
        extra.stop()
        stopped = time.monotonic()
        # Accepted (the ISR still has 2), then parked: the follower will never fetch it.
        assert produce(cluster[1], topic, [b"b"]) == (NOT_ENOUGH_REPLICAS_AFTER_APPEND, -1)
        took = time.monotonic() - stopped
        assert LAG_MS / 1000 * 0.9 < took < LAG_MS / 1000 + 3
        assert state(cluster[1], topic)["isr"] == [1]                   # type: ignore[index]
        assert fake_controller.isr_changes(tid) == [(1, 0, [1], 5)]
        [request] = [r for _, _, r in fake_controller.received()
                     if any(t.topic_id == tid for t in r.topics)]
        assert request.broker_epoch == broker_epoch(cluster[1])
        # The high watermark moved with the shrunk ISR; acks=all is now refused up front.
        assert state(cluster[1], topic)["hw"] == 2                      # type: ignore[index]
        assert produce(cluster[1], topic, [b"c"]) == (NOT_ENOUGH_REPLICAS, -1)
    finally:
        cluster.pop(4, None)
        extra.stop()


def test_a_leader_that_becomes_follower_answers_its_parked_produces(
        cluster: dict[int, kafkapy.Broker]) -> None:
    topic, tid = new_topic()
    assert leader_and_isr(cluster, 1, topic, tid, 1, 0, [1, 2], [1, 2]) == [0, 0]
    result: list[tuple[int, int]] = []
    t = threading.Thread(target=lambda: result.append(produce(cluster[1], topic, [b"a"])))
    t.start()
    wait_for(lambda: cluster[1].call(
        lambda: cluster[1].server.replica_manager.produce_purgatory.delayed) == 1,
        "the produce to park")
    assert leader_and_isr(cluster, 1, topic, tid, 2, 1, [2], [1, 2]) == [0, 0]
    t.join(TIMEOUT)
    assert result == [(NOT_LEADER_OR_FOLLOWER, -1)]


def test_a_restarted_follower_resumes_from_its_log(
        cluster: dict[int, kafkapy.Broker], zookeeper: ZooKeeperServer,
        fake_controller: FakeController, tmp_path: Path) -> None:
    topic, tid = new_topic()
    connect = f"{zookeeper.connect_string}/kafkapy-replication"
    follower = start_broker(connect, 5, fake_controller, tmp_path / "b5")
    cluster[5] = follower
    try:
        for b in (1, 5):
            assert leader_and_isr(cluster, b, topic, tid, 1, 0, [1, 5], [1, 5]) == [0, 0]
        for i in range(3):
            assert produce(cluster[1], topic, [b"x%d" % i, b"y%d" % i]) == (0, 2 * i)
        wait_for(lambda: state(follower, topic)["hw"] == 6,            # type: ignore[index]
                 "the follower's high watermark")
        follower.stop()
        assert produce(cluster[1], topic, [b"while-down"], acks=1) == (0, 6)
        # Back with its log dir: the log (and its checkpointed high watermark) is kept
        # until the controller says what it is.
        follower = cluster[5] = start_broker(connect, 5, fake_controller, tmp_path / "b5")
        assert follower.call(lambda: follower.server.log_manager.get_log(
            TopicPartition(topic, 0)).high_watermark) == 6
        assert state(follower, topic) is None
        assert leader_and_isr(cluster, 5, topic, tid, 1, 0, [1, 5], [1, 5]) == [0, 0]
        leader = state(cluster[1], topic)
        assert leader is not None

        def caught_up() -> bool:
            s = state(follower, topic)
            return s is not None and s["leo"] == 7 and s["bytes"] == leader["bytes"]
        wait_for(caught_up, "the restarted follower to catch up")
    finally:
        cluster.pop(5, None)
        follower.stop()


def test_followers_fetch_in_incremental_sessions(cluster: dict[int, kafkapy.Broker]) -> None:
    """KIP-227 between brokers: each follower's fetcher holds a session on the leader covering
    every partition it follows there, and keeps it (its epoch grows fetch after fetch)
    while only the partition written to moves."""
    topics = [new_topic() for _ in range(4)]
    for topic, tid in topics:
        for b in (1, 2, 3):
            assert leader_and_isr(cluster, b, topic, tid, 1, 0, [1, 2, 3], [1, 2, 3]) == [0, 0]
    busy = topics[0][0]
    for i in range(3):
        assert produce(cluster[1], busy, [b"s%d" % i])[0] == 0

    def fetcher_session(b: int) -> tuple[int, int, set[str]]:
        def read() -> tuple[int, int, set[str]]:
            fetchers = cluster[b].server.replica_manager.fetcher_manager.fetchers
            [handler] = [f.sessions for f in fetchers.values() if f.leader_id == 1]
            return handler.session_id, handler.epoch, {tp.topic for tp in handler.sent}
        result: tuple[int, int, set[str]] = cluster[b].call(read)
        return result

    names = {t for t, _ in topics}
    wait_for(lambda: all(names <= fetcher_session(b)[2] for b in (2, 3)),
             "the followers' sessions to cover every partition")
    before = {b: fetcher_session(b) for b in (2, 3)}
    assert all(s[0] != 0 and s[1] >= 1 for s in before.values()), before
    for i in range(3, 8):
        assert produce(cluster[1], busy, [b"s%d" % i])[0] == 0
    after = {b: fetcher_session(b) for b in (2, 3)}
    for b in (2, 3):
        assert after[b][0] == before[b][0] and after[b][1] > before[b][1], (before, after)

    def leader_sessions() -> dict[int, set[str]]:
        return {sid: {tp.topic for tp in s.partitions}
                for sid, s in cluster[1].server.fetch_sessions.sessions.items() if s.privileged}
    on_leader = cluster[1].call(leader_sessions)
    for b in (2, 3):
        assert names <= on_leader[after[b][0]]
    wait_for(lambda: all(state(cluster[b], busy)["leo"] == 8 for b in (2, 3)),  # type: ignore[index]
             "the followers to hold all eight records")
