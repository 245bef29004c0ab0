"""ConsumerGroupDescribe (API key 69): describe KIP-848 consumer groups: epochs, assignor and
members with their subscriptions, current and target assignments.

Every version is flexible. v1 adds each member's MemberType (KIP-1099: -1 unknown, 0 classic
member of a consumer group, 1 consumer member); the request is the same as v0.
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT8,
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
    "ConsumerGroupDescribeRequest",
    [
        field("GroupIds", Array(STRING)),
        field("IncludeAuthorizedOperations", BOOL),
    ],
    api_key=69, kind="request", valid="0-1", flexible="0+",
)

# commonStructs of the response.
TOPIC_PARTITIONS = Struct("TopicPartitions", (
    field("TopicId", UUID),
    field("TopicName", STRING),
    field("Partitions", Array(INT32)),
))

ASSIGNMENT = Struct("Assignment", (
    field("TopicPartitions", Array(TOPIC_PARTITIONS)),
))

RESPONSE = Message.declare(
    "ConsumerGroupDescribeResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Groups", ("DescribedGroup", [
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, nullable="0+", default=None),
            field("GroupId", STRING),
            field("GroupState", STRING),
            field("GroupEpoch", INT32),
            field("AssignmentEpoch", INT32),
            field("AssignorName", STRING),
            field("Members", ("Member", [
                field("MemberId", STRING),
                field("InstanceId", STRING, nullable="0+", default=None),
                field("RackId", STRING, nullable="0+", default=None),
                field("MemberEpoch", INT32),
                field("ClientId", STRING),
                field("ClientHost", STRING),
                field("SubscribedTopicNames", Array(STRING)),
                field("SubscribedTopicRegex", STRING, nullable="0+", default=None),
                field("Assignment", ASSIGNMENT),
                field("TargetAssignment", ASSIGNMENT),
                field("MemberType", INT8, "1+", default=-1, ignorable=True),
            ])),
            field("AuthorizedOperations", INT32, default=-2147483648),
        ])),
    ],
    api_key=69, kind="response", valid="0-1", flexible="0+",
)
