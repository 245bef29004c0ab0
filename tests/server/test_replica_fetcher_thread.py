"""The follower's Fetch requests in its incremental fetch session: what each one lists, pure
bookkeeping, no sockets (the replication itself is tested over real brokers in
test_replication.py)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.replica_fetcher_thread import (
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
    hosted partitions' log start offsets, the inter-broker TLS context and SASL authentication
    (plaintext, none)."""

    node_id = 2
    inter_broker_ssl_context = None
    inter_broker_authenticate = None

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


def _fetcher(rm: FakeReplicaManager) -> ReplicaFetcherThread:
    return ReplicaFetcherThread(rm, 0, 1, "localhost", 9092)  # type: ignore[arg-type]


def _add(f: ReplicaFetcherThread, tp: TopicPartition, offset: int,
         topic_id: uuid.UUID = TOPIC_A) -> None:
    f.add_partition(tp, InitialFetchState(1, "localhost", 9092, topic_id, 3, offset, 2))


def _listed(request: Any) -> dict[tuple[str, int], Any]:
    return {(t.topic, p.partition): p for t in request.topics for p in t.partitions}


def test_the_first_fetch_lists_everything_grouped_by_topic_with_the_settings() -> None:
    rm = FakeReplicaManager()
    rm.host(A0, 5)
    f = _fetcher(rm)
    _add(f, A0, 10)
    _add(f, B0, 20, TOPIC_B)
    _add(f, A1, 30)
    build, req = f._request(f._ready(0.0))
    assert build.full
    assert (req.replica_id, req.max_wait_ms, req.min_bytes, req.max_bytes) == (2, 250, 1, 65536)
    assert (req.session_id, req.session_epoch) == (0, 0)
    assert [(t.topic, t.topic_id, [p.partition for p in t.partitions]) for t in req.topics] == \
        [("a", TOPIC_A, [0, 1]), ("b", TOPIC_B, [0])]
    parts = _listed(req)
    assert (parts["a", 0].fetch_offset, parts["a", 0].log_start_offset,
            parts["a", 0].last_fetched_epoch, parts["a", 0].current_leader_epoch,
            parts["a", 0].partition_max_bytes) == (10, 5, 2, 3, 4096)
    assert parts["b", 0].log_start_offset == -1         # not hosted: unknown


def test_then_only_partitions_whose_position_changed() -> None:
    rm = FakeReplicaManager()
    f = _fetcher(rm)
    _add(f, A0, 0)
    _add(f, A1, 0)
    build, _ = f._request(f._ready(0.0))
    assert f.sessions.handle_response(build, 0, 42)
    build, req = f._request(f._ready(0.0))
    assert (req.session_id, req.session_epoch, req.topics, req.forgotten_topics_data) == \
        (42, 1, [], [])
    assert f.sessions.handle_response(build, 0, 42)
    f.partitions[A1].fetch_offset = 9                   # A1 appended the leader's data
    rm.host(A0, 4)                                      # A0's log start moved
    build, req = f._request(f._ready(0.0))
    assert req.session_epoch == 2
    assert {k: p.fetch_offset for k, p in _listed(req).items()} == {("a", 0): 0, ("a", 1): 9}
    assert f.sessions.handle_response(build, 0, 42)
    # A backed-off partition is forgotten by the session, and sent again after its delay.
    f.partitions[A1].delayed_until = 5.0
    build, req = f._request(f._ready(1.0))
    assert req.topics == [] and [(t.topic, t.partitions) for t in req.forgotten_topics_data] \
        == [("a", [1])]
    assert f.sessions.handle_response(build, 0, 42)
    build, req = f._request(f._ready(5.0))
    assert list(_listed(req)) == [("a", 1)] and req.forgotten_topics_data == []


def test_a_session_error_makes_the_next_fetch_full() -> None:
    f = _fetcher(FakeReplicaManager())
    _add(f, A0, 0)
    _add(f, A1, 0)
    build, _ = f._request(f._ready(0.0))
    assert f.sessions.handle_response(build, 0, 42)
    build, req = f._request(f._ready(0.0))
    assert not f.sessions.handle_response(build, 70, 0)     # FETCH_SESSION_ID_NOT_FOUND
    _, req = f._request(f._ready(0.0))
    assert (req.session_id, req.session_epoch) == (0, 0)
    assert set(_listed(req)) == {("a", 0), ("a", 1)}
