"""Plans write decoded values straight into __slots__; anything else must be refused up front."""

from __future__ import annotations

import gc

import pytest

from kafkapy import _codec
from kafkapy.protocol import API_KEYS, decode, encode
from kafkapy.protocol.classes import class_for


class _WithDict:
    unknown_tagged_fields = ()


class _Slots:
    __slots__ = ("unknown_tagged_fields", "x")


def test_class_without_slots_is_refused() -> None:
    plan = _codec.StructPlan(_WithDict, "WithDict", 0, False)
    with pytest.raises(TypeError, match="not a __slots__ attribute"):
        plan.complete((), (), (), ())


def test_class_with_custom_new_is_refused() -> None:
    class Custom(_Slots):
        __slots__ = ()

        def __new__(cls):
            return super().__new__(cls)

    with pytest.raises(TypeError, match="plain __slots__ class"):
        _codec.StructPlan(Custom, "Custom", 0, False)


def test_plain_slots_class_decodes_every_field() -> None:
    field = _codec.FieldPlan("x", _codec.OPCODES["int32"], False, False, 0, None, -1, None)
    plan = _codec.StructPlan(_Slots, "Slots", 0, False)
    plan.complete((field,), (), (), ())
    obj, end = _codec.decode_struct(plan, b"\x00\x00\x01\x00")
    assert (obj.x, obj.unknown_tagged_fields, end) == (256, (), 4)


def test_decoded_objects_are_ordinary_objects() -> None:
    # Objects built slot by slot must behave like ones built by their class: equal, mutable,
    # collectable (no leaked references: the refcounts the GC sees are right).
    metadata = API_KEYS[3].response
    cls = class_for(metadata.body)
    value = cls(throttle_time_ms=5, cluster_id="c", controller_id=1)
    decoded = decode(metadata, 12, encode(metadata, 12, value))
    assert decoded == value
    decoded.controller_id = 2
    assert decoded != value
    before = len(gc.get_objects())
    for _ in range(1000):
        decode(metadata, 12, encode(metadata, 12, value))
    gc.collect()
    assert len(gc.get_objects()) - before < 100
