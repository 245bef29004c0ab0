"""The early answer (``SocketServer._request``) on a real broker's Produce path: a client
that waits at a window of 5 small Produce requests, its requests encoded and its answers
decoded by kafka-python's protocol classes, gets its answers in order with the offsets of its
records while the broker writes the first answer of a read at once, and the log holds every
record once."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder

import kafkapy
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.network import SocketServer, socket_server

WINDOW = 5
REQUESTS = 3000
VERSION = 7


def _request(correlation_id: int) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 20)
    assert builder.append(0, 1_700_000_000_000, None, b"v%06d" % correlation_id, []) \
        is not None
    data = ProduceRequest.TopicProduceData.PartitionProduceData
    request = ProduceRequest(version=VERSION, transactional_id=None, acks=1, timeout_ms=30000,
                             topic_data=[ProduceRequest.TopicProduceData(
                                 name="window", partition_data=[
                                     data(index=0, records=bytes(builder.build()))])])
    request.with_header(correlation_id=correlation_id, client_id="window-client")
    return bytes(request.encode(header=True, framed=True))


def _frames(sock: socket.socket, buffer: bytearray) -> list[bytes]:
    """The whole size-prefixed frames of one ``recv`` (and any kept from the last)."""
    chunk = sock.recv(1 << 16)
    assert chunk, "the broker closed the connection"
    buffer += chunk
    frames = []
    while len(buffer) >= 4:
        size = int.from_bytes(buffer[:4], "big")
        if len(buffer) < 4 + size:
            break
        frames.append(bytes(buffer[4:4 + size]))
        del buffer[:4 + size]
    return frames


def test_a_client_that_waits_at_its_window_gets_every_answer_in_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The broker runs in a thread of this process, so that a poll may come late (the GIL):
    # the probe's timing guard, for clients in other processes, is off.
    monkeypatch.setattr(socket_server, "PROBE_S", 3600.0)
    early = []
    hold_or_send = SocketServer._hold_or_send

    def counting(self: SocketServer, conn: Any, answer: bytes, hold: bool) -> bool:
        if not hold and conn.frames:        # written while its read has frames left
            early.append(True)
        return hold_or_send(self, conn, answer, hold)

    monkeypatch.setattr(SocketServer, "_hold_or_send", counting)
    with kafkapy.Broker() as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        admin.create_topics([NewTopic("window", 1, 1)])["window"].result(30)
        host, port = broker.bootstrap_servers.split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(b"".join(_request(i) for i in range(WINDOW)))
            sent, answered, buffer = WINDOW, 0, bytearray()
            while answered < REQUESTS:
                for frame in _frames(sock, buffer):
                    answer = ProduceResponse.decode(frame, version=VERSION, header=True)
                    assert answer._header.correlation_id == answered
                    [[partition]] = [t.partition_responses for t in answer.responses]
                    assert (partition.error_code, partition.base_offset) == (0, answered)
                    answered += 1
                    if sent < REQUESTS:         # one more only for an answer: a window of 5
                        sock.sendall(_request(sent))
                        sent += 1
        log = broker.server.replica_manager.partitions[TopicPartition("window", 0)].log
        assert (log.log_end_offset, log.high_watermark) == (REQUESTS, REQUESTS)
    assert early, "no answer was written early: the window was not learnt"
