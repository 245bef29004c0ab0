"""ListOffsets (API key 2): offsets by timestamp, earliest, latest, max timestamp; and
OffsetForLeaderEpoch (API key 23): where a leader epoch ends.

Kafka's ``KafkaApis.handleListOffsetRequest`` for v0-10. v0 (old clients: ``MaxNumOffsets``,
``OldStyleOffsets``) answers Kafka's ``legacyFetchOffsetsBefore``: segment base offsets and
the log end offset, by segment file time; v1+, per partition:

- ``Timestamp`` -2 (earliest): the log start offset; -4 (earliest local, v8+): the same
  without tiered storage; -1 (latest): the high watermark for read_uncommitted consumers, the
  last stable offset for read_committed, the log end offset for replicas and debug clients;
  -3 (max timestamp, v7+): the first record with the largest timestamp; -5 (latest tiered, v9+):
  -1, nothing is tiered; t >= 0: the first record with timestamp >= t below that same bound,
  or offset -1 with timestamp -1 when there is none.
- The leader epoch of the answer's offset (v4+), UNKNOWN_TOPIC_OR_PARTITION,
  NOT_LEADER_OR_FOLLOWER (a follower here, or a partition of the cluster not hosted here),
  FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH (``CurrentLeaderEpoch``), and INVALID_REQUEST for
  a partition named twice in one request (Kafka's duplicate check). Only the debugging
  replica id (-2) may read a follower. With an authorizer, DESCRIBE on the topic (else
  TOPIC_AUTHORIZATION_FAILED).

OffsetForLeaderEpoch (Kafka's ``handleOffsetForLeaderEpochRequest`` for v2-4): per partition
the largest epoch <= the asked one and the offset where the next epoch starts (the log end
offset for the latest), from the leader-epoch cache; -1/-1 when the epoch is older than every
entry. Leader only (but for ReplicaId -2), with the same errors as ListOffsets.
"""

from __future__ import annotations

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidRequestError,
    KafkaError,
    TopicAuthorizationFailedError,
    UnknownServerError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderEpochResponseEpochEndOffset,
    OffsetForLeaderTopicResult,
)
from kafkapy.security.authorizer.acl import AclOperation, ResourceType
from kafkapy.server.auth_helper import filter_by_authorized
from kafkapy.server.partition import Partition
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "handle_list_offsets", "handle_offset_for_leader_epoch"]

CONSUMER = -1
DEBUGGING = -2
LATEST_TIMESTAMP = -1


async def handle_list_offsets(context: RequestContext[ListOffsetsRequest]) -> ListOffsetsResponse:
    body = context.body
    version = context.api_version
    rm = context.server.replica_manager
    isolation = body.isolation_level if version >= 2 else 0
    seen: dict[TopicPartition, int] = {}
    for topic in body.topics:
        for part in topic.partitions:
            tp = TopicPartition(topic.name, part.partition_index)
            seen[tp] = seen.get(tp, 0) + 1
    names = {t.name for t in body.topics}
    # Kafka's handleListOffsetRequest: DESCRIBE on each topic (with an authorizer).
    denied = names - filter_by_authorized(context, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                          names)
    topics = []
    for topic in body.topics:
        partitions = []
        for part in topic.partitions:
            tp = TopicPartition(topic.name, part.partition_index)
            out = ListOffsetsPartitionResponse(
                partition_index=part.partition_index, error_code=0, timestamp=-1,
                offset=-1, leader_epoch=-1)
            try:
                if topic.name in denied:
                    raise TopicAuthorizationFailedError()
                if seen[tp] > 1:
                    raise InvalidRequestError(f"{tp} is listed more than once")
                partition = rm.get_partition(tp)
                if body.replica_id == DEBUGGING:
                    partition.check_leader_epoch(part.current_leader_epoch)
                else:
                    partition.check_leader(part.current_leader_epoch)
                if version == 0:
                    out.old_style_offsets = _old_style_offsets(
                        partition, part.timestamp, part.max_num_offsets,
                        body.replica_id != DEBUGGING, context.server.time.milliseconds())
                    partitions.append(out)
                    continue
                ts, offset, epoch = partition.fetch_offset_for_timestamp(
                    part.timestamp, isolation if body.replica_id == CONSUMER else None)
                out.timestamp, out.offset = ts, offset
                # LeaderEpoch exists from v4 and is not ignorable: set below v4 it makes the
                # response unencodable (Kafka's ReplicaManager also sets it for v4+ only).
                if version >= 4:
                    out.leader_epoch = epoch
            except KafkaError as e:
                out.error_code = e.code
            except ValueError as e:      # a special timestamp this broker does not know
                out.error_code = InvalidRequestError.code
                del e
            except Exception as e:
                out.error_code = UnknownServerError.code
                del e
            partitions.append(out)
        topics.append(ListOffsetsTopicResponse(name=topic.name, partitions=partitions))
    return ListOffsetsResponse(throttle_time_ms=0, topics=topics)


def _old_style_offsets(partition: Partition, timestamp: int, max_num_offsets: int,
                       consumer: bool, now_ms: int) -> list[int]:
    """ListOffsets v0 (Kafka's ``legacyFetchOffsetsForTimestamp``): the log's offsets before
    ``timestamp``; for the latest, a consumer sees none above the high watermark (the high
    watermark comes first instead)."""
    offsets = partition.log.legacy_offsets_before(timestamp, max_num_offsets, now_ms)
    if consumer and timestamp == LATEST_TIMESTAMP:
        hw = partition.high_watermark
        if any(o > hw for o in offsets):
            offsets = [hw, *(o for o in offsets if o <= hw)]
    return offsets


async def handle_offset_for_leader_epoch(
        context: RequestContext[OffsetForLeaderEpochRequest]) -> OffsetForLeaderEpochResponse:
    body = context.body
    rm = context.server.replica_manager
    topics = []
    for topic in body.topics:
        results = []
        for part in topic.partitions:
            tp = TopicPartition(topic.topic, part.partition)
            out = OffsetForLeaderEpochResponseEpochEndOffset(
                error_code=0, partition=part.partition, leader_epoch=-1, end_offset=-1)
            try:
                partition = rm.get_partition(tp)
                if body.replica_id == DEBUGGING:
                    partition.check_leader_epoch(part.current_leader_epoch)
                else:
                    partition.check_leader(part.current_leader_epoch)
                out.leader_epoch, out.end_offset = partition.end_offset_for_epoch(
                    part.leader_epoch)
            except KafkaError as e:
                out.error_code = e.code
            except Exception as e:
                out.error_code = UnknownServerError.code
                del e
            results.append(out)
        topics.append(OffsetForLeaderTopicResult(topic=topic.topic, partitions=results))
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics)


HANDLERS: dict[int, Handler] = {
    ApiKey.LIST_OFFSETS: handle_list_offsets,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: handle_offset_for_leader_epoch,
}
