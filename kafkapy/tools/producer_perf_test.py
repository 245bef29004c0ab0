"""``kafkapy producer-perf-test``: Kafka's ``kafka-producer-perf-test.sh``
(``ProducerPerformance``, as Kafka 3.x prints it), on confluent-kafka's Producer.

What it owns: sending ``--num-records`` records to ``--topic`` as fast as ``--throughput``
allows (records per second; -1 unthrottled), their payloads ``--record-size`` random uppercase
letters, or chosen at random among the ``--payload-file``'s parts split at
``--payload-delimiter`` (a regular expression, ``\\n`` by default), or ``--payload-monotonic``
the record's number; transactions when ``--transactional-id`` or
``--transaction-duration-ms`` (or ``transactional.id`` in the properties) is given, committed
every ``--transaction-duration-ms`` (3000 by default); the producer's properties from
``--producer.config`` (alias ``--command-config``) then ``--producer-props`` (and
``--bootstrap-server``, kafkapy's shorthand for ``bootstrap.servers``).

It prints Kafka's lines: every 5 s of acknowledgements ``N records sent, X records/sec (Y
MB/sec), A ms avg latency, M ms max latency.`` over that window, and at the end ``N records
sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency, P50 ms 50th, P95 ms 95th,
P99 ms 99th, P999 ms 99.9th.`` over the whole run (which includes waiting for the last
acknowledgement). A record's latency is the time from its send to its acknowledgement, as the
client measures it; percentiles come from a sample of at most 500,000 latencies (every
``num_records // 500000``-th), as in Kafka. Only acknowledged records count; a failed one
prints its error on stderr. ``--output json`` prints the same reports as JSON objects
(``"type": "window"`` / ``"total"``).

Random letters: Kafka draws new letters for every record; generating bytes per record in
Python would make the tool measure itself, so a pool of random payloads is drawn once and
sent in turn (the bytes, and so compression ratios, are of the same kind).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
import uuid
from typing import Any, TextIO

import attrs

from kafkapy.tools.client_settings import (
    PRODUCER_CONFIG,
    create_client,
    import_client,
    java_error,
    librdkafka_config,
    load_properties,
)
from kafkapy.tools.java_format import div, fixed

__all__ = ["Stats", "add_parser", "run"]

TOOL = "producer-perf-test"
PROG = "producer-performance"
REPORTING_INTERVAL_MS = 5000
MAX_SAMPLES = 500_000
PAYLOAD_POOL = 1024          # distinct random payloads drawn for --record-size
DEFAULT_TRANSACTION_DURATION_MS = 3000
LETTERS = bytes(range(65, 91))
POLL_EVERY = 64              # records produced between two serves of the delivery callbacks


class UsageError(Exception):
    """argparse4j's error: ``producer-performance: error: <message>``, exit code 1."""


@attrs.define
class Stats:
    """Kafka's ProducerPerformance.Stats: totals, the current 5 s window, a latency sample."""

    num_records: int
    out: TextIO
    json_output: bool = False
    start_ms: int = attrs.field(factory=lambda: _now_ms())
    window_start_ms: int = attrs.field(factory=lambda: _now_ms())
    sampling: int = attrs.field(init=False)
    latencies: list[int] = attrs.field(factory=list)
    iteration: int = 0
    count: int = 0
    bytes: int = 0
    max_latency: int = 0
    total_latency: int = 0
    window_count: int = 0
    window_max_latency: int = 0
    window_total_latency: int = 0
    window_bytes: int = 0

    def __attrs_post_init__(self) -> None:
        self.sampling = max(1, self.num_records // min(self.num_records, MAX_SAMPLES))

    def record(self, latency: int, size: int, now_ms: int) -> None:
        self.count += 1
        self.bytes += size
        self.total_latency += latency
        self.max_latency = max(self.max_latency, latency)
        self.window_count += 1
        self.window_bytes += size
        self.window_total_latency += latency
        self.window_max_latency = max(self.window_max_latency, latency)
        if self.iteration % self.sampling == 0:
            self.latencies.append(latency)
        if now_ms - self.window_start_ms >= REPORTING_INTERVAL_MS:
            self.print_window()
            self.new_window()
        self.iteration += 1

    def print_window(self) -> None:
        elapsed = _now_ms() - self.window_start_ms
        rate = div(1000.0 * self.window_count, elapsed)
        mb = div(1000.0 * self.window_bytes, elapsed) / (1024.0 * 1024.0)
        avg = div(self.window_total_latency, self.window_count)
        if self.json_output:
            self._json("window", self.window_count, rate, mb, avg, self.window_max_latency)
        else:
            self.out.write(f"{self.window_count} records sent, {fixed(rate, 1)} records/sec "
                           f"({fixed(mb, 2)} MB/sec), {fixed(avg, 1)} ms avg latency, "
                           f"{fixed(self.window_max_latency, 1)} ms max latency.\n")
        self.out.flush()

    def new_window(self) -> None:
        self.window_start_ms = _now_ms()
        self.window_count = self.window_max_latency = 0
        self.window_total_latency = self.window_bytes = 0

    def percentiles(self) -> list[int]:
        sample = sorted(self.latencies)
        # Kafka indexes its (zero-filled) array: an empty sample gives 0
        return [sample[int(p * len(sample))] if sample else 0
                for p in (0.5, 0.95, 0.99, 0.999)]

    def print_total(self) -> None:
        elapsed = _now_ms() - self.start_ms
        rate = div(1000.0 * self.count, elapsed)
        mb = div(1000.0 * self.bytes, elapsed) / (1024.0 * 1024.0)
        avg = div(self.total_latency, self.count)
        p50, p95, p99, p999 = self.percentiles()
        if self.json_output:
            self._json("total", self.count, rate, mb, avg, self.max_latency,
                       {"p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "p999_ms": p999})
        else:
            self.out.write(f"{self.count} records sent, {fixed(rate)} records/sec "
                           f"({fixed(mb, 2)} MB/sec), {fixed(avg, 2)} ms avg latency, "
                           f"{fixed(self.max_latency, 2)} ms max latency, {p50} ms 50th, "
                           f"{p95} ms 95th, {p99} ms 99th, {p999} ms 99.9th.\n")
        self.out.flush()

    def _json(self, kind: str, count: int, rate: float, mb: float, avg: float,
              max_latency: int, extra: dict[str, int] | None = None) -> None:
        def number(x: float) -> float | None:
            return None if x != x or x in (float("inf"), float("-inf")) else x
        self.out.write(json.dumps({
            "type": kind, "records": count, "records_per_sec": number(rate),
            "mb_per_sec": number(mb), "avg_latency_ms": number(avg),
            "max_latency_ms": max_latency, **(extra or {})}) + "\n")


def _now_ms() -> int:
    return int(time.time() * 1000)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        TOOL, help="Kafka's kafka-producer-perf-test.sh: producer throughput and latency",
        description="This tool is used to verify the producer performance.")
    p.add_argument("--topic", metavar="TOPIC", help="produce messages to this topic")
    p.add_argument("--num-records", type=int, metavar="NUM-RECORDS",
                   help="number of messages to produce")
    p.add_argument("--record-size", type=int, metavar="RECORD-SIZE",
                   help="message size in bytes.")
    p.add_argument("--payload-file", metavar="PAYLOAD-FILE",
                   help="file to read the message payloads from (UTF-8 text); a payload is "
                        "chosen at random for each message.")
    p.add_argument("--payload-monotonic", action="store_true",
                   help="payload is monotonically increasing integer.")
    p.add_argument("--payload-delimiter", default="\\n", metavar="PAYLOAD-DELIMITER",
                   help="delimiter of the payloads in --payload-file (default: \\n)")
    p.add_argument("--throughput", type=float, metavar="THROUGHPUT",
                   help="throttle maximum message throughput to *approximately* THROUGHPUT "
                        "messages/sec. Set this to -1 to disable throttling.")
    p.add_argument("--producer-props", nargs="+", action="extend",
                   metavar="PROP-NAME=PROP-VALUE",
                   help="kafka producer related configuration properties like "
                        "bootstrap.servers,client.id etc. These configs take precedence over "
                        "those passed via --producer.config.")
    p.add_argument("--producer.config", "--command-config", dest="producer_config",
                   metavar="CONFIG-FILE", help="producer config properties file.")
    p.add_argument("--bootstrap-server", metavar="BOOTSTRAP-SERVERS",
                   help="bootstrap.servers (kafkapy's shorthand; --producer-props wins)")
    p.add_argument("--transactional-id", metavar="TRANSACTIONAL-ID",
                   help="The transactional id to use (over transactional.id in the "
                        "properties); transactions are on when it is given.")
    p.add_argument("--transaction-duration-ms", type=int, metavar="TRANSACTION-DURATION",
                   help="The max age of each transaction (default 3000 when transactions are "
                        "on).")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="json: one JSON object per report line (kafkapy's addition).")
    p.set_defaults(run=run, parser=p)


@attrs.frozen
class Plan:
    topic: str
    num_records: int
    throughput: float
    props: dict[str, str]
    payloads: list[bytes]
    monotonic: bool
    random_payloads: bool
    transaction_duration_ms: int | None


def plan(opts: argparse.Namespace, out: TextIO) -> Plan:
    """Kafka's ConfigPostProcessor checks and settings."""
    for flag, value in (("--topic", opts.topic), ("--num-records", opts.num_records),
                        ("--throughput", opts.throughput)):
        if value is None:
            raise UsageError(f"argument {flag} is required")
    chosen = [f for f, v in (("--record-size", opts.record_size),
                             ("--payload-file", opts.payload_file),
                             ("--payload-monotonic", opts.payload_monotonic or None))
              if v is not None]
    if len(chosen) != 1:
        raise UsageError("one of the arguments --record-size --payload-file "
                         "--payload-monotonic is required" if not chosen else
                         f"argument {chosen[1]}: not allowed with argument {chosen[0]}")
    if opts.num_records <= 0:
        raise UsageError("--num-records should be greater than zero")
    if opts.record_size is not None and opts.record_size <= 0:
        raise UsageError("--record-size should be greater than zero")
    if opts.producer_props is None and opts.producer_config is None \
            and opts.bootstrap_server is None:
        raise UsageError("Either --producer-props or --producer.config must be specified.")
    if opts.transaction_duration_ms is not None and opts.transaction_duration_ms <= 0:
        raise UsageError("--transaction-duration-ms should be greater than zero")
    props = load_properties(opts.producer_config) if opts.producer_config else {}
    if opts.bootstrap_server:
        props["bootstrap.servers"] = opts.bootstrap_server
    for prop in opts.producer_props or ():
        pieces = prop.split("=")
        if len(pieces) != 2:
            raise ValueError(f"Invalid property: {prop}")
        props[pieces[0]] = pieces[1]
    props.setdefault("client.id", "perf-producer-client")
    duration = opts.transaction_duration_ms
    if duration is not None or opts.transactional_id or "transactional.id" in props:
        props["transactional.id"] = (opts.transactional_id or props.get("transactional.id")
                                     or f"performance-producer-{uuid.uuid4()}")
        duration = duration or DEFAULT_TRANSACTION_DURATION_MS
    else:
        # the Java producer's default (librdkafka's is 300000; a transactional librdkafka
        # producer bounds it by transaction.timeout.ms itself)
        props.setdefault("delivery.timeout.ms", "120000")
    payloads: list[bytes] = []
    if opts.payload_file:
        payloads = read_payload_file(opts.payload_file, opts.payload_delimiter, out)
    elif opts.record_size:
        rng = random.Random(0)
        pool = min(PAYLOAD_POOL, opts.num_records)
        letters = bytes(rng.choices(LETTERS, k=opts.record_size * pool))
        payloads = [letters[i * opts.record_size:(i + 1) * opts.record_size]
                    for i in range(pool)]
    return Plan(opts.topic, opts.num_records, opts.throughput, props, payloads,
                opts.payload_monotonic, bool(opts.payload_file), duration)


def read_payload_file(path: str, delimiter: str, out: TextIO) -> list[bytes]:
    """Kafka's readPayloadFile: the parts of the file between matches of the delimiter (a
    regular expression, as Java's Scanner takes it), empty parts skipped."""
    out.write(f"Reading payloads from: {os.path.abspath(path)}\n")
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        raise ValueError("File does not exist or empty file provided.")
    separator = "\n" if delimiter == "\\n" else delimiter
    with open(path, encoding="utf-8") as f:
        parts = re.split(separator, f.read())
    payloads = [part.encode() for part in parts if part]
    out.write(f"Number of messages read: {len(payloads)}\n")
    return payloads


def run(opts: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        settings = plan(opts, out)
    except UsageError as e:
        sys.stderr.write(f"{PROG}: error: {e}\n")
        return 1
    except (ValueError, OSError) as e:
        sys.stderr.write(f"Exception in thread \"main\" java.lang.IllegalArgumentException: "
                         f"{e}\n")
        return 1
    ck = import_client(TOOL)
    if ck is None:
        return 1
    stats = Stats(settings.num_records, out, opts.output == "json")

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            stats.record(int(msg.latency() * 1000), len(msg), _now_ms())
        else:
            sys.stderr.write(java_error(err, settings.topic) + "\n")

    try:
        producer = create_client(ck.Producer, {**librdkafka_config(settings.props),
                                               "on_delivery": on_delivery}, PRODUCER_CONFIG)
        if settings.transaction_duration_ms is not None:
            producer.init_transactions(60)
    except (ck.KafkaException, ValueError, TypeError) as e:
        sys.stderr.write(f"org.apache.kafka.common.KafkaException: {e}\n")
        return 1
    # Kafka starts its clock after the producer (and its transactions) are ready
    stats.start_ms = stats.window_start_ms = _now_ms()
    try:
        _send_all(producer, settings, stats)
    except ck.KafkaException as e:
        sys.stderr.write(f"{java_error(e.args[0], settings.topic)}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    stats.print_total()
    return 0


def _send_all(producer: Any, settings: Plan, stats: Stats) -> None:
    topic, payloads, n = settings.topic, settings.payloads, settings.num_records
    transactional = settings.transaction_duration_ms is not None
    duration_ms = settings.transaction_duration_ms or 0
    # a payload file's parts are chosen at random, as Kafka does; random letters in turn
    choose = random.Random(0).randrange if settings.random_payloads else None
    throttled = settings.throughput >= 0
    start = time.monotonic()
    in_transaction = False
    transaction_start_ms = 0
    produce, poll = producer.produce, producer.poll
    for i in range(n):
        if settings.monotonic:
            payload = str(i).encode()
        elif choose is not None:
            payload = payloads[choose(len(payloads))]
        else:
            payload = payloads[i % len(payloads)]
        if transactional and not in_transaction:
            producer.begin_transaction()
            in_transaction = True
            transaction_start_ms = _now_ms()
        while True:
            try:
                produce(topic, payload)
                break
            except BufferError:
                # the queue is full: the Java producer blocks in send() until there is room
                poll(0.01)
        if i % POLL_EVERY == 0:
            poll(0)
        if transactional and _now_ms() - transaction_start_ms >= duration_ms:
            producer.commit_transaction()
            in_transaction = False
        if throttled:
            _throttle(i + 1, start, settings.throughput, poll)
    if in_transaction:
        producer.commit_transaction()
    producer.flush()


def _throttle(sent: int, start: float, throughput: float, poll: Any) -> None:
    """Kafka's ThroughputThrottler: ahead of ``throughput`` records per second since the
    start, wait (serving delivery callbacks) until the schedule catches up."""
    if throughput == 0:
        while True:
            poll(1.0)
    ahead = start + sent / throughput - time.monotonic()
    while ahead > 0:
        poll(ahead)
        ahead = start + sent / throughput - time.monotonic()
