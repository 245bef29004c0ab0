"""MetadataCache: the cluster as this broker sees it, for Metadata, DescribeCluster,
FindCoordinator and the broker's own inter-broker requests.

Two implementations with one interface (``controller_id``, ``alive_broker_ids()``,
``broker_endpoint(id, listener)``, ``brokers(listener)``, ``partition_info(tp)``, ``topics``,
``topic(name)``, ``cluster_id``):

- ``MetadataCache`` (a single broker, Kafka's ``KRaftMetadataCache`` in combined mode): the
  brokers are this one, the topics come from the ``MetadataStore``, partition state (leader
  epoch, replicas, ISR) from the ``ReplicaManager``'s partitions.
- ``ZkMetadataCache`` (``zookeeper.connect``; Kafka's ``ZkMetadataCache``): exactly what the
  controller's last UpdateMetadata said: the controller id, the live brokers with every
  listener's endpoint and their racks, every partition's state (leader, leader epoch,
  replicas, ISR, offline replicas, partition epoch = the state znode's version) and the topic
  ids. Kafka's rules on an update: an empty partition list keeps the partition states and
  replaces only the brokers, the controller and the topic ids; a partition whose leader is -2
  (``LeaderDuringDelete``) is removed, and the topic with its last partition; a zero topic id
  removes the id. Every broker of the cluster gets the same UpdateMetadata, so every broker
  answers Metadata alike.

Invariants: the ZK cache changes only in ``update`` (on the event loop, from the
UpdateMetadata handler, after the controller- and broker-epoch checks there); readers never
see half an update (the new maps replace the old ones at once).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import Endpoint
from kafkapy.protocol.message_classes import UpdateMetadataRequest
from kafkapy.server.metadata_store import MetadataStore, TopicRecord

__all__ = ["LEADER_DURING_DELETE", "NO_LEADER", "BrokerInfo", "MetadataCache", "PartitionInfo",
           "ZkMetadataCache"]

NO_LEADER = -1
LEADER_DURING_DELETE = -2           # Kafka's LeaderAndIsr.LeaderDuringDelete
_ZERO_UUID = uuid.UUID(int=0)
_SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}


@attrs.frozen
class BrokerInfo:
    node_id: int
    endpoints: Mapping[str, Endpoint]      # listener name -> advertised endpoint
    rack: str | None


@attrs.frozen
class PartitionInfo:
    """A partition's state as the controller last published it."""

    leader: int                         # -1: none
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    partition_epoch: int = 0


class _PartitionState(Protocol):
    leader_id: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]


class MetadataCache:
    """The single-broker cache (see the module doc)."""

    def __init__(self, cluster_id: str, broker: BrokerInfo, store: MetadataStore,
                 partitions: Mapping[TopicPartition, _PartitionState] | None = None) -> None:
        self.cluster_id = cluster_id
        self.broker = broker
        self.store = store
        # The ReplicaManager's partitions (read through, never copied).
        self._partitions: Mapping[TopicPartition, _PartitionState] = \
            {} if partitions is None else partitions

    @property
    def controller_id(self) -> int:
        # A single broker is its own controller (KRaft combined mode).
        return self.broker.node_id

    def alive_broker_ids(self) -> set[int]:
        return {self.broker.node_id}

    def alive_brokers(self) -> list[BrokerInfo]:
        return [self.broker]

    def broker_endpoint(self, broker_id: int, listener_name: str) -> Endpoint | None:
        if broker_id != self.broker.node_id:
            return None
        return self.broker.endpoints.get(listener_name.upper())

    def brokers(self, listener_name: str) -> list[tuple[int, str, int, str | None]]:
        """``(node id, host, port, rack)`` of every live broker reachable on the listener the
        request came in on (Kafka lists only brokers with an endpoint on that listener)."""
        endpoint = self.broker.endpoints.get(listener_name.upper())
        if endpoint is None:
            return []
        return [(self.broker.node_id, endpoint.host, endpoint.port, self.broker.rack)]

    def partition_info(self, tp: TopicPartition) -> PartitionInfo | None:
        part = self._partitions.get(tp)
        if part is None:
            return None
        return PartitionInfo(part.leader_id, part.leader_epoch, tuple(part.replicas),
                             tuple(part.isr))

    @property
    def topics(self) -> Mapping[str, TopicRecord]:
        return self.store.topics

    def topic(self, name: str) -> TopicRecord | None:
        return self.store.topics.get(name)


class _ZkTopics(Mapping[str, TopicRecord]):
    """The cache's topics as TopicRecords, with configs from ``configs_of`` (the store's
    ``/config/topics`` copy): a view, computed per lookup."""

    def __init__(self, cache: ZkMetadataCache) -> None:
        self._cache = cache

    def __getitem__(self, name: str) -> TopicRecord:
        parts = self._cache._partition_states.get(name)
        if not parts:
            raise KeyError(name)
        topic_id = self._cache._topic_ids.get(name, _ZERO_UUID)
        return TopicRecord(name, topic_id, max(parts) + 1, self._cache.configs_of(name))

    def __iter__(self) -> Iterator[str]:
        return iter([t for t, parts in self._cache._partition_states.items() if parts])

    def __len__(self) -> int:
        return sum(1 for parts in self._cache._partition_states.values() if parts)

    def __contains__(self, name: object) -> bool:
        return bool(self._cache._partition_states.get(name))  # type: ignore[call-overload]


class ZkMetadataCache:
    """The ZooKeeper-mode cache, fed by UpdateMetadata (see the module doc)."""

    def __init__(self, cluster_id: str, broker_id: int) -> None:
        self.cluster_id = cluster_id
        self.broker_id = broker_id
        self.controller_id: int | None = None
        self.controller_epoch = -1          # of the last UpdateMetadata applied
        self._brokers: dict[int, BrokerInfo] = {}
        self._partition_states: dict[str, dict[int, PartitionInfo]] = {}
        self._topic_ids: dict[str, uuid.UUID] = {}
        # Topic configs (the ZkMetadataStore installs its reader of /config/topics).
        self.configs_of: Callable[[str], Mapping[str, str]] = lambda _name: {}
        self._topics_view = _ZkTopics(self)

    # ======================================================================= brokers

    def alive_broker_ids(self) -> set[int]:
        return set(self._brokers)

    def alive_brokers(self) -> list[BrokerInfo]:
        return [self._brokers[b] for b in sorted(self._brokers)]

    def broker_endpoint(self, broker_id: int, listener_name: str) -> Endpoint | None:
        broker = self._brokers.get(broker_id)
        return None if broker is None else broker.endpoints.get(listener_name.upper())

    def brokers(self, listener_name: str) -> list[tuple[int, str, int, str | None]]:
        """``(node id, host, port, rack)`` of every live broker with an endpoint on the
        listener, by id."""
        out = []
        for node in sorted(self._brokers):
            broker = self._brokers[node]
            e = broker.endpoints.get(listener_name.upper())
            if e is not None:
                out.append((node, e.host, e.port, broker.rack))
        return out

    # ======================================================================== topics

    def partition_info(self, tp: TopicPartition) -> PartitionInfo | None:
        return self._partition_states.get(tp.topic, {}).get(tp.partition)

    def partitions_of(self, topic: str) -> Mapping[int, PartitionInfo]:
        return self._partition_states.get(topic, {})

    @property
    def topics(self) -> Mapping[str, TopicRecord]:
        return self._topics_view

    def topic(self, name: str) -> TopicRecord | None:
        return self._topics_view.get(name)

    def topic_id(self, name: str) -> uuid.UUID | None:
        return self._topic_ids.get(name)

    # ======================================================================== update

    def update(self, request: UpdateMetadataRequest, version: int) -> list[TopicPartition]:
        """Apply a checked UpdateMetadata (any version 0-8); returns the partitions it
        deleted (leader -2)."""
        brokers: dict[int, BrokerInfo] = {}
        for b in request.live_brokers:
            endpoints: dict[str, Endpoint] = {}
            if version == 0:
                endpoints["PLAINTEXT"] = Endpoint("PLAINTEXT", b.v0_host, b.v0_port)
            for e in b.endpoints:
                # v1-2 carry only the security protocol; its name is the listener's.
                name = (e.listener if version >= 3 else
                        _SECURITY_PROTOCOLS.get(e.security_protocol, "PLAINTEXT")).upper()
                endpoints[name] = Endpoint(name, e.host, e.port)
            brokers[b.id] = BrokerInfo(b.id, endpoints, b.rack or None)
        topic_ids = dict(self._topic_ids)
        for t in request.topic_states:
            if t.topic_id == _ZERO_UUID:
                topic_ids.pop(t.topic_name, None)
            else:
                topic_ids[t.topic_name] = t.topic_id
        if version >= 5:
            states = [(t.topic_name, p) for t in request.topic_states
                      for p in t.partition_states]
        else:
            states = [(p.topic_name, p) for p in request.ungrouped_partition_states]
        deleted: list[TopicPartition] = []
        partition_states = self._partition_states
        if states:
            partition_states = {t: dict(parts) for t, parts in self._partition_states.items()}
            for topic, p in states:
                if p.leader == LEADER_DURING_DELETE:
                    parts = partition_states.get(topic)
                    if parts is not None:
                        parts.pop(p.partition_index, None)
                        if not parts:
                            del partition_states[topic]
                            topic_ids.pop(topic, None)
                    deleted.append(TopicPartition(topic, p.partition_index))
                    continue
                partition_states.setdefault(topic, {})[p.partition_index] = PartitionInfo(
                    p.leader, p.leader_epoch, tuple(p.replicas), tuple(p.isr),
                    tuple(p.offline_replicas), p.zk_version)
        # Swap everything at once: a reader sees the old view or the new one.
        self.controller_id = request.controller_id if request.controller_id >= 0 else None
        self.controller_epoch = request.controller_epoch
        self._brokers = brokers
        self._topic_ids = topic_ids
        self._partition_states = partition_states
        return deleted
