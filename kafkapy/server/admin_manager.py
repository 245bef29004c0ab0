"""AdminManager: topic creation, deletion and partition growth, and the dynamic configs of
topics and of the broker, with Kafka's validation and Kafka's error messages.

Kafka splits this between the broker's ``ConfigAdminManager`` (it checks broker config
changes before forwarding them) and the controller's ``ReplicationControlManager`` /
``ConfigurationControlManager`` (``createTopics``, ``deleteTopics``, ``createPartitions``,
``incrementalAlterConfigs``, ``legacyAlterConfigs``). A single kafkapy broker is its own
controller, so one class does both halves: validate, make the change durable in the
``MetadataStore``, then apply it to the running broker (lead the new partitions, drop the
deleted ones, hand a changed config to the logs). Used by CreateTopics, DeleteTopics,
CreatePartitions, AlterConfigs, IncrementalAlterConfigs and by Metadata's topic
auto-creation, so they all validate alike.

Theory of operation
-------------------
- Every mutator checks everything first and changes nothing when it raises; with
  ``validate_only`` it stops there. A change is written to the metadata store (durable when
  the call returns) before the running broker applies it, so a crash in between replays it
  at the next start (``KafkaServer.run`` reads the store).
- Errors are raised as ``KafkaError`` with Kafka's codes and messages (the message is the
  text Kafka's ``ApiError`` carries). Callers that answer per topic or per resource catch them
  there; ``api_error`` turns an exception into the (code, message) pair Kafka would send.
- Topic config values are checked by ``LogConfig.resolve`` on top of the broker's settings
  (Kafka's ``LogConfig.validate``); broker config changes by ``BrokerConfig.with_updates``.
  A refused broker change is INVALID_REQUEST, not INVALID_CONFIG, as in Kafka (KAFKA-13609:
  the broker wraps the ConfigException).
- ``topic_config_entries`` is the effective config of a topic with each value's source
  (DescribeConfigs, and CreateTopics v5+ which answers with it): the topic's override, else
  the broker setting it falls back to (dynamic per-broker, dynamic cluster default, static),
  else Kafka's default, with the synonyms in that order (Kafka's ``ConfigHelper``).

Runs on the broker's event loop (the store's write blocks for one small fsync).

ZooKeeper mode (``zookeeper.connect``: the store is a ``ZkMetadataStore``, the cache a
``ZkMetadataCache``), Kafka 2.8-3.x's ``ZkAdminManager``: the mutators write ZooKeeper and
the controller does the rest, so nothing is applied to the running broker here (the
controller's LeaderAndIsr / StopReplica do that); the live brokers are the cache's; new
topics and partitions get Kafka's replica assignment (``replica_assignment``, rack-aware when
every broker has a rack); ``wait_for`` is Kafka's DelayedCreatePartitions /
DelayedDeleteTopics: it returns when the cache (fed by the controller's UpdateMetadata) shows
the change, or at the request's deadline.
"""

from __future__ import annotations

import logging
import random
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs
import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import (
    SETTINGS,
    ConfigEntry,
    ConfigSource,
    ConfigSynonym,
    ConfigType,
    kafka_setting,
)
from kafkapy.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    InvalidTopicError,
    KafkaError,
    TopicAlreadyExistsError,
    TopicDeletionDisabledError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from kafkapy.log.config import TOPIC_CONFIG_SPEC, LogConfig
from kafkapy.server.metadata_cache import ZkMetadataCache
from kafkapy.server.metadata_store import MetadataStore, TopicRecord, ZkMetadataStore
from kafkapy.server.password_encoder import decode_dynamic_passwords, encode_dynamic_passwords
from kafkapy.server.replica_assignment import BrokerMetadata, assign_replicas_to_brokers
from kafkapy.zk.admin_zk_client import TopicAlreadyMarkedForDeletionError

if TYPE_CHECKING:
    from kafkapy.log.log import Log
    from kafkapy.server.kafka_server import KafkaServer

__all__ = [
    "APPEND",
    "CLUSTER_METADATA_TOPIC",
    "DELETE",
    "SET",
    "SUBTRACT",
    "AdminManager",
    "NewTopic",
    "api_error",
    "check_topic_name",
    "parse_node_id",
]

log = logging.getLogger(__name__)

# Kafka has no limit of its own on partitions per topic (Integer.MAX_VALUE); a single broker
# also has to open every log, so keep a sane ceiling.
MAX_PARTITIONS = 100_000

# IncrementalAlterConfigs operations (Kafka's AlterConfigOp.OpType ids).
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}

# KRaft's metadata log: never a user topic (Kafka's Topic.CLUSTER_METADATA_TOPIC_NAME).
CLUSTER_METADATA_TOPIC = "__cluster_metadata"

_MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
_JAVA_INT = re.compile(r"[+-]?[0-9]+")

# The DescribeConfigs type of each topic setting kind of kafkapy.log.config (Kafka's
# LogConfig ConfigDef types).
_TOPIC_CONFIG_TYPES = {"int": ConfigType.INT, "long": ConfigType.LONG,
                       "ratio": ConfigType.DOUBLE, "policy": ConfigType.LIST,
                       "bool": ConfigType.BOOLEAN, "tstype": ConfigType.STRING,
                       "compression": ConfigType.STRING, "msgversion": ConfigType.STRING,
                       "replicas": ConfigType.LIST}
_THROTTLED_REPLICAS_DOC = (
    "A list of replicas for which log replication should be throttled on the leader "
    "(leader.*) or follower (follower.*) side, in the form partitionId:brokerId, or the "
    "wildcard '*' for all replicas of this topic.")


def api_error(exc: BaseException) -> tuple[int, str | None]:
    """The (error code, error message) Kafka sends for ``exc`` (``ApiError.fromThrowable``):
    no message for UNKNOWN_SERVER_ERROR (it could leak internals) nor when the message only
    repeats the error's generic text; any non-Kafka exception is UNKNOWN_SERVER_ERROR."""
    if isinstance(exc, KafkaError) and not isinstance(exc, UnknownServerError):
        return exc.code, None if exc.message == exc.description else exc.message
    return UnknownServerError.code, None


def check_topic_name(name: str) -> None:
    """Kafka's ``Topic.validate``, with its messages.

    Raises:
        InvalidTopicError: empty, "." or "..", longer than 249 characters, or a character
            other than ASCII letters, digits, '.', '_' and '-'.
    """
    if not name:
        raise InvalidTopicError("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopicError('Topic name cannot be "." or ".."')
    if len(name) > _MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopicError(f"Topic name is illegal, it can't be longer than "
                                f"{_MAX_TOPIC_NAME_LENGTH} characters, topic name: {name}")
    if not _LEGAL_TOPIC.fullmatch(name):
        raise InvalidTopicError(f'Topic name "{name}" is illegal, it contains a character '
                                f"other than ASCII alphanumerics, '.', '_' and '-'")


def parse_node_id(name: str) -> int | None:
    """A resource name as Java's ``Integer.parseInt`` reads it; None when it is not one."""
    if not _JAVA_INT.fullmatch(name):
        return None
    value = int(name)
    return value if -(2**31) <= value < 2**31 else None


@attrs.frozen
class NewTopic:
    """What CreateTopics would create: the checked partition count, replication factor and
    config overrides."""

    name: str
    partitions: int
    replication_factor: int
    configs: Mapping[str, str]
    # ZooKeeper mode: the replicas of every partition (the first is the preferred leader).
    assignment: Mapping[int, Sequence[int]] | None = None


class AdminManager:
    """Validated, durable admin operations on one broker (see the module doc)."""

    def __init__(self, server: KafkaServer) -> None:
        self.server = server
        self._metadata_changed = trio.Event()
        self._random = random.Random()

    @property
    def _store(self) -> MetadataStore:
        return self.server.metadata_store

    @property
    def zk_mode(self) -> bool:
        return isinstance(self.server.metadata_store, ZkMetadataStore)

    def _live_brokers(self) -> list[BrokerMetadata]:
        cache = self.server.metadata_cache
        if isinstance(cache, ZkMetadataCache):
            return [BrokerMetadata(b.node_id, b.rack) for b in cache.alive_brokers()]
        return [BrokerMetadata(self.server.node_id)]

    # ========================================================== waiting (ZooKeeper mode)

    def on_metadata_update(self) -> None:
        """The cache changed (UpdateMetadata): wake the waiting topic operations (Kafka's
        ``tryCompleteDelayedTopicOperations``)."""
        self._metadata_changed.set()
        self._metadata_changed = trio.Event()

    async def wait_for(self, done: Callable[[], bool], timeout_ms: int) -> bool:
        """Wait until ``done()`` holds, re-checked after each metadata update, at most
        ``timeout_ms``; whether it holds."""
        with trio.move_on_after(max(timeout_ms, 0) / 1000):
            while not done():
                await self._metadata_changed.wait()
        return done()

    def missing_leaders(self, topic: str, partitions: Iterable[int]) -> int:
        """How many of ``partitions`` the cache shows with no leader (or not at all)."""
        cache = self.server.metadata_cache
        missing = 0
        for p in partitions:
            info = cache.partition_info(TopicPartition(topic, p))
            if info is None or info.leader < 0:
                missing += 1
        return missing

    # =================================================================== topic configs

    def validate_configs(self, configs: Mapping[str, str | None]) -> dict[str, str]:
        """Topic config overrides checked as Kafka does: a null value, an unknown name or a
        bad value is INVALID_CONFIG. Returns them as strings."""
        nulls = [name for name, value in configs.items() if value is None]
        if nulls:
            raise InvalidConfigError("Null value not supported for topic configs: "
                                     + ",".join(nulls))
        out = {name: str(value) for name, value in configs.items()}
        try:
            LogConfig.resolve(out, self.server.broker_log_props())
        except InvalidConfigError:
            raise
        except (ValueError, TypeError) as e:
            raise InvalidConfigError(str(e)) from e
        return out

    def topic_config_entries(self, overrides: Mapping[str, str]) -> list[ConfigEntry]:
        """Every topic setting's effective value, source and synonyms for a topic with
        ``overrides``, sorted by name (Kafka's ``ConfigHelper.createTopicConfigEntry``)."""
        config = self.server.config
        values = LogConfig.resolve(overrides, config.props).to_topic_configs()
        # the throttled replicas have no broker synonym (Kafka's QuotaConfigs)
        broker_names = {name: spec[3][0][0] for name, spec in TOPIC_CONFIG_SPEC.items()
                        if spec[3]}
        brokers = {e.name: e for e in config.describe(broker_names.values())}
        entries = []
        for name in sorted(TOPIC_CONFIG_SPEC):
            value = values[name]
            broker = brokers.get(broker_names.get(name, ""))
            synonyms = list(broker.synonyms) if broker is not None else []
            if name in overrides:
                synonyms.insert(0, ConfigSynonym(name, value, ConfigSource.TOPIC_CONFIG))
            source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
            entries.append(ConfigEntry(
                name=name, value=value, source=source,
                is_default=source == ConfigSource.DEFAULT_CONFIG, read_only=False,
                sensitive=False, synonyms=tuple(synonyms),
                config_type=_TOPIC_CONFIG_TYPES[TOPIC_CONFIG_SPEC[name][1]],
                documentation=SETTINGS[broker.name].doc if broker is not None
                else _THROTTLED_REPLICAS_DOC))
        return entries

    def _existing_topic(self, name: str) -> TopicRecord:
        record = self._store.topics.get(name)
        if record is None:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
        return record

    @staticmethod
    def _check_config_topic_name(name: str) -> None:
        # Kafka's ControllerConfigurationValidator.validateTopicName.
        if not name:
            raise InvalidRequestError("Default topic resources are not allowed.")
        check_topic_name(name)

    def alter_topic_configs(self, name: str, configs: Mapping[str, str],
                            validate_only: bool = False) -> None:
        """AlterConfigs: replace the topic's whole override set with ``configs``."""
        self._check_config_topic_name(name)
        checked = self.validate_configs(configs)
        self._existing_topic(name)
        if not validate_only:
            self._set_topic_configs(name, checked)

    def incremental_alter_topic_configs(self, name: str,
                                        ops: Mapping[str, tuple[int, str | None]],
                                        validate_only: bool = False) -> None:
        """IncrementalAlterConfigs: apply ``{config: (operation, value)}`` to the topic's
        overrides (Kafka's ``ConfigurationControlManager.incrementalAlterConfigResource``)."""
        self._check_config_topic_name(name)
        record = self._store.topics.get(name)
        current = dict(record.configs) if record is not None else {}
        def list_default(key: str, op: int) -> str:
            spec = TOPIC_CONFIG_SPEC.get(key)
            if spec is None or spec[1] not in ("policy", "replicas"):
                raise InvalidConfigError(f"Can't {OP_NAMES[op]} to key {key} because its "
                                         f"type is not LIST.")
            default = spec[2]
            assert isinstance(default, tuple)
            return ",".join(default)

        new = _apply_config_ops(current, ops, list_default)
        checked = self.validate_configs(new)
        self._existing_topic(name)
        if not validate_only and checked != current:
            self._set_topic_configs(name, checked)

    def _set_topic_configs(self, name: str, configs: Mapping[str, str]) -> None:
        self._store.set_topic_configs(name, configs)
        self.server.log_manager.reconfigure_topic(name)
        log.info("Topic %s now has the config overrides %s", name, dict(configs))

    # ================================================================== broker configs

    def _check_broker_resource(self, resource: str) -> None:
        # Kafka's ConfigAdminManager.validateResourceNameIsCurrentNodeId ("" is the
        # cluster-wide default and always allowed).
        if resource == "":
            return
        node = parse_node_id(resource)
        if node is None:
            raise InvalidRequestError(f"Node id must be an integer, but it is: {resource}")
        if node != self.server.node_id:
            raise InvalidRequestError(f"Unexpected broker id, expected "
                                      f"{self.server.node_id}, but received {resource}")

    def alter_broker_configs(self, resource: str, configs: Mapping[str, str],
                             validate_only: bool = False) -> None:
        """AlterConfigs on a broker: replace the dynamic configs of ``resource`` (this node's
        id, or "" for the cluster-wide default) with ``configs``."""
        self._check_broker_resource(resource)
        current = self._stored_broker_configs(resource)
        updates: dict[str, str | None] = {k: None for k in current if k not in configs}
        updates.update(configs)
        self._change_broker_configs(resource, updates, validate_only)

    def incremental_alter_broker_configs(self, resource: str,
                                         ops: Mapping[str, tuple[int, str | None]],
                                         validate_only: bool = False) -> None:
        """IncrementalAlterConfigs on a broker (Kafka's
        ``ConfigAdminManager.prepareIncrementalConfigs``; APPEND/SUBTRACT start from the
        resource's dynamic value, else the setting's default)."""
        self._check_broker_resource(resource)
        current = self._stored_broker_configs(resource)
        def list_default(key: str, op: int) -> str:
            setting = SETTINGS.get(key) or kafka_setting(key)
            if setting is None:
                raise InvalidConfigError(f"Unknown config name: {key}")
            if setting.config_type != ConfigType.LIST:
                verb = "append" if op == APPEND else "subtract"
                raise InvalidConfigError(f"Config value {verb} is not allowed for config "
                                         f"key: {key}")
            return setting.default or ""

        new = _apply_config_ops(current, ops, list_default)
        updates: dict[str, str | None] = {k: None for k in current if k not in new}
        updates.update({k: v for k, v in new.items() if current.get(k) != v})
        self._change_broker_configs(resource, updates, validate_only)
        if not updates and not validate_only and any(".ssl." in f".{k}" for k in ops):
            # Kafka reloads a key store rewritten in place when its setting is altered to
            # the value it already has.
            self.server.reload_ssl()

    def _stored_broker_configs(self, resource: str) -> dict[str, str]:
        """The resource's dynamic configs as stored, passwords decoded (the base that
        AlterConfigs replaces and IncrementalAlterConfigs edits)."""
        return decode_dynamic_passwords(self.server.config,
                                        self._store.broker_configs.get(resource, {}))

    def _change_broker_configs(self, resource: str, updates: Mapping[str, str | None],
                               validate_only: bool) -> None:
        cluster_default = resource == ""
        try:
            config = self.server.config.with_updates(updates, cluster_default=cluster_default)
            self.server.validate_dynamic_configs(config)
        except InvalidConfigError as e:
            # KAFKA-13609: Kafka's broker reports a refused change as INVALID_REQUEST.
            raise InvalidRequestError(e.message) from e
        if not updates:
            return
        layer = config.dynamic_default if cluster_default else config.dynamic
        try:
            stored = encode_dynamic_passwords(config, layer, cluster_default)
        except InvalidConfigError as e:
            raise InvalidRequestError(e.message) from e
        if validate_only:
            return
        self._store.set_broker_configs(resource, stored)
        self.server.apply_dynamic_configs(config)
        log.info("Dynamic broker configs of %s are now %s",
                 "the cluster default" if cluster_default else f"broker {resource}",
                 dict(layer))

    # ========================================================================= topics

    def check_new_topic(self, name: str, num_partitions: int = -1,
                        replication_factor: int = -1,
                        assignments: Sequence[tuple[int, Sequence[int]]] = (),
                        configs: Mapping[str, str | None] | None = None) -> NewTopic:
        """Everything CreateTopics checks before creating, in Kafka's order (name, existence,
        configs, assignment or partition count and replication factor)."""
        check_topic_name(name)
        topics = self._store.topics
        if name in topics:
            raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
        store = self._store
        if isinstance(store, ZkMetadataStore):
            # Written to ZooKeeper but not in the cache yet, or still being deleted.
            store.admin_zk.validate_topic_create(name)
        if "." in name or "_" in name:
            # Kafka's Topic.hasCollisionChars: metric names turn '.' into '_'.
            normalized = name.replace(".", "_")
            for other in topics:
                if other.replace(".", "_") == normalized:
                    raise InvalidTopicError(f"Topic '{name}' collides with existing topic: "
                                            f"{other}")
        checked = self.validate_configs(configs or {})
        cfg = self.server.config
        if assignments:
            if replication_factor != -1:
                raise InvalidRequestError("A manual partition assignment was specified, but "
                                          "replication factor was not set to -1.")
            if num_partitions != -1:
                raise InvalidRequestError("A manual partition assignment was specified, but "
                                          "numPartitions was not set to -1.")
            seen: set[int] = set()
            factor: int | None = None
            for index, replicas in assignments:
                if index in seen:
                    raise InvalidReplicaAssignmentError(
                        f"Found multiple manual partition assignments for partition {index}")
                seen.add(index)
                self._check_manual_assignment(replicas, factor)
                factor = len(replicas)
            if sorted(seen) != list(range(len(seen))):
                raise InvalidReplicaAssignmentError(
                    "partitions should be a consecutive 0-based integer sequence")
            assert factor is not None
            num_partitions, replication_factor = len(seen), factor
            assignment: Mapping[int, Sequence[int]] | None = \
                {index: list(replicas) for index, replicas in sorted(assignments)}
        else:
            if replication_factor < -1 or replication_factor == 0:
                raise InvalidReplicationFactorError("Replication factor must be larger than "
                                                    "0, or -1 to use the default value.")
            if num_partitions < -1 or num_partitions == 0:
                raise InvalidPartitionsError("Number of partitions was set to an invalid "
                                             "non-positive value.")
            if num_partitions == -1:
                num_partitions = cfg.num_partitions
            if replication_factor == -1:
                replication_factor = cfg.default_replication_factor
            assignment = None
            if self.zk_mode:
                if num_partitions <= MAX_PARTITIONS:
                    # Kafka's AdminUtils.assignReplicasToBrokers over the live brokers, with
                    # its replication factor errors.
                    assignment = assign_replicas_to_brokers(
                        self._live_brokers(), num_partitions, replication_factor,
                        rng=self._random)
                live = replication_factor
            else:
                live = 1            # this broker is the whole cluster
            if replication_factor > live:
                raise InvalidReplicationFactorError(
                    f"Unable to replicate the partition {replication_factor} time(s): The "
                    f"target replication factor of {replication_factor} cannot be reached "
                    f"because only {live} broker(s) are registered.")
        if num_partitions > MAX_PARTITIONS:
            raise InvalidPartitionsError(f"Number of partitions {num_partitions} is above "
                                         f"this broker's limit of {MAX_PARTITIONS}")
        return NewTopic(name, num_partitions, replication_factor, checked, assignment)

    def _check_manual_assignment(self, replicas: Sequence[int], factor: int | None) -> None:
        """Kafka's ``ReplicationControlManager.validateManualPartitionAssignment``."""
        if not replicas:
            raise InvalidReplicaAssignmentError("The manual partition assignment includes an "
                                                "empty replica list.")
        previous = None
        live = {b.id for b in self._live_brokers()}
        for broker in sorted(replicas):
            if broker not in live:
                raise InvalidReplicaAssignmentError(
                    f"The manual partition assignment includes broker {broker}, but no such "
                    f"broker is registered.")
            if broker == previous:
                raise InvalidReplicaAssignmentError(
                    f"The manual partition assignment includes the broker {previous} more "
                    f"than once.")
            previous = broker
        if factor is not None and len(replicas) != factor:
            raise InvalidReplicaAssignmentError(
                f"The manual partition assignment includes a partition with {len(replicas)} "
                f"replica(s), but this is not consistent with previous partitions, which "
                f"have {factor} replica(s).")

    def create_topic(self, name: str, num_partitions: int = -1, replication_factor: int = -1,
                     assignments: Sequence[tuple[int, Sequence[int]]] = (),
                     configs: Mapping[str, str | None] | None = None) -> TopicRecord:
        """Validate, persist, and lead every partition of the new topic."""
        new = self.check_new_topic(name, num_partitions, replication_factor, assignments,
                                   configs)
        return self.create_checked_topic(new)

    def create_checked_topic(self, new: NewTopic, topic_id: uuid.UUID | None = None
                             ) -> TopicRecord:
        """Create a topic ``check_new_topic`` accepted (nothing changed in between). In
        ZooKeeper mode: write it to ZooKeeper; the controller elects its leaders."""
        store = self._store
        if isinstance(store, ZkMetadataStore):
            record = store.create_topic(new.name, new.partitions, new.configs, topic_id,
                                        assignment=new.assignment)
            log.info("Created topic %s (id %s) in ZooKeeper with assignment %s", new.name,
                     record.topic_id, dict(new.assignment or {}))
            return record
        record = self._store.create_topic(new.name, new.partitions, new.configs, topic_id)
        for p in range(new.partitions):
            self.server.replica_manager.make_leader(TopicPartition(new.name, p),
                                                    record.topic_id)
        log.info("Created topic %s (id %s) with %d partition(s)%s", new.name, record.topic_id,
                 new.partitions, f" and configs {dict(new.configs)}" if new.configs else "")
        return record

    async def create_logs(self, name: str, partitions: Iterable[int],
                          configs: Mapping[str, str] | None = None
                          ) -> Mapping[TopicPartition, Log]:
        """Single-broker mode: create the logs of ``name``'s new ``partitions`` with the
        file system's work off the event loop (``LogManager.create_logs``), before
        ``create_checked_topic`` / ``create_partitions`` lead them here; ``configs``: those
        of a topic not created yet. If the creation fails, the caller hands the result to
        ``ReplicaManager.drop_unused_logs``. (In ZooKeeper mode the LeaderAndIsr request
        creates them: nothing is created here.)"""
        if self.zk_mode:
            return {}
        return await self.server.log_manager.create_logs(
            (TopicPartition(name, p) for p in partitions), configs)

    def delete_topic(self, name: str) -> TopicRecord:
        """Delete ``name`` and its logs. Raises TOPIC_DELETION_DISABLED when
        ``delete.topic.enable`` is false, UNKNOWN_TOPIC_OR_PARTITION (with the generic
        message, as Kafka's ``new ApiError(UNKNOWN_TOPIC_OR_PARTITION)``) when unknown."""
        if not self.server.config.delete_topic_enable:
            raise TopicDeletionDisabledError("Topic deletion is disabled.")
        record = self._store.topics.get(name)
        store = self._store
        if isinstance(store, ZkMetadataStore):
            # Kafka's ZkAdminManager: mark it; the controller deletes it. A topic marked
            # already is waited for like a new request.
            if record is None and not store.admin_zk.topic_exists(name):
                raise UnknownTopicOrPartitionError(UnknownTopicOrPartitionError.description)
            try:
                record = store.delete_topic(name)
            except TopicAlreadyMarkedForDeletionError:
                pass
            log.info("Marked topic %s for deletion", name)
            return record or TopicRecord(name, uuid.UUID(int=0), 0, {})
        if record is None:
            raise UnknownTopicOrPartitionError(UnknownTopicOrPartitionError.description)
        self._store.delete_topic(name)
        tps = [TopicPartition(name, p) for p in range(record.partitions)]
        epochs = {tp: self.server.coordinator_partitions.leader_epoch(tp) for tp in tps}
        self.server.replica_manager.remove_partitions(tps)
        # An internal topic's coordinator drops the state it loaded from the deleted logs.
        self.server.coordinator_partitions.on_partitions_removed(epochs)
        # Committed offsets of the topic go too: a topic created again under the name starts
        # afresh for every group (Kafka's onPartitionsDeleted).
        self.server.group_coordinator.on_topic_deleted(name)
        log.info("Deleted topic %s (id %s)", name, record.topic_id)
        return record

    def check_partition_count(self, name: str, count: int,
                              assignments: Sequence[Sequence[int]] | None = None) -> TopicRecord:
        """Everything CreatePartitions checks (Kafka's
        ``ReplicationControlManager.createPartitions``); returns the topic."""
        record = self._store.topics.get(name)
        if record is None:
            # Kafka throws a bare UnknownTopicOrPartitionException: no message on the wire.
            raise UnknownTopicOrPartitionError()
        if count == record.partitions:
            raise InvalidPartitionsError(f"Topic already has {record.partitions} "
                                         f"partition(s).")
        if count < record.partitions:
            raise InvalidPartitionsError(f"The topic {name} currently has {record.partitions} "
                                         f"partition(s); {count} would not be an increase.")
        additional = count - record.partitions
        if assignments is not None and len(assignments) != additional:
            raise InvalidReplicaAssignmentError(
                f"Attempted to add {additional} additional partition(s), but only "
                f"{len(assignments)} assignment(s) were specified.")
        if count > MAX_PARTITIONS:
            raise InvalidPartitionsError(f"Number of partitions {count} is above this "
                                         f"broker's limit of {MAX_PARTITIONS}")
        factor = 1          # a single broker's topics have one replica (this broker)
        if self.zk_mode:
            first = self.server.metadata_cache.partition_info(TopicPartition(name, 0))
            factor = len(first.replicas) if first is not None else 1
        for replicas in assignments or ():
            self._check_manual_assignment(replicas, factor)
        return record

    def _new_partition_assignment(self, record: TopicRecord, count: int,
                                  assignments: Sequence[Sequence[int]] | None
                                  ) -> dict[int, list[int]]:
        """Replicas of the new partitions (Kafka's ``AdminZkClient.createPartitions``): the
        manual assignment, else Kafka's assignment continuing the existing pattern from the
        broker of partition 0's first replica."""
        if assignments is not None:
            return {record.partitions + i: list(r) for i, r in enumerate(assignments)}
        brokers = sorted(self._live_brokers(), key=lambda b: b.id)
        first = self.server.metadata_cache.partition_info(TopicPartition(record.name, 0))
        replicas = first.replicas if first is not None and first.replicas else \
            (brokers[0].id,)
        start = next((i for i, b in enumerate(brokers) if b.id >= replicas[0]), 0)
        return assign_replicas_to_brokers(brokers, count - record.partitions, len(replicas),
                                          fixed_start_index=start,
                                          start_partition_id=record.partitions)

    def create_partitions(self, name: str, count: int,
                          assignments: Sequence[Sequence[int]] | None = None) -> TopicRecord:
        old = self.check_partition_count(name, count, assignments)
        store = self._store
        if isinstance(store, ZkMetadataStore):
            new = self._new_partition_assignment(old, count, assignments)
            record = store.set_partition_count(name, count, assignment=new)
            log.info("Topic %s gets partitions %s in ZooKeeper", name, new)
            return record
        record = self._store.set_partition_count(name, count)
        for p in range(old.partitions, count):
            self.server.replica_manager.make_leader(TopicPartition(name, p), record.topic_id)
        log.info("Topic %s now has %d partitions (was %d)", name, count, old.partitions)
        return record


def _apply_config_ops(current: Mapping[str, str], ops: Mapping[str, tuple[int, str | None]],
                      list_default: Callable[[str, int], str]) -> dict[str, str]:
    """IncrementalAlterConfigs' SET / DELETE / APPEND / SUBTRACT on a copy of ``current``.
    APPEND and SUBTRACT work on comma-separated lists starting from the current value, else
    ``list_default(key, op)``, which raises for a key that is not a list."""
    new = dict(current)
    for key, (op, value) in ops.items():
        if op == SET:
            assert value is not None
            new[key] = value
        elif op == DELETE:
            new.pop(key, None)
        elif op in (APPEND, SUBTRACT):
            base = new.get(key)
            if base is None:
                base = list_default(key, op)
            else:
                list_default(key, op)        # the type check, whatever the current value
            assert value is not None
            parts = [p for p in base.split(",") if p]
            items = [v for v in value.split(",") if v]
            if op == APPEND:
                parts += [v for v in items if v not in parts]
            else:
                parts = [v for v in parts if v not in items]
            new[key] = ",".join(parts)
        else:
            raise InvalidRequestError(f"Unknown operations type {op}")
    return new
