"""Request and response headers, and which header version goes with which API version.

Request header: v0 ApiKey, ApiVersion, CorrelationId (only ControlledShutdown v0 uses it);
v1 adds ClientId (a plain nullable STRING, even in v2: its spec says flexibleVersions none);
v2 adds the tagged-field section. Response header: v0 CorrelationId; v1 adds tagged fields.

A flexible API version uses request header v2 and response header v1, others v1 and v0, with
one exception: ApiVersions responses always use header v0 (KIP-511), so that a client that
sent a version the broker does not know can still read the error.

Kafka's spec calls the first two fields RequestApiKey and RequestApiVersion; kafkapy names them
ApiKey and ApiVersion (``header.api_key``), which is the same on the wire.
"""

from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.schema import INT16, INT32, STRING, Message, field

REQUEST_HEADER = Message.declare(
    "RequestHeader",
    [
        field("ApiKey", INT16),
        field("ApiVersion", INT16),
        field("CorrelationId", INT32),
        field("ClientId", STRING, "1+", nullable="1+", ignorable=True, flexible="none"),
    ],
    kind="header", valid="0-2", flexible="2+",
)

RESPONSE_HEADER = Message.declare(
    "ResponseHeader",
    [field("CorrelationId", INT32)],
    kind="header", valid="0-1", flexible="1+",
)


def request_header_version(api_key: int, api_version: int, flexible: bool) -> int:
    if api_key == ApiKey.CONTROLLED_SHUTDOWN and api_version == 0:
        return 0
    return 2 if flexible else 1


def response_header_version(api_key: int, flexible: bool) -> int:
    if api_key == ApiKey.API_VERSIONS:
        return 0
    return 1 if flexible else 0
