"""Test support for kafkapy._selector: a file region, a frame, polling as the broker's poll
task does (waiting on the selector's descriptor only when nothing is pending), every wait
bounded."""

from __future__ import annotations

import select
import socket
import ssl
import struct
import time
from collections.abc import Callable

import attrs

from kafkapy._selector import Selector

KiB = 1 << 10
MiB = 1 << 20
WAIT_S = 10.0           # the bound on every wait (never reached when things work)

Result = tuple[object, list[bytearray], bool, BaseException | None]


@attrs.frozen
class Region:
    fd: int
    position: int
    size: int


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def poll_until(sel: Selector, done: Callable[[list[Result]], bool]) -> list[Result]:
    """Poll (waiting on the selector's descriptor, as the broker's Trio task does) until
    ``done`` holds for everything polled so far."""
    results: list[Result] = []
    deadline = time.monotonic() + WAIT_S
    while not done(results):
        left = deadline - time.monotonic()
        assert left > 0, f"gave up waiting; polled so far: {results!r}"
        if not sel.pending:
            select.select([sel.fileno()], [], [], left)
        results += sel.poll()
    return results


def frames_of(results: list[Result], key: object) -> list[bytes]:
    return [bytes(f) for k, frames, _, _ in results if k == key for f in frames]


def receive_while_polling(sel: Selector, client: socket.socket, size: int,
                          sent: bool) -> tuple[bytes, bool]:
    """Read ``size`` bytes on ``client`` (a plain or a TLS socket: plaintext either way)
    while polling ``sel`` (which resumes the server's pending writes as the client drains
    them): the bytes, and whether a send completed (``sent``: it already had)."""
    received = bytearray()
    deadline = time.monotonic() + WAIT_S
    while len(received) < size or not sent:
        left = deadline - time.monotonic()
        assert left > 0, f"gave up: {len(received)} of {size} bytes, sent {sent}"
        if isinstance(client, ssl.SSLSocket) and client.pending():
            readable: list[object] = [client]      # decrypted already: select cannot tell
        else:
            readable, _, _ = select.select([sel.fileno(), client], [], [], left)
        if client in readable:
            client.setblocking(False)
            try:
                received += client.recv(256 * KiB)
            except (BlockingIOError, ssl.SSLWantReadError):
                pass                               # a TLS record not yet whole
            finally:
                client.settimeout(WAIT_S)
        for key, frames, done, error in sel.poll():
            assert (key, frames, error) == ("c", [], None)
            sent = sent or done
    return bytes(received), sent
