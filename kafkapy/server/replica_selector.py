"""Replica selection for consumer fetches (KIP-392, fetching from the closest replica).

Kafka's ``org.apache.kafka.common.replica`` package and ``ReplicaManager.findPreferredReadReplica``:

- ``replica.selector.class`` names the selector; unset (Kafka's default) there is none and
  consumers read from the leader only. kafkapy cannot load Java classes: it accepts the two
  Kafka ships, ``RackAwareReplicaSelector`` and ``LeaderSelector`` (``SELECTORS``; the config
  refuses any other name at startup).
- ``ClientMetadata`` is what a Fetch v11+ tells about the consumer (``rack_id`` is its
  ``client.rack``, "" when it has none), ``ReplicaView`` / ``PartitionView`` what the leader
  knows about the partition's replicas.
- ``preferred_read_replica`` (on the leader, per partition) offers the selector the leader and
  the followers that are alive (registered, with an endpoint on the client's listener), in the
  committed ISR and hold the fetch offset (their log start <= offset <= their log end); the
  leader chosen means no redirect (None), as in Kafka: the leader then answers with records,
  a follower chosen makes it answer ``preferred_read_replica`` and no records.

Pure logic on plain values: no I/O, nothing awaited; the caller passes the clock and the live
brokers' racks.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Protocol

import attrs

if TYPE_CHECKING:
    from kafkapy.server.partition import Partition

__all__ = [
    "LEADER_SELECTOR",
    "RACK_AWARE_SELECTOR",
    "SELECTORS",
    "ClientMetadata",
    "LeaderSelector",
    "PartitionView",
    "RackAwareReplicaSelector",
    "ReplicaSelector",
    "ReplicaView",
    "create_replica_selector",
    "most_caught_up",
    "preferred_read_replica",
]

RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
LEADER_SELECTOR = "org.apache.kafka.common.replica.LeaderSelector"


@attrs.frozen
class ClientMetadata:
    """The consumer of a Fetch v11+ (Kafka's DefaultClientMetadata)."""

    rack_id: str
    client_id: str = ""
    client_address: str = ""
    listener_name: str = ""


@attrs.frozen
class ReplicaView:
    """One replica as the leader sees it (Kafka's ReplicaView): ``rack`` is its broker's
    ``broker.rack`` (None without one); the leader is always caught up (0 ms)."""

    broker_id: int
    rack: str | None
    log_end_offset: int
    time_since_last_caught_up_ms: int


@attrs.frozen
class PartitionView:
    """The replicas a selector may choose from, the leader among them."""

    replicas: tuple[ReplicaView, ...]
    leader: ReplicaView


def most_caught_up(view: ReplicaView) -> tuple[int, int, int]:
    """Kafka's ReplicaView.comparator as a max() key: the larger log end offset, then the more
    recent catch-up, then the larger broker id (a deterministic tie-break)."""
    return view.log_end_offset, -view.time_since_last_caught_up_ms, view.broker_id


class ReplicaSelector(Protocol):
    def select(self, topic: str, partition: int, client: ClientMetadata,
               view: PartitionView) -> ReplicaView | None: ...


class LeaderSelector:
    """Always the leader (Kafka's LeaderSelector): the same as having no selector."""

    def select(self, topic: str, partition: int, client: ClientMetadata,
               view: PartitionView) -> ReplicaView | None:
        return view.leader


class RackAwareReplicaSelector:
    """Kafka's RackAwareReplicaSelector: without a client rack, or with no replica in it, the
    leader; the leader if it is in the client's rack; else the most caught-up replica there."""

    def select(self, topic: str, partition: int, client: ClientMetadata,
               view: PartitionView) -> ReplicaView | None:
        if not client.rack_id:
            return view.leader
        same_rack = [r for r in view.replicas if r.rack == client.rack_id]
        if not same_rack or view.leader in same_rack:
            return view.leader
        return max(same_rack, key=most_caught_up)


SELECTORS: Mapping[str, Callable[[], ReplicaSelector]] = {
    RACK_AWARE_SELECTOR: RackAwareReplicaSelector,
    LEADER_SELECTOR: LeaderSelector,
}


def create_replica_selector(class_name: str | None) -> ReplicaSelector | None:
    """The selector ``replica.selector.class`` names; None when unset. Raises ValueError for
    a name kafkapy does not implement (BrokerConfig refuses those before this)."""
    if class_name is None:
        return None
    factory = SELECTORS.get(class_name)
    if factory is None:
        raise ValueError(f"replica.selector.class {class_name!r} is not one kafkapy "
                         f"implements: {', '.join(sorted(SELECTORS))}")
    return factory()


def preferred_read_replica(selector: ReplicaSelector, partition: Partition,
                           client: ClientMetadata, fetch_offset: int, now_ms: int,
                           racks: Mapping[int, str | None]) -> int | None:
    """Kafka's findPreferredReadReplica for a partition led here: the follower the consumer
    should fetch from, or None (read from the leader). ``racks``: the live brokers reachable
    on the client's listener, id -> rack; a replica not among them cannot be chosen."""
    leader_id = partition.node_id
    if partition.leader_id != leader_id or leader_id not in racks:
        return None
    leader = ReplicaView(leader_id, racks[leader_id], partition.log_end_offset, 0)
    isr: Collection[int] = partition.isr
    candidates = [leader]
    for broker_id, state in partition.followers.items():
        # Out of the ISR a follower may lag for good and keep the consumer behind (Kafka);
        # it must hold the offset asked for.
        if broker_id in racks and broker_id in isr and \
                state.log_start_offset <= fetch_offset <= state.log_end_offset:
            candidates.append(ReplicaView(broker_id, racks[broker_id], state.log_end_offset,
                                          now_ms - state.last_caught_up_ms))
    tp = partition.tp
    chosen = selector.select(tp.topic, tp.partition, client,
                             PartitionView(tuple(candidates), leader))
    if chosen is None or chosen.broker_id == leader_id:
        return None
    return chosen.broker_id
