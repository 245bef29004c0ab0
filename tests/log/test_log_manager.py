"""LogManager on real log dirs: meta.properties, layout, checkpoints, clean and unclean
restarts, and its Trio background tasks (flush policy off the event loop, retention with the
delayed removal of .deleted files, compaction, deletion of partitions)."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import InvalidTopicError, KafkaStorageError
from kafkapy.log import log as log_module
from kafkapy.log import log_manager as log_manager_module
from kafkapy.log.checkpoints import (
    CLEAN_SHUTDOWN_FILE,
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    EpochEntry,
    read_leader_epochs,
    read_offsets,
    read_partition_metadata,
)
from kafkapy.log.config import LogConfig
from kafkapy.log.log import FlushJob, Log
from kafkapy.log.log_manager import LogManager, MetaPropertiesError, read_meta_properties
from kafkapy.protocol.records import build_batch, scan_batches
from tests.log.log_open_spy import spy_log_open

TP = TopicPartition("orders", 0)


def manager(dirs: list[Path], props: Mapping[str, object] | None = None,
            overrides: dict[str, dict[str, object]] | None = None,
            clock: Callable[[], int] | None = None, node_id: int = 1) -> LogManager:
    over = overrides if overrides is not None else {}
    lm = LogManager(dirs, node_id=node_id, broker_props=props,
                    topic_overrides=lambda t: over.get(t, {}), clock=clock)
    lm.load()
    return lm


def fill(log: Log, n: int, size: int = 100, ts: int | None = None) -> None:
    if ts is None:
        ts = int(time.time() * 1000)      # recent: default time retention keeps it
    for i in range(n):
        log.append_as_leader(build_batch([(b"k%d" % i, b"v" * size, None, ts + i)]))
    log.update_high_watermark(log.log_end_offset)


def offsets(log: Log) -> list[int]:
    data = log.read(log.log_start_offset, 1 << 30).read()
    return [r.offset for b in scan_batches(data).batches for r in b.records()]


async def run_until(lm: LogManager, condition: Callable[[], bool], timeout: float = 10.0
                    ) -> None:
    """Run the manager's background tasks until ``condition`` holds (or fail)."""
    async with trio.open_nursery() as nursery:
        await nursery.start(lm.run)
        with trio.move_on_after(timeout):
            while not condition():
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert condition(), "the background task did not get there in time"


def test_meta_properties_written_then_checked(tmp_path: Path) -> None:
    lm = manager([tmp_path], node_id=7)
    props = read_meta_properties(tmp_path)
    assert props["version"] == "1" and props["node.id"] == "7"
    assert len(props["cluster.id"]) == 22 and len(props["directory.id"]) == 22
    lm.close()
    again = manager([tmp_path], node_id=7)
    assert again.cluster_id == props["cluster.id"]
    again.close()
    with pytest.raises(MetaPropertiesError, match=r"node\.id 7"):
        manager([tmp_path], node_id=8)
    with pytest.raises(MetaPropertiesError, match=r"cluster\.id"):
        LogManager([tmp_path], node_id=7, cluster_id="someOtherClusterId0000").load()


def test_layout_topic_id_and_illegal_names(tmp_path: Path) -> None:
    lm = manager([tmp_path])
    topic_id = uuid.uuid4()
    log = lm.get_or_create_log(TP, topic_id=topic_id)
    assert log.dir == tmp_path / "orders-0"
    assert lm.topic_id_of(TP) == topic_id
    trio.run(lm.flush_log, log)         # partition.metadata is written by a flush job
    assert read_partition_metadata(log.dir) == topic_id
    assert lm.get_or_create_log(TP) is log
    assert (log.dir / "00000000000000000000.log").exists()
    for bad in ("", ".", "..", "a/b", "x" * 250, "sp ace", "ü"):
        with pytest.raises(InvalidTopicError):
            lm.get_or_create_log(TopicPartition(bad, 0))
    lm.close()


def test_new_logs_go_to_the_dir_with_fewest_logs(tmp_path: Path) -> None:
    dirs = [tmp_path / "a", tmp_path / "b"]
    lm = manager(dirs)
    placed = [lm.get_or_create_log(TopicPartition("t", p)).dir.parent for p in range(4)]
    assert sorted(placed) == sorted(dirs * 2)
    lm.close()
    again = manager(dirs)
    assert sorted(again.logs) == [TopicPartition("t", p) for p in range(4)]
    again.close()


def test_clean_shutdown_writes_checkpoints_and_marker(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    lm = manager([tmp_path], {"log.segment.bytes": "1000"})
    log = lm.get_or_create_log(TP)
    fill(log, 30)
    start = log.segments[1].base_offset + 1          # inside a segment: worth a checkpoint
    log.delete_records(start)
    log.delete_old_segments()
    assert log.segments[0].base_offset < start
    lm.close()
    assert (tmp_path / CLEAN_SHUTDOWN_FILE).exists()
    assert read_offsets(tmp_path / RECOVERY_POINT_CHECKPOINT) == {TP: 30}
    assert read_offsets(tmp_path / REPLICATION_OFFSET_CHECKPOINT) == {TP: 30}
    assert read_offsets(tmp_path / LOG_START_OFFSET_CHECKPOINT) == {TP: start}
    caplog.set_level(logging.INFO, logger="kafkapy.log")
    again = manager([tmp_path], {"log.segment.bytes": "1000"})
    assert "recovering" not in caplog.text
    assert not (tmp_path / CLEAN_SHUTDOWN_FILE).exists()     # a crash from now on is one
    log2 = again.get_log(TP)
    assert log2 is not None
    assert (log2.log_start_offset, log2.log_end_offset, log2.high_watermark) == (start, 30, 30)
    assert offsets(log2) == list(range(start, 30))
    again.close()


def test_unclean_restart_recovers(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    lm = manager([tmp_path], {"log.segment.bytes": "1000"})
    log = lm.get_or_create_log(TP)
    fill(log, 25)
    other = TopicPartition(TP.topic, TP.partition + 1)
    fill(lm.get_or_create_log(other), 3)
    lm.close_unclean()           # the process died: no checkpoints, no marker
    caplog.set_level(logging.INFO, logger="kafkapy.log")
    again = manager([tmp_path], {"log.segment.bytes": "1000"})
    assert "was not shut down cleanly" in caplog.text
    assert "recovered" in caplog.text and "MB/s" in caplog.text
    assert "Recovering unflushed segment 0. 0/" in caplog.text
    # Kafka's per-directory progress: every log, numbered in completion order
    loads = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Completed")]
    assert sorted(m[m.rindex("("):] for m in loads) == [
        f"(1/2 completed in {tmp_path})", f"(2/2 completed in {tmp_path})"]
    segments = len(again.get_log(TP).segments)           # type: ignore[union-attr]
    assert any(m.startswith(f"Completed load of log {TP} with {segments} segments and "
                            f"log-end-offset 25 ") for m in loads), loads
    log2 = again.get_log(TP)
    assert log2 is not None and log2.log_end_offset == 25
    log2.update_high_watermark(25)
    assert offsets(log2) == list(range(25))
    again.close()


def test_partition_metadata_is_written_off_the_event_loop(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """As Kafka's PartitionMetadataFile: the topic id is recorded when the log is created and
    the file written (with its fsyncs) by the background flush, in a worker thread; a log
    closed before that writes it on close. Creating partitions waits on no fsync."""
    writers: list[int] = []
    real_write = log_module.write_partition_metadata

    def spy(directory: Path, topic_id: uuid.UUID) -> None:
        writers.append(threading.get_ident())
        real_write(directory, topic_id)
    monkeypatch.setattr(log_module, "write_partition_metadata", spy)
    lm = manager([tmp_path])
    ids = {p: uuid.uuid4() for p in range(3)}
    logs = {p: lm.get_or_create_log(TopicPartition(TP.topic, p), ids[p]) for p in ids}
    assert writers == []
    assert all(read_partition_metadata(log.dir) is None and log.roll_flush_due
               for log in logs.values())
    assert [lm.topic_id_of(TopicPartition(TP.topic, p)) for p in ids] == list(ids.values())
    trio.run(run_until, lm, lambda: len(writers) == 3)
    assert threading.get_ident() not in writers
    assert {p: read_partition_metadata(log.dir) for p, log in logs.items()} == ids
    assert not any(log.roll_flush_due for log in logs.values())
    lm.close()
    # Opened again with the id its file holds: nothing to write.
    same = Log.open(logs[0].dir, LogConfig(), topic_id=ids[0], had_clean_shutdown=True)
    assert not same.roll_flush_due and same.topic_id == ids[0]
    same.close_unclean()
    again = manager([tmp_path])
    # A new log closed before any flush: written by its clean close.
    writers.clear()
    tp = TopicPartition(TP.topic, 9)
    new_id = uuid.uuid4()
    again.get_or_create_log(tp, new_id)
    again.close()
    assert writers == [threading.get_ident()]
    assert read_partition_metadata(tmp_path / str(tp)) == new_id


def test_a_log_that_lost_its_partition_metadata_in_a_crash_gets_it_again(tmp_path: Path
                                                                         ) -> None:
    lm = manager([tmp_path])
    lost, kept = TopicPartition(TP.topic, 0), TopicPartition(TP.topic, 1)
    lost_id, kept_id, other_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    fill(lm.get_or_create_log(lost, lost_id), 3)
    trio.run(lm.flush_log, lm.get_or_create_log(kept, kept_id))
    lm.close_unclean()          # died before the flush job of ``lost`` ran
    assert read_partition_metadata(tmp_path / str(lost)) is None
    again = manager([tmp_path])
    assert again.topic_id_of(lost) is None and again.topic_id_of(kept) == kept_id
    # Made leader with its topic id (Kafka's assignTopicId): kept, and written by a flush.
    log = again.get_or_create_log(lost, lost_id)
    assert log.log_end_offset == 3 and again.topic_id_of(lost) == lost_id
    trio.run(run_until, again, lambda: read_partition_metadata(log.dir) == lost_id)
    # A log whose file is there keeps what the file says.
    again.get_or_create_log(kept, other_id)
    assert again.topic_id_of(kept) == kept_id
    again.close()


def test_create_logs_creates_them_in_a_worker_thread(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The file system's part of creating new logs (mkdir, the segment and index files) runs
    in a worker thread, in ``-future`` directories renamed in on the event loop; logs that
    exist are left alone; get_or_create_log then finds the new ones and gives them their
    topic id; the preferred dir of a partition is honoured."""
    a, b = tmp_path / "a", tmp_path / "b"
    lm = manager([a, b])
    old = lm.get_or_create_log(TopicPartition("t", 0), uuid.uuid4())
    wanted = [TopicPartition("t", p) for p in range(5)]
    lm.maybe_update_preferred_log_dir(wanted[4], b)
    calls = spy_log_open(monkeypatch)
    created = trio.run(lm.create_logs, [*wanted, wanted[1]])
    assert list(created) == wanted[1:]
    assert [(c.log_name, c.name.endswith("-future"), c.on_event_loop) for c in calls] == \
        [(str(tp), True, False) for tp in wanted[1:]]
    assert threading.get_ident() not in {c.thread for c in calls}
    assert lm.get_log(wanted[0]) is old
    topic_id = uuid.uuid4()
    for tp in wanted[1:]:
        log = created[tp]
        assert lm.get_or_create_log(tp, topic_id) is log and log.topic_id == topic_id
        assert log.dir == lm.dir_of(tp) / str(tp) and not log.is_future
    assert lm.dir_of(wanted[4]) == b and wanted[4] not in lm.preferred_dirs
    # Spread over the dirs as get_or_create_log would (the fewest logs first).
    assert sorted(str(lm.dir_of(tp).name) for tp in wanted) == ["a", "a", "b", "b", "b"]
    assert not [p for d in (a, b) for p in d.iterdir() if p.name.endswith("-future")]
    for i, tp in enumerate(wanted):
        lm.get_log(tp).append_as_leader(build_batch([(None, b"v%d" % i, None, 1)]))
    lm.close()
    again = manager([a, b])
    assert {tp: (again.get_log(tp).log_end_offset, again.topic_id_of(tp)) for tp in wanted[1:]} \
        == {tp: (1, topic_id) for tp in wanted[1:]}
    again.close()


def test_create_logs_yields_to_a_log_created_meanwhile(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A log get_or_create_log creates while create_logs is in its worker thread wins: the
    staged one is closed and its directory removed; nothing else is disturbed."""
    lm = manager([tmp_path])
    tp, other = TopicPartition("t", 0), TopicPartition("t", 1)
    entered, release = threading.Event(), threading.Event()
    real = Log.open.__func__        # type: ignore[attr-defined]

    def slow(cls: type[Log], directory: Path, *args: object, **kwargs: object) -> Log:
        if Path(directory).name.endswith("-future"):
            entered.set()
            assert release.wait(10)
        return real(cls, directory, *args, **kwargs)       # type: ignore[no-any-return]
    monkeypatch.setattr(Log, "open", classmethod(slow))

    async def race() -> dict[TopicPartition, Log]:
        async with trio.open_nursery() as nursery:
            out: dict[TopicPartition, Log] = {}

            async def create() -> None:
                out.update(await lm.create_logs([tp, other]))
            nursery.start_soon(create)
            while not entered.is_set():
                await trio.sleep(0.005)
            lm.get_or_create_log(tp).append_as_leader(build_batch([(None, b"x", None, 1)]))
            release.set()
        return out
    created = trio.run(race)
    assert list(created) == [other]
    mine = lm.get_log(tp)
    assert mine is not None and mine.log_end_offset == 1 and mine.dir == tmp_path / str(tp)
    names = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert [n for n in names if not n.endswith("-delete")] == ["t-0", "t-1"]
    lm.close()      # removes the dropped directory
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["t-0", "t-1"]


def test_a_log_whose_creation_a_crash_cut_is_removed_on_load(tmp_path: Path) -> None:
    """A crash between a new log's creation in its ``-future`` directory and its rename
    leaves the directory; the next load removes it and loads no log for it."""
    lm = manager([tmp_path])
    tp = TopicPartition("t", 3)
    staged = Log.open(tmp_path / log_module.future_dir_name(tp), LogConfig())
    staged.append_as_leader(build_batch([(None, b"x", None, 1)]))
    staged.close_unclean()
    lm.close_unclean()
    again = manager([tmp_path])
    assert again.get_log(tp) is None and list(again.future_logs) == []
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == []
    again.close()


def test_a_clean_load_opens_logs_in_its_own_thread_and_recovery_uses_the_pool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads only pay for recovery (its scan releases the GIL): after a clean shutdown two
    threads opening logs would only take the GIL from each other."""
    lm = manager([tmp_path])
    for p in range(4):
        fill(lm.get_or_create_log(TopicPartition(TP.topic, p)), 3)
    lm.close()
    opened_by: list[int] = []
    real_open = Log.open.__func__      # type: ignore[attr-defined]

    def spy(cls: type[Log], *args: object, **kwargs: object) -> Log:
        opened_by.append(threading.get_ident())
        return real_open(cls, *args, **kwargs)      # type: ignore[no-any-return]
    monkeypatch.setattr(Log, "open", classmethod(spy))

    again = manager([tmp_path], {"num.recovery.threads.per.data.dir": "2"})
    assert opened_by == [threading.get_ident()] * 4
    assert all(again.get_log(TopicPartition(TP.topic, p)).log_end_offset == 3  # type: ignore[union-attr]
               for p in range(4))
    again.close_unclean()
    opened_by.clear()
    recovered = manager([tmp_path], {"num.recovery.threads.per.data.dir": "2"})
    assert len(opened_by) == 4 and threading.get_ident() not in opened_by
    assert all(recovered.get_log(TopicPartition(TP.topic, p)).log_end_offset == 3  # type: ignore[union-attr]
               for p in range(4))
    recovered.close()


def test_flush_messages_policy_flushes_in_a_worker_thread(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    lm = manager([tmp_path], {"log.flush.interval.messages": "3"})
    log = lm.get_or_create_log(TP)
    threads: list[int] = []
    real_run = FlushJob.run

    def spy(job: FlushJob) -> None:
        threads.append(threading.get_ident())
        real_run(job)
    monkeypatch.setattr(FlushJob, "run", spy)

    async def main() -> None:
        fill(log, 2)
        await lm.maybe_flush(log)
        assert log.recovery_point == 0          # 2 < flush.messages
        fill(log, 1)
        await lm.maybe_flush(log)
        assert log.recovery_point == 3
    trio.run(main)
    assert threads and threading.get_ident() not in threads
    lm.close()


def test_flush_ms_policy_runs_in_the_background(tmp_path: Path) -> None:
    lm = manager([tmp_path], {"log.flush.interval.ms": "50"})
    log = lm.get_or_create_log(TP)
    fill(log, 5)
    assert log.recovery_point == 0
    trio.run(run_until, lm, lambda: log.recovery_point == 5)
    lm.close()


def test_a_roll_flushes_the_rolled_segments_not_the_active_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka's roll schedules flushUptoOffsetExclusive(newSegment.baseOffset): the recovery
    point moves to the active segment's base, and the active segment's appends after the roll
    wait for log.flush.interval.* (never here: the defaults are Long.MAX_VALUE)."""
    # The flush checks run once a second (log.flush.scheduler.interval.ms would set
    # log.flush.interval.ms too, whose default it is).
    lm = manager([tmp_path], {"log.segment.bytes": "1000"})
    log = lm.get_or_create_log(TP)
    fill(log, 12)
    assert len(log.segments) >= 2
    active = log.segments[-1]
    assert active.base_offset < log.log_end_offset      # appends after the roll
    flushed: list[int] = []
    real_run = FlushJob.run

    def spy(job: FlushJob) -> None:
        flushed.append(job.upto)
        real_run(job)
    monkeypatch.setattr(FlushJob, "run", spy)
    trio.run(run_until, lm, lambda: not log.roll_flush_due)
    assert flushed == [active.base_offset]
    assert log.recovery_point == active.base_offset < log.log_end_offset
    lm.close()


def test_retention_task_renames_then_removes_after_the_delay(tmp_path: Path) -> None:
    now = [10_000_000]
    lm = manager([tmp_path], {"log.segment.bytes": "1000", "log.retention.ms": "60000",
                              "log.retention.check.interval.ms": "20",
                              "log.segment.delete.delay.ms": "5000"}, clock=lambda: now[0])
    log = lm.get_or_create_log(TP)
    fill(log, 20, ts=now[0] - 120_000)           # old records: past retention
    fill(log, 3, ts=now[0])                      # fresh ones
    old_bases = [s.base_offset for s in log.segments[:-1]]
    assert len(old_bases) >= 2

    def renamed() -> bool:
        return bool(list(log.dir.glob("*.log.deleted")))
    trio.run(run_until, lm, renamed)
    assert log.log_start_offset > 0
    assert all(o >= log.log_start_offset for o in offsets(log))
    # Still there until file.delete.delay.ms passes on the manager's clock.
    assert list(log.dir.glob("*.deleted"))
    now[0] += 6000
    trio.run(run_until, lm, lambda: not list(log.dir.glob("*.deleted")))
    lm.close()


def test_compaction_runs_in_the_background_and_its_checkpoint_persists(tmp_path: Path
                                                                        ) -> None:
    overrides: dict[str, dict[str, object]] = {
        "compacted": {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.1",
                      "segment.bytes": "1200"}}
    props = {"log.cleaner.backoff.ms": "20"}
    lm = manager([tmp_path], props, overrides)
    tp = TopicPartition("compacted", 0)
    log = lm.get_or_create_log(tp)
    for i in range(60):
        log.append_as_leader(build_batch([(b"k%d" % (i % 3), b"v%d" % i, None, i)]))
    log.update_high_watermark(log.log_end_offset)
    size_before = log.size
    trio.run(run_until, lm, lambda: lm.cleaner.checkpoint_of(tmp_path).get(tp, 0) > 0)
    assert log.size < size_before
    end = lm.cleaner.checkpoint_of(tmp_path)[tp]
    lm.close()
    again = manager([tmp_path], props, overrides)
    assert again.cleaner.checkpoint_of(tmp_path)[tp] == end
    again.close()


def test_a_log_deleted_while_the_cleaner_compacts_it_ends_only_that_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The cleaner's worker writes the cleaned segment into the log's directory; a topic
    # deleted meanwhile (its directory renamed away) must not end the broker.
    overrides: dict[str, dict[str, object]] = {
        "compacted": {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.1",
                      "segment.bytes": "1200"}}
    lm = manager([tmp_path], {"log.cleaner.backoff.ms": "20"}, overrides)
    tp = TopicPartition("compacted", 0)
    log = lm.get_or_create_log(tp)
    for i in range(60):
        log.append_as_leader(build_batch([(b"k%d" % (i % 3), b"v%d" % i, None, i)]))
    log.update_high_watermark(log.log_end_offset)
    real_compact = lm.cleaner.compact

    def deleted_first(cand: object) -> object:
        # In the worker thread: the deletion runs on the event loop, then the compaction.
        trio.from_thread.run_sync(lm.delete_log, tp)
        return real_compact(cand)  # type: ignore[arg-type]

    monkeypatch.setattr(lm.cleaner, "compact", deleted_first)

    async def one_pass() -> int:
        return await lm.clean_pass()

    assert trio.run(one_pass) == 0
    assert lm.get_log(tp) is None
    (gone,) = tmp_path.glob("compacted-0.*-delete")
    assert not list(gone.glob("*.cleaned"))
    lm.close()


def test_delete_log_renames_then_removes_and_recreates_empty(tmp_path: Path) -> None:
    lm = manager([tmp_path], {"log.segment.delete.delay.ms": "0"})
    log = lm.get_or_create_log(TP)
    fill(log, 5)
    lm.delete_log(TP)
    assert lm.get_log(TP) is None
    assert not (tmp_path / "orders-0").exists()
    assert len(list(tmp_path.glob("orders-0.*-delete"))) == 1
    fresh = lm.get_or_create_log(TP)
    assert fresh.log_end_offset == 0
    trio.run(run_until, lm, lambda: not list(tmp_path.glob("*-delete")))
    lm.close()


def test_the_longest_topic_names_logs_are_created_and_deleted(tmp_path: Path) -> None:
    """A topic name may have 249 characters: its log's -delete name (Kafka's
    logDeleteDirName) cuts the topic so that it stays within 255; create_logs leaves such a
    log, whose -future staging name would be too long, to get_or_create_log."""
    longest = TopicPartition("t" * 249, 0)
    name = log_module.delete_dir_name(longest)
    assert len(name) == 255 and name.endswith("-delete")
    assert log_module.parse_log_dir_name(name)[1] == "-delete"
    lm = manager([tmp_path], {"log.segment.delete.delay.ms": "0"})
    assert trio.run(lm.create_logs, [longest]) == {}
    log = lm.get_or_create_log(longest)
    fill(log, 3)
    lm.delete_log(longest)
    assert lm.get_log(longest) is None and not (tmp_path / str(longest)).exists()
    trio.run(run_until, lm, lambda: not list(tmp_path.glob("*-delete")))
    lm.close()


TOPIC_ID = uuid.UUID("0b9a6e3c-5c1d-4e55-9d53-4f2d8c7a1e01")


def _epoch_flush_pending(lm: LogManager) -> tuple[Log, FlushJob]:
    """A new log whose leader epoch changed, and its flush job prepared on the event loop
    (the job writes the epoch checkpoint and partition.metadata later, in a worker
    thread)."""
    log = lm.get_or_create_log(TP, TOPIC_ID)
    log.append_as_leader(build_batch([(b"k", b"v", None, int(time.time() * 1000))]),
                         leader_epoch=3)
    job = log.begin_flush()
    assert job.epochs is not None and job.partition_metadata == (log.dir, TOPIC_ID)
    return log, job


def test_a_flush_job_that_finds_its_log_deleted_leaves_nothing_and_raises_nothing(
        tmp_path: Path) -> None:
    # The race that ended a broker (CI): a topic deleted while the background flusher's job,
    # prepared before the deletion, was writing the partition's leader-epoch-checkpoint.
    lm = manager([tmp_path])
    log, job = _epoch_flush_pending(lm)
    lm.delete_log(TP)
    job.run()
    log.end_flush(job)
    assert job.ran and job.epochs_missed is not None and job.metadata_missed is not None
    assert not (tmp_path / "orders-0").exists()
    (gone,) = tmp_path.glob("orders-0.*-delete")
    assert not list(gone.glob("*.tmp"))
    fresh = lm.get_or_create_log(TP)       # the broker goes on: the topic can come back
    assert fresh.log_end_offset == 0
    lm.close()


def test_a_flush_job_that_finds_its_log_moved_writes_its_files_at_the_new_place(
        tmp_path: Path) -> None:
    lm = manager([tmp_path])
    log, job = _epoch_flush_pending(lm)
    moved = tmp_path / f"orders-0.{uuid.uuid4().hex}-future"
    log.rename_dir(moved)
    job.run()
    log.end_flush(job)
    assert log.epochs.dirty                 # missed: due again, at the new path
    assert job.metadata_missed is not None and log.roll_flush_due
    log.flush()
    assert read_leader_epochs(moved / LEADER_EPOCH_CHECKPOINT) == [EpochEntry(3, 0)]
    assert read_partition_metadata(moved) == TOPIC_ID
    log.close()


def test_a_flush_job_whose_live_log_dir_vanished_raises(tmp_path: Path) -> None:
    # Not a race: the directory of a live log is gone (a failed disk, an operator's rm -r).
    lm = manager([tmp_path])
    log, job = _epoch_flush_pending(lm)
    shutil.rmtree(tmp_path / "orders-0")
    job.run()
    with pytest.raises(FileNotFoundError):
        log.end_flush(job)
    log.close_unclean()
    # The same with only partition.metadata to write.
    other = TopicPartition(TP.topic, 1)
    log = lm.get_or_create_log(other, TOPIC_ID)
    job = log.begin_flush()
    assert job.epochs is None and job.partition_metadata is not None
    shutil.rmtree(tmp_path / str(other))
    job.run()
    with pytest.raises(FileNotFoundError):
        log.end_flush(job)
    log.close_unclean()


def test_leftover_delete_dirs_are_removed_on_load(tmp_path: Path) -> None:
    manager([tmp_path]).close()
    leftover = tmp_path / f"orders-0.{uuid.uuid4().hex}-delete"
    leftover.mkdir()
    (leftover / "00000000000000000000.log").write_bytes(b"x")
    manager([tmp_path]).close()
    assert not leftover.exists()


def test_topic_config_changes_apply_live(tmp_path: Path) -> None:
    overrides: dict[str, dict[str, object]] = {}
    lm = manager([tmp_path], overrides=overrides)
    log = lm.get_or_create_log(TP)
    assert log.config.segment_bytes == 1073741824
    overrides["orders"] = {"segment.bytes": "2000", "retention.ms": "1000"}
    lm.reconfigure_topic("orders")
    assert (log.config.segment_bytes, log.config.retention_ms) == (2000, 1000)
    assert all(s.config is log.config for s in log.segments)
    lm.reconfigure_broker({"log.retention.hours": "1"})
    assert log.config.retention_ms == 1000            # the topic override still wins
    overrides.clear()
    lm.reconfigure_broker({"log.retention.hours": "1"})
    assert log.config.retention_ms == 3_600_000
    lm.close()


def test_async_shutdown(tmp_path: Path) -> None:
    lm = manager([tmp_path])
    log = lm.get_or_create_log(TP)
    fill(log, 4)

    async def main() -> None:
        await lm.shutdown()
    trio.run(main)
    assert log.closed and (tmp_path / CLEAN_SHUTDOWN_FILE).exists()
    assert read_offsets(tmp_path / RECOVERY_POINT_CHECKPOINT) == {TP: 4}


def test_shutdown_flushes_only_unflushed_logs_off_the_event_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lm = manager([tmp_path])
    logs = {TopicPartition("orders", p): lm.get_or_create_log(TopicPartition("orders", p))
            for p in range(6)}
    for p in (1, 3, 4):
        fill(logs[TopicPartition("orders", p)], 3 + p)
    flushed: list[tuple[int, list[int]]] = []
    real_run = FlushJob.run

    def spy(job: FlushJob) -> None:
        flushed.append((threading.get_ident(), list(job.fds)))
        real_run(job)
    monkeypatch.setattr(FlushJob, "run", spy)
    # Jobs hold descriptors from preparation to their end: at most a chunk's at a time.
    monkeypatch.setattr(log_manager_module, "_FLUSH_CHUNK", 2)
    chunks: list[int] = []
    real_chunk = LogManager._run_flush_jobs

    async def chunk_spy(self: LogManager, pending: list[tuple[Log, FlushJob]],
                        threads: int) -> None:
        chunks.append(len(pending))
        await real_chunk(self, pending, threads)
    monkeypatch.setattr(LogManager, "_run_flush_jobs", chunk_spy)

    async def main() -> None:
        await lm.flush_logs(list(logs.values()))
        # Flushed: nothing is left to do, so a second pass syncs nothing.
        assert {tp.partition: log.recovery_point for tp, log in logs.items()} == \
            {0: 0, 1: 4, 2: 0, 3: 6, 4: 7, 5: 0}
        ran = [fds for _t, fds in flushed if fds]
        await lm.flush_logs(list(logs.values()))
        assert [fds for _t, fds in flushed if fds] == ran
        await lm.shutdown()
    trio.run(main)
    # The three logs with data were fsynced in worker threads (segment, indexes, ...), once:
    # the empty logs, and every log at shutdown, had nothing unflushed: their jobs held no
    # descriptor.
    synced = [t for t, fds in flushed if fds]
    assert len(synced) == 3 and threading.get_ident() not in synced
    assert chunks == [1, 1, 1]      # logs 0-1 (one to sync), 2-3 (one), 4-5 (one); not [3]

    assert read_offsets(tmp_path / RECOVERY_POINT_CHECKPOINT) == \
        {tp: log.log_end_offset for tp, log in logs.items()}
    assert (tmp_path / CLEAN_SHUTDOWN_FILE).exists()


_MANY_LOGS_SHUTDOWN = """
import resource, sys, trio
from pathlib import Path
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.log.checkpoints import read_clean_shutdown
from kafkapy.log.log_manager import LogManager
from kafkapy.protocol.records import build_batch
d = Path(sys.argv[1])
lm = LogManager([d])
lm.load()
batch = build_batch([(None, b"v" * 50, None, 1_700_000_000_000)])
for p in range(600):
    lm.get_or_create_log(TopicPartition("many", p)).append_as_leader(bytearray(batch))
# 600 open segments; each flush job holds three more descriptors (segment, two indexes):
# all 600 jobs at once need 2,400, more than this limit.
resource.setrlimit(resource.RLIMIT_NOFILE, (1600, 1600))
trio.run(lm.shutdown)
assert read_clean_shutdown(d)
print("clean")
"""


def test_shutdown_of_many_logs_stays_within_the_descriptor_limit(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _MANY_LOGS_SHUTDOWN, str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "clean", out.stderr[-2000:]
    assert read_offsets(tmp_path / RECOVERY_POINT_CHECKPOINT) == \
        {TopicPartition("many", p): 1 for p in range(600)}


def test_shutdown_waits_for_a_checkpoint_being_written_and_writes_the_last_word(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A periodic checkpoint is being written in a worker thread when shutdown comes: the
    final checkpoints wait for it (never two writers of one file: they share the temporary
    file), and they are the ones left on disk, with the newest high watermark."""
    lm = manager([tmp_path], {"replica.high.watermark.checkpoint.interval.ms": "10"})
    log = lm.get_or_create_log(TP)
    fill(log, 3)
    writing = threading.Event()
    active, most = [0], [0]
    real = LogManager._write

    def slow(name: str, snapshot: dict[Path, dict[TopicPartition, int]]) -> None:
        if set(snapshot) != {tmp_path}:
            # Another LogManager of this process (a session-wide broker of other tests, in
            # its own thread) goes through the patched class too: not this test's writer.
            real(name, snapshot)
            return
        active[0] += 1
        most[0] = max(most[0], active[0])
        writing.set()
        time.sleep(0.05)
        real(name, snapshot)
        active[0] -= 1

    monkeypatch.setattr(LogManager, "_write", staticmethod(slow))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(lm.run)
            while not writing.is_set():
                await trio.sleep(0.001)
            fill(log, 2)            # after the background job took its snapshot (HW 3)
            await lm.shutdown()
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert most[0] == 1
    assert read_offsets(tmp_path / REPLICATION_OFFSET_CHECKPOINT) == {TP: 5}
    assert (tmp_path / CLEAN_SHUTDOWN_FILE).exists()


def test_a_locked_dir_is_refused_and_left_alone(tmp_path: Path) -> None:
    """Kafka's ``.lock``: a second broker on a dir in use must not load, recover, checkpoint
    or mark clean the first one's live logs."""
    first = manager([tmp_path])
    fill(first.get_or_create_log(TP), 5)
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    second = LogManager([tmp_path], node_id=1)
    with pytest.raises(KafkaStorageError, match=r"Failed to acquire lock on file \.lock"):
        second.load()
    second.close()
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before
    assert not (tmp_path / CLEAN_SHUTDOWN_FILE).exists()
    first.close()
    # Released on close: the next broker loads it.
    third = manager([tmp_path])
    log = third.get_log(TP)
    assert log is not None and log.log_end_offset == 5
    third.close()
