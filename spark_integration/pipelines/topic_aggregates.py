"""Batch job: a topic's log -> per-key aggregates -> Parquet.

::

    PYSPARK_PYTHON=$VIRTUAL_ENV/bin/python spark-submit --master 'local[2]' \\
        spark_integration/pipelines/topic_aggregates.py /var/lib/kafkapy orders /tmp/orders-by-key

Reads the topic straight from a kafkapy (or Kafka) log directory with the ``kafkapy-log``
data source, no broker involved, and writes one row per key of each partition:

======================  =========================================================
``topic``, ``partition``  where the key's records are
``key``                 the record key (binary; null keys form one group)
``records``             how many records carry the key
``value_bytes``         the total size of their values (null values count 0)
``tombstones``          how many of them have a null value
``first_offset``        the key's first offset in the partition ...
``first_timestamp``     ... and that record's timestamp
``last_offset``         the key's last offset in the partition ...
``last_timestamp``      ... and that record's timestamp
======================  =========================================================

Kafka keeps one key's records in one partition (the default partitioner hashes the key), and
offsets are ordered only within a partition: hence per key *of a partition*. For one row per
key whatever the partitioner did, aggregate the output again by ``key``.

What is read: the records committed as of the broker's last high-watermark checkpoint (every
``replica.high.watermark.checkpoint.interval.ms``, 5 s by default, and at shutdown), from
``--starting-offsets`` to ``--ending-offsets`` (Spark Kafka source syntax: ``earliest``,
``latest`` or ``{"orders":{"0":100,"1":-2}}``). The output directory is replaced
(``mode("overwrite")``); timestamps are written as Parquet TIMESTAMP_MICROS (UTC).

Exit status: 0 on success; Spark's error (an unknown topic is an empty result, a log dir that
does not exist or bad offsets JSON is an error) otherwise.
"""

from __future__ import annotations

import argparse
import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

__all__ = ["aggregate", "build_parser", "main", "read_topic"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="topic_aggregates.py",
        description="Per-key aggregates of a topic read from a kafkapy log directory, "
                    "written as Parquet.")
    p.add_argument("log_dir", help="the broker's log directory (log.dirs), an absolute path; "
                   "several, comma-separated, to read a cluster's brokers' (each partition "
                   "from its most advanced replica)")
    p.add_argument("topic", help="the topic to read (a comma list reads several)")
    p.add_argument("output", help="the Parquet output directory (replaced)")
    p.add_argument("--starting-offsets", default="earliest",
                   help='"earliest" (default) or per-partition JSON, e.g. '
                        '\'{"orders":{"0":10,"1":-2}}\' (-2 earliest)')
    p.add_argument("--ending-offsets", default="latest",
                   help='"latest" (default) or per-partition JSON (-1 latest)')
    p.add_argument("--min-partitions", type=int, default=None,
                   help="at least this many Spark tasks (large partitions are split at "
                        "segment boundaries)")
    return p


def read_topic(spark: SparkSession, log_dir: str, topic: str, *,
               starting_offsets: str = "earliest", ending_offsets: str = "latest",
               min_partitions: int | None = None) -> DataFrame:
    """The topic's records as a DataFrame with Spark's Kafka source schema."""
    reader = (spark.read.format("kafkapy-log")
              .option("subscribe", topic)
              .option("startingOffsets", starting_offsets)
              .option("endingOffsets", ending_offsets))
    if min_partitions is not None:
        reader = reader.option("minPartitions", str(min_partitions))
    return reader.load(log_dir)


def aggregate(records: DataFrame) -> DataFrame:
    """One row per (topic, partition, key) of ``records`` (columns in the module doc)."""
    return (records
            .groupBy("topic", "partition", "key")
            .agg(F.count(F.lit(1)).alias("records"),
                 F.coalesce(F.sum(F.length("value")), F.lit(0)).cast("long")
                 .alias("value_bytes"),
                 F.count_if(F.col("value").isNull()).alias("tombstones"),
                 F.min("offset").alias("first_offset"),
                 F.min_by("timestamp", "offset").alias("first_timestamp"),
                 F.max("offset").alias("last_offset"),
                 F.max_by("timestamp", "offset").alias("last_timestamp")))


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    """Run the job; ``spark``: an existing session (tests), else the spark-submit one."""
    args = build_parser().parse_args(argv)
    if spark is None:
        spark = SparkSession.builder.appName("kafkapy topic_aggregates").getOrCreate()
    # Readable by any Parquet reader (Spark's default INT96 is a legacy encoding).
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    records = read_topic(spark, args.log_dir, args.topic,
                         starting_offsets=args.starting_offsets,
                         ending_offsets=args.ending_offsets,
                         min_partitions=args.min_partitions)
    aggregate(records).write.mode("overwrite").parquet(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
