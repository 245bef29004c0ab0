"""Request frames captured from real Kafka clients, decoded with kafkapy.

The vectors (tests/protocol/vectors/, see its README.md) were recorded by
tests/vectors/capture.py: confluent-kafka (librdkafka), kafka-python and aiokafka talking to a
fake broker that answered with kafka-python's encoder. These tests read only the committed
files; no client library is needed to run them.

- every frame decodes with ``decode_request`` and re-encodes byte-identically, and its header
  says the API key and version its file name says;
- every Produce frame's record batches decode exactly to the records the manifest says were
  sent (null key, null value, empty value, null header value, unicode key, a 20 KB value,
  explicit timestamps including a negative delta), with valid CRCs, the scenario's codec in
  the attributes, the producer id / epoch / sequences an idempotent producer was given, and
  the transactional id and attribute bit of a transactional producer;
- the vector set is complete: every produce scenario has Produce frames, every file is in the
  manifest and the other way round.

Client quirks the vectors show (and a broker must accept): librdkafka and kafka-python write
partitionLeaderEpoch 0 into produced batches, aiokafka -1; aiokafka writes baseSequence 0 in
non-idempotent batches (producerId -1); librdkafka sends raw snappy blocks, aiokafka
xerial-framed snappy; gzip streams from the Python clients carry an mtime.
"""

from __future__ import annotations

import json
import re
import struct
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from kafkapy.protocol import API_KEYS, decode_request, encode_request

VECTORS = Path(__file__).parent / "vectors"
FRAMES = VECTORS / "frames"
MANIFEST: dict[str, Any] = json.loads((VECTORS / "manifest.json").read_text())
SCENARIOS: list[dict[str, Any]] = MANIFEST["scenarios"]
FRAME_FILES = sorted(FRAMES.glob("*.bin"))

NAME = re.compile(
    r"^(?P<client>[a-z]+)-(?P<scenario>[a-z0-9_]+)-(?P<seq>\d{3})-(?P<api>[A-Za-z]+)"
    r"-v(?P<version>\d+)\.bin$")

# Kafka's API keys, spelled out here so that a missing kafkapy declaration shows up as a
# clear failure instead of a lookup error.
API_KEY_OF = {
    "Produce": 0, "Fetch": 1, "ListOffsets": 2, "Metadata": 3, "OffsetCommit": 8,
    "OffsetFetch": 9, "FindCoordinator": 10, "JoinGroup": 11, "Heartbeat": 12,
    "LeaveGroup": 13, "SyncGroup": 14, "DescribeGroups": 15, "ListGroups": 16,
    "SaslHandshake": 17, "ApiVersions": 18, "CreateTopics": 19, "DeleteTopics": 20,
    "DeleteRecords": 21, "InitProducerId": 22, "OffsetForLeaderEpoch": 23,
    "AddPartitionsToTxn": 24, "AddOffsetsToTxn": 25, "EndTxn": 26, "TxnOffsetCommit": 28,
    "DescribeConfigs": 32, "AlterConfigs": 33, "SaslAuthenticate": 36,
    "CreatePartitions": 37, "DeleteGroups": 42, "IncrementalAlterConfigs": 44,
    "OffsetDelete": 47, "DescribeCluster": 60,
}
CLIENT_ID = "kafkapy-vectors"
PRODUCE_SCENARIOS = [s for s in SCENARIOS if s["kind"] == "produce"]


def _scenario_id(s: dict[str, Any]) -> str:
    return f"{s['client']}-{s['scenario']}"


def _frames_of(prefix: str, api: str | None = None) -> list[Path]:
    out = []
    for path in FRAME_FILES:
        m = NAME.match(path.name)
        assert m, path.name
        if f"{m['client']}-{m['scenario']}" == prefix and (api is None or m["api"] == api):
            out.append(path)
    return sorted(out, key=lambda p: int(NAME.match(p.name)["seq"]))  # type: ignore[index]


def _records():  # type: ignore[no-untyped-def]
    # Imported lazily: the record-batch module is built separately from the request codec,
    # and the frame tests must not depend on it.
    from kafkapy.protocol import records

    return records


# --------------------------------------------------------------------------------------------
# Frames: decode, check the header, re-encode byte for byte.


def test_vectors_present() -> None:
    assert FRAME_FILES, f"no frames in {FRAMES}"
    assert PRODUCE_SCENARIOS


@pytest.mark.parametrize("path", FRAME_FILES, ids=lambda p: p.stem)
def test_frame_roundtrip(path: Path) -> None:
    m = NAME.match(path.name)
    assert m, f"bad vector file name {path.name}"
    api_key, version = API_KEY_OF[m["api"]], int(m["version"])
    frame = path.read_bytes()
    raw_key, raw_version, raw_corr = struct.unpack_from(">hhi", frame, 0)
    assert (raw_key, raw_version) == (api_key, version), "file name disagrees with the bytes"
    if api_key not in API_KEYS:
        pytest.fail(f"kafkapy has no declaration for {m['api']} (API key {api_key})")

    request = decode_request(frame)
    header = request.header
    assert header.api_key == api_key
    assert header.api_version == version
    assert header.correlation_id == raw_corr
    assert header.client_id == CLIENT_ID

    assert encode_request(request) == frame
    # memoryview input (what a server hands over) decodes to the same thing
    again = decode_request(memoryview(frame))
    assert encode_request(again) == frame


# --------------------------------------------------------------------------------------------
# What the other requests say: spot checks of decoded values against what the capture did
# (group id, topic, committed offsets, transactional id, admin arguments).

GROUP = "kafkapy-vectors-group"
TXN_ID = "kafkapy-vectors-txn"
SCENARIO_OF = {_scenario_id(s): s for s in SCENARIOS}


def _check_contents(api: str, version: int, body: Any, scenario: dict[str, Any]) -> None:
    topic = scenario["topic"]
    txn = scenario.get("transactional_id")
    if api == "Metadata":
        names = [t.name for t in (body.topics or [])]
        assert set(names) <= {topic}, names
    elif api == "FindCoordinator":
        keys = list(body.coordinator_keys) if version >= 4 else [body.key]
        assert keys == [txn if body.key_type == 1 else GROUP], keys
        assert body.key_type == (1 if txn else 0)
    elif api == "InitProducerId":
        assert body.transactional_id == txn
    elif api == "AddPartitionsToTxn":
        if version >= 4:
            pytest.fail("clients use AddPartitionsToTxn v0-3")
        assert body.v3_and_below_transactional_id == txn
        assert body.v3_and_below_producer_id in scenario["producer_ids"]
        assert body.v3_and_below_producer_epoch == 0
        parts = {(t.name, p) for t in body.v3_and_below_topics for p in t.partitions}
        assert parts == {(topic, 0), (topic, 1)}
    elif api == "EndTxn":
        assert body.transactional_id == txn
        assert body.producer_id in scenario["producer_ids"]
        assert body.committed is True
    elif api in ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit"):
        assert body.group_id == GROUP
        if api == "JoinGroup":
            assert body.protocol_type == "consumer"
            assert body.protocols and all(p.name and p.metadata for p in body.protocols)
        if api == "SyncGroup":
            assert body.generation_id == 1 and body.member_id
            mine = [a for a in body.assignments if a.member_id == body.member_id]
            assert len(mine) == 1 and len(mine[0].assignment) > 0
        if api == "OffsetCommit":
            committed = {(t.name, p.partition_index): p.committed_offset
                         for t in body.topics for p in t.partitions}
            assert committed == {(topic, 0): 8, (topic, 1): 2}
    elif api == "OffsetFetch":
        if version >= 8:
            assert [g.group_id for g in body.groups] == [GROUP]
            topics = body.groups[0].topics
        else:
            assert body.group_id == GROUP
            topics = body.topics
        asked = {(t.name, p) for t in topics for p in t.partition_indexes}
        assert asked and asked <= {(topic, 0), (topic, 1)}, asked  # aiokafka: one at a time
    elif api == "ListOffsets":
        assert body.replica_id == -1
        for t in body.topics:
            assert t.name == topic
            assert {p.timestamp for p in t.partitions} == {-2}  # auto.offset.reset=earliest
    elif api == "Fetch":
        assert body.max_wait_ms == 200
        if version < 15:
            assert body.replica_id == -1
        assert {t.topic for t in body.topics} <= {topic}
        assert all(p.partition in (0, 1) and p.fetch_offset >= 0
                   for t in body.topics for p in t.partitions)
    elif api == "CreateTopics":
        (t,) = body.topics
        assert (t.name, t.num_partitions, t.replication_factor) == (topic, 3, 1)
        assert [(c.name, c.value) for c in t.configs] == [("cleanup.policy", "compact")]
    elif api == "DescribeConfigs":
        assert [(r.resource_type, r.resource_name) for r in body.resources] == [(2, topic)]


CONTENT_FRAMES = [p for p in FRAME_FILES
                  if (m := NAME.match(p.name)) and m["api"] not in ("Produce", "ApiVersions")]


@pytest.mark.parametrize("path", CONTENT_FRAMES, ids=lambda p: p.stem)
def test_request_contents(path: Path) -> None:
    m = NAME.match(path.name)
    assert m
    if API_KEY_OF[m["api"]] not in API_KEYS:
        pytest.fail(f"kafkapy has no declaration for {m['api']}")
    request = decode_request(path.read_bytes())
    _check_contents(m["api"], int(m["version"]), request.body,
                    SCENARIO_OF[f"{m['client']}-{m['scenario']}"])


def test_api_versions_requests() -> None:
    """ApiVersions v3+ carries the client's software name and version (KIP-511)."""
    if API_KEY_OF["ApiVersions"] not in API_KEYS:
        pytest.fail("kafkapy has no declaration for ApiVersions")
    seen = set()
    for path in FRAME_FILES:
        m = NAME.match(path.name)
        if not m or m["api"] != "ApiVersions":
            continue
        body = decode_request(path.read_bytes()).body
        if int(m["version"]) >= 3:
            assert re.fullmatch(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?",
                                body.client_software_name), body.client_software_name
            assert body.client_software_version
            seen.add((m["client"], body.client_software_name))
    assert {c for c, _ in seen} == {"confluent", "kafkapython"}


# --------------------------------------------------------------------------------------------
# Produce frames: the record batches hold exactly the records that were sent.


def _unhex(s: str | None) -> bytes | None:
    return None if s is None else bytes.fromhex(s)


def _expected(scenario: dict[str, Any]) -> dict[int, list[tuple[Any, ...]]]:
    out: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for r in MANIFEST["record_sets"][scenario["record_set"]]:
        headers = [(k, _unhex(v)) for k, v in r["headers"]]
        out[r["partition"]].append((_unhex(r["key"]), _unhex(r["value"]), headers,
                                    r["timestamp"]))
    return dict(out)


def _nullable_bytes(b: Any) -> bytes | None:
    assert b is None or isinstance(b, (bytes, memoryview)), type(b)
    return None if b is None else bytes(b)


@pytest.mark.parametrize("scenario", PRODUCE_SCENARIOS, ids=_scenario_id)
def test_produce_records(scenario: dict[str, Any]) -> None:
    rec = _records()
    prefix = _scenario_id(scenario)
    frames = _frames_of(prefix, "Produce")
    assert frames, f"no Produce frames for {prefix}"
    codec = scenario["codec_id"]
    idempotent = scenario["idempotent"]
    transactional = scenario["transactional_id"] is not None
    got: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    next_sequence: dict[int, int] = defaultdict(int)

    for path in frames:
        request = decode_request(path.read_bytes())
        body = request.body
        assert body.acks == -1
        assert body.transactional_id == scenario["transactional_id"]
        for topic in body.topic_data:
            assert topic.name == scenario["topic"]
            for part in topic.partition_data:
                buf = part.records
                assert buf is not None
                scan = rec.scan_batches(buf)
                assert scan.error is None, f"{path.name} p{part.index}: {scan.error!r}"
                assert not scan.truncated
                assert scan.valid_bytes == len(memoryview(buf))
                assert scan.batches
                for batch in scan.batches:
                    where = f"{path.name} p{part.index} batch@{batch.position}"
                    assert batch.magic == 2, where
                    assert batch.crc_valid, where
                    assert batch.crc == batch.compute_crc(), where
                    assert batch.compression == codec, where
                    assert batch.timestamp_type == 0, where
                    assert batch.is_transactional == transactional, where
                    assert not batch.is_control, where
                    assert batch.base_offset == 0, where
                    assert batch.record_count == batch.last_offset_delta + 1, where
                    # librdkafka and kafka-python send 0, aiokafka -1
                    assert batch.partition_leader_epoch in (0, -1), where
                    if idempotent:
                        assert batch.producer_id in scenario["producer_ids"], where
                        assert batch.producer_epoch == scenario["producer_epoch"], where
                        assert batch.base_sequence == next_sequence[part.index], where
                        next_sequence[part.index] += batch.record_count
                    else:
                        assert batch.producer_id == -1, where
                        assert batch.producer_epoch == -1, where
                    records = batch.records()
                    assert len(records) == batch.record_count, where
                    timestamps = [r.timestamp for r in records]
                    assert batch.base_timestamp == timestamps[0], where
                    assert batch.max_timestamp == max(timestamps), where
                    for i, r in enumerate(records):
                        assert r.offset == batch.base_offset + i, where
                        assert r.attributes == 0, where
                        if idempotent:
                            assert r.sequence == batch.base_sequence + i, where
                        headers = [(k, _nullable_bytes(v)) for k, v in r.headers]
                        assert all(isinstance(k, str) for k, _ in headers), where
                        got[part.index].append((_nullable_bytes(r.key),
                                                _nullable_bytes(r.value), headers,
                                                r.timestamp))

    expected = _expected(scenario)
    assert sorted(got) == sorted(expected)
    for partition, want in expected.items():
        have = got[partition]
        assert len(have) == len(want), f"partition {partition}"
        for i, (h, w) in enumerate(zip(have, want, strict=True)):
            assert h == w, f"partition {partition} record {i}"


def test_produce_special_values_present() -> None:
    """The manifest's record set really holds the cases the Produce test is meant to cover
    (so that a regenerated manifest cannot silently lose them)."""
    for scenario in PRODUCE_SCENARIOS:
        flat = [r for rs in _expected(scenario).values() for r in rs]
        keys = [k for k, _, _, _ in flat]
        values = [v for _, v, _, _ in flat]
        headers = [h for _, _, hs, _ in flat for h in hs]
        timestamps = [t for _, _, _, t in flat]
        assert None in keys and b"" in keys, _scenario_id(scenario)
        assert None in values and b"" in values
        assert any(len(v) >= 20_000 for v in values if v)
        assert any(k and k.decode() != k.decode("ascii", "replace") for k in keys if k)
        assert any(len(hs) == 2 for _, _, hs, _ in flat)
        if scenario["client"] != "kafkapython":  # its send() refuses null header values
            assert any(v is None for _, v in headers)
        assert timestamps != sorted(timestamps)  # one record goes back in time
        assert len(_expected(scenario)) == 2


# --------------------------------------------------------------------------------------------
# Completeness of the vector set.


def test_every_produce_scenario_has_produce_frames() -> None:
    missing = [_scenario_id(s) for s in PRODUCE_SCENARIOS
               if not _frames_of(_scenario_id(s), "Produce")]
    assert not missing


def test_scenarios_cover_every_available_codec() -> None:
    have = {(s["client"], s["codec"]) for s in PRODUCE_SCENARIOS}
    for client, codecs in MANIFEST["codecs_available"].items():
        assert (client, "none") in have, client
        for codec, status in codecs.items():
            if status == "available":
                assert (client, codec) in have, (client, codec)
    for client in ("confluent", "kafkapython", "aiokafka"):
        assert any(s["client"] == client and s["idempotent"] for s in PRODUCE_SCENARIOS)
        assert any(s["client"] == client and s["transactional_id"] for s in PRODUCE_SCENARIOS)


def test_no_scenario_failed() -> None:
    assert not [(_scenario_id(s), s["error"]) for s in SCENARIOS if "error" in s]
    assert not [(_scenario_id(s), s["unhandled_requests"]) for s in SCENARIOS
                if s.get("unhandled_requests")]


def test_manifest_matches_files() -> None:
    listed = {f for s in SCENARIOS for f in s["frames"]}
    on_disk = {p.name for p in FRAME_FILES}
    assert listed == on_disk
    prefixes = {_scenario_id(s) for s in SCENARIOS}
    for name in on_disk:
        m = NAME.match(name)
        assert m, name
        assert f"{m['client']}-{m['scenario']}" in prefixes, name
        assert m["api"] in API_KEY_OF, name


def test_group_and_admin_apis_captured() -> None:
    apis = {NAME.match(p.name)["api"] for p in FRAME_FILES}  # type: ignore[index]
    wanted = {"ApiVersions", "Metadata", "Produce", "InitProducerId", "FindCoordinator",
              "JoinGroup", "SyncGroup", "Heartbeat", "OffsetFetch", "ListOffsets", "Fetch",
              "OffsetCommit", "LeaveGroup", "CreateTopics", "DescribeConfigs",
              "AddPartitionsToTxn", "EndTxn"}
    assert wanted <= apis, wanted - apis
