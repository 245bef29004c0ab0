"""The admin handlers at every served version, over raw sockets, for what client libraries
will not send: duplicates, nulls, manual assignments, bad resource names and types,
BROKER_LOGGER, endpoint types, and the versions no client library here uses.

Requests are encoded by kafkapy and sent to an embedded ``kafkapy.Broker``; each answer is
decoded by kafkapy and, independently, by kafka-python's protocol classes, which must read
the same error codes. Values and Kafka's messages are asserted exactly (the messages are
those of Kafka's ``ReplicationControlManager``, ``ConfigAdminManager``, ``ConfigHelper``,
``RuntimeLoggerManager`` and ``ControllerApis``).
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

import confluent_kafka
import pytest

from kafkapy import Broker
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    InvalidTopicError,
    MismatchedEndpointTypeError,
    OffsetOutOfRangeError,
    PolicyViolationError,
    TopicAlreadyExistsError,
    TopicDeletionDisabledError,
    UnknownTopicOrPartitionError,
    UnsupportedEndpointTypeError,
)
from kafkapy.log.log import Log
from kafkapy.log.log_manager import LogManager
from kafkapy.protocol import API_KEYS
from kafkapy.protocol.classes import struct_classes
from kafkapy.protocol.codec import decode_response
from kafkapy.protocol.schema import ZERO_UUID, Array, Struct
from tests.clients.client_support import RawClient
from tests.log.log_open_spy import spy_log_open
from tests.server.test_kafka_apis import KP_RESPONSES

CREATE_TOPICS, DELETE_TOPICS, DELETE_RECORDS = 19, 20, 21
DESCRIBE_CONFIGS, ALTER_CONFIGS, DESCRIBE_LOG_DIRS = 32, 33, 35
CREATE_PARTITIONS, INCREMENTAL_ALTER_CONFIGS, DESCRIBE_CLUSTER = 37, 44, 60
TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
NODE = 1

REQ = {key: struct_classes(API_KEYS[key].request.body)
       for key in (CREATE_TOPICS, DELETE_TOPICS, DELETE_RECORDS, DESCRIBE_CONFIGS,
                   ALTER_CONFIGS, DESCRIBE_LOG_DIRS, CREATE_PARTITIONS,
                   INCREMENTAL_ALTER_CONFIGS, DESCRIBE_CLUSTER)}




def _their_error_codes(value: Any) -> list[int]:
    """Every error code in kafka-python's ``to_dict()`` of a response, in order."""
    out: list[int] = []
    if isinstance(value, dict):
        for key, v in value.items():
            if key == "error_code" and isinstance(v, int):
                out.append(v)
            else:
                out += _their_error_codes(v)
    elif isinstance(value, list | tuple):
        for v in value:
            out += _their_error_codes(v)
    return out


def _our_error_codes(struct: Struct, value: Any, version: int) -> list[int]:
    """Every error code of the fields ``version`` has, in the same order."""
    out: list[int] = []
    for f in struct.fields:
        if version not in f.versions:
            continue
        v = getattr(value, f.attr)
        if f.attr == "error_code":
            out.append(v)
        elif isinstance(f.type, Array) and isinstance(f.type.element, Struct):
            for item in v or ():
                out += _our_error_codes(f.type.element, item, version)
        elif isinstance(f.type, Struct) and v is not None:
            out += _our_error_codes(f.type, v, version)
    return out


def call(broker: Broker, api_key: int, version: int, body: Any) -> Any:
    """One request over a raw socket; the answer decoded by kafkapy, after checking that
    kafka-python reads the same frame to the same error codes."""
    with RawClient(broker.bootstrap_servers) as client:
        correlation_id = client.send_request(api_key, version, body)
        frame = client.receive_frame()
    ours = decode_response(api_key, version, frame)
    assert ours.header.correlation_id == correlation_id
    theirs = KP_RESPONSES[api_key].decode(frame, version=version, header=True)
    assert theirs._header.correlation_id == correlation_id
    assert _their_error_codes(theirs.to_dict()) == _our_error_codes(
        API_KEYS[api_key].response.body, ours.body, version)
    return ours.body


@pytest.fixture(scope="module")
def broker() -> Iterator[Broker]:
    with Broker(config={"num.partitions": "3"}) as b:
        yield b


def topics_of(broker: Broker) -> dict[str, int]:
    return broker.call(lambda: {name: r.partitions
                                for name, r in broker.server.metadata_store.topics.items()})


def create(broker: Broker, name: str, partitions: int = 1,
           configs: dict[str, str] | None = None) -> None:
    broker.call(lambda: broker.server.admin.create_topic(name, partitions, -1, (), configs))


def produce(broker: Broker, topic: str, count: int, partition: int = 0) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i in range(count):
        producer.produce(topic, b"v%d" % i, partition=partition)
    assert producer.flush(10) == 0


# ================================================================================ CreateTopics


def creatable(name: str, partitions: int = -1, factor: int = -1,
              assignments: dict[int, list[int]] | list[tuple[int, list[int]]] | None = None,
              configs: dict[str, str | None] | None = None) -> Any:
    C = REQ[CREATE_TOPICS]
    items = list(assignments.items()) if isinstance(assignments, dict) else assignments or []
    return C["CreatableTopic"](
        name=name, num_partitions=partitions, replication_factor=factor,
        assignments=[C["CreatableReplicaAssignment"](partition_index=p, broker_ids=b)
                     for p, b in items],
        configs=[C["CreatableTopicConfig"](name=k, value=v) for k, v in (configs or {}).items()])


def create_topics(broker: Broker, version: int, *topics: Any, validate_only: bool = False
                  ) -> list[Any]:
    body = REQ[CREATE_TOPICS]["CreateTopicsRequest"](topics=list(topics), timeout_ms=5000,
                                                     validate_only=validate_only)
    return list(call(broker, CREATE_TOPICS, version, body).topics)


@pytest.mark.parametrize("version", range(2, 8))
def test_create_topics_every_version(broker: Broker, version: int) -> None:
    name = f"ct-v{version}"
    results = create_topics(
        broker, version, creatable("__cluster_metadata"),
        creatable(name + ".ok", configs={"retention.ms": "60000"}),
        creatable(name + ".dup", 1, 1), creatable(name + ".rf", 1, 2),
        creatable(name + ".dup", 2, 1))
    assert [(r.name, r.error_code, r.error_message) for r in results] == [
        (name + ".ok", 0, None),
        (name + ".rf", InvalidReplicationFactorError.code,
         "Unable to replicate the partition 2 time(s): The target replication factor of 2 "
         "cannot be reached because only 1 broker(s) are registered."),
        # Kafka's ControllerApis answers the duplicates after the other topics.
        (name + ".dup", InvalidRequestError.code, "Duplicate topic name."),
        ("__cluster_metadata", InvalidRequestError.code,
         "Creation of internal topic __cluster_metadata is prohibited."),
    ]
    assert topics_of(broker)[name + ".ok"] == 3
    assert "__cluster_metadata" not in topics_of(broker)
    assert name + ".dup" not in topics_of(broker)
    ok, bad = results[0], results[1]
    if version >= 5:
        assert (ok.num_partitions, ok.replication_factor) == (3, 1)
        assert (bad.num_partitions, bad.replication_factor, bad.configs) == (-1, -1, [])
        assert [c.name for c in ok.configs] == sorted(c.name for c in ok.configs)
        configs = {c.name: (c.value, c.config_source, c.read_only, c.is_sensitive)
                   for c in ok.configs}
        assert len(configs) == 27
        # the replication throttles' topic configs: no broker synonym, empty by default
        assert configs["leader.replication.throttled.replicas"] == ("", 5, False, False)
        assert configs["retention.ms"] == ("60000", 1, False, False)
        assert configs["segment.bytes"] == ("1073741824", 5, False, False)
    record = broker.call(lambda: broker.server.metadata_store.topics[name + ".ok"])
    assert ok.topic_id == (record.topic_id if version >= 7 else ZERO_UUID)
    # Again: it exists now.
    (again,) = create_topics(broker, version, creatable(name + ".ok"))
    assert (again.error_code, again.error_message) == (
        TopicAlreadyExistsError.code, f"Topic '{name}.ok' already exists.")


@pytest.mark.parametrize("version", [2, 7])
def test_create_topics_validate_only(broker: Broker, version: int) -> None:
    name = f"ct-validate-v{version}"
    (result,) = create_topics(broker, version, creatable(name, 4), validate_only=True)
    assert (result.error_code, result.error_message) == (0, None)
    if version >= 5:
        assert (result.num_partitions, result.replication_factor) == (4, 1)
        assert result.topic_id != ZERO_UUID      # Kafka's controller makes one up, too
    assert name not in topics_of(broker)


LONG_NAME = "x" * 250
CREATE_ERRORS = [
    (creatable("ct-e1", 1, 1, {0: [NODE]}), InvalidRequestError,
     "A manual partition assignment was specified, but replication factor was not set to -1."),
    (creatable("ct-e2", 2, -1, {0: [NODE]}), InvalidRequestError,
     "A manual partition assignment was specified, but numPartitions was not set to -1."),
    (creatable("ct-e3", assignments=[(0, [NODE]), (0, [NODE])]), InvalidReplicaAssignmentError,
     "Found multiple manual partition assignments for partition 0"),
    (creatable("ct-e4", assignments={0: [NODE], 2: [NODE]}), InvalidReplicaAssignmentError,
     "partitions should be a consecutive 0-based integer sequence"),
    (creatable("ct-e5", assignments={0: [NODE, NODE]}), InvalidReplicaAssignmentError,
     f"The manual partition assignment includes the broker {NODE} more than once."),
    (creatable("ct-e6", assignments={0: []}), InvalidReplicaAssignmentError,
     "The manual partition assignment includes an empty replica list."),
    (creatable("ct-e7", assignments={0: [NODE], 1: [2]}), InvalidReplicaAssignmentError,
     "The manual partition assignment includes broker 2, but no such broker is registered."),
    (creatable("ct-e8", 1, 0), InvalidReplicationFactorError,
     "Replication factor must be larger than 0, or -1 to use the default value."),
    (creatable("ct-e9", 0, 1), InvalidPartitionsError,
     "Number of partitions was set to an invalid non-positive value."),
    (creatable("ct-e10", -2, 1), InvalidPartitionsError,
     "Number of partitions was set to an invalid non-positive value."),
    (creatable("ct-e11", configs={"retention.ms": None, "segment.ms": None}),
     InvalidConfigError, "Null value not supported for topic configs: retention.ms,segment.ms"),
    (creatable("ct-e12", configs={"nope": "1"}), InvalidConfigError,
     "Unknown topic config name: nope"),
    (creatable(""), InvalidTopicError, "Topic name is illegal, it can't be empty"),
    (creatable(".."), InvalidTopicError, 'Topic name cannot be "." or ".."'),
    (creatable(LONG_NAME), InvalidTopicError,
     f"Topic name is illegal, it can't be longer than 249 characters, topic name: "
     f"{LONG_NAME}"),
    # Configs are checked before the partition count, as in Kafka.
    (creatable("ct-e13", 0, 1, configs={"nope": "1"}), InvalidConfigError,
     "Unknown topic config name: nope"),
]


@pytest.mark.parametrize(("topic", "error", "message"), CREATE_ERRORS,
                         ids=[t.name[:12] or "empty" for t, _e, _m in CREATE_ERRORS])
def test_create_topics_refusals(broker: Broker, topic: Any, error: type, message: str) -> None:
    (result,) = create_topics(broker, 7, topic)
    assert (result.error_code, result.error_message) == (error.code, message)  # type: ignore
    assert (result.num_partitions, result.topic_id) == (-1, ZERO_UUID)
    assert topic.name not in topics_of(broker)


def test_create_topics_manual_assignment_and_collisions(broker: Broker) -> None:
    (result,) = create_topics(broker, 7, creatable("ct.manual", assignments={
        1: [NODE], 0: [NODE]}))
    assert (result.error_code, result.num_partitions, result.replication_factor) == (0, 2, 1)
    assert topics_of(broker)["ct.manual"] == 2
    # '.' and '_' collide in metric names: Kafka refuses the second one.
    (result,) = create_topics(broker, 7, creatable("ct_manual"))
    assert (result.error_code, result.error_message) == (
        InvalidTopicError.code, "Topic 'ct_manual' collides with existing topic: ct.manual")


def test_new_partitions_logs_are_created_off_the_event_loop(
        broker: Broker, monkeypatch: pytest.MonkeyPatch) -> None:
    """CreateTopics and CreatePartitions create each new log's directory and files in a
    worker thread (LogManager.create_logs): 2-3 ms a log on this machine's file system, which
    on the event loop would hold every other client. The logs are then the partitions', under
    their own names, with the topic's id."""
    calls = spy_log_open(monkeypatch, "ct.off-loop")
    name = "ct.off-loop"
    configs = {"segment.index.bytes": "8192", "message.timestamp.type": "LogAppendTime"}
    (result,) = create_topics(broker, 7, creatable(name, 4, configs=configs))
    assert (result.error_code, result.error_message) == (0, None)
    assert create_partitions(broker, 3, partitions_topic(name, 6)) == [(name, 0, None)]
    # <topic>-<partition>.<id>-future, opened by a worker thread.
    assert [(c.log_name, c.name.endswith("-future"), c.on_event_loop) for c in calls] == \
        [(f"{name}-{p}", True, False) for p in range(6)]

    def hosted() -> dict[int, tuple[str, Any, str, int]]:
        lm, rm = broker.server.log_manager, broker.server.replica_manager
        tps = [TopicPartition(name, p) for p in range(6)]
        out = {}
        for tp in tps:
            log = rm.partitions[tp].log
            if log is lm.get_log(tp):
                index = log.active_segment.offset_index.path
                out[tp.partition] = (log.dir.name, lm.topic_id_of(tp),
                                     log.config.message_timestamp_type, index.stat().st_size)
        return out
    # The topic's configs from the start: the index preallocated at segment.index.bytes.
    assert broker.call(hosted) == {p: (f"{name}-{p}", result.topic_id, "LogAppendTime", 8192)
                                   for p in range(6)}
    produce(broker, name, 3, partition=5)
    assert broker.call(lambda: broker.server.replica_manager.partitions[
        TopicPartition(name, 5)].log_end_offset) == 3


def test_logs_a_failed_creation_made_are_deleted(broker: Broker,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Other requests create the topic, with 2 partitions, while CreateTopics makes its 4
    logs: the answer is TOPIC_ALREADY_EXISTS, the other request's partitions have the logs
    made (with that topic's id) or, where its configs differ, logs made again with them; the
    2 logs no partition took are deleted."""
    real = LogManager.create_logs
    racing_configs: dict[str, dict[str, str]] = {"ct.race": {}, "ct.race-configs": {
        "cleanup.policy": "compact"}}

    async def racing(self: LogManager, tps: Iterable[TopicPartition],
                     topic_overrides: Any = None) -> dict[TopicPartition, Log]:
        tps = list(tps)
        created = await real(self, tps, topic_overrides)
        name = tps[0].topic        # created by "another request", on the event loop
        broker.server.admin.create_topic(name, 2, configs=racing_configs[name])
        return created
    monkeypatch.setattr(LogManager, "create_logs", racing)

    def state(name: str) -> tuple[int, list[bool], list[tuple[str, ...]]]:
        lm, rm = broker.server.log_manager, broker.server.replica_manager
        record = broker.server.metadata_store.topics[name]
        tps = [TopicPartition(name, p) for p in range(4)]
        return (record.partitions, [lm.topic_id_of(tp) == record.topic_id for tp in tps],
                [rm.partitions[tp].log.config.cleanup_policy for tp in tps[:2]])
    for name, policy in (("ct.race", ("delete",)), ("ct.race-configs", ("compact",))):
        (result,) = create_topics(broker, 7, creatable(name, 4))
        assert (result.error_code, result.error_message) == (
            TopicAlreadyExistsError.code, f"Topic '{name}' already exists.")
        assert broker.call(functools.partial(state, name)) == (
            2, [True, True, False, False], [policy, policy])
        logs = [p.name for p in broker.data_dir.iterdir()
                if re.fullmatch(rf"{re.escape(name)}-\d+", p.name)]
        assert sorted(logs) == [f"{name}-0", f"{name}-1"]


# ================================================================================ DeleteTopics


def delete_topics(broker: Broker, version: int, *names: str) -> list[Any]:
    body = REQ[DELETE_TOPICS]["DeleteTopicsRequest"](topic_names=list(names), timeout_ms=5000)
    return list(call(broker, DELETE_TOPICS, version, body).responses)


@pytest.mark.parametrize("version", range(1, 6))
def test_delete_topics_every_version(broker: Broker, version: int) -> None:
    name = f"dt-v{version}"
    create(broker, name)
    create(broker, name + ".dup")
    results = delete_topics(broker, version, name, name + ".dup", name + ".missing",
                            name + ".dup")
    messages = [r.error_message for r in results]
    assert [(r.name, r.error_code) for r in results] == [
        (name, 0), (name + ".dup", InvalidRequestError.code),
        (name + ".missing", UnknownTopicOrPartitionError.code)]
    if version >= 5:
        assert messages == [None, "Duplicate topic name.",
                            "This server does not host this topic-partition."]
    assert name not in topics_of(broker)
    assert name + ".dup" in topics_of(broker)


def test_a_topic_with_the_longest_name_is_created_and_deleted(broker: Broker) -> None:
    """249 characters, Kafka's limit: its log's ``-delete`` directory name is cut to 255
    characters as Kafka's (file systems refuse longer names)."""
    name = "L" * 249
    (result,) = create_topics(broker, 7, creatable(name, 2))
    assert (result.error_code, result.error_message) == (0, None)
    produce(broker, name, 3, partition=1)
    (deleted,) = delete_topics(broker, 5, name)
    assert (deleted.name, deleted.error_code, deleted.error_message) == (name, 0, None)
    assert name not in topics_of(broker)
    assert broker.call(lambda: [broker.server.log_manager.get_log(TopicPartition(name, p))
                                for p in (0, 1)]) == [None, None]
    assert not [p for p in broker.data_dir.iterdir()
                if p.name.startswith(name) and not p.name.endswith("-delete")]


@pytest.mark.parametrize(("version", "error"), [(1, InvalidRequestError),
                                                (2, InvalidRequestError),
                                                (3, TopicDeletionDisabledError),
                                                (5, TopicDeletionDisabledError)])
def test_delete_topics_disabled(version: int, error: type) -> None:
    with Broker(config={"delete.topic.enable": "false"}) as b:
        create(b, "a")
        results = delete_topics(b, version, "a", "missing")
        assert [(r.name, r.error_code, r.error_message) for r in results] == [
            ("a", error.code, None), ("missing", error.code, None)]  # type: ignore
        assert "a" in topics_of(b)


# ============================================================================ CreatePartitions


def partitions_topic(name: str, count: int, assignments: list[list[int]] | None = None) -> Any:
    C = REQ[CREATE_PARTITIONS]
    return C["CreatePartitionsTopic"](
        name=name, count=count,
        assignments=None if assignments is None
        else [C["CreatePartitionsAssignment"](broker_ids=a) for a in assignments])


def create_partitions(broker: Broker, version: int, *topics: Any,
                      validate_only: bool = False) -> list[tuple[str, int, str | None]]:
    body = REQ[CREATE_PARTITIONS]["CreatePartitionsRequest"](
        topics=list(topics), timeout_ms=5000, validate_only=validate_only)
    return [(r.name, r.error_code, r.error_message)
            for r in call(broker, CREATE_PARTITIONS, version, body).results]


@pytest.mark.parametrize("version", range(4))
def test_create_partitions_every_version(broker: Broker, version: int) -> None:
    name = f"cp-v{version}"
    create(broker, name)
    create(broker, name + ".dup")
    assert create_partitions(broker, version, partitions_topic(name, 3),
                             validate_only=True) == [(name, 0, None)]
    assert topics_of(broker)[name] == 1
    assert create_partitions(
        broker, version, partitions_topic(name, 3, [[NODE], [NODE]]),
        partitions_topic(name + ".dup", 2), partitions_topic(name + ".missing", 2),
        partitions_topic(name + ".dup", 3)) == [
        (name, 0, None),
        (name + ".dup", InvalidRequestError.code, "Duplicate topic name."),
        # Kafka throws a bare UnknownTopicOrPartitionException: no message.
        (name + ".missing", UnknownTopicOrPartitionError.code, None)]
    assert topics_of(broker)[name] == 3
    assert topics_of(broker)[name + ".dup"] == 1
    assert create_partitions(
        broker, version, partitions_topic(name, 5, [[NODE]])) == [
        (name, InvalidReplicaAssignmentError.code,
         "Attempted to add 2 additional partition(s), but only 1 assignment(s) were "
         "specified.")]
    assert create_partitions(
        broker, version, partitions_topic(name, 4, [[3]])) == [
        (name, InvalidReplicaAssignmentError.code,
         "The manual partition assignment includes broker 3, but no such broker is "
         "registered.")]
    assert create_partitions(
        broker, version, partitions_topic(name, 4, [[NODE, NODE]])) == [
        (name, InvalidReplicaAssignmentError.code,
         f"The manual partition assignment includes the broker {NODE} more than once.")]
    assert create_partitions(broker, version, partitions_topic(name, 2)) == [
        (name, InvalidPartitionsError.code,
         f"The topic {name} currently has 3 partition(s); 2 would not be an increase.")]
    assert topics_of(broker)[name] == 3


# =============================================================================== DeleteRecords


@pytest.mark.parametrize("version", range(3))
def test_delete_records_every_version(broker: Broker, version: int) -> None:
    name = f"dr-v{version}"
    create(broker, name, 3)
    create(broker, name + ".compact", 1, {"cleanup.policy": "compact"})
    produce(broker, name, 6, partition=0)
    produce(broker, name, 4, partition=1)
    C = REQ[DELETE_RECORDS]

    def parts(*items: tuple[int, int]) -> list[Any]:
        return [C["DeleteRecordsPartition"](partition_index=p, offset=o) for p, o in items]

    body = C["DeleteRecordsRequest"](topics=[
        C["DeleteRecordsTopic"](name=name, partitions=parts((0, 1), (1, -1), (2, -7), (9, 0))),
        C["DeleteRecordsTopic"](name=name, partitions=parts((0, 3))),    # again: last wins
        C["DeleteRecordsTopic"](name=name + ".compact", partitions=parts((0, 0))),
        C["DeleteRecordsTopic"](name=name + ".missing", partitions=parts((0, 0))),
    ], timeout_ms=5000)
    response = call(broker, DELETE_RECORDS, version, body)
    assert {t.name: [(p.partition_index, p.low_watermark, p.error_code) for p in t.partitions]
            for t in response.topics} == {
        name: [(0, 3, 0), (1, 4, 0), (2, -1, OffsetOutOfRangeError.code),
               (9, -1, UnknownTopicOrPartitionError.code)],
        name + ".compact": [(0, -1, PolicyViolationError.code)],
        name + ".missing": [(0, -1, UnknownTopicOrPartitionError.code)]}
    body = C["DeleteRecordsRequest"](topics=[
        C["DeleteRecordsTopic"](name=name, partitions=parts((0, 7)))], timeout_ms=5000)
    (topic,) = call(broker, DELETE_RECORDS, version, body).topics
    assert [(p.low_watermark, p.error_code) for p in topic.partitions] == [
        (-1, OffsetOutOfRangeError.code)]
    starts = broker.call(lambda: [broker.server.replica_manager.get_partition(
        tp).log_start_offset for tp in _tps(name, 3)])
    assert starts == [3, 4, 0]


def _tps(topic: str, count: int) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for p in range(count)]


# ============================================================================= DescribeConfigs


def resource(rtype: int, name: str, keys: list[str] | None = None) -> Any:
    return REQ[DESCRIBE_CONFIGS]["DescribeConfigsResource"](
        resource_type=rtype, resource_name=name, configuration_keys=keys)


def describe_configs(broker: Broker, version: int, *resources: Any, synonyms: bool = True,
                     documentation: bool = True) -> list[Any]:
    body = REQ[DESCRIBE_CONFIGS]["DescribeConfigsRequest"](
        resources=list(resources), include_synonyms=synonyms,
        include_documentation=documentation and version >= 3)
    return list(call(broker, DESCRIBE_CONFIGS, version, body).results)


@pytest.mark.parametrize("version", range(1, 5))
def test_describe_configs_every_version(broker: Broker, version: int) -> None:
    name = f"dc-v{version}"
    create(broker, name, 1, {"cleanup.policy": "compact"})
    results = describe_configs(
        broker, version, resource(TOPIC, name, ["retention.ms", "cleanup.policy", "nope"]),
        resource(TOPIC, name + ".missing"), resource(TOPIC, "bad name"),
        resource(BROKER, str(NODE), ["num.partitions"]), resource(BROKER, "7"),
        resource(BROKER, "x"), resource(GROUP, "g"))
    assert [(r.resource_type, r.resource_name, r.error_code, r.error_message)
            for r in results] == [
        (TOPIC, name, 0, ""),
        (TOPIC, name + ".missing", UnknownTopicOrPartitionError.code, ""),
        (TOPIC, "bad name", InvalidTopicError.code,
         "Topic name \"bad name\" is illegal, it contains a character other than ASCII "
         "alphanumerics, '.', '_' and '-'"),
        (BROKER, str(NODE), 0, ""),
        (BROKER, "7", InvalidRequestError.code,
         f"Unexpected broker id, expected {NODE} or empty string, but received 7"),
        (BROKER, "x", InvalidRequestError.code, "Broker id must be an integer, but it is: x"),
        (GROUP, "g", InvalidRequestError.code, "Unsupported resource type: GROUP"),
    ]
    topic, partitions = results[0].configs, results[3].configs
    assert [(c.name, c.value, c.config_source, c.read_only, c.is_sensitive) for c in topic] == [
        ("cleanup.policy", "compact", 1, False, False),
        ("retention.ms", "604800000", 5, False, False)]
    assert [(s.name, s.value, s.source) for s in topic[0].synonyms] == [
        ("cleanup.policy", "compact", 1), ("log.cleanup.policy", "delete", 5)]
    # log.retention.ms is unset and comes before log.retention.hours: Kafka drops the
    # synonyms before the topic setting's own broker name, leaving none.
    assert topic[1].synonyms == []
    (num,) = partitions
    assert (num.name, num.value, num.config_source, num.read_only) == (
        "num.partitions", "3", 4, True)
    assert [(s.name, s.value, s.source) for s in num.synonyms] == [
        ("num.partitions", "3", 4), ("num.partitions", "1", 5)]
    if version >= 3:
        assert (topic[0].config_type, topic[1].config_type, num.config_type) == (7, 5, 3)
        assert num.documentation == "Partitions of a topic created without a count."
        assert topic[1].documentation
    else:
        assert (num.config_type, num.documentation) == (0, "")
    # Without synonyms or documentation.
    (plain,) = describe_configs(broker, version, resource(TOPIC, name, ["cleanup.policy"]),
                                synonyms=False, documentation=False)
    (entry,) = plain.configs
    assert (entry.value, entry.config_source, entry.synonyms) == ("compact", 1, [])
    if version >= 3:
        assert entry.documentation is None


def test_describe_configs_cluster_default_and_loggers(broker: Broker) -> None:
    results = describe_configs(broker, 4, resource(BROKER, ""),
                               resource(BROKER_LOGGER, str(NODE)),
                               resource(BROKER_LOGGER, str(NODE), ["root"]),
                               resource(BROKER_LOGGER, ""), resource(BROKER_LOGGER, "3"))
    assert [(r.error_code, r.error_message) for r in results] == [
        (0, ""), (0, ""), (0, ""),
        (InvalidRequestError.code, "Broker id must not be empty"),
        (InvalidRequestError.code, f"Unexpected broker id, expected {NODE} but received 3")]
    assert results[0].configs == []          # nothing set at the cluster-default level
    loggers = {c.name: (c.value, c.config_source, c.read_only, c.synonyms)
               for c in results[1].configs}
    root = logging.getLogger()
    expected_root = {logging.DEBUG: "DEBUG", logging.INFO: "INFO", logging.WARNING: "WARN",
                     logging.ERROR: "ERROR"}.get(root.getEffectiveLevel())
    assert loggers["root"] == (expected_root, 6, False, [])
    assert "kafkapy.server.handlers.configs" in loggers
    assert all(name == "root" or name.startswith("kafkapy") for name in loggers)
    assert [c.name for c in results[2].configs] == ["root"]


def test_describe_configs_unknown_resource_type_fails_the_request(broker: Broker) -> None:
    results = describe_configs(broker, 4, resource(TOPIC, "x"), resource(99, "y"))
    # Kafka's getErrorResponse: every resource, the generic message.
    assert [(r.resource_name, r.error_code, r.error_message, r.configs) for r in results] == [
        ("x", InvalidRequestError.code, InvalidRequestError.description, []),
        ("y", InvalidRequestError.code, InvalidRequestError.description, [])]


# ========================================================================= AlterConfigs (both)


def alter(broker: Broker, version: int, *resources: tuple[int, str, dict[str, str | None]],
          validate_only: bool = False) -> list[tuple[int, str | None]]:
    C = REQ[ALTER_CONFIGS]
    body = C["AlterConfigsRequest"](resources=[
        C["AlterConfigsResource"](resource_type=t, resource_name=n, configs=[
            C["AlterableConfig"](name=k, value=v) for k, v in configs.items()])
        for t, n, configs in resources], validate_only=validate_only)
    return [(r.error_code, r.error_message)
            for r in call(broker, ALTER_CONFIGS, version, body).responses]


def overrides_of(broker: Broker, topic: str) -> dict[str, str]:
    return broker.call(lambda: dict(broker.server.metadata_store.topics[topic].configs))


@pytest.mark.parametrize("version", range(3))
def test_alter_configs_every_version(broker: Broker, version: int) -> None:
    name = f"ac-v{version}"
    create(broker, name, 1, {"retention.ms": "60000"})
    create(broker, name + ".dup")
    assert alter(broker, version, (TOPIC, name, {"segment.ms": "100000"}),
                 validate_only=True) == [(0, None)]
    assert overrides_of(broker, name) == {"retention.ms": "60000"}
    assert alter(
        broker, version, (TOPIC, name, {"segment.ms": "100000"}),
        (TOPIC, name + ".dup", {}), (TOPIC, name + ".dup", {"segment.ms": "1"}),
        (TOPIC, name + ".missing", {}), (TOPIC, "", {}), (TOPIC, "a b", {}),
        (BROKER_LOGGER, str(NODE), {"root": "INFO"}),
        (BROKER, str(NODE), {"num.partitions": "5"}),
        (BROKER, "2", {"message.max.bytes": "5"}),
        (BROKER, "one", {"message.max.bytes": "5"}),
        (TOPIC, name + ".x", {"retention.ms": None}),
        (TOPIC, name + ".y", {"retention.ms": "x"}),
    ) == [
        (0, None),
        (InvalidRequestError.code, "Each resource must appear at most once."),
        (InvalidRequestError.code, "Each resource must appear at most once."),
        (UnknownTopicOrPartitionError.code, f"The topic '{name}.missing' does not exist."),
        (InvalidRequestError.code, "Default topic resources are not allowed."),
        (InvalidTopicError.code, "Topic name \"a b\" is illegal, it contains a character other "
                                 "than ASCII alphanumerics, '.', '_' and '-'"),
        (InvalidRequestError.code, "Unknown resource type 8"),
        (InvalidRequestError.code, "Cannot update these configs dynamically: num.partitions"),
        (InvalidRequestError.code, f"Unexpected broker id, expected {NODE}, but received 2"),
        (InvalidRequestError.code, "Node id must be an integer, but it is: one"),
        (InvalidRequestError.code, "Null value not supported for : retention.ms"),
        (InvalidConfigError.code, "Invalid value 'x' for configuration retention.ms: invalid "
                                  "literal for int() with base 10: 'x'"),
    ]
    # The whole set was replaced: retention.ms is gone.
    assert overrides_of(broker, name) == {"segment.ms": "100000"}
    assert overrides_of(broker, name + ".dup") == {}
    # An empty set removes every override.
    assert alter(broker, version, (TOPIC, name, {})) == [(0, None)]
    assert overrides_of(broker, name) == {}


def test_alter_configs_broker(tmp_path: Any) -> None:
    with Broker(data_dir=tmp_path) as b:
        assert alter(b, 2, (BROKER, str(NODE), {"log.retention.bytes": "1000",
                                                "message.max.bytes": "2000"})) == [(0, None)]
        assert alter(b, 2, (BROKER, "", {"log.segment.bytes": "1048576"})) == [(0, None)]
        # Replacing the set drops message.max.bytes from the broker's own layer.
        assert alter(b, 2, (BROKER, str(NODE), {"log.retention.bytes": "3000"})) == [(0, None)]
        assert b.call(lambda: dict(b.server.metadata_store.broker_configs)) == {
            str(NODE): {"log.retention.bytes": "3000"}, "": {"log.segment.bytes": "1048576"}}
        config = b.call(lambda: b.server.config)
        assert (config.message_max_bytes, config.log_retention_bytes,
                config.log_segment_bytes) == (1048588, 3000, 1048576)
        # A per-broker setting cannot be set for the whole cluster.
        assert alter(b, 2, (BROKER, "", {"listeners": "PLAINTEXT://:0"})) == [
            (InvalidRequestError.code, "Cannot update these configs dynamically: listeners")]


def incremental(broker: Broker, version: int,
                *resources: tuple[int, str, list[tuple[str, int, str | None]]],
                validate_only: bool = False) -> list[tuple[int, str | None]]:
    C = REQ[INCREMENTAL_ALTER_CONFIGS]
    body = C["IncrementalAlterConfigsRequest"](resources=[
        C["AlterConfigsResource"](resource_type=t, resource_name=n, configs=[
            C["AlterableConfig"](name=k, config_operation=op, value=v) for k, op, v in ops])
        for t, n, ops in resources], validate_only=validate_only)
    return [(r.error_code, r.error_message)
            for r in call(broker, INCREMENTAL_ALTER_CONFIGS, version, body).responses]


@pytest.mark.parametrize("version", range(2))
def test_incremental_alter_configs_every_version(broker: Broker, version: int) -> None:
    name = f"iac-v{version}"
    create(broker, name, 1, {"retention.ms": "60000"})
    assert incremental(broker, version, (TOPIC, name, [
        ("cleanup.policy", APPEND, "compact"), ("retention.ms", DELETE, None),
        ("segment.ms", SET, "100000")])) == [(0, None)]
    assert overrides_of(broker, name) == {"cleanup.policy": "delete,compact",
                                          "segment.ms": "100000"}
    assert incremental(broker, version, (TOPIC, name, [
        ("cleanup.policy", SUBTRACT, "delete,nothing")])) == [(0, None)]
    assert overrides_of(broker, name) == {"cleanup.policy": "compact", "segment.ms": "100000"}
    assert incremental(
        broker, version,
        (TOPIC, name, [("retention.ms", APPEND, "1")]),
        (TOPIC, name + ".w", [("segment.ms", 9, "1")]),
        (TOPIC, name + ".x", [("segment.ms", SET, "1")]),
        (TOPIC, name + ".y", [("segment.ms", SET, None)]),
        (TOPIC, name + ".z", [("segment.ms", SET, "1"), ("segment.ms", DELETE, None)]),
        (TOPIC, name + ".missing", [("segment.ms", SET, "1000")]),
        (BROKER, str(NODE), [("log.retention.bytes", 9, "1")]),
        (BROKER, "3", [("log.retention.bytes", SET, "1")]),
        (GROUP, "g", [("x", SET, "1")]),
        (TOPIC, name + ".x", [("segment.ms", SET, "1")]),
    ) == [
        (InvalidConfigError.code, "Can't APPEND to key retention.ms because its type is not "
                                  "LIST."),
        (InvalidRequestError.code, "Unknown operations type 9"),
        (InvalidRequestError.code, "Each resource must appear at most once."),
        (InvalidRequestError.code, "Null value not supported for : segment.ms"),
        (InvalidRequestError.code, "Error due to duplicate config keys"),
        (UnknownTopicOrPartitionError.code, f"The topic '{name}.missing' does not exist."),
        (InvalidRequestError.code, "Unknown operations type 9"),
        (InvalidRequestError.code, f"Unexpected broker id, expected {NODE}, but received 3"),
        (InvalidRequestError.code, "Unknown resource type 32"),
        # Named twice in one request: both entries are refused.
        (InvalidRequestError.code, "Each resource must appear at most once."),
    ]
    assert incremental(broker, version, (BROKER, str(NODE), [
        ("num.partitions", APPEND, "1")])) == [
        (InvalidConfigError.code, "Config value append is not allowed for config key: "
                                  "num.partitions")]
    assert incremental(broker, version, (BROKER, str(NODE), [
        ("no.such.setting", SUBTRACT, "1")])) == [
        (InvalidConfigError.code, "Unknown config name: no.such.setting")]
    assert incremental(broker, version, (TOPIC, name, [("segment.ms", DELETE, None)]),
                       validate_only=True) == [(0, None)]
    assert overrides_of(broker, name) == {"cleanup.policy": "compact", "segment.ms": "100000"}


@pytest.fixture
def restore_loggers() -> Iterator[None]:
    levels = {name: logger.level for name, logger in logging.Logger.manager.loggerDict.items()
              if isinstance(logger, logging.Logger)}
    root = logging.getLogger().level
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    logging.getLogger().setLevel(root)


def test_incremental_alter_broker_loggers(broker: Broker, restore_loggers: None) -> None:
    target = "kafkapy.server.handlers.cluster"
    logger = logging.getLogger(target)
    assert incremental(broker, 1, (BROKER_LOGGER, str(NODE), [(target, SET, "TRACE")]),
                       validate_only=True) == [(0, None)]
    assert logger.level == logging.NOTSET
    assert incremental(broker, 1, (BROKER_LOGGER, str(NODE), [(target, SET, "TRACE")])) == [
        (0, None)]
    assert logger.level == 5
    (described,) = describe_configs(broker, 4, resource(BROKER_LOGGER, str(NODE), [target]))
    assert [(c.name, c.value) for c in described.configs] == [(target, "TRACE")]
    assert incremental(broker, 1, (BROKER_LOGGER, str(NODE), [(target, SET, "FATAL")])) == [
        (0, None)]
    assert logger.level == logging.CRITICAL
    assert incremental(broker, 1, (BROKER_LOGGER, str(NODE), [(target, DELETE, None)])) == [
        (0, None)]
    assert logger.level == logging.NOTSET
    refusals = [
        ([(target, SET, "VERBOSE")], str(NODE),
         (InvalidConfigError.code, f"Cannot set the log level of {target} to VERBOSE as it "
                                   f"is not a supported log level. Valid log levels are "
                                   f"DEBUG, ERROR, FATAL, INFO, TRACE, WARN")),
        ([("no.such.logger", SET, "INFO")], str(NODE),
         (InvalidConfigError.code, "Logger no.such.logger does not exist!")),
        ([("root", DELETE, None)], str(NODE),
         (InvalidRequestError.code, "Removing the log level of the root logger is not "
                                    "allowed")),
        ([(target, SET, "INFO")], f"{NODE}0",
         (InvalidRequestError.code, f"Unexpected node id. Expected {NODE}, but received "
                                    f"{NODE}0")),
        ([(target, SET, "INFO")], "x",
         (InvalidRequestError.code, "Node id must be an integer, but it is: x")),
        ([(target, APPEND, "INFO")], str(NODE),
         (InvalidRequestError.code, "APPEND operation is not allowed for the BROKER_LOGGER "
                                    "resource")),
        ([(target, SUBTRACT, "INFO")], str(NODE),
         (InvalidRequestError.code, "SUBTRACT operation is not allowed for the BROKER_LOGGER "
                                    "resource")),
        ([(target, 7, "INFO")], str(NODE),
         (InvalidRequestError.code, "Unknown operation type 7 is not allowed for the "
                                    "BROKER_LOGGER resource")),
        # Nothing is applied when one operation is refused.
        ([(target, SET, "ERROR"), ("root", DELETE, None)], str(NODE),
         (InvalidRequestError.code, "Removing the log level of the root logger is not "
                                    "allowed")),
    ]
    for ops, node, answer in refusals:
        assert incremental(broker, 1, (BROKER_LOGGER, node, ops)) == [answer], ops
    assert logger.level == logging.NOTSET


# ============================================================================= DescribeCluster


@pytest.mark.parametrize("version", range(2))
def test_describe_cluster_every_version(broker: Broker, version: int) -> None:
    C = REQ[DESCRIBE_CLUSTER]
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    for include, operations in ((True, 8096), (False, -2147483648)):
        body = C["DescribeClusterRequest"](include_cluster_authorized_operations=include)
        response = call(broker, DESCRIBE_CLUSTER, version, body)
        assert (response.error_code, response.error_message, response.cluster_id,
                response.controller_id, response.endpoint_type,
                response.cluster_authorized_operations) == (
            0, None, broker.server.cluster_id, NODE, 1, operations)
        assert [(b.broker_id, b.host, b.port, b.rack) for b in response.brokers] == [
            (NODE, host, int(port), None)]


@pytest.mark.parametrize(("endpoint_type", "error", "message"), [
    (2, MismatchedEndpointTypeError, "The request was sent to an endpoint of type BROKER, but "
                                     "we wanted an endpoint of type CONTROLLER"),
    (0, UnsupportedEndpointTypeError, "Unsupported endpoint type 0"),
    (9, UnsupportedEndpointTypeError, "Unsupported endpoint type 9"),
])
def test_describe_cluster_endpoint_types(broker: Broker, endpoint_type: int, error: type,
                                         message: str) -> None:
    body = REQ[DESCRIBE_CLUSTER]["DescribeClusterRequest"](endpoint_type=endpoint_type)
    response = call(broker, DESCRIBE_CLUSTER, 1, body)
    assert (response.error_code, response.error_message, response.brokers,
            response.cluster_id) == (error.code, message, [], "")  # type: ignore[attr-defined]


# ============================================================================= DescribeLogDirs


@pytest.mark.parametrize("version", range(1, 5))
def test_describe_log_dirs_every_version(broker: Broker, version: int) -> None:
    name = f"dld-v{version}"
    create(broker, name, 2)
    produce(broker, name, 3, partition=1)
    C = REQ[DESCRIBE_LOG_DIRS]
    body = C["DescribeLogDirsRequest"](topics=[
        C["DescribableLogDirTopic"](topic=name, partitions=[1, 7]),
        C["DescribableLogDirTopic"](topic=name + ".missing", partitions=[0])])
    response = call(broker, DESCRIBE_LOG_DIRS, version, body)
    assert response.error_code == 0
    (result,) = response.results
    size = sum(f.stat().st_size for f in (broker.data_dir / f"{name}-1").glob("*.log"))
    assert size > 0
    assert (result.error_code, result.log_dir) == (0, os.path.abspath(broker.data_dir))
    assert [(t.name, [(p.partition_index, p.partition_size, p.offset_lag, p.is_future_key)
                      for p in t.partitions]) for t in result.topics] == [
        (name, [(1, size, 0, False)])]
    if version >= 4:
        st = os.statvfs(broker.data_dir)
        assert result.total_bytes == st.f_blocks * st.f_frsize
        assert 0 < result.usable_bytes <= result.total_bytes
    else:
        assert (result.total_bytes, result.usable_bytes) == (-1, -1)
    # Topics null: every partition of every topic.
    response = call(broker, DESCRIBE_LOG_DIRS, version, C["DescribeLogDirsRequest"](topics=None))
    (result,) = response.results
    listed = {(t.name, p.partition_index) for t in result.topics for p in t.partitions}
    assert listed == {(t, p) for t, count in topics_of(broker).items() for p in range(count)}
