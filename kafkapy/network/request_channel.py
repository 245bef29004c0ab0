"""RequestChannel: the bounded queue between connection tasks and request handler tasks.

Kafka's ``RequestChannel`` with Trio tasks instead of threads.

Theory of operation:

- Each connection task (the Processor role, ``kafkapy.network.socket_server``) owns one
  ``ConnectionLink``. ``submit(frame)`` wraps a frame (request header + body, no size prefix) in
  a ``Request`` and puts it on the channel; ``response()`` then waits for that request's
  ``Response``. Handler tasks call ``RequestChannel.receive_request()`` and, when done,
  ``RequestChannel.send_response(request, response)``, which hands the response straight back
  to the request's own link (``Request._link``), never through a shared queue. An owner
  that must not wait on one connection (the selector's poll task) asks instead to be called
  when the answer arrives (``notify``), and then takes it from ``response()`` at once.
- Muting, as in Kafka: a link holds at most one request in flight. ``submit`` refuses a second
  one until ``response()`` has returned the first's answer; the connection task writes that
  answer before it submits the next frame. So responses go out in request order and a
  connection never has two requests in the handlers at once, without any reordering buffer.
- Inline handling: when a handler is free and no request is queued ahead, the connection task
  runs the request itself (``ConnectionLink.run_inline``, through the ``InlineHandler`` that
  the handler pool registers): the same handler code and the same bound of ``num.io.threads``
  requests in the handlers at once, without the two hand-overs between tasks (queue, then
  response) that a Trio scheduler pass each costs. Kafka's Processor threads never run a
  request; on one event loop a handler "thread" is only a slot, and whichever task holds it
  makes no difference to the client. Otherwise the request takes the queue, first come,
  first served.
- Back-pressure: the queue is a Trio memory channel of ``queued_max_requests`` slots
  (Kafka's ``queued.max.requests``). When it is full, ``submit`` waits, so the connection task
  stops reading its socket and TCP flow control pushes back on the client; nothing is buffered
  beyond the queue and the frames each connection has already read.
- Request metrics: with a ``RequestObserver`` set (``RequestChannel.observer``, the broker's
  metrics), each ``Request`` carries a ``timings`` list for the handlers to mark when they
  took it, finished locally and completed it, and the connection task reports every answer
  it writes (``response_done``). Without one, ``timings`` is None and nothing is timed.
- Responses: ``SendResponse`` (payload, plus file slices the connection task sends after it
  with ``os.sendfile``), ``NoResponse`` (write nothing and carry on, for acks=0 produce),
  ``CloseConnection``. A response for a connection that has gone away is dropped.

Who calls what: ``receive_request`` and ``send_response`` from handler tasks (any number of
them); a ``ConnectionLink`` from the one connection task that owns it. Everything runs on the
broker's Trio event loop; nothing here is thread-safe.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Protocol, TypeAlias

import attrs
import trio

__all__ = [
    "CloseConnection",
    "ConnectionLink",
    "FileSliceLike",
    "InlineHandler",
    "NoResponse",
    "Request",
    "RequestChannel",
    "RequestObserver",
    "Response",
    "SendResponse",
]

log = logging.getLogger(__name__)

INT32_MAX = 2**31 - 1


class FileSliceLike(Protocol):
    """``size`` bytes of the open file ``fd`` from ``position`` (the log's ``FileSlice``)."""

    @property
    def fd(self) -> int: ...

    @property
    def position(self) -> int: ...

    @property
    def size(self) -> int: ...


def _frame_repr(frame: bytes | bytearray) -> str:
    return f"<{len(frame)} bytes>"


@attrs.frozen(eq=False)
class Request:
    """One request frame read from a connection, on its way to a handler.

    ``frame`` is the request header and body without the 4-byte size prefix. ``receive_time_ns`` is
    ``time.monotonic_ns()`` when the frame was handed to the channel (for request latency, like
    Kafka's ``startTimeNanos``). ``timings``, when the channel has an observer, is ``[variant,
    throttle]`` for the handlers to fill in: ``timings[0]`` an integer the handler may set for
    the observer (which request metrics a Fetch counts in, consumer or follower), ``timings[1]``
    the throttle time (ms) the request got (``throttle``: Kafka's ``apiThrottleTimeMs``), then
    the handlers' later timestamps (``time.monotonic_ns()``: taken by a handler, handler
    returned, answer complete; Kafka's ``requestDequeueTimeNanos``,
    ``apiLocalCompleteTimeNanos``, ``responseCompleteTimeNanos``). ``principal`` is the
    connection's (Kafka's ``KafkaPrincipal.toString()``, ``User:ANONYMOUS`` unless
    authenticated) and ``security_protocol`` its listener's. Equality is identity.
    """

    connection_id: str
    listener_name: str
    client_host: str
    client_port: int
    frame: bytes | bytearray = attrs.field(repr=_frame_repr)
    receive_time_ns: int
    principal: str = attrs.field(default="User:ANONYMOUS", kw_only=True)
    security_protocol: str = attrs.field(default="PLAINTEXT", kw_only=True)
    _link: ConnectionLink | None = attrs.field(default=None, kw_only=True, repr=False)
    timings: list[int] | None = attrs.field(default=None, kw_only=True, repr=False)

    def throttle(self, throttle_time_ms: int) -> None:
        """Mute the connection for ``throttle_time_ms`` once this request's answer is
        written (a client quota's throttle, KIP-219: the answer goes out at once, then the
        connection reads nothing until the time is over)."""
        if self.timings is not None and throttle_time_ms > self.timings[1]:
            self.timings[1] = throttle_time_ms
        if self._link is not None and throttle_time_ms > 0:
            self._link.throttled_until = max(self._link.throttled_until,
                                             trio.current_time() + throttle_time_ms / 1000)


def _slices(value: Sequence[FileSliceLike | bytes]) -> tuple[FileSliceLike | bytes, ...]:
    return tuple(value)


def _part_size(piece: FileSliceLike | bytes) -> int:
    return len(piece) if isinstance(piece, bytes) else piece.size


@attrs.frozen(eq=False)
class SendResponse:
    """Write ``payload`` and then every part of ``file_slices``, as one size-prefixed
    response frame.

    ``payload`` is the start of the response (header, body up to the first record set);
    ``file_slices`` holds what follows in order: file slices, sent with ``os.sendfile`` (zero
    copy), and ``bytes`` between them (the fields after one partition's records and before the
    next one's, as Kafka's MultiRecordsSend). The connection writes the 4-byte size prefix
    itself, covering everything (``size``). Files must stay open until the response is written.

    Raises:
        ValueError: a slice with a negative position or size, or a total size above
            2**31 - 1 bytes (it would not fit the INT32 size prefix).
    """

    payload: bytes
    file_slices: tuple[FileSliceLike | bytes, ...] = attrs.field(default=(), converter=_slices)

    def __attrs_post_init__(self) -> None:
        if not self.file_slices:        # most answers: no slice to check
            if len(self.payload) > INT32_MAX:
                raise ValueError(f"response of {len(self.payload)} bytes does not fit an "
                                 f"INT32 size")
            return
        for piece in self.file_slices:
            if isinstance(piece, bytes):
                continue
            if piece.position < 0 or piece.size < 0:
                raise ValueError(f"invalid file slice: position {piece.position}, "
                                 f"size {piece.size}")
        if self.size > INT32_MAX:
            raise ValueError(f"response of {self.size} bytes does not fit an INT32 size")

    @property
    def size(self) -> int:
        """The value of the size prefix: payload plus slices."""
        return len(self.payload) + sum(_part_size(piece) for piece in self.file_slices)


@attrs.frozen
class NoResponse:
    """Write nothing; the connection reads its next request (acks=0 produce)."""


@attrs.frozen
class CloseConnection:
    """Write nothing and close the connection."""


Response: TypeAlias = SendResponse | NoResponse | CloseConnection


class InlineHandler(Protocol):
    """What runs a request in the connection's own task (the handler pool)."""

    def claim_handler(self) -> bool:
        """Take a free handler slot (True), or False if all ``num.io.threads`` are busy."""

    async def handle_claimed(self, request: Request) -> None:
        """Handle ``request`` in the claimed slot, answer it through the channel's
        ``send_response`` (now, or later for a parked request) and free the slot, even if
        cancelled."""

    def answer_now(self, frame: bytes | bytearray, connection_id: str) -> Response | None:
        """The request in ``frame`` answered within the caller's step, if a handler slot is
        free and the request is one its API answers that way (``KafkaApis.answer_now``);
        None, with nothing changed, otherwise. ``connection_id`` names the connection in
        the log line of an unexpected error (answered ``CloseConnection``)."""


class RequestObserver(Protocol):
    """Told of every answered request (the broker's request metrics)."""

    def request_done(self, request: Request, ready_ns: int, sent_ns: int) -> None:
        """``request``'s response reached its connection task at ``ready_ns`` and was
        written (or dropped, for ``NoResponse``) by ``sent_ns`` (``time.monotonic_ns()``)."""


class RequestChannel:
    """The bounded queue of requests to the handlers, and the way back for their responses.

    ``RequestChannel(queued_max_requests=500)``: at most that many requests wait for a
    handler; a connection with a request to queue waits while the queue is full.

    Raises:
        ValueError: ``queued_max_requests`` is below 1 (Kafka requires at least 1).
    """

    def __init__(self, queued_max_requests: int = 500) -> None:
        if queued_max_requests < 1:
            raise ValueError(f"queued_max_requests must be at least 1, not {queued_max_requests}")
        self.queued_max_requests = queued_max_requests
        self._send, self._receive = trio.open_memory_channel[Request](queued_max_requests)
        self._inline: InlineHandler | None = None
        # Told of every answered request by the connection tasks (None: nothing is timed).
        self.observer: RequestObserver | None = None
        # Requests sent, or waiting for room, and not yet received: what run_inline must
        # not overtake (``queued`` builds trio's statistics object: too slow for every
        # request).
        self._pending = 0

    def serve_inline(self, handler: InlineHandler | None) -> None:
        """Let connections run their requests through ``handler`` when it has a free slot and
        nothing is queued (None: every request takes the queue)."""
        self._inline = handler

    @property
    def queued(self) -> int:
        """Requests waiting for a handler right now (never above ``queued_max_requests``)."""
        return self._send.statistics().current_buffer_used

    async def receive_request(self) -> Request:
        """The next request, waiting for one if the queue is empty (handler tasks)."""
        request = await self._receive.receive()
        self._pending -= 1
        return request

    async def send_response(self, request: Request, response: Response) -> None:
        """Queue ``response`` back to ``request``'s connection, which writes it and then reads
        its next request. Dropped (logged at debug) if the connection has closed meanwhile.

        Raises:
            TypeError: ``response`` is not a ``SendResponse``, ``NoResponse`` or
                ``CloseConnection``.
            ValueError: ``request`` did not come from this channel.
            RuntimeError: ``request`` has already been answered.
        """
        # No checkpoint here: the handler's next receive_request yields to the connection
        # task just woken (one scheduler pass per request saved).
        self.deliver(request, response)

    def deliver(self, request: Request, response: Response) -> None:
        """``send_response`` from synchronous code (a delayed operation's done callback);
        the same errors."""
        if not isinstance(response, SendResponse | NoResponse | CloseConnection):
            raise TypeError(f"not a response: {response!r}")
        link = request._link
        if link is None or link._channel is not self:
            raise ValueError(f"{request!r} did not come from this channel")
        link._deliver(request, response)


class ConnectionLink:
    """One connection's end of a ``RequestChannel``: at most one request in flight.

    Used only by the task that owns the connection: ``await submit(frame)`` then
    ``await response()``, over and over; ``close()`` when the connection goes away.

    ``principal`` is who the connection authenticated as, in Kafka's ``KafkaPrincipal``
    form ``User:name`` (``User:ANONYMOUS`` until an authentication says otherwise: TLS
    client certificates, SASL); ``security_protocol`` is its listener's ("PLAINTEXT",
    "SSL", "SASL_PLAINTEXT", "SASL_SSL"). Both are copied into every ``Request``.
    """

    __slots__ = ("_channel", "_closed", "_in_flight", "_notify", "_response", "_waiter",
                 "client_host", "client_port", "connection_id", "last_request_ns",
                 "listener_name", "principal", "security_protocol", "throttled_until")

    def __init__(self, channel: RequestChannel, connection_id: str, listener_name: str,
                 client_host: str, client_port: int, *, security_protocol: str = "PLAINTEXT",
                 principal: str = "User:ANONYMOUS") -> None:
        self._channel = channel
        self.connection_id = connection_id
        self.listener_name = listener_name
        self.client_host = client_host
        self.client_port = client_port
        self.security_protocol = security_protocol
        # Kafka's KafkaPrincipal.toString() of the connection: from the client certificate (SSL)
        # at accept, or set by the connection's authenticator (SASL) once it completes; copied
        # into every Request.
        self.principal = principal
        self._in_flight: Request | None = None
        self._response: Response | None = None
        # The connection task parked in ``response()``, rescheduled by ``_deliver``: the
        # hand-back is a direct wake-up, not a trio.Event per request.
        self._waiter: trio.lowlevel.Task | None = None
        # Or, instead of a waiting task, what to call when the response arrives (``notify``).
        self._notify: Callable[[], None] | None = None
        self._closed = False
        # Trio time until which the connection reads no request (a quota throttle), 0: none.
        self.throttled_until = 0.0
        # time.monotonic_ns() of the last request (of the connection's opening until one):
        # how recently the connection was active, which picks the one to close when the
        # broker is over max.connections (Kafka's least recently used channel).
        self.last_request_ns = time.monotonic_ns()

    @property
    def in_flight_request(self) -> Request | None:
        """The request submitted and not yet answered, if any."""
        return self._in_flight

    @property
    def answered(self) -> bool:
        """The in-flight request's response has arrived: ``response()`` returns it without
        waiting (the selector's poll task takes it there, and hands a request whose answer
        must be waited for to a task of its own)."""
        return self._response is not None

    @property
    def in_flight(self) -> bool:
        """A request was submitted and its response not yet taken (the connection is muted)."""
        return self._in_flight is not None

    def _new_request(self, frame: bytes | bytearray) -> Request:
        if self._closed:
            raise RuntimeError(f"connection {self.connection_id} is closed")
        if self._in_flight is not None:
            raise RuntimeError(f"connection {self.connection_id} already has a request in "
                               f"flight")
        self.last_request_ns = now = time.monotonic_ns()
        return Request(self.connection_id, self.listener_name, self.client_host,
                       self.client_port, frame, now, link=self,
                       principal=self.principal, security_protocol=self.security_protocol,
                       timings=None if self._channel.observer is None else [0, 0])

    def try_submit(self, frame: bytes | bytearray) -> bool:
        """Queue ``frame`` as this connection's next request if the channel has room now (True);
        False, and nothing queued, if it is full (then ``await submit(frame)``). The fast path
        of every request: no wait, no trip through the scheduler.

        Raises:
            RuntimeError: a request is already in flight (muting), or the link is closed.
        """
        request = self._new_request(frame)
        self._in_flight = request         # before the channel can hand it to a handler
        try:
            self._channel._send.send_nowait(request)
        except trio.WouldBlock:
            self._in_flight = None
            return False
        self._channel._pending += 1     # no handler runs before this task yields
        return True

    def answer_now(self, frame: bytes | bytearray) -> tuple[Response, Request | None] | None:
        """The request in ``frame`` answered at once by the inline handler
        (``InlineHandler.answer_now``): then nothing is in flight and the caller writes the
        answer, and tells the channel's observer of the returned ``Request`` if there is one
        (made for it, with its marks: received, handled and completed). None, with nothing
        changed but the connection's ``last_request_ns``, when it is not such a request, when
        no handler slot is free or when requests wait in the queue (first come, first
        served): then ``run_inline`` or ``submit`` it."""
        channel = self._channel
        inline = channel._inline
        if inline is None or channel._pending or self._in_flight is not None or self._closed:
            return None
        self.last_request_ns = received = time.monotonic_ns()
        response = inline.answer_now(frame, self.connection_id)
        if response is None:
            return None
        if channel.observer is None:
            return response, None
        done = time.monotonic_ns()
        return response, Request(self.connection_id, self.listener_name, self.client_host,
                                 self.client_port, frame, received, principal=self.principal,
                                 security_protocol=self.security_protocol,
                                 timings=[0, 0, received, done, done])

    async def run_inline(self, frame: bytes | bytearray) -> bool:
        """Run ``frame`` as this connection's next request in the calling task, if a handler
        slot is free and no request waits in the queue (the queue is first come, first
        served): True, and ``response()`` then returns its answer (at once, or when a parked
        request completes). False, with nothing in flight, otherwise: submit it instead.

        Raises:
            RuntimeError: a request is already in flight (muting), or the link is closed.
        """
        channel = self._channel
        inline = channel._inline
        if inline is None or channel._pending:
            return False
        request = self._new_request(frame)      # raises before a slot is taken
        if not inline.claim_handler():
            return False
        self._in_flight = request
        await inline.handle_claimed(request)
        return True

    async def submit(self, frame: bytes | bytearray) -> None:
        """Queue ``frame`` as this connection's next request, waiting while the channel is full.
        If cancelled, the request was not queued (Trio memory channels are cancel-safe).

        Raises:
            RuntimeError: a request is already in flight (muting), or the link is closed.
        """
        request = self._new_request(frame)
        self._in_flight = request
        try:
            # Counted before the send: a handler may receive it before this task resumes.
            self._channel._pending += 1
            await self._channel._send.send(request)
        except BaseException:
            self._channel._pending -= 1
            self._in_flight = None
            raise

    async def response(self) -> Response:
        """Wait for the in-flight request's response and unmute. If cancelled, the link is
        closed: the connection is going away, and the late response will be dropped.

        Raises:
            RuntimeError: no request is in flight.
        """
        if self._in_flight is None:
            raise RuntimeError(f"connection {self.connection_id} has no request in flight")
        if self._response is None:
            self._waiter = trio.lowlevel.current_task()

            def abort(_: object) -> trio.lowlevel.Abort:
                self._waiter = None
                return trio.lowlevel.Abort.SUCCEEDED

            try:
                await trio.lowlevel.wait_task_rescheduled(abort)
            except BaseException:
                self.close()
                raise
        response = self._response
        assert response is not None
        self._in_flight = self._response = None
        return response

    def notify(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` (once, in the task that delivers it) when the in-flight
        request's response arrives; ``response()`` then returns it without waiting. For an
        owner that serves many connections and must not wait on one (the selector's poll
        task).

        Raises:
            RuntimeError: no request is in flight, or its response is already here.
        """
        if self._in_flight is None or self._response is not None:
            raise RuntimeError(f"connection {self.connection_id}: nothing to wait for")
        self._notify = callback

    def close(self) -> None:
        """Mark the connection gone: responses still to come are dropped."""
        self._closed = True
        self._in_flight = self._response = None
        self._notify = None

    def _deliver(self, request: Request, response: Response) -> None:
        if request is not self._in_flight or self._response is not None:
            if self._closed:
                log.debug("Dropping the response to %r: connection %s is closed",
                          request, self.connection_id)
                return
            raise RuntimeError(f"{request!r} has already been answered")
        self._response = response
        waiter, self._waiter = self._waiter, None
        if waiter is not None:
            trio.lowlevel.reschedule(waiter)
        notify, self._notify = self._notify, None
        if notify is not None:
            notify()
