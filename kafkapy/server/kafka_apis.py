"""KafkaApis: the dispatch table from API key to request handler, and what Kafka does with every
request that cannot reach a handler.

Kafka's ``kafka.server.KafkaApis`` without the 5,000 lines: the handlers live in small modules
under :mod:`kafkapy.server.handlers`, one per area, and this module only routes.

Theory of operation
-------------------
``await KafkaApis.handle(request)`` takes one frame from the ``RequestChannel`` and returns the
channel response to send back: ``SendResponse`` (response header + body), ``NoResponse`` or
``CloseConnection``. It never raises (except Trio's cancellation), so every request is
answered exactly once. In order:

0. Before any of this, ``answer_now(frame)`` lets the socket server's poll task have the common
   case of an API answered in its own step, with no ``Request``, no handler task and no channel
   hand-over: a handler module's ``NOW_HANDLERS`` (Produce: ``produce_now``) take the whole
   frame, header not yet decoded (they read it themselves, compiled, and check its version
   against the advertised range given to them), or return None before changing anything, and
   the request then goes the way below. The handler pool calls it only with a handler slot free
   and nothing queued, so no request is overtaken; none runs while requests are logged at
   DEBUG. The request metrics count such a request as any other: the connection's link makes
   its ``Request`` afterwards, with its marks (received, handled, completed: no queue time).
   What a now-handler answers must be what steps 1-4 would: the same checks, the same
   functions, the same bytes.

1. The request header is decoded on its own (its version follows from the API version). An
   unknown API key or an unreadable header closes the connection, as Kafka's SocketServer does
   (``RequestHeader.parse`` throws InvalidRequestException, ``processCompletedReceives`` catches
   it and closes the channel; no response is sent).
2. The API must be advertised at that version (below). If it is not, the connection is closed,
   as Kafka's ``Processor.parseRequestHeader`` does for an API that is not enabled or a version
   it does not support. ApiVersions is the exception (``ApiKeys.isVersionEnabled`` accepts any
   ApiVersions version): a version outside what we serve (newer, or negative) is answered
   without reading the body, with a v0 body and response header v0, error UNSUPPORTED_VERSION
   (35) and the advertised ApiVersions range (Kafka's ``RequestContext.parseRequest`` /
   ``ApiVersionsRequest.getErrorResponse``; the protocol reference, section 3.2).
3. A frame handler (a handler module's ``FRAME_HANDLERS``: the compiled decoders of Fetch and
   Produce) may take the request here, from its frame, and answer through step 4
   (``run_handler``: Fetch) or with ``frame_answer`` (the same marks and log: Produce, whose
   answer is encoded with its throttle time); one that raises is answered as a handler that
   raised (step 4). When it returns None (not its case), the body is decoded, into the API's
   generated request class (the one its handler's ``RequestContext[...]`` names). A body that
   does not decode closes the connection: Kafka's ``RequestContext.parseRequest`` turns any
   parse failure into an InvalidRequestException, which the SocketServer answers by closing.
   Bytes left over after a complete body are ignored, as Kafka's generated readers ignore
   them: librdkafka 2.x sends a flexible "all topics" Metadata request with three such bytes
   (its array-count placeholder).
4. The handler runs: ``await handler(context) -> body``. It returns the response body (encoded
   here at the request's version), or a channel response itself (``NoResponse`` for acks=0,
   ``SendResponse`` with file slices for Fetch). A handler may raise a ``KafkaError`` to answer
   with that error; any exception is answered like that, with UNKNOWN_SERVER_ERROR for
   non-Kafka exceptions (Kafka's ``KafkaApis.handle`` -> ``RequestHandlerHelper.handleError``):
   the body is ``error_response(...)``, the API's own error shape. Where Kafka has no error
   response (a Produce with acks=0) the connection is closed, as Kafka's
   ``sendErrorOrCloseConnection`` does; if even the error response cannot be encoded, too.

Request metrics: when the request carries ``timings`` (the broker records metrics),
``handle`` marks when it began (Kafka's dequeue time), when the handler returned, and, for a
``Parked`` answer, when ``finish()`` completed; the connection task adds the rest
(:mod:`kafkapy.server.metrics.request_metrics`).

Advertised versions: an API is advertised, and served, only when it has a handler ("advertise
only what is fully implemented", DESIGN.md), at its range in ``RECOMMENDED_VERSIONS``.

The handlers are the ``HANDLERS`` tables of the modules in ``HANDLER_MODULES``, imported here
plainly: they depend only on the leaf :mod:`kafkapy.server.request_context` (the handler
contract), never on this module.

Error bodies come from :mod:`kafkapy.server.error_response` (Kafka's getErrorResponse per
API).

Concurrency: ``handle`` is called from any number of handler tasks at once (the
``KafkaRequestHandlerPool``); this module keeps no per-request state. Everything runs on the
broker's Trio loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from kafkapy import _codec
from kafkapy.errors import (
    KafkaError,
    UnsupportedVersionError,
)
from kafkapy.network.request_channel import (
    CloseConnection,
    NoResponse,
    Request,
    Response,
    SendResponse,
)
from kafkapy.protocol import (
    API_KEYS,
    ApiKey,
    decode_request_header,
    encode_response,
)
from kafkapy.protocol.codec import message_plan
from kafkapy.protocol.message_classes import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    RequestHeader,
)
from kafkapy.protocol.schema import Versions
from kafkapy.server.client_quota_manager import DEFAULT_PRINCIPAL, NANOS_TO_PERCENTAGE
from kafkapy.server.error_response import error_response
from kafkapy.server.handlers import (
    acls,
    api_versions,
    client_quotas,
    cluster,
    config_resources,
    configs,
    consumer_group_protocol,
    controller,
    describe_topic_partitions,
    features,
    fetch,
    group_and_offsets,
    list_offsets,
    metadata,
    produce,
    replica,
    sasl,
    scram,
    topics_admin,
    transaction,
    update_metadata,
)
from kafkapy.server.request_context import (
    FrameHandler,
    Handler,
    NowHandler,
    Parked,
    RequestContext,
)

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer

__all__ = ["CLUSTER_HANDLER_MODULES", "HANDLER_MODULES", "RECOMMENDED_VERSIONS", "KafkaApis",
           "default_frame_handlers", "default_handlers", "default_now_handlers",
           "error_response_frame"]

log = logging.getLogger(__name__)

# The version range kafkapy advertises for each API once it has a handler: the "Rec" column of
# the protocol reference kept with kafkapy's design notes (kafka-protocol.md), section 3.1.
# They avoid topic-ID-only versions and KIP-890 "transactions v2", and keep low minimums for old
# librdkafka feature checks and aiokafka's non-flexible versions. WriteTxnMarkers 27
# ("internal" in the reference) is advertised at v1 as Kafka 4 brokers do: a coordinator
# elsewhere, or a tool, may send it (this broker's own coordinator writes its markers
# directly). The
# reference's "don't advertise" for ConsumerGroupHeartbeat 68 held until KIP-848 was
# implemented (kafkapy/coordinator/group/consumer_group_coordinator.py); 68 and 69 are advertised at
# Kafka 4.x's ranges. DescribeTopicPartitions (75, "optional") is served as a Kafka 3.8+
# (KRaft) broker serves it. DescribeQuorum (55) is declared but not served: ZooKeeper-mode
# brokers neither advertise nor serve it (its listeners are KRaft's "broker" and
# "controller").
RECOMMENDED_VERSIONS: Mapping[int, tuple[int, int]] = MappingProxyType({
    # from 0 as Kafka 3.x: v0-2 carry message formats 0/1, converted on append
    ApiKey.PRODUCE: (0, 11),
    ApiKey.FETCH: (0, 12),                      # 0-3 down-convert; 13+ needs topic IDs
    ApiKey.LIST_OFFSETS: (0, 10),
    ApiKey.METADATA: (0, 12),                   # 13 adds only a top-level ErrorCode
    ApiKey.OFFSET_COMMIT: (2, 9),               # 10 uses topic IDs
    ApiKey.OFFSET_FETCH: (1, 9),
    ApiKey.FIND_COORDINATOR: (0, 5),            # 6 is share groups
    ApiKey.JOIN_GROUP: (0, 9),                  # from 0, as Kafka 4.1 (4.0's 2-9 broke old
                                                # librdkafka)
    ApiKey.HEARTBEAT: (0, 4),
    ApiKey.LEAVE_GROUP: (0, 5),
    ApiKey.SYNC_GROUP: (0, 5),
    ApiKey.DESCRIBE_GROUPS: (0, 5),
    ApiKey.LIST_GROUPS: (0, 5),
    ApiKey.SASL_HANDSHAKE: (0, 1),
    ApiKey.API_VERSIONS: (0, 4),
    ApiKey.CREATE_TOPICS: (2, 7),
    ApiKey.DELETE_TOPICS: (1, 5),               # 6 uses topic IDs
    ApiKey.DELETE_RECORDS: (0, 2),
    ApiKey.INIT_PRODUCER_ID: (0, 4),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (2, 4),
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 4),       # 4 is broker-to-broker (KIP-890)
    ApiKey.ADD_OFFSETS_TO_TXN: (0, 3),
    ApiKey.END_TXN: (0, 4),                     # 5 is transactions v2
    # inter-broker; Kafka 4 serves v1 only (KIP-896), v2 is transactions v2
    ApiKey.WRITE_TXN_MARKERS: (1, 1),
    ApiKey.TXN_OFFSET_COMMIT: (0, 3),
    # Kafka 3.x's ranges (4.0 removed v0, KIP-896); v3 adds the USER resource type
    ApiKey.DESCRIBE_ACLS: (0, 3),
    ApiKey.CREATE_ACLS: (0, 3),
    ApiKey.DELETE_ACLS: (0, 3),
    ApiKey.DESCRIBE_CONFIGS: (1, 4),
    ApiKey.ALTER_CONFIGS: (0, 2),
    # not in the reference's table; Kafka 4.0-4.2 advertise 1-4 (v0 removed by KIP-896, v5
    # IsCordoned is 4.3)
    ApiKey.DESCRIBE_LOG_DIRS: (1, 4),
    ApiKey.SASL_AUTHENTICATE: (0, 2),
    ApiKey.CREATE_PARTITIONS: (0, 3),
    ApiKey.DELETE_GROUPS: (0, 2),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    ApiKey.OFFSET_DELETE: (0, 0),
    ApiKey.DESCRIBE_CLIENT_QUOTAS: (0, 1),      # KIP-546; Kafka 3.x's range
    ApiKey.ALTER_CLIENT_QUOTAS: (0, 1),
    ApiKey.DESCRIBE_CLUSTER: (0, 1),
    ApiKey.DESCRIBE_PRODUCERS: (0, 0),
    ApiKey.DESCRIBE_TRANSACTIONS: (0, 0),
    ApiKey.LIST_TRANSACTIONS: (0, 2),           # 1 DurationFilter (KIP-994), 2
                                                # TransactionalIdPattern
    ApiKey.CONSUMER_GROUP_HEARTBEAT: (0, 1),    # librdkafka (group.protocol=consumer) sends 1
    ApiKey.CONSUMER_GROUP_DESCRIBE: (0, 1),     # 1 adds MemberType (KIP-1099)
    ApiKey.LIST_CONFIG_RESOURCES: (0, 1),       # 0 is ListClientMetricsResources, 1 KIP-1142
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: (0, 0),   # KIP-966, paginated describe
    ApiKey.UPDATE_FEATURES: (0, 2),             # KIP-584; v2 answers all or nothing
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),     # KIP-554
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
    # ZooKeeper mode, answered by the active controller (handlers/controller.py)
    ApiKey.CONTROLLED_SHUTDOWN: (0, 3),
    ApiKey.ALTER_PARTITION: (0, 3),
    ApiKey.ELECT_LEADERS: (0, 2),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: (0, 0),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: (0, 0),
    # ZooKeeper mode, inter-broker (CLUSTER_HANDLER_MODULES): Kafka 3.4-3.9's range (v8
    # adds IsKRaftController); kafkapy's controller sends v7
    ApiKey.UPDATE_METADATA: (0, 8),
    ApiKey.LEADER_AND_ISR: (0, 7),
    ApiKey.STOP_REPLICA: (0, 4),
    ApiKey.ALTER_REPLICA_LOG_DIRS: (0, 2),      # Kafka 3.x's range (4.0 removed v0, KIP-896)
})

# Not subject to the request_percentage quota (Kafka exempts ApiVersions and cluster actions).
_QUOTA_EXEMPT = frozenset({ApiKey.API_VERSIONS, ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA,
                           ApiKey.UPDATE_METADATA, ApiKey.CONTROLLED_SHUTDOWN,
                           ApiKey.ALTER_PARTITION, ApiKey.WRITE_TXN_MARKERS})

# Every module of kafkapy/server/handlers, each exporting ``HANDLERS: {api_key: handler}``.
HANDLER_MODULES = (api_versions, metadata, produce, fetch, list_offsets, topics_admin, configs,
                   cluster, group_and_offsets, consumer_group_protocol, transaction,
                   describe_topic_partitions, config_resources, features, acls, sasl,
                   scram, client_quotas)
# The inter-broker APIs of ZooKeeper mode (the controller's requests to brokers, the brokers'
# requests to the controller): served, and advertised, only by a broker with
# zookeeper.connect, as Kafka 3.x's ZooKeeper-mode brokers do.
CLUSTER_HANDLER_MODULES = (replica, update_metadata, controller)


def default_handlers(cluster: bool = False) -> dict[int, Handler]:
    """``{api_key: handler}`` from every module in ``HANDLER_MODULES`` (and, for a broker of a
    ZooKeeper cluster, ``CLUSTER_HANDLER_MODULES``).

    Raises:
        ValueError: two modules handle the same API key.
    """
    handlers: dict[int, Handler] = {}
    for module in HANDLER_MODULES + (CLUSTER_HANDLER_MODULES if cluster else ()):
        for key, handler in module.HANDLERS.items():
            if key in handlers:
                raise ValueError(f"API key {key} is handled by two modules (the second is "
                                 f"{module.__name__})")
            handlers[key] = handler
    return handlers


def default_frame_handlers(cluster: bool = False) -> dict[int, FrameHandler]:
    """``{api_key: frame handler}`` from the ``FRAME_HANDLERS`` of the same modules (those
    that have one): the common cases read from the frame before the generic decode.

    Raises:
        ValueError: two modules have a frame handler for the same API key.
    """
    return _module_table("FRAME_HANDLERS", cluster)


def default_now_handlers(cluster: bool = False) -> dict[int, NowHandler]:
    """``{api_key: now-handler}`` from the ``NOW_HANDLERS`` of the same modules (those that
    have one): the common cases answered in the poll task's step (``KafkaApis.answer_now``).

    Raises:
        ValueError: two modules have a now-handler for the same API key.
    """
    return _module_table("NOW_HANDLERS", cluster)


def _module_table(name: str, cluster: bool) -> dict[int, Any]:
    table: dict[int, Any] = {}
    for module in HANDLER_MODULES + (CLUSTER_HANDLER_MODULES if cluster else ()):
        for key, handler in getattr(module, name, {}).items():
            if key in table:
                raise ValueError(f"API key {key} is in the {name} of two modules (the second "
                                 f"is {module.__name__})")
            table[key] = handler
    return table


class KafkaApis:
    """The dispatch table: ``{api_key: handler}``, advertised at ``RECOMMENDED_VERSIONS``.

    ``KafkaApis()`` serves the handlers of :mod:`kafkapy.server.handlers` (and their frame
    handlers); ``handlers`` replaces them (tests; then ``frame_handlers`` gives frame
    handlers), ``recommended`` replaces the version table.

    Raises:
        ValueError: a handler for an API the protocol layer does not declare, for an API with
            no recommended range, or a range outside what the protocol layer can decode.
    """

    def __init__(self, handlers: Mapping[int, Handler] | None = None, *,
                 recommended: Mapping[int, tuple[int, int]] = RECOMMENDED_VERSIONS,
                 server: KafkaServer | None = None,
                 frame_handlers: Mapping[int, FrameHandler] | None = None,
                 now_handlers: Mapping[int, NowHandler] | None = None) -> None:
        self._server = server
        cluster = server is not None and server.config.zookeeper_connect is not None
        table = dict(default_handlers(cluster) if handlers is None else handlers)
        advertised: dict[int, Versions] = {}
        for key in sorted(table):
            api = API_KEYS.get(key)
            if api is None:
                raise ValueError(f"a handler for API key {key}, which the protocol layer does "
                                 f"not declare")
            if key not in recommended:
                raise ValueError(f"a handler for {api.name} ({key}), which has no recommended "
                                 f"version range: it would never be advertised")
            low, high = recommended[key]
            if not (low <= high and low in api.versions and high in api.versions):
                raise ValueError(f"{api.name} ({key}): range {low}-{high} is not within the "
                                 f"versions the protocol layer knows ({api.versions})")
            advertised[key] = Versions(low, high)
        self._handlers: Mapping[int, Handler] = MappingProxyType(table)
        # Frame handlers go with the modules' own handlers: a table given in their place
        # (tests) is served by its handlers alone unless frame handlers are given too.
        if frame_handlers is None:
            frame_handlers = default_frame_handlers(cluster) if handlers is None else {}
        self._frame_handlers: Mapping[int, FrameHandler] = MappingProxyType(
            {key: h for key, h in frame_handlers.items() if key in advertised})
        # Now-handlers likewise, and only for a broker (they use its components).
        if now_handlers is None:
            now_handlers = default_now_handlers(cluster) if handlers is None and \
                server is not None else {}
        self._now_handlers: Mapping[int, NowHandler] = MappingProxyType(
            {key: h for key, h in now_handlers.items() if key in advertised})
        self._advertised: Mapping[int, Versions] = MappingProxyType(advertised)
        self._api_versions = tuple((key, v.low, v.high) for key, v in advertised.items())

    @property
    def server(self) -> KafkaServer:
        """The broker's components (replica manager, metadata, config) for the handlers."""
        if self._server is None:
            raise RuntimeError("this KafkaApis serves no broker (a handler-only test setup)")
        return self._server

    @property
    def handlers(self) -> Mapping[int, Handler]:
        """The dispatch table (read-only)."""
        return self._handlers

    @property
    def api_versions(self) -> tuple[tuple[int, int, int], ...]:
        """What ApiVersions advertises: ``(api_key, min_version, max_version)`` by key."""
        return self._api_versions

    def advertised(self, api_key: int) -> Versions | None:
        """The advertised range of ``api_key``, None when it is not served."""
        return self._advertised.get(api_key)

    def answer_now(self, frame: bytes | bytearray) -> Response | None:
        """Step 0 (see the module doc): the request in ``frame`` answered in the caller's
        step by its API's now-handler, or None, with nothing changed, when it must take the
        channel (no now-handler for it, not its case, DEBUG request logging on). May raise
        only for a bug (the caller closes the connection then)."""
        if len(frame) < 2:
            return None
        key = frame[0] << 8 | frame[1]      # the INT16 API key
        handler = self._now_handlers.get(key)
        if handler is None or log.isEnabledFor(logging.DEBUG):
            return None
        return handler(self, frame, self._advertised[key])

    async def handle(self, request: Request) -> Response | Parked:
        """Decode, dispatch and answer one request (see the module doc). Never raises. A
        ``Parked`` answer's ``finish()`` returns the Response and never raises either."""
        marks = request.timings
        if marks is not None:           # request metrics: handling starts (dequeued)
            marks.append(time.monotonic_ns())
        frame = request.frame
        try:
            header, offset = decode_request_header(frame)
        except Exception as exc:
            return _close(request, f"unreadable request header: {_reason(exc)}")
        key, version = header.api_key, header.api_version
        api = API_KEYS[key]
        versions = self._advertised.get(key)
        if versions is None:
            return _close(request, f"{api.name} ({key}) v{version} is not served by this "
                                   f"broker")
        if version not in versions:
            if key == ApiKey.API_VERSIONS:
                return self._unsupported_api_versions(request, header)
            return _close(request, f"{api.name} ({key}) v{version} is outside the advertised "
                                   f"versions {versions}")
        frame_handler = self._frame_handlers.get(key)
        if frame_handler is not None:
            started_ns = time.perf_counter_ns()
            try:
                answer = await frame_handler(self, request, header, offset)
            except Exception as exc:    # answered as a generic handler that raised
                return self.frame_answer(request, header, offset, started_ns,
                                         self._frame_handler_failed(request, header, offset,
                                                                    exc, started_ns))
            if answer is not None:
                return answer
        try:
            body, end = _codec.decode_struct(message_plan(api.request, version), frame, offset)
        except Exception as exc:
            return _close(request, f"{api.name} v{version} request (correlation id "
                                   f"{header.correlation_id}) does not decode: {_reason(exc)}")
        if end != len(frame) and log.isEnabledFor(logging.DEBUG):
            log.debug("%s v%d request (correlation id %d) from %s: ignoring %d bytes after the "
                      "body", api.name, version, header.correlation_id,
                      request.connection_id, len(frame) - end)
        return await self.run_handler(RequestContext(header, body, request, self),
                                      self._handlers[key])

    async def run_handler(self, context: RequestContext[Any], handler: Handler
                          ) -> Response | Parked:
        """Step 4 of ``handle`` (see the module doc): run ``handler`` on ``context`` and answer
        (quotas, errors, request metrics marks). Frame handlers end with it too, so that a
        request read from its frame is answered exactly as a decoded one. Never raises."""
        request = context.request
        marks = request.timings
        header = context.header
        response: Response | Parked
        context.request_time.started_ns = time.perf_counter_ns()
        try:
            result = await handler(context)
            if isinstance(result, Parked):
                # The time the handler held its slot is recorded now, without the wait to
                # come; the throttle is applied when the answer is ready (Kafka throttles in
                # the response callback). A Fetch answers with it itself.
                throttle_ms = self.record_request_time(context)
                if marks is not None:   # local work done; the answer completes later
                    marks.append(time.monotonic_ns())
                return result.then(lambda get: self._finished(context, get, throttle_ms))
            throttle_ms = self._request_quota(context)
            response = _as_response(context, _throttled(result, throttle_ms))
        except Exception as exc:
            response = _answer_error(context, exc, self._request_quota(context))
        if marks is not None:           # local work done, answer complete (no remote time)
            marks.append(time.monotonic_ns())
        _log_completed(request, header, response)
        return response

    def frame_answer(self, request: Request, header: RequestHeader, offset: int,
                     started_ns: int, answer: Response | Parked) -> Response | Parked:
        """A frame handler's answer with what ``run_handler`` adds to a handler's: the
        request metrics' marks and the DEBUG request log; a ``Parked`` answer whose
        ``finish()`` raises is answered as a generic handler that raised (the body decoded
        for its error response; closed if it does not decode). For frame handlers that do
        not end with ``run_handler`` (Produce: its answer is encoded with its throttle time)."""
        marks = request.timings
        if marks is not None:           # local work done (the answer may complete later)
            marks.append(time.monotonic_ns())
        if isinstance(answer, Parked):
            def then(get: Callable[[], Any]) -> Response:
                try:
                    response: Response = get()
                except Exception as exc:
                    response = self._frame_handler_failed(request, header, offset, exc,
                                                          started_ns)
                if marks is not None:   # the parked answer is complete (remote time ends)
                    marks.append(time.monotonic_ns())
                return response
            return answer.then(then)
        _log_completed(request, header, answer)
        return answer

    def _frame_handler_failed(self, request: Request, header: RequestHeader, offset: int,
                              exc: Exception, started_ns: int) -> Response:
        api = API_KEYS[header.api_key]
        try:
            body, _ = _codec.decode_struct(message_plan(api.request, header.api_version),
                                           request.frame, offset)
        except Exception as failed:
            log.error("Unexpected error handling the %s v%d request (correlation id %d) from "
                      "%s; closing the connection (the body does not decode: %s)", api.name,
                      header.api_version, header.correlation_id, request.connection_id,
                      _reason(failed), exc_info=exc)
            return CloseConnection()
        context = RequestContext(header, body, request, self)
        if not context.request_time.recorded:
            context.request_time.started_ns = started_ns
        return _answer_error(context, exc, self._request_quota(context))

    def record_request_time(self, context: RequestContext[Any]) -> int:
        """request_percentage (Kafka's ``ClientRequestQuotaManager
        .maybeRecordAndGetThrottleTimeMs``): the time the request has held its handler so far
        (``time.perf_counter_ns()`` since its handler started: see ``client_quota_manager``),
        as a percentage of a second, recorded for the client once; the request-time throttle
        (0: none), bounded by one quota window as Kafka bounds it. The caller throttles
        (mutes the connection, ``throttle-time``): the larger of this and a byte-rate
        throttle wins. ApiVersions, the inter-broker APIs and followers' fetches are exempt,
        as Kafka exempts cluster actions, and so is an acks=0 Produce (no answer carries the
        throttle: Kafka's handleProduceRequest does not enforce the request quota for it)."""
        state = context.request_time
        if state.recorded:
            return state.throttle_ms
        state.recorded = True
        server = self._server
        key = context.api_key
        if server is None or key in _QUOTA_EXEMPT or (
                key == ApiKey.FETCH and context.body.replica_id >= 0) or (
                key == ApiKey.PRODUCE and context.body.acks == 0):
            return 0
        handler_ns = time.perf_counter_ns() - state.started_ns
        throttle_ms = server.request_quotas.record_and_get_throttle_time_ms(
            getattr(context, "principal", DEFAULT_PRINCIPAL), context.client_id,
            handler_ns * NANOS_TO_PERCENTAGE)
        state.throttle_ms = min(throttle_ms, server.config.quota_window_size_seconds * 1000)
        return state.throttle_ms

    def _request_quota(self, context: RequestContext[Any]) -> int:
        """Kafka's ``sendResponseMaybeThrottle``: the request-time throttle recorded now
        (unless a handler did: the Fetch handler answers with its own throttle, the larger
        of its byte-rate and request-time ones), the connection muted for it, its
        ``throttle-time`` recorded; it goes in the answer's ``throttle_time_ms``."""
        if context.request_time.recorded:
            return 0
        throttle_ms = self.record_request_time(context)
        self._throttle(context, throttle_ms)
        return throttle_ms

    def _throttle(self, context: RequestContext[Any], throttle_ms: int) -> None:
        if throttle_ms > 0 and self._server is not None:
            self._server.request_quotas.throttle(
                context.request, getattr(context, "principal", DEFAULT_PRINCIPAL),
                context.client_id, throttle_ms)

    def _finished(self, context: RequestContext[Any], get: Callable[[], Any],
                  throttle_ms: int) -> Response:
        """A parked handler's answer (``get()`` returns its result or raises), with its
        request-time throttle and the request metrics' last mark."""
        if context.api_key in (ApiKey.FETCH, ApiKey.PRODUCE):
            # The handler answers with (and throttles for) the larger of its byte-rate and
            # request-time throttles, as Kafka's response callbacks do.
            throttle_ms = 0
        try:
            result = get()
            self._throttle(context, throttle_ms)
            response = _as_response(context, _throttled(result, throttle_ms))
        except Exception as exc:
            self._throttle(context, throttle_ms)
            response = _answer_error(context, exc, throttle_ms)
        marks = context.request.timings
        if marks is not None:           # the parked answer is complete (remote time ends)
            marks.append(time.monotonic_ns())
        return response

    def _unsupported_api_versions(self, request: Request, header: RequestHeader) -> Response:
        log.debug("ApiVersions v%d from %s is newer than this broker's: answering "
                  "UNSUPPORTED_VERSION in v0", header.api_version, request.connection_id)
        error = UnsupportedVersionError(f"ApiVersions v{header.api_version} is not supported")
        body = error_response(ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), error)
        assert isinstance(body, ApiVersionsResponse)
        # Kafka lists every ApiVersions version it knows; a broker that advertises fewer than
        # the protocol layer knows must list those, or clients would retry a version that
        # lands here again.
        versions = self._advertised[ApiKey.API_VERSIONS]
        (entry,) = body.api_keys
        entry.min_version, entry.max_version = versions.low, versions.high
        return SendResponse(encode_response(ApiKey.API_VERSIONS, 0, header.correlation_id, body))


def error_response_frame(frame: bytes | bytearray, error: KafkaError) -> bytes | None:
    """The response frame answering request ``frame`` with ``error`` (the API's error shape,
    Kafka's ``AbstractRequest.getErrorResponse``), or None when the request does not decode or
    the API has no error response. For the SASL authenticator: a request other than
    SaslAuthenticate during authentication is answered ILLEGAL_SASL_STATE."""
    try:
        header, offset = decode_request_header(frame)
        api = API_KEYS[header.api_key]
        body, _ = _codec.decode_struct(message_plan(api.request, header.api_version), frame,
                                       offset)
        answer = error_response(header.api_key, header.api_version, body, error)
        if answer is None:
            return None
        return encode_response(header.api_key, header.api_version, header.correlation_id,
                               answer)
    except Exception:
        return None


def _log_completed(request: Request, header: RequestHeader, answer: Response) -> None:
    if log.isEnabledFor(logging.DEBUG):
        log.debug("Completed %s v%d request (correlation id %d, %d bytes) from %s "
                  "(principal %s, %s) in %.3f ms: %s", API_KEYS[header.api_key].name,
                  header.api_version, header.correlation_id, len(request.frame),
                  request.connection_id, request.principal, request.security_protocol,
                  (time.monotonic_ns() - request.receive_time_ns) / 1e6,
                  type(answer).__name__)


def _reason(exc: BaseException) -> str:
    return exc.message if isinstance(exc, KafkaError) else f"{type(exc).__name__}: {exc}"


def _close(request: Request, reason: str) -> CloseConnection:
    log.warning("Closing connection %s from %s:%d on listener %s: %s", request.connection_id,
                request.client_host, request.client_port, request.listener_name, reason)
    return CloseConnection()


def _throttled(result: Any, throttle_ms: int) -> Any:
    """A response body with its ThrottleTimeMs raised to ``throttle_ms`` (the larger of a
    byte-rate and a request-time throttle is reported, as in Kafka)."""
    if throttle_ms and hasattr(result, "throttle_time_ms"):
        result.throttle_time_ms = max(result.throttle_time_ms, throttle_ms)
    return result


def _as_response(context: RequestContext[Any], result: Any) -> Response:
    if isinstance(result, SendResponse | NoResponse | CloseConnection):
        return result
    return SendResponse(encode_response(context.api_key, context.api_version,
                                        context.correlation_id, result))


def _answer_error(context: RequestContext[Any], exc: Exception,
                  throttle_ms: int = 0) -> Response:
    """The API's error response to ``context`` for ``exc`` (one log line either way), with
    the request-time throttle ``throttle_ms`` (Kafka's ``sendErrorResponseMaybeThrottle``)."""
    api = API_KEYS[context.api_key]
    what = (f"{api.name} v{context.api_version} request (correlation id "
            f"{context.correlation_id}) from {context.connection_id}")
    response: Response
    try:
        body = _throttled(error_response(context.api_key, context.api_version, context.body,
                                         exc), throttle_ms)
        if body is None:
            response, outcome = CloseConnection(), "closing the connection (no response expected)"
        else:
            response = SendResponse(encode_response(context.api_key, context.api_version,
                                                    context.correlation_id, body))
            outcome = "answered with the error response"
    except Exception as failed:
        response = CloseConnection()
        outcome = f"closing the connection: no error response ({_reason(failed)})"
    if isinstance(exc, KafkaError):
        log.info("%s for the %s; %s", exc, what, outcome)
    else:
        log.error("Unexpected error handling the %s; %s", what, outcome, exc_info=exc)
    return response
