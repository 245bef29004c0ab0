"""DescribeProducers (61), DescribeTransactions (65) and ListTransactions (66): the admin APIs
of transactions (KIP-664), every version, checked three independent ways:

1. the declarations against the JSON specs that kafka-python 3 ships (copies of Kafka's
   ``clients/src/main/resources/common/message`` files): every field's name, type, versions,
   nullable versions, default, ignorable and tag;
2. kafka-python's own classes for these APIs (``kafka.protocol.admin.transactions``, its own
   interpreter): random bodies encoded by kafkapy decode to the same values there and
   re-encode to the same bytes, and objects built and encoded by kafka-python decode here;
3. hand-built bytes (compact strings, compact arrays and tagged-field sections written out)
   for at least one version of every request and response.

Plus round trips of every version and the refusal to drop non-ignorable fields (DurationFilter
before v1, TransactionalIdPattern before v2), as Kafka's generated code refuses.

(The generic oracle, test_oracle_kafka_python, only covers the APIs in its REQUIRED set.)
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.admin.transactions import (
    DescribeProducersRequest as KPDescribeProducersRequest,
)
from kafka.protocol.admin.transactions import (
    DescribeProducersResponse as KPDescribeProducersResponse,
)
from kafka.protocol.admin.transactions import (
    DescribeTransactionsRequest as KPDescribeTransactionsRequest,
)
from kafka.protocol.admin.transactions import (
    DescribeTransactionsResponse as KPDescribeTransactionsResponse,
)
from kafka.protocol.admin.transactions import (
    ListTransactionsRequest as KPListTransactionsRequest,
)
from kafka.protocol.admin.transactions import (
    ListTransactionsResponse as KPListTransactionsResponse,
)

from kafkapy.errors import UnsupportedVersionError
from kafkapy.protocol import (
    API_KEYS,
    api_key_by_name,
    decode,
    encode,
    request_class,
    response_class,
)
from kafkapy.protocol.classes import struct_classes
from kafkapy.protocol.schema import MISSING, Array, Field, Message, Primitive, Struct, Versions
from tests.protocol.strategies import body

DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 61, 65, 66

# (api key, kind): kafka-python's class.
KP = {
    (DESCRIBE_PRODUCERS, "request"): KPDescribeProducersRequest,
    (DESCRIBE_PRODUCERS, "response"): KPDescribeProducersResponse,
    (DESCRIBE_TRANSACTIONS, "request"): KPDescribeTransactionsRequest,
    (DESCRIBE_TRANSACTIONS, "response"): KPDescribeTransactionsResponse,
    (LIST_TRANSACTIONS, "request"): KPListTransactionsRequest,
    (LIST_TRANSACTIONS, "response"): KPListTransactionsResponse,
}


def _message(api_key: int, kind: str) -> Message:
    api = API_KEYS[api_key]
    return api.request if kind == "request" else api.response


CASES = [(key, kind, v) for key, kind in KP
         for v in range(API_KEYS[key].versions.low, API_KEYS[key].versions.high + 1)]
IDS = [f"{API_KEYS[k].name}-{kind}-v{v}" for k, kind, v in CASES]

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- registry ------------------------------------------------------------------------------

def test_registered_with_their_versions() -> None:
    assert api_key_by_name("DescribeProducers").key == DESCRIBE_PRODUCERS
    assert api_key_by_name("DescribeTransactions").key == DESCRIBE_TRANSACTIONS
    assert api_key_by_name("ListTransactions").key == LIST_TRANSACTIONS
    # Kafka 4.0 defines ListTransactions v0-1; v2 (KIP-1152) is Kafka 4.1's.
    assert API_KEYS[DESCRIBE_PRODUCERS].versions == Versions(0, 0)
    assert API_KEYS[DESCRIBE_TRANSACTIONS].versions == Versions(0, 0)
    assert API_KEYS[LIST_TRANSACTIONS].versions == Versions(0, 2)
    for key in (DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS):
        # Flexible from v0: request header v2, response header v1.
        assert API_KEYS[key].request.flexible == Versions.parse("0+")
        assert API_KEYS[key].response.flexible == Versions.parse("0+")


# --- 1. the declarations are Kafka's JSON specs ---------------------------------------------

def _json_type(t: Primitive | Array | Struct) -> str:
    if isinstance(t, Array):
        return "[]" + _json_type(t.element)
    return t.name


def _json_default(spec: dict[str, Any], t: Primitive | Array | Struct) -> Any:
    if "default" not in spec:
        return MISSING
    d = spec["default"]
    if d == "null":
        return None
    if isinstance(d, str) and isinstance(t, Primitive) and t.name.startswith("int"):
        return int(d, 0)
    return d


def _same_as_spec(fields: tuple[Field, ...], specs: list[dict[str, Any]], where: str) -> None:
    assert [f.name for f in fields] == [s["name"] for s in specs], where
    for f, spec in zip(fields, specs, strict=True):
        at = f"{where}.{f.name}"
        assert _json_type(f.type) == spec["type"], at
        assert f.versions == Versions.parse(spec["versions"]), at
        assert f.nullable == Versions.parse(spec.get("nullableVersions")), at
        assert f.default == _json_default(spec, f.type), at
        assert f.ignorable == spec.get("ignorable", False), at
        assert f.tag == spec.get("tag"), at
        assert f.tagged == Versions.parse(spec.get("taggedVersions")), at
        element = f.type.element if isinstance(f.type, Array) else f.type
        if isinstance(element, Struct):
            _same_as_spec(element.fields, spec["fields"], at)
        else:
            assert "fields" not in spec, at


@pytest.mark.parametrize(("api_key", "kind"), sorted(KP),
                         ids=[f"{API_KEYS[k].name}-{kind}" for k, kind in sorted(KP)])
def test_declaration_is_the_json_spec(api_key: int, kind: str) -> None:
    spec = KP[(api_key, kind)]._json
    message = _message(api_key, kind)
    assert spec["apiKey"] == message.api_key == api_key
    assert spec["type"] == message.kind == kind
    assert spec["name"] == message.name
    assert message.valid == Versions.parse(spec["validVersions"])
    assert message.flexible == Versions.parse(spec["flexibleVersions"])
    _same_as_spec(message.body.fields, spec["fields"], message.name)


# --- round trips, every version ---------------------------------------------------------------

@pytest.mark.parametrize(("api_key", "kind", "version"), CASES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_round_trip(api_key: int, kind: str, version: int, data: st.DataObject) -> None:
    message = _message(api_key, kind)
    value = data.draw(body(message, version))
    encoded = encode(message, version, value)
    decoded = decode(message, version, encoded)
    assert decoded == value
    assert encode(message, version, decoded) == encoded


# --- 2. kafka-python as an oracle -----------------------------------------------------------

def _ours(struct_: Struct, value: Any, version: int) -> dict[str, Any]:
    """kafkapy's value as {JSON name: value}, the fields present in ``version`` only."""
    out: dict[str, Any] = {}
    for f in struct_.fields:
        if version not in f.versions:
            continue
        v = getattr(value, f.attr)
        if isinstance(f.type, Array) and isinstance(f.type.element, Struct):
            v = [_ours(f.type.element, item, version) for item in v]
        out[f.name] = v
    return out


def _theirs(obj: Any, version: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in obj._struct._fields:
        if not f.for_version_q(version):
            continue
        v = getattr(obj, f.name)
        if v is not None and f.is_struct_array():
            v = [_theirs(item, version) for item in v]
        out[f._json["name"]] = v
    return out


@pytest.mark.parametrize(("api_key", "kind", "version"), CASES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_agrees_with_kafka_python(api_key: int, kind: str, version: int,
                                  data: st.DataObject) -> None:
    message = _message(api_key, kind)
    kp_cls = KP[(api_key, kind)]
    assert version in Versions.parse(kp_cls._json["validVersions"])
    value = data.draw(body(message, version, unknown_tags=False))
    ours = encode(message, version, value)

    theirs_obj = kp_cls.decode(ours, version=version)
    assert _theirs(theirs_obj, version) == _ours(message.body, value, version)
    # (A decoded kafka-python message has no header slot for .encode(): encode its struct.)
    flexible = kp_cls.flexible_version_q(version)
    theirs = bytes(theirs_obj._struct.encode(theirs_obj, version=version, compact=flexible,
                                             tagged=flexible))
    assert theirs == ours
    assert decode(message, version, theirs) == value


def test_kafka_python_describe_producers_decodes_here() -> None:
    request = KPDescribeProducersRequest(topics=[
        KPDescribeProducersRequest.TopicRequest(name="orders", partition_indexes=[0, 2])])
    ours = decode(_message(DESCRIBE_PRODUCERS, "request"), 0, bytes(request.encode(version=0)))
    assert [(t.name, t.partition_indexes) for t in ours.topics] == [("orders", [0, 2])]

    R = KPDescribeProducersResponse
    response = R(throttle_time_ms=3, topics=[R.TopicResponse(name="orders", partitions=[
        R.TopicResponse.PartitionResponse(
            partition_index=2, error_code=0, error_message=None, active_producers=[
                R.TopicResponse.PartitionResponse.ProducerState(
                    producer_id=4000, producer_epoch=70000, last_sequence=12,
                    last_timestamp=1_700_000_000_000, coordinator_epoch=5,
                    current_txn_start_offset=-1)]),
        R.TopicResponse.PartitionResponse(
            partition_index=0, error_code=6, error_message="not the leader",
            active_producers=[]),
    ])])
    raw = bytes(response.encode(version=0))
    ours = decode(_message(DESCRIBE_PRODUCERS, "response"), 0, raw)
    assert ours.throttle_time_ms == 3
    p2, p0 = ours.topics[0].partitions
    (producer,) = p2.active_producers
    assert (producer.producer_id, producer.producer_epoch, producer.last_sequence,
            producer.last_timestamp, producer.coordinator_epoch,
            producer.current_txn_start_offset) == (4000, 70000, 12, 1_700_000_000_000, 5, -1)
    assert (p2.error_message, p0.error_code, p0.error_message) == (None, 6, "not the leader")
    assert encode(_message(DESCRIBE_PRODUCERS, "response"), 0, ours) == raw


def test_kafka_python_describe_transactions_decodes_here() -> None:
    request = KPDescribeTransactionsRequest(transactional_ids=["tx-a", "tx-b"])
    ours = decode(_message(DESCRIBE_TRANSACTIONS, "request"), 0,
                  bytes(request.encode(version=0)))
    assert ours.transactional_ids == ["tx-a", "tx-b"]

    R = KPDescribeTransactionsResponse
    response = R(throttle_time_ms=0, transaction_states=[R.TransactionState(
        error_code=0, transactional_id="tx-a", transaction_state="Ongoing",
        transaction_timeout_ms=60000, transaction_start_time_ms=1_700_000_000_000,
        producer_id=17, producer_epoch=3,
        topics=[R.TransactionState.TopicData(topic="orders", partitions=[1, 4])])])
    raw = bytes(response.encode(version=0))
    ours = decode(_message(DESCRIBE_TRANSACTIONS, "response"), 0, raw)
    (state,) = ours.transaction_states
    assert (state.transactional_id, state.transaction_state, state.transaction_timeout_ms,
            state.transaction_start_time_ms, state.producer_id, state.producer_epoch) == (
        "tx-a", "Ongoing", 60000, 1_700_000_000_000, 17, 3)
    assert [(t.topic, t.partitions) for t in state.topics] == [("orders", [1, 4])]
    assert encode(_message(DESCRIBE_TRANSACTIONS, "response"), 0, ours) == raw


@pytest.mark.parametrize("version", [0, 1, 2])
def test_kafka_python_list_transactions_decodes_here(version: int) -> None:
    fields: dict[str, Any] = {"state_filters": ["Ongoing", "PrepareCommit"],
                              "producer_id_filters": [7, 9]}
    if version >= 1:
        fields["duration_filter"] = 30_000
    if version >= 2:
        fields["transactional_id_pattern"] = "^tx-.*"
    raw = bytes(KPListTransactionsRequest(**fields).encode(version=version))
    ours = decode(_message(LIST_TRANSACTIONS, "request"), version, raw)
    assert ours.state_filters == ["Ongoing", "PrepareCommit"]
    assert ours.producer_id_filters == [7, 9]
    assert ours.duration_filter == (30_000 if version >= 1 else -1)
    assert ours.transactional_id_pattern == ("^tx-.*" if version >= 2 else None)
    assert encode(_message(LIST_TRANSACTIONS, "request"), version, ours) == raw

    R = KPListTransactionsResponse
    response = R(throttle_time_ms=1, error_code=0, unknown_state_filters=["Bogus"],
                 transaction_states=[R.TransactionState(
                     transactional_id="tx-a", producer_id=17, transaction_state="Ongoing")])
    raw = bytes(response.encode(version=version))
    ours = decode(_message(LIST_TRANSACTIONS, "response"), version, raw)
    assert ours.unknown_state_filters == ["Bogus"]
    assert [(s.transactional_id, s.producer_id, s.transaction_state)
            for s in ours.transaction_states] == [("tx-a", 17, "Ongoing")]
    assert encode(_message(LIST_TRANSACTIONS, "response"), version, ours) == raw


def test_kafka_python_list_transactions_defaults() -> None:
    # A v2 request with nothing set: DurationFilter -1 and a null pattern, both sides.
    raw = bytes(KPListTransactionsRequest(state_filters=[], producer_id_filters=[])
                .encode(version=2))
    ours = decode(_message(LIST_TRANSACTIONS, "request"), 2, raw)
    assert (ours.duration_filter, ours.transactional_id_pattern) == (-1, None)
    assert encode(_message(LIST_TRANSACTIONS, "request"), 2, request_class(66)()) == raw


# --- 3. hand-built bytes ---------------------------------------------------------------------

def _cstr(s: str | None) -> bytes:
    """COMPACT_(NULLABLE_)STRING: unsigned varint length + 1 (0 for null), then UTF-8."""
    if s is None:
        return b"\x00"
    data = s.encode()
    assert len(data) + 1 < 0x80  # one-byte varint in these vectors
    return bytes([len(data) + 1]) + data


def _carray(n: int) -> bytes:
    """COMPACT_ARRAY length: unsigned varint n + 1."""
    assert n + 1 < 0x80
    return bytes([n + 1])


NO_TAGS = b"\x00"  # an empty tagged-field section


def _check(api_key: int, kind: str, version: int, value: Any, raw: bytes) -> None:
    message = _message(api_key, kind)
    assert encode(message, version, value) == raw
    assert decode(message, version, raw) == value


def test_describe_producers_bytes() -> None:
    classes = struct_classes(API_KEYS[DESCRIBE_PRODUCERS].request.body)
    request = classes["DescribeProducersRequest"](topics=[
        classes["TopicRequest"](name="t", partition_indexes=[0, 1])])
    raw = (_carray(1) + _cstr("t") + _carray(2) + struct.pack(">ii", 0, 1) + NO_TAGS
           + NO_TAGS)
    _check(DESCRIBE_PRODUCERS, "request", 0, request, raw)

    classes = struct_classes(API_KEYS[DESCRIBE_PRODUCERS].response.body)
    response = classes["DescribeProducersResponse"](throttle_time_ms=5, topics=[
        classes["TopicResponse"](name="t", partitions=[classes["PartitionResponse"](
            partition_index=1, error_code=0, error_message=None, active_producers=[
                classes["ProducerState"](producer_id=1000, producer_epoch=2, last_sequence=9,
                                         last_timestamp=1_700_000_000_000,
                                         coordinator_epoch=3, current_txn_start_offset=42),
            ])])])
    raw = (struct.pack(">i", 5)
           + _carray(1) + _cstr("t")
           + _carray(1) + struct.pack(">ih", 1, 0) + _cstr(None)
           + _carray(1) + struct.pack(">qiiqiq", 1000, 2, 9, 1_700_000_000_000, 3, 42)
           + NO_TAGS  # ProducerState
           + NO_TAGS  # PartitionResponse
           + NO_TAGS  # TopicResponse
           + NO_TAGS)
    _check(DESCRIBE_PRODUCERS, "response", 0, response, raw)


def test_describe_transactions_bytes() -> None:
    request = request_class(DESCRIBE_TRANSACTIONS)(transactional_ids=["tx", ""])
    raw = _carray(2) + _cstr("tx") + _cstr("") + NO_TAGS
    _check(DESCRIBE_TRANSACTIONS, "request", 0, request, raw)

    classes = struct_classes(API_KEYS[DESCRIBE_TRANSACTIONS].response.body)
    response = classes["DescribeTransactionsResponse"](throttle_time_ms=0, transaction_states=[
        classes["TransactionState"](
            error_code=0, transactional_id="tx", transaction_state="Ongoing",
            transaction_timeout_ms=60_000, transaction_start_time_ms=1_700_000_000_000,
            producer_id=17, producer_epoch=3,
            topics=[classes["TopicData"](topic="t", partitions=[4])]),
        classes["TransactionState"](
            error_code=105, transactional_id="gone", transaction_state="",
            transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1,
            producer_epoch=-1, topics=[]),
    ])
    raw = (struct.pack(">i", 0) + _carray(2)
           + struct.pack(">h", 0) + _cstr("tx") + _cstr("Ongoing")
           + struct.pack(">iqqh", 60_000, 1_700_000_000_000, 17, 3)
           + _carray(1) + _cstr("t") + _carray(1) + struct.pack(">i", 4) + NO_TAGS
           + NO_TAGS
           + struct.pack(">h", 105) + _cstr("gone") + _cstr("")
           + struct.pack(">iqqh", 0, -1, -1, -1) + _carray(0) + NO_TAGS
           + NO_TAGS)
    _check(DESCRIBE_TRANSACTIONS, "response", 0, response, raw)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_list_transactions_request_bytes(version: int) -> None:
    fields: dict[str, Any] = {"state_filters": ["Ongoing"], "producer_id_filters": [7]}
    raw = _carray(1) + _cstr("Ongoing") + _carray(1) + struct.pack(">q", 7)
    if version >= 1:
        fields["duration_filter"] = 60_000
        raw += struct.pack(">q", 60_000)
    if version >= 2:
        fields["transactional_id_pattern"] = "tx-.*"
        raw += _cstr("tx-.*")
    _check(LIST_TRANSACTIONS, "request", version, request_class(LIST_TRANSACTIONS)(**fields),
           raw + NO_TAGS)


def test_list_transactions_request_v2_null_pattern_bytes() -> None:
    raw = _carray(0) + _carray(0) + struct.pack(">q", -1) + _cstr(None) + NO_TAGS
    _check(LIST_TRANSACTIONS, "request", 2, request_class(LIST_TRANSACTIONS)(), raw)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_list_transactions_response_bytes(version: int) -> None:
    classes = struct_classes(API_KEYS[LIST_TRANSACTIONS].response.body)
    response = classes["ListTransactionsResponse"](
        throttle_time_ms=0, error_code=0, unknown_state_filters=["Bogus"],
        transaction_states=[classes["TransactionState"](
            transactional_id="tx", producer_id=17, transaction_state="CompleteCommit")])
    raw = (struct.pack(">ih", 0, 0) + _carray(1) + _cstr("Bogus")
           + _carray(1) + _cstr("tx") + struct.pack(">q", 17) + _cstr("CompleteCommit")
           + NO_TAGS + NO_TAGS)
    _check(LIST_TRANSACTIONS, "response", version, response, raw)


# --- defaults and non-ignorable fields -------------------------------------------------------

def test_defaults() -> None:
    producer = struct_classes(API_KEYS[DESCRIBE_PRODUCERS].response.body)["ProducerState"]()
    assert (producer.last_sequence, producer.last_timestamp,
            producer.current_txn_start_offset) == (-1, -1, -1)
    partition = struct_classes(
        API_KEYS[DESCRIBE_PRODUCERS].response.body)["PartitionResponse"]()
    assert partition.error_message is None
    request = request_class(LIST_TRANSACTIONS)()
    assert (request.duration_filter, request.transactional_id_pattern) == (-1, None)
    assert response_class(LIST_TRANSACTIONS)().transaction_states == []


def test_new_filters_cannot_be_dropped_by_old_versions() -> None:
    message = _message(LIST_TRANSACTIONS, "request")
    cls = request_class(LIST_TRANSACTIONS)
    with pytest.raises(UnsupportedVersionError):
        encode(message, 0, cls(duration_filter=1000))
    with pytest.raises(UnsupportedVersionError):
        encode(message, 1, cls(transactional_id_pattern="tx-.*"))
    # Even an empty pattern is information v1 cannot carry (it is not the default, null).
    with pytest.raises(UnsupportedVersionError):
        encode(message, 1, cls(transactional_id_pattern=""))
    # At their defaults they are simply absent.
    assert encode(message, 0, cls()) == _carray(0) + _carray(0) + NO_TAGS
    assert encode(message, 1, cls()) == _carray(0) + _carray(0) + struct.pack(">q", -1) + NO_TAGS
