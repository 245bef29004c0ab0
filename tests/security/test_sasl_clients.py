"""SASL_PLAINTEXT with real clients: confluent-kafka and kafka-python produce and consume
with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512; a wrong password is refused with
SASL_AUTHENTICATION_FAILED while the broker keeps serving the others; the principal reaches
the handlers."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import KafkaError as AioKafkaError
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer, KafkaProducer

from kafkapy.protocol import ApiKey
from kafkapy.server.request_context import RequestContext
from kafkapy.testing import BrokerHandle
from tests.security.sasl_support import (
    SCRAM_PASSWORDS,
    confluent_config,
    create_scram_users,
    endpoint,
    sasl_broker,
)

CREDENTIALS = [("PLAIN", "alice", "alice-secret"),
               ("SCRAM-SHA-256", "bob", SCRAM_PASSWORDS["bob"]),
               ("SCRAM-SHA-512", "carol", SCRAM_PASSWORDS["carol"])]


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    handle = sasl_broker(Path(tmp_path_factory.mktemp("sasl")))
    try:
        create_scram_users(handle)
        yield handle
    finally:
        handle.stop()


def _consume_confluent(config: dict[str, object], topic: str, count: int) -> list[bytes]:
    consumer = Consumer({**config, "group.id": f"g-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        values: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(values) < count and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            values.append(msg.value())
        return values
    finally:
        consumer.close()


@pytest.mark.parametrize(("mechanism", "user", "password"), CREDENTIALS)
def test_confluent_produce_consume(broker: BrokerHandle, mechanism: str, user: str,
                                   password: str) -> None:
    topic = f"confluent-{mechanism.lower()}"
    config = confluent_config(broker, mechanism, user, password)
    producer = Producer(config)
    for i in range(5):
        producer.produce(topic, f"{user}-{i}".encode())
    assert producer.flush(60) == 0
    assert _consume_confluent(config, topic, 5) == [f"{user}-{i}".encode() for i in range(5)]


@pytest.mark.parametrize(("mechanism", "user", "password"), CREDENTIALS)
def test_kafka_python_produce_consume(broker: BrokerHandle, mechanism: str, user: str,
                                      password: str) -> None:
    topic = f"kafka-python-{mechanism.lower()}"
    config = {"bootstrap_servers": endpoint(broker, "SASL_PLAINTEXT"),
              "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": mechanism,
              "sasl_plain_username": user, "sasl_plain_password": password}
    producer = KafkaProducer(**config)
    try:
        for i in range(3):
            producer.send(topic, f"kp-{user}-{i}".encode()).get(timeout=60)
    finally:
        producer.close(timeout=10)
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=20000,
                             group_id=f"g-{uuid.uuid4().hex}", **config)
    try:
        values = [m.value for _, m in zip(range(3), consumer, strict=False)]
    finally:
        consumer.close()
    assert values == [f"kp-{user}-{i}".encode() for i in range(3)]


@pytest.mark.parametrize(("mechanism", "user"), [("PLAIN", "alice"),
                                                 ("SCRAM-SHA-256", "bob"),
                                                 ("SCRAM-SHA-512", "nobody")])
def test_wrong_password_confluent(broker: BrokerHandle, mechanism: str, user: str) -> None:
    errors: list[KafkaError] = []
    config = {**confluent_config(broker, mechanism, user, "wrong"),
              "error_cb": errors.append}
    client = AdminClient(config)
    with pytest.raises(KafkaException):
        client.list_topics(timeout=5)
    deadline = time.monotonic() + 30
    while not any(e.code() == KafkaError._AUTHENTICATION for e in errors) \
            and time.monotonic() < deadline:
        client.poll(0.5)
    auth = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
    assert auth, errors
    # librdkafka quotes the broker's error message
    expected = ("Invalid username or password" if mechanism == "PLAIN" else
                f"invalid credentials with SASL mechanism {mechanism}")
    assert expected in auth[0].str()
    # the broker still serves a client with the right password
    good = AdminClient(confluent_config(broker, *CREDENTIALS[0]))
    assert good.list_topics(timeout=30).brokers


def test_wrong_password_aiokafka(broker: BrokerHandle, caplog: pytest.LogCaptureFixture
                                 ) -> None:
    """aiokafka sees error 58 with Kafka's message and gives up its bootstrap. (Not
    kafka-python here: it leaks the sockets of a failed bootstrap, a ResourceWarning that
    pytest turns into another test's failure.)"""
    async def start() -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=endpoint(broker, "SASL_PLAINTEXT"),
            security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-256",
            sasl_plain_username="bob", sasl_plain_password="wrong")
        try:
            await producer.start()
        finally:
            await producer.stop()

    with pytest.raises(AioKafkaError):
        asyncio.run(start())
    assert "[Error 58] SaslAuthenticationFailed: Authentication failed during " \
           "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256" \
           in caplog.text


def test_principal_reaches_the_handlers(broker: BrokerHandle) -> None:
    """The connection's principal is User:<name> in every request after authentication,
    User:ANONYMOUS on the PLAINTEXT listener."""
    seen: list[tuple[str, str]] = []
    apis = broker.server.apis
    original = apis.handlers
    metadata = original[ApiKey.METADATA]

    async def spy(context: RequestContext[Any]) -> object:
        seen.append((context.principal, context.request.security_protocol))
        return await metadata(context)

    broker.call(setattr, apis, "_handlers", {**original, ApiKey.METADATA: spy})
    try:
        sasl = AdminClient(confluent_config(broker, "SCRAM-SHA-512", "carol",
                                            SCRAM_PASSWORDS["carol"]))
        assert sasl.list_topics(timeout=30).brokers
        plain = AdminClient({"bootstrap.servers": endpoint(broker, "PLAINTEXT")})
        assert plain.list_topics(timeout=30).brokers
    finally:
        broker.call(setattr, apis, "_handlers", original)
    assert ("User:carol", "SASL_PLAINTEXT") in seen
    assert ("User:ANONYMOUS", "PLAINTEXT") in seen


def test_confluent_oauthbearer_unsecured_jwt(broker: BrokerHandle) -> None:
    """librdkafka's unsecured JWT (alg none) against Kafka's unsecured validator; the
    listener requires the scope "kafka"."""
    topic = "confluent-oauthbearer"
    config = {"bootstrap.servers": endpoint(broker, "SASL_PLAINTEXT"),
              "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
              "enable.sasl.oauthbearer.unsecure.jwt": True,
              "sasl.oauthbearer.config": "principal=dana scope=kafka"}
    producer = Producer(config)
    producer.produce(topic, b"token")
    assert producer.flush(60) == 0
    assert _consume_confluent(config, topic, 1) == [b"token"]


def test_confluent_oauthbearer_missing_scope(broker: BrokerHandle) -> None:
    errors: list[KafkaError] = []
    client = AdminClient({"bootstrap.servers": endpoint(broker, "SASL_PLAINTEXT"),
                          "security.protocol": "SASL_PLAINTEXT",
                          "sasl.mechanism": "OAUTHBEARER",
                          "enable.sasl.oauthbearer.unsecure.jwt": True,
                          "sasl.oauthbearer.config": "principal=dana scope=other",
                          "error_cb": errors.append})
    with pytest.raises(KafkaException):
        client.list_topics(timeout=5)
    deadline = time.monotonic() + 30
    while not any(e.code() == KafkaError._AUTHENTICATION for e in errors) \
            and time.monotonic() < deadline:
        client.poll(0.5)
    auth = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
    assert auth, errors
    assert "insufficient_scope" in auth[0].str()


@pytest.mark.parametrize(("mechanism", "user", "password"), CREDENTIALS)
def test_kcat_produce_consume(broker: BrokerHandle, mechanism: str, user: str,
                              password: str) -> None:
    kcat = shutil.which("kcat")
    assert kcat is not None, "kcat is not installed: `apt-get install -y kcat`"
    topic = f"kcat-sasl-{mechanism.lower()}"
    sasl = ["-b", endpoint(broker, "SASL_PLAINTEXT"), "-X", "security.protocol=SASL_PLAINTEXT",
            "-X", f"sasl.mechanisms={mechanism}", "-X", f"sasl.username={user}",
            "-X", f"sasl.password={password}"]

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([kcat, *sasl, *args], input=stdin, capture_output=True,
                              text=True, timeout=60, check=False)

    produced = run("-P", "-t", topic, stdin="one\ntwo\n")
    assert produced.returncode == 0, produced.stderr
    consumed = run("-C", "-t", topic, "-o", "beginning", "-e", "-q")
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.split() == ["one", "two"]
    wrong = subprocess.run([kcat, *sasl[:-1], "sasl.password=wrong", "-L", "-m", "5"],
                           capture_output=True, text=True, timeout=60, check=False)
    assert wrong.returncode != 0
    # Kafka's messages: PlainServerCallbackHandler's, and ScramSaslServer's.
    assert ("Authentication failed: Invalid username or password" if mechanism == "PLAIN" else
            f"invalid credentials with SASL mechanism {mechanism}") in wrong.stderr


@pytest.mark.parametrize(("mechanism", "user", "password"), CREDENTIALS)
def test_aiokafka_produce_consume(broker: BrokerHandle, mechanism: str, user: str,
                                  password: str) -> None:
    topic = f"aiokafka-sasl-{mechanism.lower()}"
    config: dict[str, Any] = {
        "bootstrap_servers": endpoint(broker, "SASL_PLAINTEXT"),
        "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": mechanism,
        "sasl_plain_username": user, "sasl_plain_password": password}

    async def run() -> list[bytes]:
        producer = AIOKafkaProducer(**config)
        await producer.start()
        try:
            for i in range(3):
                await producer.send_and_wait(topic, f"a{i}".encode())
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, auto_offset_reset="earliest",
                                    group_id=f"g-{uuid.uuid4().hex}", **config)
        await consumer.start()
        try:
            values: list[bytes] = []
            async with asyncio.timeout(60):
                async for message in consumer:
                    values.append(message.value)
                    if len(values) == 3:
                        break
            return values
        finally:
            await consumer.stop()

    assert asyncio.run(run()) == [b"a0", b"a1", b"a2"]
