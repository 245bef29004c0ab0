"""The cost of old clients' message formats: the same data produced and fetched as magic 2
(zero copy) and as magic 0 (converted up on produce, down on fetch, kafkapy/_legacy.pyx).

    PYTHONPATH=. python benchmarks/legacy_formats_bench.py [--messages N] [--size BYTES]
                                                           [--rounds R]

Against a broker in its own process (benchmarks/e2e_harness.BrokerProcess), one
confluent-kafka client per measurement, the two formats interleaved round by round (the order
alternating) so that machine noise falls on both alike:

- produce MB/s: N messages of SIZE random bytes (acks=all, linger.ms=5, no compression) from a
  current librdkafka (Produce v9+, magic 2 batches) and from librdkafka with
  ``api.version.request=false``, ``broker.version.fallback=0.9.0.0`` (Produce v1, magic 0
  message sets, converted to batches on append);
- fetch MB/s: all N read back from offset 0 (timed from the first message) by a current
  consumer (Fetch v12+, batches sent from the segment files) and by a 0.9 consumer (Fetch v1:
  each read converted down to magic 0 in memory, KIP-283's sizing);
- the compiled conversions alone, in this process: ``up_convert`` of 1,000 messages and
  ``down_convert`` of one 1,000-record batch, MB/s of input.

Prints every round and the medians, and a line for docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition

from benchmarks.e2e_harness import BrokerProcess
from kafkapy.protocol.records import build_batch, down_convert, up_convert

LEGACY = {"api.version.request": False, "broker.version.fallback": "0.9.0.0",
          "enable.idempotence": False}


def produce(bootstrap: str, topic: str, count: int, payload: bytes, old: bool) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                         "batch.size": 1 << 20, "queue.buffering.max.kbytes": 1 << 20,
                         "compression.codec": "none", **(LEGACY if old else {})})
    producer.produce(topic, b"warm-up", partition=0)
    producer.flush(30)
    failures: list[object] = []

    def report(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    started = time.perf_counter()
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, payload, partition=0, on_delivery=report)
                break
            except BufferError:
                producer.poll(0.01)
    left = producer.flush(120)
    elapsed = time.perf_counter() - started
    if left or failures:
        raise RuntimeError(f"{left} undelivered, {len(failures)} failed: {failures[:3]}")
    return elapsed


def fetch(bootstrap: str, topic: str, count: int, old: bool) -> float:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 100,
                         "max.partition.fetch.bytes": 1 << 20, **(LEGACY if old else {})})
    consumer.assign([TopicPartition(topic, 0, 1)])       # skip the warm-up message
    got = 0
    started = 0.0           # from the first message: the connection setup is not the format's
    deadline = time.perf_counter() + 120
    while got < count and time.perf_counter() < deadline:
        for msg in consumer.consume(10_000, 1.0):
            if msg.error() is None:
                if not got:
                    started = time.perf_counter()
                got += 1
    elapsed = time.perf_counter() - started
    consumer.close()
    if got < count:
        raise RuntimeError(f"fetched {got} of {count}")
    return elapsed * count / (count - 1)


def compiled(size: int) -> tuple[float, float]:
    """MB/s of input through up_convert and down_convert (best of 20 after a warm-up)."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    payloads = [os.urandom(size) for _ in range(1000)]
    builder = LegacyRecordBatchBuilder(magic=0, compression_type=0, batch_size=1 << 30)
    for i, p in enumerate(payloads):
        builder.append(i, None, None, p)
    legacy = bytes(builder.build())
    batch = build_batch([(None, p, [], 1_700_000_000_000) for p in payloads])
    out = []
    for fn, data in ((lambda: up_convert(legacy), legacy),
                     (lambda: down_convert(batch, 0, 0), batch)):
        fn()
        best = min(_timed(fn) for _ in range(20))
        out.append(len(data) / best / 1e6)
    return out[0], out[1]


def _timed(fn: object) -> float:
    started = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    payload = os.urandom(args.size)
    mb = args.messages * args.size / 1e6
    rates: dict[tuple[str, str], list[float]] = {}
    with BrokerProcess() as bootstrap:
        for r in range(args.rounds):
            order = (False, True) if r % 2 == 0 else (True, False)
            for old in order:
                fmt = "magic 0 (0.9 client)" if old else "magic 2"
                topic = f"legacy-bench-{uuid.uuid4().hex[:8]}"
                rates.setdefault(("produce", fmt), []).append(
                    mb / produce(bootstrap, topic, args.messages, payload, old))
                rates.setdefault(("fetch", fmt), []).append(
                    mb / fetch(bootstrap, topic, args.messages, old))
                print(f"round {r}: {fmt}: produce {rates['produce', fmt][-1]:.0f} MB/s, "
                      f"fetch {rates['fetch', fmt][-1]:.0f} MB/s", flush=True)
    up, down = compiled(args.size)
    print(f"\n{args.messages} x {args.size} B, {args.rounds} interleaved rounds (medians):")
    for (what, fmt), values in sorted(rates.items()):
        print(f"  {what:8} {fmt:22} {statistics.median(values):8.0f} MB/s   "
              f"({', '.join(f'{v:.0f}' for v in values)})")
    print(f"  compiled up_convert {up:.0f} MB/s, down_convert {down:.0f} MB/s (1,000 x "
          f"{args.size} B)")


if __name__ == "__main__":
    main()
