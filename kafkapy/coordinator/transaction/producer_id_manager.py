"""ProducerIdManager: producer ids that are never handed out twice, across restarts too.

Theory of operation
-------------------
Kafka's broker-side ``ProducerIdManager`` (``RPCProducerIdManager`` in KRaft mode): ids come in
blocks of ``block_size`` (Kafka's ``ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE``, 1000) reserved
durably by a ``ProducerIdBlocks`` (the controller's ``AllocateProducerIds`` in Kafka: there
the controller log keeps the next free block; on a broker, its metadata store's
``allocate_producer_id_block``). The manager hands out the ids of its current block one by
one and reserves the next block when the current one is used up. Ids of a block not handed
out before a restart are lost, as in Kafka: uniqueness matters, density does not. The first
block starts at 0, as Kafka's.

Reserving a block rewrites the broker's metadata document (an fsync) on the caller's task,
once every ``block_size`` ids; Kafka prefetches the next block in the background at 90 %
use, which a single broker with a local file does not need.

Callers: the transaction coordinator (InitProducerId, with or without a transactional id), on
the broker's event loop. Not thread-safe.
"""

from __future__ import annotations

from kafkapy.coordinator.partition_port import ProducerIdBlocks

__all__ = ["PRODUCER_ID_BLOCK_SIZE", "ProducerIdManager"]

PRODUCER_ID_BLOCK_SIZE = 1000


class ProducerIdManager:
    """``generate_producer_id()`` from blocks of ``block_size`` ids reserved in ``blocks``."""

    def __init__(self, blocks: ProducerIdBlocks, block_size: int = PRODUCER_ID_BLOCK_SIZE
                 ) -> None:
        if block_size < 1:
            raise ValueError(f"a producer id block has at least one id, not {block_size}")
        self.blocks = blocks
        self.block_size = block_size
        self._next = 0
        self._end = 0           # exclusive; _next == _end: no id left in the current block

    def generate_producer_id(self) -> int:
        """A producer id never returned before, by this broker or an earlier run on the same
        blocks.

        Raises what ``blocks`` raises when a new block cannot be reserved (OSError when the
        document cannot be written, UnknownServerError when the ids are exhausted); the
        next call tries again."""
        if self._next >= self._end:
            first = self.blocks.allocate_producer_id_block(self.block_size)
            self._next, self._end = first, first + self.block_size
        pid = self._next
        self._next += 1
        return pid
