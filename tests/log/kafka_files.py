"""An independent reader of Kafka's log files for the tests: struct and the crc32c package,
never kafkapy's own code.

The layouts read here (all integers big-endian, as Kafka writes them):

``.log``: record batches (magic 2) back to back, each a 61-byte header then its records::

    @0  baseOffset            int64
    @8  batchLength           int32   bytes after this field (the batch is 12 + batchLength)
    @12 partitionLeaderEpoch  int32
    @16 magic                 int8    2
    @17 crc                   uint32  CRC-32C (Castagnoli) of bytes @21 to the batch end
    @21 attributes            int16   bits 0-2: compression codec (0 none, 1 gzip,
                                      2 snappy, 3 lz4, 4 zstd)
    @23 lastOffsetDelta       int32   last offset = baseOffset + lastOffsetDelta
    @27 baseTimestamp         int64
    @35 maxTimestamp          int64
    @43 producerId            int64
    @51 producerEpoch         int16
    @53 baseSequence          int32
    @57 recordCount           int32
    @61 records

so batchLength is at least 49 (a header without records).

``.index``: 8-byte entries ``(relative offset int32, position int32)``: the offset relative to
the segment's base offset, and the byte position in the ``.log`` of the batch holding it.

``.timeindex``: 12-byte entries ``(timestamp int64, relative offset int32)``.

An active segment's index files are preallocated to ``segment.index.bytes`` (whole entries)
with a zero tail, and trimmed to their entries when the segment is rolled or closed.

Which entries Kafka writes (LogSegment.append) is modelled by :func:`kafka_index_model`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import crc32c

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordCount
HEADER = struct.Struct(">qiibIhiqqqhii")
assert HEADER.size == 61
OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")


@dataclass(frozen=True)
class RawBatch:
    """A batch as read from the raw ``.log`` bytes with struct."""

    position: int
    size: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    leader_epoch: int
    compression: int


def parse_log(data: bytes, *, verify: bool = False, name: str = "") -> list[RawBatch]:
    """Every batch of a ``.log`` file's bytes; the file must be whole batches (each a whole
    header and a batchLength from 49 to the end of the data).

    With ``verify``, each batch must also have magic 2, a CRC-32C (computed with the crc32c
    package) equal to its crc field, and a recordCount of lastOffsetDelta + 1 (the offsets
    from base to last each hold a record). ``name`` (the file's) prefixes the failure
    messages."""
    where = f"{name}: " if name else ""
    batches, pos = [], 0
    while pos < len(data):
        assert len(data) - pos >= HEADER.size, f"{where}torn header at byte {pos}"
        (base, length, epoch, magic, crc, attributes, delta, _base_ts, max_ts, _pid, _pepoch,
         _seq, count) = HEADER.unpack_from(data, pos)
        assert 49 <= length <= len(data) - pos - 12, f"{where}length {length} at {pos}"
        end = pos + 12 + length
        if verify:
            assert magic == 2, f"{where}magic {magic} at byte {pos}"
            assert crc32c.crc32c(data[pos + 21:end]) == crc, f"{where}bad CRC at byte {pos}"
            assert count == delta + 1, f"{where}{count} records for offset delta {delta}"
        batches.append(RawBatch(pos, end - pos, base, base + delta, max_ts, epoch,
                                attributes & 7))
        pos = end
    return batches


def _parse_index(source: Path | bytes, entry: struct.Struct, count: int | None,
                 stop_at_zeros: bool) -> list[tuple[int, int]]:
    if isinstance(source, Path):
        data, name = source.read_bytes(), source.name
    else:
        data, name = source, "index"
    assert len(data) % entry.size == 0, f"{name}: length {len(data)}"
    if count is not None:
        assert len(data) >= count * entry.size
        return [entry.unpack_from(data, pos) for pos in range(0, count * entry.size, entry.size)]
    zero = bytes(entry.size)
    entries = []
    for pos in range(0, len(data), entry.size):
        if stop_at_zeros and data[pos:pos + entry.size] == zero:
            assert data[pos:] == bytes(len(data) - pos), f"{name}: data after the end"
            break
        entries.append(entry.unpack_from(data, pos))
    return entries


def parse_offset_index(source: Path | bytes, count: int | None = None, *,
                       stop_at_zeros: bool = False) -> list[tuple[int, int]]:
    """The ``(relative offset, position)`` entries of an ``.index`` file (a path, or its
    bytes), which must be whole entries: all of them; only the first ``count`` (a
    preallocated file, whose entry count is known); or, with ``stop_at_zeros``, those up to
    the first all-zero entry (a new preallocated file's unused tail, which must then be all
    zeros). No real entry is all zeros when the first batch of a segment never gets one and
    every timestamp is > 0. (An index reset for a rebuild keeps its old bytes past the new
    entries until it is trimmed, as Kafka's does: hence ``count`` for open segments.)"""
    return _parse_index(source, OFFSET_ENTRY, count, stop_at_zeros)


def parse_time_index(source: Path | bytes, count: int | None = None, *,
                     stop_at_zeros: bool = False) -> list[tuple[int, int]]:
    """The ``(timestamp, relative offset)`` entries of a ``.timeindex`` file (a path, or its
    bytes); ``count`` and ``stop_at_zeros`` as for :func:`parse_offset_index`."""
    return _parse_index(source, TIME_ENTRY, count, stop_at_zeros)


def kafka_index_model(batches: list[RawBatch], base: int, interval: int, closed: bool,
                      resets: frozenset[int] = frozenset()
                      ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The (``.index``, ``.timeindex``) entries Kafka writes for ``batches`` appended to a new
    segment at ``base`` (relative offsets), as in Kafka's LogSegment.append.

    For each batch, its maxTimestamp first raises the segment maximum (kept with the last
    offset of the batch holding it); then, once more than ``interval``
    (index.interval.bytes) bytes were appended since the previous entry (so the segment's
    first batch never gets one), the offset entry (last offset of the batch - base, batch
    start position) is written, and a time entry (maximum so far, last offset of its batch -
    base) when that maximum rose past the last time entry. With ``closed`` (the segment was
    rolled or closed) the maximum is appended once more if larger than the last time entry.
    The byte count since the last entry restarts at the batch positions in ``resets`` (a
    truncation there)."""
    offsets: list[tuple[int, int]] = []
    times: list[tuple[int, int]] = []
    since, max_ts, max_off = 0, -1, base
    for b in batches:
        if b.position in resets:
            since = 0
        if b.max_timestamp > max_ts:
            max_ts, max_off = b.max_timestamp, b.last_offset
        if since > interval:
            offsets.append((b.last_offset - base, b.position))
            if max_ts > (times[-1][0] if times else -1):
                times.append((max_ts, max_off - base))
            since = 0
        since += b.size
    if closed and max_ts > (times[-1][0] if times else -1):
        times.append((max_ts, max_off - base))
    return offsets, times
