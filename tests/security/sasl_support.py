"""Helpers of the SASL tests: a broker with a PLAINTEXT listener (administration) and a
SASL_PLAINTEXT one (PLAIN users from its JAAS entry, SCRAM users created over the wire), and
client configurations."""

from __future__ import annotations

import socket
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from kafkapy.protocol import decode_response, encode_request
from kafkapy.protocol.codec import Request
from kafkapy.protocol.message_classes import RequestHeader
from kafkapy.testing import BrokerHandle

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_alice="alice-secret" user_admin="admin-secret";')
OAUTHBEARER_JAAS = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule '
                    'required unsecuredLoginStringClaim_sub="admin" '
                    'unsecuredValidatorRequiredScope="kafka";')
SCRAM_PASSWORDS = {"bob": "bob-secret", "carol": "carol-secret"}
TIMEOUT_S = 20


def sasl_broker(data_dir: Path, config: Mapping[str, object] | None = None) -> BrokerHandle:
    """A started broker: PLAINTEXT and SASL_PLAINTEXT listeners on free ports of 127.0.0.1."""
    settings: dict[str, object] = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms":
            "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": OAUTHBEARER_JAAS,
        "offsets.topic.num.partitions": 1,
        **(config or {}),
    }
    return BrokerHandle(data_dir, settings).start()


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


class Peer:
    """A client connection whose every request the test writes."""

    def __init__(self, broker: BrokerHandle, listener: str = "SASL_PLAINTEXT") -> None:
        host, port = endpoint(broker, listener).rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
        self.correlation = 0

    def close(self) -> None:
        self.sock.close()

    def send_frame(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def read_frame(self) -> bytes | None:
        """The next frame, or None when the broker closed the connection."""
        head = self._read(4)
        if head is None:
            return None
        (size,) = struct.unpack(">i", head)
        return self._read(size)

    def _read(self, n: int) -> bytes | None:
        data = b""
        while len(data) < n:
            try:
                chunk = self.sock.recv(n - len(data))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            data += chunk
        return data

    def request(self, api_key: int, version: int, body: Any) -> Any:
        """Send a request and return the decoded response body, or None if closed."""
        self.send(api_key, version, body)
        frame = self.read_frame()
        if frame is None:
            return None
        return decode_response(api_key, version, frame).body

    def send(self, api_key: int, version: int, body: Any) -> None:
        self.correlation += 1
        header = RequestHeader(api_key=api_key, api_version=version,
                               correlation_id=self.correlation, client_id="scripted")
        self.send_frame(encode_request(Request(header, body)))

    def closed_by_broker(self) -> bool:
        return self.read_frame() is None
