"""ReplicaFetcherThread: a follower's fetch loop from one leader (Kafka's AbstractFetcherThread
and ReplicaFetcherThread, as one Trio task).

Theory of operation
-------------------
- The fetcher owns a set of partitions led by one broker, each with a ``PartitionFetchState``
  (fetch offset = the follower's LEO, the leader epoch it follows, the epoch of its last
  fetched batch, a back-off deadline). It fetches the ready partitions with Fetch v12 as a
  replica (ReplicaId = this broker, with CurrentLeaderEpoch and LastFetchedEpoch) over its own
  connection (``ReplicaFetcherBlockingSend``), in an incremental fetch session (KIP-227,
  ``FetchSessionHandler``): the first fetch lists every partition, the next ones only those
  whose position changed (and the ones it stopped fetching as forgotten), and the leader
  answers only the partitions with news. A follower of a leader of many quiet partitions
  (``__consumer_offsets``) then moves one partition per round, not all of them. A session
  error or a failed request starts a new session with a full fetch.
- Truncation (KIP-101/279 through Fetch, KIP-595 style): the leader compares LastFetchedEpoch
  and the fetch offset with its leader-epoch cache and answers DivergingEpoch (epoch, end
  offset) when this log has a tail the leader never had; the fetcher truncates to the
  largest offset both logs agree on (``_truncate_on_diverging``) and fetches again. A log with
  no epoch at all was truncated to its high watermark when the fetch started.
- Data: the leader's batches are appended as they are (``Log.append_as_follower``: offsets
  kept, CRC checked in compiled code, leader-epoch cache and producer state updated per
  batch); the follower's high watermark = min(leader's, own LEO); the log start offset follows
  the leader's.
- Errors: OFFSET_OUT_OF_RANGE: ListOffsets to the leader, then truncate or restart at the
  leader's log start (``_handle_out_of_range``, Kafka's fetchOffsetAndTruncate);
  FENCED_LEADER_EPOCH: the partition leaves the fetcher (a LeaderAndIsr will say more);
  other partition errors: that partition backs off ``replica.fetch.backoff.ms``; a failed
  request: the whole fetcher backs off.
- A partition removed or re-added (new epoch) while a fetch was in flight is skipped when the
  response comes back (its state object changed).
- Replication quota (KIP-73, ``ReplicaManager.follower_quota``): while the follower quota is
  exceeded, partitions in their topic's ``follower.replication.throttled.replicas`` for this
  broker that have not caught up (``PartitionFetchState.lag`` > 0) are left out of the fetch
  (Kafka's shouldFollowerThrottle); with none left, the fetcher waits
  ``replica.fetch.backoff.ms``. Bytes appended for those partitions are recorded.

Runs on the broker's event loop; appends are synchronous.
"""

from __future__ import annotations

import logging
import math
import uuid
from typing import TYPE_CHECKING

import attrs
import trio

from kafkapy.clients.fetch_session_handler import FetchBuild, FetchSessionHandler
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    BrokerNotAvailableError,
    FencedLeaderEpochError,
    KafkaError,
    OffsetOutOfRangeError,
    error_name,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    ForgottenTopic,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
    PartitionData,
)
from kafkapy.server.replica_fetcher_blocking_send import ReplicaFetcherBlockingSend

if TYPE_CHECKING:
    from kafkapy.server.replica_manager import ReplicaManager

__all__ = ["InitialFetchState", "PartitionFetchState", "ReplicaFetcherThread"]

log = logging.getLogger(__name__)

FETCH_VERSION = 12
LIST_OFFSETS_VERSION = 4
_LATEST = -1
# FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH: start over at once.
_SESSION_ERRORS = (70, 71)
_EARLIEST = -2


@attrs.frozen
class InitialFetchState:
    """Where a follower starts fetching (Kafka's InitialFetchState)."""

    leader_id: int
    host: str
    port: int
    topic_id: uuid.UUID
    leader_epoch: int
    init_offset: int
    last_fetched_epoch: int


@attrs.define(eq=False)
class PartitionFetchState:
    topic_id: uuid.UUID
    fetch_offset: int
    leader_epoch: int
    last_fetched_epoch: int
    delayed_until: float = 0.0
    # the leader's high watermark minus this log's end after the last fetch (Kafka's
    # PartitionFetchState.lag; None before the first data): 0 is "in sync"
    lag: int | None = None

    @property
    def in_sync(self) -> bool:
        return self.lag is not None and self.lag <= 0


class ReplicaFetcherThread:
    """One fetch loop to one leader; see the module docstring."""

    def __init__(self, manager: ReplicaManager, fetcher_id: int, leader_id: int, host: str,
                 port: int) -> None:
        self._rm = manager
        self.fetcher_id = fetcher_id
        self.leader_id = leader_id
        self.host = host
        self.port = port
        self.partitions: dict[TopicPartition, PartitionFetchState] = {}
        self.sessions = FetchSessionHandler()
        self._wakeup = trio.Event()
        self.cancel_scope = trio.CancelScope()
        self.conn = ReplicaFetcherBlockingSend(
            host, port, client_id=f"broker-{manager.node_id}-fetcher-{fetcher_id}",
            timeout_s=(manager.replica_config("replica_socket_timeout_ms", 30000) +
                       manager.replica_config("replica_fetch_wait_max_ms", 500)) / 1000,
            ssl_context=manager.inter_broker_ssl_context,
            authenticate=manager.inter_broker_authenticate)

    def __repr__(self) -> str:
        return (f"ReplicaFetcherThread({self.fetcher_id}, leader {self.leader_id} at "
                f"{self.host}:{self.port}, {len(self.partitions)} partitions)")

    # ============================================================ partitions

    def add_partition(self, tp: TopicPartition, state: InitialFetchState) -> None:
        self.partitions[tp] = PartitionFetchState(state.topic_id, state.init_offset,
                                                  state.leader_epoch, state.last_fetched_epoch)
        self._wakeup.set()

    def remove_partitions(self, tps: set[TopicPartition]) -> None:
        for tp in tps:
            self.partitions.pop(tp, None)

    def shutdown(self) -> None:
        self.cancel_scope.cancel()

    # ================================================================== loop

    def _backoff_s(self) -> float:
        return self._rm.replica_config("replica_fetch_backoff_ms", 1000) / 1000

    async def run(self) -> None:
        with self.cancel_scope:
            try:
                while True:
                    ready = self._ready(trio.current_time())
                    fetchable = self._unthrottled(ready)
                    if ready and not fetchable:
                        # every ready partition is throttled: Kafka's fetcher waits its
                        # back-off when it has no fetch to send
                        with trio.move_on_after(self._backoff_s()):
                            await self._wakeup.wait()
                        self._wakeup = trio.Event()
                        continue
                    ready = fetchable
                    if not ready:
                        wake = min((s.delayed_until for s in self.partitions.values()),
                                   default=math.inf)
                        with trio.move_on_at(wake):
                            await self._wakeup.wait()
                        self._wakeup = trio.Event()
                        continue
                    build, request = self._request(ready)
                    try:
                        response: FetchResponse = await self.conn.request(
                            ApiKey.FETCH, FETCH_VERSION, request)
                    except BrokerNotAvailableError as e:
                        log.info("%r: fetch failed: %s", self, e)
                        self.sessions.handle_error()
                        await trio.sleep(self._backoff_s())
                        continue
                    if not self.sessions.handle_response(build, response.error_code,
                                                         response.session_id):
                        error = response.error_code
                        if error in _SESSION_ERRORS:
                            log.debug("%r: fetch session %d: %s; starting a new one", self,
                                      build.session_id, error_name(error))
                        else:
                            log.info("%r: fetch refused: %s", self, error_name(error))
                            await trio.sleep(self._backoff_s())
                        continue
                    await self._process(ready, response)
            finally:
                await self.conn.close()

    def _ready(self, now: float) -> dict[TopicPartition, PartitionFetchState]:
        """The partitions not backing off at ``now``."""
        return {tp: s for tp, s in self.partitions.items() if s.delayed_until <= now}

    def _unthrottled(self, ready: dict[TopicPartition, PartitionFetchState]
                     ) -> dict[TopicPartition, PartitionFetchState]:
        """``ready`` less the partitions Kafka's shouldFollowerThrottle leaves out: not in
        sync, in follower.replication.throttled.replicas for this broker, and the follower
        quota exceeded (checked once per fetch)."""
        quota = self._rm.follower_quota
        if not ready or not quota.is_quota_exceeded():
            return ready
        hosted = self._rm.partitions
        node = self._rm.node_id
        out = {}
        for tp, s in ready.items():
            partition = hosted.get(tp)
            if s.in_sync or partition is None or \
                    not partition.log.config.throttles(False, tp.partition, node):
                out[tp] = s
        return out

    def _request(self, ready: dict[TopicPartition, PartitionFetchState]
                 ) -> tuple[FetchBuild, FetchRequest]:
        """The next Fetch: the session's view of ``ready`` (Kafka's FetchSessionHandler
        builder), the partitions it lists grouped by topic."""
        rm = self._rm
        max_bytes = rm.replica_config("replica_fetch_max_bytes", 1048576)
        hosted = rm.partitions
        wanted = {}
        for tp, s in ready.items():
            partition = hosted.get(tp)
            wanted[tp] = (s.topic_id, s.fetch_offset,
                          partition.log.log_start_offset if partition is not None else -1,
                          s.leader_epoch, s.last_fetched_epoch, max_bytes)
        build = self.sessions.build(wanted)
        topics: dict[str, FetchTopic] = {}
        for tp, (topic_id, offset, start, epoch, fetched, limit) in build.to_send.items():
            topic = topics.get(tp.topic)
            if topic is None:
                topic = topics[tp.topic] = FetchTopic(topic=tp.topic, topic_id=topic_id,
                                                      partitions=[])
            topic.partitions.append(FetchPartition(
                partition=tp.partition, current_leader_epoch=epoch, fetch_offset=offset,
                last_fetched_epoch=fetched, log_start_offset=start, partition_max_bytes=limit))
        forgotten: dict[str, ForgottenTopic] = {}
        for tp in build.forgotten:
            forgotten.setdefault(tp.topic, ForgottenTopic(topic=tp.topic)).partitions.append(
                tp.partition)
        request = FetchRequest(
            replica_id=rm.node_id,
            max_wait_ms=rm.replica_config("replica_fetch_wait_max_ms", 500),
            min_bytes=rm.replica_config("replica_fetch_min_bytes", 1),
            max_bytes=rm.replica_config("replica_fetch_response_max_bytes", 10485760),
            isolation_level=0, session_id=build.session_id, session_epoch=build.epoch,
            topics=list(topics.values()), forgotten_topics_data=list(forgotten.values()),
            rack_id="")
        return build, request

    def _back_off(self, state: PartitionFetchState) -> None:
        state.delayed_until = trio.current_time() + self._backoff_s()

    def _drop(self, tp: TopicPartition) -> None:
        self.partitions.pop(tp, None)

    async def _process(self, sent: dict[TopicPartition, PartitionFetchState],
                       response: FetchResponse) -> None:
        for topic in response.responses:
            for pd in topic.partitions:
                tp = TopicPartition(topic.topic, pd.partition_index)
                state = sent.get(tp)
                if state is None or self.partitions.get(tp) is not state:
                    continue        # not fetched, removed or restarted meanwhile
                try:
                    await self._process_partition(tp, state, pd)
                except KafkaError as e:
                    log.warning("%r: %s: %s; backing off", self, tp, e)
                    self._back_off(state)
                except Exception:
                    # A storage error on this log must not stop the other partitions (Kafka
                    # marks the partition failed; here it backs off and tries again).
                    log.exception("%r: %s: appending the leader's data failed", self, tp)
                    self._back_off(state)

    async def _process_partition(self, tp: TopicPartition, state: PartitionFetchState,
                                 pd: PartitionData) -> None:
        partition = self._rm.partitions.get(tp)
        if partition is None or partition.is_leader or \
                partition.leader_epoch != state.leader_epoch:
            self._drop(tp)
            return
        error = pd.error_code
        if error == OffsetOutOfRangeError.code:
            await self._handle_out_of_range(tp, state)
            return
        if error == FencedLeaderEpochError.code:
            log.info("%r: %s: fenced at leader epoch %d; waiting for LeaderAndIsr", self, tp,
                     state.leader_epoch)
            self._drop(tp)
            return
        if error != 0:
            log.debug("%r: %s: %s; backing off", self, tp, error_name(error))
            self._back_off(state)
            return
        plog = partition.log
        diverging = pd.diverging_epoch
        if diverging.epoch >= 0 or diverging.end_offset >= 0:
            self._truncate_on_diverging(tp, state, diverging.epoch, diverging.end_offset)
            return
        records = pd.records
        if isinstance(records, memoryview | bytes | bytearray) and len(records):
            partition.append_as_follower(records)
            if plog.config.throttles(False, tp.partition, self._rm.node_id):
                self._rm.follower_quota.record(len(records))
        hw = plog.high_watermark
        if plog.update_high_watermark(min(pd.high_watermark, plog.log_end_offset)) != hw:
            # Consumers parked on this follower (KIP-392) read up to its high watermark.
            self._rm.fetch_purgatory.check_and_complete(tp)
        if pd.log_start_offset > plog.log_start_offset:
            plog.delete_records(min(pd.log_start_offset, plog.high_watermark))
        state.fetch_offset = plog.log_end_offset
        state.last_fetched_epoch = plog.epochs.latest_epoch
        state.lag = max(0, pd.high_watermark - plog.log_end_offset)

    def _truncate_on_diverging(self, tp: TopicPartition, state: PartitionFetchState,
                               leader_epoch: int, leader_end: int) -> None:
        """Kafka's getOffsetTruncationState: the largest offset this log and the leader's
        agree on, from the leader's (epoch, end offset) for our last fetched epoch."""
        partition = self._rm.partitions[tp]
        plog = partition.log
        replica_end = plog.log_end_offset
        if leader_end < 0:
            target = plog.high_watermark
        elif leader_epoch < 0:
            target = min(leader_end, replica_end)
        else:
            f_epoch, f_end = plog.epochs.end_offset_for(leader_epoch, replica_end)
            if f_epoch < 0:
                target = min(leader_end, replica_end)
            elif f_epoch != leader_epoch:
                # The leader's epoch is unknown here: go back to the end of our largest epoch
                # below it; the next fetch tells whether that agrees.
                target = min(f_end, replica_end)
            else:
                target = min(f_end, leader_end, replica_end)
        if target < replica_end:
            log.info("%s: truncating the follower log from %d to %d (leader %d: epoch %d ends "
                     "at %d)", tp, replica_end, target, self.leader_id, leader_epoch,
                     leader_end)
        # Even at the end: an epoch this replica took as leader and wrote nothing in starts
        # there, and only the truncation drops it (else LastFetchedEpoch diverges forever).
        plog.truncate_to(target)
        state.fetch_offset = plog.log_end_offset
        state.last_fetched_epoch = plog.epochs.latest_epoch

    async def _list_offset(self, tp: TopicPartition, state: PartitionFetchState,
                           timestamp: int) -> int:
        request = ListOffsetsRequest(replica_id=self._rm.node_id, isolation_level=0, topics=[
            ListOffsetsTopic(name=tp.topic, partitions=[ListOffsetsPartition(
                partition_index=tp.partition, current_leader_epoch=state.leader_epoch,
                timestamp=timestamp)])])
        response: ListOffsetsResponse = await self.conn.request(
            ApiKey.LIST_OFFSETS, LIST_OFFSETS_VERSION, request)
        p = response.topics[0].partitions[0]
        if p.error_code != 0:
            raise OffsetOutOfRangeError(f"{tp}: ListOffsets to the leader: "
                                        f"{error_name(p.error_code)}")
        return p.offset

    async def _handle_out_of_range(self, tp: TopicPartition, state: PartitionFetchState
                                   ) -> None:
        """Kafka's fetchOffsetAndTruncate: behind the leader's start, restart there; ahead of
        its end (an unclean election), truncate to it."""
        try:
            leader_end = await self._list_offset(tp, state, _LATEST)
            leader_start = await self._list_offset(tp, state, _EARLIEST)
        except BrokerNotAvailableError as e:
            raise OffsetOutOfRangeError(f"{tp}: {e}") from e
        partition = self._rm.partitions.get(tp)
        if partition is None or self.partitions.get(tp) is not state:
            return
        plog = partition.log
        replica_end = plog.log_end_offset
        if leader_end < replica_end:
            log.warning("%s: the leader's log ends at %d, before this follower's %d: "
                        "truncating", tp, leader_end, replica_end)
            plog.truncate_to(leader_end)
        elif leader_start > replica_end:
            log.info("%s: the leader's log starts at %d, after this follower's end %d: "
                     "starting over there", tp, leader_start, replica_end)
            plog.truncate_fully_and_start_at(leader_start)
        elif leader_start > plog.log_start_offset:
            plog.delete_records(min(leader_start, plog.high_watermark))
        state.fetch_offset = plog.log_end_offset
        state.last_fetched_epoch = plog.epochs.latest_epoch
