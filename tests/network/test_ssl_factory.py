"""SslFactory: TLS contexts from Kafka's ssl.* settings, checked by real handshakes over a
socket pair (PEM files and inline PEM, PKCS12, trust stores, client auth, protocols, cipher
suites, host name checks) and by the refusals Kafka makes at start-up."""

from __future__ import annotations

import re
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from kafkapy.config import BrokerConfig
from kafkapy.errors import InvalidConfigError
from kafkapy.network.ssl_factory import SslConfig, client_context, server_context
from kafkapy.server.channel_builders import listener_ssl_config
from tests.network.ssl_support import Pki, handshake, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def pem_server(pki: Pki, **settings: object) -> SslConfig:
    return SslConfig(**{"keystore_type": "PEM", "keystore_location": pki.keystore,
                        **settings})  # type: ignore[arg-type]


def client(pki: Pki, **settings: object) -> ssl.SSLContext:
    return client_context(SslConfig(**{"truststore_type": "PEM",
                                       "truststore_location": pki.ca_file,
                                       **settings}))  # type: ignore[arg-type]


def test_kafka_defaults_from_the_broker_config() -> None:
    cfg = listener_ssl_config(BrokerConfig(), "SSL")
    assert cfg == SslConfig()
    assert (cfg.keystore_type, cfg.truststore_type, cfg.client_auth) == ("JKS", "JKS", "none")
    assert cfg.enabled_protocols == ("TLSv1.2", "TLSv1.3")
    assert cfg.endpoint_identification_algorithm == "https"
    assert cfg.principal_mapping_rules == "DEFAULT"


def test_pem_key_store_file_and_pem_trust_store(pki: Pki) -> None:
    version, cert, error = handshake(server_context(pem_server(pki)), client(pki))
    assert (version, cert, error) == ("TLSv1.3", None, None)


def test_inline_pem_with_an_encrypted_key(pki: Pki) -> None:
    key = serialization.load_pem_private_key(pki.broker.private_key_pem.bytes(), None)
    encrypted = key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.BestAvailableEncryption(b"s3cret")).decode()
    chain = "".join(b.bytes().decode() for b in pki.broker.cert_chain_pems)
    cfg = SslConfig(keystore_type="PEM", keystore_certificate_chain=chain,
                    keystore_key=encrypted, key_password="s3cret")
    inline_ca = pki.ca.cert_pem.bytes().decode()
    version, _, error = handshake(server_context(cfg), client_context(
        SslConfig(truststore_type="PEM", truststore_certificates=inline_ca)))
    assert (version, error) == ("TLSv1.3", None)
    with pytest.raises(InvalidConfigError, match="Cannot load the key store"):
        server_context(SslConfig(keystore_type="PEM", keystore_certificate_chain=chain,
                                 keystore_key=encrypted, key_password="wrong"))
    with pytest.raises(InvalidConfigError,
                       match=re.escape("only be specified with ssl.keystore.type")):
        server_context(SslConfig(keystore_certificate_chain=chain, keystore_key=encrypted))


def _pkcs12(pki: Pki, path: Path, password: bytes) -> None:
    key = serialization.load_pem_private_key(pki.broker.private_key_pem.bytes(), None)
    certs = [x509.load_pem_x509_certificate(b.bytes()) for b in pki.broker.cert_chain_pems]
    assert isinstance(key, pkcs12.PKCS12PrivateKeyTypes)
    path.write_bytes(pkcs12.serialize_key_and_certificates(
        b"broker", key, certs[0], certs[1:], serialization.BestAvailableEncryption(password)))


def test_pkcs12_key_store_and_trust_store(pki: Pki, tmp_path: Path) -> None:
    store = tmp_path / "broker.p12"
    _pkcs12(pki, store, b"changeit")
    trust = tmp_path / "trust.p12"
    ca_cert = x509.load_pem_x509_certificate(pki.ca.cert_pem.bytes())
    trust.write_bytes(pkcs12.serialize_java_truststore(
        [pkcs12.PKCS12Certificate(ca_cert, b"ca")],
        serialization.BestAvailableEncryption(b"trustpw")))
    server = server_context(SslConfig(keystore_type="PKCS12", keystore_location=str(store),
                                      keystore_password="changeit"))
    peer = client_context(SslConfig(truststore_type="PKCS12", truststore_location=str(trust),
                                    truststore_password="trustpw"))
    assert handshake(server, peer)[0] == "TLSv1.3"
    # Kafka's default type JKS with a PKCS12 file: read as PKCS12, as the JDK does.
    assert handshake(server_context(SslConfig(keystore_location=str(store),
                                              keystore_password="changeit")), peer)[0]
    with pytest.raises(InvalidConfigError, match=re.escape("wrong ssl.keystore.password")):
        server_context(SslConfig(keystore_type="PKCS12", keystore_location=str(store),
                                 keystore_password="nope"))


def test_a_jks_key_store_is_refused_with_the_way_to_convert_it(tmp_path: Path) -> None:
    jks = tmp_path / "broker.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02" + b"\x00" * 64)
    with pytest.raises(InvalidConfigError, match=r"keytool -importkeystore .* -deststoretype "
                                                 r"PKCS12"):
        server_context(SslConfig(keystore_location=str(jks), keystore_password="x"))


def test_no_key_store_is_refused() -> None:
    with pytest.raises(InvalidConfigError, match="SSL key store is not specified for "
                                                 "listener SSL"):
        server_context(SslConfig())


def test_client_auth_required_and_requested(pki: Pki) -> None:
    cert, key = pki.client("alice")
    required = server_context(pem_server(pki, client_auth="required", truststore_type="PEM",
                                         truststore_location=pki.ca_file))
    with_cert = client(pki)
    with_cert.load_cert_chain(cert, key)
    _, seen, error = handshake(required, with_cert)
    assert error is None and seen is not None
    assert x509.load_der_x509_certificate(seen).subject.rfc4514_string() == \
        "CN=alice,OU=eng,O=acme"
    with pytest.raises((ssl.SSLError, OSError)):
        _, _, error = handshake(required, client(pki))
        assert error is not None      # the server refused (the client may not notice first)
        raise error
    requested = server_context(pem_server(pki, client_auth="requested",
                                          truststore_type="PEM",
                                          truststore_location=pki.ca_file))
    assert handshake(requested, client(pki))[1:] == (None, None)   # no cert: still served


def test_enabled_protocols_and_cipher_suites(pki: Pki) -> None:
    tls12 = server_context(pem_server(pki, enabled_protocols=("TLSv1.2",)))
    assert handshake(tls12, client(pki))[0] == "TLSv1.2"
    # IANA names as Kafka takes them; without a TLS 1.3 suite TLS 1.3 is off, as in Java.
    iana = server_context(pem_server(pki, cipher_suites=(
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",)))
    assert iana.maximum_version == ssl.TLSVersion.TLSv1_2
    assert handshake(iana, client(pki))[0] == "TLSv1.2"
    with pytest.raises(InvalidConfigError, match="NOT_A_SUITE is neither"):
        server_context(pem_server(pki, cipher_suites=("NOT_A_SUITE",)))
    with pytest.raises(InvalidConfigError, match=re.escape("ssl.enabled.protocols")):
        server_context(pem_server(pki, enabled_protocols=("SSLv3",)))


def test_endpoint_identification(pki: Pki) -> None:
    server = server_context(pem_server(pki))
    with pytest.raises(ssl.SSLCertVerificationError, match="Hostname mismatch"):
        handshake(server, client(pki), server_hostname="elsewhere.example")
    # empty: no host name check, the chain is still verified
    assert handshake(server, client(pki, endpoint_identification_algorithm=None),
                     server_hostname="elsewhere.example")[0] == "TLSv1.3"
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(server, client_context(SslConfig(
            truststore_type="PEM", truststore_certificates=_other_ca(),
            endpoint_identification_algorithm=None)))


def _other_ca() -> str:
    import trustme

    return trustme.CA().cert_pem.bytes().decode()
