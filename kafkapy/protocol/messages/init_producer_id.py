"""InitProducerId (API key 22): allocate a producer id and epoch, for an idempotent producer
(TransactionalId null) or a transactional one (bumping the epoch and fencing older producers).

v1 is the same as v0 (brokers answer before throttling); v2 is the first flexible version;
v3 adds the current ProducerId/ProducerEpoch so that a producer can resume after
INVALID_PRODUCER_EPOCH (KIP-360); v4 may return PRODUCER_FENCED; v5 may return
TRANSACTION_ABORTABLE (KIP-890); v6 adds two-phase commit (KIP-939: Enable2Pc,
KeepPreparedTxn and the ongoing transaction's producer id/epoch; marked unstable in Kafka 4.1).
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "InitProducerIdRequest",
    [
        field("TransactionalId", STRING, nullable="0+"),
        field("TransactionTimeoutMs", INT32),
        field("ProducerId", INT64, "3+", default=-1),
        field("ProducerEpoch", INT16, "3+", default=-1),
        field("Enable2Pc", BOOL, "6+", default=False),
        field("KeepPreparedTxn", BOOL, "6+", default=False),
    ],
    api_key=22, kind="request", valid="0-6", flexible="2+",
)

RESPONSE = Message.declare(
    "InitProducerIdResponse",
    [
        field("ThrottleTimeMs", INT32, ignorable=True),
        field("ErrorCode", INT16),
        field("ProducerId", INT64, default=-1),
        field("ProducerEpoch", INT16),
        # -1/-1 unless KeepPreparedTxn found a prepared transaction.
        field("OngoingTxnProducerId", INT64, "6+", default=-1),
        field("OngoingTxnProducerEpoch", INT16, "6+", default=-1),
    ],
    api_key=22, kind="response", valid="0-6", flexible="2+",
)
