"""The broker's side of the coordinators' port (:mod:`kafkapy.coordinator.partition_port`).

Kafka's ``CoordinatorPartitionWriter`` (appends to internal-topic partitions through the
ReplicaManager), ``CoordinatorLoaderImpl`` (reads them back), the metadata image the
coordinators consult, ``TransactionMarkerChannelManager`` (markers to each partition's leader)
and the producer-id block allocation.

Theory of operation
-------------------
- A coordinator registers itself for its internal topic (``register``). Whenever this broker
  becomes the leader of one of that topic's partitions it calls the coordinator's
  ``on_become_leader(partition, leader_epoch)``: at startup for every partition already here
  (``start``), and when the topic is created (``create_internal_topic``). ``on_resign`` is called
  when leadership goes away: when the topic is deleted (``on_partitions_removed``), and on a
  cluster when the controller's LeaderAndIsr / StopReplica say so.
- ``append`` writes a coordinator's batch as leader with acks=all (AppendOrigin.COORDINATOR:
  producer state and markers are handled as Kafka's) and wakes fetches waiting on the
  partition; ``wait_committed`` runs the log's flush policy (flush.messages / flush.ms), then
  waits until the high watermark has passed the append (at once with a single replica; on a
  cluster a DelayedProduce in the produce purgatory, completed when followers catch up,
  ``offsets.commit.timeout.ms`` at most).
- ``write_txn_markers`` appends a control batch to each partition (all led here) and, for
  ``__consumer_offsets`` partitions, tells the group coordinator to commit or drop the
  transaction's pending offsets (Kafka's ``GroupCoordinator.onTransactionCompleted``, called
  from ``KafkaApis.handleWriteTxnMarkersRequest``).

Everything runs on the broker's Trio loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from kafkapy.clients.network_client import BrokerConnection
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.partition_port import (
    LeadershipListener,
    TopicInfo,
    TxnCompletionListener,
)
from kafkapy.errors import (
    BrokerNotAvailableError,
    KafkaError,
    LeaderNotAvailableError,
    TopicAlreadyExistsError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
    error_class,
)
from kafkapy.log.producer_state import AppendOrigin
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
)
from kafkapy.protocol.records import CONTROL_ABORT, CONTROL_COMMIT, build_control_batch
from kafkapy.server.delayed_produce import DelayedProduce
from kafkapy.server.metadata_store import TopicRecord
from kafkapy.server.partition import Partition
from kafkapy.server.replica_manager import ProducePartitionResult

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer

__all__ = ["BrokerCoordinatorPartitions"]

_OFFSETS_TOPIC = "__consumer_offsets"


class _TopicsView(Mapping[str, TopicInfo]):
    """The metadata store's topics as the coordinators see them, read through."""

    def __init__(self, records: Mapping[str, TopicRecord]) -> None:
        self._records = records

    def __getitem__(self, name: str) -> TopicInfo:
        record = self._records[name]
        return TopicInfo(record.topic_id, record.partitions)

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)


class BrokerCoordinatorPartitions:
    """CoordinatorPartitions, TxnMarkerWriter and ProducerIdBlocks over one broker."""

    def __init__(self, server: KafkaServer) -> None:
        self._server = server
        self._listeners: dict[str, LeadershipListener] = {}
        self._txn_completion: TxnCompletionListener | None = None

    # ============================================================ registration

    def register(self, topic: str, listener: LeadershipListener) -> None:
        """``listener`` coordinates the state kept in ``topic``."""
        self._listeners[topic] = listener

    def register_txn_completion(self, listener: TxnCompletionListener) -> None:
        """Who is told when a marker lands in ``__consumer_offsets``."""
        self._txn_completion = listener

    def start(self) -> None:
        """Elect the registered coordinators for every partition of their topics led here,
        and follow the leadership changes the controller makes (cluster)."""
        self._server.replica_manager.leadership_listeners.append(self._on_leadership_change)
        for topic in self._listeners:
            self._elect(topic)

    def _elect(self, topic: str) -> None:
        listener = self._listeners.get(topic)
        if listener is None:
            return
        partitions = self._server.replica_manager.partitions
        for tp, partition in sorted(partitions.items()):
            if tp.topic == topic and partition.is_leader:
                listener.on_become_leader(tp.partition, partition.leader_epoch)

    def _on_leadership_change(self, leaders: list[Partition], followers: list[Partition]
                              ) -> None:
        """After a LeaderAndIsr / StopReplica: load what is led here now, drop the rest."""
        for partition in followers:
            listener = self._listeners.get(partition.tp.topic)
            if listener is not None:
                listener.on_resign(partition.tp.partition, partition.leader_epoch)
        for partition in leaders:
            listener = self._listeners.get(partition.tp.topic)
            if listener is not None:
                listener.on_become_leader(partition.tp.partition, partition.leader_epoch)

    def on_partitions_removed(self, epochs: Mapping[TopicPartition, int | None]) -> None:
        """This broker no longer hosts these partitions (deleted, with the leader epoch each
        had): the coordinator of a registered topic resigns them."""
        for tp, epoch in sorted(epochs.items()):
            listener = self._listeners.get(tp.topic)
            if listener is not None:
                listener.on_resign(tp.partition, epoch)

    # ====================================================== CoordinatorPartitions

    def topics(self) -> Mapping[str, TopicInfo]:
        # A view, not a copy: an OffsetCommit looks up a few topics, it must not cost one
        # object per topic of the cluster.
        return _TopicsView(self._server.metadata_store.topics)

    def create_internal_topic(self, topic: str, partitions: int, replication_factor: int,
                              configs: Mapping[str, str]) -> None:
        if topic in self._server.metadata_store.topics:
            return
        try:
            self._server.admin.create_topic(topic, partitions, replication_factor,
                                            configs=dict(configs))
        except TopicAlreadyExistsError:
            # Another broker of the cluster created it first and this broker's metadata has
            # not heard yet: it exists, which is what was asked (the port's "no-op").
            return
        self._elect(topic)

    def leader_epoch(self, tp: TopicPartition) -> int | None:
        partition = self._server.replica_manager.partitions.get(tp)
        return None if partition is None else partition.leader_epoch

    def append(self, tp: TopicPartition, batch: bytes) -> int:
        rm = self._server.replica_manager
        partition = rm.get_partition(tp)
        partition.append_records_to_leader(batch, -1, AppendOrigin.COORDINATOR)
        rm.fetch_purgatory.check_and_complete(tp)
        return partition.log_end_offset

    async def wait_committed(self, tp: TopicPartition, end_offset: int) -> None:
        rm = self._server.replica_manager
        partition = rm.get_partition(tp)
        await self._server.log_manager.maybe_flush(partition.log)
        if partition.high_watermark >= end_offset:
            return
        result = ProducePartitionResult(last_offset=end_offset - 1)
        op = DelayedProduce(self._server.config.offsets_commit_timeout_ms, rm, {tp: result})
        if not rm.produce_purgatory.try_complete_else_watch(op, [tp]):
            await op.wait()
        if result.error is not None:
            raise result.error

    def log_start_offset(self, tp: TopicPartition) -> int:
        return self._server.replica_manager.get_partition(tp).log_start_offset

    def log_end_offset(self, tp: TopicPartition) -> int:
        return self._server.replica_manager.get_partition(tp).log_end_offset

    def read(self, tp: TopicPartition, offset: int, max_bytes: int) -> bytes:
        partition = self._server.replica_manager.get_partition(tp)
        return partition.log.read(offset, max_bytes, partition.log_end_offset, True).read()

    # ============================================================ TxnMarkerWriter

    async def write_txn_markers(self, producer_id: int, producer_epoch: int, commit: bool,
                                coordinator_epoch: int, partitions: Iterable[TopicPartition]
                                ) -> dict[TopicPartition, KafkaError | None]:
        """The coordinator's markers: written directly to the partitions this broker leads;
        on a cluster, sent to the other partitions' leaders as WriteTxnMarkers v1 (Kafka's
        TransactionMarkerChannelManager), one request per leader. A partition without a
        leader, or whose leader cannot be reached, answers an error: the coordinator keeps
        the transaction prepared and writes the markers again later."""
        rm = self._server.replica_manager
        local: list[TopicPartition] = []
        remote: dict[int, list[TopicPartition]] = {}
        results: dict[TopicPartition, KafkaError | None] = {}
        clustered = self._server.config.zookeeper_connect is not None
        for tp in partitions:
            partition = rm.partitions.get(tp)
            if not clustered or (partition is not None and partition.is_leader):
                local.append(tp)
                continue
            info = self._server.metadata_cache.partition_info(tp)
            if info is None:
                results[tp] = UnknownTopicOrPartitionError(f"{tp} does not exist")
            elif info.leader < 0:
                results[tp] = LeaderNotAvailableError(f"{tp} has no leader")
            else:
                remote.setdefault(info.leader, []).append(tp)
        results.update(await self.write_local_txn_markers(
            producer_id, producer_epoch, commit, coordinator_epoch, local))
        for leader, tps in remote.items():
            results.update(await self._send_txn_markers(
                leader, producer_id, producer_epoch, commit, coordinator_epoch, tps))
        return results

    async def _send_txn_markers(self, leader: int, producer_id: int, producer_epoch: int,
                                commit: bool, coordinator_epoch: int,
                                tps: list[TopicPartition]
                                ) -> dict[TopicPartition, KafkaError | None]:
        server = self._server
        endpoint = server.metadata_cache.broker_endpoint(
            leader, server.config.inter_broker_listener_name or "")
        if endpoint is None:
            return {tp: BrokerNotAvailableError(f"broker {leader} (leader of {tp}) is not "
                                                f"alive") for tp in tps}
        by_topic: dict[str, list[int]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        request = WriteTxnMarkersRequest(markers=[WritableTxnMarker(
            producer_id=producer_id, producer_epoch=producer_epoch, transaction_result=commit,
            coordinator_epoch=coordinator_epoch,
            topics=[WritableTxnMarkerTopic(name=t, partition_indexes=ps)
                    for t, ps in by_topic.items()])])
        conn = BrokerConnection(endpoint.host, endpoint.port,
                                client_id=f"broker-{server.node_id}-txn-markers",
                                timeout_s=server.config.request_timeout_ms / 1000,
                                ssl_context=server.inter_broker_ssl_context,
                                authenticate=server.inter_broker_authenticate)
        try:
            response = await conn.request(ApiKey.WRITE_TXN_MARKERS, 1, request)
        except KafkaError as e:
            return {tp: e for tp in tps}
        finally:
            await conn.close()
        results: dict[TopicPartition, KafkaError | None] = {tp: UnknownServerError(
            f"broker {leader} did not answer for {tp}") for tp in tps}
        for marker in response.markers:
            for topic in marker.topics:
                for p in topic.partitions:
                    tp = TopicPartition(topic.name, p.partition_index)
                    results[tp] = None if p.error_code == 0 else error_class(p.error_code)(
                        f"broker {leader}: writing the marker to {tp} failed")
        return results

    async def write_local_txn_markers(self, producer_id: int, producer_epoch: int,
                                      commit: bool, coordinator_epoch: int,
                                      partitions: Iterable[TopicPartition]
                                      ) -> dict[TopicPartition, KafkaError | None]:
        """Append the markers to partitions this broker leads (WriteTxnMarkers from a
        coordinator elsewhere lands here too): NOT_LEADER_OR_FOLLOWER / UNKNOWN_TOPIC_OR_
        PARTITION for the others.

        A marker counts as written once it is committed (acks=all, as Kafka appends them):
        the coordinator writes CompleteCommit / CompleteAbort after this returns and never
        sends the marker again, so a marker lost with its leader would leave the
        transaction open on the partition for ever (its last stable offset stuck). A marker
        not replicated within ``request.timeout.ms`` answers its error (REQUEST_TIMED_OUT,
        NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER_OR_FOLLOWER) and the coordinator writes
        it again later; a repeated marker is harmless (Kafka's markers are idempotent: the
        second finds no open transaction)."""
        server = self._server
        rm = server.replica_manager
        results: dict[TopicPartition, KafkaError | None] = {}
        appended: dict[TopicPartition, ProducePartitionResult] = {}
        offsets_partitions: set[int] = set()
        for tp in partitions:
            batch = build_control_batch(CONTROL_COMMIT if commit else CONTROL_ABORT,
                                        coordinator_epoch, producer_id=producer_id,
                                        producer_epoch=producer_epoch,
                                        timestamp_ms=server.time.milliseconds())
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
            appended[tp] = ProducePartitionResult(last_offset=partition.log_end_offset - 1)
            # A produce of this producer still being verified must not reopen the
            # transaction this marker ends.
            server.add_partitions_to_txn_manager.on_marker(tp, producer_id)
            rm.fetch_purgatory.check_and_complete(tp)
        if appended:
            op = DelayedProduce(server.config.request_timeout_ms, rm, appended)
            if not rm.produce_purgatory.try_complete_else_watch(op, list(appended)):
                await op.wait()
        for tp, result in appended.items():
            results[tp] = result.error
            if result.error is None and tp.topic == _OFFSETS_TOPIC:
                offsets_partitions.add(tp.partition)
        if offsets_partitions and self._txn_completion is not None:
            self._txn_completion.on_txn_completed(producer_id, offsets_partitions, commit)
        return results

    # =========================================================== ProducerIdBlocks

    def allocate_producer_id_block(self, block_size: int) -> int:
        return self._server.metadata_store.allocate_producer_id_block(block_size)
