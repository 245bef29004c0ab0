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

The request is read by the compiled decoder (``kafkapy._fetch``, ``handle_fetch_frame``: the
frame handler KafkaApis calls before its generic decode) into plain values, and the answer's
header and every non-records part written by the compiled encoder: no generated message
objects per topic or partition on either side. ``handle_fetch`` (the generated FetchRequest,
for KafkaApis without frame handlers) feeds the same fetch; a frame the compiled decoder
refuses goes to the generic decode, which refuses it too and closes the connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs

from kafkapy import _codec, _fetch
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidFetchSessionEpochError,
    InvalidRequestError,
    KafkaError,
    KafkaStorageError,
    NotLeaderOrFollowerError,
    TopicAuthorizationFailedError,
    UnsupportedCompressionTypeError,
    UnsupportedVersionError,
)
from kafkapy.network.request_channel import Request, Response, SendResponse
from kafkapy.protocol import ApiKey
from kafkapy.protocol.api_keys import API_KEYS
from kafkapy.protocol.codec import message_plan
from kafkapy.protocol.message_classes import (
    FetchRequest,
    FetchResponse,
    FetchTopic,
    ForgottenTopic,
    RequestHeader,
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
from kafkapy.server.request_context import FrameHandler, Handler, Parked, RequestContext

if TYPE_CHECKING:
    from kafkapy.server.kafka_apis import KafkaApis

__all__ = ["FRAME_HANDLERS", "HANDLERS", "FetchFrame", "handle_fetch", "handle_fetch_frame"]


INT32_MAX = (1 << 31) - 1
# The versions the compiled decoder serves here: topic ids (v13+) are not served by this
# broker (KafkaApis advertises 0-12), so a name is always there.
_FRAME_VERSIONS = range(0, 13)
# What _fetch.decode_fetch_request returns for those versions (module level: a subscripted
# type written inside the handler would be built on every request)
_NamedTopics = list[tuple[str, Any, list[tuple[int, int, int, int, int, int]]]]
_NamedForgotten = list[tuple[str, Any, list[int]]]


@attrs.define(slots=True, eq=False)
class FetchFrame:
    """A Fetch request as the fetch reads it: the request-level values and the partitions
    asked for (``requested``, in request order; ``forgotten``, v7+), with no message object
    per topic or partition. The body of the fast path's RequestContext (KafkaApis reads
    ``replica_id`` for the request quota's exemption); ``topics`` and
    ``forgotten_topics_data`` decode the generated classes from ``frame`` on demand, for the
    error response alone (Kafka's getErrorResponse names every partition asked for)."""

    version: int
    replica_id: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    session_id: int
    session_epoch: int
    rack_id: str
    requested: list[CachedPartition]
    forgotten: list[TopicPartition]
    frame: Any = None
    offset: int = 0
    _decoded: FetchRequest | None = None

    @classmethod
    def of(cls, body: FetchRequest, version: int) -> FetchFrame:
        """The values of a generated FetchRequest (the generic path)."""
        return cls(version, body.replica_id, body.max_wait_ms, body.min_bytes, body.max_bytes,
                   body.isolation_level, body.session_id, body.session_epoch, body.rack_id or "",
                   [CachedPartition(TopicPartition(topic.topic, part.partition),
                                    part.fetch_offset, max(part.partition_max_bytes, 0),
                                    part.current_leader_epoch,
                                    part.last_fetched_epoch if version >= 12 else -1,
                                    part.log_start_offset)
                    for topic in body.topics for part in topic.partitions],
                   [TopicPartition(t.topic, p) for t in body.forgotten_topics_data
                    for p in t.partitions], decoded=body)

    @property
    def request(self) -> FetchRequest:
        if self._decoded is None:
            body, _ = _codec.decode_struct(
                message_plan(API_KEYS[ApiKey.FETCH].request, self.version), self.frame,
                self.offset)
            self._decoded = body
        return self._decoded

    @property
    def topics(self) -> list[FetchTopic]:
        return self.request.topics

    @property
    def forgotten_topics_data(self) -> list[ForgottenTopic]:
        return self.request.forgotten_topics_data


async def handle_fetch_frame(apis: KafkaApis, request: Request, header: RequestHeader,
                             offset: int) -> Response | Parked | None:
    """The frame handler (KafkaApis, before its generic decode): the request decoded by
    ``kafkapy._fetch`` and served by the same fetch as ``handle_fetch``. None (the generic
    path) for a frame the compiled decoder refuses: the generic decode refuses it too and
    closes the connection with its reason, before anything changed."""
    version = header.api_version
    if version not in _FRAME_VERSIONS:
        return None
    try:
        (replica_id, _epoch, max_wait_ms, min_bytes, max_bytes, isolation_level, session_id,
         session_epoch, topics, forgotten, rack_id, _cluster, _end) = \
            _fetch.decode_fetch_request(request.frame, offset, version)
    except InvalidRequestError:
        return None
    # v0-12 name topics (never null: not nullable in these versions), not ids
    names = cast(_NamedTopics, topics)
    gone = cast(_NamedForgotten, forgotten)
    # (partition, current_leader_epoch, fetch_offset, last_fetched_epoch, log_start_offset,
    #  partition_max_bytes): -1 where the version lacks a field, as the generated class has it
    body = FetchFrame(version, replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level,
                      session_id, session_epoch, rack_id,
                      [CachedPartition(TopicPartition(name, p[0]), p[2],
                                       p[5] if p[5] > 0 else 0, p[1], p[3], p[4])
                       for name, _id, parts in names for p in parts],
                      [TopicPartition(name, p) for name, _id, parts in gone for p in parts],
                      request.frame, offset)
    return await apis.run_handler(RequestContext(header, body, request, apis), _serve_frame)


async def _serve_frame(context: RequestContext[FetchFrame]
                       ) -> FetchResponse | SendResponse | Parked:
    return await _serve(context, context.body)


async def handle_fetch(
        context: RequestContext[FetchRequest]) -> FetchResponse | SendResponse | Parked:
    """The generic path's handler (the generated FetchRequest): the same fetch."""
    return await _serve(context, FetchFrame.of(context.body, context.api_version))


async def _serve(context: RequestContext[Any],
                 fetch: FetchFrame) -> FetchResponse | SendResponse | Parked:
    version = context.api_version
    server = context.server
    marks = context.request.timings
    if marks is not None:       # request metrics: also FetchConsumer or FetchFollower
        marks[0] = FOLLOWER_FETCH if fetch.replica_id >= 0 else CONSUMER_FETCH
    requested = fetch.requested
    if version >= 7:
        session = server.fetch_sessions.new_context(
            fetch.session_id, fetch.session_epoch, requested, fetch.forgotten,
            server.time.milliseconds())
        if session.error is not None:
            return FetchResponse(throttle_time_ms=0, error_code=session.error.code,
                                 session_id=INVALID_SESSION_ID, responses=[])
    else:
        session = FetchContext("sessionless", requested)
    max_bytes = fetch.max_bytes
    if fetch.replica_id < 0:
        max_bytes = min(max_bytes, server.config.fetch_max_bytes)
        # consumer_byte_rate: no more than the quota window can hold at once (Kafka's
        # getMaxValueInQuotaWindow), so that one answer cannot exceed it many times over
        window_bytes = server.fetch_quotas.max_value_in_window(
            getattr(context, "principal", DEFAULT_PRINCIPAL), context.client_id)
        if window_bytes is not None:
            max_bytes = min(max_bytes, int(min(window_bytes, INT32_MAX)))
    params = FetchParams(
        max_wait_ms=max(fetch.max_wait_ms, 0), min_bytes=max(0, min(fetch.min_bytes, max_bytes)),
        max_bytes=max(0, max_bytes),
        isolation_level=fetch.isolation_level, replica_id=fetch.replica_id,
        # v11+ (KIP-392): who the consumer is; it may then be served by a follower.
        client_metadata=ClientMetadata(
            fetch.rack_id, context.client_id, context.request.client_host,
            context.request.listener_name) if version >= 11 else None)
    # v0-3: each partition's records are converted down from its fetch offset
    offsets = {} if version >= 4 else {p.tp: p.fetch_offset for p in requested}
    denied = _denied_topics(context, fetch.replica_id, session.partitions)
    requests = [FetchPartitionRequest(p.tp, p.fetch_offset, p.max_bytes,
                                      p.current_leader_epoch, p.last_fetched_epoch,
                                      p.log_start_offset)
                for p in session.partitions if p.tp.topic not in denied]
    if denied and not requests:             # nothing to read: answer at once, as Kafka
        return _respond(context, params, session, _with_denied(session, [], denied), offsets)
    results, parked = server.replica_manager.fetch_messages(params, requests)
    if parked is None:
        return _respond(context, params, session, _with_denied(session, results, denied),
                        offsets)

    return Parked.after(parked, lambda: _respond(
        context, params, session, _with_denied(session, parked.results, denied), offsets))


def _denied_topics(context: RequestContext[Any], replica_id: int,
                   partitions: Sequence[CachedPartition]) -> set[str]:
    """The topics this fetch may not read (Kafka's handleFetchRequest): a replica's fetch
    needs CLUSTER_ACTION on the cluster (else every partition is refused), a consumer's READ
    on each topic. One decision per topic; none without an authorizer."""
    if context.server.authorizer is None:
        return set()
    names = {p.tp.topic for p in partitions}
    if replica_id >= 0:
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


def _respond(context: RequestContext[Any], params: FetchParams, session: FetchContext,
             results: list[tuple[TopicPartition, FetchPartitionResult]],
             offsets: dict[TopicPartition, int]) -> SendResponse | FetchResponse:
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
    # What kafkapy._fetch.encode_fetch_response writes: (topic, topic id, partitions) with
    # per partition (index, error, high watermark, last stable offset, log start offset,
    # aborted transactions, preferred read replica, records, diverging epoch, current
    # leader, snapshot id).
    topics: list[tuple[str, None, list[tuple[Any, ...]]]] = []
    metrics = context.server.metrics
    stats = None if metrics is None else metrics.topic_stats
    follower = params.replica_id >= 0
    for cached, (tp, r) in zip(session.partitions, results, strict=True):
        data = r.data
        records: Any = data if data is not None and data.size else b""
        if version < 4:
            r, records = _down_converted(context, params, tp, r, offsets[tp])
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
        if not topics or topics[-1][0] != tp.topic:
            topics.append((tp.topic, None, []))
        aborted: list[tuple[int, int]] | None = None
        if committed and r.error is None and r.preferred_read_replica < 0:
            aborted = [(t.producer_id, t.first_offset)
                       for t in (data.aborted_transactions or ())] if data is not None else []
        topics[-1][2].append((
            tp.partition, 0 if r.error is None else r.error.code, r.high_watermark,
            r.last_stable_offset, r.log_start_offset, aborted, r.preferred_read_replica,
            records, r.diverging_epoch, None, None))
    if session.kind == "full":
        session_id = cache.maybe_create_session(session.partitions, params.replica_id >= 0,
                                                context.server.time.milliseconds())
    parts = _fetch.encode_fetch_response(version, context.correlation_id, 0, 0, session_id,
                                         topics)
    rest: list[Any] = []
    for piece in parts[1:]:
        if isinstance(piece, bytes):
            if piece:
                rest.append(piece)
        else:
            rest.extend(piece.slices)
    return SendResponse(parts[0], rest)


def _throttle(context: RequestContext[Any], session: FetchContext,
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


def _zstd_topic(context: RequestContext[Any], tp: TopicPartition) -> bool:
    partition = context.server.replica_manager.partitions.get(tp)
    return partition is not None and partition.log.config.compression_type == "zstd"


def _down_converted(context: RequestContext[Any], params: FetchParams,
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
FRAME_HANDLERS: dict[int, FrameHandler] = {ApiKey.FETCH: handle_fetch_frame}
