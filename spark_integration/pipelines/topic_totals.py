"""Streaming job: a topic in, per-key running totals out to another topic, exactly once.

::

    PYSPARK_PYTHON=$VIRTUAL_ENV/bin/python spark-submit --master 'local[2]' \\
        spark_integration/pipelines/topic_totals.py /var/lib/kafkapy payments payment-totals \\
        --bootstrap-servers localhost:9092 --checkpoint /tmp/payment-totals-checkpoint \\
        --max-offsets-per-trigger 100000

kafkapy in, Spark in the middle, kafkapy out, with no JVM connector:

1. **read** the input topic with ``spark.readStream.format("kafkapy-log")`` from the broker's
   log directory (committed records only, each once: the offsets are in the checkpoint);
2. **enrich** every record: ``amount``, its value parsed as a number (UTF-8 text such as
   ``b"12.50"``; null for other values and tombstones), and ``kind``: ``numeric``, ``text``
   or ``tombstone``;
3. **aggregate** per key (null keys form one group, written with a null key): ``records``,
   ``numeric_records``, ``text_records``, ``tombstones``, ``amount_sum``, ``amount_max``,
   ``last_offset`` and ``last_timestamp`` (ms) of the newest record;
4. **write** each micro-batch's changed totals (output mode ``update``) to the output topic
   with ``format("kafkapy")``: key = the input key, value = the totals as JSON, a header
   ``source`` naming the input topic. The output topic is a changelog: the last record of a key
   holds its current totals (compact it with ``cleanup.policy=compact`` if only those matter).

Spark 4.3 refuses update mode for Python data source sinks, so step 4 is a ``foreachBatch``
(``TopicSink``) that writes the micro-batch with ``df.write.format("kafkapy")`` and the options
``writeId`` (the query's id, from the checkpoint) and ``batchId``: the sink's streaming
protocol, through its batch writer.

Exactly once: the aggregation state and the input offsets live in ``--checkpoint``; the sink
writes each task's rows of a micro-batch in one Kafka transaction together with a marker, so a
micro-batch Spark replays after a crash or a stop (its output written, its commit not yet in
the checkpoint) writes nothing again. A read_committed consumer of the output sees each
update once: for every key, ``records`` rises with each record it receives, never repeats.
Stop the job (Ctrl-C, SIGTERM, ``--run-seconds``, or ``--available-now`` to process what is
committed and exit) and start it again with the same checkpoint to resume.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

__all__ = ["TopicSink", "build_parser", "enrich", "main", "start", "totals"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="topic_totals.py",
        description="Per-key running totals of a topic (read from a kafkapy log directory), "
                    "written to another topic exactly once.")
    p.add_argument("log_dir", help="the broker's log directory (log.dirs), an absolute path; "
                   "several, comma-separated, for a cluster's brokers")
    p.add_argument("input", help="the topic to read")
    p.add_argument("output", help="the topic the totals are written to (must exist)")
    p.add_argument("--bootstrap-servers", required=True,
                   help="the brokers the output is produced through (host:port,...)")
    p.add_argument("--checkpoint", required=True,
                   help="the checkpoint directory (offsets, state, the query's id), a local "
                        "path; keep it to resume")
    p.add_argument("--starting-offsets", default="earliest",
                   help='first start only: "earliest" (default), "latest" or JSON')
    p.add_argument("--max-offsets-per-trigger", type=int, default=None,
                   help="at most this many input records per micro-batch")
    p.add_argument("--trigger-interval", default="5 seconds",
                   help='micro-batch interval (default "5 seconds")')
    p.add_argument("--available-now", action="store_true",
                   help="process what is committed now and stop")
    p.add_argument("--run-seconds", type=float, default=None,
                   help="stop after this many seconds")
    p.add_argument("--state-partitions", type=int, default=4,
                   help="shuffle partitions of the state on the first start (later starts "
                        "keep the checkpoint's); also the number of writing tasks")
    p.add_argument("--producer-option", action="append", default=[], metavar="NAME=VALUE",
                   help="a producer setting (e.g. compression.type=lz4), repeatable")
    return p


def enrich(records: DataFrame) -> DataFrame:
    """Step 2 (module doc): ``amount`` and ``kind`` beside every input record."""
    # try_cast: a value that is not a number is null (a plain cast raises under ANSI mode).
    amount = F.expr("try_cast(trim(cast(value AS STRING)) AS DOUBLE)")
    return (records
            .withColumn("amount", amount)
            .withColumn("kind", F.when(F.col("value").isNull(), F.lit("tombstone"))
                        .when(F.col("amount").isNull(), F.lit("text"))
                        .otherwise(F.lit("numeric"))))


def totals(spark: SparkSession, log_dir: str, topic: str, *,
           starting_offsets: str = "earliest",
           max_offsets_per_trigger: int | None = None) -> DataFrame:
    """Steps 1-3 and the sink's columns: ``key``, ``value`` (JSON totals), ``headers``."""
    reader = (spark.readStream.format("kafkapy-log")
              .option("subscribe", topic)
              .option("startingOffsets", starting_offsets))
    if max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
    agg = (enrich(reader.load(log_dir))
           .groupBy("key")
           .agg(F.count(F.lit(1)).alias("records"),
                F.count("amount").alias("numeric_records"),
                F.count(F.when(F.col("kind") == "text", 1)).alias("text_records"),
                F.count(F.when(F.col("kind") == "tombstone", 1)).alias("tombstones"),
                F.coalesce(F.sum("amount"), F.lit(0.0)).alias("amount_sum"),
                F.max("amount").alias("amount_max"),
                F.max(F.struct("offset", "timestamp")).alias("last")))
    value = F.to_json(F.struct(
        "records", "numeric_records", "text_records", "tombstones", "amount_sum",
        "amount_max", F.col("last.offset").alias("last_offset"),
        F.expr("unix_millis(last.timestamp)").alias("last_timestamp")))
    header = F.struct(F.lit("source").alias("key"), F.lit(topic).cast("binary").alias("value"))
    return agg.select("key", value.alias("value"), F.array(header).alias("headers"))


class TopicSink:
    """``foreachBatch`` function: writes a micro-batch to ``topic`` with ``format("kafkapy")``,
    exactly once per micro-batch (module doc). Runs on the driver."""

    def __init__(self, bootstrap_servers: str, topic: str, checkpoint: str,
                 producer_options: dict[str, str] | None = None) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        self.checkpoint = checkpoint
        self.producer_options = dict(producer_options or {})
        self._query_id: str | None = None

    def query_id(self) -> str:
        """The query's id: Spark writes it to ``<checkpoint>/metadata`` on the first start and
        keeps it for every restart (a local checkpoint directory)."""
        if self._query_id is None:
            metadata = Path(self.checkpoint) / "metadata"
            self._query_id = str(json.loads(metadata.read_text(encoding="utf-8"))["id"])
        return self._query_id

    def __call__(self, changed: DataFrame, batch_id: int) -> None:
        writer = (changed.write.format("kafkapy")
                  .option("kafka.bootstrap.servers", self.bootstrap_servers)
                  .option("topic", self.topic)
                  .option("writeId", self.query_id())
                  .option("batchId", str(batch_id)))
        for name, value in self.producer_options.items():
            writer = writer.option(f"kafka.{name}", value)
        writer.mode("append").save()


def start(spark: SparkSession, args: argparse.Namespace) -> StreamingQuery:
    """Start the query ``args`` (from ``build_parser``) describe; returns it running."""
    spark.conf.set("spark.sql.shuffle.partitions", str(args.state_partitions))
    out = totals(spark, args.log_dir, args.input, starting_offsets=args.starting_offsets,
                 max_offsets_per_trigger=args.max_offsets_per_trigger)
    producer_options = {}
    for setting in args.producer_option:
        name, sep, value = setting.partition("=")
        if not sep:
            raise SystemExit(f"topic_totals.py: --producer-option {setting!r}: NAME=VALUE")
        producer_options[name] = value
    sink = TopicSink(args.bootstrap_servers, args.output, args.checkpoint, producer_options)
    writer = (out.writeStream
              .queryName("kafkapy_topic_totals")
              .outputMode("update")
              .option("checkpointLocation", args.checkpoint)
              .foreachBatch(sink))
    if args.available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=args.trigger_interval)
    return writer.start()


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    """Run the job until it stops (module doc); ``spark``: an existing session (tests)."""
    args = build_parser().parse_args(argv)
    if spark is None:
        spark = SparkSession.builder.appName("kafkapy topic_totals").getOrCreate()
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
