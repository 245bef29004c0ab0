"""FakePeer: a Kafka peer for tests that must see exactly what a broker or the controller sends.

A TCP server on 127.0.0.1 with its own Trio loop in a thread (tests drive brokers and
clusters synchronously). Every request frame is decoded with kafkapy's protocol layer and
handed to ``answer(api_key, api_version, body)``: a response body is encoded and sent back;
None closes the connection unanswered (a peer that does not serve that API). Requests that
were answered are recorded, in order, as ``(api_key, api_version, body)``.

Used as the controller's recording broker (tests/controller) and as a stand-in controller
that commits AlterPartition (tests/server/test_replication.py).
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Callable
from typing import Any

import trio

from kafkapy.protocol import ApiKey, decode_request, encode_response

__all__ = ["FakePeer"]

_SIZE = struct.Struct(">i")
Answer = Callable[[int, int, Any], Any]


class FakePeer:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[tuple[int, int, Any]] = []
        self.port = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self._ready = threading.Event()

    def start(self) -> FakePeer:
        self._thread = threading.Thread(target=trio.run, args=(self._main,), daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise TimeoutError("the fake peer did not start")
        return self

    def close(self) -> None:
        if self._token is not None and self._cancel is not None:
            try:
                self._token.run_sync_soon(self._cancel.cancel)
            except trio.RunFinishedError:
                pass
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FakePeer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def received(self, api_key: int | None = None) -> list[tuple[int, int, Any]]:
        with self._lock:
            return [r for r in self.requests if api_key is None or r[0] == api_key]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def wait_for(self, condition: Callable[[], Any], what: str, timeout: float = 15) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {what}; received "
                                   f"{[(ApiKey(k).name, v) for k, v, _ in self.received()]}")
            time.sleep(0.02)

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            self._cancel = scope
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
            self.port = listeners[0].socket.getsockname()[1]
            self._ready.set()
            await trio.serve_listeners(self._serve, listeners)

    async def _serve(self, stream: trio.SocketStream) -> None:
        buf = bytearray()
        try:
            while True:
                while len(buf) < 4 or len(buf) < 4 + _SIZE.unpack_from(buf)[0]:
                    chunk = await stream.receive_some(1 << 16)
                    if not chunk:
                        return
                    buf += chunk
                size = _SIZE.unpack_from(buf)[0]
                frame, buf = bytes(buf[4:4 + size]), buf[4 + size:]
                request = decode_request(frame)
                header = request.header
                body = self.answer(header.api_key, header.api_version, request.body)
                if body is None:
                    return
                with self._lock:
                    self.requests.append((header.api_key, header.api_version, request.body))
                out = encode_response(header.api_key, header.api_version,
                                      header.correlation_id, body)
                await stream.send_all(_SIZE.pack(len(out)) + out)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
