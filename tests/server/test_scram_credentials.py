"""Describe/AlterUserScramCredentials (kafkapy/server/handlers/scram.py) on a single broker:
confluent-kafka's AdminClient creates, describes and deletes SCRAM users; the credentials
authenticate at once, survive a restart (the log directory's metadata) and are stored in
Kafka's form; Kafka's per-user errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterUserScramCredentialsRequest,
    DescribeUserScramCredentialsRequest,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
    UserName,
)
from kafkapy.security.scram import ScramCredential
from kafkapy.security.scram import ScramMechanism as ScramMech
from kafkapy.server.metadata_store import METADATA_FILE
from kafkapy.testing import BrokerHandle
from tests.security.sasl_support import Peer, admin, confluent_config, sasl_broker

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerHandle]:
    handle = sasl_broker(tmp_path)
    try:
        yield handle
    finally:
        handle.stop()


def _alter(client: AdminClient, alterations: list) -> dict[str, BaseException | None]:  # type: ignore[type-arg]
    out: dict[str, BaseException | None] = {}
    for user, future in client.alter_user_scram_credentials(alterations,
                                                            request_timeout=30).items():
        try:
            future.result(timeout=30)
            out[user] = None
        except KafkaException as e:
            out[user] = e
    return out


def _describe(client: AdminClient, users: list[str] | None = None) -> dict[str, object]:
    if users is None:
        return dict(client.describe_user_scram_credentials(request_timeout=30)
                    .result(timeout=30))
    out: dict[str, object] = {}
    for user, future in client.describe_user_scram_credentials(users, request_timeout=30
                                                                ).items():
        try:
            out[user] = future.result(timeout=30)
        except KafkaException as e:
            out[user] = e
    return out


def _mechanisms(description: object) -> dict[ScramMechanism, int]:
    infos = description.scram_credential_infos  # type: ignore[attr-defined]
    return {info.mechanism: info.iterations for info in infos}


def _can_authenticate(broker: BrokerHandle, mechanism: str, user: str, password: str) -> bool:
    client = AdminClient({**confluent_config(broker, mechanism, user, password),
                          "error_cb": lambda _e: None})
    try:
        return bool(client.list_topics(timeout=8).brokers)
    except KafkaException:
        return False


def test_create_describe_authenticate_delete_restart(broker: BrokerHandle) -> None:
    client = admin(broker)
    assert _alter(client, [
        UserScramCredentialUpsertion("dave", ScramCredentialInfo(SHA256, 4096), b"dave-pw"),
        UserScramCredentialUpsertion("dave", ScramCredentialInfo(SHA512, 8192), b"dave-pw"),
        UserScramCredentialUpsertion("erin", ScramCredentialInfo(SHA512, 4096), b"erin-pw"),
    ]) == {"dave": None, "erin": None}
    described = _describe(client)
    assert {user: _mechanisms(d) for user, d in described.items()} == {
        "dave": {SHA256: 4096, SHA512: 8192}, "erin": {SHA512: 4096}}
    assert _can_authenticate(broker, "SCRAM-SHA-512", "dave", "dave-pw")
    assert _can_authenticate(broker, "SCRAM-SHA-256", "dave", "dave-pw")
    assert not _can_authenticate(broker, "SCRAM-SHA-256", "erin", "erin-pw")

    # stored as Kafka stores a user's config: the mechanism name -> credential string
    doc = json.loads((broker.data_dir / METADATA_FILE).read_text())
    stored = doc["user_configs"]["dave"]
    assert set(stored) == {"SCRAM-SHA-256", "SCRAM-SHA-512"}
    assert ScramCredential.from_kafka_string(stored["SCRAM-SHA-512"]).iterations == 8192

    assert _alter(client, [UserScramCredentialDeletion("dave", SHA256)]) == {"dave": None}
    assert not _can_authenticate(broker, "SCRAM-SHA-256", "dave", "dave-pw")

    broker.restart()
    client = admin(broker)
    assert {user: _mechanisms(d) for user, d in _describe(client).items()} == {
        "dave": {SHA512: 8192}, "erin": {SHA512: 4096}}
    assert _can_authenticate(broker, "SCRAM-SHA-512", "erin", "erin-pw")
    assert _alter(client, [UserScramCredentialDeletion("erin", SHA512)]) == {"erin": None}
    assert set(_describe(client)) == {"dave"}


def test_errors(broker: BrokerHandle) -> None:
    client = admin(broker)
    results = _alter(client, [
        UserScramCredentialUpsertion("few", ScramCredentialInfo(SHA256, 1000), b"pw"),
        UserScramCredentialUpsertion("many", ScramCredentialInfo(SHA256, 20000), b"pw"),
        UserScramCredentialDeletion("ghost", SHA512),
        UserScramCredentialUpsertion("ok", ScramCredentialInfo(SHA256, 4096), b"pw"),
    ])
    assert results["ok"] is None
    messages = {user: str(e) for user, e in results.items() if e is not None}
    assert "Too few iterations" in messages["few"]
    assert "Too many iterations" in messages["many"]
    assert "Attempt to delete a user credential that does not exist" in messages["ghost"]
    codes = {user: e.args[0].name() for user, e in results.items() if e is not None}
    assert codes == {"few": "UNACCEPTABLE_CREDENTIAL", "many": "UNACCEPTABLE_CREDENTIAL",
                     "ghost": "RESOURCE_NOT_FOUND"}
    described = _describe(client, ["ok", "ghost"])
    assert _mechanisms(described["ok"]) == {SHA256: 4096}
    assert isinstance(described["ghost"], KafkaException)
    assert described["ghost"].args[0].name() == "RESOURCE_NOT_FOUND"
    assert "Attempt to describe a user credential that does not exist: ghost" in \
        str(described["ghost"])


def test_error_precedence_scripted(broker: BrokerHandle) -> None:
    """What admin clients refuse to send themselves (duplicates, unknown mechanisms, empty
    names), sent raw: Kafka's errors, per user, in Kafka's order of checks."""
    peer = Peer(broker, "PLAINTEXT")
    try:
        ok = peer.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0,
                          AlterUserScramCredentialsRequest(upsertions=[_upsert("kept", 1)]))
        assert [(r.user_name, r.error_code) for r in ok.results] == [("kept", 0)]
        response = peer.request(
            ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, AlterUserScramCredentialsRequest(
                deletions=[ScramCredentialDeletion(name="twice", mechanism=1),
                           ScramCredentialDeletion(name="unknown", mechanism=7),
                           ScramCredentialDeletion(name="kept", mechanism=2)],
                upsertions=[_upsert("twice", 1), _upsert("", 1),
                            # also a duplicate pair, but the bad iteration count wins
                            _upsert("few", 1, 100), _upsert("few", 1, 100)]))
        assert {r.user_name: (r.error_code, r.error_message) for r in response.results} == {
            "": (93, "Username must not be empty"),
            "unknown": (33, "Unknown SCRAM mechanism"),
            "few": (93, "Too few iterations"),
            "twice": (92, "A user credential cannot be altered twice in the same request"),
            "kept": (91, "Attempt to delete a user credential that does not exist"),
        }
        described = peer.request(
            ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, DescribeUserScramCredentialsRequest(
                users=[UserName(name=n) for n in ("kept", "kept", "", "twice")]))
        assert described.error_code == 0
        assert [(r.user, r.error_code) for r in described.results] == [
            ("kept", 92), ("", 91), ("twice", 91)]
        everyone = peer.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0,
                                DescribeUserScramCredentialsRequest(users=None))
        assert [(r.user, [(c.mechanism, c.iterations) for c in r.credential_infos])
                for r in everyone.results] == [("kept", [(1, 4096)])]
    finally:
        peer.close()


def _upsert(name: str, mechanism: int, iterations: int = 4096) -> ScramCredentialUpsertion:
    return ScramCredentialUpsertion(name=name, mechanism=mechanism, iterations=iterations,
                                    salt=b"salt", salted_password=b"x" * 32)


def test_a_failed_write_is_that_users_error(broker: BrokerHandle) -> None:
    """Storage failing for one user (a disk or ZooKeeper error) answers that user with the
    error and still writes the others, as Kafka's ZkAdminManager does."""
    store = broker.server.metadata_store
    original = store.set_user_config

    def failing(user: str, configs: Any) -> None:
        if user == "unlucky":
            raise OSError("disk full")
        original(user, configs)

    broker.call(setattr, store, "set_user_config", failing)
    peer = Peer(broker, "PLAINTEXT")
    try:
        response = peer.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0,
                                AlterUserScramCredentialsRequest(upsertions=[
                                    _upsert("unlucky", 1), _upsert("lucky", 1)]))
    finally:
        peer.close()
        broker.call(delattr, store, "set_user_config")
    assert {r.user_name: r.error_code for r in response.results} == {"unlucky": -1,
                                                                     "lucky": 0}
    assert broker.server.credentials.get("unlucky", ScramMech.SCRAM_SHA_256) is None
    assert broker.server.credentials.get("lucky", ScramMech.SCRAM_SHA_256) is not None
