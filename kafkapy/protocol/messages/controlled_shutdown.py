"""ControlledShutdown (API key 7): a ZooKeeper-mode broker asks the controller to move
leadership away from it before it shuts down.

An inter-broker API of ZooKeeper mode, removed in Kafka 4.0; declared from Kafka 3.9's JSON
(versions 0-3). v0 uses a non-standard request header without ClientId (request header v0,
see kafkapy.protocol.headers); v1 is the same as v0; v2 adds BrokerEpoch; v3 is the first
flexible version.
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
    "ControlledShutdownRequest",
    [
        field("BrokerId", INT32),
        field("BrokerEpoch", INT64, "2+", default=-1, ignorable=True),
    ],
    api_key=7, kind="request", valid="0-3", flexible="3+",
)

RESPONSE = Message.declare(
    "ControlledShutdownResponse",
    [
        field("ErrorCode", INT16),
        # The partitions that the broker still leads.
        field("RemainingPartitions", ("RemainingPartition", [
            field("TopicName", STRING),
            field("PartitionIndex", INT32),
        ])),
    ],
    api_key=7, kind="response", valid="0-3", flexible="3+",
)
