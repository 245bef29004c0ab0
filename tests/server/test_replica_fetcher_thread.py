"""The follower's Fetch request template (``FetchTemplate``) and when the fetcher rebuilds it:
pure bookkeeping, no sockets (the replication itself is tested over real brokers in
test_replication.py)."""

from __future__ import annotations

import math
import uuid
from types import SimpleNamespace
from typing import Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.replica_fetcher_thread import (
    FetchTemplate,
    InitialFetchState,
    PartitionFetchState,
    ReplicaFetcherThread,
)

A0 = TopicPartition("a", 0)
A1 = TopicPartition("a", 1)
B0 = TopicPartition("b", 0)
TOPIC_A = uuid.uuid4()
TOPIC_B = uuid.uuid4()


class FakeReplicaManager:
    """What the fetcher reads from its ReplicaManager: node id, replica.* settings, the
    hosted partitions' log start offsets."""

    node_id = 2

    def __init__(self) -> None:
        self.partitions: dict[TopicPartition, Any] = {}
        self.settings = {"replica_fetch_max_bytes": 4096, "replica_fetch_wait_max_ms": 250,
                         "replica_fetch_min_bytes": 1,
                         "replica_fetch_response_max_bytes": 65536}

    def replica_config(self, name: str, default: int) -> int:
        return self.settings.get(name, default)

    def host(self, tp: TopicPartition, log_start: int) -> None:
        self.partitions[tp] = SimpleNamespace(log=SimpleNamespace(log_start_offset=log_start))


def _state(topic_id: uuid.UUID, offset: int, epoch: int = 3) -> PartitionFetchState:
    return PartitionFetchState(topic_id, offset, epoch, epoch - 1)


def test_template_groups_partitions_by_topic_and_carries_the_settings() -> None:
    rm = FakeReplicaManager()
    ready = {A0: _state(TOPIC_A, 10), B0: _state(TOPIC_B, 20), A1: _state(TOPIC_A, 30)}
    t = FetchTemplate.build(rm, ready, math.inf)  # type: ignore[arg-type]
    req = t.request
    assert (req.replica_id, req.max_wait_ms, req.min_bytes, req.max_bytes) == (2, 250, 1, 65536)
    assert (req.session_id, req.session_epoch) == (0, -1)
    assert [(t.topic, t.topic_id, [p.partition for p in t.partitions]) for t in req.topics] == \
        [("a", TOPIC_A, [0, 1]), ("b", TOPIC_B, [0])]
    assert all(p.partition_max_bytes == 4096 and p.current_leader_epoch == 3
               for t in req.topics for p in t.partitions)
    assert t.by_key[("a", 1)] == (A1, ready[A1])
    assert ("b", 1) not in t.by_key


def test_refresh_copies_each_partitions_current_position() -> None:
    rm = FakeReplicaManager()
    rm.host(A0, 5)
    a0, b0 = _state(TOPIC_A, 10), _state(TOPIC_B, 20)
    t = FetchTemplate.build(rm, {A0: a0, B0: b0}, math.inf)  # type: ignore[arg-type]
    a0.fetch_offset, a0.last_fetched_epoch = 17, 3
    b0.fetch_offset = 21
    req = t.refresh(rm)  # type: ignore[arg-type]
    parts = {(topic.topic, p.partition): p for topic in req.topics for p in topic.partitions}
    assert (parts["a", 0].fetch_offset, parts["a", 0].last_fetched_epoch,
            parts["a", 0].log_start_offset) == (17, 3, 5)
    # Not hosted (any more): log start unknown, as before the template.
    assert (parts["b", 0].fetch_offset, parts["b", 0].log_start_offset) == (21, -1)
    rm.host(A0, 9)
    assert parts["a", 0] is {(tp.topic, p.partition): p for tp in t.refresh(rm).topics  # type: ignore[arg-type]
                             for p in tp.partitions}["a", 0]
    assert parts["a", 0].log_start_offset == 9


def _fetcher(rm: FakeReplicaManager) -> ReplicaFetcherThread:
    return ReplicaFetcherThread(rm, 0, 1, "localhost", 9092)  # type: ignore[arg-type]


def _add(f: ReplicaFetcherThread, tp: TopicPartition, offset: int) -> None:
    f.add_partition(tp, InitialFetchState(1, "localhost", 9092, TOPIC_A, 3, offset, 2))


def test_the_fetcher_reuses_its_template_until_the_partitions_change() -> None:
    f = _fetcher(FakeReplicaManager())
    assert f._session(0.0) is None
    _add(f, A0, 0)
    first = f._session(0.0)
    assert first is not None and list(first.by_key) == [("a", 0)]
    assert f._session(1.0) is first                 # nothing changed: the same object
    _add(f, A1, 0)
    second = f._session(1.0)
    assert second is not first and set(second.by_key) == {("a", 0), ("a", 1)}
    f.remove_partitions({A0})
    third = f._session(1.0)
    assert third is not second and list(third.by_key) == [("a", 1)]
    f.remove_partitions({A1})
    assert f._session(1.0) is None


def test_a_backed_off_partition_leaves_the_template_and_returns_after_its_delay() -> None:
    f = _fetcher(FakeReplicaManager())
    _add(f, A0, 0)
    _add(f, A1, 0)
    assert f._session(0.0) is not None
    f.partitions[A1].delayed_until = 5.0
    f._changed()
    during = f._session(1.0)
    assert during is not None and list(during.by_key) == [("a", 0)]
    assert during.next_change == 5.0
    assert f._session(4.9) is during
    after = f._session(5.0)
    assert after is not during and set(after.by_key) == {("a", 0), ("a", 1)}
    assert after.next_change == math.inf


def test_a_restarted_partition_gets_a_new_state_in_the_template() -> None:
    f = _fetcher(FakeReplicaManager())
    _add(f, A0, 0)
    old = f._session(0.0)
    assert old is not None
    _add(f, A0, 7)                                  # a new leader epoch: a new state
    new = f._session(0.0)
    assert new is not None and new.by_key["a", 0][1] is f.partitions[A0]
    assert new.by_key["a", 0][1] is not old.by_key["a", 0][1]
    assert new.refresh(f._rm).topics[0].partitions[0].fetch_offset == 7
