"""The attrs classes that decoded messages are made of, generated from the declarations.

One class per declared struct (message bodies, array elements, nested structs), created once
and cached by the struct's identity. A class has every field of every version of its struct,
in declaration order, with snake_case names and the field's default, plus
``unknown_tagged_fields``: the tagged fields this version of kafkapy does not know, as
``((tag, payload_bytes), ...)``, kept so that re-encoding is byte-exact (as Kafka's generated
classes do with ``_unknownTaggedFields``).

Classes are slotted and mutable (handlers fill in responses) and compare by value.
"""

from __future__ import annotations

from typing import Any

import attrs

from kafkapy.protocol.schema import MISSING, Array, Struct

__all__ = ["class_for", "struct_classes"]

_CLASSES: dict[int, type] = {}
# Keep the structs alive so their ids are never reused for another struct.
_STRUCTS: dict[int, Struct] = {}


def class_for(struct: Struct) -> type:
    """The attrs class for ``struct`` (created on first use)."""
    cls = _CLASSES.get(id(struct))
    if cls is None:
        cls = _make_class(struct)
        _CLASSES[id(struct)] = cls
        _STRUCTS[id(struct)] = struct
    return cls


def _make_class(struct: Struct) -> type:
    attributes: dict[str, Any] = {}
    for f in struct.fields:
        if isinstance(f.type, Array):
            attributes[f.attr] = attrs.field(factory=list) if f.default is MISSING \
                else attrs.field(default=f.default)
        elif isinstance(f.type, Struct) and f.default is MISSING:
            nullable = f.nullable.low <= f.nullable.high
            attributes[f.attr] = attrs.field(default=None) if nullable \
                else attrs.field(factory=_factory(f.type))
        else:
            attributes[f.attr] = attrs.field(default=f.default_value())
    attributes["unknown_tagged_fields"] = attrs.field(default=(), repr=False, kw_only=True)
    cls = attrs.make_class(struct.name, attributes, slots=True, eq=True, order=False,
                           hash=False, weakref_slot=False)
    cls.__module__ = "kafkapy.protocol.messages"
    return cls


def _factory(struct: Struct) -> Any:
    return lambda: class_for(struct)()


def struct_classes(struct: Struct) -> dict[str, type]:
    """The classes of ``struct`` and of every struct nested in it, by struct name
    (``struct_classes(API_KEYS[3].response.body)["MetadataResponseBroker"]``)."""
    out: dict[str, type] = {}
    todo = [struct]
    while todo:
        s = todo.pop()
        if s.name in out:
            continue
        out[s.name] = class_for(s)
        for f in s.fields:
            t = f.type.element if isinstance(f.type, Array) else f.type
            if isinstance(t, Struct):
                todo.append(t)
    return out
