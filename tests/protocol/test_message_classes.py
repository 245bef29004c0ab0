"""kafkapy/protocol/message_classes.py is what the schemas generate, and the codec uses it.

The generated file is checked in (handlers import its classes, mypy reads it); these tests
fail when a declaration changes without ``python -m kafkapy.protocol.generate``.
"""

from __future__ import annotations

import attrs

from kafkapy.protocol import API_KEYS, ApiKey, decode, encode, message_classes
from kafkapy.protocol.classes import _make_class, _nested, class_for, protocol_messages
from kafkapy.protocol.generate import TARGET, render
from kafkapy.protocol.message_classes import (
    FetchResponseLeaderIdAndEpoch,
    PartitionProduceResponse,
    ProduceResponse,
    ProduceResponseLeaderIdAndEpoch,
    TopicProduceResponse,
)


def test_checked_in_file_is_current() -> None:
    assert TARGET.read_text() == render(), \
        "message_classes.py is stale: run python -m kafkapy.protocol.generate"


def test_every_protocol_struct_has_its_generated_class() -> None:
    for message in protocol_messages():
        for struct in _nested(message.body):
            cls = class_for(struct)
            assert cls.__module__ == message_classes.__name__, (message.name, struct.name)
            assert message_classes.CLASSES[(message.name, struct.name)] is cls


def test_generated_classes_are_the_runtime_classes() -> None:
    """Same attributes, order, defaults and options as the classes made at run time."""
    for message in protocol_messages():
        for struct in _nested(message.body):
            generated, made = class_for(struct), _make_class(struct)
            fields, expected = attrs.fields(generated), attrs.fields(made)
            assert [f.name for f in fields] == [f.name for f in expected]
            for f, e in zip(fields, expected, strict=True):
                assert (f.kw_only, f.repr, f.eq) == (e.kw_only, e.repr, e.eq)
                if isinstance(e.default, attrs.Factory):   # type: ignore[arg-type]
                    # run-time factories build nested structs with class_for: the same class
                    assert isinstance(f.default, attrs.Factory)  # type: ignore[arg-type]
                    made_value, value = e.default.factory(), f.default.factory()
                    assert type(value) is type(made_value) and value == made_value
                else:
                    assert f.default == e.default and type(f.default) is type(e.default)
            assert generated.__hash__ is made.__hash__
            assert set(generated.__slots__) == set(made.__slots__)


def test_colliding_struct_names_are_qualified() -> None:
    produce = API_KEYS[ApiKey.PRODUCE].response
    assert class_for(produce.body) is ProduceResponse
    body = ProduceResponse(responses=[TopicProduceResponse(name="t", partition_responses=[
        PartitionProduceResponse(index=0, error_code=0, base_offset=5)])])
    assert decode(produce, 11, encode(produce, 11, body)) == body
    assert PartitionProduceResponse().current_leader == ProduceResponseLeaderIdAndEpoch()
    assert ProduceResponseLeaderIdAndEpoch is not FetchResponseLeaderIdAndEpoch
