# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# Bounds checks are off because no typed memoryview or list is indexed here by an unchecked
# value: every byte is read through a raw pointer at an offset first checked against the end
# of its buffer (``batch_frame`` for batch headers, ``read_varint``/``_parse_records`` for records,
# explicit ``need`` comparisons in ``decode_legacy``), and list indexes run over ranges the code
# built itself.
"""Compiled record batches: CRC-32C, the batch header view, the validation scan, record
parsing, the batch builder, offset assignment, and the legacy (magic 0/1) decoder.

The batch layout (magic 2) is kafkapy/_batch_layout.pxd's, the one place it is spelled out;
this module is its Python face: ``BatchHeader`` reads the fields by name and the layout's
sizes are exported (``RECORD_BATCH_OVERHEAD``, ``LOG_OVERHEAD``, ``HEADER_LAYOUT``).

Theory of operation: the broker's hot path touches headers only. ``scan_batches`` frames and
CRC-checks a whole Produce payload or log chunk in one GIL-free pass and hands back
``BatchHeader`` views, which read their fields straight from the caller's buffer (they hold a
buffer export, so a bytearray under them cannot be resized). ``assign_offsets`` rewrites
leader-owned header fields in place. Records are only parsed on request (``records()``): one
GIL-free C pass validates every record and notes where its fields lie, then the Python objects
are built. Compression goes through cramjam; snappy is accepted raw or xerial-framed.

Thread-safety: nothing here keeps mutable global state after import; every function may be
called from any thread or worker. Hostile input raises KafkaError subclasses only; lengths and
counts are checked against the bytes present before anything is allocated from them.
"""

from cpython.buffer cimport (PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_FillInfo, PyBuffer_Release,
                             PyObject_GetBuffer)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from kafkapy._batch_layout cimport *
from kafkapy._bigendian cimport rd16, rd32, rd64, wr16, wr32, wr64
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

import struct as _struct
import zlib as _zlib

import cramjam as _cramjam

from kafkapy.errors import (CorruptMessageError, InvalidRecordError, MessageTooLargeError,
                            UnsupportedCompressionTypeError, UnsupportedForMessageFormatError)

cdef extern from "_crc32c.h":
    enum: KP_CRC32C_NIMPL
    uint32_t kp_crc32c_with(int impl, uint32_t crc, const unsigned char* p,
                            size_t n) noexcept nogil
    const char* kp_crc32c_name(int impl)
    unsigned int kp_crc32c_avail
    int kp_crc32c_impl

kp_crc32c_init()

# The layout's numbers for Python code, which reads header fields through BatchHeader and
# needs only sizes (and the tests, which compare the layout with other implementations').
BATCH_HEADER_SIZE = RECORD_BATCH_OVERHEAD
BATCH_HEADER_LAYOUT = (         # (Kafka's field name, offset, size in bytes)
    ("baseOffset", BASE_OFFSET_OFFSET, BASE_OFFSET_LENGTH),
    ("batchLength", LENGTH_OFFSET, LENGTH_LENGTH),
    ("partitionLeaderEpoch", PARTITION_LEADER_EPOCH_OFFSET, PARTITION_LEADER_EPOCH_LENGTH),
    ("magic", MAGIC_OFFSET, MAGIC_LENGTH),
    ("crc", CRC_OFFSET, CRC_LENGTH),
    ("attributes", ATTRIBUTES_OFFSET, ATTRIBUTES_LENGTH),
    ("lastOffsetDelta", LAST_OFFSET_DELTA_OFFSET, LAST_OFFSET_DELTA_LENGTH),
    ("baseTimestamp", BASE_TIMESTAMP_OFFSET, BASE_TIMESTAMP_LENGTH),
    ("maxTimestamp", MAX_TIMESTAMP_OFFSET, MAX_TIMESTAMP_LENGTH),
    ("producerId", PRODUCER_ID_OFFSET, PRODUCER_ID_LENGTH),
    ("producerEpoch", PRODUCER_EPOCH_OFFSET, PRODUCER_EPOCH_LENGTH),
    ("baseSequence", BASE_SEQUENCE_OFFSET, BASE_SEQUENCE_LENGTH),
    ("recordsCount", RECORDS_COUNT_OFFSET, RECORDS_COUNT_LENGTH),
)
BATCH_ATTRIBUTE_MASKS = {
    "compression": ATTR_COMPRESSION_MASK,
    "timestampType": ATTR_TIMESTAMP_TYPE,
    "transactional": ATTR_TRANSACTIONAL,
    "control": ATTR_CONTROL,
    "deleteHorizon": ATTR_DELETE_HORIZON,
}

cdef bytes _XERIAL_MAGIC = b"\x82SNAPPY\x00"
cdef object _bytes_types = (bytes, bytearray, memoryview)


def _crc32c_implementation():
    """Which CRC-32C code crc32c() runs here: "sse4.2+vpclmul", "sse4.2", "armv8-crc" or
    "portable" (the first of _crc32c_paths())."""
    return kp_crc32c_name(kp_crc32c_impl).decode("ascii")


def _crc32c_paths():
    """The CRC-32C implementations this build and CPU can run, the one crc32c() uses first.

    For the tests, which check each of them through _crc32c_with().
    """
    cdef int impl
    return tuple([kp_crc32c_name(impl).decode("ascii")
                  for impl in range(KP_CRC32C_NIMPL - 1, -1, -1)
                  if (kp_crc32c_avail >> impl) & 1])


# Control record keys and values are INT16-versioned, like the attributes.
cdef inline int16_t _rd16(const uint8_t* p) noexcept nogil:
    return <int16_t>rd16(p)


# ----------------------------------------------------------------------------- crc32c

def crc32c(data, uint32_t crc=0):
    """CRC-32C (Castagnoli) of any buffer-protocol object, continuing from ``crc``.

    ``crc32c(b"123456789") == 0xE3069283``; ``crc32c(b, crc32c(a)) == crc32c(a + b)``.
    Raises TypeError/BufferError if ``data`` is not a contiguous buffer.
    """
    cdef Py_buffer view
    cdef uint32_t out
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        with nogil:
            out = kp_crc32c(crc, <const unsigned char*>view.buf, <size_t>view.len)
    finally:
        PyBuffer_Release(&view)
    return out


def _crc32c_with(str name, data, uint32_t crc=0):
    """crc32c() by the named implementation, one of _crc32c_paths() (ValueError otherwise).

    For the tests: crc32c() always runs the one picked at import, this reaches the others.
    """
    cdef Py_buffer view
    cdef uint32_t out
    cdef int impl, found = -1
    for impl in range(KP_CRC32C_NIMPL):
        if (kp_crc32c_avail >> impl) & 1 and kp_crc32c_name(impl).decode("ascii") == name:
            found = impl
    if found < 0:
        raise ValueError(f"no CRC-32C implementation {name!r} here; there are {_crc32c_paths()}")
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        with nogil:
            out = kp_crc32c_with(found, crc, <const unsigned char*>view.buf, <size_t>view.len)
    finally:
        PyBuffer_Release(&view)
    return out


# ------------------------------------------------------------------------ buffer export

cdef class _Buffer:
    """Holds one buffer export of the caller's object for as long as views point into it, and
    re-exports it as flat bytes (so ``memoryview(_Buffer)`` slices are zero-copy)."""
    cdef Py_buffer view
    cdef bint has_view
    cdef const uint8_t* data
    cdef Py_ssize_t size

    def __cinit__(self):
        self.has_view = False

    def __dealloc__(self):
        if self.has_view:
            PyBuffer_Release(&self.view)

    def __getbuffer__(self, Py_buffer* buffer, int flags):
        PyBuffer_FillInfo(buffer, self, <void*>self.data, self.size, self.view.readonly, flags)

    def __releasebuffer__(self, Py_buffer* buffer):
        pass

    cdef object slice(self, Py_ssize_t start, Py_ssize_t stop):
        # Not cached: a memoryview kept here would form a cycle with its own exporter, which
        # the garbage collector cannot clear while the export is live.
        return memoryview(self)[start:stop]


cdef _Buffer _acquire(object obj, bint writable):
    cdef _Buffer b
    if type(obj) is _Buffer and not writable:
        return <_Buffer>obj
    b = _Buffer.__new__(_Buffer)
    PyObject_GetBuffer(obj, &b.view, PyBUF_WRITABLE if writable else PyBUF_SIMPLE)
    b.has_view = True
    b.data = <const uint8_t*>b.view.buf
    b.size = b.view.len
    return b


# ------------------------------------------------------------------------------ framing

# Why a walk stopped beyond batch_frame's FRAME_* codes (1-4).
cdef enum:
    F_CRC = 5
    FRAME_HEADER = 8  # BatchHeader: fewer than 61 bytes at the offset
    A_TOO_LARGE = 6   # assign_offsets(verify=True): a batch above max_batch_size
    A_COUNT = 7       # assign_offsets(verify=True): recordsCount inconsistent


cdef object _frame_error(int code, const uint8_t* d, Py_ssize_t n, Py_ssize_t pos):
    if code == FRAME_HEADER:
        return CorruptMessageError(
            f"no record batch at byte {pos}: {max(n - pos, 0)} bytes left, a batch header "
            f"needs {RECORD_BATCH_OVERHEAD}")
    if code == FRAME_SHORT:
        return CorruptMessageError(
            f"record batch at byte {pos} is cut off: {n - pos} bytes left, too few for a header")
    if code == FRAME_MAGIC:
        return UnsupportedForMessageFormatError(
            f"record batch at byte {pos} has magic {batch_magic(d + pos)}; only magic 2 is "
            f"supported here")
    if code == FRAME_LENGTH:
        return CorruptMessageError(
            f"record batch at byte {pos} has batchLength {batch_length(d + pos)} < 49")
    if code == FRAME_CUT:
        return CorruptMessageError(
            f"record batch at byte {pos} is cut off: batchLength {batch_length(d + pos)} "
            f"but only {n - pos - LOG_OVERHEAD} bytes follow")
    return CorruptMessageError(
        f"record batch at byte {pos} fails its CRC: stored {batch_crc(d + pos):#010x}")


cdef int _frame_header(_Buffer b, Py_ssize_t offset) except -1:
    """FRAME_OK if a whole header's bytes are at ``offset``, else FRAME_HEADER."""
    if offset < 0:
        raise ValueError(f"negative offset {offset}")
    return FRAME_OK if b.size - offset >= RECORD_BATCH_OVERHEAD else FRAME_HEADER


# --------------------------------------------------------------------------- BatchHeader

cdef class BatchHeader:
    """Zero-copy view of one magic-2 record batch inside a caller's buffer.

    ``BatchHeader(buf, offset=0)`` checks the framing only (not the CRC: see ``crc_valid``).
    Fields are read from the buffer on every access, so they reflect ``assign_offsets``.
    ``BatchHeader.header_only`` views a header whose batch need not be in the buffer.

    Raises CorruptMessageError if fewer than 61 bytes remain, batchLength < 49 or the batch
    runs past the buffer; UnsupportedForMessageFormatError if magic != 2.
    """
    cdef _Buffer _buf
    cdef const uint8_t* _p
    cdef Py_ssize_t _pos
    cdef Py_ssize_t _size
    cdef bint _whole            # False: only the header is in the buffer (header_only)

    def __init__(self, buf, Py_ssize_t offset=0):
        cdef _Buffer b = _acquire(buf, False)
        cdef Py_ssize_t size = 0
        cdef int code = _frame_header(b, offset)
        if code == FRAME_OK:
            code = batch_frame(b.data, b.size, offset, &size)
        if code != FRAME_OK:
            raise _frame_error(code, b.data, b.size, offset)
        self._set(b, offset, size)

    @staticmethod
    def header_only(buf, Py_ssize_t offset=0):
        """A view of the 61-byte batch header at ``offset`` of ``buf``, whose batch may run
        past the end of ``buf`` (a header read on its own from a file). Every field reads as
        in a whole batch, ``size`` included; ``raw``, ``compute_crc``, ``crc_valid`` and
        ``records()`` raise ValueError unless the whole batch is there.

        Raises CorruptMessageError if fewer than 61 bytes remain or batchLength < 49;
        UnsupportedForMessageFormatError if magic != 2.
        """
        cdef _Buffer b = _acquire(buf, False)
        cdef Py_ssize_t size = 0
        cdef int code = _frame_header(b, offset)
        cdef BatchHeader h
        if code == FRAME_OK:
            code = batch_frame(b.data, b.size, offset, &size)
        if code == FRAME_CUT:
            size = <Py_ssize_t>batch_length(b.data + offset) + LOG_OVERHEAD
        elif code != FRAME_OK:
            raise _frame_error(code, b.data, b.size, offset)
        h = BatchHeader.__new__(BatchHeader)
        h._set(b, offset, size)
        h._whole = code == FRAME_OK
        return h

    cdef void _set(self, _Buffer b, Py_ssize_t pos, Py_ssize_t size):
        self._buf = b
        self._p = b.data + pos
        self._pos = pos
        self._size = size
        self._whole = True

    cdef int _need_whole(self) except -1:
        if not self._whole:
            raise ValueError(f"only the header of the batch at byte {self._pos} is in the "
                             f"buffer, not its {self._size} bytes")
        return 0

    @property
    def base_offset(self):
        return batch_base_offset(self._p)

    @property
    def batch_length(self):
        return batch_length(self._p)

    @property
    def partition_leader_epoch(self):
        return batch_leader_epoch(self._p)

    @property
    def magic(self):
        return batch_magic(self._p)

    @property
    def crc(self):
        return batch_crc(self._p)

    @property
    def attributes(self):
        return batch_attributes(self._p)

    @property
    def compression(self):
        return batch_flags(self._p) & ATTR_COMPRESSION_MASK

    @property
    def timestamp_type(self):
        return 1 if batch_flags(self._p) & ATTR_TIMESTAMP_TYPE else 0

    @property
    def is_transactional(self):
        return (batch_flags(self._p) & ATTR_TRANSACTIONAL) != 0

    @property
    def is_control(self):
        return (batch_flags(self._p) & ATTR_CONTROL) != 0

    @property
    def has_delete_horizon(self):
        return (batch_flags(self._p) & ATTR_DELETE_HORIZON) != 0

    @property
    def last_offset_delta(self):
        return batch_last_offset_delta(self._p)

    @property
    def base_timestamp(self):
        return batch_base_timestamp(self._p)

    @property
    def max_timestamp(self):
        return batch_max_timestamp(self._p)

    @property
    def producer_id(self):
        return batch_producer_id(self._p)

    @property
    def producer_epoch(self):
        return batch_producer_epoch(self._p)

    @property
    def base_sequence(self):
        return batch_base_sequence(self._p)

    @property
    def record_count(self):
        return batch_records_count(self._p)

    @property
    def size(self):
        return self._size

    @property
    def last_offset(self):
        return batch_base_offset(self._p) + batch_last_offset_delta(self._p)

    @property
    def next_offset(self):
        return batch_base_offset(self._p) + batch_last_offset_delta(self._p) + 1

    @property
    def position(self):
        return self._pos

    @property
    def raw(self):
        """memoryview of the whole batch (zero-copy; writable if the buffer is)."""
        self._need_whole()
        return self._buf.slice(self._pos, self._pos + self._size)

    def compute_crc(self):
        """CRC-32C over bytes [21, size) of the batch."""
        cdef uint32_t c
        self._need_whole()
        with nogil:
            c = batch_compute_crc(self._p, self._size)
        return c

    @property
    def crc_valid(self):
        return self.compute_crc() == batch_crc(self._p)

    def records(self):
        """Decompress (if needed) and parse every record of the batch.

        Offsets are base_offset + offsetDelta; timestamps baseTimestamp + timestampDelta, or
        maxTimestamp for every record under LogAppendTime (as Kafka's readers do). Header keys
        are decoded as UTF-8 with U+FFFD for invalid bytes, like Java's ``new String``.

        Raises CorruptMessageError on any malformed record (varint overrun, a length past the
        record or batch end, a record whose fields do not fill its length, fewer or more
        records than recordsCount, undecompressable data); UnsupportedCompressionTypeError for
        codecs 5-7.
        """
        cdef int codec = batch_flags(self._p) & ATTR_COMPRESSION_MASK
        cdef _Buffer blob
        cdef const uint8_t* p = self._p
        self._need_whole()
        if codec == 0:
            return _parse_records(p + RECORDS_OFFSET, self._size - RECORDS_OFFSET, p)
        if codec > 4:
            raise UnsupportedCompressionTypeError(
                f"record batch at byte {self._pos} uses unknown compression codec {codec}")
        blob = _acquire(_decompress(codec, self._buf.slice(self._pos + RECORDS_OFFSET,
                                                           self._pos + self._size), False),
                        False)
        return _parse_records(blob.data, blob.size, p)

    def __repr__(self):
        return (f"BatchHeader(position={self._pos}, base_offset={self.base_offset}, "
                f"size={self._size}, record_count={self.record_count}, "
                f"attributes={self.attributes:#x}, producer_id={self.producer_id}, "
                f"base_sequence={self.base_sequence})")


# ----------------------------------------------------------------------- Produce's checks

def check_produce_batch(buf, int version):
    """The checks of a Produce (v3+) partition's records before the log, on the header only
    (the log checks the CRC and the records): Kafka's ProduceRequest.validateRecords (exactly
    one batch, magic 2, zstd only from v7) and the leader's refusals of client batches (base
    offset 0, no control batch). Returns the batch's header view.

    Raises InvalidRecordError; UnsupportedCompressionTypeError for zstd below v7.
    """
    cdef _Buffer b = _acquire(buf, False)
    cdef const uint8_t* p = b.data
    cdef Py_ssize_t n = b.size
    cdef int64_t length
    cdef BatchHeader h
    if n < MAGIC_FRAME_SIZE:
        raise InvalidRecordError(f"{n} bytes are not a record batch")
    if batch_magic(p) != CURRENT_MAGIC:
        # Kafka answers INVALID_RECORD for any other magic on Produce v3+ (validateRecords:
        # "only allowed to contain record batches with magic version 2").
        raise InvalidRecordError(
            f"Produce requests with version {version} are only allowed to contain record "
            f"batches with magic version 2, not magic {p[MAGIC_OFFSET]}")
    if n < RECORD_BATCH_OVERHEAD:
        raise InvalidRecordError(f"{n} bytes are not a record batch")
    length = <int64_t>batch_length(p) + LOG_OVERHEAD
    if length != n:
        raise InvalidRecordError(
            "Produce requests with version 3 and above must carry exactly one record batch "
            f"({n} bytes, the first batch is {length})")
    if batch_base_offset(p) != 0:
        raise InvalidRecordError(f"the batch's base offset is {batch_base_offset(p)}, not 0")
    if batch_flags(p) & ATTR_CONTROL:
        raise InvalidRecordError("clients may not produce control batches")
    if (batch_flags(p) & ATTR_COMPRESSION_MASK) == 4 and version < 7:     # zstd
        raise UnsupportedCompressionTypeError(
            f"zstd compression needs Produce v7 or later, not v{version}")
    h = BatchHeader.__new__(BatchHeader)
    h._set(b, 0, n)
    return h


# --------------------------------------------------------------------------- scan_batches

cdef class BatchScan:
    """Result of ``scan_batches``: the whole, valid batches from the start of the buffer and
    why the walk stopped, if it stopped early."""
    cdef readonly list batches
    cdef readonly Py_ssize_t valid_bytes
    cdef readonly object error
    cdef readonly bint truncated

    def __repr__(self):
        return (f"BatchScan(batches={len(self.batches)}, valid_bytes={self.valid_bytes}, "
                f"error={self.error!r}, truncated={self.truncated})")


def scan_batches(buf, *, bint verify_crc=True):
    """Walk consecutive magic-2 batches of ``buf``, reading headers only (plus every byte once
    for the CRC when ``verify_crc``), without the GIL.

    Never raises for bad data (only TypeError/BufferError for a non-buffer): the result says
    how far the buffer is valid (``valid_bytes``), why it stopped (``error``:
    CorruptMessageError for a bad CRC, batchLength < 49 or a cut-off batch,
    UnsupportedForMessageFormatError for magic != 2; None if all of ``buf`` is valid), and
    whether it stopped at a partial trailing batch (``truncated``).
    """
    cdef _Buffer b = _acquire(buf, False)
    cdef const uint8_t* d = b.data
    cdef Py_ssize_t n = b.size
    cdef Py_ssize_t pos = 0, size = 0, count = 0, cap = 16
    cdef Py_ssize_t* found = <Py_ssize_t*>malloc(cap * 2 * sizeof(Py_ssize_t))
    cdef Py_ssize_t* grown
    cdef int code = FRAME_OK
    cdef Py_ssize_t i
    cdef BatchHeader h
    cdef BatchScan scan = BatchScan.__new__(BatchScan)
    if found == NULL:
        raise MemoryError()
    try:
        with nogil:
            while pos < n:
                code = batch_frame(d, n, pos, &size)
                if code != FRAME_OK:
                    break
                if verify_crc and not batch_crc_valid(d + pos, size):
                    code = F_CRC
                    break
                if count == cap:
                    grown = <Py_ssize_t*>realloc(found, cap * 4 * sizeof(Py_ssize_t))
                    if grown == NULL:
                        code = -1
                        break
                    found = grown
                    cap *= 2
                found[2 * count] = pos
                found[2 * count + 1] = size
                count += 1
                pos += size
        if code == -1:
            raise MemoryError()
        scan.batches = []
        for i in range(count):
            h = BatchHeader.__new__(BatchHeader)
            h._set(b, found[2 * i], found[2 * i + 1])
            scan.batches.append(h)
    finally:
        free(found)
    scan.valid_bytes = pos
    scan.truncated = code == FRAME_SHORT or code == FRAME_CUT
    scan.error = None if pos == n else _frame_error(code, d, n, pos)
    return scan


# -------------------------------------------------------------------------------- records

cdef class Record:
    """One record of a magic-2 batch, as decoded by ``BatchHeader.records()``."""
    cdef public int64_t offset
    cdef public int64_t timestamp
    cdef public object key
    cdef public object value
    cdef public list headers
    cdef public int32_t sequence
    cdef public int attributes

    def __init__(self, int64_t offset, int64_t timestamp, key, value, headers=None,
                 int32_t sequence=-1, int attributes=0):
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value = value
        self.headers = [] if headers is None else list(headers)
        self.sequence = sequence
        self.attributes = attributes

    def _fields(self):
        return (self.offset, self.timestamp, self.key, self.value, self.headers,
                self.sequence, self.attributes)

    def __eq__(self, other):
        if type(other) is not Record:
            return NotImplemented
        return self._fields() == (<Record>other)._fields()

    __hash__ = None

    def __repr__(self):
        return (f"Record(offset={self.offset}, timestamp={self.timestamp}, key={self.key!r}, "
                f"value={self.value!r}, headers={self.headers!r}, sequence={self.sequence}, "
                f"attributes={self.attributes})")


cdef struct RecDesc:
    RecordFields f
    Py_ssize_t hdr_first     # its headers: hdrs[hdr_first:hdr_first + f.header_count]

cdef int _scan_records(const uint8_t* d, Py_ssize_t n, Py_ssize_t count, RecDesc* recs,
                       HeaderFields** hdrs, Py_ssize_t* hdr_cap, Py_ssize_t* nhdr,
                       Py_ssize_t* where) noexcept nogil:
    """Validate ``count`` records in d[0:n] and note where their fields lie. GIL-free."""
    cdef Py_ssize_t pos = 0, i, j
    cdef int32_t hc
    cdef int err
    cdef RecDesc* r
    cdef HeaderFields* grown
    for i in range(count):
        where[0] = pos
        r = &recs[i]
        err = read_record(d, n, &pos, &r.f)
        if err != R_OK:
            return err
        hc = r.f.header_count
        r.hdr_first = nhdr[0]
        if nhdr[0] + hc > hdr_cap[0]:
            j = hdr_cap[0] * 2
            if j < nhdr[0] + hc:
                j = nhdr[0] + hc
            grown = <HeaderFields*>realloc(hdrs[0], j * sizeof(HeaderFields))
            if grown == NULL:
                return R_NOMEM
            hdrs[0] = grown
            hdr_cap[0] = j
        for j in range(hc):
            err = read_record_header(d, r.f.end, &pos, &hdrs[0][nhdr[0]])
            if err != R_OK:
                return err
            nhdr[0] += 1
        if pos != r.f.end:
            return R_SIZE
    where[0] = pos
    if pos != n:
        return R_TRAILING
    return R_OK


cdef inline object _bytes_or_none(const uint8_t* d, Py_ssize_t off, int32_t n):
    if n < 0:
        return None
    return PyBytes_FromStringAndSize(<const char*>d + off, n)


cdef list _parse_records(const uint8_t* d, Py_ssize_t n, const uint8_t* header):
    """Records of one batch: ``d[0:n]`` is the (decompressed) records section, ``header`` the
    61-byte batch header they belong to."""
    cdef int32_t count = batch_records_count(header)
    cdef int64_t base_offset = batch_base_offset(header)
    cdef int64_t base_ts = batch_base_timestamp(header)
    cdef int64_t max_ts = batch_max_timestamp(header)
    cdef int64_t base_seq = batch_base_sequence(header)
    cdef bint log_append = (batch_flags(header) & ATTR_TIMESTAMP_TYPE) != 0
    cdef RecDesc* recs
    cdef HeaderFields* hdrs = NULL
    cdef HeaderFields* h
    cdef RecDesc* r
    cdef Py_ssize_t hdr_cap = 0, nhdr = 0, where = 0, i, j
    cdef int err
    cdef int64_t seq
    cdef list out, headers
    cdef Record rec
    if count < 0 or <Py_ssize_t>count > n // (MIN_RECORD_BODY + 1):
        raise CorruptMessageError(
            f"recordsCount {count} is impossible in {n} bytes of records")
    if count == 0:
        if n != 0:
            raise CorruptMessageError(f"recordsCount is 0 but {n} bytes of records follow")
        return []
    recs = <RecDesc*>PyMem_Malloc(count * sizeof(RecDesc))
    if recs == NULL:
        raise MemoryError()
    try:
        with nogil:
            err = _scan_records(d, n, count, recs, &hdrs, &hdr_cap, &nhdr, &where)
        if err == R_NOMEM:
            raise MemoryError()
        if err != R_OK:
            raise CorruptMessageError(
                f"corrupt record at byte {where} of the records section: "
                f"{record_error(err).decode()}")
        out = [None] * count
        for i in range(count):
            r = &recs[i]
            rec = Record.__new__(Record)
            rec.offset = <int64_t>(<uint64_t>base_offset + <uint64_t><int64_t>r.f.offset_delta)
            if log_append:
                rec.timestamp = max_ts
            else:
                rec.timestamp = <int64_t>(<uint64_t>base_ts + <uint64_t>r.f.ts_delta)
            rec.key = _bytes_or_none(d, r.f.key_off, r.f.key_len)
            rec.value = _bytes_or_none(d, r.f.val_off, r.f.val_len)
            headers = []
            for j in range(r.hdr_first, r.hdr_first + r.f.header_count):
                h = &hdrs[j]
                headers.append((PyUnicode_DecodeUTF8(<const char*>d + h.key_off, h.key_len,
                                                     "replace"),
                                _bytes_or_none(d, h.val_off, h.val_len)))
            rec.headers = headers
            # Kafka's DefaultRecordBatch.incrementSequence: wraps at INT32_MAX to 0.
            if base_seq < 0:
                rec.sequence = -1
            else:
                seq = base_seq + r.f.offset_delta
                if seq > INT32_MAX:
                    seq -= <int64_t>INT32_MAX + 1
                rec.sequence = <int32_t>seq
            rec.attributes = r.f.attrs
            out[i] = rec
        return out
    finally:
        PyMem_Free(recs)
        free(hdrs)


# ---------------------------------------------------------------------------- compression

cdef uint32_t _xxh32_small(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """xxHash32 (seed 0) of fewer than 16 bytes: the LZ4 frame descriptor checksum."""
    cdef uint32_t P1 = 2654435761U, P2 = 2246822519U, P3 = 3266489917U
    cdef uint32_t P4 = 668265263U, P5 = 374761393U
    cdef uint32_t h = P5 + <uint32_t>n
    cdef Py_ssize_t i = 0
    cdef uint32_t w
    while i + 4 <= n:
        w = (<uint32_t>p[i] | (<uint32_t>p[i + 1] << 8) | (<uint32_t>p[i + 2] << 16)
             | (<uint32_t>p[i + 3] << 24))
        h += w * P3
        h = ((h << 17) | (h >> 15)) * P4
        i += 4
    while i < n:
        h += p[i] * P5
        h = ((h << 11) | (h >> 21)) * P1
        i += 1
    h ^= h >> 15
    h *= P2
    h ^= h >> 13
    h *= P3
    h ^= h >> 16
    return h


cdef object _fix_lz4_header_checksum(object data):
    """Kafka before 0.10 (magic 0) hashed the LZ4 frame magic into the descriptor checksum;
    its own reader ignored the checksum. Recompute it so a standard decoder accepts the frame."""
    cdef bytearray fixed = bytearray(data)
    cdef Py_ssize_t n = len(fixed), desc_end
    cdef uint8_t* p = <uint8_t*><char*>fixed
    if n < 7 or rd32(p) != 0x04224D18:
        return fixed
    desc_end = 6
    if p[4] & 0x08:
        desc_end += 8          # content size
    if p[4] & 0x01:
        desc_end += 4          # dictionary id
    if desc_end >= n:
        return fixed
    p[desc_end] = <uint8_t>((_xxh32_small(p + 4, desc_end - 4) >> 8) & 0xFF)
    return fixed


cdef object _snappy_decode(object data):
    cdef _Buffer b = _acquire(data, False)
    cdef const uint8_t* p = b.data
    cdef Py_ssize_t n = b.size, pos = 16
    cdef int32_t block
    cdef list parts
    if n < 16 or memcmp_magic(p) != 0:
        return _cramjam.snappy.decompress_raw(data)
    # xerial framing: magic(8) version(4) compat(4), then [INT32 length][raw snappy block]*
    parts = []
    while pos < n:
        if n - pos < 4:
            raise CorruptMessageError("xerial snappy stream: truncated block length")
        block = <int32_t>rd32(p + pos)
        pos += 4
        if block < 0 or <Py_ssize_t>block > n - pos:
            raise CorruptMessageError(f"xerial snappy stream: block of {block} bytes runs past "
                                      f"the end")
        parts.append(_cramjam.snappy.decompress_raw(b.slice(pos, pos + block)))
        pos += block
    if len(parts) == 1:
        return parts[0]
    return b"".join([bytes(x) for x in parts])


cdef inline int memcmp_magic(const uint8_t* p) noexcept nogil:
    cdef const char* m = b"\x82SNAPPY\x00"
    cdef int i
    for i in range(8):
        if p[i] != <uint8_t>m[i]:
            return 1
    return 0


cdef object _decompress(int codec, object data, bint legacy_magic0):
    """The decompressed records section, as any buffer object. CorruptMessageError if the
    codec's decoder refuses it."""
    try:
        if codec == 1:
            return _cramjam.gzip.decompress(data)
        if codec == 2:
            return _snappy_decode(data)
        if codec == 3:
            if legacy_magic0:
                data = _fix_lz4_header_checksum(data)
            return _cramjam.lz4.decompress(data)
        if codec == 4:
            return _cramjam.zstd.decompress(data)
    except _cramjam.DecompressionError as e:
        raise CorruptMessageError(f"cannot decompress records ({_CODEC_NAMES[codec]}): {e}") \
            from e
    raise UnsupportedCompressionTypeError(f"unknown compression codec {codec}")


def decompress(int codec, data, bint legacy_magic0=False):
    """The decompressed records section of a batch compressed with ``codec`` (1 gzip,
    2 snappy raw or xerial, 3 lz4 frame, 4 zstd): the one codec dispatch of kafkapy, shared
    with the Spark reader (kafkapy._arrow) and the message format conversion
    (kafkapy._legacy). ``legacy_magic0``: the value of a magic 0 wrapper message, whose lz4
    frame may carry Kafka 0.8/0.9's broken descriptor checksum. Raises CorruptMessageError,
    UnsupportedCompressionTypeError."""
    return _decompress(codec, data, legacy_magic0)


def compress(int codec, data, bint legacy_magic0=False):
    """``data`` compressed with ``codec`` (1-4) as Kafka's producers frame it (snappy in
    xerial blocks, lz4 frames of independent blocks); with ``legacy_magic0`` an lz4 frame
    carries the descriptor checksum Kafka's magic 0 writer computes (over the frame magic
    too: KafkaLZ4BlockOutputStream's useBrokenFlagDescriptorChecksum). For the message
    format conversion (kafkapy._legacy)."""
    cdef bytes out = _compress(codec, data)
    cdef bytearray broken
    cdef uint8_t* p
    cdef Py_ssize_t desc_end
    if codec != 3 or not legacy_magic0 or len(out) < 7:
        return out
    broken = bytearray(out)
    p = <uint8_t*><char*>broken
    desc_end = 6 + (8 if p[4] & 0x08 else 0) + (4 if p[4] & 0x01 else 0)
    if desc_end >= len(broken) or desc_end >= 16:      # _xxh32_small's limit
        return out
    p[desc_end] = <uint8_t>((_xxh32_small(p, desc_end) >> 8) & 0xFF)
    return bytes(broken)


_CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd", "5", "6", "7")


cdef bytes _compress(int codec, object data):
    if codec == 1:
        return bytes(_cramjam.gzip.compress(data))
    if codec == 2:
        return _snappy_xerial(data)
    if codec == 3:
        # Kafka's LZ4 reader needs independent blocks (KIP-57); no content checksum, as Java.
        c = _cramjam.lz4.Compressor(content_checksum=False, block_linked=False)
        c.compress(data)
        return bytes(c.finish())
    if codec == 4:
        return bytes(_cramjam.zstd.compress(data, level=3))
    raise UnsupportedCompressionTypeError(f"unknown compression codec {codec}")


cdef bytes _snappy_xerial(object data):
    """snappy-java's framing, which Java consumers and Kafka expect (32 KiB blocks)."""
    cdef object mv = memoryview(data)
    cdef Py_ssize_t n = len(mv), i
    cdef list parts = [_XERIAL_MAGIC + b"\x00\x00\x00\x01\x00\x00\x00\x01"]
    cdef bytes block
    for i in range(0, n, 32768):
        block = bytes(_cramjam.snappy.compress_raw(mv[i:i + 32768]))
        parts.append(len(block).to_bytes(4, "big"))
        parts.append(block)
    return b"".join(parts)


# ------------------------------------------------------------------------------ building

cdef struct _Out:
    uint8_t* data
    Py_ssize_t len
    Py_ssize_t cap

cdef int _reserve(_Out* o, Py_ssize_t extra) except -1:
    cdef Py_ssize_t cap
    cdef uint8_t* grown
    if o.len + extra <= o.cap:
        return 0
    cap = o.cap * 2
    if cap < o.len + extra:
        cap = o.len + extra
    grown = <uint8_t*>PyMem_Realloc(o.data, cap)
    if grown == NULL:
        raise MemoryError()
    o.data = grown
    o.cap = cap
    return 0


cdef inline int _view_of(object obj, Py_buffer* view, const char** ptr,
                         Py_ssize_t* n, str what) except -1:
    """Pointer and length of a bytes-like ``obj``; returns 1 if ``view`` must be released."""
    if type(obj) is bytes:
        ptr[0] = PyBytes_AS_STRING(obj)
        n[0] = PyBytes_GET_SIZE(obj)
        return 0
    if not isinstance(obj, _bytes_types):
        raise TypeError(f"{what} must be bytes-like or None, not {type(obj).__name__}")
    PyObject_GetBuffer(obj, view, PyBUF_SIMPLE)
    ptr[0] = <const char*>view.buf
    n[0] = view.len
    return 1


cdef int _write_bytes_field(_Out* o, object obj, str what) except -1:
    """VARINT length (-1 for None) then the bytes, reserving room as needed."""
    cdef Py_buffer view
    cdef const char* ptr
    cdef Py_ssize_t n
    cdef int release
    if obj is None:
        _reserve(o, 1)
        o.data[o.len] = 1            # zigzag(-1)
        o.len += 1
        return 0
    release = _view_of(obj, &view, &ptr, &n, what)
    try:
        if n > INT32_MAX:
            raise ValueError(f"{what} longer than 2 GiB")
        _reserve(o, 5 + n)
        o.len = write_varlong(o.data + o.len, n) - o.data
        memcpy(o.data + o.len, ptr, n)
        o.len += n
    finally:
        if release:
            PyBuffer_Release(&view)
    return 0


cdef int _write_record(_Out* o, object key, object value, object headers, int64_t ts_delta,
                       int32_t offset_delta) except -1:
    # The length prefix comes first but is only known after the body: write the body after
    # a 5-byte gap, then move it down next to its real (usually 1-2 byte) prefix.
    cdef Py_ssize_t start = o.len, body, plen
    cdef const char* hk
    cdef Py_ssize_t hklen
    cdef uint8_t prefix[5]
    _reserve(o, 5 + 1 + 10 + 5)
    o.len += 5
    body = o.len
    o.data[o.len] = 0                # record attributes
    o.len += 1
    o.len = write_varlong(o.data + o.len, ts_delta) - o.data
    o.len = write_varlong(o.data + o.len, offset_delta) - o.data
    _write_bytes_field(o, key, "key")
    _write_bytes_field(o, value, "value")
    if headers is None:
        headers = ()
    _reserve(o, 5)
    o.len = write_varlong(o.data + o.len, len(headers)) - o.data
    for hkey, hvalue in headers:
        if not isinstance(hkey, str):
            raise TypeError(f"header keys must be str, not {type(hkey).__name__}")
        hk = PyUnicode_AsUTF8AndSize(hkey, &hklen)
        _reserve(o, 5 + hklen)
        o.len = write_varlong(o.data + o.len, hklen) - o.data
        memcpy(o.data + o.len, hk, hklen)
        o.len += hklen
        _write_bytes_field(o, hvalue, "header value")
    if o.len - body > INT32_MAX:
        raise ValueError("record longer than 2 GiB")
    plen = write_varlong(prefix, o.len - body) - prefix
    memcpy(o.data + start, prefix, plen)
    if plen != 5:
        # memmove semantics: regions overlap, so copy forwards byte by byte.
        _move_down(o.data + start + plen, o.data + body, o.len - body)
        o.len -= 5 - plen
    return 0


cdef inline void _move_down(uint8_t* dst, const uint8_t* src, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        dst[i] = src[i]


def build_batch(records, *, int64_t base_offset=0, int compression=0, int timestamp_type=0,
                int64_t producer_id=-1, int producer_epoch=-1, int32_t base_sequence=-1,
                bint is_transactional=False, bint is_control=False,
                int32_t partition_leader_epoch=-1, last_offset_delta=None,
                delete_horizon=None, max_timestamp=None):
    """Encode one magic-2 batch from ``records``, a sequence of
    ``(key, value, headers, timestamp_ms)`` tuples (key/value bytes-like or None, headers a
    list of ``(str, bytes | None)``), or of ``(key, value, headers, timestamp_ms,
    offset_delta)`` 5-tuples with rising offset deltas (the log cleaner keeps offsets).

    Offset deltas are 0..n-1 unless given; lastOffsetDelta is the last record's unless
    ``last_offset_delta`` keeps a larger original one; baseTimestamp is the first timestamp,
    or ``delete_horizon`` (which also sets attribute bit 6, as Kafka's cleaner does, record
    timestamps staying exact through their deltas); maxTimestamp is the largest timestamp or
    ``max_timestamp`` (LogAppendTime batches keep theirs); the CRC is filled in. Codecs 1-4
    compress the records section with cramjam (snappy with xerial framing, lz4 as an
    independent-block frame, as the Java client).

    Raises ValueError for an empty ``records`` or out-of-range arguments (offset deltas that
    do not rise), TypeError for wrongly typed fields, UnsupportedCompressionTypeError for a
    codec outside 0-4.
    """
    cdef _Out o
    cdef Py_ssize_t n = len(records), i
    cdef int64_t first_ts = 0, max_ts = 0, ts
    cdef int attrs
    cdef uint8_t* h
    cdef bytes out, blob
    cdef uint32_t c
    cdef Py_ssize_t total
    cdef int64_t prev_delta = -1, delta, last_delta
    cdef bint has_horizon = delete_horizon is not None
    if n == 0:
        raise ValueError("a record batch needs at least one record")
    if n > INT32_MAX:
        raise ValueError("too many records for one batch")
    if not 0 <= compression <= 4:
        raise UnsupportedCompressionTypeError(f"unknown compression codec {compression}")
    if timestamp_type not in (0, 1):
        raise ValueError(f"timestamp_type must be 0 or 1, not {timestamp_type}")
    if not -32768 <= producer_epoch <= 32767:
        raise ValueError(f"producer_epoch {producer_epoch} out of INT16 range")
    attrs = compression
    if timestamp_type:
        attrs |= ATTR_TIMESTAMP_TYPE
    if is_transactional:
        attrs |= ATTR_TRANSACTIONAL
    if is_control:
        attrs |= ATTR_CONTROL
    if has_horizon:
        attrs |= ATTR_DELETE_HORIZON
    o.cap = RECORD_BATCH_OVERHEAD + 64 * n
    o.len = RECORD_BATCH_OVERHEAD
    o.data = <uint8_t*>PyMem_Malloc(o.cap)
    if o.data == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            rec = records[i]
            if len(rec) == 5:
                key, value, headers, ts, delta = rec
                if delta <= prev_delta or delta > INT32_MAX:
                    raise ValueError(f"offset delta {delta} does not rise from {prev_delta}")
            else:
                key, value, headers, ts = rec
                delta = i
            prev_delta = delta
            if i == 0:
                first_ts = max_ts = ts
                if has_horizon:
                    first_ts = delete_horizon
            elif ts > max_ts:
                max_ts = ts
            _write_record(&o, key, value, headers,
                          <int64_t>(<uint64_t>ts - <uint64_t>first_ts), <int32_t>delta)
        if compression:
            blob = _compress(compression, PyBytes_FromStringAndSize(
                <const char*>o.data + RECORD_BATCH_OVERHEAD, o.len - RECORD_BATCH_OVERHEAD))
            out = PyBytes_FromStringAndSize(NULL, RECORD_BATCH_OVERHEAD + len(blob))
            memcpy(PyBytes_AS_STRING(out) + RECORD_BATCH_OVERHEAD, PyBytes_AS_STRING(blob),
                   len(blob))
        else:
            out = PyBytes_FromStringAndSize(<const char*>o.data, o.len)
    finally:
        PyMem_Free(o.data)
    # A fresh bytes object nobody else has seen yet: filling it in place is safe.
    h = <uint8_t*>PyBytes_AS_STRING(out)
    total = PyBytes_GET_SIZE(out)
    if total - LOG_OVERHEAD > INT32_MAX:
        raise ValueError("record batch longer than 2 GiB")
    wr64(h + BASE_OFFSET_OFFSET, <uint64_t>base_offset)
    wr32(h + LENGTH_OFFSET, <uint32_t>(total - LOG_OVERHEAD))
    wr32(h + PARTITION_LEADER_EPOCH_OFFSET, <uint32_t>partition_leader_epoch)
    h[MAGIC_OFFSET] = CURRENT_MAGIC
    wr16(h + ATTRIBUTES_OFFSET, <uint32_t>attrs)
    last_delta = prev_delta
    if last_offset_delta is not None:
        if last_offset_delta < prev_delta or last_offset_delta > INT32_MAX:
            raise ValueError(f"last_offset_delta {last_offset_delta} is below the last "
                             f"record's offset delta {prev_delta}")
        last_delta = last_offset_delta
    if max_timestamp is not None:
        max_ts = max_timestamp
    wr32(h + LAST_OFFSET_DELTA_OFFSET, <uint32_t>last_delta)
    wr64(h + BASE_TIMESTAMP_OFFSET, <uint64_t>first_ts)
    wr64(h + MAX_TIMESTAMP_OFFSET, <uint64_t>max_ts)
    wr64(h + PRODUCER_ID_OFFSET, <uint64_t>producer_id)
    wr16(h + PRODUCER_EPOCH_OFFSET, <uint32_t>producer_epoch)
    wr32(h + BASE_SEQUENCE_OFFSET, <uint32_t>base_sequence)
    wr32(h + RECORDS_COUNT_OFFSET, <uint32_t>n)
    with nogil:
        c = batch_compute_crc(h, total)
    wr32(h + CRC_OFFSET, c)
    return out


# ------------------------------------------------------------------------- control records

cdef class ControlRecord:
    """The key and value of a control record: ``type`` 0 ABORT, 1 COMMIT (2-6 are KRaft's,
    whose value is not a transaction marker: ``coordinator_epoch`` is then -1)."""
    cdef public int version
    cdef public int type
    cdef public int32_t coordinator_epoch

    def __init__(self, int version, int type, int32_t coordinator_epoch):
        self.version = version
        self.type = type
        self.coordinator_epoch = coordinator_epoch

    def __eq__(self, other):
        if type(other) is not ControlRecord:
            return NotImplemented
        o = <ControlRecord>other
        return (self.version, self.type, self.coordinator_epoch) == (
            o.version, o.type, o.coordinator_epoch)

    __hash__ = None

    def __repr__(self):
        return (f"ControlRecord(version={self.version}, type={self.type}, "
                f"coordinator_epoch={self.coordinator_epoch})")


def decode_control_record(Record record not None):
    """Parse a control record's key (INT16 version, INT16 type) and, for ABORT/COMMIT markers,
    its value (INT16 version, INT32 coordinator epoch).

    Raises InvalidRecordError (as Kafka's ControlRecordType/EndTransactionMarker do) if the key
    or a marker value is null or too short.
    """
    key = record.key
    value = record.value
    if key is None or len(key) < 4:
        raise InvalidRecordError("control record key is null or shorter than 4 bytes")
    cdef const uint8_t* k = <const uint8_t*><const char*>key
    cdef const uint8_t* v
    cdef int version = _rd16(k)
    cdef int ctype = _rd16(k + 2)
    cdef int32_t epoch = -1
    if ctype == 0 or ctype == 1:
        if value is None or len(value) < 6:
            raise InvalidRecordError(
                "transaction marker value is null or shorter than 6 bytes")
        v = <const uint8_t*><const char*>value
        epoch = <int32_t>rd32(v + 2)
    return ControlRecord(version, ctype, epoch)


def build_control_batch(int type, int32_t coordinator_epoch, *, int64_t producer_id,
                        int producer_epoch, int64_t base_offset=0, int64_t timestamp_ms,
                        int32_t partition_leader_epoch=-1):
    """A transaction marker batch as the leader writes it: attributes control|transactional,
    the transaction's producer id/epoch, baseSequence -1, one record with key
    (version 0, ``type``) and value (version 0, ``coordinator_epoch``)."""
    cdef bytes key = _struct.pack(">hh", 0, type)
    cdef bytes value = _struct.pack(">hi", 0, coordinator_epoch)
    return build_batch([(key, value, [], timestamp_ms)], base_offset=base_offset,
                       producer_id=producer_id, producer_epoch=producer_epoch,
                       base_sequence=-1, is_transactional=True, is_control=True,
                       partition_leader_epoch=partition_leader_epoch)


# --------------------------------------------------------------------------- assign_offsets

cdef class AssignResult:
    """What ``assign_offsets`` did: the batches it gave offsets to, in totals."""
    cdef readonly int64_t next_offset         # the offset after the last batch
    cdef readonly Py_ssize_t batches
    cdef readonly int64_t records             # sum of recordsCount
    cdef readonly Py_ssize_t size             # bytes
    cdef readonly int64_t max_timestamp       # largest maxTimestamp (after assignment)
    cdef readonly int64_t first_max_timestamp # the first batch's maxTimestamp
    cdef readonly int64_t largest_batch       # size of the largest batch
    # Batches the producer state must see: a producer id, or the transactional or control
    # flag. Zero for a plain producer's append, which then needs no per-batch pass.
    cdef readonly Py_ssize_t stateful_batches

    def __repr__(self):
        return (f"AssignResult(next_offset={self.next_offset}, batches={self.batches}, "
                f"records={self.records}, size={self.size})")


def assign_offsets(buf, int64_t base_offset, *, log_append_time=None,
                   partition_leader_epoch=None, bint verify=False,
                   Py_ssize_t max_batch_size=-1):
    """Leader-side offset assignment, in place, per batch and without touching records.

    Each batch gets baseOffset = the next offset (consecutive from ``base_offset``, advancing
    by lastOffsetDelta + 1) and, if given, ``partition_leader_epoch``; neither is covered by
    the CRC. With ``log_append_time`` the timestamp-type bit is set and maxTimestamp replaced
    (baseTimestamp stays, as in Kafka's LogValidator) and the CRC recomputed.

    With ``verify`` (the log's leader append: one pass instead of a scan and then this) each
    batch is first checked as Kafka's leader does: framing and magic 2, CRC-32C, size at most
    ``max_batch_size`` (if >= 0), recordsCount > 0 and equal to lastOffsetDelta + 1. Without
    it the caller must have validated (``scan_batches``): a CRC recomputed here would hide
    earlier corruption.

    Returns an ``AssignResult``. Raises before changing anything: CorruptMessageError
    (framing, CRC), UnsupportedForMessageFormatError (magic != 2), MessageTooLargeError (size),
    InvalidRecordError (counts); BufferError if the buffer is not writable.
    """
    cdef _Buffer b = _acquire(buf, True)
    cdef uint8_t* d = <uint8_t*>b.data
    cdef Py_ssize_t n = b.size, pos = 0, size = 0, batches = 0, largest = 0, stateful = 0
    cdef int code = FRAME_OK
    cdef int64_t next_offset = base_offset, records = 0, max_ts = -1, first_ts = -1, ts
    cdef bint set_epoch = partition_leader_epoch is not None
    cdef bint set_time = log_append_time is not None
    cdef int32_t epoch = partition_leader_epoch if set_epoch else 0
    cdef int64_t now = log_append_time if set_time else 0
    cdef int32_t count, delta
    cdef uint8_t* p
    cdef AssignResult r = AssignResult.__new__(AssignResult)
    with nogil:
        while pos < n:
            code = batch_frame(d, n, pos, &size)
            if code != FRAME_OK:
                break
            if verify:
                p = d + pos
                if not batch_crc_valid(p, size):
                    code = F_CRC
                    break
                if max_batch_size >= 0 and size > max_batch_size:
                    code = A_TOO_LARGE
                    break
                count = batch_records_count(p)
                delta = batch_last_offset_delta(p)
                if count <= 0 or count != delta + 1:
                    code = A_COUNT
                    break
            if size > largest:
                largest = size
            pos += size
    if pos != n:
        if code == A_TOO_LARGE:
            raise MessageTooLargeError(
                f"record batch at byte {pos} is {size} bytes, more than the maximum "
                f"{max_batch_size}")
        if code == A_COUNT:
            raise InvalidRecordError(
                f"record batch at byte {pos} has recordsCount {batch_records_count(d + pos)} "
                f"but lastOffsetDelta {batch_last_offset_delta(d + pos)}")
        raise _frame_error(code, d, n, pos)
    pos = 0
    with nogil:
        while pos < n:
            p = d + pos
            size = <Py_ssize_t>batch_length(p) + LOG_OVERHEAD
            wr64(p + BASE_OFFSET_OFFSET, <uint64_t>next_offset)
            next_offset += <int64_t>batch_last_offset_delta(p) + 1
            records += batch_records_count(p)
            if set_epoch:
                wr32(p + PARTITION_LEADER_EPOCH_OFFSET, <uint32_t>epoch)
            if set_time and (not (batch_flags(p) & ATTR_TIMESTAMP_TYPE)
                             or batch_max_timestamp(p) != now):
                p[FLAGS_OFFSET] |= ATTR_TIMESTAMP_TYPE
                wr64(p + MAX_TIMESTAMP_OFFSET, <uint64_t>now)
                wr32(p + CRC_OFFSET, batch_compute_crc(p, size))
            if batch_producer_id(p) >= 0 or batch_flags(p) & (ATTR_TRANSACTIONAL | ATTR_CONTROL):
                stateful += 1
            ts = batch_max_timestamp(p)
            if batches == 0:
                first_ts = ts
            if ts > max_ts or batches == 0:
                max_ts = ts
            batches += 1
            pos += size
    r.next_offset = next_offset
    r.batches = batches
    r.records = records
    r.size = n
    r.max_timestamp = max_ts
    r.first_max_timestamp = first_ts
    r.largest_batch = largest
    r.stateful_batches = stateful
    return r


# ---------------------------------------------------- per-record validation (KIP-467)

# Why a record is refused (Kafka's LogValidator.validateKey / validateTimestamp).
cdef enum:
    RV_NO_KEY = 1           # a compacted topic's record without a key (INVALID_RECORD)
    RV_TIMESTAMP = 2        # CreateTime outside [now - before.max, now + after.max]
    RV_APPEND_TIME = 3      # the producer set the LogAppendTime bit (INVALID_TIMESTAMP)


cdef inline int _record_verdict(int32_t key_len, int64_t ts, bint log_append_batch,
                                bint compacted, bint create_time, int64_t now,
                                int64_t before_max, int64_t after_max) noexcept nogil:
    # Kafka's validateKey, then validateTimestamp, with Java's wrapping long arithmetic.
    cdef int64_t diff
    if compacted and key_len < 0:
        return RV_NO_KEY
    if create_time and ts != -1:
        diff = <int64_t>(<uint64_t>now - <uint64_t>ts)
        if diff > before_max or <int64_t>(<uint64_t>0 - <uint64_t>diff) > after_max:
            return RV_TIMESTAMP
    elif log_append_batch:
        return RV_APPEND_TIME
    return 0


cdef int _scan_verdicts(const uint8_t* d, Py_ssize_t n, const uint8_t* header,
                        bint compacted, bint create_time, int64_t now, int64_t before_max,
                        int64_t after_max, int64_t* out, Py_ssize_t cap) noexcept nogil:
    """Check the records section ``d[0:n]`` of the batch ``header``: the number of refused
    records (-1: malformed records, left to the CRC and framing checks). With ``out``, the
    first ``cap`` refused records' ``(kind, index, timestamp, offset, key length, value
    length)`` are written there, six int64s each. GIL-free."""
    cdef Py_ssize_t pos = 0, hpos
    cdef int32_t i, j, count = batch_records_count(header)
    cdef int64_t base_ts = batch_base_timestamp(header), ts
    cdef int64_t max_ts = batch_max_timestamp(header)
    cdef int64_t base_offset = batch_base_offset(header)
    cdef bint lat = (batch_flags(header) & ATTR_TIMESTAMP_TYPE) != 0
    cdef RecordFields f
    cdef HeaderFields h
    cdef int verdict, bad = 0
    cdef int64_t* o
    for i in range(count):
        if pos >= n or read_record(d, n, &pos, &f) != R_OK:
            return -1
        hpos = pos
        for j in range(f.header_count):
            if read_record_header(d, f.end, &hpos, &h) != R_OK:
                return -1
        pos = f.end
        # Kafka's readers give every record of a LogAppendTime batch its maxTimestamp.
        ts = max_ts if lat else <int64_t>(<uint64_t>base_ts + <uint64_t>f.ts_delta)
        verdict = _record_verdict(f.key_len, ts, lat, compacted, create_time, now,
                                  before_max, after_max)
        if verdict:
            if out != NULL and bad < cap:
                o = out + 6 * bad
                o[0] = verdict
                o[1] = i
                o[2] = ts
                o[3] = <int64_t>(<uint64_t>base_offset + <uint64_t><int64_t>f.offset_delta)
                o[4] = f.key_len
                o[5] = f.val_len
            bad += 1
    return bad


def record_errors(buf, *, bint compacted, bint create_time, int64_t now,
                  int64_t before_max_ms, int64_t after_max_ms):
    """Kafka's per-record checks of a leader append (LogValidator.validateRecord, KIP-467):
    a compacted topic's records need a key; under CreateTime a record's timestamp must lie in
    [now - before_max_ms, now + after_max_ms]; the producer may not set LogAppendTime.

    Runs before offsets are assigned (messages name the producer's offsets). The good case
    stays off records where the batch header proves them fine: no key check unless
    ``compacted``, and the timestamps are read record by record only when
    ``before_max_ms`` is finite (a record can be older than the batch's first) or the header's
    maxTimestamp is too new; compressed batches are decompressed only then. Malformed
    batches or records are skipped: the CRC and framing checks that follow report them.

    Returns None when every record passes, else the first refusing batch's refused records
    as ``(kind, index in batch, timestamp, offset, key length, value length)`` with kind 1
    (no key), 2 (timestamp out of range) or 3 (LogAppendTime set by the producer), plus
    whether that batch is compressed: ``(compressed, [...])``.
    """
    cdef _Buffer b = _acquire(buf, False)
    cdef _Buffer blob
    cdef const uint8_t* d = b.data
    cdef const uint8_t* p
    cdef const uint8_t* recs
    cdef Py_ssize_t n = b.size, pos = 0, size = 0, recs_size, k
    cdef int codec, bad
    cdef int64_t max_ts
    cdef int64_t* found
    cdef bint lat, scan
    cdef list out
    while pos < n:
        if batch_frame(d, n, pos, &size) != FRAME_OK:
            return None
        p = d + pos
        lat = (batch_flags(p) & ATTR_TIMESTAMP_TYPE) != 0
        max_ts = batch_max_timestamp(p)
        if lat:
            # Every record carries maxTimestamp: the header decides for all of them.
            scan = compacted or _record_verdict(0, max_ts, True, False, create_time, now,
                                                before_max_ms, after_max_ms) != 0
        else:
            scan = compacted or (create_time and (
                before_max_ms != 0x7FFFFFFFFFFFFFFF or
                _record_verdict(0, max_ts, False, False, True, now, before_max_ms,
                                after_max_ms) != 0))
        if scan:
            codec = batch_flags(p) & ATTR_COMPRESSION_MASK
            if codec == 0:
                recs, recs_size = p + RECORDS_OFFSET, size - RECORDS_OFFSET
            elif codec > 4:
                return None
            else:
                try:
                    blob = _acquire(_decompress(codec, b.slice(pos + RECORDS_OFFSET,
                                                               pos + size), False), False)
                except Exception:
                    return None
                recs, recs_size = blob.data, blob.size
            with nogil:
                bad = _scan_verdicts(recs, recs_size, p, compacted, create_time, now,
                                     before_max_ms, after_max_ms, NULL, 0)
            if bad < 0:
                return None
            if bad > 0:
                # The rejected batch only: now the refused records' details.
                found = <int64_t*>PyMem_Malloc(6 * bad * sizeof(int64_t))
                if found == NULL:
                    raise MemoryError()
                try:
                    with nogil:
                        _scan_verdicts(recs, recs_size, p, compacted, create_time, now,
                                       before_max_ms, after_max_ms, found, bad)
                    out = [tuple(found[6 * k + j] for j in range(6)) for k in range(bad)]
                finally:
                    PyMem_Free(found)
                return (codec != 0, out)
        pos += size
    return None


# ------------------------------------------------------------------------ legacy messages

cdef class LegacyMessage:
    """One message of a magic 0/1 message set (inner messages of compressed wrappers are
    returned in place of the wrapper)."""
    cdef public int64_t offset
    cdef public int magic
    cdef public int attributes
    cdef public int64_t timestamp
    cdef public object key
    cdef public object value

    def __init__(self, int64_t offset, int magic, int attributes, int64_t timestamp, key,
                 value):
        self.offset = offset
        self.magic = magic
        self.attributes = attributes
        self.timestamp = timestamp
        self.key = key
        self.value = value

    def _fields(self):
        return (self.offset, self.magic, self.attributes, self.timestamp, self.key, self.value)

    def __eq__(self, other):
        if type(other) is not LegacyMessage:
            return NotImplemented
        return self._fields() == (<LegacyMessage>other)._fields()

    __hash__ = None

    def __repr__(self):
        return (f"LegacyMessage(offset={self.offset}, magic={self.magic}, "
                f"attributes={self.attributes}, timestamp={self.timestamp}, key={self.key!r}, "
                f"value={self.value!r})")


cdef list _decode_legacy(object buf, int wrapper_magic):
    """Messages of one message set. ``wrapper_magic`` is -1 at the top level (a partial
    trailing message is then ignored, as fetched data may end mid-message) and the wrapper's
    magic for the inner set of a compressed message (where everything must be whole, of the
    wrapper's magic, and uncompressed)."""
    cdef _Buffer b = _acquire(buf, False)
    cdef const uint8_t* d = b.data
    cdef Py_ssize_t n = b.size, pos = 0, rest
    cdef const uint8_t* m
    cdef int64_t offset, ts, last
    cdef int32_t size, klen, vlen
    cdef int magic, attrs, codec
    cdef Py_ssize_t kpos
    cdef list out = []
    cdef list inner
    cdef LegacyMessage msg
    cdef bint top = wrapper_magic < 0
    while pos < n:
        if n - pos < LOG_OVERHEAD:
            if top:
                break
            raise CorruptMessageError(f"compressed message set cut off at byte {pos}")
        offset = <int64_t>rd64(d + pos)
        size = <int32_t>rd32(d + pos + 8)
        if size < 14:
            raise CorruptMessageError(f"legacy message at byte {pos} has size {size} < 14")
        if <Py_ssize_t>size > n - pos - LOG_OVERHEAD:
            if top:
                break
            raise CorruptMessageError(f"compressed message set cut off at byte {pos}")
        m = d + pos + LOG_OVERHEAD
        magic = m[4]
        if magic > 1:
            raise UnsupportedForMessageFormatError(
                f"message at byte {pos} has magic {<int8_t>m[4]}: not a legacy message")
        if not top and magic != wrapper_magic:
            raise CorruptMessageError(
                f"inner message magic {magic} differs from its wrapper's {wrapper_magic}")
        if magic == 1 and size < 22:
            raise CorruptMessageError(f"magic 1 message at byte {pos} has size {size} < 22")
        if (_zlib.crc32(b.slice(pos + LOG_OVERHEAD + 4, pos + LOG_OVERHEAD + size))
                != rd32(m)):
            raise CorruptMessageError(f"legacy message at byte {pos} fails its CRC-32")
        attrs = m[5]
        kpos = 6
        ts = -1
        if magic == 1:
            ts = <int64_t>rd64(m + 6)
            kpos = 14
        rest = size - kpos
        klen = <int32_t>rd32(m + kpos)
        kpos += 4
        rest -= 4
        if klen < -1 or <Py_ssize_t>klen > rest - 4:
            raise CorruptMessageError(f"legacy message at byte {pos}: bad key length {klen}")
        key = _bytes_or_none(m, kpos, klen)
        if klen > 0:
            kpos += klen
            rest -= klen
        vlen = <int32_t>rd32(m + kpos)
        kpos += 4
        rest -= 4
        if (vlen < -1 or (vlen == -1 and rest != 0)
                or (vlen >= 0 and <Py_ssize_t>vlen != rest)):
            raise CorruptMessageError(f"legacy message at byte {pos}: bad value length {vlen}")
        codec = attrs & ATTR_COMPRESSION_MASK
        if codec == 0:
            msg = LegacyMessage.__new__(LegacyMessage)
            msg.offset = offset
            msg.magic = magic
            msg.attributes = attrs
            msg.timestamp = ts
            msg.key = key
            msg.value = _bytes_or_none(m, kpos, vlen)
            out.append(msg)
        else:
            if not top:
                raise CorruptMessageError("compressed message inside a compressed message")
            if vlen < 0:
                raise CorruptMessageError(f"compressed message at byte {pos} has a null value")
            if codec > 3:
                raise UnsupportedCompressionTypeError(
                    f"compression codec {codec} is not allowed with magic {magic}")
            inner = _decode_legacy(
                _decompress(codec, b.slice(pos + LOG_OVERHEAD + kpos,
                                           pos + LOG_OVERHEAD + kpos + vlen), magic == 0),
                magic)
            if not inner:
                raise CorruptMessageError(f"compressed message at byte {pos} is empty")
            if magic == 1:
                # Inner offsets are relative; the wrapper carries the last one's absolute offset.
                last = (<LegacyMessage>inner[len(inner) - 1]).offset
                for msg in inner:
                    msg.offset = offset - last + msg.offset
                    if attrs & ATTR_TIMESTAMP_TYPE:
                        msg.timestamp = ts
            out.extend(inner)
        pos += LOG_OVERHEAD + size
    return out


def decode_legacy(buf):
    """Decode a magic 0/1 message set (old segment files, tools; the broker never accepts it).

    Verifies each message's CRC-32 (IEEE) and expands compressed wrappers (gzip, snappy raw or
    xerial, lz4 incl. magic 0's broken descriptor checksum) into their inner messages, with
    absolute offsets. A partial message at the very end is ignored.

    Raises CorruptMessageError for bad CRCs or lengths, UnsupportedForMessageFormatError on a
    magic >= 2 batch, UnsupportedCompressionTypeError for zstd or unknown codecs.
    """
    return _decode_legacy(buf, -1)
