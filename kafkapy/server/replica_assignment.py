"""Replica assignment for new topics and new partitions: Kafka's
``AdminUtils.assignReplicasToBrokers`` (ZooKeeper mode), rack-unaware and rack-aware.

Pure logic: brokers in, ``{partition: replicas}`` out; the caller supplies the randomness.

Theory of operation
-------------------
Three goals, as in Kafka: spread the replicas evenly over the brokers; for the partitions of
one broker, spread their other replicas over the other brokers; when every broker has a rack,
put each partition's replicas on different racks where possible.

- **Rack-unaware.** The brokers sorted by id. The first replica of partition ``p`` is the
  broker at ``(p + start_index) % n`` (round-robin from a random start, so the leaders of a
  topic spread over the brokers and different topics start at different brokers). The j-th
  follower is at ``first + 1 + (shift + j) % (n - 1)``: a shift, random at first, that grows
  by one each time the partitions have gone once round the brokers, so the same replica
  sequences do not repeat.
- **Rack-aware** (every broker has a rack): the same round-robin over a *rack-alternated*
  broker list (racks sorted by name, taking each rack's lowest unused broker id in turn, e.g.
  rack1: 0, 1, 2 / rack2: 3, 4, 5 / rack3: 6, 7, 8 -> 0, 3, 6, 1, 4, 7, 2, 5, 8), with the
  shift multiplied by the number of racks, and a follower candidate skipped while a rack
  without a replica, or a broker without one, remains.
- Only some brokers with a rack: refused (Kafka's "Not all brokers have rack information").

``fixed_start_index`` / ``start_partition_id`` are Kafka's: CreatePartitions continues an
existing topic's pattern from its first new partition id.

Errors: InvalidPartitionsError, InvalidReplicationFactorError (Kafka's messages),
InvalidReplicaAssignmentError for incomplete rack information.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import attrs

from kafkapy.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)

__all__ = ["BrokerMetadata", "assign_replicas_to_brokers", "rack_alternated_brokers"]


@attrs.frozen
class BrokerMetadata:
    """A broker as the assignment sees it: its id and its rack (None: no ``broker.rack``)."""

    id: int
    rack: str | None = None


def assign_replicas_to_brokers(brokers: Sequence[BrokerMetadata], partitions: int,
                               replication_factor: int, *, fixed_start_index: int = -1,
                               start_partition_id: int = -1,
                               rng: random.Random | None = None) -> dict[int, list[int]]:
    """``{partition id: replicas}`` for ``partitions`` new partitions (ids from
    ``max(0, start_partition_id)``); the first replica is the preferred leader.

    Raises:
        InvalidPartitionsError: ``partitions`` < 1.
        InvalidReplicationFactorError: ``replication_factor`` < 1 or above the brokers.
        InvalidReplicaAssignmentError: some brokers have a rack and others do not.
    """
    if partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: "
            f"{len(brokers)}.")
    rng = rng or random.Random()
    ordered = sorted(brokers, key=lambda b: b.id)
    if all(b.rack is None for b in ordered):
        return _rack_unaware(partitions, replication_factor, [b.id for b in ordered],
                             fixed_start_index, start_partition_id, rng)
    if any(b.rack is None for b in ordered):
        raise InvalidReplicaAssignmentError(
            "Not all brokers have rack information for replica rack aware assignment.")
    racks = {b.id: b.rack for b in ordered if b.rack is not None}
    return _rack_aware(partitions, replication_factor, racks, fixed_start_index,
                       start_partition_id, rng)


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def _starts(fixed_start_index: int, n: int, rng: random.Random) -> tuple[int, int]:
    # Kafka draws the start index, then the shift, each uniform over the brokers.
    if fixed_start_index >= 0:
        return fixed_start_index, fixed_start_index
    start = rng.randrange(n)
    return start, rng.randrange(n)


def _rack_unaware(partitions: int, factor: int, broker_ids: list[int], fixed_start_index: int,
                  start_partition_id: int, rng: random.Random) -> dict[int, list[int]]:
    n = len(broker_ids)
    start_index, shift = _starts(fixed_start_index, n, rng)
    out: dict[int, list[int]] = {}
    pid = max(0, start_partition_id)
    for _ in range(partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start_index) % n
        replicas = [broker_ids[first]]
        replicas += [broker_ids[_replica_index(first, shift, j, n)] for j in range(factor - 1)]
        out[pid] = replicas
        pid += 1
    return out


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """The brokers alternated by rack (Kafka's ``getRackAlternatedBrokerList``)."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in sorted(racks.items()):
        by_rack.setdefault(rack, []).append(broker)
    names = sorted(by_rack)
    iterators = {rack: iter(ids) for rack, ids in by_rack.items()}
    out: list[int] = []
    i = 0
    while len(out) < len(racks):
        nxt = next(iterators[names[i]], None)
        if nxt is not None:
            out.append(nxt)
        i = (i + 1) % len(names)
    return out


def _rack_aware(partitions: int, factor: int, racks: Mapping[int, str],
                fixed_start_index: int, start_partition_id: int,
                rng: random.Random) -> dict[int, list[int]]:
    num_racks = len(set(racks.values()))
    arranged = rack_alternated_brokers(racks)
    n = len(arranged)
    start_index, shift = _starts(fixed_start_index, n, rng)
    out: dict[int, list[int]] = {}
    pid = max(0, start_partition_id)
    for _ in range(partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks_used = {racks[leader]}
        brokers_used = {leader}
        k = 0
        for _ in range(factor - 1):
            while True:
                broker = arranged[_replica_index(first, shift * num_racks, k, n)]
                rack = racks[broker]
                k += 1
                # Skip a broker whose rack already has a replica while a rack has none, or
                # one that already has a replica while a broker has none.
                if (rack not in racks_used or len(racks_used) == num_racks) and \
                        (broker not in brokers_used or len(brokers_used) == n):
                    replicas.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    break
        out[pid] = replicas
        pid += 1
    return out
