# cython: language_level=3
"""The growable output buffer of the compiled encoders (``Writer``), shared by ``_codec`` (the
schema-driven encoder) and the hand-written ones of ``_fetch`` and ``_produce``: one
implementation, its small writes inline in every module that cimports it."""

from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

from kafkapy._bigendian cimport wr16, wr32, wr64


cdef class Writer:
    cdef uint8_t* data
    cdef Py_ssize_t pos
    cdef Py_ssize_t cap
    # (position, value) of each records value left out of the bytes (see _codec's
    # _encode_value); None where that is not allowed (tagged-field sub-writers).
    cdef list splices

    cdef int reserve(self, Py_ssize_t n) except -1
    cdef int uvarint(self, uint32_t v) except -1
    cdef int raw(self, const uint8_t* p, Py_ssize_t n) except -1
    cdef int length(self, Py_ssize_t n, bint compact, bint wide) except -1
    cdef bytes getvalue(self)
    cdef bytes cut(self, Py_ssize_t start, Py_ssize_t stop)

    cdef inline int u8(self, uint8_t v) except -1:
        self.reserve(1)
        self.data[self.pos] = v
        self.pos += 1
        return 0

    cdef inline int u16(self, uint16_t v) except -1:
        self.reserve(2)
        wr16(self.data + self.pos, v)
        self.pos += 2
        return 0

    cdef inline int u32(self, uint32_t v) except -1:
        self.reserve(4)
        wr32(self.data + self.pos, v)
        self.pos += 4
        return 0

    cdef inline int u64(self, uint64_t v) except -1:
        self.reserve(8)
        wr64(self.data + self.pos, v)
        self.pos += 8
        return 0

    cdef inline int i16(self, int16_t v) except -1:
        return self.u16(<uint16_t>v)

    cdef inline int i32(self, int32_t v) except -1:
        return self.u32(<uint32_t>v)

    cdef inline int i64(self, int64_t v) except -1:
        return self.u64(<uint64_t>v)
