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
"""

from __future__ import annotations

from typing import TypeAlias

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidRecordError,
    InvalidRequiredAcksError,
    InvalidTxnStateError,
    KafkaError,
    NotCoordinatorError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)
from kafkapy.log.log import Log
from kafkapy.network.request_channel import CloseConnection, NoResponse
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
from kafkapy.server.request_context import Handler, Parked, RequestContext

__all__ = ["HANDLERS", "check_batch_header", "handle_produce"]

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
        raise InvalidRecordError("the produce request carries null records")
    if version < 3 and log is not None:
        config = log.config
        converted = up_convert(records, _TARGET_CODEC[config.compression_type],
                               config.log_append_time, config.compact, log.clock(),
                               config.message_timestamp_before_max_ms,
                               config.message_timestamp_after_max_ms)
        if converted is not None:
            return memoryview(converted), BatchHeader(converted)
    return memoryview(records).cast("B"), check_produce_batch(records, version)


def _verified_here(context: RequestContext[ProduceRequest], transactional_id: str | None,
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


async def _verify_elsewhere(context: RequestContext[ProduceRequest], transactional_id: str,
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
                if header.is_transactional and \
                        not _verified_here(context, body.transactional_id, tp, header) and \
                        needs_verification(partition.log, header.producer_id,
                                           header.producer_epoch):
                    asks.setdefault((header.producer_id, header.producer_epoch),
                                    []).append(tp)
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
        # Client quota (producer_byte_rate): the request's size, recorded when it is
        # answered as Kafka's sendResponseCallback does; over the quota, the throttle time
        # goes in the answer and the connection is muted that long (KIP-219).
        quotas = context.server.produce_quotas
        principal = getattr(context, "principal", DEFAULT_PRINCIPAL)
        throttle_ms = quotas.record_and_get_throttle_time_ms(principal, context.client_id,
                                                             len(context.request.frame))
        quotas.throttle(context.request, principal, context.client_id, throttle_ms)
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

    async def finish() -> _Answer:
        await parked.wait()
        return respond(results)

    return Parked(finish)


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


HANDLERS: dict[int, Handler] = {ApiKey.PRODUCE: handle_produce}
