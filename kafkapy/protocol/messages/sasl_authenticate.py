"""SaslAuthenticate (API key 36): one round of SASL token exchange after a v1 SaslHandshake
(KIP-152).

v1 adds SessionLifetimeMs to the response (KIP-368 re-authentication; 0 = none); v2 is the
first flexible version.
"""

from kafkapy.protocol.schema import (
    BYTES,
    INT16,
    INT64,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "SaslAuthenticateRequest",
    [
        field("AuthBytes", BYTES),
    ],
    api_key=36, kind="request", valid="0-2", flexible="2+",
)

RESPONSE = Message.declare(
    "SaslAuthenticateResponse",
    [
        field("ErrorCode", INT16),
        field("ErrorMessage", STRING, nullable="0+"),
        field("AuthBytes", BYTES),
        field("SessionLifetimeMs", INT64, "1+", default=0, ignorable=True),
    ],
    api_key=36, kind="response", valid="0-2", flexible="2+",
)
