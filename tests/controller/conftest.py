"""Shared fixtures of the controller tests: one ZooKeeper and one 3-broker cluster per module,
recording peers registered as extra brokers, and a synchronous inter-broker request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import trio

import kafkapy
from kafkapy.clients.network_client import BrokerConnection
from kafkapy.cluster import Cluster
from kafkapy.zk.zookeeper_server import ZooKeeperServer
from tests.controller.recording_broker import RecordingBroker

SESSION_MS = 6000
FAILOVER_S = SESSION_MS / 1000 + 10       # the session timeout plus a few seconds


@pytest.fixture(scope="module")
def zookeeper() -> Iterator[ZooKeeperServer]:
    with ZooKeeperServer() as zk:
        yield zk


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperServer) -> Iterator[Cluster]:
    with kafkapy.Cluster(3, {"zookeeper.session.timeout.ms": SESSION_MS},
                         zookeeper_connect=zookeeper.connect_string, timeout=60) as c:
        c.wait_for_controller()
        yield c


@pytest.fixture
def recording(cluster: Cluster) -> Iterator[list[RecordingBroker]]:
    """Recording peers the test starts with ``start_peer``; closed after the test."""
    peers: list[RecordingBroker] = []
    yield peers
    for peer in peers:
        peer.close()


def start_peer(cluster: Cluster, peers: list[RecordingBroker], broker_id: int,
               **kwargs: Any) -> RecordingBroker:
    peer = RecordingBroker(broker_id, cluster.zookeeper_connect, **kwargs).start()
    peers.append(peer)
    return peer


def request(cluster: Cluster, broker_id: int, api_key: int, version: int, body: Any) -> Any:
    """One request to a broker of the cluster, from a fresh connection."""
    async def go() -> Any:
        conn = BrokerConnection(cluster.host, cluster.brokers[broker_id].port, timeout_s=15)
        try:
            return await conn.request(api_key, version, body)
        finally:
            await conn.close()
    return trio.run(go)
