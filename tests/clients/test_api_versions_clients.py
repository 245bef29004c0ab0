"""Real clients complete their ApiVersions handshake with kafkapy.

The broker side is the real thing: SocketServer + RequestChannel + KafkaRequestHandlerPool +
KafkaApis on 127.0.0.1 (port 0), under trio; the blocking client runs in a worker thread
(``trio.to_thread``). A recorder between the pool and KafkaApis notes every request it sees.

- kafka-python (``kafka.net.connection.KafkaConnection``, which replaced 2.x's
  ``kafka.conn.BrokerConnection`` in 3.0) connects, sends ApiVersions v4 and reports exactly
  the versions we advertise; against a broker advertising ApiVersions 0-2 it gets the v0
  fallback and retries with v2.
- confluent-kafka (librdkafka) accepts the answer to its ApiVersions v3: it then knows the
  broker has no Metadata and fails ``list_topics`` locally with _UNSUPPORTED_FEATURE, without
  sending a Metadata request or retrying ApiVersions (today's expected outcome: Metadata is not
  implemented yet). Against ApiVersions 0-2 it takes the fallback and retries with v0.
- raw sockets: ApiVersions v5 gets the fallback bytes; an unknown API key closes that
  connection while another keeps working.
- a real broker: every API and version it advertises answers a raw request, in bytes
  kafka-python decodes and re-encodes identically where it knows the API.
"""

from __future__ import annotations

import struct
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import attrs
import confluent_kafka
import trio
from confluent_kafka.admin import AdminClient
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector

from kafkapy import Broker
from kafkapy.network import Request, Response, SendResponse
from kafkapy.protocol import (
    API_KEYS,
    ApiKey,
    decode,
    decode_request_header,
    decode_response,
    request_class,
)
from kafkapy.server.handler_pool import KafkaRequestHandlerPool
from kafkapy.server.handlers.api_versions import handle_api_versions
from kafkapy.server.kafka_apis import RECOMMENDED_VERSIONS, KafkaApis
from tests.clients.client_support import RawClient
from tests.network.support import Harness, assert_closed, frame, serving, trio_test
from tests.server.test_kafka_apis import KP_RESPONSES

T = TypeVar("T")


@attrs.frozen
class Seen:
    connection_id: str
    api_key: int
    api_version: int
    request_body: Any
    response: Response

    @property
    def error_code(self) -> int:
        """The answer's ErrorCode (v0 layout for an ApiVersions fallback)."""
        assert isinstance(self.response, SendResponse)
        (code,) = struct.unpack_from(">h", self.response.payload, 4)
        return int(code)


class Recorder:
    """Sits between the handler pool and KafkaApis and notes every request and its answer."""

    def __init__(self, apis: KafkaApis) -> None:
        self.apis = apis
        self.seen: list[Seen] = []

    def answer_now(self, frame: bytes | bytearray) -> None:
        """Nothing at once: every request goes through ``handle``, where it is noted."""
        return None

    async def handle(self, request: Request) -> Response:
        response = await self.apis.handle(request)
        header, offset = decode_request_header(request.frame)
        body = None
        if header.api_version in API_KEYS[header.api_key].versions:
            body = decode(API_KEYS[header.api_key].request, header.api_version,
                          request.frame[offset:])
        self.seen.append(Seen(request.connection_id, header.api_key, header.api_version, body,
                              response))
        return response


@asynccontextmanager
async def broker(apis: KafkaApis | None = None) -> AsyncIterator[tuple[Harness, Recorder]]:
    recorder = Recorder(KafkaApis({18: handle_api_versions}) if apis is None else apis)
    async with serving(None) as harness:
        await harness.nursery.start(KafkaRequestHandlerPool(harness.channel, recorder, 4).run)
        yield harness, recorder


async def in_thread(fn: Callable[[], T]) -> T:
    # abandon_on_cancel: a hung client fails the test at trio_test's deadline instead of
    # hanging it.
    return await trio.to_thread.run_sync(fn, abandon_on_cancel=True)


def older_api_versions() -> KafkaApis:
    return KafkaApis({18: handle_api_versions},
                     recommended={**RECOMMENDED_VERSIONS, 18: (0, 2)})


def kafka_python_connect(port: int) -> tuple[bool, dict[int, tuple[int, int]], Any]:
    """kafka-python's connection handshake; (connected, api versions, inferred version)."""
    net = NetworkSelector()
    manager = KafkaConnectionManager(net, bootstrap_servers=f"127.0.0.1:{port}",
                                     request_timeout_ms=5000)
    try:
        (node,) = manager.cluster.bootstrap_brokers()
        conn = manager.get_connection(node.node_id)
        net.poll(timeout_ms=5000, future=conn.init_future)
        assert conn.init_future.is_done and conn.init_future.exception is None
        data = conn.broker_version_data
        return conn.connected, dict(data.api_versions), data.broker_version
    finally:
        manager.close()
        net.close()


@trio_test
async def test_kafka_python_handshake() -> None:
    async with broker() as (h, recorder):
        connected, api_versions, inferred = await in_thread(lambda: kafka_python_connect(h.port))
        assert connected
        assert api_versions == {18: (0, 4)}
        # With nothing but ApiVersions it cannot place the broker past 0.10.0 (its fallback).
        assert inferred == (0, 10, 0)
        (seen,) = recorder.seen
        assert (seen.api_key, seen.api_version, seen.error_code) == (18, 4, 0)
        assert seen.request_body.client_software_name == "kafka-python"


@trio_test
async def test_kafka_python_takes_the_fallback() -> None:
    async with broker(older_api_versions()) as (h, recorder):
        connected, api_versions, _ = await in_thread(lambda: kafka_python_connect(h.port))
        assert connected and api_versions == {18: (0, 2)}
        first, second = recorder.seen
        assert first.connection_id == second.connection_id
        assert (first.api_version, first.error_code) == (4, 35)     # v0 fallback
        assert (second.api_version, second.error_code) == (2, 0)


def confluent_list_topics(port: int) -> confluent_kafka.KafkaError:
    """librdkafka's handshake; list_topics then fails: the error it fails with."""
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}", "log_level": 3})
    try:
        admin.list_topics(timeout=5)
    except confluent_kafka.KafkaException as exc:
        error: confluent_kafka.KafkaError = exc.args[0]
        return error
    raise AssertionError("list_topics succeeded against a broker without Metadata")


@trio_test
async def test_confluent_kafka_handshake() -> None:
    async with broker() as (h, recorder):
        error = await in_thread(lambda: confluent_list_topics(h.port))
        # librdkafka read our answer: it knows Metadata is not supported and fails locally.
        # (A broken answer would have been retried with ApiVersions v0, or timed out.)
        assert error.code() == confluent_kafka.KafkaError._UNSUPPORTED_FEATURE
        (seen,) = recorder.seen
        assert (seen.api_key, seen.api_version, seen.error_code) == (18, 3, 0)
        assert seen.request_body.client_software_name == "confluent-kafka-python"
        assert seen.request_body.client_software_version.startswith(
            confluent_kafka.version()[0])
        body = decode_response(18, 3, seen.response.payload).body  # type: ignore[union-attr]
        assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [(18, 0, 4)]


@trio_test
async def test_confluent_kafka_takes_the_fallback() -> None:
    async with broker(older_api_versions()) as (h, recorder):
        error = await in_thread(lambda: confluent_list_topics(h.port))
        assert error.code() == confluent_kafka.KafkaError._UNSUPPORTED_FEATURE
        first, second = recorder.seen
        assert first.connection_id == second.connection_id
        assert (first.api_version, first.error_code) == (3, 35)
        # librdkafka would retry with min(sent - 1, the broker's max), but it reads the v0
        # fallback's INT32 array count as a compact (flexible) count, finds no entries and
        # retries with v0 (rd_kafka_handle_ApiVersion / rd_kafka_broker_handle_ApiVersion).
        # Kafka sends the same bytes; v0 is answered normally.
        assert (second.api_version, second.error_code) == (0, 0)


@trio_test
async def test_raw_sockets_fallback_and_unknown_key() -> None:
    async with broker() as (h, recorder):
        good, bad = await h.connect(), await h.connect()
        v5 = struct.pack(">hhih", 18, 5, 41, 3) + b"raw" + b"\x00" + b"\x02x\x02y\x00"
        fallback = await h.round_trip(good, v5)
        assert fallback == bytes.fromhex("00000029" "0023" "00000001" "0012" "0000" "0004")
        await bad.send_all(frame(struct.pack(">hhih", 9999, 0, 42, 0)))
        await assert_closed(bad)
        # The other connection, and new ones, keep working.
        v0 = struct.pack(">hhih", 18, 0, 43, 0)
        expected = bytes.fromhex("0000002b" "0000" "00000001" "0012" "0000" "0004")
        assert await h.round_trip(good, v0) == expected
        assert await h.round_trip(await h.connect(), v0) == expected
        assert [s.api_key for s in recorder.seen] == [18, 18, 18]   # the unknown key never
        # reached the recorder's decode: KafkaApis closed it first.


# ---------------------------------------------------------------- every advertised API


def _advertised(bootstrap: str) -> dict[int, tuple[int, int]]:
    """What kafka-python reads from a real broker's ApiVersions."""
    _host, port = bootstrap.rsplit(":", 1)
    connected, api_versions, _ = kafka_python_connect(int(port))
    assert connected
    return {key: (low, high) for key, (low, high) in api_versions.items()}


def _minimal_body(api_key: int) -> Any:
    body = request_class(api_key)()
    if api_key == ApiKey.PRODUCE:
        body.acks = -1          # acks=0 has no response to check
    return body


def test_every_advertised_api_round_trips() -> None:
    """Every API and version a real broker advertises (as kafka-python reads them) answers a
    raw request: a response with the request's correlation id that kafkapy decodes and,
    where kafka-python knows the API and version, that kafka-python decodes and re-encodes
    to the same bytes. (The real clients' calls are in the API's own tests.)"""
    with Broker() as broker:
        advertised = _advertised(broker.bootstrap_servers)
        assert advertised == {key: RECOMMENDED_VERSIONS[key] for key in advertised}
        assert {ApiKey.DESCRIBE_TOPIC_PARTITIONS, ApiKey.LIST_CONFIG_RESOURCES} <= set(advertised)
        assert ApiKey.DESCRIBE_QUORUM not in advertised      # ZooKeeper mode does not serve it
        assert advertised[ApiKey.ALTER_REPLICA_LOG_DIRS] == (0, 2)    # Kafka 3.x's range
        checked = 0
        with RawClient(broker.bootstrap_servers) as client:
            for key, (low, high) in sorted(advertised.items()):
                for version in range(low, high + 1):
                    correlation_id = client.send_request(key, version, _minimal_body(key))
                    frame_bytes = client.receive_frame()
                    response = decode_response(key, version, frame_bytes)
                    assert response.header.correlation_id == correlation_id, (key, version)
                    kp_cls = KP_RESPONSES.get(key)
                    if kp_cls is not None and kp_cls.min_version <= version <= \
                            kp_cls.max_version and not (key == 18 and version >= 3):
                        flexible = API_KEYS[key].is_flexible(version)
                        header = 4 + (1 if flexible and key != 18 else 0)
                        theirs = kp_cls.decode(frame_bytes[header:], version=version)
                        again = theirs._struct.encode(theirs, version=version,
                                                      compact=flexible, tagged=flexible)
                        assert bytes(again) == frame_bytes[header:], (key, version)
                        checked += 1
        assert checked > 100
