"""CreateTopics (API key 19): create topics, with partition counts and replication factors or
a manual replica assignment, and per-topic configs.

v0-1 were removed in Kafka 4.0 (v2 is the new baseline) but older clients still send them.
v1 adds validateOnly (request) and a per-topic ErrorMessage (response); v2 adds the throttle
time; from v3 brokers answer before throttling; v4 makes NumPartitions/ReplicationFactor
optional (-1) even without an assignment (KIP-464); v5 is the first flexible version and
returns the created topic's partition count, replication factor and configs (KIP-525); v6 may
return THROTTLING_QUOTA_EXCEEDED (KIP-599); v7 returns the new topic's id.
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
    field,
)

REQUEST = Message.declare(
    "CreateTopicsRequest",
    [
        field("Topics", ("CreatableTopic", [
            field("Name", STRING),
            # -1 with a manual assignment, or (v4+) to use the broker default.
            field("NumPartitions", INT32),
            field("ReplicationFactor", INT16),
            # Empty for automatic assignment.
            field("Assignments", ("CreatableReplicaAssignment", [
                field("PartitionIndex", INT32),
                field("BrokerIds", Array(INT32)),
            ])),
            field("Configs", ("CreatableTopicConfig", [
                field("Name", STRING),
                field("Value", STRING, nullable="0+"),
            ])),
        ])),
        field("timeoutMs", INT32, default=60000),
        field("validateOnly", BOOL, "1+", default=False),
    ],
    api_key=19, kind="request", valid="0-7", flexible="5+",
)

RESPONSE = Message.declare(
    "CreateTopicsResponse",
    [
        field("ThrottleTimeMs", INT32, "2+", ignorable=True),
        field("Topics", ("CreatableTopicResult", [
            field("Name", STRING),
            field("TopicId", UUID, "7+", ignorable=True),
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, "1+", nullable="0+", ignorable=True),
            # Set when the configs could not be returned (Configs is then null).
            field("TopicConfigErrorCode", INT16, "5+", tag=0, ignorable=True),
            field("NumPartitions", INT32, "5+", default=-1, ignorable=True),
            field("ReplicationFactor", INT16, "5+", default=-1, ignorable=True),
            field("Configs", ("CreatableTopicConfigs", [
                field("Name", STRING, "5+"),
                field("Value", STRING, "5+", nullable="5+"),
                field("ReadOnly", BOOL, "5+"),
                field("ConfigSource", INT8, "5+", default=-1, ignorable=True),
                field("IsSensitive", BOOL, "5+"),
            ]), "5+", nullable="5+", ignorable=True),
        ])),
    ],
    api_key=19, kind="response", valid="0-7", flexible="5+",
)
