"""``kafkapy-log``: a PySpark data source that reads a kafkapy (or Kafka) log directory.

::

    df = (spark.read.format("kafkapy-log")
          .option("subscribe", "orders,payments")
          .load("/var/lib/kafkapy"))              # the broker's log.dirs, an absolute path

    cluster = (spark.read.format("kafkapy-log")       # every broker's log.dirs
               .option("subscribe", "orders")
               .load(["/mnt/b1/kafkapy", "/mnt/b2/kafkapy", "/mnt/b3/kafkapy"]))

    stream = (spark.readStream.format("kafkapy-log")
              .option("subscribe", "orders")
              .option("maxOffsetsPerTrigger", "100000")
              .load("/var/lib/kafkapy"))

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
- ``startingOffsets``: "earliest" (the default of batch reads), "latest" (the default of
  streams) or ``{"topicA":{"0":23,"1":-2}}`` (-2 earliest, -1 latest (streams only); every
  subscribed partition must be named). A stream uses it on its first start only; later
  starts go on from the checkpoint. ``endingOffsets`` (batch only): "latest" (default) or
  JSON (-1 latest). An ending offset above the latest is read up to the latest.
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
- ``maxOffsetsPerTrigger`` (streams): at most this many offsets per micro-batch, shared
  by the partitions in proportion to how far behind each is (every partition behind gets at
  least one offset when there are enough to go round; never more than the limit in all).
  ``Trigger.AvailableNow`` keeps to it too. ``minOffsetsPerTrigger`` and ``maxTriggerDelay``
  are not supported (an error). ``minPartitions`` splits micro-batches as it splits batch
  reads.
- ``includeHeaders`` (default false).
- ``kafka.isolation.level`` (or ``isolation.level``): read_uncommitted (default) or
  read_committed. read_committed drops the records of aborted transactions (the ``.txnindex``
  files) and stops at the first offset of a transaction still open at the high watermark.
- ``pushFilters`` (default true): false never pushes filters for this read, whatever
  Spark's setting (see Filter pushdown below).
- ``readStatsDir``: a directory where the planning and every task of a read write a small
  JSON file: the offset range, rows, and bytes read from ``.log``, ``.index`` and
  ``.timeindex`` files (diagnostics; how the tests measure pushdown); a batch planning's
  also names the partition folders chosen (``directories``: which replica is read).
- Options of Spark's Kafka source that concern a broker connection (``kafka.*`` and others)
  are ignored.

Streaming (``spark.readStream``): the stream's offset is the next offset of every
topic-partition, written as Spark's Kafka source writes it (``{"orders":{"0":1234}}``) to the
query's checkpoint. Each micro-batch reads ``[previous end, end)`` of every partition, so a
query stopped and restarted from its checkpoint reads every committed record exactly once
(the sink decides whether it also writes it once). The initial offset is
``{"$initial": "latest"}`` (or "earliest", ...): ``startingOffsets`` is resolved when the first
micro-batch is planned and kept in its end offset (``"$from"``), so that a first micro-batch
re-run after a restart reads what it read the first time (``_microbatch``). Partitions
added to a subscribed topic and new topics matching ``subscribePattern`` are read from their
first offset.
``failOnDataLoss`` (default true) fails the query, naming the partition and the offsets,
when records it was to read are gone: deleted by retention while the query was behind or
stopped, a partition that disappeared, a new partition that does not start at 0, a log
truncated below the offset read; with false it warns and goes on from what is left (the log
start). ``Trigger.AvailableNow`` reads what is committed when the query starts, in
micro-batches of ``maxOffsetsPerTrigger``, and stops; ``processingTime`` triggers poll the
high-watermark checkpoint. Filters are not pushed into streams (Spark does not ask).

Filter pushdown: with ``spark.sql.python.filterPushdown.enabled=true`` (Spark 4.1+, off by
default) filters on ``topic`` and ``partition`` skip whole partitions, filters on ``offset``
cut the offset ranges, and a lower bound on ``timestamp`` starts every range at the first
record that can pass, found with the ``.timeindex`` (segments whose largest timestamp is
below it are not read at all) and the ``.index``. Spark still checks timestamps row by row
(record timestamps need not rise with offsets), so do not expect an upper bound on
``timestamp`` to read less; ``_pushdown`` lists what is consumed and what is only used. With
the setting off everything works as before (the data source does not make Spark fail, see
``datasource``). Caveat of Spark up to 4.3 (checked on 4.3.0; fixed for 5.0 by SPARK-58551):
Spark keeps the read plan of a filtered query on the DataFrame it came from, and reuses it
for a later query of the same DataFrame that has no filter to push
(``df.where("partition = 1").count()`` then ``df.count()`` counts partition 1 only). Load a
DataFrame for each filtered query, or set ``pushFilters`` to false on a DataFrame that is
reused.

Several log directories (a cluster: every broker's ``log.dirs``): ``load([dir1, dir2])``
(Spark passes the option ``paths``, a JSON array) or ``load("dir1,dir2")`` (split at commas as
``log.dirs``; the form ``readStream.load()`` takes). A partition found in several is a set of
replicas: the one with the highest checkpointed high watermark is read, up to it
(``_replicas`` has the rule; a replica without a checkpoint entry has high watermark 0).

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

The sink ``format("kafkapy")`` (writes through the brokers, exactly once) is
``pyspark_kafkapy.sink``, registered by the top-level module ``pyspark_kafkapy_sink`` (Spark
registers one ``DefaultSource`` per module) or by ``register(spark)``.
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
    """Register ``kafkapy-log`` and the sink ``kafkapy`` with ``spark`` (needed only where
    Spark's workers cannot import ``pyspark_kafkapy`` and ``pyspark_kafkapy_sink`` by
    themselves)."""
    from pyspark_kafkapy.datasource import KafkaLogDataSource
    from pyspark_kafkapy.sink import KafkaSinkDataSource

    spark.dataSource.register(KafkaLogDataSource)
    spark.dataSource.register(KafkaSinkDataSource)
