"""Controller behaviour that follows broker settings, on a one-broker cluster of its own:
``delete.topic.enable=false`` refuses deletions (the marker goes, the topic stays)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

import kafkapy
from kafkapy.cluster import Cluster
from kafkapy.zk.zookeeper_server import ZooKeeperServer


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperServer) -> Iterator[Cluster]:
    with kafkapy.Cluster(1, {"zookeeper.session.timeout.ms": 6000,
                             "delete.topic.enable": "false"},
                         zookeeper_connect=zookeeper.connect_string, timeout=60) as c:
        c.wait_for_controller()
        yield c


def test_deletion_refused_when_delete_topic_enable_is_false(cluster: Cluster) -> None:
    cluster.create_topic("kept", {0: [1]})
    assert cluster.wait_for_leader("kept", 0, timeout=10) == 1
    cluster.delete_topic("kept")
    zk = cluster._zk()
    cluster.wait_until(lambda: zk.exists(cluster._path("/admin/delete_topics/kept")) is None,
                       "the deletion marker to go", timeout=10)
    time.sleep(0.3)
    assert zk.exists(cluster._path("/brokers/topics/kept")) is not None
    assert cluster.leader_of("kept", 0) == 1
    assert "delete.topic.enable is false" in cluster.brokers[1].log_path.read_text()
