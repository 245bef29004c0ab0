"""When the server closes a connection, and that it closes only that one: invalid size
prefixes, garbage, truncated frames, idle connections, stalled readers."""

from __future__ import annotations

import logging
import random
import struct

import pytest
import trio

from kafkapy.network import Request, Response, SendResponse
from tests.network.support import (
    assert_closed,
    echo,
    frame,
    receive_frame,
    receive_until_closed,
    serving,
    settle,
    trio_test,
)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@trio_test
async def test_oversized_frame_closes_only_that_connection(
        caplog: pytest.LogCaptureFixture) -> None:
    async with serving(max_request_size=1000) as h:
        good, bad = await h.connect(), await h.connect()
        assert await h.round_trip(good, b"before") == b"erofeb"
        # The frame before the bad prefix is still answered, then the connection closes.
        await bad.send_all(frame(b"first") + struct.pack(">i", 5000) + b"x" * 100)
        assert await receive_frame(bad) == b"tsrif"
        await assert_closed(bad)
        assert await h.round_trip(good, b"after") == b"retfa"
        assert await h.round_trip(good, b"m" * 1000) == b"m" * 1000  # the limit itself is fine
        bad_port = bad.socket.getsockname()[1]
    (warning,) = _warnings(caplog)
    assert "5000" in warning and f"127.0.0.1:{bad_port}" in warning


@trio_test
async def test_negative_size_closes(caplog: pytest.LogCaptureFixture) -> None:
    async with serving() as h:
        stream = await h.connect()
        await stream.send_all(b"\xff\xff\xff\xfe" + b"junk")
        await assert_closed(stream)
        assert h.channel.queued == 0
    (warning,) = _warnings(caplog)
    assert "-2" in warning


@trio_test
async def test_truncated_frame_then_close(caplog: pytest.LogCaptureFixture) -> None:
    handled: list[bytes] = []

    async def respond(request: Request) -> Response:
        handled.append(request.frame)
        return await echo(request)

    async with serving(respond) as h:
        stream = await h.connect()
        await stream.send_all(frame(b"whole") + struct.pack(">i", 100) + b"only ten..")
        assert await receive_frame(stream) == b"elohw"
        await stream.send_eof()
        await assert_closed(stream)  # the server closes its end too
        await settle()
        assert h.server.connection_count == 0
    assert handled == [b"whole"]
    assert not _warnings(caplog)


@trio_test
async def test_garbage_never_hurts_the_server(caplog: pytest.LogCaptureFixture) -> None:
    rng = random.Random(2024)
    handled = 0

    async def respond(request: Request) -> Response:
        nonlocal handled
        handled += 1
        return await echo(request)

    async with serving(respond, max_request_size=4096, handlers=2,
                       listen_backlog_size=128) as h:
        async def spray(n: int) -> None:
            stream = await h.connect()
            blob = rng.randbytes(rng.randrange(1, 20000))
            if n % 3 == 0:  # small sizes: some real frames, then garbage
                blob = b"".join(frame(rng.randbytes(rng.randrange(0, 50))) for _ in range(5)) \
                    + blob
            await stream.send_all(blob)
            await stream.send_eof()
            # Whatever it answers, the server ends every one of these connections.
            await receive_until_closed(stream)

        async with trio.open_nursery() as nursery:
            for n in range(60):
                nursery.start_soon(spray, n)
        await settle()
        assert h.server.connection_count == 0
        healthy = await h.connect()
        assert await h.round_trip(healthy, b"ping") == b"gnip"
    assert handled > 20
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@trio_test
async def test_idle_connection_is_closed_but_not_while_a_request_is_in_flight() -> None:
    idle_ms = 300

    async def respond(request: Request) -> Response:
        if request.frame == b"slow":
            await trio.sleep(2 * idle_ms / 1000)  # the handler takes longer than the idle limit
        return SendResponse(request.frame)

    async with serving(respond, connections_max_idle_ms=idle_ms, handlers=2) as h:
        idle, slow = await h.connect(), await h.connect()

        async def idle_client() -> None:
            assert await h.round_trip(idle, b"one") == b"one"
            start = trio.current_time()
            await assert_closed(idle)
            assert idle_ms / 1000 * 0.9 <= trio.current_time() - start < 3

        async def slow_client() -> None:
            assert await h.round_trip(slow, b"slow") == b"slow"
            assert await h.round_trip(slow, b"still open") == b"still open"

        async with trio.open_nursery() as nursery:
            nursery.start_soon(idle_client)
            nursery.start_soon(slow_client)


@trio_test
async def test_a_reader_that_stalls_is_closed(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kafkapy.network")
    payload = b"z" * (16 << 20)

    async def respond(request: Request) -> Response:
        return SendResponse(payload)

    async with serving(respond, connections_max_idle_ms=200, send_buffer_bytes=4096) as h:
        stream = await h.connect()
        await stream.send_all(frame(b"give me a lot"))  # and never read it
        while h.server.connection_count:  # waiting for the timeout is the behaviour here
            await trio.sleep(0.05)
    assert any("read nothing for 200 ms" in r.getMessage() for r in caplog.records)
