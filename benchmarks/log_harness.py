"""Log speed harness (issue 3): the data builders and timed loops behind
benchmarks/test_log_bench.py, and a one-command report.

    PYTHONPATH=. python benchmarks/log_harness.py [--rounds N] [--append-mib M]
                                                  [--recovery-mib M] [--dir DIR]

prints a table: append MB/s against raw sequential ``os.write`` of the same bytes to the same
directory (interleaved rounds, median of the per-round ratios), recovery GB/s of a 1 GiB
one-segment partition made of 1 MiB batches and of 1 KiB batches, and ns per index lookup.
Every file goes in a temporary directory (``--dir``: made inside it) that is removed at the end.

What is measured, and why so:

- Append: ``Log.append_as_leader`` of one ~1 MiB batch (1,000 records of 1 KiB, built once)
  per call, the way a broker calls it: the request buffer is a ``bytearray`` the broker owns,
  so the log rewrites offsets in place and copies nothing (the same bytearray serves every
  call: the CRC does not cover the baseOffset the log rewrites). Every round starts a fresh
  log (default config: segment.bytes 1 GiB, so a round of up to 1,037 batches never rolls)
  and a fresh raw file beside it; opening and deleting them is not timed. Rounds alternate
  which side goes first.
- Recovery: ``Log.open(had_clean_shutdown=False, recovery_point=0)`` of a partition written
  once through Log appends and fsynced; the page cache is warm (the files were just written,
  and an untimed recovery runs first), so this is the CPU cost: CRC-32C of every byte plus
  the per-batch walk and the index rebuild.
- Lookups: 1,000 random targets through the public API (Python call and result object
  included); a full 10 MiB index holds 1,310,720 offset entries or 873,813 time entries.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkapy.log.config import LogConfig
from kafkapy.log.index import OffsetIndex, TimeIndex
from kafkapy.log.log import Log
from kafkapy.log.segment import LogSegment
from kafkapy.protocol.records import build_batch

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
TEN_MIB = 10 * MIB
BASE_TIMESTAMP = 1_700_000_000_000
SMALL_VALUE = 954           # a one-record batch with a 954-byte value is exactly 1,024 bytes
LOOKUPS = 1_000


# ------------------------------------------------------------------------------ data

def big_batch(records: int = 1000, value_size: int = KIB, seed: int = 0) -> bytes:
    """One batch of ``records`` records of ``value_size`` random bytes (1,034,933 bytes for
    the default 1,000 x 1 KiB), timestamps rising by 1 ms."""
    rng = random.Random(seed)
    return build_batch([(None, rng.randbytes(value_size), [], BASE_TIMESTAMP + i)
                        for i in range(records)])


def small_batches(count: int, first_timestamp: int, seed: int = 1) -> bytearray:
    """``count`` one-record batches of exactly 1 KiB, back to back, timestamps rising by 1 ms
    from ``first_timestamp`` (offsets are assigned by the log)."""
    value = random.Random(seed).randbytes(SMALL_VALUE)
    out = bytearray()
    for i in range(count):
        out += build_batch([(None, value, [], first_timestamp + i)])
    return out


def build_partition(directory: Path, total_bytes: int, *, small: bool,
                    config: LogConfig | None = None) -> None:
    """Write a partition of up to ``total_bytes`` through ``Log.append_as_leader`` (1 MiB per
    call: one 1 MiB batch, or 1,024 batches of 1 KiB), fsync it and close it cleanly.
    With the default segment.bytes and ``total_bytes`` <= 1 GiB it is one segment."""
    config = config or LogConfig()
    log = Log.open(directory, config)
    big = bytearray(big_batch()) if not small else None
    per_chunk = MIB // KIB
    chunk_no = 0
    while True:
        if small:
            chunk = small_batches(per_chunk, BASE_TIMESTAMP + chunk_no * per_chunk)
        else:
            chunk = big
        if log.size + len(chunk) > total_bytes:
            break
        log.append_as_leader(chunk)
        chunk_no += 1
    log.flush()
    log.close()


def _big_endian(values: array) -> bytes:
    if sys.byteorder == "little":
        values.byteswap()
    return values.tobytes()


def fill_offset_index(path: Path, max_index_size: int = TEN_MIB) -> OffsetIndex:
    """A full offset index: entry i is (offset 3i, position 64i)."""
    index = OffsetIndex(path, 0, max_index_size)
    n = index.max_entries
    entries = array("i", bytes(8 * n))
    entries[0::2] = array("i", range(0, 3 * n, 3))
    entries[1::2] = array("i", range(0, 64 * n, 64))
    index.append_raw(_big_endian(entries))
    return index


def fill_time_index(path: Path, max_index_size: int = TEN_MIB) -> TimeIndex:
    """A full time index: entry i is (timestamp BASE + 7i, offset 3i)."""
    index = TimeIndex(path, 0, max_index_size)
    n = index.max_entries
    stamps = _big_endian(array("q", range(BASE_TIMESTAMP, BASE_TIMESTAMP + 7 * n, 7)))
    offsets = _big_endian(array("i", range(0, 3 * n, 3)))
    entries = bytearray(12 * n)
    for k in range(8):
        entries[k::12] = stamps[k::8]
    for k in range(4):
        entries[8 + k::12] = offsets[k::4]
    index.append_raw(bytes(entries))
    return index


def offset_targets(index: OffsetIndex, seed: int = 1) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(index.max_entries * 3) for _ in range(LOOKUPS)]


def time_targets(index: TimeIndex, seed: int = 2) -> list[int]:
    rng = random.Random(seed)
    top = BASE_TIMESTAMP + index.max_entries * 7
    return [rng.randrange(BASE_TIMESTAMP, top) for _ in range(LOOKUPS)]


def segment_targets(segment: LogSegment, seed: int = 3) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(segment.base_offset, segment.next_offset) for _ in range(LOOKUPS)]


def run_lookups(lookup: Callable[[int], object], targets: Sequence[int]) -> None:
    for t in targets:
        lookup(t)


# ---------------------------------------------------------------------------- append

def write_raw(path: Path, buf: bytes | bytearray, count: int) -> float:
    """Seconds to ``os.write`` ``buf`` ``count`` times to a new file at ``path`` (then
    removed), the way LogSegment.append writes: O_APPEND, whole buffer, retry short writes."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
    try:
        view = memoryview(buf)
        started = time.perf_counter()
        for _ in range(count):
            written = 0
            while written < len(view):
                written += os.write(fd, view[written:])
        elapsed = time.perf_counter() - started
    finally:
        os.close(fd)
        os.unlink(path)
    return elapsed


def open_fresh_log(directory: Path, config: LogConfig | None = None) -> Log:
    shutil.rmtree(directory, ignore_errors=True)
    return Log.open(directory, config or LogConfig())


def append_many(log: Log, buf: bytearray, count: int) -> float:
    """Seconds for ``count`` ``append_as_leader`` calls of ``buf``."""
    append = log.append_as_leader
    started = time.perf_counter()
    for _ in range(count):
        append(buf)
    return time.perf_counter() - started


def drop_log(log: Log) -> None:
    log.close()
    shutil.rmtree(log.dir, ignore_errors=True)


def append_rounds(directory: Path, buf: bytearray, count: int, rounds: int,
                  config: LogConfig | None = None) -> list[tuple[float, float]]:
    """(raw seconds, append seconds) per round; the sides alternate going first."""
    out = []
    for r in range(rounds):
        log = open_fresh_log(directory / "append-0", config)
        if r % 2 == 0:
            raw = write_raw(directory / "raw.bin", buf, count)
        appended = append_many(log, buf, count)
        drop_log(log)
        if r % 2 == 1:
            raw = write_raw(directory / "raw.bin", buf, count)
        out.append((raw, appended))
    return out


# -------------------------------------------------------------------------- recovery

def recover(directory: Path, config: LogConfig | None = None) -> Log:
    """Log.open after an unclean shutdown with nothing flushed: recover every segment."""
    return Log.open(directory, config or LogConfig(), had_clean_shutdown=False,
                    recovery_point=0)


def time_recovery(directory: Path, config: LogConfig | None = None) -> float:
    started = time.perf_counter()
    log = recover(directory, config)
    elapsed = time.perf_counter() - started
    log.close()
    return elapsed


# ------------------------------------------------------------------------------ report

def _median_lookup_ns(lookup: Callable[[int], object], targets: Sequence[int],
                      rounds: int = 200) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run_lookups(lookup, targets)
        times.append(time.perf_counter() - started)
    return statistics.median(times) / len(targets) * 1e9


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    ap.add_argument("--append-mib", type=int, default=1024,
                    help="~MiB appended per round (1 MiB batches; default 1024: one segment)")
    ap.add_argument("--recovery-mib", type=int, default=1024,
                    help="partition size for recovery (default 1024)")
    ap.add_argument("--dir", type=Path, default=None, help="where to make the temporary dir")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="kafkapy-log-bench-", dir=args.dir))
    try:
        _report(tmp, args.rounds, args.append_mib, args.recovery_mib * MIB)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _report(tmp: Path, rounds: int, append_mib: int, recovery_bytes: int) -> None:
    batch = bytearray(big_batch())
    count = max(1, append_mib * MIB // len(batch))
    append_rounds(tmp, batch, count, 1)                 # warm-up (page cache), discarded
    pairs = append_rounds(tmp, batch, count, rounds)
    size = count * len(batch)
    raw_mbs = statistics.median(size / r / 1e6 for r, _ in pairs)
    app_mbs = statistics.median(size / a / 1e6 for _, a in pairs)
    ratio = statistics.median(r / a for r, a in pairs)
    ratios = sorted(round(r / a, 3) for r, a in pairs)

    recovery = {}
    translate_ns = index_entries = None
    for small in (False, True):
        part = tmp / ("small-0" if small else "big-0")
        build_partition(part, recovery_bytes, small=small)
        time_recovery(part)                                 # warm-up, discarded
        times = [time_recovery(part) for _ in range(rounds)]
        nbytes = sum(p.stat().st_size for p in part.glob("*.log"))
        batches = nbytes // (KIB if small else len(batch))
        recovery[small] = (nbytes, batches, statistics.median(nbytes / t / 1e9 for t in times),
                           sorted(round(nbytes / t / 1e9, 2) for t in times))
        if small:
            log = Log.open(part, LogConfig(), had_clean_shutdown=True)
            seg = log.active_segment
            index_entries = seg.offset_index.entries
            translate_ns = _median_lookup_ns(seg.translate_offset, segment_targets(seg))
            log.close()
        shutil.rmtree(part)

    oidx = fill_offset_index(tmp / "0.index")
    tidx = fill_time_index(tmp / "0.timeindex")
    offset_ns = _median_lookup_ns(oidx.lookup, offset_targets(oidx))
    time_ns = _median_lookup_ns(tidx.lookup, time_targets(tidx))
    oidx.close()
    tidx.close()

    print(f"kafkapy log speed (issue 3): {os.cpu_count()} CPUs, temp dir {tmp.parent}, "
          f"medians of {rounds} rounds")
    print(f"append, {count} x {len(batch):,}-byte batches (1,000 x 1 KiB records) per round "
          f"= {size / 1e6:.0f} MB, fresh log, segment.bytes 1 GiB (no roll)")
    print(f"  {'raw os.write':<44} {raw_mbs:8.0f} MB/s")
    print(f"  {'Log.append_as_leader':<44} {app_mbs:8.0f} MB/s")
    print(f"  {'ratio append / raw (target >= 0.8)':<44} {ratio:8.3f}   per round {ratios}")
    print("recovery, Log.open(had_clean_shutdown=False, recovery_point=0), one segment, "
          "page cache warm")
    for small, label in ((False, "1 MiB batches"), (True, "1 KiB batches")):
        nbytes, batches, gbs, all_gbs = recovery[small]
        name = f"{label} ({nbytes / GIB:.2f} GiB, {batches:,} batches)"
        print(f"  {name:<44} {gbs:8.2f} GB/s  (target >= 1)  per round {all_gbs}")
    print("lookup, 1,000 random targets, ns per lookup (target <= 2,000)")
    print(f"  {'OffsetIndex.lookup, full 10 MiB index':<44} {offset_ns:8.0f} ns")
    print(f"  {'TimeIndex.lookup, full 10 MiB index':<44} {time_ns:8.0f} ns")
    print(f"  {'LogSegment.translate_offset':<44} {translate_ns:8.0f} ns  (the 1 KiB-batch "
          f"segment, {index_entries:,}-entry index)")


if __name__ == "__main__":
    main()
