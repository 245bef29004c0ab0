"""ApiVersions (18) through KafkaApis, frame in, response out, cross-checked with kafka-python.

- every version 0-4: kafkapy's request frame is byte for byte kafka-python's, and kafka-python
  decodes the answer (response header v0 even for the flexible v3/v4) to what we advertise and
  re-encodes it to the same bytes;
- a version newer than ours (and a negative one) gets Kafka's fallback: a v0 body with
  UNSUPPORTED_VERSION and the ApiVersions range, whatever the body holds;
- v3+ client software names and versions are checked against Kafka's pattern (INVALID_REQUEST);
- a body that does not decode closes the connection.
"""

from __future__ import annotations

import struct
import time
from pathlib import Path
from typing import Any

import pytest
import trio
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.metadata import ApiVersionsRequest as KPApiVersionsRequest
from kafka.protocol.metadata import ApiVersionsResponse as KPApiVersionsResponse

from kafkapy.network import CloseConnection, Request, Response, SendResponse
from kafkapy.protocol import (
    ApiKey,
    RequestHeader,
    decode_response,
    encode_request,
    request_class,
)
from kafkapy.protocol import Request as ProtocolRequest
from kafkapy.server.handlers.api_versions import SOFTWARE_NAME_VERSION, handle_api_versions
from kafkapy.server.kafka_apis import RECOMMENDED_VERSIONS, KafkaApis, default_handlers
from kafkapy.server.request_context import RequestContext

API_VERSIONS = ApiKey.API_VERSIONS
CORRELATION_ID = 0x0A0B0C0D


def api_versions_only(**kwargs: Any) -> KafkaApis:
    """A KafkaApis serving ApiVersions alone: the answers below list exactly (18, 0, 4)."""
    return KafkaApis({API_VERSIONS: handle_api_versions}, **kwargs)


def handle(apis: KafkaApis, frame: bytes) -> Response:
    request = Request("conn-1", "PLAINTEXT", "127.0.0.1", 40000, frame, time.monotonic_ns())
    return trio.run(apis.handle, request)


def payload_of(response: Response) -> bytes:
    assert isinstance(response, SendResponse), response
    assert response.file_slices == ()
    return response.payload


def api_versions_frame(version: int, name: str = "kafkapy-test", software_version: str = "1.0",
                       correlation_id: int = CORRELATION_ID) -> bytes:
    body = request_class(API_VERSIONS)()
    if version >= 3:
        body = request_class(API_VERSIONS)(client_software_name=name,
                                           client_software_version=software_version)
    header = RequestHeader(api_key=API_VERSIONS, api_version=version,
                           correlation_id=correlation_id, client_id="test-client")
    return encode_request(ProtocolRequest(header, body))


@pytest.mark.parametrize("version", range(5))
def test_every_version_agrees_with_kafka_python(version: int) -> None:
    frame = api_versions_frame(version)
    theirs = KPApiVersionsRequest(version=version, client_software_name="kafkapy-test",
                                  client_software_version="1.0")
    theirs.with_header(correlation_id=CORRELATION_ID, client_id="test-client")
    assert frame == bytes(theirs.encode(header=True))

    payload = payload_of(handle(api_versions_only(), frame))
    # Response header v0 at every version (KIP-511): the ErrorCode follows the correlation id.
    assert payload[:6] == struct.pack(">ih", CORRELATION_ID, 0)
    response = KPApiVersionsResponse.decode(payload, version=version, header=True)
    assert response._header.correlation_id == CORRELATION_ID
    assert response.error_code == 0
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 4)]
    if version >= 1:
        assert response.throttle_time_ms == 0
    if version >= 3:
        # No feature tagged fields at all: the body ends with an empty tagged-field section.
        assert response.supported_features in (None, [])
        assert response.finalized_features in (None, [])
        assert payload.endswith(b"\x00\x00\x00\x00\x00")  # throttle 0, no tags
    assert response.version == version
    assert bytes(response.encode(header=True)) == payload


def test_response_is_exactly_kafkas_v0_and_v3_layout() -> None:
    v0 = payload_of(handle(api_versions_only(), api_versions_frame(0)))
    assert v0 == bytes.fromhex("0a0b0c0d" "0000" "00000001" "0012" "0000" "0004")
    v3 = payload_of(handle(api_versions_only(), api_versions_frame(3)))
    # compact array of 1 (0x02), one entry with an empty tag section, throttle, no tags
    assert v3 == bytes.fromhex("0a0b0c0d" "0000" "02" "0012" "0000" "0004" "00"
                               "00000000" "00")


async def _noop(context: RequestContext) -> Any:
    raise AssertionError("not called")


def test_advertises_only_apis_with_a_handler() -> None:
    apis = KafkaApis()
    # The broker's table: every API with a handler module, each at its recommended range.
    served = set(default_handlers())
    assert {0, 1, 2, 3, 18} <= served
    assert apis.api_versions == tuple((k, *RECOMMENDED_VERSIONS[k]) for k in sorted(served))
    base = api_versions_only()
    assert base.api_versions == ((18, 0, 4),)
    assert set(base.handlers) == {18}
    more = KafkaApis({**base.handlers, 3: _noop, 1: _noop, 11: _noop})
    payload = payload_of(handle(more, api_versions_frame(4)))
    response = decode_response(API_VERSIONS, 4, payload).body
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [
        (1, *RECOMMENDED_VERSIONS[1]), (3, *RECOMMENDED_VERSIONS[3]),
        (11, *RECOMMENDED_VERSIONS[11]), (18, 0, 4)]
    assert (1, 0, 12) in more.api_versions and (3, 0, 12) in more.api_versions


def _raw_request(version: int, body: bytes, correlation_id: int = CORRELATION_ID) -> bytes:
    """An ApiVersions frame written by hand: header v2 (flexible) for v3+, v1 below."""
    client_id = b"raw"
    header = struct.pack(">hhih", API_VERSIONS, version, correlation_id, len(client_id)) + client_id
    if version >= 3:
        header += b"\x00"   # empty tagged-field section
    return header + body


FALLBACK = bytes.fromhex("0a0b0c0d" "0023" "00000001" "0012" "0000" "0004")


@pytest.mark.parametrize("version", [5, 6, 127, 32767, -1, -32768])
@pytest.mark.parametrize("body", [b"", b"\x05hello\x0b1.2.3-beta\x00", b"\xff" * 37])
def test_newer_version_gets_the_v0_fallback(version: int, body: bytes) -> None:
    payload = payload_of(handle(api_versions_only(), _raw_request(version, body)))
    # v0 body and response header v0: UNSUPPORTED_VERSION with ApiVersions' range, so that
    # the client can retry with v4 (Java, kafka-python) or min(sent-1, 4) (librdkafka).
    assert payload == FALLBACK
    response = KPApiVersionsResponse.decode(payload, version=0, header=True)
    assert response._header.correlation_id == CORRELATION_ID
    assert response.error_code == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 4)]


def test_fallback_with_an_unreadable_header_closes() -> None:
    # v5 means header v2: the client id's length says 200 bytes that are not there.
    frame = struct.pack(">hhih", API_VERSIONS, 5, 1, 200) + b"abc"
    assert isinstance(handle(api_versions_only(), frame), CloseConnection)


VALID = ["a", "Z", "9", "kafka-python", "librdkafka", "confluent-kafka-python", "apache-kafka-java",
         "2.16.1-rdkafka-2.16.0", "3.0.12", "a.b-c.d", "x" * 300]
INVALID = ["", "-a", "a-", ".a", "a.", "a b", "a_b", "a/b", "a+b", "ünï", "a\n", "\na", "a\x00",
           " a", "a "]


@pytest.mark.parametrize("text", VALID)
def test_valid_software_names_are_accepted(text: str) -> None:
    assert SOFTWARE_NAME_VERSION.fullmatch(text)
    for version in (3, 4):
        for frame in (api_versions_frame(version, name=text),
                      api_versions_frame(version, software_version=text)):
            payload = payload_of(handle(api_versions_only(), frame))
            assert decode_response(API_VERSIONS, version, payload).body.error_code == 0


@pytest.mark.parametrize("text", INVALID)
@pytest.mark.parametrize("version", [3, 4])
@pytest.mark.parametrize("field", ["name", "version"])
def test_invalid_software_names_get_invalid_request(text: str, version: int,
                                                    field: str) -> None:
    frame = (api_versions_frame(version, name=text) if field == "name"
             else api_versions_frame(version, software_version=text))
    payload = payload_of(handle(api_versions_only(), frame))
    # Kafka's ApiVersionsRequest.getErrorResponse at the request's version: INVALID_REQUEST,
    # no API keys, throttle 0; header v0.
    assert payload == bytes.fromhex("0a0b0c0d" "002a" "01" "00000000" "00")
    body = decode_response(API_VERSIONS, version, payload).body
    assert (body.error_code, body.api_keys, body.throttle_time_ms) == (42, [], 0)
    # kafka-python reads any failed ApiVersions answer as v0 (right for the fallback, wrong
    # here, where Kafka answers in the request's version): its generic reader, at v3/v4.
    theirs = ApiMessage.decode.__func__(KPApiVersionsResponse, payload, version=version,
                                        header=True)
    assert theirs._header.correlation_id == CORRELATION_ID
    assert (theirs.error_code, theirs.api_keys, theirs.throttle_time_ms) == (42, [], 0)


def test_names_are_not_checked_below_v3() -> None:
    for version in range(3):
        payload = payload_of(handle(api_versions_only(), api_versions_frame(version)))
        assert decode_response(API_VERSIONS, version, payload).body.error_code == 0


@pytest.mark.parametrize(("version", "body"), [
    (3, b""),                          # names missing
    (3, b"\x05abcd"),                  # name cut short
    (3, b"\x00\x041.0\x00"),           # null name: the field is not nullable
])
def test_body_that_does_not_decode_closes(version: int, body: bytes) -> None:
    # Kafka's RequestContext.parseRequest turns any parse failure into InvalidRequestException
    # and the SocketServer closes the connection.
    assert isinstance(handle(api_versions_only(), _raw_request(version, body)), CloseConnection)


@pytest.mark.parametrize(("version", "body"), [
    (4, b"\x03ab\x041.0\x00\x00"),     # one byte too many
    (0, b"\x00"),                      # v0 has an empty body
    (2, b"\x00\x00\x00\x00"),
])
def test_bytes_after_the_body_are_ignored(version: int, body: bytes) -> None:
    # Kafka's generated readers stop at the end of the body and ignore the rest.
    payload = payload_of(handle(api_versions_only(), _raw_request(version, body)))
    assert decode_response(API_VERSIONS, version, payload).body.error_code == 0


CAPTURED = sorted((Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "frames")
                  .glob("*-ApiVersions-v*.bin"))


def test_captured_frames_cover_three_clients() -> None:
    assert {path.name.split("-")[0] for path in CAPTURED} == {"aiokafka", "confluent",
                                                              "kafkapython"}


@pytest.mark.parametrize("path", CAPTURED, ids=[p.stem for p in CAPTURED])
def test_real_clients_requests_are_answered(path: Path) -> None:
    # ApiVersions frames captured from librdkafka, kafka-python and aiokafka
    # (tests/vectors/capture.py): their software names pass, their versions are served.
    frame = path.read_bytes()
    version = int(path.stem.rsplit("-v", 1)[1])
    (correlation_id,) = struct.unpack_from(">i", frame, 4)
    payload = payload_of(handle(api_versions_only(), frame))
    assert struct.unpack_from(">ih", payload) == (correlation_id, 0)
    body = decode_response(API_VERSIONS, version, payload).body
    assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [(18, 0, 4)]
