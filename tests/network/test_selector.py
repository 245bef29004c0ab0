"""kafkapy._selector: Kafka's Selector, compiled. Real sockets (socketpairs and loopback TCP):
frames split across reads and many in one read, muting, partial writes resumed when the socket
drains, sendfile regions, end of stream, an oversized frame failing its connection only, idle
expiry."""

from __future__ import annotations

import os
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from kafkapy import _selector
from kafkapy._selector import Channel, FileRegionError, Selector
from kafkapy.errors import InvalidRequestError
from tests.network.selector_support import (
    WAIT_S,
    KiB,
    MiB,
    Region,
    frame,
    frames_of,
    poll_until,
    receive_while_polling,
)


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """(server side, client side) of a loopback TCP connection; the server side non-blocking."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    server.setblocking(False)
    client.settimeout(WAIT_S)
    try:
        yield server, client
    finally:
        server.close()
        client.close()


def test_extension_is_compiled() -> None:
    assert _selector.__file__ is not None and _selector.__file__.endswith((".so", ".pyd"))


def test_frames_split_across_reads(selector: Selector,
                                   pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    ch = selector.register(server.fileno(), "c", 1 * MiB)
    stream = frame(b"first") + frame(b"") + frame(b"x" * 3000)
    frames: list[bytes] = []
    for i in range(0, len(stream), 7):          # cut everywhere, prefixes included
        client.sendall(stream[i:i + 7])
        got = poll_until(selector, lambda r: any(k == "c" for k, *_ in r))
        frames += frames_of(got, "c")
        if ch.muted:                             # frames delivered: read on
            selector.unmute(ch)
    assert frames == [b"first", b"", b"x" * 3000]


def test_many_frames_in_one_read_are_delivered_together_and_mute(
        selector: Selector, pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    ch = selector.register(server.fileno(), "c", 1 * MiB)
    payloads = [f"request {i}".encode() for i in range(50)]
    client.sendall(b"".join(frame(p) for p in payloads))
    got = poll_until(selector, lambda r: len(frames_of(r, "c")) == 50)
    assert frames_of(got, "c") == payloads
    assert ch.muted
    # Muted: more bytes are not read (one request in flight, as Kafka's Selector mutes).
    client.sendall(frame(b"next"))
    select.select([selector.fileno()], [], [], WAIT_S)
    assert selector.poll() == []
    selector.unmute(ch)
    assert selector.pending
    assert frames_of(poll_until(selector, lambda r: bool(r)), "c") == [b"next"]


def test_data_already_waiting_at_registration_is_read(
        selector: Selector, pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    client.sendall(frame(b"early"))
    time.sleep(0.05)     # let it arrive before the (edge-triggered) registration
    selector.register(server.fileno(), "c", 1 * MiB)
    assert frames_of(poll_until(selector, lambda r: bool(r)), "c") == [b"early"]


def test_a_large_frame_over_many_reads(selector: Selector,
                                       pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    small = Selector(receive_size=64 * KiB)      # many recvs per frame
    try:
        ch = small.register(server.fileno(), "c", 8 * MiB)
        payload = os.urandom(5 * MiB)
        frames: list[bytes] = []
        writer = threading.Thread(target=client.sendall, args=(frame(payload),))
        writer.start()
        try:
            frames = frames_of(poll_until(small, lambda r: bool(frames_of(r, "c"))), "c")
        finally:
            writer.join(WAIT_S)
        assert frames == [payload]
        assert ch.muted
    finally:
        small.close()


def test_partial_writes_are_resumed_when_the_socket_drains(
        selector: Selector, pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    server.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * KiB)
    ch = selector.register(server.fileno(), "c", 1 * MiB)
    parts = [os.urandom(300 * KiB), bytearray(os.urandom(1000)), memoryview(os.urandom(200 * KiB))]
    expected = b"".join(bytes(p) for p in parts)
    assert selector.send(ch, parts) is False         # the socket filled up
    assert ch.sending
    # Queued behind the pending parts, in order.
    assert selector.send(ch, [b"tail"]) is False
    expected += b"tail"
    received, _ = receive_while_polling(selector, client, len(expected), False)
    assert bytes(received) == expected
    assert not ch.sending


def test_sendfile_regions_between_buffers(
        selector: Selector, log_file: Callable[[bytes], int],
        pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    server.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 * KiB)
    data = os.urandom(2 * MiB)
    fd = log_file(data)
    ch = selector.register(server.fileno(), "c", 1 * MiB)
    parts = [b"head", Region(fd, 100, 1 * MiB), b"middle", Region(fd, 7, 10),
             Region(fd, 0, 0), b"end"]
    expected = b"head" + data[100:100 + MiB] + b"middle" + data[7:17] + b"end"
    received, done = receive_while_polling(selector, client, len(expected),
                                            selector.send(ch, parts))
    assert bytes(received) == expected
    assert done and not ch.sending
    # sendfile was given the offset: the descriptor's own position did not move.
    assert os.lseek(fd, 0, os.SEEK_CUR) == 0


def test_a_file_region_past_the_end_of_the_file_fails(
        selector: Selector, log_file: Callable[[bytes], int],
        pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    fd = log_file(b"0123456789")
    ch = selector.register(server.fileno(), "c", 1 * MiB)
    with pytest.raises(FileRegionError, match="ends 5 bytes early"):
        selector.send(ch, [b"ab", Region(fd, 5, 10)])
    assert client.recv(100) == b"ab56789"     # what was sent before the failure


def test_end_of_stream_after_the_last_frames(
        selector: Selector, pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    ch = selector.register(server.fileno(), "c", 1 * MiB)
    client.sendall(frame(b"last"))
    client.close()
    # The frame comes first (requests before a close are served) and mutes the channel.
    got = poll_until(selector, lambda r: bool(frames_of(r, "c")))
    assert frames_of(got, "c") == [b"last"] and [e for *_, e in got] == [None]
    assert selector.poll() == []
    selector.unmute(ch)
    got = poll_until(selector, lambda r: bool(r))
    assert len(got) == 1 and isinstance(got[0][3], EOFError) and got[0][1] == []


def test_end_of_stream_after_unmute(selector: Selector,
                                    pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    ch = selector.register(server.fileno(), "c", 1 * MiB)
    client.sendall(frame(b"last"))
    assert frames_of(poll_until(selector, lambda r: bool(r)), "c") == [b"last"]
    client.close()
    time.sleep(0.05)
    assert selector.poll() == []          # muted: the close is not read yet
    selector.unmute(ch)
    got = poll_until(selector, lambda r: bool(r))
    assert len(got) == 1 and isinstance(got[0][3], EOFError) and got[0][1] == []


def test_an_oversized_frame_fails_its_connection_only(selector: Selector) -> None:
    a_server, a_client = socket.socketpair()
    b_server, b_client = socket.socketpair()
    try:
        for s in (a_server, b_server):
            s.setblocking(False)
        selector.register(a_server.fileno(), "a", 100)
        selector.register(b_server.fileno(), "b", 100)
        a_client.sendall(frame(b"ok") + struct.pack(">i", 101) + b"x" * 101)
        b_client.sendall(frame(b"fine"))
        got = poll_until(selector, lambda r: {k for k, *_ in r} == {"a", "b"})
        by_key = {k: (frames, error) for k, frames, _, error in got}
        frames, error = by_key["a"]
        assert frames == [b"ok"]                 # the frames before the bad prefix
        assert isinstance(error, InvalidRequestError)
        assert "invalid frame size 101" in str(error)
        assert by_key["b"] == ([b"fine"], None)
    finally:
        for s in (a_server, a_client, b_server, b_client):
            s.close()


def test_a_negative_frame_size_fails_the_connection(selector: Selector) -> None:
    server, client = socket.socketpair()
    try:
        server.setblocking(False)
        selector.register(server.fileno(), "c", 1000)
        client.sendall(struct.pack(">i", -1))
        got = poll_until(selector, lambda r: bool(r))
        assert got[0][1] == [] and isinstance(got[0][3], InvalidRequestError)
    finally:
        server.close()
        client.close()


def test_raise_limit(selector: Selector) -> None:
    server, client = socket.socketpair()
    try:
        server.setblocking(False)
        ch = selector.register(server.fileno(), "c", 10)
        assert ch.max_frame_size == 10
        ch.raise_limit(1000)
        client.sendall(frame(b"y" * 500))
        got = poll_until(selector, lambda r: bool(r))
        assert got == [("c", [bytearray(b"y" * 500)], False, None)]
    finally:
        server.close()
        client.close()


def test_idle_expiry(selector: Selector, pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    ch = selector.register(server.fileno(), "c", 1 * MiB)
    time.sleep(0.05)
    assert selector.expired(0.01) == ["c"]
    assert selector.expired(WAIT_S) == []
    # A muted channel waits on the broker, not on the client: not idle.
    selector.mute(ch)
    assert selector.expired(0.01) == []
    # Progress resets the clock.
    selector.unmute(ch)
    client.sendall(frame(b"r"))
    poll_until(selector, lambda r: bool(r))
    assert ch.idle_s < 0.05 + 1.0


def test_unregister_stops_reporting(selector: Selector,
                                    pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    ch = selector.register(server.fileno(), "c", 1 * MiB)
    assert len(selector) == 1
    selector.unregister(ch)
    selector.unregister(ch)
    assert len(selector) == 0
    client.sendall(frame(b"ignored"))
    time.sleep(0.05)
    assert selector.poll() == []
    with pytest.raises(ValueError, match="unregistered"):
        selector.send(ch, [b"x"])


def test_a_peer_gone_is_an_os_error_on_send(selector: Selector) -> None:
    server, client = socket.socketpair()
    try:
        server.setblocking(False)
        ch = selector.register(server.fileno(), "c", 1000)
        client.close()
        with pytest.raises(OSError):
            for _ in range(100):
                selector.send(ch, [b"z" * 1000])
    finally:
        server.close()


def test_channel_type() -> None:
    sel = Selector()
    server, client = socket.socketpair()
    try:
        ch = sel.register(server.fileno(), ("any", "key"), 1)
        assert isinstance(ch, Channel) and ch.key == ("any", "key")
        assert ch.fd == server.fileno() and not ch.muted and not ch.sending
    finally:
        sel.close()
        server.close()
        client.close()


@pytest.mark.parametrize("version", range(3, 12))
def test_the_poll_task_runs_only_requests_that_never_wait(version: int) -> None:
    """SocketServer's poll task runs a Fetch, an ApiVersions and a non-transactional Produce
    itself; a transactional Produce (which may ask another broker first) and anything else
    (Metadata, which may create topics through the controller) get a task of their own."""
    from kafkapy.network.socket_server import _never_waits
    from kafkapy.protocol import encode_request, request_class
    from kafkapy.protocol.codec import Request, RequestHeader

    def encoded(api_key: int, api_version: int, body: object, client_id: str | None) -> bytes:
        return encode_request(Request(RequestHeader(api_key=api_key, api_version=api_version,
                                                    correlation_id=7, client_id=client_id),
                                      body))

    produce = request_class(0)
    for client_id in (None, "", "client-x"):
        assert _never_waits(encoded(0, version, produce(acks=1, timeout_ms=100), client_id))
        assert not _never_waits(encoded(0, version, produce(transactional_id="tx", acks=1,
                                                            timeout_ms=100), client_id))
        assert _never_waits(encoded(1, 12, request_class(1)(), client_id))
        assert _never_waits(encoded(18, 3, request_class(18)(), client_id))
        assert not _never_waits(encoded(3, 12, request_class(3)(), client_id))


def test_wakeup_makes_the_descriptor_readable_until_the_next_poll(selector: Selector) -> None:
    fd = selector.fileno()
    assert select.select([fd], [], [], 0)[0] == []
    selector.wakeup()
    selector.wakeup()                        # once per poll: the second costs nothing
    assert select.select([fd], [], [], WAIT_S)[0] == [fd]
    assert selector.poll() == []             # nothing to report, and drained
    assert select.select([fd], [], [], 0.05)[0] == []
    selector.wakeup()                        # and again after a poll
    assert select.select([fd], [], [], WAIT_S)[0] == [fd]
