"""AddPartitionsToTxn (API key 24): add partitions to an ongoing transaction before producing
to them.

v1 is the same as v0 (brokers answer before throttling); v2 may return PRODUCER_FENCED; v3 is
the first flexible version. v3 and below carry one transaction and are what clients send;
v4 (KIP-890 part 1) batches several transactions (Transactions / ResultsByTransaction), adds
VerifyOnly and a top-level ErrorCode, and is sent by brokers only; v5 may return
TRANSACTION_ABORTABLE.
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Message,
    Struct,
    field,
)

# commonStructs, shared by the v4+ and the v3-and-below forms.
ADD_PARTITIONS_TO_TXN_TOPIC = Struct("AddPartitionsToTxnTopic", (
    field("Name", STRING),
    field("Partitions", Array(INT32)),
))

ADD_PARTITIONS_TO_TXN_PARTITION_RESULT = Struct("AddPartitionsToTxnPartitionResult", (
    field("PartitionIndex", INT32),
    field("PartitionErrorCode", INT16),
))

ADD_PARTITIONS_TO_TXN_TOPIC_RESULT = Struct("AddPartitionsToTxnTopicResult", (
    field("Name", STRING),
    field("ResultsByPartition", Array(ADD_PARTITIONS_TO_TXN_PARTITION_RESULT)),
))

REQUEST = Message.declare(
    "AddPartitionsToTxnRequest",
    [
        field("Transactions", ("AddPartitionsToTxnTransaction", [
            field("TransactionalId", STRING, "4+"),
            field("ProducerId", INT64, "4+"),
            field("ProducerEpoch", INT16, "4+"),
            # Only check that the partitions are in the transaction, do not add them.
            field("VerifyOnly", BOOL, "4+", default=False),
            field("Topics", Array(ADD_PARTITIONS_TO_TXN_TOPIC), "4+"),
        ]), "4+"),
        field("V3AndBelowTransactionalId", STRING, "0-3"),
        field("V3AndBelowProducerId", INT64, "0-3"),
        field("V3AndBelowProducerEpoch", INT16, "0-3"),
        field("V3AndBelowTopics", Array(ADD_PARTITIONS_TO_TXN_TOPIC), "0-3"),
    ],
    api_key=24, kind="request", valid="0-5", flexible="3+",
)

RESPONSE = Message.declare(
    "AddPartitionsToTxnResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16, "4+", ignorable=True),
        field("ResultsByTransaction", ("AddPartitionsToTxnResult", [
            field("TransactionalId", STRING, "4+"),
            field("TopicResults", Array(ADD_PARTITIONS_TO_TXN_TOPIC_RESULT), "4+"),
        ]), "4+"),
        field("ResultsByTopicV3AndBelow", Array(ADD_PARTITIONS_TO_TXN_TOPIC_RESULT), "0-3"),
    ],
    api_key=24, kind="response", valid="0-5", flexible="3+",
)
