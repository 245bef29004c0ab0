"""Consumer-group administration with real admin clients: confluent-kafka's AdminClient
(librdkafka) and kafka-python's KafkaAdminClient against groups formed by real consumers
(tests/clients/group_support.py).

Covered: ListGroups with and without a state filter, DescribeGroups (state, protocol type
and assignor, members with client ids and assignments; an unknown group), OffsetFetch of a
whole group (compared with ``kafka_broker.committed_offsets``), DeleteGroups (NON_EMPTY_GROUP
while members remain, GROUP_ID_NOT_FOUND for an unknown group, and the offsets gone after),
admin OffsetCommit (alter and reset: accepted for an Empty group, UNKNOWN_MEMBER_ID while the
group has members, as Kafka's ClassicGroup.validateOffsetCommit answers a generation -1 commit),
and OffsetDelete (GROUP_SUBSCRIBED_TO_TOPIC while a member is subscribed to the topic).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import kafka.errors
import pytest
from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient
from kafka import TopicPartition as KPTopicPartition
from kafka.admin import OffsetSpec
from kafka.structs import OffsetAndMetadata

from kafkapy.testing import BrokerHandle
from tests.clients.group_support import Group, Member

pytestmark = pytest.mark.timeout(120)

FAST_GROUPS = {"group.initial.rebalance.delay.ms": "100",
               "group.min.session.timeout.ms": "1000",
               "offsets.topic.num.partitions": "3"}
TIMEOUT = 10.0
TOPIC = "orders"


@pytest.fixture
def admin(kafka_broker: BrokerHandle) -> AdminClient:
    return AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers,
                        "socket.timeout.ms": int(TIMEOUT * 1000)})


@pytest.fixture
def kp_admin(kafka_broker: BrokerHandle) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap_servers,
                              request_timeout_ms=int(TIMEOUT * 1000))
    yield client
    client.close()


class Groups:
    """A fresh broker with topic ``orders`` (4 partitions, 10 records each) and helpers that
    form groups with confluent-kafka members."""

    def __init__(self, broker: BrokerHandle, log_dir: Path) -> None:
        self.broker = broker
        self.log_dir = log_dir
        self.groups: list[Group] = []
        broker.create_topic(TOPIC, partitions=4)
        for p in range(4):
            for i in range(10):
                broker.produce(TOPIC, b"v", key=b"k%d-%d" % (p, i), partition=p)

    def group(self, group_id: str) -> Group:
        g = Group(self.broker.bootstrap_servers, group_id, TOPIC, self.log_dir, 4,
                  session_timeout_ms=6000, heartbeat_interval_ms=300)
        self.groups.append(g)
        return g

    def stable(self, group_id: str, members: int = 2) -> tuple[Group, list[Member]]:
        """A group with ``members`` live members, balanced, everything consumed and
        committed."""
        g = self.group(group_id)
        ms = [g.start(f"{group_id}-m{i}", "confluent") for i in range(members)]
        g.wait_balanced(ms)
        g.wait_all_committed([(p, o) for p in range(4) for o in range(10)])
        return g, ms

    def empty(self, group_id: str, records: int) -> dict[tuple[str, int], int]:
        """A group whose only member committed ``records`` records and left; returns the
        committed offsets."""
        g = self.group(group_id)
        m = g.start(f"{group_id}-m", "confluent", max_records=records)
        g.wait(lambda: len(m.committed()) == records, TIMEOUT, f"{records} records committed")
        m.close()
        offsets = self.broker.committed_offsets(group_id)
        assert sum(offsets.values()) == records, offsets
        return offsets

    def close(self) -> None:
        for g in self.groups:
            g.__exit__(None, None, None)


@pytest.fixture
def groups(kafka_broker: BrokerHandle, tmp_path: Path) -> Iterator[Groups]:
    gs = Groups(kafka_broker, tmp_path)
    yield gs
    gs.close()


def error_code(e: BaseException) -> int:
    assert isinstance(e, confluent_kafka.KafkaException), repr(e)
    return int(e.args[0].code())


# ================================================================================== listing


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_confluent_list_groups_with_state_filter(groups: Groups, admin: AdminClient) -> None:
    groups.stable("live")
    groups.empty("idle", 5)

    def listed(**kwargs: Any) -> list[tuple[str, ConsumerGroupState, bool]]:
        result = admin.list_consumer_groups(**kwargs).result(TIMEOUT)
        assert result.errors == []
        return sorted((x.group_id, x.state, x.is_simple_consumer_group) for x in result.valid)

    assert listed() == [("idle", ConsumerGroupState.EMPTY, False),
                        ("live", ConsumerGroupState.STABLE, False)]
    assert listed(states={ConsumerGroupState.STABLE}) == \
        [("live", ConsumerGroupState.STABLE, False)]
    assert listed(states={ConsumerGroupState.EMPTY}) == \
        [("idle", ConsumerGroupState.EMPTY, False)]
    assert listed(states={ConsumerGroupState.PREPARING_REBALANCING}) == []


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_kafka_python_list_groups_with_state_filter(groups: Groups,
                                                    kp_admin: KafkaAdminClient) -> None:
    groups.stable("live")
    groups.empty("idle", 5)

    def listed(**kwargs: Any) -> list[tuple[str, str, str]]:
        return sorted((x["group_id"], x["protocol_type"], x.get("group_state", "?"))
                      for x in kp_admin.list_groups(**kwargs))

    assert [(g, t) for g, t, _ in listed()] == [("idle", "consumer"), ("live", "consumer")]
    assert listed(states_filter=["Stable"]) == [("live", "consumer", "Stable")]
    assert listed(states_filter=["Empty"]) == [("idle", "consumer", "Empty")]
    assert listed(states_filter=["Stable", "Empty"]) == [("idle", "consumer", "Empty"),
                                                        ("live", "consumer", "Stable")]
    assert listed(states_filter=["Dead"]) == []


# =============================================================================== describing


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_confluent_describe_groups(kafka_broker: BrokerHandle, groups: Groups,
                                   admin: AdminClient) -> None:
    _, members = groups.stable("live")
    groups.empty("idle", 5)
    futures = admin.describe_consumer_groups(["live", "idle", "never-seen"])
    live = futures["live"].result(TIMEOUT)
    assert (live.group_id, live.state, live.partition_assignor,
            live.is_simple_consumer_group, live.coordinator.id) == \
        ("live", ConsumerGroupState.STABLE, "range", False, kafka_broker.server.node_id)
    described = {m.client_id: ({(tp.topic, tp.partition)
                                for tp in m.assignment.topic_partitions}, m.member_id)
                 for m in live.members}
    assert {k: v[0] for k, v in described.items()} == \
        {m.name: {(TOPIC, p) for p in m.owned} for m in members}
    assert len({v[1] for v in described.values()}) == 2 and all(
        v[1].startswith(k) for k, v in described.items()), \
        f"member ids are client id + '-' + uuid in Kafka: {described}"
    assert all(m.host for m in live.members)

    idle = futures["idle"].result(TIMEOUT)
    assert (idle.state, idle.members, idle.is_simple_consumer_group) == \
        (ConsumerGroupState.EMPTY, [], False)
    # DescribeGroups up to v5 answers an unknown group with state Dead and no error.
    unknown = futures["never-seen"].result(TIMEOUT)
    assert (unknown.state, unknown.members) == (ConsumerGroupState.DEAD, [])


def kp_assigned(member: dict[str, Any]) -> set[tuple[str, int]]:
    """A described member's assignment from kafka-python (decoded by the client)."""
    a = member["member_assignment"]
    if hasattr(a, "partitions"):
        return {(tp.topic, tp.partition) for tp in a.partitions()}
    return {(t["topic"], p) for t in a["assigned_partitions"] for p in t["partitions"]}


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_kafka_python_describe_groups(groups: Groups, kp_admin: KafkaAdminClient) -> None:
    _, members = groups.stable("live")
    groups.empty("idle", 5)
    described = kp_admin.describe_groups(["live", "idle"])
    live = described["live"]
    assert (live["error"], live["group_state"], live["protocol_type"],
            live["protocol_data"]) == (None, "Stable", "consumer", "range")
    assert {m["client_id"]: kp_assigned(m) for m in live["members"]} == \
        {m.name: {(TOPIC, p) for p in m.owned} for m in members}
    idle = described["idle"]
    assert (idle["error"], idle["group_state"], idle["protocol_type"], idle["members"]) == \
        (None, "Empty", "consumer", [])


# ================================================================================= offsets


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_list_committed_offsets(kafka_broker: BrokerHandle, groups: Groups,
                                admin: AdminClient, kp_admin: KafkaAdminClient) -> None:
    committed = groups.empty("idle", 13)
    result = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions("idle")])["idle"].result(TIMEOUT)
    assert result.group_id == "idle"
    assert all(tp.error is None for tp in result.topic_partitions)
    assert {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions} == committed
    # Asked for named partitions: those without a commit come back as -1 (no offset).
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(
        "idle", [TopicPartition(TOPIC, p) for p in range(4)])])["idle"].result(TIMEOUT)
    assert {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions} == \
        {(TOPIC, p): committed.get((TOPIC, p), confluent_kafka.OFFSET_INVALID)
         for p in range(4)}

    kp = kp_admin.list_group_offsets("idle")["idle"]
    assert {(tp.topic, tp.partition): om.offset for tp, om in kp.items()} == committed
    assert kafka_broker.committed_offsets("idle") == committed


# ================================================================================= deleting


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_confluent_delete_group(kafka_broker: BrokerHandle, groups: Groups,
                                admin: AdminClient) -> None:
    g, members = groups.stable("live")
    with pytest.raises(confluent_kafka.KafkaException) as failed:
        admin.delete_consumer_groups(["live"])["live"].result(TIMEOUT)
    assert error_code(failed.value) == confluent_kafka.KafkaError.NON_EMPTY_GROUP
    assert admin.describe_consumer_groups(["live"])["live"].result(TIMEOUT).state == \
        ConsumerGroupState.STABLE
    assert kafka_broker.committed_offsets("live") == {(TOPIC, p): 10 for p in range(4)}

    for m in members:
        m.close()
    assert admin.delete_consumer_groups(["live"])["live"].result(TIMEOUT) is None
    assert kafka_broker.committed_offsets("live") == {}
    listed = admin.list_consumer_groups().result(TIMEOUT)
    assert [x.group_id for x in listed.valid] == []
    assert admin.describe_consumer_groups(["live"])["live"].result(TIMEOUT).state == \
        ConsumerGroupState.DEAD
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(
        "live", [TopicPartition(TOPIC, 0)])])["live"].result(TIMEOUT)
    assert [tp.offset for tp in result.topic_partitions] == [confluent_kafka.OFFSET_INVALID]

    with pytest.raises(confluent_kafka.KafkaException) as failed:
        admin.delete_consumer_groups(["never-seen"])["never-seen"].result(TIMEOUT)
    assert error_code(failed.value) == confluent_kafka.KafkaError.GROUP_ID_NOT_FOUND

    # A deleted group id can be used again, from scratch.
    again = g.start("again", "confluent")
    g.wait(lambda: len(again.consumed()) >= 40, TIMEOUT, "the group to consume from 0 again")
    assert sorted((p, o) for p, o, _ in again.consumed()) == \
        [(p, o) for p in range(4) for o in range(10)]


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_kafka_python_delete_group(kafka_broker: BrokerHandle, groups: Groups,
                                   kp_admin: KafkaAdminClient) -> None:
    _, members = groups.stable("live")
    groups.empty("idle", 3)
    assert kp_admin.delete_groups(["live", "idle", "never-seen"]) == {
        "live": "NonEmptyGroupError", "idle": "OK", "never-seen": "GroupIdNotFoundError"}
    assert kafka_broker.committed_offsets("idle") == {}
    assert [x["group_id"] for x in kp_admin.list_groups()] == ["live"]
    for m in members:
        m.close()
    assert kp_admin.delete_groups(["live"]) == {"live": "OK"}
    assert kp_admin.list_groups() == []


# =========================================================================== alter / reset


def confluent_alter(admin: AdminClient, group: str, offsets: dict[int, int]
                    ) -> dict[int, int]:
    """alter_consumer_group_offsets; each partition's error code (0 for success)."""
    future = admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
        group, [TopicPartition(TOPIC, p, o) for p, o in offsets.items()])])[group]
    try:
        result = future.result(TIMEOUT)
    except confluent_kafka.KafkaException as e:
        return {p: error_code(e) for p in offsets}
    return {tp.partition: 0 if tp.error is None else tp.error.code()
            for tp in result.topic_partitions}


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_confluent_alter_offsets(kafka_broker: BrokerHandle, groups: Groups,
                                 admin: AdminClient) -> None:
    groups.empty("idle", 12)
    assert confluent_alter(admin, "idle", {0: 3, 1: 0, 2: 10, 3: 7}) == \
        {0: 0, 1: 0, 2: 0, 3: 0}
    assert kafka_broker.committed_offsets("idle") == \
        {(TOPIC, 0): 3, (TOPIC, 1): 0, (TOPIC, 2): 10, (TOPIC, 3): 7}
    # A new member resumes where the admin put the group.
    g = groups.group("idle")
    m = g.start("resumer", "confluent")
    g.wait(lambda: len(m.consumed()) >= 7 + 10 + 3, TIMEOUT, "the records after the reset")
    firsts: dict[int, int] = {}
    for p, o, _ in m.consumed():
        firsts.setdefault(p, o)
    assert firsts == {0: 3, 1: 0, 3: 7}
    assert len(m.consumed()) == 20

    # While the group has members, an admin commit (generation -1, no member id) is refused.
    g.wait(lambda: kafka_broker.committed_offsets("idle") ==
           {(TOPIC, p): 10 for p in range(4)}, TIMEOUT, "the member's commits")
    assert confluent_alter(admin, "idle", {0: 1}) == \
        {0: confluent_kafka.KafkaError.UNKNOWN_MEMBER_ID}
    assert kafka_broker.committed_offsets("idle") == {(TOPIC, p): 10 for p in range(4)}
    m.close()


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_kafka_python_alter_and_reset_offsets(kafka_broker: BrokerHandle, groups: Groups,
                                              kp_admin: KafkaAdminClient) -> None:
    groups.empty("idle", 12)
    result = kp_admin.alter_group_offsets("idle", {
        KPTopicPartition(TOPIC, 0): OffsetAndMetadata(4, "by admin", -1),
        KPTopicPartition(TOPIC, 3): OffsetAndMetadata(9, "", -1)})
    assert result == {KPTopicPartition(TOPIC, 0): kafka.errors.NoError,
                      KPTopicPartition(TOPIC, 3): kafka.errors.NoError}
    offsets = kp_admin.list_group_offsets("idle")["idle"]
    assert offsets[KPTopicPartition(TOPIC, 0)].offset == 4
    assert offsets[KPTopicPartition(TOPIC, 0)].metadata == "by admin"
    assert offsets[KPTopicPartition(TOPIC, 3)].offset == 9
    assert kafka_broker.committed_offsets("idle")[(TOPIC, 3)] == 9

    reset = kp_admin.reset_group_offsets("idle", {
        KPTopicPartition(TOPIC, 0): OffsetSpec.EARLIEST,
        KPTopicPartition(TOPIC, 1): OffsetSpec.LATEST,
        KPTopicPartition(TOPIC, 2): 6})
    assert {tp.partition: (r["error"], r["offset"]) for tp, r in reset.items()} == {
        0: (kafka.errors.NoError, 0), 1: (kafka.errors.NoError, 10),
        2: (kafka.errors.NoError, 6)}
    committed = kafka_broker.committed_offsets("idle")
    assert {p: committed.get((TOPIC, p)) for p in range(3)} == {0: 0, 1: 10, 2: 6}

    _, members = groups.stable("live", members=1)
    result = kp_admin.alter_group_offsets("live", {
        KPTopicPartition(TOPIC, 0): OffsetAndMetadata(1, "", -1)})
    assert result == {KPTopicPartition(TOPIC, 0): kafka.errors.UnknownMemberIdError}
    assert kafka_broker.committed_offsets("live")[(TOPIC, 0)] == 10
    members[0].close()


# ========================================================================== delete offsets


@pytest.mark.kafka_broker(FAST_GROUPS)
def test_kafka_python_delete_offsets(kafka_broker: BrokerHandle, groups: Groups,
                                     kp_admin: KafkaAdminClient) -> None:
    committed = groups.empty("idle", 40)
    assert committed == {(TOPIC, p): 10 for p in range(4)}
    result = kp_admin.delete_group_offsets("idle", [KPTopicPartition(TOPIC, 1),
                                                    KPTopicPartition(TOPIC, 2)])
    assert result == {KPTopicPartition(TOPIC, 1): kafka.errors.NoError,
                      KPTopicPartition(TOPIC, 2): kafka.errors.NoError}
    assert kafka_broker.committed_offsets("idle") == {(TOPIC, 0): 10, (TOPIC, 3): 10}

    # A member subscribed to the topic: its offsets may not be deleted.
    _, members = groups.stable("live", members=1)
    result = kp_admin.delete_group_offsets("live", [KPTopicPartition(TOPIC, 0)])
    assert result == {KPTopicPartition(TOPIC, 0): kafka.errors.GroupSubscribedToTopicError}
    assert kafka_broker.committed_offsets("live")[(TOPIC, 0)] == 10
    members[0].close()

    with pytest.raises(kafka.errors.GroupIdNotFoundError):
        kp_admin.delete_group_offsets("never-seen", [KPTopicPartition(TOPIC, 0)])
