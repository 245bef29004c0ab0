"""``kafkapy-log``: a PySpark data source that reads a kafkapy (or Kafka) log directory.

::

    df = (spark.read.format("kafkapy-log")
          .option("subscribe", "orders,payments")
          .load("/var/lib/kafkapy"))              # the broker's log.dirs, an absolute path

The segment files are read directly, in parallel Spark tasks, without a broker: one task per
topic-partition (or per piece of one, with minPartitions). Records are decoded by compiled
code (``kafkapy._arrow``) straight into Arrow buffers and handed to Spark as
``pyarrow.RecordBatch``es.

Schema: Spark's Kafka source's. ``key`` binary, ``value`` binary, ``topic`` string,
``partition`` int, ``offset`` long, ``timestamp`` timestamp (the record's, or the append time
for LogAppendTime topics), ``timestampType`` int (0 CreateTime, 1 LogAppendTime), and with
includeHeaders ``headers`` array<struct<key: string, value: binary>> (null without headers).
A smaller schema given with ``spark.read.schema("offset long, value binary")`` is honoured:
only those columns are decoded (``select()`` alone does not reduce the work: Spark does not
push column pruning into Python data sources).

Options (names case-insensitive, as Spark's Kafka source, where they make sense on files):

- ``subscribe``: comma-separated topics; or ``subscribePattern``: a regular expression
  matched against whole topic names (internal topics such as ``__consumer_offsets`` left
  out); or ``assign``: ``{"topicA":[0,1]}``. Exactly one.
- ``startingOffsets``: "earliest" (default) or ``{"topicA":{"0":23,"1":-2}}`` (-2 earliest;
  every subscribed partition must be named). ``endingOffsets``: "latest" (default) or JSON
  (-1 latest). An ending offset above the latest is read up to the latest.
- ``startingTimestamp`` / ``endingTimestamp``: milliseconds, for every partition;
  ``startingOffsetsByTimestamp`` / ``endingOffsetsByTimestamp``: per partition, JSON as above.
  The offset used is the first whose record timestamp is >= the timestamp (Kafka's
  ListOffsets, answered from the ``.timeindex``). They take precedence over the offsets
  options, global timestamps first. With no such record an ending bound is latest, a
  starting one an error, or latest with ``startingOffsetsByTimestampStrategy=latest``.
- ``minPartitions``: at least this many Spark tasks where possible; large partitions are cut
  into offset ranges at segment boundaries.
- ``failOnDataLoss`` (default true): fail when asked-for records are gone (deleted by
  retention between planning and reading, or below the log start) or corrupt (CRC, framing,
  a file cut short below the high watermark); the error names the file and byte position.
  With false, corrupt batches (or the rest of their segment, if their length cannot be
  trusted) and missing ranges are skipped.
- ``includeHeaders`` (default false).
- ``kafka.isolation.level`` (or ``isolation.level``): read_uncommitted (default) or
  read_committed. read_committed drops the records of aborted transactions (the ``.txnindex``
  files) and stops at the first offset of a transaction still open at the high watermark.
- Options of Spark's Kafka source that concern a broker connection (``kafka.*`` and others)
  are ignored.

What is read: only committed data, up to the high watermark the broker last wrote to
``replication-offset-checkpoint`` (every ``replica.high.watermark.checkpoint.interval.ms``,
5 s by default, and at shutdown). It is the only committed bound on disk: bytes past it may
be unacknowledged or half written. So a read of a live broker's log lags it by up to that
interval, never returns a half-written batch, and is safe while the broker appends, rolls
segments and deletes them (see ``_reader``).

Registration: Spark finds this module by itself (it imports top-level ``pyspark_*`` modules
and registers their ``DefaultSource``) when it is importable by Spark's Python workers
(installed with kafkapy, ``pip install 'kafkapy[spark]'``). Otherwise call
``register(spark)``. Importing this package loads neither pyspark nor kafkapy:
``DefaultSource`` is resolved on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from pyspark_kafkapy.datasource import KafkaLogDataSource

    DefaultSource = KafkaLogDataSource

__all__ = ["DefaultSource", "KafkaLogDataSource", "register"]


def __getattr__(name: str) -> Any:
    # Spark's lookup asks for DefaultSource with hasattr(): only then is pyspark imported.
    if name in ("DefaultSource", "KafkaLogDataSource"):
        from pyspark_kafkapy.datasource import KafkaLogDataSource

        return KafkaLogDataSource
    raise AttributeError(f"module 'pyspark_kafkapy' has no attribute {name!r}")


def register(spark: SparkSession) -> None:
    """Register ``kafkapy-log`` with ``spark`` (needed only where Spark's workers cannot
    import ``pyspark_kafkapy`` by themselves)."""
    from pyspark_kafkapy.datasource import KafkaLogDataSource

    spark.dataSource.register(KafkaLogDataSource)
