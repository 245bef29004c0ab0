"""Fetch (API key 1): read record batches from partitions, for consumers and follower replicas.

v0-3 were removed in Kafka 4.0 (v4 is the new baseline) but aiokafka still sends them.
v1 adds the throttle time to the response; v2 allows message format v1; v3 adds the
request-level MaxBytes and makes partition order significant (KIP-74); v4 adds IsolationLevel,
the last stable offset and the aborted transactions (message format v2, transactions); v5 adds
the log start offsets; v7 adds incremental fetch sessions (KIP-227: SessionId, SessionEpoch,
ForgottenTopicsData, a top-level ErrorCode); v9 adds CurrentLeaderEpoch fencing (KIP-320);
v10 allows zstd; v11 adds RackId and PreferredReadReplica (KIP-392); v12 is the first
flexible version, with LastFetchedEpoch and the tagged DivergingEpoch, CurrentLeader and
SnapshotId (KIP-595); v13 names topics by id (KIP-516); v14 may return
OFFSET_MOVED_TO_TIERED_STORAGE (KIP-405); v15 moves ReplicaId into the tagged ReplicaState with
the broker epoch (KIP-903); v16 adds the tagged NodeEndpoints (KIP-951); v17 adds the
follower's ReplicaDirectoryId (KIP-853); v18 adds the follower's HighWatermark (KIP-1166).
"""

from kafkapy.protocol.schema import (
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    Array,
    Message,
    Struct,
    field,
)

REQUEST = Message.declare(
    "FetchRequest",
    [
        # Used by controllers to validate metadata fetches before broker registration.
        field("ClusterId", STRING, "12+", nullable="12+", default=None, tag=0, ignorable=True),
        # -1 for consumers, the follower's broker id, or -2 for debug consumers; from v15 it
        # travels in ReplicaState instead.
        field("ReplicaId", INT32, "0-14", default=-1),
        field("ReplicaState", Struct("ReplicaState", (
            field("ReplicaId", INT32, "15+", default=-1),
            field("ReplicaEpoch", INT64, "15+", default=-1),
        )), "15+", tag=1),
        field("MaxWaitMs", INT32),
        field("MinBytes", INT32),
        field("MaxBytes", INT32, "3+", default=0x7FFFFFFF, ignorable=True),
        # 0 = READ_UNCOMMITTED, 1 = READ_COMMITTED.
        field("IsolationLevel", INT8, "4+", default=0, ignorable=True),
        field("SessionId", INT32, "7+", default=0, ignorable=True),
        field("SessionEpoch", INT32, "7+", default=-1, ignorable=True),
        field("Topics", ("FetchTopic", [
            field("Topic", STRING, "0-12", ignorable=True),
            field("TopicId", UUID, "13+", ignorable=True),
            field("Partitions", ("FetchPartition", [
                field("Partition", INT32),
                field("CurrentLeaderEpoch", INT32, "9+", default=-1, ignorable=True),
                field("FetchOffset", INT64),
                field("LastFetchedEpoch", INT32, "12+", default=-1, ignorable=False),
                # Only sent by followers.
                field("LogStartOffset", INT64, "5+", default=-1, ignorable=True),
                field("PartitionMaxBytes", INT32),
                field("ReplicaDirectoryId", UUID, "17+", tag=0, ignorable=True),
                # -1 if unknown; INT64_MAX if the follower does not support the feature.
                field("HighWatermark", INT64, "18+", default=0x7FFFFFFFFFFFFFFF, tag=1,
                      ignorable=True),
            ])),
        ])),
        # In an incremental fetch, the partitions to remove from the session.
        field("ForgottenTopicsData", ("ForgottenTopic", [
            field("Topic", STRING, "7-12", ignorable=True),
            field("TopicId", UUID, "13+", ignorable=True),
            field("Partitions", Array(INT32), "7+"),
        ]), "7+", ignorable=False),
        field("RackId", STRING, "11+", default="", ignorable=True),
    ],
    api_key=1, kind="request", valid="0-18", flexible="12+",
)

RESPONSE = Message.declare(
    "FetchResponse",
    [
        field("ThrottleTimeMs", INT32, "1+", ignorable=True),
        field("ErrorCode", INT16, "7+", ignorable=True),
        field("SessionId", INT32, "7+", default=0, ignorable=False),
        field("Responses", ("FetchableTopicResponse", [
            field("Topic", STRING, "0-12", ignorable=True),
            field("TopicId", UUID, "13+", ignorable=True),
            field("Partitions", ("PartitionData", [
                field("PartitionIndex", INT32),
                field("ErrorCode", INT16),
                field("HighWatermark", INT64),
                field("LastStableOffset", INT64, "4+", default=-1, ignorable=True),
                field("LogStartOffset", INT64, "5+", default=-1, ignorable=True),
                # Set when LastFetchedEpoch/FetchOffset diverge from the leader's log.
                field("DivergingEpoch", Struct("EpochEndOffset", (
                    field("Epoch", INT32, "12+", default=-1),
                    field("EndOffset", INT64, "12+", default=-1),
                )), "12+", tag=0),
                field("CurrentLeader", Struct("LeaderIdAndEpoch", (
                    field("LeaderId", INT32, "12+", default=-1),
                    field("LeaderEpoch", INT32, "12+", default=-1),
                )), "12+", tag=1),
                # For offsets below LogStartOffset: the snapshot to fetch with FetchSnapshot.
                field("SnapshotId", Struct("SnapshotId", (
                    field("EndOffset", INT64, "0+", default=-1),
                    field("Epoch", INT32, "0+", default=-1),
                )), "12+", tag=2),
                field("AbortedTransactions", ("AbortedTransaction", [
                    field("ProducerId", INT64, "4+"),
                    field("FirstOffset", INT64, "4+"),
                ]), "4+", nullable="4+", ignorable=True),
                field("PreferredReadReplica", INT32, "11+", default=-1, ignorable=False),
                field("Records", RECORDS, nullable="0+"),
            ])),
        ])),
        # Endpoints of the current leaders named in NOT_LEADER_OR_FOLLOWER and
        # FENCED_LEADER_EPOCH partition errors.
        field("NodeEndpoints", ("NodeEndpoint", [
            field("NodeId", INT32, "16+"),
            field("Host", STRING, "16+"),
            field("Port", INT32, "16+"),
            field("Rack", STRING, "16+", nullable="16+", default=None),
        ]), "16+", tag=0),
    ],
    api_key=1, kind="response", valid="0-18", flexible="12+",
)
