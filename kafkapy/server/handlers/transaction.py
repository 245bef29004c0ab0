"""The producer and transaction APIs: InitProducerId (22), AddPartitionsToTxn (24: 0-3 from
producers, 4 from partition leaders verifying, KIP-890), AddOffsetsToTxn (25), EndTxn (26),
WriteTxnMarkers (27), TxnOffsetCommit (28), DescribeProducers (61), DescribeTransactions (65),
ListTransactions (66).

Wire shapes only (Kafka's ``KafkaApis.handle*Request`` for these keys): the work is the
:class:`~kafkapy.coordinator.transaction.transaction_coordinator.TransactionCoordinator`'s, the
group coordinator's (TxnOffsetCommit) and the partitions' producer state (DescribeProducers).
Authorization (with ``authorizer.class.name``, Kafka's checks): InitProducerId needs WRITE on
the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED) or, without one,
IDEMPOTENT_WRITE on the cluster or WRITE on some topic (else CLUSTER_AUTHORIZATION_FAILED);
AddOffsetsToTxn, EndTxn, AddPartitionsToTxn (v0-3) and TxnOffsetCommit need WRITE on the
transactional id; AddOffsetsToTxn and TxnOffsetCommit READ on the group
(GROUP_AUTHORIZATION_FAILED); AddPartitionsToTxn WRITE on each topic (a refused topic fails
the request: TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED), v4 (from
brokers) CLUSTER_ACTION; TxnOffsetCommit READ on each topic (TOPIC_AUTHORIZATION_FAILED for
its partitions); WriteTxnMarkers CLUSTER_ACTION; DescribeProducers READ on each topic;
DescribeTransactions DESCRIBE on each id (its topics filtered by DESCRIBE); ListTransactions
lists the ids one may DESCRIBE.

Clients older than the version that introduced PRODUCER_FENCED (InitProducerId v4, the other
transaction APIs v2) get INVALID_PRODUCER_EPOCH in its place, as Kafka answers them.
"""

from __future__ import annotations

from typing import Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group.records import OffsetAndMetadata
from kafkapy.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from kafkapy.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    InvalidProducerEpochError,
    KafkaError,
    OperationNotAttemptedError,
    ProducerFencedError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopicResult,
    AddPartitionsToTxnTransaction,
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    DescribeTransactionsResponseTransactionState,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
    ListTransactionsResponseTransactionState,
    PartitionResponse,
    ProducerState,
    TopicData,
    TopicResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
    WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from kafkapy.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkapy.server.auth_helper import (
    authorize,
    authorize_by_resource_type,
    authorize_cluster_operation,
    filter_by_authorized,
)
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS"]



def _coordinator(context: RequestContext[Any]) -> TransactionCoordinator:
    return context.server.transaction_coordinator


def _authorize_transactional_id(context: RequestContext[Any], transactional_id: str,
                                operation: AclOperation = AclOperation.WRITE) -> None:
    if not authorize(context, operation, ResourceType.TRANSACTIONAL_ID, transactional_id):
        raise TransactionalIdAuthorizationFailedError(
            f"Transactional Id authorization failed: {transactional_id}")


def _code(e: KafkaError, fenced_since: int, version: int) -> int:
    """The error code for this request version: PRODUCER_FENCED is newer than old clients."""
    if isinstance(e, ProducerFencedError) and version < fenced_since:
        return InvalidProducerEpochError.code
    return e.code


# ========================================================================== InitProducerId


async def handle_init_producer_id(
        context: RequestContext[InitProducerIdRequest]) -> InitProducerIdResponse:
    body, version = context.body, context.api_version
    if body.transactional_id is not None:
        _authorize_transactional_id(context, body.transactional_id)
    elif not (authorize(context, AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER,
                        CLUSTER_NAME)
              or authorize_by_resource_type(context, AclOperation.WRITE, ResourceType.TOPIC)):
        raise ClusterAuthorizationFailedError("Cluster authorization failed.")
    expected = (body.producer_id, body.producer_epoch) if version >= 3 else (-1, -1)
    try:
        producer_id, epoch = await _coordinator(context).init_producer_id(
            body.transactional_id, body.transaction_timeout_ms, *expected)
        code = 0
    except KafkaError as e:
        producer_id, epoch, code = -1, -1, _code(e, 4, version)
    return InitProducerIdResponse(throttle_time_ms=0, error_code=code,
                                  producer_id=producer_id, producer_epoch=epoch)


# ====================================================================== AddPartitionsToTxn


def _exists(context: RequestContext[Any], tp: TopicPartition) -> bool:
    """The cluster has ``tp`` (hosted here or not: a coordinator need not be a replica)."""
    server = context.server
    return tp in server.replica_manager.partitions or \
        server.metadata_cache.partition_info(tp) is not None


async def _add_partitions(context: RequestContext[Any], transactional_id: str,
                          producer_id: int, producer_epoch: int, tps: list[TopicPartition],
                          version: int) -> dict[TopicPartition, int]:
    """Kafka's per-partition answer: partitions that do not exist fail the request; the
    others are then not attempted."""
    unknown = {tp for tp in tps if not _exists(context, tp)}
    if unknown:
        return {tp: UnknownTopicOrPartitionError.code if tp in unknown
                else OperationNotAttemptedError.code for tp in tps}
    try:
        await _coordinator(context).add_partitions(transactional_id, producer_id,
                                                   producer_epoch, tps)
        code = 0
    except KafkaError as e:
        code = _code(e, 2, version)
    return dict.fromkeys(tps, code)


def _verify(context: RequestContext[Any], txn: AddPartitionsToTxnTransaction,
            tps: list[TopicPartition]) -> dict[TopicPartition, int]:
    try:
        errors = _coordinator(context).verify_partitions(
            txn.transactional_id, txn.producer_id, txn.producer_epoch, tps)
    except KafkaError as e:
        return dict.fromkeys(tps, e.code)
    return {tp: 0 if e is None else e.code for tp, e in errors.items()}


def _topic_results(topics: list[tuple[str, list[int]]], errors: dict[TopicPartition, int]
                   ) -> list[AddPartitionsToTxnTopicResult]:
    return [AddPartitionsToTxnTopicResult(name=name, results_by_partition=[
        AddPartitionsToTxnPartitionResult(partition_index=p,
                                          partition_error_code=errors[TopicPartition(name, p)])
        for p in parts]) for name, parts in topics]


async def handle_add_partitions_to_txn(
        context: RequestContext[AddPartitionsToTxnRequest]) -> AddPartitionsToTxnResponse:
    """v0-3 from producers: one transaction. v4 from brokers (KIP-890): a batch of
    transactions, each either verified (``verify_only``: a partition leader asks before the
    first transactional append) or added."""
    body, version = context.body, context.api_version
    if version < 4:
        topics = [(t.name, list(t.partitions)) for t in body.v3_and_below_topics]
        tps = [TopicPartition(name, p) for name, parts in topics for p in parts]
        _authorize_transactional_id(context, body.v3_and_below_transactional_id)
        names = {name for name, _ in topics}
        denied = names - filter_by_authorized(context, AclOperation.WRITE, ResourceType.TOPIC,
                                              names)
        if denied:
            # Kafka: any refused topic fails the request; the others are not attempted.
            errors = {tp: TopicAuthorizationFailedError.code if tp.topic in denied
                      else UnknownTopicOrPartitionError.code if not _exists(context, tp)
                      else OperationNotAttemptedError.code for tp in tps}
            return AddPartitionsToTxnResponse(throttle_time_ms=0,
                                              results_by_topic_v3_and_below=_topic_results(
                                                  topics, errors))
        errors = await _add_partitions(
            context, body.v3_and_below_transactional_id, body.v3_and_below_producer_id,
            body.v3_and_below_producer_epoch, tps, version)
        return AddPartitionsToTxnResponse(throttle_time_ms=0,
                                          results_by_topic_v3_and_below=_topic_results(
                                              topics, errors))
    authorize_cluster_operation(context, AclOperation.CLUSTER_ACTION)    # from brokers
    results = []
    for txn in body.transactions:
        topics = [(t.name, list(t.partitions)) for t in txn.topics]
        tps = [TopicPartition(name, p) for name, parts in topics for p in parts]
        if txn.verify_only:
            errors = _verify(context, txn, tps)
        else:
            errors = await _add_partitions(context, txn.transactional_id, txn.producer_id,
                                           txn.producer_epoch, tps, version)
        results.append(AddPartitionsToTxnResult(transactional_id=txn.transactional_id,
                                                topic_results=_topic_results(topics, errors)))
    return AddPartitionsToTxnResponse(throttle_time_ms=0, error_code=0,
                                      results_by_transaction=results)


# ========================================================================= AddOffsetsToTxn


async def handle_add_offsets_to_txn(
        context: RequestContext[AddOffsetsToTxnRequest]) -> AddOffsetsToTxnResponse:
    body, version = context.body, context.api_version
    _authorize_transactional_id(context, body.transactional_id)
    if not authorize(context, AclOperation.READ, ResourceType.GROUP, body.group_id):
        raise GroupAuthorizationFailedError(f"Not authorized to access group: {body.group_id}")
    try:
        await _coordinator(context).add_offsets(body.transactional_id, body.producer_id,
                                                body.producer_epoch, body.group_id)
        code = 0
    except KafkaError as e:
        code = _code(e, 2, version)
    return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=code)


# ================================================================================== EndTxn


async def handle_end_txn(context: RequestContext[EndTxnRequest]) -> EndTxnResponse:
    body, version = context.body, context.api_version
    _authorize_transactional_id(context, body.transactional_id)
    try:
        await _coordinator(context).end_txn(body.transactional_id, body.producer_id,
                                            body.producer_epoch, body.committed)
        code = 0
    except KafkaError as e:
        code = _code(e, 2, version)
    return EndTxnResponse(throttle_time_ms=0, error_code=code)


# ========================================================================= WriteTxnMarkers


async def handle_write_txn_markers(
        context: RequestContext[WriteTxnMarkersRequest]) -> WriteTxnMarkersResponse:
    """Markers from a transaction coordinator on another broker (this broker's own writes
    the partitions it leads directly, see kafkapy.server.coordinator_partitions): per marker
    and partition, the append's
    error (UNKNOWN_TOPIC_OR_PARTITION, INVALID_PRODUCER_EPOCH for a marker older than the
    producer, TRANSACTION_COORDINATOR_FENCED for an older coordinator epoch)."""
    authorize_cluster_operation(context, AclOperation.CLUSTER_ACTION)
    out = []
    for marker in context.body.markers:
        tps = [TopicPartition(t.name, p) for t in marker.topics for p in t.partition_indexes]
        results = await context.server.coordinator_partitions.write_local_txn_markers(
            marker.producer_id, marker.producer_epoch, marker.transaction_result,
            marker.coordinator_epoch, tps)
        out.append(WritableTxnMarkerResult(producer_id=marker.producer_id, topics=[
            WritableTxnMarkerTopicResult(name=t.name, partitions=[
                WritableTxnMarkerPartitionResult(
                    partition_index=p,
                    error_code=_marker_code(results[TopicPartition(t.name, p)]))
                for p in t.partition_indexes])
            for t in marker.topics]))
    return WriteTxnMarkersResponse(markers=out)


def _marker_code(error: KafkaError | None) -> int:
    return 0 if error is None else error.code


# ========================================================================= TxnOffsetCommit


async def handle_txn_offset_commit(
        context: RequestContext[TxnOffsetCommitRequest]) -> TxnOffsetCommitResponse:
    body, version = context.body, context.api_version
    _authorize_transactional_id(context, body.transactional_id)
    if not authorize(context, AclOperation.READ, ResourceType.GROUP, body.group_id):
        raise GroupAuthorizationFailedError(f"Not authorized to access group: {body.group_id}")
    names = {t.name for t in body.topics}
    denied = names - filter_by_authorized(context, AclOperation.READ, ResourceType.TOPIC, names)
    now = context.server.time.milliseconds()
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    order: list[tuple[str, list[int]]] = []
    for t in body.topics:
        order.append((t.name, [p.partition_index for p in t.partitions]))
        if t.name in denied:
            continue
        for p in t.partitions:
            offsets[TopicPartition(t.name, p.partition_index)] = OffsetAndMetadata(
                offset=p.committed_offset,
                leader_epoch=p.committed_leader_epoch if version >= 2 else -1,
                metadata=p.committed_metadata or "", commit_timestamp_ms=now)
    group = context.server.group_coordinator
    try:
        results = group.txn_commit_offsets(
            group_id=body.group_id, producer_id=body.producer_id,
            producer_epoch=body.producer_epoch,
            member_id=body.member_id if version >= 3 else "",
            group_instance_id=body.group_instance_id if version >= 3 else None,
            generation_id=body.generation_id if version >= 3 else -1, offsets=offsets)
        await group.manager.flush_if_due(body.group_id)
    except KafkaError as e:
        code = _code(e, 2, version)
        results = {tp: code for tp in offsets}
    results.update({TopicPartition(name, p): TopicAuthorizationFailedError.code
                    for name, parts in order if name in denied for p in parts})
    return TxnOffsetCommitResponse(throttle_time_ms=0, topics=[
        TxnOffsetCommitResponseTopic(name=name, partitions=[
            TxnOffsetCommitResponsePartition(
                partition_index=p, error_code=results[TopicPartition(name, p)])
            for p in parts])
        for name, parts in order])


# ======================================================================= DescribeProducers


async def handle_describe_producers(
        context: RequestContext[DescribeProducersRequest]) -> DescribeProducersResponse:
    rm = context.server.replica_manager
    names = {t.name for t in context.body.topics}
    denied = names - filter_by_authorized(context, AclOperation.READ, ResourceType.TOPIC, names)
    topics = []
    for t in context.body.topics:
        partitions = []
        for index in t.partition_indexes:
            partition = rm.partitions.get(TopicPartition(t.name, index))
            if t.name in denied:
                refused = TopicAuthorizationFailedError(
                    f"Not authorized to access topics: [{t.name}]")
                partitions.append(PartitionResponse(
                    partition_index=index, error_code=refused.code,
                    error_message=refused.message, active_producers=[]))
                continue
            if partition is None:
                # Every partition that exists is led here: Kafka's answer for the others.
                error: KafkaError = UnknownTopicOrPartitionError(
                    f"this server does not host {t.name}-{index}")
                partitions.append(PartitionResponse(
                    partition_index=index, error_code=error.code, error_message=error.message,
                    active_producers=[]))
                continue
            producers = [ProducerState(
                producer_id=e.producer_id, producer_epoch=e.producer_epoch,
                last_sequence=e.last_seq, last_timestamp=e.last_timestamp,
                coordinator_epoch=e.coordinator_epoch,
                current_txn_start_offset=e.current_txn_first_offset)
                for e in partition.log.producer_state.active_producers()]
            partitions.append(PartitionResponse(
                partition_index=index, error_code=0, error_message=None,
                active_producers=producers))
        topics.append(TopicResponse(name=t.name, partitions=partitions))
    return DescribeProducersResponse(throttle_time_ms=0, topics=topics)


# ==================================================================== DescribeTransactions


async def handle_describe_transactions(
        context: RequestContext[DescribeTransactionsRequest]) -> DescribeTransactionsResponse:
    coordinator = _coordinator(context)
    states = []
    for txn_id in context.body.transactional_ids:
        try:
            _authorize_transactional_id(context, txn_id, AclOperation.DESCRIBE)
            m = coordinator.describe(txn_id)
        except KafkaError as e:
            states.append(DescribeTransactionsResponseTransactionState(
                error_code=e.code, transactional_id=txn_id, transaction_state="",
                transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1,
                producer_epoch=-1, topics=[]))
            continue
        by_topic: dict[str, list[int]] = {}
        # Only the topics the principal may describe (Kafka's filter).
        visible = filter_by_authorized(context, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                       {tp.topic for tp in m.topic_partitions})
        for tp in sorted(m.topic_partitions):
            if tp.topic in visible:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
        states.append(DescribeTransactionsResponseTransactionState(
            error_code=0, transactional_id=txn_id, transaction_state=m.state.kafka_name,
            transaction_timeout_ms=m.txn_timeout_ms,
            transaction_start_time_ms=m.txn_start_timestamp, producer_id=m.producer_id,
            producer_epoch=m.producer_epoch, topics=[
                TopicData(topic=topic, partitions=parts)
                for topic, parts in by_topic.items()]))
    return DescribeTransactionsResponse(throttle_time_ms=0,
                                        transaction_states=states)


# ======================================================================== ListTransactions


async def handle_list_transactions(
        context: RequestContext[ListTransactionsRequest]) -> ListTransactionsResponse:
    body, version = context.body, context.api_version
    duration = body.duration_filter if version >= 1 else -1
    pattern = body.transactional_id_pattern if version >= 2 else None
    try:
        unknown, listed = _coordinator(context).list_transactions(
            list(body.state_filters), list(body.producer_id_filters), duration, pattern)
    except KafkaError as e:
        return ListTransactionsResponse(
            throttle_time_ms=0, error_code=e.code, unknown_state_filters=[],
            transaction_states=[])
    return ListTransactionsResponse(
        throttle_time_ms=0, error_code=0, unknown_state_filters=unknown,
        transaction_states=[ListTransactionsResponseTransactionState(
            transactional_id=m.transactional_id, producer_id=m.producer_id,
            transaction_state=m.state.kafka_name) for m in listed
            if authorize(context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID,
                         m.transactional_id)])


HANDLERS: dict[int, Handler] = {
    ApiKey.INIT_PRODUCER_ID: handle_init_producer_id,
    ApiKey.ADD_PARTITIONS_TO_TXN: handle_add_partitions_to_txn,
    ApiKey.ADD_OFFSETS_TO_TXN: handle_add_offsets_to_txn,
    ApiKey.END_TXN: handle_end_txn,
    ApiKey.WRITE_TXN_MARKERS: handle_write_txn_markers,
    ApiKey.TXN_OFFSET_COMMIT: handle_txn_offset_commit,
    ApiKey.DESCRIBE_PRODUCERS: handle_describe_producers,
    ApiKey.DESCRIBE_TRANSACTIONS: handle_describe_transactions,
    ApiKey.LIST_TRANSACTIONS: handle_list_transactions,
}
