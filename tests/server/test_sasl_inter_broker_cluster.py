"""Brokers of a 3-broker cluster talking to each other over a SASL_PLAINTEXT inter-broker
listener (PLAIN, the broker's credentials from the listener's JAAS ``username`` /
``password``): the controller's requests, replica fetches and AlterPartition all
authenticate, so a replicated topic gets its leaders and a full ISR, and acks=all produce
works. One bounded test."""

from __future__ import annotations

from confluent_kafka import Producer

import kafkapy
from kafkapy.zk.zookeeper_server import free_port

TIMEOUT_S = 60
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        'username="broker" password="broker-secret" user_broker="broker-secret";')


def test_replication_over_a_sasl_inter_broker_listener() -> None:
    cluster = kafkapy.Cluster(3, {
        "offsets.topic.num.partitions": 1,
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.internal.plain.sasl.jaas.config": JAAS,
    }, timeout=TIMEOUT_S)
    for broker_id, broker in cluster.brokers.items():
        cluster.broker_settings[broker_id] = {
            "listeners": f"PLAINTEXT://{broker.bootstrap},"
                         f"INTERNAL://127.0.0.1:{free_port('127.0.0.1')}"}
    with cluster:
        cluster.create_topic("replicated", {0: [1, 2, 3], 1: [2, 3, 1]})
        for partition in (0, 1):
            cluster.wait_for_leader("replicated", partition, timeout=TIMEOUT_S)
            assert len(cluster.wait_for_isr("replicated", partition, 3,
                                            timeout=TIMEOUT_S)) == 3
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
        for i in range(20):
            producer.produce("replicated", f"v{i}".encode(), partition=i % 2)
        assert producer.flush(TIMEOUT_S) == 0
        for partition in (0, 1):
            assert len(cluster.isr_of("replicated", partition)) == 3
        for broker in cluster.brokers.values():      # every broker authenticated as broker
            assert "Failed authentication" not in broker.log_tail(400)
