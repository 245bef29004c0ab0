"""EndTxn (API key 26): commit or abort a transaction.

v1 is the same as v0 (brokers answer before throttling); v2 may return PRODUCER_FENCED; v3 is
the first flexible version; v4 may return TRANSACTION_ABORTABLE (KIP-890); v5 (transactions
v2, KIP-890 part 2) bumps the epoch on every transaction and returns the producer id and the
new epoch.
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
    "EndTxnRequest",
    [
        field("TransactionalId", STRING),
        field("ProducerId", INT64),
        field("ProducerEpoch", INT16),
        # True to commit, false to abort.
        field("Committed", BOOL),
    ],
    api_key=26, kind="request", valid="0-5", flexible="3+",
)

RESPONSE = Message.declare(
    "EndTxnResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("ProducerId", INT64, "5+", default=-1, ignorable=True),
        field("ProducerEpoch", INT16, "5+", default=-1, ignorable=True),
    ],
    api_key=26, kind="response", valid="0-5", flexible="3+",
)
