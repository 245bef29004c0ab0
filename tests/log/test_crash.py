"""Crash recovery of the on-disk log, on real files: SIGKILLed writers, torn tails, flipped
bytes, broken indexes, leftover files.

Everything the log stores is checked with an independent reader (``struct`` and the crc32c
package: tests.log.kafka_files): the batch framing and CRC-32C of every ``.log`` file, and the
``.index`` / ``.timeindex`` entries, which must be exactly what Kafka's rule gives for the
batches in the file (an offset-index entry (last offset, start position) for each batch that
starts more than ``index.interval.bytes`` after the previous entry, a time-index entry with the
running maximum timestamp at the same moments when it rose, and the segment's maximum appended
once more when it is rolled or closed). Record contents are functions of the offset
(tests/log/crash_child.py), so every surviving record can be checked.
"""

from __future__ import annotations

import logging
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkapy.errors import CorruptMessageError
from kafkapy.log.checkpoints import EpochEntry
from kafkapy.log.config import LogConfig
from kafkapy.log.log import Log
from kafkapy.protocol.records import BatchHeader, build_batch, scan_batches
from tests.log.crash_child import CONFIG as CHILD_CONFIG
from tests.log.crash_child import key_for, records_for, timestamp_for, value_for
from tests.log.kafka_files import (
    TIME_ENTRY,
    RawBatch,
    kafka_index_model,
    parse_log,
    parse_offset_index,
    parse_time_index,
)

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).resolve().with_name("crash_child.py")
LOGGER = "kafkapy.log"

# ---------------------------------------------- independent readers: tests.log.kafka_files


def segment_files(directory: Path) -> dict[int, list[RawBatch]]:
    return {int(p.name[:20]): parse_log(p.read_bytes(), verify=True, name=p.name)
            for p in sorted(directory.glob("*.log"))}


def check_files(directory: Path, log: Log | None, interval: int,
                expect_trimmed_last: bool = False, gap_after: int | None = None
                ) -> list[RawBatch]:
    """Check the partition directory with the independent readers; returns all batches.

    Segments: named by their first batch's base offset, offsets contiguous from the first
    segment's base; indexes exactly Kafka's for the batches (trimmed, with the closing
    time-index entry, for every segment but the last, or every segment when
    ``expect_trimmed_last``); with ``log`` the open log must agree (segments, LEO, entry
    counts). Only the segment at ``gap_after`` may end before the next one starts."""
    names = sorted(p.name for p in directory.iterdir())
    segs = segment_files(directory)
    bases = sorted(segs)
    allowed = {f"{b:020d}{s}" for b in bases for s in (".log", ".index", ".timeindex")}
    allowed |= {"leader-epoch-checkpoint", "leader-epoch-checkpoint.tmp", "partition.metadata"}
    # Producer-state snapshots: Kafka's, one per roll (named by the new segment's base) and
    # one at the log end on a clean close.
    snapshots = {n for n in names if n.endswith(".snapshot") and n[:20].isdigit()}
    assert all(int(n[:20]) >= (bases[0] if bases else 0) for n in snapshots), snapshots
    assert set(names) - snapshots <= allowed, \
        f"unexpected files {sorted(set(names) - snapshots - allowed)}"
    if log is not None:
        assert [s.base_offset for s in log.segments] == bases
    everything: list[RawBatch] = []
    expect_next = bases[0] if bases else 0
    for i, base in enumerate(bases):
        batches = segs[base]
        closed = i < len(bases) - 1 or expect_trimmed_last
        assert batches or i == len(bases) - 1, f"empty segment {base} that is not the last"
        if batches:
            assert batches[0].base_offset == base, \
                f"segment {base} starts at {batches[0].base_offset}"
        if i and bases[i - 1] == gap_after:
            assert base > expect_next
            expect_next = base
        for b in batches:
            assert b.base_offset == expect_next, f"segment {base}: offset gap or overlap at {b}"
            expect_next = b.last_offset + 1
        if not batches:
            assert base == expect_next, f"empty last segment {base}, log ends at {expect_next}"
        want_offsets, want_times = kafka_index_model(batches, base, interval, closed)
        # The active segment holds the closing time-index entry or not, depending on its
        # history (a clean close wrote it; Kafka's recovery writes it; appends do not).
        want_times_closed = kafka_index_model(batches, base, interval, True)[1]
        index = directory / f"{base:020d}.index"
        time_index = directory / f"{base:020d}.timeindex"
        if log is not None and not closed:
            seg = log.segments[i]
            offsets = parse_offset_index(index, seg.offset_index.entries)
            times = parse_time_index(time_index, seg.time_index.entries)
        else:
            offsets = parse_offset_index(index, stop_at_zeros=True)
            times = parse_time_index(time_index, stop_at_zeros=True)
        assert offsets == want_offsets, f"{index.name}"
        assert times in (want_times, want_times_closed), f"{time_index.name}"
        # Every offset-index entry points at a batch start whose last offset it names.
        starts = {b.position: b for b in batches}
        for rel, position in offsets:
            assert position in starts and starts[position].last_offset == base + rel
        if closed:
            assert index.stat().st_size == 8 * len(offsets), f"{index.name} not trimmed"
            assert time_index.stat().st_size == 12 * len(times), f"{time_index.name} not trimmed"
        if log is not None:
            seg = log.segments[i]
            assert seg.size == (batches[-1].position + batches[-1].size if batches else 0)
            assert (seg.offset_index.entries, seg.time_index.entries) == \
                (len(offsets), len(times))
            assert seg.next_offset == expect_next
            if batches:
                assert seg.max_timestamp == max(b.max_timestamp for b in batches)
        everything.extend(batches)
    if log is not None:
        assert log.log_end_offset == expect_next
    return everything


def log_bytes(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.glob("*.log")))


def check_contents(log: Log, directory: Path, start: int = 0) -> int:
    """A read of the whole log returns exactly the files' bytes, and every record is the one
    written at its offset, offsets contiguous from ``start``. Returns the record count."""
    data = log_bytes(directory)
    fetched = log.read(log.log_start_offset, len(data) + 1)
    assert fetched.read() == data
    scan = scan_batches(data, verify_crc=True)
    assert scan.error is None and scan.valid_bytes == len(data)
    expect = start
    for batch in scan.batches:
        for r in batch.records():
            assert r.offset == expect, f"record at {r.offset}, expected {expect}"
            assert (r.key, r.value, r.timestamp) == \
                (key_for(expect), value_for(expect), timestamp_for(expect)), f"offset {expect}"
            expect += 1
    assert expect == log.log_end_offset
    return expect - start


def check_epochs(log: Log, batches: list[RawBatch]) -> None:
    """The leader epoch cache is exactly where the batches' epochs change."""
    want: list[EpochEntry] = []
    for b in batches:
        if b.leader_epoch >= 0 and (not want or b.leader_epoch > want[-1].epoch):
            want.append(EpochEntry(b.leader_epoch, b.base_offset))
    assert log.epochs.entries == want


def check_append_continues(log: Log, count: int = 3) -> None:
    leo = log.log_end_offset
    info = log.append_as_leader(bytearray(build_batch(records_for(leo, count))))
    assert (info.first_offset, info.last_offset) == (leo, leo + count - 1)
    assert log.log_end_offset == leo + count
    got = BatchHeader(log.read(leo, 1).read())
    assert (got.base_offset, [r.value for r in got.records()]) == \
        (leo, [value_for(o) for o in range(leo, leo + count)])


def make_log(directory: Path, config: LogConfig, counts: list[int], *, codecs: list[int]
             | None = None, epoch_every: int = 0) -> Log:
    """A log of batches of ``counts`` records; with ``epoch_every`` the leader epoch rises
    by one every that many batches (else no epoch)."""
    log = Log.open(directory, config)
    for i, count in enumerate(counts):
        leo = log.log_end_offset
        codec = codecs[i % len(codecs)] if codecs else 0
        log.append_as_leader(bytearray(build_batch(records_for(leo, count), compression=codec)),
                             leader_epoch=i // epoch_every if epoch_every else -1)
    return log


def fresh_copy(files: dict[str, bytes], directory: Path) -> Path:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir()
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return directory


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir()}


def flip(path: Path, position: int, mask: int = 0xFF) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)[0]
        f.seek(position)
        f.write(bytes([byte ^ mask]))


def messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == level]


# ============================================================ 1. SIGKILL at random moments

FLUSH_EVERY = 40


@dataclass
class Round:
    recovery_point: int
    kill_in_recovery: bool
    delay: float


def run_child(tmp_path: Path, partition: Path, number: int, rnd: Round, seed: int
              ) -> list[str]:
    """One writer process, SIGKILLed ``rnd.delay`` s after it opened the log (or as soon as
    it starts opening it); returns its complete output lines."""
    out_path = tmp_path / f"round-{number}.out"
    err_path = tmp_path / f"round-{number}.err"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, str(CHILD), str(partition), str(rnd.recovery_point), str(number),
             str(seed), str(FLUSH_EVERY)], stdout=out, stderr=err, env=env)
    try:
        wanted = "opening\n" if rnd.kill_in_recovery else "\nopen "
        deadline = time.monotonic() + 20
        while wanted not in out_path.read_text():
            assert proc.poll() is None, f"child died: {err_path.read_text()}"
            assert time.monotonic() < deadline, "child did not start"
            time.sleep(0.001)
        time.sleep(rnd.delay)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, err_path.read_text()
    assert err_path.read_text() == ""
    text = out_path.read_text()
    return text[: text.rfind("\n") + 1].splitlines()   # an unfinished line is no message


def verify_copy(partition: Path, copy: Path, recovery_point: int, acks: list[tuple[int, int]],
                contents: bool) -> tuple[int, bytes]:
    """Recover a copy of the crashed partition and check everything; returns (LEO, the
    recovered .log bytes)."""
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(partition, copy)
    log = Log.open(copy, CHILD_CONFIG, recovery_point=recovery_point, had_clean_shutdown=False)
    try:
        batches = check_files(copy, log, CHILD_CONFIG.index_interval_bytes)
        assert log.segments[0].base_offset == 0
        by_base = {b.base_offset: b.last_offset for b in batches}
        for first, last in acks:       # every acknowledged batch is there, whole
            assert by_base.get(first) == last, f"acknowledged batch {first}-{last} lost"
        if acks:
            assert log.log_end_offset >= acks[-1][1] + 1
        check_epochs(log, batches)
        if contents:
            check_contents(log, copy)
        leo, data = log.log_end_offset, log_bytes(copy)
        check_append_continues(log)
    finally:
        log.close()
    return leo, data


def test_sigkill_at_random_moments(tmp_path: Path) -> None:
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    partition = tmp_path / "crash-0"
    # Rounds 1-3 recover from 0 (no checkpoint yet), later ones from the last flush the
    # writers reported (a checkpoint). Recovery points only rise, and a writer killed while
    # recovering leaves the checkpoint where it was, as with Kafka's checkpoint file.
    plan = [(False, rng.uniform(0.05, 0.25)), (True, 0.0), (False, rng.uniform(0.0, 0.1)),
            (False, rng.uniform(0.05, 0.3)), (True, 0.0), (False, rng.uniform(0.0, 0.2)),
            (False, rng.uniform(0.05, 0.3))]
    acks: list[tuple[int, int]] = []
    checkpoint = 0
    leo = 0
    interrupted = 0
    flushed_rounds = 0
    for number, (kill_in_recovery, delay) in enumerate(plan, 1):
        rnd = Round(0 if number <= 3 else checkpoint, kill_in_recovery, delay)
        where = f"seed {seed}, round {number}, {rnd}"
        lines = run_child(tmp_path, partition, number, rnd, seed + number)
        assert lines[0] == "opening", where
        round_acks = [tuple(map(int, ln.split()[1:])) for ln in lines if ln.startswith("ack ")]
        flushes = [int(ln.split()[1]) for ln in lines if ln.startswith("flush ")]
        opened = [ln for ln in lines if ln.startswith("open ")]
        if opened:
            # The writer's recovery found what the parent's found after the previous round.
            open_leo = int(opened[0].split()[1])
            assert open_leo == leo, where
            expect = open_leo
            for first, last in round_acks:      # appends continue at the LEO, contiguously
                assert first == expect and last >= first, where
                expect = last + 1
            assert flushes == sorted(flushes) and all(f <= expect for f in flushes), where
            if flushes:
                checkpoint = max(checkpoint, flushes[-1])
                flushed_rounds += 1
        else:
            interrupted += 1
            assert not round_acks, where
        acks += round_acks      # type: ignore[arg-type]
        leo, data = verify_copy(partition, tmp_path / "check-0", 0, acks, contents=True)
        if opened or number > 3:
            # Trusting the segments below the checkpoint gives the same log (the writer's
            # recovery finished, or it was recovering from this same checkpoint).
            leo_ckpt, data_ckpt = verify_copy(partition, tmp_path / "checkpoint-1", checkpoint,
                                              acks, contents=False)
            assert (leo_ckpt, data_ckpt) == (leo, data), where
        assert leo >= (acks[-1][1] + 1 if acks else 0), where
    # The test exercised what it claims to (the last recovered copy: the crashed directory
    # may end in a torn batch).
    recovered = segment_files(tmp_path / "check-0")
    bases = sorted(recovered)
    assert len(bases) > 10 and len(acks) > 200, (len(bases), len(acks))
    assert flushed_rounds >= 2 and checkpoint > bases[1], (checkpoint, bases[:3])
    assert interrupted <= 2
    assert {b.compression for bs in recovered.values() for b in bs} == {0, 1, 2, 3, 4}


# ============================================== 2. a torn last batch, cut at every byte

TORN_CONFIG = LogConfig(segment_bytes=1200, index_interval_bytes=0, segment_index_bytes=4096)
TORN_COUNTS = [3, 1, 4, 2, 5, 1, 2, 3, 1, 6, 2, 2, 1, 1, 2, 1]


def _torn_setup(tmp_path: Path, clean: bool) -> tuple[dict[str, bytes], RawBatch, int]:
    source = tmp_path / "source-0"
    log = make_log(source, TORN_CONFIG, TORN_COUNTS, codecs=[0, 4, 0, 1])
    assert len(log.segments) >= 3
    if clean:
        log.close()
    else:
        log.close_unclean()
    batches = check_files(source, None, 0, expect_trimmed_last=clean)
    last = batches[-1]
    last_base = max(segment_files(source))
    assert last.base_offset > last_base, "the last batch must not be its segment's first"
    return snapshot(source), last, last_base


@pytest.mark.parametrize("clean", [True, False], ids=["trimmed-indexes", "preallocated-indexes"])
def test_torn_last_batch_cut_at_every_byte(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                           clean: bool) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    files, last, last_segment = _torn_setup(tmp_path, clean)
    seg_name = f"{last_segment:020d}.log"
    # Without a clean shutdown the active segment's indexes are preallocated and hold an
    # entry for the torn batch, which recovery must drop.
    if not clean:
        assert len(files[f"{last_segment:020d}.index"]) == 4096
        entries = parse_offset_index(files[f"{last_segment:020d}.index"],
                                     stop_at_zeros=True)
        assert entries[-1] == (last.last_offset - last_segment, last.position)
    # Recovery from 0, and from the checkpoint in the last segment (earlier ones trusted).
    recovery_point = 0 if clean else last_segment
    work = tmp_path / "work-0"
    for cut in range(1, last.size):
        fresh_copy(files, work)
        os.truncate(work / seg_name, last.position + cut)
        caplog.clear()
        log = Log.open(work, TORN_CONFIG, recovery_point=recovery_point,
                       had_clean_shutdown=False)
        try:
            assert log.log_end_offset == last.base_offset, f"cut {cut}"
            assert (work / seg_name).stat().st_size == last.position
            check_files(work, log, 0)
            assert check_contents(log, work) == last.base_offset
            warnings = messages(caplog, logging.WARNING)
            assert any(f"{seg_name}: truncated {cut} bytes at byte {last.position}" in m
                       for m in warnings), (cut, warnings)
            check_append_continues(log)
            assert log.active_segment.base_offset == last_segment     # no roll was forced
        finally:
            log.close()
    # Cut exactly at the batch boundary: nothing is truncated, the batch is just gone.
    fresh_copy(files, work)
    os.truncate(work / seg_name, last.position)
    caplog.clear()
    log = Log.open(work, TORN_CONFIG, recovery_point=recovery_point, had_clean_shutdown=False)
    assert log.log_end_offset == last.base_offset
    check_files(work, log, 0)
    assert not messages(caplog, logging.WARNING)
    log.close()


def test_cut_leaves_index_entries_past_the_end(tmp_path: Path) -> None:
    # A crashed active segment (indexes preallocated, not trimmed) whose .log lost its last
    # two batches and half of the one before: three index entries point at or past the end.
    files, _last, last_segment = _torn_setup(tmp_path, clean=False)
    batches = segment_files(tmp_path / "source-0")[last_segment]
    assert len(batches) >= 4
    victim = batches[-3]
    work = fresh_copy(files, tmp_path / "work-0")
    seg_name = f"{last_segment:020d}.log"
    os.truncate(work / seg_name, victim.position + victim.size // 2)
    indexed = [pos for _rel, pos in parse_offset_index(work / f"{last_segment:020d}.index",
                                                       stop_at_zeros=True)]
    assert sum(pos >= victim.position for pos in indexed) == 3
    log = Log.open(work, TORN_CONFIG, recovery_point=last_segment, had_clean_shutdown=False)
    try:
        assert log.log_end_offset == victim.base_offset
        check_files(work, log, 0)
        check_contents(log, work)
        # Every offset of the log reads from the right batch.
        for offset in range(log.log_end_offset):
            got = BatchHeader(log.read(offset, 1).read())
            assert got.base_offset <= offset <= got.last_offset
        check_append_continues(log)
    finally:
        log.close()
    check_files(work, None, 0, expect_trimmed_last=True)


# ====================================================== 3. corrupt bytes mid-segment

CORRUPT_CONFIG = LogConfig(segment_bytes=2000, index_interval_bytes=500,
                           segment_index_bytes=4096)
CORRUPT_COUNTS = [2, 5, 1, 3, 4, 2, 1, 1, 2, 3, 1, 2, 1, 4, 2, 3, 2, 1, 1, 2, 3, 2, 1, 1,
                  2, 3, 2, 1, 3, 1, 2, 1]

# (byte within the batch, xor mask, why recovery stops there)
CORRUPTIONS = {
    "record-byte": (-5, 0x01, "fails its CRC-32C"),
    "crc": (17, 0x40, "fails its CRC-32C"),
    "length-high-byte": (8, 0x01, "cut off by the end of the data"),
    "length-sign": (8, 0x80, "length is below the minimum"),
    "length-low-bit": (11, 0x01, "fails its CRC-32C"),
    "magic": (16, 0x03, "magic is not 2"),
}


def _corrupt_setup(tmp_path: Path) -> tuple[Path, dict[int, list[RawBatch]]]:
    source = tmp_path / "source-0"
    make_log(source, CORRUPT_CONFIG, CORRUPT_COUNTS, codecs=[0, 0, 3], epoch_every=3).close()
    segs = segment_files(source)
    assert len(segs) >= 5
    return source, segs


def _victim(segs: dict[int, list[RawBatch]], in_tail: bool) -> tuple[int, RawBatch]:
    """A batch in the middle of the third segment: before its last offset-index entry
    (the part a clean load never reads), or after it (the tail a clean load walks)."""
    base = sorted(segs)[2]
    batches = segs[base]
    indexed, _ = kafka_index_model(batches, base, CORRUPT_CONFIG.index_interval_bytes, True)
    last_indexed = max(pos for _rel, pos in indexed)
    if in_tail:
        after = [b for b in batches if b.position > last_indexed]
        assert after
        return base, after[0]
    before = [b for b in batches if 0 < b.position < last_indexed]
    assert before
    return base, before[len(before) // 2]


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_corruption_truncates_and_deletes_later_segments(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    source, segs = _corrupt_setup(tmp_path)
    base, victim = _victim(segs, in_tail=False)
    where, mask, reason = CORRUPTIONS[kind]
    seg_name = f"{base:020d}.log"
    flip(source / seg_name, victim.position + (where % victim.size), mask)
    later = [b for b in sorted(segs) if b > base]
    log = Log.open(source, CORRUPT_CONFIG, recovery_point=0, had_clean_shutdown=False)
    try:
        assert log.log_end_offset == victim.base_offset
        assert [s.base_offset for s in log.segments] == [b for b in sorted(segs) if b <= base]
        for b in later:
            for suffix in (".log", ".index", ".timeindex"):
                assert not (source / f"{b:020d}{suffix}").exists()
        assert (source / seg_name).stat().st_size == victim.position
        batches = check_files(source, log, CORRUPT_CONFIG.index_interval_bytes)
        check_contents(log, source)
        check_epochs(log, batches)      # the epochs of the lost batches are gone
        assert log.epochs.latest_epoch < (len(CORRUPT_COUNTS) - 1) // 3
        warnings = messages(caplog, logging.WARNING)
        cut = sum(b.size for b in segs[base]) - victim.position
        assert any(f"{seg_name}: truncated {cut} bytes at byte {victim.position}" in m
                   and reason in m for m in warnings), warnings
        assert any(f"deleting {len(later)} segment(s) after the truncation point" in m
                   for m in warnings), warnings
        # Appends continue in the truncated segment, now the active one (Kafka resizes the
        # active segment's indexes after recovery: no roll is forced).
        check_append_continues(log)
        assert [s.base_offset for s in log.segments] == [b for b in sorted(segs) if b <= base]
    finally:
        log.close()


FRAMING = ("length-high-byte", "length-low-bit", "length-sign", "magic")


@pytest.mark.parametrize("in_tail", [False, True], ids=["indexed-part", "tail"])
@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_corruption_below_the_recovery_point_is_not_scanned(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str, in_tail: bool) -> None:
    """Kafka trusts flushed data: after a clean shutdown, or an unclean one whose recovery
    point is past the segment, it reads no batch of an older segment on load.

    Ours reads one part of each trusted segment: the batches after its last offset-index
    entry (framing only, no CRC), to restore its next offset and maximum timestamp. So a
    corruption before that entry, or one that only breaks a CRC, is never seen on load, as
    with Kafka; a framing error in that tail is handled as Kafka handles a segment whose
    index fails its sanity check (recoverSegment): that segment alone is recovered, truncated
    at the bad batch, and the later segments, flushed and valid, are kept."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    source, segs = _corrupt_setup(tmp_path)
    base, victim = _victim(segs, in_tail)
    where, mask, reason = CORRUPTIONS[kind]
    seg_name = f"{base:020d}.log"
    flip(source / seg_name, victim.position + (where % victim.size), mask)
    files = snapshot(source)
    leo = max(b.last_offset for bs in segs.values() for b in bs) + 1
    detected = in_tail and kind in FRAMING
    for clean, recovery_point in ((True, leo), (False, sorted(segs)[3])):
        work = fresh_copy(files, tmp_path / "work-0")
        caplog.clear()
        log = Log.open(work, CORRUPT_CONFIG, recovery_point=recovery_point,
                       had_clean_shutdown=clean)
        try:
            assert log.log_end_offset == leo
            assert [s.base_offset for s in log.segments] == sorted(segs)
            warnings = messages(caplog, logging.WARNING)
            if detected:
                cut = sum(b.size for b in segs[base]) - victim.position
                assert any(f"{seg_name}: truncated {cut} bytes at byte {victim.position}" in m
                           and reason in m for m in warnings), warnings
                assert not any("deleting" in m for m in warnings), warnings
                assert (work / seg_name).stat().st_size == victim.position
                rest = files[seg_name][:victim.position]
                assert log_bytes(work) == log_bytes(source).replace(files[seg_name], rest)
                # The offsets cut out read from the next segment on, as after compaction.
                got = BatchHeader(log.read(victim.base_offset, 1).read())
                assert got.base_offset == min(b for b in segs if b > base)
                check_files(work, log, CORRUPT_CONFIG.index_interval_bytes, gap_after=base)
            else:
                assert not warnings
                assert log_bytes(work) == log_bytes(source)
            # Every batch before the corrupt one, and in every other segment, reads as
            # written.
            for seg_base, batches in segs.items():
                name = f"{seg_base:020d}.log"
                for b in batches:
                    if seg_base != base or b.position < victim.position:
                        got_bytes = log.read(b.base_offset, 1).read()
                        assert got_bytes == files[name][b.position:b.position + b.size], b
            if not detected:
                # The corrupt batch is served as it is, for the consumer's CRC check to find,
                # or refused when its header cannot be framed.
                try:
                    raw = log.read(victim.base_offset, 1).read()
                except CorruptMessageError:
                    assert kind in ("length-sign", "magic")
                else:
                    assert kind not in ("length-sign", "magic")
                    assert raw.startswith(files[seg_name][
                        victim.position:victim.position + 17])
                    scan = scan_batches(raw, verify_crc=True)
                    assert scan.error is not None or scan.truncated
            check_append_continues(log)
        finally:
            log.close()


# ===================================================== 4. missing or corrupt indexes

INDEX_CONFIG = LogConfig(segment_bytes=2500, index_interval_bytes=300, segment_index_bytes=4096)
INDEX_COUNTS = [4, 2, 7, 1, 3, 5, 2, 2, 6, 1, 3, 4, 2, 5, 1, 3, 2, 4, 6, 2, 3, 1, 2, 5, 1, 2, 3,
                1, 2]


def _reverse_time_index(path: Path) -> None:
    entries = parse_time_index(path, stop_at_zeros=True)
    assert len(entries) >= 2
    path.write_bytes(b"".join(TIME_ENTRY.pack(*e) for e in reversed(entries)))


DAMAGE = {
    "index-deleted": lambda d, b: (d / f"{b:020d}.index").unlink(),
    "timeindex-deleted": lambda d, b: (d / f"{b:020d}.timeindex").unlink(),
    "both-deleted": lambda d, b: [(d / f"{b:020d}{s}").unlink() for s in (".index",
                                                                           ".timeindex")],
    "index-garbage": lambda d, b: (d / f"{b:020d}.index").write_bytes(
        bytes(range(7, 250, 3))[:8 * 9 + 5]),
    "timeindex-decreasing": lambda d, b: _reverse_time_index(d / f"{b:020d}.timeindex"),
}


@pytest.mark.parametrize("which", ["older", "last"])
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_index_is_rebuilt_after_clean_shutdown(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str, which: str) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    source = tmp_path / "source-0"
    make_log(source, INDEX_CONFIG, INDEX_COUNTS, codecs=[0, 2, 0]).close()
    original = snapshot(source)
    segs = segment_files(source)
    assert len(segs) >= 4
    base = sorted(segs)[1] if which == "older" else max(segs)
    DAMAGE[damage](source, base)
    log = Log.open(source, INDEX_CONFIG, recovery_point=0, had_clean_shutdown=True)
    try:
        logged = " ".join(messages(caplog, logging.INFO) + messages(caplog, logging.WARNING))
        assert f"{base:020d}" in logged, logged
        batches = check_files(source, log, INDEX_CONFIG.index_interval_bytes)
        check_contents(log, source)
        # Every offset reads from the batch holding it, through the rebuilt index.
        for b in batches:
            for offset in range(b.base_offset, b.last_offset + 1):
                got = BatchHeader(log.read(offset, 1).read())
                assert (got.base_offset, got.last_offset) == (b.base_offset, b.last_offset), \
                    offset
        # Timestamp lookups: the first offset whose record timestamp is >= the target.
        stamps = [timestamp_for(o) for o in range(log.log_end_offset)]
        for target in [*sorted(set(stamps))[::3], stamps[0] - 1, max(stamps)]:
            want = next(o for o, t in enumerate(stamps) if t >= target)
            found = log.fetch_offset_by_timestamp(target)
            assert found is not None and found.offset == want, target
        assert log.fetch_offset_by_timestamp(max(stamps) + 1) is None
    finally:
        log.close()
    # After a clean close the rebuilt files are byte for byte what was written originally.
    assert snapshot(source) == original


# ================================================= 5. leftovers and recovery progress

def test_leftover_deleted_and_cleaned_files_are_removed(tmp_path: Path) -> None:
    source = tmp_path / "source-0"
    make_log(source, INDEX_CONFIG, INDEX_COUNTS).close()
    original = snapshot(source)
    bases = sorted(segment_files(source))
    leftovers = [f"{bases[1]:020d}.log.deleted", f"{bases[1]:020d}.index.deleted",
                 f"{bases[1]:020d}.timeindex.deleted", "00000000000000009999.log.deleted",
                 f"{bases[2]:020d}.log.cleaned", f"{bases[2]:020d}.index.cleaned",
                 f"{bases[2]:020d}.timeindex.cleaned"]
    for name in leftovers:
        (source / name).write_bytes(b"leftover")
    log = Log.open(source, INDEX_CONFIG, recovery_point=0, had_clean_shutdown=True)
    try:
        for name in leftovers:
            assert not (source / name).exists(), name
        assert log.log_end_offset == sum(INDEX_COUNTS)
        check_files(source, log, INDEX_CONFIG.index_interval_bytes)
    finally:
        log.close()
    assert snapshot(source) == original


def test_unclean_recovery_reports_progress(tmp_path: Path,
                                           caplog: pytest.LogCaptureFixture) -> None:
    source = tmp_path / "source-0"
    log = make_log(source, INDEX_CONFIG, INDEX_COUNTS)
    log.close_unclean()
    bases = sorted(segment_files(source))
    caplog.set_level(logging.INFO, logger=LOGGER)
    log = Log.open(source, INDEX_CONFIG, recovery_point=bases[2], had_clean_shutdown=False)
    try:
        progress = [m for m in messages(caplog, logging.INFO) if "recovered" in m]
        n = len(bases) - 2
        assert progress, messages(caplog, logging.INFO)
        match = re.search(r"recovered (\d+)/(\d+) segments, ([\d.]+) of ([\d.]+) MB, "
                          r"(\d+) MB/s", progress[-1])
        assert match, progress[-1]
        assert (int(match[1]), int(match[2])) == (n, n)
        assert match[3] == match[4]
        kafka_lines = [m for m in messages(caplog, logging.INFO) if "unflushed" in m]
        assert kafka_lines == [f"Recovering unflushed segment {base}. {i}/{n} recovered for "
                               f"source-0." for i, base in enumerate(bases[2:])]
        assert not messages(caplog, logging.WARNING)
        check_files(source, log, INDEX_CONFIG.index_interval_bytes)
    finally:
        log.close()
    caplog.clear()
    Log.open(source, INDEX_CONFIG, recovery_point=0, had_clean_shutdown=True).close()
    assert not [m for m in messages(caplog, logging.INFO) if "recover" in m]
