"""A SASL listener's settings turned into the authenticator of each of its connections.

Per listener (``BrokerConfig.listener_setting``, Kafka's ``listener.name.<l>.`` prefix):
``sasl.enabled.mechanisms``, ``sasl.server.max.receive.size``,
``connection.failed.authentication.delay.ms``, ``connections.max.reauth.ms`` (also per
mechanism: ``listener.name.<l>.<mechanism>.connections.max.reauth.ms``); PLAIN users from the
JAAS entry ``listener.name.<l>.plain.sasl.jaas.config`` (else
``listener.name.<l>.sasl.jaas.config``, else ``sasl.jaas.config``); OAUTHBEARER's unsecured
validator options from its ``OAuthBearerLoginModule`` entry, found the same way. SCRAM
credentials come from the broker's ``CredentialCache``.

Checked once, when the broker starts (``sasl_authenticator_factory`` raises
``InvalidConfigError``): every enabled mechanism must be one kafkapy implements (GSSAPI,
Kafka's default, is not: a SASL listener must set ``sasl.enabled.mechanisms``), and PLAIN
and OAUTHBEARER need a JAAS entry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kafkapy.config import BrokerConfig
from kafkapy.errors import InvalidConfigError, KafkaError
from kafkapy.network.authenticator import Authenticator, AuthenticatorFactory
from kafkapy.security.authenticator import SaslServerAuthenticator
from kafkapy.security.credential_cache import CredentialCache
from kafkapy.security.jaas import JaasModule, parse_jaas_config
from kafkapy.security.oauthbearer import OAUTHBEARER, OAuthBearerSaslServer, UnsecuredJwsValidator
from kafkapy.security.plain import PLAIN, PlainSaslServer, plain_users
from kafkapy.security.sasl_client import Exchange, client_authenticator
from kafkapy.security.sasl_server import SaslServer
from kafkapy.security.scram import ScramMechanism, ScramSaslServer

__all__ = ["SUPPORTED_MECHANISMS", "inter_broker_authenticator", "jaas_config_text",
           "sasl_authenticator_factory"]

SUPPORTED_MECHANISMS = (PLAIN, ScramMechanism.SCRAM_SHA_256.value,
                        ScramMechanism.SCRAM_SHA_512.value, OAUTHBEARER)


def jaas_config_text(config: BrokerConfig, listener: str, mechanism: str) -> str | None:
    """The JAAS text for ``mechanism`` on ``listener``, most specific key first."""
    key = f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
    text = config.props.get(key)
    if text is not None:
        return text
    value = config.listener_setting(listener, "sasl.jaas.config")
    return None if value is None else str(value)


def inter_broker_authenticator(config: BrokerConfig
                               ) -> Callable[[Exchange], Awaitable[None]] | None:
    """How this broker authenticates to the others when its inter-broker listener uses SASL
    (None otherwise), as Kafka: mechanism ``sasl.mechanism.inter.broker.protocol``, which the
    listener must enable, and the ``username`` / ``password`` options of that mechanism's JAAS
    entry on the listener.

    Raises:
        InvalidConfigError: the mechanism is not enabled there, not one kafkapy's brokers
            speak (PLAIN, SCRAM), or its JAAS entry has no username and password.
    """
    listener = config.inter_broker_listener_name
    if listener is None or not config.listener_security_protocol_map.get(
            listener, "").startswith("SASL_"):
        return None
    mechanism = str(config.listener_setting(listener, "sasl.mechanism.inter.broker.protocol"))
    enabled = config.listener_setting(listener, "sasl.enabled.mechanisms")
    assert isinstance(enabled, list)
    if mechanism not in enabled:
        raise InvalidConfigError(
            f"sasl.mechanism.inter.broker.protocol must be included in "
            f"sasl.enabled.mechanisms when SASL is used for inter-broker communication "
            f"({mechanism} is not enabled on listener {listener}: {','.join(enabled)})")
    options = _jaas(config, listener, mechanism).options
    username, password = options.get("username"), options.get("password")
    if not username or password is None:
        raise InvalidConfigError(
            f"The JAAS configuration for {mechanism} on the inter-broker listener {listener} "
            f"needs username and password options: this broker's credentials")
    try:
        return client_authenticator(mechanism, username, password)
    except ValueError as exc:
        raise InvalidConfigError(f"Invalid value {mechanism!r} for configuration "
                                 f"sasl.mechanism.inter.broker.protocol: {exc}") from exc


def _jaas(config: BrokerConfig, listener: str, mechanism: str) -> JaasModule:
    """The listener's JAAS entry for ``mechanism``; Kafka requires one per enabled mechanism
    it reads options from."""
    key = f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
    text = jaas_config_text(config, listener, mechanism)
    if text is None:
        raise InvalidConfigError(
            f"Could not find a JAAS configuration for SASL mechanism {mechanism} on listener "
            f"{listener}: set {key}")
    return parse_jaas_config(text, key)


def sasl_authenticator_factory(config: BrokerConfig, listener: str,
                               credentials: CredentialCache, *,
                               max_api_versions_version: int = 4,
                               error_response: Callable[[bytes | bytearray, KafkaError],
                                                        bytes | None] | None = None
                               ) -> AuthenticatorFactory:
    """The authenticator factory of SASL listener ``listener``.

    Raises:
        InvalidConfigError: a mechanism kafkapy does not implement, or PLAIN without users.
    """
    enabled = config.listener_setting(listener, "sasl.enabled.mechanisms")
    assert isinstance(enabled, list)
    unsupported = [m for m in enabled if m not in SUPPORTED_MECHANISMS]
    if unsupported:
        raise InvalidConfigError(
            f"Invalid value {','.join(enabled)!r} for configuration sasl.enabled.mechanisms "
            f"of listener {listener}: kafkapy does not support SASL mechanism "
            f"{', '.join(unsupported)} (it implements {', '.join(SUPPORTED_MECHANISMS)}; "
            f"GSSAPI, Kafka's default, needs Kerberos)")
    users: dict[str, str] = {}
    if PLAIN in enabled:
        users = plain_users(_jaas(config, listener, PLAIN).options)
    validator: UnsecuredJwsValidator | None = None
    if OAUTHBEARER in enabled:
        options = _jaas(config, listener, OAUTHBEARER).options
        try:
            validator = UnsecuredJwsValidator(options)
        except ValueError as exc:
            raise InvalidConfigError(f"Invalid unsecuredValidator option in the OAUTHBEARER "
                                     f"JAAS configuration of listener {listener}: {exc}") from exc
    reauth_ms: dict[str, int] = {}
    for mechanism in enabled:
        raw = config.props.get(f"listener.name.{listener.lower()}.{mechanism.lower()}."
                               f"connections.max.reauth.ms")
        value = int(raw.strip()) if raw is not None else \
            config.listener_setting(listener, "connections.max.reauth.ms")
        assert isinstance(value, int)
        reauth_ms[mechanism] = value
    max_receive = config.listener_setting(listener, "sasl.server.max.receive.size")
    delay_ms = config.listener_setting(listener, "connection.failed.authentication.delay.ms")
    assert isinstance(max_receive, int) and isinstance(delay_ms, int)

    def new_server(mechanism: str) -> SaslServer:
        if mechanism == PLAIN:
            return PlainSaslServer(users)
        if mechanism == OAUTHBEARER:
            assert validator is not None
            return OAuthBearerSaslServer(validator)
        scram = ScramMechanism.from_name(mechanism)
        assert scram is not None
        return ScramSaslServer(scram, credentials.get)

    def factory(connection_id: str, client_host: str) -> Authenticator:
        return SaslServerAuthenticator(enabled_mechanisms=enabled, new_server=new_server,
                                       max_receive_size=max_receive, failed_delay_ms=delay_ms,
                                       max_api_versions_version=max_api_versions_version,
                                       connection_id=connection_id, client_host=client_host,
                                       error_response=error_response, reauth_ms=reauth_ms)

    return factory
