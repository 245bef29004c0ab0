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

Connecting survives a broker that does not answer (frozen, SIGSTOPped: its socket accepts
but nothing comes back). kafka-python's bootstrap picks one bootstrap server at random and
waits on it for its whole ``bootstrap_timeout_ms``, and its controller lookup sends Metadata
to a random broker with no retry; Kafka's Java AdminClient tries other nodes until its
``default.api.timeout.ms``. So ``kafka_python_admin`` bootstraps from one server at a time,
each given an equal share of ``SETUP_TIMEOUT_MS`` (at least ``MIN_ATTEMPT_MS``), in turn from
a random one; then asks the brokers for the controller, the bootstrap server's broker first,
each for at most that share, and keeps the answering connection (kafka-python's
least-loaded choice prefers an open idle connection). A retriable error moves on to the next
server or broker; the whole setup is bounded by ``SETUP_TIMEOUT_MS`` and the last error is
raised. A non-retriable error (a bad configuration, a refused authentication) is raised at
once. This reaches into kafka-python 3.x's ``_manager`` / ``_controller_id`` (it has no
public way to address one broker or to seed the controller).
"""

from __future__ import annotations

import importlib
import random
import time
from typing import Any

from kafkapy.tools.command_config import client_config

__all__ = ["ClientMissing", "connect_admin", "error_message", "import_kafka_python",
           "kafka_python_admin", "kafka_python_settings"]

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
# Bootstrap and controller lookup together (kafka-python's bootstrap_timeout_ms default).
SETUP_TIMEOUT_MS = 30_000
MIN_ATTEMPT_MS = 5_000


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
    return connect_admin(kafka, kafka_python_settings(bootstrap, command_config, client_id))


def connect_admin(kafka: Any, settings: dict[str, Any],
                  timeout_ms: int = SETUP_TIMEOUT_MS) -> Any:
    """A ``kafka.KafkaAdminClient`` of ``settings`` that has bootstrapped and knows the
    controller, retrying other bootstrap servers and brokers (see the module doc)."""
    servers = [s.strip() for s in str(settings["bootstrap_servers"]).split(",") if s.strip()]
    if not servers:
        return kafka.KafkaAdminClient(**settings)       # kafka-python's own error
    start = random.randrange(len(servers))
    servers = servers[start:] + servers[:start]
    attempt_s = max(MIN_ATTEMPT_MS, timeout_ms // len(servers)) / 1000
    deadline = time.monotonic() + timeout_ms / 1000
    last: BaseException | None = None
    while True:
        for server in servers:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                assert last is not None
                raise last
            budget = min(attempt_s, remaining)
            try:
                admin = kafka.KafkaAdminClient(**{**settings, "bootstrap_servers": server,
                                                  "bootstrap_timeout_ms": int(budget * 1000)})
            except kafka.errors.RetriableError as e:
                last = e
                continue
            try:
                _find_controller(kafka, admin, server, min(attempt_s,
                                                           deadline - time.monotonic()))
            except kafka.errors.RetriableError as e:
                last = e
                admin.close()
                continue
            except BaseException:
                admin.close()
                raise
            return admin


def _find_controller(kafka: Any, admin: Any, server: str, budget_s: float) -> None:
    """Ask the brokers (``server``'s first) for the controller with Metadata, each for at
    most ``budget_s``; the first answer seeds the admin client's controller id, and its
    connection stays open for the requests to come. Raises the last retriable error."""
    metadata_request = importlib.import_module("kafka.protocol.metadata").MetadataRequest
    manager = admin._manager
    host, _, port = server.rpartition(":")
    brokers = sorted(manager.cluster.brokers(),
                     key=lambda b: (b.host, str(b.port)) != (host, port))
    last: BaseException = kafka.errors.NodeNotReadyError("controller: no broker known")
    for broker in brokers:
        async def ask(node_id: int = broker.node_id) -> Any:
            return await manager.send(metadata_request(topics=[]), node_id=node_id,
                                      request_timeout_ms=max(1, int(budget_s * 1000)))
        try:
            response = manager.run(ask)
        except kafka.errors.RetriableError as e:
            last = e
            continue
        if response.controller_id >= 0:
            admin._controller_id = response.controller_id
            return
        last = kafka.errors.NodeNotReadyError("controller: none elected")
    raise last


def error_message(exc: BaseException) -> str:
    """A kafka-python error as Kafka's tools print ``e.getMessage()``: the error's own
    description (kafka-python carries Kafka's ``Errors`` messages), else its text."""
    description = getattr(exc, "description", None)
    if isinstance(description, str) and description:
        return description
    return str(exc)
