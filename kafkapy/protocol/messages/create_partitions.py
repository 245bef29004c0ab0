"""CreatePartitions (API key 37): raise topics' partition counts, optionally with a manual
assignment of the new partitions' replicas.

v1 is the same as v0 (brokers answer before throttling); v2 is the first flexible version; v3
may return THROTTLING_QUOTA_EXCEEDED (KIP-599).
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "CreatePartitionsRequest",
    [
        field("Topics", ("CreatePartitionsTopic", [
            field("Name", STRING),
            # The new partition count.
            field("Count", INT32),
            # One entry per new partition, or null for automatic assignment.
            field("Assignments", ("CreatePartitionsAssignment", [
                field("BrokerIds", Array(INT32)),
            ]), nullable="0+"),
        ])),
        field("TimeoutMs", INT32),
        field("ValidateOnly", BOOL),
    ],
    api_key=37, kind="request", valid="0-3", flexible="2+",
)

RESPONSE = Message.declare(
    "CreatePartitionsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Results", ("CreatePartitionsTopicResult", [
            field("Name", STRING),
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, nullable="0+", default=None),
        ])),
    ],
    api_key=37, kind="response", valid="0-3", flexible="2+",
)
