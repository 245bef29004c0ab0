"""AlterPartitionReassignments (API key 45, KIP-455): an admin asks the controller to move
partitions to new replicas (Replicas), or to cancel a pending move (Replicas null).

Declared from Kafka's JSON: version 0 (3.9), and version 1 (Kafka 4.0, KIP-860's
AllowReplicationFactorChange) so that the codec agrees with clients that know it; kafkapy
serves version 0. Answered once the reassignment has started, not when it completes
(ListPartitionReassignments follows it).
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "AlterPartitionReassignmentsRequest",
    [
        field("TimeoutMs", INT32, default=60000),
        field("AllowReplicationFactorChange", BOOL, "1+", default=True),
        field("Topics", ("ReassignableTopic", [
            field("Name", STRING),
            field("Partitions", ("ReassignablePartition", [
                field("PartitionIndex", INT32),
                field("Replicas", Array(INT32), nullable="0+", default=None),
            ])),
        ])),
    ],
    api_key=45, kind="request", valid="0-1", flexible="0+",
)

RESPONSE = Message.declare(
    "AlterPartitionReassignmentsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("AllowReplicationFactorChange", BOOL, "1+", default=True, ignorable=True),
        field("ErrorCode", INT16),
        field("ErrorMessage", STRING, nullable="0+"),
        field("Responses", ("ReassignableTopicResponse", [
            field("Name", STRING),
            field("Partitions", ("ReassignablePartitionResponse", [
                field("PartitionIndex", INT32),
                field("ErrorCode", INT16),
                field("ErrorMessage", STRING, nullable="0+"),
            ])),
        ])),
    ],
    api_key=45, kind="response", valid="0-1", flexible="0+",
)
