"""Responses with file slices: the size prefix covers payload and slices; slices of more than
COPY_SLICES_BYTES go out with sendfile (the selector's, kafkapy._selector) on the non-blocking
socket, through partial sends, smaller ones are read and sent with the rest in one buffer; the
connection carries on. A slice that cannot be read closes the connection (after what was sent
before it). The selector's counters show which way the bytes went."""

from __future__ import annotations

import logging
import os
import random
import struct
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from kafkapy._selector import Selector
from kafkapy.network import Request, Response, SendResponse
from kafkapy.network.socket_server import COPY_SLICES_BYTES
from tests.network.support import (
    Harness,
    frame,
    receive_exactly,
    receive_frame,
    receive_until_closed,
    serving,
    settle,
    trio_test,
)

MiB = 1 << 20


@attrs.frozen
class FileSlice:
    fd: int
    position: int
    size: int


@pytest.fixture
def segment(tmp_path: Path) -> Iterator[tuple[int, bytes]]:
    data = random.Random(7).randbytes(MiB)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        yield fd, data
    finally:
        os.close(fd)


def _selector(h: Harness) -> Selector:
    selector = h.server._selector
    assert selector is not None
    return selector


@trio_test
async def test_slices_bigger_than_the_socket_buffer(segment: tuple[int, bytes]) -> None:
    fd, data = segment
    slices = [FileSlice(fd, 100, 512 * 1024 + 7), FileSlice(fd, 0, 10), FileSlice(fd, 5, 0)]

    async def respond(request: Request) -> Response:
        if request.frame == b"fetch":
            return SendResponse(b"header:", slices)
        return SendResponse(request.frame)

    async with serving(respond, send_buffer_bytes=4096) as h:
        stream = await h.connect()
        await stream.send_all(frame(b"fetch") + frame(b"after"))
        await settle()  # the server fills the socket buffers and waits for writability
        assert _selector(h).write_blocked > 0
        (size,) = struct.unpack(">i", await receive_exactly(stream, 4))
        assert size == 7 + 512 * 1024 + 7 + 10
        body = await receive_exactly(stream, size)
        assert body == b"header:" + data[100:100 + 512 * 1024 + 7] + data[:10]
        assert await receive_frame(stream) == b"after"  # same connection, next request
        assert _selector(h).sendfile_bytes == 512 * 1024 + 7 + 10
        assert _selector(h).sendfile_calls > 2  # partial sends


@trio_test
async def test_slice_only_response(segment: tuple[int, bytes]) -> None:
    fd, data = segment

    async def respond(request: Request) -> Response:
        return SendResponse(b"", [FileSlice(fd, MiB // 2, 1000)])

    async with serving(respond) as h:
        stream = await h.connect()
        assert await h.round_trip(stream, b"x") == data[MiB // 2:MiB // 2 + 1000]


@trio_test
async def test_small_slices_are_copied_into_one_send(segment: tuple[int, bytes]) -> None:
    """A follower's fetch answer: header, records, the body's tail: no sendfile, one buffer;
    up to COPY_SLICES_BYTES of slices."""
    fd, data = segment
    half = COPY_SLICES_BYTES // 2
    slices = [FileSlice(fd, 7, half), b"mid", FileSlice(fd, 3 * half, half), b"tail"]

    async def respond(request: Request) -> Response:
        return SendResponse(b"head", slices)

    async with serving(respond) as h:
        stream = await h.connect()
        assert await h.round_trip(stream, b"x") == \
            b"head" + data[7:7 + half] + b"mid" + data[3 * half:4 * half] + b"tail"
        assert _selector(h).sendfile_calls == 0


@pytest.mark.parametrize("size", [100, COPY_SLICES_BYTES + 100])
@trio_test
async def test_slice_past_the_end_of_the_file_closes_the_connection(
        segment: tuple[int, bytes], caplog: pytest.LogCaptureFixture, size: int) -> None:
    """A copied slice fails before anything is sent; a sent file fails after the header and
    what the file had."""
    fd, data = segment

    async def respond(request: Request) -> Response:
        if request.frame == b"bad":
            return SendResponse(b"h", [FileSlice(fd, len(data) - 10, size)])
        return SendResponse(b"fine")

    async with serving(respond) as h:
        stream = await h.connect()
        await stream.send_all(frame(b"bad"))
        received = await receive_until_closed(stream)
        if size <= COPY_SLICES_BYTES:
            assert received == b""
        else:
            assert received == struct.pack(">i", 1 + size) + b"h" + data[-10:]
        other = await h.connect()
        assert await h.round_trip(other, b"ok?") == b"fine"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and f"{size - 10} bytes early" in warnings[0].getMessage()


@trio_test
async def test_large_payload_through_partial_sends() -> None:
    payload = random.Random(3).randbytes(MiB)

    async def respond(request: Request) -> Response:
        return SendResponse(payload)

    async with serving(respond, send_buffer_bytes=4096) as h:
        stream = await h.connect()
        await stream.send_all(frame(b"x"))
        await settle()
        assert await receive_frame(stream) == payload


@pytest.mark.parametrize("size", [10, COPY_SLICES_BYTES + 10])
@trio_test
async def test_unreadable_slice_closes_the_connection(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture,
                                                      size: int) -> None:
    directory_fd = os.open(tmp_path, os.O_RDONLY)  # nothing can read a directory
    try:
        async def respond(request: Request) -> Response:
            return SendResponse(b"h", [FileSlice(directory_fd, 0, size)])

        async with serving(respond) as h:
            stream = await h.connect()
            await stream.send_all(frame(b"x"))
            expected = b"" if size <= COPY_SLICES_BYTES else struct.pack(">i", 1 + size) + b"h"
            assert await receive_until_closed(stream) == expected
    finally:
        os.close(directory_fd)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "failed" in warning
