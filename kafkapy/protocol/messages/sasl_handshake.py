"""SaslHandshake (API key 17): choose a SASL mechanism; the response lists the enabled ones.

Never flexible (its version cannot be bumped because clients up to 2.4 negotiate it wrongly).
After a v0 handshake the SASL tokens travel as bare length-prefixed frames; v1 (KIP-152) sends
them in SaslAuthenticate requests.
"""

from kafkapy.protocol.schema import (
    INT16,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "SaslHandshakeRequest",
    [
        field("Mechanism", STRING),
    ],
    api_key=17, kind="request", valid="0-1", flexible="none",
)

RESPONSE = Message.declare(
    "SaslHandshakeResponse",
    [
        field("ErrorCode", INT16),
        field("Mechanisms", Array(STRING)),
    ],
    api_key=17, kind="response", valid="0-1", flexible="none",
)
