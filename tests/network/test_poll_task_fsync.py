"""A Produce that waits for its fsync (``flush.messages``) is its own connection's wait: the
socket server's poll task, which serves every PLAINTEXT connection, goes on answering the
others meanwhile (as a Kafka handler thread blocked in a flush holds back only itself).

The fsync is made slow on purpose (the log manager's flush waits for the test's release, in
a worker thread as the real fsync runs); clients are real confluent-kafka ones."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from kafkapy.log.log import Log
from kafkapy.log.log_manager import LogManager

TIMEOUT = 30.0


def test_a_produce_waiting_for_its_fsync_holds_back_no_other_connection(
        kafka_broker_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    release, flushing = threading.Event(), threading.Event()
    original = LogManager.flush_log

    async def slow_flush(self: LogManager, log: Log, upto: int | None = None) -> None:
        if log.topic_partition.topic == "fsynced":
            flushing.set()
            await trio.to_thread.run_sync(release.wait, TIMEOUT)
        await original(self, log, upto)

    monkeypatch.setattr(LogManager, "flush_log", slow_flush)
    broker = kafka_broker_factory(num_partitions=1)
    broker.create_topic("fsynced", 1, config={"flush.messages": "1"})
    delivered: list[object] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": 1,
                         "message.timeout.ms": int(TIMEOUT * 1000)})
    try:
        producer.produce("fsynced", b"durable", on_delivery=lambda e, m: delivered.append(e))
        producer.poll(0)
        assert flushing.wait(TIMEOUT), "the produce never reached its flush"
        # Its fsync is pending: another connection is answered all the same.
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        topics = admin.list_topics(timeout=10).topics
        assert "fsynced" in topics
        producer.poll(0.2)
        assert delivered == [], "acknowledged before its fsync"
    finally:
        release.set()
    assert producer.flush(TIMEOUT) == 0
    assert delivered == [None]
    assert [r.value for r in broker.read_all("fsynced")] == [b"durable"]
