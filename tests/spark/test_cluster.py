"""``kafkapy-log`` reads a replicated cluster: ``load([the brokers' log dirs])`` against a real
3-broker ``kafkapy.Cluster`` (a real ZooKeeper, three broker processes), RF-3 topics produced
by confluent-kafka, compared row for row with what a confluent-kafka consumer reads through
the brokers.

- Every replica caught up: each partition read once (no duplicates across the replicas),
  exactly the consumer's rows; the same given as a list, as a comma-separated string, and to
  a streaming query; read_committed over transactions replicated to the followers.
- Records beyond the high watermark: the followers frozen (SIGSTOP), a few records written
  with acks=1 sit in the leader's log past its HW; the read (which uses the leader's copy:
  asserted) stops at the HW, as the consumer does.
- A replica that is behind: a broker stopped while more is produced; its log dir in the
  load, first or last, neither shortens nor duplicates the result.

One cluster for the module, the session's Spark. Brokers checkpoint their HW every 100 ms;
the tests wait (bounded) until every running broker's checkpoint covers the data.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from pyspark_kafkapy import _logdir
from pyspark_kafkapy._options import parse_options
from pyspark_kafkapy._planner import partition_states

import kafkapy
from kafkapy.cluster import Cluster
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.log.checkpoints import REPLICATION_OFFSET_CHECKPOINT, read_offsets
from tests.spark.conftest import TIMEOUT, Producer, Row, consume_from, flush, spark_rows

pytestmark = pytest.mark.timeout(240)

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"

SETTINGS = {
    "replica.high.watermark.checkpoint.interval.ms": 100,
    # Followers frozen for the length of a read stay in the ISR (and registered), so the HW
    # does not move while the test looks at records beyond it.
    "replica.lag.time.max.ms": 60000,
    "zookeeper.session.timeout.ms": 60000,
    "replica.fetch.wait.max.ms": 100,
    "offsets.topic.num.partitions": 3,
    "transaction.state.log.num.partitions": 3,
    "auto.leader.rebalance.enable": "false",
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with kafkapy.Cluster(3, SETTINGS, timeout=60) as c:
        yield c


# --------------------------------------------------------------------------------- helpers

def dirs(cluster: Cluster, order: Sequence[int] = (1, 2, 3)) -> list[str]:
    return [str(cluster.brokers[i].data_dir) for i in order]


def create(cluster: Cluster, topic: str, partitions: int,
           leaders: Sequence[int] | None = None) -> None:
    """An RF-3 topic; partition p led by ``leaders[p]`` (default: spread over the brokers)."""
    assignment = {}
    for p in range(partitions):
        first = leaders[p] if leaders is not None else 1 + p % 3
        assignment[p] = [first, *(b for b in (1, 2, 3) if b != first)]
    cluster.create_topic(topic, assignment)
    for p in range(partitions):
        cluster.wait_for_isr(topic, p, 3, timeout=30)


def producer(bootstrap: str, **config: Any) -> Producer:
    return Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 0,
                     "acks": "all", **{k.replace("_", "."): v for k, v in config.items()}})


def produce(p: Producer, topic: str, partitions: int, n: int, tag: str) -> None:
    for i in range(n):
        kwargs: dict[str, Any] = {}
        if i % 3 == 1:
            kwargs["headers"] = [("h", f"{tag}{i}".encode()), ("n", None)]
        p.produce(topic, None if i % 17 == 0 else f"{tag}-{i}".encode() * (1 + i % 4),
                  None if i % 5 == 0 else f"k{i % 23}".encode(), partition=i % partitions,
                  **kwargs)
        p.poll(0)
    flush(p)


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[TopicPartition, int]:
    """The high watermarks, as the partitions' leaders answer them now."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "hw",
                                         "log_level": 3})
    try:
        return {TopicPartition(topic, p): consumer.get_watermark_offsets(
            confluent_kafka.TopicPartition(topic, p), timeout=TIMEOUT, cached=False)[1]
            for p in range(partitions)}
    finally:
        consumer.close()


def checkpointed(cluster: Cluster, broker: int) -> dict[TopicPartition, int]:
    return read_offsets(cluster.brokers[broker].data_dir / REPLICATION_OFFSET_CHECKPOINT)


def wait_checkpointed(cluster: Cluster, want: dict[TopicPartition, int],
                      brokers: Sequence[int] = (1, 2, 3)) -> None:
    """Until the HW checkpoint of each of ``brokers`` has reached ``want``."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        have = {b: checkpointed(cluster, b) for b in brokers}
        if all(have[b].get(tp, -1) >= hw for b in brokers for tp, hw in want.items()):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"HW checkpoints {have} do not reach {want}")
        time.sleep(0.05)


def consumed(bootstrap: str, topic: str, partitions: int,
             isolation: str = "read_uncommitted") -> list[Row]:
    return consume_from(bootstrap, topic, range(partitions), isolation=isolation)


def load(spark: Any, paths: str | list[str], **options: str) -> Any:
    reader = spark.read.format("kafkapy-log").option("includeHeaders", "true")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(paths)


def assert_once(rows: list[Row]) -> None:
    twice = [k for k, n in Counter(r[:3] for r in rows).items() if n > 1]
    assert not twice, f"records read more than once: {twice[:10]}"


def log_end(pdir: Path) -> int:
    """The offset after the last whole batch in the partition folder (its log end)."""
    base = _logdir.list_segments(pdir)[-1]
    fd = os.open(_logdir.segment_path(pdir, base), os.O_RDONLY)
    try:
        last = base
        for batch in _logdir.iter_batches(fd, 0):
            last = batch.last_offset + 1
        return last
    finally:
        os.close(fd)


def chosen(cluster: Cluster, paths: list[str], topic: str) -> dict[int, int]:
    """The broker whose copy the planner reads, per partition."""
    by_dir = {str(b.data_dir): i for i, b in cluster.brokers.items()}
    states = partition_states(parse_options({"paths": json.dumps(paths), "subscribe": topic}))
    return {tp.partition: by_dir[str(st.directory.parent)] for tp, st in states.items()}


# ----------------------------------------------------------------------------------- tests

def test_every_replica_caught_up(spark: Any, cluster: Cluster, tmp_path: Path) -> None:
    topic, n = "c-orders", 4
    create(cluster, topic, n)
    produce(producer(cluster.bootstrap_servers, compression_codec="lz4"), topic, n, 1200, "o")
    hws = end_offsets(cluster.bootstrap_servers, topic, n)
    assert sum(hws.values()) == 1200
    wait_checkpointed(cluster, hws)
    want = consumed(cluster.bootstrap_servers, topic, n)
    assert len(want) == 1200

    got = spark_rows(load(spark, dirs(cluster), subscribe=topic))
    assert_once(got)
    assert got == want
    # Every partition is in all three dirs: three replicas each, one read.
    assert {s.replicas for s in partition_states(parse_options(
        {"paths": json.dumps(dirs(cluster)), "subscribe": topic})).values()} == {3}
    # The same as one comma-separated path (log.dirs' form), in another order.
    assert spark_rows(load(spark, ",".join(dirs(cluster, (3, 1, 2))), subscribe=topic)) == want
    df = load(spark, dirs(cluster), subscribe=topic, minPartitions="8")
    assert df.count() == 1200
    assert {r.partition: r["count"] for r in df.groupBy("partition").count().collect()} == \
        {tp.partition: hw for tp, hw in hws.items()}

    # A streaming query over the cluster (available-now) reads the same records once.
    # (DataStreamReader.load takes one string: the comma-separated form.)
    query = (spark.readStream.format("kafkapy-log").option("subscribe", topic)
             .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "500")
             .load(",".join(dirs(cluster))).writeStream.format("memory").queryName("c_orders_stream")
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(TIMEOUT * 6), "availableNow query did not finish"
    finally:
        query.stop()
    streamed = sorted((r.topic, r.partition, r.offset, bytes(r.value) if r.value else None)
                      for r in spark.sql("SELECT * FROM c_orders_stream").collect())
    assert streamed == [(r[0], r[1], r[2], r[4]) for r in want]


def test_read_committed_over_replicated_transactions(spark: Any, cluster: Cluster) -> None:
    topic, n = "c-txn", 2
    create(cluster, topic, n)
    plain = producer(cluster.bootstrap_servers)
    txn = producer(cluster.bootstrap_servers, transactional_id="c-txn-1")
    txn.init_transactions(30)
    for i, commit in enumerate((True, False, True, False, True)):
        txn.begin_transaction()
        for j in range(40):
            txn.produce(topic, f"t{i}-{j}".encode(), b"tk", partition=j % n)
        plain.produce(topic, f"p{i}".encode(), partition=i % n)
        flush(plain)
        flush(txn)          # in the log before the abort (librdkafka purges unsent ones)
        if commit:
            txn.commit_transaction(30)
        else:
            txn.abort_transaction(30)
    hws = end_offsets(cluster.bootstrap_servers, topic, n)
    wait_checkpointed(cluster, hws)
    for isolation in ("read_committed", "read_uncommitted"):
        want = consumed(cluster.bootstrap_servers, topic, n, isolation)
        got = spark_rows(load(spark, dirs(cluster, (2, 3, 1)), subscribe=topic,
                              **{"kafka.isolation.level": isolation}))
        assert got == want, isolation
        assert len(got) == (3 * 40 + 5 if isolation == "read_committed" else 5 * 40 + 5)


def test_records_beyond_the_high_watermark_are_not_read(spark: Any, cluster: Cluster) -> None:
    """Broker 1 leads both partitions; with brokers 2 and 3 frozen, 30 records written with
    acks=1 are in broker 1's log past the HW (which cannot move: the followers do not fetch
    and stay in the ISR). The read uses broker 1's copy and stops at the HW."""
    topic, n = "c-tail", 2
    create(cluster, topic, n, leaders=(1, 1))
    leader = cluster.brokers[1].bootstrap
    produce(producer(cluster.bootstrap_servers), topic, n, 100, "a")
    hws = end_offsets(cluster.bootstrap_servers, topic, n)
    wait_checkpointed(cluster, hws)
    cluster.pause(2)
    cluster.pause(3)
    try:
        produce(producer(leader, acks="1"), topic, n, 30, "b")
        # The leader checkpoints again (the HW still where it was), its log 15 further on.
        time.sleep(0.3)
        assert {tp: checkpointed(cluster, 1)[tp] for tp in hws} == hws
        pdirs = {tp: cluster.brokers[1].data_dir / f"{tp.topic}-{tp.partition}" for tp in hws}
        assert {tp: log_end(d) for tp, d in pdirs.items()} == \
            {tp: hw + 15 for tp, hw in hws.items()}
        want = consumed(leader, topic, n)
        assert len(want) == 100
        paths = dirs(cluster)
        assert chosen(cluster, paths, topic) == {0: 1, 1: 1}
        for order in (paths, paths[::-1]):
            got = spark_rows(load(spark, order, subscribe=topic))
            assert got == want
        # An endingOffsets beyond the HW is cut to it as well.
        ends = json.dumps({topic: {"0": 1000, "1": 1000}})
        assert spark_rows(load(spark, paths, subscribe=topic, endingOffsets=ends)) == want
    finally:
        cluster.resume(2)
        cluster.resume(3)
    # Once the followers have the records, they are committed, and read.
    deadline = time.monotonic() + TIMEOUT
    while sum(end_offsets(leader, topic, n).values()) < 130:
        assert time.monotonic() < deadline, "the followers did not catch up"
        time.sleep(0.1)
    hws = end_offsets(cluster.bootstrap_servers, topic, n)
    wait_checkpointed(cluster, hws)
    assert spark_rows(load(spark, dirs(cluster), subscribe=topic)) == \
        consumed(cluster.bootstrap_servers, topic, n)


def test_a_replica_that_is_behind(spark: Any, cluster: Cluster, tmp_path: Path) -> None:
    """Broker 3 is stopped (cleanly: it checkpoints its HW) while as much again is produced;
    its log dir in the load, first or last, does not shorten or duplicate the result. Alone,
    it reads what it had (a single log dir keeps its own bound)."""
    topic, n = "c-behind", 3
    create(cluster, topic, n)
    produce(producer(cluster.bootstrap_servers), topic, n, 300, "a")
    first = end_offsets(cluster.bootstrap_servers, topic, n)
    wait_checkpointed(cluster, first)
    cluster.stop(3)
    try:
        for p in range(n):
            cluster.wait_for_leader(topic, p, not_in=(3,), timeout=30)
        produce(producer(cluster.bootstrap_servers), topic, n, 300, "b")
        hws = end_offsets(cluster.bootstrap_servers, topic, n)
        assert sum(hws.values()) == 600
        wait_checkpointed(cluster, hws, brokers=(1, 2))
        behind = checkpointed(cluster, 3)
        assert all(behind[tp] < hw for tp, hw in hws.items()), (behind, hws)
        want = consumed(cluster.bootstrap_servers, topic, n)
        assert len(want) == 600
        for order in ((1, 2, 3), (3, 1, 2), (3, 2, 1)):
            paths = dirs(cluster, order)
            assert 3 not in chosen(cluster, paths, topic).values()
            got = spark_rows(load(spark, paths, subscribe=topic))
            assert_once(got)
            assert got == want, order
        # Pushed filters narrow the chosen replica's range (Spark's planner worker plans:
        # its readStatsDir file names the partition folders read).
        saved = spark.conf.get(PUSHDOWN, None)
        spark.conf.set(PUSHDOWN, "true")
        try:
            df = load(spark, dirs(cluster, (3, 1, 2)), subscribe=topic,
                      readStatsDir=str(tmp_path / "stats"))
            got = spark_rows(df.where("partition = 1 AND offset >= 150"))
        finally:
            if saved is None:
                spark.conf.unset(PUSHDOWN)
            else:
                spark.conf.set(PUSHDOWN, saved)
        assert got == [r for r in want if r[1] == 1 and r[2] >= 150]
        assert len(got) == hws[TopicPartition(topic, 1)] - 150 > 0
        [stats] = [json.loads(f.read_text()) for f in (tmp_path / "stats").glob("plan-*.json")]
        assert stats["pushed"] and len(stats["directories"]) == 1
        assert Path(stats["directories"][0]).name == f"{topic}-1"
        assert Path(stats["directories"][0]).parent != cluster.brokers[3].data_dir
        alone = spark_rows(load(spark, dirs(cluster, (3,)), subscribe=topic))
        assert alone == [r for r in want if r[2] < behind[TopicPartition(topic, r[1])]]
        assert len(alone) == sum(behind[tp] for tp in hws) < 600
    finally:
        cluster.restart(3)
    for p in range(n):
        cluster.wait_for_isr(topic, p, 3, timeout=60)


def test_a_broker_with_two_log_dirs(spark: Any, tmp_path: Path) -> None:
    """One broker, ``log.dirs`` of two directories: its partitions spread over both, each
    with its own checkpoint; ``load("a,b")`` (log.dirs' own form) reads them all, once."""
    from kafkapy.testing import BrokerHandle
    from tests.spark.conftest import BROKER_CONFIG, consume

    a, b = tmp_path / "a", tmp_path / "b"
    with BrokerHandle(f"{a},{b}", BROKER_CONFIG) as broker:
        broker.create_topic("two-dirs", 4)
        produce(producer(broker.bootstrap_servers), "two-dirs", 4, 400, "d")
        want = consume(broker, "two-dirs")
        hws = {TopicPartition("two-dirs", p): hw
               for p, hw in broker.end_offsets("two-dirs").items()}
        deadline = time.monotonic() + TIMEOUT
        while {tp: max(read_offsets(d / REPLICATION_OFFSET_CHECKPOINT).get(tp, -1)
                       for d in (a, b)) for tp in hws} != hws:
            assert time.monotonic() < deadline, "the HW checkpoints do not reach the data"
            time.sleep(0.05)
    held = {d.name: sorted(p.name for p in d.glob("two-dirs-*")) for d in (a, b)}
    assert held["a"] and held["b"], held
    assert len(want) == 400
    assert spark_rows(load(spark, f"{a},{b}", subscribe="two-dirs")) == want
    # One of the two alone reads only the partitions it holds.
    only_a = spark_rows(load(spark, str(a), subscribe="two-dirs"))
    assert only_a == [r for r in want if f"two-dirs-{r[1]}" in held["a"]]
