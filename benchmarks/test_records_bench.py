"""Record-batch speed (pytest-benchmark; ``pytest benchmarks/test_records_bench.py``).

Reported, never asserted (targets from issue 2):
- CRC-32C of 1 MiB, kafkapy against the ``crc32c`` package on the same buffer (GB/s);
- ``scan_batches`` over 1 MiB in 100 batches with the CRC of every batch: >= 1 GB/s;
- ``BatchHeader.records()`` of one 1,000-record batch (records/s).

Throughputs go to ``extra_info`` (``bytes`` for benchmarks/report.py, plus ``gb_per_s`` or
``records_per_s`` computed from the median).
"""

from __future__ import annotations

import os

import crc32c as crc32c_package
import pytest

from kafkapy.protocol.records import BatchHeader, build_batch, crc32c, scan_batches

MIB = 1 << 20


def _median(benchmark) -> float:
    return benchmark.stats.stats.median


@pytest.mark.parametrize("impl", ["kafkapy", "crc32c-package"])
def test_crc32c_1mib(benchmark, impl):
    data = os.urandom(MIB)
    benchmark.group = "records: crc32c 1 MiB"
    benchmark.extra_info["bytes"] = len(data)
    fn = crc32c if impl == "kafkapy" else crc32c_package.crc32c
    assert benchmark(fn, data) == crc32c_package.crc32c(data)
    benchmark.extra_info["gb_per_s"] = round(len(data) / _median(benchmark) / 1e9, 2)


def _hundred_batches() -> bytes:
    batches = []
    for b in range(100):
        # ~10 KiB per batch: 10 records of ~1 KiB of incompressible bytes.
        records = [(f"key-{b}-{i}".encode(), os.urandom(1040), [], 1_700_000_000_000 + i)
                   for i in range(10)]
        batches.append(build_batch(records, base_offset=10 * b))
    return b"".join(batches)


def _scan(buf: bytes) -> int:
    scan = scan_batches(buf)
    assert scan.error is None
    return len(scan.batches)


def test_scan_batches_1mib_100_batches(benchmark):
    buf = _hundred_batches()
    assert len(buf) >= MIB
    benchmark.group = "records: scan_batches 1 MiB / 100 batches, CRC on"
    benchmark.extra_info["bytes"] = len(buf)
    assert benchmark(_scan, buf) == 100
    benchmark.extra_info["gb_per_s"] = round(len(buf) / _median(benchmark) / 1e9, 2)


@pytest.mark.parametrize("headers", [0, 2])
def test_records_1000(benchmark, headers):
    raw = build_batch([(f"key-{i}".encode(), b"v" * 100,
                        [(f"h{j}", b"x" * 8) for j in range(headers)], 1_700_000_000_000 + i)
                       for i in range(1000)])
    header = BatchHeader(raw)
    benchmark.group = "records: records() of a 1000-record batch"
    benchmark.extra_info["bytes"] = len(raw)
    assert len(benchmark(header.records)) == 1000
    benchmark.extra_info["records_per_s"] = round(1000 / _median(benchmark))
