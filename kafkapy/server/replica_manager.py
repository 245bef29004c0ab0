"""ReplicaManager: the partitions this broker hosts, and appends and reads across them.

Kafka's ``kafka.server.ReplicaManager``: ``append_records`` (Produce) appends to each
partition's leader log, answers acks=0/1 at once and parks acks=all as a ``DelayedProduce``
until the high watermark covers the appended offsets; ``fetch_messages`` (Fetch) reads every
partition with the response-wide and per-partition byte limits and parks the fetch as a
``DelayedFetch`` while it has fewer than ``fetch.min.bytes``, until an append to one of its
partitions (``check_and_complete``) or its max wait.

Per-partition errors are results, never exceptions: one bad partition does not fail the others
(Kafka's ``LogAppendResult`` / ``LogReadResult`` with an error).

Cluster (ZooKeeper mode): ``become_leader_or_follower`` (the controller's LeaderAndIsr) makes
hosted partitions leaders or followers, creating them (and their logs) as needed; followers
are replicated by the ``ReplicaFetcherManager``'s fetchers; ``stop_replicas`` (StopReplica)
stops hosting partitions, deleting their logs if asked. A replica's Fetch (``replica_id`` >= 0)
reads up to the LEO, records the follower's position (``Partition.update_follower_fetch_state``)
and, when the high watermark moves, completes parked acks=all produces and consumer fetches.
KIP-392: with ``replica.selector.class`` the leader may answer a v11+ consumer's partition
with a preferred read replica and no records (``replica_selector``); v11+ consumers
(``FetchParams.client_metadata``) may read a follower up to its own high watermark / LSO.
ISR changes go to the controller through the ``AlterPartitionManager``; a periodic task
proposes shrinking ISRs every ``replica.lag.time.max.ms`` / 2. ``leadership_listeners`` run
after each LeaderAndIsr and StopReplica (the coordinators load and unload their partitions).
Replication quotas (KIP-73): ``leader_quota`` / ``follower_quota``; a follower out of the ISR
gets no records for a partition in its topic's ``leader.replication.throttled.replicas`` for
this broker while the leader quota is exceeded (``should_leader_throttle``), and the bytes the
fetch handler answers for such partitions are recorded (``record_leader_throttled``).

Epoch checks (Kafka's): a controller epoch older than the last seen is STALE_CONTROLLER_EPOCH,
a broker epoch older than this broker's registration is STALE_BROKER_EPOCH (-1: not checked).

Everything runs on the broker's event loop. The only awaits are the delayed operations and the
flush that ``flush.messages`` may ask for after an append (fsync in a worker thread).
"""

from __future__ import annotations

import functools
import logging
import ssl
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import trio

from kafkapy import _replica
from kafkapy.clients.network_client import Authenticate
from kafkapy.common.purgatory import DelayedOperationPurgatory
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    FencedLeaderEpochError,
    InconsistentTopicIdError,
    InvalidTopicError,
    KafkaError,
    KafkaStorageError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    ReplicaNotAvailableError,
    StaleBrokerEpochError,
    StaleControllerEpochError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from kafkapy.log.config import LONG_MAX
from kafkapy.log.log import FetchData, Log, future_dir_name
from kafkapy.log.log_manager import LogManager
from kafkapy.log.log_validator import RecordError, RecordValidationError
from kafkapy.protocol.message_classes import (
    LeaderAndIsrPartitionError,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    LeaderAndIsrTopicError,
    StopReplicaPartitionError,
    StopReplicaRequest,
    StopReplicaResponse,
)
from kafkapy.server.alter_partition_manager import AlterPartitionManager
from kafkapy.server.delayed_fetch import DelayedFetch
from kafkapy.server.delayed_produce import DelayedProduce
from kafkapy.server.partition import Partition, PartitionState, PendingIsr
from kafkapy.server.replica_alter_log_dirs_manager import ReplicaAlterLogDirsManager
from kafkapy.server.replica_fetcher_manager import ReplicaFetcherManager
from kafkapy.server.replica_fetcher_thread import InitialFetchState
from kafkapy.server.replica_selector import (
    ClientMetadata,
    create_replica_selector,
    preferred_read_replica,
)
from kafkapy.server.replication_quota_manager import ReplicationQuotaManager

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer

__all__ = [
    "FetchParams",
    "FetchPartitionRequest",
    "FetchPartitionResult",
    "LeadershipListener",
    "ProducePartitionResult",
    "ReplicaManager",
]

ZERO_UUID = uuid.UUID(int=0)
# StopReplica's leader epochs that always match (Kafka's LeaderAndIsr.EpochDuringDelete,
# NoEpoch).
_EPOCH_DURING_DELETE = -2
_NO_EPOCH = -1

LeadershipListener = Callable[[list[Partition], list[Partition]], None]

log = logging.getLogger(__name__)


@attrs.define
class ProducePartitionResult:
    """One partition's produce outcome (Kafka's PartitionResponse)."""

    error: KafkaError | None = None
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    last_offset: int = -1
    # KIP-467: the records that made ``error`` (Produce v8+ RecordErrors), and the message
    # Kafka sends as ErrorMessage (only for such record-validation errors).
    record_errors: tuple[RecordError, ...] = ()
    error_message: str | None = None


@attrs.frozen
class FetchParams:
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    replica_id: int = -1
    # Fetch v11+ (KIP-392): the consumer's rack etc.; None for older versions.
    client_metadata: ClientMetadata | None = None

    @property
    def fetch_only_leader(self) -> bool:
        """Kafka's FetchParams.fetchOnlyLeader: replicas, and consumers of Fetch < v11, read
        from the leader only; a v11+ consumer may read from a follower."""
        return self.replica_id >= 0 or self.client_metadata is None


@attrs.frozen
class FetchPartitionRequest:
    tp: TopicPartition
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1        # a replica's (Fetch v12+)
    log_start_offset: int = -1          # a replica's


@attrs.define
class FetchPartitionResult:
    """One partition's read (Kafka's LogReadResult): ``data`` None on error."""

    error: KafkaError | None
    data: FetchData | None
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    diverging_epoch: tuple[int, int] | None = None     # (epoch, end offset) for a replica
    preferred_read_replica: int = -1    # KIP-392: fetch from this follower instead (no data)

    @property
    def size(self) -> int:
        return 0 if self.data is None else self.data.size


def _as_kafka_error(tp: TopicPartition, exc: Exception) -> KafkaError:
    if isinstance(exc, KafkaError):
        return exc
    if isinstance(exc, RecordValidationError):
        return exc.invalid
    if isinstance(exc, OSError):
        log.error("%s: storage error: %s", tp, exc)
        return KafkaStorageError(f"{tp}: {exc}")
    log.error("%s: unexpected error", tp, exc_info=exc)
    return UnknownServerError(f"{tp}: {type(exc).__name__}: {exc}")


class ReplicaManager:
    """The hosted partitions. In single-broker mode ``KafkaServer`` makes this broker the
    leader of each partition of each topic (``make_leader``) and removes them when topics are
    deleted; on a cluster the controller's LeaderAndIsr and StopReplica do."""

    def __init__(self, node_id: int, log_manager: LogManager, *,
                 server: KafkaServer | None = None,
                 clock: Callable[[], int] | None = None) -> None:
        self.node_id = node_id
        self.log_manager = log_manager
        self.server = server
        self._clock = clock
        self.partitions: dict[TopicPartition, Partition] = {}
        self.produce_purgatory: DelayedOperationPurgatory[DelayedProduce] = \
            DelayedOperationPurgatory("Produce")
        self.fetch_purgatory: DelayedOperationPurgatory[DelayedFetch] = \
            DelayedOperationPurgatory("Fetch")
        # ``append_records`` without a wait, for a caller that has checked that it needs
        # none: no partition's log flushes on append (``flushes_on_append``) and, for
        # acks=all, every partition is its sole replica (``Partition.sole_replica``: the high
        # watermark covers the append at once). The same results; raises
        # InvalidRequiredAcksError too. The compiled ``_replica.append_now`` bound to this
        # manager, so that the compiled Produce path reaches it without a Python frame.
        self.append_records_now: Callable[
            [int, dict[TopicPartition, memoryview | bytes | bytearray]],
            dict[TopicPartition, ProducePartitionResult]] = \
            functools.partial(_replica.append_now, self)
        self.controller_epoch = 0           # Kafka's KafkaController.InitialControllerEpoch
        self._broker_epoch: int | None = None
        self.leadership_listeners: list[LeadershipListener] = []
        self.fetcher_manager = ReplicaFetcherManager(self)
        self.alter_partition_manager = AlterPartitionManager(self)
        self.alter_log_dirs_manager = ReplicaAlterLogDirsManager(self)
        self.replica_selector = create_replica_selector(
            server.config.replica_selector_class if server is not None else None)
        # replication throttles (KIP-73); the window settings are read-only
        samples = server.config.replication_quota_window_num if server is not None else 11
        window = server.config.replication_quota_window_size_seconds \
            if server is not None else 1
        self.leader_quota = ReplicationQuotaManager(
            True, lambda: self._throttled_rate("leader.replication.throttled.rate"),
            samples, window)
        self.follower_quota = ReplicationQuotaManager(
            False, lambda: self._throttled_rate("follower.replication.throttled.rate"),
            samples, window)

    # ================================================================ configuration

    @property
    def cluster(self) -> bool:
        """ZooKeeper mode: leadership comes from the controller."""
        return self.server is not None and self.server.config.zookeeper_connect is not None

    def replica_config(self, name: str, default: int) -> int:
        """A replica.* setting of the live broker config (``default`` without a server)."""
        if self.server is None:
            return default
        return int(getattr(self.server.config, name, default))

    def _throttled_rate(self, name: str) -> int:
        """A replication throttle as Kafka's BrokerConfigHandler takes it: this broker's
        dynamic value, else the cluster-wide dynamic default, else none (Long.MAX_VALUE). It
        is not in Kafka's static ConfigDef, so server.properties does not set it."""
        if self.server is None:
            return LONG_MAX
        config = self.server.config
        raw = config.dynamic.get(name)
        if raw is None:
            raw = config.dynamic_default.get(name)
        return LONG_MAX if raw is None else int(str(raw).strip())

    @property
    def inter_broker_ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context of connections to other brokers (None: plaintext)."""
        return self.server.inter_broker_ssl_context if self.server is not None else None

    @property
    def inter_broker_authenticate(self) -> Authenticate | None:
        """SASL for this broker's connections to other brokers (None: none, or no server)."""
        return None if self.server is None else self.server.inter_broker_authenticate

    def now_ms(self) -> int:
        return self._clock() if self._clock is not None else int(time.time() * 1000)

    @property
    def broker_epoch(self) -> int:
        """This broker's epoch (its registration's czxid), -1 before registration."""
        if self._broker_epoch is not None:
            return self._broker_epoch
        hc = self.server.healthcheck if self.server is not None else None
        return hc.broker_epoch if hc is not None else -1

    @broker_epoch.setter
    def broker_epoch(self, value: int) -> None:
        self._broker_epoch = value

    # ==================================================================== lifecycle

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """The purgatories' expiration reapers, and on a cluster the fetchers, the
        AlterPartition sender and the ISR shrink check; runs until cancelled."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.produce_purgatory.run)
            await nursery.start(self.fetch_purgatory.run)
            self.fetcher_manager.start(nursery)
            self.alter_log_dirs_manager.start(nursery)
            if self.cluster:
                nursery.start_soon(self.alter_partition_manager.run)
                nursery.start_soon(self._isr_expiration)
            task_status.started()

    def shutdown(self) -> None:
        """Stop the fetchers, complete every parked operation (their requests get answered)
        and stop the reapers."""
        self.fetcher_manager.shutdown()
        self.alter_log_dirs_manager.shutdown()
        self.produce_purgatory.shutdown()
        self.fetch_purgatory.shutdown()

    async def _isr_expiration(self) -> None:
        """Kafka's isr-expiration task: every replica.lag.time.max.ms / 2, each led partition
        proposes dropping followers not caught up within replica.lag.time.max.ms."""
        while True:
            lag = self.replica_config("replica_lag_time_max_ms", 30000)
            await trio.sleep(max(lag, 2) / 2000)
            now = self.now_ms()
            for partition in list(self.partitions.values()):
                if partition.is_leader:
                    partition.maybe_shrink_isr(now, lag)

    def on_high_watermark_moved(self, tp: TopicPartition) -> None:
        """Complete what waited for the high watermark: acks=all produces, consumer
        fetches."""
        self.produce_purgatory.check_and_complete(tp)
        self.fetch_purgatory.check_and_complete(tp)

    # ================================================================== partitions

    def make_leader(self, tp: TopicPartition, topic_id: uuid.UUID, leader_epoch: int = 0
                    ) -> Partition:
        """Single-broker mode: lead ``tp`` alone (created with its log if new)."""
        partition = self.partitions.get(tp)
        if partition is None:
            log_ = self.log_manager.get_or_create_log(tp, topic_id)
            partition = Partition(tp, topic_id, log_, self.node_id, leader_epoch)
            self.partitions[tp] = partition
        return partition

    def remove_partitions(self, tps: Iterable[TopicPartition]) -> None:
        """Stop hosting ``tps`` and delete their logs (DeleteTopics). Parked operations on
        them complete (with errors for these partitions)."""
        tps = list(tps)
        self.fetcher_manager.remove_fetcher_for_partitions(tps)
        for tp in tps:
            if self.partitions.pop(tp, None) is not None:
                self.log_manager.delete_log(tp)
            self.fetch_purgatory.check_and_complete(tp)
            self.produce_purgatory.check_and_complete(tp)

    def not_hosted_error(self, tp: TopicPartition) -> KafkaError:
        """Kafka's getPartitionOrError for a partition not hosted here: NOT_LEADER_OR_FOLLOWER
        if the cluster has it (the metadata cache knows it), else UNKNOWN_TOPIC_OR_PARTITION."""
        cache: Any = getattr(self.server, "metadata_cache", None)
        info = getattr(cache, "partition_info", None)
        if info is not None and info(tp) is not None:
            return NotLeaderOrFollowerError(f"this broker does not host {tp}")
        return UnknownTopicOrPartitionError(f"This server does not host this topic-partition: "
                                            f"{tp}")

    def get_partition(self, tp: TopicPartition) -> Partition:
        """Raises UnknownTopicOrPartitionError / NotLeaderOrFollowerError (see
        ``not_hosted_error``) if this broker does not host ``tp``."""
        partition = self.partitions.get(tp)
        if partition is None:
            raise self.not_hosted_error(tp)
        return partition

    # ================================================================ log dir moves

    def alter_replica_log_dirs(self, dirs: dict[TopicPartition, str]) -> dict[TopicPartition, int]:
        """Kafka's ReplicaManager.alterReplicaLogDirs: move each partition's replica into the
        log dir at the absolute path given; an error code per partition.

        LOG_DIR_NOT_FOUND: the path is not a configured log dir; KAFKA_STORAGE_ERROR: that
        dir is offline; INVALID_TOPIC_EXCEPTION: the future dir's name would exceed 255
        characters (KAFKA-4893). A partition not hosted here gets its dir remembered (its log
        is created there when it comes: LeaderAndIsr, topic creation) and
        REPLICA_NOT_AVAILABLE (UNKNOWN_TOPIC_OR_PARTITION if the cluster does not know it).
        A replica already in the dir, or moving there, is NONE and nothing changes; a move to
        another dir in flight is cancelled first. The copy runs in the background
        (kafkapy.server.replica_alter_log_dirs_manager)."""
        lm = self.log_manager
        out: dict[TopicPartition, int] = {}
        for tp, path in dirs.items():
            try:
                if len(future_dir_name(tp)) > 255:
                    raise InvalidTopicError("The topic name is too long.")
                d = lm.log_dir_for_path(path)
                if not lm.is_log_dir_online(d):
                    raise KafkaStorageError(f"Log directory {path} is offline")
                partition = self.partitions.get(tp)
                if partition is not None and lm.future_dir_of(tp) not in (None, d):
                    log.info("%s: cancelling the move to %s: now moving to %s", tp,
                             lm.future_dir_of(tp), d)
                    self.alter_log_dirs_manager.abort(tp)
                # Where the log is created if it is not here yet (LeaderAndIsr, topic creation).
                lm.maybe_update_preferred_log_dir(tp, d)
                if partition is None or lm.get_log(tp) is None:
                    error = self.not_hosted_error(tp)
                    if isinstance(error, NotLeaderOrFollowerError):
                        # Kafka keeps REPLICA_NOT_AVAILABLE here, for compatibility.
                        error = ReplicaNotAvailableError(
                            f"this broker does not host {tp}; its log will be created in "
                            f"{path}")
                    raise error
                if lm.dir_of(tp) != d and lm.future_dir_of(tp) != d:
                    future = lm.create_future_log(tp, d)
                    self.alter_log_dirs_manager.add(tp, d, future)
                    log.info("%s: moving from %s to %s", tp, lm.dir_of(tp), d)
                out[tp] = 0
            except KafkaError as e:
                log.warning("Unable to alter log dirs for %s: %s", tp, e)
                out[tp] = e.code
        return out

    def leader_partition(self, tp: TopicPartition, current_leader_epoch: int = -1
                         ) -> Partition:
        """The partition if this broker leads it at ``current_leader_epoch`` (-1: any);
        raises as ``get_partition``, NotLeaderOrFollowerError, FencedLeaderEpochError,
        UnknownLeaderEpochError."""
        partition = self.get_partition(tp)
        partition.check_leader(current_leader_epoch)
        return partition

    def _new_partition(self, tp: TopicPartition, topic_id: uuid.UUID) -> Partition:
        log_ = self.log_manager.get_or_create_log(
            tp, None if topic_id == ZERO_UUID else topic_id)
        partition = Partition(tp, topic_id, log_, self.node_id, leader=False)
        partition.alter_isr = self._submit_isr
        self.partitions[tp] = partition
        return partition

    def _submit_isr(self, partition: Partition, change: PendingIsr) -> bool:
        return self.alter_partition_manager.submit(partition, change)

    # ============================================================ LeaderAndIsr

    def _check_epochs(self, controller_epoch: int, broker_epoch: int) -> KafkaError | None:
        if controller_epoch < self.controller_epoch:
            return StaleControllerEpochError(
                f"controller epoch {controller_epoch} is older than {self.controller_epoch}")
        mine = self.broker_epoch
        if broker_epoch != -1 and mine != -1 and broker_epoch < mine:
            return StaleBrokerEpochError(f"broker epoch {broker_epoch} is older than this "
                                         f"broker's {mine}")
        return None

    @staticmethod
    def _leader_and_isr_states(request: LeaderAndIsrRequest
                               ) -> Iterator[tuple[str, uuid.UUID, LeaderAndIsrPartitionState]]:
        for ps in request.ungrouped_partition_states:
            yield ps.topic_name, ZERO_UUID, ps
        for topic in request.topic_states:
            for ps in topic.partition_states:
                yield topic.topic_name, topic.topic_id, ps

    async def create_logs(self, request: LeaderAndIsrRequest) -> Mapping[TopicPartition, Log]:
        """The file system's part of creating the logs of the request's new replicas here,
        off the event loop (``LogManager.create_logs``), before
        ``become_leader_or_follower``: a LeaderAndIsr for thousands of new partitions
        would otherwise hold every other client that long. Nothing for a request whose
        epochs are stale. Hand the result to ``drop_unused_logs`` afterwards."""
        if self._check_epochs(request.controller_epoch, request.broker_epoch) is not None:
            return {}
        return await self.log_manager.create_logs(
            tp for topic, _tid, ps in self._leader_and_isr_states(request)
            if self.node_id in ps.replicas
            and (tp := TopicPartition(topic, ps.partition_index)) not in self.partitions)

    def drop_unused_logs(self, created: Mapping[TopicPartition, Log]) -> None:
        """Delete the logs of ``created`` (``LogManager.create_logs``) that no partition
        took: the request that wanted them failed, or changed its mind meanwhile."""
        for tp, log_ in created.items():
            if tp not in self.partitions and self.log_manager.get_log(tp) is log_:
                self.log_manager.delete_log(tp)

    def become_leader_or_follower(self, request: LeaderAndIsrRequest, version: int = 6
                                  ) -> LeaderAndIsrResponse:
        """Kafka's becomeLeaderOrFollower: see the module docstring. Per partition: an older
        leader epoch is FENCED_LEADER_EPOCH, the same one is ignored, another topic id is
        INCONSISTENT_TOPIC_ID, a partition not assigned here UNKNOWN_TOPIC_OR_PARTITION."""
        states = list(self._leader_and_isr_states(request))
        errors: dict[TopicPartition, int] = {}
        topic_ids: dict[str, uuid.UUID] = {}
        for topic, topic_id, _ps in states:
            topic_ids[topic] = topic_id
        failure = self._check_epochs(request.controller_epoch, request.broker_epoch)
        if failure is not None:
            log.info("Ignoring LeaderAndIsr from controller %d: %s", request.controller_id,
                     failure)
            for topic, _tid, ps in states:
                errors[TopicPartition(topic, ps.partition_index)] = failure.code
            return self._leader_and_isr_response(version, failure.code, errors, topic_ids)
        self.controller_epoch = request.controller_epoch
        leaders: list[tuple[Partition, PartitionState]] = []
        followers: list[tuple[Partition, PartitionState]] = []
        for topic, topic_id, ps in states:
            tp = TopicPartition(topic, ps.partition_index)
            errors[tp] = 0
            try:
                if self.node_id not in ps.replicas:
                    raise UnknownTopicOrPartitionError(f"{tp} is not assigned to broker "
                                                       f"{self.node_id}")
                partition = self.partitions.get(tp)
                known_id = partition.topic_id if partition is not None else \
                    self.log_manager.topic_id_of(tp)
                if topic_id != ZERO_UUID and known_id not in (None, ZERO_UUID, topic_id):
                    raise InconsistentTopicIdError(f"{tp}: topic id {topic_id} does not "
                                                   f"match the log's {known_id}")
                current = partition.leader_epoch if partition is not None else -1
                if ps.leader_epoch < current:
                    raise FencedLeaderEpochError(f"{tp}: leader epoch {ps.leader_epoch} is "
                                                 f"older than the current {current}")
                if ps.leader_epoch == current and partition is not None and \
                        partition.from_controller:
                    continue        # already at this epoch (a resent request)
                if partition is None:
                    partition = self._new_partition(tp, topic_id)
                elif partition.topic_id == ZERO_UUID and topic_id != ZERO_UUID:
                    partition.topic_id = topic_id
            except KafkaError as e:
                errors[tp] = e.code
                continue
            except OSError as e:
                log.error("%s: cannot create the log: %s", tp, e)
                errors[tp] = KafkaStorageError.code
                continue
            state = PartitionState(ps.leader, ps.leader_epoch, tuple(ps.isr),
                                   ps.partition_epoch, tuple(ps.replicas))
            (leaders if ps.leader == self.node_id else followers).append((partition, state))
        live = {b.broker_id: (b.host_name, b.port) for b in request.live_leaders}
        became_leaders = self._make_leaders(leaders)
        became_followers = self._make_followers(followers, live)
        self.fetcher_manager.shutdown_idle_fetchers()
        self._notify(became_leaders, became_followers)
        return self._leader_and_isr_response(version, 0, errors, topic_ids)

    def _notify(self, leaders: list[Partition], followers: list[Partition]) -> None:
        for listener in list(self.leadership_listeners):
            try:
                listener(leaders, followers)
            except Exception:
                log.exception("A leadership listener failed")

    def _make_leaders(self, leaders: list[tuple[Partition, PartitionState]]
                      ) -> list[Partition]:
        """Kafka's makeLeaders: stop fetching, take the controller's state, reset the
        followers' states; the high watermark continues from the log's."""
        self.fetcher_manager.remove_fetcher_for_partitions(p.tp for p, _s in leaders)
        now = self.now_ms()
        out = []
        for partition, state in leaders:
            partition.alter_isr = self._submit_isr
            partition.make_leader(state, now)
            log.info("%s: leader at epoch %d, ISR %s, replicas %s, HW %d, LEO %d",
                     partition.tp, state.leader_epoch, list(state.isr), list(state.replicas),
                     partition.high_watermark, partition.log_end_offset)
            self.on_high_watermark_moved(partition.tp)
            out.append(partition)
        return out

    def _make_followers(self, followers: list[tuple[Partition, PartitionState]],
                        live: dict[int, tuple[str, int]]) -> list[Partition]:
        """Kafka's makeFollowers: stop accepting produce (parked ones complete with
        NOT_LEADER_OR_FOLLOWER), restart the fetcher from the new leader. A log with leader
        epochs fetches from its LEO and lets the leader point out a divergence (Fetch's
        LastFetchedEpoch / DivergingEpoch); one without is first truncated to its high
        watermark."""
        self.fetcher_manager.remove_fetcher_for_partitions(p.tp for p, _s in followers)
        fetch: dict[TopicPartition, InitialFetchState] = {}
        out = []
        for partition, state in followers:
            partition.make_follower(state)
            self.on_high_watermark_moved(partition.tp)
            out.append(partition)
            endpoint = live.get(state.leader)
            if endpoint is None:
                log.info("%s: follower of %d at epoch %d; the leader is not alive, not "
                         "fetching", partition.tp, state.leader, state.leader_epoch)
                continue
            plog = partition.log
            if plog.epochs.latest_epoch < 0:
                plog.truncate_to(plog.high_watermark)
            fetch[partition.tp] = InitialFetchState(
                state.leader, endpoint[0], endpoint[1], partition.topic_id,
                state.leader_epoch, plog.log_end_offset, plog.epochs.latest_epoch)
            log.info("%s: follower of %d at epoch %d, fetching from %d", partition.tp,
                     state.leader, state.leader_epoch, plog.log_end_offset)
        self.fetcher_manager.add_fetcher_for_partitions(fetch)
        return out

    @staticmethod
    def _leader_and_isr_response(version: int, error: int, errors: dict[TopicPartition, int],
                                 topic_ids: dict[str, uuid.UUID]) -> LeaderAndIsrResponse:
        if version >= 5:
            topics: dict[str, LeaderAndIsrTopicError] = {}
            for tp, code in errors.items():
                topic = topics.setdefault(tp.topic, LeaderAndIsrTopicError(
                    topic_id=topic_ids.get(tp.topic, ZERO_UUID), partition_errors=[]))
                topic.partition_errors.append(LeaderAndIsrPartitionError(
                    partition_index=tp.partition, error_code=code))
            return LeaderAndIsrResponse(error_code=error, topics=list(topics.values()))
        return LeaderAndIsrResponse(error_code=error, partition_errors=[
            LeaderAndIsrPartitionError(topic_name=tp.topic, partition_index=tp.partition,
                                       error_code=code) for tp, code in errors.items()])

    # ============================================================== StopReplica

    @staticmethod
    def _stop_replica_states(request: StopReplicaRequest, version: int
                             ) -> Iterator[tuple[TopicPartition, int, bool]]:
        """(partition, leader epoch, delete) from any version's layout."""
        for p in request.ungrouped_partitions:
            yield TopicPartition(p.topic_name, p.partition_index), _NO_EPOCH, \
                request.delete_partitions
        for t in request.topics:
            for index in t.partition_indexes:
                yield TopicPartition(t.name, index), _NO_EPOCH, request.delete_partitions
        for ts in request.topic_states:
            for ps in ts.partition_states:
                yield TopicPartition(ts.topic_name, ps.partition_index), ps.leader_epoch, \
                    ps.delete_partition

    def stop_replicas(self, request: StopReplicaRequest, version: int = 3
                      ) -> StopReplicaResponse:
        """Kafka's stopReplicas: stop fetching and hosting each partition (a leader epoch
        older than the current one is FENCED_LEADER_EPOCH); ``delete`` also deletes its
        log, else the log stays on disk."""
        states = list(self._stop_replica_states(request, version))
        failure = self._check_epochs(request.controller_epoch, request.broker_epoch)
        if failure is not None:
            return StopReplicaResponse(error_code=failure.code, partition_errors=[
                StopReplicaPartitionError(topic_name=tp.topic, partition_index=tp.partition,
                                          error_code=failure.code) for tp, _e, _d in states])
        self.controller_epoch = request.controller_epoch
        errors: dict[TopicPartition, int] = {}
        stopped: dict[TopicPartition, bool] = {}
        for tp, epoch, delete in states:
            partition = self.partitions.get(tp)
            if partition is not None and epoch not in (_EPOCH_DURING_DELETE, _NO_EPOCH) and \
                    epoch < partition.leader_epoch:
                errors[tp] = FencedLeaderEpochError.code
                continue
            errors[tp] = 0
            stopped[tp] = delete
        self.fetcher_manager.remove_fetcher_for_partitions(stopped)
        resigned = []
        for tp, delete in stopped.items():
            partition = self.partitions.pop(tp, None)
            if partition is not None:
                partition.stop_leading()
                resigned.append(partition)
            if delete:
                try:
                    self.log_manager.delete_log(tp)
                except OSError as e:
                    log.error("%s: cannot delete the log: %s", tp, e)
                    errors[tp] = KafkaStorageError.code
            # Parked operations on it complete now (with errors) instead of timing out.
            self.on_high_watermark_moved(tp)
        self.fetcher_manager.shutdown_idle_fetchers()
        if resigned:
            self._notify([], resigned)
        return StopReplicaResponse(error_code=0, partition_errors=[
            StopReplicaPartitionError(topic_name=tp.topic, partition_index=tp.partition,
                                      error_code=code) for tp, code in errors.items()])

    # ===================================================================== produce

    async def append_records(self, timeout_ms: int, required_acks: int,
                             entries: dict[TopicPartition, memoryview | bytes | bytearray]
                             ) -> tuple[dict[TopicPartition, ProducePartitionResult],
                                        DelayedProduce | None]:
        """Append each partition's records as leader. Returns the results and, for acks=all
        while the high watermark is short of an append, the parked DelayedProduce: the caller
        awaits its ``wait()`` (in its own task, not a handler's), which fills in the results.

        Raises InvalidRequiredAcksError for acks outside {-1, 0, 1} (Kafka answers every
        partition with INVALID_REQUIRED_ACKS then; the handler does that).
        """
        results, appended = self._append_to_leaders(required_acks, entries)
        for partition in appended:
            # flush.messages / flush.ms: fsync before the acknowledgement when due (never
            # with Kafka's defaults: then no coroutine is awaited per partition).
            if partition.log.flushes_on_append:
                try:
                    await self.log_manager.maybe_flush(partition.log)
                except OSError as exc:
                    results[partition.tp].error = _as_kafka_error(partition.tp, exc)
        return self._complete_appends(timeout_ms, required_acks, results, appended)

    def _append_to_leaders(self, required_acks: int,
                           entries: dict[TopicPartition, memoryview | bytes | bytearray]
                           ) -> tuple[dict[TopicPartition, ProducePartitionResult],
                                      list[Partition]]:
        """Kafka's appendToLocalLog: each partition appended as leader, its result (an error
        is a result; see ``append_error``) and the partitions that appended records
        (compiled: ``_replica.append_to_leaders``)."""
        return _replica.append_to_leaders(self, required_acks, entries)

    def append_error(self, tp: TopicPartition, exc: Exception) -> KafkaError:
        """The error a partition's append answers with when it raised ``exc`` (storage and
        unexpected errors are logged here)."""
        return _as_kafka_error(tp, exc)

    def _complete_appends(self, timeout_ms: int, required_acks: int,
                          results: dict[TopicPartition, ProducePartitionResult],
                          appended: list[Partition]
                          ) -> tuple[dict[TopicPartition, ProducePartitionResult],
                                     DelayedProduce | None]:
        """After the appends (and their flushes): the delayed fetches and produces of the
        appended partitions tried, and for acks=all the answer now or a DelayedProduce
        (compiled: ``_replica.complete_appends``)."""
        return _replica.complete_appends(self, timeout_ms, required_acks, results, appended)

    # ======================================================================= fetch

    def read_from_log(self, params: FetchParams, requests: Sequence[FetchPartitionRequest],
                      update_fetch_state: bool = False
                      ) -> list[tuple[TopicPartition, FetchPartitionResult]]:
        """Kafka's readFromLog: partitions in request order, each limited by its own max bytes
        and by what is left of the response's; the first non-empty partition returns at
        least one whole batch (KIP-74). ``update_fetch_state``: a replica's first read
        records its position (not the re-read of a completed DelayedFetch)."""
        limit = params.max_bytes
        min_one = True
        out = []
        replica = params.replica_id >= 0
        now_ms = self.now_ms() if replica and update_fetch_state else -1
        for req in requests:
            if replica:
                result = self._read_for_follower(params.replica_id, req,
                                                 min(req.max_bytes, limit), min_one, now_ms)
            else:
                result = self._read_one(params, req, min(req.max_bytes, limit), min_one)
            if result.size > 0:
                min_one = False
                limit = max(0, limit - result.size)
            out.append((req.tp, result))
        return out

    def _read_one(self, params: FetchParams, req: FetchPartitionRequest, max_bytes: int,
                  min_one: bool) -> FetchPartitionResult:
        partition = self.partitions.get(req.tp)
        if partition is None:
            return FetchPartitionResult(self.not_hosted_error(req.tp), None)
        hw, lso, start = (partition.high_watermark, partition.last_stable_offset,
                          partition.log_start_offset)
        try:
            client = params.client_metadata
            if client is not None and self.replica_selector is not None and \
                    partition.is_leader:
                preferred = self._preferred_read_replica(partition, client, req.fetch_offset)
                if preferred is not None:
                    # Kafka skips the read: the leader's offsets and the replica to go to.
                    partition.check_leader_epoch(req.current_leader_epoch)
                    return FetchPartitionResult(None, None, hw, lso, start,
                                                preferred_read_replica=preferred)
            if params.fetch_only_leader:
                partition.check_leader(req.current_leader_epoch)
            else:
                # A follower serves it too, up to its own high watermark / LSO.
                partition.check_leader_epoch(req.current_leader_epoch)
            data = partition.read(req.fetch_offset, max_bytes, params.isolation_level,
                                  min_one)
        except Exception as exc:
            return FetchPartitionResult(_as_kafka_error(req.tp, exc), None, hw, lso, start)
        return FetchPartitionResult(None, data, hw, lso, start)

    def _preferred_read_replica(self, partition: Partition, client: ClientMetadata,
                                fetch_offset: int) -> int | None:
        """The follower a v11+ consumer should fetch ``partition`` from (KIP-392), None for
        this leader; the candidates are the live brokers on the client's listener."""
        assert self.replica_selector is not None
        cache: Any = getattr(self.server, "metadata_cache", None)
        if cache is None:
            return None
        racks = {b[0]: b[3] for b in cache.brokers(client.listener_name)}
        return preferred_read_replica(self.replica_selector, partition, client, fetch_offset,
                                      self.now_ms(), racks)

    def _read_for_follower(self, replica_id: int, req: FetchPartitionRequest,
                           max_bytes: int, min_one: bool, now_ms: int
                           ) -> FetchPartitionResult:
        """The leader's side of a replica fetch (Kafka's Partition.fetchRecords for a
        follower): leadership and epoch, the replica must be assigned, LastFetchedEpoch
        against this log's epochs (DivergingEpoch when the follower has a tail this leader
        never had), a read up to the LEO, then the follower's new position, which may move
        the high watermark and the ISR (recorded at ``now_ms``; not when it is -1)."""
        tp = req.tp
        partition = self.partitions.get(tp)
        if partition is None:
            return FetchPartitionResult(self.not_hosted_error(tp), None)
        log = partition.log
        try:
            partition.check_leader(req.current_leader_epoch)
            if replica_id not in partition.followers:
                raise NotLeaderOrFollowerError(f"broker {replica_id} is not a follower of {tp}")
            leo = log.log_end_offset
            if req.fetch_offset == leo and (req.last_fetched_epoch < 0 or
                                            req.last_fetched_epoch ==
                                            log.epochs.latest_epoch):
                # Caught up (most partitions of a follower's session, every round): nothing
                # to read, and nothing can diverge (its last epoch is this log's latest,
                # which ends at this LEO).
                data = None
            else:
                diverging = self._diverging_epoch(partition, req)
                if diverging is not None:
                    return FetchPartitionResult(None, None, log.high_watermark,
                                                log.last_stable_offset, log.log_start_offset,
                                                diverging_epoch=diverging)
                # Kafka's readFromLocalLog: a throttled replica out of the ISR gets no
                # records while the leader's quota is exceeded (its position still counts)
                data = None if self.should_leader_throttle(partition, replica_id) else \
                    partition.read(req.fetch_offset, max_bytes, 0, min_one, replica=True)
        except Exception as exc:
            return FetchPartitionResult(_as_kafka_error(tp, exc), None, log.high_watermark,
                                        log.last_stable_offset, log.log_start_offset)
        if now_ms >= 0 and partition.update_follower_fetch_state(
                replica_id, req.fetch_offset, req.log_start_offset, now_ms, leo):
            self.on_high_watermark_moved(tp)
        # The high watermark after this fetch's position counted: the follower learns it one
        # round earlier than from the value read before.
        return FetchPartitionResult(None, data, log.high_watermark, log.last_stable_offset,
                                    log.log_start_offset)

    @staticmethod
    def _diverging_epoch(partition: Partition, req: FetchPartitionRequest
                         ) -> tuple[int, int] | None:
        """Where the follower's log leaves this one (Fetch v12+'s DivergingEpoch: the
        largest epoch <= its last fetched epoch here, and that epoch's end offset), None if
        it does not. Raises OffsetOutOfRangeError when the epoch's end is unknown."""
        if req.last_fetched_epoch < 0:
            return None
        epoch, end = partition.end_offset_for_epoch(req.last_fetched_epoch)
        if epoch < 0 or end < 0:
            raise OffsetOutOfRangeError(
                f"{req.tp}: cannot determine the end offset of epoch {req.last_fetched_epoch}")
        if epoch < req.last_fetched_epoch or end < req.fetch_offset:
            return (epoch, end)
        return None

    def should_leader_throttle(self, partition: Partition, replica_id: int) -> bool:
        """Kafka's shouldLeaderThrottle: ``replica_id`` is out of the ISR, the partition is
        in its topic's leader.replication.throttled.replicas for this broker, and the leader
        quota is exceeded."""
        return replica_id not in partition.isr and \
            partition.log.config.throttles(True, partition.tp.partition, self.node_id) and \
            self.leader_quota.is_quota_exceeded()

    def record_leader_throttled(self, results: Sequence[tuple[TopicPartition,
                                                              FetchPartitionResult]]) -> None:
        """Kafka's handleFetchRequest for a follower: the bytes of the throttled partitions
        of the response count against the leader quota."""
        size = 0
        node = self.node_id
        for tp, result in results:
            if result.size:
                partition = self.partitions.get(tp)
                if partition is not None and \
                        partition.log.config.throttles(True, tp.partition, node):
                    size += result.size
        self.leader_quota.record(size)

    def fetch_messages(self, params: FetchParams, requests: Sequence[FetchPartitionRequest]
                       ) -> tuple[list[tuple[TopicPartition, FetchPartitionResult]],
                                  DelayedFetch | None]:
        """Read now. The results are the answer if the request does not wait (max wait 0,
        enough bytes, an error, a divergence, nothing asked); else a parked DelayedFetch is
        returned too, whose ``results`` are the answer once its ``wait()`` returns."""
        results = self.read_from_log(params, requests, update_fetch_state=True)
        total = sum(r.size for _, r in results)
        if params.max_wait_ms <= 0 or not requests or total >= params.min_bytes or \
                any(r.error is not None or r.diverging_epoch is not None or
                    r.preferred_read_replica >= 0 for _, r in results):
            return results, None
        # Not tried again before it waits: the read above, in this same event-loop turn,
        # found it short of min_bytes with no error, so its try_complete would too.
        op = DelayedFetch(self, params, requests)
        self.fetch_purgatory.watch(op, [r.tp for r in requests])
        return results, op
