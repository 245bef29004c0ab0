"""Group coordinator hot paths without sockets (pytest-benchmark;
``pytest benchmarks/test_group_bench.py``).

Reported, never asserted:
- one offset commit as the coordinator writes it to ``__consumer_offsets``: the OffsetCommitKey
  and OffsetCommitValue encodings and the one-record batch around them (what
  ``GroupMetadataManager.store_offsets`` builds per commit of one partition, before the append);
- the OffsetCommitValue decode that loading ``__consumer_offsets`` does per record;
- ``ClassicGroup.select_protocol`` for a group of 100 members with two protocols each (run
  once per rebalance, in the join phase's completion).

The end-to-end figures (rebalance time, commits/s with real clients) are in
benchmarks/group_harness.py.
"""

from __future__ import annotations

from kafkapy.coordinator.group.classic_group import ClassicGroup, MemberMetadata
from kafkapy.coordinator.group.records import (
    OffsetAndMetadata,
    offset_commit_key,
    offset_commit_value,
    read_offset_value,
)
from kafkapy.protocol.records import build_batch

NOW_MS = 1_700_000_000_000
COMMIT = OffsetAndMetadata(offset=123_456, leader_epoch=7, metadata="",
                           commit_timestamp_ms=NOW_MS)


def _one_commit_batch() -> bytes:
    key = offset_commit_key("orders-service", "orders", 3)
    return build_batch([(key, offset_commit_value(COMMIT), None, NOW_MS)])


def test_offset_commit_record_encode(benchmark):
    benchmark.group = "group: one offset commit record (key + value + batch)"
    assert len(benchmark(_one_commit_batch)) > 61      # a batch header is 61 bytes


def test_offset_commit_value_decode(benchmark):
    benchmark.group = "group: OffsetCommitValue decode"
    value = offset_commit_value(COMMIT)
    assert benchmark(read_offset_value, value) == COMMIT


def _group_of(members: int) -> ClassicGroup:
    group = ClassicGroup("big-group")
    for i in range(members):
        # Half prefer range, half roundrobin; both support both, so every member votes.
        protocols = [("range", b"r"), ("roundrobin", b"rr")]
        if i % 2:
            protocols.reverse()
        group.add(MemberMetadata(f"member-{i}", None, f"client-{i}", "/127.0.0.1", 300_000,
                                 45_000, "consumer", protocols))
    return group


def test_select_protocol_100_members(benchmark):
    benchmark.group = "group: ClassicGroup.select_protocol, 100 members"
    group = _group_of(100)
    # A tie (50/50) goes to the leader's first protocol: member-0 lists range first.
    assert benchmark(group.select_protocol) == "range"
