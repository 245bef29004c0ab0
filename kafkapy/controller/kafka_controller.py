"""KafkaController: the ZooKeeper-mode controller of a kafkapy cluster (Kafka 2.8-3.x's
``KafkaController``, ``PartitionStateMachine``, ``ReplicaStateMachine``,
``TopicDeletionManager``): its election, then its duties while it is the active controller.

Theory of operation
-------------------
Election
    Every broker with ``zookeeper.connect`` runs one, after its registration. It tries to
    become controller (``KafkaZkClient.register_controller_and_increment_epoch``: the ephemeral
    ``/controller`` and ``/controller_epoch`` + 1 in one multi-op), and watches ``/controller``.
    The winner keeps the epoch's znode version: every later write carries a check on it, so a
    deposed controller (session expired, paused, another broker bumped the epoch) changes
    nothing; its writes fail with ``ControllerMovedError`` and it resigns. A broker whose own
    session expired resigns at once and competes again once kazoo has a new session.
Events
    One Trio task processes ``controller_events`` one at a time (Kafka's single controller
    thread). kazoo's watch callbacks (children of ``/brokers/ids``, ``/brokers/topics``,
    ``/admin/delete_topics``, data of each ``/brokers/topics/<t>``) only enqueue; so do the
    request handlers (AlterPartition, ControlledShutdown, ElectLeaders), which then await the
    event's reply. kazoo watches cannot be removed: they are set once per process and events
    are ignored while this broker is not the active controller.
State
    ``ControllerContext`` is rebuilt from ZooKeeper when this broker becomes controller.
    Every partition state change is written first (the state znode, conditional on the
    partition epoch = its znode version, in a transaction fenced by the controller epoch),
    then applied to the context, then sent (``ControllerRequestBatch``: LeaderAndIsr to the
    partition's live replicas, UpdateMetadata to every live broker, StopReplica).
Elections (``partition_leader_election``)
    Leader epoch + 1 on every change of leader or ISR the controller makes (Kafka 3.x);
    ISR changes asked by leaders (AlterPartition) keep the leader epoch.
    A broker that dies or re-registers (new broker epoch = bounced): the partitions it led get
    the first live ISR replica in assignment order (else, with
    ``unclean.leader.election.enable`` from the topic's config or the broker's, the first
    live replica; else leader -1 with the last ISR kept), it leaves the ISRs it was in.
    A broker that starts: full UpdateMetadata and LeaderAndIsr for its replicas, then the
    offline partitions it can lead get leaders.
Topic deletion (``/admin/delete_topics/<t>``, with ``delete.topic.enable``)
    UpdateMetadata with leader -2 (deleting), StopReplica(delete) to every replica; once
    every replica has answered (dead replicas when they come back), the topic's znodes go.
Requests to the controller
    AlterPartition (the leader's ISR change, checked against broker epoch, leader, leader
    epoch, partition epoch and eligibility; the partition epoch becomes the znode's new
    version), ControlledShutdown (the broker is excluded from elections and ISRs, its
    leaderships move, it leaves the ISRs it follows; RemainingPartitions lists what it still
    leads with RF > 1), ElectLeaders (preferred / unclean) and the auto leader rebalance.
Reassignment (KIP-455, ``AlterPartitionReassignments`` or ``/admin/reassign_partitions``)
    The topic znode holds the full replica set (target + original) with adding/removing
    replicas; once every target replica is in the ISR, a leader from the target set, the ISR
    and the assignment shrink to the target, removed replicas get StopReplica(delete).
    Cancelling returns to the original replicas. A new controller resumes them from the
    topic znodes.

kazoo calls back on its own threads; the callbacks only schedule work on the Trio loop
(``TrioToken.run_sync_soon``); every blocking ZooKeeper call runs in a worker thread.
"""

from __future__ import annotations

import logging
import math
import ssl
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import trio
from kazoo.client import KazooState
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError

from kafkapy.clients.network_client import Authenticate
from kafkapy.common.features import FeatureUpdate, apply_feature_updates, default_finalized
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig
from kafkapy.controller.controller_channel_manager import (
    ControllerChannelManager,
    ControllerRequestBatch,
)
from kafkapy.controller.controller_context import ControllerContext
from kafkapy.controller.controller_events import (
    AlterPartitionEvent,
    AutoRebalance,
    BrokerChange,
    ControlledShutdownEvent,
    ControllerEvent,
    ElectLeadersEvent,
    LegacyReassignment,
    PartitionModifications,
    ReassignmentsEvent,
    Reply,
    Startup,
    StopReplicaAnswered,
    TopicChange,
    TopicDeletion,
    UpdateFeaturesEvent,
)
from kafkapy.controller.partition_leader_election import (
    controlled_shutdown_leader,
    offline_leader,
    preferred_leader,
    reassignment_leader,
)
from kafkapy.errors import (
    BrokerNotAvailableError,
    ElectionNotNeededError,
    EligibleLeadersNotAvailableError,
    FeatureUpdateFailedError,
    FencedLeaderEpochError,
    IneligibleReplicaError,
    InvalidReplicaAssignmentError,
    InvalidUpdateVersionError,
    KafkaError,
    NoReassignmentInProgressError,
    NotControllerError,
    NotLeaderOrFollowerError,
    PreferredLeaderNotAvailableError,
    StaleBrokerEpochError,
    UnknownTopicIdError,
    UnknownTopicOrPartitionError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterPartitionResponse,
    AlterPartitionResponseAlterPartitionPartitionData,
    AlterPartitionResponseAlterPartitionTopicData,
    ControlledShutdownResponse,
    RemainingPartition,
)
from kafkapy.zk.kafka_zk_client import ControllerMovedError, KafkaZkClient
from kafkapy.zk.zk_data import (
    BROKER_IDS_PATH,
    CONTROLLER_PATH,
    DELETE_TOPICS_PATH,
    REASSIGN_PARTITIONS_PATH,
    TOPICS_PATH,
    FeatureZNode,
    LeaderAndIsr,
    ReplicaAssignment,
    TopicAssignment,
    topic_path,
)

__all__ = ["KafkaController"]

log = logging.getLogger(__name__)

_RETRY_S = 1.0


def _truthy(value: str | None) -> bool | None:
    return None if value is None else value.strip().lower() == "true"


class KafkaController:
    """The controller of one broker (``broker_id``) over its ZooKeeper session."""

    def __init__(self, client: KafkaZkClient, broker_id: int, time: Time, *,
                 config: Callable[[], BrokerConfig] | None = None,
                 on_elected: Callable[[int], None] | None = None,
                 on_resigned: Callable[[], None] | None = None,
                 ssl_context: ssl.SSLContext | None = None,
                 authenticate: Authenticate | None = None) -> None:
        self.client = client
        # TLS context of the channels to the brokers (the inter-broker listener is SSL/SASL_SSL)
        self._ssl_context = ssl_context
        # SASL on the inter-broker listener: what each connection to a broker runs first.
        self._authenticate = authenticate
        self.broker_id = broker_id
        self.time = time
        self._config = config
        self.on_elected = on_elected
        self.on_resigned = on_resigned
        self.active = False             # this broker is the controller
        self.epoch = -1                 # the controller epoch it won (when active)
        self.epoch_zk_version = -1      # /controller_epoch's version then: the write fence
        self.controller_id: int | None = None
        self.context: ControllerContext | None = None   # while active, once loaded
        self._changed = trio.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._events_in, self._events_out = trio.open_memory_channel[ControllerEvent](math.inf)
        self._nursery: trio.Nursery | None = None
        self._channels: ControllerChannelManager | None = None
        self._watching = False
        self._watched_topics: set[str] = set()

    # ==================================================================== running

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Compete for the controller, and be it when elected, until cancelled."""
        self._token = trio.lowlevel.current_trio_token()
        self.client.add_state_listener(self._on_state)
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._process_events)
                if self._config is not None and self._config().auto_leader_rebalance_enable:
                    nursery.start_soon(self._rebalance_timer)
                # Fires now and on every change of /controller (kazoo re-arms it).
                self.client.zk.DataWatch(CONTROLLER_PATH, self._on_controller_change)
                task_status.started()
                await self._elect_forever()
        finally:
            self._resign()

    async def _elect_forever(self) -> None:
        while True:
            await self._changed.wait()
            self._changed = trio.Event()
            try:
                await self._elect()
            except Exception as e:     # ZooKeeper away: the next change tries again
                log.warning("Controller election failed (%s); retrying", e)
                await trio.sleep(_RETRY_S)
                self._changed.set()

    async def _elect(self) -> None:
        current = await trio.to_thread.run_sync(self.client.get_controller_id)
        if current is not None:
            self.controller_id = current
            if current != self.broker_id:
                self._resign()
            return
        try:
            epoch, version = await trio.to_thread.run_sync(
                self.client.register_controller_and_increment_epoch, self.broker_id,
                self.time.milliseconds())
        except ControllerMovedError:
            self.controller_id = await trio.to_thread.run_sync(self.client.get_controller_id)
            self._resign()
            return
        self.active, self.epoch, self.epoch_zk_version = True, epoch, version
        self.controller_id = self.broker_id
        log.info("Broker %d is the controller (controller epoch %d)", self.broker_id, epoch)
        self.enqueue(Startup(epoch))
        if self.on_elected is not None:
            self.on_elected(epoch)

    def _resign(self) -> None:
        if self.active:
            self.active = False
            self.context = None
            if self._channels is not None:
                self._channels.close()
                self._channels = None
            log.info("Broker %d is no longer the controller (it was at epoch %d)",
                     self.broker_id, self.epoch)
            if self.on_resigned is not None:
                self.on_resigned()

    # ============================================================ public (Trio)

    def enqueue(self, event: ControllerEvent) -> None:
        self._events_in.send_nowait(event)

    async def alter_partition(self, request: Any, version: int) -> AlterPartitionResponse:
        """Process an AlterPartition request (handler side). Raises NotControllerError."""
        reply: Reply[AlterPartitionResponse] = Reply()
        self.enqueue(AlterPartitionEvent(request, version, reply))
        return await reply.wait()

    async def controlled_shutdown(self, broker_id: int, broker_epoch: int
                                  ) -> ControlledShutdownResponse:
        reply: Reply[ControlledShutdownResponse] = Reply()
        self.enqueue(ControlledShutdownEvent(broker_id, broker_epoch, reply))
        return await reply.wait()

    async def elect_leaders(self, election_type: int, partitions: list[TopicPartition] | None
                            ) -> dict[TopicPartition, KafkaError | int]:
        """Per partition: the leader elected (written to ZooKeeper and sent to the replicas)
        or the error."""
        reply: Reply[dict[TopicPartition, KafkaError | int]] = Reply()
        self.enqueue(ElectLeadersEvent(election_type, partitions, reply))
        return await reply.wait()

    async def alter_reassignments(self, targets: dict[TopicPartition, tuple[int, ...] | None]
                                  ) -> dict[TopicPartition, KafkaError | None]:
        """Start (target replicas) or cancel (None) reassignments; per partition None or the
        error. Raises NotControllerError."""
        reply: Reply[dict[TopicPartition, KafkaError | None]] = Reply()
        self.enqueue(ReassignmentsEvent(targets, reply))
        return await reply.wait()

    async def update_features(self, updates: list[FeatureUpdate], validate_only: bool,
                              atomic: bool) -> tuple[int, dict[str, KafkaError | None]]:
        """UpdateFeatures (the caller checked this broker is the controller): the version of
        ``/feature`` now (the finalized features' epoch, -1 if it does not exist) and per
        feature None (applied, or valid under ``validate_only``) or the error. Raises
        NotControllerError."""
        reply: Reply[tuple[int, dict[str, KafkaError | None]]] = Reply()
        self.enqueue(UpdateFeaturesEvent(updates, validate_only, atomic, reply))
        return await reply.wait()

    def list_reassignments(self, partitions: list[TopicPartition] | None
                           ) -> dict[TopicPartition, ReplicaAssignment]:
        """The reassignments in progress (of ``partitions``, or all). Raises
        NotControllerError."""
        ctx = self.context
        if not self.active or ctx is None:
            raise NotControllerError(f"broker {self.broker_id} is not the controller")
        tps = ctx.all_partitions() if partitions is None else partitions
        return {tp: ctx.assignments[tp] for tp in tps if ctx.reassigning(tp)}

    # ========================================================== kazoo's threads

    def _on_controller_change(self, data: bytes | None, stat: Any) -> None:
        self._schedule(self._changed_now)

    def _on_state(self, state: KazooState) -> None:
        if state == KazooState.LOST:
            self._schedule(self._session_lost)
        elif state == KazooState.CONNECTED:
            self._schedule(self._changed_now)

    def _schedule(self, fn: Callable[[], None]) -> None:
        if self._token is not None:
            try:
                self._token.run_sync_soon(fn)
            except trio.RunFinishedError:
                pass                        # the broker has stopped

    def _enqueue_soon(self, event: ControllerEvent) -> None:
        self._schedule(lambda: self.enqueue(event))

    def _watch(self) -> None:
        """The controller's watches, set once per process (kazoo re-arms them)."""
        if self._watching:
            return
        self._watching = True
        zk = self.client.zk

        def brokers(children: list[str]) -> None:
            self._enqueue_soon(BrokerChange())

        def topics(children: list[str]) -> None:
            self._enqueue_soon(TopicChange())

        def deletions(children: list[str]) -> None:
            self._enqueue_soon(TopicDeletion())

        def legacy(data: bytes | None, stat: Any) -> None:
            if data is not None:
                self._enqueue_soon(LegacyReassignment())

        zk.DataWatch(REASSIGN_PARTITIONS_PATH, legacy)
        zk.ChildrenWatch(BROKER_IDS_PATH, brokers)
        zk.ChildrenWatch(TOPICS_PATH, topics)
        zk.ChildrenWatch(DELETE_TOPICS_PATH, deletions)

    def _watch_topic(self, topic: str) -> None:
        if topic in self._watched_topics:
            return
        self._watched_topics.add(topic)

        def changed(data: bytes | None, stat: Any) -> bool | None:
            if data is None:               # the topic is gone: this watch ends with it
                self._schedule(lambda: self._watched_topics.discard(topic))
                return False
            self._enqueue_soon(PartitionModifications(topic))
            return None

        self.client.zk.DataWatch(topic_path(topic), changed)

    # ============================================================= Trio's thread

    def _changed_now(self) -> None:
        self._changed.set()

    def _session_lost(self) -> None:
        # /controller, ephemeral, went with the session: whatever ZooKeeper says later, this
        # broker is not the controller any more.
        self._resign()
        self.controller_id = None

    # ============================================================== event loop

    async def _process_events(self) -> None:
        async for event in self._events_out:
            try:
                await self._process(event)
            except ControllerMovedError:
                log.warning("Broker %d: a write was fenced, another broker is controller; "
                            "resigning", self.broker_id)
                self._fail_reply(event, NotControllerError())
                self._resign()
                self._changed.set()
            except (KazooException, trio.BrokenResourceError) as e:
                log.warning("Controller event %s failed on ZooKeeper (%s)",
                            type(event).__name__, e)
                self._fail_reply(event, NotControllerError(str(e)))
                if self.active and not isinstance(event, Startup):
                    self._retry_later(event)
                elif self.active:
                    self._retry_later(Startup(self.epoch))
            except Exception as e:
                log.exception("Controller event %s failed", type(event).__name__)
                self._fail_reply(event, e)

    def _retry_later(self, event: ControllerEvent) -> None:
        if isinstance(event, AlterPartitionEvent | ControlledShutdownEvent | ElectLeadersEvent
                      | ReassignmentsEvent | UpdateFeaturesEvent):
            return                          # the requester retries
        assert self._nursery is not None

        async def later() -> None:
            await trio.sleep(_RETRY_S)
            self.enqueue(event)
        self._nursery.start_soon(later)

    @staticmethod
    def _fail_reply(event: ControllerEvent, error: BaseException) -> None:
        reply = getattr(event, "reply", None)
        if isinstance(reply, Reply):
            reply.fail(error)

    async def _process(self, event: ControllerEvent) -> None:
        if isinstance(event, Startup):
            if self.active and event.epoch == self.epoch:
                await self._on_controller_failover()
            return
        ctx = self.context
        if not self.active or ctx is None:
            self._fail_reply(event, NotControllerError(
                f"broker {self.broker_id} is not the controller"))
            return
        if isinstance(event, BrokerChange):
            await self._on_broker_change(ctx)
        elif isinstance(event, TopicChange):
            await self._on_topic_change(ctx)
        elif isinstance(event, PartitionModifications):
            await self._on_partition_modifications(ctx, event.topic)
        elif isinstance(event, TopicDeletion):
            await self._on_topic_deletion(ctx)
        elif isinstance(event, StopReplicaAnswered):
            await self._on_stop_replica_answered(ctx, event)
        elif isinstance(event, AlterPartitionEvent):
            event.reply.set(await self._on_alter_partition(ctx, event.request, event.version))
        elif isinstance(event, ControlledShutdownEvent):
            event.reply.set(await self._on_controlled_shutdown(ctx, event.broker_id,
                                                               event.broker_epoch))
        elif isinstance(event, ElectLeadersEvent):
            event.reply.set(await self._on_elect_leaders(ctx, event.election_type,
                                                         event.partitions))
        elif isinstance(event, AutoRebalance):
            await self._on_auto_rebalance(ctx)
        elif isinstance(event, ReassignmentsEvent):
            event.reply.set(await self._on_reassignments(ctx, event.targets))
        elif isinstance(event, LegacyReassignment):
            await self._on_legacy_reassignment(ctx)
        elif isinstance(event, UpdateFeaturesEvent):
            event.reply.set(await self._on_update_features(ctx, event))

    # ============================================================== helpers

    def config(self) -> BrokerConfig | None:
        return None if self._config is None else self._config()

    def _batch(self, ctx: ControllerContext) -> ControllerRequestBatch:
        cfg = self.config()
        listener = (cfg.inter_broker_listener_name if cfg is not None else None) or "PLAINTEXT"
        return ControllerRequestBatch(ctx, self.broker_id, listener)

    def _send(self, ctx: ControllerContext, batch: ControllerRequestBatch) -> None:
        if self.active and self.context is ctx and self._channels is not None:
            batch.send(self._channels)

    async def _zk(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await trio.to_thread.run_sync(fn, *args)

    def _on_response(self, broker_id: int, api_key: int, request: Any, response: Any) -> None:
        if api_key == ApiKey.STOP_REPLICA:
            self.enqueue(StopReplicaAnswered(broker_id, request, response))
        elif getattr(response, "error_code", 0):
            log.warning("Broker %d answered the controller's %s with error %d", broker_id,
                        ApiKey(api_key).name, response.error_code)

    async def _unclean_allowed(self, topic: str) -> bool:
        override = _truthy((await self._zk(self.client.get_topic_config, topic))
                           .get("unclean.leader.election.enable"))
        if override is not None:
            return override
        cfg = self.config()
        return bool(cfg is not None and cfg.unclean_leader_election_enable)

    async def _write_states(self, ctx: ControllerContext,
                            changes: dict[TopicPartition, LeaderAndIsr]
                            ) -> dict[TopicPartition, LeaderAndIsr]:
        """Write new states (each conditional on its ``partition_epoch``, the version the
        controller read); the ones written, applied to the context. A partition whose znode
        moved under the controller is re-read and left out."""
        if not changes:
            return {}
        results = await self._zk(self.client.update_partition_states, ctx.epoch_zk_version,
                                 changes)
        if any(isinstance(r, Exception) for r in results.values()):
            # One stale partition fails the whole transaction: write them one by one.
            results = {}
            for tp, state in changes.items():
                results.update(await self._zk(self.client.update_partition_states,
                                              ctx.epoch_zk_version, {tp: state}))
        written: dict[TopicPartition, LeaderAndIsr] = {}
        stale: list[TopicPartition] = []
        for tp, result in results.items():
            if isinstance(result, Exception):
                stale.append(tp)
            else:
                written[tp] = result
        if stale:
            log.warning("Partition states of %s changed under the controller; re-read", stale)
            ctx.states.update(await self._zk(self.client.get_partition_states, stale))
        ctx.states.update(written)
        return written

    # ========================================================== failover

    async def _on_controller_failover(self) -> None:
        ctx = ControllerContext(self.epoch, self.epoch_zk_version)
        assert self._nursery is not None
        cfg = self.config()
        if self._channels is not None:
            self._channels.close()
        self._channels = ControllerChannelManager(
            self._nursery, (cfg.inter_broker_listener_name if cfg else None) or "PLAINTEXT",
            cfg.controller_socket_timeout_ms if cfg else 30_000, self._on_response,
            ssl_context=self._ssl_context, authenticate=self._authenticate)
        self._watch()
        ctx.live_brokers = await self._zk(self.client.get_all_brokers)
        for broker_id, broker in ctx.live_brokers.items():
            self._channels.add_broker(broker_id, broker)
        topics = await self._zk(self.client.get_all_topics)
        await self._load_topics(ctx, topics)
        if not self.active or self.epoch != ctx.epoch:
            return
        await self._enable_feature_versioning(ctx)
        self.context = ctx
        batch = self._batch(ctx)
        await self._online_new_partitions(ctx, self._partitions_without_state(ctx), batch)
        await self._elect_offline(ctx, self._offline_partitions(ctx), batch)
        # Brokers that died while there was no controller leave the ISRs they were in, as
        # they would have had the controller seen them go.
        await self._remove_from_isr(
            ctx, {r for s in ctx.states.values() for r in s.isr if not ctx.is_alive(r)}, batch)
        # Everything to everyone: each live broker's metadata and its replicas' states.
        live = sorted(ctx.live_brokers)
        batch.add_update_metadata(live, ctx.all_partitions())
        for broker_id in live:
            self._add_full_leader_and_isr(ctx, broker_id, batch)
        self._send(ctx, batch)
        log.info("Controller %d (epoch %d) loaded %d brokers, %d topics, %d partitions",
                 self.broker_id, ctx.epoch, len(live), len(ctx.topics), len(ctx.assignments))
        await self._on_topic_deletion(ctx)
        # Reassignments a former controller started (adding/removing in the topic znodes).
        batch = self._batch(ctx)
        for tp in [tp for tp in ctx.all_partitions() if ctx.reassigning(tp)]:
            await self._maybe_complete_reassignment(ctx, tp, batch)
        self._send(ctx, batch)
        await self._on_legacy_reassignment(ctx)

    def _add_full_leader_and_isr(self, ctx: ControllerContext, broker_id: int,
                                 batch: ControllerRequestBatch) -> None:
        batch.full.add(broker_id)
        for tp in ctx.partitions_on(broker_id):
            if tp in ctx.states and not ctx.is_deleting(tp):
                batch.add_leader_and_isr([broker_id], tp)
        # A broker with no partitions still learns it is known (an empty full request).
        batch.leader_and_isr.setdefault(broker_id, {})

    async def _load_topics(self, ctx: ControllerContext, topics: Iterable[str]) -> None:
        assignments, states = await self._zk(self.client.load_topics, list(topics))
        for topic, assignment in assignments.items():
            if assignment.topic_id is None:
                # Topics made by older tools have no id: the controller gives them one.
                assignment = attrs.evolve(assignment, topic_id=uuid.uuid4())
                await self._zk(self.client.set_topic_assignment, ctx.epoch_zk_version,
                               assignment)
            assert assignment.topic_id is not None
            ctx.topic_ids[topic] = assignment.topic_id
            for p, replicas in assignment.partitions.items():
                ctx.assignments[TopicPartition(topic, p)] = replicas
            self._watch_topic(topic)
        ctx.states.update(states)

    @staticmethod
    def _partitions_without_state(ctx: ControllerContext) -> list[TopicPartition]:
        return [tp for tp in ctx.all_partitions()
                if tp not in ctx.states and not ctx.is_deleting(tp)]

    @staticmethod
    def _offline_partitions(ctx: ControllerContext) -> list[TopicPartition]:
        return [tp for tp, s in sorted(ctx.states.items())
                if not ctx.is_deleting(tp) and tp in ctx.assignments
                and (s.leader < 0 or not ctx.is_alive(s.leader))]

    async def _online_new_partitions(self, ctx: ControllerContext, tps: list[TopicPartition],
                                     batch: ControllerRequestBatch) -> None:
        """New partitions: leader = first live replica in assignment order, ISR = the live
        replicas, leader epoch 0; the state znodes created."""
        states: dict[TopicPartition, LeaderAndIsr] = {}
        for tp in tps:
            live = [r for r in ctx.replicas(tp) if ctx.is_eligible(r)]
            if not live:
                log.warning("New partition %s has no live replica (%s); it stays offline",
                            tp, list(ctx.replicas(tp)))
                continue
            states[tp] = LeaderAndIsr(live[0], 0, tuple(live), ctx.epoch, 0)
        if not states:
            return
        try:
            await self._zk(self.client.create_partition_states, ctx.epoch_zk_version, states)
        except NodeExistsError:
            # Some exist (a former controller got this far): create the others one by one.
            for tp, state in list(states.items()):
                try:
                    await self._zk(self.client.create_partition_states,
                                   ctx.epoch_zk_version, {tp: state})
                except NodeExistsError:
                    del states[tp]
            ctx.states.update(await self._zk(self.client.get_partition_states,
                                             [tp for tp in tps if tp not in states]))
        ctx.states.update(states)
        for tp in states:
            batch.add_leader_and_isr(ctx.live_replicas(tp), tp, is_new=True)

    async def _elect_offline(self, ctx: ControllerContext, tps: list[TopicPartition],
                             batch: ControllerRequestBatch) -> None:
        changes: dict[TopicPartition, LeaderAndIsr] = {}
        for tp in tps:
            state = ctx.states[tp]
            replicas = ctx.replicas(tp)
            leader, isr = offline_leader(replicas, state.isr, ctx.is_eligible, False)
            if leader is None and await self._unclean_allowed(tp.topic):
                leader, isr = offline_leader(replicas, state.isr, ctx.is_eligible, True)
                if leader is not None:
                    log.warning("Unclean leader election for %s: broker %d leads, data may "
                                "be lost", tp, leader)
            if leader is None:
                if state.leader != -1:
                    # No eligible replica: no leader, the last ISR kept (Kafka's way).
                    changes[tp] = LeaderAndIsr(-1, state.leader_epoch + 1, state.isr,
                                               ctx.epoch, state.partition_epoch)
                continue
            changes[tp] = LeaderAndIsr(leader, state.leader_epoch + 1, isr, ctx.epoch,
                                       state.partition_epoch)
        for tp in await self._write_states(ctx, changes):
            batch.add_leader_and_isr(ctx.live_replicas(tp), tp)

    # ========================================================== brokers

    async def _on_broker_change(self, ctx: ControllerContext) -> None:
        current = await self._zk(self.client.get_all_brokers)
        if self.context is not ctx:
            return
        old = ctx.live_brokers
        new = set(current) - set(old)
        dead = set(old) - set(current)
        bounced = {b for b in set(current) & set(old) if current[b].epoch != old[b].epoch}
        if not (new or dead or bounced):
            return
        log.info("Controller %d: brokers started %s, failed %s, bounced %s", self.broker_id,
                 sorted(new), sorted(dead), sorted(bounced))
        assert self._channels is not None
        batch = self._batch(ctx)
        gone = dead | bounced
        for broker_id in gone:
            self._channels.remove_broker(broker_id)
            del ctx.live_brokers[broker_id]
            ctx.shutting_down.discard(broker_id)
        if gone:
            await self._on_broker_failure(ctx, gone, batch)
        started = new | bounced
        for broker_id in started:
            ctx.live_brokers[broker_id] = current[broker_id]
            self._channels.add_broker(broker_id, current[broker_id])
        if started:
            await self._on_broker_startup(ctx, started, batch)
        self._send(ctx, batch)
        if started:
            await self._resume_deletions(ctx)

    async def _on_broker_failure(self, ctx: ControllerContext, gone: set[int],
                                 batch: ControllerRequestBatch) -> None:
        led = [tp for tp in ctx.all_partitions()
               if tp in ctx.states and ctx.states[tp].leader in gone and not ctx.is_deleting(tp)]
        await self._elect_offline(ctx, led, batch)
        await self._remove_from_isr(ctx, gone, batch)
        # Every live broker learns the broker list changed (and the offline replicas).
        batch.add_update_metadata(ctx.live_brokers,
                                  [tp for tp in ctx.all_partitions()
                                   if any(r in gone for r in ctx.replicas(tp))])
        # Deletions in flight to them are re-sent when they return.
        ctx.deletion_sent = {(tp, r) for tp, r in ctx.deletion_sent if r not in gone}

    async def _remove_from_isr(self, ctx: ControllerContext, gone: set[int],
                               batch: ControllerRequestBatch) -> None:
        """The partitions ``gone`` brokers followed: out of the ISR (the leader keeps
        leading). Partitions without a leader keep their last ISR."""
        changes: dict[TopicPartition, LeaderAndIsr] = {}
        for tp, state in sorted(ctx.states.items()):
            if ctx.is_deleting(tp) or state.leader < 0 or state.leader in gone:
                continue
            if any(r in gone for r in state.isr):
                isr = tuple(r for r in state.isr if r not in gone)
                changes[tp] = LeaderAndIsr(state.leader, state.leader_epoch + 1, isr,
                                           ctx.epoch, state.partition_epoch)
        for tp in await self._write_states(ctx, changes):
            batch.add_leader_and_isr(ctx.live_replicas(tp), tp)

    async def _on_broker_startup(self, ctx: ControllerContext, started: set[int],
                                 batch: ControllerRequestBatch) -> None:
        batch.add_update_metadata(set(ctx.live_brokers) - started, [])
        await self._online_new_partitions(ctx, self._partitions_without_state(ctx), batch)
        await self._elect_offline(ctx, self._offline_partitions(ctx), batch)
        batch.add_update_metadata(started, ctx.all_partitions())
        for broker_id in sorted(started):
            self._add_full_leader_and_isr(ctx, broker_id, batch)

    # ========================================================== topics

    async def _on_topic_change(self, ctx: ControllerContext) -> None:
        topics = set(await self._zk(self.client.get_all_topics))
        if self.context is not ctx:
            return
        for topic in ctx.topics - topics:   # removed behind the controller's back
            ctx.remove_topic(topic)
        new = sorted(topics - ctx.topics)
        if not new:
            return
        log.info("Controller %d: new topics %s", self.broker_id, new)
        await self._load_topics(ctx, new)
        batch = self._batch(ctx)
        await self._online_new_partitions(
            ctx, [tp for tp in self._partitions_without_state(ctx) if tp.topic in new], batch)
        self._send(ctx, batch)

    async def _on_partition_modifications(self, ctx: ControllerContext, topic: str) -> None:
        if topic not in ctx.topics or topic in ctx.topics_to_delete:
            return
        assignment: TopicAssignment | None = await self._zk(self.client.get_topic_assignment,
                                                            topic)
        if assignment is None or self.context is not ctx:
            return
        added = [TopicPartition(topic, p) for p in sorted(assignment.partitions)
                 if TopicPartition(topic, p) not in ctx.assignments]
        if not added:
            return
        log.info("Controller %d: new partitions %s", self.broker_id, added)
        for tp in added:
            ctx.assignments[tp] = assignment.partitions[tp.partition]
        batch = self._batch(ctx)
        await self._online_new_partitions(ctx, added, batch)
        self._send(ctx, batch)

    async def _on_topic_deletion(self, ctx: ControllerContext) -> None:
        marked = set(await self._zk(self.client.get_topic_deletions))
        if self.context is not ctx or not marked:
            return
        cfg = self.config()
        if cfg is not None and not cfg.delete_topic_enable:
            log.warning("Topic deletion of %s refused: delete.topic.enable is false",
                        sorted(marked))
            await self._zk(self.client.delete_topic_deletions, ctx.epoch_zk_version,
                           sorted(marked))
            return
        unknown = marked - ctx.topics
        if unknown:
            await self._zk(self.client.delete_topic_deletions, ctx.epoch_zk_version,
                           sorted(unknown))
        start = sorted((marked & ctx.topics) - ctx.topics_to_delete)
        if not start:
            await self._resume_deletions(ctx)     # a retry after a failed StopReplica
            return
        log.info("Controller %d: deleting topics %s", self.broker_id, start)
        ctx.topics_to_delete.update(start)
        batch = self._batch(ctx)
        tps = [tp for t in start for tp in ctx.partitions_of(t)]
        # Every broker stops serving them (leader -2: being deleted).
        batch.add_update_metadata(ctx.live_brokers, tps)
        for tp in tps:
            for replica in ctx.replicas(tp):
                ctx.deletion_pending.add((tp, replica))
        self._send(ctx, batch)
        await self._resume_deletions(ctx)

    async def _resume_deletions(self, ctx: ControllerContext) -> None:
        batch = self._batch(ctx)
        for tp, replica in sorted(ctx.deletion_pending - ctx.deletion_sent):
            if ctx.is_alive(replica):
                batch.add_stop_replica(replica, tp, delete=True)
                ctx.deletion_sent.add((tp, replica))
        self._send(ctx, batch)
        await self._complete_deletions(ctx)

    async def _on_stop_replica_answered(self, ctx: ControllerContext,
                                        event: StopReplicaAnswered) -> None:
        failed = {(e.topic_name, e.partition_index) for e in event.response.partition_errors
                  if e.error_code}
        retry = False
        for topic_state in event.request.topic_states:
            for p in topic_state.partition_states:
                if not p.delete_partition:
                    continue
                key = (TopicPartition(topic_state.topic_name, p.partition_index),
                       event.broker_id)
                ctx.deletion_sent.discard(key)
                if not event.response.error_code and \
                        (key[0].topic, key[0].partition) not in failed:
                    ctx.deletion_pending.discard(key)
                else:
                    retry = True
        await self._complete_deletions(ctx)
        if retry:
            log.warning("Broker %d failed to delete replicas (%s); retrying", event.broker_id,
                        event.response)
            self._retry_later(TopicDeletion())

    async def _complete_deletions(self, ctx: ControllerContext) -> None:
        waiting = {tp.topic for tp, _ in ctx.deletion_pending}
        for topic in sorted(ctx.topics_to_delete - waiting):
            await self._zk(self.client.delete_topic_znodes, ctx.epoch_zk_version, topic)
            ctx.remove_topic(topic)
            log.info("Controller %d: topic %s deleted", self.broker_id, topic)

    # ========================================================== AlterPartition

    async def _on_alter_partition(self, ctx: ControllerContext, request: Any, version: int
                                  ) -> AlterPartitionResponse:
        response = AlterPartitionResponse()
        broker_id = request.broker_id
        if not ctx.is_alive(broker_id) or (request.broker_epoch != -1 and
                                           request.broker_epoch != ctx.broker_epoch(broker_id)):
            response.error_code = StaleBrokerEpochError.code
            return response
        changes: dict[TopicPartition, LeaderAndIsr] = {}
        answers: dict[TopicPartition, AlterPartitionResponseAlterPartitionPartitionData] = {}
        order: list[tuple[Any, list[Any]]] = []
        for topic_data in request.topics:
            if version >= 2:
                name = ctx.topic_by_id(topic_data.topic_id)
            else:
                name = topic_data.topic_name if topic_data.topic_name in ctx.topics else None
            entries: list[Any] = []
            order.append((topic_data, entries))
            for p in topic_data.partitions:
                if name is None:
                    code = (UnknownTopicIdError if version >= 2
                            else UnknownTopicOrPartitionError).code
                    entries.append(AlterPartitionResponseAlterPartitionPartitionData(
                        partition_index=p.partition_index, error_code=code))
                    continue
                tp = TopicPartition(name, p.partition_index)
                entries.append(tp)
                state = ctx.states.get(tp)
                error = self._check_alter(ctx, tp, state, broker_id, p, version)
                if error is not None:
                    answers[tp] = AlterPartitionResponseAlterPartitionPartitionData(
                        partition_index=p.partition_index, error_code=error.code)
                    continue
                assert state is not None
                new_isr = tuple(b.broker_id for b in p.new_isr_with_epochs) if version >= 3 \
                    else tuple(p.new_isr)
                if new_isr == state.isr and p.leader_recovery_state == \
                        state.leader_recovery_state:
                    continue                # nothing to change: answer the current state
                changes[tp] = LeaderAndIsr(state.leader, state.leader_epoch, new_isr,
                                           ctx.epoch, state.partition_epoch,
                                           p.leader_recovery_state)
        written = await self._write_states(ctx, changes)
        if written:
            batch = self._batch(ctx)
            batch.add_update_metadata(ctx.live_brokers, list(written))
            self._send(ctx, batch)
            log.info("Controller %d: ISR changes from broker %d: %s", self.broker_id,
                     broker_id, {str(tp): list(s.isr) for tp, s in written.items()})
        for topic_data, entries in order:
            out = AlterPartitionResponseAlterPartitionTopicData(
                topic_name=topic_data.topic_name if version < 2 else "")
            if version >= 2:
                out.topic_id = topic_data.topic_id
            for entry in entries:
                if not isinstance(entry, TopicPartition):
                    out.partitions.append(entry)
                elif entry in answers:
                    out.partitions.append(answers[entry])
                elif entry in changes and entry not in written:
                    out.partitions.append(AlterPartitionResponseAlterPartitionPartitionData(
                        partition_index=entry.partition,
                        error_code=InvalidUpdateVersionError.code))
                else:
                    s = written.get(entry) or ctx.states[entry]
                    out.partitions.append(AlterPartitionResponseAlterPartitionPartitionData(
                        partition_index=entry.partition, leader_id=s.leader,
                        leader_epoch=s.leader_epoch, isr=list(s.isr),
                        leader_recovery_state=s.leader_recovery_state,
                        partition_epoch=s.partition_epoch))
            response.topics.append(out)
        # A reassignment completes once its target replicas are all in the ISR.
        batch = self._batch(ctx)
        for tp in written:
            if ctx.reassigning(tp):
                await self._maybe_complete_reassignment(ctx, tp, batch)
        self._send(ctx, batch)
        return response

    @staticmethod
    def _check_alter(ctx: ControllerContext, tp: TopicPartition, state: LeaderAndIsr | None,
                     broker_id: int, p: Any, version: int) -> KafkaError | None:
        if state is None or tp not in ctx.assignments or ctx.is_deleting(tp):
            return UnknownTopicOrPartitionError()
        if state.leader != broker_id:
            return NotLeaderOrFollowerError()
        if p.leader_epoch < state.leader_epoch:
            return FencedLeaderEpochError()
        if p.leader_epoch > state.leader_epoch:
            return NotLeaderOrFollowerError()
        if p.partition_epoch != state.partition_epoch:
            return InvalidUpdateVersionError()
        replicas = ctx.replicas(tp)
        if version >= 3:
            members = [(b.broker_id, b.broker_epoch) for b in p.new_isr_with_epochs]
        else:
            members = [(b, -1) for b in p.new_isr]
        for member, epoch in members:
            if member not in replicas:
                return IneligibleReplicaError()
            if member in state.isr:
                continue
            if not ctx.is_eligible(member) or (epoch != -1 and
                                               epoch != ctx.broker_epoch(member)):
                return IneligibleReplicaError()
        return None

    # ========================================================== ControlledShutdown

    async def _on_controlled_shutdown(self, ctx: ControllerContext, broker_id: int,
                                      broker_epoch: int) -> ControlledShutdownResponse:
        response = ControlledShutdownResponse()
        if not ctx.is_alive(broker_id):
            response.error_code = BrokerNotAvailableError.code
            return response
        if broker_epoch != -1 and broker_epoch != ctx.broker_epoch(broker_id):
            response.error_code = StaleBrokerEpochError.code
            return response
        if broker_id not in ctx.shutting_down:
            log.info("Controller %d: broker %d is shutting down", self.broker_id, broker_id)
        ctx.shutting_down.add(broker_id)
        batch = self._batch(ctx)
        changes: dict[TopicPartition, LeaderAndIsr] = {}
        followed: list[TopicPartition] = []
        for tp in ctx.partitions_on(broker_id):
            state = ctx.states.get(tp)
            if state is None or ctx.is_deleting(tp):
                continue
            if state.leader == broker_id:
                if len(ctx.replicas(tp)) <= 1:
                    continue
                leader, isr = controlled_shutdown_leader(ctx.replicas(tp), state.isr,
                                                         ctx.is_alive, ctx.shutting_down)
                if leader is not None:
                    changes[tp] = LeaderAndIsr(leader, state.leader_epoch + 1, isr,
                                               ctx.epoch, state.partition_epoch)
            else:
                followed.append(tp)
                if broker_id in state.isr and state.leader >= 0:
                    isr = tuple(r for r in state.isr if r != broker_id)
                    changes[tp] = LeaderAndIsr(state.leader, state.leader_epoch + 1, isr,
                                               ctx.epoch, state.partition_epoch)
        written = await self._write_states(ctx, changes)
        following = set(followed)
        for tp in written:
            # A partition it led goes to it too (Kafka's leaderForControlledShutdown: the
            # live-or-shutting-down replicas): it becomes a follower at once and refuses
            # produces with NOT_LEADER_OR_FOLLOWER, rather than appending (and, with acks=1,
            # acknowledging) records the new leader never sees until it stops.
            led = tp not in following
            batch.add_leader_and_isr([r for r in ctx.live_replicas(tp)
                                      if led or r != broker_id], tp)
        for tp in followed:
            batch.add_stop_replica(broker_id, tp, delete=False)
        self._send(ctx, batch)
        response.remaining_partitions = [
            RemainingPartition(topic_name=tp.topic, partition_index=tp.partition)
            for tp in ctx.partitions_led_by(broker_id) if len(ctx.replicas(tp)) > 1]
        return response

    # ========================================================== features

    async def _enable_feature_versioning(self, ctx: ControllerContext) -> None:
        """Kafka's ``enableFeatureVersioning`` (IBP >= 2.7): a new cluster's ``/feature`` is
        created with every supported feature at its highest level; a disabled one is enabled
        with no features; an enabled one is left alone (its levels are the cluster's)."""
        current = await self._zk(self.client.get_feature_znode)
        if current is None:
            node, version = FeatureZNode(default_finalized()), None
        elif current[0].status != 1:
            node, version = FeatureZNode({}), current[1]
        else:
            return
        try:
            await self._zk(self.client.write_feature_znode, ctx.epoch_zk_version, node, version)
            log.info("Controller %d: finalized features %s", self.broker_id,
                     dict(node.features) or "none")
        except (BadVersionError, NodeExistsError):
            pass                            # an UpdateFeatures of a former controller won

    async def _on_update_features(self, ctx: ControllerContext, event: UpdateFeaturesEvent
                                  ) -> tuple[int, dict[str, KafkaError | None]]:
        """Kafka's ``processFeatureUpdates``: each update checked against the finalized
        levels in ``/feature``, this broker's supported ranges and every registered
        broker's; the valid ones written (all or none when ``atomic``) in one conditional
        set. A write that loses a race fails the valid updates with FEATURE_UPDATE_FAILED."""
        current = await self._zk(self.client.get_feature_znode)
        existing: dict[str, int] = {}
        version = -1
        if current is not None:
            version = current[1]
            if current[0].status == 1:
                existing = dict(current[0].features)
        target, errors = apply_feature_updates(
            existing, event.updates,
            [b.registration.features for b in ctx.live_brokers.values()],
            atomic=event.atomic)
        if event.validate_only or target == existing:
            return version, errors
        try:
            version = await self._zk(self.client.write_feature_znode, ctx.epoch_zk_version,
                                     FeatureZNode(target), None if current is None else version)
        except (BadVersionError, NodeExistsError) as e:
            failed = FeatureUpdateFailedError(f"/feature changed meanwhile: {e!r}")
            return version, {f: failed if err is None else err for f, err in errors.items()}
        log.info("Controller %d: finalized features %s (epoch %d)", self.broker_id,
                 target or "none", version)
        return version, errors

    # ========================================================== ElectLeaders

    async def _on_elect_leaders(self, ctx: ControllerContext, election_type: int,
                                partitions: list[TopicPartition] | None
                                ) -> dict[TopicPartition, KafkaError | int]:
        targets = list(ctx.all_partitions()) if partitions is None else partitions
        out: dict[TopicPartition, KafkaError | int] = {}
        changes: dict[TopicPartition, LeaderAndIsr] = {}
        for tp in targets:
            state = ctx.states.get(tp)
            if state is None or tp not in ctx.assignments or ctx.is_deleting(tp):
                out[tp] = UnknownTopicOrPartitionError()
                continue
            replicas = ctx.replicas(tp)
            if election_type == 0:
                if state.leader == replicas[0]:
                    out[tp] = ElectionNotNeededError()
                    continue
                leader = preferred_leader(replicas, state.isr, ctx.is_eligible)
                if leader is None:
                    out[tp] = PreferredLeaderNotAvailableError(
                        f"preferred leader {replicas[0]} of {tp} is not alive or not in the "
                        f"ISR {list(state.isr)}")
                    continue
                isr = state.isr
            else:
                if state.leader >= 0 and ctx.is_alive(state.leader):
                    out[tp] = ElectionNotNeededError()
                    continue
                leader, isr = offline_leader(replicas, state.isr, ctx.is_eligible, True)
                if leader is None:
                    out[tp] = EligibleLeadersNotAvailableError()
                    continue
            changes[tp] = LeaderAndIsr(leader, state.leader_epoch + 1, isr, ctx.epoch,
                                       state.partition_epoch)
        written = await self._write_states(ctx, changes)
        batch = self._batch(ctx)
        for tp, change in changes.items():
            if tp in written:
                out[tp] = change.leader
                batch.add_leader_and_isr(ctx.live_replicas(tp), tp)
            else:
                out[tp] = InvalidUpdateVersionError()
        self._send(ctx, batch)
        return out

    async def _rebalance_timer(self) -> None:
        while True:
            cfg = self.config()
            await trio.sleep(cfg.leader_imbalance_check_interval_seconds if cfg else 300)
            if self.active and self.context is not None:
                self.enqueue(AutoRebalance())

    async def _on_auto_rebalance(self, ctx: ControllerContext) -> None:
        """Per broker, if the share of the partitions it prefers that it does not lead is
        above ``leader.imbalance.per.broker.percentage``, elect it where it can lead."""
        cfg = self.config()
        if cfg is None or not cfg.auto_leader_rebalance_enable:
            return
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp, assignment in sorted(ctx.assignments.items()):
            if assignment.replicas and tp in ctx.states and not ctx.is_deleting(tp) \
                    and not ctx.reassigning(tp):
                by_preferred.setdefault(assignment.replicas[0], []).append(tp)
        elect: list[TopicPartition] = []
        for broker_id, tps in by_preferred.items():
            if not ctx.is_eligible(broker_id):
                continue
            imbalanced = [tp for tp in tps if ctx.states[tp].leader != broker_id]
            if len(imbalanced) * 100 > cfg.leader_imbalance_per_broker_percentage * len(tps):
                elect += [tp for tp in imbalanced if broker_id in ctx.states[tp].isr]
        if elect:
            log.info("Controller %d: preferred leader election for %s", self.broker_id, elect)
            await self._on_elect_leaders(ctx, 0, elect)


    # ========================================================== reassignment (KIP-455)

    async def _on_reassignments(self, ctx: ControllerContext,
                                targets: dict[TopicPartition, tuple[int, ...] | None]
                                ) -> dict[TopicPartition, KafkaError | None]:
        out: dict[TopicPartition, KafkaError | None] = {}
        batch = self._batch(ctx)
        for tp, target in targets.items():
            if tp not in ctx.assignments or tp not in ctx.states or ctx.is_deleting(tp):
                out[tp] = UnknownTopicOrPartitionError()
                continue
            if target is None:
                if not ctx.reassigning(tp):
                    out[tp] = NoReassignmentInProgressError()
                    continue
                current = ctx.assignments[tp]
                # Cancelled: back to the original replicas.
                target = tuple(r for r in current.replicas if r not in current.adding)
            else:
                error = self._invalid_replicas(ctx, target)
                if error is not None:
                    out[tp] = error
                    continue
            await self._reassign(ctx, tp, target, batch)
            out[tp] = None
        self._send(ctx, batch)
        return out

    @staticmethod
    def _invalid_replicas(ctx: ControllerContext, target: tuple[int, ...]
                          ) -> KafkaError | None:
        if not target:
            return InvalidReplicaAssignmentError("Empty replica list specified in partition "
                                                 "reassignment.")
        if len(set(target)) != len(target):
            return InvalidReplicaAssignmentError(f"Duplicate replica ids in partition "
                                                 f"reassignment replica list: {list(target)}")
        dead = [r for r in target if not ctx.is_alive(r)]
        if dead:
            return InvalidReplicaAssignmentError(f"Replica assignment has brokers that are "
                                                 f"not alive. Replica list: {list(target)}, "
                                                 f"live broker list: {sorted(ctx.live_brokers)}")
        return None

    async def _write_assignment(self, ctx: ControllerContext,
                                updates: dict[TopicPartition, ReplicaAssignment]) -> None:
        """``/brokers/topics/<t>`` with the new assignments (adding/removing replicas during
        a reassignment), then the context."""
        for topic in sorted({tp.topic for tp in updates}):
            partitions = {tp.partition: a for tp, a in ctx.assignments.items()
                          if tp.topic == topic}
            partitions.update({tp.partition: a for tp, a in updates.items()
                               if tp.topic == topic})
            await self._zk(self.client.set_topic_assignment, ctx.epoch_zk_version,
                           TopicAssignment(topic, ctx.topic_ids.get(topic), partitions))
        ctx.assignments.update(updates)

    async def _reassign(self, ctx: ControllerContext, tp: TopicPartition,
                        target: tuple[int, ...], batch: ControllerRequestBatch) -> None:
        """Phase one of KIP-455: the full replica set (target + original) with the adding and
        removing replicas in the topic znode, a new leader epoch sent to all of them."""
        current = ctx.assignments[tp]
        original = tuple(r for r in current.replicas if r not in current.adding)
        full = tuple(dict.fromkeys((*target, *original)))
        adding = tuple(r for r in target if r not in original)
        removing = tuple(r for r in original if r not in target)
        new = ReplicaAssignment(full, adding, removing)
        # Replicas an earlier, changed or cancelled, reassignment was adding.
        dropped = [r for r in current.replicas if r not in full]
        if new == current:
            return
        log.info("Controller %d: reassigning %s from %s to %s", self.broker_id, tp,
                 list(original), list(target))
        await self._write_assignment(ctx, {tp: new})
        state = ctx.states[tp]
        isr = tuple(r for r in state.isr if r not in dropped)
        leader = state.leader
        if leader in dropped:
            leader = reassignment_leader(full, isr, ctx.is_eligible) or -1
        await self._write_states(ctx, {tp: LeaderAndIsr(leader, state.leader_epoch + 1, isr,
                                                        ctx.epoch, state.partition_epoch)})
        live = ctx.live_replicas(tp)
        batch.add_leader_and_isr([r for r in live if r not in adding], tp)
        batch.add_leader_and_isr([r for r in live if r in adding], tp, is_new=True)
        for replica in dropped:
            batch.add_stop_replica(replica, tp, delete=True)
        await self._maybe_complete_reassignment(ctx, tp, batch)

    async def _maybe_complete_reassignment(self, ctx: ControllerContext, tp: TopicPartition,
                                           batch: ControllerRequestBatch) -> None:
        """Phase two: once every target replica is in the ISR, a leader from the target
        set, the ISR and the assignment shrunk to it, the removed replicas deleted."""
        assignment = ctx.assignments.get(tp)
        state = ctx.states.get(tp)
        if assignment is None or state is None or not ctx.reassigning(tp):
            return
        target = tuple(r for r in assignment.replicas if r not in assignment.removing)
        if not set(target) <= set(state.isr):
            return
        isr = tuple(r for r in state.isr if r in target)
        leader = state.leader
        if leader not in target or not ctx.is_eligible(leader):
            elected = reassignment_leader(target, isr, ctx.is_eligible)
            if elected is None:
                log.warning("Reassignment of %s waits: no live target replica in the ISR %s",
                            tp, list(isr))
                return
            leader = elected
        written = await self._write_states(ctx, {tp: LeaderAndIsr(
            leader, state.leader_epoch + 1, isr, ctx.epoch, state.partition_epoch)})
        if tp not in written:
            return
        await self._write_assignment(ctx, {tp: ReplicaAssignment(target)})
        batch.add_leader_and_isr(ctx.live_replicas(tp), tp)
        for replica in assignment.removing:
            batch.add_stop_replica(replica, tp, delete=True)
        log.info("Controller %d: reassignment of %s to %s completed", self.broker_id, tp,
                 list(target))
        if tp in ctx.legacy_reassignments:
            del ctx.legacy_reassignments[tp]
            await self._zk(self.client.set_legacy_reassignment, ctx.epoch_zk_version,
                           dict(ctx.legacy_reassignments))

    async def _on_legacy_reassignment(self, ctx: ControllerContext) -> None:
        """``/admin/reassign_partitions``: start what it asks; it is rewritten without the
        partitions that completed or were refused, and deleted when none is left."""
        wanted = await self._zk(self.client.get_legacy_reassignment)
        if wanted is None or self.context is not ctx:
            return
        batch = self._batch(ctx)
        for tp, target in sorted(wanted.items()):
            if ctx.legacy_reassignments.get(tp) == target:
                continue
            error: KafkaError | None = None
            if tp not in ctx.assignments or tp not in ctx.states or ctx.is_deleting(tp):
                error = UnknownTopicOrPartitionError()
            else:
                error = self._invalid_replicas(ctx, target)
            if error is not None:
                log.warning("Reassignment of %s in %s refused: %s", tp,
                            REASSIGN_PARTITIONS_PATH, error)
                continue
            ctx.legacy_reassignments[tp] = target
            await self._reassign(ctx, tp, target, batch)
        self._send(ctx, batch)
        remaining = {tp: t for tp, t in ctx.legacy_reassignments.items() if ctx.reassigning(tp)}
        ctx.legacy_reassignments = remaining
        if remaining != wanted:
            await self._zk(self.client.set_legacy_reassignment, ctx.epoch_zk_version, remaining)
