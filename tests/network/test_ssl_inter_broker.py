"""Three brokers (kafkapy.Cluster: real ZooKeeper, real broker processes) whose inter-broker
listener is SSL with mutual TLS: the controller's requests, the replica fetchers and
AlterPartition all go over TLS with each broker's own certificate as its client certificate.
An acks=all produce to a topic with min.insync.replicas=3 completes only if both followers
fetch over TLS; a consumer then reads it over the SSL listener."""

from __future__ import annotations

import ssl
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, Producer

import kafkapy
from kafkapy.config import BrokerConfig
from kafkapy.server.channel_builders import inter_broker_ssl_context
from tests.network.ssl_support import add_ssl_listeners, make_pki

TIMEOUT = 60.0


def test_three_brokers_replicate_over_mutual_tls(tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    settings = {
        "security.inter.broker.protocol": "SSL",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": pki.keystore,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": pki.ca_file,
        "ssl.client.auth": "required",
        "zookeeper.session.timeout.ms": 6000,
    }
    cluster = kafkapy.Cluster(3, settings, data_dir=tmp_path / "cluster", timeout=TIMEOUT)
    ssl_ports = add_ssl_listeners(cluster)
    with cluster:
        topic = f"tls-{uuid.uuid4().hex[:8]}"
        cluster.create_topic(topic, {0: [1, 2, 3]}, config={"min.insync.replicas": "3"})
        leader = cluster.wait_for_leader(topic, 0)
        values = [b"replicated-%d" % i for i in range(50)]
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                             "message.timeout.ms": int(TIMEOUT * 1000)})
        errors: list[object] = []
        for value in values:
            producer.produce(topic, value,
                             on_delivery=lambda err, _msg: errors.append(err) if err else None)
        assert producer.flush(TIMEOUT) == 0
        assert errors == []
        assert set(cluster.isr_of(topic, 0)) == {1, 2, 3}
        alice_cert, alice_key = pki.client("alice")
        consumer = Consumer({
            "bootstrap.servers": f"{cluster.host}:{ssl_ports[leader]}",
            "security.protocol": "ssl", "ssl.ca.location": pki.ca_file,
            "ssl.certificate.location": alice_cert, "ssl.key.location": alice_key,
            "group.id": "g", "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        got: list[bytes | None] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < len(values) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append(message.value())
        consumer.close()
        assert got == values
        for broker in cluster.brokers.values():
            text = broker.log_path.read_text(errors="replace")
            assert "Failed authentication" not in text, broker.log_tail()


def test_the_inter_broker_context_follows_the_inter_broker_listener(tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    common = {"ssl.keystore.type": "PEM", "ssl.keystore.location": pki.keystore,
              "ssl.truststore.type": "PEM", "ssl.truststore.location": pki.ca_file}
    both = "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"
    assert inter_broker_ssl_context(BrokerConfig.from_properties(
        {"listeners": both, **common})) is None           # PLAINTEXT is the default
    checked = inter_broker_ssl_context(BrokerConfig.from_properties(
        {"listeners": both, "security.inter.broker.protocol": "SSL", **common}))
    assert checked is not None and checked.check_hostname
    assert checked.verify_mode == ssl.CERT_REQUIRED
    # the listener's own override applies, as Kafka's inter-broker client takes it
    unchecked = inter_broker_ssl_context(BrokerConfig.from_properties(
        {"listeners": both, "inter.broker.listener.name": "SSL", **common,
         "listener.name.ssl.ssl.endpoint.identification.algorithm": ""}))
    assert unchecked is not None and not unchecked.check_hostname
