"""``kafkapy console-consumer``: Kafka's ``kafka-console-consumer.sh`` (``ConsoleConsumer`` and
its ``DefaultMessageFormatter``, as Kafka 3.x behaves), on confluent-kafka's Consumer.

What it owns: choosing what to read (``--topic`` through a consumer group, ``--include`` a
regular expression over whole topic names, or ``--topic`` with ``--partition`` assigned
directly from ``--offset`` ``earliest``/``latest``/n, ``latest`` unless ``--from-beginning``),
the consumer's settings (``--consumer.config`` alias ``--command-config``, then
``--consumer-property``, then the options: ``auto.offset.reset`` earliest with
``--from-beginning`` else latest unless set, ``isolation.level``, a random
``console-consumer-<n>`` group that commits nothing unless a group is given) and printing each
record as Kafka's DefaultMessageFormatter does: ``<type>:<ts>``, ``Partition:<p>``,
``Offset:<o>``, the headers ``k:v`` joined by ``headers.separator`` (``NO_HEADERS``), the key,
the value, in that order, the fields asked for (``--property print.*``) joined by
``key.separator`` and ended by ``line.separator``; a null key, value or header value prints
``null.literal``.

Invariants: no more than ``--max-messages`` records are taken from the client (so that none
is committed unprinted); the tool stops after ``--max-messages`` records, after
``--timeout-ms`` without a record (Kafka's ERROR line and ``TimeoutException`` on stderr, exit
code 0), at Ctrl-C or SIGTERM (exit codes 130, 143), or when nobody reads standard output
any more; in every case it prints ``Processed a total of <n> messages`` on stderr last.
``--output json`` prints one JSON object per record (topic, partition, offset, timestamp and
its type, key, value, headers; bytes as UTF-8 text) instead of the formatter's line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable
from typing import Any, BinaryIO

import attrs

from kafkapy.tools.client_settings import (
    CONSUMER_CONFIG,
    Terminated,
    catch_sigterm,
    create_client,
    import_client,
    java_error,
    librdkafka_config,
    load_properties,
    log_line,
    parse_key_value,
)

__all__ = ["Formatter", "add_parser", "consumer_props", "run"]

TOOL = "console-consumer"
LOGGER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
FORMATTERS = ("kafka.tools.DefaultMessageFormatter",
              "org.apache.kafka.tools.consumer.DefaultMessageFormatter")
BATCH = 500         # records asked of the client at once (Kafka's max.poll.records default)
POLL_S = 1.0        # the longest single wait, so that Ctrl-C is seen promptly
TIMESTAMP_TYPES = {1: b"CreateTime:", 2: b"LogAppendTime:"}


class UsageError(Exception):
    """Kafka's printUsageAndExit: the message on stderr, exit code 1."""


@attrs.frozen
class Formatter:
    """Kafka's DefaultMessageFormatter, configured by its properties."""

    print_timestamp: bool = False
    print_key: bool = False
    print_value: bool = True
    print_partition: bool = False
    print_offset: bool = False
    print_headers: bool = False
    key_separator: bytes = b"\t"
    line_separator: bytes = b"\n"
    headers_separator: bytes = b","
    null_literal: bytes = b"null"

    @classmethod
    def configure(cls, props: dict[str, str]) -> Formatter:
        def flag(name: str, default: bool) -> bool:
            return props[name].strip().lower() == "true" if name in props else default

        def text(name: str, default: bytes) -> bytes:
            return props[name].encode() if name in props else default

        return cls(print_timestamp=flag("print.timestamp", False),
                   print_key=flag("print.key", False),
                   print_value=flag("print.value", True),
                   print_partition=flag("print.partition", False),
                   print_offset=flag("print.offset", False),
                   print_headers=flag("print.headers", False),
                   key_separator=text("key.separator", b"\t"),
                   line_separator=text("line.separator", b"\n"),
                   headers_separator=text("headers.separator", b","),
                   null_literal=text("null.literal", b"null"))

    def compile(self) -> Callable[[Any], bytes]:
        """A function of a confluent-kafka Message to its printed bytes: the fields chosen
        once here, so that a record costs only its own formatting."""
        null = self.null_literal
        fields: list[Callable[[Any], bytes]] = []
        if self.print_timestamp:
            def timestamp(msg: Any) -> bytes:
                kind, ts = msg.timestamp()
                prefix = TIMESTAMP_TYPES.get(kind)
                return b"NO_TIMESTAMP" if prefix is None else prefix + str(ts).encode()
            fields.append(timestamp)
        if self.print_partition:
            fields.append(lambda msg: b"Partition:%d" % msg.partition())
        if self.print_offset:
            fields.append(lambda msg: b"Offset:%d" % msg.offset())
        if self.print_headers:
            separator = self.headers_separator

            def headers(msg: Any) -> bytes:
                pairs = msg.headers()
                if not pairs:
                    return b"NO_HEADERS"
                return separator.join(k.encode() + b":" + (null if v is None else v)
                                      for k, v in pairs)
            fields.append(headers)
        if self.print_key:
            fields.append(lambda msg: null if msg.key() is None else msg.key())
        if self.print_value:
            fields.append(lambda msg: null if msg.value() is None else msg.value())
        column, end = self.key_separator, self.line_separator
        if not fields:
            return lambda msg: b""
        # Kafka ends the last field printed, whichever it is, with the line separator
        return lambda msg: column.join(field(msg) for field in fields) + end


def to_json(msg: Any) -> bytes:
    kind, ts = msg.timestamp()
    key, value = msg.key(), msg.value()
    return (json.dumps({
        "topic": msg.topic(), "partition": msg.partition(), "offset": msg.offset(),
        "timestamp_type": {1: "CreateTime", 2: "LogAppendTime"}.get(kind, "NO_TIMESTAMP"),
        "timestamp": ts if kind in (1, 2) else None,
        "key": None if key is None else key.decode("utf-8", "replace"),
        "value": None if value is None else value.decode("utf-8", "replace"),
        "headers": [[k, None if v is None else v.decode("utf-8", "replace")]
                    for k, v in msg.headers() or ()],
    }) + "\n").encode()


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        TOOL, help="Kafka's kafka-console-consumer.sh: a topic's records to standard output",
        description="This tool helps to read data from Kafka topics and outputs it to "
                    "standard output.")
    p.add_argument("--bootstrap-server", metavar="server to connect to",
                   help="REQUIRED: The server(s) to connect to.")
    p.add_argument("--topic", metavar="topic", help="The topic to consume on.")
    p.add_argument("--include", "--whitelist", dest="include", metavar="Java regex (String)",
                   help="Regular expression specifying list of topics to include for "
                        "consumption.")
    p.add_argument("--partition", type=int, metavar="partition",
                   help="The partition to consume from. Consumption starts from the end of "
                        "the partition unless '--offset' is specified.")
    p.add_argument("--offset", metavar="consume offset",
                   help="The offset to consume from (a non-negative number), or 'earliest' "
                        "which means from beginning, or 'latest' which means from end")
    p.add_argument("--from-beginning", action="store_true",
                   help="If the consumer does not already have an established offset to "
                        "consume from, start with the earliest message present in the log "
                        "rather than the latest message.")
    p.add_argument("--max-messages", type=int, metavar="num_messages",
                   help="The maximum number of messages to consume before exiting. If not "
                        "set, consumption is continual.")
    p.add_argument("--timeout-ms", type=int, metavar="timeout_ms",
                   help="If specified, exit if no message is available for consumption for "
                        "the specified interval.")
    p.add_argument("--skip-message-on-error", action="store_true",
                   help="If there is an error when processing a message, skip it instead of "
                        "halt.")
    p.add_argument("--isolation-level", metavar="isolation level",
                   help="Set to read_committed in order to filter out transactional messages "
                        "which are not committed. Set to read_uncommitted to read all "
                        "messages. (default: read_uncommitted)")
    p.add_argument("--group", metavar="consumer group id",
                   help="The consumer group id of the consumer.")
    p.add_argument("--consumer-property", "--command-property", dest="consumer_property",
                   action="append", metavar="consumer_prop",
                   help="A consumer property key=value. Repeatable.")
    p.add_argument("--consumer.config", "--command-config", dest="consumer_config",
                   metavar="config file",
                   help="Consumer config properties file. Note that --consumer-property takes "
                        "precedence over this config.")
    p.add_argument("--formatter", default=FORMATTERS[0], metavar="class",
                   help="Only Kafka's DefaultMessageFormatter (the default) is available.")
    p.add_argument("--property", "--formatter-property", dest="property", action="append",
                   metavar="prop",
                   help="A formatter property key=value: print.timestamp, print.key, "
                        "print.value, print.partition, print.offset, print.headers, "
                        "key.separator, line.separator, headers.separator, null.literal. "
                        "Repeatable.")
    p.add_argument("--formatter-config", metavar="config file",
                   help="Config properties file to initialize the message formatter. Note "
                        "that --property takes precedence over this config.")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="json: one JSON object per record instead of the formatter's line "
                        "(kafkapy's addition).")
    p.set_defaults(run=run, parser=p)


def check_args(opts: argparse.Namespace) -> None:
    """Kafka's ConsoleConsumerOptions checks, in its order."""
    if (opts.topic is None) == (opts.include is None):
        raise UsageError("Exactly one of the following arguments is required: [topic], "
                         "[include]")
    if opts.partition is not None:
        if opts.from_beginning and opts.offset is not None:
            raise UsageError("Options from-beginning and offset cannot be specified together.")
    elif opts.offset is not None:
        raise UsageError("The partition is required when offset is specified.")
    if not opts.bootstrap_server:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if opts.include is not None:
        try:
            re.compile(opts.include)
        except re.error as e:
            raise UsageError(f"java.util.regex.PatternSyntaxException: {e}") from None
    if opts.formatter not in FORMATTERS:
        raise UsageError(f"{opts.formatter} (kafkapy has only Kafka's DefaultMessageFormatter)")


def consumer_props(opts: argparse.Namespace) -> dict[str, str]:
    """Kafka's consumer properties for these options (Kafka's names)."""
    from_file = load_properties(opts.consumer_config) if opts.consumer_config else {}
    extra = parse_key_value(opts.consumer_property)
    groups = {g for g in (opts.group, from_file.get("group.id"), extra.get("group.id"))
              if g is not None}
    if len(groups) > 1:
        given = ", ".join(f"'{g}'" for g in sorted(groups))
        raise UsageError("The group ids provided in different places (directly using "
                         "'--group', via '--consumer-property', or via '--consumer.config') "
                         f"do not match. Detected group ids: {given}")
    if groups and opts.partition is not None:
        raise UsageError("Options group and partition cannot be specified together.")
    props = {**from_file, **extra}
    reset = props.get("auto.offset.reset")
    if reset is None:
        props["auto.offset.reset"] = "earliest" if opts.from_beginning else "latest"
    elif opts.from_beginning and reset != "earliest":
        raise UsageError(f"Can't simultaneously specify --from-beginning and "
                         f"'auto.offset.reset={reset}', please remove one option")
    props["bootstrap.servers"] = opts.bootstrap_server
    props.setdefault("client.id", "console-consumer")
    if opts.isolation_level is not None or "isolation.level" not in props:
        props["isolation.level"] = opts.isolation_level or "read_uncommitted"
    if groups:
        props["group.id"] = groups.pop()
    else:
        props["group.id"] = f"console-consumer-{random.randrange(100000)}"
        # the generated group is never used again: do not fill the coordinator with it
        props.setdefault("enable.auto.commit", "false")
    return props


def start_offset(opts: argparse.Namespace, ck: Any) -> int:
    """Kafka's parseOffset for an assigned partition."""
    if opts.offset is None:
        return int(ck.OFFSET_BEGINNING if opts.from_beginning else ck.OFFSET_END)
    text = opts.offset.lower()
    if text == "earliest":
        return int(ck.OFFSET_BEGINNING)
    if text == "latest":
        return int(ck.OFFSET_END)
    try:
        offset = int(opts.offset)
    except ValueError:
        offset = -1
    if offset < 0:
        raise UsageError(f"The provided offset value '{opts.offset}' is incorrect. Valid "
                         f"values are 'earliest', 'latest', or a non-negative long.")
    return offset


def run(opts: argparse.Namespace, out: BinaryIO | None = None) -> int:
    try:
        check_args(opts)
        formatter_props = load_properties(opts.formatter_config) if opts.formatter_config \
            else {}
        formatter_props.update(parse_key_value(opts.property))
        props = consumer_props(opts)
    except (UsageError, ValueError, OSError) as e:
        sys.stderr.write(f"{e}\n")
        return 1
    ck = import_client(TOOL)
    if ck is None:
        return 1
    try:
        offset = start_offset(opts, ck) if opts.partition is not None else 0
    except UsageError as e:
        sys.stderr.write(f"{e}\n")
        return 1
    fmt = to_json if opts.output == "json" else \
        Formatter.configure(formatter_props).compile()
    try:
        consumer = create_client(ck.Consumer, librdkafka_config(props), CONSUMER_CONFIG)
    except (ck.KafkaException, ValueError, TypeError) as e:
        sys.stderr.write(f"org.apache.kafka.common.KafkaException: {e}\n")
        return 1
    try:
        if opts.partition is not None:
            consumer.assign([ck.TopicPartition(opts.topic, opts.partition, offset)])
        elif opts.topic is not None:
            consumer.subscribe([opts.topic])
        else:
            # librdkafka subscribes to a pattern when the name starts with '^'; Kafka's
            # pattern must match the whole topic name
            consumer.subscribe([f"^({opts.include})$"])
    except ck.KafkaException as e:
        consumer.close()
        sys.stderr.write(f"{java_error(e.args[0])}\n")
        return 1
    stdout = out or sys.stdout.buffer
    count = 0
    code = 0
    catch_sigterm()
    try:
        count = _consume(consumer, opts, fmt, stdout)
    except _Stopped as stop:
        count = stop.count
        code = stop.code
    finally:
        consumer.close()
        sys.stderr.write(f"Processed a total of {count} messages\n")
    return code


class _Stopped(Exception):
    def __init__(self, count: int, code: int) -> None:
        super().__init__(count, code)
        self.count = count
        self.code = code


def _consume(consumer: Any, opts: argparse.Namespace, fmt: Callable[[Any], bytes],
             stdout: BinaryIO) -> int:
    limit = opts.max_messages if opts.max_messages is not None else -1
    timeout_s = opts.timeout_ms / 1000 if opts.timeout_ms is not None and \
        opts.timeout_ms >= 0 else None
    count = 0
    waiting_since = time.monotonic()
    try:
        while limit < 0 or count < limit:
            want = BATCH if limit < 0 else min(BATCH, limit - count)
            wait = POLL_S
            if timeout_s is not None:
                left = waiting_since + timeout_s - time.monotonic()
                if left < 0:
                    log_line("ERROR", "Error processing message, terminating consumer "
                                      "process: ", LOGGER)
                    sys.stderr.write("org.apache.kafka.common.errors.TimeoutException\n")
                    break
                wait = min(wait, left)
            messages = consumer.consume(want, wait)
            if not messages:
                continue
            waiting_since = time.monotonic()
            lines = []
            for msg in messages:
                error = msg.error()
                if error is not None:
                    # librdkafka reports transient conditions as messages; Kafka's consumer
                    # retries them: say so and carry on, unless the client cannot go on
                    if error.fatal():
                        log_line("ERROR", "Error processing message, terminating consumer "
                                          "process: ", LOGGER)
                        sys.stderr.write(java_error(error) + "\n")
                        raise _Stopped(count, 1)
                    log_line("WARN", java_error(error, msg.topic() or ""), LOGGER)
                    continue
                count += 1
                try:
                    lines.append(fmt(msg))
                except Exception as e:   # Kafka's --skip-message-on-error skips any failure
                    if not opts.skip_message_on_error:
                        raise
                    log_line("ERROR", f"Error processing message, skipping this message: "
                                      f"{e}", LOGGER)
            stdout.write(b"".join(lines))
            stdout.flush()
    except BrokenPipeError:
        sys.stderr.write("Unable to write to standard out, closing consumer.\n")
        # the interpreter's own final flush must not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except KeyboardInterrupt:
        raise _Stopped(count, 130) from None
    except Terminated:
        raise _Stopped(count, Terminated.code) from None
    return count
