"""DescribeTopicPartitions (API key 75): topics and their partitions, paginated (KIP-966).

Kafka 3.8+ admin clients (and ``kafka-topics.sh --describe``) use it instead of Metadata.
Only v0 is defined, flexible. The request names topics (none: every topic), caps the
partitions of the answer at ResponsePartitionLimit and may start at a Cursor (topic and
partition); the response's NextCursor says where the next page starts, null when done.
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Message,
    Struct,
    field,
)

# The request's Cursor and the response's NextCursor share Kafka's struct (one class). The
# request's TopicRequest is named as the class generator names structs other APIs share.
CURSOR = Struct("Cursor", (
    field("TopicName", STRING),
    field("PartitionIndex", INT32),
))

REQUEST = Message.declare(
    "DescribeTopicPartitionsRequest",
    [
        field("Topics", ("DescribeTopicPartitionsRequestTopicRequest", [
            field("Name", STRING),
        ])),
        field("ResponsePartitionLimit", INT32, default=2000),
        field("Cursor", CURSOR, nullable="0+", default=None),
    ],
    api_key=75, kind="request", valid="0", flexible="0+",
)

RESPONSE = Message.declare(
    "DescribeTopicPartitionsResponse",
    [
        field("ThrottleTimeMs", INT32, ignorable=True),
        field("Topics", ("DescribeTopicPartitionsResponseTopic", [
            field("ErrorCode", INT16),
            field("Name", STRING, nullable="0+"),
            field("TopicId", UUID, ignorable=True),
            field("IsInternal", BOOL, default=False, ignorable=True),
            field("Partitions", ("DescribeTopicPartitionsResponsePartition", [
                field("ErrorCode", INT16),
                field("PartitionIndex", INT32),
                field("LeaderId", INT32),
                field("LeaderEpoch", INT32, default=-1, ignorable=True),
                field("ReplicaNodes", Array(INT32)),
                field("IsrNodes", Array(INT32)),
                field("EligibleLeaderReplicas", Array(INT32), nullable="0+", default=None),
                field("LastKnownElr", Array(INT32), nullable="0+", default=None),
                field("OfflineReplicas", Array(INT32), ignorable=True),
            ])),
            # A bit field of ACL operations; INT32_MIN when not requested.
            field("TopicAuthorizedOperations", INT32, default=-2147483648),
        ])),
        field("NextCursor", CURSOR, nullable="0+", default=None),
    ],
    api_key=75, kind="response", valid="0", flexible="0+",
)
