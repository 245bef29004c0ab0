"""The writer process of tests/log/test_crash.py: appends to a Log until it is killed.

Run as ``python crash_child.py <partition dir> <recovery point> <leader epoch> <seed>
<flush every>`` with the project on PYTHONPATH. It opens the log as after an unclean shutdown,
then appends batches of 1-50 records forever (sizes, codecs from ``seed``); every record's
key, value and timestamp are functions of its offset (below), so the parent can check any
surviving record. Lines on stdout, each written with one flushed write:

    opening                   before Log.open (recovery runs next)
    open <LEO> <recovery point>
    ack <first offset> <last offset>    after append_as_leader returned: the acknowledgement
    flush <recovery point>    after log.flush() (every <flush every> appends; 0: never)
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from kafkapy.log.config import LogConfig

# Small segments (rolls every ~30 batches) and a small index interval (many index entries).
CONFIG = LogConfig(segment_bytes=64 * 1024, index_interval_bytes=512, segment_index_bytes=4096)
T0 = 1_700_000_000_000
CODECS = (0, 0, 0, 1, 2, 3, 4)      # none, gzip, snappy, lz4, zstd


def key_for(offset: int) -> bytes:
    return b"k%d" % offset


def value_for(offset: int) -> bytes:
    """8 to 200 bytes that name the offset (repetitive, so that compression works)."""
    return (b"<%d>" % offset * 40)[: 8 + offset * 7919 % 193]


def timestamp_for(offset: int) -> int:
    """Rising overall but not record by record (the time index keeps the running maximum)."""
    return T0 + offset * 10 - offset % 7 * 25


def records_for(first: int, count: int) -> list[tuple[bytes, bytes, list[object], int]]:
    return [(key_for(o), value_for(o), [], timestamp_for(o)) for o in range(first, first + count)]


def main() -> None:
    from kafkapy.log.log import Log
    from kafkapy.protocol.records import build_batch

    directory, recovery_point, epoch, seed, flush_every = sys.argv[1:6]
    out = sys.stdout
    out.write("opening\n")
    out.flush()
    log = Log.open(Path(directory), CONFIG, recovery_point=int(recovery_point),
                   had_clean_shutdown=False)
    out.write(f"open {log.log_end_offset} {log.recovery_point}\n")
    out.flush()
    rng = random.Random(int(seed))
    every = int(flush_every)
    appends = 0
    while True:
        first = log.log_end_offset
        batch = build_batch(records_for(first, rng.randint(1, 50)),
                            compression=rng.choice(CODECS))
        info = log.append_as_leader(bytearray(batch), leader_epoch=int(epoch))
        out.write(f"ack {info.first_offset} {info.last_offset}\n")
        out.flush()
        appends += 1
        if every and appends % every == 0:
            log.flush()
            out.write(f"flush {log.recovery_point}\n")
            out.flush()


if __name__ == "__main__":
    main()
