"""Interleaved A/B ratios for the protocol benchmarks (kafkapy vs kafka-python).

This machine class is a small VM whose speed drifts by 2x within seconds, so medians from two
pytest-benchmark runs taken one after the other can be far apart. Here each round times both
implementations back to back, and the ratio is taken per round: the drift cancels out.

    python benchmarks/ab.py [rounds]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.test_protocol_bench import (
    CASES,
    _kafka_python_round_trip,
    _kafkapy_round_trip,
)
from kafkapy.protocol import decode, encode


def _per_call(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main(rounds: int) -> None:
    for case, (message, version, make, kp_class) in CASES.items():
        value = make()
        data = encode(message, version, value)
        kp_value = kp_class.decode(data, version=version)
        flexible = version >= 9
        pairs = {
            "decode": (partial(decode, message, version, data),
                       partial(kp_class.decode, data, version=version)),
            "encode": (partial(encode, message, version, value),
                       partial(kp_value._struct.encode, kp_value, version=version,
                               compact=flexible, tagged=flexible)),
            "encode+decode": (partial(_kafkapy_round_trip, message, version, value),
                              partial(_kafka_python_round_trip, kp_class, kp_value, version)),
        }
        for what, (ours, theirs) in pairs.items():
            calls = max(1, int(0.002 / _per_call(ours, 3)))  # ~2 ms of ours per round
            ratios, ours_t, theirs_t = [], [], []
            for _ in range(rounds):
                a = _per_call(ours, calls)
                b = _per_call(theirs, max(1, calls // 10))
                ours_t.append(a)
                theirs_t.append(b)
                ratios.append(b / a)
            print(f"{what:13s} {case:26s} kafkapy {statistics.median(ours_t) * 1e6:9.1f} us  "
                  f"kafka-python {statistics.median(theirs_t) * 1e6:9.1f} us  "
                  f"ratio median {statistics.median(ratios):5.1f}x "
                  f"(quartiles {statistics.quantiles(ratios, n=4)[0]:.1f}-"
                  f"{statistics.quantiles(ratios, n=4)[2]:.1f})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
