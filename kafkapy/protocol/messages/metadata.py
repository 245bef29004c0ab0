"""Metadata (API key 3): the cluster's brokers and controller, and the partitions, leaders and
replicas of the requested topics (optionally creating them).

v1 adds the brokers' racks, the controller id and IsInternal, and makes a null topic list
mean "all topics" (in v0 an empty list meant all); v2 adds the cluster id; v3 the throttle
time; v4 adds AllowAutoTopicCreation; v5 adds the offline replicas; from v6 brokers answer
before throttling; v7 adds the partitions' leader epochs; v8 adds authorized operations for
topics and the cluster (KIP-430); v9 is the first flexible version; v10 adds topic ids (and
nullable request names, unused until v12); v11 drops the cluster authorized operations, now
in DescribeCluster (KIP-700); v12 supports looking topics up by id; v13 adds a top-level
ErrorCode.
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "MetadataRequest",
    [
        # v0: empty means all topics. v1+: null means all topics, empty means none.
        field("Topics", ("MetadataRequestTopic", [
            field("TopicId", UUID, "10+", ignorable=True),
            field("Name", STRING, nullable="10+"),
        ]), nullable="1+"),
        field("AllowAutoTopicCreation", BOOL, "4+", default=True, ignorable=False),
        field("IncludeClusterAuthorizedOperations", BOOL, "8-10"),
        field("IncludeTopicAuthorizedOperations", BOOL, "8+"),
    ],
    api_key=3, kind="request", valid="0-13", flexible="9+",
)

RESPONSE = Message.declare(
    "MetadataResponse",
    [
        field("ThrottleTimeMs", INT32, "3+", ignorable=True),
        field("Brokers", ("MetadataResponseBroker", [
            field("NodeId", INT32),
            field("Host", STRING),
            field("Port", INT32),
            field("Rack", STRING, "1+", nullable="1+", default=None, ignorable=True),
        ])),
        field("ClusterId", STRING, "2+", nullable="2+", default=None, ignorable=True),
        field("ControllerId", INT32, "1+", default=-1, ignorable=True),
        field("Topics", ("MetadataResponseTopic", [
            field("ErrorCode", INT16),
            field("Name", STRING, nullable="12+"),
            field("TopicId", UUID, "10+", ignorable=True),
            field("IsInternal", BOOL, "1+", default=False, ignorable=True),
            field("Partitions", ("MetadataResponsePartition", [
                field("ErrorCode", INT16),
                field("PartitionIndex", INT32),
                field("LeaderId", INT32),
                field("LeaderEpoch", INT32, "7+", default=-1, ignorable=True),
                field("ReplicaNodes", Array(INT32)),
                field("IsrNodes", Array(INT32)),
                field("OfflineReplicas", Array(INT32), "5+", ignorable=True),
            ])),
            # A bit field of ACL operations; INT32_MIN when not requested.
            field("TopicAuthorizedOperations", INT32, "8+", default=-2147483648),
        ])),
        field("ClusterAuthorizedOperations", INT32, "8-10", default=-2147483648),
        field("ErrorCode", INT16, "13+", ignorable=True),
    ],
    api_key=3, kind="response", valid="0-13", flexible="9+",
)
