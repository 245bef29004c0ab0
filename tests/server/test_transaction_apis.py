"""The transaction coordinator over a raw socket to a real broker: Kafka's exact error codes for
InitProducerId (22), AddPartitionsToTxn (24 v0-3), AddOffsetsToTxn (25), EndTxn (26),
TxnOffsetCommit (28), DescribeProducers (61), DescribeTransactions (65) and ListTransactions
(66), and what transactions do to the partitions they touch: KIP-890 part 1 verification of
transactional Produce requests, the last stable offset, the aborted transactions a
read_committed Fetch lists, ListOffsets(latest, read_committed), transactional offsets and
OffsetFetch's RequireStable, coordinator-side aborts (a new producer of the id, a timeout)
and restarts in the middle of a transaction.

Requests are built with kafkapy.protocol's classes and sent with ``RawClient``; batches are
hand-made with ``build_batch(..., producer_id=, producer_epoch=, base_sequence=,
is_transactional=True)``. Versions stay inside what the broker advertises
(``RECOMMENDED_VERSIONS``); the versions that answer old clients differently (PRODUCER_FENCED
is INVALID_PRODUCER_EPOCH for InitProducerId < v4 and the other transaction APIs < v2) are
each checked.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import pytest

from kafkapy.protocol import API_KEYS
from kafkapy.protocol.classes import struct_classes
from kafkapy.protocol.records import build_batch, decode_control_record, scan_batches
from kafkapy.server.kafka_apis import RECOMMENDED_VERSIONS
from kafkapy.testing import BrokerHandle
from tests.clients.client_support import RawClient

pytestmark = pytest.mark.timeout(60)

PRODUCE, FETCH, LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH = 0, 1, 2, 8, 9
INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN = 22, 24, 25, 26
TXN_OFFSET_COMMIT, DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 28, 61, 65, 66
REQ = {key: struct_classes(API_KEYS[key].request.body)
       for key in (PRODUCE, FETCH, LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH, INIT_PRODUCER_ID,
                   ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN, TXN_OFFSET_COMMIT,
                   DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS)}

# Versions used (each inside the advertised range, checked by the first test).
PRODUCE_V, FETCH_V, LIST_OFFSETS_V, OFFSET_COMMIT_V, OFFSET_FETCH_V = 9, 12, 7, 2, 7

NONE, UNKNOWN_TOPIC_OR_PARTITION, COORDINATOR_LOAD_IN_PROGRESS = 0, 3, 14
INVALID_REQUEST, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE = 42, 47, 48
INVALID_PRODUCER_ID_MAPPING, INVALID_TRANSACTION_TIMEOUT, CONCURRENT_TRANSACTIONS = 49, 50, 51
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, OPERATION_NOT_ATTEMPTED = 53, 55
UNSTABLE_OFFSET_COMMIT, PRODUCER_FENCED, TRANSACTIONAL_ID_NOT_FOUND = 88, 90, 105
INVALID_REGULAR_EXPRESSION = 128

READ_UNCOMMITTED, READ_COMMITTED = 0, 1
ABORT, COMMIT = 0, 1            # control record types
OFFSETS_TOPIC = "__consumer_offsets"

FAST = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "4",
        "transaction.state.log.num.partitions": "4"}


def now_ms() -> int:
    return int(time.time() * 1000)


# ================================================================ request helpers


def init(c: RawClient, txn_id: str | None, *, timeout_ms: int = 60_000, version: int = 4,
         producer_id: int = -1, epoch: int = -1) -> Any:
    """InitProducerId; the response body."""
    return c.request(INIT_PRODUCER_ID, version, REQ[INIT_PRODUCER_ID]["InitProducerIdRequest"](
        transactional_id=txn_id, transaction_timeout_ms=timeout_ms, producer_id=producer_id,
        producer_epoch=epoch))


def init_ok(c: RawClient, txn_id: str | None, *, timeout_ms: int = 60_000) -> tuple[int, int]:
    r = init(c, txn_id, timeout_ms=timeout_ms)
    assert r.error_code == NONE, f"InitProducerId {txn_id!r}: {r}"
    return int(r.producer_id), int(r.producer_epoch)


def add_partitions(c: RawClient, txn_id: str, pid: int, epoch: int,
                   tps: Mapping[str, Sequence[int]], version: int = 3
                   ) -> dict[tuple[str, int], int]:
    """AddPartitionsToTxn (client versions 0-3); {(topic, partition): error code}."""
    C = REQ[ADD_PARTITIONS_TO_TXN]
    r = c.request(ADD_PARTITIONS_TO_TXN, version, C["AddPartitionsToTxnRequest"](
        v3_and_below_transactional_id=txn_id, v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch, v3_and_below_topics=[
            C["AddPartitionsToTxnTopic"](name=t, partitions=list(ps)) for t, ps in tps.items()]))
    return {(t.name, p.partition_index): p.partition_error_code
            for t in r.results_by_topic_v3_and_below for p in t.results_by_partition}


def add_offsets(c: RawClient, txn_id: str, pid: int, epoch: int, group: str,
                version: int = 3) -> int:
    r = c.request(ADD_OFFSETS_TO_TXN, version, REQ[ADD_OFFSETS_TO_TXN]["AddOffsetsToTxnRequest"](
        transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, group_id=group))
    return int(r.error_code)


def end_txn(c: RawClient, txn_id: str, pid: int, epoch: int, commit: bool,
            version: int = 3) -> int:
    r = c.request(END_TXN, version, REQ[END_TXN]["EndTxnRequest"](
        transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, committed=commit))
    return int(r.error_code)


def txn_batch(pid: int, epoch: int, seq: int, values: Sequence[bytes],
              timestamp: int | None = None) -> bytes:
    ts = now_ms() if timestamp is None else timestamp
    return build_batch([(None, v, [], ts) for v in values], producer_id=pid,
                       producer_epoch=epoch, base_sequence=seq, is_transactional=True)


def produce(c: RawClient, topic: str, batch: bytes, *, partition: int = 0,
            txn_id: str | None = None) -> tuple[int, int]:
    """One acks=all Produce; (error code, base offset)."""
    C = REQ[PRODUCE]
    r = c.request(PRODUCE, PRODUCE_V, C["ProduceRequest"](
        transactional_id=txn_id, acks=-1, timeout_ms=10_000, topic_data=[
            C["TopicProduceData"](name=topic, partition_data=[
                C["PartitionProduceData"](index=partition, records=batch)])]))
    [p] = r.responses[0].partition_responses
    return int(p.error_code), int(p.base_offset)


@attrs.frozen
class Batch:
    base_offset: int
    last_offset: int
    producer_id: int
    producer_epoch: int
    transactional: bool
    control: int | None                 # the control record's type (ABORT/COMMIT), or None
    values: tuple[bytes | None, ...]


@attrs.frozen
class Fetched:
    error_code: int
    high_watermark: int
    last_stable_offset: int
    aborted: list[tuple[int, int]] | None   # (producer id, first offset); None when null
    batches: list[Batch]

    @property
    def data_offsets(self) -> list[int]:
        """The offsets of the data records returned (control batches left out)."""
        return [o for b in self.batches if b.control is None
                for o in range(b.base_offset, b.last_offset + 1)]

    @property
    def markers(self) -> list[tuple[int, int, int, int]]:
        """(offset, producer id, producer epoch, ABORT/COMMIT) of each control batch."""
        return [(b.base_offset, b.producer_id, b.producer_epoch, b.control)
                for b in self.batches if b.control is not None]


def fetch(c: RawClient, topic: str, partition: int = 0, *,
          isolation: int = READ_UNCOMMITTED, offset: int = 0) -> Fetched:
    C = REQ[FETCH]
    r = c.request(FETCH, FETCH_V, C["FetchRequest"](
        max_wait_ms=0, min_bytes=0, max_bytes=1 << 22, isolation_level=isolation, topics=[
            C["FetchTopic"](topic=topic, partitions=[C["FetchPartition"](
                partition=partition, fetch_offset=offset, partition_max_bytes=1 << 22)])]))
    [p] = r.responses[0].partitions
    batches = []
    for b in scan_batches(bytes(p.records or b"")).batches:
        records = list(b.records())
        control = decode_control_record(records[0]).type if b.is_control else None
        batches.append(Batch(b.base_offset, b.last_offset, b.producer_id, b.producer_epoch,
                             b.is_transactional, control,
                             tuple(None if r.value is None else bytes(r.value)
                                   for r in records)))
    aborted = None if p.aborted_transactions is None else \
        [(int(a.producer_id), int(a.first_offset)) for a in p.aborted_transactions]
    return Fetched(int(p.error_code), int(p.high_watermark), int(p.last_stable_offset),
                   aborted, batches)


def latest_offset(c: RawClient, topic: str, isolation: int, partition: int = 0) -> int:
    """ListOffsets with timestamp -1 (latest)."""
    C = REQ[LIST_OFFSETS]
    r = c.request(LIST_OFFSETS, LIST_OFFSETS_V, C["ListOffsetsRequest"](
        replica_id=-1, isolation_level=isolation, topics=[C["ListOffsetsTopic"](
            name=topic, partitions=[C["ListOffsetsPartition"](
                partition_index=partition, current_leader_epoch=-1, timestamp=-1)])]))
    [p] = r.topics[0].partitions
    assert p.error_code == NONE, p
    return int(p.offset)


def describe(c: RawClient, txn_ids: Sequence[str]) -> list[Any]:
    r = c.request(DESCRIBE_TRANSACTIONS, 0,
                  REQ[DESCRIBE_TRANSACTIONS]["DescribeTransactionsRequest"](
                      transactional_ids=list(txn_ids)))
    assert [s.transactional_id for s in r.transaction_states] == list(txn_ids)
    return list(r.transaction_states)


def describe_one(c: RawClient, txn_id: str) -> Any:
    [state] = describe(c, [txn_id])
    return state


def topics_of(state: Any) -> list[tuple[str, list[int]]]:
    return sorted((t.topic, sorted(t.partitions)) for t in state.topics)


def list_txns(c: RawClient, version: int = 0, *, states: Iterable[str] = (),
              pids: Iterable[int] = (), duration: int = -1, pattern: str | None = None
              ) -> tuple[int, list[str], set[tuple[str, int, str]]]:
    """ListTransactions: (error code, unknown state filters, {(id, producer id, state)})."""
    r = c.request(LIST_TRANSACTIONS, version, REQ[LIST_TRANSACTIONS]["ListTransactionsRequest"](
        state_filters=list(states), producer_id_filters=list(pids), duration_filter=duration,
        transactional_id_pattern=pattern))
    return (int(r.error_code), list(r.unknown_state_filters),
            {(s.transactional_id, int(s.producer_id), s.transaction_state)
             for s in r.transaction_states})


def describe_producers(c: RawClient, tps: Mapping[str, Sequence[int]]
                       ) -> dict[tuple[str, int], tuple[int, dict[int, Any]]]:
    """{(topic, partition): (error code, {producer id: ProducerState})}."""
    C = REQ[DESCRIBE_PRODUCERS]
    r = c.request(DESCRIBE_PRODUCERS, 0, C["DescribeProducersRequest"](topics=[
        C["TopicRequest"](name=t, partition_indexes=list(ps)) for t, ps in tps.items()]))
    return {(t.name, p.partition_index): (int(p.error_code),
                                          {s.producer_id: s for s in p.active_producers})
            for t in r.topics for p in t.partitions}


def commit_offsets(c: RawClient, group: str, topic: str, offsets: Mapping[int, int]) -> None:
    """A plain (non-transactional) OffsetCommit of a group without members."""
    C = REQ[OFFSET_COMMIT]
    r = c.request(OFFSET_COMMIT, OFFSET_COMMIT_V, C["OffsetCommitRequest"](
        group_id=group, generation_id_or_member_epoch=-1, member_id="", retention_time_ms=-1,
        topics=[C["OffsetCommitRequestTopic"](name=topic, partitions=[
            C["OffsetCommitRequestPartition"](partition_index=p, committed_offset=o,
                                              committed_metadata="")
            for p, o in offsets.items()])]))
    assert [p.error_code for t in r.topics for p in t.partitions] == [NONE] * len(offsets)


def txn_offset_commit(c: RawClient, version: int, txn_id: str, group: str, pid: int,
                      epoch: int, topic: str, offsets: Mapping[int, int]) -> dict[int, int]:
    """TxnOffsetCommit; {partition: error code}. v3 carries no member (generation -1)."""
    C = REQ[TXN_OFFSET_COMMIT]
    r = c.request(TXN_OFFSET_COMMIT, version, C["TxnOffsetCommitRequest"](
        transactional_id=txn_id, group_id=group, producer_id=pid, producer_epoch=epoch,
        generation_id=-1, member_id="", group_instance_id=None,
        topics=[C["TxnOffsetCommitRequestTopic"](name=topic, partitions=[
            C["TxnOffsetCommitRequestPartition"](partition_index=p, committed_offset=o,
                                                 committed_metadata="")
            for p, o in offsets.items()])]))
    [t] = r.topics
    assert t.name == topic
    return {p.partition_index: p.error_code for p in t.partitions}


def offset_fetch(c: RawClient, group: str, topic: str, partitions: Sequence[int], *,
                 stable: bool) -> dict[int, tuple[int, int]]:
    """OffsetFetch v7; {partition: (error code, committed offset)}. Asserts no group error."""
    r = offset_fetch_raw(c, group, topic, partitions, stable=stable)
    assert r.error_code == NONE, r
    return {p.partition_index: (p.error_code, p.committed_offset)
            for t in r.topics for p in t.partitions}


def offset_fetch_raw(c: RawClient, group: str, topic: str, partitions: Sequence[int], *,
                     stable: bool) -> Any:
    C = REQ[OFFSET_FETCH]
    return c.request(OFFSET_FETCH, OFFSET_FETCH_V, C["OffsetFetchRequest"](
        group_id=group, topics=[C["OffsetFetchRequestTopic"](
            name=topic, partition_indexes=list(partitions))], require_stable=stable))


def wait_txn_coordinator(c: RawClient, txn_id: str, timeout: float = 10.0) -> Any:
    """DescribeTransactions until the id's partition has loaded; its state."""
    deadline = time.monotonic() + timeout
    while (state := describe_one(c, txn_id)).error_code == COORDINATOR_LOAD_IN_PROGRESS:
        assert time.monotonic() < deadline, "the transaction coordinator did not load"
        time.sleep(0.01)
    return state


def wait_group_coordinator(c: RawClient, group: str, topic: str, timeout: float = 10.0
                           ) -> None:
    deadline = time.monotonic() + timeout
    while offset_fetch_raw(c, group, topic, [0], stable=False).error_code == \
            COORDINATOR_LOAD_IN_PROGRESS:
        assert time.monotonic() < deadline, "the group coordinator did not load"
        time.sleep(0.01)


# ======================================================================== tests


def test_versions_used_are_advertised() -> None:
    used = {PRODUCE: [PRODUCE_V], FETCH: [FETCH_V], LIST_OFFSETS: [LIST_OFFSETS_V],
            OFFSET_COMMIT: [OFFSET_COMMIT_V], OFFSET_FETCH: [OFFSET_FETCH_V],
            INIT_PRODUCER_ID: [0, 1, 2, 3, 4], ADD_PARTITIONS_TO_TXN: [0, 1, 2, 3],
            ADD_OFFSETS_TO_TXN: [0, 1, 2, 3], END_TXN: [0, 1, 2, 3, 4],
            TXN_OFFSET_COMMIT: [0, 3], DESCRIBE_PRODUCERS: [0], DESCRIBE_TRANSACTIONS: [0],
            LIST_TRANSACTIONS: [0, 1, 2]}
    for key, versions in used.items():
        low, high = RECOMMENDED_VERSIONS[key]
        assert all(low <= v <= high for v in versions), (key, versions, (low, high))


@pytest.mark.kafka_broker(FAST)
def test_init_producer_id(kafka_broker: BrokerHandle) -> None:
    with RawClient(kafka_broker.bootstrap_servers) as c:
        # No transactional id (an idempotent producer): a fresh id at epoch 0, every time.
        seen: set[int] = set()
        for version in range(5):
            r = init(c, None, version=version)
            assert (r.error_code, r.producer_epoch) == (NONE, 0), r
            assert r.producer_id >= 0 and r.producer_id not in seen
            seen.add(r.producer_id)
        # A transactional id: epoch 0, then the same producer id at epoch 1.
        for version in range(5):
            txn_id = f"tx-v{version}"
            first = init(c, txn_id, version=version)
            assert (first.error_code, first.producer_epoch) == (NONE, 0), first
            assert first.producer_id not in seen
            seen.add(first.producer_id)
            second = init(c, txn_id, version=version)
            assert (second.error_code, second.producer_id, second.producer_epoch) == \
                (NONE, first.producer_id, 1)
        # An empty transactional id.
        for version in (0, 4):
            r = init(c, "", version=version)
            assert (r.error_code, r.producer_id, r.producer_epoch) == (INVALID_REQUEST, -1, -1)
        # Timeouts: (0, transaction.max.timeout.ms], 900000 by default.
        for timeout in (900_001, 0, -1):
            r = init(c, "big", timeout_ms=timeout)
            assert (r.error_code, r.producer_id, r.producer_epoch) == \
                (INVALID_TRANSACTION_TIMEOUT, -1, -1), timeout
        assert init(c, "big", timeout_ms=900_000).error_code == NONE
        # KIP-360 (v3+): the producer id and epoch the client expects to bump.
        pid, epoch = init_ok(c, "k")
        assert epoch == 0
        r = init(c, "k", version=4, producer_id=pid + 1000, epoch=0)
        assert (r.error_code, r.producer_id, r.producer_epoch) == (PRODUCER_FENCED, -1, -1)
        r = init(c, "k", version=3, producer_id=pid + 1000, epoch=0)
        assert (r.error_code, r.producer_id) == (INVALID_PRODUCER_EPOCH, -1)  # v3: no 90 yet
        r = init(c, "k", version=4, producer_id=pid, epoch=-1)
        assert r.error_code == INVALID_REQUEST              # an id without an epoch
        r = init(c, "k", version=4, producer_id=pid, epoch=0)
        assert (r.error_code, r.producer_id, r.producer_epoch) == (NONE, pid, 1)
        # A retry of that bump (the expected epoch is the previous one): the same answer.
        r = init(c, "k", version=4, producer_id=pid, epoch=0)
        assert (r.error_code, r.producer_id, r.producer_epoch) == (NONE, pid, 1)
        r = init(c, "k", version=4, producer_id=pid, epoch=7)
        assert r.error_code == PRODUCER_FENCED


@pytest.mark.kafka_broker(FAST)
def test_fenced_epoch_and_wrong_producer_id(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=1)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        pid, old = init_ok(c, "tx")
        same, new = init_ok(c, "tx")
        assert (same, old, new) == (pid, 0, 1)
        # The old epoch is fenced: PRODUCER_FENCED from v2, INVALID_PRODUCER_EPOCH before.
        for version, code in ((0, INVALID_PRODUCER_EPOCH), (1, INVALID_PRODUCER_EPOCH),
                              (2, PRODUCER_FENCED), (3, PRODUCER_FENCED)):
            assert add_partitions(c, "tx", pid, old, {"t": [0]}, version) == \
                {("t", 0): code}, version
            assert add_offsets(c, "tx", pid, old, "g", version) == code, version
        for version, code in ((0, INVALID_PRODUCER_EPOCH), (1, INVALID_PRODUCER_EPOCH),
                              (2, PRODUCER_FENCED), (3, PRODUCER_FENCED), (4, PRODUCER_FENCED)):
            assert end_txn(c, "tx", pid, old, True, version) == code, version
            assert end_txn(c, "tx", pid, old, False, version) == code, version
        # Another producer id, or an id the coordinator does not know.
        for version in range(4):
            assert add_partitions(c, "tx", pid + 1, new, {"t": [0]}, version) == \
                {("t", 0): INVALID_PRODUCER_ID_MAPPING}
            assert add_partitions(c, "nobody", pid, new, {"t": [0]}, version) == \
                {("t", 0): INVALID_PRODUCER_ID_MAPPING}
            assert add_offsets(c, "tx", pid + 1, new, "g", version) == \
                INVALID_PRODUCER_ID_MAPPING
        assert end_txn(c, "tx", pid + 1, new, True) == INVALID_PRODUCER_ID_MAPPING
        assert end_txn(c, "nobody", pid, new, True) == INVALID_PRODUCER_ID_MAPPING
        # None of it changed the transaction.
        state = describe_one(c, "tx")
        assert (state.error_code, state.transaction_state, state.producer_id,
                state.producer_epoch, state.topics) == (NONE, "Empty", pid, new, [])
        assert add_partitions(c, "tx", pid, new, {"t": [0]}) == {("t", 0): NONE}
        # The fenced producer's transactional produce is refused too.
        assert produce(c, "t", txn_batch(pid, old, 0, [b"zombie"]), txn_id="tx") == \
            (INVALID_PRODUCER_EPOCH, -1)
        assert kafka_broker.end_offsets("t") == {0: 0}


@pytest.mark.kafka_broker(FAST)
def test_add_partitions_with_an_unknown_partition(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=2)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        pid, epoch = init_ok(c, "tx")
        for version in range(4):
            assert add_partitions(c, "tx", pid, epoch, {"t": [0, 1, 2], "nope": [0]},
                                  version) == {
                ("t", 0): OPERATION_NOT_ATTEMPTED, ("t", 1): OPERATION_NOT_ATTEMPTED,
                ("t", 2): UNKNOWN_TOPIC_OR_PARTITION, ("nope", 0): UNKNOWN_TOPIC_OR_PARTITION}
        state = describe_one(c, "tx")
        assert (state.transaction_state, state.topics) == ("Empty", [])
        assert add_partitions(c, "tx", pid, epoch, {"t": [0, 1]}) == \
            {("t", 0): NONE, ("t", 1): NONE}
        assert topics_of(describe_one(c, "tx")) == [("t", [0, 1])]


@pytest.mark.kafka_broker(FAST)
def test_end_txn_by_state(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=1)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        pid, epoch = init_ok(c, "tx")
        for version in (0, 3, 4):
            assert end_txn(c, "tx", pid, epoch, True, version) == INVALID_TXN_STATE
            assert end_txn(c, "tx", pid, epoch, False, version) == INVALID_TXN_STATE
        assert add_partitions(c, "tx", pid, epoch, {"t": [0]}) == {("t", 0): NONE}
        assert produce(c, "t", txn_batch(pid, epoch, 0, [b"a"]), txn_id="tx") == (NONE, 0)
        assert end_txn(c, "tx", pid, epoch, True) == NONE
        assert end_txn(c, "tx", pid, epoch, True) == NONE           # a retry
        assert end_txn(c, "tx", pid, epoch, True, 0) == NONE
        assert end_txn(c, "tx", pid, epoch, False) == INVALID_TXN_STATE
        assert describe_one(c, "tx").transaction_state == "CompleteCommit"
        # The next transaction, aborted; then a commit does not fit.
        assert add_partitions(c, "tx", pid, epoch, {"t": [0]}) == {("t", 0): NONE}
        assert produce(c, "t", txn_batch(pid, epoch, 1, [b"b"]), txn_id="tx") == (NONE, 2)
        assert end_txn(c, "tx", pid, epoch, False) == NONE
        assert end_txn(c, "tx", pid, epoch, False) == NONE
        assert end_txn(c, "tx", pid, epoch, True) == INVALID_TXN_STATE
        assert describe_one(c, "tx").transaction_state == "CompleteAbort"
        # A transaction with a partition but no data ends as well.
        assert add_partitions(c, "tx", pid, epoch, {"t": [0]}) == {("t", 0): NONE}
        assert end_txn(c, "tx", pid, epoch, True) == NONE
        f = fetch(c, "t")
        assert f.markers == [(1, pid, epoch, COMMIT), (3, pid, epoch, ABORT),
                             (4, pid, epoch, COMMIT)]


@pytest.mark.kafka_broker(FAST)
def test_transactional_produce_and_read_committed(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=2)
    assert kafka_broker.produce("t", b"plain-0") == 0
    with RawClient(kafka_broker.bootstrap_servers) as c:
        pid, epoch = init_ok(c, "tx")
        assert add_partitions(c, "tx", pid, epoch, {"t": [0]}) == {("t", 0): NONE}
        batch = txn_batch(pid, epoch, 0, [b"a", b"b"])
        # KIP-890 part 1: the request must name the transactional id, and the partition must
        # be in the id's open transaction.
        assert produce(c, "t", batch) == (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)
        assert produce(c, "t", txn_batch(pid, epoch, 0, [b"x"]), partition=1,
                       txn_id="tx") == (INVALID_TXN_STATE, -1)
        assert kafka_broker.end_offsets("t") == {0: 1, 1: 0}
        assert produce(c, "t", batch, txn_id="tx") == (NONE, 1)
        assert kafka_broker.produce("t", b"plain-3") == 3

        committed = fetch(c, "t", isolation=READ_COMMITTED)
        assert (committed.error_code, committed.high_watermark,
                committed.last_stable_offset, committed.aborted) == (NONE, 4, 1, [])
        assert committed.data_offsets == [0]         # nothing at or past the LSO
        uncommitted = fetch(c, "t")
        assert (uncommitted.high_watermark, uncommitted.last_stable_offset,
                uncommitted.aborted) == (4, 1, None)
        assert uncommitted.data_offsets == [0, 1, 2, 3]
        assert latest_offset(c, "t", READ_COMMITTED) == 1
        assert latest_offset(c, "t", READ_UNCOMMITTED) == 4

        assert end_txn(c, "tx", pid, epoch, True) == NONE
        committed = fetch(c, "t", isolation=READ_COMMITTED)
        assert (committed.high_watermark, committed.last_stable_offset, committed.aborted) \
            == (5, 5, [])
        assert committed.data_offsets == [0, 1, 2, 3]
        assert committed.markers == [(4, pid, epoch, COMMIT)]
        [txn] = [b for b in committed.batches if b.base_offset == 1]
        assert (txn.producer_id, txn.producer_epoch, txn.transactional, txn.values) == \
            (pid, epoch, True, (b"a", b"b"))
        assert latest_offset(c, "t", READ_COMMITTED) == 5

        # An aborted transaction: listed for read_committed readers, null for the others.
        assert add_partitions(c, "tx", pid, epoch, {"t": [0]}) == {("t", 0): NONE}
        assert produce(c, "t", txn_batch(pid, epoch, 2, [b"c"]), txn_id="tx") == (NONE, 5)
        assert latest_offset(c, "t", READ_COMMITTED) == 5
        assert end_txn(c, "tx", pid, epoch, False) == NONE
        committed = fetch(c, "t", isolation=READ_COMMITTED)
        assert (committed.high_watermark, committed.last_stable_offset, committed.aborted) \
            == (7, 7, [(pid, 5)])
        assert committed.markers == [(4, pid, epoch, COMMIT), (6, pid, epoch, ABORT)]
        uncommitted = fetch(c, "t")
        assert (uncommitted.last_stable_offset, uncommitted.aborted) == (7, None)
        assert latest_offset(c, "t", READ_COMMITTED) == 7
        # Read from past the aborted transaction: nothing to drop there.
        assert fetch(c, "t", isolation=READ_COMMITTED, offset=7).aborted == []


@pytest.mark.kafka_broker(FAST)
def test_init_producer_id_aborts_the_open_transaction(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=1)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        pid, old = init_ok(c, "tx")
        assert add_partitions(c, "tx", pid, old, {"t": [0]}) == {("t", 0): NONE}
        assert produce(c, "t", txn_batch(pid, old, 0, [b"a"]), txn_id="tx") == (NONE, 0)
        r = init(c, "tx")
        assert (r.error_code, r.producer_id, r.producer_epoch) == \
            (CONCURRENT_TRANSACTIONS, -1, -1)
        # The client retries until the abort is complete.
        deadline = time.monotonic() + 10
        while (r := init(c, "tx")).error_code == CONCURRENT_TRANSACTIONS:
            assert time.monotonic() < deadline, "InitProducerId never succeeded"
            time.sleep(0.01)
        # Epoch 1 fenced the old producer (carried by the abort), the retry got 2.
        assert (r.error_code, r.producer_id, r.producer_epoch) == (NONE, pid, 2)
        committed = fetch(c, "t", isolation=READ_COMMITTED)
        assert (committed.high_watermark, committed.last_stable_offset, committed.aborted) \
            == (2, 2, [(pid, 0)])
        assert committed.markers == [(1, pid, 1, ABORT)]
        # The old producer: its epoch is older than the marker's.
        assert produce(c, "t", txn_batch(pid, old, 1, [b"late"]), txn_id="tx") == \
            (INVALID_PRODUCER_EPOCH, -1)
        assert add_partitions(c, "tx", pid, old, {"t": [0]}) == {("t", 0): PRODUCER_FENCED}
        assert end_txn(c, "tx", pid, old, True) == PRODUCER_FENCED
        # The new one works.
        assert add_partitions(c, "tx", pid, 2, {"t": [0]}) == {("t", 0): NONE}
        assert produce(c, "t", txn_batch(pid, 2, 0, [b"b"]), txn_id="tx") == (NONE, 2)
        assert end_txn(c, "tx", pid, 2, True) == NONE
        committed = fetch(c, "t", isolation=READ_COMMITTED)
        assert (committed.last_stable_offset, committed.markers[-1]) == (4, (3, pid, 2, COMMIT))


@pytest.mark.kafka_broker({**FAST,
                           "transaction.abort.timed.out.transaction.cleanup.interval.ms": "100"})
def test_timed_out_transaction_is_aborted(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=1)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        pid, epoch = init_ok(c, "slow", timeout_ms=1000)
        assert add_partitions(c, "slow", pid, epoch, {"t": [0]}) == {("t", 0): NONE}
        added = time.monotonic()
        assert produce(c, "t", txn_batch(pid, epoch, 0, [b"a", b"b"]), txn_id="slow") == \
            (NONE, 0)
        state = describe_one(c, "slow")
        assert (state.transaction_state, state.producer_epoch, state.transaction_timeout_ms) \
            == ("Ongoing", 0, 1000)
        assert fetch(c, "t", isolation=READ_COMMITTED).last_stable_offset == 0
        deadline = time.monotonic() + 10
        seen = set()
        while (state := describe_one(c, "slow")).transaction_state != "CompleteAbort":
            seen.add(state.transaction_state)
            assert time.monotonic() < deadline, f"not aborted: {state}"
            time.sleep(0.02)
        assert seen <= {"Ongoing", "PrepareAbort"}
        assert time.monotonic() - added >= 0.9       # not before its timeout
        assert (state.error_code, state.producer_id, state.producer_epoch, state.topics) == \
            (NONE, pid, epoch + 1, [])
        committed = fetch(c, "t", isolation=READ_COMMITTED)
        assert (committed.high_watermark, committed.last_stable_offset, committed.aborted) \
            == (3, 3, [(pid, 0)])
        assert committed.markers == [(2, pid, epoch + 1, ABORT)]
        assert latest_offset(c, "t", READ_COMMITTED) == 3
        # The producer was fenced.
        assert end_txn(c, "slow", pid, epoch, True) == PRODUCER_FENCED
        assert produce(c, "t", txn_batch(pid, epoch, 2, [b"c"]), txn_id="slow") == \
            (INVALID_PRODUCER_EPOCH, -1)
        assert init_ok(c, "slow") == (pid, epoch + 2)


@pytest.mark.kafka_broker(FAST)
def test_txn_offset_commit(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=2)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        commit_offsets(c, "g", "t", {0: 5, 1: 6})
        pid, epoch = init_ok(c, "tx")
        assert add_offsets(c, "tx", pid, epoch, "g") == NONE
        [(topic, parts)] = topics_of(describe_one(c, "tx"))
        assert (topic, len(parts)) == (OFFSETS_TOPIC, 1)
        assert txn_offset_commit(c, 0, "tx", "g", pid, epoch, "t", {0: 10}) == {0: NONE}
        assert offset_fetch(c, "g", "t", [0, 1], stable=True) == \
            {0: (UNSTABLE_OFFSET_COMMIT, -1), 1: (NONE, 6)}
        assert offset_fetch(c, "g", "t", [0, 1], stable=False) == {0: (NONE, 5), 1: (NONE, 6)}
        assert end_txn(c, "tx", pid, epoch, True) == NONE
        assert offset_fetch(c, "g", "t", [0, 1], stable=True) == {0: (NONE, 10), 1: (NONE, 6)}

        # v3 (member fields, none given here), then an abort: the old offsets stay.
        assert add_offsets(c, "tx", pid, epoch, "g") == NONE
        assert txn_offset_commit(c, 3, "tx", "g", pid, epoch, "t", {0: 20, 1: 21}) == \
            {0: NONE, 1: NONE}
        assert offset_fetch(c, "g", "t", [0, 1], stable=True) == \
            {0: (UNSTABLE_OFFSET_COMMIT, -1), 1: (UNSTABLE_OFFSET_COMMIT, -1)}
        assert offset_fetch(c, "g", "t", [0, 1], stable=False) == {0: (NONE, 10), 1: (NONE, 6)}
        assert end_txn(c, "tx", pid, epoch, False) == NONE
        assert offset_fetch(c, "g", "t", [0, 1], stable=True) == {0: (NONE, 10), 1: (NONE, 6)}

        # One left open across the restart.
        assert add_offsets(c, "tx", pid, epoch, "g") == NONE
        assert txn_offset_commit(c, 3, "tx", "g", pid, epoch, "t", {1: 30}) == {1: NONE}

    kafka_broker.restart()
    with RawClient(kafka_broker.bootstrap_servers) as c:
        wait_group_coordinator(c, "g", "t")
        assert wait_txn_coordinator(c, "tx").transaction_state == "Ongoing"
        # Committed offsets came back; the aborted transaction's did not; the open one's is
        # still pending.
        assert offset_fetch(c, "g", "t", [0, 1], stable=False) == {0: (NONE, 10), 1: (NONE, 6)}
        assert offset_fetch(c, "g", "t", [0, 1], stable=True) == \
            {0: (NONE, 10), 1: (UNSTABLE_OFFSET_COMMIT, -1)}
        assert end_txn(c, "tx", pid, epoch, True) == NONE
        assert offset_fetch(c, "g", "t", [0, 1], stable=True) == {0: (NONE, 10), 1: (NONE, 30)}
    assert kafka_broker.committed_offsets("g") == {("t", 0): 10, ("t", 1): 30}


@pytest.mark.kafka_broker(FAST)
def test_describe_and_list_transactions_and_describe_producers(kafka_broker: BrokerHandle
                                                               ) -> None:
    kafka_broker.create_topic("t", partitions=2)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        [unknown] = describe(c, ["nope"])
        assert (unknown.error_code, unknown.transactional_id) == \
            (TRANSACTIONAL_ID_NOT_FOUND, "nope")
        pid_a, _ = init_ok(c, "app-a")
        pid_b, _ = init_ok(c, "app-b")
        pid_c, _ = init_ok(c, "other-c")
        # other-c: one committed transaction on t-1.
        assert add_partitions(c, "other-c", pid_c, 0, {"t": [1]}) == {("t", 1): NONE}
        ts_c = now_ms() - 5
        assert produce(c, "t", txn_batch(pid_c, 0, 0, [b"c"], ts_c), partition=1,
                       txn_id="other-c") == (NONE, 0)
        assert end_txn(c, "other-c", pid_c, 0, True) == NONE
        # app-a: open on t-0 and t-1, with data on t-0; app-b: Empty.
        before = now_ms()
        assert add_partitions(c, "app-a", pid_a, 0, {"t": [0, 1]}) == \
            {("t", 0): NONE, ("t", 1): NONE}
        after = now_ms()
        ts_a = now_ms() - 3
        assert produce(c, "t", txn_batch(pid_a, 0, 0, [b"p", b"q"], ts_a), txn_id="app-a") == \
            (NONE, 0)

        a, b, c_, nope = describe(c, ["app-a", "app-b", "other-c", "nope"])
        assert (a.error_code, a.transaction_state, a.transaction_timeout_ms, a.producer_id,
                a.producer_epoch) == (NONE, "Ongoing", 60_000, pid_a, 0)
        assert topics_of(a) == [("t", [0, 1])]
        assert before <= a.transaction_start_time_ms <= after
        assert (b.error_code, b.transaction_state, b.producer_id, b.producer_epoch, b.topics,
                b.transaction_start_time_ms) == (NONE, "Empty", pid_b, 0, [], -1)
        assert (c_.error_code, c_.transaction_state, c_.producer_id, c_.topics) == \
            (NONE, "CompleteCommit", pid_c, [])
        assert nope.error_code == TRANSACTIONAL_ID_NOT_FOUND

        A, B, C = ("app-a", pid_a, "Ongoing"), ("app-b", pid_b, "Empty"), \
            ("other-c", pid_c, "CompleteCommit")
        assert list_txns(c) == (NONE, [], {A, B, C})
        assert list_txns(c, states=["Ongoing"]) == (NONE, [], {A})
        assert list_txns(c, states=["Ongoing", "Bogus"]) == (NONE, ["Bogus"], {A})
        assert list_txns(c, states=["Bogus"]) == (NONE, ["Bogus"], set())
        assert list_txns(c, pids=[pid_c]) == (NONE, [], {C})
        assert list_txns(c, pids=[pid_b, pid_c], states=["Empty"]) == (NONE, [], {B})
        assert list_txns(c, pids=[pid_a + pid_b + pid_c + 1]) == (NONE, [], set())
        # v1: DurationFilter (KIP-994): running longer than that.
        time.sleep(0.01)
        assert list_txns(c, 1, states=["Ongoing"], duration=3_600_000) == (NONE, [], set())
        assert list_txns(c, 1, states=["Ongoing"], duration=0) == (NONE, [], {A})
        assert list_txns(c, 1, states=["Ongoing"], duration=-1) == (NONE, [], {A})
        # v2: TransactionalIdPattern (KIP-1152), a regular expression matching the whole id.
        assert list_txns(c, 2, pattern="app-.*") == (NONE, [], {A, B})
        assert list_txns(c, 2, pattern="app") == (NONE, [], set())
        assert list_txns(c, 2, pattern="") == (NONE, [], {A, B, C})
        assert list_txns(c, 2, pattern=".*-[bc]", states=["Empty"]) == (NONE, [], {B})
        code, _, listed = list_txns(c, 2, pattern="(app")
        assert (code, listed) == (INVALID_REGULAR_EXPRESSION, set())

        # DescribeProducers: the open transaction's producer on t-0.
        producers = describe_producers(c, {"t": [0, 1]})
        code, on_t0 = producers[("t", 0)]
        assert code == NONE and set(on_t0) == {pid_a}
        s = on_t0[pid_a]
        assert (s.producer_epoch, s.last_sequence, s.last_timestamp, s.coordinator_epoch,
                s.current_txn_start_offset) == (0, 1, ts_a, -1, 0)
        code, on_t1 = producers[("t", 1)]
        assert code == NONE and set(on_t1) == {pid_c}
        s = on_t1[pid_c]
        assert (s.producer_epoch, s.last_sequence, s.current_txn_start_offset) == (0, 0, -1)
        # Its COMMIT marker set the coordinator epoch and the last timestamp (the marker's).
        assert s.coordinator_epoch >= 0
        assert ts_c < s.last_timestamp <= now_ms()

        assert end_txn(c, "app-a", pid_a, 0, True) == NONE
        a = describe_one(c, "app-a")
        assert (a.transaction_state, a.topics) == ("CompleteCommit", [])
        assert list_txns(c, states=["Ongoing"]) == (NONE, [], set())
        producers = describe_producers(c, {"t": [0, 1]})
        s = producers[("t", 0)][1][pid_a]
        assert (s.last_sequence, s.current_txn_start_offset) == (1, -1)
        assert s.coordinator_epoch >= 0
        # The marker on t-1 (no data of app-a there) makes app-a a producer of t-1 too.
        on_t1 = producers[("t", 1)][1]
        assert set(on_t1) == {pid_a, pid_c}
        assert (on_t1[pid_a].last_sequence, on_t1[pid_a].current_txn_start_offset) == (-1, -1)

        # Kafka (KafkaApis.handleDescribeProducersRequest, ReplicaManager.getPartitionOrError):
        # UNKNOWN_TOPIC_OR_PARTITION for a topic or partition the cluster does not have
        # (NOT_LEADER_OR_FOLLOWER is for one that exists but is led elsewhere).
        unknown = describe_producers(c, {"t": [7], "nope": [0]})
        assert unknown == {("t", 7): (UNKNOWN_TOPIC_OR_PARTITION, {}),
                           ("nope", 0): (UNKNOWN_TOPIC_OR_PARTITION, {})}


@pytest.mark.kafka_broker(FAST)
def test_restart_in_the_middle_of_a_transaction(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=2)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        # "done": EndTxn answered before the restart.
        pid_d, epoch_d = init_ok(c, "done")
        assert add_partitions(c, "done", pid_d, epoch_d, {"t": [1]}) == {("t", 1): NONE}
        assert produce(c, "t", txn_batch(pid_d, epoch_d, 0, [b"d"]), partition=1,
                       txn_id="done") == (NONE, 0)
        assert end_txn(c, "done", pid_d, epoch_d, True) == NONE
        # "open": data on both partitions, no EndTxn.
        pid, epoch = init_ok(c, "open")
        assert add_partitions(c, "open", pid, epoch, {"t": [0, 1]}) == \
            {("t", 0): NONE, ("t", 1): NONE}
        assert produce(c, "t", txn_batch(pid, epoch, 0, [b"a", b"b"]), txn_id="open") == \
            (NONE, 0)
        assert produce(c, "t", txn_batch(pid, epoch, 0, [b"c"]), partition=1,
                       txn_id="open") == (NONE, 2)

    kafka_broker.restart()
    with RawClient(kafka_broker.bootstrap_servers) as c:
        wait_txn_coordinator(c, "open")
        opened, done = describe(c, ["open", "done"])
        assert (opened.error_code, opened.transaction_state, opened.producer_id,
                opened.producer_epoch) == (NONE, "Ongoing", pid, epoch)
        assert topics_of(opened) == [("t", [0, 1])]
        assert (done.error_code, done.transaction_state, done.producer_id,
                done.producer_epoch, done.topics) == (NONE, "CompleteCommit", pid_d, epoch_d, [])
        assert list_txns(c, states=["Ongoing"]) == (NONE, [], {("open", pid, "Ongoing")})
        # The partitions' producer state came back too: the LSO is still held.
        f0 = fetch(c, "t", 0, isolation=READ_COMMITTED)
        assert (f0.high_watermark, f0.last_stable_offset, f0.data_offsets) == (2, 0, [])
        f1 = fetch(c, "t", 1, isolation=READ_COMMITTED)
        assert (f1.high_watermark, f1.last_stable_offset, f1.data_offsets) == (3, 2, [0])
        [(code, states)] = describe_producers(c, {"t": [0]}).values()
        assert code == NONE
        assert (states[pid].last_sequence, states[pid].current_txn_start_offset) == (1, 0)

        assert end_txn(c, "open", pid, epoch, True) == NONE
        f0 = fetch(c, "t", 0, isolation=READ_COMMITTED)
        assert (f0.high_watermark, f0.last_stable_offset, f0.aborted) == (3, 3, [])
        assert (f0.data_offsets, f0.markers) == ([0, 1], [(2, pid, epoch, COMMIT)])
        f1 = fetch(c, "t", 1, isolation=READ_COMMITTED)
        assert (f1.high_watermark, f1.last_stable_offset, f1.data_offsets) == (4, 4, [0, 2])
        assert f1.markers == [(1, pid_d, epoch_d, COMMIT), (3, pid, epoch, COMMIT)]
        assert describe_one(c, "open").transaction_state == "CompleteCommit"
        # The same producer goes on with its sequence.
        assert add_partitions(c, "open", pid, epoch, {"t": [0]}) == {("t", 0): NONE}
        assert produce(c, "t", txn_batch(pid, epoch, 2, [b"e"]), txn_id="open") == (NONE, 3)
        assert end_txn(c, "open", pid, epoch, True) == NONE
        assert fetch(c, "t", 0, isolation=READ_COMMITTED).data_offsets == [0, 1, 3]


@pytest.mark.kafka_broker(FAST)
def test_a_transaction_left_prepared_is_completed_after_a_restart(kafka_broker: BrokerHandle
                                                                  ) -> None:
    # The broker elects the coordinator for __transaction_state at startup; once the partition
    # is loaded, the coordinator writes the markers the shutdown cut short.
    kafka_broker.create_topic("t", partitions=1)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        pid, epoch = init_ok(c, "cut-short")
        assert add_partitions(c, "cut-short", pid, epoch, {"t": [0]}) == {("t", 0): NONE}
        assert produce(c, "t", txn_batch(pid, epoch, 0, [b"a"]), txn_id="cut-short") == \
            (NONE, 0)

    def prepare_commit() -> None:
        coordinator = kafka_broker.server.transaction_coordinator
        m = coordinator.describe("cut-short")
        coordinator.state.append_transition(m, m.prepare_abort_or_commit(
            type(m.state).PREPARE_COMMIT, now_ms()))

    kafka_broker.call(prepare_commit)
    kafka_broker.restart()
    with RawClient(kafka_broker.bootstrap_servers) as c:
        deadline = time.monotonic() + 10
        while (state := describe_one(c, "cut-short")).transaction_state != "CompleteCommit":
            assert state.error_code in (NONE, COORDINATOR_LOAD_IN_PROGRESS), state
            assert time.monotonic() < deadline, state
            time.sleep(0.01)
        assert state.topics == []
        committed = fetch(c, "t", isolation=READ_COMMITTED)
        assert (committed.last_stable_offset, committed.data_offsets, committed.markers) == \
            (2, [0], [(1, pid, epoch, COMMIT)])
