"""KIP-848 consumer groups (``group.protocol=consumer``) with librdkafka (confluent-kafka), and
raw ConsumerGroupHeartbeat / JoinGroup requests where a client library would not send what we
want.

What is proven:

- Three consumers on a 6-partition topic converge to disjoint assignments of two partitions
  each that cover the topic; one closes (a leave heartbeat, MemberEpoch -1) and the two others
  take its partitions well within the session timeout. At every instant the consumers'
  assignments are disjoint (rebalance callbacks run inside ``poll``, so the snapshot taken
  between polls is consistent). They consume and commit everything; the coordinator holds the
  commits (``kafka_broker.committed_offsets``).
- AdminClient: ``describe_consumer_groups`` shows a consumer-type group, Stable, whose members'
  assignments are what the consumers own; ``list_consumer_groups`` lists it with type
  CONSUMER; ``delete_consumer_groups`` deletes it once empty, offsets included.
- A consumer that commits and closes is followed by one that resumes at the committed offset.
- The group survives a broker restart (its ConsumerGroup* records in ``__consumer_offsets``
  are loaded at startup): describe shows the same group epoch, member ids and assignments,
  and the three consumers keep their partitions with no rebalance callback at all.
- A member that stops heartbeating (raw requests) loses its partitions only when its session
  (``group.consumer.session.timeout.ms``) expires; then the real consumer gets all of them.
- A group id is of one type: a classic JoinGroup for a consumer group with members is
  INCONSISTENT_GROUP_PROTOCOL; a ConsumerGroupHeartbeat for a classic group with members is
  GROUP_ID_NOT_FOUND.

Broker settings keep it fast: heartbeat interval 300 ms, session timeout 6 s (min 1 s),
``offsets.topic.num.partitions`` 3.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import ConsumerGroupState, ConsumerGroupType
from confluent_kafka.admin import AdminClient

from kafkapy.protocol import API_KEYS
from kafkapy.protocol.classes import class_for, struct_classes
from kafkapy.testing import BrokerHandle
from tests.clients.client_support import RawClient

pytestmark = pytest.mark.timeout(120)

SESSION_MS = 6000
HEARTBEAT_MS = 300
CONSUMER_GROUPS = {"group.consumer.heartbeat.interval.ms": str(HEARTBEAT_MS),
                   "group.consumer.min.session.timeout.ms": "1000",
                   "group.consumer.session.timeout.ms": str(SESSION_MS),
                   "group.initial.rebalance.delay.ms": "0",
                   "offsets.topic.num.partitions": "3"}
TIMEOUT = 20.0
HEARTBEAT, JOIN_GROUP = 68, 11


def name_for(request: pytest.FixtureRequest) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in request.node.name)[:100]


class Member:
    """One ``group.protocol=consumer`` consumer in this process. Its rebalance callbacks run
    inside ``poll`` (registered explicitly, so librdkafka does not apply assignments on its
    own thread): its assignment only changes while we poll it."""

    def __init__(self, broker: BrokerHandle, group: str, topic: str, name: str) -> None:
        self.name = name
        self.errors: list[str] = []
        self.records: list[tuple[int, int]] = []        # (partition, offset) consumed
        self.consumer = confluent_kafka.Consumer({
            "bootstrap.servers": broker.bootstrap_servers, "group.id": group,
            "group.protocol": "consumer", "client.id": name,
            "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 100,
            "error_cb": lambda err: self.errors.append(str(err))})
        # (callback, partitions) of every rebalance callback, in order
        self.callbacks: list[tuple[str, list[int]]] = []

        def record(kind: str) -> Callable[[Any, list[Any]], None]:
            return lambda c, ps: self.callbacks.append((kind, [tp.partition for tp in ps]))

        self.consumer.subscribe([topic], on_assign=record("assign"),
                                on_revoke=record("revoke"), on_lost=record("lost"))
        self.closed = False

    @property
    def owned(self) -> frozenset[int]:
        if self.closed:
            return frozenset()
        return frozenset(tp.partition for tp in self.consumer.assignment())

    def poll(self) -> None:
        msg = self.consumer.poll(0.05)
        while msg is not None:
            if msg.error():
                self.errors.append(str(msg.error()))
            else:
                self.records.append((msg.partition(), msg.offset()))
            msg = self.consumer.poll(0)

    def commit(self, topic: str) -> None:
        """Commit (synchronously) the offset after the last record consumed of each partition
        it owns."""
        last: dict[int, int] = {}
        for p, o in self.records:
            if p in self.owned:
                last[p] = max(last.get(p, -1), o)
        if last:
            self.consumer.commit(offsets=[confluent_kafka.TopicPartition(topic, p, o + 1)
                                          for p, o in last.items()], asynchronous=False)

    def close(self) -> None:
        self.consumer.close()
        self.closed = True


def run_until(members: Sequence[Member], condition: Callable[[], bool], timeout: float,
              what: str) -> None:
    """Poll every open member until ``condition()``; asserts at every round that the members'
    assignments are disjoint. Fails on the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        for m in members:
            if not m.closed:
                m.poll()
        owned = {m.name: m.owned for m in members}
        seen: dict[int, str] = {}
        for name, parts in owned.items():
            for p in parts:
                assert p not in seen, f"partition {p} owned by {seen[p]} and {name}: {owned}"
                seen[p] = name
        if condition():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout} s; owned: {owned}; errors: "
                                 f"{ {m.name: m.errors[-5:] for m in members} }")


def balanced(members: Sequence[Member], partitions: int) -> Callable[[], bool]:
    def check() -> bool:
        sets = [m.owned for m in members]
        return (set().union(*sets) == set(range(partitions))
                and all(len(s) == partitions // len(members) for s in sets))
    return check


def admin_for(broker: BrokerHandle) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers,
                        "socket.timeout.ms": int(TIMEOUT * 1000)})


def produce(broker: BrokerHandle, topic: str, partitions: int, per_partition: int) -> None:
    for p in range(partitions):
        for i in range(per_partition):
            broker.produce(topic, b"v", key=f"p{p}-{i}".encode(), partition=p)


# ====================================================================== rebalances, admin


@pytest.mark.kafka_broker(CONSUMER_GROUPS)
def test_three_members_converge_take_over_on_close_and_commit(
        kafka_broker: BrokerHandle, request: pytest.FixtureRequest) -> None:
    broker = kafka_broker
    topic = group = name_for(request)
    broker.create_topic(topic, partitions=6)
    produce(broker, topic, 6, 5)
    members = [Member(broker, group, topic, n) for n in ("a", "b", "c")]
    a, b, c = members
    try:
        run_until(members, balanced(members, 6), TIMEOUT, "balanced assignment of 3 x 2")

        # The coordinator's view: a consumer group, Stable, with the same assignments.
        admin = admin_for(broker)
        deadline = time.monotonic() + TIMEOUT
        while True:
            description = admin.describe_consumer_groups([group])[group].result(TIMEOUT)
            if description.state == ConsumerGroupState.STABLE:
                break
            assert time.monotonic() < deadline, f"never Stable: {description.state}"
            for m in members:
                m.poll()
        assert description.type == ConsumerGroupType.CONSUMER
        assert not description.is_simple_consumer_group
        by_client = {m.client_id: {tp.partition for tp in m.assignment.topic_partitions}
                     for m in description.members}
        assert by_client == {m.name: set(m.owned) for m in members}
        assert {tp.topic for m in description.members
                for tp in m.assignment.topic_partitions} == {topic}
        listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(TIMEOUT)
        [listing] = [g for g in listed.valid if g.group_id == group]
        assert listing.type == ConsumerGroupType.CONSUMER
        classic = admin.list_consumer_groups(types={ConsumerGroupType.CLASSIC}).result(TIMEOUT)
        assert group not in [g.group_id for g in classic.valid]

        # a leaves: b and c take its partitions, long before a's session could expire.
        left_at = time.monotonic()
        a.close()
        run_until([b, c], balanced([b, c], 6), SESSION_MS / 1000 / 2,
                  "b and c sharing a's partitions")
        assert time.monotonic() - left_at < SESSION_MS / 1000 / 2

        # b and c consume everything (a committed nothing: they read its partitions from the
        # start) and commit it. Each must have read the partitions it owns *now*: records read
        # while it owned another partition earlier (before c joined, say) are not its to commit.
        def owners_consumed_all() -> bool:
            return all({(p, o) for p in m.owned for o in range(5)} <= set(m.records)
                       for m in (b, c)) and len(b.owned | c.owned) == 6

        run_until([b, c], owners_consumed_all, TIMEOUT, "every record consumed by its owner")
        for m in (b, c):
            m.commit(topic)
        ends = broker.end_offsets(topic)
        assert broker.committed_offsets(group) == {(topic, p): end for p, end in ends.items()}
    finally:
        for m in members:
            if not m.closed:
                m.close()

    # Empty now: it is still a consumer group (with its offsets) until deleted.
    description = admin.describe_consumer_groups([group])[group].result(TIMEOUT)
    assert (description.type, description.state, description.members) == \
        (ConsumerGroupType.CONSUMER, ConsumerGroupState.EMPTY, [])
    admin.delete_consumer_groups([group])[group].result(TIMEOUT)
    assert broker.committed_offsets(group) == {}
    listed = admin.list_consumer_groups().result(TIMEOUT)
    assert group not in [g.group_id for g in listed.valid]


# =================================================================== commit, close, resume


@pytest.mark.kafka_broker(CONSUMER_GROUPS)
def test_restarted_consumer_resumes_at_committed_offset(
        kafka_broker: BrokerHandle, request: pytest.FixtureRequest) -> None:
    broker = kafka_broker
    topic = group = name_for(request)
    broker.create_topic(topic, partitions=1)
    produce(broker, topic, 1, 20)
    first = Member(broker, group, topic, "first")
    try:
        run_until([first], lambda: len(first.records) >= 8, TIMEOUT, "8 records")
        first.records = first.records[:8]
        first.commit(topic)
        assert broker.committed_offsets(group) == {(topic, 0): 8}
    finally:
        first.close()
    assert first.records == [(0, o) for o in range(8)]

    second = Member(broker, group, topic, "second")
    try:
        run_until([second], lambda: len(second.records) >= 12, TIMEOUT, "the other 12")
        assert second.records == [(0, o) for o in range(8, 20)]
        second.commit(topic)
        assert broker.committed_offsets(group) == {(topic, 0): 20}
    finally:
        second.close()


# ================================================================= the group survives a restart


@pytest.mark.kafka_broker(CONSUMER_GROUPS)
def test_members_keep_their_assignments_across_a_broker_restart(
        kafka_broker: BrokerHandle, request: pytest.FixtureRequest) -> None:
    """The group is written to ``__consumer_offsets`` as it changes and loaded at startup:
    after a restart describe shows the same epoch and members, and the consumers, which keep
    heartbeating with their member ids and epochs, keep their partitions (no revocation, no
    lost partitions, no rejoin)."""
    broker = kafka_broker
    topic = group = name_for(request)
    broker.create_topic(topic, partitions=6)
    members = [Member(broker, group, topic, n) for n in ("a", "b", "c")]
    try:
        run_until(members, balanced(members, 6), TIMEOUT, "balanced assignment of 3 x 2")

        def stable() -> Any:
            # A fresh admin client each time: one created before the restart once timed out
            # on its first describe after it, in a full-suite run (its reconnect backoff; not
            # what this test is about).
            admin = admin_for(broker)
            deadline = time.monotonic() + TIMEOUT
            while True:
                description = admin.describe_consumer_groups([group])[group].result(TIMEOUT)
                if description.state == ConsumerGroupState.STABLE:
                    return description
                assert time.monotonic() < deadline, f"never Stable: {description.state}"
                for m in members:
                    m.poll()

        def view(description: Any) -> Any:
            return sorted((m.member_id, m.client_id,
                           sorted(tp.partition for tp in m.assignment.topic_partitions))
                          for m in description.members)

        before = stable()
        group_epoch = broker.call(lambda: broker.server.group_coordinator.consumer_groups
                                  .get(group).group_epoch)
        owned = {m.name: m.owned for m in members}
        callbacks = {m.name: len(m.callbacks) for m in members}

        broker.restart()

        after = stable()
        assert view(after) == view(before)
        loaded = broker.call(lambda: broker.server.group_coordinator.consumer_groups.get(group))
        assert loaded.group_epoch == group_epoch
        # Several heartbeat intervals of heartbeats with the old member ids and epochs.
        ended = time.monotonic() + 10 * HEARTBEAT_MS / 1000
        run_until(members, lambda: time.monotonic() >= ended, TIMEOUT, "ten heartbeats")
        assert {m.name: m.owned for m in members} == owned
        assert {m.name: m.callbacks[callbacks[m.name]:] for m in members} == \
            {m.name: [] for m in members}
        assert view(stable()) == view(before)
        assert broker.call(lambda: broker.server.group_coordinator.consumer_groups
                           .get(group).group_epoch) == group_epoch
    finally:
        for m in members:
            m.close()


# ==================================================================== raw members and types


def heartbeat_request(group: str, member_id: str, epoch: int, *,
                      owned: list[tuple[uuid.UUID, list[int]]] | None = None,
                      topics: list[str] | None = None, rebalance_timeout_ms: int = -1) -> Any:
    c = struct_classes(API_KEYS[HEARTBEAT].request.body)
    return c["ConsumerGroupHeartbeatRequest"](
        group_id=group, member_id=member_id, member_epoch=epoch,
        rebalance_timeout_ms=rebalance_timeout_ms, subscribed_topic_names=topics,
        topic_partitions=None if owned is None else [
            c["TopicPartitions"](topic_id=t, partitions=parts) for t, parts in owned])


@pytest.mark.kafka_broker(CONSUMER_GROUPS)
def test_silent_member_loses_its_partitions_when_its_session_expires(
        kafka_broker: BrokerHandle, request: pytest.FixtureRequest) -> None:
    broker = kafka_broker
    topic = group = name_for(request)
    broker.create_topic(topic, partitions=6)
    member_id = str(uuid.uuid4())
    with RawClient(broker.bootstrap_servers) as raw:
        joined = raw.request(HEARTBEAT, 1, heartbeat_request(
            group, member_id, 0, owned=[], topics=[topic], rebalance_timeout_ms=60000))
        assert (joined.error_code, joined.member_id, joined.member_epoch,
                joined.heartbeat_interval_ms) == (0, member_id, 1, HEARTBEAT_MS)
        [(topic_id, parts)] = [(t.topic_id, list(t.partitions))
                               for t in joined.assignment.topic_partitions]
        assert parts == list(range(6))
        # It reports owning all six, then falls silent (no leave).
        again = raw.request(HEARTBEAT, 1, heartbeat_request(
            group, member_id, 1, owned=[(topic_id, parts)]))
        assert (again.error_code, again.member_epoch) == (0, 1)
        silent_since = time.monotonic()

        real = Member(broker, group, topic, "real")
        try:
            run_until([real], lambda: real.owned == set(range(6)), SESSION_MS / 1000 + TIMEOUT,
                      "all six partitions for the real consumer")
            waited = time.monotonic() - silent_since
            assert waited >= SESSION_MS / 1000 - 0.5, (
                f"the silent member's partitions moved after {waited:.2f} s, before its "
                f"{SESSION_MS} ms session expired")
            # The silent member is gone: its next heartbeat is fenced.
            late = raw.request(HEARTBEAT, 1, heartbeat_request(
                group, member_id, 1, owned=[(topic_id, parts)]))
            assert late.error_code == 25        # UNKNOWN_MEMBER_ID
        finally:
            real.close()


@pytest.mark.kafka_broker(CONSUMER_GROUPS)
def test_a_group_id_is_classic_or_consumer(kafka_broker: BrokerHandle,
                                           request: pytest.FixtureRequest) -> None:
    broker = kafka_broker
    topic = name_for(request)
    broker.create_topic(topic, partitions=2)
    join = struct_classes(API_KEYS[JOIN_GROUP].request.body)
    with RawClient(broker.bootstrap_servers) as raw:
        # A consumer group with a member: a classic JoinGroup is refused.
        consumer_group = topic + "-consumer"
        member_id = str(uuid.uuid4())
        joined = raw.request(HEARTBEAT, 1, heartbeat_request(
            consumer_group, member_id, 0, owned=[], topics=[topic], rebalance_timeout_ms=5000))
        assert joined.error_code == 0
        classic_join = join["JoinGroupRequest"](
            group_id=consumer_group, session_timeout_ms=6000, rebalance_timeout_ms=6000,
            member_id="", protocol_type="consumer", protocols=[
                join["JoinGroupRequestProtocol"](name="range", metadata=b"\0\0\0\0\0\0")])
        refused = raw.request(JOIN_GROUP, 3, classic_join)
        assert (refused.error_code, refused.member_id) == (23, "")   # INCONSISTENT_GROUP_...
        left = raw.request(HEARTBEAT, 1, heartbeat_request(consumer_group, member_id, -1))
        assert (left.error_code, left.member_epoch) == (0, -1)
        # Empty now: the group becomes a classic one on the next JoinGroup (Kafka converts it).
        accepted = raw.request(JOIN_GROUP, 3, classic_join)
        assert accepted.error_code == 0 and accepted.member_id

        # Now a classic group with a member: a consumer heartbeat finds no consumer group.
        refused_hb = raw.request(HEARTBEAT, 1, heartbeat_request(
            consumer_group, str(uuid.uuid4()), 0, owned=[], topics=[topic],
            rebalance_timeout_ms=5000))
        assert refused_hb.error_code == 69     # GROUP_ID_NOT_FOUND
        assert refused_hb.error_message == f"Group {consumer_group} is not a consumer group."


@pytest.mark.kafka_broker(CONSUMER_GROUPS)
def test_describe_answers_per_group(kafka_broker: BrokerHandle,
                                    request: pytest.FixtureRequest) -> None:
    broker = kafka_broker
    topic = group = name_for(request)
    broker.create_topic(topic, partitions=3)
    member_id = str(uuid.uuid4())
    describe = class_for(API_KEYS[69].request.body)
    with RawClient(broker.bootstrap_servers) as raw:
        raw.request(HEARTBEAT, 1, heartbeat_request(
            group, member_id, 0, owned=[], topics=[topic], rebalance_timeout_ms=5000))
        answer = raw.request(69, 1, describe(group_ids=[group, "nobody", ""],
                                             include_authorized_operations=False))
        mine, nobody, empty = answer.groups
        assert (mine.error_code, mine.group_state, mine.group_epoch, mine.assignment_epoch,
                mine.assignor_name) == (0, "Stable", 1, 1, "uniform")
        [m] = mine.members
        assert (m.member_id, m.member_epoch, m.subscribed_topic_names, m.member_type) == \
            (member_id, 1, [topic], 1)
        assert [(t.topic_name, list(t.partitions)) for t in m.assignment.topic_partitions] \
            == [(topic, [0, 1, 2])]
        assert (nobody.error_code, nobody.error_message) == (69, "Group nobody not found.")
        assert empty.error_code == 24           # INVALID_GROUP_ID


@pytest.mark.kafka_broker(CONSUMER_GROUPS)
def test_metadata_by_topic_id(kafka_broker: BrokerHandle,
                              request: pytest.FixtureRequest) -> None:
    """librdkafka resolves the topic ids of its assignment with Metadata v12 by id."""
    broker = kafka_broker
    topic = name_for(request)
    broker.create_topic(topic, partitions=2)
    topic_id = broker.call(lambda: broker.server.metadata_store.topics[topic].topic_id)
    metadata = struct_classes(API_KEYS[3].request.body)
    unknown = uuid.uuid4()

    def ask(version: int) -> list[tuple[int, str | None, uuid.UUID, int]]:
        with RawClient(broker.bootstrap_servers) as raw:
            answer = raw.request(3, version, metadata["MetadataRequest"](
                topics=[metadata["MetadataRequestTopic"](topic_id=t, name=None)
                        for t in (topic_id, unknown, topic_id)],
                allow_auto_topic_creation=True))
        return [(t.error_code, t.name, t.topic_id, len(t.partitions)) for t in answer.topics]

    assert ask(12) == [(0, topic, topic_id, 2), (100, None, unknown, 0)]
