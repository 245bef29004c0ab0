"""KIP-392, consumers fetch from the closest replica, on a real 3-broker cluster.

One cluster for the module (``kafkapy.Cluster``): brokers 1, 2, 3 in racks r1, r2, r3 with
Kafka's ``RackAwareReplicaSelector``; an RF-3 partition led by broker 1. A confluent-kafka
consumer with ``client.rack=r2`` reads every record in order and librdkafka's own statistics
(``statistics.interval.ms``: per partition, ``leader`` and ``broker``, the broker it is
fetched from) show it fetching from broker 2; without ``client.rack`` it stays on the leader.
Raw requests (kafkapy's ``BrokerConnection``) pin down the protocol: the leader's
``PreferredReadReplica`` answer without records, a follower that serves Fetch v11+ only up to
its own high watermark (and wakes a parked fetch when that moves), Fetch v10 and ListOffsets
that stay leader-only. A second, two-broker cluster without ``replica.selector.class`` keeps
every consumer on the leader; a single broker with the selector serves every consumer itself.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest
import trio

import kafkapy
from kafkapy.clients.network_client import BrokerConnection
from kafkapy.cluster import Cluster
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    FetchPartition,
    FetchRequest,
    FetchTopic,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
    PartitionData,
)
from kafkapy.protocol.records import scan_batches
from kafkapy.server.replica_selector import RACK_AWARE_SELECTOR
from tests.clients.client_support import Msg, consume_confluent, produce_confluent

pytestmark = pytest.mark.timeout(180)

NOT_LEADER_OR_FOLLOWER = 6
TIMEOUT = 30.0
TOPIC = "near"
SETTINGS = {
    "replica.selector.class": RACK_AWARE_SELECTOR,
    "auto.leader.rebalance.enable": "false",       # broker 1 stays the leader
    "offsets.topic.num.partitions": 1,             # librdkafka looks up its group coordinator
    "offsets.topic.replication.factor": 1,
}
RACKS = {1: {"broker.rack": "r1"}, 2: {"broker.rack": "r2"}, 3: {"broker.rack": "r3"}}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with kafkapy.Cluster(3, SETTINGS, broker_settings=RACKS, timeout=60) as c:
        c.create_topic(TOPIC, {0: [1, 2, 3]})
        assert c.wait_for_leader(TOPIC, 0, timeout=TIMEOUT) == 1
        c.wait_for_isr(TOPIC, 0, 3, timeout=TIMEOUT)
        yield c


def produce(cluster: Cluster, n: int, tag: str, topic: str = TOPIC) -> list[int]:
    msgs = [Msg(None, f"{tag}-{i}".encode()) for i in range(n)]
    offsets = produce_confluent(cluster.bootstrap_servers, topic, msgs)
    assert all(isinstance(o, int) for o in offsets), offsets
    return [o for o in offsets if isinstance(o, int)]


def consume(cluster: Cluster, count: int, rack: str | None, topic: str = TOPIC
            ) -> tuple[list[tuple[int, bytes]], dict[str, Any]]:
    """Read ``count`` records of partition 0 from the start with confluent-kafka, then keep
    polling until librdkafka's statistics name the broker it fetches from after reading
    them. Returns (offset, value) pairs and the partition's statistics."""
    stats: list[dict[str, Any]] = []
    config: dict[str, Any] = {
        "bootstrap.servers": cluster.bootstrap_servers, "group.id": f"g-{rack}",
        "enable.auto.commit": False, "enable.auto.offset.store": False,
        "fetch.wait.max.ms": 100, "statistics.interval.ms": 200,
        "stats_cb": lambda s: stats.append(json.loads(s))}
    if rack is not None:
        config["client.rack"] = rack
    consumer = confluent_kafka.Consumer(config)
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0,
                                                        confluent_kafka.OFFSET_BEGINNING)])
        got: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < count and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is None:
                continue
            assert m.error() is None, m.error()
            offset, value = m.offset(), m.value()
            assert offset is not None and value is not None
            got.append((offset, value))
        assert len(got) == count, f"{len(got)} of {count} records within {TIMEOUT} s"
        stats.clear()
        while not stats and time.monotonic() < deadline:
            consumer.poll(0.2)
        assert stats, "no librdkafka statistics"
        return got, stats[-1]["topics"][topic]["partitions"]["0"]
    finally:
        consumer.close()


def request(cluster: Cluster, broker_id: int, api_key: int, version: int, body: Any) -> Any:
    async def go() -> Any:
        conn = BrokerConnection(cluster.host, cluster.brokers[broker_id].port,
                                client_id="follower-fetch-test", timeout_s=TIMEOUT)
        try:
            return await conn.request(api_key, version, body)
        finally:
            await conn.close()
    return trio.run(go)


def fetch_body(offset: int, rack: str = "", max_wait_ms: int = 0,
               topic: str = TOPIC) -> FetchRequest:
    return FetchRequest(
        replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20,
        session_epoch=-1, rack_id=rack,
        topics=[FetchTopic(topic=topic, partitions=[FetchPartition(
            partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)])])


def fetch(cluster: Cluster, broker_id: int, version: int, offset: int, rack: str = "",
          max_wait_ms: int = 0) -> PartitionData:
    response = request(cluster, broker_id, ApiKey.FETCH, version,
                       fetch_body(offset, rack, max_wait_ms))
    (partition,) = response.responses[0].partitions
    assert isinstance(partition, PartitionData)
    return partition


def offsets_of(partition: PartitionData) -> list[int]:
    records = partition.records
    if not records:
        return []
    assert isinstance(records, bytes | bytearray | memoryview)     # decoded from the wire
    return [o for b in scan_batches(records).batches
            for o in range(b.base_offset, b.next_offset)]


# --------------------------------------------------------------------- real clients


def test_a_consumer_in_rack_r2_reads_everything_from_broker_2(cluster: Cluster) -> None:
    offsets = produce(cluster, 300, "a")
    got, partition_stats = consume(cluster, offsets[-1] + 1, rack="r2")
    assert [o for o, _ in got] == list(range(offsets[-1] + 1))       # in order, none missing
    assert [v for o, v in got if o >= offsets[0]] == [f"a-{i}".encode() for i in range(300)]
    # librdkafka's view: broker 1 leads the partition, broker 2 serves its fetches.
    assert (partition_stats["leader"], partition_stats["broker"]) == (1, 2)


def test_a_consumer_without_a_rack_or_in_the_leaders_rack_stays_on_the_leader(
        cluster: Cluster) -> None:
    offsets = produce(cluster, 50, "b")
    for rack in (None, "r1"):
        got, partition_stats = consume(cluster, offsets[-1] + 1, rack=rack)
        assert [o for o, _ in got] == list(range(offsets[-1] + 1))
        assert (partition_stats["leader"], partition_stats["broker"]) == (1, 1), rack


# ---------------------------------------------------------------------- raw protocol


def test_the_leader_names_the_preferred_replica_without_records(cluster: Cluster) -> None:
    produce(cluster, 10, "c")
    cluster.wait_for_isr(TOPIC, 0, 3, timeout=TIMEOUT)
    redirected = fetch(cluster, 1, 12, 0, rack="r3")
    assert (redirected.error_code, redirected.preferred_read_replica) == (0, 3)
    assert not redirected.records and redirected.high_watermark > 0
    # Its own rack, no rack, or a fetch version before 11: the leader answers with records.
    for rack, version in (("r1", 11), ("", 12), ("r2", 10)):
        served = fetch(cluster, 1, version, 0, rack=rack)
        assert (served.error_code, served.preferred_read_replica) == (0, -1)
        assert offsets_of(served)[0] == 0


def test_followers_serve_v11_consumers_up_to_their_high_watermark(cluster: Cluster) -> None:
    produce(cluster, 10, "d")
    # Fetch v10 (no client metadata) and ListOffsets stay leader-only.
    old = fetch(cluster, 2, 10, 0)
    assert old.error_code == NOT_LEADER_OR_FOLLOWER and not old.records
    listed = request(cluster, 2, ApiKey.LIST_OFFSETS, 4, ListOffsetsRequest(
        replica_id=-1, topics=[ListOffsetsTopic(name=TOPIC, partitions=[
            ListOffsetsPartition(partition_index=0, timestamp=-1)])]))
    assert listed.topics[0].partitions[0].error_code == NOT_LEADER_OR_FOLLOWER

    # While broker 3 (in the ISR) is stopped the leader's high watermark cannot pass what 3
    # holds; broker 2 replicates the new records (acks=1) but learns that high watermark, so
    # it serves none of them, to any v11+ consumer.
    cluster.wait_until(lambda: fetch(cluster, 2, 12, 0).high_watermark ==
                       fetch(cluster, 1, 12, 0).high_watermark,
                       "broker 2 to learn the leader's high watermark", TIMEOUT)
    hw = fetch(cluster, 2, 11, 0).high_watermark
    cluster.pause(3)
    try:
        msgs = [Msg(None, f"e-{i}".encode()) for i in range(20)]
        new = produce_confluent(cluster.bootstrap_servers, TOPIC, msgs, acks="1")
        assert new == list(range(hw, hw + 20))
        served = fetch(cluster, 2, 12, 0, rack="r2")
        assert served.error_code == 0 and served.high_watermark == hw
        assert offsets_of(served) and max(offsets_of(served)) < hw     # below its HW only
        at_hw = fetch(cluster, 2, 11, hw)
        assert (at_hw.error_code, offsets_of(at_hw)) == (0, [])
        # An offset past the follower's log end: OFFSET_OUT_OF_RANGE (the client then goes
        # back to the leader).
        assert fetch(cluster, 2, 12, hw + 10_000).error_code == 1
        # A parked fetch on the follower (max wait 30 s) completes once 3 is back and the
        # leader's high watermark, learnt by 2, moves.
        result: list[PartitionData] = []

        async def parked() -> None:
            conn = BrokerConnection(cluster.host, cluster.brokers[2].port,
                                    timeout_s=TIMEOUT + 30)
            try:
                response = await conn.request(ApiKey.FETCH, 12, fetch_body(
                    hw, "r2", max_wait_ms=30_000))
                result.append(response.responses[0].partitions[0])
            finally:
                await conn.close()

        async def resume_soon() -> None:
            await trio.sleep(0.5)
            cluster.resume(3)

        started = time.monotonic()

        async def both() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(parked)
                nursery.start_soon(resume_soon)

        trio.run(both)
        took = time.monotonic() - started
    finally:
        cluster.resume(3)
    (woken,) = result
    assert woken.error_code == 0 and offsets_of(woken)[0] == hw
    assert max(offsets_of(woken)) < woken.high_watermark
    # Woken by the high watermark, not by the 30 s max wait.
    assert took < 25, took


# ------------------------------------------------------------- without the selector


def test_without_the_selector_consumers_stay_on_the_leader() -> None:
    with kafkapy.Cluster(2, {"offsets.topic.num.partitions": 1,
                             "offsets.topic.replication.factor": 1,
                             "auto.leader.rebalance.enable": "false"},
                         broker_settings={1: {"broker.rack": "r1"}, 2: {"broker.rack": "r2"}},
                         timeout=60) as plain:
        plain.create_topic(TOPIC, {0: [1, 2]})
        assert plain.wait_for_leader(TOPIC, 0, timeout=TIMEOUT) == 1
        plain.wait_for_isr(TOPIC, 0, 2, timeout=TIMEOUT)
        offsets = produce(plain, 30, "f")
        answer = fetch(plain, 1, 12, 0, rack="r2")
        assert (answer.error_code, answer.preferred_read_replica) == (0, -1)
        assert offsets_of(answer)[0] == 0
        got, partition_stats = consume(plain, offsets[-1] + 1, rack="r2")
        assert [o for o, _ in got] == list(range(offsets[-1] + 1))
        assert (partition_stats["leader"], partition_stats["broker"]) == (1, 1)


def test_a_single_broker_with_the_selector_serves_every_consumer_itself() -> None:
    with kafkapy.Broker({"replica.selector.class": RACK_AWARE_SELECTOR,
                         "broker.rack": "r1"}) as broker:
        msgs = [Msg(None, f"g-{i}".encode()) for i in range(20)]
        assert produce_confluent(broker.bootstrap_servers, "solo", msgs) == list(range(20))

        async def go() -> PartitionData:
            conn = BrokerConnection("127.0.0.1", broker.port, timeout_s=TIMEOUT)
            try:
                response = await conn.request(ApiKey.FETCH, 12,
                                              fetch_body(0, "r2", topic="solo"))
                partition = response.responses[0].partitions[0]
                assert isinstance(partition, PartitionData)
                return partition
            finally:
                await conn.close()

        answer = trio.run(go)
        assert (answer.error_code, answer.preferred_read_replica) == (0, -1)
        assert offsets_of(answer) == list(range(20))
        got = consume_confluent(broker.bootstrap_servers, "solo", 20,
                                config={"client.rack": "r2"})
        assert [g.value for g in got] == [m.value for m in msgs]
