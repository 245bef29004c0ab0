"""TransactionStateManager (kafkapy.coordinator.transaction.transaction_state_manager) over the
in-memory partitions (tests/coordinator/memory_partitions.py) and Trio's MockClock: no broker,
no sleeps. ``__transaction_state`` created with Kafka's configs, transitions written in
Kafka's format and loaded back by the next leader, tombstones, the load and unload of one
partition (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, epochs), append failures mapped to
Kafka's coordinator errors, timed-out and expired ids.

A "restart" (or a new leader) is a second manager elected over the same partitions: the
logs are all there is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest
import trio
import trio.testing

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig
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
from tests.coordinator.memory_partitions import MemoryPartitions

S = TransactionState
SMALL = {"transaction.state.log.num.partitions": "3"}
T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
NOW = 1_700_000_000_000         # the mock wall clock at the start of each test
LONG = 900_000                  # transaction.max.timeout.ms


def tsp(p: int) -> TopicPartition:
    return TopicPartition(TRANSACTION_STATE_TOPIC, p)


class Broker:
    """The in-memory partitions, a config and the mock clock; managers over them."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.partitions = MemoryPartitions(NOW)
        self.config = BrokerConfig.from_properties(dict(props))
        self.time = MockTime(NOW)
        self.loaded: list[int] = []
        self.nursery: trio.Nursery | None = None

    async def manager(self) -> TransactionStateManager:
        """A manager, running, registered for the topic (not elected yet)."""
        manager = TransactionStateManager(self.partitions, lambda: self.config, self.time,
                                          on_loaded=self.loaded.append)
        assert self.nursery is not None
        await self.nursery.start(manager.run)
        self.partitions.register(TRANSACTION_STATE_TOPIC, manager)
        return manager

    async def restart(self, old: TransactionStateManager) -> TransactionStateManager:
        """The old manager shut down, a new one elected where the broker leads and loaded."""
        old.shutdown()
        manager = await self.manager()
        self.partitions.start()
        await loaded(manager)
        return manager


def run(test: Callable[[Broker], Awaitable[None]], props: Mapping[str, str] = SMALL) -> None:
    async def main() -> None:
        broker = Broker(props)
        async with trio.open_nursery() as nursery:
            broker.nursery = nursery
            await test(broker)
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


async def loaded(manager: TransactionStateManager) -> None:
    """Let the loads under way finish."""
    while manager.loading:
        await trio.lowlevel.checkpoint()


def init(manager: TransactionStateManager, txn_id: str, pid: int, timeout_ms: int = LONG,
         now: int = NOW) -> TransactionMetadata:
    """What InitProducerId does for a new transactional id."""
    md = manager.put_if_absent(TransactionMetadata(txn_id, pid, -1, timeout_ms,
                                                   txn_last_update_timestamp=now))
    manager.append_transition(md, md.prepare_increment_producer_epoch(timeout_ms, None, now))
    return md


def snapshot(manager: TransactionStateManager) -> dict[str, TransactionMetadata]:
    return {m.transactional_id: m for m in manager.all()}


def copy(metadata: TransactionMetadata) -> TransactionMetadata:
    return TransactionMetadata(**{f: getattr(metadata, f) for f in (
        "transactional_id", "producer_id", "producer_epoch", "txn_timeout_ms", "state",
        "topic_partitions", "txn_start_timestamp", "txn_last_update_timestamp",
        "last_producer_epoch", "client_transaction_version")})


def copies(manager: TransactionStateManager) -> dict[str, TransactionMetadata]:
    return {k: copy(v) for k, v in snapshot(manager).items()}


def records(broker: Broker, p: int) -> list[tuple[bytes | None, bytes | None]]:
    return [(r.key, r.value) for b in broker.partitions.batches(tsp(p)) for r in b.records()]


def other_id(manager: TransactionStateManager, txn_id: str) -> str:
    """An id of another partition than ``txn_id``'s."""
    return next(k for k in "abcdefgh"
                if manager.partition_for(k) != manager.partition_for(txn_id))


# ---------------------------------------------------------------------------------------------


def test_topic_created_on_first_write_with_kafkas_configs() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        assert TRANSACTION_STATE_TOPIC not in broker.partitions.topics()
        assert manager.get("a") is None            # no topic yet: every id is ours, empty
        md = init(manager, "a", 0)
        assert (md.state, md.producer_epoch) == (S.EMPTY, 0)
        assert broker.partitions.topics()[TRANSACTION_STATE_TOPIC].partitions == 3
        assert broker.partitions.configs[TRANSACTION_STATE_TOPIC] == {
            "cleanup.policy": "compact", "compression.type": "uncompressed",
            "unclean.leader.election.enable": "false", "min.insync.replicas": "1",
            "segment.bytes": "104857600"}
        # The new (empty) partitions loaded at once, at epoch 0.
        assert manager.loading == set() and broker.loaded == []
        assert [manager.coordinator_epoch(k) for k in "abc"] == [0, 0, 0]
        manager.ensure_topic()                      # idempotent
        await manager.wait_committed("a")
        assert broker.partitions.committed == [(tsp(manager.partition_for("a")), 1)]

    run(test)


def test_partition_for_is_kafkas() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        # "a".hashCode() == 97; "polygenelubricants".hashCode() == Integer.MIN_VALUE, whose
        # Utils.abs is 0; "Aa" and "BB" collide (2112).
        assert [manager.partition_for(k) for k in
                ("a", "polygenelubricants", "Aa", "BB", "")] == \
            [97 % 50, 0, 2112 % 50, 2112 % 50, 0]

    run(test, {})


def test_transitions_are_written_in_kafkas_format() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        md = init(manager, "fmt", 42)
        manager.append_transition(md, md.prepare_add_partitions({T0, U0}, NOW + 1))
        written = records(broker, manager.partition_for("fmt"))
        assert [k for k, _v in written] == [transaction_log_key("fmt")] * 2
        values = [v for _k, v in written]
        assert all(v is not None and v[:2] == b"\x00\x01" for v in values)     # value v1
        first, second = (read_transaction_log_value(v) for v in values if v is not None)
        assert (first.state, first.producer_id, first.producer_epoch,
                first.topic_partitions) == (0, 42, 0, frozenset())
        assert (second.state, second.topic_partitions, second.txn_start_timestamp) == \
            (1, frozenset({T0, U0}), NOW + 1)

    run(test)


def test_metadata_comes_back_identical_after_a_restart() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
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
        before = copies(manager)
        assert before["ongoing"].topic_partitions == {T0, T1, U0}
        assert (before["committed"].producer_epoch, before["committed"].state) == \
            (1, S.ONGOING)

        reloaded = await broker.restart(manager)
        after = copies(reloaded)
        assert after == before
        assert {k: (m.state, m.pending_state) for k, m in snapshot(reloaded).items()} == {
            "empty": (S.EMPTY, None), "ongoing": (S.ONGOING, None),
            "aborted": (S.COMPLETE_ABORT, None), "committed": (S.ONGOING, None)}
        # The loaded metadata go on from where they were.
        md = reloaded.get("committed")
        assert md is not None
        reloaded.append_transition(md, md.prepare_abort_or_commit(S.PREPARE_ABORT, NOW + 10))
        assert md.state == S.PREPARE_ABORT

    run(test)


def test_a_load_and_its_pending_completions() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        for name, end in (("committing", S.PREPARE_COMMIT), ("aborting", S.PREPARE_ABORT),
                          ("in-flight", S.PREPARE_COMMIT)):
            md = init(manager, name, len(name))
            manager.append_transition(md, md.prepare_add_partitions({T0}, NOW))
            manager.append_transition(md, md.prepare_abort_or_commit(end, NOW + 1))
        init(manager, "idle", 9)
        in_flight = manager.get("in-flight")
        assert in_flight is not None
        in_flight.prepare_complete(NOW + 2)      # its markers are being written: not listed
        assert sorted(m.transactional_id for m in manager.pending_completions()) == \
            ["aborting", "committing"]
        used = {manager.partition_for(k) for k in ("committing", "aborting", "in-flight",
                                                   "idle")}

        manager.shutdown()
        second = await broker.manager()
        broker.partitions.start()
        # Partitions with records load in the background; the empty ones are loaded at once.
        assert second.loading == used
        for p in range(3):
            if p not in used:
                assert second.coordinator_epoch(next(
                    k for k in "abcdefghij" if second.partition_for(k) == p)) == 0
        await loaded(second)
        assert sorted(broker.loaded) == sorted(used)      # the coordinator is told each
        assert sorted(m.transactional_id for m in second.pending_completions()) == \
            ["aborting", "committing", "in-flight"]

    run(test)


def test_a_tombstoned_id_is_gone_after_a_restart() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        init(manager, "gone", 1)
        init(manager, "kept", 2)
        manager.remove("gone")
        manager.remove("never-known")           # nothing to do
        assert manager.get("gone") is None
        last = records(broker, manager.partition_for("gone"))
        assert [(read_key(k), v is None) for k, v in last if k is not None][-1] == \
            (TransactionKey("gone"), True)
        reloaded = await broker.restart(manager)
        assert (reloaded.get("gone"), reloaded.get("kept") is not None) == (None, True)

    run(test)


def test_records_below_the_log_start_are_not_loaded() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        md = init(manager, "x", 1)
        p = manager.partition_for("x")
        manager.append_transition(md, md.prepare_add_partitions({T0}, NOW))
        # DeleteRecords up to the second record: the load starts from the Ongoing one.
        broker.partitions.delete_records(tsp(p), 1)
        reloaded = await broker.restart(manager)
        again = reloaded.get("x")
        assert again is not None and again.state == S.ONGOING
        broker.partitions.delete_records(tsp(p), 2)
        reloaded = await broker.restart(reloaded)
        assert reloaded.get("x") is None

    run(test)


def test_only_idle_states_can_be_removed() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        md = init(manager, "busy", 1)
        manager.append_transition(md, md.prepare_add_partitions({T0}, NOW))
        with pytest.raises(KafkaError) as illegal:
            manager.remove("busy")
        assert type(illegal.value).__name__ == "IllegalTransitionError"
        md.prepare_abort_or_commit(S.PREPARE_ABORT, NOW)          # pending
        with pytest.raises(ConcurrentTransactionsError):
            manager.remove("busy")

    run(test)


def test_coordinator_load_in_progress_while_a_partition_loads() -> None:
    async def test(broker: Broker) -> None:
        first = await broker.manager()
        init(first, "x", 1)
        p = first.partition_for("x")
        other = other_id(first, "x")
        first.shutdown()
        manager = await broker.manager()
        broker.partitions.start()
        # The load runs in the manager's nursery: until this task yields, it is under way.
        assert p in manager.loading
        md = TransactionMetadata("x", 9, -1, 1)
        calls: list[Callable[[], object]] = [
            lambda: manager.get("x"),
            lambda: manager.put_if_absent(md),
            lambda: manager.check_loaded("x"),
            manager.all,
            lambda: manager.remove("x"),
        ]
        for call in calls:
            with pytest.raises(CoordinatorLoadInProgressError):
                call()
        with pytest.raises(CoordinatorLoadInProgressError):
            manager.append_transition(md, md.prepare_increment_producer_epoch(1, None, NOW))
        assert md.pending_state is None         # the refused append left nothing pending
        assert manager.is_loaded(other) and not manager.is_loaded("x")
        assert manager.pending_completions() == [] and manager.timed_out(NOW * 2) == []
        await loaded(manager)
        loaded_md = manager.get("x")
        assert loaded_md is not None and loaded_md.producer_epoch == 0

    run(test)


def test_resign_forgets_the_partition_and_a_newer_leader_epoch_reloads_it() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        init(manager, "x", 1)
        p = manager.partition_for("x")
        other = other_id(manager, "x")
        init(manager, other, 2)
        broker.partitions.resign(tsp(p))
        with pytest.raises(NotCoordinatorError):
            manager.get("x")
        with pytest.raises(NotCoordinatorError):
            manager.put_if_absent(TransactionMetadata("x", 3, -1, 1))
        assert [m.transactional_id for m in manager.all()] == [other]
        assert manager.get(other) is not None     # other partitions are not touched

        # Another broker leads p meanwhile (epoch 1) and writes to it.
        away = await broker.manager()
        broker.partitions.elect(tsp(p), 1)
        await loaded(away)
        md = away.get("x")
        assert md is not None and away.coordinator_epoch("x") == 1
        away.append_transition(md, md.prepare_add_partitions({T0}, NOW + 1))
        away.shutdown()

        # Back here at epoch 2: the state is read again from the log, with what the other
        # leader wrote; markers now carry epoch 2.
        broker.partitions.register(TRANSACTION_STATE_TOPIC, manager)
        broker.partitions.elect(tsp(p), 2)
        assert p in manager.loading
        await loaded(manager)
        back = manager.get("x")
        assert back is not None and back is not md
        assert (back.state, back.topic_partitions) == (S.ONGOING, {T0})
        assert manager.coordinator_epoch("x") == 2
        assert broker.loaded[-1] == p

    run(test)


def test_an_older_or_the_same_leader_epoch_is_ignored() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        md = init(manager, "x", 1)
        p = manager.partition_for("x")
        broker.partitions.elect(tsp(p), 5)
        await loaded(manager)
        reloaded = manager.get("x")
        assert reloaded is not None and reloaded is not md
        for epoch in (5, 4, 0):
            manager.on_become_leader(p, epoch)
            assert p not in manager.loading
            assert manager.get("x") is reloaded
        assert manager.coordinator_epoch("x") == 5
        # A resignation from an older epoch is not this leadership's.
        manager.on_resign(p, 4)
        assert manager.get("x") is reloaded
        manager.on_resign(p, 5)
        with pytest.raises(NotCoordinatorError):
            manager.get("x")

    run(test)


def test_a_resignation_during_the_load_abandons_it() -> None:
    async def test(broker: Broker) -> None:
        first = await broker.manager()
        init(first, "x", 1)
        p = first.partition_for("x")
        first.shutdown()
        manager = await broker.manager()
        broker.partitions.start()
        assert p in manager.loading
        broker.partitions.resign(tsp(p))
        assert p not in manager.loading
        for _ in range(10):
            await trio.lowlevel.checkpoint()
        with pytest.raises(NotCoordinatorError):
            manager.get("x")
        assert p not in broker.loaded

    run(test)


def test_a_failed_append_clears_the_pending_state() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        init(manager, "f", 1)
        tp = tsp(manager.partition_for("f"))

        def fail_with(exc: Exception, retry: bool = False) -> tuple[type[KafkaError], Any]:
            md = manager.get("f")
            assert md is not None
            broker.partitions.fail_appends[tp] = exc
            try:
                manager.append_transition(md, md.prepare_add_partitions({T0}, NOW),
                                          retry_on_error=(lambda e: retry) if retry else None)
            except KafkaError as e:
                return type(e), md.pending_state
            finally:
                del broker.partitions.fail_appends[tp]
            raise AssertionError("the append did not fail")

        assert fail_with(NotLeaderOrFollowerError()) == (NotCoordinatorError, None)
        assert fail_with(OSError(5, "I/O error")) == (NotCoordinatorError, None)
        assert fail_with(NotEnoughReplicasError()) == (CoordinatorNotAvailableError, None)
        # A caller that retries the same transit keeps it pending.
        assert fail_with(RequestTimedOutError(), retry=True) == \
            (CoordinatorNotAvailableError, S.ONGOING)
        md = manager.get("f")
        assert md is not None
        md.pending_state = None
        assert (md.state, md.topic_partitions) == (S.EMPTY, set())      # nothing applied

    run(test)


def test_a_failed_commit_is_mapped_too() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        init(manager, "f", 1)
        tp = tsp(manager.partition_for("f"))
        for raised, answered in ((RequestTimedOutError(), CoordinatorNotAvailableError),
                                 (NotEnoughReplicasAfterAppendError(),
                                  CoordinatorNotAvailableError),
                                 (NotLeaderOrFollowerError(), NotCoordinatorError)):
            broker.partitions.fail_commits[tp] = raised
            with pytest.raises(answered):
                await manager.wait_committed("f")
        del broker.partitions.fail_commits[tp]
        await manager.wait_committed("f")

    run(test)


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


def test_an_uncached_metadata_is_not_written() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        stray = TransactionMetadata("stray", 1, -1, 1000)
        with pytest.raises(NotCoordinatorError):
            manager.append_transition(stray, stray.prepare_increment_producer_epoch(
                1000, None, NOW))
        assert (stray.pending_state, manager.get("stray")) == (None, None)

    run(test)


def test_timed_out_transactions_and_expired_ids() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
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

        def ids(fn: Callable[[int], list[Any]], now: int) -> list[str]:
            return sorted(x if isinstance(x, str) else x.transactional_id for x in fn(now))

        # Ongoing for longer than its 60 s timeout (start + timeout < now).
        assert ids(manager.timed_out, NOW + 60_100) == []
        assert ids(manager.timed_out, NOW + 60_101) == ["open"]
        # Idle for transactional.id.expiration.ms (1 s) in Empty / Complete*.
        assert ids(manager.expired_ids, NOW + 999) == []
        assert ids(manager.expired_ids, NOW + 1_000) == ["idle-done", "idle-empty"]
        assert ids(manager.expired_ids, NOW + 6_000) == ["fresh", "idle-done", "idle-empty"]
        fresh.prepare_add_partitions({T0}, NOW)          # pending: skipped
        assert ids(manager.expired_ids, NOW + 6_000) == ["idle-done", "idle-empty"]
        fresh.pending_state = None
        assert sorted(manager.remove_expired(NOW + 1_000)) == ["idle-done", "idle-empty"]
        assert sorted(snapshot(manager)) == ["fresh", "open"]
        reloaded = await broker.restart(manager)
        assert sorted(snapshot(reloaded)) == ["fresh", "open"]

    run(test, {**SMALL, "transactional.id.expiration.ms": "1000"})


def test_the_expiration_round_runs_on_the_clock() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        init(manager, "idle", 1, now=broker.time.milliseconds())
        # transactional.id.expiration.ms 1 s, a round every 5 s: gone at the first round.
        await trio.sleep(4.9)
        assert manager.get("idle") is not None
        await trio.sleep(0.2)
        assert manager.get("idle") is None
        assert records(broker, manager.partition_for("idle"))[-1] == \
            (transaction_log_key("idle"), None)

    run(test, {**SMALL, "transactional.id.expiration.ms": "1000",
               "transaction.remove.expired.transaction.cleanup.interval.ms": "5000"})


def test_tombstones_are_split_by_max_message_bytes() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        names = [f"id-{i:04d}" for i in range(150)]
        for i, name in enumerate(names):
            init(manager, name, i)
        by_partition = {manager.partition_for(n) for n in names}
        before = {p: len(broker.partitions.batches(tsp(p))) for p in by_partition}
        assert sorted(manager.remove_expired(NOW + 10_000)) == names
        tombstone_batches = sum(len(broker.partitions.batches(tsp(p))) - before[p]
                                for p in by_partition)
        # Each key costs at most len(key) + 32 bytes of the 1000 - 61 the batch may hold.
        assert tombstone_batches > len(by_partition)
        assert all(b.size <= 1000 for p in by_partition
                   for b in broker.partitions.batches(tsp(p)))

    run(test, {**SMALL, "transactional.id.expiration.ms": "1000",
               "message.max.bytes": "1000"})


def test_timeout_validation_and_coordinator_epoch() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        assert [manager.validate_transaction_timeout_ms(t)
                for t in (0, 1, 60_000, 60_001, -1)] == [False, True, True, False, False]
        assert manager.coordinator_epoch("x") == 0
        init(manager, "x", 1)
        assert manager.coordinator_epoch("x") == 0

    run(test, {**SMALL, "transaction.max.timeout.ms": "60000"})


def test_after_shutdown_not_coordinator() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        init(manager, "x", 1)
        manager.shutdown()
        with pytest.raises(NotCoordinatorError):
            manager.get("x")
        manager.on_become_leader(manager.partition_for("x"), 7)       # ignored
        assert manager.loading == set()

    run(test)


def test_a_broker_without_the_topic_loads_nothing() -> None:
    async def test(broker: Broker) -> None:
        manager = await broker.manager()
        broker.partitions.start()
        assert manager.loading == set()
        assert manager.all() == []
        assert TRANSACTION_STATE_TOPIC not in broker.partitions.topics()

    run(test)


def test_an_election_before_run_loads_once_it_runs() -> None:
    async def test(broker: Broker) -> None:
        first = await broker.manager()
        init(first, "x", 1)
        first.shutdown()
        manager = TransactionStateManager(broker.partitions, lambda: broker.config,
                                          broker.time)
        broker.partitions.register(TRANSACTION_STATE_TOPIC, manager)
        broker.partitions.start()
        with pytest.raises(CoordinatorLoadInProgressError):
            manager.get("x")
        assert broker.nursery is not None
        await broker.nursery.start(manager.run)
        await loaded(manager)
        md = manager.get("x")
        assert md is not None and md.producer_epoch == 0

    run(test)
