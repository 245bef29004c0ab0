# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled hot paths of the log: binary search over a memory-mapped index.

Both index kinds are arrays of fixed-size big-endian entries (see kafkapy.log.index): the
offset index ``relativeOffset INT32, position INT32`` (8 bytes), the time index ``timestamp
INT64, relativeOffset INT32`` (12 bytes). A lookup is Kafka's ``largestLowerBoundSlotFor``: the
last slot whose key is <= the target, or -1 when the first key is already greater. Keys are
non-decreasing by construction (appends are checked), so plain binary search applies. The GIL
is released for the search.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport int32_t, int64_t, uint8_t

from kafkapy._bigendian cimport rd32, rd64


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


def largest_lower_bound(buf, Py_ssize_t entries, int entry_size, int64_t target):
    """The last slot among the first ``entries`` of ``buf`` whose key is <= ``target``, or -1.

    ``entry_size`` is 8 (offset index, INT32 keys) or 12 (time index, INT64 keys).
    """
    cdef Py_buffer view
    cdef Py_ssize_t slot
    if entry_size != 8 and entry_size != 12:
        raise ValueError(f"entry size {entry_size} is neither 8 nor 12")
    PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
    try:
        if entries < 0 or entries * entry_size > view.len:
            raise ValueError(f"{entries} entries of {entry_size} bytes do not fit in "
                             f"{view.len} bytes")
        with nogil:
            if entry_size == 8:
                slot = _search32(<const uint8_t*>view.buf, entries, target)
            else:
                slot = _search64(<const uint8_t*>view.buf, entries, target)
    finally:
        PyBuffer_Release(&view)
    return slot
