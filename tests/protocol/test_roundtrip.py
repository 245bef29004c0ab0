"""Property round trips over every API, both directions, every version the codec knows.

For each (API, version): a random body that the version can carry encodes, decodes back to an
equal value, and the bytes re-encode identically; wrapped in a request/response with headers
the same holds for whole frames.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkapy.protocol import (
    API_KEYS,
    Request,
    RequestHeader,
    decode,
    decode_request,
    decode_response,
    encode,
    encode_request,
    encode_response,
)
from kafkapy.protocol.headers import request_header_version
from tests.protocol.strategies import body

CASES = [(api.key, v) for api in API_KEYS.values()
         for v in range(api.versions.low, api.versions.high + 1)]
IDS = [f"{API_KEYS[k].name}-v{v}" for k, v in CASES]

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_request_round_trip(api_key: int, version: int, data: st.DataObject) -> None:
    api = API_KEYS[api_key]
    value = data.draw(body(api.request, version))
    encoded = encode(api.request, version, value)
    decoded = decode(api.request, version, encoded)
    assert decoded == value
    assert encode(api.request, version, decoded) == encoded

    client_id = data.draw(st.one_of(st.none(), st.text(max_size=5)))
    header = RequestHeader(api_key=api_key, api_version=version, correlation_id=version * 7,
                           client_id=client_id)
    frame = encode_request(Request(header, value))
    request = decode_request(frame)
    assert request.header.correlation_id == version * 7
    if request_header_version(api_key, version, api.is_flexible(version)) == 0:
        # Header v0 (ControlledShutdown v0 only) has no client id: it reads as the default.
        assert request.header.client_id == RequestHeader().client_id
    else:
        assert request.header.client_id == client_id
    assert request.body == value
    assert encode_request(request) == frame


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_response_round_trip(api_key: int, version: int, data: st.DataObject) -> None:
    api = API_KEYS[api_key]
    value = data.draw(body(api.response, version))
    frame = encode_response(api_key, version, 12345, value)
    response = decode_response(api_key, version, frame)
    assert response.header.correlation_id == 12345
    assert response.body == value
    assert encode_response(api_key, version, 12345, response.body) == frame
