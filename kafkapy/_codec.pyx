# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# Bounds checks are off because every read goes through Reader.need(), which raises before any
# byte past ``end`` is touched, and every write through Writer.reserve(), which grows first.
"""Compiled Kafka wire codec: primitives and the schema-driven struct encoder/decoder.

Wire primitives (all big-endian)::

    BOOL 1 byte | INT8 1 | INT16 2 | UINT16 2 | INT32 4 | UINT32 4 | INT64 8 | FLOAT64 8 | UUID 16
    STRING   INT16 n (-1 = null), n bytes UTF-8    COMPACT_STRING  UVARINT n+1 (0 = null), n bytes
    BYTES    INT32 n (-1 = null), n bytes          COMPACT_BYTES   UVARINT n+1 (0 = null), n bytes
    ARRAY    INT32 n (-1 = null), n elements       COMPACT_ARRAY   UVARINT n+1 (0 = null), ...
    nullable STRUCT  INT8 -1 (null) or 1, then the struct
    tagged fields (flexible versions, at the end of every struct):
             UVARINT count, then per field UVARINT tag, UVARINT size, size bytes

A *plan* is one struct at one version, compiled by :mod:`kafkapy.protocol.codec` from the
declarations: the fields on the wire in order (``FieldPlan``), the tagged ones by tag, and the
absent ones with their defaults. ``decode_struct`` and ``encode_struct`` interpret plans; there is
no per-message or per-version code anywhere.

Safety on hostile input: every length and count is checked against the bytes that remain
before anything is allocated or read (an array cannot claim more elements than there are bytes
left, as Kafka's generated code checks), varints longer than 5 bytes are refused, and nesting
is bounded by the declarations. Malformed input raises ``InvalidRequestError``; nothing else
escapes (UTF-8 errors included).
"""

cimport cython
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.object cimport PyObject, PyTypeObject
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE, PyObject_CheckBuffer
from cpython.mem cimport PyMem_Malloc, PyMem_Realloc, PyMem_Free
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t)
from libc.string cimport memcpy

from kafkapy._bigendian cimport rd16, rd32, rd64, wr16, wr32, wr64

import types as _types
import uuid as _uuid

from kafkapy.errors import InvalidRequestError

# Opcodes: the same numbers as kafkapy.protocol.schema's primitives (checked at import by codec.py).
cdef enum:
    OP_BOOL = 1
    OP_INT8 = 2
    OP_INT16 = 3
    OP_UINT16 = 4
    OP_INT32 = 5
    OP_UINT32 = 6
    OP_INT64 = 7
    OP_FLOAT64 = 8
    OP_UUID = 9
    OP_STRING = 10
    OP_BYTES = 11
    OP_RECORDS = 12
    OP_ARRAY = 20
    OP_STRUCT = 21

OPCODES = {"bool": OP_BOOL, "int8": OP_INT8, "int16": OP_INT16, "uint16": OP_UINT16,
           "int32": OP_INT32, "uint32": OP_UINT32, "int64": OP_INT64, "float64": OP_FLOAT64,
           "uuid": OP_UUID, "string": OP_STRING, "bytes": OP_BYTES, "records": OP_RECORDS,
           "array": OP_ARRAY, "struct": OP_STRUCT}

cdef extern from "Python.h":
    # Public C API; the descriptor layout is CPython's (cpython/descrobject.h), stable 3.10-3.13.
    object PyType_GenericAlloc(PyTypeObject* cls, Py_ssize_t nitems)
    ctypedef struct PyMemberDef:
        const char* name
        int type
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member

cdef object _MemberDescriptor = _types.MemberDescriptorType
cdef object _UUID = _uuid.UUID
cdef object _ZERO_UUID = _uuid.UUID(int=0)
cdef object _EMPTY = ()


cdef struct CField:
    # A FieldPlan flattened for the decode loop (no type checks or refcounting per field).
    int op
    int elem_op
    bint nullable
    bint compact
    Py_ssize_t offset
    PyObject* sub      # borrowed: the FieldPlan holds the StructPlan
    PyObject* attr     # borrowed: the FieldPlan holds the str


cdef struct CAbsent:
    Py_ssize_t offset
    PyObject* value    # borrowed: StructPlan.absent holds it
    bint is_factory


@cython.final
cdef class FieldPlan:
    """One field of a struct at one version."""
    cdef readonly str attr
    cdef readonly int op
    cdef readonly bint nullable
    cdef readonly bint compact       # compact (flexible) encoding of lengths
    cdef readonly int elem_op        # arrays: the element's opcode
    cdef readonly StructPlan sub     # struct fields and arrays of structs
    cdef readonly int tag            # -1 unless tagged
    cdef readonly object default     # for tagged fields: written only when value != default
    cdef CField c                    # the same, flat, plus the slot offset (decode)

    def __init__(self, str attr, int op, bint nullable, bint compact, int elem_op,
                 StructPlan sub, int tag, object default):
        self.attr = attr
        self.op = op
        self.nullable = nullable
        self.compact = compact
        self.elem_op = elem_op
        self.sub = sub
        self.tag = tag
        self.default = default
        self.c.op = op
        self.c.elem_op = elem_op
        self.c.nullable = nullable
        self.c.compact = compact
        self.c.offset = -1
        self.c.sub = <PyObject*>sub
        self.c.attr = <PyObject*>attr


cdef Py_ssize_t _slot_offset(object cls, str attr) except -1:
    """The offset of ``attr``'s slot in instances of ``cls`` (a plain __slots__ class).

    Decoding writes the slots directly, as the slot's own descriptor would, skipping the
    attribute lookup: most of what decoding costs is building objects.
    """
    descr = None
    for klass in cls.__mro__:
        descr = klass.__dict__.get(attr)
        if descr is not None:
            break
    if type(descr) is not _MemberDescriptor or not issubclass(cls, descr.__objclass__):
        raise TypeError(f"{cls.__name__}.{attr} is not a __slots__ attribute")
    cdef PyMemberDef* member = (<PyMemberDescrObject*><PyObject*>descr).d_member
    if member.type != 16:  # T_OBJECT_EX: a plain object slot, AttributeError when unset
        raise TypeError(f"{cls.__name__}.{attr} is not an object slot")
    return member.offset


cdef inline void _set_slot(object obj, Py_ssize_t offset, object value) noexcept:
    cdef PyObject** slot = <PyObject**>((<char*><PyObject*>obj) + offset)
    cdef PyObject* old = slot[0]
    Py_INCREF(value)
    slot[0] = <PyObject*>value
    Py_XDECREF(old)


@cython.final
cdef class StructPlan:
    """One struct at one version: what is on the wire and what is filled with defaults."""
    cdef readonly object cls
    cdef readonly str name
    cdef tuple fields          # FieldPlan, wire order
    cdef tuple tagged          # FieldPlan, ascending tag
    cdef dict by_tag           # tag -> FieldPlan
    cdef tuple absent          # (attr, value, is_factory) for fields not in this version
    cdef CField* cfields       # ``fields``, flat
    cdef Py_ssize_t nfields
    cdef CAbsent* cabsent      # ``absent``, flat
    cdef Py_ssize_t nabsent
    cdef Py_ssize_t unknown_offset
    cdef tuple must_default    # (attr, default) of absent, non-ignorable fields (encode check)
    cdef readonly bint flexible
    cdef readonly int version

    def __init__(self, cls, str name, int version, bint flexible):
        if cls.__new__ is not object.__new__:
            raise TypeError(f"{cls.__name__} must be a plain __slots__ class")
        self.cls = cls
        self.name = name
        self.version = version
        self.flexible = flexible
        self.fields = ()
        self.tagged = ()
        self.by_tag = {}
        self.absent = ()
        self.must_default = ()

    def __dealloc__(self):
        PyMem_Free(self.cfields)
        PyMem_Free(self.cabsent)

    def complete(self, tuple fields, tuple tagged, tuple absent, tuple must_default):
        # Plans are built in two steps so that recursive declarations could refer to
        # themselves; Kafka has none today, but the cost is nil.
        self.fields = fields
        self.tagged = tuple(sorted(tagged, key=lambda f: f.tag))
        self.by_tag = {f.tag: f for f in tagged}
        self.absent = absent
        self.must_default = must_default
        cdef FieldPlan f
        cdef Py_ssize_t i
        for f in fields + tagged:
            f.c.offset = _slot_offset(self.cls, f.attr)
        self.cfields = <CField*>PyMem_Malloc(sizeof(CField) * (len(fields) + 1))
        self.cabsent = <CAbsent*>PyMem_Malloc(sizeof(CAbsent) * (len(absent) + 1))
        if self.cfields == NULL or self.cabsent == NULL:
            raise MemoryError()
        for i in range(len(fields)):
            self.cfields[i] = (<FieldPlan>fields[i]).c
        self.nfields = len(fields)
        for i in range(len(absent)):
            self.cabsent[i].offset = _slot_offset(self.cls, <str>absent[i][0])
            self.cabsent[i].value = <PyObject*>absent[i][1]
            self.cabsent[i].is_factory = bool(absent[i][2])
        self.nabsent = len(absent)
        self.unknown_offset = _slot_offset(self.cls, "unknown_tagged_fields")


# ----------------------------------------------------------------------------------- reading

@cython.final
cdef class Reader:
    cdef const uint8_t* data
    cdef Py_ssize_t pos
    cdef Py_ssize_t end
    cdef object owner          # the buffer's exporter: records fields slice it without copying
    cdef Py_buffer view
    cdef bint has_view

    def __cinit__(self):
        self.has_view = False

    def __dealloc__(self):
        if self.has_view:
            PyBuffer_Release(&self.view)

    cdef inline int need(self, Py_ssize_t n) except -1:
        if n < 0 or n > self.end - self.pos:
            raise InvalidRequestError(
                f"truncated: needed {n} bytes at offset {self.pos}, {self.end - self.pos} left")
        return 0

    # Unchecked reads: the caller has called need() for them.
    cdef inline uint16_t take16(self) noexcept:
        self.pos += 2
        return rd16(self.data + self.pos - 2)

    cdef inline uint32_t take32(self) noexcept:
        self.pos += 4
        return rd32(self.data + self.pos - 4)

    cdef inline uint64_t take64(self) noexcept:
        self.pos += 8
        return rd64(self.data + self.pos - 8)

    cdef inline uint8_t u8(self) except? 0xFF:
        self.need(1)
        self.pos += 1
        return self.data[self.pos - 1]

    cdef inline uint16_t u16(self) except? 0xFFFF:
        self.need(2)
        return self.take16()

    cdef inline uint32_t u32(self) except? 0xFFFFFFFF:
        self.need(4)
        return self.take32()

    cdef inline uint64_t u64(self) except? 0xFFFFFFFFFFFFFFFF:
        self.need(8)
        return self.take64()

    cdef inline uint32_t uvarint(self) except? 0xFFFFFFFF:
        cdef uint32_t value = 0
        cdef int shift = 0
        cdef uint8_t b
        while True:
            if self.pos >= self.end:
                raise InvalidRequestError(f"truncated varint at offset {self.pos}")
            b = self.data[self.pos]
            self.pos += 1
            if shift == 28 and (b & 0xF0):
                raise InvalidRequestError(f"varint longer than 32 bits at offset {self.pos}")
            value |= <uint32_t>(b & 0x7F) << shift
            if not (b & 0x80):
                return value
            shift += 7

    cdef Py_ssize_t length(self, bint compact, bint nullable, bint wide, str what) except -2:
        """Read a string/bytes/array length: -1 for null, else checked against what is left."""
        cdef int64_t n
        if compact:
            n = <int64_t>self.uvarint() - 1
        elif wide:
            n = <int32_t>self.u32()
        else:
            n = <int16_t>self.u16()
        if n == -1:
            if not nullable:
                raise InvalidRequestError(f"{what} is null but not nullable in this version")
            return -1
        if n < -1:
            raise InvalidRequestError(f"{what} has negative length {n}")
        if n > self.end - self.pos:
            raise InvalidRequestError(
                f"{what} claims {n} bytes or elements, only {self.end - self.pos} bytes left")
        return <Py_ssize_t>n


cdef Reader _reader(object buf, Py_ssize_t start):
    cdef Reader r = Reader.__new__(Reader)
    PyObject_GetBuffer(buf, &r.view, PyBUF_SIMPLE)
    r.has_view = True
    r.data = <const uint8_t*>r.view.buf
    r.end = r.view.len
    if start < 0 or start > r.end:
        raise InvalidRequestError(f"start offset {start} outside a buffer of {r.end} bytes")
    r.pos = start
    r.owner = buf
    return r


cdef object _decode_value(Reader r, const CField* f, int op):
    cdef Py_ssize_t n, i, start
    cdef list items
    cdef object item
    cdef uint64_t hi, lo
    cdef int8_t marker
    cdef double d
    if op == OP_INT32:
        r.need(4)
        return <int32_t>r.take32()
    elif op == OP_INT16:
        r.need(2)
        return <int16_t>r.take16()
    elif op == OP_INT64:
        r.need(8)
        return <int64_t>r.take64()
    elif op == OP_STRING:
        n = r.length(f.compact, f.nullable, False, <str>f.attr)
        if n < 0:
            return None
        if n > 0x7FFF:
            raise InvalidRequestError(f"{<str>f.attr}: string longer than 32767 bytes")
        start = r.pos
        r.pos += n
        try:
            return PyUnicode_DecodeUTF8(<const char*>r.data + start, n, "strict")
        except UnicodeDecodeError as e:
            raise InvalidRequestError(f"{<str>f.attr}: invalid UTF-8 ({e.reason})") from e
    elif op == OP_ARRAY:
        n = r.length(f.compact, f.nullable, True, <str>f.attr)
        if n < 0:
            return None
        if f.elem_op == OP_INT32:
            # Fixed-width elements: all n are checked to be there before the list is sized.
            r.need(4 * n)
            items = PyList_New(n)
            for i in range(n):
                item = <int32_t>r.take32()
                Py_INCREF(item)
                PyList_SET_ITEM(items, i, item)
            return items
        # n <= bytes left, so a hostile count cannot make us allocate or loop beyond the frame;
        # the list grows as elements are really read.
        items = []
        if f.elem_op == OP_STRUCT:
            for i in range(n):
                items.append(_decode_struct(r, <StructPlan>f.sub))
        else:
            for i in range(n):
                items.append(_decode_value(r, f, f.elem_op))
        return items
    elif op == OP_STRUCT:
        if f.nullable:
            marker = <int8_t>r.u8()
            if marker < 0:
                return None
        return _decode_struct(r, <StructPlan>f.sub)
    elif op == OP_BOOL:
        return r.u8() != 0
    elif op == OP_INT8:
        return <int8_t>r.u8()
    elif op == OP_UINT16:
        return r.u16()
    elif op == OP_UINT32:
        return r.u32()
    elif op == OP_FLOAT64:
        hi = r.u64()
        memcpy(&d, &hi, 8)
        return d
    elif op == OP_UUID:
        hi = r.u64()
        lo = r.u64()
        if hi == 0 and lo == 0:
            return _ZERO_UUID
        return _UUID(int=(<object>hi << 64) | lo)
    elif op == OP_BYTES:
        n = r.length(f.compact, f.nullable, True, <str>f.attr)
        if n < 0:
            return None
        start = r.pos
        r.pos += n
        return PyBytes_FromStringAndSize(<const char*>r.data + start, n)
    elif op == OP_RECORDS:
        n = r.length(f.compact, f.nullable, True, <str>f.attr)
        if n < 0:
            return None
        start = r.pos
        r.pos += n
        # Zero copy: record batches stay in the frame they arrived in.
        return memoryview(r.owner)[start:start + n]
    raise AssertionError(f"bad opcode {op}")


cdef object _decode_struct(Reader r, StructPlan p):
    # Allocated as object.__new__ would (checked in StructPlan), slots filled in place.
    cdef object obj = PyType_GenericAlloc(<PyTypeObject*>p.cls, 0)
    cdef FieldPlan f
    cdef const CField* c
    cdef const CAbsent* a
    cdef Py_ssize_t i
    cdef uint32_t count, k, tag, size
    cdef Py_ssize_t end, saved_end
    cdef list unknown
    for i in range(p.nabsent):
        a = &p.cabsent[i]
        _set_slot(obj, a.offset, (<object>a.value)() if a.is_factory else <object>a.value)
    for i in range(p.nfields):
        c = &p.cfields[i]
        _set_slot(obj, c.offset, _decode_value(r, c, c.op))
    if not p.flexible:
        _set_slot(obj, p.unknown_offset, _EMPTY)
        return obj
    # Tagged fields not present keep the defaults set for them below.
    for f in p.tagged:
        _set_slot(obj, f.c.offset, f.default() if callable(f.default) else f.default)
    count = r.uvarint()
    if count > <uint32_t>(r.end - r.pos):
        raise InvalidRequestError(f"{p.name}: {count} tagged fields but only {r.end - r.pos} bytes")
    unknown = None
    for k in range(count):
        tag = r.uvarint()
        size = r.uvarint()
        r.need(size)
        f = p.by_tag.get(tag)
        if f is None:
            if unknown is None:
                unknown = []
            unknown.append((tag, PyBytes_FromStringAndSize(<const char*>r.data + r.pos, size)))
            r.pos += size
            continue
        end = r.pos + size
        saved_end = r.end
        r.end = end          # a tagged field cannot read past its own size
        try:
            _set_slot(obj, f.c.offset, _decode_value(r, &f.c, f.op))
        finally:
            r.end = saved_end
        if r.pos != end:
            raise InvalidRequestError(
                f"{p.name}.{f.attr}: tagged field of {size} bytes decoded to {size - (end - r.pos)}")
    _set_slot(obj, p.unknown_offset, tuple(unknown) if unknown is not None else _EMPTY)
    return obj


def decode_struct(StructPlan plan, buf, Py_ssize_t start=0):
    """Decode one struct with ``plan`` from ``buf`` at ``start``. Returns (object, end offset).

    Raises InvalidRequestError on malformed or truncated input.
    """
    cdef Reader r = _reader(buf, start)
    obj = _decode_struct(r, plan)
    return obj, r.pos


def read_int16_pair(buf):
    """The first two INT16 of a request frame (api_key, api_version)."""
    cdef Reader r = _reader(buf, 0)
    cdef int16_t a = <int16_t>r.u16()
    cdef int16_t b = <int16_t>r.u16()
    return a, b


# ----------------------------------------------------------------------------------- writing

@cython.final
cdef class Writer:
    """Declared (with its inline writes) in _codec.pxd."""

    def __cinit__(self, Py_ssize_t capacity=256):
        self.cap = capacity if capacity > 16 else 16
        self.data = <uint8_t*>PyMem_Malloc(self.cap)
        if self.data == NULL:
            raise MemoryError()
        self.pos = 0

    def __dealloc__(self):
        PyMem_Free(self.data)

    cdef int reserve(self, Py_ssize_t n) except -1:
        cdef Py_ssize_t cap
        cdef uint8_t* grown
        if self.pos + n <= self.cap:
            return 0
        cap = self.cap * 2
        while cap < self.pos + n:
            cap *= 2
        grown = <uint8_t*>PyMem_Realloc(self.data, cap)
        if grown == NULL:
            raise MemoryError()
        self.data = grown
        self.cap = cap
        return 0

    cdef int uvarint(self, uint32_t v) except -1:
        self.reserve(5)
        while v >= 0x80:
            self.data[self.pos] = (v & 0x7F) | 0x80
            self.pos += 1
            v >>= 7
        self.data[self.pos] = v
        self.pos += 1
        return 0

    cdef int raw(self, const uint8_t* p, Py_ssize_t n) except -1:
        self.reserve(n)
        memcpy(self.data + self.pos, p, n)
        self.pos += n
        return 0

    cdef int length(self, Py_ssize_t n, bint compact, bint wide) except -1:
        """Write a length (n = -1 for null)."""
        if compact:
            return self.uvarint(<uint32_t>(n + 1))
        if wide:
            return self.u32(<uint32_t><int32_t>n)
        return self.u16(<uint16_t><int16_t>n)

    cdef bytes getvalue(self):
        return PyBytes_FromStringAndSize(<char*>self.data, self.pos)

    cdef bytes cut(self, Py_ssize_t start, Py_ssize_t stop):
        return PyBytes_FromStringAndSize(<char*>self.data + start, stop - start)


cdef int _null(Writer w, FieldPlan f, bint wide) except -1:
    if not f.nullable:
        raise ValueError(f"{f.attr} is None but not nullable in this version")
    return w.length(-1, f.compact, wide)


cdef int _write_buffer(Writer w, FieldPlan f, object value) except -1:
    cdef Py_buffer view
    PyObject_GetBuffer(value, &view, PyBUF_SIMPLE)
    try:
        w.length(view.len, f.compact, True)
        w.raw(<const uint8_t*>view.buf, view.len)
    finally:
        PyBuffer_Release(&view)
    return 0


cdef int _encode_value(Writer w, FieldPlan f, int op, object value) except -1:
    cdef bytes utf8
    cdef Py_ssize_t n
    cdef double d
    cdef uint64_t u
    cdef object item
    if op == OP_INT32:
        return w.u32(<uint32_t><int32_t>value)
    elif op == OP_INT16:
        return w.u16(<uint16_t><int16_t>value)
    elif op == OP_INT64:
        return w.u64(<uint64_t><int64_t>value)
    elif op == OP_STRING:
        if value is None:
            return _null(w, f, False)
        utf8 = (<str?>value).encode("utf-8")
        n = len(utf8)
        if n > 0x7FFF:
            raise ValueError(f"{f.attr}: string longer than 32767 bytes")
        w.length(n, f.compact, False)
        return w.raw(<const uint8_t*><char*>utf8, n)
    elif op == OP_ARRAY:
        if value is None:
            return _null(w, f, True)
        w.length(len(value), f.compact, True)
        if f.elem_op == OP_STRUCT:
            for item in value:
                _encode_struct(w, f.sub, item)
        else:
            for item in value:
                _encode_value(w, f, f.elem_op, item)
        return 0
    elif op == OP_STRUCT:
        if f.nullable:
            if value is None:
                return w.u8(0xFF)
            w.u8(1)
        elif value is None:
            raise ValueError(f"{f.attr} is None but not nullable in this version")
        return _encode_struct(w, f.sub, value)
    elif op == OP_BOOL:
        return w.u8(1 if value else 0)
    elif op == OP_INT8:
        return w.u8(<uint8_t><int8_t>value)
    elif op == OP_UINT16:
        return w.u16(<uint16_t>value)
    elif op == OP_UINT32:
        return w.u32(<uint32_t>value)
    elif op == OP_FLOAT64:
        d = value
        memcpy(&u, &d, 8)
        return w.u64(u)
    elif op == OP_UUID:
        w.u64(<uint64_t>(value.int >> 64))
        return w.u64(<uint64_t>(value.int & 0xFFFFFFFFFFFFFFFF))
    elif op == OP_BYTES or op == OP_RECORDS:
        if value is None:
            return _null(w, f, True)
        if op == OP_RECORDS and not PyObject_CheckBuffer(value):
            # Records to be sent from a file (a fetch): only the length is written here and
            # the caller puts the value's ``size`` bytes at this position (sendfile).
            if w.splices is None:
                raise TypeError(f"{f.attr}: records without a buffer cannot be encoded here")
            w.length(<Py_ssize_t>value.size, f.compact, True)
            w.splices.append((w.pos, value))
            return 0
        return _write_buffer(w, f, value)
    raise AssertionError(f"bad opcode {op}")


cdef int _encode_struct(Writer w, StructPlan p, object obj) except -1:
    cdef FieldPlan f
    cdef tuple a
    cdef list tagged
    cdef Writer sub
    cdef object value
    cdef tuple unknown
    if type(obj) is not p.cls:
        raise TypeError(f"expected {p.name}, got {type(obj).__name__}")
    for a in p.must_default:
        # Kafka refuses to drop a non-ignorable field that carries information the
        # version cannot express.
        if getattr(obj, <str>a[0]) != a[1]:
            from kafkapy.errors import UnsupportedVersionError
            raise UnsupportedVersionError(
                f"{p.name}.{a[0]} cannot be expressed in version {p.version}")
    for f in p.fields:
        _encode_value(w, f, f.op, getattr(obj, f.attr))
    if not p.flexible:
        return 0
    unknown = obj.unknown_tagged_fields
    tagged = []
    for f in p.tagged:
        value = getattr(obj, f.attr)
        if value != (f.default() if callable(f.default) else f.default):
            sub = Writer(64)
            _encode_value(sub, f, f.op, value)
            tagged.append((f.tag, sub.getvalue()))
    if unknown:
        tagged.extend(unknown)
        tagged.sort(key=_first)
    w.uvarint(len(tagged))
    for a in tagged:
        w.uvarint(<uint32_t>a[0])
        w.uvarint(<uint32_t>len(<bytes>a[1]))
        w.raw(<const uint8_t*><char*>(<bytes>a[1]), len(<bytes>a[1]))
    return 0


cdef object _first(tuple t):
    return t[0]


cdef class Encoder:
    """Encodes several parts into one buffer (header then body) without intermediate bytes.

    A records field whose value is not a buffer but has an int ``size`` (file slices of a
    fetch) is written as its length only; ``parts()`` then returns the bytes cut at those
    places with the values between them, for the caller to send in order."""
    cdef Writer w

    def __init__(self, Py_ssize_t capacity=256):
        self.w = Writer(capacity)
        self.w.splices = []

    def struct(self, StructPlan plan, obj):
        _encode_struct(self.w, plan, obj)
        return self

    def getvalue(self):
        if self.w.splices:
            raise TypeError("records without a buffer were encoded: use parts()")
        return self.w.getvalue()

    def parts(self):
        """``[bytes, value, bytes, value, ..., bytes]`` in wire order."""
        cdef list out = []
        cdef Py_ssize_t start = 0
        cdef Py_ssize_t pos
        for pos, value in self.w.splices:
            out.append(PyBytes_FromStringAndSize(<char*>self.w.data + start, pos - start))
            out.append(value)
            start = pos
        out.append(PyBytes_FromStringAndSize(<char*>self.w.data + start, self.w.pos - start))
        return out


def encode_struct(StructPlan plan, obj):
    """Encode ``obj`` with ``plan``; returns bytes. Raises ValueError/TypeError/OverflowError
    on values the version cannot carry, UnsupportedVersionError for fields it lacks."""
    cdef Writer w = Writer(256)
    _encode_struct(w, plan, obj)
    return w.getvalue()
