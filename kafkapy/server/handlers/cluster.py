"""The cluster and its storage: DescribeCluster (60), DescribeLogDirs (35) and
AlterReplicaLogDirs (34).

- DescribeCluster v0-1 (Kafka's ``KafkaApis.handleDescribeCluster`` with
  ``AuthHelper.computeDescribeClusterResponse``): the cluster id, the controller (a broker
  answers with a live broker's id: here itself), this broker with its advertised endpoint on
  the listener the request came in on (in ZooKeeper mode: the controller and every live
  broker from the metadata cache, -1 when no controller is known), and, when asked, the
  cluster authorized operations: the operations Kafka supports on the cluster resource that
  the principal may do (all of them without an authorizer).
  ``EndpointType`` (v1) must be 1 (brokers): 2 (controllers) is MISMATCHED_ENDPOINT_TYPE, any
  other value UNSUPPORTED_ENDPOINT_TYPE (INVALID_REQUEST in v0), with Kafka's messages.
- DescribeLogDirs v1-4 (Kafka's ``ReplicaManager.describeLogDirs``): one result per log dir
  (its absolute path), listing the requested partitions it holds (``Topics`` null: all) with
  their size on disk (the bytes of their segments' .log files), an offset lag of
  max(0, high watermark - log end offset), which is 0 on a single broker, and
  ``IsFutureKey`` false; a future log (a replica being moved into the dir by
  AlterReplicaLogDirs) is listed too, with ``IsFutureKey`` true and an offset lag of the
  current log's end offset less its own. Topics with no listed partition are left out. v4
  adds the file system's total and usable bytes (``os.statvfs``, as Java's FileStore). A dir
  that is offline or cannot be examined is KAFKA_STORAGE_ERROR.
- AlterReplicaLogDirs v0-2 (Kafka's ``KafkaApis.handleAlterReplicaLogDirsRequest``): the
  partitions of every dir entry (a partition named under two dirs goes to the last), each
  moved by ``ReplicaManager.alter_replica_log_dirs``; the answer has one result per topic.
  With an authorizer, DescribeLogDirs needs DESCRIBE and AlterReplicaLogDirs ALTER on the
  cluster (else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidRequestError,
    KafkaError,
    KafkaStorageError,
    MismatchedEndpointTypeError,
    UnsupportedEndpointTypeError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterReplicaLogDirPartitionResult,
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
    AlterReplicaLogDirTopicResult,
    DescribeClusterBroker,
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeLogDirsPartition,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)
from kafkapy.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkapy.server.auth_helper import authorize_cluster_operation, authorized_operations
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["CLUSTER_OPERATIONS", "HANDLERS", "handle_alter_replica_log_dirs",
           "handle_describe_cluster", "handle_describe_log_dirs"]

log = logging.getLogger(__name__)



NOT_REQUESTED = -2147483648
# Kafka's AclEntry.supportedOperations(CLUSTER) as an AclOperation bit set: CREATE 5,
# ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
# IDEMPOTENT_WRITE 12. With no authorizer, all of them are allowed.
_CLUSTER_OPERATION_CODES = (5, 7, 8, 9, 10, 11, 12)
CLUSTER_OPERATIONS = sum(1 << op for op in _CLUSTER_OPERATION_CODES)

# Kafka's EndpointType ids and names.
BROKER_ENDPOINTS, CONTROLLER_ENDPOINTS = 1, 2
_ENDPOINT_NAMES = {BROKER_ENDPOINTS: "BROKER", CONTROLLER_ENDPOINTS: "CONTROLLER"}


async def handle_describe_cluster(
        context: RequestContext[DescribeClusterRequest]) -> DescribeClusterResponse:
    body = context.body
    version = context.api_version
    requested = body.endpoint_type if version >= 1 else BROKER_ENDPOINTS
    error: KafkaError | None = None
    if requested not in _ENDPOINT_NAMES:
        error = (InvalidRequestError if version == 0 else UnsupportedEndpointTypeError)(
            f"Unsupported endpoint type {requested}")
    elif requested != BROKER_ENDPOINTS:
        error = (InvalidRequestError if version == 0 else MismatchedEndpointTypeError)(
            f"The request was sent to an endpoint of type BROKER, but we wanted an endpoint "
            f"of type {_ENDPOINT_NAMES[requested]}")
    if error is not None:
        return DescribeClusterResponse(throttle_time_ms=0, error_code=error.code,
                                       error_message=error.message)
    cache = context.server.metadata_cache
    brokers = [DescribeClusterBroker(broker_id=node, host=host, port=port, rack=rack)
               for node, host, port, rack in cache.brokers(context.request.listener_name)]
    return DescribeClusterResponse(
        throttle_time_ms=0, error_code=0, error_message=None,
        endpoint_type=BROKER_ENDPOINTS, cluster_id=cache.cluster_id,
        controller_id=-1 if cache.controller_id is None else cache.controller_id,
        brokers=brokers,
        cluster_authorized_operations=authorized_operations(
            context, ResourceType.CLUSTER, CLUSTER_NAME, _CLUSTER_OPERATION_CODES,
            CLUSTER_OPERATIONS)
        if body.include_cluster_authorized_operations else NOT_REQUESTED)


def _file_store(directory: Path) -> tuple[int, int]:
    """(total bytes, usable bytes) of the file system holding ``directory`` (Java's
    ``FileStore.getTotalSpace`` / ``getUsableSpace``)."""
    st = os.statvfs(directory)
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


async def handle_describe_log_dirs(
        context: RequestContext[DescribeLogDirsRequest]) -> DescribeLogDirsResponse:
    authorize_cluster_operation(context, AclOperation.DESCRIBE)
    body = context.body
    server = context.server
    log_manager = server.log_manager
    wanted: set[TopicPartition] | None = None
    if body.topics is not None:
        wanted = {TopicPartition(t.topic, p) for t in body.topics for p in t.partitions}
    dirs = list(dict.fromkeys(log_manager.log_dirs))
    # statvfs can stall on a sick disk: keep it off the event loop.
    spaces = await trio.to_thread.run_sync(_spaces, dirs)
    results = []
    for d in dirs:
        path = os.path.abspath(d)
        space = spaces[d]
        if not isinstance(space, OSError) and not log_manager.is_log_dir_online(d):
            space = OSError(f"Log directory {path} is offline")
        if isinstance(space, OSError):
            log.warning("Unable to describe replica dirs for %s: %s", path, space)
            results.append(DescribeLogDirsResult(error_code=KafkaStorageError.code,
                                                 log_dir=path, topics=[]))
            continue
        by_topic: dict[str, list[DescribeLogDirsPartition]] = {}
        for tp, log_ in sorted(log_manager.logs.items()):
            if log_manager.dir_of(tp) != d or (wanted is not None and tp not in wanted):
                continue
            lag = max(log_.high_watermark - log_.log_end_offset, 0)
            by_topic.setdefault(tp.topic, []).append(DescribeLogDirsPartition(
                partition_index=tp.partition, partition_size=log_.size, offset_lag=lag,
                is_future_key=False))
        for tp, future in sorted(log_manager.future_logs.items()):
            if log_manager.future_dir_of(tp) != d or (wanted is not None and tp not in wanted):
                continue
            current = log_manager.get_log(tp)
            # Kafka's getLogEndOffsetLag for a future log: how far its copy is behind.
            lag = -1 if current is None else current.log_end_offset - future.log_end_offset
            by_topic.setdefault(tp.topic, []).append(DescribeLogDirsPartition(
                partition_index=tp.partition, partition_size=future.size, offset_lag=lag,
                is_future_key=True))
        total, usable = space
        results.append(DescribeLogDirsResult(
            error_code=0, log_dir=path,
            topics=[DescribeLogDirsTopic(name=name, partitions=parts)
                    for name, parts in by_topic.items()],
            total_bytes=total, usable_bytes=usable))
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=0, results=results)


def _spaces(dirs: list[Path]) -> dict[Path, tuple[int, int] | OSError]:
    out: dict[Path, tuple[int, int] | OSError] = {}
    for d in dirs:
        try:
            out[d] = _file_store(d)
        except OSError as e:
            out[d] = e
    return out


async def handle_alter_replica_log_dirs(
        context: RequestContext[AlterReplicaLogDirsRequest]) -> AlterReplicaLogDirsResponse:
    authorize_cluster_operation(context, AclOperation.ALTER)
    dirs: dict[TopicPartition, str] = {}
    for d in context.body.dirs:
        for topic in d.topics:
            for p in topic.partitions:
                dirs[TopicPartition(topic.name, p)] = d.path
    errors = context.server.replica_manager.alter_replica_log_dirs(dirs)
    by_topic: dict[str, list[AlterReplicaLogDirPartitionResult]] = {}
    for tp, code in errors.items():
        by_topic.setdefault(tp.topic, []).append(AlterReplicaLogDirPartitionResult(
            partition_index=tp.partition, error_code=code))
    return AlterReplicaLogDirsResponse(throttle_time_ms=0, results=[
        AlterReplicaLogDirTopicResult(topic_name=topic, partitions=parts)
        for topic, parts in by_topic.items()])


HANDLERS: dict[int, Handler] = {
    ApiKey.ALTER_REPLICA_LOG_DIRS: handle_alter_replica_log_dirs,
    ApiKey.DESCRIBE_LOG_DIRS: handle_describe_log_dirs,
    ApiKey.DESCRIBE_CLUSTER: handle_describe_cluster,
}
