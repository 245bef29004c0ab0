# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# Bounds checks are off because every byte is read through a raw pointer at an offset first
# checked against the end of its buffer (``_read_message`` for legacy messages, ``batch_frame``
# and ``read_record`` for magic 2), and every write goes through ``_reserve`` first.
"""Compiled message format conversion: the legacy formats (magic 0 and 1, Kafka 0.8-0.10's
"message sets") to and from record batches (magic 2), as a Kafka 3.x broker converts them.

- ``up_convert``: a Produce v0-2 partition's message set, converted on append into one magic
  2 batch (Kafka's LogValidator: convertAndAssignOffsetsNonCompressed for plain messages,
  validateMessagesAndAssignOffsetsCompressed for a compressed wrapper, whose inner messages
  are unpacked and written again with the topic's target codec). Offsets are not assigned
  here: the batch comes out with base offset 0 and the log assigns offsets, the leader epoch
  and LogAppendTime as for any produced batch.
- ``down_convert``: fetched magic 2 batches for Fetch v0-3 (magic 0 for v0-1, magic 1 for
  v2-3), as Kafka's RecordsUtil.downConvert writes them and LazyDownConversionRecords sends
  them (KIP-283): headers are dropped, control batches skipped, uncompressed batches become
  one message per record (records before the fetch offset dropped), compressed batches one
  wrapper message; the result is exactly as long as Kafka's answer (the larger of the
  unconverted read and the first converted batch), cut mid-message or padded with Kafka's
  "overflow" message, which clients discard as a partial message.

Legacy message layout (Kafka's LegacyRecord; all integers big-endian)::

    offset INT64, size INT32 (bytes after this field),
    crc UINT32 (CRC-32, IEEE, of everything after it), magic INT8 (0/1),
    attributes INT8 (bits 0-2 codec, bit 3 LogAppendTime, magic 1 only),
    timestamp INT64 (magic 1 only), key BYTES (INT32 length, -1 null), value BYTES

A compressed message's value is a compressed message set: its inner messages carry absolute
offsets with magic 0 and offsets relative to the first with magic 1 (the wrapper carries the
last inner message's absolute offset).

Theory of operation: each conversion is one GIL-free pass over the bytes that notes where
each message's key and value lie, then one GIL-free pass writing the other format into a C
buffer; the GIL is taken only for the codecs (kafkapy._records' compress/decompress, the one
codec implementation) and to build the result. Thread-safety: no mutable global state.
Hostile input raises KafkaError subclasses only; every length is checked against the bytes
present before it is used.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytearray cimport PyByteArray_FromStringAndSize
from cpython.bytes cimport PyBytes_FromStringAndSize
from kafkapy._batch_layout cimport *
from kafkapy._bigendian cimport rd32, rd64, wr16, wr32, wr64
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

from kafkapy._records import compress as _compress
from kafkapy._records import decompress as _decompress
from kafkapy.errors import (CorruptMessageError, InvalidRecordError, InvalidTimestampError,
                            UnsupportedCompressionTypeError)

cdef extern from "zlib.h":
    unsigned long crc32(unsigned long crc, const unsigned char* buf,
                        unsigned int len) noexcept nogil

kp_crc32c_init()

cdef enum:
    M_CRC = 0                   # field offsets inside a message, after offset and size
    M_MAGIC = 4
    M_ATTRS = 5
    M_TIMESTAMP = 6
    OVERHEAD_V0 = 14            # crc, magic, attributes, key length, value length
    OVERHEAD_V1 = 22            # and the timestamp
    TS_TYPE_BIT = 0x08          # attributes: LogAppendTime (magic 1)
    NO_TIMESTAMP = -1
    # KIP-283's overflow message (LazyDownConversionRecordsSend): at least a log overhead,
    # at most MAX_READ_SIZE bytes per piece.
    MIN_OVERFLOW = 12
    MAX_READ_SIZE = 16384

# Why _read_message refused the bytes at a position.
cdef enum:
    L_OK = 0
    L_PARTIAL = 1               # the message runs past the end of the buffer
    L_SIZE = 2                  # size below its magic's overhead
    L_MAGIC = 3                 # magic above 1
    L_CRC = 4
    L_KEY = 5
    L_VALUE = 6
    L_NOMEM = 7

# Where one legacy message's fields lie.
cdef struct Msg:
    int64_t offset
    Py_ssize_t size             # the whole message, log overhead included
    int magic
    int attrs
    int64_t timestamp           # NO_TIMESTAMP for magic 0
    const uint8_t* key          # NULL: null key
    const uint8_t* value        # NULL: null value
    int32_t key_len
    int32_t value_len


cdef int _read_message(const uint8_t* d, Py_ssize_t n, Py_ssize_t pos,
                       Msg* m) noexcept nogil:
    # Frame, CRC-check and take apart the legacy message at d[pos:n] (Kafka's
    # ByteBufferLogInputStream.nextBatch and LegacyRecord.ensureValid).
    cdef Py_ssize_t rem = n - pos, p, end
    cdef int32_t size, klen, vlen
    cdef const uint8_t* b
    cdef int magic
    if rem < LOG_OVERHEAD + M_MAGIC + 1:
        return L_PARTIAL
    size = <int32_t>rd32(d + pos + 8)
    if size < OVERHEAD_V0:
        return L_SIZE
    if <Py_ssize_t>size > rem - LOG_OVERHEAD:
        return L_PARTIAL
    b = d + pos + LOG_OVERHEAD
    magic = b[M_MAGIC]
    if magic > 1:
        return L_MAGIC
    if magic == 1 and size < OVERHEAD_V1:
        return L_SIZE
    if crc32(0, b + M_MAGIC, <unsigned int>(size - M_MAGIC)) != rd32(b + M_CRC):
        return L_CRC
    m.offset = <int64_t>rd64(d + pos)
    m.size = <Py_ssize_t>size + LOG_OVERHEAD
    m.magic = magic
    m.attrs = b[M_ATTRS]
    p = M_TIMESTAMP
    m.timestamp = NO_TIMESTAMP
    if magic == 1:
        m.timestamp = <int64_t>rd64(b + M_TIMESTAMP)
        p += 8
    end = size
    klen = <int32_t>rd32(b + p)
    p += 4
    if klen < -1 or <Py_ssize_t>klen > end - p - 4:
        return L_KEY
    m.key_len = klen
    m.key = b + p if klen >= 0 else NULL
    if klen > 0:
        p += klen
    vlen = <int32_t>rd32(b + p)
    p += 4
    if vlen < -1 or (vlen == -1 and p != end) or (vlen >= 0 and <Py_ssize_t>vlen != end - p):
        return L_VALUE
    m.value_len = vlen
    m.value = b + p if vlen >= 0 else NULL
    return L_OK


cdef object _message_error(int code, Py_ssize_t pos, bint inner):
    where = f"{'inner ' if inner else ''}message at byte {pos}"
    if code == L_PARTIAL:
        return CorruptMessageError(f"compressed message set cut off at byte {pos}")
    if code == L_SIZE:
        return CorruptMessageError(f"{where} is shorter than its magic's overhead")
    if code == L_CRC:
        return CorruptMessageError(f"{where} is corrupt: its CRC-32 does not match")
    if code == L_KEY:
        return CorruptMessageError(f"{where}: invalid key length")
    if code == L_VALUE:
        return CorruptMessageError(f"{where}: invalid value length")
    if code == L_NOMEM:
        return MemoryError()
    return CorruptMessageError(f"{where}: unknown magic")


# ---------------------------------------------------------------------- output buffer

cdef struct Out:
    uint8_t* data
    Py_ssize_t len
    Py_ssize_t cap


cdef int _reserve(Out* o, Py_ssize_t extra) noexcept nogil:
    cdef Py_ssize_t cap
    cdef uint8_t* grown
    if o.len + extra <= o.cap:
        return 0
    cap = o.cap * 2
    if cap < o.len + extra:
        cap = o.len + extra
    if cap < 256:
        cap = 256
    grown = <uint8_t*>realloc(o.data, cap)
    if grown == NULL:
        return -1
    o.data = grown
    o.cap = cap
    return 0


cdef inline Py_ssize_t _varlong_size(int64_t v) noexcept nogil:
    cdef uint64_t z = (<uint64_t>v << 1) ^ <uint64_t>(v >> 63)
    cdef Py_ssize_t n = 1
    while z >= 0x80:
        z >>= 7
        n += 1
    return n


cdef class _View:
    """One buffer export, released when the object goes."""
    cdef Py_buffer view
    cdef bint held
    cdef const uint8_t* data
    cdef Py_ssize_t size

    def __cinit__(self, obj):
        PyObject_GetBuffer(obj, &self.view, PyBUF_SIMPLE)
        self.held = True
        self.data = <const uint8_t*>self.view.buf
        self.size = self.view.len

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.view)


# ------------------------------------------------------------------------- up-conversion

cdef int _collect(const uint8_t* d, Py_ssize_t n, Msg* msgs, Py_ssize_t count,
                  Py_ssize_t* pos) noexcept nogil:
    # Fill ``msgs`` with the first ``count`` messages of d[:n] (already framed once).
    cdef Py_ssize_t i
    cdef int code
    pos[0] = 0
    for i in range(count):
        code = _read_message(d, n, pos[0], &msgs[i])
        if code != L_OK:
            return code
        pos[0] += msgs[i].size
    return L_OK


cdef int _count(const uint8_t* d, Py_ssize_t n, Py_ssize_t* count, Py_ssize_t* pos,
                int* codec, int* magic, Msg* first) noexcept nogil:
    # Frame every message of d[:n]: their number, the last codec set on one (Kafka's
    # sourceCompression), the magic of the first; stops at the first refusal (``pos``).
    cdef Msg m
    cdef int code = L_OK
    count[0] = 0
    pos[0] = 0
    while pos[0] < n:
        code = _read_message(d, n, pos[0], &m)
        if code != L_OK:
            return code
        if count[0] == 0:
            magic[0] = m.magic
            first[0] = m
        if m.attrs & ATTR_COMPRESSION_MASK:
            codec[0] = m.attrs & ATTR_COMPRESSION_MASK
        count[0] += 1
        pos[0] += m.size
    return code


cdef Py_ssize_t _write_v2_records(Out* o, const Msg* msgs, Py_ssize_t count,
                                  int64_t base_ts) noexcept nogil:
    # Append ``msgs`` as magic 2 records (offset delta = index, no headers); -1 when out of
    # memory.
    cdef Py_ssize_t i, body, klen, vlen
    cdef int64_t delta
    cdef uint8_t* p
    for i in range(count):
        delta = msgs[i].timestamp - base_ts
        klen = msgs[i].key_len if msgs[i].key_len > 0 else 0
        vlen = msgs[i].value_len if msgs[i].value_len > 0 else 0
        body = (1 + _varlong_size(delta) + _varlong_size(i) + _varlong_size(msgs[i].key_len)
                + klen + _varlong_size(msgs[i].value_len) + vlen + 1)
        if _reserve(o, body + 5) < 0:
            return -1
        p = write_varlong(o.data + o.len, body)
        p[0] = 0                                    # record attributes
        p = write_varlong(p + 1, delta)
        p = write_varlong(p, i)
        p = write_varlong(p, msgs[i].key_len)
        if klen:
            memcpy(p, msgs[i].key, klen)
            p += klen
        p = write_varlong(p, msgs[i].value_len)
        if vlen:
            memcpy(p, msgs[i].value, vlen)
            p += vlen
        p[0] = 0                                    # header count
        o.len = (p + 1) - o.data
    return 0


cdef void _write_v2_header(uint8_t* h, Py_ssize_t total, int codec, Py_ssize_t count,
                           int64_t base_ts, int64_t max_ts) noexcept nogil:
    # A producer's batch header (no producer id, base offset 0: the log assigns offsets).
    wr64(h + BASE_OFFSET_OFFSET, 0)
    wr32(h + LENGTH_OFFSET, <uint32_t>(total - LOG_OVERHEAD))
    wr32(h + PARTITION_LEADER_EPOCH_OFFSET, 0xFFFFFFFFU)
    h[MAGIC_OFFSET] = CURRENT_MAGIC
    wr16(h + ATTRIBUTES_OFFSET, <uint32_t>codec)
    wr32(h + LAST_OFFSET_DELTA_OFFSET, <uint32_t>(count - 1))
    wr64(h + BASE_TIMESTAMP_OFFSET, <uint64_t>base_ts)
    wr64(h + MAX_TIMESTAMP_OFFSET, <uint64_t>max_ts)
    wr64(h + PRODUCER_ID_OFFSET, <uint64_t>(<int64_t>-1))
    wr16(h + PRODUCER_EPOCH_OFFSET, 0xFFFFU)
    wr32(h + BASE_SEQUENCE_OFFSET, 0xFFFFFFFFU)
    wr32(h + RECORDS_COUNT_OFFSET, <uint32_t>count)
    wr32(h + CRC_OFFSET, batch_compute_crc(h, total))


# What _validate found (Kafka's LogValidator.validateRecord, every record of the set).
cdef struct Check:
    Py_ssize_t first_record_error       # -1: none
    int record_error_kind               # an index of _RECORD_ERRORS
    Py_ssize_t timestamp_errors
    Py_ssize_t first_timestamp_error
    bint lat_error                      # the first was a producer's LogAppendTime
    int64_t max_timestamp

_RECORD_ERRORS = (
    "its magic does not match its wrapper's",
    "Compressed outer record should not have an inner record with a compression attribute set",
    "Compacted topic cannot accept message without key",
)


cdef void _validate(Msg* msgs, Py_ssize_t count, bint wrapped, int wrapper_magic,
                    int wrapper_attrs, int64_t wrapper_ts, bint log_append_time,
                    bint require_key, int64_t now, int64_t before_max, int64_t after_max,
                    Check* c) noexcept nogil:
    # Per record: the wrapper's magic and no compression inside it (INVALID_RECORD), a key
    # for a compacted topic (INVALID_RECORD), then the timestamp (INVALID_TIMESTAMP): within
    # [now - before_max, now + after_max] on a CreateTime topic when it has one, else not a
    # producer's LogAppendTime. A LogAppendTime wrapper's inner messages take its timestamp.
    cdef Py_ssize_t i
    cdef bint lat
    cdef int kind
    cdef int64_t ts
    c.first_record_error = -1
    c.record_error_kind = 0
    c.timestamp_errors = 0
    c.first_timestamp_error = 0
    c.lat_error = False
    c.max_timestamp = NO_TIMESTAMP
    for i in range(count):
        kind = -1
        if wrapped:
            if msgs[i].magic != wrapper_magic:
                kind = 0
            elif msgs[i].attrs & ATTR_COMPRESSION_MASK:
                kind = 1
            if wrapper_attrs & TS_TYPE_BIT and msgs[i].magic == 1:
                msgs[i].timestamp = wrapper_ts
            lat = (wrapper_attrs & TS_TYPE_BIT) != 0
        else:
            lat = msgs[i].magic == 1 and (msgs[i].attrs & TS_TYPE_BIT) != 0
        if kind < 0 and require_key and msgs[i].key == NULL:
            kind = 2
        if kind >= 0:
            if c.first_record_error < 0:
                c.first_record_error = i
                c.record_error_kind = kind
            continue
        ts = msgs[i].timestamp
        if not log_append_time and ts != NO_TIMESTAMP:
            # Unsigned differences: no overflow whatever the producer wrote.
            if (ts < now and <uint64_t>now - <uint64_t>ts > <uint64_t>before_max) or \
                    (ts > now and <uint64_t>ts - <uint64_t>now > <uint64_t>after_max):
                if c.timestamp_errors == 0:
                    c.first_timestamp_error = i
                    c.lat_error = False
                c.timestamp_errors += 1
        elif lat:
            if c.timestamp_errors == 0:
                c.first_timestamp_error = i
                c.lat_error = True
            c.timestamp_errors += 1
        if ts > c.max_timestamp:
            c.max_timestamp = ts


def up_convert(buf, int target_codec=-1, bint log_append_time=False,
               bint require_key=False, int64_t now=0,
               int64_t before_max_ms=0x7FFFFFFFFFFFFFFF,
               int64_t after_max_ms=0x7FFFFFFFFFFFFFFF):
    """A Produce v0-2 partition's records as Kafka 3.x's log validator converts them: None
    when they begin with a magic 2 batch (nothing to convert), else one magic 2 batch (a
    bytearray, which the log rewrites in place,
    base offset 0, no producer id) holding every message, inner messages of a compressed
    wrapper in its place.

    ``target_codec``: the topic's ``compression.type`` as a codec id, -1 for "producer"
    (the messages' own codec). ``log_append_time``: the topic's timestamp type is
    LogAppendTime (the log then stamps the batch). ``require_key``: the topic is compacted.
    ``now``, ``before_max_ms``, ``after_max_ms``: the broker's clock and the topic's
    ``message.timestamp.before/after.max.ms``, checked per message on a CreateTime topic.
    Timestamps are kept (magic 0 has none: -1); a partial message at the end is ignored, as
    Kafka trims it.

    Raises CorruptMessageError (CRC-32, lengths, a cut compressed set), InvalidRecordError
    (several messages beside a compressed one, a compressed inner message, inner magic unlike
    its wrapper's, no message, a null key for a compacted topic, magic 2 after legacy
    messages), InvalidTimestampError (a timestamp out of range, a producer's LogAppendTime
    message; this one wins when messages have both kinds of error, as in Kafka),
    UnsupportedCompressionTypeError (a codec magic 0/1 does not have).
    """
    cdef _View v = _View(buf)
    cdef Py_ssize_t count = 0, pos = 0, i
    cdef int codec = 0, magic = 0, code
    cdef Msg first
    cdef _View inner = None
    memset(&first, 0, sizeof(Msg))
    first.value_len = -1
    if v.size >= LOG_OVERHEAD + M_MAGIC + 1 and v.data[LOG_OVERHEAD + M_MAGIC] >= CURRENT_MAGIC:
        return None
    with nogil:
        code = _count(v.data, v.size, &count, &pos, &codec, &magic, &first)
    if code == L_MAGIC and pos > 0:
        raise InvalidRecordError(f"a magic {v.data[pos + LOG_OVERHEAD + M_MAGIC]} batch at byte "
                                 f"{pos} follows magic {magic} messages")
    if code != L_OK and code != L_PARTIAL:
        raise _message_error(code, pos, False)
    if count == 0:
        raise InvalidRecordError("Record batch has no batches at all")
    if codec and count > 1:
        raise InvalidRecordError("Compressed outer record has more than one batch")
    if codec > 3:
        raise UnsupportedCompressionTypeError(
            f"compression codec {codec} is not available with magic {magic}")
    cdef const uint8_t* d = v.data
    cdef Py_ssize_t n = pos
    cdef int wrapper_attrs = first.attrs
    cdef int wrapper_magic = magic
    cdef int64_t wrapper_ts = first.timestamp
    cdef int inner_codec = 0
    if codec:
        blob = _decompress(codec, memoryview(buf)[first.size - first.value_len:first.size]
                           if first.value_len >= 0 else b"", magic == 0)
        inner = _View(blob)
        d = inner.data
        n = inner.size
        with nogil:
            code = _count(d, n, &count, &pos, &inner_codec, &magic, &first)
        # Inner codecs and magics are checked per message below.
        if code != L_OK:
            raise _message_error(code, pos, True)
        if count == 0:
            raise InvalidRecordError("the compressed message holds no message")
    cdef Msg* msgs = <Msg*>malloc(count * sizeof(Msg))
    if msgs == NULL:
        raise MemoryError()
    cdef Out o
    o.data = NULL
    o.len = 0
    o.cap = 0
    cdef int64_t max_ts = NO_TIMESTAMP, base_ts
    cdef Check check
    cdef int out_codec
    cdef Py_ssize_t header = 0, total
    try:
        with nogil:
            code = _collect(d, n, msgs, count, &pos)
        if code != L_OK:
            raise _message_error(code, pos, codec != 0)
        with nogil:
            _validate(msgs, count, codec != 0, wrapper_magic, wrapper_attrs, wrapper_ts,
                      log_append_time, require_key, now, before_max_ms, after_max_ms, &check)
        if check.timestamp_errors:
            # Kafka collects every record's error and answers INVALID_TIMESTAMP if any is one
            # (LogValidator.processRecordErrors).
            raise InvalidTimestampError(
                f"One or more records have been rejected due to invalid timestamp (the first: "
                f"message {check.first_timestamp_error}, "
                f"{'LogAppendTime set by the producer' if check.lat_error else 'out of range'})")
        if check.first_record_error >= 0:
            raise InvalidRecordError(
                f"message {check.first_record_error}: "
                f"{_RECORD_ERRORS[check.record_error_kind]}")
        max_ts = check.max_timestamp
        base_ts = msgs[0].timestamp
        out_codec = codec if target_codec < 0 else target_codec
        header = 0 if out_codec else RECORD_BATCH_OVERHEAD
        with nogil:
            code = _reserve(&o, header)
            if code == 0:
                o.len = header
                code = _write_v2_records(&o, msgs, count, base_ts)
        if code < 0:
            raise MemoryError()
        if out_codec:
            records = _compress(out_codec, PyBytes_FromStringAndSize(<char*>o.data, o.len))
            total = RECORD_BATCH_OVERHEAD + len(records)
            out = bytearray(total)
            out[RECORD_BATCH_OVERHEAD:] = records
            _write_v2_header(<uint8_t*><char*>out, total, out_codec, count, base_ts, max_ts)
            return out
        _write_v2_header(o.data, o.len, 0, count, base_ts, max_ts)
        return PyByteArray_FromStringAndSize(<char*>o.data, o.len)
    finally:
        free(msgs)
        free(o.data)


# ----------------------------------------------------------------------- down-conversion

cdef int _write_message(Out* o, int magic, int64_t offset, int attrs, int64_t timestamp,
                        const uint8_t* key, int32_t key_len, const uint8_t* value,
                        int32_t value_len) noexcept nogil:
    # Append one legacy message (Kafka's LegacyRecord.write); -1 when out of memory.
    cdef Py_ssize_t klen = key_len if key_len > 0 else 0
    cdef Py_ssize_t vlen = value_len if value_len > 0 else 0
    cdef Py_ssize_t size = (OVERHEAD_V1 if magic == 1 else OVERHEAD_V0) + klen + vlen
    cdef uint8_t* m
    cdef uint8_t* p
    if _reserve(o, LOG_OVERHEAD + size) < 0:
        return -1
    p = o.data + o.len
    wr64(p, <uint64_t>offset)
    wr32(p + 8, <uint32_t>size)
    m = p + LOG_OVERHEAD
    m[M_MAGIC] = <uint8_t>magic
    m[M_ATTRS] = <uint8_t>attrs
    p = m + M_TIMESTAMP
    if magic == 1:
        wr64(p, <uint64_t>timestamp)
        p += 8
    wr32(p, <uint32_t>key_len)
    p += 4
    if klen:
        memcpy(p, key, klen)
        p += klen
    wr32(p, <uint32_t>value_len)
    p += 4
    if vlen:
        memcpy(p, value, vlen)
    wr32(m + M_CRC, <uint32_t>crc32(0, m + M_MAGIC, <unsigned int>(size - M_MAGIC)))
    o.len += LOG_OVERHEAD + size
    return 0


# What _convert_records did, for the wrapper of a compressed batch.
cdef struct Converted:
    Py_ssize_t records
    int64_t first_offset
    int64_t last_offset
    int64_t max_timestamp


cdef int _convert_records(Out* o, const uint8_t* d, Py_ssize_t n, int32_t count,
                          const uint8_t* header, int magic, int64_t fetch_offset, bint inner,
                          Converted* c) noexcept nogil:
    # Write the ``count`` records of a batch's (uncompressed) records section d[:n] as
    # legacy messages: a message per record, headers dropped (RecordsUtil.convertRecordBatch).
    # Outside a wrapper, records before ``fetch_offset`` are dropped (a v0/v1 fetch may start
    # in the middle of an uncompressed batch). Inside one (``inner``), magic 1 offsets are
    # relative to the first record's. R_OK or a record_error code.
    cdef Py_ssize_t pos = 0
    cdef int32_t i
    cdef RecordFields r
    cdef int err, attrs = 0
    cdef int64_t base_offset = batch_base_offset(header)
    cdef int64_t base_ts = batch_base_timestamp(header)
    cdef bint lat = (batch_flags(header) & ATTR_TIMESTAMP_TYPE) != 0
    cdef int64_t offset, ts, written
    if lat and magic == 1:
        attrs = TS_TYPE_BIT
    c.records = 0
    c.max_timestamp = NO_TIMESTAMP
    for i in range(count):
        err = read_record(d, n, &pos, &r)
        if err != R_OK:
            return err
        pos = r.end                     # headers: dropped, as magic 0/1 have none
        offset = base_offset + r.offset_delta
        if not inner and offset < fetch_offset:
            continue
        # A LogAppendTime batch's records all read as its maxTimestamp (DefaultRecordBatch).
        ts = batch_max_timestamp(header) if lat else base_ts + r.ts_delta
        if c.records == 0:
            c.first_offset = offset
        written = offset - c.first_offset if inner and magic == 1 else offset
        if _write_message(o, magic, written, attrs, ts,
                          d + r.key_off, r.key_len, d + r.val_off, r.val_len) < 0:
            return R_NOMEM
        c.records += 1
        c.last_offset = offset
        if ts > c.max_timestamp:
            c.max_timestamp = ts
    if pos != n:
        return R_TRAILING
    return R_OK


def down_convert(buf, int magic, int64_t fetch_offset):
    """A Fetch v0-3 partition's records: the magic 2 batches of ``buf`` (a log read from
    ``fetch_offset``; a partial batch at the end is ignored) converted to ``magic`` (0 or 1)
    as Kafka 3.x answers them (see the module doc): the bytes of the response's records
    field. Empty if nothing converts (only control batches, or no whole batch).

    Raises UnsupportedCompressionTypeError for a zstd batch (Kafka: "Down-conversion of
    zstandard-compressed batches is not supported"), CorruptMessageError for records that
    do not parse.
    """
    cdef _View v = _View(buf)
    cdef const uint8_t* d = v.data
    cdef Py_ssize_t n = v.size, pos = 0, size = 0, target = -1, rem, piece
    cdef const uint8_t* p
    cdef int flags, codec, err = R_OK, wrapper_attrs
    cdef Converted c
    cdef Out o, tmp
    cdef _View blob
    cdef Py_ssize_t wpos
    if magic != 0 and magic != 1:
        raise ValueError(f"magic {magic}: down-conversion is to magic 0 or 1")
    o.data = NULL
    o.len = o.cap = 0
    tmp.data = NULL
    tmp.len = tmp.cap = 0
    try:
        while pos < n and batch_frame(d, n, pos, &size) == FRAME_OK:
            p = d + pos
            pos += size
            flags = batch_flags(p)
            if flags & ATTR_CONTROL:
                continue                # magic 0/1 have no control records
            codec = flags & ATTR_COMPRESSION_MASK
            if codec == 4:
                raise UnsupportedCompressionTypeError(
                    "Down-conversion of zstandard-compressed batches is not supported")
            if codec == 0:
                with nogil:
                    err = _convert_records(&o, p + RECORD_BATCH_OVERHEAD,
                                           size - RECORD_BATCH_OVERHEAD,
                                           batch_records_count(p), p, magic, fetch_offset,
                                           False, &c)
            else:
                blob = _View(_decompress(codec, memoryview(buf)[pos - size + RECORD_BATCH_OVERHEAD:pos]))
                tmp.len = 0
                with nogil:
                    err = _convert_records(&tmp, blob.data, blob.size, batch_records_count(p),
                                           p, magic, fetch_offset, True, &c)
                if err == R_OK and c.records:
                    value = _compress(codec, PyBytes_FromStringAndSize(<char*>tmp.data,
                                                                       tmp.len), magic == 0)
                    wrapper_attrs = codec
                    if magic == 1 and flags & ATTR_TIMESTAMP_TYPE:
                        wrapper_attrs |= TS_TYPE_BIT
                        c.max_timestamp = batch_max_timestamp(p)
                    blob = _View(value)
                    with nogil:
                        err = R_OK if _write_message(
                            &o, magic, c.last_offset, wrapper_attrs, c.max_timestamp, NULL, -1,
                            blob.data, <int32_t>blob.size) == 0 else R_NOMEM
            if err == R_NOMEM:
                raise MemoryError()
            if err != R_OK:
                raise CorruptMessageError(
                    f"record batch at offset {batch_base_offset(p)}: "
                    f"{record_error(err).decode()}")
            if target < 0 and o.len > 0:
                # KIP-283: the answer is as long as the larger of the read and the first
                # converted batch; what is converted beyond that is never sent.
                target = n if n > o.len else o.len
            if target >= 0 and o.len >= target:
                break
        if o.len == 0:
            return b""
        if o.len > target:
            o.len = target
        while o.len < target:
            # Kafka's overflow message: offset -1 and a length past the end, so clients
            # discard it as a partial message.
            rem = target - o.len
            piece = rem + 1 if rem + 1 < MAX_READ_SIZE else MAX_READ_SIZE
            if piece < MIN_OVERFLOW:
                piece = MIN_OVERFLOW
            if _reserve(&o, piece) < 0:
                raise MemoryError()
            memset(o.data + o.len, 0, piece)
            wr64(o.data + o.len, <uint64_t>(<int64_t>-1))
            wr32(o.data + o.len + 8, <uint32_t>(rem + 1 if rem + 1 > RECORD_BATCH_OVERHEAD
                                                else RECORD_BATCH_OVERHEAD))
            o.len += piece if piece < rem else rem
        return PyBytes_FromStringAndSize(<char*>o.data, o.len)
    finally:
        free(o.data)
        free(tmp.data)
