"""The ``kafkapy-log`` data source in a real local SparkSession, against a real kafkapy broker.

Data is produced by confluent-kafka through the broker (every codec, headers with null values
and duplicate or non-ASCII keys, null keys and values, explicit and broker timestamps,
LogAppendTime, transactions); the data source reads the broker's log dir while the broker
runs, once its high-watermark checkpoint covers the data, and must return, row for row, what
a confluent-kafka consumer returns. No ``register()``: Spark discovers the source itself.
"""

from __future__ import annotations

import struct
import threading
import time
from typing import Any

import confluent_kafka
import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.testing import BrokerHandle
from tests.spark.conftest import (
    BROKER_CONFIG,
    TIMEOUT,
    consume,
    flush,
    producer,
    read,
    spark_rows,
    wait_for_checkpoint,
)

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
HEADER_SETS: list[list[tuple[str, bytes | None]]] = [
    [], [("h", b"1")], [("dup", b"a"), ("dup", None), ("ключ", b"\x00\xff")]]


@pytest.fixture(scope="module")
def mixed(broker: BrokerHandle) -> list[Any]:
    """Topic "mixed" (3 partitions, every codec) and "appended" (LogAppendTime), and what a
    consumer reads of them."""
    broker.create_topic("mixed", 3)
    broker.create_topic("appended", 2, {"message.timestamp.type": "LogAppendTime"})
    for codec in CODECS:
        p = producer(broker, compression_codec=codec, batch_num_messages=40)
        for i in range(150):
            kwargs: dict[str, Any] = {}
            if HEADER_SETS[i % 3]:
                kwargs["headers"] = HEADER_SETS[i % 3]
            if i % 4 == 0:
                kwargs["timestamp"] = 1_600_000_000_000 + 37 * i
            value = None if i % 11 == 0 else b"" if i % 13 == 0 else \
                f"{codec}-{i}".encode() * (1 + i % 5)
            p.produce("mixed", value, None if i % 7 == 0 else f"k{i}".encode(),
                      partition=i % 3, **kwargs)
            p.poll(0)
        flush(p)
    p = producer(broker, compression_codec="lz4")
    for i in range(60):
        p.produce("appended", f"a{i}".encode(), None, partition=i % 2,
                  headers=HEADER_SETS[i % 3] or None)
    flush(p)
    wait_for_checkpoint(broker, ["mixed", "appended"])
    return sorted(consume(broker, "mixed") + consume(broker, "appended"),
                  key=lambda r: (r[0], r[1], r[2]))


def test_rows_equal_what_a_consumer_reads(spark: Any, broker: BrokerHandle,
                                          mixed: list[Any]) -> None:
    df = read(spark, broker, {"subscribe": "mixed,appended", "includeHeaders": "true"})
    assert df.columns == ["key", "value", "topic", "partition", "offset", "timestamp",
                          "timestampType", "headers"]
    got = spark_rows(df)
    assert len(got) == 5 * 150 + 60
    assert got == mixed
    assert {r[6] for r in got if r[0] == "appended"} == {1}


def test_default_schema_has_no_headers(spark: Any, broker: BrokerHandle,
                                       mixed: list[Any]) -> None:
    df = read(spark, broker, {"subscribe": "mixed"})
    assert df.columns == ["key", "value", "topic", "partition", "offset", "timestamp",
                          "timestampType"]
    assert spark_rows(df) == [r[:7] for r in mixed if r[0] == "mixed"]


def test_a_smaller_user_schema_is_honoured(spark: Any, broker: BrokerHandle,
                                           mixed: list[Any]) -> None:
    df = read(spark, broker, {"subscribe": "mixed"},
              schema="OFFSET bigint, value binary, Partition int")
    assert df.columns == ["OFFSET", "value", "Partition"]
    got = sorted((r.Partition, r.OFFSET, None if r.value is None else bytes(r.value))
                 for r in df.collect())
    assert got == sorted((r[1], r[2], r[4]) for r in mixed if r[0] == "mixed")
    with pytest.raises(Exception, match="column 'offset' must be bigint, not int"):
        read(spark, broker, {"subscribe": "mixed"}, schema="offset int").collect()
    with pytest.raises(Exception, match="'nope' is not a Kafka column"):
        read(spark, broker, {"subscribe": "mixed"}, schema="nope binary").collect()


def test_counts_and_aggregates(spark: Any, broker: BrokerHandle, mixed: list[Any]) -> None:
    df = read(spark, broker, {"subscribe": "mixed"})
    assert df.count() == 750
    by_partition = {r.partition: r["count"] for r in df.groupBy("partition").count().collect()}
    assert by_partition == {p: sum(1 for r in mixed if r[:2] == ("mixed", p)) for p in range(3)}


def test_offsets_json(spark: Any, broker: BrokerHandle, mixed: list[Any]) -> None:
    df = read(spark, broker, {
        "subscribe": "mixed",
        "startingOffsets": '{"mixed":{"0":5,"1":-2,"2":240}}',
        "endingOffsets": '{"mixed":{"0":20,"1":-1,"2":241}}'})
    bounds = {0: (5, 20), 1: (0, 250), 2: (240, 241)}
    want = [r[:7] for r in mixed if r[0] == "mixed"
            and bounds[r[1]][0] <= r[2] < bounds[r[1]][1]]
    assert spark_rows(df) == want
    with pytest.raises(Exception, match="you must specify all topic-partitions"):
        read(spark, broker, {"subscribe": "mixed",
                             "startingOffsets": '{"mixed":{"0":5}}'}).collect()
    with pytest.raises(Exception, match="can't be latest for batch queries"):
        read(spark, broker, {"subscribe": "mixed", "startingOffsets": "latest"}).collect()


def test_subscribe_pattern_and_assign(spark: Any, broker: BrokerHandle,
                                      mixed: list[Any]) -> None:
    # Pattern: whole names only, internal topics (the consumers' __consumer_offsets) left out.
    df = read(spark, broker, {"subscribePattern": "mix.*|.*pend.*"})
    assert spark_rows(df) == [r[:7] for r in mixed]
    assert read(spark, broker, {"subscribePattern": "mix"}).count() == 0
    topics = {r.topic for r in read(spark, broker, {"subscribePattern": ".*"})
              .select("topic").distinct().collect()}
    assert "mixed" in topics and not any(t.startswith("__") for t in topics)
    df = read(spark, broker, {"assign": '{"mixed":[2],"appended":[0]}'})
    assert spark_rows(df) == [r[:7] for r in mixed if (r[0], r[1]) in
                              (("mixed", 2), ("appended", 0))]


def test_explicit_register(spark: Any, broker: BrokerHandle, mixed: list[Any]) -> None:
    import pyspark_kafkapy

    pyspark_kafkapy.register(spark)
    assert read(spark, broker, {"subscribe": "appended"}).count() == 60


# ---------------------------------------------------------------------- timestamps, splits

def test_timestamp_options_match_kafka_offsets_for_times(spark: Any,
                                                         broker: BrokerHandle) -> None:
    # Timestamps out of order, each record its own batch, small segments and a dense index:
    # the .timeindex has entries to use and a search that must not trust order.
    topic = "times"
    # (retention.ms -1: these 1970 timestamps are older than any retention.)
    broker.create_topic(topic, 2, {"segment.bytes": "1000", "index.interval.bytes": "100",
                                   "retention.ms": "-1"})
    p = producer(broker, linger_ms=0)
    stamps = [10_000 + ((i * 7919) % 60) * 100 for i in range(60)]
    for i, ts in enumerate(stamps):
        p.produce(topic, f"t{i}".encode(), partition=i % 2, timestamp=ts)
        flush(p)
    wait_for_checkpoint(broker, [topic])
    assert len(list((broker.data_dir / f"{topic}-0").glob("*.log"))) >= 3
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap_servers,
                                         "group.id": "ts", "log_level": 3})
    rows = [r[:7] for r in consume(broker, topic)]

    def kafka_offset(partition: int, ts: int) -> int:
        [tp] = consumer.offsets_for_times([confluent_kafka.TopicPartition(topic, partition, ts)],
                                          timeout=TIMEOUT)
        return tp.offset if tp.offset >= 0 else broker.end_offsets(topic)[partition]

    try:
        for start, end in ((10_450, 14_000), (9_000, 10_100), (15_000, 99_999), (12_345, 12_346)):
            df = read(spark, broker, {"subscribe": topic, "startingTimestamp": str(start),
                                      "endingTimestamp": str(end)})
            want = [r for r in rows if kafka_offset(r[1], start) <= r[2] < kafka_offset(r[1],
                                                                                     end)]
            assert spark_rows(df) == want, (start, end)
        per = {"0": 11_000, "1": 13_000}
        df = read(spark, broker, {"subscribe": topic, "startingOffsetsByTimestamp":
                                  '{"times":{"0":11000,"1":13000}}'})
        assert spark_rows(df) == [r for r in rows if r[2] >= kafka_offset(r[1], per[str(r[1])])]
    finally:
        consumer.close()
    with pytest.raises(Exception, match=r"no offset matched .* timestamp 99999"):
        read(spark, broker, {"subscribe": topic, "startingTimestamp": "99999"}).collect()
    assert read(spark, broker, {"subscribe": topic, "startingTimestamp": "99999",
                                "startingOffsetsByTimestampStrategy": "latest"}).count() == 0


def test_min_partitions_splits_at_segment_boundaries(spark: Any, broker: BrokerHandle) -> None:
    topic = "split"
    broker.create_topic(topic, 2, {"segment.bytes": "2000"})   # about 20 records each
    p = producer(broker)
    for i in range(400):
        p.produce(topic, b"x" * 50 + str(i).encode(), partition=0 if i < 300 else 1)
        if i % 20 == 19:
            flush(p)
    flush(p)
    wait_for_checkpoint(broker, [topic])
    rows = consume(broker, topic)
    plain = read(spark, broker, {"subscribe": topic})
    assert plain.rdd.getNumPartitions() == 2
    df = read(spark, broker, {"subscribe": topic, "minPartitions": "8"})
    # 300 of 400 offsets in partition 0: 6 pieces of it, 2 of partition 1.
    assert df.rdd.getNumPartitions() == 8
    assert spark_rows(df) == [r[:7] for r in rows]


# ----------------------------------------------------------------- data loss and corruption

def test_start_below_the_log_start_is_data_loss(spark: Any, broker: BrokerHandle) -> None:
    topic = "retained"
    broker.create_topic(topic, 1, {"segment.bytes": "2000", "retention.bytes": "4000"})
    p = producer(broker)
    for i in range(200):
        p.produce(topic, f"{i:04d}".encode() * 10, partition=0)
        if i % 10 == 9:
            flush(p)
    flush(p)
    first = broker.data_dir / f"{topic}-0" / ("0" * 20 + ".log")
    deadline = time.monotonic() + TIMEOUT
    while first.exists():
        assert time.monotonic() < deadline, "retention did not delete the first segment"
        time.sleep(0.05)
    wait_for_checkpoint(broker, [topic])
    rows = consume(broker, topic)
    earliest = rows[0][2]
    assert earliest > 0
    options = {"subscribe": topic, "startingOffsets": '{"retained":{"0":0}}'}
    # (Retention may still be deleting: the log start named may be past ``earliest``.)
    with pytest.raises(Exception, match=r"records \[0, [1-9][0-9]*\) are no longer in"):
        read(spark, broker, options).collect()
    lenient = read(spark, broker, {**options, "failOnDataLoss": "false"})
    got = spark_rows(lenient)
    # Retention may have moved on meanwhile: what is read is a suffix of what was there.
    assert got and got == [r[:7] for r in rows if r[2] >= got[0][2]]


def _batch_positions(log: bytes) -> list[int]:
    positions, pos = [], 0
    while pos < len(log):
        positions.append(pos)
        pos += struct.unpack_from(">i", log, pos + 8)[0] + 12
    return positions


def test_corrupt_segment_names_file_and_position(spark: Any,
                                                 tmp_path_factory: pytest.TempPathFactory
                                                 ) -> None:
    handle = BrokerHandle(tmp_path_factory.mktemp("corrupt"), BROKER_CONFIG).start()
    try:
        handle.create_topic("c", 1)
        p = producer(handle)
        for batch in range(3):
            for i in range(5):
                p.produce("c", f"b{batch}-{i}".encode(), partition=0)
            flush(p)
        wait_for_checkpoint(handle, ["c"])
        rows = consume(handle, "c")
    finally:
        handle.stop()            # clean shutdown: the checkpoints stay as written
    segment = handle.data_dir / "c-0" / ("0" * 20 + ".log")
    data = bytearray(segment.read_bytes())
    positions = _batch_positions(bytes(data))
    assert len(positions) == 3
    data[positions[1] + 70] ^= 0xFF
    segment.write_bytes(bytes(data))
    with pytest.raises(Exception, match=rf"{segment}: record batch at byte {positions[1]}: "
                                        r"CRC-32C mismatch"):
        read(spark, handle, {"subscribe": "c"}).collect()
    got = spark_rows(read(spark, handle, {"subscribe": "c", "failOnDataLoss": "false"}))
    assert got == [r[:7] for r in rows if not 5 <= r[2] < 10]
    # A file cut short below the high watermark.
    segment.write_bytes(bytes(data[:positions[2] + 30]))
    options = {"subscribe": "c", "startingOffsets": '{"c":{"0":10}}'}
    with pytest.raises(Exception, match=rf"{segment}: record batch at byte {positions[2]} is "
                                        rf"cut off: the file ends at byte {positions[2] + 30}, "
                                        r"below the high watermark 15"):
        read(spark, handle, options).collect()
    assert read(spark, handle, {**options, "failOnDataLoss": "false"}).count() == 0


# ---------------------------------------------------------------------------- transactions

def test_read_committed_and_read_uncommitted(spark: Any, broker: BrokerHandle) -> None:
    topic = "txn"
    broker.create_topic(topic, 1)
    plain = producer(broker)
    txn = producer(broker, transactional_id="spark-txn")
    txn.init_transactions(TIMEOUT)

    def plain_send(*values: bytes) -> None:
        for v in values:
            plain.produce(topic, v, partition=0)
        flush(plain)

    def txn_send(*values: bytes) -> None:
        for v in values:
            txn.produce(topic, v, partition=0)
        flush(txn)

    plain_send(b"p1", b"p2")
    txn.begin_transaction()
    txn_send(b"c1", b"c2", b"c3")
    txn.commit_transaction(TIMEOUT)
    txn.begin_transaction()
    txn_send(b"a1", b"a2")
    txn.abort_transaction(TIMEOUT)
    plain_send(b"p3")
    txn.begin_transaction()
    txn_send(b"o1", b"o2")                  # left open while reading
    plain_send(b"p4")                       # beyond the LSO
    wait_for_checkpoint(broker, [topic])
    try:
        for isolation, values in (
                ("read_committed", [b"p1", b"p2", b"c1", b"c2", b"c3", b"p3"]),
                ("read_uncommitted", [b"p1", b"p2", b"c1", b"c2", b"c3", b"a1", b"a2", b"p3",
                                      b"o1", b"o2", b"p4"])):
            want = consume(broker, topic, isolation=isolation)
            assert [r[4] for r in want] == values
            df = read(spark, broker, {"subscribe": topic, "kafka.isolation.level": isolation,
                                      "includeHeaders": "true"})
            assert spark_rows(df) == want, isolation
        # The open transaction's first offset bounds read_committed's "latest".
        df = read(spark, broker, {"subscribe": topic, "isolation.level": "read_committed",
                                  "endingOffsets": '{"txn":{"0":-1}}'})
        assert df.count() == 6
    finally:
        txn.abort_transaction(TIMEOUT)


# -------------------------------------------------------------------------- live appends

def test_reads_while_the_broker_appends_and_rolls(spark: Any, broker: BrokerHandle) -> None:
    """Every read of a partition being written returns a gap-free prefix of what was sent,
    never a torn batch, while segments roll underneath."""
    topic = "live"
    broker.create_topic(topic, 2, {"segment.bytes": "20000"})
    stop = threading.Event()
    sent = [0]

    def produce() -> None:
        # Batches stay well under segment.bytes (20000): a larger one is refused with
        # RECORD_LIST_TOO_LARGE when the producer falls behind under load.
        p = producer(broker, linger_ms=2, batch_size=8000)
        i = 0
        while not stop.is_set():
            p.produce(topic, f"{i}".encode() * 20, key=f"{i}".encode(), partition=i % 2)
            i += 1
            if i % 50 == 0:
                p.poll(0)
                time.sleep(0.005)
        flush(p)
        sent[0] = i

    thread = threading.Thread(target=produce)
    thread.start()
    try:
        counts = []
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline or len(counts) < 3:
            rows = spark_rows(read(spark, broker, {"subscribe": topic}))
            for partition in (0, 1):
                mine = [r for r in rows if r[1] == partition]
                assert [r[2] for r in mine] == list(range(len(mine)))
                assert [int(bytes(r[3])) for r in mine] == \
                    list(range(partition, 2 * len(mine), 2))
            counts.append(len(rows))
        assert counts == sorted(counts) and counts[-1] > 0
    finally:
        stop.set()
        thread.join()
    assert len(list((broker.data_dir / f"{topic}-0").glob("*.log"))) > 1
    wait_for_checkpoint(broker, [topic])
    assert read(spark, broker, {"subscribe": topic}).count() == sent[0]


def test_nothing_to_read(spark: Any, broker: BrokerHandle) -> None:
    broker.create_topic("empty", 2)
    wait_for_checkpoint(broker, ["empty"])
    assert read(spark, broker, {"subscribe": "empty"}).collect() == []
    assert read(spark, broker, {"subscribe": "no-such-topic"}).collect() == []
    assert TopicPartition("empty", 0) in wait_for_checkpoint(broker, ["empty"])
