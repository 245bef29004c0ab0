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

A Fetch request (API key 1) is answered with one canned Fetch v11 answer instead: topic
``raw-fetch`` partition 0, about 1 MiB of record batches (64 records of 1 KiB each, offsets 0
up, the high watermark just after the last), the loopback reference for ``broker_bench``'s raw
fetch (issue 22: ">= 70% of loopback"). It is built once and sent from memory with the
answer's 8-byte head in one ``sendmsg`` (no copy per answer), where a broker reads the log and
``sendfile``s it. ``load_generator``'s fetch client goes round from offset 0 to the high
watermark and again, as it does against a broker.

The raw clients in ``load_generator`` read only the correlation id and the error code of a
Produce answer, so they drive this server exactly as they drive a broker. Any other request is
answered with the canned Produce answer (the readiness check sends a Metadata request and
checks only the correlation id). SIGTERM stops it (Python's default action).
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
from kafkapy._records import build_batch
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


FETCH_TOPIC = "raw-fetch"           # load_generator's raw fetch (broker_bench raw_fetch_1k)
FETCH_ANSWER_BYTES = 1 << 20        # the client's partition_max_bytes
FETCH_RECORD_SIZE = 1024
FETCH_BATCH_RECORDS = 64


def canned_fetch_body() -> bytes:
    """A Fetch v11 response body (after the correlation id): ``FETCH_TOPIC`` partition 0,
    error NONE, whole batches of ``FETCH_BATCH_RECORDS`` records of ``FETCH_RECORD_SIZE``
    random bytes up to ``FETCH_ANSWER_BYTES``, offsets from 0, the high watermark after the
    last record."""
    value = os.urandom(FETCH_RECORD_SIZE)
    batches: list[bytes] = []
    size = offset = 0
    while True:
        batch = build_batch([(None, value, [], 1_700_000_000_000)] * FETCH_BATCH_RECORDS,
                            base_offset=offset)
        if size + len(batch) > FETCH_ANSWER_BYTES:
            break
        batches.append(batch)
        size += len(batch)
        offset += FETCH_BATCH_RECORDS
    records = b"".join(batches)
    classes = struct_classes(API_KEYS[1].response.body)
    body = response_class(1)(throttle_time_ms=0, error_code=0, session_id=0, responses=[
        classes["FetchableTopicResponse"](topic=FETCH_TOPIC, partitions=[
            classes["PartitionData"](partition_index=0, error_code=0, high_watermark=offset,
                                     last_stable_offset=offset, log_start_offset=0,
                                     aborted_transactions=None, preferred_read_replica=-1,
                                     records=records)])])
    encoded = encode_response(1, 11, 0, body)       # correlation id 0, then the body
    return bytes(encoded)[4:]


async def _send_parts(sock: trio.socket.SocketType, parts: list[bytes]) -> None:
    """``parts`` in order with ``sendmsg`` (resumed after a partial send), without joining
    them."""
    views = [memoryview(p) for p in parts]
    while views:
        sent = await sock.sendmsg(views)
        while views and sent >= len(views[0]):
            sent -= len(views[0])
            views.pop(0)
        if views and sent:
            views[0] = views[0][sent:]


def _joined_small(parts: list[bytes]) -> list[bytes]:
    """Runs of small parts joined (one buffer per run), large ones (a Fetch answer's body) kept
    as they are: ``sendmsg`` takes at most IOV_MAX buffers, and a pipelined Produce load
    answers hundreds of frames per read."""
    out: list[bytes] = []
    run: list[bytes] = []
    for part in parts:
        if len(part) < 4096:
            run.append(part)
            continue
        if run:
            out.append(b"".join(run))
            run = []
        out.append(part)
    if run:
        out.append(b"".join(run))
    return out


async def serve(sock: trio.socket.SocketType, body: bytes, fetch_body: bytes,
                log_fd: int | None) -> None:
    splitter = FrameSplitter()
    size = struct.pack(">i", 4 + len(body))
    fetch_size = struct.pack(">i", 4 + len(fetch_body))
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
            # In request order: the canned Produce answers of a run of frames joined into
            # one send, a Fetch answer sent on its own (head and body, not joined).
            parts: list[bytes] = []
            for frame in frames:
                if frame[:2] == b"\x00\x01":
                    parts += (fetch_size + frame[4:8], fetch_body)
                else:
                    parts += (size, frame[4:8], body)
            if parts:
                try:
                    await _send_parts(sock, _joined_small(parts))
                except OSError:
                    return


async def main(port: int, host: str = "127.0.0.1", write_dir: str | None = None) -> None:
    body = canned_produce_body()
    fetch_body = canned_fetch_body()
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
            nursery.start_soon(serve, sock, body, fetch_body, log_fd)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=9092)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--write-dir", help="also append every frame to a file here before "
                    "answering (the least a broker that acknowledges after writing does)")
    args = ap.parse_args()
    trio.run(main, args.port, args.host, args.write_dir)
