"""DescribeClientQuotas / AlterClientQuotas on real brokers, over kafka-python's wire
protocol: a single broker (with a restart) and a 3-broker ZooKeeper cluster."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaAdminClient
from kazoo.client import KazooClient

import kafkapy
from kafkapy.cluster import Cluster
from kafkapy.testing import BrokerHandle
from kafkapy.tools.client_quotas_admin import (
    AlterResult,
    QuotaEntry,
    alter_client_quotas,
    describe_client_quotas,
)

WAIT_S = 60.0
ALICE = [("user", "alice")]
ALICE_C1 = [("user", "alice"), ("client-id", "c1")]


def _admin(bootstrap: str) -> Any:
    return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000)


def _all(admin: Any) -> dict[frozenset[tuple[str, str | None]], dict[str, float]]:
    code, message, entries = describe_client_quotas(admin, [], strict=False)
    assert (code, message) == (0, None)
    return {frozenset(e.entity): e.values for e in entries}


def test_alter_and_describe_single_broker_survive_restart(
        kafka_broker_factory: Any) -> None:
    broker: BrokerHandle = kafka_broker_factory()
    admin = _admin(broker.bootstrap_servers)
    try:
        results = alter_client_quotas(admin, [
            (ALICE, [("producer_byte_rate", 1024), ("consumer_byte_rate", 2048)]),
            (ALICE_C1, [("request_percentage", 12.5)]),
            ([("client-id", None)], [("producer_byte_rate", 100)]),
            ([("ip", "127.0.0.1")], [("connection_creation_rate", 10)]),
            ([("user", "bob")], [("bogus", 1)]),
            ([("user", "bob")], [("producer_byte_rate", 1.5)]),
            ([("user", "bob"), ("ip", "1.2.3.4")], [("producer_byte_rate", 1)]),
        ])
        assert [(r.error_code, r.error_message) for r in results] == [
            (0, None), (0, None), (0, None), (0, None),
            (42, "Invalid configuration key bogus"),
            (42, "Configuration producer_byte_rate must be a LONG value"),
            (42, "Invalid quota entity combination, IP entity should not be used with "
                 "user/client ID entity.")]
        assert results[2] == AlterResult((("client-id", None),), 0, None)
        # validate_only changes nothing, but still reports errors
        [ok, bad] = alter_client_quotas(admin, [(ALICE, [("producer_byte_rate", 1)]),
                                                ([], [("producer_byte_rate", 1)])],
                                        validate_only=True)
        assert (ok.error_code, bad.error_code, bad.error_message) == \
            (0, 42, "Invalid empty client quota entity")
        expected = {
            frozenset(ALICE): {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0},
            frozenset(ALICE_C1): {"request_percentage": 12.5},
            frozenset([("client-id", None)]): {"producer_byte_rate": 100.0},
            frozenset([("ip", "127.0.0.1")]): {"connection_creation_rate": 10.0},
        }
        assert _all(admin) == expected
        code, _, entries = describe_client_quotas(admin, [("user", 0, "alice")], strict=True)
        assert (code, entries) == (0, [QuotaEntry(
            (("user", "alice"),), {"consumer_byte_rate": 2048.0, "producer_byte_rate": 1024.0})])
        code, message, entries = describe_client_quotas(admin, [("user", 2, None),
                                                                ("ip", 2, None)])
        assert (code, message, entries) == (
            42, "Invalid entity filter component combination, IP filter component should not "
                "be used with user or clientId filter component.", [])
        # removing the last key removes the entity from the answer
        alter_client_quotas(admin, [(ALICE_C1, [("request_percentage", None)])])
        del expected[frozenset(ALICE_C1)]
        assert _all(admin) == expected
    finally:
        admin.close()
    broker.restart()
    admin = _admin(broker.bootstrap_servers)
    try:
        assert _all(admin) == expected
    finally:
        admin.close()


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with kafkapy.Cluster(3, {"offsets.topic.num.partitions": 1}, timeout=WAIT_S) as c:
        yield c


def test_cluster_quotas_in_zookeeper_reach_every_broker(cluster: Cluster) -> None:
    zk = KazooClient(hosts=cluster.zookeeper_connect)
    zk.start(timeout=WAIT_S)
    try:
        # Another writer's key (a SCRAM credential) in the same znode must survive.
        zk.create("/config/users/alice", json.dumps(
            {"version": 1, "config": {"SCRAM-SHA-256": "salt=c2FsdA==,iterations=4096"}}
        ).encode(), makepath=True)
        one = _admin(cluster.brokers[1].bootstrap)
        three = _admin(cluster.brokers[3].bootstrap)
        try:
            [result] = alter_client_quotas(one, [(ALICE, [("producer_byte_rate", 1024)])])
            assert result.error_code == 0
            data, _ = zk.get("/config/users/alice")
            assert json.loads(data) == {"version": 1, "config": {
                "SCRAM-SHA-256": "salt=c2FsdA==,iterations=4096", "producer_byte_rate": "1024"}}
            [result] = alter_client_quotas(one, [(ALICE_C1, [("consumer_byte_rate", 2048)])])
            assert result.error_code == 0
            data, _ = zk.get("/config/users/alice/clients/c1")
            assert json.loads(data) == {"version": 1,
                                        "config": {"consumer_byte_rate": "2048"}}
            notifications = [json.loads(zk.get(f"/config/changes/{c}")[0])
                             for c in sorted(zk.get_children("/config/changes"))]
            assert {"version": 2, "entity_path": "users/alice/clients/c1"} in notifications
            # broker 3 describes from ZooKeeper; the SCRAM key is not a quota
            assert _all(three) == {frozenset(ALICE): {"producer_byte_rate": 1024.0},
                                   frozenset(ALICE_C1): {"consumer_byte_rate": 2048.0}}
        finally:
            one.close()
            three.close()
        # broker 3 followed the notifications into its own quota store (its log says so)
        wanted = ("Client quotas of users/alice/clients/c1 are {'consumer_byte_rate': '2048'} "
                  "(config change notification)")
        deadline = time.monotonic() + WAIT_S
        while wanted not in cluster.brokers[3].log_path.read_text(errors="replace"):
            assert time.monotonic() < deadline, cluster.brokers[3].log_tail()
            time.sleep(0.2)
    finally:
        zk.stop()
        zk.close()

