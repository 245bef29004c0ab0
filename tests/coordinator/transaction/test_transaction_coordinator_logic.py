"""TransactionCoordinator (kafkapy.coordinator.transaction.transaction_coordinator) over the
in-memory partitions (tests/coordinator/memory_partitions.py) and Trio's MockClock: no broker,
no sleeps. The two-phase end of a transaction (markers in every partition, then the Complete
state), completion of transactions left prepared once a partition is (re)loaded, the
coordinator's own aborts of timed-out transactions driven by the clock, markers that fail and
are retried, AddOffsetsToTxn's ``__consumer_offsets`` partition, and the answers while a
partition loads or after it is resigned.

The wire answers (error codes per request version, fetch isolation, restarts of a real broker)
are tests/coordinator/transaction/test_transaction_coordinator.py's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

import pytest
import trio
import trio.testing

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig
from kafkapy.coordinator.internal_topic import partition_for
from kafkapy.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from kafkapy.coordinator.transaction.transaction_metadata import TransactionState
from kafkapy.coordinator.transaction.transaction_state_manager import TRANSACTION_STATE_TOPIC
from kafkapy.errors import (
    ConcurrentTransactionsError,
    CoordinatorLoadInProgressError,
    NotCoordinatorError,
    NotLeaderOrFollowerError,
    ProducerFencedError,
    UnknownTopicOrPartitionError,
)
from kafkapy.protocol.records import CONTROL_ABORT, CONTROL_COMMIT, decode_control_record
from tests.coordinator.memory_partitions import OFFSETS_TOPIC, MemoryPartitions

S = TransactionState
SMALL = {"transaction.state.log.num.partitions": "3", "offsets.topic.num.partitions": "4"}
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
NOW = 1_700_000_000_000


class Cluster:
    """In-memory partitions (topic ``t`` with 2 partitions), a config, the mock clock."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.partitions = MemoryPartitions(NOW)
        self.partitions.create_topic("t", 2)
        self.config = BrokerConfig.from_properties(dict(props))
        self.time = MockTime(NOW)
        self.nursery: trio.Nursery | None = None
        self.completed: list[tuple[int, set[int], bool]] = []

    async def coordinator(self) -> TransactionCoordinator:
        """A coordinator, running and registered for ``__transaction_state``."""
        c = TransactionCoordinator(self.partitions, self.partitions, self.partitions,
                                   lambda: self.config, self.time)
        assert self.nursery is not None
        await self.nursery.start(c.run)
        self.partitions.register(TRANSACTION_STATE_TOPIC, c)
        return c

    async def restart(self, old: TransactionCoordinator) -> TransactionCoordinator:
        old.shutdown()
        c = await self.coordinator()
        self.partitions.start()
        return c

    def on_txn_completed(self, producer_id: int, partitions: set[int], commit: bool) -> None:
        self.completed.append((producer_id, partitions, commit))

    def markers(self, tp: TopicPartition) -> list[tuple[int, int, int, int]]:
        """(producer id, producer epoch, ABORT/COMMIT, coordinator epoch) per marker."""
        out = []
        for b in self.partitions.batches(tp):
            if b.is_control:
                control = decode_control_record(b.records()[0])
                out.append((b.producer_id, b.producer_epoch, control.type,
                            control.coordinator_epoch))
        return out


def run(test: Callable[[Cluster], Awaitable[None]], props: Mapping[str, str] = SMALL) -> None:
    async def main() -> None:
        cluster = Cluster(props)
        async with trio.open_nursery() as nursery:
            cluster.nursery = nursery
            await test(cluster)
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


async def eventually(condition: Callable[[], bool], seconds: float = 60) -> None:
    """Until ``condition()``, on the mock clock."""
    with trio.fail_after(seconds):
        while not condition():
            await trio.sleep(0.001)


def state(c: TransactionCoordinator, txn_id: str) -> TransactionState:
    return c.describe(txn_id).state


async def open_transaction(c: TransactionCoordinator, txn_id: str,
                           tps: tuple[TopicPartition, ...] = (T0, T1), timeout_ms: int = 60_000
                           ) -> tuple[int, int]:
    pid, epoch = await c.init_producer_id(txn_id, timeout_ms)
    await c.add_partitions(txn_id, pid, epoch, tps)
    return pid, epoch


# ---------------------------------------------------------------------------------------------


def test_end_txn_writes_a_marker_in_each_partition_then_completes() -> None:
    async def test(cluster: Cluster) -> None:
        c = await cluster.coordinator()
        pid, epoch = await open_transaction(c, "tx")
        assert (pid, epoch) == (0, 0)
        assert state(c, "tx") == S.ONGOING
        await c.end_txn("tx", pid, epoch, commit=True)
        assert state(c, "tx") == S.COMPLETE_COMMIT
        assert cluster.markers(T0) == cluster.markers(T1) == [(pid, 0, CONTROL_COMMIT, 0)]
        await c.add_partitions("tx", pid, epoch, [T0])
        await c.end_txn("tx", pid, epoch, commit=False)
        assert cluster.markers(T0)[-1] == (pid, 0, CONTROL_ABORT, 0)
        assert cluster.markers(T1) == [(pid, 0, CONTROL_COMMIT, 0)]     # not in this one
        # The four transitions of each transaction were committed before the answers.
        tp = TopicPartition(TRANSACTION_STATE_TOPIC, c.state.partition_for("tx"))
        assert [end for p, end in cluster.partitions.committed if p == tp] == \
            list(range(1, 8))

    run(test)


def test_producer_ids_come_from_the_blocks() -> None:
    async def test(cluster: Cluster) -> None:
        c = await cluster.coordinator()
        assert [await c.init_producer_id(None, 1000) for _ in range(3)] == \
            [(0, 0), (1, 0), (2, 0)]
        assert await c.init_producer_id("tx", 1000) == (3, 0)
        assert await c.init_producer_id("tx", 1000) == (3, 1)

    run(test)


def test_a_prepared_transaction_is_completed_once_its_partition_is_loaded() -> None:
    async def test(cluster: Cluster) -> None:
        c = await cluster.coordinator()
        pid, epoch = await open_transaction(c, "cut-short")
        # The coordinator stopped between PrepareCommit and the markers.
        m = c.describe("cut-short")
        c.state.append_transition(m, m.prepare_abort_or_commit(S.PREPARE_COMMIT, NOW))
        assert cluster.markers(T0) == []

        again = await cluster.restart(c)
        with pytest.raises(CoordinatorLoadInProgressError):
            again.describe("cut-short")
        await eventually(lambda: not again.state.loading and
                         state(again, "cut-short") == S.COMPLETE_COMMIT)
        assert cluster.markers(T0) == cluster.markers(T1) == [(pid, epoch, CONTROL_COMMIT, 0)]
        assert again.describe("cut-short").topic_partitions == set()

    run(test)


def test_a_new_leader_epoch_reloads_and_its_markers_carry_it() -> None:
    async def test(cluster: Cluster) -> None:
        c = await cluster.coordinator()
        pid, epoch = await open_transaction(c, "tx")
        p = c.state.partition_for("tx")
        tp = TopicPartition(TRANSACTION_STATE_TOPIC, p)
        m = c.describe("tx")
        c.state.append_transition(m, m.prepare_abort_or_commit(S.PREPARE_ABORT, NOW))
        cluster.partitions.resign(tp)
        with pytest.raises(NotCoordinatorError):
            c.describe("tx")
        with pytest.raises(NotCoordinatorError):
            await c.end_txn("tx", pid, epoch, commit=False)
        with pytest.raises(NotCoordinatorError):
            await c.init_producer_id("tx", 1000)
        assert c.list_transactions([], []) == ([], [])
        cluster.partitions.elect(tp, 3)
        with pytest.raises(CoordinatorLoadInProgressError):
            await c.init_producer_id("tx", 1000)
        await eventually(lambda: not c.state.loading and
                         state(c, "tx") == S.COMPLETE_ABORT)
        assert cluster.markers(T0) == [(pid, epoch, CONTROL_ABORT, 3)]
        # A stale election changes nothing.
        c.on_become_leader(p, 2)
        assert not c.state.loading and state(c, "tx") == S.COMPLETE_ABORT

    run(test)


def test_a_timed_out_transaction_is_aborted_and_its_producer_fenced() -> None:
    async def test(cluster: Cluster) -> None:
        c = await cluster.coordinator()
        pid, epoch = await open_transaction(c, "slow", (T0,), timeout_ms=1000)
        await trio.sleep(0.95)
        assert state(c, "slow") == S.ONGOING
        await trio.sleep(0.2)          # past the timeout and a 100 ms round
        assert state(c, "slow") == S.COMPLETE_ABORT
        m = c.describe("slow")
        assert (m.producer_id, m.producer_epoch, m.topic_partitions) == (pid, epoch + 1, set())
        assert cluster.markers(T0) == [(pid, epoch + 1, CONTROL_ABORT, 0)]
        with pytest.raises(ProducerFencedError):
            await c.end_txn("slow", pid, epoch, commit=True)
        assert await c.init_producer_id("slow", 1000) == (pid, epoch + 2)

    run(test, {**SMALL, "transaction.abort.timed.out.transaction.cleanup.interval.ms": "100"})


def test_a_failed_marker_is_written_again_by_the_next_round() -> None:
    async def test(cluster: Cluster) -> None:
        c = await cluster.coordinator()
        pid, epoch = await open_transaction(c, "tx")
        cluster.partitions.fail_appends[T1] = NotLeaderOrFollowerError("moved")
        await c.end_txn("tx", pid, epoch, commit=True)
        assert state(c, "tx") == S.PREPARE_COMMIT
        assert cluster.markers(T0) == [(pid, epoch, CONTROL_COMMIT, 0)]
        with pytest.raises(ConcurrentTransactionsError):
            await c.init_producer_id("tx", 1000)
        del cluster.partitions.fail_appends[T1]
        await trio.sleep(1.1)
        assert state(c, "tx") == S.COMPLETE_COMMIT
        assert cluster.markers(T1) == [(pid, epoch, CONTROL_COMMIT, 0)]
        # A partition deleted meanwhile needs no marker.
        await c.add_partitions("tx", pid, epoch, [T0])
        cluster.partitions.fail_appends[T0] = UnknownTopicOrPartitionError("deleted")
        await c.end_txn("tx", pid, epoch, commit=False)
        assert state(c, "tx") == S.COMPLETE_ABORT

    run(test, {**SMALL, "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000"})


def test_add_offsets_adds_the_groups_offsets_partition() -> None:
    async def test(cluster: Cluster) -> None:
        cluster.partitions.register_txn_completion(cluster)
        c = await cluster.coordinator()
        pid, epoch = await c.init_producer_id("tx", 60_000)
        await c.add_offsets("tx", pid, epoch, "group-1")
        # The topic did not exist: created as the group coordinator creates it.
        assert cluster.partitions.topics()[OFFSETS_TOPIC].partitions == 4
        assert cluster.partitions.configs[OFFSETS_TOPIC] == {
            "cleanup.policy": "compact", "segment.bytes": "104857600",
            "compression.type": "producer"}
        p = partition_for("group-1", 4)
        assert c.describe("tx").topic_partitions == {TopicPartition(OFFSETS_TOPIC, p)}
        await c.end_txn("tx", pid, epoch, commit=True)
        assert cluster.completed == [(pid, {p}, True)]
        assert cluster.markers(TopicPartition(OFFSETS_TOPIC, p)) == \
            [(pid, epoch, CONTROL_COMMIT, 0)]

    run(test)


def test_shutdown_answers_not_coordinator() -> None:
    async def test(cluster: Cluster) -> None:
        c = await cluster.coordinator()
        await c.init_producer_id("tx", 1000)
        c.shutdown()
        with pytest.raises(NotCoordinatorError):
            c.describe("tx")

    run(test)
