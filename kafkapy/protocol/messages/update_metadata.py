"""UpdateMetadata (API key 6): the ZooKeeper-era controller pushes cluster metadata (partition
leaders and ISRs, live brokers and their endpoints) to a broker's metadata cache.

An inter-broker API of the ZooKeeper controller (and of KRaft controllers during a ZooKeeper
migration), removed in Kafka 4.0; declared from Kafka 3.9's JSON (versions 0-8). v1 lists
several endpoints per broker instead of one host and port; v2 adds the rack; v3 the listener
name; v4 the offline replicas; v5 adds BrokerEpoch and groups partitions by topic; v6 is the
first flexible version; v7 adds topic ids; v8 adds isKRaftController and the tagged Type
(KIP-866).
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

# commonStructs, used both ungrouped (v0-4) and grouped by topic (v5+).
UPDATE_METADATA_PARTITION_STATE = Struct("UpdateMetadataPartitionState", (
    # Only in v0-4, where partitions are not grouped by topic.
    field("TopicName", STRING, "0-4", ignorable=True),
    field("PartitionIndex", INT32),
    field("ControllerEpoch", INT32),
    field("Leader", INT32),
    field("LeaderEpoch", INT32),
    field("Isr", Array(INT32)),
    field("ZkVersion", INT32),
    field("Replicas", Array(INT32)),
    field("OfflineReplicas", Array(INT32), "4+", ignorable=True),
))

REQUEST = Message.declare(
    "UpdateMetadataRequest",
    [
        field("ControllerId", INT32),
        field("isKRaftController", BOOL, "8+", default=False),
        # Full metadata snapshot (2), incremental (1) or unknown (0); ZooKeeper migration only.
        field("Type", INT8, "8+", default=0, tag=0),
        field("ControllerEpoch", INT32),
        field("BrokerEpoch", INT64, "5+", default=-1, ignorable=True),
        field("UngroupedPartitionStates", Array(UPDATE_METADATA_PARTITION_STATE), "0-4"),
        field("TopicStates", ("UpdateMetadataTopicState", [
            field("TopicName", STRING, "5+"),
            field("TopicId", UUID, "7+", ignorable=True),
            field("PartitionStates", Array(UPDATE_METADATA_PARTITION_STATE), "5+"),
        ]), "5+"),
        field("LiveBrokers", ("UpdateMetadataBroker", [
            field("Id", INT32),
            # v0 allowed a single host and port per broker rather than a list of endpoints.
            field("V0Host", STRING, "0", ignorable=True),
            field("V0Port", INT32, "0", ignorable=True),
            field("Endpoints", ("UpdateMetadataEndpoint", [
                field("Port", INT32, "1+"),
                field("Host", STRING, "1+"),
                field("Listener", STRING, "3+", ignorable=True),
                field("SecurityProtocol", INT16, "1+"),
            ]), "1+", ignorable=True),
            field("Rack", STRING, "2+", nullable="0+", ignorable=True),
        ])),
    ],
    api_key=6, kind="request", valid="0-8", flexible="6+",
)

RESPONSE = Message.declare(
    "UpdateMetadataResponse",
    [
        field("ErrorCode", INT16),
    ],
    api_key=6, kind="response", valid="0-8", flexible="6+",
)
