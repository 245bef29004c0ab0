"""The PySpark DataSource ``kafkapy-log``: its schema, reader and input partitions.

See the package docstring (``pyspark_kafkapy``) for the options and guarantees. Where each
piece runs (pyspark.sql.datasource): ``schema()`` and ``reader()`` in short-lived planner
workers, ``partitions()`` in a planner worker per query plan (it reads the checkpoints and
indexes: ``_planner``), ``read()`` in executor workers, one call per ``KafkaLogPartition``
(``_reader`` and ``kafkapy._arrow``). The reader and the partitions are pickled between them,
so they hold plain values only; files are opened inside ``read()``.

This module imports pyspark (DataSource classes must subclass pyspark's); kafkapy's log code,
the compiled decoder and pyarrow are imported when first needed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
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

    from pyspark_kafkapy._planner import OffsetRange

__all__ = ["KafkaLogDataSource", "KafkaLogPartition", "KafkaLogReader", "kafka_schema"]

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


class KafkaLogReader(DataSourceReader):
    """Plans offset ranges from the log dir's files and reads them as Arrow batches."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        from pyspark_kafkapy._options import parse_options

        self.options = parse_options(options)
        self.schema = schema
        self.columns = kafka_columns(schema)

    def partitions(self) -> list[InputPartition]:
        from pyspark_kafkapy._planner import plan

        return [KafkaLogPartition(r) for r in plan(self.options)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema

        from pyspark_kafkapy._columns import column_flags, record_batch
        from pyspark_kafkapy._reader import read_columns

        rng = partition.value
        if rng is None:        # Spark's stand-in when partitions() found nothing to read
            return
        schema = to_arrow_schema(self.schema, timezone="UTC")
        for cols in read_columns(rng, column_flags(self.columns),
                                 fail_on_data_loss=self.options.fail_on_data_loss):
            yield record_batch(cols, self.columns, schema, rng.topic, rng.partition)


class KafkaLogDataSource(DataSource):
    """``spark.read.format("kafkapy-log").option("subscribe", ...).load(<log dir>)``."""

    @classmethod
    def name(cls) -> str:
        return "kafkapy-log"

    def schema(self) -> StructType:
        value = str(self.options.get("includeHeaders", "false")).strip().lower()
        return kafka_schema(value == "true")

    def reader(self, schema: StructType) -> DataSourceReader:
        options: dict[str, Any] = dict(self.options)
        return KafkaLogReader(options, schema)
