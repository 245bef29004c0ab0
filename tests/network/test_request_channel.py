"""RequestChannel and ConnectionLink without sockets: muting, back-pressure, response rules."""

from __future__ import annotations

import attrs
import pytest
import trio
import trio.testing

from kafkapy.network import (
    CloseConnection,
    ConnectionLink,
    NoResponse,
    Request,
    RequestChannel,
    SendResponse,
)
from tests.network.support import trio_test


@attrs.frozen
class Slice:
    fd: int
    position: int
    size: int


def _link(channel: RequestChannel, n: int = 0) -> ConnectionLink:
    return ConnectionLink(channel, f"conn-{n}", "PLAINTEXT", "127.0.0.1", 40000 + n)


def test_send_response_size_and_validation() -> None:
    response = SendResponse(b"head", [Slice(3, 0, 10), Slice(3, 50, 0)])
    assert response.size == 14
    assert isinstance(response.file_slices, tuple)
    assert SendResponse(b"abc").size == 3
    with pytest.raises(ValueError, match="INT32"):
        SendResponse(b"x", [Slice(3, 0, 2**31 - 1)])
    with pytest.raises(ValueError, match="invalid file slice"):
        SendResponse(b"", [Slice(3, -1, 5)])
    with pytest.raises(ValueError, match="invalid file slice"):
        SendResponse(b"", [Slice(3, 0, -5)])


def test_queued_max_requests_must_be_positive() -> None:
    with pytest.raises(ValueError):
        RequestChannel(0)


@trio_test
async def test_round_trip_carries_the_connection_details() -> None:
    channel = RequestChannel(4)
    link = _link(channel, 7)
    await link.submit(b"frame")
    assert link.in_flight and channel.queued == 1
    request = await channel.receive_request()
    assert (request.connection_id, request.listener_name, request.client_host,
            request.client_port, request.frame) == ("conn-7", "PLAINTEXT", "127.0.0.1", 40007,
                                                    b"frame")
    assert request.receive_time_ns > 0
    assert "<5 bytes>" in repr(request)
    await channel.send_response(request, NoResponse())
    assert await link.response() == NoResponse()
    assert not link.in_flight


@trio_test
async def test_a_link_is_muted_while_a_request_is_in_flight() -> None:
    channel = RequestChannel(4)
    link = _link(channel)
    with pytest.raises(RuntimeError, match="no request in flight"):
        await link.response()
    await link.submit(b"one")
    with pytest.raises(RuntimeError, match="already has a request in flight"):
        await link.submit(b"two")
    request = await channel.receive_request()
    await channel.send_response(request, CloseConnection())
    with pytest.raises(RuntimeError, match="already been answered"):
        await channel.send_response(request, NoResponse())
    assert isinstance(await link.response(), CloseConnection)
    with pytest.raises(RuntimeError, match="already been answered"):
        await channel.send_response(request, NoResponse())
    await link.submit(b"two")  # unmuted


@trio_test
async def test_bad_responses_are_refused() -> None:
    channel, other = RequestChannel(4), RequestChannel(4)
    link = _link(channel)
    await link.submit(b"x")
    request = await channel.receive_request()
    with pytest.raises(TypeError):
        await channel.send_response(request, b"not a response")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="did not come from this channel"):
        await other.send_response(request, NoResponse())
    stray = Request("c", "L", "h", 1, b"", 0)
    with pytest.raises(ValueError):
        await channel.send_response(stray, NoResponse())
    await channel.send_response(request, NoResponse())  # still answerable


@trio_test
async def test_a_response_for_a_closed_connection_is_dropped() -> None:
    channel = RequestChannel(4)
    link = _link(channel)
    await link.submit(b"x")
    request = await channel.receive_request()
    link.close()
    await channel.send_response(request, SendResponse(b"late"))  # no error
    with pytest.raises(RuntimeError, match="closed"):
        await link.submit(b"y")


@trio_test
async def test_cancelled_while_waiting_closes_the_link() -> None:
    channel = RequestChannel(4)
    link = _link(channel)
    await link.submit(b"x")
    request = await channel.receive_request()
    with trio.move_on_after(0):
        await link.response()
    await channel.send_response(request, SendResponse(b"late"))  # dropped, no error
    with pytest.raises(RuntimeError, match="closed"):
        await link.submit(b"y")


@trio_test
async def test_full_channel_blocks_submit_and_a_cancelled_submit_queues_nothing() -> None:
    channel = RequestChannel(1)
    first, second = _link(channel, 1), _link(channel, 2)
    await first.submit(b"1")
    assert channel.queued == 1
    async with trio.open_nursery() as nursery:
        nursery.start_soon(second.submit, b"2")
        await trio.testing.wait_all_tasks_blocked()
        assert channel.queued == 1 and second.in_flight  # waiting for room
        nursery.cancel_scope.cancel()
    assert not second.in_flight and channel.queued == 1
    assert (await channel.receive_request()).frame == b"1"
    assert channel.queued == 0
    await second.submit(b"2 again")
    assert (await channel.receive_request()).frame == b"2 again"


@trio_test
async def test_try_submit_queues_only_when_there_is_room() -> None:
    channel = RequestChannel(queued_max_requests=1)
    first = ConnectionLink(channel, "c1", "PLAINTEXT", "127.0.0.1", 1)
    second = ConnectionLink(channel, "c2", "PLAINTEXT", "127.0.0.1", 2)
    assert first.try_submit(b"one") and first.in_flight
    assert not second.try_submit(b"two")           # full: nothing queued, nothing in flight
    assert not second.in_flight and channel.queued == 1
    with pytest.raises(RuntimeError):
        first.try_submit(b"again")                  # muted until its response is taken
    request = await channel.receive_request()
    assert request.frame == b"one"
    await channel.send_response(request, NoResponse())
    assert await first.response() == NoResponse() and not first.in_flight
    assert second.try_submit(b"two") and channel.queued == 1


class _Inline:
    """An InlineHandler with ``free`` slots that answers b"inline" at once."""

    def __init__(self, channel: RequestChannel, free: int) -> None:
        self.channel, self.free = channel, free

    def claim_handler(self) -> bool:
        if not self.free:
            return False
        self.free -= 1
        return True

    async def handle_claimed(self, request: Request) -> None:
        self.free += 1
        await self.channel.send_response(request, SendResponse(b"inline"))

    def answer_now(self, frame: bytes | bytearray, connection_id: str) -> SendResponse | None:
        if not self.free or not frame.startswith(b"now"):
            return None
        return SendResponse(b"now " + connection_id.encode())


@trio_test
async def test_run_inline_only_with_a_free_slot_and_nothing_queued_ahead() -> None:
    channel = RequestChannel(1)
    first, second = _link(channel, 1), _link(channel, 2)
    assert not await first.run_inline(b"x")             # no inline handler registered
    assert not first.in_flight
    inline = _Inline(channel, 1)
    channel.serve_inline(inline)
    assert first.try_submit(b"queued")
    assert not await second.run_inline(b"later")        # one is queued ahead: the queue
    assert not second.in_flight and inline.free == 1
    async with trio.open_nursery() as nursery:          # one waits for room in the queue
        nursery.start_soon(second.submit, b"waiting")
        await trio.testing.wait_all_tasks_blocked()
        assert (await channel.receive_request()).frame == b"queued"
        await trio.testing.wait_all_tasks_blocked()
        assert channel.queued == 1                      # "waiting" got in
    third = _link(channel, 3)
    assert not await third.run_inline(b"later")
    assert (await channel.receive_request()).frame == b"waiting"
    assert await third.run_inline(b"now")               # nothing ahead, a free slot
    assert (await third.response()).payload == b"inline"  # type: ignore[union-attr]
    inline.free = 0
    assert not await third.run_inline(b"busy") and not third.in_flight


@trio_test
async def test_a_cancelled_submit_leaves_nothing_ahead_of_an_inline_request() -> None:
    channel = RequestChannel(1)
    channel.serve_inline(_Inline(channel, 1))
    first, second = _link(channel, 1), _link(channel, 2)
    assert first.try_submit(b"1")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(second.submit, b"2")
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert (await channel.receive_request()).frame == b"1"
    assert await second.run_inline(b"2 inline")
    assert (await second.response()).payload == b"inline"  # type: ignore[union-attr]


@attrs.define
class _Observer:
    done: list[Request]

    def request_done(self, request: Request, ready_ns: int, sent_ns: int) -> None:
        self.done.append(request)


@trio_test
async def test_answer_now_only_with_a_free_slot_nothing_queued_and_nothing_in_flight() -> None:
    channel = RequestChannel(1)
    first, second = _link(channel, 1), _link(channel, 2)
    assert first.answer_now(b"now") is None             # no inline handler registered
    inline = _Inline(channel, 1)
    channel.serve_inline(inline)
    before = second.last_request_ns
    answered = second.answer_now(b"now")
    assert answered is not None
    answer, request = answered
    assert isinstance(answer, SendResponse) and answer.payload == b"now " + \
        second.connection_id.encode()
    assert request is None                              # nothing is timed
    assert not second.in_flight and second.last_request_ns > before
    assert second.answer_now(b"not-now") is None        # not an API answered at once
    assert first.try_submit(b"queued")
    assert second.answer_now(b"now") is None            # one is queued ahead: the queue
    assert first.answer_now(b"now") is None             # its own request is in flight
    await channel.send_response(await channel.receive_request(), NoResponse())
    await first.response()
    inline.free = 0
    assert first.answer_now(b"now") is None             # no free slot
    inline.free = 1
    assert first.answer_now(b"now") is not None
    timed: list[Request] = []
    channel.observer = _Observer(timed)
    answered = first.answer_now(b"now")
    assert answered is not None and answered[1] is not None
    request = answered[1]
    assert request.frame == b"now" and request.connection_id == first.connection_id
    assert request.timings is not None and request.timings[:2] == [0, 0]
    received, handled, completed = request.timings[2:]
    assert request.receive_time_ns == received <= handled == completed
