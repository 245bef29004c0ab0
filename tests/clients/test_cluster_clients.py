"""Real clients against a real 3-broker cluster (ZooKeeper mode): the issue's evidence.

One cluster for the module (``kafkapy.Cluster``: a real ZooKeeper, three broker processes).
confluent-kafka, kafka-python, aiokafka and kcat see the same metadata from every broker; RF-3
topics are created, grown, reconfigured and deleted through each admin client (which route
them to the controller); acks=all data survives a SIGKILLed leader; a SIGKILLed controller is
replaced and the new one serves admin requests; a SIGTERMed broker hands its leaderships over
before it stops, so no partition is ever leaderless. Each fault test restarts what it stopped
and waits until every replica is back in the ISR, so the tests do not depend on their order.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic as AioNewTopic
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
)
from kafka.admin import KafkaAdminClient
from kafka.admin import NewTopic as KPNewTopic

import kafkapy
from kafkapy.cluster import Cluster
from kafkapy.coordinator.internal_topic import partition_for
from kafkapy.errors import CoordinatorLoadInProgressError, NotCoordinatorError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    ApiVersionsRequest,
    FeatureUpdateKey,
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
    UpdateFeaturesRequest,
)
from tests.clients.client_support import (
    Msg,
    RawClient,
    consume_aiokafka,
    consume_confluent,
    consume_kafka_python,
    produce_confluent,
)

pytestmark = pytest.mark.timeout(240)

OFFSETS_TOPIC = "__consumer_offsets"
TXN_TOPIC = "__transaction_state"
SESSION_MS = 6000
SETTINGS = {
    "zookeeper.session.timeout.ms": SESSION_MS,
    "replica.lag.time.max.ms": 4000,
    "offsets.topic.num.partitions": 5,
    "transaction.state.log.num.partitions": 5,
    "min.insync.replicas": 2,
    # Leadership moves only when a test moves it.
    "auto.leader.rebalance.enable": "false",
}
# A dead leader is noticed when its ZooKeeper session expires; the new leaders follow within
# seconds (the bar).
FAILOVER_S = SESSION_MS / 1000 + 8


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with kafkapy.Cluster(3, SETTINGS, timeout=60) as c:
        yield c


def admin(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 10_000})


def create(cluster: Cluster, name: str, partitions: int = 6, rf: int = 3,
           configs: dict[str, str] | None = None) -> None:
    a = admin(cluster.bootstrap_servers)      # kept alive until the result is in
    futures = a.create_topics([NewTopic(name, partitions, rf, config=configs or {})],
                              operation_timeout=30)
    futures[name].result(30)
    for p in range(partitions):
        cluster.wait_for_isr(name, p, rf, timeout=30)


def view(bootstrap: str) -> dict[str, Any]:
    """What one broker says about the cluster, through confluent-kafka."""
    md = admin(bootstrap).list_topics(timeout=10)
    return {
        "controller": md.controller_id,
        "brokers": {b.id: (b.host, b.port) for b in md.brokers.values()},
        "topics": {t.topic: {p.id: (p.leader, tuple(p.replicas), tuple(sorted(p.isrs)))
                             for p in t.partitions.values()}
                   for t in md.topics.values() if not t.topic.startswith("__")},
    }


def restore(cluster: Cluster, broker_id: int) -> None:
    """Start ``broker_id`` again and wait until it is back in every ISR it belongs to. A
    killed broker's registration must expire first: until then its id is in use."""
    cluster.wait_for_unregistered(broker_id, timeout=FAILOVER_S)
    cluster.restart(broker_id)
    for topic, partitions in view(cluster.brokers[broker_id].bootstrap)["topics"].items():
        for p, (_, replicas, _) in partitions.items():
            cluster.wait_for_isr(topic, p, len(replicas), timeout=60)


# ------------------------------------------------------------------- metadata


def test_every_broker_answers_the_same_metadata(cluster: Cluster) -> None:
    create(cluster, "same-view", partitions=6)
    views = [view(b.bootstrap) for b in cluster.brokers.values()]
    assert views[0] == views[1] == views[2]
    v = views[0]
    assert v["controller"] == cluster.controller()
    assert v["brokers"] == {i: (cluster.host, b.port) for i, b in cluster.brokers.items()}
    partitions = v["topics"]["same-view"]
    assert sorted(partitions) == list(range(6))
    for leader, replicas, isr in partitions.values():
        assert sorted(replicas) == [1, 2, 3] and leader == replicas[0]
        assert isr == (1, 2, 3)
    # Kafka's assignment spreads the preferred leaders over the brokers.
    assert {leader for leader, _, _ in partitions.values()} == {1, 2, 3}
    for p, (leader, _, _) in partitions.items():
        assert cluster.leader_of("same-view", p) == leader


def test_kcat_and_kafka_python_see_the_same_cluster(cluster: Cluster) -> None:
    create(cluster, "kcat-view", partitions=3)
    expected = view(cluster.brokers[1].bootstrap)["topics"]["kcat-view"]
    for broker in cluster.brokers.values():
        out = subprocess.run(["kcat", "-L", "-J", "-b", broker.bootstrap, "-t", "kcat-view"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
        doc = json.loads(out)
        assert {b["id"] for b in doc["brokers"]} == {1, 2, 3}
        (topic,) = doc["topics"]
        assert {p["partition"]: (p["leader"], tuple(r["id"] for r in p["replicas"]),
                                 tuple(sorted(i["id"] for i in p["isrs"])))
                for p in topic["partitions"]} == expected
        client = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10_000)
        try:
            described = client.describe_cluster()
            assert described["controller_id"] == cluster.controller()
            assert {b["broker_id"] for b in described["brokers"]} == {1, 2, 3}
        finally:
            client.close()



def test_every_broker_describes_topic_partitions_alike(cluster: Cluster) -> None:
    # DescribeTopicPartitions (kafka-python's describe_topic_partitions) from the ZooKeeper
    # metadata cache: the same pages from every broker, matching Metadata; ListConfigResources
    # lists every live broker.
    create(cluster, "dtp-view", partitions=3)
    expected = view(cluster.brokers[1].bootstrap)["topics"]["dtp-view"]
    for broker in cluster.brokers.values():
        client = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10_000)
        try:
            first = client.describe_topic_partitions(["dtp-view"], response_partition_limit=2)
            rest = client.describe_topic_partitions(["dtp-view"], cursor=first["next_cursor"])
            assert first["next_cursor"] == {"topic_name": "dtp-view", "partition_index": 2}
            assert rest["next_cursor"] is None
            partitions = first["topics"][0]["partitions"] + rest["topics"][0]["partitions"]
            assert {p["partition_index"]: (p["leader_id"], tuple(p["replica_nodes"]),
                                           tuple(sorted(p["isr_nodes"])))
                    for p in partitions} == expected
            assert all(p["error_code"] == 0 and p["offline_replicas"] == []
                       for p in partitions)
            resources = client.list_config_resources(["BROKER"])
            assert sorted(resources["broker"]) == ["1", "2", "3"]
            # A ZooKeeper-mode broker does not serve DescribeQuorum (55).
            assert 55 not in client.api_versions()
        finally:
            client.close()


# ------------------------------------------------------------------- admin


def test_topic_lifecycle_through_confluent_kafka(cluster: Cluster) -> None:
    a = admin(cluster.bootstrap_servers)
    create(cluster, "life-c", partitions=3)
    a.create_partitions([NewPartitions("life-c", 5)], operation_timeout=30)["life-c"].result(30)
    for p in range(5):
        cluster.wait_for_isr("life-c", p, 3, timeout=30)
    resource = ConfigResource(ConfigResource.Type.TOPIC, "life-c", incremental_configs=[
        ConfigEntry("retention.ms", "123456",
                    incremental_operation=AlterConfigOpType.SET)])
    a.incremental_alter_configs([resource])[resource].result(30)
    for broker in cluster.brokers.values():
        def changed(bootstrap: str = broker.bootstrap) -> bool:
            res = ConfigResource(ConfigResource.Type.TOPIC, "life-c")
            client = admin(bootstrap)
            configs = client.describe_configs([res])[res].result(10)
            return bool(configs["retention.ms"].value == "123456")
        cluster.wait_until(changed, f"broker {broker.broker_id} to see retention.ms", 20)
    for broker in cluster.brokers.values():
        assert len(view(broker.bootstrap)["topics"]["life-c"]) == 5
    a.delete_topics(["life-c"], operation_timeout=30)["life-c"].result(30)
    for broker in cluster.brokers.values():
        cluster.wait_until(lambda b=broker.bootstrap: "life-c" not in view(b)["topics"],
                           f"broker {broker.broker_id} to forget life-c", 30)


def test_topic_lifecycle_through_kafka_python_and_aiokafka(cluster: Cluster) -> None:
    client = KafkaAdminClient(bootstrap_servers=cluster.brokers[3].bootstrap,
                              request_timeout_ms=30_000)
    try:
        client.create_topics([KPNewTopic("life-k", 4, 3)], timeout_ms=30_000)
        for p in range(4):
            cluster.wait_for_isr("life-k", p, 3, timeout=30)
        client.delete_topics(["life-k"], timeout_ms=30_000)
    finally:
        client.close()

    async def with_aiokafka() -> None:
        a = AIOKafkaAdminClient(bootstrap_servers=cluster.brokers[2].bootstrap)
        await a.start()
        try:
            await a.create_topics([AioNewTopic("life-a", 2, 3)])
        finally:
            await a.close()

    asyncio.run(with_aiokafka())
    for p in range(2):
        cluster.wait_for_isr("life-a", p, 3, timeout=30)
    cluster.wait_until(lambda: "life-k" not in view(cluster.bootstrap_servers)["topics"],
                       "life-k to be deleted", 30)


def test_replication_factor_above_the_live_brokers_is_refused(cluster: Cluster) -> None:
    a = admin(cluster.bootstrap_servers)
    futures = a.create_topics([NewTopic("too-many", 1, 4)], operation_timeout=10)
    with pytest.raises(confluent_kafka.KafkaException) as info:
        futures["too-many"].result(30)
    error = info.value.args[0]
    assert error.code() == confluent_kafka.KafkaError.INVALID_REPLICATION_FACTOR
    assert "larger than available brokers: 3" in error.str()


# ------------------------------------------------------------------- data and faults


def messages(n: int, tag: str) -> list[Msg]:
    return [Msg(f"{tag}-{i}".encode(), f"value-{tag}-{i}".encode()) for i in range(n)]


def consume_all(cluster: Cluster, topic: str, partition: int, count: int) -> list[bytes]:
    """The partition's values read by each client library; they must agree. Bootstrapped on
    the running brokers only: kafka-python leaks the socket of a refused connection (a
    ResourceWarning that pytest turns into another test's failure)."""
    bootstrap = ",".join(b.bootstrap for b in cluster.brokers.values() if b.running)
    reads = [
        [g.value for g in consume_confluent(bootstrap, topic, count, partition=partition)],
        [g.value for g in consume_kafka_python(bootstrap, topic, count, partition=partition)],
        [g.value for g in consume_aiokafka(bootstrap, topic, count, partition=partition)],
    ]
    assert reads[0] == reads[1] == reads[2]
    return [v for v in reads[0] if v is not None]


def test_acks_all_data_survives_a_killed_leader(cluster: Cluster) -> None:
    create(cluster, "survive", partitions=3)
    before = messages(300, "before")
    offsets = produce_confluent(cluster.bootstrap_servers, "survive", before, partition=0,
                                config={"enable.idempotence": True})
    assert offsets == list(range(300))
    victim = cluster.leader_of("survive", 0)
    assert victim is not None
    led = [p for p in range(3) if cluster.leader_of("survive", p) == victim]
    isr_before = {p: set(cluster.isr_of("survive", p)) for p in led}
    started = time.monotonic()
    cluster.kill(victim)
    try:
        for p in led:
            new = cluster.wait_for_leader("survive", p, not_in={victim}, timeout=FAILOVER_S)
            assert new in isr_before[p]
        took = time.monotonic() - started
        assert took < FAILOVER_S
        after = messages(200, "after")
        offsets = produce_confluent(cluster.bootstrap_servers, "survive", after, partition=0,
                                    config={"enable.idempotence": True})
        assert offsets == list(range(300, 500))
        values = consume_all(cluster, "survive", 0, 500)
        assert values == [m.value for m in before + after]  # none lost, duplicated, reordered
    finally:
        restore(cluster, victim)


def test_a_killed_controller_is_replaced_and_the_new_one_serves_admin(cluster: Cluster) -> None:
    old = cluster.wait_for_controller()
    cluster.kill(old)
    try:
        new = cluster.wait_for_controller(not_in={old}, timeout=FAILOVER_S)
        assert new != old
        # The new controller tells every broker (UpdateMetadata); a client asks any of them.
        live = [i for i in cluster.brokers if i != old]
        for i in live:
            cluster.wait_until(lambda i=i: cluster.broker_metadata(i)[0] == new,
                               f"broker {i} to name controller {new}", timeout=10)
        a = admin(",".join(cluster.brokers[i].bootstrap for i in live))
        a.create_topics([NewTopic("after-controller", 2, 2)], operation_timeout=30
                        )["after-controller"].result(30)
        for p in range(2):
            cluster.wait_for_isr("after-controller", p, 2, timeout=30)
            assert cluster.leader_of("after-controller", p) != old
    finally:
        restore(cluster, old)


def test_sigterm_moves_leadership_before_the_broker_stops(cluster: Cluster) -> None:
    create(cluster, "graceful", partitions=6)
    victim = cluster.leader_of("graceful", 0)
    assert victim is not None
    leaderless: list[tuple[int, float]] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            for p in range(6):
                if cluster.leader_of("graceful", p) is None:
                    leaderless.append((p, time.monotonic()))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        cluster.stop(victim)
    finally:
        stop.set()
        watcher.join()
    try:
        assert leaderless == []
        assert all(cluster.leader_of("graceful", p) != victim for p in range(6))
    finally:
        restore(cluster, victim)


def test_preferred_leader_election_through_confluent_kafka(cluster: Cluster) -> None:
    create(cluster, "preferred", partitions=1)
    state = cluster.partition_state("preferred", 0)
    assert state is not None
    preferred = state.leader                  # a new partition is led by its first replica
    cluster.stop(preferred)
    moved_to = cluster.wait_for_leader("preferred", 0, not_in={preferred}, timeout=FAILOVER_S)
    restore(cluster, preferred)
    # Leadership stays where it moved (auto.leader.rebalance.enable is off here).
    assert cluster.leader_of("preferred", 0) == moved_to
    a = admin(cluster.bootstrap_servers)
    tp = confluent_kafka.TopicPartition("preferred", 0)
    result = a.elect_leaders(confluent_kafka.ElectionType.PREFERRED, [tp]).result(30)
    assert {(t.topic, t.partition): t.error for t in result} == {("preferred", 0): None}
    assert cluster.leader_of("preferred", 0) == preferred
    # Asked again: nothing to do, with Kafka's error.
    again = a.elect_leaders(confluent_kafka.ElectionType.PREFERRED, [tp]).result(30)
    assert [(t.topic, t.partition, t.error.code() if t.error else None) for t in again] == [
        ("preferred", 0, confluent_kafka.KafkaError.ELECTION_NOT_NEEDED)]
    # The answer came once the new leader was published: every broker names it.
    for b in cluster.brokers.values():
        assert view(b.bootstrap)["topics"]["preferred"][0][0] == preferred


# ------------------------------------------------------------------- coordinators


def _offset_fetch(bootstrap: str, group: str, topic: str) -> tuple[int, int]:
    """OffsetFetch v5 of partition 0 over a raw socket: (top-level error code, offset)."""
    with RawClient(bootstrap) as c:
        r = c.request(ApiKey.OFFSET_FETCH, 5, OffsetFetchRequest(
            group_id=group, topics=[OffsetFetchRequestTopic(name=topic,
                                                            partition_indexes=[0])]))
    offset = r.topics[0].partitions[0].committed_offset if r.topics else -1
    return int(r.error_code), int(offset)


def test_the_group_coordinator_moves_with_its_partition(cluster: Cluster) -> None:
    """The leader of the group's ``__consumer_offsets`` partition is its coordinator: when
    leadership moves, the new leader loads the group's offsets from the replicated log and
    answers them; the old one, a follower now, answers NOT_COORDINATOR."""
    create(cluster, "moving", partitions=1)
    group = "moving-group"
    partition = partition_for(group, int(SETTINGS["offsets.topic.num.partitions"]))
    consumer = confluent_kafka.Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                                         "group.id": group})
    try:
        consumer.commit(offsets=[confluent_kafka.TopicPartition("moving", 0, 42)],
                        asynchronous=False)
    finally:
        consumer.close()
    old = cluster.wait_for_leader(OFFSETS_TOPIC, partition, timeout=30)
    assert _offset_fetch(cluster.brokers[old].bootstrap, group, "moving") == (0, 42)
    cluster.wait_for_isr(OFFSETS_TOPIC, partition, 3, timeout=30)
    cluster.stop(old)                               # a controlled shutdown moves it
    new = cluster.wait_for_leader(OFFSETS_TOPIC, partition, not_in={old}, timeout=FAILOVER_S)
    try:
        answers = []
        deadline = time.monotonic() + 30
        while (not answers or answers[-1] != (0, 42)) and time.monotonic() < deadline:
            answers.append(_offset_fetch(cluster.brokers[new].bootstrap, group, "moving"))
            time.sleep(0.05)
        # Until it has loaded (and been told it leads) it says so with a retriable error.
        assert answers[-1] == (0, 42), answers
        assert {code for code, _ in answers[:-1]} <= {
            CoordinatorLoadInProgressError.code, NotCoordinatorError.code}, answers
    finally:
        restore(cluster, old)
    assert cluster.leader_of(OFFSETS_TOPIC, partition) == new
    assert _offset_fetch(cluster.brokers[old].bootstrap, group, "moving")[0] == \
        NotCoordinatorError.code


def test_an_open_transaction_survives_its_coordinator_moving(cluster: Cluster) -> None:
    """Mid-transaction, the coordinator stops (a controlled shutdown: the next leader of its
    ``__transaction_state`` partition takes over at once): the new coordinator has loaded
    the open transaction and its partitions, and commits it on both."""
    create(cluster, "tx-moving", partitions=2)
    txn_id = "moving-tx"
    partition = partition_for(txn_id, int(SETTINGS["transaction.state.log.num.partitions"]))
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                                         "transactional.id": txn_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(10):
        producer.produce("tx-moving", f"v-{i}".encode(), partition=i % 2)
    assert producer.flush(30) == 0
    old = cluster.wait_for_leader(TXN_TOPIC, partition, timeout=30)
    cluster.wait_for_isr(TXN_TOPIC, partition, 3, timeout=30)
    cluster.stop(old)
    try:
        cluster.wait_for_leader(TXN_TOPIC, partition, not_in={old}, timeout=FAILOVER_S)
        producer.commit_transaction(60)
    finally:
        restore(cluster, old)
    for p in range(2):
        got = consume_confluent(cluster.bootstrap_servers, "tx-moving", 5, partition=p,
                                config={"isolation.level": "read_committed"})
        assert [m.value for m in got] == [f"v-{i}".encode() for i in range(p, 10, 2)]


def test_consumer_group_and_transactions_on_the_cluster(cluster: Cluster) -> None:
    # __consumer_offsets and __transaction_state are RF-3 topics here; each group's and each
    # transactional id's coordinator is the leader of its partition, found by FindCoordinator
    # on any broker.
    create(cluster, "tx-in", partitions=2)
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                                         "transactional.id": "cluster-tx"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(20):
        producer.produce("tx-in", f"committed-{i}".encode(), partition=i % 2)
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce("tx-in", b"aborted", partition=0)
    producer.abort_transaction(30)
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": cluster.bootstrap_servers, "group.id": "cluster-group",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
        "isolation.level": "read_committed"})
    try:
        consumer.subscribe(["tx-in"])
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < 20 and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and not m.error():
                got.append(m.value())
        assert sorted(got) == sorted(f"committed-{i}".encode() for i in range(20))
        consumer.commit(asynchronous=False)
        committed = consumer.committed([confluent_kafka.TopicPartition("tx-in", p)
                                        for p in range(2)], timeout=10)
        # Stored by the group's coordinator: past each partition's ten committed records
        # (how far past the markers depends on how far the consumer had fetched).
        assert all(tp.offset >= 10 and not tp.error for tp in committed), committed
    finally:
        consumer.close()
    for topic in ("__consumer_offsets", "__transaction_state"):
        md = view(cluster.bootstrap_servers)
        assert topic not in md["topics"]       # internal: left out of view(); check ZooKeeper
        assert cluster.partition_state(topic, 0) is not None
        assert len(cluster.isr_of(topic, 0)) == 3


# ------------------------------------------------------------------- features (KIP-584)


def _api_versions(bootstrap: str) -> Any:
    with RawClient(bootstrap) as c:
        return c.request(ApiKey.API_VERSIONS, 4, ApiVersionsRequest(
            client_software_name="kafkapy-tests", client_software_version="1.0"))


def _finalized(bootstrap: str) -> tuple[dict[str, int], int]:
    r = _api_versions(bootstrap)
    return {f.name: f.max_version_level for f in r.finalized_features}, \
        r.finalized_features_epoch


def _every_broker_has(cluster: Cluster, levels: dict[str, int], epoch: int) -> None:
    for b in cluster.brokers.values():
        cluster.wait_until(lambda b=b: _finalized(b.bootstrap) == (levels, epoch),
                           f"broker {b.broker_id} at finalized features {levels} epoch {epoch}",
                           timeout=30)


def test_features_live_in_zookeeper_and_change_through_the_controller(cluster: Cluster
                                                                      ) -> None:
    """The controller created ``/feature`` (Kafka's FeatureZNode v2) with group.version 1;
    every broker registered what it supports and answers the znode's version as the epoch.
    UpdateFeatures goes to the controller (kafka-python finds it; any other broker answers
    NOT_CONTROLLER); every broker follows the change through its watch; a broker started
    later reads it; KIP-848 is served again after the upgrade back."""
    zk = cluster._zk()
    data, stat = zk.get(cluster._path("/feature"))
    assert json.loads(data) == {"version": 2, "status": 1,
                                "features": {"group.version": {"max_version_level": 1}}}
    for b in (1, 2, 3):
        registration = json.loads(zk.get(cluster._path(f"/brokers/ids/{b}"))[0])
        assert registration["features"] == {"group.version": {"min_version": 1,
                                                              "max_version": 1}}
    epoch = stat.version
    _every_broker_has(cluster, {"group.version": 1}, epoch)
    controller = cluster.controller()
    other = next(b for b in (1, 2, 3) if b != controller)
    with RawClient(cluster.brokers[other].bootstrap) as c:
        r = c.request(ApiKey.UPDATE_FEATURES, 1, UpdateFeaturesRequest(
            timeout_ms=10000, feature_updates=[FeatureUpdateKey(
                feature="group.version", max_version_level=0, upgrade_type=2)]))
    assert (r.error_code, r.results) == (41, [])                    # NOT_CONTROLLER
    a = KafkaAdminClient(bootstrap_servers=cluster.brokers[other].bootstrap)
    try:
        assert a.update_features({"group.version": ("SAFE_DOWNGRADE", 0)},
                                 validate_only=True) == {"group.version": "OK"}
        assert zk.get(cluster._path("/feature"))[1].version == epoch
        assert a.update_features({"group.version": ("SAFE_DOWNGRADE", 0)}) == \
            {"group.version": "OK"}
        _every_broker_has(cluster, {}, epoch + 1)
        assert ApiKey.CONSUMER_GROUP_HEARTBEAT not in \
            {k.api_key for k in _api_versions(cluster.brokers[other].bootstrap).api_keys}
        cluster.stop(other)
        restore(cluster, other)
        assert _finalized(cluster.brokers[other].bootstrap) == ({}, epoch + 1)
        assert a.update_features({"group.version": 1}) == {"group.version": "OK"}
        _every_broker_has(cluster, {"group.version": 1}, epoch + 2)
    finally:
        a.close()
    for b in cluster.brokers.values():
        assert ApiKey.CONSUMER_GROUP_HEARTBEAT in \
            {k.api_key for k in _api_versions(b.bootstrap).api_keys}
