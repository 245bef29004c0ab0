"""Test support for the network layer: a SocketServer on 127.0.0.1 (port 0) with handler tasks
the test chooses, and a small client speaking size-prefixed frames over real sockets."""

from __future__ import annotations

import functools
import struct
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import attrs
import trio
import trio.testing

from kafkapy.network import (
    CloseConnection,
    NoResponse,
    Request,
    RequestChannel,
    Response,
    SendResponse,
    SocketServer,
)

TEST_TIMEOUT = 10.0

Respond = Callable[[Request], Awaitable[Response]]


def trio_test(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test under ``trio.run`` with a hard time limit (pytest fixtures pass)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        async def main() -> None:
            with trio.fail_after(TEST_TIMEOUT):
                await fn(*args, **kwargs)

        trio.run(main)

    return wrapper


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


async def echo(request: Request) -> Response:
    """The default handler: ``noresp...`` -> NoResponse, ``close...`` -> CloseConnection,
    anything else -> the frame reversed."""
    if request.frame.startswith(b"noresp"):
        return NoResponse()
    if request.frame.startswith(b"close"):
        return CloseConnection()
    return SendResponse(request.frame[::-1])


async def handler_task(channel: RequestChannel, respond: Respond) -> None:
    while True:
        request = await channel.receive_request()
        await channel.send_response(request, await respond(request))
        del request  # hold nothing while waiting (the memory tests count what stays alive)


async def settle() -> None:
    """Wait until every task is blocked (loopback I/O included) for a moment."""
    await trio.testing.wait_all_tasks_blocked(cushion=0.02)


async def receive_exactly(stream: trio.SocketStream, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = await stream.receive_some(size - len(data))
        if not chunk:
            raise EOFError(f"closed after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


async def receive_frame(stream: trio.SocketStream) -> bytes:
    (size,) = struct.unpack(">i", await receive_exactly(stream, 4))
    return await receive_exactly(stream, size)


async def receive_until_closed(stream: trio.SocketStream) -> bytes:
    """Everything until the server closes (end of stream or reset)."""
    data = bytearray()
    while True:
        try:
            chunk = await stream.receive_some(65536)
        except trio.BrokenResourceError:
            return bytes(data)
        if not chunk:
            return bytes(data)
        data += chunk


async def assert_closed(stream: trio.SocketStream) -> None:
    """The server closed the connection without sending anything more."""
    assert await receive_until_closed(stream) == b""


@attrs.define
class Harness:
    server: SocketServer
    channel: RequestChannel
    port: int
    nursery: trio.Nursery
    stopped: trio.Event
    streams: list[trio.SocketStream] = attrs.field(factory=list)

    async def connect(self, local_host: str | None = None) -> trio.SocketStream:
        stream = await trio.open_tcp_stream("127.0.0.1", self.port, local_address=local_host)
        self.streams.append(stream)
        return stream

    async def round_trip(self, stream: trio.SocketStream, payload: bytes) -> bytes:
        await stream.send_all(frame(payload))
        return await receive_frame(stream)


@asynccontextmanager
async def serving(respond: Respond | None = echo, *, handlers: int = 1,
                  queued_max_requests: int = 16,
                  listeners: tuple[tuple[str, str, int], ...] = (("PLAINTEXT", "127.0.0.1", 0),),
                  **settings: Any) -> AsyncIterator[Harness]:
    """A running SocketServer with ``handlers`` tasks answering with ``respond`` (none if
    ``respond`` is None: the test answers from the channel itself)."""
    channel = RequestChannel(queued_max_requests)
    server = SocketServer(channel, listeners, **settings)
    stopped = trio.Event()

    async def run_server(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                         ) -> None:
        await server.run(task_status=task_status)
        stopped.set()

    async with trio.open_nursery() as nursery:
        await nursery.start(run_server)
        if respond is not None:
            for _ in range(handlers):
                nursery.start_soon(handler_task, channel, respond)
        harness = Harness(server, channel, server.bound_endpoints[0].port, nursery, stopped)
        try:
            yield harness
        finally:
            for stream in harness.streams:
                stream.socket.close()
            nursery.cancel_scope.cancel()
