"""TransactionStateManager: the transactions' durable state in the internal topic
``__transaction_state``.

Theory of operation
-------------------
Kafka's ``TransactionStateManager``, over the coordinators' port to the broker
(:mod:`kafkapy.coordinator.partition_port`):

- the topic is created (compacted, uncompressed, ``transaction.state.log.num.partitions``
  partitions, ``transaction.state.log.segment.bytes``) the first time a transition is
  written, or earlier through ``ensure_topic`` (FindCoordinator for a transactional id);
  ``transaction.state.log.replication.factor`` and ``transaction.state.log.min.isr`` are
  clamped to the live brokers (one), or no write could ever succeed;
- a transactional id lives in partition ``abs(javaHash(id)) % partitions`` (Kafka's
  ``partitionFor``), so its records stay in order in one log;
- the manager holds the ids of the partitions this broker leads, and only those. The broker
  says which (``on_become_leader(p, epoch)`` / ``on_resign(p, epoch)``, Kafka's
  ``loadTransactionsForTxnTopicPartition`` / ``removeTransactionsForTxnTopicPartition``):
  becoming leader reads partition ``p`` back from its log start to its log end in the
  background (later records win, tombstones remove) while calls for its ids raise
  COORDINATOR_LOAD_IN_PROGRESS; an empty partition (a topic just created) is loaded at once.
  Resigning forgets its ids: NOT_COORDINATOR for them from then on, as for every id of a
  partition not led here. The leader epoch a partition was loaded at is the coordinator epoch
  its markers carry; an election older than it (or the same one again) is ignored, a newer
  one reloads. Before the topic exists every id is this broker's (it will lead every
  partition it creates) and has no state;
- one ``TransactionMetadata`` per transactional id is kept in memory (the cache). A change is
  prepared on the metadata (``prepare_*``: ``pending_state`` set), appended here as one record
  (``append_transition``), and applied to the metadata only once the append succeeded
  (``complete_transition``); a failed append clears the pending state and raises the error
  Kafka answers clients with. The caller then awaits ``wait_committed`` before it answers.
  Expired ids get a tombstone (``remove``);
- transactions loaded in PrepareCommit or PrepareAbort had their markers cut short (a crash,
  a new leader): the coordinator, told through ``on_loaded``, finds them with
  ``pending_completions`` and writes the markers again;
- every ``transaction.remove.expired.transaction.cleanup.interval.ms`` the ids idle in Empty,
  CompleteCommit or CompleteAbort for ``transactional.id.expiration.ms`` are removed
  (Kafka's ``removeExpiredTransactionalIds``, which this manager owns in Kafka too).
  Aborting timed-out transactions is the coordinator's: it asks ``timed_out``.

Records that cannot be read while loading (a key that is not a transaction key, a corrupt
value) are logged and skipped; Kafka skips unknown keys too, but stops loading the partition
at a corrupt record.

Who calls what: the TransactionCoordinator (request handlers, its leadership callbacks) on
the broker's event loop; everything here is synchronous except ``run`` (the loads and the
expiration rounds, in the coordinator's nursery) and ``wait_committed``, so a prepare, its
append and its completion happen without another task in between. The configuration is read
through the ``config`` getter at each use (dynamic updates apply); times come from ``time``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from contextlib import aclosing

import trio

from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig
from kafkapy.coordinator.internal_topic import append_records, partition_for, read_batches
from kafkapy.coordinator.partition_port import CoordinatorPartitions
from kafkapy.coordinator.transaction.records import (
    TransactionKey,
    read_key,
    read_transaction_log_value,
    transaction_log_key,
    transaction_log_value,
)
from kafkapy.coordinator.transaction.transaction_metadata import (
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from kafkapy.errors import (
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    KafkaError,
    KafkaStorageError,
    MessageTooLargeError,
    NotCoordinatorError,
    NotEnoughReplicasAfterAppendError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    RecordListTooLargeError,
    RequestTimedOutError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from kafkapy.protocol.records import BATCH_HEADER_SIZE

__all__ = ["TRANSACTION_STATE_TOPIC", "TransactionStateManager"]

log = logging.getLogger(__name__)

TRANSACTION_STATE_TOPIC = "__transaction_state"
_LIVE_BROKERS = 1           # this broker is the whole cluster
# Bytes a tombstone costs in a batch beyond its key, at most (record framing varints).
_RECORD_OVERHEAD = 32

_PREPARED = (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)

# Kafka's TransactionStateManager.appendTransactionToLog error mapping.
_COORDINATOR_GONE = (UnknownTopicOrPartitionError, NotEnoughReplicasError,
                     NotEnoughReplicasAfterAppendError, RequestTimedOutError)
_NOT_COORDINATOR = (NotLeaderOrFollowerError, KafkaStorageError)
_TOO_LARGE = (MessageTooLargeError, RecordListTooLargeError)


def append_error(exc: Exception) -> KafkaError:
    """The error Kafka answers a client with when a ``__transaction_state`` append failed
    with ``exc``: COORDINATOR_NOT_AVAILABLE (retry here) for a missing partition, too few
    replicas or a timeout; NOT_COORDINATOR (find the coordinator again) for a lost leadership
    or a storage error; UNKNOWN_SERVER_ERROR for a record too large or anything unexpected;
    other Kafka errors as they are."""
    if isinstance(exc, _COORDINATOR_GONE):
        return CoordinatorNotAvailableError(str(exc))
    if isinstance(exc, _NOT_COORDINATOR) or isinstance(exc, OSError):
        return NotCoordinatorError(str(exc))
    if isinstance(exc, _TOO_LARGE):
        return UnknownServerError(str(exc))
    if isinstance(exc, KafkaError):
        return exc
    return UnknownServerError(f"{type(exc).__name__}: {exc}")


class TransactionStateManager:
    """The cache of the transactional ids of the ``__transaction_state`` partitions this
    broker leads, and their log.

    ``partitions`` is the broker (the port), ``config`` returns the live broker config,
    ``time`` the clock; ``on_loaded(p)`` is called once partition ``p`` is loaded and not
    empty (the coordinator completes what it left prepared). Start ``run`` before the broker
    elects the manager's partitions.
    """

    def __init__(self, partitions: CoordinatorPartitions, config: Callable[[], BrokerConfig],
                 time: Time, on_loaded: Callable[[int], None] | None = None) -> None:
        self.partitions = partitions
        self.config = config
        self.time = time
        self.on_loaded = on_loaded
        self.loading: set[int] = set()
        # Partitions loaded or loading: the leader epoch they are (being) loaded at.
        self._epochs: dict[int, int] = {}
        self._transactions: dict[str, TransactionMetadata] = {}
        self._topic_partitions: int | None = None
        self._end_offsets: dict[int, int] = {}       # after this broker's last append
        self._nursery: trio.Nursery | None = None
        self._queued: list[tuple[int, int]] = []     # elections before run started
        self._shut_down = False

    # ================================================================ partitions

    def _topic_partition_count(self) -> int | None:
        """The topic's partition count, None while it does not exist. Read once it exists:
        Kafka fixes it too (``transactionTopicPartitionCount``), every id's partition depends
        on it."""
        if self._topic_partitions is None:
            info = self.partitions.topics().get(TRANSACTION_STATE_TOPIC)
            if info is not None:
                self._topic_partitions = info.partitions
        return self._topic_partitions

    @property
    def num_partitions(self) -> int:
        count = self._topic_partition_count()
        return self.config().transaction_state_log_num_partitions if count is None else count

    def partition_for(self, transactional_id: str) -> int:
        """The ``__transaction_state`` partition of ``transactional_id`` (Kafka's
        ``Utils.abs(hashCode) % partitions``: abs of Integer.MIN_VALUE is 0)."""
        return partition_for(transactional_id, self.num_partitions)

    def transaction_topic_configs(self) -> dict[str, str]:
        """The topic configs Kafka enforces on ``__transaction_state``
        (``transactionTopicConfigs``), min.insync.replicas clamped to the replicas."""
        cfg = self.config()
        replicas = min(cfg.transaction_state_log_replication_factor, _LIVE_BROKERS)
        return {
            "cleanup.policy": "compact",
            "compression.type": "uncompressed",
            "unclean.leader.election.enable": "false",
            "min.insync.replicas": str(min(cfg.transaction_state_log_min_isr, replicas)),
            "segment.bytes": str(cfg.transaction_state_log_segment_bytes),
        }

    def ensure_topic(self) -> None:
        """Create ``__transaction_state`` if it does not exist (Kafka creates it on the first
        FindCoordinator for a transactional id); the broker then elects this manager for its
        partitions, which load at once (they are empty). Raises what topic creation raises
        (KafkaError subclasses, OSError when the metadata cannot be written)."""
        if self._topic_partition_count() is not None:
            return
        cfg = self.config()
        self.partitions.create_internal_topic(
            TRANSACTION_STATE_TOPIC, cfg.transaction_state_log_num_partitions,
            min(cfg.transaction_state_log_replication_factor, _LIVE_BROKERS),
            self.transaction_topic_configs())

    def check_loaded(self, transactional_id: str) -> None:
        """Raises CoordinatorLoadInProgressError while the id's partition loads,
        NotCoordinatorError once the manager is shut down or when the topic exists and this
        broker does not lead the id's partition (or has not been told it does)."""
        if self._shut_down:
            raise NotCoordinatorError("the transaction coordinator is shutting down")
        p = self.partition_for(transactional_id)
        if p in self.loading:
            raise CoordinatorLoadInProgressError(
                f"the coordinator is loading the transactions of partition {p} of "
                f"{TRANSACTION_STATE_TOPIC}")
        if p not in self._epochs and self._topic_partition_count() is not None:
            raise NotCoordinatorError(f"this broker does not lead partition {p} of "
                                      f"{TRANSACTION_STATE_TOPIC}")

    def is_loaded(self, transactional_id: str) -> bool:
        return not self.loading or self.partition_for(transactional_id) not in self.loading

    def coordinator_epoch(self, transactional_id: str) -> int:
        """The coordinator epoch markers for this id carry: the leader epoch its partition
        was loaded at (0 before the topic exists, as a new partition's)."""
        return self._epochs.get(self.partition_for(transactional_id), 0)

    def validate_transaction_timeout_ms(self, txn_timeout_ms: int) -> bool:
        """Whether InitProducerId may use this timeout (0 < t <=
        ``transaction.max.timeout.ms``); otherwise INVALID_TRANSACTION_TIMEOUT."""
        return 0 < txn_timeout_ms <= self.config().transaction_max_timeout_ms

    # ===================================================================== cache

    def get(self, transactional_id: str) -> TransactionMetadata | None:
        """The id's metadata, or None if the coordinator has none. Raises as
        ``check_loaded``."""
        self.check_loaded(transactional_id)
        return self._transactions.get(transactional_id)

    def put_if_absent(self, metadata: TransactionMetadata) -> TransactionMetadata:
        """Cache ``metadata`` unless its id already has one; returns the cached one (Kafka's
        putTransactionStateIfNotExists). Nothing is written: the first transition is. Raises
        as ``check_loaded``."""
        self.check_loaded(metadata.transactional_id)
        return self._transactions.setdefault(metadata.transactional_id, metadata)

    def all(self) -> list[TransactionMetadata]:
        """Every transactional id's metadata but those being removed (Dead), for
        ListTransactions. Raises CoordinatorLoadInProgressError while any partition loads
        (ListTransactions answers that as a whole)."""
        if self.loading:
            raise CoordinatorLoadInProgressError(
                f"the coordinator is loading {len(self.loading)} partition(s) of "
                f"{TRANSACTION_STATE_TOPIC}")
        return [m for m in self._transactions.values() if m.state != TransactionState.DEAD]

    def loaded_transactions(self) -> list[TransactionMetadata]:
        """The metadata of every transactional id of the partitions loaded so far (the
        broker's metrics; never raises, unlike ``all``)."""
        return list(self._loaded_values())

    def _loaded_values(self) -> Iterable[TransactionMetadata]:
        for m in self._transactions.values():
            if self.is_loaded(m.transactional_id):
                yield m

    def pending_completions(self) -> list[TransactionMetadata]:
        """Transactions in PrepareCommit or PrepareAbort whose markers nobody is writing (no
        pending transition): after a restart, those the shutdown cut short. The coordinator
        completes each (``prepare_complete``, markers, ``append_transition``)."""
        return [m for m in self._loaded_values()
                if m.state in _PREPARED and m.pending_state is None]

    def timed_out(self, now_ms: int) -> list[TransactionMetadata]:
        """Ongoing transactions older than their timeout, with no transition pending (Kafka's
        timedOutTransactions): the coordinator aborts them and fences their producers."""
        return [m for m in self._loaded_values()
                if m.state == TransactionState.ONGOING and m.pending_state is None
                and m.txn_start_timestamp + m.txn_timeout_ms < now_ms]

    def expired_ids(self, now_ms: int) -> list[str]:
        """Ids idle (no update) for ``transactional.id.expiration.ms`` in Empty,
        CompleteCommit or CompleteAbort, with no transition pending (Kafka's
        shouldExpire)."""
        horizon = now_ms - self.config().transactional_id_expiration_ms
        return [m.transactional_id for m in self._loaded_values()
                if m.pending_state is None and m.state.is_expiration_allowed
                and m.txn_last_update_timestamp <= horizon]

    # ==================================================================== writes

    def _append(self, p: int, records: Sequence[tuple[bytes, bytes | None]]) -> None:
        """Append ``records`` (key, value) as one uncompressed batch to partition ``p`` as
        leader (creating the topic first if need be). Raises what the append raises."""
        self.ensure_topic()
        self._end_offsets[p] = append_records(
            self.partitions, TopicPartition(TRANSACTION_STATE_TOPIC, p), records,
            self.time.milliseconds())

    def append_transition(self, metadata: TransactionMetadata, transit: TxnTransitMetadata,
                          *, retry_on_error: Callable[[KafkaError], bool] | None = None
                          ) -> None:
        """Write ``transit`` (prepared on ``metadata``, the cached metadata of its id) to the
        log, then apply it (``metadata.complete_transition``); the caller awaits
        ``wait_committed`` before it answers.

        On failure the pending state is cleared, unless ``retry_on_error(error)`` says the
        caller retries the same transit (Kafka's retryOnError, for marker completion), and
        the mapped error is raised (``append_error``: COORDINATOR_NOT_AVAILABLE,
        NOT_COORDINATOR, UNKNOWN_SERVER_ERROR, ...); COORDINATOR_LOAD_IN_PROGRESS /
        NOT_COORDINATOR as ``check_loaded``, and NOT_COORDINATOR if ``metadata`` is no longer
        the cached one. Raises ValueError for a Dead transit (``remove`` writes those) and
        IllegalTransitionError (after a successful append) if the transit does not fit."""
        txn_id = metadata.transactional_id
        if transit.txn_state == TransactionState.DEAD:
            raise ValueError(f"transactional id {txn_id}: a Dead transition is a removal; "
                             f"use remove()")
        try:
            self.check_loaded(txn_id)
            if self._transactions.get(txn_id) is not metadata:
                raise NotCoordinatorError(f"transactional id {txn_id} is no longer cached by "
                                          f"this coordinator")
            value = transaction_log_value(transit.to_record())
            self._append(self.partition_for(txn_id), [(transaction_log_key(txn_id), value)])
        except Exception as e:
            error = append_error(e)
            if retry_on_error is None or not retry_on_error(error):
                metadata.pending_state = None
            log.info("Transactional id %s: writing %s failed: %s", txn_id, transit, error)
            raise error from e
        if self._transactions.get(txn_id) is not metadata:     # removed meanwhile (shutdown)
            raise NotCoordinatorError(f"transactional id {txn_id} is no longer cached by this "
                                      f"coordinator")
        metadata.complete_transition(transit)

    def remove(self, transactional_id: str) -> None:
        """Remove an idle id: prepare Dead, write its tombstone, forget it. Nothing happens
        if the id is unknown.

        Raises as ``check_loaded``; ConcurrentTransactionsError while a transition is
        pending; IllegalTransitionError outside Empty, CompleteCommit and CompleteAbort; the
        mapped append error (``append_error``; the pending state is cleared) when the
        tombstone cannot be written."""
        metadata = self.get(transactional_id)
        if metadata is None:
            return
        metadata.prepare_dead()
        try:
            self._append(self.partition_for(transactional_id),
                         [(transaction_log_key(transactional_id), None)])
        except Exception as e:
            metadata.pending_state = None
            raise append_error(e) from e
        if self._transactions.get(transactional_id) is metadata:
            del self._transactions[transactional_id]

    def remove_expired(self, now_ms: int) -> list[str]:
        """Remove every expired id (``expired_ids``), a tombstone batch per partition (each
        within the topic's max.message.bytes). Returns the ids removed; failures are
        logged, and those ids stay for the next round."""
        by_partition: dict[int, list[TransactionMetadata]] = {}
        for txn_id in self.expired_ids(now_ms):
            metadata = self._transactions[txn_id]
            by_partition.setdefault(self.partition_for(txn_id), []).append(metadata)
        removed: list[str] = []
        for p, expiring in sorted(by_partition.items()):
            for chunk in self._chunks(p, expiring):
                removed.extend(self._write_tombstones(p, chunk))
        if removed:
            log.info("Removed %d expired transactional id(s)", len(removed))
        return removed

    def _chunks(self, p: int, expiring: list[TransactionMetadata]
                ) -> Iterable[list[tuple[TransactionMetadata, bytes]]]:
        # The topic's max.message.bytes: the broker's message.max.bytes, as the topic is
        # created without an override.
        budget = self.config().message_max_bytes - BATCH_HEADER_SIZE
        chunk: list[tuple[TransactionMetadata, bytes]] = []
        size = 0
        for metadata in expiring:
            key = transaction_log_key(metadata.transactional_id)
            cost = len(key) + _RECORD_OVERHEAD
            if chunk and size + cost > budget:
                yield chunk
                chunk, size = [], 0
            chunk.append((metadata, key))
            size += cost
        if chunk:
            yield chunk

    def _write_tombstones(self, p: int, chunk: list[tuple[TransactionMetadata, bytes]]
                          ) -> list[str]:
        prepared = []
        for metadata, key in chunk:
            try:
                metadata.prepare_dead()
            except KafkaError as e:       # changed since expired_ids looked at it
                log.warning("Not removing transactional id %s: %s",
                            metadata.transactional_id, e)
                continue
            prepared.append((metadata, key))
        chunk = prepared
        if not chunk:
            return []
        try:
            self._append(p, [(key, None) for _metadata, key in chunk])
        except Exception as e:
            for metadata, _key in chunk:
                metadata.pending_state = None
            log.warning("Could not remove %d expired transactional id(s) from partition %d: "
                        "%s", len(chunk), p, append_error(e))
            return []
        removed = []
        for metadata, _key in chunk:
            txn_id = metadata.transactional_id
            if self._transactions.get(txn_id) is metadata and \
                    metadata.pending_state == TransactionState.DEAD:
                del self._transactions[txn_id]
                removed.append(txn_id)
        return removed

    async def wait_committed(self, transactional_id: str) -> None:
        """Return once this broker's appends to the id's partition are committed (the
        log's flush policy, on a cluster the high watermark). Raises the mapped error
        (``append_error``) when they cannot be."""
        p = self.partition_for(transactional_id)
        end = self._end_offsets.get(p)
        if end is None:
            return
        try:
            await self.partitions.wait_committed(TopicPartition(TRANSACTION_STATE_TOPIC, p),
                                                 end)
        except Exception as e:
            raise append_error(e) from e

    # ================================================================== loading

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Load the partitions the broker elects this manager for (in this task's nursery),
        and remove expired ids periodically."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            for p, epoch in self._queued:
                nursery.start_soon(self._load, p, epoch)
            self._queued.clear()
            task_status.started()
            while True:
                cfg = self.config()
                await trio.sleep(
                    cfg.transaction_remove_expired_transaction_cleanup_interval_ms / 1000)
                try:
                    self.remove_expired(self.time.milliseconds())
                except Exception:
                    log.exception("Removing expired transactional ids failed")

    def on_become_leader(self, partition: int, leader_epoch: int) -> None:
        """This broker leads ``partition`` at ``leader_epoch``: load its ids (at once when
        its log is empty, else in the background). The same or an older epoch than the one
        held is ignored; a newer one drops what is held and reloads."""
        if self._shut_down:
            return
        current = self._epochs.get(partition)
        if current is not None:
            if leader_epoch <= current:
                return
            self._drop(partition)
        # Not held before: the ids cached for it, if any, were cached before the topic
        # existed (its creation elects this manager), and are kept.
        self._epochs[partition] = leader_epoch
        tp = TopicPartition(TRANSACTION_STATE_TOPIC, partition)
        if self.partitions.log_end_offset(tp) <= self.partitions.log_start_offset(tp):
            return                              # nothing to read
        self.loading.add(partition)
        if self._nursery is None:
            self._queued.append((partition, leader_epoch))
        else:
            self._nursery.start_soon(self._load, partition, leader_epoch)

    def on_resign(self, partition: int, leader_epoch: int | None) -> None:
        """This broker no longer leads ``partition``: forget its ids (a load under way is
        abandoned). A resignation from an epoch older than the one loaded is ignored."""
        current = self._epochs.get(partition)
        if current is not None and leader_epoch is not None and leader_epoch < current:
            return
        self._drop(partition)
        if TRANSACTION_STATE_TOPIC not in self.partitions.topics():
            # The topic was deleted: the next FindCoordinator creates it again, maybe with
            # another partition count.
            self._topic_partitions = None

    def _drop(self, partition: int) -> None:
        dropped = [txn_id for txn_id in self._transactions
                   if self.partition_for(txn_id) == partition]
        for txn_id in dropped:
            del self._transactions[txn_id]
        self.loading.discard(partition)
        self._epochs.pop(partition, None)
        self._end_offsets.pop(partition, None)
        if dropped:
            log.info("Unloaded %d transactional id(s) of partition %d of %s", len(dropped),
                     partition, TRANSACTION_STATE_TOPIC)

    def _current(self, partition: int, leader_epoch: int) -> bool:
        """Whether the load of ``partition`` at ``leader_epoch`` is still wanted."""
        return partition in self.loading and self._epochs.get(partition) == leader_epoch

    async def _load(self, partition: int, leader_epoch: int) -> None:
        tp = TopicPartition(TRANSACTION_STATE_TOPIC, partition)
        started = self.time.monotonic()
        loaded: dict[str, TransactionMetadata] = {}
        try:
            start = self.partitions.log_start_offset(tp)
            end = self.partitions.log_end_offset(tp)
            async with aclosing(read_batches(self.partitions, tp)) as batches:
                async for batch in batches:
                    if not self._current(partition, leader_epoch):
                        return                  # resigned or re-elected meanwhile
                    if batch.is_control:
                        continue
                    for r in batch.records():
                        if start <= r.offset < end:
                            self._apply(tp, r.offset, r.key, r.value, loaded)
        except Exception as e:
            # The partition went away under the load (not leader any more): its ids answer
            # NOT_COORDINATOR until the broker elects this manager again.
            if self._current(partition, leader_epoch):
                self.loading.discard(partition)
                self._epochs.pop(partition, None)
            log.warning("Loading %s at epoch %d failed: %s", tp, leader_epoch, e)
            return
        if not self._current(partition, leader_epoch):
            return
        self._transactions.update(loaded)
        self.loading.discard(partition)
        log.info("Loaded %d transactional id(s) from %s (epoch %d) in %.0f ms", len(loaded),
                 tp, leader_epoch, (self.time.monotonic() - started) * 1000)
        if self.on_loaded is not None:
            self.on_loaded(partition)

    @staticmethod
    def _apply(tp: TopicPartition, offset: int, key: bytes | None, value: bytes | None,
               loaded: dict[str, TransactionMetadata]) -> None:
        if key is None:
            log.error("%s: skipping the record at offset %d: it has no key", tp, offset)
            return
        try:
            k = read_key(key)
            if not isinstance(k, TransactionKey):
                log.warning("%s: skipping the record at offset %d: unknown key version %d",
                            tp, offset, k.version)
                return
            if value is None:
                loaded.pop(k.transactional_id, None)
            else:
                loaded[k.transactional_id] = TransactionMetadata.from_record(
                    k.transactional_id, read_transaction_log_value(value))
        except KafkaError as e:
            log.error("%s: skipping the unreadable record at offset %d: %s", tp, offset, e)

    def shutdown(self) -> None:
        """Stop coordinating (Kafka's shutdown): every later call answers NOT_COORDINATOR,
        the cache is dropped."""
        self._shut_down = True
        self.loading.clear()
        self._epochs.clear()
        self._transactions.clear()
