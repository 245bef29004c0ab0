"""DelayedFetch: a fetch waiting for ``fetch.min.bytes`` (Kafka's DelayedFetch.scala).

``ReplicaManager.fetch_messages`` parks one in its fetch purgatory, keyed by each fetched
partition, when the first read found fewer than ``min_bytes``; an append to one of them
(``check_and_complete``), on a follower serving a consumer (KIP-392) its high watermark
moving, or ``max_wait_ms`` completes it, and it then reads every partition again
(``results``). Runs on the broker's event loop.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

from kafkapy.common.purgatory import DelayedOperation
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import KafkaError

if TYPE_CHECKING:
    from kafkapy.server.replica_manager import (
        FetchParams,
        FetchPartitionRequest,
        FetchPartitionResult,
        ReplicaManager,
    )

__all__ = ["DelayedFetch"]


class DelayedFetch(DelayedOperation):
    """A fetch with fewer than ``min_bytes`` available: completes when enough is available,
    when a partition can no longer be read as asked (gone, moved, truncated below the fetch
    offset), or at ``max_wait_ms``; then it reads again (Kafka's DelayedFetch)."""

    def __init__(self, manager: ReplicaManager, params: FetchParams,
                 requests: Sequence[FetchPartitionRequest]) -> None:
        super().__init__(params.max_wait_ms)
        self.manager = manager
        self.params = params
        self.requests = requests
        self.results: list[tuple[TopicPartition, FetchPartitionResult]] = []

    def try_complete_for(self, key: Hashable) -> bool:
        """The partition that changed first: in a session of many quiet partitions it is the
        one that completes the fetch (min bytes <= 1), found without walking the others.
        Otherwise (not among them, or not enough alone) the full check."""
        if self.params.min_bytes <= 1:
            for req in self.requests:
                if req.tp == key:
                    if self._check(req, 0) is not None:
                        return self.force_complete()
                    break
        return self.try_complete()

    def try_complete(self) -> bool:
        available = 0
        for req in self.requests:
            found = self._check(req, available)
            if found is None:
                return self.force_complete()
            available = found
        return False

    def _check(self, req: FetchPartitionRequest, available: int) -> int | None:
        """None if ``req``'s partition completes the fetch (Kafka's cases: gone, moved, a new
        leader epoch, truncated below the fetch offset, enough bytes); else the bytes
        available so far (``available`` plus what it has)."""
        params = self.params
        partition = self.manager.partitions.get(req.tp)
        if partition is None or (params.fetch_only_leader and not partition.is_leader):
            return None
        if 0 <= req.current_leader_epoch != partition.leader_epoch:
            return None                             # a new leader epoch (Kafka's case E)
        leo = partition.log_end_offset
        if req.fetch_offset > leo or req.fetch_offset < partition.log_start_offset:
            return None
        bound = leo if params.replica_id >= 0 else \
            partition.fetch_bound(params.isolation_level)
        if req.fetch_offset < bound:
            if params.min_bytes <= 1:
                # Something below the bound is at least one batch header: enough, without
                # reading it (on_complete reads once).
                return None
            try:
                data = partition.read(req.fetch_offset, req.max_bytes, params.isolation_level,
                                      False, replica=params.replica_id >= 0)
            except KafkaError:
                return None
            available += data.size
            if available >= params.min_bytes:
                return None
        return available

    def on_complete(self) -> None:
        self.results = self.manager.read_from_log(self.params, self.requests)
