"""DescribeTransactions (API key 65): the state of transactional ids as their transaction
coordinator holds it: state, timeout, start time, producer id and epoch, and the partitions
of the ongoing transaction (KIP-664; ``kafka-transactions.sh describe``,
``Admin.describeTransactions``).

Only v0 is defined (Kafka 4.0 and 4.1), flexible. Sent to the coordinator of the ids; errors
are per transactional id (e.g. NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
TRANSACTIONAL_ID_NOT_FOUND, TRANSACTIONAL_ID_AUTHORIZATION_FAILED). An empty TransactionalIds
describes nothing. While a transaction prepares to commit or abort, Topics lists only the
partitions that do not have their markers yet.
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
    "DescribeTransactionsRequest",
    [
        field("TransactionalIds", Array(STRING)),
    ],
    api_key=65, kind="request", valid="0", flexible="0+",
)

RESPONSE = Message.declare(
    "DescribeTransactionsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("TransactionStates", ("TransactionState", [
            field("ErrorCode", INT16),
            field("TransactionalId", STRING),
            field("TransactionState", STRING),
            field("TransactionTimeoutMs", INT32),
            field("TransactionStartTimeMs", INT64),
            field("ProducerId", INT64),
            field("ProducerEpoch", INT16),
            # mapKey in Kafka's spec: one entry per topic.
            field("Topics", ("TopicData", [
                field("Topic", STRING),
                field("Partitions", Array(INT32)),
            ])),
        ])),
    ],
    api_key=65, kind="response", valid="0", flexible="0+",
)
