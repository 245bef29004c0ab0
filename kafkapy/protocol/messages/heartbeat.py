"""Heartbeat (API key 12): a classic group member tells the coordinator it is alive; the
answer's ErrorCode (REBALANCE_IN_PROGRESS, ...) tells the member when to rejoin.

v1 adds ThrottleTimeMs to the response (v2: answered before throttling); v3 adds
GroupInstanceId (KIP-345); v4 is the first flexible version.
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "HeartbeatRequest",
    [
        field("GroupId", STRING),
        field("GenerationId", INT32),
        field("MemberId", STRING),
        field("GroupInstanceId", STRING, "3+", nullable="3+", default=None),
    ],
    api_key=12, kind="request", valid="0-4", flexible="4+",
)

RESPONSE = Message.declare(
    "HeartbeatResponse",
    [
        field("ThrottleTimeMs", INT32, "1+", ignorable=True),
        field("ErrorCode", INT16),
    ],
    api_key=12, kind="response", valid="0-4", flexible="4+",
)
