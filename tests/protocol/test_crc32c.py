"""CRC-32C: every implementation this CPU can run, against the ``crc32c`` package.

kafkapy/_crc32c.h picks one implementation at import (``_crc32c_implementation()``, the one
``crc32c()`` runs) by CPUID alone; ``_crc32c_with(name, ...)`` runs any of the others this CPU
can run (``_crc32c_paths()``), so each is checked here, in this process. One that the CPU
cannot run is reported as skipped.

The most intricate is "sse4.2+vpclmul" (x86_64 with VPCLMULQDQ + AVX2): carry-less folding
alongside three crc32q streams for buffers of 672 bytes and more, in blocks of up to 128 steps
of 272 bytes (34,816 bytes), the last block shortened to fit and the tail (< 272 bytes) left to
the crc32q-only code. The lengths below cross every one of those edges: every length up to
4096 at 16 start alignments, every length to 14,000, every size of the last block after zero
and after one full block, every length around the first two block-to-block hand-overs, lengths
around further multiples of the block and step sizes, random lengths up to 4 MiB, all-zero and
all-0xFF data, and continuation from a random incoming CRC.
"""

from __future__ import annotations

import functools
import platform
import random
import sys
from collections.abc import Callable

import crc32c as crc32c_package
import pytest

from kafkapy import _records

ALL_PATHS = ("sse4.2+vpclmul", "sse4.2", "armv8-crc", "portable")    # in order of preference
STEP = 128 + 8 * 3 * 6            # one fold step of the ymm path: 128 folded + 3 * 6 quadwords
BLOCK = 128 * STEP
PACKAGE = crc32c_package.crc32c


@pytest.fixture(scope="module")
def view() -> memoryview:
    return memoryview(bytearray(random.Random(20240611).randbytes(4 * 1024 * 1024 + 64)))


def _functions(path: str) -> list[Callable[..., int]]:
    """The implementation `path`, and crc32c() itself where that is the one it runs."""
    fns: list[Callable[..., int]] = [functools.partial(_records._crc32c_with, path)]
    if path == _records._crc32c_implementation():
        fns.append(_records.crc32c)
    return fns


# Every path this CPU can run (which ones that is, is checked against /proc/cpuinfo below);
# a path it cannot run is not a test here, rather than a skipped one.
@pytest.mark.parametrize("path", _records._crc32c_paths())
def test_crc32c_path(path: str, view: memoryview) -> None:
    fns = _functions(path)
    rnd = random.Random(path)

    def check(chunk: memoryview | bytes, seed: int, what: object) -> None:
        expected = PACKAGE(chunk, seed)
        for fn in fns:
            assert fn(chunk, seed) == expected, (fn, what)

    # Every length 0..4096 at every alignment 0..15, each with its own incoming CRC.
    for n in range(4097):
        for start in range(16):
            seed = (n * 0x9E3779B1 + start * 0x85EBCA77) & 0xFFFFFFFF
            check(view[start:start + n], seed, (n, start))

    # Every length from there to 14,000 (one shortened block and a tail), every length around
    # the first two hand-overs from a full block to the next; alignment n % 16.
    dense = [*range(4097, 14_001), *range(BLOCK + 128 - 300, BLOCK + 128 + 3 * STEP),
             *range(2 * BLOCK + 128 - 300, 2 * BLOCK + 128 + 3 * STEP)]
    for n in dense:
        check(view[n % 16:n % 16 + n], n, n)

    # Every size of the last block (1..128 steps), after no full block and after one, with
    # tails of several sizes: each entry of the finishing constants' table.
    for full in (0, 1):
        for steps in range(1, 129):
            for tail in (0, 1, 9, STEP - 1):
                n = 128 + full * BLOCK + steps * STEP + tail
                check(view[7:7 + n], rnd.getrandbits(32), (full, steps, tail))

    # Around multiples of the block and step sizes, further out.
    edges = {k * BLOCK + 128 + d for k in range(3, 120, 9)
             for d in (-STEP - 1, -STEP, -2, -1, 0, 1, 2, STEP - 1, STEP, STEP + 1)}
    edges |= {k * STEP + 128 + d for k in range(2, 200, 7) for d in (-1, 0, 1)}
    for n in sorted(edges):
        start = n % 13
        check(view[start:start + n], 0xFFFFFFFF - n, n)

    # Random lengths up to 4 MiB, random alignment and incoming CRC.
    for n in [1 << 16, 1 << 20, 4 << 20] + [rnd.randrange(4 << 20) for _ in range(12)]:
        start = rnd.randrange(64) if n < 4 << 20 else rnd.randrange(16)
        check(view[start:start + n], rnd.getrandbits(32), n)

    # All-zero and all-0xFF data: no stray bits from the folding.
    for fill in (b"\x00", b"\xff"):
        data = memoryview(fill * (1 << 20))
        for n in [*range(0, 9000, 97), 1 << 16, 1 << 20]:
            for seed in (0, 0xFFFFFFFF, 0x12345678):
                check(data[:n], seed, (fill, n, seed))

    # bytes, bytearray and memoryview give the same answer; continuation splits anywhere.
    for n in (0, 1, 671, 672, 673, 4096, BLOCK + 128, BLOCK + 128 + STEP, 65_536, 1 << 20):
        chunk = bytes(view[3:3 + n])
        expected = PACKAGE(chunk)
        for fn in fns:
            assert fn(chunk) == fn(bytearray(chunk)) == fn(memoryview(chunk)) == expected, n
            for cut in {0, n // 3, n // 2, max(n - 7, 0), n}:
                assert fn(chunk[cut:], fn(chunk[:cut])) == expected, (n, cut)


def test_crc32c_paths_reported() -> None:
    paths = _records._crc32c_paths()
    assert paths[0] == _records._crc32c_implementation()
    assert "portable" in paths
    assert list(paths) == [p for p in ALL_PATHS if p in paths]      # best first, no repeats


@pytest.mark.skipif(not (sys.platform == "linux" and platform.machine() == "x86_64"),
                    reason="reads the CPU flags the Linux kernel reports for x86_64")
def test_crc32c_choice_follows_cpu_flags() -> None:
    """The choice made from CPUID and XGETBV agrees with the kernel's view of the CPU (the
    kernel leaves avx2 out of its flags too when it does not save the ymm registers)."""
    with open("/proc/cpuinfo") as f:
        flags = next(line for line in f if line.startswith("flags")).split(":", 1)[1].split()
    wanted = "portable"
    if "sse4_2" in flags:
        wanted = "sse4.2"
        if {"pclmulqdq", "avx", "avx2", "vpclmulqdq"} <= set(flags):
            wanted = "sse4.2+vpclmul"
    assert _records._crc32c_implementation() == wanted


def test_crc32c_with_rejects_other_names() -> None:
    for name in [*(p for p in ALL_PATHS if p not in _records._crc32c_paths()), "pclmul", ""]:
        with pytest.raises(ValueError, match="no CRC-32C implementation"):
            _records._crc32c_with(name, b"123456789")
    with pytest.raises(TypeError):
        _records._crc32c_with("portable", "not bytes")  # type: ignore[arg-type]
    assert _records._crc32c_with("portable", b"123456789") == 0xE3069283
