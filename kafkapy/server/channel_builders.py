"""ChannelBuilders: the security of each listener, and of this broker's connections to the
others, from the broker config (Kafka's ChannelBuilders / SslChannelBuilder).

For each listener whose protocol (``listener.security.protocol.map``) is SSL, an
``SslListener`` (``kafkapy.network.ssl_factory``) built from the ``ssl.*`` settings, each one
read through ``BrokerConfig.listener_setting`` (the ``listener.name.<listener>.`` override
first, as Kafka's ``ListenerName.configPrefix``). Built once, when the broker starts: a key store
that cannot be read stops the start with ``InvalidConfigError``, as in Kafka. Likewise the
client context of the inter-broker connections when the inter-broker listener is SSL, and
the dynamic update of a listener's key store (``reconfigure_ssl``, Kafka's KIP-226).
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping

from kafkapy.config import BrokerConfig
from kafkapy.network.ssl_factory import (
    SSL_SETTINGS,
    SslConfig,
    SslListener,
    client_context,
    ssl_listener,
)

__all__ = ["inter_broker_ssl_context", "listener_ssl_config", "reconfigure_ssl",
           "security_protocols", "ssl_listeners"]


def listener_ssl_config(config: BrokerConfig, listener: str) -> SslConfig:
    """The ``ssl.*`` settings of ``listener``, per-listener overrides applied."""
    values = {name: config.listener_setting(listener, name) for name in SSL_SETTINGS}
    return SslConfig.from_settings(values.__getitem__)


def security_protocols(config: BrokerConfig) -> dict[str, str]:
    """Listener name -> security protocol, for the listeners the broker binds."""
    return {e.name: config.listener_protocol(e.name) for e in config.listeners}


def ssl_listeners(config: BrokerConfig) -> dict[str, SslListener]:
    """The TLS context and principal mapper of every SSL listener.

    Raises:
        InvalidConfigError: a listener's key store or trust store cannot be used.
    """
    return {name: ssl_listener(listener_ssl_config(config, name), name)
            for name, protocol in security_protocols(config).items() if protocol == "SSL"}


def inter_broker_ssl_context(config: BrokerConfig) -> ssl.SSLContext | None:
    """The TLS context this broker connects to the others with (the controller's channels,
    replica fetchers, AlterPartition, transaction markers), when the inter-broker listener's
    protocol is SSL; None for PLAINTEXT. Kafka's inter-broker client takes that listener's
    settings: its trust store verifies the peers, its key store is the client certificate
    (mutual TLS when the peers require it), ssl.endpoint.identification.algorithm applies.

    Raises:
        InvalidConfigError: the listener's trust store or key store cannot be used.
    """
    listener = config.inter_broker_listener_name
    if listener is None or config.listener_protocol(listener) != "SSL":
        return None
    return client_context(listener_ssl_config(config, listener))


def reconfigure_ssl(config: BrokerConfig, current: Mapping[str, SslListener]
                    ) -> dict[str, SslListener]:
    """Kafka's dynamic SSL update: for each SSL listener whose key or trust store settings
    changed in ``config`` (or whose store file was rewritten in place), a new
    ``SslListener``, checked against the current one (same certificate subject and
    alternative names). Listeners without a change are left out.

    Raises:
        InvalidConfigError: a new store cannot be used, or its certificate is for another
            identity.
    """
    changed = {}
    for name, old in current.items():
        cfg = listener_ssl_config(config, name)
        if not old.needs_reload(cfg):
            continue
        new = ssl_listener(cfg, name)
        old.check_update(new, name)
        changed[name] = new
    return changed
