"""Test support for TLS: a trustme CA, the broker's and clients' certificates as files, a
TLS handshake between two contexts over a real socket pair, and SSL listeners for the brokers
of a ``kafkapy.Cluster``."""

from __future__ import annotations

import datetime
import socket
import ssl
import threading
from pathlib import Path

import attrs
import trustme

from kafkapy.cluster import Cluster
from kafkapy.zk.zookeeper_server import free_port


@attrs.frozen
class Pki:
    """Files under ``root``: ``ca.pem``; the broker's ``broker.pem`` (key + chain, for
    ssl.keystore.location) for localhost/127.0.0.1; clients' cert/key pairs ``alice`` (by the
    CA), ``mallory`` (by another CA), ``expired`` (by the CA, out of date)."""

    root: Path
    ca: trustme.CA
    broker: trustme.LeafCert

    @property
    def ca_file(self) -> str:
        return str(self.root / "ca.pem")

    @property
    def keystore(self) -> str:
        return str(self.root / "broker.pem")

    def client(self, name: str) -> tuple[str, str]:
        """(certificate file, key file) of a client."""
        return str(self.root / f"{name}.crt"), str(self.root / f"{name}.key")


def make_pki(root: Path) -> Pki:
    root.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA(organization_name="acme")
    ca.cert_pem.write_to_path(str(root / "ca.pem"))
    broker = ca.issue_cert("localhost", "127.0.0.1", common_name="broker",
                           organization_name="acme")
    broker.private_key_and_cert_chain_pem.write_to_path(str(root / "broker.pem"))
    past = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    clients = {
        "alice": ca.issue_cert("alice", common_name="alice", organization_name="acme",
                               organization_unit_name="eng"),
        "mallory": trustme.CA().issue_cert("mallory", common_name="mallory"),
        "expired": ca.issue_cert("old", common_name="old", not_before=past,
                                 not_after=past + datetime.timedelta(days=1)),
    }
    for name, cert in clients.items():
        cert.cert_chain_pems[0].write_to_path(str(root / f"{name}.crt"))
        cert.private_key_pem.write_to_path(str(root / f"{name}.key"))
    return Pki(root, ca, broker)


def handshake(server: ssl.SSLContext, client: ssl.SSLContext, *,
              server_hostname: str | None = "localhost"
              ) -> tuple[str | None, bytes | None, BaseException | None]:
    """A TLS handshake over a socket pair: (version, the client certificate the server saw
    (DER) or None, the server's error or None). The client's own error is raised."""
    a, b = socket.socketpair()
    a.settimeout(10)
    b.settimeout(10)
    seen: dict[str, object] = {}

    def serve() -> None:
        try:
            with server.wrap_socket(a, server_side=True) as s:
                seen["cert"] = s.getpeercert(binary_form=True)
                seen["version"] = s.version()
                s.sendall(b"ok")
        except (ssl.SSLError, OSError) as exc:
            seen["error"] = exc

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        with client.wrap_socket(b, server_hostname=server_hostname) as c:
            c.recv(2)
    finally:
        thread.join(10)
    cert = seen.get("cert")
    error = seen.get("error")
    version = seen.get("version")
    assert cert is None or isinstance(cert, bytes)
    assert error is None or isinstance(error, BaseException)
    assert version is None or isinstance(version, str)
    return version, cert, error


def add_ssl_listeners(cluster: Cluster) -> dict[int, int]:
    """Give every broker of a cluster not started yet an ``SSL`` listener beside its
    PLAINTEXT one (``listener.name.ssl.*`` or ``ssl.*`` settings say how); their ports."""
    ports: dict[int, int] = {}
    for broker_id, broker in cluster.brokers.items():
        ports[broker_id] = free_port(cluster.host)
        cluster.broker_settings[broker_id] = {
            "listeners": f"PLAINTEXT://{cluster.host}:{broker.port},"
                         f"SSL://{cluster.host}:{ports[broker_id]}"}
    return ports
