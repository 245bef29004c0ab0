"""The internal topics' shared record framing: an INT16 version, then the schema's body."""

from __future__ import annotations

import pytest

from kafkapy.coordinator.record_format import (
    UnknownKey,
    read_body,
    read_version,
    read_versioned,
    versioned,
)
from kafkapy.errors import CorruptMessageError
from kafkapy.protocol.classes import class_for
from kafkapy.protocol.schema import INT32, STRING, Message, field

# A value with a field added in v1 and a flexible v2, like the coordinators' own.
VALUE = Message.declare(
    "SampleValue",
    [field("name", STRING), field("count", INT32, "1+", default=-1, ignorable=True)],
    kind="data", valid="0-2", flexible="2+",
)
_Body = class_for(VALUE.body)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_round_trip(version: int) -> None:
    data = versioned(version, VALUE, _Body(name="g", count=5 if version else -1))
    assert data[:2] == version.to_bytes(2, "big")
    body = read_versioned(VALUE, data)
    assert (body.name, body.count) == ("g", 5 if version else -1)
    assert read_version(memoryview(data), "value") == version


def test_layout_is_version_then_body() -> None:
    # v0: INT16 version 0, STRING name (INT16 length + UTF-8).
    assert versioned(0, VALUE, _Body(name="ab")) == b"\x00\x00\x00\x02ab"


def test_bytes_after_the_body_are_ignored() -> None:
    data = versioned(1, VALUE, _Body(name="g", count=7)) + b"\xff\xff"
    assert read_versioned(VALUE, data).count == 7
    assert read_body(VALUE, 1, memoryview(data), "value").count == 7


def test_errors_are_corrupt_message() -> None:
    with pytest.raises(CorruptMessageError, match="value of 1 bytes has no version"):
        read_version(memoryview(b"\x00"), "value")
    with pytest.raises(CorruptMessageError, match="unknown version 3"):
        read_versioned(VALUE, b"\x00\x03\x00\x01g")
    with pytest.raises(CorruptMessageError, match="sample v0"):
        read_versioned(VALUE, b"\x00\x00\x00\x09g", "sample")


def test_unknown_key_is_a_value() -> None:
    assert UnknownKey(9) == UnknownKey(9)
    assert UnknownKey(9).version == 9
