"""The group coordinator's edges that clients rarely reach, over a raw socket to a real broker
(the wire answers are the point): COORDINATOR_LOAD_IN_PROGRESS, group.max.size,
FindCoordinator's batched keys and key types, DescribeGroups of an unknown group, OffsetFetch
of several groups (v8), ListGroups filters, static members, DeleteTopics removing offsets,
OffsetCommit's retention time. The coordinator's own logic and clocks are tested without a
broker (test_group_loading.py, test_group_timers.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kafkapy.coordinator.group.group_metadata_manager import OFFSETS_TOPIC
from kafkapy.protocol import API_KEYS, encode
from kafkapy.protocol.classes import class_for, struct_classes
from kafkapy.protocol.messages.consumer_protocol import SUBSCRIPTION
from kafkapy.testing import BrokerHandle
from tests.clients.client_support import RawClient

FAST = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "4",
        "group.min.session.timeout.ms": "1000"}
REQ = {key: struct_classes(API_KEYS[key].request.body) for key in (8, 9, 10, 11, 15, 16)}

NONE, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE = 0, 14, 15
GROUP_MAX_SIZE_REACHED, INVALID_REQUEST = 81, 42


def subscription(topic: str) -> bytes:
    return b"\x00\x00" + encode(SUBSCRIPTION, 0, class_for(SUBSCRIPTION.body)(topics=[topic]))


def join(client: RawClient, group: str, member_id: str = "", version: int = 3) -> Any:
    C = REQ[11]
    return client.request(11, version, C["JoinGroupRequest"](
        group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
        member_id=member_id, group_instance_id=None, protocol_type="consumer",
        protocols=[C["JoinGroupRequestProtocol"](name="range", metadata=subscription("t"))]))


def commit(client: RawClient, group: str, offsets: dict[int, int], topic: str = "t") -> Any:
    C = REQ[8]
    return client.request(8, 2, C["OffsetCommitRequest"](
        group_id=group, generation_id_or_member_epoch=-1, member_id="", retention_time_ms=-1,
        topics=[C["OffsetCommitRequestTopic"](name=topic, partitions=[
            C["OffsetCommitRequestPartition"](partition_index=p, committed_offset=o,
                                              committed_metadata="m")
            for p, o in offsets.items()])]))


def fetch_v8(client: RawClient, groups: list[str]) -> Any:
    C = REQ[9]
    return client.request(9, 8, C["OffsetFetchRequest"](groups=[
        C["OffsetFetchRequestGroup"](group_id=g, topics=None) for g in groups],
        require_stable=True))


def manager_of(broker: BrokerHandle) -> Any:
    return broker.server.group_coordinator.manager


@pytest.mark.kafka_broker(FAST)
def test_loading_partition_answers_coordinator_load_in_progress(kafka_broker: BrokerHandle
                                                                ) -> None:
    kafka_broker.create_topic("t", partitions=1)
    manager = manager_of(kafka_broker)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        assert commit(c, "g", {0: 1}).topics[0].partitions[0].error_code == NONE
        p = kafka_broker.call(manager.partition_for, "g")
        kafka_broker.call(lambda: manager.loading.add(p))
        assert commit(c, "g", {0: 2}).topics[0].partitions[0].error_code == \
            COORDINATOR_LOAD_IN_PROGRESS
        assert join(c, "g").error_code == COORDINATOR_LOAD_IN_PROGRESS
        (g,) = fetch_v8(c, ["g"]).groups
        assert g.error_code == COORDINATOR_LOAD_IN_PROGRESS
        kafka_broker.call(lambda: manager.loading.discard(p))
        (g,) = fetch_v8(c, ["g"]).groups
        assert (g.error_code, g.topics[0].partitions[0].committed_offset) == (NONE, 1)


@pytest.mark.kafka_broker({**FAST, "group.max.size": "1"})
def test_group_max_size(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=1)
    with RawClient(kafka_broker.bootstrap_servers) as a, \
            RawClient(kafka_broker.bootstrap_servers) as b:
        first = join(a, "small")
        assert first.error_code == NONE
        C = struct_classes(API_KEYS[14].request.body)
        assert a.request(14, 1, C["SyncGroupRequest"](
            group_id="small", generation_id=first.generation_id, member_id=first.member_id,
            assignments=[])).error_code == NONE
        second = join(b, "small")
        assert (second.error_code, second.member_id) == (GROUP_MAX_SIZE_REACHED, "")


@pytest.mark.kafka_broker(FAST)
def test_find_coordinator_batched_keys_and_key_types(kafka_broker: BrokerHandle) -> None:
    C = REQ[10]
    with RawClient(kafka_broker.bootstrap_servers) as c:
        r = c.request(10, 4, C["FindCoordinatorRequest"](key_type=0,
                                                        coordinator_keys=["a", "b", ""]))
        assert [(x.key, x.error_code, x.node_id, x.port) for x in r.coordinators] == \
            [(k, NONE, kafka_broker.server.node_id, kafka_broker.port) for k in ("a", "b", "")]
        assert OFFSETS_TOPIC in kafka_broker.topics()
        assert kafka_broker.topics()[OFFSETS_TOPIC] == 4
        txn = c.request(10, 4, C["FindCoordinatorRequest"](key_type=1, coordinator_keys=["x"]))
        assert [(x.error_code, x.node_id) for x in txn.coordinators] == \
            [(NONE, kafka_broker.server.node_id)]
        assert "__transaction_state" in kafka_broker.topics()
        bad = c.request(10, 2, C["FindCoordinatorRequest"](key="g", key_type=7))
        assert (bad.error_code, bad.node_id) == (INVALID_REQUEST, -1)
        v0 = c.request(10, 0, C["FindCoordinatorRequest"](key="g"))
        assert (v0.error_code, v0.node_id, v0.port) == \
            (NONE, kafka_broker.server.node_id, kafka_broker.port)


@pytest.mark.kafka_broker(FAST)
def test_describe_unknown_group(kafka_broker: BrokerHandle) -> None:
    C = REQ[15]
    with RawClient(kafka_broker.bootstrap_servers) as c:
        old = c.request(15, 5, C["DescribeGroupsRequest"](groups=["nope"],
                                                         include_authorized_operations=True))
        # Advertised 0-5: an unknown group is Dead without an error (v6 would say
        # GROUP_ID_NOT_FOUND).
        assert [(g.error_code, g.group_state, g.authorized_operations) for g in old.groups] \
            == [(NONE, "Dead", -(1 << 31))]


@pytest.mark.kafka_broker(FAST)
def test_offset_fetch_of_several_groups_and_list_filters(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=2)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        commit(c, "one", {0: 4})
        commit(c, "two", {1: 9})
        r = fetch_v8(c, ["one", "two", "none", ""])
        got = {g.group_id: (g.error_code, [(t.name, p.partition_index, p.committed_offset,
                                            p.metadata)
                                           for t in g.topics for p in t.partitions])
               for g in r.groups}
        assert got == {"one": (NONE, [("t", 0, 4, "m")]), "two": (NONE, [("t", 1, 9, "m")]),
                       "none": (NONE, []), "": (24, [])}
        L = REQ[16]
        listed = c.request(16, 5, L["ListGroupsRequest"](states_filter=["Empty"],
                                                          types_filter=["classic"]))
        assert sorted((g.group_id, g.group_state, g.group_type) for g in listed.groups) == \
            [("one", "Empty", "classic"), ("two", "Empty", "classic")]
        stable = c.request(16, 4, L["ListGroupsRequest"](states_filter=["Stable"]))
        assert stable.groups == []


def join_body(group: str, member_id: str = "", instance: str | None = None) -> Any:
    C = REQ[11]
    return C["JoinGroupRequest"](
        group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
        member_id=member_id, group_instance_id=instance, protocol_type="consumer",
        protocols=[C["JoinGroupRequestProtocol"](name="range", metadata=subscription("t"))])


def sync(client: RawClient, group: str, generation: int, member_id: str,
         instance: str | None = None, assignments: dict[str, bytes] | None = None) -> Any:
    C = struct_classes(API_KEYS[14].request.body)
    return client.request(14, 3, C["SyncGroupRequest"](
        group_id=group, generation_id=generation, member_id=member_id,
        group_instance_id=instance, assignments=[
            C["SyncGroupRequestAssignment"](member_id=m, assignment=a)
            for m, a in (assignments or {}).items()]))


def heartbeat(client: RawClient, group: str, generation: int, member_id: str,
              instance: str | None = None) -> int:
    C = struct_classes(API_KEYS[12].request.body)
    return int(client.request(12, 3, C["HeartbeatRequest"](
        group_id=group, generation_id=generation, member_id=member_id,
        group_instance_id=instance)).error_code)


@pytest.mark.kafka_broker(FAST)
def test_static_member_replaced_old_id_is_fenced(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=1)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        old = c.request(11, 5, join_body("st", instance="i1"))
        assert old.error_code == NONE
        assert sync(c, "st", old.generation_id, old.member_id, "i1",
                    {old.member_id: b"a"}).error_code == NONE
        # The instance restarts: a join with its instance id and no member id.
        new = c.request(11, 5, join_body("st", instance="i1"))
        assert new.error_code == NONE and new.member_id != old.member_id
        assert new.generation_id == old.generation_id          # no rebalance
        assert heartbeat(c, "st", old.generation_id, old.member_id, "i1") == 82
        assert sync(c, "st", old.generation_id, old.member_id, "i1").error_code == 82
        assert heartbeat(c, "st", new.generation_id, new.member_id, "i1") == NONE
        assert sync(c, "st", new.generation_id, new.member_id, "i1").assignment == b"a"


@pytest.mark.kafka_broker(FAST)
def test_deleting_a_topic_removes_its_committed_offsets(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=1)
    kafka_broker.create_topic("kept", partitions=1)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        commit(c, "g", {0: 3})
        commit(c, "g", {0: 4}, topic="kept")
        assert kafka_broker.committed_offsets("g") == {("t", 0): 3, ("kept", 0): 4}
        D = struct_classes(API_KEYS[20].request.body)
        r = c.request(20, 4, D["DeleteTopicsRequest"](topic_names=["t"], timeout_ms=5000))
        assert [x.error_code for x in r.responses] == [NONE]
    assert kafka_broker.committed_offsets("g") == {("kept", 0): 4}
    kafka_broker.create_topic("t", partitions=1)          # the name again: no old offsets
    kafka_broker.restart()
    deadline = time.monotonic() + 10
    while kafka_broker.call(lambda: set(manager_of(kafka_broker).loading)):
        assert time.monotonic() < deadline, "the coordinator did not finish loading"
        time.sleep(0.01)
    assert kafka_broker.committed_offsets("g") == {("kept", 0): 4}


@pytest.mark.kafka_broker(FAST)
def test_offset_commit_retention_time_sets_an_expiry(kafka_broker: BrokerHandle) -> None:
    """OffsetCommit v2-4's RetentionTimeMs: the offset expires that long after the commit,
    whatever offsets.retention.minutes says."""
    kafka_broker.create_topic("t", partitions=2)
    C = REQ[8]
    with RawClient(kafka_broker.bootstrap_servers) as c:
        before = int(time.time() * 1000)
        r = c.request(8, 2, C["OffsetCommitRequest"](
            group_id="short", generation_id_or_member_epoch=-1, member_id="",
            retention_time_ms=60_000, topics=[C["OffsetCommitRequestTopic"](name="t", partitions=[
                C["OffsetCommitRequestPartition"](partition_index=0, committed_offset=2,
                                                  committed_metadata="")])]))
        assert r.topics[0].partitions[0].error_code == NONE
        commit(c, "short", {1: 5})                       # default retention
    offsets = kafka_broker.call(
        lambda: kafka_broker.server.group_coordinator.committed_offsets("short"))
    expiry = {tp.partition: om.expire_timestamp_ms for tp, om in offsets.items()}
    assert expiry[1] == -1 and before + 60_000 <= expiry[0] <= int(time.time() * 1000) + 60_000
    manager = manager_of(kafka_broker)
    assert kafka_broker.call(manager.expire_offsets, expiry[0] - 1) == 0
    assert kafka_broker.call(manager.expire_offsets, expiry[0]) == 1
    assert kafka_broker.committed_offsets("short") == {("t", 1): 5}
