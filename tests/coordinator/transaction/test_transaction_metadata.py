"""TransactionState and TransactionMetadata (kafkapy.coordinator.transaction.transaction_metadata):
the state table of the protocol reference (section 6.3), every legal transition prepared and
completed, every illegal one refused, and the checks of Kafka's completeTransitionTo."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.transaction.records import TransactionLogValue
from kafkapy.coordinator.transaction.transaction_metadata import (
    MAX_PRODUCER_EPOCH,
    IllegalTransitionError,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
    is_epoch_exhausted,
)
from kafkapy.errors import ConcurrentTransactionsError, ProducerFencedError, UnknownServerError

S = TransactionState
E, ON, PC, PA, CC, CA, D, PEF = (S.EMPTY, S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT,
                                S.COMPLETE_COMMIT, S.COMPLETE_ABORT, S.DEAD,
                                S.PREPARE_EPOCH_FENCE)
T0, T1, T2 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
NOW = 1_700_000_000_000

# The protocol reference, section 6.3: (id, Kafka name, valid previous states).
REFERENCE = {
    E: (0, "Empty", {E, CC, CA}),
    ON: (1, "Ongoing", {ON, E, CC, CA}),
    PC: (2, "PrepareCommit", {ON}),
    PA: (3, "PrepareAbort", {ON, PEF}),
    CC: (4, "CompleteCommit", {PC}),
    CA: (5, "CompleteAbort", {PA}),
    D: (6, "Dead", {E, CA, CC}),
    PEF: (7, "PrepareEpochFence", {ON}),
}


@pytest.mark.parametrize("state", list(S), ids=lambda s: s.kafka_name)
def test_states_match_the_reference(state: TransactionState) -> None:
    ident, name, previous = REFERENCE[state]
    assert int(state) == ident
    assert state.kafka_name == name
    assert S.from_kafka_name(name) is state
    assert state.valid_previous_states == previous
    assert state.is_expiration_allowed == (state in (E, CC, CA))


def test_unknown_kafka_name() -> None:
    assert S.from_kafka_name("empty") is None


# ---------------------------------------------------------------------------------------------
# Building metadata in any state, the way the coordinator gets there.


def fresh(epoch: int = -1) -> TransactionMetadata:
    """A transactional id as InitProducerId creates it: epoch -1, Empty."""
    return TransactionMetadata("txn", 1000, epoch, 60_000, txn_last_update_timestamp=NOW)


def complete(md: TransactionMetadata, transit: TxnTransitMetadata) -> TransactionMetadata:
    assert md.pending_state == transit.txn_state
    md.complete_transition(transit)
    assert md.pending_state is None
    assert md.state == transit.txn_state
    return md


def in_state(state: TransactionState) -> TransactionMetadata:
    md = fresh()
    complete(md, md.prepare_increment_producer_epoch(60_000, None, NOW))
    if state == E:
        return md
    if state in (D, PEF):
        # Never a current state in practice; built directly to test what leaves it.
        return TransactionMetadata("txn", 1000, 0, 60_000, state=state,
                                   topic_partitions={T0}, txn_start_timestamp=NOW,
                                   txn_last_update_timestamp=NOW)
    complete(md, md.prepare_add_partitions({T0, T1}, NOW + 1))
    if state == ON:
        return md
    prepare = PC if state in (PC, CC) else PA
    complete(md, md.prepare_abort_or_commit(prepare, NOW + 2))
    if state in (PC, PA):
        return md
    return complete(md, md.prepare_complete(NOW + 3))


def test_fresh_metadata_equals_in_state_copies() -> None:
    # Kafka's equality: the pending state and the previous / next producer ids do not count.
    a, b = in_state(ON), in_state(ON)
    a.pending_state, a.previous_producer_id, a.next_producer_id = PC, 5, 6
    assert a == b
    b.last_producer_epoch = 3
    assert a != b


# ---------------------------------------------------------------------------------------------
# Legal transitions, prepared and completed


def test_init_producer_id_of_a_new_id_gives_epoch_0() -> None:
    md = fresh()
    transit = md.prepare_increment_producer_epoch(30_000, None, NOW + 5)
    assert md.pending_state == E and md.producer_epoch == -1    # nothing applied yet
    assert (transit.producer_id, transit.producer_epoch, transit.last_producer_epoch,
            transit.previous_producer_id, transit.txn_timeout_ms, transit.txn_state,
            transit.topic_partitions, transit.txn_start_timestamp,
            transit.txn_last_update_timestamp) == \
        (1000, 0, -1, 1000, 30_000, E, frozenset(), -1, NOW + 5)
    complete(md, transit)
    assert (md.producer_epoch, md.txn_timeout_ms, md.previous_producer_id,
            md.txn_last_update_timestamp) == (0, 30_000, 1000, NOW + 5)


@pytest.mark.parametrize("start", [E, CC, CA], ids=lambda s: s.kafka_name)
def test_init_producer_id_bumps_the_epoch(start: TransactionState) -> None:
    md = in_state(start)
    epoch = md.producer_epoch
    complete(md, md.prepare_increment_producer_epoch(10_000, None, NOW + 10))
    assert (md.state, md.producer_epoch, md.last_producer_epoch, md.txn_timeout_ms) == \
        (E, epoch + 1, -1, 10_000)
    assert md.topic_partitions == set() and md.txn_start_timestamp == -1


@pytest.mark.parametrize("start", [E, CC, CA], ids=lambda s: s.kafka_name)
def test_first_partitions_start_a_transaction(start: TransactionState) -> None:
    md = in_state(start)
    complete(md, md.prepare_add_partitions({T2}, NOW + 20))
    assert (md.state, md.topic_partitions, md.txn_start_timestamp,
            md.txn_last_update_timestamp) == (ON, {T2}, NOW + 20, NOW + 20)


def test_more_partitions_keep_the_start_time() -> None:
    md = in_state(ON)
    start = md.txn_start_timestamp
    transit = md.prepare_add_partitions({T2, T0}, NOW + 30)
    assert transit.topic_partitions == {T0, T1, T2}
    complete(md, transit)
    assert (md.state, md.topic_partitions, md.txn_start_timestamp) == (ON, {T0, T1, T2}, start)


@pytest.mark.parametrize("target", [PC, PA], ids=lambda s: s.kafka_name)
def test_end_txn_prepares(target: TransactionState) -> None:
    md = in_state(ON)
    before = (md.producer_id, md.producer_epoch, set(md.topic_partitions),
              md.txn_start_timestamp)
    complete(md, md.prepare_abort_or_commit(target, NOW + 40))
    assert md.state == target and md.txn_last_update_timestamp == NOW + 40
    assert (md.producer_id, md.producer_epoch, md.topic_partitions,
            md.txn_start_timestamp) == before


@pytest.mark.parametrize(("prepared", "completed"), [(PC, CC), (PA, CA)],
                         ids=["commit", "abort"])
def test_markers_written_complete_the_transaction(prepared: TransactionState,
                                                   completed: TransactionState) -> None:
    md = in_state(prepared)
    start = md.txn_start_timestamp
    transit = md.prepare_complete(NOW + 50)
    assert transit.txn_state == completed and transit.topic_partitions == frozenset()
    complete(md, transit)
    assert (md.state, md.topic_partitions, md.txn_start_timestamp,
            md.txn_last_update_timestamp) == (completed, set(), start, NOW + 50)


def test_fencing_an_ongoing_transaction_then_aborting_it() -> None:
    md = in_state(ON)
    epoch = md.producer_epoch
    fence = md.prepare_fence_producer_epoch()
    assert (fence.txn_state, fence.producer_epoch, fence.last_producer_epoch) == \
        (PEF, epoch + 1, -1)
    assert fence.topic_partitions == md.topic_partitions
    assert fence.txn_last_update_timestamp == md.txn_last_update_timestamp
    with pytest.raises(IllegalTransitionError):
        md.complete_transition(fence)           # a fence is never completed as such
    # What Kafka's endTransaction does with a pending fence: adopt the bumped epoch, then
    # prepare the abort (PrepareAbort is allowed from Ongoing).
    md.pending_state = None
    md.producer_epoch, md.last_producer_epoch = fence.producer_epoch, -1
    complete(md, md.prepare_abort_or_commit(PA, NOW + 60))
    complete(md, md.prepare_complete(NOW + 61))
    assert (md.state, md.producer_epoch) == (CA, epoch + 1)


def test_a_failed_fence_does_not_bump_twice() -> None:
    md = in_state(ON)
    md.has_failed_epoch_fence = True
    assert md.prepare_fence_producer_epoch().producer_epoch == md.producer_epoch
    md.pending_state = None
    md.state = PA
    md.prepare_complete(NOW)
    assert md.has_failed_epoch_fence is False


@pytest.mark.parametrize("start", [E, CC, CA], ids=lambda s: s.kafka_name)
def test_dead_is_prepared_but_never_completed(start: TransactionState) -> None:
    md = in_state(start)
    transit = md.prepare_dead()
    assert transit.txn_state == D and md.pending_state == D
    assert transit.txn_last_update_timestamp == md.txn_last_update_timestamp
    with pytest.raises(IllegalTransitionError, match="removed"):
        md.complete_transition(transit)


def test_dead_allows_an_id_that_never_got_an_epoch() -> None:
    assert fresh().prepare_dead().producer_epoch == -1


# ---------------------------------------------------------------------------------------------
# KIP-360 epoch bumps and producer id rotation


def test_expected_current_epoch_bumps_and_remembers_it() -> None:
    md = in_state(E)
    complete(md, md.prepare_increment_producer_epoch(60_000, 0, NOW))
    assert (md.producer_epoch, md.last_producer_epoch) == (1, 0)
    # A retry of that call (the client never saw the answer) gets the same epoch back.
    transit = md.prepare_increment_producer_epoch(60_000, 0, NOW + 1)
    assert (transit.producer_epoch, transit.last_producer_epoch) == (1, 0)
    complete(md, transit)


def test_any_expected_epoch_is_accepted_while_there_is_none() -> None:
    md = fresh()
    transit = md.prepare_increment_producer_epoch(60_000, 17, NOW)
    assert (transit.producer_epoch, transit.last_producer_epoch) == (0, -1)


def test_a_stale_expected_epoch_is_fenced_without_a_pending_state() -> None:
    md = in_state(CC)
    with pytest.raises(ProducerFencedError):
        md.prepare_increment_producer_epoch(60_000, 5, NOW)
    assert md.pending_state is None


def test_exhausted_epochs_rotate_the_producer_id() -> None:
    assert not is_epoch_exhausted(MAX_PRODUCER_EPOCH - 2)
    assert is_epoch_exhausted(MAX_PRODUCER_EPOCH - 1) and is_epoch_exhausted(MAX_PRODUCER_EPOCH)
    md = in_state(CC)
    md.producer_epoch = MAX_PRODUCER_EPOCH - 1
    assert md.is_producer_epoch_exhausted
    with pytest.raises(IllegalTransitionError, match="no epochs left"):
        md.prepare_increment_producer_epoch(60_000, None, NOW)
    assert md.pending_state is None
    transit = md.prepare_producer_id_rotation(2000, 45_000, NOW + 1, record_last_epoch=True)
    assert (transit.producer_id, transit.producer_epoch, transit.last_producer_epoch,
            transit.previous_producer_id) == (2000, 0, MAX_PRODUCER_EPOCH - 1, 1000)
    complete(md, transit)
    assert (md.producer_id, md.producer_epoch, md.previous_producer_id, md.txn_timeout_ms) == \
        (2000, 0, 1000, 45_000)


def test_rotation_without_recording_the_last_epoch() -> None:
    md = in_state(E)
    assert md.prepare_producer_id_rotation(7, 1, NOW, record_last_epoch=False) \
        .last_producer_epoch == -1


@pytest.mark.parametrize("start", [ON, PC, PA], ids=lambda s: s.kafka_name)
def test_no_rotation_during_a_transaction(start: TransactionState) -> None:
    md = in_state(start)
    with pytest.raises(IllegalTransitionError, match="pending"):
        md.prepare_producer_id_rotation(2000, 1, NOW, record_last_epoch=False)
    assert md.pending_state is None


def test_fencing_at_the_last_epoch_would_overflow() -> None:
    md = in_state(ON)
    md.producer_epoch = MAX_PRODUCER_EPOCH
    with pytest.raises(IllegalTransitionError, match="overflow"):
        md.prepare_fence_producer_epoch()


# ---------------------------------------------------------------------------------------------
# Illegal transitions: every (current state, target) pair the table does not allow


PREPARES: dict[str, Callable[[TransactionMetadata], TxnTransitMetadata]] = {
    "Empty": lambda md: md.prepare_increment_producer_epoch(60_000, None, NOW + 100),
    "Empty (rotation)": lambda md: md.prepare_producer_id_rotation(9, 1, NOW + 100, False),
    "Ongoing": lambda md: md.prepare_add_partitions({T2}, NOW + 100),
    "PrepareCommit": lambda md: md.prepare_abort_or_commit(PC, NOW + 100),
    "PrepareAbort": lambda md: md.prepare_abort_or_commit(PA, NOW + 100),
    "Complete*": lambda md: md.prepare_complete(NOW + 100),
    "Dead": lambda md: md.prepare_dead(),
    "PrepareEpochFence": lambda md: md.prepare_fence_producer_epoch(),
}


def _legal(current: TransactionState, target: str) -> bool:
    if target == "Empty (rotation)":
        return current in (E, CC, CA)     # plus: no transaction pending
    if target == "Complete*":
        # prepare_complete picks CompleteCommit after PrepareCommit, CompleteAbort otherwise.
        return current in (PC, PA)
    return current in S.from_kafka_name(target).valid_previous_states  # type: ignore[union-attr]


@pytest.mark.parametrize("current", list(S), ids=lambda s: s.kafka_name)
@pytest.mark.parametrize("target", list(PREPARES))
def test_every_pair_of_states(current: TransactionState, target: str) -> None:
    md = in_state(current)
    snapshot = attrs.asdict(attrs.evolve(md), recurse=False)
    if _legal(current, target):
        transit = PREPARES[target](md)
        assert md.pending_state == transit.txn_state
    else:
        with pytest.raises(IllegalTransitionError):
            PREPARES[target](md)
        # Nothing changed, not even the pending state.
        assert attrs.asdict(md, recurse=False) == snapshot and md.pending_state is None


def test_illegal_transition_message_names_the_states() -> None:
    md = in_state(E)
    with pytest.raises(IllegalTransitionError,
                       match=r"from Empty to PrepareCommit \(allowed from: Ongoing\)"):
        md.prepare_abort_or_commit(PC, NOW)


def test_illegal_transitions_answer_unknown_server_error() -> None:
    assert issubclass(IllegalTransitionError, UnknownServerError)
    assert IllegalTransitionError.code == -1


def test_abort_or_commit_only_to_a_prepare_state() -> None:
    with pytest.raises(ValueError):
        in_state(ON).prepare_abort_or_commit(CC, NOW)


# ---------------------------------------------------------------------------------------------
# The pending state and completeTransitionTo's checks


def test_a_pending_transition_blocks_another() -> None:
    md = in_state(ON)
    transit = md.prepare_abort_or_commit(PC, NOW + 1)
    with pytest.raises(ConcurrentTransactionsError, match="PrepareCommit is in progress"):
        md.prepare_add_partitions({T2}, NOW + 2)
    with pytest.raises(ConcurrentTransactionsError):
        md.prepare_abort_or_commit(PA, NOW + 2)
    assert md.pending_transition_in_progress
    complete(md, transit)
    assert not md.pending_transition_in_progress
    md.prepare_complete(NOW + 3)            # free again


def test_completing_without_a_prepare_is_illegal() -> None:
    md = in_state(ON)
    transit = md.prepare_no_transit()
    assert md.pending_state is None and transit.txn_state == ON
    with pytest.raises(IllegalTransitionError, match="never prepared"):
        md.complete_transition(transit)


def test_no_transit_is_the_current_state() -> None:
    md = in_state(PC)
    t = md.prepare_no_transit()
    assert (t.producer_id, t.producer_epoch, t.txn_state, t.topic_partitions,
            t.txn_start_timestamp, t.txn_last_update_timestamp, t.txn_timeout_ms) == \
        (md.producer_id, md.producer_epoch, PC, md.topic_partitions, md.txn_start_timestamp,
         md.txn_last_update_timestamp, md.txn_timeout_ms)


def _tamper(state: TransactionState, prepare: Callable[[TransactionMetadata], TxnTransitMetadata],
            **changes: object) -> None:
    md = in_state(state)
    md.producer_epoch = 4
    transit = attrs.evolve(prepare(md), **changes)
    with pytest.raises(IllegalTransitionError, match="does not fit"):
        md.complete_transition(transit)
    assert md.state == state and md.pending_state is not None   # Kafka: stuck, a bug


@pytest.mark.parametrize("changes", [
    {"txn_state": ON},                                   # not the pending state
    {"producer_epoch": 9},                              # neither same, +1, nor 0 with new id
    {"producer_epoch": 0},                              # 0 but the same producer id
    {"topic_partitions": frozenset({T0})},
    {"txn_start_timestamp": NOW},
])
def test_empty_completion_checks(changes: dict[str, object]) -> None:
    _tamper(CC, PREPARES["Empty"], **changes)


@pytest.mark.parametrize("changes", [
    {"producer_epoch": 9}, {"producer_id": 7}, {"txn_timeout_ms": 1},
    {"topic_partitions": frozenset({T2})},              # dropped partitions
])
def test_ongoing_completion_checks(changes: dict[str, object]) -> None:
    _tamper(ON, PREPARES["Ongoing"], **changes)


@pytest.mark.parametrize("changes", [
    {"producer_epoch": 9}, {"txn_timeout_ms": 1}, {"txn_start_timestamp": 1},
    {"topic_partitions": frozenset({T0, T1, T2})},
])
def test_prepare_completion_checks(changes: dict[str, object]) -> None:
    _tamper(ON, PREPARES["PrepareCommit"], **changes)


@pytest.mark.parametrize("changes", [
    {"producer_id": 7}, {"txn_timeout_ms": 1}, {"txn_start_timestamp": -1},
])
def test_complete_completion_checks(changes: dict[str, object]) -> None:
    _tamper(PA, PREPARES["Complete*"], **changes)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="producer id"):
        in_state(E).prepare_producer_id_rotation(-1, 1, NOW, False)


# ---------------------------------------------------------------------------------------------
# Partitions and records


def test_markers_remove_partitions_only_while_prepared() -> None:
    md = in_state(PC)
    md.remove_partition(T0)
    assert md.topic_partitions == {T1}
    with pytest.raises(IllegalTransitionError):
        in_state(ON).remove_partition(T0)


def test_transit_to_record_and_back() -> None:
    md = in_state(ON)
    transit = md.prepare_abort_or_commit(PC, NOW + 7)
    record = transit.to_record()
    assert record == TransactionLogValue(
        producer_id=1000, producer_epoch=0, txn_timeout_ms=60_000, state=2,
        topic_partitions=frozenset({T0, T1}), txn_last_update_timestamp=NOW + 7,
        txn_start_timestamp=NOW + 1)
    complete(md, transit)
    loaded = TransactionMetadata.from_record("txn", record)
    assert loaded == md
    assert loaded.pending_state is None and loaded.last_producer_epoch == -1


def test_loaded_last_epoch_is_unknown() -> None:
    md = in_state(E)
    complete(md, md.prepare_increment_producer_epoch(60_000, 0, NOW))
    assert md.last_producer_epoch == 0
    assert TransactionMetadata.from_record("txn", md.prepare_no_transit().to_record()) \
        .last_producer_epoch == -1


def test_classic_transitions_record_client_version_0() -> None:
    md = in_state(ON)
    md.client_transaction_version = 2          # e.g. loaded from a TV2 cluster's log
    transit = md.prepare_add_partitions({T2}, NOW)
    assert transit.client_transaction_version == 0
    complete(md, transit)
    assert md.client_transaction_version == 0
