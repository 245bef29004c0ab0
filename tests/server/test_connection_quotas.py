"""Connection creation rate quotas (KIP-612) on a real broker over real sockets: the
broker-wide ``max.connection.creation.rate``, set while running, slows the acceptor down to
about the limit, and
an IP's ``connection_creation_rate`` (set with AlterClientQuotas, for the IP or the
``<default>`` IP) gets the connections over it closed unanswered. Each connection proves it
was served with an ApiVersions v0 request.

The quota windows are shortened (2 samples of 1 s) so that a rate is measured over about a
second and the tests stay short; the bands asserted are wide (2 shared cores)."""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from kafka import KafkaAdminClient

from kafkapy.testing import BrokerHandle
from kafkapy.tools.client_quotas_admin import alter_client_quotas

SHORT_WINDOWS = {"quota.window.num": "2", "quota.window.size.seconds": "1"}
_API_VERSIONS_V0 = struct.pack(">hhih", 18, 0, 7, 4) + b"test"
_REQUEST = struct.pack(">i", len(_API_VERSIONS_V0)) + _API_VERSIONS_V0


def _host_port(broker: BrokerHandle) -> tuple[str, int]:
    host, _, port = broker.bootstrap_servers.rpartition(":")
    return host, int(port)


def _answered(sock: socket.socket) -> bool:
    """True: the broker answered the ApiVersions request; False: it closed the connection."""
    sock.sendall(_REQUEST)
    data = b""
    while len(data) < 8:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:
            return False
        if not chunk:
            return False
        data += chunk
    size, correlation_id = struct.unpack(">ii", data[:8])
    assert size > 4 and correlation_id == 7
    return True


def _connect(address: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(address, timeout=30)
    sock.settimeout(30)
    return sock


def test_broker_connection_creation_rate_slows_the_acceptor(
        kafka_broker_factory: Any) -> None:
    limit, count = 10, 40
    broker: BrokerHandle = kafka_broker_factory(config=SHORT_WINDOWS)
    address = _host_port(broker)
    # Set while running (Kafka's dynamic max.connection.creation.rate), for broker 1.
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    resource = ConfigResource(ConfigResource.Type.BROKER, "1", incremental_configs=[
        ConfigEntry("max.connection.creation.rate", str(limit),
                    incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(timeout=30)
    opened: list[socket.socket] = []
    try:
        started = time.monotonic()
        for _ in range(count):
            sock = _connect(address)
            opened.append(sock)
            assert _answered(sock)          # every connection is served, only later
        elapsed = time.monotonic() - started
    finally:
        for sock in opened:
            sock.close()
    rate = count / elapsed
    print(f"{count} connections in {elapsed:.2f} s: {rate:.1f}/s (limit {limit}/s)")
    # Unthrottled, 40 loopback connections take a few ms; at 10/s about 3 s (the first
    # window's ~10 go at once). Wide band: slowed down, and not far from the limit.
    assert 2 <= rate <= 3 * limit


def test_ip_connection_creation_rate_closes_the_excess(kafka_broker_factory: Any) -> None:
    broker: BrokerHandle = kafka_broker_factory(config=SHORT_WINDOWS)
    address = _host_port(broker)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)

    def burst(n: int) -> tuple[int, int]:
        """Open n connections at once; (answered, closed unanswered)."""
        socks = [_connect(address) for _ in range(n)]
        try:
            answers = [_answered(sock) for sock in socks]
        finally:
            for sock in socks:
                sock.close()
        return answers.count(True), answers.count(False)

    try:
        ip = socket.gethostbyname(address[0])
        [result] = alter_client_quotas(admin, [([("ip", ip)],
                                                [("connection_creation_rate", 5)])])
        assert result.error_code == 0
        answered, closed = burst(20)
        print(f"ip quota 5/s: {answered} answered, {closed} closed")
        assert 1 <= answered <= 12 and closed >= 8
        # The quota removed: nothing is throttled any more.
        [result] = alter_client_quotas(admin, [([("ip", ip)],
                                                [("connection_creation_rate", None)])])
        assert result.error_code == 0
        assert burst(20) == (20, 0)
        # The <default> IP quota applies to every address without its own.
        [result] = alter_client_quotas(admin, [([("ip", None)],
                                                [("connection_creation_rate", 5)])])
        assert result.error_code == 0
        answered, closed = burst(20)
        print(f"default ip quota 5/s: {answered} answered, {closed} closed")
        assert answered <= 12 and closed >= 8
    finally:
        admin.close()
