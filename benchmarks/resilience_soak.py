"""The resilience scenarios in a loop for N minutes: issue 18's soak.

One 3-broker ``kafkapy.Cluster`` (the CI suite's settings); the scenarios of
``tests/resilience/scenarios.py`` and ``coordinator_scenarios.py`` run one after another,
round robin, until ``--minutes`` have passed (a scenario started before the end runs to its
end). Prints each run's counts as it finishes and, at the end, the totals per scenario: runs,
acknowledged records, and the lost, duplicated, reordered, inconsistent and failed-but-read
counts (and the coordinator scenarios' rewound, skipped, aborted-read, partial and hanging
counts), plus runs whose producer hit a fatal error or that raised. Exits 1 if any count is
non-zero.

    PYTHONPATH=. python benchmarks/resilience_soak.py --minutes 30
    PYTHONPATH=. python benchmarks/resilience_soak.py --minutes 5 --only hard-bounce --rounds 5
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import defaultdict

import kafkapy
from tests.resilience.checker import GROUP_KINDS, KINDS, TXN_KINDS
from tests.resilience.coordinator_scenarios import COORDINATOR_SCENARIOS
from tests.resilience.scenarios import SCENARIOS as DATA_SCENARIOS
from tests.resilience.scenarios import SETTINGS, restore_brokers

SCENARIOS = {**DATA_SCENARIOS, **COORDINATOR_SCENARIOS}
# Every count any scenario's checker keeps, in a stable order.
ALL_KINDS = tuple(dict.fromkeys((*KINDS, *TXN_KINDS, *GROUP_KINDS)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=5,
                        help="bounces per run of the bounce scenarios (Kafka's test: 5)")
    parser.add_argument("--only", action="append", choices=sorted(SCENARIOS),
                        help="run only these scenarios (repeatable)")
    args = parser.parse_args()
    names = args.only or list(SCENARIOS)
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seconds: dict[str, float] = defaultdict(float)
    end = time.monotonic() + args.minutes * 60
    with kafkapy.Cluster(3, SETTINGS, timeout=60) as cluster:
        i = 0
        while time.monotonic() < end:
            name = names[i % len(names)]
            i += 1
            t = totals[name]
            t["runs"] += 1
            started = time.monotonic()
            try:
                rounds = args.rounds if name.endswith(("bounce", "coordinator")) else 1
                outcome = SCENARIOS[name](cluster, rounds=rounds)
            except Exception:
                t["raised"] += 1
                print(f"{name}: raised\n{traceback.format_exc()}", flush=True)
                restore_brokers(cluster)        # the next scenario starts from a whole cluster
                continue
            finally:
                seconds[name] += time.monotonic() - started
            print(outcome, flush=True)
            t["acked"] += outcome.report.acked
            for kind, count in outcome.report.counts.items():
                t[kind] += count
            t["fatal"] += outcome.fatal is not None
    print(f"\nsoak of {args.minutes} min, 3 brokers, RF 3, min.insync.replicas 2:")
    header = ["scenario", "runs", "s/run", "acked", *ALL_KINDS, "fatal", "raised"]
    print(" ".join(f"{h:>15}" for h in header))
    bad = False
    for name, t in totals.items():
        row = [name, t["runs"], f"{seconds[name] / max(t['runs'], 1):.0f}", t["acked"],
               *(t[k] for k in ALL_KINDS), t["fatal"], t["raised"]]
        print(" ".join(f"{v!s:>15}" for v in row))
        bad |= any(t[k] for k in (*ALL_KINDS, "fatal", "raised"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
