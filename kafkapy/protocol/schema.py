"""kafkapy's schema language: one declaration per Kafka message, all versions together.

Theory of operation
-------------------
A message is declared once, with Kafka's own field names (``TopicData``) and the version
semantics of Kafka's JSON message specs (``clients/src/main/resources/common/message``):

- ``versions``: the versions in which a field is on the wire ("0+", "3-12", "5", "none");
- ``nullable``: the versions in which a string/bytes/records/array/struct may be null;
- ``default``: what a reader assumes when the field is absent from the version it reads;
- ``tag`` + ``tagged``: the field travels in the tagged-field section in those versions;
- ``flexible`` on the message: from which version compact encodings and tagged-field
  sections are used (``flexible_override`` on a field pins one field's encoding, as the
  request header's ClientId, which stays a plain STRING even in flexible versions).

Nothing here encodes or decodes: :mod:`kafkapy.protocol.codec` compiles a declaration into one
"plan" per version, which the compiled interpreter in :mod:`kafkapy._codec` walks. Decoded
values are slotted attrs classes generated from the declarations, with attribute names in
snake_case (``TopicData`` -> ``topic_data``); every class carries every field of every
version (absent fields hold their default) plus ``unknown_tagged_fields``, so that a message
decoded and re-encoded comes back byte for byte.

This module imports nothing of kafkapy: it is the bottom of the protocol layer.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Any

import attrs

__all__ = [
    "BOOL",
    "BYTES",
    "FLOAT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "MISSING",
    "RECORDS",
    "STRING",
    "UINT16",
    "UINT32",
    "UUID",
    "ZERO_UUID",
    "Array",
    "Field",
    "Message",
    "Primitive",
    "Struct",
    "Versions",
    "field",
    "snake_case",
]

ZERO_UUID = uuid.UUID(int=0)


class _Missing:
    """No default declared (``None`` is a real default: null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@attrs.frozen
class Versions:
    """An inclusive version range; ``low > high`` is the empty range ("none")."""

    low: int
    high: int

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        """Parse Kafka's version strings: "none", "N", "N+", "N-M"."""
        if text is None or text == "none":
            return NONE
        text = text.strip()
        if text.endswith("+"):
            return cls(int(text[:-1]), 0x7FFF)
        if "-" in text:
            lo, hi = text.split("-")
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    def __str__(self) -> str:
        if self.low > self.high:
            return "none"
        if self.high == 0x7FFF:
            return f"{self.low}+"
        return f"{self.low}-{self.high}" if self.low != self.high else str(self.low)


NONE = Versions(1, 0)


@attrs.frozen
class Primitive:
    """A wire type that is not a struct or an array. ``code`` is the compiled codec's opcode."""

    name: str
    code: int
    default: Any
    # Strings, bytes and records can be null; ints, bools and floats never.
    nullable_kind: bool = False

    def __repr__(self) -> str:
        return self.name


# Opcodes shared with kafkapy/_codec.pyx (keep in sync: the codec asserts them at import).
BOOL = Primitive("bool", 1, False)
INT8 = Primitive("int8", 2, 0)
INT16 = Primitive("int16", 3, 0)
UINT16 = Primitive("uint16", 4, 0)
INT32 = Primitive("int32", 5, 0)
UINT32 = Primitive("uint32", 6, 0)
INT64 = Primitive("int64", 7, 0)
FLOAT64 = Primitive("float64", 8, 0.0)
UUID = Primitive("uuid", 9, ZERO_UUID)
STRING = Primitive("string", 10, "", True)
BYTES = Primitive("bytes", 11, b"", True)
RECORDS = Primitive("records", 12, None, True)

PRIMITIVES = {p.name: p for p in (BOOL, INT8, INT16, UINT16, INT32, UINT32, INT64, FLOAT64,
                                  UUID, STRING, BYTES, RECORDS)}


@attrs.frozen
class Array:
    """An array of a primitive or of a struct."""

    element: Primitive | Struct


@attrs.frozen(eq=False)
class Struct:
    """A named struct: the body of a message, an array element, or a nested struct field.

    Identity equality: two declarations of the same shape are still two classes.
    """

    name: str
    fields: tuple[Field, ...]


@attrs.frozen
class Field:
    name: str
    type: Primitive | Array | Struct
    versions: Versions
    nullable: Versions = NONE
    default: Any = MISSING
    tag: int | None = None
    tagged: Versions = NONE
    ignorable: bool = False
    flexible_override: Versions | None = None

    @property
    def attr(self) -> str:
        return snake_case(self.name)


def field(
    name: str,
    type: Primitive | Array | Struct | list[Field] | tuple[str, list[Field]],
    versions: str = "0+",
    *,
    nullable: str | None = None,
    default: Any = MISSING,
    tag: int | None = None,
    tagged: str | None = None,
    ignorable: bool = False,
    flexible: str | None = None,
) -> Field:
    """Declare a field, in the words of Kafka's JSON specs.

    ``type`` is a primitive, ``Array(...)``, a ``Struct``, or as a shorthand for an array of
    structs, ``("ElementName", [fields...])``. ``default`` takes Python values (None for
    "null"). A tagged field gives ``tag`` and ``tagged`` (its tagged versions); its
    ``versions`` are then normally the same range.
    """
    if isinstance(type, tuple):
        type = Array(Struct(type[0], tuple(type[1])))
    elif isinstance(type, list):
        raise TypeError(f"{name}: give an array of structs as ('ElementName', [fields])")
    if tag is not None and tagged is None:
        tagged = versions
    return Field(
        name=name,
        type=type,
        versions=Versions.parse(versions),
        nullable=Versions.parse(nullable),
        default=default,
        tag=tag,
        tagged=Versions.parse(tagged),
        ignorable=ignorable,
        flexible_override=Versions.parse(flexible) if flexible is not None else None,
    )


@attrs.frozen(eq=False)
class Message:
    """One Kafka message (a request, a response, a header, or a data record such as
    ConsumerProtocolSubscription) with all its versions."""

    name: str
    api_key: int | None
    kind: str  # "request", "response", "header" or "data"
    valid: Versions
    flexible: Versions
    body: Struct

    @classmethod
    def declare(
        cls,
        name: str,
        fields: Sequence[Field],
        *,
        api_key: int | None = None,
        kind: str,
        valid: str,
        flexible: str,
    ) -> Message:
        return cls(name, api_key, kind, Versions.parse(valid), Versions.parse(flexible),
                   Struct(name, tuple(fields)))

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """Kafka JSON name to attribute name.

    ``TopicData`` -> ``topic_data``, ``ISRNodes`` -> ``isr_nodes``, ``TopicID`` -> ``topic_id``.
    """
    return _CAMEL.sub("_", name).lower()
