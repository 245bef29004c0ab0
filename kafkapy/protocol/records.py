"""Kafka record batches: what a Produce request carries and what the log stores.

This module owns the record-batch format (magic 2, see ``kafkapy._records`` for the byte
layout): CRC-32C, a zero-copy header view (``BatchHeader``), the validation walk over a buffer
of batches (``scan_batches``), record parsing (``BatchHeader.records()``), the batch builder
(``build_batch``, ``build_control_batch``), in-place leader offset assignment
(``assign_offsets``) and control-record decoding. Everything is one compiled implementation
(``kafkapy._records``); this module only re-exports it. Sans-IO: bytes in, objects out.

Who calls what:

- the Produce path: ``check_produce_batch`` (the request's header checks), then the log's
  checks and ``assign_offsets`` on the leader;
- log recovery: ``scan_batches`` with ``truncated`` marking a torn write at the end;
- a header read on its own from a file: ``BatchHeader.header_only``; sizes:
  ``BATCH_HEADER_SIZE`` (Python code reads header fields only through ``BatchHeader``);
- consumers of record contents (compaction, transactions, tools, tests): ``records()``.

Legacy message formats (magic 0 and 1, Kafka 0.8-0.10), as a Kafka 3.x broker treats them:
the log stores magic 2 only. Produce v0-2 may carry legacy message sets, which
``up_convert`` turns into one magic 2 batch before the log sees them; Produce v3+ requires
exactly one magic-2 batch (INVALID_RECORD otherwise, Kafka's ProduceRequest validation).
Fetch v0-3 answers with ``down_convert``'s legacy messages (magic 0 for v0-1, magic 1 for
v2-3). Both are compiled (``kafkapy._legacy``); ``decode_legacy`` reads legacy sets for tools
and tests.

Errors (from ``kafkapy.errors``, each with its Kafka ``code``): CorruptMessageError (2),
InvalidRecordError (87), UnsupportedForMessageFormatError (43),
UnsupportedCompressionTypeError (76).
"""

from __future__ import annotations

from kafkapy._legacy import down_convert, up_convert
from kafkapy._records import (
    BATCH_HEADER_SIZE,
    AssignResult,
    BatchHeader,
    BatchScan,
    ControlRecord,
    LegacyMessage,
    Record,
    assign_offsets,
    build_batch,
    build_control_batch,
    check_produce_batch,
    crc32c,
    decode_control_record,
    decode_legacy,
    record_errors,
    scan_batches,
)

__all__ = [
    "BATCH_HEADER_SIZE",
    "COMPRESSION_GZIP",
    "COMPRESSION_LZ4",
    "COMPRESSION_NONE",
    "COMPRESSION_SNAPPY",
    "COMPRESSION_ZSTD",
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "TIMESTAMP_CREATE_TIME",
    "TIMESTAMP_LOG_APPEND_TIME",
    "AssignResult",
    "BatchHeader",
    "BatchScan",
    "ControlRecord",
    "LegacyMessage",
    "Record",
    "assign_offsets",
    "build_batch",
    "build_control_batch",
    "check_produce_batch",
    "crc32c",
    "decode_control_record",
    "decode_legacy",
    "down_convert",
    "record_errors",
    "scan_batches",
    "up_convert",
]

COMPRESSION_NONE = 0
COMPRESSION_GZIP = 1
COMPRESSION_SNAPPY = 2
COMPRESSION_LZ4 = 3
COMPRESSION_ZSTD = 4

TIMESTAMP_CREATE_TIME = 0
TIMESTAMP_LOG_APPEND_TIME = 1

CONTROL_ABORT = 0
CONTROL_COMMIT = 1
