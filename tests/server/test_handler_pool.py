"""KafkaRequestHandlerPool as the channel's InlineHandler, over real sockets: a request that
finds a free slot and an empty queue runs in its connection's task; ``num_io_threads`` bounds
the requests being handled at once, whoever runs them; a request waiting for a slot is served
before any later one; a connection that keeps sending does not hold the event loop; a request
parked on a delayed operation is answered by the operation's completion, with no task of its
own; a request its API answers at once (``answer_now``) is, in its place, never ahead of one
queued.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import attrs
import pytest
import trio

from kafkapy.common.purgatory import DelayedOperation
from kafkapy.network import Request, SendResponse
from kafkapy.server.handler_pool import KafkaRequestHandlerPool
from kafkapy.server.request_context import Parked
from tests.network.support import (
    Harness,
    frame,
    receive_frame,
    serving,
    settle,
    trio_test,
)


@attrs.define(eq=False)
class Manual(DelayedOperation):
    """A delayed operation completed by the test (``force_complete``)."""

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        pass


class RecordingApis:
    """Echoes each frame reversed, without yielding (as the produce path). Records which task
    handled what, in order, and how many requests were in ``handle`` at most; a frame
    starting with b"wait" waits for ``release``, one starting with b"park" is parked on a
    ``Manual`` operation (and answered b"late " + the frame); one starting with b"now" is
    answered in the caller's step (``answer_now``: b"now!" + the frame reversed)."""

    def __init__(self) -> None:
        self.release = trio.Event()
        self.handled: list[tuple[bytes, str]] = []
        self.inside = self.most_inside = 0
        # a frame starting with b"park" waits on one, by frame
        self.parked: dict[bytes, Manual] = {}
        self.now: list[bytes] = []      # the frames answered by answer_now, in order

    def answer_now(self, frame: bytes | bytearray) -> SendResponse | None:
        if not frame.startswith(b"now"):
            return None
        if frame == b"now-bug":
            raise RuntimeError("a bug in a now-handler")
        self.now.append(bytes(frame))
        return SendResponse(b"now!" + bytes(frame[::-1]))

    async def handle(self, request: Request) -> SendResponse | Parked:
        if request.frame.startswith(b"park"):
            op = Manual(1000)
            self.parked[bytes(request.frame)] = op
            return Parked.after(op, lambda: SendResponse(b"late " + bytes(request.frame)))
        self.inside += 1
        self.most_inside = max(self.most_inside, self.inside)
        try:
            self.handled.append((bytes(request.frame), trio.lowlevel.current_task().name))
            if request.frame.startswith(b"wait"):
                await self.release.wait()
            return SendResponse(bytes(request.frame[::-1]))
        finally:
            self.inside -= 1


@contextlib.asynccontextmanager
async def pool_serving(slots: int
                       ) -> AsyncIterator[tuple[Harness, RecordingApis, KafkaRequestHandlerPool]]:
    """A SocketServer whose channel is served by a pool of ``slots`` over RecordingApis."""
    apis = RecordingApis()
    async with serving(None) as h:
        pool = KafkaRequestHandlerPool(h.channel, apis, slots)
        await h.nursery.start(pool.run)
        yield h, apis, pool


@trio_test
async def test_a_request_with_a_free_slot_runs_in_its_connection_task() -> None:
    async with pool_serving(2) as (h, apis, _pool):
        client = await h.connect()
        assert await h.round_trip(client, b"hello") == b"olleh"
        [(payload, task)] = apis.handled
        assert payload == b"hello"
        assert not task.startswith("kafka-request-handler"), task
        assert h.channel.queued == 0


@trio_test
async def test_slots_bound_the_requests_in_handlers_whoever_runs_them() -> None:
    async with pool_serving(2) as (h, apis, pool):
        clients = [await h.connect() for _ in range(6)]
        for i, c in enumerate(clients):
            await c.send_all(frame(b"wait%d" % i))
        await settle()
        # Two are being handled; the other four wait (in the channel, or taken off it by a
        # handler task that waits for a slot) and none has been answered.
        assert apis.inside == 2
        assert h.channel.queued + pool.waiting == 4
        apis.release.set()
        for i, c in enumerate(clients):
            assert await receive_frame(c) == (b"wait%d" % i)[::-1]
        assert apis.most_inside == 2
        assert sorted(p for p, _ in apis.handled) == sorted(b"wait%d" % i for i in range(6))


@pytest.mark.parametrize("later", [b"second", b"now-late"])
@trio_test
async def test_a_request_waiting_for_a_slot_goes_before_later_ones(later: bytes) -> None:
    """Also for a request its API could answer at once (b"now-late"): with every slot taken
    and a request queued, it takes the queue too (first come, first served), and is then
    handled as any other."""
    async with pool_serving(1) as (h, apis, pool):
        holder, first, second = await h.connect(), await h.connect(), await h.connect()
        await holder.send_all(frame(b"wait"))
        await settle()
        await first.send_all(frame(b"first"))
        await settle()
        assert pool.waiting == 1
        await second.send_all(frame(later))
        await settle()
        # The second may not take the slot inline ahead of the first once it is freed.
        assert h.channel.queued == 1
        apis.release.set()
        assert await receive_frame(holder) == b"tiaw"
        assert await receive_frame(first) == b"tsrif"
        assert await receive_frame(second) == later[::-1]
        assert [p for p, _ in apis.handled] == [b"wait", b"first", later]
        assert apis.now == []


@trio_test
async def test_a_client_that_keeps_sending_does_not_hold_the_event_loop() -> None:
    """One connection has thousands of small requests ready in its socket (each answered
    inline without waiting); another connection's request is answered long before the first
    connection's last one."""
    count = 3000
    async with pool_serving(8) as (h, apis, _pool):
        busy, other = await h.connect(), await h.connect()
        burst = b"".join(frame(b"r%05d" % i) for i in range(count))

        async def send_burst() -> None:
            await busy.send_all(burst)

        async def drain() -> None:
            for i in range(count):
                assert await receive_frame(busy) == (b"r%05d" % i)[::-1]

        async with trio.open_nursery() as n:
            n.start_soon(drain)
            n.start_soon(send_burst)
            await trio.sleep(0)
            await other.send_all(frame(b"other"))
            assert await receive_frame(other) == b"rehto"
        order = [p for p, _ in apis.handled]
        assert order.index(b"other") < order.index(b"r%05d" % (count - 1))


@trio_test
async def test_a_parked_answer_is_sent_by_the_operations_completion() -> None:
    """``Parked.after``: the answer is built and handed to the connection by the delayed
    operation's done callback, in the task that completes it (no task waits for it: the
    pool's nursery holds its handler tasks only), and the frames behind it on the connection
    are served after it, in order."""
    async with pool_serving(2) as (h, apis, pool):
        client, other = await h.connect(), await h.connect()
        await client.send_all(frame(b"park-1") + frame(b"after"))
        await other.send_all(frame(b"park-2"))
        await settle()
        # The two connections' requests may be served in either order: by frame.
        first, second = apis.parked[b"park-1"], apis.parked[b"park-2"]
        assert pool._nursery is not None
        assert len(pool._nursery.child_tasks) == 2           # the two handler tasks
        assert [p for p, _ in apis.handled] == []            # "after" waits behind park-1
        second.force_complete()
        assert await receive_frame(other) == b"late park-2"
        first.force_complete()
        assert await receive_frame(client) == b"late park-1"
        assert await receive_frame(client) == b"retfa"
        assert [p for p, _ in apis.handled] == [b"after"]


@trio_test
async def test_a_request_answered_now_takes_no_handler_and_keeps_its_place() -> None:
    """``answer_now``: requests whose API answers them at once are answered within the
    connection's step, without a ``Request`` (``handle`` never sees them), in order with the
    connection's other requests, several per write."""
    async with pool_serving(2) as (h, apis, _pool):
        client = await h.connect()
        await client.send_all(frame(b"now-1") + frame(b"handled") + frame(b"now-2")
                              + frame(b"now-3"))
        assert await receive_frame(client) == b"now!1-won"
        assert await receive_frame(client) == b"deldnah"
        assert await receive_frame(client) == b"now!2-won"
        assert await receive_frame(client) == b"now!3-won"
        assert apis.now == [b"now-1", b"now-2", b"now-3"]
        assert [p for p, _ in apis.handled] == [b"handled"]


@trio_test
async def test_a_now_handler_that_raises_closes_only_its_connection(
        caplog: pytest.LogCaptureFixture) -> None:
    async with pool_serving(2) as (h, apis, _pool):
        client, other = await h.connect(), await h.connect()
        await client.send_all(frame(b"now-bug"))
        assert await client.receive_some(16) == b""        # closed, nothing answered
        assert await h.round_trip(other, b"now-ok") == b"now!ko-won"
        assert apis.now == [b"now-ok"] and apis.handled == []
    assert "unexpected error handling a request" in caplog.text
    assert "a bug in a now-handler" in caplog.text


@attrs.define
class Timed:
    """A RequestObserver noting (frame, ready_ns, sent_ns) of every answered request."""

    done: list[tuple[bytes, int, int]] = attrs.field(factory=list)

    def request_done(self, request: Request, ready_ns: int, sent_ns: int) -> None:
        self.done.append((bytes(request.frame), ready_ns, sent_ns))


# A Produce v0 request header (API key 0, version 0, correlation id 1, client id "") before
# the test's bytes: a frame the poll task serves, and whose answer a Produce after it holds.
PRODUCE_V0 = b"\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00"


@trio_test
async def test_held_answers_are_told_to_the_observer_when_they_are_written() -> None:
    """Three pipelined Produce requests in one write: the first two answers are held and go
    out in one send with the third, and the request metrics' observer hears of all three at
    that send (ResponseSendTimeMs ends when the answer is written, not when it is held)."""
    async with pool_serving(2) as (h, _apis, _pool):
        timed = Timed()
        h.channel.observer = timed
        client = await h.connect()
        frames = [PRODUCE_V0 + b"p%d" % i for i in range(3)]
        await client.send_all(b"".join(frame(f) for f in frames))
        for f in frames:
            assert await receive_frame(client) == f[::-1]
        await settle()
        assert [f for f, _, _ in timed.done] == frames
        (_, ready_0, sent_0), (_, ready_1, sent_1), (_, ready_2, sent_2) = timed.done
        assert ready_0 <= ready_1 <= ready_2 <= sent_0 == sent_1 == sent_2
