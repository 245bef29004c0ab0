"""What the producing and consuming tools' tests share: a module's broker with its topics
made, and a topic's records read back with confluent-kafka (to check what a tool wrote)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kafkapy

WAIT_S = 30.0
# Kafka's tools' log line: "[2026-01-01 12:00:00,123] ERROR message (logger)"
LOG_LINE = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (\w+) (.*)$")


@attrs.frozen
class Record:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp: tuple[int, int]


def broker(data_dir: Path, topics: dict[str, int],
           configs: dict[str, dict[str, str]] | None = None) -> Iterator[str]:
    """A broker with these topics (name -> partitions): yields its bootstrap servers. Groups
    rebalance at once (no ``group.initial.rebalance.delay.ms``): each subscribing tool run
    would otherwise wait 3 s to join."""
    with kafkapy.Broker({"group.initial.rebalance.delay.ms": "0"},
                        data_dir=data_dir) as running:
        bs = running.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bs})
        new = [NewTopic(name, n, 1, config=(configs or {}).get(name, {}))
               for name, n in topics.items()]
        for future in admin.create_topics(new).values():
            future.result(WAIT_S)
        yield bs


def read_topic(bs: str, topic: str, partitions: int, count: int) -> list[Record]:
    """The first ``count`` records of the topic, by partition then offset; fails when fewer
    arrive within WAIT_S."""
    consumer = Consumer({"bootstrap.servers": bs, "group.id": "test-reader",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    found: list[Record] = []
    deadline = time.monotonic() + WAIT_S
    try:
        while len(found) < count and time.monotonic() < deadline:
            for msg in consumer.consume(count - len(found), 1.0):
                if msg.error() is None:
                    found.append(Record(msg.partition(), msg.offset(), msg.key(), msg.value(),
                                        list(msg.headers() or []), msg.timestamp()))
    finally:
        consumer.close()
    assert len(found) == count, f"{len(found)} of {count} records of {topic}"
    return sorted(found, key=lambda r: (r.partition, r.offset))


def end_offsets(bs: str, topic: str, partitions: int) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bs, "group.id": "test-offsets"})
    try:
        return [consumer.get_watermark_offsets(TopicPartition(topic, p), WAIT_S)[1]
                for p in range(partitions)]
    finally:
        consumer.close()


def log_messages(err: list[str]) -> list[tuple[str, str]]:
    """(level, message) of the Kafka-style log lines; other lines as ("", line)."""
    out = []
    for line in err:
        match = LOG_LINE.match(line)
        out.append((match.group(1), match.group(2)) if match else ("", line))
    return out
