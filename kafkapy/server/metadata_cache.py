"""MetadataCache: the cluster as this broker sees it, for Metadata and DescribeCluster.

Kafka's ``KRaftMetadataCache``: the live brokers with their advertised endpoints per listener,
the controller, the cluster id, and every topic with its partitions' leaders, replicas and ISR.
On a single broker the brokers are this one and the topics come from the ``MetadataStore``;
partition state (leader epoch, replicas, ISR) comes from the ``ReplicaManager``'s partitions.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from kafkapy.config import Endpoint
from kafkapy.server.metadata_store import MetadataStore, TopicRecord

__all__ = ["BrokerInfo", "MetadataCache"]


@attrs.frozen
class BrokerInfo:
    node_id: int
    endpoints: Mapping[str, Endpoint]      # listener name -> advertised endpoint
    rack: str | None


class MetadataCache:
    def __init__(self, cluster_id: str, broker: BrokerInfo, store: MetadataStore) -> None:
        self.cluster_id = cluster_id
        self.broker = broker
        self.store = store

    @property
    def controller_id(self) -> int:
        # A single broker is its own controller (KRaft combined mode).
        return self.broker.node_id

    def brokers(self, listener_name: str) -> list[tuple[int, str, int, str | None]]:
        """``(node id, host, port, rack)`` of every live broker reachable on the listener the
        request came in on (Kafka lists only brokers with an endpoint on that listener)."""
        endpoint = self.broker.endpoints.get(listener_name.upper())
        if endpoint is None:
            return []
        return [(self.broker.node_id, endpoint.host, endpoint.port, self.broker.rack)]

    @property
    def topics(self) -> Mapping[str, TopicRecord]:
        return self.store.topics

    def topic(self, name: str) -> TopicRecord | None:
        return self.store.topics.get(name)
