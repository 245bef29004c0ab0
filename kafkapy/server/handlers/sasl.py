"""SaslHandshake (17) and SaslAuthenticate (36) once a connection is past authentication.

Before authentication these requests never reach a handler: on a SASL listener the
connection's authenticator (:mod:`kafkapy.security.authenticator`) consumes them. A request
that gets here comes from a connection that is already authenticated, or from a non-SASL
listener; Kafka's ``KafkaApis.handleSaslHandshakeRequest`` / ``handleSaslAuthenticateRequest``
answer ILLEGAL_SASL_STATE, and so does this (re-authentication, KIP-368, is not implemented).
Having handlers also makes ApiVersions advertise both APIs, as Kafka does on every listener.
"""

from __future__ import annotations

from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS"]

_ILLEGAL_SASL_STATE = 34


async def handle_sasl_handshake(
        context: RequestContext[SaslHandshakeRequest]) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(error_code=_ILLEGAL_SASL_STATE, mechanisms=[])


async def handle_sasl_authenticate(
        context: RequestContext[SaslAuthenticateRequest]) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(
        error_code=_ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"")


HANDLERS: dict[int, Handler] = {ApiKey.SASL_HANDSHAKE: handle_sasl_handshake,
                                ApiKey.SASL_AUTHENTICATE: handle_sasl_authenticate}
