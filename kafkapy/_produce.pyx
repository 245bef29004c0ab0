# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# Bounds checks are off because every read goes through _need(), which raises before any byte
# past the end of the frame is touched, and every write through Writer.reserve() (_codec.pxd),
# which grows first; no list or memoryview is indexed by an unchecked value.
"""Compiled Produce (v3-v11) codec: a request body straight from its frame, and the response
straight from compact per-partition results, without the generated message classes.

``decode_produce(frame, offset, version)`` reads the body of a Produce request that starts at
``offset`` (after the request header) and returns ``(transactional_id, acks, timeout_ms,
topics, end)``, ``end`` where the body ends in ``frame``, with ``topics = [(name, [(index, records, checked), ...]), ...]`` in wire order:
``records`` is a memoryview into ``frame`` (no copy), None for null records; ``checked`` is
what ``kafkapy._records.check_produce_batch`` made of them (the batch's ``BatchHeader``, or
the ``KafkaError`` it raised; None for null records). Those batch checks are the compiled
ones of ``_records``, called from here, not a copy. Flexible versions (v9+) are read with
their compact lengths; tagged fields are skipped (Produce requests declare none). Bytes
after the body (from ``end``) are ignored, as Kafka's generated readers ignore them.

``encode_produce_response(version, correlation_id, throttle_time_ms, topics)`` writes the
whole response frame (response header + body, without the size prefix), byte-equal to
``kafkapy.protocol.encode_response(ApiKey.PRODUCE, version, ...)`` of the ProduceResponse
that ``kafkapy.server.handlers.produce`` would build from the same results: ``topics =
[(name, [(index, result), ...]), ...]`` where each ``result`` reads like a
``ProducePartitionResult`` (``error``, ``base_offset``, ``log_append_time``,
``log_start_offset``, ``record_errors``, ``error_message``). The fields of an errored
partition follow Kafka's PartitionResponse: offsets -1, the log start offset kept only with
record errors (KIP-467), the error message from the record-validation error or the error.

``produce_now(frame, min_version, max_version, partitions, make_tp, append)`` serves the
common request in one call, from the whole frame (its request header read here: version,
correlation id, client id, tags) through the same body walk as ``decode_produce``, one
``append`` of every partition, to the encoded answer; it returns None, before anything is
appended, for every request that is not its case (see its doc).

Safety on hostile input: every length and count is checked against the bytes that remain
before anything is read or allocated from it, varints longer than 5 bytes are refused, null
arrays and topic names are refused. Malformed input raises ``InvalidRequestError`` only.
Versions outside 3-11 raise ValueError (v12 adds nothing on the wire, but it is not
declared here until it is served; v13 names topics by id).
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

from kafkapy._codec cimport Writer
from kafkapy._bigendian cimport rd16, rd32, wr16, wr32, wr64

from kafkapy._records import check_produce_batch
from kafkapy.errors import InvalidRequestError, KafkaError

MIN_VERSION = 3
MAX_VERSION = 11
cdef int _FLEXIBLE = 9


# ------------------------------------------------------------------------------ decoding

ctypedef struct _Cursor:
    const uint8_t* data
    Py_ssize_t pos
    Py_ssize_t end


cdef int _need(_Cursor* c, Py_ssize_t n, const char* what) except -1:
    if n < 0 or c.end - c.pos < n:
        raise InvalidRequestError(
            f"Produce request truncated: {what} needs {n} bytes at offset {c.pos}, "
            f"{c.end - c.pos} left")
    return 0


cdef int16_t _int16(_Cursor* c, const char* what) except? -1:
    _need(c, 2, what)
    cdef int16_t v = <int16_t>rd16(c.data + c.pos)
    c.pos += 2
    return v


cdef int32_t _int32(_Cursor* c, const char* what) except? -1:
    _need(c, 4, what)
    cdef int32_t v = <int32_t>rd32(c.data + c.pos)
    c.pos += 4
    return v


cdef uint32_t _uvarint(_Cursor* c, const char* what) except? 0xFFFFFFFF:
    cdef uint32_t v = 0
    cdef int shift = 0
    cdef uint8_t b
    while True:
        _need(c, 1, what)
        b = c.data[c.pos]
        c.pos += 1
        if shift == 28 and (b & 0xF0):
            raise InvalidRequestError(f"Produce request: {what.decode()} is a varint of more "
                                      f"than 32 bits")
        v |= <uint32_t>(b & 0x7F) << shift
        if not (b & 0x80):
            return v
        shift += 7


cdef Py_ssize_t _length(_Cursor* c, bint flexible, bint wide, const char* what) except? -2:
    """A string's (INT16), bytes' or array's (INT32) length, or its compact form
    (UVARINT n+1); -1 for null."""
    if flexible:
        return <Py_ssize_t>_uvarint(c, what) - 1
    if wide:
        return _int32(c, what)
    return _int16(c, what)


cdef object _string(_Cursor* c, bint flexible, bint nullable, const char* what):
    cdef Py_ssize_t n = _length(c, flexible, False, what)
    cdef object s
    if n < 0:
        if n == -1 and nullable:
            return None
        raise InvalidRequestError(f"Produce request: {what.decode()} is null or has length {n}")
    _need(c, n, what)
    try:
        s = PyUnicode_DecodeUTF8(<const char*>(c.data + c.pos), n, NULL)
    except UnicodeDecodeError as exc:
        raise InvalidRequestError(f"Produce request: {what.decode()} is not UTF-8: {exc}")
    c.pos += n
    return s


cdef Py_ssize_t _count(_Cursor* c, bint flexible, Py_ssize_t min_size,
                       const char* what) except -1:
    """An array's element count, checked against the bytes left (each element takes at
    least ``min_size``), as Kafka's generated readers check it before allocating."""
    cdef Py_ssize_t n = _length(c, flexible, True, what)
    if n < 0:
        raise InvalidRequestError(f"Produce request: {what.decode()} is null or has length {n}")
    if n * min_size > c.end - c.pos:
        raise InvalidRequestError(f"Produce request: {what.decode()} claims {n} elements, "
                                  f"{c.end - c.pos} bytes left")
    return n


cdef int _skip_tagged(_Cursor* c) except -1:
    cdef uint32_t count = _uvarint(c, b"tagged field count")
    cdef uint32_t i, size
    for i in range(count):
        _uvarint(c, b"tag")
        size = _uvarint(c, b"tagged field size")
        _need(c, size, b"tagged field")
        c.pos += size
    return 0


def decode_produce(frame, Py_ssize_t offset, int version):
    """The body of a Produce request at ``offset`` of ``frame`` (see the module doc).

    Raises:
        InvalidRequestError: the body does not decode.
        ValueError: a version this codec does not read.
    """
    if version < MIN_VERSION or version > MAX_VERSION:
        raise ValueError(f"the compiled Produce codec reads v{MIN_VERSION}-v{MAX_VERSION}, "
                         f"not v{version}")
    cdef Py_buffer buf
    PyObject_GetBuffer(frame, &buf, PyBUF_SIMPLE)
    cdef _Cursor c
    try:
        if offset < 0 or offset > buf.len:
            raise InvalidRequestError(f"Produce request: body offset {offset} outside the "
                                      f"{buf.len}-byte frame")
        c.data = <const uint8_t*>buf.buf
        c.pos = offset
        c.end = buf.len
        return _body(&c, frame, version) + (c.pos,)
    finally:
        PyBuffer_Release(&buf)


cdef tuple _body(_Cursor* c, frame, int version):
    """``(transactional_id, acks, timeout_ms, topics)`` of the body at the cursor (see the
    module doc), the cursor left where the body ends."""
    cdef bint flexible = version >= _FLEXIBLE
    cdef Py_ssize_t ntopics, nparts, i, j, n, start
    cdef int32_t index
    cdef object transactional_id, name, view, checked
    cdef object whole = memoryview(frame)
    cdef list topics, parts
    cdef int acks, timeout_ms
    transactional_id = _string(c, flexible, True, b"TransactionalId")
    acks = _int16(c, b"Acks")
    timeout_ms = _int32(c, b"TimeoutMs")
    # A topic is at least its name's length and its partition count.
    ntopics = _count(c, flexible, 2 if flexible else 6, b"TopicData")
    topics = []
    for i in range(ntopics):
        name = _string(c, flexible, False, b"Name")
        # A partition is at least its index and its records' length.
        nparts = _count(c, flexible, 5 if flexible else 8, b"PartitionData")
        parts = []
        for j in range(nparts):
            index = _int32(c, b"Index")
            n = _length(c, flexible, True, b"Records")
            if n < -1:
                raise InvalidRequestError(f"Produce request: Records has length {n}")
            if n == -1:
                view = None
                checked = None
            else:
                _need(c, n, b"Records")
                start = c.pos
                c.pos += n
                view = whole[start:c.pos]
                try:
                    checked = check_produce_batch(view, version)
                except KafkaError as exc:
                    checked = exc
            if flexible:
                _skip_tagged(c)
            parts.append((index, view, checked))
        if flexible:
            _skip_tagged(c)
        topics.append((name, parts))
    if flexible:
        _skip_tagged(c)
    return transactional_id, acks, timeout_ms, topics


# ------------------------------------------------------------------------------ encoding

cdef int _write_string(Writer out, object s, bint flexible) except -1:
    """A string (None: null) in its classic or compact form."""
    cdef Py_ssize_t n
    cdef const char* p
    if s is None:
        return out.length(-1, flexible, False)
    p = PyUnicode_AsUTF8AndSize(s, &n)
    if not flexible and n > 0x7FFF:
        raise ValueError(f"a string of {n} bytes does not fit an INT16 length")
    out.length(n, flexible, False)
    return out.raw(<const uint8_t*>p, n)


def encode_produce_response(int version, int32_t correlation_id, int32_t throttle_time_ms,
                            list topics):
    """The Produce response frame (header + body, no size prefix) for ``topics`` (see the
    module doc)."""
    if version < MIN_VERSION or version > MAX_VERSION:
        raise ValueError(f"the compiled Produce codec writes v{MIN_VERSION}-v{MAX_VERSION}, "
                         f"not v{version}")
    return _encode_response(version, correlation_id, throttle_time_ms, topics, None)


cdef bytes _encode_response(int version, int32_t correlation_id, int32_t throttle_time_ms,
                            list topics, dict results):
    """``encode_produce_response``; with ``results``, each partition's second item is the
    key of its result there instead of the result."""
    cdef bint flexible = version >= _FLEXIBLE
    cdef Writer out = Writer(64 + 64 * len(topics))
    cdef object name, result, error, record_errors, message, entry
    cdef list parts
    cdef tuple topic, part
    out.i32(correlation_id)
    if flexible:
        out.uvarint(0)                  # response header v1: no tagged fields
    out.length(len(topics), flexible, True)
    for topic in topics:
        name, parts = topic
        _write_string(out, name, flexible)
        out.length(len(parts), flexible, True)
        for part in parts:
            result = part[1] if results is None else results[part[1]]
            error = result.error
            record_errors = result.record_errors
            out.i32(part[0])
            if error is None:
                out.i16(0)
                out.i64(result.base_offset)
                out.i64(result.log_append_time)
            else:
                out.i16(error.code)
                out.i64(-1)
                out.i64(-1)
            if version >= 5:
                out.i64(result.log_start_offset if error is None or record_errors else -1)
            if version >= 8:
                out.length(len(record_errors), flexible, True)
                for entry in record_errors:
                    out.i32(entry.batch_index)
                    _write_string(out, entry.message, flexible)
                    if flexible:
                        out.uvarint(0)
                if error is None:
                    message = None
                elif record_errors:
                    message = result.error_message
                else:
                    message = error.message
                _write_string(out, message, flexible)
            if flexible:
                out.uvarint(0)          # no CurrentLeader (tag 0), as the Python path
        if flexible:
            out.uvarint(0)
    out.i32(throttle_time_ms)
    if flexible:
        out.uvarint(0)                  # no NodeEndpoints (tag 0)
    return out.getvalue()


# ------------------------------------------------------------------ answered in one call

# What ``produce_now`` returns for acks=0 (no answer is written): every partition appended,
# or one failed (Kafka closes the connection so that the producer notices).
NO_RESPONSE = 0
CLOSE_CONNECTION = 1


def produce_now(frame, int min_version, int max_version, dict partitions, make_tp,
                append):
    """The common Produce request, from its whole frame (header included) to its answer, in
    one call: the header's version checked against ``[min_version, max_version]`` (the
    advertised range within 3-11), the body decoded as ``decode_produce`` does (each
    partition's batch checked by ``check_produce_batch``), each partition looked up in
    ``partitions`` by ``make_tp(name, index)``, the whole request appended with one
    ``append(acks, entries)`` (``{tp: records}`` in wire order; it returns ``{tp: result}``,
    results read as in ``encode_produce_response``), and the answer encoded.

    Returns the response frame (without its size prefix), or for acks=0 ``NO_RESPONSE`` or
    ``CLOSE_CONNECTION`` (a partition failed). Returns None, before anything is appended,
    for every request that is not the common case, which the caller then serves its general
    way: a header or body that does not decode, another version, a transactional id, acks
    outside -1/0/1, null records, a batch ``check_produce_batch`` refuses or that is
    transactional, a partition not hosted here or named twice, a partition whose log
    flushes on append (``partition.log.flushes_on_append``), and for acks=-1 a partition
    with other replicas (``partition.sole_replica`` false: the answer would wait for them).
    """
    cdef Py_buffer buf
    PyObject_GetBuffer(frame, &buf, PyBUF_SIMPLE)
    cdef _Cursor c
    cdef int version, acks
    cdef int32_t correlation_id
    cdef Py_ssize_t n
    cdef object transactional_id, name, index, records, checked, tp, partition, result
    cdef list topics, parts, layout, tps
    cdef dict entries = {}, results
    try:
        c.data = <const uint8_t*>buf.buf
        c.pos = 0
        c.end = buf.len
        try:
            # The request header (v1, or v2 from Produce v9): key, version, correlation id,
            # client id, tagged fields.
            _need(&c, 8, b"request header")
            version = <int16_t>rd16(c.data + 2)
            if version < min_version or version > max_version or \
                    version < MIN_VERSION or version > MAX_VERSION:
                return None
            correlation_id = <int32_t>rd32(c.data + 4)
            c.pos = 8
            n = _int16(&c, b"ClientId")
            if n < -1:
                return None
            if n > 0:
                _need(&c, n, b"ClientId")
                c.pos += n
            if version >= _FLEXIBLE:
                _skip_tagged(&c)
            transactional_id, acks, _, topics = _body(&c, frame, version)
        except InvalidRequestError:
            return None
    finally:
        PyBuffer_Release(&buf)
    if transactional_id is not None or acks < -1 or acks > 1:
        return None
    layout = []
    for name, parts in topics:
        tps = []
        for index, records, checked in parts:
            if records is None or isinstance(checked, KafkaError) or checked.is_transactional:
                return None
            tp = make_tp(name, index)
            partition = partitions.get(tp)
            if partition is None or tp in entries or partition.log.flushes_on_append or \
                    (acks == -1 and not partition.sole_replica):
                return None
            entries[tp] = records
            tps.append((index, tp))
        layout.append((name, tps))
    # From here on the request is this path's.
    results = append(acks, entries)
    if acks == 0:
        for result in results.values():
            if result.error is not None:
                return CLOSE_CONNECTION
        return NO_RESPONSE
    return _encode_response(version, correlation_id, 0, layout, results)
