"""TransactionStateManager (kafkapy.coordinator.transaction.transaction_state_manager) on a
real broker: ``__transaction_state`` created with Kafka's configs, transitions written in
Kafka's format and loaded back after a restart, tombstones, COORDINATOR_LOAD_IN_PROGRESS,
append failures mapped to Kafka's coordinator errors, timed-out and expired ids.

Most tests use the broker's own manager (``server.transaction_coordinator.state``), with the
coordinator's background rounds (completing prepared transactions, aborting timed-out ones)
set an hour apart so that they do not run during a test, only once after each start. Where a
test must see a load without the coordinator acting on what it loaded, it builds a second
manager on the running broker's event loop and runs its startup load (``load``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.transaction.records import (
    TransactionKey,
    read_key,
    read_transaction_log_value,
    transaction_log_key,
)
from kafkapy.coordinator.transaction.transaction_metadata import (
    TransactionMetadata,
    TransactionState,
)
from kafkapy.coordinator.transaction.transaction_state_manager import (
    TRANSACTION_STATE_TOPIC,
    TransactionStateManager,
    append_error,
)
from kafkapy.errors import (
    ConcurrentTransactionsError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    KafkaError,
    KafkaStorageError,
    MessageTooLargeError,
    NotCoordinatorError,
    NotEnoughReplicasAfterAppendError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    ProducerFencedError,
    RecordListTooLargeError,
    RequestTimedOutError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from kafkapy.testing import BrokerHandle

S = TransactionState
SMALL = {"transaction.state.log.num.partitions": "3",
         "transaction.abort.timed.out.transaction.cleanup.interval.ms": "3600000"}
T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
# Real time: the coordinator's round after a restart must not find anything timed out.
NOW = int(time.time() * 1000)
LONG = 900_000          # transaction.max.timeout.ms


def live(broker: BrokerHandle) -> TransactionStateManager:
    """The broker's own manager, once it has loaded."""
    manager: TransactionStateManager = broker.server.transaction_coordinator.state
    deadline = time.monotonic() + 10
    while not broker.call(manager.loaded.is_set):
        assert time.monotonic() < deadline, "the transaction state did not load"
        time.sleep(0.01)
    return manager


def new_manager(broker: BrokerHandle) -> TransactionStateManager:
    server = broker.server
    return broker.call(lambda: TransactionStateManager(server))  # type: ignore[no-any-return]


class _Status:
    """A task status that records what the manager is loading when it reports started."""

    def __init__(self, manager: TransactionStateManager) -> None:
        self.manager = manager
        self.loading_at_start: set[int] | None = None

    def started(self, value: object = None) -> None:
        self.loading_at_start = set(self.manager.loading)


def load(broker: BrokerHandle) -> tuple[TransactionStateManager, set[int] | None]:
    """A manager that ran its startup load to the end; what it was loading when it said it
    had started."""
    manager = new_manager(broker)
    status = _Status(manager)
    token = broker.call(trio.lowlevel.current_trio_token)

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: manager.run(task_status=status))  # type: ignore[arg-type]
            await manager.loaded.wait()
            nursery.cancel_scope.cancel()

    trio.from_thread.run(run, trio_token=token)
    return manager, status.loading_at_start


def init(manager: TransactionStateManager, txn_id: str, pid: int, timeout_ms: int = LONG,
         now: int = NOW) -> TransactionMetadata:
    """What InitProducerId does for a new transactional id."""
    md = manager.put_if_absent(TransactionMetadata(txn_id, pid, -1, timeout_ms,
                                                   txn_last_update_timestamp=now))
    manager.append_transition(md, md.prepare_increment_producer_epoch(timeout_ms, None, now))
    return md


def on_loop(broker: BrokerHandle, fn: Callable[[], Any]) -> Any:
    return broker.call(fn)


def snapshot(manager: TransactionStateManager) -> dict[str, TransactionMetadata]:
    return {m.transactional_id: m for m in manager.all()}


# ---------------------------------------------------------------------------------------------


@pytest.mark.kafka_broker(SMALL)
def test_topic_created_on_first_write_with_kafkas_configs(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)
    assert TRANSACTION_STATE_TOPIC not in kafka_broker.topics()
    assert on_loop(kafka_broker, lambda: manager.get("a")) is None
    md = on_loop(kafka_broker, lambda: init(manager, "a", 0))
    assert (md.state, md.producer_epoch) == (S.EMPTY, 0)
    assert kafka_broker.topics()[TRANSACTION_STATE_TOPIC] == 3
    assert kafka_broker.topic_config(TRANSACTION_STATE_TOPIC) == {
        "cleanup.policy": "compact", "compression.type": "uncompressed",
        "unclean.leader.election.enable": "false", "min.insync.replicas": "1",
        "segment.bytes": "104857600"}
    on_loop(kafka_broker, manager.ensure_topic)             # idempotent


@pytest.mark.kafka_broker
def test_partition_for_is_kafkas(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)
    # "a".hashCode() == 97; "polygenelubricants".hashCode() == Integer.MIN_VALUE, whose
    # Utils.abs is 0; "Aa" and "BB" collide (2112).
    assert on_loop(kafka_broker, lambda: [manager.partition_for(k) for k in
                                          ("a", "polygenelubricants", "Aa", "BB", "")]) == \
        [97 % 50, 0, 2112 % 50, 2112 % 50, 0]


@pytest.mark.kafka_broker(SMALL)
def test_transitions_are_written_in_kafkas_format(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)

    def write() -> int:
        md = init(manager, "fmt", 42)
        manager.append_transition(md, md.prepare_add_partitions({T0, U0}, NOW + 1))
        return manager.partition_for("fmt")

    p = on_loop(kafka_broker, write)
    records = kafka_broker.read_all(TRANSACTION_STATE_TOPIC, p)
    assert [r.key for r in records] == [transaction_log_key("fmt")] * 2
    values = [r.value for r in records]
    assert all(v is not None and v[:2] == b"\x00\x01" for v in values)     # value v1
    first, second = (read_transaction_log_value(v) for v in values if v is not None)
    assert (first.state, first.producer_id, first.producer_epoch, first.topic_partitions) == \
        (0, 42, 0, frozenset())
    assert (second.state, second.topic_partitions, second.txn_start_timestamp) == \
        (1, frozenset({T0, U0}), NOW + 1)


def copy(metadata: TransactionMetadata) -> TransactionMetadata:
    return TransactionMetadata(**{f: getattr(metadata, f) for f in (
        "transactional_id", "producer_id", "producer_epoch", "txn_timeout_ms", "state",
        "topic_partitions", "txn_start_timestamp", "txn_last_update_timestamp",
        "last_producer_epoch", "client_transaction_version")})


@pytest.mark.kafka_broker(SMALL)
def test_metadata_comes_back_identical_after_a_restart(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)

    def write() -> dict[str, TransactionMetadata]:
        init(manager, "empty", 1)
        ongoing = init(manager, "ongoing", 2, timeout_ms=LONG - 1)
        manager.append_transition(ongoing, ongoing.prepare_add_partitions({T0}, NOW + 1))
        manager.append_transition(ongoing, ongoing.prepare_add_partitions({T1, U0}, NOW + 2))
        aborted = init(manager, "aborted", 4)
        manager.append_transition(aborted, aborted.prepare_add_partitions({U0}, NOW))
        manager.append_transition(aborted,
                                  aborted.prepare_abort_or_commit(S.PREPARE_ABORT, NOW + 4))
        manager.append_transition(aborted, aborted.prepare_complete(NOW + 5))
        committed = init(manager, "committed", 3)
        manager.append_transition(committed, committed.prepare_add_partitions({T0}, NOW))
        manager.append_transition(committed,
                                  committed.prepare_abort_or_commit(S.PREPARE_COMMIT, NOW + 3))
        manager.append_transition(committed, committed.prepare_complete(NOW + 6))
        # A second InitProducerId bumps the epoch; the first transaction after it starts.
        manager.append_transition(committed, committed.prepare_increment_producer_epoch(
            LONG, None, NOW + 7))
        manager.append_transition(committed, committed.prepare_add_partitions({U0}, NOW + 8))
        return {k: copy(v) for k, v in snapshot(manager).items()}

    before = on_loop(kafka_broker, write)
    assert before["ongoing"].topic_partitions == {T0, T1, U0}
    assert (before["committed"].producer_epoch, before["committed"].state) == (1, S.ONGOING)
    kafka_broker.restart()
    reloaded = live(kafka_broker)
    after = on_loop(kafka_broker, lambda: snapshot(reloaded))
    assert after == before
    assert {k: (m.state, m.pending_state) for k, m in after.items()} == {
        "empty": (S.EMPTY, None), "ongoing": (S.ONGOING, None),
        "aborted": (S.COMPLETE_ABORT, None), "committed": (S.ONGOING, None)}
    # The loaded metadata go on from where they were.

    def go_on() -> TransactionMetadata:
        md = reloaded.get("committed")
        assert md is not None
        reloaded.append_transition(
            md, md.prepare_abort_or_commit(S.PREPARE_ABORT, NOW + 10))
        return md

    assert on_loop(kafka_broker, go_on).state == S.PREPARE_ABORT


@pytest.mark.kafka_broker(SMALL)
def test_startup_load_and_pending_completions(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)

    def write() -> list[str]:
        for name, end in (("committing", S.PREPARE_COMMIT), ("aborting", S.PREPARE_ABORT),
                          ("in-flight", S.PREPARE_COMMIT)):
            md = init(manager, name, len(name))
            manager.append_transition(md, md.prepare_add_partitions({T0}, NOW))
            manager.append_transition(md, md.prepare_abort_or_commit(end, NOW + 1))
        init(manager, "idle", 9)
        in_flight = manager.get("in-flight")
        assert in_flight is not None
        in_flight.prepare_complete(NOW + 2)      # its markers are being written: not listed
        return sorted(m.transactional_id for m in manager.pending_completions())

    assert on_loop(kafka_broker, write) == ["aborting", "committing"]
    # What a restart loads (a second manager reads the same log; the broker's coordinator,
    # which would complete these at once after a real restart, is asleep).
    loaded, loading_at_start = load(kafka_broker)
    assert loading_at_start == {0, 1, 2}          # every partition loads in the background
    assert on_loop(kafka_broker, lambda: {k: copy(m) for k, m in snapshot(loaded).items()}) == \
        on_loop(kafka_broker, lambda: {k: copy(m) for k, m in snapshot(manager).items()})
    assert on_loop(kafka_broker, lambda: sorted(
        m.transactional_id for m in loaded.pending_completions())) == \
        ["aborting", "committing", "in-flight"]


@pytest.mark.kafka_broker(SMALL)
def test_prepared_transactions_are_completed_after_a_restart(kafka_broker: BrokerHandle
                                                             ) -> None:
    # The coordinator (not this module) finishes what pending_completions lists.
    manager = live(kafka_broker)

    def write() -> None:
        md = init(manager, "cut-short", 1)
        manager.append_transition(md, md.prepare_add_partitions({T0}, NOW))
        manager.append_transition(md, md.prepare_abort_or_commit(S.PREPARE_COMMIT, NOW + 1))

    on_loop(kafka_broker, write)
    kafka_broker.restart()
    reloaded = live(kafka_broker)
    deadline = time.monotonic() + 10
    while True:
        md = on_loop(kafka_broker, lambda: reloaded.get("cut-short"))
        if md.state == S.COMPLETE_COMMIT:
            break
        assert time.monotonic() < deadline, md
        time.sleep(0.01)
    assert md.topic_partitions == set()


@pytest.mark.kafka_broker(SMALL)
def test_a_tombstoned_id_is_gone_after_a_restart(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)

    def write() -> None:
        init(manager, "gone", 1)
        init(manager, "kept", 2)
        manager.remove("gone")
        manager.remove("never-known")           # nothing to do

    on_loop(kafka_broker, write)
    assert on_loop(kafka_broker, lambda: manager.get("gone")) is None
    p = on_loop(kafka_broker, lambda: manager.partition_for("gone"))
    last = kafka_broker.read_all(TRANSACTION_STATE_TOPIC, p)
    assert [(read_key(r.key), r.value is None) for r in last if r.key is not None][-1] == \
        (TransactionKey("gone"), True)
    kafka_broker.restart()
    loaded = live(kafka_broker)
    assert on_loop(kafka_broker, lambda: (loaded.get("gone"), loaded.get("kept") is not None)) \
        == (None, True)


@pytest.mark.kafka_broker(SMALL)
def test_only_idle_states_can_be_removed(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)

    def attempt() -> tuple[type[Exception], ...]:
        md = init(manager, "busy", 1)
        manager.append_transition(md, md.prepare_add_partitions({T0}, NOW))
        errors: list[type[Exception]] = []
        try:
            manager.remove("busy")
        except KafkaError as e:
            errors.append(type(e))
        md.prepare_abort_or_commit(S.PREPARE_ABORT, NOW)          # pending
        try:
            manager.remove("busy")
        except KafkaError as e:
            errors.append(type(e))
        return tuple(errors)

    errors = on_loop(kafka_broker, attempt)
    assert errors[0].__name__ == "IllegalTransitionError"
    assert errors[1] is ConcurrentTransactionsError


@pytest.mark.kafka_broker(SMALL)
def test_coordinator_load_in_progress_while_a_partition_loads(kafka_broker: BrokerHandle
                                                              ) -> None:
    manager = live(kafka_broker)
    on_loop(kafka_broker, lambda: init(manager, "x", 1))
    p = on_loop(kafka_broker, lambda: manager.partition_for("x"))
    other = next(k for k in ("a", "b", "c", "d", "e", "f")
                 if on_loop(kafka_broker, lambda k=k: manager.partition_for(k)) != p)
    on_loop(kafka_broker, lambda: manager.loading.add(p))

    def calls() -> list[str]:
        out = []
        md = manager._transactions["x"]
        for name, call in [
            ("get", lambda: manager.get("x")),
            ("put", lambda: manager.put_if_absent(TransactionMetadata("x", 9, -1, 1))),
            ("check", lambda: manager.check_loaded("x")),
            ("all", manager.all),
            ("append", lambda: manager.append_transition(
                md, md.prepare_add_partitions({T0}, NOW))),
            ("remove", lambda: manager.remove("x")),
        ]:
            try:
                call()
            except CoordinatorLoadInProgressError:
                out.append(name)
        assert md.pending_state is None         # the refused append left nothing pending
        assert manager.get(other) is None       # other partitions answer
        assert manager.is_loaded(other) and not manager.is_loaded("x")
        assert manager.pending_completions() == [] and manager.timed_out(NOW * 2) == []
        return out

    assert on_loop(kafka_broker, calls) == ["get", "put", "check", "all", "append", "remove"]
    on_loop(kafka_broker, lambda: manager.loading.discard(p))
    assert on_loop(kafka_broker, lambda: manager.get("x")).producer_epoch == 0


@pytest.mark.kafka_broker(SMALL)
def test_a_failed_append_clears_the_pending_state(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)
    on_loop(kafka_broker, lambda: init(manager, "f", 1))

    def fail_with(exc: Exception, retry: bool = False) -> tuple[type[KafkaError], Any]:
        md = manager.get("f")
        assert md is not None
        partition = kafka_broker.server.replica_manager.get_partition(
            TopicPartition(TRANSACTION_STATE_TOPIC, manager.partition_for("f")))

        def broken(*args: object) -> None:
            raise exc

        partition.append_records_to_leader = broken  # type: ignore[method-assign]
        try:
            manager.append_transition(md, md.prepare_add_partitions({T0}, NOW),
                                      retry_on_error=(lambda e: retry) if retry else None)
        except KafkaError as e:
            return type(e), md.pending_state
        finally:
            del partition.append_records_to_leader
        raise AssertionError("the append did not fail")

    assert on_loop(kafka_broker, lambda: fail_with(NotLeaderOrFollowerError())) == \
        (NotCoordinatorError, None)
    assert on_loop(kafka_broker, lambda: fail_with(OSError(5, "I/O error"))) == \
        (NotCoordinatorError, None)
    assert on_loop(kafka_broker, lambda: fail_with(NotEnoughReplicasError())) == \
        (CoordinatorNotAvailableError, None)
    # A caller that retries the same transit keeps it pending.
    assert on_loop(kafka_broker, lambda: fail_with(RequestTimedOutError(), retry=True)) == \
        (CoordinatorNotAvailableError, S.ONGOING)

    def state() -> tuple[Any, ...]:
        md = manager.get("f")
        assert md is not None
        md.pending_state = None
        return md.state, md.topic_partitions

    assert on_loop(kafka_broker, state) == (S.EMPTY, set())      # nothing applied


@pytest.mark.parametrize(("raised", "answered"), [
    (UnknownTopicOrPartitionError(), CoordinatorNotAvailableError),
    (NotEnoughReplicasError(), CoordinatorNotAvailableError),
    (NotEnoughReplicasAfterAppendError(), CoordinatorNotAvailableError),
    (RequestTimedOutError(), CoordinatorNotAvailableError),
    (NotLeaderOrFollowerError(), NotCoordinatorError),
    (KafkaStorageError(), NotCoordinatorError),
    (OSError(28, "No space left on device"), NotCoordinatorError),
    (MessageTooLargeError(), UnknownServerError),
    (RecordListTooLargeError(), UnknownServerError),
    (ProducerFencedError(), ProducerFencedError),
    (ValueError("boom"), UnknownServerError),
])
def test_append_errors_map_as_kafkas(raised: Exception, answered: type[KafkaError]) -> None:
    assert type(append_error(raised)) is answered


@pytest.mark.kafka_broker(SMALL)
def test_an_uncached_metadata_is_not_written(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)

    def attempt() -> Any:
        stray = TransactionMetadata("stray", 1, -1, 1000)
        try:
            manager.append_transition(stray, stray.prepare_increment_producer_epoch(
                1000, None, NOW))
        except NotCoordinatorError:
            return stray.pending_state, manager.get("stray")
        raise AssertionError("written")

    assert on_loop(kafka_broker, attempt) == (None, None)


@pytest.mark.kafka_broker({**SMALL, "transactional.id.expiration.ms": "1000"})
def test_timed_out_transactions_and_expired_ids(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)

    def setup() -> None:
        for name in ("idle-empty", "idle-done", "fresh", "open"):
            init(manager, name, len(name), timeout_ms=60_000, now=NOW)
        done = manager.get("idle-done")
        assert done is not None
        manager.append_transition(done, done.prepare_add_partitions({T0}, NOW))
        manager.append_transition(done, done.prepare_abort_or_commit(S.PREPARE_COMMIT, NOW))
        manager.append_transition(done, done.prepare_complete(NOW))
        fresh = manager.get("fresh")
        assert fresh is not None
        manager.append_transition(fresh, fresh.prepare_increment_producer_epoch(
            60_000, None, NOW + 5_000))
        opened = manager.get("open")
        assert opened is not None
        manager.append_transition(opened, opened.prepare_add_partitions({T1}, NOW + 100))

    on_loop(kafka_broker, setup)

    def ids(fn: Callable[[int], list[Any]], now: int) -> list[str]:
        return sorted(x if isinstance(x, str) else x.transactional_id for x in fn(now))

    # Ongoing for longer than its 60 s timeout (start + timeout < now).
    assert on_loop(kafka_broker, lambda: ids(manager.timed_out, NOW + 60_100)) == []
    assert on_loop(kafka_broker, lambda: ids(manager.timed_out, NOW + 60_101)) == ["open"]
    # Idle for transactional.id.expiration.ms (1 s) in Empty / Complete*.
    assert on_loop(kafka_broker, lambda: ids(manager.expired_ids, NOW + 999)) == []
    assert on_loop(kafka_broker, lambda: ids(manager.expired_ids, NOW + 1_000)) == \
        ["idle-done", "idle-empty"]
    assert on_loop(kafka_broker, lambda: ids(manager.expired_ids, NOW + 6_000)) == \
        ["fresh", "idle-done", "idle-empty"]

    def pending_is_skipped() -> list[str]:
        fresh = manager.get("fresh")
        assert fresh is not None
        fresh.prepare_add_partitions({T0}, NOW)
        try:
            return ids(manager.expired_ids, NOW + 6_000)
        finally:
            fresh.pending_state = None

    assert on_loop(kafka_broker, pending_is_skipped) == ["idle-done", "idle-empty"]
    assert on_loop(kafka_broker, lambda: sorted(manager.remove_expired(NOW + 1_000))) == \
        ["idle-done", "idle-empty"]
    assert on_loop(kafka_broker, lambda: sorted(snapshot(manager))) == ["fresh", "open"]
    kafka_broker.restart()
    reloaded = live(kafka_broker)
    assert on_loop(kafka_broker, lambda: sorted(snapshot(reloaded))) == ["fresh", "open"]


@pytest.mark.kafka_broker({**SMALL, "transaction.max.timeout.ms": "60000"})
def test_timeout_validation_and_coordinator_epoch(kafka_broker: BrokerHandle) -> None:
    manager = live(kafka_broker)
    assert on_loop(kafka_broker, lambda: [manager.validate_transaction_timeout_ms(t)
                                          for t in (0, 1, 60_000, 60_001, -1)]) == \
        [False, True, True, False, False]
    assert on_loop(kafka_broker, lambda: manager.coordinator_epoch("x")) == 0
    on_loop(kafka_broker, lambda: init(manager, "x", 1))
    assert on_loop(kafka_broker, lambda: manager.coordinator_epoch("x")) == 0


@pytest.mark.kafka_broker(SMALL)
def test_after_shutdown_not_coordinator(kafka_broker: BrokerHandle) -> None:
    manager = new_manager(kafka_broker)
    on_loop(kafka_broker, lambda: init(manager, "x", 1))
    on_loop(kafka_broker, manager.shutdown)
    with pytest.raises(NotCoordinatorError):
        on_loop(kafka_broker, lambda: manager.get("x"))


@pytest.mark.kafka_broker(SMALL)
def test_a_broker_without_the_topic_loads_nothing(kafka_broker: BrokerHandle) -> None:
    loaded, loading_at_start = load(kafka_broker)
    assert loading_at_start == set()
    assert on_loop(kafka_broker, loaded.all) == []
    assert TRANSACTION_STATE_TOPIC not in kafka_broker.topics()
