# cython: language_level=3
# The record batch (magic 2) as bytes: the one place its layout is spelled out for the compiled
# modules that read or write batches (_records, _log, _arrow). Python code reads headers
# through kafkapy._records.BatchHeader, which is built on this file.
#
# Batch layout (all integers big-endian; Kafka's DefaultRecordBatch)::
#
#     off  size  field                 CRC-covered
#       0     8  baseOffset            no   (the leader rewrites it)
#       8     4  batchLength           no   (bytes after this field: size = 12 + batchLength)
#      12     4  partitionLeaderEpoch  no   (the leader rewrites it)
#      16     1  magic                 no   (2)
#      17     4  crc                   no   (CRC-32C of bytes 21..size, unsigned)
#      21     2  attributes            yes  bits 0-2 codec, 3 LogAppendTime, 4 transactional,
#                                           5 control, 6 delete horizon
#      23     4  lastOffsetDelta       yes
#      27     8  baseTimestamp         yes
#      35     8  maxTimestamp          yes
#      43     8  producerId            yes
#      51     2  producerEpoch         yes
#      53     4  baseSequence          yes
#      57     4  recordsCount          yes
#      61        records               yes  (one compressed blob when a codec is set)
#
#     record: length VARINT, attributes INT8, timestampDelta VARLONG, offsetDelta VARINT,
#             keyLength VARINT (-1 null), key, valueLength VARINT (-1 null), value,
#             headerCount VARINT, headers (keyLength VARINT >= 0, UTF-8 key, valueLength
#             VARINT (-1 null), value)
#
# Theory of operation: field offsets and sizes are C constants named as in Kafka's
# DefaultRecordBatch; the ``batch_*`` readers take a pointer to a batch's first byte and read
# one field each; ``batch_frame`` is the framing check every batch walk starts with; the
# varint readers, ``read_record``, ``read_record_header`` and ``record_error`` are the record
# parsers' shared vocabulary (what each parser builds from the fields is its own). All of
# them are inline and GIL-free and check nothing a caller has not asked for: callers frame
# first (``batch_frame`` guarantees 17 bytes, and the whole batch when it returns FRAME_OK)
# and read only inside what they framed; the record readers check every length they read. The CRC-32C code comes from _crc32c.h, whose
# ``kp_crc32c_init()`` each importing module calls once at import.
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

from kafkapy._bigendian cimport rd16, rd32, rd64

cdef extern from "_crc32c.h":
    void kp_crc32c_init()
    uint32_t kp_crc32c(uint32_t crc, const unsigned char* p, size_t n) noexcept nogil


# ----------------------------------------------------------------------------- the header

cdef enum:
    BASE_OFFSET_OFFSET = 0
    BASE_OFFSET_LENGTH = 8
    LENGTH_OFFSET = 8                       # batchLength
    LENGTH_LENGTH = 4
    LOG_OVERHEAD = 12                       # baseOffset + batchLength: size = this + batchLength
    PARTITION_LEADER_EPOCH_OFFSET = 12
    PARTITION_LEADER_EPOCH_LENGTH = 4
    MAGIC_OFFSET = 16
    MAGIC_LENGTH = 1
    CRC_OFFSET = 17
    CRC_LENGTH = 4
    ATTRIBUTES_OFFSET = 21                  # the CRC covers everything from here on
    ATTRIBUTES_LENGTH = 2
    LAST_OFFSET_DELTA_OFFSET = 23
    LAST_OFFSET_DELTA_LENGTH = 4
    BASE_TIMESTAMP_OFFSET = 27
    BASE_TIMESTAMP_LENGTH = 8
    MAX_TIMESTAMP_OFFSET = 35
    MAX_TIMESTAMP_LENGTH = 8
    PRODUCER_ID_OFFSET = 43
    PRODUCER_ID_LENGTH = 8
    PRODUCER_EPOCH_OFFSET = 51
    PRODUCER_EPOCH_LENGTH = 2
    BASE_SEQUENCE_OFFSET = 53
    BASE_SEQUENCE_LENGTH = 4
    RECORDS_COUNT_OFFSET = 57
    RECORDS_COUNT_LENGTH = 4
    RECORDS_OFFSET = 61
    RECORD_BATCH_OVERHEAD = 61              # the header: a batch is at least this long
    MIN_BATCH_LENGTH = 49                   # RECORD_BATCH_OVERHEAD - LOG_OVERHEAD
    MAGIC_FRAME_SIZE = 17                   # bytes needed to see the magic byte
    CURRENT_MAGIC = 2

# Attribute bits. All of them lie in the low byte of the INT16 (offset 22), which is where
# the hot paths test them: ``batch_flags(p) & ATTR_CONTROL``.
cdef enum:
    ATTR_COMPRESSION_MASK = 0x07
    ATTR_TIMESTAMP_TYPE = 0x08              # set: LogAppendTime
    ATTR_TRANSACTIONAL = 0x10
    ATTR_CONTROL = 0x20
    ATTR_DELETE_HORIZON = 0x40
    FLAGS_OFFSET = 22                       # the attributes' low byte

cdef enum:
    INT32_MAX = 2147483647
    MIN_RECORD_BODY = 6                     # attributes + five one-byte varints


cdef inline int64_t batch_base_offset(const uint8_t* p) noexcept nogil:
    return <int64_t>rd64(p + BASE_OFFSET_OFFSET)

cdef inline int32_t batch_length(const uint8_t* p) noexcept nogil:
    return <int32_t>rd32(p + LENGTH_OFFSET)

cdef inline int32_t batch_leader_epoch(const uint8_t* p) noexcept nogil:
    return <int32_t>rd32(p + PARTITION_LEADER_EPOCH_OFFSET)

cdef inline int8_t batch_magic(const uint8_t* p) noexcept nogil:
    return <int8_t>p[MAGIC_OFFSET]

cdef inline uint32_t batch_crc(const uint8_t* p) noexcept nogil:
    return rd32(p + CRC_OFFSET)

cdef inline int16_t batch_attributes(const uint8_t* p) noexcept nogil:
    return <int16_t>rd16(p + ATTRIBUTES_OFFSET)

cdef inline uint8_t batch_flags(const uint8_t* p) noexcept nogil:
    return p[FLAGS_OFFSET]

cdef inline int32_t batch_last_offset_delta(const uint8_t* p) noexcept nogil:
    return <int32_t>rd32(p + LAST_OFFSET_DELTA_OFFSET)

cdef inline int64_t batch_base_timestamp(const uint8_t* p) noexcept nogil:
    return <int64_t>rd64(p + BASE_TIMESTAMP_OFFSET)

cdef inline int64_t batch_max_timestamp(const uint8_t* p) noexcept nogil:
    return <int64_t>rd64(p + MAX_TIMESTAMP_OFFSET)

cdef inline int64_t batch_producer_id(const uint8_t* p) noexcept nogil:
    return <int64_t>rd64(p + PRODUCER_ID_OFFSET)

cdef inline int16_t batch_producer_epoch(const uint8_t* p) noexcept nogil:
    return <int16_t>rd16(p + PRODUCER_EPOCH_OFFSET)

cdef inline int32_t batch_base_sequence(const uint8_t* p) noexcept nogil:
    return <int32_t>rd32(p + BASE_SEQUENCE_OFFSET)

cdef inline int32_t batch_records_count(const uint8_t* p) noexcept nogil:
    return <int32_t>rd32(p + RECORDS_COUNT_OFFSET)

cdef inline uint32_t batch_compute_crc(const uint8_t* p, Py_ssize_t size) noexcept nogil:
    # The CRC-32C the batch of ``size`` bytes at ``p`` should store: bytes [21, size).
    return kp_crc32c(0, p + ATTRIBUTES_OFFSET, <size_t>(size - ATTRIBUTES_OFFSET))

cdef inline bint batch_crc_valid(const uint8_t* p, Py_ssize_t size) noexcept nogil:
    return batch_compute_crc(p, size) == batch_crc(p)


# ---------------------------------------------------------------------------- framing

# Why ``batch_frame`` refused the bytes at ``pos``.
cdef enum:
    FRAME_OK = 0
    FRAME_SHORT = 1         # fewer than 17 bytes: not even the magic byte is there
    FRAME_MAGIC = 2         # magic != 2
    FRAME_LENGTH = 3        # batchLength < 49
    FRAME_CUT = 4           # the batch runs past the end of the buffer


cdef inline int batch_frame(const uint8_t* d, Py_ssize_t n, Py_ssize_t pos,
                            Py_ssize_t* size) noexcept nogil:
    # Frame the batch at ``d[pos:]`` of an ``n``-byte buffer: FRAME_OK with ``size`` set to
    # the whole batch's size, which lies inside the buffer, or why not.
    cdef Py_ssize_t rem = n - pos
    cdef int32_t blen
    if rem < MAGIC_FRAME_SIZE:
        return FRAME_SHORT
    if d[pos + MAGIC_OFFSET] != CURRENT_MAGIC:
        return FRAME_MAGIC
    blen = batch_length(d + pos)
    if blen < MIN_BATCH_LENGTH:
        return FRAME_LENGTH
    if <Py_ssize_t>blen > rem - LOG_OVERHEAD:
        return FRAME_CUT
    size[0] = <Py_ssize_t>blen + LOG_OVERHEAD
    return FRAME_OK


# ---------------------------------------------------------------------------- varints

# Zigzag varints as Kafka's ByteUtils reads them: at most 5 bytes (varint) or 10 (varlong);
# like Java, the unused high bits of the last byte are ignored. Each returns 0 and advances
# ``pos[0]``, or returns -1 (``pos[0]`` unchanged) on an overrun of ``end`` or an over-long
# encoding.
cdef inline int read_raw_varint(const uint8_t* d, Py_ssize_t end, Py_ssize_t* pos,
                                int max_shift, uint64_t* out) noexcept nogil:
    cdef uint64_t raw = 0
    cdef int shift = 0
    cdef uint8_t b
    cdef Py_ssize_t i = pos[0]
    while True:
        if i >= end:
            return -1
        b = d[i]
        i += 1
        raw |= <uint64_t>(b & 0x7F) << shift
        if not (b & 0x80):
            break
        shift += 7
        if shift > max_shift:
            return -1
    pos[0] = i
    out[0] = raw
    return 0

cdef inline int read_varint(const uint8_t* d, Py_ssize_t end, Py_ssize_t* pos,
                            int32_t* out) noexcept nogil:
    cdef uint64_t raw
    cdef uint32_t low
    if pos[0] < end and d[pos[0]] < 0x80:      # the common one-byte case
        low = d[pos[0]]
        pos[0] += 1
    else:
        if read_raw_varint(d, end, pos, 28, &raw) < 0:
            return -1
        low = <uint32_t>raw     # bits past 32 of a 5th byte are dropped, as in Java
    out[0] = <int32_t>((low >> 1) ^ (0 - (low & 1)))
    return 0

cdef inline int read_varlong(const uint8_t* d, Py_ssize_t end, Py_ssize_t* pos,
                             int64_t* out) noexcept nogil:
    cdef uint64_t raw
    if read_raw_varint(d, end, pos, 63, &raw) < 0:
        return -1
    out[0] = <int64_t>((raw >> 1) ^ (0 - (raw & 1)))
    return 0

cdef inline uint8_t* write_varlong(uint8_t* p, int64_t v) noexcept nogil:
    # Zigzag-encode ``v`` at ``p`` (room for 10 bytes; 5 for an INT32); returns the end.
    cdef uint64_t z = (<uint64_t>v << 1) ^ <uint64_t>(v >> 63)
    while z >= 0x80:
        p[0] = <uint8_t>(z | 0x80)
        p += 1
        z >>= 7
    p[0] = <uint8_t>z
    return p + 1


# ----------------------------------------------------------------------- record errors

# Why a record parser stopped (the parsers of _records and _arrow report the same ones).
cdef enum:
    R_OK = 0
    R_VARINT = 1
    R_LENGTH = 2
    R_KEY = 3
    R_VALUE = 4
    R_HEADERS = 5
    R_HKEY = 6
    R_HVALUE = 7
    R_SIZE = 8
    R_TRAILING = 9
    R_NOMEM = 10
    R_COUNT = 11
    R_OFFSET = 12


cdef inline const char* record_error(int err) noexcept nogil:
    # What a record parser's error code means, in words.
    if err == R_VARINT:
        return b"varint runs past the record or is too long"
    if err == R_LENGTH:
        return b"record length is impossible or runs past the batch"
    if err == R_KEY:
        return b"key length is invalid or runs past the record"
    if err == R_VALUE:
        return b"value length is invalid or runs past the record"
    if err == R_HEADERS:
        return b"header count is invalid"
    if err == R_HKEY:
        return b"header key length is invalid or runs past the record"
    if err == R_HVALUE:
        return b"header value length is invalid or runs past the record"
    if err == R_SIZE:
        return b"record fields do not fill the record length"
    if err == R_TRAILING:
        return b"bytes left over after recordsCount records"
    if err == R_NOMEM:
        return b"out of memory"
    if err == R_COUNT:
        return b"recordsCount is impossible for the bytes of the records section"
    if err == R_OFFSET:
        return b"a record's offset delta is past the batch's lastOffsetDelta"
    return b""


# ------------------------------------------------------------------------------ records

# Where one record's fields lie, as read by read_record (offsets index the records section).
cdef struct RecordFields:
    Py_ssize_t end          # where the record ends: its headers lie between here and there
    int64_t ts_delta
    int32_t offset_delta
    int32_t attrs
    int32_t key_len         # -1: null
    int32_t val_len         # -1: null
    Py_ssize_t key_off
    Py_ssize_t val_off
    int32_t header_count

# Where one record header's key and value lie, as read by read_record_header.
cdef struct HeaderFields:
    Py_ssize_t key_off
    Py_ssize_t val_off
    int32_t key_len
    int32_t val_len         # -1: null


cdef inline int read_record(const uint8_t* d, Py_ssize_t n, Py_ssize_t* pos,
                            RecordFields* r) noexcept nogil:
    # Read the record at ``d[pos[0]:n]`` up to its header count, checking every length
    # against the record's end: R_OK with ``pos[0]`` at its first header (read them with
    # read_record_header; the last must end at ``r.end``), or why not. Works on locals and
    # fills ``r`` at the end, so that no store through ``r`` may alias ``pos``.
    cdef Py_ssize_t p = pos[0], end, key_off, val_off
    cdef int32_t length, offset_delta, key_len, val_len, header_count
    cdef int64_t ts_delta
    cdef int32_t attrs
    if read_varint(d, n, &p, &length) < 0:
        return R_VARINT
    if length < MIN_RECORD_BODY or <Py_ssize_t>length > n - p:
        return R_LENGTH
    end = p + length
    attrs = d[p]
    p += 1
    if read_varlong(d, end, &p, &ts_delta) < 0:
        return R_VARINT
    if read_varint(d, end, &p, &offset_delta) < 0:
        return R_VARINT
    if read_varint(d, end, &p, &key_len) < 0:
        return R_VARINT
    if key_len < -1 or <Py_ssize_t>key_len > end - p:
        return R_KEY
    key_off = p
    if key_len > 0:
        p += key_len
    if read_varint(d, end, &p, &val_len) < 0:
        return R_VARINT
    if val_len < -1 or <Py_ssize_t>val_len > end - p:
        return R_VALUE
    val_off = p
    if val_len > 0:
        p += val_len
    if read_varint(d, end, &p, &header_count) < 0:
        return R_VARINT
    # Each header takes at least two bytes: a count beyond that is a lie, refused before a
    # caller allocates anything for it.
    if header_count < 0 or <Py_ssize_t>header_count > (end - p) // 2:
        return R_HEADERS
    r.end = end
    r.ts_delta = ts_delta
    r.offset_delta = offset_delta
    r.attrs = attrs
    r.key_len = key_len
    r.val_len = val_len
    r.key_off = key_off
    r.val_off = val_off
    r.header_count = header_count
    pos[0] = p
    return R_OK


cdef inline int read_record_header(const uint8_t* d, Py_ssize_t end, Py_ssize_t* pos,
                                   HeaderFields* h) noexcept nogil:
    # Read the record header at ``d[pos[0]:end]`` (``end``: its record's): R_OK and
    # ``pos[0]`` past it, or why not.
    cdef Py_ssize_t p = pos[0], key_off
    cdef int32_t key_len, val_len
    if read_varint(d, end, &p, &key_len) < 0:
        return R_VARINT
    if key_len < 0 or <Py_ssize_t>key_len > end - p:
        return R_HKEY
    key_off = p
    p += key_len
    if read_varint(d, end, &p, &val_len) < 0:
        return R_VARINT
    if val_len < -1 or <Py_ssize_t>val_len > end - p:
        return R_HVALUE
    h.key_len = key_len
    h.key_off = key_off
    h.val_len = val_len
    h.val_off = p
    if val_len > 0:
        p += val_len
    pos[0] = p
    return R_OK
