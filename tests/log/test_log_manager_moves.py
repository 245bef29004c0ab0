"""LogManager's half of a replica move between log dirs (AlterReplicaLogDirs, KIP-113), on
real log dirs: the future log, the swap (offsets, epochs, producer state, indexes,
checkpoints of both dirs), discarding a future log, and what ``load`` does with the states a
crash can leave (a future dir; a swap interrupted between its renames). The copy itself and
the broker paths are tested in tests/server/test_replica_alter_log_dirs_manager.py."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path

import pytest
import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import KafkaStorageError
from kafkapy.log.checkpoints import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    read_offsets,
    read_partition_metadata,
)
from kafkapy.log.log import Log, parse_log_dir_name
from kafkapy.log.log_manager import REPLACED_MARKER, LogManager
from kafkapy.protocol.records import build_batch, scan_batches

TP = TopicPartition("orders", 0)
SMALL_SEGMENTS = {"log.segment.bytes": 4096, "log.segment.delete.delay.ms": 0}


def manager(dirs: list[Path]) -> LogManager:
    lm = LogManager(dirs, broker_props=SMALL_SEGMENTS)
    lm.load()
    return lm


def idempotent_batch(pid: int, seq: int, epoch: int, n: int = 3) -> bytes:
    return bytes(build_batch([(b"k%d" % i, b"v" * 200, None, int(time.time() * 1000))
                              for i in range(n)], producer_id=pid, producer_epoch=0,
                             base_sequence=seq, partition_leader_epoch=epoch))


def values(log: Log) -> list[int]:
    data = log.read(log.log_start_offset, 1 << 30).read()
    return [r.offset for b in scan_batches(data).batches for r in b.records()]


def copy_all(current: Log, future: Log) -> None:
    """What the mover does, in one go: the current log's batches appended as they are."""
    while future.log_end_offset < current.log_end_offset:
        future.append_as_follower(
            current.read(future.log_end_offset, future.config.segment_bytes).read())


def test_dir_names_parse() -> None:
    assert parse_log_dir_name("a.b-c-7") == (TopicPartition("a.b-c", 7), "")
    hexid = "0123456789abcdef" * 2
    assert parse_log_dir_name(f"a.b-7.{hexid}-future") == (TopicPartition("a.b", 7), "-future")
    assert parse_log_dir_name(f"a-0.{hexid}-delete") == (TopicPartition("a", 0), "-delete")
    for bad in ("a-0.xyz-future", f"a-0{hexid}-future", "nope"):
        with pytest.raises(ValueError):
            parse_log_dir_name(bad)


def test_swap_moves_everything(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    lm = manager([a, b])
    log = lm.get_or_create_log(TP)
    src = lm.dir_of(TP)
    dst = b if src == a else a
    topic_id = read_partition_metadata(log.dir)
    for i in range(40):
        log.append_as_leader(idempotent_batch(7, 3 * i, epoch=i // 10))
    log.update_high_watermark(30)
    log.delete_records(6)       # the log start moves into the first segment
    future = lm.create_future_log(TP, dst)
    assert future.is_future and future.dir.parent == dst
    assert future.dir.name.startswith("orders-0.") and future.dir.name.endswith("-future")
    assert read_partition_metadata(future.dir) == topic_id
    copy_all(log, future)
    epochs_before = list(log.epochs.entries)
    new = lm.replace_current_with_future(TP)
    assert new is future and not new.is_future
    assert lm.get_log(TP) is new and lm.dir_of(TP) == dst and not lm.future_logs
    assert new.dir == dst / "orders-0"
    assert not (src / "orders-0").exists()
    deleting = [p for p in src.iterdir() if p.name.endswith("-delete")]
    assert len(deleting) == 1 and (deleting[0] / REPLACED_MARKER).exists()
    assert (new.log_start_offset, new.high_watermark, new.log_end_offset) == (6, 30, 120)
    assert new.epochs.entries == epochs_before
    assert values(new) == list(range(6, 120))
    # The producer's state came along: its next batch is in sequence, a retry is a duplicate.
    assert new.append_as_leader(idempotent_batch(7, 117, epoch=3)).duplicate
    new.append_as_leader(idempotent_batch(7, 120, epoch=4))
    # Appends go to the new dir; the old one is removed with the background's next pass.
    lm.close()
    assert not any(p.name.startswith("orders-0") for p in src.iterdir())
    for d, present in ((dst, True), (src, False)):
        for name in (RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT):
            assert (TP in read_offsets(d / name)) is present, (d, name)
    # The copy starts at the log start offset: its first segment's base, so no entry needed.
    assert TP not in read_offsets(src / LOG_START_OFFSET_CHECKPOINT)
    names = {p.suffix for p in (dst / "orders-0").iterdir()}
    assert {".log", ".index", ".timeindex", ".snapshot"} <= names
    lm2 = manager([a, b])
    again = lm2.get_log(TP)
    assert again is not None and lm2.dir_of(TP) == dst
    assert (again.log_start_offset, again.high_watermark, again.log_end_offset) == (6, 30, 123)
    assert values(again) == list(range(6, 123))
    assert again.append_as_leader(idempotent_batch(7, 120, epoch=4)).duplicate
    lm2.close()


def test_discard_future_log(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    lm = manager([a, b])
    log = lm.get_or_create_log(TP)
    dst = b if lm.dir_of(TP) == a else a
    log.append_as_leader(idempotent_batch(1, 0, 0))
    future = lm.create_future_log(TP, dst)
    copy_all(log, future)
    lm.discard_future_log(TP)
    assert not lm.future_logs and future.closed
    assert not any(p.name.endswith("-future") for p in dst.iterdir())
    lm.close()
    assert not any(p.name.startswith("orders-0") for p in dst.iterdir())
    assert lm.dir_of(TP) != dst


def test_a_move_whose_future_name_would_be_too_long_is_refused(tmp_path: Path) -> None:
    """A future log's name (``<topic>-<partition>.<id>-future``, not cut short in Kafka) of a
    long topic would exceed 255 characters: the move is refused and the dir stays online (a
    failed mkdir would have marked it offline)."""
    a, b = tmp_path / "a", tmp_path / "b"
    lm = manager([a, b])
    tp = TopicPartition("t" * 240, 0)
    lm.get_or_create_log(tp)
    dst = b if lm.dir_of(tp) == a else a
    with pytest.raises(KafkaStorageError, match="more than 255"):
        lm.create_future_log(tp, dst)
    assert lm.offline_dirs == set() and lm.future_logs == {}
    assert not [p for p in dst.iterdir() if p.is_dir()]
    lm.close()


def test_the_flusher_flushes_future_logs_too(tmp_path: Path) -> None:
    """Kafka's flushDirtyLogs walks current and future logs: a future log is flushed by the
    policy while it is copied, and its partition.metadata written, before any swap."""
    a, b = tmp_path / "a", tmp_path / "b"
    lm = LogManager([a, b], broker_props={**SMALL_SEGMENTS, "log.flush.interval.ms": 20})
    lm.load()
    topic_id = uuid.uuid4()
    log = lm.get_or_create_log(TP, topic_id)
    dst = b if lm.dir_of(TP) == a else a
    for i in range(5):
        log.append_as_leader(idempotent_batch(1, 3 * i, 0))
    future = lm.create_future_log(TP, dst)
    copy_all(log, future)
    assert read_partition_metadata(future.dir) is None
    assert future.recovery_point < future.log_end_offset == 15

    def flushed() -> bool:
        return read_partition_metadata(future.dir) == topic_id and \
            future.recovery_point == future.log_end_offset

    async def background() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(lm.run)
            with trio.move_on_after(10):
                while not flushed():
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
    trio.run(background)
    assert flushed(), (read_partition_metadata(future.dir), future.recovery_point)
    assert lm.future_logs == {TP: future}
    lm.close()


def _crash_layout(tmp_path: Path, *, renamed_future: bool) -> tuple[Path, Path, Path]:
    """A swap interrupted by a crash: the marker is written; with ``renamed_future`` the
    future dir got its final name too (two ``orders-0`` dirs)."""
    a, b = tmp_path / "a", tmp_path / "b"
    lm = manager([a, b])
    log = lm.get_or_create_log(TP)
    src = lm.dir_of(TP)
    assert src is not None
    dst = b if src == a else a
    for i in range(30):
        log.append_as_leader(idempotent_batch(9, 3 * i, 0))
    log.update_high_watermark(log.log_end_offset)
    future = lm.create_future_log(TP, dst)
    copy_all(log, future)
    future.flush()
    log.flush()
    (log.dir / REPLACED_MARKER).touch()
    if renamed_future:
        future.rename_dir(dst / str(TP))
    lm.close_unclean()      # kill -9
    return src, dst, future.dir


def test_load_finishes_a_swap_cut_between_its_renames(tmp_path: Path) -> None:
    src, dst, _ = _crash_layout(tmp_path, renamed_future=True)
    assert (src / "orders-0").exists() and (dst / "orders-0").exists()
    lm = manager([tmp_path / "a", tmp_path / "b"])
    log = lm.get_log(TP)
    assert log is not None and lm.dir_of(TP) == dst
    assert values(log) == list(range(90))
    assert not (src / "orders-0").exists()
    assert not any(p.name.startswith("orders-0.") for d in (src, dst) for p in d.iterdir())
    lm.close()


def test_load_keeps_the_current_log_when_the_swap_did_not_start(tmp_path: Path) -> None:
    src, _dst, future_dir = _crash_layout(tmp_path, renamed_future=False)
    assert future_dir.name.endswith("-future") and future_dir.exists()
    lm = manager([tmp_path / "a", tmp_path / "b"])
    log = lm.get_log(TP)
    assert log is not None and lm.dir_of(TP) == src
    assert values(log) == list(range(90))
    assert not (src / "orders-0" / REPLACED_MARKER).exists()
    assert not future_dir.exists()      # a move in flight is not resumed
    lm.close()


def test_two_unmarked_copies_refuse_to_load(tmp_path: Path) -> None:
    src, dst, _ = _crash_layout(tmp_path, renamed_future=True)
    os.unlink(src / "orders-0" / REPLACED_MARKER)
    with pytest.raises(Exception, match="Duplicate log directories"):
        manager([tmp_path / "a", tmp_path / "b"])
    shutil.rmtree(dst / "orders-0")
    lm = manager([tmp_path / "a", tmp_path / "b"])
    assert lm.dir_of(TP) == src
    lm.close()
