"""SslFactory: the TLS contexts of the broker's SSL listeners and of its inter-broker clients,
from Kafka's ``ssl.*`` settings (Kafka's SslFactory and DefaultSslEngineFactory).

``SslConfig`` holds one listener's settings (the broker resolves each one with its
``listener.name.<listener>.`` override first, see ``BrokerConfig.listener_setting``);
``server_context`` builds the ``ssl.SSLContext`` the listener's connections are wrapped with,
``client_context`` the one the broker connects to other brokers with.

What each setting does (Kafka's names and defaults):

- Key store (the broker's certificate and private key): ``ssl.keystore.type`` PEM or PKCS12.
  PEM: ``ssl.keystore.location``, a file holding the certificate chain and the private key, or
  both inline, ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key``; ``ssl.key.password``
  decrypts an encrypted key (``ssl.keystore.password`` is refused with PEM, as in Kafka).
  PKCS12: ``ssl.keystore.location`` + ``ssl.keystore.password``, read with ``cryptography``.
  JKS (Kafka's default type): no maintained Python library reads Java key stores, so a real
  JKS file is refused with the ``keytool`` command that converts it; a PKCS12 file under type
  JKS is read as PKCS12, as the JDK itself does since Java 9 (keystore.type.compat).
- Trust store (the CAs a peer's certificate must chain to): ``ssl.truststore.type`` PEM
  (``ssl.truststore.location`` or inline ``ssl.truststore.certificates``) or PKCS12 (JKS as
  above). Unset: the system's default CAs (Kafka: the JVM's cacerts).
- ``ssl.client.auth`` (server side): ``none``, ``requested`` (a certificate is asked for and
  verified if sent), ``required`` (mutual TLS: no trusted certificate, no connection).
- ``ssl.enabled.protocols`` (TLSv1.2,TLSv1.3): the lowest and highest listed become the
  context's minimum and maximum version.
- ``ssl.cipher.suites`` (empty: OpenSSL's defaults): OpenSSL names
  (``ECDHE-RSA-AES128-GCM-SHA256``) or the IANA/Java names of the TLS 1.2 AEAD and SHA-2 suites
  (``TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256``); an unknown name is refused. TLS 1.3 suites
  (``TLS_AES_128_GCM_SHA256``, ...) are accepted but cannot be narrowed (Python's ssl has no
  call for it: the three OpenSSL enables stay enabled); a list naming none of them disables
  TLS 1.3, as it does in Java.
- ``ssl.endpoint.identification.algorithm`` (client side): ``https`` (the default) checks the
  peer's host name against its certificate; empty disables the check (the chain is still
  verified).

Secrets in memory: inline PEM and PKCS12 keys reach OpenSSL through an anonymous in-memory file
(``memfd_create``) where the platform has it, else through a 0600 temporary file holding the
key encrypted with a one-time password and deleted as soon as it is read.

Errors: ``InvalidConfigError`` naming the setting, raised when the context is built (at broker
start, as Kafka fails at start-up).

Dynamic update (Kafka's KIP-226 and SslFactory.validateReconfiguration): ``validate_update``
checks a listener's new stores against its current ones: the key store's certificate keeps its
subject DN (unless ``ssl.allow.dn.changes``) and at least its subject alternative names (unless
``ssl.allow.san.changes``), a trust store cannot be added where there was none, and on the
inter-broker listener a TLS handshake in memory must succeed both ways between the current and
the new stores (Kafka's SslEngineValidator: the new certificate must be valid now and chain to
the trust store the other brokers have). ``ReconfigurableSslContext`` is the inter-broker
client's context: new connections take the current stores, open ones keep theirs.
"""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from kafkapy.errors import InvalidConfigError
from kafkapy.network.ssl_principal_mapper import SslPrincipalMapper

__all__ = ["SSL_SETTINGS", "CertificateEntry", "ReconfigurableSslContext", "SslConfig",
           "SslListener", "client_context", "server_context", "ssl_listener", "validate_update"]

# The settings an SslConfig is made of, in the order of its fields.
SSL_SETTINGS = (
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
    "ssl.client.auth", "ssl.enabled.protocols", "ssl.cipher.suites",
    "ssl.endpoint.identification.algorithm", "ssl.principal.mapping.rules",
    "ssl.allow.dn.changes", "ssl.allow.san.changes")

_VERSIONS = {"TLSv1": ssl.TLSVersion.TLSv1, "TLSv1.1": ssl.TLSVersion.TLSv1_1,
             "TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL,
                "required": ssl.CERT_REQUIRED}
_TLS13_SUITES = frozenset({"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                           "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_CCM_SHA256",
                           "TLS_AES_128_CCM_8_SHA256"})
# IANA (Java) names of the TLS 1.2 suites worth enabling -> OpenSSL's names.
_IANA_TO_OPENSSL = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256": "DHE-RSA-AES128-GCM-SHA256",
    "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384": "DHE-RSA-AES256-GCM-SHA384",
    "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "DHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384": "ECDHE-ECDSA-AES256-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384": "ECDHE-RSA-AES256-SHA384",
}
_JKS_MAGIC = b"\xfe\xed\xfe\xed"


def _opt_str(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def _str_tuple(value: object) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    assert isinstance(value, (list, tuple))
    return tuple(str(v) for v in value)


@attrs.frozen
class SslConfig:
    """One listener's (or the inter-broker client's) TLS settings, Kafka's defaults."""

    keystore_type: str = "JKS"
    keystore_location: str | None = None
    keystore_password: str | None = attrs.field(default=None, repr=False)
    key_password: str | None = attrs.field(default=None, repr=False)
    keystore_certificate_chain: str | None = attrs.field(default=None, repr=False)
    keystore_key: str | None = attrs.field(default=None, repr=False)
    truststore_type: str = "JKS"
    truststore_location: str | None = None
    truststore_password: str | None = attrs.field(default=None, repr=False)
    truststore_certificates: str | None = attrs.field(default=None, repr=False)
    client_auth: str = "none"
    enabled_protocols: tuple[str, ...] = ("TLSv1.2", "TLSv1.3")
    cipher_suites: tuple[str, ...] = ()
    endpoint_identification_algorithm: str | None = "https"
    principal_mapping_rules: str = "DEFAULT"
    allow_dn_changes: bool = False
    allow_san_changes: bool = False

    @classmethod
    def from_settings(cls, get: Callable[[str], object]) -> SslConfig:
        """From ``get(kafka_setting_name) -> typed value`` (None: unset), for every name of
        ``SSL_SETTINGS``."""
        return cls(
            keystore_type=str(get("ssl.keystore.type") or "JKS").upper(),
            keystore_location=_opt_str(get("ssl.keystore.location")),
            keystore_password=_opt_str(get("ssl.keystore.password")),
            key_password=_opt_str(get("ssl.key.password")),
            keystore_certificate_chain=_opt_str(get("ssl.keystore.certificate.chain")),
            keystore_key=_opt_str(get("ssl.keystore.key")),
            truststore_type=str(get("ssl.truststore.type") or "JKS").upper(),
            truststore_location=_opt_str(get("ssl.truststore.location")),
            truststore_password=_opt_str(get("ssl.truststore.password")),
            truststore_certificates=_opt_str(get("ssl.truststore.certificates")),
            client_auth=str(get("ssl.client.auth") or "none").lower(),
            enabled_protocols=_str_tuple(get("ssl.enabled.protocols")),
            cipher_suites=_str_tuple(get("ssl.cipher.suites")),
            endpoint_identification_algorithm=_opt_str(
                get("ssl.endpoint.identification.algorithm")),
            principal_mapping_rules=",".join(_str_tuple(get("ssl.principal.mapping.rules")))
            or "DEFAULT",
            allow_dn_changes=get("ssl.allow.dn.changes") is True,
            allow_san_changes=get("ssl.allow.san.changes") is True)

    @property
    def has_keystore(self) -> bool:
        return self.keystore_location is not None or self.keystore_certificate_chain is not None

    @property
    def has_truststore(self) -> bool:
        return self.truststore_location is not None or self.truststore_certificates is not None


@attrs.frozen
class CertificateEntry:
    """What Kafka's CertificateEntries compares of a key store's certificate: its alias (PEM
    key stores have Kafka's one alias ``kafka``), subject and subject alternative names
    (``(GeneralName type, value)``: 2 DNS, 7 IP address, as Java's
    getSubjectAlternativeNames)."""

    alias: str
    subject: str                        # Java's X500Principal form: CN=broker, O=acme
    subject_rfc2253: str                # compared case-insensitively, as Kafka does
    subject_alt_names: frozenset[tuple[int, str]]

    @property
    def sans_text(self) -> str:
        return "[" + ", ".join(f"[{t}, {v}]" for t, v in sorted(self.subject_alt_names)) + "]"


@attrs.frozen
class SslListener:
    """What the socket server needs for one SSL listener: the context its connections are
    wrapped with and how a client certificate becomes a principal; and what a dynamic update
    compares (``config``, the key store certificate ``entry``, the store files' modification
    times ``file_mtimes``)."""

    context: ssl.SSLContext
    principal_mapper: SslPrincipalMapper
    config: SslConfig | None = None
    entry: CertificateEntry | None = None
    file_mtimes: tuple[float | None, ...] = ()

    @property
    def subject(self) -> str:
        return self.entry.subject if self.entry is not None else ""

    def needs_reload(self, cfg: SslConfig) -> bool:
        """The settings changed, or a store file was rewritten in place (Kafka reloads a
        key store whose file changed when its config is altered, even to the same value)."""
        return cfg != self.config or _mtimes(cfg) != self.file_mtimes


def ssl_listener(cfg: SslConfig, listener: str) -> SslListener:
    """``server_context(cfg)`` and the listener's principal mapper.

    Raises:
        InvalidConfigError: see ``server_context``; a mapping rule that does not parse.
    """
    try:
        mapper = SslPrincipalMapper.from_rules(cfg.principal_mapping_rules)
    except ValueError as exc:
        raise InvalidConfigError(f"Invalid value {cfg.principal_mapping_rules!r} for "
                                 f"configuration ssl.principal.mapping.rules of listener "
                                 f"{listener}: {exc}") from exc
    context = server_context(cfg, listener)
    return SslListener(context, mapper, cfg, _certificate_entry(cfg), _mtimes(cfg))


def _mtimes(cfg: SslConfig) -> tuple[float | None, ...]:
    out: list[float | None] = []
    for location in (cfg.keystore_location, cfg.truststore_location):
        try:
            out.append(os.stat(location).st_mtime if location is not None else None)
        except OSError:
            out.append(None)
    return tuple(out)


def _certificate_entry(cfg: SslConfig) -> CertificateEntry:
    """The key store's certificate as Kafka's CertificateEntries sees it (called after
    server_context succeeded, so the store is readable)."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import pkcs12

    alias = "kafka"                     # Kafka's PEM key store alias
    if cfg.keystore_certificate_chain is not None:
        cert = x509.load_pem_x509_certificates(cfg.keystore_certificate_chain.encode())[0]
    else:
        assert cfg.keystore_location is not None
        data = Path(cfg.keystore_location).read_bytes()
        if _store_type("keystore", cfg.keystore_type, cfg.keystore_location, data) == "PEM":
            cert = x509.load_pem_x509_certificates(data)[0]
        else:
            password = cfg.keystore_password.encode() \
                if cfg.keystore_password is not None else None
            store = pkcs12.load_pkcs12(data, password)
            assert store.cert is not None
            cert = store.cert.certificate
            if store.cert.friendly_name:
                alias = store.cert.friendly_name.decode(errors="replace")
    names: set[tuple[int, str]] = set()
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        san = None
    for name in san or ():
        names.add((_GENERAL_NAME_TYPES.get(type(name), 0), str(getattr(name, "value", name))))
    subject = ", ".join(rdn.rfc4514_string() for rdn in reversed(cert.subject.rdns))
    return CertificateEntry(alias, subject, cert.subject.rfc4514_string(), frozenset(names))


def _general_name_types() -> dict[type, int]:
    from cryptography import x509

    return {x509.RFC822Name: 1, x509.DNSName: 2, x509.DirectoryName: 4,
            x509.UniformResourceIdentifier: 6, x509.IPAddress: 7, x509.RegisteredID: 8}


_GENERAL_NAME_TYPES = _general_name_types()


# ------------------------------------------------------------------ dynamic update

_FAILED = "Validation of dynamic config update of SSLFactory failed: "
_CONFIG_EXCEPTION = "org.apache.kafka.common.config.ConfigException: "


def validate_update(old: SslListener, new: SslListener, *, inter_broker: bool) -> None:
    """Kafka's SslFactory.validateReconfiguration of a listener's new stores ``new`` against
    its current ones ``old`` (``new.config`` gives ssl.allow.dn.changes and
    ssl.allow.san.changes, which Kafka reads from the new configs too). On the inter-broker
    listener (``inter_broker``, Kafka's keystoreVerifiableUsingTruststore) the stores must
    also complete TLS handshakes in memory both ways: the current server with a client of
    the new stores, and a server of the new stores with the current client, so a broker
    cannot take a certificate the others (which still trust what it trusted) would refuse,
    or one that is expired or not yet valid.

    Raises:
        InvalidConfigError: "Validation of dynamic config update of SSLFactory failed: ...",
            Kafka's message.
    """
    assert old.config is not None and new.config is not None
    if old.entry is not None and new.entry is not None:
        if not new.config.allow_dn_changes and \
                old.entry.subject_rfc2253.casefold() != new.entry.subject_rfc2253.casefold():
            raise InvalidConfigError(
                f"{_FAILED}{_CONFIG_EXCEPTION}Keystore DistinguishedName does not match:  "
                f"existing={{alias={old.entry.alias}, DN={old.entry.subject}}}, "
                f"new={{alias={new.entry.alias}, DN={new.entry.subject}}}")
        # Kafka's containsAll: the new certificate may add names, not drop any.
        if not new.config.allow_san_changes and \
                not old.entry.subject_alt_names <= new.entry.subject_alt_names:
            raise InvalidConfigError(
                f"{_FAILED}{_CONFIG_EXCEPTION}Keystore SubjectAltNames do not match:  "
                f"existing={{alias={old.entry.alias}, SAN={old.entry.sans_text}}}, "
                f"new={{alias={new.entry.alias}, SAN={new.entry.sans_text}}}")
    if not old.config.has_truststore and new.config.has_truststore:
        raise InvalidConfigError(f"{_FAILED}{_CONFIG_EXCEPTION}Cannot add SSL truststore to an "
                                 f"existing listener for which no truststore was configured.")
    if inter_broker:
        try:
            _handshake(old.context, _validation_client(new.config))
            _handshake(new.context, _validation_client(old.config))
        except ssl.SSLError as exc:
            raise InvalidConfigError(f"{_FAILED}{type(exc).__name__}: {exc}") from exc


def _validation_client(cfg: SslConfig) -> ssl.SSLContext:
    # As Kafka's SslEngineValidator: no host name to check, the chain still verified.
    return client_context(attrs.evolve(cfg, endpoint_identification_algorithm=None))


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> None:
    """A TLS handshake between ``server`` and ``client`` in memory (no socket, no thread).

    Raises:
        ssl.SSLError: either side refused the other (the first error seen).
    """
    c_in, c_out, s_in, s_out = (ssl.MemoryBIO() for _ in range(4))
    client_side = client.wrap_bio(c_in, c_out)
    server_side = server.wrap_bio(s_in, s_out, server_side=True)
    done = {"client": False, "server": False}
    # A TLS 1.2 handshake takes two round trips, TLS 1.3 one and a half: a few steps bound it.
    for _ in range(8):
        for name, side in (("client", client_side), ("server", server_side)):
            if done[name]:
                continue
            try:
                side.do_handshake()
                done[name] = True
            except ssl.SSLWantReadError:
                pass
        s_in.write(c_out.read())
        c_in.write(s_out.read())
        if all(done.values()) and not s_in.pending and not c_in.pending:
            break
    if not all(done.values()):
        raise ssl.SSLError("the TLS handshake did not complete")
    # (TLS 1.3: the client is done before the server has checked its certificate; the
    # server's do_handshake completes only once it has, so a refusal is raised above.)


class ReconfigurableSslContext(ssl.SSLContext):
    """The inter-broker client's TLS context, reconfigured in place when the inter-broker
    listener's stores change (Kafka's reconfigurable client SslFactory, which the replica
    fetchers, the controller's channels and the other inter-broker senders each register).

    Those clients keep the ``ssl.SSLContext`` they were given and wrap each new connection
    with it; this one wraps it with the context ``reconfigure`` last set, so new connections
    take the new key and trust stores and open ones keep theirs. Only ``wrap_socket`` and
    ``wrap_bio`` delegate (what the clients call); ``check_hostname`` and ``verify_mode`` are
    kept equal to the current context's for whoever reads them.
    """

    _current: ssl.SSLContext

    def __new__(cls, context: ssl.SSLContext) -> ReconfigurableSslContext:
        self = super().__new__(cls, ssl.PROTOCOL_TLS_CLIENT)
        self._current = context
        return self

    def __init__(self, context: ssl.SSLContext) -> None:
        # ssl.SSLContext.__init__ takes the protocol; everything is set in reconfigure.
        self.reconfigure(context)

    @property
    def current(self) -> ssl.SSLContext:
        return self._current

    def reconfigure(self, context: ssl.SSLContext) -> None:
        """New connections use ``context`` from now on (one reference swap: safe from any
        thread)."""
        self.check_hostname = False      # before verify_mode can change
        self.verify_mode = context.verify_mode
        self.check_hostname = context.check_hostname
        self._current = context

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        return self._current.wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        return self._current.wrap_bio(*args, **kwargs)


def server_context(cfg: SslConfig, listener: str = "SSL") -> ssl.SSLContext:
    """The TLS context of an SSL listener.

    Raises:
        InvalidConfigError: no key store, an unreadable or mismatched key store or trust
            store, an unknown protocol, cipher suite or ssl.client.auth value.
    """
    if not cfg.has_keystore:
        raise InvalidConfigError(f"SSL key store is not specified for listener {listener}: set "
                                 f"ssl.keystore.location (or ssl.keystore.certificate.chain "
                                 f"and ssl.keystore.key with ssl.keystore.type=PEM), or "
                                 f"listener.name.{listener.lower()}.ssl.keystore.location")
    if cfg.client_auth not in _CLIENT_AUTH:
        raise InvalidConfigError(f"Invalid value {cfg.client_auth!r} for configuration "
                                 f"ssl.client.auth: one of none, requested, required")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    # No renegotiation (Kafka's SSLEngine refuses client-initiated renegotiation too); a
    # per-connection TLS 1.3 ticket is useless to Kafka clients, which never resume.
    ctx.options |= ssl.OP_NO_RENEGOTIATION
    ctx.num_tickets = 0
    _configure(ctx, cfg)
    _load_keystore(ctx, cfg)
    ctx.verify_mode = _CLIENT_AUTH[cfg.client_auth]
    if ctx.verify_mode != ssl.CERT_NONE:
        _load_truststore(ctx, cfg, ssl.Purpose.CLIENT_AUTH)
    return ctx


def client_context(cfg: SslConfig) -> ssl.SSLContext:
    """The TLS context of this broker as a client of another broker's SSL listener: the
    peer's chain verified against the trust store, its host name checked unless
    ssl.endpoint.identification.algorithm is empty, and the key store (if any) offered as
    the client certificate.

    Raises:
        InvalidConfigError: as ``server_context``, or an unknown identification algorithm.
    """
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    algorithm = (cfg.endpoint_identification_algorithm or "").lower()
    if algorithm not in ("", "https"):
        raise InvalidConfigError(f"Invalid value {cfg.endpoint_identification_algorithm!r} "
                                 f"for configuration ssl.endpoint.identification.algorithm: "
                                 f"https or empty")
    ctx.check_hostname = algorithm == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED
    _configure(ctx, cfg)
    _load_truststore(ctx, cfg, ssl.Purpose.SERVER_AUTH)
    if cfg.has_keystore:
        _load_keystore(ctx, cfg)
    return ctx


# ------------------------------------------------------------------ protocols and ciphers


def _configure(ctx: ssl.SSLContext, cfg: SslConfig) -> None:
    unknown = [p for p in cfg.enabled_protocols if p not in _VERSIONS]
    if unknown or not cfg.enabled_protocols:
        raise InvalidConfigError(f"Invalid value {','.join(cfg.enabled_protocols)!r} for "
                                 f"configuration ssl.enabled.protocols: each one of "
                                 f"{', '.join(_VERSIONS)}")
    versions = sorted(_VERSIONS[p] for p in cfg.enabled_protocols)
    if not cfg.cipher_suites:
        ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]
        return
    openssl_names = []
    for name in cfg.cipher_suites:
        if name in _TLS13_SUITES:
            continue
        openssl_name = _IANA_TO_OPENSSL.get(name, name)
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).set_ciphers(openssl_name)
        except ssl.SSLError:
            raise InvalidConfigError(
                f"Invalid value {','.join(cfg.cipher_suites)!r} for configuration "
                f"ssl.cipher.suites: {name} is neither an OpenSSL cipher name nor the IANA "
                f"name of a TLS 1.2 ECDHE/DHE AEAD or SHA-2 suite kafkapy knows") from None
        openssl_names.append(openssl_name)
    if openssl_names:
        ctx.set_ciphers(":".join(openssl_names))
    elif ssl.TLSVersion.TLSv1_3 not in versions:
        raise InvalidConfigError("Invalid value for configuration ssl.cipher.suites: only TLS "
                                 "1.3 suites are listed but TLSv1.3 is not enabled")
    else:
        versions = [ssl.TLSVersion.TLSv1_3]     # no TLS 1.2 suite: TLS 1.3 only
    if not any(name in _TLS13_SUITES for name in cfg.cipher_suites):
        versions = [v for v in versions if v < ssl.TLSVersion.TLSv1_3]   # as in Java
        if not versions:
            raise InvalidConfigError("Invalid value for configuration ssl.cipher.suites: no "
                                     "suite of an enabled protocol")
    ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]


# ------------------------------------------------------------------ key store


def _store_type(kind: str, declared: str, location: str, data: bytes) -> str:
    """PEM or PKCS12; JKS files refused, PKCS12 under type JKS accepted (JDK 9+)."""
    if declared in ("PEM", "PKCS12"):
        return declared
    if declared != "JKS":
        raise InvalidConfigError(f"Invalid value {declared!r} for configuration "
                                 f"ssl.{kind}.type: kafkapy reads PEM and PKCS12")
    if data.startswith(_JKS_MAGIC):
        raise InvalidConfigError(
            f"ssl.{kind}.location {location} is a JKS {kind}, which kafkapy cannot read (no "
            f"maintained Python library reads Java key stores). Convert it to PKCS12 with "
            f"`keytool -importkeystore -srckeystore {location} -srcstoretype JKS "
            f"-destkeystore {kind}.p12 -deststoretype PKCS12` and set ssl.{kind}.type=PKCS12 "
            f"(or use PEM files with ssl.{kind}.type=PEM)")
    if data[:1] == b"\x30":            # a DER SEQUENCE: PKCS12, read as such like the JDK
        return "PKCS12"
    raise InvalidConfigError(f"ssl.{kind}.location {location} is not a JKS or PKCS12 {kind}; "
                             f"set ssl.{kind}.type=PEM for a PEM file")


def _read(kind: str, location: str) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as exc:
        raise InvalidConfigError(f"Cannot read ssl.{kind}.location {location}: "
                                 f"{exc.strerror or exc}") from exc


def _load_keystore(ctx: ssl.SSLContext, cfg: SslConfig) -> None:
    inline = cfg.keystore_certificate_chain is not None or cfg.keystore_key is not None
    if inline:
        if cfg.keystore_type != "PEM":
            raise InvalidConfigError("ssl.keystore.certificate.chain and ssl.keystore.key "
                                     "must only be specified with ssl.keystore.type=PEM")
        if cfg.keystore_location is not None:
            raise InvalidConfigError("ssl.keystore.location cannot be specified with "
                                     "ssl.keystore.certificate.chain/ssl.keystore.key")
        if cfg.keystore_certificate_chain is None or cfg.keystore_key is None:
            raise InvalidConfigError("ssl.keystore.certificate.chain and ssl.keystore.key "
                                     "must be specified together")
        if cfg.keystore_password is not None:
            raise InvalidConfigError("ssl.keystore.password cannot be specified with PEM "
                                     "format, only ssl.key.password may be specified")
        pem = (cfg.keystore_certificate_chain.strip() + "\n"
               + cfg.keystore_key.strip() + "\n").encode()
        _load_chain_pem(ctx, pem, cfg.key_password, "ssl.keystore.certificate.chain")
        return
    assert cfg.keystore_location is not None
    data = _read("keystore", cfg.keystore_location)
    kind = _store_type("keystore", cfg.keystore_type, cfg.keystore_location, data)
    if kind == "PEM":
        if cfg.keystore_password is not None:
            raise InvalidConfigError("ssl.keystore.password cannot be specified with PEM "
                                     "format, only ssl.key.password may be specified")
        try:
            ctx.load_cert_chain(cfg.keystore_location, password=cfg.key_password)
        except (ssl.SSLError, OSError) as exc:
            raise InvalidConfigError(f"Cannot load the key store ssl.keystore.location "
                                     f"{cfg.keystore_location}: {exc}") from exc
        return
    _load_chain_pem(ctx, _pkcs12_to_pem(data, cfg), None, "ssl.keystore.location")


def _pkcs12_to_pem(data: bytes, cfg: SslConfig) -> bytes:
    """The certificate chain and the private key of a PKCS12 key store, as PEM."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    password = cfg.keystore_password.encode() if cfg.keystore_password is not None else None
    try:
        key, cert, chain = pkcs12.load_key_and_certificates(data, password)
    except (ValueError, TypeError) as exc:
        raise InvalidConfigError(f"Cannot read the PKCS12 key store {cfg.keystore_location} "
                                 f"(wrong ssl.keystore.password?): {exc}") from exc
    if key is None or cert is None:
        raise InvalidConfigError(f"The key store {cfg.keystore_location} holds no private key "
                                 f"with its certificate")
    # Unencrypted: it goes only to an in-memory file, or to _load_chain_pem's fallback, which
    # encrypts it before it touches the disk.
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    certs = [cert, *chain]
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs) + key_pem


def _load_chain_pem(ctx: ssl.SSLContext, pem: bytes, password: str | None, setting: str) -> None:
    """``ctx.load_cert_chain`` from PEM bytes (certificates then key), which OpenSSL reads
    only from a file: an anonymous memory file (Linux), else a 0600 temporary file with the
    key encrypted, deleted at once."""
    try:
        if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
            fd = os.memfd_create("kafkapy-keystore", os.MFD_CLOEXEC)
            try:
                _write_all(fd, pem)
                ctx.load_cert_chain(f"/proc/self/fd/{fd}", password=password)
            finally:
                os.close(fd)
            return
        if password is None:
            pem, password = _encrypt_key(pem)
        fd, path = tempfile.mkstemp(prefix="kafkapy-keystore-", suffix=".pem")  # mode 0600
        try:
            _write_all(fd, pem)
            os.close(fd)
            fd = -1
            ctx.load_cert_chain(path, password=password)
        finally:
            if fd != -1:
                os.close(fd)
            os.unlink(path)
    except (ssl.SSLError, OSError) as exc:
        raise InvalidConfigError(f"Cannot load the key store ({setting}): {exc}") from exc


def _encrypt_key(pem: bytes) -> tuple[bytes, str]:
    """The PEM with its private key encrypted under a fresh random password."""
    from cryptography.hazmat.primitives import serialization

    marker = b"-----BEGIN PRIVATE KEY-----"
    at = pem.find(marker)
    if at < 0:
        return pem, ""                    # the key is already encrypted (or absent)
    key = serialization.load_pem_private_key(pem[at:], None)
    password = secrets.token_urlsafe(24)
    encrypted = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.BestAvailableEncryption(password.encode()))
    return pem[:at] + encrypted, password


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# ------------------------------------------------------------------ trust store


def _load_truststore(ctx: ssl.SSLContext, cfg: SslConfig, purpose: ssl.Purpose) -> None:
    try:
        if cfg.truststore_certificates is not None:
            if cfg.truststore_type != "PEM":
                raise InvalidConfigError("ssl.truststore.certificates must only be specified "
                                         "with ssl.truststore.type=PEM")
            if cfg.truststore_location is not None:
                raise InvalidConfigError("ssl.truststore.location cannot be specified with "
                                         "ssl.truststore.certificates")
            ctx.load_verify_locations(cadata=cfg.truststore_certificates)
            return
        if cfg.truststore_location is None:
            ctx.load_default_certs(purpose)
            return
        data = _read("truststore", cfg.truststore_location)
        kind = _store_type("truststore", cfg.truststore_type, cfg.truststore_location, data)
        if kind == "PEM":
            if cfg.truststore_password is not None:
                raise InvalidConfigError("ssl.truststore.password cannot be specified with "
                                         "PEM format")
            ctx.load_verify_locations(cafile=cfg.truststore_location)
            return
        ctx.load_verify_locations(cadata=_pkcs12_certificates(data, cfg))
    except ssl.SSLError as exc:
        raise InvalidConfigError(f"Cannot load the trust store: {exc}") from exc


def _pkcs12_certificates(data: bytes, cfg: SslConfig) -> bytes:
    """The certificates of a PKCS12 trust store, DER concatenated."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    password = cfg.truststore_password.encode() if cfg.truststore_password is not None \
        else None
    try:
        store = pkcs12.load_pkcs12(data, password)
    except (ValueError, TypeError) as exc:
        raise InvalidConfigError(f"Cannot read the PKCS12 trust store "
                                 f"{cfg.truststore_location} (wrong ssl.truststore.password?): "
                                 f"{exc}") from exc
    certs = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certs.append(store.cert.certificate)
    if not certs:
        raise InvalidConfigError(f"The trust store {cfg.truststore_location} holds no "
                                 f"certificate")
    return b"".join(c.public_bytes(serialization.Encoding.DER) for c in certs)
