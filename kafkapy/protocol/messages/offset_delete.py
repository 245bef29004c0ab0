"""OffsetDelete (API key 47): delete a group's committed offsets for some partitions (KIP-496);
refused with GROUP_SUBSCRIBED_TO_TOPIC for topics the group's active members subscribe to.

Only v0 exists; it is not flexible. The response's top-level ErrorCode comes before
ThrottleTimeMs.
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "OffsetDeleteRequest",
    [
        field("GroupId", STRING),
        field("Topics", ("OffsetDeleteRequestTopic", [
            field("Name", STRING),
            field("Partitions", ("OffsetDeleteRequestPartition", [
                field("PartitionIndex", INT32),
            ])),
        ])),
    ],
    api_key=47, kind="request", valid="0", flexible="none",
)

RESPONSE = Message.declare(
    "OffsetDeleteResponse",
    [
        field("ErrorCode", INT16),
        field("ThrottleTimeMs", INT32, ignorable=True),
        field("Topics", ("OffsetDeleteResponseTopic", [
            field("Name", STRING),
            field("Partitions", ("OffsetDeleteResponsePartition", [
                field("PartitionIndex", INT32),
                field("ErrorCode", INT16),
            ])),
        ])),
    ],
    api_key=47, kind="response", valid="0", flexible="none",
)
