"""The generator of :mod:`kafkapy.protocol.message_classes`: typed classes from the schemas.

``python -m kafkapy.protocol.generate`` rewrites ``kafkapy/protocol/message_classes.py`` from
the declarations (:mod:`kafkapy.protocol.messages`, the request/response headers, the consumer
protocol); ``--check`` only reports whether the checked-in file is current
(tests/protocol/test_message_classes.py runs that check, so the file cannot go stale).

What is generated, per declared struct (message bodies, array elements, nested structs): a
slotted, mutable attrs class comparing by value, with every field of every version of the
struct in declaration order (snake_case names, the field's default), plus
``unknown_tagged_fields`` (keyword-only). These are exactly the classes
:mod:`kafkapy.protocol.classes` used to build at run time; now the type checker sees them too:

- each field is annotated from its wire type: ``int`` (every integer), ``bool``, ``float``,
  ``str``, ``bytes``, ``uuid.UUID``, ``Records`` (what the codec decodes, a buffer, or file
  records encoded as their length), ``list[...]`` for arrays and the struct's class for nested
  structs; ``| None`` when some version may carry null or the default is null;
- the class is named after its struct, except where two different structs share a name
  (``LeaderIdAndEpoch`` in Produce and Fetch): those are qualified with their message's name
  (``ProduceResponseLeaderIdAndEpoch``);
- ``CLASSES`` maps ``(message name, struct name)`` to the class: ``class_for(struct)`` uses it,
  so the codec instantiates the very classes the handlers construct.

Only this module and :mod:`.classes` know how a struct becomes a class; the generator is
deterministic (declaration order, nested structs before the structs holding them).
"""

from __future__ import annotations

import argparse
import keyword
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from kafkapy.protocol.classes import field_default, protocol_messages
from kafkapy.protocol.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    MISSING,
    RECORDS,
    STRING,
    UUID,
    Array,
    Field,
    Message,
    Primitive,
    Struct,
)

__all__ = ["TARGET", "class_names", "main", "render"]

TARGET = Path(__file__).with_name("message_classes.py")

_RESERVED = {"attr", "uuid", "ZERO_UUID", "TYPE_CHECKING", "Protocol", "TypeAlias", "Records",
             "FileRecords", "CLASSES", "Buffer"}

_HEADER = '''"""Typed classes of every declared protocol message: GENERATED, do not edit.

Written by ``python -m kafkapy.protocol.generate`` from the declarations in
kafkapy/protocol/messages/, headers.py and messages/consumer_protocol.py; see
:mod:`kafkapy.protocol.generate` for what a class holds and how it is named. The codec decodes
into these classes (``kafkapy.protocol.classes.class_for``) and handlers construct them.
"""

# ruff: noqa: E501

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Protocol, TypeAlias

import attr

if TYPE_CHECKING:
    from typing_extensions import Buffer

ZERO_UUID = uuid.UUID(int=0)


class FileRecords(Protocol):
    """Records sent from files (a fetch): encoded as their length, the connection sends their
    ``size`` bytes itself."""

    @property
    def size(self) -> int: ...


if TYPE_CHECKING:
    Records: TypeAlias = Buffer | FileRecords
    """A records field: a buffer (decoded records are a memoryview into the frame) or file
    records."""

'''


def _structs(message: Message) -> Iterator[Struct]:
    """Every struct of ``message``, nested ones before the struct holding them."""
    seen: set[int] = set()

    def visit(struct: Struct) -> Iterator[Struct]:
        if id(struct) in seen:
            return
        seen.add(id(struct))
        for f in struct.fields:
            t = f.type.element if isinstance(f.type, Array) else f.type
            if isinstance(t, Struct):
                yield from visit(t)
        yield struct

    yield from visit(message.body)


def class_names(messages: list[Message]) -> dict[tuple[str, str], str]:
    """``{(message name, struct name): class name}``, colliding struct names qualified."""
    owners: dict[str, set[int]] = {}
    for message in messages:
        for struct in _structs(message):
            owners.setdefault(struct.name, set()).add(id(struct))
    names: dict[tuple[str, str], str] = {}
    by_struct: dict[int, str] = {}
    for message in messages:
        for struct in _structs(message):
            key = (message.name, struct.name)
            if key in names:
                raise ValueError(f"{message.name} has two structs named {struct.name}")
            unique = len(owners[struct.name]) == 1
            names[key] = by_struct.setdefault(
                id(struct), struct.name if unique else message.name + struct.name)
    counts = Counter(by_struct.values())
    clashes = sorted(n for n, c in counts.items() if c > 1 or n in _RESERVED)
    if clashes:
        raise ValueError(f"class names clash: {clashes}")
    return names


def _primitive_type(p: Primitive) -> str:
    if p is BOOL:
        return "bool"
    if p is FLOAT64:
        return "float"
    if p is STRING:
        return "str"
    if p is BYTES:
        return "bytes"
    if p is UUID:
        return "uuid.UUID"
    if p is RECORDS:
        return "Records"
    return "int"


def _literal(value: object) -> str:
    if isinstance(value, uuid.UUID):
        if value.int != 0:
            raise TypeError(f"no literal for the default {value!r}")
        return "ZERO_UUID"
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return repr(value)
    raise TypeError(f"no literal for the default {value!r}")


def _attribute(f: Field, local: dict[int, str]) -> str:
    """``name: type = default`` for one field, with the defaults classes.py gives."""
    nullable = f.nullable.low <= f.nullable.high
    if isinstance(f.type, Array):
        element = f.type.element
        inner = local[id(element)] if isinstance(element, Struct) else _primitive_type(element)
        annotation = f"list[{inner}]"
        if f.default is MISSING:
            default = "attr.Factory(list)"
        elif f.default is None:
            default, nullable = "None", True
        else:
            raise TypeError(f"{f.name}: an array default other than null")
    elif isinstance(f.type, Struct):
        annotation = local[id(f.type)]
        if f.default is MISSING and not nullable:
            default = f"attr.Factory({annotation})"
        elif f.default is MISSING or f.default is None:
            default, nullable = "None", True
        else:
            raise TypeError(f"{f.name}: a struct default other than null")
    else:
        annotation = _primitive_type(f.type)
        value = field_default(f)
        default = _literal(value)
        nullable = nullable or value is None
    if keyword.iskeyword(f.attr) or f.attr == "unknown_tagged_fields":
        raise ValueError(f"field {f.name} cannot be an attribute")
    if nullable:
        annotation += " | None"
    return f"    {f.attr}: {annotation} = {default}"


def render() -> str:
    """The text of message_classes.py for the current declarations."""
    messages = protocol_messages()
    names = class_names(messages)
    out = [_HEADER]
    table: list[str] = []
    all_names: list[str] = ["FileRecords"]
    emitted: set[int] = set()
    for message in messages:
        local = {id(s): names[(message.name, s.name)] for s in _structs(message)}
        for struct in _structs(message):
            name = local[id(struct)]
            table.append(f"    ({message.name!r}, {struct.name!r}): {name},")
            if id(struct) in emitted:    # a struct two messages share
                continue
            emitted.add(id(struct))
            all_names.append(name)
            out.append("")
            out.append("@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,")
            out.append("        weakref_slot=False)")
            out.append(f"class {name}:")
            where = "" if struct is message.body else f" in {message.name}"
            out.append(f'    """{struct.name}{where}."""')
            out.append("")
            out.extend(_attribute(f, local) for f in struct.fields)
            out.append("    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(")
            out.append("        default=(), repr=False, kw_only=True)")
            out.append("")
    out.append("")
    out.append("CLASSES: dict[tuple[str, str], type] = {")
    out.extend(table)
    out.append("}")
    out.append('"""``(message name, struct name)`` -> its class (for ``classes.class_for``)."""')
    out.append("")
    out.append("__all__ = [")
    out.extend(f"    {n!r}," for n in ["CLASSES", *sorted(all_names)])
    out.append("]")
    return "\n".join(out).replace("\n\n\n\n", "\n\n\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if message_classes.py is not what the schemas generate")
    args = parser.parse_args(argv)
    text = render()
    current = TARGET.read_text() if TARGET.exists() else ""
    if args.check:
        if current != text:
            print(f"{TARGET} is stale: run python -m kafkapy.protocol.generate")
            return 1
        return 0
    if current != text:
        TARGET.write_text(text)
        print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
