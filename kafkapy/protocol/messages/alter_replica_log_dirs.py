"""AlterReplicaLogDirs (API key 34): move replicas between a broker's log directories (KIP-113).

The request lists, per destination directory (an absolute path), the partitions to move
there; the response has one error code per partition, grouped by topic. v1 is the same as v0
(brokers answer before throttling); v2 is the first flexible version. Kafka 4.0 removed v0
(KIP-896); Kafka 3.x brokers serve 0-2, and so does the codec here.
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "AlterReplicaLogDirsRequest",
    [
        field("Dirs", ("AlterReplicaLogDir", [
            # The absolute directory path (the map key in Kafka's generated class).
            field("Path", STRING),
            field("Topics", ("AlterReplicaLogDirTopic", [
                field("Name", STRING),
                field("Partitions", Array(INT32)),
            ])),
        ])),
    ],
    api_key=34, kind="request", valid="0-2", flexible="2+",
)

RESPONSE = Message.declare(
    "AlterReplicaLogDirsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Results", ("AlterReplicaLogDirTopicResult", [
            field("TopicName", STRING),
            field("Partitions", ("AlterReplicaLogDirPartitionResult", [
                field("PartitionIndex", INT32),
                field("ErrorCode", INT16),
            ])),
        ])),
    ],
    api_key=34, kind="response", valid="0-2", flexible="2+",
)
