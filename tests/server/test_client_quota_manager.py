"""ClientQuotaManager: Kafka's sampled rate, quota resolution and quota metrics (pure
logic); a real producer held to its producer_byte_rate by a real broker, seeing
throttle_time_ms; a request-time throttle filling a Fetch answer's throttle_time_ms
(kafka-python's protocol classes); a long-polling consumer whose waits are not request
time."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, Producer
from kafka import KafkaAdminClient
from kafka.errors import NodeNotReadyError
from kafka.protocol.admin.client_quotas import DescribeClientQuotasRequest
from kafka.protocol.consumer.fetch import FetchRequest
from kafka.protocol.metadata import MetadataRequest
from kafka.protocol.producer.produce import ProduceRequest
from kafka.record.memory_records import MemoryRecordsBuilder

from kafkapy.server.client_quota_manager import ClientQuotaManager, QuotaMetric, SampledRate
from kafkapy.server.client_quota_store import ClientQuotaStore
from kafkapy.tools.client_quotas_admin import alter_client_quotas

RATE = 200_000
RUN_S = 10.0


def test_sampled_rate_is_kafkas_rate() -> None:
    rate = SampledRate(11, 1000, now_ms=0)
    rate.record(1000, 0)
    # fewer than samples-1 whole windows elapsed: 10 windows are added to the elapsed time
    assert rate.window_size_ms(500) == 10_500
    assert rate.rate(0) == 1000 / 10.0
    for t in range(1, 30):
        rate.record(1000, t * 1000)
    # 11 samples of one second each, the oldest began 10 s ago (plus the current one)
    assert rate.window_size_ms(29_500) == 29_500 - 19_000
    assert abs(rate.rate(29_500) - 11_000 / 10.5) < 1e-6
    # a long silence purges every sample
    assert rate.rate(100_000) == 0.0


class _Store(ClientQuotaStore):
    def __init__(self, configs: dict[str, dict[str, str]]) -> None:
        super().__init__()
        for path, config in configs.items():
            self._set_local(path, config)

    def alter(self, entity_path: str, update: Any) -> dict[str, str]:
        raise NotImplementedError


def _manager(configs: dict[str, dict[str, str]], now: list[int]) -> ClientQuotaManager:
    store = _Store(configs)
    return ClientQuotaManager(lambda: store, "producer_byte_rate", lambda: 11, lambda: 1,
                              lambda: now[0])


def test_quota_resolution_order_and_sharing() -> None:
    now = [0]
    m = _manager({"users/alice/clients/c1": {"producer_byte_rate": "1"},
                  "users/alice": {"producer_byte_rate": "2"},
                  "users/<default>/clients/c1": {"producer_byte_rate": "3"},
                  "users/<default>": {"consumer_byte_rate": "4"},
                  "clients/<default>": {"producer_byte_rate": "5"}}, now)
    assert m.quota("alice", "c1") == (("alice", "c1"), 1.0)
    assert m.quota("alice", "c2") == (("alice", ""), 2.0)
    assert m.quota("bob", "c1") == (("bob", "c1"), 3.0)
    assert m.quota("bob", "c9") == (("", "c9"), 5.0)
    assert _manager({}, now).quota("bob", "c9") is None


def test_throttle_time_is_kafkas() -> None:
    now = [0]
    m = _manager({"clients/c": {"producer_byte_rate": "1000"}}, now)
    assert m.record_and_get_throttle_time_ms("User:ANONYMOUS", "c", 10_000) == 0
    # 15 000 bytes over the 10 s minimum window: 1500/s, 50 % over: 5 s of throttle
    assert m.record_and_get_throttle_time_ms("User:ANONYMOUS", "c", 5_000) == 5_000
    assert m.record_and_get_throttle_time_ms("User:ANONYMOUS", "other", 10**9) == 0


def test_a_quota_set_after_traffic_applies_at_once() -> None:
    """With no entity setting the type nothing is recorded (Kafka's quotasEnabled); the first
    quota set applies to the next request."""
    now = [0]
    store = _Store({"clients/c": {"consumer_byte_rate": "1"}})
    m = ClientQuotaManager(lambda: store, "producer_byte_rate", lambda: 11, lambda: 1,
                           lambda: now[0])
    assert m.record_and_get_throttle_time_ms("User:ANONYMOUS", "c", 10**9) == 0
    assert m.metric_values() == []
    store._set_local("clients/c", {"producer_byte_rate": "1000"})
    assert m.record_and_get_throttle_time_ms("User:ANONYMOUS", "c", 10_000) == 0
    assert m.record_and_get_throttle_time_ms("User:ANONYMOUS", "c", 5_000) == 5_000
    store._set_local("clients/c", {})
    assert m.record_and_get_throttle_time_ms("User:ANONYMOUS", "c", 10**9) == 0


def test_quota_metrics_are_kafkas_sensors() -> None:
    now = [0]
    m = _manager({"clients/c": {"producer_byte_rate": "1000"},
                  "users/al%40ice": {"producer_byte_rate": "1000"}}, now)
    assert m.metric_values() == []              # nothing metered yet
    m.record_and_get_throttle_time_ms("User:ANONYMOUS", "c", 5_000)
    m.record_and_get_throttle_time_ms("User:al@ice", "any", 2_000)
    # metered per client id (user tag empty) and per user (client tag empty, user sanitized)
    values = {(v.name, v.user, v.client_id): v.value for v in m.metric_values()}
    assert values[("byte-rate", "", "c")] == 500.0          # 5000 bytes over 10 s
    assert values[("byte-rate", "al%40ice", "")] == 200.0
    # throttle-time is Kafka's Avg: NaN until a throttle is recorded
    assert math.isnan(values[("throttle-time", "", "c")])
    m.record_throttle(("", "c"), 300)
    now[0] = 1500
    m.record_throttle(("", "c"), 100)
    [throttle] = [v for v in m.metric_values()
                  if v.name == "throttle-time" and v.client_id == "c"]
    assert throttle == QuotaMetric("Produce", "throttle-time", "", "c", 200.0)
    # a quota window (11 s) later the throttles are forgotten
    now[0] = 13_000
    [throttle] = [v for v in m.metric_values()
                  if v.name == "throttle-time" and v.client_id == "c"]
    assert math.isnan(throttle.value)
    request = ClientQuotaManager(lambda: _Store({}), "request_percentage", lambda: 11,
                                 lambda: 1, lambda: 0)
    assert (request.quota_type, request.rate_metric) == ("Request", "request-time")



def set_client_quota(broker: Any, client_id: str, key: str, value: float) -> None:
    """One quota of a client id, set through AlterClientQuotas (kafka-python)."""
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        [result] = alter_client_quotas(admin, [([("client-id", client_id)], [(key, value)])])
        assert result.error_code == 0
    finally:
        admin.close()


def throttle_collector(throttles: list[float]) -> Callable[[str], None]:
    """A librdkafka ``stats_cb`` appending each broker's largest throttle_time_ms seen."""
    def on_stats(text: str) -> None:
        for stats in json.loads(text)["brokers"].values():
            throttles.append(stats.get("throttle", {}).get("max", 0))
    return on_stats


def test_producer_is_held_to_its_byte_rate(kafka_broker_factory: Any) -> None:
    broker = kafka_broker_factory(num_partitions=1)
    set_client_quota(broker, "quota-producer", "producer_byte_rate", RATE)
    throttles: list[float] = []
    on_stats = throttle_collector(throttles)

    # Small requests, one in flight: the overshoot of the last request stays small.
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers,
                         "client.id": "quota-producer", "linger.ms": 5, "batch.size": 4096,
                         "max.in.flight": 1, "queue.buffering.max.kbytes": 16,
                         "statistics.interval.ms": 500, "stats_cb": on_stats})
    value = b"x" * 1000
    producer.produce("quota", value)
    assert producer.flush(30) == 0
    acked = [0]

    def delivered(err: Any, _msg: Any) -> None:
        if err is None:
            acked[0] += 1

    start = time.monotonic()
    while time.monotonic() - start < RUN_S:
        try:
            producer.produce("quota", value, on_delivery=delivered)
        except BufferError:
            producer.poll(0.01)
        producer.poll(0)
    elapsed = time.monotonic() - start
    producer.poll(1)
    producer.purge()
    producer.flush(10)
    # Kafka's rate counts at least quota.window.num - 1 windows: over these ~10 s the
    # producer gets quota * 10 s, within 10 %.
    rate = acked[0] * len(value) / max(elapsed, 10.0)
    assert 0.9 * RATE <= rate <= 1.1 * RATE, rate
    assert max(throttles, default=0) > 0, "the client never saw throttle_time_ms"


def test_consumer_is_held_to_its_byte_rate(kafka_broker_factory: Any) -> None:
    from confluent_kafka import Consumer

    broker = kafka_broker_factory(num_partitions=1)
    # 3 MB to read, quota 200 kB/s: at most quota * 10 s (+ one answer) in the first 10 s
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 20})
    value = b"y" * 1000
    for _ in range(3000):
        producer.produce("quota-read", value)
        producer.poll(0)
    assert producer.flush(60) == 0
    set_client_quota(broker, "quota-consumer", "consumer_byte_rate", RATE)
    throttles: list[float] = []
    on_stats = throttle_collector(throttles)

    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers,
                         "client.id": "quota-consumer", "group.id": "quota-group",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "fetch.max.bytes": 65536, "message.max.bytes": 65536,
                         "max.partition.fetch.bytes": 65536,
                         "statistics.interval.ms": 500, "stats_cb": on_stats})
    consumer.subscribe(["quota-read"])
    read = 0
    start = None
    try:
        while start is None or time.monotonic() - start < RUN_S:
            batch = consumer.consume(500, 0.2)
            if batch and start is None:
                start = time.monotonic()
            read += sum(len(m.value() or b"") for m in batch if m.error() is None)
            assert start is not None or len(throttles) < 200, "nothing to read"
        elapsed = time.monotonic() - start
    finally:
        consumer.close()
    rate = read / max(elapsed, 10.0)
    assert 0.9 * RATE <= rate <= 1.1 * RATE, rate
    assert max(throttles, default=0) > 0, "the client never saw throttle_time_ms"


def test_request_percentage_throttles_a_busy_client(kafka_broker_factory: Any) -> None:
    broker = kafka_broker_factory()
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    busy = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers, client_id="busy")
    try:
        # 0.001 % of a second: 10 us of handler time per second
        [result] = alter_client_quotas(admin, [([("client-id", "busy")],
                                                [("request_percentage", 0.001)])])
        assert result.error_code == 0

        async def describe() -> Any:
            return await busy._manager.send(DescribeClientQuotasRequest(components=[],
                                                                       strict=False))
        seen: list[int] = []
        while len(seen) < 5 and not any(seen):      # kafka-python pauses once throttled
            seen.append(busy._manager.run(describe).throttle_time_ms)
        # bounded by one quota window (1 s), as Kafka bounds a request-time throttle
        assert 0 < max(seen) <= 1000, seen
        # another client is not throttled
        calm = admin._manager.run(
            lambda: admin._manager.send(DescribeClientQuotasRequest(components=[],
                                                                    strict=False)))
        assert calm.throttle_time_ms == 0
    finally:
        admin.close()
        busy.close()


def _fetch(topic: str, offset: int, max_wait_ms: int) -> Any:
    partition = FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=offset,
                                                       partition_max_bytes=1 << 20)
    return FetchRequest(version=11, replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1,
                        max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1,
                        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[partition])],
                        forgotten_topics_data=[], rack_id="")


def _send(client: Any, node_id: int, request: Any) -> Any:
    """``request`` over kafka-python's connection to ``node_id``; kafka-python pauses a
    throttled connection (KIP-219), so this waits for it, bounded."""
    async def send() -> Any:
        return await client._manager.send(request, node_id=node_id)
    deadline = time.monotonic() + 60
    while True:
        try:
            return client._manager.run(send)
        except NodeNotReadyError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_request_time_throttle_fills_fetch_throttle_time(kafka_broker_factory: Any) -> None:
    broker = kafka_broker_factory(num_partitions=1)
    broker.produce("polled", b"a record")
    node = broker.server.node_id
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    slow = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers, client_id="slow")
    try:
        # 0.00001 % of a second: the rate is taken over at least the quota's 10 s of
        # windows, so any request over 1 us of handler time is over it at once (at 0.001 %
        # a request had to take 100 us, which a fast fetch does not always take)
        [result] = alter_client_quotas(admin, [([("client-id", "slow")],
                                                [("request_percentage", 0.00001)])])
        assert result.error_code == 0
        # Kafka's handleFetchRequest: the larger of the byte-rate and request-time throttles
        # in throttle_time_ms, and an empty answer. An immediate answer, then a long poll
        # (parked at the log end: its request time is recorded when it is parked).
        for offset, wait_ms in ((0, 0), (0, 0), (1, 300), (1, 300)):
            answer = _send(slow, node, _fetch("polled", offset, wait_ms))
            assert 0 < answer.throttle_time_ms <= 1000, answer
            assert answer.responses == []
        # every other API reports it too (sendResponseMaybeThrottle): Metadata
        metadata = _send(slow, node, MetadataRequest(version=9, topics=None,
                                                     allow_auto_topic_creation=False))
        assert 0 < metadata.throttle_time_ms <= 1000
        # and an error answer (sendErrorResponseMaybeThrottle): an empty entity type
        bad = DescribeClientQuotasRequest(components=[
            DescribeClientQuotasRequest.ComponentData(entity_type="", match_type=0,
                                                      match="x")], strict=False)
        refused = _send(slow, node, bad)
        assert refused.error_code == 42                     # INVALID_REQUEST
        assert 0 < refused.throttle_time_ms <= 1000
        # a client without the quota reads the record, unthrottled
        calm = _send(admin, node, _fetch("polled", 0, 0))
        assert calm.throttle_time_ms == 0
        [[partition]] = [t.partitions for t in calm.responses]
        assert partition.error_code == 0 and partition.records
        # the throttle is recorded in the Request quota's throttle-time
        throttle = broker.call(lambda: [
            v for v in broker.server.request_quotas.metric_values()
            if v.name == "throttle-time" and v.client_id == "slow"])
        assert throttle and throttle[0].value > 0
    finally:
        admin.close()
        slow.close()


def _produce(topic: str, acks: int) -> Any:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20, offset=0)
    builder.append(0, None, b"fire and forget", [])
    builder.close()
    data = ProduceRequest.TopicProduceData
    return ProduceRequest(version=7, transactional_id=None, acks=acks, timeout_ms=30_000,
                          topic_data=[data(name=topic, partition_data=[
                              data.PartitionProduceData(index=0,
                                                        records=bytes(builder.buffer()))])])


def test_acks_0_produce_is_exempt_from_the_request_quota(kafka_broker_factory: Any) -> None:
    """Kafka's handleProduceRequest does not enforce the request quota for acks=0 (no answer
    carries a throttle): nothing is recorded for it; an acks=1 Produce is throttled."""
    broker = kafka_broker_factory(num_partitions=1)
    broker.create_topic("fired")
    node = broker.server.node_id
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    fire = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers, client_id="fire")
    try:
        # 10 ns of handler time per second: any request is over
        [result] = alter_client_quotas(admin, [([("client-id", "fire")],
                                                [("request_percentage", 0.000001)])])
        assert result.error_code == 0

        def recorded() -> float:     # the request time recorded for "fire" so far
            rate = broker.server.request_quotas._rates.get(("", "fire"))
            return 0.0 if rate is None else sum(s.value for s in rate._samples)
        before = broker.call(recorded)
        for _ in range(5):
            assert _send(fire, node, _produce("fired", acks=0)) is None
        broker.wait_for_records("fired", 5)
        assert broker.call(recorded) == before
        answer = _send(fire, node, _produce("fired", acks=1))
        assert broker.call(recorded) > before
        assert 0 < answer.throttle_time_ms <= 1000
    finally:
        admin.close()
        fire.close()


def _produce_v2(topic: str) -> Any:
    """A Produce v2 (message format 1): kafkapy's Python Produce path, not the compiled one."""
    builder = MemoryRecordsBuilder(magic=1, compression_type=0, batch_size=1 << 20, offset=0)
    builder.append(0, None, b"an old client's record", [])
    builder.close()
    data = ProduceRequest.TopicProduceData
    return ProduceRequest(version=2, acks=1, timeout_ms=30_000,
                          topic_data=[data(name=topic, partition_data=[
                              data.PartitionProduceData(index=0,
                                                        records=bytes(builder.buffer()))])])


def test_a_produce_over_both_quotas_is_throttled_once(kafka_broker_factory: Any) -> None:
    """Kafka's handleProduceRequest: the larger of the byte-rate and request-time throttles
    goes in throttle_time_ms, and only that quota mutes the connection and records it in its
    throttle-time. Both Produce paths (compiled v3+, Python v2)."""
    broker = kafka_broker_factory(num_partitions=1)
    broker.create_topic("both")
    node = broker.server.node_id
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    clients = {}
    try:
        for name, request in (("new", _produce("both", acks=1)), ("old", _produce_v2("both"))):
            # 1 byte/s: a byte-rate throttle of many seconds, above the request-time one
            # (at most one quota window)
            [result] = alter_client_quotas(admin, [([("client-id", name)],
                                                    [("request_percentage", 0.000001),
                                                     ("producer_byte_rate", 1)])])
            assert result.error_code == 0
            clients[name] = client = KafkaAdminClient(
                bootstrap_servers=broker.bootstrap_servers, client_id=name)
            # its Metadata requests are over the request quota too: counted before
            _send(client, node, MetadataRequest(version=9, topics=None,
                                                allow_auto_topic_creation=False))

            def throttles(name: str = name) -> dict[str, int]:
                """How many throttles each quota type recorded for the client."""
                return {quotas.quota_type: sum(s.count for s in avg._samples)
                        for quotas in (broker.server.request_quotas,
                                       broker.server.produce_quotas)
                        for tags, avg in quotas._throttles.items() if tags[1] == name}
            before = broker.call(throttles)
            assert before.get("Request", 0) >= 1 and "Produce" not in before, before
            answer = _send(client, node, request)
            assert answer.throttle_time_ms > 1000, answer
            after = broker.call(throttles)
            assert after == {**before, "Produce": 1}, (before, after)
            values = broker.call(lambda name=name: {
                v.quota_type: v.value for v in broker.server.produce_quotas.metric_values()
                if v.name == "throttle-time" and v.client_id == name})
            assert values["Produce"] == answer.throttle_time_ms
    finally:
        admin.close()
        for client in clients.values():
            client.close()


def test_long_poll_wait_is_not_request_time(kafka_broker_factory: Any) -> None:
    """request_percentage counts the time a request held a handler (Kafka's
    requestThreadTimeNanos), not a long poll's wait: a consumer that long-polls an idle
    topic (fetch.wait.max.ms 500: parked most of the time) stays far under 10 %. (One
    __consumer_offsets partition: creating it is the group's first FindCoordinator's handler
    time, a burst on a loaded machine.)"""
    broker = kafka_broker_factory(num_partitions=1, offsets_topic_num_partitions=1,
                                  kafkapy_metrics_enabled=True)
    broker.create_topic("idle")
    set_client_quota(broker, "poller", "request_percentage", 10)
    throttles: list[float] = []
    on_stats = throttle_collector(throttles)

    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers,
                         "client.id": "poller", "group.id": "pollers",
                         "auto.offset.reset": "earliest", "fetch.wait.max.ms": 500,
                         "statistics.interval.ms": 500, "stats_cb": on_stats})
    consumer.subscribe(["idle"])
    try:
        start = time.monotonic()
        while time.monotonic() - start < 12:        # more than one quota window (11 s)
            assert consumer.poll(0.5) is None
    finally:
        consumer.close()
    metrics = broker.broker.metrics()
    # the fetches did wait: half of them at least the whole fetch.wait.max.ms (counted as
    # request time, that alone would be some 50 % of every second, five times the quota)
    waited = metrics['kafka_network_requestmetrics_remotetimems{request="FetchConsumer",'
                     'quantile="0.50"}']
    assert waited >= 450, waited
    # the client is metered (it has a quota), far under it, and never throttled
    request_time = metrics['kafka_server_quota_request_time{clientId="poller",'
                           'resource="Request"}']
    throttle = metrics['kafka_server_quota_throttle_time{clientId="poller",'
                       'resource="Request"}']
    assert 0 < request_time < 10, (request_time, throttle)
    assert not throttle > 0, throttle
    assert throttles and max(throttles) == 0, throttles


def test_idle_rates_are_forgotten() -> None:
    now = [0]
    m = _manager({"clients/<default>": {"producer_byte_rate": "1000000"}}, now)
    for i in range(1024):
        m.record_and_get_throttle_time_ms("User:ANONYMOUS", f"c{i}", 1)
    assert len(m._rates) == 1024
    now[0] = 3600 * 1000 + 1
    m.record_and_get_throttle_time_ms("User:ANONYMOUS", "new", 1)
    assert list(m._rates) == [("", "new")]
