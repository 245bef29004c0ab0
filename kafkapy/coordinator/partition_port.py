"""The port between the coordinators and the broker: everything the group and transaction
coordinators use of the partitions they keep their state in, and nothing more.

Kafka's coordinator-common runtime talks to the broker through ``PartitionWriter`` (append
records to a partition, learn when they are committed), ``CoordinatorLoader`` (read a partition
back) and the metadata image (which topics exist). This module is that seam for kafkapy: the
coordinators (``kafkapy.coordinator``) depend on these protocols only, never on the broker's
own classes; the broker implements them, and a test implements them in memory.

Theory of operation
-------------------
- A coordinator keeps each of its partitions' state (the groups or transactional ids hashed to
  partition N of its internal topic) loaded only while this broker leads partition N. The broker
  tells it: ``on_become_leader(N, leader_epoch)`` (at startup for every partition it leads, and
  when it creates the topic or later gains leadership), ``on_resign(N, leader_epoch)`` when it
  stops leading. While a partition loads, requests for its ids answer
  COORDINATOR_LOAD_IN_PROGRESS; for a partition not led here, NOT_COORDINATOR.
- Writes: the coordinator builds a record batch and ``append``\\s it as leader. The append is
  synchronous (the batch is in the log, or a KafkaError says why not); the coordinator then
  ``await``\\s ``wait_committed`` before it answers the request: today the log's flush policy,
  on a replicated cluster also the high watermark passing the batch (acks=all). Kafka's error
  mapping for failed coordinator writes applies to both steps.
- Reads: ``read`` returns whole batches from an offset up to the log end, as loading replays
  them (see ``log_end_offset``).
- Every call is made from the broker's Trio loop, by one task at a time per partition; nothing
  here is thread-safe.

``TxnMarkerWriter`` is the transaction coordinator's other port (Kafka's
``TransactionMarkerChannelManager``): markers go to each partition's leader, wherever it is, and
the broker implementation also tells the group coordinator when a marker lands in
``__consumer_offsets``. ``ProducerIdBlocks`` is where producer ids come from (Kafka's
``/latest_producer_id_block`` or the controller's AllocateProducerIds).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Protocol

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import KafkaError

__all__ = ["CoordinatorPartitions", "LeadershipListener", "ProducerIdBlocks", "TopicInfo",
           "TxnCompletionListener", "TxnMarkerWriter"]


@attrs.frozen
class TopicInfo:
    """A topic as the coordinators see it (the metadata image)."""

    topic_id: uuid.UUID
    partitions: int


class LeadershipListener(Protocol):
    """A coordinator, as the broker tells it which partitions of its topic this broker leads
    (Kafka's ``onElection`` / ``onResignation``)."""

    def on_become_leader(self, partition: int, leader_epoch: int) -> None:
        """Load the state of ``partition`` (in the background: meanwhile its ids answer
        COORDINATOR_LOAD_IN_PROGRESS). Idempotent for the same epoch; a newer epoch reloads."""
        ...

    def on_resign(self, partition: int, leader_epoch: int | None) -> None:
        """Drop the state of ``partition`` (its ids answer NOT_COORDINATOR from now on)."""
        ...


class TxnCompletionListener(Protocol):
    """The group coordinator, told when a transaction marker lands in a
    ``__consumer_offsets`` partition (Kafka's ``onTransactionCompleted``)."""

    def on_txn_completed(self, producer_id: int, partitions: set[int], commit: bool
                         ) -> None:
        ...


class CoordinatorPartitions(Protocol):
    """The broker's partitions as a coordinator uses them."""

    def topics(self) -> Mapping[str, TopicInfo]:
        """Every topic of the cluster, by name."""
        ...

    def create_internal_topic(self, topic: str, partitions: int, replication_factor: int,
                              configs: Mapping[str, str]) -> None:
        """Create ``topic`` (a no-op if it exists). The broker then calls the owning
        coordinator's ``on_become_leader`` for each partition it leads. Raises KafkaError
        (or OSError when the metadata cannot be written)."""
        ...

    def leader_epoch(self, tp: TopicPartition) -> int | None:
        """The leader epoch of ``tp`` if this broker leads it, else None."""
        ...

    def append(self, tp: TopicPartition, batch: bytes) -> int:
        """Append one record batch to ``tp`` as its leader (a coordinator's write: offsets,
        producer state and transaction markers are handled as Kafka's AppendOrigin.COORDINATOR);
        the log end offset after it. Wakes fetches waiting on ``tp``.

        Raises KafkaError: NotLeaderOrFollowerError (not the leader), UnknownTopicOrPartition,
        NotEnoughReplicasError, MessageTooLargeError / RecordListTooLargeError,
        KafkaStorageError."""
        ...

    async def wait_committed(self, tp: TopicPartition, end_offset: int) -> None:
        """Return once what was appended below ``end_offset`` is as durable as the topic
        promises (flush policy; on a replicated partition the high watermark has passed it).
        Raises KafkaError (REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        NOT_LEADER_OR_FOLLOWER) when it cannot be."""
        ...

    def log_start_offset(self, tp: TopicPartition) -> int:
        ...

    def log_end_offset(self, tp: TopicPartition) -> int:
        """Where a coordinator loading ``tp`` stops: the leader's log end, not its high
        watermark (Kafka's loaders read with FetchIsolation.LOG_END). A new leader's high
        watermark can lag what it holds, until its followers fetch from it; everything it
        holds is what it will commit as leader, and a record committed under the old leader
        (an acknowledged offset commit, say) may still sit above that stale high watermark."""
        ...

    def read(self, tp: TopicPartition, offset: int, max_bytes: int) -> bytes:
        """Whole record batches from the one holding ``offset`` on, at most about
        ``max_bytes`` (at least one batch), never past the log end; empty at the log end."""
        ...


class TxnMarkerWriter(Protocol):
    """Writes transaction markers to the leaders of a transaction's partitions."""

    async def write_txn_markers(self, producer_id: int, producer_epoch: int, commit: bool,
                                coordinator_epoch: int, partitions: Iterable[TopicPartition]
                                ) -> dict[TopicPartition, KafkaError | None]:
        """A COMMIT or ABORT marker in each partition; per partition the error (None:
        written and committed). One partition's failure never stops another's marker."""
        ...


class ProducerIdBlocks(Protocol):
    def allocate_producer_id_block(self, block_size: int) -> int:
        """The first id of a block of ``block_size`` ids never handed out before, durably
        reserved. Raises OSError / KafkaError when no block can be reserved."""
        ...
