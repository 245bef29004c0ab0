"""OffsetCommit (API key 8): commit a consumer group's offsets (sent to the group coordinator).

v0 commits offsets without group membership; v1 adds the group generation and member id and a
per-partition CommitTimestamp; v2 replaces CommitTimestamp by a request-wide RetentionTimeMs,
which v5 removes again (retention is a broker setting); v3 adds ThrottleTimeMs to the response
(v4: answered before throttling); v6 adds CommittedLeaderEpoch; v7 GroupInstanceId (KIP-345);
v8 is the first flexible version; v9 is the first usable with the KIP-848 consumer protocol
(GenerationIdOrMemberEpoch then carries the member epoch; STALE_MEMBER_EPOCH and
GROUP_ID_NOT_FOUND errors); v10 names topics by id instead of by name (KIP-848, UNKNOWN_TOPIC_ID).
Kafka 4.0 removed v0-1; they come from the 3.x spec.
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    INT64,
    STRING,
    UUID,
    Message,
    field,
)

REQUEST = Message.declare(
    "OffsetCommitRequest",
    [
        field("GroupId", STRING),
        # Called GenerationId up to Kafka 3.x.
        field("GenerationIdOrMemberEpoch", INT32, "1+", default=-1, ignorable=True),
        field("MemberId", STRING, "1+", ignorable=True),
        field("GroupInstanceId", STRING, "7+", nullable="7+", default=None),
        field("RetentionTimeMs", INT64, "2-4", default=-1, ignorable=True),
        field("Topics", ("OffsetCommitRequestTopic", [
            field("Name", STRING, "0-9", ignorable=True),
            field("TopicId", UUID, "10+", ignorable=True),
            field("Partitions", ("OffsetCommitRequestPartition", [
                field("PartitionIndex", INT32),
                field("CommittedOffset", INT64),
                field("CommittedLeaderEpoch", INT32, "6+", default=-1, ignorable=True),
                field("CommitTimestamp", INT64, "1", default=-1),
                field("CommittedMetadata", STRING, nullable="0+"),
            ])),
        ])),
    ],
    api_key=8, kind="request", valid="0-10", flexible="8+",
)

RESPONSE = Message.declare(
    "OffsetCommitResponse",
    [
        field("ThrottleTimeMs", INT32, "3+", ignorable=True),
        field("Topics", ("OffsetCommitResponseTopic", [
            field("Name", STRING, "0-9", ignorable=True),
            field("TopicId", UUID, "10+", ignorable=True),
            field("Partitions", ("OffsetCommitResponsePartition", [
                field("PartitionIndex", INT32),
                field("ErrorCode", INT16),
            ])),
        ])),
    ],
    api_key=8, kind="response", valid="0-10", flexible="8+",
)
