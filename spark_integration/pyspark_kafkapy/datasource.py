"""The PySpark DataSource ``kafkapy-log``: its schema, readers and input partitions.

See the package docstring (``pyspark_kafkapy``) for the options and guarantees. Where each
piece runs (pyspark.sql.datasource): ``schema()`` and ``reader()`` in short-lived planner
workers, ``pushFilters()`` and ``partitions()`` in a planner worker per query plan (they read
the checkpoints and indexes: ``_pushdown``, ``_planner``), ``read()`` in executor workers, one
call per ``KafkaLogPartition`` (``_reader`` and ``kafkapy._arrow``). A streaming query's
reader (``KafkaLogStreamReader``) lives in one driver-side Python process for the whole query
(``initialOffset``, ``latestOffset``, ``partitions``: ``_microbatch``); its ``read()`` runs in
executor workers too. Readers and partitions are pickled between these processes, so they
hold plain values only; files are opened inside ``read()``.

Filter pushdown and ``spark.sql.python.filterPushdown.enabled``: Spark (4.1-4.3) refuses to
plan any read of a reader that overrides ``pushFilters`` while the setting is off
(DATA_SOURCE_PUSHDOWN_DISABLED), and it cannot be read from a planner worker. But Spark calls
``pushFilters`` from one place only, its filter-pushdown worker
(``pyspark.sql.worker.data_source_pushdown_filters``), which it runs only with the setting
on; the reader made anywhere else is never asked to push. So ``reader()`` returns the
filtering reader (``KafkaLogFilteringReader``) when called from that worker and the plain one
otherwise: both settings work, and with the setting off nothing changes. Should a later Spark
call ``pushFilters`` from elsewhere, the plain reader answers it (Spark's default: no filter
pushed): slower, never wrong.

This module imports pyspark (DataSource classes must subclass pyspark's); kafkapy's log code,
the compiled decoder and pyarrow are imported when first needed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    Filter,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from pyspark_kafkapy._microbatch import Offsets
    from pyspark_kafkapy._options import ReadOptions
    from pyspark_kafkapy._planner import OffsetRange
    from pyspark_kafkapy._pushdown import Pushed

__all__ = ["KafkaLogDataSource", "KafkaLogFilteringReader", "KafkaLogPartition",
           "KafkaLogReader", "KafkaLogStreamReader", "kafka_schema"]

_PUSHDOWN_WORKER = "pyspark.sql.worker.data_source_pushdown_filters"

_HEADERS = ArrayType(StructType([StructField("key", StringType()),
                                 StructField("value", BinaryType())]))
_TYPES: dict[str, DataType] = {
    "key": BinaryType(), "value": BinaryType(), "topic": StringType(),
    "partition": IntegerType(), "offset": LongType(), "timestamp": TimestampType(),
    "timestampType": IntegerType(), "headers": _HEADERS,
}
# Columns that are null for some records: a user schema may not declare them NOT NULL.
_NULLABLE = ("key", "value", "headers")


def kafka_schema(include_headers: bool = False) -> StructType:
    """Spark's Kafka source schema; ``headers`` last when ``include_headers``."""
    names = list(_TYPES) if include_headers else [n for n in _TYPES if n != "headers"]
    return StructType([StructField(n, _TYPES[n]) for n in names])


def kafka_columns(schema: StructType) -> list[str]:
    """The Kafka column of each field of ``schema`` (the default one, or a user's smaller
    one from ``spark.read.schema(...)``), matched by name without regard to case.

    Raises ValueError for a field that is not a Kafka column, appears twice, has another
    type, or is declared NOT NULL although Kafka records may leave it null.
    """
    by_lower = {n.lower(): n for n in _TYPES}
    out: list[str] = []
    for field in schema.fields:
        name = by_lower.get(field.name.lower())
        if name is None:
            raise ValueError(f"column {field.name!r} is not a Kafka column; kafkapy-log has "
                             f"{', '.join(_TYPES)}")
        if name in out:
            raise ValueError(f"column {field.name!r} appears twice in the schema")
        if field.dataType.simpleString() != _TYPES[name].simpleString():
            raise ValueError(f"column {field.name!r} must be {_TYPES[name].simpleString()}, "
                             f"not {field.dataType.simpleString()}")
        if name in _NULLABLE and not field.nullable:
            raise ValueError(f"column {field.name!r} must be nullable: Kafka records may "
                             f"have a null {name}")
        out.append(name)
    return out


class KafkaLogPartition(InputPartition):
    """One task: an ``OffsetRange`` (``value``) of one topic-partition."""

    def __init__(self, rng: OffsetRange) -> None:
        super().__init__(rng)

    def __repr__(self) -> str:
        r = self.value
        return f"KafkaLogPartition({r.topic}-{r.partition} [{r.start}, {r.end}))"


def _write_stats(directory: str | None, kind: str, **fields: Any) -> None:
    """readStatsDir: one JSON file per planning or task (a diagnostic: bytes read)."""
    if directory is None:
        return
    import json
    import uuid

    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{kind}-{uuid.uuid4().hex}.json")
    with open(path + ".tmp", "w") as f:
        json.dump({"kind": kind, **fields}, f)
    os.replace(path + ".tmp", path)


def _read_range(rng: OffsetRange | None, columns: list[str], schema: StructType,
                opts: ReadOptions) -> Iterator[pa.RecordBatch]:
    """The RecordBatches of one task (batch or micro-batch)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from pyspark_kafkapy import _logdir
    from pyspark_kafkapy._columns import column_flags, record_batch
    from pyspark_kafkapy._reader import read_columns

    if rng is None:        # Spark's stand-in when partitions() found nothing to read
        return
    arrow = to_arrow_schema(schema, timezone="UTC")
    before = _logdir.bytes_read.total
    rows = 0
    try:
        for cols in read_columns(rng, column_flags(columns),
                                 fail_on_data_loss=opts.fail_on_data_loss):
            rows += cols.rows
            yield record_batch(cols, columns, arrow, rng.topic, rng.partition)
    finally:
        _write_stats(opts.read_stats_dir, "read", topic=rng.topic, partition=rng.partition,
                     start=rng.start, end=rng.end, rows=rows,
                     bytes=_logdir.bytes_read.total - before)


class KafkaLogReader(DataSourceReader):
    """Plans offset ranges from the log dir's files and reads them as Arrow batches."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        from pyspark_kafkapy._options import parse_options

        self.options = parse_options(options)
        self.schema = schema
        self.columns = kafka_columns(schema)
        self.pushed: Pushed | None = None

    def partitions(self) -> list[InputPartition]:
        from pyspark_kafkapy import _logdir
        from pyspark_kafkapy._planner import plan

        before = _logdir.bytes_read.total
        ranges = plan(self.options, self.pushed)
        _write_stats(self.options.read_stats_dir, "plan", ranges=len(ranges),
                     bytes=_logdir.bytes_read.total - before,
                     directories=sorted({r.directory for r in ranges}),
                     pushed=None if self.pushed is None else list(self.pushed.consumed),
                     used=None if self.pushed is None else list(self.pushed.used))
        return [KafkaLogPartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read_range(partition.value, self.columns, self.schema, self.options)


class KafkaLogFilteringReader(KafkaLogReader):
    """The reader with ``pushFilters`` (see the module doc for when it is used, and
    ``_pushdown`` for what is pushed and what Spark still evaluates)."""

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        from pyspark_kafkapy._pushdown import push_filters

        if not self.options.push_filters:       # the option pushFilters=false
            return filters
        names = {field.name.lower(): column
                 for field, column in zip(self.schema.fields, self.columns, strict=True)}
        self.pushed, remaining = push_filters(filters, names)
        return remaining


def _called_from_pushdown_worker() -> bool:
    """Whether Spark's filter-pushdown worker is on the stack (module doc)."""
    frame = sys._getframe(1)
    while frame is not None:
        spec = frame.f_globals.get("__spec__")
        if _PUSHDOWN_WORKER in (frame.f_globals.get("__name__"), getattr(spec, "name", None)):
            return True
        frame = frame.f_back    # type: ignore[assignment]
    return False


class KafkaLogStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("kafkapy-log")``: micro-batches of offset ranges (see
    ``_microbatch``). The stream offset is ``{"topic": {"partition": next offset}}``."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        from pyspark_kafkapy._options import parse_options

        self.options = parse_options(options, streaming=True)
        self.schema = schema
        self.columns = kafka_columns(schema)
        self._target: Offsets | None = None             # the available-now bound
        self._latest: dict[str, dict[str, int]] | None = None

    def initialOffset(self) -> dict[str, Any]:
        from pyspark_kafkapy._microbatch import initial_offset

        return initial_offset(self.options)

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        from pyspark_kafkapy._microbatch import latest_offsets

        self._target, _ = latest_offsets(self.options, {})

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        from pyspark_kafkapy._microbatch import next_offset, to_json

        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        end, latest = next_offset(self.options, start, max_rows, self._target)
        self._latest = to_json(latest)
        return end

    def reportLatestOffset(self) -> dict[str, dict[str, int]] | None:
        return self._latest

    def partitions(self, start: dict[str, Any], end: dict[str, Any]
                   ) -> list[InputPartition]:
        from pyspark_kafkapy import _logdir
        from pyspark_kafkapy._microbatch import micro_batch

        before = _logdir.bytes_read.total
        ranges = micro_batch(self.options, start, end)
        _write_stats(self.options.read_stats_dir, "plan", ranges=len(ranges),
                     bytes=_logdir.bytes_read.total - before)
        return [KafkaLogPartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read_range(partition.value, self.columns, self.schema, self.options)

    def commit(self, end: dict[str, Any]) -> None:
        # Nothing to release: the log is only read. (Spark calls this one batch late, and
        # not for the last batch of a query: nothing may depend on it.)
        pass


class KafkaLogDataSource(DataSource):
    """``spark.read.format("kafkapy-log").option("subscribe", ...).load(<log dir>)``, and the
    same with ``spark.readStream``; ``load([<log dir>, ...])`` or ``load("<dir>,<dir>")``
    reads several brokers' log dirs (a cluster, see ``_replicas``)."""

    @classmethod
    def name(cls) -> str:
        return "kafkapy-log"

    def schema(self) -> StructType:
        value = str(self.options.get("includeHeaders", "false")).strip().lower()
        return kafka_schema(value == "true")

    def reader(self, schema: StructType) -> DataSourceReader:
        options: dict[str, Any] = dict(self.options)
        if _called_from_pushdown_worker():
            return KafkaLogFilteringReader(options, schema)
        return KafkaLogReader(options, schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaLogStreamReader(dict(self.options), schema)
