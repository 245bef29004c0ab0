"""LogSegment (kafkapy.log.segment): one ``.log`` file with its ``.index`` and ``.timeindex``.

The files are checked with an independent parser (``struct`` on the raw bytes:
tests.log.kafka_files) against its plain-Python model of Kafka's LogSegment.append indexing
rule (reference section 8): for each batch, first fold its maxTimestamp into the segment
maximum, then, if more than ``index.interval.bytes`` were appended since the last entry, write
the offset entry (batch last offset, batch start position) and a time entry (segment maximum
so far, last offset of the batch holding it) when that maximum rose; on close the maximum is
appended once more.
"""

from __future__ import annotations

import os
import random
import resource
import signal
import time
from pathlib import Path

import pytest

from kafkapy.errors import CorruptMessageError, KafkaStorageError
from kafkapy.log.config import LogConfig
from kafkapy.log.index import NO_TIMESTAMP, TimestampOffset
from kafkapy.log.segment import (
    BatchLocation,
    LogSegment,
    index_path,
    log_path,
    offset_from_file_name,
    time_index_path,
)
from kafkapy.protocol.records import build_batch
from tests.log.kafka_files import (
    kafka_index_model,
    parse_log,
    parse_offset_index,
    parse_time_index,
)

INT32_MAX = 2**31 - 1


def make_batch(base: int, timestamps: list[int], value_size: int = 30, tag: bytes = b"k"
               ) -> bytes:
    """One batch at ``base`` with a record per timestamp."""
    return build_batch([(tag + b"%d" % i, b"v" * value_size, [("h", b"x")], ts)
                        for i, ts in enumerate(timestamps)], base_offset=base)


def config(**overrides: object) -> LogConfig:
    defaults: dict[str, object] = {"index_interval_bytes": 100, "segment_index_bytes": 4096}
    defaults.update(overrides)
    return LogConfig(**defaults)  # type: ignore[arg-type]


def new_segment(directory: Path, base: int, cfg: LogConfig) -> LogSegment:
    return LogSegment.open(directory, base, cfg, active=True, create=True)


def fill(seg: LogSegment, appends: list[list[tuple[int, list[int]]]]) -> bytes:
    """Append each inner list (of (record count, timestamps) batches) as one write, with
    consecutive offsets from the segment's next offset; returns every byte written."""
    written = b""
    offset = seg.next_offset
    for chunk in appends:
        data = b""
        for timestamps in chunk:
            data += make_batch(offset, timestamps[1], value_size=timestamps[0])
            offset += len(timestamps[1])
        seg.append(data)
        written += data
    return written


# A varied run: multi-batch writes, multi-record batches, timestamps that go down and up.
APPENDS = [
    [(40, [1000, 1005])],
    [(10, [990]), (80, [1010, 1003, 1001])],
    [(5, [1002])],
    [(120, [1020, 1020])],
    [(20, [1015]), (20, [1030]), (20, [1025, 1040, 1001])],
    [(200, [1050])],
    [(30, [999, 1000])],
    [(60, [1060, 1061, 1062, 1063])],
]


# ------------------------------------------------------------------------------ naming


def test_file_names_are_twenty_digit_base_offsets(tmp_path: Path) -> None:
    assert log_path(tmp_path, 1234).name == "00000000000000001234.log"
    assert index_path(tmp_path, 0).name == "00000000000000000000.index"
    assert time_index_path(tmp_path, 2**40).name == "00000001099511627776.timeindex"
    assert offset_from_file_name("00000000000000001234.log.deleted") == 1234
    seg = new_segment(tmp_path, 42, config())
    seg.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00000000000000000042.index", "00000000000000000042.log",
        "00000000000000000042.timeindex"]


# ---------------------------------------------------------------------- append + indexes


@pytest.mark.parametrize("interval", [0, 100, 350, 10**6])
def test_append_is_byte_exact_and_indexed_as_kafka(tmp_path: Path, interval: int) -> None:
    base = 500
    seg = new_segment(tmp_path, base, config(index_interval_bytes=interval))
    written = fill(seg, APPENDS)
    assert seg.size == len(written)
    seg.close()
    data = log_path(tmp_path, base).read_bytes()
    assert data == written
    batches = parse_log(data)
    offsets, times = kafka_index_model(batches, base, interval, closed=True)
    assert parse_offset_index(index_path(tmp_path, base)) == offsets
    assert parse_time_index(time_index_path(tmp_path, base)) == times
    if interval == 0:
        assert len(offsets) == len(batches) - 1     # every batch but the segment's first
    if interval == 10**6:
        assert offsets == [] and times == [(1063, 20)]     # only the close-time maximum


@pytest.mark.parametrize("interval", [1, 90, 200, 1000])
def test_one_append_of_many_batches_is_indexed_as_kafka(tmp_path: Path, interval: int) -> None:
    # One write of 100 batches of 80-330 bytes: the walk's room for index entries is sized
    # from the interval (at most one entry per batch, and one per interval's bytes), so an
    # append that makes an entry at almost every batch must get every one Kafka makes.
    rng = random.Random(interval)
    appends = [[(rng.randrange(5, 250), [1000 + i]) for i in range(100)]]
    seg = new_segment(tmp_path, 0, config(index_interval_bytes=interval,
                                          segment_index_bytes=1 << 16))
    written = fill(seg, appends)
    seg.close()
    offsets, times = kafka_index_model(parse_log(written), 0, interval, closed=True)
    assert len(offsets) >= {1: 99, 90: 90, 200: 30, 1000: 5}[interval]
    assert parse_offset_index(index_path(tmp_path, 0)) == offsets
    assert parse_time_index(time_index_path(tmp_path, 0)) == times


def test_append_result_and_segment_state(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 10, config())
    assert seg.next_offset == 10 and seg.max_timestamp == NO_TIMESTAMP
    data = make_batch(10, [500, 700, 600]) + make_batch(13, [650])
    result = seg.append(data)
    assert (result.first_offset, result.next_offset, result.batches) == (10, 14, 2)
    assert (result.max_timestamp, result.offset_of_max_timestamp) == (700, 12)
    assert (seg.next_offset, seg.max_timestamp, seg.offset_of_max_timestamp) == (14, 700, 12)
    assert seg.rolling_timestamp == 700        # the first batch's maxTimestamp
    seg.append(make_batch(14, [900]))
    assert seg.rolling_timestamp == 700
    assert (seg.max_timestamp, seg.offset_of_max_timestamp) == (900, 14)
    # The first batch of each append, as the log's epoch cache and last-append lookup use it.
    first = build_batch([(b"k", b"v" * 77, [], 950)], base_offset=15, partition_leader_epoch=7)
    result = seg.append(first + build_batch([(b"k", b"v", [], 960)], base_offset=16,
                                            partition_leader_epoch=8))
    assert (result.first_size, result.first_epoch) == (len(first), 7)
    assert result.epochs == [(7, 15), (8, 16)]
    assert seg.translate_offset(15) == BatchLocation(seg.size - result.valid_bytes,
                                                     len(first), 15)
    seg.close()


def test_append_refuses_bad_offsets_and_writes_nothing(tmp_path: Path) -> None:
    base = 100
    seg = new_segment(tmp_path, base, config())
    seg.append(make_batch(base, [1, 2, 3]))
    before = log_path(tmp_path, base).read_bytes()
    bad = [
        make_batch(base + 2, [4]),                       # below the next offset
        make_batch(base + 3, [4]) + make_batch(base + 3, [5]),   # backwards within
        make_batch(base + 3 + INT32_MAX, [4]),          # relative offset overflow
        make_batch(base + 3, [4])[:-1],                 # cut off
    ]
    for data in bad:
        with pytest.raises(CorruptMessageError):
            seg.append(data)
        assert log_path(tmp_path, base).read_bytes() == before
        assert seg.size == len(before) and seg.next_offset == base + 3
    seg.close()


def test_a_failed_write_is_undone_and_leaves_the_segment_as_it_was(tmp_path: Path) -> None:
    """The file may not grow past its size + 100 bytes (RLIMIT_FSIZE; SIGXFSZ ignored): the
    append's write stops part way with EFBIG, the bytes already written are truncated away,
    KafkaStorageError says how far it got, and the segment takes the next append as if the
    failed one had not happened."""
    base = 100
    seg = new_segment(tmp_path, base, config())
    seg.append(make_batch(base, [1, 2, 3]))
    before = log_path(tmp_path, base).read_bytes()
    state = (seg.size, seg.next_offset, seg.max_timestamp, seg.offset_index.entries,
             seg.time_index.entries)
    data = make_batch(base + 3, [4] * 10)
    assert len(data) > 200
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) + 100, limits[1]))
        with pytest.raises(KafkaStorageError, match=f"after 100 of {len(data)} bytes"):
            seg.append(data)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)
    assert log_path(tmp_path, base).read_bytes() == before
    assert (seg.size, seg.next_offset, seg.max_timestamp, seg.offset_index.entries,
            seg.time_index.entries) == state
    seg.append(data)        # O_APPEND: at the end, where the undone bytes were
    assert log_path(tmp_path, base).read_bytes() == before + data
    assert seg.next_offset == base + 13
    seg.close()


def test_active_indexes_preallocated_then_trimmed(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 0, config(segment_index_bytes=1000, index_interval_bytes=0))
    assert index_path(tmp_path, 0).stat().st_size == 1000           # 125 entries of 8
    assert time_index_path(tmp_path, 0).stat().st_size == 996       # 83 entries of 12
    fill(seg, [[(10, [1])], [(10, [2])], [(10, [3])]])
    assert index_path(tmp_path, 0).stat().st_size == 1000
    seg.close()
    assert index_path(tmp_path, 0).stat().st_size == 2 * 8
    assert time_index_path(tmp_path, 0).stat().st_size == 2 * 12   # max already indexed


def test_reopen_restores_the_state(tmp_path: Path) -> None:
    cfg = config(index_interval_bytes=150)
    seg = new_segment(tmp_path, 7, cfg)
    fill(seg, APPENDS)
    state = (seg.next_offset, seg.max_timestamp, seg.offset_of_max_timestamp,
             seg.rolling_timestamp, seg.size)
    seg.close()
    for active in (False, True):
        again = LogSegment.open(tmp_path, 7, cfg, active=active)
        again.offset_index.sanity_check()
        again.time_index.sanity_check()
        again.restore_state()
        assert (again.next_offset, again.max_timestamp, again.offset_of_max_timestamp,
                again.rolling_timestamp, again.size) == state
        again.close()


# ------------------------------------------------------------------------------- reads


def test_translate_offset_finds_the_batch_holding_each_offset(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 0, config(index_interval_bytes=50))
    # A follower-style segment with offset gaps between batches.
    data = (make_batch(0, [1, 2, 3]) + make_batch(10, [4]) + make_batch(11, [5, 6])
            + make_batch(40, [7, 8, 9, 10]))
    seg.append(data)
    batches = parse_log(data)
    for offset in range(0, 50):
        loc = seg.translate_offset(offset)
        holder = next((b for b in batches if b.last_offset >= offset), None)
        if holder is None:
            assert loc is None
        else:
            assert loc is not None
            assert (loc.position, loc.size, loc.base_offset) == \
                (holder.position, holder.size, holder.base_offset)
    seg.close()


def test_translate_offset_agrees_with_the_file_after_every_append_and_truncation(
        tmp_path: Path) -> None:
    """The last append's first batch is remembered (a caught-up reader's next offset, found
    without a pread): after each append, and after truncations that remove it or keep it,
    every offset still translates to the batch the file holds."""
    seg = new_segment(tmp_path, 0, config(index_interval_bytes=50))

    def check() -> None:
        batches = parse_log(log_path(tmp_path, 0).read_bytes())
        for offset in range(seg.next_offset + 2):
            # start positions are batch boundaries (where a read resumes)
            for start in {0, seg.size} | {b.position for b in batches}:
                loc = seg.translate_offset(offset, start)
                want = next((b for b in batches
                             if b.last_offset >= offset and b.position >= start), None)
                assert (loc and (loc.position, loc.size, loc.base_offset)) == \
                    (want and (want.position, want.size, want.base_offset)), (offset, start)

    for chunk in APPENDS:
        fill(seg, [chunk])
        check()
    batches = parse_log(log_path(tmp_path, 0).read_bytes())
    seg.truncate_to(batches[-1].base_offset)          # the remembered batch goes
    check()
    seg.truncate_to(batches[-3].base_offset + 1)      # below it, mid-batch
    check()
    fill(seg, [APPENDS[1]])                            # a new last append at old offsets
    check()
    seg.close()


def test_read_limits(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 0, config())
    data = make_batch(0, [1, 2], 100) + make_batch(2, [3], 100) + make_batch(3, [4], 100)
    seg.append(data)
    first, second, third = parse_log(data)
    # From the batch holding the offset, not from the offset.
    whole = seg.read(1, 10**6)
    assert whole is not None and (whole.position, whole.size) == (0, len(data))
    assert whole.read() == data
    sl = seg.read(2, 10**6)
    assert sl is not None and (sl.position, sl.read()) == (second.position,
                                                          data[second.position:])
    # max_size cuts, even mid-batch; min_one_message keeps the first batch whole.
    cut = seg.read(0, 10)
    assert cut is not None and cut.size == 10
    one = seg.read(0, 10, min_one_message=True)
    assert one is not None and one.size == first.size
    # max_position (a high watermark's batch start) bounds the slice.
    bounded = seg.read(0, 10**6, max_position=third.position)
    assert bounded is not None and bounded.size == third.position
    empty = seg.read(3, 10**6, max_position=third.position, min_one_message=True)
    assert empty is not None and empty.size == 0
    assert seg.read(4, 10**6) is None
    seg.close()


def test_find_offset_by_timestamp_inside_batches(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 0, config(index_interval_bytes=0))
    timestamps = [[100, 300, 200], [150], [250, 260], [400, 390, 500], [450]]
    offset, flat = 0, []
    for ts in timestamps:
        seg.append(make_batch(offset, ts))
        offset += len(ts)
        flat.extend(ts)
    for start in (0, 2, 5, 8):
        for target in range(90, 520, 5):
            expect = next((TimestampOffset(t, o) for o, t in enumerate(flat)
                           if t >= target and o >= start), None)
            assert seg.find_offset_by_timestamp(target, start) == expect, (start, target)
    seg.close()


# ------------------------------------------------------------------------------- rolls


def test_should_roll_on_size(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 0, config(segment_bytes=1000))
    seg.append(make_batch(0, [1], value_size=300))
    room = 1000 - seg.size
    assert not seg.should_roll(room, 1, 1, 1, 0)          # size + incoming == segment.bytes
    assert seg.should_roll(room + 1, 1, 1, 1, 0)
    seg.close()


def test_should_roll_on_age_of_first_batch_timestamp(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 0, config(segment_ms=1000))
    # An empty segment never rolls on time, whatever the timestamps and clock say.
    assert not seg.should_roll(100, 10**12, 0, 1, 10**13)
    seg.append(make_batch(0, [5000, 5500]))           # rolling timestamp: maxTimestamp 5500
    seg.append(make_batch(2, [9000]))                 # later batches do not move it
    assert seg.rolling_timestamp == 5500
    assert not seg.should_roll(100, 6500, 3, 1, 0)    # waited exactly segment.ms
    assert seg.should_roll(100, 6501, 3, 1, 0)
    # The clock does not matter when the segment has timestamps.
    assert not seg.should_roll(100, 6000, 3, 1, 10**13)
    seg.close()


def test_should_roll_on_creation_age_without_timestamps(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 0, config(segment_ms=1000))
    now = int(time.time() * 1000)
    assert abs(seg.created_ms - now) < 60_000
    seg.append(make_batch(0, [NO_TIMESTAMP]))
    seg.append(make_batch(1, [5000]))       # only the first append sets it, as in Kafka
    assert seg.rolling_timestamp == NO_TIMESTAMP
    assert not seg.should_roll(100, 10**12, 2, 1, seg.created_ms + 1000)
    assert seg.should_roll(100, 0, 2, 1, seg.created_ms + 1001)
    seg.close()


def test_roll_jitter_is_drawn_below_the_jitter_and_shortens_the_age(tmp_path: Path) -> None:
    cfg = config(segment_ms=1000, segment_jitter_ms=400)
    for _ in range(20):
        seg = new_segment(tmp_path, 0, cfg)
        assert 0 <= seg.roll_jitter_ms < 400
        seg.append(make_batch(0, [0]))
        limit = 1000 - seg.roll_jitter_ms
        assert not seg.should_roll(100, limit, 1, 1, 0)
        assert seg.should_roll(100, limit + 1, 1, 1, 0)
        seg.close()
        seg.delete_files()


def test_should_roll_when_an_index_could_overflow(tmp_path: Path) -> None:
    # 24 bytes: 3 offset entries, 2 time entries; every batch but the first is indexed.
    seg = new_segment(tmp_path, 0, config(segment_index_bytes=24, index_interval_bytes=0))
    seg.append(make_batch(0, [1]))
    seg.append(make_batch(1, [2]))
    assert (seg.offset_index.entries, seg.time_index.entries) == (1, 1)
    assert not seg.should_roll(100, 3, 2, 1, 0)
    assert seg.should_roll(100, 3, 3, 2, 0)           # two batches: the time index is short
    seg.append(make_batch(2, [3]))
    assert seg.time_index.is_full
    assert seg.should_roll(100, 4, 3, 1, 0)
    seg.close()


def test_should_roll_when_the_offset_index_could_overflow(tmp_path: Path) -> None:
    # One timestamp throughout: the time index keeps one entry, the offset index fills.
    seg = new_segment(tmp_path, 0, config(segment_index_bytes=24, index_interval_bytes=0))
    for offset in range(3):
        seg.append(make_batch(offset, [7]))
    assert (seg.offset_index.entries, seg.time_index.entries) == (2, 1)
    assert not seg.should_roll(100, 7, 3, 1, 0)
    assert seg.should_roll(100, 7, 4, 2, 0)
    seg.close()


def test_should_roll_on_relative_offset_overflow(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 1000, config())
    seg.append(make_batch(1000, [1]))
    assert not seg.should_roll(100, 2, 1000 + INT32_MAX, 1, 0)
    assert seg.should_roll(100, 2, 1000 + INT32_MAX + 1, 1, 0)
    seg.append(make_batch(1000 + INT32_MAX, [2]))     # the largest relative offset fits
    assert seg.next_offset == 1000 + INT32_MAX + 1
    seg.close()
    assert parse_time_index(time_index_path(tmp_path, 1000))[-1] == (2, INT32_MAX)


# -------------------------------------------------------------------------- truncation


def test_truncate_mid_batch_removes_the_whole_batch(tmp_path: Path) -> None:
    cfg = config(index_interval_bytes=0)
    seg = new_segment(tmp_path, 0, cfg)
    fill(seg, APPENDS)
    data = log_path(tmp_path, 0).read_bytes()
    batches = parse_log(data)
    victim = next(b for b in batches if b.last_offset > b.base_offset + 1)
    removed = seg.truncate_to(victim.base_offset + 1)
    assert removed == len(data) - victim.position
    assert (seg.size, seg.next_offset) == (victim.position, victim.base_offset)
    kept = [b for b in batches if b.position < victim.position]
    top = max(kept, key=lambda b: (b.max_timestamp, -b.last_offset))
    assert (seg.max_timestamp, seg.offset_of_max_timestamp) == (top.max_timestamp,
                                                                top.last_offset)
    # The segment stays appendable and indexed by the same rule.
    seg.append(make_batch(victim.base_offset, [2000, 1999]))
    seg.close()
    after = log_path(tmp_path, 0).read_bytes()
    assert after == data[:victim.position] + make_batch(victim.base_offset, [2000, 1999])
    # Kafka's truncateTo restarts the byte count: the first batch after it gets no entry.
    offsets, times = kafka_index_model(parse_log(after), 0, 0, closed=True,
                                       resets=frozenset({victim.position}))
    assert parse_offset_index(index_path(tmp_path, 0)) == offsets
    assert parse_time_index(time_index_path(tmp_path, 0)) == times


def test_truncating_a_rolled_segment_makes_it_appendable(tmp_path: Path) -> None:
    cfg = config(index_interval_bytes=0, segment_index_bytes=800)
    seg = new_segment(tmp_path, 0, cfg)
    fill(seg, APPENDS)
    seg.on_become_inactive()                       # rolled: indexes trimmed to their entries
    assert index_path(tmp_path, 0).stat().st_size == seg.offset_index.entries * 8 < 800
    data = log_path(tmp_path, 0).read_bytes()
    cut = parse_log(data)[6]
    seg.truncate_to(cut.base_offset)
    assert index_path(tmp_path, 0).stat().st_size == 800      # preallocated again
    more = make_batch(cut.base_offset, [3000]) + make_batch(cut.base_offset + 1, [3001])
    seg.append(more)
    seg.close()
    after = log_path(tmp_path, 0).read_bytes()
    assert after == data[:cut.position] + more
    offsets, _ = kafka_index_model(parse_log(after), 0, 0, closed=True,
                                   resets=frozenset({cut.position}))
    assert parse_offset_index(index_path(tmp_path, 0)) == offsets


def test_truncate_to_base_empties_and_past_end_is_a_no_op(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 50, config(index_interval_bytes=0))
    fill(seg, APPENDS[:3])
    size = seg.size
    assert seg.truncate_to(seg.next_offset) == 0 and seg.size == size
    assert seg.truncate_to(50) == size
    assert (seg.size, seg.next_offset, seg.max_timestamp) == (0, 50, NO_TIMESTAMP)
    assert seg.rolling_timestamp == NO_TIMESTAMP
    assert (seg.offset_index.entries, seg.time_index.entries) == (0, 0)
    seg.append(make_batch(50, [7]))
    assert seg.rolling_timestamp == 7
    seg.close()


# ---------------------------------------------------------------------------- recovery


def test_recover_cuts_a_torn_tail_and_rebuilds_the_indexes(tmp_path: Path) -> None:
    cfg = config(index_interval_bytes=120)
    seg = new_segment(tmp_path, 0, cfg)
    written = fill(seg, APPENDS)
    seg.close_without_trim()                          # a crash: indexes left preallocated
    with open(log_path(tmp_path, 0), "ab") as f:
        f.write(make_batch(seg.next_offset, [1])[:40])
    seg = LogSegment.open(tmp_path, 0, cfg, active=True)
    cut, result = seg.recover()
    assert cut == 40 and result.valid_bytes == len(written)
    assert seg.next_offset == parse_log(written)[-1].last_offset + 1
    seg.close()
    assert log_path(tmp_path, 0).read_bytes() == written
    offsets, times = kafka_index_model(parse_log(written), 0, 120, closed=True)
    assert parse_offset_index(index_path(tmp_path, 0)) == offsets
    assert parse_time_index(time_index_path(tmp_path, 0)) == times


def test_recover_stops_at_a_bad_crc(tmp_path: Path) -> None:
    cfg = config()
    seg = new_segment(tmp_path, 0, cfg)
    good = make_batch(0, [1, 2])
    bad = bytearray(make_batch(2, [3]))
    bad[-1] ^= 0xFF
    seg.append(good)
    seg.close_without_trim()
    with open(log_path(tmp_path, 0), "ab") as f:
        f.write(bytes(bad) + make_batch(3, [4]))
    seg = LogSegment.open(tmp_path, 0, cfg, active=True)
    cut, _ = seg.recover()
    assert cut == len(bad) + len(make_batch(3, [4]))
    assert seg.next_offset == 2
    seg.close()
    assert log_path(tmp_path, 0).read_bytes() == good


# ----------------------------------------------------------------------------- deletion


def test_rename_to_deleted_then_delete_files(tmp_path: Path) -> None:
    cfg = config()
    seg = new_segment(tmp_path, 0, cfg)
    data = make_batch(0, [1, 2, 3])
    seg.append(data)
    seg.on_become_inactive()
    seg.rename_to_deleted()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00000000000000000000.index.deleted", "00000000000000000000.log.deleted",
        "00000000000000000000.timeindex.deleted"]
    sl = seg.read(0, 10**6)                             # reads in flight still work
    assert sl is not None and sl.read() == data
    # A new segment at the same base offset owns the plain names: deleting the old one's
    # files must not touch it.
    fresh = new_segment(tmp_path, 0, cfg)
    fresh.append(make_batch(0, [9]))
    seg.delete_files()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00000000000000000000.index", "00000000000000000000.log",
        "00000000000000000000.timeindex"]
    fresh.close()
    assert log_path(tmp_path, 0).read_bytes() == make_batch(0, [9])


def test_largest_timestamp_falls_back_to_the_file_mtime(tmp_path: Path) -> None:
    seg = new_segment(tmp_path, 0, config())
    seg.append(make_batch(0, [NO_TIMESTAMP]))
    os.utime(log_path(tmp_path, 0), (1_000_000, 1_000_000))
    assert seg.largest_timestamp() == 1_000_000_000
    seg.append(make_batch(1, [123]))
    assert seg.largest_timestamp() == 123
    seg.close()
