"""Transaction markers: the control batch that ends a producer's transaction in one
partition (Kafka's WriteTxnMarkers on the partition leader, ``KafkaApis.
handleWriteTxnMarkersRequest`` with ``ReplicaManager.appendRecords`` as COORDINATOR).

Shared by the TransactionCoordinator, which writes its markers here directly (every leader is
this broker), and the WriteTxnMarkers handler (a coordinator elsewhere, or a tool). A marker
completes the producer's open transaction in the partition's producer state (the LSO moves,
an abort is indexed in the ``.txnindex``), wakes read_committed fetches waiting on the
partition, and, in ``__consumer_offsets``, makes the group coordinator commit or drop the
transaction's pending offsets.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group.group_metadata_manager import OFFSETS_TOPIC
from kafkapy.errors import KafkaError, UnknownServerError
from kafkapy.log.producer_state import AppendOrigin
from kafkapy.protocol.records import build_control_batch

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer

__all__ = ["ABORT_MARKER", "COMMIT_MARKER", "write_markers"]

ABORT_MARKER, COMMIT_MARKER = 0, 1


async def write_markers(server: KafkaServer, producer_id: int, producer_epoch: int,
                        commit: bool, coordinator_epoch: int, tps: Iterable[TopicPartition]
                        ) -> dict[TopicPartition, KafkaError | None]:
    """Append a COMMIT or ABORT marker to each partition (acks=all: with one replica the
    append is the replication); the error of each (None: written). Partitions are
    independent: one failure never stops another's marker."""
    rm = server.replica_manager
    results: dict[TopicPartition, KafkaError | None] = {}
    offsets_partitions: set[int] = set()
    for tp in tps:
        batch = build_control_batch(COMMIT_MARKER if commit else ABORT_MARKER,
                                    coordinator_epoch, producer_id=producer_id,
                                    producer_epoch=producer_epoch,
                                    timestamp_ms=int(time.time() * 1000))
        try:
            partition = rm.get_partition(tp)
            partition.append_records_to_leader(batch, -1, AppendOrigin.COORDINATOR)
            await server.log_manager.maybe_flush(partition.log)
        except KafkaError as e:
            results[tp] = e
            continue
        except OSError as e:
            results[tp] = UnknownServerError(f"{tp}: {e}")
            continue
        results[tp] = None
        rm.fetch_purgatory.check_and_complete(tp)
        if tp.topic == OFFSETS_TOPIC:
            offsets_partitions.add(tp.partition)
    if offsets_partitions:
        server.group_coordinator.on_txn_completed(producer_id, offsets_partitions, commit)
    return results
