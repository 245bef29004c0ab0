"""OffsetForLeaderEpoch (API key 23): the end offset of a leader epoch, used by followers and
consumers to detect log truncation (KIP-101, KIP-279, KIP-320).

v0-1 were removed in Kafka 4.0 (v2 is the new baseline); declared from Kafka 3.x's JSON for
them. v1 returns the LeaderEpoch found; v2 adds CurrentLeaderEpoch fencing (KIP-320) and the
throttle time; v3 adds ReplicaId (default -2, a "debug" consumer that may see past the high
watermark); v4 is the first flexible version.
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    INT64,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "OffsetForLeaderEpochRequest",
    [
        # -1 for consumers, a broker id for followers; -2 (debug) for older versions.
        field("ReplicaId", INT32, "3+", default=-2, ignorable=True),
        field("Topics", ("OffsetForLeaderTopic", [
            field("Topic", STRING),
            field("Partitions", ("OffsetForLeaderPartition", [
                field("Partition", INT32),
                field("CurrentLeaderEpoch", INT32, "2+", default=-1, ignorable=True),
                field("LeaderEpoch", INT32),
            ])),
        ])),
    ],
    api_key=23, kind="request", valid="0-4", flexible="4+",
)

RESPONSE = Message.declare(
    "OffsetForLeaderEpochResponse",
    [
        field("ThrottleTimeMs", INT32, "2+", ignorable=True),
        field("Topics", ("OffsetForLeaderTopicResult", [
            field("Topic", STRING),
            field("Partitions", ("EpochEndOffset", [
                field("ErrorCode", INT16),
                field("Partition", INT32),
                field("LeaderEpoch", INT32, "1+", default=-1, ignorable=True),
                field("EndOffset", INT64, default=-1),
            ])),
        ])),
    ],
    api_key=23, kind="response", valid="0-4", flexible="4+",
)
