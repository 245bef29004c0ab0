"""Classic consumer groups with real clients: confluent-kafka (librdkafka), kafka-python and
aiokafka members in child processes (tests/clients/group_support.py), and bad requests over a
raw socket.

What is proven:

- Rebalances: three members of one library on a 6-partition topic get disjoint assignments
  that cover every partition, balanced; one closes (LeaveGroup: the others take its partitions
  well within the session timeout), one is SIGKILLed (no LeaveGroup: its partitions move only
  once its session has expired), one joins. At every instant of the run the live members'
  assignments are disjoint; after every rebalance they cover the six partitions; members commit
  synchronously after each poll, and no committed record is committed twice or consumed again,
  and every produced record is committed once. For range and roundrobin in every library and
  librdkafka's cooperative-sticky.
- Commit, close, a new consumer in the group resumes at the committed offset (checked against
  the coordinator with ``kafka_broker.committed_offsets``).
- A broker restart keeps committed offsets and the group (Empty, with its protocol type; and
  a live member keeps its membership: no rebalance, same member id).
- Static membership: a member restarted with the same instance id inside the session timeout
  gets its partitions back, and the other members see no rebalance (no callback fires, member
  ids unchanged) even after the old instance's session timeout.
- Raw bad input: INVALID_GROUP_ID, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
  OFFSET_METADATA_TOO_LARGE (only for that partition), MEMBER_ID_REQUIRED,
  INVALID_SESSION_TIMEOUT; after each, DescribeGroups shows the group unchanged and the real
  member's heartbeat is still answered NONE (no rebalance was started).

Broker settings keep it fast: ``group.initial.rebalance.delay.ms`` 100,
``group.min.session.timeout.ms`` 1000 (members use 4 s sessions and 300 ms heartbeats),
``offsets.topic.num.partitions`` 3 except in the restart test (Kafka's default 50).
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient

from kafkapy.protocol import API_KEYS, encode
from kafkapy.protocol.classes import class_for, struct_classes
from kafkapy.protocol.messages.consumer_protocol import ASSIGNMENT, SUBSCRIPTION
from kafkapy.testing import BrokerHandle
from tests.clients.client_support import RawClient
from tests.clients.group_support import ASSIGNORS, LIBRARIES, Group

pytestmark = pytest.mark.timeout(120)

FAST_GROUPS = {"group.initial.rebalance.delay.ms": "100",
               "group.min.session.timeout.ms": "1000",
               "group.max.session.timeout.ms": "60000",
               "offsets.topic.num.partitions": "3"}
SESSION_MS = 6000      # a member starved by a loaded CI machine must not expire
HEARTBEAT_MS = 300
TIMEOUT = 10.0


def name_for(request: pytest.FixtureRequest) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in request.node.name)[:100]


def admin_for(broker: BrokerHandle) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers,
                        "socket.timeout.ms": int(TIMEOUT * 1000)})


def describe(broker: BrokerHandle, group: str) -> Any:
    """confluent-kafka's ConsumerGroupDescription of ``group``."""
    admin = admin_for(broker)     # kept alive until the answer: a destroyed client drops it
    return admin.describe_consumer_groups([group])[group].result(TIMEOUT)


def members_by_instance(description: Any) -> dict[str, Any]:
    return {m.group_instance_id: m for m in description.members}


def produce_wave(broker: BrokerHandle, topic: str, wave: int, partitions: int,
                 per_partition: int) -> list[tuple[int, int]]:
    """``per_partition`` records to each partition, keyed ``w<wave>-p<partition>-<i>``;
    returns their (partition, offset)."""
    out = []
    for p in range(partitions):
        for i in range(per_partition):
            offset = broker.produce(topic, b"v", key=f"w{wave}-p{p}-{i}".encode(), partition=p)
            out.append((p, offset))
    return out


@pytest.fixture
def group_dir(tmp_path: Path) -> Path:
    d = tmp_path / "members"
    d.mkdir()
    return d


# =============================================================================== rebalances

REBALANCE_CASES = [(lib, a) for lib in LIBRARIES for a in ASSIGNORS[lib]]


@pytest.mark.kafka_broker(FAST_GROUPS)
@pytest.mark.parametrize(("library", "assignor"), REBALANCE_CASES,
                         ids=[f"{lib}-{a}" for lib, a in REBALANCE_CASES])
def test_rebalances_keep_assignments_disjoint_and_commits_once(
        kafka_broker: BrokerHandle, request: pytest.FixtureRequest, group_dir: Path,
        library: str, assignor: str) -> None:
    broker = kafka_broker
    topic = group_id = name_for(request)
    broker.create_topic(topic, partitions=6)
    produced = produce_wave(broker, topic, 0, 6, 5)
    with Group(broker.bootstrap_servers, group_id, topic, group_dir, 6,
               session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS) as g:
        a, b, c = (g.start(n, library, assignor=assignor) for n in ("a", "b", "c"))
        first = g.wait_balanced([a, b, c])
        if assignor == "range":
            # Range hands each member a contiguous block of two.
            assert sorted(sorted(v) for v in first.values()) == [[0, 1], [2, 3], [4, 5]]
        produced += produce_wave(broker, topic, 1, 6, 5)

        # Leave: close sends LeaveGroup, so the rebalance need not wait for a session timeout.
        a.close()
        g.wait_balanced([b, c], timeout=(SESSION_MS - HEARTBEAT_MS) / 1000 - 0.5)

        # Crash: no LeaveGroup; c's partitions move only when its session has expired. c
        # consumes its share of wave 2 without committing it first: those records must be
        # read again by the member that takes its partitions over.
        c.hold_commits()
        c_parts = c.owned
        wave2 = produce_wave(broker, topic, 2, 6, 5)
        produced += wave2
        held = {r for r in wave2 if r[0] in c_parts}
        g.wait(lambda: held <= {(p, o) for p, o, _ in c.consumed()}, TIMEOUT,
               f"c to consume its {len(held)} records of wave 2")
        assert not held & {(p, o) for p, o, _ in c.committed()}
        killed_at = c.crash()
        g.wait_balanced([b])
        moved = [e.t for e in b.events("assigned")
                 if e.t > killed_at and set(e.data["partitions"]) & c_parts]
        assert moved, f"b never got c's partitions {sorted(c_parts)}: {b.events()}"
        earliest = (SESSION_MS - HEARTBEAT_MS) / 1000 - 0.2
        assert moved[0] - killed_at >= earliest, (
            f"c's partitions moved {moved[0] - killed_at:.2f} s after the kill, before its "
            f"{SESSION_MS} ms session can have expired")
        g.wait(lambda: held <= {(p, o) for p, o, _ in b.committed()}, TIMEOUT,
               "b to read and commit the records c consumed but did not commit")
        produced += produce_wave(broker, topic, 3, 6, 5)

        # Join.
        d = g.start("d", library, assignor=assignor)
        g.wait_balanced([b, d])
        produced += produce_wave(broker, topic, 4, 6, 5)

        g.wait_all_committed(produced)
        # The coordinator holds what the members committed: each partition's end offset.
        assert broker.committed_offsets(group_id) == {
            (topic, p): end for p, end in broker.end_offsets(topic).items()}
        b.close()
        d.close()
        g.check_history(produced)


# =================================================================== commit, close, resume


@pytest.mark.kafka_broker(FAST_GROUPS)
@pytest.mark.parametrize("library", LIBRARIES)
def test_new_consumer_resumes_at_committed_offset(
        kafka_broker: BrokerHandle, request: pytest.FixtureRequest, group_dir: Path,
        library: str) -> None:
    broker = kafka_broker
    topic = group_id = name_for(request)
    broker.create_topic(topic, partitions=1)
    for i in range(20):
        broker.produce(topic, b"v", key=b"k%d" % i)
    with Group(broker.bootstrap_servers, group_id, topic, group_dir, 1,
               session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS) as g:
        first = g.start("first", library, max_records=8)
        g.wait(lambda: len(first.committed()) == 8, TIMEOUT, "8 records committed")
        first.close()
        assert [o for _, o, _ in first.consumed()] == list(range(8))
        assert broker.committed_offsets(group_id) == {(topic, 0): 8}

        second = g.start("second", library)
        g.wait(lambda: len(second.consumed()) >= 12, TIMEOUT, "the other 12 records")
        assert [(o, k) for _, o, k in second.consumed()] == [(i, f"k{i}") for i in range(8, 20)]
        g.wait(lambda: broker.committed_offsets(group_id) == {(topic, 0): 20}, TIMEOUT,
               "offset 20 committed", lambda: broker.committed_offsets(group_id))
        second.close()


# ========================================================================== broker restart


@pytest.mark.kafka_broker({**FAST_GROUPS, "offsets.topic.num.partitions": "50"})
def test_broker_restart_keeps_offsets_and_empty_group(
        kafka_broker: BrokerHandle, request: pytest.FixtureRequest, group_dir: Path) -> None:
    """On Kafka's default 50 partitions of ``__consumer_offsets``."""
    broker = kafka_broker
    topic = group_id = name_for(request)
    broker.create_topic(topic, partitions=3)
    produce_wave(broker, topic, 0, 3, 10)
    with Group(broker.bootstrap_servers, group_id, topic, group_dir, 3,
               session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS) as g:
        first = g.start("first", "confluent", max_records=17)
        g.wait(lambda: len(first.committed()) == 17, TIMEOUT, "17 records committed")
        first.close()
        committed = broker.committed_offsets(group_id)
        assert sum(committed.values()) == 17, committed
        assert set(committed) <= {(topic, p) for p in range(3)}

        broker.restart()
        assert broker.committed_offsets(group_id) == committed
        group = describe(broker, group_id)
        assert (group.group_id, group.state, group.is_simple_consumer_group, group.members) \
            == (group_id, confluent_kafka.ConsumerGroupState.EMPTY, False, [])
        admin = admin_for(broker)
        listed = admin.list_consumer_groups().result(TIMEOUT)
        assert [(x.group_id, x.state) for x in listed.valid] == \
            [(group_id, confluent_kafka.ConsumerGroupState.EMPTY)]

        second = g.start("second", "confluent")
        g.wait(lambda: len(second.consumed()) >= 13, TIMEOUT, "the other 13 records")
        starts = {}
        for p, o, _ in second.consumed():
            starts.setdefault(p, o)
        assert starts == {p: committed.get((topic, p), 0) for p in range(3)
                          if committed.get((topic, p), 0) < 10}
        assert len(second.consumed()) == 13
        second.close()


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_broker_restart_keeps_live_member(
        kafka_broker: BrokerHandle, request: pytest.FixtureRequest, group_dir: Path) -> None:
    """Kafka reloads the group, members included, from ``__consumer_offsets``
    (GroupMetadataManager.loadGroup re-arms each member's session timer): a member still
    heartbeating keeps its member id and assignment, with no rebalance."""
    broker = kafka_broker
    topic = group_id = name_for(request)
    broker.create_topic(topic, partitions=2)
    with Group(broker.bootstrap_servers, group_id, topic, group_dir, 2,
               session_timeout_ms=10000, heartbeat_interval_ms=HEARTBEAT_MS) as g:
        m = g.start("m", "confluent")
        g.wait_balanced([m])
        before = describe(broker, group_id)
        changes = len(m.events("assigned", "revoked", "lost"))

        broker.restart()
        produced = produce_wave(broker, topic, 0, 2, 3)
        g.wait_all_committed(produced)
        after = describe(broker, group_id)
        assert after.state == confluent_kafka.ConsumerGroupState.STABLE
        assert [(x.member_id, x.client_id) for x in after.members] == \
            [(x.member_id, x.client_id) for x in before.members]
        assert len(m.events("assigned", "revoked", "lost")) == changes, \
            f"the member saw a rebalance after the restart: {m.events()}"
        m.close()


# ======================================================================= static membership


@pytest.mark.kafka_broker(FAST_GROUPS)
@pytest.mark.parametrize("library", LIBRARIES)
def test_static_member_restart_gets_its_partitions_without_rebalance(
        kafka_broker: BrokerHandle, request: pytest.FixtureRequest, group_dir: Path,
        library: str) -> None:
    broker = kafka_broker
    topic = group_id = name_for(request)
    broker.create_topic(topic, partitions=6)
    session_ms = 6000
    with Group(broker.bootstrap_servers, group_id, topic, group_dir, 6,
               session_timeout_ms=session_ms, heartbeat_interval_ms=HEARTBEAT_MS) as g:
        a, b, c = (g.start(n, library, instance_id=f"instance-{n}") for n in ("a", "b", "c"))
        balanced = g.wait_balanced([a, b, c])
        g.wait(lambda: {m.client_id for m in describe(broker, group_id).members}
               == {"a", "b", "c"}, TIMEOUT, "describe to show a, b and c")
        # Static members are known by instance id (a replaced member keeps its old client id
        # in Kafka: ClassicGroup.replaceStaticMember copies it).
        before = members_by_instance(describe(broker, group_id))
        assert {k: v.client_id for k, v in before.items()} == \
            {f"instance-{n}": n for n in ("a", "b", "c")}
        others = {m.name: len(m.events("assigned", "revoked", "lost")) for m in (b, c)}

        a.close()      # a static member sends no LeaveGroup
        closed_at = time.monotonic()
        a2 = g.start("a2", library, instance_id="instance-a")
        g.wait(lambda: a2.owned == balanced["a"], TIMEOUT,
               f"a2 to get a's partitions {sorted(balanced['a'])}", g.assignments)

        def others_changed() -> bool:
            return any(len(m.events("assigned", "revoked", "lost")) != others[m.name]
                       for m in (b, c))

        # Past the point where a's old member would have expired (had a2 not replaced it).
        watch_until = closed_at + session_ms / 1000 + 1.0
        g.wait(lambda: others_changed() or time.monotonic() > watch_until,
               session_ms / 1000 + 5, "the observation window to end")
        assert not others_changed(), (
            f"b or c saw a rebalance when a restarted as the same static member: "
            f"{b.events('assigned', 'revoked')} {c.events('assigned', 'revoked')}")
        after = members_by_instance(describe(broker, group_id))
        assert sorted(after) == ["instance-a", "instance-b", "instance-c"]
        assert after["instance-a"].member_id != before["instance-a"].member_id, \
            "the restarted static member was not given a new member id"
        for n in ("a", "b", "c"):
            assert {tp.partition for tp in after[f"instance-{n}"].assignment.topic_partitions} \
                == balanced[n]
        for n in ("b", "c"):
            assert after[f"instance-{n}"].member_id == before[f"instance-{n}"].member_id
        assert describe(broker, group_id).state == confluent_kafka.ConsumerGroupState.STABLE
        # a2 really consumes its partitions
        produced = produce_wave(broker, topic, 0, 6, 2)
        g.wait(lambda: {p for p, _, _ in a2.consumed()} == balanced["a"], TIMEOUT,
               "a2 to consume its partitions")
        g.wait_all_committed(produced)


# ============================================================================ raw requests

FIND = struct_classes(API_KEYS[10].request.body)
JOIN = struct_classes(API_KEYS[11].request.body)
HEARTBEAT = struct_classes(API_KEYS[12].request.body)
LEAVE = struct_classes(API_KEYS[13].request.body)
SYNC = struct_classes(API_KEYS[14].request.body)
DESCRIBE = struct_classes(API_KEYS[15].request.body)
COMMIT = struct_classes(API_KEYS[8].request.body)
FETCH = struct_classes(API_KEYS[9].request.body)

NONE, OFFSET_METADATA_TOO_LARGE, COORDINATOR_NOT_AVAILABLE = 0, 12, 15
ILLEGAL_GENERATION, INVALID_GROUP_ID, UNKNOWN_MEMBER_ID = 22, 24, 25
INVALID_SESSION_TIMEOUT, MEMBER_ID_REQUIRED = 26, 79
RAW_TOPIC = "raw-topic"


def subscription(topic: str) -> bytes:
    """ConsumerProtocolSubscription v0 (an INT16 version, then the body)."""
    return struct.pack(">h", 0) + encode(SUBSCRIPTION, 0,
                                         class_for(SUBSCRIPTION.body)(topics=[topic]))


def assignment(topic: str, partitions: list[int]) -> bytes:
    """ConsumerProtocolAssignment v0."""
    classes = struct_classes(ASSIGNMENT.body)
    body = class_for(ASSIGNMENT.body)(assigned_partitions=[
        classes["TopicPartition"](topic=topic, partitions=partitions)])
    return struct.pack(">h", 0) + encode(ASSIGNMENT, 0, body)


def join_body(group: str, member_id: str = "", session_ms: int = 30000,
              instance_id: str | None = None) -> Any:
    return JOIN["JoinGroupRequest"](
        group_id=group, session_timeout_ms=session_ms, rebalance_timeout_ms=30000,
        member_id=member_id, group_instance_id=instance_id, protocol_type="consumer",
        protocols=[JOIN["JoinGroupRequestProtocol"](name="range",
                                                    metadata=subscription(RAW_TOPIC))])


class RawGroup:
    """A one-member group formed over a raw socket (JoinGroup v5 twice, SyncGroup v3)."""

    def __init__(self, client: RawClient, group: str) -> None:
        self.client = client
        self.group = group
        self.member_id = ""
        self.generation = -1
        self.assignment = assignment(RAW_TOPIC, [0, 1])

    def find_coordinator(self, broker: BrokerHandle) -> None:
        deadline = time.monotonic() + TIMEOUT
        while True:
            r = self.client.request(10, 1, FIND["FindCoordinatorRequest"](
                key=self.group, key_type=0))
            if r.error_code != COORDINATOR_NOT_AVAILABLE or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert (r.error_code, r.node_id, r.port) == \
            (NONE, broker.server.node_id, broker.port), r

    def form(self) -> None:
        first = self.client.request(11, 5, join_body(self.group))
        assert first.error_code == MEMBER_ID_REQUIRED, first
        assert first.member_id, "MEMBER_ID_REQUIRED without a member id"
        self.member_id = first.member_id
        joined = self.client.request(11, 5, join_body(self.group, self.member_id))
        assert (joined.error_code, joined.leader, joined.member_id, joined.protocol_name) == \
            (NONE, self.member_id, self.member_id, "range"), joined
        assert [m.member_id for m in joined.members] == [self.member_id]
        assert joined.generation_id >= 1
        self.generation = joined.generation_id
        synced = self.client.request(14, 3, self.sync_body(self.generation, self.member_id))
        assert (synced.error_code, synced.assignment) == (NONE, self.assignment), synced

    def sync_body(self, generation: int, member_id: str) -> Any:
        return SYNC["SyncGroupRequest"](
            group_id=self.group, generation_id=generation, member_id=member_id,
            group_instance_id=None, assignments=[SYNC["SyncGroupRequestAssignment"](
                member_id=member_id, assignment=self.assignment)])

    def heartbeat(self, generation: int | None = None, member_id: str | None = None) -> int:
        r = self.client.request(12, 3, HEARTBEAT["HeartbeatRequest"](
            group_id=self.group,
            generation_id=self.generation if generation is None else generation,
            member_id=self.member_id if member_id is None else member_id,
            group_instance_id=None))
        return int(r.error_code)

    def describe(self) -> Any:
        (g,) = self.client.request(15, 4, DESCRIBE["DescribeGroupsRequest"](
            groups=[self.group], include_authorized_operations=False)).groups
        return g

    def assert_unchanged(self, after: str) -> None:
        """Stable, the same single member with its assignment, the same generation (a
        heartbeat of it is answered NONE: no rebalance is pending)."""
        g = self.describe()
        assert (g.error_code, g.group_state, g.protocol_type, g.protocol_data) == \
            (NONE, "Stable", "consumer", "range"), f"after {after}: {g}"
        assert [(m.member_id, m.member_assignment) for m in g.members] == \
            [(self.member_id, self.assignment)], f"after {after}: {g.members}"
        assert self.heartbeat() == NONE, f"after {after}: the member's heartbeat failed"


@pytest.fixture
def raw_group(kafka_broker: BrokerHandle, request: pytest.FixtureRequest
              ) -> Iterator[RawGroup]:
    kafka_broker.create_topic(RAW_TOPIC, partitions=3)
    with RawClient(kafka_broker.bootstrap_servers) as client:
        group = RawGroup(client, name_for(request))
        group.find_coordinator(kafka_broker)
        group.form()
        group.assert_unchanged("forming the group")
        yield group


@pytest.mark.kafka_broker({**FAST_GROUPS, "group.initial.rebalance.delay.ms": "0"})
def test_raw_join_with_empty_group_id_is_invalid_group_id(raw_group: RawGroup) -> None:
    for version in (0, 5, 9):
        r = raw_group.client.request(11, version, join_body(""))
        assert r.error_code == INVALID_GROUP_ID, (version, r)
    raw_group.assert_unchanged("JoinGroup with group id ''")


@pytest.mark.kafka_broker({**FAST_GROUPS, "group.initial.rebalance.delay.ms": "0"})
def test_raw_wrong_generation_is_illegal_generation(raw_group: RawGroup) -> None:
    g = raw_group
    for wrong in (g.generation + 1, g.generation - 1, -1):
        assert g.heartbeat(generation=wrong) == ILLEGAL_GENERATION, wrong
        g.assert_unchanged(f"Heartbeat with generation {wrong}")
        r = g.client.request(14, 3, g.sync_body(wrong, g.member_id))
        assert r.error_code == ILLEGAL_GENERATION, (wrong, r)
        g.assert_unchanged(f"SyncGroup with generation {wrong}")


@pytest.mark.kafka_broker({**FAST_GROUPS, "group.initial.rebalance.delay.ms": "0"})
def test_raw_unknown_member_is_unknown_member_id(raw_group: RawGroup) -> None:
    g = raw_group
    stranger = "stranger-0000"
    assert g.heartbeat(member_id=stranger) == UNKNOWN_MEMBER_ID
    g.assert_unchanged("Heartbeat of an unknown member")
    r = g.client.request(14, 3, g.sync_body(g.generation, stranger))
    assert r.error_code == UNKNOWN_MEMBER_ID, r
    g.assert_unchanged("SyncGroup of an unknown member")
    r = g.client.request(11, 5, join_body(g.group, stranger))
    assert r.error_code == UNKNOWN_MEMBER_ID, r
    g.assert_unchanged("JoinGroup of an unknown member id")
    r = g.client.request(13, 1, LEAVE["LeaveGroupRequest"](group_id=g.group,
                                                           member_id=stranger))
    assert r.error_code == UNKNOWN_MEMBER_ID, r
    g.assert_unchanged("LeaveGroup v1 of an unknown member")
    r = g.client.request(13, 3, LEAVE["LeaveGroupRequest"](group_id=g.group, members=[
        LEAVE["MemberIdentity"](member_id=stranger, group_instance_id=None)]))
    assert (r.error_code, [(m.member_id, m.error_code) for m in r.members]) == \
        (NONE, [(stranger, UNKNOWN_MEMBER_ID)]), r
    g.assert_unchanged("LeaveGroup v3 of an unknown member")
    r = g.client.request(8, 7, commit_body(g, {0: (5, "")}, member_id=stranger))
    assert partition_errors(r) == {0: UNKNOWN_MEMBER_ID}, r
    g.assert_unchanged("OffsetCommit of an unknown member")


def commit_body(g: RawGroup, offsets: dict[int, tuple[int, str]],
                member_id: str | None = None) -> Any:
    return COMMIT["OffsetCommitRequest"](
        group_id=g.group, generation_id_or_member_epoch=g.generation,
        member_id=g.member_id if member_id is None else member_id, group_instance_id=None,
        topics=[COMMIT["OffsetCommitRequestTopic"](name=RAW_TOPIC, partitions=[
            COMMIT["OffsetCommitRequestPartition"](
                partition_index=p, committed_offset=o, committed_leader_epoch=-1,
                committed_metadata=meta) for p, (o, meta) in offsets.items()])])


def partition_errors(response: Any) -> dict[int, int]:
    return {p.partition_index: p.error_code for t in response.topics for p in t.partitions}


@pytest.mark.kafka_broker({**FAST_GROUPS, "group.initial.rebalance.delay.ms": "0"})
def test_raw_offset_metadata_too_large_fails_only_that_partition(
        kafka_broker: BrokerHandle, raw_group: RawGroup) -> None:
    g = raw_group
    for p in range(3):
        kafka_broker.produce(RAW_TOPIC, b"x", partition=p)
        kafka_broker.produce(RAW_TOPIC, b"y", partition=p)
    big, limit = "m" * 4097, "n" * 4096     # offset.metadata.max.bytes defaults to 4096
    r = g.client.request(8, 7, commit_body(g, {0: (1, "small"), 1: (2, big), 2: (2, limit)}))
    assert partition_errors(r) == {0: NONE, 1: OFFSET_METADATA_TOO_LARGE, 2: NONE}, r
    g.assert_unchanged("OffsetCommit with 4097 bytes of metadata")
    fetched = g.client.request(9, 5, FETCH["OffsetFetchRequest"](
        group_id=g.group, topics=[FETCH["OffsetFetchRequestTopic"](
            name=RAW_TOPIC, partition_indexes=[0, 1, 2])], require_stable=False))
    assert fetched.error_code == NONE
    assert {p.partition_index: (p.committed_offset, p.metadata, p.error_code)
            for t in fetched.topics for p in t.partitions} == \
        {0: (1, "small", NONE), 1: (-1, "", NONE), 2: (2, limit, NONE)}
    assert kafka_broker.committed_offsets(g.group) == {(RAW_TOPIC, 0): 1, (RAW_TOPIC, 2): 2}


@pytest.mark.kafka_broker({**FAST_GROUPS, "group.initial.rebalance.delay.ms": "0"})
def test_raw_join_v4_without_member_id_is_member_id_required(raw_group: RawGroup) -> None:
    """A second would-be member of a Stable group gets an id to rejoin with; until it does,
    the group does not rebalance (KIP-394: the pending member is not a member yet)."""
    g = raw_group
    ids = set()
    for version in (4, 5, 6, 9):
        r = g.client.request(11, version, join_body(g.group))
        assert (r.error_code, r.generation_id) == (MEMBER_ID_REQUIRED, -1), (version, r)
        assert r.member_id and r.member_id != g.member_id, (version, r)
        ids.add(r.member_id)
        g.assert_unchanged(f"JoinGroup v{version} with an empty member id")
    assert len(ids) == 4, f"each request is given its own member id: {ids}"


@pytest.mark.kafka_broker({**FAST_GROUPS, "group.initial.rebalance.delay.ms": "0"})
def test_raw_session_timeout_out_of_range_is_invalid_session_timeout(
        raw_group: RawGroup) -> None:
    """group.min.session.timeout.ms is 1000 and group.max.session.timeout.ms 60000 here."""
    g = raw_group
    for session_ms in (999, 0, 60001):
        for member_id in ("", g.member_id):
            r = g.client.request(11, 5, join_body(g.group, member_id, session_ms=session_ms))
            assert r.error_code == INVALID_SESSION_TIMEOUT, (session_ms, member_id, r)
            g.assert_unchanged(f"JoinGroup with session timeout {session_ms} ms "
                               f"and member id {member_id!r}")
    # The bounds themselves are valid: a new member joins (MEMBER_ID_REQUIRED first).
    for session_ms in (1000, 60000):
        r = g.client.request(11, 5, join_body(g.group, session_ms=session_ms))
        assert r.error_code == MEMBER_ID_REQUIRED, (session_ms, r)

