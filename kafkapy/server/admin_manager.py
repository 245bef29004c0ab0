"""AdminManager: topic creation, deletion and partition growth, with Kafka's validation.

Kafka's controller-side ``ReplicationControlManager.createTopics`` / ``deleteTopics`` /
``createPartitions`` (and ``ZkAdminManager`` before KRaft), for one broker: validate, make the
change durable in the ``MetadataStore``, then make this broker the leader of the new
partitions (or drop the deleted ones). Used by CreateTopics, DeleteTopics, CreatePartitions and
by Metadata's topic auto-creation, so they all validate alike.

Errors are raised as ``KafkaError`` with Kafka's codes and messages; callers that answer per
topic catch them per topic.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kafkapy.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    TopicAlreadyExistsError,
    TopicDeletionDisabledError,
    UnknownTopicOrPartitionError,
)
from kafkapy.log.checkpoints import TopicPartition
from kafkapy.log.config import LogConfig
from kafkapy.log.log_manager import validate_topic_name
from kafkapy.server.metadata_store import TopicRecord

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer

__all__ = ["AdminManager"]

log = logging.getLogger(__name__)

# Kafka's ``CreatePartitionsRequest`` / ``CreateTopicsRequest`` limit on partitions per topic
# is Integer.MAX_VALUE; a single broker also has to open every log, so keep a sane ceiling.
MAX_PARTITIONS = 100_000


class AdminManager:
    def __init__(self, server: KafkaServer) -> None:
        self.server = server

    @property
    def _store(self):  # type: ignore[no-untyped-def]
        return self.server.metadata_store

    def validate_configs(self, configs: Mapping[str, str | None]) -> dict[str, str]:
        """Topic config overrides checked as Kafka does (unknown name or bad value:
        INVALID_CONFIG; a null value: INVALID_REQUEST). Returns them as strings."""
        out: dict[str, str] = {}
        for name, value in configs.items():
            if value is None:
                raise InvalidRequestError(f"Null value not supported for topic configs: {name}")
            out[name] = value
        try:
            LogConfig.resolve(out, self.server.broker_log_props())
        except InvalidConfigError:
            raise
        except (ValueError, TypeError) as e:
            raise InvalidConfigError(str(e)) from e
        return out

    def check_new_topic(self, name: str, num_partitions: int, replication_factor: int,
                        assignments: Sequence[tuple[int, Sequence[int]]] = (),
                        configs: Mapping[str, str | None] | None = None
                        ) -> tuple[int, dict[str, str]]:
        """Everything CreateTopics checks before creating; returns (partitions, configs)."""
        validate_topic_name(name)
        if name in self._store.topics:
            raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
        cfg = self.server.config
        node = self.server.node_id
        if assignments:
            if num_partitions != -1 or replication_factor != -1:
                raise InvalidRequestError("Both numPartitions or replicationFactor and "
                                          "replicasAssignments were set. Both cannot be used "
                                          "at the same time.")
            indexes = sorted(p for p, _ in assignments)
            if indexes != list(range(len(indexes))):
                raise InvalidReplicaAssignmentError(
                    "partitions should be a consecutive 0-based integer sequence")
            for p, replicas in assignments:
                if not replicas:
                    raise InvalidReplicaAssignmentError(f"Empty replica assignment for "
                                                        f"partition {p}")
                if len(set(replicas)) != len(replicas):
                    raise InvalidReplicaAssignmentError(f"Duplicate replica assignment for "
                                                        f"partition {p}: {list(replicas)}")
                for r in replicas:
                    if r != node:
                        raise InvalidReplicaAssignmentError(
                            f"The manual partition assignment includes broker {r}, but no "
                            f"such broker is registered.")
            num_partitions = len(indexes)
        else:
            if num_partitions == -1:
                num_partitions = cfg.num_partitions
            if replication_factor == -1:
                replication_factor = cfg.default_replication_factor
            if num_partitions <= 0:
                raise InvalidPartitionsError("Number of partitions was set to an invalid "
                                             "non-positive value.")
            if replication_factor <= 0:
                raise InvalidReplicationFactorError("Replication factor must be larger than "
                                                    "0, or -1 to use the default value.")
            if replication_factor > 1:
                raise InvalidReplicationFactorError(
                    f"Unable to replicate the partition {replication_factor} time(s): The "
                    f"target replication factor of {replication_factor} cannot be reached "
                    f"because only 1 broker(s) are registered.")
        if num_partitions > MAX_PARTITIONS:
            raise InvalidPartitionsError(f"Number of partitions {num_partitions} is above "
                                         f"this broker's limit of {MAX_PARTITIONS}")
        return num_partitions, self.validate_configs(configs or {})

    def create_topic(self, name: str, num_partitions: int = -1, replication_factor: int = -1,
                     assignments: Sequence[tuple[int, Sequence[int]]] = (),
                     configs: Mapping[str, str | None] | None = None) -> TopicRecord:
        """Validate, persist, and lead every partition of the new topic."""
        partitions, checked = self.check_new_topic(name, num_partitions, replication_factor,
                                                   assignments, configs)
        record = self._store.create_topic(name, partitions, checked)
        for p in range(partitions):
            self.server.replica_manager.make_leader(TopicPartition(name, p), record.topic_id)
        log.info("Created topic %s (id %s) with %d partition(s)%s", name, record.topic_id,
                 partitions, f" and configs {checked}" if checked else "")
        return record

    def delete_topic(self, name: str) -> TopicRecord:
        if not self.server.config.delete_topic_enable:
            raise TopicDeletionDisabledError("Topic deletion is disabled.")
        record = self._store.topics.get(name)
        if record is None:
            raise UnknownTopicOrPartitionError("This server does not host this "
                                               "topic-partition.")
        self._store.delete_topic(name)
        self.server.replica_manager.remove_partitions(
            TopicPartition(name, p) for p in range(record.partitions))
        log.info("Deleted topic %s (id %s)", name, record.topic_id)
        return record

    def check_partition_count(self, name: str, count: int,
                              assignments: Sequence[Sequence[int]] | None = None) -> TopicRecord:
        """Everything CreatePartitions checks; returns the topic."""
        record = self._store.topics.get(name)
        if record is None:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
        if count < record.partitions:
            raise InvalidPartitionsError(f"The topic {name} currently has {record.partitions} "
                                         f"partition(s); {count} would not be an increase.")
        if count == record.partitions:
            raise InvalidPartitionsError(f"Topic already has {record.partitions} "
                                         f"partition(s).")
        if count > MAX_PARTITIONS:
            raise InvalidPartitionsError(f"Number of partitions {count} is above this "
                                         f"broker's limit of {MAX_PARTITIONS}")
        if assignments is not None:
            if len(assignments) != count - record.partitions:
                raise InvalidReplicaAssignmentError(
                    f"Attempted to add {count - record.partitions} additional partition(s), "
                    f"but only {len(assignments)} assignment(s) were specified.")
            for replicas in assignments:
                if list(replicas) != [self.server.node_id]:
                    raise InvalidReplicaAssignmentError(
                        f"The manual partition assignment includes broker(s) "
                        f"{sorted(set(replicas) - {self.server.node_id})}, but no such broker "
                        f"is registered." if set(replicas) - {self.server.node_id}
                        else f"Invalid replica assignment {list(replicas)}")
        return record

    def create_partitions(self, name: str, count: int,
                          assignments: Sequence[Sequence[int]] | None = None) -> TopicRecord:
        old = self.check_partition_count(name, count, assignments)
        record = self._store.set_partition_count(name, count)
        for p in range(old.partitions, count):
            self.server.replica_manager.make_leader(TopicPartition(name, p), record.topic_id)
        log.info("Topic %s now has %d partitions (was %d)", name, count, old.partitions)
        return record
