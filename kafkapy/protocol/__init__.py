"""kafkapy's sans-IO Kafka protocol: schemas, the compiled codec, record batches.

Never touches a socket or a file. Public entry points::

    decode_request(frame) -> Request          encode_request(request) -> bytes
    decode_response(api_key, version, frame)  encode_response(api_key, version, corr_id, body)
    API_KEYS: {ApiKey: ApiMessages}           body classes: request_class / response_class
"""

from kafkapy.protocol.api_keys import API_KEYS, ApiKey, ApiMessages, api_key_by_name
from kafkapy.protocol.classes import class_for
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


def request_class(api_key: int) -> type:
    """The attrs class of an API's request body: ``request_class(ApiKey.PRODUCE)(acks=-1, ...)``."""
    return class_for(API_KEYS[api_key].request.body)


def response_class(api_key: int) -> type:
    """The attrs class of an API's response body."""
    return class_for(API_KEYS[api_key].response.body)
