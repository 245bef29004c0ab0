"""DeleteGroups (API key 42): delete empty groups and their committed offsets
(NON_EMPTY_GROUP if a group still has members, GROUP_ID_NOT_FOUND if it does not exist).

v1 is the same as v0 (answered before throttling); v2 is the first flexible version.
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
    "DeleteGroupsRequest",
    [
        field("GroupsNames", Array(STRING)),
    ],
    api_key=42, kind="request", valid="0-2", flexible="2+",
)

RESPONSE = Message.declare(
    "DeleteGroupsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Results", ("DeletableGroupResult", [
            field("GroupId", STRING),
            field("ErrorCode", INT16),
        ])),
    ],
    api_key=42, kind="response", valid="0-2", flexible="2+",
)
