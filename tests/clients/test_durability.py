"""What a broker acknowledged survives it: a clean stop and restart, and a ``kill -9``.

- Clean: produce with real clients, stop the broker, start a new one on the same data
  directory: the same records at the same offsets (read from the log and by a consumer),
  the same topics, topic ids and configs, timestamp lookups still answer, and new records
  continue the offsets. ``BrokerHandle.restart`` keeps the port, so a producer created before
  the restart carries on after it.
- Crash: the broker runs in a child process (``kill_child.py``); a confluent-kafka producer
  with acks=all and no retries writes as fast as it can and records every acknowledged
  (key, partition, offset); the child is killed with SIGKILL while requests are in flight.
  Twice (the second run recovers the first crash, appends, and is killed too). A broker
  started on the directory then holds every acknowledged record exactly once at its
  acknowledged offset, no record twice, no gap in the offsets, and takes new records after
  them.
"""

from __future__ import annotations

import collections
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import confluent_kafka

from kafkapy.testing import BrokerFactory, BrokerHandle
from tests.clients.client_support import (
    Msg,
    consume_confluent,
    expected,
    produce_confluent,
    produce_kafka_python,
)

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("kill_child.py")
T0 = 1_700_000_000_000


# ============================================================================ clean restart


def test_data_survives_a_clean_restart(kafka_broker_factory: BrokerFactory,
                                       tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = kafka_broker_factory(data_dir=data_dir)
    first.create_topic("orders", partitions=3, config={"retention.ms": "86400000",
                                                        "max.message.bytes": "500000"})
    first.create_topic("append-time", config={"message.timestamp.type": "LogAppendTime"})
    msgs = {p: [Msg(b"p%d-%d" % (p, i), b"v" * (i * 37 % 500), [("i", b"%d" % i)],
                    T0 + 10 * i) for i in range(200)] for p in range(3)}
    assert produce_confluent(first.bootstrap_servers, "orders", msgs[0], partition=0,
                             compression="zstd") == list(range(200))
    assert produce_kafka_python(first.bootstrap_servers, "orders", msgs[1], partition=1,
                                compression="gzip") == list(range(200))
    assert produce_confluent(first.bootstrap_servers, "orders", msgs[2], partition=2) == \
        list(range(200))
    assert produce_confluent(first.bootstrap_servers, "auto-created",
                             [Msg(b"k", b"auto", [], T0)]) == [0]
    first.produce("append-time", b"stamped by the broker")

    before = {topic: first.read_all(topic) for topic in first.topics()}
    offsets = {topic: first.end_offsets(topic) for topic in first.topics()}
    topics = first.topics()
    configs = {topic: first.topic_config(topic) for topic in topics}
    ids = {name: r.topic_id for name, r in first.server.metadata_store.topics.items()}
    first.stop()

    second = kafka_broker_factory(data_dir=data_dir)
    assert second.topics() == topics == {"orders": 3, "auto-created": 1, "append-time": 1}
    assert {t: second.topic_config(t) for t in topics} == configs
    assert {n: r.topic_id for n, r in second.server.metadata_store.topics.items()} == ids
    assert {t: second.end_offsets(t) for t in topics} == offsets
    assert {t: second.read_all(t) for t in topics} == before
    [stamped] = before["append-time"]
    assert stamped.timestamp_type == 1 and stamped.timestamp > T0

    # A consumer reads them back from the new broker, from the middle of a zstd batch.
    assert consume_confluent(second.bootstrap_servers, "orders", 150, partition=0,
                             start=50) == expected(msgs[0], range(200))[50:]
    # The time index survived: lookups by timestamp still answer.
    consumer = confluent_kafka.Consumer({"bootstrap.servers": second.bootstrap_servers,
                                         "group.id": "durability"})
    try:
        [found] = consumer.offsets_for_times(
            [confluent_kafka.TopicPartition("orders", 1, T0 + 995)], timeout=5)
        assert found.offset == 100
    finally:
        consumer.close()
    # New records continue the offsets.
    assert produce_confluent(second.bootstrap_servers, "orders",
                             [Msg(b"after", b"restart", [], T0)], partition=2) == [200]


def test_restart_keeps_the_port_for_connected_clients(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("restart")
    producer = confluent_kafka.Producer({"bootstrap.servers": kafka_broker.bootstrap_servers,
                                         "linger.ms": 0, "message.timeout.ms": 10000})
    delivered: list[tuple[object, int | None]] = []

    def report(err: object, msg: confluent_kafka.Message) -> None:
        delivered.append((err, msg.offset()))

    bootstrap = kafka_broker.bootstrap_servers
    producer.produce("restart", b"before", partition=0, on_delivery=report)
    assert producer.flush(5) == 0
    kafka_broker.restart()
    assert kafka_broker.bootstrap_servers == bootstrap
    producer.produce("restart", b"after", partition=0, on_delivery=report)
    assert producer.flush(10) == 0
    assert delivered == [(None, 0), (None, 1)]
    assert [r.value for r in kafka_broker.read_all("restart")] == [b"before", b"after"]


# ==================================================================================== crash


class ChildBroker:
    """``kill_child.py`` in a subprocess: its bootstrap address once it serves."""

    def __init__(self, data_dir: Path, settings: dict[str, str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, str(CHILD), str(data_dir), json.dumps(settings)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=ROOT)
        self.bootstrap = self._read_bootstrap(timeout=30)

    def _read_bootstrap(self, timeout: float) -> str:
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self.process.stdout, selectors.EVENT_READ)
            if not sel.select(timeout):
                self.kill()
                raise AssertionError(f"the child broker did not start within {timeout} s")
        line = self.process.stdout.readline().decode()
        if not line.startswith("bootstrap "):
            self.kill()
            raise AssertionError(f"the child broker said {line!r} "
                                 f"(exit code {self.process.poll()})")
        return line.split()[1]

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, no checkpoint."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


Acked = dict[bytes, tuple[int, int]]      # key -> (partition, offset)


def produce_until_killed(child: ChildBroker, topic: str, first_key: int, acks_before_kill: int
                         ) -> Acked:
    """Produce (acks=all, no retries, so nothing is written twice) until
    ``acks_before_kill`` records are acknowledged, kill the child with more in flight, and
    return every acknowledged record."""
    acked: Acked = {}
    failed = 0

    def report(err: object, msg: confluent_kafka.Message) -> None:
        nonlocal failed
        if err is None:
            offset = msg.offset()
            assert offset is not None and offset >= 0
            acked[msg.key()] = (msg.partition(), offset)
        else:
            failed += 1

    producer = confluent_kafka.Producer({
        "bootstrap.servers": child.bootstrap, "acks": "all", "linger.ms": 1,
        "enable.idempotence": False, "message.send.max.retries": 0,
        "message.timeout.ms": 5000, "queue.buffering.max.messages": 100000})
    i = first_key
    killed_at = None
    unacknowledged_at_kill = 0
    try:
        deadline = time.monotonic() + 60
        while killed_at is None or i < killed_at + 500:
            assert time.monotonic() < deadline, f"only {len(acked)} acks in 60 s"
            producer.produce(topic, b"value of %d " % i * (1 + i % 20), b"key-%d" % i,
                             partition=i % 2, on_delivery=report)
            i += 1
            producer.poll(0)
            if killed_at is None and len(acked) >= acks_before_kill and len(producer):
                # Mid-stream: produced records not yet acknowledged (in flight or queued);
                # a producer that has just caught up produces on until it has some again.
                unacknowledged_at_kill = len(producer)
                child.kill()
                killed_at = i
        # Take the acknowledgements the client still has; the rest can never be acked.
        producer.flush(0.5)
    finally:
        producer.purge()
        producer.flush(1)
    assert len(acked) >= acks_before_kill
    assert unacknowledged_at_kill > 0, "nothing was in flight at the kill"
    assert failed > 0
    return acked


def test_acknowledged_records_survive_kill_9(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    # Small segments: the crash hits a log of many segments and indexes to recover.
    settings = {"num.partitions": "2", "log.segment.bytes": "65536",
                "log.index.interval.bytes": "512"}
    topic = "crash"
    acked: Acked = {}
    for round_, first_key in enumerate((0, 1_000_000)):
        child = ChildBroker(data_dir, settings)
        try:
            acked.update(produce_until_killed(child, topic, first_key, acks_before_kill=1500))
        finally:
            child.kill()
        assert child.process.returncode == -signal.SIGKILL, f"round {round_}"

    with BrokerHandle(data_dir, settings) as broker:
        records = broker.read_all(topic)
        by_position = {(r.partition, r.offset): r for r in records}
        # Every acknowledged record, at its acknowledged offset...
        missing = {k: at for k, at in acked.items()
                   if at not in by_position or by_position[at].key != k}
        assert not missing, f"{len(missing)} acknowledged records lost, e.g. " \
                            f"{sorted(missing.items())[:5]}"
        for key, (p, offset) in acked.items():
            i = int(key.split(b"-")[1])
            assert by_position[(p, offset)].value == b"value of %d " % i * (1 + i % 20)
        # ... exactly once (no record at all is there twice), with no gap in the offsets.
        counts = collections.Counter(r.key for r in records)
        assert [k for k, n in counts.items() if n > 1] == []
        ends = broker.end_offsets(topic)
        for p in (0, 1):
            assert [r.offset for r in records if r.partition == p] == list(range(ends[p]))
        # And the recovered log takes new records after the old ones.
        assert produce_confluent(broker.bootstrap_servers, topic,
                                 [Msg(b"after", b"recovery", [], T0)], partition=0) == \
            [ends[0]]

