"""UpdateMetadata (6): the controller's view of the cluster (live brokers, every partition's
leader, replicas and ISR), which feeds this broker's metadata cache (ZooKeeper mode).

Kafka's ``KafkaApis.handleUpdateMetadataRequest`` with ``ReplicaManager.maybeUpdateMetadataCache``
(v0-8; the controller sends v7):

- a broker epoch older than this broker's registration (``healthcheck.broker_epoch``; -1
  means "not checked", as Kafka) is STALE_BROKER_EPOCH: the request was meant for an earlier
  incarnation of this broker;
- a controller epoch older than the newest this broker has seen is STALE_CONTROLLER_EPOCH (a
  deposed controller);
- otherwise the ZkMetadataCache takes the update; topics that appear get their configs read
  from ``/config/topics`` (in a worker thread) before the answer; the group coordinator drops
  the offsets of topics that were deleted (Kafka's ``onPartitionsDeleted``); topic operations
  waiting for the cache (CreateTopics, DeleteTopics, CreatePartitions) are woken.

Served only by a broker with ``zookeeper.connect`` (see ``kafka_apis.CLUSTER_HANDLER_MODULES``).

With an authorizer, UpdateMetadata needs CLUSTER_ACTION on the cluster (else
CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

import logging

from kafkapy.errors import StaleBrokerEpochError, StaleControllerEpochError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import UpdateMetadataRequest, UpdateMetadataResponse
from kafkapy.security.authorizer.acl import AclOperation
from kafkapy.server.auth_helper import authorize_cluster_operation
from kafkapy.server.metadata_cache import ZkMetadataCache
from kafkapy.server.metadata_store import ZkMetadataStore
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "handle_update_metadata"]

log = logging.getLogger(__name__)


async def handle_update_metadata(
        context: RequestContext[UpdateMetadataRequest]) -> UpdateMetadataResponse:
    authorize_cluster_operation(context, AclOperation.CLUSTER_ACTION)
    body = context.body
    server = context.server
    cache = server.metadata_cache
    healthcheck = server.healthcheck
    if not isinstance(cache, ZkMetadataCache) or healthcheck is None:
        raise StaleControllerEpochError("this broker is not part of a ZooKeeper cluster")
    if body.broker_epoch != -1 and body.broker_epoch < healthcheck.broker_epoch:
        log.info("Received UpdateMetadata with broker epoch %d older than the current %d",
                 body.broker_epoch, healthcheck.broker_epoch)
        return UpdateMetadataResponse(error_code=StaleBrokerEpochError.code)
    # One controller epoch per broker, kept by the ReplicaManager and raised by every
    # request of the controller (Kafka's ReplicaManager.controllerEpoch).
    rm = server.replica_manager
    known_epoch = rm.controller_epoch
    if body.controller_epoch < known_epoch:
        log.info("Ignoring UpdateMetadata from controller %d with epoch %d: the latest known "
                 "controller epoch is %d", body.controller_id, body.controller_epoch,
                 known_epoch)
        return UpdateMetadataResponse(error_code=StaleControllerEpochError.code)
    rm.controller_epoch = body.controller_epoch
    before = set(cache.topics)
    deleted = cache.update(body, context.api_version)
    after = set(cache.topics)
    store = server.metadata_store
    if isinstance(store, ZkMetadataStore):
        appeared = sorted(after - before)
        try:
            await store.load_topic_configs(appeared)
        except Exception as e:
            # ZooKeeper away: the topics keep the broker defaults until their next config
            # change notification.
            log.warning("Could not read the configs of topics %s: %s", appeared, e)
        store.forget_topics(before - after)
        for topic in appeared:
            # Logs the controller's LeaderAndIsr created before this UpdateMetadata (Kafka's
            # controller sends LeaderAndIsr first) get the topic's configs now.
            if store.topic_configs(topic):
                server.log_manager.reconfigure_topic(topic)
    for topic in sorted({tp.topic for tp in deleted} - after):
        server.group_coordinator.on_topic_deleted(topic)
    server.admin.on_metadata_update()
    return UpdateMetadataResponse(error_code=0)


HANDLERS: dict[int, Handler] = {ApiKey.UPDATE_METADATA: handle_update_metadata}
