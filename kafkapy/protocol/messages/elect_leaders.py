"""ElectLeaders (API key 43, KIP-183 / KIP-460): an admin asks the controller to elect
leaders for partitions (all of them when TopicPartitions is null): the preferred replica
(ElectionType 0) or, for a partition with no leader, the first live replica even outside the
ISR (1, unclean).

Declared from Kafka 3.9's JSON (versions 0-2): v1 adds ElectionType and the response's
top-level ErrorCode; v2 is the first flexible version. Kafka names the structs
TopicPartitions / ReplicaElectionResult / PartitionResult; prefixed here so that no other
API's struct class can clash with them.
"""

from kafkapy.protocol.schema import (
    INT8,
    INT16,
    INT32,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "ElectLeadersRequest",
    [
        field("ElectionType", INT8, "1+"),
        field("TopicPartitions", ("ElectLeadersTopicPartitions", [
            field("Topic", STRING),
            field("PartitionId", Array(INT32)),
        ]), nullable="0+"),
        field("TimeoutMs", INT32, default=60000),
    ],
    api_key=43, kind="request", valid="0-2", flexible="2+",
)

RESPONSE = Message.declare(
    "ElectLeadersResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16, "1+"),
        field("ReplicaElectionResults", ("ElectLeadersReplicaElectionResult", [
            field("Topic", STRING),
            field("PartitionResult", ("ElectLeadersPartitionResult", [
                field("PartitionId", INT32),
                field("ErrorCode", INT16),
                field("ErrorMessage", STRING, nullable="0+"),
            ])),
        ])),
    ],
    api_key=43, kind="response", valid="0-2", flexible="2+",
)
