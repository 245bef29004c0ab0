"""The broker's SASL client (kafkapy.security.sasl_client) against the broker's own
authenticator (kafkapy.security.authenticator), frames in memory: PLAIN and both SCRAMs
succeed, a wrong password and an unknown mechanism fail with Kafka's errors."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from kafkapy.errors import SaslAuthenticationFailedError, UnsupportedSaslMechanismError
from kafkapy.protocol import decode_response, encode_request
from kafkapy.protocol.codec import Request
from kafkapy.protocol.message_classes import RequestHeader
from kafkapy.security.authenticator import SaslServerAuthenticator
from kafkapy.security.credential_cache import CredentialCache
from kafkapy.security.plain import PlainSaslServer
from kafkapy.security.sasl_client import client_authenticator
from kafkapy.security.sasl_server import SaslServer
from kafkapy.security.scram import ScramMechanism, ScramSaslServer, credential_from_password


def _authenticator(enabled: list[str]) -> SaslServerAuthenticator:
    cache = CredentialCache()
    for mechanism in ScramMechanism:
        cache.put("broker", mechanism, credential_from_password(mechanism, "secret"))

    def new_server(name: str) -> SaslServer:
        if name == "PLAIN":
            return PlainSaslServer({"broker": "secret"})
        scram = ScramMechanism.from_name(name)
        assert scram is not None
        return ScramSaslServer(scram, cache.get)

    return SaslServerAuthenticator(enabled_mechanisms=enabled, new_server=new_server,
                                   failed_delay_ms=0)


def _exchange(server: SaslServerAuthenticator):  # type: ignore[no-untyped-def]
    correlation = iter(range(1, 100))

    async def exchange(api_key: int, version: int, body: Any) -> Any:
        header = RequestHeader(api_key=api_key, api_version=version,
                               correlation_id=next(correlation), client_id="test")
        step = server.receive(encode_request(Request(header, body)))
        assert step.reply is not None
        return decode_response(api_key, version, step.reply).body

    return exchange


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_client_authenticates(mechanism: str) -> None:
    server = _authenticator(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
    trio.run(client_authenticator(mechanism, "broker", "secret"), _exchange(server))
    assert server.complete and server.principal == "User:broker"


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_wrong_password(mechanism: str) -> None:
    server = _authenticator([mechanism])
    with pytest.raises(SaslAuthenticationFailedError):
        trio.run(client_authenticator(mechanism, "broker", "wrong"), _exchange(server))
    assert not server.complete


def test_mechanism_not_enabled() -> None:
    server = _authenticator(["PLAIN"])
    with pytest.raises(UnsupportedSaslMechanismError, match="it enables PLAIN"):
        trio.run(client_authenticator("SCRAM-SHA-256", "broker", "secret"), _exchange(server))


def test_unsupported_client_mechanism() -> None:
    with pytest.raises(ValueError, match="not supported for inter-broker"):
        client_authenticator("GSSAPI", "broker", "secret")
