"""kafkapy._selector's TLS channels: the same Selector, with an ``ssl.SSLSocket`` between the
socket and the frames. Real loopback TCP, a real TLS 1.3 handshake (a trustme CA), a client
that reads and writes through OpenSSL: frames cut across TLS records and across polls, a
frame larger than the receive buffer, sends of buffers and file regions that fill the socket
and are resumed, a file region past the end of its file, the end of the stream after the
last frames."""

from __future__ import annotations

import _ssl
import ctypes
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import trustme

from kafkapy._selector import TLS_CHUNK, FileRegionError, Selector
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


@pytest.fixture(scope="module")
def contexts() -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server, client) contexts: TLS 1.3 with a certificate for localhost from a test CA."""
    ca = trustme.CA()
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost").configure_cert(server)
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ca.configure_trust(client)
    return server, client


@pytest.fixture
def tls_pair(contexts: tuple[ssl.SSLContext, ssl.SSLContext]
             ) -> Iterator[tuple[ssl.SSLSocket, ssl.SSLSocket]]:
    """(server side, client side) of a loopback TLS connection, handshake done; the server
    side non-blocking, as the broker registers it."""
    server_ctx, client_ctx = contexts
    with socket.create_server(("127.0.0.1", 0)) as listener:
        raw_client = socket.create_connection(listener.getsockname())
        raw_server, _ = listener.accept()
    raw_server.settimeout(WAIT_S)
    raw_client.settimeout(WAIT_S)
    server = server_ctx.wrap_socket(raw_server, server_side=True,
                                    do_handshake_on_connect=False)
    client = client_ctx.wrap_socket(raw_client, server_hostname="localhost",
                                    do_handshake_on_connect=False)
    shaking = threading.Thread(target=client.do_handshake)
    shaking.start()
    server.do_handshake()
    shaking.join(WAIT_S)
    assert server.version() == "TLSv1.3"
    server.setblocking(False)
    try:
        yield server, client
    finally:
        server.close()
        client.close()


def test_a_tls_channel_says_so(selector: Selector,
                               tls_pair: tuple[ssl.SSLSocket, ssl.SSLSocket]) -> None:
    server, _ = tls_pair
    assert selector.register(server.fileno(), "c", MiB, tls=server).tls
    a, b = socket.socketpair()
    with a, b:
        a.setblocking(False)
        assert not selector.register(a.fileno(), "p", MiB).tls


def test_frames_across_records_and_polls(selector: Selector,
                                         tls_pair: tuple[ssl.SSLSocket, ssl.SSLSocket]) -> None:
    server, client = tls_pair
    ch = selector.register(server.fileno(), "c", 8 * MiB, tls=server)
    stream = frame(b"first") + frame(b"") + frame(b"x" * 3000)
    frames: list[bytes] = []
    for i in range(0, len(stream), 7):          # a TLS record per 7 bytes, cut everywhere
        client.sendall(stream[i:i + 7])
        got = poll_until(selector, lambda r: any(k == "c" for k, *_ in r))
        frames += frames_of(got, "c")
        if ch.muted:
            selector.unmute(ch)
    assert frames == [b"first", b"", b"x" * 3000]
    # Many frames and many records in one write: delivered together, then muted.
    payloads = [f"request {i}".encode() * 100 for i in range(50)]
    client.sendall(b"".join(frame(p) for p in payloads))
    got = poll_until(selector, lambda r: len(frames_of(r, "c")) == 50)
    assert frames_of(got, "c") == payloads
    assert ch.muted


def test_a_frame_larger_than_the_receive_buffer(
        selector: Selector, tls_pair: tuple[ssl.SSLSocket, ssl.SSLSocket]) -> None:
    server, client = tls_pair
    ch = selector.register(server.fileno(), "c", 8 * MiB, tls=server)
    payload = os.urandom(3 * MiB)               # three times the selector's 1 MiB buffer
    writer = threading.Thread(target=client.sendall, args=(frame(payload) + frame(b"z"),))
    writer.start()
    try:
        got = poll_until(selector, lambda r: len(frames_of(r, "c")) >= 1)
    finally:
        writer.join(WAIT_S)
    frames = frames_of(got, "c")
    if len(frames) == 1:                         # the small one came in a later read
        selector.unmute(ch)
        frames += frames_of(poll_until(selector, lambda r: bool(frames_of(r, "c"))), "c")
    assert frames == [payload, b"z"]


def test_data_already_waiting_at_registration_is_read(
        selector: Selector, tls_pair: tuple[ssl.SSLSocket, ssl.SSLSocket]) -> None:
    server, client = tls_pair
    client.sendall(frame(b"early"))
    time.sleep(0.05)     # let it arrive before the (edge-triggered) registration
    selector.register(server.fileno(), "c", MiB, tls=server)
    assert frames_of(poll_until(selector, lambda r: bool(r)), "c") == [b"early"]


def test_buffers_and_file_regions_fill_the_socket_and_are_resumed(
        selector: Selector, log_file: Callable[[bytes], int],
        tls_pair: tuple[ssl.SSLSocket, ssl.SSLSocket]) -> None:
    server, client = tls_pair
    server.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 * KiB)
    data = os.urandom(2 * MiB)
    fd = log_file(data)
    ch = selector.register(server.fileno(), "c", MiB, tls=server)
    # A region several chunks long, at an offset that is not a chunk's.
    parts = [b"head", bytearray(b"-"), Region(fd, 100, 3 * TLS_CHUNK + 5), b"middle",
             Region(fd, 7, 10), Region(fd, 0, 0), memoryview(b"end")]
    expected = b"head-" + data[100:100 + 3 * TLS_CHUNK + 5] + b"middle" + data[7:17] + \
        b"end"
    done = selector.send(ch, parts)
    assert done is False and ch.sending            # 8 KiB of socket buffer: it filled up
    assert selector.send(ch, [b"tail"]) is False   # queued behind, in order
    received, done = receive_while_polling(selector, client, len(expected) + 4, done)
    assert received == expected + b"tail"
    assert done and not ch.sending
    assert selector.write_blocked > 0
    assert selector.sendfile_calls == 0            # no sendfile through TLS
    assert os.lseek(fd, 0, os.SEEK_CUR) == 0       # read at an offset: position unmoved


def test_a_file_region_past_the_end_of_the_file_fails(
        selector: Selector, log_file: Callable[[bytes], int],
        tls_pair: tuple[ssl.SSLSocket, ssl.SSLSocket]) -> None:
    server, client = tls_pair
    fd = log_file(b"0123456789")
    ch = selector.register(server.fileno(), "c", MiB, tls=server)
    with pytest.raises(FileRegionError, match="ends 5 bytes early"):
        selector.send(ch, [b"ab", Region(fd, 5, 10)])
    received = b""
    while len(received) < 7:
        received += client.recv(100)
    assert received == b"ab56789"              # what was sent before the failure


@pytest.mark.parametrize("close_notify", [True, False], ids=["close_notify", "ragged"])
def test_end_of_stream_after_the_last_frames(
        selector: Selector, tls_pair: tuple[ssl.SSLSocket, ssl.SSLSocket],
        close_notify: bool) -> None:
    server, client = tls_pair
    ch = selector.register(server.fileno(), "c", MiB, tls=server)
    client.sendall(frame(b"last"))
    if close_notify:
        # TLS close_notify, then the TCP close (not waiting for the server's close_notify).
        client.setblocking(False)
        with pytest.raises(ssl.SSLWantReadError):
            client.unwrap()
        client.close()
    else:
        client.close()                 # the TCP close alone (a ragged end, as most clients)
    got = poll_until(selector, lambda r: bool(frames_of(r, "c")))
    assert frames_of(got, "c") == [b"last"] and [e for *_, e in got] == [None]
    selector.unmute(ch)
    got = poll_until(selector, lambda r: bool(r))
    assert len(got) == 1 and isinstance(got[0][3], EOFError) and got[0][1] == []


# The OpenSSL that Python's ssl module uses (symbols looked up through its _ssl extension).
_LIBSSL = ctypes.CDLL(_ssl.__file__)
_SSL_OP_ALLOW_CLIENT_RENEGOTIATION = 1 << 8        # OpenSSL 3's; Python has no name for it


def _openssl_ssl_pointer(obj: ssl.SSLObject) -> int:
    """The ``SSL *`` of ``obj``: CPython's ``_ssl._SSLSocket`` keeps it right after its
    object header and its socket reference (3.10-3.13). Checked against OpenSSL's own idea of
    the protocol version, so that a different layout fails here and not in OpenSSL."""
    ptr = ctypes.c_void_p.from_address(id(obj._sslobj) + 3 * ctypes.sizeof(ctypes.c_void_p))
    assert ptr.value is not None
    _LIBSSL.SSL_version.argtypes = [ctypes.c_void_p]
    if _LIBSSL.SSL_version(ptr.value) != 0x0303:        # TLS1_2_VERSION
        pytest.fail("cannot reach the OpenSSL SSL object of this Python's ssl module")
    return ptr.value




def test_a_read_that_must_write_first_waits_for_the_socket_to_drain() -> None:
    """OpenSSL's read may have to write first: here a TLS 1.2 client renegotiates while the
    server's socket is full, and the server's read of the ClientHello must send the
    ServerHello (want-write). The client waits for that answer and sends nothing more, so the
    read must be retried when the socket drains, not at the next EPOLLIN. (The broker's own
    contexts refuse renegotiation, as Kafka does, and OpenSSL 3 then queues its refusal
    without asking to write; this server context allows it, to make OpenSSL ask.) Client:
    OpenSSL through memory BIOs over a plain socket, so that the test decides when it reads;
    the renegotiation is started through ctypes (Python's ssl module has no call for it)."""
    ca = trustme.CA()
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost").configure_cert(server_ctx)
    server_ctx.options |= _SSL_OP_ALLOW_CLIENT_RENEGOTIATION
    client_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ca.configure_trust(client_ctx)
    client_ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_server(("127.0.0.1", 0)) as listener:
        # Small buffers, so that a full socket stays full (no window opening meanwhile).
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * KiB)
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * KiB)
        raw.connect(listener.getsockname())
        raw_server, _ = listener.accept()
    raw.settimeout(WAIT_S)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    server = server_ctx.wrap_socket(raw_server, server_side=True, do_handshake_on_connect=False)
    sel = Selector()
    try:
        def exchange() -> bool:
            """One step of the client's handshake; True once it is done."""
            try:
                client.do_handshake()
                done = True
            except ssl.SSLWantReadError:
                done = False
            if outgoing.pending:
                raw.sendall(outgoing.read())
            if not done:
                raw.setblocking(False)
                try:
                    incoming.write(raw.recv(64 * KiB))
                except BlockingIOError:
                    pass
                finally:
                    raw.settimeout(WAIT_S)
            return done

        shaking = threading.Thread(target=server.do_handshake)
        shaking.start()
        deadline = time.monotonic() + WAIT_S
        while not exchange():
            assert time.monotonic() < deadline, "the first handshake does not finish"
        shaking.join(WAIT_S)
        assert client.version() == server.version() == "TLSv1.2"
        server.setblocking(False)
        ch = sel.register(server.fileno(), "c", MiB, tls=server)
        client.write(frame(b"before"))
        raw.sendall(outgoing.read())
        assert frames_of(poll_until(sel, lambda r: bool(frames_of(r, "c"))), "c") == [b"before"]
        sel.unmute(ch)                             # as after its answer

        # Fill the server's side of the connection with bytes the client will skip (not TLS:
        # the client takes them off the socket, not through OpenSSL), until it stays full
        # (the client's window closed, every acknowledgement in).
        filler, added = 0, 1
        while added:
            added = 0
            while True:
                try:
                    added += os.write(server.fileno(), b"\0" * (64 * KiB))
                except BlockingIOError:
                    break
            filler += added
            time.sleep(0.05)
        assert _LIBSSL.SSL_renegotiate(ctypes.c_void_p(_openssl_ssl_pointer(client))) == 1
        with pytest.raises(ssl.SSLWantReadError):
            client.do_handshake()                  # the ClientHello, into `outgoing`
        raw.sendall(outgoing.read())
        time.sleep(0.05)
        assert sel.poll() == []                    # read: OpenSSL must write, cannot
        with pytest.raises(ssl.SSLWantWriteError):
            server.recv(1)                         # (what the selector's read met)
        skipped = 0
        while skipped < filler:
            skipped += len(raw.recv(min(filler - skipped, 64 * KiB)))

        # The socket drained: the renegotiation goes on, then a frame goes through it.
        deadline = time.monotonic() + WAIT_S
        while True:
            sel.poll()
            if exchange():
                break
            assert time.monotonic() < deadline, "the server never answered the ClientHello"
            time.sleep(0.001)
        client.write(frame(b"after"))
        raw.sendall(outgoing.read())
        assert frames_of(poll_until(sel, lambda r: bool(frames_of(r, "c"))), "c") == [b"after"]
    finally:
        sel.close()
        server.close()
        raw.close()
