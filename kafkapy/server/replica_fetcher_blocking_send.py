"""ReplicaFetcherBlockingSend: a follower fetcher's connection to its leader (Kafka's
``ReplicaFetcherBlockingSend``: one request at a time, wait for its answer).

Theory of operation
-------------------
- One TCP connection (TCP_NODELAY), opened on the first request and again after any failure.
  ``await request(api_key, version, body)`` sends one request and returns the decoded response
  body. Exactly one task uses it (the fetcher's loop): a second concurrent caller is a bug and
  raises RuntimeError.
- The socket is used directly, non-blocking, the way the broker's own ``SocketServer`` serves
  its connections: ``send`` and ``recv_into`` first, waiting for the socket (an await, hence a
  pass through the scheduler) only when the kernel has no room or no bytes. A caught-up
  follower does one fetch per appended message, so the passes through Trio's scheduler that a
  ``SocketStream`` adds to every send and receive, and a ``Lock``'s, were a large part of what
  replication cost per message. A task that never had to wait for 5 ms yields anyway, so that
  a leader answering faster than it is read cannot keep the event loop to this task.
- With ``authenticate`` (a SASL inter-broker listener) a new connection authenticates first,
  as ``BrokerConnection``'s do.
- The response is received into one buffer: up to 64 KiB in the first ``recv_into`` (a
  caught-up follower's whole answer), the rest of a larger one into a buffer of its size.
- Any failure (refused, reset, end of stream, an answer that does not decode or does not
  answer the request, no answer within ``timeout_s``) closes the connection and raises
  ``BrokerNotAvailableError`` naming the peer, as ``BrokerConnection`` does: the fetcher
  backs off ``replica.fetch.backoff.ms``. Cancelled mid-request, the connection is closed (it
  may hold half a frame).

Runs on the broker's event loop.
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from typing import Any

import trio

from kafkapy.clients.network_client import Authenticate, authenticate_on
from kafkapy.errors import BrokerNotAvailableError, KafkaError
from kafkapy.protocol import Request, RequestHeader, decode_response, encode_request

__all__ = ["ReplicaFetcherBlockingSend"]

_SIZE = struct.Struct(">i")
_MAX_RESPONSE = 1 << 31
_FIRST_READ = 65536
# The longest this connection's task runs without a pass through the scheduler.
_TURN_S = 0.005


class ReplicaFetcherBlockingSend:
    """See the module docstring."""

    def __init__(self, host: str, port: int, *, client_id: str, timeout_s: float,
                 ssl_context: ssl.SSLContext | None = None,
                 authenticate: Authenticate | None = None) -> None:
        self.host = host
        self._authenticate = authenticate
        self.port = port
        # The inter-broker listener is SSL: the socket is a non-blocking ssl.SSLSocket, whose
        # want-read / want-write map to the same waits as EAGAIN.
        self.ssl_context = ssl_context
        self.client_id = client_id
        self.timeout_s = timeout_s
        self._sock: socket.socket | None = None
        self._correlation_id = 0
        self._busy = False
        self._scratch = bytearray(_FIRST_READ)
        self._turn = time.perf_counter()

    def __repr__(self) -> str:
        return f"ReplicaFetcherBlockingSend({self.host}:{self.port})"

    async def request(self, api_key: int, version: int, body: Any) -> Any:
        """Send one request and return its response body. Raises BrokerNotAvailableError."""
        if self._busy:
            raise RuntimeError(f"{self!r}: one request at a time")
        self._busy = True
        try:
            try:
                with trio.fail_after(self.timeout_s):
                    if self._sock is None:
                        self._sock = await self._connect()
                        if self._authenticate is not None:
                            await authenticate_on(self._authenticate, self._exchange)
                    response_body = await self._exchange(api_key, version, body)
            except (OSError, trio.TooSlowError, ValueError, EOFError, KafkaError) as e:
                self._close()
                raise BrokerNotAvailableError(
                    f"broker at {self.host}:{self.port}: {type(e).__name__}: {e}") from e
            except BaseException:
                self._close()
                raise
            if time.perf_counter() - self._turn > _TURN_S:
                await trio.lowlevel.checkpoint()
                self._turn = time.perf_counter()
            return response_body
        finally:
            self._busy = False

    async def _exchange(self, api_key: int, version: int, body: Any) -> Any:
        """One request and its response body on the open socket."""
        assert self._sock is not None
        self._correlation_id = (self._correlation_id + 1) & 0x7FFFFFFF
        corr = self._correlation_id
        frame = encode_request(Request(
            RequestHeader(api_key=api_key, api_version=version, correlation_id=corr,
                          client_id=self.client_id), body))
        await self._send_all(self._sock, _SIZE.pack(len(frame)) + frame)
        data = await self._receive_frame(self._sock)
        response = decode_response(api_key, version, data)
        if response.header.correlation_id != corr:
            raise ValueError(f"correlation id {response.header.correlation_id} "
                             f"answers no request (sent {corr})")
        return response.body

    async def _connect(self) -> socket.socket:
        stream = await trio.open_tcp_stream(self.host, self.port)   # TCP_NODELAY set
        sock = socket.socket(fileno=stream.socket.detach())
        sock.setblocking(False)
        if self.ssl_context is None:
            return sock
        try:
            tls = self.ssl_context.wrap_socket(sock, server_hostname=self.host,
                                               do_handshake_on_connect=False)
        except BaseException:
            sock.close()
            raise
        try:
            while True:
                try:
                    tls.do_handshake()
                    return tls
                except ssl.SSLWantReadError:
                    await self._wait(trio.lowlevel.wait_readable, tls)
                except ssl.SSLWantWriteError:
                    await self._wait(trio.lowlevel.wait_writable, tls)
        except BaseException:
            tls.close()
            raise

    async def _send_all(self, sock: socket.socket, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                sent = sock.send(view)
            except (BlockingIOError, ssl.SSLWantWriteError):
                await self._wait(trio.lowlevel.wait_writable, sock)
                continue
            except ssl.SSLWantReadError:
                await self._wait(trio.lowlevel.wait_readable, sock)
                continue
            view = view[sent:]

    async def _recv_into(self, sock: socket.socket, view: memoryview) -> int:
        while True:
            try:
                n = sock.recv_into(view)
            except (BlockingIOError, ssl.SSLWantReadError):
                await self._wait(trio.lowlevel.wait_readable, sock)
                continue
            except ssl.SSLWantWriteError:
                await self._wait(trio.lowlevel.wait_writable, sock)
                continue
            if not n:
                raise EOFError("connection closed by the broker")
            return n

    async def _wait(self, wait: Any, sock: socket.socket) -> None:
        await wait(sock)
        self._turn = time.perf_counter()

    async def _receive_frame(self, sock: socket.socket) -> bytes | bytearray:
        scratch = self._scratch
        got = 0
        while got < 4:
            got += await self._recv_into(sock, memoryview(scratch)[got:])
        size = _SIZE.unpack_from(scratch)[0]
        if not 0 <= size < _MAX_RESPONSE:
            raise ValueError(f"bad response size {size}")
        if got > 4 + size:
            raise ValueError(f"{got - 4 - size} bytes after the response to the one request "
                             "in flight")
        if 4 + size <= len(scratch):
            while got < 4 + size:
                got += await self._recv_into(sock, memoryview(scratch)[got:4 + size])
            return bytes(scratch[4:4 + size])
        out = bytearray(size)
        out[:got - 4] = scratch[4:got]
        view = memoryview(out)
        have = got - 4
        while have < size:
            have += await self._recv_into(sock, view[have:])
        return out

    def _close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            trio.lowlevel.notify_closing(sock)
            sock.close()

    async def close(self) -> None:
        self._close()
