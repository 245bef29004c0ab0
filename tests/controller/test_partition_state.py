"""The controller's partition state on a real ZooKeeper with real broker processes
(kafkapy.controller): new topics and partitions get leaders and state znodes in Kafka's
format, the requests it sends (seen by a recording peer registered as a broker), broker
failures and returns, topic deletion, AlterPartition and ControlledShutdown answers."""

from __future__ import annotations

import json
import time
import uuid

from kafkapy.cluster import Cluster
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    BrokerNotAvailableError,
    ElectionNotNeededError,
    EligibleLeadersNotAvailableError,
    FencedLeaderEpochError,
    IneligibleReplicaError,
    InvalidReplicaAssignmentError,
    InvalidUpdateVersionError,
    NoReassignmentInProgressError,
    NotControllerError,
    NotLeaderOrFollowerError,
    PreferredLeaderNotAvailableError,
    StaleBrokerEpochError,
    UnknownTopicIdError,
    UnknownTopicOrPartitionError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionRequest,
    AlterPartitionRequestAlterPartitionPartitionData,
    AlterPartitionRequestAlterPartitionTopicData,
    ControlledShutdownRequest,
    ElectLeadersRequest,
    ElectLeadersTopicPartitions,
    ListPartitionReassignmentsRequest,
    MetadataRequest,
    MetadataRequestTopic,
    ReassignablePartition,
    ReassignableTopic,
)
from kafkapy.zk.zk_data import (
    ReplicaAssignment,
    TopicAssignment,
    reassignment_encode,
    topic_path,
)
from tests.controller.conftest import request, start_peer
from tests.controller.recording_broker import RecordingBroker


def _state_json(cluster: Cluster, topic: str, p: int) -> tuple[dict[str, object], int]:
    data, stat = cluster._zk().get(cluster._path(f"/brokers/topics/{topic}/partitions/{p}/state"))
    return json.loads(data), stat.version


def test_new_topic_gets_leaders_and_state_znodes(cluster: Cluster) -> None:
    epoch = cluster.controller_epoch()
    cluster.create_topic("fresh", {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]})
    for p, first in enumerate((1, 2, 3)):
        assert cluster.wait_for_leader("fresh", p, timeout=10) == first
        obj, version = _state_json(cluster, "fresh", p)
        assert obj == {"version": 1, "leader": first, "leader_epoch": 0,
                       "controller_epoch": epoch, "isr": obj["isr"]}
        assert sorted(obj["isr"]) == [1, 2, 3]          # type: ignore[arg-type]
        assert version == 0                             # the partition epoch


def test_new_partitions_from_a_rewritten_assignment(cluster: Cluster) -> None:
    topic_id = cluster.create_topic("grows", {0: [1, 2]})
    cluster.wait_for_leader("grows", 0, timeout=10)
    cluster._zk().set(cluster._path(topic_path("grows")), TopicAssignment(
        "grows", topic_id, {0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((3, 1)),
                            2: ReplicaAssignment((2, 3))}).encode())
    assert cluster.wait_for_leader("grows", 1, timeout=10) == 3
    assert cluster.wait_for_leader("grows", 2, timeout=10) == 2
    assert cluster.isr_of("grows", 1) == (3, 1)


def test_a_new_broker_gets_full_metadata_then_its_partitions(
        cluster: Cluster, recording: list[RecordingBroker]) -> None:
    cluster.create_topic("before-peer", {0: [1, 2]})
    cluster.wait_for_leader("before-peer", 0, timeout=10)
    controller = cluster.wait_for_controller()
    epoch = cluster.controller_epoch()
    peer = start_peer(cluster, recording, 10, rack="r10")
    # On startup: a full LeaderAndIsr (no partitions yet) and UpdateMetadata with everything.
    peer.wait_for(lambda: peer.received(ApiKey.UPDATE_METADATA), "UpdateMetadata")
    kinds = [k for k, _, _ in peer.received()]
    assert kinds[:2] == [ApiKey.LEADER_AND_ISR, ApiKey.UPDATE_METADATA]
    _, v, lai = peer.received(ApiKey.LEADER_AND_ISR)[0]
    assert v == 6 and lai.type == 1 and lai.controller_id == controller
    assert lai.controller_epoch == epoch and lai.broker_epoch == peer.epoch
    _, v, um = peer.received(ApiKey.UPDATE_METADATA)[0]
    assert v == 7 and um.broker_epoch == peer.epoch and um.controller_id == controller
    brokers = {b.id: b for b in um.live_brokers}
    assert set(brokers) == {1, 2, 3, 10}
    assert brokers[10].rack == "r10"
    ep = brokers[1].endpoints[0]
    assert (ep.listener, ep.security_protocol, ep.port) == \
        ("PLAINTEXT", 0, cluster.brokers[1].port)
    assert "before-peer" in {t.topic_name for t in um.topic_states}

    # A topic with a replica on it: LeaderAndIsr (incremental, is_new) before UpdateMetadata.
    peer.clear()
    topic_id = cluster.create_topic("peered", {0: [10, 1], 1: [1, 10]})
    peer.wait_for(lambda: peer.received(ApiKey.UPDATE_METADATA), "UpdateMetadata")
    kinds = [k for k, _, _ in peer.received()]
    assert kinds.index(ApiKey.LEADER_AND_ISR) < kinds.index(ApiKey.UPDATE_METADATA)
    _, _, lai = peer.received(ApiKey.LEADER_AND_ISR)[0]
    assert lai.type == 0
    [ts] = lai.topic_states
    assert (ts.topic_name, ts.topic_id) == ("peered", topic_id)
    states = {p.partition_index: p for p in ts.partition_states}
    assert states[0].leader == 10 and states[0].isr == [10, 1] and states[0].is_new
    assert states[0].replicas == [10, 1] and states[0].partition_epoch == 0
    assert states[1].leader == 1 and states[1].leader_epoch == 0
    assert {(le.broker_id, le.port) for le in lai.live_leaders} == \
        {(10, peer.port), (1, cluster.brokers[1].port)}
    _, _, um = peer.received(ApiKey.UPDATE_METADATA)[0]
    [ts] = um.topic_states
    assert ts.topic_id == topic_id
    assert {p.partition_index: (p.leader, p.offline_replicas) for p in ts.partition_states} == \
        {0: (10, []), 1: (1, [])}

    # It leaves: its partition gets the next ISR replica, it leaves the other's ISR.
    before = cluster.partition_state("peered", 0)
    assert before is not None
    peer.unregister()
    assert cluster.wait_for_leader("peered", 0, not_in=[10], timeout=10) == 1
    after = cluster.partition_state("peered", 0)
    assert after is not None
    assert after.isr == (1,) and after.leader_epoch == before.leader_epoch + 1
    assert after.partition_epoch == before.partition_epoch + 1
    cluster.wait_until(lambda: cluster.isr_of("peered", 1) == (1,), "10 out of the ISR")

    # It comes back (a new broker epoch): the preferred replica does not take over by itself,
    # but it gets a full LeaderAndIsr for its partitions.
    peer.clear()
    peer.register()
    peer.wait_for(lambda: peer.received(ApiKey.LEADER_AND_ISR), "LeaderAndIsr")
    _, _, lai = peer.received(ApiKey.LEADER_AND_ISR)[0]
    assert lai.type == 1 and lai.broker_epoch == peer.epoch
    assert {p.partition_index for t in lai.topic_states for p in t.partition_states} == {0, 1}


def test_unclean_election_follows_the_topic_config(
        cluster: Cluster, recording: list[RecordingBroker]) -> None:
    peer = start_peer(cluster, recording, 11)
    cluster.create_topic("clean", {0: [11, 1]})
    cluster.create_topic("unclean", {0: [11, 1]},
                         {"unclean.leader.election.enable": "true"})
    controller = cluster.wait_for_controller()
    for topic in ("clean", "unclean"):
        assert cluster.wait_for_leader(topic, 0, timeout=10) == 11
        state = cluster.partition_state(topic, 0)
        assert state is not None
        ids = cluster_topic_id(cluster, topic)
        resp = request(cluster, controller, ApiKey.ALTER_PARTITION, 2, alter(
            11, peer.epoch, ids, 0, state.leader_epoch, [11], state.partition_epoch))
        assert resp.error_code == 0 and resp.topics[0].partitions[0].error_code == 0
    peer.unregister()
    assert cluster.wait_for_leader("unclean", 0, not_in=[11], timeout=10) == 1
    assert cluster.isr_of("unclean", 0) == (1,)
    cluster.wait_until(lambda: (s := cluster.partition_state("clean", 0)) is not None
                       and s.leader == -1, "clean to lose its leader")
    assert cluster.isr_of("clean", 0) == (11,)        # the last ISR is kept
    # The last ISR member comes back: it leads again.
    peer.register()
    assert cluster.wait_for_leader("clean", 0, timeout=10) == 11


def cluster_topic_id(cluster: Cluster, topic: str) -> uuid.UUID:
    data, _ = cluster._zk().get(cluster._path(topic_path(topic)))
    tid = TopicAssignment.decode(topic, data).topic_id
    assert tid is not None
    return tid


def alter(broker: int, broker_epoch: int, topic_id: uuid.UUID, p: int, leader_epoch: int,
          isr: list[int], partition_epoch: int) -> AlterPartitionRequest:
    return AlterPartitionRequest(broker_id=broker, broker_epoch=broker_epoch, topics=[
        AlterPartitionRequestAlterPartitionTopicData(topic_id=topic_id, partitions=[
            AlterPartitionRequestAlterPartitionPartitionData(
                partition_index=p, leader_epoch=leader_epoch, new_isr=isr,
                partition_epoch=partition_epoch)])])


def test_alter_partition(cluster: Cluster, recording: list[RecordingBroker]) -> None:
    peer = start_peer(cluster, recording, 12)
    cluster.create_topic("isr", {0: [12, 1, 2]})
    controller = cluster.wait_for_controller()
    assert cluster.wait_for_leader("isr", 0, timeout=10) == 12
    tid = cluster_topic_id(cluster, "isr")
    state = cluster.partition_state("isr", 0)
    assert state is not None and state.isr == (12, 1, 2)

    def send(isr: list[int], *, broker: int = 12, epoch: int | None = None,
             leader_epoch: int | None = None, partition_epoch: int | None = None,
             topic_id: uuid.UUID = tid, to: int = controller) -> tuple[int, object]:
        s = cluster.partition_state("isr", 0)
        assert s is not None
        resp = request(cluster, to, ApiKey.ALTER_PARTITION, 2, alter(
            broker, peer.epoch if epoch is None else epoch, topic_id, 0,
            s.leader_epoch if leader_epoch is None else leader_epoch, isr,
            s.partition_epoch if partition_epoch is None else partition_epoch))
        if resp.error_code:
            return resp.error_code, None
        return resp.topics[0].partitions[0].error_code, resp.topics[0].partitions[0]

    peer.clear()
    code, answer = send([12, 1])
    assert code == 0
    assert (answer.leader_id, answer.leader_epoch, answer.isr, answer.partition_epoch) == \
        (12, 0, [12, 1], 1)                                         # type: ignore[attr-defined]
    state = cluster.partition_state("isr", 0)
    assert state is not None and state.isr == (12, 1) and state.partition_epoch == 1
    assert state.leader_epoch == 0                  # ISR changes keep the leader epoch
    peer.wait_for(lambda: peer.received(ApiKey.UPDATE_METADATA), "UpdateMetadata")
    # Errors.
    assert send([12], partition_epoch=0)[0] == InvalidUpdateVersionError.code
    assert send([12], leader_epoch=-1)[0] == FencedLeaderEpochError.code
    assert send([12], broker=1, epoch=cluster.broker_epoch(1))[0] == \
        NotLeaderOrFollowerError.code
    assert send([12], epoch=peer.epoch + 1)[0] == StaleBrokerEpochError.code
    assert send([12, 1, 3])[0] == IneligibleReplicaError.code       # 3 is not a replica
    assert send([12], topic_id=uuid.uuid4())[0] == UnknownTopicIdError.code
    other = next(b for b in (1, 2, 3) if b != controller)
    assert send([12], to=other)[0] == NotControllerError.code
    # v0-1 name the topic.
    s = cluster.partition_state("isr", 0)
    assert s is not None
    resp = request(cluster, controller, ApiKey.ALTER_PARTITION, 1, AlterPartitionRequest(
        broker_id=12, broker_epoch=peer.epoch, topics=[
            AlterPartitionRequestAlterPartitionTopicData(topic_name="isr", partitions=[
                AlterPartitionRequestAlterPartitionPartitionData(
                    partition_index=0, leader_epoch=s.leader_epoch, new_isr=[12, 1, 2],
                    partition_epoch=s.partition_epoch)])]))
    assert resp.topics[0].topic_name == "isr"
    assert resp.topics[0].partitions[0].error_code == 0
    assert resp.topics[0].partitions[0].isr == [12, 1, 2]


def test_controlled_shutdown(cluster: Cluster, recording: list[RecordingBroker]) -> None:
    peer = start_peer(cluster, recording, 13)
    cluster.create_topic("cs", {0: [13, 1], 1: [2, 13], 2: [13]})
    controller = cluster.wait_for_controller()
    for p in range(3):
        cluster.wait_for_leader("cs", p, timeout=10)
    before = cluster.partition_state("cs", 0)
    assert before is not None
    resp = request(cluster, controller, ApiKey.CONTROLLED_SHUTDOWN, 3,
                   ControlledShutdownRequest(broker_id=13, broker_epoch=peer.epoch + 1))
    assert resp.error_code == StaleBrokerEpochError.code
    for version in (0, 1, 2):       # v0 has Kafka's header without a client id
        resp = request(cluster, controller, ApiKey.CONTROLLED_SHUTDOWN, version,
                       ControlledShutdownRequest(broker_id=99))
        assert resp.error_code == BrokerNotAvailableError.code
    peer.clear()
    resp = request(cluster, controller, ApiKey.CONTROLLED_SHUTDOWN, 3,
                   ControlledShutdownRequest(broker_id=13, broker_epoch=peer.epoch))
    assert resp.error_code == 0
    # RF=1 partitions cannot move and are not reported (as Kafka does).
    assert resp.remaining_partitions == []
    after = cluster.partition_state("cs", 0)
    assert after is not None
    assert (after.leader, after.isr, after.leader_epoch) == (1, (1,), before.leader_epoch + 1)
    assert cluster.isr_of("cs", 1) == (2,)
    assert cluster.leader_of("cs", 2) == 13
    peer.wait_for(lambda: peer.received(ApiKey.STOP_REPLICA), "StopReplica")
    _, v, stop = peer.received(ApiKey.STOP_REPLICA)[0]
    assert v == 3 and stop.broker_epoch == peer.epoch
    assert [(t.topic_name, p.partition_index, p.delete_partition)
            for t in stop.topic_states for p in t.partition_states] == [("cs", 1, False)]
    # The partition it led is handed to it as a follower (Kafka's controlled-shutdown
    # election sends to the live-or-shutting-down replicas): it stops taking produces.
    peer.wait_for(lambda: peer.received(ApiKey.LEADER_AND_ISR), "LeaderAndIsr")
    demoted = [(p.partition_index, p.leader, p.leader_epoch, p.isr)
               for _, _, lai in peer.received(ApiKey.LEADER_AND_ISR)
               for t in lai.topic_states for p in t.partition_states]
    assert demoted == [(0, 1, before.leader_epoch + 1, [1])], demoted
    # Shutting down: it joins no ISR any more.
    s = cluster.partition_state("cs", 1)
    assert s is not None
    resp = request(cluster, controller, ApiKey.ALTER_PARTITION, 2, alter(
        2, cluster.broker_epoch(2) or -1, cluster_topic_id(cluster, "cs"), 1, s.leader_epoch,
        [2, 13], s.partition_epoch))
    assert resp.topics[0].partitions[0].error_code == IneligibleReplicaError.code


def test_topic_deletion_waits_for_every_replica(
        cluster: Cluster, recording: list[RecordingBroker]) -> None:
    a = start_peer(cluster, recording, 14)
    b = start_peer(cluster, recording, 15)
    cluster.create_topic("doomed", {0: [14, 15], 1: [15, 14]})
    cluster.wait_for_leader("doomed", 1, timeout=10)
    b.unregister()
    cluster.wait_until(lambda: cluster.leader_of("doomed", 1) == 14, "14 to lead")
    a.clear()
    cluster.delete_topic("doomed")
    a.wait_for(lambda: a.received(ApiKey.STOP_REPLICA), "StopReplica")
    _, _, um = a.received(ApiKey.UPDATE_METADATA)[0]
    assert {p.leader for t in um.topic_states for p in t.partition_states} == {-2}
    _, _, stop = a.received(ApiKey.STOP_REPLICA)[0]
    assert sorted((p.partition_index, p.delete_partition) for t in stop.topic_states
                  for p in t.partition_states) == [(0, True), (1, True)]
    time.sleep(0.5)
    # 15 is away: the topic waits for it.
    assert cluster._zk().exists(cluster._path(topic_path("doomed"))) is not None
    b.clear()
    b.register()
    b.wait_for(lambda: b.received(ApiKey.STOP_REPLICA), "StopReplica")
    cluster.wait_until(lambda: cluster._zk().exists(cluster._path(topic_path("doomed")))
                       is None, "the topic's znodes to go", timeout=10)
    assert cluster._zk().exists(cluster._path("/config/topics/doomed")) is None
    assert cluster._zk().exists(cluster._path("/admin/delete_topics/doomed")) is None


def _elect(cluster: Cluster, to: int, election_type: int,
           partitions: dict[str, list[int]] | None, version: int = 2) -> dict[tuple[str, int],
                                                                            int]:
    resp = request(cluster, to, ApiKey.ELECT_LEADERS, version, ElectLeadersRequest(
        election_type=election_type, topic_partitions=None if partitions is None else [
            ElectLeadersTopicPartitions(topic=t, partition_id=ps)
            for t, ps in partitions.items()]))
    assert resp.error_code == 0
    return {(t.topic, p.partition_id): p.error_code
            for t in resp.replica_election_results for p in t.partition_result}


def test_elect_leaders(cluster: Cluster, recording: list[RecordingBroker]) -> None:
    peer = start_peer(cluster, recording, 16)
    cluster.create_topic("elect", {0: [16, 1], 1: [1, 16], 2: [16]})
    controller = cluster.wait_for_controller()
    assert cluster.wait_for_leader("elect", 0, timeout=10) == 16
    peer.unregister()
    cluster.wait_until(lambda: cluster.leader_of("elect", 0) == 1, "1 to lead elect-0")
    cluster.wait_until(lambda: cluster.partition_state("elect", 2) is not None and
                       cluster.leader_of("elect", 2) is None, "elect-2 to be leaderless")
    # No live replica for elect-2; the preferred replica of elect-0 is away.
    assert _elect(cluster, controller, 0, {"elect": [0, 1], "nope": [0]}) == {
        ("elect", 0): PreferredLeaderNotAvailableError.code,
        ("elect", 1): ElectionNotNeededError.code,
        ("nope", 0): UnknownTopicOrPartitionError.code}
    assert _elect(cluster, controller, 1, {"elect": [0, 2]}) == {
        ("elect", 0): ElectionNotNeededError.code,
        ("elect", 2): EligibleLeadersNotAvailableError.code}
    peer.clear()
    peer.register()
    # Once the controller has seen it come back (its LeaderAndIsr for the partitions it
    # hosts): until then it is not eligible for the ISR (INELIGIBLE_REPLICA, as Kafka's).
    peer.wait_for(lambda: peer.received(ApiKey.LEADER_AND_ISR), "LeaderAndIsr")
    # Back but out of the ISR: the leader (broker 1) lets it in again.
    s = cluster.partition_state("elect", 0)
    assert s is not None and s.isr == (1,)
    resp = request(cluster, controller, ApiKey.ALTER_PARTITION, 2, alter(
        1, cluster.broker_epoch(1) or -1, cluster_topic_id(cluster, "elect"), 0,
        s.leader_epoch, [1, 16], s.partition_epoch))
    assert resp.topics[0].partitions[0].error_code == 0
    assert _elect(cluster, controller, 0, {"elect": [0]}) == {("elect", 0): 0}
    # Answered once the broker's own metadata names the new leader (DelayedElectLeader).
    md = request(cluster, controller, ApiKey.METADATA, 12, MetadataRequest(
        topics=[MetadataRequestTopic(name="elect")]))
    assert {p.partition_index: p.leader_id for p in md.topics[0].partitions}[0] == 16
    after = cluster.partition_state("elect", 0)
    assert after is not None
    assert (after.leader, after.leader_epoch) == (16, s.leader_epoch + 1)
    # elect-2's only replica came back: the controller elected it on its own.
    assert cluster.wait_for_leader("elect", 2, timeout=10) == 16
    # All partitions (null): those that needed no election are left out.
    assert ("elect", 0) not in _elect(cluster, controller, 0, None)
    other = next(b for b in (1, 2, 3) if b != controller)
    resp = request(cluster, other, ApiKey.ELECT_LEADERS, 2, ElectLeadersRequest(
        election_type=0, topic_partitions=[ElectLeadersTopicPartitions(topic="elect",
                                                                       partition_id=[0])]))
    assert resp.error_code == NotControllerError.code


def _reassign(cluster: Cluster, to: int, targets: dict[tuple[str, int], list[int] | None]
              ) -> dict[tuple[str, int], int]:
    topics: dict[str, list[ReassignablePartition]] = {}
    for (topic, p), replicas in targets.items():
        topics.setdefault(topic, []).append(ReassignablePartition(partition_index=p,
                                                                  replicas=replicas))
    resp = request(cluster, to, ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0,
                   AlterPartitionReassignmentsRequest(topics=[
                       ReassignableTopic(name=t, partitions=ps) for t, ps in topics.items()]))
    assert resp.error_code == 0
    return {(t.name, p.partition_index): p.error_code
            for t in resp.responses for p in t.partitions}


def _ongoing(cluster: Cluster, to: int) -> dict[tuple[str, int], tuple[list[int], ...]]:
    resp = request(cluster, to, ApiKey.LIST_PARTITION_REASSIGNMENTS, 0,
                   ListPartitionReassignmentsRequest(topics=None))
    assert resp.error_code == 0
    return {(t.name, p.partition_index): (p.replicas, p.adding_replicas, p.removing_replicas)
            for t in resp.topics for p in t.partitions}


def _assignment(cluster: Cluster, topic: str) -> TopicAssignment:
    data, _ = cluster._zk().get(cluster._path(topic_path(topic)))
    return TopicAssignment.decode(topic, data)


def test_partition_reassignment(cluster: Cluster, recording: list[RecordingBroker]) -> None:
    peer = start_peer(cluster, recording, 17)
    newcomer = start_peer(cluster, recording, 18)
    cluster.create_topic("moving", {0: [1, 17]})
    controller = cluster.wait_for_controller()
    assert cluster.wait_for_leader("moving", 0, timeout=10) == 1
    before = cluster.partition_state("moving", 0)
    assert before is not None
    newcomer.clear()
    assert _reassign(cluster, controller, {("moving", 0): [17, 18]}) == {("moving", 0): 0}
    assert _assignment(cluster, "moving").partitions[0] == \
        ReplicaAssignment((17, 18, 1), (18,), (1,))
    assert _ongoing(cluster, controller) == {("moving", 0): ([17, 18, 1], [18], [1])}
    started = cluster.partition_state("moving", 0)
    assert started is not None and started.leader_epoch == before.leader_epoch + 1
    newcomer.wait_for(lambda: newcomer.received(ApiKey.LEADER_AND_ISR), "LeaderAndIsr")
    _, _, lai = newcomer.received(ApiKey.LEADER_AND_ISR)[0]
    [ps] = lai.topic_states[0].partition_states
    assert (ps.replicas, ps.adding_replicas, ps.removing_replicas, ps.is_new) == \
        ([17, 18, 1], [18], [1], True)
    # The leader (broker 1) lets 18 into the ISR: the target set is in sync, the move ends,
    # 17 (first of the target in the ISR) leads, 1 is out.
    resp = request(cluster, controller, ApiKey.ALTER_PARTITION, 2, alter(
        1, cluster.broker_epoch(1) or -1, cluster_topic_id(cluster, "moving"), 0,
        started.leader_epoch, [1, 17, 18], started.partition_epoch))
    assert resp.topics[0].partitions[0].isr == [1, 17, 18]     # what the leader asked for
    done = cluster.partition_state("moving", 0)
    assert done is not None
    assert (done.leader, done.isr, done.leader_epoch) == (17, (17, 18),
                                                          started.leader_epoch + 1)
    assert _assignment(cluster, "moving").partitions[0] == ReplicaAssignment((17, 18))
    assert _ongoing(cluster, controller) == {}

    # Refused: unknown partition, no replicas, duplicates, a broker that is not alive; a
    # cancel with nothing to cancel.
    assert _reassign(cluster, controller, {
        ("moving", 5): [17], ("moving", 0): [], ("nope", 0): [1]}) == {
        ("moving", 5): UnknownTopicOrPartitionError.code,
        ("moving", 0): InvalidReplicaAssignmentError.code,
        ("nope", 0): UnknownTopicOrPartitionError.code}
    assert _reassign(cluster, controller, {("moving", 0): [17, 17]}) == \
        {("moving", 0): InvalidReplicaAssignmentError.code}
    assert _reassign(cluster, controller, {("moving", 0): [17, 99]}) == \
        {("moving", 0): InvalidReplicaAssignmentError.code}
    assert _reassign(cluster, controller, {("moving", 0): None}) == \
        {("moving", 0): NoReassignmentInProgressError.code}

    # Cancelled: back to the original replicas, the one being added is deleted.
    assert _reassign(cluster, controller, {("moving", 0): [17, 2]}) == {("moving", 0): 0}
    assert _ongoing(cluster, controller) == {("moving", 0): ([17, 2, 18], [2], [18])}
    peer.clear()
    assert _reassign(cluster, controller, {("moving", 0): None}) == {("moving", 0): 0}
    assert _assignment(cluster, "moving").partitions[0] == ReplicaAssignment((17, 18))
    assert _ongoing(cluster, controller) == {}
    assert cluster.leader_of("moving", 0) == 17


def test_legacy_reassignment_znode(cluster: Cluster) -> None:
    cluster.create_topic("shrinking", {0: [1, 2, 3]})
    cluster.wait_for_leader("shrinking", 0, timeout=10)
    zk = cluster._zk()
    zk.create(cluster._path("/admin/reassign_partitions"), reassignment_encode(
        {TopicPartition("shrinking", 0): [2, 1], TopicPartition("nope", 0): [1]}))
    cluster.wait_until(lambda: zk.exists(cluster._path("/admin/reassign_partitions")) is None,
                       "the reassignment znode to go", timeout=10)
    assert _assignment(cluster, "shrinking").partitions[0] == ReplicaAssignment((2, 1))
    assert cluster.isr_of("shrinking", 0) == (1, 2)
