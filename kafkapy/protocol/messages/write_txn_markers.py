"""WriteTxnMarkers (API key 27): a transaction coordinator asks partition leaders to write
COMMIT or ABORT control records for transactions.

An inter-broker API (kafkapy's own coordinator may append markers directly). v0 was removed
in Kafka 4.0 (v1 is the new baseline); v1 is v0 made flexible; v2 adds each marker's
TransactionVersion (KIP-1228).
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "WriteTxnMarkersRequest",
    [
        field("Markers", ("WritableTxnMarker", [
            field("ProducerId", INT64),
            field("ProducerEpoch", INT16),
            # False = ABORT, True = COMMIT.
            field("TransactionResult", BOOL),
            field("Topics", ("WritableTxnMarkerTopic", [
                field("Name", STRING),
                field("PartitionIndexes", Array(INT32)),
            ])),
            field("CoordinatorEpoch", INT32),
            # 0/1 = legacy (TV0/TV1), 2 = TV2, ...
            field("TransactionVersion", INT8, "2+", default=0, ignorable=True),
        ])),
    ],
    api_key=27, kind="request", valid="0-2", flexible="1+",
)

RESPONSE = Message.declare(
    "WriteTxnMarkersResponse",
    [
        field("Markers", ("WritableTxnMarkerResult", [
            field("ProducerId", INT64),
            field("Topics", ("WritableTxnMarkerTopicResult", [
                field("Name", STRING),
                field("Partitions", ("WritableTxnMarkerPartitionResult", [
                    field("PartitionIndex", INT32),
                    field("ErrorCode", INT16),
                ])),
            ])),
        ])),
    ],
    api_key=27, kind="response", valid="0-2", flexible="1+",
)
