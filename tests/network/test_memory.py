"""What a connection costs while it waits: a few KiB, and nothing of its last request."""

from __future__ import annotations

import gc
import socket
import tracemalloc

import trio

from kafkapy.network import NoResponse, Request, Response, SendResponse
from tests.network.support import frame, receive_frame, serving, settle, trio_test

KiB = 1 << 10
MiB = 1 << 20


async def _traced_bytes() -> int:
    await settle()
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


@trio_test
async def test_an_idle_connection_costs_a_few_kib() -> None:
    count = 100
    async with serving(listen_backlog_size=2 * count) as h:
        warm = await h.connect()
        assert await h.round_trip(warm, b"warm") == b"mraw"
        # Plain sockets for the clients, made before tracing, so mostly the server is counted.
        clients = [socket.socket() for _ in range(count)]
        try:
            for client in clients:
                client.setblocking(False)
            tracemalloc.start()
            try:
                before = await _traced_bytes()
                for client in clients:
                    assert client.connect_ex(("127.0.0.1", h.port)) in (0, 115)  # EINPROGRESS
                for client in clients:
                    await trio.lowlevel.wait_writable(client)
                    client.send(frame(b"hi"))
                for client in clients:
                    await trio.lowlevel.wait_readable(client)
                    assert client.recv(16) == frame(b"ih")
                after = await _traced_bytes()
            finally:
                tracemalloc.stop()
            assert h.server.connection_count == count + 1
            per_connection = (after - before) / count
            assert per_connection < 12 * KiB, per_connection
        finally:
            for client in clients:
                client.close()


@trio_test
async def test_a_big_request_is_not_kept_after_it_is_answered() -> None:
    async def respond(request: Request) -> Response:
        return NoResponse() if len(request.frame) > MiB else SendResponse(b"done")

    async with serving(respond) as h:
        stream = await h.connect()
        tracemalloc.start()
        try:
            before = await _traced_bytes()
            await stream.send_all(frame(b"p" * (8 * MiB)) + frame(b"small"))
            assert await receive_frame(stream) == b"done"
            after = await _traced_bytes()
        finally:
            tracemalloc.stop()
        assert after - before < 256 * KiB, after - before
