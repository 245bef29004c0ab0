"""KafkaZkClient (kafkapy.zk.kafka_zk_client) against a real ZooKeeper: broker registration
and its epoch, the cluster id, controller election fenced by /controller_epoch (a deposed
controller changes nothing), partition state conditional on the partition epoch, producer id
blocks that never overlap, and Kafka's formats in the znodes."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from kazoo.exceptions import BadVersionError

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.zk.kafka_zk_client import BrokerIdInUseError, ControllerMovedError, KafkaZkClient
from kafkapy.zk.zk_data import (
    PERSISTENT_PATHS,
    BrokerRegistration,
    LeaderAndIsr,
    ReplicaAssignment,
    TopicAssignment,
    config_encode,
    reassignment_encode,
)


@contextmanager
def zk_client(connect: str) -> Iterator[KafkaZkClient]:
    client = KafkaZkClient(connect, session_timeout_ms=6000, connection_timeout_ms=10_000)
    client.start()
    try:
        yield client
    finally:
        client.close()


def registration(broker_id: int, port: int = 9092) -> BrokerRegistration:
    return BrokerRegistration(broker_id, (("PLAINTEXT", "PLAINTEXT", "127.0.0.1", port),),
                              timestamp_ms=1)


def test_start_creates_the_chroot_and_kafkas_paths(zk_connect: str) -> None:
    with zk_client(zk_connect) as client:
        for path in PERSISTENT_PATHS:
            assert client.zk.exists(path) is not None, path


def test_cluster_id_is_created_once(zk_connect: str) -> None:
    with zk_client(zk_connect) as a, zk_client(zk_connect) as b:
        assert a.get_or_create_cluster_id("first") == "first"
        assert b.get_or_create_cluster_id("second") == "first"
        assert json.loads(b.zk.get("/cluster/id")[0]) == {"version": "1", "id": "first"}


def test_registration_epoch_and_duplicate_ids(zk_connect: str) -> None:
    with zk_client(zk_connect) as a, zk_client(zk_connect) as b:
        epoch = a.register_broker(registration(1))
        assert epoch > 0
        # The same session registering again (a retry) keeps its registration and epoch.
        assert a.register_broker(registration(1, port=9093)) == epoch
        with pytest.raises(BrokerIdInUseError, match=r"broker\.id 1 is already registered"):
            b.register_broker(registration(1))
        b.register_broker(registration(2))
        brokers = b.get_all_brokers()
        assert sorted(brokers) == [1, 2]
        assert brokers[1].epoch == epoch
        assert brokers[1].registration.endpoints[0][3] == 9093
    with zk_client(zk_connect) as c:
        # Both sessions are gone: so are their registrations; a new one has a newer epoch.
        assert c.get_all_brokers() == {}
        assert c.register_broker(registration(1)) > epoch


def test_one_controller_wins_and_epochs_rise(zk_connect: str) -> None:
    with zk_client(zk_connect) as a, zk_client(zk_connect) as b:
        assert a.get_controller_id() is None
        epoch, version = a.register_controller_and_increment_epoch(1, 1)
        assert epoch == 1
        assert a.get_controller_id() == 1
        with pytest.raises(ControllerMovedError, match="broker 1 is the controller"):
            b.register_controller_and_increment_epoch(2, 1)
        assert b.get_controller_epoch() == (1, version)
    with zk_client(zk_connect) as c:
        assert c.register_controller_and_increment_epoch(3, 1)[0] == 2


def test_racing_elections_have_one_winner(zk_connect: str) -> None:
    clients = [KafkaZkClient(zk_connect, session_timeout_ms=6000) for _ in range(4)]
    results: list[object] = [None] * 4
    start = threading.Barrier(4)

    def elect(i: int) -> None:
        start.wait()
        try:
            results[i] = clients[i].register_controller_and_increment_epoch(i, 1)
        except ControllerMovedError as e:
            results[i] = e

    try:
        for c in clients:
            c.start()
        threads = [threading.Thread(target=elect, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        winners = [i for i, r in enumerate(results) if isinstance(r, tuple)]
        assert len(winners) == 1, results
        assert clients[0].get_controller_id() == winners[0]
        assert clients[0].get_controller_epoch() is not None
        assert clients[0].get_controller_epoch()[0] == 1      # type: ignore[index]
    finally:
        for c in clients:
            c.close()


def test_a_deposed_controller_changes_nothing(zk_connect: str) -> None:
    tp = TopicPartition("orders", 0)
    with zk_client(zk_connect) as setup:
        setup.create_topic(TopicAssignment("orders", uuid.UUID(int=1),
                                           {0: ReplicaAssignment((1, 2))}), config_encode({}))
    old = KafkaZkClient(zk_connect, session_timeout_ms=6000)
    old.start()
    try:
        _, old_version = old.register_controller_and_increment_epoch(1, 1)
        old.create_partition_states(old_version, {tp: LeaderAndIsr(1, 0, (1, 2), 1)})
        with zk_client(zk_connect) as new:
            # The old controller's session ends (as when it is paused past its timeout)...
            old.zk.stop()
            epoch, new_version = new.register_controller_and_increment_epoch(2, 1)
            assert epoch == 2
            # ...and when it comes back, its fenced writes fail: nothing changes.
            old.zk.start(timeout=10)
            state = old.get_partition_states([tp])[tp]
            with pytest.raises(ControllerMovedError):
                old.update_partition_states(old_version, {
                    tp: LeaderAndIsr(2, 1, (2,), 1, partition_epoch=state.partition_epoch)})
            assert new.get_partition_states([tp])[tp] == state
            # The new controller's write goes through and bumps the partition epoch.
            done = new.update_partition_states(new_version, {
                tp: LeaderAndIsr(2, 1, (2,), epoch, partition_epoch=state.partition_epoch)})
            assert done[tp] == LeaderAndIsr(2, 1, (2,), epoch,
                                            partition_epoch=state.partition_epoch + 1)
            # A stale partition epoch is refused, even from the controller.
            stale = new.update_partition_states(new_version, {
                tp: LeaderAndIsr(1, 2, (1,), epoch, partition_epoch=state.partition_epoch)})
            assert isinstance(stale[tp], BadVersionError)
            assert json.loads(new.zk.get("/brokers/topics/orders/partitions/0/state")[0]) == {
                "version": 1, "leader": 2, "leader_epoch": 1, "controller_epoch": 2,
                "isr": [2]}
    finally:
        old.close()


def test_producer_id_blocks_never_overlap(zk_connect: str) -> None:
    with zk_client(zk_connect) as a, zk_client(zk_connect) as b:
        starts: list[int] = []
        lock = threading.Lock()

        def take(client: KafkaZkClient, broker: int) -> None:
            for _ in range(10):
                start = client.allocate_producer_id_block(broker, 1000)
                with lock:
                    starts.append(start)

        threads = [threading.Thread(target=take, args=(a, 1)),
                   threading.Thread(target=take, args=(b, 2))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(starts) == list(range(0, 20_000, 1000))
        assert json.loads(a.zk.get("/latest_producer_id_block")[0])["block_end"] == "19999"


def test_unreachable_zookeeper_fails_within_the_connection_timeout() -> None:
    import socket
    import time

    from kazoo.handlers.threading import KazooTimeoutError
    with socket.socket() as s:                # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = KafkaZkClient(f"127.0.0.1:{port}", connection_timeout_ms=1500)
    started = time.monotonic()
    with pytest.raises(KazooTimeoutError):
        client.start()
    assert time.monotonic() - started < 5
    client.close()


def test_controller_topic_operations_are_fenced(zk_connect: str) -> None:
    """What the controller's duties add: loading topics, a topic's config, the deletion
    markers and the topic's znodes removed, the legacy reassignment znode; every write fenced
    by the controller epoch."""
    tp0, tp1 = TopicPartition("t", 0), TopicPartition("t", 1)
    with zk_client(zk_connect) as client:
        _, version = client.register_controller_and_increment_epoch(1, 1)
        topic_id = uuid.uuid4()
        assignment = TopicAssignment("t", topic_id, {0: ReplicaAssignment((1, 2)),
                                                     1: ReplicaAssignment((2, 1))})
        client.create_topic(assignment, config_encode({"unclean.leader.election.enable":
                                                       "true"}))
        client.create_partition_states(version, {tp0: LeaderAndIsr(1, 0, (1, 2), 1)})
        assignments, states = client.load_topics(["t", "gone"])
        assert assignments == {"t": assignment}
        assert states == {tp0: LeaderAndIsr(1, 0, (1, 2), 1, 0)}
        assert client.get_topic_config("t") == {"unclean.leader.election.enable": "true"}
        assert client.get_topic_config("gone") == {}
        moved = TopicAssignment("t", topic_id, {0: ReplicaAssignment((3, 1, 2), (3,), (2,)),
                                                1: ReplicaAssignment((2, 1))})
        client.set_topic_assignment(version, moved)
        assert client.get_topic_assignment("t") == moved

        client.zk.create("/admin/reassign_partitions", reassignment_encode(
            {tp0: [3, 1], tp1: [1, 2]}))
        assert client.get_legacy_reassignment() == {tp0: (3, 1), tp1: (1, 2)}
        client.set_legacy_reassignment(version, {tp1: (1, 2)})
        assert client.get_legacy_reassignment() == {tp1: (1, 2)}
        client.set_legacy_reassignment(version, {})
        assert client.get_legacy_reassignment() is None

        client.zk.create("/admin/delete_topics/t")
        client.zk.create("/admin/delete_topics/other")
        assert client.get_topic_deletions() == ["other", "t"]
        client.delete_topic_deletions(version, ["other", "never-marked"])
        assert client.get_topic_deletions() == ["t"]
        # A deposed controller deletes nothing.
        with pytest.raises(ControllerMovedError):
            client.delete_topic_znodes(version - 1, "t")
        assert client.zk.exists("/brokers/topics/t") is not None
        client.delete_topic_znodes(version, "t")
        for path in ("/brokers/topics/t", "/config/topics/t", "/admin/delete_topics/t"):
            assert client.zk.exists(path) is None, path
        assert client.get_topic_assignment("t") is None
