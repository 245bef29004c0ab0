"""The classic consumer's embedded protocol data (not an API): what consumers put in
JoinGroup's protocol Metadata (ConsumerProtocolSubscription) and what the leader hands out in
SyncGroup's Assignment (ConsumerProtocolAssignment), for protocol type "consumer".

On the wire each is an INT16 version followed by the body in that version; no version is
flexible. Subscription v1 adds OwnedPartitions (KIP-429, cooperative rebalancing), v2
GenerationId (KIP-792) and v3 RackId (KIP-881). Assignment v1-3 are the same as v0 (bumped
along with the subscription). Kafka parses a newer version than it knows with its newest
format, so new versions may only append fields.
"""

from kafkapy.protocol.schema import (
    BYTES,
    INT32,
    STRING,
    Array,
    Message,
    field,
)

SUBSCRIPTION = Message.declare(
    "ConsumerProtocolSubscription",
    [
        field("Topics", Array(STRING)),
        field("UserData", BYTES, nullable="0+", default=None),
        field("OwnedPartitions", ("TopicPartition", [
            field("Topic", STRING, "1+"),
            field("Partitions", Array(INT32), "1+"),
        ]), "1+", ignorable=True),
        field("GenerationId", INT32, "2+", default=-1, ignorable=True),
        field("RackId", STRING, "3+", nullable="3+", default=None, ignorable=True),
    ],
    kind="data", valid="0-3", flexible="none",
)

ASSIGNMENT = Message.declare(
    "ConsumerProtocolAssignment",
    [
        field("AssignedPartitions", ("TopicPartition", [
            field("Topic", STRING),
            field("Partitions", Array(INT32)),
        ])),
        field("UserData", BYTES, nullable="0+", default=None),
    ],
    kind="data", valid="0-3", flexible="none",
)
