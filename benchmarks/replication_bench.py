"""What replication costs: 3 brokers, RF 3, acks=all against 1 broker, acks=1, on one machine.

    PYTHONPATH=. python -m benchmarks.replication_bench [--reps 5] [--small 1000000]
        [--large 300000] [--sizes 100,1024] [--rates 2000] [--latency-seconds 10]
        [--variant replica.fetch.max.bytes=10485760]   # a third side: RF 3, other settings
        [--baseline /path/to/other/tree]   # a side: RF 3, brokers from another source tree
        [--sides rf3,rf3-base]             # only these sides
        [--stall-ms 300]                   # SIGSTOP the leader that long in each latency run
        [--idempotent]                     # the latency producer idempotent (max 5 in flight)
        [--producer linger.ms=1]           # further settings of the latency producer
        [--out results.md]
        [--profile DIR [--profile-load throughput|latency] [--skip-bench]]   # py-spy

Needs ZooKeeper (as ``kafkapy.Cluster`` does) and confluent-kafka; py-spy for ``--profile``.

Theory of operation
-------------------

Two *sides*, each a fresh ``kafkapy.Cluster`` (a real ZooKeeper and broker processes) per
repetition, the sides **interleaved** (repetition ``r`` runs them in the order rotated by
``r``, as ``broker_bench`` does) so that a machine whose speed drifts treats both alike:

- ``rf3``: 3 brokers; each topic has one partition on replicas [1, 2, 3] (broker 1 leads),
  ``min.insync.replicas=2``; the producer sends with acks=all;
- ``single``: 1 broker; each topic one partition on [1]; the producer sends with acks=1.

The issue's comparison is Kafka's published single-producer figures (421,823 records/s of
100 B with RF 3 / acks=all against 821,557 with RF 1 / acks=1: 0.51x, on three machines).
Here all three brokers, ZooKeeper and the producer share this machine's cores, so the three
replicas' work is paid out of the same CPU budget that the single broker has to itself.

In each side's cluster, per repetition:

- **throughput**: the same librdkafka producer as ``broker_bench``'s ``ck_*`` scenarios
  (``ck_produce_client``: linger.ms 5, batch.size 1 MiB, no compression, a warm-up message,
  timed to the end of ``flush()``), ``--small`` records of 100 B and ``--large`` of 1 KiB,
  each into a fresh topic whose ISR is full first; records/s and MB/s of values, checked
  against the leader's log (high watermark and log end).
- **latency** (after the throughput runs): ``broker_bench``'s latency producer at each of
  ``--rates`` msg/s of 100 B (linger.ms 0; librdkafka's default, not idempotent, unless
  ``--idempotent``), acks=all on ``rf3``, acks=1 on ``single`` (the
  reference); a long-polling consumer on the leader; p50, p99, p99.9 of receive - send. On
  RF 3 a record reaches the consumer only once the high watermark passes it: a follower
  fetch round trip.
- ``--baseline DIR``: a side ``rf3-base``, RF 3 again with the broker processes importing
  kafkapy from ``DIR`` (a checkout of the code before a change), interleaved with the others:
  before and after on the same machine at the same time.
- **CPU**: around every measured window, each broker's and ZooKeeper's CPU
  (/proc/<pid>/stat), the clients' own, the harness's, and the machine's busy time
  (/proc/stat); *other CPU* = busy - all of these, in cores (the kernel's page-cache
  writeback shows here). Under the latency load, each broker's **CPU per message** (ms of
  CPU / messages sent; the followers' averaged): the figure a busy machine moves least. The
  **follower fetch cost** is the followers' CPU milliseconds per MB
  of values replicated to one follower (sum over brokers 2 and 3 / (2 x MB produced)); the
  leader's CPU per MB (ms) is shown on both sides (the leader-side cost of serving the followers
  is the difference).
- The **storing ceiling**: before the first run and after the last, ``broker_bench``'s
  ``memory_write_probe`` (3 GiB of new bytes, no server): the machine's speed at storing new
  bytes past the first GiB. RF 3 stores every byte three times on this one machine, so the
  table shows the bytes stored per second by all replicas beside it.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import kafkapy
from benchmarks import load_generator as lg
from benchmarks.broker_bench import (
    CkProduceJob,
    LatencyConsumerJob,
    LatencyProducerJob,
    _cpu_stat,
    _fmt,
    _py_spy,
    ck_produce_client,
    latency_consumer,
    latency_producer,
    memory_write_probe,
)
from benchmarks.peers import proc_cpu_seconds

SIDES = {"rf3": (3, "all"), "single": (1, "1")}
VARIANT = "rf3-variant"       # --variant: rf3 again with other broker settings
BASELINE = "rf3-base"         # --baseline: rf3 again, the brokers running another source tree


class ClusterMeter:
    """CPU accounting of one measured window: every broker and ZooKeeper apart."""

    def __init__(self, cluster: kafkapy.Cluster) -> None:
        self.pids = {f"broker-{i}": b.proc.pid for i, b in cluster.brokers.items()
                     if b.proc is not None}
        if cluster.zookeeper is not None and cluster.zookeeper.proc is not None:
            self.pids["zookeeper"] = cluster.zookeeper.proc.pid

    def _snap(self) -> tuple[float, float, float, dict[str, float]]:
        busy, steal = _cpu_stat()
        procs = {name: proc_cpu_seconds(pid) for name, pid in self.pids.items()}
        procs["harness"] = time.process_time()
        return time.perf_counter(), busy, steal, procs

    def begin(self) -> None:
        self._a = self._snap()

    def end(self) -> None:
        self._b = self._snap()

    def window(self, client_cpu: float) -> dict[str, float]:
        (t0, busy0, steal0, p0), (t1, busy1, steal1, p1) = self._a, self._b
        wall = t1 - t0
        out = {name: p1[name] - p0[name] for name in p0}
        out["clients"] = client_cpu
        other = (busy1 - busy0) - sum(out.values())
        out.update(wall=wall, other_cores=max(other, 0.0) / wall,
                   steal_cores=(steal1 - steal0) / wall, busy_cores=(busy1 - busy0) / wall)
        return out


def _start(side: str, settings: dict[str, str], baseline: str = "") -> kafkapy.Cluster:
    brokers, _ = SIDES["rf3" if side in (VARIANT, BASELINE) else side]
    cluster = kafkapy.Cluster(brokers, settings, timeout=90, log_level="WARNING")
    if side == BASELINE:
        # The broker processes import kafkapy from the baseline tree (before and after a
        # change, interleaved); this process and the clients stay as they are.
        cluster.env["PYTHONPATH"] = baseline + os.pathsep + cluster.env["PYTHONPATH"]
    return cluster


def _topic(cluster: kafkapy.Cluster, topic: str) -> None:
    replicas = list(cluster.brokers)
    config = {"min.insync.replicas": "2"} if len(replicas) > 1 else {}
    cluster.create_topic(topic, {0: replicas}, config)
    cluster.wait_for_isr(topic, 0, len(replicas), timeout=60)
    cluster.wait_until(lambda: cluster.leader_of(topic, 0) == 1, f"{topic} led by broker 1")


def _leader_log_end(cluster: kafkapy.Cluster, topic: str) -> int:
    """The leader's log end, read from its log just below the high watermark."""
    from confluent_kafka import Consumer, TopicPartition
    leader = cluster.brokers[1].bootstrap
    consumer = Consumer({"bootstrap.servers": leader, "group.id": "replication-bench"})
    try:
        mark = int(consumer.get_watermark_offsets(TopicPartition(topic, 0), 60,
                                                  cached=False)[1])
    finally:
        consumer.close()
    return lg.log_end_offset(leader, topic, 0, max(mark - 1, 0))


@dataclass
class Run:
    side: str
    rep: int
    values: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, dict[str, float]] = field(default_factory=dict)   # per window
    error: str = ""


def _measure(cluster: kafkapy.Cluster, clients: Sequence[tuple[Callable[..., dict[str, Any]],
                                                                Any]]
             ) -> tuple[list[dict[str, Any]], dict[str, float]]:
    meter = ClusterMeter(cluster)
    results = lg.run_clients(clients, meter)
    return results, meter.window(sum(r["cpu"] for r in results))


def _stall(cluster: kafkapy.Cluster, stall_ms: float, after_s: float
           ) -> threading.Thread | None:
    """``--stall-ms``: SIGSTOP the leader (broker 1) ``after_s`` into the window for
    ``stall_ms`` (far below the ZooKeeper session: no failover), as a GC pause or a noisy
    neighbour would: the clients' requests queue up meanwhile, and the figure is how the
    cluster gets back to the rate afterwards."""
    if stall_ms <= 0:
        return None

    def stall() -> None:
        time.sleep(after_s)
        cluster.pause(1)
        try:
            time.sleep(stall_ms / 1000)
        finally:
            cluster.resume(1)

    thread = threading.Thread(target=stall, daemon=True)
    thread.start()
    return thread


def run_side(args: argparse.Namespace, side: str, rep: int) -> Run:
    run = Run(side, rep)
    brokers, acks = SIDES["rf3" if side in (VARIANT, BASELINE) else side]
    try:
        with _start(side, args.variant_settings if side == VARIANT else {},
                    args.baseline) as cluster:
            bootstrap = cluster.bootstrap_servers
            for size in args.sizes:
                topic = f"repl-{size}"
                _topic(cluster, topic)
                count = args.small if size < 1024 else args.large
                (result,), cpu = _measure(cluster, [(ck_produce_client, CkProduceJob(
                    bootstrap, topic, count, size, acks))])
                seconds = result["end"] - result["start"]
                stored = _leader_log_end(cluster, topic)
                if stored != count + 1:
                    raise RuntimeError(f"{side} {topic}: {count + 1} produced, {stored} in "
                                       "the leader's log")
                mb = count * size / 1e6
                run.values[f"records_{size}"] = count / seconds
                run.values[f"mbs_{size}"] = mb / seconds
                run.values[f"leader_cpu_per_mb_{size}"] = cpu["broker-1"] / mb * 1e3
                if brokers > 1:
                    followers = sum(cpu[f"broker-{i}"] for i in range(2, brokers + 1))
                    run.values[f"follower_cpu_per_mb_{size}"] = \
                        followers / ((brokers - 1) * mb) * 1e3
                run.values[f"other_{size}"] = cpu["other_cores"]
                run.cpu[f"produce_{size}"] = cpu
            for rate in args.rates:
                topic = f"repl-latency-{rate:g}"
                _topic(cluster, topic)
                leader = cluster.brokers[1].bootstrap
                n = int(rate * args.latency_seconds)
                stall = _stall(cluster, args.stall_ms, args.latency_seconds / 3)
                results, cpu = _measure(cluster, [
                    (latency_consumer, LatencyConsumerJob(leader, topic, n)),
                    (latency_producer, LatencyProducerJob(bootstrap, topic, rate,
                                                          args.latency_seconds, acks,
                                                          # librdkafka's idempotence needs
                                                          # acks=all: not the acks=1 side
                                                          args.idempotent and acks == "all",
                                                          args.producer_settings))])
                if stall is not None:
                    stall.join()
                for q in ("p50", "p99", "p999"):
                    run.values[f"latency_{q}_{rate:g}"] = results[0][q]
                run.values[f"other_latency_{rate:g}"] = cpu["other_cores"]
                # CPU per message sent (ms): the figure least moved by a busy machine.
                run.values[f"leader_cpu_per_msg_{rate:g}"] = cpu["broker-1"] / n * 1e3
                if brokers > 1:
                    run.values[f"follower_cpu_per_msg_{rate:g}"] = sum(
                        cpu[f"broker-{i}"] for i in range(2, brokers + 1)) / (
                        (brokers - 1) * n) * 1e3
                run.cpu[f"latency_{rate:g}"] = cpu
    except Exception as e:          # one failed run is reported, the rest goes on
        run.error = f"{type(e).__name__}: {e}"[:800]
    return run


# ------------------------------------------------------------------------------ the report

def _vals(runs: Sequence[Run], side: str, key: str) -> list[float]:
    return [r.values[key] for r in runs if r.side == side and key in r.values]


def _ratios(runs: Sequence[Run], key: str, side: str = "rf3") -> list[float]:
    """``side`` / single per repetition."""
    out = []
    for rep in sorted({r.rep for r in runs}):
        a = [r.values[key] for r in runs if r.rep == rep and r.side == side and key in r.values]
        b = [r.values[key] for r in runs
             if r.rep == rep and r.side == "single" and key in r.values]
        if a and b and b[0] > 0:
            out.append(a[0] / b[0])
    return out


def _cell(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return f"{_fmt(statistics.median(values))} ({_fmt(min(values))}-{_fmt(max(values))})"


def report(runs: Sequence[Run], probes: tuple[tuple[float, float], tuple[float, float]],
           args: argparse.Namespace, started: float, load: tuple[float, float]) -> str:
    ceiling = min(probes[0][1], probes[1][1])
    rf3 = [s for s in ("rf3", BASELINE, VARIANT) if any(r.side == s for r in runs)]
    names = {"rf3": "3 brokers, RF 3, acks=all",
             BASELINE: f"the same, brokers from {args.baseline}",
             VARIANT: "the same with " + ", ".join(f"{k}={v}" for k, v in
                                                   args.variant_settings.items())}
    head = (f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(started))}, one machine with "
            f"{os.cpu_count()} CPUs (the 3 brokers, ZooKeeper and the clients share them), "
            f"{args.reps} repetitions interleaved, latency producer "
            f"{'idempotent' if args.idempotent else 'not idempotent'}"
            f"{''.join(f', {k}={v}' for k, v in args.producer_settings)}, load average at start "
            f"{load[0]:.2f}, at "
            f"end {load[1]:.2f}. Storing new bytes, no server (``memory_write_probe``, past "
            f"the first GiB): {probes[0][1]:,.0f} MB/s before the runs, {probes[1][1]:,.0f} "
            "MB/s after. Cells: median (min-max).")
    lines = ["| what | side | value | / 1 broker, acks=1 (per-rep median, min-max) | "
             f"bytes stored/s, all replicas (ceiling {ceiling:,.0f} MB/s) | other CPU, cores "
             "| target |", "|---|---|---|---|---|---|---|"]

    def row(what: str, key: str, other: str, target: str = "", stored: bool = False) -> None:
        for side in (*rf3, "single"):
            values = _vals(runs, side, key)
            if not values:
                continue
            copies = [v * 3 for v in values] if stored and side != "single" else []
            lines.append(
                f"| {what} | {names.get(side, '1 broker, acks=1')} | {_cell(values)} | "
                + (_cell(_ratios(runs, key, side)) if side != "single" else "") + " | "
                + (f"{_cell(copies)} MB/s ({statistics.median(copies) / ceiling:.0%})"
                   if copies else "")
                + f" | {_cell(_vals(runs, side, other))} | {target} |")

    for size in args.sizes:
        label = "100 B" if size < 1024 else "1 KiB"
        row(f"produce {label}, records/s", f"records_{size}", f"other_{size}",
            ">= 0.5x (Kafka: 0.51x)" if size < 1024 else "")
        row(f"produce {label}, MB/s", f"mbs_{size}", f"other_{size}", stored=True)
        row(f"leader CPU ms per MB produced, {label}", f"leader_cpu_per_mb_{size}",
            f"other_{size}")
        row(f"follower CPU ms per MB replicated (each follower), {label}",
            f"follower_cpu_per_mb_{size}", f"other_{size}")
    for rate in args.rates:
        for q, target in (("p50", ""), ("p99", "<= 5 ms (Kafka: 5 ms)"), ("p999", "")):
            row(f"produce-to-consume {q} at {rate:,.0f} msg/s, ms", f"latency_{q}_{rate:g}",
                f"other_latency_{rate:g}", target if rate == 2000 else "")
        row(f"leader CPU ms per message at {rate:,.0f} msg/s", f"leader_cpu_per_msg_{rate:g}",
            f"other_latency_{rate:g}")
        row(f"follower CPU ms per message (each) at {rate:,.0f} msg/s",
            f"follower_cpu_per_msg_{rate:g}", f"other_latency_{rate:g}")
    every = ["| side | rep | " + " | ".join(k for k in _keys(runs)) + " |",
             "|---|---|" + "---|" * len(_keys(runs))]
    for r in runs:
        every.append(f"| {r.side} | {r.rep} | "
                     + " | ".join(_fmt(r.values.get(k)) for k in _keys(runs)) + " |")
    cpu = ["| side | rep | window | wall s | " + " | ".join(_cpu_keys(runs)) + " |",
           "|---|---|---|---|" + "---|" * len(_cpu_keys(runs))]
    for r in runs:
        for w, c in r.cpu.items():
            cpu.append(f"| {r.side} | {r.rep} | {w} | {c['wall']:.2f} | "
                       + " | ".join(f"{c[k]:.2f}" if k in c else "-" for k in _cpu_keys(runs))
                       + " |")
    failed = [f"- {r.side} rep {r.rep}: {r.error.strip().splitlines()[-1]}"
              for r in runs if r.error]
    return "\n\n".join([head, "\n".join(lines), "Every repetition:", "\n".join(every),
                        "CPU seconds per window (other, steal, busy: cores):", "\n".join(cpu)]
                       + (["Failed runs:\n" + "\n".join(failed)] if failed else []))


def _keys(runs: Sequence[Run]) -> list[str]:
    return sorted({k for r in runs for k in r.values})


def _cpu_keys(runs: Sequence[Run]) -> list[str]:
    keys = {k for r in runs for c in r.cpu.values() for k in c} - {"wall"}
    return sorted(keys)


# ------------------------------------------------------------------------------ profile

def profile(args: argparse.Namespace, out_dir: str) -> list[str]:
    """py-spy (raw, collapsed stacks) of broker 1 (the leader) and broker 2 (a follower) of a
    3-broker RF 3 cluster under ``--profile-load`` (the 1 KiB acks=all producer, or the
    acks=all latency load at ``--rate``); then a text summary of each profile's top frames
    (self and inclusive)."""
    made = []
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    with _start("rf3", {}) as cluster:
        topic = "repl-profile"
        _topic(cluster, topic)
        spies = {}
        for role, i in (("leader", 1), ("follower", 2)):
            proc = cluster.brokers[i].proc
            assert proc is not None
            out = str(Path(out_dir) / f"replication-{args.profile_load}-{role}.txt")
            spies[role] = (out, subprocess.Popen(
                [_py_spy(), "record", "--pid", str(proc.pid), "--duration",
                 str(int(args.profile_seconds)), "--rate", "200", "--format", "raw",
                 "--output", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        time.sleep(0.5)
        deadline = time.monotonic() + args.profile_seconds
        while time.monotonic() < deadline:
            if args.profile_load == "latency":
                lg.run_clients([
                    (latency_consumer, LatencyConsumerJob(
                        cluster.brokers[1].bootstrap, topic,
                        int(args.rate * args.profile_seconds))),
                    (latency_producer, LatencyProducerJob(
                        cluster.bootstrap_servers, topic, args.rate, args.profile_seconds,
                        "all", args.idempotent, args.producer_settings))])
            else:
                lg.run_clients([(ck_produce_client, CkProduceJob(
                    cluster.bootstrap_servers, topic, args.large, 1024, "all"))])
        for role, (out, spy) in spies.items():
            spy.wait(timeout=120)
            made.append(out)
            summary = Path(out_dir) / f"replication-{args.profile_load}-{role}-top.txt"
            summary.write_text(summarize_collapsed(Path(out).read_text()))
            made.append(str(summary))
    return made


def summarize_collapsed(text: str, top: int = 40) -> str:
    """Top frames of py-spy's collapsed stacks, by self and by inclusive samples."""
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        own[frames[-1]] += n
        for f in set(frames):
            incl[f] += n
    out = [f"{total} samples", "", "self:"]
    out += [f"{n / total:6.1%}  {f}" for f, n in own.most_common(top)]
    out += ["", "inclusive:"]
    out += [f"{n / total:6.1%}  {f}" for f, n in incl.most_common(top)]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--small", type=int, default=1_000_000, help="100 B records per run")
    ap.add_argument("--large", type=int, default=300_000, help="1 KiB records per run")
    ap.add_argument("--rate", type=float, default=2000.0, help="--profile's latency load")
    ap.add_argument("--rates", default="2000", help="latency runs: msg/s, comma-separated")
    ap.add_argument("--sizes", default="100,1024",
                    help="throughput runs: record sizes, comma-separated (empty: none)")
    ap.add_argument("--variant", default="",
                    help="key=value,...: also run RF 3 with these broker settings, "
                    f"interleaved, as {VARIANT}")
    ap.add_argument("--baseline", default="",
                    help="a source tree: also run RF 3 with brokers importing kafkapy from "
                    f"it, interleaved, as {BASELINE} (before/after a change)")
    ap.add_argument("--sides", default="",
                    help="comma-separated subset of the sides to run (default: all)")
    ap.add_argument("--latency-seconds", type=float, default=10.0)
    ap.add_argument("--idempotent", action="store_true",
                    help="the latency producer idempotent (at most 5 requests in flight, as "
                    "Kafka 3's Java producer by default); librdkafka's default otherwise")
    ap.add_argument("--producer", default="",
                    help="key=value,...: further librdkafka settings of the latency producer "
                    "(e.g. max.in.flight.requests.per.connection=1)")
    ap.add_argument("--stall-ms", type=float, default=0.0,
                    help="SIGSTOP the leader this long, a third into each latency window")
    ap.add_argument("--out", default="", help="write the tables here too")
    ap.add_argument("--profile", default="",
                    help="a directory: py-spy profiles of the leader and a follower")
    ap.add_argument("--profile-seconds", type=float, default=10.0)
    ap.add_argument("--profile-load", choices=("throughput", "latency"), default="throughput",
                    help="--profile under the 1 KiB acks=all producer or the latency load")
    ap.add_argument("--skip-bench", action="store_true", help="only --profile")
    args = ap.parse_args(argv)
    args.rates = [float(r) for r in args.rates.split(",") if r]
    args.sizes = [int(r) for r in args.sizes.split(",") if r]
    args.producer_settings = tuple(tuple(kv.split("=", 1)) for kv in args.producer.split(",")
                                   if kv)
    args.variant_settings = dict(kv.split("=", 1) for kv in args.variant.split(",") if kv)
    if not args.skip_bench:
        started = time.time()
        probe_start = memory_write_probe()
        load_start = os.getloadavg()[0]
        runs: list[Run] = []
        sides = [*SIDES, *([VARIANT] if args.variant_settings else []),
                 *([BASELINE] if args.baseline else [])]
        if args.sides:
            sides = [s for s in sides if s in args.sides.split(",")]
        for rep in range(args.reps):
            k = rep % len(sides)
            for side in sides[k:] + sides[:k]:
                run = run_side(args, side, rep)
                runs.append(run)
                print(f"rep {rep} {side:<7} "
                      + ", ".join(f"{k}={_fmt(v)}" for k, v in run.values.items())
                      + (f" ERROR {run.error}" if run.error else ""), file=sys.stderr,
                      flush=True)
        load_end = os.getloadavg()[0]
        probe_end = memory_write_probe()
        text = report(runs, (probe_start, probe_end), args, started, (load_start, load_end))
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n")
    if args.profile:
        for path in profile(args, args.profile):
            print(f"profile: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
