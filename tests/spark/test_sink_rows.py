"""``pyspark_kafkapy._sink_rows``'s pure logic: the C loop that hands rows to ``produce``
(``produce_rows``) resumes after a full queue at the row that did not go in, so every row is
produced once and in order; byte counts from the Arrow offsets equal the sum of the lengths
(sliced arrays, nulls, large types). The producer here is a recording stand-in (a unit test of
pure logic); tests/spark/test_sink.py writes through a real broker.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark_kafkapy._sink_rows import SinkColumns, batch_bytes, produce_batch, produce_rows


class QueueFull:
    """A ``produce`` that raises BufferError on the calls numbered in ``full`` (0-based,
    counting every call) and records the rows it accepted; ``poll`` records its timeouts."""

    def __init__(self, full: set[int]) -> None:
        self.full = full
        self.calls = 0
        self.rows: list[tuple[Any, ...]] = []
        self.polls: list[float] = []

    def produce(self, *row: Any) -> None:
        call = self.calls
        self.calls += 1
        if call in self.full:
            raise BufferError("Local: Queue full")
        self.rows.append(row)

    def poll(self, timeout: float) -> int:
        self.polls.append(timeout)
        return 0


@pytest.mark.parametrize("full", [set(), {0}, {3}, {3, 4, 5}, {9}, {2, 7, 11}])
def test_produce_rows_resumes_at_the_row_that_did_not_go_in(full: set[int]) -> None:
    values = [f"v{i}".encode() for i in range(10)]
    keys = [None if i % 3 else f"k{i}".encode() for i in range(10)]
    q = QueueFull(full)
    produce_rows(q.produce, q.poll, 10, "t", values, keys)
    assert q.rows == [("t", v, k) for v, k in zip(values, keys, strict=True)]
    assert q.polls == [0.005] * len(full)


def test_produce_rows_with_a_topic_and_a_partition_per_row() -> None:
    topics = [f"t{i % 2}" for i in range(6)]
    values = [bytes([i]) for i in range(6)]
    parts = [i % 3 - 1 for i in range(6)]
    q = QueueFull({1, 5})
    produce_rows(q.produce, q.poll, 6, topics, values, [None] * 6, parts)
    assert q.rows == list(zip(topics, values, [None] * 6, parts, strict=True))


def test_produce_rows_passes_other_errors_through() -> None:
    def produce(*row: Any) -> None:
        raise ValueError("not a queue-full")

    with pytest.raises(ValueError, match="not a queue-full"):
        produce_rows(produce, lambda t: 0, 3, "t", [b"a", b"b", b"c"], [None] * 3)


def test_produce_batch_rows_and_headers_through_a_full_queue() -> None:
    batch = pa.record_batch(
        [pa.array([b"a", None, b"c"], pa.binary()), pa.array(["k", None, "m"]),
         pa.array([0, None, 2], pa.int32()),
         pa.array([[{"key": "h", "value": b"1"}], None, []],
                  pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])))],
        names=["value", "key", "partition", "headers"])
    q = QueueFull({1})
    seen: list[tuple[Any, ...]] = []

    def produce(*row: Any, headers: Any = None) -> None:
        q.produce(*row)
        if len(q.rows) > len(seen):
            seen.append((*row, headers))

    cols = SinkColumns(value="value", key="key", partition="partition", headers="headers")
    assert produce_batch(produce, q.poll, batch, cols, "out") == {"out"}
    assert seen == [("out", b"a", "k", 0, [("h", b"1")]), ("out", None, None, -1, None),
                    ("out", b"c", "m", 2, None)]
    q = QueueFull({0, 2})
    cols = SinkColumns(value="value", key="key", partition="partition")
    produce_batch(q.produce, q.poll, batch, cols, "out")
    assert q.rows == [("out", b"a", "k", 0), ("out", None, None, -1), ("out", b"c", "m", 2)]


@pytest.mark.parametrize("kind", [pa.binary(), pa.string(), pa.large_binary(),
                                  pa.large_string()])
def test_batch_bytes_from_offsets_equal_the_lengths(kind: pa.DataType) -> None:
    text = [f"value-{i}" * (i % 4) for i in range(50)]
    raw = pa.array(text if "string" in str(kind) else [t.encode() for t in text], kind)
    with_nulls = pa.array([None if i % 5 == 0 else v for i, v in enumerate(raw.to_pylist())],
                          kind)
    for value in (raw, raw.slice(7, 30), with_nulls, with_nulls.slice(3, 20), raw.slice(0, 0)):
        batch = pa.record_batch([value, raw.slice(0, len(value))], names=["value", "key"])
        expected = sum(int(pc.sum(pc.binary_length(c)).as_py() or 0) for c in batch.columns)
        assert batch_bytes(batch, SinkColumns(value="value", key="key")) == expected
        assert batch_bytes(batch, SinkColumns(value="value")) == int(
            pc.sum(pc.binary_length(value)).as_py() or 0)
