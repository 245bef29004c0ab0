"""TransactionCoordinator: producer ids, transactional ids and the two-phase end of a
transaction (Kafka's ``TransactionCoordinator`` with its marker channel, for one broker that
leads every partition).

- The coordinator holds the transactional ids of the ``__transaction_state`` partitions this
  broker leads: the broker elects it (``on_become_leader`` / ``on_resign``, through the
  coordinators' port), its ``TransactionStateManager`` loads and drops them; ids of a
  partition being loaded answer COORDINATOR_LOAD_IN_PROGRESS, of one not led here
  NOT_COORDINATOR.
- InitProducerId without a transactional id hands out a fresh producer id at epoch 0 (an
  idempotent producer); with one, it bumps the id's epoch (fencing older producers of the id:
  KIP-98 zombie fencing; KIP-360 retries with the expected producer id and epoch), rotating to
  a new producer id when the epoch is exhausted. An id with an open transaction first has
  that transaction aborted on its behalf (epoch fenced) and answers CONCURRENT_TRANSACTIONS
  meanwhile, so the client retries.
- AddPartitionsToTxn / AddOffsetsToTxn move the id to Ongoing with the partitions (the group's
  ``__consumer_offsets`` partition for offsets); EndTxn writes PrepareCommit / PrepareAbort,
  then a transaction marker (a control batch carrying the producer id, epoch and this
  coordinator's epoch) into every partition of the transaction, then CompleteCommit /
  CompleteAbort. The markers go through the ``TxnMarkerWriter`` (Kafka's
  ``TransactionMarkerChannelManager``: WriteTxnMarkers to each partition's leader; here the
  broker appends them), in order, before EndTxn is answered: a client's next transaction
  never waits on CONCURRENT_TRANSACTIONS for them. A marker reaching ``__consumer_offsets``
  makes the group coordinator commit or drop the transaction's pending offsets (the marker
  writer tells it).
- A transaction left in PrepareCommit / PrepareAbort (a crash between the two records, or a
  marker that could not be written) is completed by the background task: after its
  partition is loaded and every
  ``transaction.abort.timed.out.transaction.cleanup.interval.ms``, which also aborts Ongoing
  transactions older than their ``transaction.timeout.ms`` and fences their producers (the
  bumped epoch is written with the abort and carried by its markers).

Every call runs on the broker's event loop and is synchronous between its awaits, so a
prepare, its append and its completion never interleave with another request's. Callers: the
transaction request handlers, FindCoordinator (``state.ensure_topic``), the Produce path
(``verify_partition``) and the partition port's leadership callbacks; the broker starts
``run`` in its nursery. Everything it needs of the broker comes through the port.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable

import trio

from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig
from kafkapy.coordinator.group.group_metadata_manager import OFFSETS_TOPIC
from kafkapy.coordinator.internal_topic import partition_for
from kafkapy.coordinator.partition_port import (
    CoordinatorPartitions,
    ProducerIdBlocks,
    TxnMarkerWriter,
)
from kafkapy.coordinator.transaction.producer_id_manager import ProducerIdManager
from kafkapy.coordinator.transaction.transaction_metadata import (
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
    is_epoch_exhausted,
)
from kafkapy.coordinator.transaction.transaction_state_manager import TransactionStateManager
from kafkapy.errors import (
    ConcurrentTransactionsError,
    InvalidProducerEpochError,
    InvalidProducerIdMappingError,
    InvalidRegularExpressionError,
    InvalidRequestError,
    InvalidTransactionTimeoutError,
    InvalidTxnStateError,
    KafkaError,
    ProducerFencedError,
    TransactionalIdNotFoundError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)

__all__ = ["TransactionCoordinator"]

log = logging.getLogger(__name__)

S = TransactionState


class TransactionCoordinator:
    """The transaction coordinator of one broker: ``partitions`` (the port to the broker's
    partitions), ``markers`` (writes transaction markers), ``producer_id_blocks`` (where
    producer ids come from), ``config`` (returns the live broker config), ``time`` (the
    broker's clock). Register it with the broker for ``__transaction_state`` (it is a
    ``LeadershipListener``) and start ``run`` before the broker elects it."""

    def __init__(self, partitions: CoordinatorPartitions, markers: TxnMarkerWriter,
                 producer_id_blocks: ProducerIdBlocks, config: Callable[[], BrokerConfig],
                 time: Time) -> None:
        self.partitions = partitions
        self.markers = markers
        self.config = config
        self.time = time
        self.state = TransactionStateManager(partitions, config, time,
                                             on_loaded=self._on_partition_loaded)
        self.producer_ids = ProducerIdManager(producer_id_blocks)
        self._scope: trio.CancelScope | None = None
        self._round_due = trio.Event()
        # Transactional ids whose markers are being written: the marker writes await the
        # flush policy, so the background task must not start the same completion again.
        self._completing: set[str] = set()

    # ================================================================ lifecycle

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        with trio.CancelScope() as self._scope:
            async with trio.open_nursery() as nursery:
                await nursery.start(self.state.run)
                nursery.start_soon(self._background)
                task_status.started()

    def shutdown(self) -> None:
        self.state.shutdown()
        if self._scope is not None:
            self._scope.cancel()

    # ============================================================== leadership

    def on_become_leader(self, partition: int, leader_epoch: int) -> None:
        """The broker leads ``partition`` of ``__transaction_state`` at ``leader_epoch``:
        load its transactional ids (COORDINATOR_LOAD_IN_PROGRESS for them meanwhile); once
        loaded, what they left prepared is completed and what timed out is aborted."""
        self.state.on_become_leader(partition, leader_epoch)

    def on_resign(self, partition: int, leader_epoch: int | None) -> None:
        """The broker no longer leads ``partition``: its ids answer NOT_COORDINATOR (a
        transaction being completed for one of them stops at its next write)."""
        self.state.on_resign(partition, leader_epoch)

    def _on_partition_loaded(self, partition: int) -> None:
        self._round_due.set()

    async def _background(self) -> None:
        """One round every interval, and one as soon as a partition is loaded; one task, so
        rounds never overlap."""
        while True:
            with trio.move_on_after(
                    self.config().transaction_abort_timed_out_transaction_cleanup_interval_ms
                    / 1000):
                await self._round_due.wait()
            self._round_due = trio.Event()
            await self._round()

    async def _round(self) -> None:
        try:
            await self.complete_prepared()
            await self.abort_timed_out(self.time.milliseconds())
        except Exception:
            log.exception("Completing or aborting transactions failed")

    # =========================================================== InitProducerId

    async def init_producer_id(self, transactional_id: str | None, txn_timeout_ms: int,
                               expected_producer_id: int = -1, expected_epoch: int = -1
                               ) -> tuple[int, int]:
        """(producer id, epoch), or raises the KafkaError the client gets."""
        if transactional_id is None:
            # An idempotent producer: always a fresh id (Kafka ignores the expected id then).
            return self.producer_ids.generate_producer_id(), 0
        if not transactional_id:
            raise InvalidRequestError("the transactional id must not be empty")
        if (expected_producer_id < 0) != (expected_epoch < 0):
            raise InvalidRequestError("the producer id and epoch must both be given, or "
                                      "neither")
        if not self.state.validate_transaction_timeout_ms(txn_timeout_ms):
            raise InvalidTransactionTimeoutError(
                f"transaction timeout {txn_timeout_ms} ms is not in (0, "
                f"{self.config().transaction_max_timeout_ms}] "
                f"(transaction.max.timeout.ms)")
        self.state.ensure_topic()
        now = self.time.milliseconds()
        m = self.state.get(transactional_id)
        if m is None:
            m = self.state.put_if_absent(TransactionMetadata(
                transactional_id=transactional_id,
                producer_id=self.producer_ids.generate_producer_id(), producer_epoch=-1,
                txn_timeout_ms=txn_timeout_ms, state=S.EMPTY,
                txn_last_update_timestamp=now))
        expected = None if expected_producer_id < 0 else (expected_producer_id, expected_epoch)
        if m.pending_state is not None:
            raise ConcurrentTransactionsError(f"transactional id {transactional_id} is "
                                              f"completing a transition")
        if expected is not None and not (
                expected[0] == m.producer_id or
                (expected[0] == m.previous_producer_id and is_epoch_exhausted(expected[1]))):
            raise ProducerFencedError(f"producer id {expected[0]} is not the current one "
                                      f"({m.producer_id}) of {transactional_id}")
        if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            raise ConcurrentTransactionsError(f"transactional id {transactional_id} is "
                                              f"completing its transaction")
        if m.state == S.ONGOING:
            # Abort the open transaction on the old producer's behalf, fencing its epoch; the
            # client retries once it is complete.
            await self._fence_and_abort(m)
            raise ConcurrentTransactionsError(f"the open transaction of {transactional_id} "
                                              f"was aborted; retry")
        if m.state not in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            raise UnknownServerError(f"transactional id {transactional_id} is in state "
                                     f"{m.state.kafka_name}")
        transit: TxnTransitMetadata
        if m.is_producer_epoch_exhausted or \
                (expected is not None and is_epoch_exhausted(expected[1])):
            transit = m.prepare_producer_id_rotation(
                self.producer_ids.generate_producer_id(), txn_timeout_ms, now,
                record_last_epoch=expected is not None)
        else:
            transit = m.prepare_increment_producer_epoch(
                txn_timeout_ms, None if expected is None else expected[1], now)
        self.state.append_transition(m, transit)
        await self.state.wait_committed(transactional_id)
        return m.producer_id, m.producer_epoch

    # ====================================================== AddPartitions / AddOffsets

    def _checked(self, transactional_id: str, producer_id: int, epoch: int
                 ) -> TransactionMetadata:
        if not transactional_id:
            raise InvalidRequestError("the transactional id must not be empty")
        m = self.state.get(transactional_id)
        if m is None or m.producer_id != producer_id:
            raise InvalidProducerIdMappingError(
                f"producer id {producer_id} is not the one of transactional id "
                f"{transactional_id}")
        if m.producer_epoch != epoch:
            raise ProducerFencedError(
                f"producer epoch {epoch} of {transactional_id} is not the current "
                f"{m.producer_epoch}: a newer producer fenced it")
        return m

    async def add_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                             tps: Iterable[TopicPartition]) -> None:
        m = self._checked(transactional_id, producer_id, epoch)
        tps = set(tps)
        if m.pending_state is not None or m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            raise ConcurrentTransactionsError(f"transactional id {transactional_id} is "
                                              f"completing its transaction")
        if m.state == S.ONGOING and tps <= m.topic_partitions:
            return
        if m.state not in (S.EMPTY, S.ONGOING, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            raise InvalidTxnStateError(f"transactional id {transactional_id} cannot add "
                                       f"partitions in state {m.state.kafka_name}")
        self.state.append_transition(m, m.prepare_add_partitions(tps,
                                                                 self.time.milliseconds()))
        await self.state.wait_committed(transactional_id)

    async def add_offsets(self, transactional_id: str, producer_id: int, epoch: int,
                          group_id: str) -> None:
        await self.add_partitions(transactional_id, producer_id, epoch,
                                  [self._offsets_partition(group_id)])

    def _offsets_partition(self, group_id: str) -> TopicPartition:
        """The group's ``__consumer_offsets`` partition, the topic created first as the group
        coordinator creates it (Kafka's AddOffsetsToTxn asks the group coordinator's
        ``partitionFor``; the topic exists by then unless the client skipped
        FindCoordinator)."""
        cfg = self.config()
        info = self.partitions.topics().get(OFFSETS_TOPIC)
        if info is None:
            self.partitions.create_internal_topic(
                OFFSETS_TOPIC, cfg.offsets_topic_num_partitions, -1,
                {"cleanup.policy": "compact",
                 "segment.bytes": str(cfg.offsets_topic_segment_bytes),
                 "compression.type": "producer"})
            info = self.partitions.topics().get(OFFSETS_TOPIC)
        count = cfg.offsets_topic_num_partitions if info is None else info.partitions
        return TopicPartition(OFFSETS_TOPIC, partition_for(group_id, count))

    def verify_partition(self, transactional_id: str, producer_id: int, epoch: int,
                         tp: TopicPartition) -> None:
        """A transactional produce to ``tp`` is allowed only inside the id's open
        transaction that has ``tp`` (Kafka's verification, KIP-890 part 1)."""
        m = self.state.get(transactional_id)
        if m is None or m.producer_id != producer_id:
            raise InvalidProducerIdMappingError(
                f"producer id {producer_id} is not the one of transactional id "
                f"{transactional_id}")
        if m.producer_epoch != epoch:
            raise InvalidProducerEpochError(
                f"producer epoch {epoch} of {transactional_id} is not the current "
                f"{m.producer_epoch}")
        if m.state != S.ONGOING or tp not in m.topic_partitions:
            raise InvalidTxnStateError(
                f"{tp} is not in an open transaction of {transactional_id} (state "
                f"{m.state.kafka_name}): AddPartitionsToTxn first")

    def verify_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                          partitions: list[TopicPartition]
                          ) -> dict[TopicPartition, KafkaError | None]:
        """AddPartitionsToTxn v4 with ``verify_only`` from a partition leader (Kafka's
        ``handleVerifyPartitionsInTransaction``): per partition None if it is in the id's
        transaction, else INVALID_TXN_STATE; for all of them INVALID_REQUEST (no id),
        INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED or CONCURRENT_TRANSACTIONS (completing).
        Raises NotCoordinatorError / CoordinatorLoadInProgressError."""
        error: KafkaError | None = None
        if not transactional_id:
            error = InvalidRequestError("verification needs a transactional id")
        else:
            m = self.state.get(transactional_id)
            if m is None or m.producer_id != producer_id:
                error = InvalidProducerIdMappingError(
                    f"producer id {producer_id} is not the one of {transactional_id}")
            elif m.producer_epoch != epoch:
                error = ProducerFencedError(
                    f"producer epoch {epoch} of {transactional_id} is not the current "
                    f"{m.producer_epoch}")
            elif m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                error = ConcurrentTransactionsError(
                    f"the transaction of {transactional_id} is completing")
            else:
                return {tp: None if tp in m.topic_partitions else InvalidTxnStateError(
                    f"{tp} is not in the transaction of {transactional_id}")
                        for tp in partitions}
        return dict.fromkeys(partitions, error)

    # ==================================================================== EndTxn

    async def end_txn(self, transactional_id: str, producer_id: int, epoch: int,
                      commit: bool) -> None:
        """Kafka's handleEndTransaction for a client (transactions v1)."""
        m = self._checked(transactional_id, producer_id, epoch)
        if m.pending_state is not None:
            raise ConcurrentTransactionsError(f"transactional id {transactional_id} is "
                                              f"completing a transition")
        wanted = "commit" if commit else "abort"
        if m.state == S.ONGOING:
            self.state.append_transition(m, m.prepare_abort_or_commit(
                S.PREPARE_COMMIT if commit else S.PREPARE_ABORT, self.time.milliseconds()))
            await self._commit_prepared(m)
            return
        done = S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT
        preparing = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        if m.state == done:
            return          # a retry of an EndTxn that completed
        if m.state == preparing:
            raise ConcurrentTransactionsError(f"transactional id {transactional_id} is "
                                              f"completing its {wanted}")
        raise InvalidTxnStateError(f"transactional id {transactional_id} cannot {wanted} in "
                                   f"state {m.state.kafka_name}")

    async def _fence_and_abort(self, m: TransactionMetadata) -> None:
        """Abort ``m``'s open transaction for the coordinator (InitProducerId of a new
        producer, or a timeout) with the producer epoch bumped, so the old producer is fenced
        (Kafka's prepareFenceProducerEpoch, then endTransaction with isFromClient=false: the
        bumped epoch is written with PrepareAbort, never handed to a client)."""
        fence = m.prepare_fence_producer_epoch()
        old_epoch, old_last = m.producer_epoch, m.last_producer_epoch
        m.pending_state = None
        m.producer_epoch, m.last_producer_epoch = fence.producer_epoch, -1
        try:
            self.state.append_transition(m, m.prepare_abort_or_commit(
                S.PREPARE_ABORT, self.time.milliseconds()))
        except KafkaError:
            m.producer_epoch, m.last_producer_epoch = old_epoch, old_last
            raise
        await self._commit_prepared(m)

    async def _commit_prepared(self, m: TransactionMetadata) -> None:
        """Wait for ``m``'s PrepareCommit / PrepareAbort record to be committed, then
        complete it; the id counts as being completed throughout, so that the background
        task does not write the same markers meanwhile."""
        self._completing.add(m.transactional_id)
        try:
            await self.state.wait_committed(m.transactional_id)
        finally:
            self._completing.discard(m.transactional_id)
        await self._complete(m)

    async def _complete(self, m: TransactionMetadata) -> bool:
        """Write the markers of a prepared transaction, then its Complete state. Returns
        False (the transaction stays prepared, for the background task to retry) when a
        marker could not be written; a partition deleted since needs none."""
        commit = m.state == S.PREPARE_COMMIT
        self._completing.add(m.transactional_id)
        try:
            results = await self.markers.write_txn_markers(
                m.producer_id, m.producer_epoch, commit,
                self.state.coordinator_epoch(m.transactional_id), sorted(m.topic_partitions))
        finally:
            self._completing.discard(m.transactional_id)
        failed = {tp: e for tp, e in results.items()
                  if e is not None and not isinstance(e, UnknownTopicOrPartitionError)}
        if failed:
            for tp, e in failed.items():
                log.warning("Writing the %s marker of %s (producer %d) to %s failed: %s",
                            "COMMIT" if commit else "ABORT", m.transactional_id,
                            m.producer_id, tp, e)
            return False
        self.state.append_transition(m, m.prepare_complete(self.time.milliseconds()))
        await self.state.wait_committed(m.transactional_id)
        return True

    # =============================================================== background

    async def complete_prepared(self) -> None:
        """Finish transactions left in PrepareCommit / PrepareAbort (a crash between the two
        records, or a marker that failed): their markers are written again."""
        for m in self.state.pending_completions():
            if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT) and m.pending_state is None \
                    and m.transactional_id not in self._completing:
                try:
                    await self._complete(m)
                except KafkaError as e:
                    log.warning("Completing the transaction of %s failed: %s",
                                m.transactional_id, e)

    async def abort_timed_out(self, now_ms: int) -> int:
        """Abort every Ongoing transaction older than its timeout, fencing its producer
        (Kafka's abortTimedOutTransactions). Returns how many were aborted."""
        aborted = 0
        for m in self.state.timed_out(now_ms):
            if m.state != S.ONGOING or m.pending_state is not None:
                continue
            log.info("Aborting the transaction of %s (producer %d, epoch %d): it is older than "
                     "its timeout of %d ms", m.transactional_id, m.producer_id,
                     m.producer_epoch, m.txn_timeout_ms)
            try:
                await self._fence_and_abort(m)
                aborted += 1
            except KafkaError as e:
                log.warning("Aborting the timed-out transaction of %s failed: %s",
                            m.transactional_id, e)
        return aborted

    # ==================================================================== admin

    def describe(self, transactional_id: str) -> TransactionMetadata:
        m = self.state.get(transactional_id)
        if m is None or m.state == S.DEAD:
            raise TransactionalIdNotFoundError(f"no transactional id {transactional_id}")
        return m

    def list_transactions(self, states: list[str], producer_ids: list[int],
                          duration_ms: int = -1, id_pattern: str | None = None
                          ) -> tuple[list[str], list[TransactionMetadata]]:
        """(the state filters that name no state, the matching transactions): in one of
        ``states``, of one of ``producer_ids`` (empty: any), running at least
        ``duration_ms`` (KIP-994; -1: any), with an id ``id_pattern`` matches whole
        (KIP-1152; None or empty: any). Raises InvalidRegularExpressionError."""
        regex = None
        if id_pattern:
            try:
                regex = re.compile(id_pattern)
            except re.error as e:
                raise InvalidRegularExpressionError(
                    f"invalid transactional id pattern {id_pattern!r}: {e}") from e
        unknown = [s for s in states if S.from_kafka_name(s) is None]
        wanted = {S.from_kafka_name(s) for s in states} - {None}
        pids = set(producer_ids)
        now = self.time.milliseconds()
        out = []
        for m in self.state.all():
            if (states and m.state not in wanted) or (pids and m.producer_id not in pids):
                continue
            if regex is not None and not regex.fullmatch(m.transactional_id):
                continue
            if duration_ms >= 0 and (m.txn_start_timestamp < 0 or
                                     now - m.txn_start_timestamp < duration_ms):
                continue
            out.append(m)
        return unknown, out
