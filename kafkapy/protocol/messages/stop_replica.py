"""StopReplica (API key 5): the ZooKeeper-era controller tells a broker to stop replicating
partitions, and optionally to delete them.

An inter-broker API of the ZooKeeper controller (and of KRaft controllers during a ZooKeeper
migration), removed in Kafka 4.0; declared from Kafka 3.9's JSON (versions 0-4). v1 adds
BrokerEpoch and groups the partitions by topic; v2 is the first flexible version; v3 moves the
delete flag to each partition and adds its leader epoch (KIP-570; the response may return
FENCED_LEADER_EPOCH); v4 adds isKRaftController (KIP-866).
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "StopReplicaRequest",
    [
        field("ControllerId", INT32),
        field("isKRaftController", BOOL, "4+", default=False),
        field("ControllerEpoch", INT32),
        field("BrokerEpoch", INT64, "1+", default=-1, ignorable=True),
        field("DeletePartitions", BOOL, "0-2"),
        field("UngroupedPartitions", ("StopReplicaPartitionV0", [
            field("TopicName", STRING, "0"),
            field("PartitionIndex", INT32, "0"),
        ]), "0"),
        field("Topics", ("StopReplicaTopicV1", [
            field("Name", STRING, "1-2"),
            field("PartitionIndexes", Array(INT32), "1-2"),
        ]), "1-2"),
        field("TopicStates", ("StopReplicaTopicState", [
            field("TopicName", STRING, "3+"),
            field("PartitionStates", ("StopReplicaPartitionState", [
                field("PartitionIndex", INT32, "3+"),
                field("LeaderEpoch", INT32, "3+", default=-1),
                field("DeletePartition", BOOL, "3+"),
            ]), "3+"),
        ]), "3+"),
    ],
    api_key=5, kind="request", valid="0-4", flexible="2+",
)

RESPONSE = Message.declare(
    "StopReplicaResponse",
    [
        field("ErrorCode", INT16),
        field("PartitionErrors", ("StopReplicaPartitionError", [
            field("TopicName", STRING),
            field("PartitionIndex", INT32),
            field("ErrorCode", INT16),
        ])),
    ],
    api_key=5, kind="response", valid="0-4", flexible="2+",
)
