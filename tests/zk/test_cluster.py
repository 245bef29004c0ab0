"""kafkapy.Cluster: a real ZooKeeper and three broker processes, and the faults a resilience
test injects, seen where the cluster sees them (ZooKeeper registrations, broker epochs) and
by a real client."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer

import kafkapy
from kafkapy.cluster import Cluster
from kafkapy.zk.zookeeper_server import ZooKeeperServer

SESSION_MS = 3000


@pytest.fixture(scope="module")
def cluster(zookeeper_server: ZooKeeperServer) -> Iterator[Cluster]:
    with kafkapy.Cluster(3, {"zookeeper.session.timeout.ms": SESSION_MS},
                         zookeeper_connect=zookeeper_server.connect_string,
                         timeout=60) as c:
        yield c


def produce_one(bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 20_000})
    try:
        producer.produce(topic, b"v")
        assert producer.flush(30) == 0
    finally:
        del producer


def test_every_broker_registers_and_serves(cluster: Cluster) -> None:
    assert cluster.registered() == {1, 2, 3}
    epochs = {i: cluster.broker_epoch(i) for i in (1, 2, 3)}
    assert len(set(epochs.values())) == 3 and None not in epochs.values()
    for broker in cluster.brokers.values():
        produce_one(broker.bootstrap, f"t{broker.broker_id}")


def test_sigterm_leaves_at_once_sigkill_after_the_session(cluster: Cluster) -> None:
    cluster.stop(1)
    assert 1 not in cluster.registered()          # a clean stop closes the session
    cluster.kill(2)
    assert cluster.brokers[2].proc is not None and cluster.brokers[2].proc.returncode == -9
    assert 2 in cluster.registered()              # only ZooKeeper's session timeout tells
    cluster.wait_for_unregistered(2, timeout=SESSION_MS / 1000 + 10)
    before = cluster.broker_epoch(3)
    for broker_id in (1, 2):
        cluster.restart(broker_id)
    assert cluster.registered() == {1, 2, 3}
    assert cluster.broker_epoch(3) == before
    produce_one(cluster.brokers[2].bootstrap, "after-restart")


def test_a_broker_paused_past_its_session_registers_again(cluster: Cluster) -> None:
    before = cluster.broker_epoch(3)
    assert before is not None
    cluster.pause(3)
    cluster.wait_for_unregistered(3, timeout=SESSION_MS / 1000 + 10)
    cluster.resume(3)
    epoch = cluster.wait_until(lambda: (e := cluster.broker_epoch(3)) is not None and e,
                               "broker 3 to register again", broker_id=3)
    assert epoch > before
    produce_one(cluster.brokers[3].bootstrap, "after-pause")


def test_a_broker_that_exits_on_its_own_is_reported(cluster: Cluster) -> None:
    """A broker that dies when nobody told it to (a crash) is reported with its exit code
    and the end of its log (``close`` logs it, before the directory goes); one stopped or
    killed through the cluster is not."""
    broker = cluster.brokers[3]
    assert broker.unexpected_exit() is None                 # running
    assert broker.proc is not None
    os.kill(broker.proc.pid, signal.SIGKILL)                # behind the cluster's back
    broker.proc.wait(10)
    report = broker.unexpected_exit()
    assert report is not None
    assert report.startswith("broker 3 exited on its own with -9; the end of its log:\n")
    assert report.endswith(broker.log_tail()) and broker.log_tail()
    cluster.wait_for_unregistered(3, timeout=SESSION_MS / 1000 + 10)
    cluster.restart(3)
    assert broker.unexpected_exit() is None
    cluster.stop(3)                                         # told to end
    assert broker.proc.returncode is not None and broker.unexpected_exit() is None
    cluster.restart(3)
    assert cluster.registered() == {1, 2, 3}


def test_a_failed_broker_start_reports_its_log(zookeeper_server: ZooKeeperServer) -> None:
    bad = kafkapy.Cluster(1, {"num.io.threads": "0"},
                          zookeeper_connect=zookeeper_server.connect_string, timeout=30)
    with pytest.raises(RuntimeError, match=r"(?s)broker 1 exited with 1.*num\.io\.threads"):
        bad.start()


@pytest.mark.kafka_cluster(brokers=2, zookeeper_session_timeout_ms=SESSION_MS)
def test_the_kafka_cluster_fixture(kafka_cluster: Cluster) -> None:
    assert kafka_cluster.registered() == {1, 2}
    assert kafka_cluster.settings["zookeeper.session.timeout.ms"] == SESSION_MS
    produce_one(kafka_cluster.bootstrap_servers, "via-fixture")


def test_brokers_import_this_kafkapy_whatever_the_working_directory(
        zookeeper_server: ZooKeeperServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m kafkapy`` puts the working directory first on sys.path: a broker started
    from another source tree's root would import that tree (an A/B benchmark's baseline side
    then measured the same code twice). A decoy package there must not be imported, and a
    relative PYTHONPATH entry still means what it meant to the starting process."""
    decoy = tmp_path / "decoy"
    (decoy / "kafkapy").mkdir(parents=True)
    (decoy / "kafkapy" / "__init__.py").write_text("raise ImportError('the decoy kafkapy')\n")
    monkeypatch.chdir(decoy)
    monkeypatch.setenv("PYTHONPATH", "rel-entry")
    with kafkapy.Cluster(1, zookeeper_connect=zookeeper_server.connect_string,
                         data_dir="cluster", timeout=60) as c:
        assert c.dir == decoy / "cluster"
        assert str(decoy / "rel-entry") in c.env["PYTHONPATH"].split(os.pathsep)
        assert c.registered() == {1}
        produce_one(c.bootstrap_servers, "not-the-decoy")
