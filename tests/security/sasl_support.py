"""Helpers of the SASL tests: a broker with a PLAINTEXT listener (administration) and a
SASL_PLAINTEXT one (PLAIN users from its JAAS entry, SCRAM users created over the wire), and
client configurations."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from kafkapy.testing import BrokerHandle

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_alice="alice-secret" user_admin="admin-secret";')
SCRAM_PASSWORDS = {"bob": "bob-secret", "carol": "carol-secret"}


def sasl_broker(data_dir: Path, **extra: object) -> BrokerHandle:
    """A started broker: PLAINTEXT and SASL_PLAINTEXT listeners on free ports of 127.0.0.1."""
    config: dict[str, object] = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms":
            "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "offsets.topic.num.partitions": 1,
        **extra,
    }
    return BrokerHandle(data_dir, config).start()


def endpoint(broker: BrokerHandle, listener: str) -> str:
    e = broker.server.advertised_endpoints[listener]
    return f"{e.host}:{e.port}"


def admin(broker: BrokerHandle) -> AdminClient:
    """An AdminClient on the PLAINTEXT listener."""
    return AdminClient({"bootstrap.servers": endpoint(broker, "PLAINTEXT")})


def create_scram_users(broker: BrokerHandle) -> None:
    """bob and carol with SCRAM-SHA-256 and SCRAM-SHA-512 credentials, over the wire."""
    upsertions = [UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, 4096),
                                               password.encode())
                  for user, password in SCRAM_PASSWORDS.items()
                  for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)]
    client = admin(broker)     # kept alive until the futures are done
    futures = client.alter_user_scram_credentials(upsertions, request_timeout=30)
    for future in futures.values():
        future.result(timeout=30)


def confluent_config(broker: BrokerHandle, mechanism: str, user: str, password: str
                     ) -> dict[str, object]:
    return {"bootstrap.servers": endpoint(broker, "SASL_PLAINTEXT"),
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
            "sasl.username": user, "sasl.password": password}
