"""Kafka's broker settings kafkapy accepts but does not act on, end to end: a broker started
from a ``server.properties`` holding a dozen of them (Kerberos, JVM-only SSL, quota windows,
tiered storage, delegation tokens) logs them in one line, confluent-kafka's AdminClient
describes them with Kafka's defaults, sources, read-only flags and sensitivity (the types,
which librdkafka does not expose, over a raw DescribeConfigs v4), IncrementalAlterConfigs of
``sasl.kerberos.min.time.before.relogin`` (what librdkafka's own AlterConfigs test sends)
succeeds and survives a restart, a password one is stored encrypted with
``password.encoder.secret`` and decoded after the restart, and a read-only one is refused with
Kafka's message.

Single broker only: a dynamic change goes through the same AdminManager and MetadataStore
call for these settings as for the others, and the ZooKeeper store writes whatever layer it
is given (tests/server/test_zk_metadata.py covers that path).
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
)

from kafkapy import Broker
from kafkapy.config import KAFKA_SETTINGS, BrokerConfig
from tests.clients.test_admin import raw_describe_broker

TIMEOUT = 10.0
NODE = 1

# name -> (value in server.properties, value described, DescribeConfigs type id, read-only,
# sensitive); types: BOOLEAN 1, STRING 2, INT 3, SHORT 4, LONG 5, DOUBLE 6, LIST 7, CLASS 8,
# PASSWORD 9. Read-only per Kafka 3.9's DynamicBrokerConfig.
STATIC = {
    "sasl.kerberos.service.name": ("kafka", "kafka", 2, False, False),
    "sasl.kerberos.min.time.before.relogin": ("120000", "120000", 5, False, False),
    "sasl.kerberos.ticket.renew.window.factor": ("0.75", "0.75", 6, False, False),
    "sasl.kerberos.principal.to.local.rules": ("RULE:[1:$1], DEFAULT",
                                               "RULE:[1:$1],DEFAULT", 7, False, False),
    "sasl.login.refresh.buffer.seconds": ("120", "120", 4, False, False),
    "ssl.keymanager.algorithm": ("PKIX", "PKIX", 2, False, False),
    "ssl.secure.random.implementation": ("SHA1PRNG", "SHA1PRNG", 2, False, False),
    "alter.log.dirs.replication.quota.window.num": ("12", "12", 3, True, False),
    "alter.log.dirs.replication.quota.window.size.seconds": (" 2 ", "2", 3, True, False),
    "client.quota.callback.class": ("com.example.Quotas", "com.example.Quotas", 8, True,
                                    False),
    "remote.log.storage.system.enable": ("false", "false", 1, True, False),
    "remote.log.manager.thread.pool.size": ("4", "4", 3, True, False),
    "remote.fetch.max.wait.ms": ("700", "700", 3, False, False),
    "delegation.token.secret.key": ("s3cret", None, 9, True, True),
    "password.encoder.secret": ("encoder-secret", None, 9, True, True),
}
# Not set: described with Kafka's default.
DEFAULTS = {
    "sasl.kerberos.kinit.cmd": ("/usr/bin/kinit", 2, False),
    "group.coordinator.threads": ("1", 3, True),
    "remote.log.index.file.cache.total.size.bytes": ("1073741824", 5, False),
    "password.encoder.old.secret": (None, 9, True),
}
RELOGIN = "sasl.kerberos.min.time.before.relogin"
# A dynamic password setting as a listener override. Kafka's dynamic sensitive settings are
# the SSL key and trust store ones, which kafkapy acts on (SETTINGS): this one, on a PLAINTEXT
# listener, is stored and described like any other but used by nothing.
PASSWORD = "listener.name.plaintext.ssl.key.password"
assert not any(k.sensitive and k.update_mode != "read-only" for k in KAFKA_SETTINGS.values())


def write_properties(tmp_path: Path) -> Path:
    lines = ["listeners=PLAINTEXT://localhost:0", f"log.dirs={tmp_path / 'data'}",
             "num.partitions=1", "no.such.setting=kept"]
    lines += [f"{name}={value[0]}" for name, value in STATIC.items()]
    path = tmp_path / "server.properties"
    path.write_text("\n".join(lines) + "\n")
    return path


def describe(admin: AdminClient) -> dict[str, Any]:
    resource = ConfigResource(ConfigResource.Type.BROKER, str(NODE))
    return dict(admin.describe_configs([resource])[resource].result(timeout=TIMEOUT))


def alter(admin: AdminClient, name: str, value: str) -> Any:
    resource = ConfigResource(ConfigResource.Type.BROKER, str(NODE), incremental_configs=[
        ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)])
    return admin.incremental_alter_configs([resource])[resource]


def test_kafka_only_settings_end_to_end(tmp_path: Path,
                                        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kafkapy.config")
    config = BrokerConfig.load(write_properties(tmp_path))
    lines = [r.getMessage() for r in caplog.records if r.name == "kafkapy.config"]
    assert lines == [
        "Unknown broker settings, kept but not used by kafkapy: no.such.setting",
        "Kafka settings kafkapy accepts but does not act on: " + ", ".join(sorted(STATIC))]

    with Broker(config) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        entries = describe(admin)
        for name, (_raw, value, _type, read_only, sensitive) in STATIC.items():
            e = entries[name]
            assert (e.value, e.source, e.is_read_only, e.is_sensitive, e.is_default) == (
                value, ConfigSource.STATIC_BROKER_CONFIG.value, read_only, sensitive,
                False), name
        for name, (value, _type, read_only) in DEFAULTS.items():
            e = entries[name]
            assert (e.value, e.source, e.is_read_only) == (
                value, ConfigSource.DEFAULT_CONFIG.value, read_only), name
        raw = {c.name: c for c in raw_describe_broker(b.bootstrap_servers, str(NODE)).configs}
        for name, (_raw, _value, type_id, _ro, _s) in STATIC.items():
            assert raw[name].config_type == type_id, name
        for name, (_value, type_id, _ro) in DEFAULTS.items():
            assert raw[name].config_type == type_id, name
        relogin = raw[RELOGIN]
        assert [(s.name, s.value, s.source) for s in relogin.synonyms] == [
            (RELOGIN, "120000", 4), (RELOGIN, "60000", 5)]

        # A per-broker setting changes dynamically (librdkafka's AlterConfigs test sends it).
        assert alter(admin, RELOGIN, "90000").result(timeout=TIMEOUT) is None
        e = describe(admin)[RELOGIN]
        assert (e.value, e.source) == ("90000", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
        assert b.call(lambda: dict(b.server.metadata_store.broker_configs)) == {
            str(NODE): {RELOGIN: "90000"}}
        # A password is stored encrypted with password.encoder.secret, never shown.
        assert alter(admin, PASSWORD, "hunter2").result(timeout=TIMEOUT) is None
        e = describe(admin)[PASSWORD]
        assert (e.value, e.is_sensitive, e.source) == (
            None, True, ConfigSource.DYNAMIC_BROKER_CONFIG.value)
        stored = b.call(lambda: dict(b.server.metadata_store.broker_configs[str(NODE)]))
        assert stored[RELOGIN] == "90000" and "hunter2" not in stored[PASSWORD]
        assert "cipherAlgorithm:AES/CBC/PKCS5Padding" in stored[PASSWORD].split(",")
        # A read-only one is refused as Kafka's broker refuses it.
        with pytest.raises(KafkaException) as info:
            alter(admin, "alter.log.dirs.replication.quota.window.num",
                  "20").result(timeout=TIMEOUT)
        err = info.value.args[0]
        assert (err.code(), err.str()) == (
            KafkaError.INVALID_REQUEST,
            "Cannot update these configs dynamically: alter.log.dirs.replication.quota.window.num")
        # A bad value of a dynamic one too, with Kafka's ConfigDef reason.
        with pytest.raises(KafkaException) as info:
            alter(admin, RELOGIN, "soon").result(timeout=TIMEOUT)
        err = info.value.args[0]
        assert (err.code(), err.str()) == (
            KafkaError.INVALID_REQUEST,
            f"Invalid value 'soon' for configuration {RELOGIN}: Not a number of type LONG")

    # The dynamic value survives a restart on the same data.
    with Broker(BrokerConfig.load(tmp_path / "server.properties")) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        entries = describe(admin)
        e = entries[RELOGIN]
        assert (e.value, e.source) == ("90000", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
        assert entries["alter.log.dirs.replication.quota.window.num"].value == "12"
        e = entries[PASSWORD]
        assert (e.value, e.source) == (None, ConfigSource.DYNAMIC_BROKER_CONFIG.value)
        assert b.call(lambda: b.server.config.props[PASSWORD]) == "hunter2"
        # IncrementalAlterConfigs edits the decoded layer: the password is kept as it was.
        assert alter(admin, RELOGIN, "80000").result(timeout=TIMEOUT) is None
        assert b.call(lambda: b.server.config.props[PASSWORD]) == "hunter2"
        # The legacy AlterConfigs (librdkafka's alter_configs) replaces the whole dynamic set.
        resource = ConfigResource(ConfigResource.Type.BROKER, str(NODE),
                                  set_config={RELOGIN: "70000"})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            future = admin.alter_configs([resource])[resource]
        assert future.result(timeout=TIMEOUT) is None
        assert b.call(lambda: dict(b.server.metadata_store.broker_configs)) == {
            str(NODE): {RELOGIN: "70000"}}
        assert PASSWORD not in b.call(lambda: b.server.config.props)
