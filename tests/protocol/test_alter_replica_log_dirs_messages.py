"""AlterReplicaLogDirs (34): the versions kafka-python's classes do not cover, by hand.

kafka-python 3 defines v1-2 (Kafka 4's range); test_oracle_kafka_python checks those against
its interpreter. v0, which Kafka 3.x brokers still serve, is the same layout as v1: checked
here byte for byte against hand-written bytes, and against v1's encoding. v2 (flexible) is also
written out by hand once, so a regression shows as bytes, not only as a disagreement.
"""

from __future__ import annotations

import struct

from kafkapy.protocol import API_KEYS, ApiKey, decode, encode
from kafkapy.protocol.message_classes import (
    AlterReplicaLogDir,
    AlterReplicaLogDirPartitionResult,
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
    AlterReplicaLogDirTopic,
    AlterReplicaLogDirTopicResult,
)

API = API_KEYS[ApiKey.ALTER_REPLICA_LOG_DIRS]


def _str(s: str) -> bytes:
    return struct.pack(">h", len(s)) + s.encode()


def _cstr(s: str) -> bytes:
    return bytes([len(s) + 1]) + s.encode()


REQUEST = AlterReplicaLogDirsRequest(dirs=[AlterReplicaLogDir(
    path="/data/b", topics=[AlterReplicaLogDirTopic(name="t", partitions=[0, 7])])])
RESPONSE = AlterReplicaLogDirsResponse(throttle_time_ms=3, results=[
    AlterReplicaLogDirTopicResult(topic_name="t", partitions=[
        AlterReplicaLogDirPartitionResult(partition_index=7, error_code=57)])])


def test_versions_are_kafkas() -> None:
    assert API.key == 34
    assert (API.versions.low, API.versions.high) == (0, 2)
    assert [API.is_flexible(v) for v in range(3)] == [False, False, True]


def test_request_v0_v1_bytes() -> None:
    expected = (struct.pack(">i", 1) + _str("/data/b") + struct.pack(">i", 1) + _str("t")
                + struct.pack(">iii", 2, 0, 7))
    for version in (0, 1):
        assert encode(API.request, version, REQUEST) == expected
        assert decode(API.request, version, expected) == REQUEST


def test_request_v2_bytes() -> None:
    expected = (bytes([2]) + _cstr("/data/b") + bytes([2]) + _cstr("t") + bytes([3])
                + struct.pack(">ii", 0, 7) + b"\0" + b"\0" + b"\0")
    assert encode(API.request, 2, REQUEST) == expected
    assert decode(API.request, 2, expected) == REQUEST


def test_response_bytes() -> None:
    v0 = (struct.pack(">i", 3) + struct.pack(">i", 1) + _str("t") + struct.pack(">i", 1)
          + struct.pack(">ih", 7, 57))
    for version in (0, 1):
        assert encode(API.response, version, RESPONSE) == v0
        assert decode(API.response, version, v0) == RESPONSE
    v2 = (struct.pack(">i", 3) + bytes([2]) + _cstr("t") + bytes([2])
          + struct.pack(">ih", 7, 57) + b"\0" + b"\0" + b"\0")
    assert encode(API.response, 2, RESPONSE) == v2
    assert decode(API.response, 2, v2) == RESPONSE
