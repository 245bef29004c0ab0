"""SCRAM-SHA-256/512 server (kafkapy.security.scram): RFC 7677's test vector, kafka-python's
ScramClient as an independent client, Kafka's credential string form and error cases."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from kafka.net.sasl.scram import ScramClient

from kafkapy.security.sasl_server import SaslAuthenticationError, SaslException
from kafkapy.security.scram import (
    ScramCredential,
    ScramMechanism,
    ScramSaslServer,
    credential_from_password,
    salted_password,
    username,
)

SHA256 = ScramMechanism.SCRAM_SHA_256
SHA512 = ScramMechanism.SCRAM_SHA_512

# RFC 7677 section 3: user "user", password "pencil".
RFC_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
RFC_CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
RFC_SERVER_FIRST = (b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
RFC_CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
RFC_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def _lookup(creds: dict[tuple[str, ScramMechanism], ScramCredential]):  # type: ignore[no-untyped-def]
    return lambda user, mechanism: creds.get((user, mechanism))


def test_rfc7677_vector() -> None:
    credential = credential_from_password(SHA256, "pencil", salt=RFC_SALT, iterations=4096)
    server = ScramSaslServer(SHA256, _lookup({("user", SHA256): credential}),
                             nonce=lambda: RFC_SERVER_NONCE)
    assert server.evaluate(RFC_CLIENT_FIRST) == RFC_SERVER_FIRST
    assert not server.complete
    assert server.evaluate(RFC_CLIENT_FINAL) == RFC_SERVER_FINAL
    assert server.complete and server.authorization_id == "user"


@pytest.mark.parametrize("mechanism", [SHA256, SHA512])
def test_kafka_python_client(mechanism: ScramMechanism) -> None:
    credential = credential_from_password(mechanism, "s3cret", iterations=8192)
    server = ScramSaslServer(mechanism, _lookup({("alice", mechanism): credential}))
    client = ScramClient("alice", "s3cret", mechanism.value)
    client.process_server_first_message(server.evaluate(client.first_message()))
    final = server.evaluate(client.final_message())
    client.process_server_final_message(final)      # raises on a wrong server signature
    assert server.complete and server.authorization_id == "alice"


def test_wrong_password_is_a_sasl_exception() -> None:
    credential = credential_from_password(SHA512, "right")
    server = ScramSaslServer(SHA512, _lookup({("alice", SHA512): credential}))
    client = ScramClient("alice", "wrong", SHA512.value)
    client.process_server_first_message(server.evaluate(client.first_message()))
    with pytest.raises(SaslException, match="Invalid client credentials"):
        server.evaluate(client.final_message())
    assert not server.complete


def test_unknown_user_and_mechanism_without_credential() -> None:
    credential = credential_from_password(SHA256, "pw")
    server = ScramSaslServer(SHA512, _lookup({("alice", SHA256): credential}))
    with pytest.raises(SaslException, match="Authentication failed: Invalid user credentials"):
        server.evaluate(b"n,,n=alice,r=abc")


def test_authorization_id_must_be_the_user() -> None:
    credential = credential_from_password(SHA256, "pw")
    server = ScramSaslServer(SHA256, _lookup({("alice", SHA256): credential}))
    with pytest.raises(SaslAuthenticationError, match="authorization id that is different"):
        server.evaluate(b"n,a=bob,n=alice,r=abc")


def test_too_few_iterations_refused() -> None:
    credential = credential_from_password(SHA256, "pw", iterations=1000)
    server = ScramSaslServer(SHA256, _lookup({("alice", SHA256): credential}))
    with pytest.raises(SaslException, match="Iterations 1000 is less than the minimum 4096"):
        server.evaluate(b"n,,n=alice,r=abc")


@pytest.mark.parametrize("message", [b"y,,n=alice,r=abc", b"n,,n=alice", b"garbage",
                                     b"n,,n=al,ice,r=abc"])
def test_malformed_client_first(message: bytes) -> None:
    server = ScramSaslServer(SHA256, lambda user, mechanism: None)
    with pytest.raises(SaslException, match="Invalid SCRAM client first message format"):
        server.evaluate(message)


def test_wrong_nonce_in_final() -> None:
    credential = credential_from_password(SHA256, "pw")
    server = ScramSaslServer(SHA256, _lookup({("alice", SHA256): credential}),
                             nonce=lambda: "server")
    server.evaluate(b"n,,n=alice,r=client")
    with pytest.raises(SaslException, match="Invalid client nonce"):
        server.evaluate(b"c=biws,r=clientOTHER,p=AAAA")


def test_extensions_ignored_token_auth_refused() -> None:
    credential = credential_from_password(SHA256, "pw")
    lookup = _lookup({("alice", SHA256): credential})
    assert ScramSaslServer(SHA256, lookup).evaluate(b"n,,n=alice,r=abc,foo=bar")
    with pytest.raises(SaslException, match="Token Authentication failed"):
        ScramSaslServer(SHA256, lookup).evaluate(b"n,,n=alice,r=abc,tokenauth=true")


def test_sasl_name_escapes() -> None:
    assert username("a=2Cb=3Dc") == "a,b=c"


def test_credential_string_round_trip() -> None:
    credential = credential_from_password(SHA512, "pw", salt=b"salty", iterations=4096)
    text = credential.to_kafka_string()
    assert text.startswith("salt=c2FsdHk=,stored_key=") and text.endswith(",iterations=4096")
    assert ScramCredential.from_kafka_string(text) == credential
    with pytest.raises(ValueError):
        ScramCredential.from_kafka_string("salt=c2FsdHk=,iterations=4096")


def test_old_librdkafka_doubled_nonce_accepted() -> None:
    """librdkafka < 2.6.1 prefixes the echoed nonce with its own once more; Kafka 3.8.1-3.9
    accept it (the server's random part is still checked)."""
    credential = credential_from_password(SHA256, "pencil", salt=RFC_SALT, iterations=4096)
    server = ScramSaslServer(SHA256, _lookup({("user", SHA256): credential}),
                             nonce=lambda: "server")
    server.evaluate(b"n,,n=user,r=client")
    client_key = hmac.new(salted_password(SHA256, b"pencil", RFC_SALT, 4096), b"Client Key",
                          "sha256").digest()
    without_proof = "c=biws,r=clientclientserver"
    auth = f"n=user,r=client,r=clientserver,s={base64.b64encode(RFC_SALT).decode()}," \
           f"i=4096,{without_proof}".encode()
    signature = hmac.new(hashlib.sha256(client_key).digest(), auth, "sha256").digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True)))
    assert server.evaluate(f"{without_proof},p={proof.decode()}".encode()).startswith(b"v=")
    assert server.complete
