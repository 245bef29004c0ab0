"""Log (kafkapy.log.log): one partition's log in real files, with a fake clock.

What is stored is checked from outside the code under test wherever it can be:

- records: kafka-python 3.0's own reader (MemoryRecords / DefaultRecordBatch, with its CRC
  check and its codecs: lz4, python-snappy and zstandard are test dependencies) over every
  ``.log`` file;
- batch headers, ``.index`` and ``.timeindex`` files: ``struct`` on the raw bytes
  (tests.log.kafka_files);
- refused appends: every file byte of the partition directory before and after.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path

import crc32c as crc32c_package
import pytest
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.memory_records import MemoryRecords

from kafkapy.errors import (
    CorruptMessageError,
    InvalidConfigError,
    InvalidRecordError,
    KafkaError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    RecordListTooLargeError,
    UnsupportedForMessageFormatError,
)
from kafkapy.log.checkpoints import EpochEntry
from kafkapy.log.config import LONG_MAX, LogConfig
from kafkapy.log.index import NO_TIMESTAMP, TimestampOffset
from kafkapy.log.log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    FetchData,
    Log,
    LogAppendInfo,
    UnexpectedAppendOffsetError,
)
from kafkapy.protocol.records import build_batch, scan_batches
from tests.log.kafka_files import (
    RawBatch,
    parse_log,
    parse_offset_index,
    parse_time_index,
)

Header = tuple[str, bytes | None]
Rec = tuple[bytes | None, bytes | None, list[Header], int]
Stored = tuple[int, int, bytes | None, bytes | None, list[Header]]

START_MS = 1_700_000_000_000
INT32_MAX = 2**31 - 1
CODECS = [0, 1, 2, 3, 4]
CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


class FakeClock:
    """Milliseconds that move only when told to."""

    def __init__(self, now_ms: int = START_MS) -> None:
        self.now = now_ms

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


def open_log(root: Path, clock: FakeClock | None = None, **overrides: object) -> Log:
    """The log ``root/topic-0`` (small preallocated indexes unless overridden)."""
    settings: dict[str, object] = {"segment_index_bytes": 4096}
    settings.update(overrides)
    config = LogConfig(**settings)  # type: ignore[arg-type]
    return Log.open(root / "topic-0", config, clock=clock or FakeClock())


def reopen(log: Log, clock: FakeClock | None = None) -> Log:
    """Close ``log`` cleanly and open it again as after a clean shutdown."""
    log.close()
    return Log.open(log.dir, log.config, had_clean_shutdown=True,
                    clock=clock or FakeClock())


def recs(n: int, ts: int | list[int], tag: str = "r", size: int = 16) -> list[Rec]:
    """``n`` records with keys, values and a header; timestamps ``ts``, ``ts + 1``, ... or
    the list given."""
    stamps = ts if isinstance(ts, list) else [ts + i for i in range(n)]
    return [(f"{tag}-{i}".encode(), bytes([65 + i % 26]) * size, [("h", tag.encode())],
             stamps[i]) for i in range(n)]


def payload(*batches: list[Rec], compression: int = 0) -> bytearray:
    return bytearray(b"".join(build_batch(b, compression=compression) for b in batches))


def leader_append(log: Log, *batches: list[Rec], epoch: int = -1, compression: int = 0
                  ) -> LogAppendInfo:
    return log.append_as_leader(payload(*batches, compression=compression), leader_epoch=epoch)


def stored_as(info: LogAppendInfo, *batches: list[Rec], ts: int | None = None
              ) -> list[Stored]:
    """What kafka-python should read back for ``batches`` appended as ``info`` says
    (``ts``: the LogAppendTime every record then carries)."""
    flat = [r for b in batches for r in b]
    assert info.last_offset - info.first_offset + 1 == len(flat)
    return [(info.first_offset + i, r[3] if ts is None else ts, r[0], r[1], list(r[2]))
            for i, r in enumerate(flat)]


def dir_bytes(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def segment_files(directory: Path, suffix: str = ".log") -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(suffix))


def kp_batches(directory: Path) -> Iterator[tuple[int, DefaultRecordBatch]]:
    """(base offset of the file, batch) for every batch of every ``.log``, read by
    kafka-python; each file must be whole batches with valid CRCs."""
    for path in sorted(directory.glob("*.log")):
        data = path.read_bytes()
        records = MemoryRecords(data)
        consumed = 0
        while records.has_next():
            batch = records.next_batch()
            assert isinstance(batch, DefaultRecordBatch)
            assert batch.validate_crc(), f"{path.name}: bad CRC at byte {consumed}"
            consumed += batch.size_in_bytes
            yield int(path.name[:20]), batch
        assert consumed == len(data), f"{path.name}: trailing bytes"


def kp_read(directory: Path) -> list[Stored]:
    """Every record of the partition directory, through kafka-python."""
    out: list[Stored] = []
    for _, batch in kp_batches(directory):
        for r in batch:
            out.append((r.offset, r.timestamp, r.key, r.value, list(r.headers)))
    return out


def raw_batches(directory: Path) -> list[tuple[int, RawBatch, bytes]]:
    """(segment base, batch, the batch's bytes) for every batch, by struct."""
    out = []
    for path in sorted(directory.glob("*.log")):
        data = path.read_bytes()
        for b in parse_log(data):
            out.append((int(path.name[:20]), b, data[b.position:b.position + b.size]))
    return out


def check_indexes(directory: Path) -> int:
    """Kafka's index invariants for every segment, from the raw files. Returns the number of
    offset-index entries seen."""
    seen = 0
    for path in sorted(directory.glob("*.log")):
        base = int(path.name[:20])
        batches = parse_log(path.read_bytes())
        at = {b.position: b for b in batches}
        offsets = parse_offset_index(path.with_suffix(".index"))
        for rel, pos in offsets:
            # Each entry: the start of a batch, keyed by that batch's last offset.
            assert pos in at, f"{path.name}: index entry at byte {pos} is not a batch start"
            assert at[pos].last_offset == base + rel
        assert all(a[0] < b[0] and a[1] < b[1] for a, b in pairwise(offsets))
        times = parse_time_index(path.with_suffix(".timeindex"))
        assert all(a[0] < b[0] and a[1] <= b[1] for a, b in pairwise(times))
        for ts, rel in times:
            # (maximum so far, last offset of the first batch that reached it)
            holder = [b for b in batches if b.last_offset == base + rel]
            assert len(holder) == 1 and holder[0].max_timestamp == ts
            assert all(b.max_timestamp < ts for b in batches
                       if b.position < holder[0].position)
        if batches and max(b.max_timestamp for b in batches) >= 0:
            assert times and times[-1][0] == max(b.max_timestamp for b in batches)
        seen += len(offsets)
    return seen


def set_crc(buf: bytearray, position: int = 0) -> None:
    """Recompute a batch's CRC-32C (bytes 21..end) with the independent crc32c package."""
    size = struct.unpack_from(">i", buf, position + 8)[0] + 12
    crc = crc32c_package.crc32c(bytes(buf[position + 21:position + size]))
    struct.pack_into(">I", buf, position + 17, crc)


# ====================================================================== 1. leader appends


def test_leader_append_assigns_consecutive_offsets(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    a, b, c, d = recs(3, 1000, "a"), recs(2, 2000, "b"), recs(4, 1500, "c"), recs(1, 900, "d")
    first = leader_append(log, a)
    assert first == LogAppendInfo(0, 2, 1002, 2, -1, 0, 1, 3, len(payload(a)))
    both = leader_append(log, b, c)              # two batches in one append
    assert (both.first_offset, both.last_offset, both.batches, both.records) == (3, 8, 2, 6)
    assert both.valid_bytes == len(payload(b, c))
    # The maximum is in the first batch; the offset is that batch's last (Kafka's shallow
    # offset of the max timestamp).
    assert (both.max_timestamp, both.offset_of_max_timestamp) == (2001, 4)
    last = leader_append(log, d)
    assert (last.first_offset, last.last_offset, last.max_timestamp) == (9, 9, 900)
    assert log.log_end_offset == 10
    empty = log.append_as_leader(b"")
    assert (empty.first_offset, empty.last_offset, empty.batches) == (-1, -1, 0)
    assert log.log_end_offset == 10
    log.close()
    stored = [(b.base_offset, b.last_offset) for _, b, _ in raw_batches(log.dir)]
    assert stored == [(0, 2), (3, 4), (5, 8), (9, 9)]
    assert kp_read(log.dir) == (stored_as(first, a) + stored_as(both, b, c)
                                + stored_as(last, d))


def test_leader_epoch_is_written_into_the_stored_batch(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader(bytearray(build_batch(recs(2, 10), partition_leader_epoch=3)),
                         leader_epoch=7)
    log.append_as_leader(bytearray(build_batch(recs(1, 20), partition_leader_epoch=3)))
    leader_append(log, recs(2, 30), recs(1, 40), epoch=9)
    log.close()
    epochs = [struct.unpack_from(">i", raw, 12)[0] for _, _, raw in raw_batches(log.dir)]
    assert epochs == [7, 3, 9, 9]            # -1: the producer's value is left alone
    assert [b.leader_epoch for _, b in kp_batches(log.dir)] == epochs   # CRCs still valid


def test_log_append_time_sets_timestamp_attribute_and_crc(tmp_path: Path) -> None:
    clock = FakeClock(5_000_000)
    log = open_log(tmp_path, clock, message_timestamp_type="LogAppendTime")
    a, b = recs(3, [100, 300, 200]), recs(2, 50)
    info_a = leader_append(log, a)
    assert (info_a.log_append_time, info_a.max_timestamp) == (5_000_000, 5_000_000)
    clock.advance(10)
    info_b = leader_append(log, b, compression=4)
    assert info_b.log_append_time == 5_000_010
    log.close()
    for (_, batch, raw), base_ts, append_ts in zip(raw_batches(log.dir), [100, 50],
                                                  [5_000_000, 5_000_010], strict=True):
        (attributes,) = struct.unpack_from(">h", raw, 21)
        assert attributes & 0x08                                   # LogAppendTime
        assert batch.max_timestamp == append_ts
        assert struct.unpack_from(">q", raw, 27)[0] == base_ts     # baseTimestamp kept
        assert struct.unpack_from(">I", raw, 17)[0] == crc32c_package.crc32c(raw[21:])
    assert [b.timestamp_type for _, b in kp_batches(log.dir)] == [1, 1]
    assert kp_read(log.dir) == (stored_as(info_a, a, ts=5_000_000)
                                + stored_as(info_b, b, ts=5_000_010))


def test_create_time_keeps_the_producers_timestamps(tmp_path: Path) -> None:
    log = open_log(tmp_path, FakeClock(9_999_999))
    a = recs(3, [100, 300, 200])
    original = build_batch(a)
    info = log.append_as_leader(original)
    assert (info.max_timestamp, info.log_append_time) == (300, -1)
    log.close()
    ((_, batch, raw),) = raw_batches(log.dir)
    assert raw == original                      # offset 0, no epoch: stored byte for byte
    assert batch.max_timestamp == 300 and not struct.unpack_from(">h", raw, 21)[0] & 0x08
    assert kp_read(log.dir) == stored_as(info, a)


def test_read_only_input_is_copied_and_writable_input_rewritten(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    leader_append(log, recs(5, 1))
    original = build_batch(recs(2, 10))
    behind_view = bytearray(original)
    info = log.append_as_leader(memoryview(behind_view).toreadonly(), leader_epoch=4)
    assert info.first_offset == 5 and behind_view == original
    assert log.append_as_leader(original, leader_epoch=4).first_offset == 7
    mutable = bytearray(original)
    assert log.append_as_leader(mutable, leader_epoch=4).first_offset == 9
    assert struct.unpack_from(">qii", mutable, 0) == (9, len(original) - 12, 4)
    view_target = bytearray(original)
    assert log.append_as_leader(memoryview(view_target), leader_epoch=4).first_offset == 11
    assert struct.unpack_from(">q", view_target, 0) == (11,)
    # Every stored copy is the input with its offset and epoch rewritten.
    assert log.read(9, 10**6).read() == bytes(mutable) + bytes(view_target)
    copies = scan_batches(log.read(5, 10**6).read()).batches[:2]
    for base, raw in zip((5, 7), copies, strict=True):
        assert (raw.base_offset, raw.partition_leader_epoch) == (base, 4)
        assert bytes(raw.raw)[16:] == original[16:]
    log.close()


# ================================================================= 2. refused appends


def _bad_crc(buf: bytearray) -> None:
    buf[-1] ^= 0x01


def _length_too_long(buf: bytearray) -> None:
    struct.pack_into(">i", buf, 8, struct.unpack_from(">i", buf, 8)[0] + 7)


def _length_too_short(buf: bytearray) -> None:
    struct.pack_into(">i", buf, 8, struct.unpack_from(">i", buf, 8)[0] - 7)


def _length_below_minimum(buf: bytearray) -> None:
    struct.pack_into(">i", buf, 8, 20)


def _magic_1(buf: bytearray) -> None:
    buf[16] = 1


def _count_too_high(buf: bytearray) -> None:
    struct.pack_into(">i", buf, 57, struct.unpack_from(">i", buf, 57)[0] + 1)
    set_crc(buf)


def _delta_too_high(buf: bytearray) -> None:
    struct.pack_into(">i", buf, 23, struct.unpack_from(">i", buf, 23)[0] + 1)
    set_crc(buf)


def _no_records(buf: bytearray) -> None:
    struct.pack_into(">i", buf, 57, 0)
    struct.pack_into(">i", buf, 23, -1)
    set_crc(buf)


BAD_BATCHES: list[tuple[Callable[[bytearray], None], type[KafkaError]]] = [
    (_bad_crc, CorruptMessageError),
    (_length_too_long, CorruptMessageError),
    (_length_too_short, CorruptMessageError),
    (_length_below_minimum, CorruptMessageError),
    (_magic_1, UnsupportedForMessageFormatError),
    (_count_too_high, InvalidRecordError),
    (_delta_too_high, InvalidRecordError),
    (_no_records, InvalidRecordError),
]


@pytest.mark.parametrize(("corrupt", "error"), BAD_BATCHES,
                         ids=[c.__name__.strip("_") for c, _ in BAD_BATCHES])
def test_bad_batch_is_refused_and_nothing_changes(
        tmp_path: Path, corrupt: Callable[[bytearray], None], error: type[KafkaError]) -> None:
    log = open_log(tmp_path, index_interval_bytes=0, segment_bytes=1000)
    for i in range(12):
        leader_append(log, recs(3, 100 * i), epoch=1)
    assert len(log.segments) > 1
    before, leo = dir_bytes(log.dir), log.log_end_offset
    bad = bytearray(build_batch(recs(4, 5000, "bad")))
    corrupt(bad)
    for data in (bad, payload(recs(2, 4000, "good")) + bad):   # alone, and after a good one
        kept = bytes(data)
        with pytest.raises(error) as caught:
            log.append_as_leader(data, leader_epoch=2)
        assert caught.type is error
        assert data == kept                           # not rewritten either
        assert log.log_end_offset == leo and dir_bytes(log.dir) == before
    assert leader_append(log, recs(1, 6000)).first_offset == leo   # still appendable
    log.close()


def test_max_message_bytes_bounds_each_leader_batch(tmp_path: Path) -> None:
    batch = build_batch(recs(3, 1))
    log = open_log(tmp_path, max_message_bytes=len(batch))
    leader_append(log, recs(1, 0))
    before, leo = dir_bytes(log.dir), log.log_end_offset
    with pytest.raises(MessageTooLargeError):
        log.append_as_leader(build_batch(recs(3, 1, size=17)))      # one byte too many
    assert dir_bytes(log.dir) == before and log.log_end_offset == leo
    assert log.append_as_leader(batch).first_offset == leo           # exactly the limit
    # Followers copy what the leader accepted: the limit is not theirs to apply.
    big = build_batch(recs(3, 1, size=500), base_offset=log.log_end_offset)
    assert log.append_as_follower(big).records == 3
    log.close()


def test_record_list_larger_than_a_segment_is_refused(tmp_path: Path) -> None:
    one = build_batch(recs(2, 1, size=100))
    log = open_log(tmp_path, segment_bytes=len(one) + 10)
    leader_append(log, recs(1, 0))
    before = dir_bytes(log.dir)
    with pytest.raises(RecordListTooLargeError):
        log.append_as_leader(one + one)
    assert dir_bytes(log.dir) == before and log.log_end_offset == 1
    log.close()


def test_follower_append_keeps_offsets_and_refuses_going_backwards(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    info = log.append_as_follower(build_batch(recs(3, 1), base_offset=0)
                                  + build_batch(recs(2, 5), base_offset=3))
    assert (info.first_offset, info.last_offset, log.log_end_offset) == (0, 4, 5)
    # Gaps are fine (a compacted leader's batches).
    log.append_as_follower(build_batch(recs(2, 9), base_offset=10))
    assert log.log_end_offset == 12
    before = dir_bytes(log.dir)
    refused = [
        build_batch(recs(1, 20), base_offset=11),                  # below the LEO
        build_batch(recs(1, 20), base_offset=0),
        build_batch(recs(2, 20), base_offset=12) + build_batch(recs(1, 30), base_offset=13),
        build_batch(recs(1, 20), base_offset=12) + build_batch(recs(1, 30), base_offset=12),
        build_batch(recs(1, 20), base_offset=20) + build_batch(recs(1, 30), base_offset=15),
    ]
    for data in refused:
        with pytest.raises(UnexpectedAppendOffsetError):
            log.append_as_follower(data)
        assert dir_bytes(log.dir) == before and log.log_end_offset == 12
    bad = bytearray(build_batch(recs(1, 20), base_offset=12))
    _bad_crc(bad)
    with pytest.raises(CorruptMessageError):
        log.append_as_follower(bad)
    assert dir_bytes(log.dir) == before
    log.close()
    assert [r[0] for r in kp_read(log.dir)] == [0, 1, 2, 3, 4, 10, 11]


# ============================================================ 3. an independent reader


@pytest.mark.parametrize("codec", CODECS, ids=CODEC_NAMES.get)
def test_kafka_python_reads_back_every_record(tmp_path: Path, codec: int) -> None:
    rnd = random.Random(codec)
    log = open_log(tmp_path, segment_bytes=2500, index_interval_bytes=300)
    expected: list[Stored] = []
    for _ in range(40):
        batches = []
        for _ in range(rnd.randint(1, 3)):
            batch: list[Rec] = []
            for _ in range(rnd.randint(1, 5)):
                key = None if rnd.random() < 0.2 else rnd.randbytes(rnd.randint(0, 12))
                value = None if rnd.random() < 0.1 else rnd.randbytes(rnd.randint(0, 120))
                headers: list[Header] = [
                    (f"h{j}", None if rnd.random() < 0.2 else rnd.randbytes(rnd.randint(0, 8)))
                    for j in range(rnd.randint(0, 2))]
                batch.append((key, value, headers, START_MS + rnd.randint(-5000, 5000)))
            batches.append(batch)
        info = leader_append(log, *batches, epoch=1, compression=codec)
        expected += stored_as(info, *batches)
    log.close()
    assert len(segment_files(log.dir)) >= 3
    assert {b.compression_type for _, b in kp_batches(log.dir)} == {codec}
    assert kp_read(log.dir) == expected
    # Each file starts with the batch at its name's offset.
    firsts: dict[int, int] = {}
    for base, kp_batch in kp_batches(log.dir):
        firsts.setdefault(base, kp_batch.base_offset)
    assert all(base == first for base, first in firsts.items())


# ================================================================ 4. index invariants


def test_index_invariants_hold_on_disk(tmp_path: Path) -> None:
    rnd = random.Random(4)
    log = open_log(tmp_path, segment_bytes=4000, index_interval_bytes=150)
    for _ in range(120):
        batches = [recs(rnd.randint(1, 4), START_MS + rnd.randint(-3000, 3000),
                        size=rnd.randint(1, 90)) for _ in range(rnd.randint(1, 3))]
        leader_append(log, *batches)
    assert len(log.segments) >= 4
    log.close()
    assert check_indexes(log.dir) > 40


def test_index_files_preallocated_while_active_and_trimmed(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_index_bytes=1000, index_interval_bytes=0,
                   segment_bytes=1500)
    for i in range(30):
        leader_append(log, recs(2, START_MS + i))
    assert len(log.segments) >= 3
    active = log.active_segment.base_offset
    sizes = {p.name: p.stat().st_size for p in log.dir.iterdir()}
    assert sizes[f"{active:020d}.index"] == 1000            # 125 entries of 8
    assert sizes[f"{active:020d}.timeindex"] == 996         # 83 entries of 12
    for seg in log.segments[:-1]:                            # rolled: trimmed at once
        assert sizes[f"{seg.base_offset:020d}.index"] == seg.offset_index.entries * 8 < 1000
        assert sizes[f"{seg.base_offset:020d}.timeindex"] == seg.time_index.entries * 12
    log.close()
    for seg in log.segments:
        index = log.dir / f"{seg.base_offset:020d}.index"
        time_index = log.dir / f"{seg.base_offset:020d}.timeindex"
        # Whole entries only, none of them preallocated zeroes (position 0 is never indexed).
        assert index.stat().st_size == len(parse_offset_index(index)) * 8
        assert all(pos > 0 for _, pos in parse_offset_index(index))
        assert time_index.stat().st_size == len(parse_time_index(time_index)) * 12
        assert all(ts >= START_MS for ts, _ in parse_time_index(time_index))
    assert check_indexes(log.dir) > 0


def _mapped_indexes(log: Log) -> set[str]:
    """This log's index files that are memory-mapped in this process (/proc/self/maps)."""
    with open("/proc/self/maps") as f:
        paths = {line.split(None, 5)[5].strip() for line in f
                 if len(line.split(None, 5)) == 6}
    return {Path(p).name for p in paths if p.startswith(str(log.dir))}


def test_indexes_are_mapped_on_first_use(tmp_path: Path) -> None:
    """Kafka's LazyIndex: a rolled segment's indexes are unmapped at once, and after a load
    none is mapped until an append or a read needs it."""
    log = open_log(tmp_path, segment_bytes=1500, index_interval_bytes=0)
    for i in range(30):
        leader_append(log, recs(2, START_MS + i))
    assert len(log.segments) >= 3
    active = f"{log.active_segment.base_offset:020d}"
    assert _mapped_indexes(log) == {f"{active}.index", f"{active}.timeindex"}
    log = reopen(log)
    assert _mapped_indexes(log) == set()
    # A read from the first segment maps its offset index (and only it) again, and
    # finds the right batch through it.
    first = log.segments[0]
    got = scan_batches(log.read(1, 1).read(), verify_crc=True).batches[0]
    assert got.base_offset == 0 and got.last_offset == 1
    assert _mapped_indexes(log) == {f"{first.base_offset:020d}.index"}
    # Appends that index (the second: Kafka counts the bytes since the last entry before
    # adding a batch's) map the active segment's indexes at their preallocated length.
    leader_append(log, recs(2, START_MS + 100))
    leader_append(log, recs(2, START_MS + 101))
    assert log.active_segment.base_offset == int(active)
    assert {f"{active}.index", f"{active}.timeindex"} <= _mapped_indexes(log)
    assert (log.dir / f"{active}.index").stat().st_size == 4096
    log.close()
    assert _mapped_indexes(log) == set()
    assert check_indexes(log.dir) > 0


# ============================================================================ 5. reads


def _fill_for_reads(tmp_path: Path) -> tuple[Log, list[RawBatch]]:
    """A log of multi-record batches over several segments; returns the batches as
    offsets in the whole log (positions are per segment)."""
    log = open_log(tmp_path, segment_bytes=1200, index_interval_bytes=100)
    for i in range(30):
        leader_append(log, recs(1 + i % 4, START_MS + i, size=20 + i))
    assert len(log.segments) >= 3
    return log, [b for _, b, _ in raw_batches(log.dir)]


def _batches_of(data: bytes) -> list[tuple[int, int]]:
    scan = scan_batches(data)
    assert scan.error is None and scan.valid_bytes == len(data)
    return [(b.base_offset, b.last_offset) for b in scan.batches]


def test_read_from_every_offset_starts_at_its_batch(tmp_path: Path) -> None:
    log, batches = _fill_for_reads(tmp_path)
    everything = [(b.base_offset, b.last_offset) for b in batches]
    for offset in range(log.log_end_offset):
        data = log.read(offset, 10**6)
        assert isinstance(data, FetchData) and data.start_offset == offset
        got = _batches_of(data.read())
        assert got[0][0] <= offset <= got[0][1]              # the batch holding it
        assert got == everything[everything.index(got[0]):]   # then every later batch
        assert len(data.slices) == len({s.segment.base_offset for s in data.slices})
        assert all(s.position == 0 for s in data.slices[1:])  # later segments: from start
    log.close()


def test_read_max_bytes_and_min_one_message(tmp_path: Path) -> None:
    log, batches = _fill_for_reads(tmp_path)
    first = batches[0]
    one = log.read(0, first.size - 1, min_one_message=True)
    assert _batches_of(one.read()) == [(first.base_offset, first.last_offset)]
    partial = log.read(0, first.size - 1, min_one_message=False)
    assert 0 < partial.size <= first.size - 1               # Kafka's partial batch
    scan = scan_batches(partial.read())
    assert scan.batches == [] and scan.truncated
    assert log.read(0, 0, min_one_message=False).slices == []
    # A limit between batches: whole batches, then a cut one the client drops.
    limit = first.size + batches[1].size // 2
    cut = scan_batches(log.read(0, limit).read())
    assert cut.valid_bytes == first.size and len(cut.batches) == 1 and cut.truncated
    assert log.read(0, limit).size == limit
    log.close()


def test_read_stops_before_the_batch_holding_max_offset(tmp_path: Path) -> None:
    log, batches = _fill_for_reads(tmp_path)
    for bound_batch in batches[1:]:
        for bound in range(bound_batch.base_offset, bound_batch.last_offset + 1):
            data = log.read(0, 10**6, max_offset=bound)
            got = _batches_of(data.read())
            assert got[-1][1] < bound_batch.base_offset          # stops before that batch
            assert got[-1][1] + 1 == bound_batch.base_offset      # and nothing earlier is lost
    # A bound in the batch being read: nothing.
    multi = next(b for b in batches if b.last_offset > b.base_offset)
    assert log.read(multi.base_offset, 10**6, max_offset=multi.last_offset).slices == []
    assert log.read(multi.base_offset, 10**6, max_offset=multi.last_offset,
                    min_one_message=True).size == 0
    log.close()


def test_read_edges_and_out_of_range(tmp_path: Path) -> None:
    log, batches = _fill_for_reads(tmp_path)
    leo = log.log_end_offset
    at_end = log.read(leo, 10**6)
    assert at_end.slices == [] and at_end.log_end_offset == leo
    with pytest.raises(OffsetOutOfRangeError):
        log.read(leo + 1, 10**6)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(-1, 10**6)
    log.update_high_watermark(leo)
    middle = next(b for b in batches if b.last_offset > b.base_offset + 1)
    log.delete_records(middle.base_offset + 1)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(middle.base_offset, 10**6)
    data = log.read(middle.base_offset + 1, 10**6)
    assert (data.log_start_offset, data.high_watermark) == (middle.base_offset + 1, leo)
    assert _batches_of(data.read())[0] == (middle.base_offset, middle.last_offset)
    log.close()


# ============================================================================ 6. rolls


def test_roll_on_segment_bytes(tmp_path: Path) -> None:
    sizes = [len(build_batch(recs(2, 1, size=10 + 7 * (i % 5)))) for i in range(20)]
    segment_bytes = 3 * max(sizes)
    log = open_log(tmp_path, segment_bytes=segment_bytes)
    expected_bases, current = [0], 0
    for i, size in enumerate(sizes):
        if current > segment_bytes - size:                  # Kafka's rule
            expected_bases.append(2 * i)
            current = 0
        current += size
        info = leader_append(log, recs(2, 1, size=10 + 7 * (i % 5)))
        assert info.first_offset == 2 * i
    assert [s.base_offset for s in log.segments] == expected_bases
    assert all(s.size <= segment_bytes for s in log.segments)
    log.close()
    assert segment_files(log.dir) == [f"{b:020d}.log" for b in expected_bases]
    assert segment_files(log.dir, ".index") == [f"{b:020d}.index" for b in expected_bases]


def test_roll_on_segment_ms_by_batch_timestamps(tmp_path: Path) -> None:
    clock = FakeClock()
    log = open_log(tmp_path, clock, segment_ms=1000)
    rolls = []
    for ts in [5000, 5500, 6000, 6001, 6500, 6900, 7001, 7002]:
        clock.advance(10**9)                 # the clock plays no part when batches have times
        before = len(log.segments)
        info = leader_append(log, recs(1, ts))
        if len(log.segments) > before:
            rolls.append((ts, info.first_offset))
    assert rolls == [(6001, 3), (7002, 7)]
    assert [s.base_offset for s in log.segments] == [0, 3, 7]
    log.close()


def test_roll_on_segment_ms_uses_the_largest_timestamp_of_an_append(tmp_path: Path) -> None:
    # Kafka's maybeRoll passes appendInfo.maxTimestamp, the largest over all batches.
    log = open_log(tmp_path, segment_ms=1000)
    leader_append(log, recs(1, 5000))
    leader_append(log, recs(1, 5100), recs(1, 6500))
    assert [s.base_offset for s in log.segments] == [0, 1]
    log.append_as_follower(build_batch(recs(1, 6600), base_offset=3)
                           + build_batch(recs(1, 7600), base_offset=4))
    assert [s.base_offset for s in log.segments] == [0, 1, 3]
    log.close()


@pytest.mark.parametrize("step", [10, 0], ids=["rising-times", "same-time"])
def test_roll_when_an_index_is_full(tmp_path: Path, step: int) -> None:
    # 48 bytes: 6 offset entries, 4 time entries; every batch but a segment's first indexed.
    # With rising timestamps the time index fills first, with one timestamp the offset index.
    log = open_log(tmp_path, segment_index_bytes=48, index_interval_bytes=0)
    expected: list[Stored] = []
    for i in range(25):
        batch = recs(2, [START_MS + step * i] * 2)
        expected += stored_as(leader_append(log, batch), batch)
    assert len(log.segments) >= 4
    bases = [s.base_offset for s in log.segments]
    log.close()
    for base in bases:
        assert len(parse_offset_index(log.dir / f"{base:020d}.index")) <= 6
        assert len(parse_time_index(log.dir / f"{base:020d}.timeindex")) <= 4
    check_indexes(log.dir)
    assert kp_read(log.dir) == expected


def test_roll_on_relative_offset_overflow(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_follower(build_batch(recs(3, 1), base_offset=0))
    log.append_as_follower(build_batch(recs(1, 2), base_offset=INT32_MAX))   # fits: no roll
    assert [s.base_offset for s in log.segments] == [0]
    far = INT32_MAX + 1
    log.append_as_follower(build_batch(recs(2, 3), base_offset=far))
    assert [s.base_offset for s in log.segments] == [0, far]
    # Past a gap, the new segment starts at the append's first offset, not at the LEO.
    farther = far + INT32_MAX + 10
    log.append_as_follower(build_batch(recs(2, 4), base_offset=farther))
    assert [s.base_offset for s in log.segments] == [0, far, farther]
    assert log.log_end_offset == farther + 2
    got = _batches_of(log.read(3, 10**6).read())
    assert got == [(INT32_MAX, INT32_MAX), (far, far + 1), (farther, farther + 1)]
    assert _batches_of(log.read(far + 2, 10**6).read()) == [(farther, farther + 1)]
    log.close()
    assert segment_files(log.dir) == ["00000000000000000000.log",
                                      "00000000002147483648.log",
                                      "00000000004294967305.log"]
    assert [r[0] for r in kp_read(log.dir)] == [0, 1, 2, INT32_MAX, far, far + 1,
                                                farther, farther + 1]
    check_indexes(log.dir)


# ====================================================================== 7. timestamps


# Batches (one append each) and their record timestamps; the maximum, 700, is mid-batch.
TIMES = [[100, 300, 200], [150, 250], [400, 700, 500], [650], [600, 690, 680], [120], [700]]


def _flat(times: list[list[int]]) -> list[int]:
    return [t for batch in times for t in batch]


def _first_at_or_after(flat: list[int], target: int, start: int = 0
                       ) -> TimestampOffset | None:
    return next((TimestampOffset(t, o) for o, t in enumerate(flat)
                 if t >= target and o >= start), None)


def test_fetch_offset_by_timestamp(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_bytes=400, index_interval_bytes=0)
    for batch in TIMES:
        leader_append(log, recs(len(batch), batch))
    assert len(log.segments) >= 3
    flat = _flat(TIMES)
    leo = log.log_end_offset
    assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP) == TimestampOffset(-1, 0)
    assert log.fetch_offset_by_timestamp(EARLIEST_LOCAL_TIMESTAMP) == TimestampOffset(-1, 0)
    assert log.fetch_offset_by_timestamp(LATEST_TIMESTAMP) == TimestampOffset(-1, leo)
    # The first record with the largest timestamp, inside its batch.
    assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP) == TimestampOffset(700, 6)
    for target in [0, *range(95, 710, 5), *flat]:
        assert log.fetch_offset_by_timestamp(target) == _first_at_or_after(flat, target), target
    assert log.fetch_offset_by_timestamp(701) is None
    # After DeleteRecords the answers start at the new log start offset.
    log.update_high_watermark(leo)
    for start in (1, 4, 7, 11):
        log.delete_records(start)
        assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP) == TimestampOffset(-1, start)
        for target in [0, *range(95, 710, 5)]:
            assert log.fetch_offset_by_timestamp(target) == \
                _first_at_or_after(flat, target, start), (start, target)
    log.close()


def test_max_timestamp_with_log_append_time_is_the_batch_first_record(tmp_path: Path) -> None:
    clock = FakeClock(1000)
    log = open_log(tmp_path, clock, message_timestamp_type="LogAppendTime")
    for now, n in [(1000, 3), (3000, 2), (2000, 4)]:
        clock.now = now
        leader_append(log, recs(n, 5))
    assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP) == TimestampOffset(3000, 3)
    assert log.fetch_offset_by_timestamp(2500) == TimestampOffset(3000, 3)
    assert log.fetch_offset_by_timestamp(1500) == TimestampOffset(3000, 3)
    assert log.fetch_offset_by_timestamp(1000) == TimestampOffset(1000, 0)
    log.close()


def test_no_timestamp_answers_on_an_empty_log(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP) is None
    assert log.fetch_offset_by_timestamp(0) is None
    assert log.fetch_offset_by_timestamp(LATEST_TIMESTAMP) == TimestampOffset(NO_TIMESTAMP, 0)
    log.close()


# ======================================================================= 8. truncation


def _three_segments(tmp_path: Path, **overrides: object) -> tuple[Log, list[Stored]]:
    settings: dict[str, object] = {"segment_bytes": 700, "index_interval_bytes": 60}
    settings.update(overrides)
    log = open_log(tmp_path, None, **settings)
    expected: list[Stored] = []
    i = 0
    while len(log.segments) < 3 or log.active_segment.size < 300:
        batch = recs(1 + i % 3, START_MS + i)
        expected += stored_as(leader_append(log, batch, epoch=1 + i // 10), batch)
        i += 1
    return log, expected


def test_truncate_mid_batch_removes_the_whole_batch(tmp_path: Path) -> None:
    log, expected = _three_segments(tmp_path)
    batches = [b for _, b, _ in raw_batches(log.dir)]
    victim = [b for b in batches if b.last_offset > b.base_offset][-1]
    assert log.truncate_to(victim.base_offset + 1)
    assert log.log_end_offset == victim.base_offset
    assert _batches_of(log.read(0, 10**7).read())[-1][1] == victim.base_offset - 1
    again = recs(2, START_MS + 999, "again")
    info = leader_append(log, again)
    assert info.first_offset == victim.base_offset
    log.close()
    kept = [r for r in expected if r[0] < victim.base_offset]
    assert kp_read(log.dir) == kept + stored_as(info, again)
    check_indexes(log.dir)


def test_truncate_to_the_end_drops_an_epoch_that_starts_there(tmp_path: Path) -> None:
    """A leader took epoch 3 at its end and appended nothing before it lost the leadership:
    as a follower, the new leader's DivergingEpoch brings it to "truncate" to its end, which
    removes no batch but must remove epoch 3 (Kafka's UnifiedLog.truncateTo), or it fetches
    with LastFetchedEpoch 3 forever and the new leader never counts it caught up."""
    log = open_log(tmp_path)
    leader_append(log, recs(3, START_MS), epoch=2)
    end = log.log_end_offset
    log.epochs.assign(3, end)                   # Partition.make_leader at epoch 3
    assert log.epochs.latest_epoch == 3
    assert not log.truncate_to(end)
    assert log.log_end_offset == end
    assert [(e.epoch, e.start_offset) for e in log.epochs.entries] == [(2, 0)]
    # Beyond the end likewise changes nothing else.
    assert not log.truncate_to(end + 5)
    assert log.log_end_offset == end and log.epochs.latest_epoch == 2
    log.close()


def test_truncate_across_segments(tmp_path: Path) -> None:
    clock = FakeClock()
    log, expected = _three_segments(tmp_path, file_delete_delay_ms=1000)
    log.flush()
    bases = [s.base_offset for s in log.segments]
    target = bases[1] + 4
    holder = next(b for _, b, _ in raw_batches(log.dir) if b.last_offset >= target)
    assert holder.base_offset > bases[1]
    hw = log.update_high_watermark(log.log_end_offset)
    assert hw == log.log_end_offset
    epochs_before = list(log.epochs.entries)
    assert log.truncate_to(target)
    assert [s.base_offset for s in log.segments] == bases[:2]
    assert log.log_end_offset == holder.base_offset
    assert log.high_watermark == log.recovery_point == log.log_end_offset
    assert all(e.start_offset < log.log_end_offset for e in log.epochs.entries)
    assert log.epochs.entries == [e for e in epochs_before if e.start_offset < target]
    # Removed segments wait as .deleted files.
    assert f"{bases[2]:020d}.log.deleted" in segment_files(log.dir, ".deleted")
    # The segment is active again: preallocated indexes, appends continue at the LEO.
    assert (log.dir / f"{bases[1]:020d}.index").stat().st_size == 4096
    tail = recs(3, START_MS + 5000, "tail")
    info = leader_append(log, tail, epoch=9)
    assert info.first_offset == log.log_end_offset - 3
    log = reopen(log, clock)
    assert log.log_end_offset == info.last_offset + 1
    log.close()
    assert segment_files(log.dir, ".deleted") == []
    kept = [r for r in expected if r[0] < info.first_offset]
    assert kp_read(log.dir) == kept + stored_as(info, tail)
    check_indexes(log.dir)


def test_recovery_rebuilds_epochs_the_checkpoint_missed(tmp_path: Path) -> None:
    """A truncation leaves the leader-epoch checkpoint stale until the next flush job; after
    a crash, recovery takes the epochs of the recovered range from the batches, not from the
    stale file (found by the model test: a truncated epoch-0 entry came back)."""
    log = open_log(tmp_path)
    leader_append(log, recs(2, START_MS), epoch=0)
    log = reopen(log)
    assert log.epochs.entries == [EpochEntry(0, 0)]
    assert log.truncate_to(0)
    assert log.epochs.entries == []
    leader_append(log, recs(1, START_MS), epoch=-1)   # a batch with no epoch
    log.close_unclean()
    log = Log.open(log.dir, log.config, recovery_point=0, clock=FakeClock())
    assert log.log_end_offset == 1
    assert log.epochs.entries == []
    # Epochs the checkpoint never saw come back from the batches too.
    leader_append(log, recs(1, START_MS), epoch=5)
    log.close_unclean()
    log = Log.open(log.dir, log.config, recovery_point=0, clock=FakeClock())
    assert log.epochs.entries == [EpochEntry(5, 1)]
    log.close()


def test_an_emptied_log_keeps_no_epoch_after_a_crash(tmp_path: Path) -> None:
    """Retention deletes every record; the epoch entry moved up to the log end is not yet in
    the checkpoint when the process dies. Either way the reloaded log has no epoch entry:
    none of its records was written under one (found by the model test)."""
    clock = FakeClock()
    log = open_log(tmp_path, clock, retention_ms=1000, file_delete_delay_ms=0)
    leader_append(log, recs(1, START_MS), epoch=0)
    log = reopen(log, clock)
    log.update_high_watermark(log.log_end_offset)
    clock.advance(10_000)
    assert log.delete_old_segments() == 1
    assert (log.log_start_offset, log.log_end_offset) == (1, 1)
    assert log.epochs.entries == [EpochEntry(0, 1)]      # Kafka's truncateFromStart
    log.close_unclean()
    log = Log.open(log.dir, log.config, recovery_point=0, log_start_offset=1, clock=clock)
    assert (log.log_start_offset, log.log_end_offset) == (1, 1)
    assert log.epochs.entries == []
    log.close()


def test_segments_reborn_at_a_deleted_base_survive_the_delayed_delete(tmp_path: Path) -> None:
    clock = FakeClock()
    log = open_log(tmp_path, clock, segment_bytes=600, file_delete_delay_ms=1000)
    for i in range(20):
        leader_append(log, recs(2, i, size=40))
    bases = [s.base_offset for s in log.segments]
    assert len(bases) >= 3
    log.truncate_to(bases[1] + 1)
    expected: list[Stored] = []
    while log.log_end_offset < bases[-1] + 4:           # roll again at the same offsets
        batch = recs(2, 100, "new", size=40)
        expected += stored_as(leader_append(log, batch), batch)
    assert set(bases) <= {s.base_offset for s in log.segments}
    clock.advance(1000)
    assert log.remove_deleted_segments() == len(bases) - 2
    assert segment_files(log.dir, ".deleted") == []
    leo = log.log_end_offset
    log = reopen(log, clock)
    assert log.log_end_offset == leo
    log.close()
    assert kp_read(log.dir)[-len(expected):] == expected


def test_truncate_to_a_segment_base_keeps_that_segment_empty(tmp_path: Path) -> None:
    log, expected = _three_segments(tmp_path)
    bases = [s.base_offset for s in log.segments]
    assert log.truncate_to(bases[1])
    assert [s.base_offset for s in log.segments] == bases[:2]
    assert (log.active_segment.size, log.log_end_offset) == (0, bases[1])
    batch = recs(2, START_MS + 777, "z")
    info = leader_append(log, batch)
    assert info.first_offset == bases[1]
    assert [s.base_offset for s in log.segments] == bases[:2]     # no new segment
    log.close()
    assert kp_read(log.dir) == [r for r in expected if r[0] < bases[1]] + \
        stored_as(info, batch)
    check_indexes(log.dir)


def test_start_afresh_at_the_same_base_survives_the_delayed_delete(tmp_path: Path) -> None:
    clock = FakeClock()
    log = open_log(tmp_path, clock, file_delete_delay_ms=1000)
    leader_append(log, recs(3, 1))
    log.truncate_fully_and_start_at(0)           # the new segment reuses 00...0's names
    batch = recs(2, 9, "new")
    info = leader_append(log, batch)
    assert info.first_offset == 0
    clock.advance(1000)
    assert log.remove_deleted_segments() == 1
    log = reopen(log, clock)
    assert log.log_end_offset == 2
    log.close()
    assert kp_read(log.dir) == stored_as(info, batch)


def test_truncate_below_log_start_and_truncate_fully(tmp_path: Path) -> None:
    log, _ = _three_segments(tmp_path)
    leo = log.log_end_offset
    assert not log.truncate_to(leo) and not log.truncate_to(leo + 5)
    log.update_high_watermark(leo)
    log.delete_records(10)
    assert log.truncate_to(6)                  # below the log start: start afresh there
    assert [s.base_offset for s in log.segments] == [6]
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (6, 6, 6)
    assert log.epochs.entries == []
    assert log.read(6, 100).slices == []
    with pytest.raises(OffsetOutOfRangeError):
        log.read(5, 100)
    log.truncate_fully_and_start_at(1000)
    assert [s.base_offset for s in log.segments] == [1000]
    assert (log.log_start_offset, log.log_end_offset) == (1000, 1000)
    batch = recs(2, 7)
    info = leader_append(log, batch, epoch=3)
    assert info.first_offset == 1000
    log.close()
    assert segment_files(log.dir) == ["00000000000000001000.log"]
    assert kp_read(log.dir) == stored_as(info, batch)


def test_delete_records(tmp_path: Path) -> None:
    log, _ = _three_segments(tmp_path)
    log.update_high_watermark(20)
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records(21)
    assert log.log_start_offset == 0
    assert log.epochs.entries[0].start_offset == 0
    assert log.delete_records(15) == 15
    assert log.delete_records(3) == 15         # never backwards
    # The leader epoch cache starts at the new log start too (Kafka's truncateFromStart).
    assert log.epochs.entries[0].start_offset == 15
    assert all(e.start_offset >= 15 for e in log.epochs.entries)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(14, 100)
    assert log.read(15, 100).log_start_offset == 15
    assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP) == TimestampOffset(-1, 15)
    log.close()


# ======================================================================== 9. retention


def _segments_with_max(log: Log, max_timestamps: list[int], per_segment: int = 3) -> None:
    """One rolled segment of ``per_segment`` one-record batches per maximum timestamp."""
    for top in max_timestamps:
        for i in range(per_segment):
            leader_append(log, recs(1, top - per_segment + 1 + i))
        log.roll()


def test_retention_ms_and_delayed_file_removal(tmp_path: Path) -> None:
    clock = FakeClock(10_000)
    log = open_log(tmp_path, clock, retention_ms=1000, file_delete_delay_ms=500)
    _segments_with_max(log, [5000, 8000, 9500])
    log.update_high_watermark(log.log_end_offset)
    clock.now = 9001          # 9001 - 5000 and 9001 - 8000 exceed 1000; 9001 - 9500 does not
    assert log.delete_old_segments() == 2
    assert [s.base_offset for s in log.segments] == [6, 9]
    assert log.log_start_offset == 6
    with pytest.raises(OffsetOutOfRangeError):
        log.read(5, 100)
    assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP) == TimestampOffset(-1, 6)
    assert segment_files(log.dir, ".deleted") == sorted(
        f"{b:020d}{s}.deleted" for b in (0, 3) for s in (".index", ".log", ".timeindex"))
    clock.advance(499)
    assert log.remove_deleted_segments() == 0
    assert len(segment_files(log.dir, ".deleted")) == 6
    clock.advance(1)
    assert log.remove_deleted_segments() == 2
    assert segment_files(log.dir, ".deleted") == []
    assert segment_files(log.dir) == [f"{6:020d}.log", f"{9:020d}.log"]
    log.close()


def test_retention_ms_is_strictly_exceeded(tmp_path: Path) -> None:
    clock = FakeClock(6000)
    log = open_log(tmp_path, clock, retention_ms=1000)
    _segments_with_max(log, [5000, 5500])
    log.update_high_watermark(log.log_end_offset)
    assert log.delete_old_segments() == 0             # 6000 - 5000 is not > 1000
    clock.advance(1)
    assert log.delete_old_segments() == 1
    assert [s.base_offset for s in log.segments] == [3, 6]
    log.close()


def test_retention_only_below_the_high_watermark(tmp_path: Path) -> None:
    clock = FakeClock(10**9)
    log = open_log(tmp_path, clock, retention_ms=1)
    _segments_with_max(log, [1000, 2000, 3000])
    log.update_high_watermark(5)                  # inside the second segment [3, 6)
    assert log.delete_old_segments() == 1
    assert [s.base_offset for s in log.segments] == [3, 6, 9]
    log.update_high_watermark(9)
    assert log.delete_old_segments() == 2
    # The final empty active segment is never deleted.
    assert [s.base_offset for s in log.segments] == [9]
    assert log.delete_old_segments() == 0
    assert log.log_start_offset == 9
    log.close()


def test_retention_rolls_when_every_segment_goes(tmp_path: Path) -> None:
    clock = FakeClock(10**9)
    log = open_log(tmp_path, clock, retention_ms=1)
    _segments_with_max(log, [1000, 2000])
    leader_append(log, recs(2, 3000))             # the active segment is not empty
    leo = log.update_high_watermark(log.log_end_offset)
    assert log.delete_old_segments() == 3
    assert [s.base_offset for s in log.segments] == [leo]
    assert (log.log_start_offset, log.log_end_offset) == (leo, leo)
    assert leader_append(log, recs(1, 4000)).first_offset == leo
    log.close()
    assert segment_files(log.dir) == [f"{leo:020d}.log"]


def test_retention_bytes(tmp_path: Path) -> None:
    log = open_log(tmp_path, retention_bytes=-1)
    _segments_with_max(log, [START_MS] * 4)
    leader_append(log, recs(1, START_MS))
    sizes = [s.size for s in log.segments]
    retention = sum(sizes) - sizes[0] - sizes[1] // 2     # one and a half segments too many
    log.change_config(LogConfig(segment_index_bytes=4096, retention_bytes=retention))
    log.update_high_watermark(log.log_end_offset)
    assert log.delete_old_segments() == 1                 # only whole segments, oldest first
    assert log.size == sum(sizes) - sizes[0] > retention
    log.change_config(LogConfig(segment_index_bytes=4096, retention_bytes=sum(sizes[2:])))
    assert log.delete_old_segments() == 1
    assert log.size == sum(sizes[2:])
    log.close()


def test_log_start_breach_deletes_segments_below_it(tmp_path: Path) -> None:
    log = open_log(tmp_path, retention_ms=-1)
    _segments_with_max(log, [1000, 2000, 3000])
    log.update_high_watermark(log.log_end_offset)
    log.delete_records(7)
    assert log.delete_old_segments() == 2             # [0, 3) and [3, 6) end at or below 7
    assert [s.base_offset for s in log.segments] == [6, 9]
    assert log.log_start_offset == 7                   # not moved back to the segment base
    log.close()


def test_compact_only_policy_skips_time_and_size_retention(tmp_path: Path) -> None:
    clock = FakeClock(10**9)
    log = open_log(tmp_path, clock, retention_ms=1, retention_bytes=0,
                   cleanup_policy=("compact",))
    _segments_with_max(log, [1000, 2000, 3000])
    log.update_high_watermark(log.log_end_offset)
    assert log.delete_old_segments() == 0
    assert [s.base_offset for s in log.segments] == [0, 3, 6, 9]
    log.delete_records(4)                              # the log start still applies
    assert log.delete_old_segments() == 1
    assert [s.base_offset for s in log.segments] == [3, 6, 9]
    log.close()


# ============================================================ 10. reopening and config


def _state(log: Log) -> tuple[object, ...]:
    reads = tuple(log.read(o, 10**7).read() for o in range(log.log_start_offset,
                                                              log.log_end_offset + 1))
    lookups = tuple(log.fetch_offset_by_timestamp(t)
                    for t in (MAX_TIMESTAMP, *range(START_MS - 10, START_MS + 200, 7)))
    segments = tuple((s.base_offset, s.size, s.next_offset, s.max_timestamp,
                      s.offset_of_max_timestamp, s.rolling_timestamp) for s in log.segments)
    return (log.log_start_offset, log.log_end_offset, segments, reads, lookups)


def test_clean_reopen_gives_the_same_log(tmp_path: Path) -> None:
    clock = FakeClock()
    log = open_log(tmp_path, clock, segment_bytes=1500, index_interval_bytes=100)
    rnd = random.Random(10)
    for i, epoch in enumerate([1] * 10 + [3] * 15 + [5] * 10):
        leader_append(log, recs(rnd.randint(1, 3), START_MS + rnd.randint(0, 150)),
                      epoch=epoch)
        if i == 9:
            first_of_3 = log.log_end_offset
        if i == 24:
            first_of_5 = log.log_end_offset
    assert len(log.segments) >= 3
    state = _state(log)
    log.close()
    on_disk = dir_bytes(log.dir)
    assert (log.dir / "leader-epoch-checkpoint").read_text() == \
        f"0\n3\n1 0\n3 {first_of_3}\n5 {first_of_5}\n"
    log = Log.open(log.dir, log.config, had_clean_shutdown=True, clock=clock)
    assert _state(log) == state
    log.close()
    assert dir_bytes(log.dir) == on_disk               # opening and closing changes nothing
    # And it goes on where it stopped.
    log = Log.open(log.dir, log.config, had_clean_shutdown=True, clock=clock)
    leo = log.log_end_offset
    assert leader_append(log, recs(1, START_MS), epoch=6).first_offset == leo
    log.close()
    assert (log.dir / "leader-epoch-checkpoint").read_text().endswith(f"\n6 {leo}\n")
    check_indexes(log.dir)


def test_log_config_resolves_broker_names() -> None:
    assert LogConfig.resolve() == LogConfig()
    config = LogConfig.resolve({}, {
        "log.roll.hours": "2", "log.retention.minutes": 3, "log.segment.bytes": "1048576",
        "log.index.interval.bytes": "100", "log.index.size.max.bytes": "8192",
        "log.segment.delete.delay.ms": "5", "message.max.bytes": 2000,
        "log.retention.bytes": "123456", "log.cleanup.policy": "delete, compact",
        "log.message.timestamp.type": "LogAppendTime", "log.roll.jitter.hours": "1",
        "log.flush.interval.messages": "10", "log.preallocate": "true",
    })
    assert (config.segment_ms, config.retention_ms, config.segment_bytes) == \
        (2 * 3_600_000, 3 * 60_000, 1_048_576)
    assert (config.index_interval_bytes, config.segment_index_bytes) == (100, 8192)
    assert (config.file_delete_delay_ms, config.max_message_bytes) == (5, 2000)
    assert (config.retention_bytes, config.cleanup_policy) == (123456, ("compact", "delete"))
    assert config.log_append_time and config.compact and config.delete
    assert (config.segment_jitter_ms, config.flush_messages, config.flush_ms) == \
        (3_600_000, 10, LONG_MAX)
    assert config.preallocate is True
    # The most precise broker name wins; topic overrides win over the broker.
    assert LogConfig.resolve({}, {"log.roll.ms": 5, "log.roll.hours": 1}).segment_ms == 5
    assert LogConfig.resolve({}, {"log.retention.hours": 1, "log.retention.minutes": 2}
                             ).retention_ms == 120_000
    assert LogConfig.resolve({}, {"log.retention.hours": 1, "log.retention.minutes": 2,
                                  "log.retention.ms": 7}).retention_ms == 7
    assert LogConfig.resolve({}, {"log.retention.hours": 1}).retention_ms == 3_600_000
    assert LogConfig.resolve({"segment.ms": "99", "retention.ms": "-1"},
                             {"log.roll.hours": 1, "log.retention.hours": 1}
                             ) == LogConfig(segment_ms=99, retention_ms=-1)
    assert LogConfig.resolve({}, {"log.roll.hours": None}).segment_ms == 604_800_000


@pytest.mark.parametrize(("topic", "broker"), [
    ({"segment.bytes": "abc"}, {}),
    ({"segment.bytes": "13"}, {}),
    ({"segment.bytes": str(2**31)}, {}),
    ({"segment.ms": "0"}, {}),
    ({"retention.ms": "-2"}, {}),
    ({"cleanup.policy": "delete,archive"}, {}),
    ({"message.timestamp.type": "Now"}, {}),
    ({"min.cleanable.dirty.ratio": "1.5"}, {}),
    ({"preallocate": "yes"}, {}),
    ({"compression.type": "brotli"}, {}),
    ({"no.such.config": "1"}, {}),
    ({"log.segment.bytes": "1000"}, {}),           # a broker name is not a topic name
    ({}, {"log.roll.hours": "x"}),
    ({}, {"log.segment.bytes": "10"}),
    ({}, {"log.index.size.max.bytes": str(2**31)}),
])
def test_log_config_rejects_bad_values(topic: dict[str, object],
                                       broker: dict[str, object]) -> None:
    with pytest.raises(InvalidConfigError):
        LogConfig.resolve(topic, broker)


def test_roll_on_segment_ms_without_timestamps_uses_the_logs_clock(tmp_path: Path) -> None:
    # Batches without a timestamp (-1): the segment's age counts from its creation, on the
    # same clock the log uses for "now" (Kafka's rule), so a fake clock rolls too.
    clock = FakeClock()
    log = open_log(tmp_path, clock, segment_ms=1000)
    leader_append(log, recs(1, -1))
    clock.now += 999
    leader_append(log, recs(1, -1))
    assert len(log.segments) == 1
    clock.now += 2
    info = leader_append(log, recs(1, -1))
    assert [s.base_offset for s in log.segments] == [0, info.first_offset]
    # After a truncation empties the active segment, its age restarts on the log's clock.
    log.truncate_to(info.first_offset)
    clock.now += 500
    leader_append(log, recs(1, -1))
    assert len(log.segments) == 2
    log.close()


def test_leader_epoch_checkpoint_is_written_by_the_flush_job(tmp_path: Path) -> None:
    # The checkpoint's fsync must not run on the event loop: appends only mark the cache,
    # the flush job (a worker thread in the broker) writes the file.
    log = open_log(tmp_path)
    checkpoint = log.dir / "leader-epoch-checkpoint"
    leader_append(log, recs(2, 1000), epoch=4)
    assert log.roll_flush_due and not checkpoint.exists()
    job = log.begin_flush()
    assert not checkpoint.exists()
    job.run()
    log.end_flush(job)
    assert checkpoint.read_text().split("\n")[:3] == ["0", "1", "4 0"]
    assert not log.roll_flush_due
    log.close()


def test_an_epoch_continues_after_records_deleted_past_its_entry(tmp_path: Path) -> None:
    """DeleteRecords past every record empties the epoch cache (the entry moved to the log
    end goes on reload); the next batch of the same epoch starts the entry again, although its
    segment's previous batch had that epoch (found by the model test)."""
    log = open_log(tmp_path)
    leader_append(log, recs(1, START_MS), epoch=0)
    log.update_high_watermark(1)
    assert log.delete_records(1) == 1
    log.close()
    log = Log.open(log.dir, log.config, had_clean_shutdown=True, log_start_offset=1,
                   clock=FakeClock())
    assert (log.log_start_offset, log.log_end_offset, log.epochs.entries) == (1, 1, [])
    leader_append(log, recs(1, START_MS), epoch=0)
    assert log.epochs.entries == [EpochEntry(0, 1)]
    log.close()


# ============================================================= idempotent producers


def _idempotent(seq: int, count: int = 3, epoch: int = 0, pid: int = 77) -> bytearray:
    return bytearray(build_batch([(None, b"v%d" % (seq + i), None, START_MS)
                                  for i in range(count)],
                                 producer_id=pid, producer_epoch=epoch, base_sequence=seq))


def test_idempotent_appends_keep_the_last_five_batches_and_answer_retries(
        tmp_path: Path) -> None:
    """Appends that follow in sequence (recorded without an append info) leave the same state
    as the general path: the last five batches, duplicates answered with their offsets, a
    retry of an older batch or a gap refused."""
    from kafkapy.errors import OutOfOrderSequenceNumberError
    log = open_log(tmp_path)
    infos = [log.append_as_leader(_idempotent(3 * i)) for i in range(7)]
    assert [i.first_offset for i in infos] == [3 * i for i in range(7)]
    entry = log.producer_state.producers[77]
    assert [(m.first_seq, m.last_seq, m.first_offset, m.last_offset)
            for m in entry.batch_metadata] == [(3 * i, 3 * i + 2, 3 * i, 3 * i + 2)
                                               for i in range(2, 7)]
    end = log.log_end_offset
    retry = log.append_as_leader(_idempotent(9))           # the 4th batch again
    assert (retry.first_offset, retry.last_offset, retry.duplicate) == (9, 11, True)
    assert log.log_end_offset == end
    with pytest.raises(OutOfOrderSequenceNumberError):
        log.append_as_leader(_idempotent(3))               # fell out of the five
    with pytest.raises(OutOfOrderSequenceNumberError):
        log.append_as_leader(_idempotent(22))              # a gap (21 is next)
    assert log.log_end_offset == end
    assert log.append_as_leader(_idempotent(21)).first_offset == end
    # A clean restart keeps the last batch (Kafka's snapshot holds one per producer).
    log = reopen(log)
    assert log.append_as_leader(_idempotent(21)).duplicate
    assert log.append_as_leader(_idempotent(24)).first_offset == end + 3


def test_legacy_offsets_before(tmp_path: Path) -> None:
    """ListOffsets v0's offsets (Kafka's legacyFetchOffsetsBefore): segment bases and the log
    end, by segment file time, newest first, at most max_num_offsets."""
    log = open_log(tmp_path)
    leader_append(log, recs(3, 1000))
    log.roll()
    leader_append(log, recs(2, 2000))
    log.roll()
    leader_append(log, recs(4, 3000))
    assert [s.base_offset for s in log.segments] == [0, 3, 5]
    now = 10**13
    assert log.legacy_offsets_before(-1, 1, now) == [9]
    assert log.legacy_offsets_before(-1, 10, now) == [9, 5, 3, 0]
    assert log.legacy_offsets_before(-2, 10, now) == [0]
    # Every segment file was modified just now: none before an old time, all before now.
    assert log.legacy_offsets_before(1000, 10, now) == []
    assert log.legacy_offsets_before(now - 1, 2, now) == [5, 3]
    log.update_high_watermark(9)
    log.delete_records(4)
    assert log.legacy_offsets_before(-1, 10, now) == [9, 5, 4, 4]
    log.roll()                          # an empty active segment adds no log-end entry
    assert log.legacy_offsets_before(-1, 10, now) == [9, 5, 4, 4]
    log.close()
