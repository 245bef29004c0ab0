"""Client quota metrics (Kafka's quota sensors, ``kafka.server:type=<Produce|Fetch|Request|
ControllerMutation>,user=..,client-id=..``) as the JMX exporter's quota rules name them:
the labels of each entity shape (pure), then a real broker's endpoint scraped over HTTP after
real confluent-kafka traffic under quotas: the throttled clients' ``throttle-time`` is above
0, a client without a quota has no quota metric."""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient

import kafkapy
from kafkapy.server.client_quota_manager import QuotaMetric
from kafkapy.server.metrics import BrokerMetrics
from kafkapy.tools.client_quotas_admin import alter_client_quotas
from tests.server.metrics.support import scrape


class _Quotas:
    def __init__(self, values: list[QuotaMetric]) -> None:
        self.values = values

    def metric_values(self) -> list[QuotaMetric]:
        return self.values


def test_labels_follow_the_exporter_quota_rules() -> None:
    server = SimpleNamespace(produce_quotas=_Quotas([
        QuotaMetric("Produce", "byte-rate", "alice", "c1", 10.0),     # (user, client-id)
        QuotaMetric("Produce", "byte-rate", "bob", "", 20.0),         # user only
        QuotaMetric("Produce", "throttle-time", "", "c2", 30.0),      # client-id only
        QuotaMetric("Produce", "byte-rate", "", "", 40.0),            # no tag: no MBean key
    ]), request_quotas=_Quotas([QuotaMetric("Request", "request-time", "", "c2", 0.5)]))
    samples = BrokerMetrics(server, {}).samples()
    quota = {k: v for k, v in samples.items() if k.startswith("kafka_server_quota_")}
    assert quota == {
        'kafka_server_quota_byte_rate{clientId="c1",resource="Produce",user="alice"}': 10.0,
        'kafka_server_quota_byte_rate{resource="Produce",user="bob"}': 20.0,
        'kafka_server_quota_throttle_time{clientId="c2",resource="Produce"}': 30.0,
        'kafka_server_quota_request_time{clientId="c2",resource="Request"}': 0.5,
    }


def _quota(samples: dict[str, float], metric: str, resource: str, client_id: str,
           user: str | None = None) -> float | None:
    labels = f'clientId="{client_id}",resource="{resource}"'
    if user is not None:
        labels += f',user="{user}"'
    return samples.get(f"kafka_server_quota_{metric}{{{labels}}}")


def test_quota_metrics_of_throttled_clients_over_http() -> None:
    with kafkapy.Broker(kafkapy_metrics_port=0, kafkapy_metrics_host="127.0.0.1") as broker:
        servers = broker.bootstrap_servers
        admin = KafkaAdminClient(bootstrap_servers=servers)
        try:
            results = alter_client_quotas(admin, [
                ([("client-id", "throttled")], [("producer_byte_rate", 20_000)]),
                ([("user", "ANONYMOUS"), ("client-id", "pair")],
                 [("producer_byte_rate", 1_000_000)]),
                ([("client-id", "reader")], [("consumer_byte_rate", 20_000)]),
                ([("client-id", "creator")], [("controller_mutation_rate", 2)]),
            ])
            assert [r.error_code for r in results] == [0, 0, 0, 0]
        finally:
            admin.close()
        value = b"q" * 1000
        # "throttled": 400 kB at 20 kB/s (Kafka's rate spans at least 10 s: 40 kB/s);
        # "free" writes what "reader" reads, in small batches (an answer holds at least one
        # whole batch: one larger than the quota window would throttle every fetch)
        for client_id, topic, count in (("throttled", "written", 400), ("pair", "written", 20),
                                        ("free", "read", 300)):
            producer = Producer({"bootstrap.servers": servers, "client.id": client_id,
                                 "linger.ms": 5, "batch.size": 4096, "acks": 1})
            for _ in range(count):
                producer.produce(topic, value)
                producer.poll(0)
            assert producer.flush(60) == 0
        # scraped after each client's traffic: the rates span one quota window (11 s)
        metrics_server = broker.server._metrics_server
        assert metrics_server is not None
        produced = scrape(metrics_server.port)
        # 300 kB at 20 kB/s: the first answers fill the quota window, the next are throttled
        consumer = Consumer({"bootstrap.servers": servers, "client.id": "reader",
                             "group.id": "quota-metrics", "auto.offset.reset": "earliest",
                             "enable.auto.commit": False})
        consumer.subscribe(["read"])
        read = 0
        try:
            deadline = time.monotonic() + 60
            while read < 250 and time.monotonic() < deadline:
                read += sum(1 for m in consumer.consume(100, 0.5) if m.error() is None)
        finally:
            consumer.close()
        assert read >= 250
        fetched = scrape(metrics_server.port)
        # 30 partitions with a bucket of 2/s * 11 s = 22 tokens: 8 below zero, throttled
        creator = AdminClient({"bootstrap.servers": servers, "client.id": "creator"})
        [future] = creator.create_topics([NewTopic("created", 30, 1)]).values()
        future.result(timeout=60)
        created = scrape(metrics_server.port)

    samples = produced
    produce_rate = _quota(samples, "byte_rate", "Produce", "throttled")
    assert produce_rate is not None and produce_rate > 0
    throttled = _quota(samples, "throttle_time", "Produce", "throttled")
    assert throttled is not None and throttled > 0
    # RequestMetrics ThrottleTimeMs: the throttle the Produce answers carried
    assert samples['kafka_network_requestmetrics_throttletimems{quantile="0.999",'
                   'request="Produce"}'] > 0
    # a (user, client-id) quota: metered, and so labelled, by both; not throttled (NaN:
    # Kafka's Avg of no throttle)
    pair_rate = _quota(samples, "byte_rate", "Produce", "pair", user="ANONYMOUS")
    assert pair_rate is not None and pair_rate > 0
    pair_throttle = _quota(samples, "throttle_time", "Produce", "pair", user="ANONYMOUS")
    assert pair_throttle is not None and math.isnan(pair_throttle)
    # the consumer under consumer_byte_rate
    samples = fetched
    fetch_rate = _quota(samples, "byte_rate", "Fetch", "reader")
    assert fetch_rate is not None and fetch_rate > 0
    fetch_throttle = _quota(samples, "throttle_time", "Fetch", "reader")
    assert fetch_throttle is not None and fetch_throttle > 0
    # the controller mutation quota: 30 partitions recorded, the bucket below zero
    samples = created
    mutations = _quota(samples, "mutation_rate", "ControllerMutation", "creator")
    assert mutations is not None and mutations > 0
    tokens = _quota(samples, "tokens", "ControllerMutation", "creator")
    assert tokens is not None and tokens < 22
    creator_throttle = _quota(samples, "throttle_time", "ControllerMutation", "creator")
    assert creator_throttle is not None and creator_throttle > 0
    # a client without any quota is not metered
    assert not [k for k in {**produced, **fetched, **created}
                if k.startswith("kafka_server_quota_") and '"free"' in k]
