"""AlterPartition (API key 56, formerly AlterIsr, KIP-497): a partition leader asks the
controller to change the partition's ISR; the controller is the single writer of ISR changes.

An inter-broker API ("listeners": controller). Declared from Kafka 3.9's JSON (versions 0-3,
all flexible): v1 adds LeaderRecoveryState (KIP-704); v2 replaces TopicName by TopicId
(KIP-841) and may answer INELIGIBLE_REPLICA, NEW_LEADER_ELECTED, UNKNOWN_TOPIC_ID; v3 replaces
NewIsr by NewIsrWithEpochs (KIP-903).

Kafka names the structs TopicData / PartitionData / BrokerState; they are prefixed here so that
Fetch's PartitionData keeps its unqualified class name.
"""

from kafkapy.protocol.schema import (
    INT8,
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
    "AlterPartitionRequest",
    [
        field("BrokerId", INT32),
        field("BrokerEpoch", INT64, default=-1),
        field("Topics", ("AlterPartitionTopicData", [
            field("TopicName", STRING, "0-1", ignorable=True),
            field("TopicId", UUID, "2+", ignorable=True),
            field("Partitions", ("AlterPartitionPartitionData", [
                field("PartitionIndex", INT32),
                field("LeaderEpoch", INT32),
                field("NewIsr", Array(INT32), "0-2"),
                field("NewIsrWithEpochs", ("AlterPartitionBrokerState", [
                    field("BrokerId", INT32, "3+"),
                    field("BrokerEpoch", INT64, "3+", default=-1),
                ]), "3+"),
                field("LeaderRecoveryState", INT8, "1+", default=0),
                field("PartitionEpoch", INT32),
            ])),
        ])),
    ],
    api_key=56, kind="request", valid="0-3", flexible="0+",
)

RESPONSE = Message.declare(
    "AlterPartitionResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("Topics", ("AlterPartitionTopicData", [
            field("TopicName", STRING, "0-1", ignorable=True),
            field("TopicId", UUID, "2+", ignorable=True),
            field("Partitions", ("AlterPartitionPartitionData", [
                field("PartitionIndex", INT32),
                field("ErrorCode", INT16),
                field("LeaderId", INT32),
                field("LeaderEpoch", INT32),
                field("Isr", Array(INT32)),
                field("LeaderRecoveryState", INT8, "1+", default=0, ignorable=True),
                field("PartitionEpoch", INT32),
            ])),
        ])),
    ],
    api_key=56, kind="response", valid="0-3", flexible="0+",
)
