"""Transactional produce verification across brokers (KIP-890 part 1, AddPartitionsToTxn v4).

The pure parts (error translation, guards) in isolation; then a real 3-broker cluster whose
topic has one single-replica partition per broker, so that for any transactional id two of
its three partitions are led by brokers that are not the id's coordinator: raw requests
check the leader's verification with the coordinator, the coordinator's v4 answers, and
confluent-kafka's transactional producer end to end.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka import TopicPartition as CKTopicPartition

import kafkapy
from kafkapy.cluster import Cluster
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    ConcurrentTransactionsError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    NetworkError,
    NotCoordinatorError,
    NotEnoughReplicasError,
    ProducerFencedError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
    FindCoordinatorRequest,
)
from kafkapy.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager, for_produce
from tests.clients.client_support import RawClient
from tests.server.test_transaction_apis import (
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_TXN_STATE,
    NONE,
    PRODUCER_FENCED,
    add_partitions,
    end_txn,
    init_ok,
    produce,
    txn_batch,
)

pytestmark = pytest.mark.timeout(120)

TP = TopicPartition("t", 0)
SETTINGS = {"transaction.state.log.num.partitions": 1, "offsets.topic.num.partitions": 1,
            "auto.leader.rebalance.enable": "false"}


# ------------------------------------------------------------------------ pure parts


def test_errors_as_the_producer_gets_them() -> None:
    assert isinstance(for_produce(TP, ProducerFencedError("x")), InvalidProducerEpochError)
    for retriable in (ConcurrentTransactionsError, NotCoordinatorError, NetworkError):
        error = for_produce(TP, retriable("x"))
        assert isinstance(error, NotEnoughReplicasError)
        assert retriable.name in error.message
    kept = InvalidTxnStateError("x")
    assert for_produce(TP, kept) is kept


def test_a_marker_voids_the_guard_of_its_producer_only() -> None:
    manager = AddPartitionsToTxnManager(server=None)        # type: ignore[arg-type]
    a = manager.start_guard(TP, 7)
    b = manager.start_guard(TP, 8)
    manager.on_marker(TP, 7)
    assert not manager.guard_holds(TP, 7, a)
    assert manager.guard_holds(TP, 8, b)
    newer = manager.start_guard(TP, 8)                      # a second produce verifying
    assert not manager.guard_holds(TP, 8, b) and manager.guard_holds(TP, 8, newer)
    manager.end_guard(TP, 8, b)                             # the stale one ends: no effect
    assert manager.guard_holds(TP, 8, newer)
    manager.end_guard(TP, 8, newer)
    assert not manager.guard_holds(TP, 8, newer)


# ------------------------------------------------------------------------ a cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with kafkapy.Cluster(3, SETTINGS, timeout=60) as c:
        c.create_topic("v", {0: [1], 1: [2], 2: [3]})
        for p in range(3):
            c.wait_for_leader("v", p, timeout=30)
        yield c


def _coordinator(cluster: Cluster, txn_id: str) -> int:
    """FindCoordinator (creates ``__transaction_state``), then its one partition's leader."""
    with RawClient(cluster.brokers[1].bootstrap) as c:
        for _ in range(100):
            r = c.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key=txn_id,
                                                                             key_type=1))
            if r.error_code == NONE:
                return int(r.node_id)
        raise AssertionError(f"no coordinator for {txn_id}: {r}")


def _verify(c: RawClient, txn_id: str, pid: int, epoch: int, partitions: list[int]
            ) -> dict[int, int]:
    r = c.request(ApiKey.ADD_PARTITIONS_TO_TXN, 4, AddPartitionsToTxnRequest(transactions=[
        AddPartitionsToTxnTransaction(transactional_id=txn_id, producer_id=pid,
                                      producer_epoch=epoch, verify_only=True,
                                      topics=[AddPartitionsToTxnTopic(name="v",
                                                                      partitions=partitions)])]))
    assert r.error_code == NONE
    [result] = r.results_by_transaction
    assert result.transactional_id == txn_id
    return {p.partition_index: p.partition_error_code
            for t in result.topic_results for p in t.results_by_partition}


def test_a_leader_verifies_with_a_coordinator_elsewhere(cluster: Cluster) -> None:
    coordinator = _coordinator(cluster, "tx-raw")
    assert cluster.leader_of("__transaction_state", 0) == coordinator
    # Partition p of "v" lives on broker p + 1 only: one led by another broker.
    p = next(p for p in range(3) if p + 1 != coordinator)
    q = next(q for q in range(3) if q not in (p, coordinator - 1))
    leader = p + 1
    with RawClient(cluster.brokers[coordinator].bootstrap) as coord, \
            RawClient(cluster.brokers[leader].bootstrap) as lead:
        pid, epoch = init_ok(coord, "tx-raw")
        # Not added to the transaction: the leader asks the coordinator, which says no.
        assert produce(lead, "v", txn_batch(pid, epoch, 0, [b"early"]), partition=p,
                       txn_id="tx-raw") == (INVALID_TXN_STATE, -1)
        # The coordinator hosts no replica of p and still adds it (the cluster has it).
        assert add_partitions(coord, "tx-raw", pid, epoch, {"v": [p]}) == {("v", p): NONE}
        assert _verify(coord, "tx-raw", pid, epoch, [p, q]) == {p: NONE,
                                                                 q: INVALID_TXN_STATE}
        assert _verify(coord, "tx-raw", pid, epoch + 1, [p]) == {p: PRODUCER_FENCED}
        assert _verify(coord, "tx-raw", pid + 1, epoch, [p]) == {p: INVALID_PRODUCER_ID_MAPPING}
        assert produce(lead, "v", txn_batch(pid, epoch, 0, [b"a", b"b"]), partition=p,
                       txn_id="tx-raw") == (NONE, 0)
        # The transaction is open on p now: the next batch is not asked about again.
        assert produce(lead, "v", txn_batch(pid, epoch, 2, [b"c"]), partition=p,
                       txn_id="tx-raw") == (NONE, 2)
        assert end_txn(coord, "tx-raw", pid, epoch, True) == NONE
        # Its marker closed the transaction on p: a batch after it is verified again.
        assert produce(lead, "v", txn_batch(pid, epoch, 3, [b"late"]), partition=p,
                       txn_id="tx-raw") == (INVALID_TXN_STATE, -1)
        # Only the coordinator answers for the id.
        other = next(b for b in cluster.brokers if b != coordinator)
        with RawClient(cluster.brokers[other].bootstrap) as elsewhere:
            assert _verify(elsewhere, "tx-raw", pid, epoch, [p]) == {
                p: NotCoordinatorError.code}


def test_transactions_over_partitions_of_other_brokers(cluster: Cluster) -> None:
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                         "transactional.id": "tx-client", "linger.ms": 1})
    producer.init_transactions(30)
    expected: dict[int, list[bytes]] = {0: [], 1: [], 2: []}
    for n in range(6):
        producer.begin_transaction()
        for p in range(3):
            value = f"{n}-{p}".encode()
            producer.produce("v", value=value, partition=p)
            if n % 3 != 2:
                expected[p].append(value)
        if n % 3 == 2:
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                         "group.id": "verify-reader", "isolation.level": "read_committed",
                         "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([CKTopicPartition("v", p, 0) for p in range(3)])
        got: dict[int, list[bytes]] = {0: [], 1: [], 2: []}
        eof: set[int] = set()

        def ours() -> dict[int, list[bytes]]:
            # The raw test's records on its partition read first; only ours are compared.
            return {p: [v for v in vs if b"-" in v] for p, vs in got.items()}

        for _ in range(100):
            for msg in consumer.consume(100, timeout=0.5):
                if msg.error() is None:
                    got[msg.partition()].append(msg.value())
                elif msg.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(msg.partition())
            if len(eof) == 3 and ours() == expected:
                break
        assert ours() == expected
    finally:
        consumer.close()
