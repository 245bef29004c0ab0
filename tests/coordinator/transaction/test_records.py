"""The ``__transaction_state`` record formats (kafkapy.coordinator.transaction.records).

The expected bytes are built here by hand with ``struct.pack``, field by field from Kafka's JSON
specs (TransactionLogKey.json, TransactionLogValue.json: v0 non-flexible, v1 flexible with the
tagged PreviousProducerId (0), NextProducerId (1) and ClientTransactionVersion (2)), so that the
module's schema declarations and the generic codec are checked against something they did not
produce.
"""

from __future__ import annotations

import struct

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.transaction.records import (
    TRANSACTION_LOG_VALUE_VERSION,
    TransactionKey,
    TransactionLogValue,
    UnknownKey,
    log_value_version,
    read_key,
    read_transaction_log_value,
    transaction_log_key,
    transaction_log_value,
)
from kafkapy.errors import CorruptMessageError

# ---------------------------------------------------------------------------------------------
# An independent encoder: Kafka's primitive types, written with struct.pack.


def i8(n: int) -> bytes:
    return struct.pack(">b", n)


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


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def cs(text: str) -> bytes:
    """COMPACT_STRING: UNSIGNED_VARINT length + 1, UTF-8 bytes."""
    raw = text.encode()
    return uvarint(len(raw) + 1) + raw


NO_TAGS = uvarint(0)


def partitions_v0(topics: list[tuple[str, list[int]]] | None) -> bytes:
    if topics is None:
        return i32(-1)
    out = i32(len(topics))
    for topic, ids in topics:
        out += s(topic) + i32(len(ids)) + b"".join(i32(p) for p in ids)
    return out


def partitions_v1(topics: list[tuple[str, list[int]]] | None) -> bytes:
    if topics is None:
        return uvarint(0)
    out = uvarint(len(topics) + 1)
    for topic, ids in topics:
        out += cs(topic) + uvarint(len(ids) + 1) + b"".join(i32(p) for p in ids) + NO_TAGS
    return out


def value_v0(pid: int, epoch: int, timeout: int, state: int,
             topics: list[tuple[str, list[int]]] | None, last_update: int, start: int) -> bytes:
    return (i16(0) + i64(pid) + i16(epoch) + i32(timeout) + i8(state) + partitions_v0(topics)
            + i64(last_update) + i64(start))


def value_v1(pid: int, epoch: int, timeout: int, state: int,
             topics: list[tuple[str, list[int]]] | None, last_update: int, start: int,
             tags: bytes = NO_TAGS) -> bytes:
    return (i16(1) + i64(pid) + i16(epoch) + i32(timeout) + i8(state) + partitions_v1(topics)
            + i64(last_update) + i64(start) + tags)


def tps(*pairs: tuple[str, int]) -> frozenset[TopicPartition]:
    return frozenset(TopicPartition(t, p) for t, p in pairs)


# An Ongoing transaction over three partitions of two topics (given unsorted: written sorted).
ONGOING = TransactionLogValue(
    producer_id=4001, producer_epoch=7, txn_timeout_ms=60_000, state=1,
    topic_partitions=tps(("orders", 2), ("__consumer_offsets", 17), ("orders", 0)),
    txn_last_update_timestamp=1_700_000_000_456, txn_start_timestamp=1_700_000_000_123)
ONGOING_TOPICS = [("__consumer_offsets", [17]), ("orders", [0, 2])]

# What InitProducerId leaves: Empty, no partitions, no start time.
EMPTY = TransactionLogValue(
    producer_id=0, producer_epoch=0, txn_timeout_ms=900_000, state=0,
    topic_partitions=frozenset(), txn_last_update_timestamp=1_700_000_000_000,
    txn_start_timestamp=-1)

# What the markers leave: CompleteCommit, partitions cleared (an empty array, not null).
COMPLETE = TransactionLogValue(
    producer_id=2**40, producer_epoch=32766, txn_timeout_ms=1, state=4,
    topic_partitions=frozenset(), txn_last_update_timestamp=2, txn_start_timestamp=1)


# ---------------------------------------------------------------------------------------------
# Key


def test_key_is_version_0_with_the_transactional_id() -> None:
    expected = i16(0) + s("txn-Ω-日本")
    assert transaction_log_key("txn-Ω-日本") == expected
    assert read_key(expected) == TransactionKey("txn-Ω-日本")
    assert read_key(memoryview(b"xx" + expected)[2:]) == TransactionKey("txn-Ω-日本")


@pytest.mark.parametrize("version", [1, 2, 3, 100, -1, 32767])
def test_other_key_versions_are_unknown(version: int) -> None:
    assert read_key(i16(version) + s("t")) == UnknownKey(version)


@pytest.mark.parametrize("data", [b"", b"\x00", i16(0), i16(0) + i16(5) + b"ab",
                                  i16(0) + i16(-1), i16(0) + i16(2) + b"\xff\xfe"],
                         ids=["empty", "half-version", "no-id", "truncated", "null", "utf8"])
def test_malformed_keys_are_corrupt(data: bytes) -> None:
    with pytest.raises(CorruptMessageError):
        read_key(data)


# ---------------------------------------------------------------------------------------------
# Value: what is written


def test_kafka_4_writes_version_1_for_a_tv1_cluster() -> None:
    assert TRANSACTION_LOG_VALUE_VERSION == 1
    assert [log_value_version(tv) for tv in (0, 1, 2)] == [0, 1, 1]


def test_ongoing_value_v1_sorted_partitions_and_no_tags() -> None:
    expected = value_v1(4001, 7, 60_000, 1, ONGOING_TOPICS, 1_700_000_000_456,
                        1_700_000_000_123)
    assert transaction_log_value(ONGOING) == expected
    assert transaction_log_value(ONGOING, 1) == expected
    assert read_transaction_log_value(expected) == ONGOING


def test_ongoing_value_v0() -> None:
    expected = value_v0(4001, 7, 60_000, 1, ONGOING_TOPICS, 1_700_000_000_456,
                        1_700_000_000_123)
    assert transaction_log_value(ONGOING, 0) == expected
    assert read_transaction_log_value(expected) == ONGOING


def test_empty_state_writes_a_null_partitions_array() -> None:
    assert transaction_log_value(EMPTY) == value_v1(0, 0, 900_000, 0, None,
                                                    1_700_000_000_000, -1)
    assert transaction_log_value(EMPTY, 0) == value_v0(0, 0, 900_000, 0, None,
                                                       1_700_000_000_000, -1)
    assert read_transaction_log_value(transaction_log_value(EMPTY)) == EMPTY


def test_other_states_write_an_empty_array_when_they_have_no_partitions() -> None:
    assert transaction_log_value(COMPLETE) == value_v1(2**40, 32766, 1, 4, [], 2, 1)
    assert transaction_log_value(COMPLETE, 0) == value_v0(2**40, 32766, 1, 4, [], 2, 1)


def test_empty_state_with_partitions_is_refused() -> None:
    with pytest.raises(ValueError, match="Empty"):
        transaction_log_value(attrs.evolve(EMPTY, topic_partitions=tps(("t", 0))))


def test_tagged_fields_are_written_in_v1_only_when_not_default() -> None:
    value = attrs.evolve(ONGOING, previous_producer_id=4000, next_producer_id=4002,
                         client_transaction_version=2)
    tags = (uvarint(3) + uvarint(0) + uvarint(8) + i64(4000) + uvarint(1) + uvarint(8)
            + i64(4002) + uvarint(2) + uvarint(2) + i16(2))
    expected = value_v1(4001, 7, 60_000, 1, ONGOING_TOPICS, 1_700_000_000_456,
                        1_700_000_000_123, tags)
    assert transaction_log_value(value) == expected
    assert read_transaction_log_value(expected) == value
    only_version = attrs.evolve(ONGOING, client_transaction_version=1)
    assert transaction_log_value(only_version).endswith(
        i64(1_700_000_000_123) + uvarint(1) + uvarint(2) + uvarint(2) + i16(1))
    # v0 has no place for them: they are dropped.
    assert transaction_log_value(value, 0) == transaction_log_value(ONGOING, 0)


@pytest.mark.parametrize("version", [-1, 2])
def test_unknown_write_versions_are_refused(version: int) -> None:
    with pytest.raises(ValueError):
        transaction_log_value(ONGOING, version)


# ---------------------------------------------------------------------------------------------
# Value: what is read


def test_read_tagged_fields_in_any_order_and_skip_unknown_tags() -> None:
    tags = (uvarint(3) + uvarint(2) + uvarint(2) + i16(2) + uvarint(1) + uvarint(8) + i64(9)
            + uvarint(40) + uvarint(3) + b"abc")
    value = read_transaction_log_value(value_v1(5, 1, 10, 3, [("t", [1])], 20, 15, tags))
    assert value == TransactionLogValue(
        producer_id=5, producer_epoch=1, txn_timeout_ms=10, state=3,
        topic_partitions=tps(("t", 1)), txn_last_update_timestamp=20, txn_start_timestamp=15,
        previous_producer_id=-1, next_producer_id=9, client_transaction_version=2)


def test_v0_reads_with_tag_defaults_and_ignores_trailing_bytes() -> None:
    value = read_transaction_log_value(value_v0(5, 1, 10, 2, [("t", [0])], 20, 15) + b"junk")
    assert (value.previous_producer_id, value.next_producer_id,
            value.client_transaction_version) == (-1, -1, 0)
    assert value.topic_partitions == tps(("t", 0))


def test_empty_state_partitions_are_ignored_on_read() -> None:
    value = read_transaction_log_value(value_v0(5, 1, 10, 0, [("t", [0])], 20, -1))
    assert value.topic_partitions == frozenset()


def test_null_partitions_in_another_state_read_as_none() -> None:
    value = read_transaction_log_value(value_v1(5, 1, 10, 5, None, 20, 15))
    assert value.state == 5 and value.topic_partitions == frozenset()


@pytest.mark.parametrize("data", [
    i16(2) + value_v0(1, 1, 1, 1, [], 1, 1)[2:],                  # unknown version
    i16(-1),
    b"\x00",
    value_v0(1, 1, 1, 8, [], 1, 1),                              # state id 8
    value_v1(1, 1, 1, -1, [], 1, 1),                             # state id -1
    value_v0(1, 1, 1, 1, [("t", [0])], 1, 1)[:-3],               # truncated
    value_v1(1, 1, 1, 1, [("t", [0])], 1, 1)[:-1],               # no tagged-field section
], ids=["v2", "v-1", "short", "state-8", "state-neg", "truncated", "no-tags"])
def test_malformed_values_are_corrupt(data: bytes) -> None:
    with pytest.raises(CorruptMessageError):
        read_transaction_log_value(data)


_topics = st.text(min_size=1, max_size=20)
_values = st.builds(
    TransactionLogValue,
    producer_id=st.integers(0, 2**63 - 1),
    producer_epoch=st.integers(-1, 32767),
    txn_timeout_ms=st.integers(-(2**31), 2**31 - 1),
    state=st.integers(1, 7),
    topic_partitions=st.frozensets(st.builds(TopicPartition, _topics,
                                             st.integers(0, 2**31 - 1)), max_size=8),
    txn_last_update_timestamp=st.integers(-1, 2**63 - 1),
    txn_start_timestamp=st.integers(-1, 2**63 - 1),
    previous_producer_id=st.integers(-1, 2**63 - 1),
    next_producer_id=st.integers(-1, 2**63 - 1),
    client_transaction_version=st.integers(0, 2),
)


@given(_values)
def test_v1_round_trips(value: TransactionLogValue) -> None:
    assert read_transaction_log_value(transaction_log_value(value, 1)) == value


@given(_values)
def test_v0_round_trips_without_the_tagged_fields(value: TransactionLogValue) -> None:
    expected = attrs.evolve(value, previous_producer_id=-1, next_producer_id=-1,
                            client_transaction_version=0)
    assert read_transaction_log_value(transaction_log_value(value, 0)) == expected


@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_are_corrupt(data: bytes) -> None:
    for reader in (read_key, read_transaction_log_value):
        try:
            reader(data)
        except CorruptMessageError:
            pass
