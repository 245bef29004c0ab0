"""Spark write speed harness (issue 23): the ``kafkapy`` sink against one plain producer.

    PYTHONPATH=.:spark_integration .venv/bin/python benchmarks/spark_sink_harness.py \\
        [--records N] [--rounds R]

(needs ``pip install 'kafkapy[spark]' confluent-kafka`` and a JDK; it sets PYSPARK_PYTHON and
the workers' PYTHONPATH itself). Prints a markdown table for docs/spark.md.

1. A kafkapy broker in a child process (``e2e_harness.BrokerProcess``, a temporary log dir).
   Every timed write goes to a new topic of 4 partitions, deleted after the case (untimed:
   ``Topics``), so the log dir never holds more than one case's records.
2. The records: N (default 1,000,000) of 100-byte values and 8-byte keys (1,000 distinct),
   null partition (the partitioner chooses: murmur2 of the key).
   - **Spark**: ``spark.range(N, numPartitions=2)`` turned into ``key``/``value`` binary
     columns, cached and counted before any timing (Spark reads them from memory), written
     with ``df.write.format("kafkapy")`` from ``local[2]``: two tasks, each its own
     producer. Timed twice: exactly once (the default: a transaction and a marker per
     task) and ``exactlyOnce=false`` (idempotent producer, as Spark's own sink).
   - **(a) plain producer**: one confluent-kafka Producer in this process, the same records
     from Python lists built beforehand (untimed), one ``produce()`` per record, then
     ``flush()``: idempotent, acks=all, murmur2 partitioner as the sink's producers, and
     librdkafka's default batching (linger.ms 5; the sink's default is 20: what that gives a
     single producer moves between runs, so quote a run with ``--producer-option
     linger.ms=20`` too, which gives both the same), no delivery callback.
   A timed write ends when every record is acknowledged (the task's commit, or ``flush``).
   - **(b) null sink**: the same DataFrame written to a Python Arrow sink that only counts
     its rows: what Spark and the data source API cost before any producing.
3. Rounds in an order that rotates by round (interleaved, so a noisy machine's drift hits
   every case alike); one untimed warm-up of each first. Medians of rows/s and of the per-
   round ratios Spark / (a), in rows/s and in rows per CPU second of every process of the run
   (this one, the broker, Spark's JVM and Python workers: ``spark_harness.tree_cpu_seconds``).
   The machine's other CPU use (other jobs: /proc/stat busy time less the run's) is measured
   during every case and shown beside each figure; a case during which it was over 0.3 cores
   is run again after the machine quietens (``--repeat-noisy``, twice at most, the last
   attempt kept and counted in the table); the load average before, per round, after.
4. Where the CPU goes (``ThreadCpu``): CPU microseconds per record of each process (this one,
   the broker, Spark's JVM, its Python workers) and thread kind (librdkafka's threads, the
   JVM's GC and JIT threads, the rest), from /proc/<pid>/task sampled every 0.25 s.
5. ``--variant LABEL:NAME=VALUE,...`` adds an exactly-once sink case with other sink options
   or Spark SQL settings, interleaved with the rest: A/B in one run, on one broker.

Target (issue 23): Spark local[2] >= 1.0x the plain producer's rows/s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from benchmarks.e2e_harness import BrokerProcess
from benchmarks.spark_harness import descendants, tree_cpu_seconds

ROOT = Path(__file__).resolve().parent.parent
PARTITIONS = 4
KEYS = 1000
VALUE_SIZE = 100
# Other jobs' CPU (cores) above which a case's figures are flagged and the case re-run.
NOISY = 0.3
# What the sink sets on its producers (pyspark_kafkapy._sink_options), for (a) too.
PRODUCER: dict[str, object] = {"enable.idempotence": True, "acks": "all",
                               "partitioner": "murmur2_random"}


class ThreadCpu:
    """Where the run's CPU goes: every thread of this process tree, by process (this one, the
    broker, Spark's JVM, Spark's Python workers) and by thread (librdkafka's ``rdk:*`` threads,
    the JVM's GC and JIT compiler threads, the rest), from /proc/<pid>/task/<tid>/stat.

    A sampler thread reads them every ``interval`` s, so a thread that ends (a task's producer
    is closed at the task's end) is counted up to its last sample: at most ``interval`` of its
    CPU is missed, an idle producer's last moments. ``case()`` gives the CPU seconds of each
    (process, thread) kind since the previous ``case()``."""

    def __init__(self, broker_pid: int, interval: float = 0.25) -> None:
        import threading

        self.broker_pid = broker_pid
        self.interval = interval
        self.ticks: dict[int, tuple[str, int]] = {}     # tid -> (kind, ticks), latest sample
        self.marks: dict[int, int] = {}                 # tid -> ticks at the last case()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.sample()
        self.marks = {tid: t for tid, (_, t) in self.ticks.items()}
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _kind(self, pid: int, comm: str, thread: str) -> str:
        if pid == os.getpid():
            proc = "harness"
        elif pid == self.broker_pid:
            proc = "broker"
        elif comm == "java":
            proc = "Spark JVM"
        else:
            proc = "Python workers"
        if thread.startswith("rdk:"):
            return f"{proc}: librdkafka threads"
        if comm == "java":
            if thread.startswith(("GC Thread", "G1 ", "VM Thread")):
                return f"{proc}: GC"
            if thread.startswith(("C1 ", "C2 ")):
                return f"{proc}: JIT"
        return f"{proc}: other threads" if comm == "java" else f"{proc}: Python threads"

    def sample(self) -> None:
        parents: dict[int, int] = {}
        comms: dict[int, str] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        head, tail = f.read().rsplit(")", 1)
                except OSError:
                    continue
                parents[int(entry)] = int(tail.split()[1])
                comms[int(entry)] = head.split("(", 1)[1]
        tree = descendants(parents, os.getpid())
        ticks: dict[int, tuple[str, int]] = {}
        for pid in tree:
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                try:
                    with open(f"/proc/{pid}/task/{tid}/stat") as f:
                        head, tail = f.read().rsplit(")", 1)
                except OSError:
                    continue
                fields = tail.split()
                ticks[int(tid)] = (self._kind(pid, comms[pid], head.split("(", 1)[1]),
                                   int(fields[11]) + int(fields[12]))
        with self.lock:
            self.ticks.update(ticks)

    def _run(self) -> None:
        while not self.stop.wait(self.interval):
            self.sample()

    def case(self) -> dict[str, float]:
        """CPU seconds per kind since the last call."""
        self.sample()
        out: dict[str, float] = {}
        hz = os.sysconf("SC_CLK_TCK")
        with self.lock:
            for tid, (kind, t) in self.ticks.items():
                out[kind] = out.get(kind, 0.0) + (t - self.marks.get(tid, 0)) / hz
            # Threads gone since: their CPU was counted; forget them (tids are reused).
            self.ticks = {tid: v for tid, v in self.ticks.items()
                          if os.path.exists(f"/proc/{tid}")}
            self.marks = {tid: t for tid, (_, t) in self.ticks.items()}
        return out

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def machine_busy_seconds() -> float:
    """CPU seconds every process of the machine has used (/proc/stat, all CPUs: everything
    but idle and iowait)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


class NullSink:
    """(b): ``format("bench-null-sink")``, a Python Arrow sink that only counts the rows it is
    handed: what Spark and the API cost before any producing (the write path's ceiling)."""

    @staticmethod
    def source() -> type:
        from pyspark.sql.datasource import (
            DataSource,
            DataSourceArrowWriter,
            WriterCommitMessage,
        )

        class Count(WriterCommitMessage):
            def __init__(self, rows: int) -> None:
                self.rows = rows

        class Writer(DataSourceArrowWriter):
            def write(self, iterator: Any) -> Count:
                return Count(sum(batch.num_rows for batch in iterator))

            def commit(self, messages: Any) -> None:
                assert sum(m.rows for m in messages) == int(self.expected)

            expected = 0

        class Source(DataSource):
            @classmethod
            def name(cls) -> str:
                return "bench-null-sink"

            def writer(self, schema: Any, overwrite: bool) -> Writer:
                w = Writer()
                w.expected = int(self.options["rows"])
                return w

        return Source


class Topics:
    """A fresh 4-partition topic for every timed write, deleted after it (``clear``): the log
    dir holds one case's records, not the whole run's (5 M records: 0.6 GB a case, ~10 GB a
    run), whose page cache and writeback made the broker's writes cost more kernel time as the
    run went on, in the later cases more than the earlier ones."""

    def __init__(self, bootstrap: str, log_dir: Path) -> None:
        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self.log_dir = log_dir
        self.n = 0
        self.live: list[str] = []

    def new(self) -> str:
        self.n += 1
        name = f"sink-bench-{self.n}"
        for future in self.admin.create_topics([NewTopic(name, PARTITIONS, 1)]).values():
            future.result(timeout=60)
        self.live.append(name)
        return name

    def clear(self, timeout: float = 60.0) -> None:
        """Delete the topics written so far and wait (bounded) for their files to go (the
        broker's ``log.segment.delete.delay.ms`` is 0 here)."""
        if not self.live:
            return
        for future in self.admin.delete_topics(self.live).values():
            future.result(timeout=60)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(
                entry.name.startswith(tuple(f"{t}-" for t in self.live))
                for entry in os.scandir(self.log_dir)):
            time.sleep(0.1)
        self.live = []


def records(n: int) -> tuple[list[bytes], list[bytes]]:
    """The records of (a): the same keys and values as the Spark DataFrame's."""
    keys = [b"%08d" % (i % KEYS) for i in range(n)]
    values = [(b"%032X" % (i * 2654435761)) * 3 + b"%04d" % (i % 10_000) for i in range(n)]
    assert all(len(v) == VALUE_SIZE for v in values[:10])
    return keys, values


def plain_producer(bootstrap: str, topic: str, keys: list[bytes], values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER})
    produce, poll = producer.produce, producer.poll
    for k, v in zip(keys, values, strict=True):
        while True:
            try:
                produce(topic, v, k)
                break
            except BufferError:
                poll(0.005)
    left = producer.flush(300)
    if left:
        raise RuntimeError(f"{left} records not delivered")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default=None, help="make the log dir inside this directory")
    ap.add_argument("--producer-option", action="append", default=[], metavar="NAME=VALUE",
                    help="a librdkafka setting for every producer, the sink's (as kafka.NAME) "
                         "and (a)'s alike; repeatable")
    ap.add_argument("--variant", action="append", default=[],
                    metavar="LABEL:NAME=VALUE[,NAME=VALUE...]",
                    help="one more case, interleaved with the others: the exactly-once sink "
                         "write with these sink options (kafka.*, ...) and Spark SQL settings "
                         "(spark.*, set for that write only); repeatable")
    ap.add_argument("--repeat-noisy", type=int, default=2, metavar="N",
                    help=f"run a case again (up to N times, after waiting for a quiet machine) "
                         f"when the machine's other CPU use during it was over {NOISY} cores; "
                         "the last attempt is kept and the table says how many were repeated")
    args = ap.parse_args(argv)
    variants: dict[str, dict[str, str]] = {}
    for spec in args.variant:
        label, _, settings = spec.partition(":")
        variants[label] = dict(item.split("=", 1) for item in settings.split(",") if item)
    for setting in args.producer_option:
        name, _, value = setting.partition("=")
        PRODUCER[name] = value
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} CPUs)", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="kafkapy-sink-bench-", dir=args.dir))
    config = {"log.dirs": str(tmp / "log"), "num.partitions": str(PARTITIONS),
              "transaction.state.log.num.partitions": "4",
              "offsets.topic.num.partitions": "4", "log.segment.delete.delay.ms": "0"}
    try:
        broker = BrokerProcess(config)
        with broker as bootstrap:
            run(bootstrap, broker.proc.pid, tmp / "log", args.records, args.rounds, variants,
                args.repeat_noisy)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def wait_quiet(limit: float = 120.0) -> None:
    """Until the machine's other CPU use (busy time less this run's, over 2 s) is at most
    NOISY cores, for at most ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        cpu_before, busy_before = tree_cpu_seconds(), machine_busy_seconds()
        time.sleep(2.0)
        if (machine_busy_seconds() - busy_before - (tree_cpu_seconds() - cpu_before)) / 2.0 \
                <= NOISY:
            return


def run(bootstrap: str, broker_pid: int, log_dir: Path, n: int, rounds: int,
        variants: dict[str, dict[str, str]], repeat_noisy: int) -> None:
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "spark_integration"),
         *filter(None, [os.environ.get("PYTHONPATH")])])
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (SparkSession.builder.master("local[2]").appName("kafkapy-sink-bench")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.memory", "1g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = (spark.range(0, n, numPartitions=2)
          .select(F.format_string("%08d", F.col("id") % KEYS).cast("binary").alias("key"),
                  F.concat(F.repeat(F.lpad(F.hex(F.col("id") * 2654435761), 32, "0"), 3),
                           F.format_string("%04d", F.col("id") % 10_000))
                  .cast("binary").alias("value"))
          .cache())
    assert df.count() == n
    sample = df.limit(3).collect()
    keys, values = records(n)
    assert [bytes(r.key) for r in sample] == keys[:3], (sample, keys[:3])
    assert [bytes(r.value) for r in sample] == values[:3], (sample, values[:3])
    topics = Topics(bootstrap, log_dir)

    def spark_write(exactly_once: bool, settings: dict[str, str] | None = None
                    ) -> Callable[[], None]:
        settings = settings or {}
        confs = {k: v for k, v in settings.items() if k.startswith("spark.")}

        def go() -> None:
            writer = (df.write.format("kafkapy").option("kafka.bootstrap.servers", bootstrap)
                      .option("topic", topics.new())
                      .option("exactlyOnce", "true" if exactly_once else "false"))
            for name, value in PRODUCER.items():
                if name not in ("enable.idempotence", "acks", "partitioner"):  # the sink's own
                    writer = writer.option(f"kafka.{name}", str(value))
            for name, value in settings.items():
                if not name.startswith("spark."):
                    writer = writer.option(name, value)
            before = {k: spark.conf.get(k, None) for k in confs}
            for k, v in confs.items():
                spark.conf.set(k, v)
            try:
                writer.mode("append").save()
            finally:
                for k, old in before.items():
                    if old is None:
                        spark.conf.unset(k)
                    else:
                        spark.conf.set(k, old)
        return go

    def plain() -> None:
        plain_producer(bootstrap, topics.new(), keys, values)

    spark.dataSource.register(NullSink.source())

    def null_sink() -> None:
        df.write.format("bench-null-sink").option("rows", str(n)).mode("append").save()

    cases: dict[str, Callable[[], None]] = {
        "Spark local[2] kafkapy sink, exactly once": spark_write(True),
        "Spark local[2] kafkapy sink, exactlyOnce=false": spark_write(False),
        "(a) one confluent-kafka producer": plain,
        "(b) Spark local[2] null Arrow sink (the API's ceiling)": null_sink,
    }
    for label, settings in variants.items():
        cases[f"Spark local[2] kafkapy sink, exactly once, {label}"] = spark_write(True, settings)
    names = list(cases)
    for name in names:
        cases[name]()
        topics.clear()
    times: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    other: dict[str, list[float]] = {name: [] for name in names}
    kinds: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    repeats = dict.fromkeys(names, 0)
    loads: list[float] = []
    threads = ThreadCpu(broker_pid)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            o = wall = used = 0.0
            for attempt in range(1 + repeat_noisy):
                if attempt:
                    repeats[name] += 1
                    print(f"    other CPU {o:.2f} cores: repeating {name}", flush=True)
                    wait_quiet()
                threads.case()
                cpu_before, busy_before = tree_cpu_seconds(), machine_busy_seconds()
                started = time.perf_counter()
                cases[name]()
                wall = time.perf_counter() - started
                used = tree_cpu_seconds() - cpu_before
                # The machine's other CPU use meanwhile (other jobs), in cores.
                o = max(0.0, machine_busy_seconds() - busy_before - used) / wall
                kind = threads.case()
                topics.clear()
                if o <= NOISY:
                    break
            kinds[name].append(kind)
            times[name].append(wall)
            cpu[name].append(used)
            other[name].append(o)
        loads.append(os.getloadavg()[0])
        print(f"round {r + 1} (load {loads[-1]:.2f}):", flush=True)
        for name in names:
            print(f"    {times[name][-1]:7.2f} s  {cpu[name][-1]:6.2f} CPU s  "
                  f"other {other[name][-1]:.2f} cores  {name}", flush=True)
    threads.close()
    spark.stop()
    report(times, cpu, other, n, rounds, loads, repeats)
    report_threads(kinds, n)


def report(times: dict[str, list[float]], cpu: dict[str, list[float]],
           other: dict[str, list[float]], n: int, rounds: int, loads: list[float],
           repeats: dict[str, int]) -> None:
    a, cpu_a = times["(a) one confluent-kafka producer"], cpu["(a) one confluent-kafka producer"]

    def ratio(ours: list[float], other: list[float]) -> float:
        return statistics.median(o / t for t, o in zip(ours, other, strict=True))

    print(f"\nproducer settings: {PRODUCER}")
    print(f"\n{n:,} records ({VALUE_SIZE} B values, 8 B keys, {KEYS:,} keys) into a topic of "
          f"{PARTITIONS} partitions through one kafkapy broker; medians of {rounds} "
          f"interleaved rounds; load average after each round: "
          f"{', '.join(f'{x:.1f}' for x in loads)}\n")
    print("| write | median s | rows/s | vs (a) | CPU s | rows/CPU s | rows/CPU s vs (a) "
          "| other CPU (median, max cores) | rounds (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, ts in times.items():
        median = statistics.median(ts)
        vs = cpu_vs = ""
        if not name.startswith(("(a)", "(b)")):
            vs = f"{ratio(ts, a):.2f}x"
            cpu_vs = f"{ratio(cpu[name], cpu_a):.2f}x"
        cpu_s = statistics.median(cpu[name])
        print(f"| {name} | {median:.2f} | {n / median / 1e3:.0f} k | {vs} | {cpu_s:.1f} | "
              f"{n / cpu_s / 1e3:.0f} k | {cpu_vs} | {statistics.median(other[name]):.2f}, "
              f"{max(other[name]):.2f} | " + ", ".join(f"{t:.2f}" for t in ts)
              + (f" ({repeats[name]} repeated)" if repeats[name] else "") + " |")
    print("\nTarget: >= 1.0x (a) in rows/s. vs (a): median of the per-round ratios of rows/s "
          "(Spark's over (a)'s). CPU s: every process of the run (harness, broker, Spark's JVM "
          "and Python workers); rows/CPU s vs (a): median of the per-round ratios of rows per "
          "CPU second. other CPU: the machine's busy CPU (/proc/stat) not used by the run's "
          "processes, during that case, in cores; a case with more than "
          f"{NOISY} is run again (--repeat-noisy), the last attempt kept.")


def report_threads(kinds: dict[str, list[dict[str, float]]], n: int) -> None:
    """Where the CPU went: medians over rounds of CPU microseconds per record, by process and
    thread kind (``ThreadCpu``)."""
    names = list(kinds)
    every = sorted({k for rounds in kinds.values() for r in rounds for k in r})
    short = {name: name.split(" (")[0] if name.startswith(("(a)", "(b)")) else
             name.replace("Spark local[2] kafkapy sink, ", "sink ") for name in names}
    print("\nCPU microseconds per record by process and thread (medians of the rounds; "
          "sampled every 0.25 s from /proc/<pid>/task):\n")
    print("| process: threads | " + " | ".join(short[name] for name in names) + " |")
    print("|---|" + "---|" * len(names))
    for kind in [*every, "all"]:
        cells = []
        for name in names:
            per_round = [sum(r.values()) if kind == "all" else r.get(kind, 0.0)
                         for r in kinds[name]]
            cells.append(f"{statistics.median(per_round) / n * 1e6:.2f}")
        print(f"| {kind} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
