"""SSL listeners on a real broker, with real clients: confluent-kafka (librdkafka),
kafka-python, aiokafka and kcat over TLS, each with and without a client certificate; mutual
TLS with the principal the broker sees; refused handshakes (no client certificate, an
untrusted or expired one, a plaintext client, random bytes) closing that connection only;
per-listener settings.

One broker for the module, three listeners:
- PLAINTEXT;
- SSL: key store from ``listener.name.ssl.ssl.keystore.location`` only (the per-listener
  override: the PLAINTEXT listener beside it has no TLS settings at all), no client auth;
- MTLS (mapped to SSL): its own ``listener.name.mtls.*`` key store, trust store and
  ``ssl.client.auth=required``.
"""

from __future__ import annotations

import logging
import re
import socket
import ssl
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient

from kafkapy.config import BrokerConfig
from kafkapy.errors import InvalidConfigError
from kafkapy.testing import BrokerHandle
from tests.network.ssl_support import Pki, make_pki

TIMEOUT = 30.0


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def broker(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    config = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL",
        "listener.name.ssl.ssl.keystore.type": "PEM",
        "listener.name.ssl.ssl.keystore.location": pki.keystore,
        "listener.name.mtls.ssl.keystore.type": "PEM",
        "listener.name.mtls.ssl.keystore.location": pki.keystore,
        "listener.name.mtls.ssl.truststore.type": "PEM",
        "listener.name.mtls.ssl.truststore.location": pki.ca_file,
        "listener.name.mtls.ssl.client.auth": "required",
        "num.partitions": 1,
    }
    with BrokerHandle(tmp_path_factory.mktemp("data"), config) as handle:
        yield handle


def address(broker: BrokerHandle, listener: str) -> str:
    endpoint = broker.server.advertised_endpoints[listener]
    return f"{endpoint.host}:{endpoint.port}"


def rdkafka(broker: BrokerHandle, pki: Pki, listener: str = "SSL",
            client: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"bootstrap.servers": address(broker, listener),
                            "security.protocol": "ssl", "ssl.ca.location": pki.ca_file,
                            "socket.timeout.ms": 10000, "message.timeout.ms": 20000}
    if client is not None:
        cert, key = pki.client(client)
        conf.update({"ssl.certificate.location": cert, "ssl.key.location": key})
    return conf


def produce(conf: dict[str, Any], topic: str, values: list[bytes]) -> None:
    producer = Producer(conf)
    errors: list[object] = []
    for value in values:
        producer.produce(topic, value,
                         on_delivery=lambda err, _msg: errors.append(err) if err else None)
    assert producer.flush(TIMEOUT) == 0
    assert errors == []


def consume(conf: dict[str, Any], topic: str, count: int) -> list[bytes]:
    consumer = Consumer({**conf, "group.id": f"g-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                value = message.value()
                assert value is not None
                got.append(value)
    finally:
        consumer.close()
    return got


def topic() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def failed_handshakes(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.getMessage().startswith("Failed authentication with /127.0.0.1 (SSL "
                                         "handshake failed)")]


def wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_confluent_kafka_produces_and_consumes_over_ssl(broker: BrokerHandle,
                                                        pki: Pki) -> None:
    name = topic()
    values = [b"secret-%d" % i + b"x" * (i * 997) for i in range(200)]
    produce(rdkafka(broker, pki), name, values)
    assert [r.value for r in broker.read_all(name)] == values
    assert consume(rdkafka(broker, pki), name, len(values)) == values


def test_a_large_fetch_over_ssl_reads_file_slices_through_tls(broker: BrokerHandle,
                                                              pki: Pki) -> None:
    # Responses above 32 KiB of records take the chunked TLS path (no sendfile).
    name = topic()
    values = [bytes([i]) * 300_000 for i in range(8)]
    for value in values:
        broker.produce(name, value)
    assert consume(rdkafka(broker, pki), name, len(values)) == values


def test_mutual_tls_principal_is_the_certificate_subject(
        broker: BrokerHandle, pki: Pki, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="kafkapy.server.kafka_apis")
    name = topic()
    produce(rdkafka(broker, pki, "MTLS", client="alice"), name, [b"from alice"])
    assert [r.value for r in broker.read_all(name)] == [b"from alice"]
    completed = [r.getMessage() for r in caplog.records
                 if r.getMessage().startswith("Completed Produce")]
    assert completed
    assert all("(principal User:CN=alice,OU=eng,O=acme, SSL)" in m for m in completed)
    # ... and on the listener without client auth, the anonymous principal
    caplog.clear()
    produce(rdkafka(broker, pki), name, [b"anonymous"])
    completed = [r.getMessage() for r in caplog.records
                 if r.getMessage().startswith("Completed Produce")]
    assert completed
    assert all("(principal User:ANONYMOUS, SSL)" in m for m in completed)


@pytest.mark.parametrize("client", [None, "mallory", "expired"],
                         ids=["no-certificate", "untrusted", "expired"])
def test_required_client_auth_refuses(broker: BrokerHandle, pki: Pki,
                                      caplog: pytest.LogCaptureFixture,
                                      client: str | None) -> None:
    caplog.set_level(logging.INFO, logger="kafkapy.network.socket_server")
    admin = AdminClient({**rdkafka(broker, pki, "MTLS", client=client)})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=5)
    wait_for(lambda: failed_handshakes(caplog), "the broker logs the failed handshake")
    # the broker keeps serving
    name = topic()
    produce(rdkafka(broker, pki, "MTLS", client="alice"), name, [b"still here"])
    assert [r.value for r in broker.read_all(name)] == [b"still here"]


@pytest.mark.parametrize("garbage", [
    # an ApiVersions v0 request in plaintext
    b"\x00\x00\x00\x0e\x00\x12\x00\x00\x00\x00\x00\x01\x00\x04test",
    bytes(range(256)) * 4,
], ids=["plaintext-kafka-client", "random-bytes"])
def test_non_tls_bytes_on_the_ssl_port_close_that_connection_only(
        broker: BrokerHandle, pki: Pki, caplog: pytest.LogCaptureFixture,
        garbage: bytes) -> None:
    caplog.set_level(logging.INFO, logger="kafkapy.network.socket_server")
    host, port = address(broker, "SSL").rsplit(":", 1)
    # An SSL client connected before, and used after, the bad one.
    name = topic()
    producer = Producer(rdkafka(broker, pki))
    producer.produce(name, b"before")
    assert producer.flush(TIMEOUT) == 0
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as raw:
        raw.sendall(garbage)
        data = b""
        try:
            while chunk := raw.recv(65536):    # until the broker closes it
                data += chunk
        except ConnectionResetError:
            pass
        assert not data.startswith(b"\x00\x00")   # never a Kafka response
    wait_for(lambda: failed_handshakes(caplog), "the broker logs the failed handshake")
    assert len(failed_handshakes(caplog)) == 1
    producer.produce(name, b"after")
    assert producer.flush(TIMEOUT) == 0
    assert [r.value for r in broker.read_all(name)] == [b"before", b"after"]


def test_the_plaintext_listener_beside_serves_plaintext(broker: BrokerHandle,
                                                         pki: Pki) -> None:
    name = topic()
    produce({"bootstrap.servers": address(broker, "PLAINTEXT")}, name, [b"plain"])
    assert consume(rdkafka(broker, pki), name, 1) == [b"plain"]
    # a TLS client on the plaintext port gets no handshake
    admin = AdminClient({**rdkafka(broker, pki), "bootstrap.servers":
                         address(broker, "PLAINTEXT")})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=3)
    # ... and that connection alone is closed: the listener goes on serving plaintext clients
    produce({"bootstrap.servers": address(broker, "PLAINTEXT")}, name, [b"after"])
    assert [r.value for r in broker.read_all(name)] == [b"plain", b"after"]


# Each client over TLS without a client certificate (listener SSL) and with one (MTLS, where
# ssl.client.auth=required refuses a client without).
LISTENERS = pytest.mark.parametrize("listener", ["SSL", "MTLS"], ids=["tls", "mtls"])


@LISTENERS
def test_kafka_python_over_ssl(broker: BrokerHandle, pki: Pki, listener: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    name = topic()
    common: dict[str, Any] = {"bootstrap_servers": address(broker, listener),
                              "security_protocol": "SSL", "ssl_cafile": pki.ca_file}
    if listener == "MTLS":
        common.update(ssl_certfile=pki.client("alice")[0], ssl_keyfile=pki.client("alice")[1])
    producer = KafkaProducer(**common, request_timeout_ms=20000)
    for i in range(10):
        producer.send(name, b"kp-%d" % i)
    producer.flush(timeout=TIMEOUT)
    producer.close()
    consumer = KafkaConsumer(name, **common, auto_offset_reset="earliest",
                             consumer_timeout_ms=int(TIMEOUT * 1000))
    got = []
    for message in consumer:
        got.append(message.value)
        if len(got) == 10:
            break
    consumer.close()
    assert got == [b"kp-%d" % i for i in range(10)]


@LISTENERS
def test_kcat_over_ssl(broker: BrokerHandle, pki: Pki, listener: str) -> None:
    name = topic()
    base = ["kcat", "-b", address(broker, listener), "-X", "security.protocol=ssl",
            "-X", f"ssl.ca.location={pki.ca_file}", "-t", name]
    if listener == "MTLS":
        cert, key = pki.client("alice")
        base[1:1] = ["-X", f"ssl.certificate.location={cert}", "-X", f"ssl.key.location={key}"]
    subprocess.run([*base, "-P"], input=b"one\ntwo\nthree\n", check=True, timeout=TIMEOUT)
    out = subprocess.run([*base, "-C", "-o", "beginning", "-e", "-q"], capture_output=True,
                         check=True, timeout=TIMEOUT)
    assert out.stdout.split() == [b"one", b"two", b"three"]


def test_config_accepts_ssl_and_refuses_what_kafkapy_does_not_serve(pki: Pki) -> None:
    config = BrokerConfig.from_properties({
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        "ssl.keystore.location": "/top", "listener.name.ssl.ssl.keystore.location": "/ssl",
        "listener.name.ssl.ssl.enabled.protocols": "TLSv1.3"})
    assert config.listener_setting("SSL", "ssl.keystore.location") == "/ssl"
    assert config.listener_setting("ssl", "ssl.enabled.protocols") == ["TLSv1.3"]
    assert config.listener_setting("PLAINTEXT", "ssl.keystore.location") == "/top"
    assert config.listener_setting("PLAINTEXT", "ssl.enabled.protocols") == \
        ["TLSv1.2", "TLSv1.3"]
    assert config.unknown == {}          # the overrides are known settings
    assert BrokerConfig.from_properties(
        {"listeners": "SASL_SSL://127.0.0.1:0"}).listener_protocol("SASL_SSL") == "SASL_SSL"
    with pytest.raises(InvalidConfigError, match=re.escape("listener.name.ssl.ssl.client.auth")):
        BrokerConfig.from_properties({"listeners": "SSL://127.0.0.1:0",
                                      "listener.name.ssl.ssl.client.auth": "maybe"})
    with pytest.raises(InvalidConfigError, match="should not be set at the same time"):
        BrokerConfig.from_properties({"listeners": "SSL://127.0.0.1:0",
                                      "inter.broker.listener.name": "SSL",
                                      "security.inter.broker.protocol": "SSL"})
    chosen = BrokerConfig.from_properties({
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        "security.inter.broker.protocol": "SSL"})
    assert chosen.inter_broker_listener_name == "SSL"
    entry, = chosen.describe(["ssl.keystore.password"])
    assert entry.sensitive and entry.value is None
    # the per-listener overrides are described as Kafka describes them
    override, = config.describe(["listener.name.ssl.ssl.keystore.location"])
    assert (override.value, override.source.name) == ("/ssl", "STATIC_BROKER_CONFIG")
    assert [(s.name, s.value) for s in override.synonyms] == [
        ("listener.name.ssl.ssl.keystore.location", "/ssl"), ("ssl.keystore.location", "/top")]
    assert not override.read_only       # a key store may change while running


def test_a_broker_with_an_unreadable_key_store_does_not_start(tmp_path: Path) -> None:
    handle = BrokerHandle(tmp_path, {"listeners": "SSL://127.0.0.1:0",
                                     "ssl.keystore.type": "PEM",
                                     "ssl.keystore.location": str(tmp_path / "missing.pem")})
    with pytest.raises(InvalidConfigError, match=re.escape("missing.pem")):
        handle.start()


def test_python_ssl_client_sees_tls13_and_the_broker_certificate(broker: BrokerHandle,
                                                                 pki: Pki) -> None:
    host, port = address(broker, "SSL").rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=pki.ca_file)
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as raw, \
            ctx.wrap_socket(raw, server_hostname="localhost") as tls:
        assert tls.version() == "TLSv1.3"
        peer = tls.getpeercert()
        assert peer is not None and ("commonName", "broker") in \
            [item for rdn in peer["subject"] for item in rdn]


@LISTENERS
def test_aiokafka_over_ssl(broker: BrokerHandle, pki: Pki, listener: str) -> None:
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.helpers import create_ssl_context

    name = topic()
    if listener == "MTLS":
        cert, key = pki.client("alice")
        context = create_ssl_context(cafile=pki.ca_file, certfile=cert, keyfile=key)
    else:
        context = create_ssl_context(cafile=pki.ca_file)

    async def main() -> list[bytes | None]:
        common = {"bootstrap_servers": address(broker, listener), "security_protocol": "SSL",
                  "ssl_context": context}
        producer = AIOKafkaProducer(**common)
        await producer.start()
        try:
            for i in range(5):
                await producer.send_and_wait(name, b"aio-%d" % i)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(name, **common, auto_offset_reset="earliest")
        await consumer.start()
        got: list[bytes | None] = []
        try:
            async with asyncio.timeout(TIMEOUT):
                async for message in consumer:
                    got.append(message.value)
                    if len(got) == 5:
                        break
        finally:
            await consumer.stop()
        return got

    assert asyncio.run(main()) == [b"aio-%d" % i for i in range(5)]
