"""SASL_SSL listeners: the TLS transport of an SSL listener with the SASL authenticator on top,
with real clients. confluent-kafka, kafka-python and aiokafka produce and consume with PLAIN,
SCRAM-SHA-256 and SCRAM-SHA-512 over TLS (trustme CA), kcat with SCRAM-SHA-512; a wrong
password fails as on SASL_PLAINTEXT while the broker keeps serving; the principal is the SASL
user even when a client certificate is presented too (Kafka's DefaultKafkaPrincipalBuilder
takes the SASL authorization id); the broker-wide ``ssl.client.auth`` does not apply to
SASL_SSL listeners, a listener-prefixed one does (Kafka's ChannelBuilders, KIP-684).

One broker for the module, three listeners:
- PLAINTEXT (administration: SCRAM users are created through it);
- SASL_SSL: PLAIN and both SCRAMs, with the broker-wide ``ssl.client.auth=required``
  (ignored there);
- MTLS (mapped to SASL_SSL): ``listener.name.mtls.ssl.client.auth=required``.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import ssl
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer, KafkaProducer

from kafkapy.protocol import ApiKey
from kafkapy.server.request_context import RequestContext
from kafkapy.testing import BrokerHandle
from tests.network.ssl_support import Pki, make_pki
from tests.security.sasl_support import PLAIN_JAAS, SCRAM_PASSWORDS, create_scram_users, endpoint

TIMEOUT = 30.0
CREDENTIALS = [("PLAIN", "alice", "alice-secret"),
               ("SCRAM-SHA-256", "bob", SCRAM_PASSWORDS["bob"]),
               ("SCRAM-SHA-512", "carol", SCRAM_PASSWORDS["carol"])]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def broker(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    config: dict[str, object] = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SASL_SSL",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": pki.keystore,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": pki.ca_file,
        "ssl.client.auth": "required",              # for SSL listeners only
        "listener.name.mtls.ssl.client.auth": "required",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "sasl.jaas.config": PLAIN_JAAS,
        "offsets.topic.num.partitions": 1, "num.partitions": 1,
    }
    handle = BrokerHandle(Path(tmp_path_factory.mktemp("data")), config).start()
    try:
        create_scram_users(handle)
        yield handle
    finally:
        handle.stop()


def rdkafka(broker: BrokerHandle, pki: Pki, mechanism: str, user: str, password: str,
            listener: str = "SASL_SSL", cert: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {
        "bootstrap.servers": endpoint(broker, listener), "security.protocol": "SASL_SSL",
        "ssl.ca.location": pki.ca_file, "sasl.mechanism": mechanism,
        "sasl.username": user, "sasl.password": password,
        "socket.timeout.ms": 10000, "message.timeout.ms": 20000}
    if cert is not None:
        cert_file, key_file = pki.client(cert)
        conf.update({"ssl.certificate.location": cert_file, "ssl.key.location": key_file})
    return conf


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


@pytest.mark.parametrize(("mechanism", "user", "password"), CREDENTIALS)
def test_confluent_kafka_produces_and_consumes_over_sasl_ssl(
        broker: BrokerHandle, pki: Pki, mechanism: str, user: str, password: str) -> None:
    topic = f"confluent-{mechanism.lower()}-{uuid.uuid4().hex[:6]}"
    # No client certificate: the broker-wide ssl.client.auth=required is not this listener's.
    conf = rdkafka(broker, pki, mechanism, user, password)
    values = [f"{user}-{i}".encode() + b"x" * (i * 4099) for i in range(40)]
    producer = Producer(conf)
    for value in values:
        producer.produce(topic, value)
    assert producer.flush(TIMEOUT) == 0
    assert [r.value for r in broker.read_all(topic)] == values
    assert consume(conf, topic, len(values)) == values


@pytest.mark.parametrize(("mechanism", "user", "password"), CREDENTIALS)
def test_kafka_python_produces_and_consumes_over_sasl_ssl(
        broker: BrokerHandle, pki: Pki, mechanism: str, user: str, password: str) -> None:
    topic = f"kafka-python-{mechanism.lower()}-{uuid.uuid4().hex[:6]}"
    config: dict[str, Any] = {
        "bootstrap_servers": endpoint(broker, "SASL_SSL"), "security_protocol": "SASL_SSL",
        "ssl_cafile": pki.ca_file, "sasl_mechanism": mechanism,
        "sasl_plain_username": user, "sasl_plain_password": password}
    producer = KafkaProducer(**config)
    try:
        for i in range(3):
            producer.send(topic, f"kp-{user}-{i}".encode()).get(timeout=TIMEOUT)
    finally:
        producer.close(timeout=10)
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=20000,
                             group_id=f"g-{uuid.uuid4().hex}", **config)
    try:
        values = [m.value for _, m in zip(range(3), consumer, strict=False)]
    finally:
        consumer.close()
    assert values == [f"kp-{user}-{i}".encode() for i in range(3)]


@pytest.mark.parametrize(("mechanism", "user", "password"), CREDENTIALS)
def test_aiokafka_produces_and_consumes_over_sasl_ssl(
        broker: BrokerHandle, pki: Pki, mechanism: str, user: str, password: str) -> None:
    topic = f"aiokafka-{mechanism.lower()}-{uuid.uuid4().hex[:6]}"
    values = [f"aio-{user}-{i}".encode() for i in range(3)]

    async def run() -> list[bytes]:
        config: dict[str, Any] = {
            "bootstrap_servers": endpoint(broker, "SASL_SSL"), "security_protocol": "SASL_SSL",
            "ssl_context": ssl.create_default_context(cafile=pki.ca_file),
            "sasl_mechanism": mechanism, "sasl_plain_username": user,
            "sasl_plain_password": password}
        producer = AIOKafkaProducer(**config)
        await producer.start()
        try:
            for value in values:
                await producer.send_and_wait(topic, value)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, auto_offset_reset="earliest",
                                    group_id=f"g-{uuid.uuid4().hex}", **config)
        await consumer.start()
        got: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT
        try:
            while len(got) < len(values) and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=500)
                got += [m.value for messages in batches.values() for m in messages
                        if m.value is not None]
        finally:
            await consumer.stop()
        return got

    assert asyncio.run(run()) == values


@pytest.mark.parametrize(("mechanism", "user"), [("PLAIN", "alice"), ("SCRAM-SHA-512", "carol")])
def test_wrong_password_over_sasl_ssl(broker: BrokerHandle, pki: Pki, mechanism: str,
                                      user: str) -> None:
    errors: list[KafkaError] = []
    client = AdminClient({**rdkafka(broker, pki, mechanism, user, "wrong"),
                          "error_cb": errors.append})
    with pytest.raises(KafkaException):
        client.list_topics(timeout=5)
    deadline = time.monotonic() + TIMEOUT
    while not any(e.code() == KafkaError._AUTHENTICATION for e in errors) \
            and time.monotonic() < deadline:
        client.poll(0.5)
    auth = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
    assert auth, errors
    expected = ("Invalid username or password" if mechanism == "PLAIN" else
                f"invalid credentials with SASL mechanism {mechanism}")
    assert expected in auth[0].str()
    # the broker still serves a client with the right password
    good = AdminClient(rdkafka(broker, pki, *CREDENTIALS[1]))
    assert good.list_topics(timeout=TIMEOUT).brokers


def test_the_principal_is_the_sasl_user_not_the_certificate(broker: BrokerHandle,
                                                            pki: Pki) -> None:
    seen: list[tuple[str, str, str]] = []
    apis = broker.server.apis
    original = apis.handlers
    metadata = original[ApiKey.METADATA]

    async def spy(context: RequestContext[Any]) -> object:
        seen.append((context.request.listener_name, context.principal,
                     context.security_protocol))
        return await metadata(context)

    broker.call(setattr, apis, "_handlers", {**original, ApiKey.METADATA: spy})
    try:
        # alice's certificate (User:CN=alice,... on an SSL listener), SASL user admin
        mtls = AdminClient(rdkafka(broker, pki, "PLAIN", "admin", "admin-secret",
                                   listener="MTLS", cert="alice"))
        assert mtls.list_topics(timeout=TIMEOUT).brokers
        plain = AdminClient(rdkafka(broker, pki, "SCRAM-SHA-512", "carol",
                                    SCRAM_PASSWORDS["carol"]))
        assert plain.list_topics(timeout=TIMEOUT).brokers
    finally:
        broker.call(setattr, apis, "_handlers", original)
    assert ("MTLS", "User:admin", "SASL_SSL") in seen
    assert ("SASL_SSL", "User:carol", "SASL_SSL") in seen
    assert not any("CN=" in principal for _, principal, _ in seen)


def test_listener_prefixed_client_auth_applies_to_sasl_ssl(
        broker: BrokerHandle, pki: Pki, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kafkapy.network.socket_server")
    # MTLS requires a certificate: right SASL credentials alone do not get in.
    client = AdminClient(rdkafka(broker, pki, "PLAIN", "admin", "admin-secret",
                                 listener="MTLS"))
    with pytest.raises(KafkaException):
        client.list_topics(timeout=5)
    deadline = time.monotonic() + TIMEOUT
    while "(SSL handshake failed) on listener MTLS" not in caplog.text:
        assert time.monotonic() < deadline, "the broker logs the failed handshake"
        time.sleep(0.05)


@pytest.mark.parametrize(("mechanism", "user", "password"), CREDENTIALS)
def test_kcat_over_sasl_ssl(broker: BrokerHandle, pki: Pki, mechanism: str, user: str,
                            password: str) -> None:
    kcat = shutil.which("kcat")
    assert kcat is not None, "kcat is not installed: `apt-get install -y kcat`"
    topic = f"kcat-{uuid.uuid4().hex[:6]}"
    common = ["-b", endpoint(broker, "SASL_SSL"), "-X", "security.protocol=SASL_SSL",
              "-X", f"ssl.ca.location={pki.ca_file}", "-X", f"sasl.mechanisms={mechanism}",
              "-X", f"sasl.username={user}"]

    def run(password: str, *args: str, stdin: str | None = None
            ) -> subprocess.CompletedProcess[str]:
        return subprocess.run([kcat, *common, "-X", f"sasl.password={password}", *args],
                              input=stdin, capture_output=True, text=True, timeout=60,
                              check=False)

    produced = run(password, "-P", "-t", topic, stdin="one\ntwo\n")
    assert produced.returncode == 0, produced.stderr
    consumed = run(password, "-C", "-t", topic, "-o", "beginning", "-e", "-q")
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.split() == ["one", "two"]
    wrong = run("wrong", "-L", "-m", "5")
    assert wrong.returncode != 0
    assert ("Authentication failed: Invalid username or password" if mechanism == "PLAIN" else
            f"invalid credentials with SASL mechanism {mechanism}") in wrong.stderr
