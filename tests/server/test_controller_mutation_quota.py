"""The controller mutation quota (KIP-599) on a real broker, over kafka-python's wire protocol:
``controller_mutation_rate`` set with AlterClientQuotas for a (user, client-id); CreateTopics
v7 (strict) refuses the topics beyond the quota with THROTTLING_QUOTA_EXCEEDED and a throttle
time, CreateTopics v4 (permissive) creates them all but is throttled; kafka-python's
create_topics sees the error too (librdkafka sends CreateTopics v4 at most: never strict).
Plus the token bucket's arithmetic, as pure logic."""

from __future__ import annotations

import time
from typing import Any

from kafka import KafkaAdminClient
from kafka import errors as Errors
from kafka.protocol.admin import CreateTopicsRequest

import kafkapy
from kafkapy.server.controller_mutation_quota import TokenBucket
from kafkapy.testing import BrokerHandle
from kafkapy.tools.client_quotas_admin import alter_client_quotas

THROTTLING_QUOTA_EXCEEDED = 89


def _create(admin: Any, names: list[str], partitions: int, version: int | None) -> Any:
    """One CreateTopics request (version negotiated, or pinned) to the controller; the raw
    response (kafka-python's create_topics drops throttle_time_ms)."""
    cls = CreateTopicsRequest if version is None else CreateTopicsRequest[version]
    request = cls(topics=[CreateTopicsRequest.CreatableTopic(
        name=n, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])
        for n in names], timeout_ms=30_000, validate_only=False)

    def errors(response: Any) -> list[type[Exception]]:
        return [Errors.for_code(t.error_code) for t in response.topics]
    return admin._manager.run(admin._send_request_to_controller, request, errors, False)


def test_token_bucket_starts_full_refills_and_goes_negative() -> None:
    bucket = TokenBucket()
    assert bucket.measure(2.0, 20.0, 1000) == 20.0
    assert bucket.record(30, 2.0, 20.0, 1000) == -10.0
    assert bucket.measure(2.0, 20.0, 3000) == -6.0        # 2 s at 2 tokens/s
    assert bucket.measure(2.0, 20.0, 100_000) == 20.0     # never above the burst


def test_create_topics_over_the_quota_is_refused_and_throttled(
        kafka_broker_factory: Any) -> None:
    broker: BrokerHandle = kafka_broker_factory()
    setup = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    strict = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers, client_id="mut")
    loose = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers, client_id="loose")
    try:
        [result] = alter_client_quotas(setup, [
            ([("user", "ANONYMOUS"), ("client-id", "mut")],
             [("controller_mutation_rate", 2)])])
        assert result.error_code == 0
        # rate 2/s: a full bucket holds 11 * 1 s * 2 = 22 partitions; a topic is accepted
        # while the bucket is not negative, so 10-partition topics 1-3 pass (22 -> -8).
        names = [f"strict-{i}" for i in range(5)]
        response = _create(strict, names, 10, None)
        codes = {t.name: t.error_code for t in response.topics}
        assert {t.error_message for t in response.topics} == {None}
        assert codes == {"strict-0": 0, "strict-1": 0, "strict-2": 0,
                         "strict-3": THROTTLING_QUOTA_EXCEEDED,
                         "strict-4": THROTTLING_QUOTA_EXCEEDED}
        # -8 tokens refill at 2/s: about 4 s
        assert 0 < response.throttle_time_ms <= 4000
        # Another client id has no quota: never throttled.
        free = _create(loose, ["free-0", "free-1", "free-2"], 10, None)
        assert [t.error_code for t in free.topics] == [0, 0, 0]
        assert free.throttle_time_ms == 0
        # v4 knows no THROTTLING_QUOTA_EXCEEDED: permissive, everything created, throttled.
        [result] = alter_client_quotas(setup, [
            ([("user", "ANONYMOUS"), ("client-id", "loose")],
             [("controller_mutation_rate", 2)])])
        assert result.error_code == 0
        old = _create(loose, [f"old-{i}" for i in range(4)], 10, 4)
        assert [t.error_code for t in old.topics] == [0, 0, 0, 0]
        assert old.throttle_time_ms > 0
    finally:
        setup.close()
        strict.close()
        loose.close()
    # kafka-python's own admin methods. The client id "tiny" has a burst of 0.11 token
    # (11 windows of 0.01/s), so of two topics in a request the second is refused, and the
    # bucket stays negative for minutes. Each call on a fresh client: kafka-python holds a
    # throttled connection back for the throttle time (KIP-219).
    setup = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        [result] = alter_client_quotas(setup, [
            ([("client-id", "tiny")], [("controller_mutation_rate", 0.01)])])
        assert result.error_code == 0
    finally:
        setup.close()

    def tiny(call: Any) -> Any:
        client = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers,
                                  client_id="tiny")
        try:
            return call(client)
        finally:
            client.close()
    answer = tiny(lambda c: c.create_topics(
        {"tiny-0": {"num_partitions": 3, "replication_factor": 1},
         "tiny-1": {"num_partitions": 3, "replication_factor": 1}}, raise_errors=False))
    codes = {t["name"]: t["error_code"] for t in answer["topics"]}
    assert codes == {"tiny-0": 0, "tiny-1": THROTTLING_QUOTA_EXCEEDED}
    grown = tiny(lambda c: c.create_partitions({"tiny-0": 5}, raise_errors=False))
    assert [(r.name, r.error_code) for r in grown.results] == [
        ("tiny-0", THROTTLING_QUOTA_EXCEEDED)]
    assert grown.throttle_time_ms > 0
    gone = tiny(lambda c: c.delete_topics(["tiny-0"], raise_errors=False))
    assert [(t["name"], t["error_code"]) for t in gone["topics"]] == [
        ("tiny-0", THROTTLING_QUOTA_EXCEEDED)]
    # The refused mutations did not happen; a client without a quota may still do them.
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        grown = admin.create_partitions({"tiny-0": 5})
        assert [r.error_code for r in grown.results] == [0]
        gone = admin.delete_topics(["tiny-0"])
        assert [t["error_code"] for t in gone["topics"]] == [0]
    finally:
        admin.close()


def test_controller_enforces_a_quota_stored_in_zookeeper() -> None:
    # ZooKeeper mode: the quota is written to /config/clients/zk-mut through one broker, and
    # CreateTopics goes to the active controller, which meters it.
    with kafkapy.Cluster(2, {"offsets.topic.num.partitions": 1}, timeout=60.0) as cluster:
        setup = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        try:
            [result] = alter_client_quotas(setup, [
                ([("client-id", "zk-mut")], [("controller_mutation_rate", 1)])])
            assert result.error_code == 0
        finally:
            setup.close()
        client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers,
                                  client_id="zk-mut")
        try:
            deadline = time.monotonic() + 60
            while True:     # until the controller has followed the change notification
                name = f"zk-{int(time.monotonic() * 1000)}"
                response = _create(client, [f"{name}-a", f"{name}-b"], 12, None)
                codes = [t.error_code for t in response.topics]
                if codes == [0, THROTTLING_QUOTA_EXCEEDED]:
                    break
                assert codes == [0, 0], codes
                assert time.monotonic() < deadline, "the quota never applied"
                time.sleep(0.5)
            assert response.throttle_time_ms > 0
        finally:
            client.close()
        # DeleteTopics (v5+, strict) by the same client id, on a fresh connection: refused
        client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers,
                                  client_id="zk-mut")
        try:
            gone = client.delete_topics([f"{name}-a"], raise_errors=False)
            assert [t["error_code"] for t in gone["topics"]] == [THROTTLING_QUOTA_EXCEEDED]
        finally:
            client.close()
