"""ZooKeeper mode's metadata on three embedded brokers and a real ZooKeeper: the metadata cache
fed by UpdateMetadata, Metadata / DescribeCluster / FindCoordinator answered alike by every
broker, CreateTopics / DeleteTopics / CreatePartitions on the controller writing Kafka's
znodes and waiting for the controller's UpdateMetadata, config changes reaching every broker
through /config/changes.

The real controller runs (kafkapy/controller) and serves the admin paths. Where a test needs
states the controller would not produce (stale epochs, a dead leader, a deletion mark), the test
sends UpdateMetadata v7 itself, with the elected controller's id, the epoch in /controller_epoch
and each broker's epoch, for topics that exist only in the caches (never in ZooKeeper), so the
controller never publishes anything about them.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

import kafkapy
from kafkapy.clients.network_client import BrokerConnection
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DescribeClusterRequest,
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsRequestTopicRequest,
    FindCoordinatorRequest,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsRequestAlterableConfig,
    IncrementalAlterConfigsRequestAlterConfigsResource,
    ListConfigResourcesRequest,
    MetadataRequest,
    MetadataRequestTopic,
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataTopicState,
)
from kafkapy.server.config_change_listener import purge_obsolete_notifications
from kafkapy.server.metadata_cache import ZkMetadataCache
from kafkapy.server.password_encoder import decode_password, encode_password
from kafkapy.zk.zk_data import topic_id_decode
from kafkapy.zk.zookeeper_server import ZooKeeperServer

TIMEOUT = 20.0
IDS = (1, 2, 3)
# (leader, replicas, isr) per partition of a topic the test publishes
State = tuple[int, Sequence[int], Sequence[int]]


def wait_for(condition: Callable[[], Any], what: str, timeout: float = TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


class Harness:
    def __init__(self, brokers: dict[int, kafkapy.Broker], zk: KazooClient) -> None:
        self.brokers = brokers
        self.zk = zk
        self.topic_ids: dict[str, uuid.UUID] = {}

    def controller(self) -> int:
        return int(json.loads(self.zk.get("/controller")[0])["brokerid"])

    def controller_epoch(self) -> int:
        return int(self.zk.get("/controller_epoch")[0])

    def request(self, broker: int, api_key: int, version: int, body: Any) -> Any:
        b = self.brokers[broker]
        async def go() -> Any:
            conn = BrokerConnection("127.0.0.1", b.port, timeout_s=TIMEOUT)
            try:
                return await conn.request(api_key, version, body)
            finally:
                await conn.close()
        return trio.run(go)

    def update_metadata_request(self, broker: int, topics: Mapping[str, Mapping[int, State]],
                                *, live: Sequence[int] = IDS, controller_epoch: int | None = None,
                                broker_epoch: int | None = None) -> UpdateMetadataRequest:
        epoch = self.controller_epoch() if controller_epoch is None else controller_epoch
        hc = self.brokers[broker].server.healthcheck
        assert hc is not None
        states = []
        for topic, parts in topics.items():
            topic_id = self.topic_ids.setdefault(topic, uuid.uuid4())
            states.append(UpdateMetadataTopicState(topic_name=topic, topic_id=topic_id,
                partition_states=[UpdateMetadataPartitionState(
                    partition_index=p, controller_epoch=epoch, leader=leader, leader_epoch=1,
                    isr=list(isr), zk_version=3, replicas=list(replicas), offline_replicas=[])
                    for p, (leader, replicas, isr) in parts.items()]))
        return UpdateMetadataRequest(
            controller_id=self.controller(), controller_epoch=epoch,
            broker_epoch=hc.broker_epoch if broker_epoch is None else broker_epoch,
            topic_states=states,
            live_brokers=[UpdateMetadataBroker(
                id=i, endpoints=[UpdateMetadataEndpoint(
                    port=self.brokers[i].port, host="127.0.0.1", listener="PLAINTEXT",
                    security_protocol=0)], rack=None) for i in live])

    def update_metadata(self, topics: Mapping[str, Mapping[int, State]], **kw: Any) -> None:
        for b in self.brokers:
            response = self.request(b, ApiKey.UPDATE_METADATA, 7,
                                    self.update_metadata_request(b, topics, **kw))
            assert response.error_code == 0

    def assignment(self, topic: str) -> dict[str, Any]:
        return dict(json.loads(self.zk.get(f"/brokers/topics/{topic}")[0]))

    def publish_assignment(self, topic: str, partitions: Sequence[int] | None = None) -> None:
        """Play the controller for a topic written to ZooKeeper: leader = first replica."""
        znode = self.assignment(topic)
        self.topic_ids[topic] = topic_id_decode(znode["topic_id"])
        parts = {int(p): (r[0], r, r) for p, r in znode["partitions"].items()
                 if partitions is None or int(p) in partitions}
        self.update_metadata({topic: parts})


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    with ZooKeeperServer() as zk_server:
        connect = f"{zk_server.connect_string}/zk-metadata"
        tmp = tmp_path_factory.mktemp("zk-metadata")
        brokers: dict[int, kafkapy.Broker] = {}
        zk = KazooClient(hosts=connect, timeout=10)
        try:
            for i in IDS:
                brokers[i] = kafkapy.Broker(
                    data_dir=Path(tmp) / f"b{i}", zookeeper_connect=connect, broker_id=i,
                    **{"offsets.topic.num.partitions": "4",
                       "transaction.state.log.replication.factor": "4",
                       "num.partitions": "3", "default.replication.factor": "2",
                       # the last brokers to stop may look for a controller being elected
                       "controlled.shutdown.retry.backoff.ms": "200",
                       # dynamic password settings are stored encrypted with it
                       "password.encoder.secret": "zk-metadata-secret"}).start()
            zk.start(timeout=10)
            h = Harness(brokers, zk)
            wait_for(lambda: zk.exists("/controller"), "a controller")
            h.update_metadata({})
            yield h
        finally:
            zk.stop()
            zk.close()
            for b in brokers.values():
                b.stop()


def metadata(h: Harness, broker: int, topics: list[str] | None, version: int = 12,
             auto: bool = False) -> Any:
    body = MetadataRequest(topics=None if topics is None else [
        MetadataRequestTopic(name=t) for t in topics], allow_auto_topic_creation=auto)
    return h.request(broker, ApiKey.METADATA, version, body)


def test_update_metadata_feeds_every_broker_alike(cluster: Harness) -> None:
    h = cluster
    # Partition 2's leader (4) is not a live broker.
    h.update_metadata({"t1": {0: (1, [1, 2], [1, 2]), 1: (2, [2, 3], [2]),
                              2: (4, [4, 1], [1])}})
    answers = [metadata(h, b, ["t1"]) for b in IDS]
    assert answers[0] == answers[1] == answers[2]
    m = answers[0]
    assert m.controller_id == h.controller()
    assert sorted((b.node_id, b.port) for b in m.brokers) == sorted(
        (i, h.brokers[i].port) for i in IDS)
    (t1,) = m.topics
    assert t1.error_code == 0 and t1.topic_id == h.topic_ids["t1"]
    parts = {p.partition_index: p for p in t1.partitions}
    assert (parts[0].error_code, parts[0].leader_id, parts[0].replica_nodes,
            parts[0].isr_nodes, parts[0].leader_epoch) == (0, 1, [1, 2], [1, 2], 1)
    assert (parts[1].leader_id, parts[1].isr_nodes) == (2, [2])
    assert (parts[2].error_code, parts[2].leader_id) == (5, -1)   # LEADER_NOT_AVAILABLE
    # The contract API.
    cache = h.brokers[2].server.metadata_cache
    assert isinstance(cache, ZkMetadataCache)
    assert cache.alive_broker_ids() == set(IDS)
    assert cache.broker_endpoint(3, "PLAINTEXT") is not None
    info = cache.partition_info(TopicPartition("t1", 1))
    assert info is not None and (info.leader, info.replicas, info.partition_epoch) == \
        (2, (2, 3), 3)
    # A real client sees the same cluster from every broker.
    for b in IDS:
        admin = AdminClient({"bootstrap.servers": h.brokers[b].bootstrap_servers})
        md = admin.list_topics(timeout=TIMEOUT)
        assert sorted(md.brokers) == list(IDS)
        assert md.controller_id == h.controller()
        assert sorted(md.topics["t1"].partitions) == [0, 1, 2]
        desc = admin.describe_cluster(request_timeout=TIMEOUT).result(TIMEOUT)
        assert desc.controller.id == h.controller()
        assert sorted(n.id for n in desc.nodes) == list(IDS)
        del admin           # before the brokers stop: librdkafka would keep reconnecting
    # DescribeCluster over the wire, from every broker.
    for b in IDS:
        d = h.request(b, ApiKey.DESCRIBE_CLUSTER, 0, DescribeClusterRequest())
        assert d.controller_id == h.controller() and len(d.brokers) == 3


def test_describe_topic_partitions_from_the_cache(cluster: Harness) -> None:
    # Kafka's describeTopicResponse: partitions never carry an error (a dead leader is -1,
    # where Metadata says LEADER_NOT_AVAILABLE), pages cut at the partition limit.
    h = cluster
    h.update_metadata({"dtp": {0: (1, [1, 2], [1, 2]), 1: (4, [4, 1], [1]),
                               2: (2, [2, 3], [2])}})
    request = DescribeTopicPartitionsRequest(
        topics=[DescribeTopicPartitionsRequestTopicRequest(name="dtp")],
        response_partition_limit=2)
    answers = [h.request(b, ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, request) for b in IDS]
    assert answers[0] == answers[1] == answers[2]
    (topic,) = answers[0].topics
    assert (topic.error_code, topic.name, topic.topic_id) == (0, "dtp", h.topic_ids["dtp"])
    assert [(p.error_code, p.partition_index, p.leader_id, p.leader_epoch, p.replica_nodes,
             p.isr_nodes) for p in topic.partitions] == [
        (0, 0, 1, 1, [1, 2], [1, 2]), (0, 1, -1, 1, [4, 1], [1])]
    cursor = answers[0].next_cursor
    assert (cursor.topic_name, cursor.partition_index) == ("dtp", 2)
    request.cursor = cursor
    (rest,) = h.request(3, ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, request).topics
    assert [(p.partition_index, p.leader_id) for p in rest.partitions] == [(2, 2)]
    # ListConfigResources names every live broker.
    listed = h.request(2, ApiKey.LIST_CONFIG_RESOURCES, 1,
                       ListConfigResourcesRequest(resource_types=[4]))
    assert [r.resource_name for r in listed.config_resources] == ["1", "2", "3"]


def test_stale_epochs_and_deletion(cluster: Harness) -> None:
    h = cluster
    stale = h.update_metadata_request(1, {}, controller_epoch=h.controller_epoch() - 1)
    assert h.request(1, ApiKey.UPDATE_METADATA, 7, stale).error_code == 11
    hc = h.brokers[1].server.healthcheck
    assert hc is not None
    old = h.update_metadata_request(1, {}, broker_epoch=hc.broker_epoch - 1)
    assert h.request(1, ApiKey.UPDATE_METADATA, 7, old).error_code == 77
    # Leader -2 (LeaderDuringDelete) removes the partitions, then the topic.
    h.update_metadata({"gone": {0: (1, [1], [1])}})
    assert metadata(h, 3, ["gone"]).topics[0].error_code == 0
    h.update_metadata({"gone": {0: (-2, [1], [1])}})
    assert metadata(h, 3, ["gone"]).topics[0].error_code == 3
    # v4 (partition states not grouped by topic) is understood too.
    for b in IDS:
        request = h.update_metadata_request(b, {})
        request.ungrouped_partition_states = [UpdateMetadataPartitionState(
            topic_name="old", partition_index=0, controller_epoch=request.controller_epoch,
            leader=2, leader_epoch=4, isr=[2], zk_version=1, replicas=[2],
            offline_replicas=[])]
        assert h.request(b, ApiKey.UPDATE_METADATA, 4, request).error_code == 0
    (old,) = metadata(h, 1, ["old"]).topics
    assert [(p.leader_id, p.leader_epoch) for p in old.partitions] == [(2, 4)]


def create_topics(h: Harness, broker: int, topics: list[CreatableTopic],
                  timeout_ms: int, validate_only: bool = False) -> dict[str, Any]:
    r = h.request(broker, ApiKey.CREATE_TOPICS, 7, CreateTopicsRequest(
        topics=topics, timeout_ms=timeout_ms, validate_only=validate_only))
    return {t.name: t for t in r.topics}


def test_create_topics_only_on_the_controller(cluster: Harness) -> None:
    h = cluster
    controller = h.controller()
    other = next(i for i in IDS if i != controller)
    r = create_topics(h, other, [CreatableTopic(name="c0", num_partitions=1,
                                                replication_factor=1)], 5000)
    assert r["c0"].error_code == 41                       # NOT_CONTROLLER
    assert h.zk.exists("/brokers/topics/c0") is None
    # Replication factor above the live brokers.
    r = create_topics(h, controller, [CreatableTopic(name="c1", num_partitions=1,
                                                     replication_factor=4)], 5000)
    assert (r["c1"].error_code, r["c1"].error_message) == (
        38, "Replication factor: 4 larger than available brokers: 3.")
    # A manual assignment naming a broker that is not alive.
    r = create_topics(h, controller, [CreatableTopic(
        name="c1", num_partitions=-1, replication_factor=-1,
        assignments=[CreatableReplicaAssignment(partition_index=0, broker_ids=[1, 7])])],
        5000)
    assert r["c1"].error_code == 39
    # validate_only writes nothing.
    r = create_topics(h, controller, [CreatableTopic(name="c1", num_partitions=6,
                                                     replication_factor=3)], 5000, True)
    assert r["c1"].error_code == 0 and h.zk.exists("/brokers/topics/c1") is None


def test_create_topics_writes_kafkas_znodes(cluster: Harness) -> None:
    h = cluster
    controller = h.controller()
    r = create_topics(h, controller, [CreatableTopic(
        name="c2", num_partitions=6, replication_factor=2,
        configs=[CreatableTopicConfig(name="retention.ms", value="12345")])], 15000)
    assert r["c2"].error_code == 0                        # the controller elected leaders
    config = json.loads(h.zk.get("/config/topics/c2")[0])
    assert config == {"version": 1, "config": {"retention.ms": "12345"}}
    znode = h.assignment("c2")
    assert znode["version"] == 3
    assert znode["adding_replicas"] == {} and znode["removing_replicas"] == {}
    parts = {int(p): r for p, r in znode["partitions"].items()}
    assert sorted(parts) == list(range(6))
    assert all(len(set(r)) == 2 and set(r) <= set(IDS) for r in parts.values())
    leaders = [parts[p][0] for p in range(6)]
    assert sorted(leaders) == [1, 1, 2, 2, 3, 3]          # spread over the brokers
    topic_id = topic_id_decode(znode["topic_id"])
    assert r["c2"].topic_id == topic_id
    for b in IDS:
        m = metadata(h, b, ["c2"])
        assert sorted((p.partition_index, p.leader_id) for p in m.topics[0].partitions) == \
            sorted((p, parts[p][0]) for p in range(6))
    r = create_topics(h, controller, [CreatableTopic(name="c2", num_partitions=1,
                                                     replication_factor=1)], 300)
    assert r["c2"].error_code == 36                       # TOPIC_ALREADY_EXISTS


def test_create_topics_times_out_before_the_leaders(cluster: Harness) -> None:
    # Kafka's DelayedCreatePartitions: the topic is written at once, the answer waits for
    # its leaders at most timeout_ms (1 ms: far less than the controller's round trip).
    h = cluster
    r = create_topics(h, h.controller(), [CreatableTopic(name="c2t", num_partitions=2,
                                                         replication_factor=3)], 1)
    assert r["c2t"].error_code == 7                       # REQUEST_TIMED_OUT
    wait_for(lambda: all(metadata(h, b, ["c2t"]).topics[0].error_code == 0 for b in IDS),
             "the controller to elect c2t's leaders anyway")


def test_create_topics_completes_when_leaders_are_published(cluster: Harness) -> None:
    h = cluster
    controller = h.controller()
    result: dict[str, Any] = {}

    async def main() -> None:
        async def create() -> None:
            conn = BrokerConnection("127.0.0.1", h.brokers[controller].port,
                                    timeout_s=TIMEOUT)
            try:
                result["r"] = await conn.request(ApiKey.CREATE_TOPICS, 7, CreateTopicsRequest(
                    topics=[CreatableTopic(name="c3", num_partitions=3,
                                           replication_factor=3)], timeout_ms=15000))
            finally:
                await conn.close()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(create)
            with trio.fail_after(TIMEOUT):
                while h.zk.exists("/brokers/topics/c3") is None:
                    await trio.sleep(0.02)
            await trio.to_thread.run_sync(h.publish_assignment, "c3")
    started = time.monotonic()
    trio.run(main)
    assert time.monotonic() - started < 10
    (topic,) = result["r"].topics
    assert (topic.error_code, topic.num_partitions, topic.replication_factor) == (0, 3, 3)
    assert topic.topic_id == h.topic_ids["c3"]
    for b in IDS:
        m = metadata(h, b, ["c3"])
        assert len(m.topics[0].partitions) == 3


def test_delete_topics_and_create_partitions(cluster: Harness) -> None:
    h = cluster
    controller = h.controller()
    other = next(i for i in IDS if i != controller)
    r = h.request(controller, ApiKey.CREATE_TOPICS, 7, CreateTopicsRequest(
        topics=[CreatableTopic(name="d1", num_partitions=2, replication_factor=2)],
        timeout_ms=15000))
    assert r.topics[0].error_code == 0
    # CreatePartitions: NOT_CONTROLLER elsewhere; on the controller the assignment grows and
    # the answer waits for the new partitions' leaders.
    cp = CreatePartitionsRequest(topics=[CreatePartitionsTopic(name="d1", count=4,
                                                                assignments=None)],
                                 timeout_ms=15000)
    assert h.request(other, ApiKey.CREATE_PARTITIONS, 3, cp).results[0].error_code == 41
    assert h.request(controller, ApiKey.CREATE_PARTITIONS, 3, cp).results[0].error_code == 0
    parts = h.assignment("d1")["partitions"]
    assert sorted(parts) == ["0", "1", "2", "3"] and all(len(r) == 2 for r in parts.values())
    wait_for(lambda: len(metadata(h, other, ["d1"]).topics[0].partitions) == 4,
             "every broker to see four partitions")
    # DeleteTopics: NOT_CONTROLLER elsewhere; on the controller it completes once the
    # controller has removed the topic from every broker's cache.
    dt = DeleteTopicsRequest(topic_names=["d1"], timeout_ms=15000)
    assert h.request(other, ApiKey.DELETE_TOPICS, 5, dt).responses[0].error_code == 41
    assert h.request(controller, ApiKey.DELETE_TOPICS, 5, dt).responses[0].error_code == 0
    assert metadata(h, controller, ["d1"]).topics[0].error_code == 3
    wait_for(lambda: h.zk.exists("/brokers/topics/d1") is None
             and h.zk.exists("/admin/delete_topics/d1") is None,
             "the controller to remove d1's znodes")


def test_config_changes_reach_every_broker(cluster: Harness) -> None:
    h = cluster
    h.update_metadata({"cfg": {0: (1, [1, 2], [1, 2])}})
    h.zk.create("/config/topics/cfg", b'{"version":1,"config":{}}', makepath=True)
    before = set(h.zk.get_children("/config/changes"))
    r = h.request(2, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, IncrementalAlterConfigsRequest(
        resources=[IncrementalAlterConfigsRequestAlterConfigsResource(
            resource_type=2, resource_name="cfg", configs=[
                IncrementalAlterConfigsRequestAlterableConfig(
                    name="retention.ms", config_operation=0, value="7777")])],
        validate_only=False))
    assert r.responses[0].error_code == 0, r
    assert json.loads(h.zk.get("/config/topics/cfg")[0]) == {
        "version": 1, "config": {"retention.ms": "7777"}}
    (change,) = set(h.zk.get_children("/config/changes")) - before
    assert change.startswith("config_change_")
    assert json.loads(h.zk.get(f"/config/changes/{change}")[0]) == {
        "version": 2, "entity_path": "topics/cfg"}
    for b in IDS:
        store = h.brokers[b].server.metadata_store
        wait_for(lambda s=store: s.topics["cfg"].configs.get("retention.ms") == "7777",
                 f"broker {b} to see the change")
        d = h.request(b, ApiKey.DESCRIBE_CONFIGS, 4, DescribeConfigsRequest(resources=[
            DescribeConfigsResource(resource_type=2, resource_name="cfg",
                                    configuration_keys=["retention.ms"])]))
        assert [(c.name, c.value) for c in d.results[0].configs] == [("retention.ms", "7777")]
    # A cluster-wide dynamic broker default (AlterConfigs on resource "") reaches every broker.
    r = h.request(3, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, IncrementalAlterConfigsRequest(
        resources=[IncrementalAlterConfigsRequestAlterConfigsResource(
            resource_type=4, resource_name="", configs=[
                IncrementalAlterConfigsRequestAlterableConfig(
                    name="log.retention.ms", config_operation=0, value="999999")])],
        validate_only=False))
    assert r.responses[0].error_code == 0, r
    assert json.loads(h.zk.get("/config/brokers/<default>")[0]) == {
        "version": 1, "config": {"log.retention.ms": "999999"}}
    for b in IDS:
        server = h.brokers[b].server
        wait_for(lambda s=server: s.config.props.get("log.retention.ms") == "999999",
                 f"broker {b} to apply the default")


def test_kafka_only_settings_in_zookeeper(cluster: Harness) -> None:
    """A per-broker Kafka setting kafkapy does not act on goes to /config/brokers/<id>, a
    password setting encrypted; a password another broker wrote (with the cluster's
    password.encoder.secret), announced by a change notification, is decoded on apply."""
    h = cluster
    relogin = "sasl.kerberos.min.time.before.relogin"
    # Kafka's dynamic password settings are the SSL stores', which kafkapy acts on since TLS:
    # one as an override on a PLAINTEXT listener is stored and described, used by nothing.
    password = "listener.name.plaintext.ssl.key.password"
    r = h.request(2, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, IncrementalAlterConfigsRequest(
        resources=[IncrementalAlterConfigsRequestAlterConfigsResource(
            resource_type=4, resource_name="2", configs=[
                IncrementalAlterConfigsRequestAlterableConfig(
                    name=relogin, config_operation=0, value="90000"),
                IncrementalAlterConfigsRequestAlterableConfig(
                    name=password, config_operation=0, value="first")])],
        validate_only=False))
    assert (r.responses[0].error_code, r.responses[0].error_message) == (0, None)
    stored = json.loads(h.zk.get("/config/brokers/2")[0])["config"]
    assert stored[relogin] == "90000" and "first" not in stored[password]
    server = h.brokers[2].server
    assert decode_password(server.config, stored[password]) == "first"
    # As another broker (or Kafka's AdminZkClient) would write it.
    stored[password] = encode_password(server.config, "second")
    h.zk.set("/config/brokers/2", json.dumps({"version": 1, "config": stored}).encode())
    h.zk.create("/config/changes/config_change_",
                b'{"version":2,"entity_path":"brokers/2"}', sequence=True)
    wait_for(lambda: server.config.props.get(password) == "second",
             "broker 2 to decode the changed password")
    assert server.config.props[relogin] == "90000"


def test_old_config_change_notifications_are_purged(cluster: Harness) -> None:
    h = cluster
    h.zk.create("/config/changes/config_change_", b'{"version":2,"entity_path":"topics/x"}',
                sequence=True, makepath=True)
    children = set(h.zk.get_children("/config/changes"))
    assert children
    now_ms = int(time.time() * 1000)
    # Nothing is 15 minutes old yet; 16 minutes from now everything is.
    assert purge_obsolete_notifications(h.zk, now_ms) == []
    purged = purge_obsolete_notifications(h.zk, now_ms + 16 * 60 * 1000)
    assert set(purged) == children
    assert h.zk.get_children("/config/changes") == []


def test_find_coordinator_and_auto_creation(cluster: Harness) -> None:
    h = cluster
    fc = FindCoordinatorRequest(key="g1", key_type=0)
    r = h.request(1, ApiKey.FIND_COORDINATOR, 3, fc)
    assert r.error_code == 15                             # created, no leader yet
    znode = h.assignment("__consumer_offsets")
    assert len(znode["partitions"]) == 4 and all(len(r) == 3
                                                 for r in znode["partitions"].values())
    config = json.loads(h.zk.get("/config/topics/__consumer_offsets")[0])["config"]
    assert config["cleanup.policy"] == "compact"
    h.publish_assignment("__consumer_offsets")
    answers = [h.request(b, ApiKey.FIND_COORDINATOR, 3, fc) for b in IDS]
    assert answers[0] == answers[1] == answers[2]
    assert answers[0].error_code == 0 and answers[0].port == h.brokers[answers[0].node_id].port
    # transaction.state.log.replication.factor=4 > 3 live brokers: nothing is created.
    txn = h.request(2, ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="tx",
                                                                          key_type=1))
    assert txn.error_code == 15
    assert "Number of alive brokers '3' does not meet the required replication factor " \
           "'4'" in txn.error_message
    assert h.zk.exists("/brokers/topics/__transaction_state") is None
    # Metadata auto-creation writes ZooKeeper and answers LEADER_NOT_AVAILABLE.
    m = metadata(h, 3, ["auto1"], auto=True)
    assert m.topics[0].error_code == 5
    parts = h.assignment("auto1")["partitions"]
    assert len(parts) == 3 and all(len(r) == 2 for r in parts.values())


def test_single_broker_cache_has_the_same_interface(tmp_path: Path) -> None:
    with kafkapy.Broker(data_dir=tmp_path / "b", node_id=5) as b:
        b.call(lambda: b.server.admin.create_topic("single", 2))
        cache = b.server.metadata_cache
        assert cache.controller_id == 5 and cache.alive_broker_ids() == {5}
        endpoint = cache.broker_endpoint(5, "PLAINTEXT")
        assert endpoint is not None and endpoint.port == b.port
        assert cache.broker_endpoint(6, "PLAINTEXT") is None
        info = cache.partition_info(TopicPartition("single", 1))
        assert info is not None
        assert (info.leader, info.replicas, info.isr, info.offline_replicas) == \
            (5, (5,), (5,), ())
        assert cache.partition_info(TopicPartition("single", 2)) is None


def test_a_real_admin_client_creates_on_the_controller(cluster: Harness) -> None:
    h = cluster
    other = next(i for i in IDS if i != h.controller())
    # Bootstrapped on a broker that is not the controller: librdkafka sends CreateTopics to
    # Metadata's ControllerId, which answers once the leaders are elected.
    admin = AdminClient({"bootstrap.servers": h.brokers[other].bootstrap_servers})
    futures = admin.create_topics([NewTopic("viaclient", 4, 2)], operation_timeout=15,
                                  request_timeout=TIMEOUT)
    futures["viaclient"].result(TIMEOUT)
    parts = h.assignment("viaclient")["partitions"]
    assert len(parts) == 4 and all(len(r) == 2 for r in parts.values())
    md = admin.list_topics(timeout=TIMEOUT)
    assert sorted(md.topics["viaclient"].partitions) == [0, 1, 2, 3]
    del admin
