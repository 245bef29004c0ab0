"""TransactionStateManager: the transactions' durable state in the internal topic
``__transaction_state``.

Theory of operation
-------------------
Kafka's ``TransactionStateManager`` for one broker that leads every partition of the topic
(the model is :class:`~kafkapy.coordinator.group.group_metadata_manager.GroupMetadataManager`):

- the topic is created (compacted, uncompressed, ``transaction.state.log.num.partitions``
  partitions, ``transaction.state.log.segment.bytes``) the first time a transition is
  written, or earlier through ``ensure_topic`` (FindCoordinator for a transactional id);
  ``transaction.state.log.replication.factor`` and ``transaction.state.log.min.isr`` are
  clamped to the live brokers (one), or no write could ever succeed;
- a transactional id lives in partition ``abs(javaHash(id)) % partitions`` (Kafka's
  ``partitionFor``), so its records stay in order in one log;
- one ``TransactionMetadata`` per transactional id is kept in memory (the cache). A change is
  prepared on the metadata (``prepare_*``: ``pending_state`` set), written here as one record
  with acks=all semantics (``append_transition``), and applied to the metadata only once the
  append succeeded (``complete_transition``); a failed append clears the pending state and
  raises the error Kafka answers clients with. Expired ids get a tombstone (``remove``);
- at startup every existing partition is read back from its log start to its high watermark
  in the background (later records win, tombstones remove), while calls for its ids raise
  COORDINATOR_LOAD_IN_PROGRESS; ``loaded`` is set when every partition is in. Transactions
  loaded in PrepareCommit or PrepareAbort had their markers cut short by the shutdown: the
  coordinator finds them with ``pending_completions`` and writes the markers again;
- every ``transaction.remove.expired.transaction.cleanup.interval.ms`` the ids idle in Empty,
  CompleteCommit or CompleteAbort for ``transactional.id.expiration.ms`` are removed
  (Kafka's ``removeExpiredTransactionalIds``, which this manager owns in Kafka too).
  Aborting timed-out transactions is the coordinator's: it asks ``timed_out``.

Records that cannot be read while loading (a key that is not a transaction key, a corrupt
value) are logged and skipped; Kafka skips unknown keys too, but stops loading the partition
at a corrupt record.

Who calls what: the TransactionCoordinator (request handlers) on the broker's event loop;
everything here is synchronous except ``run`` and ``flush_if_due``, so a prepare, its append
and its completion happen without another task in between. ``run`` is started by
``KafkaServer`` in its nursery.

The constructor takes the ``KafkaServer`` and reads through it, at each use: ``config``
(the live one: dynamic updates apply), ``metadata_store`` (does the topic exist, how many
partitions), ``admin`` (creates the topic), ``replica_manager`` (the partitions, the fetch
purgatory to wake consumers of the topic) and ``log_manager`` (the flush policy).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.internal_topic import (
    append_records,
    flush_if_due,
    partition_for,
    read_batches,
)
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

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer
    from kafkapy.server.partition import Partition

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


def _now_ms() -> int:
    return int(time.time() * 1000)


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
    """The cache of every transactional id's metadata and its log, ``__transaction_state``.

    ``TransactionStateManager(server)``: ``server`` is the KafkaServer whose ``config``,
    ``metadata_store``, ``admin``, ``replica_manager`` and ``log_manager`` it uses (see the
    module). Start ``run`` in the server's nursery before requests arrive.
    """

    def __init__(self, server: KafkaServer) -> None:
        self.server = server
        self.loading: set[int] = set()
        self.loaded = trio.Event()
        self._transactions: dict[str, TransactionMetadata] = {}
        self._shut_down = False

    # ================================================================ partitions

    @property
    def num_partitions(self) -> int:
        record = self.server.metadata_store.topics.get(TRANSACTION_STATE_TOPIC)
        if record is not None:
            return record.partitions
        return self.server.config.transaction_state_log_num_partitions

    def partition_for(self, transactional_id: str) -> int:
        """The ``__transaction_state`` partition of ``transactional_id`` (Kafka's
        ``Utils.abs(hashCode) % partitions``: abs of Integer.MIN_VALUE is 0)."""
        return partition_for(transactional_id, self.num_partitions)

    def transaction_topic_configs(self) -> dict[str, str]:
        """The topic configs Kafka enforces on ``__transaction_state``
        (``transactionTopicConfigs``), min.insync.replicas clamped to the replicas."""
        cfg = self.server.config
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
        FindCoordinator for a transactional id). Raises what topic creation raises
        (KafkaError subclasses, OSError when the metadata cannot be written)."""
        if TRANSACTION_STATE_TOPIC in self.server.metadata_store.topics:
            return
        cfg = self.server.config
        self.server.admin.create_topic(
            TRANSACTION_STATE_TOPIC, cfg.transaction_state_log_num_partitions,
            min(cfg.transaction_state_log_replication_factor, _LIVE_BROKERS),
            configs=self.transaction_topic_configs())

    def check_loaded(self, transactional_id: str) -> None:
        """Raises CoordinatorLoadInProgressError while the id's partition loads,
        NotCoordinatorError once the manager is shut down or when this broker does not host
        the id's partition of an existing topic."""
        if self._shut_down:
            raise NotCoordinatorError("the transaction coordinator is shutting down")
        p = self.partition_for(transactional_id)
        if p in self.loading:
            raise CoordinatorLoadInProgressError(
                f"the coordinator is loading the transactions of partition {p} of "
                f"{TRANSACTION_STATE_TOPIC}")
        if TRANSACTION_STATE_TOPIC in self.server.metadata_store.topics and \
                TopicPartition(TRANSACTION_STATE_TOPIC, p) not in \
                self.server.replica_manager.partitions:
            raise NotCoordinatorError(f"this broker does not lead partition {p} of "
                                      f"{TRANSACTION_STATE_TOPIC}")

    def is_loaded(self, transactional_id: str) -> bool:
        return not self.loading or self.partition_for(transactional_id) not in self.loading

    def coordinator_epoch(self, transactional_id: str) -> int:
        """The coordinator epoch markers for this id carry: the leader epoch of its partition
        (0 before the topic exists, as a new partition's)."""
        partition = self.server.replica_manager.partitions.get(
            TopicPartition(TRANSACTION_STATE_TOPIC, self.partition_for(transactional_id)))
        return 0 if partition is None else partition.leader_epoch

    def validate_transaction_timeout_ms(self, txn_timeout_ms: int) -> bool:
        """Whether InitProducerId may use this timeout (0 < t <=
        ``transaction.max.timeout.ms``); otherwise INVALID_TRANSACTION_TIMEOUT."""
        return 0 < txn_timeout_ms <= self.server.config.transaction_max_timeout_ms

    def _partition(self, p: int) -> Partition:
        self.ensure_topic()
        return self.server.replica_manager.get_partition(
            TopicPartition(TRANSACTION_STATE_TOPIC, p))

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
        horizon = now_ms - self.server.config.transactional_id_expiration_ms
        return [m.transactional_id for m in self._loaded_values()
                if m.pending_state is None and m.state.is_expiration_allowed
                and m.txn_last_update_timestamp <= horizon]

    # ==================================================================== writes

    def _append(self, p: int, records: Sequence[tuple[bytes, bytes | None]]) -> None:
        """Append ``records`` (key, value) as one uncompressed batch to partition ``p`` as
        leader, acks=all. Raises what the append raises."""
        append_records(self.server, self._partition(p), records)

    def append_transition(self, metadata: TransactionMetadata, transit: TxnTransitMetadata,
                          *, retry_on_error: Callable[[KafkaError], bool] | None = None
                          ) -> None:
        """Write ``transit`` (prepared on ``metadata``, the cached metadata of its id) to the
        log, then apply it (``metadata.complete_transition``).

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
        partition = self.server.replica_manager.partitions.get(
            TopicPartition(TRANSACTION_STATE_TOPIC, p))
        budget = (partition.log.config.max_message_bytes if partition is not None
                  else 1 << 20) - BATCH_HEADER_SIZE
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

    async def flush_if_due(self, transactional_id: str) -> None:
        """The log's flush policy (flush.messages / flush.ms) after a write, before the
        answer."""
        await flush_if_due(self.server, TopicPartition(TRANSACTION_STATE_TOPIC,
                                                       self.partition_for(transactional_id)))

    # ================================================================== loading

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Load every existing partition in the background (``loading`` is set before
        ``started``), set ``loaded``, then remove expired ids periodically."""
        record = self.server.metadata_store.topics.get(TRANSACTION_STATE_TOPIC)
        if record is not None:
            self.loading = set(range(record.partitions))
        task_status.started()
        if record is not None:
            started = time.monotonic()
            for p in range(record.partitions):
                try:
                    await self._load_partition(p)
                finally:
                    self.loading.discard(p)
            log.info("Loaded %d transactional id(s) from %d partition(s) of %s in %.0f ms",
                     len(self._transactions), record.partitions, TRANSACTION_STATE_TOPIC,
                     (time.monotonic() - started) * 1000)
        self.loaded.set()
        interval = \
            self.server.config.transaction_remove_expired_transaction_cleanup_interval_ms / 1000
        while True:
            await trio.sleep(interval)
            try:
                self.remove_expired(_now_ms())
            except Exception:
                log.exception("Removing expired transactional ids failed")

    async def _load_partition(self, p: int) -> None:
        tp = TopicPartition(TRANSACTION_STATE_TOPIC, p)
        partition = self.server.replica_manager.partitions.get(tp)
        if partition is None:
            return
        loaded: dict[str, TransactionMetadata] = {}
        start = partition.log_start_offset
        async for batch in read_batches(partition):
            if batch.is_control:
                continue
            for r in batch.records():
                if r.offset >= start:
                    self._apply(tp, r.offset, r.key, r.value, loaded)
        self._transactions.update(loaded)

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
        self._transactions.clear()
