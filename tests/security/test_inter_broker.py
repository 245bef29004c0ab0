"""The broker's own SASL credentials for its inter-broker listener
(kafkapy.security.listener_sasl.inter_broker_authenticator), checked at start as Kafka does."""

from __future__ import annotations

import pytest

from kafkapy.config import BrokerConfig
from kafkapy.errors import InvalidConfigError
from kafkapy.security.listener_sasl import inter_broker_authenticator

BASE = {"listeners": "PLAINTEXT://:9092,INTERNAL://:9093",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "listener.name.internal.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.internal.plain.sasl.jaas.config":
            'org.apache.kafka.common.security.plain.PlainLoginModule required '
            'username="broker" password="broker-secret" user_broker="broker-secret";'}


def test_plaintext_inter_broker_listener_needs_nothing() -> None:
    config = BrokerConfig.from_properties({**BASE, "inter.broker.listener.name": "PLAINTEXT"})
    assert inter_broker_authenticator(config) is None


def test_sasl_inter_broker_listener() -> None:
    assert callable(inter_broker_authenticator(BrokerConfig.from_properties(BASE)))


@pytest.mark.parametrize(("change", "message"), [
    ({"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256"},
     "sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms"),
    ({"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512"},
     "Could not find a JAAS configuration for SASL mechanism SCRAM-SHA-512"),
    ({"listener.name.internal.plain.sasl.jaas.config":
        'x.PlainLoginModule required user_broker="s";'}, "needs username and password"),
])
def test_refused(change: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=message):
        inter_broker_authenticator(BrokerConfig.from_properties({**BASE, **change}))
