"""Nothing acknowledged is lost: fault scenarios against one real 3-broker cluster.

Issue 18's evidence, after Kafka's ``replication_test`` (hard/clean bounce) and Jepsen: each
data scenario (``scenarios.py``) produces with an idempotent ``acks=all`` confluent-kafka producer
while it SIGKILLs, SIGTERMs or SIGSTOPs brokers, then reads the partition back through a
consumer and from every replica's files, and the checker counts lost, duplicated, reordered,
inconsistent and failed-but-read records: any non-zero count fails the test, with the counts.
The coordinator scenarios (``coordinator_scenarios.py``) kill the coordinator of a committing
consumer group and of a transactional producer mid-commit, and count lost, rewound and
skipped offsets, and lost, duplicated, aborted-but-read, partial and hanging transactions.
Each scenario leaves every broker up and its partition's ISR full, so order does not matter.
``ROUNDS`` bounds each scenario for CI; ``benchmarks/resilience_soak.py`` loops them longer.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import kafkapy
from kafkapy.cluster import Cluster
from tests.resilience.coordinator_scenarios import COORDINATOR_SCENARIOS
from tests.resilience.scenarios import SCENARIOS, SETTINGS, restore_brokers

pytestmark = pytest.mark.timeout(300)

ROUNDS = {"hard-bounce": 5, "clean-bounce": 5, "controller-bounce": 5, "paused-leader": 1,
          "min-insync-replicas": 1, "deleted-log-dir": 1, "group-coordinator": 1,
          "txn-coordinator": 2}
ALL = {**SCENARIOS, **COORDINATOR_SCENARIOS}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    # In pytest's temporary directory, kept after the run: the brokers' logs and data are
    # the evidence when a scenario fails.
    with kafkapy.Cluster(3, SETTINGS, timeout=60,
                         data_dir=tmp_path_factory.mktemp("resilience")) as c:
        yield c


@pytest.mark.parametrize("name", list(ALL))
def test_nothing_acknowledged_is_lost(cluster: Cluster, name: str) -> None:
    try:
        outcome = ALL[name](cluster, rounds=ROUNDS[name])
    finally:
        restore_brokers(cluster)
    print(outcome)
    assert outcome.ok, str(outcome)
