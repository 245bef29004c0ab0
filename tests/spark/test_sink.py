"""The sink ``format("kafkapy")`` in batch writes (``pyspark_kafkapy.sink``), through a real
broker, the oracle a read_committed confluent-kafka consumer.

Rows written equal the rows read (every column type, null keys and values, headers, explicit
partitions, a topic column over two topics), the default partitioner is Java's (murmur2), a
bad schema or option fails before anything is produced, a broker error fails the job with the
broker's error, task counts reach the driver, and a batch write re-run with the same
``writeId`` skips the tasks that committed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafkapy.testing import BrokerHandle
from tests.spark.conftest import consume


def _write(df: Any, broker: BrokerHandle, **options: str) -> None:
    writer = df.write.format("kafkapy").option("kafka.bootstrap.servers",
                                                broker.bootstrap_servers)
    for k, v in options.items():
        writer = writer.option(k, v)
    writer.mode("append").save()


def _committed(broker: BrokerHandle, topic: str) -> list[tuple[Any, ...]]:
    """(topic, partition, key, value, headers) of every committed record, sorted."""
    rows = consume(broker, topic, isolation="read_committed")
    return sorted(((r[0], r[1], r[3], r[4], r[7]) for r in rows), key=repr)


def _groups(broker: BrokerHandle) -> list[str]:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    listed = admin.list_consumer_groups(request_timeout=10).result(timeout=20)
    return [g.group_id for g in listed.valid]


def _end_offsets(broker: BrokerHandle, topic: str) -> int:
    return sum(broker.end_offsets(topic).values())


def murmur2_partition(key: bytes, partitions: int) -> int:
    """Java's DefaultPartitioner for a keyed record: toPositive(murmur2(key)) % partitions."""
    m, r = 0x5BD1E995, 24
    h = (0x9747B28C ^ len(key)) & 0xFFFFFFFF
    n4 = len(key) // 4
    for i in range(n4):
        k = int.from_bytes(key[4 * i:4 * i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = key[4 * n4:]
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if len(tail) >= 1:
        h ^= tail[0]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return (h & 0x7FFFFFFF) % partitions


def test_every_column_type_round_trips(spark: Any, broker: BrokerHandle) -> None:
    broker.create_topic("sink-a", 3)
    broker.create_topic("sink-b", 2)
    rows = []
    for i in range(600):
        key = None if i % 7 == 0 else f"k{i % 13}".encode()
        value = None if i % 11 == 0 else (b"\x00\xff" + str(i).encode())
        headers = None if i % 3 == 0 else [("h1", str(i).encode()), ("h2", None),
                                           ("h1", b"again")]
        rows.append(("sink-a" if i % 2 else "sink-b", i % 2, key, value, headers))
    df = spark.createDataFrame(
        rows, "topic string, partition int, key binary, value binary, "
              "headers array<struct<key: string, value: binary>>").repartition(3)
    _write(df, broker)
    expected = sorted(((t, p, k, v, h) for t, p, k, v, h in rows), key=repr)
    got = _committed(broker, "sink-a") + _committed(broker, "sink-b")
    assert sorted(got, key=repr) == expected
    # A random write id is never used again: the driver deleted its marker groups.
    assert not [g for g in _groups(broker) if g.startswith("kafkapy-sink-")]


def test_string_columns_topic_option_and_default_partitioner(spark: Any,
                                                             broker: BrokerHandle) -> None:
    broker.create_topic("sink-str", 4)
    rows = [(f"key-{i % 50}", f"värde {i}", "ignored-topic") for i in range(1000)]
    rows += [(None, f"no key {i}", "ignored-topic") for i in range(40)]
    df = spark.createDataFrame(rows, "key string, value string, topic string")
    # The topic option wins over the topic column, as in Spark's Kafka sink.
    _write(df, broker, topic="sink-str")
    got = consume(broker, "sink-str", isolation="read_committed")
    assert sorted(((r[3], r[4]) for r in got), key=repr) == sorted(
        ((None if k is None else k.encode(), v.encode()) for k, v, _ in rows), key=repr)
    keyed = [r for r in got if r[3] is not None]
    assert {r[1] for r in keyed} == {0, 1, 2, 3}
    for r in keyed:
        assert r[1] == murmur2_partition(r[3], 4), r
    assert all(r[7] is None for r in got)


@pytest.mark.parametrize(("ddl", "options", "message"), [
    ("key binary, payload binary", {"topic": "sink-bad"}, "Required attribute 'value'"),
    ("key int, value binary", {"topic": "sink-bad"},
     "key attribute type must be a StringType or BinaryType"),
    ("value int", {"topic": "sink-bad"}, "value attribute type must be"),
    ("value binary", {}, "topic option required when no 'topic' attribute"),
    ("topic int, value binary", {}, "topic attribute type must be a StringType"),
    ("value binary, partition long", {"topic": "sink-bad"},
     "partition attribute type must be an IntegerType"),
    ("value binary, headers map<string,binary>", {"topic": "sink-bad"},
     "headers attribute type must be"),
    ("value binary", {"topic": "sink-bad", "kafka.key.serializer": "x"},
     "Kafka option 'key.serializer' is not supported"),
    ("value binary", {"topic": "sink-bad", "kafka.acks": "1"},
     "cannot be used with exactlyOnce=true"),
    ("value binary", {"topic": "sink-bad", "kafka.no.such.setting": "1"},
     "No such configuration property"),
    ("value binary", {"topic": "sink-bad", "batchId": "3"}, "needs option 'writeId'"),
])
def test_bad_schema_or_options_fail_before_producing(spark: Any, broker: BrokerHandle,
                                                     ddl: str, options: dict[str, str],
                                                     message: str) -> None:
    if "sink-bad" not in broker.topics():
        broker.create_topic("sink-bad", 1)
    values = {"key binary": b"k", "key int": 1, "payload binary": b"p", "value binary": b"v",
              "value int": 1, "topic int": 1, "partition long": 0,
              "headers map<string,binary>": {"a": b"b"}}
    row = tuple(values[part.strip()] for part in ddl.split(", "))
    df = spark.createDataFrame([row], ddl)
    with pytest.raises(Exception, match=message):
        _write(df, broker, **options)
    assert _end_offsets(broker, "sink-bad") == 0


def test_overwrite_mode_missing_bootstrap_and_reads_are_errors(spark: Any,
                                                         broker: BrokerHandle) -> None:
    df = spark.createDataFrame([(b"v",)], "value binary")
    with pytest.raises(Exception, match="Save mode Overwrite not allowed"):
        (df.write.format("kafkapy").option("kafka.bootstrap.servers", broker.bootstrap_servers)
         .option("topic", "sink-bad").mode("overwrite").save())
    with pytest.raises(Exception, match=r"kafka\.bootstrap\.servers' must be specified"):
        df.write.format("kafkapy").option("topic", "sink-bad").mode("append").save()
    with pytest.raises(Exception, match="is a sink; read topics with"):
        spark.read.format("kafkapy").load().collect()


def test_null_topic_row_fails_the_task_and_nothing_is_committed(spark: Any,
                                                                broker: BrokerHandle) -> None:
    broker.create_topic("sink-nulltopic", 1)
    rows = [("sink-nulltopic", f"v{i}") for i in range(5000)] + [(None, "x")]
    df = spark.createDataFrame(rows, "topic string, value string").coalesce(1)
    with pytest.raises(Exception, match="Null topic present in the data"):
        _write(df, broker)
    assert consume(broker, "sink-nulltopic", isolation="read_committed") == []


@pytest.mark.parametrize("exactly_once", ["true", "false"])
def test_broker_error_fails_the_job_with_the_brokers_error(spark: Any, broker: BrokerHandle,
                                                           exactly_once: str) -> None:
    topic = f"sink-small-{exactly_once}"
    broker.create_topic(topic, 1, {"max.message.bytes": "2000"})
    df = spark.createDataFrame([(b"x" * 100,)] * 10 + [(b"y" * 10_000,)], "value binary")
    with pytest.raises(Exception, match="MSG_SIZE_TOO_LARGE") as info:
        _write(df.coalesce(1), broker, topic=topic, exactlyOnce=exactly_once)
    assert "kafkapy sink: task 0" in str(info.value)
    if exactly_once == "true":      # the task's transaction was aborted: nothing committed
        assert consume(broker, topic, isolation="read_committed") == []


def test_task_counts_reach_the_driver_and_same_write_id_skips(spark: Any, broker: BrokerHandle,
                                                             tmp_path: Path) -> None:
    broker.create_topic("sink-rerun", 2)
    df = spark.range(0, 3000, numPartitions=3).selectExpr("CAST(id AS STRING) AS value")
    stats = tmp_path / "stats"
    _write(df, broker, topic="sink-rerun", writeId="job-7", writeStatsDir=str(stats))
    first = json.loads((stats / "write-job-7.json").read_text())
    assert first["rows"] == 3000
    assert sorted(t["rows"] for t in first["tasks"]) == [1000, 1000, 1000]
    assert not any(t["skipped"] for t in first["tasks"])
    assert {t["transactional_id"] for t in first["tasks"]} == {
        f"kafkapy-sink-job-7-{p}" for p in range(3)}
    # A writeId given is kept for re-runs: so are its markers.
    assert {f"kafkapy-sink-job-7-{p}" for p in range(3)} <= set(_groups(broker))
    # The job again with the same writeId: every task finds its marker and writes nothing.
    _write(df, broker, topic="sink-rerun", writeId="job-7", writeStatsDir=str(stats))
    second = json.loads((stats / "write-job-7.json").read_text())
    assert all(t["skipped"] for t in second["tasks"]) and second["rows"] == 3000
    values = [r[4] for r in consume(broker, "sink-rerun", isolation="read_committed")]
    assert sorted(values) == sorted(str(i).encode() for i in range(3000))
    # Another write id writes again (the marker is per write).
    _write(df, broker, topic="sink-rerun", writeId="job-8")
    assert len(consume(broker, "sink-rerun", isolation="read_committed")) == 6000


def test_at_least_once_mode_writes_without_transactions(spark: Any, broker: BrokerHandle,
                                                        tmp_path: Path) -> None:
    broker.create_topic("sink-alo", 2)
    df = spark.range(0, 2000, numPartitions=2).selectExpr(
        "CAST(id % 10 AS STRING) AS key", "CAST(id AS STRING) AS value")
    _write(df, broker, topic="sink-alo", exactlyOnce="false", writeStatsDir=str(tmp_path),
           **{"kafka.compression.type": "lz4", "kafka.linger.ms": "20"})
    got = consume(broker, "sink-alo")
    assert sorted(int(r[4]) for r in got) == list(range(2000))
    # No transaction: no control records, so offsets are dense.
    assert sum(broker.end_offsets("sink-alo").values()) == 2000
    (report,) = list(tmp_path.glob("write-*.json"))
    assert {t["transactional_id"] for t in json.loads(report.read_text())["tasks"]} == {None}
