"""Log speed (issue 3): index lookup on a full 10 MiB index; target <= 2 us per lookup.

Each benchmark does 1,000 lookups at random targets through the public index API (compiled
binary search plus the Python call and result object), so the median in microseconds is the
time of one lookup in nanoseconds.
"""

from __future__ import annotations

import random

import pytest

from kafkapy.log.index import OffsetIndex, TimeIndex

TEN_MIB = 10 * 1024 * 1024
LOOKUPS = 1_000


@pytest.fixture(scope="module")
def offset_index(tmp_path_factory):
    index = OffsetIndex(tmp_path_factory.mktemp("bench") / "0.index", 0, TEN_MIB)
    for i in range(index.max_entries):
        index.append(i * 3, i * 64)
    yield index
    index.close()


@pytest.fixture(scope="module")
def time_index(tmp_path_factory):
    index = TimeIndex(tmp_path_factory.mktemp("bench") / "0.timeindex", 0, TEN_MIB)
    for i in range(index.max_entries):
        index.maybe_append(1_700_000_000_000 + i * 7, i * 3)
    yield index
    index.close()


def _run(lookup, targets):
    for t in targets:
        lookup(t)


def test_offset_index_lookup(benchmark, offset_index):
    assert offset_index.is_full
    rng = random.Random(1)
    targets = [rng.randrange(offset_index.max_entries * 3) for _ in range(LOOKUPS)]
    benchmark.group = "index lookup, full 10 MiB index, 1000 lookups (us total = ns each)"
    benchmark(_run, offset_index.lookup, targets)


def test_time_index_lookup(benchmark, time_index):
    assert time_index.is_full
    rng = random.Random(2)
    top = 1_700_000_000_000 + time_index.max_entries * 7
    targets = [rng.randrange(1_700_000_000_000, top) for _ in range(LOOKUPS)]
    benchmark.group = "index lookup, full 10 MiB index, 1000 lookups (us total = ns each)"
    benchmark(_run, time_index.lookup, targets)
