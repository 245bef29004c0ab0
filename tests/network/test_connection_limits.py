"""The connection limits of the acceptor, as Kafka's ConnectionQuotas: at ``max.connections``
(broker-wide) or a listener's limit the acceptor waits for a connection to close; the
protected inter-broker listener may go over ``max.connections``, and then the least recently
active connection of another listener is closed; a connection over ``max.connections.per.ip``
(or its override) is closed right after accept, with Kafka's log line, and the others keep
working. Every limit changes live (``update_connection_limits``)."""

from __future__ import annotations

import logging
import sys

import pytest
import trio

from kafkapy.network import RequestChannel, SocketServer
from kafkapy.network.socket_server import INT32_MAX
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


async def _held(h: Harness, port: int | None = None) -> trio.SocketStream:
    """A connection the kernel completed, with a request sent, that the broker does not
    serve (its acceptor waits for a slot): no answer within half a second."""
    if port is None:
        stream = await h.connect()
    else:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        h.streams.append(stream)
    await stream.send_all(frame(b"late"))
    with trio.move_on_after(0.5) as timer:
        await receive_frame(stream)
    assert timer.cancelled_caught       # not served while the broker is full
    return stream


async def _served_now(stream: trio.SocketStream) -> None:
    """The held connection's request gets its answer (bounded wait)."""
    with trio.fail_after(5):
        assert await receive_frame(stream) == b"etal"


@trio_test
async def test_max_connections_makes_the_acceptor_wait(caplog: pytest.LogCaptureFixture
                                                       ) -> None:
    caplog.set_level(logging.INFO, logger="kafkapy.network")
    async with serving(max_connections=3) as h:
        streams = [await _accepted(h) for _ in range(3)]
        waiting = await _held(h)
        assert h.server.connection_count == 3
        await streams[0].aclose()
        await _served_now(waiting)          # the slot freed went to the held connection
        assert h.server.connection_count == 3
        for stream in streams[1:]:
            assert await h.round_trip(stream, b"ok") == b"ko"
    assert _rejections(caplog) == []        # nobody was refused


@trio_test
async def test_protected_listener_exceeds_and_the_oldest_other_connection_closes(
        caplog: pytest.LogCaptureFixture) -> None:
    # Kafka's protectedListener: the inter-broker listener of a broker with several listeners
    # is not held at max.connections; the broker then closes its lowest-priority connection
    # on another listener (closeExcessConnections), the least recently active idle one.
    caplog.set_level(logging.INFO, logger="kafkapy.network")
    async with serving(max_connections=2, inter_broker_listener="INTERNAL",
                       listeners=(("PLAINTEXT", "127.0.0.1", 0),
                                  ("INTERNAL", "127.0.0.1", 0))) as h:
        internal_port = h.server.bound_endpoints[1].port
        first = await _accepted(h)
        second = await _accepted(h)
        assert await h.round_trip(first, b"again") == b"niaga"   # first: the most recent now
        inter_broker = await trio.open_tcp_stream("127.0.0.1", internal_port)
        h.streams.append(inter_broker)
        with trio.fail_after(5):
            assert await h.round_trip(inter_broker, b"broker") == b"rekorb"
        with trio.fail_after(5):
            await assert_closed(second)    # the least recently active one
        assert await h.round_trip(first, b"still") == b"llits"
        assert h.server.connection_count == 2
        # The other listener is still held at max.connections.
        waiting = await _held(h)
        await inter_broker.aclose()
        await _served_now(waiting)
    closed = [r.getMessage() for r in caplog.records
              if "more than max.connections=2" in r.getMessage()]
    assert len(closed) == 1 and "listener PLAINTEXT" in closed[0]


@trio_test
async def test_inter_broker_listener_alone_is_not_protected() -> None:
    async with serving(max_connections=1, inter_broker_listener="PLAINTEXT") as h:
        first = await _accepted(h)
        waiting = await _held(h)
        await first.aclose()
        await _served_now(waiting)


@trio_test
async def test_raising_max_connections_wakes_the_acceptor() -> None:
    async with serving(max_connections=1) as h:
        first = await _accepted(h)
        waiting = await _held(h)
        h.server.update_connection_limits(max_connections=2, max_connections_per_ip=INT32_MAX,
                                          max_connections_per_ip_overrides={},
                                          max_connections_per_listener={})
        await _served_now(waiting)
        assert await h.round_trip(first, b"ab") == b"ba"
        assert h.server.connection_count == 2


@trio_test
async def test_lowering_max_connections_closes_the_least_recently_active() -> None:
    # Kafka's processors close excess connections whenever the broker is over
    # max.connections, a lowered limit included.
    async with serving() as h:
        streams = [await _accepted(h) for _ in range(3)]
        assert await h.round_trip(streams[0], b"xy") == b"yx"
        h.server.update_connection_limits(max_connections=2, max_connections_per_ip=INT32_MAX,
                                          max_connections_per_ip_overrides={},
                                          max_connections_per_listener={})
        with trio.fail_after(5):
            await assert_closed(streams[1])
        await settle()
        assert h.server.connection_count == 2
        for stream in (streams[0], streams[2]):
            assert await h.round_trip(stream, b"ok") == b"ko"
        await _held(h)


@trio_test
async def test_raising_a_listener_limit_wakes_its_acceptor() -> None:
    async with serving(max_connections_per_listener={"PLAINTEXT": 1}) as h:
        first = await _accepted(h)
        waiting = await _held(h)
        h.server.update_connection_limits(max_connections=INT32_MAX,
                                          max_connections_per_ip=INT32_MAX,
                                          max_connections_per_ip_overrides={},
                                          max_connections_per_listener={"PLAINTEXT": 3})
        await _served_now(waiting)
        # Lowered below the open connections: they stay (only the broker-wide limit closes).
        h.server.update_connection_limits(max_connections=INT32_MAX,
                                          max_connections_per_ip=INT32_MAX,
                                          max_connections_per_ip_overrides={},
                                          max_connections_per_listener={"PLAINTEXT": 1})
        assert await h.round_trip(first, b"ab") == b"ba"
        assert h.server.connection_count == 2
        await _held(h)


@trio_test
async def test_per_ip_limit_and_overrides_change_live(caplog: pytest.LogCaptureFixture
                                                      ) -> None:
    caplog.set_level(logging.INFO, logger="kafkapy.network")
    async with serving(max_connections_per_ip=1) as h:
        first = await _accepted(h)
        await _rejected(h)
        h.server.update_connection_limits(max_connections=INT32_MAX, max_connections_per_ip=1,
                                          max_connections_per_ip_overrides={"127.0.0.1": 2},
                                          max_connections_per_listener={})
        second = await _accepted(h)
        await _rejected(h)
        # Lowered: the open connections stay, a new one is refused.
        h.server.update_connection_limits(max_connections=INT32_MAX, max_connections_per_ip=1,
                                          max_connections_per_ip_overrides={},
                                          max_connections_per_listener={})
        await _rejected(h)
        for stream in (first, second):
            assert await h.round_trip(stream, b"ok") == b"ko"
        # A host name is resolved in the background; the new limit holds once it is.
        h.server.update_connection_limits(max_connections=INT32_MAX, max_connections_per_ip=1,
                                          max_connections_per_ip_overrides={"localhost": 3},
                                          max_connections_per_listener={})
        await settle()
        await _accepted(h)
    assert _rejections(caplog) == [
        f"Rejected connection from /127.0.0.1, address already has the configured maximum "
        f"of {n} connections." for n in (1, 2, 1)]


def test_negative_limits_are_refused() -> None:
    server = SocketServer(RequestChannel(1), [("PLAINTEXT", "127.0.0.1", 0)])
    with pytest.raises(ValueError, match="negative"):
        server.update_connection_limits(max_connections=-1, max_connections_per_ip=1,
                                        max_connections_per_ip_overrides={},
                                        max_connections_per_listener={})
    with pytest.raises(ValueError, match="negative"):
        server.update_connection_limits(max_connections=1, max_connections_per_ip=1,
                                        max_connections_per_ip_overrides={},
                                        max_connections_per_listener={"PLAINTEXT": -1})


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
    assert _rejections(caplog) == [
        "Rejected connection from /127.0.0.1, address already has the configured maximum of 2 "
        "connections.",
        "Rejected connection from /127.0.0.2, address already has the configured maximum of 3 "
        "connections."]


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
