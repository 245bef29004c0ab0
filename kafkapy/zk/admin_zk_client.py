"""AdminZkClient: the admin operations of ZooKeeper mode, as Kafka's ``kafka.zk.AdminZkClient``
does them, on top of ``KafkaZkClient``'s session.

What any broker (not only the controller) writes to ask the cluster for a change; the
controller (topics) and every broker's ``ConfigChangeListener`` (configs) act on it:

- **Create a topic**: ``/config/topics/<t>`` first, then ``/brokers/topics/<t>`` (the
  assignment and the topic id, v3 JSON). The config exists before the controller's watch on
  ``/brokers/topics`` sees the topic, as in Kafka. A topic that exists, or is still marked for
  deletion, is TOPIC_ALREADY_EXISTS.
- **Delete a topic**: create ``/admin/delete_topics/<t>``; the controller does the rest. A
  second request while it is pending is ``TopicAlreadyMarkedForDeletion`` (the caller
  swallows it, as Kafka's ZkAdminManager does, and waits like the first).
- **Add partitions**: rewrite ``/brokers/topics/<t>`` with the old and the new partitions,
  conditionally on the znode version read (a concurrent change is refused, never lost).
- **Change configs** (``change_configs``): write ``/config/<type>/<entity>`` (Kafka's
  ``{"version":1,"config":{...}}``) then a sequential
  ``/config/changes/config_change_<seq>`` holding ``{"version":2,"entity_path":
  "<type>/<entity>"}``: the notification every broker's listener processes.

Blocking calls on kazoo's threads, like ``KafkaZkClient``: from Trio call them with
``trio.to_thread.run_sync`` (or directly where a millisecond's local round trip on the loop
is accepted, see ``ZkMetadataStore``). While the session's connection is down every call
raises ZooKeeperNotConnectedError at once rather than wait for it to come back.
Errors: Kafka's (``TopicAlreadyExistsError``, ``UnknownTopicOrPartitionError``,
``InvalidReplicaAssignmentError``) where Kafka answers them;
other ZooKeeper failures surface as kazoo's exceptions.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from kafkapy.errors import (
    InvalidReplicaAssignmentError,
    KafkaError,
    TopicAlreadyExistsError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from kafkapy.zk.kafka_zk_client import KafkaZkClient
from kafkapy.zk.zk_data import (
    CONFIG_CHANGES_PATH,
    ReplicaAssignment,
    TopicAssignment,
    config_change_encode,
    config_decode,
    config_encode,
    config_path,
    delete_topic_path,
    topic_path,
)

__all__ = ["CONFIG_CHANGE_PREFIX", "DEFAULT_ENTITY", "AdminZkClient",
           "TopicAlreadyMarkedForDeletionError", "ZooKeeperNotConnectedError"]

CONFIG_CHANGE_PREFIX = "config_change_"
DEFAULT_ENTITY = "<default>"


class ZooKeeperNotConnectedError(UnknownServerError):
    """The session's connection is down (Kafka: ZooKeeperClientTimeoutException, an
    UNKNOWN_SERVER_ERROR on the wire)."""


class TopicAlreadyMarkedForDeletionError(KafkaError):
    """``/admin/delete_topics/<t>`` exists already (Kafka's
    TopicAlreadyMarkedForDeletionException; never sent on the wire)."""


class AdminZkClient:
    """Kafka's AdminZkClient over one ``KafkaZkClient`` (see the module doc)."""

    def __init__(self, client: KafkaZkClient) -> None:
        self.client = client

    def check_connected(self) -> None:
        """Raises ZooKeeperNotConnectedError while the connection is down."""
        self._zk  # noqa: B018

    @property
    def _zk(self) -> KazooClient:
        zk = self.client.zk
        if not zk.connected:
            # kazoo would queue the call until the connection is back (or the session
            # expires): fail at once instead, so a caller on the event loop never stalls.
            raise ZooKeeperNotConnectedError(
                f"ZooKeeper ({self.client.connect}) is not connected")
        return zk

    # ===================================================================== topics

    def topic_exists(self, topic: str) -> bool:
        return self._zk.exists(topic_path(topic)) is not None

    def validate_topic_create(self, topic: str) -> None:
        """Raises TopicAlreadyExistsError for a topic in ZooKeeper or marked for deletion
        (Kafka's ``validateTopicCreate``)."""
        if self._zk.exists(delete_topic_path(topic)) is not None:
            raise TopicAlreadyExistsError(f"Topic '{topic}' is already marked for deletion.")
        if self.topic_exists(topic):
            raise TopicAlreadyExistsError(f"Topic '{topic}' already exists.")

    def create_topic_with_assignment(self, topic: str, configs: Mapping[str, str],
                                     assignment: Mapping[int, Sequence[int]],
                                     topic_id: uuid.UUID | None = None) -> uuid.UUID:
        """Write the config, then the assignment with a topic id (a new one unless given).
        Returns the topic id. Raises TopicAlreadyExistsError."""
        self.validate_topic_create(topic)
        topic_id = topic_id or uuid.uuid4()
        znode = TopicAssignment(topic, topic_id, {
            p: ReplicaAssignment(tuple(replicas)) for p, replicas in assignment.items()})
        config = config_encode(configs)
        try:
            # The config znode may be left over from an earlier topic of this name (Kafka
            # overwrites it too): set it, then create the topic.
            self._zk.create(config_path("topics", topic), config, makepath=True)
        except NodeExistsError:
            self._zk.set(config_path("topics", topic), config)
        try:
            self._zk.create(topic_path(topic), znode.encode(), makepath=True)
        except NodeExistsError:
            raise TopicAlreadyExistsError(f"Topic '{topic}' already exists.") from None
        return topic_id

    def delete_topic(self, topic: str) -> None:
        """Mark ``topic`` for deletion. Raises UnknownTopicOrPartitionError when it does not
        exist, TopicAlreadyMarkedForDeletionError when it is marked already."""
        if not self.topic_exists(topic):
            raise UnknownTopicOrPartitionError(f"Topic `{topic}` to delete does not exist")
        try:
            self._zk.create(delete_topic_path(topic), b"", makepath=True)
        except NodeExistsError:
            raise TopicAlreadyMarkedForDeletionError(
                f"topic {topic} is already marked for deletion") from None

    def get_assignment(self, topic: str) -> tuple[TopicAssignment, int] | None:
        """The topic's assignment znode and its version; None when the topic is unknown."""
        try:
            data, stat = self._zk.get(topic_path(topic))
        except NoNodeError:
            return None
        return TopicAssignment.decode(topic, data), int(stat.version)

    def add_partitions(self, topic: str, existing: TopicAssignment, version: int,
                       new: Mapping[int, Sequence[int]]) -> None:
        """Rewrite the assignment with ``new`` partitions added, if the znode is still at
        ``version``. Raises InvalidReplicaAssignmentError when it changed meanwhile."""
        partitions = dict(existing.partitions)
        for p, replicas in new.items():
            partitions[p] = ReplicaAssignment(tuple(replicas))
        znode = TopicAssignment(topic, existing.topic_id, partitions)
        try:
            self._zk.set(topic_path(topic), znode.encode(), version)
        except (BadVersionError, NoNodeError):
            raise InvalidReplicaAssignmentError(
                f"The assignment of topic {topic} changed while partitions were being "
                f"added") from None

    # ==================================================================== configs

    def fetch_entity_config(self, entity_type: str, entity: str) -> dict[str, str]:
        """``/config/<type>/<entity>``'s config; empty when the znode does not exist."""
        try:
            data, _ = self._zk.get(config_path(entity_type, entity))
        except NoNodeError:
            return {}
        return config_decode(data)

    def change_configs(self, entity_type: str, entity: str,
                       configs: Mapping[str, str]) -> None:
        """Replace the entity's config and notify every broker (Kafka's
        ``changeEntityConfig``: the config first, then the sequential notification)."""
        path = config_path(entity_type, entity)
        data = config_encode(configs)
        try:
            self._zk.set(path, data)
        except NoNodeError:
            try:
                self._zk.create(path, data, makepath=True)
            except NodeExistsError:
                self._zk.set(path, data)
        self._zk.create(f"{CONFIG_CHANGES_PATH}/{CONFIG_CHANGE_PREFIX}",
                        config_change_encode(entity_type, entity), sequence=True,
                        makepath=True)
