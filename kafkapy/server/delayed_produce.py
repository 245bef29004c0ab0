"""DelayedProduce: an acks=all produce waiting for replication (Kafka's DelayedProduce.scala).

``ReplicaManager.append_records`` parks one in its produce purgatory, keyed by each appended
partition, with the per-partition results of the append; an advance of a partition's high
watermark (``check_and_complete``) or the request's timeout completes it. The results are
updated in place: the caller reads them once the operation is complete. A partition is
answered without error only once its high watermark has passed the append; completed any
other way (timeout, lost leadership, the broker's shutdown) it carries an error. Runs on the
broker's event loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.common.purgatory import DelayedOperation
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    NotEnoughReplicasAfterAppendError,
    NotLeaderOrFollowerError,
    RequestTimedOutError,
)

if TYPE_CHECKING:
    from kafkapy.server.replica_manager import ProducePartitionResult, ReplicaManager

__all__ = ["DelayedProduce"]


class DelayedProduce(DelayedOperation):
    """acks=all: complete when every appended partition's high watermark has passed its last
    appended offset (at once with a single replica), or when the timeout ends (then
    REQUEST_TIMED_OUT for those still waiting, as Kafka)."""

    def __init__(self, delay_ms: float, manager: ReplicaManager,
                 results: dict[TopicPartition, ProducePartitionResult]) -> None:
        super().__init__(delay_ms)
        self.manager = manager
        self.results = results
        self._settled: set[TopicPartition] = set()

    def _pending(self) -> list[TopicPartition]:
        """Kafka's checkEnoughReplicasReachOffset per partition not yet settled: the high
        watermark past the append settles it (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR
        fell below min.insync.replicas meanwhile); leadership lost settles it with
        NOT_LEADER_OR_FOLLOWER."""
        out = []
        for tp, r in self.results.items():
            if r.error is not None or tp in self._settled:
                continue
            partition = self.manager.partitions.get(tp)
            if partition is None or not partition.is_leader:
                r.error = NotLeaderOrFollowerError(f"{tp} is no longer led here")
                continue
            if partition.high_watermark <= r.last_offset:
                out.append(tp)
                continue
            self._settled.add(tp)
            min_isr = partition.log.config.min_insync_replicas
            if len(partition.isr) < min_isr:
                r.error = NotEnoughReplicasAfterAppendError(
                    f"{tp}: the ISR shrank to {len(partition.isr)}, below "
                    f"min.insync.replicas {min_isr}, after the append")
        return out

    def try_complete(self) -> bool:
        if not self._pending():
            return self.force_complete()
        return False

    def on_expiration(self) -> None:
        for tp in self._pending():
            self.results[tp].error = RequestTimedOutError(
                f"{tp}: not replicated to min.insync.replicas within the request timeout")

    def on_complete(self) -> None:
        """A completion that did not come from ``try_complete`` or the timeout (the
        purgatory's shutdown, while the broker stops) leaves partitions whose high watermark
        has not passed the append: they must not be answered as written. Kafka never answers
        them (the connection closes; the client retries); here they get
        NOT_LEADER_OR_FOLLOWER, retriable too, so the client finds the new leader and an
        idempotent producer's retry is deduplicated there if the record did get through."""
        for tp in self._pending():
            self.results[tp].error = NotLeaderOrFollowerError(
                f"{tp}: the broker is shutting down before the append was replicated")
