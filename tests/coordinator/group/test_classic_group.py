"""ClassicGroup bookkeeping (pure logic) and the coordinator's partition choice."""

from __future__ import annotations

import pytest

from kafkapy.coordinator.group.classic_group import (
    ClassicGroup,
    GroupState,
    JoinResult,
    MemberMetadata,
    Reply,
)
from kafkapy.coordinator.internal_topic import java_string_hash


def member(member_id: str, protocols: list[str], instance: str | None = None,
           protocol_type: str = "consumer") -> MemberMetadata:
    return MemberMetadata(member_id, instance, "client", "/127.0.0.1", 60_000, 10_000,
                          protocol_type, [(p, p.encode()) for p in protocols])


def test_java_string_hash_matches_java() -> None:
    # Values of java.lang.String.hashCode.
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    # The famous string whose hash is Integer.MIN_VALUE (Kafka's Utils.abs maps it to 0).
    assert java_string_hash("polygenelubricants") == -(2**31)
    # Outside the BMP: two UTF-16 code units.
    assert java_string_hash("\U0001F600") == 0xD83D * 31 + 0xDE00


def test_protocol_selection_by_votes_among_common_protocols() -> None:
    g = ClassicGroup("g")
    g.add(member("a", ["range", "roundrobin"]))
    g.add(member("b", ["roundrobin", "range"]))
    g.add(member("c", ["roundrobin", "sticky"]))
    # "sticky" is not supported by all; "range" is not supported by c.
    assert g.select_protocol() == "roundrobin"


def test_supports_protocols() -> None:
    g = ClassicGroup("g")
    assert g.supports_protocols("consumer", ["range"])
    assert not g.supports_protocols("", ["range"])
    assert not g.supports_protocols("consumer", [])
    g.add(member("a", ["range", "roundrobin"]))
    g.transition(GroupState.PREPARING_REBALANCE, 0)
    assert g.supports_protocols("consumer", ["roundrobin"])
    assert not g.supports_protocols("consumer", ["sticky"])
    assert not g.supports_protocols("connect", ["range"])


def test_transitions_follow_kafka() -> None:
    g = ClassicGroup("g")
    with pytest.raises(AssertionError):
        g.transition(GroupState.STABLE, 0)
    g.transition(GroupState.PREPARING_REBALANCE, 1)
    g.transition(GroupState.COMPLETING_REBALANCE, 2)
    g.transition(GroupState.STABLE, 3)
    assert (g.state, g.state_timestamp_ms) == (GroupState.STABLE, 3)
    g.transition(GroupState.DEAD, 4)


def test_leader_moves_when_it_leaves_and_awaiting_counts() -> None:
    g = ClassicGroup("g")
    g.add(member("a", ["range"]), Reply())
    g.add(member("b", ["range"]), Reply())
    assert g.leader_id == "a" and g.awaiting_join == 2 and g.all_members_joined
    g.remove("a")
    assert g.leader_id == "b" and g.awaiting_join == 1
    assert g.supported_protocols == {"range": 1}


def test_static_member_replacement_fences_the_old_id() -> None:
    g = ClassicGroup("g")
    old_reply = Reply()
    g.add(member("old", ["range"], instance="i1"), old_reply)
    m = g.replace_static_member("i1", "old", "new")
    assert m.member_id == "new" and g.leader_id == "new"
    assert g.static_members == {"i1": "new"} and set(g.members) == {"new"}
    assert old_reply.answered and old_reply.result == JoinResult(82, "old")
    assert g.is_static_member_fenced("i1", "old")
    assert not g.is_static_member_fenced("i1", "new")


def test_record_round_trip_keeps_members_and_assignment() -> None:
    g = ClassicGroup("g", generation_id=3, state_timestamp_ms=42)
    a = member("a", ["range"], instance="inst")
    a.assignment = b"assign-a"
    g.add(a)
    g.protocol_name = "range"
    loaded = ClassicGroup.from_record("g", g.to_record(), now_ms=100)
    assert loaded.state == GroupState.STABLE and loaded.generation_id == 3
    assert loaded.leader_id == "a" and loaded.static_members == {"inst": "a"}
    assert loaded.members["a"].assignment == b"assign-a"
    assert loaded.members["a"].metadata("range") == b"range"
    empty = ClassicGroup.from_record("e", ClassicGroup("e", generation_id=2).to_record(), 5)
    assert empty.state == GroupState.EMPTY and empty.generation_id == 2
