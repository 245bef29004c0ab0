"""A broker with ``zookeeper.connect`` (kafkapy.server.kafka_healthcheck): it registers in a
real ZooKeeper with Kafka's JSON and its broker epoch, shares the cluster id, refuses a
duplicate broker.id and a log dir of another cluster, fails fast when ZooKeeper is
unreachable, survives losing ZooKeeper, and registers again after its session expired."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from kazoo.client import KazooClient

import kafkapy
from kafkapy.log.log_manager import MetaPropertiesError
from kafkapy.server.kafka_healthcheck import ZooKeeperUnavailableError
from kafkapy.zk.kafka_zk_client import BrokerIdInUseError
from kafkapy.zk.zookeeper_server import ZooKeeperServer

TIMEOUT = 30.0


@contextmanager
def zk(connect: str) -> Iterator[KazooClient]:
    client = KazooClient(hosts=connect, timeout=10)
    client.start(timeout=10)
    try:
        yield client
    finally:
        client.stop()
        client.close()


def wait_for(condition, what: str, timeout: float = TIMEOUT):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_registration_in_kafkas_format(zk_connect: str, tmp_path: Path) -> None:
    with kafkapy.Broker(data_dir=tmp_path / "b1", zookeeper_connect=zk_connect, broker_id=1,
                        broker_rack="r1") as b1, \
            kafkapy.Broker(data_dir=tmp_path / "b2", zookeeper_connect=zk_connect,
                           broker_id=2, broker_rack="r2") as b2, zk(zk_connect) as client:
        assert sorted(client.get_children("/brokers/ids")) == ["1", "2"]
        data, stat = client.get("/brokers/ids/1")
        reg = json.loads(data)
        assert reg["version"] == 5
        assert reg["endpoints"] == [f"PLAINTEXT://127.0.0.1:{b1.port}"]
        assert (reg["host"], reg["port"]) == ("127.0.0.1", b1.port)
        assert reg["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
        assert reg["rack"] == "r1"
        assert abs(int(reg["timestamp"]) - time.time() * 1000) < 60_000
        assert b1.server.healthcheck is not None
        assert b1.server.healthcheck.broker_epoch == stat.czxid
        # One cluster id, in ZooKeeper and in both brokers' meta.properties.
        cluster = json.loads(client.get("/cluster/id")[0])["id"]
        assert b1.server.cluster_id == b2.server.cluster_id == cluster
        for d in ("b1", "b2"):
            assert f"cluster.id={cluster}" in (tmp_path / d / "meta.properties").read_text()
        # The cluster serves clients (the topic is created in ZooKeeper, the controller elects
        # its leader).
        producer = Producer({"bootstrap.servers": b1.bootstrap_servers})
        producer.produce("t", b"v")
        assert producer.flush(TIMEOUT) == 0
        del producer            # before the broker stops: librdkafka would keep reconnecting
    with zk(zk_connect) as client:
        # A clean stop ends the session: the registrations are gone.
        assert client.get_children("/brokers/ids") == []


def test_a_duplicate_broker_id_is_refused(zk_connect: str, tmp_path: Path) -> None:
    with kafkapy.Broker(data_dir=tmp_path / "a", zookeeper_connect=zk_connect, broker_id=5):
        duplicate = kafkapy.Broker(data_dir=tmp_path / "b", zookeeper_connect=zk_connect,
                                   broker_id=5)
        with pytest.raises(BrokerIdInUseError, match=r"broker\.id 5 is already registered"):
            duplicate.start()


def test_log_dirs_of_another_cluster_are_refused(zookeeper_server: ZooKeeperServer,
                                                 zk_connect: str, tmp_path: Path) -> None:
    with kafkapy.Broker(data_dir=tmp_path / "d", zookeeper_connect=zk_connect):
        pass
    # Another ensemble (a chroot) whose cluster already has an id of its own.
    other = f"{zookeeper_server.connect_string}/another-cluster-{time.time_ns()}"
    with zk(zookeeper_server.connect_string) as client:
        client.create(other.partition("/")[2] and "/" + other.partition("/")[2] + "/cluster/id",
                      b'{"version":"1","id":"AAAAAAAAAAAAAAAAAAAAAQ"}', makepath=True)
    broker = kafkapy.Broker(data_dir=tmp_path / "d", zookeeper_connect=other)
    with pytest.raises(MetaPropertiesError, match="trying to join the wrong cluster"):
        broker.start()


def test_unreachable_zookeeper_fails_within_the_connection_timeout(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    broker = kafkapy.Broker(data_dir=tmp_path, zookeeper_connect=f"127.0.0.1:{port}",
                            zookeeper_connection_timeout_ms=2000)
    started = time.monotonic()
    with pytest.raises(ZooKeeperUnavailableError,
                       match=f"ZooKeeper at 127.0.0.1:{port} .*connection.timeout.ms=2000"):
        broker.start()
    assert time.monotonic() - started < 10


def test_zookeeper_lost_and_session_expired(tmp_path: Path) -> None:
    # Its own ZooKeeper: this test stops it.
    with ZooKeeperServer(tmp_path / "zk", tick_time_ms=200) as server, \
            kafkapy.Broker(data_dir=tmp_path / "b", zookeeper_connect=server.connect_string,
                           broker_id=3, zookeeper_session_timeout_ms=4000,
                           offsets_topic_replication_factor=1) as broker:
        with zk(server.connect_string) as client:
            first_epoch = client.get("/brokers/ids/3")[1].czxid
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
        producer.produce("t", b"before")            # creates t; the controller elects
        assert producer.flush(TIMEOUT) == 0
        # ZooKeeper paused for a moment (shorter than the session): the broker serves on
        # what it leads.
        server.pause()
        producer.produce("t", b"during")
        assert producer.flush(TIMEOUT) == 0
        del producer
        server.resume()
        # The session expires (ended from outside, as ZooKeeper does when a broker has been
        # silent past its timeout): the broker registers again, with a new epoch.
        health = broker.server.healthcheck
        assert health is not None
        session_id, password = health.client.zk.client_id
        with zk(server.connect_string) as client:
            assert client.get("/brokers/ids/3")[1].czxid == first_epoch
            thief = KazooClient(hosts=server.connect_string, client_id=(session_id, password))
            thief.start(timeout=10)
            thief.stop()        # closes the broker's session: ZooKeeper drops /brokers/ids/3
            thief.close()
            epoch = wait_for(lambda: (s := client.exists("/brokers/ids/3")) is not None
                             and s.czxid != first_epoch and s.czxid, "re-registration")
        wait_for(lambda: health.broker_epoch == epoch, "the broker to know its new epoch")
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "g",
                             "auto.offset.reset": "earliest"})
        consumer.subscribe(["t"])
        try:
            values = []
            for _ in range(2):
                message = wait_for(lambda: (m := consumer.poll(0.5)) is not None and m,
                                   "message")
                values.append(message.value())
            assert values == [b"before", b"during"]
        finally:
            consumer.close()
