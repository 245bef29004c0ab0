"""What the first write into a new index costs: a file preallocated sparse to
``segment.index.bytes`` (10 MiB, as Kafka and kafkapy's OffsetIndex/TimeIndex do), mapped
shared, one entry written at its start, then one a few pages on.

    PYTHONPATH=. python benchmarks/index_map_probe.py [--size-mib 10] [--rounds 5] [--dir /tmp]

Three ways, interleaved per round, each on a fresh file in ``--dir`` (the file system the logs
live on matters): ``mmap.mmap`` with no advice, ``mmap.mmap`` with ``MADV_RANDOM``, and
``kafkapy._log.FileMap`` (what the indexes use). Prints each round's wall and CPU
milliseconds of the first write (a page fault, taken with the GIL held) and the medians.
No broker: this is the kernel's cost, measured where the broker would pay it.
"""

from __future__ import annotations

import argparse
import mmap
import os
import statistics
import tempfile
import time
from collections.abc import Callable

from kafkapy._log import FileMap


def _mmap(advice: int | None) -> Callable[[int, int], object]:
    def open_map(fd: int, size: int) -> object:
        m = mmap.mmap(fd, size)
        if advice is not None:
            m.madvise(advice)
        return m
    return open_map


WAYS: dict[str, Callable[[int, int], object]] = {
    "mmap, no advice": _mmap(None),
    "mmap, MADV_RANDOM": _mmap(mmap.MADV_RANDOM),
    "FileMap (the indexes)": FileMap,
}


def first_write(directory: str, size: int, open_map: Callable[[int, int], object]
                ) -> tuple[float, float]:
    with tempfile.NamedTemporaryFile(dir=directory, suffix=".index") as f:
        os.ftruncate(f.fileno(), size)
        mapped = open_map(f.fileno(), size)
        view = memoryview(mapped)        # type: ignore[arg-type]
        wall, cpu = time.perf_counter(), time.process_time()
        view[0:8] = b"\x00\x00\x00\x05\x00\x00\x10\x00"
        view[3 * 4096:3 * 4096 + 8] = b"\x00\x00\x00\x09\x00\x00\x20\x00"
        out = (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3
        view.release()
        mapped.close()                   # type: ignore[attr-defined]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    size = int(args.size_mib * 1024 * 1024)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in WAYS}
    for _ in range(args.rounds):
        for name, open_map in WAYS.items():
            results[name].append(first_write(args.dir, size, open_map))
    print(f"first write into a new {args.size_mib:g} MiB index in {args.dir} "
          f"({os.uname().sysname} {os.uname().release}), {args.rounds} rounds:")
    for name, rounds in results.items():
        walls = [w for w, _ in rounds]
        cpus = [c for _, c in rounds]
        print(f"  {name:24s} median {statistics.median(walls):8.3f} ms wall, "
              f"{statistics.median(cpus):8.3f} ms CPU; rounds (wall) "
              + ", ".join(f"{w:.3f}" for w in walls))


if __name__ == "__main__":
    main()
