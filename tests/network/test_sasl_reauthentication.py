"""Re-authentication (KIP-368) on a SASL_PLAINTEXT listener with connections.max.reauth.ms:
the session lifetime in SaslAuthenticate v1+, re-authentication in place (same mechanism,
same principal), the close of an expired session, and librdkafka re-authenticating while it
produces."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from kafka.net.sasl.scram import ScramClient

from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    MetadataRequest,
    SaslAuthenticateRequest,
    SaslHandshakeRequest,
)
from kafkapy.testing import BrokerHandle
from tests.security.sasl_support import (
    SCRAM_PASSWORDS,
    Peer,
    confluent_config,
    create_scram_users,
    sasl_broker,
)

REAUTH_MS = 1500


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    handle = sasl_broker(Path(tmp_path_factory.mktemp("reauth")), config={
        "listener.name.sasl_plaintext.connections.max.reauth.ms": REAUTH_MS,
        # a per-mechanism value wins over the listener's
        "listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms": 0})
    try:
        create_scram_users(handle)
        yield handle
    finally:
        handle.stop()


def _plain(peer: Peer, user: str, password: str, version: int = 2) -> Any:
    handshake = peer.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    assert handshake is not None and handshake.error_code == 0
    return peer.request(ApiKey.SASL_AUTHENTICATE, version, SaslAuthenticateRequest(
        auth_bytes=f"\x00{user}\x00{password}".encode()))


def _metadata_ok(peer: Peer) -> bool:
    response = peer.request(ApiKey.METADATA, 9, MetadataRequest(topics=[]))
    return response is not None and bool(response.brokers)


def test_session_lifetime_and_reauthentication(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        first = _plain(peer, "alice", "alice-secret")
        assert first.error_code == 0
        assert 0 < first.session_lifetime_ms <= REAUTH_MS
        assert _metadata_ok(peer)
        again = _plain(peer, "alice", "alice-secret")
        assert again.error_code == 0
        assert 0 < again.session_lifetime_ms <= REAUTH_MS
        assert _metadata_ok(peer)
    finally:
        peer.close()


def test_reauthentication_cannot_change_the_principal(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        assert _plain(peer, "alice", "alice-secret").error_code == 0
        other = _plain(peer, "admin", "admin-secret")
        assert other.error_code == 58
        assert other.error_message == ("Cannot change principals during re-authentication "
                                       "from User:alice: User:admin")
        assert peer.closed_by_broker()
    finally:
        peer.close()


def test_reauthentication_cannot_change_the_mechanism(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        assert _plain(peer, "alice", "alice-secret").error_code == 0
        handshake = peer.request(ApiKey.SASL_HANDSHAKE, 1,
                                 SaslHandshakeRequest(mechanism="SCRAM-SHA-256"))
        assert handshake.error_code == 0        # Kafka fails at the first token, not here
        peer.send(ApiKey.SASL_AUTHENTICATE, 2,
                  SaslAuthenticateRequest(auth_bytes=b"n,,n=bob,r=abc"))
        assert peer.closed_by_broker()
    finally:
        peer.close()


def test_expired_session_is_closed_at_its_next_request(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        first = _plain(peer, "alice", "alice-secret")
        lifetime_s = first.session_lifetime_ms / 1000
        time.sleep(lifetime_s + 0.5)
        peer.send(ApiKey.METADATA, 9, MetadataRequest(topics=[]))
        assert peer.closed_by_broker()
    finally:
        peer.close()


def test_client_without_reauthentication(broker: BrokerHandle) -> None:
    """A client that authenticated with SaslAuthenticate v0 cannot re-authenticate: its
    SaslHandshake goes to the handlers (ILLEGAL_SASL_STATE); its session still ends."""
    peer = Peer(broker)
    try:
        assert _plain(peer, "alice", "alice-secret", version=0).error_code == 0
        again = peer.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        assert again.error_code == 34
    finally:
        peer.close()


def test_per_mechanism_override_disables_expiry(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        peer.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="SCRAM-SHA-512"))
        client = ScramClient("carol", SCRAM_PASSWORDS["carol"], "SCRAM-SHA-512")
        first = peer.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(
            auth_bytes=client.first_message()))
        client.process_server_first_message(first.auth_bytes)
        final = peer.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(
            auth_bytes=client.final_message()))
        assert (final.error_code, final.session_lifetime_ms) == (0, 0)
    finally:
        peer.close()


def test_librdkafka_reauthenticates_while_producing(broker: BrokerHandle,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="kafkapy.security.authenticator")
    producer = Producer(confluent_config(broker, "PLAIN", "alice", "alice-secret"))
    delivered: list[bytes] = []

    def on_delivery(error: Any, message: Any) -> None:
        assert error is None, error
        delivered.append(message.value())

    deadline = time.monotonic() + 60
    sent = 0
    # keep producing past two session lifetimes, then until a re-authentication was seen
    started = time.monotonic()
    while time.monotonic() - started < 2 * REAUTH_MS / 1000 + 1 or \
            "re-authenticated as User:alice" not in caplog.text:
        assert time.monotonic() < deadline, "librdkafka did not re-authenticate"
        producer.produce("reauth", f"m{sent}".encode(), on_delivery=on_delivery)
        sent += 1
        producer.poll(0.2)
    assert producer.flush(30) == 0
    assert delivered == [f"m{i}".encode() for i in range(sent)]
