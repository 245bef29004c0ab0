# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled hot paths of the log: index lookup, the batch walk of append and recovery, and
the offset-to-position scan of reads.

Both index kinds are arrays of fixed-size big-endian entries (see kafkapy.log.index): the
offset index ``relativeOffset INT32, position INT32`` (8 bytes), the time index ``timestamp
INT64, relativeOffset INT32`` (12 bytes). A lookup is Kafka's ``largestLowerBoundSlotFor``: the
last slot whose key is <= the target, or -1 when the first key is already greater. Keys are
non-decreasing by construction (appends are checked), so plain binary search applies. The GIL
is released for the search.

``SegmentWalker.walk`` is LogSegment's per-batch loop (Kafka's LogSegment.append and
LogSegment.recover share it): it checks each batch's framing (and CRC-32C when recovering),
that offsets rise and fit the segment's relative INT32, tracks the segment's maximum timestamp,
and produces the sparse index entries (one every ``index.interval.bytes``) as ready-to-copy
big-endian bytes. No Python object is made per batch: a 1 GiB recovery of small batches would
otherwise spend its time allocating. ``find_batch`` is FileRecords.searchForOffsetWithSize: the
first batch whose last offset reaches a target, reading headers only.

``append_as_leader``, ``log_append``, ``segment_should_roll``, ``segment_append`` and
``index_append`` are the bodies of ``Log.append_as_leader``, ``Log._append``,
``LogSegment.should_roll``, ``LogSegment.append`` and ``_Index.append_raw`` (those methods call
them; a leader append calls ``log_append`` directly): the leader's checks and offsets, the roll
decision, the segment write and its index entries, the LEO and the leader epochs, on the Python
objects' own attributes (the state stays theirs; only the interpreter's work per append goes).

Batch headers are read through kafkapy/_batch_layout.pxd (framing, CRC, baseOffset,
partitionLeaderEpoch, lastOffsetDelta, maxTimestamp).
"""

cimport cython
from cpython.buffer cimport (PyBUF_SIMPLE, PyBuffer_FillInfo, PyBuffer_Release,
                             PyObject_GetBuffer)
from libc.errno cimport EINTR, errno
from libc.string cimport memcpy, strerror
from posix.types cimport off_t
from posix.unistd cimport ftruncate, write
from posix.mman cimport (MAP_FAILED, MAP_SHARED, MS_SYNC, POSIX_MADV_RANDOM, PROT_READ,
                         PROT_WRITE, mmap, msync, munmap, posix_madvise)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport INT64_MIN, int32_t, int64_t, uint8_t, uint32_t, uint64_t

from kafkapy._batch_layout cimport (CURRENT_MAGIC, FRAME_CUT, FRAME_LENGTH, FRAME_MAGIC,
                                    FRAME_OK, FRAME_SHORT, INT32_MAX, LAST_OFFSET_DELTA_LENGTH,
                                    LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD, MIN_BATCH_LENGTH,
                                    RECORD_BATCH_OVERHEAD, batch_base_offset, batch_crc_valid,
                                    batch_frame, batch_last_offset_delta, batch_leader_epoch,
                                    batch_length, batch_magic, batch_max_timestamp,
                                    kp_crc32c_init)
from kafkapy._bigendian cimport rd32, rd64, wr32, wr64

from kafkapy._records import assign_offsets as _assign_offsets
from kafkapy._records import record_errors as _record_errors

kp_crc32c_init()

cdef enum:
    # Through lastOffsetDelta: what find_batch needs of a header.
    HEADER_PREFIX = LAST_OFFSET_DELTA_OFFSET + LAST_OFFSET_DELTA_LENGTH

cdef enum:
    EPOCHS_ON_STACK = 32    # a walk of up to 32 batches records its epoch changes on the stack

# Why a walk stopped (WalkResult.stop). 0: it used the whole buffer; 1-4 are batch_frame's.
cdef enum:
    W_OK = FRAME_OK
    W_SHORT = FRAME_SHORT       # fewer than 17 bytes left: a torn header
    W_MAGIC = FRAME_MAGIC       # magic != 2
    W_LENGTH = FRAME_LENGTH     # batchLength < 49
    W_CUT = FRAME_CUT           # the batch runs past the end of the data
    W_CRC = 5           # CRC-32C mismatch
    W_OFFSET = 6        # baseOffset below the previous batch's next offset, or lastOffsetDelta < 0
    W_RANGE = 7         # offsets do not fit the segment (below its base or past base + INT32_MAX)


cdef inline Py_ssize_t _search32(const uint8_t* d, Py_ssize_t n, int64_t target) noexcept nogil:
    # Offset index: key = relative offset at the start of each 8-byte entry.
    cdef Py_ssize_t lo = 0, hi = n - 1, mid
    if n == 0 or <int32_t>rd32(d) > target:
        return -1
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if <int32_t>rd32(d + 8 * mid) <= target:
            lo = mid
        else:
            hi = mid - 1
    return lo


cdef inline Py_ssize_t _search64(const uint8_t* d, Py_ssize_t n, int64_t target) noexcept nogil:
    # Time index: key = timestamp at the start of each 12-byte entry.
    cdef Py_ssize_t lo = 0, hi = n - 1, mid
    if n == 0 or <int64_t>rd64(d) > target:
        return -1
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if <int64_t>rd64(d + 12 * mid) <= target:
            lo = mid
        else:
            hi = mid - 1
    return lo


cdef int _index_view(object buf, Py_ssize_t entries, int entry_size,
                     Py_buffer* view) except -1:
    """Acquire ``buf`` holding at least ``entries`` index entries of ``entry_size`` (8 or
    12) bytes; the caller releases the view."""
    if entry_size != 8 and entry_size != 12:
        raise ValueError(f"entry size {entry_size} is neither 8 nor 12")
    PyObject_GetBuffer(buf, view, PyBUF_SIMPLE)
    if entries < 0 or entries * entry_size > view.len:
        PyBuffer_Release(view)
        raise ValueError(f"{entries} entries of {entry_size} bytes do not fit in "
                         f"{view.len} bytes")
    return 0


def largest_lower_bound(buf, Py_ssize_t entries, int entry_size, int64_t target):
    """The last slot among the first ``entries`` of ``buf`` whose key is <= ``target``, or -1.

    ``entry_size`` is 8 (offset index, INT32 keys) or 12 (time index, INT64 keys).
    """
    cdef Py_buffer view
    cdef Py_ssize_t slot
    _index_view(buf, entries, entry_size, &view)
    try:
        with nogil:
            if entry_size == 8:
                slot = _search32(<const uint8_t*>view.buf, entries, target)
            else:
                slot = _search64(<const uint8_t*>view.buf, entries, target)
    finally:
        PyBuffer_Release(&view)
    return slot


# ------------------------------------------------------------------------- index mapping

cdef char _NO_BYTES[1]


cdef class FileMap:
    """A shared read-write mapping of the first ``size`` bytes of an open file, exported as a
    writable buffer (``memoryview``, ``struct.pack_into``, the searches above).

    Unlike ``mmap.mmap`` it keeps no file descriptor: the caller closes its own right after
    mapping, so a mapped index costs no file handle. (Python's mmap dups the descriptor, which
    made every partition cost three handles and 10,000 partitions run out at a 20,000 limit;
    Kafka's MappedByteBuffer keeps none either.) ``close`` unmaps, refused while a buffer is
    exported, as mmap refuses; a closed map exports nothing. ``size`` 0 maps nothing (mmap(2)
    cannot) and exports an empty buffer.
    """

    cdef char* addr
    cdef readonly Py_ssize_t size
    cdef readonly bint closed
    cdef int exports

    def __cinit__(self, int fd, Py_ssize_t size):
        cdef void* p
        self.addr = NULL
        self.size = 0
        self.closed = False
        self.exports = 0
        if size < 0:
            raise ValueError(f"negative mapping size {size}")
        if size > 0:
            with nogil:
                p = mmap(NULL, <size_t>size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                if p != MAP_FAILED:
                    # An index is read by binary search and written at its end: no fault is
                    # worth reading around. Without this, the first write into a new index
                    # (preallocated sparse to segment.index.bytes, 10 MiB) made the kernel read
                    # around it for 50-120 ms of CPU here (ext4, Linux 6.18), with the GIL held:
                    # a stall of the whole broker at each segment's first index entry. Advice
                    # only: a failure changes nothing.
                    posix_madvise(p, <size_t>size, POSIX_MADV_RANDOM)
            if p == MAP_FAILED:
                raise OSError(errno, strerror(errno).decode())
            self.addr = <char*>p
        self.size = size

    def __dealloc__(self):
        if self.addr != NULL:
            munmap(self.addr, <size_t>self.size)
            self.addr = NULL

    def __getbuffer__(self, Py_buffer* buffer, int flags):
        if self.closed:
            raise ValueError("the index mapping is closed")
        PyBuffer_FillInfo(buffer, self, self.addr if self.addr != NULL else _NO_BYTES,
                          self.size, 0, flags)
        self.exports += 1

    def __releasebuffer__(self, Py_buffer* buffer):
        self.exports -= 1

    def __len__(self):
        return self.size

    def flush(self):
        """msync(MS_SYNC): the mapped pages written to the file (without the GIL)."""
        cdef int rc = 0
        if self.addr != NULL and not self.closed:
            with nogil:
                rc = msync(self.addr, <size_t>self.size, MS_SYNC)
            if rc != 0:
                raise OSError(errno, strerror(errno).decode())

    def close(self):
        if self.exports > 0:
            raise BufferError("cannot close the index mapping: a buffer of it is in use")
        if self.addr != NULL:
            munmap(self.addr, <size_t>self.size)
            self.addr = NULL
        self.closed = True


# ------------------------------------------------------------------------------ the walk

cdef class WalkResult:
    """What one ``SegmentWalker.walk`` saw. ``valid_bytes`` is how far the data was whole and
    valid; ``stop`` why it ended (0 = all of it); the rest describes the valid batches."""
    cdef readonly Py_ssize_t valid_bytes
    cdef readonly int stop
    cdef readonly Py_ssize_t batches
    cdef readonly int64_t first_offset      # base offset of the first batch, -1 if none
    cdef readonly Py_ssize_t first_size     # bytes of the first batch, 0 if none
    cdef readonly int32_t first_epoch       # partition leader epoch of the first batch, -1
    cdef readonly int64_t next_offset       # last offset + 1 of the last batch, -1 if none
    cdef readonly int64_t max_timestamp     # over these batches, -1 if none
    cdef readonly int64_t offset_of_max_timestamp
    cdef readonly bytes offset_entries      # new .index entries, 8 bytes each
    cdef readonly bytes time_entries        # new .timeindex entries, 12 bytes each
    cdef readonly list epochs               # [(epoch, start offset)] where the epoch changes
    # The walker's state after these batches, applied by SegmentWalker._commit.
    cdef int64_t _since, _max_ts, _max_off, _idx_ts, _expect
    cdef int32_t _epoch

    @property
    def reason(self):
        """Why the walk stopped early, in words (None if it did not)."""
        return _REASONS.get(self.stop)

    def __repr__(self):
        return (f"WalkResult(valid_bytes={self.valid_bytes}, stop={self.stop}, "
                f"batches={self.batches}, first_offset={self.first_offset}, "
                f"next_offset={self.next_offset})")


_REASONS = {
    W_SHORT: "a torn batch header",
    W_MAGIC: "a batch whose magic is not 2",
    W_LENGTH: "a batch whose length is below the minimum of 49",
    W_CUT: "a batch cut off by the end of the data",
    W_CRC: "a batch that fails its CRC-32C",
    W_OFFSET: "a batch whose offsets go backwards",
    W_RANGE: "a batch whose offsets do not fit the segment",
}


cdef class SegmentWalker:
    """The per-segment state of Kafka's index-building loop, carried across appends.

    ``bytes_since_index`` counts bytes appended since the last offset-index entry;
    ``max_timestamp`` / ``offset_of_max_timestamp`` is the segment's largest batch timestamp
    and the last offset of the batch holding it; ``last_index_timestamp`` the timestamp of the
    last time-index entry (entries must rise); ``next_offset`` the lowest base offset the next
    batch may have; ``epoch`` the leader epoch of the last batch walked.
    """
    cdef readonly int64_t base_offset
    cdef readonly int64_t index_interval
    cdef public int64_t bytes_since_index
    cdef public int64_t max_timestamp
    cdef public int64_t offset_of_max_timestamp
    cdef public int64_t last_index_timestamp
    cdef public int64_t next_offset
    cdef public int32_t epoch

    def __init__(self, int64_t base_offset, int64_t index_interval):
        if index_interval < 0:
            raise ValueError(f"index interval {index_interval} < 0")
        self.base_offset = base_offset
        self.index_interval = index_interval
        self.bytes_since_index = 0
        self.max_timestamp = -1
        self.offset_of_max_timestamp = base_offset
        self.last_index_timestamp = -1
        self.next_offset = base_offset
        self.epoch = -2     # no batch yet: the first batch always reports its epoch

    def walk(self, buf, Py_ssize_t position, *, bint verify_crc, Py_ssize_t offset_room,
             Py_ssize_t time_room, bint commit=True):
        """Walk the whole batches at the start of ``buf``, which will sit (or sits) at byte
        ``position`` of the segment file, stopping at the first invalid one.

        At most ``offset_room`` / ``time_room`` index entries are produced (an index is
        sparse: a skipped entry only lengthens a later scan). With ``commit`` the walker's
        state advances past the valid batches; without, it is left as it was (a dry run).
        """
        cdef Py_buffer view
        cdef const uint8_t* d
        cdef const uint8_t* p
        cdef Py_ssize_t n, pos = 0, size, n_off = 0, n_time = 0, batches = 0, n_epochs = 0
        cdef int stop = W_OK
        cdef int32_t delta, ep
        cdef int64_t base, last, ts, first = -1
        cdef Py_ssize_t first_size = 0
        cdef int32_t first_epoch = -1
        cdef int64_t since = self.bytes_since_index
        cdef int64_t max_ts = self.max_timestamp, max_off = self.offset_of_max_timestamp
        cdef int64_t idx_ts = self.last_index_timestamp, expect = self.next_offset
        cdef int64_t chunk_ts = -1, chunk_ts_off = -1
        cdef int32_t cur_epoch = self.epoch
        cdef int64_t seg_base = self.base_offset, interval = self.index_interval
        cdef bytes off_out, time_out
        cdef uint8_t* o
        cdef uint8_t* t
        cdef Py_ssize_t epoch_cap = 0, i, off_cap, time_cap
        cdef int64_t* epoch_buf = NULL
        cdef int64_t epoch_stack[2 * EPOCHS_ON_STACK]
        cdef list epochs = []
        cdef WalkResult r = WalkResult.__new__(WalkResult)
        PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
        try:
            d = <const uint8_t*>view.buf
            n = view.len
            # Upper bounds for the output, cut to size afterwards. An entry (of each index)
            # is made at a batch start, at most one per batch (every batch is at least 61
            # bytes: n // 61 + 1), and after the first, only once more than ``interval``
            # bytes have gone by since the last (n // interval + 1 more at most): one 64 KiB
            # batch needs room for one entry, not for a thousand.
            epoch_cap = n // RECORD_BATCH_OVERHEAD + 1
            size = epoch_cap
            if interval > 0 and n // interval + 2 < size:
                size = n // interval + 2
            # The loop writes no more than these (the bound above holds; were it wrong, an
            # entry would be left out, never written past the end).
            off_cap = max(min(size, offset_room), 0)
            time_cap = max(min(size, time_room), 0)
            off_out = PyBytes_FromStringAndSize(NULL, 8 * off_cap)
            time_out = PyBytes_FromStringAndSize(NULL, 12 * time_cap)
            o = <uint8_t*>PyBytes_AS_STRING(off_out)
            t = <uint8_t*>PyBytes_AS_STRING(time_out)
            # The leader epoch may change at every batch; most appends are a few batches.
            if epoch_cap <= EPOCHS_ON_STACK:
                epoch_buf = epoch_stack
            else:
                epoch_buf = <int64_t*>PyMem_Malloc(2 * epoch_cap * sizeof(int64_t))
                if epoch_buf == NULL:
                    raise MemoryError()
            with nogil:
                # Safe without bounds checks: every read below is inside the batch just
                # framed (pos + 17 <= n before magic; pos + size <= n after), and output
                # writes are bounded by the room counted above.
                while pos < n:
                    stop = batch_frame(d, n, pos, &size)
                    if stop != W_OK:
                        break
                    p = d + pos
                    if verify_crc and not batch_crc_valid(p, size):
                        stop = W_CRC
                        break
                    base = batch_base_offset(p)
                    delta = batch_last_offset_delta(p)
                    if delta < 0 or base < expect:
                        stop = W_OFFSET
                        break
                    last = base + delta
                    if base < seg_base or last - seg_base > INT32_MAX:
                        stop = W_RANGE
                        break
                    ts = batch_max_timestamp(p)
                    if ts > max_ts:
                        max_ts = ts
                        max_off = last
                    if ts > chunk_ts or first < 0:
                        chunk_ts = ts
                        chunk_ts_off = last
                    if since > interval:
                        if n_off < off_cap:
                            wr32(o + 8 * n_off, <uint32_t>(last - seg_base))
                            wr32(o + 8 * n_off + 4, <uint32_t>(position + pos))
                            n_off += 1
                        if max_ts > idx_ts and n_time < time_cap:
                            wr64(t + 12 * n_time, <uint64_t>max_ts)
                            wr32(t + 12 * n_time + 8, <uint32_t>(max_off - seg_base))
                            n_time += 1
                            idx_ts = max_ts
                        since = 0
                    ep = batch_leader_epoch(p)
                    if ep != cur_epoch:
                        epoch_buf[2 * n_epochs] = ep
                        epoch_buf[2 * n_epochs + 1] = base
                        n_epochs += 1
                        cur_epoch = ep
                    if first < 0:
                        first = base
                        first_size = size
                        first_epoch = ep
                    expect = last + 1
                    since += size
                    batches += 1
                    pos += size
            for i in range(n_epochs):
                epochs.append((<int32_t>epoch_buf[2 * i], epoch_buf[2 * i + 1]))
        finally:
            if epoch_buf != epoch_stack:
                PyMem_Free(epoch_buf)
            PyBuffer_Release(&view)
        r.valid_bytes = pos
        r.stop = stop
        r.batches = batches
        r.first_offset = first
        r.first_size = first_size
        r.first_epoch = first_epoch
        r.next_offset = expect if batches else -1
        r.max_timestamp = chunk_ts if batches else -1
        r.offset_of_max_timestamp = chunk_ts_off
        r.offset_entries = off_out[:8 * n_off] if 8 * n_off != len(off_out) else off_out
        r.time_entries = time_out[:12 * n_time] if 12 * n_time != len(time_out) else time_out
        r.epochs = epochs
        r._since, r._max_ts, r._max_off, r._idx_ts = since, max_ts, max_off, idx_ts
        r._expect, r._epoch = expect, cur_epoch
        if commit:
            self._commit(r)
        return r

    cdef void _commit(self, WalkResult r) noexcept:
        self.bytes_since_index = r._since
        self.max_timestamp = r._max_ts
        self.offset_of_max_timestamp = r._max_off
        self.last_index_timestamp = r._idx_ts
        self.next_offset = r._expect
        self.epoch = r._epoch

    def append(self, int fd, buf, Py_ssize_t position, Py_ssize_t offset_room,
               Py_ssize_t time_room):
        """Write ``buf`` at the end of the segment file ``fd`` (its byte ``position``) if it
        is whole batches with rising offsets that fit the segment, and walk it as ``walk``
        with ``commit`` does: one pass over the headers, one ``write`` loop without the GIL.

        If it is not, nothing is written and the result's ``stop`` says why (the walker is
        unchanged). If the write fails, the file is truncated back to ``position``, the
        walker is unchanged and the OSError is raised (its message says how many bytes went
        before the failure).
        """
        cdef WalkResult r = self.walk(buf, position, verify_crc=False, offset_room=offset_room,
                                      time_room=time_room, commit=False)
        if r.stop != W_OK:
            return r
        cdef Py_buffer view
        cdef const char* p
        cdef Py_ssize_t n, done = 0, wrote
        cdef int err = 0
        PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
        try:
            p = <const char*>view.buf
            n = view.len
            with nogil:
                while done < n:
                    wrote = write(fd, p + done, <size_t>(n - done))
                    if wrote < 0:
                        if errno == EINTR:
                            continue
                        err = errno
                        if ftruncate(fd, <off_t>position) < 0:
                            pass        # the write's error is the one to report
                        break
                    done += wrote
        finally:
            PyBuffer_Release(&view)
        if err:
            raise OSError(err, f"{strerror(err).decode()} after {done} of {n} bytes")
        self._commit(r)
        return r


# ------------------------------------------------------------------- offset -> position

def find_batch(buf, int64_t target):
    """Scan the batch headers at the start of ``buf`` for the first batch whose last offset
    is >= ``target`` (Kafka's FileRecords.searchForOffsetWithSize).

    Returns ``(found, position, base_offset, size)``. Found: the batch at ``position`` of
    ``buf`` with that base offset and total size. Not found: ``position`` is where the scan
    must resume (the next header, which may lie past the end of ``buf``, or a header with fewer
    than 27 bytes in ``buf``); ``base_offset`` and ``size`` are -1 and 0. A header that is not
    a magic-2 batch of at least 61 bytes stops the scan with ``size`` -1 at its position.
    """
    cdef Py_buffer view
    cdef const uint8_t* d
    cdef Py_ssize_t n, pos = 0, size = 0
    cdef int32_t blen
    cdef int found = 0
    cdef int64_t base = -1
    PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
    try:
        d = <const uint8_t*>view.buf
        n = view.len
        with nogil:
            while n - pos >= HEADER_PREFIX:
                blen = batch_length(d + pos)
                if batch_magic(d + pos) != CURRENT_MAGIC or blen < MIN_BATCH_LENGTH:
                    size = -1
                    break
                size = <Py_ssize_t>blen + LOG_OVERHEAD
                base = batch_base_offset(d + pos)
                if base + batch_last_offset_delta(d + pos) >= target:
                    found = 1
                    break
                base = -1
                pos += size
                size = 0
    finally:
        PyBuffer_Release(&view)
    return (bool(found), pos, base, size)


# --------------------------------------------------------------------- index validation

def first_disorder(buf, Py_ssize_t entries, int entry_size, int64_t position_limit):
    """The first slot among the first ``entries`` of an index that breaks its order, or -1.

    Offset index (8): relative offsets >= 0 and strictly rising, positions strictly rising
    and below ``position_limit`` (the segment's size). Time index (12): timestamps and
    relative offsets non-decreasing, relative offsets >= 0. Run when a segment is loaded
    after a clean shutdown, so a damaged index is rebuilt instead of trusted.
    """
    cdef Py_buffer view
    cdef const uint8_t* d
    cdef Py_ssize_t i, bad = -1
    cdef int32_t rel, prev_rel = -1, pos, prev_pos = -1
    cdef int64_t ts, prev_ts = INT64_MIN
    _index_view(buf, entries, entry_size, &view)
    try:
        d = <const uint8_t*>view.buf
        with nogil:
            for i in range(entries):
                if entry_size == 8:
                    rel = <int32_t>rd32(d + 8 * i)
                    pos = <int32_t>rd32(d + 8 * i + 4)
                    if rel <= prev_rel or pos <= prev_pos or pos >= position_limit:
                        bad = i
                        break
                    prev_rel = rel
                    prev_pos = pos
                else:
                    ts = <int64_t>rd64(d + 12 * i)
                    rel = <int32_t>rd32(d + 12 * i + 8)
                    if ts < prev_ts or rel < 0 or rel < prev_rel:
                        bad = i
                        break
                    prev_ts = ts
                    prev_rel = rel
    finally:
        PyBuffer_Release(&view)
    return bad


# -------------------------------------------------------------------- the append's steps

# The Python classes the append makes one of per call, imported on first use: their modules
# import this one.
cdef object _BatchLocation = None
cdef object _LogAppendInfo = None
cdef object _KafkaStorageError = None
cdef object _CorruptMessageError = None
cdef object _RecordListTooLargeError = None
cdef object _validate_records = None
cdef object _IndexFullError = None


cdef int _load_types() except -1:
    global _BatchLocation, _LogAppendInfo, _KafkaStorageError, _CorruptMessageError
    global _RecordListTooLargeError, _validate_records, _IndexFullError
    from kafkapy.log.index import IndexFullError
    from kafkapy.errors import CorruptMessageError, KafkaStorageError, RecordListTooLargeError
    from kafkapy.log.log import LogAppendInfo
    from kafkapy.log.log_validator import validate_records
    from kafkapy.log.segment import BatchLocation
    _BatchLocation, _LogAppendInfo = BatchLocation, LogAppendInfo
    _KafkaStorageError, _CorruptMessageError = KafkaStorageError, CorruptMessageError
    _RecordListTooLargeError, _validate_records = RecordListTooLargeError, validate_records
    _IndexFullError = IndexFullError
    return 0


def index_append(index, data):
    """``_Index.append_raw``: entries already encoded (by the segment walk, which checked
    their order) copied to the end of ``index``'s mapping; ``index.entries`` grows by their
    count. Raises IndexFullError if they do not fit, before anything is written."""
    if _BatchLocation is None:
        _load_types()
    _index_append(index, data)


cdef int _index_append(index, data) except -1:
    cdef Py_ssize_t entry_size = index.entry_size
    cdef Py_buffer view
    cdef Py_ssize_t entries, count, start
    cdef FileMap m
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        count = view.len // entry_size
        if count == 0:
            return 0
        entries = index.entries
        if entries + count > index.max_entries:
            raise _IndexFullError(f"{index.path}: {count} entries do not fit, full at "
                                  f"{entries} of {index.max_entries}")
        m = index._mmap
        start = entries * entry_size
        if m.closed or start + count * entry_size > m.size:
            raise _IndexFullError(f"{index.path}: the mapping ({m.size} bytes) cannot take "
                                  f"{count} entries after {entries}")
        memcpy(m.addr + start, view.buf, count * entry_size)
    finally:
        PyBuffer_Release(&view)
    index.entries = entries + count
    return 0


def segment_should_roll(seg, Py_ssize_t incoming_bytes, incoming_max_timestamp,
                        incoming_last_offset, Py_ssize_t batches, now_ms):
    """``LogSegment.should_roll`` (Kafka's LogSegment.shouldRoll): size, age, a full index,
    relative-offset overflow. Timestamps and offsets are Python ints: a producer's
    timestamp may be any INT64, and their differences must not wrap."""
    cfg = seg.config
    cdef Py_ssize_t size = seg.size
    if size > cfg.segment_bytes - incoming_bytes:
        return True
    if size > 0:
        rolling = seg.rolling_timestamp
        if rolling != -1:           # NO_TIMESTAMP
            waited = incoming_max_timestamp - rolling
        else:
            waited = now_ms - seg.created_ms
        if waited > cfg.segment_ms - seg.roll_jitter_ms:
            return True
    # Each batch may add one entry to each index; leave room for all of them.
    index = seg.offset_index
    if index.entries + batches > index.max_entries:
        return True
    index = seg.time_index
    if index.entries + batches > index.max_entries:
        return True
    return incoming_last_offset - seg.base_offset > INT32_MAX


def segment_append(seg, buf):
    """``LogSegment.append``: write validated batches with their final offsets at the end of
    ``seg`` and index them (see there)."""
    if _BatchLocation is None:
        _load_types()
    cdef Py_ssize_t start = seg.size
    offset_index = seg.offset_index
    time_index = seg.time_index
    cdef SegmentWalker walker = seg.walker
    cdef WalkResult r
    cdef Py_buffer view
    try:
        r = walker.append(seg.fd, buf, start,
                          offset_index.max_entries - offset_index.entries,
                          time_index.max_entries - time_index.entries)
    except OSError as e:
        raise _KafkaStorageError(f"{seg.path}: write failed: {e}") from e
    if r.stop != W_OK:
        raise _CorruptMessageError(f"{seg.path}: cannot append {r.reason} at byte "
                                   f"{r.valid_bytes} of the appended data")
    seg.size = start + r.valid_bytes
    seg._last_append = _BatchLocation(start, r.first_size, r.first_offset)
    if r.offset_entries:        # an entry every index.interval.bytes
        _index_append(offset_index, r.offset_entries)
    if r.time_entries:
        _index_append(time_index, r.time_entries)
    if start == 0 and r.batches and seg.rolling_timestamp == -1:
        # Kafka's rollingBasedTimestamp: the first batch's maxTimestamp (as reloaded by
        # LogSegment._read_rolling_timestamp), not the largest of this append. The walk
        # checked that the buffer starts with a whole batch.
        PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
        try:
            seg.rolling_timestamp = batch_max_timestamp(<const uint8_t*>view.buf)
        finally:
            PyBuffer_Release(&view)
    return r


def log_append(log, buf, int64_t first_offset, int64_t last_offset, Py_ssize_t batches,
               int64_t records, Py_ssize_t size, int64_t max_timestamp, int64_t append_time,
               now):
    """``Log._append``: roll if the active segment cannot take the append (Kafka's
    maybeRoll, with the largest maxTimestamp of the whole append), append to the active
    segment, move the log end offset, record leader epoch changes; the ``LogAppendInfo``."""
    return _log_append(log, buf, first_offset, last_offset, batches, records, size,
                       max_timestamp, append_time, now)


@cython.boundscheck(True)
@cython.wraparound(True)
cdef object _log_append(log, buf, int64_t first_offset, int64_t last_offset,
                        Py_ssize_t batches, int64_t records, Py_ssize_t size,
                        int64_t max_timestamp, int64_t append_time, now):
    if _BatchLocation is None:
        _load_types()
    seg = log.segments[-1]          # the active one (IndexError, never a stray read)
    if segment_should_roll(seg, size, max_timestamp, last_offset, batches, now):
        seg = log.roll(first_offset)
    cdef WalkResult r = segment_append(seg, buf)
    log.log_end_offset = r.next_offset
    # The segment reports where the epoch changes from its previous batch; the cache may
    # have lost that batch's entry (DeleteRecords or retention moved the start past it),
    # so the first batch's epoch is offered too, as Kafka offers every batch's.
    epochs = log.epochs
    entries = epochs.entries
    if r.first_epoch >= 0 and (not entries or r.first_epoch > entries[-1].epoch):
        # (LeaderEpochCache.assign ignores an epoch not above its latest: most appends)
        epochs.assign(r.first_epoch, first_offset)
    if r.epochs:
        for epoch, offset in r.epochs:
            epochs.assign(epoch, offset)
    return _LogAppendInfo(first_offset, last_offset, r.max_timestamp,
                          r.offset_of_max_timestamp, append_time, log.log_start_offset,
                          batches, records, size)


def append_as_leader(log, records, int32_t leader_epoch, origin):
    """``Log.append_as_leader`` (its doc says what is checked and raised): the batches
    checked and given offsets in place by one compiled pass (``assign_offsets`` with
    ``verify``), the per-record checks (``record_errors``, and ``validate_records`` only to
    word a refusal), then ``log_append``; batches a producer state must see go to
    ``log._append_with_producer_state``. ``leader_epoch`` -1 leaves the batches' epochs."""
    if _BatchLocation is None:
        _load_types()
    buf = records
    cdef Py_buffer view
    PyObject_GetBuffer(records, &view, PyBUF_SIMPLE)
    cdef Py_ssize_t nbytes = view.len
    cdef bint readonly = view.readonly
    PyBuffer_Release(&view)
    if readonly:
        buf = bytearray(records)
    if nbytes == 0:
        return log._empty_append_info()
    cfg = log.config
    if nbytes > cfg.segment_bytes:
        raise _RecordListTooLargeError(
            f"{log.topic_partition}: {nbytes} bytes of batches exceed segment.bytes "
            f"{cfg.segment_bytes}")
    now = log.clock()
    cdef bint create_time = not cfg.log_append_time
    append_time = None if create_time else now
    first = log.log_end_offset
    before_max_ms = cfg.message_timestamp_before_max_ms
    after_max_ms = cfg.message_timestamp_after_max_ms
    compacted = cfg.compact
    refused = None
    # Before offsets are assigned (Kafka's messages name the producer's offsets and its
    # timestamp type); raised after the CRC and size checks, which Kafka makes first. The
    # compiled check first: the error's message is built only for a refusal.
    if _record_errors(buf, compacted=compacted, create_time=create_time, now=now,
                      before_max_ms=before_max_ms, after_max_ms=after_max_ms) is not None:
        refused = _validate_records(buf, log.topic_partition, compacted=compacted,
                                    create_time=create_time, now=now,
                                    before_max_ms=before_max_ms, after_max_ms=after_max_ms)
    r = _assign_offsets(buf, first, log_append_time=append_time,
                        partition_leader_epoch=leader_epoch if leader_epoch >= 0 else None,
                        verify=True, max_batch_size=cfg.max_message_bytes)
    if refused is not None:
        raise refused
    cdef int64_t next_offset = r.next_offset
    if r.stateful_batches:
        return log._append_with_producer_state(buf, first, next_offset - 1, r.batches,
                                               r.records, r.size, r.max_timestamp,
                                               append_time, now, origin)
    log.producer_state.update_map_end_offset(next_offset)
    return _log_append(log, buf, first, next_offset - 1, r.batches, r.records, r.size,
                       r.max_timestamp, -1 if create_time else now, now)
