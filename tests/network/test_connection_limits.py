"""max.connections, max.connections.per.ip and its overrides: a connection over a limit is
closed right after accept, with a log line, and the others keep working."""

from __future__ import annotations

import logging
import sys

import pytest
import trio

from tests.network.support import (
    Harness,
    assert_closed,
    frame,
    receive_frame,
    serving,
    settle,
    trio_test,
)

# Linux routes all of 127.0.0.0/8 to loopback, so a client can come from 127.0.0.2.
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="needs 127.0.0.2 as a source address")


async def _accepted(h: Harness, local_host: str | None = None) -> trio.SocketStream:
    stream = await h.connect(local_host)
    assert await h.round_trip(stream, b"hi") == b"ih"
    return stream


async def _rejected(h: Harness, local_host: str | None = None) -> None:
    stream = await h.connect(local_host)
    await assert_closed(stream)


def _rejections(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "Rejected connection" in r.getMessage()]


@trio_test
async def test_max_connections(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kafkapy.network")
    async with serving(max_connections=3) as h:
        streams = [await _accepted(h) for _ in range(3)]
        await _rejected(h)
        assert h.server.connection_count == 3
        await streams[0].aclose()
        await settle()
        assert h.server.connection_count == 2
        await _accepted(h)  # room again
        for stream in streams[1:]:
            assert await h.round_trip(stream, b"ok") == b"ko"
    (line,) = _rejections(caplog)
    assert "maximum of 3 connections" in line


@linux_only
@trio_test
async def test_max_connections_per_ip_with_an_override(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kafkapy.network")
    async with serving(max_connections_per_ip=2,
                       max_connections_per_ip_overrides={"127.0.0.2": 3}) as h:
        for _ in range(2):
            await _accepted(h, "127.0.0.1")
        await _rejected(h, "127.0.0.1")
        for _ in range(3):
            await _accepted(h, "127.0.0.2")
        await _rejected(h, "127.0.0.2")
        assert h.server.connection_count == 5
    lines = _rejections(caplog)
    assert len(lines) == 2
    assert "127.0.0.1:" in lines[0] and "maximum of 2 connections" in lines[0]
    assert "127.0.0.2:" in lines[1] and "maximum of 3 connections" in lines[1]


@trio_test
async def test_override_by_host_name() -> None:
    async with serving(max_connections_per_ip=1,
                       max_connections_per_ip_overrides={"localhost": 2}) as h:
        await _accepted(h)
        await _accepted(h)
        await _rejected(h)


@trio_test
async def test_zero_means_no_connections_from_that_address() -> None:
    async with serving(max_connections_per_ip_overrides={"127.0.0.1": 0}) as h:
        await _rejected(h)
        assert h.server.connection_count == 0


@trio_test
async def test_listener_max_connections_makes_the_acceptor_wait() -> None:
    # listener.name.<l>.max.connections: Kafka's acceptor does not refuse the connection
    # over the listener's limit, it waits until one of the listener's connections closes.
    async with serving(max_connections_per_listener={"PLAINTEXT": 2}) as h:
        streams = [await _accepted(h) for _ in range(2)]
        waiting = await h.connect()          # the kernel completes the TCP handshake
        await waiting.send_all(frame(b"late"))
        with trio.move_on_after(0.5) as timer:
            await receive_frame(waiting)
        assert timer.cancelled_caught       # not served while the listener is full
        assert h.server.connection_count == 2
        await streams[0].aclose()
        with trio.fail_after(10):
            assert await receive_frame(waiting) == b"etal"
        assert h.server.connection_count == 2
