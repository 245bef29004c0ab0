"""Peers for the inter-broker clients' tests (``BrokerConnection``,
``ReplicaFetcherBlockingSend``), on the test's own Trio loop: a real broker in process, and a
raw TCP peer whose behaviour the test scripts request by request."""

from __future__ import annotations

import functools
import struct
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from kafkapy.config import BrokerConfig
from kafkapy.protocol import decode_request
from kafkapy.server.kafka_server import KafkaServer

__all__ = ["fake_peer", "with_broker"]


async def with_broker(body: Callable[[int], Awaitable[None]]) -> None:
    """``body(port)`` against a real single broker (a temporary log dir), then its shutdown."""
    with tempfile.TemporaryDirectory() as d:
        server = KafkaServer(BrokerConfig.from_properties(
            {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": d}))
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            assert server.socket_server is not None
            try:
                await body(server.socket_server.bound_endpoints[0].port)
            finally:
                await server.shutdown()


async def fake_peer(behaviour: Callable[[trio.SocketStream, Any], Awaitable[bool]],
                    body: Callable[[int], Awaitable[None]]) -> None:
    """``body(port)`` against a TCP peer that hands each request it reads (decoded) to
    ``behaviour``, and closes the connection when that returns False."""
    async def serve(stream: trio.SocketStream) -> None:
        async with stream:
            buf = b""
            try:
                while True:
                    while len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
                        chunk = await stream.receive_some(65536)
                        if not chunk:
                            return
                        buf += chunk
                    size = struct.unpack(">i", buf[:4])[0]
                    frame, buf = buf[4:4 + size], buf[4 + size:]
                    if not await behaviour(stream, decode_request(frame)):
                        return
            except trio.BrokenResourceError:
                return              # the client closed its end first

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            functools.partial(trio.serve_tcp, serve, 0, host="127.0.0.1"))
        await body(listeners[0].socket.getsockname()[1])
        nursery.cancel_scope.cancel()
