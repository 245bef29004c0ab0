"""SocketServer over real sockets on 127.0.0.1: request/response flow, per-connection order
(muting), back-pressure, many connections, listeners, and the graceful stop."""

from __future__ import annotations

import random
import socket
import struct

import pytest
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
    socket_server,
)
from kafkapy.network.socket_server import CALM_READS, window_vote
from tests.network.support import (
    Harness,
    assert_closed,
    echo,
    frame,
    receive_frame,
    receive_until_closed,
    serving,
    settle,
    trio_test,
)


@trio_test
async def test_echo_and_request_details() -> None:
    seen: list[Request] = []

    async def respond(request: Request) -> Response:
        seen.append(request)
        return await echo(request)

    async with serving(respond) as h:
        assert h.port != 0
        assert h.server.bound_endpoints[0].name == "PLAINTEXT"
        stream = await h.connect()
        assert await h.round_trip(stream, b"hello") == b"olleh"
        assert await h.round_trip(stream, b"") == b""
        client_host, client_port = stream.socket.getsockname()[:2]
        request = seen[0]
        assert request.listener_name == "PLAINTEXT"
        assert (request.client_host, request.client_port) == (client_host, client_port)
        assert request.connection_id.startswith(f"127.0.0.1:{h.port}-127.0.0.1:{client_port}-")
        assert request.frame == b"hello"
        assert 0 < request.receive_time_ns <= seen[1].receive_time_ns
        assert h.server.connection_count == 1


@trio_test
async def test_accepted_sockets_options() -> None:
    async with serving(send_buffer_bytes=8192) as h:
        stream = await h.connect()
        assert await h.round_trip(stream, b"x") == b"x"
        (conn,) = h.server._connections  # the accepted socket itself
        assert conn.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        assert conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
        assert conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) >= 8192


@trio_test
async def test_no_response_and_close_connection() -> None:
    async with serving() as h:
        stream = await h.connect()
        await stream.send_all(frame(b"noresp-1") + frame(b"abc") + frame(b"noresp-2")
                              + frame(b"def"))
        assert await receive_frame(stream) == b"cba"
        assert await receive_frame(stream) == b"fed"
        await stream.send_all(frame(b"close-now") + frame(b"never handled"))
        await assert_closed(stream)
        assert h.channel.queued == 0
        other = await h.connect()
        assert await h.round_trip(other, b"still up") == b"pu llits"


@trio_test
async def test_pipelined_frames_come_back_in_order_while_handlers_reorder() -> None:
    connections, per_connection = 8, 60
    rng = random.Random(1234)
    busy: set[str] = set()
    received: list[Request] = []
    answered: list[Request] = []

    async def respond(request: Request) -> Response:
        # One connection never has two requests in the handlers at once.
        assert request.connection_id not in busy
        busy.add(request.connection_id)
        received.append(request)
        for _ in range(rng.randrange(6)):
            await trio.lowlevel.checkpoint()
        busy.discard(request.connection_id)
        answered.append(request)
        return await echo(request)

    async def client(h: object, n: int) -> None:
        assert hasattr(h, "connect")
        stream = await h.connect()
        payloads = [f"c{n}-m{i}-".encode() * rng.randrange(1, 50) for i in range(per_connection)]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stream.send_all, b"".join(frame(p) for p in payloads))
            for payload in payloads:
                assert await receive_frame(stream) == payload[::-1]

    async with serving(respond, handlers=2, queued_max_requests=4) as h:
        async with trio.open_nursery() as nursery:
            for n in range(connections):
                nursery.start_soon(client, h, n)
    assert len(answered) == connections * per_connection
    # The two handlers did answer out of the order they received in.
    assert [r.frame for r in received] != [r.frame for r in answered]


@trio_test
async def test_next_frame_waits_for_the_previous_response() -> None:
    async with serving(None) as h:  # the test is the handler
        a, b = await h.connect(), await h.connect()
        await a.send_all(frame(b"a1") + frame(b"a2"))
        await b.send_all(frame(b"b1"))
        first = await h.channel.receive_request()
        second = await h.channel.receive_request()
        by_frame = {bytes(first.frame): first, bytes(second.frame): second}
        assert set(by_frame) == {b"a1", b"b1"}
        await settle()
        assert h.channel.queued == 0  # a2 is held back: a1 has no response yet
        # Answer across connections out of order: b first.
        await h.channel.send_response(by_frame[b"b1"], SendResponse(b"B1"))
        assert await receive_frame(b) == b"B1"
        await settle()
        assert h.channel.queued == 0
        await h.channel.send_response(by_frame[b"a1"], SendResponse(b"A1"))
        assert await receive_frame(a) == b"A1"
        a2 = await h.channel.receive_request()
        assert a2.frame == b"a2"
        await h.channel.send_response(a2, SendResponse(b"A2"))
        assert await receive_frame(a) == b"A2"


PRODUCE_KEY = b"\x00\x00"   # a frame starting with API key 0 is a Produce to the server


@trio_test
async def test_answers_held_for_a_following_produce_go_out_in_order() -> None:
    async with serving(None) as h:  # the test is the handler
        stream = await h.connect()
        frames = [PRODUCE_KEY + b"p1", PRODUCE_KEY + b"p2", PRODUCE_KEY + b"p3"]
        await stream.send_all(b"".join(frame(f) for f in frames))
        for f in frames:
            request = await h.channel.receive_request()
            assert request.frame == f
            await settle()
            if f != frames[-1]:
                # Held: the next request (a Produce, already read) is handled first ...
                with trio.move_on_after(0.05):
                    await receive_frame(stream)
                    raise AssertionError(f"the answer to {f!r} was written before the next one")
            await h.channel.send_response(request, SendResponse(b"A" + f[2:]))
        # ... and then every answer arrives, in request order.
        assert [await receive_frame(stream) for _ in frames] == [b"Ap1", b"Ap2", b"Ap3"]


def produce_v0(n: int) -> bytes:
    """A Produce v0 request header (correlation id ``n``): one the poll task serves itself."""
    return PRODUCE_KEY + struct.pack(">hih", 0, n, 0)


async def answer(h: Harness, f: bytes) -> None:
    """As the handler: take the next request (``f``) and answer it with ``A`` + its id."""
    request = await h.channel.receive_request()
    assert request.frame == f
    await settle()
    await h.channel.send_response(request, SendResponse(b"A" + f[4:8]))
    await settle()


async def window_reads(h: Harness, stream: trio.SocketStream, reads: range) -> None:
    """A client with 3 requests in flight, each read of 3 answered with the first held."""
    for read in reads:
        frames = [produce_v0(read * 10 + i) for i in range(3)]
        await stream.send_all(b"".join(frame(f) for f in frames))
        await answer(h, frames[0])
        with trio.move_on_after(0.05):  # held for the next one's answer
            await receive_frame(stream)
            raise AssertionError(f"read {read}: the first answer was not held")
        for f in frames[1:]:
            await answer(h, f)
        assert [await receive_frame(stream) for _ in frames] == [b"A" + f[4:8] for f in frames]


@trio_test
async def test_a_client_that_waits_at_its_window_gets_the_first_answer_of_a_read_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that keeps 3 small Produce requests in flight and sends another only when an
    answer comes (a fixed window, as a Java producer's 5) is learnt within CALM_READS reads
    of 3 frames: then the first answer of a read goes out at once, before the next request
    is handled, and the client's next request overlaps the others; before that it is held
    like the others."""
    # This client runs in the server's own thread: it cannot send between a send of the
    # server and its next poll. The probe's timing guard (PROBE_S, for clients in other
    # processes), which a slow machine would trip, is off.
    monkeypatch.setattr(socket_server, "PROBE_S", 3600.0)
    async with serving(None) as h:  # the test is the handler
        stream = await h.connect()
        await window_reads(h, stream, range(CALM_READS))
        frames = [produce_v0(90 + i) for i in range(3)]
        await stream.send_all(b"".join(frame(f) for f in frames))
        await answer(h, frames[0])
        # Learnt: written at once, the next request still unanswered; the client sends its
        # next request (its window has room), read after these are answered.
        with trio.fail_after(5):
            assert await receive_frame(stream) == b"A" + frames[0][4:8]
        refill = produce_v0(99)
        await stream.send_all(frame(refill))
        for f in frames[1:]:
            await answer(h, f)
        assert [await receive_frame(stream) for _ in frames[1:]] == \
            [b"A" + f[4:8] for f in frames[1:]]
        await answer(h, refill)
        assert await receive_frame(stream) == b"A" + refill[4:8]


@trio_test
async def test_no_early_answer_while_another_connection_sends(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The early answer goes only to a connection that alone had frames in the last
    CALM_READS polls: with another connection's requests to serve, the broker is busy anyway
    and the early answer would only add a send (and a wake-up of the client) per read."""
    monkeypatch.setattr(socket_server, "PROBE_S", 3600.0)
    async with serving(None) as h:  # the test is the handler
        a, b = await h.connect(), await h.connect()
        await window_reads(h, a, range(CALM_READS))     # learnt, as in the test above
        await b.send_all(frame(produce_v0(50)))         # ... but now another one sends
        await answer(h, produce_v0(50))
        assert await receive_frame(b) == b"A" + produce_v0(50)[4:8]
        await window_reads(h, a, range(60, 61))         # held: not alone in the last polls


def test_window_vote_finds_a_client_that_waits_and_not_one_that_sends_as_batches_fill(
        ) -> None:
    """The vote over a client's requests in flight after each read: a fixed window leads by
    CALM_READS after as many reads and keeps its lead through a few other numbers (a read
    split by the client's turnaround); numbers that vary (librdkafka sending as its batches
    fill) never lead by CALM_READS; and a client that stops waiting loses the lead."""
    def run(seen: list[int], window: int = 0, lead: int = 0) -> list[tuple[int, int]]:
        steps = []
        for in_flight in seen:
            window, lead = window_vote(window, lead, in_flight)
            steps.append((window, lead))
        return steps

    def waits(steps: list[tuple[int, int]], seen: list[int]) -> list[bool]:
        return [w == n and lead >= CALM_READS for (w, lead), n in zip(steps, seen, strict=True)]

    fixed = [5] * (CALM_READS + 4)
    assert waits(run(fixed), fixed) == [False] * (CALM_READS - 1) + [True] * 5
    split = [5] * CALM_READS * 2 + [2, 5, 3, 5, 5]
    assert waits(run(split), split)[-5:] == [False, True, False, True, True]
    rng = random.Random(7)
    varying = [rng.randint(1, 12) for _ in range(2000)]
    assert not any(waits(run(varying), varying))
    stops = [5] * CALM_READS * 3 + [rng.randint(6, 40) for _ in range(CALM_READS + 1)]
    assert waits(run(stops), stops)[-1] is False
    assert run(stops)[-1][1] < CALM_READS     # the lead lost: a window must win it back


@trio_test
async def test_an_answer_is_not_held_behind_a_request_that_may_wait() -> None:
    # A Produce followed by a Fetch (which may wait for data): the Produce's answer goes out
    # before the Fetch is answered.
    async with serving(None) as h:
        stream = await h.connect()
        await stream.send_all(frame(PRODUCE_KEY + b"p1") + frame(b"\x00\x01fetch"))
        produce = await h.channel.receive_request()
        await h.channel.send_response(produce, SendResponse(b"produced"))
        assert await receive_frame(stream) == b"produced"
        fetch = await h.channel.receive_request()
        assert fetch.frame == b"\x00\x01fetch"
        await h.channel.send_response(fetch, SendResponse(b"fetched"))
        assert await receive_frame(stream) == b"fetched"


@trio_test
async def test_held_answers_are_written_before_a_close() -> None:
    async with serving(None) as h:
        stream = await h.connect()
        await stream.send_all(frame(PRODUCE_KEY + b"p1") + frame(PRODUCE_KEY + b"close"))
        first = await h.channel.receive_request()
        await h.channel.send_response(first, SendResponse(b"one"))
        second = await h.channel.receive_request()
        await h.channel.send_response(second, CloseConnection())
        assert await receive_until_closed(stream) == frame(b"one")


@trio_test
async def test_back_pressure_bounded_queue_loses_nothing() -> None:
    connections, per_connection = 6, 40
    peak = 0

    async def respond(request: Request) -> Response:
        return SendResponse(request.frame)

    async def slow_handler(channel: RequestChannel) -> None:
        nonlocal peak
        while True:
            # Let every connection run as far as it can before each request is taken.
            await trio.testing.wait_all_tasks_blocked()
            peak = max(peak, channel.queued)
            request = await channel.receive_request()
            await channel.send_response(request, await respond(request))

    async def client(stream: trio.SocketStream, n: int) -> None:
        payloads = [f"{n}:{i}".encode() for i in range(per_connection)]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stream.send_all, b"".join(frame(p) for p in payloads))
            for payload in payloads:
                assert await receive_frame(stream) == payload

    async with serving(None, queued_max_requests=1) as h:
        streams = [await h.connect() for _ in range(connections)]
        h.nursery.start_soon(slow_handler, h.channel)
        async with trio.open_nursery() as nursery:
            for n, stream in enumerate(streams):
                nursery.start_soon(client, stream, n)
    assert peak == 1


@trio_test
async def test_a_waiting_connection_stops_reading_its_socket() -> None:
    gate = trio.Event()
    count = 2048

    async def respond(request: Request) -> Response:
        await gate.wait()
        return SendResponse(request.frame)

    async with serving(respond, receive_buffer_bytes=4096) as h:
        stream = await h.connect()
        stream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        payloads = [i.to_bytes(4, "big") * 256 for i in range(count)]  # 1 KiB each
        sent = trio.Event()

        async def send() -> None:
            await stream.send_all(b"".join(frame(p) for p in payloads))
            sent.set()

        h.nursery.start_soon(send)
        await settle()
        # 2 MiB do not fit the socket buffers and the server is not reading: the client waits.
        assert not sent.is_set()
        assert h.channel.queued == 0  # the one request is in the handler, the rest unread
        gate.set()
        for payload in payloads:
            assert await receive_frame(stream) == payload
        await sent.wait()


@trio_test
async def test_two_hundred_concurrent_connections() -> None:
    connections = 200
    rng = random.Random(99)

    async def client(h: object, n: int) -> None:
        assert hasattr(h, "connect")
        stream = await h.connect()
        payloads = [rng.randbytes(rng.randrange(0, 3000)) for _ in range(5)]
        await stream.send_all(b"".join(frame(p) for p in payloads))
        for payload in payloads:
            assert await receive_frame(stream) == payload[::-1]

    async with serving(handlers=4, queued_max_requests=64, listen_backlog_size=512) as h:
        async with trio.open_nursery() as nursery:
            for n in range(connections):
                nursery.start_soon(client, h, n)
        assert h.server.connection_count == connections


@trio_test
async def test_connections_sharing_the_receive_buffer_keep_their_own_bytes() -> None:
    # Every connection receives into the server's one buffer: frames bigger than it (2.5 MiB),
    # frames cut at random bytes (inside the size prefix too) and sent in pieces by several
    # clients at once must each come back whole to their own client.
    rng = random.Random(7)

    async def client(h: object, n: int) -> None:
        assert hasattr(h, "connect")
        stream = await h.connect()
        payloads = [bytes([n]) * rng.randrange(0, 2000) for _ in range(4)]
        payloads.insert(2, rng.randbytes(5 * (1 << 19)))
        data = b"".join(frame(p) for p in payloads)
        cuts = sorted(rng.sample(range(1, len(data)), 40))
        async with trio.open_nursery() as nursery:
            async def reader() -> None:
                for payload in payloads:
                    assert await receive_frame(stream) == payload[::-1]
            nursery.start_soon(reader)
            for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
                await stream.send_all(data[start:end])
                await trio.sleep(0)

    async with serving(handlers=2, max_request_size=8 << 20) as h:
        async with trio.open_nursery() as nursery:
            for n in range(8):
                nursery.start_soon(client, h, n)


@trio_test
async def test_several_listeners_and_all_interfaces() -> None:
    listeners = (("INTERNAL", "127.0.0.1", 0), ("EXTERNAL", "", 0))
    seen: list[str] = []

    async def respond(request: Request) -> Response:
        seen.append(request.listener_name)
        return NoResponse() if request.frame == b"noresp" else SendResponse(b"ok")

    async with serving(respond, listeners=listeners) as h:
        internal, external = h.server.bound_endpoints
        assert (internal.name, external.name, external.host) == ("INTERNAL", "EXTERNAL", "")
        assert internal.port != external.port and external.port != 0
        for port in (internal.port, external.port):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            h.streams.append(stream)
            await stream.send_all(frame(b"hi"))
            assert await receive_frame(stream) == b"ok"
    assert seen == ["INTERNAL", "EXTERNAL"]


def test_settings_are_checked() -> None:
    channel = RequestChannel(1)
    with pytest.raises(ValueError, match="unique"):
        SocketServer(channel, [("A", "127.0.0.1", 0), ("A", "127.0.0.1", 0)])
    with pytest.raises(ValueError, match="port"):
        SocketServer(channel, [("A", "127.0.0.1", 70000)])
    with pytest.raises(ValueError):
        SocketServer(channel, [("A", "127.0.0.1", 0)], max_request_size=-1)
    with pytest.raises(ValueError):
        SocketServer(channel, [("A", "127.0.0.1", 0)], send_buffer_bytes=0)
    with pytest.raises(ValueError):
        SocketServer(channel, [("A", "127.0.0.1", 0)], max_connections_per_ip_overrides={"x": -1})


@trio_test
async def test_bind_failure_raises_from_run() -> None:
    async with serving() as h:
        taken = h.port
        server = SocketServer(RequestChannel(1), [("PLAINTEXT", "127.0.0.1", taken)])
        with pytest.raises(OSError):
            await server.run()
        with pytest.raises(RuntimeError):
            await server.run()


@trio_test
async def test_stop_accepting_finishes_in_flight_requests_then_closes() -> None:
    async with serving(None) as h:
        idle = await h.connect()
        await idle.send_all(frame(b"idle-1"))
        request = await h.channel.receive_request()
        await h.channel.send_response(request, SendResponse(b"ok"))
        assert await receive_frame(idle) == b"ok"

        busy = await h.connect()
        await busy.send_all(frame(b"in-flight") + frame(b"not yet handed over"))
        in_flight = await h.channel.receive_request()
        assert in_flight.frame == b"in-flight"
        await settle()

        await h.server.stop_accepting()
        with pytest.raises(OSError):
            await trio.open_tcp_stream("127.0.0.1", h.port)
        await assert_closed(idle)
        assert not h.stopped.is_set()  # busy still has its request in the handler

        await h.channel.send_response(in_flight, SendResponse(b"done"))
        assert await receive_frame(busy) == b"done"
        await assert_closed(busy)
        await h.stopped.wait()  # run returned: every connection closed
        assert h.channel.queued == 0 and h.server.connection_count == 0


@trio_test
async def test_stop_accepting_with_only_idle_connections_ends_run() -> None:
    """The idle connections close at once and ``run`` returns (the poll task ends with the
    last connection, however its closing is scheduled)."""
    async with serving() as h:
        streams = [await h.connect() for _ in range(3)]
        for i, stream in enumerate(streams):
            assert await h.round_trip(stream, b"hello %d" % i) == (b"hello %d" % i)[::-1]
        await h.server.stop_accepting()
        for stream in streams:
            await assert_closed(stream)
        with trio.fail_after(30):   # a bound, not a timing: it hung before the fix
            await h.stopped.wait()
        assert h.server.connection_count == 0


@trio_test
async def test_stop_accepting_while_blocked_on_a_full_channel() -> None:
    async with serving(None, queued_max_requests=1) as h:
        first, second = await h.connect(), await h.connect()
        await first.send_all(frame(b"queued"))
        await settle()
        await second.send_all(frame(b"waiting for room"))
        await settle()
        assert h.channel.queued == 1
        await h.server.stop_accepting()
        # The waiting request never reached the channel; the queued one is in flight.
        await assert_closed(second)
        request = await h.channel.receive_request()
        assert request.frame == b"queued"
        await h.channel.send_response(request, SendResponse(b"answered"))
        assert await receive_frame(first) == b"answered"
        await assert_closed(first)
        await h.stopped.wait()
        assert h.channel.queued == 0


@trio_test
async def test_stop_accepting_before_run_and_twice() -> None:
    server = SocketServer(RequestChannel(1), [("PLAINTEXT", "127.0.0.1", 0)])
    await server.stop_accepting()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
    assert server.connection_count == 0
    await server.stop_accepting()


@trio_test
async def test_cancelling_run_closes_everything_and_late_responses_are_dropped() -> None:
    channel = RequestChannel(4)
    server = SocketServer(channel, [("PLAINTEXT", "127.0.0.1", 0)])
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        stream = await trio.open_tcp_stream("127.0.0.1", server.bound_endpoints[0].port)
        async with stream:
            await stream.send_all(frame(b"x"))
            request = await channel.receive_request()
            nursery.cancel_scope.cancel()
    assert server.connection_count == 0
    await channel.send_response(request, SendResponse(b"too late"))  # dropped quietly
