"""The records of the classic group coordinator in ``__consumer_offsets``: keys and values.

Theory of operation
-------------------
This module owns the byte formats, nothing else: what the group coordinator appends to its
``__consumer_offsets`` partition and what it reads back when it loads one. It is pure (no I/O,
no state) and may be called from any task or thread.

Every key and every value starts with an INT16 version (the framing both coordinators share,
kafkapy.coordinator.record_format). The key's version says what the record is (Kafka's loader
dispatches on it); the value's version says how its body is laid out. A null value (a
tombstone, handled by the caller) deletes what the key names. The schemas are Kafka's
(``group-coordinator/src/main/resources/common/message/*.json``, in older releases under
``core/src/main/resources/common/message``), declared once below with kafkapy's schema language
and encoded by the generic codec::

    key version 0 or 1: OffsetCommitKey       group STRING, topic STRING, partition INT32
    key version 2:      GroupMetadataKey      group STRING
    key version 3-8:    a KIP-848 consumer group record (below)
    any other version:  a record type of the new coordinator kafkapy does not keep (share
                        groups, streams groups, resolved regular expressions); returned as
                        UnknownKey so that a loader skips it.

    OffsetCommitValue v0: offset INT64, metadata STRING, commitTimestamp INT64
                      v1: v0 + expireTimestamp INT64 (the only version that has it)
                      v2: as v0
                      v3: offset INT64, leaderEpoch INT32, metadata STRING, commitTimestamp INT64
                      v4: as v3, flexible (compact strings, a tagged-field section)

    GroupMetadataValue: protocolType STRING, generation INT32, protocol STRING (nullable),
                        leader STRING (nullable), currentStateTimestamp INT64 (v2+),
                        members [memberId STRING, groupInstanceId STRING (nullable, v3+),
                                 clientId STRING, clientHost STRING, rebalanceTimeout INT32
                                 (v1+), sessionTimeout INT32, subscription BYTES,
                                 assignment BYTES]
                        v4 is v3, flexible (compact encodings, a tagged-field section after
                        the value and after each member)

Versions written, as Kafka 3.x and 4.x write them (GroupCoordinatorRecordHelpers in 4.x,
GroupMetadataManager.scala in 3.x, at the current metadata version): offset keys version 1,
group keys version 2; offset values v1 when the commit has an expire timestamp (its OffsetCommit
request gave a RetentionTimeMs other than -1) and v3 otherwise, so a leader epoch is dropped
from a commit that has an expire timestamp, as in Kafka; group values v3. The flexible
v4s are read but not written: Kafka does not write them yet either.

Reading accepts every version Kafka defined and, like Kafka's readers, ignores bytes after the
body. Fields a version lacks read as Kafka reads them: leader epoch, expire timestamp and
current-state timestamp -1, no group instance id, and in a v0 group value each member's
rebalance timeout is its session timeout.

KIP-848 consumer groups (Kafka 3.7+, ``ConsumerGroup*Key.json`` / ``*Value.json``). The key
version is the record type; every key is non-flexible (INT16-length strings). Every value has
exactly one version, 0, and is flexible: compact strings and arrays (UNSIGNED_VARINT length + 1),
a tagged-field section at the end of the value and of every struct::

    3 ConsumerGroupMetadata            key: group        value: Epoch INT32
                                                          [tag 0: MetadataHash INT64 (4.1+)]
    4 ConsumerGroupPartitionMetadata   key: group        value: Topics [TopicId UUID,
                                          TopicName STRING, NumPartitions INT32,
                                          PartitionMetadata [Partition INT32, Racks [STRING]]]
    5 ConsumerGroupMemberMetadata      key: group, member  value: InstanceId STRING (nullable),
                                          RackId STRING (nullable), ClientId STRING,
                                          ClientHost STRING, SubscribedTopicNames [STRING],
                                          SubscribedTopicRegex STRING (nullable),
                                          RebalanceTimeoutMs INT32, ServerAssignor STRING
                                          (nullable) [tag 0: ClassicMemberMetadata]
    6 ConsumerGroupTargetAssignmentMetadata  key: group  value: AssignmentEpoch INT32
    7 ConsumerGroupTargetAssignmentMember    key: group, member  value: TopicPartitions
                                          [TopicId UUID, Partitions [INT32]]
    8 ConsumerGroupCurrentMemberAssignment   key: group, member  value: MemberEpoch INT32,
                                          PreviousMemberEpoch INT32, State INT8,
                                          AssignedPartitions [TopicId UUID, Partitions [INT32]],
                                          PartitionsPendingRevocation (the same)

Written as Kafka 4.0 writes them (``GroupCoordinatorRecordHelpers``): value version 0, no
tagged fields (Kafka 4.1 adds MetadataHash to record 3 and stops writing record 4; kafkapy
keeps the 4.0 form, which 4.1 still reads), topics and partitions sorted. Tagged fields kafkapy
does not use (ClassicMemberMetadata of a classic member in a consumer group, 4.1's
MetadataHash is read but unused, later ones) are skipped.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kafkapy.coordinator.record_format import (
    UnknownKey,
    read_body,
    read_version,
    read_versioned,
    versioned,
)
from kafkapy.protocol.classes import class_for, struct_classes
from kafkapy.protocol.schema import (
    BYTES,
    INT8,
    INT32,
    INT64,
    STRING,
    UUID,
    Array,
    Message,
    Struct,
    field,
)

__all__ = [
    "CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT",
    "CONSUMER_GROUP_MEMBER_METADATA",
    "CONSUMER_GROUP_METADATA",
    "CONSUMER_GROUP_PARTITION_METADATA",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA",
    "ConsumerGroupKey",
    "ConsumerGroupMetadataRecord",
    "CurrentMemberAssignmentRecord",
    "GroupKey",
    "GroupMetadataRecord",
    "MemberRecord",
    "OffsetAndMetadata",
    "OffsetKey",
    "SubscriptionRecord",
    "UnknownKey",
    "consumer_group_key",
    "consumer_group_metadata_value",
    "current_member_assignment_value",
    "group_metadata_key",
    "group_metadata_value",
    "member_metadata_value",
    "offset_commit_key",
    "offset_commit_value",
    "partition_metadata_value",
    "read_consumer_group_metadata_value",
    "read_current_member_assignment_value",
    "read_group_value",
    "read_key",
    "read_member_metadata_value",
    "read_offset_value",
    "read_partition_metadata_value",
    "read_target_assignment_member_value",
    "read_target_assignment_metadata_value",
    "target_assignment_member_value",
    "target_assignment_metadata_value",
]

# Kafka 3.x's data specs (core/src/main/resources/common/message): the key's version is the
# record type, so each key message is valid in exactly the versions that name it.
OFFSET_COMMIT_KEY = Message.declare(
    "OffsetCommitKey",
    [
        field("group", STRING),
        field("topic", STRING),
        field("partition", INT32),
    ],
    kind="data", valid="0-1", flexible="none",
)

GROUP_METADATA_KEY = Message.declare(
    "GroupMetadataKey",
    [field("group", STRING, "2")],
    kind="data", valid="2", flexible="none",
)

OFFSET_COMMIT_VALUE = Message.declare(
    "OffsetCommitValue",
    [
        field("offset", INT64),
        field("leaderEpoch", INT32, "3+", default=-1, ignorable=True),
        field("metadata", STRING),
        field("commitTimestamp", INT64),
        field("expireTimestamp", INT64, "1", default=-1, ignorable=True),
    ],
    kind="data", valid="0-4", flexible="4+",
)

GROUP_METADATA_VALUE = Message.declare(
    "GroupMetadataValue",
    [
        field("protocolType", STRING),
        field("generation", INT32),
        field("protocol", STRING, nullable="0+"),
        field("leader", STRING, nullable="0+"),
        field("currentStateTimestamp", INT64, "2+", default=-1, ignorable=True),
        field("members", ("MemberMetadata", [
            field("memberId", STRING),
            field("groupInstanceId", STRING, "3+", nullable="3+", default=None,
                  ignorable=True),
            field("clientId", STRING),
            field("clientHost", STRING),
            field("rebalanceTimeout", INT32, "1+", ignorable=True),
            field("sessionTimeout", INT32),
            field("subscription", BYTES),
            field("assignment", BYTES),
        ])),
    ],
    kind="data", valid="0-4", flexible="4+",
)

OFFSET_KEY_VERSION = 1
GROUP_KEY_VERSION = 2
# OffsetCommitValue v1 is the only version with an expire timestamp; v3 is the newest
# non-flexible one, which Kafka writes "until a tagged field is introduced".
OFFSET_VALUE_VERSION_WITH_EXPIRY = 1
OFFSET_VALUE_VERSION = 3
GROUP_VALUE_VERSION = 3

_OffsetKeyBody = class_for(OFFSET_COMMIT_KEY.body)
_GroupKeyBody = class_for(GROUP_METADATA_KEY.body)
_OffsetValueBody = class_for(OFFSET_COMMIT_VALUE.body)
_GroupValueBody = class_for(GROUP_METADATA_VALUE.body)
_MemberBody = struct_classes(GROUP_METADATA_VALUE.body)["MemberMetadata"]

# ----------------------------------------------------------------- KIP-848 consumer groups

# The record types (key versions; Kafka's CoordinatorRecordType / the specs' "apiKey").
CONSUMER_GROUP_METADATA = 3
CONSUMER_GROUP_PARTITION_METADATA = 4
CONSUMER_GROUP_MEMBER_METADATA = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
_MEMBER_RECORD_TYPES = frozenset({CONSUMER_GROUP_MEMBER_METADATA,
                                  CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                                  CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT})
_RECORD_NAMES = {
    CONSUMER_GROUP_METADATA: "ConsumerGroupMetadata",
    CONSUMER_GROUP_PARTITION_METADATA: "ConsumerGroupPartitionMetadata",
    CONSUMER_GROUP_MEMBER_METADATA: "ConsumerGroupMemberMetadata",
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: "ConsumerGroupTargetAssignmentMetadata",
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: "ConsumerGroupTargetAssignmentMember",
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: "ConsumerGroupCurrentMemberAssignment",
}


def _consumer_group_key(record_type: int) -> Message:
    version = str(record_type)
    fields = [field("GroupId", STRING, version)]
    if record_type in _MEMBER_RECORD_TYPES:
        fields.append(field("MemberId", STRING, version))
    return Message.declare(_RECORD_NAMES[record_type] + "Key", fields, kind="data",
                           valid=version, flexible="none")


CONSUMER_GROUP_KEYS = {t: _consumer_group_key(t) for t in _RECORD_NAMES}

CONSUMER_GROUP_METADATA_VALUE = Message.declare(
    "ConsumerGroupMetadataValue",
    [
        field("Epoch", INT32),
        # Kafka 4.1 (KIP-1101): the hash of the subscribed topics' metadata, replacing
        # ConsumerGroupPartitionMetadata. Read, never written (0 is "none").
        field("MetadataHash", INT64, default=0, tag=0, ignorable=True),
    ],
    kind="data", valid="0", flexible="0+",
)

CONSUMER_GROUP_PARTITION_METADATA_VALUE = Message.declare(
    "ConsumerGroupPartitionMetadataValue",
    [
        field("Topics", ("TopicMetadata", [
            field("TopicId", UUID),
            field("TopicName", STRING),
            field("NumPartitions", INT32),
            # Deprecated after 4.0; written empty (kafkapy has no racks).
            field("PartitionMetadata", ("PartitionMetadata", [
                field("Partition", INT32),
                field("Racks", Array(STRING)),
            ])),
        ])),
    ],
    kind="data", valid="0", flexible="0+",
)

CONSUMER_GROUP_MEMBER_METADATA_VALUE = Message.declare(
    "ConsumerGroupMemberMetadataValue",
    [
        field("InstanceId", STRING, nullable="0+"),
        field("RackId", STRING, nullable="0+"),
        field("ClientId", STRING),
        field("ClientHost", STRING),
        field("SubscribedTopicNames", Array(STRING)),
        field("SubscribedTopicRegex", STRING, nullable="0+"),
        field("RebalanceTimeoutMs", INT32, default=-1),
        field("ServerAssignor", STRING, nullable="0+"),
        # Tag 0, ClassicMemberMetadata (a classic-protocol member of a consumer group), is not
        # declared: kafkapy keeps no such members, and an unknown tag is skipped.
    ],
    kind="data", valid="0", flexible="0+",
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = Message.declare(
    "ConsumerGroupTargetAssignmentMetadataValue",
    [field("AssignmentEpoch", INT32)],
    kind="data", valid="0", flexible="0+",
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = Message.declare(
    "ConsumerGroupTargetAssignmentMemberValue",
    [
        field("TopicPartitions", ("TopicPartition", [
            field("TopicId", UUID),
            field("Partitions", Array(INT32)),
        ])),
    ],
    kind="data", valid="0", flexible="0+",
)

# A common struct (one class) shared by both arrays, as in Kafka's spec.
_TOPIC_PARTITIONS = Struct("TopicPartitions", (
    field("TopicId", UUID),
    field("Partitions", Array(INT32)),
))

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = Message.declare(
    "ConsumerGroupCurrentMemberAssignmentValue",
    [
        field("MemberEpoch", INT32),
        field("PreviousMemberEpoch", INT32),
        field("State", INT8),
        field("AssignedPartitions", Array(_TOPIC_PARTITIONS)),
        field("PartitionsPendingRevocation", Array(_TOPIC_PARTITIONS)),
    ],
    kind="data", valid="0", flexible="0+",
)

CONSUMER_GROUP_VALUE_VERSION = 0

_CgKeyBodies = {t: class_for(m.body) for t, m in CONSUMER_GROUP_KEYS.items()}
_CgMetadataBody = class_for(CONSUMER_GROUP_METADATA_VALUE.body)
_PartitionMetadataBody = class_for(CONSUMER_GROUP_PARTITION_METADATA_VALUE.body)
_TopicMetadataBody = struct_classes(CONSUMER_GROUP_PARTITION_METADATA_VALUE.body)["TopicMetadata"]
_SubscriptionBody = class_for(CONSUMER_GROUP_MEMBER_METADATA_VALUE.body)
_TargetMetadataBody = class_for(CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE.body)
_TargetMemberBody = class_for(CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE.body)
_TargetPartitionsBody = struct_classes(
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE.body)["TopicPartition"]
_CurrentBody = class_for(CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE.body)
_CurrentPartitionsBody = class_for(_TOPIC_PARTITIONS)


@attrs.frozen
class OffsetKey:
    """The key of a committed offset: which group's offset for which partition."""

    group: str
    topic: str
    partition: int


@attrs.frozen
class GroupKey:
    """The key of a group's metadata record."""

    group: str


@attrs.frozen
class OffsetAndMetadata:
    """A committed offset as stored (OffsetCommitValue)."""

    offset: int
    leader_epoch: int = -1          # -1: none (values below v3 have none)
    metadata: str = ""
    commit_timestamp_ms: int = -1
    expire_timestamp_ms: int = -1   # -1: none (only v1 carries one)


@attrs.frozen
class MemberRecord:
    """One member of a stored group (GroupMetadataValue's MemberMetadata)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@attrs.frozen
class GroupMetadataRecord:
    """A classic group as stored after a rebalance completes (GroupMetadataValue)."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp_ms: int   # -1: none
    members: tuple[MemberRecord, ...]


@attrs.frozen
class ConsumerGroupKey:
    """The key of a consumer group record: its type (the key version, 3-8), the group, and
    for the per-member types (5, 7, 8) the member id."""

    record_type: int
    group: str
    member_id: str | None = None


TopicPartitions = tuple[tuple[uuid.UUID, tuple[int, ...]], ...]
"""An assignment as stored: ``((topic id, partitions), ...)``, in record order."""


@attrs.frozen
class ConsumerGroupMetadataRecord:
    """ConsumerGroupMetadataValue: the group epoch (and Kafka 4.1's metadata hash, 0 if
    none)."""

    epoch: int
    metadata_hash: int = 0


@attrs.frozen
class SubscriptionRecord:
    """ConsumerGroupMemberMetadataValue: what a member asked for (Kafka's "member
    subscription")."""

    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None


@attrs.frozen
class CurrentMemberAssignmentRecord:
    """ConsumerGroupCurrentMemberAssignmentValue: a member's epochs, reconciliation state
    (Kafka's MemberState value) and the partitions it holds."""

    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: TopicPartitions
    partitions_pending_revocation: TopicPartitions


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """The key of a committed offset (version 1).

    Raises ValueError for a string longer than 32767 UTF-8 bytes and OverflowError for a
    partition outside INT32."""
    body = _OffsetKeyBody(group=group, topic=topic, partition=partition)
    return versioned(OFFSET_KEY_VERSION, OFFSET_COMMIT_KEY, body)


def group_metadata_key(group: str) -> bytes:
    """The key of a group's metadata (version 2). Raises ValueError for a group id longer
    than 32767 UTF-8 bytes."""
    return versioned(GROUP_KEY_VERSION, GROUP_METADATA_KEY, _GroupKeyBody(group=group))


def offset_commit_value(value: OffsetAndMetadata) -> bytes:
    """A committed offset: v1 if it has an expire timestamp (its leader epoch is then dropped,
    as v1 has none), else v3.

    Raises ValueError for metadata longer than 32767 UTF-8 bytes and OverflowError for numbers
    outside their wire types."""
    version = OFFSET_VALUE_VERSION_WITH_EXPIRY if value.expire_timestamp_ms != -1 \
        else OFFSET_VALUE_VERSION
    body = _OffsetValueBody(
        offset=value.offset,
        leader_epoch=value.leader_epoch,
        metadata=value.metadata,
        commit_timestamp=value.commit_timestamp_ms,
        expire_timestamp=value.expire_timestamp_ms,
    )
    return versioned(version, OFFSET_COMMIT_VALUE, body)


def group_metadata_value(value: GroupMetadataRecord) -> bytes:
    """A group's metadata, v3.

    Raises ValueError for strings longer than 32767 UTF-8 bytes and OverflowError for numbers
    outside their wire types."""
    body = _GroupValueBody(
        protocol_type=value.protocol_type,
        generation=value.generation,
        protocol=value.protocol,
        leader=value.leader,
        current_state_timestamp=value.current_state_timestamp_ms,
        members=[
            _MemberBody(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout=m.rebalance_timeout_ms,
                session_timeout=m.session_timeout_ms,
                subscription=m.subscription,
                assignment=m.assignment,
            )
            for m in value.members
        ],
    )
    return versioned(GROUP_VALUE_VERSION, GROUP_METADATA_VALUE, body)


def read_key(data: bytes | memoryview
             ) -> OffsetKey | GroupKey | ConsumerGroupKey | UnknownKey:
    """Decode a record key. Raises CorruptMessageError for a key too short for its version
    or with a malformed body (truncated, invalid UTF-8, a null group, member, topic or
    partition)."""
    view = memoryview(data)
    version = read_version(view, "key")
    if version in OFFSET_COMMIT_KEY.valid:
        key = read_body(OFFSET_COMMIT_KEY, version, view, "offset commit key")
        return OffsetKey(key.group, key.topic, key.partition)
    if version in GROUP_METADATA_KEY.valid:
        return GroupKey(read_body(GROUP_METADATA_KEY, version, view, "group metadata key").group)
    message = CONSUMER_GROUP_KEYS.get(version)
    if message is not None:
        key = read_body(message, version, view, message.name)
        return ConsumerGroupKey(version, key.group_id, getattr(key, "member_id", None))
    return UnknownKey(version)


def read_offset_value(data: bytes | memoryview) -> OffsetAndMetadata:
    """Decode an offset commit value of any version (0-4). Raises CorruptMessageError for a
    version Kafka never defined or a malformed body."""
    v = read_versioned(OFFSET_COMMIT_VALUE, data, "offset commit value")
    return OffsetAndMetadata(
        offset=v.offset,
        leader_epoch=v.leader_epoch,
        metadata=v.metadata,
        commit_timestamp_ms=v.commit_timestamp,
        expire_timestamp_ms=v.expire_timestamp,
    )


def read_group_value(data: bytes | memoryview) -> GroupMetadataRecord:
    """Decode a group metadata value of any version (0-4). Raises CorruptMessageError for a
    version Kafka never defined or a malformed body."""
    v = read_versioned(GROUP_METADATA_VALUE, data, "group metadata value")
    version = read_version(memoryview(data), "group metadata value")
    return GroupMetadataRecord(
        protocol_type=v.protocol_type,
        generation=v.generation,
        protocol=v.protocol,
        leader=v.leader,
        current_state_timestamp_ms=v.current_state_timestamp,
        members=tuple(
            MemberRecord(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                # v0 has no rebalance timeout; Kafka's loader uses the session timeout.
                rebalance_timeout_ms=m.session_timeout if version == 0 else m.rebalance_timeout,
                session_timeout_ms=m.session_timeout,
                subscription=m.subscription,
                assignment=m.assignment,
            )
            for m in v.members
        ),
    )


# ----------------------------------------------------------------- KIP-848 consumer groups


def consumer_group_key(record_type: int, group: str, member_id: str | None = None) -> bytes:
    """The key of a consumer group record of ``record_type`` (3-8); ``member_id`` for the
    per-member types (5, 7, 8) only.

    Raises ValueError for an unknown record type, a member id given or missing against the
    type, or a string longer than 32767 UTF-8 bytes."""
    message = CONSUMER_GROUP_KEYS.get(record_type)
    if message is None:
        raise ValueError(f"{record_type} is not a consumer group record type")
    if (member_id is not None) != (record_type in _MEMBER_RECORD_TYPES):
        raise ValueError(f"{message.name}: member id {member_id!r} does not fit the key")
    body = _CgKeyBodies[record_type](group_id=group)
    if member_id is not None:
        body.member_id = member_id
    return versioned(record_type, message, body)


def _sorted_partitions(assignment: Mapping[uuid.UUID, Iterable[int]], cls: Any) -> list[Any]:
    return [cls(topic_id=topic_id, partitions=sorted(parts))
            for topic_id, parts in sorted(assignment.items())]


def _read_partitions(entries: Iterable[Any]) -> TopicPartitions:
    return tuple((e.topic_id, tuple(e.partitions)) for e in entries)


def consumer_group_metadata_value(epoch: int) -> bytes:
    """ConsumerGroupMetadataValue v0 with the group epoch. Raises OverflowError outside
    INT32."""
    return versioned(CONSUMER_GROUP_VALUE_VERSION, CONSUMER_GROUP_METADATA_VALUE,
                     _CgMetadataBody(epoch=epoch))


def read_consumer_group_metadata_value(data: bytes | memoryview) -> ConsumerGroupMetadataRecord:
    """Raises CorruptMessageError for an unknown version or a malformed body."""
    v = read_versioned(CONSUMER_GROUP_METADATA_VALUE, data)
    return ConsumerGroupMetadataRecord(v.epoch, v.metadata_hash)


def partition_metadata_value(topics: Mapping[str, tuple[uuid.UUID, int]]) -> bytes:
    """ConsumerGroupPartitionMetadataValue v0: the subscribed topics that exist,
    ``{name: (topic id, partition count)}``, sorted by name, without rack metadata.

    Raises ValueError / OverflowError for values that do not fit their wire types."""
    body = _PartitionMetadataBody(topics=[
        _TopicMetadataBody(topic_id=topic_id, topic_name=name, num_partitions=count,
                           partition_metadata=[])
        for name, (topic_id, count) in sorted(topics.items())])
    return versioned(CONSUMER_GROUP_VALUE_VERSION, CONSUMER_GROUP_PARTITION_METADATA_VALUE, body)


def read_partition_metadata_value(data: bytes | memoryview
                                  ) -> dict[str, tuple[uuid.UUID, int]]:
    """``{topic name: (topic id, partition count)}``. Raises CorruptMessageError for an
    unknown version or a malformed body."""
    v = read_versioned(CONSUMER_GROUP_PARTITION_METADATA_VALUE, data)
    return {t.topic_name: (t.topic_id, t.num_partitions) for t in v.topics}


def member_metadata_value(value: SubscriptionRecord) -> bytes:
    """ConsumerGroupMemberMetadataValue v0, topic names sorted (as Kafka sorts them).

    Raises ValueError / OverflowError for values that do not fit their wire types."""
    body = _SubscriptionBody(
        instance_id=value.instance_id,
        rack_id=value.rack_id,
        client_id=value.client_id,
        client_host=value.client_host,
        subscribed_topic_names=sorted(value.subscribed_topic_names),
        subscribed_topic_regex=value.subscribed_topic_regex,
        rebalance_timeout_ms=value.rebalance_timeout_ms,
        server_assignor=value.server_assignor,
    )
    return versioned(CONSUMER_GROUP_VALUE_VERSION, CONSUMER_GROUP_MEMBER_METADATA_VALUE, body)


def read_member_metadata_value(data: bytes | memoryview) -> SubscriptionRecord:
    """Raises CorruptMessageError for an unknown version or a malformed body (a null client
    id, host or topic list, ...)."""
    v = read_versioned(CONSUMER_GROUP_MEMBER_METADATA_VALUE, data)
    return SubscriptionRecord(
        instance_id=v.instance_id,
        rack_id=v.rack_id,
        client_id=v.client_id,
        client_host=v.client_host,
        subscribed_topic_names=tuple(v.subscribed_topic_names),
        subscribed_topic_regex=v.subscribed_topic_regex,
        rebalance_timeout_ms=v.rebalance_timeout_ms,
        server_assignor=v.server_assignor,
    )


def target_assignment_metadata_value(assignment_epoch: int) -> bytes:
    """ConsumerGroupTargetAssignmentMetadataValue v0. Raises OverflowError outside INT32."""
    return versioned(CONSUMER_GROUP_VALUE_VERSION, CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
                     _TargetMetadataBody(assignment_epoch=assignment_epoch))


def read_target_assignment_metadata_value(data: bytes | memoryview) -> int:
    """The assignment epoch. Raises CorruptMessageError for an unknown version or a malformed
    body."""
    return int(read_versioned(CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE, data)
               .assignment_epoch)


def target_assignment_member_value(assignment: Mapping[uuid.UUID, Iterable[int]]) -> bytes:
    """ConsumerGroupTargetAssignmentMemberValue v0: one member's target partitions, topics
    and partitions sorted. Raises OverflowError for a partition outside INT32."""
    body = _TargetMemberBody(
        topic_partitions=_sorted_partitions(assignment, _TargetPartitionsBody))
    return versioned(CONSUMER_GROUP_VALUE_VERSION, CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
                     body)


def read_target_assignment_member_value(data: bytes | memoryview) -> TopicPartitions:
    """Raises CorruptMessageError for an unknown version or a malformed body."""
    v = read_versioned(CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE, data)
    return _read_partitions(v.topic_partitions)


def current_member_assignment_value(
        member_epoch: int, previous_member_epoch: int, state: int,
        assigned: Mapping[uuid.UUID, Iterable[int]],
        pending_revocation: Mapping[uuid.UUID, Iterable[int]]) -> bytes:
    """ConsumerGroupCurrentMemberAssignmentValue v0, topics and partitions sorted.

    Raises OverflowError for numbers outside their wire types."""
    body = _CurrentBody(
        member_epoch=member_epoch,
        previous_member_epoch=previous_member_epoch,
        state=state,
        assigned_partitions=_sorted_partitions(assigned, _CurrentPartitionsBody),
        partitions_pending_revocation=_sorted_partitions(pending_revocation,
                                                         _CurrentPartitionsBody),
    )
    return versioned(CONSUMER_GROUP_VALUE_VERSION,
                     CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE, body)


def read_current_member_assignment_value(data: bytes | memoryview
                                         ) -> CurrentMemberAssignmentRecord:
    """Raises CorruptMessageError for an unknown version or a malformed body."""
    v = read_versioned(CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE, data)
    return CurrentMemberAssignmentRecord(
        member_epoch=v.member_epoch,
        previous_member_epoch=v.previous_member_epoch,
        state=v.state,
        assigned_partitions=_read_partitions(v.assigned_partitions),
        partitions_pending_revocation=_read_partitions(v.partitions_pending_revocation),
    )
