"""OffsetFetch (API key 9): read a consumer group's committed offsets (from the coordinator).

v0 read offsets from ZooKeeper and v1 from ``__consumer_offsets``, with the same layout (Kafka
4.0 removed v0); v2 allows null Topics (all of the group's offsets) and adds a top-level
ErrorCode; v3 adds ThrottleTimeMs (v4: answered before throttling); v5 returns
CommittedLeaderEpoch; v6 is the first flexible version; v7 adds RequireStable
(UNSTABLE_OFFSET_COMMIT for partitions with pending transactional offsets); v8 batches
several groups per request and response; v9 adds MemberId and MemberEpoch, checked with the
KIP-848 consumer protocol (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID); v10 names topics by id
instead of by name (UNKNOWN_TOPIC_ID).
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    UUID,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "OffsetFetchRequest",
    [
        field("GroupId", STRING, "0-7"),
        field("Topics", ("OffsetFetchRequestTopic", [
            field("Name", STRING, "0-7"),
            field("PartitionIndexes", Array(INT32), "0-7"),
        ]), "0-7", nullable="2-7"),
        field("Groups", ("OffsetFetchRequestGroup", [
            field("GroupId", STRING, "8+"),
            field("MemberId", STRING, "9+", nullable="9+", default=None, ignorable=True),
            field("MemberEpoch", INT32, "9+", default=-1, ignorable=True),
            field("Topics", ("OffsetFetchRequestTopics", [
                field("Name", STRING, "8-9", ignorable=True),
                field("TopicId", UUID, "10+", ignorable=True),
                field("PartitionIndexes", Array(INT32), "8+"),
            ]), "8+", nullable="8+"),
        ]), "8+"),
        field("RequireStable", BOOL, "7+", default=False),
    ],
    api_key=9, kind="request", valid="0-10", flexible="6+",
)

RESPONSE = Message.declare(
    "OffsetFetchResponse",
    [
        field("ThrottleTimeMs", INT32, "3+", ignorable=True),
        field("Topics", ("OffsetFetchResponseTopic", [
            field("Name", STRING, "0-7"),
            field("Partitions", ("OffsetFetchResponsePartition", [
                field("PartitionIndex", INT32, "0-7"),
                field("CommittedOffset", INT64, "0-7"),
                field("CommittedLeaderEpoch", INT32, "5-7", default=-1, ignorable=True),
                field("Metadata", STRING, "0-7", nullable="0-7"),
                field("ErrorCode", INT16, "0-7"),
            ]), "0-7"),
        ]), "0-7"),
        field("ErrorCode", INT16, "2-7", default=0, ignorable=True),
        field("Groups", ("OffsetFetchResponseGroup", [
            field("GroupId", STRING, "8+"),
            field("Topics", ("OffsetFetchResponseTopics", [
                field("Name", STRING, "8-9", ignorable=True),
                field("TopicId", UUID, "10+", ignorable=True),
                field("Partitions", ("OffsetFetchResponsePartitions", [
                    field("PartitionIndex", INT32, "8+"),
                    field("CommittedOffset", INT64, "8+"),
                    field("CommittedLeaderEpoch", INT32, "8+", default=-1, ignorable=True),
                    field("Metadata", STRING, "8+", nullable="8+"),
                    field("ErrorCode", INT16, "8+"),
                ]), "8+"),
            ]), "8+"),
            field("ErrorCode", INT16, "8+", default=0),
        ]), "8+"),
    ],
    api_key=9, kind="response", valid="0-10", flexible="6+",
)
