"""AlterPartitionManager: a partition leader's ISR changes, sent to the controller (KIP-497).

Kafka's ``DefaultAlterPartitionManager``. The leader never writes ZooKeeper: a Partition that
wants a new ISR calls ``submit`` (one change per partition in flight; a second is refused and
the partition asks again at its next check). A single task (``run``) sends every unsent change
in one AlterPartition v2 (BrokerId, BrokerEpoch, per topic id: PartitionIndex, LeaderEpoch,
NewIsr, PartitionEpoch) to the controller and hands each partition's answer to
``Partition.on_alter_partition``, which applies it if its leader epoch is still current.

Errors: a network failure or a top-level error (NOT_CONTROLLER, STALE_BROKER_EPOCH, ...) puts
the changes back and retries after ``replica.fetch.backoff.ms`` (the controller may have moved:
its id and endpoint are looked up again). Per-partition errors go to the partition
(INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH: the change stays pending until a LeaderAndIsr
brings the truth, as Kafka's; INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED: the change is
dropped and may be proposed again).

The controller is found through the metadata cache (``controller_id``, ``broker_endpoint`` on
the inter-broker listener, helper B's contract); ``controller_endpoint`` may be replaced (tests
without a controller). Runs on the broker's event loop.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import trio

from kafkapy.clients.network_client import BrokerConnection
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import BrokerNotAvailableError, error_name
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterPartitionRequest,
    AlterPartitionRequestAlterPartitionPartitionData,
    AlterPartitionRequestAlterPartitionTopicData,
    AlterPartitionResponse,
)

if TYPE_CHECKING:
    from kafkapy.server.partition import Partition, PendingIsr
    from kafkapy.server.replica_manager import ReplicaManager

__all__ = ["ALTER_PARTITION_VERSION", "AlterPartitionManager"]

log = logging.getLogger(__name__)

ALTER_PARTITION_VERSION = 2


@attrs.frozen
class _Item:
    partition: Partition
    change: PendingIsr


class AlterPartitionManager:
    def __init__(self, manager: ReplicaManager) -> None:
        self._rm = manager
        self._unsent: dict[TopicPartition, _Item] = {}
        self._inflight: set[TopicPartition] = set()
        self._wakeup = trio.Event()
        self._conn: BrokerConnection | None = None
        self.controller_endpoint: Callable[[], tuple[str, int] | None] = \
            self._controller_from_metadata
        self.requests_sent = 0

    def submit(self, partition: Partition, change: PendingIsr) -> bool:
        """Queue ``change``; False if one for this partition is queued or in flight."""
        tp = partition.tp
        if tp in self._unsent or tp in self._inflight:
            return False
        self._unsent[tp] = _Item(partition, change)
        self._wakeup.set()
        return True

    def _controller_from_metadata(self) -> tuple[str, int] | None:
        server = self._rm.server
        cache: Any = getattr(server, "metadata_cache", None)
        controller_id = getattr(cache, "controller_id", None)
        if server is None or controller_id is None or controller_id < 0 or \
                not hasattr(cache, "broker_endpoint"):
            return None
        endpoint = cache.broker_endpoint(controller_id, server.config.inter_broker_listener_name)
        return None if endpoint is None else (endpoint.host, endpoint.port)

    def _backoff_s(self) -> float:
        return self._rm.replica_config("replica_fetch_backoff_ms", 1000) / 1000

    async def run(self) -> None:
        try:
            while True:
                if not self._unsent:
                    await self._wakeup.wait()
                    self._wakeup = trio.Event()
                    continue
                endpoint = self.controller_endpoint()
                if endpoint is None:
                    await trio.sleep(self._backoff_s())
                    continue
                batch, self._unsent = self._unsent, {}
                self._inflight.update(batch)
                try:
                    response = await self._send(endpoint, batch)
                finally:
                    self._inflight.difference_update(batch)
                if response is None or response.error_code != 0:
                    if response is not None:
                        log.info("AlterPartition refused by the controller: %s; retrying",
                                 error_name(response.error_code))
                    for tp, item in batch.items():
                        if item.partition.pending_isr is item.change:
                            self._unsent.setdefault(tp, item)
                    await trio.sleep(self._backoff_s())
                    continue
                self._apply(batch, response)
        finally:
            if self._conn is not None:
                await self._conn.close()

    async def _send(self, endpoint: tuple[str, int], batch: dict[TopicPartition, _Item]
                    ) -> AlterPartitionResponse | None:
        host, port = endpoint
        if self._conn is None or (self._conn.host, self._conn.port) != (host, port):
            if self._conn is not None:
                await self._conn.close()
            self._conn = BrokerConnection(
                host, port, client_id=f"broker-{self._rm.node_id}-alter-partition",
                timeout_s=self._rm.replica_config("controller_socket_timeout_ms", 30000) / 1000,
                ssl_context=self._rm.inter_broker_ssl_context,
                authenticate=self._rm.inter_broker_authenticate)
        topics: dict[uuid.UUID, AlterPartitionRequestAlterPartitionTopicData] = {}
        for item in batch.values():
            p = item.partition
            topic = topics.setdefault(p.topic_id, AlterPartitionRequestAlterPartitionTopicData(
                topic_name=p.tp.topic, topic_id=p.topic_id, partitions=[]))
            topic.partitions.append(AlterPartitionRequestAlterPartitionPartitionData(
                partition_index=p.tp.partition, leader_epoch=item.change.leader_epoch,
                new_isr=list(item.change.new_isr),
                partition_epoch=item.change.partition_epoch))
        request = AlterPartitionRequest(broker_id=self._rm.node_id,
                                        broker_epoch=self._rm.broker_epoch,
                                        topics=list(topics.values()))
        self.requests_sent += 1
        try:
            response: AlterPartitionResponse = await self._conn.request(
                ApiKey.ALTER_PARTITION, ALTER_PARTITION_VERSION, request)
        except BrokerNotAvailableError as e:
            log.info("AlterPartition to the controller at %s:%d failed: %s", host, port, e)
            return None
        except Exception:
            log.exception("AlterPartition to the controller at %s:%d failed", host, port)
            return None
        return response

    def _apply(self, batch: dict[TopicPartition, _Item], response: AlterPartitionResponse
               ) -> None:
        by_id = {(item.partition.topic_id, tp.partition): item for tp, item in batch.items()}
        now = self._rm.now_ms()
        for topic in response.topics:
            for p in topic.partitions:
                item = by_id.get((topic.topic_id, p.partition_index))
                if item is None:
                    continue
                partition = item.partition
                if p.error_code != 0:
                    log.info("%s: the controller refused ISR %s: %s", partition.tp,
                             list(item.change.new_isr), error_name(p.error_code))
                before = partition.isr
                if partition.on_alter_partition(item.change, p.error_code, p.leader_epoch,
                                                list(p.isr), p.partition_epoch, now):
                    self._rm.on_high_watermark_moved(partition.tp)
                metrics = getattr(self._rm.server, "metrics", None)
                if metrics is not None and partition.isr is not before:
                    # The controller accepted it: IsrShrinksPerSec / IsrExpandsPerSec.
                    metrics.isr_changed(before, partition.isr)
