"""DeleteRecords (API key 21): advance partitions' log start offsets, deleting the records
before them.

v1 is the same as v0 (brokers answer before throttling); v2 is the first flexible version.
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
    "DeleteRecordsRequest",
    [
        field("Topics", ("DeleteRecordsTopic", [
            field("Name", STRING),
            field("Partitions", ("DeleteRecordsPartition", [
                field("PartitionIndex", INT32),
                # -1 truncates to the high watermark.
                field("Offset", INT64),
            ])),
        ])),
        field("TimeoutMs", INT32),
    ],
    api_key=21, kind="request", valid="0-2", flexible="2+",
)

RESPONSE = Message.declare(
    "DeleteRecordsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Topics", ("DeleteRecordsTopicResult", [
            field("Name", STRING),
            field("Partitions", ("DeleteRecordsPartitionResult", [
                field("PartitionIndex", INT32),
                field("LowWatermark", INT64),
                field("ErrorCode", INT16),
            ])),
        ])),
    ],
    api_key=21, kind="response", valid="0-2", flexible="2+",
)
