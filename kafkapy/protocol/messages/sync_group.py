"""SyncGroup (API key 14): after JoinGroup, the leader sends the members' assignments and
every member receives its own.

v1 adds ThrottleTimeMs to the response (v2: answered before throttling); v3 adds
GroupInstanceId (KIP-345); v4 is the first flexible version; v5 sends ProtocolType and
ProtocolName both ways, and the coordinator rejects them if they differ from the group's
(INCONSISTENT_GROUP_PROTOCOL, KIP-559).
"""

from kafkapy.protocol.schema import (
    BYTES,
    INT16,
    INT32,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "SyncGroupRequest",
    [
        field("GroupId", STRING),
        field("GenerationId", INT32),
        field("MemberId", STRING),
        field("GroupInstanceId", STRING, "3+", nullable="3+", default=None),
        field("ProtocolType", STRING, "5+", nullable="5+", default=None, ignorable=True),
        field("ProtocolName", STRING, "5+", nullable="5+", default=None, ignorable=True),
        field("Assignments", ("SyncGroupRequestAssignment", [
            field("MemberId", STRING),
            field("Assignment", BYTES),
        ])),
    ],
    api_key=14, kind="request", valid="0-5", flexible="4+",
)

RESPONSE = Message.declare(
    "SyncGroupResponse",
    [
        field("ThrottleTimeMs", INT32, "1+", ignorable=True),
        field("ErrorCode", INT16),
        field("ProtocolType", STRING, "5+", nullable="5+", default=None, ignorable=True),
        field("ProtocolName", STRING, "5+", nullable="5+", default=None, ignorable=True),
        field("Assignment", BYTES),
    ],
    api_key=14, kind="response", valid="0-5", flexible="4+",
)
