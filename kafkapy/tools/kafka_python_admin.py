"""kafka-python's ``KafkaAdminClient`` for the admin APIs confluent-kafka's AdminClient lacks.

confluent-kafka 2.x (librdkafka) has no DescribeLogDirs, AlterPartitionReassignments,
ListPartitionReassignments, DescribeProducers, DescribeTransactions, ListTransactions or
WriteTxnMarkers (Kafka's ``Admin.abortTransaction``); kafka-python 3.x has them all, so the
tools that need them (``log-dirs``, ``reassign-partitions``, ``transactions``) use it, and
only it. This module owns turning ``--bootstrap-server`` and a ``--command-config`` file of
Kafka client properties into kafka-python's settings, and the Java-style message of a
kafka-python error.

Kafka property names map to kafka-python's (``security.protocol`` -> ``security_protocol``,
``sasl.jaas.config``'s PLAIN/SCRAM login -> ``sasl_plain_username``/``sasl_plain_password``,
librdkafka's PEM ``ssl.*.location`` -> ``ssl_cafile``/``ssl_certfile``/``ssl_keyfile``);
a property kafka-python has no equivalent for is ignored, as Kafka's tools ignore
(with a warning) properties an AdminClient does not know.
"""

from __future__ import annotations

import importlib
from typing import Any

from kafkapy.tools.command_config import client_config

__all__ = ["ClientMissing", "error_message", "import_kafka_python", "kafka_python_admin",
           "kafka_python_settings"]

# librdkafka-style names (as ``command_config.client_config`` returns them) -> kafka-python's.
_SETTINGS = {
    "bootstrap.servers": "bootstrap_servers",
    "client.id": "client_id",
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "request.timeout.ms": "request_timeout_ms",
}
_INT_SETTINGS = frozenset({"request_timeout_ms"})
REQUEST_TIMEOUT_MS = 30_000


class ClientMissing(Exception):
    """kafka-python cannot be imported: the install hint, exit code 1."""


def import_kafka_python(tool: str) -> Any:
    """The ``kafka`` package (kafka-python), or ClientMissing with the install hint."""
    try:
        importlib.import_module("kafka.admin")
        return importlib.import_module("kafka")
    except ImportError:
        raise ClientMissing(f"kafkapy {tool} needs kafka-python: pip install 'kafkapy[tools]'") \
            from None


def kafka_python_settings(bootstrap: str, command_config: str | None,
                          client_id: str) -> dict[str, Any]:
    """kafka-python's ``KafkaAdminClient`` settings for ``--bootstrap-server`` and the
    ``--command-config`` file (``client.id`` there wins over the tool's). Raises OSError
    when the file cannot be read."""
    settings: dict[str, Any] = {"client_id": client_id, "request_timeout_ms": REQUEST_TIMEOUT_MS}
    for key, value in client_config(bootstrap, command_config).items():
        name = _SETTINGS.get(key)
        if name is not None:
            settings[name] = int(value) if name in _INT_SETTINGS else value
    return settings


def kafka_python_admin(tool: str, bootstrap: str, command_config: str | None,
                       client_id: str) -> Any:
    """A connected ``KafkaAdminClient``. Raises ClientMissing, OSError (an unreadable
    ``--command-config``) or kafka-python's errors (no broker reachable)."""
    kafka = import_kafka_python(tool)
    return kafka.KafkaAdminClient(**kafka_python_settings(bootstrap, command_config, client_id))


def error_message(exc: BaseException) -> str:
    """A kafka-python error as Kafka's tools print ``e.getMessage()``: the error's own
    description (kafka-python carries Kafka's ``Errors`` messages), else its text."""
    description = getattr(exc, "description", None)
    if isinstance(description, str) and description:
        return description
    return str(exc)
