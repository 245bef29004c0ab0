"""ReplicaFetcherManager: which fetcher replicates which followed partition (Kafka's
AbstractFetcherManager / ReplicaFetcherManager).

``num.replica.fetchers`` fetchers per source broker; a partition goes to fetcher
``hash(topic, partition) % num.replica.fetchers`` of its leader, so partitions of one leader
share a few connections. A fetcher is a Trio task in the ReplicaManager's nursery
(``start``); a leader whose endpoint changed gets a new fetcher. Fetchers left without
partitions are stopped (``shutdown_idle_fetchers``, after every LeaderAndIsr / StopReplica).
Runs on the broker's event loop.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.replica_fetcher_thread import InitialFetchState, ReplicaFetcherThread

if TYPE_CHECKING:
    from kafkapy.server.replica_manager import ReplicaManager

__all__ = ["ReplicaFetcherManager"]


class ReplicaFetcherManager:
    def __init__(self, manager: ReplicaManager) -> None:
        self._rm = manager
        self.fetchers: dict[tuple[int, int], ReplicaFetcherThread] = {}
        self._nursery: trio.Nursery | None = None

    def start(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery

    def fetcher_id(self, tp: TopicPartition) -> int:
        n = max(1, self._rm.replica_config("num_replica_fetchers", 1))
        return (31 * zlib.crc32(tp.topic.encode()) + tp.partition) % n

    def add_fetcher_for_partitions(self, states: dict[TopicPartition, InitialFetchState]
                                   ) -> None:
        for tp, state in states.items():
            key = (state.leader_id, self.fetcher_id(tp))
            fetcher = self.fetchers.get(key)
            if fetcher is not None and (fetcher.host, fetcher.port) != (state.host, state.port):
                # The leader moved to another endpoint: a new connection, same partitions.
                fetcher.shutdown()
                del self.fetchers[key]
                moved = fetcher.partitions
                fetcher = self._new_fetcher(key, state.host, state.port)
                fetcher.partitions.update(moved)
            if fetcher is None:
                fetcher = self._new_fetcher(key, state.host, state.port)
            fetcher.add_partition(tp, state)

    def _new_fetcher(self, key: tuple[int, int], host: str, port: int) -> ReplicaFetcherThread:
        fetcher = ReplicaFetcherThread(self._rm, key[1], key[0], host, port)
        self.fetchers[key] = fetcher
        if self._nursery is not None:
            self._nursery.start_soon(fetcher.run)
        return fetcher

    def remove_fetcher_for_partitions(self, tps: Iterable[TopicPartition]) -> None:
        gone = set(tps)
        for fetcher in self.fetchers.values():
            fetcher.remove_partitions(gone)

    def fetcher_of(self, tp: TopicPartition) -> ReplicaFetcherThread | None:
        for fetcher in self.fetchers.values():
            if tp in fetcher.partitions:
                return fetcher
        return None

    def shutdown_idle_fetchers(self) -> None:
        for key, fetcher in list(self.fetchers.items()):
            if not fetcher.partitions:
                fetcher.shutdown()
                del self.fetchers[key]

    def shutdown(self) -> None:
        for fetcher in self.fetchers.values():
            fetcher.shutdown()
        self.fetchers.clear()
