"""Broker CPU per request, interleaved A/B: the measurement behind most produce-path changes.

    PYTHONPATH=. python -m benchmarks.cpu_ab --load 1rec --rounds 5 --base-tree ../kafkapy-before
    PYTHONPATH=. python -m benchmarks.cpu_ab --load 1k --duration 3 --ceiling-write \\
        --variant noroll:log.segment.bytes=2147483647

On this machine class the throughput of a run moves by 10-20% from one minute to the next
(the host's speed at faulting in new page-cache pages, other tenants), so two benchmark runs
taken one after the other can disagree by more than a change saves. This tool runs the
variants round robin, a fresh broker per run (``peers.RunningBroker``), and reports for each
run the raw producer's rate (``load_generator.produce_client``), the broker's CPU per request
(``/proc/<pid>/stat`` over the measured window, ``broker_bench.Meter``), how busy the broker
was, and the other processes' CPU; then per variant the median and range, and the median of
the per-round ratios to the first variant (the drift cancels within a round).

Variants, in this order (the first is the reference of the ratios):

- ``kafkapy``: this tree's standalone broker with kafkapy's defaults;
- ``base`` (``--base-tree PATH``): another checkout's broker, its compiled modules built in
  place (``python setup.py build_ext --inplace`` there);
- ``NAME:key=value[,key=value...]`` (``--variant``, repeatable): this tree with those broker
  settings overridden;
- ``ceiling-write`` (``--ceiling-write``): the minimal server that appends every frame to a
  file before it answers (``ceiling_server --write-dir``).

Loads (``--load``): ``1rec`` one 100 B record per request; ``1k`` batches of 64 x 1 KiB records;
``100b`` batches of 512 x 100 B records; ``4k``, ``16k`` and ``32k`` batches of 4, 16 and 32 x
1 KiB records (16 KiB is the Java producer's default ``batch.size``). One connection
(``--connections``: that many, one partition each), acks=1, 5 requests in flight,
``--duration`` seconds (``broker_bench`` runs 3). kafkapy's runs check that the log holds
every acknowledged record. Nothing here is committed but the numbers quoted in docs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import benchmarks.load_generator as lg
from benchmarks.broker_bench import Meter, create_topic, stored_records
from benchmarks.peers import PEERS, Peer, RunningBroker, kafkapy_peer

LOADS = {"1rec": (1, 100), "4k": (4, 1024), "16k": (16, 1024), "32k": (32, 1024),
         "1k": (64, 1024), "100b": (512, 100)}
TOPIC = "cpu-ab"


def _variants(args: argparse.Namespace) -> dict[str, Peer]:
    peers = {"kafkapy": kafkapy_peer()}
    if args.base_tree:
        peers["base"] = kafkapy_peer(name="base", root=Path(args.base_tree).resolve())
    for spec in args.variant:
        name, _, settings = spec.partition(":")
        pairs = [s.split("=", 1) for s in settings.split(",") if s]
        if not name or name in peers or any(len(p) != 2 for p in pairs):
            raise SystemExit(f"--variant {spec!r}: expected a new NAME:key=value[,key=value]")
        peers[name] = kafkapy_peer({k: v for k, v in pairs}, name=name)
    if args.ceiling_write:
        peers["ceiling-write"] = PEERS["ceiling-write"]
    return peers


def _run(peer: Peer, load: str, duration: float, connections: int = 1) -> dict[str, float]:
    records, size = LOADS[load]
    with RunningBroker(peer) as broker:
        real = peer.ready == "metadata"
        if real:
            create_topic(broker.bootstrap, TOPIC, connections)
        meter = Meter(broker.pid)
        jobs = [(lg.produce_client, lg.ProduceJob(broker.bootstrap, TOPIC, (p,), records, size,
                                                  1, 5, duration))
                for p in range(connections)]
        results: list[dict[str, Any]] = lg.run_clients(jobs, meter)
        window = meter.noise(sum(r["cpu"] for r in results))
        acknowledged = sum(r["records"] for r in results)
        if real:
            stored = stored_records(broker.bootstrap, TOPIC, connections)
            if stored != acknowledged:
                raise RuntimeError(f"{peer.name}: {acknowledged} records acknowledged, "
                                   f"{stored} in the log")
    payload, seconds = lg.aggregate(results, "payload_bytes")
    requests = sum(r["requests"] for r in results)
    rate = requests / seconds if load == "1rec" else payload / seconds
    return {"rate": rate / 1e3 if load == "1rec" else rate / 1e6,
            "us_per_request": window["broker_cpu"] / requests * 1e6,
            "busy": window["broker_cpu"] / window["wall"],
            "other": window["other_cores"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--load", choices=sorted(LOADS), default="1rec")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=5.0, help="seconds per run")
    ap.add_argument("--connections", type=int, default=1,
                    help="producer connections (processes), one partition each")
    ap.add_argument("--base-tree", help="another checkout, built in place: variant 'base'")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME:key=value[,key=value]: this tree with settings overridden")
    ap.add_argument("--ceiling-write", action="store_true",
                    help="also the minimal server that writes every frame before answering")
    args = ap.parse_args()
    peers = _variants(args)
    unit = "k requests/s" if args.load == "1rec" else "MB/s"
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in peers}
    names = list(peers)
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            run = _run(peers[name], args.load, args.duration, args.connections)
            runs[name].append(run)
            print(f"round {r} {name:14s} {run['rate']:8.1f} {unit}  {run['us_per_request']:7.1f}"
                  f" µs/request  broker busy {run['busy']:.2f}  other CPU {run['other']:.2f}"
                  f" cores", flush=True)
    first = names[0]
    print(f"\n{args.load}, {args.connections} connection(s), {args.rounds} rounds of "
          f"{args.duration:g} s; median (min-max); ratios are the median of the per-round "
          f"ratios to {first}")
    print(f"| variant | {unit} | broker CPU per request, µs | rate / {first} "
          f"| CPU per request / {first} |")
    print("|---|---|---|---|---|")
    for name in names:
        rates = [x["rate"] for x in runs[name]]
        cpus = [x["us_per_request"] for x in runs[name]]
        rate_ratio = statistics.median(
            x["rate"] / y["rate"] for x, y in zip(runs[name], runs[first], strict=True))
        cpu_ratio = statistics.median(
            x["us_per_request"] / y["us_per_request"]
            for x, y in zip(runs[name], runs[first], strict=True))
        print(f"| {name} | {statistics.median(rates):.1f} ({min(rates):.1f}-{max(rates):.1f}) "
              f"| {statistics.median(cpus):.1f} ({min(cpus):.1f}-{max(cpus):.1f}) "
              f"| {rate_ratio:.2f}x | {cpu_ratio:.2f}x |")


if __name__ == "__main__":
    main()
