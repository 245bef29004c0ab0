"""TransactionState, TransactionMetadata and TxnTransitMetadata: one transactional id's state.

Theory of operation
-------------------
Kafka's ``TransactionMetadata`` (``kafka.coordinator.transaction``, Kafka 4.0), pure logic: no
I/O, no clock, no tasks. Every change of a transactional id's state happens in two steps, so
that memory never gets ahead of the log:

1. a ``prepare_*`` method checks the transition against the current state and returns the
   target as an immutable ``TxnTransitMetadata``; it sets ``pending_state`` to the target
   state and changes nothing else;
2. the coordinator appends the transit to ``__transaction_state``
   (:meth:`~kafkapy.coordinator.transaction.transaction_state_manager.TransactionStateManager.append_transition`);
   once that append succeeds, ``complete_transition(transit)`` validates the transit against
   the current state once more and applies it (then ``pending_state`` is None again); if the
   append fails, the manager clears ``pending_state`` and nothing changed.

While ``pending_state`` is set no other transition may be prepared: the coordinator answers
CONCURRENT_TRANSACTIONS, and a ``prepare_*`` call raises ConcurrentTransactionsError.

States (``TransactionState``, the INT8 id stored in the log) and the states each may be
entered from, as the protocol reference (section 6.3) and Kafka's ``validPreviousStates``
for classic (transaction version 0/1) clients give them::

    0 Empty              <- Empty, CompleteCommit, CompleteAbort   (InitProducerId)
    1 Ongoing            <- Ongoing, Empty, CompleteCommit, CompleteAbort   (AddPartitions)
    2 PrepareCommit      <- Ongoing                                 (EndTxn commit)
    3 PrepareAbort       <- Ongoing, PrepareEpochFence              (EndTxn abort, timeouts)
    4 CompleteCommit     <- PrepareCommit                           (markers written)
    5 CompleteAbort      <- PrepareAbort                            (markers written)
    6 Dead               <- Empty, CompleteAbort, CompleteCommit    (id expired; a tombstone)
    7 PrepareEpochFence  <- Ongoing                                 (fencing a producer)

PrepareEpochFence and Dead are never completed: a fence is turned into PrepareAbort by the
coordinator (Kafka's endTransaction clears the pending fence, adopts the bumped epoch and
prepares the abort), and a Dead transition ends with the id's removal, not with a state.

Not implemented: transaction version 2 (KIP-890 part 2: an epoch bump on every EndTxn, abort
from Empty/Complete*, producer id rotation through NextProducerId). Transits made here carry
client transaction version 0, as Kafka 4.0 records a classic client's requests;
``previous_producer_id`` / ``next_producer_id`` are kept (and read from the log) but only the
former changes, as in Kafka for classic clients.

One deliberate difference from Kafka: completing a transition to Empty also resets the start
time to the -1 it writes (Kafka keeps the finished transaction's start time in memory), so the
metadata always equal what a reload of the log gives.

Errors: an illegal transition is a coordinator bug; it raises ``IllegalTransitionError``, an
UNKNOWN_SERVER_ERROR, as Kafka answers its IllegalStateException. A fenced producer asking for
an epoch bump gets ProducerFencedError. Bad arguments (a negative producer id or epoch, a
non-prepare state given to ``prepare_abort_or_commit``) raise ValueError.

A TransactionMetadata belongs to the broker's event loop; nothing here awaits, so a prepare,
the append and the completion can run without another task in between.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import NoReturn

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.transaction.records import TransactionLogValue
from kafkapy.errors import ConcurrentTransactionsError, ProducerFencedError, UnknownServerError

__all__ = [
    "MAX_PRODUCER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "IllegalTransitionError",
    "TransactionMetadata",
    "TransactionState",
    "TxnTransitMetadata",
    "is_epoch_exhausted",
]

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
MAX_PRODUCER_EPOCH = 32767          # Short.MaxValue
# The client transaction version of a classic client (Kafka's TransactionVersion.TV_0).
_CLASSIC_CLIENT_TRANSACTION_VERSION = 0


class IllegalTransitionError(UnknownServerError):
    """A transition the state machine does not allow, or a completion that does not match its
    preparation: a coordinator bug (Kafka's IllegalStateException)."""


class TransactionState(enum.IntEnum):
    """A transaction's state; the value is the id stored in ``__transaction_state``."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """Kafka's name ("PrepareCommit"), as DescribeTransactions and ListTransactions show
        it."""
        return _KAFKA_NAMES[self]

    @property
    def valid_previous_states(self) -> frozenset[TransactionState]:
        return _VALID_PREVIOUS[self]

    @property
    def is_expiration_allowed(self) -> bool:
        """Whether an idle transactional id in this state may expire
        (``transactional.id.expiration.ms``)."""
        return self in (TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT,
                        TransactionState.COMPLETE_ABORT)

    @classmethod
    def from_kafka_name(cls, name: str) -> TransactionState | None:
        """The state Kafka calls ``name`` (a ListTransactions filter), or None."""
        return _BY_KAFKA_NAME.get(name)


_S = TransactionState
_KAFKA_NAMES = {
    _S.EMPTY: "Empty", _S.ONGOING: "Ongoing", _S.PREPARE_COMMIT: "PrepareCommit",
    _S.PREPARE_ABORT: "PrepareAbort", _S.COMPLETE_COMMIT: "CompleteCommit",
    _S.COMPLETE_ABORT: "CompleteAbort", _S.DEAD: "Dead",
    _S.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
_BY_KAFKA_NAME = {name: state for state, name in _KAFKA_NAMES.items()}
_VALID_PREVIOUS: dict[TransactionState, frozenset[TransactionState]] = {
    _S.EMPTY: frozenset({_S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.ONGOING: frozenset({_S.ONGOING, _S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.PREPARE_COMMIT: frozenset({_S.ONGOING}),
    _S.PREPARE_ABORT: frozenset({_S.ONGOING, _S.PREPARE_EPOCH_FENCE}),
    _S.COMPLETE_COMMIT: frozenset({_S.PREPARE_COMMIT}),
    _S.COMPLETE_ABORT: frozenset({_S.PREPARE_ABORT}),
    _S.DEAD: frozenset({_S.EMPTY, _S.COMPLETE_ABORT, _S.COMPLETE_COMMIT}),
    _S.PREPARE_EPOCH_FENCE: frozenset({_S.ONGOING}),
}
_IN_TRANSACTION = frozenset({_S.ONGOING, _S.PREPARE_ABORT, _S.PREPARE_COMMIT})


def is_epoch_exhausted(producer_epoch: int) -> bool:
    """Whether no epoch may be handed out after ``producer_epoch``: clients never get
    Short.MaxValue, so that the coordinator can always fence the last one."""
    return producer_epoch >= MAX_PRODUCER_EPOCH - 1


def _frozen_partitions(value: Iterable[TopicPartition]) -> frozenset[TopicPartition]:
    return frozenset(value)


@attrs.frozen
class TxnTransitMetadata:
    """The target of a prepared transition (Kafka's TxnTransitMetadata): what is appended to
    the log, then applied by ``TransactionMetadata.complete_transition``.
    ``previous_producer_id`` is the producer id at preparation time."""

    producer_id: int
    previous_producer_id: int
    next_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    txn_state: TransactionState
    topic_partitions: frozenset[TopicPartition] = attrs.field(converter=_frozen_partitions)
    txn_start_timestamp: int
    txn_last_update_timestamp: int
    client_transaction_version: int = _CLASSIC_CLIENT_TRANSACTION_VERSION

    def to_record(self) -> TransactionLogValue:
        """The log value Kafka writes for this transit: producer id, epoch, timeout, state,
        partitions, timestamps and client version (never the previous / next producer ids,
        nor the last epoch, which the format does not have)."""
        return TransactionLogValue(
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            txn_timeout_ms=self.txn_timeout_ms,
            state=int(self.txn_state),
            topic_partitions=self.topic_partitions,
            txn_last_update_timestamp=self.txn_last_update_timestamp,
            txn_start_timestamp=self.txn_start_timestamp,
            client_transaction_version=self.client_transaction_version,
        )


def _partition_set(value: Iterable[TopicPartition]) -> set[TopicPartition]:
    return set(value)


@attrs.define(eq=True)
class TransactionMetadata:
    """One transactional id's state (Kafka's TransactionMetadata).

    ``producer_epoch`` is -1 until the first InitProducerId completes; ``last_producer_epoch``
    is the epoch before the last bump (KIP-360 retries), -1 if none; ``previous_producer_id``
    is the producer id before the last transition to Empty; timestamps are epoch ms, -1 for
    none (``txn_start_timestamp``: when the first partition of the current transaction was
    added). ``pending_state`` is the target of a prepared, not yet completed transition.

    Equality is Kafka's: the ids and every field the log keeps (plus the last epoch), not the
    pending state, nor the previous / next producer ids.
    """

    transactional_id: str
    producer_id: int
    producer_epoch: int
    txn_timeout_ms: int
    state: TransactionState = TransactionState.EMPTY
    topic_partitions: set[TopicPartition] = attrs.field(factory=set, converter=_partition_set)
    txn_start_timestamp: int = -1
    txn_last_update_timestamp: int = -1
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    previous_producer_id: int = attrs.field(default=NO_PRODUCER_ID, eq=False)
    next_producer_id: int = attrs.field(default=NO_PRODUCER_ID, eq=False)
    client_transaction_version: int = _CLASSIC_CLIENT_TRANSACTION_VERSION
    pending_state: TransactionState | None = attrs.field(default=None, eq=False)
    # A fence whose bumped epoch may not have reached the log: the next fence does not bump
    # again (the bumped epoch was never given to a client).
    has_failed_epoch_fence: bool = attrs.field(default=False, eq=False)

    @classmethod
    def from_record(cls, transactional_id: str, value: TransactionLogValue
                    ) -> TransactionMetadata:
        """The state a loaded log value describes (Kafka's readTxnRecordValue): the last
        producer epoch is unknown (-1), an Empty value has no partitions."""
        state = TransactionState(value.state)
        return cls(
            transactional_id=transactional_id,
            producer_id=value.producer_id,
            producer_epoch=value.producer_epoch,
            txn_timeout_ms=value.txn_timeout_ms,
            state=state,
            topic_partitions=() if state == TransactionState.EMPTY else value.topic_partitions,
            txn_start_timestamp=value.txn_start_timestamp,
            txn_last_update_timestamp=value.txn_last_update_timestamp,
            previous_producer_id=value.previous_producer_id,
            next_producer_id=value.next_producer_id,
            client_transaction_version=value.client_transaction_version,
        )

    # ================================================================== queries

    @property
    def pending_transition_in_progress(self) -> bool:
        return self.pending_state is not None

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        """Whether the next InitProducerId needs a new producer id
        (``prepare_producer_id_rotation``) rather than an epoch bump."""
        return is_epoch_exhausted(self.producer_epoch)

    @property
    def has_pending_transaction(self) -> bool:
        """Whether a transaction is open or completing (Ongoing, PrepareCommit,
        PrepareAbort)."""
        return self.state in _IN_TRANSACTION

    # ================================================================ partitions

    def add_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        self.topic_partitions.update(partitions)

    def remove_partition(self, tp: TopicPartition) -> None:
        """Forget ``tp`` once its marker is written. Raises IllegalTransitionError unless the
        transaction is in PrepareCommit or PrepareAbort."""
        if self.state not in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
            raise IllegalTransitionError(
                f"transactional id {self.transactional_id}: removing {tp} whose marker was "
                f"written, in state {self.state.kafka_name} (pending "
                f"{self._pending_name()}): markers are written only in PrepareCommit or "
                f"PrepareAbort")
        self.topic_partitions.discard(tp)

    # ================================================================ transitions

    def prepare_no_transit(self) -> TxnTransitMetadata:
        """The current state as a transit, without a pending state (Kafka uses it to resend
        markers and in tests)."""
        return TxnTransitMetadata(
            producer_id=self.producer_id, previous_producer_id=self.previous_producer_id,
            next_producer_id=self.next_producer_id, producer_epoch=self.producer_epoch,
            last_producer_epoch=self.last_producer_epoch, txn_timeout_ms=self.txn_timeout_ms,
            txn_state=self.state, topic_partitions=self.topic_partitions,
            txn_start_timestamp=self.txn_start_timestamp,
            txn_last_update_timestamp=self.txn_last_update_timestamp,
            client_transaction_version=self.client_transaction_version)

    def prepare_fence_producer_epoch(self) -> TxnTransitMetadata:
        """Ongoing -> PrepareEpochFence with the epoch bumped (not again after a failed
        fence), to abort the transaction on the producer's behalf and fence it.

        Raises IllegalTransitionError at epoch Short.MaxValue or outside Ongoing."""
        if self.producer_epoch == MAX_PRODUCER_EPOCH:
            raise IllegalTransitionError(
                f"transactional id {self.transactional_id}: cannot fence producer "
                f"{self.producer_id} at epoch {MAX_PRODUCER_EPOCH}: the epoch would overflow")
        bumped = self.producer_epoch if self.has_failed_epoch_fence else self.producer_epoch + 1
        return self._prepare(TransactionState.PREPARE_EPOCH_FENCE, self.producer_id, bumped,
                             NO_PRODUCER_EPOCH, self.txn_timeout_ms, self.topic_partitions,
                             self.txn_start_timestamp, self.txn_last_update_timestamp,
                             self.client_transaction_version)

    def prepare_increment_producer_epoch(self, new_txn_timeout_ms: int,
                                         expected_producer_epoch: int | None,
                                         update_timestamp: int) -> TxnTransitMetadata:
        """InitProducerId for a known id: -> Empty with the epoch bumped (0 for a new
        transactional id, whose epoch is -1).

        ``expected_producer_epoch`` (InitProducerId v3+, KIP-360): None bumps and forgets the
        last epoch; the current epoch (or any, while there is none) bumps and remembers it as
        the last; the last epoch is a retry of a bump that succeeded, answered with the
        current epoch unchanged.

        Raises ProducerFencedError (no pending state set) when the expected epoch is neither,
        IllegalTransitionError when the epoch is exhausted (rotate the producer id instead)
        or from a state that cannot go to Empty."""
        if self.is_producer_epoch_exhausted:
            raise IllegalTransitionError(
                f"transactional id {self.transactional_id}: producer {self.producer_id} has "
                f"no epochs left after {self.producer_epoch}; rotate the producer id")
        bumped = self.producer_epoch + 1
        if expected_producer_epoch is None:
            epoch, last_epoch = bumped, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or \
                expected_producer_epoch == self.producer_epoch:
            epoch, last_epoch = bumped, self.producer_epoch
        elif expected_producer_epoch == self.last_producer_epoch:
            epoch, last_epoch = self.producer_epoch, self.last_producer_epoch
        else:
            raise ProducerFencedError(
                f"transactional id {self.transactional_id}: expected producer epoch "
                f"{expected_producer_epoch} is neither the current epoch "
                f"{self.producer_epoch} nor the previous one {self.last_producer_epoch}")
        return self._prepare(TransactionState.EMPTY, self.producer_id, epoch, last_epoch,
                             new_txn_timeout_ms, (), -1, update_timestamp,
                             self.client_transaction_version)

    def prepare_producer_id_rotation(self, new_producer_id: int, new_txn_timeout_ms: int,
                                     update_timestamp: int, record_last_epoch: bool
                                     ) -> TxnTransitMetadata:
        """InitProducerId when the epoch is exhausted (or after a KIP-360 bump of a
        producer that has none left): -> Empty with ``new_producer_id`` at epoch 0;
        ``record_last_epoch`` keeps the current epoch as the last one (a retry of this call
        can then be recognised).

        Raises IllegalTransitionError while a transaction is open or completing."""
        if self.has_pending_transaction:
            raise IllegalTransitionError(
                f"transactional id {self.transactional_id}: cannot rotate producer ids in "
                f"state {self.state.kafka_name}: a transaction is still pending")
        return self._prepare(TransactionState.EMPTY, new_producer_id, 0,
                             self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
                             new_txn_timeout_ms, (), -1, update_timestamp,
                             self.client_transaction_version)

    def prepare_add_partitions(self, added: Iterable[TopicPartition], update_timestamp: int
                               ) -> TxnTransitMetadata:
        """AddPartitionsToTxn / AddOffsetsToTxn: -> Ongoing with ``added`` joined to the
        partitions; a transaction starting now (from Empty, CompleteCommit or CompleteAbort)
        starts at ``update_timestamp``. Raises IllegalTransitionError from another state."""
        if self.state in (TransactionState.EMPTY, TransactionState.COMPLETE_ABORT,
                          TransactionState.COMPLETE_COMMIT):
            start = update_timestamp
        else:
            start = self.txn_start_timestamp
        return self._prepare(TransactionState.ONGOING, self.producer_id, self.producer_epoch,
                             self.last_producer_epoch, self.txn_timeout_ms,
                             self.topic_partitions.union(added), start, update_timestamp,
                             _CLASSIC_CLIENT_TRANSACTION_VERSION)

    def prepare_abort_or_commit(self, new_state: TransactionState, update_timestamp: int
                                ) -> TxnTransitMetadata:
        """EndTxn (or an abort on the producer's behalf): Ongoing -> PrepareCommit or
        PrepareAbort (PrepareAbort also after a fence), epoch and partitions unchanged.

        Raises ValueError for another ``new_state``, IllegalTransitionError from a state
        that cannot go there."""
        if new_state not in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
            raise ValueError(f"a transaction ends in PrepareCommit or PrepareAbort, not "
                             f"{new_state.kafka_name}")
        return self._prepare(new_state, self.producer_id, self.producer_epoch,
                             self.last_producer_epoch, self.txn_timeout_ms,
                             self.topic_partitions, self.txn_start_timestamp, update_timestamp,
                             _CLASSIC_CLIENT_TRANSACTION_VERSION)

    def prepare_complete(self, update_timestamp: int) -> TxnTransitMetadata:
        """Every marker written: PrepareCommit -> CompleteCommit, PrepareAbort ->
        CompleteAbort, the partitions cleared. Clears a failed fence (the abort reached the
        log). Raises IllegalTransitionError from another state."""
        new_state = TransactionState.COMPLETE_COMMIT \
            if self.state == TransactionState.PREPARE_COMMIT else TransactionState.COMPLETE_ABORT
        transit = self._prepare(new_state, self.producer_id, self.producer_epoch,
                                self.last_producer_epoch, self.txn_timeout_ms, (),
                                self.txn_start_timestamp, update_timestamp,
                                self.client_transaction_version)
        self.has_failed_epoch_fence = False
        return transit

    def prepare_dead(self) -> TxnTransitMetadata:
        """Expiry of an idle id (-> Dead, written as a tombstone). Raises
        IllegalTransitionError outside Empty, CompleteCommit and CompleteAbort."""
        return self._prepare(TransactionState.DEAD, self.producer_id, self.producer_epoch,
                             self.last_producer_epoch, self.txn_timeout_ms, (),
                             self.txn_start_timestamp, self.txn_last_update_timestamp,
                             self.client_transaction_version)

    def _prepare(self, new_state: TransactionState, producer_id: int, epoch: int,
                 last_epoch: int, txn_timeout_ms: int, partitions: Iterable[TopicPartition],
                 start_timestamp: int, update_timestamp: int, client_transaction_version: int,
                 next_producer_id: int = NO_PRODUCER_ID) -> TxnTransitMetadata:
        if self.pending_state is not None:
            raise ConcurrentTransactionsError(
                f"transactional id {self.transactional_id}: a transition to "
                f"{self.pending_state.kafka_name} is in progress; cannot prepare "
                f"{new_state.kafka_name}")
        if producer_id < 0:
            raise ValueError(f"illegal new producer id {producer_id}")
        # The epoch is -1 from creation until the first InitProducerId, and may still be when
        # an id that never got one expires.
        if new_state != TransactionState.DEAD and epoch < 0:
            raise ValueError(f"illegal new producer epoch {epoch}")
        if self.state not in new_state.valid_previous_states:
            raise IllegalTransitionError(
                f"transactional id {self.transactional_id}: cannot go from "
                f"{self.state.kafka_name} to {new_state.kafka_name} (allowed from: "
                f"{', '.join(sorted(s.kafka_name for s in new_state.valid_previous_states))})")
        transit = TxnTransitMetadata(
            producer_id=producer_id, previous_producer_id=self.producer_id,
            next_producer_id=next_producer_id, producer_epoch=epoch,
            last_producer_epoch=last_epoch, txn_timeout_ms=txn_timeout_ms, txn_state=new_state,
            topic_partitions=partitions, txn_start_timestamp=start_timestamp,
            txn_last_update_timestamp=update_timestamp,
            client_transaction_version=client_transaction_version)
        self.pending_state = new_state
        return transit

    def complete_transition(self, transit: TxnTransitMetadata) -> None:
        """Apply ``transit`` once its record is in the log (Kafka's completeTransitionTo).

        Checks that it is the pending transition and that it is consistent with the current
        state: to Empty the epoch is unchanged, bumped by one, or 0 with a new producer id,
        with no partitions and no start time; otherwise producer id, epoch and timeout are
        unchanged, partitions only grow (Ongoing) or are unchanged (PrepareCommit/Abort),
        and a completed transaction has a start time.

        One deliberate difference: a completion to Empty also resets the start time to the -1
        it writes (Kafka leaves the old one in memory), so memory always equals the log.

        Raises IllegalTransitionError when it is not (``pending_state`` then stays set, as in
        Kafka: the id is unusable until the broker restarts, which is what a coordinator bug
        deserves), and for PrepareEpochFence and Dead, which are never completed."""
        to_state = self.pending_state
        if to_state is None:
            raise IllegalTransitionError(
                f"transactional id {self.transactional_id}: completing a transition to "
                f"{transit.txn_state.kafka_name} that was never prepared")
        if to_state != transit.txn_state:
            self._fail(transit)
        if to_state == TransactionState.EMPTY:
            if (self.producer_epoch != transit.producer_epoch
                    and not self._valid_epoch_bump(transit)) \
                    or transit.topic_partitions or transit.txn_start_timestamp != -1:
                self._fail(transit)
            self.txn_timeout_ms = transit.txn_timeout_ms
            self.producer_epoch = transit.producer_epoch
            self.last_producer_epoch = transit.last_producer_epoch
            self.producer_id = transit.producer_id
            self.previous_producer_id = transit.previous_producer_id
            # Kafka keeps the finished transaction's start time in memory while the log says
            # -1; kafkapy keeps what the log says, so a reload changes nothing.
            self.txn_start_timestamp = transit.txn_start_timestamp
        elif to_state == TransactionState.ONGOING:
            if not self._valid_epoch(transit) \
                    or not self.topic_partitions <= transit.topic_partitions \
                    or self.txn_timeout_ms != transit.txn_timeout_ms:
                self._fail(transit)
            self.txn_start_timestamp = transit.txn_start_timestamp
            self.add_partitions(transit.topic_partitions)
        elif to_state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
            if not self._valid_epoch(transit) \
                    or self.topic_partitions != transit.topic_partitions \
                    or self.txn_timeout_ms != transit.txn_timeout_ms \
                    or self.txn_start_timestamp != transit.txn_start_timestamp:
                self._fail(transit)
        elif to_state in (TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT):
            if not self._valid_epoch(transit) \
                    or self.txn_timeout_ms != transit.txn_timeout_ms \
                    or transit.txn_start_timestamp == -1:
                self._fail(transit)
            self.txn_start_timestamp = transit.txn_start_timestamp
            self.topic_partitions.clear()
        elif to_state == TransactionState.PREPARE_EPOCH_FENCE:
            # A fence is turned into PrepareAbort before anything is written.
            self._fail(transit)
        else:
            raise IllegalTransitionError(
                f"transactional id {self.transactional_id}: a transition to Dead is never "
                f"completed; the expired id is removed instead")
        self.client_transaction_version = transit.client_transaction_version
        self.txn_last_update_timestamp = transit.txn_last_update_timestamp
        self.pending_state = None
        self.state = to_state

    def _valid_epoch(self, transit: TxnTransitMetadata) -> bool:
        return transit.producer_epoch == self.producer_epoch and \
            transit.producer_id == self.producer_id

    def _valid_epoch_bump(self, transit: TxnTransitMetadata) -> bool:
        return transit.producer_epoch == self.producer_epoch + 1 or \
            (transit.producer_epoch == 0 and transit.producer_id != self.producer_id)

    def _pending_name(self) -> str:
        return "none" if self.pending_state is None else self.pending_state.kafka_name

    def _fail(self, transit: TxnTransitMetadata) -> NoReturn:
        raise IllegalTransitionError(
            f"transactional id {self.transactional_id}: the transition to {transit} does not "
            f"fit the current state {self!r}")
