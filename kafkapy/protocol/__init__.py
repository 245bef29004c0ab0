"""kafkapy's sans-IO Kafka protocol: schemas, the compiled codec, record batches.

Never touches a socket or a file. Public entry points::

    decode_request(frame) -> Request          encode_request(request) -> bytes
    decode_response(api_key, version, frame)  encode_response(api_key, version, corr_id, body)
    API_KEYS: {ApiKey: ApiMessages}           body classes: request_class / response_class

Each is imported on first use: a program that needs only the record batches
(``kafkapy.protocol.records``, as the Spark reader in Spark's Python workers) does not build
every message class, whose objects would also make each of that worker's garbage collections
longer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkapy.protocol.api_keys import API_KEYS, ApiKey, ApiMessages, api_key_by_name
    from kafkapy.protocol.codec import (
        Request,
        RequestHeader,
        Response,
        ResponseHeader,
        decode,
        decode_request,
        decode_request_header,
        decode_response,
        encode,
        encode_request,
        encode_response,
        encode_response_parts,
    )

__all__ = [
    "API_KEYS", "ApiKey", "ApiMessages", "Request", "RequestHeader", "Response", "ResponseHeader",
    "api_key_by_name", "decode", "decode_request", "decode_request_header", "decode_response",
    "encode", "encode_request", "encode_response", "encode_response_parts", "request_class",
    "response_class",
]

# The module of this package that defines each public name.
_HOMES = {
    **dict.fromkeys(("API_KEYS", "ApiKey", "ApiMessages", "api_key_by_name"), "api_keys"),
    **dict.fromkeys(("Request", "RequestHeader", "Response", "ResponseHeader", "decode",
                     "decode_request", "decode_request_header", "decode_response", "encode",
                     "encode_request", "encode_response", "encode_response_parts"), "codec"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'kafkapy.protocol' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"kafkapy.protocol.{home}"), name)
    globals()[name] = value       # later look-ups find it without this function
    return value


def request_class(api_key: int) -> type:
    """The attrs class of an API's request body: ``request_class(ApiKey.PRODUCE)(acks=-1, ...)``."""
    from kafkapy.protocol.api_keys import API_KEYS
    from kafkapy.protocol.classes import class_for

    return class_for(API_KEYS[api_key].request.body)


def response_class(api_key: int) -> type:
    """The attrs class of an API's response body."""
    from kafkapy.protocol.api_keys import API_KEYS
    from kafkapy.protocol.classes import class_for

    return class_for(API_KEYS[api_key].response.body)
