"""Where the slowest 1% of messages sit: the ``replication_bench`` latency load, one window,
every message's send, acknowledgement and receive time kept, and the slowest 1% grouped
into bursts, each beside what the broker processes did then.

    KAFKAPY_PAUSES_DIR=/tmp/pauses PYTHONPATH=.:benchmarks/pauses \\
        python benchmarks/latency_tail.py [--side rf3|single] [--rate 2000] [--seconds 8]
        [--warm-seconds 2] [--producer linger.ms=1]

- ``rf3``: 3 brokers (``kafkapy.Cluster``, a real ZooKeeper), one partition on [1, 2, 3] led
  by broker 1, ``min.insync.replicas=2``, the producer idempotent with acks=all;
  ``single``: 1 broker, acks=1, not idempotent. linger.ms 0 unless ``--producer`` says.
- Before the window: a warm-up message, then a group consumer polls for ``--warm-seconds``
  (``__consumer_offsets`` is created then, not in the window); the measured consumer reads
  the partition from the leader (assign, fetch.wait.max.ms 500, fetch.min.bytes 1).
- Printed: p50/p99/p99.9 of receive - send and of acknowledgement - send; then each burst
  of slow messages (the slowest 1%, neighbours within 20 messages joined): when it started
  in the window, how many, the worst one. With ``KAFKAPY_PAUSES_DIR`` (and
  ``benchmarks/pauses`` on PYTHONPATH, whose ``sitecustomize`` the brokers then load), the
  brokers' long task steps and collections from 50 ms before a burst to its worst message's
  receipt are listed under it.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import struct
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import replication_bench as rb

_VALUE = struct.Struct(">dq")
_PAD = b"\0" * (100 - _VALUE.size)


def _q(values: list[float], f: float) -> float:
    return values[int(f * (len(values) - 1))]


def _broker_events(directory: str) -> list[tuple[float, str]]:
    out = []
    for path in glob.glob(os.path.join(directory, "*.log")):
        lines = Path(path).read_text().splitlines()
        broker = re.search(r"broker\.id=(\d+)", lines[0] if lines else "")
        name = f"broker {broker.group(1)}" if broker else path
        for line in lines[1:]:
            kind, start, took, what = line.split(" ", 3)
            out.append((float(start), f"{name}: {kind} {float(took) * 1e3:.1f} ms {what}"))
    return sorted(set(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--side", choices=("rf3", "single"), default="rf3")
    ap.add_argument("--rate", type=float, default=2000.0)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--warm-seconds", type=float, default=2.0)
    ap.add_argument("--producer", default="", help="key=value,...: librdkafka settings")
    args = ap.parse_args()
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    extra = dict(kv.split("=", 1) for kv in args.producer.split(",") if kv)
    pauses = os.environ.get("KAFKAPY_PAUSES_DIR", "")
    if pauses:
        os.makedirs(pauses, exist_ok=True)
        for old in glob.glob(os.path.join(pauses, "*.log")) + \
                glob.glob(os.path.join(pauses, "*.samples")):
            os.unlink(old)
    n = int(args.rate * args.seconds)
    sent = [0.0] * n
    acked = [0.0] * n
    received: dict[int, float] = {}
    with rb._start(args.side, {}) as cluster:
        topic = "latency-tail"
        rb._topic(cluster, topic)
        leader = cluster.brokers[1].bootstrap
        replicated = args.side == "rf3"
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                             "acks": "all" if replicated else "1", "linger.ms": 0,
                             "enable.idempotence": replicated, **extra})
        producer.produce(topic, _VALUE.pack(0.0, -1) + _PAD)
        producer.flush(30)
        warm = Consumer({"bootstrap.servers": leader, "group.id": "latency-tail-warm"})
        warm.subscribe([topic])
        until = time.monotonic() + args.warm_seconds
        while time.monotonic() < until:
            warm.poll(0.2)
        warm.close()
        ready = threading.Event()

        def consume() -> None:
            consumer = Consumer({"bootstrap.servers": leader, "group.id": "latency-tail",
                                 "enable.auto.commit": False, "fetch.wait.max.ms": 500,
                                 "fetch.min.bytes": 1})
            consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
            while True:                                 # the warm-up message
                msg = consumer.poll(1.0)
                if msg is not None and not msg.error():
                    break
            ready.set()
            deadline = time.perf_counter() + args.seconds + 30
            while len(received) < n and time.perf_counter() < deadline:
                msg = consumer.poll(0.5)
                value = None if msg is None or msg.error() else msg.value()
                if value is not None:
                    received[_VALUE.unpack_from(value)[1]] = time.perf_counter()
            consumer.close()

        reader = threading.Thread(target=consume)
        reader.start()
        ready.wait(30)

        def on_delivery(i: int):  # type: ignore[no-untyped-def]
            def done(err: object, msg: object) -> None:
                acked[i] = time.perf_counter()
            return done

        start = time.perf_counter() + 0.2
        for i in range(n):
            delay = start + i / args.rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            sent[i] = time.perf_counter()
            producer.produce(topic, _VALUE.pack(sent[i], i) + _PAD, on_delivery=on_delivery(i))
            producer.poll(0)
        producer.flush(30)
        reader.join()
    e2e = sorted(((received[i] - sent[i]) * 1e3, i) for i in received)
    ack = sorted((acked[i] - sent[i]) * 1e3 for i in range(n) if acked[i])
    values = [v for v, _ in e2e]
    print(f"{args.side}, {args.rate:g} msg/s for {args.seconds:g} s, producer {extra or '-'}: "
          f"receive - send p50 {_q(values, .5):.2f} p99 {_q(values, .99):.2f} p99.9 "
          f"{_q(values, .999):.2f} ms; acknowledgement - send p50 {_q(ack, .5):.2f} p99 "
          f"{_q(ack, .99):.2f} p99.9 {_q(ack, .999):.2f} ms; lost {n - len(e2e)}")
    slowest = sorted(i for _, i in e2e[-max(1, n // 100):])
    bursts: list[list[int]] = []
    for i in slowest:
        if bursts and i - bursts[-1][-1] <= 20:
            bursts[-1].append(i)
        else:
            bursts.append([i])
    events = _broker_events(pauses) if pauses else []
    for burst in bursts:
        worst = max(burst, key=lambda i: received[i] - sent[i])
        print(f"at {sent[burst[0]] - start:7.3f} s: {len(burst):4d} of the slowest 1%, worst "
              f"{(received[worst] - sent[worst]) * 1e3:6.1f} ms (acknowledged after "
              f"{(acked[worst] - sent[worst]) * 1e3:6.1f} ms)")
        for at, what in events:
            if sent[burst[0]] - 0.05 <= at <= received[worst] and " ms " in what and (
                    "gc" in what or float(what.split(" ms ")[0].split()[-1]) > 3):
                print(f"    {at - start:7.3f} s  {what}")


if __name__ == "__main__":
    main()
