# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# Bounds checks are off because nothing here indexes a Python sequence or typed memoryview by
# an unchecked value: log bytes are read through raw pointers at positions first checked
# against the end of their buffer (``batch_frame`` for batch headers, the varint readers and
# explicit length checks for record fields), and every column write goes to a ``_GBuf`` reserved for
# it beforehand (fixed-width columns: ``count`` rows per batch; byte data: per field).
"""Record batches (magic 2) decoded straight into Arrow column buffers, for the Spark reader.

Theory of operation
-------------------
``RecordBatchDecoder`` walks the batches of a buffer (a chunk of a ``.log`` segment) and
appends every record whose offset lies in ``[start_offset, end_offset)`` to growable C
buffers laid out as Arrow arrays, one per requested column:

====================  ============================================================
column                Arrow buffers built here
====================  ============================================================
key, value            binary: validity bitmap, int32 offsets (rows + 1), data
offset                int64
timestamp             int64 microseconds (Kafka milliseconds x 1000: Spark's unit);
                      the batch's maxTimestamp for every record under LogAppendTime
timestampType         int32 (0 CreateTime, 1 LogAppendTime)
headers               list<struct<key: string, value: binary>>: list validity (null when
                      a record has no headers, as Spark's Kafka source), int32 list
                      offsets; struct children: key string (offsets, data; invalid UTF-8
                      replaced by U+FFFD, as Java's ``new String`` does), value binary
                      (validity, offsets, data)
====================  ============================================================

Topic and partition are constants of a split and are built by the caller. Nothing else is
built: a column not asked for costs nothing but the parse that skips over it. No Python
object is made per record or per header; ``take()`` hands the buffers over as
buffer-protocol objects (``pyarrow.py_buffer`` wraps them without copying) and starts new
ones. pyarrow is not needed here (nor at build time): the caller assembles the arrays with
``pyarrow.Array.from_buffers``.

Per batch, in order: framing (an incomplete batch at the end of the buffer is not an error:
the caller reads more), batches entirely before ``start_offset`` skipped unread, the CRC-32C
(``verify_crc``), control batches skipped, aborted transactions skipped (``aborted``: the
``(producer id, first offset, last offset)`` of each aborted transaction, from the
``.txnindex`` files; a transactional batch of that producer within that range is dropped, as
a read_committed consumer drops it), then the records: decompressed first for codecs 1-4,
validated field by field by the record readers kafkapy._records uses too
(kafkapy/_batch_layout.pxd), and appended. A batch that fails any check is rolled back whole
(no row of it is kept) and reported with its position, and whether it can be skipped (its
framing is sound, so the next batch is known); what to do is the caller's decision
(failOnDataLoss).

The walk over uncompressed batches runs without the GIL; a compressed batch takes the GIL
for its decompression (cramjam, one call per batch) and releases it again to parse.

Thread-safety: a decoder is used by one thread at a time; the only module state that
changes, the pool of freed column buffers, is touched with the GIL held.
"""

from cpython.buffer cimport (PyBUF_SIMPLE, PyBuffer_FillInfo, PyBuffer_Release,
                             PyObject_GetBuffer)
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

from kafkapy._batch_layout cimport *

from kafkapy._records import decompress as _decompress

from kafkapy.errors import CorruptMessageError, UnsupportedCompressionTypeError

kp_crc32c_init()

# Columns (bit flags of RecordBatchDecoder's ``columns``).
cdef enum:
    C_KEY = 1
    C_VALUE = 2
    C_OFFSET = 4
    C_TIMESTAMP = 8
    C_TIMESTAMP_TYPE = 16
    C_HEADERS = 32

# Why decode() stopped (the first element of its result).
cdef enum:
    S_END_OF_BUFFER = 0     # every whole batch used; an incomplete one may start at position
    S_FULL = 1              # the row or byte budget is reached; position: the next batch
    S_DONE = 2              # end_offset reached; position: the first batch not used
    S_CORRUPT = 3           # the batch at position is corrupt (size >= 0: it can be skipped)
    S_UNSUPPORTED = 4       # a magic 0/1 message set at position: not decoded here
    S_DECOMPRESS = 100      # internal: a compressed batch needs the GIL

COL_KEY = C_KEY
COL_VALUE = C_VALUE
COL_OFFSET = C_OFFSET
COL_TIMESTAMP = C_TIMESTAMP
COL_TIMESTAMP_TYPE = C_TIMESTAMP_TYPE
COL_HEADERS = C_HEADERS
STATUS_END_OF_BUFFER = S_END_OF_BUFFER
STATUS_FULL = S_FULL
STATUS_DONE = S_DONE
STATUS_CORRUPT = S_CORRUPT
STATUS_UNSUPPORTED = S_UNSUPPORTED


# ------------------------------------------------------------------------ growable buffers

cdef struct _GBuf:
    uint8_t* data
    Py_ssize_t len
    Py_ssize_t cap


cdef int _reserve(_GBuf* b, Py_ssize_t extra) noexcept nogil:
    """Room for ``extra`` more bytes; -1 when out of memory (the buffer is unchanged)."""
    cdef Py_ssize_t cap
    cdef uint8_t* grown
    if b.len + extra <= b.cap:
        return 0
    cap = b.cap * 2
    if cap < b.len + extra:
        cap = b.len + extra
    if cap < 64:
        cap = 64
    grown = <uint8_t*>realloc(b.data, cap)
    if grown == NULL:
        return -1
    b.data = grown
    b.cap = cap
    return 0


cdef int _ensure(_GBuf* b, Py_ssize_t total) noexcept nogil:
    """Capacity for ``total`` bytes (fixed-width columns and bitmaps, written by index);
    -1 when out of memory."""
    if total <= b.cap:
        return 0
    return _reserve(b, total - b.len)


cdef int _first_offset(_GBuf* b) noexcept nogil:
    if _ensure(b, 4) < 0:
        return -1
    (<int32_t*>b.data)[0] = 0
    return 0


cdef inline void _bit(_GBuf* b, Py_ssize_t i, bint valid) noexcept nogil:
    # Every bit below the row count is written exactly once (or rewritten after a rollback),
    # so bytes fresh from realloc need no clearing.
    if valid:
        b.data[i >> 3] |= <uint8_t>(1 << (i & 7))
    else:
        b.data[i >> 3] &= <uint8_t>~(1 << (i & 7))


# ----------------------------------------------------------------- the column-buffer pool
#
# Column buffers of megabytes come from mmap (or the top of the heap, which glibc trims),
# so a fresh one faults in every page again as the decoder writes it: about a tenth of the
# decode's CPU. Freed buffers (pyarrow dropped the batch, or a decoder ended) are kept here
# for the next set's (``_hand_over``), their pages still mapped. Only touched with the GIL
# held (``_hand_over`` and the deallocators), which serialises every use.

cdef enum:
    _POOL_SLOTS = 32
    _POOL_MIN = 64 << 10            # smaller blocks come from malloc's bins, faults and all
    _POOL_BYTES = 64 << 20          # the most kept: a few sets of 65,536 rows of 1 KiB

cdef uint8_t* _pool_data[_POOL_SLOTS]
cdef Py_ssize_t _pool_cap[_POOL_SLOTS]
cdef Py_ssize_t _pool_n = 0
cdef Py_ssize_t _pool_bytes = 0


cdef void _pool_put(uint8_t* data, Py_ssize_t cap) noexcept:
    """Keep ``data`` (``cap`` bytes) for reuse, or free it when the pool has no room."""
    global _pool_n, _pool_bytes
    if data == NULL:
        return
    if cap < _POOL_MIN or _pool_n == _POOL_SLOTS or _pool_bytes + cap > _POOL_BYTES:
        free(data)
        return
    _pool_data[_pool_n] = data
    _pool_cap[_pool_n] = cap
    _pool_n += 1
    _pool_bytes += cap


cdef uint8_t* _pool_take(Py_ssize_t size, Py_ssize_t* cap) noexcept:
    """A block of at least ``size`` bytes (its capacity in ``cap``): the smallest pooled one
    that fits and is not more than four times too large, else a new one; NULL when out of
    memory."""
    global _pool_n, _pool_bytes
    cdef Py_ssize_t i, best = -1
    cdef uint8_t* data
    if size >= _POOL_MIN:
        for i in range(_pool_n):
            if size <= _pool_cap[i] <= 4 * size and (best < 0 or
                                                     _pool_cap[i] < _pool_cap[best]):
                best = i
    if best < 0:
        cap[0] = size
        return <uint8_t*>malloc(size)
    data = _pool_data[best]
    cap[0] = _pool_cap[best]
    _pool_bytes -= _pool_cap[best]
    _pool_n -= 1
    _pool_data[best] = _pool_data[_pool_n]
    _pool_cap[best] = _pool_cap[_pool_n]
    return data


def _pool_state():
    """(blocks, bytes) kept in the pool (for tests)."""
    return _pool_n, _pool_bytes


cdef class _OwnedBuffer:
    """A malloc'd column buffer handed to Python: exports it read-only through the buffer
    protocol and gives it to the pool when the last reference (a pyarrow Buffer, say) goes."""
    cdef uint8_t* data
    cdef Py_ssize_t size
    cdef Py_ssize_t cap             # the block's capacity (>= size)

    def __dealloc__(self):
        _pool_put(self.data, self.cap)

    def __getbuffer__(self, Py_buffer* buffer, int flags):
        PyBuffer_FillInfo(buffer, self, <void*>self.data, self.size, 1, flags)

    def __releasebuffer__(self, Py_buffer* buffer):
        pass

    def __len__(self):
        return self.size


cdef _OwnedBuffer _hand_over(_GBuf* b, Py_ssize_t size):
    """Move ``b``'s memory into an _OwnedBuffer of ``size`` bytes; ``b`` is left empty, with
    room for ``size`` bytes: the next set of columns is most likely the size of this one, and
    growing a buffer of megabytes by doubling copies it about once more (a realloc that
    cannot grow in place) and faults in its pages again."""
    cdef _OwnedBuffer o = _OwnedBuffer.__new__(_OwnedBuffer)
    cdef Py_ssize_t hint = size
    if b.data == NULL:
        b.data = <uint8_t*>malloc(64)
        if b.data == NULL:
            raise MemoryError()
    o.data = b.data
    o.size = size
    o.cap = b.cap
    b.len = 0
    b.cap = 0
    b.data = NULL
    if hint > 64:
        # Failing here only loses the head start: the buffer grows from nothing as before.
        b.data = _pool_take(hint, &b.cap)
        if b.data == NULL:
            b.cap = 0
    return o


# ------------------------------------------------------------------------------- UTF-8

cdef int _copy_utf8(_GBuf* out, const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Append ``s[0:n]`` as valid UTF-8: every maximal ill-formed subpart becomes U+FFFD
    (Unicode's recommended practice, which CPython's and Java's decoders follow). -1: no
    memory."""
    cdef Py_ssize_t i = 0, j, need
    cdef uint8_t b, lo, hi
    cdef bint ascii = True
    for j in range(n):
        if s[j] >= 0x80:
            ascii = False
            break
    if ascii:
        if _reserve(out, n) < 0:
            return -1
        memcpy(out.data + out.len, s, n)
        out.len += n
        return 0
    if _reserve(out, 3 * n) < 0:        # at worst every byte becomes three
        return -1
    while i < n:
        b = s[i]
        if b < 0x80:
            out.data[out.len] = b
            out.len += 1
            i += 1
            continue
        lo = 0x80
        hi = 0xBF
        if 0xC2 <= b <= 0xDF:
            need = 1
        elif 0xE0 <= b <= 0xEF:
            need = 2
            if b == 0xE0:
                lo = 0xA0
            elif b == 0xED:
                hi = 0x9F
        elif 0xF0 <= b <= 0xF4:
            need = 3
            if b == 0xF0:
                lo = 0x90
            elif b == 0xF4:
                hi = 0x8F
        else:
            need = 0
        j = 1
        if need:
            while j <= need and i + j < n:
                if j == 1:
                    if not (lo <= s[i + j] <= hi):
                        break
                elif not (0x80 <= s[i + j] <= 0xBF):
                    break
                j += 1
        if need and j == need + 1:
            memcpy(out.data + out.len, s + i, j)
            out.len += j
            i += j
        else:
            out.data[out.len] = 0xEF
            out.data[out.len + 1] = 0xBF
            out.data[out.len + 2] = 0xBD
            out.len += 3
            i += j          # the maximal subpart: the lead byte and the continuations that fit
    return 0


# ----------------------------------------------------------------------------- columns

cdef class DecodedColumns:
    """What ``RecordBatchDecoder.take()`` hands over: ``rows`` rows of the requested columns,
    each buffer an object with the buffer protocol (``pyarrow.py_buffer`` wraps it without a
    copy). Columns not requested are None.

    - ``key``, ``value``: ``(validity or None, offsets, data, null_count)``; validity is None
      when there is no null.
    - ``offset``, ``timestamp`` (int64, microseconds), ``timestamp_type`` (int32): a buffer.
    - ``headers``: ``(validity or None, offsets, null_count, header_count, key_offsets,
      key_data, value_validity or None, value_offsets, value_data, value_null_count)``.
    """
    cdef readonly Py_ssize_t rows
    cdef readonly object key
    cdef readonly object value
    cdef readonly object offset
    cdef readonly object timestamp
    cdef readonly object timestamp_type
    cdef readonly object headers

    def __repr__(self):
        return f"DecodedColumns(rows={self.rows})"


cdef class RecordBatchDecoder:
    """Decodes the batches of log chunks into Arrow column buffers (see the module doc).

    ``RecordBatchDecoder(columns, start_offset, end_offset, *, verify_crc=True,
    aborted=())``: ``columns`` is an OR of the ``COL_*`` flags; only records with
    ``start_offset <= offset < end_offset`` are kept; ``aborted`` holds ``(producer id, first
    offset, last offset)`` triples of aborted transactions to drop (read_committed).

    Batches must be fed in log order (offsets rising): the aborted-transaction filter and the
    offset checks rely on it.
    """
    cdef int cols
    cdef readonly int64_t start_offset
    cdef readonly int64_t end_offset
    cdef bint verify_crc
    # The offset after the last batch walked past (used, skipped or filtered); -1 before the
    # first. Offsets of later batches must not go below it.
    cdef readonly int64_t next_offset
    cdef readonly Py_ssize_t rows
    cdef _GBuf k_valid, k_off, k_data, v_valid, v_off, v_data
    cdef _GBuf offsets, timestamps, ts_types
    cdef _GBuf h_valid, h_off, hk_off, hk_data, hv_valid, hv_off, hv_data
    cdef Py_ssize_t k_nulls, v_nulls, h_nulls, hv_nulls, nhdr
    # Aborted transactions, sorted by first offset; ``ab_next`` is the first one not yet
    # active; ``act`` holds the indexes of those begun and not yet over.
    cdef int64_t* ab_pid
    cdef int64_t* ab_first
    cdef int64_t* ab_last
    cdef Py_ssize_t n_ab, ab_next, n_act
    cdef Py_ssize_t* act

    def __cinit__(self):
        self.ab_pid = NULL
        self.ab_first = NULL
        self.ab_last = NULL
        self.act = NULL

    def __init__(self, int columns, int64_t start_offset, int64_t end_offset, *,
                 bint verify_crc=True, aborted=()):
        cdef Py_ssize_t i
        cdef list entries = sorted((int(f), int(p), int(last)) for p, f, last in aborted)
        if columns & ~63:
            raise ValueError(f"unknown column flags {columns:#x}")
        self.cols = columns
        self.start_offset = start_offset
        self.end_offset = end_offset
        self.verify_crc = verify_crc
        self.next_offset = -1
        self.n_ab = len(entries)
        if self.n_ab:
            self.ab_pid = <int64_t*>malloc(self.n_ab * sizeof(int64_t))
            self.ab_first = <int64_t*>malloc(self.n_ab * sizeof(int64_t))
            self.ab_last = <int64_t*>malloc(self.n_ab * sizeof(int64_t))
            self.act = <Py_ssize_t*>malloc(self.n_ab * sizeof(Py_ssize_t))
            if (self.ab_pid == NULL or self.ab_first == NULL or self.ab_last == NULL
                    or self.act == NULL):
                raise MemoryError()
            for i in range(self.n_ab):
                self.ab_first[i], self.ab_pid[i], self.ab_last[i] = entries[i]
        self._start()

    def __dealloc__(self):
        # The next decoder (the next split in a reused Spark worker) starts from these.
        _pool_put(self.k_valid.data, self.k_valid.cap)
        _pool_put(self.k_off.data, self.k_off.cap)
        _pool_put(self.k_data.data, self.k_data.cap)
        _pool_put(self.v_valid.data, self.v_valid.cap)
        _pool_put(self.v_off.data, self.v_off.cap)
        _pool_put(self.v_data.data, self.v_data.cap)
        _pool_put(self.offsets.data, self.offsets.cap)
        _pool_put(self.timestamps.data, self.timestamps.cap)
        _pool_put(self.ts_types.data, self.ts_types.cap)
        _pool_put(self.h_valid.data, self.h_valid.cap)
        _pool_put(self.h_off.data, self.h_off.cap)
        _pool_put(self.hk_off.data, self.hk_off.cap)
        _pool_put(self.hk_data.data, self.hk_data.cap)
        _pool_put(self.hv_valid.data, self.hv_valid.cap)
        _pool_put(self.hv_off.data, self.hv_off.cap)
        _pool_put(self.hv_data.data, self.hv_data.cap)
        free(self.ab_pid)
        free(self.ab_first)
        free(self.ab_last)
        free(self.act)

    cdef int _start(self) except -1:
        """Begin a new set of columns: the first entry (0) of each offsets buffer."""
        self.rows = 0
        self.k_nulls = self.v_nulls = self.h_nulls = self.hv_nulls = self.nhdr = 0
        if (_first_offset(&self.k_off) < 0 or _first_offset(&self.v_off) < 0
                or _first_offset(&self.h_off) < 0 or _first_offset(&self.hk_off) < 0
                or _first_offset(&self.hv_off) < 0):
            raise MemoryError()
        return 0

    # --------------------------------------------------------------- aborted transactions

    cdef bint _aborted(self, int64_t pid, int64_t offset) noexcept nogil:
        cdef Py_ssize_t i = 0, j
        while self.ab_next < self.n_ab and self.ab_first[self.ab_next] <= offset:
            self.act[self.n_act] = self.ab_next
            self.n_act += 1
            self.ab_next += 1
        while i < self.n_act:
            j = self.act[i]
            if self.ab_last[j] < offset:          # over: later batches are past it too
                self.n_act -= 1
                self.act[i] = self.act[self.n_act]
                continue
            if self.ab_pid[j] == pid:
                return True
            i += 1
        return False

    # ---------------------------------------------------------------------------- records

    cdef int _records(self, const uint8_t* d, Py_ssize_t n, const uint8_t* h,
                      Py_ssize_t* where) noexcept nogil:
        """Append the records of one batch: ``d[0:n]`` is its (decompressed) records
        section, ``h`` its 61-byte header. On error the caller rolls back."""
        cdef int32_t count = batch_records_count(h)
        cdef int32_t last_delta = batch_last_offset_delta(h)
        cdef int64_t base = batch_base_offset(h)
        cdef int64_t base_ts = batch_base_timestamp(h)
        cdef int64_t max_ts = batch_max_timestamp(h)
        cdef bint log_append = (batch_flags(h) & ATTR_TIMESTAMP_TYPE) != 0
        cdef int cols = self.cols
        cdef Py_ssize_t pos = 0, end, kpos, vpos, i, j, r
        cdef int32_t klen, vlen, hc, hv, odelta
        cdef int64_t ts_delta, offset
        cdef bint take
        cdef int err
        cdef RecordFields rf
        cdef HeaderFields hf
        if count < 0 or <Py_ssize_t>count > n // (MIN_RECORD_BODY + 1):
            return R_COUNT
        if count == 0:
            return R_OK if n == 0 else R_TRAILING
        # Fixed-width columns and bitmaps for up to ``count`` more rows.
        r = self.rows + count
        if cols & C_KEY:
            if _ensure(&self.k_off, 4 * (r + 1)) < 0 or _ensure(&self.k_valid, r // 8 + 1) < 0:
                return R_NOMEM
        if cols & C_VALUE:
            if _ensure(&self.v_off, 4 * (r + 1)) < 0 or _ensure(&self.v_valid, r // 8 + 1) < 0:
                return R_NOMEM
        if cols & C_OFFSET and _ensure(&self.offsets, 8 * r) < 0:
            return R_NOMEM
        if cols & C_TIMESTAMP and _ensure(&self.timestamps, 8 * r) < 0:
            return R_NOMEM
        if cols & C_TIMESTAMP_TYPE and _ensure(&self.ts_types, 4 * r) < 0:
            return R_NOMEM
        if cols & C_HEADERS:
            if _ensure(&self.h_off, 4 * (r + 1)) < 0 or _ensure(&self.h_valid, r // 8 + 1) < 0:
                return R_NOMEM
        for i in range(count):
            where[0] = pos
            err = read_record(d, n, &pos, &rf)
            if err != R_OK:
                return err
            odelta = rf.offset_delta
            if odelta < 0 or odelta > last_delta:
                return R_OFFSET
            end = rf.end
            ts_delta = rf.ts_delta
            klen = rf.key_len
            kpos = rf.key_off
            vlen = rf.val_len
            vpos = rf.val_off
            hc = rf.header_count
            offset = <int64_t>(<uint64_t>base + <uint64_t><int64_t>odelta)
            take = self.start_offset <= offset < self.end_offset
            r = self.rows
            if take and cols & C_HEADERS:
                _bit(&self.h_valid, r, hc > 0)
                if hc == 0:
                    self.h_nulls += 1
                j = self.nhdr + hc
                if (_ensure(&self.hk_off, 4 * (j + 1)) < 0
                        or _ensure(&self.hv_off, 4 * (j + 1)) < 0
                        or _ensure(&self.hv_valid, j // 8 + 1) < 0):
                    return R_NOMEM
            for j in range(hc):
                err = read_record_header(d, end, &pos, &hf)
                if err != R_OK:
                    return err
                hv = hf.val_len
                if take and cols & C_HEADERS:
                    if _copy_utf8(&self.hk_data, d + hf.key_off, hf.key_len) < 0:
                        return R_NOMEM
                    (<int32_t*>self.hk_off.data)[self.nhdr + 1] = <int32_t>self.hk_data.len
                    _bit(&self.hv_valid, self.nhdr, hv >= 0)
                    if hv < 0:
                        self.hv_nulls += 1
                    else:
                        if _reserve(&self.hv_data, hv) < 0:
                            return R_NOMEM
                        memcpy(self.hv_data.data + self.hv_data.len, d + hf.val_off, hv)
                        self.hv_data.len += hv
                    (<int32_t*>self.hv_off.data)[self.nhdr + 1] = <int32_t>self.hv_data.len
                    self.nhdr += 1
            if pos != end:
                return R_SIZE
            if not take:
                continue
            if cols & C_HEADERS:
                (<int32_t*>self.h_off.data)[r + 1] = <int32_t>self.nhdr
            if cols & C_KEY:
                _bit(&self.k_valid, r, klen >= 0)
                if klen < 0:
                    self.k_nulls += 1
                else:
                    if _reserve(&self.k_data, klen) < 0:
                        return R_NOMEM
                    memcpy(self.k_data.data + self.k_data.len, d + kpos, klen)
                    self.k_data.len += klen
                (<int32_t*>self.k_off.data)[r + 1] = <int32_t>self.k_data.len
            if cols & C_VALUE:
                _bit(&self.v_valid, r, vlen >= 0)
                if vlen < 0:
                    self.v_nulls += 1
                else:
                    if _reserve(&self.v_data, vlen) < 0:
                        return R_NOMEM
                    memcpy(self.v_data.data + self.v_data.len, d + vpos, vlen)
                    self.v_data.len += vlen
                (<int32_t*>self.v_off.data)[r + 1] = <int32_t>self.v_data.len
            if cols & C_OFFSET:
                (<int64_t*>self.offsets.data)[r] = offset
            if cols & C_TIMESTAMP:
                (<int64_t*>self.timestamps.data)[r] = (
                    max_ts if log_append else
                    <int64_t>(<uint64_t>base_ts + <uint64_t>ts_delta)) * 1000
            if cols & C_TIMESTAMP_TYPE:
                (<int32_t*>self.ts_types.data)[r] = 1 if log_append else 0
            self.rows = r + 1
        where[0] = pos
        if pos != n:
            return R_TRAILING
        return R_OK

    cdef int _decode_one(self, const uint8_t* d, Py_ssize_t n, const uint8_t* h,
                         Py_ssize_t* where) noexcept nogil:
        """``_records`` with rollback: on error no row of the batch is kept."""
        cdef Py_ssize_t rows = self.rows, nhdr = self.nhdr
        cdef Py_ssize_t kn = self.k_nulls, vn = self.v_nulls, hn = self.h_nulls
        cdef Py_ssize_t hvn = self.hv_nulls
        cdef Py_ssize_t kd = self.k_data.len, vd = self.v_data.len
        cdef Py_ssize_t hkd = self.hk_data.len, hvd = self.hv_data.len
        cdef int err = self._records(d, n, h, where)
        if err != R_OK:
            self.rows = rows
            self.nhdr = nhdr
            self.k_nulls = kn
            self.v_nulls = vn
            self.h_nulls = hn
            self.hv_nulls = hvn
            self.k_data.len = kd
            self.v_data.len = vd
            self.hk_data.len = hkd
            self.hv_data.len = hvd
        return err

    cdef bint _fits(self, Py_ssize_t section) noexcept nogil:
        """Whether a records section of ``section`` bytes can join the current columns
        without overflowing their int32 offsets (header keys may triple when repaired)."""
        cdef Py_ssize_t most = self.k_data.len
        if self.v_data.len > most:
            most = self.v_data.len
        if self.hv_data.len > most:
            most = self.hv_data.len
        if self.hk_data.len + 3 * section > INT32_MAX:
            return False
        return most + section <= INT32_MAX

    # ---------------------------------------------------------------------------- decode

    def decode(self, buf, Py_ssize_t position=0, Py_ssize_t max_rows=65536,
               Py_ssize_t max_bytes=64 << 20):
        """Decode the whole batches of ``buf`` from ``position``, appending rows.

        Stops before a batch once ``rows >= max_rows`` or the column data holds
        ``max_bytes`` (STATUS_FULL); after the batch that reaches ``end_offset`` or at a
        batch beyond it (STATUS_DONE); at the end of ``buf`` or at an incomplete batch there
        (STATUS_END_OF_BUFFER: ``position`` is where the incomplete batch starts, so the
        caller reads on from there); at a corrupt batch (STATUS_CORRUPT) or a magic 0/1
        message set (STATUS_UNSUPPORTED).

        Returns ``(status, position, size, message)``: ``position`` where it stopped in
        ``buf``; for STATUS_CORRUPT ``size`` is the corrupt batch's size when its framing is
        sound (the caller may skip it), -1 when it is not; ``message`` says what is wrong
        with the batch at ``position`` (None otherwise). Raises MemoryError; never raises
        for bad data.
        """
        cdef Py_buffer view
        cdef const uint8_t* d
        cdef const uint8_t* h
        cdef Py_ssize_t n, pos = position, size = 0, where = 0, section
        cdef int status = -1, code, err = R_OK, codec = 0, magic = 0
        cdef int32_t ldelta
        cdef int64_t base, last
        cdef const char* why = NULL
        cdef object message = None, blob
        cdef Py_buffer bview
        if position < 0:
            raise ValueError(f"negative position {position}")
        PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
        try:
            d = <const uint8_t*>view.buf
            n = view.len
            while status < 0:
                with nogil:
                    while True:
                        if pos >= n:
                            status = S_END_OF_BUFFER
                            break
                        code = batch_frame(d, n, pos, &size)
                        if code == FRAME_SHORT or code == FRAME_CUT:
                            status = S_END_OF_BUFFER
                            break
                        if code == FRAME_MAGIC:
                            magic = batch_magic(d + pos)
                            status = S_UNSUPPORTED if magic < 2 else S_CORRUPT
                            size = -1
                            why = b"not a record batch: magic byte is not 2"
                            break
                        if code == FRAME_LENGTH:
                            status = S_CORRUPT
                            size = -1
                            why = b"batchLength is below the 49 bytes of a batch header"
                            break
                        h = d + pos
                        base = batch_base_offset(h)
                        ldelta = batch_last_offset_delta(h)
                        if ldelta < 0:
                            status = S_CORRUPT
                            why = b"lastOffsetDelta is negative"
                            break
                        last = base + ldelta
                        if base >= self.end_offset:
                            status = S_DONE
                            break
                        if self.next_offset >= 0 and base < self.next_offset:
                            status = S_CORRUPT
                            why = b"its base offset is below the end of the batch before it"
                            break
                        if last < self.start_offset:
                            self.next_offset = last + 1
                            pos += size
                            continue
                        if self.verify_crc and not batch_crc_valid(h, size):
                            status = S_CORRUPT
                            why = b"CRC-32C mismatch"
                            break
                        if (batch_flags(h) & ATTR_CONTROL) or (
                                self.n_ab and (batch_flags(h) & ATTR_TRANSACTIONAL)
                                and self._aborted(batch_producer_id(h), base)):
                            self.next_offset = last + 1
                            pos += size
                            if self.next_offset >= self.end_offset:
                                status = S_DONE
                                break
                            continue
                        if self.rows >= max_rows or self._data_bytes() >= max_bytes:
                            status = S_FULL
                            break
                        codec = batch_flags(h) & ATTR_COMPRESSION_MASK
                        if codec:
                            status = S_DECOMPRESS
                            break
                        section = size - RECORDS_OFFSET
                        if not self._fits(section):
                            if self.rows:
                                status = S_FULL
                            else:
                                status = S_CORRUPT
                                why = b"records too large for one Arrow batch"
                            break
                        err = self._decode_one(h + RECORDS_OFFSET, section, h, &where)
                        if err != R_OK:
                            status = S_CORRUPT
                            break
                        self.next_offset = last + 1
                        pos += size
                        if self.next_offset >= self.end_offset:
                            status = S_DONE
                            break
                if status != S_DECOMPRESS:
                    break
                # A compressed batch: decompress with the GIL, parse without it.
                status = -1
                h = d + pos
                try:
                    blob = _decompress(codec, memoryview(buf)[pos + RECORDS_OFFSET:pos + size])
                except (CorruptMessageError, UnsupportedCompressionTypeError) as e:
                    status = S_CORRUPT
                    message = str(e)
                    break
                PyObject_GetBuffer(blob, &bview, PyBUF_SIMPLE)
                try:
                    if not self._fits(bview.len):
                        if self.rows:
                            status = S_FULL
                        else:
                            status = S_CORRUPT
                            why = b"records too large for one Arrow batch"
                        break
                    with nogil:
                        err = self._decode_one(<const uint8_t*>bview.buf, bview.len, h,
                                               &where)
                finally:
                    PyBuffer_Release(&bview)
                if err != R_OK:
                    status = S_CORRUPT
                    break
                self.next_offset = batch_base_offset(h) + batch_last_offset_delta(h) + 1
                pos += size
                if self.next_offset >= self.end_offset:
                    status = S_DONE
        finally:
            PyBuffer_Release(&view)
        if status == S_CORRUPT and message is None:
            if err != R_OK:
                message = (f"corrupt record at byte {where} of its records section: "
                           f"{record_error(err).decode()}")
            else:
                message = why.decode()
        elif status == S_UNSUPPORTED:
            message = (f"magic {magic}: the legacy message formats (magic 0 and 1) are "
                       f"not read here")
        if status != S_CORRUPT and status != S_UNSUPPORTED:
            size = 0
        if err == R_NOMEM:
            raise MemoryError()
        return (status, pos, size, message)

    cdef Py_ssize_t _data_bytes(self) noexcept nogil:
        return self.k_data.len + self.v_data.len + self.hk_data.len + self.hv_data.len

    # ------------------------------------------------------------------------------ take

    def take(self):
        """Hand the rows decoded so far over as a ``DecodedColumns`` and start afresh."""
        cdef DecodedColumns out = DecodedColumns.__new__(DecodedColumns)
        cdef Py_ssize_t rows = self.rows, bitmap = (self.rows + 7) // 8
        cdef int cols = self.cols
        out.rows = rows
        if cols & C_KEY:
            out.key = (_hand_over(&self.k_valid, bitmap) if self.k_nulls else None,
                       _hand_over(&self.k_off, 4 * (rows + 1)),
                       _hand_over(&self.k_data, self.k_data.len), self.k_nulls)
        if cols & C_VALUE:
            out.value = (_hand_over(&self.v_valid, bitmap) if self.v_nulls else None,
                         _hand_over(&self.v_off, 4 * (rows + 1)),
                         _hand_over(&self.v_data, self.v_data.len), self.v_nulls)
        if cols & C_OFFSET:
            out.offset = _hand_over(&self.offsets, 8 * rows)
        if cols & C_TIMESTAMP:
            out.timestamp = _hand_over(&self.timestamps, 8 * rows)
        if cols & C_TIMESTAMP_TYPE:
            out.timestamp_type = _hand_over(&self.ts_types, 4 * rows)
        if cols & C_HEADERS:
            out.headers = (
                _hand_over(&self.h_valid, bitmap) if self.h_nulls else None,
                _hand_over(&self.h_off, 4 * (rows + 1)), self.h_nulls, self.nhdr,
                _hand_over(&self.hk_off, 4 * (self.nhdr + 1)),
                _hand_over(&self.hk_data, self.hk_data.len),
                _hand_over(&self.hv_valid, (self.nhdr + 7) // 8) if self.hv_nulls else None,
                _hand_over(&self.hv_off, 4 * (self.nhdr + 1)),
                _hand_over(&self.hv_data, self.hv_data.len), self.hv_nulls)
        self._start()
        return out


def utf8_repair(data):
    """``data`` as valid UTF-8, ill-formed parts replaced by U+FFFD as the header-key column
    does (for tests: it must equal ``bytes.decode("utf-8", "replace").encode()``)."""
    cdef Py_buffer view
    cdef _GBuf out
    out.data = NULL
    out.len = out.cap = 0
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if _copy_utf8(&out, <const uint8_t*>view.buf, view.len) < 0:
            raise MemoryError()
        return bytes(_hand_over(&out, out.len))
    finally:
        PyBuffer_Release(&view)
        free(out.data)
