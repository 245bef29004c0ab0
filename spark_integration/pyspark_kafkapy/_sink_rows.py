"""The sink's input: Spark's Kafka sink schema, checked on the driver, and Arrow batches
handed to the producer.

Schema (Spark's Kafka sink; column names matched without regard to case, other columns
ignored):

| column | type | |
|---|---|---|
| ``value`` | string or binary | required; null writes a tombstone |
| ``key`` | string or binary | optional; null (or no column) writes a record without a key |
| ``topic`` | string | required unless the ``topic`` option is given (which wins) |
| ``partition`` | int | optional; null (or no column) lets the partitioner choose |
| ``headers`` | array<struct<key: string, value: binary>> | optional |

Strings are written as their UTF-8 bytes. ``sink_columns`` raises ``ValueError`` with Spark's
messages for a wrong schema, on the driver when the write is planned: before any task runs, so
nothing is produced. Row-level errors (a null topic with no ``topic`` option, a null header
key) are found per Arrow batch before that batch is produced; with exactly-once the task's
transaction is aborted, so a read_committed consumer sees nothing of that task.

Per-record Python: confluent-kafka takes one ``produce()`` call per record, so each batch's
columns are converted to Python lists by pyarrow (one C loop per column) and handed to
``produce`` by ``map`` (a C loop: no Python bytecode runs per record, ~0.05 us of the ~0.7 us
a ``produce()`` costs); nothing else is done per record (no per-row dicts). A full librdkafka
queue (``BufferError``) stops that loop at the row that did not go in: the loop resumes from
that row after a short poll, so each row is produced once and in order. Rows with headers
need ``produce``'s keyword argument and go through a Python loop. Byte counts come from the
Arrow offsets, not from the records.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import repeat
from operator import length_hint
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

__all__ = ["SinkColumns", "batch_bytes", "produce_batch", "produce_rows", "sink_columns"]

_BYTES = ("string", "binary")
_HEADERS = "array<struct<key:string,value:binary>>"


@dataclass(frozen=True)
class SinkColumns:
    """The names of the input's Kafka columns as spelled in its schema (None: absent or, for
    ``topic``, overridden by the option)."""

    value: str
    key: str | None = None
    topic: str | None = None
    partition: str | None = None
    headers: str | None = None


def sink_columns(schema: StructType, topic_option: str | None) -> SinkColumns:
    """Check ``schema`` as Spark's Kafka sink does (module doc); raises ValueError."""
    by_lower: dict[str, Any] = {}
    for f in schema.fields:
        by_lower.setdefault(f.name.lower(), f)

    def typed(name: str, allowed: tuple[str, ...], wanted: str) -> str | None:
        f = by_lower.get(name)
        if f is None:
            return None
        if f.dataType.simpleString() not in allowed:
            raise ValueError(f"{name} attribute type must be {wanted}, not "
                             f"{f.dataType.simpleString()}")
        return str(f.name)

    value = typed("value", _BYTES, "a StringType or BinaryType")
    if value is None:
        raise ValueError("Required attribute 'value' not found (the input has "
                         f"{', '.join(schema.fieldNames()) or 'no columns'})")
    topic = typed("topic", ("string",), "a StringType")
    if topic_option is None and topic is None:
        raise ValueError("topic option required when no 'topic' attribute is present. Use the "
                         "topic option for setting a topic.")
    return SinkColumns(
        value=value,
        key=typed("key", _BYTES, "a StringType or BinaryType"),
        topic=None if topic_option is not None else topic,
        partition=typed("partition", ("int",), "an IntegerType"),
        headers=typed("headers", (_HEADERS,), f"{_HEADERS}"))


def _column_bytes(col: pa.Array) -> int:
    """Bytes of a string or binary column: the span of its offsets (two reads) when it has no
    nulls; with nulls, the sum of the lengths (Arrow lets a null slot span bytes)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(col):
        return 0
    if col.null_count:
        return int(pc.sum(pc.binary_length(col)).as_py() or 0)
    large = pa.types.is_large_binary(col.type) or pa.types.is_large_string(col.type)
    offsets = memoryview(col.buffers()[1]).cast("q" if large else "i")
    return int(offsets[col.offset + len(col)] - offsets[col.offset])


def batch_bytes(batch: pa.RecordBatch, cols: SinkColumns) -> int:
    """Key and value bytes of a batch, from the Arrow offsets (no per-row work)."""
    return sum(_column_bytes(batch.column(name)) for name in (cols.key, cols.value)
               if name is not None)


def _headers(column: pa.Array) -> list[Any]:
    out: list[Any] = []
    for row in column.to_pylist():
        if not row:
            out.append(None)
            continue
        pairs = []
        for h in row:
            if h is None or h["key"] is None:
                raise ValueError("Null header key present in the data: Kafka header keys are "
                                 "strings")
            pairs.append((h["key"], h["value"]))
        out.append(pairs)
    return out


def produce_rows(produce: Callable[..., None], poll: Callable[[float], int], n: int,
                 topics: str | list[Any], *columns: list[Any]) -> None:
    """``produce(topic, *row)`` for each of the ``n`` rows of ``columns`` (lists), in order,
    in a C loop (``map``). ``topics``: one topic for every row, or a list. On ``BufferError``
    (librdkafka's queue full) ``map`` has taken the failed row's values from the iterators
    but produced none of it: the rows left (``length_hint``) say which row that is, and after
    a short ``poll`` (module doc) the loop resumes from it."""
    lists = columns if isinstance(topics, str) else (topics, *columns)
    start = 0
    while start < n:
        its: list[Iterator[Any]] = [iter(c[start:] if start else c) for c in lists]
        args = its if not isinstance(topics, str) else [repeat(topics), *its]
        try:
            deque(map(produce, *args), maxlen=0)
            return
        except BufferError:
            start = n - length_hint(its[0]) - 1
            poll(0.005)


def produce_batch(produce: Callable[..., None], poll: Callable[[float], int],
                  batch: pa.RecordBatch, cols: SinkColumns, topic: str | None) -> set[str]:
    """Produce every row of ``batch`` (``topic``: the option, or None for the column); returns
    the topics written. Raises ValueError for a bad row before producing any row
    of the batch. ``produce`` raising BufferError (librdkafka's queue full) is waited out with
    short ``poll``s: with failures-only delivery reports (or none) a poll has nothing to serve
    and sleeps its whole timeout, so a long one would idle while librdkafka drains the
    queue."""
    n = batch.num_rows
    if n == 0:
        return set()
    values = batch.column(cols.value).to_pylist()
    keys: list[Any] = batch.column(cols.key).to_pylist() if cols.key else [None] * n
    topics: str | list[Any]
    if cols.topic is not None:
        column = batch.column(cols.topic)
        if column.null_count:
            raise ValueError("Null topic present in the data. Use the topic option for "
                             "setting a topic.")
        topics = column.to_pylist()
        names = set(topics)
        if "" in names:
            raise ValueError("Empty topic name present in the data")
    else:
        assert topic is not None
        topics = topic
        names = {topic}
    parts: list[Any] = []
    if cols.partition is not None:
        # -1 is librdkafka's "unassigned" partition: the partitioner chooses.
        parts = batch.column(cols.partition).fill_null(-1).to_pylist()
    if cols.headers is not None:
        headers = _headers(batch.column(cols.headers))
        rows: Any = zip(repeat(topics) if isinstance(topics, str) else topics, values, keys,
                        parts or repeat(-1), headers, strict=False)
        for t, v, k, p, h in rows:
            while True:
                try:
                    produce(t, v, k, p, headers=h)
                    break
                except BufferError:
                    poll(0.005)
    elif parts:
        produce_rows(produce, poll, n, topics, values, keys, parts)
    else:
        produce_rows(produce, poll, n, topics, values, keys)
    poll(0)
    return names
