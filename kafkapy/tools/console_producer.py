"""``kafkapy console-producer``: Kafka's ``kafka-console-producer.sh`` (``ConsoleProducer`` with
its ``LineMessageReader``, as Kafka 3.x behaves), on confluent-kafka's Producer.

What it owns: reading standard input line by line (UTF-8; ``\\n``, ``\\r\\n`` or ``\\r`` end a
line) into records, as the line reader's properties (``--property``, over ``--reader-config``)
say: ``parse.headers`` (``h1:v1,h2:v2<headers.delimiter>``; ``headers.separator`` is a regular
expression, ``headers.key.separator`` splits a pair), ``parse.key`` (``key<key.separator>``),
``null.marker`` (a key, value or header value equal to it is null), ``ignore.error`` (a line
without a separator is not an error). The producer's settings: ``--producer.config`` (alias
``--command-config``), then ``--producer-property``, then the tool's own options, each of
which (``--timeout`` = linger.ms, ``--request-required-acks`` = acks, ...) overrides a
property only when given and else only fills in Kafka's default; the compression codec is
always the option's (``none`` unless given; ``--compression-codec`` without a value is gzip).

Invariants: every line read is handed to the producer before the next one is read; at end
of input the producer is flushed and the exit code is 0, even when some sends failed (each
failure is logged on stderr as Kafka's ``ErrorLoggingCallback`` logs it). ``--sync`` waits for
each record and stops with exit code 1 at the first failure, as Kafka's ``send().get()``
does. A line the reader cannot parse stops the tool (exit code 1) after the records before it
are flushed. ``--output json``: one ``{"topic", "partition", "offset"}`` object per record
acknowledged (``"error"`` instead for a failed one) on stdout.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

import attrs

from kafkapy.tools.client_settings import (
    PRODUCER_CONFIG,
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

__all__ = ["LineReader", "ReaderError", "add_parser", "producer_props", "run"]

TOOL = "console-producer"
CALLBACK_LOGGER = "org.apache.kafka.clients.producer.internals.ErrorLoggingCallback"
# (option dest, producer setting, Kafka's default): CommandLineUtils.maybeMergeOptions
MERGED_OPTIONS = (
    ("timeout", "linger.ms", "1000"),
    ("request_required_acks", "acks", "-1"),
    ("request_timeout_ms", "request.timeout.ms", "1500"),
    ("message_send_max_retries", "retries", "3"),
    ("retry_backoff_ms", "retry.backoff.ms", "100"),
    ("socket_buffer_size", "send.buffer.bytes", "102400"),
    ("max_memory_bytes", "buffer.memory", "33554432"),
    ("batch_size", "batch.size", "16384"),
    ("max_partition_memory_bytes", "batch.size", "16384"),
    ("metadata_expiry_ms", "metadata.max.age.ms", "300000"),
    ("max_block_ms", "max.block.ms", "60000"),
)


class ReaderError(Exception):
    """Kafka's ``KafkaException`` from the line reader: the tool stops with exit code 1."""


@attrs.define
class LineReader:
    """Kafka's LineMessageReader: one record per line."""

    parse_key: bool = False
    key_separator: str = "\t"
    parse_headers: bool = False
    headers_delimiter: str = "\t"
    headers_separator: str = ","
    headers_key_separator: str = ":"
    ignore_error: bool = False
    null_marker: str | None = None
    separator_pattern: re.Pattern[str] = attrs.field(default=re.compile(","))

    @classmethod
    def configure(cls, props: dict[str, str]) -> LineReader:
        """The reader for these properties; ReaderError for separators that collide."""
        def flag(name: str) -> bool:
            return props.get(name, "false").strip().lower() == "true"

        reader = cls(parse_key=flag("parse.key"),
                     key_separator=props.get("key.separator", "\t"),
                     parse_headers=flag("parse.headers"),
                     headers_delimiter=props.get("headers.delimiter", "\t"),
                     headers_separator=props.get("headers.separator", ","),
                     headers_key_separator=props.get("headers.key.separator", ":"),
                     ignore_error=flag("ignore.error"),
                     null_marker=props.get("null.marker"))
        try:
            reader.separator_pattern = re.compile(reader.headers_separator)
        except re.error as e:
            raise ReaderError(f"Invalid headers.separator {reader.headers_separator}: {e}"
                              ) from None
        named = (("headers.delimiter", reader.headers_delimiter),
                 ("headers.separator", reader.headers_separator),
                 ("headers.key.separator", reader.headers_key_separator))
        for i, (name, value) in enumerate(named):
            for other, other_value in named[i + 1:]:
                if value == other_value:
                    raise ReaderError(f"{name} and {other} may not be equal")
        if reader.null_marker is not None:
            for name, value in (("key.separator", reader.key_separator), *named[1:2],
                                named[0], named[2]):
                if value == reader.null_marker:
                    raise ReaderError(f"null.marker and {name} may not be equal")
        return reader

    def _field(self, enabled: bool, line: str, start: int, separator: str, name: str,
               number: int) -> str | None:
        if not enabled:
            return None
        end = line.find(separator, start)
        if end < 0:
            if self.ignore_error:
                return None
            raise ReaderError(f"No {name} found on line number {number}: '{line}'")
        return line[start:end]

    def _nullable(self, text: str | None) -> bytes | None:
        return None if text is None or text == self.null_marker else text.encode()

    def headers(self, text: str, number: int) -> list[tuple[str, bytes | None]]:
        # Java's Pattern.split: no match gives the whole input; trailing empty parts dropped
        parts = self.separator_pattern.split(text)
        if len(parts) > 1:
            while parts and parts[-1] == "":
                parts.pop()
        pairs: list[tuple[str, bytes | None]] = []
        for pair in parts:
            at = pair.find(self.headers_key_separator)
            if at < 0:
                if self.ignore_error:
                    pairs.append((pair, None))
                    continue
                raise ReaderError(f"No header key separator found in pair '{pair}' on line "
                                  f"number {number}")
            key = pair[:at]
            if key == self.null_marker:
                raise ReaderError(f"Header keys should not be equal to the null marker "
                                  f"'{self.null_marker}' as they can't be null")
            pairs.append((key, self._nullable(pair[at + len(self.headers_key_separator):])))
        return pairs

    def parse(self, line: str, number: int
              ) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]:
        """(key, value, headers) of one line (without its line end)."""
        headers = self._field(self.parse_headers, line, 0, self.headers_delimiter,
                              "headers delimiter", number)
        start = 0 if headers is None else len(headers) + len(self.headers_delimiter)
        key = self._field(self.parse_key, line, start, self.key_separator, "key separator",
                          number)
        if key is not None:
            start += len(key) + len(self.key_separator)
        parsed = ([] if headers is None or headers == self.null_marker
                  else self.headers(headers, number))
        return self._nullable(key), self._nullable(line[start:]), parsed


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        TOOL, help="Kafka's kafka-console-producer.sh: standard input to a topic",
        description="This tool helps to read data from standard input and publish it to "
                    "Kafka.")
    p.add_argument("--bootstrap-server", metavar="server to connect to",
                   help="REQUIRED unless --broker-list(deprecated) is specified. The "
                        "server(s) to connect to.")
    p.add_argument("--broker-list", help="DEPRECATED, use --bootstrap-server instead.")
    p.add_argument("--topic", metavar="topic",
                   help="REQUIRED: The topic id to produce messages to.")
    p.add_argument("--sync", action="store_true",
                   help="If set message send requests to the brokers are synchronously, one "
                        "at a time as they arrive.")
    p.add_argument("--compression-codec", nargs="?", const="gzip", default="none",
                   metavar="compression-codec",
                   help="The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or "
                        "'zstd'. If specified without value, then it defaults to 'gzip'")
    for flag, metavar, helptext in (
            ("--batch-size", "size", "batch.size (default 16384)"),
            ("--message-send-max-retries", "retries", "retries (default 3)"),
            ("--retry-backoff-ms", "ms", "retry.backoff.ms (default 100)"),
            ("--timeout", "timeout_ms", "linger.ms (default 1000)"),
            ("--request-required-acks", "request required acks", "acks (default -1)"),
            ("--request-timeout-ms", "request timeout ms", "request.timeout.ms (default 1500)"),
            ("--metadata-expiry-ms", "ms", "metadata.max.age.ms (default 300000)"),
            ("--max-block-ms", "max block on send",
             "how long a send waits for room in a full queue (default 60000)"),
            ("--max-memory-bytes", "bytes", "buffer.memory (default 33554432)"),
            ("--max-partition-memory-bytes", "bytes", "batch.size (default 16384)"),
            ("--socket-buffer-size", "size", "send.buffer.bytes (default 102400)")):
        p.add_argument(flag, metavar=metavar, help=f"The producer's {helptext}.",
                       type=str if flag == "--request-required-acks" else int)
    p.add_argument("--line-reader", default="org.apache.kafka.tools.LineMessageReader",
                   help="Only Kafka's LineMessageReader (the default) is available.")
    p.add_argument("--property", action="append", metavar="prop",
                   help="A property of the line reader, key=value: parse.key, key.separator, "
                        "parse.headers, headers.delimiter, headers.separator, "
                        "headers.key.separator, null.marker, ignore.error. Repeatable.")
    p.add_argument("--reader-config", metavar="config file",
                   help="Config properties file for the message reader. Note that --property "
                        "takes precedence over this config.")
    p.add_argument("--producer-property", action="append", metavar="producer_prop",
                   help="A producer property key=value. Repeatable.")
    p.add_argument("--producer.config", "--command-config", dest="producer_config",
                   metavar="config file",
                   help="Producer config properties file. Note that --producer-property takes "
                        "precedence over this config.")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="json: one JSON object per record acknowledged (kafkapy's addition).")
    p.set_defaults(run=run, parser=p)


def producer_props(opts: argparse.Namespace) -> dict[str, str]:
    """Kafka's ConsoleProducerConfig.producerProps, in Kafka's names."""
    props: dict[str, str] = {}
    if opts.producer_config:
        props.update(load_properties(opts.producer_config))
    props.update(parse_key_value(opts.producer_property))
    props["bootstrap.servers"] = opts.bootstrap_server or opts.broker_list
    props["compression.type"] = opts.compression_codec or "gzip"
    props.setdefault("client.id", "console-producer")
    if "transactional.id" not in props:
        # the Java producer's default (librdkafka's is 300000): how long a record may wait
        props.setdefault("delivery.timeout.ms", "120000")
    for dest, setting, default in MERGED_OPTIONS:
        given = getattr(opts, dest)
        if given is not None:
            props[setting] = str(given)
        elif setting not in props:
            props[setting] = default
    return props


def reader_props(opts: argparse.Namespace) -> dict[str, str]:
    props = load_properties(opts.reader_config) if opts.reader_config else {}
    props["topic"] = opts.topic
    props.update(parse_key_value(opts.property))
    return props


def _lines(stream: TextIO, prompt: bool) -> Iterator[str]:
    while True:
        if prompt:
            sys.stdout.write(">")
            sys.stdout.flush()
        line = stream.readline()
        if not line:
            return
        yield line[:-1] if line.endswith("\n") else line


@attrs.define
class Reporter:
    """The delivery callback: failures logged as Kafka's ErrorLoggingCallback logs them,
    JSON lines for --output json; the first failure kept for --sync."""

    json_output: bool
    out: TextIO
    failure: str | None = None

    def __call__(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.failed(err, msg.topic(), msg.key(), msg.value())
        elif self.json_output:
            self.out.write(json.dumps({"topic": msg.topic(), "partition": msg.partition(),
                                       "offset": msg.offset()}) + "\n")

    def failed(self, err: Any, topic: str, key: bytes | None, value: bytes | None) -> None:
        error = java_error(err, topic)
        self.failure = error
        log_line("ERROR", f"Error when sending message to topic {topic} with key: "
                          f"{'null' if key is None else f'{len(key)} bytes'}, value: "
                          f"{'null' if value is None else f'{len(value)} bytes'} with error:",
                 CALLBACK_LOGGER)
        sys.stderr.write(error + "\n")
        if self.json_output:
            self.out.write(json.dumps({"topic": topic, "error": error}) + "\n")


def run(opts: argparse.Namespace, stdin: TextIO | None = None) -> int:
    if not opts.topic:
        sys.stderr.write('Missing required argument "[topic]"\n')
        return 1
    if not (opts.bootstrap_server or opts.broker_list):
        sys.stderr.write('Missing required argument "[bootstrap-server]"\n')
        return 1
    if opts.line_reader != "org.apache.kafka.tools.LineMessageReader":
        sys.stderr.write(f"java.lang.ClassNotFoundException: {opts.line_reader} (kafkapy "
                         f"has only org.apache.kafka.tools.LineMessageReader)\n")
        return 1
    ck = import_client(TOOL)
    if ck is None:
        return 1
    try:
        props = producer_props(opts)
        reader = LineReader.configure(reader_props(opts))
        max_block_s = int(props["max.block.ms"]) / 1000
    except (OSError, ValueError) as e:
        sys.stderr.write(f"{e}\n")
        return 1
    except ReaderError as e:
        sys.stderr.write(f"org.apache.kafka.common.KafkaException: {e}\n")
        return 1
    reporter = Reporter(opts.output == "json", sys.stdout)
    try:
        producer = create_client(ck.Producer, {**librdkafka_config(props),
                                               "on_delivery": reporter}, PRODUCER_CONFIG)
    except (ck.KafkaException, ValueError, TypeError) as e:
        sys.stderr.write(f"org.apache.kafka.common.KafkaException: {e}\n")
        return 1
    if stdin is None:
        stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    prompt = stdin.isatty() and sys.stdout.isatty()
    code = 0
    catch_sigterm()
    try:
        for number, line in enumerate(_lines(stdin, prompt), 1):
            key, value, headers = reader.parse(line, number)
            _send(ck, producer, reporter, opts.topic, (key, value, headers), max_block_s)
            if opts.sync:
                producer.flush()
                if reporter.failure is not None:
                    sys.stderr.write(f"java.util.concurrent.ExecutionException: "
                                     f"{reporter.failure}\n")
                    code = 1
                    break
            else:
                producer.poll(0)
    except ReaderError as e:
        sys.stderr.write(f"org.apache.kafka.common.KafkaException: {e}\n")
        code = 1
    except TimeoutError as e:
        sys.stderr.write(f"org.apache.kafka.common.errors.TimeoutException: {e}\n")
        code = 1
    except KeyboardInterrupt:
        code = 130
    except Terminated:
        code = Terminated.code
    finally:
        # Kafka's shutdown hook closes the producer, which sends what is still queued
        producer.flush()
    return code


def _send(ck: Any, producer: Any, reporter: Reporter, topic: str,
          record: tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]],
          max_block_s: float) -> None:
    """produce(), waiting up to max.block.ms for room in a full queue (the Java producer
    blocks in send() for as long)."""
    key, value, headers = record
    deadline = time.monotonic() + max_block_s
    while True:
        try:
            producer.produce(topic, value, key, headers=headers or None)
            return
        except ck.KafkaException as e:
            # refused before sending (larger than message.max.bytes, ...): the Java producer
            # reports that through the send's callback too
            reporter.failed(e.args[0], topic, key, value)
            return
        except BufferError:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"Failed to allocate memory within the configured max "
                                   f"blocking time {int(max_block_s * 1000)} ms.") from None
            producer.poll(0.05)
