"""AlterReplicaLogDirs (34) on a real broker with several log dirs, driven by kafka-python's
``KafkaAdminClient.alter_replica_log_dirs`` / ``describe_log_dirs`` over real sockets:

- a partition with data moves while a producer keeps producing (acks=all) and a consumer
  reads: every acknowledged record is read exactly once, in order; the files end up in the
  new dir only; a restart reads everything from there;
- DescribeLogDirs shows the future replica while the move runs (slowed down by Kafka's
  ``replica.alter.log.dirs.io.max.bytes.per.second``), a new destination cancels the move in
  flight, and moving back to the current dir cancels it too;
- every error of ReplicaManager.alterReplicaLogDirs, with its exact code, and the preferred
  dir of a partition that is not here yet;
- kill -9 in the middle of a move (a subprocess broker): the restarted broker reads every
  acknowledged record from the current log, and the future dir is gone.

The move between a leader's and a follower's dirs on a replicated cluster is in
tests/server/test_replica_alter_log_dirs_cluster.py.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import kafka.errors as kerrors
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic

from kafkapy import Broker
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import NotLeaderOrFollowerError
from kafkapy.log.config import LogConfig
from kafkapy.log.log import Log, future_dir_name
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterReplicaLogDir,
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirTopic,
)
from kafkapy.protocol.records import build_batch
from kafkapy.server.error_response import error_response
from kafkapy.server.replica_alter_log_dirs_manager import follow_current
from tests.clients.test_durability import ChildBroker

T = TypeVar("T")
TOPIC = "moves"
PAD = b"x" * 1000


def wait_until(condition: Callable[[], T], what: str, timeout: float = 90.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def holding(d: Path, name: str = f"{TOPIC}-0") -> list[str]:
    """The partition's directories in log dir ``d`` (current, -future, -delete)."""
    return sorted(p.name for p in d.iterdir() if p.name == name or p.name.startswith(name + "."))


def admin_for(bootstrap: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)


def alter(admin: KafkaAdminClient, moves: dict[tuple[str, int], str], broker_id: int = 1
          ) -> dict[tuple[str, int], int]:
    result = admin.alter_replica_log_dirs(
        {(topic, p, broker_id): path for (topic, p), path in moves.items()})
    return {(tpr.topic, tpr.partition): error.errno for tpr, error in result.items()}


def log_dir_entries(admin: KafkaAdminClient, topic: str = TOPIC) -> list[dict[str, Any]]:
    """Every (log dir, partition entry) DescribeLogDirs lists for ``topic``."""
    out = []
    for broker in admin.describe_log_dirs():
        for result in broker["log_dirs"]:
            assert result["error_code"] == 0, result
            for t in result["topics"]:
                if t["name"] == topic:
                    out.extend({"log_dir": result["log_dir"], **p} for p in t["partitions"])
    return out


def produce(bootstrap: str, first: int, count: int, topic: str = TOPIC) -> list[int]:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    futures = [(i, producer.send(topic, str(i).encode() + b":" + PAD))
               for i in range(first, first + count)]
    acked = [i for i, f in futures if f.get(timeout=60) is not None]
    producer.close()
    return acked


def consume_all(bootstrap: str, expected: int, topic: str = TOPIC) -> list[int]:
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, fetch_max_bytes=4 << 20)
    seen: list[int] = []
    deadline = time.monotonic() + 120
    while len(seen) < expected and time.monotonic() < deadline:
        for records in consumer.poll(500).values():
            seen.extend(int(r.value.split(b":")[0]) for r in records)
    # A little longer: anything beyond what was acknowledged would be a duplicate.
    for records in consumer.poll(300).values():
        seen.extend(int(r.value.split(b":")[0]) for r in records)
    consumer.close()
    return seen


def anomalies(acked: list[int], seen: list[int]) -> tuple[int, int, int]:
    """(lost, duplicated, reordered) of ``seen`` against ``acked`` (sent in ascending order)."""
    lost = len(set(acked) - set(seen))
    duplicated = len(seen) - len(set(seen))
    reordered = sum(1 for a, b in itertools.pairwise(seen) if b < a)
    return lost, duplicated, reordered


class Workload:
    """A producer (acks=all, ascending numbers) and a consumer, each in a thread."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.acked: list[int] = []
        self.seen: list[int] = []
        self.stop = threading.Event()
        self.produced = threading.Event()      # the producer's last batch is acknowledged
        self.errors: list[BaseException] = []
        self.threads = [threading.Thread(target=self._guard, args=(f,), daemon=True)
                        for f in (self._produce, self._consume)]

    def __enter__(self) -> Workload:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(180)

    def _guard(self, body: Callable[[], None]) -> None:
        try:
            body()
        except BaseException as e:
            self.errors.append(e)
            self.stop.set()
        finally:
            if body == self._produce:
                self.produced.set()

    def _produce(self) -> None:
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all", linger_ms=5,
                                 max_in_flight_requests_per_connection=1)
        i = 0
        while not self.stop.is_set():
            futures = [(j, producer.send(TOPIC, str(j).encode() + b":" + PAD))
                       for j in range(i, i + 200)]
            for j, f in futures:
                f.get(timeout=60)
                self.acked.append(j)
            i += 200
        producer.close()

    def _consume(self) -> None:
        consumer = KafkaConsumer(TOPIC, bootstrap_servers=self.bootstrap,
                                 auto_offset_reset="earliest", enable_auto_commit=False)
        deadline = None
        while True:
            if self.produced.is_set():
                deadline = deadline or time.monotonic() + 120
                if len(self.seen) >= len(self.acked) or time.monotonic() > deadline:
                    break
            for records in consumer.poll(200).values():
                self.seen.extend(int(r.value.split(b":")[0]) for r in records)
        consumer.close()


def two_dirs(tmp_path: Path, n: int = 2) -> list[Path]:
    return [tmp_path / name for name in "abc"[:n]]


def settings(dirs: list[Path], **more: object) -> dict[str, object]:
    return {"log.dirs": ",".join(map(str, dirs)), "num.partitions": 1,
            "log.segment.bytes": 1 << 20, "log.segment.delete.delay.ms": 200, **more}


def current_dir(dirs: list[Path]) -> Path:
    (found,) = [d for d in dirs if f"{TOPIC}-0" in holding(d)]
    return found


# ===================================================================================== tests


def test_move_while_producing_and_consuming_then_restart(tmp_path: Path) -> None:
    dirs = two_dirs(tmp_path)
    # Throttled well above what the producer writes (so the copy catches up), still slow
    # enough that the ~10 MB below take a while to copy under produce and fetch.
    config = settings(dirs, **{"replica.alter.log.dirs.io.max.bytes.per.second": 30_000_000})
    with Broker(config) as broker:
        admin = admin_for(broker.bootstrap_servers)
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
        with Workload(broker.bootstrap_servers) as work:
            started = time.monotonic()
            wait_until(lambda: len(work.acked) >= 10_000 or work.errors, "10,000 records")
            src = current_dir(dirs)
            (dst,) = [d for d in dirs if d != src]
            assert alter(admin, {(TOPIC, 0): str(dst)}) == {(TOPIC, 0): 0}
            wait_until(lambda: holding(dst) == [f"{TOPIC}-0"] or work.errors,
                       "the partition in its new dir")
            moved_at = len(work.acked)
            rate = moved_at / (time.monotonic() - started)
            wait_until(lambda: len(work.acked) >= moved_at + 2_000 or work.errors,
                       "records produced after the move")
        assert not work.errors, work.errors
        print(f"produced {rate:.0f} records/s (~{rate / 1000:.1f} MB/s) before the move; "
              f"{moved_at} acknowledged when it finished, {len(work.acked)} in all")
        lost, duplicated, reordered = anomalies(work.acked, work.seen)
        assert (lost, duplicated, reordered) == (0, 0, 0), sorted(set(work.acked) -
                                                                  set(work.seen))[:5]
        assert work.seen[:len(work.acked)] == work.acked
        # Both dirs' checkpoint files follow the move at once (not at the next interval).
        def checkpointed() -> bool:
            files = {d: d / "recovery-point-offset-checkpoint" for d in (src, dst)}
            if not all(f.exists() for f in files.values()):
                return False
            entries = {d: f.read_text().split("\n") for d, f in files.items()}
            return any(e.startswith(f"{TOPIC} 0 ") for e in entries[dst]) and \
                not any(e.startswith(f"{TOPIC} 0 ") for e in entries[src])
        wait_until(checkpointed, "the checkpoints of both dirs")
        # The old dir's copy goes after log.segment.delete.delay.ms.
        wait_until(lambda: holding(src) == [], "the old copy removed")
        files = {p.suffix for p in (dst / f"{TOPIC}-0").iterdir()}
        assert {".log", ".index", ".timeindex", ".snapshot"} <= files
        # Both written by the log's background flush, in a worker thread (the future log's
        # while it was copied, or the new current log's; the epoch cache came along).
        wait_until((dst / f"{TOPIC}-0" / "partition.metadata").exists, "partition.metadata")
        wait_until((dst / f"{TOPIC}-0" / "leader-epoch-checkpoint").exists,
                   "the leader epoch checkpoint")
        (entry,) = log_dir_entries(admin)
        assert (entry["log_dir"], entry["is_future_key"]) == (os.path.abspath(dst), False)
        acked = work.acked
        admin.close()
    with Broker(config) as broker:
        seen = consume_all(broker.bootstrap_servers, len(acked))
        assert anomalies(acked, seen) == (0, 0, 0) and seen == acked
        assert holding(dst) == [f"{TOPIC}-0"] and holding(src) == []


def test_describe_log_dirs_during_a_move_and_cancelling(tmp_path: Path) -> None:
    dirs = two_dirs(tmp_path, 3)
    # 1 MB/s: the ~6 MB move lasts several seconds, long enough to look at it.
    config = settings(dirs, **{"replica.alter.log.dirs.io.max.bytes.per.second": 1_000_000})
    with Broker(config) as broker:
        admin = admin_for(broker.bootstrap_servers)
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
        acked = produce(broker.bootstrap_servers, 0, 6000)
        src = current_dir(dirs)
        first, second = [d for d in dirs if d != src]
        (current,) = log_dir_entries(admin)
        assert alter(admin, {(TOPIC, 0): str(first)}) == {(TOPIC, 0): 0}

        def future_entry() -> dict[str, Any] | None:
            entries = {e["is_future_key"]: e for e in log_dir_entries(admin)}
            return entries.get(True)
        seen = wait_until(future_entry, "the future replica in DescribeLogDirs")
        assert seen["log_dir"] == os.path.abspath(first)
        # Nothing is produced meanwhile: the copy is behind until the swap itself.
        assert 0 <= seen["partition_size"] < current["partition_size"]
        assert seen["offset_lag"] > 0
        later = wait_until(lambda: (e := future_entry()) and e["offset_lag"] < seen["offset_lag"]
                           and e, "the copy progressing")
        assert later["partition_size"] > seen["partition_size"]
        (future_dir,) = [n for n in holding(first) if n.endswith("-future")]
        # The same destination again changes nothing.
        assert alter(admin, {(TOPIC, 0): str(first)}) == {(TOPIC, 0): 0}
        assert [n for n in holding(first) if n.endswith("-future")] == [future_dir]
        # Another destination cancels the move in flight and starts a new one.
        assert alter(admin, {(TOPIC, 0): str(second)}) == {(TOPIC, 0): 0}
        assert not [n for n in holding(first) if n.endswith("-future")]
        assert [n for n in holding(second) if n.endswith("-future")]
        # Back to the current dir: the move is cancelled, nothing moves.
        assert alter(admin, {(TOPIC, 0): str(src)}) == {(TOPIC, 0): 0}
        assert not [n for n in holding(second) if n.endswith("-future")]
        assert [e["is_future_key"] for e in log_dir_entries(admin)] == [False]
        wait_until(lambda: holding(first) == [] and holding(second) == [],
                   "the cancelled copies removed")
        # Once more to the second dir, to the end.
        assert alter(admin, {(TOPIC, 0): str(second)}) == {(TOPIC, 0): 0}
        # The swap renames the future dir, then the old one (Kafka's order): the embedded
        # broker's thread may lose the GIL on the first rename, so the move is finished when
        # both are seen, not the first alone.
        wait_until(lambda: holding(second) == [f"{TOPIC}-0"] and
                   f"{TOPIC}-0" not in holding(src), "the move finished", timeout=180)
        assert holding(src) in ([], [n for n in holding(src) if n.endswith("-delete")])
        seen_values = consume_all(broker.bootstrap_servers, len(acked))
        assert seen_values == acked
        admin.close()


def test_errors(tmp_path: Path) -> None:
    dirs = two_dirs(tmp_path, 3)
    long_topic = "t" * 214       # "<topic>-0.<32 hex>-future" is 256 characters
    with Broker(settings(dirs, **{"replica.high.watermark.checkpoint.interval.ms": 600_000,
                                  "log.flush.offset.checkpoint.interval.ms": 600_000})
                ) as broker:
        admin = admin_for(broker.bootstrap_servers)
        admin.create_topics([NewTopic(TOPIC, 1, 1), NewTopic(long_topic, 1, 1)])
        produce(broker.bootstrap_servers, 0, 10)
        src = current_dir(dirs)
        others = [d for d in dirs if d != src]
        # Not a configured dir, compared as absolute paths.
        assert alter(admin, {(TOPIC, 0): str(tmp_path / "elsewhere")}) == \
            {(TOPIC, 0): kerrors.LogDirNotFoundError.errno}
        assert alter(admin, {(TOPIC, 0): os.path.relpath(others[0])}) == \
            {(TOPIC, 0): kerrors.LogDirNotFoundError.errno}
        assert kerrors.LogDirNotFoundError.errno == 57
        # The future dir's name would exceed 255 characters.
        assert alter(admin, {(long_topic, 0): str(others[0])}) == \
            {(long_topic, 0): kerrors.InvalidTopicError.errno}
        assert kerrors.InvalidTopicError.errno == 17
        # Already there: nothing happens.
        assert alter(admin, {(TOPIC, 0): str(src)}) == {(TOPIC, 0): 0}
        assert holding(src) == [f"{TOPIC}-0"] and all(holding(d) == [] for d in others)
        # A topic not here yet: unknown (not REPLICA_NOT_AVAILABLE: the cluster does not
        # know it), but its log is created in the dir asked for.
        for target in others:
            assert alter(admin, {("later", 0): str(target)}) == \
                {("later", 0): kerrors.UnknownTopicOrPartitionError.errno}
        admin.create_topics([NewTopic("later", 1, 1)])
        wait_until(lambda: holding(others[-1], "later-0") == ["later-0"],
                   "the new topic's log in its preferred dir")
        # An offline dir (it vanished from under the broker) is KAFKA_STORAGE_ERROR.
        os.rename(others[0], tmp_path / "gone")
        try:
            assert alter(admin, {(TOPIC, 0): str(others[0])}) == \
                {(TOPIC, 0): kerrors.KafkaStorageError.errno}
            assert kerrors.KafkaStorageError.errno == 56
        finally:
            os.rename(tmp_path / "gone", others[0])
        admin.close()


def test_kill_9_in_the_middle_of_a_move(tmp_path: Path) -> None:
    dirs = two_dirs(tmp_path)
    config = {k: str(v) for k, v in settings(
        dirs, **{"replica.alter.log.dirs.io.max.bytes.per.second": 1_000_000}).items()}
    child = ChildBroker(dirs[0], config)
    try:
        admin = admin_for(child.bootstrap)
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
        acked = produce(child.bootstrap, 0, 5000)
        src = current_dir(dirs)
        (dst,) = [d for d in dirs if d != src]
        assert alter(admin, {(TOPIC, 0): str(dst)}) == {(TOPIC, 0): 0}
        wait_until(lambda: any(e["is_future_key"] and e["partition_size"] > 0
                               for e in log_dir_entries(admin)), "the copy under way")
        admin.close()
        child.kill()
        assert [n for n in holding(dst) if n.endswith("-future")]
        child = ChildBroker(dirs[0], config)
        seen = consume_all(child.bootstrap, len(acked))
        assert anomalies(acked, seen) == (0, 0, 0) and seen == acked
        assert holding(src) == [f"{TOPIC}-0"] and holding(dst) == []
        # And the move, asked again, completes on the restarted broker.
        admin = admin_for(child.bootstrap)
        assert alter(admin, {(TOPIC, 0): str(dst)}) == {(TOPIC, 0): 0}
        wait_until(lambda: holding(dst) == [f"{TOPIC}-0"], "the move finished", timeout=180)
        admin.close()
        child.kill()
        child = ChildBroker(dirs[0], config)
        seen = consume_all(child.bootstrap, len(acked))
        assert seen == acked
    finally:
        child.kill()


def test_error_response_lists_every_partition() -> None:
    # Kafka's AlterReplicaLogDirsRequest.getErrorResponse: one result per topic of each dir,
    # every partition with the error (what KafkaApis answers if the handler fails).
    request = AlterReplicaLogDirsRequest(dirs=[
        AlterReplicaLogDir(path="/a", topics=[
            AlterReplicaLogDirTopic(name="x", partitions=[0, 1])]),
        AlterReplicaLogDir(path="/b", topics=[AlterReplicaLogDirTopic(name="y", partitions=[2])]),
    ])
    for version in (0, 1, 2):
        body = error_response(ApiKey.ALTER_REPLICA_LOG_DIRS, version, request,
                              NotLeaderOrFollowerError("z"))
        assert [(t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions])
                for t in body.results] == [("x", [(0, 6), (1, 6)]), ("y", [(2, 6)])]


def _copy_some(current: Log, future: Log, max_bytes: int) -> None:
    follow_current(current, future)
    data = current.read(future.log_end_offset, max_bytes).read()
    if data:
        future.append_as_follower(data)


def test_the_copy_follows_truncation_and_log_start(tmp_path: Path) -> None:
    # The mover's bookkeeping on real logs: a follower's truncation (and new data from the
    # new leader at the same offsets) and a raised log start are repeated on the copy.
    config = LogConfig.resolve({}, {"log.segment.bytes": 8192})
    current = Log.open(tmp_path / "a" / "orders-0", config)
    future = Log.open(tmp_path / "b" / future_dir_name(TopicPartition("orders", 0)), config)
    assert future.is_future

    def batch(tag: bytes, epoch: int) -> bytes:
        return bytes(build_batch([(None, tag * 300, None, int(time.time() * 1000))],
                                 partition_leader_epoch=epoch))
    for _ in range(40):
        current.append_as_leader(batch(b"a", 0), leader_epoch=0)
    current.update_high_watermark(20)
    _copy_some(current, future, 8000)
    assert 0 < future.log_end_offset < 40
    copied = future.log_end_offset
    # The follower diverged: truncated below what was copied, then new batches at epoch 1.
    current.truncate_to(copied - 3)
    for _ in range(5):
        current.append_as_leader(batch(b"b", 1), leader_epoch=1)
    while future.log_end_offset < current.log_end_offset or current.truncated_below is not None:
        _copy_some(current, future, 8000)
    assert future.read(0, 1 << 20).read() == current.read(0, 1 << 20).read()
    assert future.epochs.entries == current.epochs.entries
    # DeleteRecords past the copy's end: the copy starts over there.
    for _ in range(30):
        current.append_as_leader(batch(b"c", 1), leader_epoch=1)
    current.update_high_watermark(current.log_end_offset)
    current.delete_records(current.log_end_offset - 4)
    follow_current(current, future)
    assert future.log_start_offset == future.log_end_offset == current.log_start_offset
    _copy_some(current, future, 8000)
    assert future.read(future.log_start_offset, 1 << 20).read() == \
        current.read(current.log_start_offset, 1 << 20).read()
    follow_current(current, future)     # the next round takes the high watermark along
    assert future.high_watermark == current.high_watermark
    current.close()
    future.close()


def test_kill_9_around_the_swap(tmp_path: Path) -> None:
    # Unthrottled moves killed a few milliseconds after they were asked for: each restart
    # finds one complete copy of the partition (current, or moved), never a -future dir.
    dirs = two_dirs(tmp_path)
    config = {k: str(v) for k, v in settings(dirs).items()}
    child = ChildBroker(dirs[0], config)
    try:
        admin = admin_for(child.bootstrap)
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
        acked = produce(child.bootstrap, 0, 3000)
        admin.close()
        outcomes = []
        for delay_ms in (0, 2, 5, 10, 20, 40, 80):
            src = current_dir(dirs)
            (dst,) = [d for d in dirs if d != src]
            admin = admin_for(child.bootstrap)
            assert alter(admin, {(TOPIC, 0): str(dst)}) == {(TOPIC, 0): 0}
            time.sleep(delay_ms / 1000)
            child.kill()
            admin.close()
            child = ChildBroker(dirs[0], config)
            assert sorted(holding(src) + holding(dst)) == [f"{TOPIC}-0"]
            outcomes.append(current_dir(dirs) == dst)
            seen = consume_all(child.bootstrap, len(acked))
            assert seen == acked, (delay_ms, anomalies(acked, seen))
        print("moved before the kill:", outcomes)
    finally:
        child.kill()


def test_deleting_the_topic_during_a_move(tmp_path: Path) -> None:
    dirs = two_dirs(tmp_path)
    config = settings(dirs, **{"replica.alter.log.dirs.io.max.bytes.per.second": 1_000_000})
    with Broker(config) as broker:
        admin = admin_for(broker.bootstrap_servers)
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
        produce(broker.bootstrap_servers, 0, 4000)
        src = current_dir(dirs)
        (dst,) = [d for d in dirs if d != src]
        assert alter(admin, {(TOPIC, 0): str(dst)}) == {(TOPIC, 0): 0}
        wait_until(lambda: any(e["is_future_key"] for e in log_dir_entries(admin)),
                   "the move under way")
        admin.delete_topics([TOPIC])
        wait_until(lambda: holding(src) == [] and holding(dst) == [],
                   "both copies removed with the topic")
        # The broker is fine, and the topic can come back, empty.
        wait_until(lambda: TOPIC not in admin.list_topics(), "the topic gone")
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
        acked = wait_until(lambda: produce(broker.bootstrap_servers, 0, 100), "a new produce")
        assert consume_all(broker.bootstrap_servers, len(acked)) == acked
        assert log_dir_entries(admin)[0]["is_future_key"] is False
        admin.close()
