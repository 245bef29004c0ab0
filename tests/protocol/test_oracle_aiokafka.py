"""aiokafka 0.14's hand-written per-version structs as a second oracle.

kafka-python 3.0 only knows the versions Kafka 4.x still defines. aiokafka writes out a struct
per (API, version), including the old versions Kafka 4.0 removed that aiokafka and librdkafka
still send (Produce 0-2, Fetch 0-3, OffsetCommit 0-1, ...). For every such struct whose API
kafkapy declares: a random kafkapy body encoded by kafkapy is decoded by aiokafka consuming
every byte, and aiokafka re-encodes exactly kafkapy's bytes. (aiokafka's field names are its
own, so values are compared through the bytes only.)
"""

from __future__ import annotations

import importlib
import io
import pkgutil

import aiokafka.protocol
import aiokafka.protocol.types as aio_types
import pytest
from aiokafka.protocol.struct import Struct as AioStruct
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkapy.protocol import API_KEYS, decode, encode
from tests.protocol.strategies import body
from tests.protocol.test_api_keys import REQUIRED

# aiokafka also has APIs issue 2 does not ask for (AlterPartitionReassignments, ...).
REQUIRED_KEYS = {key for key, _, _ in REQUIRED.values()}


def _aiokafka_structs() -> dict[tuple[int, str, int], type]:
    found: dict[tuple[int, str, int], type] = {}
    for info in pkgutil.iter_modules(aiokafka.protocol.__path__, "aiokafka.protocol."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if not (isinstance(obj, type) and issubclass(obj, AioStruct)
                    and isinstance(getattr(obj, "API_KEY", None), int)
                    and isinstance(getattr(obj, "API_VERSION", None), int)):
                continue
            if obj.API_KEY not in REQUIRED_KEYS:
                continue
            kind = "request" if "Request" in name else "response"
            found[(obj.API_KEY, kind, obj.API_VERSION)] = obj
    return found


STRUCTS = _aiokafka_structs()

# Structs where aiokafka is wrong and Kafka's JSON spec (and kafka-python, which agrees with
# kafkapy on them) is right. They are not compared; test_known_aiokafka_bugs_are_still_there
# fails the day aiokafka fixes them, so they come back into the comparison.
KNOWN_AIOKAFKA_BUGS = {
    # Flexible from v2 in Kafka; aiokafka reuses the non-flexible v1 schema.
    (29, "request", 2), (29, "response", 2),
    # CurrentLeaderEpoch is an INT32; aiokafka declares Int64 (it never sends v4/v5).
    (2, "request", 4), (2, "request", 5),
}
CASES = sorted(set(STRUCTS) - KNOWN_AIOKAFKA_BUGS)


def _field(schema, name):
    return schema.fields[schema.names.index(name)]


def test_known_aiokafka_bugs_are_still_there() -> None:
    for kind in ("request", "response"):
        assert STRUCTS[(29, kind, 2)].SCHEMA is STRUCTS[(29, kind, 1)].SCHEMA
    for version in (4, 5):
        topic = _field(STRUCTS[(2, "request", version)].SCHEMA, "topics").array_of
        partition = _field(topic, "partitions").array_of
        assert _field(partition, "current_leader_epoch") is aio_types.Int64


def test_aiokafka_structs_were_found() -> None:
    # Produce 0-8 requests and responses at least, or the discovery above is broken.
    assert {(0, "request", v) for v in range(9)} <= set(STRUCTS)
    assert {(0, "response", v) for v in range(9)} <= set(STRUCTS)


@pytest.mark.parametrize(("api_key", "kind", "version"), CASES,
                         ids=[f"{API_KEYS[k].name if k in API_KEYS else k}-{kind}-v{v}"
                              for k, kind, v in CASES])
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_agrees_with_aiokafka(api_key: int, kind: str, version: int,
                              data: st.DataObject) -> None:
    assert api_key in API_KEYS, f"kafkapy does not declare API {api_key}"
    api = API_KEYS[api_key]
    message = api.request if kind == "request" else api.response
    assert version in message.valid, f"kafkapy lacks {message.name} v{version}"
    value = data.draw(body(message, version, unknown_tags=False))
    ours = encode(message, version, value)

    stream = io.BytesIO(ours)
    theirs = STRUCTS[(api_key, kind, version)].decode(stream)
    assert stream.tell() == len(ours), "aiokafka left bytes unread"
    again = theirs.encode()
    assert again == ours
    assert decode(message, version, again) == value
