"""Replication quotas on a 3-broker ``kafkapy.Cluster`` (ZooKeeper mode, module-scoped): a
reassignment adding a replica, started with ``kafkapy reassign-partitions --execute
--throttle``, copies the topic no faster than the throttle (the new replica's log measured
on disk while it catches up), completes, ``--verify`` then removes the throttles, and every
record acked with acks=all before, during and after is there, on both replicas.

Timing: the asserts are generous bounds around the throttle (the catch-up takes at least 0.7x
bytes / rate; the observed rate stays within 2x of it), never a tight timing; every wait is
bounded."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource

import kafkapy
from kafkapy.cluster import Cluster
from tests.tools.support import Run, run_tool

WAIT_S = 60.0
RATE = 100_000                  # bytes per second
RECORD = 1000
BEFORE = 1200                   # ~1.2 MB to copy: ~12 s at RATE
SETTINGS = {"offsets.topic.num.partitions": 1, "auto.leader.rebalance.enable": "false",
            "default.replication.factor": 1,
            # small fetches, so that the throttle shows as a rate and not as one big burst
            # followed by a long wait (as Kafka advises for replication quotas)
            "replica.fetch.max.bytes": 65536}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with kafkapy.Cluster(3, SETTINGS, timeout=WAIT_S) as c:
        c.create_topic("q", {0: [1]})
        c.wait_for_leader("q", 0, timeout=WAIT_S)
        yield c


def reassign(c: Cluster, *args: str) -> Run:
    return run_tool("reassign-partitions", "--bootstrap-server", c.bootstrap_servers, *args)


def produce(c: Cluster, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": c.bootstrap_servers, "acks": "all",
                         "linger.ms": 5, "compression.type": "none"})
    acked: list[bytes] = []

    def delivered(err: object, msg: object) -> None:
        assert err is None, err
        acked.append(msg.value())                   # type: ignore[attr-defined]

    for value in values:
        producer.produce("q", value, partition=0, on_delivery=delivered)
        producer.poll(0)
    assert producer.flush(WAIT_S) == 0
    assert acked == values


def log_bytes(c: Cluster, broker: int) -> int:
    directory = c.dir / f"broker-{broker}" / "q-0"
    return sum(p.stat().st_size for p in directory.glob("*.log")) if directory.exists() else 0


def describe(admin: AdminClient, resource: ConfigResource) -> dict[str, str | None]:
    entries = admin.describe_configs([resource])[resource].result(timeout=WAIT_S)
    return {name: entry.value for name, entry in entries.items()}


def test_throttled_reassignment(cluster: Cluster, tmp_path: Path) -> None:
    before = [os.urandom(RECORD) for _ in range(BEFORE)]     # incompressible
    produce(cluster, before)
    total = log_bytes(cluster, 1)
    assert total >= BEFORE * RECORD

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "q", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]}]}))
    executed = reassign(cluster, "--execute", "--reassignment-json-file", str(plan),
                        "--throttle", str(RATE))
    started = time.monotonic()
    assert (executed.code, executed.err) == (0, []), executed
    assert executed.out[-2:] == [f"The inter-broker throttle limit was set to {RATE} B/s",
                                 "Successfully started partition reassignment for q-0"]

    # acked while the new replica is behind (it is not in the ISR yet)
    during = [os.urandom(RECORD) for _ in range(20)]
    produce(cluster, during)
    # still moving: --verify says so and leaves the throttles alone
    verified = reassign(cluster, "--verify", "--reassignment-json-file", str(plan))
    assert verified.out == ["Status of partition reassignment:",
                            "Reassignment of partition q-0 is still in progress."]

    # the new replica's log on disk, sampled until it holds what the leader has
    samples: list[tuple[float, int]] = []
    deadline = started + WAIT_S
    while True:
        now, size = time.monotonic(), log_bytes(cluster, 2)
        samples.append((now, size))
        if size >= log_bytes(cluster, 1):
            break
        assert now < deadline, samples[-5:]
        time.sleep(0.25)
    copied = samples[-1][1]
    elapsed = samples[-1][0] - started
    expected = copied / RATE
    assert elapsed >= 0.7 * expected, (elapsed, expected)
    observed = copied / elapsed
    print(f"copied {copied} B in {elapsed:.1f} s: {observed:.0f} B/s at a throttle of "
          f"{RATE} B/s")
    assert RATE / 4 <= observed <= 2 * RATE, observed
    # no stretch of 4 s or more went faster than twice the throttle either
    for i, (t0, s0) in enumerate(samples):
        for t1, s1 in samples[i + 1:]:
            if t1 - t0 >= 4.0:
                assert (s1 - s0) / (t1 - t0) <= 2 * RATE, (t0 - started, t1 - started)
                break

    cluster.wait_for_isr("q", 0, 2, timeout=WAIT_S)
    deadline = time.monotonic() + WAIT_S
    while True:
        verified = reassign(cluster, "--verify", "--reassignment-json-file", str(plan))
        if "Reassignment of partition q-0 is completed." in verified.out:
            break
        assert time.monotonic() < deadline, verified.out
        time.sleep(0.5)
    assert verified.out == ["Status of partition reassignment:",
                            "Reassignment of partition q-0 is completed.",
                            "Clearing broker-level throttles on brokers 1,2,3",
                            "Clearing topic-level throttles on topic q"]
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    # a topic's DescribeConfigs may go to a broker the change notification has not reached
    # yet (ZooKeeper): bounded wait
    throttled = ("leader.replication.throttled.replicas",
                 "follower.replication.throttled.replicas")
    cleared_by = time.monotonic() + WAIT_S
    while any((topic := describe(admin, ConfigResource("TOPIC", "q")))[name]
              for name in throttled):
        assert time.monotonic() < cleared_by, topic
        time.sleep(0.1)
    assert [topic[name] for name in throttled] == ["", ""]
    for broker in ("1", "2"):
        configs = describe(admin, ConfigResource("BROKER", broker))
        assert configs["leader.replication.throttled.rate"] == str(2**63 - 1)
        assert configs["follower.replication.throttled.rate"] == str(2**63 - 1)

    # unthrottled now: acks=all waits for both replicas
    after = [os.urandom(RECORD) for _ in range(50)]
    produce(cluster, after)
    assert set(cluster.isr_of("q", 0)) == {1, 2}
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "rq",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition("q", 0, 0)])
    read: list[bytes] = []
    wanted = before + during + after
    deadline = time.monotonic() + WAIT_S
    try:
        while len(read) < len(wanted):
            assert time.monotonic() < deadline, len(read)
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                read.append(msg.value())
    finally:
        consumer.close()
    assert read == wanted
    # the follower holds the leader's batches byte for byte
    cluster.wait_until(lambda: log_bytes(cluster, 2) == log_bytes(cluster, 1) or None,
                       "the follower's log to match the leader's", WAIT_S)


def configs(c: Cluster, *args: str) -> Run:
    return run_tool("configs", "--bootstrap-server", c.bootstrap_servers, *args)


def test_in_sync_replicas_are_never_throttled(cluster: Cluster) -> None:
    """Kafka's shouldLeaderThrottle / shouldFollowerThrottle: a tiny throttle on every replica
    of a topic does not slow an in-sync follower, so
    acks=all keeps being answered and the ISR keeps both replicas."""
    cluster.create_topic("s", {0: [1, 2]})
    cluster.wait_for_leader("s", 0, timeout=WAIT_S)
    cluster.wait_for_isr("s", 0, 2, timeout=WAIT_S)
    for broker in ("1", "2"):
        set_rates = configs(cluster, "--entity-type", "brokers", "--entity-name", broker,
                            "--alter", "--add-config", "leader.replication.throttled.rate=1000,"
                            "follower.replication.throttled.rate=1000")
        assert set_rates.code == 0, set_rates
    set_replicas = configs(cluster, "--entity-type", "topics", "--entity-name", "s", "--alter",
                           "--add-config", "leader.replication.throttled.replicas=*,"
                           "follower.replication.throttled.replicas=*")
    assert set_replicas.code == 0, set_replicas
    try:
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                             "linger.ms": 5, "compression.type": "none"})
        # 20 rounds of 10 KB, each acked by both replicas before the next is sent (one
        # big batch would go in the first fetch, before any quota is exceeded): 200 s of
        # the throttle. Unthrottled it takes a few seconds; the bound is generous.
        begun = time.monotonic()
        for _ in range(20):
            for _ in range(10):
                producer.produce("s", os.urandom(RECORD), partition=0)
            assert producer.flush(WAIT_S) == 0
            assert set(cluster.isr_of("s", 0)) == {1, 2}
        took = time.monotonic() - begun
        assert took < WAIT_S, f"{took:.0f} s: the in-sync follower was throttled"
        cluster.wait_until(lambda: (log_bytes_of(cluster, 2, "s") ==
                                    log_bytes_of(cluster, 1, "s") or None),
                           "the follower's log to match the leader's", WAIT_S)
    finally:
        for broker in ("1", "2"):
            configs(cluster, "--entity-type", "brokers", "--entity-name", broker, "--alter",
                    "--delete-config", "leader.replication.throttled.rate,"
                    "follower.replication.throttled.rate")


def log_bytes_of(c: Cluster, broker: int, topic: str) -> int:
    directory = c.dir / f"broker-{broker}" / f"{topic}-0"
    return sum(p.stat().st_size for p in directory.glob("*.log")) if directory.exists() else 0
