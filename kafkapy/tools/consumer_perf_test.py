"""``kafkapy consumer-perf-test``: Kafka's ``kafka-consumer-perf-test.sh``
(``ConsumerPerformance``, as Kafka 3.x prints it), on confluent-kafka's Consumer.

What it owns: one consumer in group ``--group`` (``perf-consumer-<n>`` by default) subscribed
to ``--topic`` or the topics matching ``--include``, reading from the earliest offset unless
``--from-latest`` (when the group has no committed offset), until ``--messages`` records are
read or ``--timeout`` ms pass without a record; then Kafka's CSV line
``start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec`` (after Kafka's header
unless ``--hide-header``). Sizes count keys and values; rebalance time is the time from the
start (or the last revocation of every partition) until partitions are assigned; fetch time
is the rest. ``--show-detailed-stats`` prints instead a line per ``--reporting-interval`` ms
(``time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, ...`` over
the interval). Times print in ``--date-format`` (Java's SimpleDateFormat letters y M d H m s S
and quoted text; ``yyyy-MM-dd HH:mm:ss:SSS`` by default), numbers as Java's ``%.4f``. Fewer
records than asked: Kafka's ``WARNING: Exiting before consuming the expected number of
messages`` line first.

As in Kafka, an interval report is due when a poll returns after the interval has passed,
and covers the records up to the first of that poll. Unlike Kafka 3.x (which stops updating
it after the first report), ``rebalance.time.ms`` of a detailed line is the rebalance time
within that interval. ``--output json`` prints the report lines as JSON objects
(``"type": "interval"`` / ``"total"``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from typing import Any, TextIO

import attrs

from kafkapy.tools.client_settings import (
    CONSUMER_CONFIG,
    create_client,
    import_client,
    librdkafka_config,
    load_properties,
)
from kafkapy.tools.java_format import div, fixed

__all__ = ["add_parser", "java_date", "run"]

TOOL = "consumer-perf-test"
BATCH = 500
POLL_S = 0.1            # Kafka's consumer.poll(Duration.ofMillis(100))
MB = 1024.0 * 1024.0
HEADER_TAIL = "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
TOTAL_HEADER = ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, "
                f"nMsg.sec, {HEADER_TAIL}")
DETAIL_HEADER = ("time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, "
                 f"nMsg.sec, {HEADER_TAIL}")
DATE_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|[^A-Za-z']+")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class UsageError(Exception):
    """Kafka's printUsageAndExit: the message on stderr, exit code 1."""


def java_date(pattern: str, ms: int) -> str:
    """``new SimpleDateFormat(pattern).format(ms)`` in local time, for the letters y, M, d,
    H, m, s, S and quoted text. Raises UsageError for any other letter."""
    t = time.localtime(ms // 1000)
    fields = {"y": t.tm_year, "M": t.tm_mon, "d": t.tm_mday, "H": t.tm_hour, "m": t.tm_min,
              "s": t.tm_sec, "S": ms % 1000}
    text = []
    for match in DATE_TOKEN.finditer(pattern):
        token = match.group(0)
        if token.startswith("'"):
            text.append(token[1:-1].replace("''", "'") if token != "''" else "'")
        elif match.group(1) is None:
            text.append(token)
        elif token[0] not in fields:
            raise UsageError(f"Illegal pattern character '{token[0]}' (kafkapy knows y, M, "
                             f"d, H, m, s, S)")
        elif token[0] == "y" and len(token) == 2:
            text.append(f"{t.tm_year % 100:02d}")
        elif token[0] == "M" and len(token) >= 3:
            text.append(MONTHS[t.tm_mon - 1])
        else:
            text.append(f"{fields[token[0]]:0{len(token)}d}")
    return "".join(text)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        TOOL, help="Kafka's kafka-consumer-perf-test.sh: consumer throughput",
        description="This tool is used to verify the consumer performance.")
    p.add_argument("--bootstrap-server", metavar="server to connect to",
                   help="REQUIRED: The server(s) to connect to.")
    p.add_argument("--topic", metavar="topic", help="The topic to consume from.")
    p.add_argument("--include", metavar="Java regex (String)",
                   help="Regular expression specifying list of topics to include for "
                        "consumption.")
    p.add_argument("--group", metavar="gid", help="The group id to consume on. (default: "
                                                  "perf-consumer-<random>)")
    p.add_argument("--messages", type=int, metavar="count",
                   help="REQUIRED: The number of messages to consume.")
    p.add_argument("--fetch-size", type=int, default=1024 * 1024, metavar="size",
                   help="The amount of data to fetch in a single request. (default: 1048576)")
    p.add_argument("--from-latest", action="store_true",
                   help="If the consumer does not already have an established offset to "
                        "consume from, start with the latest message present in the log "
                        "rather than the earliest message.")
    p.add_argument("--socket-buffer-size", type=int, default=2 * 1024 * 1024, metavar="size",
                   help="The size of the tcp RECV size. (default: 2097152)")
    p.add_argument("--consumer.config", "--command-config", dest="consumer_config",
                   metavar="config file", help="Consumer config properties file.")
    p.add_argument("--show-detailed-stats", action="store_true",
                   help="If set, stats are reported for each reporting interval as "
                        "configured by reporting-interval")
    p.add_argument("--timeout", type=int, default=10_000, metavar="milliseconds",
                   help="The maximum allowed time in milliseconds between returned records. "
                        "(default: 10000)")
    p.add_argument("--reporting-interval", type=int, default=5_000, metavar="interval_ms",
                   help="Interval in milliseconds at which to print progress info. "
                        "(default: 5000)")
    p.add_argument("--date-format", default="yyyy-MM-dd HH:mm:ss:SSS", metavar="date format",
                   help="The date format to use for formatting the time field (Java's "
                        "SimpleDateFormat letters y M d H m s S). (default: yyyy-MM-dd "
                        "HH:mm:ss:SSS)")
    p.add_argument("--hide-header", action="store_true",
                   help="If set, skips printing the header for the stats")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="json: one JSON object per report line (kafkapy's addition).")
    p.set_defaults(run=run, parser=p)


def check_args(opts: argparse.Namespace) -> None:
    if opts.messages is None:
        raise UsageError('Missing required argument "[messages]"')
    if (opts.topic is None) == (opts.include is None):
        raise UsageError("Exactly one of the following arguments is required: [topic], "
                         "[include]")
    if not opts.bootstrap_server:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if opts.reporting_interval <= 0:
        raise UsageError("Reporting interval must be greater than 0.")
    java_date(opts.date_format, 0)
    if opts.include is not None:
        try:
            re.compile(opts.include)
        except re.error as e:
            raise UsageError(f"java.util.regex.PatternSyntaxException: {e}") from None


def consumer_props(opts: argparse.Namespace) -> dict[str, str]:
    """Kafka's ConsumerPerfOptions.props."""
    props = load_properties(opts.consumer_config) if opts.consumer_config else {}
    props["bootstrap.servers"] = opts.bootstrap_server
    props["group.id"] = opts.group or f"perf-consumer-{random.randrange(100_000)}"
    props["receive.buffer.bytes"] = str(opts.socket_buffer_size)
    props["max.partition.fetch.bytes"] = str(opts.fetch_size)
    props["auto.offset.reset"] = "latest" if opts.from_latest else "earliest"
    props["check.crcs"] = "false"
    props.setdefault("client.id", "perf-consumer-client")
    return props


def _now_ms() -> int:
    return int(time.time() * 1000)


@attrs.define
class Rebalances:
    """Kafka's ConsumerPerfRebListener: time spent without partitions, in total and since
    the last report."""

    join_start_ms: int
    total_ms: int = 0
    round_ms: int = 0
    assigned: set[tuple[str, int]] = attrs.field(factory=set)

    def on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        if not self.assigned:
            elapsed = _now_ms() - self.join_start_ms
            self.total_ms += elapsed
            self.round_ms += elapsed
        self.assigned.update((p.topic, p.partition) for p in partitions)

    def on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        self.assigned.difference_update((p.topic, p.partition) for p in partitions)
        if not self.assigned:
            self.join_start_ms = _now_ms()


@attrs.define
class Reporter:
    opts: argparse.Namespace
    out: TextIO

    def _json(self, kind: str, **fields: Any) -> None:
        def clean(x: Any) -> Any:
            return None if isinstance(x, float) and (x != x or abs(x) == float("inf")) else x
        self.out.write(json.dumps({"type": kind, **{k: clean(v) for k, v in fields.items()}})
                       + "\n")

    def header(self) -> None:
        if not self.opts.hide_header and self.opts.output != "json":
            self.out.write((DETAIL_HEADER if self.opts.show_detailed_stats else TOTAL_HEADER)
                           + "\n")

    def interval(self, bytes_read: int, last_bytes: int, count: int, last_count: int,
                 start_ms: int, end_ms: int, join_ms: int) -> None:
        elapsed = end_ms - start_ms
        total_mb = bytes_read / MB
        interval_mb = (bytes_read - last_bytes) / MB
        mb_sec = div(1000.0 * interval_mb, elapsed)
        msg_sec = div(count - last_count, elapsed) * 1000.0
        fetch_ms = elapsed - join_ms
        fetch_mb_sec = 0.0 if fetch_ms <= 0 else 1000.0 * interval_mb / fetch_ms
        fetch_msg_sec = 0.0 if fetch_ms <= 0 else 1000.0 * (count - last_count) / fetch_ms
        when = java_date(self.opts.date_format, end_ms)
        if self.opts.output == "json":
            self._json("interval", time=when, thread_id=0, data_consumed_mb=total_mb,
                       mb_sec=mb_sec, data_consumed_msgs=count, msgs_sec=msg_sec,
                       rebalance_time_ms=join_ms, fetch_time_ms=fetch_ms,
                       fetch_mb_sec=fetch_mb_sec, fetch_msgs_sec=fetch_msg_sec)
        else:
            self.out.write(f"{when}, 0, {fixed(total_mb, 4)}, {fixed(mb_sec, 4)}, {count}, "
                           f"{fixed(msg_sec, 4)}, {join_ms}, {fetch_ms}, "
                           f"{fixed(fetch_mb_sec, 4)}, {fixed(fetch_msg_sec, 4)}\n")
        self.out.flush()

    def total(self, bytes_read: int, count: int, start_ms: int, end_ms: int,
              join_ms: int) -> None:
        elapsed_s = (end_ms - start_ms) / 1000.0
        fetch_ms = end_ms - start_ms - join_ms
        mb = bytes_read / MB
        values = (java_date(self.opts.date_format, start_ms),
                  java_date(self.opts.date_format, end_ms), mb, div(mb, elapsed_s), count,
                  div(count, elapsed_s), join_ms, fetch_ms, div(mb, fetch_ms / 1000.0),
                  div(count, fetch_ms / 1000.0))
        if self.opts.output == "json":
            names = ("start_time", "end_time", "data_consumed_mb", "mb_sec",
                     "data_consumed_msgs", "msgs_sec", "rebalance_time_ms", "fetch_time_ms",
                     "fetch_mb_sec", "fetch_msgs_sec")
            self._json("total", **dict(zip(names, values, strict=True)))
        else:
            self.out.write(", ".join(fixed(v, 4) if isinstance(v, float) else str(v)
                                     for v in values) + "\n")


def run(opts: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        check_args(opts)
        props = consumer_props(opts)
    except (UsageError, OSError) as e:
        sys.stderr.write(f"{e}\n")
        return 1
    ck = import_client(TOOL)
    if ck is None:
        return 1
    reporter = Reporter(opts, out)
    reporter.header()
    try:
        consumer = create_client(ck.Consumer, librdkafka_config(props), CONSUMER_CONFIG)
    except (ck.KafkaException, ValueError, TypeError) as e:
        sys.stderr.write(f"{e}\n")
        return 1
    start_ms = _now_ms()
    rebalances = Rebalances(start_ms)
    topics = [opts.topic] if opts.topic is not None else [f"^({opts.include})$"]
    try:
        consumer.subscribe(topics, on_assign=rebalances.on_assign,
                           on_revoke=rebalances.on_revoke)
    except ck.KafkaException as e:
        consumer.close()
        sys.stderr.write(f"{e}\n")
        return 1
    try:
        count, bytes_read = _consume(consumer, opts, reporter, rebalances)
    except KeyboardInterrupt:
        consumer.close()
        return 130
    end_ms = _now_ms()
    consumer.close()
    if not opts.show_detailed_stats:
        reporter.total(bytes_read, count, start_ms, end_ms, rebalances.total_ms)
    out.flush()
    return 0


def _size(msg: Any) -> int:
    key, value = msg.key(), msg.value()
    return (0 if key is None else len(key)) + (0 if value is None else len(value))


def _consume(consumer: Any, opts: argparse.Namespace, reporter: Reporter,
             rebalances: Rebalances) -> tuple[int, int]:
    wanted, timeout_ms, interval_ms = opts.messages, opts.timeout, opts.reporting_interval
    count = bytes_read = last_count = last_bytes = 0
    now = last_report = last_consumed = _now_ms()
    while count < wanted and now - last_consumed <= timeout_ms:
        batch = [m for m in consumer.consume(BATCH, POLL_S) if m.error() is None]
        now = _now_ms()
        if not batch:
            continue
        last_consumed = now
        # Kafka checks for a due report at each record with the poll's time: only the
        # first record of a poll can find it due
        count += 1
        bytes_read += _size(batch[0])
        if now - last_report >= interval_ms:
            if opts.show_detailed_stats:
                reporter.interval(bytes_read, last_bytes, count, last_count, last_report, now,
                                  rebalances.round_ms)
            rebalances.round_ms = 0
            last_report, last_count, last_bytes = now, count, bytes_read
        count += len(batch) - 1
        bytes_read += sum(_size(m) for m in batch[1:])
    if count < wanted:
        reporter.out.write(f"WARNING: Exiting before consuming the expected number of "
                           f"messages: timeout ({timeout_ms} ms) exceeded. You can use the "
                           f"--timeout option to increase the timeout.\n")
    return count, bytes_read
