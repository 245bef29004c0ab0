"""The records of the classic group coordinator in ``__consumer_offsets``: keys and values.

Theory of operation
-------------------
This module owns the byte formats, nothing else: what the group coordinator appends to its
``__consumer_offsets`` partition and what it reads back when it loads one. It is pure (no I/O,
no state) and may be called from any task or thread.

Every key and every value starts with an INT16 version. The key's version says what the record
is (Kafka's loader dispatches on it); the value's version says how its body is laid out. A null
value (a tombstone, handled by the caller) deletes what the key names. The schemas are Kafka's
(``group-coordinator/src/main/resources/common/message/*.json``, in older releases under
``core/src/main/resources/common/message``), declared once below with kafkapy's schema language
and encoded by the generic codec::

    key version 0 or 1: OffsetCommitKey       group STRING, topic STRING, partition INT32
    key version 2:      GroupMetadataKey      group STRING
    any other version:  a record type of the new coordinator (consumer groups, share groups,
                        streams groups); returned as UnknownKey so that a loader skips it.

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
"""

from __future__ import annotations

from typing import Any

import attrs

from kafkapy import _codec
from kafkapy.errors import CorruptMessageError, InvalidRequestError
from kafkapy.protocol.classes import class_for, struct_classes
from kafkapy.protocol.codec import encode, message_plan
from kafkapy.protocol.schema import BYTES, INT32, INT64, STRING, Message, field

__all__ = [
    "GroupKey",
    "GroupMetadataRecord",
    "MemberRecord",
    "OffsetAndMetadata",
    "OffsetKey",
    "UnknownKey",
    "group_metadata_key",
    "group_metadata_value",
    "offset_commit_key",
    "offset_commit_value",
    "read_group_value",
    "read_key",
    "read_offset_value",
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
class UnknownKey:
    """A key of a record type this module does not know (the new coordinator's consumer,
    share and streams group records); a loader skips such records."""

    version: int


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


def _prefixed(version: int, message: Message, body: Any) -> bytes:
    return version.to_bytes(2, "big", signed=True) + encode(message, version, body)


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """The key of a committed offset (version 1).

    Raises ValueError for a string longer than 32767 UTF-8 bytes and OverflowError for a
    partition outside INT32."""
    body = _OffsetKeyBody(group=group, topic=topic, partition=partition)
    return _prefixed(OFFSET_KEY_VERSION, OFFSET_COMMIT_KEY, body)


def group_metadata_key(group: str) -> bytes:
    """The key of a group's metadata (version 2). Raises ValueError for a group id longer
    than 32767 UTF-8 bytes."""
    return _prefixed(GROUP_KEY_VERSION, GROUP_METADATA_KEY, _GroupKeyBody(group=group))


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
    return _prefixed(version, OFFSET_COMMIT_VALUE, body)


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
    return _prefixed(GROUP_VALUE_VERSION, GROUP_METADATA_VALUE, body)


def _version(view: memoryview, what: str) -> int:
    if view.nbytes < 2:
        raise CorruptMessageError(f"{what} of {view.nbytes} bytes has no version")
    return int.from_bytes(view[:2], "big", signed=True)


def _body(message: Message, version: int, view: memoryview, what: str) -> Any:
    # Not codec.decode: Kafka's readers stop where the body ends and ignore anything after it.
    try:
        body, _end = _codec.decode_struct(message_plan(message, version), view, 2)
    except InvalidRequestError as e:
        raise CorruptMessageError(f"{what} v{version}: {e.message}") from e
    return body


def read_key(data: bytes | memoryview) -> OffsetKey | GroupKey | UnknownKey:
    """Decode a record key. Raises CorruptMessageError for a key too short for its version
    or with a malformed body (truncated, invalid UTF-8, a null group, topic or partition)."""
    view = memoryview(data)
    version = _version(view, "key")
    if version in OFFSET_COMMIT_KEY.valid:
        key = _body(OFFSET_COMMIT_KEY, version, view, "offset commit key")
        return OffsetKey(key.group, key.topic, key.partition)
    if version in GROUP_METADATA_KEY.valid:
        return GroupKey(_body(GROUP_METADATA_KEY, version, view, "group metadata key").group)
    return UnknownKey(version)


def read_offset_value(data: bytes | memoryview) -> OffsetAndMetadata:
    """Decode an offset commit value of any version (0-4). Raises CorruptMessageError for a
    version Kafka never defined or a malformed body."""
    view = memoryview(data)
    version = _version(view, "offset commit value")
    if version not in OFFSET_COMMIT_VALUE.valid:
        raise CorruptMessageError(
            f"offset commit value has unknown version {version} "
            f"(known: {OFFSET_COMMIT_VALUE.valid})")
    v = _body(OFFSET_COMMIT_VALUE, version, view, "offset commit value")
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
    view = memoryview(data)
    version = _version(view, "group metadata value")
    if version not in GROUP_METADATA_VALUE.valid:
        raise CorruptMessageError(
            f"group metadata value has unknown version {version} "
            f"(known: {GROUP_METADATA_VALUE.valid})")
    v = _body(GROUP_METADATA_VALUE, version, view, "group metadata value")
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
