"""Dynamic key store update (Kafka's KIP-226): IncrementalAlterConfigs of
``listener.name.ssl.ssl.keystore.location`` on a running broker, from confluent-kafka's admin
client. New TLS connections get the new certificate, open ones keep working; a certificate
for another identity is refused (INVALID_REQUEST, Kafka's "Keystore DistinguishedName does
not match") and the old one kept; a key store rewritten in place is reloaded when its setting
is altered to the same value."""

from __future__ import annotations

import socket
import ssl
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from cryptography import x509

from kafkapy.testing import BrokerHandle

TIMEOUT = 30.0


def issue(ca: trustme.CA, path: Path, common_name: str = "broker") -> int:
    """A key store (key + chain PEM) at ``path`` for localhost/127.0.0.1; its serial."""
    cert = ca.issue_cert("localhost", "127.0.0.1", common_name=common_name,
                         organization_name="acme", organization_unit_name="kafka")
    cert.private_key_and_cert_chain_pem.write_to_path(str(path))
    return x509.load_pem_x509_certificate(cert.cert_chain_pems[0].bytes()).serial_number


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[BrokerHandle, trustme.CA, Path, int]]:
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    serial = issue(ca, tmp_path / "v1.pem")
    config = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
              "listener.name.ssl.ssl.keystore.type": "PEM",
              "listener.name.ssl.ssl.keystore.location": str(tmp_path / "v1.pem")}
    with BrokerHandle(tmp_path / "data", config) as broker:
        yield broker, ca, tmp_path, serial


def ssl_address(broker: BrokerHandle) -> tuple[str, int]:
    endpoint = broker.server.advertised_endpoints["SSL"]
    return endpoint.host, endpoint.port


def connect(broker: BrokerHandle, root: Path) -> ssl.SSLSocket:
    ctx = ssl.create_default_context(cafile=str(root / "ca.pem"))
    raw = socket.create_connection(ssl_address(broker), timeout=TIMEOUT)
    return ctx.wrap_socket(raw, server_hostname="127.0.0.1")


def serial_seen(broker: BrokerHandle, root: Path) -> int:
    with connect(broker, root) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def api_versions_roundtrip(tls: ssl.SSLSocket) -> None:
    body = struct.pack(">hhi", 18, 0, 42) + struct.pack(">h", 4) + b"test"
    tls.sendall(struct.pack(">i", len(body)) + body)
    size = struct.unpack(">i", tls.recv(4))[0]
    data = b""
    while len(data) < size:
        data += tls.recv(size - len(data))
    assert struct.unpack(">i", data[:4])[0] == 42       # our correlation id


def alter(broker: BrokerHandle, location: Path) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers.split(",")[0]})
    resource = ConfigResource(ResourceType.BROKER, str(broker.server.node_id),
                              incremental_configs=[ConfigEntry(
                                  "listener.name.ssl.ssl.keystore.location", str(location),
                                  incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(TIMEOUT)


def test_a_new_key_store_serves_new_connections(
        setup: tuple[BrokerHandle, trustme.CA, Path, int]) -> None:
    broker, ca, root, first = setup
    assert serial_seen(broker, root) == first
    before = connect(broker, root)          # open across the update
    api_versions_roundtrip(before)

    second = issue(ca, root / "v2.pem")
    alter(broker, root / "v2.pem")
    assert serial_seen(broker, root) == second
    api_versions_roundtrip(before)          # the open connection is untouched
    before.close()

    # another identity: refused, the current key store kept
    issue(ca, root / "other.pem", common_name="somebody-else")
    with pytest.raises(KafkaException, match="Keystore DistinguishedName does not match"):
        alter(broker, root / "other.pem")
    assert serial_seen(broker, root) == second

    # the same file rewritten in place, then altered to the same value: reloaded
    third = issue(ca, root / "v2.pem")
    alter(broker, root / "v2.pem")
    assert serial_seen(broker, root) == third
