"""kafkapy.log.log_validator and the compiled record pass (``_records.record_errors``):
Kafka 3.x LogValidator's per-record checks and messages (KIP-467)."""

from __future__ import annotations

import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import InvalidRecordError, InvalidTimestampError
from kafkapy.log.log_validator import RecordError, validate_records
from kafkapy.protocol.records import build_batch, record_errors

LONG_MAX = 2**63 - 1
NOW = 1_700_000_000_000
TP = TopicPartition("t", 3)


def _check(buf: bytes, *, compacted: bool = False, create_time: bool = True,
           before: int = LONG_MAX, after: int = LONG_MAX):  # type: ignore[no-untyped-def]
    return validate_records(buf, TP, compacted=compacted, create_time=create_time, now=NOW,
                            before_max_ms=before, after_max_ms=after)


@pytest.mark.parametrize("compression", [0, 1, 2, 3, 4])
def test_keyless_records_on_a_compacted_topic(compression: int) -> None:
    batch = build_batch([(None if i % 3 == 0 else b"k", b"v", [], NOW) for i in range(7)],
                        compression=compression)
    assert _check(batch) is None
    rve = _check(batch, compacted=True)
    assert rve is not None
    assert isinstance(rve.invalid, InvalidRecordError)
    message = "Compacted topic cannot accept message without key in topic partition t-3"
    assert rve.record_errors == tuple(RecordError(i, message) for i in (0, 3, 6))
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{message}')" for i in (0, 3, 6))
    assert rve.invalid.message == (
        "One or more records have been rejected due to 3 record errors in total, and only "
        f"showing the first three errors at most: [{shown}]")


def test_only_the_first_three_errors_are_shown() -> None:
    batch = build_batch([(None, b"v", [], NOW)] * 5)
    rve = _check(batch, compacted=True)
    assert rve is not None and len(rve.record_errors) == 5
    assert "5 record errors in total" in rve.invalid.message
    assert rve.invalid.message.count("RecordError(") == 3


def test_timestamps_out_of_range_per_record() -> None:
    # The first record is the batch's baseTimestamp; an older one later in the batch is
    # invisible to the header (a negative delta): only a record pass finds it.
    stamps = [NOW, NOW - 10_000, NOW + 5, NOW + 60_000]
    batch = build_batch([(b"k", b"v", [], ts) for ts in stamps])
    assert _check(batch) is None
    rve = _check(batch, before=1000, after=1000)
    assert rve is not None
    assert isinstance(rve.invalid, InvalidTimestampError)
    assert rve.invalid.message == ("One or more records have been rejected due to invalid "
                                   "timestamp")
    within = f"[{NOW - 1000}, {NOW + 1000}]"
    assert rve.record_errors == (
        RecordError(1, f"Timestamp {NOW - 10_000} of message with offset 1 is out of range. "
                       f"The timestamp should be within {within}"),
        RecordError(3, f"Timestamp {NOW + 60_000} of message with offset 3 is out of range. "
                       f"The timestamp should be within {within}"),
    )
    # after.max.ms alone: the header's maxTimestamp shows the batch needs a record pass.
    rve = _check(batch, after=1000)
    assert rve is not None and [e.batch_index for e in rve.record_errors] == [3]
    # A LogAppendTime topic does not look at producer timestamps.
    assert _check(batch, create_time=False, before=1000, after=1000) is None


def test_bounds_wrap_as_java_longs() -> None:
    batch = build_batch([(b"k", b"v", [], NOW + 10)])
    rve = _check(batch, after=5)
    assert rve is not None
    # now + before.max.ms with the default Long.MAX_VALUE... here now - Long.MAX_VALUE, and
    # now + 5; a Long.MAX_VALUE after would overflow to a negative number in Kafka's text.
    assert rve.record_errors[0].message is not None
    assert rve.record_errors[0].message.endswith(f"[{NOW - LONG_MAX}, {NOW + 5}]")


def test_a_key_error_wins_over_a_timestamp_error() -> None:
    batch = build_batch([(None, b"v", [], 0), (b"k", b"v", [], 0)])
    rve = _check(batch, compacted=True, before=1000)
    assert rve is not None
    # One INVALID_TIMESTAMP among the errors makes the partition's error INVALID_TIMESTAMP.
    assert isinstance(rve.invalid, InvalidTimestampError)
    assert rve.record_errors[0].message == (
        "Compacted topic cannot accept message without key in topic partition t-3")
    assert rve.record_errors[1].message is not None
    assert rve.record_errors[1].message.startswith("Timestamp 0 of message with offset 1 ")


@pytest.mark.parametrize("compression", [0, 1])
def test_producer_set_log_append_time(compression: int) -> None:
    batch = build_batch([(b"key", b"value!", [], NOW), (None, None, [], NOW)],
                        timestamp_type=1, compression=compression, max_timestamp=-1)
    rve = _check(batch)
    assert rve is not None
    assert isinstance(rve.invalid, InvalidTimestampError)
    if compression:
        records = ["PartialDefaultRecord(offset=0, timestamp=-1, key=3 bytes, value=6 bytes)",
                   "PartialDefaultRecord(offset=1, timestamp=-1, key=-1 bytes, value=-1 bytes)"]
    else:
        records = ["DefaultRecord(offset=0, timestamp=-1, key=3 bytes, value=6 bytes)",
                   "DefaultRecord(offset=1, timestamp=-1, key=0 bytes, value=0 bytes)"]
    assert [e.message for e in rve.record_errors] == [
        f"Invalid timestamp type in message {r}. Producer should not set timestamp type to "
        f"LogAppendTime." for r in records]
    # On a CreateTime topic a LogAppendTime batch whose maxTimestamp is in range passes
    # (its records read as maxTimestamp); on a LogAppendTime topic it never does.
    good = build_batch([(b"k", b"v", [], NOW)], timestamp_type=1, max_timestamp=NOW)
    assert _check(good) is None
    assert _check(good, create_time=False) is not None


def test_only_the_first_refusing_batch_is_reported() -> None:
    buf = (build_batch([(b"k", b"v", [], NOW)])
           + build_batch([(b"k", b"v", [], NOW), (None, b"v", [], NOW)], base_offset=1)
           + build_batch([(None, b"v", [], NOW)], base_offset=3))
    rve = _check(buf, compacted=True)
    assert rve is not None and [e.batch_index for e in rve.record_errors] == [1]


def test_malformed_input_is_left_to_the_framing_checks() -> None:
    batch = bytearray(build_batch([(None, b"v", [], NOW)] * 3))
    assert record_errors(bytes(batch[:-5]), compacted=True, create_time=True, now=NOW,
                         before_max_ms=LONG_MAX, after_max_ms=LONG_MAX) is None
    assert record_errors(bytes(batch), compacted=True, create_time=True, now=NOW,
                         before_max_ms=LONG_MAX, after_max_ms=LONG_MAX) is not None
    batch[61] = 0x7F                        # the first record's length runs past the batch
    assert record_errors(bytes(batch), compacted=True, create_time=True, now=NOW,
                         before_max_ms=LONG_MAX, after_max_ms=LONG_MAX) is None
