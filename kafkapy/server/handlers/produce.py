"""Produce (API key 0): append a client's record batches.

Kafka 3.x's ``KafkaApis.handleProduceRequest`` for v0-11:

- ``Acks`` must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS on every partition).
- Per partition, before the log sees it (header bytes only, no record is decoded): exactly
  one batch of magic 2 (INVALID_RECORD otherwise, older magics included, as Kafka's
  ``ProduceRequest.validateRecords``), base offset 0 and no control batch (INVALID_RECORD),
  zstd only from v7
  (UNSUPPORTED_COMPRESSION_TYPE). Produce v0-2 (old clients: librdkafka with
  ``broker.version.fallback`` < 0.11, kafka-python pinned to ``api_version`` (0, 10)) may
  carry legacy message sets (magic 0/1), which are converted into one magic 2 batch here, as
  Kafka 3.x's LogValidator converts them on append (``_legacy.up_convert``: the topic's
  ``compression.type``, timestamp type and compaction apply); a magic 2 batch in v0-2 is
  checked as in v3+. Then the log checks the CRC (CORRUPT_MESSAGE), the size
  against ``max.message.bytes`` (MESSAGE_TOO_LARGE), the record count (INVALID_RECORD) and the
  timestamps (INVALID_TIMESTAMP), assigns offsets and appends. A partition this broker only
  follows, or one of the cluster it does not host: NOT_LEADER_OR_FOLLOWER; one the cluster
  does not have: UNKNOWN_TOPIC_OR_PARTITION. acks=all with an ISR below min.insync.replicas:
  NOT_ENOUGH_REPLICAS before the append. One partition's error never fails another's.
- Transactional batches (KIP-890 part 1, as Kafka 3.6+ verifies them): the request must carry
  a transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED otherwise), and the transaction
  coordinator must have the partition in that id's open transaction for the batch's producer
  id and epoch (INVALID_PRODUCER_ID_MAPPING, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE
  otherwise), so a zombie or a confused client cannot leave a transaction open that no
  coordinator knows to end (a "hanging" transaction would hold the LSO back forever). A
  coordinator on another broker is asked with AddPartitionsToTxn v4, for the first batch of a
  transaction on the partition only (``add_partitions_to_txn_manager``); one that cannot
  answer now gives NOT_ENOUGH_REPLICAS, retried by every client.
- Authorization (with ``authorizer.class.name``, Kafka's order): a request with a
  transactional id needs WRITE on it (else the whole request is
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: Kafka checks it when the records are
  transactional); every topic needs WRITE (else TOPIC_AUTHORIZATION_FAILED on its partitions,
  before the topic's existence is looked at; the log is not touched).
- acks=0: no response at all, unless a partition failed: then the connection is closed so the
  producer notices (Kafka's ``closeConnection`` for acks=0 errors).
- acks=-1 waits as a DelayedProduce until the high watermark covers the append (at once with a
  single replica; NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below
  min.insync.replicas meanwhile, REQUEST_TIMED_OUT at the timeout); the handler task is not
  held meanwhile (``Parked``).

The common case has a compiled path (``FRAME_HANDLERS``: ``produce_frame``): Produce v3-11
with acks -1, 0 or 1 on a broker without an authorizer, transactional or not, is decoded from
its frame by ``kafkapy._produce`` (the batch checks are ``_records``'s, called from there) and
answered with the response that module encodes from the replica manager's results; no
generated message object is built. Everything else the handler does happens the same way
there, through the same functions (not-hosted errors, transactional verification, the
append, flush and acks=-1 parking, the byte-rate and request-time quotas); anything else
(v0-2, an authorizer, acks outside -1/0/1, a body the compiled decoder refuses) goes to
``handle_produce``, which also closes the connection for a body that does not decode.

Before that, the commonest case is answered in the socket server's poll task's own step
(``NOW_HANDLERS``: ``produce_now``, called by ``KafkaApis.answer_now``) by one compiled call
from the whole frame to the answer (``_produce.produce_now``: the header, the body, the batch
checks, the partition look-ups, then ``ReplicaManager.append_records_now`` once, then the
encode), for a request with nothing to wait for, nothing to throttle and nothing refused
before the log: not transactional, no fsync on append, acks=-1 only on partitions that are
their only replica, every partition hosted and named once, every batch accepted by the
checks above, no authorizer and no client quota set. It returns None for every other
request, before anything changes, and ``produce_frame`` serves it.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs

from kafkapy import _produce
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidRecordError,
    InvalidRequestError,
    InvalidRequiredAcksError,
    InvalidTxnStateError,
    KafkaError,
    NotCoordinatorError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)
from kafkapy.log.log import Log
from kafkapy.network.request_channel import (
    CloseConnection,
    NoResponse,
    Request,
    Response,
    SendResponse,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    BatchIndexAndErrorMessage,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)
from kafkapy.protocol.records import BatchHeader, check_produce_batch, up_convert
from kafkapy.security.authorizer.acl import AclOperation, ResourceType
from kafkapy.server.add_partitions_to_txn_manager import needs_verification
from kafkapy.server.auth_helper import authorize, filter_by_authorized
from kafkapy.server.client_quota_manager import DEFAULT_PRINCIPAL
from kafkapy.server.replica_manager import ProducePartitionResult
from kafkapy.server.request_context import (
    FrameHandler,
    Handler,
    NowHandler,
    Parked,
    RequestContext,
)

if TYPE_CHECKING:
    from kafkapy.protocol.message_classes import RequestHeader
    from kafkapy.protocol.schema import Versions
    from kafkapy.server.kafka_apis import KafkaApis
    from kafkapy.server.kafka_server import KafkaServer

# The request log's logger (KafkaApis's): its DEBUG lines about a request come from one place.
log = logging.getLogger("kafkapy.server.kafka_apis")

__all__ = ["FRAME_HANDLERS", "HANDLERS", "check_batch_header", "handle_produce",
           "produce_frame"]

_Answer: TypeAlias = ProduceResponse | NoResponse | CloseConnection

# compression.type -> the codec a converted batch is written with (-1: the producer's).
_TARGET_CODEC = {"producer": -1, "uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3,
                 "zstd": 4}


def check_batch_header(records: object, version: int,
                       log: Log | None = None) -> tuple[memoryview, BatchHeader]:
    """The checks Kafka's produce path makes on the bytes before the log (see the module
    doc), in one compiled call. Returns the records as a memoryview and their header view.
    Produce v0-2's legacy message sets come back converted for ``log``'s topic."""
    if not isinstance(records, memoryview | bytes | bytearray):
        # A decoded request's records are a view into its frame; None is a null field.
        raise _null_records()
    if version < 3 and log is not None:
        config = log.config
        converted = up_convert(records, _TARGET_CODEC[config.compression_type],
                               config.log_append_time, config.compact, log.clock(),
                               config.message_timestamp_before_max_ms,
                               config.message_timestamp_after_max_ms)
        if converted is not None:
            return memoryview(converted), BatchHeader(converted)
    return memoryview(records).cast("B"), check_produce_batch(records, version)


def _null_records() -> InvalidRecordError:
    return InvalidRecordError("the produce request carries null records")


def _produce_throttle(server: KafkaServer, request: Request, client_id: str,
                      request_throttle_ms: int) -> int:
    """The client quotas of a Produce, as Kafka's sendResponseCallback: the request's size
    recorded against producer_byte_rate when it is answered; the larger of that throttle and
    ``request_throttle_ms`` (request_percentage, already recorded) goes in the answer
    (KIP-219), and only the larger one mutes the connection and is recorded in its quota's
    throttle-time (the request quota's on a tie)."""
    quotas = server.produce_quotas
    principal = getattr(request, "principal", DEFAULT_PRINCIPAL)
    bandwidth_ms = quotas.record_and_get_throttle_time_ms(principal, client_id,
                                                          len(request.frame))
    if bandwidth_ms > request_throttle_ms:
        quotas.throttle(request, principal, client_id, bandwidth_ms)
        return bandwidth_ms
    server.request_quotas.throttle(request, principal, client_id, request_throttle_ms)
    return request_throttle_ms


def _verify(context: RequestContext[Any], transactional_id: str | None, tp: TopicPartition,
            log: Log, header: BatchHeader,
            asks: dict[tuple[int, int], list[TopicPartition]]) -> None:
    """A transactional batch's verification (KIP-890), both paths': here (raises what the
    producer gets), or noted in ``asks`` for the coordinator on another broker when the
    partition has no open transaction of the batch's producer epoch yet."""
    if header.is_transactional and \
            not _verified_here(context, transactional_id, tp, header) and \
            needs_verification(log, header.producer_id, header.producer_epoch):
        asks.setdefault((header.producer_id, header.producer_epoch), []).append(tp)


def _verified_here(context: RequestContext[Any], transactional_id: str | None,
                   tp: TopicPartition, header: BatchHeader) -> bool:
    """Verify a transactional batch with this broker's transaction coordinator (raises the
    error the producer gets); False when the id's coordinator is another broker of the
    cluster (then ``_verify_elsewhere``)."""
    if transactional_id is None:
        raise TransactionalIdAuthorizationFailedError(
            "a transactional batch needs the request's transactional id")
    try:
        context.server.transaction_coordinator.verify_partition(
            transactional_id, header.producer_id, header.producer_epoch, tp)
    except NotCoordinatorError:
        if context.server.config.zookeeper_connect is None:
            raise
        return False
    return True


async def _verify_elsewhere(context: RequestContext[Any], transactional_id: str,
                            asks: dict[tuple[int, int], list[TopicPartition]],
                            entries: dict[TopicPartition, memoryview | bytes | bytearray],
                            early: dict[TopicPartition, KafkaError]) -> None:
    """Ask the coordinator on another broker (AddPartitionsToTxn v4, see
    ``add_partitions_to_txn_manager``); the partitions that fail move from ``entries`` to
    ``early`` with their error. Must be the last await before the append: the guards are
    checked (and released) here, and a marker appended after that would not be seen."""
    manager = context.server.add_partitions_to_txn_manager
    guards: list[tuple[TopicPartition, int, object]] = []
    for (producer_id, epoch), tps in asks.items():
        guards += [(tp, producer_id, manager.start_guard(tp, producer_id)) for tp in tps]
        failed = await manager.verify(transactional_id, producer_id, epoch, tps)
        for tp, error in failed.items():
            early[tp] = error
            entries.pop(tp, None)
    for tp, producer_id, guard in guards:
        if tp in entries and not manager.guard_holds(tp, producer_id, guard):
            early[tp] = InvalidTxnStateError(
                f"{tp}: the transaction ended while the partition was being verified")
            entries.pop(tp)
        manager.end_guard(tp, producer_id, guard)


async def handle_produce(context: RequestContext[ProduceRequest]) -> _Answer | Parked:
    version = context.api_version
    body = context.body
    acks = body.acks
    if acks not in (-1, 0, 1):
        raise InvalidRequiredAcksError(f"acks must be -1, 0 or 1, not {acks}")
    rm = context.server.replica_manager
    early: dict[TopicPartition, KafkaError] = {}
    entries: dict[TopicPartition, memoryview | bytes | bytearray] = {}
    order: list[tuple[str, list[int]]] = []
    asks: dict[tuple[int, int], list[TopicPartition]] = {}     # (producer id, epoch) -> tps
    denied: set[str] = set()
    if context.server.authorizer is not None:
        if body.transactional_id is not None and not authorize(
                context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                body.transactional_id):
            raise TransactionalIdAuthorizationFailedError(
                f"Transactional Id authorization failed: {body.transactional_id}")
        names = {t.name for t in body.topic_data}
        denied = names - filter_by_authorized(context, AclOperation.WRITE, ResourceType.TOPIC,
                                              names)
    for topic in body.topic_data:
        indexes = []
        for part in topic.partition_data:
            tp = TopicPartition(topic.name, part.index)
            indexes.append(part.index)
            if topic.name in denied:
                early[tp] = TopicAuthorizationFailedError(
                    f"Not authorized to access topics: [{topic.name}]")
                continue
            partition = rm.partitions.get(tp)
            if partition is None:
                early[tp] = rm.not_hosted_error(tp)
                continue
            try:
                view, header = check_batch_header(part.records, version, partition.log)
                _verify(context, body.transactional_id, tp, partition.log, header, asks)
                entries[tp] = view
            except KafkaError as e:
                early[tp] = e
        order.append((topic.name, indexes))
    if asks:
        assert body.transactional_id is not None          # _verified_here checked it
        await _verify_elsewhere(context, body.transactional_id, asks, entries, early)

    def respond(results: dict[TopicPartition, ProducePartitionResult]) -> _Answer:
        for tp, error in early.items():
            results[tp] = ProducePartitionResult(error=error)
        # The request-time throttle joins the byte-rate one here (KafkaApis then adds
        # none: it is recorded, and a Produce's parked answer is not throttled again).
        throttle_ms = _produce_throttle(context.server, context.request, context.client_id,
                                        context.apis.record_request_time(context))
        if acks == 0:
            if any(r.error is not None for r in results.values()):
                return CloseConnection()
            return NoResponse()
        response = _response(version, order, results)
        response.throttle_time_ms = throttle_ms
        return response

    if any(rm.partitions[tp].log.flushes_on_append for tp in entries):
        # flush.messages / flush.ms: the append may wait for an fsync in a worker thread
        # before it is answered. Parked, so that the wait is the connection's own (as a
        # Kafka handler thread's): the socket server's poll task goes on serving the others.
        async def append_and_respond() -> _Answer:
            results, parked = await rm.append_records(body.timeout_ms, acks, entries)
            if parked is not None:
                await parked.wait()
            return respond(results)
        return Parked(append_and_respond)
    results, parked = await rm.append_records(body.timeout_ms, acks, entries)
    if parked is None:
        return respond(results)

    return Parked.after(parked, lambda: respond(results))


def _response(version: int, order: list[tuple[str, list[int]]],
              results: dict[TopicPartition, ProducePartitionResult]) -> ProduceResponse:
    topics = []
    for name, indexes in order:
        partitions = []
        for index in indexes:
            r = results[TopicPartition(name, index)]
            error = r.error
            partitions.append(PartitionProduceResponse(
                index=index, error_code=0 if error is None else error.code,
                base_offset=r.base_offset if error is None else -1,
                log_append_time_ms=r.log_append_time if error is None else -1,
                log_start_offset=r.log_start_offset if error is None or r.record_errors
                else -1,
                record_errors=[BatchIndexAndErrorMessage(batch_index=e.batch_index,
                                                         batch_index_error_message=e.message)
                               for e in r.record_errors],
                error_message=None if error is None else
                r.error_message if r.record_errors else error.message))
        topics.append(TopicProduceResponse(name=name, partition_responses=partitions))
    return ProduceResponse(responses=topics, throttle_time_ms=0)


@attrs.frozen
class FastProduce:
    """The request-level fields of a Produce served by ``produce_frame``: the body of its
    ``RequestContext`` (what the request-time quota reads of it: ``acks``)."""

    acks: int
    timeout_ms: int


@attrs.define
class _FramePlan:
    """A Produce v3-11 read from its frame by ``_plan_frame``, before anything changed: the
    partitions to append (``entries``), those answered with an error already (``early``),
    the transactional batches still to verify, and the answer's order (``layout``)."""

    version: int
    correlation_id: int
    transactional_id: str | None
    acks: int
    timeout_ms: int
    layout: list[tuple[str, list[tuple[int, TopicPartition]]]]
    entries: dict[TopicPartition, memoryview | bytes | bytearray]
    early: dict[TopicPartition, KafkaError]
    transactional: list[tuple[TopicPartition, Log, BatchHeader]]
    # Some log fsyncs on append (flush.messages / flush.ms): the append may wait.
    flushes: bool
    # For acks=all, a partition with other replicas: the answer may wait for them.
    waits_for_replicas: bool
    # Where the body ends in the frame (bytes after it are ignored).
    end: int

    def answer(self, results: dict[TopicPartition, ProducePartitionResult],
               throttle_ms: int) -> Response:
        """The answer from the append's ``results`` (and ``early``)."""
        for tp, error in self.early.items():
            results[tp] = ProducePartitionResult(error=error)
        if self.acks == 0:
            if any(r.error is not None for r in results.values()):
                return CloseConnection()
            return NoResponse()
        answer = [(name, [(index, results[tp]) for index, tp in tps])
                  for name, tps in self.layout]
        return SendResponse(_produce.encode_produce_response(
            self.version, self.correlation_id, throttle_ms, answer))


def _plan_frame(server: KafkaServer, frame: bytes | bytearray, header: RequestHeader,
                offset: int) -> _FramePlan | None:
    """The compiled decode and the checks that need no wait (see the module doc); None when
    the request is not the compiled path's case."""
    version = header.api_version
    if not _produce.MIN_VERSION <= version <= _produce.MAX_VERSION or \
            server.authorizer is not None:
        return None
    try:
        transactional_id, acks, timeout_ms, topics, end = _produce.decode_produce(
            frame, offset, version)
    except InvalidRequestError:
        return None             # handle_produce's decode closes the connection, and logs why
    if acks not in (-1, 0, 1):
        return None
    rm = server.replica_manager
    partitions = rm.partitions
    plan = _FramePlan(version, header.correlation_id, transactional_id, acks, timeout_ms,
                      [], {}, {}, [], False, False, end)
    early, entries = plan.early, plan.entries
    for name, parts in topics:
        tps = []
        for index, view, checked in parts:
            tp = TopicPartition(name, index)
            tps.append((index, tp))
            partition = partitions.get(tp)
            if partition is None:
                early[tp] = rm.not_hosted_error(tp)
            elif view is None:
                early[tp] = _null_records()
            elif isinstance(checked, KafkaError):
                early[tp] = checked
            else:
                assert checked is not None          # records present: checked
                entries[tp] = view
                if checked.is_transactional:
                    plan.transactional.append((tp, partition.log, checked))
                if partition.log.flushes_on_append:
                    plan.flushes = True
                if acks == -1 and not partition.sole_replica:
                    plan.waits_for_replicas = True
        plan.layout.append((name, tps))
    return plan


def produce_now(apis: KafkaApis, frame: bytes | bytearray, versions: Versions
                ) -> Response | None:
    """The common Produce answered in the caller's step (``NOW_HANDLERS``, see
    ``request_context``), from frame to answer in one compiled call (``_produce.produce_now``,
    whose doc lists its case): not transactional, nothing to wait for (no fsync on append,
    acks=all only on partitions without other replicas), every partition hosted here and
    its batch accepted before the log, no authorizer and no client quota set on the broker,
    so that none can throttle it. None, before anything changes, for every other request."""
    server = apis.server
    # Any client quota set (of any kind: a superset of the two that apply, read at once)
    # may throttle: then the general path.
    if server.client_quota_store.configs or server.authorizer is not None:
        return None
    rm = server.replica_manager
    answer = _produce.produce_now(frame, versions.low, versions.high, rm.partitions,
                                  TopicPartition, rm.append_records_now)
    if answer is None:
        return None
    if isinstance(answer, bytes):
        return SendResponse(answer)
    return NoResponse() if answer == _produce.NO_RESPONSE else CloseConnection()


async def produce_frame(apis: KafkaApis, request: Request, header: RequestHeader,
                        offset: int) -> Response | Parked | None:
    """The compiled path of ``handle_produce`` (see the module doc): None when the request
    is not its case, decided before anything changes."""
    server = apis.server
    plan = _plan_frame(server, request.frame, header, offset)
    if plan is None:
        return None
    # From here on the request is this path's: nothing below returns None.
    if plan.end != len(request.frame) and log.isEnabledFor(logging.DEBUG):
        log.debug("Produce v%d request (correlation id %d) from %s: ignoring %d bytes after "
                  "the body", plan.version, plan.correlation_id, request.connection_id,
                  len(request.frame) - plan.end)
    context = RequestContext(header, FastProduce(plan.acks, plan.timeout_ms), request, apis)
    started_ns = context.request_time.started_ns = time.perf_counter_ns()
    rm = server.replica_manager
    entries, early = plan.entries, plan.early
    asks: dict[tuple[int, int], list[TopicPartition]] = {}     # (producer id, epoch) -> tps
    for tp, partition_log, checked in plan.transactional:
        try:
            _verify(context, plan.transactional_id, tp, partition_log, checked, asks)
        except KafkaError as e:
            early[tp] = e
            entries.pop(tp, None)   # a partition twice in the request fails here twice
    if asks:
        assert plan.transactional_id is not None    # _verified_here checked it
        await _verify_elsewhere(context, plan.transactional_id, asks, entries, early)
    flushes = plan.flushes and any(rm.partitions[tp].log.flushes_on_append for tp in entries)

    def respond(results: dict[TopicPartition, ProducePartitionResult],
                request_throttle_ms: int) -> Response:
        return plan.answer(results, _produce_throttle(server, request, context.client_id,
                                                      request_throttle_ms))

    if flushes:
        # The flush path of handle_produce: the fsync is waited for in the connection's
        # own task (Parked).
        async def append_and_respond() -> Response:
            results, parked = await rm.append_records(plan.timeout_ms, plan.acks, entries)
            if parked is not None:
                await parked.wait()
            return respond(results, request_throttle_ms)
        request_throttle_ms = apis.record_request_time(context)
        return apis.frame_answer(request, header, offset, started_ns,
                                 Parked(append_and_respond))
    results, parked = await rm.append_records(plan.timeout_ms, plan.acks, entries)
    request_throttle_ms = apis.record_request_time(context)
    if parked is None:
        return apis.frame_answer(request, header, offset, started_ns,
                                 respond(results, request_throttle_ms))

    return apis.frame_answer(request, header, offset, started_ns, Parked.after(
        parked, lambda: respond(results, request_throttle_ms)))


HANDLERS: dict[int, Handler] = {ApiKey.PRODUCE: handle_produce}
FRAME_HANDLERS: dict[int, FrameHandler] = {ApiKey.PRODUCE: produce_frame}
NOW_HANDLERS: dict[int, NowHandler] = {ApiKey.PRODUCE: produce_now}
