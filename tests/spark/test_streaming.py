"""``spark.readStream.format("kafkapy-log")``: micro-batches over a log a live broker appends to.

The Spark tests run real queries in the shared session against a real kafkapy broker (records
produced by confluent-kafka; the oracle is what a confluent-kafka consumer reads). The sink is
``foreachBatch`` keeping each micro-batch's rows by batch id, as an idempotent sink would: a
batch Spark runs again after a restart replaces its first run, and must hold the same rows.
So "exactly once" is checked as: the union of the batches is every record, none twice.

The planning of micro-batches (offsets JSON, admission control, data-loss checks) is also
tested without Spark on small log directories made by hand.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic
from pyspark_kafkapy._microbatch import (
    admit,
    from_json,
    latest_offsets,
    plan_micro_batch,
    to_json,
)
from pyspark_kafkapy._options import parse_options

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import OffsetOutOfRangeError
from kafkapy.testing import BrokerHandle
from tests.spark.conftest import TIMEOUT, consume, flush, producer, wait_for_checkpoint

Key = tuple[str, int, int]        # topic, partition, offset


# ============================================================ planning, without Spark

def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def test_offsets_json_is_canonical() -> None:
    offsets = {tp("b", 10): 5, tp("b", 2): 7, tp("a", 0): 0}
    assert to_json(offsets) == {"a": {"0": 0}, "b": {"2": 7, "10": 5}}
    assert list(to_json(offsets)["b"]) == ["2", "10"]          # numeric order
    assert from_json(to_json(offsets)) == offsets
    for bad in ([], {"a": [1]}, {"a": {"x": 1}}, {"a": {"0": -1}}, {"a": {"0": True}}):
        with pytest.raises(ValueError, match="not a kafkapy-log stream offset"):
            from_json(bad)


def test_admit_spreads_by_lag_and_never_exceeds() -> None:
    start = {tp("t", 0): 0, tp("t", 1): 0, tp("t", 2): 0}
    latest = {tp("t", 0): 300, tp("t", 1): 150, tp("t", 2): 30}
    end = admit(start, latest, {}, 100)
    # One each, then 97 shared by the remaining lags 299:149:29, the two offsets left over
    # to the largest remainders.
    assert end == {tp("t", 0): 62, tp("t", 1): 31, tp("t", 2): 7}
    assert admit(start, latest, {}, 480) == latest
    assert admit(start, latest, {}, 10_000) == latest
    # Fewer offsets than lagging partitions: those lagging most get one.
    assert admit(start, latest, {}, 2) == {tp("t", 0): 1, tp("t", 1): 1, tp("t", 2): 0}
    # A small partition next to a huge lag is not starved.
    big = {tp("t", 0): 1_000_000, tp("t", 1): 1}
    assert admit({tp("t", 0): 0, tp("t", 1): 0}, big, {}, 300) == \
        {tp("t", 0): 299, tp("t", 1): 1}
    # A partition missing from start begins where ``first`` says; one behind its start
    # (truncated) is left at its latest, for the data-loss check.
    end = admit({tp("t", 0): 50}, {tp("t", 0): 40, tp("t", 1): 100}, {tp("t", 1): 60}, 10)
    assert end == {tp("t", 0): 40, tp("t", 1): 70}
    for n in (1, 3, 7, 50, 99, 479):
        end = admit(start, latest, {}, n)
        assert sum(end[p] - start[p] for p in start) == n
        assert all(start[p] <= end[p] <= latest[p] for p in start)


def _fake_log_dir(root: Path, segments: dict[TopicPartition, list[int]],
                  hws: dict[TopicPartition, int]) -> Path:
    """A log dir with empty segment files and a HW checkpoint: enough to plan on."""
    for p, bases in segments.items():
        pdir = root / f"{p.topic}-{p.partition}"
        pdir.mkdir(parents=True)
        for base in bases:
            (pdir / f"{base:020d}.log").touch()
    _write_hws(root, hws)
    return root


def _write_hws(root: Path, hws: dict[TopicPartition, int]) -> None:
    lines = [f"{p.topic} {p.partition} {hw}" for p, hw in hws.items()]
    (root / "replication-offset-checkpoint").write_text("\n".join(["0", str(len(lines)),
                                                                   *lines]) + "\n")


def test_micro_batch_planning_and_data_loss(tmp_path: Path) -> None:
    log_dir = _fake_log_dir(tmp_path, {tp("t", 0): [100, 150], tp("t", 1): [0],
                                       tp("t", 2): [30]},
                            {tp("t", 0): 200, tp("t", 1): 80, tp("t", 2): 60})

    def ranges(start: dict[TopicPartition, int], end: dict[TopicPartition, int],
               **options: str) -> list[tuple[Any, ...]]:
        opts = parse_options({"path": str(log_dir), "subscribe": "t", **options},
                             streaming=True)
        return [(r.partition, r.start, r.end) for r in plan_micro_batch(opts, start, end)]

    # Nothing moved: no task; a moved partition: its range.
    assert ranges({tp("t", 1): 10}, {tp("t", 1): 10}) == []
    assert ranges({tp("t", 1): 10}, {tp("t", 1): 50}) == [(1, 10, 50)]
    # The start was deleted by retention.
    with pytest.raises(OffsetOutOfRangeError, match=r"t-0: records \[40, 100\) are no longer"):
        ranges({tp("t", 0): 40}, {tp("t", 0): 200})
    assert ranges({tp("t", 0): 40}, {tp("t", 0): 200}, failOnDataLoss="false") == \
        [(0, 100, 200)]
    # A new partition starting above 0; one that went away; one that went back.
    with pytest.raises(OffsetOutOfRangeError, match=r"added partition t-2 starts at offset 30"):
        ranges({}, {tp("t", 2): 60})
    assert ranges({}, {tp("t", 2): 60}, failOnDataLoss="false") == [(2, 30, 60)]
    with pytest.raises(OffsetOutOfRangeError, match="t-7 is gone"):
        ranges({tp("t", 7): 3, tp("t", 1): 0}, {tp("t", 1): 5})
    with pytest.raises(OffsetOutOfRangeError, match="offset went back from 90 to 80"):
        ranges({tp("t", 1): 90}, {tp("t", 1): 80})
    assert ranges({tp("t", 1): 90}, {tp("t", 1): 80}, failOnDataLoss="false") == []
    # minPartitions cuts at segment bases.
    assert ranges({tp("t", 0): 100}, {tp("t", 0): 200}, minPartitions="2") == \
        [(0, 100, 150), (0, 150, 200)]


def test_available_now_bound(tmp_path: Path) -> None:
    log_dir = _fake_log_dir(tmp_path, {tp("t", 0): [0], tp("t", 1): [0], tp("t", 2): [0]},
                            {tp("t", 0): 100, tp("t", 1): 80, tp("t", 2): 60})
    opts = parse_options({"path": str(log_dir), "subscribe": "t"}, streaming=True)
    live, _ = latest_offsets(opts, {})
    assert live == {tp("t", 0): 100, tp("t", 1): 80, tp("t", 2): 60}
    # Capped by the target; a start already past it, or a partition the target lacks, stay
    # where they are (not an offset going back).
    target = {tp("t", 0): 50, tp("t", 1): 70}
    capped, _ = latest_offsets(opts, {tp("t", 0): 10, tp("t", 1): 75, tp("t", 2): 20}, target)
    assert capped == {tp("t", 0): 50, tp("t", 1): 75, tp("t", 2): 20}


def test_the_first_micro_batch_is_the_same_when_run_again(tmp_path: Path) -> None:
    """Spark asks for the initial offset again when it re-runs the first micro-batch after
    a restart: "latest" must not have moved by then."""
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows
    from pyspark_kafkapy.datasource import KafkaLogStreamReader, kafka_schema

    log_dir = _fake_log_dir(tmp_path, {tp("t", 0): [0], tp("t", 1): [0]},
                            {tp("t", 0): 50, tp("t", 1): 20})
    options = {"path": str(log_dir), "subscribe": "t"}
    reader = KafkaLogStreamReader(options, kafka_schema())
    initial = reader.initialOffset()
    assert initial == {"$initial": "latest"}
    first_end = reader.latestOffset(initial, ReadAllAvailable())
    assert first_end == {"t": {"0": 50, "1": 20}, "$from": {"t": {"0": 50, "1": 20}}}
    assert reader.partitions(initial, first_end) == []
    # The broker appends; the query restarts before the first batch was committed.
    _write_hws(log_dir, {tp("t", 0): 80, tp("t", 1): 25})
    again = KafkaLogStreamReader(options, kafka_schema())
    assert again.initialOffset() == initial
    assert again.partitions(again.initialOffset(), first_end) == []     # the same: nothing
    end = again.latestOffset(first_end, ReadMaxRows(10))
    assert end == {"t": {"0": 58, "1": 22}}
    assert [(p.value.partition, p.value.start, p.value.end)
            for p in again.partitions(first_end, end)] == [(0, 50, 58), (1, 20, 22)]
    # Nothing new: the start comes back as it was (no empty micro-batch).
    last = {"t": {"0": 80, "1": 25}}
    assert again.latestOffset(last, ReadMaxRows(10)) is last
    assert again.reportLatestOffset() == last


@pytest.mark.parametrize(("options", "message"), [
    ({"endingOffsets": "latest"}, "'endingOffsets' is not valid in streaming queries"),
    ({"endingTimestamp": "5"}, "'endingTimestamp' is not valid in streaming"),
    ({"maxOffsetsPerTrigger": "0"}, "'maxOffsetsPerTrigger' must be positive"),
    ({"maxOffsetsPerTrigger": "many"}, "expected a single long value"),
    ({"minOffsetsPerTrigger": "10"}, "'minOffsetsPerTrigger' of Spark's Kafka source is not"),
])
def test_invalid_streaming_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_options({"path": "/l", "subscribe": "t", **options}, streaming=True)


def test_streaming_option_defaults() -> None:
    opts = parse_options({"path": "/l", "subscribe": "t"}, streaming=True)
    assert (opts.starting.kind, opts.max_offsets_per_trigger) == ("latest", None)
    opts = parse_options({"path": "/l", "subscribe": "t", "startingOffsets": '{"t":{"0":-1}}',
                          "MaxOffsetsPerTrigger": "7"}, streaming=True)
    assert opts.max_offsets_per_trigger == 7


# =============================================================== queries, in Spark

class BatchSink:
    """``foreachBatch``: each micro-batch's rows by batch id (a re-run must match)."""

    def __init__(self) -> None:
        self.batches: dict[int, list[tuple[Any, ...]]] = {}
        self.replays = 0
        self.fail_at: int | None = None     # fail once, after keeping this batch's rows

    def __call__(self, df: Any, batch_id: int) -> None:
        rows = sorted((r.topic, r.partition, r.offset, bytes(r.value))
                      for r in df.select("topic", "partition", "offset", "value").collect())
        if batch_id in self.batches:
            self.replays += 1
            assert rows == self.batches[batch_id], f"batch {batch_id} replayed differently"
        self.batches[batch_id] = rows
        if batch_id == self.fail_at:
            self.fail_at = None
            raise RuntimeError(f"the sink fails on purpose in batch {batch_id}")

    def rows(self) -> list[tuple[Any, ...]]:
        out = sorted(r for rows in self.batches.values() for r in rows)
        duplicates = [k for k, n in Counter(r[:3] for r in out).items() if n > 1]
        assert not duplicates, f"records read twice: {duplicates[:10]}"
        return out

    def sizes(self) -> list[int]:
        return [len(rows) for _, rows in sorted(self.batches.items()) if rows]


def start_query(spark: Any, broker: BrokerHandle, sink: BatchSink, checkpoint: Path,
                options: dict[str, str], *, available_now: bool = False) -> Any:
    reader = spark.readStream.format("kafkapy-log")
    for k, v in options.items():
        reader = reader.option(k, v)
    writer = (reader.load(str(broker.data_dir)).writeStream.foreachBatch(sink)
              .option("checkpointLocation", str(checkpoint)))
    writer = (writer.trigger(availableNow=True) if available_now
              else writer.trigger(processingTime="100 milliseconds"))
    return writer.start()


def run_available_now(spark: Any, broker: BrokerHandle, sink: BatchSink, checkpoint: Path,
                      options: dict[str, str]) -> None:
    query = start_query(spark, broker, sink, checkpoint, options, available_now=True)
    try:
        assert query.awaitTermination(TIMEOUT * 6), "availableNow query did not finish"
    finally:
        query.stop()


def consumer_rows(broker: BrokerHandle, topic: str) -> list[tuple[Any, ...]]:
    return [(r[0], r[1], r[2], r[4]) for r in consume(broker, topic)]


def test_restart_from_checkpoint_exactly_once_while_the_broker_appends(
        spark: Any, broker: BrokerHandle, tmp_path: Path) -> None:
    """While a producer appends (segments rolling under the reads), a query runs and is
    stopped; restarted, it fails in its sink in the middle of a micro-batch (the batch is in
    the checkpoint's offsets, not committed); more is produced; the last start (available-now,
    without maxOffsetsPerTrigger) re-runs that batch with the same records and reads the rest.
    Every record exactly once; no micro-batch above maxOffsetsPerTrigger while it was set."""
    topic = "s-live"
    broker.create_topic(topic, 2, {"segment.bytes": "3000", "index.interval.bytes": "500"})
    options = {"subscribe": topic, "startingOffsets": "earliest", "maxOffsetsPerTrigger": "100"}
    sink, checkpoint = BatchSink(), tmp_path / "checkpoint"
    stop = threading.Event()
    sent = [0]

    def produce() -> None:          # 20 records every 0.1 s until stopped
        p = producer(broker, linger_ms=2)
        i = 0
        while not stop.is_set() and i < 3000:
            for _ in range(20):
                p.produce(topic, f"v{i:05d}".encode() * 8, f"k{i}".encode(), partition=i % 2)
                i += 1
            flush(p)
            time.sleep(0.1)
        sent[0] = i

    writer = threading.Thread(target=produce)
    writer.start()
    try:
        query = start_query(spark, broker, sink, checkpoint, options)
        try:
            deadline = time.monotonic() + TIMEOUT * 3
            while len(sink.sizes()) < 2 and query.exception() is None:
                assert time.monotonic() < deadline, f"no progress: {sink.sizes()}"
                time.sleep(0.05)
        finally:
            query.stop()          # in the middle of the stream, the producer still going
        assert query.exception() is None
        first_run = len(sink.rows())
        sink.fail_at = max(sink.batches) + 1      # the restarted query's first new batch
        query = start_query(spark, broker, sink, checkpoint, options)
        try:
            with pytest.raises(Exception, match="the sink fails on purpose"):
                query.awaitTermination(TIMEOUT * 3)
        finally:
            query.stop()
    finally:
        stop.set()
        writer.join()
    assert sink.fail_at is None
    limited = sink.sizes()
    replays = sink.replays        # (a batch cut by stop() is run again too: 0 or 1)
    p = producer(broker)
    for i in range(50):
        p.produce(topic, f"after{i}".encode(), partition=i % 2)
    flush(p)
    wait_for_checkpoint(broker, [topic])
    run_available_now(spark, broker, sink, checkpoint,
                      {k: v for k, v in options.items() if k != "maxOffsetsPerTrigger"})

    want = consumer_rows(broker, topic)
    assert len(want) == sent[0] + 50
    assert 0 < first_run < len(want)
    assert max(limited) <= 100
    assert sink.replays == replays + 1            # the failed batch, the same records again
    assert sink.rows() == want
    assert len(list((broker.data_dir / f"{topic}-0").glob("*.log"))) > 2    # it rolled


def test_max_offsets_per_trigger_spread_by_lag(spark: Any, broker: BrokerHandle,
                                               tmp_path: Path) -> None:
    topic = "s-spread"
    broker.create_topic(topic, 3)
    p = producer(broker)
    counts = {0: 120, 1: 60, 2: 12}
    for partition, n in counts.items():
        for i in range(n):
            p.produce(topic, f"{partition}-{i}".encode(), partition=partition)
    flush(p)
    wait_for_checkpoint(broker, [topic])
    sink = BatchSink()
    run_available_now(spark, broker, sink, tmp_path / "checkpoint",
                      {"subscribe": topic, "startingOffsets": "earliest",
                       "maxOffsetsPerTrigger": "64"})
    assert sink.rows() == consumer_rows(broker, topic)
    assert sink.sizes() == [64, 64, 64]
    first = Counter(r[1] for r in sink.batches[min(sink.batches)])
    assert first == expected_first_batch(counts, 64)


def expected_first_batch(lags: dict[int, int], limit: int) -> Counter[int]:
    end = admit({tp("x", p): 0 for p in lags}, {tp("x", p): n for p, n in lags.items()}, {},
                limit)
    return Counter({k.partition: v for k, v in end.items()})


def test_new_partitions_and_topics_are_read_from_their_start(
        spark: Any, broker: BrokerHandle, tmp_path: Path) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    broker.create_topic("grow-a", 1)

    def send(topic: str, partition: int, n: int) -> None:
        p = producer(broker)         # a new one: it must know the new partitions
        for i in range(n):
            p.produce(topic, f"{topic}/{partition}/{i}".encode(), partition=partition)
        flush(p)

    send("grow-a", 0, 10)
    wait_for_checkpoint(broker, ["grow-a"])
    sink = BatchSink()
    # "latest": the 10 records already there are not read; what comes later is.
    query = start_query(spark, broker, sink, tmp_path / "checkpoint",
                        {"subscribePattern": "grow-.*"})
    try:
        query.processAllAvailable()
        send("grow-a", 0, 5)
        [future] = admin.create_partitions([NewPartitions("grow-a", 2)]).values()
        future.result(TIMEOUT)
        [future] = admin.create_topics([NewTopic("grow-b", 2)]).values()
        future.result(TIMEOUT)
        send("grow-a", 1, 7)
        send("grow-b", 1, 4)
        wait_for_checkpoint(broker, ["grow-a", "grow-b"])
        query.processAllAvailable()
    finally:
        query.stop()
    assert query.exception() is None
    want = [r for r in consumer_rows(broker, "grow-a") + consumer_rows(broker, "grow-b")
            if r[:2] != ("grow-a", 0) or r[2] >= 10]
    assert sink.rows() == sorted(want)
    assert len(want) == 5 + 7 + 4


def _first_segment(broker: BrokerHandle, topic: str) -> int:
    return min(int(f.name[:20]) for f in (broker.data_dir / f"{topic}-0").glob("*.log"))


def test_fail_on_data_loss_after_retention(spark: Any, broker: BrokerHandle,
                                           tmp_path: Path) -> None:
    topic = "s-lossy"
    broker.create_topic(topic, 1, {"segment.bytes": "1000", "retention.bytes": "3000"})
    p = producer(broker, linger_ms=0)

    def send(start: int, n: int) -> None:
        for i in range(start, start + n):
            p.produce(topic, f"{i:05d}".encode() * 10, partition=0)
            flush(p)

    send(0, 20)
    wait_for_checkpoint(broker, [topic])
    checkpoint = tmp_path / "checkpoint"
    options = {"subscribe": topic, "startingOffsets": "earliest"}
    sink = BatchSink()
    run_available_now(spark, broker, sink, checkpoint, options)
    assert sink.rows() == consumer_rows(broker, topic)
    assert max(r[2] for r in sink.rows()) == 19
    # While the query is stopped, retention deletes the records it would read next.
    send(20, 80)
    deadline = time.monotonic() + TIMEOUT
    while _first_segment(broker, topic) <= 20:
        assert time.monotonic() < deadline, "retention did not delete offset 20"
        time.sleep(0.05)
    wait_for_checkpoint(broker, [topic])

    failing = BatchSink()
    query = start_query(spark, broker, failing, checkpoint, options, available_now=True)
    with pytest.raises(Exception, match=rf"{topic}-0: records \[20, [0-9]+\) are no longer "
                                        rf"in .*failOnDataLoss=false"):
        query.awaitTermination(TIMEOUT * 3)
    query.stop()
    assert not failing.batches

    lenient = BatchSink()
    run_available_now(spark, broker, lenient, checkpoint, {**options,
                                                           "failOnDataLoss": "false"})
    got = lenient.rows()
    # From the log start (retention may have moved on since) to the end, nothing skipped.
    want = consumer_rows(broker, topic)
    assert got and got[0][2] > 20
    assert got == [r for r in want if r[2] >= got[0][2]]
    assert got[-1][2] == 99
