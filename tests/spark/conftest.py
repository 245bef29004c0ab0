"""Fixtures of the Spark tests: one local SparkSession for the whole session, brokers that
checkpoint their high watermarks every 100 ms, and confluent-kafka helpers (the oracle).

Spark's Python workers are other processes started by the JVM: they find kafkapy and
pyspark_kafkapy through PYTHONPATH, set here before the JVM starts (it hands its environment
on). ``format("kafkapy-log")`` then works with no ``register()`` call: Spark's own lookup of
top-level ``pyspark_*`` modules finds pyspark_kafkapy, so every Spark test also tests that.
(An editable install does not make pyspark_kafkapy visible to that lookup, which lists
directories on sys.path only: hence the explicit path, installed or not.)

Data is produced through a real kafkapy broker; reads wait until the broker's
``replication-offset-checkpoint`` covers it (``wait_for_checkpoint``), the only committed bound
the data source reads, with the broker still running.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.log.checkpoints import REPLICATION_OFFSET_CHECKPOINT, read_offsets
from kafkapy.testing import BrokerHandle

ROOT = Path(__file__).resolve().parents[2]
SPARK_INTEGRATION = ROOT / "spark_integration"
if str(SPARK_INTEGRATION) not in sys.path:
    sys.path.insert(0, str(SPARK_INTEGRATION))

TIMEOUT = 20.0
# A broker whose HW checkpoint follows the data quickly, and whose transaction coordinator
# starts fast.
BROKER_CONFIG = {"replica.high.watermark.checkpoint.interval.ms": "100",
                 "transaction.state.log.num.partitions": "3",
                 "offsets.topic.num.partitions": "3",
                 "log.retention.check.interval.ms": "200",
                 "log.segment.delete.delay.ms": "100"}

Row = tuple[Any, ...]     # topic, partition, offset, key, value, timestamp us, type, headers


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    saved = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON",
                                            "PYTHONPATH")}
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(SPARK_INTEGRATION), *filter(None, [saved["PYTHONPATH"]])])
    session = (SparkSession.builder.master("local[2]").appName("kafkapy-spark-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.memory", "512m")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    """One broker per test module (topics named per test)."""
    with BrokerHandle(tmp_path_factory.mktemp("spark-log"), BROKER_CONFIG) as handle:
        yield handle


# --------------------------------------------------------------------------------- helpers

def wait_for_checkpoint(broker: BrokerHandle, topics: Sequence[str]) -> dict[TopicPartition,
                                                                              int]:
    """Wait until replication-offset-checkpoint holds every partition's current high
    watermark; returns them."""
    want = {TopicPartition(t, p): hw for t in topics for p, hw in broker.end_offsets(t).items()}
    path = broker.data_dir / REPLICATION_OFFSET_CHECKPOINT
    deadline = time.monotonic() + TIMEOUT
    while True:
        have = read_offsets(path)
        if all(have.get(tp, -1) >= hw for tp, hw in want.items()):
            return want
        if time.monotonic() > deadline:
            raise AssertionError(f"HW checkpoint {have} does not reach {want}")
        time.sleep(0.05)


class Producer(confluent_kafka.Producer):
    """A confluent-kafka producer that keeps its failed deliveries (``flush`` checks)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.failed: list[Any] = []
        super().__init__({**config, "on_delivery": self._delivered})

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.failed.append(err)


def producer(broker: BrokerHandle, **config: Any) -> Producer:
    return Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 5,
                     "log_level": 0, **{k.replace("_", "."): v for k, v in config.items()}})


def flush(p: Producer) -> None:
    assert p.flush(TIMEOUT) == 0, "messages not delivered"
    assert not p.failed, f"deliveries failed: {p.failed}"


def consume(broker: BrokerHandle, topic: str, *, isolation: str = "read_uncommitted",
            partitions: Sequence[int] | None = None) -> list[Row]:
    """Every record of ``topic`` as a confluent-kafka consumer reads it (from the beginning
    to the end offset for ``isolation``), as rows comparable with the data source's."""
    parts = list(partitions if partitions is not None else broker.end_offsets(topic))
    return consume_from(broker.bootstrap_servers, topic, parts, isolation=isolation)


def consume_from(bootstrap: str, topic: str, parts: Sequence[int], *,
                 isolation: str = "read_uncommitted") -> list[Row]:
    """``consume`` through any brokers (a cluster's): partitions ``parts`` of ``topic``."""
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": "spark-oracle",
        "enable.auto.commit": False, "isolation.level": isolation, "log_level": 3,
        "fetch.wait.max.ms": 50})
    try:
        ends = {p: consumer.get_watermark_offsets(confluent_kafka.TopicPartition(topic, p),
                                                  timeout=TIMEOUT, cached=False)[1]
                for p in parts}
        consumer.assign([confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                         for p in parts])
        out: list[Row] = []
        deadline = time.monotonic() + TIMEOUT

        def done() -> bool:
            positions = consumer.position([confluent_kafka.TopicPartition(topic, p)
                                           for p in parts])
            return all(tp.offset >= ends[tp.partition] or ends[tp.partition] == 0
                       for tp in positions)

        while not done():
            assert time.monotonic() < deadline, f"consumer stuck: {len(out)} rows"
            m = consumer.poll(0.1)
            if m is None:
                continue
            if m.error():
                raise confluent_kafka.KafkaException(m.error())
            ts_type, ts = m.timestamp()
            out.append((m.topic(), m.partition(), m.offset(), m.key(), m.value(), ts * 1000,
                        0 if ts_type == confluent_kafka.TIMESTAMP_CREATE_TIME else 1,
                        list(m.headers()) if m.headers() else None))
        return sorted(out, key=lambda r: (r[0], r[1], r[2]))
    finally:
        consumer.close()


def spark_rows(df: Any) -> list[Row]:
    """The data source's rows, timestamps as exact microseconds, in consumer order."""
    cols = ["topic", "partition", "offset", "key", "value", "unix_micros(timestamp) AS ts",
            "timestampType"]
    if "headers" in df.columns:
        cols.append("headers")
    out = []
    for r in df.selectExpr(*cols).collect():
        row = (r.topic, r.partition, r.offset, _b(r.key), _b(r.value), r.ts, r.timestampType)
        if "headers" in df.columns:
            row += (None if r.headers is None else [(h.key, _b(h.value)) for h in r.headers],)
        out.append(row)
    return sorted(out, key=lambda r: (r[0], r[1], r[2]))


def _b(v: Any) -> bytes | None:
    return None if v is None else bytes(v)


def read(spark: Any, broker: BrokerHandle, options: Mapping[str, str], schema: str | None = None
         ) -> Any:
    reader = spark.read.format("kafkapy-log")
    if schema is not None:
        reader = reader.schema(schema)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(broker.data_dir))
