"""Per-record validation of a leader append (Kafka's LogValidator record checks, KIP-467).

Kafka refuses a batch because of particular records: a record without a key on a compacted
topic (INVALID_RECORD), under CreateTime a timestamp outside
``[now - message.timestamp.before.max.ms, now + message.timestamp.after.max.ms]``, or a
producer that set the LogAppendTime bit (both INVALID_TIMESTAMP). The Produce response (v8+)
then names each refused record (its index in the batch and a message) and carries the
exception's message as the partition's ``ErrorMessage``; librdkafka fails exactly those
records with the error and the batch's other records with ``_INVALID_DIFFERENT_RECORD``.

Who owns what: the record pass is compiled (``kafkapy._records.record_errors``, no per-record
Python, and in the good case it reads only batch headers unless the topic is compacted or
``before.max.ms`` is finite). This module only turns its verdicts into Kafka's messages, and
only for a rejected batch. Invariants: the messages are Kafka 3.x's, word for word (its
``LogValidator.validateKey/validateTimestamp/processRecordErrors``, ``RecordError.toString``,
``DefaultRecord.toString``), with Java's wrapping long arithmetic in the bounds.
"""

from __future__ import annotations

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import InvalidRecordError, InvalidTimestampError, KafkaError
from kafkapy.protocol.records import record_errors

__all__ = ["RecordError", "RecordValidationError", "validate_records"]

_NO_KEY, _TIMESTAMP, _APPEND_TIME = 1, 2, 3


def _long(v: int) -> int:
    """``v`` as a Java long (two's complement wrap)."""
    return (v + 2**63) % 2**64 - 2**63


@attrs.frozen
class RecordError:
    """One refused record: its index in the batch and why (Kafka's ProduceResponse.RecordError)."""

    batch_index: int
    message: str | None

    def __str__(self) -> str:
        message = "null" if self.message is None else f"'{self.message}'"
        return f"RecordError(batchIndex={self.batch_index}, message={message})"


class RecordValidationError(Exception):
    """Kafka's RecordValidationException: the partition's error (``invalid``, an
    InvalidRecordError or InvalidTimestampError) and the refused records."""

    def __init__(self, invalid: KafkaError, record_errors: tuple[RecordError, ...]) -> None:
        super().__init__(invalid.message)
        self.invalid = invalid
        self.record_errors = record_errors


def validate_records(records: bytes | bytearray | memoryview, tp: TopicPartition, *,
                     compacted: bool, create_time: bool, now: int, before_max_ms: int,
                     after_max_ms: int) -> RecordValidationError | None:
    """The error refusing the append of ``records`` (one or more batches, before offsets are
    assigned), or None. Kafka checks batch by batch and refuses on the first batch with bad
    records; so does this."""
    found = record_errors(records, compacted=compacted, create_time=create_time, now=now,
                          before_max_ms=before_max_ms, after_max_ms=after_max_ms)
    if found is None:
        return None
    compressed, refused = found
    errors = []
    timestamp_error = False
    for kind, index, timestamp, offset, key_len, value_len in refused:
        if kind == _NO_KEY:
            message = f"Compacted topic cannot accept message without key in topic partition {tp}"
        elif kind == _TIMESTAMP:
            timestamp_error = True
            message = (f"Timestamp {timestamp} of message with offset {offset} is out of "
                       f"range. The timestamp should be within [{_long(now - before_max_ms)}, "
                       f"{_long(now + after_max_ms)}]")
        else:
            timestamp_error = True
            record = _record(compressed, offset, timestamp, key_len, value_len)
            message = (f"Invalid timestamp type in message {record}. Producer should not set "
                       f"timestamp type to LogAppendTime.")
        errors.append(RecordError(index, message))
    invalid: KafkaError
    if timestamp_error:
        invalid = InvalidTimestampError("One or more records have been rejected due to invalid "
                                        "timestamp")
    else:
        shown = ", ".join(str(e) for e in errors[:3])
        invalid = InvalidRecordError(f"One or more records have been rejected due to "
                                     f"{len(errors)} record errors in total, and only showing "
                                     f"the first three errors at most: [{shown}]")
    return RecordValidationError(invalid, tuple(errors))


def _record(compressed: bool, offset: int, timestamp: int, key_len: int,
            value_len: int) -> str:
    """Kafka's toString of the record its validator iterated: a compressed batch validated
    in place is read with the key/value-skipping iterator (PartialDefaultRecord, sizes as
    read, -1 for null), an uncompressed one whole (DefaultRecord, null as 0 bytes)."""
    if compressed:
        return (f"PartialDefaultRecord(offset={offset}, timestamp={timestamp}, "
                f"key={key_len} bytes, value={value_len} bytes)")
    return (f"DefaultRecord(offset={offset}, timestamp={timestamp}, key={max(key_len, 0)} "
            f"bytes, value={max(value_len, 0)} bytes)")
