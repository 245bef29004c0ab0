"""Error responses: the body Kafka's ``AbstractRequest.getErrorResponse`` builds for each API.

``error_response(api_key, version, request_body, error)`` puts the error code in the top-level
ErrorCode where the version has one, and in the entries that mirror the request's topics /
partitions / groups / resources where Kafka puts it there, with Kafka's placeholder values
(offsets -1 and so on). ``ERROR_SHAPES`` is that table, per API. KafkaApis uses it to answer a
request whose handler failed; handlers may use it for whole-request errors.

The bodies are the generated message classes (:mod:`kafkapy.protocol.message_classes`); as the
shapes are data walked along the response schema, each class is found from its struct
(``class_for``) rather than named.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeAlias

import attrs

from kafkapy.errors import KafkaError, UnknownServerError, UnsupportedVersionError
from kafkapy.protocol import API_KEYS, ApiKey
from kafkapy.protocol.classes import class_for, field_default
from kafkapy.protocol.message_classes import AlterClientQuotasResponseEntityData, ApiVersion
from kafkapy.protocol.schema import Array, Struct, Versions

__all__ = ["ELEMENT", "ERROR_SHAPES", "ErrorShape", "Mirror", "Shape", "error_response"]

ELEMENT = "<element>"
"""In ``Shape.keys``: the request array's element itself (an array of strings or ints)."""

_ALL = Versions(0, 0x7FFF)

FieldValue: TypeAlias = Any
"""A placeholder in ``Shape.fields``: a value, or ``f(version, error_code)`` returning one."""


@attrs.frozen
class Shape:
    """How one response struct of an error response is built from its request counterpart.

    - ``keys``: response attribute -> request attribute to copy (topic names, partition
      indexes, group ids...), ``ELEMENT`` for the request element itself, or a function of the
      request element; a null copied into a non-nullable field becomes its default ("").
    - ``fields``: placeholders Kafka sets (``base_offset=-1``...).
    - ``arrays``: response arrays built entry by entry from request arrays.
    - ``message``: what goes in an ErrorMessage next to the ErrorCode: ``"api"`` (Kafka's
      ``ApiError.fromThrowable``: the exception's message, but null for UNKNOWN_SERVER_ERROR
      and for a message that is only the error's generic text), ``"description"`` (the
      error's generic text, ``Errors.message()``), or None (left null).

    The ErrorCode (or PartitionErrorCode) of the struct is set wherever the version has one.
    Only fields present in the response version are set.
    """

    keys: Mapping[str, str | Callable[[Any], Any]] = attrs.field(factory=dict)
    fields: Mapping[str, FieldValue] = attrs.field(factory=dict)
    arrays: tuple[Mirror, ...] = ()
    message: str | None = "api"


@attrs.frozen
class Mirror:
    """Response array ``target`` gets one ``shape`` entry per element of request array
    ``source`` (or of what ``source(request struct)`` returns), in request ``versions`` only
    (elsewhere it stays empty)."""

    source: str | Callable[[Any], Any]
    target: str
    shape: Shape
    versions: Versions = _ALL


@attrs.frozen
class ErrorShape:
    """An API's error response: the top-level ``shape`` (built from the request body), and
    ``no_response(request_body)`` true when Kafka sends none (the connection is closed)."""

    shape: Shape = Shape()
    no_response: Callable[[Any], bool] | None = None


def _topics(source: str | Callable[[Any], Any], target: str, names: Mapping[str, str],
            partitions: Mirror) -> Mirror:
    return Mirror(source, target, Shape(keys=names, arrays=(partitions,)))


# Per API, the shape of Kafka's <Api>Request.getErrorResponse (clients/src/main/java/org/apache/
# kafka/common/requests). An API missing here gets the default: the top-level ErrorCode (with
# the "api" message) wherever its version has one. That default is Kafka's shape for the group,
# SASL, transaction-control, DescribeAcls, DescribeLogDirs, DescribeCluster, OffsetDelete,
# UpdateMetadata, ControlledShutdown, KIP-848 heartbeat, ListConfigResources and
# UpdateFeatures (no per-feature results) APIs. LeaderAndIsr and StopReplica
# also listed every partition with the error in Kafka 3.x; they are controller-to-broker APIs
# that Kafka 4.0 removed and that a single broker never advertises, so only their top-level
# ErrorCode is set here.
def _quota_entity(entry: Any) -> list[Any]:
    """An AlterClientQuotas request entry's entity, as the response's entity data."""
    return [AlterClientQuotasResponseEntityData(entity_type=e.entity_type,
                                                entity_name=e.entity_name)
            for e in entry.entity]


ERROR_SHAPES: Mapping[int, ErrorShape] = MappingProxyType({
    # Produce: one entry per partition; no response at all for acks=0.
    ApiKey.PRODUCE: ErrorShape(Shape(arrays=(
        _topics("topic_data", "responses", {"name": "name", "topic_id": "topic_id"},
                Mirror("partition_data", "partition_responses", Shape(
                    keys={"index": "index"},
                    fields={"base_offset": -1, "log_append_time_ms": -1,
                            "log_start_offset": -1}))),
    )), no_response=lambda body: body.acks == 0),
    # Fetch: the top-level ErrorCode (v7+) and the session id, and below v13 every partition
    # too (high watermark -1, empty records: FetchResponse.partitionResponse).
    ApiKey.FETCH: ErrorShape(Shape(keys={"session_id": "session_id"}, arrays=(
        Mirror("topics", "responses", Shape(
            keys={"topic": "topic", "topic_id": "topic_id"},
            arrays=(Mirror("partitions", "partitions", Shape(
                keys={"partition_index": "partition"},
                fields={"high_watermark": -1, "records": b""})),)),
            versions=Versions(0, 12)),
    ))),
    # ListOffsets: every partition, offset and timestamp -1 (v1+; v0 has an empty offset list).
    ApiKey.LIST_OFFSETS: ErrorShape(Shape(arrays=(
        _topics("topics", "topics", {"name": "name"},
                Mirror("partitions", "partitions", Shape(
                    keys={"partition_index": "partition_index"},
                    fields={"timestamp": -1, "offset": -1}))),
    ))),
    # Metadata: every requested topic (a null name becomes ""), no partitions; the top-level
    # ErrorCode in v13+.
    ApiKey.METADATA: ErrorShape(Shape(arrays=(
        Mirror("topics", "topics", Shape(
            keys={"name": lambda topic: "" if topic.name is None else topic.name,
                  "topic_id": "topic_id"},
            fields={"is_internal": False})),
    ))),
    # OffsetCommit: every partition.
    ApiKey.OFFSET_COMMIT: ErrorShape(Shape(arrays=(
        _topics("topics", "topics", {"name": "name", "topic_id": "topic_id"},
                Mirror("partitions", "partitions",
                       Shape(keys={"partition_index": "partition_index"}))),
    ))),
    # OffsetFetch: v0-1 every partition (offset -1, metadata "", epoch -1); v2-7 the top-level
    # ErrorCode; v8+ one entry per group.
    ApiKey.OFFSET_FETCH: ErrorShape(Shape(arrays=(
        Mirror("topics", "topics", Shape(keys={"name": "name"}, arrays=(
            Mirror("partition_indexes", "partitions", Shape(
                keys={"partition_index": ELEMENT},
                fields={"committed_offset": -1, "metadata": "",
                        "committed_leader_epoch": -1})),)),
            versions=Versions(0, 1)),
        Mirror("groups", "groups", Shape(keys={"group_id": "group_id"}), versions=_ALL),
    ))),
    # FindCoordinator: "no node" (-1, "", -1) with the generic error text; v4+ per key.
    ApiKey.FIND_COORDINATOR: ErrorShape(Shape(
        fields={"node_id": -1, "host": "", "port": -1}, message="description",
        arrays=(Mirror("coordinator_keys", "coordinators", Shape(
            keys={"key": ELEMENT}, fields={"node_id": -1, "host": "", "port": -1},
            message="description")),))),
    # JoinGroup: unknown generation, member and leader; a null protocol name from v7.
    ApiKey.JOIN_GROUP: ErrorShape(Shape(fields={
        "generation_id": -1, "leader": "", "member_id": "",
        "protocol_name": lambda version, _code: None if version >= 7 else ""})),
    # DescribeGroups: one entry per group (DescribeGroupsResponse.groupError).
    ApiKey.DESCRIBE_GROUPS: ErrorShape(Shape(arrays=(
        Mirror("groups", "groups", Shape(
            keys={"group_id": ELEMENT},
            fields={"group_state": "", "protocol_type": "", "protocol_data": ""})),
    ))),
    # ApiVersions: no API keys, except the ApiVersions range itself with UNSUPPORTED_VERSION
    # (KIP-511).
    ApiKey.API_VERSIONS: ErrorShape(Shape(
        fields={"api_keys": lambda _version, code: _api_versions_range(code)})),
    # CreateTopics: every topic, with the ApiError message.
    ApiKey.CREATE_TOPICS: ErrorShape(Shape(arrays=(
        Mirror("topics", "topics", Shape(keys={"name": "name"})),))),
    # DeleteTopics: every topic, by name (v0-5) or name and id (v6+); no message.
    ApiKey.DELETE_TOPICS: ErrorShape(Shape(arrays=(
        Mirror("topic_names", "responses", Shape(keys={"name": ELEMENT}, message=None),
               versions=Versions(0, 5)),
        Mirror("topics", "responses",
               Shape(keys={"name": "name", "topic_id": "topic_id"}, message=None),
               versions=Versions(6, 0x7FFF)),
    ))),
    # AlterReplicaLogDirs: every partition, one result per topic of each directory.
    ApiKey.ALTER_REPLICA_LOG_DIRS: ErrorShape(Shape(arrays=(
        _topics(lambda body: [t for d in body.dirs for t in d.topics], "results",
                {"topic_name": "name"},
                Mirror("partitions", "partitions", Shape(keys={"partition_index": ELEMENT}))),
    ))),
    # DeleteRecords: every partition, low watermark -1.
    ApiKey.DELETE_RECORDS: ErrorShape(Shape(arrays=(
        _topics("topics", "topics", {"name": "name"},
                Mirror("partitions", "partitions", Shape(
                    keys={"partition_index": "partition_index"},
                    fields={"low_watermark": -1}))),
    ))),
    # InitProducerId: no producer id or epoch.
    ApiKey.INIT_PRODUCER_ID: ErrorShape(Shape(fields={"producer_id": -1, "producer_epoch": -1})),
    # OffsetForLeaderEpoch: every partition, undefined epoch and offset.
    ApiKey.OFFSET_FOR_LEADER_EPOCH: ErrorShape(Shape(arrays=(
        _topics("topics", "topics", {"topic": "topic"},
                Mirror("partitions", "partitions", Shape(
                    keys={"partition": "partition"},
                    fields={"leader_epoch": -1, "end_offset": -1}))),
    ))),
    # AddPartitionsToTxn: v0-3 every partition; v4+ the top-level ErrorCode only.
    ApiKey.ADD_PARTITIONS_TO_TXN: ErrorShape(Shape(arrays=(
        _topics("v3_and_below_topics", "results_by_topic_v3_and_below", {"name": "name"},
                Mirror("partitions", "results_by_partition",
                       Shape(keys={"partition_index": ELEMENT}))),
    ))),
    # WriteTxnMarkers: every partition of every marker.
    ApiKey.WRITE_TXN_MARKERS: ErrorShape(Shape(arrays=(
        Mirror("markers", "markers", Shape(keys={"producer_id": "producer_id"}, arrays=(
            _topics("topics", "topics", {"name": "name"},
                    Mirror("partition_indexes", "partitions",
                           Shape(keys={"partition_index": ELEMENT}))),))),
    ))),
    # TxnOffsetCommit: every partition.
    ApiKey.TXN_OFFSET_COMMIT: ErrorShape(Shape(arrays=(
        _topics("topics", "topics", {"name": "name"},
                Mirror("partitions", "partitions",
                       Shape(keys={"partition_index": "partition_index"}))),
    ))),
    # CreateAcls / DeleteAcls: one result per creation / filter, with the ApiError message.
    ApiKey.CREATE_ACLS: ErrorShape(Shape(arrays=(Mirror("creations", "results", Shape()),))),
    ApiKey.DELETE_ACLS: ErrorShape(Shape(arrays=(Mirror("filters", "filter_results", Shape()),))),
    # DescribeConfigs: one result per resource, with the generic error text.
    ApiKey.DESCRIBE_CONFIGS: ErrorShape(Shape(arrays=(
        Mirror("resources", "results", Shape(
            keys={"resource_type": "resource_type", "resource_name": "resource_name"},
            message="description")),
    ))),
    # AlterConfigs / IncrementalAlterConfigs: one response per resource (ApiError message).
    ApiKey.ALTER_CONFIGS: ErrorShape(Shape(arrays=(
        Mirror("resources", "responses", Shape(
            keys={"resource_type": "resource_type", "resource_name": "resource_name"})),
    ))),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: ErrorShape(Shape(arrays=(
        Mirror("resources", "responses", Shape(
            keys={"resource_type": "resource_type", "resource_name": "resource_name"})),
    ))),
    # AlterClientQuotas: one entry per requested entity (ApiError message);
    # DescribeClientQuotas takes the default (top-level ErrorCode, Entries null).
    ApiKey.ALTER_CLIENT_QUOTAS: ErrorShape(Shape(arrays=(
        Mirror("entries", "entries", Shape(keys={"entity": _quota_entity})),))),
    # CreatePartitions: one result per topic (ApiError message).
    ApiKey.CREATE_PARTITIONS: ErrorShape(Shape(arrays=(
        Mirror("topics", "results", Shape(keys={"name": "name"})),))),
    # ElectLeaders: the top-level ErrorCode (v1+) and every requested partition (none when
    # the request asked for all: TopicPartitions null).
    ApiKey.ELECT_LEADERS: ErrorShape(Shape(arrays=(
        _topics("topic_partitions", "replica_election_results", {"topic": "topic"},
                Mirror("partition_id", "partition_result",
                       Shape(keys={"partition_id": ELEMENT}))),
    ))),
    # DeleteGroups: one result per group.
    ApiKey.DELETE_GROUPS: ErrorShape(Shape(arrays=(
        Mirror("groups_names", "results", Shape(keys={"group_id": ELEMENT})),
    ))),
    # DescribeTopicPartitions: every requested topic, no partitions, not internal (TopicId
    # zero, TopicAuthorizedOperations "not requested"); none when every topic was asked for.
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: ErrorShape(Shape(arrays=(
        Mirror("topics", "topics", Shape(keys={"name": "name"},
                                         fields={"is_internal": False})),
    ))),
    # ConsumerGroupDescribe: one entry per group, no message.
    ApiKey.CONSUMER_GROUP_DESCRIBE: ErrorShape(Shape(arrays=(
        Mirror("group_ids", "groups", Shape(keys={"group_id": ELEMENT}, message=None)),
    ))),
})

_DEFAULT_SHAPE = ErrorShape()


def _api_versions_range(code: int) -> list[ApiVersion]:
    if code != UnsupportedVersionError.code:
        return []
    versions = API_KEYS[ApiKey.API_VERSIONS].versions
    return [ApiVersion(api_key=ApiKey.API_VERSIONS, min_version=versions.low,
                       max_version=versions.high)]


def error_response(api_key: int, version: int, request_body: Any,
                   error: BaseException) -> Any | None:
    """The response body Kafka sends for ``request_body`` when handling it failed with
    ``error``, at the request's ``version``; None when Kafka sends none (Produce, acks=0).

    The error code is ``error.code`` for a ``KafkaError``, UNKNOWN_SERVER_ERROR (-1) for any
    other exception. Where it goes is ``ERROR_SHAPES`` (see there and ``Shape``).

    Raises:
        KeyError: ``api_key`` is not declared by the protocol layer.
        UnsupportedVersionError: ``version`` is outside the API's declared versions.
    """
    api = API_KEYS[api_key]
    if version not in api.versions:
        raise UnsupportedVersionError(f"{api.name} v{version} is not supported "
                                      f"(versions {api.versions})")
    spec = ERROR_SHAPES.get(api_key, _DEFAULT_SHAPE)
    if spec.no_response is not None and spec.no_response(request_body):
        return None
    if isinstance(error, KafkaError):
        code, description = error.code, error.description
        # ApiError.fromThrowable: no message for UNKNOWN_SERVER_ERROR (it could leak internals)
        # nor when it only repeats the generic text.
        api_message = None if (isinstance(error, UnknownServerError)
                               or error.message == error.description) else error.message
    else:
        code, description, api_message = (UnknownServerError.code,
                                          UnknownServerError.description, None)
    messages = {"api": api_message, "description": description}
    return _build(api.response.body, request_body, spec.shape, version, code, messages)


def _build(struct: Struct, source: Any, shape: Shape, version: int, code: int,
           messages: Mapping[str, str | None]) -> Any:
    obj = class_for(struct)()
    present = {f.attr: f for f in struct.fields if version in f.versions}
    for target, attr in shape.keys.items():
        f = present.get(target)
        if f is None or source is None:
            continue
        if callable(attr):
            value = attr(source)
        else:
            value = source if attr == ELEMENT else getattr(source, attr)
        if value is None and version not in f.nullable:
            value = field_default(f)
        setattr(obj, target, value)
    for target, value in shape.fields.items():
        if target in present:
            setattr(obj, target, value(version, code) if callable(value) else value)
    for f in present.values():
        if f.name in ("ErrorCode", "PartitionErrorCode"):
            setattr(obj, f.attr, code)
        elif f.name == "ErrorMessage" and shape.message is not None:
            message = messages[shape.message]
            if message is None and version not in f.nullable:
                message = ""
            setattr(obj, f.attr, message)
    for mirror in shape.arrays:
        f = present.get(mirror.target)
        if f is None or version not in mirror.versions:
            continue
        assert isinstance(f.type, Array) and isinstance(f.type.element, Struct)
        if source is None:
            items = None
        elif callable(mirror.source):
            items = mirror.source(source)
        else:
            items = getattr(source, mirror.source, None)
        setattr(obj, mirror.target, [
            _build(f.type.element, item, mirror.shape, version, code, messages)
            for item in items or ()])
    return obj
