"""The handler contract: what a request handler gets (``RequestContext``), what it is
(``Handler``) and how it defers its answer (``Parked``).

A leaf of the server package: the handler modules (:mod:`kafkapy.server.handlers`) import it,
and :mod:`kafkapy.server.kafka_apis`, which imports the handler modules to build its dispatch
table, builds the contexts. It imports nothing of the broker at run time (``KafkaApis`` and
``KafkaServer`` are named for the type checker only), so there is no import cycle to hide.

A handler module may also export ``FRAME_HANDLERS: {api_key: FrameHandler}``: called by
``KafkaApis.handle`` with the request's frame and decoded header, after the version check and
before the generic body decode, for an API's common case read straight from the frame (a
compiled decoder). It returns the answer (a ``Response``, or ``Parked`` whose ``finish()``
returns one and never raises: ``KafkaApis.run_handler`` or ``KafkaApis.frame_answer`` gives
both), or None, before changing any state, for "not the fast case": the generic path then
decodes and dispatches as usual. One that raises is answered as a handler that raised.

And ``NOW_HANDLERS: {api_key: NowHandler}``: ``handler(apis, frame, versions)`` called by
``KafkaApis.answer_now`` in the socket server's poll task with the whole frame (header
included, not yet decoded: the handler reads it, compiled) and the API's advertised
``versions``, before the request becomes a ``Request``, for an API's common case that needs
no wait at all (nothing parked, no quota throttle, no authorizer). It is synchronous: it
returns the finished answer (``SendResponse`` without file slices, ``NoResponse`` or
``CloseConnection``), the same bytes the frame handler and the generic handler would answer,
or None before changing any state (a header that does not decode, a version outside
``versions``, any request that is not its case); it raises only for a bug.

Contract (enforced by ``KafkaApis.handle``): ``await handler(context)`` returns the response
body (encoded by KafkaApis at the request's version), a channel ``Response`` itself
(``NoResponse`` for acks=0, ``SendResponse`` with file slices for Fetch), or ``Parked``. It may
raise a ``KafkaError`` (answered with the API's error response) or any exception (answered as
UNKNOWN_SERVER_ERROR).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, NoReturn, Protocol, TypeAlias, TypeVar

import attrs

from kafkapy.network.request_channel import Request, Response
from kafkapy.protocol.message_classes import RequestHeader
from kafkapy.protocol.schema import Versions

if TYPE_CHECKING:
    from kafkapy.server.kafka_apis import KafkaApis
    from kafkapy.server.kafka_server import KafkaServer

__all__ = ["Completion", "FrameHandler", "Handler", "NowHandler", "Parked", "RequestContext",
           "RequestTime"]

BodyT = TypeVar("BodyT")


@attrs.define
class RequestTime:
    """The request-time quota's bookkeeping of one request (``KafkaApis``): when its
    handler started (``time.perf_counter_ns()``), whether its time was recorded already
    (once: by the Fetch handler as it builds its answer, else by KafkaApis when the handler
    returns) and the request-time throttle it got."""

    started_ns: int = 0
    recorded: bool = False
    throttle_ms: int = 0


@attrs.frozen(eq=False)
class RequestContext(Generic[BodyT]):
    """What a handler gets: the decoded request and where it came from.

    ``header`` (api_key, api_version, correlation_id, client_id) and ``body`` are the decoded
    request: a handler declares the body it takes, ``RequestContext[ProduceRequest]`` (the
    generated class KafkaApis decodes the API's requests into); ``request`` is the channel's
    request (connection id, listener, client address, the frame); ``apis`` is the KafkaApis
    dispatching it (advertised versions, and the broker's components through ``server``);
    ``request_time`` the request-time quota's bookkeeping (``KafkaApis.record_request_time``).
    """

    header: RequestHeader
    body: BodyT
    request: Request
    apis: KafkaApis
    request_time: RequestTime = attrs.field(factory=RequestTime, kw_only=True)

    @property
    def api_key(self) -> int:
        return self.header.api_key

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def correlation_id(self) -> int:
        return self.header.correlation_id

    @property
    def client_id(self) -> str:
        """The client id, "" when the client sent null (as Kafka treats it)."""
        return self.header.client_id or ""

    @property
    def connection_id(self) -> str:
        return self.request.connection_id

    @property
    def principal(self) -> str:
        """Who sent the request: ``User:name`` (Kafka's ``KafkaPrincipal.toString()``),
        ``User:ANONYMOUS`` on an unauthenticated connection."""
        return self.request.principal

    @property
    def security_protocol(self) -> str:
        """The security protocol of the request's listener ("PLAINTEXT", "SSL", ...)."""
        return self.request.security_protocol

    @property
    def server(self) -> KafkaServer:
        return self.apis.server


Handler: TypeAlias = Callable[[RequestContext[Any]], Awaitable[object]]
"""``async def handler(context) -> response body | Response | Parked``; may raise (see the
module doc). A handler takes ``RequestContext[<its API's request class>]``."""


class Completion(Protocol):
    """What a ``Parked`` answer waits for: a delayed operation
    (:class:`kafkapy.common.purgatory.DelayedOperation`)."""

    async def wait(self) -> None: ...

    def check(self) -> None: ...

    def add_done_callback(self, callback: Callable[[], None]) -> None: ...


@attrs.frozen(eq=False)
class Parked:
    """A request whose answer waits (a DelayedFetch, an acks=all DelayedProduce).

    A handler returns ``Parked(finish)`` instead of waiting itself, so its handler task goes
    back to the queue (Kafka's handler threads never block on a delayed operation either: the
    purgatory sends the response). ``finish()`` is awaited in a task of its own and returns
    what the handler would have (a body or a Response; it may raise likewise). KafkaApis wraps
    it so that the pool's ``finish()`` always returns a Response.

    ``Parked.after(op, answer)`` is the common case, an answer built once a delayed operation
    has completed: then ``op`` and ``now`` are set, and the pool answers from ``op``'s done
    callback with ``now()`` (what ``finish()`` returns, without waiting) instead of a task:
    Kafka's purgatory sends the response from the completing thread likewise."""

    finish: Callable[[], Awaitable[Any]]
    op: Completion | None = None
    now: Callable[[], Any] | None = None

    @classmethod
    def after(cls, op: Completion, answer: Callable[[], Any]) -> Parked:
        """``answer()`` once ``op`` has completed (raising what its completion raised)."""
        async def finish() -> Any:
            await op.wait()
            return answer()

        def now() -> Any:
            op.check()
            return answer()
        return cls(finish, op, now)

    def then(self, after: Callable[[Callable[[], Any]], Any]) -> Parked:
        """This answer passed through ``after(get)``: ``get()`` returns it, or raises what
        finishing it raised."""
        inner, now = self.finish, self.now

        async def finish() -> Any:
            try:
                result = await inner()
            except Exception as exc:
                return after(_raising(exc))
            return after(lambda: result)
        return Parked(finish, self.op, None if now is None else (lambda: after(now)))


def _raising(exc: Exception) -> Callable[[], NoReturn]:
    def get() -> NoReturn:
        raise exc
    return get


FrameHandler: TypeAlias = Callable[["KafkaApis", Request, RequestHeader, int],
                                   Awaitable["Response | Parked | None"]]
"""``async def frame_handler(apis, request, header, body_offset) -> Response | Parked |
None`` (see the module doc); ``body_offset`` is where the body starts in ``request.frame``."""

NowHandler: TypeAlias = Callable[["KafkaApis", "bytes | bytearray", Versions],
                                 "Response | None"]
"""``def now_handler(apis, frame, versions) -> Response | None`` (see the module doc)."""
