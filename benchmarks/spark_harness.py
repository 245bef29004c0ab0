"""Spark read speed harness (issue 6): the ``kafkapy-log`` data source against a consumer and
against the ceiling of PySpark's Python data source API.

    PYTHONPATH=. .venv/bin/python benchmarks/spark_harness.py [--records N] [--rounds R]

(needs ``pip install 'kafkapy[spark]' confluent-kafka`` and a JDK; it sets PYSPARK_PYTHON and
the workers' PYTHONPATH itself). Prints a markdown table for docs/spark.md. Takes about 5
minutes on 2 cores; the data (590 MB of segments) goes in a temporary directory (``--dir``).

1. Data: N records (default 5,000,000) with 100-byte values (random, incompressible) and
   8-byte keys (1,000 distinct, key k always in partition k % 4) produced into one topic of 4
   partitions through a kafkapy broker in a child process (``e2e_harness.BrokerProcess``,
   its log dir a temporary directory) by one confluent-kafka Producer (acks=all, linger.ms 5,
   batch.size 1 MiB, no compression): Kafka's own segment format, written by the broker.
   The broker stays up (idle) for the whole run; the data source reads its log dir once the
   high-watermark checkpoint covers every record.
2. One Spark session, ``local[2]``. Every round times, in an order that rotates by round:
   - **kafkapy-log**: ``spark.read.format("kafkapy-log").option("subscribe", T).load(dir)``
     then ``count()``; then ``groupBy("key").count().collect()`` (1,000 rows); and, for
     information, ``count()`` with a user schema ``partition int, offset long`` (only those
     columns decoded);
   - **(a) consumer**: the same records through the broker by one confluent-kafka Consumer in
     this process (assign the 4 partitions from offset 0, no group, ``consume(10000)``
     batches, the value length summed);
   - **(b) Arrow ceiling**: a plain Python DataSource with the same schema, 4 partitions and
     row count, whose ``read()`` yields one pre-built 65,536-row ``pyarrow.RecordBatch``
     (8-byte keys of the same 1,000, 100-byte values) over and over: what the API costs with
     no decoding at all (the synthetic reader of shared/reference/pyspark-datasource.md);
     the same ``count()`` and ``groupBy("key").count()``.
   Two untimed warm-ups of every Spark query come first (``--warmups``: JIT, Python workers).
3. Medians over the rounds of rows/s and value MB/s (100 B x rows / s, 10^6), and the median
   of the per-round ratios kafkapy-log / (a) and kafkapy-log / (b) for the same query
   (interleaving cancels the drift of a small noisy machine), in wall time and in CPU
   seconds: those all the run's processes used (this one, the broker, Spark's JVM and Python
   workers, from /proc), which other jobs on a shared machine change much less than wall
   time. The load average is printed before, per round and after.

Targets: kafkapy-log >= 5x (a) (issue 6) and >= 0.9x (b) (issue 22; issue 6 asked 0.7x).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, Producer, TopicPartition
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from benchmarks.e2e_harness import BrokerProcess
from kafkapy.common.topic_partition import TopicPartition as LogTopicPartition
from kafkapy.log.checkpoints import REPLICATION_OFFSET_CHECKPOINT, read_offsets

ROOT = Path(__file__).resolve().parent.parent
TOPIC = "spark-bench"
PARTITIONS = 4
KEYS = 1000
KEY_SIZE = 8
VALUE_SIZE = 100
BATCH_ROWS = 65536
KAFKA_SCHEMA = ("key binary, value binary, topic string, partition int, offset long, "
                "timestamp timestamp, timestampType int")


def _key(i: int) -> bytes:
    return b"%08d" % (i % KEYS)


# ------------------------------------------------------------------- (b) Arrow ceiling

class ArrowCeilingSource(DataSource):
    """``format("bench-arrow-ceiling")``: options ``rows``, ``partitions``; yields one
    pre-built RecordBatch of Kafka-shaped rows over and over."""

    @classmethod
    def name(cls) -> str:
        return "bench-arrow-ceiling"

    def schema(self) -> str:
        return KAFKA_SCHEMA

    def reader(self, schema: Any) -> DataSourceReader:
        return ArrowCeilingReader(int(self.options["rows"]), int(self.options["partitions"]),
                                  schema)


class ArrowCeilingReader(DataSourceReader):
    def __init__(self, rows: int, partitions: int, schema: Any) -> None:
        self.rows, self.parts, self.schema = rows, partitions, schema

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(p) for p in range(self.parts)]

    def read(self, partition: InputPartition) -> Iterator[Any]:  # type: ignore[override]
        import numpy as np
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        p = partition.value
        rows = self.rows // self.parts + (p < self.rows % self.parts)
        n = BATCH_ROWS
        # Keys of partition p: k % parts == p, as the producer's keys.
        keys = np.frombuffer(b"".join(b"%08d" % k for k in range(p, KEYS, self.parts)),
                             dtype=np.uint8).reshape(-1, KEY_SIZE)
        key_data = np.ascontiguousarray(keys[np.arange(n) % len(keys)]).tobytes()
        values = np.random.default_rng(p).integers(0, 256, n * VALUE_SIZE, dtype=np.uint8)

        def binary(data: bytes | np.ndarray, width: int) -> pa.Array:
            offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
            return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets),
                                                          pa.py_buffer(data)])

        topic_offsets = np.arange(0, (n + 1) * len(TOPIC), len(TOPIC), dtype=np.int32)
        topic = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(topic_offsets),
                                                       pa.py_buffer(TOPIC.encode() * n)])
        now_us = int(time.time() * 1e6)
        schema = to_arrow_schema(self.schema, timezone="UTC")
        batch = pa.RecordBatch.from_arrays([
            binary(key_data, KEY_SIZE), binary(values, VALUE_SIZE), topic,
            pa.array(np.full(n, p, dtype=np.int32)),
            pa.array(np.arange(n, dtype=np.int64)),
            pa.array(np.full(n, now_us, dtype=np.int64)).cast(pa.timestamp("us", tz="UTC")),
            pa.array(np.zeros(n, dtype=np.int32))], schema=schema)
        while rows > 0:
            yield batch if rows >= n else batch.slice(0, rows)
            rows -= n


# ---------------------------------------------------------------------------- the data

def produce(bootstrap: str, count: int) -> float:
    """``count`` records into TOPIC (partition i % 4, key i % 1000); returns seconds."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                         "batch.size": 1 << 20, "queue.buffering.max.kbytes": 1 << 20,
                         "queue.buffering.max.messages": 2_000_000,
                         "compression.type": "none"})
    payloads = [os.urandom(VALUE_SIZE) for _ in range(64)]
    keys = [_key(k) for k in range(KEYS)]
    failures: list[object] = []

    def report(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    started = time.perf_counter()
    produce_one = producer.produce
    for i in range(count):
        while True:
            try:
                produce_one(TOPIC, payloads[i & 63], keys[i % KEYS], partition=i % PARTITIONS,
                            on_delivery=report if i % 10_000 == 0 else None)
                break
            except BufferError:
                producer.poll(0.01)
    left = producer.flush(300)
    if left or failures:
        raise RuntimeError(f"{left} undelivered, {len(failures)} failed: {failures[:3]}")
    return time.perf_counter() - started


def wait_for_checkpoint(log_dir: Path, count: int, timeout: float = 120) -> None:
    """Until the broker's high-watermark checkpoint covers ``count`` records of TOPIC."""
    deadline = time.monotonic() + timeout
    while True:
        hws = read_offsets(log_dir / REPLICATION_OFFSET_CHECKPOINT)
        if sum(hws.get(LogTopicPartition(TOPIC, p), 0) for p in range(PARTITIONS)) >= count:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the HW checkpoint does not reach {count} records: {hws}")
        time.sleep(0.1)


# ----------------------------------------------------------------------- measurements

def tree_cpu_seconds() -> float:
    """CPU seconds used so far by this process and all its descendants (the broker, the
    Spark JVM, its Python workers), from /proc: user + system of each live process plus
    those of its children it already reaped. On a shared machine this, unlike wall time,
    does not depend on what else runs."""
    parents: dict[int, int] = {}
    times: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue                  # gone meanwhile
        pid = int(entry)
        parents[pid] = int(fields[1])
        times[pid] = sum(int(x) for x in fields[11:15])    # utime stime cutime cstime
    tree = descendants(parents, os.getpid())
    return sum(times.get(pid, 0) for pid in tree) / os.sysconf("SC_CLK_TCK")


def descendants(parents: dict[int, int], root: int) -> set[int]:
    """``root`` and every process below it, from ``{pid: parent pid}``."""
    tree = {root}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return tree


def consume_all(bootstrap: str, count: int) -> int:
    """(a): every record through the broker, one consumer; returns the value bytes."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "spark-bench",
                         "enable.auto.commit": False, "fetch.max.bytes": 50 << 20,
                         "max.partition.fetch.bytes": 10 << 20, "fetch.wait.max.ms": 100,
                         "queued.max.messages.kbytes": 256 << 10,
                         # librdkafka pauses fetching for fetch.queue.backoff.ms (1 s by default)
                         # whenever its queue holds queued.min.messages (100,000): left at that,
                         # the consumer idles ~70% of the time and reads 3x slower than it can.
                         "fetch.queue.backoff.ms": 0, "queued.min.messages": 1_000_000})
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    got = size = 0
    deadline = time.monotonic() + 600
    try:
        while got < count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"consumed {got} of {count}")
            for msg in consumer.consume(10_000, 1.0):
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                got += 1
                size += len(msg.value() or b"")
    finally:
        consumer.close()
    if got != count:
        raise RuntimeError(f"consumed {got} records, expected {count}")
    return size


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=5_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmups", type=int, default=2,
                    help="untimed runs of every Spark query first (the JIT takes more than one)")
    ap.add_argument("--dir", default=None, help="make the log dir inside this directory")
    args = ap.parse_args(argv)
    n = args.records
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} CPUs)", flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="kafkapy-spark-bench-", dir=args.dir))
    log_dir = tmp / "log"
    config = {"log.dirs": str(log_dir), "num.partitions": str(PARTITIONS),
              "replica.high.watermark.checkpoint.interval.ms": "200"}
    try:
        with BrokerProcess(config) as bootstrap:
            seconds = produce(bootstrap, n)
            wait_for_checkpoint(log_dir, n)
            on_disk = sum(f.stat().st_size for f in log_dir.glob(f"{TOPIC}-*/*.log"))
            print(f"produced {n:,} x {VALUE_SIZE} B through the broker in {seconds:.1f} s "
                  f"({n / seconds / 1e3:.0f}k records/s); {on_disk / 1e6:.0f} MB of segments",
                  flush=True)
            run(bootstrap, log_dir, n, args.rounds, args.warmups)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def run(bootstrap: str, log_dir: Path, n: int, rounds: int, warmups: int) -> None:
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "spark_integration"),
         *filter(None, [os.environ.get("PYTHONPATH")])])
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("kafkapy-spark-bench")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.memory", "1g")
             .config("spark.sql.shuffle.partitions", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(ArrowCeilingSource)

    def kafkapy_log(schema: str | None = None) -> Any:
        reader = spark.read.format("kafkapy-log")
        if schema is not None:
            reader = reader.schema(schema)
        return reader.option("subscribe", TOPIC).load(str(log_dir))

    def ceiling() -> Any:
        return (spark.read.format("bench-arrow-ceiling").option("rows", str(n))
                .option("partitions", str(PARTITIONS)).load())

    def count(make: Callable[[], Any]) -> Callable[[], None]:
        def go() -> None:
            got = make().count()
            assert got == n, f"count() = {got}, expected {n}"
        return go

    def group(make: Callable[[], Any]) -> Callable[[], None]:
        def go() -> None:
            rows = make().groupBy("key").count().collect()
            assert len(rows) == KEYS and sum(r["count"] for r in rows) == n, len(rows)
        return go

    def consumer() -> None:
        assert consume_all(bootstrap, n) == n * VALUE_SIZE

    cases: dict[str, Callable[[], None]] = {
        "kafkapy-log count()": count(kafkapy_log),
        "kafkapy-log groupBy(key).count()": group(kafkapy_log),
        "kafkapy-log count(), schema 'partition int, offset long'":
            count(lambda: kafkapy_log("partition int, offset long")),
        "(a) confluent-kafka consumer via the broker": consumer,
        "(b) Arrow ceiling count()": count(ceiling),
        "(b) Arrow ceiling groupBy(key).count()": group(ceiling),
    }
    names = list(cases)
    for _ in range(warmups):
        for name in names:
            if not name.startswith("(a)"):
                cases[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            cpu_before = tree_cpu_seconds()
            started = time.perf_counter()
            cases[name]()
            times[name].append(time.perf_counter() - started)
            cpu[name].append(tree_cpu_seconds() - cpu_before)
        print(f"round {r + 1} (load {os.getloadavg()[0]:.2f}):", flush=True)
        for name in names:
            print(f"    {times[name][-1]:7.2f} s  {cpu[name][-1]:6.2f} CPU s  {name}",
                  flush=True)
    spark.stop()
    report(times, cpu, n, rounds)


def report(times: dict[str, list[float]], cpu: dict[str, list[float]], n: int,
           rounds: int) -> None:
    a = times["(a) confluent-kafka consumer via the broker"]
    ceilings = {"count()": times["(b) Arrow ceiling count()"],
                "groupBy(key).count()": times["(b) Arrow ceiling groupBy(key).count()"]}

    cpu_a = cpu["(a) confluent-kafka consumer via the broker"]
    cpu_ceilings = {"count()": cpu["(b) Arrow ceiling count()"],
                    "groupBy(key).count()": cpu["(b) Arrow ceiling groupBy(key).count()"]}

    def ratio(ours: list[float], other: list[float]) -> float:
        return statistics.median(o / t for t, o in zip(ours, other, strict=True))

    print(f"\n{n:,} records x {VALUE_SIZE} B values ({KEY_SIZE} B keys, {KEYS:,} keys), one "
          f"topic of {PARTITIONS} partitions, Spark local[2]; medians of {rounds} interleaved "
          f"rounds (per-round ratios)\n")
    print("| read | median s | rows/s | value MB/s | vs (a) | vs (b) | CPU s | rows/CPU s "
          "| CPU vs (a) | CPU vs (b) | rounds (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, ts in times.items():
        median = statistics.median(ts)
        vs_a = vs_b = cpu_vs_a = cpu_vs_b = ""
        if name.startswith("kafkapy-log"):
            vs_a = f"{ratio(ts, a):.1f}x"
            cpu_vs_a = f"{ratio(cpu[name], cpu_a):.1f}x"
            # The same query of the ceiling: "count()" is a suffix of "groupBy(key).count()"
            # too, so the query is the name's whole rest, never a suffix match.
            query = name.removeprefix("kafkapy-log ")
            if query in ceilings:
                vs_b = f"{ratio(ts, ceilings[query]):.2f}x"
                cpu_vs_b = f"{ratio(cpu[name], cpu_ceilings[query]):.2f}x"
        cpu_s = statistics.median(cpu[name])
        print(f"| {name} | {median:.2f} | {n / median / 1e6:.2f} M | "
              f"{n * VALUE_SIZE / median / 1e6:.0f} | {vs_a} | {vs_b} | {cpu_s:.1f} | "
              f"{n / cpu_s / 1e6:.2f} M | {cpu_vs_a} | {cpu_vs_b} | "
              + ", ".join(f"{t:.2f}" for t in ts) + " |")
    print("\nTargets: >= 5x (a), >= 0.9x (b) (issue 22). vs: medians of per-round wall-time "
          "ratios. CPU s: all processes of the run (harness, broker, Spark JVM and Python "
          "workers); CPU vs: medians of per-round CPU-second ratios.")


if __name__ == "__main__":
    main()
