"""The ``__consumer_offsets`` record formats (kafkapy.coordinator.group.records).

The expected bytes are built here by hand with ``struct.pack``, field by field from Kafka's JSON
specs (OffsetCommitKey/Value, GroupMetadataKey/Value), so that the module's schema declarations
and the generic codec are checked against something they did not produce.
"""

from __future__ import annotations

import struct
import uuid

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkapy.coordinator.group.records import (
    ConsumerGroupKey,
    ConsumerGroupMetadataRecord,
    CurrentMemberAssignmentRecord,
    GroupKey,
    GroupMetadataRecord,
    MemberRecord,
    OffsetAndMetadata,
    OffsetKey,
    SubscriptionRecord,
    UnknownKey,
    consumer_group_key,
    consumer_group_metadata_value,
    current_member_assignment_value,
    group_metadata_key,
    group_metadata_value,
    member_metadata_value,
    offset_commit_key,
    offset_commit_value,
    partition_metadata_value,
    read_consumer_group_metadata_value,
    read_current_member_assignment_value,
    read_group_value,
    read_key,
    read_member_metadata_value,
    read_offset_value,
    read_partition_metadata_value,
    read_target_assignment_member_value,
    read_target_assignment_metadata_value,
    target_assignment_member_value,
    target_assignment_metadata_value,
)
from kafkapy.errors import CorruptMessageError

# ---------------------------------------------------------------------------------------------
# An independent encoder: Kafka's primitive types, written with struct.pack.


def i16(n: int) -> bytes:
    return struct.pack(">h", n)


def i32(n: int) -> bytes:
    return struct.pack(">i", n)


def i64(n: int) -> bytes:
    return struct.pack(">q", n)


def s(text: str | None) -> bytes:
    """STRING / NULLABLE_STRING: INT16 length (-1 for null), UTF-8 bytes."""
    if text is None:
        return i16(-1)
    raw = text.encode()
    return i16(len(raw)) + raw


def b(data: bytes) -> bytes:
    """BYTES: INT32 length, bytes."""
    return i32(len(data)) + data


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def cs(text: str | None) -> bytes:
    """COMPACT_(NULLABLE_)STRING: UNSIGNED_VARINT length + 1 (0 for null), UTF-8 bytes."""
    if text is None:
        return uvarint(0)
    raw = text.encode()
    return uvarint(len(raw) + 1) + raw


def cb(data: bytes) -> bytes:
    """COMPACT_BYTES: UNSIGNED_VARINT length + 1, bytes."""
    return uvarint(len(data) + 1) + data


NO_TAGS = uvarint(0)  # an empty tagged-field section


def offset_value_v3(v: OffsetAndMetadata) -> bytes:
    return i16(3) + i64(v.offset) + i32(v.leader_epoch) + s(v.metadata) + i64(v.commit_timestamp_ms)


def offset_value_v1(v: OffsetAndMetadata) -> bytes:
    return (i16(1) + i64(v.offset) + s(v.metadata) + i64(v.commit_timestamp_ms)
            + i64(v.expire_timestamp_ms))


def group_value_v3(g: GroupMetadataRecord) -> bytes:
    out = (i16(3) + s(g.protocol_type) + i32(g.generation) + s(g.protocol) + s(g.leader)
           + i64(g.current_state_timestamp_ms) + i32(len(g.members)))
    for m in g.members:
        out += (s(m.member_id) + s(m.group_instance_id) + s(m.client_id) + s(m.client_host)
                + i32(m.rebalance_timeout_ms) + i32(m.session_timeout_ms) + b(m.subscription)
                + b(m.assignment))
    return out


def group_value_v4(g: GroupMetadataRecord) -> bytes:
    out = (i16(4) + cs(g.protocol_type) + i32(g.generation) + cs(g.protocol) + cs(g.leader)
           + i64(g.current_state_timestamp_ms) + uvarint(len(g.members) + 1))
    for m in g.members:
        out += (cs(m.member_id) + cs(m.group_instance_id) + cs(m.client_id) + cs(m.client_host)
                + i32(m.rebalance_timeout_ms) + i32(m.session_timeout_ms) + cb(m.subscription)
                + cb(m.assignment) + NO_TAGS)
    return out + NO_TAGS


# A consumer subscription (ConsumerProtocolSubscription v0: topics ["t"], null user data) and
# assignment, as a real member would send them; the coordinator treats both as opaque bytes.
SUBSCRIPTION = i16(0) + i32(1) + s("t") + i32(-1)
ASSIGNMENT = i16(0) + i32(1) + s("t") + i32(2) + i32(0) + i32(1) + i32(-1)

DYNAMIC = MemberRecord(
    member_id="consumer-1-6f1c", group_instance_id=None, client_id="consumer-1",
    client_host="/10.0.0.1", rebalance_timeout_ms=300000, session_timeout_ms=45000,
    subscription=SUBSCRIPTION, assignment=ASSIGNMENT,
)
STATIC = MemberRecord(
    member_id="inst-Ω-9a2b", group_instance_id="instance-Ω", client_id="клиент",
    client_host="/10.0.0.2", rebalance_timeout_ms=60000, session_timeout_ms=10000,
    subscription=b"", assignment=b"\x00\x01",
)
STABLE = GroupMetadataRecord(
    protocol_type="consumer", generation=7, protocol="range", leader=DYNAMIC.member_id,
    current_state_timestamp_ms=1_700_000_000_123, members=(DYNAMIC, STATIC),
)
# What Kafka writes for a group that became Empty (newEmptyGroupMetadataRecord).
EMPTY = GroupMetadataRecord(
    protocol_type="", generation=0, protocol=None, leader=None,
    current_state_timestamp_ms=1_700_000_000_000, members=(),
)


# ---------------------------------------------------------------------------------------------
# Keys


def test_offset_commit_key_is_version_1_with_group_topic_partition() -> None:
    expected = i16(1) + s("my-group") + s("tópico-ß") + i32(7)
    assert offset_commit_key("my-group", "tópico-ß", 7) == expected
    assert read_key(expected) == OffsetKey("my-group", "tópico-ß", 7)


def test_offset_commit_key_version_0_reads_the_same() -> None:
    assert read_key(i16(0) + s("g") + s("t") + i32(2**31 - 1)) == OffsetKey("g", "t", 2**31 - 1)


def test_group_metadata_key_is_version_2_with_group() -> None:
    expected = i16(2) + s("grüppe-日本")
    assert group_metadata_key("grüppe-日本") == expected
    assert read_key(expected) == GroupKey("grüppe-日本")


def test_empty_group_id_key() -> None:
    assert group_metadata_key("") == i16(2) + i16(0)
    assert read_key(i16(2) + i16(0)) == GroupKey("")


@pytest.mark.parametrize("version", [9, 10, 16, 17, 100, 32767, -1, -32768])
def test_other_key_versions_are_unknown_record_types(version: int) -> None:
    # e.g. 9 is a share group's partition metadata, 16 a resolved regular expression
    assert read_key(i16(version) + s("g")) == UnknownKey(version)
    assert read_key(i16(version)) == UnknownKey(version)


def test_keys_accept_memoryviews() -> None:
    data = b"xx" + offset_commit_key("g", "t", 1)
    assert read_key(memoryview(data)[2:]) == OffsetKey("g", "t", 1)


# ---------------------------------------------------------------------------------------------
# OffsetCommitValue


def test_offset_value_without_expiry_is_v3() -> None:
    value = OffsetAndMetadata(offset=42, leader_epoch=5, metadata="méta", commit_timestamp_ms=1000)
    expected = i16(3) + i64(42) + i32(5) + s("méta") + i64(1000)
    assert offset_commit_value(value) == expected
    assert offset_value_v3(value) == expected
    assert read_offset_value(expected) == value


def test_offset_value_v3_without_leader_epoch() -> None:
    value = OffsetAndMetadata(offset=0, commit_timestamp_ms=5)
    expected = i16(3) + i64(0) + i32(-1) + s("") + i64(5)
    assert offset_commit_value(value) == expected
    assert read_offset_value(expected) == value


def test_offset_value_with_expiry_is_v1_and_drops_the_leader_epoch() -> None:
    value = OffsetAndMetadata(offset=42, leader_epoch=5, metadata="m", commit_timestamp_ms=1000,
                              expire_timestamp_ms=2000)
    expected = i16(1) + i64(42) + s("m") + i64(1000) + i64(2000)
    assert offset_commit_value(value) == expected
    assert read_offset_value(expected) == attrs.evolve(value, leader_epoch=-1)


def test_offset_value_v0() -> None:
    data = i16(0) + i64(9) + s("ü") + i64(123)
    assert read_offset_value(data) == OffsetAndMetadata(
        offset=9, leader_epoch=-1, metadata="ü", commit_timestamp_ms=123, expire_timestamp_ms=-1)


def test_offset_value_v2() -> None:
    data = i16(2) + i64(2**63 - 1) + s("") + i64(-1)
    assert read_offset_value(data) == OffsetAndMetadata(offset=2**63 - 1, commit_timestamp_ms=-1)


def test_offset_value_v4_flexible() -> None:
    data = i16(4) + i64(10) + i32(3) + cs("meta-δ") + i64(77) + NO_TAGS
    assert read_offset_value(data) == OffsetAndMetadata(
        offset=10, leader_epoch=3, metadata="meta-δ", commit_timestamp_ms=77)


def test_offset_value_v4_skips_unknown_tagged_fields() -> None:
    tags = uvarint(2) + uvarint(0) + uvarint(3) + b"abc" + uvarint(9) + uvarint(0)
    data = i16(4) + i64(10) + i32(3) + cs("") + i64(77) + tags
    assert read_offset_value(data) == OffsetAndMetadata(
        offset=10, leader_epoch=3, metadata="", commit_timestamp_ms=77)


# ---------------------------------------------------------------------------------------------
# GroupMetadataValue


def test_group_value_is_v3_field_by_field() -> None:
    expected = (
        i16(3) + s("consumer") + i32(7) + s("range") + s("consumer-1-6f1c")
        + i64(1_700_000_000_123) + i32(2)
        # a dynamic member: null group instance id
        + s("consumer-1-6f1c") + i16(-1) + s("consumer-1") + s("/10.0.0.1")
        + i32(300000) + i32(45000) + i32(len(SUBSCRIPTION)) + SUBSCRIPTION
        + i32(len(ASSIGNMENT)) + ASSIGNMENT
        # a static member, non-ASCII strings
        + s("inst-Ω-9a2b") + s("instance-Ω") + s("клиент") + s("/10.0.0.2")
        + i32(60000) + i32(10000) + i32(0) + i32(2) + b"\x00\x01"
    )
    assert group_metadata_value(STABLE) == expected
    assert group_value_v3(STABLE) == expected
    assert read_group_value(expected) == STABLE


def test_empty_group_value_has_null_protocol_and_leader() -> None:
    expected = i16(3) + s("") + i32(0) + i16(-1) + i16(-1) + i64(1_700_000_000_000) + i32(0)
    assert group_metadata_value(EMPTY) == expected
    assert read_group_value(expected) == EMPTY


def test_group_value_v0_rebalance_timeout_is_the_session_timeout() -> None:
    data = (i16(0) + s("consumer") + i32(3) + s("roundrobin") + s("m-1") + i32(1)
            + s("m-1") + s("client") + s("/h") + i32(30000) + b(b"sub") + b(b"asg"))
    assert read_group_value(data) == GroupMetadataRecord(
        protocol_type="consumer", generation=3, protocol="roundrobin", leader="m-1",
        current_state_timestamp_ms=-1,
        members=(MemberRecord("m-1", None, "client", "/h", rebalance_timeout_ms=30000,
                              session_timeout_ms=30000, subscription=b"sub",
                              assignment=b"asg"),),
    )


def test_group_value_v1_has_a_rebalance_timeout() -> None:
    data = (i16(1) + s("consumer") + i32(3) + s("range") + s("m-1") + i32(1)
            + s("m-1") + s("client") + s("/h") + i32(300000) + i32(10000) + b(b"") + b(b""))
    assert read_group_value(data) == GroupMetadataRecord(
        protocol_type="consumer", generation=3, protocol="range", leader="m-1",
        current_state_timestamp_ms=-1,
        members=(MemberRecord("m-1", None, "client", "/h", 300000, 10000, b"", b""),),
    )


def test_group_value_v2_has_a_state_timestamp() -> None:
    data = (i16(2) + s("") + i32(0) + s(None) + s(None) + i64(555) + i32(1)
            + s("m") + s("c") + s("h") + i32(1) + i32(2) + b(b"x") + b(b"y"))
    assert read_group_value(data) == GroupMetadataRecord(
        protocol_type="", generation=0, protocol=None, leader=None,
        current_state_timestamp_ms=555,
        members=(MemberRecord("m", None, "c", "h", 1, 2, b"x", b"y"),),
    )


def test_group_value_v4_flexible() -> None:
    data = (
        i16(4) + cs("consumer") + i32(7) + cs("range") + cs("consumer-1-6f1c")
        + i64(1_700_000_000_123) + uvarint(3)
        + cs("consumer-1-6f1c") + uvarint(0) + cs("consumer-1") + cs("/10.0.0.1")
        + i32(300000) + i32(45000) + uvarint(len(SUBSCRIPTION) + 1) + SUBSCRIPTION
        + uvarint(len(ASSIGNMENT) + 1) + ASSIGNMENT + NO_TAGS
        + cs("inst-Ω-9a2b") + cs("instance-Ω") + cs("клиент") + cs("/10.0.0.2")
        + i32(60000) + i32(10000) + uvarint(1) + uvarint(3) + b"\x00\x01" + NO_TAGS
        + NO_TAGS
    )
    assert group_value_v4(STABLE) == data
    assert read_group_value(data) == STABLE


def test_group_value_v4_null_protocol_and_leader_no_members() -> None:
    data = i16(4) + cs("") + i32(0) + uvarint(0) + uvarint(0) + i64(-1) + uvarint(1) + NO_TAGS
    assert read_group_value(data) == GroupMetadataRecord("", 0, None, None, -1, ())


def test_group_value_v4_skips_unknown_tagged_fields() -> None:
    member = (cs("m") + cs(None) + cs("c") + cs("h") + i32(1) + i32(2) + cb(b"") + cb(b"")
              + uvarint(1) + uvarint(4) + uvarint(1) + b"z")
    data = (i16(4) + cs("p") + i32(1) + cs("x") + cs("m") + i64(9) + uvarint(2) + member
            + uvarint(1) + uvarint(100) + uvarint(2) + b"zz")
    assert read_group_value(data) == GroupMetadataRecord(
        "p", 1, "x", "m", 9, (MemberRecord("m", None, "c", "h", 1, 2, b"", b""),))


# ---------------------------------------------------------------------------------------------
# Trailing bytes: Kafka's readers stop where the body ends.


def test_trailing_bytes_are_ignored() -> None:
    junk = b"\xff\x00junk"
    assert read_key(offset_commit_key("g", "t", 0) + junk) == OffsetKey("g", "t", 0)
    assert read_key(group_metadata_key("g") + junk) == GroupKey("g")
    value = OffsetAndMetadata(1, 2, "m", 3)
    assert read_offset_value(offset_commit_value(value) + junk) == value
    assert read_group_value(group_metadata_value(STABLE) + junk) == STABLE


# ---------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("data", [
    b"",
    b"\x00",
    i16(1),                                   # no body
    i16(1) + s("g") + s("t") + b"\x00\x00",   # partition cut short
    i16(0) + s("g") + i16(5) + b"ab",         # topic cut short
    i16(1) + s(None) + s("t") + i32(0),       # null group
    i16(1) + s("g") + i16(-2) + i32(0),       # negative length
    i16(2),
    i16(2) + i16(3) + b"\xff\xfe\xfd",        # invalid UTF-8
], ids=repr)
def test_bad_keys(data: bytes) -> None:
    with pytest.raises(CorruptMessageError):
        read_key(data)


@pytest.mark.parametrize("data", [
    b"",
    b"\x00",
    i16(3),
    i16(3) + i64(1) + i32(0) + s("m"),         # no commit timestamp
    i16(1) + i64(1) + s("m") + i64(0),         # v1 without its expire timestamp
    i16(3) + i64(1) + i32(0) + s(None) + i64(0),   # null metadata is not in the schema
    i16(3) + i64(1) + i32(0) + i16(2) + b"\xc3\x28" + i64(0),  # invalid UTF-8
    i16(4) + i64(1) + i32(0) + cs("m") + i64(0),   # no tagged-field section
    i16(4) + i64(1) + i32(0) + cs("m") + i64(0) + uvarint(1) + uvarint(0) + uvarint(5) + b"ab",
    i16(5) + i64(1) + i32(0) + s("m") + i64(0),    # a version Kafka never defined
    i16(-1) + i64(1) + s("m") + i64(0),
], ids=repr)
def test_bad_offset_values(data: bytes) -> None:
    with pytest.raises(CorruptMessageError):
        read_offset_value(data)


def test_unknown_value_versions_say_so() -> None:
    with pytest.raises(CorruptMessageError, match="unknown version 5"):
        read_offset_value(i16(5) + b"\x00" * 30)
    with pytest.raises(CorruptMessageError, match="unknown version 32767"):
        read_group_value(i16(32767) + b"\x00" * 30)


_MEMBER_V3 = s("m") + s(None) + s("c") + s("h") + i32(1) + i32(2) + b(b"x") + b(b"y")


@pytest.mark.parametrize("data", [
    b"",
    b"\x01",
    i16(3) + s("consumer") + i32(1),
    i16(3) + s(None) + i32(1) + s("p") + s("l") + i64(0) + i32(0),    # null protocol type
    i16(3) + s("c") + i32(1) + s("p") + s("l") + i64(0) + i32(-1),    # null members
    i16(3) + s("c") + i32(1) + s("p") + s("l") + i64(0) + i32(-2),    # negative count
    i16(3) + s("c") + i32(1) + s("p") + s("l") + i64(0) + i32(1000) + _MEMBER_V3,
    i16(3) + s("c") + i32(1) + s("p") + s("l") + i64(0) + i32(2) + _MEMBER_V3,
    i16(3) + s("c") + i32(1) + s("p") + s("l") + i64(0) + i32(1) + _MEMBER_V3[:-1],
    i16(3) + s("c") + i32(1) + s("p") + s("l") + i64(0) + i32(1)
    + _MEMBER_V3[:-5] + i32(100) + b"y",                                # bytes cut short
    i16(4) + cs("c") + i32(1) + cs("p") + cs("l") + i64(0) + uvarint(1),  # no tag section
    i16(4) + cs("c") + i32(1) + cs("p") + cs("l") + i64(0) + uvarint(0) + NO_TAGS,  # null
    i16(4) + cs("c") + i32(1) + cs("p") + b"\x80",                      # truncated varint
    i16(5) + s("c") + i32(1) + s("p") + s("l") + i64(0) + i32(0),
    i16(-1) + s("c") + i32(1) + s("p") + s("l") + i32(0),
], ids=repr)
def test_bad_group_values(data: bytes) -> None:
    with pytest.raises(CorruptMessageError):
        read_group_value(data)


def test_a_v3_body_labelled_v0_is_not_silently_misread() -> None:
    # v3's state timestamp (8 zero bytes) would be read by v0 as a member count of 0 plus 4
    # trailing bytes: that is a valid v0 value, with no members. Kafka reads it the same way;
    # the version is the only guard. This documents it rather than pretending otherwise.
    data = i16(0) + s("c") + i32(1) + s("p") + s("l") + i64(0)
    assert read_group_value(data) == GroupMetadataRecord("c", 1, "p", "l", -1, ())


# ---------------------------------------------------------------------------------------------
# Properties

_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20)
_int32 = st.integers(-(2**31), 2**31 - 1)
_int64 = st.integers(-(2**63), 2**63 - 1)

_offsets = st.builds(
    OffsetAndMetadata,
    offset=_int64,
    leader_epoch=st.one_of(st.just(-1), _int32),
    metadata=_text,
    commit_timestamp_ms=_int64,
    expire_timestamp_ms=st.one_of(st.just(-1), _int64),
)

_members = st.builds(
    MemberRecord,
    member_id=_text,
    group_instance_id=st.one_of(st.none(), _text),
    client_id=_text,
    client_host=_text,
    rebalance_timeout_ms=_int32,
    session_timeout_ms=_int32,
    subscription=st.binary(max_size=30),
    assignment=st.binary(max_size=30),
)

_groups = st.builds(
    GroupMetadataRecord,
    protocol_type=_text,
    generation=_int32,
    protocol=st.one_of(st.none(), _text),
    leader=st.one_of(st.none(), _text),
    current_state_timestamp_ms=st.one_of(st.just(-1), _int64),
    members=st.lists(_members, max_size=4).map(tuple),
)


@given(_offsets)
def test_offset_value_round_trip(value: OffsetAndMetadata) -> None:
    data = offset_commit_value(value)
    if value.expire_timestamp_ms == -1:
        assert data == offset_value_v3(value)
        assert read_offset_value(data) == value
    else:
        assert data == offset_value_v1(value)
        assert read_offset_value(data) == attrs.evolve(value, leader_epoch=-1)


@given(_groups)
def test_group_value_round_trip(value: GroupMetadataRecord) -> None:
    data = group_metadata_value(value)
    assert data == group_value_v3(value)
    assert read_group_value(data) == value


@given(_groups)
def test_group_value_v4_reads_as_v3(value: GroupMetadataRecord) -> None:
    assert read_group_value(group_value_v4(value)) == value


@given(_text, _text, _int32)
def test_key_round_trip(group: str, topic: str, partition: int) -> None:
    assert read_key(offset_commit_key(group, topic, partition)) == \
        OffsetKey(group, topic, partition)
    assert read_key(group_metadata_key(group)) == GroupKey(group)


@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_corrupt_message(data: bytes) -> None:
    # The only outcomes allowed for garbage: a value, or CorruptMessageError.
    for reader in (read_key, read_offset_value, read_group_value):
        try:
            reader(data)
        except CorruptMessageError:
            pass


# ---------------------------------------------------------------------------------------------
# KIP-848 consumer group records (ConsumerGroup*Key.json / *Value.json): keys are non-flexible,
# every value is v0 and flexible (compact strings and arrays, tagged-field sections).


def i8(n: int) -> bytes:
    return struct.pack(">b", n)


def u(topic_id: uuid.UUID) -> bytes:
    """UUID: 16 bytes, most significant first."""
    return topic_id.bytes


def carray(items: list[bytes]) -> bytes:
    """COMPACT_ARRAY: UNSIGNED_VARINT count + 1, the elements."""
    return uvarint(len(items) + 1) + b"".join(items)


T1 = uuid.UUID("0b5f5d5e-3c1a-4a43-9d3e-6a0f3f3a1e01")
T2 = uuid.UUID("7e0d2c4b-1111-4c0c-8f00-000000000002")


@pytest.mark.parametrize(("record_type", "member"), [
    (3, None), (4, None), (5, "m-1"), (6, None), (7, "m-1"), (8, "m-1")])
def test_consumer_group_keys(record_type: int, member: str | None) -> None:
    expected = i16(record_type) + s("grüppe") + (s(member) if member is not None else b"")
    assert consumer_group_key(record_type, "grüppe", member) == expected
    assert read_key(expected) == ConsumerGroupKey(record_type, "grüppe", member)


@pytest.mark.parametrize(("record_type", "member"), [(3, "m"), (5, None), (2, None), (9, None)])
def test_consumer_group_key_refuses_what_does_not_fit(record_type: int,
                                                     member: str | None) -> None:
    with pytest.raises(ValueError):
        consumer_group_key(record_type, "g", member)


@pytest.mark.parametrize("data", [
    i16(3), i16(3) + s(None), i16(5) + s("g"), i16(5) + s("g") + s(None),
    i16(7) + s("g") + i16(4) + b"ab", i16(8) + s("g") + s("m")[:-1],
], ids=repr)
def test_bad_consumer_group_keys(data: bytes) -> None:
    with pytest.raises(CorruptMessageError):
        read_key(data)


def test_group_epoch_value() -> None:
    expected = i16(0) + i32(7) + NO_TAGS
    assert consumer_group_metadata_value(7) == expected
    assert read_consumer_group_metadata_value(expected) == ConsumerGroupMetadataRecord(7, 0)


def test_group_epoch_value_of_kafka_4_1_has_a_metadata_hash() -> None:
    # tag 0: MetadataHash INT64 (KIP-1101); tag 1 (CreationTimeMs, KIP-1282) is not known here
    tags = uvarint(2) + uvarint(0) + uvarint(8) + i64(-123456789) + uvarint(1) + uvarint(8) \
        + i64(1_700_000_000_000)
    assert read_consumer_group_metadata_value(i16(0) + i32(3) + tags) == \
        ConsumerGroupMetadataRecord(3, -123456789)


def test_partition_metadata_value_sorted_by_name_without_racks() -> None:
    expected = i16(0) + carray([
        u(T2) + cs("alpha") + i32(3) + carray([]) + NO_TAGS,
        u(T1) + cs("beta") + i32(12) + carray([]) + NO_TAGS,
    ]) + NO_TAGS
    topics = {"beta": (T1, 12), "alpha": (T2, 3)}
    assert partition_metadata_value(topics) == expected
    assert read_partition_metadata_value(expected) == topics


def test_partition_metadata_value_with_racks_reads() -> None:
    # Kafka 3.7-4.0 may store racks per partition; they are read past.
    data = i16(0) + carray([
        u(T1) + cs("t") + i32(2) + carray([
            i32(0) + carray([cs("r1"), cs("r2")]) + NO_TAGS,
            i32(1) + carray([cs("r1")]) + NO_TAGS,
        ]) + NO_TAGS]) + NO_TAGS
    assert read_partition_metadata_value(data) == {"t": (T1, 2)}


SUBSCRIPTION_RECORD = SubscriptionRecord(
    instance_id="instance-Ω", rack_id=None, client_id="rdkafka", client_host="/127.0.0.1",
    subscribed_topic_names=("b", "a"), subscribed_topic_regex=None, rebalance_timeout_ms=300000,
    server_assignor="uniform")


def test_member_metadata_value_field_by_field() -> None:
    r = SUBSCRIPTION_RECORD
    expected = (i16(0) + cs(r.instance_id) + cs(None) + cs(r.client_id) + cs(r.client_host)
                + carray([cs("a"), cs("b")]) + cs(None) + i32(300000) + cs("uniform") + NO_TAGS)
    assert member_metadata_value(r) == expected
    assert read_member_metadata_value(expected) == attrs.evolve(
        r, subscribed_topic_names=("a", "b"))


def test_member_metadata_value_skips_classic_member_metadata() -> None:
    # tag 0: ClassicMemberMetadata {SessionTimeoutMs, SupportedProtocols [Name, Metadata]}
    classic = i32(45000) + carray([cs("range") + cb(b"\x00\x01") + NO_TAGS]) + NO_TAGS
    data = (i16(0) + cs(None) + cs("rack") + cs("c") + cs("h") + carray([cs("t")])
            + cs("^t.*") + i32(-1) + cs(None) + uvarint(1) + uvarint(0) + uvarint(len(classic))
            + classic)
    assert read_member_metadata_value(data) == SubscriptionRecord(
        None, "rack", "c", "h", ("t",), "^t.*", -1, None)


def test_target_assignment_values() -> None:
    expected = i16(0) + carray([
        u(T1) + carray([i32(0), i32(4)]) + NO_TAGS,
        u(T2) + carray([i32(1)]) + NO_TAGS,
    ]) + NO_TAGS
    assert target_assignment_member_value({T2: {1}, T1: [4, 0]}) == expected
    assert read_target_assignment_member_value(expected) == ((T1, (0, 4)), (T2, (1,)))
    assert target_assignment_member_value({}) == i16(0) + carray([]) + NO_TAGS
    assert target_assignment_metadata_value(12) == i16(0) + i32(12) + NO_TAGS
    assert read_target_assignment_metadata_value(i16(0) + i32(12) + NO_TAGS) == 12


def test_current_member_assignment_value() -> None:
    expected = (i16(0) + i32(5) + i32(4) + i8(1)
                + carray([u(T1) + carray([i32(2)]) + NO_TAGS])
                + carray([u(T2) + carray([i32(0), i32(3)]) + NO_TAGS]) + NO_TAGS)
    assert current_member_assignment_value(5, 4, 1, {T1: {2}}, {T2: {3, 0}}) == expected
    assert read_current_member_assignment_value(expected) == CurrentMemberAssignmentRecord(
        5, 4, 1, ((T1, (2,)),), ((T2, (0, 3)),))


def test_current_member_assignment_skips_assignment_epochs() -> None:
    # tag 0 of TopicPartitions (KIP-1251, AssignmentEpochs []int32) is not known here
    epochs = carray([i32(5)])
    data = (i16(0) + i32(5) + i32(4) + i8(0)
            + carray([u(T1) + carray([i32(2)]) + uvarint(1) + uvarint(0)
                      + uvarint(len(epochs)) + epochs])
            + carray([]) + NO_TAGS)
    assert read_current_member_assignment_value(data) == CurrentMemberAssignmentRecord(
        5, 4, 0, ((T1, (2,)),), ())


@pytest.mark.parametrize(("read", "data"), [
    (read_consumer_group_metadata_value, i16(0) + i32(1)),           # no tagged section
    (read_consumer_group_metadata_value, i16(1) + i32(1) + NO_TAGS),  # unknown version
    (read_consumer_group_metadata_value, b"\x00"),
    (read_partition_metadata_value, i16(0) + uvarint(0) + NO_TAGS),   # null topics
    (read_partition_metadata_value, i16(0) + carray([u(T1)[:8]])),
    (read_member_metadata_value, i16(0) + cs(None) + cs(None) + cs(None)),   # null client id
    (read_member_metadata_value, i16(0) + cs(None) + cs(None) + cs("c") + cs("h")
     + uvarint(0) + cs(None) + i32(1) + cs(None) + NO_TAGS),           # null topic names
    (read_target_assignment_member_value, i16(0) + carray([u(T1) + uvarint(5) + i32(1)])),
    (read_target_assignment_metadata_value, i16(0) + i16(1)),
    (read_current_member_assignment_value, i16(0) + i32(1) + i32(0) + i8(0) + carray([])),
    (read_current_member_assignment_value, i16(-1) + i32(1) + i32(0) + i8(0)),
], ids=lambda v: getattr(v, "__name__", None) or repr(v))   # one id in every worker
def test_bad_consumer_group_values(read: object, data: bytes) -> None:
    with pytest.raises(CorruptMessageError):
        read(data)  # type: ignore[operator]


uuids = st.builds(uuid.UUID, int=st.integers(0, 2**128 - 1))
assignments = st.dictionaries(uuids, st.frozensets(st.integers(0, 2**31 - 1), min_size=1),
                              max_size=4)


@given(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**31), 2**31 - 1),
       st.sampled_from([0, 1, 2, 127]), assignments, assignments)
def test_current_member_assignment_round_trip(epoch: int, previous: int, state: int,
                                              assigned: dict[uuid.UUID, frozenset[int]],
                                              pending: dict[uuid.UUID, frozenset[int]]) -> None:
    record = read_current_member_assignment_value(
        current_member_assignment_value(epoch, previous, state, assigned, pending))
    assert (record.member_epoch, record.previous_member_epoch, record.state) == \
        (epoch, previous, state)
    assert {t: frozenset(p) for t, p in record.assigned_partitions} == assigned
    assert {t: frozenset(p) for t, p in record.partitions_pending_revocation} == pending


@given(st.builds(
    SubscriptionRecord,
    instance_id=st.none() | st.text(max_size=20), rack_id=st.none() | st.text(max_size=20),
    client_id=st.text(max_size=20), client_host=st.text(max_size=20),
    subscribed_topic_names=st.lists(st.text(max_size=20), max_size=5, unique=True)
    .map(lambda names: tuple(sorted(names))),
    subscribed_topic_regex=st.none() | st.text(max_size=20),
    rebalance_timeout_ms=st.integers(-(2**31), 2**31 - 1),
    server_assignor=st.none() | st.sampled_from(["uniform", "range"])))
def test_member_metadata_round_trip(record: SubscriptionRecord) -> None:
    assert read_member_metadata_value(member_metadata_value(record)) == record
