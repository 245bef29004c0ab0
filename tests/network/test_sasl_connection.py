"""A SASL_PLAINTEXT listener at the byte level, with a scripted client over a plain socket:
what Kafka's SaslServerAuthenticator does with requests before authentication, SaslHandshake
v0 raw tokens (KIP-43), oversized tokens, failed authentication, and the broker serving other
connections throughout."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkapy.protocol import ApiKey, decode_response, encode_request
from kafkapy.protocol.codec import Request
from kafkapy.protocol.message_classes import (
    ApiVersionsRequest,
    MetadataRequest,
    MetadataRequestTopic,
    RequestHeader,
    SaslAuthenticateRequest,
    SaslHandshakeRequest,
)
from kafkapy.testing import BrokerHandle
from tests.security.sasl_support import Peer, sasl_broker

MECHANISMS = ["OAUTHBEARER", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    handle = sasl_broker(Path(tmp_path_factory.mktemp("sasl-net")))
    try:
        yield handle
    finally:
        handle.stop()


def _metadata(peer: Peer) -> Any:
    return peer.request(ApiKey.METADATA, 9, MetadataRequest(topics=[]))


def _plain_token(user: str, password: str) -> bytes:
    return f"\x00{user}\x00{password}".encode()


def test_metadata_before_authentication_closes(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        peer.send(ApiKey.METADATA, 9, MetadataRequest(topics=[]))
        assert peer.closed_by_broker()
    finally:
        peer.close()
    other = Peer(broker, "PLAINTEXT")          # the broker still serves others
    try:
        assert _metadata(other).brokers
    finally:
        other.close()


def test_metadata_after_handshake_before_authenticate(broker: BrokerHandle) -> None:
    """Kafka answers it with Metadata's error response, ILLEGAL_SASL_STATE (34) in every
    topic (here: none; Metadata has no top-level error before v13), then closes."""
    peer = Peer(broker)
    try:
        response = peer.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        assert response.error_code == 0
        metadata = peer.request(ApiKey.METADATA, 9, MetadataRequest(topics=[
            MetadataRequestTopic(name="t")]))
        assert [(t.name, t.error_code) for t in metadata.topics] == [("t", 34)]
        assert peer.closed_by_broker()
    finally:
        peer.close()


def test_api_versions_then_v1_handshake_and_authenticate(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        versions = peer.request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest(
            client_software_name="scripted", client_software_version="1.0"))
        keys = {v.api_key for v in versions.api_keys}
        assert {ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE,
                ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
                ApiKey.ALTER_USER_SCRAM_CREDENTIALS} <= keys
        handshake = peer.request(ApiKey.SASL_HANDSHAKE, 1,
                                 SaslHandshakeRequest(mechanism="PLAIN"))
        assert handshake.error_code == 0
        assert sorted(handshake.mechanisms) == MECHANISMS
        auth = peer.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(
            auth_bytes=_plain_token("alice", "alice-secret")))
        assert (auth.error_code, auth.error_message, auth.session_lifetime_ms) == (0, None, 0)
        assert _metadata(peer).brokers
        # after authentication both SASL APIs answer ILLEGAL_SASL_STATE (34), as Kafka's
        # KafkaApis does
        again = peer.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        assert again.error_code == 34
        auth = peer.request(ApiKey.SASL_AUTHENTICATE, 2,
                            SaslAuthenticateRequest(auth_bytes=b""))
        assert auth.error_code == 34
    finally:
        peer.close()


def test_second_api_versions_closes(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        assert peer.request(ApiKey.API_VERSIONS, 0, ApiVersionsRequest()).error_code == 0
        peer.send(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())
        assert peer.closed_by_broker()
    finally:
        peer.close()


def test_api_versions_retry_after_invalid_request(broker: BrokerHandle) -> None:
    """An ApiVersions answered INVALID_REQUEST (bad client software name) may be followed by
    another, as in Kafka (librdkafka then retries with v0)."""
    peer = Peer(broker)
    try:
        bad = peer.request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest(
            client_software_name="bad name!", client_software_version="1"))
        assert bad.error_code == 42
        assert peer.request(ApiKey.API_VERSIONS, 0, ApiVersionsRequest()).error_code == 0
        handshake = peer.request(ApiKey.SASL_HANDSHAKE, 1,
                                 SaslHandshakeRequest(mechanism="PLAIN"))
        assert handshake.error_code == 0
    finally:
        peer.close()


def test_handshake_v0_raw_tokens(broker: BrokerHandle) -> None:
    """KIP-43: after SaslHandshake v0 the tokens are bare size-prefixed frames; PLAIN's
    answer is an empty frame; then Kafka requests follow."""
    peer = Peer(broker)
    try:
        handshake = peer.request(ApiKey.SASL_HANDSHAKE, 0,
                                 SaslHandshakeRequest(mechanism="PLAIN"))
        assert handshake.error_code == 0
        peer.send_frame(_plain_token("admin", "admin-secret"))
        assert peer.read_frame() == b""
        assert _metadata(peer).brokers
    finally:
        peer.close()


def test_handshake_v0_raw_wrong_password_closes(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        peer.request(ApiKey.SASL_HANDSHAKE, 0, SaslHandshakeRequest(mechanism="PLAIN"))
        peer.send_frame(_plain_token("admin", "nope"))
        assert peer.closed_by_broker()          # v0 has no error frame: just the close
    finally:
        peer.close()


def test_unsupported_mechanism(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        response = peer.request(ApiKey.SASL_HANDSHAKE, 1,
                                SaslHandshakeRequest(mechanism="GSSAPI"))
        assert response.error_code == 33         # UNSUPPORTED_SASL_MECHANISM
        assert sorted(response.mechanisms) == MECHANISMS
        assert peer.closed_by_broker()
    finally:
        peer.close()


def test_wrong_password_answered_then_closed(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        peer.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        auth = peer.request(ApiKey.SASL_AUTHENTICATE, 1, SaslAuthenticateRequest(
            auth_bytes=_plain_token("alice", "wrong")))
        assert auth.error_code == 58             # SASL_AUTHENTICATION_FAILED
        assert auth.error_message == "Authentication failed: Invalid username or password"
        assert peer.closed_by_broker()
    finally:
        peer.close()
    good = Peer(broker)
    try:
        good.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        auth = good.request(ApiKey.SASL_AUTHENTICATE, 0, SaslAuthenticateRequest(
            auth_bytes=_plain_token("alice", "alice-secret")))
        assert auth.error_code == 0
    finally:
        good.close()


def test_scram_unknown_user_gets_kafkas_generic_message(broker: BrokerHandle) -> None:
    peer = Peer(broker)
    try:
        peer.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="SCRAM-SHA-256"))
        auth = peer.request(ApiKey.SASL_AUTHENTICATE, 1, SaslAuthenticateRequest(
            auth_bytes=b"n,,n=nobody,r=abcdef"))
        assert auth.error_code == 58
        assert auth.error_message == ("Authentication failed during authentication due to "
                                      "invalid credentials with SASL mechanism SCRAM-SHA-256")
        assert peer.closed_by_broker()
    finally:
        peer.close()


def test_oversized_token_closes(broker: BrokerHandle) -> None:
    """sasl.server.max.receive.size (524288) bounds every frame before authentication: a
    larger size prefix closes the connection before its bytes are read."""
    peer = Peer(broker)
    try:
        peer.request(ApiKey.SASL_HANDSHAKE, 0, SaslHandshakeRequest(mechanism="PLAIN"))
        peer.sock.sendall(struct.pack(">i", 524289))
        assert peer.closed_by_broker()
    finally:
        peer.close()


def test_large_requests_after_authentication(broker: BrokerHandle) -> None:
    """Once authenticated, frames up to socket.request.max.bytes are read again: a request
    above sasl.server.max.receive.size is answered."""
    peer = Peer(broker)
    try:
        peer.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        auth = peer.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(
            auth_bytes=_plain_token("alice", "alice-secret")))
        assert auth.error_code == 0
        # 600 kB after the body (ignored, as Kafka ignores bytes after a body) make the
        # frame larger than 524288 bytes
        peer.correlation += 1
        header = RequestHeader(api_key=ApiKey.API_VERSIONS, api_version=0,
                               correlation_id=peer.correlation, client_id="large")
        frame = encode_request(Request(header, ApiVersionsRequest())) + b"\x00" * 600_000
        peer.send_frame(frame)
        response = peer.read_frame()
        assert response is not None
        assert decode_response(ApiKey.API_VERSIONS, 0, response).body.error_code == 0
    finally:
        peer.close()
