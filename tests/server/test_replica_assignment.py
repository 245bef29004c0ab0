"""Replica assignment (kafkapy.server.replica_assignment) against Kafka's documented examples
(``AdminUtils.assignReplicasToBrokers`` scaladoc, AdminTest / AdminRackAwareTest)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from kafkapy.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)
from kafkapy.server.replica_assignment import (
    BrokerMetadata,
    assign_replicas_to_brokers,
    rack_alternated_brokers,
)


def brokers(*ids: int) -> list[BrokerMetadata]:
    return [BrokerMetadata(i) for i in ids]


def test_rack_unaware_matches_kafkas_example() -> None:
    # broker-0..4, 10 partitions, 3 replicas, start index 0 (the scaladoc's table).
    got = assign_replicas_to_brokers(brokers(0, 1, 2, 3, 4), 10, 3, fixed_start_index=0)
    assert got == {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
                   5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}


def test_rack_alternated_list() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_brokers(racks) == [0, 3, 1, 5, 4, 2]
    grid = {b: f"rack{b // 3 + 1}" for b in range(9)}
    assert rack_alternated_brokers(grid) == [0, 3, 6, 1, 4, 7, 2, 5, 8]


def test_rack_aware_matches_kafkas_example() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    metas = [BrokerMetadata(b, r) for b, r in racks.items()]
    got = assign_replicas_to_brokers(metas, 7, 3, fixed_start_index=0)
    assert got == {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0],
                   5: [2, 0, 3], 6: [0, 4, 2]}
    # Every partition has its replicas on three different racks.
    assert all(len({racks[b] for b in r}) == 3 for r in got.values())


def test_rack_aware_random_starts_keep_racks_distinct() -> None:
    metas = [BrokerMetadata(b, f"r{b % 3}") for b in range(6)]
    for seed in range(20):
        got = assign_replicas_to_brokers(metas, 12, 3, rng=random.Random(seed))
        assert all(len({b % 3 for b in r}) == 3 for r in got.values())
        assert all(len(set(r)) == 3 for r in got.values())


def test_leaders_spread_and_random_start() -> None:
    firsts = set()
    for seed in range(30):
        got = assign_replicas_to_brokers(brokers(1, 2, 3), 6, 2, rng=random.Random(seed))
        leaders = Counter(r[0] for r in got.values())
        assert leaders == Counter({1: 2, 2: 2, 3: 2})
        assert all(len(set(r)) == 2 for r in got.values())
        firsts.add(got[0][0])
    assert firsts == {1, 2, 3}         # the start index is random


def test_continuing_partitions() -> None:
    # CreatePartitions continues from the first new id with a fixed start.
    got = assign_replicas_to_brokers(brokers(0, 1, 2, 3, 4), 3, 3, fixed_start_index=0,
                                     start_partition_id=5)
    assert got == {5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0]}


def test_errors() -> None:
    with pytest.raises(InvalidReplicationFactorError,
                       match=r"Replication factor: 3 larger than available brokers: 2\.$"):
        assign_replicas_to_brokers(brokers(1, 2), 1, 3)
    with pytest.raises(InvalidPartitionsError):
        assign_replicas_to_brokers(brokers(1, 2), 0, 1)
    with pytest.raises(InvalidReplicationFactorError):
        assign_replicas_to_brokers(brokers(1, 2), 1, 0)
    with pytest.raises(InvalidReplicaAssignmentError, match="Not all brokers have rack"):
        assign_replicas_to_brokers([BrokerMetadata(1, "a"), BrokerMetadata(2)], 1, 1)
