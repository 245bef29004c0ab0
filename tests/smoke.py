"""Smoke test run by cibuildwheel against each built wheel: the compiled modules import and work.

Runs without pytest or the test dependencies.
"""

import kafkapy._arrow
import kafkapy._codec
import kafkapy._frames
import kafkapy._log
import kafkapy._records
from kafkapy.protocol import API_KEYS, decode_request, encode_request, request_class
from kafkapy.protocol.codec import Request, RequestHeader

for module in (kafkapy._arrow, kafkapy._codec, kafkapy._frames, kafkapy._log, kafkapy._records):
    assert module.__file__.endswith((".so", ".pyd")), module.__file__

body = request_class(18)()
frame = encode_request(Request(RequestHeader(api_key=18, api_version=3, correlation_id=7,
                                             client_id="smoke"), body))
assert decode_request(frame).header.correlation_id == 7
assert kafkapy._records.crc32c(b"123456789") == 0xE3069283
print(f"kafkapy smoke ok: {len(API_KEYS)} APIs")
