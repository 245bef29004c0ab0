"""The client side of SASL, for this broker's own connections to other brokers (Kafka's
``SaslClientAuthenticator`` with ``sasl.mechanism.inter.broker.protocol`` and the JAAS
``username`` / ``password`` options of the inter-broker listener's login module).

``client_authenticator(mechanism, username, password)`` returns the coroutine function a
connection of :mod:`kafkapy.clients.network_client` (or the replica fetcher's) awaits right
after it connects, with its ``exchange(api_key, version, body) -> response body``: SaslHandshake
v1, then SaslAuthenticate v2 rounds: PLAIN's one message, or SCRAM's client-first /
client-final with the server's signature verified (RFC 5802). A refusal raises
``SaslAuthenticationFailedError`` (or ``UnsupportedSaslMechanismError``) with the broker's
message; the connection closes and its caller retries as after any connection failure.
"""

from __future__ import annotations

import base64
import hmac
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from kafkapy.errors import (
    IllegalSaslStateError,
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
    raise_for_code,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import SaslAuthenticateRequest, SaslHandshakeRequest
from kafkapy.security.plain import PLAIN
from kafkapy.security.scram import (
    ScramMechanism,
    _hash,
    _hmac,
    salted_password,
)

__all__ = ["Exchange", "client_authenticator"]

Exchange = Callable[[int, int, Any], Awaitable[Any]]
"""``await exchange(api_key, version, body)``: one request on the connection, its body back."""


def _sasl_name(user: str) -> str:
    return user.replace("=", "=3D").replace(",", "=2C")


def client_authenticator(mechanism: str, username: str, password: str
                         ) -> Callable[[Exchange], Awaitable[None]]:
    """The authentication a new connection runs first (see the module doc).

    Raises (at once):
        ValueError: a mechanism this client does not implement.
    """
    scram = ScramMechanism.from_name(mechanism)
    if mechanism != PLAIN and scram is None:
        raise ValueError(f"SASL mechanism {mechanism} is not supported for inter-broker "
                         f"connections (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 are)")

    async def authenticate(exchange: Exchange) -> None:
        handshake = await exchange(ApiKey.SASL_HANDSHAKE, 1,
                                   SaslHandshakeRequest(mechanism=mechanism))
        if handshake.error_code:
            raise UnsupportedSaslMechanismError(
                f"the broker does not enable {mechanism} (it enables "
                f"{', '.join(handshake.mechanisms)})")

        async def token(data: bytes) -> bytes:
            response = await exchange(ApiKey.SASL_AUTHENTICATE, 2,
                                      SaslAuthenticateRequest(auth_bytes=data))
            if response.error_code:
                raise_for_code(response.error_code, response.error_message)
            return bytes(response.auth_bytes)

        if scram is None:
            await token(f"\x00{username}\x00{password}".encode())
            return
        nonce = secrets.token_urlsafe(24)
        first_bare = f"n={_sasl_name(username)},r={nonce}"
        server_first = (await token(f"n,,{first_bare}".encode())).decode()
        fields = dict(item.split("=", 1) for item in server_first.split(","))
        if not fields.get("r", "").startswith(nonce):
            raise IllegalSaslStateError("SCRAM server nonce does not extend the client's")
        salt, iterations = base64.b64decode(fields["s"]), int(fields["i"])
        salted = salted_password(scram, password.encode(), salt, iterations)
        client_key = _hmac(scram, salted, b"Client Key")
        without_proof = f"c=biws,r={fields['r']}"
        auth_message = f"{first_bare},{server_first},{without_proof}".encode()
        signature = _hmac(scram, _hash(scram, client_key), auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        final = await token(f"{without_proof},p={base64.b64encode(proof).decode()}".encode())
        expected = _hmac(scram, _hmac(scram, salted, b"Server Key"), auth_message)
        if not hmac.compare_digest(final, b"v=" + base64.b64encode(expected)):
            raise SaslAuthenticationFailedError("invalid SCRAM server signature")

    return authenticate
