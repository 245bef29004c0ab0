"""ControllerContext: what the active controller knows about the cluster (Kafka's
``ControllerContext``), rebuilt from ZooKeeper each time this broker becomes controller.

Theory of operation
-------------------
- Owned by the controller's event task alone: every read and write happens while one
  controller event is processed, so there are no locks and no half-applied changes visible.
- ZooKeeper is the truth; this is its cache. A state here changes only after the controller's
  fenced write to ZooKeeper succeeded (``partition_epoch`` is then the znode's new version).
- ``live_brokers`` are the registrations under ``/brokers/ids`` as the controller last read
  them, with their broker epochs (czxid); ``shutting_down`` are live brokers that asked for a
  controlled shutdown: they lead nothing new and join no ISR until they leave.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.zk.kafka_zk_client import RegisteredBroker
from kafkapy.zk.zk_data import LeaderAndIsr, ReplicaAssignment

__all__ = ["ControllerContext"]


@attrs.define
class ControllerContext:
    epoch: int = -1
    epoch_zk_version: int = -1
    live_brokers: dict[int, RegisteredBroker] = attrs.field(factory=dict)
    shutting_down: set[int] = attrs.field(factory=set)
    topic_ids: dict[str, uuid.UUID] = attrs.field(factory=dict)
    assignments: dict[TopicPartition, ReplicaAssignment] = attrs.field(factory=dict)
    states: dict[TopicPartition, LeaderAndIsr] = attrs.field(factory=dict)
    topics_to_delete: set[str] = attrs.field(factory=set)
    # (partition, replica) pairs whose StopReplica(delete) has not been acknowledged yet.
    deletion_pending: set[tuple[TopicPartition, int]] = attrs.field(factory=set)
    # ... of which a StopReplica(delete) is on its way (not re-sent meanwhile).
    deletion_sent: set[tuple[TopicPartition, int]] = attrs.field(factory=set)
    # Reassignments asked through /admin/reassign_partitions (removed from it when done).
    legacy_reassignments: dict[TopicPartition, tuple[int, ...]] = attrs.field(factory=dict)

    # ------------------------------------------------------------------ brokers

    def is_alive(self, broker_id: int) -> bool:
        return broker_id in self.live_brokers

    def is_eligible(self, broker_id: int) -> bool:
        """Alive and not shutting down: may lead or join an ISR."""
        return broker_id in self.live_brokers and broker_id not in self.shutting_down

    def broker_epoch(self, broker_id: int) -> int:
        broker = self.live_brokers.get(broker_id)
        return -1 if broker is None else broker.epoch

    # ------------------------------------------------------------------- topics

    @property
    def topics(self) -> set[str]:
        return {tp.topic for tp in self.assignments}

    def partitions_of(self, topic: str) -> list[TopicPartition]:
        return sorted(tp for tp in self.assignments if tp.topic == topic)

    def topic_by_id(self, topic_id: uuid.UUID) -> str | None:
        for name, tid in self.topic_ids.items():
            if tid == topic_id:
                return name
        return None

    def replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        assignment = self.assignments.get(tp)
        return () if assignment is None else assignment.replicas

    def partitions_on(self, broker_id: int) -> Iterator[TopicPartition]:
        return (tp for tp, a in sorted(self.assignments.items()) if broker_id in a.replicas)

    def partitions_led_by(self, broker_id: int) -> Iterator[TopicPartition]:
        return (tp for tp, s in sorted(self.states.items()) if s.leader == broker_id)

    def offline_replicas(self, tp: TopicPartition) -> list[int]:
        return [r for r in self.replicas(tp) if r not in self.live_brokers]

    def is_deleting(self, tp: TopicPartition) -> bool:
        return tp.topic in self.topics_to_delete

    def remove_topic(self, topic: str) -> None:
        for tp in self.partitions_of(topic):
            self.assignments.pop(tp, None)
            self.states.pop(tp, None)
        self.topic_ids.pop(topic, None)
        self.topics_to_delete.discard(topic)
        self.deletion_pending = {(tp, r) for tp, r in self.deletion_pending
                                 if tp.topic != topic}
        self.deletion_sent = {(tp, r) for tp, r in self.deletion_sent if tp.topic != topic}

    def reassigning(self, tp: TopicPartition) -> bool:
        assignment = self.assignments.get(tp)
        return assignment is not None and bool(assignment.adding or assignment.removing)

    def live_replicas(self, tp: TopicPartition) -> list[int]:
        return [r for r in self.replicas(tp) if r in self.live_brokers]

    def all_partitions(self) -> Iterable[TopicPartition]:
        return sorted(self.assignments)
