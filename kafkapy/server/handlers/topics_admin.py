"""Topic administration: CreateTopics (19), DeleteTopics (20), CreatePartitions (37) and
DeleteRecords (21).

What Kafka's broker forwards to its controller (``ControllerApis.createTopics`` /
``deleteTopics`` / ``createPartitions`` with ``ReplicationControlManager``), answered here by
the ``AdminManager``, which is this single broker's controller; DeleteRecords is Kafka's
``ReplicaManager.deleteRecords``. Every operation completes before the answer is sent, so the
requests' ``TimeoutMs`` never runs out (Kafka answers REQUEST_TIMED_OUT only when its
controller misses that deadline).

- CreateTopics v2-7 (with ``authorizer.class.name``: CREATE on the cluster, else on the
  topic, or TOPIC_AUTHORIZATION_FAILED "Authorization failed."; counts and configs only with
  DESCRIBE_CONFIGS on the topic, else TopicConfigErrorCode TOPIC_AUTHORIZATION_FAILED): a
  name given twice is INVALID_REQUEST "Duplicate topic name.", and
  ``__cluster_metadata`` INVALID_REQUEST "Creation of internal topic __cluster_metadata is
  prohibited." (both answered after the others, as Kafka does); each other topic is
  validated alone (name, existence, configs, then the manual assignment or the partition
  count and replication factor, -1 meaning the broker default) and created unless
  ``validateOnly``. v5+ successes carry the partition count, replication factor and the
  topic's effective configs with their sources, v7 the topic id (for a validate-only request
  a fresh id, as Kafka's controller makes one up before discarding the records).
- DeleteTopics v1-5, by name: ``delete.topic.enable=false`` fails the whole request
  (INVALID_REQUEST before v3, TOPIC_DELETION_DISABLED from v3); a duplicate name is
  INVALID_REQUEST "Duplicate topic name."; an unknown one UNKNOWN_TOPIC_OR_PARTITION with the
  generic message (v5 carries messages); with an authorizer, DELETE on the topic (else
  TOPIC_AUTHORIZATION_FAILED "Authorization failed.").
- CreatePartitions v0-3: duplicates as for CreateTopics; with an authorizer, ALTER on the
  topic (else TOPIC_AUTHORIZATION_FAILED); per topic the new count must grow
  (INVALID_PARTITIONS), a manual assignment must name this broker once per new partition
  (INVALID_REPLICA_ASSIGNMENT); ``validateOnly`` checks without creating.
- DeleteRecords v0-2 (with an authorizer: DELETE on the topic, else TOPIC_AUTHORIZATION_FAILED):
  per partition, the log start offset moves up to the offset (-1: the
  high watermark); UNKNOWN_TOPIC_OR_PARTITION for a partition this broker does not host,
  OFFSET_OUT_OF_RANGE below 0 or above the high watermark, POLICY_VIOLATION when the topic's
  cleanup.policy has no "delete" (Kafka's ``Partition.deleteRecordsOnLeader``). A partition
  named twice is answered once, with the last offset (Kafka builds a map). The new start is
  durable through the log-start-offset checkpoint, written periodically and at shutdown, as
  in Kafka.

ZooKeeper mode (Kafka 2.8-3.x's ZooKeeper brokers, ``KafkaApis`` + ``ZkAdminManager``):
CreateTopics, DeleteTopics and CreatePartitions are accepted only by the active controller
(``server.controller.active``); any other broker answers NOT_CONTROLLER for every topic and
the client re-sends to Metadata's ControllerId. The change is written to ZooKeeper, then the
answer waits, at most ``TimeoutMs``, until the metadata cache (the controller's
UpdateMetadata) shows it: every new partition with a leader (DelayedCreatePartitions) or the
topic gone (DelayedDeleteTopics); what is still missing then is REQUEST_TIMED_OUT, and so is
everything when ``TimeoutMs`` <= 0. The wait is ``Parked``: it holds no request-handler slot,
as Kafka's purgatory holds no handler thread (the UpdateMetadata it waits for needs a slot:
held, ``num.io.threads`` such requests starved the broker until each timed out).
``delete.topic.enable=false`` is TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3) per
topic, as Kafka's ZooKeeper broker answers.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidRequestError,
    KafkaError,
    NotControllerError,
    OffsetOutOfRangeError,
    PolicyViolationError,
    RequestTimedOutError,
    ThrottlingQuotaExceededError,
    TopicAuthorizationFailedError,
    TopicDeletionDisabledError,
    UnknownTopicOrPartitionError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeletableTopicResult,
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopicResult,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)
from kafkapy.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkapy.server.admin_manager import CLUSTER_METADATA_TOPIC, api_error
from kafkapy.server.auth_helper import authorize, filter_by_authorized
from kafkapy.server.controller_mutation_quota import ControllerMutationQuota
from kafkapy.server.request_context import Handler, Parked, RequestContext

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer

__all__ = ["HANDLERS", "handle_create_partitions", "handle_create_topics",
           "handle_delete_records", "handle_delete_topics"]

log = logging.getLogger(__name__)



_DUPLICATE = "Duplicate topic name."
HIGH_WATERMARK = -1


def _not_controller(server: KafkaServer) -> bool:
    """ZooKeeper mode, and this broker is not the active controller."""
    if not server.admin.zk_mode:
        return False
    controller = server.controller
    return controller is None or not controller.active


def _mutation_quota(context: RequestContext[Any], strict_since_version: int
                    ) -> ControllerMutationQuota:
    """The request's controller mutation quota (KIP-599), strict from
    ``strict_since_version`` on (the version that knows THROTTLING_QUOTA_EXCEEDED)."""
    return context.server.controller_mutation_quotas.new_quota_for(
        context.principal, context.client_id, context.api_version, strict_since_version)


def _throttle(context: RequestContext[Any], quota: ControllerMutationQuota,
              response: CreateTopicsResponse | DeleteTopicsResponse | CreatePartitionsResponse
              ) -> None:
    """Kafka's ``sendResponseMaybeThrottleWithControllerQuota``: the quota's throttle time
    (measured now, as the answer goes out) in the response, and the connection muted for it;
    the request-time quota's throttle is combined with it by KafkaApis (the larger wins)."""
    throttle_ms = quota.throttle_time_ms()
    if throttle_ms > 0:
        response.throttle_time_ms = max(response.throttle_time_ms, throttle_ms)
        quota.throttle(context.request, throttle_ms)


def _log_failure(what: str, name: str, exc: Exception) -> None:
    if isinstance(exc, ThrottlingQuotaExceededError):
        log.debug("%s %s throttled: %s", what, name, exc)
        return
    if isinstance(exc, KafkaError):
        log.info("%s %s failed: %s", what, name, exc)
    else:
        log.error("%s %s failed unexpectedly", what, name, exc_info=exc)


# ================================================================================ CreateTopics


async def handle_create_topics(
        context: RequestContext[CreateTopicsRequest]) -> CreateTopicsResponse | Parked:
    body = context.body
    version = context.api_version
    admin = context.server.admin
    counts = Counter(t.name for t in body.topics)
    results: list[CreatableTopicResult] = []
    if _not_controller(context.server):
        return CreateTopicsResponse(throttle_time_ms=0, topics=[
            CreatableTopicResult(name=t.name, error_code=NotControllerError.code,
                                 error_message=None) for t in body.topics])
    created: dict[str, tuple[CreatableTopicResult, int]] = {}
    quota = _mutation_quota(context, 6)
    names = set(counts)
    may_create, may_describe_configs = names, names
    if context.server.authorizer is not None:
        # Kafka's handleCreateTopicsRequest: CREATE on the cluster, else on each topic; the
        # configs and counts only for topics the principal may DESCRIBE_CONFIGS.
        if not authorize(context, AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME):
            may_create = filter_by_authorized(context, AclOperation.CREATE, ResourceType.TOPIC,
                                              names)
        may_describe_configs = filter_by_authorized(context, AclOperation.DESCRIBE_CONFIGS,
                                                    ResourceType.TOPIC, names)
    for topic in body.topics:
        if counts[topic.name] > 1 or topic.name == CLUSTER_METADATA_TOPIC:
            continue
        result = CreatableTopicResult(name=topic.name, error_code=0,
                                      error_message=None)
        if topic.name not in may_create:
            result.error_code = TopicAuthorizationFailedError.code
            result.error_message = "Authorization failed."
            results.append(result)
            continue
        asked = (topic.name, topic.num_partitions, topic.replication_factor,
                 [(a.partition_index, list(a.broker_ids)) for a in topic.assignments],
                 {c.name: c.value for c in topic.configs})
        try:
            new = admin.check_new_topic(*asked)
            if body.validate_only:
                topic_id = uuid.uuid4()
            else:
                quota.record(new.partitions)
                new_logs = await admin.create_logs(new.name, range(new.partitions),
                                                   new.configs)
                try:
                    # Checked again: another request may have changed things meanwhile.
                    new = admin.check_new_topic(*asked)
                    topic_id = admin.create_checked_topic(new).topic_id
                except Exception:
                    context.server.replica_manager.drop_unused_logs(new_logs)
                    raise
        except Exception as e:
            _log_failure("CreateTopics", topic.name, e)
            result.error_code, result.error_message = api_error(e)
            results.append(result)
            continue
        result.topic_id = topic_id
        if admin.zk_mode and not body.validate_only:
            created[topic.name] = (result, new.partitions)
        if topic.name not in may_describe_configs:
            result.topic_config_error_code = TopicAuthorizationFailedError.code
            results.append(result)
            continue
        result.num_partitions = new.partitions
        result.replication_factor = new.replication_factor
        if version >= 5:
            result.configs = [
                CreatableTopicConfigs(
                    name=e.name, value=None if e.sensitive else e.value,
                    read_only=e.read_only, config_source=int(e.source),
                    is_sensitive=e.sensitive)
                for e in admin.topic_config_entries(new.configs)]
        results.append(result)
    # Kafka's ControllerApis adds the duplicates after the controller's answers, then the
    # metadata log's name, which its controller never sees.
    for name, count in counts.items():
        if count > 1:
            results.append(CreatableTopicResult(
                name=name, error_code=InvalidRequestError.code, error_message=_DUPLICATE))
    if counts[CLUSTER_METADATA_TOPIC] == 1:
        results.append(CreatableTopicResult(
            name=CLUSTER_METADATA_TOPIC, error_code=InvalidRequestError.code,
            error_message=f"Creation of internal topic {CLUSTER_METADATA_TOPIC} is "
                          f"prohibited."))
    response = CreateTopicsResponse(throttle_time_ms=0, topics=results)
    if not created:
        _throttle(context, quota, response)
        return response

    async def finish() -> CreateTopicsResponse:
        await _wait_for_leaders(context.server, body.timeout_ms, {
            name: (result, range(count)) for name, (result, count) in created.items()})
        _throttle(context, quota, response)
        return response
    return Parked(finish)


async def _wait_for_leaders(server: KafkaServer, timeout_ms: int,
                            waiting: dict[str, tuple[CreatableTopicResult |
                                                     CreatePartitionsTopicResult,
                                                     range]]) -> None:
    """Kafka's DelayedCreatePartitions: until every partition has a leader in the cache;
    then what still lacks one is REQUEST_TIMED_OUT."""
    admin = server.admin
    def done() -> bool:
        return all(admin.missing_leaders(name, parts) == 0
                   for name, (_r, parts) in waiting.items())
    if timeout_ms > 0:
        await admin.wait_for(done, timeout_ms)
    for name, (result, parts) in waiting.items():
        if timeout_ms <= 0 or admin.missing_leaders(name, parts) > 0:
            result.error_code, result.error_message = RequestTimedOutError.code, None


# ================================================================================ DeleteTopics


async def handle_delete_topics(
        context: RequestContext[DeleteTopicsRequest]) -> DeleteTopicsResponse | Parked:
    body = context.body
    server = context.server
    if server.admin.zk_mode:
        return await _delete_topics_zk(context)
    if not server.config.delete_topic_enable:
        # The whole request fails (ControllerApis.deleteTopics throws before looking at it).
        if context.api_version < 3:
            raise InvalidRequestError("Topic deletion is disabled.")
        raise TopicDeletionDisabledError()
    counts = Counter(body.topic_names)
    responses: list[DeletableTopicResult] = []
    answered: set[str] = set()
    quota = _mutation_quota(context, 5)
    for name in body.topic_names:
        if name in answered:
            continue
        answered.add(name)
        result = DeletableTopicResult(name=name, error_code=0, error_message=None)
        if counts[name] > 1:
            result.error_code, result.error_message = InvalidRequestError.code, _DUPLICATE
        elif not authorize(context, AclOperation.DELETE, ResourceType.TOPIC, name):
            result.error_code = TopicAuthorizationFailedError.code
            result.error_message = "Authorization failed."
        else:
            try:
                _record_deletion(server, quota, name)
                server.admin.delete_topic(name)
            except Exception as e:
                _log_failure("DeleteTopics", name, e)
                result.error_code, message = api_error(e)
                # Kafka answers an unknown topic with ``new ApiError(code)``, whose message
                # is the generic text (``fromThrowable`` would drop it).
                if isinstance(e, UnknownTopicOrPartitionError):
                    message = e.message
                result.error_message = message
        responses.append(result)
    response = DeleteTopicsResponse(throttle_time_ms=0, responses=responses)
    _throttle(context, quota, response)
    return response


def _record_deletion(server: KafkaServer, quota: ControllerMutationQuota, name: str) -> None:
    """Kafka's deleteTopics records a known topic's partitions before deleting it (an
    unknown topic fails without being counted)."""
    topic = server.metadata_cache.topic(name)
    if topic is not None:
        quota.record(topic.partitions)


async def _delete_topics_zk(
        context: RequestContext[DeleteTopicsRequest]) -> DeleteTopicsResponse | Parked:
    """Kafka 3.x's ZooKeeper-mode ``handleDeleteTopicsRequest`` + ``ZkAdminManager.
    deleteTopics``: per-topic errors, then DelayedDeleteTopics."""
    body = context.body
    server = context.server
    counts = Counter(body.topic_names)
    responses = [DeletableTopicResult(name=name, error_code=0, error_message=None)
                 for name in dict.fromkeys(body.topic_names)]
    error: KafkaError | None = None
    if _not_controller(server):
        error = NotControllerError()
    elif not server.config.delete_topic_enable:
        error = InvalidRequestError() if context.api_version < 3 \
            else TopicDeletionDisabledError()
    if error is not None:
        for result in responses:
            result.error_code = error.code
        return DeleteTopicsResponse(throttle_time_ms=0, responses=responses)
    pending: list[DeletableTopicResult] = []
    quota = _mutation_quota(context, 5)
    for result in responses:
        name = str(result.name)
        if counts[name] > 1:
            result.error_code, result.error_message = InvalidRequestError.code, _DUPLICATE
            continue
        if not authorize(context, AclOperation.DELETE, ResourceType.TOPIC, name):
            result.error_code = TopicAuthorizationFailedError.code
            result.error_message = "Authorization failed."
            continue
        try:
            _record_deletion(server, quota, name)
            server.admin.delete_topic(name)
        except Exception as e:
            _log_failure("DeleteTopics", name, e)
            result.error_code, message = api_error(e)
            if isinstance(e, UnknownTopicOrPartitionError):
                message = e.message
            result.error_message = message
            continue
        pending.append(result)
    cache = server.metadata_cache
    response = DeleteTopicsResponse(throttle_time_ms=0, responses=responses)

    async def finish() -> DeleteTopicsResponse:
        if body.timeout_ms > 0:
            await server.admin.wait_for(
                lambda: all(cache.topic(str(r.name)) is None for r in pending),
                body.timeout_ms)
        for result in pending:
            if body.timeout_ms <= 0 or cache.topic(str(result.name)) is not None:
                result.error_code = RequestTimedOutError.code
        _throttle(context, quota, response)
        return response
    if pending:
        return Parked(finish)
    _throttle(context, quota, response)
    return response


# ============================================================================ CreatePartitions


async def handle_create_partitions(
        context: RequestContext[CreatePartitionsRequest]) -> CreatePartitionsResponse | Parked:
    body = context.body
    admin = context.server.admin
    counts = Counter(t.name for t in body.topics)
    results: list[CreatePartitionsTopicResult] = []
    answered: set[str] = set()
    if _not_controller(context.server):
        return CreatePartitionsResponse(throttle_time_ms=0, results=[
            CreatePartitionsTopicResult(name=name, error_code=NotControllerError.code,
                                        error_message=None)
            for name in dict.fromkeys(t.name for t in body.topics)])
    waiting: dict[str, tuple[CreatableTopicResult | CreatePartitionsTopicResult, range]] = {}
    quota = _mutation_quota(context, 3)
    for topic in body.topics:
        if topic.name in answered:
            continue
        answered.add(topic.name)
        result = CreatePartitionsTopicResult(name=topic.name, error_code=0,
                                             error_message=None)
        if counts[topic.name] > 1:
            result.error_code, result.error_message = InvalidRequestError.code, _DUPLICATE
            results.append(result)
            continue
        if not authorize(context, AclOperation.ALTER, ResourceType.TOPIC, topic.name):
            result.error_code = TopicAuthorizationFailedError.code
            result.error_message = "Authorization failed."
            results.append(result)
            continue
        assignments = None if topic.assignments is None \
            else [list(a.broker_ids) for a in topic.assignments]
        try:
            if body.validate_only:
                admin.check_partition_count(topic.name, topic.count, assignments)
            else:
                before = context.server.metadata_cache.topic(topic.name)
                # Kafka validates, records the increment, then creates.
                checked = admin.check_partition_count(topic.name, topic.count, assignments)
                quota.record(topic.count - checked.partitions)
                new_logs = await admin.create_logs(topic.name,
                                                   range(checked.partitions, topic.count))
                try:
                    admin.create_partitions(topic.name, topic.count, assignments)
                except Exception:
                    context.server.replica_manager.drop_unused_logs(new_logs)
                    raise
                if admin.zk_mode:
                    start = before.partitions if before is not None else 0
                    waiting[topic.name] = (result, range(start, topic.count))
        except Exception as e:
            _log_failure("CreatePartitions", topic.name, e)
            result.error_code, result.error_message = api_error(e)
        results.append(result)
    response = CreatePartitionsResponse(throttle_time_ms=0, results=results)
    if not waiting:
        _throttle(context, quota, response)
        return response

    async def finish() -> CreatePartitionsResponse:
        await _wait_for_leaders(context.server, body.timeout_ms, waiting)
        _throttle(context, quota, response)
        return response
    return Parked(finish)


# =============================================================================== DeleteRecords


async def handle_delete_records(
        context: RequestContext[DeleteRecordsRequest]) -> DeleteRecordsResponse:
    body = context.body
    rm = context.server.replica_manager
    # Kafka collects the request into a map: a partition named twice counts once, with the
    # last offset; the answer is grouped by topic.
    wanted: dict[TopicPartition, int] = {}
    for topic in body.topics:
        for part in topic.partitions:
            tp = TopicPartition(topic.name, part.partition_index)
            wanted.pop(tp, None)
            wanted[tp] = part.offset
    by_topic: dict[str, list[DeleteRecordsPartitionResult]] = {}
    names = {tp.topic for tp in wanted}
    denied = names - filter_by_authorized(context, AclOperation.DELETE, ResourceType.TOPIC,
                                          names)
    for tp, offset in wanted.items():
        out = DeleteRecordsPartitionResult(partition_index=tp.partition,
                                           low_watermark=-1, error_code=0)
        try:
            if tp.topic in denied:
                raise TopicAuthorizationFailedError(f"Not authorized to access topics: "
                                                    f"[{tp.topic}]")
            partition = rm.get_partition(tp)
            if not partition.log.config.delete:
                raise PolicyViolationError(f"Records of partition {tp} can not be deleted due "
                                           f"to the configured policy")
            target = partition.high_watermark if offset == HIGH_WATERMARK else offset
            if target < 0:
                raise OffsetOutOfRangeError(f"The offset {target} for partition {tp} is not "
                                            f"valid")
            out.low_watermark = partition.delete_records(target)
        except Exception as e:
            _log_failure("DeleteRecords", str(tp), e)
            out.error_code, _message = api_error(e)
        by_topic.setdefault(tp.topic, []).append(out)
    topics = [DeleteRecordsTopicResult(name=name, partitions=sorted(
        parts, key=lambda p: p.partition_index)) for name, parts in by_topic.items()]
    return DeleteRecordsResponse(throttle_time_ms=0, topics=topics)


HANDLERS: dict[int, Handler] = {
    ApiKey.CREATE_TOPICS: handle_create_topics,
    ApiKey.DELETE_TOPICS: handle_delete_topics,
    ApiKey.DELETE_RECORDS: handle_delete_records,
    ApiKey.CREATE_PARTITIONS: handle_create_partitions,
}
