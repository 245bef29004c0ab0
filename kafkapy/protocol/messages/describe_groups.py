"""DescribeGroups (API key 15): describe classic groups: state, protocol and members with
their metadata and assignments.

v1 adds ThrottleTimeMs to the response (v2: answered before throttling); v3 can return the
group's AuthorizedOperations (when IncludeAuthorizedOperations is set); v4 returns the
members' GroupInstanceId; v5 is the first flexible version; v6 adds a per-group ErrorMessage
and returns GROUP_ID_NOT_FOUND for unknown groups instead of state "Dead" (KIP-1043).
ProtocolData (the chosen protocol) and the members' metadata and assignments are only filled
in for Stable groups; a Dead group has no members.
"""

from kafkapy.protocol.schema import (
    BOOL,
    BYTES,
    INT16,
    INT32,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "DescribeGroupsRequest",
    [
        field("Groups", Array(STRING)),
        field("IncludeAuthorizedOperations", BOOL, "3+"),
    ],
    api_key=15, kind="request", valid="0-6", flexible="5+",
)

RESPONSE = Message.declare(
    "DescribeGroupsResponse",
    [
        field("ThrottleTimeMs", INT32, "1+", ignorable=True),
        field("Groups", ("DescribedGroup", [
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, "6+", nullable="6+", default=None),
            field("GroupId", STRING),
            field("GroupState", STRING),
            field("ProtocolType", STRING),
            field("ProtocolData", STRING),
            field("Members", ("DescribedGroupMember", [
                field("MemberId", STRING),
                field("GroupInstanceId", STRING, "4+", nullable="4+", default=None,
                      ignorable=True),
                field("ClientId", STRING),
                field("ClientHost", STRING),
                field("MemberMetadata", BYTES),
                field("MemberAssignment", BYTES),
            ])),
            field("AuthorizedOperations", INT32, "3+", default=-2147483648),
        ])),
    ],
    api_key=15, kind="response", valid="0-6", flexible="5+",
)
