"""BrokerConnection: this broker as a client of another broker (inter-broker requests).

Kafka's ``NetworkClient`` as the broker uses it: the controller's channel to each broker
(LeaderAndIsr, UpdateMetadata, StopReplica), a follower's fetcher to its leader (Fetch as a
replica), a leader's ``AlterPartition`` and a stopping broker's ``ControlledShutdown`` to the
controller.

Theory of operation
-------------------
- ``BrokerConnection(host, port)`` is one TCP connection, opened on the first request and
  again after any failure. With ``ssl_context`` (the inter-broker listener is SSL) the
  connection is TLS (``trio.SSLStream``), the peer verified as the context says (its host
  name checked against ``host`` unless ssl.endpoint.identification.algorithm is empty).
  ``await request(api_key, version, body)`` sends one request and returns the decoded response
  body; requests on one connection go one at a time (a lock), as Kafka's RequestSendThread and
  fetcher threads send them. Callers that want parallelism open one connection per peer and
  purpose.
- Any failure (refused, reset, a frame that does not decode, no answer within ``timeout_s``)
  closes the connection and raises ``BrokerNotAvailableError`` naming the peer: the caller
  decides whether to retry (the controller retries until the broker leaves the cluster; a
  fetcher backs off ``replica.fetch.backoff.ms``).
- Authentication: with ``authenticate`` (the inter-broker listener uses SASL), every new
  connection first runs ``await authenticate(exchange)``, where ``exchange(api_key, version,
  body)`` is one request on it (SaslHandshake, SaslAuthenticate); a failure there is a
  connection failure like any other.
- Encoding and decoding are the broker's own sans-IO protocol layer (``kafkapy.protocol``):
  the inter-broker requests are the very schemas the handlers serve.

Runs on the Trio loop of its caller.
"""

from __future__ import annotations

import ssl
import struct
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

import trio

from kafkapy.errors import BrokerNotAvailableError, KafkaError
from kafkapy.protocol import Request, RequestHeader, decode_response, encode_request

__all__ = ["Authenticate", "BrokerConnection", "Exchange", "authenticate_on"]

Exchange: TypeAlias = Callable[[int, int, Any], Awaitable[Any]]
"""``await exchange(api_key, version, body)``: one request on a connection, its body back."""
Authenticate: TypeAlias = Callable[[Exchange], Awaitable[None]]
"""What a new connection awaits before its first request (SASL); raises to refuse."""

_SIZE = struct.Struct(">i")
_MAX_RESPONSE = 1 << 31


async def authenticate_on(authenticate: Authenticate, exchange: Exchange) -> None:
    """Run ``authenticate`` on a new connection; a refusal (a Kafka error) is a
    ``ValueError``, which the connections treat as a failed connection."""
    try:
        await authenticate(exchange)
    except KafkaError as e:
        raise ValueError(f"SASL authentication failed: {e.name}: {e.message}") from e


class BrokerConnection:
    """One connection to one broker; see the module docstring."""

    def __init__(self, host: str, port: int, *, client_id: str = "kafkapy-broker",
                 timeout_s: float = 30.0, ssl_context: ssl.SSLContext | None = None,
                 authenticate: Authenticate | None = None) -> None:
        self.host = host
        self._authenticate = authenticate
        self.port = port
        self.client_id = client_id
        self.timeout_s = timeout_s
        self.ssl_context = ssl_context
        self._stream: trio.abc.Stream | None = None
        self._lock = trio.Lock()
        self._correlation_id = 0

    def __repr__(self) -> str:
        return f"BrokerConnection({self.host}:{self.port})"

    async def request(self, api_key: int, version: int, body: Any) -> Any:
        """Send one request and return its response body. Raises BrokerNotAvailableError."""
        async with self._lock:
            try:
                with trio.fail_after(self.timeout_s):
                    if self._stream is None:
                        self._stream = await self._connect()
                        if self._authenticate is not None:
                            await authenticate_on(self._authenticate, self._exchange)
                    return await self._exchange(api_key, version, body)
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError,
                    trio.TooSlowError, ValueError, EOFError) as e:
                await self._close_locked()
                raise BrokerNotAvailableError(
                    f"broker at {self.host}:{self.port}: {type(e).__name__}: {e}") from e
            except BaseException:
                # Cancelled mid-request: the stream may hold half a frame.
                await self._close_locked()
                raise

    async def _exchange(self, api_key: int, version: int, body: Any) -> Any:
        """One request and its response body on the open stream (the lock is held)."""
        assert self._stream is not None
        self._correlation_id = (self._correlation_id + 1) & 0x7FFFFFFF
        corr = self._correlation_id
        frame = encode_request(Request(
            RequestHeader(api_key=api_key, api_version=version,
                          correlation_id=corr, client_id=self.client_id), body))
        await self._stream.send_all(_SIZE.pack(len(frame)) + frame)
        size = _SIZE.unpack(await self._receive_exactly(4))[0]
        if not 0 <= size < _MAX_RESPONSE:
            raise ValueError(f"bad response size {size}")
        data = await self._receive_exactly(size)
        response = decode_response(api_key, version, data)
        if response.header.correlation_id != corr:
            raise ValueError(f"correlation id {response.header.correlation_id} "
                             f"answers no request (sent {corr})")
        return response.body

    async def _connect(self) -> trio.abc.Stream:
        tcp = await trio.open_tcp_stream(self.host, self.port)
        if self.ssl_context is None:
            return tcp
        tls = trio.SSLStream(tcp, self.ssl_context, server_hostname=self.host)
        try:
            await tls.do_handshake()
        except BaseException:
            with trio.CancelScope(shield=True):
                await tcp.aclose()
            raise
        return tls

    async def _receive_exactly(self, n: int) -> bytes:
        assert self._stream is not None
        buf = bytearray()
        while len(buf) < n:
            chunk = await self._stream.receive_some(min(n - len(buf), 1 << 20))
            if not chunk:
                raise EOFError("connection closed by the broker")
            buf += chunk
        return bytes(buf)

    async def _close_locked(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            with trio.CancelScope(shield=True):
                await stream.aclose()

    async def close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            with trio.CancelScope(shield=True):
                await stream.aclose()
