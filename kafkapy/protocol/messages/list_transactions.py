"""ListTransactions (API key 66): list the transactions a transaction coordinator holds, with
their producer id and state, filtered by state and producer id (KIP-664;
``kafka-transactions.sh list``, ``Admin.listTransactions``, sent to every broker). Empty
filters match everything; filters combine with AND. State names the coordinator does not know
come back in UnknownStateFilters.

Flexible in every version. v1 adds DurationFilter (KIP-994, Kafka 3.8): only transactions
running for longer than that many milliseconds (< 0, the default: no filter). v2 adds the
nullable TransactionalIdPattern (KIP-1152, Kafka 4.1; Kafka 4.0 defines v0-1): a regular
expression (RE2/J syntax) the transactional id must match (null or empty: no filter); an
invalid one is answered with INVALID_REGULAR_EXPRESSION. The response of v1 and v2 is the same
as v0.
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
    "ListTransactionsRequest",
    [
        field("StateFilters", Array(STRING)),
        field("ProducerIdFilters", Array(INT64)),
        field("DurationFilter", INT64, "1+", default=-1),
        field("TransactionalIdPattern", STRING, "2+", nullable="2+", default=None),
    ],
    api_key=66, kind="request", valid="0-2", flexible="0+",
)

RESPONSE = Message.declare(
    "ListTransactionsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("UnknownStateFilters", Array(STRING)),
        field("TransactionStates", ("TransactionState", [
            field("TransactionalId", STRING),
            field("ProducerId", INT64),
            field("TransactionState", STRING),
        ])),
    ],
    api_key=66, kind="response", valid="0-2", flexible="0+",
)
