"""DelayedFetch: a fetch waiting for ``fetch.min.bytes`` (Kafka's DelayedFetch.scala).

``ReplicaManager.fetch_messages`` parks one in its fetch purgatory, keyed by each fetched
partition, when the first read found fewer than ``min_bytes``; an append to one of them
(``check_and_complete``), on a follower serving a consumer (KIP-392) its high watermark
moving, or ``max_wait_ms`` completes it, and it then reads every partition again
(``results``). Runs on the broker's event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
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

    def try_complete(self) -> bool:
        available = 0
        params = self.params
        partitions = self.manager.partitions
        replica = params.replica_id >= 0
        only_leader = params.fetch_only_leader
        # Last first: a fetch session lists the partitions it answered last at the end, and
        # those are the ones that move (the one partition written to, among a follower's
        # many quiet ones). The outcome does not depend on the order.
        for req in reversed(self.requests):
            partition = partitions.get(req.tp)
            if partition is None or (only_leader and not partition.is_leader):
                return self.force_complete()
            if 0 <= req.current_leader_epoch != partition.leader_epoch:
                return self.force_complete()        # a new leader epoch (Kafka's case E)
            log = partition.log
            fetch_offset = req.fetch_offset
            leo = log.log_end_offset
            if fetch_offset == leo:
                continue            # caught up: nothing to count (the common case)
            if fetch_offset > leo or fetch_offset < log.log_start_offset:
                return self.force_complete()
            bound = leo if replica else partition.fetch_bound(params.isolation_level)
            if fetch_offset < bound:
                if replica and self.manager.should_leader_throttle(
                        partition, params.replica_id):
                    # Kafka's DelayedFetch: a throttled partition's bytes do not count, so
                    # a throttled follower's fetch waits out max_wait_ms
                    continue
                if params.min_bytes <= 1:
                    # Something below the bound is at least one batch header: enough,
                    # without reading it (on_complete reads once).
                    return self.force_complete()
                try:
                    data = partition.read(fetch_offset, req.max_bytes,
                                          params.isolation_level, False, replica=replica)
                except KafkaError:
                    return self.force_complete()
                available += data.size
                if available >= params.min_bytes:
                    return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.results = self.manager.read_from_log(self.params, self.requests)
