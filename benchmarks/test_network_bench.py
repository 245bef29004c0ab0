"""Produce-path speed of the compiled pieces a request goes through before the log
(pytest-benchmark; ``pytest benchmarks/test_network_bench.py``).

Reported, never asserted (issue 7's micro-benchmarks):
- frame splitting (``FrameSplitter.feed``): 1 MiB received at once holding 16 produce-sized
  frames of 64 KiB, and holding 10,000 frames of 100 bytes (the per-frame cost);
- record-batch validation and offset assignment (``assign_offsets(verify=True)``, the log's
  leader append in one compiled pass: framing, magic, CRC-32C, record count) on a 64 x 1 KiB
  batch, the raw load generator's batch.

Throughputs go to ``extra_info`` (``bytes`` for benchmarks/report.py, plus ``gb_per_s`` or
``frames_per_s`` computed from the median).
"""

from __future__ import annotations

import os
import struct

from kafkapy._frames import FrameSplitter
from kafkapy.protocol.records import assign_offsets, build_batch

MIB = 1 << 20


def _median(benchmark) -> float:
    return benchmark.stats.stats.median


def _frames(count: int, size: int) -> bytes:
    body = os.urandom(size)
    return b"".join(struct.pack(">i", size) + body for _ in range(count))


def _split(data: memoryview) -> int:
    return len(FrameSplitter().feed(data))


def test_split_64k_frames(benchmark):
    data = memoryview(_frames(16, 65536))
    benchmark.group = "network: FrameSplitter 16 x 64 KiB frames"
    benchmark.extra_info["bytes"] = len(data)
    assert benchmark(_split, data) == 16
    benchmark.extra_info["gb_per_s"] = round(len(data) / _median(benchmark) / 1e9, 2)


def test_split_small_frames(benchmark):
    data = memoryview(_frames(10_000, 96))
    benchmark.group = "network: FrameSplitter 10,000 x 100 B frames"
    benchmark.extra_info["bytes"] = len(data)
    assert benchmark(_split, data) == 10_000
    benchmark.extra_info["frames_per_s"] = round(10_000 / _median(benchmark))


def test_validate_and_assign_64k_batch(benchmark):
    batch = bytearray(build_batch([(None, os.urandom(1024), [], 1_700_000_000_000 + i)
                                   for i in range(64)]))
    benchmark.group = "records: assign_offsets(verify=True), 64 x 1 KiB batch"
    benchmark.extra_info["bytes"] = len(batch)
    result = benchmark(assign_offsets, batch, 1000, verify=True)
    assert result.next_offset == 1064 and result.records == 64
    benchmark.extra_info["gb_per_s"] = round(len(batch) / _median(benchmark) / 1e9, 2)
