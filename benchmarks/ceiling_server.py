"""The ceiling: a minimal Trio server that only splits frames and answers a canned response.

    PYTHONPATH=. python -m benchmarks.ceiling_server --port 9092

What Python and Trio cost by themselves on this machine, with nothing of a broker: per
connection a task that ``recv``s up to 64 KiB (as kafkapy's ``SocketServer`` does), feeds it to
the compiled ``FrameSplitter`` (kafkapy's own), and answers every complete frame with one
canned Produce v7 response (topic ``ceiling``, partition 0, error NONE) carrying the frame's
correlation id; the answers to the frames of one ``recv`` go out in one ``send``. It neither
decodes nor stores anything: a broker's produce path that reaches half of this rate spends as
much on Kafka work as on the socket and the event loop.

With ``--write-dir`` it also appends every frame to one file there (``os.write``, the page
cache) before answering: the least that a broker which acknowledges after the write must do,
so the share of *that* ceiling is what kafkapy's Python and Trio cost over the bare storing.

The raw clients in ``load_generator`` read only the correlation id and the error code of a
Produce answer, so they drive this server exactly as they drive a broker. Any request is
answered the same way (the readiness check sends a Metadata request and checks only the
correlation id). SIGTERM stops it (Python's default action).
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

import trio

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkapy._frames import FrameSplitter
from kafkapy.protocol import encode_response, response_class
from kafkapy.protocol.api_keys import API_KEYS
from kafkapy.protocol.classes import struct_classes

RECEIVE_SIZE = 65536


def canned_produce_body() -> bytes:
    """A Produce v7 response body (after the correlation id): one topic, one partition, NONE."""
    classes = struct_classes(API_KEYS[0].response.body)
    body = response_class(0)(throttle_time_ms=0, responses=[
        classes["TopicProduceResponse"](name="ceiling", partition_responses=[
            classes["PartitionProduceResponse"](index=0, error_code=0, base_offset=0,
                                                log_append_time_ms=-1, log_start_offset=0)])])
    encoded = encode_response(0, 7, 0, body)        # correlation id 0, then the body
    return bytes(encoded)[4:]


async def _send_all(sock: trio.socket.SocketType, data: bytes) -> None:
    view = memoryview(data)
    while view:
        sent = await sock.send(view)
        view = view[sent:]


async def serve(sock: trio.socket.SocketType, body: bytes, log_fd: int | None) -> None:
    splitter = FrameSplitter()
    size = struct.pack(">i", 4 + len(body))
    with sock:
        while True:
            try:
                data = await sock.recv(RECEIVE_SIZE)
            except OSError:
                return
            if not data:
                return
            frames = splitter.feed(data)
            if log_fd is not None:
                for frame in frames:
                    view = memoryview(frame)
                    while view:
                        view = view[os.write(log_fd, view):]
            if frames:
                out = b"".join([b for frame in frames for b in (size, frame[4:8], body)])
                try:
                    await _send_all(sock, out)
                except OSError:
                    return


async def main(port: int, host: str = "127.0.0.1", write_dir: str | None = None) -> None:
    body = canned_produce_body()
    log_fd = None
    if write_dir is not None:
        log_fd = os.open(os.path.join(write_dir, "ceiling.log"),
                         os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    listener = trio.socket.socket()
    listener.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_REUSEADDR, 1)
    await listener.bind((host, port))
    listener.listen(1024)
    print(f"ceiling server listening on {host}:{port}", flush=True)
    async with trio.open_nursery() as nursery:
        while True:
            sock, _ = await listener.accept()
            sock.setsockopt(trio.socket.IPPROTO_TCP, trio.socket.TCP_NODELAY, 1)
            nursery.start_soon(serve, sock, body, log_fd)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=9092)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--write-dir", help="also append every frame to a file here before "
                    "answering (the least a broker that acknowledges after writing does)")
    args = ap.parse_args()
    trio.run(main, args.port, args.host, args.write_dir)
