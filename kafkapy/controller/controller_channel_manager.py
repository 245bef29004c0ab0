"""The controller's requests to brokers: Kafka's ``ControllerChannelManager`` (one connection
and one sender per live broker) and ``ControllerBrokerRequestBatch`` (what one controller
event sends).

Theory of operation
-------------------
- **One sender task per live broker**, with a queue. It sends the queued requests in order over
  a ``BrokerConnection`` to the broker's endpoint on the inter-broker listener (from its
  ``/brokers/ids/<id>`` registration), timeout ``controller.socket.timeout.ms``. A failed send
  is retried (backoff 0.1 s doubling to 1 s) until it succeeds or the broker leaves: requests
  must arrive in order, so a broker that does not answer holds back its own queue only.
  ``remove_broker`` cancels the sender (the broker left or re-registered); a bounced broker
  gets a fresh sender and connection.
- **A batch per event** (``ControllerRequestBatch``): the event handler adds partitions to
  LeaderAndIsr (per receiving broker), UpdateMetadata (per receiving broker) and StopReplica
  (per broker, with the delete flag); ``send`` builds one request of each kind per broker and
  queues them, LeaderAndIsr before UpdateMetadata before StopReplica, as Kafka does. Every
  request carries ControllerId, ControllerEpoch and the receiver's broker epoch as the
  controller knows it; topic ids everywhere.
- Responses go to ``on_response(broker_id, api_key, request, response)`` on the Trio loop
  (the controller turns StopReplica answers into topic-deletion progress).

Versions: LeaderAndIsr v6, UpdateMetadata v7, StopReplica v3 (the wire contract).
"""

from __future__ import annotations

import logging
import math
import ssl
from collections.abc import Callable
from typing import Any

import attrs
import trio

from kafkapy.clients.network_client import Authenticate, BrokerConnection
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_context import ControllerContext
from kafkapy.errors import BrokerNotAvailableError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    LeaderAndIsrLiveLeader,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrTopicState,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaTopicState,
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataTopicState,
)
from kafkapy.zk.kafka_zk_client import RegisteredBroker

__all__ = [
    "LEADER_AND_ISR_VERSION",
    "LEADER_DURING_DELETE",
    "STOP_REPLICA_VERSION",
    "UPDATE_METADATA_VERSION",
    "ControllerChannelManager",
    "ControllerRequestBatch",
]

log = logging.getLogger(__name__)

LEADER_AND_ISR_VERSION = 6
UPDATE_METADATA_VERSION = 7
STOP_REPLICA_VERSION = 3
LEADER_DURING_DELETE = -2              # Kafka's LeaderAndIsr.LeaderDuringDelete
LEADER_AND_ISR_FULL = 1
LEADER_AND_ISR_INCREMENTAL = 0
SECURITY_PROTOCOLS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}

ResponseCallback = Callable[[int, int, Any, Any], None]


def broker_endpoint(broker: RegisteredBroker, listener: str) -> tuple[str, int] | None:
    for name, _, host, port in broker.registration.endpoints:
        if name == listener:
            return host, port
    return None


@attrs.define
class _Sender:
    broker_id: int
    conn: BrokerConnection
    send: trio.MemorySendChannel[tuple[int, int, Any]]
    scope: trio.CancelScope


class ControllerChannelManager:
    """Connections and sender tasks to the live brokers, for one controller term."""

    def __init__(self, nursery: trio.Nursery, listener: str, timeout_ms: int,
                 on_response: ResponseCallback, *,
                 ssl_context: ssl.SSLContext | None = None,
                 authenticate: Authenticate | None = None) -> None:
        self._nursery = nursery
        self._ssl_context = ssl_context     # the inter-broker listener is SSL or SASL_SSL
        self._authenticate = authenticate   # ... or SASL_PLAINTEXT or SASL_SSL
        self._listener = listener
        self._timeout_s = timeout_ms / 1000
        self._on_response = on_response
        self._senders: dict[int, _Sender] = {}

    def add_broker(self, broker_id: int, broker: RegisteredBroker) -> None:
        self.remove_broker(broker_id)
        endpoint = broker_endpoint(broker, self._listener)
        if endpoint is None:
            log.error("Broker %d has no endpoint on the inter-broker listener %s: the "
                      "controller cannot reach it", broker_id, self._listener)
            return
        conn = BrokerConnection(endpoint[0], endpoint[1], client_id="kafkapy-controller",
                                timeout_s=self._timeout_s, ssl_context=self._ssl_context,
                                authenticate=self._authenticate)
        send, receive = trio.open_memory_channel[tuple[int, int, Any]](math.inf)
        sender = _Sender(broker_id, conn, send, trio.CancelScope())
        self._senders[broker_id] = sender
        self._nursery.start_soon(self._run_sender, sender, receive)

    def remove_broker(self, broker_id: int) -> None:
        sender = self._senders.pop(broker_id, None)
        if sender is not None:
            sender.scope.cancel()

    def close(self) -> None:
        for broker_id in list(self._senders):
            self.remove_broker(broker_id)

    def send(self, broker_id: int, api_key: int, version: int, body: Any) -> None:
        sender = self._senders.get(broker_id)
        if sender is None:
            log.debug("Not sending %s to broker %d: no channel", ApiKey(api_key).name,
                      broker_id)
            return
        sender.send.send_nowait((api_key, version, body))

    async def _run_sender(self, sender: _Sender,
                          receive: trio.MemoryReceiveChannel[tuple[int, int, Any]]) -> None:
        with sender.scope:
            try:
                async for api_key, version, body in receive:
                    backoff = 0.1
                    while True:
                        try:
                            response = await sender.conn.request(api_key, version, body)
                            break
                        except BrokerNotAvailableError as e:
                            log.debug("Controller's %s to broker %d failed (%s); retrying",
                                      ApiKey(api_key).name, sender.broker_id, e)
                            await trio.sleep(backoff)
                            backoff = min(backoff * 2, 1.0)
                    self._on_response(sender.broker_id, api_key, body, response)
            finally:
                await sender.conn.close()


class ControllerRequestBatch:
    """The requests of one controller event (Kafka's ControllerBrokerRequestBatch)."""

    def __init__(self, context: ControllerContext, controller_id: int, listener: str) -> None:
        self.context = context
        self.controller_id = controller_id
        self.listener = listener                  # the inter-broker listener (LiveLeaders)
        # broker -> {partition: is_new}; the state is read when the batch is sent (the
        # latest the event wrote).
        self.leader_and_isr: dict[int, dict[TopicPartition, bool]] = {}
        self.full: set[int] = set()               # brokers getting a full LeaderAndIsr
        self.update_metadata: dict[int, set[TopicPartition]] = {}
        self.stop_replica: dict[int, dict[TopicPartition, bool]] = {}

    def add_leader_and_isr(self, brokers: list[int] | set[int], tp: TopicPartition,
                           is_new: bool = False) -> None:
        """LeaderAndIsr for ``tp`` to ``brokers`` (live ones), and UpdateMetadata for it to
        every live broker (as Kafka's batch does)."""
        if tp not in self.context.states:
            return
        for broker_id in brokers:
            if self.context.is_alive(broker_id):
                entries = self.leader_and_isr.setdefault(broker_id, {})
                entries[tp] = entries.get(tp, False) or is_new
        self.add_update_metadata(self.context.live_brokers, [tp])

    def add_update_metadata(self, brokers: Any, tps: Any) -> None:
        """UpdateMetadata to ``brokers`` with ``tps`` (maybe none: live brokers only)."""
        for broker_id in brokers:
            if self.context.is_alive(broker_id):
                self.update_metadata.setdefault(broker_id, set()).update(tps)

    def add_stop_replica(self, broker_id: int, tp: TopicPartition, delete: bool) -> None:
        if self.context.is_alive(broker_id):
            entries = self.stop_replica.setdefault(broker_id, {})
            entries[tp] = entries.get(tp, False) or delete

    @property
    def empty(self) -> bool:
        return not (self.leader_and_isr or self.update_metadata or self.stop_replica)

    def send(self, channels: ControllerChannelManager) -> None:
        ctx = self.context
        for broker_id, entries in sorted(self.leader_and_isr.items()):
            channels.send(broker_id, ApiKey.LEADER_AND_ISR, LEADER_AND_ISR_VERSION,
                          self._leader_and_isr(broker_id, entries))
        for broker_id, tps in sorted(self.update_metadata.items()):
            channels.send(broker_id, ApiKey.UPDATE_METADATA, UPDATE_METADATA_VERSION,
                          self.update_metadata_request(broker_id, tps))
        for broker_id, stops in sorted(self.stop_replica.items()):
            by_topic: dict[str, list[StopReplicaPartitionState]] = {}
            for tp, delete in sorted(stops.items()):
                state = ctx.states.get(tp)
                # A deleted partition's replica is stopped whatever epoch it has (-2).
                epoch = -2 if delete else (state.leader_epoch if state is not None else -1)
                by_topic.setdefault(tp.topic, []).append(StopReplicaPartitionState(
                    partition_index=tp.partition, leader_epoch=epoch,
                    delete_partition=delete))
            channels.send(broker_id, ApiKey.STOP_REPLICA, STOP_REPLICA_VERSION,
                          StopReplicaRequest(
                              controller_id=self.controller_id,
                              controller_epoch=ctx.epoch,
                              broker_epoch=ctx.broker_epoch(broker_id),
                              topic_states=[StopReplicaTopicState(topic_name=t,
                                                                  partition_states=ps)
                                            for t, ps in by_topic.items()]))
        self.leader_and_isr.clear()
        self.update_metadata.clear()
        self.stop_replica.clear()
        self.full.clear()

    def _leader_and_isr(self, broker_id: int, entries: dict[TopicPartition, bool]
                        ) -> LeaderAndIsrRequest:
        ctx = self.context
        by_topic: dict[str, list[LeaderAndIsrPartitionState]] = {}
        leaders: set[int] = set()
        for tp, is_new in sorted(entries.items()):
            s = ctx.states.get(tp)
            if s is None:
                continue
            assignment = ctx.assignments.get(tp)
            replicas = list(assignment.replicas) if assignment is not None else []
            by_topic.setdefault(tp.topic, []).append(LeaderAndIsrPartitionState(
                partition_index=tp.partition, controller_epoch=s.controller_epoch,
                leader=s.leader, leader_epoch=s.leader_epoch, isr=list(s.isr),
                partition_epoch=s.partition_epoch, replicas=replicas,
                adding_replicas=list(assignment.adding) if assignment else [],
                removing_replicas=list(assignment.removing) if assignment else [],
                is_new=is_new, leader_recovery_state=s.leader_recovery_state))
            if s.leader >= 0:
                leaders.add(s.leader)
        live_leaders = []
        for leader in sorted(leaders):
            broker = ctx.live_brokers.get(leader)
            endpoint = None if broker is None else broker_endpoint(broker, self.listener)
            if endpoint is not None:
                live_leaders.append(LeaderAndIsrLiveLeader(broker_id=leader,
                                                           host_name=endpoint[0],
                                                           port=endpoint[1]))
        topic_states = []
        for topic, states in by_topic.items():
            tid = ctx.topic_ids.get(topic)
            topic_state = LeaderAndIsrTopicState(topic_name=topic, partition_states=states)
            if tid is not None:
                topic_state.topic_id = tid
            topic_states.append(topic_state)
        return LeaderAndIsrRequest(
            controller_id=self.controller_id, controller_epoch=ctx.epoch,
            broker_epoch=ctx.broker_epoch(broker_id),
            type=LEADER_AND_ISR_FULL if broker_id in self.full else LEADER_AND_ISR_INCREMENTAL,
            topic_states=topic_states, live_leaders=live_leaders)

    def update_metadata_request(self, broker_id: int, tps: set[TopicPartition]
                                ) -> UpdateMetadataRequest:
        ctx = self.context
        by_topic: dict[str, list[UpdateMetadataPartitionState]] = {}
        for tp in sorted(tps):
            s = ctx.states.get(tp)
            if s is None:
                continue
            leader = LEADER_DURING_DELETE if ctx.is_deleting(tp) else s.leader
            by_topic.setdefault(tp.topic, []).append(UpdateMetadataPartitionState(
                partition_index=tp.partition, controller_epoch=s.controller_epoch,
                leader=leader, leader_epoch=s.leader_epoch, isr=list(s.isr),
                zk_version=s.partition_epoch, replicas=list(ctx.replicas(tp)),
                offline_replicas=ctx.offline_replicas(tp)))
        topic_states = []
        for topic, states in by_topic.items():
            topic_state = UpdateMetadataTopicState(topic_name=topic, partition_states=states)
            tid = ctx.topic_ids.get(topic)
            if tid is not None:
                topic_state.topic_id = tid
            topic_states.append(topic_state)
        brokers = []
        for bid, broker in sorted(ctx.live_brokers.items()):
            reg = broker.registration
            brokers.append(UpdateMetadataBroker(
                id=bid, rack=reg.rack,
                endpoints=[UpdateMetadataEndpoint(
                    port=port, host=host, listener=name,
                    security_protocol=SECURITY_PROTOCOLS.get(proto, 0))
                    for name, proto, host, port in reg.endpoints]))
        return UpdateMetadataRequest(
            controller_id=self.controller_id, controller_epoch=ctx.epoch,
            broker_epoch=ctx.broker_epoch(broker_id), topic_states=topic_states,
            live_brokers=brokers)
