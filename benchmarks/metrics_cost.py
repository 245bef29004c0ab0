"""What recording and serving metrics costs, per request and per scrape, in process.

    PYTHONPATH=. python -m benchmarks.metrics_cost [--rounds 7]

End-to-end A/B runs (``broker_bench --metrics``) on this small shared machine drift by more
than the difference they look for, so this times the added work itself, each figure the
minimum over ``--rounds`` rounds (the least disturbed one):

- per request: what a request pays with metrics on (``Request.timings`` list, the three marks
  ``KafkaApis`` takes, the two timestamps of the connection task, ``BrokerMetrics.request_done``);
- per partition appended: ``BrokerTopicStats.produced``;
- per scrape, with ``--partitions`` partitions, ``--groups`` groups of one committed offset
  per partition each, and 20 APIs with full reservoirs: ``BrokerMetrics.capture()``, the
  copies taken on the broker's event loop (the loop is held that long), and ``families()``,
  the samples built in the HTTP server's thread (CPU, but not the loop's time).
"""

from __future__ import annotations

import argparse
import time
from types import SimpleNamespace
from typing import Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol import API_KEYS
from kafkapy.server.metrics import BrokerMetrics
from kafkapy.server.metrics.broker_metrics import families


def _best(fn: Any, calls: int, rounds: int) -> float:
    """Seconds per call, the best round."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def per_request(rounds: int) -> float:
    metrics = BrokerMetrics(SimpleNamespace(), {k: a.name for k, a in API_KEYS.items()})
    frame = bytes([0, 0, 0, 9]) + b"\0" * 60
    now = time.monotonic_ns

    def one() -> None:
        request = SimpleNamespace(frame=frame, receive_time_ns=now(), timings=[0])
        marks = request.timings
        marks.append(now())
        marks.append(now())
        ready = now()
        metrics.request_done(request, ready, now())

    return _best(one, 20_000, rounds)


def per_partition(rounds: int) -> float:
    metrics = BrokerMetrics(SimpleNamespace(), {})
    stats = metrics.topic_stats
    return _best(lambda: stats.produced("orders", 64, 65_536), 50_000, rounds)


def per_scrape(rounds: int, partitions: int, groups: int) -> tuple[float, float]:
    tps = [TopicPartition(f"topic-{i % 50}", i // 50) for i in range(partitions)]
    parts = {tp: SimpleNamespace(is_leader=True, isr=[1], replicas=[1], high_watermark=1000)
             for tp in tps}
    state = SimpleNamespace(value="Stable")
    group_list = {f"g{g}": SimpleNamespace(group_id=f"g{g}", state=state,
                                           offsets={tp: SimpleNamespace(offset=900)
                                                    for tp in tps})
                  for g in range(groups)}
    server = SimpleNamespace(
        replica_manager=SimpleNamespace(partitions=parts), controller=None,
        request_channel=SimpleNamespace(queued=0),
        group_coordinator=SimpleNamespace(groups=group_list,
                                          manager=SimpleNamespace(loading=set())),
        transaction_coordinator=SimpleNamespace(state=SimpleNamespace(loading=set())))
    names = {k: a.name for k, a in API_KEYS.items()}
    metrics = BrokerMetrics(server, names)
    for tp in tps:
        metrics.topic_stats.produced(tp.topic, 10, 1000)
    for key in list(names)[:20]:
        frame = bytes([key >> 8, key & 255, 0, 1])
        for i in range(1028):
            metrics.request_done(SimpleNamespace(frame=frame, receive_time_ns=0,
                                                 timings=[0, i, 2 * i, 3 * i]), 4 * i,
                                   5 * i)
    captured = metrics.capture()
    return _best(metrics.capture, 3, rounds), _best(lambda: families(captured), 3, rounds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--groups", type=int, default=10)
    args = ap.parse_args()
    print(f"per request: {per_request(args.rounds) * 1e6:.2f} us")
    print(f"per partition appended: {per_partition(args.rounds) * 1e9:.0f} ns")
    loop, thread = per_scrape(args.rounds, args.partitions, args.groups)
    print(f"per scrape ({args.partitions} partitions, {args.groups} groups x "
          f"{args.partitions} offsets, 20 APIs): {loop * 1e3:.1f} ms on the event loop "
          f"(capture), {thread * 1e3:.1f} ms in the HTTP thread (families)")


if __name__ == "__main__":
    main()
