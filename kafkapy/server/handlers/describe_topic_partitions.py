"""DescribeTopicPartitions (API key 75): topics and their partitions, a page at a time
(KIP-966; Kafka 3.8+ admin clients' and ``kafka-topics.sh --describe``'s way to describe).

Kafka's ``DescribeTopicPartitionsRequestHandler`` with ``KRaftMetadataCache.describeTopicResponse``:

- Topics: the named ones (an empty list: every topic the broker knows), deduplicated and
  answered in name order, from the Cursor's topic on (names sorting before it are dropped).
  A named topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION
  for an illegal name) with no partitions; when every topic was asked for, only existing
  ones are listed.
- Pagination: at most ``min(ResponsePartitionLimit, max.request.partition.size.limit)``
  partitions (at least 1) are described. The Cursor's topic starts at the Cursor's partition,
  every other topic at 0. When a topic's partitions do not all fit, the response ends with it
  and NextCursor names the first partition left out; when the limit is used up exactly at a
  topic's end and more topics follow, NextCursor is the next topic at partition 0 (which
  need not exist: the next page answers for it). NextCursor is null on the last page.
- A Cursor naming a topic missing from a non-empty topic list, or a negative partition, is
  INVALID_REQUEST for the whole request (every requested topic carries the error).
- Per partition the error is always NONE (unlike Metadata): a leader that is not alive or has
  no endpoint on the request's listener is reported as -1; replicas and ISR are listed whole,
  with the offline replicas. kafkapy has no ELR (KIP-966 is KRaft's): EligibleLeaderReplicas
  and LastKnownElr are empty lists, as Kafka reports a partition without ELR.
- TopicAuthorizedOperations is set on every listed topic, missing ones included: the topic
  operations the principal may do (every one without an authorizer). Only a whole-request
  error, or a topic it may not DESCRIBE, leaves it "not requested".
- With an authorizer, DESCRIBE on each topic: an all-topics request lists only those, a named
  topic refused is TOPIC_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import uuid

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidRequestError,
    InvalidTopicError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from kafkapy.log.log_manager import validate_topic_name
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    Cursor,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic,
)
from kafkapy.security.authorizer.acl import AclOperation, ResourceType
from kafkapy.server.auth_helper import authorized_operations, filter_by_authorized
from kafkapy.server.handlers.metadata import (
    INTERNAL_TOPICS,
    NOT_REQUESTED,
    TOPIC_OPERATION_CODES,
    TOPIC_OPERATIONS,
)
from kafkapy.server.metadata_cache import ZkMetadataCache
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "handle_describe_topic_partitions"]

_Context = RequestContext[DescribeTopicPartitionsRequest]
_ZERO_UUID = uuid.UUID(int=0)


async def handle_describe_topic_partitions(context: _Context) -> DescribeTopicPartitionsResponse:
    body = context.body
    cursor = body.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    cache = context.server.metadata_cache
    fetch_all = not body.topics
    if fetch_all:
        names = {name for name in cache.topics if name >= cursor_topic}
    else:
        names = {t.name for t in body.topics if t.name >= cursor_topic}
        if cursor is not None and cursor.topic_name not in names:
            raise InvalidRequestError(f"DescribeTopicPartitionsRequest topic list should "
                                      f"contain the cursor topic: {cursor.topic_name}")
    if cursor is not None and cursor.partition_index < 0:
        raise InvalidRequestError(f"DescribeTopicPartitionsRequest cursor partition must be "
                                  f"valid: Cursor(topicName='{cursor.topic_name}', "
                                  f"partitionIndex={cursor.partition_index})")
    # Kafka: DESCRIBE on each topic; an all-topics request lists only those, a named one
    # refused is TOPIC_AUTHORIZATION_FAILED.
    allowed = filter_by_authorized(context, AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    limit = max(min(context.server.config.max_request_partition_size_limit,
                    body.response_partition_limit), 1)
    response = DescribeTopicPartitionsResponse(throttle_time_ms=0)
    remaining = limit
    for name in sorted(names):
        if remaining == 0:
            # The page ends at a topic boundary: the next one starts at its first partition.
            response.next_cursor = Cursor(topic_name=name, partition_index=0)
            break
        if name not in allowed:
            if not fetch_all:
                response.topics.append(DescribeTopicPartitionsResponseTopic(
                    error_code=TopicAuthorizationFailedError.code, name=name,
                    is_internal=name in INTERNAL_TOPICS,
                    topic_authorized_operations=NOT_REQUESTED))
            continue
        count = _partition_count(context, name)
        if count is None:
            if not fetch_all:
                response.topics.append(_missing(name))
            continue
        start = cursor.partition_index if cursor is not None and name == cursor_topic else 0
        upper = min(count, start + remaining)
        partitions = [_partition(context, name, p) for p in range(start, upper)]
        response.topics.append(DescribeTopicPartitionsResponseTopic(
            error_code=0, name=name, topic_id=_topic_id(context, name),
            is_internal=name in INTERNAL_TOPICS, partitions=partitions,
            topic_authorized_operations=authorized_operations(
                context, ResourceType.TOPIC, name, TOPIC_OPERATION_CODES, TOPIC_OPERATIONS)))
        if upper < count:
            response.next_cursor = Cursor(topic_name=name, partition_index=upper)
            break
        remaining -= len(partitions)
    return response


def _partition_count(context: _Context, name: str) -> int | None:
    cache = context.server.metadata_cache
    if isinstance(cache, ZkMetadataCache):
        partitions = cache.partitions_of(name)
        return len(partitions) if partitions else None
    record = cache.topic(name)
    return None if record is None else int(record.partitions)


def _topic_id(context: _Context, name: str) -> uuid.UUID:
    record = context.server.metadata_cache.topic(name)
    return record.topic_id if record is not None else _ZERO_UUID


def _partition(context: _Context, name: str,
               index: int) -> DescribeTopicPartitionsResponsePartition:
    server = context.server
    cache = server.metadata_cache
    listener = context.request.listener_name
    if isinstance(cache, ZkMetadataCache):
        state = cache.partitions_of(name).get(index)
        if state is None:
            leader, epoch, replicas, isr, offline = -1, -1, [], [], []
        else:
            leader, epoch = state.leader, state.leader_epoch
            replicas, isr = list(state.replicas), list(state.isr)
            offline = list(state.offline_replicas)
        if cache.broker_endpoint(leader, listener) is None:
            leader = -1
    else:
        part = server.replica_manager.partitions.get(TopicPartition(name, index))
        if part is None:        # being created or deleted right now
            leader, epoch, replicas, isr = -1, -1, [server.node_id], []
        else:
            leader, epoch = part.leader_id, part.leader_epoch
            replicas, isr = list(part.replicas), list(part.isr)
        offline = []
    return DescribeTopicPartitionsResponsePartition(
        error_code=0, partition_index=index, leader_id=leader, leader_epoch=epoch,
        replica_nodes=replicas, isr_nodes=isr, eligible_leader_replicas=[],
        last_known_elr=[], offline_replicas=offline)


def _missing(name: str) -> DescribeTopicPartitionsResponseTopic:
    try:
        validate_topic_name(name)
        code = UnknownTopicOrPartitionError.code
    except InvalidTopicError:
        code = InvalidTopicError.code
    return DescribeTopicPartitionsResponseTopic(error_code=code, name=name,
                                                is_internal=name in INTERNAL_TOPICS,
                                                topic_authorized_operations=TOPIC_OPERATIONS)


HANDLERS: dict[int, Handler] = {
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: handle_describe_topic_partitions,
}
