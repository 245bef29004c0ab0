"""ClassicGroup and MemberMetadata: one classic (JoinGroup/SyncGroup) consumer group's state.

Kafka's ``GroupMetadata`` / ``MemberMetadata`` (the classic protocol's group and member), pure
data and bookkeeping: the members and their protocols, the static-member map
(``group.instance.id`` -> member id), the pending members of KIP-394 (given an id by
MEMBER_ID_REQUIRED, not yet joined), the state with Kafka's allowed transitions, protocol
selection, and the committed offsets. What happens when (rebalances, timers, persistence)
belongs to :mod:`kafkapy.coordinator.group.group_coordinator`.

A member waiting for its JoinGroup or SyncGroup answer holds a ``Reply``: the coordinator
answers it when the rebalance reaches that point, and the request's handler awaits it.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable
from typing import Any

import attrs
import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group.records import GroupMetadataRecord, MemberRecord, OffsetAndMetadata
from kafkapy.protocol.codec import decode
from kafkapy.protocol.messages.consumer_protocol import SUBSCRIPTION

__all__ = ["ClassicGroup", "GroupState", "JoinResult", "MemberMetadata", "Reply", "SyncResult",
           "subscribed_topics"]


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


# Kafka's ClassicGroupState.validPreviousStates.
_VALID_PREVIOUS = {
    GroupState.EMPTY: {GroupState.PREPARING_REBALANCE},
    GroupState.PREPARING_REBALANCE: {GroupState.STABLE, GroupState.COMPLETING_REBALANCE,
                                     GroupState.EMPTY},
    GroupState.COMPLETING_REBALANCE: {GroupState.PREPARING_REBALANCE},
    GroupState.STABLE: {GroupState.COMPLETING_REBALANCE},
    GroupState.DEAD: set(GroupState),
}


class Reply:
    """A JoinGroup or SyncGroup answer that is given later (once)."""

    def __init__(self) -> None:
        self._event = trio.Event()
        self.result: Any = None

    @property
    def answered(self) -> bool:
        return self._event.is_set()

    def answer(self, result: Any) -> None:
        if not self._event.is_set():
            self.result = result
            self._event.set()

    async def wait(self) -> Any:
        await self._event.wait()
        return self.result


@attrs.frozen
class JoinResult:
    error: int
    member_id: str = ""
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = ""
    members: tuple[tuple[str, str | None, bytes], ...] = ()    # (id, instance id, metadata)
    skip_assignment: bool = False


@attrs.frozen
class SyncResult:
    error: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@attrs.define(eq=False)
class MemberMetadata:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    join_reply: Reply | None = None
    sync_reply: Reply | None = None
    is_new: bool = False
    is_leaving: bool = False
    heartbeat_satisfied: bool = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def awaiting_join(self) -> bool:
        return self.join_reply is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_reply is not None

    @property
    def has_satisfied_heartbeat(self) -> bool:
        """Kafka's hasSatisfiedHeartbeat: a new member must heartbeat (join) in time; members
        waiting for a rebalance answer are alive by definition; others need a heartbeat."""
        if self.is_new:
            return self.heartbeat_satisfied
        if self.awaiting_join or self.awaiting_sync:
            return True
        return self.heartbeat_satisfied

    def metadata(self, protocol: str) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        raise KeyError(f"member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")


@attrs.define(eq=False)
class ClassicGroup:
    group_id: str
    state: GroupState = GroupState.EMPTY
    state_timestamp_ms: int = -1
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, MemberMetadata] = attrs.field(factory=dict)
    static_members: dict[str, str] = attrs.field(factory=dict)
    pending_members: set[str] = attrs.field(factory=set)
    pending_sync: set[str] = attrs.field(factory=set)
    supported_protocols: Counter[str] = attrs.field(factory=Counter)
    awaiting_join: int = 0
    new_member_added: bool = False
    last_join_time: float = 0.0       # the coordinator's monotonic() at the latest new member
    offsets: dict[TopicPartition, OffsetAndMetadata] = attrs.field(factory=dict)

    # ------------------------------------------------------------------ state

    def is_state(self, *states: GroupState) -> bool:
        return self.state in states

    def transition(self, state: GroupState, now_ms: int) -> None:
        if self.state not in _VALID_PREVIOUS[state]:
            raise AssertionError(f"group {self.group_id}: no transition from {self.state.value} "
                                 f"to {state.value}")
        self.state = state
        self.state_timestamp_ms = now_ms

    # ---------------------------------------------------------------- members

    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def is_pending(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def static_member_id(self, instance_id: str | None) -> str | None:
        return None if instance_id is None else self.static_members.get(instance_id)

    def is_static_member_fenced(self, instance_id: str | None, member_id: str) -> bool:
        """A static member's request with a member id that is not the instance's current one
        (Kafka's isStaticMemberFenced)."""
        if instance_id is None:
            return False
        current = self.static_members.get(instance_id)
        return current is not None and current != member_id

    def add(self, member: MemberMetadata, join_reply: Reply | None = None) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        assert self.protocol_type == member.protocol_type
        self.members[member.member_id] = member
        self.supported_protocols.update(name for name, _ in member.protocols)
        if member.is_static:
            assert member.group_instance_id is not None
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id
        if join_reply is not None:
            member.join_reply = join_reply
            self.awaiting_join += 1
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> MemberMetadata | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self.supported_protocols.subtract(name for name, _ in member.protocols)
        self.supported_protocols += Counter()        # drop zero counts
        if member.awaiting_join:
            self.awaiting_join -= 1
        self.pending_sync.discard(member_id)
        if member.group_instance_id is not None and \
                self.static_members.get(member.group_instance_id) == member_id:
            del self.static_members[member.group_instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def update_member(self, member: MemberMetadata, protocols: list[tuple[str, bytes]],
                      rebalance_timeout_ms: int, session_timeout_ms: int,
                      join_reply: Reply | None) -> None:
        self.supported_protocols.subtract(name for name, _ in member.protocols)
        self.supported_protocols.update(name for name, _ in protocols)
        self.supported_protocols += Counter()
        member.protocols = protocols
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if join_reply is not None and not member.awaiting_join:
            self.awaiting_join += 1
        elif join_reply is None and member.awaiting_join:
            self.awaiting_join -= 1
        member.join_reply = join_reply

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str
                              ) -> MemberMetadata:
        """Give the static member ``instance_id`` the id ``new_id``; the old id's waiting
        requests are fenced (Kafka's replaceStaticMember)."""
        member = self.members.pop(old_id)
        if member.join_reply is not None:
            member.join_reply.answer(JoinResult(FENCED_INSTANCE_ID, old_id))
            member.join_reply = None
            self.awaiting_join -= 1
        if member.sync_reply is not None:
            member.sync_reply.answer(SyncResult(FENCED_INSTANCE_ID))
            member.sync_reply = None
        member.member_id = new_id
        self.members[new_id] = member
        if self.leader_id == old_id:
            self.leader_id = new_id
        self.static_members[instance_id] = new_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        return member

    def answer_join(self, member: MemberMetadata, result: JoinResult) -> None:
        if member.join_reply is not None:
            member.join_reply.answer(result)
            member.join_reply = None
            self.awaiting_join -= 1

    def answer_sync(self, member: MemberMetadata, result: SyncResult) -> None:
        if member.sync_reply is not None:
            member.sync_reply.answer(result)
            member.sync_reply = None

    @property
    def all_members_joined(self) -> bool:
        return len(self.members) == self.awaiting_join and not self.pending_members

    def not_yet_rejoined(self) -> list[MemberMetadata]:
        return [m for m in self.members.values() if not m.awaiting_join]

    @property
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # -------------------------------------------------------------- protocols

    def supports_protocols(self, protocol_type: str, protocols: Iterable[str]) -> bool:
        """Kafka's supportsProtocols: an empty group takes any non-empty type and protocol
        list; otherwise the type must match and one protocol be supported by every member."""
        names = list(protocols)
        if self.state == GroupState.EMPTY:
            return bool(protocol_type) and bool(names)
        return self.protocol_type == protocol_type and \
            any(self.supported_protocols[n] == len(self.members) for n in names)

    def select_protocol(self) -> str:
        """Each member votes for its first protocol every member supports; most votes win
        (ties: the protocol listed first by the leader)."""
        if not self.members:
            raise ValueError(f"group {self.group_id} has no members to select a protocol")
        candidates = {n for n, c in self.supported_protocols.items() if c == len(self.members)}
        votes = Counter(m.vote(candidates) for m in self.members.values())
        leader = self.members.get(self.leader_id or "") or next(iter(self.members.values()))
        order = {name: i for i, (name, _) in enumerate(leader.protocols)}
        return max(votes, key=lambda n: (votes[n], -order.get(n, len(order))))

    def init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.transition(GroupState.EMPTY, now_ms)

    def join_members(self) -> tuple[tuple[str, str | None, bytes], ...]:
        """What the leader's JoinGroup answer lists: every member's metadata for the chosen
        protocol."""
        assert self.protocol_name is not None
        return tuple((m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                     for m in self.members.values())

    # ------------------------------------------------------------ persistence

    def to_record(self, assignments: dict[str, bytes] | None = None) -> GroupMetadataRecord:
        """The group as the GroupMetadataValue Kafka stores (after a rebalance or an empty
        generation)."""
        members = []
        for m in self.members.values():
            subscription = m.metadata(self.protocol_name) if self.protocol_name else b""
            assignment = m.assignment if assignments is None else \
                assignments.get(m.member_id, b"")
            members.append(MemberRecord(m.member_id, m.group_instance_id, m.client_id,
                                        m.client_host, m.rebalance_timeout_ms,
                                        m.session_timeout_ms, subscription, assignment))
        return GroupMetadataRecord(self.protocol_type or "", self.generation_id,
                                   self.protocol_name, self.leader_id, self.state_timestamp_ms,
                                   tuple(members))

    @classmethod
    def from_record(cls, group_id: str, record: GroupMetadataRecord, now_ms: int
                    ) -> ClassicGroup:
        """A group loaded from ``__consumer_offsets``: Empty without members, else Stable
        (Kafka's GroupMetadata.loadGroup)."""
        group = cls(group_id, generation_id=record.generation,
                    protocol_type=record.protocol_type or None,
                    protocol_name=record.protocol, leader_id=record.leader,
                    state_timestamp_ms=record.current_state_timestamp_ms
                    if record.current_state_timestamp_ms >= 0 else now_ms)
        protocol = record.protocol or ""
        for m in record.members:
            member = MemberMetadata(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                    m.rebalance_timeout_ms, m.session_timeout_ms,
                                    record.protocol_type, [(protocol, m.subscription)],
                                    assignment=m.assignment)
            group.members[m.member_id] = member
            group.supported_protocols[protocol] += 1
            if m.group_instance_id is not None:
                group.static_members[m.group_instance_id] = m.member_id
        group.state = GroupState.STABLE if group.members else GroupState.EMPTY
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members), None)
        return group


FENCED_INSTANCE_ID = 82


def subscribed_topics(metadata: bytes) -> list[str]:
    """The topics of a consumer's JoinGroup metadata (ConsumerProtocolSubscription: an INT16
    version, then the body; a newer version than known is read as the newest, as Kafka)."""
    if len(metadata) < 2:
        raise ValueError("subscription shorter than its version")
    version = min(int.from_bytes(metadata[:2], "big", signed=True), 3)
    return list(decode(SUBSCRIPTION, version, memoryview(metadata)[2:]).topics)
