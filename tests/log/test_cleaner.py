"""The log cleaner (compaction) on real segment files: what survives, offsets, tombstones and
their delete horizon, the swap, and crash leftovers of a swap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.log.cleaner import LogCleaner
from kafkapy.log.config import LogConfig
from kafkapy.log.log import Log
from kafkapy.protocol.records import BatchHeader, build_batch, scan_batches

TP = TopicPartition("compacted", 0)


class Clock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def compact_config(**kw: object) -> LogConfig:
    base: dict[str, object] = dict(cleanup_policy=("compact",), segment_bytes=1500,
                                   index_interval_bytes=64, min_cleanable_dirty_ratio=0.0,
                                   delete_retention_ms=1000, file_delete_delay_ms=0)
    base.update(kw)
    return LogConfig(**base)  # type: ignore[arg-type]


def open_log(tmp_path: Path, clock: Clock, **kw: object) -> Log:
    return Log.open(tmp_path / str(TP), compact_config(**kw), clock=clock)


def append(log: Log, records: list[tuple[bytes | None, bytes | None]], ts: int = 5000,
           compression: int = 0) -> None:
    log.append_as_leader(build_batch([(k, v, [("h", b"x")], ts + i)
                                      for i, (k, v) in enumerate(records)],
                                     compression=compression), leader_epoch=3)
    log.update_high_watermark(log.log_end_offset)


def all_records(log: Log) -> list[tuple[int, bytes | None, bytes | None]]:
    data = log.read(log.log_start_offset, 1 << 30).read()
    return [(r.offset, r.key, r.value)
            for b in scan_batches(data).batches for r in b.records()]


def all_batches(log: Log) -> list[BatchHeader]:
    return scan_batches(log.read(log.log_start_offset, 1 << 30).read()).batches


def clean(log: Log, cleaner: LogCleaner, tmp_path: Path) -> int:
    return cleaner.clean_now(TP, log, tmp_path)


def test_keeps_the_latest_record_per_key_with_original_offsets(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock)
    for i in range(60):
        append(log, [(b"k%d" % (i % 4), b"v%d" % i)])
    before_end = log.log_end_offset
    active_base = log.active_segment.base_offset
    assert len(log.segments) > 3
    cleaner = LogCleaner(clock)
    assert clean(log, cleaner, tmp_path) >= 1
    recs = all_records(log)
    cleaned = [r for r in recs if r[0] < active_base]
    # Per key only the latest offset below the active segment survives...
    latest_below = {}
    for i in range(active_base):
        latest_below[b"k%d" % (i % 4)] = i
    assert sorted(o for o, _k, _v in cleaned) == sorted(latest_below.values())
    for o, k, v in cleaned:
        assert v == b"v%d" % o and k == b"k%d" % (o % 4)
    # ...and the active segment is untouched.
    assert [r[0] for r in recs if r[0] >= active_base] == list(range(active_base, before_end))
    assert log.log_end_offset == before_end
    assert cleaner.checkpoint_of(tmp_path)[TP] == active_base


def test_partially_kept_batches_keep_base_and_last_offset_and_producer_fields(
        tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock, segment_bytes=100_000)
    payload = build_batch([(b"a", b"1", None, 10), (b"b", b"2", None, 11),
                           (b"a", b"3", None, 12), (b"c", b"4", None, 13)],
                          producer_id=77, producer_epoch=2, base_sequence=5, compression=3)
    log.append_as_leader(payload, leader_epoch=4)
    append(log, [(b"b", b"5")])
    log.update_high_watermark(log.log_end_offset)
    log.roll()
    clean(log, LogCleaner(clock), tmp_path)
    first = all_batches(log)[0]
    assert (first.base_offset, first.last_offset) == (0, 3)   # lastOffsetDelta kept
    assert first.record_count == 2
    assert (first.producer_id, first.producer_epoch, first.base_sequence) == (77, 2, 5)
    assert first.compression == 3 and first.partition_leader_epoch == 4
    assert first.crc_valid
    assert [(r.offset, r.key, r.value, r.timestamp) for r in first.records()] == [
        (2, b"a", b"3", 12), (3, b"c", b"4", 13)]
    # An independent reader (kafka-python) agrees, offsets with their gap included.
    raw = bytes(first.raw)
    assert DefaultRecordBatch(raw).validate_crc()
    assert [(r.offset, r.key, r.value, r.timestamp) for r in DefaultRecordBatch(raw)] == [
        (2, b"a", b"3", 12), (3, b"c", b"4", 13)]


def test_untouched_batches_are_copied_byte_for_byte(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock, segment_bytes=100_000)
    append(log, [(b"x", b"1"), (b"y", b"2")], compression=1)
    append(log, [(b"z", b"3")])
    original = [bytes(b.raw) for b in all_batches(log)]
    log.roll()
    clean(log, LogCleaner(clock), tmp_path)
    assert [bytes(b.raw) for b in all_batches(log)] == original


def test_tombstones_get_a_delete_horizon_then_go(tmp_path: Path) -> None:
    clock = Clock(2_000_000)
    log = open_log(tmp_path, clock, segment_bytes=100_000, delete_retention_ms=5000)
    append(log, [(b"k", b"v1"), (b"j", b"v2")], ts=1000)
    append(log, [(b"k", None)], ts=1500)        # tombstone for k
    log.roll()
    cleaner = LogCleaner(clock)
    clean(log, cleaner, tmp_path)
    batches = all_batches(log)
    assert [(r.offset, r.key, r.value) for b in batches for r in b.records()] == [
        (1, b"j", b"v2"), (2, b"k", None)]
    tomb = batches[-1]
    assert tomb.has_delete_horizon
    assert tomb.base_timestamp == clock.now + 5000
    assert [r.timestamp for r in tomb.records()] == [1500]   # record timestamps stay exact
    assert DefaultRecordBatch(bytes(tomb.raw)).validate_crc()
    # Before the horizon the tombstone stays, after it goes.
    clock.now += 4000
    append(log, [(b"q", b"1")])
    log.roll()
    clean(log, cleaner, tmp_path)
    assert (2, b"k", None) in all_records(log)
    clock.now += 2000
    append(log, [(b"q", b"2")])
    log.roll()
    clean(log, cleaner, tmp_path)
    recs = all_records(log)
    assert all(k != b"k" for _o, k, _v in recs)
    assert (1, b"j", b"v2") in recs


def test_records_without_a_key_are_dropped(tmp_path: Path) -> None:
    clock = Clock()
    # A leader refuses keyless records on a compacted topic (KIP-467); they are in the log
    # when the topic became compacted after they were written.
    log = open_log(tmp_path, clock, segment_bytes=100_000, cleanup_policy=("delete",))
    append(log, [(None, b"orphan"), (b"k", b"v")])
    log.change_config(compact_config(segment_bytes=100_000))
    log.roll()
    clean(log, LogCleaner(clock), tmp_path)
    assert all_records(log) == [(1, b"k", b"v")]


def test_min_compaction_lag_and_high_watermark_bound_the_dirty_part(tmp_path: Path) -> None:
    clock = Clock(100_000)
    log = open_log(tmp_path, clock, segment_bytes=100_000, min_compaction_lag_ms=50_000)
    append(log, [(b"k", b"old")], ts=10_000)
    log.roll()
    append(log, [(b"k", b"new")], ts=90_000)    # within the lag: its segment is uncleanable
    log.roll()
    cleaner = LogCleaner(clock)
    clean(log, cleaner, tmp_path)
    assert [v for _o, _k, v in all_records(log)] == [b"old", b"new"]
    # Past the lag, but the high watermark still below the second segment: nothing either.
    clock.now = 200_000
    log.high_watermark = 1
    clean(log, cleaner, tmp_path)
    assert [v for _o, _k, v in all_records(log)] == [b"old", b"new"]
    log.update_high_watermark(log.log_end_offset)
    clean(log, cleaner, tmp_path)
    assert [v for _o, _k, v in all_records(log)] == [b"new"]


def test_pick_respects_the_dirty_ratio(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock, min_cleanable_dirty_ratio=0.9)
    for i in range(40):
        append(log, [(b"k%d" % i, b"v")])
    cleaner = LogCleaner(clock)
    # All dirty: ratio 1.0 >= 0.9.
    cand = cleaner.pick({TP: log}, {TP: tmp_path})
    assert cand is not None and cand.tp == TP
    cand.close()
    cleaner.clean_now(TP, log, tmp_path)
    # Everything below the active segment is now clean: nothing dirty left to pick.
    assert cleaner.pick({TP: log}, {TP: tmp_path}) is None
    # Delete-only logs are never picked.
    other = Log.open(tmp_path / "plain-0", LogConfig(segment_bytes=1500), clock=clock)
    for i in range(40):
        other.append_as_leader(build_batch([(b"k", b"v" * 50, None, i)]))
    assert cleaner.pick({TopicPartition("plain", 0): other},
                        {TopicPartition("plain", 0): tmp_path}) is None


def test_appends_during_a_pass_survive_and_swap_gives_up_if_segments_vanished(
        tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock, retention_ms=-1)
    for i in range(40):
        append(log, [(b"k%d" % (i % 3), b"v%d" % i)])
    cleaner = LogCleaner(clock)
    cand = cleaner.snapshot(TP, log, tmp_path, clock.now)
    plan = cleaner.compact(cand)
    assert plan is not None and plan.groups
    # Appends between the pass and the swap (the pass ran in a thread) are kept.
    for i in range(40, 50):
        append(log, [(b"k%d" % (i % 3), b"v%d" % i)])
    assert cleaner.swap(plan, tmp_path) == len(plan.groups)
    recs = all_records(log)
    assert [o for o, _k, _v in recs if o >= 40] == list(range(40, 50))
    assert not list(log.dir.glob("*.cleaned"))
    # A pass whose first source segment was deleted meanwhile is abandoned untouched.
    for i in range(50, 90):
        append(log, [(b"k%d" % (i % 3), b"v%d" % i)])
    plan = cleaner.compact(cleaner.snapshot(TP, log, tmp_path, clock.now))
    assert plan is not None
    log.delete_records(log.segments[1].base_offset)
    log.delete_old_segments()
    before = all_records(log)
    assert cleaner.swap(plan, tmp_path) == 0
    assert all_records(log) == before
    assert not list(log.dir.glob("*.cleaned"))


def test_compacted_log_reopens_and_keeps_reading(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock)
    for i in range(80):
        append(log, [(b"k%d" % (i % 7), b"v%d" % i)])
    clean(log, LogCleaner(clock), tmp_path)
    expected = all_records(log)
    log.flush()
    log.close()
    for clean_shutdown in (True, False):
        again = Log.open(tmp_path / str(TP), compact_config(), clock=clock,
                         had_clean_shutdown=clean_shutdown, high_watermark=10**9)
        assert all_records(again) == expected
        # Every offset maps to the batch holding it or the next one (gaps after compaction).
        for o, _k, _v in expected:
            got = scan_batches(again.read(o, 1).read()).batches
            assert got and got[0].base_offset <= o <= got[0].last_offset
        again.close()


def test_an_interrupted_swap_is_completed_on_load(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock)
    for i in range(60):
        append(log, [(b"k%d" % (i % 4), b"v%d" % i)])
    cleaner = LogCleaner(clock)
    plan = cleaner.compact(cleaner.snapshot(TP, log, tmp_path, clock.now))
    assert plan is not None
    expected_kept = {o for o, _k, _v in all_records(log)}
    log.flush()
    log.close()
    segments, cleaned = plan.groups[0]
    # The crash happened after the .cleaned -> .swap rename, before the old segments went.
    os.replace(cleaned, cleaned.with_name(cleaned.name.replace(".cleaned", ".swap")))
    for _s, other in plan.groups[1:]:
        other.unlink()                 # a .cleaned leftover would be removed anyway
    covered = {s.base_offset for s in segments}
    again = Log.open(tmp_path / str(TP), compact_config(), clock=clock,
                     had_clean_shutdown=True, high_watermark=10**9)
    names = sorted(p.name for p in again.dir.iterdir())
    assert not [n for n in names if n.endswith((".swap", ".cleaned", ".deleted"))]
    got = all_records(again)
    offsets = [o for o, _k, _v in got]
    assert offsets == sorted(offsets)
    assert set(offsets) <= expected_kept
    first_uncovered = min(s.base_offset for s in again.segments
                          if s.base_offset not in covered or s.base_offset == min(covered))
    assert first_uncovered == min(covered)
    again.close()


@pytest.mark.parametrize("compression", [0, 1, 2, 3, 4])
def test_every_codec_is_rewritten_with_the_same_codec(tmp_path: Path, compression: int
                                                      ) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock, segment_bytes=100_000)
    append(log, [(b"a", b"1"), (b"b", b"2"), (b"a", b"3")], compression=compression)
    log.roll()
    clean(log, LogCleaner(clock), tmp_path)
    (batch,) = all_batches(log)
    assert batch.compression == compression
    assert [(r.offset, r.value) for r in DefaultRecordBatch(bytes(batch.raw))] == [
        (1, b"2"), (2, b"3")]


def _txn_append(log: Log, pid: int, seq: int, records: list[tuple[bytes, bytes]]) -> None:
    log.append_as_leader(build_batch([(k, v, None, 5000) for k, v in records],
                                     producer_id=pid, producer_epoch=0, base_sequence=seq,
                                     is_transactional=True), leader_epoch=3)
    log.update_high_watermark(log.log_end_offset)


def _marker(log: Log, pid: int, commit: bool) -> None:
    from kafkapy.log.producer_state import AppendOrigin
    from kafkapy.protocol.records import build_control_batch
    log.append_as_leader(build_control_batch(1 if commit else 0, 0, producer_id=pid,
                                             producer_epoch=0, timestamp_ms=5000),
                         leader_epoch=3, origin=AppendOrigin.COORDINATOR)
    log.update_high_watermark(log.log_end_offset)


def test_aborted_records_never_shadow_committed_ones_and_open_transactions_wait(
        tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock)
    append(log, [(b"k", b"committed"), (b"j", b"j1")])
    _txn_append(log, 7, 0, [(b"k", b"aborted")])          # a later record of k, aborted
    _marker(log, 7, commit=False)
    _txn_append(log, 8, 0, [(b"j", b"j2-committed")])
    _marker(log, 8, commit=True)
    for i in range(40):
        append(log, [(b"filler%d" % (i % 3), b"x" * 20)])
    _txn_append(log, 9, 0, [(b"k", b"open")])             # open: at the LSO
    open_offset = log.log_end_offset - 1
    for i in range(40):
        append(log, [(b"later%d" % (i % 3), b"x" * 20)])
    assert log.last_stable_offset == open_offset
    assert len(log.segments) > 3
    assert clean(log, LogCleaner(clock), tmp_path) >= 1
    recs = all_records(log)
    values = {v for _o, k, v in recs if k == b"k"}
    # The aborted record is gone and did not remove the committed one; the open
    # transaction's record is untouched.
    assert b"committed" in values and b"aborted" not in values and b"open" in values
    assert [v for _o, k, v in recs if k == b"j"] == [b"j2-committed"]
    # Markers stay (control batches), so the producer state still sees both ends.
    assert sum(1 for b in all_batches(log) if b.is_control) == 2
