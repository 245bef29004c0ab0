"""kcat's balanced consumer (``-G``, librdkafka's KafkaConsumer) against kafkapy's group
coordinator.

kcat in ``-G`` mode subscribes, auto-stores the offset of every message it hands out and
commits the stored offsets when it closes (librdkafka's ``enable.auto.commit``); ``-o`` would
override the committed offsets on every assignment (kcat's rebalance_cb), so these runs start
from ``auto.offset.reset=earliest`` instead. ``-c N`` exits after N messages, ``-e`` once
every assigned partition is at its end.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from kafkapy.testing import BrokerHandle

pytestmark = pytest.mark.timeout(120)

FAST_GROUPS = {"group.initial.rebalance.delay.ms": "0",
               "group.min.session.timeout.ms": "1000",
               "offsets.topic.num.partitions": "3"}


@pytest.fixture(scope="module")
def kcat() -> str:
    path = shutil.which("kcat")
    if path is None:
        pytest.fail("kcat is not installed: `apt-get install -y kcat` (Debian/Ubuntu); "
                    "./dev test installs it (./dev check-deps lists what is missing)")
    return path


def consume_as_group(kcat: str, broker: BrokerHandle, group: str, topic: str,
                     *args: str) -> list[dict[str, object]]:
    """One kcat -G run; its JSON records (fails with kcat's stderr on a non-zero exit)."""
    result = subprocess.run(
        [kcat, "-b", broker.bootstrap_servers, "-G", group, "-J", "-q",
         "-X", "auto.offset.reset=earliest", "-X", "session.timeout.ms=6000",
         "-X", "heartbeat.interval.ms=500", *args, topic],
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, f"kcat -G {group}: exit {result.returncode}\n" \
                                   f"{result.stderr}"
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_kcat_group_consumes_and_next_member_resumes_after_commit(
        kcat: str, kafka_broker: BrokerHandle) -> None:
    broker = kafka_broker
    topic, group = "kcat-groups", "kcat-group"
    broker.create_topic(topic, partitions=3)
    for p in range(3):
        for i in range(10):
            broker.produce(topic, f"v{p}-{i}".encode(), key=f"k{p}-{i}".encode(), partition=p)

    first = consume_as_group(kcat, broker, group, topic, "-c", "12")
    assert len(first) == 12
    got = [(m["partition"], m["offset"]) for m in first]
    assert all(m["key"] == f"k{p}-{o}" and m["payload"] == f"v{p}-{o}" and m["topic"] == topic
               for m, (p, o) in zip(first, got, strict=True)), first
    per_partition: dict[int, list[int]] = {}
    for p, o in got:
        per_partition.setdefault(p, []).append(o)
    # From the beginning, in order, per partition.
    assert all(offsets == list(range(len(offsets))) for offsets in per_partition.values()), got
    # What kcat committed on close: the offset after the last record it printed.
    assert broker.committed_offsets(group) == {
        (topic, p): len(offsets) for p, offsets in per_partition.items()}

    second = consume_as_group(kcat, broker, group, topic, "-e")
    rest = sorted((m["partition"], m["offset"]) for m in second)
    assert rest == sorted({(p, o) for p in range(3) for o in range(10)} - set(got)), \
        f"the second member did not resume after the committed records: {rest}"
    assert broker.committed_offsets(group) == {(topic, p): 10 for p in range(3)}

    # A third run finds nothing left.
    assert consume_as_group(kcat, broker, group, topic, "-e") == []


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_kcat_new_group_reads_everything_and_groups_are_independent(
        kcat: str, kafka_broker: BrokerHandle) -> None:
    broker = kafka_broker
    topic = "kcat-groups-2"
    broker.create_topic(topic, partitions=2)
    for i in range(6):
        broker.produce(topic, b"x%d" % i, partition=i % 2)
    a = consume_as_group(kcat, broker, "group-a", topic, "-e")
    assert sorted((m["partition"], m["offset"]) for m in a) == \
        [(p, o) for p in range(2) for o in range(3)]
    # Another group has its own offsets: it reads everything again.
    b = consume_as_group(kcat, broker, "group-b", topic, "-c", "6")
    assert sorted((m["partition"], m["offset"]) for m in b) == \
        [(p, o) for p in range(2) for o in range(3)]
    assert broker.committed_offsets("group-a") == broker.committed_offsets("group-b") == \
        {(topic, 0): 3, (topic, 1): 3}
