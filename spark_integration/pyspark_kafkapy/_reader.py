"""Reading one offset range of a partition's segments into decoded column buffers.

Runs in Spark's executor Python workers (``DataSourceReader.read``), one range per task.
Theory of operation:

- The segment holding the range's start is found by listing the partition folder again
  (segments may have rolled, been compacted or deleted since planning); the ``.index`` gives
  the position to start at; later segments are read from byte 0.
- The ``.log`` is read with ``pread`` in chunks into one reusable buffer, and every chunk goes
  through ``kafkapy._arrow.RecordBatchDecoder``, which keeps the records of
  ``[start, end)`` (and drops aborted transactions), copying keys, values and headers into
  Arrow buffers. A batch cut by the end of a chunk is read again from its start with the next
  chunk; the buffer grows for a batch larger than itself. Every ~64k rows the buffers are
  handed over (``DecodedColumns``) and turned into a RecordBatch by the caller.
- The range's end is at most the high watermark the planner read, and every byte below it
  was written before the broker advanced it: a read never waits, never sees a half-written
  batch it would use (one at the end of the active segment lies beyond the end), and stops
  exactly at the end.

Data loss and corruption (failOnDataLoss, true by default, as in Spark):

- the start (or a later segment) is no longer there (retention deleted it between planning
  and reading): OffsetOutOfRangeError naming the lost offsets; with failOnDataLoss=false the
  read goes on from the first offset still present;
- a corrupt batch (CRC, framing, records, decompression) raises CorruptMessageError naming
  the segment file and the byte position; with failOnDataLoss=false the batch is skipped if
  its framing is sound, else the rest of that segment;
- the log ends before the range's end (a segment cut short, or the high watermark checkpoint
  ahead of the files): CorruptMessageError naming the file and the position where it ends;
  with failOnDataLoss=false the read ends there.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Generator, Iterator
from pathlib import Path

from kafkapy._arrow import (
    STATUS_CORRUPT,
    STATUS_DONE,
    STATUS_END_OF_BUFFER,
    STATUS_FULL,
    STATUS_UNSUPPORTED,
    DecodedColumns,
    RecordBatchDecoder,
)
from kafkapy.errors import (
    CorruptMessageError,
    OffsetOutOfRangeError,
    UnsupportedForMessageFormatError,
)
from pyspark_kafkapy import _logdir
from pyspark_kafkapy._planner import OffsetRange

__all__ = ["BATCH_BYTES", "BATCH_ROWS", "CHUNK", "read_columns"]

CHUNK = 8 << 20          # bytes read from a segment at a time
BATCH_ROWS = 65536       # rows per Arrow batch: 32k-64k is fastest through Spark
BATCH_BYTES = 64 << 20   # ... unless the keys, values and headers reach this first
_LISTING_RETRIES = 100   # segments deleted under us, in a row, before giving up
_HINT = " Set failOnDataLoss=false to skip it."

# How the read of one segment ended.
_EOF = 0          # the whole segment was used
_DONE = 1         # the range's end was reached
_SKIP = 2         # the rest of the segment was skipped (failOnDataLoss=false)


def read_columns(rng: OffsetRange, columns: int, *, fail_on_data_loss: bool = True,
                 verify_crc: bool = True, batch_rows: int = BATCH_ROWS,
                 batch_bytes: int = BATCH_BYTES, chunk: int = CHUNK
                 ) -> Iterator[DecodedColumns]:
    """The records of ``rng`` as decoded column buffers (``columns``: ``COL_*`` flags of
    kafkapy._arrow), at most ``batch_rows`` rows each but for one large Kafka batch.
    Raises as the module doc says."""
    pdir = Path(rng.directory)
    decoder = RecordBatchDecoder(columns, rng.start, rng.end, verify_crc=verify_crc,
                                 aborted=rng.aborted)
    buf = bytearray(chunk)
    offset = rng.start            # the next offset wanted
    after: int | None = None      # base offset of the segment read last
    retries = 0
    while offset < rng.end and decoder.next_offset < rng.end:
        segments = _logdir.list_segments(pdir)
        if after is None:
            i = bisect.bisect_right(segments, offset) - 1
            if i < 0:
                gone_to = segments[0] if segments else rng.end
                if fail_on_data_loss:
                    raise OffsetOutOfRangeError(
                        f"{rng.topic}-{rng.partition}: offsets [{offset}, "
                        f"{min(gone_to, rng.end)}) are no longer in {pdir} (deleted since "
                        f"the read was planned).{_HINT}")
                if not segments:
                    break
                i = 0
        else:
            i = bisect.bisect_right(segments, after)
            if i == len(segments):
                # Everything below the end was written before the HW was checkpointed, so
                # its segment was there when listed: the log is shorter than the HW says.
                at = max(offset, decoder.next_offset)
                if fail_on_data_loss:
                    raise CorruptMessageError(
                        f"{rng.topic}-{rng.partition}: the log in {pdir} ends at offset {at} "
                        f"(end of {_logdir.segment_path(pdir, after)}), below the high "
                        f"watermark {rng.end}: records [{at}, {rng.end}) are missing.{_HINT}")
                break
        base = segments[i]
        if base >= rng.end:
            break
        path = _logdir.segment_path(pdir, base)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            retries += 1
            if retries > _LISTING_RETRIES:
                raise
            continue              # deleted or replaced since listed: list again
        retries = 0
        try:
            size = os.fstat(fd).st_size
            position = 0
            if after is None and base < offset:
                position = _logdir.index_position(fd, pdir, base, offset, size)
            ended = yield from _read_segment(fd, path, position, decoder, buf, rng,
                                             fail_on_data_loss, batch_rows, batch_bytes)
        finally:
            os.close(fd)
        if ended == _DONE:
            break
        after = base
        offset = max(offset, base)
    if decoder.rows:
        yield decoder.take()


def _read_segment(fd: int, path: Path, position: int, decoder: RecordBatchDecoder,
                  buf: bytearray, rng: OffsetRange, fail_on_data_loss: bool,
                  batch_rows: int, batch_bytes: int
                  ) -> Generator[DecodedColumns, None, int]:
    """Yield the columns of one segment from ``position``; return how it ended (_EOF,
    _DONE or _SKIP)."""
    view = memoryview(buf)
    file_pos = position
    while True:
        n = os.preadv(fd, [view], file_pos)
        _logdir.bytes_read.total += n
        if n == 0:
            return _EOF
        data = view[:n]
        p = 0
        while True:
            status, p, size, message = decoder.decode(data, p, batch_rows, batch_bytes)
            if status == STATUS_FULL:
                yield decoder.take()
                continue
            if status == STATUS_CORRUPT:
                if fail_on_data_loss:
                    raise CorruptMessageError(
                        f"{path}: record batch at byte {file_pos + p}: {message}.{_HINT}")
                if size > 0:
                    p += size
                    continue
                return _SKIP
            if status == STATUS_UNSUPPORTED:
                raise UnsupportedForMessageFormatError(
                    f"{path}: message set at byte {file_pos + p}: {message}")
            break
        if status == STATUS_DONE:
            return _DONE
        assert status == STATUS_END_OF_BUFFER
        file_pos += p
        if p == n:
            continue
        # An incomplete batch at file_pos: cut by the chunk, or by the end of the file.
        rest = data[p:]
        if n == len(buf):
            if p > 0:
                continue          # read on from its start
            need = int.from_bytes(rest[8:12], "big", signed=True) + 12
            if file_pos + need <= os.fstat(fd).st_size:
                # One batch larger than the buffer: grow the buffer to it.
                rest.release()
                data.release()
                view.release()
                buf.extend(bytes(need - len(buf)))
                view = memoryview(buf)
                continue
        if len(rest) >= 8 and int.from_bytes(rest[0:8], "big", signed=True) >= rng.end:
            return _DONE          # a batch past the range, still being written
        if fail_on_data_loss:
            raise CorruptMessageError(
                f"{path}: record batch at byte {file_pos} is cut off: the file ends at byte "
                f"{os.fstat(fd).st_size}, below the high watermark {rng.end}.{_HINT}")
        return _SKIP
