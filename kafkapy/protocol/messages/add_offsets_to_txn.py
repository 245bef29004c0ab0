"""AddOffsetsToTxn (API key 25): add a consumer group's offsets partition to a transaction, so
that a following TxnOffsetCommit commits with it.

v1 is the same as v0 (brokers answer before throttling); v2 may return PRODUCER_FENCED; v3 is
the first flexible version; v4 may return TRANSACTION_ABORTABLE (KIP-890).
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
    "AddOffsetsToTxnRequest",
    [
        field("TransactionalId", STRING),
        field("ProducerId", INT64),
        field("ProducerEpoch", INT16),
        field("GroupId", STRING),
    ],
    api_key=25, kind="request", valid="0-4", flexible="3+",
)

RESPONSE = Message.declare(
    "AddOffsetsToTxnResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
    ],
    api_key=25, kind="response", valid="0-4", flexible="3+",
)
