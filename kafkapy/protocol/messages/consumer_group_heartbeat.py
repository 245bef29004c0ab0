"""ConsumerGroupHeartbeat (API key 68): the KIP-848 consumer group protocol's single request.
A member joins (MemberEpoch 0), heartbeats, and leaves (-1; -2 for a static member that will
rejoin) with it; the coordinator assigns partitions server-side and answers with the member's
epoch and, when it changed, its assignment.

Every version is flexible. Most request fields are null (or -1) when unchanged since the last
heartbeat. v1 adds SubscribedTopicRegex (INVALID_REGULAR_EXPRESSION) and requires the client
to generate its own MemberId (KIP-1082); in v0 the coordinator could generate it.
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Message,
    Struct,
    field,
)

REQUEST = Message.declare(
    "ConsumerGroupHeartbeatRequest",
    [
        field("GroupId", STRING),
        field("MemberId", STRING),
        field("MemberEpoch", INT32),
        field("InstanceId", STRING, nullable="0+", default=None),
        field("RackId", STRING, nullable="0+", default=None),
        field("RebalanceTimeoutMs", INT32, default=-1),
        field("SubscribedTopicNames", Array(STRING), nullable="0+", default=None),
        field("SubscribedTopicRegex", STRING, "1+", nullable="1+", default=None),
        field("ServerAssignor", STRING, nullable="0+", default=None),
        field("TopicPartitions", ("TopicPartitions", [
            field("TopicId", UUID),
            field("Partitions", Array(INT32)),
        ]), nullable="0+", default=None),
    ],
    api_key=68, kind="request", valid="0-1", flexible="0+",
)

# commonStructs of the response.
TOPIC_PARTITIONS = Struct("TopicPartitions", (
    field("TopicId", UUID),
    field("Partitions", Array(INT32)),
))

RESPONSE = Message.declare(
    "ConsumerGroupHeartbeatResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("ErrorMessage", STRING, nullable="0+", default=None),
        # v0: set by the coordinator when the member joins with MemberEpoch 0; v1+: the
        # member's own id.
        field("MemberId", STRING, nullable="0+", default=None),
        field("MemberEpoch", INT32),
        field("HeartbeatIntervalMs", INT32),
        # null when the assignment did not change.
        field("Assignment", Struct("Assignment", (
            field("TopicPartitions", Array(TOPIC_PARTITIONS)),
        )), nullable="0+", default=None),
    ],
    api_key=68, kind="response", valid="0-1", flexible="0+",
)
