"""Capture the request frames real Kafka clients send, as test vectors for kafkapy.

A developer tool, not part of the test suite. Run it from the repository root with the venv
that has the client libraries::

    python tests/vectors/capture.py            # all scenarios
    python tests/vectors/capture.py --only confluent-produce_gzip

It starts a minimal fake Kafka broker on 127.0.0.1 (threads, one per connection) and drives
confluent-kafka (librdkafka), kafka-python and aiokafka against it. The fake broker answers
with responses encoded by **kafka-python's protocol classes** (``kafka.protocol.*``), an
encoder independent of kafkapy: the vectors exist to test kafkapy's decoder, so kafkapy is
never used here. Every request frame it receives (the payload after the 4-byte size) is
written to ``tests/protocol/vectors/frames/<client>-<scenario>-<NNN>-<ApiName>-v<version>.bin``
and each scenario is described in ``tests/protocol/vectors/manifest.json``: client, library
version, compression codec, idempotence, producer id/epoch handed out, and the exact records
sent (bytes as hex; JSON null for a null key / value / header value, "" for empty).

The broker advertises the "Rec" ranges of the protocol reference's version matrix (Produce
0-11, Fetch 4-12, Metadata 0-12, ApiVersions 0-4, ...), so every client picks its natural
versions. It keeps produced batches in memory (offsets assigned, CRC untouched since
baseOffset and partitionLeaderEpoch are outside it) and serves them back to Fetch, so the
consumer scenario sees the records a producer scenario wrote.

To keep the vector set small, at most ``MAX_FRAMES_PER_API`` frames per (scenario, API) are
written; later ones (heartbeats, repeated Metadata and Fetch polls) are answered but not saved.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socketserver
import struct
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from kafka.protocol.admin.cluster import DescribeClusterRequest, DescribeClusterResponse
from kafka.protocol.admin.configs import DescribeConfigsRequest, DescribeConfigsResponse
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.consumer.offsets import (
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.metadata.api_versions import ApiVersionsResponse
from kafka.protocol.metadata.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.protocol.producer.transaction import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
)

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "protocol" / "vectors"
FRAMES = VECTORS / "frames"
MANIFEST = VECTORS / "manifest.json"

NODE_ID = 1
CLUSTER_ID = "kafkapy-vectors"
NUM_PARTITIONS = 2
MAX_FRAMES_PER_API = 6
FIRST_PRODUCER_ID = 4000

# "Rec" column of kafka-protocol.md §3.1 (what kafkapy should advertise).
ADVERTISED: dict[int, tuple[int, int]] = {
    0: (0, 11), 1: (4, 12), 2: (1, 10), 3: (0, 12), 8: (2, 9), 9: (1, 9), 10: (0, 5),
    11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5), 16: (0, 5), 17: (0, 1),
    18: (0, 4), 19: (2, 7), 20: (1, 5), 21: (0, 2), 22: (0, 4), 23: (2, 4), 24: (0, 3),
    25: (0, 3), 26: (0, 4), 28: (0, 3), 32: (1, 4), 33: (0, 2), 36: (0, 2), 37: (0, 3),
    42: (0, 2), 44: (0, 1), 47: (0, 0), 60: (0, 1),
}

API_NAMES = {
    0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit",
    9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat",
    13: "LeaveGroup", 14: "SyncGroup", 15: "DescribeGroups", 16: "ListGroups",
    17: "SaslHandshake", 18: "ApiVersions", 19: "CreateTopics", 20: "DeleteTopics",
    21: "DeleteRecords", 22: "InitProducerId", 23: "OffsetForLeaderEpoch",
    24: "AddPartitionsToTxn", 25: "AddOffsetsToTxn", 26: "EndTxn", 28: "TxnOffsetCommit",
    32: "DescribeConfigs", 33: "AlterConfigs", 36: "SaslAuthenticate",
    37: "CreatePartitions", 42: "DeleteGroups", 44: "IncrementalAlterConfigs",
    47: "OffsetDelete", 60: "DescribeCluster",
}

CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

# --------------------------------------------------------------------------------------------
# The fixed record set every producer scenario sends.

T0 = 1_700_000_000_000
BIG_VALUE = b"".join(
    b"%05d the quick brown fox jumps over the lazy dog; kafkapy vector\n" % i
    for i in range(320))[:20_480]

# (partition, key, value, headers, timestamp_ms)
RECORDS: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]], int]] = [
    (0, b"key-0", b"value-0", [], T0),
    (0, None, b"value with a null key", [], T0 + 1),
    (0, b"tombstone-key", None, [], T0 + 2),
    (0, b"empty-value-key", b"", [], T0 + 3),
    (0, b"headers-key", b"value with headers",
     [("trace-id", b"\x00\x01abc"), ("null-h\u00e9ader", None)], T0 + 4),
    (0, "\u043a\u043b\u044e\u0447-\u00fc-\U0001f511".encode(), "unicode \u2713".encode(), [],
     T0 + 5),
    (0, b"big-value", BIG_VALUE, [("size", b"20480")], T0 + 6),
    (0, b"earlier-timestamp", b"negative timestamp delta", [], T0 - 1_000),
    # Partition 1 values are repetitive so that compression pays off: librdkafka sends a
    # batch uncompressed when compressing would not make it smaller.
    (1, b"p1-key", b"partition 1 value; " * 16, [], T0 + 8),
    (1, b"", b"empty (not null) key; " * 16, [], T0 + 9),
]


def record_set_name(client: str) -> str:
    return "no_null_header_values" if client == "kafkapython" else "standard"


def records_for(client: str) -> list[Any]:
    """The record set as a client can send it. kafka-python's send() rejects a null header
    value ("All headers items must be (str, bytes) tuples", although its encoder could write
    one), so for kafka-python that header value is empty instead."""
    if record_set_name(client) == "standard":
        return RECORDS
    return [(p, k, v, [(hk, b"" if hv is None else hv) for hk, hv in h], ts)
            for p, k, v, h, ts in RECORDS]


def _hex(b: bytes | None) -> str | None:
    return None if b is None else b.hex()


def records_json(client: str) -> list[dict[str, Any]]:
    return [
        {"partition": p, "key": _hex(k), "value": _hex(v),
         "headers": [[hk, _hex(hv)] for hk, hv in h], "timestamp": ts}
        for p, k, v, h, ts in records_for(client)
    ]


# --------------------------------------------------------------------------------------------
# The fake broker.


class State:
    """Everything the broker knows; one lock for all of it (the traffic is tiny)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.port = 0
        self.prefix: str | None = None  # "<client>-<scenario>" while capturing
        self.seq = 0
        self.per_api: dict[int, int] = {}
        self.frames: list[str] = []
        self.unhandled: list[str] = []
        self.topics: dict[str, int] = {}  # name -> partition count
        self.logs: dict[tuple[str, int], list[tuple[int, int, bytes]]] = {}  # (base, next, batch)
        self.committed: dict[tuple[str, str, int], int] = {}
        self.next_pid = FIRST_PRODUCER_ID
        self.pids: list[int] = []
        self.members = 0

    def start(self, prefix: str) -> None:
        with self.lock:
            self.prefix, self.seq, self.per_api, self.frames = prefix, 0, {}, []
            self.unhandled, self.pids = [], []

    def stop(self) -> list[str]:
        with self.lock:
            self.prefix = None
            return list(self.frames)

    def record(self, frame: bytes, api_key: int, version: int) -> None:
        with self.lock:
            if self.prefix is None:
                return
            n = self.per_api.get(api_key, 0)
            self.per_api[api_key] = n + 1
            self.seq += 1
            if n >= MAX_FRAMES_PER_API:
                return
            name = API_NAMES.get(api_key, f"Api{api_key}")
            fname = f"{self.prefix}-{self.seq:03d}-{name}-v{version}.bin"
            (FRAMES / fname).write_bytes(frame)
            self.frames.append(fname)

    def topic(self, name: str, partitions: int = NUM_PARTITIONS) -> int:
        with self.lock:
            return self.topics.setdefault(name, partitions)

    def end_offset(self, tp: tuple[str, int]) -> int:
        log = self.logs.get(tp)
        return log[-1][1] if log else 0

    def append(self, tp: tuple[str, int], records: bytes) -> int:
        """Store the batches of one Produce partition; returns the first assigned offset."""
        with self.lock:
            log = self.logs.setdefault(tp, [])
            first = offset = self.end_offset(tp)
            pos = 0
            while pos + 61 <= len(records):
                (length,) = struct.unpack_from(">i", records, pos + 8)
                batch = bytearray(records[pos:pos + 12 + length])
                (last_delta,) = struct.unpack_from(">i", batch, 23)
                struct.pack_into(">q", batch, 0, offset)  # baseOffset: not covered by the CRC
                struct.pack_into(">i", batch, 12, 0)  # partitionLeaderEpoch: not covered
                log.append((offset, offset + last_delta + 1, bytes(batch)))
                offset += last_delta + 1
                pos += 12 + length
            return first

    def read(self, tp: tuple[str, int], offset: int, max_bytes: int) -> bytes:
        with self.lock:
            out = b""
            for _base, nxt, batch in self.logs.get(tp, []):
                if nxt <= offset:
                    continue
                if out and len(out) + len(batch) > max_bytes:
                    break
                out += batch
            return out


STATE = State()


def _respond(cls: Any, version: int, corr: int, **fields: Any) -> bytes:
    resp = cls[version](**fields)
    resp.with_header(correlation_id=corr)
    return bytes(resp.encode(header=True, framed=True))


def _broker() -> list[Any]:
    return [MetadataResponse.MetadataResponseBroker(
        node_id=NODE_ID, host="127.0.0.1", port=STATE.port, rack=None)]


def handle(frame: bytes) -> bytes | None:
    """Answer one request frame (None: send nothing, e.g. Produce with acks=0)."""
    api_key, version, corr = struct.unpack_from(">hhi", frame, 0)
    STATE.record(frame, api_key, version)

    if api_key == 18:  # ApiVersions: always answerable, header v0
        lo, hi = ADVERTISED[18]
        keys = [ApiVersionsResponse.ApiVersion(api_key=k, min_version=a, max_version=b)
                for k, (a, b) in sorted(ADVERTISED.items())]
        if not lo <= version <= hi:
            return _respond(ApiVersionsResponse, 0, corr, error_code=35, api_keys=[
                ApiVersionsResponse.ApiVersion(api_key=18, min_version=lo, max_version=hi)])
        return _respond(ApiVersionsResponse, version, corr, error_code=0, api_keys=keys,
                        throttle_time_ms=0)

    handler = HANDLERS.get(api_key)
    if handler is None:
        STATE.unhandled.append(f"{API_NAMES.get(api_key, api_key)} v{version}")
        raise ConnectionAbortedError(f"no handler for api {api_key} v{version}")
    req_cls, resp_cls, fn = handler
    req = req_cls.decode(frame, version=version, header=True)
    fields = fn(req, version)
    if fields is None:
        return None
    return _respond(resp_cls, version, corr, **fields)


def h_metadata(req: Any, version: int) -> dict[str, Any]:
    names = [t.name for t in req.topics] if req.topics else None
    if names is None:
        names = sorted(STATE.topics)
    topics = []
    for name in names:
        n = STATE.topic(name)
        topics.append(MetadataResponse.MetadataResponseTopic(
            error_code=0, name=name, is_internal=False, partitions=[
                MetadataResponse.MetadataResponseTopic.MetadataResponsePartition(
                    error_code=0, partition_index=i, leader_id=NODE_ID, leader_epoch=0,
                    replica_nodes=[NODE_ID], isr_nodes=[NODE_ID], offline_replicas=[])
                for i in range(n)]))
    return dict(throttle_time_ms=0, brokers=_broker(), cluster_id=CLUSTER_ID,
                controller_id=NODE_ID, topics=topics)


def h_produce(req: Any, version: int) -> dict[str, Any] | None:
    responses = []
    for t in req.topic_data:
        parts = []
        for p in t.partition_data:
            base = STATE.append((t.name, p.index), bytes(p.records or b""))
            parts.append(ProduceResponse.TopicProduceResponse.PartitionProduceResponse(
                index=p.index, error_code=0, base_offset=base, log_append_time_ms=-1,
                log_start_offset=0, record_errors=[], error_message=None))
        responses.append(ProduceResponse.TopicProduceResponse(
            name=t.name, partition_responses=parts))
    if req.acks == 0:
        return None
    return dict(responses=responses, throttle_time_ms=0)


def h_init_producer_id(req: Any, version: int) -> dict[str, Any]:
    with STATE.lock:
        pid = STATE.next_pid
        STATE.next_pid += 1
        STATE.pids.append(pid)
    return dict(throttle_time_ms=0, error_code=0, producer_id=pid, producer_epoch=0)


def h_find_coordinator(req: Any, version: int) -> dict[str, Any]:
    if version >= 4:
        return dict(throttle_time_ms=0, coordinators=[
            FindCoordinatorResponse.Coordinator(
                key=k, node_id=NODE_ID, host="127.0.0.1", port=STATE.port, error_code=0,
                error_message=None) for k in req.coordinator_keys])
    return dict(throttle_time_ms=0, error_code=0, error_message=None, node_id=NODE_ID,
                host="127.0.0.1", port=STATE.port)


def h_list_offsets(req: Any, version: int) -> dict[str, Any]:
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            end = STATE.end_offset((t.name, p.partition_index))
            off = 0 if p.timestamp == -2 else end
            parts.append(ListOffsetsResponse.ListOffsetsTopicResponse.ListOffsetsPartitionResponse(
                partition_index=p.partition_index, error_code=0, old_style_offsets=[off],
                timestamp=-1, offset=off, leader_epoch=0))
        topics.append(ListOffsetsResponse.ListOffsetsTopicResponse(name=t.name, partitions=parts))
    return dict(throttle_time_ms=0, topics=topics)


def h_fetch(req: Any, version: int) -> dict[str, Any]:
    responses = []
    total = 0
    for t in req.topics:
        parts = []
        for p in t.partitions:
            tp = (t.topic, p.partition)
            data = STATE.read(tp, p.fetch_offset, p.partition_max_bytes)
            total += len(data)
            end = STATE.end_offset(tp)
            parts.append(FetchResponse.FetchableTopicResponse.PartitionData(
                partition_index=p.partition, error_code=0, high_watermark=end,
                last_stable_offset=end, log_start_offset=0, aborted_transactions=None,
                preferred_read_replica=-1, records=data))
        responses.append(FetchResponse.FetchableTopicResponse(topic=t.topic, partitions=parts))
    if total == 0:  # long poll, so an idle consumer does not spin
        time.sleep(min(req.max_wait_ms, 500) / 1000)
    return dict(throttle_time_ms=0, error_code=0, session_id=0, responses=responses)


def h_offset_for_leader_epoch(req: Any, version: int) -> dict[str, Any]:
    R = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
    return dict(throttle_time_ms=0, topics=[R(topic=t.topic, partitions=[
        R.EpochEndOffset(error_code=0, partition=p.partition, leader_epoch=0,
                         end_offset=STATE.end_offset((t.topic, p.partition)))
        for p in t.partitions]) for t in req.topics])


def h_join_group(req: Any, version: int) -> dict[str, Any]:
    if not req.member_id and version >= 4:  # KIP-394: hand out a member id first
        with STATE.lock:
            STATE.members += 1
            member = f"{req.header.client_id}-{STATE.members}"
        return dict(throttle_time_ms=0, error_code=79, generation_id=-1, protocol_type=None,
                    protocol_name=None, leader="", member_id=member, members=[])
    member = req.member_id or "member-0"
    proto = req.protocols[0]
    return dict(throttle_time_ms=0, error_code=0, generation_id=1,
                protocol_type=req.protocol_type, protocol_name=proto.name, leader=member,
                skip_assignment=False, member_id=member, members=[
                    JoinGroupResponse.JoinGroupResponseMember(
                        member_id=member, group_instance_id=None, metadata=proto.metadata)])


def h_sync_group(req: Any, version: int) -> dict[str, Any]:
    mine = b""
    for a in req.assignments:
        if a.member_id == req.member_id:
            mine = a.assignment
    return dict(throttle_time_ms=0, error_code=0, protocol_type=req.protocol_type,
                protocol_name=req.protocol_name, assignment=mine)


def h_heartbeat(req: Any, version: int) -> dict[str, Any]:
    return dict(throttle_time_ms=0, error_code=0)


def h_leave_group(req: Any, version: int) -> dict[str, Any]:
    return dict(throttle_time_ms=0, error_code=0, members=[])


def h_offset_fetch(req: Any, version: int) -> dict[str, Any]:
    R = OffsetFetchResponse

    def offset(group: str, topic: str, p: int) -> int:
        with STATE.lock:
            return STATE.committed.get((group, topic, p), -1)

    if version >= 8:
        groups = []
        for g in req.groups:
            topics = [R.OffsetFetchResponseGroup.OffsetFetchResponseTopics(
                name=t.name, partitions=[
                    R.OffsetFetchResponseGroup.OffsetFetchResponseTopics
                    .OffsetFetchResponsePartitions(
                        partition_index=p, committed_offset=offset(g.group_id, t.name, p),
                        committed_leader_epoch=-1, metadata="", error_code=0)
                    for p in t.partition_indexes]) for t in (g.topics or [])]
            groups.append(R.OffsetFetchResponseGroup(group_id=g.group_id, topics=topics,
                                                     error_code=0))
        return dict(throttle_time_ms=0, groups=groups)
    topics = [R.OffsetFetchResponseTopic(name=t.name, partitions=[
        R.OffsetFetchResponseTopic.OffsetFetchResponsePartition(
            partition_index=p, committed_offset=offset(req.group_id, t.name, p),
            committed_leader_epoch=-1, metadata="", error_code=0)
        for p in t.partition_indexes]) for t in (req.topics or [])]
    return dict(throttle_time_ms=0, topics=topics, error_code=0)


def h_offset_commit(req: Any, version: int) -> dict[str, Any]:
    R = OffsetCommitResponse.OffsetCommitResponseTopic
    topics = []
    for t in req.topics:
        for p in t.partitions:
            with STATE.lock:
                STATE.committed[(req.group_id, t.name, p.partition_index)] = p.committed_offset
        topics.append(R(name=t.name, partitions=[
            R.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=0)
            for p in t.partitions]))
    return dict(throttle_time_ms=0, topics=topics)


def h_create_topics(req: Any, version: int) -> dict[str, Any]:
    R = CreateTopicsResponse.CreatableTopicResult
    results = []
    for t in req.topics:
        n = t.num_partitions if t.num_partitions > 0 else NUM_PARTITIONS
        STATE.topic(t.name, n)
        results.append(R(name=t.name, error_code=0, error_message=None, num_partitions=n,
                         replication_factor=1, configs=[]))
    return dict(throttle_time_ms=0, topics=results)


def h_describe_configs(req: Any, version: int) -> dict[str, Any]:
    R = DescribeConfigsResponse.DescribeConfigsResult
    results = []
    for r in req.resources:
        configs = [R.DescribeConfigsResourceResult(
            name=name, value=value, read_only=False, config_source=5, is_default=True,
            is_sensitive=False, synonyms=[], config_type=2, documentation=None)
            for name, value in (("cleanup.policy", "delete"), ("retention.ms", "604800000"))]
        results.append(R(error_code=0, error_message=None, resource_type=r.resource_type,
                         resource_name=r.resource_name, configs=configs))
    return dict(throttle_time_ms=0, results=results)


def h_add_partitions_to_txn(req: Any, version: int) -> dict[str, Any]:
    R = AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult

    def result(t: Any) -> Any:
        return R(name=t.name, results_by_partition=[
            R.AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=0)
            for p in t.partitions])

    if version >= 4:
        return dict(throttle_time_ms=0, error_code=0, results_by_transaction=[
            AddPartitionsToTxnResponse.AddPartitionsToTxnResult(
                transactional_id=t.transactional_id, topic_results=[result(x) for x in t.topics])
            for t in req.transactions])
    return dict(throttle_time_ms=0,
                results_by_topic_v3_and_below=[result(t) for t in req.v3_and_below_topics])


def h_end_txn(req: Any, version: int) -> dict[str, Any]:
    return dict(throttle_time_ms=0, error_code=0)


def h_describe_cluster(req: Any, version: int) -> dict[str, Any]:
    return dict(throttle_time_ms=0, error_code=0, error_message=None, endpoint_type=1,
                cluster_id=CLUSTER_ID, controller_id=NODE_ID, brokers=[
                    DescribeClusterResponse.DescribeClusterBroker(
                        broker_id=NODE_ID, host="127.0.0.1", port=STATE.port, rack=None)])


HANDLERS: dict[int, tuple[Any, Any, Any]] = {
    0: (ProduceRequest, ProduceResponse, h_produce),
    1: (FetchRequest, FetchResponse, h_fetch),
    2: (ListOffsetsRequest, ListOffsetsResponse, h_list_offsets),
    3: (MetadataRequest, MetadataResponse, h_metadata),
    8: (OffsetCommitRequest, OffsetCommitResponse, h_offset_commit),
    9: (OffsetFetchRequest, OffsetFetchResponse, h_offset_fetch),
    10: (FindCoordinatorRequest, FindCoordinatorResponse, h_find_coordinator),
    11: (JoinGroupRequest, JoinGroupResponse, h_join_group),
    12: (HeartbeatRequest, HeartbeatResponse, h_heartbeat),
    13: (LeaveGroupRequest, LeaveGroupResponse, h_leave_group),
    14: (SyncGroupRequest, SyncGroupResponse, h_sync_group),
    19: (CreateTopicsRequest, CreateTopicsResponse, h_create_topics),
    22: (InitProducerIdRequest, InitProducerIdResponse, h_init_producer_id),
    23: (OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse, h_offset_for_leader_epoch),
    32: (DescribeConfigsRequest, DescribeConfigsResponse, h_describe_configs),
    24: (AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, h_add_partitions_to_txn),
    26: (EndTxnRequest, EndTxnResponse, h_end_txn),
    60: (DescribeClusterRequest, DescribeClusterResponse, h_describe_cluster),
}


class Handler(socketserver.BaseRequestHandler):
    def _read(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.request.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def handle(self) -> None:
        try:
            while True:
                (size,) = struct.unpack(">i", self._read(4))
                frame = self._read(size)
                out = handle(frame)
                if out is not None:
                    self.request.sendall(out)
        except (EOFError, ConnectionError, OSError):
            pass
        except Exception:
            traceback.print_exc()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


# --------------------------------------------------------------------------------------------
# Clients.


def _ck_version() -> str:
    import confluent_kafka

    v = confluent_kafka.version()
    return v if isinstance(v, str) else v[0]  # a (str, int) tuple in older releases


def _topic(prefix: str) -> str:
    return "vec." + prefix


TXN_ID = "kafkapy-vectors-txn"


def confluent_produce(topic: str, codec: str, idempotent: bool,
                      transactional: bool = False) -> dict[str, Any]:
    import confluent_kafka

    conf = {"bootstrap.servers": f"127.0.0.1:{STATE.port}", "client.id": "kafkapy-vectors",
            "compression.type": codec, "linger.ms": 200, "acks": "all",
            "enable.idempotence": idempotent}
    if transactional:
        conf["transactional.id"] = TXN_ID
    p = confluent_kafka.Producer(conf)
    if transactional:
        p.init_transactions(15)
        p.begin_transaction()
    for part, key, value, headers, ts in RECORDS:
        p.produce(topic, value=value, key=key, partition=part, timestamp=ts,
                  headers=list(headers))
    if transactional:
        p.commit_transaction(15)
    left = p.flush(15)
    if left:
        raise RuntimeError(f"{left} messages not delivered")
    return {"library": "confluent-kafka", "library_version": _ck_version(),
            "librdkafka_version": confluent_kafka.libversion()[0],
            "config": {k: v for k, v in conf.items() if k != "bootstrap.servers"}}


def kafka_python_produce(topic: str, codec: str, idempotent: bool,
                         transactional: bool = False) -> dict[str, Any]:
    import kafka

    conf = {"client_id": "kafkapy-vectors", "compression_type": None if codec == "none" else codec,
            "linger_ms": 200, "batch_size": 65536, "acks": "all",
            "enable_idempotence": idempotent}
    if transactional:
        conf["transactional_id"] = TXN_ID
    p = kafka.KafkaProducer(bootstrap_servers=f"127.0.0.1:{STATE.port}", **conf)
    if transactional:
        p.init_transactions()
        p.begin_transaction()
    futures = [p.send(topic, value=value, key=key, partition=part, timestamp_ms=ts,
                      headers=list(headers))
               for part, key, value, headers, ts in records_for("kafkapython")]
    if transactional:
        p.commit_transaction()
    p.flush(15)
    for f in futures:
        f.get(timeout=5)
    p.close(5)
    return {"library": "kafka-python", "library_version": kafka.__version__, "config": conf}


def aiokafka_produce(topic: str, codec: str, idempotent: bool,
                     transactional: bool = False) -> dict[str, Any]:
    import aiokafka

    conf = {"client_id": "kafkapy-vectors", "compression_type": None if codec == "none" else codec,
            "linger_ms": 200, "max_batch_size": 65536, "acks": "all",
            "enable_idempotence": idempotent}
    if transactional:
        conf["transactional_id"] = TXN_ID

    async def run() -> None:
        p = aiokafka.AIOKafkaProducer(bootstrap_servers=f"127.0.0.1:{STATE.port}", **conf)
        await p.start()
        try:
            if transactional:
                await p.begin_transaction()
            futures = [await p.send(topic, value=value, key=key, partition=part,
                                    timestamp_ms=ts, headers=list(headers))
                       for part, key, value, headers, ts in RECORDS]
            await p.flush()
            for f in futures:
                await f
            if transactional:
                await p.commit_transaction()
        finally:
            await p.stop()

    asyncio.run(run())
    return {"library": "aiokafka", "library_version": aiokafka.__version__, "config": conf}


def _fill(topic: str) -> None:
    """Put the standard record set into a topic without capturing the frames."""
    with STATE.lock:
        prefix, STATE.prefix = STATE.prefix, None
    try:
        confluent_produce(topic, "gzip", False)  # gzip: every client here can read it
    finally:
        with STATE.lock:
            STATE.prefix = prefix


GROUP = "kafkapy-vectors-group"


def confluent_consume(topic: str) -> dict[str, Any]:
    import confluent_kafka

    _fill(topic)
    conf = {"bootstrap.servers": f"127.0.0.1:{STATE.port}", "client.id": "kafkapy-vectors",
            "group.id": GROUP, "auto.offset.reset": "earliest",
            "enable.auto.commit": False, "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000, "fetch.wait.max.ms": 200}
    c = confluent_kafka.Consumer(conf)
    c.subscribe([topic])
    got = []
    deadline = time.monotonic() + 20
    while len(got) < len(RECORDS) and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            raise RuntimeError(str(m.error()))
        got.append(m)
    if len(got) != len(RECORDS):
        raise RuntimeError(f"consumed {len(got)} of {len(RECORDS)} records")
    c.commit(asynchronous=False)
    c.close()
    return {"library": "confluent-kafka", "library_version": _ck_version(),
            "librdkafka_version": confluent_kafka.libversion()[0],
            "config": {k: v for k, v in conf.items() if k != "bootstrap.servers"},
            "consumed": len(got)}


def kafka_python_consume(topic: str) -> dict[str, Any]:
    import kafka

    _fill(topic)
    conf = {"client_id": "kafkapy-vectors", "group_id": GROUP, "auto_offset_reset": "earliest",
            "enable_auto_commit": False, "fetch_max_wait_ms": 200,
            "heartbeat_interval_ms": 1000, "session_timeout_ms": 6000}
    c = kafka.KafkaConsumer(topic, bootstrap_servers=f"127.0.0.1:{STATE.port}", **conf)
    got = 0
    deadline = time.monotonic() + 20
    while got < len(RECORDS) and time.monotonic() < deadline:
        for msgs in c.poll(timeout_ms=500).values():
            got += len(msgs)
    if got != len(RECORDS):
        raise RuntimeError(f"consumed {got} of {len(RECORDS)} records")
    c.commit()
    c.close()
    return {"library": "kafka-python", "library_version": kafka.__version__, "config": conf,
            "consumed": got}


def aiokafka_consume(topic: str) -> dict[str, Any]:
    import aiokafka

    _fill(topic)
    conf = {"client_id": "kafkapy-vectors", "group_id": GROUP, "auto_offset_reset": "earliest",
            "enable_auto_commit": False, "fetch_max_wait_ms": 200,
            "heartbeat_interval_ms": 1000, "session_timeout_ms": 6000}

    async def run() -> int:
        c = aiokafka.AIOKafkaConsumer(topic, bootstrap_servers=f"127.0.0.1:{STATE.port}",
                                      **conf)
        await c.start()
        got = 0
        try:
            deadline = time.monotonic() + 20
            while got < len(RECORDS) and time.monotonic() < deadline:
                for msgs in (await c.getmany(timeout_ms=500)).values():
                    got += len(msgs)
            await c.commit()
        finally:
            await c.stop()
        return got

    got = asyncio.run(run())
    if got != len(RECORDS):
        raise RuntimeError(f"consumed {got} of {len(RECORDS)} records")
    return {"library": "aiokafka", "library_version": aiokafka.__version__, "config": conf,
            "consumed": got}


def confluent_admin(topic: str) -> dict[str, Any]:
    import confluent_kafka
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

    conf = {"bootstrap.servers": f"127.0.0.1:{STATE.port}", "client.id": "kafkapy-vectors"}
    a = AdminClient(conf)
    fs = a.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1,
                                   config={"cleanup.policy": "compact"})],
                         request_timeout=10)
    for f in fs.values():
        f.result(10)
    fs2 = a.describe_configs([ConfigResource("topic", topic)], request_timeout=10)
    for f in fs2.values():
        f.result(10)
    return {"library": "confluent-kafka", "library_version": _ck_version(),
            "librdkafka_version": confluent_kafka.libversion()[0],
            "config": {"client.id": "kafkapy-vectors"},
            "calls": [f"create_topics({topic}, 3 partitions, cleanup.policy=compact)",
                      f"describe_configs(topic {topic})"]}


def kafka_python_admin(topic: str) -> dict[str, Any]:
    import kafka
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

    a = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{STATE.port}",
                         client_id="kafkapy-vectors")
    try:
        a.create_topics([NewTopic(topic, 3, 1, topic_configs={"cleanup.policy": "compact"})])
        a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        a.close()
    return {"library": "kafka-python", "library_version": kafka.__version__,
            "config": {"client_id": "kafkapy-vectors"},
            "calls": [f"create_topics({topic}, 3 partitions, cleanup.policy=compact)",
                      f"describe_configs(topic {topic})"]}


def aiokafka_admin(topic: str) -> dict[str, Any]:
    import aiokafka
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

    async def run() -> None:
        a = AIOKafkaAdminClient(bootstrap_servers=f"127.0.0.1:{STATE.port}",
                                client_id="kafkapy-vectors")
        await a.start()
        try:
            await a.create_topics([NewTopic(topic, 3, 1,
                                            topic_configs={"cleanup.policy": "compact"})])
            await a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
        finally:
            await a.close()

    asyncio.run(run())
    return {"library": "aiokafka", "library_version": aiokafka.__version__,
            "config": {"client_id": "kafkapy-vectors"},
            "calls": [f"create_topics({topic}, 3 partitions, cleanup.policy=compact)",
                      f"describe_configs(topic {topic})"]}


def codecs_available() -> dict[str, dict[str, str]]:
    """Which codecs each Python client can use in this environment (none is always there)."""
    import aiokafka.codec as ac
    import kafka.codec as kc

    out: dict[str, dict[str, str]] = {"kafkapython": {}, "aiokafka": {}}
    for name, mod in (("kafkapython", kc), ("aiokafka", ac)):
        for codec in ("gzip", "snappy", "lz4", "zstd"):
            ok = getattr(mod, f"has_{codec}")()
            out[name][codec] = "available" if ok else (
                f"unavailable: {mod.__name__}.has_{codec}() is False (KafkaProducer raises "
                f"'Libraries for {codec} compression codec not found')")
    return out


def scenarios(avail: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for codec in CODEC_IDS:
        out.append({"client": "confluent", "scenario": f"produce_{codec}", "kind": "produce",
                    "codec": codec, "idempotent": False, "fn": confluent_produce})
    out.append({"client": "confluent", "scenario": "produce_idempotent", "kind": "produce",
                "codec": "none", "idempotent": True, "fn": confluent_produce})
    for client, fn in (("kafkapython", kafka_python_produce), ("aiokafka", aiokafka_produce)):
        for codec in CODEC_IDS:
            if codec != "none" and avail[client][codec] != "available":
                continue
            # kafka-python 3.x defaults to enable_idempotence=True; aiokafka to False. Keep
            # each client's default so the frames show what it naturally sends.
            out.append({"client": client, "scenario": f"produce_{codec}", "kind": "produce",
                        "codec": codec, "idempotent": client == "kafkapython", "fn": fn})
    for client, fn, codec in (("confluent", confluent_produce, "lz4"),
                              ("kafkapython", kafka_python_produce, "gzip"),
                              ("aiokafka", aiokafka_produce, "zstd")):
        out.append({"client": client, "scenario": "produce_transactional", "kind": "produce",
                    "codec": codec, "idempotent": True, "transactional": True, "fn": fn})
    for client, fn in (("confluent", confluent_consume), ("kafkapython", kafka_python_consume),
                       ("aiokafka", aiokafka_consume)):
        out.append({"client": client, "scenario": "consumer_group", "kind": "consume",
                    "fn": fn})
    for client, fn in (("confluent", confluent_admin), ("kafkapython", kafka_python_admin),
                       ("aiokafka", aiokafka_admin)):
        out.append({"client": client, "scenario": "admin", "kind": "admin", "fn": fn})
    return out


_SCALAR_LIST = re.compile(
    r'\[\n((?:[ ]*(?:"[^"\n]{0,60}"|-?\d+|null|true|false),?\n){1,4})[ ]*\]')


def _compact(text: str) -> str:
    """Put short lists of scalars (version ranges, header pairs) on one line."""
    return _SCALAR_LIST.sub(
        lambda m: "[" + " ".join(x.strip() for x in m[1].splitlines()) + "]", text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", help="<client>-<scenario> to run (repeatable)")
    args = ap.parse_args()

    server = Server(("127.0.0.1", 0), Handler)
    STATE.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()

    avail = codecs_available()
    todo = scenarios(avail)
    if args.only:
        wanted = set(args.only)
        todo = [s for s in todo if f"{s['client']}-{s['scenario']}" in wanted]
    else:
        shutil.rmtree(FRAMES, ignore_errors=True)
    FRAMES.mkdir(parents=True, exist_ok=True)

    manifest = json.loads(MANIFEST.read_text()) if args.only and MANIFEST.exists() else {}
    manifest_scenarios = {f"{s['client']}-{s['scenario']}": s
                          for s in manifest.get("scenarios", [])}
    failures = 0
    for s in todo:
        prefix = f"{s['client']}-{s['scenario']}"
        for old in FRAMES.glob(prefix + "-*.bin"):
            old.unlink()
        topic = _topic(prefix)
        STATE.start(prefix)
        print(f"--- {prefix}", flush=True)
        try:
            if s["kind"] == "produce":
                info = s["fn"](topic, s["codec"], s["idempotent"],
                               s.get("transactional", False))
            else:
                info = s["fn"](topic)
            error = None
        except Exception as e:  # report it and go on with the other scenarios
            traceback.print_exc()
            info, error = {}, f"{type(e).__name__}: {e}"
            failures += 1
        time.sleep(0.2)
        with STATE.lock:
            pids = list(STATE.pids)
            unhandled = list(STATE.unhandled)
        frames = STATE.stop()
        entry: dict[str, Any] = {"client": s["client"], "scenario": s["scenario"],
                                 "kind": s["kind"], "topic": topic, **info}
        if s["kind"] == "produce" and s["client"] == "kafkapython":
            entry["note"] = ("kafka-python's send() rejects a null header value, so the header "
                             "that is null for the other clients is empty here")
        if s["kind"] == "produce":
            entry.update(codec=s["codec"], codec_id=CODEC_IDS[s["codec"]],
                         idempotent=s["idempotent"],
                         transactional_id=TXN_ID if s.get("transactional") else None,
                         producer_ids=pids, producer_epoch=0 if pids else -1,
                         record_set=record_set_name(s["client"]))
        if s["kind"] == "consume":
            entry["note"] = ("the topic was filled first by an uncaptured confluent-kafka gzip "
                             "producer sending the standard record set")
        entry["frames"] = frames
        if unhandled:
            entry["unhandled_requests"] = unhandled
        if error:
            entry["error"] = error
        manifest_scenarios[prefix] = entry
        print(f"    {len(frames)} frames" + (f"  ERROR {error}" if error else ""), flush=True)

    import aiokafka
    import confluent_kafka
    import kafka

    manifest = {
        "description": "Request frames captured from real Kafka clients by "
                       "tests/vectors/capture.py (see README.md). Bytes are hex; null is "
                       "JSON null, empty is \"\".",
        "python": sys.version.split()[0],
        "libraries": {"confluent-kafka": _ck_version(),
                      "librdkafka": confluent_kafka.libversion()[0],
                      "kafka-python": kafka.__version__, "aiokafka": aiokafka.__version__},
        "advertised_versions": {API_NAMES[k]: list(v) for k, v in sorted(ADVERTISED.items())},
        "codecs_available": {"confluent": {c: "available" for c in CODEC_IDS if c != "none"},
                             **avail},
        "max_frames_per_api": MAX_FRAMES_PER_API,
        "record_sets": {name: records_json(client) for name, client in (
            ("standard", "confluent"), ("no_null_header_values", "kafkapython"))},
        "scenarios": sorted(manifest_scenarios.values(),
                            key=lambda e: (e["client"], e["scenario"])),
    }
    MANIFEST.write_text(_compact(json.dumps(manifest, indent=1, ensure_ascii=True)) + "\n")
    server.shutdown()
    total = sum(f.stat().st_size for f in FRAMES.glob("*.bin"))
    print(f"wrote {len(list(FRAMES.glob('*.bin')))} frames, {total} bytes", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
