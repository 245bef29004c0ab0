"""BrokerConnection (kafkapy.clients.network_client): inter-broker requests to a real broker over
a real socket, and its failures: a refused connection, a peer that closes mid-response, a peer
that never answers, a reply to the wrong correlation id; after each, the next request opens a
new connection and works."""

from __future__ import annotations

import struct
from typing import Any

import pytest
import trio

from kafkapy.clients.network_client import BrokerConnection
from kafkapy.errors import BrokerNotAvailableError
from kafkapy.protocol import ApiKey, encode_response, request_class
from kafkapy.protocol.message_classes import ApiVersionsRequest, ApiVersionsResponse
from kafkapy.zk.zookeeper_server import free_port
from tests.trio_peers import fake_peer, with_broker

pytestmark = pytest.mark.timeout(60)


def test_requests_to_a_real_broker() -> None:
    async def body(port: int) -> None:
        conn = BrokerConnection("127.0.0.1", port, client_id="test-broker-1")
        try:
            for _ in range(3):      # one connection, several requests in turn
                metadata = await conn.request(ApiKey.METADATA, 12,
                                              request_class(ApiKey.METADATA)(topics=None))
                assert [(b.node_id, b.port) for b in metadata.brokers] == [(1, port)]
            versions = await conn.request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest(
                client_software_name="kafkapy", client_software_version="1"))
            assert isinstance(versions, ApiVersionsResponse) and versions.error_code == 0
            assert ApiKey.FETCH in {k.api_key for k in versions.api_keys}
        finally:
            await conn.close()

    trio.run(with_broker, body)


def test_refused_connection_is_broker_not_available() -> None:
    async def main() -> None:
        port = free_port("127.0.0.1")
        conn = BrokerConnection("127.0.0.1", port, timeout_s=5)
        with pytest.raises(BrokerNotAvailableError, match=f"127.0.0.1:{port}"):
            await conn.request(ApiKey.METADATA, 12, request_class(ApiKey.METADATA)(topics=None))

    trio.run(main)


def _answer(request: Any, correlation_id: int | None = None) -> bytes:
    api_key, version = request.header.api_key, request.header.api_version
    frame = encode_response(api_key, version,
                            request.header.correlation_id if correlation_id is None
                            else correlation_id,
                            ApiVersionsResponse(error_code=0))
    return struct.pack(">i", len(frame)) + frame


@pytest.mark.parametrize("fault", ["close-mid-response", "silence", "wrong-correlation-id"])
def test_a_failed_request_is_reported_and_the_next_one_reconnects(fault: str) -> None:
    answered = 0

    async def behaviour(stream: trio.SocketStream, request: Any) -> bool:
        nonlocal answered
        answered += 1
        if answered > 1:
            await stream.send_all(_answer(request))
        elif fault == "close-mid-response":
            await stream.send_all(_answer(request)[:7])
            return False
        elif fault == "silence":
            await trio.sleep_forever()
        else:
            await stream.send_all(_answer(request, request.header.correlation_id + 5))
        return True

    async def body(port: int) -> None:
        conn = BrokerConnection("127.0.0.1", port, timeout_s=1)
        request = ApiVersionsRequest(client_software_name="x", client_software_version="1")
        with pytest.raises(BrokerNotAvailableError):
            await conn.request(ApiKey.API_VERSIONS, 3, request)
        response = await conn.request(ApiKey.API_VERSIONS, 3, request)
        assert response.error_code == 0
        await conn.close()

    trio.run(fake_peer, behaviour, body)
