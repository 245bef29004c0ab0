"""DescribeProducers (API key 61): the active producers of partitions, as the partition
leader's producer state holds them: producer id and epoch, last sequence and timestamp, the
coordinator epoch of the last transaction marker and the start offset of the producer's open
transaction (KIP-664; ``kafka-transactions.sh describe-producers``, ``Admin.describeProducers``).

Only v0 is defined (Kafka 4.0 and 4.1), flexible. Sent to the partition leader; errors are
per partition (e.g. NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
TOPIC_AUTHORIZATION_FAILED), with an optional ErrorMessage. ProducerEpoch is an INT32 in this
API (an INT16 everywhere else).
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "DescribeProducersRequest",
    [
        field("Topics", ("TopicRequest", [
            field("Name", STRING),
            field("PartitionIndexes", Array(INT32)),
        ])),
    ],
    api_key=61, kind="request", valid="0", flexible="0+",
)

RESPONSE = Message.declare(
    "DescribeProducersResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Topics", ("TopicResponse", [
            field("Name", STRING),
            field("Partitions", ("PartitionResponse", [
                field("PartitionIndex", INT32),
                field("ErrorCode", INT16),
                field("ErrorMessage", STRING, nullable="0+", default=None),
                field("ActiveProducers", ("ProducerState", [
                    field("ProducerId", INT64),
                    field("ProducerEpoch", INT32),
                    field("LastSequence", INT32, default=-1),
                    field("LastTimestamp", INT64, default=-1),
                    field("CoordinatorEpoch", INT32),
                    field("CurrentTxnStartOffset", INT64, default=-1),
                ])),
            ])),
        ])),
    ],
    api_key=61, kind="response", valid="0", flexible="0+",
)
