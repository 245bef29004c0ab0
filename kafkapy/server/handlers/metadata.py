"""Metadata (API key 3): brokers, cluster id, controller, and topics with their partitions.

Kafka's ``KafkaApis.handleTopicMetadataRequest`` for v0-12:

- Topics: null (v1+) or an empty list in v0 means every topic; otherwise the named ones, in
  request order, duplicates answered once. From v12 a topic may be asked for by id instead
  (name null); an id kafkapy does not know, or any id before v12, gets UNKNOWN_TOPIC_ID.
- A missing topic is auto-created when ``auto.create.topics.enable`` and the request allows it
  (always before v4; ``AllowAutoTopicCreation`` from v4), with ``num.partitions`` and
  ``default.replication.factor``; creation is synchronous here, so the answer already lists
  the topic's partitions (Kafka answers LEADER_NOT_AVAILABLE first and the client retries).
  An illegal name is INVALID_TOPIC_EXCEPTION; otherwise UNKNOWN_TOPIC_OR_PARTITION.
- Brokers: this broker's advertised endpoint on the listener the request came in on.
- ZooKeeper mode (Kafka's ``ZkMetadataCache.getTopicMetadata``): topics, partitions and
  brokers are the controller's last UpdateMetadata, so every broker answers alike;
  ControllerId is the cache's (-1 when unknown). Per partition: LEADER_NOT_AVAILABLE with
  leader -1 when the leader is -1 or not alive (LISTENER_NOT_FOUND from v6 when it is alive
  but has no endpoint on the request's listener); in v0 only, replicas / ISR members with no
  live endpoint are left out and the partition is REPLICA_NOT_AVAILABLE. Auto-creation
  writes ZooKeeper (AdminZkClient, Kafka's assignment) from this broker and answers the
  topic LEADER_NOT_AVAILABLE until the controller has elected its leaders; a replication
  factor above the live brokers is INVALID_REPLICATION_FACTOR (Kafka's
  AutoTopicCreationManager).
- Authorization (with ``authorizer.class.name``, Kafka's rules): a listing of every topic
  shows only the topics the principal may DESCRIBE; a named topic (or id) it may not
  describe is TOPIC_AUTHORIZATION_FAILED with no partitions, and is never auto-created;
  auto-creation also needs CREATE on the cluster or on the topic (else
  TOPIC_AUTHORIZATION_FAILED).
- Authorized operations (v8+): when asked, the bit sets of the operations the principal may
  do on each topic / the cluster (without an authorizer: Kafka's "all topic operations" /
  "all cluster operations"); otherwise INT32_MIN ("not requested").
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidReplicationFactorError,
    InvalidTopicError,
    KafkaError,
    LeaderNotAvailableError,
    ListenerNotFoundError,
    ReplicaNotAvailableError,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
    UnknownTopicIdError,
    UnknownTopicOrPartitionError,
)
from kafkapy.log.log_manager import validate_topic_name
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafkapy.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkapy.server.auth_helper import authorize, authorized_operations
from kafkapy.server.handlers.cluster import CLUSTER_OPERATIONS
from kafkapy.server.metadata_cache import ZkMetadataCache
from kafkapy.server.request_context import Handler, RequestContext

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer

__all__ = ["HANDLERS", "handle_metadata"]

log = logging.getLogger(__name__)

_ZERO_UUID = "00000000-0000-0000-0000-000000000000"

NOT_REQUESTED = -2147483648
# AclOperation codes: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
# DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11 (the cluster's set is DescribeCluster's).
TOPIC_OPERATION_CODES = (3, 4, 5, 6, 7, 8, 10, 11)
TOPIC_OPERATIONS = sum(1 << op for op in TOPIC_OPERATION_CODES)
_CLUSTER_OPERATION_CODES = (5, 7, 8, 9, 10, 11, 12)

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def topic_metadata(context: RequestContext[MetadataRequest], name: str,
                   error: KafkaError | None = None,
                   include_authorized: bool = False) -> MetadataResponseTopic:
    """One MetadataResponseTopic for ``name`` (an existing topic unless ``error``)."""
    server = context.server
    record = server.metadata_store.topics.get(name)
    if error is not None or record is None:
        code = (error or UnknownTopicOrPartitionError()).code
        return MetadataResponseTopic(error_code=code, name=name,
                                     is_internal=name in INTERNAL_TOPICS)
    cache = server.metadata_cache
    if isinstance(cache, ZkMetadataCache):
        partitions = _zk_partitions(context, cache, name)
    else:
        partitions = _local_partitions(context, name, record.partitions)
    return MetadataResponseTopic(
        error_code=0, name=name, topic_id=record.topic_id, is_internal=name in INTERNAL_TOPICS,
        partitions=partitions,
        topic_authorized_operations=authorized_operations(
            context, ResourceType.TOPIC, name, TOPIC_OPERATION_CODES, TOPIC_OPERATIONS)
        if include_authorized else NOT_REQUESTED)


def _local_partitions(context: RequestContext[MetadataRequest], name: str,
                      count: int) -> list[MetadataResponsePartition]:
    """A single broker's partitions: it leads every one it hosts."""
    server = context.server
    partitions = []
    for p in range(count):
        part = server.replica_manager.partitions.get(TopicPartition(name, p))
        if part is None:       # being created or deleted right now
            partitions.append(MetadataResponsePartition(
                error_code=5, partition_index=p, leader_id=-1, leader_epoch=-1,
                replica_nodes=[server.node_id], isr_nodes=[], offline_replicas=[]))
            continue
        partitions.append(MetadataResponsePartition(
            error_code=0, partition_index=p, leader_id=part.leader_id,
            leader_epoch=part.leader_epoch, replica_nodes=list(part.replicas),
            isr_nodes=list(part.isr), offline_replicas=[]))
    return partitions


def _zk_partitions(context: RequestContext[MetadataRequest], cache: ZkMetadataCache,
                   name: str) -> list[MetadataResponsePartition]:
    """Kafka's ``ZkMetadataCache.getPartitionMetadata``."""
    listener = context.request.listener_name
    version = context.api_version
    out = []
    for p, state in sorted(cache.partitions_of(name).items()):
        replicas, isr = list(state.replicas), list(state.isr)
        if version == 0:
            # errorUnavailableEndpoints: only replicas reachable on this listener.
            replicas = [r for r in replicas if cache.broker_endpoint(r, listener) is not None]
            isr = [r for r in isr if cache.broker_endpoint(r, listener) is not None]
        error = 0
        leader = state.leader
        if cache.broker_endpoint(leader, listener) is None:
            alive = leader in cache.alive_broker_ids()
            error = (ListenerNotFoundError if alive and version >= 6
                     else LeaderNotAvailableError).code
            leader = -1
        elif len(replicas) < len(state.replicas) or len(isr) < len(state.isr):
            error = ReplicaNotAvailableError.code
        out.append(MetadataResponsePartition(
            error_code=error, partition_index=p, leader_id=leader,
            leader_epoch=state.leader_epoch, replica_nodes=replicas, isr_nodes=isr,
            offline_replicas=list(state.offline_replicas)))
    return out


def _name_of(server: KafkaServer, topic_id: uuid.UUID) -> str | None:
    # A scan of the topics: Metadata by id is asked for a few ids at a time.
    for record in server.metadata_store.topics.values():
        if record.topic_id == topic_id:
            return str(record.name)
    return None


async def handle_metadata(context: RequestContext[MetadataRequest]) -> MetadataResponse:
    body = context.body
    version = context.api_version
    server = context.server
    cache = server.metadata_cache
    include_topic_ops = version >= 8 and body.include_topic_authorized_operations
    topics: list[MetadataResponseTopic] = []
    secured = server.authorizer is not None

    def may_describe(name: str) -> bool:
        return not secured or authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, name)

    if body.topics is None or (version == 0 and not body.topics):
        for existing in sorted(cache.topics):
            if not may_describe(existing):
                continue
            topics.append(topic_metadata(context, existing,
                                         include_authorized=include_topic_ops))
    else:
        allow_auto = version < 4 or body.allow_auto_topic_creation
        seen: set[str] = set()
        for requested in body.topics:
            name = requested.name
            if name is None:
                # Asked by topic id: resolved from v12, as Kafka (KIP-516; librdkafka's
                # KIP-848 consumer looks up the topic ids of its assignment so), never
                # auto-created; an unknown id is UNKNOWN_TOPIC_ID.
                by_id = _name_of(server, requested.topic_id) if version >= 12 else None
                if by_id is None:
                    topics.append(MetadataResponseTopic(
                        error_code=UnknownTopicIdError.code, name=None,
                        topic_id=requested.topic_id))
                elif not may_describe(by_id):
                    topics.append(MetadataResponseTopic(
                        error_code=TopicAuthorizationFailedError.code, name=None,
                        topic_id=requested.topic_id))
                elif by_id not in seen:
                    seen.add(by_id)
                    topics.append(topic_metadata(context, by_id,
                                                 include_authorized=include_topic_ops))
                continue
            if name in seen:
                continue
            seen.add(name)
            if not may_describe(name):
                topics.append(topic_metadata(context, name, TopicAuthorizationFailedError()))
                continue
            if cache.topic(name) is None:
                error = _auto_create(context, name, allow_auto)
                if error is not None:
                    topics.append(topic_metadata(context, name, error))
                    continue
            topics.append(topic_metadata(context, name, include_authorized=include_topic_ops))
    brokers = [MetadataResponseBroker(node_id=node, host=host, port=port, rack=rack)
               for node, host, port, rack in cache.brokers(context.request.listener_name)]
    include_cluster_ops = 8 <= version <= 10 and body.include_cluster_authorized_operations
    return MetadataResponse(
        throttle_time_ms=0, brokers=brokers, cluster_id=cache.cluster_id,
        controller_id=-1 if cache.controller_id is None else cache.controller_id,
        topics=topics,
        cluster_authorized_operations=authorized_operations(
            context, ResourceType.CLUSTER, CLUSTER_NAME, _CLUSTER_OPERATION_CODES,
            CLUSTER_OPERATIONS) if include_cluster_ops else NOT_REQUESTED)


def _auto_create(context: RequestContext[MetadataRequest], name: str,
                 allowed: bool) -> KafkaError | None:
    """Create ``name`` if auto-creation applies; the error to answer with otherwise."""
    try:
        validate_topic_name(name)
    except InvalidTopicError as e:
        return e
    server = context.server
    if not (allowed and server.config.auto_create_topics_enable) or name in INTERNAL_TOPICS:
        return UnknownTopicOrPartitionError()
    if server.authorizer is not None and not (
            authorize(context, AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
            or authorize(context, AclOperation.CREATE, ResourceType.TOPIC, name)):
        return TopicAuthorizationFailedError()
    if server.admin.zk_mode:
        return _auto_create_zk(context, name)
    try:
        server.admin.create_topic(name)
    except KafkaError as e:
        if server.metadata_store.topics.get(name) is not None:
            return None     # created meanwhile
        return e
    return None


def _auto_create_zk(context: RequestContext[MetadataRequest], name: str) -> KafkaError:
    """Kafka's ZooKeeper-mode AutoTopicCreationManager: write the topic to ZooKeeper from
    this broker; LEADER_NOT_AVAILABLE until the controller's UpdateMetadata shows it."""
    server = context.server
    cfg = server.config
    live = len(server.metadata_cache.alive_broker_ids())
    if live < cfg.default_replication_factor:
        log.error("Number of alive brokers '%d' does not meet the required replication "
                  "factor '%d' for auto creation of topic '%s' which is configured by "
                  "default.replication.factor. This error can be ignored if the cluster is "
                  "starting up and not all brokers are up yet.", live,
                  cfg.default_replication_factor, name)
        return InvalidReplicationFactorError()
    try:
        server.admin.create_topic(name)
    except TopicAlreadyExistsError:
        pass
    except KafkaError as e:
        return e
    return LeaderNotAvailableError()


HANDLERS: dict[int, Handler] = {ApiKey.METADATA: handle_metadata}
