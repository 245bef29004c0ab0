"""The sink ``format("kafkapy")`` in streaming queries: exactly once across stops, restarts,
failed micro-batches and a driver that dies between the tasks' commits and its own.

The input is a topic read with ``kafkapy-log`` (its own broker's log), the output another
topic of the same broker, the oracle a read_committed confluent-kafka consumer: every input
value must appear in the output exactly once.

The driver-failure edge is made real rather than mocked: Spark records a micro-batch as done
by writing ``<checkpoint>/commits/<batch id>`` after the sink's ``commit``; deleting that file
after a clean run leaves the checkpoint exactly as a driver that died between the tasks'
Kafka commits and that write would, and the restarted query replays the batch. The same
scenario with ``exactlyOnce=false`` shows the duplicates the markers prevent.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kafkapy.testing import BrokerHandle
from tests.spark.conftest import TIMEOUT, consume, flush, producer, wait_for_checkpoint

QUERY_TIMEOUT = 90


def _produce(broker: BrokerHandle, topic: str, start: int, stop: int, partitions: int) -> None:
    p = producer(broker)
    for i in range(start, stop):
        p.produce(topic, str(i).encode(), f"k{i % 17}".encode(), partition=i % partitions)
    flush(p)
    wait_for_checkpoint(broker, [topic])


def _query(spark: Any, broker: BrokerHandle, source: str, sink: str, checkpoint: Path,
           stats: Path, *, available_now: bool = True, max_offsets: int = 400,
           fail_flag: Path | None = None, **options: str) -> Any:
    df = (spark.readStream.format("kafkapy-log").option("subscribe", source)
          .option("startingOffsets", "earliest")
          .option("maxOffsetsPerTrigger", str(max_offsets))
          .load(str(broker.data_dir))
          .select("key", "value"))
    if fail_flag is not None:
        df = df.withColumn("topic", _topic_udf(str(fail_flag), sink)("value"))
    else:
        options["topic"] = sink
    writer = (df.writeStream.format("kafkapy")
              .option("kafka.bootstrap.servers", broker.bootstrap_servers)
              .option("writeStatsDir", str(stats))
              .option("checkpointLocation", str(checkpoint)))
    for k, v in options.items():
        writer = writer.option(k, v)
    if available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime="200 milliseconds")
    return writer.start()


def _topic_udf(flag: str, sink: str) -> Any:
    """The ``topic`` column: ``sink``, except that while ``flag`` exists the 150th row of
    partition 0 gets a null topic. The sink then fails that task when it reaches the row,
    after producing the Arrow batches before it in its transaction (a task that dies part way
    through its rows). A plain Python UDF: pandas is not needed."""
    from pyspark.sql import functions as F

    seen: dict[tuple[int, int, int], int] = {}

    def fn(value: bytes) -> str | None:
        import os

        from pyspark import TaskContext

        ctx = TaskContext.get()
        task = (ctx.stageId(), ctx.partitionId(), ctx.attemptNumber())
        seen[task] = seen.get(task, 0) + 1
        if ctx.partitionId() == 0 and seen[task] == 150 and os.path.exists(flag):
            return None
        return sink

    return F.udf(fn, "string", useArrow=False)


def _run(query: Any) -> None:
    assert query.awaitTermination(QUERY_TIMEOUT), "the query did not finish"


def _values(broker: BrokerHandle, topic: str) -> Counter[int]:
    return Counter(int(r[4]) for r in consume(broker, topic, isolation="read_committed"))


def _stats(stats: Path, batch: int) -> dict[str, Any]:
    (path,) = list(stats.glob(f"*-batch-{batch}.json"))
    return dict(json.loads(path.read_text()))


def _last_commit(checkpoint: Path) -> int:
    return max(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit())


def _forget_commit(checkpoint: Path, batch: int) -> None:
    """Leave the checkpoint as a driver that died before recording ``batch`` committed."""
    (checkpoint / "commits" / str(batch)).unlink()
    crc = checkpoint / "commits" / f".{batch}.crc"
    if crc.exists():
        crc.unlink()


def test_stop_mid_way_and_restart_writes_each_record_once(spark: Any, broker: BrokerHandle,
                                                          tmp_path: Path) -> None:
    broker.create_topic("ss-in", 2)
    broker.create_topic("ss-out", 3)
    _produce(broker, "ss-in", 0, 2400, 2)
    ckpt, stats = tmp_path / "ckpt", tmp_path / "stats"
    query = _query(spark, broker, "ss-in", "ss-out", ckpt, stats, available_now=False,
                   max_offsets=300)
    deadline = time.monotonic() + QUERY_TIMEOUT
    while (query.lastProgress or {}).get("batchId", -1) < 2:
        assert time.monotonic() < deadline and query.isActive, query.exception()
        time.sleep(0.05)
    query.stop()        # mid-way: later micro-batches (maybe one in flight) not done
    written = sum(_values(broker, "ss-out").values())
    assert 0 < written < 2400
    _produce(broker, "ss-in", 2400, 3000, 2)      # more input while it is stopped
    _run(_query(spark, broker, "ss-in", "ss-out", ckpt, stats))
    assert _values(broker, "ss-out") == Counter(range(3000))


@pytest.mark.parametrize("exactly_once", [True, False])
def test_driver_death_after_task_commits_replays_without_duplicates(
        spark: Any, broker: BrokerHandle, tmp_path: Path, exactly_once: bool) -> None:
    src, out = f"sd-in-{exactly_once}".lower(), f"sd-out-{exactly_once}".lower()
    broker.create_topic(src, 2)
    broker.create_topic(out, 2)
    _produce(broker, src, 0, 1000, 2)
    ckpt, stats = tmp_path / "ckpt", tmp_path / "stats"
    options = {} if exactly_once else {"exactlyOnce": "false"}
    _run(_query(spark, broker, src, out, ckpt, stats, **options))
    assert _values(broker, out) == Counter(range(1000))
    last = _last_commit(ckpt)
    assert last >= 2          # 1000 records, 400 per micro-batch
    _forget_commit(ckpt, last)
    _run(_query(spark, broker, src, out, ckpt, stats, **options))
    replay = _stats(stats, last)         # the restarted query ran the batch again ...
    assert replay["rows"] > 0
    got = _values(broker, out)
    if exactly_once:
        # ... and every task found its marker: nothing written twice.
        assert all(t["skipped"] for t in replay["tasks"] if t["rows"]), replay
        assert got == Counter(range(1000))
    else:
        # Without the markers the replay writes its rows again (Spark's own sink's behaviour).
        assert not any(t["skipped"] for t in replay["tasks"])
        assert sum(got.values()) == 1000 + replay["rows"] and set(got) == set(range(1000))


def test_failed_micro_batch_is_not_committed_and_restart_completes_it(
        spark: Any, broker: BrokerHandle, tmp_path: Path) -> None:
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "10")
    try:
        broker.create_topic("sf-in", 2)
        broker.create_topic("sf-out", 2)
        _produce(broker, "sf-in", 0, 1200, 2)
        ckpt, stats, flag = tmp_path / "ckpt", tmp_path / "stats", tmp_path / "fail"
        flag.touch()
        query = _query(spark, broker, "sf-in", "sf-out", ckpt, stats, fail_flag=flag)
        with pytest.raises(Exception, match="Null topic present in the data") as info:
            query.awaitTermination(QUERY_TIMEOUT)
        # The task failed part way: 149 rows before the bad one went into its transaction
        # (in Arrow batches of 10: at least the 140 of the batches before).
        produced = re.search(r"failed after producing (\d+) rows", str(info.value))
        assert produced is not None and 140 <= int(produced.group(1)) < 200, str(info.value)
        assert not (ckpt / "commits" / "0").exists()      # the batch was not committed
        flag.unlink()
        _run(_query(spark, broker, "sf-in", "sf-out", ckpt, stats, fail_flag=flag))
        assert _values(broker, "sf-out") == Counter(range(1200))
        # read_uncommitted also shows those of the failed attempt's records that reached the
        # broker before the abort (librdkafka purges the rest): aborted, never committed.
        assert len(consume(broker, "sf-out")) >= 1200
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")


def test_complete_output_mode_of_an_aggregation(spark: Any, broker: BrokerHandle,
                                                tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    broker.create_topic("sa-in", 2)
    broker.create_topic("sa-out", 1)
    _produce(broker, "sa-in", 0, 500, 2)
    counts = (spark.readStream.format("kafkapy-log").option("subscribe", "sa-in")
              .option("startingOffsets", "earliest").load(str(broker.data_dir))
              .groupBy("key").agg(F.count(F.lit(1)).alias("n"))
              .select("key", F.col("n").cast("string").alias("value")))
    query = (counts.writeStream.format("kafkapy").outputMode("complete")
             .option("kafka.bootstrap.servers", broker.bootstrap_servers)
             .option("topic", "sa-out").option("checkpointLocation", str(tmp_path / "c"))
             .trigger(availableNow=True).start())
    _run(query)
    rows = consume(broker, "sa-out", isolation="read_committed")
    expected = Counter(f"k{i % 17}".encode() for i in range(500))
    assert {r[3]: int(r[4]) for r in rows} == dict(expected)
    assert len(rows) == 17
    assert TIMEOUT > 0
