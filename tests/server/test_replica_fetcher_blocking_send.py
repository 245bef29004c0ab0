"""ReplicaFetcherBlockingSend (kafkapy.server.replica_fetcher_blocking_send): a fetcher's
requests to a real broker over a real socket; answers larger than its first read and answers
that arrive in pieces; its failures (refused, closed mid-response, silence, a wrong
correlation id), after each of which the next request reconnects; one request at a time."""

from __future__ import annotations

import struct
from typing import Any

import pytest
import trio

from kafkapy.errors import BrokerNotAvailableError
from kafkapy.protocol import ApiKey, encode_response, request_class
from kafkapy.protocol.message_classes import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    PartitionData,
)
from kafkapy.server.replica_fetcher_blocking_send import ReplicaFetcherBlockingSend
from kafkapy.zk.zookeeper_server import free_port
from tests.trio_peers import fake_peer, with_broker

pytestmark = pytest.mark.timeout(60)

VERSIONS = ApiVersionsRequest(client_software_name="x", client_software_version="1")


def _conn(port: int, timeout_s: float = 5) -> ReplicaFetcherBlockingSend:
    return ReplicaFetcherBlockingSend("127.0.0.1", port, client_id="broker-2-fetcher-0",
                                      timeout_s=timeout_s)


def test_requests_to_a_real_broker() -> None:
    async def body(port: int) -> None:
        conn = _conn(port)
        try:
            for _ in range(3):      # one connection, several requests in turn
                metadata = await conn.request(ApiKey.METADATA, 12,
                                              request_class(ApiKey.METADATA)(topics=None))
                assert [(b.node_id, b.port) for b in metadata.brokers] == [(1, port)]
            versions = await conn.request(ApiKey.API_VERSIONS, 3, VERSIONS)
            assert isinstance(versions, ApiVersionsResponse) and versions.error_code == 0
            assert ApiKey.FETCH in {k.api_key for k in versions.api_keys}
        finally:
            await conn.close()

    trio.run(with_broker, body)


def test_refused_connection_is_broker_not_available() -> None:
    async def main() -> None:
        port = free_port("127.0.0.1")
        with pytest.raises(BrokerNotAvailableError, match=f"127.0.0.1:{port}"):
            await _conn(port).request(ApiKey.API_VERSIONS, 3, VERSIONS)

    trio.run(main)


def _framed(request: Any, body: Any, correlation_id: int | None = None) -> bytes:
    frame = encode_response(request.header.api_key, request.header.api_version,
                            request.header.correlation_id if correlation_id is None
                            else correlation_id, body)
    return struct.pack(">i", len(frame)) + frame


@pytest.mark.parametrize("records", [100, 64 * 1024, 300 * 1024])
def test_answers_of_any_size_arriving_in_pieces(records: int) -> None:
    payload = bytes(range(256)) * (records // 256) + b"z" * (records % 256)

    async def behaviour(stream: trio.SocketStream, request: Any) -> bool:
        data = _framed(request, FetchResponse(responses=[FetchableTopicResponse(
            topic="t", partitions=[PartitionData(partition_index=0, high_watermark=7,
                                                 records=payload)])]))
        # The size prefix alone, then the rest in uneven pieces with pauses between.
        pieces = [data[:2], data[2:4], data[4:9], data[9:len(data) // 3],
                  data[len(data) // 3:]]
        for piece in pieces:
            await stream.send_all(piece)
            await trio.sleep(0.01)
        return True

    async def body(port: int) -> None:
        conn = _conn(port)
        try:
            for _ in range(2):
                response = await conn.request(ApiKey.FETCH, 12, FetchRequest(replica_id=2))
                (pd,) = response.responses[0].partitions
                assert pd.high_watermark == 7 and bytes(pd.records) == payload
        finally:
            await conn.close()

    trio.run(fake_peer, behaviour, body)


@pytest.mark.parametrize("fault", ["close-mid-response", "silence", "wrong-correlation-id",
                                   "bytes-after-the-answer"])
def test_a_failed_request_is_reported_and_the_next_one_reconnects(fault: str) -> None:
    answered = 0

    async def behaviour(stream: trio.SocketStream, request: Any) -> bool:
        nonlocal answered
        answered += 1
        good = _framed(request, ApiVersionsResponse(error_code=0))
        if answered > 1:
            await stream.send_all(good)
        elif fault == "close-mid-response":
            await stream.send_all(good[:7])
            return False
        elif fault == "silence":
            await trio.sleep_forever()
        elif fault == "wrong-correlation-id":
            await stream.send_all(_framed(request, ApiVersionsResponse(error_code=0),
                                          request.header.correlation_id + 5))
        else:
            await stream.send_all(good + b"\x00\x00")
        return True

    async def body(port: int) -> None:
        conn = _conn(port, timeout_s=1)
        with pytest.raises(BrokerNotAvailableError, match=f"127.0.0.1:{port}"):
            await conn.request(ApiKey.API_VERSIONS, 3, VERSIONS)
        response = await conn.request(ApiKey.API_VERSIONS, 3, VERSIONS)
        assert response.error_code == 0
        assert answered == 2
        await conn.close()

    trio.run(fake_peer, behaviour, body)


def test_one_request_at_a_time() -> None:
    async def behaviour(stream: trio.SocketStream, request: Any) -> bool:
        await trio.sleep(0.2)
        await stream.send_all(_framed(request, ApiVersionsResponse(error_code=0)))
        return True

    async def body(port: int) -> None:
        conn = _conn(port)
        results: list[int] = []

        async def first() -> None:
            results.append((await conn.request(ApiKey.API_VERSIONS, 3, VERSIONS)).error_code)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(first)
            await trio.sleep(0.05)
            with pytest.raises(RuntimeError, match="one request at a time"):
                await conn.request(ApiKey.API_VERSIONS, 3, VERSIONS)
        assert results == [0]       # the first request was not disturbed
        await conn.close()

    trio.run(fake_peer, behaviour, body)


def test_cancelled_mid_request_closes_the_connection() -> None:
    requests = 0

    async def behaviour(stream: trio.SocketStream, request: Any) -> bool:
        nonlocal requests
        requests += 1
        if requests == 1:
            await trio.sleep(0.3)       # answered after the caller gave up: must not be read
        await stream.send_all(_framed(request, ApiVersionsResponse(error_code=requests)))
        return True

    async def body(port: int) -> None:
        conn = _conn(port)
        with trio.move_on_after(0.1) as scope:
            await conn.request(ApiKey.API_VERSIONS, 3, VERSIONS)
        assert scope.cancelled_caught
        await trio.sleep(0.4)
        # A new connection: the late answer to the first request is not taken for this one.
        assert (await conn.request(ApiKey.API_VERSIONS, 3, VERSIONS)).error_code == 2
        await conn.close()

    trio.run(fake_peer, behaviour, body)
