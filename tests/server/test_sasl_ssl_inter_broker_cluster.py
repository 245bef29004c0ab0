"""Brokers of a 3-broker cluster (kafkapy.Cluster: real ZooKeeper, real broker processes)
talking to each other over a SASL_SSL inter-broker listener: TLS with each broker's own
certificate as client certificate (``listener.name.internal.ssl.client.auth=required``), then
SASL/PLAIN with the broker's credentials from the listener's JAAS ``username`` /
``password``. The controller's requests, replica fetches and AlterPartition all go through
both, so a replicated topic gets its leaders and a full ISR, and an acks=all produce to
min.insync.replicas=3 completes. One bounded test; the inter-broker context and authenticator
are also checked from the config alone."""

from __future__ import annotations

import ssl
import uuid
from pathlib import Path

from confluent_kafka import Producer

import kafkapy
from kafkapy.config import BrokerConfig
from kafkapy.security.listener_sasl import inter_broker_authenticator
from kafkapy.server.channel_builders import inter_broker_ssl_context, listener_ssl_config
from kafkapy.zk.zookeeper_server import free_port
from tests.network.ssl_support import make_pki

TIMEOUT_S = 60
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        'username="broker" password="broker-secret" user_broker="broker-secret";')


def _settings(keystore: str, ca_file: str) -> dict[str, object]:
    return {
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_SSL",
        "inter.broker.listener.name": "INTERNAL",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": keystore,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": ca_file,
        "listener.name.internal.ssl.client.auth": "required",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.internal.plain.sasl.jaas.config": JAAS,
    }


def test_the_sasl_ssl_inter_broker_listener_gives_tls_and_sasl(tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    config = BrokerConfig.from_properties({
        "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        **_settings(pki.keystore, pki.ca_file)})
    context = inter_broker_ssl_context(config)
    assert context is not None and context.verify_mode == ssl.CERT_REQUIRED
    assert inter_broker_authenticator(config) is not None
    assert listener_ssl_config(config, "INTERNAL").client_auth == "required"
    # without the listener prefix, ssl.client.auth is not a SASL_SSL listener's (KIP-684)
    broad = BrokerConfig.from_properties({
        "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        **{k: v for k, v in _settings(pki.keystore, pki.ca_file).items()
           if k != "listener.name.internal.ssl.client.auth"},
        "ssl.client.auth": "required"})
    assert listener_ssl_config(broad, "INTERNAL").client_auth == "none"


def test_replication_over_a_sasl_ssl_inter_broker_listener(tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    cluster = kafkapy.Cluster(3, {
        "offsets.topic.num.partitions": 1, "zookeeper.session.timeout.ms": 6000,
        **_settings(pki.keystore, pki.ca_file)},
        data_dir=tmp_path / "cluster", timeout=TIMEOUT_S)
    for broker_id, broker in cluster.brokers.items():
        cluster.broker_settings[broker_id] = {
            "listeners": f"PLAINTEXT://{cluster.host}:{broker.port},"
                         f"INTERNAL://{cluster.host}:{free_port(cluster.host)}"}
    with cluster:
        topic = f"sasl-ssl-{uuid.uuid4().hex[:8]}"
        cluster.create_topic(topic, {0: [1, 2, 3], 1: [2, 3, 1]},
                             config={"min.insync.replicas": "3"})
        for partition in (0, 1):
            cluster.wait_for_leader(topic, partition, timeout=TIMEOUT_S)
            assert len(cluster.wait_for_isr(topic, partition, 3, timeout=TIMEOUT_S)) == 3
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                             "message.timeout.ms": TIMEOUT_S * 1000})
        errors: list[object] = []
        for i in range(20):
            producer.produce(topic, f"v{i}".encode(), partition=i % 2,
                             on_delivery=lambda err, _m: errors.append(err) if err else None)
        assert producer.flush(TIMEOUT_S) == 0
        assert errors == []
        for partition in (0, 1):
            assert set(cluster.isr_of(topic, partition)) == {1, 2, 3}
        for broker in cluster.brokers.values():      # TLS and SASL both succeeded
            text = broker.log_path.read_text(errors="replace")
            assert "Failed authentication" not in text, broker.log_tail()
