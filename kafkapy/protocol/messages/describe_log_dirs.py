"""DescribeLogDirs (API key 35): list a broker's log directories and, for each, the size and
lag of the partitions it holds.

v0 was removed in Kafka 4.0 (v1 is the new baseline) but older clients still send it; v1 is
the same as v0 (brokers answer before throttling); v2 is the first flexible version; v3 adds a
top-level ErrorCode; v4 adds each directory's TotalBytes and UsableBytes; v5 adds IsCordoned.
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "DescribeLogDirsRequest",
    [
        # Null for all topics.
        field("Topics", ("DescribableLogDirTopic", [
            field("Topic", STRING),
            field("Partitions", Array(INT32)),
        ]), nullable="0+"),
    ],
    api_key=35, kind="request", valid="0-5", flexible="2+",
)

RESPONSE = Message.declare(
    "DescribeLogDirsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16, "3+", ignorable=True),
        field("Results", ("DescribeLogDirsResult", [
            field("ErrorCode", INT16),
            field("LogDir", STRING),
            field("Topics", ("DescribeLogDirsTopic", [
                field("Name", STRING),
                field("Partitions", ("DescribeLogDirsPartition", [
                    field("PartitionIndex", INT32),
                    field("PartitionSize", INT64),
                    # LEO lag behind the HW (current log) or the current replica's LEO
                    # (future log).
                    field("OffsetLag", INT64),
                    # True for a future log created by AlterReplicaLogDirs.
                    field("IsFutureKey", BOOL),
                ])),
            ])),
            field("TotalBytes", INT64, "4+", default=-1, ignorable=True),
            field("UsableBytes", INT64, "4+", default=-1, ignorable=True),
            field("IsCordoned", BOOL, "5+", default=False, ignorable=True),
        ])),
    ],
    api_key=35, kind="response", valid="0-5", flexible="2+",
)
