"""SCRAM credentials in a 3-broker ZooKeeper cluster: created through one broker, stored in
``/config/users/<user>`` as Kafka stores them, and authenticating on another broker's
SASL_PLAINTEXT listener once its /config/changes notification arrives, and after a restart
(read at start); a deletion likewise (one bounded test)."""

from __future__ import annotations

import json
import time

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

import kafkapy
from kafkapy.security.scram import ScramCredential
from kafkapy.zk.zookeeper_server import free_port

TIMEOUT_S = 60


def _authenticates(bootstrap: str, mechanism: str, user: str, password: str) -> bool:
    client = AdminClient({"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
                          "sasl.mechanism": mechanism, "sasl.username": user,
                          "sasl.password": password, "error_cb": lambda _e: None})
    try:
        return bool(client.list_topics(timeout=5).brokers)
    except KafkaException:
        return False


def _wait(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def test_scram_user_created_on_one_broker_authenticates_on_another() -> None:
    cluster = kafkapy.Cluster(3, {"offsets.topic.num.partitions": 1,
                                  "listener.name.sasl_plaintext.sasl.enabled.mechanisms":
                                      "SCRAM-SHA-256,SCRAM-SHA-512"}, timeout=TIMEOUT_S)
    sasl: dict[int, str] = {}
    for broker_id, broker in cluster.brokers.items():
        sasl[broker_id] = f"127.0.0.1:{free_port('127.0.0.1')}"
        cluster.broker_settings[broker_id] = {
            "listeners": f"PLAINTEXT://{broker.bootstrap},SASL_PLAINTEXT://{sasl[broker_id]}"}
    with cluster:
        admin1 = AdminClient({"bootstrap.servers": cluster.brokers[1].bootstrap})
        futures = admin1.alter_user_scram_credentials([
            UserScramCredentialUpsertion("frank", ScramCredentialInfo(
                ScramMechanism.SCRAM_SHA_512, 4096), b"frank-pw")], request_timeout=30)
        futures["frank"].result(timeout=30)

        # stored as Kafka stores it: /config/users/frank, {"version":1,"config":{...}}
        data, _ = cluster._zk().get(cluster._path("/config/users/frank"))
        stored = json.loads(data)
        assert stored["version"] == 1 and set(stored["config"]) == {"SCRAM-SHA-512"}
        assert ScramCredential.from_kafka_string(
            stored["config"]["SCRAM-SHA-512"]).iterations == 4096

        # broker 3 learns of it through the change notification
        _wait(lambda: _authenticates(sasl[3], "SCRAM-SHA-512", "frank", "frank-pw"),
              "broker 3 to authenticate frank")
        assert not _authenticates(sasl[3], "SCRAM-SHA-512", "frank", "wrong")
        admin2 = AdminClient({"bootstrap.servers": cluster.brokers[2].bootstrap})
        _wait(lambda: "frank" in admin2.describe_user_scram_credentials(
            request_timeout=30).result(timeout=30), "broker 2 to describe frank")

        # a restarted broker reads /config/users at start
        cluster.restart(3)
        cluster.wait_for_broker(3)
        _wait(lambda: _authenticates(sasl[3], "SCRAM-SHA-512", "frank", "frank-pw"),
              "restarted broker 3 to authenticate frank")

        # a deletion through broker 2 reaches broker 3 as well
        admin2.alter_user_scram_credentials([UserScramCredentialDeletion(
            "frank", ScramMechanism.SCRAM_SHA_512)], request_timeout=30)["frank"].result(
            timeout=30)
        _wait(lambda: not _authenticates(sasl[3], "SCRAM-SHA-512", "frank", "frank-pw"),
              "broker 3 to forget frank")
