"""KafkaApis (dispatch, bad input, handler failures), error_response, and the handler pool.

KafkaApis is driven directly with frames built by ``kafkapy.protocol.encode_request``; answers
are decoded with kafka-python's protocol classes where it has them (an independent reader),
else with kafkapy's. What Kafka does for each bad input is in the kafka_apis module doc:

- unknown API key, unreadable header, API not served, version not advertised, body that does
  not decode: the connection is closed, with one warning;
- a handler exception: the API's own error response (Kafka's getErrorResponse), one log line;
  no response expected (Produce acks=0) or no error response possible: closed.

The pool tests run KafkaRequestHandlerPool between a real SocketServer + RequestChannel on
127.0.0.1 and KafkaApis (or a fake), with real sockets.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import struct
import time
import uuid
from collections.abc import Callable
from typing import Any

import kafka.protocol
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.api_message import ApiMessage

from kafkapy import errors
from kafkapy.network import (
    CloseConnection,
    NoResponse,
    Request,
    Response,
    SendResponse,
)
from kafkapy.protocol import (
    API_KEYS,
    ApiKey,
    RequestHeader,
    decode_request_header,
    decode_response,
    encode_request,
    encode_response,
    request_class,
    response_class,
)
from kafkapy.protocol import Request as ProtocolRequest
from kafkapy.protocol.classes import class_for
from kafkapy.protocol.schema import Array, Struct
from kafkapy.server import kafka_apis
from kafkapy.server.error_response import ELEMENT, ERROR_SHAPES, error_response
from kafkapy.server.handler_pool import KafkaRequestHandlerPool
from kafkapy.server.handlers.api_versions import handle_api_versions
from kafkapy.server.kafka_apis import RECOMMENDED_VERSIONS, KafkaApis
from kafkapy.server.request_context import Parked, RequestContext
from tests.network.support import assert_closed, frame, receive_frame, serving, settle, trio_test
from tests.protocol.strategies import body as random_body

CORRELATION_ID = 123456

# Helpers


def _kafka_python_responses() -> dict[int, type]:
    found: dict[int, type] = {}
    for info in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if ".old" in info.name or "generate" in info.name:
            continue
        for obj in vars(importlib.import_module(info.name)).values():
            if (isinstance(obj, type) and issubclass(obj, ApiMessage) and obj is not ApiMessage
                    and getattr(obj, "_json", None) and obj._json["type"] == "response"):
                found[obj._json["apiKey"]] = obj
    return found


KP_RESPONSES = _kafka_python_responses()


def kp_decode(api_key: int, version: int, payload: bytes) -> Any | None:
    """kafka-python's reading of a response frame (header included), None if it has no class
    for that API and version. (It reads a failed ApiVersions answer as v0, as clients must for
    the fallback, so a v3+ ApiVersions error is left to kafkapy's reader.)"""
    cls = KP_RESPONSES.get(api_key)
    if cls is None or not cls.min_version <= version <= cls.max_version:
        return None
    if api_key == 18 and version >= 3:
        return None
    decoded = cls.decode(payload, version=version, header=True)
    assert decoded._header.correlation_id == CORRELATION_ID
    return decoded


def element(api_key: int, kind: str, *path: str) -> type:
    """The attrs class of a nested array element: ``element(0, "request", "topic_data")``."""
    message = API_KEYS[api_key].request if kind == "request" else API_KEYS[api_key].response
    struct = message.body
    for attr in path:
        (f,) = [f for f in struct.fields if f.attr == attr]
        assert isinstance(f.type, Array) and isinstance(f.type.element, Struct)
        struct = f.type.element
    return class_for(struct)


def make_frame(api_key: int, version: int, body: Any = None, client_id: str | None = "test"
               ) -> bytes:
    if body is None:
        body = request_class(api_key)()
    header = RequestHeader(api_key=api_key, api_version=version, correlation_id=CORRELATION_ID,
                           client_id=client_id)
    return encode_request(ProtocolRequest(header, body))


def channel_request(frame_bytes: bytes) -> Request:
    return Request("conn-1", "PLAINTEXT", "127.0.0.1", 40000, frame_bytes, time.monotonic_ns())


def handle(apis: KafkaApis, frame_bytes: bytes) -> Response:
    return trio.run(apis.handle, channel_request(frame_bytes))


def payload_of(response: Response) -> bytes:
    assert isinstance(response, SendResponse), response
    return response.payload


API_VERSIONS_KEY = ApiKey.API_VERSIONS


def apis_with(handlers: dict[int, Callable[[RequestContext], Any]]) -> KafkaApis:
    """ApiVersions plus ``handlers``, at the recommended versions."""
    return KafkaApis({API_VERSIONS_KEY: handle_api_versions, **handlers})


def failing(exc: BaseException) -> Callable[[RequestContext], Any]:
    async def handler(context: RequestContext) -> Any:
        raise exc
    return handler


def records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("kafkapy.server")]


# Dispatch


def test_handler_body_is_encoded_at_the_request_version() -> None:
    seen: list[RequestContext] = []

    async def metadata(context: RequestContext) -> Any:
        seen.append(context)
        broker = element(3, "response", "brokers")(node_id=1, host="localhost", port=9092)
        return response_class(3)(brokers=[broker], controller_id=1, cluster_id="abc")

    apis = apis_with({3: metadata})
    for version in (0, 4, 9, 12):
        payload = payload_of(handle(apis, make_frame(3, version)))
        decoded = kp_decode(3, version, payload)
        assert decoded is not None
        assert [(b.node_id, b.host, b.port) for b in decoded.brokers] == [(1, "localhost", 9092)]
        assert seen[-1].api_version == version
    context = seen[-1]
    assert (context.api_key, context.correlation_id, context.client_id) == (3, CORRELATION_ID,
                                                                             "test")
    assert context.connection_id == "conn-1" and context.apis is apis
    assert context.body == request_class(3)()
    handle(apis, make_frame(3, 12, client_id=None))
    assert seen[-1].client_id == ""   # null client id reads as "", as in Kafka


def test_handler_may_return_a_channel_response() -> None:
    answer = SendResponse(b"raw bytes")

    async def produce(context: RequestContext) -> Any:
        return NoResponse() if context.body.acks == 0 else answer

    apis = apis_with({0: produce})
    assert isinstance(handle(apis, make_frame(0, 9, request_class(0)(acks=0))), NoResponse)
    assert handle(apis, make_frame(0, 9, request_class(0)(acks=1))) is answer


@pytest.mark.parametrize("frame_bytes", [
    struct.pack(">hhi", 38, 0, 1) + b"\x00\x00",        # a Kafka API the protocol layer lacks
    struct.pack(">hhi", 1000, 0, 1) + b"\x00\x00",
    struct.pack(">hhi", -1, 0, 1) + b"\x00\x00",
    struct.pack(">hhi", 32767, 3, 1) + b"\x00\x00\x00",
    b"", b"\x00", b"\x00\x12\x00", b"\x00\x12\x00\x00\x00\x00",      # header cut short
    struct.pack(">hhih", 3, 9, 1, 50) + b"short",       # client id longer than the frame
], ids=["key-38", "key-1000", "key-minus-1", "key-32767", "empty", "1-byte", "3-bytes",
        "6-bytes", "client-id"])
def test_unknown_key_or_unreadable_header_closes(frame_bytes: bytes,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    # Kafka: RequestHeader.parse throws InvalidRequestException ("Unknown API key" / "Error
    # parsing request header"), the SocketServer closes the connection and sends nothing.
    with caplog.at_level(logging.INFO, logger="kafkapy"):
        assert isinstance(handle(KafkaApis(), frame_bytes), CloseConnection)
    (record,) = records(caplog)
    assert record.levelno == logging.WARNING and "unreadable request header" in record.message


def test_api_not_served_closes(caplog: pytest.LogCaptureFixture) -> None:
    # Kafka's Processor.parseRequestHeader: an API that is not enabled -> InvalidRequestException
    # -> closed. Metadata is declared by the protocol layer but has no handler here.
    with caplog.at_level(logging.INFO, logger="kafkapy"):
        for version in (0, 12):
            assert isinstance(handle(apis_with({}), make_frame(3, version)), CloseConnection)
    assert [r.levelno for r in records(caplog)] == [logging.WARNING] * 2
    assert "Metadata (3) v12 is not served" in records(caplog)[1].message


def test_version_not_advertised_closes(caplog: pytest.LogCaptureFixture) -> None:
    # Kafka: a version outside the enabled range -> UnsupportedVersionException in
    # parseRequestHeader -> closed, no response (only ApiVersions is answered at any version).
    calls: list[int] = []

    async def fetch(context: RequestContext) -> Any:
        calls.append(context.api_version)
        return response_class(1)()

    apis = apis_with({1: fetch})
    assert apis.advertised(1) is not None and str(apis.advertised(1)) == "0-12"
    with caplog.at_level(logging.INFO, logger="kafkapy"):
        for version in (13, 18):
            assert isinstance(handle(apis, make_frame(1, version)), CloseConnection)
    assert calls == []
    assert len(records(caplog)) == 2
    assert "Fetch (1) v13 is outside the advertised versions 0-12" in records(caplog)[0].message
    for version in (0, 3, 4, 12):
        assert isinstance(handle(apis, make_frame(1, version)), SendResponse)
    assert calls == [0, 3, 4, 12]


def test_body_that_does_not_decode_closes(caplog: pytest.LogCaptureFixture) -> None:
    # Kafka's RequestContext.parseRequest: any parse failure -> InvalidRequestException -> closed.
    calls = 0

    async def metadata(context: RequestContext) -> Any:
        nonlocal calls
        calls += 1
        return response_class(3)()

    apis = apis_with({3: metadata})
    good = make_frame(3, 9, request_class(3)(topics=None))
    header = good[:-5]   # v9 body: null topics, three booleans, an empty tag section
    assert isinstance(handle(apis, good), SendResponse) and calls == 1
    bad = [header, good[:-1], good[:-3], header + b"\xff" * 6, header + b"\x05\x01"]
    # Bytes after a complete body are ignored, as Kafka's readers do.
    assert isinstance(handle(apis, good + b"\x00\x00\x00"), SendResponse) and calls == 2
    with caplog.at_level(logging.INFO, logger="kafkapy"):
        for frame_bytes in bad:
            assert isinstance(handle(apis, frame_bytes), CloseConnection), frame_bytes
    assert calls == 2
    assert len(records(caplog)) == len(bad)
    assert all(r.levelno == logging.WARNING and "Metadata v9 request (correlation id 123456) "
               "does not decode" in r.message for r in records(caplog))


# Frame handlers (FRAME_HANDLERS: a request served from its frame, before the generic decode)


def test_frame_handler_none_goes_on_with_the_generic_path() -> None:
    seen: list[Any] = []

    async def frame_handler(apis: KafkaApis, request: Request, header: RequestHeader,
                            offset: int) -> Response | None:
        seen.append((header.api_key, header.api_version, offset))
        return None

    async def metadata(context: RequestContext) -> Any:
        seen.append(context.body)
        return response_class(3)()

    apis = KafkaApis({API_VERSIONS_KEY: handle_api_versions, 3: metadata},
                     frame_handlers={3: frame_handler})
    frame_bytes = make_frame(3, 12)
    assert kp_decode(3, 12, payload_of(handle(apis, frame_bytes))) is not None
    _, body_offset = decode_request_header(frame_bytes)
    assert seen == [(3, 12, body_offset), request_class(3)()]


def test_frame_handler_answer_is_used_and_run_handler_answers_as_the_generic_path() -> None:
    calls: list[str] = []
    answer = SendResponse(b"from the frame")

    async def metadata(context: RequestContext) -> Any:
        calls.append("generic")
        return response_class(3)()

    async def from_frame(context: RequestContext) -> Any:
        calls.append("run_handler")
        raise errors.NotCoordinatorError()

    async def frame_handler(apis: KafkaApis, request: Request, header: RequestHeader,
                            offset: int) -> Response | None:
        if header.api_version == 0:
            return answer
        # the handler's error is answered with the API's error response, as for a decoded body
        return await apis.run_handler(RequestContext(header, request_class(3)(), request, apis),
                                      from_frame)

    apis = KafkaApis({API_VERSIONS_KEY: handle_api_versions, 3: metadata},
                     frame_handlers={3: frame_handler})
    assert handle(apis, make_frame(3, 0)) is answer
    generic = KafkaApis({API_VERSIONS_KEY: handle_api_versions,
                         3: failing(errors.NotCoordinatorError())})
    assert payload_of(handle(apis, make_frame(3, 12))) == \
        payload_of(handle(generic, make_frame(3, 12)))
    assert calls == ["run_handler"]


def test_frame_handler_failure_is_answered_as_a_handler_failure() -> None:
    async def frame_handler(apis: KafkaApis, request: Request, header: RequestHeader,
                            offset: int) -> Response | None:
        raise RuntimeError("frame handler bug")

    apis = KafkaApis({API_VERSIONS_KEY: handle_api_versions, 3: failing(RuntimeError())},
                     frame_handlers={3: frame_handler})
    generic = KafkaApis({API_VERSIONS_KEY: handle_api_versions, 3: failing(RuntimeError())})
    answer = handle(apis, make_frame(3, 12))
    assert isinstance(answer, SendResponse)
    assert payload_of(answer) == payload_of(handle(generic, make_frame(3, 12)))


def test_fetch_is_served_from_its_frame_and_answers_errors_as_the_generic_path() -> None:
    """KafkaApis() serves Fetch through ``handlers.fetch.FRAME_HANDLERS``. With no broker
    behind it the fetch fails (UNKNOWN_SERVER_ERROR): the error response names every
    partition asked for, byte for byte as the generic path's; a frame the compiled decoder
    refuses is closed by the generic decode."""
    from kafkapy.server.handlers import fetch, produce

    assert kafka_apis.default_frame_handlers() == {ApiKey.FETCH: fetch.handle_fetch_frame,
                                                   ApiKey.PRODUCE: produce.produce_frame}
    topic = element(1, "request", "topics")
    partition = element(1, "request", "topics", "partitions")
    body = request_class(1)(max_wait_ms=10, min_bytes=1, session_epoch=-1, topics=[
        topic(topic="t", partitions=[partition(partition=p, fetch_offset=5,
                                               partition_max_bytes=100) for p in (0, 3)])])
    generic = KafkaApis({API_VERSIONS_KEY: handle_api_versions, 1: fetch.handle_fetch})
    for version in (4, 7, 11, 12):
        frame_bytes = make_frame(1, version, body)
        ours = payload_of(handle(KafkaApis(), frame_bytes))
        assert ours == payload_of(handle(generic, frame_bytes))
        decoded = kp_decode(1, version, ours)
        assert decoded is not None
        assert [(p.partition_index, p.error_code) for t in decoded.responses
                for p in t.partitions] == [(0, -1), (3, -1)]
        assert isinstance(handle(KafkaApis(), frame_bytes[:-3]), CloseConnection)


# Handler failures


def test_handler_exception_becomes_the_apis_error_response(
        caplog: pytest.LogCaptureFixture) -> None:
    apis = apis_with({11: failing(RuntimeError("bug")), 12: failing(errors.NotCoordinatorError()),
                      16: failing(errors.CoordinatorLoadInProgressError("still loading"))})
    with caplog.at_level(logging.INFO, logger="kafkapy"):
        join = kp_decode(11, 7, payload_of(handle(apis, make_frame(11, 7))))
        beat = kp_decode(12, 4, payload_of(handle(apis, make_frame(12, 4))))
        groups = kp_decode(16, 0, payload_of(handle(apis, make_frame(16, 0))))
    # JoinGroupRequest.getErrorResponse: unknown generation, member, leader; null protocol v7+
    assert (join.error_code, join.generation_id, join.protocol_name, join.leader,
            join.member_id, join.members) == (-1, -1, None, "", "", [])
    assert beat.error_code == errors.NotCoordinatorError.code
    assert groups.error_code == 14 and groups.groups == []
    bug, not_coordinator, loading = records(caplog)
    # One line each: a traceback for a bug, a plain line for a Kafka error.
    assert bug.levelno == logging.ERROR and bug.exc_info is not None
    assert "Unexpected error handling the JoinGroup v7 request" in bug.message
    assert not_coordinator.levelno == logging.INFO and not_coordinator.exc_info is None
    assert "NOT_COORDINATOR" in not_coordinator.message
    assert "still loading" in loading.message


def test_handler_returning_something_unencodable_gets_the_error_response() -> None:
    async def heartbeat(context: RequestContext) -> Any:
        return "not a response body"

    payload = payload_of(handle(apis_with({12: heartbeat}), make_frame(12, 3)))
    assert kp_decode(12, 3, payload).error_code == -1


def test_produce_acks_0_failure_closes(caplog: pytest.LogCaptureFixture) -> None:
    # ProduceRequest.getErrorResponse returns null for acks=0: Kafka closes the connection.
    apis = apis_with({0: failing(errors.KafkaStorageError())})
    with caplog.at_level(logging.INFO, logger="kafkapy"):
        assert isinstance(handle(apis, make_frame(0, 9, request_class(0)(acks=0))),
                          CloseConnection)
    (record,) = records(caplog)
    assert "closing the connection (no response expected)" in record.message
    assert isinstance(handle(apis, make_frame(0, 9, request_class(0)(acks=-1))), SendResponse)


def test_error_response_that_fails_closes(monkeypatch: pytest.MonkeyPatch,
                                          caplog: pytest.LogCaptureFixture) -> None:
    def broken(*args: Any) -> Any:
        raise ValueError("cannot build")

    monkeypatch.setattr(kafka_apis, "error_response", broken)
    apis = apis_with({12: failing(RuntimeError("bug"))})
    with caplog.at_level(logging.INFO, logger="kafkapy"):
        assert isinstance(handle(apis, make_frame(12, 2)), CloseConnection)
    (record,) = records(caplog)
    assert record.levelno == logging.ERROR
    assert "closing the connection: no error response (ValueError: cannot build)" in \
        record.message


def test_recommended_versions_are_servable() -> None:
    # The reference's "Rec" column, but WriteTxnMarkers ("internal" there) at v1, as Kafka 4
    # brokers advertise it. KIP-848's 68 and 69 are advertised at Kafka 4.x's ranges now
    # that they are implemented.
    assert RECOMMENDED_VERSIONS[27] == (1, 1)
    assert (RECOMMENDED_VERSIONS[68], RECOMMENDED_VERSIONS[69]) == ((0, 1), (0, 1))
    assert (RECOMMENDED_VERSIONS[0], RECOMMENDED_VERSIONS[1], RECOMMENDED_VERSIONS[3],
            RECOMMENDED_VERSIONS[18]) == ((0, 11), (0, 12), (0, 12), (0, 4))
    for key, (low, high) in RECOMMENDED_VERSIONS.items():
        assert low <= high
        if key in API_KEYS:   # DescribeTopicPartitions (75) is not declared yet
            assert low in API_KEYS[key].versions and high in API_KEYS[key].versions, key
    # Every one of them can be served once it has a handler.
    everything = KafkaApis({key: failing(RuntimeError()) for key in RECOMMENDED_VERSIONS
                            if key in API_KEYS})
    assert [(k, lo, hi) for k, lo, hi in everything.api_versions] == [
        (k, *RECOMMENDED_VERSIONS[k]) for k in sorted(RECOMMENDED_VERSIONS) if k in API_KEYS]


def test_construction_refuses_what_cannot_be_advertised() -> None:
    # DescribeQuorum (55) is declared but not served: no range.
    with pytest.raises(ValueError, match=r"DescribeQuorum .* no recommended version range"):
        KafkaApis({55: failing(RuntimeError())})
    with pytest.raises(ValueError, match="API key 38, which the protocol layer does not"):
        KafkaApis({38: failing(RuntimeError())})
    with pytest.raises(ValueError, match="range 0-99 is not within"):
        KafkaApis({3: failing(RuntimeError())}, recommended={3: (0, 99)})
    assert KafkaApis({}).api_versions == ()


# error_response


TOP_LEVEL_CASES = [
    (key, version) for key, api in API_KEYS.items()
    for version in range(api.versions.low, api.versions.high + 1)
    if any(f.name == "ErrorCode" and version in f.versions for f in api.response.body.fields)
]


def test_top_level_cases_cover_every_such_api() -> None:
    keys = {key for key, _ in TOP_LEVEL_CASES}
    assert keys == {1, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 16, 17, 18, 22, 24, 25, 26, 29,
                    35, 36, 43, 45, 46, 47, 48, 50, 55, 56, 57, 60, 66, 68, 74}


@pytest.mark.parametrize(("api_key", "version"), TOP_LEVEL_CASES,
                         ids=[f"{API_KEYS[k].name}-v{v}" for k, v in TOP_LEVEL_CASES])
def test_top_level_error_code(api_key: int, version: int) -> None:
    error = errors.PolicyViolationError("custom text")
    body = error_response(api_key, version, request_class(api_key)(), error)
    payload = encode_response(api_key, version, CORRELATION_ID, body)
    ours = decode_response(api_key, version, payload).body
    theirs = kp_decode(api_key, version, payload)
    for decoded in (ours, theirs):
        if decoded is None:
            continue
        assert decoded.error_code == errors.PolicyViolationError.code
        if hasattr(decoded, "throttle_time_ms"):
            assert decoded.throttle_time_ms in (0, None)
    fields = {f.attr for f in API_KEYS[api_key].response.body.fields
              if version in f.versions}
    if "error_message" in fields:
        # ApiError's message; FindCoordinator v1-3 sends the error's generic text instead.
        expected = (errors.PolicyViolationError.description if api_key == 10 else "custom text")
        assert ours.error_message == expected
    # With an unexpected exception: UNKNOWN_SERVER_ERROR, and no message (Kafka leaks nothing).
    unknown = error_response(api_key, version, request_class(api_key)(), KeyError("secret"))
    assert unknown.error_code == -1
    if "error_message" in fields and api_key != 10:
        assert unknown.error_message in (None, "")


def test_api_versions_error_lists_its_own_range_only_for_unsupported_version() -> None:
    unsupported = error_response(18, 0, request_class(18)(), errors.UnsupportedVersionError())
    assert [(k.api_key, k.min_version, k.max_version) for k in unsupported.api_keys] == \
        [(18, 0, 4)]
    assert error_response(18, 3, request_class(18)(), errors.InvalidRequestError()).api_keys == []


TOPIC_ID = uuid.UUID("5f0e0a0b-1c2d-4e3f-8a9b-0c1d2e3f4a5b")


def _produce_request(version: int) -> Any:
    topic, partition = element(0, "request", "topic_data"), \
        element(0, "request", "topic_data", "partition_data")
    named = {"topic_id": TOPIC_ID} if version >= 13 else {"name": "orders"}
    return request_class(0)(acks=-1, timeout_ms=1000, topic_data=[
        topic(**named, partition_data=[partition(index=0), partition(index=7)]),
        topic(**({"topic_id": uuid.UUID(int=9)} if version >= 13 else {"name": "audit"}),
              partition_data=[partition(index=3)]),
    ])


@pytest.mark.parametrize("version", range(14))
def test_produce_error_names_every_partition(version: int) -> None:
    # ProduceRequest.getErrorResponse: base offset -1, log append time -1, log start -1, the
    # ApiError message, per partition of the request.
    error = errors.NotLeaderOrFollowerError("moved")
    body = error_response(0, version, _produce_request(version), error)
    payload = encode_response(0, version, CORRELATION_ID, body)
    decoded = kp_decode(0, version, payload) or decode_response(0, version, payload).body
    topics = [(t.topic_id if version >= 13 else t.name,
               [(p.index, p.error_code, p.base_offset) for p in t.partition_responses])
              for t in decoded.responses]
    first = TOPIC_ID if version >= 13 else "orders"
    second = uuid.UUID(int=9) if version >= 13 else "audit"
    if version >= 13 and not isinstance(decoded.responses[0].topic_id, uuid.UUID):
        topics = [(uuid.UUID(str(t)), parts) for t, parts in topics]
    assert topics == [(first, [(0, 6, -1), (7, 6, -1)]), (second, [(3, 6, -1)])]
    partition = decoded.responses[0].partition_responses[0]
    if version >= 2:
        assert partition.log_append_time_ms == -1
    if version >= 5:
        assert partition.log_start_offset == -1
    if version >= 8:
        assert partition.error_message == "moved"
        assert partition.record_errors == []
    assert error_response(0, version, request_class(0)(acks=0), error) is None


def _fetch_request(version: int) -> Any:
    topic, partition = element(1, "request", "topics"), element(1, "request", "topics",
                                                                "partitions")
    named = {"topic_id": TOPIC_ID} if version >= 13 else {"topic": "orders"}
    return request_class(1)(max_wait_ms=500, min_bytes=1, session_id=77 if version >= 7 else 0,
                            topics=[topic(**named, partitions=[partition(partition=2),
                                                               partition(partition=5)])])


@pytest.mark.parametrize("version", range(19))
def test_fetch_error_per_partition_below_v13_top_level_from_v7(version: int) -> None:
    body = error_response(1, version, _fetch_request(version),
                          errors.UnknownTopicOrPartitionError())
    payload = encode_response(1, version, CORRELATION_ID, body)
    decoded = kp_decode(1, version, payload) or decode_response(1, version, payload).body
    if version >= 7:
        assert decoded.error_code == 3
        assert decoded.session_id == 77
    if version >= 13:
        # FetchRequest.getErrorResponse: v13+ clients read the top-level error; no partitions.
        assert decoded.responses == []
        return
    (topic,) = decoded.responses
    assert topic.topic == "orders"
    assert [(p.partition_index, p.error_code, p.high_watermark) for p in topic.partitions] == \
        [(2, 3, -1), (5, 3, -1)]
    ours = decode_response(1, version, payload).body
    # Empty records, not null (FetchResponse.partitionResponse's MemoryRecords.EMPTY).
    assert [bytes(p.records) for p in ours.responses[0].partitions] == [b"", b""]
    if version >= 4:
        assert topic.partitions[0].last_stable_offset == -1
    if version >= 5:
        assert topic.partitions[0].log_start_offset == -1


@pytest.mark.parametrize("version", range(12))
def test_list_offsets_error_per_partition(version: int) -> None:
    topic, partition = element(2, "request", "topics"), element(2, "request", "topics",
                                                                "partitions")
    request = request_class(2)(replica_id=-1, topics=[
        topic(name="orders", partitions=[partition(partition_index=1, timestamp=-1)]),
        topic(name="audit", partitions=[partition(partition_index=0, timestamp=-2),
                                        partition(partition_index=4, timestamp=123)])])
    body = error_response(2, version, request, RuntimeError("bug"))
    payload = encode_response(2, version, CORRELATION_ID, body)
    decoded = kp_decode(2, version, payload) or decode_response(2, version, payload).body
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in decoded.topics] == [("orders", [(1, -1)]), ("audit", [(0, -1), (4, -1)])]
    for p in (p for t in decoded.topics for p in t.partitions):
        if version == 0:
            assert p.old_style_offsets == []
        else:
            assert (p.offset, p.timestamp) == (-1, -1)


def test_metadata_error_per_requested_topic() -> None:
    topic = element(3, "request", "topics")
    request = request_class(3)(topics=[topic(name="orders"), topic(name=None, topic_id=TOPIC_ID)])
    for version in (10, 12, 13):
        body = error_response(3, version, request, errors.LeaderNotAvailableError())
        payload = encode_response(3, version, CORRELATION_ID, body)
        decoded = kp_decode(3, version, payload)
        assert [(t.name, t.error_code, t.is_internal, t.partitions) for t in decoded.topics] == \
            [("orders", 5, False, []), ("", 5, False, [])]   # a null name becomes ""
        if version >= 13:
            assert decoded.error_code == 5
    all_topics = error_response(3, 12, request_class(3)(topics=None), RuntimeError())
    assert all_topics.topics == []


def test_describe_topic_partitions_error_per_requested_topic() -> None:
    # Kafka's DescribeTopicPartitionsRequest.getErrorResponse.
    topic = element(75, "request", "topics")
    request = request_class(75)(topics=[topic(name="a"), topic(name="b")])
    body = error_response(75, 0, request, errors.InvalidRequestError("bad cursor"))
    payload = encode_response(75, 0, CORRELATION_ID, body)
    decoded = kp_decode(75, 0, payload)
    assert [(t.name, t.error_code, t.is_internal, t.partitions,
             t.topic_authorized_operations) for t in decoded.topics] == \
        [("a", 42, False, [], -(2**31)), ("b", 42, False, [], -(2**31))]
    assert decoded.next_cursor is None


@pytest.mark.parametrize("version", [0, 1, 2])
def test_elect_leaders_error_per_requested_partition(version: int) -> None:
    # Kafka's ElectLeadersRequest.getErrorResponse: every requested partition with the error
    # (and its message), the top-level ErrorCode from v1; nothing listed for "all" (null).
    tps = element(43, "request", "topic_partitions")
    request = request_class(43)(election_type=0,
                                topic_partitions=[tps(topic="t", partition_id=[0, 2])])
    body = error_response(43, version, request, errors.NotControllerError("moved"))
    decoded = kp_decode(43, version, encode_response(43, version, CORRELATION_ID, body))
    assert [(r.topic, [(p.partition_id, p.error_code, p.error_message)
                       for p in r.partition_result])
            for r in decoded.replica_election_results] == \
        [("t", [(0, 41, "moved"), (2, 41, "moved")])]
    assert decoded.error_code == (41 if version >= 1 else 0)
    everything = error_response(43, version, request_class(43)(topic_partitions=None),
                                errors.NotControllerError("moved"))
    assert everything.replica_election_results == []


def test_group_and_coordinator_error_shapes() -> None:
    # OffsetCommit: every partition.
    topic, partition = element(8, "request", "topics"), element(8, "request", "topics",
                                                                "partitions")
    commit = error_response(8, 8, request_class(8)(group_id="g", topics=[
        topic(name="t", partitions=[partition(partition_index=0), partition(partition_index=1)])]),
        errors.RebalanceInProgressError())
    assert [(p.partition_index, p.error_code) for p in commit.topics[0].partitions] == \
        [(0, 27), (1, 27)]
    # OffsetFetch: v1 per partition, v5 top level, v8 per group.
    fetch_topic = element(9, "request", "topics")
    v1 = error_response(9, 1, request_class(9)(group_id="g", topics=[
        fetch_topic(name="t", partition_indexes=[3])]), errors.NotCoordinatorError())
    (p,) = v1.topics[0].partitions
    assert (p.partition_index, p.error_code, p.committed_offset, p.metadata) == (3, 16, -1, "")
    v5 = error_response(9, 5, request_class(9)(group_id="g", topics=[
        fetch_topic(name="t", partition_indexes=[3])]), errors.NotCoordinatorError())
    assert (v5.error_code, v5.topics) == (16, [])
    group = element(9, "request", "groups")
    v8 = error_response(9, 8, request_class(9)(groups=[group(group_id="a"), group(group_id="b")]),
                        errors.NotCoordinatorError())
    assert [(g.group_id, g.error_code, g.topics) for g in v8.groups] == [("a", 16, []),
                                                                         ("b", 16, [])]
    # FindCoordinator: "no node"; v4+ one coordinator per key.
    v3 = error_response(10, 3, request_class(10)(key="g"), errors.CoordinatorNotAvailableError())
    assert (v3.error_code, v3.node_id, v3.host, v3.port) == (15, -1, "", -1)
    assert v3.error_message == errors.CoordinatorNotAvailableError.description
    v4 = error_response(10, 4, request_class(10)(coordinator_keys=["a", "b"]),
                        errors.CoordinatorNotAvailableError())
    assert [(c.key, c.error_code, c.node_id, c.port) for c in v4.coordinators] == \
        [("a", 15, -1, -1), ("b", 15, -1, -1)]
    payload = encode_response(10, 4, CORRELATION_ID, v4)
    assert [c.key for c in kp_decode(10, 4, payload).coordinators] == ["a", "b"]
    # DescribeGroups / DeleteGroups: one entry per group id.
    described = error_response(15, 5, request_class(15)(groups=["g1", "g2"]), RuntimeError())
    assert [(g.group_id, g.error_code, g.group_state) for g in described.groups] == \
        [("g1", -1, ""), ("g2", -1, "")]
    deleted = error_response(42, 2, request_class(42)(groups_names=["g1"]), RuntimeError())
    assert [(r.group_id, r.error_code) for r in deleted.results] == [("g1", -1)]


def test_admin_and_transaction_error_shapes() -> None:
    # DeleteTopics by name (v5) and by id (v6).
    by_name = error_response(20, 5, request_class(20)(topic_names=["a", "b"]), RuntimeError())
    assert [(r.name, r.error_code) for r in by_name.responses] == [("a", -1), ("b", -1)]
    delete_topic = element(20, "request", "topics")
    by_id = error_response(20, 6, request_class(20)(topics=[delete_topic(topic_id=TOPIC_ID)]),
                           RuntimeError())
    assert [(r.name, r.topic_id) for r in by_id.responses] == [(None, TOPIC_ID)]
    # AddPartitionsToTxn: v3 per partition, v4 top level.
    txn_topic = element(24, "request", "v3_and_below_topics")
    v3 = error_response(24, 3, request_class(24)(v3_and_below_topics=[
        txn_topic(name="t", partitions=[0, 2])]), errors.ConcurrentTransactionsError())
    assert [(r.partition_index, r.partition_error_code)
            for r in v3.results_by_topic_v3_and_below[0].results_by_partition] == [(0, 51),
                                                                                   (2, 51)]
    v4 = error_response(24, 4, request_class(24)(), errors.ConcurrentTransactionsError())
    assert (v4.error_code, v4.results_by_transaction) == (51, [])
    # DescribeConfigs: one result per resource, the generic error text.
    resource = element(32, "request", "resources")
    configs = error_response(32, 4, request_class(32)(resources=[
        resource(resource_type=2, resource_name="t")]), errors.InvalidRequestError("detail"))
    (result,) = configs.results
    assert (result.error_code, result.resource_type, result.resource_name, result.error_message) \
        == (42, 2, "t", errors.InvalidRequestError.description)
    # InitProducerId: no producer.
    pid = error_response(22, 4, request_class(22)(), errors.NotCoordinatorError())
    assert (pid.error_code, pid.producer_id, pid.producer_epoch) == (16, -1, -1)


def test_error_response_refuses_unknown_apis_and_versions() -> None:
    with pytest.raises(KeyError):
        error_response(38, 0, None, RuntimeError())
    with pytest.raises(errors.UnsupportedVersionError):
        error_response(3, 14, request_class(3)(), RuntimeError())


def test_every_error_shape_names_real_fields() -> None:
    # Each Mirror's source and target exist in the request / response (a typo would silently
    # leave an array empty).
    def check(request: Struct, response: Struct, shape: Any) -> None:
        request_attrs = {f.attr: f for f in request.fields}
        response_attrs = {f.attr: f for f in response.fields}
        for target, source in shape.keys.items():
            assert target in response_attrs, (response.name, target)
            if isinstance(source, str) and source != ELEMENT:
                assert source in request_attrs, (request.name, source)
        for target in shape.fields:
            assert target in response_attrs, (response.name, target)
        for mirror in shape.arrays:
            if callable(mirror.source):
                # A computed source (AlterReplicaLogDirs flattens its dirs' topics): its
                # response array is checked; the API's own test checks the content.
                assert isinstance(response_attrs[mirror.target].type, Array)
                continue
            src, dst = request_attrs[mirror.source], response_attrs[mirror.target]
            assert isinstance(src.type, Array) and isinstance(dst.type, Array)
            assert isinstance(dst.type.element, Struct)
            check(src.type.element if isinstance(src.type.element, Struct) else Struct("-", ()),
                  dst.type.element, mirror.shape)

    for key, spec in ERROR_SHAPES.items():
        check(API_KEYS[key].request.body, API_KEYS[key].response.body, spec.shape)


@pytest.mark.parametrize("api_key", sorted(API_KEYS), ids=[a.name for a in API_KEYS.values()])
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_error_response_encodes_for_any_request(api_key: int, data: st.DataObject) -> None:
    api = API_KEYS[api_key]
    version = data.draw(st.integers(api.versions.low, api.versions.high), label="version")
    request = data.draw(random_body(api.request, version, unknown_tags=False), label="request")
    error = data.draw(st.sampled_from([RuntimeError("x"), errors.NotLeaderOrFollowerError("y"),
                                       errors.UnknownServerError()]), label="error")
    body = error_response(api_key, version, request, error)
    if body is None:
        assert api_key == 0 and request.acks == 0
        return
    payload = encode_response(api_key, version, CORRELATION_ID, body)
    assert decode_response(api_key, version, payload).body == body


# KafkaRequestHandlerPool over a real SocketServer


def test_pool_needs_a_handler_task() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        KafkaRequestHandlerPool(object(), KafkaApis(), 0)  # type: ignore[arg-type]


@trio_test
async def test_pool_answers_with_error_responses_and_keeps_serving() -> None:
    apis = apis_with({12: failing(RuntimeError("bug"))})
    async with serving(None) as h:
        await h.nursery.start(KafkaRequestHandlerPool(h.channel, apis, 2).run)
        stream = await h.connect()
        beat = kp_decode(12, 4, await h.round_trip(stream, make_frame(12, 4)))
        assert beat.error_code == -1
        # Same connection, next request: still served.
        versions = await h.round_trip(stream, make_frame(18, 0))
        assert versions == bytes.fromhex("0001e240" "0000" "00000002" "000c00000004" "001200000004")
        # An unknown API key closes only its own connection.
        other = await h.connect()
        await other.send_all(frame(struct.pack(">hhi", 999, 0, 1) + b"\x00\x00"))
        await assert_closed(other)
        assert await h.round_trip(stream, make_frame(18, 0)) == versions


class FakeApis:
    """``handle``: b"boom" raises, b"odd" returns a non-response, b"wait" waits for
    ``release``, anything else is echoed reversed."""

    def __init__(self) -> None:
        self.release = trio.Event()
        self.waiting = 0

    def answer_now(self, frame: bytes | bytearray) -> None:
        return None             # every request through ``handle``

    async def handle(self, request: Request) -> Any:
        if request.frame == b"boom":
            raise RuntimeError("handle itself failed")
        if request.frame == b"odd":
            return "not a response"
        if request.frame == b"wait":
            self.waiting += 1
            await self.release.wait()
        return SendResponse(request.frame[::-1])


@trio_test
async def test_pool_closes_the_connection_when_handle_fails(
        caplog: pytest.LogCaptureFixture) -> None:
    apis = FakeApis()
    async with serving(None) as h:
        await h.nursery.start(KafkaRequestHandlerPool(h.channel, apis, 1).run)
        boom, odd, fine = await h.connect(), await h.connect(), await h.connect()
        with caplog.at_level(logging.INFO, logger="kafkapy.server"):
            await boom.send_all(frame(b"boom"))
            await assert_closed(boom)
            await odd.send_all(frame(b"odd"))
            await assert_closed(odd)
        # The single handler task survived both.
        assert await h.round_trip(fine, b"hello") == b"olleh"
    failed, odd_one = records(caplog)
    assert failed.levelno == logging.ERROR and failed.exc_info is not None
    assert "unexpected error handling a request" in failed.message
    assert odd_one.levelno == logging.ERROR and "is not a response" in odd_one.message


@pytest.mark.parametrize("tasks", [1, 2])
@trio_test
async def test_pool_tasks_serve_connections_concurrently(tasks: int) -> None:
    apis = FakeApis()
    async with serving(None) as h:
        pool = KafkaRequestHandlerPool(h.channel, apis, tasks)
        await h.nursery.start(pool.run)
        slow, quick = await h.connect(), await h.connect()
        await slow.send_all(frame(b"wait"))
        # The slow request holds its slot before the quick one is sent: sent together, the
        # two connections' bytes may arrive in one poll and be served in either order.
        with trio.fail_after(10):
            while apis.waiting != 1:
                await settle()
        await quick.send_all(frame(b"quick"))
        # The quick one reaches the pool (on a loaded machine, after more than one settle).
        with trio.fail_after(10):
            while tasks == 1 and pool.waiting != 1:
                await settle()
        if tasks == 2:
            # One task is held by the slow request; the other answers the quick one.
            assert await receive_frame(quick) == b"kciuq"
            assert h.channel.queued == 0
        else:
            # The only slot is held: the quick request waits (taken off the channel by the
            # handler task, which waits for the slot).
            assert (h.channel.queued, pool.waiting) == (0, 1)
            with trio.move_on_after(0.2):
                await receive_frame(quick)
                raise AssertionError("answered while the only handler slot was held")
        apis.release.set()
        assert await receive_frame(slow) == b"tiaw"
        if tasks == 1:
            assert await receive_frame(quick) == b"kciuq"


# Frame handlers (the compiled fast paths: ``FRAME_HANDLERS`` of a handler module)

def _produce_frame(acks: int = 1) -> bytes:
    P = request_class(0)
    T = element(0, "request", "topic_data")
    Part = element(0, "request", "topic_data", "partition_data")
    return make_frame(0, 9, P(acks=acks, timeout_ms=100, topic_data=[
        T(name="t", partition_data=[Part(index=0, records=b""), Part(index=3, records=b"")])]))


def timed_request(frame_bytes: bytes) -> Request:
    return Request("conn-1", "PLAINTEXT", "127.0.0.1", 40000, frame_bytes, time.monotonic_ns(),
                   timings=[0, 0])


def _apis_with_frame_handler(frame_handler: Any) -> KafkaApis:
    from kafkapy.server.handlers import produce
    return KafkaApis({API_VERSIONS_KEY: handle_api_versions, 0: produce.handle_produce},
                     frame_handlers={0: frame_handler})


def test_frame_handler_answers_first_with_the_header(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    async def fast(apis: KafkaApis, request: Request, header: Any, offset: int) -> Response:
        seen.append((header.api_version, header.correlation_id, offset))
        answer = apis.frame_answer(request, header, offset, 0, SendResponse(b"fast"))
        assert isinstance(answer, SendResponse)
        return answer

    apis = _apis_with_frame_handler(fast)
    frame_bytes = _produce_frame()
    request = timed_request(frame_bytes)
    assert payload_of(trio.run(apis.handle, request)) == b"fast"
    _, offset = kafka_apis.decode_request_header(frame_bytes)
    assert seen == [(9, CORRELATION_ID, offset)]
    assert request.timings is not None
    assert len(request.timings) == 4            # dequeued, handler returned
    # a table of handlers given without frame handlers (tests) uses none
    assert payload_of(handle(apis_with({0: failing(errors.KafkaStorageError())}),
                             frame_bytes)) != b"fast"


def test_frame_handler_none_goes_on_with_handle_produce() -> None:
    calls = []

    async def not_mine(apis: KafkaApis, request: Request, header: Any, offset: int) -> None:
        calls.append(header.correlation_id)
        return None

    apis = _apis_with_frame_handler(not_mine)
    # the generic handle_produce runs (this KafkaApis serves no broker: it raises, and the
    # answer is Produce's error response, every partition UNKNOWN_SERVER_ERROR)
    body = decode_response(0, 9, payload_of(handle(apis, _produce_frame()))).body
    assert calls == [CORRELATION_ID]
    assert [(p.index, p.error_code) for p in body.responses[0].partition_responses] == [
        (0, errors.UnknownServerError.code), (3, errors.UnknownServerError.code)]


def test_frame_handler_that_raises_gets_the_error_response(
        caplog: pytest.LogCaptureFixture) -> None:
    async def broken(apis: KafkaApis, request: Request, header: Any, offset: int) -> None:
        raise errors.KafkaStorageError("disk gone")

    async def parks(apis: KafkaApis, request: Request, header: Any, offset: int) -> Parked:
        async def finish() -> Response:
            raise errors.NotEnoughReplicasError("shrunk")
        answer = apis.frame_answer(request, header, offset, 0, Parked(finish))
        assert isinstance(answer, Parked)
        return answer

    for frame_handler, code in ((broken, errors.KafkaStorageError.code),
                                (parks, errors.NotEnoughReplicasError.code)):
        apis = _apis_with_frame_handler(frame_handler)
        request = timed_request(_produce_frame())
        answer = trio.run(apis.handle, request)
        if isinstance(answer, Parked):
            answer = trio.run(answer.finish)
            assert request.timings is not None
            assert len(request.timings) == 5    # dequeued, handler returned, complete
        body = decode_response(0, 9, payload_of(answer)).body
        assert {p.error_code for p in body.responses[0].partition_responses} == {code}
        # acks=0: no error response, the connection is closed
        assert isinstance(handle(apis, _produce_frame(acks=0)) if frame_handler is broken
                          else trio.run(trio.run(apis.handle,
                                                 channel_request(_produce_frame(0))).finish),
                          CloseConnection)
