"""Dynamic key store / trust store updates (Kafka's KIP-226 and SslFactory
.validateReconfiguration), kafkapy.network.ssl_factory and the broker's inter-broker client.

Validation, on real stores with real TLS handshakes in memory: a new certificate for another
subject DN is refused with Kafka's message unless ssl.allow.dn.changes; one that drops a
subject alternative name unless ssl.allow.san.changes; on the inter-broker listener one that
is expired, not yet valid or not trusted by the current trust store (Kafka's
SslEngineValidator). ``ReconfigurableSslContext`` hands new connections the new stores.

Then a 3-broker kafkapy.Cluster whose inter-broker listener is SSL with mutual TLS rotates to a
new CA through confluent-kafka's incremental_alter_configs (trust both CAs, new key stores,
then trust only the new CA): the brokers never restarted reconnect to a bounced one with the
new certificate (the old one is no longer trusted anywhere), replication carries on, and
refused updates (another DN, an expired certificate) change nothing.
"""

from __future__ import annotations

import datetime
import socket
import ssl
import struct
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
import trustme
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from cryptography import x509

import kafkapy
from kafkapy.errors import InvalidConfigError
from kafkapy.network.ssl_factory import (
    ReconfigurableSslContext,
    SslConfig,
    SslListener,
    client_context,
    server_context,
    ssl_listener,
    validate_update,
)
from tests.network.ssl_support import add_ssl_listeners, handshake

TIMEOUT = 60.0
PAST = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
FUTURE = datetime.datetime(2100, 1, 1, tzinfo=datetime.timezone.utc)


def key_store(ca: trustme.CA, path: Path, *hosts: str, common_name: str = "broker",
              not_before: datetime.datetime | None = None,
              not_after: datetime.datetime | None = None) -> str:
    """A PEM key store (key + chain) at ``path`` for ``hosts`` (default localhost and
    127.0.0.1); returns its path."""
    cert = ca.issue_cert(*(hosts or ("localhost", "127.0.0.1")), common_name=common_name,
                         organization_name="acme", organization_unit_name="kafka",
                         not_before=not_before, not_after=not_after)
    cert.private_key_and_cert_chain_pem.write_to_path(str(path))
    return str(path)


def trust_store(path: Path, *cas: trustme.CA) -> str:
    path.write_bytes(b"".join(ca.cert_pem.bytes() for ca in cas))
    return str(path)


def serial_of(path: str | Path) -> int:
    return x509.load_pem_x509_certificate(Path(path).read_bytes()).serial_number


def listener(keystore: str, truststore: str | None, *, allow_dn_changes: bool = False,
             allow_san_changes: bool = False) -> SslListener:
    return ssl_listener(SslConfig(keystore_type="PEM", keystore_location=keystore,
                                  truststore_type="PEM", truststore_location=truststore,
                                  client_auth="required", allow_dn_changes=allow_dn_changes,
                                  allow_san_changes=allow_san_changes), "SSL")


# ====================================================================== validation


@pytest.fixture
def pki(tmp_path: Path) -> tuple[trustme.CA, Path, SslListener]:
    ca = trustme.CA(organization_name="acme")
    current = listener(key_store(ca, tmp_path / "v1.pem"), trust_store(tmp_path / "ca.pem", ca))
    return ca, tmp_path, current


def test_a_new_certificate_for_the_same_identity_is_accepted(
        pki: tuple[trustme.CA, Path, SslListener]) -> None:
    ca, root, current = pki
    new = listener(key_store(ca, root / "v2.pem"), str(root / "ca.pem"))
    validate_update(current, new, inter_broker=True)
    assert new.entry is not None and current.entry is not None
    assert new.entry.subject == current.entry.subject == "CN=broker, OU=kafka, O=acme"
    # more names than before are fine too (Kafka: the new SANs contain the old ones)
    wider = listener(key_store(ca, root / "v3.pem", "localhost", "127.0.0.1", "broker.example"),
                     str(root / "ca.pem"))
    validate_update(current, wider, inter_broker=True)


def test_another_subject_dn_is_refused_unless_allowed(
        pki: tuple[trustme.CA, Path, SslListener]) -> None:
    ca, root, current = pki
    other = key_store(ca, root / "other.pem", common_name="somebody-else")
    with pytest.raises(InvalidConfigError) as refused:
        validate_update(current, listener(other, str(root / "ca.pem")), inter_broker=False)
    assert refused.value.message == (
        "Validation of dynamic config update of SSLFactory failed: "
        "org.apache.kafka.common.config.ConfigException: Keystore DistinguishedName does not "
        "match:  existing={alias=kafka, DN=CN=broker, OU=kafka, O=acme}, "
        "new={alias=kafka, DN=CN=somebody-else, OU=kafka, O=acme}")
    validate_update(current, listener(other, str(root / "ca.pem"), allow_dn_changes=True),
                    inter_broker=True)


def test_a_dropped_subject_alternative_name_is_refused_unless_allowed(
        pki: tuple[trustme.CA, Path, SslListener]) -> None:
    ca, root, current = pki
    narrower = key_store(ca, root / "narrow.pem", "localhost")
    with pytest.raises(InvalidConfigError) as refused:
        validate_update(current, listener(narrower, str(root / "ca.pem")), inter_broker=False)
    assert "Keystore SubjectAltNames do not match:  existing={alias=kafka, " \
           "SAN=[[2, localhost], [7, 127.0.0.1]]}, new={alias=kafka, SAN=[[2, localhost]]}" \
        in refused.value.message
    validate_update(current, listener(narrower, str(root / "ca.pem"), allow_san_changes=True),
                    inter_broker=True)


@pytest.mark.parametrize(("not_before", "not_after", "reason"), [
    (PAST, PAST + datetime.timedelta(days=1), "certificate has expired"),
    (FUTURE, FUTURE + datetime.timedelta(days=1), "certificate is not yet valid"),
])
def test_an_out_of_date_certificate_is_refused_on_the_inter_broker_listener(
        pki: tuple[trustme.CA, Path, SslListener], not_before: datetime.datetime,
        not_after: datetime.datetime, reason: str) -> None:
    ca, root, current = pki
    stale = listener(key_store(ca, root / "stale.pem", not_before=not_before,
                               not_after=not_after), str(root / "ca.pem"))
    with pytest.raises(InvalidConfigError) as refused:
        validate_update(current, stale, inter_broker=True)
    assert refused.value.message.startswith(
        "Validation of dynamic config update of SSLFactory failed: SSLCertVerificationError")
    assert reason in refused.value.message


def test_a_certificate_the_current_trust_store_does_not_trust_is_refused(
        pki: tuple[trustme.CA, Path, SslListener]) -> None:
    _, root, current = pki
    new_ca = trustme.CA(organization_name="acme")
    foreign = key_store(new_ca, root / "foreign.pem")
    # its own trust store trusts only the new CA: the old server refuses it as a client,
    # the old client (trusting only the old CA) refuses it as a server
    with pytest.raises(InvalidConfigError, match="certificate verify failed"):
        validate_update(current, listener(foreign, trust_store(root / "new-ca.pem", new_ca)),
                        inter_broker=True)
    # once the trust store holds both CAs, the same certificate is accepted
    both = listener(str(root / "v1.pem"), trust_store(root / "both.pem", new_ca, pki[0]))
    validate_update(current, both, inter_broker=True)
    validate_update(both, listener(foreign, str(root / "both.pem")), inter_broker=True)


@pytest.mark.parametrize("protocol", ["TLSv1.2", "TLSv1.3"])
def test_the_current_server_refuses_a_client_certificate_it_does_not_trust(
        tmp_path: Path, protocol: str) -> None:
    # The first handshake (current server, new client) fails on the server's side only: the
    # new stores trust both CAs, the current server (mutual TLS) only the old one. With TLS
    # 1.3 the server refuses after the client has finished its handshake.
    old_ca, new_ca = trustme.CA(organization_name="acme"), trustme.CA(organization_name="acme")
    common = {"keystore_type": "PEM", "truststore_type": "PEM", "client_auth": "required",
              "enabled_protocols": (protocol,)}
    current = ssl_listener(SslConfig(
        keystore_location=key_store(old_ca, tmp_path / "v1.pem"),
        truststore_location=trust_store(tmp_path / "ca1.pem", old_ca), **common), "SSL")
    new = ssl_listener(SslConfig(
        keystore_location=key_store(new_ca, tmp_path / "v2.pem"),
        truststore_location=trust_store(tmp_path / "both.pem", old_ca, new_ca), **common),
        "SSL")
    with pytest.raises(InvalidConfigError, match="certificate verify failed"):
        validate_update(current, new, inter_broker=True)
    validate_update(current, new, inter_broker=False)     # no handshake off the inter-broker


def test_a_trust_store_cannot_be_added_where_there_was_none(tmp_path: Path) -> None:
    ca = trustme.CA(organization_name="acme")
    store = key_store(ca, tmp_path / "v1.pem")
    current = ssl_listener(SslConfig(keystore_type="PEM", keystore_location=store), "SSL")
    with pytest.raises(InvalidConfigError, match="Cannot add SSL truststore to an existing "
                                                 "listener for which no truststore"):
        validate_update(current, listener(store, trust_store(tmp_path / "ca.pem", ca)),
                        inter_broker=False)


def test_the_reconfigurable_context_wraps_new_connections_with_the_current_stores(
        tmp_path: Path) -> None:
    old_ca, new_ca = trustme.CA(organization_name="acme"), trustme.CA(organization_name="acme")
    first = key_store(old_ca, tmp_path / "v1.pem")
    second = key_store(new_ca, tmp_path / "v2.pem")
    both = trust_store(tmp_path / "both.pem", old_ca, new_ca)
    config = SslConfig(keystore_type="PEM", keystore_location=first, truststore_type="PEM",
                       truststore_location=both, client_auth="required")
    server = server_context(config)
    client = ReconfigurableSslContext(client_context(config))
    assert client.check_hostname and client.verify_mode == ssl.CERT_REQUIRED
    _, seen, error = handshake(server, client)
    assert error is None and seen is not None
    assert x509.load_der_x509_certificate(seen).serial_number == serial_of(first)

    client.reconfigure(client_context(attrs.evolve(config, keystore_location=second,
                                                   endpoint_identification_algorithm=None)))
    assert not client.check_hostname
    _, seen, error = handshake(server, client)
    assert error is None and seen is not None
    assert x509.load_der_x509_certificate(seen).serial_number == serial_of(second)


# ====================================================================== a cluster


@attrs.define
class Rotation:
    """A running 3-broker cluster and the stores its SSL (inter-broker) listener uses now:
    ``ca`` issued ``keystore``; ``trusted`` is the trust store file."""

    cluster: kafkapy.Cluster
    root: Path
    ssl_ports: dict[int, int]
    ca: trustme.CA
    keystore: str
    trusted: str

    def alter(self, broker_id: int, **settings: str) -> None:
        """IncrementalAlterConfigs SET of ``listener.name.ssl.ssl.<key>`` (key with '_' for
        '.') on ``broker_id``, from confluent-kafka's admin client."""
        admin = AdminClient({"bootstrap.servers": self.cluster.bootstrap_servers})
        resource = ConfigResource(ResourceType.BROKER, str(broker_id), incremental_configs=[
            ConfigEntry(f"listener.name.ssl.ssl.{key.replace('_', '.')}", value,
                        incremental_operation=AlterConfigOpType.SET)
            for key, value in settings.items()])
        admin.incremental_alter_configs([resource])[resource].result(TIMEOUT)

    def serial_served(self, broker_id: int, *, client_cert: str | None = None) -> int:
        """The serial of the certificate broker ``broker_id``'s SSL listener presents to a
        client trusting ``ca`` and presenting ``client_cert`` (default: the current key
        store, which the broker's mutual TLS requires to be trusted)."""
        ctx = ssl.create_default_context(cadata=self.ca.cert_pem.bytes().decode())
        ctx.load_cert_chain(client_cert or self.keystore)
        raw = socket.create_connection((self.cluster.host, self.ssl_ports[broker_id]),
                                       timeout=TIMEOUT)
        # Every certificate here names localhost (some drop 127.0.0.1).
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            # TLS 1.3: the server checks the client certificate after the client's handshake
            # is done, so a refused one shows only when a request gets no answer.
            api_versions_roundtrip(tls)
            der = tls.getpeercert(binary_form=True)
        assert der is not None
        return x509.load_der_x509_certificate(der).serial_number


def api_versions_roundtrip(tls: ssl.SSLSocket) -> None:
    """ApiVersions v0 and its answer.

    Raises:
        ConnectionError: the broker closed the connection instead.
    """
    body = struct.pack(">hhi", 18, 0, 7) + struct.pack(">h", 4) + b"test"
    tls.sendall(struct.pack(">i", len(body)) + body)
    data = b""
    while len(data) < 8:
        chunk = tls.recv(8 - len(data))
        if not chunk:
            raise ConnectionError("closed by the broker")
        data += chunk
    assert struct.unpack(">i", data[4:8])[0] == 7       # our correlation id


@pytest.fixture(scope="module")
def rotation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rotation]:
    root = tmp_path_factory.mktemp("rotation")
    ca = trustme.CA(organization_name="acme")
    keystore = key_store(ca, root / "v1.pem")
    trusted = trust_store(root / "ca1.pem", ca)
    settings = {
        "security.inter.broker.protocol": "SSL",
        "listener.name.ssl.ssl.keystore.type": "PEM",
        "listener.name.ssl.ssl.keystore.location": keystore,
        "listener.name.ssl.ssl.truststore.type": "PEM",
        "listener.name.ssl.ssl.truststore.location": trusted,
        "listener.name.ssl.ssl.client.auth": "required",
        "zookeeper.session.timeout.ms": 6000,
    }
    cluster = kafkapy.Cluster(3, settings, data_dir=root / "cluster", timeout=TIMEOUT)
    ssl_ports = add_ssl_listeners(cluster)
    # Broker 3 takes certificates for another DN or with fewer names (static, as in Kafka).
    cluster.broker_settings[3].update({"listener.name.ssl.ssl.allow.dn.changes": "true",
                                       "listener.name.ssl.ssl.allow.san.changes": "true"})
    with cluster:
        yield Rotation(cluster, root, ssl_ports, ca, keystore, trusted)


def produce_all(cluster: kafkapy.Cluster, topic: str, n: int) -> None:
    """``n`` records with acks=all; every one acknowledged (the topic's min.insync.replicas
    decides how many replicas that takes)."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                         "message.timeout.ms": int(TIMEOUT * 1000)})
    errors: list[object] = []
    for i in range(n):
        producer.produce(topic, b"v%d" % i,
                         on_delivery=lambda err, _msg: errors.append(err) if err else None)
    assert producer.flush(TIMEOUT) == 0
    assert errors == []


def consume_count(cluster: kafkapy.Cluster, topic: str, n: int) -> int:
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                         "group.id": f"g-{uuid.uuid4().hex[:6]}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got = 0
    deadline = time.monotonic() + TIMEOUT
    while got < n and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            got += 1
    consumer.close()
    return got


def test_refused_key_store_updates_change_nothing(rotation: Rotation) -> None:
    root, ca = rotation.root, rotation.ca
    before = rotation.serial_served(1)
    refused = {
        "Keystore DistinguishedName does not match":
            key_store(ca, root / "dn.pem", common_name="somebody-else"),
        "Keystore SubjectAltNames do not match": key_store(ca, root / "san.pem", "localhost"),
        "certificate has expired":
            key_store(ca, root / "expired.pem", not_before=PAST,
                      not_after=PAST + datetime.timedelta(days=1)),
    }
    for reason, location in refused.items():
        with pytest.raises(KafkaException) as error:
            rotation.alter(1, keystore_location=location)
        assert error.value.args[0].name() == "INVALID_REQUEST"
        assert error.value.args[0].str().startswith(
            "Validation of dynamic config update of SSLFactory failed: ")
        assert reason in error.value.args[0].str()
        assert rotation.serial_served(1) == before

    # Broker 3 allows DN and SAN changes (ssl.allow.dn.changes / ssl.allow.san.changes)
    for location in (refused["Keystore DistinguishedName does not match"],
                     refused["Keystore SubjectAltNames do not match"]):
        rotation.alter(3, keystore_location=location)
        assert rotation.serial_served(3) == serial_of(location)
    # back to the cluster's certificate (more names: allowed anyway)
    rotation.alter(3, keystore_location=rotation.keystore)
    assert rotation.serial_served(3) == serial_of(rotation.keystore)


def test_rotating_to_a_new_ca_reconfigures_the_inter_broker_connections(
        rotation: Rotation) -> None:
    cluster, root = rotation.cluster, rotation.root
    topic = f"rot-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]},
                         config={"min.insync.replicas": "3"})
    for partition in range(3):
        cluster.wait_for_isr(topic, partition, 3)
    produce_all(cluster, topic, 30)

    old_ca, new_ca = rotation.ca, trustme.CA(organization_name="acme")
    old_keystore = rotation.keystore
    both = trust_store(root / "both.pem", old_ca, new_ca)
    new_keystore = key_store(new_ca, root / "v2.pem")
    only_new = trust_store(root / "ca2.pem", new_ca)
    # A key store from the new CA before the brokers trust it: refused (SslEngineValidator).
    with pytest.raises(KafkaException, match="certificate verify failed"):
        rotation.alter(1, keystore_location=new_keystore)
    # Kafka's rotation: trust both CAs, then the new key stores, then only the new CA.
    for broker_id in cluster.brokers:
        rotation.alter(broker_id, truststore_location=both)
    for broker_id in cluster.brokers:
        rotation.alter(broker_id, keystore_location=new_keystore)
    for broker_id in cluster.brokers:
        rotation.alter(broker_id, truststore_location=only_new)
    rotation.ca, rotation.keystore, rotation.trusted = new_ca, new_keystore, only_new
    for broker_id in cluster.brokers:
        assert rotation.serial_served(broker_id) == serial_of(new_keystore)
        # the old CA is revoked: a client with the old certificate is refused
        with pytest.raises((ssl.SSLError, ConnectionError)):
            rotation.serial_served(broker_id, client_cert=old_keystore)
    produce_all(cluster, topic, 30)        # the open inter-broker connections keep working

    # Bounce a broker that is not the controller: the controller's channel to it and the
    # others' fetchers from it are new connections, made by brokers never restarted, which
    # can only succeed with the new key store (the only one trusted) and the new trust store
    # (the bounced broker presents the new certificate).
    controller = cluster.wait_for_controller()
    bounced = next(b for b in (3, 2, 1) if b != controller)
    cluster.restart(bounced)
    for partition in range(3):
        assert set(cluster.wait_for_isr(topic, partition, 3)) == {1, 2, 3}
    produce_all(cluster, topic, 30)        # min.insync.replicas=3: every follower fetches
    assert consume_count(cluster, topic, 90) == 90
    for broker_id, broker in cluster.brokers.items():
        text = broker.log_path.read_text(errors="replace")
        if broker_id != bounced:
            assert "Inter-broker connections: new TLS key and trust stores" in text
