"""The attrs classes that decoded messages are made of: one per declared struct.

The classes of the protocol's messages (every API's request and response, the headers, the
consumer protocol: ``protocol_messages()``) are generated ahead of time into
:mod:`kafkapy.protocol.message_classes` by :mod:`kafkapy.protocol.generate`, with type
annotations, so handlers import them by name and the type checker sees what the codec builds.
``class_for(struct)`` returns that class for a protocol struct; for a struct declared elsewhere
(the coordinators' log records, tests) it makes an equivalent class at run time, once per
struct.

Either way a class has every field of every version of its struct, in declaration order, with
snake_case names and the field's default, plus ``unknown_tagged_fields``: the tagged fields
this version of kafkapy does not know, as ``((tag, payload_bytes), ...)``, kept so that
re-encoding is byte-exact (as Kafka's generated classes do with ``_unknownTaggedFields``).
Classes are slotted and mutable (handlers fill in responses) and compare by value.
"""

from __future__ import annotations

from typing import Any

import attrs

from kafkapy.protocol import message_classes
from kafkapy.protocol.api_keys import API_KEYS
from kafkapy.protocol.headers import REQUEST_HEADER, RESPONSE_HEADER
from kafkapy.protocol.messages.consumer_protocol import ASSIGNMENT, SUBSCRIPTION
from kafkapy.protocol.schema import MISSING, Array, Field, Message, Struct

__all__ = ["class_for", "field_default", "protocol_messages", "struct_classes"]

_CLASSES: dict[int, type] = {}
# Keep the structs alive so their ids are never reused for another struct.
_STRUCTS: dict[int, Struct] = {}


def protocol_messages() -> list[Message]:
    """Every message whose classes are generated, in generation order."""
    messages = [REQUEST_HEADER, RESPONSE_HEADER, SUBSCRIPTION, ASSIGNMENT]
    for api in API_KEYS.values():
        messages += [api.request, api.response]
    return messages


def _nested(struct: Struct) -> list[Struct]:
    """``struct`` and every struct nested in it."""
    out: dict[int, Struct] = {}
    todo = [struct]
    while todo:
        s = todo.pop()
        if id(s) in out:
            continue
        out[id(s)] = s
        for f in s.fields:
            t = f.type.element if isinstance(f.type, Array) else f.type
            if isinstance(t, Struct):
                todo.append(t)
    return list(out.values())


def _register_generated() -> None:
    for message in protocol_messages():
        for struct in _nested(message.body):
            cls = message_classes.CLASSES.get((message.name, struct.name))
            if cls is not None:     # None only while message_classes.py is being regenerated
                _CLASSES[id(struct)] = cls
                _STRUCTS[id(struct)] = struct


def field_default(f: Field) -> Any:
    """The value of field ``f`` when it is absent: its declared default, a fresh list for an
    array, None or a fresh instance for a struct (as it is nullable or not), else its type's
    default. Here rather than in the schema, which knows no classes."""
    if f.default is not MISSING:
        return f.default
    if isinstance(f.type, Array):
        return []
    if isinstance(f.type, Struct):
        return None if f.nullable.low <= f.nullable.high else class_for(f.type)()
    return f.type.default


def class_for(struct: Struct) -> type:
    """The attrs class for ``struct``: generated for protocol structs, else made on first
    use."""
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
            attributes[f.attr] = attrs.field(default=field_default(f))
    attributes["unknown_tagged_fields"] = attrs.field(default=(), repr=False, kw_only=True)
    cls = attrs.make_class(struct.name, attributes, slots=True, eq=True, order=False,
                           hash=False, weakref_slot=False)
    cls.__module__ = "kafkapy.protocol.messages"
    return cls


def _factory(struct: Struct) -> Any:
    return lambda: class_for(struct)()


def struct_classes(struct: Struct) -> dict[str, type]:
    """The classes of ``struct`` and of every struct nested in it, by struct name
    (``struct_classes(API_KEYS[3].response.body)["MetadataResponseBroker"]``). Code outside
    the protocol layer imports the generated classes by name instead."""
    return {s.name: class_for(s) for s in _nested(struct)}


_register_generated()
