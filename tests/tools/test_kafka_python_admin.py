"""kafkapy.tools.kafka_python_admin: a ``--command-config`` file of Kafka client properties as
kafka-python's settings (pure logic), kafka-python's errors as Kafka's tools print them, the
bounded retry of bootstrap and controller lookup (pure logic over a stand-in client, then a
real 3-broker cluster with one broker frozen by SIGSTOP and ``kafkapy log-dirs`` run
repeatedly)."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import kafka
import pytest
from kafka.errors import (
    KafkaConfigurationError,
    KafkaTimeoutError,
    TransactionalIdNotFoundError,
)

import kafkapy
from kafkapy.tools.kafka_python_admin import connect_admin, error_message, kafka_python_settings
from tests.tools.support import run_tool


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


def _failing_client(failure: BaseException, tried: list[str]) -> Any:
    """A stand-in for the ``kafka`` module whose admin client fails to bootstrap."""
    def admin(**settings: Any) -> Any:
        tried.append(settings["bootstrap_servers"])
        assert settings["bootstrap_timeout_ms"] <= 5_000
        raise failure
    return SimpleNamespace(KafkaAdminClient=admin, errors=kafka.errors)


def test_bootstrap_tries_every_server_bounded_and_raises_the_last_error() -> None:
    tried: list[str] = []
    stuck = KafkaTimeoutError("Unable to bootstrap")
    start = time.monotonic()
    with pytest.raises(KafkaTimeoutError) as raised:
        connect_admin(_failing_client(stuck, tried), {"bootstrap_servers": "a:1, b:2,c:3"},
                      timeout_ms=10)
    assert raised.value is stuck
    # each server tried in turn (from a random one), and again while time remains
    assert sorted(tried[:3]) == ["a:1", "b:2", "c:3"]
    assert time.monotonic() - start < 60
    # a non-retriable error is not retried
    tried.clear()
    with pytest.raises(KafkaConfigurationError):
        connect_admin(_failing_client(KafkaConfigurationError("bad"), tried),
                      {"bootstrap_servers": "a:1,b:2"}, timeout_ms=10)
    assert len(tried) == 1


def test_tools_survive_a_frozen_broker(tmp_path: Path) -> None:
    with kafkapy.Cluster(3, {"offsets.topic.num.partitions": 1},
                         data_dir=tmp_path / "cluster", timeout=60) as cluster:
        cluster.create_topic("spread", {0: [1], 1: [2], 2: [3]})
        controller = cluster.wait_for_controller(timeout=60)
        frozen = next(b for b in cluster.brokers if b != controller)
        live = sorted(b for b in cluster.brokers if b != frozen)
        cluster.pause(frozen)
        try:
            # kafka-python alone fails when it picks the frozen broker (a random third of
            # the time at bootstrap, again at the controller lookup); each run here succeeds
            for _ in range(5):
                result = run_tool("log-dirs", "--bootstrap-server", cluster.bootstrap_servers,
                                  "--describe", "--broker-list", ",".join(map(str, live)),
                                  timeout=120)
                assert result.code == 0, result.err
                assert result.out[1] == ("Received log directory information from brokers "
                                         + ",".join(map(str, live)))
        finally:
            cluster.resume(frozen)
