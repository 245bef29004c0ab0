"""Scale on one broker (issue 22, part 3): many partitions, and recovery of a big log.

    PYTHONPATH=. python benchmarks/scale_bench.py partitions [--n 1000 3000 10000]
                                                  [--restarts 3] [--dir DIR]
    PYTHONPATH=. python benchmarks/scale_bench.py recovery [--gib 5] [--partitions 8]
    PYTHONPATH=. python benchmarks/scale_bench.py all ...

prints a Markdown table per run and a JSON line per measurement (``--json FILE``: appended).

What is measured, and how:

- The broker is the standalone ``python -m kafkapy`` (``benchmarks.peers.kafkapy_peer``, INFO
  logs into ``broker.log`` of the data dir, so recovery lines can be counted), in a child
  process on a data directory of its own that outlives restarts; the directory is removed at
  the end of each run.
- ``partitions``: N partitions as topics of ``--per-topic`` (100) partitions, created with
  confluent-kafka's AdminClient, ``--batch`` (10) topics per CreateTopics request. Then
  10 records to every partition (one confluent-kafka producer, ``linger.ms`` 50), timed to
  the last delivery report. Metadata for all topics: ``--metadata`` (20) requests on one raw
  socket, v12 (what current clients send), each timed from ``sendall`` to the last byte of
  the answer (no client decode); median and p99 (with 20 samples, p99 is the largest).
  Then the broker's VmRSS, its open descriptors (``/proc/pid/fd``) and mappings
  (``/proc/pid/maps`` lines). Then ``--restarts`` times: SIGTERM and the time to exit (clean
  shutdown: flush, index trim, checkpoints), a fresh start on the same directory, timed from
  ``Popen`` to the first ApiVersions answer and to every partition online (Metadata shows
  all N with a leader and no error), and RSS / fds / maps again after the start.
- ``recovery``: ``--partitions`` partitions filled with ``--gib`` GiB of ~1 MiB batches
  (1,000 records of 1 KiB, the most under ``message.max.bytes``; raw ProduceRequests from
  ``benchmarks.load_generator``, acks 1, 5 in flight); then SIGKILL (nothing is flushed or
  checkpointed: the recovery point is the last checkpoint's, so with the default
  ``segment.bytes`` of 1 GiB every byte is unflushed), a restart, and the time to
  ApiVersions and to all partitions online. The bytes re-validated are the broker's own
  account: Kafka's "Recovering unflushed segment" line per segment and kafkapy's
  "recovered n/m segments, x of y MB" progress lines, so the GB/s quoted is bytes the broker
  walked and CRC-checked, over the broker's "loaded N log(s) in X ms" (LogManager.load) and,
  as the user sees it, over process start to all partitions online. The page cache is warm
  (the files were just written): this is the CPU cost of the walk, as a restart after a
  process crash (not a machine crash) sees it.
- *other CPU*: the machine's busy CPU (``/proc/stat``) minus the broker's and this process's,
  in cores, over each measured window (``broker_bench.Meter``); the machine is shared, so
  every figure carries it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import load_generator as lg
from benchmarks.broker_bench import Meter
from benchmarks.peers import (
    HOST,
    free_port,
    kafkapy_peer,
    proc_rss_kib,
    read_frame,
    request_frame,
)
from kafkapy.protocol import decode_response, request_class

TIMEOUT = 600.0
METADATA_VERSION = 12


# ------------------------------------------------------------------------------ the broker

class Broker:
    """One data directory and the broker process currently running on it (if any)."""

    def __init__(self, data_dir: Path, overrides: dict[str, str] | None = None,
                 tree: str | None = None) -> None:
        self.data_dir = data_dir
        # Another checkout's kafkapy for the broker (an A/B), its compiled modules in place.
        self.env = {**os.environ, "PYTHONPATH": tree} if tree else None
        self.port = free_port()
        self.peer = kafkapy_peer(overrides or {})
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir / "broker.log"

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> float:
        """Start the broker; returns ``perf_counter`` at ``Popen``."""
        argv = self.peer.command(self.port, str(self.data_dir / "logs"))
        argv[argv.index("WARNING")] = "INFO"
        log = open(self.log_path, "ab")
        started = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, cwd=self.data_dir,
                                     env=self.env, start_new_session=True)
        log.close()
        return started

    def wait(self, check: Callable[[], bool], timeout: float = TIMEOUT) -> float:
        """Poll ``check`` until it is true; returns ``perf_counter`` then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"the broker exited with {self.proc.returncode}:\n"
                                   f"{self.log_text()[-3000:]}")
            try:
                if check():
                    return time.perf_counter()
            except (OSError, ConnectionError, ValueError):
                pass
            time.sleep(0.02)
        raise RuntimeError(f"no answer within {timeout} s:\n{self.log_text()[-3000:]}")

    def stop(self) -> float:
        """SIGTERM (controlled shutdown); returns the seconds until the process exited."""
        assert self.proc is not None
        started = time.perf_counter()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("the broker did not stop on SIGTERM") from None
        return time.perf_counter() - started

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def process_counts(self) -> dict[str, float]:
        """RSS (MiB), open descriptors and memory mappings of the broker now."""
        pid = self.pid
        with open(f"/proc/{pid}/maps") as f:
            maps = sum(1 for _ in f)
        return {"rss_mib": proc_rss_kib(pid) / 1024, "fds": len(os.listdir(f"/proc/{pid}/fd")),
                "maps": maps}


# ------------------------------------------------------------------------------ requests

def api_versions_answers(address: tuple[str, int]) -> bool:
    with socket.create_connection(address, timeout=5.0) as sock:
        sock.sendall(request_frame(18, 0, request_class(18)(), 1))
        return len(read_frame(sock)) > 0


def metadata_frame(correlation_id: int) -> bytes:
    return request_frame(3, METADATA_VERSION, request_class(3)(
        topics=None, allow_auto_topic_creation=False), correlation_id)


def online_partitions(address: tuple[str, int]) -> int:
    """Partitions with a leader and no error in a Metadata answer for all topics."""
    with socket.create_connection(address, timeout=30.0) as sock:
        sock.sendall(metadata_frame(5))
        body = decode_response(3, METADATA_VERSION, read_frame(sock)).body
    return sum(1 for t in body.topics if t.error_code == 0
               for p in t.partitions if p.error_code == 0 and p.leader_id >= 0)


def metadata_latencies(address: tuple[str, int], count: int) -> tuple[list[float], int]:
    """``count`` all-topic Metadata round trips on one connection, in ms (send to last byte
    received, not decoded), and the answer's size."""
    out = []
    size = 0
    with socket.create_connection(address, timeout=30.0) as sock:
        for i in range(count):
            frame = metadata_frame(100 + i)
            t0 = time.perf_counter()
            sock.sendall(frame)
            answer = read_frame(sock)
            out.append((time.perf_counter() - t0) * 1000)
            size = len(answer)
            if struct.unpack_from(">i", answer)[0] != 100 + i:
                raise RuntimeError("Metadata answer with the wrong correlation id")
    return out, size


def create_topics(bootstrap: str, partitions: int, per_topic: int, batch: int) -> list[str]:
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 120000})
    names = [f"scale-{i:05d}" for i in range(-(-partitions // per_topic))]
    for i in range(0, len(names), batch):
        topics = [NewTopic(n, min(per_topic, partitions - j * per_topic), 1)
                  for j, n in enumerate(names) if i <= j < i + batch]
        for fut in admin.create_topics(topics, request_timeout=120).values():
            fut.result(TIMEOUT)
    return names


def produce_everywhere(bootstrap: str, topics: list[str], partitions: int, per_topic: int,
                       records: int) -> int:
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50,
                         "queue.buffering.max.messages": 2_000_000,
                         "message.timeout.ms": int(TIMEOUT * 1000)})
    errors: list[object] = []

    def report(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(err)
    value = b"x" * 100
    sent = 0
    for j, topic in enumerate(topics):
        for p in range(min(per_topic, partitions - j * per_topic)):
            for _ in range(records):
                while True:
                    try:
                        producer.produce(topic, value, partition=p, on_delivery=report)
                        break
                    except BufferError:
                        producer.poll(0.1)
                sent += 1
    if producer.flush(TIMEOUT):
        raise RuntimeError("produce did not finish")
    if errors:
        raise RuntimeError(f"{len(errors)} records failed, first: {errors[0]}")
    return sent


# ------------------------------------------------------------------------------ runs

def _other(meter: Meter) -> float:
    return round(meter.noise(0.0)["other_cores"], 2)


def metered(broker: Broker, fn: Callable[[], Any]) -> tuple[Any, float]:
    meter = Meter(broker.pid)
    meter.begin()
    result = fn()
    meter.end()
    return result, _other(meter)


def timed_start(broker: Broker, partitions: int) -> dict[str, float]:
    address = (HOST, broker.port)
    started = broker.start()
    meter = Meter(broker.pid)
    meter.begin()
    api = broker.wait(lambda: api_versions_answers(address))
    online = broker.wait(lambda: online_partitions(address) >= partitions)
    meter.end()
    loads = _LOADED.findall(broker.log_text())
    return {"start_api_s": api - started, "start_online_s": online - started,
            "start_other_cores": _other(meter),
            # The broker's own figure for LogManager.load (the last start's line).
            "log_load_s": int(loads[-1]) / 1000 if loads else -1.0}


def run_partitions(args: argparse.Namespace, n: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix=f"scale-{n}-", dir=args.dir))
    broker = Broker(root, {"num.partitions": "1"}, args.tree)
    out: dict[str, Any] = {"scenario": "partitions", "partitions": n, "tree": args.tree}
    address = (HOST, broker.port)
    try:
        broker.start()
        broker.wait(lambda: api_versions_answers(address), 60)
        t0 = time.perf_counter()
        topics, out["create_other_cores"] = metered(
            broker, lambda: create_topics(broker.bootstrap, n, args.per_topic, args.batch))
        broker.wait(lambda: online_partitions(address) >= n)
        out["create_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        out["records"], out["produce_other_cores"] = metered(
            broker, lambda: produce_everywhere(broker.bootstrap, topics, n, args.per_topic,
                                               args.records))
        out["produce_s"] = time.perf_counter() - t0
        (lat, out["metadata_bytes"]), out["metadata_other_cores"] = metered(
            broker, lambda: metadata_latencies(address, args.metadata))
        out["metadata_ms"] = lat
        out["loaded"] = broker.process_counts()
        stops, starts, after = [], [], []
        for _ in range(args.restarts):
            stops.append(broker.stop())
            starts.append(timed_start(broker, n))
            after.append(broker.process_counts())
        (lat2, _size), other2 = metered(broker, lambda: metadata_latencies(address,
                                                                           args.metadata))
        out["metadata_ms_after_restart"] = lat2
        out["metadata_after_restart_other_cores"] = other2
        out["stop_s"] = stops
        out["starts"] = starts
        out["restarted"] = after
        stops.append(broker.stop())
    finally:
        broker.kill()
        shutil.rmtree(root, ignore_errors=True)
    return out


_RECOVERING = re.compile(r"Recovering unflushed segment (\d+)\. \d+/\d+ recovered for (\S+)\.")
_PROGRESS = re.compile(r"(\S+): recovered (\d+)/(\d+) segments, ([\d.]+) of ([\d.]+) MB")
_LOADED = re.compile(r"loaded \d+ log\(s\) from \S+ in (\d+) ms")


def recovery_lines(text: str) -> dict[str, Any]:
    """What the broker's log says it recovered: segments, and MB per partition (the last
    progress line of each partition carries its total)."""
    segments = _RECOVERING.findall(text)
    done: dict[str, float] = {}
    for tp, _i, _n, mb, _total in _PROGRESS.findall(text):
        done[tp] = float(mb)
    return {"segments_recovered": len(segments), "partitions_recovered": len(done),
            "mb_recovered": sum(done.values())}


def run_recovery(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="scale-recovery-", dir=args.dir))
    broker = Broker(root, {"num.partitions": str(args.partitions)}, args.tree)
    out: dict[str, Any] = {"scenario": "recovery", "partitions": args.partitions,
                           "tree": args.tree}
    address = (HOST, broker.port)
    try:
        broker.start()
        broker.wait(lambda: api_versions_answers(address), 60)
        from benchmarks.broker_bench import create_topic
        create_topic(broker.bootstrap, "big", args.partitions)
        parts = tuple(range(args.partitions))
        frames = lg.produce_frames("big", parts, 1000, 1024, 1, 2 * len(parts))
        batch_bytes = len(frames[0])
        requests = int(args.gib * (1 << 30)) // batch_bytes
        t0 = time.perf_counter()

        def fill() -> int:
            with socket.create_connection(address) as sock:
                return lg.produce_loop(sock, frames, 5, time.perf_counter() + TIMEOUT,
                                       requests)
        answered, out["fill_other_cores"] = metered(broker, fill)
        out["fill_s"] = time.perf_counter() - t0
        out["filled_gb"] = answered * batch_bytes / 1e9
        out["loaded"] = broker.process_counts()
        broker.kill()                               # SIGKILL: nothing flushed or written
        broker.log_path.rename(root / "before-kill.log")
        start = timed_start(broker, args.partitions)
        out.update(start)
        text = broker.log_text()
        out.update(recovery_lines(text))
        out["restarted"] = broker.process_counts()
        out["recovery_gb_per_s_start_to_online"] = \
            out["mb_recovered"] / 1000 / out["start_online_s"]
        out["recovery_gb_per_s_log_load"] = out["mb_recovered"] / 1000 / out["log_load_s"]
        # The broker's own figure: its per-partition "x MB/s" progress lines.
        out["broker_lines"] = [line for line in text.splitlines()
                               if "recovering" in line.lower()][-12:]
        broker.stop()
    finally:
        broker.kill()
        shutil.rmtree(root, ignore_errors=True)
    return out


# ------------------------------------------------------------------------------ report

def _spread(values: list[float], fmt: str = "{:.2f}") -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    return (fmt.format(med) + " (" + fmt.format(min(values)) + "-" + fmt.format(max(values))
            + ")")


def partitions_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| partitions | create s | produce 10/partition s | Metadata ms median, p99 "
             "(bytes) | RSS MiB | fds | maps | clean stop after produce s | clean stop, idle s | "
             "start: ApiVersions s | "
             "start: all online s | of which log load s | RSS MiB after start | "
             "fds, maps after start | other CPU (cores) |",
             "|---:|---:|---:|---|---:|---:|---:|---:|---|---|---|---|---:|---|---|"]
    for r in rows:
        lat = sorted(r["metadata_ms"])
        starts = r["starts"]
        others = [r["create_other_cores"], r["produce_other_cores"],
                  r["metadata_other_cores"], *(s["start_other_cores"] for s in starts)]
        lines.append(
            f"| {r['partitions']:,} | {r['create_s']:.1f} | {r['produce_s']:.1f} | "
            f"{statistics.median(lat):.1f}, {lat[-1]:.1f} ({r['metadata_bytes']:,}) | "
            f"{r['loaded']['rss_mib']:.0f} | {r['loaded']['fds']:,} | "
            f"{r['loaded']['maps']:,} | {r['stop_s'][0]:.2f} | {_spread(r['stop_s'][1:])} | "
            f"{_spread([s['start_api_s'] for s in starts])} | "
            f"{_spread([s['start_online_s'] for s in starts])} | "
            f"{_spread([s['log_load_s'] for s in starts])} | "
            f"{statistics.median(a['rss_mib'] for a in r['restarted']):.0f} | "
            f"{r['restarted'][-1]['fds']:,}, {r['restarted'][-1]['maps']:,} | "
            f"{statistics.median(others):.2f} (max {max(others):.2f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["partitions", "recovery", "all"])
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 3000, 10000])
    ap.add_argument("--per-topic", type=int, default=100)
    ap.add_argument("--batch", type=int, default=10, help="topics per CreateTopics request")
    ap.add_argument("--records", type=int, default=10, help="records per partition")
    ap.add_argument("--metadata", type=int, default=20, help="Metadata requests timed")
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--gib", type=float, default=5.0)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--dir", default=None, help="where the data directories go (/tmp)")
    ap.add_argument("--json", default=None, help="append each result as a JSON line here")
    ap.add_argument("--tree", default=None,
                    help="run the broker from another checkout (A/B; compiled modules built "
                         "in place there)")
    args = ap.parse_args(argv)
    rows = []
    if args.what in ("partitions", "all"):
        for n in args.n:
            r = run_partitions(args, n)
            rows.append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
        print(partitions_table(rows))
    if args.what in ("recovery", "all"):
        r = run_recovery(args)
        print(json.dumps(r), file=sys.stderr, flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(r) + "\n")
        print(f"\nrecovery: {r['filled_gb']:.2f} GB in {args.partitions} partitions; "
              f"re-validated {r['mb_recovered'] / 1000:.2f} GB in "
              f"{r['segments_recovered']} segments; ApiVersions after {r['start_api_s']:.1f} s,"
              f" online after {r['start_online_s']:.1f} s = "
              f"{r['recovery_gb_per_s_start_to_online']:.2f} GB/s start to online; "
              f"log load {r['log_load_s']:.2f} s = {r['recovery_gb_per_s_log_load']:.2f} GB/s "
              f"(other CPU {r['start_other_cores']:.2f} cores)")


if __name__ == "__main__":
    main()
