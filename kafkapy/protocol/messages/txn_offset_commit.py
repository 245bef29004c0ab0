"""TxnOffsetCommit (API key 28): commit consumer offsets as part of a transaction (sent to the
group coordinator; they become visible when the transaction commits).

v1 is the same as v0 (brokers answer before throttling); v2 adds CommittedLeaderEpoch; v3 is
the first flexible version and adds GenerationId, MemberId and GroupInstanceId (KIP-447), with
ILLEGAL_GENERATION, FENCED_INSTANCE_ID and UNKNOWN_MEMBER_ID errors; v4 may return
TRANSACTION_ABORTABLE (KIP-890); v5 is the same as v4, but with transactions v2 (KIP-890
part 2) it also adds the group to the transaction, as AddOffsetsToTxn does.
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
    "TxnOffsetCommitRequest",
    [
        field("TransactionalId", STRING),
        field("GroupId", STRING),
        field("ProducerId", INT64),
        field("ProducerEpoch", INT16),
        field("GenerationId", INT32, "3+", default=-1),
        field("MemberId", STRING, "3+", default=""),
        field("GroupInstanceId", STRING, "3+", nullable="3+", default=None),
        field("Topics", ("TxnOffsetCommitRequestTopic", [
            field("Name", STRING),
            field("Partitions", ("TxnOffsetCommitRequestPartition", [
                field("PartitionIndex", INT32),
                field("CommittedOffset", INT64),
                field("CommittedLeaderEpoch", INT32, "2+", default=-1, ignorable=True),
                field("CommittedMetadata", STRING, nullable="0+"),
            ])),
        ])),
    ],
    api_key=28, kind="request", valid="0-5", flexible="3+",
)

RESPONSE = Message.declare(
    "TxnOffsetCommitResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Topics", ("TxnOffsetCommitResponseTopic", [
            field("Name", STRING),
            field("Partitions", ("TxnOffsetCommitResponsePartition", [
                field("PartitionIndex", INT32),
                field("ErrorCode", INT16),
            ])),
        ])),
    ],
    api_key=28, kind="response", valid="0-5", flexible="3+",
)
