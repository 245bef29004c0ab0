"""pyspark_kafkapy's planning and reading without Spark: options, splits, seeking, chunking,
and a log changing between planning and reading.

The log dirs are written by a real broker (stopped before its files are tampered with), the
rows compared with what the broker's own inspection helper (``read_all``) returns.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from pyspark_kafkapy import _logdir
from pyspark_kafkapy._columns import KAFKA_COLUMNS, arrow_schema, column_flags, record_batch
from pyspark_kafkapy._options import parse_options
from pyspark_kafkapy._planner import OffsetRange, plan
from pyspark_kafkapy._reader import read_columns

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import OffsetOutOfRangeError
from kafkapy.testing import BrokerHandle
from tests.spark.conftest import BROKER_CONFIG, flush, producer, wait_for_checkpoint

NAMES = list(KAFKA_COLUMNS)


def rows_of(ranges: list[OffsetRange], **kwargs: Any) -> list[tuple[Any, ...]]:
    schema = arrow_schema(NAMES)
    out = []
    for r in ranges:
        for cols in read_columns(r, column_flags(NAMES), **kwargs):
            batch = record_batch(cols, NAMES, schema, r.topic, r.partition)
            out += [(d["topic"], d["partition"], d["offset"], d["key"], d["value"],
                     [(h["key"], h["value"]) for h in d["headers"] or []])
                    for d in batch.to_pylist()]
    return out


def expected(broker: BrokerHandle, topic: str) -> list[tuple[Any, ...]]:
    return [(r.topic, r.partition, r.offset, r.key, r.value, r.headers)
            for r in broker.read_all(topic)]


@pytest.fixture(scope="module")
def segmented(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[Any]]]:
    """A stopped broker's log dir: topic "seg", 1 partition, many small segments with a
    dense offset index, records of every size up to one larger than some read chunks."""
    handle = BrokerHandle(tmp_path_factory.mktemp("segmented"), BROKER_CONFIG).start()
    try:
        handle.create_topic("seg", 1, {"segment.bytes": "5000", "index.interval.bytes": "200",
                                       "retention.ms": "-1"})
        p = producer(handle, compression_codec="none")
        for i in range(600):
            if i == 333:
                flush(p)        # alone in its batch, which must fit in a segment
            value = bytes([i % 251]) * (4500 if i == 333 else i % 97)
            p.produce("seg", value, str(i).encode(), partition=0,
                      headers=[("i", str(i).encode())])
            if i % 15 == 14 or i == 333:
                flush(p)
        flush(p)
        wait_for_checkpoint(handle, ["seg"])
        want = expected(handle, "seg")
        assert len(want) == 600
    finally:
        handle.stop()
    yield handle.data_dir, want


def ranges(log_dir: Path, **options: str) -> list[OffsetRange]:
    return plan(parse_options({"path": str(log_dir), "subscribe": "seg", **options}))


def test_whole_log(segmented: tuple[Path, list[Any]]) -> None:
    log_dir, want = segmented
    assert len(_logdir.list_segments(log_dir / "seg-0")) >= 5
    assert rows_of(ranges(log_dir)) == want


@pytest.mark.parametrize("chunk", [200, 4096, 65536])
def test_small_chunks_and_a_batch_larger_than_the_chunk(segmented: tuple[Path, list[Any]],
                                                        chunk: int) -> None:
    log_dir, want = segmented
    assert rows_of(ranges(log_dir), chunk=chunk, batch_rows=50) == want


def test_starts_mid_segment_through_the_index(segmented: tuple[Path, list[Any]]) -> None:
    log_dir, want = segmented
    pdir = log_dir / "seg-0"
    segments = _logdir.list_segments(pdir)
    start = segments[2] + 40
    fd = os.open(_logdir.segment_path(pdir, segments[2]), os.O_RDONLY)
    try:
        assert _logdir.index_position(fd, pdir, segments[2], start, os.fstat(fd).st_size) > 0
    finally:
        os.close(fd)
    got = rows_of(ranges(log_dir, startingOffsets=f'{{"seg":{{"0":{start}}}}}',
                         endingOffsets=f'{{"seg":{{"0":{start + 100}}}}}'))
    assert got == want[start:start + 100]


def test_a_wrong_index_only_costs_a_longer_scan(segmented: tuple[Path, list[Any]],
                                                tmp_path: Path) -> None:
    log_dir, want = segmented
    copy = tmp_path / "logs"
    shutil.copytree(log_dir, copy)
    pdir = copy / "seg-0"
    base = _logdir.list_segments(pdir)[1]
    index = _logdir.segment_path(pdir, base, ".index")
    data = bytearray(index.read_bytes())
    assert len(data) >= 16
    for i in range(0, len(data), 8):          # every position off by 3 bytes
        data[i + 4:i + 8] = (int.from_bytes(data[i + 4:i + 8], "big") + 3).to_bytes(4, "big")
    index.write_bytes(bytes(data))
    start = base + 30
    got = rows_of(ranges(copy, startingOffsets=f'{{"seg":{{"0":{start}}}}}'))
    assert got == want[start:]


def test_min_partitions_cuts_at_segment_bases(segmented: tuple[Path, list[Any]]) -> None:
    log_dir, want = segmented
    segments = _logdir.list_segments(log_dir / "seg-0")
    pieces = ranges(log_dir, minPartitions="4")
    assert len(pieces) == 4
    assert pieces[0].start == 0 and pieces[-1].end == len(want)
    for a, b in pairwise(pieces):
        assert a.end == b.start and b.start in segments
    assert rows_of(pieces) == want
    # No more pieces than segments.
    assert len(ranges(log_dir, minPartitions="1000")) == len(segments)


def test_a_segment_deleted_after_planning(segmented: tuple[Path, list[Any]],
                                          tmp_path: Path) -> None:
    log_dir, want = segmented
    copy = tmp_path / "logs"
    shutil.copytree(log_dir, copy)
    planned = ranges(copy)
    pdir = copy / "seg-0"
    first, second = _logdir.list_segments(pdir)[:2]
    # What retention does: rename the oldest segment's files to .deleted.
    for suffix in (".log", ".index", ".timeindex"):
        path = _logdir.segment_path(pdir, first, suffix)
        path.rename(path.with_name(path.name + ".deleted"))
    with pytest.raises(OffsetOutOfRangeError, match=rf"offsets \[0, {second}\) are no longer"):
        rows_of(planned)
    assert rows_of(planned, fail_on_data_loss=False) == want[second:]


@pytest.mark.parametrize(("options", "message"), [
    ({}, "exactly one of the options 'subscribe', 'subscribePattern' or 'assign'"),
    ({"subscribe": "a", "subscribePattern": "b"}, "exactly one of the options"),
    ({"subscribe": " , "}, "no topics to subscribe to"),
    ({"subscribePattern": "("}, "option 'subscribePattern'"),
    ({"assign": "[1]"}, "option 'assign'"),
    ({"subscribe": "a", "startingOffsets": "latest"}, "can't be latest for batch queries"),
    ({"subscribe": "a", "startingOffsets": '{"a":{"0":-1}}'}, "can't be latest"),
    ({"subscribe": "a", "endingOffsets": "earliest"}, "can't be earliest"),
    ({"subscribe": "a", "endingOffsets": '{"a":{"0":-2}}'}, "can't be earliest"),
    ({"subscribe": "a", "startingOffsets": '{"a":{"x":1}}'}, "expected e.g."),
    ({"subscribe": "a", "startingOffsets": '{"a":{"0":5}}',
      "endingOffsets": '{"a":{"0":4}}'}, "greater than its ending offset 4"),
    ({"subscribe": "a", "startingTimestamp": "soon"}, "expected a single long value"),
    ({"subscribe": "a", "minPartitions": "0"}, "'minPartitions' must be positive"),
    ({"subscribe": "a", "failOnDataLoss": "maybe"}, "'failOnDataLoss' must be 'true' or"),
    ({"subscribe": "a", "kafka.isolation.level": "serializable"}, "read_committed"),
    ({"subscribe": "a", "startingOffsetsByTimestampStrategy": "x"}, "'error' or 'latest'"),
])
def test_invalid_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_options({"path": "/nowhere", **options})


def test_options_are_case_insensitive() -> None:
    opts = parse_options({"PATH": "/l", "SUBSCRIBE": "a,b", "INCLUDEHEADERS": "TRUE",
                          "Kafka.Isolation.Level": "READ_COMMITTED", "MinPartitions": "3"})
    assert (opts.subscribe, opts.include_headers, opts.read_committed, opts.min_partitions) == \
        (("a", "b"), True, True, 3)
    with pytest.raises(ValueError, match="load"):
        parse_options({"subscribe": "a"})


def test_last_stable_offset_from_a_snapshot(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A transaction open across segment rolls: the LSO is its first offset, as a
    read_committed consumer sees it, both from the replay of the batches after a roll's
    producer snapshot and (segments gone) from the shutdown snapshot alone."""
    handle = BrokerHandle(tmp_path_factory.mktemp("lso"), BROKER_CONFIG).start()
    try:
        handle.create_topic("t", 1, {"segment.bytes": "1500"})
        plain = producer(handle)
        txn = producer(handle, transactional_id="lso-txn")
        txn.init_transactions(20)
        for _ in range(10):
            plain.produce("t", b"p" * 50, partition=0)
            flush(plain)
        txn.begin_transaction()
        for _ in range(30):
            txn.produce("t", b"o" * 50, partition=0)
            flush(txn)
            plain.produce("t", b"q" * 50, partition=0)
            flush(plain)
        hw = wait_for_checkpoint(handle, ["t"])[TopicPartition("t", 0)]
        pdir = handle.data_dir / "t-0"
        assert sorted(int(p.name[:20]) for p in pdir.glob("*.snapshot"))[-1] > 10
        assert _logdir.last_stable_offset(pdir, hw) == 10
        [committed] = plan(parse_options({"path": str(handle.data_dir), "subscribe": "t",
                                          "kafka.isolation.level": "read_committed"}))
        assert (committed.start, committed.end) == (0, 10)
    finally:
        handle.stop()           # the transaction is still open: a snapshot at the log end
    assert (pdir / f"{hw:020d}.snapshot").exists()
    for log in pdir.glob("*.log"):
        log.rename(log.with_name(log.name + ".deleted"))
    assert _logdir.last_stable_offset(pdir, hw) == 10
