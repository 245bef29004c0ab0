"""Controller election across real broker processes on a real ZooKeeper
(kafkapy.controller.kafka_controller): exactly one controller, a new one after the controller
is killed, stopped or paused past its session, controller epochs that only rise, and a paused
controller that comes back as an ordinary broker."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

import kafkapy
from kafkapy.cluster import Cluster
from kafkapy.zk.zookeeper_server import ZooKeeperServer

SESSION_MS = 3000
FAILOVER_S = SESSION_MS / 1000 + 15      # the session timeout plus a few seconds


@pytest.fixture(scope="module")
def zookeeper() -> Iterator[ZooKeeperServer]:
    with ZooKeeperServer() as zk:
        yield zk


@pytest.fixture
def cluster(zookeeper: ZooKeeperServer) -> Iterator[Cluster]:
    with kafkapy.Cluster(3, {"zookeeper.session.timeout.ms": SESSION_MS},
                         zookeeper_connect=zookeeper.connect_string, timeout=60) as c:
        yield c


def test_one_controller_in_kafkas_format(cluster: Cluster) -> None:
    controller = cluster.wait_for_controller()
    assert controller in (1, 2, 3)
    assert cluster.controller_epoch() == 1
    data, stat = cluster._zk().get(cluster._path("/controller"))
    assert json.loads(data)["brokerid"] == controller
    assert json.loads(data)["version"] == 2
    assert stat.ephemeralOwner != 0
    log = cluster.brokers[controller].log_path.read_text()
    assert f"Broker {controller} is the controller (controller epoch 1)" in log


def test_failover_after_kill_and_stop(cluster: Cluster) -> None:
    first = cluster.wait_for_controller()
    cluster.kill(first)
    second = cluster.wait_for_controller(not_in=[first], timeout=FAILOVER_S)
    assert cluster.controller_epoch() == 2
    cluster.stop(second)                        # a clean stop: at once, no session timeout
    third = cluster.wait_for_controller(not_in=[first, second], timeout=10)
    assert cluster.controller_epoch() == 3
    cluster.restart(first)
    cluster.restart(second)
    assert cluster.controller() == third        # restarted brokers do not take over
    assert cluster.controller_epoch() == 3


def test_a_controller_paused_past_its_session_comes_back_as_a_broker(cluster: Cluster) -> None:
    old = cluster.wait_for_controller()
    cluster.pause(old)
    new = cluster.wait_for_controller(not_in=[old], timeout=FAILOVER_S)
    assert cluster.controller_epoch() == 2
    cluster.resume(old)
    cluster.wait_until(lambda: old in cluster.registered(), f"broker {old} to register again",
                       broker_id=old)
    cluster.wait_until(
        lambda: f"Broker {old} is no longer the controller" in
        cluster.brokers[old].log_path.read_text(), f"broker {old} to resign", broker_id=old)
    assert cluster.controller() == new
    assert cluster.controller_epoch() == 2
