"""The admin APIs with real clients over real sockets: confluent-kafka's AdminClient
(librdkafka), kafka-python's KafkaAdminClient and aiokafka's AIOKafkaAdminClient against an
embedded ``kafkapy.Broker``.

Between them the clients cover CreateTopics v3 (aiokafka), v4 (librdkafka) and v7
(kafka-python), DeleteTopics v3/v4/v5, CreatePartitions v1/v2/v3, DeleteRecords v2,
DescribeConfigs v1/v2/v4, AlterConfigs v1/v2, IncrementalAlterConfigs v1, DescribeCluster v1
and DescribeLogDirs v4; the other versions and the raw edge cases are in
tests/server/test_admin_handlers.py. Every answer is checked for exact values (partition
counts, config values and sources, error codes and Kafka's messages), and the restart test
checks that every change survives a broker restart on the same data dir.

The module broker has ``num.partitions=2`` and a static ``log.retention.bytes`` so defaults and
sources can be told apart; tests that change broker configs start their own broker.
"""

from __future__ import annotations

import asyncio
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewPartitions as AioNewPartitions
from aiokafka.admin import NewTopic as AioNewTopic
from aiokafka.admin.config_resource import ConfigResource as AioConfigResource
from aiokafka.admin.config_resource import ConfigResourceType as AioConfigResourceType
from aiokafka.admin.records_to_delete import RecordsToDelete
from aiokafka.structs import TopicPartition as AioTopicPartition
from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)
from kafka import KafkaAdminClient
from kafka import TopicPartition as KPTopicPartition
from kafka.admin import ConfigResource as KPConfigResource
from kafka.admin import ConfigResourceType as KPConfigResourceType
from kafka.admin import NewPartitions as KPNewPartitions
from kafka.admin import NewTopic as KPNewTopic

from kafkapy import Broker
from kafkapy.common.topic_partition import TopicPartition as KTopicPartition
from kafkapy.protocol import API_KEYS
from kafkapy.protocol.classes import struct_classes
from kafkapy.server.handlers.metadata import INTERNAL_TOPICS
from tests.clients.client_support import RawClient

TIMEOUT = 10.0
STATIC_RETENTION_BYTES = "1073741824"
NODE = 1


def topic_name(request: pytest.FixtureRequest, suffix: str = "") -> str:
    return re.sub(r"[^a-zA-Z0-9._-]", "-", request.node.name)[:180] + suffix


@pytest.fixture(scope="module")
def broker() -> Iterator[Broker]:
    with Broker(config={"num.partitions": "2",
                        "log.retention.bytes": STATIC_RETENTION_BYTES}) as b:
        yield b


@pytest.fixture(scope="module")
def admin(broker: Broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers,
                        "socket.timeout.ms": int(TIMEOUT * 1000)})


@pytest.fixture(scope="module")
def kp_admin(broker: Broker) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers,
                              request_timeout_ms=int(TIMEOUT * 1000))
    yield client
    client.close()


IAC = struct_classes(API_KEYS[44].request.body)
DC = struct_classes(API_KEYS[32].request.body)


def raw_incremental_alter(bootstrap: str, resource_name: str,
                          ops: list[tuple[str, int, str | None]]) -> tuple[int, str | None]:
    """IncrementalAlterConfigs v1 on a BROKER resource, over a raw socket: the clients
    refuse the cluster-default resource "" (librdkafka) or need a numeric name and send the
    request to that broker (kafka-python, aiokafka)."""
    body = IAC["IncrementalAlterConfigsRequest"](resources=[IAC["AlterConfigsResource"](
        resource_type=4, resource_name=resource_name,
        configs=[IAC["AlterableConfig"](name=n, config_operation=op, value=v)
                 for n, op, v in ops])], validate_only=False)
    with RawClient(bootstrap) as client:
        (response,) = client.request(44, 1, body).responses
    return response.error_code, response.error_message


def raw_describe_broker(bootstrap: str, resource_name: str) -> Any:
    """DescribeConfigs v4 of one BROKER resource over a raw socket (see above)."""
    body = DC["DescribeConfigsRequest"](resources=[DC["DescribeConfigsResource"](
        resource_type=4, resource_name=resource_name, configuration_keys=None)],
        include_synonyms=True, include_documentation=False)
    with RawClient(bootstrap) as client:
        (described,) = client.request(32, 4, body).results
    return described


def topics_of(broker: Broker) -> dict[str, int]:
    """The broker's topics and partition counts, read on its loop."""
    return broker.call(lambda: {name: r.partitions
                                for name, r in broker.server.metadata_store.topics.items()})


def overrides_of(broker: Broker, topic: str) -> dict[str, str]:
    return broker.call(lambda: dict(broker.server.metadata_store.topics[topic].configs))


def result(future: Any) -> Any:
    return future.result(timeout=TIMEOUT)


def error_of(future: Any) -> KafkaError:
    with pytest.raises(KafkaException) as info:
        future.result(timeout=TIMEOUT)
    err = info.value.args[0]
    assert isinstance(err, KafkaError)
    return err


def describe_topic(admin: AdminClient, topic: str) -> dict[str, ConfigEntry]:
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    return dict(result(admin.describe_configs([resource])[resource]))


def produce(bootstrap: str, topic: str, count: int, partition: int = 0) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(count):
        # Keyed: some topics here are compacted, whose leader refuses keyless records.
        producer.produce(topic, f"value-{i}".encode(), key=f"key-{i}".encode(),
                         partition=partition)
    assert producer.flush(TIMEOUT) == 0


def watermarks(bootstrap: str, topic: str, partition: int = 0) -> tuple[int, int]:
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap,
                                         "group.id": "kafkapy-admin-tests"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition),
                                                   timeout=TIMEOUT)
        return int(low), int(high)
    finally:
        consumer.close()


# =========================================================================== confluent-kafka


def test_confluent_create_topics(broker: Broker, admin: AdminClient,
                                 request: pytest.FixtureRequest) -> None:
    a, b, c = (topic_name(request, s) for s in (".a", ".b", ".c"))
    futures = admin.create_topics([
        NewTopic(a, num_partitions=3, replication_factor=1,
                 config={"retention.ms": "3600000", "cleanup.policy": "compact"}),
        NewTopic(b),                                        # -1/-1: the broker's defaults
        NewTopic(c, 4, replica_assignment=[[NODE], [NODE], [NODE], [NODE]]),
    ], request_timeout=TIMEOUT)
    assert {t: result(f) for t, f in futures.items()} == {a: None, b: None, c: None}
    topics = topics_of(broker)
    assert (topics[a], topics[b], topics[c]) == (3, 2, 4)
    assert overrides_of(broker, a) == {"retention.ms": "3600000", "cleanup.policy": "compact"}
    metadata = admin.list_topics(timeout=TIMEOUT).topics
    assert {t: len(metadata[t].partitions) for t in (a, b, c)} == {a: 3, b: 2, c: 4}


def test_confluent_create_topics_validate_only(broker: Broker, admin: AdminClient,
                                               request: pytest.FixtureRequest) -> None:
    name = topic_name(request)
    futures = admin.create_topics([NewTopic(name, 5, 1, config={"segment.bytes": "1048576"})],
                                  validate_only=True, request_timeout=TIMEOUT)
    assert result(futures[name]) is None
    assert name not in topics_of(broker)
    # An invalid one is refused the same way as without validate_only.
    futures = admin.create_topics([NewTopic(name, 5, 1, config={"segment.bytes": "x"})],
                                  validate_only=True, request_timeout=TIMEOUT)
    assert error_of(futures[name]).code() == KafkaError.INVALID_CONFIG
    assert name not in topics_of(broker)


def test_confluent_create_topics_errors(broker: Broker, admin: AdminClient,
                                        request: pytest.FixtureRequest) -> None:
    base = topic_name(request)
    result(admin.create_topics([NewTopic(base, 1, 1)])[base])
    cases = {
        base: (NewTopic(base, 1, 1), KafkaError.TOPIC_ALREADY_EXISTS,
               f"Topic '{base}' already exists."),
        base + "!": (NewTopic(base + "!", 1, 1), KafkaError.TOPIC_EXCEPTION,
                     f'Topic name "{base}!" is illegal, it contains a character other than '
                     f"ASCII alphanumerics, '.', '_' and '-'"),
        base + ".rf": (NewTopic(base + ".rf", 1, 3), KafkaError.INVALID_REPLICATION_FACTOR,
                       "Unable to replicate the partition 3 time(s): The target replication "
                       "factor of 3 cannot be reached because only 1 broker(s) are "
                       "registered."),
        base + ".cfg": (NewTopic(base + ".cfg", 1, 1, config={"no.such.config": "1"}),
                        KafkaError.INVALID_CONFIG, "Unknown topic config name: no.such.config"),
        base + ".asg": (NewTopic(base + ".asg", 2, replica_assignment=[[NODE], [7]]),
                        KafkaError.INVALID_REPLICA_ASSIGNMENT,
                        "The manual partition assignment includes broker 7, but no such "
                        "broker is registered."),
    }
    futures = admin.create_topics([new for new, _code, _message in cases.values()],
                                  request_timeout=TIMEOUT)
    for name, (_new, code, message) in cases.items():
        err = error_of(futures[name])
        assert (err.code(), err.str()) == (code, message), name
    assert not set(cases) - {base} & set(topics_of(broker))


def test_confluent_delete_topics(broker: Broker, admin: AdminClient,
                                 request: pytest.FixtureRequest) -> None:
    name = topic_name(request)
    result(admin.create_topics([NewTopic(name, 2, 1)])[name])
    produce(broker.bootstrap_servers, name, 3)
    futures = admin.delete_topics([name, name + ".missing"], request_timeout=TIMEOUT)
    assert result(futures[name]) is None
    assert error_of(futures[name + ".missing"]).code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    assert name not in topics_of(broker)
    # The logs are renamed away at once (and removed file.delete.delay.ms later).
    assert not any(p.name in (f"{name}-0", f"{name}-1") for p in broker.data_dir.iterdir())
    # The name can be used again, for a new and empty topic.
    result(admin.create_topics([NewTopic(name, 1, 1)])[name])
    assert watermarks(broker.bootstrap_servers, name) == (0, 0)


def test_confluent_create_partitions(broker: Broker, admin: AdminClient,
                                     request: pytest.FixtureRequest) -> None:
    name = topic_name(request)
    result(admin.create_topics([NewTopic(name, 1, 1)])[name])
    futures = admin.create_partitions([NewPartitions(name, 6)], validate_only=True,
                                      request_timeout=TIMEOUT)
    assert result(futures[name]) is None
    assert topics_of(broker)[name] == 1
    futures = admin.create_partitions([NewPartitions(name, 3, [[NODE], [NODE]])],
                                      request_timeout=TIMEOUT)
    assert result(futures[name]) is None
    assert topics_of(broker)[name] == 3
    produce(broker.bootstrap_servers, name, 2, partition=2)
    assert watermarks(broker.bootstrap_servers, name, 2) == (0, 2)
    for count, code, message in [
        (2, KafkaError.INVALID_PARTITIONS,
         f"The topic {name} currently has 3 partition(s); 2 would not be an increase."),
        (3, KafkaError.INVALID_PARTITIONS, "Topic already has 3 partition(s)."),
    ]:
        err = error_of(admin.create_partitions([NewPartitions(name, count)])[name])
        assert (err.code(), err.str()) == (code, message)
    err = error_of(admin.create_partitions([NewPartitions(name + ".missing", 2)])[
        name + ".missing"])
    assert err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    assert topics_of(broker)[name] == 3


def test_confluent_describe_topic_configs(admin: AdminClient,
                                          request: pytest.FixtureRequest) -> None:
    name = topic_name(request)
    result(admin.create_topics([NewTopic(name, 1, 1, config={"retention.ms": "60000"})])[name])
    configs = describe_topic(admin, name)
    assert len(configs) == 27
    retention = configs["retention.ms"]
    assert (retention.value, retention.source, retention.is_read_only, retention.is_sensitive,
            retention.is_default) == ("60000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value, False,
                                      False, False)
    assert [(s.name, s.value, s.source) for s in retention.synonyms.values()] == [
        ("retention.ms", "60000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)]
    size = configs["retention.bytes"]          # from the broker's static log.retention.bytes
    assert (size.value, size.source) == (STATIC_RETENTION_BYTES,
                                         ConfigSource.STATIC_BROKER_CONFIG.value)
    # (confluent-kafka keys synonyms by name, so of the static and the default
    # log.retention.bytes only the last one shows; kafka-python's test sees both.)
    assert list(size.synonyms) == ["log.retention.bytes"]
    segment = configs["segment.bytes"]
    assert (segment.value, segment.source, segment.is_default) == (
        "1073741824", ConfigSource.DEFAULT_CONFIG.value, True)
    assert configs["cleanup.policy"].value == "delete"
    assert configs["max.message.bytes"].value == "1048588"
    # Unknown topic: UNKNOWN_TOPIC_OR_PARTITION for that resource.
    resource = ConfigResource(ConfigResource.Type.TOPIC, name + ".missing")
    err = error_of(admin.describe_configs([resource])[resource])
    assert err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_confluent_describe_broker_configs(broker: Broker, admin: AdminClient) -> None:
    resource = ConfigResource(ConfigResource.Type.BROKER, str(NODE))
    configs = dict(result(admin.describe_configs([resource])[resource]))
    partitions = configs["num.partitions"]
    assert (partitions.value, partitions.source, partitions.is_read_only) == (
        "2", ConfigSource.STATIC_BROKER_CONFIG.value, True)
    size = configs["log.retention.bytes"]
    assert (size.value, size.source, size.is_read_only) == (
        STATIC_RETENTION_BYTES, ConfigSource.STATIC_BROKER_CONFIG.value, False)
    message = configs["message.max.bytes"]
    assert (message.value, message.source, message.is_default, message.is_read_only) == (
        "1048588", ConfigSource.DEFAULT_CONFIG.value, True, False)
    assert configs["log.dirs"].value == str(broker.data_dir)


def test_confluent_alter_configs_replaces_the_set(broker: Broker, admin: AdminClient,
                                                  request: pytest.FixtureRequest) -> None:
    name = topic_name(request)
    result(admin.create_topics([NewTopic(name, 1, 1, config={"retention.ms": "60000"})])[name])
    resource = ConfigResource(ConfigResource.Type.TOPIC, name,
                              set_config={"segment.ms": "3600000"})
    assert result(legacy_alter(admin, resource, validate_only=True)) is None
    assert overrides_of(broker, name) == {"retention.ms": "60000"}
    assert result(legacy_alter(admin, resource)) is None
    assert overrides_of(broker, name) == {"segment.ms": "3600000"}
    configs = describe_topic(admin, name)
    assert (configs["retention.ms"].value, configs["retention.ms"].source) == (
        "604800000", ConfigSource.DEFAULT_CONFIG.value)
    assert (configs["segment.ms"].value, configs["segment.ms"].source) == (
        "3600000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    # The running log took the new value.
    log_config = broker.call(lambda: broker.server.log_manager.logs[
        log_key(name)].config)
    assert log_config.segment_ms == 3600000
    bad = ConfigResource(ConfigResource.Type.TOPIC, name,
                         set_config={"min.cleanable.dirty.ratio": "2"})
    err = error_of(legacy_alter(admin, bad))
    assert err.code() == KafkaError.INVALID_CONFIG
    assert overrides_of(broker, name) == {"segment.ms": "3600000"}
    missing = ConfigResource(ConfigResource.Type.TOPIC, name + ".missing",
                             set_config={"segment.ms": "3600000"})
    err = error_of(legacy_alter(admin, missing))
    assert (err.code(), err.str()) == (KafkaError.UNKNOWN_TOPIC_OR_PART,
                                       f"The topic '{name}.missing' does not exist.")


def legacy_alter(admin: AdminClient, resource: ConfigResource, **kwargs: Any) -> Any:
    """AdminClient.alter_configs (AlterConfigs), which confluent-kafka marks deprecated."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return admin.alter_configs([resource], **kwargs)[resource]


def log_key(topic: str, partition: int = 0) -> KTopicPartition:
    """kafkapy's key for a partition's log (``LogManager.logs``)."""
    return KTopicPartition(topic, partition)


def test_confluent_incremental_alter_topic_configs(broker: Broker, admin: AdminClient,
                                                   request: pytest.FixtureRequest) -> None:
    name = topic_name(request)
    result(admin.create_topics([NewTopic(name, 1, 1, config={"retention.ms": "60000"})])[name])

    def alter(*entries: ConfigEntry, validate_only: bool = False) -> Any:
        resource = ConfigResource(ConfigResource.Type.TOPIC, name,
                                  incremental_configs=list(entries))
        return admin.incremental_alter_configs([resource],
                                               validate_only=validate_only)[resource]

    assert result(alter(
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
        ConfigEntry("max.message.bytes", "2000000",
                    incremental_operation=AlterConfigOpType.SET))) is None
    # APPEND starts from the default ("delete").
    assert overrides_of(broker, name) == {"cleanup.policy": "delete,compact",
                                          "max.message.bytes": "2000000"}
    assert result(alter(ConfigEntry("cleanup.policy", "delete",
                                    incremental_operation=AlterConfigOpType.SUBTRACT))) is None
    assert overrides_of(broker, name) == {"cleanup.policy": "compact",
                                          "max.message.bytes": "2000000"}
    configs = describe_topic(admin, name)
    assert (configs["cleanup.policy"].value, configs["cleanup.policy"].source) == (
        "compact", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    assert broker.call(lambda: broker.server.log_manager.logs[
        log_key(name)].config.cleanup_policy) == ("compact",)
    # validate_only changes nothing; a list operation on a non-list key is INVALID_CONFIG.
    assert result(alter(ConfigEntry("max.message.bytes", "10",
                                    incremental_operation=AlterConfigOpType.SET),
                        validate_only=True)) is None
    err = error_of(alter(ConfigEntry("retention.ms", "1",
                                     incremental_operation=AlterConfigOpType.APPEND)))
    assert (err.code(), err.str()) == (
        KafkaError.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not "
                                   "LIST.")
    assert overrides_of(broker, name) == {"cleanup.policy": "compact",
                                          "max.message.bytes": "2000000"}


def test_confluent_delete_records(broker: Broker, admin: AdminClient,
                                  request: pytest.FixtureRequest) -> None:
    name = topic_name(request)
    result(admin.create_topics([NewTopic(name, 2, 1)])[name])
    produce(broker.bootstrap_servers, name, 10, partition=0)
    produce(broker.bootstrap_servers, name, 5, partition=1)
    futures = admin.delete_records([TopicPartition(name, 0, 4),
                                    TopicPartition(name, 1, confluent_kafka.OFFSET_END)],
                                   request_timeout=TIMEOUT)
    assert result(futures[TopicPartition(name, 0)]).low_watermark == 4
    assert result(futures[TopicPartition(name, 1)]).low_watermark == 5
    assert watermarks(broker.bootstrap_servers, name, 0) == (4, 10)
    assert watermarks(broker.bootstrap_servers, name, 1) == (5, 5)
    # Never backwards; above the high watermark is OFFSET_OUT_OF_RANGE.
    low = admin.delete_records([TopicPartition(name, 0, 2)])[TopicPartition(name, 0)]
    assert result(low).low_watermark == 4
    high = admin.delete_records([TopicPartition(name, 0, 11)])[TopicPartition(name, 0)]
    assert error_of(high).code() == KafkaError.OFFSET_OUT_OF_RANGE
    assert watermarks(broker.bootstrap_servers, name, 0) == (4, 10)


def test_confluent_list_all_topics(broker: Broker, admin: AdminClient,
                                   request: pytest.FixtureRequest) -> None:
    name = topic_name(request)
    result(admin.create_topics([NewTopic(name, 2, 1)])[name])
    metadata = admin.list_topics(timeout=TIMEOUT)
    assert {t: len(m.partitions) for t, m in metadata.topics.items()} == topics_of(broker)


def test_confluent_describe_cluster(broker: Broker, admin: AdminClient) -> None:
    description = result(admin.describe_cluster(include_authorized_operations=True,
                                                request_timeout=TIMEOUT))
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    assert description.cluster_id == broker.server.cluster_id
    assert description.controller.id == NODE
    assert [(n.id, n.host, n.port) for n in description.nodes] == [(NODE, host, int(port))]


def test_broker_configs_and_cluster_default(tmp_path: Path) -> None:
    """IncrementalAlterConfigs on the broker (its id, with confluent-kafka) and on the cluster
    default ("", raw: no client library sends it): the sources, the topics that inherit
    them, the live log config, the refusals, and DELETE falling back a layer."""
    with Broker(data_dir=tmp_path) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        result(admin.create_topics([NewTopic("inherits", 1, 1)])["inherits"])
        node = ConfigResource(ConfigResource.Type.BROKER, str(NODE), incremental_configs=[
            ConfigEntry("log.retention.bytes", "5000000",
                        incremental_operation=AlterConfigOpType.SET)])
        assert result(admin.incremental_alter_configs([node])[node]) is None
        assert raw_incremental_alter(b.bootstrap_servers, "", [
            ("log.retention.bytes", 0, "7000000"), ("log.segment.bytes", 0, "2097152"),
            ("log.cleanup.policy", 2, "compact")]) == (0, None)
        configs = describe_topic(admin, "inherits")
        size = configs["retention.bytes"]
        assert (size.value, size.source) == ("5000000",
                                             ConfigSource.DYNAMIC_BROKER_CONFIG.value)
        assert (configs["segment.bytes"].value, configs["segment.bytes"].source) == (
            "2097152", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
        # APPEND on a list setting starts from its default ("delete").
        assert (configs["cleanup.policy"].value, configs["cleanup.policy"].source) == (
            "compact,delete", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
        log_config = b.call(lambda: b.server.log_manager.logs[log_key("inherits")].config)
        assert (log_config.retention_bytes, log_config.segment_bytes,
                log_config.cleanup_policy) == (5000000, 2097152, ("compact", "delete"))
        described = raw_describe_broker(b.bootstrap_servers, str(NODE))
        (entry,) = [c for c in described.configs if c.name == "log.retention.bytes"]
        assert (entry.value, entry.config_source, entry.read_only) == ("5000000", 2, False)
        assert [(s.name, s.value, s.source) for s in entry.synonyms] == [
            ("log.retention.bytes", "5000000", 2), ("log.retention.bytes", "7000000", 3),
            ("log.retention.bytes", "-1", 5)]
        # The cluster-default resource lists only what is set at that level.
        described = raw_describe_broker(b.bootstrap_servers, "")
        assert (described.error_code, sorted((c.name, c.value, c.config_source)
                                             for c in described.configs)) == (0, [
            ("log.cleanup.policy", "compact,delete", 3),
            ("log.retention.bytes", "7000000", 3), ("log.segment.bytes", "2097152", 3)])
        # Refused: a setting that cannot change at runtime; a per-broker one at the cluster
        # level; another broker id.
        static = ConfigResource(ConfigResource.Type.BROKER, str(NODE), incremental_configs=[
            ConfigEntry("num.partitions", "3", incremental_operation=AlterConfigOpType.SET)])
        err = error_of(admin.incremental_alter_configs([static])[static])
        assert (err.code(), err.str()) == (
            KafkaError.INVALID_REQUEST, "Cannot update these configs dynamically: "
                                        "num.partitions")
        assert raw_incremental_alter(b.bootstrap_servers, "2", [
            ("log.retention.bytes", 0, "1")]) == (
            KafkaError.INVALID_REQUEST, f"Unexpected broker id, expected {NODE}, but received 2")
        # DELETE falls back to the next layer.
        back = ConfigResource(ConfigResource.Type.BROKER, str(NODE), incremental_configs=[
            ConfigEntry("log.retention.bytes", None,
                        incremental_operation=AlterConfigOpType.DELETE)])
        assert result(admin.incremental_alter_configs([back])[back]) is None
        size = describe_topic(admin, "inherits")["retention.bytes"]
        assert (size.value, size.source) == ("7000000",
                                             ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
        assert b.call(lambda: dict(b.server.metadata_store.broker_configs)) == {
            "": {"log.retention.bytes": "7000000", "log.segment.bytes": "2097152",
                 "log.cleanup.policy": "delete,compact"}}


def test_confluent_delete_topics_disabled() -> None:
    with Broker(config={"delete.topic.enable": "false"}) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        result(admin.create_topics([NewTopic("kept", 1, 1)])["kept"])
        err = error_of(admin.delete_topics(["kept"], request_timeout=TIMEOUT)["kept"])
        assert err.code() == KafkaError.TOPIC_DELETION_DISABLED
        assert "kept" in topics_of(b)


# ============================================================================== kafka-python


def test_kafka_python_create_describe_alter_delete(broker: Broker, kp_admin: KafkaAdminClient,
                                                   request: pytest.FixtureRequest) -> None:
    name = topic_name(request)
    response = kp_admin.create_topics([KPNewTopic(name, 3, 1, topic_configs={
        "retention.ms": "120000"})])
    (topic,) = response["topics"]
    record = broker.call(lambda: broker.server.metadata_store.topics[name])
    # CreateTopics v7: the topic id, the counts and the effective configs with sources.
    assert (topic["error_code"], topic["num_partitions"], topic["replication_factor"],
            str(topic["topic_id"])) == (0, 3, 1, str(record.topic_id))
    assert topic["configs"]["retention.ms"] == {
        "value": "120000", "read_only": False, "config_source": "DYNAMIC_TOPIC_CONFIG",
        "is_sensitive": False}
    assert topic["configs"]["retention.bytes"]["value"] == STATIC_RETENTION_BYTES
    assert topic["configs"]["retention.bytes"]["config_source"] == "STATIC_BROKER_CONFIG"
    assert len(topic["configs"]) == 27
    assert name in kp_admin.list_topics()
    again = kp_admin.create_topics([KPNewTopic(name, 3, 1)], raise_errors=False)
    assert [(t["error_code"], t["error_message"]) for t in again["topics"]] == [
        (36, f"Topic '{name}' already exists.")]

    # DescribeConfigs v4, with synonyms.
    described = kp_admin.describe_configs([KPConfigResource(KPConfigResourceType.TOPIC, name)],
                                          include_synonyms=True, config_filter="all")
    configs = described["topic"][name]
    assert configs["retention.ms"]["value"] == "120000"
    assert configs["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    assert configs["retention.ms"]["config_type"] == "LONG"
    assert configs["cleanup.policy"]["config_type"] == "LIST"
    assert configs["retention.bytes"]["synonyms"] == [
        {"name": "log.retention.bytes", "value": STATIC_RETENTION_BYTES,
         "source": "STATIC_BROKER_CONFIG"},
        {"name": "log.retention.bytes", "value": "-1", "source": "DEFAULT_CONFIG"}]

    # IncrementalAlterConfigs v1 and AlterConfigs v2.
    resource = KPConfigResource(KPConfigResourceType.TOPIC, name,
                                configs={"segment.ms": "7200000", "retention.ms": ("DELETE",
                                                                                  None)})
    assert kp_admin.alter_configs([resource]) == {"topic": {name: "OK"}}
    assert overrides_of(broker, name) == {"segment.ms": "7200000"}
    resource = KPConfigResource(KPConfigResourceType.TOPIC, name,
                                configs={"flush.messages": "100"})
    assert kp_admin.alter_configs([resource], incremental=False) == {"topic": {name: "OK"}}
    # kafka-python's legacy path sends the modified keys along, so nothing is lost.
    assert overrides_of(broker, name) == {"segment.ms": "7200000", "flush.messages": "100"}

    # CreatePartitions v3.
    response = kp_admin.create_partitions({name: KPNewPartitions(5)})
    assert [(r.name, r.error_code) for r in response.results] == [(name, 0)]
    assert topics_of(broker)[name] == 5
    response = kp_admin.create_partitions({name: KPNewPartitions(4)}, raise_errors=False)
    assert [(r.error_code, r.error_message) for r in response.results] == [
        (37, f"The topic {name} currently has 5 partition(s); 4 would not be an increase.")]

    # DeleteRecords v2.
    produce(broker.bootstrap_servers, name, 6, partition=1)
    low = kp_admin.delete_records({KPTopicPartition(name, 1): 3})
    assert low[KPTopicPartition(name, 1)]["low_watermark"] == 3

    # DeleteTopics v5.
    response = kp_admin.delete_topics([name, name + ".missing"], raise_errors=False)
    assert sorted((t["name"], t["error_code"], t["error_message"])
                  for t in response["topics"]) == [
        (name, 0, None),
        (name + ".missing", 3, "This server does not host this topic-partition.")]
    assert name not in topics_of(broker)


def test_kafka_python_broker_configs(kp_admin: KafkaAdminClient) -> None:
    described = kp_admin.describe_configs([KPConfigResource(KPConfigResourceType.BROKER,
                                                            str(NODE))],
                                          include_synonyms=True, config_filter="all")
    configs = described["broker"][str(NODE)]
    assert configs["num.partitions"]["value"] == "2"
    assert configs["num.partitions"]["config_source"] == "STATIC_BROKER_CONFIG"
    assert configs["num.partitions"]["read_only"] is True
    assert configs["num.partitions"]["config_type"] == "INT"
    assert configs["log.retention.ms"]["value"] is None
    assert configs["log.retention.ms"]["synonyms"] == []
    assert configs["log.retention.hours"]["synonyms"] == [
        {"name": "log.retention.hours", "value": "168", "source": "DEFAULT_CONFIG"}]


def test_kafka_python_describe_cluster(broker: Broker, kp_admin: KafkaAdminClient) -> None:
    # DescribeCluster v1 (kafka-python uses the API itself).
    cluster = kp_admin.describe_cluster()
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    assert cluster == {
        "cluster_id": broker.server.cluster_id, "controller_id": NODE,
        "brokers": [{"broker_id": NODE, "host": host, "port": int(port), "rack": None}],
        "authorized_operations": ["CREATE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
                                  "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE"]}


def test_kafka_python_describe_log_dirs(broker: Broker, kp_admin: KafkaAdminClient,
                                        request: pytest.FixtureRequest) -> None:
    name = topic_name(request)
    kp_admin.create_topics([KPNewTopic(name, 2, 1)])
    produce(broker.bootstrap_servers, name, 4, partition=1)
    (entry,) = kp_admin.describe_log_dirs({name: [0, 1]})
    (log_dir,) = entry["log_dirs"]
    assert (entry["broker"], log_dir["error_code"], log_dir["log_dir"]) == (
        NODE, 0, os.path.abspath(broker.data_dir))
    on_disk = {p: sum(f.stat().st_size for f in (broker.data_dir / f"{name}-{p}").glob("*.log"))
               for p in (0, 1)}
    assert on_disk[1] > 0
    assert log_dir["topics"] == [{"name": name, "partitions": [
        {"partition_index": p, "partition_size": on_disk[p], "offset_lag": 0,
         "is_future_key": False} for p in (0, 1)]}]
    st = os.statvfs(broker.data_dir)
    assert log_dir["total_bytes"] == st.f_blocks * st.f_frsize
    assert 0 < log_dir["usable_bytes"] <= log_dir["total_bytes"]
    # No topics asked: every log of the broker.
    (entry,) = kp_admin.describe_log_dirs()
    listed = {t["name"] for t in entry["log_dirs"][0]["topics"]}
    assert name in listed and listed == set(topics_of(broker))


# ================================================================================== aiokafka


def test_aiokafka_admin(broker: Broker, request: pytest.FixtureRequest) -> None:
    name = topic_name(request)

    async def main() -> None:
        client = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap_servers,
                                     request_timeout_ms=int(TIMEOUT * 1000))
        await client.start()
        try:
            # CreateTopics v3.
            response = await client.create_topics([
                AioNewTopic(name, 2, 1, topic_configs={"cleanup.policy": "compact"}),
                AioNewTopic(name + "!", 1, 1)])
            assert [tuple(t[:3]) for t in response.topic_errors] == [
                (name, 0, None),
                (name + "!", 17, f'Topic name "{name}!" is illegal, it contains a character '
                                 f"other than ASCII alphanumerics, '.', '_' and '-'")]
            assert topics_of(broker)[name] == 2
            assert name in await client.list_topics()
            # DescribeConfigs v2.
            (described,) = await client.describe_configs(
                [AioConfigResource(AioConfigResourceType.TOPIC, name)])
            (res,) = described.resources
            assert (res[0], res[2], res[3]) == (0, 2, name)
            configs = {c[0]: c for c in res[4]}
            assert configs["cleanup.policy"][1:4] == ("compact", False, 1)
            assert configs["retention.bytes"][1:4] == (STATIC_RETENTION_BYTES, False, 4)
            # AlterConfigs v1 replaces the set.
            (altered,) = await client.alter_configs([AioConfigResource(
                AioConfigResourceType.TOPIC, name, {"retention.ms": "90000"})])
            assert [tuple(r[:2]) for r in altered.resources] == [(0, None)]
            assert overrides_of(broker, name) == {"retention.ms": "90000"}
            # CreatePartitions v1.
            await client.create_partitions({name: AioNewPartitions(4)})
            assert topics_of(broker)[name] == 4
            # DeleteRecords v2 (cleanup.policy is no longer compact).
            produce(broker.bootstrap_servers, name, 3, partition=3)
            low = await client.delete_records({AioTopicPartition(name, 3): RecordsToDelete(2)})
            assert low == {AioTopicPartition(name, 3): 2}
            # DeleteTopics v3.
            response = await client.delete_topics([name])
            assert [tuple(t) for t in response.topic_error_codes] == [(name, 0)]
            assert name not in topics_of(broker)
        finally:
            await client.close()

    asyncio.run(main())


# ================================================================================ durability


def test_changes_survive_a_restart(tmp_path: Path) -> None:
    """Everything the admin APIs change is in the metadata store or the logs' checkpoints,
    so a broker restarted on the same data dir has it all."""
    with Broker(data_dir=tmp_path) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        futures = admin.create_topics([
            NewTopic("kept", 1, 1, config={"retention.ms": "60000"}),
            NewTopic("dropped", 1, 1)])
        assert all(result(f) is None for f in futures.values())
        result(admin.create_partitions([NewPartitions("kept", 3)])["kept"])
        resource = ConfigResource(ConfigResource.Type.TOPIC, "kept", incremental_configs=[
            ConfigEntry("cleanup.policy", "delete,compact",
                        incremental_operation=AlterConfigOpType.SET)])
        result(admin.incremental_alter_configs([resource])[resource])
        node = ConfigResource(ConfigResource.Type.BROKER, str(NODE), incremental_configs=[
            ConfigEntry("log.retention.bytes", "5000000",
                        incremental_operation=AlterConfigOpType.SET)])
        assert result(admin.incremental_alter_configs([node])[node]) is None
        assert raw_incremental_alter(b.bootstrap_servers, "", [
            ("message.max.bytes", 0, "2000000")]) == (0, None)
        result(admin.delete_topics(["dropped"])["dropped"])
        produce(b.bootstrap_servers, "kept", 8, partition=2)
        deleted = admin.delete_records([TopicPartition("kept", 2, 5)])
        assert result(deleted[TopicPartition("kept", 2)]).low_watermark == 5
        topic_id = b.call(lambda: b.server.metadata_store.topics["kept"].topic_id)

    with Broker(data_dir=tmp_path) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        assert topics_of(b) == {"kept": 3}
        assert b.call(lambda: b.server.metadata_store.topics["kept"].topic_id) == topic_id
        configs = describe_topic(admin, "kept")
        assert {k: (configs[k].value, configs[k].source) for k in
                ("retention.ms", "cleanup.policy", "retention.bytes", "max.message.bytes")} == {
            "retention.ms": ("60000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value),
            "cleanup.policy": ("compact,delete", ConfigSource.DYNAMIC_TOPIC_CONFIG.value),
            "retention.bytes": ("5000000", ConfigSource.DYNAMIC_BROKER_CONFIG.value),
            "max.message.bytes": ("2000000",
                                  ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)}
        node = ConfigResource(ConfigResource.Type.BROKER, str(NODE))
        broker_configs = dict(result(admin.describe_configs([node])[node]))
        assert (broker_configs["message.max.bytes"].value,
                broker_configs["message.max.bytes"].source) == (
            "2000000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
        assert watermarks(b.bootstrap_servers, "kept", 2) == (5, 8)
        log_config = b.call(lambda: b.server.log_manager.logs[log_key("kept", 2)].config)
        assert (log_config.retention_ms, log_config.retention_bytes,
                log_config.max_message_bytes) == (60000, 5000000, 2000000)
        metadata = admin.list_topics(timeout=TIMEOUT)
        assert {t: len(m.partitions) for t, m in metadata.topics.items()
                if t not in INTERNAL_TOPICS} == {"kept": 3}
