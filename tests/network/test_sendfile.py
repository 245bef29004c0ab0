"""Responses with file slices: the size prefix covers payload and slices, the slices go out with
os.sendfile on the non-blocking socket, through partial sends, and the connection carries on."""

from __future__ import annotations

import logging
import os
import random
import struct
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from kafkapy.network import Request, Response, SendResponse
from tests.network.support import (
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


@pytest.fixture
def sendfile_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every os.sendfile call's outcome: the byte count, or "EAGAIN"."""
    calls: list[str] = []
    real = os.sendfile

    def spy(out_fd: int, in_fd: int, offset: int, count: int) -> int:
        try:
            sent = real(out_fd, in_fd, offset, count)
        except BlockingIOError:
            calls.append("EAGAIN")
            raise
        calls.append(str(sent))
        return sent

    monkeypatch.setattr(os, "sendfile", spy)
    return calls


@trio_test
async def test_slices_bigger_than_the_socket_buffer(segment: tuple[int, bytes],
                                                    sendfile_calls: list[str]) -> None:
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
        assert "EAGAIN" in sendfile_calls
        (size,) = struct.unpack(">i", await receive_exactly(stream, 4))
        assert size == 7 + 512 * 1024 + 7 + 10
        body = await receive_exactly(stream, size)
        assert body == b"header:" + data[100:100 + 512 * 1024 + 7] + data[:10]
        assert await receive_frame(stream) == b"after"  # same connection, next request
    sent = [int(c) for c in sendfile_calls if c != "EAGAIN"]
    assert sum(sent) == 512 * 1024 + 7 + 10
    assert len(sent) > 2  # partial sends


@trio_test
async def test_slice_only_response(segment: tuple[int, bytes]) -> None:
    fd, data = segment

    async def respond(request: Request) -> Response:
        return SendResponse(b"", [FileSlice(fd, MiB // 2, 1000)])

    async with serving(respond) as h:
        stream = await h.connect()
        assert await h.round_trip(stream, b"x") == data[MiB // 2:MiB // 2 + 1000]


@trio_test
async def test_slice_past_the_end_of_the_file_closes_the_connection(
        segment: tuple[int, bytes], caplog: pytest.LogCaptureFixture) -> None:
    fd, data = segment

    async def respond(request: Request) -> Response:
        if request.frame == b"bad":
            return SendResponse(b"h", [FileSlice(fd, len(data) - 10, 100)])
        return SendResponse(b"fine")

    async with serving(respond) as h:
        stream = await h.connect()
        await stream.send_all(frame(b"bad"))
        received = await receive_until_closed(stream)
        assert received == struct.pack(">i", 101) + b"h" + data[-10:]  # then closed
        other = await h.connect()
        assert await h.round_trip(other, b"ok?") == b"fine"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "90 bytes early" in warnings[0].getMessage()


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


@trio_test
async def test_unreadable_slice_closes_the_connection(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    directory_fd = os.open(tmp_path, os.O_RDONLY)  # sendfile cannot read a directory
    try:
        async def respond(request: Request) -> Response:
            return SendResponse(b"h", [FileSlice(directory_fd, 0, 10)])

        async with serving(respond) as h:
            stream = await h.connect()
            await stream.send_all(frame(b"x"))
            assert await receive_until_closed(stream) == struct.pack(">i", 11) + b"h"
    finally:
        os.close(directory_fd)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "failed" in warning
