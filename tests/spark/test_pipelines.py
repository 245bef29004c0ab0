"""The Spark pipelines of ``spark_integration/pipelines/`` on data produced through a broker.

The data is produced by confluent-kafka through a real kafkapy broker (tests/spark/conftest.py:
a broker that checkpoints its high watermark every 100 ms, still running while Spark reads);
the oracle is what a confluent-kafka consumer reads, aggregated here in plain Python.

- ``topic_aggregates.py`` runs once through ``spark-submit`` in a subprocess (its own JVM: the
  proof that it is runnable as documented: 15-60 s on two cores), its Parquet read back
  with pyarrow, not Spark; and once through ``main()`` in the shared session (cheap) for the
  offset-range options.
- ``running_totals.py`` runs in the shared session: ``main()`` with ``--available-now`` first,
  then, from the same checkpoint, a ``processingTime`` query while the broker appends; its
  Parquet snapshots must count every record exactly once, micro-batches must respect
  maxOffsetsPerTrigger, and a replayed micro-batch must not change the output. If the data
  source cannot stream yet, these tests fail (they do not skip).
"""

from __future__ import annotations

import datetime
import importlib.util
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafkapy.testing import BrokerHandle
from tests.spark.conftest import (
    ROOT,
    SPARK_INTEGRATION,
    consume,
    flush,
    producer,
    wait_for_checkpoint,
)

PIPELINES = SPARK_INTEGRATION / "pipelines"
SUBMIT_TIMEOUT = 240


def _load(name: str) -> ModuleType:
    """A pipeline script as a module (they are scripts for spark-submit, not a package)."""
    spec = importlib.util.spec_from_file_location(f"kafkapy_pipeline_{name}",
                                                  PIPELINES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


topic_aggregates = _load("topic_aggregates")
running_totals = _load("running_totals")


# ------------------------------------------------------------------------- batch job

def _produce_keyed(broker: BrokerHandle, topic: str, count: int, partitions: int) -> None:
    """Records with 12 keys and null keys, values of varying size and tombstones, explicit
    timestamps that are not in offset order (so first/last timestamp != min/max), recent
    enough for the broker's retention to keep them."""
    base = int(time.time() * 1000) - 3_600_000
    p = producer(broker, compression_codec="lz4", batch_num_messages=64)
    for i in range(count):
        key = None if i % 17 == 0 else f"key-{i % 12}".encode()
        value = None if i % 23 == 0 else b"v" * (i % 50)
        p.produce(topic, value, key, partition=(i * 7) % partitions,
                  timestamp=base + ((i * 7919) % 10_000))
        p.poll(0)
    flush(p)


def _expected_aggregates(rows: list[Any]) -> dict[tuple[Any, ...], tuple[int, ...]]:
    """(topic, partition, key) -> (records, value_bytes, tombstones, first_offset,
    first_timestamp us, last_offset, last_timestamp us), from consumer rows (in offset
    order per partition)."""
    groups: dict[tuple[Any, ...], list[Any]] = defaultdict(list)
    for r in rows:
        groups[(r[0], r[1], r[3])].append(r)
    out = {}
    for k, rs in groups.items():
        first = min(rs, key=lambda r: r[2])
        last = max(rs, key=lambda r: r[2])
        out[k] = (len(rs), sum(len(r[4]) for r in rs if r[4] is not None),
                  sum(r[4] is None for r in rs), first[2], first[5], last[2], last[5])
    return out


def _parquet_aggregates(path: Path) -> dict[tuple[Any, ...], tuple[int, ...]]:
    """The job's output read by pyarrow (timestamps as integer microseconds)."""
    table = pq.read_table(path)
    for name in ("first_timestamp", "last_timestamp"):
        assert table.schema.field(name).type == pa.timestamp("us", tz="UTC")
        table = table.set_column(table.schema.get_field_index(name), name,
                                 table.column(name).cast(pa.int64()))
    out = {}
    for r in table.to_pylist():
        key = (r["topic"], r["partition"], r["key"])
        assert key not in out, f"two rows for {key}"
        out[key] = (r["records"], r["value_bytes"], r["tombstones"], r["first_offset"],
                    r["first_timestamp"], r["last_offset"], r["last_timestamp"])
    return out


def test_topic_aggregates_through_spark_submit(broker: BrokerHandle, tmp_path: Path) -> None:
    broker.create_topic("agg-submit", 3)
    _produce_keyed(broker, "agg-submit", 3000, 3)
    wait_for_checkpoint(broker, ["agg-submit"])
    expected = _expected_aggregates(consume(broker, "agg-submit"))
    output = tmp_path / "by-key"
    import pyspark

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(SPARK_INTEGRATION)])}
    cmd = [str(submit), "--master", "local[2]",
           "--conf", "spark.ui.enabled=false",
           "--conf", "spark.driver.bindAddress=127.0.0.1",
           "--conf", "spark.driver.host=127.0.0.1",
           "--conf", "spark.driver.memory=512m",
           str(PIPELINES / "topic_aggregates.py"),
           str(broker.data_dir), "agg-submit", str(output)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True,
                          timeout=SUBMIT_TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr[-5000:]
    got = _parquet_aggregates(output)
    assert got == expected
    assert sum(v[0] for v in got.values()) == 3000
    assert any(k[2] is None for k in got)           # the null key is a group of its own


def test_topic_aggregates_offset_range(spark: Any, broker: BrokerHandle,
                                       tmp_path: Path) -> None:
    broker.create_topic("agg-range", 2)
    _produce_keyed(broker, "agg-range", 800, 2)
    wait_for_checkpoint(broker, ["agg-range"])
    starting = '{"agg-range":{"0":100,"1":-2}}'
    ending = '{"agg-range":{"0":-1,"1":250}}'
    rows = [r for r in consume(broker, "agg-range")
            if (r[1] == 0 and r[2] >= 100) or (r[1] == 1 and r[2] < 250)]
    output = tmp_path / "range"
    assert topic_aggregates.main([str(broker.data_dir), "agg-range", str(output),
                                  "--starting-offsets", starting, "--ending-offsets", ending,
                                  "--min-partitions", "4"], spark=spark) == 0
    assert _parquet_aggregates(output) == _expected_aggregates(rows)


# ------------------------------------------------------------------------ streaming job

def _value(i: int) -> bytes | None:
    """Numbers (exact in binary, so sums do not depend on the order), text that is not a
    number, and tombstones."""
    if i % 19 == 0:
        return None
    if i % 10 == 3:
        return b"n/a"
    return f" {(i % 40) * 0.25 - 3} ".encode()


def _produce_numbers(broker: BrokerHandle, topic: str, start: int, count: int) -> None:
    p = producer(broker, batch_num_messages=50)
    for i in range(start, start + count):
        key = None if i % 13 == 0 else f"acct-{i % 6}".encode()
        p.produce(topic, _value(i), key, partition=i % 2)
        p.poll(0)
        if i % 200 == 0:
            flush(p)        # several produce requests: the log grows while it is read
    flush(p)


def _expected_totals(rows: list[Any]) -> dict[bytes | None, tuple[int, int, float, int]]:
    """key -> (records, numeric_records, value_sum, last_timestamp us)."""
    acc: dict[bytes | None, list[Any]] = defaultdict(lambda: [0, 0, 0.0, 0])
    for r in rows:
        a = acc[r[3]]
        a[0] += 1
        if r[4] is not None:
            try:
                number = float(r[4].decode().strip())
            except ValueError:
                pass
            else:
                a[1] += 1
                a[2] += number
        a[3] = max(a[3], r[5])
    return {k: (a[0], a[1], a[2], a[3]) for k, a in acc.items()}


def _totals(spark: Any, output: Path) -> dict[bytes | None, tuple[int, int, float, int]]:
    df = running_totals.read_totals(spark, output)
    assert df is not None, f"no snapshot in {output}"
    out = {}
    for r in df.selectExpr("key", "records", "numeric_records", "value_sum",
                           "unix_micros(last_timestamp) AS ts").collect():
        key = None if r.key is None else bytes(r.key)
        assert key not in out, f"two rows for {key!r}"
        out[key] = (r.records, r.numeric_records, r.value_sum, r.ts)
    return out


def _stream_or_fail(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run ``fn``; a data source that cannot stream fails the test with a clear message."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        text = str(e)
        if "streamReader is not implemented" in text:
            pytest.fail("kafkapy-log cannot stream yet: KafkaLogDataSource.streamReader() is "
                        "not implemented, so spark.readStream.format('kafkapy-log') fails")
        pytest.fail("running_totals.py (spark.readStream.format('kafkapy-log')) failed: "
                    f"{type(e).__name__}: {text[:3000]}")


def test_running_totals_restart_exactly_once(spark: Any, broker: BrokerHandle,
                                             tmp_path: Path) -> None:
    topic = "running"
    broker.create_topic(topic, 2)
    output, checkpoint = tmp_path / "totals", tmp_path / "checkpoint"
    argv = [str(broker.data_dir), topic, str(output), "--checkpoint", str(checkpoint),
            "--max-offsets-per-trigger", "400", "--state-partitions", "2",
            "--trigger-interval", "200 milliseconds"]

    # 1. What is committed now, in micro-batches of at most 400 records, then stop.
    _produce_numbers(broker, topic, 0, 1000)
    wait_for_checkpoint(broker, [topic])
    assert _stream_or_fail(running_totals.main, [*argv, "--available-now"], spark=spark) == 0
    assert _totals(spark, output) == _expected_totals(consume(broker, topic))
    snapshots = sorted(int(s[2:]) for s in os.listdir(output) if s.startswith("v-"))
    assert len(snapshots) <= 3                      # --keep-snapshots' default
    assert snapshots[-1] >= 2                       # 1000 records: at least 3 micro-batches

    # 2. Restarted from the checkpoint while the broker appends.
    args = running_totals.build_parser().parse_args(argv)
    query = _stream_or_fail(running_totals.start, spark, args)
    try:
        writer = threading.Thread(target=_produce_numbers, args=(broker, topic, 1000, 1500))
        writer.start()
        writer.join()
        wait_for_checkpoint(broker, [topic])
        query.processAllAvailable()
        progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
    finally:
        query.stop()
    assert query.exception() is None
    sizes = [p["numInputRows"] for p in progress]
    assert len(sizes) >= 4 and max(sizes) <= 400, sizes
    rows = consume(broker, topic)
    assert len(rows) == 2500
    totals = _totals(spark, output)
    assert totals == _expected_totals(rows)
    assert sum(t[0] for t in totals.values()) == 2500         # each record exactly once


def test_parquet_sink_replayed_batch_is_a_no_op(spark: Any, tmp_path: Path) -> None:
    schema = "key binary, records long, numeric_records long, value_sum double, " \
             "last_timestamp timestamp"
    t0 = datetime.datetime(2024, 1, 1)

    def frame(rows: list[tuple[Any, ...]]) -> Any:
        return spark.createDataFrame([(k, n, n, float(n), t0) for k, n in rows], schema)

    sink = running_totals.ParquetTotalsSink(tmp_path, keep_snapshots=2)
    sink(frame([(b"a", 1), (None, 2), (b"b", 3)]), 0)
    sink(frame([(b"a", 5), (None, 7)]), 1)                 # the upsert: a and null change
    sink(frame([(b"a", 100), (b"c", 100)]), 1)             # a replay of batch 1: ignored
    sink(frame([(b"c", 1)]), 2)

    def current() -> dict[Any, int]:
        df = running_totals.read_totals(spark, tmp_path)
        assert df is not None
        return {None if r.key is None else bytes(r.key): r.records for r in df.collect()}

    assert current() == {b"a": 5, None: 7, b"b": 3, b"c": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v-1", "v-2"]
