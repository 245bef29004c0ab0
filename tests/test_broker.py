"""kafkapy.Broker, embedded: from sync code (a background thread) and from Trio code (``async
with``), with a real client talking to it; a clean stop; a start failure raised to the caller;
the data directory kept when given."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
import trio
from confluent_kafka import Consumer, Producer, TopicPartition

import kafkapy
from kafkapy.common.topic_partition import TopicPartition as TP
from kafkapy.log.checkpoints import CLEAN_SHUTDOWN_FILE


def round_trip(bootstrap: str, topic: str, values: list[bytes]) -> list[bytes]:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for v in values:
        producer.produce(topic, v)
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[bytes] = []
    deadline = time.monotonic() + 10
    while len(got) < len(values) and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            got.append(msg.value())
    consumer.close()
    return got


def test_sync_use_in_a_thread(tmp_path: Path) -> None:
    started = time.monotonic()
    with kafkapy.Broker(data_dir=tmp_path) as broker:
        startup = time.monotonic() - started
        host, port = broker.bootstrap_servers.split(":")
        assert host == "127.0.0.1" and int(port) == broker.port > 0
        assert round_trip(broker.bootstrap_servers, "sync", [b"a", b"b"]) == [b"a", b"b"]
    # Well under a second (generous here: the machine is shared with other tests).
    assert startup < 5
    assert (tmp_path / CLEAN_SHUTDOWN_FILE).exists()        # a controlled shutdown
    with kafkapy.Broker(data_dir=tmp_path) as again:        # the data is still there
        partition = TP("sync", 0)
        assert again.call(lambda: again.server.replica_manager.get_partition(
            partition).log_end_offset) == 2


def test_async_use_from_trio() -> None:
    async def main() -> list[bytes]:
        async with kafkapy.Broker(message_max_bytes=2_000_000) as broker:
            assert broker.server.config.message_max_bytes == 2_000_000
            return await trio.to_thread.run_sync(
                round_trip, broker.bootstrap_servers, "async", [b"x"])
    assert trio.run(main) == [b"x"]


def test_a_start_failure_is_raised_and_cleans_up() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        broker = kafkapy.Broker(port=taken.getsockname()[1])
        tmp = broker.data_dir
        with pytest.raises(OSError):
            broker.start()
    assert not tmp.exists()          # its temporary data dir is gone
    with pytest.raises(RuntimeError, match="not running"):
        _ = broker.bootstrap_servers
