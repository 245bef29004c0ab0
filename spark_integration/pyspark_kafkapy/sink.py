"""The PySpark DataSource ``kafkapy``: a sink that produces a DataFrame's rows into Kafka
topics through the brokers, batch (``df.write``) or streaming (``df.writeStream``).

::

    (df.selectExpr("CAST(id AS STRING) AS key", "payload AS value")
       .write.format("kafkapy")
       .option("kafka.bootstrap.servers", "localhost:9092")
       .option("topic", "orders")
       .mode("append").save())

    (stream.writeStream.format("kafkapy")
       .option("kafka.bootstrap.servers", "localhost:9092").option("topic", "totals")
       .option("checkpointLocation", "/tmp/totals-ckpt")
       .outputMode("update").start())

The schema and options are Spark's Kafka sink's (``_sink_rows``, ``_sink_options``); each
task writes its rows in one Kafka transaction with a marker that makes a replayed task a
no-op, so read_committed consumers see every row once (``_task_writer`` has the protocol and
its limits). ``exactlyOnce=false`` writes at least once, as Spark's own Kafka sink.

Where each piece runs: ``writer()`` / ``streamWriter()`` on the driver (a planner worker),
where the schema and options are checked, so a bad schema or option fails before any task
runs and nothing is produced. ``write()`` in executor workers, once per task, on Arrow
batches (``DataSourceArrowWriter``, ``DataSourceStreamArrowWriter``). ``commit()`` /
``abort()`` on the driver: commit checks that every task reported its rows committed (a
streaming micro-batch is committed to the checkpoint only then) and, with ``writeStatsDir``,
writes the task reports; abort fences the transactional ids of failed tasks so that their open
transactions end now rather than at ``transaction.timeout.ms``.

Streaming tasks learn their query id and micro-batch id from the local properties Spark's
micro-batch execution sets on every job (``sql.streaming.queryId``,
``streaming.sql.batchId``); the query id is the checkpoint's, the same after a restart.

Save modes: append; overwrite is an error (as in Spark's Kafka sink). Spark refuses its default
mode, errorifexists, for every Python data source ("UNSUPPORTED_DATA_SOURCE_SAVE_MODE"), which
Spark's Kafka sink accepts: say ``.mode("append")``. Output modes: append and complete (each
micro-batch's rows are written). Spark 4.3 refuses update mode for every Python data source
sink ("does not support Update mode"); for update mode write each micro-batch in
``foreachBatch`` with ``df.write.format("kafkapy")`` and the options ``writeId`` (the query's
id) and ``batchId``: the same transactions and markers, so a replayed micro-batch writes
nothing twice either (``pipelines/topic_totals.py``).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamWriter,
    DataSourceWriter,
    WriterCommitMessage,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

    from pyspark_kafkapy._sink_options import SinkOptions
    from pyspark_kafkapy._sink_rows import SinkColumns
    from pyspark_kafkapy._task_writer import TaskReport

__all__ = ["KafkaSinkDataSource", "KafkaSinkStreamWriter", "KafkaSinkWriter"]

QUERY_ID = "sql.streaming.queryId"       # StreamExecution.QUERY_ID_KEY
BATCH_ID = "streaming.sql.batchId"       # MicroBatchExecution.BATCH_ID_KEY


def _plan(options: Any, schema: StructType) -> tuple[SinkOptions, SinkColumns]:
    from pyspark_kafkapy._sink_options import check_producer_config, parse_sink_options
    from pyspark_kafkapy._sink_rows import sink_columns

    opts = parse_sink_options(dict(options))
    cols = sink_columns(schema, opts.topic)
    check_producer_config(opts)
    return opts, cols


def _reports(messages: Sequence[WriterCommitMessage | None], batch: str) -> list[TaskReport]:
    """The tasks' reports; raises unless every task's rows are committed."""
    from pyspark_kafkapy._task_writer import TaskReport

    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, TaskReport) or not m.committed:
            raise RuntimeError(f"kafkapy sink: {batch}: task {i} did not report its rows "
                               f"committed ({m!r}); not committing")
        out.append(m)
    return out


def _write_stats(options: SinkOptions, name: str, reports: list[TaskReport]) -> None:
    if options.write_stats_dir is None:
        return
    directory = Path(options.write_stats_dir)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{name}.json.tmp"
    tmp.write_text(json.dumps({"tasks": [r.as_json() for r in reports],
                               "rows": sum(r.rows for r in reports)}), encoding="utf-8")
    os.replace(tmp, directory / f"{name}.json")


def _failed(messages: Sequence[WriterCommitMessage | None]) -> list[int]:
    return [i for i, m in enumerate(messages) if m is None]


class KafkaSinkWriter(DataSourceArrowWriter):
    """``df.write.format("kafkapy")``: one transaction per task; the write id (transactional
    ids, marker groups) is ``writeId`` or a random one made here, on the driver."""

    def __init__(self, options: SinkOptions, cols: SinkColumns) -> None:
        self.options = options
        self.cols = cols
        self.write_id = options.write_id or uuid.uuid4().hex

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TaskReport:
        from pyspark_kafkapy._task_writer import write_task

        return write_task(iterator, self.options, self.cols, self.write_id,
                          self.options.batch_id)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        reports = _reports(messages, f"write {self.write_id}")
        name = f"write-{self.write_id}"
        if self.options.batch_id:
            name += f"-batch-{self.options.batch_id}"
        _write_stats(self.options, name, reports)
        if self.options.exactly_once and self.options.write_id is None:
            # A random write id is never used again: its marker groups are dead weight.
            self._delete_markers([r.transactional_id for r in reports if r.transactional_id])

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        if self.options.exactly_once:
            from pyspark_kafkapy._task_writer import fence

            fence(self.options, self.write_id, _failed(messages))

    def _delete_markers(self, groups: list[str]) -> None:
        if not groups:
            return
        try:
            from confluent_kafka.admin import AdminClient

            admin = AdminClient(dict[str, Any](self.options.consumer))
            for future in admin.delete_consumer_groups(groups, request_timeout=10).values():
                future.result(timeout=15)
        except Exception:   # cleanup only: the groups expire by themselves
            pass


class KafkaSinkStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("kafkapy")``: one transaction per task of each micro-batch;
    the micro-batch is committed (to the checkpoint, by Spark) only after every task's."""

    def __init__(self, options: SinkOptions, cols: SinkColumns) -> None:
        self.options = options
        self.cols = cols

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TaskReport:
        from pyspark import TaskContext

        from pyspark_kafkapy._task_writer import write_task

        ctx = TaskContext.get()
        query_id = ctx.getLocalProperty(QUERY_ID) if ctx is not None else None
        batch_id = ctx.getLocalProperty(BATCH_ID) if ctx is not None else None
        if not query_id or batch_id is None:
            raise RuntimeError("kafkapy sink: the streaming task sees no query or batch id "
                               f"(local properties {QUERY_ID}, {BATCH_ID}); only micro-batch "
                               "queries are supported")
        return write_task(iterator, self.options, self.cols, query_id, int(batch_id))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        reports = _reports(messages, f"micro-batch {batchId}")
        if reports:
            _write_stats(self.options, f"{reports[0].write_id}-batch-{batchId}", reports)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        from pyspark_kafkapy._task_writer import TaskReport, fence

        # The query id is known only from a task that reported.
        known = [m for m in messages if isinstance(m, TaskReport)]
        if self.options.exactly_once and known:
            fence(self.options, known[0].write_id, _failed(messages))


class KafkaSinkDataSource(DataSource):
    """``format("kafkapy")``: writes only (read a topic with ``kafkapy-log``)."""

    @classmethod
    def name(cls) -> str:
        return "kafkapy"

    def schema(self) -> StructType:
        raise ValueError("format('kafkapy') is a sink; read topics with "
                         "spark.read.format('kafkapy-log')")

    def reader(self, schema: StructType) -> DataSourceReader:
        raise ValueError("format('kafkapy') is a sink; read topics with "
                         "spark.read.format('kafkapy-log')")

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        if overwrite:
            raise ValueError("Save mode Overwrite not allowed for Kafka. Allowed save modes "
                             "are Append and ErrorIfExists (default).")
        return KafkaSinkWriter(*_plan(self.options, schema))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        # overwrite is Spark's complete output mode: every micro-batch writes the whole
        # result, which a topic takes as it takes any other rows (as Spark's Kafka sink).
        return KafkaSinkStreamWriter(*_plan(self.options, schema))
