"""ListGroups (API key 16): list the groups a broker coordinates.

v1 adds ThrottleTimeMs to the response (v2: answered before throttling); v3 is the first
flexible version; v4 adds StatesFilter and returns each group's GroupState (KIP-518); v5 adds
TypesFilter and returns GroupType ("classic", "consumer", ...; KIP-848). Empty filters
list every group.
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "ListGroupsRequest",
    [
        field("StatesFilter", Array(STRING), "4+"),
        field("TypesFilter", Array(STRING), "5+"),
    ],
    api_key=16, kind="request", valid="0-5", flexible="3+",
)

RESPONSE = Message.declare(
    "ListGroupsResponse",
    [
        field("ThrottleTimeMs", INT32, "1+", ignorable=True),
        field("ErrorCode", INT16),
        field("Groups", ("ListedGroup", [
            field("GroupId", STRING),
            field("ProtocolType", STRING),
            field("GroupState", STRING, "4+", ignorable=True),
            field("GroupType", STRING, "5+", ignorable=True),
        ])),
    ],
    api_key=16, kind="response", valid="0-5", flexible="3+",
)
