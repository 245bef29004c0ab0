# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# Bounds checks are off because every read goes through _need(), which raises before any byte
# past the frame's end is touched, and every write through Writer.reserve() (_codec.pxd),
# which grows first.
"""The Fetch request's decode and the Fetch response's encode, compiled (issue 22 part 2).

``decode_fetch_request(frame, offset, version)`` reads a Fetch request body (v0-15) straight
from the frame into plain tuples: no generated attrs objects per topic or partition, only
the values the fetch needs. ``encode_fetch_response(...)`` writes the response header and
every part of the answer that is not records (throttle, error, session id, per partition the
watermarks, aborted transactions, preferred read replica and, v12+, the tagged diverging
epoch, current leader and snapshot id), with each partition's records left out where they
are not a buffer (a log read: sent with sendfile by the connection), exactly as
``kafkapy.protocol.encode_response_parts`` cuts the generated FetchResponse.

Layout read (the protocol reference; ``kafkapy/protocol/messages/fetch.py`` declares it)::

    ReplicaId INT32 (v0-14) | MaxWaitMs INT32 | MinBytes INT32 | MaxBytes INT32 (v3+)
    IsolationLevel INT8 (v4+) | SessionId INT32, SessionEpoch INT32 (v7+)
    Topics [Topic STRING (v0-12) / TopicId UUID (v13+)
            Partitions [Partition INT32 | CurrentLeaderEpoch INT32 (v9+) | FetchOffset INT64
                        LastFetchedEpoch INT32 (v12+) | LogStartOffset INT64 (v5+)
                        PartitionMaxBytes INT32 | tagged (v12+)] | tagged (v12+)]
    ForgottenTopicsData (v7+) [Topic / TopicId | Partitions [INT32] | tagged (v12+)]
    RackId STRING (v11+) | tagged (v12+): 0 ClusterId, 1 ReplicaState (v15+: ReplicaId INT32,
    ReplicaEpoch INT64)

v12+ is flexible: compact strings and arrays (UVARINT n+1), a tagged-field section after
every struct; unknown tags are skipped, as Kafka's generated readers skip them.

Safety on hostile input (as ``kafkapy._codec``): every length and count is checked against
the bytes left before anything is read or allocated, varints longer than 32 bits and invalid
UTF-8 are refused; anything malformed raises ``InvalidRequestError``, nothing else escapes.
The encoder raises ``UnsupportedVersionError`` for a value the version cannot carry (a
session id before v7, a preferred read replica before v11, a tagged struct before v12), as
the generated encoder's non-ignorable field check does.
"""

cimport cython
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE,
                             PyObject_CheckBuffer)
from cpython.mem cimport PyMem_Malloc, PyMem_Realloc, PyMem_Free
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t)
from libc.string cimport memcpy

from kafkapy._codec cimport Writer
from kafkapy._bigendian cimport rd16, rd32, rd64, wr16, wr32, wr64

import uuid as _uuid

from kafkapy.errors import InvalidRequestError, UnsupportedVersionError

cdef object _UUID = _uuid.UUID
cdef object _ZERO_UUID = _uuid.UUID(int=0)

MIN_VERSION = 0
MAX_VERSION = 15


# ============================================================================ decode

cdef struct _In:
    const uint8_t* data
    Py_ssize_t pos
    Py_ssize_t end


cdef inline int _need(_In* r, Py_ssize_t n) except -1:
    if n < 0 or n > r.end - r.pos:
        raise InvalidRequestError(
            f"truncated Fetch request: needed {n} bytes at offset {r.pos}, {r.end - r.pos} left")
    return 0


cdef inline int32_t _i32(_In* r) except? -1:
    _need(r, 4)
    r.pos += 4
    return <int32_t>rd32(r.data + r.pos - 4)


cdef inline int64_t _i64(_In* r) except? -1:
    _need(r, 8)
    r.pos += 8
    return <int64_t>rd64(r.data + r.pos - 8)


cdef inline int _i8(_In* r) except? -1:
    _need(r, 1)
    r.pos += 1
    return <int8_t>r.data[r.pos - 1]


cdef uint32_t _uvarint(_In* r) except? 0xFFFFFFFF:
    cdef uint32_t value = 0
    cdef int shift = 0
    cdef uint8_t b
    while True:
        if r.pos >= r.end:
            raise InvalidRequestError(f"truncated varint at offset {r.pos}")
        b = r.data[r.pos]
        r.pos += 1
        if shift == 28 and (b & 0xF0):
            raise InvalidRequestError(f"varint longer than 32 bits at offset {r.pos}")
        value |= <uint32_t>(b & 0x7F) << shift
        if not (b & 0x80):
            return value
        shift += 7


cdef Py_ssize_t _length(_In* r, bint compact, bint wide, bint nullable,
                        str what) except -2:
    """A string/array length: -1 for null (when allowed), else checked against what is
    left (an array element takes at least one byte)."""
    cdef int64_t n
    if compact:
        n = <int64_t>_uvarint(r) - 1
    elif wide:
        n = _i32(r)
    else:
        _need(r, 2)
        r.pos += 2
        n = <int16_t>rd16(r.data + r.pos - 2)
    if n == -1:
        if not nullable:
            raise InvalidRequestError(f"Fetch request: {what} is null")
        return -1
    if n < -1:
        raise InvalidRequestError(f"Fetch request: {what} has negative length {n}")
    if n > r.end - r.pos:
        raise InvalidRequestError(
            f"Fetch request: {what} claims {n} bytes or elements, only {r.end - r.pos} "
            f"bytes left")
    return <Py_ssize_t>n


cdef object _string(_In* r, bint compact, bint nullable, str what):
    cdef Py_ssize_t n = _length(r, compact, False, nullable, what)
    cdef Py_ssize_t start
    if n < 0:
        return None
    start = r.pos
    r.pos += n
    try:
        return PyUnicode_DecodeUTF8(<const char*>r.data + start, n, "strict")
    except UnicodeDecodeError as e:
        raise InvalidRequestError(f"Fetch request: {what} is not UTF-8 ({e.reason})") from e


cdef object _uuid_at(_In* r):
    cdef uint64_t hi, lo
    _need(r, 16)
    hi = rd64(r.data + r.pos)
    lo = rd64(r.data + r.pos + 8)
    r.pos += 16
    if hi == 0 and lo == 0:
        return _ZERO_UUID
    return _UUID(int=(<object>hi << 64) | lo)


cdef int _skip_tagged(_In* r) except -1:
    """A tagged-field section none of whose tags this reader needs."""
    cdef uint32_t count = _uvarint(r)
    cdef uint32_t k, size
    if count > <uint32_t>(r.end - r.pos):
        raise InvalidRequestError(f"Fetch request: {count} tagged fields but only "
                                  f"{r.end - r.pos} bytes left")
    for k in range(count):
        _uvarint(r)
        size = _uvarint(r)
        _need(r, size)
        r.pos += size
    return 0


def decode_fetch_request(buf, Py_ssize_t offset, int version):
    """Decode the Fetch request body at ``offset`` of ``buf`` (a frame: bytes, bytearray or
    memoryview), Fetch ``version`` 0-15.

    Returns ``(replica_id, replica_epoch, max_wait_ms, min_bytes, max_bytes,
    isolation_level, session_id, session_epoch, topics, forgotten, rack_id, cluster_id,
    end)``, with the defaults of the fields a version lacks (as the generated FetchRequest
    has them); ``replica_id``/``replica_epoch`` come from ReplicaState in v15.
    ``topics``: ``[(topic, topic_id, [(partition, current_leader_epoch, fetch_offset,
    last_fetched_epoch, log_start_offset, partition_max_bytes), ...]), ...]``;
    ``forgotten``: ``[(topic, topic_id, [partition, ...]), ...]`` (topic None from v13, topic_id
    None before); ``end`` the offset after the body (bytes after it are the caller's to judge).

    Raises:
        InvalidRequestError: malformed or truncated bytes, or a version outside 0-15.
    """
    cdef Py_buffer view
    cdef _In r
    cdef bint flexible = version >= 12
    cdef bint ids = version >= 13
    cdef int32_t replica_id = -1, max_wait_ms, min_bytes, max_bytes = 0x7FFFFFFF
    cdef int64_t replica_epoch = -1
    cdef int isolation_level = 0
    cdef int32_t session_id = 0, session_epoch = -1
    cdef int32_t partition, leader_epoch, last_fetched_epoch, partition_max_bytes
    cdef int64_t fetch_offset, log_start_offset
    cdef Py_ssize_t ntopics, nparts, i, j, tag_end, saved_end
    cdef uint32_t count, k, tag, size
    cdef list topics, parts, forgotten, ints
    cdef object name, topic_id, rack_id = "", cluster_id = None
    if version < 0 or version > 15:
        raise InvalidRequestError(f"Fetch v{version} is not decoded here (v0-15)")
    PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
    try:
        r.data = <const uint8_t*>view.buf
        r.end = view.len
        if offset < 0 or offset > r.end:
            raise InvalidRequestError(f"body offset {offset} outside a frame of {r.end} bytes")
        r.pos = offset
        if version <= 14:
            replica_id = _i32(&r)
        max_wait_ms = _i32(&r)
        min_bytes = _i32(&r)
        if version >= 3:
            max_bytes = _i32(&r)
        if version >= 4:
            isolation_level = _i8(&r)
        if version >= 7:
            session_id = _i32(&r)
            session_epoch = _i32(&r)
        ntopics = _length(&r, flexible, True, False, "Topics")
        topics = []
        for i in range(ntopics):
            if ids:
                name = None
                topic_id = _uuid_at(&r)
            else:
                name = _string(&r, flexible, False, "Topic")
                topic_id = None
            nparts = _length(&r, flexible, True, False, "Partitions")
            parts = []
            for j in range(nparts):
                partition = _i32(&r)
                leader_epoch = _i32(&r) if version >= 9 else -1
                fetch_offset = _i64(&r)
                last_fetched_epoch = _i32(&r) if version >= 12 else -1
                log_start_offset = _i64(&r) if version >= 5 else -1
                partition_max_bytes = _i32(&r)
                if flexible:
                    _skip_tagged(&r)
                parts.append((partition, leader_epoch, fetch_offset, last_fetched_epoch,
                              log_start_offset, partition_max_bytes))
            if flexible:
                _skip_tagged(&r)
            topics.append((name, topic_id, parts))
        forgotten = []
        if version >= 7:
            ntopics = _length(&r, flexible, True, False, "ForgottenTopicsData")
            for i in range(ntopics):
                if ids:
                    name = None
                    topic_id = _uuid_at(&r)
                else:
                    name = _string(&r, flexible, False, "ForgottenTopicsData.Topic")
                    topic_id = None
                nparts = _length(&r, flexible, True, False, "ForgottenTopicsData.Partitions")
                _need(&r, 4 * nparts)
                ints = []
                for j in range(nparts):
                    ints.append(<int32_t>rd32(r.data + r.pos))
                    r.pos += 4
                if flexible:
                    _skip_tagged(&r)
                forgotten.append((name, topic_id, ints))
        if version >= 11:
            rack_id = _string(&r, flexible, False, "RackId")
        if flexible:
            count = _uvarint(&r)
            if count > <uint32_t>(r.end - r.pos):
                raise InvalidRequestError(f"Fetch request: {count} tagged fields but only "
                                          f"{r.end - r.pos} bytes left")
            for k in range(count):
                tag = _uvarint(&r)
                size = _uvarint(&r)
                _need(&r, size)
                tag_end = r.pos + size
                saved_end = r.end
                r.end = tag_end         # a tagged field cannot read past its own size
                if tag == 0:
                    cluster_id = _string(&r, True, True, "ClusterId")
                elif tag == 1 and version >= 15:
                    replica_id = _i32(&r)
                    replica_epoch = _i64(&r)
                    _skip_tagged(&r)
                else:
                    r.pos = tag_end     # a tag this version does not know: skipped
                r.end = saved_end
                if r.pos != tag_end:
                    raise InvalidRequestError(
                        f"Fetch request: tagged field {tag} of {size} bytes decoded to "
                        f"{size - (tag_end - r.pos)}")
        return (replica_id, replica_epoch, max_wait_ms, min_bytes, max_bytes, isolation_level,
                session_id, session_epoch, topics, forgotten, rack_id, cluster_id, r.pos)
    finally:
        PyBuffer_Release(&view)


# ============================================================================ encode

cdef int _write_uuid(Writer w, object value) except -1:
    cdef object n = value.int
    w.i64(<int64_t><uint64_t>(n >> 64))
    return w.i64(<int64_t><uint64_t>(n & 0xFFFFFFFFFFFFFFFF))


cdef int _write_topic_name(Writer w, object name, bint compact) except -1:
    cdef bytes utf8 = (<str?>name).encode("utf-8")
    cdef Py_ssize_t n = len(utf8)
    if n > 0x7FFF:
        raise ValueError("Topic: string longer than 32767 bytes")
    w.length(n, compact, False)
    return w.raw(<const uint8_t*><char*>utf8, n)


cdef inline bint _is_default_pair(object pair):
    return pair is None or (pair[0] == -1 and pair[1] == -1)


def encode_fetch_response(int version, int32_t correlation_id, int32_t throttle_time_ms,
                          int16_t error_code, int32_t session_id, list topics):
    """Encode a Fetch response frame (without the size prefix), Fetch ``version`` 0-15: the
    response header, then the body.

    ``topics``: ``[(topic, topic_id, partitions), ...]`` (topic for v0-12, topic_id, a
    ``uuid.UUID``, for v13+), ``partitions``: ``[(partition_index, error_code, high_watermark,
    last_stable_offset, log_start_offset, aborted_transactions, preferred_read_replica,
    records, diverging_epoch, current_leader, snapshot_id), ...]`` with
    ``aborted_transactions`` None or ``[(producer_id, first_offset), ...]``, ``records``
    None (null), a buffer (written here) or an object with an int ``size`` (left out: only
    its length is written), and the last three None or ``(epoch, end_offset)``,
    ``(leader_id, leader_epoch)``, ``(end_offset, epoch)`` (v12+, tagged, written when not
    -1/-1).

    Returns ``[bytes, records, bytes, ..., bytes]`` in wire order, as
    ``encode_response_parts``: the caller sends each left-out value's ``size`` bytes between
    the pieces.

    Raises:
        UnsupportedVersionError: a value the version cannot carry.
        ValueError, TypeError, OverflowError: values of the wrong type or range.
    """
    cdef bint flexible = version >= 12
    cdef bint ids = version >= 13
    cdef Writer w = Writer(256)
    cdef list out = []
    cdef Py_ssize_t start = 0
    cdef Py_buffer view
    cdef tuple part, topic
    cdef list parts
    cdef object records, aborted, diverging, leader, snapshot, txn
    cdef int ntagged
    cdef int32_t preferred
    if version < 0 or version > 15:
        raise UnsupportedVersionError(f"Fetch v{version} is not encoded here (v0-15)")
    if version < 7 and session_id != 0:
        raise UnsupportedVersionError(
            f"FetchResponse.session_id cannot be expressed in version {version}")
    # The response header: CorrelationId, and (header v1, flexible versions) its tagged fields.
    w.i32(correlation_id)
    if flexible:
        w.u8(0)
    if version >= 1:
        w.i32(throttle_time_ms)
    if version >= 7:
        w.i16(error_code)
        w.i32(session_id)
    w.length(len(topics), flexible, True)
    for topic in topics:
        if ids:
            _write_uuid(w, topic[1])
        else:
            _write_topic_name(w, topic[0], flexible)
        parts = topic[2]
        w.length(len(parts), flexible, True)
        for part in parts:
            w.i32(part[0])
            w.i16(part[1])
            w.i64(part[2])
            if version >= 4:
                w.i64(part[3])
            if version >= 5:
                w.i64(part[4])
            aborted = part[5]
            if version >= 4:
                if aborted is None:
                    w.length(-1, flexible, True)
                else:
                    w.length(len(aborted), flexible, True)
                    for txn in aborted:
                        w.i64(txn[0])
                        w.i64(txn[1])
                        if flexible:
                            w.u8(0)
            preferred = part[6]
            if version >= 11:
                w.i32(preferred)
            elif preferred != -1:
                raise UnsupportedVersionError(f"PartitionData.preferred_read_replica cannot "
                                              f"be expressed in version {version}")
            records = part[7]
            if records is None:
                w.length(-1, flexible, True)
            elif PyObject_CheckBuffer(records):
                PyObject_GetBuffer(records, &view, PyBUF_SIMPLE)
                try:
                    w.length(view.len, flexible, True)
                    w.raw(<const uint8_t*>view.buf, view.len)
                finally:
                    PyBuffer_Release(&view)
            else:
                # Records sent from a file (sendfile): only the length here, the value between
                # the pieces.
                w.length(<Py_ssize_t>records.size, flexible, True)
                out.append(w.cut(start, w.pos))
                out.append(records)
                start = w.pos
            diverging = part[8]
            leader = part[9]
            snapshot = part[10]
            if flexible:
                ntagged = (not _is_default_pair(diverging)) + (not _is_default_pair(leader)) \
                    + (not _is_default_pair(snapshot))
                w.u8(<uint8_t>ntagged)
                if not _is_default_pair(diverging):     # tag 0: Epoch, EndOffset
                    w.u8(0)
                    w.u8(13)
                    w.i32(diverging[0])
                    w.i64(diverging[1])
                    w.u8(0)
                if not _is_default_pair(leader):        # tag 1: LeaderId, LeaderEpoch
                    w.u8(1)
                    w.u8(9)
                    w.i32(leader[0])
                    w.i32(leader[1])
                    w.u8(0)
                if not _is_default_pair(snapshot):      # tag 2: EndOffset, Epoch
                    w.u8(2)
                    w.u8(13)
                    w.i64(snapshot[0])
                    w.i32(snapshot[1])
                    w.u8(0)
            elif not (_is_default_pair(diverging) and _is_default_pair(leader)
                      and _is_default_pair(snapshot)):
                raise UnsupportedVersionError(f"PartitionData's diverging epoch, current "
                                              f"leader and snapshot id need version 12")
        if flexible:
            w.u8(0)
    if flexible:
        w.u8(0)
    out.append(w.cut(start, w.pos))
    return out
