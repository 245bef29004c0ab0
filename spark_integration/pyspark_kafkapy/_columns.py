"""The Kafka columns, and decoded column buffers assembled into ``pyarrow.RecordBatch``es.

The schema is Spark's Kafka source's (KafkaRecordToRowConverter): key binary, value binary,
topic string, partition int, offset long, timestamp timestamp, timestampType int, and with
includeHeaders headers array<struct<key: string, value: binary>> (null for a record without
headers). Every field is nullable. Spark checks the first batch a reader yields against
``to_arrow_schema(schema, timezone="UTC")`` exactly, so the Arrow types here are those: binary
(not large_binary), string (not dictionary), int32, int64, timestamp[us, tz=UTC], list (not
large_list).

Buffers come from kafkapy._arrow without a copy (``pa.py_buffer``); topic and partition,
constant within a range, are built here with numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kafkapy._arrow import (
    COL_HEADERS,
    COL_KEY,
    COL_OFFSET,
    COL_TIMESTAMP,
    COL_TIMESTAMP_TYPE,
    COL_VALUE,
    DecodedColumns,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["COLUMN_FLAGS", "KAFKA_COLUMNS", "arrow_schema", "column_flags", "record_batch"]

KAFKA_COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp",
                 "timestampType", "headers")
# What the decoder must build for each column (topic and partition are built here).
COLUMN_FLAGS = {"key": COL_KEY, "value": COL_VALUE, "topic": 0, "partition": 0,
                "offset": COL_OFFSET, "timestamp": COL_TIMESTAMP,
                "timestampType": COL_TIMESTAMP_TYPE, "headers": COL_HEADERS}


def column_flags(names: Sequence[str]) -> int:
    flags = 0
    for name in names:
        flags |= COLUMN_FLAGS[name]
    return flags


def _arrow_type(name: str) -> pa.DataType:
    import pyarrow as pa

    if name in ("key", "value"):
        return pa.binary()
    if name == "topic":
        return pa.string()
    if name in ("partition", "timestampType"):
        return pa.int32()
    if name == "offset":
        return pa.int64()
    if name == "timestamp":
        return pa.timestamp("us", tz="UTC")
    return pa.list_(pa.field("element", pa.struct([pa.field("key", pa.string()),
                                                   pa.field("value", pa.binary())])))


def arrow_schema(names: Sequence[str]) -> pa.Schema:
    """The Arrow schema Spark expects for these Kafka columns (as pyspark's
    ``to_arrow_schema`` makes it; the Spark reader uses that function itself)."""
    import pyarrow as pa

    return pa.schema([pa.field(name, _arrow_type(name)) for name in names])


def _buf(obj: object | None) -> pa.Buffer | None:
    import pyarrow as pa

    return None if obj is None else pa.py_buffer(obj)


def record_batch(cols: DecodedColumns, names: Sequence[str], schema: pa.Schema, topic: str,
                 partition: int) -> pa.RecordBatch:
    """A RecordBatch of ``cols`` with the Kafka columns ``names`` (in that order), typed by
    ``schema`` (whose field names may differ in case: a user's schema)."""
    import pyarrow as pa

    n = cols.rows
    arrays = []
    for name, field in zip(names, schema, strict=True):
        t = field.type
        if name in ("key", "value"):
            binary = cols.key if name == "key" else cols.value
            assert binary is not None, f"{name} was not decoded"
            valid, offsets, data, nulls = binary
            arrays.append(pa.Array.from_buffers(t, n, [_buf(valid), _buf(offsets), _buf(data)],
                                                null_count=nulls))
        elif name == "topic":
            encoded = topic.encode()
            starts = np.arange(n + 1, dtype=np.int32) * np.int32(len(encoded))
            arrays.append(pa.Array.from_buffers(
                t, n, [None, pa.py_buffer(starts), pa.py_buffer(encoded * n)], null_count=0))
        elif name == "partition":
            arrays.append(pa.Array.from_buffers(
                t, n, [None, pa.py_buffer(np.full(n, partition, dtype=np.int32))],
                null_count=0))
        elif name == "offset":
            arrays.append(pa.Array.from_buffers(t, n, [None, _buf(cols.offset)], null_count=0))
        elif name == "timestamp":
            arrays.append(pa.Array.from_buffers(t, n, [None, _buf(cols.timestamp)],
                                                null_count=0))
        elif name == "timestampType":
            arrays.append(pa.Array.from_buffers(t, n, [None, _buf(cols.timestamp_type)],
                                                null_count=0))
        else:
            assert cols.headers is not None, "headers were not decoded"
            (valid, offsets, nulls, count, key_offsets, key_data, value_valid, value_offsets,
             value_data, value_nulls) = cols.headers
            struct_type = t.value_type
            keys = pa.Array.from_buffers(struct_type.field(0).type, count,
                                         [None, _buf(key_offsets), _buf(key_data)],
                                         null_count=0)
            values = pa.Array.from_buffers(struct_type.field(1).type, count,
                                           [_buf(value_valid), _buf(value_offsets),
                                            _buf(value_data)], null_count=value_nulls)
            entries = pa.Array.from_buffers(struct_type, count, [None], null_count=0,
                                            children=[keys, values])
            arrays.append(pa.Array.from_buffers(t, n, [_buf(valid), _buf(offsets)],
                                                null_count=nulls, children=[entries]))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
