# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# Bounds checks are off because nothing here is indexed by Python-level subscripts except the
# 4-byte ``_hdr`` array, whose index ``_hdr_len + i`` stays below 4 by the ``take`` computation;
# every memcpy length is the minimum of what the source holds and what the target has left.
"""The SocketServer's stream framer (Kafka's ``NetworkReceive``): cuts size-prefixed frames out
of a TCP byte stream.

Frame layout (requests and responses alike; big-endian)::

    off  field    type
      0  size     INT32   length of what follows; 0 is a valid empty frame, < 0 is invalid
      4  payload  size bytes

Theory of operation: ``FrameSplitter.feed`` takes whatever ``recv`` returned and hands back
every frame it completed, in order, without the size prefix, as a ``bytearray``: mutable, so
the log assigns a produce request's offsets in the frame itself (its records are memoryviews
into it) instead of copying the batches first. Data may be cut at any byte,
including inside the prefix. A frame that lies wholly inside one chunk is copied out of it once;
a frame that spans chunks is assembled in a bytearray allocated at exactly its announced
size as soon as the prefix is complete, so a 100 MiB frame in 64 KiB pieces costs one
allocation and one copy per byte (no re-growing, no quadratic copying).

Invariants: the prefix is validated before anything is allocated from it: a negative size or
one above ``max_frame_size`` (Kafka's ``socket.request.max.bytes``, 100 MiB by default) raises
``InvalidRequestError`` at once, and the splitter then refuses all further input (the caller
closes the connection, as Kafka does). So the memory held per connection is bounded by
``max_frame_size + 4``.

Thread-safety: a splitter belongs to one connection and must be fed by one task at a time; it
holds no global state. ``size_prefixed`` is a pure function.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_FromStringAndSize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint32_t
from kafkapy._bigendian cimport rd32
from libc.string cimport memcpy

from kafkapy.errors import InvalidRequestError

cdef enum:
    PREFIX = 4
    INT32_MAX = 2147483647

DEFAULT_MAX_FRAME_SIZE = 104857600  # socket.request.max.bytes




cdef class FrameSplitter:
    """Incremental splitter of a stream of ``INT32 size + payload`` frames.

    ``FrameSplitter(max_frame_size=104857600)``; ``feed(data)`` returns the completed payloads.

    Raises (from ``feed``):
        InvalidRequestError: a frame size is negative or above ``max_frame_size``; raised
            again by every later call. ``frames`` on the exception: see ``feed``.
    """

    cdef readonly Py_ssize_t max_frame_size
    cdef unsigned char _hdr[4]
    cdef Py_ssize_t _hdr_len     # prefix bytes held in _hdr (0..3)
    cdef bytearray _body         # frame being filled (exactly _need bytes long), or None
    cdef Py_ssize_t _need
    cdef Py_ssize_t _have        # bytes of _body filled so far
    cdef str _error              # set once the stream is invalid

    def __init__(self, Py_ssize_t max_frame_size=DEFAULT_MAX_FRAME_SIZE):
        if max_frame_size < 0 or max_frame_size > INT32_MAX:
            raise ValueError(f"max_frame_size must be in [0, {INT32_MAX}], not {max_frame_size}")
        self.max_frame_size = max_frame_size
        self._hdr_len = 0
        self._body = None
        self._need = 0
        self._have = 0
        self._error = None

    def raise_limit(self, Py_ssize_t max_frame_size):
        """Accept frames up to ``max_frame_size`` from now on (never lowers the limit): a SASL
        connection reads with ``sasl.server.max.receive.size`` until it is authenticated, then
        with ``socket.request.max.bytes``. A frame whose size was already accepted is
        unaffected (sizes are checked once, when the prefix is complete)."""
        if max_frame_size > INT32_MAX:
            raise ValueError(f"max_frame_size must be at most {INT32_MAX}, not {max_frame_size}")
        if max_frame_size > self.max_frame_size:
            self.max_frame_size = max_frame_size

    @property
    def buffered(self):
        """Bytes received but not yet returned as part of a frame (prefix bytes included)."""
        if self._body is None:
            return self._hdr_len
        return PREFIX + self._have

    def feed(self, data):
        """Append ``data`` (any contiguous buffer) and return every frame it completes.

        Raises:
            InvalidRequestError: invalid frame size (see the class doc); the splitter is then
                unusable. Its ``frames`` attribute holds the frames this call completed before
                the invalid prefix (Kafka serves requests that precede a bad one), in order.
        """
        if self._error is not None:
            err = InvalidRequestError(self._error)
            err.frames = []
            raise err
        cdef Py_buffer buf
        PyObject_GetBuffer(data, &buf, PyBUF_SIMPLE)
        try:
            return self._feed(<const unsigned char*>buf.buf, buf.len)
        finally:
            PyBuffer_Release(&buf)

    cdef list _feed(self, const unsigned char* p, Py_ssize_t n):
        cdef list out = []
        cdef Py_ssize_t pos = 0, take, i
        cdef int32_t size
        while pos < n:
            if self._body is not None:
                take = min(self._need - self._have, n - pos)
                memcpy(PyByteArray_AS_STRING(self._body) + self._have, p + pos, take)
                self._have += take
                pos += take
                if self._have == self._need:
                    out.append(self._body)
                    self._body = None
                    self._need = self._have = 0
                continue
            if self._hdr_len == 0 and n - pos >= PREFIX:
                size = <int32_t>rd32(p + pos)
                pos += PREFIX
            else:
                take = min(PREFIX - self._hdr_len, n - pos)
                for i in range(take):
                    self._hdr[self._hdr_len + i] = p[pos + i]
                self._hdr_len += take
                pos += take
                if self._hdr_len < PREFIX:
                    break
                self._hdr_len = 0
                size = <int32_t>rd32(self._hdr)
            if size < 0 or size > self.max_frame_size:
                self._fail(size, out)
            if n - pos >= size:
                out.append(PyByteArray_FromStringAndSize(<const char*>p + pos, size))
                pos += size
            else:
                # Validated above: size <= max_frame_size, so this allocation is bounded.
                self._body = PyByteArray_FromStringAndSize(NULL, size)
                self._need = size
                self._have = 0
        return out

    cdef int _fail(self, int32_t size, list frames) except -1:
        if size < 0:
            self._error = f"invalid frame size {size}"
        else:
            self._error = (f"invalid frame size {size}: larger than the maximum of "
                           f"{self.max_frame_size} bytes")
        err = InvalidRequestError(self._error)
        err.frames = frames
        raise err


def size_prefixed(payload):
    """``payload`` (any contiguous buffer) with its 4-byte big-endian length in front.

    Raises:
        ValueError: the payload is longer than 2**31 - 1 bytes.
    """
    cdef Py_buffer buf
    cdef bytes out
    cdef unsigned char* q
    cdef int64_t n
    PyObject_GetBuffer(payload, &buf, PyBUF_SIMPLE)
    try:
        n = buf.len
        if n > INT32_MAX:
            raise ValueError(f"payload of {n} bytes does not fit an INT32 size")
        out = PyBytes_FromStringAndSize(NULL, n + PREFIX)
        q = <unsigned char*>PyBytes_AS_STRING(out)
        q[0] = <unsigned char>(n >> 24)
        q[1] = <unsigned char>(n >> 16)
        q[2] = <unsigned char>(n >> 8)
        q[3] = <unsigned char>n
        memcpy(q + PREFIX, buf.buf, n)
        return out
    finally:
        PyBuffer_Release(&buf)
