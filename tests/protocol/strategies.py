"""Hypothesis strategies generated from the schema declarations.

``body(message, version)`` draws a body object whose fields present in ``version`` hold random
values of their wire type (nulls only where the version allows them, strings within 32767
bytes, tagged fields sometimes default, sometimes not, and unknown tagged fields with tags
above the known ones); absent fields keep their defaults, so the value is exactly what the
version can carry.
"""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import strategies as st

from kafkapy.protocol.classes import class_for, field_default
from kafkapy.protocol.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UINT16,
    UINT32,
    UUID,
    Array,
    Field,
    Message,
    Primitive,
    Struct,
)

_INTS = {
    INT8: (-(2**7), 2**7 - 1), INT16: (-(2**15), 2**15 - 1), INT32: (-(2**31), 2**31 - 1),
    INT64: (-(2**63), 2**63 - 1), UINT16: (0, 2**16 - 1), UINT32: (0, 2**32 - 1),
}

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


def _primitive(p: Primitive) -> st.SearchStrategy[Any]:
    if p in _INTS:
        lo, hi = _INTS[p]
        # -1 is a common sentinel, but not for the unsigned types (UINT16 ports).
        return st.one_of(st.integers(lo, hi),
                         st.sampled_from([lo, hi, 0] + ([-1] if lo < 0 else [])))
    if p is BOOL:
        return st.booleans()
    if p is FLOAT64:
        return st.floats(allow_nan=False)
    if p is UUID:
        return st.one_of(st.just(uuid.UUID(int=0)), st.uuids())
    if p is STRING:
        return _text
    if p in (BYTES, RECORDS):
        return st.binary(max_size=40)
    raise AssertionError(p)


def _value(
    f: Field, version: int, flexible: bool, depth: int, unknown: bool
) -> st.SearchStrategy[Any]:
    t = f.type
    if isinstance(t, Array):
        elem = (_struct(t.element, version, flexible, depth + 1, unknown)
                if isinstance(t.element, Struct) else _primitive(t.element))
        strategy: st.SearchStrategy[Any] = st.lists(elem, max_size=3 if depth < 2 else 1)
    elif isinstance(t, Struct):
        strategy = _struct(t, version, flexible, depth + 1, unknown)
    else:
        strategy = _primitive(t)
    if version in f.nullable:
        strategy = st.one_of(st.none(), strategy)
    return strategy


def _struct(
    struct: Struct, version: int, flexible: bool, depth: int = 0, unknown: bool = True
) -> st.SearchStrategy:
    cls = class_for(struct)
    fields = {}
    known_tags = []
    for f in struct.fields:
        if version not in f.versions:
            continue
        fields[f.attr] = _value(f, version, flexible, depth, unknown)
        if flexible and version in f.tagged:
            known_tags.append(f.tag)
            # Tagged fields are often left at their default (then they are not on the wire).
            fields[f.attr] = st.one_of(st.just(field_default(f)), fields[f.attr])
    if flexible and unknown:
        first = max(known_tags, default=-1) + 1
        fields["unknown_tagged_fields"] = st.lists(
            st.tuples(st.integers(first, first + 1000), st.binary(max_size=8)),
            max_size=2, unique_by=lambda t: t[0],
        ).map(lambda items: tuple(sorted(items)))
    return st.builds(cls, **fields)


def body(message: Message, version: int, *, unknown_tags: bool = True) -> st.SearchStrategy[Any]:
    """A body for ``version``; ``unknown_tags=False`` leaves out unknown tagged fields."""
    return _struct(message.body, version, message.is_flexible(version), 0, unknown_tags)
