"""LeaderAndIsr (API key 4): the ZooKeeper-era controller tells a broker which partitions it
leads or follows, with each partition's leader, epoch, ISR and replicas.

An inter-broker API of the ZooKeeper controller (and of KRaft controllers during a ZooKeeper
migration), removed in Kafka 4.0; declared from Kafka 3.9's JSON (versions 0-7) so that such
requests can at least be decoded and refused. v1 adds IsNew; v2 adds BrokerEpoch and groups
the partitions by topic (TopicStates replaces UngroupedPartitionStates); v3 adds
AddingReplicas/RemovingReplicas; v4 is the first flexible version; v5 adds Type and topic ids
(KIP-516) and the response groups its errors by topic id; v6 adds LeaderRecoveryState
(KIP-704); v7 adds isKRaftController (KIP-866).
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UUID,
    Array,
    Message,
    Struct,
    field,
)

# commonStructs, used both ungrouped (v0-1) and grouped by topic (v2+).
LEADER_AND_ISR_PARTITION_STATE = Struct("LeaderAndIsrPartitionState", (
    # Only in v0-1, where partitions are not grouped by topic.
    field("TopicName", STRING, "0-1", ignorable=True),
    field("PartitionIndex", INT32),
    field("ControllerEpoch", INT32),
    field("Leader", INT32),
    field("LeaderEpoch", INT32),
    field("Isr", Array(INT32)),
    # The ZooKeeper zkVersion of the partition state.
    field("PartitionEpoch", INT32),
    field("Replicas", Array(INT32)),
    field("AddingReplicas", Array(INT32), "3+", ignorable=True),
    field("RemovingReplicas", Array(INT32), "3+", ignorable=True),
    field("IsNew", BOOL, "1+", default=False, ignorable=True),
    # 1 if the partition is recovering from an unclean leader election.
    field("LeaderRecoveryState", INT8, "6+", default=0),
))

LEADER_AND_ISR_PARTITION_ERROR = Struct("LeaderAndIsrPartitionError", (
    field("TopicName", STRING, "0-4", ignorable=True),
    field("PartitionIndex", INT32),
    field("ErrorCode", INT16),
))

REQUEST = Message.declare(
    "LeaderAndIsrRequest",
    [
        field("ControllerId", INT32),
        field("isKRaftController", BOOL, "7+", default=False),
        field("ControllerEpoch", INT32),
        field("BrokerEpoch", INT64, "2+", default=-1, ignorable=True),
        # Whether all topics are included in the request.
        field("Type", INT8, "5+"),
        field("UngroupedPartitionStates", Array(LEADER_AND_ISR_PARTITION_STATE), "0-1"),
        field("TopicStates", ("LeaderAndIsrTopicState", [
            field("TopicName", STRING, "2+"),
            field("TopicId", UUID, "5+", ignorable=True),
            field("PartitionStates", Array(LEADER_AND_ISR_PARTITION_STATE), "2+"),
        ]), "2+"),
        field("LiveLeaders", ("LeaderAndIsrLiveLeader", [
            field("BrokerId", INT32),
            field("HostName", STRING),
            field("Port", INT32),
        ])),
    ],
    api_key=4, kind="request", valid="0-7", flexible="4+",
)

RESPONSE = Message.declare(
    "LeaderAndIsrResponse",
    [
        field("ErrorCode", INT16),
        field("PartitionErrors", Array(LEADER_AND_ISR_PARTITION_ERROR), "0-4"),
        field("Topics", ("LeaderAndIsrTopicError", [
            field("TopicId", UUID, "5+"),
            field("PartitionErrors", Array(LEADER_AND_ISR_PARTITION_ERROR), "5+"),
        ]), "5+"),
    ],
    api_key=4, kind="response", valid="0-7", flexible="4+",
)
