"""MetadataStore: the cluster metadata that must survive a restart (topics, their ids,
partition counts and configs; dynamic broker configs), behind an interface.

In Kafka this is the KRaft ``__cluster_metadata`` log replayed by every broker (or ZooKeeper
before it). A single kafkapy broker keeps it in one JSON document, ``__kafkapy_metadata.json``
in the first log dir, rewritten atomically on every change (write a temporary file, fsync it,
rename it over the old one, fsync the directory): a crash leaves the old or the new document,
never a mix. The log loader ignores plain files, so the document lives beside the partition
folders as Kafka's checkpoint files do.

The single broker's document also holds the cluster's finalized feature levels and their
epoch (``FileMetadataStore.finalized_features``: the broker is its own controller); in
ZooKeeper mode they are ``/feature``'s (``server.finalized_feature_cache``).

The interface (``MetadataStore``) is what the controller issue replaces with a replicated
store: the broker only reads ``topics`` / ``broker_configs`` and calls the mutators, each of
which is durable when it returns. Names and values are validated by the callers (the admin
handlers); this module checks only what keeps the document consistent (a topic exists or not,
partition counts only grow).
"""

from __future__ import annotations

import abc
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import trio
from kazoo.exceptions import NoNodeError

from kafkapy.common.atomic_file import write_atomically
from kafkapy.common.features import default_finalized
from kafkapy.errors import (
    InvalidPartitionsError,
    TopicAlreadyExistsError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from kafkapy.zk.admin_zk_client import DEFAULT_ENTITY, AdminZkClient
from kafkapy.zk.kafka_zk_client import KafkaZkClient
from kafkapy.zk.zk_data import USERS_CONFIG_PATH, desanitize, sanitize

if TYPE_CHECKING:
    from kafkapy.server.metadata_cache import ZkMetadataCache

__all__ = ["METADATA_FILE", "FileMetadataStore", "MetadataStore", "TopicRecord",
           "ZkMetadataStore"]

METADATA_FILE = "__kafkapy_metadata.json"
_FORMAT_VERSION = 1
_MAX_PRODUCER_ID = (1 << 63) - 1


def _str_dict(value: Mapping[str, str]) -> dict[str, str]:
    return dict(value)


@attrs.frozen
class TopicRecord:
    """A topic as created: its id, how many partitions, and its own config overrides."""

    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: Mapping[str, str] = attrs.field(factory=dict, converter=_str_dict)


class MetadataStore(abc.ABC):
    """Durable cluster metadata. Every mutator is durable when it returns."""

    @property
    @abc.abstractmethod
    def topics(self) -> Mapping[str, TopicRecord]: ...

    @property
    @abc.abstractmethod
    def broker_configs(self) -> Mapping[str, Mapping[str, str]]:
        """Dynamic broker configs by DescribeConfigs resource name: "" for the cluster-wide
        defaults, the node id as text for one broker's own."""

    @abc.abstractmethod
    def create_topic(self, name: str, partitions: int, configs: Mapping[str, str],
                     topic_id: uuid.UUID | None = None) -> TopicRecord: ...

    @abc.abstractmethod
    def delete_topic(self, name: str) -> TopicRecord: ...

    @abc.abstractmethod
    def set_partition_count(self, name: str, partitions: int) -> TopicRecord: ...

    @abc.abstractmethod
    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> TopicRecord:
        """Replace the topic's overrides with ``configs``."""

    @abc.abstractmethod
    def set_broker_configs(self, resource: str, configs: Mapping[str, str]) -> None:
        """Replace the dynamic broker configs of ``resource`` ("" or a node id)."""

    @property
    @abc.abstractmethod
    def user_configs(self) -> Mapping[str, Mapping[str, str]]:
        """Each user's stored config (``/config/users/<user>`` in Kafka: SCRAM credentials
        under the mechanism names)."""

    @abc.abstractmethod
    def set_user_config(self, user: str, configs: Mapping[str, str]) -> None:
        """Replace ``user``'s config durably (empty: remove it)."""

    @abc.abstractmethod
    def allocate_producer_id_block(self, size: int) -> int:
        """Reserve the next ``size`` producer ids (the controller's AllocateProducerIds in
        Kafka); returns the first. No id is ever reserved twice, across restarts too: the
        next free id is durable when this returns. Raises ValueError for a size below 1 and
        UnknownServerError when the ids (INT64) are exhausted."""


class FileMetadataStore(MetadataStore):
    """The single-broker store: one JSON document, rewritten atomically on every change.

    Raises (constructor): ValueError if the document exists but cannot be read (a corrupt
    document is never silently replaced: topics would be lost).
    """

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / METADATA_FILE
        self._topics: dict[str, TopicRecord] = {}
        self._broker_configs: dict[str, dict[str, str]] = {}
        self._user_configs: dict[str, dict[str, str]] = {}
        self._next_producer_id = 0
        # A new broker's cluster starts with every feature at its highest level, as does one
        # whose file predates feature versioning (what it served then: KIP-848 included).
        self._features: dict[str, int] = default_finalized()
        self._features_epoch = 0
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        try:
            doc = json.loads(self.path.read_text("utf-8"))
            if doc.get("version") != _FORMAT_VERSION:
                raise ValueError(f"unknown format version {doc.get('version')!r}")
            for name, t in doc["topics"].items():
                self._topics[name] = TopicRecord(name, uuid.UUID(t["id"]), int(t["partitions"]),
                                                 {str(k): str(v) for k, v in t["configs"].items()})
            self._broker_configs = {
                str(resource): {str(k): str(v) for k, v in configs.items()}
                for resource, configs in doc["broker_configs"].items()}
            self._user_configs = {
                str(user): {str(k): str(v) for k, v in configs.items()}
                for user, configs in doc.get("user_configs", {}).items()}
            next_producer_id = doc.get("next_producer_id", 0)
            if type(next_producer_id) is not int or next_producer_id < 0:
                raise ValueError(f"next_producer_id {next_producer_id!r} is not a producer id")
            self._next_producer_id = next_producer_id
            features = doc.get("finalized_features")
            if features is not None:
                self._features = {str(k): int(v) for k, v in features["levels"].items()}
                self._features_epoch = int(features["epoch"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"{self.path}: cannot read the cluster metadata: {e}") from e

    def _write(self) -> None:
        doc = {
            "version": _FORMAT_VERSION,
            "topics": {t.name: {"id": str(t.topic_id), "partitions": t.partitions,
                                "configs": dict(t.configs)}
                       for t in self._topics.values()},
            "broker_configs": self._broker_configs,
            "user_configs": self._user_configs,
            "next_producer_id": self._next_producer_id,
            "finalized_features": {"levels": self._features, "epoch": self._features_epoch},
        }
        data = json.dumps(doc, indent=1, sort_keys=True).encode()
        write_atomically(self.path, data)

    @property
    def topics(self) -> Mapping[str, TopicRecord]:
        return self._topics

    @property
    def broker_configs(self) -> Mapping[str, Mapping[str, str]]:
        return self._broker_configs

    def _get(self, name: str) -> TopicRecord:
        record = self._topics.get(name)
        if record is None:
            raise UnknownTopicOrPartitionError(f"topic {name!r} does not exist")
        return record

    def _commit(self, change: dict[str, TopicRecord | None]) -> None:
        before = dict(self._topics)
        for name, record in change.items():
            if record is None:
                self._topics.pop(name, None)
            else:
                self._topics[name] = record
        try:
            self._write()
        except BaseException:
            self._topics = before
            raise

    def create_topic(self, name: str, partitions: int, configs: Mapping[str, str],
                     topic_id: uuid.UUID | None = None) -> TopicRecord:
        if name in self._topics:
            raise TopicAlreadyExistsError(f"topic {name!r} already exists")
        if partitions < 1:
            raise InvalidPartitionsError(f"number of partitions must be at least 1, "
                                         f"not {partitions}")
        record = TopicRecord(name, topic_id or uuid.uuid4(), partitions, configs)
        self._commit({name: record})
        return record

    def delete_topic(self, name: str) -> TopicRecord:
        record = self._get(name)
        self._commit({name: None})
        return record

    def set_partition_count(self, name: str, partitions: int) -> TopicRecord:
        record = self._get(name)
        if partitions <= record.partitions:
            raise InvalidPartitionsError(
                f"topic {name!r} has {record.partitions} partitions; the new count must be "
                f"larger, not {partitions}")
        new = attrs.evolve(record, partitions=partitions)
        self._commit({name: new})
        return new

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> TopicRecord:
        new = attrs.evolve(self._get(name), configs=dict(configs))
        self._commit({name: new})
        return new

    def set_broker_configs(self, resource: str, configs: Mapping[str, str]) -> None:
        before = self._broker_configs
        self._broker_configs = {**before, resource: dict(configs)}
        if not configs:
            del self._broker_configs[resource]
        try:
            self._write()
        except BaseException:
            self._broker_configs = before
            raise

    @property
    def user_configs(self) -> Mapping[str, Mapping[str, str]]:
        return self._user_configs

    def set_user_config(self, user: str, configs: Mapping[str, str]) -> None:
        before = self._user_configs
        self._user_configs = {**before, user: dict(configs)}
        if not configs:
            del self._user_configs[user]
        try:
            self._write()
        except BaseException:
            self._user_configs = before
            raise

    @property
    def finalized_features(self) -> tuple[Mapping[str, int], int]:
        """The cluster's finalized feature levels and their epoch (the single broker is its
        own controller: UpdateFeatures changes them here)."""
        return self._features, self._features_epoch

    def set_finalized_features(self, levels: Mapping[str, int]) -> int:
        """Store new levels durably; their epoch (one more than before)."""
        before = self._features, self._features_epoch
        self._features, self._features_epoch = dict(levels), self._features_epoch + 1
        try:
            self._write()
        except BaseException:
            self._features, self._features_epoch = before
            raise
        return self._features_epoch

    def allocate_producer_id_block(self, size: int) -> int:
        if size < 1:
            raise ValueError(f"a producer id block has at least one id, not {size}")
        first = self._next_producer_id
        if first > _MAX_PRODUCER_ID - size + 1:
            raise UnknownServerError(
                f"producer ids are exhausted: no block of {size} after {first - 1}")
        self._next_producer_id = first + size
        try:
            self._write()
        except BaseException:
            self._next_producer_id = first
            raise
        return first


class ZkMetadataStore(MetadataStore):
    """The ZooKeeper-mode store (``zookeeper.connect``): ZooKeeper is the durable truth.

    - ``topics``: the names, ids and partition counts of the ZkMetadataCache (what the
      controller's UpdateMetadata said), with each topic's configs from
      ``/config/topics/<t>``, read when the topic appears in the cache
      (``load_topic_configs``, from the UpdateMetadata handler) and again on every change
      notification (``ConfigChangeListener``).
    - ``broker_configs``: ``/config/brokers/<default>`` (resource "") and this broker's
      ``/config/brokers/<id>``, read at start (``load``) and on change notifications.
    - Mutators write ZooKeeper through ``AdminZkClient``: topic creation writes the config
      and the assignment (the controller elects the leaders: the cache shows the topic only
      after its UpdateMetadata, so ``topics`` does not change here); deletion marks the topic
      for deletion; config changes write the entity's znode and a change notification, and
      update the local copy at once (the notification comes back to this broker too and
      re-reads the same values).
    - ``allocate_producer_id_block`` reserves a block in the cluster-wide
      ``/latest_producer_id_block``.

    The mutators are synchronous, as the ``MetadataStore`` interface is (the AdminManager
    calls them between two awaits): each makes one or a few blocking ZooKeeper round trips on
    the event loop, about a millisecond on a local ensemble; no mutator ever waits for the
    controller (that waiting is the AdminManager's, asynchronous, bounded by the request's
    timeout). Raises what ``AdminZkClient`` raises, and kazoo's errors when ZooKeeper is away.
    """

    def __init__(self, client: KafkaZkClient, cache: ZkMetadataCache, broker_id: int) -> None:
        self.client = client
        self.admin_zk = AdminZkClient(client)
        self.cache = cache
        self.broker_id = broker_id
        self._topic_configs: dict[str, dict[str, str]] = {}
        self._broker_configs: dict[str, dict[str, str]] = {}
        self._user_configs: dict[str, dict[str, str]] = {}
        cache.configs_of = self.topic_configs

    # ===================================================================== reading

    def load(self) -> None:
        """Read the dynamic broker configs (blocking: call from a worker thread)."""
        for resource, entity in (("", DEFAULT_ENTITY), (str(self.broker_id),
                                                        str(self.broker_id))):
            configs = self.admin_zk.fetch_entity_config("brokers", entity)
            if configs:
                self._broker_configs[resource] = configs
        try:
            users = self.client.zk.get_children(USERS_CONFIG_PATH)
        except NoNodeError:
            users = []
        for entity in users:
            configs = self.admin_zk.fetch_entity_config("users", entity)
            if configs:
                self._user_configs[desanitize(entity)] = configs

    @property
    def user_configs(self) -> Mapping[str, Mapping[str, str]]:
        return self._user_configs

    def set_user_configs_local(self, user: str, configs: Mapping[str, str]) -> None:
        """A change notification's re-read of ``/config/users/<user>``."""
        if configs:
            self._user_configs[user] = dict(configs)
        else:
            self._user_configs.pop(user, None)

    def set_user_config(self, user: str, configs: Mapping[str, str]) -> None:
        """Write ``/config/users/<sanitized user>`` and its change notification (Kafka's
        ``AdminZkClient.changeUserOrUserClientIdConfig``)."""
        self.admin_zk.change_configs("users", sanitize(user), configs)
        self.set_user_configs_local(user, configs)

    def topic_configs(self, name: str) -> Mapping[str, str]:
        return self._topic_configs.get(name, {})

    async def load_topic_configs(self, names: Iterable[str]) -> None:
        """Read ``/config/topics/<t>`` of topics that appeared (in a worker thread)."""
        wanted = list(names)
        if not wanted:
            return
        fetch = self.admin_zk.fetch_entity_config
        loaded = await trio.to_thread.run_sync(
            lambda: {name: fetch("topics", name) for name in wanted})
        self._topic_configs.update(loaded)

    def forget_topics(self, names: Iterable[str]) -> None:
        for name in names:
            self._topic_configs.pop(name, None)

    def set_topic_configs_local(self, name: str, configs: Mapping[str, str]) -> None:
        """A change notification's re-read of ``/config/topics/<t>``."""
        self._topic_configs[name] = dict(configs)

    def set_broker_configs_local(self, resource: str, configs: Mapping[str, str]) -> None:
        """A change notification's re-read of ``/config/brokers/<entity>``."""
        if configs:
            self._broker_configs[resource] = dict(configs)
        else:
            self._broker_configs.pop(resource, None)

    @property
    def topics(self) -> Mapping[str, TopicRecord]:
        return self.cache.topics

    @property
    def broker_configs(self) -> Mapping[str, Mapping[str, str]]:
        return self._broker_configs

    # ==================================================================== mutators

    def _get(self, name: str) -> TopicRecord:
        record = self.cache.topic(name)
        if record is None:
            raise UnknownTopicOrPartitionError(f"topic {name!r} does not exist")
        return record

    def create_topic(self, name: str, partitions: int, configs: Mapping[str, str],
                     topic_id: uuid.UUID | None = None, *,
                     assignment: Mapping[int, Sequence[int]] | None = None) -> TopicRecord:
        """Write the topic to ZooKeeper; the record returned is what the cache will show
        once the controller has elected its leaders. Without ``assignment`` every partition
        gets the lowest live broker id (callers pass Kafka's assignment)."""
        if partitions < 1:
            raise InvalidPartitionsError(f"number of partitions must be at least 1, "
                                         f"not {partitions}")
        if assignment is None:
            first = min(self.cache.alive_broker_ids() or {self.broker_id})
            assignment = {p: [first] for p in range(partitions)}
        topic_id = self.admin_zk.create_topic_with_assignment(name, configs, assignment,
                                                              topic_id)
        self._topic_configs[name] = dict(configs)
        return TopicRecord(name, topic_id, len(assignment), configs)

    def delete_topic(self, name: str) -> TopicRecord:
        """Mark the topic for deletion (the controller deletes it). Raises
        TopicAlreadyMarkedForDeletionError when it is marked already."""
        record = self.cache.topic(name)
        self.admin_zk.delete_topic(name)
        return record or TopicRecord(name, uuid.UUID(int=0), 0, {})

    def set_partition_count(self, name: str, partitions: int, *,
                            assignment: Mapping[int, Sequence[int]] | None = None
                            ) -> TopicRecord:
        current = self.admin_zk.get_assignment(name)
        if current is None:
            raise UnknownTopicOrPartitionError(f"topic {name!r} does not exist")
        existing, version = current
        count = len(existing.partitions)
        if partitions <= count:
            raise InvalidPartitionsError(
                f"topic {name!r} has {count} partitions; the new count must be larger, "
                f"not {partitions}")
        if assignment is None:
            first = min(self.cache.alive_broker_ids() or {self.broker_id})
            assignment = {p: [first] for p in range(count, partitions)}
        self.admin_zk.add_partitions(name, existing, version, assignment)
        return TopicRecord(name, existing.topic_id or uuid.UUID(int=0), partitions,
                           self.topic_configs(name))

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> TopicRecord:
        record = self._get(name)
        self.admin_zk.change_configs("topics", name, configs)
        self._topic_configs[name] = dict(configs)
        return attrs.evolve(record, configs=dict(configs))

    def set_broker_configs(self, resource: str, configs: Mapping[str, str]) -> None:
        self.admin_zk.change_configs("brokers", resource or DEFAULT_ENTITY, configs)
        self.set_broker_configs_local(resource, configs)

    def allocate_producer_id_block(self, size: int) -> int:
        if size < 1:
            raise ValueError(f"a producer id block has at least one id, not {size}")
        self.admin_zk.check_connected()
        return self.client.allocate_producer_id_block(self.broker_id, size)
