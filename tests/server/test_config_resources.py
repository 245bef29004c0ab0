"""ListConfigResources (74) against an embedded ``kafkapy.Broker``: kafka-python's
``list_config_resources`` (v1) and raw v0/v1 requests, as Kafka 4.1's handler answers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from kafkapy import Broker
from kafkapy.protocol import API_KEYS
from kafkapy.protocol.classes import struct_classes
from tests.clients.client_support import RawClient

C = struct_classes(API_KEYS[74].request.body)
TOPICS = ["lcr-b", "lcr-a"]


@pytest.fixture(scope="module")
def broker() -> Iterator[Broker]:
    with Broker() as b:
        admin = KafkaAdminClient(bootstrap_servers=b.bootstrap_servers)
        try:
            admin.create_topics([NewTopic(t, 1, 1) for t in TOPICS])
        finally:
            admin.close()
        yield b


def test_kafka_python(broker: Broker) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        # Every type: each live broker as a broker and a broker logger, every topic; no
        # group configs or client metrics subscriptions exist.
        assert admin.list_config_resources() == {
            "broker_logger": ["1"], "broker": ["1"], "topic": ["lcr-a", "lcr-b"]}
        assert admin.list_config_resources(["TOPIC"]) == {"topic": ["lcr-a", "lcr-b"]}
        assert admin.list_config_resources(["GROUP", "CLIENT_METRICS"]) == {}
    finally:
        admin.close()


def test_v0_lists_client_metrics_only(broker: Broker) -> None:
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(74, 0, C["ListConfigResourcesRequest"]())
    assert (body.error_code, body.config_resources) == (0, [])


@pytest.mark.parametrize("types", [[1], [2, 64], [-1]])
def test_unsupported_type(broker: Broker, types: list[int]) -> None:
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(74, 1, C["ListConfigResourcesRequest"](resource_types=types))
    assert (body.error_code, body.config_resources) == (35, [])


def test_brokers_then_topics(broker: Broker) -> None:
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(74, 1, C["ListConfigResourcesRequest"](resource_types=[2, 4]))
    assert [(r.resource_name, r.resource_type) for r in body.config_resources] == [
        ("1", 4), ("lcr-a", 2), ("lcr-b", 2)]
