"""End-to-end harness: a kafkapy broker in its own process, driven by confluent-kafka.

    PYTHONPATH=. python benchmarks/e2e_harness.py [--messages N] [--size BYTES] [--rounds R]

Measures, against a broker started fresh in a child process (its own interpreter, so the
client's work does not share the broker's GIL):

- produce MB/s: N messages of SIZE bytes (random, incompressible) from one confluent-kafka
  Producer (acks=all, linger.ms=5, batch.size 1 MiB, no compression) into a 1-partition topic,
  timed from the first produce() to the end of flush();
- fetch MB/s: one Consumer (assign, from offset 0, fetch.max.bytes 50 MiB) reading all N back;
- produce-to-consume latency: 2,000 messages sent one at a time (acks=1, linger.ms=0) while a
  consumer long-polls (fetch.wait.max.ms=500); latency = receive time - send time in the same
  process (perf_counter carried in the value); p50 and p99.

Each figure is the median over ``--rounds`` rounds (fresh topic each round); every round's
value is printed too, since the machines are small and noisy. Prints a table for
docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import json, sys, kafkapy
with kafkapy.Broker(config=json.loads(sys.argv[2]), data_dir=sys.argv[1]) as b:
    print(b.bootstrap_servers, flush=True)
    sys.stdin.read()
"""


class BrokerProcess:
    """``with BrokerProcess(config) as bootstrap:`` a broker in a child process with Kafka
    settings ``config`` (default: one partition per new topic), stopped (cleanly, by closing
    its stdin) on exit."""

    def __init__(self, config: dict[str, str] | None = None) -> None:
        self.config = {"num.partitions": "1"} if config is None else config

    def __enter__(self) -> str:
        self._tmp = tempfile.TemporaryDirectory(prefix="kafkapy-e2e-")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, self._tmp.name, json.dumps(self.config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line:
            raise RuntimeError("the broker did not start")
        return line

    def __exit__(self, *exc: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self._tmp.cleanup()


def produce_round(bootstrap: str, topic: str, count: int, payload: bytes) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                         "batch.size": 1 << 20, "queue.buffering.max.kbytes": 1 << 20,
                         "compression.type": "none"})
    producer.produce(topic, b"warm-up")      # metadata and connection before the clock
    producer.flush(30)
    failures = []

    def report(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    started = time.perf_counter()
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, payload, on_delivery=report)
                break
            except BufferError:
                producer.poll(0.01)
    left = producer.flush(120)
    elapsed = time.perf_counter() - started
    if left or failures:
        raise RuntimeError(f"{left} undelivered, {len(failures)} failed: {failures[:3]}")
    return elapsed


def fetch_round(bootstrap: str, topic: str, count: int) -> tuple[float, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "e2e",
                         "enable.auto.commit": False, "fetch.max.bytes": 50 << 20,
                         "max.partition.fetch.bytes": 10 << 20, "fetch.wait.max.ms": 100})
    consumer.assign([TopicPartition(topic, 0, 1)])       # skip the warm-up message
    got = size = 0
    started = time.perf_counter()
    deadline = started + 120
    while got < count and time.perf_counter() < deadline:
        for msg in consumer.consume(10_000, 1.0):
            if msg.error():
                raise RuntimeError(str(msg.error()))
            got += 1
            size += len(msg.value())
    elapsed = time.perf_counter() - started
    consumer.close()
    if got != count:
        raise RuntimeError(f"read {got} of {count} messages")
    return elapsed, size


def latency_round(bootstrap: str, topic: str, count: int) -> list[float]:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 0})
    producer.produce(topic, struct.pack(">d", 0.0))
    producer.flush(30)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "lat",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 500,
                         "fetch.min.bytes": 1})
    consumer.assign([TopicPartition(topic, 0, 1)])
    consumer.poll(0.5)             # connected and long-polling before the first send
    latencies = []
    for _ in range(count):
        producer.produce(topic, struct.pack(">d", time.perf_counter()))
        producer.poll(0)
        while True:
            msg = consumer.poll(5.0)
            if msg is None:
                raise RuntimeError("a message did not arrive within 5 s")
            if msg.error():
                raise RuntimeError(str(msg.error()))
            latencies.append(time.perf_counter() - struct.unpack(">d", msg.value())[0])
            break
    producer.flush(10)
    consumer.close()
    return latencies


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--latency-messages", type=int, default=2000)
    args = ap.parse_args(argv)
    payload = os.urandom(args.size)
    produce_mbs, fetch_mbs, p50s, p99s = [], [], [], []
    with BrokerProcess() as bootstrap:
        for r in range(args.rounds):
            topic = f"e2e-{r}"
            seconds = produce_round(bootstrap, topic, args.messages, payload)
            produce_mbs.append(args.messages * args.size / seconds / 1e6)
            seconds, size = fetch_round(bootstrap, topic, args.messages)
            fetch_mbs.append(size / seconds / 1e6)
            lat = sorted(latency_round(bootstrap, f"lat-{r}", args.latency_messages))
            p50s.append(lat[len(lat) // 2] * 1000)
            p99s.append(lat[int(len(lat) * 0.99)] * 1000)
    def row(name: str, values: list[float], unit: str) -> None:
        print(f"  {name:<42} {statistics.median(values):9.2f} {unit:<5} rounds: "
              + ", ".join(f"{v:.2f}" for v in values))
    print(f"kafkapy end to end, confluent-kafka, {args.messages:,} x {args.size} B messages, "
          f"{args.rounds} rounds (median):")
    row("produce (acks=all, linger 5 ms)", produce_mbs, "MB/s")
    row("fetch (consumer, assign, from 0)", fetch_mbs, "MB/s")
    row(f"produce-to-consume latency p50 ({args.latency_messages:,} msgs)", p50s, "ms")
    row("produce-to-consume latency p99", p99s, "ms")


if __name__ == "__main__":
    main()
