"""kafkapy.tools.kafka_python_admin: a ``--command-config`` file of Kafka client properties as
kafka-python's settings (pure logic), and kafka-python's errors as Kafka's tools print them."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka.errors import TransactionalIdNotFoundError

from kafkapy.tools.kafka_python_admin import error_message, kafka_python_settings


def test_without_command_config() -> None:
    assert kafka_python_settings("h:1,h:2", None, "log-dirs-tool") == {
        "bootstrap_servers": "h:1,h:2", "client_id": "log-dirs-tool",
        "request_timeout_ms": 30000}


def test_command_config(tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text(
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
        'username="alice" password="s3cret";\n'
        "ssl.ca.location=/etc/ca.pem\n"
        "client.id=mine\n"
        "request.timeout.ms=5000\n"
        "ssl.truststore.location=/etc/truststore.jks\n")      # no kafka-python equivalent
    assert kafka_python_settings("h:1", str(config), "transactions-tool") == {
        "bootstrap_servers": "h:1", "client_id": "mine", "request_timeout_ms": 5000,
        "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "alice", "sasl_plain_password": "s3cret",
        "ssl_cafile": "/etc/ca.pem"}


def test_unreadable_command_config(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        kafka_python_settings("h:1", str(tmp_path / "absent"), "log-dirs-tool")


def test_error_message() -> None:
    assert error_message(TransactionalIdNotFoundError()) == \
        "The transactionalId could not be found."
    assert error_message(ValueError("plain")) == "plain"
