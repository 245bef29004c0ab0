"""Typed classes of every declared protocol message: GENERATED, do not edit.

Written by ``python -m kafkapy.protocol.generate`` from the declarations in
kafkapy/protocol/messages/, headers.py and messages/consumer_protocol.py; see
:mod:`kafkapy.protocol.generate` for what a class holds and how it is named. The codec decodes
into these classes (``kafkapy.protocol.classes.class_for``) and handlers construct them.
"""

# ruff: noqa: E501

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Protocol, TypeAlias

import attr

if TYPE_CHECKING:
    from typing_extensions import Buffer

ZERO_UUID = uuid.UUID(int=0)


class FileRecords(Protocol):
    """Records sent from files (a fetch): encoded as their length, the connection sends their
    ``size`` bytes itself."""

    @property
    def size(self) -> int: ...


if TYPE_CHECKING:
    Records: TypeAlias = Buffer | FileRecords
    """A records field: a buffer (decoded records are a memoryview into the frame) or file
    records."""


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class RequestHeader:
    """RequestHeader."""

    api_key: int = 0
    api_version: int = 0
    correlation_id: int = 0
    client_id: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ResponseHeader:
    """ResponseHeader."""

    correlation_id: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerProtocolSubscriptionTopicPartition:
    """TopicPartition in ConsumerProtocolSubscription."""

    topic: str = ''
    partitions: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerProtocolSubscription:
    """ConsumerProtocolSubscription."""

    topics: list[str] = attr.Factory(list)
    user_data: bytes | None = None
    owned_partitions: list[ConsumerProtocolSubscriptionTopicPartition] = attr.Factory(list)
    generation_id: int = -1
    rack_id: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerProtocolAssignmentTopicPartition:
    """TopicPartition in ConsumerProtocolAssignment."""

    topic: str = ''
    partitions: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerProtocolAssignment:
    """ConsumerProtocolAssignment."""

    assigned_partitions: list[ConsumerProtocolAssignmentTopicPartition] = attr.Factory(list)
    user_data: bytes | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class PartitionProduceData:
    """PartitionProduceData in ProduceRequest."""

    index: int = 0
    records: Records | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TopicProduceData:
    """TopicProduceData in ProduceRequest."""

    name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partition_data: list[PartitionProduceData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ProduceRequest:
    """ProduceRequest."""

    transactional_id: str | None = None
    acks: int = 0
    timeout_ms: int = 0
    topic_data: list[TopicProduceData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class BatchIndexAndErrorMessage:
    """BatchIndexAndErrorMessage in ProduceResponse."""

    batch_index: int = 0
    batch_index_error_message: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ProduceResponseLeaderIdAndEpoch:
    """LeaderIdAndEpoch in ProduceResponse."""

    leader_id: int = -1
    leader_epoch: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class PartitionProduceResponse:
    """PartitionProduceResponse in ProduceResponse."""

    index: int = 0
    error_code: int = 0
    base_offset: int = 0
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    record_errors: list[BatchIndexAndErrorMessage] = attr.Factory(list)
    error_message: str | None = None
    current_leader: ProduceResponseLeaderIdAndEpoch = attr.Factory(ProduceResponseLeaderIdAndEpoch)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TopicProduceResponse:
    """TopicProduceResponse in ProduceResponse."""

    name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partition_responses: list[PartitionProduceResponse] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ProduceResponseNodeEndpoint:
    """NodeEndpoint in ProduceResponse."""

    node_id: int = 0
    host: str = ''
    port: int = 0
    rack: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ProduceResponse:
    """ProduceResponse."""

    responses: list[TopicProduceResponse] = attr.Factory(list)
    throttle_time_ms: int = 0
    node_endpoints: list[ProduceResponseNodeEndpoint] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ReplicaState:
    """ReplicaState in FetchRequest."""

    replica_id: int = -1
    replica_epoch: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FetchPartition:
    """FetchPartition in FetchRequest."""

    partition: int = 0
    current_leader_epoch: int = -1
    fetch_offset: int = 0
    last_fetched_epoch: int = -1
    log_start_offset: int = -1
    partition_max_bytes: int = 0
    replica_directory_id: uuid.UUID = ZERO_UUID
    high_watermark: int = 9223372036854775807
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FetchTopic:
    """FetchTopic in FetchRequest."""

    topic: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[FetchPartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ForgottenTopic:
    """ForgottenTopic in FetchRequest."""

    topic: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FetchRequest:
    """FetchRequest."""

    cluster_id: str | None = None
    replica_id: int = -1
    replica_state: ReplicaState = attr.Factory(ReplicaState)
    max_wait_ms: int = 0
    min_bytes: int = 0
    max_bytes: int = 2147483647
    isolation_level: int = 0
    session_id: int = 0
    session_epoch: int = -1
    topics: list[FetchTopic] = attr.Factory(list)
    forgotten_topics_data: list[ForgottenTopic] = attr.Factory(list)
    rack_id: str = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FetchResponseEpochEndOffset:
    """EpochEndOffset in FetchResponse."""

    epoch: int = -1
    end_offset: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FetchResponseLeaderIdAndEpoch:
    """LeaderIdAndEpoch in FetchResponse."""

    leader_id: int = -1
    leader_epoch: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class SnapshotId:
    """SnapshotId in FetchResponse."""

    end_offset: int = -1
    epoch: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AbortedTransaction:
    """AbortedTransaction in FetchResponse."""

    producer_id: int = 0
    first_offset: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class PartitionData:
    """PartitionData in FetchResponse."""

    partition_index: int = 0
    error_code: int = 0
    high_watermark: int = 0
    last_stable_offset: int = -1
    log_start_offset: int = -1
    diverging_epoch: FetchResponseEpochEndOffset = attr.Factory(FetchResponseEpochEndOffset)
    current_leader: FetchResponseLeaderIdAndEpoch = attr.Factory(FetchResponseLeaderIdAndEpoch)
    snapshot_id: SnapshotId = attr.Factory(SnapshotId)
    aborted_transactions: list[AbortedTransaction] | None = attr.Factory(list)
    preferred_read_replica: int = -1
    records: Records | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FetchableTopicResponse:
    """FetchableTopicResponse in FetchResponse."""

    topic: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[PartitionData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FetchResponseNodeEndpoint:
    """NodeEndpoint in FetchResponse."""

    node_id: int = 0
    host: str = ''
    port: int = 0
    rack: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FetchResponse:
    """FetchResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    session_id: int = 0
    responses: list[FetchableTopicResponse] = attr.Factory(list)
    node_endpoints: list[FetchResponseNodeEndpoint] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListOffsetsPartition:
    """ListOffsetsPartition in ListOffsetsRequest."""

    partition_index: int = 0
    current_leader_epoch: int = -1
    timestamp: int = 0
    max_num_offsets: int = 1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListOffsetsTopic:
    """ListOffsetsTopic in ListOffsetsRequest."""

    name: str = ''
    partitions: list[ListOffsetsPartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListOffsetsRequest:
    """ListOffsetsRequest."""

    replica_id: int = 0
    isolation_level: int = 0
    topics: list[ListOffsetsTopic] = attr.Factory(list)
    timeout_ms: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListOffsetsPartitionResponse:
    """ListOffsetsPartitionResponse in ListOffsetsResponse."""

    partition_index: int = 0
    error_code: int = 0
    old_style_offsets: list[int] = attr.Factory(list)
    timestamp: int = -1
    offset: int = -1
    leader_epoch: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListOffsetsTopicResponse:
    """ListOffsetsTopicResponse in ListOffsetsResponse."""

    name: str = ''
    partitions: list[ListOffsetsPartitionResponse] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListOffsetsResponse:
    """ListOffsetsResponse."""

    throttle_time_ms: int = 0
    topics: list[ListOffsetsTopicResponse] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class MetadataRequestTopic:
    """MetadataRequestTopic in MetadataRequest."""

    topic_id: uuid.UUID = ZERO_UUID
    name: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class MetadataRequest:
    """MetadataRequest."""

    topics: list[MetadataRequestTopic] | None = attr.Factory(list)
    allow_auto_topic_creation: bool = True
    include_cluster_authorized_operations: bool = False
    include_topic_authorized_operations: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class MetadataResponseBroker:
    """MetadataResponseBroker in MetadataResponse."""

    node_id: int = 0
    host: str = ''
    port: int = 0
    rack: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class MetadataResponsePartition:
    """MetadataResponsePartition in MetadataResponse."""

    error_code: int = 0
    partition_index: int = 0
    leader_id: int = 0
    leader_epoch: int = -1
    replica_nodes: list[int] = attr.Factory(list)
    isr_nodes: list[int] = attr.Factory(list)
    offline_replicas: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class MetadataResponseTopic:
    """MetadataResponseTopic in MetadataResponse."""

    error_code: int = 0
    name: str | None = ''
    topic_id: uuid.UUID = ZERO_UUID
    is_internal: bool = False
    partitions: list[MetadataResponsePartition] = attr.Factory(list)
    topic_authorized_operations: int = -2147483648
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class MetadataResponse:
    """MetadataResponse."""

    throttle_time_ms: int = 0
    brokers: list[MetadataResponseBroker] = attr.Factory(list)
    cluster_id: str | None = None
    controller_id: int = -1
    topics: list[MetadataResponseTopic] = attr.Factory(list)
    cluster_authorized_operations: int = -2147483648
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class LeaderAndIsrPartitionState:
    """LeaderAndIsrPartitionState in LeaderAndIsrRequest."""

    topic_name: str = ''
    partition_index: int = 0
    controller_epoch: int = 0
    leader: int = 0
    leader_epoch: int = 0
    isr: list[int] = attr.Factory(list)
    partition_epoch: int = 0
    replicas: list[int] = attr.Factory(list)
    adding_replicas: list[int] = attr.Factory(list)
    removing_replicas: list[int] = attr.Factory(list)
    is_new: bool = False
    leader_recovery_state: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class LeaderAndIsrTopicState:
    """LeaderAndIsrTopicState in LeaderAndIsrRequest."""

    topic_name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partition_states: list[LeaderAndIsrPartitionState] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class LeaderAndIsrLiveLeader:
    """LeaderAndIsrLiveLeader in LeaderAndIsrRequest."""

    broker_id: int = 0
    host_name: str = ''
    port: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class LeaderAndIsrRequest:
    """LeaderAndIsrRequest."""

    controller_id: int = 0
    is_k_raft_controller: bool = False
    controller_epoch: int = 0
    broker_epoch: int = -1
    type: int = 0
    ungrouped_partition_states: list[LeaderAndIsrPartitionState] = attr.Factory(list)
    topic_states: list[LeaderAndIsrTopicState] = attr.Factory(list)
    live_leaders: list[LeaderAndIsrLiveLeader] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class LeaderAndIsrPartitionError:
    """LeaderAndIsrPartitionError in LeaderAndIsrResponse."""

    topic_name: str = ''
    partition_index: int = 0
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class LeaderAndIsrTopicError:
    """LeaderAndIsrTopicError in LeaderAndIsrResponse."""

    topic_id: uuid.UUID = ZERO_UUID
    partition_errors: list[LeaderAndIsrPartitionError] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class LeaderAndIsrResponse:
    """LeaderAndIsrResponse."""

    error_code: int = 0
    partition_errors: list[LeaderAndIsrPartitionError] = attr.Factory(list)
    topics: list[LeaderAndIsrTopicError] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class StopReplicaPartitionV0:
    """StopReplicaPartitionV0 in StopReplicaRequest."""

    topic_name: str = ''
    partition_index: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class StopReplicaTopicV1:
    """StopReplicaTopicV1 in StopReplicaRequest."""

    name: str = ''
    partition_indexes: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class StopReplicaPartitionState:
    """StopReplicaPartitionState in StopReplicaRequest."""

    partition_index: int = 0
    leader_epoch: int = -1
    delete_partition: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class StopReplicaTopicState:
    """StopReplicaTopicState in StopReplicaRequest."""

    topic_name: str = ''
    partition_states: list[StopReplicaPartitionState] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class StopReplicaRequest:
    """StopReplicaRequest."""

    controller_id: int = 0
    is_k_raft_controller: bool = False
    controller_epoch: int = 0
    broker_epoch: int = -1
    delete_partitions: bool = False
    ungrouped_partitions: list[StopReplicaPartitionV0] = attr.Factory(list)
    topics: list[StopReplicaTopicV1] = attr.Factory(list)
    topic_states: list[StopReplicaTopicState] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class StopReplicaPartitionError:
    """StopReplicaPartitionError in StopReplicaResponse."""

    topic_name: str = ''
    partition_index: int = 0
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class StopReplicaResponse:
    """StopReplicaResponse."""

    error_code: int = 0
    partition_errors: list[StopReplicaPartitionError] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class UpdateMetadataPartitionState:
    """UpdateMetadataPartitionState in UpdateMetadataRequest."""

    topic_name: str = ''
    partition_index: int = 0
    controller_epoch: int = 0
    leader: int = 0
    leader_epoch: int = 0
    isr: list[int] = attr.Factory(list)
    zk_version: int = 0
    replicas: list[int] = attr.Factory(list)
    offline_replicas: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class UpdateMetadataTopicState:
    """UpdateMetadataTopicState in UpdateMetadataRequest."""

    topic_name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partition_states: list[UpdateMetadataPartitionState] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class UpdateMetadataEndpoint:
    """UpdateMetadataEndpoint in UpdateMetadataRequest."""

    port: int = 0
    host: str = ''
    listener: str = ''
    security_protocol: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class UpdateMetadataBroker:
    """UpdateMetadataBroker in UpdateMetadataRequest."""

    id: int = 0
    v0_host: str = ''
    v0_port: int = 0
    endpoints: list[UpdateMetadataEndpoint] = attr.Factory(list)
    rack: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class UpdateMetadataRequest:
    """UpdateMetadataRequest."""

    controller_id: int = 0
    is_k_raft_controller: bool = False
    type: int = 0
    controller_epoch: int = 0
    broker_epoch: int = -1
    ungrouped_partition_states: list[UpdateMetadataPartitionState] = attr.Factory(list)
    topic_states: list[UpdateMetadataTopicState] = attr.Factory(list)
    live_brokers: list[UpdateMetadataBroker] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class UpdateMetadataResponse:
    """UpdateMetadataResponse."""

    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ControlledShutdownRequest:
    """ControlledShutdownRequest."""

    broker_id: int = 0
    broker_epoch: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class RemainingPartition:
    """RemainingPartition in ControlledShutdownResponse."""

    topic_name: str = ''
    partition_index: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ControlledShutdownResponse:
    """ControlledShutdownResponse."""

    error_code: int = 0
    remaining_partitions: list[RemainingPartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetCommitRequestPartition:
    """OffsetCommitRequestPartition in OffsetCommitRequest."""

    partition_index: int = 0
    committed_offset: int = 0
    committed_leader_epoch: int = -1
    commit_timestamp: int = -1
    committed_metadata: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetCommitRequestTopic:
    """OffsetCommitRequestTopic in OffsetCommitRequest."""

    name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[OffsetCommitRequestPartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetCommitRequest:
    """OffsetCommitRequest."""

    group_id: str = ''
    generation_id_or_member_epoch: int = -1
    member_id: str = ''
    group_instance_id: str | None = None
    retention_time_ms: int = -1
    topics: list[OffsetCommitRequestTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetCommitResponsePartition:
    """OffsetCommitResponsePartition in OffsetCommitResponse."""

    partition_index: int = 0
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetCommitResponseTopic:
    """OffsetCommitResponseTopic in OffsetCommitResponse."""

    name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[OffsetCommitResponsePartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetCommitResponse:
    """OffsetCommitResponse."""

    throttle_time_ms: int = 0
    topics: list[OffsetCommitResponseTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetFetchRequestTopic:
    """OffsetFetchRequestTopic in OffsetFetchRequest."""

    name: str = ''
    partition_indexes: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetFetchRequestTopics:
    """OffsetFetchRequestTopics in OffsetFetchRequest."""

    name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partition_indexes: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetFetchRequestGroup:
    """OffsetFetchRequestGroup in OffsetFetchRequest."""

    group_id: str = ''
    member_id: str | None = None
    member_epoch: int = -1
    topics: list[OffsetFetchRequestTopics] | None = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetFetchRequest:
    """OffsetFetchRequest."""

    group_id: str = ''
    topics: list[OffsetFetchRequestTopic] | None = attr.Factory(list)
    groups: list[OffsetFetchRequestGroup] = attr.Factory(list)
    require_stable: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetFetchResponsePartition:
    """OffsetFetchResponsePartition in OffsetFetchResponse."""

    partition_index: int = 0
    committed_offset: int = 0
    committed_leader_epoch: int = -1
    metadata: str | None = ''
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetFetchResponseTopic:
    """OffsetFetchResponseTopic in OffsetFetchResponse."""

    name: str = ''
    partitions: list[OffsetFetchResponsePartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetFetchResponsePartitions:
    """OffsetFetchResponsePartitions in OffsetFetchResponse."""

    partition_index: int = 0
    committed_offset: int = 0
    committed_leader_epoch: int = -1
    metadata: str | None = ''
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetFetchResponseTopics:
    """OffsetFetchResponseTopics in OffsetFetchResponse."""

    name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[OffsetFetchResponsePartitions] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetFetchResponseGroup:
    """OffsetFetchResponseGroup in OffsetFetchResponse."""

    group_id: str = ''
    topics: list[OffsetFetchResponseTopics] = attr.Factory(list)
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetFetchResponse:
    """OffsetFetchResponse."""

    throttle_time_ms: int = 0
    topics: list[OffsetFetchResponseTopic] = attr.Factory(list)
    error_code: int = 0
    groups: list[OffsetFetchResponseGroup] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FindCoordinatorRequest:
    """FindCoordinatorRequest."""

    key: str = ''
    key_type: int = 0
    coordinator_keys: list[str] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class Coordinator:
    """Coordinator in FindCoordinatorResponse."""

    key: str = ''
    node_id: int = 0
    host: str = ''
    port: int = 0
    error_code: int = 0
    error_message: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FindCoordinatorResponse:
    """FindCoordinatorResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''
    node_id: int = 0
    host: str = ''
    port: int = 0
    coordinators: list[Coordinator] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class JoinGroupRequestProtocol:
    """JoinGroupRequestProtocol in JoinGroupRequest."""

    name: str = ''
    metadata: bytes = b''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class JoinGroupRequest:
    """JoinGroupRequest."""

    group_id: str = ''
    session_timeout_ms: int = 0
    rebalance_timeout_ms: int = -1
    member_id: str = ''
    group_instance_id: str | None = None
    protocol_type: str = ''
    protocols: list[JoinGroupRequestProtocol] = attr.Factory(list)
    reason: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class JoinGroupResponseMember:
    """JoinGroupResponseMember in JoinGroupResponse."""

    member_id: str = ''
    group_instance_id: str | None = None
    metadata: bytes = b''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class JoinGroupResponse:
    """JoinGroupResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = ''
    leader: str = ''
    skip_assignment: bool = False
    member_id: str = ''
    members: list[JoinGroupResponseMember] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class HeartbeatRequest:
    """HeartbeatRequest."""

    group_id: str = ''
    generation_id: int = 0
    member_id: str = ''
    group_instance_id: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class HeartbeatResponse:
    """HeartbeatResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class MemberIdentity:
    """MemberIdentity in LeaveGroupRequest."""

    member_id: str = ''
    group_instance_id: str | None = None
    reason: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class LeaveGroupRequest:
    """LeaveGroupRequest."""

    group_id: str = ''
    member_id: str = ''
    members: list[MemberIdentity] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class MemberResponse:
    """MemberResponse in LeaveGroupResponse."""

    member_id: str = ''
    group_instance_id: str | None = ''
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class LeaveGroupResponse:
    """LeaveGroupResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    members: list[MemberResponse] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class SyncGroupRequestAssignment:
    """SyncGroupRequestAssignment in SyncGroupRequest."""

    member_id: str = ''
    assignment: bytes = b''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class SyncGroupRequest:
    """SyncGroupRequest."""

    group_id: str = ''
    generation_id: int = 0
    member_id: str = ''
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: list[SyncGroupRequestAssignment] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class SyncGroupResponse:
    """SyncGroupResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeGroupsRequest:
    """DescribeGroupsRequest."""

    groups: list[str] = attr.Factory(list)
    include_authorized_operations: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribedGroupMember:
    """DescribedGroupMember in DescribeGroupsResponse."""

    member_id: str = ''
    group_instance_id: str | None = None
    client_id: str = ''
    client_host: str = ''
    member_metadata: bytes = b''
    member_assignment: bytes = b''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeGroupsResponseDescribedGroup:
    """DescribedGroup in DescribeGroupsResponse."""

    error_code: int = 0
    error_message: str | None = None
    group_id: str = ''
    group_state: str = ''
    protocol_type: str = ''
    protocol_data: str = ''
    members: list[DescribedGroupMember] = attr.Factory(list)
    authorized_operations: int = -2147483648
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeGroupsResponse:
    """DescribeGroupsResponse."""

    throttle_time_ms: int = 0
    groups: list[DescribeGroupsResponseDescribedGroup] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListGroupsRequest:
    """ListGroupsRequest."""

    states_filter: list[str] = attr.Factory(list)
    types_filter: list[str] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListedGroup:
    """ListedGroup in ListGroupsResponse."""

    group_id: str = ''
    protocol_type: str = ''
    group_state: str = ''
    group_type: str = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListGroupsResponse:
    """ListGroupsResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    groups: list[ListedGroup] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class SaslHandshakeRequest:
    """SaslHandshakeRequest."""

    mechanism: str = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class SaslHandshakeResponse:
    """SaslHandshakeResponse."""

    error_code: int = 0
    mechanisms: list[str] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ApiVersionsRequest:
    """ApiVersionsRequest."""

    client_software_name: str = ''
    client_software_version: str = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ApiVersion:
    """ApiVersion in ApiVersionsResponse."""

    api_key: int = 0
    min_version: int = 0
    max_version: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class SupportedFeatureKey:
    """SupportedFeatureKey in ApiVersionsResponse."""

    name: str = ''
    min_version: int = 0
    max_version: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FinalizedFeatureKey:
    """FinalizedFeatureKey in ApiVersionsResponse."""

    name: str = ''
    max_version_level: int = 0
    min_version_level: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ApiVersionsResponse:
    """ApiVersionsResponse."""

    error_code: int = 0
    api_keys: list[ApiVersion] = attr.Factory(list)
    throttle_time_ms: int = 0
    supported_features: list[SupportedFeatureKey] = attr.Factory(list)
    finalized_features_epoch: int = -1
    finalized_features: list[FinalizedFeatureKey] = attr.Factory(list)
    zk_migration_ready: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreatableReplicaAssignment:
    """CreatableReplicaAssignment in CreateTopicsRequest."""

    partition_index: int = 0
    broker_ids: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreatableTopicConfig:
    """CreatableTopicConfig in CreateTopicsRequest."""

    name: str = ''
    value: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreatableTopic:
    """CreatableTopic in CreateTopicsRequest."""

    name: str = ''
    num_partitions: int = 0
    replication_factor: int = 0
    assignments: list[CreatableReplicaAssignment] = attr.Factory(list)
    configs: list[CreatableTopicConfig] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreateTopicsRequest:
    """CreateTopicsRequest."""

    topics: list[CreatableTopic] = attr.Factory(list)
    timeout_ms: int = 60000
    validate_only: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreatableTopicConfigs:
    """CreatableTopicConfigs in CreateTopicsResponse."""

    name: str = ''
    value: str | None = ''
    read_only: bool = False
    config_source: int = -1
    is_sensitive: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreatableTopicResult:
    """CreatableTopicResult in CreateTopicsResponse."""

    name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    error_code: int = 0
    error_message: str | None = ''
    topic_config_error_code: int = 0
    num_partitions: int = -1
    replication_factor: int = -1
    configs: list[CreatableTopicConfigs] | None = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreateTopicsResponse:
    """CreateTopicsResponse."""

    throttle_time_ms: int = 0
    topics: list[CreatableTopicResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteTopicState:
    """DeleteTopicState in DeleteTopicsRequest."""

    name: str | None = None
    topic_id: uuid.UUID = ZERO_UUID
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteTopicsRequest:
    """DeleteTopicsRequest."""

    topics: list[DeleteTopicState] = attr.Factory(list)
    topic_names: list[str] = attr.Factory(list)
    timeout_ms: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeletableTopicResult:
    """DeletableTopicResult in DeleteTopicsResponse."""

    name: str | None = ''
    topic_id: uuid.UUID = ZERO_UUID
    error_code: int = 0
    error_message: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteTopicsResponse:
    """DeleteTopicsResponse."""

    throttle_time_ms: int = 0
    responses: list[DeletableTopicResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteRecordsPartition:
    """DeleteRecordsPartition in DeleteRecordsRequest."""

    partition_index: int = 0
    offset: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteRecordsTopic:
    """DeleteRecordsTopic in DeleteRecordsRequest."""

    name: str = ''
    partitions: list[DeleteRecordsPartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteRecordsRequest:
    """DeleteRecordsRequest."""

    topics: list[DeleteRecordsTopic] = attr.Factory(list)
    timeout_ms: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteRecordsPartitionResult:
    """DeleteRecordsPartitionResult in DeleteRecordsResponse."""

    partition_index: int = 0
    low_watermark: int = 0
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteRecordsTopicResult:
    """DeleteRecordsTopicResult in DeleteRecordsResponse."""

    name: str = ''
    partitions: list[DeleteRecordsPartitionResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteRecordsResponse:
    """DeleteRecordsResponse."""

    throttle_time_ms: int = 0
    topics: list[DeleteRecordsTopicResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class InitProducerIdRequest:
    """InitProducerIdRequest."""

    transactional_id: str | None = ''
    transaction_timeout_ms: int = 0
    producer_id: int = -1
    producer_epoch: int = -1
    enable2_pc: bool = False
    keep_prepared_txn: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class InitProducerIdResponse:
    """InitProducerIdResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    producer_id: int = -1
    producer_epoch: int = 0
    ongoing_txn_producer_id: int = -1
    ongoing_txn_producer_epoch: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetForLeaderPartition:
    """OffsetForLeaderPartition in OffsetForLeaderEpochRequest."""

    partition: int = 0
    current_leader_epoch: int = -1
    leader_epoch: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetForLeaderTopic:
    """OffsetForLeaderTopic in OffsetForLeaderEpochRequest."""

    topic: str = ''
    partitions: list[OffsetForLeaderPartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetForLeaderEpochRequest:
    """OffsetForLeaderEpochRequest."""

    replica_id: int = -2
    topics: list[OffsetForLeaderTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetForLeaderEpochResponseEpochEndOffset:
    """EpochEndOffset in OffsetForLeaderEpochResponse."""

    error_code: int = 0
    partition: int = 0
    leader_epoch: int = -1
    end_offset: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetForLeaderTopicResult:
    """OffsetForLeaderTopicResult in OffsetForLeaderEpochResponse."""

    topic: str = ''
    partitions: list[OffsetForLeaderEpochResponseEpochEndOffset] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetForLeaderEpochResponse:
    """OffsetForLeaderEpochResponse."""

    throttle_time_ms: int = 0
    topics: list[OffsetForLeaderTopicResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AddPartitionsToTxnTopic:
    """AddPartitionsToTxnTopic in AddPartitionsToTxnRequest."""

    name: str = ''
    partitions: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AddPartitionsToTxnTransaction:
    """AddPartitionsToTxnTransaction in AddPartitionsToTxnRequest."""

    transactional_id: str = ''
    producer_id: int = 0
    producer_epoch: int = 0
    verify_only: bool = False
    topics: list[AddPartitionsToTxnTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AddPartitionsToTxnRequest:
    """AddPartitionsToTxnRequest."""

    transactions: list[AddPartitionsToTxnTransaction] = attr.Factory(list)
    v3_and_below_transactional_id: str = ''
    v3_and_below_producer_id: int = 0
    v3_and_below_producer_epoch: int = 0
    v3_and_below_topics: list[AddPartitionsToTxnTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AddPartitionsToTxnPartitionResult:
    """AddPartitionsToTxnPartitionResult in AddPartitionsToTxnResponse."""

    partition_index: int = 0
    partition_error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AddPartitionsToTxnTopicResult:
    """AddPartitionsToTxnTopicResult in AddPartitionsToTxnResponse."""

    name: str = ''
    results_by_partition: list[AddPartitionsToTxnPartitionResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AddPartitionsToTxnResult:
    """AddPartitionsToTxnResult in AddPartitionsToTxnResponse."""

    transactional_id: str = ''
    topic_results: list[AddPartitionsToTxnTopicResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AddPartitionsToTxnResponse:
    """AddPartitionsToTxnResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    results_by_transaction: list[AddPartitionsToTxnResult] = attr.Factory(list)
    results_by_topic_v3_and_below: list[AddPartitionsToTxnTopicResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AddOffsetsToTxnRequest:
    """AddOffsetsToTxnRequest."""

    transactional_id: str = ''
    producer_id: int = 0
    producer_epoch: int = 0
    group_id: str = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AddOffsetsToTxnResponse:
    """AddOffsetsToTxnResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class EndTxnRequest:
    """EndTxnRequest."""

    transactional_id: str = ''
    producer_id: int = 0
    producer_epoch: int = 0
    committed: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class EndTxnResponse:
    """EndTxnResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    producer_id: int = -1
    producer_epoch: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class WritableTxnMarkerTopic:
    """WritableTxnMarkerTopic in WriteTxnMarkersRequest."""

    name: str = ''
    partition_indexes: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class WritableTxnMarker:
    """WritableTxnMarker in WriteTxnMarkersRequest."""

    producer_id: int = 0
    producer_epoch: int = 0
    transaction_result: bool = False
    topics: list[WritableTxnMarkerTopic] = attr.Factory(list)
    coordinator_epoch: int = 0
    transaction_version: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class WriteTxnMarkersRequest:
    """WriteTxnMarkersRequest."""

    markers: list[WritableTxnMarker] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class WritableTxnMarkerPartitionResult:
    """WritableTxnMarkerPartitionResult in WriteTxnMarkersResponse."""

    partition_index: int = 0
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class WritableTxnMarkerTopicResult:
    """WritableTxnMarkerTopicResult in WriteTxnMarkersResponse."""

    name: str = ''
    partitions: list[WritableTxnMarkerPartitionResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class WritableTxnMarkerResult:
    """WritableTxnMarkerResult in WriteTxnMarkersResponse."""

    producer_id: int = 0
    topics: list[WritableTxnMarkerTopicResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class WriteTxnMarkersResponse:
    """WriteTxnMarkersResponse."""

    markers: list[WritableTxnMarkerResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TxnOffsetCommitRequestPartition:
    """TxnOffsetCommitRequestPartition in TxnOffsetCommitRequest."""

    partition_index: int = 0
    committed_offset: int = 0
    committed_leader_epoch: int = -1
    committed_metadata: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TxnOffsetCommitRequestTopic:
    """TxnOffsetCommitRequestTopic in TxnOffsetCommitRequest."""

    name: str = ''
    partitions: list[TxnOffsetCommitRequestPartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TxnOffsetCommitRequest:
    """TxnOffsetCommitRequest."""

    transactional_id: str = ''
    group_id: str = ''
    producer_id: int = 0
    producer_epoch: int = 0
    generation_id: int = -1
    member_id: str = ''
    group_instance_id: str | None = None
    topics: list[TxnOffsetCommitRequestTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TxnOffsetCommitResponsePartition:
    """TxnOffsetCommitResponsePartition in TxnOffsetCommitResponse."""

    partition_index: int = 0
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TxnOffsetCommitResponseTopic:
    """TxnOffsetCommitResponseTopic in TxnOffsetCommitResponse."""

    name: str = ''
    partitions: list[TxnOffsetCommitResponsePartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TxnOffsetCommitResponse:
    """TxnOffsetCommitResponse."""

    throttle_time_ms: int = 0
    topics: list[TxnOffsetCommitResponseTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeAclsRequest:
    """DescribeAclsRequest."""

    resource_type_filter: int = 0
    resource_name_filter: str | None = ''
    pattern_type_filter: int = 3
    principal_filter: str | None = ''
    host_filter: str | None = ''
    operation: int = 0
    permission_type: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AclDescription:
    """AclDescription in DescribeAclsResponse."""

    principal: str = ''
    host: str = ''
    operation: int = 0
    permission_type: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeAclsResource:
    """DescribeAclsResource in DescribeAclsResponse."""

    resource_type: int = 0
    resource_name: str = ''
    pattern_type: int = 3
    acls: list[AclDescription] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeAclsResponse:
    """DescribeAclsResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''
    resources: list[DescribeAclsResource] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AclCreation:
    """AclCreation in CreateAclsRequest."""

    resource_type: int = 0
    resource_name: str = ''
    resource_pattern_type: int = 3
    principal: str = ''
    host: str = ''
    operation: int = 0
    permission_type: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreateAclsRequest:
    """CreateAclsRequest."""

    creations: list[AclCreation] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AclCreationResult:
    """AclCreationResult in CreateAclsResponse."""

    error_code: int = 0
    error_message: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreateAclsResponse:
    """CreateAclsResponse."""

    throttle_time_ms: int = 0
    results: list[AclCreationResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteAclsFilter:
    """DeleteAclsFilter in DeleteAclsRequest."""

    resource_type_filter: int = 0
    resource_name_filter: str | None = ''
    pattern_type_filter: int = 3
    principal_filter: str | None = ''
    host_filter: str | None = ''
    operation: int = 0
    permission_type: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteAclsRequest:
    """DeleteAclsRequest."""

    filters: list[DeleteAclsFilter] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteAclsMatchingAcl:
    """DeleteAclsMatchingAcl in DeleteAclsResponse."""

    error_code: int = 0
    error_message: str | None = ''
    resource_type: int = 0
    resource_name: str = ''
    pattern_type: int = 3
    principal: str = ''
    host: str = ''
    operation: int = 0
    permission_type: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteAclsFilterResult:
    """DeleteAclsFilterResult in DeleteAclsResponse."""

    error_code: int = 0
    error_message: str | None = ''
    matching_acls: list[DeleteAclsMatchingAcl] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteAclsResponse:
    """DeleteAclsResponse."""

    throttle_time_ms: int = 0
    filter_results: list[DeleteAclsFilterResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeConfigsResource:
    """DescribeConfigsResource in DescribeConfigsRequest."""

    resource_type: int = 0
    resource_name: str = ''
    configuration_keys: list[str] | None = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeConfigsRequest:
    """DescribeConfigsRequest."""

    resources: list[DescribeConfigsResource] = attr.Factory(list)
    include_synonyms: bool = False
    include_documentation: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeConfigsSynonym:
    """DescribeConfigsSynonym in DescribeConfigsResponse."""

    name: str = ''
    value: str | None = ''
    source: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeConfigsResourceResult:
    """DescribeConfigsResourceResult in DescribeConfigsResponse."""

    name: str = ''
    value: str | None = ''
    read_only: bool = False
    config_source: int = -1
    is_default: bool = False
    is_sensitive: bool = False
    synonyms: list[DescribeConfigsSynonym] = attr.Factory(list)
    config_type: int = 0
    documentation: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeConfigsResult:
    """DescribeConfigsResult in DescribeConfigsResponse."""

    error_code: int = 0
    error_message: str | None = ''
    resource_type: int = 0
    resource_name: str = ''
    configs: list[DescribeConfigsResourceResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeConfigsResponse:
    """DescribeConfigsResponse."""

    throttle_time_ms: int = 0
    results: list[DescribeConfigsResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterConfigsRequestAlterableConfig:
    """AlterableConfig in AlterConfigsRequest."""

    name: str = ''
    value: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterConfigsRequestAlterConfigsResource:
    """AlterConfigsResource in AlterConfigsRequest."""

    resource_type: int = 0
    resource_name: str = ''
    configs: list[AlterConfigsRequestAlterableConfig] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterConfigsRequest:
    """AlterConfigsRequest."""

    resources: list[AlterConfigsRequestAlterConfigsResource] = attr.Factory(list)
    validate_only: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterConfigsResponseAlterConfigsResourceResponse:
    """AlterConfigsResourceResponse in AlterConfigsResponse."""

    error_code: int = 0
    error_message: str | None = ''
    resource_type: int = 0
    resource_name: str = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterConfigsResponse:
    """AlterConfigsResponse."""

    throttle_time_ms: int = 0
    responses: list[AlterConfigsResponseAlterConfigsResourceResponse] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterReplicaLogDirTopic:
    """AlterReplicaLogDirTopic in AlterReplicaLogDirsRequest."""

    name: str = ''
    partitions: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterReplicaLogDir:
    """AlterReplicaLogDir in AlterReplicaLogDirsRequest."""

    path: str = ''
    topics: list[AlterReplicaLogDirTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterReplicaLogDirsRequest:
    """AlterReplicaLogDirsRequest."""

    dirs: list[AlterReplicaLogDir] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterReplicaLogDirPartitionResult:
    """AlterReplicaLogDirPartitionResult in AlterReplicaLogDirsResponse."""

    partition_index: int = 0
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterReplicaLogDirTopicResult:
    """AlterReplicaLogDirTopicResult in AlterReplicaLogDirsResponse."""

    topic_name: str = ''
    partitions: list[AlterReplicaLogDirPartitionResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterReplicaLogDirsResponse:
    """AlterReplicaLogDirsResponse."""

    throttle_time_ms: int = 0
    results: list[AlterReplicaLogDirTopicResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribableLogDirTopic:
    """DescribableLogDirTopic in DescribeLogDirsRequest."""

    topic: str = ''
    partitions: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeLogDirsRequest:
    """DescribeLogDirsRequest."""

    topics: list[DescribableLogDirTopic] | None = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeLogDirsPartition:
    """DescribeLogDirsPartition in DescribeLogDirsResponse."""

    partition_index: int = 0
    partition_size: int = 0
    offset_lag: int = 0
    is_future_key: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeLogDirsTopic:
    """DescribeLogDirsTopic in DescribeLogDirsResponse."""

    name: str = ''
    partitions: list[DescribeLogDirsPartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeLogDirsResult:
    """DescribeLogDirsResult in DescribeLogDirsResponse."""

    error_code: int = 0
    log_dir: str = ''
    topics: list[DescribeLogDirsTopic] = attr.Factory(list)
    total_bytes: int = -1
    usable_bytes: int = -1
    is_cordoned: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeLogDirsResponse:
    """DescribeLogDirsResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    results: list[DescribeLogDirsResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class SaslAuthenticateRequest:
    """SaslAuthenticateRequest."""

    auth_bytes: bytes = b''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class SaslAuthenticateResponse:
    """SaslAuthenticateResponse."""

    error_code: int = 0
    error_message: str | None = ''
    auth_bytes: bytes = b''
    session_lifetime_ms: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreatePartitionsAssignment:
    """CreatePartitionsAssignment in CreatePartitionsRequest."""

    broker_ids: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreatePartitionsTopic:
    """CreatePartitionsTopic in CreatePartitionsRequest."""

    name: str = ''
    count: int = 0
    assignments: list[CreatePartitionsAssignment] | None = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreatePartitionsRequest:
    """CreatePartitionsRequest."""

    topics: list[CreatePartitionsTopic] = attr.Factory(list)
    timeout_ms: int = 0
    validate_only: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreatePartitionsTopicResult:
    """CreatePartitionsTopicResult in CreatePartitionsResponse."""

    name: str = ''
    error_code: int = 0
    error_message: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CreatePartitionsResponse:
    """CreatePartitionsResponse."""

    throttle_time_ms: int = 0
    results: list[CreatePartitionsTopicResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteGroupsRequest:
    """DeleteGroupsRequest."""

    groups_names: list[str] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeletableGroupResult:
    """DeletableGroupResult in DeleteGroupsResponse."""

    group_id: str = ''
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DeleteGroupsResponse:
    """DeleteGroupsResponse."""

    throttle_time_ms: int = 0
    results: list[DeletableGroupResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ElectLeadersTopicPartitions:
    """ElectLeadersTopicPartitions in ElectLeadersRequest."""

    topic: str = ''
    partition_id: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ElectLeadersRequest:
    """ElectLeadersRequest."""

    election_type: int = 0
    topic_partitions: list[ElectLeadersTopicPartitions] | None = attr.Factory(list)
    timeout_ms: int = 60000
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ElectLeadersPartitionResult:
    """ElectLeadersPartitionResult in ElectLeadersResponse."""

    partition_id: int = 0
    error_code: int = 0
    error_message: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ElectLeadersReplicaElectionResult:
    """ElectLeadersReplicaElectionResult in ElectLeadersResponse."""

    topic: str = ''
    partition_result: list[ElectLeadersPartitionResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ElectLeadersResponse:
    """ElectLeadersResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    replica_election_results: list[ElectLeadersReplicaElectionResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class IncrementalAlterConfigsRequestAlterableConfig:
    """AlterableConfig in IncrementalAlterConfigsRequest."""

    name: str = ''
    config_operation: int = 0
    value: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class IncrementalAlterConfigsRequestAlterConfigsResource:
    """AlterConfigsResource in IncrementalAlterConfigsRequest."""

    resource_type: int = 0
    resource_name: str = ''
    configs: list[IncrementalAlterConfigsRequestAlterableConfig] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class IncrementalAlterConfigsRequest:
    """IncrementalAlterConfigsRequest."""

    resources: list[IncrementalAlterConfigsRequestAlterConfigsResource] = attr.Factory(list)
    validate_only: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class IncrementalAlterConfigsResponseAlterConfigsResourceResponse:
    """AlterConfigsResourceResponse in IncrementalAlterConfigsResponse."""

    error_code: int = 0
    error_message: str | None = ''
    resource_type: int = 0
    resource_name: str = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class IncrementalAlterConfigsResponse:
    """IncrementalAlterConfigsResponse."""

    throttle_time_ms: int = 0
    responses: list[IncrementalAlterConfigsResponseAlterConfigsResourceResponse] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ReassignablePartition:
    """ReassignablePartition in AlterPartitionReassignmentsRequest."""

    partition_index: int = 0
    replicas: list[int] | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ReassignableTopic:
    """ReassignableTopic in AlterPartitionReassignmentsRequest."""

    name: str = ''
    partitions: list[ReassignablePartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterPartitionReassignmentsRequest:
    """AlterPartitionReassignmentsRequest."""

    timeout_ms: int = 60000
    allow_replication_factor_change: bool = True
    topics: list[ReassignableTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ReassignablePartitionResponse:
    """ReassignablePartitionResponse in AlterPartitionReassignmentsResponse."""

    partition_index: int = 0
    error_code: int = 0
    error_message: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ReassignableTopicResponse:
    """ReassignableTopicResponse in AlterPartitionReassignmentsResponse."""

    name: str = ''
    partitions: list[ReassignablePartitionResponse] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterPartitionReassignmentsResponse:
    """AlterPartitionReassignmentsResponse."""

    throttle_time_ms: int = 0
    allow_replication_factor_change: bool = True
    error_code: int = 0
    error_message: str | None = ''
    responses: list[ReassignableTopicResponse] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListPartitionReassignmentsTopics:
    """ListPartitionReassignmentsTopics in ListPartitionReassignmentsRequest."""

    name: str = ''
    partition_indexes: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListPartitionReassignmentsRequest:
    """ListPartitionReassignmentsRequest."""

    timeout_ms: int = 60000
    topics: list[ListPartitionReassignmentsTopics] | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OngoingPartitionReassignment:
    """OngoingPartitionReassignment in ListPartitionReassignmentsResponse."""

    partition_index: int = 0
    replicas: list[int] = attr.Factory(list)
    adding_replicas: list[int] = attr.Factory(list)
    removing_replicas: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OngoingTopicReassignment:
    """OngoingTopicReassignment in ListPartitionReassignmentsResponse."""

    name: str = ''
    partitions: list[OngoingPartitionReassignment] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListPartitionReassignmentsResponse:
    """ListPartitionReassignmentsResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''
    topics: list[OngoingTopicReassignment] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetDeleteRequestPartition:
    """OffsetDeleteRequestPartition in OffsetDeleteRequest."""

    partition_index: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetDeleteRequestTopic:
    """OffsetDeleteRequestTopic in OffsetDeleteRequest."""

    name: str = ''
    partitions: list[OffsetDeleteRequestPartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetDeleteRequest:
    """OffsetDeleteRequest."""

    group_id: str = ''
    topics: list[OffsetDeleteRequestTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetDeleteResponsePartition:
    """OffsetDeleteResponsePartition in OffsetDeleteResponse."""

    partition_index: int = 0
    error_code: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetDeleteResponseTopic:
    """OffsetDeleteResponseTopic in OffsetDeleteResponse."""

    name: str = ''
    partitions: list[OffsetDeleteResponsePartition] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class OffsetDeleteResponse:
    """OffsetDeleteResponse."""

    error_code: int = 0
    throttle_time_ms: int = 0
    topics: list[OffsetDeleteResponseTopic] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class UserName:
    """UserName in DescribeUserScramCredentialsRequest."""

    name: str = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeUserScramCredentialsRequest:
    """DescribeUserScramCredentialsRequest."""

    users: list[UserName] | None = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class CredentialInfo:
    """CredentialInfo in DescribeUserScramCredentialsResponse."""

    mechanism: int = 0
    iterations: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeUserScramCredentialsResult:
    """DescribeUserScramCredentialsResult in DescribeUserScramCredentialsResponse."""

    user: str = ''
    error_code: int = 0
    error_message: str | None = ''
    credential_infos: list[CredentialInfo] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeUserScramCredentialsResponse:
    """DescribeUserScramCredentialsResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = ''
    results: list[DescribeUserScramCredentialsResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ScramCredentialDeletion:
    """ScramCredentialDeletion in AlterUserScramCredentialsRequest."""

    name: str = ''
    mechanism: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ScramCredentialUpsertion:
    """ScramCredentialUpsertion in AlterUserScramCredentialsRequest."""

    name: str = ''
    mechanism: int = 0
    iterations: int = 0
    salt: bytes = b''
    salted_password: bytes = b''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterUserScramCredentialsRequest:
    """AlterUserScramCredentialsRequest."""

    deletions: list[ScramCredentialDeletion] = attr.Factory(list)
    upsertions: list[ScramCredentialUpsertion] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterUserScramCredentialsResult:
    """AlterUserScramCredentialsResult in AlterUserScramCredentialsResponse."""

    user_name: str = ''
    error_code: int = 0
    error_message: str | None = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterUserScramCredentialsResponse:
    """AlterUserScramCredentialsResponse."""

    throttle_time_ms: int = 0
    results: list[AlterUserScramCredentialsResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeQuorumRequestPartitionData:
    """DescribeQuorumRequestPartitionData in DescribeQuorumRequest."""

    partition_index: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeQuorumRequestTopicData:
    """DescribeQuorumRequestTopicData in DescribeQuorumRequest."""

    topic_name: str = ''
    partitions: list[DescribeQuorumRequestPartitionData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeQuorumRequest:
    """DescribeQuorumRequest."""

    topics: list[DescribeQuorumRequestTopicData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeQuorumResponseReplicaState:
    """DescribeQuorumResponseReplicaState in DescribeQuorumResponse."""

    replica_id: int = 0
    replica_directory_id: uuid.UUID = ZERO_UUID
    log_end_offset: int = 0
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeQuorumResponsePartitionData:
    """DescribeQuorumResponsePartitionData in DescribeQuorumResponse."""

    partition_index: int = 0
    error_code: int = 0
    error_message: str | None = None
    leader_id: int = 0
    leader_epoch: int = 0
    high_watermark: int = 0
    current_voters: list[DescribeQuorumResponseReplicaState] = attr.Factory(list)
    observers: list[DescribeQuorumResponseReplicaState] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeQuorumResponseTopicData:
    """DescribeQuorumResponseTopicData in DescribeQuorumResponse."""

    topic_name: str = ''
    partitions: list[DescribeQuorumResponsePartitionData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class Listener:
    """Listener in DescribeQuorumResponse."""

    name: str = ''
    host: str = ''
    port: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class Node:
    """Node in DescribeQuorumResponse."""

    node_id: int = 0
    listeners: list[Listener] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeQuorumResponse:
    """DescribeQuorumResponse."""

    error_code: int = 0
    error_message: str | None = None
    topics: list[DescribeQuorumResponseTopicData] = attr.Factory(list)
    nodes: list[Node] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterPartitionBrokerState:
    """AlterPartitionBrokerState in AlterPartitionRequest."""

    broker_id: int = 0
    broker_epoch: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterPartitionRequestAlterPartitionPartitionData:
    """AlterPartitionPartitionData in AlterPartitionRequest."""

    partition_index: int = 0
    leader_epoch: int = 0
    new_isr: list[int] = attr.Factory(list)
    new_isr_with_epochs: list[AlterPartitionBrokerState] = attr.Factory(list)
    leader_recovery_state: int = 0
    partition_epoch: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterPartitionRequestAlterPartitionTopicData:
    """AlterPartitionTopicData in AlterPartitionRequest."""

    topic_name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[AlterPartitionRequestAlterPartitionPartitionData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterPartitionRequest:
    """AlterPartitionRequest."""

    broker_id: int = 0
    broker_epoch: int = -1
    topics: list[AlterPartitionRequestAlterPartitionTopicData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterPartitionResponseAlterPartitionPartitionData:
    """AlterPartitionPartitionData in AlterPartitionResponse."""

    partition_index: int = 0
    error_code: int = 0
    leader_id: int = 0
    leader_epoch: int = 0
    isr: list[int] = attr.Factory(list)
    leader_recovery_state: int = 0
    partition_epoch: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterPartitionResponseAlterPartitionTopicData:
    """AlterPartitionTopicData in AlterPartitionResponse."""

    topic_name: str = ''
    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[AlterPartitionResponseAlterPartitionPartitionData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class AlterPartitionResponse:
    """AlterPartitionResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    topics: list[AlterPartitionResponseAlterPartitionTopicData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class FeatureUpdateKey:
    """FeatureUpdateKey in UpdateFeaturesRequest."""

    feature: str = ''
    max_version_level: int = 0
    allow_downgrade: bool = False
    upgrade_type: int = 1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class UpdateFeaturesRequest:
    """UpdateFeaturesRequest."""

    timeout_ms: int = 60000
    feature_updates: list[FeatureUpdateKey] = attr.Factory(list)
    validate_only: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class UpdatableFeatureResult:
    """UpdatableFeatureResult in UpdateFeaturesResponse."""

    feature: str = ''
    error_code: int = 0
    error_message: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class UpdateFeaturesResponse:
    """UpdateFeaturesResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = None
    results: list[UpdatableFeatureResult] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeClusterRequest:
    """DescribeClusterRequest."""

    include_cluster_authorized_operations: bool = False
    endpoint_type: int = 1
    include_fenced_brokers: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeClusterBroker:
    """DescribeClusterBroker in DescribeClusterResponse."""

    broker_id: int = 0
    host: str = ''
    port: int = 0
    rack: str | None = None
    is_fenced: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeClusterResponse:
    """DescribeClusterResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = None
    endpoint_type: int = 1
    cluster_id: str = ''
    controller_id: int = -1
    brokers: list[DescribeClusterBroker] = attr.Factory(list)
    cluster_authorized_operations: int = -2147483648
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TopicRequest:
    """TopicRequest in DescribeProducersRequest."""

    name: str = ''
    partition_indexes: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeProducersRequest:
    """DescribeProducersRequest."""

    topics: list[TopicRequest] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ProducerState:
    """ProducerState in DescribeProducersResponse."""

    producer_id: int = 0
    producer_epoch: int = 0
    last_sequence: int = -1
    last_timestamp: int = -1
    coordinator_epoch: int = 0
    current_txn_start_offset: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class PartitionResponse:
    """PartitionResponse in DescribeProducersResponse."""

    partition_index: int = 0
    error_code: int = 0
    error_message: str | None = None
    active_producers: list[ProducerState] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TopicResponse:
    """TopicResponse in DescribeProducersResponse."""

    name: str = ''
    partitions: list[PartitionResponse] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeProducersResponse:
    """DescribeProducersResponse."""

    throttle_time_ms: int = 0
    topics: list[TopicResponse] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeTransactionsRequest:
    """DescribeTransactionsRequest."""

    transactional_ids: list[str] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class TopicData:
    """TopicData in DescribeTransactionsResponse."""

    topic: str = ''
    partitions: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeTransactionsResponseTransactionState:
    """TransactionState in DescribeTransactionsResponse."""

    error_code: int = 0
    transactional_id: str = ''
    transaction_state: str = ''
    transaction_timeout_ms: int = 0
    transaction_start_time_ms: int = 0
    producer_id: int = 0
    producer_epoch: int = 0
    topics: list[TopicData] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeTransactionsResponse:
    """DescribeTransactionsResponse."""

    throttle_time_ms: int = 0
    transaction_states: list[DescribeTransactionsResponseTransactionState] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListTransactionsRequest:
    """ListTransactionsRequest."""

    state_filters: list[str] = attr.Factory(list)
    producer_id_filters: list[int] = attr.Factory(list)
    duration_filter: int = -1
    transactional_id_pattern: str | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListTransactionsResponseTransactionState:
    """TransactionState in ListTransactionsResponse."""

    transactional_id: str = ''
    producer_id: int = 0
    transaction_state: str = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListTransactionsResponse:
    """ListTransactionsResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    unknown_state_filters: list[str] = attr.Factory(list)
    transaction_states: list[ListTransactionsResponseTransactionState] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerGroupHeartbeatRequestTopicPartitions:
    """TopicPartitions in ConsumerGroupHeartbeatRequest."""

    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerGroupHeartbeatRequest:
    """ConsumerGroupHeartbeatRequest."""

    group_id: str = ''
    member_id: str = ''
    member_epoch: int = 0
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: list[ConsumerGroupHeartbeatRequestTopicPartitions] | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerGroupHeartbeatResponseTopicPartitions:
    """TopicPartitions in ConsumerGroupHeartbeatResponse."""

    topic_id: uuid.UUID = ZERO_UUID
    partitions: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerGroupHeartbeatResponseAssignment:
    """Assignment in ConsumerGroupHeartbeatResponse."""

    topic_partitions: list[ConsumerGroupHeartbeatResponseTopicPartitions] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerGroupHeartbeatResponse:
    """ConsumerGroupHeartbeatResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: ConsumerGroupHeartbeatResponseAssignment | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerGroupDescribeRequest:
    """ConsumerGroupDescribeRequest."""

    group_ids: list[str] = attr.Factory(list)
    include_authorized_operations: bool = False
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerGroupDescribeResponseTopicPartitions:
    """TopicPartitions in ConsumerGroupDescribeResponse."""

    topic_id: uuid.UUID = ZERO_UUID
    topic_name: str = ''
    partitions: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerGroupDescribeResponseAssignment:
    """Assignment in ConsumerGroupDescribeResponse."""

    topic_partitions: list[ConsumerGroupDescribeResponseTopicPartitions] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class Member:
    """Member in ConsumerGroupDescribeResponse."""

    member_id: str = ''
    instance_id: str | None = None
    rack_id: str | None = None
    member_epoch: int = 0
    client_id: str = ''
    client_host: str = ''
    subscribed_topic_names: list[str] = attr.Factory(list)
    subscribed_topic_regex: str | None = None
    assignment: ConsumerGroupDescribeResponseAssignment = attr.Factory(ConsumerGroupDescribeResponseAssignment)
    target_assignment: ConsumerGroupDescribeResponseAssignment = attr.Factory(ConsumerGroupDescribeResponseAssignment)
    member_type: int = -1
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerGroupDescribeResponseDescribedGroup:
    """DescribedGroup in ConsumerGroupDescribeResponse."""

    error_code: int = 0
    error_message: str | None = None
    group_id: str = ''
    group_state: str = ''
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ''
    members: list[Member] = attr.Factory(list)
    authorized_operations: int = -2147483648
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConsumerGroupDescribeResponse:
    """ConsumerGroupDescribeResponse."""

    throttle_time_ms: int = 0
    groups: list[ConsumerGroupDescribeResponseDescribedGroup] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListConfigResourcesRequest:
    """ListConfigResourcesRequest."""

    resource_types: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ConfigResource:
    """ConfigResource in ListConfigResourcesResponse."""

    resource_name: str = ''
    resource_type: int = 16
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class ListConfigResourcesResponse:
    """ListConfigResourcesResponse."""

    throttle_time_ms: int = 0
    error_code: int = 0
    config_resources: list[ConfigResource] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeTopicPartitionsRequestTopicRequest:
    """DescribeTopicPartitionsRequestTopicRequest in DescribeTopicPartitionsRequest."""

    name: str = ''
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class Cursor:
    """Cursor in DescribeTopicPartitionsRequest."""

    topic_name: str = ''
    partition_index: int = 0
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeTopicPartitionsRequest:
    """DescribeTopicPartitionsRequest."""

    topics: list[DescribeTopicPartitionsRequestTopicRequest] = attr.Factory(list)
    response_partition_limit: int = 2000
    cursor: Cursor | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeTopicPartitionsResponsePartition:
    """DescribeTopicPartitionsResponsePartition in DescribeTopicPartitionsResponse."""

    error_code: int = 0
    partition_index: int = 0
    leader_id: int = 0
    leader_epoch: int = -1
    replica_nodes: list[int] = attr.Factory(list)
    isr_nodes: list[int] = attr.Factory(list)
    eligible_leader_replicas: list[int] | None = None
    last_known_elr: list[int] | None = None
    offline_replicas: list[int] = attr.Factory(list)
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeTopicPartitionsResponseTopic:
    """DescribeTopicPartitionsResponseTopic in DescribeTopicPartitionsResponse."""

    error_code: int = 0
    name: str | None = ''
    topic_id: uuid.UUID = ZERO_UUID
    is_internal: bool = False
    partitions: list[DescribeTopicPartitionsResponsePartition] = attr.Factory(list)
    topic_authorized_operations: int = -2147483648
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


@attr.s(auto_attribs=True, slots=True, eq=True, order=False, hash=False,
        weakref_slot=False)
class DescribeTopicPartitionsResponse:
    """DescribeTopicPartitionsResponse."""

    throttle_time_ms: int = 0
    topics: list[DescribeTopicPartitionsResponseTopic] = attr.Factory(list)
    next_cursor: Cursor | None = None
    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = attr.ib(
        default=(), repr=False, kw_only=True)


CLASSES: dict[tuple[str, str], type] = {
    ('RequestHeader', 'RequestHeader'): RequestHeader,
    ('ResponseHeader', 'ResponseHeader'): ResponseHeader,
    ('ConsumerProtocolSubscription', 'TopicPartition'): ConsumerProtocolSubscriptionTopicPartition,
    ('ConsumerProtocolSubscription', 'ConsumerProtocolSubscription'): ConsumerProtocolSubscription,
    ('ConsumerProtocolAssignment', 'TopicPartition'): ConsumerProtocolAssignmentTopicPartition,
    ('ConsumerProtocolAssignment', 'ConsumerProtocolAssignment'): ConsumerProtocolAssignment,
    ('ProduceRequest', 'PartitionProduceData'): PartitionProduceData,
    ('ProduceRequest', 'TopicProduceData'): TopicProduceData,
    ('ProduceRequest', 'ProduceRequest'): ProduceRequest,
    ('ProduceResponse', 'BatchIndexAndErrorMessage'): BatchIndexAndErrorMessage,
    ('ProduceResponse', 'LeaderIdAndEpoch'): ProduceResponseLeaderIdAndEpoch,
    ('ProduceResponse', 'PartitionProduceResponse'): PartitionProduceResponse,
    ('ProduceResponse', 'TopicProduceResponse'): TopicProduceResponse,
    ('ProduceResponse', 'NodeEndpoint'): ProduceResponseNodeEndpoint,
    ('ProduceResponse', 'ProduceResponse'): ProduceResponse,
    ('FetchRequest', 'ReplicaState'): ReplicaState,
    ('FetchRequest', 'FetchPartition'): FetchPartition,
    ('FetchRequest', 'FetchTopic'): FetchTopic,
    ('FetchRequest', 'ForgottenTopic'): ForgottenTopic,
    ('FetchRequest', 'FetchRequest'): FetchRequest,
    ('FetchResponse', 'EpochEndOffset'): FetchResponseEpochEndOffset,
    ('FetchResponse', 'LeaderIdAndEpoch'): FetchResponseLeaderIdAndEpoch,
    ('FetchResponse', 'SnapshotId'): SnapshotId,
    ('FetchResponse', 'AbortedTransaction'): AbortedTransaction,
    ('FetchResponse', 'PartitionData'): PartitionData,
    ('FetchResponse', 'FetchableTopicResponse'): FetchableTopicResponse,
    ('FetchResponse', 'NodeEndpoint'): FetchResponseNodeEndpoint,
    ('FetchResponse', 'FetchResponse'): FetchResponse,
    ('ListOffsetsRequest', 'ListOffsetsPartition'): ListOffsetsPartition,
    ('ListOffsetsRequest', 'ListOffsetsTopic'): ListOffsetsTopic,
    ('ListOffsetsRequest', 'ListOffsetsRequest'): ListOffsetsRequest,
    ('ListOffsetsResponse', 'ListOffsetsPartitionResponse'): ListOffsetsPartitionResponse,
    ('ListOffsetsResponse', 'ListOffsetsTopicResponse'): ListOffsetsTopicResponse,
    ('ListOffsetsResponse', 'ListOffsetsResponse'): ListOffsetsResponse,
    ('MetadataRequest', 'MetadataRequestTopic'): MetadataRequestTopic,
    ('MetadataRequest', 'MetadataRequest'): MetadataRequest,
    ('MetadataResponse', 'MetadataResponseBroker'): MetadataResponseBroker,
    ('MetadataResponse', 'MetadataResponsePartition'): MetadataResponsePartition,
    ('MetadataResponse', 'MetadataResponseTopic'): MetadataResponseTopic,
    ('MetadataResponse', 'MetadataResponse'): MetadataResponse,
    ('LeaderAndIsrRequest', 'LeaderAndIsrPartitionState'): LeaderAndIsrPartitionState,
    ('LeaderAndIsrRequest', 'LeaderAndIsrTopicState'): LeaderAndIsrTopicState,
    ('LeaderAndIsrRequest', 'LeaderAndIsrLiveLeader'): LeaderAndIsrLiveLeader,
    ('LeaderAndIsrRequest', 'LeaderAndIsrRequest'): LeaderAndIsrRequest,
    ('LeaderAndIsrResponse', 'LeaderAndIsrPartitionError'): LeaderAndIsrPartitionError,
    ('LeaderAndIsrResponse', 'LeaderAndIsrTopicError'): LeaderAndIsrTopicError,
    ('LeaderAndIsrResponse', 'LeaderAndIsrResponse'): LeaderAndIsrResponse,
    ('StopReplicaRequest', 'StopReplicaPartitionV0'): StopReplicaPartitionV0,
    ('StopReplicaRequest', 'StopReplicaTopicV1'): StopReplicaTopicV1,
    ('StopReplicaRequest', 'StopReplicaPartitionState'): StopReplicaPartitionState,
    ('StopReplicaRequest', 'StopReplicaTopicState'): StopReplicaTopicState,
    ('StopReplicaRequest', 'StopReplicaRequest'): StopReplicaRequest,
    ('StopReplicaResponse', 'StopReplicaPartitionError'): StopReplicaPartitionError,
    ('StopReplicaResponse', 'StopReplicaResponse'): StopReplicaResponse,
    ('UpdateMetadataRequest', 'UpdateMetadataPartitionState'): UpdateMetadataPartitionState,
    ('UpdateMetadataRequest', 'UpdateMetadataTopicState'): UpdateMetadataTopicState,
    ('UpdateMetadataRequest', 'UpdateMetadataEndpoint'): UpdateMetadataEndpoint,
    ('UpdateMetadataRequest', 'UpdateMetadataBroker'): UpdateMetadataBroker,
    ('UpdateMetadataRequest', 'UpdateMetadataRequest'): UpdateMetadataRequest,
    ('UpdateMetadataResponse', 'UpdateMetadataResponse'): UpdateMetadataResponse,
    ('ControlledShutdownRequest', 'ControlledShutdownRequest'): ControlledShutdownRequest,
    ('ControlledShutdownResponse', 'RemainingPartition'): RemainingPartition,
    ('ControlledShutdownResponse', 'ControlledShutdownResponse'): ControlledShutdownResponse,
    ('OffsetCommitRequest', 'OffsetCommitRequestPartition'): OffsetCommitRequestPartition,
    ('OffsetCommitRequest', 'OffsetCommitRequestTopic'): OffsetCommitRequestTopic,
    ('OffsetCommitRequest', 'OffsetCommitRequest'): OffsetCommitRequest,
    ('OffsetCommitResponse', 'OffsetCommitResponsePartition'): OffsetCommitResponsePartition,
    ('OffsetCommitResponse', 'OffsetCommitResponseTopic'): OffsetCommitResponseTopic,
    ('OffsetCommitResponse', 'OffsetCommitResponse'): OffsetCommitResponse,
    ('OffsetFetchRequest', 'OffsetFetchRequestTopic'): OffsetFetchRequestTopic,
    ('OffsetFetchRequest', 'OffsetFetchRequestTopics'): OffsetFetchRequestTopics,
    ('OffsetFetchRequest', 'OffsetFetchRequestGroup'): OffsetFetchRequestGroup,
    ('OffsetFetchRequest', 'OffsetFetchRequest'): OffsetFetchRequest,
    ('OffsetFetchResponse', 'OffsetFetchResponsePartition'): OffsetFetchResponsePartition,
    ('OffsetFetchResponse', 'OffsetFetchResponseTopic'): OffsetFetchResponseTopic,
    ('OffsetFetchResponse', 'OffsetFetchResponsePartitions'): OffsetFetchResponsePartitions,
    ('OffsetFetchResponse', 'OffsetFetchResponseTopics'): OffsetFetchResponseTopics,
    ('OffsetFetchResponse', 'OffsetFetchResponseGroup'): OffsetFetchResponseGroup,
    ('OffsetFetchResponse', 'OffsetFetchResponse'): OffsetFetchResponse,
    ('FindCoordinatorRequest', 'FindCoordinatorRequest'): FindCoordinatorRequest,
    ('FindCoordinatorResponse', 'Coordinator'): Coordinator,
    ('FindCoordinatorResponse', 'FindCoordinatorResponse'): FindCoordinatorResponse,
    ('JoinGroupRequest', 'JoinGroupRequestProtocol'): JoinGroupRequestProtocol,
    ('JoinGroupRequest', 'JoinGroupRequest'): JoinGroupRequest,
    ('JoinGroupResponse', 'JoinGroupResponseMember'): JoinGroupResponseMember,
    ('JoinGroupResponse', 'JoinGroupResponse'): JoinGroupResponse,
    ('HeartbeatRequest', 'HeartbeatRequest'): HeartbeatRequest,
    ('HeartbeatResponse', 'HeartbeatResponse'): HeartbeatResponse,
    ('LeaveGroupRequest', 'MemberIdentity'): MemberIdentity,
    ('LeaveGroupRequest', 'LeaveGroupRequest'): LeaveGroupRequest,
    ('LeaveGroupResponse', 'MemberResponse'): MemberResponse,
    ('LeaveGroupResponse', 'LeaveGroupResponse'): LeaveGroupResponse,
    ('SyncGroupRequest', 'SyncGroupRequestAssignment'): SyncGroupRequestAssignment,
    ('SyncGroupRequest', 'SyncGroupRequest'): SyncGroupRequest,
    ('SyncGroupResponse', 'SyncGroupResponse'): SyncGroupResponse,
    ('DescribeGroupsRequest', 'DescribeGroupsRequest'): DescribeGroupsRequest,
    ('DescribeGroupsResponse', 'DescribedGroupMember'): DescribedGroupMember,
    ('DescribeGroupsResponse', 'DescribedGroup'): DescribeGroupsResponseDescribedGroup,
    ('DescribeGroupsResponse', 'DescribeGroupsResponse'): DescribeGroupsResponse,
    ('ListGroupsRequest', 'ListGroupsRequest'): ListGroupsRequest,
    ('ListGroupsResponse', 'ListedGroup'): ListedGroup,
    ('ListGroupsResponse', 'ListGroupsResponse'): ListGroupsResponse,
    ('SaslHandshakeRequest', 'SaslHandshakeRequest'): SaslHandshakeRequest,
    ('SaslHandshakeResponse', 'SaslHandshakeResponse'): SaslHandshakeResponse,
    ('ApiVersionsRequest', 'ApiVersionsRequest'): ApiVersionsRequest,
    ('ApiVersionsResponse', 'ApiVersion'): ApiVersion,
    ('ApiVersionsResponse', 'SupportedFeatureKey'): SupportedFeatureKey,
    ('ApiVersionsResponse', 'FinalizedFeatureKey'): FinalizedFeatureKey,
    ('ApiVersionsResponse', 'ApiVersionsResponse'): ApiVersionsResponse,
    ('CreateTopicsRequest', 'CreatableReplicaAssignment'): CreatableReplicaAssignment,
    ('CreateTopicsRequest', 'CreatableTopicConfig'): CreatableTopicConfig,
    ('CreateTopicsRequest', 'CreatableTopic'): CreatableTopic,
    ('CreateTopicsRequest', 'CreateTopicsRequest'): CreateTopicsRequest,
    ('CreateTopicsResponse', 'CreatableTopicConfigs'): CreatableTopicConfigs,
    ('CreateTopicsResponse', 'CreatableTopicResult'): CreatableTopicResult,
    ('CreateTopicsResponse', 'CreateTopicsResponse'): CreateTopicsResponse,
    ('DeleteTopicsRequest', 'DeleteTopicState'): DeleteTopicState,
    ('DeleteTopicsRequest', 'DeleteTopicsRequest'): DeleteTopicsRequest,
    ('DeleteTopicsResponse', 'DeletableTopicResult'): DeletableTopicResult,
    ('DeleteTopicsResponse', 'DeleteTopicsResponse'): DeleteTopicsResponse,
    ('DeleteRecordsRequest', 'DeleteRecordsPartition'): DeleteRecordsPartition,
    ('DeleteRecordsRequest', 'DeleteRecordsTopic'): DeleteRecordsTopic,
    ('DeleteRecordsRequest', 'DeleteRecordsRequest'): DeleteRecordsRequest,
    ('DeleteRecordsResponse', 'DeleteRecordsPartitionResult'): DeleteRecordsPartitionResult,
    ('DeleteRecordsResponse', 'DeleteRecordsTopicResult'): DeleteRecordsTopicResult,
    ('DeleteRecordsResponse', 'DeleteRecordsResponse'): DeleteRecordsResponse,
    ('InitProducerIdRequest', 'InitProducerIdRequest'): InitProducerIdRequest,
    ('InitProducerIdResponse', 'InitProducerIdResponse'): InitProducerIdResponse,
    ('OffsetForLeaderEpochRequest', 'OffsetForLeaderPartition'): OffsetForLeaderPartition,
    ('OffsetForLeaderEpochRequest', 'OffsetForLeaderTopic'): OffsetForLeaderTopic,
    ('OffsetForLeaderEpochRequest', 'OffsetForLeaderEpochRequest'): OffsetForLeaderEpochRequest,
    ('OffsetForLeaderEpochResponse', 'EpochEndOffset'): OffsetForLeaderEpochResponseEpochEndOffset,
    ('OffsetForLeaderEpochResponse', 'OffsetForLeaderTopicResult'): OffsetForLeaderTopicResult,
    ('OffsetForLeaderEpochResponse', 'OffsetForLeaderEpochResponse'): OffsetForLeaderEpochResponse,
    ('AddPartitionsToTxnRequest', 'AddPartitionsToTxnTopic'): AddPartitionsToTxnTopic,
    ('AddPartitionsToTxnRequest', 'AddPartitionsToTxnTransaction'): AddPartitionsToTxnTransaction,
    ('AddPartitionsToTxnRequest', 'AddPartitionsToTxnRequest'): AddPartitionsToTxnRequest,
    ('AddPartitionsToTxnResponse', 'AddPartitionsToTxnPartitionResult'): AddPartitionsToTxnPartitionResult,
    ('AddPartitionsToTxnResponse', 'AddPartitionsToTxnTopicResult'): AddPartitionsToTxnTopicResult,
    ('AddPartitionsToTxnResponse', 'AddPartitionsToTxnResult'): AddPartitionsToTxnResult,
    ('AddPartitionsToTxnResponse', 'AddPartitionsToTxnResponse'): AddPartitionsToTxnResponse,
    ('AddOffsetsToTxnRequest', 'AddOffsetsToTxnRequest'): AddOffsetsToTxnRequest,
    ('AddOffsetsToTxnResponse', 'AddOffsetsToTxnResponse'): AddOffsetsToTxnResponse,
    ('EndTxnRequest', 'EndTxnRequest'): EndTxnRequest,
    ('EndTxnResponse', 'EndTxnResponse'): EndTxnResponse,
    ('WriteTxnMarkersRequest', 'WritableTxnMarkerTopic'): WritableTxnMarkerTopic,
    ('WriteTxnMarkersRequest', 'WritableTxnMarker'): WritableTxnMarker,
    ('WriteTxnMarkersRequest', 'WriteTxnMarkersRequest'): WriteTxnMarkersRequest,
    ('WriteTxnMarkersResponse', 'WritableTxnMarkerPartitionResult'): WritableTxnMarkerPartitionResult,
    ('WriteTxnMarkersResponse', 'WritableTxnMarkerTopicResult'): WritableTxnMarkerTopicResult,
    ('WriteTxnMarkersResponse', 'WritableTxnMarkerResult'): WritableTxnMarkerResult,
    ('WriteTxnMarkersResponse', 'WriteTxnMarkersResponse'): WriteTxnMarkersResponse,
    ('TxnOffsetCommitRequest', 'TxnOffsetCommitRequestPartition'): TxnOffsetCommitRequestPartition,
    ('TxnOffsetCommitRequest', 'TxnOffsetCommitRequestTopic'): TxnOffsetCommitRequestTopic,
    ('TxnOffsetCommitRequest', 'TxnOffsetCommitRequest'): TxnOffsetCommitRequest,
    ('TxnOffsetCommitResponse', 'TxnOffsetCommitResponsePartition'): TxnOffsetCommitResponsePartition,
    ('TxnOffsetCommitResponse', 'TxnOffsetCommitResponseTopic'): TxnOffsetCommitResponseTopic,
    ('TxnOffsetCommitResponse', 'TxnOffsetCommitResponse'): TxnOffsetCommitResponse,
    ('DescribeAclsRequest', 'DescribeAclsRequest'): DescribeAclsRequest,
    ('DescribeAclsResponse', 'AclDescription'): AclDescription,
    ('DescribeAclsResponse', 'DescribeAclsResource'): DescribeAclsResource,
    ('DescribeAclsResponse', 'DescribeAclsResponse'): DescribeAclsResponse,
    ('CreateAclsRequest', 'AclCreation'): AclCreation,
    ('CreateAclsRequest', 'CreateAclsRequest'): CreateAclsRequest,
    ('CreateAclsResponse', 'AclCreationResult'): AclCreationResult,
    ('CreateAclsResponse', 'CreateAclsResponse'): CreateAclsResponse,
    ('DeleteAclsRequest', 'DeleteAclsFilter'): DeleteAclsFilter,
    ('DeleteAclsRequest', 'DeleteAclsRequest'): DeleteAclsRequest,
    ('DeleteAclsResponse', 'DeleteAclsMatchingAcl'): DeleteAclsMatchingAcl,
    ('DeleteAclsResponse', 'DeleteAclsFilterResult'): DeleteAclsFilterResult,
    ('DeleteAclsResponse', 'DeleteAclsResponse'): DeleteAclsResponse,
    ('DescribeConfigsRequest', 'DescribeConfigsResource'): DescribeConfigsResource,
    ('DescribeConfigsRequest', 'DescribeConfigsRequest'): DescribeConfigsRequest,
    ('DescribeConfigsResponse', 'DescribeConfigsSynonym'): DescribeConfigsSynonym,
    ('DescribeConfigsResponse', 'DescribeConfigsResourceResult'): DescribeConfigsResourceResult,
    ('DescribeConfigsResponse', 'DescribeConfigsResult'): DescribeConfigsResult,
    ('DescribeConfigsResponse', 'DescribeConfigsResponse'): DescribeConfigsResponse,
    ('AlterConfigsRequest', 'AlterableConfig'): AlterConfigsRequestAlterableConfig,
    ('AlterConfigsRequest', 'AlterConfigsResource'): AlterConfigsRequestAlterConfigsResource,
    ('AlterConfigsRequest', 'AlterConfigsRequest'): AlterConfigsRequest,
    ('AlterConfigsResponse', 'AlterConfigsResourceResponse'): AlterConfigsResponseAlterConfigsResourceResponse,
    ('AlterConfigsResponse', 'AlterConfigsResponse'): AlterConfigsResponse,
    ('AlterReplicaLogDirsRequest', 'AlterReplicaLogDirTopic'): AlterReplicaLogDirTopic,
    ('AlterReplicaLogDirsRequest', 'AlterReplicaLogDir'): AlterReplicaLogDir,
    ('AlterReplicaLogDirsRequest', 'AlterReplicaLogDirsRequest'): AlterReplicaLogDirsRequest,
    ('AlterReplicaLogDirsResponse', 'AlterReplicaLogDirPartitionResult'): AlterReplicaLogDirPartitionResult,
    ('AlterReplicaLogDirsResponse', 'AlterReplicaLogDirTopicResult'): AlterReplicaLogDirTopicResult,
    ('AlterReplicaLogDirsResponse', 'AlterReplicaLogDirsResponse'): AlterReplicaLogDirsResponse,
    ('DescribeLogDirsRequest', 'DescribableLogDirTopic'): DescribableLogDirTopic,
    ('DescribeLogDirsRequest', 'DescribeLogDirsRequest'): DescribeLogDirsRequest,
    ('DescribeLogDirsResponse', 'DescribeLogDirsPartition'): DescribeLogDirsPartition,
    ('DescribeLogDirsResponse', 'DescribeLogDirsTopic'): DescribeLogDirsTopic,
    ('DescribeLogDirsResponse', 'DescribeLogDirsResult'): DescribeLogDirsResult,
    ('DescribeLogDirsResponse', 'DescribeLogDirsResponse'): DescribeLogDirsResponse,
    ('SaslAuthenticateRequest', 'SaslAuthenticateRequest'): SaslAuthenticateRequest,
    ('SaslAuthenticateResponse', 'SaslAuthenticateResponse'): SaslAuthenticateResponse,
    ('CreatePartitionsRequest', 'CreatePartitionsAssignment'): CreatePartitionsAssignment,
    ('CreatePartitionsRequest', 'CreatePartitionsTopic'): CreatePartitionsTopic,
    ('CreatePartitionsRequest', 'CreatePartitionsRequest'): CreatePartitionsRequest,
    ('CreatePartitionsResponse', 'CreatePartitionsTopicResult'): CreatePartitionsTopicResult,
    ('CreatePartitionsResponse', 'CreatePartitionsResponse'): CreatePartitionsResponse,
    ('DeleteGroupsRequest', 'DeleteGroupsRequest'): DeleteGroupsRequest,
    ('DeleteGroupsResponse', 'DeletableGroupResult'): DeletableGroupResult,
    ('DeleteGroupsResponse', 'DeleteGroupsResponse'): DeleteGroupsResponse,
    ('ElectLeadersRequest', 'ElectLeadersTopicPartitions'): ElectLeadersTopicPartitions,
    ('ElectLeadersRequest', 'ElectLeadersRequest'): ElectLeadersRequest,
    ('ElectLeadersResponse', 'ElectLeadersPartitionResult'): ElectLeadersPartitionResult,
    ('ElectLeadersResponse', 'ElectLeadersReplicaElectionResult'): ElectLeadersReplicaElectionResult,
    ('ElectLeadersResponse', 'ElectLeadersResponse'): ElectLeadersResponse,
    ('IncrementalAlterConfigsRequest', 'AlterableConfig'): IncrementalAlterConfigsRequestAlterableConfig,
    ('IncrementalAlterConfigsRequest', 'AlterConfigsResource'): IncrementalAlterConfigsRequestAlterConfigsResource,
    ('IncrementalAlterConfigsRequest', 'IncrementalAlterConfigsRequest'): IncrementalAlterConfigsRequest,
    ('IncrementalAlterConfigsResponse', 'AlterConfigsResourceResponse'): IncrementalAlterConfigsResponseAlterConfigsResourceResponse,
    ('IncrementalAlterConfigsResponse', 'IncrementalAlterConfigsResponse'): IncrementalAlterConfigsResponse,
    ('AlterPartitionReassignmentsRequest', 'ReassignablePartition'): ReassignablePartition,
    ('AlterPartitionReassignmentsRequest', 'ReassignableTopic'): ReassignableTopic,
    ('AlterPartitionReassignmentsRequest', 'AlterPartitionReassignmentsRequest'): AlterPartitionReassignmentsRequest,
    ('AlterPartitionReassignmentsResponse', 'ReassignablePartitionResponse'): ReassignablePartitionResponse,
    ('AlterPartitionReassignmentsResponse', 'ReassignableTopicResponse'): ReassignableTopicResponse,
    ('AlterPartitionReassignmentsResponse', 'AlterPartitionReassignmentsResponse'): AlterPartitionReassignmentsResponse,
    ('ListPartitionReassignmentsRequest', 'ListPartitionReassignmentsTopics'): ListPartitionReassignmentsTopics,
    ('ListPartitionReassignmentsRequest', 'ListPartitionReassignmentsRequest'): ListPartitionReassignmentsRequest,
    ('ListPartitionReassignmentsResponse', 'OngoingPartitionReassignment'): OngoingPartitionReassignment,
    ('ListPartitionReassignmentsResponse', 'OngoingTopicReassignment'): OngoingTopicReassignment,
    ('ListPartitionReassignmentsResponse', 'ListPartitionReassignmentsResponse'): ListPartitionReassignmentsResponse,
    ('OffsetDeleteRequest', 'OffsetDeleteRequestPartition'): OffsetDeleteRequestPartition,
    ('OffsetDeleteRequest', 'OffsetDeleteRequestTopic'): OffsetDeleteRequestTopic,
    ('OffsetDeleteRequest', 'OffsetDeleteRequest'): OffsetDeleteRequest,
    ('OffsetDeleteResponse', 'OffsetDeleteResponsePartition'): OffsetDeleteResponsePartition,
    ('OffsetDeleteResponse', 'OffsetDeleteResponseTopic'): OffsetDeleteResponseTopic,
    ('OffsetDeleteResponse', 'OffsetDeleteResponse'): OffsetDeleteResponse,
    ('DescribeUserScramCredentialsRequest', 'UserName'): UserName,
    ('DescribeUserScramCredentialsRequest', 'DescribeUserScramCredentialsRequest'): DescribeUserScramCredentialsRequest,
    ('DescribeUserScramCredentialsResponse', 'CredentialInfo'): CredentialInfo,
    ('DescribeUserScramCredentialsResponse', 'DescribeUserScramCredentialsResult'): DescribeUserScramCredentialsResult,
    ('DescribeUserScramCredentialsResponse', 'DescribeUserScramCredentialsResponse'): DescribeUserScramCredentialsResponse,
    ('AlterUserScramCredentialsRequest', 'ScramCredentialDeletion'): ScramCredentialDeletion,
    ('AlterUserScramCredentialsRequest', 'ScramCredentialUpsertion'): ScramCredentialUpsertion,
    ('AlterUserScramCredentialsRequest', 'AlterUserScramCredentialsRequest'): AlterUserScramCredentialsRequest,
    ('AlterUserScramCredentialsResponse', 'AlterUserScramCredentialsResult'): AlterUserScramCredentialsResult,
    ('AlterUserScramCredentialsResponse', 'AlterUserScramCredentialsResponse'): AlterUserScramCredentialsResponse,
    ('DescribeQuorumRequest', 'DescribeQuorumRequestPartitionData'): DescribeQuorumRequestPartitionData,
    ('DescribeQuorumRequest', 'DescribeQuorumRequestTopicData'): DescribeQuorumRequestTopicData,
    ('DescribeQuorumRequest', 'DescribeQuorumRequest'): DescribeQuorumRequest,
    ('DescribeQuorumResponse', 'DescribeQuorumResponseReplicaState'): DescribeQuorumResponseReplicaState,
    ('DescribeQuorumResponse', 'DescribeQuorumResponsePartitionData'): DescribeQuorumResponsePartitionData,
    ('DescribeQuorumResponse', 'DescribeQuorumResponseTopicData'): DescribeQuorumResponseTopicData,
    ('DescribeQuorumResponse', 'Listener'): Listener,
    ('DescribeQuorumResponse', 'Node'): Node,
    ('DescribeQuorumResponse', 'DescribeQuorumResponse'): DescribeQuorumResponse,
    ('AlterPartitionRequest', 'AlterPartitionBrokerState'): AlterPartitionBrokerState,
    ('AlterPartitionRequest', 'AlterPartitionPartitionData'): AlterPartitionRequestAlterPartitionPartitionData,
    ('AlterPartitionRequest', 'AlterPartitionTopicData'): AlterPartitionRequestAlterPartitionTopicData,
    ('AlterPartitionRequest', 'AlterPartitionRequest'): AlterPartitionRequest,
    ('AlterPartitionResponse', 'AlterPartitionPartitionData'): AlterPartitionResponseAlterPartitionPartitionData,
    ('AlterPartitionResponse', 'AlterPartitionTopicData'): AlterPartitionResponseAlterPartitionTopicData,
    ('AlterPartitionResponse', 'AlterPartitionResponse'): AlterPartitionResponse,
    ('UpdateFeaturesRequest', 'FeatureUpdateKey'): FeatureUpdateKey,
    ('UpdateFeaturesRequest', 'UpdateFeaturesRequest'): UpdateFeaturesRequest,
    ('UpdateFeaturesResponse', 'UpdatableFeatureResult'): UpdatableFeatureResult,
    ('UpdateFeaturesResponse', 'UpdateFeaturesResponse'): UpdateFeaturesResponse,
    ('DescribeClusterRequest', 'DescribeClusterRequest'): DescribeClusterRequest,
    ('DescribeClusterResponse', 'DescribeClusterBroker'): DescribeClusterBroker,
    ('DescribeClusterResponse', 'DescribeClusterResponse'): DescribeClusterResponse,
    ('DescribeProducersRequest', 'TopicRequest'): TopicRequest,
    ('DescribeProducersRequest', 'DescribeProducersRequest'): DescribeProducersRequest,
    ('DescribeProducersResponse', 'ProducerState'): ProducerState,
    ('DescribeProducersResponse', 'PartitionResponse'): PartitionResponse,
    ('DescribeProducersResponse', 'TopicResponse'): TopicResponse,
    ('DescribeProducersResponse', 'DescribeProducersResponse'): DescribeProducersResponse,
    ('DescribeTransactionsRequest', 'DescribeTransactionsRequest'): DescribeTransactionsRequest,
    ('DescribeTransactionsResponse', 'TopicData'): TopicData,
    ('DescribeTransactionsResponse', 'TransactionState'): DescribeTransactionsResponseTransactionState,
    ('DescribeTransactionsResponse', 'DescribeTransactionsResponse'): DescribeTransactionsResponse,
    ('ListTransactionsRequest', 'ListTransactionsRequest'): ListTransactionsRequest,
    ('ListTransactionsResponse', 'TransactionState'): ListTransactionsResponseTransactionState,
    ('ListTransactionsResponse', 'ListTransactionsResponse'): ListTransactionsResponse,
    ('ConsumerGroupHeartbeatRequest', 'TopicPartitions'): ConsumerGroupHeartbeatRequestTopicPartitions,
    ('ConsumerGroupHeartbeatRequest', 'ConsumerGroupHeartbeatRequest'): ConsumerGroupHeartbeatRequest,
    ('ConsumerGroupHeartbeatResponse', 'TopicPartitions'): ConsumerGroupHeartbeatResponseTopicPartitions,
    ('ConsumerGroupHeartbeatResponse', 'Assignment'): ConsumerGroupHeartbeatResponseAssignment,
    ('ConsumerGroupHeartbeatResponse', 'ConsumerGroupHeartbeatResponse'): ConsumerGroupHeartbeatResponse,
    ('ConsumerGroupDescribeRequest', 'ConsumerGroupDescribeRequest'): ConsumerGroupDescribeRequest,
    ('ConsumerGroupDescribeResponse', 'TopicPartitions'): ConsumerGroupDescribeResponseTopicPartitions,
    ('ConsumerGroupDescribeResponse', 'Assignment'): ConsumerGroupDescribeResponseAssignment,
    ('ConsumerGroupDescribeResponse', 'Member'): Member,
    ('ConsumerGroupDescribeResponse', 'DescribedGroup'): ConsumerGroupDescribeResponseDescribedGroup,
    ('ConsumerGroupDescribeResponse', 'ConsumerGroupDescribeResponse'): ConsumerGroupDescribeResponse,
    ('ListConfigResourcesRequest', 'ListConfigResourcesRequest'): ListConfigResourcesRequest,
    ('ListConfigResourcesResponse', 'ConfigResource'): ConfigResource,
    ('ListConfigResourcesResponse', 'ListConfigResourcesResponse'): ListConfigResourcesResponse,
    ('DescribeTopicPartitionsRequest', 'DescribeTopicPartitionsRequestTopicRequest'): DescribeTopicPartitionsRequestTopicRequest,
    ('DescribeTopicPartitionsRequest', 'Cursor'): Cursor,
    ('DescribeTopicPartitionsRequest', 'DescribeTopicPartitionsRequest'): DescribeTopicPartitionsRequest,
    ('DescribeTopicPartitionsResponse', 'DescribeTopicPartitionsResponsePartition'): DescribeTopicPartitionsResponsePartition,
    ('DescribeTopicPartitionsResponse', 'DescribeTopicPartitionsResponseTopic'): DescribeTopicPartitionsResponseTopic,
    ('DescribeTopicPartitionsResponse', 'Cursor'): Cursor,
    ('DescribeTopicPartitionsResponse', 'DescribeTopicPartitionsResponse'): DescribeTopicPartitionsResponse,
}
"""``(message name, struct name)`` -> its class (for ``classes.class_for``)."""

__all__ = [
    'CLASSES',
    'AbortedTransaction',
    'AclCreation',
    'AclCreationResult',
    'AclDescription',
    'AddOffsetsToTxnRequest',
    'AddOffsetsToTxnResponse',
    'AddPartitionsToTxnPartitionResult',
    'AddPartitionsToTxnRequest',
    'AddPartitionsToTxnResponse',
    'AddPartitionsToTxnResult',
    'AddPartitionsToTxnTopic',
    'AddPartitionsToTxnTopicResult',
    'AddPartitionsToTxnTransaction',
    'AlterConfigsRequest',
    'AlterConfigsRequestAlterConfigsResource',
    'AlterConfigsRequestAlterableConfig',
    'AlterConfigsResponse',
    'AlterConfigsResponseAlterConfigsResourceResponse',
    'AlterPartitionBrokerState',
    'AlterPartitionReassignmentsRequest',
    'AlterPartitionReassignmentsResponse',
    'AlterPartitionRequest',
    'AlterPartitionRequestAlterPartitionPartitionData',
    'AlterPartitionRequestAlterPartitionTopicData',
    'AlterPartitionResponse',
    'AlterPartitionResponseAlterPartitionPartitionData',
    'AlterPartitionResponseAlterPartitionTopicData',
    'AlterReplicaLogDir',
    'AlterReplicaLogDirPartitionResult',
    'AlterReplicaLogDirTopic',
    'AlterReplicaLogDirTopicResult',
    'AlterReplicaLogDirsRequest',
    'AlterReplicaLogDirsResponse',
    'AlterUserScramCredentialsRequest',
    'AlterUserScramCredentialsResponse',
    'AlterUserScramCredentialsResult',
    'ApiVersion',
    'ApiVersionsRequest',
    'ApiVersionsResponse',
    'BatchIndexAndErrorMessage',
    'ConfigResource',
    'ConsumerGroupDescribeRequest',
    'ConsumerGroupDescribeResponse',
    'ConsumerGroupDescribeResponseAssignment',
    'ConsumerGroupDescribeResponseDescribedGroup',
    'ConsumerGroupDescribeResponseTopicPartitions',
    'ConsumerGroupHeartbeatRequest',
    'ConsumerGroupHeartbeatRequestTopicPartitions',
    'ConsumerGroupHeartbeatResponse',
    'ConsumerGroupHeartbeatResponseAssignment',
    'ConsumerGroupHeartbeatResponseTopicPartitions',
    'ConsumerProtocolAssignment',
    'ConsumerProtocolAssignmentTopicPartition',
    'ConsumerProtocolSubscription',
    'ConsumerProtocolSubscriptionTopicPartition',
    'ControlledShutdownRequest',
    'ControlledShutdownResponse',
    'Coordinator',
    'CreatableReplicaAssignment',
    'CreatableTopic',
    'CreatableTopicConfig',
    'CreatableTopicConfigs',
    'CreatableTopicResult',
    'CreateAclsRequest',
    'CreateAclsResponse',
    'CreatePartitionsAssignment',
    'CreatePartitionsRequest',
    'CreatePartitionsResponse',
    'CreatePartitionsTopic',
    'CreatePartitionsTopicResult',
    'CreateTopicsRequest',
    'CreateTopicsResponse',
    'CredentialInfo',
    'Cursor',
    'DeletableGroupResult',
    'DeletableTopicResult',
    'DeleteAclsFilter',
    'DeleteAclsFilterResult',
    'DeleteAclsMatchingAcl',
    'DeleteAclsRequest',
    'DeleteAclsResponse',
    'DeleteGroupsRequest',
    'DeleteGroupsResponse',
    'DeleteRecordsPartition',
    'DeleteRecordsPartitionResult',
    'DeleteRecordsRequest',
    'DeleteRecordsResponse',
    'DeleteRecordsTopic',
    'DeleteRecordsTopicResult',
    'DeleteTopicState',
    'DeleteTopicsRequest',
    'DeleteTopicsResponse',
    'DescribableLogDirTopic',
    'DescribeAclsRequest',
    'DescribeAclsResource',
    'DescribeAclsResponse',
    'DescribeClusterBroker',
    'DescribeClusterRequest',
    'DescribeClusterResponse',
    'DescribeConfigsRequest',
    'DescribeConfigsResource',
    'DescribeConfigsResourceResult',
    'DescribeConfigsResponse',
    'DescribeConfigsResult',
    'DescribeConfigsSynonym',
    'DescribeGroupsRequest',
    'DescribeGroupsResponse',
    'DescribeGroupsResponseDescribedGroup',
    'DescribeLogDirsPartition',
    'DescribeLogDirsRequest',
    'DescribeLogDirsResponse',
    'DescribeLogDirsResult',
    'DescribeLogDirsTopic',
    'DescribeProducersRequest',
    'DescribeProducersResponse',
    'DescribeQuorumRequest',
    'DescribeQuorumRequestPartitionData',
    'DescribeQuorumRequestTopicData',
    'DescribeQuorumResponse',
    'DescribeQuorumResponsePartitionData',
    'DescribeQuorumResponseReplicaState',
    'DescribeQuorumResponseTopicData',
    'DescribeTopicPartitionsRequest',
    'DescribeTopicPartitionsRequestTopicRequest',
    'DescribeTopicPartitionsResponse',
    'DescribeTopicPartitionsResponsePartition',
    'DescribeTopicPartitionsResponseTopic',
    'DescribeTransactionsRequest',
    'DescribeTransactionsResponse',
    'DescribeTransactionsResponseTransactionState',
    'DescribeUserScramCredentialsRequest',
    'DescribeUserScramCredentialsResponse',
    'DescribeUserScramCredentialsResult',
    'DescribedGroupMember',
    'ElectLeadersPartitionResult',
    'ElectLeadersReplicaElectionResult',
    'ElectLeadersRequest',
    'ElectLeadersResponse',
    'ElectLeadersTopicPartitions',
    'EndTxnRequest',
    'EndTxnResponse',
    'FeatureUpdateKey',
    'FetchPartition',
    'FetchRequest',
    'FetchResponse',
    'FetchResponseEpochEndOffset',
    'FetchResponseLeaderIdAndEpoch',
    'FetchResponseNodeEndpoint',
    'FetchTopic',
    'FetchableTopicResponse',
    'FileRecords',
    'FinalizedFeatureKey',
    'FindCoordinatorRequest',
    'FindCoordinatorResponse',
    'ForgottenTopic',
    'HeartbeatRequest',
    'HeartbeatResponse',
    'IncrementalAlterConfigsRequest',
    'IncrementalAlterConfigsRequestAlterConfigsResource',
    'IncrementalAlterConfigsRequestAlterableConfig',
    'IncrementalAlterConfigsResponse',
    'IncrementalAlterConfigsResponseAlterConfigsResourceResponse',
    'InitProducerIdRequest',
    'InitProducerIdResponse',
    'JoinGroupRequest',
    'JoinGroupRequestProtocol',
    'JoinGroupResponse',
    'JoinGroupResponseMember',
    'LeaderAndIsrLiveLeader',
    'LeaderAndIsrPartitionError',
    'LeaderAndIsrPartitionState',
    'LeaderAndIsrRequest',
    'LeaderAndIsrResponse',
    'LeaderAndIsrTopicError',
    'LeaderAndIsrTopicState',
    'LeaveGroupRequest',
    'LeaveGroupResponse',
    'ListConfigResourcesRequest',
    'ListConfigResourcesResponse',
    'ListGroupsRequest',
    'ListGroupsResponse',
    'ListOffsetsPartition',
    'ListOffsetsPartitionResponse',
    'ListOffsetsRequest',
    'ListOffsetsResponse',
    'ListOffsetsTopic',
    'ListOffsetsTopicResponse',
    'ListPartitionReassignmentsRequest',
    'ListPartitionReassignmentsResponse',
    'ListPartitionReassignmentsTopics',
    'ListTransactionsRequest',
    'ListTransactionsResponse',
    'ListTransactionsResponseTransactionState',
    'ListedGroup',
    'Listener',
    'Member',
    'MemberIdentity',
    'MemberResponse',
    'MetadataRequest',
    'MetadataRequestTopic',
    'MetadataResponse',
    'MetadataResponseBroker',
    'MetadataResponsePartition',
    'MetadataResponseTopic',
    'Node',
    'OffsetCommitRequest',
    'OffsetCommitRequestPartition',
    'OffsetCommitRequestTopic',
    'OffsetCommitResponse',
    'OffsetCommitResponsePartition',
    'OffsetCommitResponseTopic',
    'OffsetDeleteRequest',
    'OffsetDeleteRequestPartition',
    'OffsetDeleteRequestTopic',
    'OffsetDeleteResponse',
    'OffsetDeleteResponsePartition',
    'OffsetDeleteResponseTopic',
    'OffsetFetchRequest',
    'OffsetFetchRequestGroup',
    'OffsetFetchRequestTopic',
    'OffsetFetchRequestTopics',
    'OffsetFetchResponse',
    'OffsetFetchResponseGroup',
    'OffsetFetchResponsePartition',
    'OffsetFetchResponsePartitions',
    'OffsetFetchResponseTopic',
    'OffsetFetchResponseTopics',
    'OffsetForLeaderEpochRequest',
    'OffsetForLeaderEpochResponse',
    'OffsetForLeaderEpochResponseEpochEndOffset',
    'OffsetForLeaderPartition',
    'OffsetForLeaderTopic',
    'OffsetForLeaderTopicResult',
    'OngoingPartitionReassignment',
    'OngoingTopicReassignment',
    'PartitionData',
    'PartitionProduceData',
    'PartitionProduceResponse',
    'PartitionResponse',
    'ProduceRequest',
    'ProduceResponse',
    'ProduceResponseLeaderIdAndEpoch',
    'ProduceResponseNodeEndpoint',
    'ProducerState',
    'ReassignablePartition',
    'ReassignablePartitionResponse',
    'ReassignableTopic',
    'ReassignableTopicResponse',
    'RemainingPartition',
    'ReplicaState',
    'RequestHeader',
    'ResponseHeader',
    'SaslAuthenticateRequest',
    'SaslAuthenticateResponse',
    'SaslHandshakeRequest',
    'SaslHandshakeResponse',
    'ScramCredentialDeletion',
    'ScramCredentialUpsertion',
    'SnapshotId',
    'StopReplicaPartitionError',
    'StopReplicaPartitionState',
    'StopReplicaPartitionV0',
    'StopReplicaRequest',
    'StopReplicaResponse',
    'StopReplicaTopicState',
    'StopReplicaTopicV1',
    'SupportedFeatureKey',
    'SyncGroupRequest',
    'SyncGroupRequestAssignment',
    'SyncGroupResponse',
    'TopicData',
    'TopicProduceData',
    'TopicProduceResponse',
    'TopicRequest',
    'TopicResponse',
    'TxnOffsetCommitRequest',
    'TxnOffsetCommitRequestPartition',
    'TxnOffsetCommitRequestTopic',
    'TxnOffsetCommitResponse',
    'TxnOffsetCommitResponsePartition',
    'TxnOffsetCommitResponseTopic',
    'UpdatableFeatureResult',
    'UpdateFeaturesRequest',
    'UpdateFeaturesResponse',
    'UpdateMetadataBroker',
    'UpdateMetadataEndpoint',
    'UpdateMetadataPartitionState',
    'UpdateMetadataRequest',
    'UpdateMetadataResponse',
    'UpdateMetadataTopicState',
    'UserName',
    'WritableTxnMarker',
    'WritableTxnMarkerPartitionResult',
    'WritableTxnMarkerResult',
    'WritableTxnMarkerTopic',
    'WritableTxnMarkerTopicResult',
    'WriteTxnMarkersRequest',
    'WriteTxnMarkersResponse',
]
