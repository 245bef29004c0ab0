"""Topic administration: CreateTopics (19), DeleteTopics (20), CreatePartitions (37) and
DeleteRecords (21).

What Kafka's broker forwards to its controller (``ControllerApis.createTopics`` /
``deleteTopics`` / ``createPartitions`` with ``ReplicationControlManager``), answered here by
the ``AdminManager``, which is this single broker's controller; DeleteRecords is Kafka's
``ReplicaManager.deleteRecords``. Every operation completes before the answer is sent, so the
requests' ``TimeoutMs`` never runs out (Kafka answers REQUEST_TIMED_OUT only when its
controller misses that deadline).

- CreateTopics v2-7: a name given twice is INVALID_REQUEST "Duplicate topic name.", and
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
  generic message (v5 carries messages).
- CreatePartitions v0-3: duplicates as for CreateTopics; per topic the new count must grow
  (INVALID_PARTITIONS), a manual assignment must name this broker once per new partition
  (INVALID_REPLICA_ASSIGNMENT); ``validateOnly`` checks without creating.
- DeleteRecords v0-2: per partition, the log start offset moves up to the offset (-1: the
  high watermark); UNKNOWN_TOPIC_OR_PARTITION for a partition this broker does not host,
  OFFSET_OUT_OF_RANGE below 0 or above the high watermark, POLICY_VIOLATION when the topic's
  cleanup.policy has no "delete" (Kafka's ``Partition.deleteRecordsOnLeader``). A partition
  named twice is answered once, with the last offset (Kafka builds a map). The new start is
  durable through the log-start-offset checkpoint, written periodically and at shutdown, as
  in Kafka.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidRequestError,
    KafkaError,
    OffsetOutOfRangeError,
    PolicyViolationError,
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
from kafkapy.server.admin_manager import CLUSTER_METADATA_TOPIC, api_error
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "handle_create_partitions", "handle_create_topics",
           "handle_delete_records", "handle_delete_topics"]

log = logging.getLogger(__name__)



_DUPLICATE = "Duplicate topic name."
HIGH_WATERMARK = -1


def _log_failure(what: str, name: str, exc: Exception) -> None:
    if isinstance(exc, KafkaError):
        log.info("%s %s failed: %s", what, name, exc)
    else:
        log.error("%s %s failed unexpectedly", what, name, exc_info=exc)


# ================================================================================ CreateTopics


async def handle_create_topics(
        context: RequestContext[CreateTopicsRequest]) -> CreateTopicsResponse:
    body = context.body
    version = context.api_version
    admin = context.server.admin
    counts = Counter(t.name for t in body.topics)
    results: list[CreatableTopicResult] = []
    for topic in body.topics:
        if counts[topic.name] > 1 or topic.name == CLUSTER_METADATA_TOPIC:
            continue
        result = CreatableTopicResult(name=topic.name, error_code=0,
                                      error_message=None)
        try:
            new = admin.check_new_topic(
                topic.name, topic.num_partitions, topic.replication_factor,
                [(a.partition_index, list(a.broker_ids)) for a in topic.assignments],
                {c.name: c.value for c in topic.configs})
            if body.validate_only:
                topic_id = uuid.uuid4()
            else:
                topic_id = admin.create_checked_topic(new).topic_id
        except Exception as e:
            _log_failure("CreateTopics", topic.name, e)
            result.error_code, result.error_message = api_error(e)
            results.append(result)
            continue
        result.topic_id = topic_id
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
    return CreateTopicsResponse(throttle_time_ms=0, topics=results)


# ================================================================================ DeleteTopics


async def handle_delete_topics(
        context: RequestContext[DeleteTopicsRequest]) -> DeleteTopicsResponse:
    body = context.body
    server = context.server
    if not server.config.delete_topic_enable:
        # The whole request fails (ControllerApis.deleteTopics throws before looking at it).
        if context.api_version < 3:
            raise InvalidRequestError("Topic deletion is disabled.")
        raise TopicDeletionDisabledError()
    counts = Counter(body.topic_names)
    responses: list[DeletableTopicResult] = []
    answered: set[str] = set()
    for name in body.topic_names:
        if name in answered:
            continue
        answered.add(name)
        result = DeletableTopicResult(name=name, error_code=0, error_message=None)
        if counts[name] > 1:
            result.error_code, result.error_message = InvalidRequestError.code, _DUPLICATE
        else:
            try:
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
    return DeleteTopicsResponse(throttle_time_ms=0, responses=responses)


# ============================================================================ CreatePartitions


async def handle_create_partitions(
        context: RequestContext[CreatePartitionsRequest]) -> CreatePartitionsResponse:
    body = context.body
    admin = context.server.admin
    counts = Counter(t.name for t in body.topics)
    results: list[CreatePartitionsTopicResult] = []
    answered: set[str] = set()
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
        assignments = None if topic.assignments is None \
            else [list(a.broker_ids) for a in topic.assignments]
        try:
            if body.validate_only:
                admin.check_partition_count(topic.name, topic.count, assignments)
            else:
                admin.create_partitions(topic.name, topic.count, assignments)
        except Exception as e:
            _log_failure("CreatePartitions", topic.name, e)
            result.error_code, result.error_message = api_error(e)
        results.append(result)
    return CreatePartitionsResponse(throttle_time_ms=0, results=results)


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
    for tp, offset in wanted.items():
        out = DeleteRecordsPartitionResult(partition_index=tp.partition,
                                           low_watermark=-1, error_code=0)
        try:
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
