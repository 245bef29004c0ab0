"""JoinGroup (API key 11): join a classic consumer group (or rejoin it for a rebalance).

v1 adds RebalanceTimeoutMs (without it, SessionTimeoutMs serves as the rebalance timeout);
v2 adds ThrottleTimeMs to the response (v3: answered before throttling); from v4 a new member
without a member id is sent one (MEMBER_ID_REQUIRED) and must join again with it; v5 adds
GroupInstanceId for static membership (KIP-345); v6 is the first flexible version; v7 returns
ProtocolType and allows a null ProtocolName (KIP-559); v8 adds Reason (KIP-800); v9 adds
SkipAssignment to the response. Kafka 4.0 removed v0-1 and 4.1 restored them (librdkafka
needs v0 to be advertised).
"""

from kafkapy.protocol.schema import (
    BOOL,
    BYTES,
    INT16,
    INT32,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "JoinGroupRequest",
    [
        field("GroupId", STRING),
        field("SessionTimeoutMs", INT32),
        field("RebalanceTimeoutMs", INT32, "1+", default=-1, ignorable=True),
        field("MemberId", STRING),
        field("GroupInstanceId", STRING, "5+", nullable="5+", default=None),
        field("ProtocolType", STRING),
        field("Protocols", ("JoinGroupRequestProtocol", [
            field("Name", STRING),
            field("Metadata", BYTES),
        ])),
        field("Reason", STRING, "8+", nullable="8+", default=None, ignorable=True),
    ],
    api_key=11, kind="request", valid="0-9", flexible="6+",
)

RESPONSE = Message.declare(
    "JoinGroupResponse",
    [
        field("ThrottleTimeMs", INT32, "2+", ignorable=True),
        field("ErrorCode", INT16),
        field("GenerationId", INT32, default=-1),
        field("ProtocolType", STRING, "7+", nullable="7+", default=None, ignorable=True),
        field("ProtocolName", STRING, nullable="7+"),
        field("Leader", STRING),
        field("SkipAssignment", BOOL, "9+", default=False),
        field("MemberId", STRING),
        field("Members", ("JoinGroupResponseMember", [
            field("MemberId", STRING),
            field("GroupInstanceId", STRING, "5+", nullable="5+", default=None, ignorable=True),
            field("Metadata", BYTES),
        ])),
    ],
    api_key=11, kind="response", valid="0-9", flexible="6+",
)
