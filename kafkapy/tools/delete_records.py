"""``kafkapy delete-records``: Kafka's ``kafka-delete-records.sh``
(``org.apache.kafka.tools.DeleteRecordsCommand`` of Kafka 3.x), a client of a running cluster.

What it owns: reading ``--offset-json-file`` (``{"partitions": [{"topic": "foo", "partition":
1, "offset": 1}], "version": 1}``; ``version`` defaults to 1, the only one), refusing
duplicate partitions, asking each partition's leader to move its log start offset to the
given offset (DeleteRecords, over confluent-kafka's AdminClient; ``-1`` means the high
watermark, as in Kafka), and printing Kafka's lines::

    Executing records delete operation
    Records delete operation completed:
    partition: t-0\tlow_watermark: 5
    partition: t-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: ...

(partitions sorted by ``topic-partition``; Kafka's come in hash order). A partition's failure
is its line, exit code 0, as in Kafka; a bad file or command line is a message on stderr and
exit code 1. ``--output json`` prints ``{"topic", "partition", "low_watermark"}`` (or
``"error"``) objects instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from kafkapy.tools.consumer_groups import (
    CommandError,
    ToolError,
    admin_client,
    client_config,
    describe_error,
    import_client,
)

__all__ = ["add_parser", "parse_offsets", "run"]

TOOL = "delete-records"
TIMEOUT_S = 30.0
# Kafka's exception (class, message) for the per-partition errors DeleteRecords returns.
PARTITION_ERRORS = {
    1: ("OffsetOutOfRangeException",
        "The requested offset is not within the range of offsets maintained by the server."),
    3: ("UnknownTopicOrPartitionException", "This server does not host this topic-partition."),
    6: ("NotLeaderOrFollowerException",
        "For requests intended only for the leader, this error indicates that the broker is "
        "not the current leader. For requests intended for any replica, this error indicates "
        "that the broker is not a replica of the topic partition."),
    7: ("TimeoutException", "The request timed out."),
    29: ("TopicAuthorizationException", "Topic authorization failed."),
    44: ("PolicyViolationException", "Request parameters do not satisfy the configured "
                                     "policy."),
}


class CommandFailed(Exception):
    """Kafka's tool dies with the exception's message (stderr), exit code 1."""


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        TOOL, help="Kafka's kafka-delete-records.sh: delete records below an offset",
        description="This tool helps to delete records of the given partitions down to the "
                    "specified offset.")
    p.add_argument("--bootstrap-server", metavar="server(s) to use for bootstrapping",
                   help="REQUIRED: The server to connect to.")
    p.add_argument("--offset-json-file", metavar="Offset json file path",
                   help='REQUIRED: The JSON file with offset per partition. The format to use '
                        'is: {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], '
                        '"version":1}')
    p.add_argument("--command-config", metavar="command config property file path",
                   help="A property file containing configs to be passed to Admin Client.")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="text: Kafka's lines (the default); json: one JSON object per "
                        "partition (kafkapy's addition).")
    p.set_defaults(run=run, parser=p)


def parse_offsets(text: str) -> dict[tuple[str, int], int]:
    """The offset JSON as Kafka's ``parseOffsetJsonStringWithoutDedup`` reads it; duplicates
    refused. Raises CommandFailed with Kafka's message."""
    try:
        js = json.loads(text)
    except ValueError:
        raise CommandFailed("The input string is not a valid JSON") from None
    if not isinstance(js, dict):
        raise CommandFailed("The input string is not a valid JSON")
    version = js.get("version", 1)
    if version != 1:
        raise CommandFailed(f"Not supported version field value {version}")
    if "partitions" not in js:
        raise CommandFailed("Missing partitions field")
    found: dict[tuple[str, int], list[int]] = {}
    for entry in js["partitions"]:
        try:
            topic, partition, offset = entry["topic"], entry["partition"], entry["offset"]
        except (KeyError, TypeError) as e:
            raise CommandFailed(f"No such field exists: `{e.args[0] if e.args else e}`") \
                from None
        if not isinstance(topic, str) or not isinstance(partition, int) \
                or not isinstance(offset, int):
            raise CommandFailed(f"Invalid partition entry: {json.dumps(entry)}")
        found.setdefault((topic, partition), []).append(offset)
    duplicates = sorted(f"{t}-{p}" for (t, p), offsets in found.items() if len(offsets) > 1)
    if duplicates:
        raise CommandFailed("Offset json file contains duplicate topic partitions: "
                            + ",".join(duplicates))
    return {tp: offsets[0] for tp, offsets in found.items()}


def partition_error(exc: BaseException) -> str:
    """A partition's failure as Kafka prints ``ExecutionException.getMessage()``."""
    error: Any = exc.args[0] if exc.args else None
    code = error.code() if callable(getattr(error, "code", None)) else None
    known = PARTITION_ERRORS.get(code) if isinstance(code, int) else None
    if known is not None:
        return f"org.apache.kafka.common.errors.{known[0]}: {known[1]}"
    return describe_error(exc)


def delete(opts: argparse.Namespace, out: TextIO) -> None:
    try:
        text = Path(opts.offset_json_file).read_text(encoding="utf-8")
    except OSError as e:
        raise CommandFailed(f"{opts.offset_json_file} ({e.strerror or e})") from None
    offsets = parse_offsets(text)
    ck = import_client(TOOL)
    admin = admin_client(ck, client_config(opts))
    text_mode = opts.output == "text"
    if text_mode:
        out.write("Executing records delete operation\n")
    try:
        futures = admin.delete_records(
            [ck.TopicPartition(t, p, o) for (t, p), o in offsets.items()],
            request_timeout=TIMEOUT_S, operation_timeout=TIMEOUT_S)
    except (ck.KafkaException, ValueError, TypeError) as e:
        raise CommandFailed(describe_error(e)) from None
    if text_mode:
        out.write("Records delete operation completed:\n")
    results: list[tuple[str, int, int | None, str | None]] = []
    for tp, future in futures.items():
        try:
            low = future.result(timeout=TIMEOUT_S + 5).low_watermark
            results.append((tp.topic, tp.partition, int(low), None))
        except ck.KafkaException as e:
            results.append((tp.topic, tp.partition, None, partition_error(e)))
    for topic, partition, low, error in sorted(results, key=lambda r: f"{r[0]}-{r[1]}"):
        if not text_mode:
            entry: dict[str, Any] = {"topic": topic, "partition": partition}
            entry.update({"low_watermark": low} if error is None else {"error": error})
            out.write(json.dumps(entry) + "\n")
        elif error is None:
            out.write(f"partition: {topic}-{partition}\tlow_watermark: {low}\n")
        else:
            out.write(f"partition: {topic}-{partition}\terror: {error}\n")


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    for value, name in ((opts.bootstrap_server, "bootstrap-server"),
                        (opts.offset_json_file, "offset-json-file")):
        if not value:
            err.write(f'Missing required argument "[{name}]"\n')
            return 1
    try:
        delete(opts, out)
    except (ToolError, CommandError, CommandFailed) as e:
        out.flush()
        err.write(f"{e}\n")
        return 1
    return 0
