"""Produce (API key 0): append record batches to partitions.

v0-2 carry any message format and were removed in Kafka 4.0 (librdkafka still needs v0 to be
advertised, see the protocol reference); v3 adds TransactionalId and requires magic 2;
v9 is the first flexible version; v13 names topics by id (KIP-516).
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    Message,
    Struct,
    field,
)

REQUEST = Message.declare(
    "ProduceRequest",
    [
        field("TransactionalId", STRING, "3+", nullable="3+", default=None),
        field("Acks", INT16),
        field("TimeoutMs", INT32),
        field("TopicData", ("TopicProduceData", [
            field("Name", STRING, "0-12", ignorable=True),
            field("TopicId", UUID, "13+", ignorable=True),
            field("PartitionData", ("PartitionProduceData", [
                field("Index", INT32),
                field("Records", RECORDS, nullable="0+"),
            ])),
        ])),
    ],
    api_key=0, kind="request", valid="0-13", flexible="9+",
)

RESPONSE = Message.declare(
    "ProduceResponse",
    [
        field("Responses", ("TopicProduceResponse", [
            field("Name", STRING, "0-12", ignorable=True),
            field("TopicId", UUID, "13+", ignorable=True),
            field("PartitionResponses", ("PartitionProduceResponse", [
                field("Index", INT32),
                field("ErrorCode", INT16),
                field("BaseOffset", INT64),
                field("LogAppendTimeMs", INT64, "2+", default=-1, ignorable=True),
                field("LogStartOffset", INT64, "5+", default=-1, ignorable=True),
                field("RecordErrors", ("BatchIndexAndErrorMessage", [
                    field("BatchIndex", INT32, "8+"),
                    field("BatchIndexErrorMessage", STRING, "8+", nullable="8+", default=None),
                ]), "8+", ignorable=True),
                field("ErrorMessage", STRING, "8+", nullable="8+", default=None, ignorable=True),
                field("CurrentLeader", Struct("LeaderIdAndEpoch", (
                    field("LeaderId", INT32, "10+", default=-1),
                    field("LeaderEpoch", INT32, "10+", default=-1),
                )), "10+", tag=0),
            ])),
        ])),
        field("ThrottleTimeMs", INT32, "1+", default=0, ignorable=True),
        field("NodeEndpoints", ("NodeEndpoint", [
            field("NodeId", INT32, "10+"),
            field("Host", STRING, "10+"),
            field("Port", INT32, "10+"),
            field("Rack", STRING, "10+", nullable="10+", default=None),
        ]), "10+", tag=0),
    ],
    api_key=0, kind="response", valid="0-13", flexible="9+",
)
