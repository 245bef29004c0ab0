"""The server-side assignors (kafkapy.coordinator.group.assignors) against Kafka's.

Fixed vectors are taken from Kafka's group-coordinator tests (named at each test); the
hypothesis properties state what Kafka's assignors promise (complete, disjoint, only to
subscribers, balanced, sticky) and what kafkapy adds (deterministic, a fixed point).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkapy.coordinator.group.assignors import (
    ASSIGNORS,
    GroupAssignment,
    MemberSpec,
    RangeAssignor,
    TopicMetadata,
    UniformAssignor,
    resolve_subscription,
)

T1, T2, T3 = (uuid.UUID(int=i) for i in (1, 2, 3))


def topics(**counts: int) -> dict[uuid.UUID, TopicMetadata]:
    ids = {"t1": T1, "t2": T2, "t3": T3}
    return {ids[name]: TopicMetadata(ids[name], name, n) for name, n in counts.items()}


def a(**parts: list[int]) -> dict[uuid.UUID, frozenset[int]]:
    ids = {"t1": T1, "t2": T2, "t3": T3}
    return {ids[name]: frozenset(p) for name, p in parts.items()}


def check_valid(result: GroupAssignment, members: list[MemberSpec],
                meta: Mapping[uuid.UUID, TopicMetadata]) -> None:
    """Every subscribed partition exactly once, only to a subscriber."""
    assert set(result) == {m.member_id for m in members}
    subs = {m.member_id: resolve_subscription(m.subscribed_topics, meta) for m in members}
    seen: dict[tuple[uuid.UUID, int], str] = {}
    for member_id, assignment in result.items():
        for topic_id, parts in assignment.items():
            assert parts, "no empty topic entry"
            assert topic_id in subs[member_id], f"{member_id} is not subscribed to {topic_id}"
            for p in parts:
                assert 0 <= p < meta[topic_id].num_partitions
                assert (topic_id, p) not in seen, f"{topic_id}-{p} assigned twice"
                seen[(topic_id, p)] = member_id
    wanted = {(t, p) for s in subs.values() for t in s for p in range(meta[t].num_partitions)}
    assert set(seen) == wanted


def sizes(result: GroupAssignment) -> dict[str, int]:
    return {m: sum(len(p) for p in assignment.values()) for m, assignment in result.items()}


# ---------------------------------------------------------------------------------- range

# RangeAssignorTest.testFirstAssignmentNumConsumersGreaterThanNumPartitions
def test_range_more_members_than_partitions() -> None:
    meta = topics(t1=3, t3=2)
    members = [MemberSpec(m, {"t1", "t3"}) for m in ("A", "B", "C")]
    assert RangeAssignor().assign(members, meta) == {
        "A": a(t1=[0], t3=[0]), "B": a(t1=[1], t3=[1]), "C": a(t1=[2])}


# RangeAssignorTest.testReassignmentNumConsumersGreaterThanNumPartitionsWhenOneConsumerAdded
def test_range_sticky_when_a_member_is_added_to_a_full_group() -> None:
    meta = topics(t1=2, t2=2)
    members = [MemberSpec("A", {T1, T2}, a(t1=[0], t2=[0])),
               MemberSpec("B", {T1, T2}, a(t1=[1], t2=[1])),
               MemberSpec("C", {T1, T2})]
    assert RangeAssignor().assign(members, meta) == {
        "A": a(t1=[0], t2=[0]), "B": a(t1=[1], t2=[1]), "C": {}}


# RangeAssignorTest.testReassignmentWhenOnePartitionAddedForTwoConsumersTwoTopics
def test_range_partition_added() -> None:
    meta = topics(t1=4, t2=4)
    members = [MemberSpec("A", {T1, T2}, a(t1=[0, 1], t2=[0, 1])),
               MemberSpec("B", {T1, T2}, a(t1=[2], t2=[2]))]
    assert RangeAssignor().assign(members, meta) == {
        "A": a(t1=[0, 1], t2=[0, 1]), "B": a(t1=[2, 3], t2=[2, 3])}


# RangeAssignorTest.testReassignmentWhenOneConsumerAddedAfterInitialAssignmentWithTwoConsumers
# TwoTopics
def test_range_member_added() -> None:
    meta = topics(t1=3, t2=3)
    members = [MemberSpec("A", {T1, T2}, a(t1=[0, 1], t2=[0, 1])),
               MemberSpec("B", {T1, T2}, a(t1=[2], t2=[2])),
               MemberSpec("C", {T1, T2})]
    assert RangeAssignor().assign(members, meta) == {
        "A": a(t1=[0], t2=[0]), "B": a(t1=[2], t2=[2]), "C": a(t1=[1], t2=[1])}


# RangeAssignorTest.testReassignmentWhenOneConsumerAddedAndOnePartitionAfterInitialAssignment
# WithTwoConsumersTwoTopics
def test_range_member_and_partition_added_heterogeneous() -> None:
    meta = topics(t1=4, t2=3)
    members = [MemberSpec("A", {T1, T2}, a(t1=[0, 1], t2=[0, 1])),
               MemberSpec("B", {T1, T2}, a(t1=[2], t2=[2])),
               MemberSpec("C", {T1})]
    assert RangeAssignor().assign(members, meta) == {
        "A": a(t1=[0, 1], t2=[0, 1]), "B": a(t1=[2], t2=[2]), "C": a(t1=[3])}


# RangeAssignorTest.testReassignmentWhenOneConsumerRemovedAfterInitialAssignmentWithTwo
# ConsumersTwoTopics
def test_range_member_removed() -> None:
    meta = topics(t1=3, t2=3)
    members = [MemberSpec("B", {T1, T2}, a(t1=[2], t2=[2]))]
    assert RangeAssignor().assign(members, meta) == {"B": a(t1=[0, 1, 2], t2=[0, 1, 2])}


def test_range_gives_co_partitioned_topics_the_same_contiguous_ranges() -> None:
    # The classic range layout (members sorted by id, ranges in order, the first P % N one
    # partition longer), which Kafka's server-side RangeAssignor keeps for fresh groups.
    meta = topics(t1=7, t2=7)
    members = [MemberSpec(m, {"t1", "t2"}) for m in ("c", "a", "b")]
    assert RangeAssignor().assign(members, meta) == {
        "a": a(t1=[0, 1, 2], t2=[0, 1, 2]), "b": a(t1=[3, 4], t2=[3, 4]),
        "c": a(t1=[5, 6], t2=[5, 6])}


def test_range_and_uniform_differ_on_many_small_topics() -> None:
    # range balances each topic on its own (the first member gets every topic's extra
    # partition); uniform balances the members' totals.
    meta = topics(t1=3, t2=3)
    members = [MemberSpec(m, {"t1", "t2"}) for m in ("a", "b")]
    ranged = RangeAssignor().assign(members, meta)
    assert ranged == {"a": a(t1=[0, 1], t2=[0, 1]), "b": a(t1=[2], t2=[2])}
    assert sizes(ranged) == {"a": 4, "b": 2}
    uniform = UniformAssignor().assign(members, meta)
    assert sizes(uniform) == {"a": 3, "b": 3}
    check_valid(uniform, members, meta)


# ---------------------------------------------------------------------------------- uniform

# UniformHomogeneousAssignmentBuilderTest: one member takes everything, then the partitions
# spread; members keep what they can.
def test_uniform_homogeneous_growth_keeps_partitions() -> None:
    meta = topics(t1=6)
    uniform = UniformAssignor()
    first = uniform.assign([MemberSpec("a", {"t1"})], meta)
    assert first == {"a": a(t1=[0, 1, 2, 3, 4, 5])}
    second = uniform.assign([MemberSpec("a", {"t1"}, first["a"]), MemberSpec("b", {"t1"})], meta)
    assert second == {"a": a(t1=[0, 1, 2]), "b": a(t1=[3, 4, 5])}
    third = uniform.assign([MemberSpec("a", {"t1"}, second["a"]),
                            MemberSpec("b", {"t1"}, second["b"]), MemberSpec("c", {"t1"})], meta)
    assert third == {"a": a(t1=[0, 1]), "b": a(t1=[3, 4]), "c": a(t1=[2, 5])}


def test_uniform_homogeneous_extra_slot_goes_to_who_holds_more() -> None:
    # 7 partitions over 3 members: quotas 3, 2, 2; the member holding 4 keeps 3.
    meta = topics(t1=7)
    members = [MemberSpec("a", {"t1"}, a(t1=[0, 1])), MemberSpec("b", {"t1"}, a(t1=[2, 3, 4, 5])),
               MemberSpec("c", {"t1"}, a(t1=[6]))]
    result = UniformAssignor().assign(members, meta)
    assert result == {"a": a(t1=[0, 1]), "b": a(t1=[2, 3, 4]), "c": a(t1=[5, 6])}


# UniformHeterogeneousAssignmentBuilderTest (subscription changes): a member loses the
# topics it no longer subscribes to; balance comes before stickiness, so b, which gets all of
# t2, gives its t1 partition to a (3 and 3 rather than 2 and 4).
def test_uniform_heterogeneous_subscription_change() -> None:
    meta = topics(t1=3, t2=3)
    members = [MemberSpec("a", {"t1"}, a(t1=[0, 1], t2=[0, 1])),
               MemberSpec("b", {"t1", "t2"}, a(t1=[2], t2=[2]))]
    result = UniformAssignor().assign(members, meta)
    check_valid(result, members, meta)
    assert result == {"a": a(t1=[0, 1, 2]), "b": a(t2=[0, 1, 2])}


def test_uniform_heterogeneous_balances_through_shared_topics() -> None:
    # b alone can take t2; a and b share t1, so t1 goes to a.
    meta = topics(t1=4, t2=4)
    members = [MemberSpec("a", {"t1"}), MemberSpec("b", {"t1", "t2"})]
    result = UniformAssignor().assign(members, meta)
    assert result == {"a": a(t1=[0, 1, 2, 3]), "b": a(t2=[0, 1, 2, 3])}


def test_unknown_topics_are_ignored_and_empty_groups_work() -> None:
    meta = topics(t1=2)
    for assignor in ASSIGNORS.values():
        assert assignor.assign([], meta) == {}
        result = assignor.assign([MemberSpec("a", {"t1", "nope", T3})], meta)
        assert result == {"a": a(t1=[0, 1])}


def test_duplicate_member_ids_are_refused() -> None:
    with pytest.raises(ValueError):
        UniformAssignor().assign([MemberSpec("a", {"t1"}), MemberSpec("a", {"t1"})], topics(t1=1))


# ---------------------------------------------------------------------------------- properties

TOPIC_IDS = [uuid.UUID(int=i) for i in range(1, 5)]


@st.composite
def groups(draw: st.DrawFn, homogeneous: bool) -> tuple[list[MemberSpec],
                                                         dict[uuid.UUID, TopicMetadata]]:
    """Members with random subscriptions and a random, valid-ish previous assignment."""
    n_topics = draw(st.integers(1, 4))
    meta = {t: TopicMetadata(t, f"t{i}", draw(st.integers(0, 12)))
            for i, t in enumerate(TOPIC_IDS[:n_topics])}
    member_ids = draw(st.lists(st.text("abcdefgh", min_size=1, max_size=3), min_size=1,
                               max_size=7, unique=True))
    everything = sorted(meta)
    common = draw(st.sets(st.sampled_from(everything), min_size=1))
    subs = {m: (common if homogeneous else draw(st.sets(st.sampled_from(everything))))
            for m in member_ids}
    # Previous target: each partition goes to at most one member, maybe one that no longer
    # subscribes to its topic (a subscription change), or to nobody (new partitions).
    previous: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in member_ids}
    for t in everything:
        for p in range(meta[t].num_partitions):
            holder = draw(st.sampled_from([None, *member_ids]))
            if holder is not None:
                previous[holder].setdefault(t, set()).add(p)
    members = [MemberSpec(m, frozenset(subs[m]), {t: frozenset(p) for t, p in previous[m].items()})
               for m in member_ids]
    return members, meta


ALL = [UniformAssignor(), RangeAssignor()]


@pytest.mark.parametrize("assignor", ALL, ids=lambda x: x.name)
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_complete_disjoint_deterministic_and_a_fixed_point(assignor: UniformAssignor,
                                                           data: st.DataObject) -> None:
    members, meta = data.draw(groups(homogeneous=data.draw(st.booleans())))
    result = assignor.assign(members, meta)
    check_valid(result, members, meta)
    # Order of the input does not matter.
    assert assignor.assign(list(reversed(members)), meta) == result
    # Assigning again from the result changes nothing (no churn without a change).
    again = [MemberSpec(m.member_id, m.subscribed_topics, result[m.member_id]) for m in members]
    assert assignor.assign(again, meta) == result


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_uniform_homogeneous_balanced_and_sticky(data: st.DataObject) -> None:
    members, meta = data.draw(groups(homogeneous=True))
    result = UniformAssignor().assign(members, meta)
    counts = sizes(result)
    assert max(counts.values()) - min(counts.values()) <= 1
    # Stickiness: a member keeps min(what it held of its topics, its quota).
    subscribed = resolve_subscription(members[0].subscribed_topics, meta)
    total = sum(meta[t].num_partitions for t in subscribed)
    for m in members:
        held = {(t, p) for t, parts in m.assignment.items() if t in subscribed for p in parts}
        kept = {(t, p) for t, parts in result[m.member_id].items() for p in parts} & held
        assert len(kept) >= min(len(held), total // len(members))
        assert len(kept) == min(len(held), counts[m.member_id])


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_uniform_heterogeneous_no_single_move_balances_better(data: st.DataObject) -> None:
    members, meta = data.draw(groups(homogeneous=False))
    result = UniformAssignor().assign(members, meta)
    counts = sizes(result)
    subs = {m.member_id: resolve_subscription(m.subscribed_topics, meta) for m in members}
    for owner, assignment in result.items():
        for t in assignment:
            for other in subs:
                if t in subs[other]:
                    assert counts[owner] <= counts[other] + 1, (owner, other, t)
    # Stickiness: what a member held of topics it still subscribes to, it keeps, unless
    # balance required a move (then it ends no lower than the least loaded co-subscriber + 1).
    for m in members:
        for t, parts in m.assignment.items():
            if t in subs[m.member_id] and not parts <= result[m.member_id].get(t, frozenset()):
                assert counts[m.member_id] >= min(counts[o] for o in subs if t in subs[o])


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_range_balances_each_topic(data: st.DataObject) -> None:
    members, meta = data.draw(groups(homogeneous=data.draw(st.booleans())))
    result = RangeAssignor().assign(members, meta)
    subs = {m.member_id: resolve_subscription(m.subscribed_topics, meta) for m in members}
    for t in meta:
        subscribers = [m for m in subs if t in subs[m]]
        if not subscribers:
            continue
        per_member = [len(result[m].get(t, ())) for m in subscribers]
        assert max(per_member) - min(per_member) <= 1
