"""Fetch (API key 1): read record batches, for consumers and for follower replicas.

Kafka 3.x's ``KafkaApis.handleFetchRequest`` for v0-12:

- Limits: each partition's ``PartitionMaxBytes``, the response's ``MaxBytes`` (capped by the
  broker's ``fetch.max.bytes``), with the first non-empty partition returning at least one
  whole batch (KIP-74); ``MinBytes`` and ``MaxWaitMs`` through a DelayedFetch (long poll: an
  append to a watched partition completes it at once).
- ``IsolationLevel``: read_uncommitted reads to the high watermark, read_committed to the last
  stable offset, with the aborted transactions (producer id, first offset) the segments'
  ``.txnindex`` files hold for the range read, so clients drop their records (null for
  read_uncommitted).
- Per partition: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (a follower here, or a
  partition of the cluster not hosted here), OFFSET_OUT_OF_RANGE, FENCED_LEADER_EPOCH /
  UNKNOWN_LEADER_EPOCH (``CurrentLeaderEpoch``, v9+), each with the partition's watermarks.
- A replica's fetch (``ReplicaId`` >= 0, ZooKeeper mode): read up to the log end offset, the
  follower's position recorded (high watermark, ISR), ``LastFetchedEpoch`` checked (v12+:
  ``DivergingEpoch`` in the answer when the follower must truncate); the response's
  ``MaxBytes`` is the replica's own (``replica.fetch.response.max.bytes``).
- Fetching from the closest replica (KIP-392, v11+: ``RackId``): with ``replica.selector.class``
  set, the leader may answer a consumer's partition with ``PreferredReadReplica`` and no
  records (see ``replica_selector``); a follower serves v11+ consumers up to its own high
  watermark / LSO. Replicas and consumers of v10 and older read from the leader only
  (NOT_LEADER_OR_FOLLOWER elsewhere).
- Authorization (with ``authorizer.class.name``): a consumer needs READ on each topic, a
  replica CLUSTER_ACTION on the cluster; a refused partition is TOPIC_AUTHORIZATION_FAILED and
  is not read.
- Fetch sessions (KIP-227, v7+; ``fetch_session``): a full fetch with SessionEpoch 0 opens a
  session when the cache has room, an incremental one lists only what changed and is
  answered with only the partitions that have news; session errors
  (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH) are answered at the top with no
  partitions, and the fetcher starts over with a full fetch.
- Record bytes are not copied (v4+): the response is encoded with each partition's records
  left out, and the connection sends them from the segment files with ``os.sendfile`` between
  the encoded pieces.
- v4-9: a consumer's fetch of a topic with ``compression.type=zstd`` is answered
  UNSUPPORTED_COMPRESSION_TYPE for that partition (Kafka's ``maybeConvertFetchedData``;
  zstd needs v10, KIP-110).
- v0-3 (old clients, message formats 0 and 1): each partition's read is converted down, to
  magic 0 for v0-1 and magic 1 for v2-3 (``_legacy.down_convert``: headers and control
  batches dropped, aborted transactions not filtered, KIP-283's sizing), as Kafka 3.x's
  ``maybeConvertFetchedData``: a consumer's fetch of a topic with
  ``message.downconversion.enable=false`` gets UNSUPPORTED_VERSION, a topic with
  ``compression.type=zstd`` (or a zstd batch) UNSUPPORTED_COMPRESSION_TYPE, a storage error
  NOT_LEADER_OR_FOLLOWER (old clients do not know KAFKA_STORAGE_ERROR).
- A consumer's fetch is held to its ``consumer_byte_rate`` and ``request_percentage`` client
  quotas (``ClientQuotaManager``): ``max_bytes`` at most what the byte-rate quota window
  holds, and an answer that takes either rate over its quota is replaced by an empty one with
  the larger throttle time in ``throttle_time_ms``, the connection muted that long (KIP-219;
  Kafka's handleFetchRequest). Followers are not throttled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidFetchSessionEpochError,
    KafkaError,
    KafkaStorageError,
    NotLeaderOrFollowerError,
    TopicAuthorizationFailedError,
    UnsupportedCompressionTypeError,
    UnsupportedVersionError,
)
from kafkapy.network.request_channel import SendResponse
from kafkapy.protocol import ApiKey, encode_response_parts
from kafkapy.protocol.message_classes import (
    AbortedTransaction,
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    FetchResponseEpochEndOffset,
    PartitionData,
)
from kafkapy.protocol.records import down_convert
from kafkapy.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkapy.server.auth_helper import authorize, filter_by_authorized
from kafkapy.server.client_quota_manager import DEFAULT_PRINCIPAL
from kafkapy.server.fetch_session import INVALID_SESSION_ID, CachedPartition, FetchContext
from kafkapy.server.metrics.request_metrics import CONSUMER_FETCH, FOLLOWER_FETCH
from kafkapy.server.partition import READ_COMMITTED
from kafkapy.server.replica_manager import (
    FetchParams,
    FetchPartitionRequest,
    FetchPartitionResult,
)
from kafkapy.server.replica_selector import ClientMetadata
from kafkapy.server.request_context import Handler, Parked, RequestContext

__all__ = ["HANDLERS", "handle_fetch"]


INT32_MAX = (1 << 31) - 1

async def handle_fetch(
        context: RequestContext[FetchRequest]) -> FetchResponse | SendResponse | Parked:
    body = context.body
    version = context.api_version
    server = context.server
    marks = context.request.timings
    if marks is not None:       # request metrics: also FetchConsumer or FetchFollower
        marks[0] = FOLLOWER_FETCH if body.replica_id >= 0 else CONSUMER_FETCH
    requested = [CachedPartition(TopicPartition(topic.topic, part.partition),
                                 part.fetch_offset, max(part.partition_max_bytes, 0),
                                 part.current_leader_epoch,
                                 part.last_fetched_epoch if version >= 12 else -1,
                                 part.log_start_offset)
                 for topic in body.topics for part in topic.partitions]
    if version >= 7:
        session = server.fetch_sessions.new_context(
            body.session_id, body.session_epoch, requested,
            [TopicPartition(t.topic, p) for t in body.forgotten_topics_data
             for p in t.partitions], server.time.milliseconds())
        if session.error is not None:
            return FetchResponse(throttle_time_ms=0, error_code=session.error.code,
                                 session_id=INVALID_SESSION_ID, responses=[])
    else:
        session = FetchContext("sessionless", requested)
    max_bytes = body.max_bytes
    if body.replica_id < 0:
        max_bytes = min(max_bytes, server.config.fetch_max_bytes)
        # consumer_byte_rate: no more than the quota window can hold at once (Kafka's
        # getMaxValueInQuotaWindow), so that one answer cannot exceed it many times over
        window_bytes = server.fetch_quotas.max_value_in_window(
            getattr(context, "principal", DEFAULT_PRINCIPAL), context.client_id)
        if window_bytes is not None:
            max_bytes = min(max_bytes, int(min(window_bytes, INT32_MAX)))
    params = FetchParams(
        max_wait_ms=max(body.max_wait_ms, 0), min_bytes=max(0, min(body.min_bytes, max_bytes)),
        max_bytes=max(0, max_bytes),
        isolation_level=body.isolation_level, replica_id=body.replica_id,
        # v11+ (KIP-392): who the consumer is; it may then be served by a follower.
        client_metadata=ClientMetadata(
            body.rack_id or "", context.client_id, context.request.client_host,
            context.request.listener_name) if version >= 11 else None)
    denied = _denied_topics(context, session.partitions)
    requests = [FetchPartitionRequest(p.tp, p.fetch_offset, p.max_bytes,
                                      p.current_leader_epoch, p.last_fetched_epoch,
                                      p.log_start_offset)
                for p in session.partitions if p.tp.topic not in denied]
    if denied and not requests:             # nothing to read: answer at once, as Kafka
        return _respond(context, params, session, _with_denied(session, [], denied))
    results, parked = server.replica_manager.fetch_messages(params, requests)
    if parked is None:
        return _respond(context, params, session, _with_denied(session, results, denied))

    async def finish() -> SendResponse | FetchResponse:
        await parked.wait()
        return _respond(context, params, session,
                        _with_denied(session, parked.results, denied))

    return Parked(finish)


def _denied_topics(context: RequestContext[FetchRequest],
                   partitions: Sequence[CachedPartition]) -> set[str]:
    """The topics this fetch may not read (Kafka's handleFetchRequest): a replica's fetch
    needs CLUSTER_ACTION on the cluster (else every partition is refused), a consumer's READ
    on each topic. One decision per topic; none without an authorizer."""
    if context.server.authorizer is None:
        return set()
    names = {p.tp.topic for p in partitions}
    if context.body.replica_id >= 0:
        allowed = authorize(context, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER,
                            CLUSTER_NAME)
        return set() if allowed else names
    return names - filter_by_authorized(context, AclOperation.READ, ResourceType.TOPIC, names)


def _with_denied(session: FetchContext, results: list[tuple[TopicPartition, FetchPartitionResult]],
                 denied: set[str]) -> list[tuple[TopicPartition, FetchPartitionResult]]:
    """``results`` (of the partitions read) with TOPIC_AUTHORIZATION_FAILED for the others,
    in the session's order."""
    if not denied:
        return results
    read = iter(results)
    out = []
    for p in session.partitions:
        if p.tp.topic in denied:
            out.append((p.tp, FetchPartitionResult(TopicAuthorizationFailedError(
                f"Not authorized to access topics: [{p.tp.topic}]"), None)))
        else:
            out.append(next(read))
    return out


def _respond(context: RequestContext[FetchRequest], params: FetchParams, session: FetchContext,
             results: list[tuple[TopicPartition, FetchPartitionResult]]
             ) -> SendResponse | FetchResponse:
    if params.replica_id >= 0:
        # the answer to a follower: its throttled partitions' bytes count against the
        # leader's replication quota (Kafka records them as the response is built)
        context.server.replica_manager.record_leader_throttled(results)
    committed = params.isolation_level == READ_COMMITTED
    version = context.api_version
    cache = context.server.fetch_sessions
    session_id = INVALID_SESSION_ID
    live = session.session if session.kind == "incremental" else None
    if live is not None:
        session_id = live.id
        if live.epoch != session.expected_epoch or cache.sessions.get(session_id) is not live:
            # A request of the same session came in between (Kafka: a duplicate request).
            return FetchResponse(throttle_time_ms=0,
                                 error_code=InvalidFetchSessionEpochError.code,
                                 session_id=session_id, responses=[])
    if params.replica_id < 0:
        throttled = _throttle(context, session, results, session_id)
        if throttled is not None:
            return throttled
    offsets = {} if version >= 4 else \
        {(t.topic, p.partition): p.fetch_offset for t in context.body.topics for p in t.partitions}
    topics: list[FetchableTopicResponse] = []
    metrics = context.server.metrics
    stats = None if metrics is None else metrics.topic_stats
    follower = params.replica_id >= 0
    for cached, (tp, r) in zip(session.partitions, results, strict=True):
        data = r.data
        records: Any = data if data is not None and data.size else b""
        if version < 4:
            r, records = _down_converted(context, params, tp, r, offsets[tp.topic, tp.partition])
        elif version < 10 and params.replica_id < 0 and _zstd_topic(context, tp):
            # Kafka's maybeConvertFetchedData: before v10 (KIP-110) a consumer cannot read a
            # zstd topic; the error replaces the partition's answer.
            r, records = FetchPartitionResult(UnsupportedCompressionTypeError(
                f"{tp}: zstd-compressed topics need Fetch v10 or later"), None), b""
        if stats is not None:       # BrokerTopicMetrics, per partition answered
            stats.fetched(tp.topic, len(records) if isinstance(records, bytes | bytearray)
                          else records.size,
                          0 if r.error is None else r.error.code, follower=follower)
        news = cached.must_respond(
            bool(records), r.high_watermark, r.last_stable_offset, r.log_start_offset,
            r.error is not None, r.diverging_epoch is not None, r.preferred_read_replica >= 0)
        if live is not None:
            if not news:
                continue
            # Answered partitions go to the end: the next reads start with the others (Kafka
            # moves them so that max_bytes does not always favour the same ones).
            live.partitions[tp] = live.partitions.pop(tp)
        if not topics or topics[-1].topic != tp.topic:
            topics.append(FetchableTopicResponse(topic=tp.topic, partitions=[]))
        aborted: list[AbortedTransaction] | None = None
        if committed and r.error is None and r.preferred_read_replica < 0:
            aborted = [AbortedTransaction(producer_id=t.producer_id, first_offset=t.first_offset)
                       for t in (data.aborted_transactions or ())] if data is not None else []
        diverging = FetchResponseEpochEndOffset() if r.diverging_epoch is None else \
            FetchResponseEpochEndOffset(epoch=r.diverging_epoch[0],
                                        end_offset=r.diverging_epoch[1])
        topics[-1].partitions.append(PartitionData(
            partition_index=tp.partition, diverging_epoch=diverging,
            error_code=0 if r.error is None else r.error.code,
            high_watermark=r.high_watermark, last_stable_offset=r.last_stable_offset,
            log_start_offset=r.log_start_offset,
            aborted_transactions=aborted,
            preferred_read_replica=r.preferred_read_replica,
            records=records))
    if session.kind == "full":
        session_id = cache.maybe_create_session(session.partitions, params.replica_id >= 0,
                                                context.server.time.milliseconds())
    body = FetchResponse(throttle_time_ms=0, error_code=0, session_id=session_id,
                         responses=topics)
    parts = encode_response_parts(ApiKey.FETCH, context.api_version, context.correlation_id, body)
    rest: list[Any] = []
    for piece in parts[1:]:
        if isinstance(piece, bytes):
            if piece:
                rest.append(piece)
        else:
            rest.extend(piece.slices)
    return SendResponse(parts[0], rest)


def _throttle(context: RequestContext[FetchRequest], session: FetchContext,
              results: list[tuple[TopicPartition, FetchPartitionResult]],
              session_id: int) -> FetchResponse | None:
    """The client quotas of a consumer's fetch, as Kafka's handleFetchRequest: the
    request-time (``request_percentage``: the time the request held its handler, recorded
    now, the long-poll wait not included) and the answer's size (``consumer_byte_rate``) are
    recorded; if either quota is exceeded, the size is taken back and the answer is empty
    (the session untouched, so nothing counts as delivered) with the larger throttle time in
    ``throttle_time_ms``, and the connection is muted that long (that throttle recorded in
    its quota's ``throttle-time``). The size is the records' bytes (Kafka counts the whole
    encoded answer: a few dozen bytes per partition more)."""
    size = sum(r.data.size for _, r in results if r.data is not None)
    quotas = context.server.fetch_quotas
    principal = getattr(context, "principal", DEFAULT_PRINCIPAL)
    request_ms = context.apis.record_request_time(context)
    bandwidth_ms = quotas.record_and_get_throttle_time_ms(principal, context.client_id, size)
    throttle_ms = max(request_ms, bandwidth_ms)
    if not throttle_ms:
        return None
    quotas.unrecord(principal, context.client_id, size)
    winner = quotas if bandwidth_ms > request_ms else context.server.request_quotas
    winner.throttle(context.request, principal, context.client_id, throttle_ms)
    return FetchResponse(throttle_time_ms=throttle_ms, error_code=0,
                         session_id=session_id if session.kind == "incremental"
                         else INVALID_SESSION_ID, responses=[])


def _zstd_topic(context: RequestContext[FetchRequest], tp: TopicPartition) -> bool:
    partition = context.server.replica_manager.partitions.get(tp)
    return partition is not None and partition.log.config.compression_type == "zstd"


def _down_converted(context: RequestContext[FetchRequest], params: FetchParams,
                    tp: TopicPartition, r: FetchPartitionResult,
                    fetch_offset: int) -> tuple[FetchPartitionResult, bytes]:
    """A v0-3 partition's result and records, converted to the magic its version allows."""
    if r.error is not None:
        if isinstance(r.error, KafkaStorageError):
            # Fetch v5 and older clients do not know KAFKA_STORAGE_ERROR (Kafka's
            # maybeDownConvertStorageError).
            return attrs.evolve(r, error=NotLeaderOrFollowerError(r.error.message)), b""
        return r, b""
    partition = context.server.replica_manager.partitions.get(tp)
    config = partition.log.config if partition is not None else None
    error: KafkaError | None = None
    if config is not None and config.compression_type == "zstd":
        error = UnsupportedCompressionTypeError(
            f"{tp}: zstd-compressed topics need Fetch v10 or later")
    elif params.replica_id < 0 and config is not None and \
            not config.message_downconversion_enable:
        error = UnsupportedVersionError(
            f"{tp}: conversion to message format {0 if context.api_version <= 1 else 1} is "
            f"disabled (message.downconversion.enable=false)")
    elif r.data is not None and r.data.size:
        try:
            return r, down_convert(r.data.read(), 0 if context.api_version <= 1 else 1,
                                   fetch_offset)
        except UnsupportedCompressionTypeError as e:
            error = e
    if error is None:
        return r, b""
    # Kafka's FetchResponse.partitionResponse: the error alone, no offsets.
    return FetchPartitionResult(error, None), b""


HANDLERS: dict[int, Handler] = {ApiKey.FETCH: handle_fetch}
