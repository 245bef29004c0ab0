"""DescribeQuorum (API key 55): the KRaft metadata quorum's leader, voters and observers
(KIP-595, KIP-836, KIP-853).

Flexible in every version. v1 adds the replicas' LastFetchTimestamp and
LastCaughtUpTimestamp; v2 adds ErrorMessage (top level and per partition), the replicas'
ReplicaDirectoryId and the Nodes with their listeners.

Struct names that other APIs use too (TopicData, PartitionData, ReplicaState) carry the
message's name, as the class generator names colliding structs, so that the older APIs' classes
keep their names; struct names are not on the wire.

Declared only: a ZooKeeper-mode Kafka 3.x broker neither advertises nor serves it (the
schema's listeners are "broker" and "controller", KRaft's; ZooKeeper brokers serve the
"zkBroker" APIs), and kafkapy's clusters are ZooKeeper clusters.
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    INT64,
    STRING,
    UINT16,
    UUID,
    Array,
    Message,
    Struct,
    field,
)

REQUEST = Message.declare(
    "DescribeQuorumRequest",
    [
        field("Topics", ("DescribeQuorumRequestTopicData", [
            field("TopicName", STRING),
            field("Partitions", ("DescribeQuorumRequestPartitionData", [
                field("PartitionIndex", INT32),
            ])),
        ])),
    ],
    api_key=55, kind="request", valid="0-2", flexible="0+",
)

# commonStructs of the response.
REPLICA_STATE = Struct("DescribeQuorumResponseReplicaState", (
    field("ReplicaId", INT32),
    field("ReplicaDirectoryId", UUID, "2+"),
    field("LogEndOffset", INT64),
    field("LastFetchTimestamp", INT64, "1+", default=-1, ignorable=True),
    field("LastCaughtUpTimestamp", INT64, "1+", default=-1, ignorable=True),
))

RESPONSE = Message.declare(
    "DescribeQuorumResponse",
    [
        field("ErrorCode", INT16),
        field("ErrorMessage", STRING, "2+", nullable="2+", default=None, ignorable=True),
        field("Topics", ("DescribeQuorumResponseTopicData", [
            field("TopicName", STRING),
            field("Partitions", ("DescribeQuorumResponsePartitionData", [
                field("PartitionIndex", INT32),
                field("ErrorCode", INT16),
                field("ErrorMessage", STRING, "2+", nullable="2+", default=None,
                      ignorable=True),
                field("LeaderId", INT32),
                field("LeaderEpoch", INT32),
                field("HighWatermark", INT64),
                field("CurrentVoters", Array(REPLICA_STATE)),
                field("Observers", Array(REPLICA_STATE)),
            ])),
        ])),
        field("Nodes", ("Node", [
            field("NodeId", INT32, "2+"),
            field("Listeners", ("Listener", [
                field("Name", STRING, "2+"),
                field("Host", STRING, "2+"),
                field("Port", UINT16, "2+"),
            ]), "2+"),
        ]), "2+"),
    ],
    api_key=55, kind="response", valid="0-2", flexible="0+",
)
