"""Log speed (issue 3), reported and never asserted:

- append: ``Log.append_as_leader`` of ~1 MiB batches (1,000 x 1 KiB records) against raw
  sequential ``os.write`` of the same bytes to a file in the same directory, interleaved round
  by round; target >= 0.8 of raw. One round = one fresh log filled to one full 1 GiB segment
  (default segment.bytes, no roll) and one fresh raw file of the same size;
- recovery: ``Log.open(had_clean_shutdown=False, recovery_point=0)`` of a 1 GiB one-segment
  partition of 1 MiB batches, and of 1 KiB batches (the per-batch cost), page cache warm;
  target >= 1 GB/s;
- lookup on a full 10 MiB index (``OffsetIndex.lookup``, ``TimeIndex.lookup``) and
  ``LogSegment.translate_offset`` on the 1 KiB-batch segment; target <= 2 us per lookup.

Throughputs go to ``extra_info`` (``bytes`` for benchmarks/report.py, plus MB/s, GB/s and the
append/raw ratio computed from the medians). With ``--benchmark-disable`` (or ``--skip``)
everything is scaled down (MiB instead of GiB) so that collecting this file stays fast. The
partitions are built once per session in a temporary directory that is removed afterwards.

One command for the summary table (same measurements, no pytest):

    PYTHONPATH=. python benchmarks/test_log_bench.py      # = benchmarks/log_harness.py
"""

from __future__ import annotations

import shutil
import statistics
import sys
from pathlib import Path

import pytest

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.log_harness import (
    GIB,
    MIB,
    TEN_MIB,
    append_many,
    append_rounds,
    big_batch,
    build_partition,
    drop_log,
    fill_offset_index,
    fill_time_index,
    offset_targets,
    open_fresh_log,
    recover,
    run_lookups,
    segment_targets,
    time_targets,
    write_raw,
)
from kafkapy.log.config import LogConfig
from kafkapy.log.log import Log

LOOKUP_GROUP = "log: lookup, 1000 random targets (us total = ns each)"


# --------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="session")
def full_size(request) -> bool:
    """Real sizes only when the benchmarks will be timed."""
    cfg = request.config
    return not (cfg.getoption("benchmark_disable", False)
                or cfg.getoption("benchmark_skip", False))


@pytest.fixture(scope="session")
def bench_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("log-bench")
    yield path
    shutil.rmtree(path, ignore_errors=True)     # GiBs: do not leave them to pytest's basetemp


def _partition(bench_dir: Path, full_size: bool, small: bool):
    path = bench_dir / ("small-batches-0" if small else "big-batches-0")
    build_partition(path, GIB if full_size else 4 * MIB, small=small)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def big_batch_partition(bench_dir, full_size):
    """One segment of 1 MiB batches (1,037 of them at full size)."""
    yield from _partition(bench_dir, full_size, small=False)


@pytest.fixture(scope="session")
def small_batch_partition(bench_dir, full_size):
    """One segment of 1 KiB batches (1,048,576 of them at full size)."""
    yield from _partition(bench_dir, full_size, small=True)


@pytest.fixture(scope="module")
def offset_index(tmp_path_factory):
    index = fill_offset_index(tmp_path_factory.mktemp("bench") / "0.index", TEN_MIB)
    yield index
    index.close()
    index.path.unlink()


@pytest.fixture(scope="module")
def time_index(tmp_path_factory):
    index = fill_time_index(tmp_path_factory.mktemp("bench") / "0.timeindex", TEN_MIB)
    yield index
    index.close()
    index.path.unlink()


# ------------------------------------------------------------------------------ lookup

def test_offset_index_lookup(benchmark, offset_index):
    assert offset_index.is_full
    benchmark.group = LOOKUP_GROUP
    benchmark.extra_info["entries"] = offset_index.entries
    benchmark(run_lookups, offset_index.lookup, offset_targets(offset_index))


def test_time_index_lookup(benchmark, time_index):
    assert time_index.is_full
    benchmark.group = LOOKUP_GROUP
    benchmark.extra_info["entries"] = time_index.entries
    benchmark(run_lookups, time_index.lookup, time_targets(time_index))


def test_segment_translate_offset(benchmark, small_batch_partition):
    """Index lookup plus the forward scan of batch headers from the indexed position (one
    ``pread`` and the compiled ``find_batch``), on the segment of 1 KiB batches."""
    log = Log.open(small_batch_partition, LogConfig(), had_clean_shutdown=True)
    try:
        seg = log.active_segment
        benchmark.group = LOOKUP_GROUP
        benchmark.extra_info["entries"] = seg.offset_index.entries
        benchmark.extra_info["segment_bytes"] = seg.size
        benchmark(run_lookups, seg.translate_offset, segment_targets(seg))
    finally:
        log.close()


# ---------------------------------------------------------------------------- recovery

@pytest.mark.parametrize("batches", ["1MiB-batches", "1KiB-batches"])
def test_recovery(benchmark, request, full_size, batches):
    path = request.getfixturevalue("small_batch_partition" if batches == "1KiB-batches"
                                   else "big_batch_partition")
    size = sum(p.stat().st_size for p in path.glob("*.log"))
    opened: list[Log] = []

    def run() -> None:
        opened.append(recover(path))

    def close(*_args) -> None:
        while opened:
            opened.pop().close()

    benchmark.group = "log: recovery, Log.open unclean, one segment, page cache warm"
    benchmark.extra_info["bytes"] = size
    try:
        benchmark.pedantic(run, teardown=close, rounds=5 if full_size else 1,
                           warmup_rounds=1 if full_size else 0)
        log = opened[-1] if opened else recover(path)
        opened.append(log)
        assert len(log.segments) == 1 and log.size == size
        benchmark.extra_info["batches"] = log.log_end_offset if batches == "1KiB-batches" \
            else log.log_end_offset // 1000
    finally:
        close()
    if benchmark.enabled:
        benchmark.extra_info["gb_per_s"] = round(size / benchmark.stats.stats.median / 1e9, 2)


# ------------------------------------------------------------------------------ append

def test_append_vs_raw_write(benchmark, bench_dir, full_size):
    """Each pedantic round times one fresh log filled with ``count`` appends of the same
    ~1 MiB bytearray (what a broker does with the request buffer it owns); the raw write of
    the same bytes runs in the round's setup (even rounds) or teardown (odd rounds), so the two
    alternate, and the ratio is taken per round."""
    batch = bytearray(big_batch())
    count = GIB // len(batch) if full_size else 4       # 1,037 batches: one full segment
    rounds = 9 if full_size else 1
    raw_path = bench_dir / "raw.bin"
    raw_times: list[float] = []
    append_times: list[float] = []
    state: dict = {"round": 0, "log": None}

    def setup():
        log = state["log"] = open_fresh_log(bench_dir / "append-0")
        if state["round"] % 2 == 0:
            raw_times.append(write_raw(raw_path, batch, count))
        return (log,), {}

    def target(log: Log) -> None:
        append_times.append(append_many(log, batch, count))

    def teardown(log: Log) -> None:
        drop_log(log)
        state["log"] = None
        if state["round"] % 2 == 1:
            raw_times.append(write_raw(raw_path, batch, count))
        state["round"] += 1

    if full_size:
        append_rounds(bench_dir, batch, count, 1)   # warm-up (page cache), discarded
    benchmark.group = "log: append ~1 MiB batches vs raw os.write, same directory"
    benchmark.extra_info["bytes"] = count * len(batch)
    try:
        benchmark.pedantic(target, setup=setup, teardown=teardown, rounds=rounds)
    finally:
        if state["log"] is not None:
            drop_log(state["log"])
    if not benchmark.enabled:
        return
    size = count * len(batch)
    ratios = [r / a for r, a in zip(raw_times, append_times, strict=True)]
    info = benchmark.extra_info
    info["batches_per_round"] = count
    info["raw_mb_per_s"] = round(statistics.median(size / r for r in raw_times) / 1e6)
    info["append_mb_per_s"] = round(statistics.median(size / a for a in append_times) / 1e6)
    info["ratio_append_to_raw"] = round(statistics.median(ratios), 3)
    info["ratios"] = [round(x, 3) for x in ratios]


if __name__ == "__main__":
    from benchmarks.log_harness import main

    main()
