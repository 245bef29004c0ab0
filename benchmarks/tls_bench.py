"""TLS against PLAINTEXT on one kafkapy broker: produce and fetch throughput, and the broker's
CPU per MB, over its SSL listener as a fraction of its PLAINTEXT one.

    PYTHONPATH=. python -m benchmarks.tls_bench [--reps 5] [--messages 100000] [--size 1024]
        [--json results.json]

Theory of operation
-------------------

One broker process (``python -m kafkapy``) with two listeners, PLAINTEXT and SSL (a trustme CA,
an ECDSA P-256 certificate, TLS 1.3 with OpenSSL's first choice, AES-256-GCM; no client auth),
so both protocols share the broker, its page cache and its warm-up. Each repetition runs both
protocols, **interleaved** (the order alternates per repetition, so a machine whose speed drifts
treats both alike), each on a fresh topic of one partition:

- *produce*: a confluent-kafka producer (acks=1, linger.ms 5, batch.size 1 MiB, no
  compression) sends ``--messages`` values of ``--size`` bytes, timed from the first
  ``produce`` to the end of ``flush()`` (a warm-up message first, so the connection and its
  TLS handshake are off the clock); MB/s of values. Every message's delivery is checked.
- *fetch*: a confluent-kafka consumer reads the topic back from the earliest offset (assign, no
  group; fetch.max.bytes 50 MiB, 10 MiB per partition): MB/s of values. Its fetch responses
  are above 32 KiB, so PLAINTEXT sends their file slices with ``sendfile`` and SSL reads them
  into reused buffers and writes them through OpenSSL.

- *idle*, after the throughput runs (``--idle`` connections, 0: skipped): per protocol, that
  many connections opened from this process, each after one ApiVersions exchange (so each
  is registered and has served a request), held while the broker's VmRSS is read, then
  closed; KiB of broker RSS per connection, against the RSS after one warm-up connection of
  that protocol. An SSL connection also holds OpenSSL's state and buffers.

Reported per protocol and scenario: the median MB/s and the median broker CPU seconds per MB
over the repetitions; the SSL/PLAINTEXT ratios are the medians of the per-repetition ratios.
The client runs in this process, so its CPU is the harness's; *other CPU* (cores) is the rest
of the machine's busy time in the window (``broker_bench.Meter``): a shared machine's noise,
shown beside every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.broker_bench import Meter
from benchmarks.peers import metadata, proc_rss_kib, read_frame, request_frame

TIMEOUT = 120.0
PROTOCOLS = ("PLAINTEXT", "SSL")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TlsBroker:
    """A kafkapy broker process with a PLAINTEXT and an SSL listener on 127.0.0.1."""

    def __init__(self, root: Path) -> None:
        import trustme

        self.root = root
        ca = trustme.CA()
        self.ca_file = str(root / "ca.pem")
        ca.cert_pem.write_to_path(self.ca_file)
        keystore = root / "broker.pem"
        ca.issue_cert("localhost", "127.0.0.1").private_key_and_cert_chain_pem.write_to_path(
            str(keystore))
        self.ports = {p: _free_port() for p in PROTOCOLS}
        settings = {
            "listeners": ",".join(f"{p}://127.0.0.1:{port}" for p, port in self.ports.items()),
            "ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore),
            "log.dirs": str(root / "data"), "num.partitions": "1",
        }
        argv = [sys.executable, "-m", "kafkapy", "--log-level", "WARNING"]
        for key, value in settings.items():
            argv += ["--override", f"{key}={value}"]
        self.log = open(root / "broker.log", "wb")     # closed in stop()
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                metadata(("127.0.0.1", self.ports["PLAINTEXT"]), timeout=1.0)
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError((root / "broker.log").read_text()[-2000:]) from None
                time.sleep(0.05)

    def client(self, protocol: str) -> dict[str, Any]:
        conf: dict[str, Any] = {"bootstrap.servers": f"127.0.0.1:{self.ports[protocol]}"}
        if protocol == "SSL":
            conf.update({"security.protocol": "ssl", "ssl.ca.location": self.ca_file})
        return conf

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def produce(broker: TlsBroker, protocol: str, topic: str, count: int, size: int
            ) -> dict[str, float]:
    from confluent_kafka import Producer

    producer = Producer({**broker.client(protocol), "acks": "1", "linger.ms": 5,
                         "batch.size": 1 << 20, "queue.buffering.max.kbytes": 1 << 20,
                         "compression.type": "none"})
    producer.produce(topic, b"warm-up")
    if producer.flush(TIMEOUT):
        raise RuntimeError("the warm-up message was not delivered")
    payload = os.urandom(size)
    failures: list[object] = []

    def report(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    meter = Meter(broker.proc.pid)
    meter.begin()
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, payload, on_delivery=report)
                break
            except BufferError:
                producer.poll(0.005)
    left = producer.flush(TIMEOUT)
    meter.end()
    if left or failures:
        raise RuntimeError(f"{protocol}: {left} undelivered, {len(failures)} failed")
    return _figures(meter, count * size)


def fetch(broker: TlsBroker, protocol: str, topic: str, count: int) -> dict[str, float]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({**broker.client(protocol), "group.id": "tls-bench",
                         "enable.auto.commit": False, "fetch.max.bytes": 50 << 20,
                         "max.partition.fetch.bytes": 10 << 20, "fetch.wait.max.ms": 100,
                         "fetch.queue.backoff.ms": 0, "queued.min.messages": 1_000_000})
    consumer.list_topics(topic, timeout=TIMEOUT)         # connected before the clock
    meter = Meter(broker.proc.pid)
    meter.begin()
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = size = 0
    deadline = time.monotonic() + TIMEOUT
    while got < count + 1 and time.monotonic() < deadline:
        for msg in consumer.consume(min(10_000, count + 1 - got), 1.0):
            if msg.error():
                raise RuntimeError(str(msg.error()))
            got += 1
            size += len(msg.value() or b"")
    meter.end()
    consumer.close()
    if got != count + 1:
        raise RuntimeError(f"{protocol}: consumed {got} of {count + 1}")
    return _figures(meter, size)


def idle(broker: TlsBroker, protocol: str, count: int) -> float:
    """KiB of broker RSS per idle connection of ``protocol`` (see the module doc)."""
    from kafkapy.protocol import request_class

    hello = request_frame(18, 0, request_class(18)(), 1, "tls-bench")
    context = None
    if protocol == "SSL":
        context = ssl.create_default_context(cafile=broker.ca_file)

    def connect() -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", broker.ports[protocol]), timeout=TIMEOUT)
        if context is not None:
            sock = context.wrap_socket(sock, server_hostname="localhost")
        sock.sendall(hello)
        read_frame(sock)
        return sock

    with connect():
        time.sleep(0.5)
        before = proc_rss_kib(broker.proc.pid)
    socks = []
    try:
        for _ in range(count):
            socks.append(connect())
        time.sleep(0.5)
        after = proc_rss_kib(broker.proc.pid)
    finally:
        for sock in socks:
            sock.close()
    time.sleep(0.5)
    return (after - before) / count


def _figures(meter: Meter, nbytes: int) -> dict[str, float]:
    noise = meter.noise(0.0)
    mb = nbytes / 1e6
    return {"mb_s": mb / noise["wall"], "broker_cpu_s_per_mb": noise["broker_cpu"] / mb,
            "other_cores": noise["other_cores"], "load1": noise["load1"]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--idle", type=int, default=500,
                    help="idle connections per protocol after the runs (0: none)")
    ap.add_argument("--json", default="", help="write every run here")
    args = ap.parse_args(argv)
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kafkapy-tls-bench-") as d:
        broker = TlsBroker(Path(d))
        try:
            for rep in range(args.reps):
                order = PROTOCOLS if rep % 2 == 0 else PROTOCOLS[::-1]
                for protocol in order:
                    topic = f"{protocol.lower()}-{rep}"
                    p = produce(broker, protocol, topic, args.messages, args.size)
                    f = fetch(broker, protocol, topic, args.messages)
                    runs.append({"rep": rep, "protocol": protocol, "produce": p, "fetch": f})
                    print(f"rep {rep} {protocol:9} produce {p['mb_s']:7.1f} MB/s "
                          f"(other {p['other_cores']:.2f} cores)  fetch {f['mb_s']:7.1f} MB/s "
                          f"(other {f['other_cores']:.2f} cores)", flush=True)
            idle_kib = {p: idle(broker, p, args.idle) for p in PROTOCOLS} if args.idle else {}
        finally:
            broker.stop()
    print()
    print("| scenario | PLAINTEXT MB/s | SSL MB/s | SSL/PLAINTEXT | broker CPU s/MB "
          "PLAINTEXT | SSL | other CPU (cores, median/max) |")
    print("|---|---|---|---|---|---|---|")
    for scenario in ("produce", "fetch"):
        by = {p: [r[scenario] for r in runs if r["protocol"] == p] for p in PROTOCOLS}
        ratios = [s["mb_s"] / p["mb_s"] for p, s in zip(by["PLAINTEXT"], by["SSL"],
                                                         strict=True)]
        other = [r[scenario]["other_cores"] for r in runs]
        print(f"| {scenario} {args.size} B | "
              f"{statistics.median(x['mb_s'] for x in by['PLAINTEXT']):.1f} | "
              f"{statistics.median(x['mb_s'] for x in by['SSL']):.1f} | "
              f"{statistics.median(ratios):.2f} | "
              f"{statistics.median(x['broker_cpu_s_per_mb'] for x in by['PLAINTEXT']):.4f} | "
              f"{statistics.median(x['broker_cpu_s_per_mb'] for x in by['SSL']):.4f} | "
              f"{statistics.median(other):.2f} / {max(other):.2f} |")
    for protocol, kib in idle_kib.items():
        print(f"| idle {protocol} connections ({args.idle}) | broker RSS per connection: "
              f"{kib:.1f} KiB |")
    print(f"\nload average (1 min) at the start: {runs[0]['produce']['load1']:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
