"""KafkaRequestHandlerPool: N handler tasks draining the RequestChannel.

Kafka's ``KafkaRequestHandlerPool`` / ``KafkaRequestHandler`` (``num.io.threads``, default 8)
with Trio tasks instead of threads.

Theory of operation: each of the ``num_io_threads`` tasks loops ``receive_request`` -> ``await
apis.handle(request)`` -> ``send_response``. The pool is also the channel's ``InlineHandler``:
a connection task whose request finds a free slot and an empty queue runs it itself
(``handle_claimed``), or has it answered within its step when the API's common case allows
(``answer_now``: ``KafkaApis.answer_now``, no ``Request`` built), so ``num_io_threads`` is a
count of slots, held either by the handler tasks or by connection tasks, never more than that
many requests at once. Since a connection has at most one request in flight (muting), two
requests of one connection are never handled at once. A request whose answer waits on a
purgatory (a long-poll fetch, an acks=all produce) comes back as ``Parked`` and the slot is
freed, so a thousand parked fetches do not starve the produce that would complete them (Kafka's
handler threads hand delayed operations to the purgatory likewise). When it waits on a delayed
operation (``Parked.after``), the operation's done callback builds and delivers the answer, in
the task that completed it; otherwise its ``finish()`` is awaited in a task of its own under
the pool's nursery. Waits on a thread (an fsync) hold the slot, as they hold a Kafka handler
thread.

Every request is answered exactly once, or its connection would hang muted: ``apis.handle``
answers bad input and handler exceptions itself (``KafkaApis``). Should it still raise, or
return something that is not a channel response, the task logs one line and closes that
connection, and goes on with the next request: the broker never dies from one request (Kafka
logs "Exception when handling request" and also carries on, but leaves that request
unanswered). Cancellation (the broker stopping) ends the tasks; a request in progress then gets
no answer, which is fine since its connection is being closed too.

``run`` is a long-running task for the broker's nursery: ``await nursery.start(pool.run)``.
Everything runs on the broker's Trio event loop.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Protocol

import trio

from kafkapy.network.request_channel import (
    CloseConnection,
    NoResponse,
    Request,
    RequestChannel,
    Response,
    SendResponse,
)
from kafkapy.server.request_context import Parked

__all__ = ["KafkaRequestHandlerPool", "RequestHandler"]

log = logging.getLogger(__name__)


class RequestHandler(Protocol):
    """What the pool dispatches to (``KafkaApis``)."""

    async def handle(self, request: Request) -> Response | Parked: ...

    def answer_now(self, frame: bytes | bytearray) -> Response | None:
        """The request answered in the caller's step, or None (``KafkaApis.answer_now``)."""


class KafkaRequestHandlerPool:
    """``num_io_threads`` tasks answering ``channel``'s requests with ``apis.handle``.

    Raises:
        ValueError: ``num_io_threads`` is below 1.
    """

    def __init__(self, channel: RequestChannel, apis: RequestHandler,
                 num_io_threads: int = 8) -> None:
        if num_io_threads < 1:
            raise ValueError(f"num_io_threads must be at least 1, not {num_io_threads}")
        self._channel = channel
        self._apis = apis
        self._nursery: trio.Nursery | None = None
        self.num_io_threads = num_io_threads
        # The num_io_threads handler slots. A handler task takes one after it has received a
        # request, a connection task (inline) only when one is free and nothing is queued:
        # first come, first served (a released slot goes straight to the longest waiter).
        self._slots = trio.Semaphore(num_io_threads)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Run the handler tasks until cancelled; ``task_status.started()`` once they run."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            for index in range(self.num_io_threads):
                nursery.start_soon(self._handler_loop, index, name=f"kafka-request-handler-{index}")
            self._channel.serve_inline(self)
            try:
                task_status.started()
                await trio.sleep_forever()
            finally:
                self._channel.serve_inline(None)

    @property
    def waiting(self) -> int:
        """Requests taken off the channel by a handler task, waiting for a free slot."""
        return self._slots.statistics().tasks_waiting

    def claim_handler(self) -> bool:
        """``InlineHandler``: take a free slot for a connection task's request. A slot freed
        while a handler task waits goes to that task (Trio's Semaphore hands it over), so a
        request received earlier is never overtaken."""
        try:
            self._slots.acquire_nowait()
        except trio.WouldBlock:
            return False
        return True

    def answer_now(self, frame: bytes | bytearray, connection_id: str) -> Response | None:
        """``InlineHandler``: ``KafkaApis.answer_now`` when a handler slot is free (the
        request is handled as if in it, within the caller's step); None otherwise."""
        if not self._slots.value:
            return None
        try:
            return self._apis.answer_now(frame)
        except Exception:
            log.exception("Inline handler: unexpected error handling a request from %s; "
                          "closing the connection", connection_id)
            return CloseConnection()

    async def handle_claimed(self, request: Request) -> None:
        """``InlineHandler``: a connection task runs ``request`` in the slot it claimed."""
        try:
            response = await self._handle("Inline handler", request)
        finally:
            self._slots.release()
        if response is not None:
            await self._send(request, response, "Inline handler")

    async def _send_parked(self, request: Request, parked: Parked) -> None:
        try:
            response = await parked.finish()
        except Exception as exc:
            response = self._parked_failed(request, exc)
        self._deliver_parked(request, response)

    def _answer_parked(self, request: Request, now: Callable[[], Response]) -> None:
        """A parked request's delayed operation has completed: answer it now (in the task
        that completed the operation)."""
        try:
            response = now()
        except Exception as exc:
            response = self._parked_failed(request, exc)
        self._deliver_parked(request, response)

    @staticmethod
    def _parked_failed(request: Request, exc: Exception) -> Response:
        log.error("Unexpected error finishing a parked request from %s; closing the "
                  "connection", request.connection_id, exc_info=exc)
        return CloseConnection()

    def _deliver_parked(self, request: Request, response: Response) -> None:
        try:
            self._channel.deliver(request, response)
        except (RuntimeError, ValueError, TypeError):
            log.exception("Could not send the parked response to %r", request)

    async def _handler_loop(self, index: int) -> None:
        name = f"Handler {index}"
        while True:
            request = await self._channel.receive_request()
            try:
                self._slots.acquire_nowait()        # no pass through the scheduler if free
            except trio.WouldBlock:
                await self._slots.acquire()
            try:
                response = await self._handle(name, request)
            finally:
                self._slots.release()
            if response is not None:
                await self._send(request, response, name)
            # Hold no request while waiting for the next one (a produce can be 100 MiB).
            del request, response

    async def _send(self, request: Request, response: Response, who: str) -> None:
        try:
            await self._channel.send_response(request, response)
        except (RuntimeError, ValueError):
            # Answered already, or not from this channel: a bug elsewhere, logged here.
            log.exception("%s could not send the response to %r", who, request)

    async def _handle(self, who: str, request: Request) -> Response | None:
        try:
            response = await self._apis.handle(request)
            if isinstance(response, Parked):
                # The answer waits, and this handler takes the next request meanwhile: for a
                # delayed operation the operation's done callback answers (no task, no
                # scheduler pass between its completion and the answer), else a task of
                # its own waits for it.
                if response.op is not None and response.now is not None:
                    response.op.add_done_callback(
                        functools.partial(self._answer_parked, request, response.now))
                else:
                    assert self._nursery is not None
                    self._nursery.start_soon(self._send_parked, request, response)
                return None
        except Exception:
            log.exception("%s: unexpected error handling a request from %s; closing "
                          "the connection", who, request.connection_id)
            return CloseConnection()
        if not isinstance(response, SendResponse | NoResponse | CloseConnection):
            log.error("%s: %r is not a response (request from %s); closing the "
                      "connection", who, response, request.connection_id)
            return CloseConnection()
        return response
