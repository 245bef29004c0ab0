"""LeaveGroup (API key 13): members leave a classic group (triggering a rebalance).

v1 adds ThrottleTimeMs to the response (v2: answered before throttling); v3 replaces the
single MemberId by a batch of Members identified by member id and/or GroupInstanceId
(KIP-345), each answered with its own ErrorCode; v4 is the first flexible version; v5 adds a
per-member Reason (KIP-800).
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "LeaveGroupRequest",
    [
        field("GroupId", STRING),
        field("MemberId", STRING, "0-2"),
        field("Members", ("MemberIdentity", [
            field("MemberId", STRING, "3+"),
            field("GroupInstanceId", STRING, "3+", nullable="3+", default=None),
            field("Reason", STRING, "5+", nullable="5+", default=None, ignorable=True),
        ]), "3+"),
    ],
    api_key=13, kind="request", valid="0-5", flexible="4+",
)

RESPONSE = Message.declare(
    "LeaveGroupResponse",
    [
        field("ThrottleTimeMs", INT32, "1+", ignorable=True),
        field("ErrorCode", INT16),
        field("Members", ("MemberResponse", [
            field("MemberId", STRING, "3+"),
            field("GroupInstanceId", STRING, "3+", nullable="3+"),
            field("ErrorCode", INT16, "3+"),
        ]), "3+"),
    ],
    api_key=13, kind="response", valid="0-5", flexible="4+",
)
