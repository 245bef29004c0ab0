"""ListPartitionReassignments (API key 46, KIP-455): the partitions whose reassignment is in
progress (all of them when Topics is null), with their full replica set and the replicas
being added and removed.

Declared from Kafka 3.9's JSON (version 0, flexible).
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
    "ListPartitionReassignmentsRequest",
    [
        field("TimeoutMs", INT32, default=60000),
        field("Topics", ("ListPartitionReassignmentsTopics", [
            field("Name", STRING),
            field("PartitionIndexes", Array(INT32)),
        ]), nullable="0+", default=None),
    ],
    api_key=46, kind="request", valid="0", flexible="0+",
)

RESPONSE = Message.declare(
    "ListPartitionReassignmentsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("ErrorMessage", STRING, nullable="0+"),
        field("Topics", ("OngoingTopicReassignment", [
            field("Name", STRING),
            field("Partitions", ("OngoingPartitionReassignment", [
                field("PartitionIndex", INT32),
                field("Replicas", Array(INT32)),
                field("AddingReplicas", Array(INT32)),
                field("RemovingReplicas", Array(INT32)),
            ])),
        ])),
    ],
    api_key=46, kind="response", valid="0", flexible="0+",
)
