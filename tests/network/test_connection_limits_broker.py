"""The connection limits on a real broker, as Kafka's ConnectionQuotas and DynamicBrokerConfig
apply them. Changed while it runs with confluent-kafka's AdminClient (IncrementalAlterConfigs;
kafka-python's request for the cluster default): ``max.connections`` set for the cluster
default or the broker makes the next connection wait and a raise lets it in at once; lowered
below the open connections, the broker closes the excess; ``max.connections.per.ip`` and its
overrides refuse (close) the next connections from the address; 0 for a listener's limit is
refused with INVALID_REQUEST. With two listeners, the inter-broker one goes over
``max.connections`` and the least recently active client connection is closed. Each raw
connection proves it was served with an ApiVersions v0 request."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource as KafkaPythonResource
from kafka.admin import ConfigResourceType

import kafkapy
from kafkapy.testing import BrokerHandle
from kafkapy.zk.zookeeper_server import ZooKeeperServer

_API_VERSIONS_V0 = struct.pack(">hhih", 18, 0, 7, 4) + b"test"
_REQUEST = struct.pack(">i", len(_API_VERSIONS_V0)) + _API_VERSIONS_V0


def _connect(broker: BrokerHandle) -> socket.socket:
    host, _, port = broker.bootstrap_servers.rpartition(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.settimeout(30)
    return sock


def _answer(sock: socket.socket, timeout: float = 30) -> bool | None:
    """Wait (up to ``timeout`` s) for the answer to the ApiVersions request already sent:
    True answered, False closed by the broker, None no answer yet."""
    sock.settimeout(timeout)
    data = b""
    try:
        while len(data) < 8:
            chunk = sock.recv(4096)
            if not chunk:
                return False
            data += chunk
    except ConnectionResetError:
        return False
    except TimeoutError:
        assert not data
        return None
    size, correlation_id = struct.unpack(">ii", data[:8])
    assert size > 4 and correlation_id == 7
    return True


def _ask(sock: socket.socket, timeout: float = 30) -> bool | None:
    sock.sendall(_REQUEST)
    return _answer(sock, timeout)


def _alter(admin: AdminClient, broker: str, op: AlterConfigOpType, **configs: str) -> None:
    """IncrementalAlterConfigs on broker ``broker`` with confluent-kafka."""
    resource = ConfigResource(ConfigResource.Type.BROKER, broker, incremental_configs=[
        ConfigEntry(name.replace("_", "."), value, incremental_operation=op)
        for name, value in configs.items()])
    admin.incremental_alter_configs([resource])[resource].result(timeout=30)


def _alter_default(broker: BrokerHandle | kafkapy.Broker, **configs: str) -> str:
    """IncrementalAlterConfigs SET on the cluster default (broker resource name "", Kafka's
    ``--entity-default``): "OK" or the error. confluent-kafka and kafka-python's
    ``alter_configs`` both refuse that name client-side, so kafka-python's request is built
    and sent through its client directly."""
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        resource = KafkaPythonResource(ConfigResourceType.BROKER, "", {
            k.replace("_", "."): v for k, v in configs.items()})
        request = admin._alter_configs_request([resource], False, True)
        # To broker 1 (the bootstrap one): never to a broker the test holds at its limit.
        response = admin._manager.run(admin._manager.send, request, 1)
        result = admin._alter_configs_process_responses(response.responses)
    finally:
        admin.close()
    return str(result["broker"][""])


def _eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"not within 30 s: {what}"
        time.sleep(0.05)


def test_max_connections_changes_live(kafka_broker_factory: Any) -> None:
    broker: BrokerHandle = kafka_broker_factory()
    count: Callable[[], int] = lambda: broker.call(
        lambda: broker.server.socket_server.connection_count)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    opened: list[socket.socket] = []
    try:
        # The admin client's own connections are open before the limit is set.
        _alter(admin, "1", AlterConfigOpType.SET, max_connections=str(2**31 - 1))
        base = count()
        assert _alter_default(broker, max_connections=str(base + 1)) == "OK"
        _eventually(lambda: count() == base, "kafka-python's connections are gone")
        # The cluster default is under the broker's own value: not in force yet.
        _alter(admin, "1", AlterConfigOpType.DELETE, max_connections="")
        opened.append(_connect(broker))
        assert _ask(opened[0]) is True
        held = _connect(broker)
        opened.append(held)
        assert _ask(held, timeout=1) is None        # the acceptor waits: no answer, no close
        # Raised for this broker (over the cluster default): the held one is served now.
        _alter(admin, "1", AlterConfigOpType.SET, max_connections=str(base + 2))
        assert _answer(held) is True
        assert count() == base + 2
        # Back to the cluster default, below the open connections: one idle connection is
        # closed, the least recently active: the first raw one (the admin client keeps one
        # connection, busy with this very request).
        _alter(admin, "1", AlterConfigOpType.DELETE, max_connections="")
        _eventually(lambda: count() == base + 1, "the broker closed its excess connection")
        answers = [_ask(sock) for sock in opened]
        assert sorted(answers, key=str) == [False, True]
        next_one = _connect(broker)
        opened.append(next_one)
        assert _ask(next_one, timeout=1) is None    # full again
        for sock, answered in zip(opened[:2], answers, strict=True):
            if answered:
                sock.close()
        assert _answer(next_one) is True
    finally:
        for sock in opened:
            sock.close()


def test_max_connections_per_ip_changes_live(kafka_broker_factory: Any) -> None:
    broker: BrokerHandle = kafka_broker_factory()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    host = broker.bootstrap_servers.rpartition(":")[0]
    ip = socket.gethostbyname(host)
    per_ip: Callable[[], int] = lambda: broker.call(
        lambda: broker.server.socket_server.connection_count_from(ip))
    opened: list[socket.socket] = []
    try:
        _alter(admin, "1", AlterConfigOpType.SET, max_connections_per_ip=str(2**31 - 1))
        base = per_ip()
        assert _alter_default(broker, max_connections_per_ip=str(base + 1)) == "OK"
        _eventually(lambda: per_ip() == base, "kafka-python's connections are gone")
        _alter(admin, "1", AlterConfigOpType.DELETE, max_connections_per_ip="")
        opened.append(_connect(broker))
        assert _ask(opened[0]) is True
        refused = _connect(broker)
        opened.append(refused)
        assert _ask(refused) is False               # closed at once (TooManyConnections)
        # An override for the address raises its limit; the next connection is served.
        _alter(admin, "1", AlterConfigOpType.SET,
               max_connections_per_ip_overrides=f"{ip}:{base + 2}")
        opened.append(_connect(broker))
        assert _ask(opened[-1]) is True
        # Lowered below the open connections: they stay, the next one is refused.
        _alter(admin, "1", AlterConfigOpType.SET, max_connections_per_ip_overrides=f"{ip}:1")
        assert _ask(opened[0]) is True and _ask(opened[-1]) is True
        opened.append(_connect(broker))
        assert _ask(opened[-1]) is False
    finally:
        for sock in opened:
            sock.close()


@pytest.mark.parametrize(("resource", "name"), [
    ("1", "max.connections"),
    ("", "max.connections"),
    ("1", "listener.name.plaintext.max.connections"),
    ("", "max.connection.creation.rate"),
])
def test_zero_for_a_listener_limit_is_invalid_request(kafka_broker_factory: Any, resource: str,
                                                      name: str) -> None:
    # Kafka's ListenerConnectionQuota.validateReconfiguration: "Invalid max.connections 0",
    # which the broker answers with INVALID_REQUEST (a ConfigException).
    broker: BrokerHandle = kafka_broker_factory()
    message = f"Invalid {name.rpartition('.name.plaintext.')[2] or name} 0"
    if resource:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        with pytest.raises(KafkaException) as failure:
            _alter(admin, resource, AlterConfigOpType.SET, **{name.replace(".", "_"): "0"})
        error = failure.value.args[0]
        assert error.code() == KafkaError.INVALID_REQUEST
        assert message in error.str()
    else:
        result = _alter_default(broker, **{name.replace(".", "_"): "0"})
        assert result.startswith("[Error 42] InvalidRequestError") and message in result
    # Nothing was applied: connections are still served.
    sock = _connect(broker)
    try:
        assert _ask(sock) is True
    finally:
        sock.close()


def _connect_to(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.settimeout(30)
    return sock


def test_inter_broker_listener_goes_over_and_the_oldest_client_connection_closes(
        kafka_broker_factory: Any) -> None:
    broker: BrokerHandle = kafka_broker_factory({
        "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "max.connections": "2"})
    ports = broker.call(lambda: {e.name: e.port
                                 for e in broker.server.socket_server.bound_endpoints})
    count: Callable[[], int] = lambda: broker.call(
        lambda: broker.server.socket_server.connection_count)
    opened: list[socket.socket] = []
    try:
        older, newer = _connect_to(ports["PLAINTEXT"]), _connect_to(ports["PLAINTEXT"])
        opened += [older, newer]
        assert _ask(older) is True and _ask(newer) is True
        assert _ask(older) is True              # `newer` is now the least recently active
        held = _connect_to(ports["PLAINTEXT"])
        opened.append(held)
        assert _ask(held, timeout=1) is None    # the client listener waits at 2
        # The inter-broker listener is protected: served at once, and the broker closes the
        # least recently active connection of the other listener to get back to 2.
        inter_broker = _connect_to(ports["INTERNAL"])
        opened.append(inter_broker)
        assert _ask(inter_broker) is True
        assert _ask(newer) is False
        assert _ask(older) is True
        _eventually(lambda: count() == 2, "back at max.connections")
        assert _ask(inter_broker) is True
        inter_broker.close()
        assert _answer(held) is True            # the slot freed goes to the held client
    finally:
        for sock in opened:
            sock.close()


def test_cluster_default_reaches_the_other_broker(tmp_path: Path) -> None:
    # ZooKeeper mode: the cluster default set through one broker is announced under
    # /config/changes and the other broker applies it to its acceptor too.
    with ZooKeeperServer() as zk_server:
        connect = f"{zk_server.connect_string}/maxconn"
        brokers = [kafkapy.Broker(data_dir=tmp_path / f"b{i}", zookeeper_connect=connect,
                                  broker_id=i) for i in (1, 2)]
        opened: list[socket.socket] = []
        try:
            for b in brokers:
                b.start()
            other = brokers[1]
            count: Callable[[], int] = lambda: other.call(
                lambda: other.server.socket_server.connection_count)
            applied: Callable[[], int] = lambda: other.call(
                lambda: other.server.config.max_connections)
            port = other.port
            # The controller's channel to broker 2 (if broker 1 controls) is open or never
            # will be: wait until broker 2 knows a controller and its count is steady.
            _eventually(lambda: other.call(
                lambda: other.server.metadata_cache.controller_id is not None),
                "broker 2 knows the controller")
            base = count()
            assert _alter_default(brokers[0], max_connections=str(base + 1)) == "OK"
            _eventually(lambda: applied() == base + 1, "broker 2 applies the default")
            opened.append(_connect_to(port))
            assert _ask(opened[0]) is True
            held = _connect_to(port)
            opened.append(held)
            assert _ask(held, timeout=1) is None
            assert _alter_default(brokers[0], max_connections=str(base + 2)) == "OK"
            assert _answer(held) is True
        finally:
            for sock in opened:
                sock.close()
            for b in reversed(brokers):
                b.stop()
