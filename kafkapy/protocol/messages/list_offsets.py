"""ListOffsets (API key 2): look up offsets by timestamp (or the special earliest/latest/...
timestamps) for partitions.

v0 was removed in Kafka 4.0 (v1 is the new baseline) but librdkafka and aiokafka still send it:
v0 asks for up to MaxNumOffsets offsets and answers with OldStyleOffsets[]. v1 returns a single
Timestamp and Offset; v2 adds IsolationLevel and the throttle time; from v3 brokers answer
before throttling; v4 adds CurrentLeaderEpoch fencing and returns the LeaderEpoch (KIP-320);
v5 may return OFFSET_NOT_AVAILABLE; v6 is the first flexible version; v7 allows the max
timestamp query -3 (KIP-734); v8 the earliest local offset -4 (KIP-405); v9 the latest tiered
offset -5 (KIP-1005); v10 adds TimeoutMs for asynchronous remote lookups (KIP-1075); v11 the
earliest pending upload offset -6 (KIP-1023).
"""

from kafkapy.protocol.schema import (
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "ListOffsetsRequest",
    [
        # -1 for consumers, a broker id for followers (-2 for debug).
        field("ReplicaId", INT32),
        # 0 = READ_UNCOMMITTED, 1 = READ_COMMITTED.
        field("IsolationLevel", INT8, "2+"),
        field("Topics", ("ListOffsetsTopic", [
            field("Name", STRING),
            field("Partitions", ("ListOffsetsPartition", [
                field("PartitionIndex", INT32),
                field("CurrentLeaderEpoch", INT32, "4+", default=-1, ignorable=True),
                # A timestamp in ms, or -1 latest, -2 earliest, -3 max timestamp (v7+),
                # -4 earliest local (v8+), -5 latest tiered (v9+), -6 earliest pending upload.
                field("Timestamp", INT64),
                field("MaxNumOffsets", INT32, "0", default=1),
            ])),
        ])),
        field("TimeoutMs", INT32, "10+", ignorable=True),
    ],
    api_key=2, kind="request", valid="0-11", flexible="6+",
)

RESPONSE = Message.declare(
    "ListOffsetsResponse",
    [
        field("ThrottleTimeMs", INT32, "2+", ignorable=True),
        field("Topics", ("ListOffsetsTopicResponse", [
            field("Name", STRING),
            field("Partitions", ("ListOffsetsPartitionResponse", [
                field("PartitionIndex", INT32),
                field("ErrorCode", INT16),
                field("OldStyleOffsets", Array(INT64), "0", ignorable=False),
                field("Timestamp", INT64, "1+", default=-1, ignorable=False),
                field("Offset", INT64, "1+", default=-1, ignorable=False),
                field("LeaderEpoch", INT32, "4+", default=-1),
            ])),
        ])),
    ],
    api_key=2, kind="response", valid="0-11", flexible="6+",
)
