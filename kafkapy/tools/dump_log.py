"""``kafkapy dump-log``: Kafka's ``kafka-dump-log.sh`` (``kafka.tools.DumpLogSegments``, as
Kafka 3.9 prints it) over kafkapy's own log files.

What it owns: reading the files named by ``--files`` and printing them as Kafka's tool does,
line for line, or with ``--output json`` one JSON object per line. Each file is dispatched by
its suffix, as Kafka does:

- ``.log``: ``Log starting offset: <base>``, one line per batch (``baseOffset: ...
  isvalid: ...``), with ``--deep-iteration`` (implied by ``--print-data-log`` and every
  decoder option) one ``| offset: ...`` line per record, with ``--print-data-log`` the key
  and payload (StringDecoder, ``--offsets-decoder``, ``--transaction-log-decoder``). Bytes after
  the last whole batch: ``Found <n> invalid bytes at the end of <name>``. Record offsets that
  do not follow each other are reported on stderr at the end (``Non-consecutive offsets``).
- ``.index``: ``offset: <o> position: <p>`` per entry; each entry is checked against the
  batch at its position (``Mismatches in :<file>`` / ``Index offset: <i>, log offset: <l>``
  on stderr at the end); ``--verify-index-only`` checks without printing entries,
  ``--index-sanity-check`` runs the broker's startup check only.
- ``.timeindex``: ``timestamp: <t> offset: <o>`` per entry, checked against the log (offset
  not found, timestamp mismatch, out-of-order timestamps: on stderr at the end).
- ``.txnindex``: ``version: ... producerId: ... firstOffset: ... lastOffset: ...
  lastStableOffset: ...`` per aborted transaction.
- ``.snapshot``: a producer-state snapshot, one ``producerId: ...`` line per producer.
- any other suffix: ``Ignoring unknown file <file>`` on stderr, and the tool goes on (exit 0,
  as Kafka's). A name without a suffix (``leader-epoch-checkpoint``) or a KRaft
  ``.checkpoint`` snapshot, a missing or unreadable file, or a corrupt index under
  ``--index-sanity-check``: an error on stderr and exit code 1 (Kafka's tool dies with an
  exception there, which ``kafka-run-class.sh`` turns into exit code 1).

The files are read with the log's readers (kafkapy.protocol.records for batches and records,
kafkapy.log.index, kafkapy.log.transaction_index, kafkapy.log.producer_state) and never
changed. Per-record Python is fine here: an offline tool, never on the broker's path.
"""

from __future__ import annotations

import argparse
import bisect
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from kafkapy.log.index import OffsetPosition, read_offset_index, read_time_index
from kafkapy.log.producer_state import CorruptSnapshotError, decode_snapshot, last_sequence
from kafkapy.log.transaction_index import TransactionIndex
from kafkapy.protocol.records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    TIMESTAMP_LOG_APPEND_TIME,
    BatchHeader,
    Record,
    decode_control_record,
    scan_batches,
)
from kafkapy.tools.coordinator_decoders import (
    DecodeError,
    format_offsets_record,
    format_transaction_record,
)

__all__ = ["add_parser", "run"]

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"
KRAFT_SNAPSHOT_SUFFIX = ".checkpoint"
KNOWN_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, SNAPSHOT_SUFFIX)

STRING_DECODER = "org.apache.kafka.tools.api.StringDecoder"
DEPRECATED_STRING_DECODER = "kafka.serializer.StringDecoder"
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
INT32_MAX = 2**31 - 1

# Kafka's CompressionType names, by the attributes' codec id.
COMPRESSION_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
# Kafka's ControlRecordType names, by type id.
CONTROL_TYPES = ("ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER",
                 "KRAFT_VERSION", "KRAFT_VOTERS")

Parser = Callable[[Record], tuple[str | None, str | None]]


class ToolError(Exception):
    """Ends the tool with exit code 1 and this message on stderr."""


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "dump-log", help="Kafka's kafka-dump-log.sh: print log segments, indexes and "
                         "snapshots",
        description="This tool helps to parse a log file and dump its contents to the "
                    "console, useful for debugging a seemingly corrupt log segment.")
    p.add_argument("--files", metavar="file1, file2, ...",
                   help="REQUIRED: The comma separated list of data and index log files to be "
                        "dumped.")
    p.add_argument("--print-data-log", action="store_true",
                   help="If set, printing the messages content when dumping data logs. "
                        "Automatically set if any decoder option is specified.")
    p.add_argument("--verify-index-only", action="store_true",
                   help="If set, just verify the index log without printing its content.")
    p.add_argument("--index-sanity-check", action="store_true",
                   help="If set, just checks the index sanity without printing its content. "
                        "This is the same check that is executed on broker startup to "
                        "determine if an index needs rebuilding or not.")
    p.add_argument("--max-message-size", type=int, default=DEFAULT_MAX_MESSAGE_SIZE,
                   metavar="size", help="Size of largest message. (default: 5242880)")
    p.add_argument("--max-bytes", type=int, default=INT32_MAX, metavar="size",
                   help="Limit the amount of total batches read in bytes avoiding reading the "
                        "whole .log file(s).")
    p.add_argument("--deep-iteration", action="store_true",
                   help="If set, uses deep instead of shallow iteration. Automatically set if "
                        "print-data-log is enabled.")
    p.add_argument("--value-decoder-class", nargs="?", const=STRING_DECODER, default=None,
                   metavar="class",
                   help=f"Used to deserialize the messages; only {STRING_DECODER} (the "
                        f"default) and {DEPRECATED_STRING_DECODER} are supported: kafkapy "
                        f"cannot load Java classes.")
    p.add_argument("--key-decoder-class", nargs="?", const=STRING_DECODER, default=None,
                   metavar="class",
                   help="Used to deserialize the keys; the same classes as "
                        "--value-decoder-class.")
    p.add_argument("--offsets-decoder", action="store_true",
                   help="If set, log data will be parsed as offset data from the "
                        "__consumer_offsets topic.")
    p.add_argument("--transaction-log-decoder", action="store_true",
                   help="If set, log data will be parsed as transaction metadata from the "
                        "__transaction_state topic.")
    p.add_argument("--cluster-metadata-decoder", action="store_true",
                   help="Not supported: kafkapy runs in ZooKeeper mode and has no KRaft "
                        "metadata log.")
    p.add_argument("--remote-log-metadata-decoder", action="store_true",
                   help="Not supported: kafkapy has no tiered storage.")
    p.add_argument("--skip-record-metadata", action="store_true",
                   help="Whether to skip printing metadata for each record.")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="text: Kafka's lines (the default); json: one JSON object per file, "
                        "batch, record and index entry (kafkapy's addition, for scripts).")
    p.set_defaults(run=run, parser=p)


# ------------------------------------------------------------------------------ output


class Output:
    """Kafka's text lines, or one JSON object per line; diagnostics to stderr."""

    def __init__(self, json_mode: bool, out: TextIO, err: TextIO) -> None:
        self.json_mode = json_mode
        self.out = out
        self.err = err

    def emit(self, text: str, obj: dict[str, Any]) -> None:
        if self.json_mode:
            self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        else:
            self.out.write(text + "\n")

    def error(self, text: str) -> None:
        self.out.flush()
        self.err.write(text + "\n")


class Findings:
    """What the checks found, printed at the end as Kafka does (per file, in Kafka's order:
    index mismatches and non-consecutive offsets newest first, as Kafka prepends them)."""

    def __init__(self) -> None:
        self.index_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_out_of_order: dict[str, list[tuple[int, int]]] = {}
        self.time_not_found: dict[str, list[tuple[int, int]]] = {}
        self.non_consecutive: dict[str, list[tuple[int, int]]] = {}

    def report(self, out: Output) -> None:
        if out.json_mode:
            kinds = (("index_mismatch", self.index_mismatches, ("indexOffset", "logOffset")),
                     ("time_index_mismatch", self.time_mismatches,
                      ("indexTimestamp", "logTimestamp")),
                     ("time_index_out_of_order", self.time_out_of_order,
                      ("indexTimestamp", "previousIndexTimestamp")),
                     ("time_index_offset_not_found", self.time_not_found,
                      ("indexOffset", "logOffset")),
                     ("non_consecutive_offsets", self.non_consecutive, ("offset", "next")))
            for kind, table, (a, b) in kinds:
                for file, pairs in table.items():
                    for x, y in pairs:
                        out.emit("", {"type": kind, "file": file, a: x, b: y})
            return
        for file, pairs in self.index_mismatches.items():
            out.error(f"Mismatches in :{file}")
            for index_offset, log_offset in pairs:
                out.error(f"  Index offset: {index_offset}, log offset: {log_offset}")
        for file, pairs in self.time_mismatches.items():
            out.error(f"Found timestamp mismatch in :{file}")
            for index_ts, log_ts in pairs:
                out.error(f"  Index timestamp: {index_ts}, log timestamp: {log_ts}")
        for file, pairs in self.time_out_of_order.items():
            out.error(f"Found out of order timestamp in :{file}")
            for index_ts, prev_ts in pairs:
                out.error(f"  Index timestamp: {index_ts}, Previously indexed timestamp: "
                          f"{prev_ts}")
        for pairs in self.time_not_found.values():
            out.error("The following indexed offsets are not found in the log.")
            for index_offset, log_offset in pairs:
                out.error(f"Indexed offset: {index_offset}, found log offset: {log_offset}")
        for file, pairs in self.non_consecutive.items():
            out.error(f"Non-consecutive offsets in {file}")
            for first, second in pairs:
                out.error(f"  {first} is followed by {second}")


# ------------------------------------------------------------------------------ helpers


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as e:
        raise ToolError(f"Error: {path} does not exist") from e
    except OSError as e:
        raise ToolError(f"Error: cannot read {path}: {e.strerror or e}") from e


def _base_offset(path: Path) -> int:
    stem = path.name.split(".")[0]
    try:
        return int(stem)
    except ValueError as e:
        raise ToolError(f"Error: {path.name} is not named <base offset>{path.suffix} as "
                        f"Kafka's segment files are") from e


def _sibling(path: Path, suffix: str) -> Path:
    return path.absolute().parent / (path.name.split(".")[0] + suffix)


def _optional_long(value: int | None) -> str:
    # Java's OptionalLong.toString, which Kafka prints as it is.
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def _timestamp_type(batch: BatchHeader) -> str:
    return "LogAppendTime" if batch.timestamp_type == TIMESTAMP_LOG_APPEND_TIME else "CreateTime"


def _record_timestamp(batch: BatchHeader, record: Record) -> int:
    # Under LogAppendTime every record's timestamp is the batch's (Kafka's DefaultRecordBatch).
    if batch.timestamp_type == TIMESTAMP_LOG_APPEND_TIME:
        return batch.max_timestamp
    return record.timestamp


def _string(data: bytes) -> str:
    # Kafka's StringDecoder: new String(bytes, UTF_8), malformed input replaced.
    return data.decode("utf-8", "replace")


def _string_parser(record: Record) -> tuple[str | None, str | None]:
    key = None if record.key is None else _string(record.key)
    value = None if record.value is None else _string(record.value)
    return key, value


def _offsets_parser(record: Record) -> tuple[str | None, str | None]:
    return format_offsets_record(record.offset, record.key, record.value)


def _transaction_parser(record: Record) -> tuple[str | None, str | None]:
    return format_transaction_record(record.key, record.value)


# ------------------------------------------------------------------------------ .log


def _batch_fields(batch: BatchHeader, position: int) -> dict[str, Any]:
    return {
        "baseOffset": batch.base_offset,
        "lastOffset": batch.last_offset,
        "count": batch.record_count,
        "baseSequence": batch.base_sequence,
        "lastSequence": last_sequence(batch),
        "producerId": batch.producer_id,
        "producerEpoch": batch.producer_epoch,
        "partitionLeaderEpoch": batch.partition_leader_epoch,
        "isTransactional": batch.is_transactional,
        "isControl": batch.is_control,
        "deleteHorizonMs": batch.base_timestamp if batch.has_delete_horizon else None,
        "position": position,
        "timestampType": _timestamp_type(batch),
        "maxTimestamp": batch.max_timestamp,
        "size": batch.size,
        "magic": batch.magic,
        "compresscodec": COMPRESSION_NAMES[batch.compression]
        if batch.compression < len(COMPRESSION_NAMES) else f"unknown({batch.compression})",
        "crc": batch.crc,
        "isvalid": batch.crc_valid,
    }


def _batch_line(f: dict[str, Any]) -> str:
    def b(v: bool) -> str:
        return "true" if v else "false"
    return (f"baseOffset: {f['baseOffset']} lastOffset: {f['lastOffset']} count: {f['count']} "
            f"baseSequence: {f['baseSequence']} lastSequence: {f['lastSequence']} "
            f"producerId: {f['producerId']} producerEpoch: {f['producerEpoch']} "
            f"partitionLeaderEpoch: {f['partitionLeaderEpoch']} "
            f"isTransactional: {b(f['isTransactional'])} isControl: {b(f['isControl'])} "
            f"deleteHorizonMs: {_optional_long(f['deleteHorizonMs'])} "
            f"position: {f['position']} {f['timestampType']}: {f['maxTimestamp']} "
            f"size: {f['size']} magic: {f['magic']} compresscodec: {f['compresscodec']} "
            f"crc: {f['crc']} isvalid: {b(f['isvalid'])}")


def _control_fields(record: Record) -> dict[str, Any]:
    key = record.key
    type_id = int.from_bytes(key[2:4], "big", signed=True) if key and len(key) >= 4 else -1
    if type_id in (CONTROL_ABORT, CONTROL_COMMIT):
        marker = decode_control_record(record)
        return {"endTxnMarker": CONTROL_TYPES[marker.type],
                "coordinatorEpoch": marker.coordinator_epoch}
    name = CONTROL_TYPES[type_id] if 0 <= type_id < len(CONTROL_TYPES) else "UNKNOWN"
    return {"controlType": name, "controlTypeId": type_id}


def _dump_record(out: Output, batch: BatchHeader, record: Record, opts: argparse.Namespace,
                 parser: Parser, print_contents: bool) -> None:
    obj: dict[str, Any] = {"type": "record", "offset": record.offset}
    text = ""
    prefix = "| "
    if not opts.skip_record_metadata:
        ts_type = _timestamp_type(batch)
        timestamp = _record_timestamp(batch, record)
        key_size = -1 if record.key is None else len(record.key)
        value_size = -1 if record.value is None else len(record.value)
        header_keys = [k for k, _ in record.headers]
        text = (f"{prefix}offset: {record.offset} {ts_type}: {timestamp} keySize: {key_size} "
                f"valueSize: {value_size} sequence: {record.sequence} "
                f"headerKeys: [{','.join(header_keys)}]")
        prefix = " "
        obj.update({"timestampType": ts_type, "timestamp": timestamp, "keySize": key_size,
                    "valueSize": value_size, "sequence": record.sequence,
                    "headerKeys": header_keys})
        if batch.is_control:
            control = _control_fields(record)
            obj.update(control)
            if "endTxnMarker" in control:
                text += (f" endTxnMarker: {control['endTxnMarker']} "
                         f"coordinatorEpoch: {control['coordinatorEpoch']}")
            else:
                text += f" controlType: {control['controlType']}({control['controlTypeId']})"
    if print_contents and not batch.is_control:
        try:
            key, payload = parser(record)
        except DecodeError as e:
            raise ToolError(f"Error: {e}") from e
        if key is not None:
            text += f"{prefix}key: {key}"
            prefix = " "
        if payload is not None:
            text += f" payload: {payload}"
        obj["key"] = key
        obj["payload"] = payload
    out.emit(text, obj)


def dump_log(out: Output, path: Path, opts: argparse.Namespace, findings: Findings,
             parser: Parser) -> None:
    print_contents = _should_print_data_log(opts)
    deep = opts.deep_iteration or print_contents
    base = _base_offset(path)
    data = _read(path)
    out.emit(f"Log starting offset: {base}",
             {"type": "log", "file": str(path), "logStartingOffset": base})
    view = memoryview(data)[:max(opts.max_bytes, 0)]
    # Headers only here (no CRC stop): a batch with a bad CRC is printed with isvalid: false,
    # as Kafka's shallow iteration does; the walk stops at the first batch that is cut off or
    # not a batch, and what follows is reported as invalid bytes.
    scan = scan_batches(view, verify_crc=False)
    last_offset = -1
    key = str(path.absolute())
    for batch in scan.batches:
        fields = _batch_fields(batch, batch.position)
        out.emit(_batch_line(fields), {"type": "batch", **fields})
        if not deep:
            continue
        for record in batch.records():
            if last_offset != -1 and record.offset != last_offset + 1:
                findings.non_consecutive.setdefault(key, []).insert(
                    0, (last_offset, record.offset))
            last_offset = record.offset
            _dump_record(out, batch, record, opts, parser, print_contents)
    trailing = len(view) - scan.valid_bytes
    if trailing > 0 and opts.max_bytes == INT32_MAX:
        out.emit(f"Found {trailing} invalid bytes at the end of {path.name}",
                 {"type": "invalid_bytes", "file": str(path), "bytes": trailing,
                  "position": scan.valid_bytes})


# ------------------------------------------------------------------------------ indexes


def _batch_at(data: bytes, position: int, limit: int) -> BatchHeader | None:
    """The batch starting at ``position`` if it fits in ``limit`` bytes (Kafka's
    ``fileRecords.slice(position, maxMessageSize)``), else None."""
    end = min(len(data), position + limit)
    scan = scan_batches(memoryview(data)[position:end], verify_crc=False) \
        if 0 <= position < end else None
    return scan.batches[0] if scan is not None and scan.batches else None


def dump_index(out: Output, path: Path, opts: argparse.Namespace, findings: Findings) -> None:
    base = _base_offset(path)
    log_data = _read(_sibling(path, LOG_SUFFIX))
    entries, length = _read_index(path, base, read_offset_index)
    if not entries:
        out.emit(f"{path} is empty.", {"type": "index_empty", "file": str(path)})
        return
    if opts.index_sanity_check:
        last = entries[-1].offset
        absolute = path.absolute()
        if last < base:
            raise ToolError(f"Corrupt index found, index file {absolute} has non-zero size but "
                            f"the last offset is {last} which is less than the base offset "
                            f"{base}")
        if length % 8:
            raise ToolError(f"Index file {absolute} is corrupt, found {length} bytes which is "
                            f"neither positive nor a multiple of 8")
        out.emit(f"{path} passed sanity check.", {"type": "sanity_check_passed",
                                                  "file": str(path)})
        return
    key = str(path.absolute())
    for i, entry in enumerate(entries):
        # A crash leaves the preallocated tail zeroed: stop at the first zero entry, as Kafka.
        if entry.offset == base and i > 0:
            return
        batch = _batch_at(log_data, entry.position, opts.max_message_size)
        if batch is None:
            raise ToolError(f"Error: no whole batch of at most --max-message-size "
                            f"{opts.max_message_size} bytes at position {entry.position} of "
                            f"{_sibling(path, LOG_SUFFIX)} (index entry for offset "
                            f"{entry.offset})")
        if batch.last_offset != entry.offset:
            findings.index_mismatches.setdefault(key, []).insert(
                0, (entry.offset, batch.last_offset))
        if not opts.verify_index_only:
            out.emit(f"offset: {entry.offset} position: {entry.position}",
                     {"type": "index_entry", "offset": entry.offset,
                      "position": entry.position})


def _read_index(path: Path, base: int, reader: Callable[[Path, int], tuple[list[Any], int]]
                ) -> tuple[list[Any], int]:
    try:
        return reader(path, base)
    except FileNotFoundError as e:
        raise ToolError(f"Error: {path} does not exist") from e
    except OSError as e:
        raise ToolError(f"Error: cannot read {path}: {e.strerror or e}") from e


def _lookup(index: list[OffsetPosition], offset: int) -> int:
    """The position of the greatest indexed offset <= ``offset`` (0 if none): OffsetIndex's
    lookup over the entries as read."""
    slot = bisect.bisect_right([e.offset for e in index], offset) - 1
    return index[slot].position if slot >= 0 else 0


def dump_time_index(out: Output, path: Path, opts: argparse.Namespace,
                    findings: Findings) -> None:
    base = _base_offset(path)
    log_data = _read(_sibling(path, LOG_SUFFIX))
    index_path = _sibling(path, INDEX_SUFFIX)
    offset_index = _read_index(index_path, base, read_offset_index)[0] \
        if index_path.exists() else []
    entries, length = _read_index(path, base, read_time_index)
    if opts.index_sanity_check:
        absolute = path.absolute()
        if entries and entries[-1].timestamp < entries[0].timestamp:
            raise ToolError(f"Corrupt time index found, time index file ({absolute}) has "
                            f"non-zero size but the last timestamp is {entries[-1].timestamp} "
                            f"which is less than the first timestamp {entries[0].timestamp}")
        if entries and entries[-1].offset < base:
            raise ToolError(f"Corrupt time index found, time index file ({absolute}) has "
                            f"non-zero size but the last offset is {entries[-1].offset} which "
                            f"is less than the first offset {base}")
        if length % 12:
            raise ToolError(f"Time index file {absolute} is corrupt, found {length} bytes "
                            f"which is neither positive nor a multiple of 12")
        out.emit(f"{path} passed sanity check.", {"type": "sanity_check_passed",
                                                  "file": str(path)})
        return
    key = str(path.absolute())
    prev_timestamp = -1
    for i, entry in enumerate(entries):
        if entry.offset == base and i > 0:
            return
        position = _lookup(offset_index, entry.offset)
        scan = scan_batches(memoryview(log_data)[position:], verify_crc=False)
        found = next((b for b in scan.batches if b.last_offset >= entry.offset), None)
        if found is None:
            findings.time_not_found.setdefault(key, []).append((entry.offset, -1))
        elif found.last_offset != entry.offset:
            findings.time_not_found.setdefault(key, []).append(
                (entry.offset, found.last_offset))
        else:
            max_timestamp = max((_record_timestamp(found, r) for r in found.records()),
                                default=-1)
            if max_timestamp != entry.timestamp:
                findings.time_mismatches.setdefault(key, []).append(
                    (entry.timestamp, max_timestamp))
            if prev_timestamp >= entry.timestamp:
                findings.time_out_of_order.setdefault(key, []).append(
                    (entry.timestamp, prev_timestamp))
        if not opts.verify_index_only:
            out.emit(f"timestamp: {entry.timestamp} offset: {entry.offset}",
                     {"type": "time_index_entry", "timestamp": entry.timestamp,
                      "offset": entry.offset})
        prev_timestamp = entry.timestamp


# ------------------------------------------------------------------------------ txnindex,
# producer snapshots


def dump_txn_index(out: Output, path: Path) -> None:
    base = _base_offset(path)
    _read(path)     # a missing file is an error here, not an empty index
    index = TransactionIndex(path, base)
    try:
        entries = index.all_entries()
    except Exception as e:
        raise ToolError(f"Error: {path}: {e}") from e
    finally:
        index.close()
    for t in entries:
        out.emit(f"version: 0 producerId: {t.producer_id} firstOffset: {t.first_offset} "
                 f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}",
                 {"type": "aborted_txn", "version": 0, "producerId": t.producer_id,
                  "firstOffset": t.first_offset, "lastOffset": t.last_offset,
                  "lastStableOffset": t.last_stable_offset})


def dump_producer_snapshot(out: Output, path: Path) -> None:
    data = _read(path)
    try:
        entries = decode_snapshot(data)
    except CorruptSnapshotError as e:
        # Kafka prints a corrupt snapshot's message and goes on with the next file.
        out.error(str(e))
        return
    for entry in entries:
        txn_first = entry.current_txn_first_offset if entry.current_txn_first_offset >= 0 else None
        text = (f"producerId: {entry.producer_id} producerEpoch: {entry.producer_epoch} "
                f"coordinatorEpoch: {entry.coordinator_epoch} "
                f"currentTxnFirstOffset: {_optional_long(txn_first)} "
                f"lastTimestamp: {entry.last_timestamp} ")
        obj: dict[str, Any] = {"type": "producer_snapshot_entry", "producerId": entry.producer_id,
                               "producerEpoch": entry.producer_epoch,
                               "coordinatorEpoch": entry.coordinator_epoch,
                               "currentTxnFirstOffset": txn_first,
                               "lastTimestamp": entry.last_timestamp}
        if entry.batch_metadata:
            m = entry.batch_metadata[0]
            text += (f"firstSequence: {m.first_seq} lastSequence: {m.last_seq} "
                     f"lastOffset: {m.last_offset} offsetDelta: {m.offset_delta} "
                     f"timestamp: {m.timestamp}")
            obj.update({"firstSequence": m.first_seq, "lastSequence": m.last_seq,
                        "lastOffset": m.last_offset, "offsetDelta": m.offset_delta,
                        "timestamp": m.timestamp})
        out.emit(text, obj)


# ------------------------------------------------------------------------------ the tool


def _should_print_data_log(opts: argparse.Namespace) -> bool:
    return bool(opts.print_data_log or opts.offsets_decoder or opts.transaction_log_decoder
                or opts.value_decoder_class is not None or opts.key_decoder_class is not None)


def _check_decoder(name: str | None, flag: str) -> None:
    if name is not None and name not in (STRING_DECODER, DEPRECATED_STRING_DECODER):
        raise ToolError(f"Error: {flag} {name} is not supported: kafkapy cannot load Java "
                        f"classes; only {STRING_DECODER} (the default) and "
                        f"{DEPRECATED_STRING_DECODER} are")


def _message_parser(out: Output, opts: argparse.Namespace) -> Parser:
    if opts.offsets_decoder:
        return _offsets_parser
    if opts.transaction_log_decoder:
        return _transaction_parser
    # Kafka builds its decoders for every log file dumped and says so for the old class name.
    for name in (opts.value_decoder_class, opts.key_decoder_class):
        if name == DEPRECATED_STRING_DECODER and not out.json_mode:
            out.emit(f"{DEPRECATED_STRING_DECODER} is deprecated. Please use {STRING_DECODER} "
                     f"instead", {})
    return _string_parser


def _dump_file(out: Output, name: str, opts: argparse.Namespace, findings: Findings) -> None:
    path = Path(name)
    out.emit(f"Dumping {name}", {"type": "file", "file": name})
    if "." not in path.name:
        raise ToolError(f"Error: {name} has no file suffix; dump-log reads .log, .index, "
                        f".timeindex, .txnindex and .snapshot files")
    suffix = path.name[path.name.rindex("."):]
    if suffix in KNOWN_SUFFIXES and not path.exists():
        raise ToolError(f"Error: {name} does not exist")
    if suffix == LOG_SUFFIX:
        dump_log(out, path, opts, findings, _message_parser(out, opts))
    elif suffix == KRAFT_SNAPSHOT_SUFFIX:
        raise ToolError(f"Error: {name} is a KRaft metadata snapshot; kafkapy runs in "
                        f"ZooKeeper mode and does not read them")
    elif suffix == INDEX_SUFFIX:
        dump_index(out, path, opts, findings)
    elif suffix == TIME_INDEX_SUFFIX:
        dump_time_index(out, path, opts, findings)
    elif suffix == SNAPSHOT_SUFFIX:
        dump_producer_snapshot(out, path)
    elif suffix == TXN_INDEX_SUFFIX:
        dump_txn_index(out, path)
    else:
        if out.json_mode:
            out.emit("", {"type": "ignored", "file": name})
        out.error(f"Ignoring unknown file {name}")


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the tool; the exit code (0, or 1 after an error printed on stderr)."""
    output = Output(opts.output == "json", out or sys.stdout, err or sys.stderr)
    if opts.files is None:
        output.error('Missing required argument "[files]"')
        opts.parser.print_help(output.err)
        return 1
    try:
        _check_decoder(opts.value_decoder_class, "--value-decoder-class")
        _check_decoder(opts.key_decoder_class, "--key-decoder-class")
        if opts.cluster_metadata_decoder:
            raise ToolError("Error: --cluster-metadata-decoder is not supported: kafkapy runs "
                            "in ZooKeeper mode and has no KRaft metadata log")
        if opts.remote_log_metadata_decoder:
            raise ToolError("Error: --remote-log-metadata-decoder is not supported: kafkapy "
                            "has no tiered storage")
        findings = Findings()
        for name in opts.files.split(","):
            _dump_file(output, name, opts, findings)
        findings.report(output)
    except ToolError as e:
        output.error(str(e))
        return 1
    return 0
