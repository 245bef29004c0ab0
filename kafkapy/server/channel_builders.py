"""ChannelBuilders: the security of each listener, and of this broker's connections to the
others, from the broker config (Kafka's ChannelBuilders / SslChannelBuilder).

For each listener whose protocol (``listener.security.protocol.map``) is SSL or SASL_SSL, an
``SslListener`` (``kafkapy.network.ssl_factory``) built from the ``ssl.*`` settings, each one
read through ``BrokerConfig.listener_setting`` (the ``listener.name.<listener>.`` override
first, as Kafka's ``ListenerName.configPrefix``). Built once, when the broker starts: a key store
that cannot be read stops the start with ``InvalidConfigError``, as in Kafka. Likewise the
client context of the inter-broker connections when the inter-broker listener is SSL or
SASL_SSL (the SASL part of a SASL_SSL one is ``kafkapy.security.listener_sasl``'s), and
the dynamic update of a listener's key store (``reconfigure_ssl``, Kafka's KIP-226).

A dynamic update of the inter-broker listener's stores also reconfigures the broker's own
connections to the others (Kafka registers each inter-broker client channel builder as a
reconfigurable): ``inter_broker_ssl_context`` is rebuilt from the new settings and swapped
into the ``ReconfigurableSslContext`` every inter-broker client holds.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Mapping

from kafkapy.config import BrokerConfig
from kafkapy.network.ssl_factory import (
    SSL_SETTINGS,
    SslConfig,
    SslListener,
    client_context,
    ssl_listener,
    validate_update,
)

__all__ = ["inter_broker_ssl_context", "listener_ssl_config", "reconfigure_ssl",
           "security_protocols", "ssl_listeners"]

log = logging.getLogger(__name__)

# The protocols whose transport is TLS: SASL_SSL is SASL authentication over the same TLS.
_TLS_PROTOCOLS = ("SSL", "SASL_SSL")


def listener_ssl_config(config: BrokerConfig, listener: str) -> SslConfig:
    """The ``ssl.*`` settings of ``listener``, per-listener overrides applied.

    On a SASL_SSL listener ``ssl.client.auth`` applies only when given with the listener's
    prefix, else it is ``none`` (Kafka's ChannelBuilders, KIP-684: the broker-wide value is
    for SSL listeners; the client is authenticated by SASL).
    """
    values = {name: config.listener_setting(listener, name) for name in SSL_SETTINGS}
    if _sasl_ssl_without_client_auth(config, listener):
        values["ssl.client.auth"] = "none"
    return SslConfig.from_settings(values.__getitem__)


def _sasl_ssl_without_client_auth(config: BrokerConfig, listener: str) -> bool:
    return config.listener_security_protocol_map.get(listener.upper()) == "SASL_SSL" and \
        f"listener.name.{listener.lower()}.ssl.client.auth" not in config.props


def security_protocols(config: BrokerConfig) -> dict[str, str]:
    """Listener name -> security protocol, for the listeners the broker binds."""
    return {e.name: config.listener_protocol(e.name) for e in config.listeners}


def ssl_listeners(config: BrokerConfig) -> dict[str, SslListener]:
    """The TLS context and principal mapper of every SSL and SASL_SSL listener.

    Raises:
        InvalidConfigError: a listener's key store or trust store cannot be used.
    """
    listeners = {}
    for name, protocol in security_protocols(config).items():
        if protocol not in _TLS_PROTOCOLS:
            continue
        if _sasl_ssl_without_client_auth(config, name) and \
                str(config.listener_setting(name, "ssl.client.auth")).lower() != "none":
            log.warning("Broker configuration 'ssl.client.auth' is applied only to SSL listeners: "
                        "listener %s is SASL_SSL, set listener.name.%s.ssl.client.auth to ask "
                        "its clients for certificates", name, name.lower())
        listeners[name] = ssl_listener(listener_ssl_config(config, name), name)
    return listeners


def inter_broker_ssl_context(config: BrokerConfig) -> ssl.SSLContext | None:
    """The TLS context this broker connects to the others with (the controller's channels,
    replica fetchers, AlterPartition, transaction markers), when the inter-broker listener's
    protocol is SSL or SASL_SSL; None for PLAINTEXT and SASL_PLAINTEXT. Kafka's inter-broker
    client takes that listener's settings: its trust store verifies the peers, its key store
    is the client certificate
    (mutual TLS when the peers require it), ssl.endpoint.identification.algorithm applies.

    Raises:
        InvalidConfigError: the listener's trust store or key store cannot be used.
    """
    listener = config.inter_broker_listener_name
    if listener is None or config.listener_protocol(listener) not in _TLS_PROTOCOLS:
        return None
    return client_context(listener_ssl_config(config, listener))


def reconfigure_ssl(config: BrokerConfig, current: Mapping[str, SslListener]
                    ) -> dict[str, SslListener]:
    """Kafka's dynamic SSL update: for each SSL listener whose key or trust store settings
    changed in ``config`` (or whose store file was rewritten in place), a new
    ``SslListener``, validated against the current one (``ssl_factory.validate_update``:
    same subject and alternative names unless ssl.allow.dn.changes / ssl.allow.san.changes,
    and on the inter-broker listener a handshake both ways between the current and the new
    stores). Listeners without a change are left out. When the inter-broker listener is
    among them, the new inter-broker client context is built too, so a store it cannot use
    refuses the update before anything changes.

    Raises:
        InvalidConfigError: a new store cannot be used, or its certificate is for another
            identity, expired, not yet valid or not trusted by the current trust store.
    """
    changed = {}
    inter_broker = config.inter_broker_listener_name
    for name, old in current.items():
        cfg = listener_ssl_config(config, name)
        if not old.needs_reload(cfg):
            continue
        new = ssl_listener(cfg, name)
        validate_update(old, new, inter_broker=name == inter_broker)
        if name == inter_broker:
            inter_broker_ssl_context(config)
        changed[name] = new
    return changed
