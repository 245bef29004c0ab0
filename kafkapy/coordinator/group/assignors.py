"""Server-side partition assignors of KIP-848 consumer groups: ``uniform`` and ``range``.

Kafka's ``group.consumer.assignors`` (default ``uniform,range``, the first is the default): the
group coordinator, not a client leader, computes the *target assignment* of the whole group
whenever the group epoch moves past the assignment epoch. This module owns that computation and
nothing else: pure functions of their input, no clock, no I/O, no group state.

Theory of operation
-------------------
Input: every member's :class:`MemberSpec` (its subscription, as topic names or topic ids, and
its *previous target assignment*, which is what stickiness preserves: Kafka's
``TargetAssignmentBuilder`` hands the assignor the old target, not what members currently own)
and the topics that exist (:class:`TopicMetadata`, by topic id). Subscribed topics missing from
the metadata are ignored, as Kafka's ``TopicIds`` resolver drops unknown names.

Output: ``{member_id: {topic_id: frozenset(partitions)}}`` with an entry, possibly empty, for
every member. Invariants, checked by the property tests:

- every partition of a topic that at least one member subscribes to is assigned to exactly one
  member, and only to a member subscribed to its topic;
- the result is a function of the input's *content*: member order, dict order and set order
  never change it (ties break on member id, topic id, partition);
- assigning again from the output (same members, same topics) returns the output unchanged.

``uniform`` (Kafka's ``UniformAssignor``): balance first, then stickiness.

- all members subscribed to the same topics (``UniformHomogeneousAssignmentBuilder``): every
  member's quota is ``P // M``, and ``P % M`` members get one more; each keeps as much of its
  previous assignment as its quota allows and the rest goes round in (topic id, partition)
  order. The extra slots go to the members that held the most, so a member keeps
  ``min(held, quota)``; Kafka hands them out in hash-map order, which balances the same but
  moves more.
- different subscriptions (``UniformHeterogeneousAssignmentBuilder``): every member keeps all it
  held of topics it still subscribes to; new partitions go, topic by topic (most partitions per
  subscriber first), to the least loaded subscriber; then partitions move, one at a time, from
  a most loaded owner to a least loaded subscriber of the same topic while the two differ by
  more than one. Each move lowers the sum of squared loads, so the loop ends, and at its end no
  single move can make two members' loads closer.

``range`` (Kafka's server-side ``RangeAssignor``): per topic, its subscribers sorted by member id
share the partitions: ``P // N`` each and one more for the first ``P % N``. A member first keeps
the lowest-numbered partitions it held (up to its quota), the unassigned rest is handed out in
ascending ranges. A fresh group therefore gets contiguous ranges, identical across
co-partitioned topics (the join-friendly layout the classic range assignor gives).

Rack ids are carried in :class:`MemberSpec` but neither assignor uses them (Kafka's server-side
uniform and range assignors ignore racks too).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Protocol

import attrs

__all__ = [
    "ASSIGNORS",
    "GroupAssignment",
    "MemberAssignment",
    "MemberSpec",
    "PartitionAssignor",
    "RangeAssignor",
    "TopicMetadata",
    "UniformAssignor",
    "resolve_subscription",
]

MemberAssignment = dict[uuid.UUID, frozenset[int]]
"""One member's partitions: topic id -> partition ids (no empty sets)."""

GroupAssignment = dict[str, MemberAssignment]
"""The target assignment of a group: member id -> its partitions."""


def _freeze_topics(value: Iterable[str | uuid.UUID]) -> frozenset[str | uuid.UUID]:
    return frozenset(value)


def _freeze_assignment(value: Mapping[uuid.UUID, Iterable[int]]) -> dict[uuid.UUID, frozenset[int]]:
    return {topic_id: frozenset(parts) for topic_id, parts in value.items() if parts}


@attrs.frozen
class TopicMetadata:
    """A topic the assignor may hand out: its id, name and partition count."""

    topic_id: uuid.UUID
    name: str
    num_partitions: int


@attrs.frozen
class MemberSpec:
    """What the assignor knows of one member.

    ``subscribed_topics`` holds topic names, topic ids or both; ``assignment`` is the member's
    previous *target* assignment (what stickiness keeps).
    """

    member_id: str
    subscribed_topics: frozenset[str | uuid.UUID] = attrs.field(converter=_freeze_topics)
    assignment: Mapping[uuid.UUID, frozenset[int]] = attrs.field(
        factory=dict, converter=_freeze_assignment)
    rack_id: str | None = None
    instance_id: str | None = None


class PartitionAssignor(Protocol):
    """A server-side assignor, named as in ``group.consumer.assignors``."""

    @property
    def name(self) -> str: ...

    def assign(self, members: Iterable[MemberSpec],
               topics: Mapping[uuid.UUID, TopicMetadata]) -> GroupAssignment:
        """The target assignment of ``members`` over ``topics``."""
        ...


def resolve_subscription(subscribed: Iterable[str | uuid.UUID],
                         topics: Mapping[uuid.UUID, TopicMetadata]) -> frozenset[uuid.UUID]:
    """The ids of the subscribed topics that exist in ``topics``; names and ids both work."""
    by_name = {t.name: topic_id for topic_id, t in topics.items()}
    resolved: set[uuid.UUID] = set()
    for topic in subscribed:
        if isinstance(topic, uuid.UUID):
            if topic in topics:
                resolved.add(topic)
        elif topic in by_name:
            resolved.add(by_name[topic])
    return frozenset(resolved)


@attrs.frozen
class _Member:
    """A member as the algorithms see it: resolved subscription, previous partitions."""

    member_id: str
    topics: frozenset[uuid.UUID]
    previous: Mapping[uuid.UUID, frozenset[int]]


def _prepare(members: Iterable[MemberSpec],
             topics: Mapping[uuid.UUID, TopicMetadata]) -> list[_Member]:
    """Members sorted by id, subscriptions resolved, previous partitions cleaned.

    A previous partition survives only if its topic exists, its number is below the topic's
    partition count and no member earlier in id order claims it too: the previous target is
    disjoint when it comes from this module, but a caller-built input need not be.
    """
    specs = sorted(members, key=lambda m: m.member_id)
    if len({m.member_id for m in specs}) != len(specs):
        raise ValueError("duplicate member id")
    claimed: set[tuple[uuid.UUID, int]] = set()
    prepared = []
    for spec in specs:
        previous: dict[uuid.UUID, frozenset[int]] = {}
        for topic_id, parts in spec.assignment.items():
            meta = topics.get(topic_id)
            if meta is None:
                continue
            kept = frozenset(p for p in parts if 0 <= p < meta.num_partitions
                             and (topic_id, p) not in claimed)
            claimed.update((topic_id, p) for p in kept)
            if kept:
                previous[topic_id] = kept
        prepared.append(_Member(spec.member_id, resolve_subscription(spec.subscribed_topics,
                                                                     topics), previous))
    return prepared


def _result(members: list[_Member],
            owned: Mapping[str, Mapping[uuid.UUID, Iterable[int]]]) -> GroupAssignment:
    return {m.member_id: _freeze_assignment(owned.get(m.member_id, {})) for m in members}


@attrs.frozen
class UniformAssignor:
    """Kafka's ``uniform`` assignor: balanced, sticky, any mix of subscriptions."""

    name: str = "uniform"

    def assign(self, members: Iterable[MemberSpec],
               topics: Mapping[uuid.UUID, TopicMetadata]) -> GroupAssignment:
        prepared = _prepare(members, topics)
        if not prepared:
            return {}
        if len({m.topics for m in prepared}) == 1:
            return _uniform_homogeneous(prepared, topics)
        return _uniform_heterogeneous(prepared, topics)


def _uniform_homogeneous(members: list[_Member],
                         topics: Mapping[uuid.UUID, TopicMetadata]) -> GroupAssignment:
    subscribed = sorted(members[0].topics)
    total = sum(topics[t].num_partitions for t in subscribed)
    min_quota, extras = divmod(total, len(members))

    # What each member could keep: its previous partitions of the subscribed topics.
    held = {m.member_id: sorted((t, p) for t, parts in m.previous.items() if t in m.topics
                                for p in parts)
            for m in members}
    # The members holding the most get the extra slots: that keeps min(held, quota) each.
    by_held = sorted(members, key=lambda m: (-len(held[m.member_id]), m.member_id))
    quota = {m.member_id: min_quota + (1 if i < extras else 0) for i, m in enumerate(by_held)}

    owned: dict[str, dict[uuid.UUID, set[int]]] = {m.member_id: {} for m in members}
    taken: set[tuple[uuid.UUID, int]] = set()
    for m in members:
        for t, p in held[m.member_id][:quota[m.member_id]]:
            owned[m.member_id].setdefault(t, set()).add(p)
            taken.add((t, p))

    free = [(t, p) for t in subscribed for p in range(topics[t].num_partitions)
            if (t, p) not in taken]
    cursor = 0
    for m in members:
        room = quota[m.member_id] - sum(len(s) for s in owned[m.member_id].values())
        for t, p in free[cursor:cursor + room]:
            owned[m.member_id].setdefault(t, set()).add(p)
        cursor += max(room, 0)
    assert cursor == len(free), "quotas add up to the partition count"
    return _result(members, owned)


def _uniform_heterogeneous(members: list[_Member],
                           topics: Mapping[uuid.UUID, TopicMetadata]) -> GroupAssignment:
    # Member indices follow member id order, so every tie below breaks on member id.
    subscribers: dict[uuid.UUID, list[int]] = {}
    for i, m in enumerate(members):
        for t in m.topics:
            subscribers.setdefault(t, []).append(i)
    load = [0] * len(members)
    owner: dict[uuid.UUID, list[int]] = {t: [-1] * topics[t].num_partitions
                                         for t in subscribers}

    # Keep everything still subscribed to.
    for i, m in enumerate(members):
        for t, parts in m.previous.items():
            if t in m.topics:
                for p in parts:
                    owner[t][p] = i
                    load[i] += 1

    # Topics with the most partitions per subscriber first: they are the hardest to balance.
    order = sorted(subscribers, key=lambda t: (-topics[t].num_partitions / len(subscribers[t]),
                                               len(subscribers[t]), t))
    for t in order:
        for p, current in enumerate(owner[t]):
            if current == -1:
                target = min(subscribers[t], key=lambda i: (load[i], i))
                owner[t][p] = target
                load[target] += 1

    # Move one partition at a time from a most loaded owner to a least loaded subscriber of the
    # same topic while they differ by more than one. Each move lowers sum(load**2) by at least
    # 2, so this ends.
    moved = True
    while moved:
        moved = False
        for t in order:
            while True:
                owners = {i for i in owner[t] if i != -1}
                if not owners:
                    break
                giver = max(owners, key=lambda i: (load[i], -i))
                taker = min(subscribers[t], key=lambda i: (load[i], i))
                if load[giver] <= load[taker] + 1:
                    break
                # The highest partition of the topic the giver owns moves.
                p = max(p for p, i in enumerate(owner[t]) if i == giver)
                owner[t][p] = taker
                load[giver] -= 1
                load[taker] += 1
                moved = True

    owned: dict[str, dict[uuid.UUID, set[int]]] = {}
    for t, partition_owners in owner.items():
        for p, i in enumerate(partition_owners):
            owned.setdefault(members[i].member_id, {}).setdefault(t, set()).add(p)
    return _result(members, owned)


@attrs.frozen
class RangeAssignor:
    """Kafka's server-side ``range`` assignor: per topic, contiguous ranges, sticky."""

    name: str = "range"

    def assign(self, members: Iterable[MemberSpec],
               topics: Mapping[uuid.UUID, TopicMetadata]) -> GroupAssignment:
        prepared = _prepare(members, topics)
        subscribers: dict[uuid.UUID, list[_Member]] = {}
        for m in prepared:                      # id order, so each list is sorted by member id
            for t in m.topics:
                subscribers.setdefault(t, []).append(m)

        owned: dict[str, dict[uuid.UUID, set[int]]] = {}
        for t in sorted(subscribers):
            count = topics[t].num_partitions
            min_quota, extras = divmod(count, len(subscribers[t]))
            sticky: set[int] = set()
            unfilled: list[tuple[_Member, int]] = []
            for m in subscribers[t]:
                held = sorted(m.previous.get(t, ()))
                keep = held[:min_quota]
                remaining = min_quota - len(held)
                if remaining < 0 and extras > 0:
                    # It held more than the minimum: it keeps one extra while extras last.
                    extras -= 1
                    keep = held[:min_quota + 1]
                else:
                    unfilled.append((m, remaining))
                if keep:
                    owned.setdefault(m.member_id, {})[t] = set(keep)
                    sticky.update(keep)
            free = [p for p in range(count) if p not in sticky]
            cursor = 0
            for m, remaining in unfilled:
                if extras > 0:
                    remaining += 1
                    extras -= 1
                if remaining > 0:
                    owned.setdefault(m.member_id, {}).setdefault(t, set()).update(
                        free[cursor:cursor + remaining])
                    cursor += remaining
        return _result(prepared, owned)


ASSIGNORS: dict[str, PartitionAssignor] = {a.name: a for a in (UniformAssignor(),
                                                                RangeAssignor())}
"""The built-in assignors by name, as ``group.consumer.assignors`` names them."""
