"""Streaming job: tail a topic in a kafkapy log directory and keep running totals per key.

::

    PYSPARK_PYTHON=$VIRTUAL_ENV/bin/python spark-submit --master 'local[2]' \\
        spark_integration/pipelines/running_totals.py /var/lib/kafkapy payments \\
        /tmp/payments-totals --checkpoint /tmp/payments-totals-checkpoint \\
        --max-offsets-per-trigger 100000

Reads with ``spark.readStream.format("kafkapy-log")`` (the options of Spark's Kafka source:
``subscribe``, ``startingOffsets``, ``maxOffsetsPerTrigger``, ``failOnDataLoss``) and keeps, per
record key (null keys form one group):

- ``records``: how many records;
- ``numeric_records`` and ``value_sum``: how many values parse as a number (the value's bytes
  as UTF-8 text, e.g. ``b"12.50"``) and their sum; other values (and tombstones) count in
  ``records`` only;
- ``last_timestamp``: the newest record timestamp seen.

Theory of operation
-------------------
The running totals are Spark's streaming aggregation: its state lives in the checkpoint
directory, together with the offsets of every micro-batch, so a restarted job resumes where it
stopped and counts every record exactly once (``startingOffsets`` matters only on the very
first start, as with Spark's Kafka source).

The Parquet sink (``--sink parquet``, the default) is an upsert done in ``foreachBatch`` (output
mode ``update``: each micro-batch hands over the new totals of the keys it changed). The
output directory holds snapshots ``v-<batch id>``, each a complete Parquet table of the totals
after that micro-batch. Batch ``n`` reads the newest snapshot below ``n``, replaces the rows of
the changed keys (null-safe key equality), writes ``.v-<n>.tmp`` and renames it to ``v-<n>``:
readers (``read_totals``) see whole snapshots only, and a micro-batch that Spark re-runs after
a crash (its output written, its commit not yet in the checkpoint) finds ``v-<n>`` already
there and is skipped, so the output is exactly once too. The newest ``--keep-snapshots``
snapshots are kept. The rename makes it a local-filesystem sink; on object stores use a table
format with MERGE (Delta Lake, Iceberg) in ``foreachBatch`` instead.

``--sink console`` prints each micro-batch's changed totals instead (a demo; the checkpoint
still keeps the state).

What is read: committed records only, up to the high watermark the broker last checkpointed
(``replica.high.watermark.checkpoint.interval.ms``, 5 s by default), so the totals trail the
broker by up to that interval plus the trigger interval.

Stops on Ctrl-C / SIGTERM (a micro-batch cut short is redone on the next start), after
``--run-seconds``, or, with ``--available-now``, once everything committed at start has been
processed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

__all__ = ["ParquetTotalsSink", "build_parser", "main", "read_totals", "running_totals",
           "start"]

_SNAPSHOT = re.compile(r"v-(\d+)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="running_totals.py",
        description="Running per-key totals of a topic tailed from a kafkapy log directory.")
    p.add_argument("log_dir", help="the broker's log directory (log.dirs), an absolute path; "
                   "several, comma-separated, to read a cluster's brokers' (each partition "
                   "from its most advanced replica)")
    p.add_argument("topic", help="the topic to tail (a comma list tails several)")
    p.add_argument("output", nargs="?",
                   help="the output directory of the Parquet sink (snapshots v-<batch id>)")
    p.add_argument("--checkpoint", required=True,
                   help="the checkpoint directory (offsets and state); keep it to resume")
    p.add_argument("--sink", choices=("parquet", "console"), default="parquet")
    p.add_argument("--starting-offsets", default="earliest",
                   help='first start only: "earliest" (default), "latest" or per-partition '
                        "JSON")
    p.add_argument("--max-offsets-per-trigger", type=int, default=None,
                   help="at most this many records per micro-batch (maxOffsetsPerTrigger)")
    p.add_argument("--fail-on-data-loss", choices=("true", "false"), default="true",
                   help="fail (default) or go on when records to read were deleted or are "
                        "corrupt (failOnDataLoss)")
    p.add_argument("--trigger-interval", default="5 seconds",
                   help='micro-batch interval (default "5 seconds")')
    p.add_argument("--available-now", action="store_true",
                   help="process what is committed now (in micro-batches of at most "
                        "--max-offsets-per-trigger) and stop")
    p.add_argument("--run-seconds", type=float, default=None,
                   help="stop after this many seconds (a demo)")
    p.add_argument("--state-partitions", type=int, default=4,
                   help="shuffle partitions of the aggregation state on the first start "
                        "(later starts keep the checkpoint's); default 4")
    p.add_argument("--keep-snapshots", type=int, default=3,
                   help="Parquet snapshots to keep (default 3)")
    return p


def running_totals(spark: SparkSession, log_dir: str, topic: str, *,
                   starting_offsets: str = "earliest",
                   max_offsets_per_trigger: int | None = None,
                   fail_on_data_loss: bool = True) -> DataFrame:
    """The streaming aggregate: per ``key``, ``records``, ``numeric_records``, ``value_sum``,
    ``last_timestamp`` (module doc)."""
    reader = (spark.readStream.format("kafkapy-log")
              .option("subscribe", topic)
              .option("startingOffsets", starting_offsets)
              .option("failOnDataLoss", "true" if fail_on_data_loss else "false"))
    if max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
    records = reader.load(log_dir)
    # try_cast: a value that is not a number is null (a plain cast raises under ANSI mode).
    number = F.expr("try_cast(trim(cast(value AS STRING)) AS DOUBLE)")
    return (records
            .groupBy("key")
            .agg(F.count(F.lit(1)).alias("records"),
                 F.count(number).alias("numeric_records"),
                 F.coalesce(F.sum(number), F.lit(0.0)).alias("value_sum"),
                 F.max("timestamp").alias("last_timestamp")))


def _snapshots(output: Path) -> list[int]:
    if not output.is_dir():
        return []
    found = (_SNAPSHOT.fullmatch(p.name) for p in output.iterdir())
    return sorted(int(m.group(1)) for m in found if m)


def read_totals(spark: SparkSession, output: str | os.PathLike[str]) -> DataFrame | None:
    """The newest complete snapshot of a Parquet sink's output, or None before the first."""
    ids = _snapshots(Path(output))
    if not ids:
        return None
    return spark.read.parquet(str(Path(output) / f"v-{ids[-1]}"))


class ParquetTotalsSink:
    """``foreachBatch`` function: upserts each micro-batch's changed totals into versioned
    Parquet snapshots of the whole table (module doc). Runs on the driver."""

    def __init__(self, output: str | os.PathLike[str], keep_snapshots: int = 3) -> None:
        if keep_snapshots < 1:
            raise ValueError("keep_snapshots must be at least 1")
        self.output = Path(output).absolute()
        self.keep = keep_snapshots

    def __call__(self, changed: DataFrame, batch_id: int) -> None:
        final = self.output / f"v-{batch_id}"
        if final.exists():
            return          # a re-run of a micro-batch whose output is already published
        ids = [i for i in _snapshots(self.output) if i < batch_id]
        spark = changed.sparkSession
        changed = changed.persist()     # used twice below; computing it twice costs more
        try:
            if ids:
                current = spark.read.parquet(str(self.output / f"v-{ids[-1]}"))
                kept = current.join(changed.select(F.col("key").alias("_changed")),
                                    current["key"].eqNullSafe(F.col("_changed")),
                                    "left_anti")
                table = kept.unionByName(changed)
            else:
                table = changed
            tmp = self.output / f".v-{batch_id}.tmp"
            table.write.mode("overwrite").parquet(str(tmp))
        finally:
            changed.unpersist()
        os.rename(tmp, final)
        for old in ids[:max(0, len(ids) + 1 - self.keep)]:
            shutil.rmtree(self.output / f"v-{old}", ignore_errors=True)


def start(spark: SparkSession, args: argparse.Namespace) -> StreamingQuery:
    """Start the query ``args`` (from ``build_parser``) describe; returns it running."""
    if args.sink == "parquet" and not args.output:
        raise SystemExit("running_totals.py: the parquet sink needs an output directory")
    spark.conf.set("spark.sql.shuffle.partitions", str(args.state_partitions))
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    totals = running_totals(spark, args.log_dir, args.topic,
                            starting_offsets=args.starting_offsets,
                            max_offsets_per_trigger=args.max_offsets_per_trigger,
                            fail_on_data_loss=args.fail_on_data_loss == "true")
    writer = (totals.writeStream
              .queryName("kafkapy_running_totals")
              .outputMode("update")
              .option("checkpointLocation", args.checkpoint))
    if args.available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=args.trigger_interval)
    if args.sink == "console":
        return writer.format("console").option("truncate", "false").start()
    return writer.foreachBatch(ParquetTotalsSink(args.output, args.keep_snapshots)).start()


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    """Run the job until it stops (module doc); ``spark``: an existing session (tests)."""
    args = build_parser().parse_args(argv)
    if spark is None:
        spark = SparkSession.builder.appName("kafkapy running_totals").getOrCreate()
    query = start(spark, args)
    stop = threading.Event()
    handlers: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            handlers[signum] = signal.signal(signum, lambda *_: stop.set())
    try:
        deadline = None if args.run_seconds is None else time.monotonic() + args.run_seconds
        while query.isActive and not stop.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                break
            query.awaitTermination(1)        # raises the query's error if it failed
    finally:
        if query.isActive:
            query.stop()
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    return 0

if __name__ == "__main__":
    sys.exit(main())
