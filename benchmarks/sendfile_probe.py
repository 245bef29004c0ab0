"""How fast this machine moves a fetch answer over loopback, with no broker: ``sendfile`` from
the page cache against ``send`` from memory (issue 22's raw fetch reference).

    PYTHONPATH=. python -m benchmarks.sendfile_probe [--rounds 5] [--seconds 3]

``broker_bench``'s raw fetch target is ">= 70% of loopback", the loopback being the ceiling
server answering every Fetch with one canned ~1 MiB answer *from memory*. A broker answers
from its log: kafkapy ``sendfile``s the segment's bytes (page cache to socket, no copy in
user space), as Kafka does. This probe separates what the kernel's two ways cost here.

One loopback TCP connection in one process: a receiving thread reads 1 MiB at a time into
one buffer (``recv_into`` with ``MSG_WAITALL``, as ``load_generator``'s fetch client); the
sending side writes 1 MiB answers for ``--seconds`` s, in one of three ways, the ways
interleaved round by round:

- ``memory``: the same 1 MiB ``bytes`` every time (the ceiling server's canned answer);
- ``sendfile``: 1 MiB after 1 MiB of a 256 MiB file read once before (in the page cache),
  ``os.sendfile`` (kafkapy's way);
- ``pread+send``: the same file, each 1 MiB ``pread`` into one buffer and then sent.

Prints MB/s per round and the medians, and the machine's other CPU (``/proc/stat`` busy time
less this process's) beside each; a round under other load says little.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import tempfile
import threading
import time

MIB = 1 << 20
FILE_BYTES = 256 * MIB


def _busy_seconds() -> float:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def one_round(mode: str, fd: int, answer: bytes, seconds: float) -> tuple[float, float]:
    """MB/s received, and the other processes' CPU in cores, for one way of sending."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    receiver = socket.create_connection(listener.getsockname())
    sender, _ = listener.accept()
    listener.close()
    received = [0]

    def receive() -> None:
        view = memoryview(bytearray(MIB))
        while n := receiver.recv_into(view, MIB, socket.MSG_WAITALL):
            received[0] += n

    thread = threading.Thread(target=receive)
    thread.start()
    buffer = bytearray(MIB)
    buffer_view = memoryview(buffer)
    answer_view = memoryview(answer)
    offset = 0
    busy0, cpu0, t0 = _busy_seconds(), time.process_time(), time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        sent = 0
        if mode == "pread+send":
            os.preadv(fd, [buffer], offset)
        while sent < MIB:
            if mode == "sendfile":
                sent += os.sendfile(sender.fileno(), fd, offset + sent, MIB - sent)
            elif mode == "pread+send":
                sent += sender.send(buffer_view[sent:])
            else:
                sent += sender.send(answer_view[sent:])
        offset = (offset + MIB) % FILE_BYTES
    sender.close()
    thread.join()
    receiver.close()
    wall = time.perf_counter() - t0
    other = (_busy_seconds() - busy0) - (time.process_time() - cpu0)
    return received[0] / wall / 1e6, max(other, 0.0) / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    modes = ("memory", "sendfile", "pread+send")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "segment.log")
        with open(path, "wb") as f:
            for _ in range(FILE_BYTES // MIB):
                f.write(os.urandom(MIB))
        fd = os.open(path, os.O_RDONLY)
        try:
            for offset in range(0, FILE_BYTES, 16 * MIB):     # into the page cache
                os.pread(fd, 16 * MIB, offset)
            answer = os.urandom(MIB)
            rates: dict[str, list[float]] = {m: [] for m in modes}
            for r in range(args.rounds):
                order = modes[r % 3:] + modes[:r % 3]
                for mode in order:
                    rate, other = one_round(mode, fd, answer, args.seconds)
                    rates[mode].append(rate)
                    print(f"round {r} {mode:10s} {rate:8,.0f} MB/s  other CPU {other:.2f} cores",
                          flush=True)
        finally:
            os.close(fd)
    memory = statistics.median(rates["memory"])
    for mode in modes:
        med = statistics.median(rates[mode])
        print(f"{mode:10s} median {med:8,.0f} MB/s (min {min(rates[mode]):,.0f}, max "
              f"{max(rates[mode]):,.0f}), {med / memory:.2f}x memory")


if __name__ == "__main__":
    main()
