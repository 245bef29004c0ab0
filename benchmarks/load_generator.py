"""Broker-bound load: raw-socket Kafka clients that cost the machine as little as possible.

    PYTHONPATH=. python -m benchmarks.load_generator produce HOST:PORT TOPIC [options]
    PYTHONPATH=. python -m benchmarks.load_generator fetch HOST:PORT TOPIC [options]

A Python client built on a full Kafka client library (confluent-kafka, kafka-python) saturates a
core on its own; these clients show what the broker can do instead. Each connection runs in
its own process (``run_clients``: multiprocessing with ``spawn``), so on a 2-core machine the
broker gets a core while the clients mostly sleep in ``recv``.

Theory of operation
-------------------

- **Produce** (``produce_client``): a set of ProduceRequest v7 frames (one topic, one partition
  each, one v2 batch of ``records`` records of ``record_size`` random bytes, no compression)
  is encoded once by kafkapy's codec before the clock starts; frame ``i`` carries correlation
  id ``i`` and the partition ``partitions[i % len(partitions)]``, and the frames are sent in a
  cycle. ``in_flight`` requests are kept outstanding: the first ``in_flight`` go out at once,
  then every answer read lets one more go (the frames freed by one ``recv`` leave in one
  ``sendmsg``). Answers are read with ``recv_into`` into one reused buffer and parsed only as
  far as needed: the size prefix, the correlation id (it must be the next expected one: a
  broker answers one connection in order), the topic name's length (to find the error code
  behind it) and the partition's error code, which must be NONE. Runs for ``duration``
  seconds (or ``requests`` requests), then drains the requests in flight.
- **Fetch** (``fetch_client``): one FetchRequest v11 frame (one partition, ``max_wait_ms``,
  ``partition_max_bytes``, isolation READ_UNCOMMITTED) encoded once into a ``bytearray``; the
  fetch offset and correlation id are patched in place before each send (their positions are
  found by encoding a sentinel offset). One request in flight, as a consumer keeps per broker.
  The answer is received with ``MSG_WAITALL`` into one reused buffer; the client reads the
  top-level and partition error codes and the high watermark at fixed positions (skipping the
  aborted-transactions array if any), then walks the record batches' 12-byte headers (base
  offset, length) to find the last complete batch and reads its last offset delta: the next
  fetch offset. The bytes themselves are never copied or parsed. At the high watermark the
  client starts again at the log start: the partition is read over and over for ``duration``
  seconds.
- **Idle connections** (``idle_client``): ``count`` connections, each sends one ApiVersions v0
  request and reads the answer, then all stay open, idle, until the harness has measured the
  broker's memory.
- **A crowd of producers** (``crowd_producer_client``): ``connections`` connections in one
  process, each opened *after* the release (so the harness can measure the idle crowd first)
  with one ApiVersions v0 exchange, then sending one one-record ProduceRequest v7 (acks=1)
  every ``interval`` seconds, one request in flight per connection, for ``seconds``. The
  sockets are non-blocking in one ``selectors`` loop with a heap of send times; connection
  ``j`` of ``total`` (over all processes) is phase-shifted by ``j / total * interval``, so the
  crowd sends evenly (``total / interval`` requests/s in all). Each answer's latency (send to
  last byte read) is recorded after a ``warmup``; a send that comes due while the previous
  request is still in flight waits for its answer, and how late each send left against its
  schedule is recorded too (``lag``: the client's own delay, not the broker's).

``run_clients`` starts the client processes, waits until every one has connected and encoded
its frames, calls ``meter.begin()``, releases them all at once, collects their results and
calls ``meter.end()``; each result carries the process's own CPU seconds between the release
and its end (``time.process_time``, all threads), so the harness can tell the clients' CPU
from the broker's and from other processes'.

Versions: Produce v7, Fetch v11, ApiVersions v0, Metadata v1: the last non-flexible versions
that kafkapy, Tansu 0.6.0 and noida-db 0.2.3 all support (see ``benchmarks.peers``), so the
same bytes go to every broker.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import multiprocessing
import os
import queue
import resource
import selectors
import socket
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.peers import read_frame, request_frame
from kafkapy.protocol import API_KEYS, request_class
from kafkapy.protocol.classes import struct_classes
from kafkapy.protocol.records import build_batch

PRODUCE_VERSION = 7
FETCH_VERSION = 11
CLIENT_ID = "kafkapy-load"
SETUP_TIMEOUT = 60.0
_SENTINEL = 0x0123456789ABCDEF
TIMEOUT_DRAIN = 30.0
SLOW_MS = 5.0          # crowd producers: answers slower than this are listed


class BrokerError(RuntimeError):
    """The broker answered an error code (``code``) or an answer the client cannot follow."""

    def __init__(self, message: str, code: int = -1) -> None:
        super().__init__(message)
        self.code = code


def _address(bootstrap: str) -> tuple[str, int]:
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    return host, int(port)


def _connect(bootstrap: str) -> socket.socket:
    sock = socket.create_connection(_address(bootstrap), timeout=SETUP_TIMEOUT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(None)
    return sock


# ------------------------------------------------------------------------------ produce

def produce_frames(topic: str, partitions: Sequence[int], records: int, record_size: int,
                   acks: int, count: int, timeout_ms: int = 30000) -> list[bytes]:
    """``count`` ProduceRequest v7 frames (size prefix included): frame ``i`` has correlation
    id ``i`` and one batch of ``records`` records for ``partitions[i % len(partitions)]``."""
    c = struct_classes(API_KEYS[0].request.body)
    payload = os.urandom(record_size)
    now = int(time.time() * 1000)
    batch = build_batch([(None, payload, None, now)] * records)
    frames = []
    for i in range(count):
        partition = partitions[i % len(partitions)]
        body = c["ProduceRequest"](transactional_id=None, acks=acks, timeout_ms=timeout_ms,
                                   topic_data=[c["TopicProduceData"](name=topic, partition_data=[
                                       c["PartitionProduceData"](index=partition,
                                                                 records=batch)])])
        frames.append(request_frame(0, PRODUCE_VERSION, body, i, CLIENT_ID))
    return frames


def _send_frames(sock: socket.socket, frames: list[bytes]) -> None:
    if len(frames) == 1:
        sock.sendall(frames[0])
        return
    total = sum(len(f) for f in frames)
    sent = sock.sendmsg(frames)
    if sent < total:                      # a partial send: the rest in order
        rest = memoryview(b"".join(frames))[sent:]
        sock.sendall(rest)


def produce_loop(sock: socket.socket, frames: Sequence[bytes], in_flight: int,
                 deadline: float, max_requests: int | None = None) -> int:
    """Pipelines ``frames`` (cyclically) on ``sock`` until ``deadline`` (perf_counter) or
    ``max_requests``, then drains; returns the number of requests answered (all NONE)."""
    m = len(frames)
    limit = max_requests if max_requests is not None else 1 << 62
    buf = bytearray(1 << 16)
    view = memoryview(buf)
    unpack = struct.unpack_from
    perf = time.perf_counter
    have = pos = 0
    sent = answered = 0
    first = min(in_flight, limit)
    _send_frames(sock, [frames[i % m] for i in range(first)])
    sent = first
    sending = sent < limit
    while answered < sent:
        if pos == have:
            pos = have = 0
        elif len(buf) - have < 512:
            buf[:have - pos] = buf[pos:have]
            have -= pos
            pos = 0
        n = sock.recv_into(view[have:])
        if not n:
            raise BrokerError("the broker closed the connection")
        have += n
        new = 0
        while have - pos >= 4:
            (size,) = unpack(">i", buf, pos)
            end = pos + 4 + size
            if end > have:
                if size + 4 > len(buf):        # never for Produce answers; be safe anyway
                    buf.extend(bytes(size + 4))
                    view = memoryview(buf)
                break
            corr, _topics, name_len = unpack(">iih", buf, pos + 4)
            if corr != answered % m:
                raise BrokerError(f"correlation id {corr}, expected {answered % m}")
            (code,) = unpack(">h", buf, pos + 22 + name_len)
            if code:
                raise BrokerError(f"Produce answered error code {code}", code)
            answered += 1
            new += 1
            pos = end
        if sending and new:
            if perf() >= deadline:
                sending = False
            else:
                k = min(new, limit - sent)
                _send_frames(sock, [frames[(sent + i) % m] for i in range(k)])
                sent += k
                sending = sent < limit
    return answered


@dataclass(frozen=True)
class ProduceJob:
    """One produce connection's work (picklable, for ``run_clients``)."""

    bootstrap: str
    topic: str
    partitions: tuple[int, ...]
    records: int = 64
    record_size: int = 1024
    acks: int = 1
    in_flight: int = 5
    duration: float = 3.0
    requests: int | None = None


def produce_client(job: ProduceJob, sync: Callable[[], float]) -> dict[str, Any]:
    m = len(job.partitions) * max(1, -(-max(2 * job.in_flight, 8) // len(job.partitions)))
    frames = produce_frames(job.topic, job.partitions, job.records, job.record_size, job.acks, m)
    sock = _connect(job.bootstrap)
    try:
        start = sync()
        answered = produce_loop(sock, frames, job.in_flight, start + job.duration,
                                job.requests)
        end = time.perf_counter()
    finally:
        sock.close()
    return {"requests": answered, "records": answered * job.records,
            "payload_bytes": answered * job.records * job.record_size,
            "wire_bytes": answered * len(frames[0]), "start": start, "end": end}


# ------------------------------------------------------------------------------ fetch

def fetch_template(topic: str, partition: int, max_wait_ms: int, partition_max_bytes: int,
                   max_bytes: int) -> tuple[bytearray, int]:
    """A FetchRequest v11 frame (size prefix included) and the position of its fetch offset."""
    c = struct_classes(API_KEYS[1].request.body)
    body = c["FetchRequest"](
        replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=max_bytes,
        isolation_level=0, session_id=0, session_epoch=-1, topics=[c["FetchTopic"](
            topic=topic, partitions=[c["FetchPartition"](
                partition=partition, current_leader_epoch=-1, fetch_offset=_SENTINEL,
                log_start_offset=-1, partition_max_bytes=partition_max_bytes)])],
        forgotten_topics_data=[], rack_id="")
    frame = bytearray(request_frame(1, FETCH_VERSION, body, 0, CLIENT_ID))
    where = frame.find(struct.pack(">q", _SENTINEL))
    assert where > 0 and frame.find(struct.pack(">q", _SENTINEL), where + 1) < 0
    return frame, where


def _recv_exactly(sock: socket.socket, view: memoryview, n: int) -> None:
    got = 0
    while got < n:
        k = sock.recv_into(view[got:n], n - got, socket.MSG_WAITALL)
        if not k:
            raise BrokerError("the broker closed the connection")
        got += k


def fetch_loop(sock: socket.socket, template: bytearray, offset_at: int, deadline: float,
               start_offset: int = 0) -> tuple[int, int, int]:
    """Fetches until ``deadline``, from ``start_offset`` to the high watermark and around
    again; returns (requests, record-batch bytes received, batches received)."""
    unpack = struct.unpack_from
    pack_into = struct.pack_into
    perf = time.perf_counter
    head = bytearray(4)
    head_view = memoryview(head)
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    offset = start_offset
    requests = total = batches = 0
    corr = 0
    while perf() < deadline:
        corr = (corr + 1) & 0x7FFFFFFF
        pack_into(">q", template, offset_at, offset)
        pack_into(">i", template, 8, corr)
        sock.sendall(template)
        _recv_exactly(sock, head_view, 4)
        (size,) = unpack(">i", head, 0)
        if size > len(buf):
            buf = bytearray(size)
            view = memoryview(buf)
        _recv_exactly(sock, view, size)
        requests += 1
        got_corr, _throttle, top_error = unpack(">iih", buf, 0)
        if got_corr != corr:
            raise BrokerError(f"correlation id {got_corr}, expected {corr}")
        if top_error:
            raise BrokerError(f"Fetch answered error code {top_error}", top_error)
        (name_len,) = unpack(">h", buf, 18)
        q = 20 + name_len                                     # the partitions array
        error, high_watermark = unpack(">hq", buf, q + 8)
        if error:
            raise BrokerError(f"Fetch answered partition error code {error}", error)
        (aborted,) = unpack(">i", buf, q + 34)
        q += 38 + 16 * max(aborted, 0)                        # PreferredReadReplica
        (length,) = unpack(">i", buf, q + 4)
        pos = begin = q + 8
        end = begin + max(length, 0)
        next_offset = -1
        while pos + 61 <= end:                                # a v2 batch header is 61 bytes
            base, batch_length = unpack(">qi", buf, pos)
            after = pos + 12 + batch_length
            if after > end:
                break                                         # a partial batch at the end
            (last_delta,) = unpack(">i", buf, pos + 23)
            next_offset = base + last_delta + 1
            batches += 1
            pos = after
        total += pos - begin
        if next_offset < 0:
            if offset < high_watermark:
                raise BrokerError(f"no complete batch at offset {offset} below the high "
                                  f"watermark {high_watermark}")
            offset = start_offset                             # nothing new: around again
        else:
            offset = next_offset if next_offset < high_watermark else start_offset
    return requests, total, batches


@dataclass(frozen=True)
class FetchJob:
    """One fetch connection's work (picklable, for ``run_clients``)."""

    bootstrap: str
    topic: str
    partition: int = 0
    duration: float = 3.0
    partition_max_bytes: int = 1 << 20          # librdkafka's max.partition.fetch.bytes
    max_bytes: int = 50 << 20                   # librdkafka's fetch.max.bytes
    max_wait_ms: int = 500


def fetch_client(job: FetchJob, sync: Callable[[], float]) -> dict[str, Any]:
    template, offset_at = fetch_template(job.topic, job.partition, job.max_wait_ms,
                                         job.partition_max_bytes, job.max_bytes)
    sock = _connect(job.bootstrap)
    try:
        start = sync()
        requests, total, batches = fetch_loop(sock, template, offset_at, start + job.duration)
        end = time.perf_counter()
    finally:
        sock.close()
    return {"requests": requests, "bytes": total, "batches": batches, "start": start,
            "end": end}


def log_end_offset(bootstrap: str, topic: str, partition: int, start: int) -> int:
    """The offset after the last record of the partition, read from the log itself: fetches
    (max wait 100 ms) from ``start`` onwards until three answers in a row hold no new
    complete batch. The check behind every produce run: Tansu 0.6.0 answers ListOffsets
    (latest) with the base offset of the last batch + 1, not its last offset + 1 (its Fetch
    high watermark is right), answers a Fetch with max wait 0 with no topics at all, and
    sometimes answers one with a short wait with nothing although records are there."""
    template, offset_at = fetch_template(topic, partition, 100, 1 << 20, 50 << 20)
    empty = 0
    unpack = struct.unpack_from
    offset = start
    with _connect(bootstrap) as sock:
        for corr in range(1, 1 << 30):
            struct.pack_into(">q", template, offset_at, offset)
            struct.pack_into(">i", template, 8, corr)
            sock.sendall(template)
            buf = read_frame(sock)
            if unpack(">i", buf, 14)[0] < 1:                  # no topic in the answer
                empty += 1
                if empty == 3:
                    break
                continue
            (name_len,) = unpack(">h", buf, 18)
            q = 20 + name_len
            (error,) = unpack(">h", buf, q + 8)
            if error:
                raise BrokerError(f"Fetch answered partition error code {error}", error)
            (aborted,) = unpack(">i", buf, q + 34)
            q += 38 + 16 * max(aborted, 0)
            (length,) = unpack(">i", buf, q + 4)
            pos, end = q + 8, q + 8 + max(length, 0)
            moved = False
            while pos + 61 <= end:
                base, batch_length = unpack(">qi", buf, pos)
                if pos + 12 + batch_length > end:
                    break
                (last_delta,) = unpack(">i", buf, pos + 23)
                if base + last_delta + 1 > offset:
                    offset = base + last_delta + 1
                    moved = True
                pos += 12 + batch_length
            empty = 0 if moved else empty + 1
            if empty == 3:
                break
    return offset


# ------------------------------------------------------------------------------ idle

@dataclass(frozen=True)
class IdleJob:
    bootstrap: str
    count: int = 1000
    hold: float = 2.0            # seconds to stay connected after the release


def idle_client(job: IdleJob, sync: Callable[[], float]) -> dict[str, Any]:
    """Opens ``count`` connections (one ApiVersions each) before the release, holds them
    ``hold`` seconds after it (the harness measures the broker meanwhile), then closes."""
    frame = request_frame(18, 0, request_class(18)(), 1, CLIENT_ID)
    socks = []
    try:
        for _ in range(job.count):
            sock = socket.create_connection(_address(job.bootstrap), timeout=SETUP_TIMEOUT)
            sock.sendall(frame)
            read_frame(sock)
            socks.append(sock)
        start = sync()
        time.sleep(job.hold)
    finally:
        for sock in socks:
            sock.close()
    return {"connections": len(socks), "start": start, "end": time.perf_counter()}


def raise_nofile(need: int = 0) -> int:
    """Raises this process's soft ``RLIMIT_NOFILE`` to its hard limit (children inherit it);
    returns the new soft limit. Raises ``RuntimeError`` if that is below ``need``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft < need:
        raise RuntimeError(f"RLIMIT_NOFILE is {soft}, {need} descriptors needed: raise the "
                           f"hard limit (ulimit -Hn)")
    return soft


def _open_idle(bootstrap: str, frame: bytes) -> socket.socket:
    sock = socket.create_connection(_address(bootstrap), timeout=SETUP_TIMEOUT)
    sock.sendall(frame)
    read_frame(sock)
    return sock


@dataclass(frozen=True)
class CrowdIdleJob:
    """``count`` idle connections held ``hold`` seconds after the release (``idle_client``
    with the descriptor limit raised first: one process may hold thousands)."""

    bootstrap: str
    count: int = 2000
    hold: float = 2.0


def crowd_idle_client(job: CrowdIdleJob, sync: Callable[[], float]) -> dict[str, Any]:
    raise_nofile(job.count + 64)
    return idle_client(IdleJob(job.bootstrap, job.count, job.hold), sync)


@dataclass(frozen=True)
class CrowdProducerJob:
    """One process's share of the producer crowd (picklable, for ``run_clients``)."""

    bootstrap: str
    topic: str
    partitions: int             # connection j produces to partition j % partitions
    connections: int            # in this process
    first: int                  # this process's first connection's index in the crowd
    total: int                  # connections in the crowd, all processes
    interval: float = 0.5       # seconds between one connection's requests
    seconds: float = 10.0       # sending, after every connection of this process is open
    warmup: float = 1.0         # seconds of answers not recorded at the start
    delay: float = 1.0          # seconds after the release before connecting
    settle: float = 3.0         # seconds after connecting starts: sending starts
    record_size: int = 100


def crowd_producer_client(job: CrowdProducerJob, sync: Callable[[], float]) -> dict[str, Any]:
    """See the module docstring; returns the latencies (ms, sorted), lags (ms, sorted), the
    requests sent and answered, and the window's times (perf_counter)."""
    raise_nofile(job.connections + 64)
    templates = [bytearray(f) for f in (
        produce_frames(job.topic, (p,), 1, job.record_size, 1, 1)[0]
        for p in range(job.partitions))]
    hello = request_frame(18, 0, request_class(18)(), 1, CLIENT_ID)
    start = sync()
    time.sleep(job.delay)
    socks = []
    sel = selectors.DefaultSelector()
    try:
        for _ in range(job.connections):
            socks.append(_open_idle(job.bootstrap, hello))
        connected = time.perf_counter()
        n = job.connections
        corr = [0] * n
        sent_at = [0.0] * n
        busy = [False] * n
        due_late: list[float | None] = [None] * n    # a send due while one is in flight
        bufs = [bytearray() for _ in range(n)]
        for i, sock in enumerate(socks):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setblocking(False)
            sel.register(sock, selectors.EVENT_READ, i)
        # One start for the whole crowd (every process computes the same), so that the
        # phases interleave across processes; later only if this process connected late.
        begin = max(start + job.delay + job.settle, connected + 0.1)
        # No collections in the client while it measures: with the modules imported a full
        # one takes ~100 ms here, and an answer waiting for it would count as the broker's.
        gc.disable()
        stop = begin + job.seconds
        record_from = begin + job.warmup
        heap = [(begin + (job.first + i) / job.total * job.interval, i) for i in range(n)]
        heapq.heapify(heap)
        latencies: list[float] = []
        lags: list[float] = []
        slow: list[tuple[float, float]] = []     # (sent, ms) of answers slower than SLOW_MS
        sent = answered = 0
        perf = time.perf_counter
        unpack = struct.unpack_from

        def send(i: int, due: float) -> None:
            nonlocal sent
            corr[i] = (corr[i] + 1) & 0x7FFFFFFF
            frame = templates[(job.first + i) % job.partitions]
            struct.pack_into(">i", frame, 8, corr[i])
            now = perf()
            if socks[i].send(frame) != len(frame):     # ~170 bytes into an empty buffer
                raise BrokerError("a partial send of one small request")
            sent_at[i] = now
            busy[i] = True
            sent += 1
            if due >= record_from:
                lags.append((now - due) * 1e3)

        while heap or any(busy):
            now = perf()
            timeout = max(0.0, heap[0][0] - now) if heap else 0.5
            for key, _ in sel.select(min(timeout, 0.5)):
                i = key.data
                chunk = socks[i].recv(65536)
                if not chunk:
                    raise BrokerError("the broker closed the connection")
                buf = bufs[i]
                buf += chunk
                while len(buf) >= 4:
                    (size,) = unpack(">i", buf, 0)
                    if len(buf) < 4 + size:
                        break
                    got, _topics, name_len = unpack(">iih", buf, 4)
                    if got != corr[i] or not busy[i]:
                        raise BrokerError(f"correlation id {got}, expected {corr[i]}")
                    (code,) = unpack(">h", buf, 22 + name_len)
                    if code:
                        raise BrokerError(f"Produce answered error code {code}", code)
                    done = perf()
                    if sent_at[i] >= record_from:
                        ms = (done - sent_at[i]) * 1e3
                        latencies.append(ms)
                        if ms > SLOW_MS and len(slow) < 10_000:
                            slow.append((sent_at[i], ms))
                    answered += 1
                    busy[i] = False
                    del buf[:4 + size]
                    late = due_late[i]
                    if late is not None:
                        due_late[i] = None
                        send(i, late)
            now = perf()
            while heap and heap[0][0] <= now:
                due, i = heapq.heappop(heap)
                if due + job.interval < stop:
                    heapq.heappush(heap, (due + job.interval, i))
                if busy[i]:
                    if due_late[i] is None:
                        due_late[i] = due
                else:
                    send(i, due)
            if perf() > stop + TIMEOUT_DRAIN:
                raise BrokerError(f"{sum(busy)} requests unanswered {TIMEOUT_DRAIN} s after "
                                  "the end")
        end = perf()
    finally:
        gc.enable()
        sel.close()
        for sock in socks:
            sock.close()
    latencies.sort()
    lags.sort()
    return {"latencies": latencies, "lags": lags, "slow": slow, "sent": sent,
            "answered": answered,
            "start": start, "connected": connected, "begin": begin, "stop": stop,
            "end": end, "connections": len(socks)}


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50, p99, p99.9 and max of ``values`` (sorted), as the latency scenarios report them."""
    n = len(values)
    if not n:
        raise ValueError("no values")
    return {"p50": values[n // 2], "p99": values[min(n - 1, int(n * 0.99))],
            "p999": values[min(n - 1, int(n * 0.999))], "max": values[-1]}


# ------------------------------------------------------------------------------ processes

class Meter(Protocol):
    def begin(self) -> None: ...
    def end(self) -> None: ...


class _NoMeter:
    def begin(self) -> None:
        pass

    def end(self) -> None:
        pass


def _client_main(fn: Callable[[Any, Callable[[], float]], dict[str, Any]], job: Any,
                 ready: Any, go: Any, results: Any, index: int) -> None:
    cpu0 = [0.0]

    def sync() -> float:
        ready.wait()
        go.wait()
        cpu0[0] = time.process_time()
        return time.perf_counter()

    try:
        result = fn(job, sync)
        result["cpu"] = time.process_time() - cpu0[0]
        results.put((index, "ok", result))
    except BaseException:
        ready.abort()
        results.put((index, "error", traceback.format_exc()))


def run_clients(clients: Sequence[tuple[Callable[[Any, Callable[[], float]], dict[str, Any]],
                                        Any]],
                meter: Meter | None = None, timeout: float = 300.0) -> list[dict[str, Any]]:
    """Runs each ``(fn, job)`` in its own (spawned) process: ``fn(job, sync)`` sets up, calls
    ``sync()`` (which returns the shared start time once every client is ready and
    ``meter.begin()`` has run), does its work and returns a dict; each result gets the
    process's CPU seconds after the release under ``"cpu"``. Raises ``RuntimeError`` with the
    client's traceback if one fails."""
    meter = meter or _NoMeter()
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Barrier(len(clients) + 1, timeout=SETUP_TIMEOUT)
    go = ctx.Event()
    results = ctx.Queue()
    procs = [ctx.Process(target=_client_main, args=(fn, job, ready, go, results, i),
                         daemon=True) for i, (fn, job) in enumerate(clients)]
    for p in procs:
        p.start()
    out: dict[int, dict[str, Any]] = {}
    errors: list[str] = []
    try:
        started = True
        try:
            ready.wait()
        except threading.BrokenBarrierError:     # a client failed (or hung) in its setup
            started = False
        else:
            meter.begin()
            go.set()
        deadline = time.monotonic() + timeout
        while len(out) < len(procs):
            try:
                index, status, value = results.get(
                    timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                errors.append(f"no result within {timeout} s")
                break
            if status != "ok":
                errors.append(value)
                break
            out[index] = value
        if not started and not errors:
            errors.append("a client did not get ready")
        if not errors:
            meter.end()
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
                p.join()
    if errors:
        raise RuntimeError("a client failed:\n" + "\n".join(errors))
    return [out[i] for i in range(len(procs))]


def aggregate(results: Sequence[dict[str, Any]], key: str) -> tuple[float, float]:
    """(sum of ``key`` over the clients, seconds from the common start to the last end)."""
    start = min(r["start"] for r in results)
    end = max(r["end"] for r in results)
    return sum(r[key] for r in results), end - start


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["produce", "fetch"])
    ap.add_argument("bootstrap")
    ap.add_argument("topic")
    ap.add_argument("--connections", type=int, default=1)
    ap.add_argument("--partitions", type=int, default=1,
                    help="produce: partitions, spread over the connections")
    ap.add_argument("--records", type=int, default=64, help="records per batch")
    ap.add_argument("--size", type=int, default=1024, help="bytes per record")
    ap.add_argument("--acks", type=int, default=1)
    ap.add_argument("--in-flight", type=int, default=5)
    ap.add_argument("--duration", type=float, default=3.0)
    args = ap.parse_args(argv)
    if args.mode == "produce":
        jobs = [(produce_client, ProduceJob(
            args.bootstrap, args.topic,
            tuple(p for p in range(args.partitions) if p % args.connections == c),
            args.records, args.size, args.acks, args.in_flight, args.duration))
            for c in range(args.connections)]
        results = run_clients(jobs)
        payload, seconds = aggregate(results, "payload_bytes")
        records, _ = aggregate(results, "records")
        print(f"produce: {payload / seconds / 1e6:.1f} MB/s, {records / seconds:,.0f} "
              f"records/s, client CPU {sum(r['cpu'] for r in results):.2f} s in {seconds:.2f} s")
    else:
        results = run_clients([(fetch_client, FetchJob(args.bootstrap, args.topic,
                                                        duration=args.duration))])
        total, seconds = aggregate(results, "bytes")
        print(f"fetch: {total / seconds / 1e6:.1f} MB/s, {results[0]['requests']} requests, "
              f"client CPU {results[0]['cpu']:.2f} s in {seconds:.2f} s")


if __name__ == "__main__":
    main()
