"""``kafkapy transactions`` end to end: a real broker (``kafkapy.Broker`` in-process), a
transaction left open, one committed and one aborted by the tool (WriteTxnMarkers from an
admin client); the tool runs as a subprocess and its tables (Kafka's TransactionsCommand:
cells padded to the column's width, each followed by a tab) are asserted exactly."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kafkapy
from tests.tools.support import Run, run_tool

WAIT_S = 30.0
T0 = 1_700_000_000_000      # the records' timestamps: a producer's LastTimestamp
TIMEOUT_MS = 45_000


def row(cells: Sequence[object], widths: Sequence[int]) -> str:
    return "".join(str(c).ljust(w) + "\t" for c, w in zip(cells, widths, strict=True))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    settings = {"transaction.state.log.num.partitions": "1",
                "transaction.state.log.replication.factor": "1",
                "transaction.state.log.min.isr": "1"}
    with kafkapy.Broker(settings, data_dir=tmp_path_factory.mktemp("txn")) as broker:
        bs = broker.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bs})
        for future in admin.create_topics([NewTopic("t", 2, 1)]).values():
            future.result(WAIT_S)
        producers = {}
        # producer ids in order: tx-open 0, tx-done 1
        for tid, partition in (("tx-open", 0), ("tx-done", 1)):
            p = Producer({"bootstrap.servers": bs, "transactional.id": tid,
                          "transaction.timeout.ms": TIMEOUT_MS, "linger.ms": 0})
            p.init_transactions(WAIT_S)
            p.begin_transaction()
            p.produce("t", b"v", partition=partition, timestamp=T0)
            assert p.flush(WAIT_S) == 0
            producers[tid] = p
        before = int(time.time() * 1000)
        producers["tx-done"].commit_transaction(WAIT_S)
        yield {"bootstrap": bs, "before": before}
        producers["tx-open"].abort_transaction(WAIT_S)


def transactions(bs: str, *args: str) -> Run:
    return run_tool("transactions", "--bootstrap-server", bs, *args)


def test_list(cluster: dict[str, Any]) -> None:
    result = transactions(cluster["bootstrap"], "list")
    assert (result.code, result.err) == (0, [])
    widths = (15, 11, 10, 16)
    assert result.out == [
        row(("TransactionalId", "Coordinator", "ProducerId", "TransactionState"), widths),
        row(("tx-done", 1, 1, "CompleteCommit"), widths),
        row(("tx-open", 1, 0, "Ongoing"), widths),
    ]
    assert transactions(cluster["bootstrap"], "--output", "json", "list").json() == [
        {"TransactionalId": "tx-done", "Coordinator": "1", "ProducerId": "1",
         "TransactionState": "CompleteCommit"},
        {"TransactionalId": "tx-open", "Coordinator": "1", "ProducerId": "0",
         "TransactionState": "Ongoing"}]


def test_describe(cluster: dict[str, Any]) -> None:
    result = transactions(cluster["bootstrap"], "--output", "json", "describe",
                          "--transactional-id", "tx-open")
    assert result.code == 0
    [described] = result.json()
    start = int(described.pop("CurrentTransactionStartTimeMs"))
    duration = int(described.pop("TransactionDurationMs"))
    assert start <= cluster["before"] and duration >= 0
    assert described == {"CoordinatorId": "1", "TransactionalId": "tx-open", "ProducerId": "0",
                         "ProducerEpoch": "0", "TransactionState": "Ongoing",
                         "TransactionTimeoutMs": str(TIMEOUT_MS), "TopicPartitions": "t-0"}
    text = transactions(cluster["bootstrap"], "describe", "--transactional-id", "tx-done")
    assert text.out[0] == "CoordinatorId\tTransactionalId\tProducerId\tProducerEpoch\t" \
        "TransactionState\tTransactionTimeoutMs\tCurrentTransactionStartTimeMs\t" \
        "TransactionDurationMs\tTopicPartitions\t"
    # a completed transaction keeps its start time (as Kafka's coordinator does) and lists
    # no partitions
    cells = text.out[1].split("\t")
    assert [c.rstrip() for c in cells[:6]] == ["1", "tx-done", "1", "0", "CompleteCommit",
                                               str(TIMEOUT_MS)]
    assert int(cells[6]) <= cluster["before"] and int(cells[7]) >= 0
    assert cells[8:] == [" " * len("TopicPartitions"), ""]
    assert [len(c) for c in cells[:8]] == [13, 15, 10, 13, 16, 20, 29, 21]
    missing = transactions(cluster["bootstrap"], "describe", "--transactional-id", "nope")
    assert (missing.code, missing.out, missing.err) == (1, [], [
        "Failed to describe transaction state of transactional-id `nope`: The transactionalId "
        "could not be found.. Enable debug logging for additional detail."])


def producers(bs: str, partition: int) -> Run:
    return transactions(bs, "describe-producers", "--topic", "t", "--partition", str(partition))


def test_describe_producers(cluster: dict[str, Any]) -> None:
    widths = (10, 13, 22, 12, 13, 29)
    header = row(("ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
                  "LastTimestamp", "CurrentTransactionStartOffset"), widths)
    result = producers(cluster["bootstrap"], 0)
    assert (result.code, result.err) == (0, [])
    # no marker yet: no coordinator epoch (Kafka prints -1)
    assert result.out == [header, row((0, 0, -1, 0, T0, 0), widths)]
    # committed: the marker's coordinator epoch and timestamp, no open transaction
    committed = producers(cluster["bootstrap"], 1).out
    assert committed[0] == header
    cells = committed[1].split("\t")
    assert int(cells[4]) >= cluster["before"]
    assert committed[1] == row((1, 0, 0, 0, cells[4], "None"), widths)
    failed = transactions(cluster["bootstrap"], "describe-producers", "--topic", "t",
                          "--partition", "7")
    assert (failed.code, failed.out) == (1, [])
    assert failed.err[0].startswith("Failed to describe producers for partition t-7 on "
                                    "leader: ")


def test_find_hanging(cluster: dict[str, Any]) -> None:
    # tx-open's producer wrote at T0 (long ago) but its coordinator still lists t-0: it will
    # get its marker, so it is not hanging
    header = "Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\t" \
             "LastTimestamp\tDuration(min)\t"
    for args in (("--broker-id", "1"), ("--topic", "t"), ("--topic", "t", "--partition", "0")):
        result = transactions(cluster["bootstrap"], "find-hanging", *args)
        assert (result.code, result.out, result.err) == (0, [header], []), args
    result = transactions(cluster["bootstrap"], "find-hanging")
    assert (result.code, result.err) == (1, [
        "The `find-hanging` command requires either --topic or --broker-id to limit the "
        "scope of the search"])


def test_abort(cluster: dict[str, Any]) -> None:
    bs = cluster["bootstrap"]
    wrong = transactions(bs, "abort", "--topic", "t", "--partition", "0", "--start-offset", "5")
    assert (wrong.code, wrong.err) == (1, [
        "Could not find any open transactions starting at offset 5 on partition t-0"])
    done = transactions(bs, "abort", "--topic", "t", "--partition", "0", "--start-offset", "0")
    assert (done.code, done.out, done.err) == (0, [], [])
    # the abort marker is in the log (the high watermark moved past it) and the partition has
    # no open transaction any more
    widths = (10, 13, 22, 12, 13, 29)
    aborted = producers(bs, 0).out[1]
    last_timestamp = aborted.split("\t")[4]
    assert int(last_timestamp) >= cluster["before"]        # the marker's
    assert aborted == row((0, 0, 0, 0, last_timestamp, "None"), widths)
    consumer = Consumer({"bootstrap.servers": bs, "group.id": "g",
                         "isolation.level": "read_committed"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition("t", 0), timeout=WAIT_S)
        assert (low, high) == (0, 2)        # the record and the abort marker
    finally:
        consumer.close()
    none = transactions(bs, "abort", "--topic", "t", "--partition", "0")
    assert none.code == 1 and none.err[0].startswith("The transaction to abort must be "
                                                     "identified either with --start-offset")


def test_without_kafka_python(cluster: dict[str, Any]) -> None:
    result = run_tool("transactions", "--bootstrap-server", cluster["bootstrap"], "list",
                      prelude="import sys\nsys.modules['kafka'] = None")
    assert (result.code, result.out, result.err) == (
        1, [], ["kafkapy transactions needs kafka-python: pip install 'kafkapy[tools]'"])
