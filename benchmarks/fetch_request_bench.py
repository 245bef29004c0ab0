"""The broker's CPU per Fetch request in ``KafkaApis.handle``, A/B between two source trees
(issue 22 part 2: the compiled Fetch decode and answer encode).

    python -m benchmarks.fetch_request_bench --base-tree /path/to/other/checkout [--reps 5]

What ``broker_bench``'s raw fetch hides: at 1 MiB per answer the broker's time is the kernel's
``sendfile`` copy and the poll loop, not the per-request Python this measures; and on a machine
shared with other developers, the CPU per request of a socket-driven run moves by 2x with the
neighbours. So this drives the request path itself: a real broker (``KafkaServer``, its log,
fetch sessions, quotas, request metrics off) runs in this process's Trio loop, and each Fetch
frame goes through ``server.apis.handle(Request(...))`` exactly as the SocketServer hands it
over; the thread CPU time (``time.thread_time``) per request is measured over ``--requests``
requests, the best of 5 rounds (the least disturbed by the neighbours). Each tree runs in its
own process (``PYTHONPATH`` = the tree), alternating, ``--reps`` times; the table gives
medians (min-max) of the per-process figures. ``--instructions`` counts instead the
instructions per request under valgrind's cachegrind (the child at N and 3N requests, the
difference over 2N): slow, but the same on a busy machine as on a quiet one.

Shapes (Fetch v11, as librdkafka and kafka-python send it, one partition):

- ``empty``: at the log end with MaxWaitMs 0: the partition's watermarks, no records;
- ``one_batch``: from offset 0 of a partition holding one batch (16 records of 64 B): one
  file slice in the answer;
- ``session``: ``one_batch`` in a fetch session (KIP-227: a full fetch opens it, then
  incremental fetches naming no partition), as a follower's and librdkafka's fetchers send.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TOPIC = "fetch-request-bench"
RECORDS = 16
SHAPES = ("empty", "one_batch", "session")


def _child(requests: int, shapes: tuple[str, ...] = SHAPES,
           rounds: int = 5) -> dict[str, float]:
    """Runs in the tree's own process: the broker in this loop, ``shapes`` measured (µs of
    thread CPU per request, the best of ``rounds`` rounds of ``requests``)."""
    import struct

    import trio

    from kafkapy import _records
    from kafkapy.config import BrokerConfig
    from kafkapy.network.request_channel import Request, SendResponse
    from kafkapy.protocol.codec import Request as ProtocolRequest
    from kafkapy.protocol.codec import encode_request
    from kafkapy.protocol.message_classes import (
        CreatableTopic,
        CreateTopicsRequest,
        FetchPartition,
        FetchRequest,
        FetchTopic,
        PartitionProduceData,
        ProduceRequest,
        RequestHeader,
        TopicProduceData,
    )
    from kafkapy.server.kafka_server import KafkaServer

    def frame(api_key: int, version: int, body: Any) -> bytes:
        header = RequestHeader(api_key=api_key, api_version=version, correlation_id=7,
                               client_id="fetch-request-bench")
        return encode_request(ProtocolRequest(header, body))

    def fetch(offset: int, session_id: int, epoch: int, partitions: bool) -> bytes:
        return frame(1, 11, FetchRequest(
            replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=50 << 20,
            isolation_level=0, session_id=session_id, session_epoch=epoch,
            topics=[FetchTopic(topic=TOPIC, partitions=[FetchPartition(
                partition=0, current_leader_epoch=-1, fetch_offset=offset,
                log_start_offset=-1, partition_max_bytes=1024)])] if partitions else [],
            forgotten_topics_data=[], rack_id=""))

    async def handle(server: KafkaServer, data: bytes | bytearray) -> bytes:
        response = await server.apis.handle(
            Request("c-1", "PLAINTEXT", "127.0.0.1", 40000, data, time.monotonic_ns()))
        assert isinstance(response, SendResponse), response
        return response.payload

    async def measure(server: KafkaServer, data: bytes | bytearray,
                      next_request: Any = None) -> float:
        best = float("inf")
        for _ in range(rounds):
            t0 = time.thread_time()
            for _ in range(requests):
                if next_request is not None:
                    next_request()
                await handle(server, data)
            best = min(best, (time.thread_time() - t0) / requests)
        return best

    async def main() -> dict[str, float]:
        data_dir = tempfile.mkdtemp(prefix="fetch-request-bench-")
        config = BrokerConfig.from_properties({
            "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": data_dir})
        server = KafkaServer(config)
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            await handle(server, frame(19, 4, CreateTopicsRequest(topics=[CreatableTopic(
                name=TOPIC, num_partitions=1, replication_factor=1)], timeout_ms=10_000)))
            batch = _records.build_batch([(None, b"x" * 64, [], 1_700_000_000_000)] * RECORDS)
            produced = await handle(server, frame(0, 7, ProduceRequest(
                acks=1, timeout_ms=10_000, topic_data=[TopicProduceData(
                    name=TOPIC, partition_data=[PartitionProduceData(index=0,
                                                                     records=batch)])])))
            error = struct.unpack_from(">h", produced, 4 + 4 + 2 + len(TOPIC) + 4 + 4)[0]
            assert error == 0, f"produce failed: {error}"
            out: dict[str, float] = {}
            if "empty" in shapes:
                out["empty"] = await measure(server, fetch(RECORDS, 0, -1, True))
            if "one_batch" in shapes:
                out["one_batch"] = await measure(server, fetch(0, 0, -1, True))
            if "session" in shapes:
                opened = await handle(server, fetch(0, 0, 0, True))
                session_id = struct.unpack_from(">i", opened, 4 + 4 + 2)[0]
                assert session_id, "no fetch session"
                # incremental fetches naming no partition: the epoch moves on each time
                incremental = bytearray(fetch(0, session_id, 1, False))
                at = incremental.find(struct.pack(">ii", session_id, 1)) + 4
                epoch = [0]

                def next_epoch() -> None:
                    epoch[0] += 1
                    struct.pack_into(">i", incremental, at, epoch[0])

                out["session"] = await measure(server, incremental, next_epoch)
                next_epoch()        # the epochs were in step: the next one is answered
                assert struct.unpack_from(">h", await handle(server, incremental), 8)[0] == 0
                # and the same one again is refused (INVALID_FETCH_SESSION_EPOCH)
                assert struct.unpack_from(">h", await handle(server, incremental), 8)[0] != 0
            nursery.cancel_scope.cancel()
        return {k: v * 1e6 for k, v in out.items()}

    return trio.run(main)


def _run_child(name: str, root: Path, args: list[str],
               wrapper: list[str] | None = None) -> tuple[dict[str, float], str]:
    """One child process on the tree at ``root``: its result and its stderr."""
    # Run as a script (not -m from this tree's root, which would put this tree's kafkapy first
    # on the path): the tree's kafkapy is the first one found, checked below.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([*(wrapper or []), sys.executable, __file__, "--child", *args],
                          cwd=root, env=env, check=True, capture_output=True, text=True,
                          timeout=1200)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    imported = Path(result.pop("kafkapy")).resolve()
    if not imported.is_relative_to(root):
        raise RuntimeError(f"{name}: imported {imported}, not the tree's kafkapy")
    return result, done.stderr


def _instructions(trees: list[tuple[str, Path]], requests: int) -> int:
    """Instructions per request, per shape and tree: the whole child counted by cachegrind
    at ``requests`` and at 3x as many (one round each), the difference divided by the extra
    requests, so start-up and set-up cancel out."""
    wrapper = ["valgrind", "--tool=cachegrind", "--cache-sim=no",
               "--cachegrind-out-file=/dev/null"]
    table: dict[tuple[str, str], float] = {}
    for shape in SHAPES:
        for name, root in trees:
            counts = []
            for n in (requests, 3 * requests):
                _, err = _run_child(name, root, ["--requests", str(n), "--shapes", shape,
                                                 "--rounds", "1"], wrapper)
                line = next(x for x in err.splitlines() if "I   refs:" in x or "I refs:" in x)
                counts.append(int(line.split(":")[1].replace(",", "").strip()))
            table[(shape, name)] = (counts[1] - counts[0]) / (2 * requests)
            print(f"{shape:9s} {name:13s} {table[(shape, name)]:,.0f} instructions/request",
                  flush=True)
    print("\n| shape | " + " | ".join(name for name, _ in trees) + " | new / base |")
    print("|---|---|---|---|")
    for shape in SHAPES:
        a, b = (table[(shape, name)] for name, _ in trees)
        print(f"| {shape} | {a:,.0f} | {b:,.0f} | {a / b:.2f} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-tree", type=Path)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions per request under valgrind (cachegrind) instead "
                         "of timing: immune to the neighbours, slow (a minute per run)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--shapes", default=",".join(SHAPES), help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=5, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        import kafkapy
        result = _child(args.requests, tuple(args.shapes.split(",")), args.rounds)
        print(json.dumps({"kafkapy": kafkapy.__file__, **result}))
        return 0
    if args.base_tree is None:
        ap.error("--base-tree is required")
    here = Path(__file__).resolve().parent.parent
    trees = [("kafkapy", here), ("kafkapy-base", args.base_tree.resolve())]
    if args.instructions:
        return _instructions(trees, args.requests)
    runs: dict[tuple[str, str], list[float]] = {}
    for rep in range(args.reps):
        for name, root in (trees if rep % 2 == 0 else trees[::-1]):
            t0 = time.monotonic()
            result, _ = _run_child(name, root, ["--requests", str(args.requests)])
            load = os.getloadavg()[0]
            for shape, us in result.items():
                runs.setdefault((shape, name), []).append(us)
            print(f"rep {rep} {name:13s} " + ", ".join(f"{k} {v:.1f} µs" for k, v in
                                                      result.items())
                  + f"  [{time.monotonic() - t0:.0f} s, load {load:.2f}]", flush=True)
    print("\n| shape | " + " | ".join(name for name, _ in trees) + " | new / base |")
    print("|---|---|---|---|")
    for shape in SHAPES:
        cells = []
        medians = []
        for name, _ in trees:
            xs = runs[(shape, name)]
            medians.append(statistics.median(xs))
            cells.append(f"{statistics.median(xs):.1f} ({min(xs):.1f}-{max(xs):.1f})")
        print(f"| {shape} | " + " | ".join(cells) + f" | {medians[0] / medians[1]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
