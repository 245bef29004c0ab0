"""Idempotent and transactional produce with confluent-kafka: what idempotence and
transactions cost.

    PYTHONPATH=. python -m benchmarks.txn_harness [--messages N] [--size BYTES] [--rounds R]
                                                  [--txns T] [--per-txn K]

Prints markdown tables for docs/performance.md (median, min-max, every round).

One broker in a child process (``e2e_harness.BrokerProcess``: its own interpreter, so the
client's work does not share the broker's GIL), default settings but one partition per new
topic. Every round uses fresh topics, created before the clock starts; every producer sends a
warm-up message (or commits a warm-up transaction) before the clock starts, so connections,
InitProducerId, FindCoordinator and the creation of ``__transaction_state`` are off the clock.

- Produce throughput, idempotence off vs on: ``--messages`` messages of ``--size`` random
  bytes into one partition from one Producer (acks=all, linger.ms 5, batch.size 1 MiB, no
  compression: e2e_harness's produce settings), timed from the first ``produce()`` to the end
  of ``flush()``, three ways: idempotence off; idempotence off with ``max.in.flight`` 5; and
  idempotence on. Idempotence changes two things: librdkafka keeps at most 5 requests in
  flight per connection, and every batch carries a producer id and sequences that the broker
  checks. The middle run has the first change without the second, so on/(off, 5 in flight)
  is the broker's share of the cost and (off, 5 in flight)/off the client's. The runs
  alternate in every round (A B C, then C B A in the next round), and the ratios are taken per
  round, so that the drift of a small noisy machine cancels out.
- Transactions: ``--txns`` transactions of ``--per-txn`` records (``--size`` bytes) each from
  one transactional Producer, ``begin_transaction()``, the records, ``commit_transaction()``
  (which flushes first); transactions per second. Reference, in the same round: an idempotent
  producer that sends the same ``--per-txn`` records and ``flush()``es after each group, so
  the ratio per round isolates what a commit adds (AddPartitionsToTxn, EndTxn, the markers
  and the ``__transaction_state`` writes) over one acks=all round trip.

- Broker-bound, idempotence off vs on: librdkafka's own per-message work differs with
  idempotence (its client CPU about doubles here), so the client runs above say little about
  the broker. A raw socket sends pre-encoded ProduceRequests (v7, acks=all, ``--raw-batches``
  batches of ``--raw-records`` records, 5 in flight, as an idempotent client may) with plain
  batches, then with batches carrying a producer id (from InitProducerId) and consecutive
  sequences, which the broker checks against the producer's state; MB/s of record bytes.

After every run the partition's high watermark is checked against what was produced (every
message once; for transactions one COMMIT marker per transaction too), so a broker that
dropped or duplicated records cannot post a number.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from benchmarks.e2e_harness import BrokerProcess
from kafkapy.protocol import API_KEYS, Request, RequestHeader, decode_response, encode_request
from kafkapy.protocol.classes import struct_classes
from kafkapy.protocol.records import build_batch

TIMEOUT = 60.0
_P = struct_classes(API_KEYS[0].request.body)
_INIT = struct_classes(API_KEYS[22].request.body)["InitProducerIdRequest"]
BASE = {"acks": "all", "linger.ms": 5, "batch.size": 1 << 20,
        "queue.buffering.max.kbytes": 1 << 20, "compression.type": "none"}


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(TIMEOUT)


def high_watermark(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "txn-harness",
                         "isolation.level": "read_uncommitted"})
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), TIMEOUT,
                                                 cached=False)
        return int(high)
    finally:
        consumer.close()


def _produce(producer: Producer, topic: str, payload: bytes, failures: list[object]) -> None:
    def report(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    while True:
        try:
            producer.produce(topic, payload, on_delivery=report)
            return
        except BufferError:
            producer.poll(0.01)


# CPU seconds (client process, broker process) of each produce run, by label: where the time
# of idempotence goes.
CPU: dict[str, list[tuple[float, float]]] = {}
BROKER_PID: list[int] = []


def _broker_cpu() -> float:
    if not BROKER_PID:
        return 0.0
    fields = Path(f"/proc/{BROKER_PID[0]}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def produce_round(bootstrap: str, topic: str, count: int, payload: bytes,
                  idempotence: bool, in_flight: int | None = None, label: str = "") -> float:
    """Seconds to produce and flush ``count`` messages (``in_flight``: librdkafka's
    ``max.in.flight``, its default if None); the CPU both sides used goes to ``CPU[label]``."""
    create_topic(bootstrap, topic)
    limit = {} if in_flight is None else {"max.in.flight": in_flight}
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": idempotence,
                         **limit, **BASE})
    failures: list[object] = []
    producer.produce(topic, b"warm-up")
    producer.flush(TIMEOUT)
    started = time.perf_counter()
    client0, broker0 = time.process_time(), _broker_cpu()
    for _ in range(count):
        _produce(producer, topic, payload, failures)
    left = producer.flush(TIMEOUT * 2)
    elapsed = time.perf_counter() - started
    CPU.setdefault(label, []).append((time.process_time() - client0, _broker_cpu() - broker0))
    if left or failures:
        raise RuntimeError(f"{left} undelivered, {len(failures)} failed: {failures[:3]}")
    end = high_watermark(bootstrap, topic)
    if end != count + 1:
        raise RuntimeError(f"{topic}: high watermark {end}, expected {count + 1}")
    return elapsed


def txn_round(bootstrap: str, topic: str, txns: int, per_txn: int, payload: bytes,
              transactional_id: str) -> float:
    """Seconds for ``txns`` transactions of ``per_txn`` records, each committed."""
    create_topic(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         **BASE})
    failures: list[object] = []
    producer.init_transactions(TIMEOUT)
    producer.begin_transaction()
    producer.produce(topic, b"warm-up")
    producer.commit_transaction(TIMEOUT)
    started = time.perf_counter()
    for _ in range(txns):
        producer.begin_transaction()
        for _ in range(per_txn):
            _produce(producer, topic, payload, failures)
        producer.commit_transaction(TIMEOUT)
    elapsed = time.perf_counter() - started
    if failures:
        raise RuntimeError(f"{len(failures)} failed: {failures[:3]}")
    end = high_watermark(bootstrap, topic)
    expected = 2 + txns * (per_txn + 1)        # records and one COMMIT marker each
    if end != expected:
        raise RuntimeError(f"{topic}: high watermark {end}, expected {expected}")
    return elapsed


def flush_groups_round(bootstrap: str, topic: str, groups: int, per_group: int,
                       payload: bytes) -> float:
    """The reference: an idempotent producer flushing after every ``per_group`` records."""
    create_topic(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, **BASE})
    failures: list[object] = []
    producer.produce(topic, b"warm-up")
    producer.flush(TIMEOUT)
    started = time.perf_counter()
    for _ in range(groups):
        for _ in range(per_group):
            _produce(producer, topic, payload, failures)
        if producer.flush(TIMEOUT):
            raise RuntimeError("flush timed out")
    elapsed = time.perf_counter() - started
    if failures:
        raise RuntimeError(f"{len(failures)} failed: {failures[:3]}")
    end = high_watermark(bootstrap, topic)
    if end != 1 + groups * per_group:
        raise RuntimeError(f"{topic}: high watermark {end}, expected {1 + groups * per_group}")
    return elapsed


def _frame(api_key: int, version: int, body: object, correlation_id: int) -> bytes:
    header = RequestHeader(api_key=api_key, api_version=version,
                           correlation_id=correlation_id, client_id="txn-harness")
    payload = encode_request(Request(header, body))
    return struct.pack(">i", len(payload)) + payload


def _read_frame(sock: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            buf += chunk
        return bytes(buf)
    (size,) = struct.unpack(">i", exactly(4))
    return exactly(size)


def raw_produce_round(bootstrap: str, topic: str, batches: int, records: int, payload: bytes,
                      idempotent: bool, in_flight: int = 5) -> float:
    """Seconds to send ``batches`` pre-encoded ProduceRequests, ``in_flight`` at a time, and
    get every answer (each must be NONE)."""
    create_topic(bootstrap, topic)
    host, port = bootstrap.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
    try:
        producer_id = -1
        if idempotent:
            sock.sendall(_frame(22, 0, _INIT(transactional_id=None,
                                              transaction_timeout_ms=60000), 0))
            answer = decode_response(22, 0, _read_frame(sock)).body
            assert answer.error_code == 0, answer
            producer_id = answer.producer_id
        now = int(time.time() * 1000)
        frames = []
        for i in range(batches):
            batch = build_batch([(None, payload, None, now)] * records,
                                producer_id=producer_id, producer_epoch=0 if idempotent else -1,
                                base_sequence=i * records if idempotent else -1)
            frames.append(_frame(0, 7, _P["ProduceRequest"](
                transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[
                    _P["TopicProduceData"](name=topic, partition_data=[
                        _P["PartitionProduceData"](index=0, records=batch)])]), i + 1))
        started = time.perf_counter()
        sent = answered = 0
        while answered < batches:
            while sent < batches and sent - answered < in_flight:
                sock.sendall(frames[sent])
                sent += 1
            response = decode_response(0, 7, _read_frame(sock)).body
            code = response.responses[0].partition_responses[0].error_code
            if code:
                raise RuntimeError(f"produce answered error {code}")
            answered += 1
        elapsed = time.perf_counter() - started
    finally:
        sock.close()
    if high_watermark(bootstrap, topic) != batches * records:
        raise RuntimeError(f"{topic}: the log does not hold {batches * records} records")
    return elapsed


def _cell(values: list[float], fmt: str) -> str:
    return (f"{statistics.median(values):{fmt}} | {min(values):{fmt}}-{max(values):{fmt}} | "
            + ", ".join(f"{v:{fmt}}" for v in values))


def _interleaved(runs: list[Callable[[], float]], reverse: bool) -> list[float]:
    """Every run once, in order or (``reverse``) backwards; the results in the given order."""
    order = list(range(len(runs)))[::-1] if reverse else list(range(len(runs)))
    results: dict[int, float] = {}
    for i in order:
        results[i] = runs[i]()
    return [results[i] for i in range(len(runs))]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=200_000, help="messages per produce run")
    ap.add_argument("--size", type=int, default=1024, help="bytes per message")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--txns", type=int, default=200, help="transactions per run")
    ap.add_argument("--per-txn", type=int, default=100, help="records per transaction")
    ap.add_argument("--raw-batches", type=int, default=4000, help="raw ProduceRequests per run")
    ap.add_argument("--raw-records", type=int, default=16, help="records per raw batch")
    args = ap.parse_args(argv)
    payload = os.urandom(args.size)
    off: list[float] = []
    off5: list[float] = []
    on: list[float] = []
    txn: list[float] = []
    groups: list[float] = []
    raw_off: list[float] = []
    raw_on: list[float] = []
    mb = args.messages * args.size / 1e6
    raw_mb = args.raw_batches * args.raw_records * args.size / 1e6
    try:
        process = BrokerProcess()
        with process as bootstrap:
            BROKER_PID[:] = [process.proc.pid]
            for r in range(args.rounds):
                reverse = r % 2 == 1
                t_off, t_off5, t_on = _interleaved([
                    lambda r=r: produce_round(bootstrap, f"plain-{r}", args.messages, payload,
                                              False, label="off"),
                    lambda r=r: produce_round(bootstrap, f"plain5-{r}", args.messages,
                                              payload, False, in_flight=5, label="off5"),
                    lambda r=r: produce_round(bootstrap, f"idempotent-{r}", args.messages,
                                              payload, True, label="on")], reverse)
                off.append(mb / t_off)
                off5.append(mb / t_off5)
                on.append(mb / t_on)
                t_txn, t_groups = _interleaved([
                    lambda r=r: txn_round(bootstrap, f"txn-{r}", args.txns, args.per_txn,
                                          payload, f"harness-{r}"),
                    lambda r=r: flush_groups_round(bootstrap, f"groups-{r}", args.txns,
                                                   args.per_txn, payload)], reverse)
                txn.append(args.txns / t_txn)
                groups.append(args.txns / t_groups)
                t_raw_off, t_raw_on = _interleaved([
                    lambda r=r: raw_produce_round(bootstrap, f"raw-plain-{r}", args.raw_batches,
                                                  args.raw_records, payload, False),
                    lambda r=r: raw_produce_round(bootstrap, f"raw-idempotent-{r}",
                                                  args.raw_batches, args.raw_records, payload,
                                                  True)], reverse)
                raw_off.append(raw_mb / t_raw_off)
                raw_on.append(raw_mb / t_raw_on)
                print(f"  round {r}: off {off[-1]:.1f} MB/s, off with 5 in flight "
                      f"{off5[-1]:.1f} MB/s, on {on[-1]:.1f} MB/s, {txn[-1]:.1f} txn/s, "
                      f"{groups[-1]:.1f} flushes/s, raw {raw_off[-1]:.1f} / "
                      f"{raw_on[-1]:.1f} MB/s", file=sys.stderr)
    except KafkaException as e:
        raise SystemExit(f"the broker refused: {e}") from e

    print(f"\nProduce, confluent-kafka, {args.messages:,} x {args.size} B, acks=all, "
          f"{args.rounds} rounds (median | min-max | rounds):\n")
    print("| what | median | min-max | rounds |")
    print("|---|---|---|---|")
    print("| idempotence off (MB/s) | " + _cell(off, ".1f") + " |")
    print("| idempotence off, max.in.flight 5 (MB/s) | " + _cell(off5, ".1f") + " |")
    print("| idempotence on (max.in.flight 5 implied) (MB/s) | " + _cell(on, ".1f") + " |")
    print("| ratio on/off per round | "
          + _cell([b / a for a, b in zip(off, on, strict=True)], ".2f") + " |")
    print("| ratio on/(off, 5 in flight) per round: the broker's share | "
          + _cell([b / a for a, b in zip(off5, on, strict=True)], ".2f") + " |")
    print(f"\nWhere the time goes: CPU seconds per run of {mb:.0f} MB (median), client process "
          f"(Python + librdkafka's threads) and broker process:\n")
    print("| run | client CPU s | broker CPU s |")
    print("|---|---|---|")
    for label, name in (("off", "idempotence off"), ("off5", "off, max.in.flight 5"),
                        ("on", "idempotence on")):
        client = statistics.median(c for c, _b in CPU[label])
        broker = statistics.median(b for _c, b in CPU[label])
        print(f"| {name} | {client:.2f} | {broker:.2f} |")
    print(f"\nBroker-bound: raw pipelined ProduceRequests (5 in flight), {args.raw_batches:,} "
          f"batches x {args.raw_records} records x {args.size} B, acks=all:\n")
    print("| what | median | min-max | rounds |")
    print("|---|---|---|---|")
    print("| plain batches (MB/s) | " + _cell(raw_off, ".1f") + " |")
    print("| idempotent batches, sequences checked (MB/s) | " + _cell(raw_on, ".1f") + " |")
    print("| ratio idempotent/plain per round | "
          + _cell([b / a for a, b in zip(raw_off, raw_on, strict=True)], ".2f") + " |")
    print(f"\nTransactions of {args.per_txn} x {args.size} B records, {args.txns} per run, "
          f"confluent-kafka, {args.rounds} rounds:\n")
    print("| what | median | min-max | rounds |")
    print("|---|---|---|---|")
    print("| transactions committed per second | " + _cell(txn, ".1f") + " |")
    print("| records per second in transactions | "
          + _cell([t * args.per_txn for t in txn], ",.0f") + " |")
    print(f"| reference: idempotent, flush() every {args.per_txn} records (flushes/s) | "
          + _cell(groups, ".1f") + " |")
    print("| ratio transactions/reference per round | "
          + _cell([t / g for t, g in zip(txn, groups, strict=True)], ".2f") + " |")


if __name__ == "__main__":
    main()
