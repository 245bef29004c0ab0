"""Encoding and decoding whole requests and responses: kafkapy's public protocol API.

Theory of operation
-------------------
``compile_plan(struct, version, flexible)`` turns a declaration (:mod:`.schema`) into the plan
the compiled interpreter (:mod:`kafkapy._codec`) walks, once per (struct, version), cached.
The functions below add the framing rules of :mod:`.headers`:

- ``decode_request(frame)``: frame is one request without its 4-byte size prefix. The API key
  and version are read first (they decide the header version), then the header, then the body.
  The whole frame must be consumed.
- ``encode_request(request)``, ``encode_response(...)``, ``decode_response(...)``.

Byte-exactness: ``encode(decode(b)) == b`` for canonical input (booleans 0/1, tagged fields in
ascending order and only when not default — as every Kafka implementation writes them);
``decode(encode(x)) == x`` for every value a version can carry.

Errors: ``InvalidRequestError`` (code 42) for malformed bytes and unknown API keys,
``UnsupportedVersionError`` (35) for versions outside the API's range. Both carry the request
header on ``.header`` when it could be read, so that a server can still answer (ApiVersions'
fallback, see the protocol reference §3.2).
"""

from __future__ import annotations

from typing import Any

import attrs

from kafkapy import _codec
from kafkapy.errors import InvalidRequestError, KafkaError, UnsupportedVersionError
from kafkapy.protocol.api_keys import API_KEYS, ApiMessages
from kafkapy.protocol.classes import class_for, field_default
from kafkapy.protocol.headers import (
    REQUEST_HEADER,
    RESPONSE_HEADER,
    request_header_version,
    response_header_version,
)
from kafkapy.protocol.message_classes import RequestHeader, ResponseHeader
from kafkapy.protocol.schema import PRIMITIVES, Array, Message, Struct

__all__ = [
    "Request",
    "RequestHeader",
    "Response",
    "ResponseHeader",
    "compile_plan",
    "decode",
    "decode_request",
    "decode_request_header",
    "decode_response",
    "encode",
    "encode_request",
    "encode_response",
    "encode_response_parts",
    "message_plan",
]

for _name, _primitive in PRIMITIVES.items():
    assert _codec.OPCODES[_name] == _primitive.code, _name


_PLANS: dict[tuple[int, int, bool], _codec.StructPlan] = {}


def compile_plan(struct: Struct, version: int, flexible: bool) -> _codec.StructPlan:
    """The plan for ``struct`` at ``version`` (cached)."""
    cache_key = (id(struct), version, flexible)
    plan = _PLANS.get(cache_key)
    if plan is not None:
        return plan
    plan = _codec.StructPlan(class_for(struct), struct.name, version, flexible)
    _PLANS[cache_key] = plan
    fields, tagged, absent, must_default = [], [], [], []
    for f in struct.fields:
        if version not in f.versions:
            default = field_default(f)
            is_factory = isinstance(default, list) or (
                isinstance(f.type, Struct) and default is not None)
            absent.append((f.attr, _factory(f) if is_factory else default, is_factory))
            if not f.ignorable:
                must_default.append((f.attr, default))
            continue
        is_tagged = flexible and version in f.tagged
        compact = flexible if f.flexible_override is None else version in f.flexible_override
        nullable = version in f.nullable
        sub = None
        elem_op = 0
        if isinstance(f.type, Array):
            op = _codec.OPCODES["array"]
            if isinstance(f.type.element, Struct):
                elem_op = _codec.OPCODES["struct"]
                sub = compile_plan(f.type.element, version, flexible)
            else:
                elem_op = f.type.element.code
        elif isinstance(f.type, Struct):
            op = _codec.OPCODES["struct"]
            sub = compile_plan(f.type, version, flexible)
        else:
            op = f.type.code
        if is_tagged and f.tag is not None:
            default = field_default(f)
            if isinstance(default, list) or (isinstance(f.type, Struct) and default is not None):
                default = _factory(f)
            tagged.append(_codec.FieldPlan(f.attr, op, nullable, compact, elem_op, sub,
                                           f.tag, default))
        else:
            fields.append(_codec.FieldPlan(f.attr, op, nullable, compact, elem_op, sub, -1, None))
    plan.complete(tuple(fields), tuple(tagged), tuple(absent), tuple(must_default))
    return plan


def _factory(f: Any) -> Any:
    if isinstance(f.type, Array):
        return list
    return class_for(f.type)


_MESSAGE_PLANS: dict[tuple[int, int], _codec.StructPlan] = {}


def message_plan(message: Message, version: int) -> _codec.StructPlan:
    """The plan for a message body at ``version``; UnsupportedVersionError outside its range."""
    plan = _MESSAGE_PLANS.get((id(message), version))
    if plan is not None:
        return plan
    if version not in message.valid:
        raise UnsupportedVersionError(
            f"{message.name} v{version} is not supported (versions {message.valid})")
    # Messages are module-level constants that live as long as the process: id() is stable.
    plan = _MESSAGE_PLANS[(id(message), version)] = compile_plan(
        message.body, version, message.is_flexible(version))
    return plan


def _header_plan(message: Message, version: int) -> _codec.StructPlan:
    return compile_plan(message.body, version, message.is_flexible(version))


@attrs.define(slots=True)
class Request:
    """A decoded request: ``header`` (api_key, api_version, correlation_id, client_id) and
    ``body`` (the attrs object of the API's request schema)."""

    header: Any
    body: Any

    @property
    def api(self) -> ApiMessages:
        return API_KEYS[self.header.api_key]


@attrs.define(slots=True)
class Response:
    header: Any
    body: Any


def _api(api_key: int) -> ApiMessages:
    api = API_KEYS.get(api_key)
    if api is None:
        raise InvalidRequestError(f"unknown API key {api_key}")
    return api


# (api key, api version) -> the request header's plan, for the keys and versions seen.
_REQUEST_HEADER_PLANS: dict[tuple[int, int], _codec.StructPlan] = {}


def decode_request_header(frame: Any) -> tuple[RequestHeader, int]:
    """Decode only the header of a request frame; returns (header, offset of the body).

    Works for any version of a known API (so a server can answer an ApiVersions request of a
    version it does not know). Raises InvalidRequestError for unknown keys or bad bytes.
    """
    api_key, api_version = _codec.read_int16_pair(frame)
    plan = _REQUEST_HEADER_PLANS.get((api_key, api_version))
    if plan is None:
        api = _api(api_key)
        # A version beyond what we know still decides its header by flexibility: the
        # flexible range is open-ended ("N+"), so a newer version of a flexible API is
        # flexible.
        flexible = api.is_flexible(api_version)
        version = request_header_version(api_key, api_version, flexible)
        plan = _header_plan(REQUEST_HEADER, version)
        if -1 <= api_version <= 64:         # a bounded cache, whatever clients send
            _REQUEST_HEADER_PLANS[(api_key, api_version)] = plan
    header, offset = _codec.decode_struct(plan, frame, 0)
    return header, offset


def decode_request(frame: Any) -> Request:
    """Decode a whole request frame (bytes or memoryview, without the size prefix).

    Records fields come back as memoryviews into ``frame`` (no copy).
    Raises InvalidRequestError, UnsupportedVersionError (with ``.header`` set when known).
    """
    header, offset = decode_request_header(frame)
    try:
        plan = message_plan(API_KEYS[header.api_key].request, header.api_version)
        body, end = _codec.decode_struct(plan, frame, offset)
        if end != len(memoryview(frame)):
            raise InvalidRequestError(
                f"{len(memoryview(frame)) - end} unexpected bytes after the request body")
    except KafkaError as e:
        e.header = header  # type: ignore[attr-defined]
        raise
    return Request(header, body)


def encode_request(request: Request) -> bytes:
    """Encode a request to a frame (without the size prefix)."""
    header = request.header
    api = _api(header.api_key)
    plan = message_plan(api.request, header.api_version)
    hv = request_header_version(header.api_key, header.api_version, plan.flexible)
    return _codec.Encoder().struct(_header_plan(REQUEST_HEADER, hv), header) \
        .struct(plan, request.body).getvalue()


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Any) -> bytes:
    """Encode a response frame (without the size prefix)."""
    plan = message_plan(_api(api_key).response, api_version)
    hv = response_header_version(api_key, plan.flexible)
    return _codec.Encoder().struct(_header_plan(RESPONSE_HEADER, hv),
                                   ResponseHeader(correlation_id=correlation_id)) \
        .struct(plan, body).getvalue()


def encode_response_parts(api_key: int, api_version: int, correlation_id: int,
                          body: Any) -> list[Any]:
    """Encode a response frame whose records fields may be sent from files.

    A records value that is not a buffer (anything with an int ``size``, such as the log's
    fetch data) is encoded as its length only. Returns ``[bytes, value, bytes, ...]`` in wire
    order: the caller writes the bytes and each value's ``size`` bytes between them."""
    plan = message_plan(_api(api_key).response, api_version)
    hv = response_header_version(api_key, plan.flexible)
    return _codec.Encoder().struct(_header_plan(RESPONSE_HEADER, hv),
                                   ResponseHeader(correlation_id=correlation_id)) \
        .struct(plan, body).parts()


def decode_response(api_key: int, api_version: int, frame: Any) -> Response:
    """Decode a response frame (without the size prefix) of a known API and version."""
    plan = message_plan(_api(api_key).response, api_version)
    hv = response_header_version(api_key, plan.flexible)
    header, offset = _codec.decode_struct(_header_plan(RESPONSE_HEADER, hv), frame, 0)
    body, end = _codec.decode_struct(plan, frame, offset)
    if end != len(memoryview(frame)):
        raise InvalidRequestError(
            f"{len(memoryview(frame)) - end} unexpected bytes after the response body")
    return Response(header, body)


def encode(message: Message, version: int, body: Any) -> bytes:
    """Encode a body alone (no header) with any declared message, e.g. ConsumerProtocol data."""
    return _codec.encode_struct(message_plan(message, version), body)


def decode(message: Message, version: int, data: Any) -> Any:
    """Decode a body alone; the whole of ``data`` must be consumed."""
    body, end = _codec.decode_struct(message_plan(message, version), data, 0)
    if end != len(memoryview(data)):
        raise InvalidRequestError(f"{len(memoryview(data)) - end} unexpected trailing bytes")
    return body
