"""ClientQuotaStore: the client quota configs of users, client ids, (user, client id) pairs and
IPs, stored as Kafka stores them, and Kafka's rules for their entities and keys.

Entities (Kafka's ``ClientQuotaEntity``): ``user``, ``client-id``, both together, or ``ip``;
a name of None is the type's default entity (``<default>`` in ZooKeeper). Each lives at an
*entity path*, the ``/config/changes`` notification's ``entity_path``: ``users/<user>``,
``users/<user>/clients/<client-id>``, ``clients/<client-id>``, ``ips/<ip>``, names sanitized
as Kafka's ``Sanitizer`` does (URL-encoding, ``*`` as ``%2A``, space as ``%20``).

Keys (Kafka's ``DynamicConfig.User`` / ``Client`` / ``Ip``): ``producer_byte_rate`` and
``consumer_byte_rate`` (LONG), ``request_percentage`` and ``controller_mutation_rate``
(DOUBLE) for user and client-id entities; ``connection_creation_rate`` (INT) for IPs.

Two stores, one interface (``configs``: every entity path's quota keys, ``alter``):

- ``ZkClientQuotaStore`` (cluster mode): ZooKeeper's ``/config/<entity path>`` znodes,
  Kafka's ``{"version":1,"config":{...}}``, each change followed by a
  ``/config/changes/config_change_<seq>`` notification every broker's
  ``ConfigChangeListener`` follows (``reload``). Invariant: a write is a read-modify-write
  of the znode's whole config map, set only if the znode's version is still the one read
  (retried on BadVersion): the same ``/config/users/<user>`` znode also holds SCRAM
  credentials (``SCRAM-SHA-256``/``SCRAM-SHA-512``), written by other code, which a quota
  change must never lose. ``configs`` holds only the quota keys.
- ``FileClientQuotaStore`` (single broker): ``__kafkapy_client_quotas.json`` in the first
  log dir (beside the cluster metadata document), rewritten atomically on every change.

Every mutator is durable when it returns. ``version`` counts the changes seen, so that a
reader (the quota manager) can cache what it derived from ``configs``.
"""

from __future__ import annotations

import abc
import ipaddress
import json
import logging
import socket
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from kafkapy.common.atomic_file import write_atomically
from kafkapy.errors import InvalidRequestError, UnknownServerError
from kafkapy.zk.admin_zk_client import CONFIG_CHANGE_PREFIX
from kafkapy.zk.zk_data import (
    CONFIG_CHANGES_PATH,
    config_change_encode,
    config_decode,
    config_encode,
)

__all__ = ["CLIENT_ID", "CLIENT_QUOTA_KEYS", "DEFAULT_ENTITY", "IP", "IP_QUOTA_KEYS",
           "QUOTA_FILE", "USER", "ClientQuotaStore", "Entity", "FileClientQuotaStore",
           "ZkClientQuotaStore", "desanitize", "entity_of_path", "path_of_entity",
           "quota_keys_of", "sanitize"]

log = logging.getLogger(__name__)

USER, CLIENT_ID, IP = "user", "client-id", "ip"
DEFAULT_ENTITY = "<default>"
QUOTA_FILE = "__kafkapy_client_quotas.json"
_FORMAT_VERSION = 1
_RMW_ATTEMPTS = 20

# Kafka's QuotaConfigs: key -> ConfigDef type.
CLIENT_QUOTA_KEYS: Mapping[str, str] = {
    "producer_byte_rate": "LONG",
    "consumer_byte_rate": "LONG",
    "request_percentage": "DOUBLE",
    "controller_mutation_rate": "DOUBLE",
}
IP_QUOTA_KEYS: Mapping[str, str] = {"connection_creation_rate": "INT"}

Entity = tuple[tuple[str, "str | None"], ...]
"""A ClientQuotaEntity: (entity type, name or None for the default) pairs, sorted by type."""


def sanitize(name: str | None) -> str:
    """Kafka's ``Sanitizer.sanitize`` (None: the default entity)."""
    if name is None:
        return DEFAULT_ENTITY
    # Java's URLEncoder keeps letters, digits and ``.-*_``; Sanitizer then encodes ``*``.
    return quote(name, safe="._-").replace("~", "%7E")


def desanitize(name: str) -> str | None:
    return None if name == DEFAULT_ENTITY else unquote(name)


def quota_keys_of(entity_path: str) -> Mapping[str, str]:
    return IP_QUOTA_KEYS if entity_path.startswith("ips/") else CLIENT_QUOTA_KEYS


def path_of_entity(entity: Iterable[tuple[str, str | None]]) -> str:
    """The entity path of a ClientQuotaEntity, checked as Kafka's
    ``ZkAdminManager.parseAndSanitizeQuotaEntity`` does. Raises InvalidRequestError."""
    parts = list(entity)
    if not parts:
        raise InvalidRequestError("Invalid empty client quota entity")
    names: dict[str, str] = {}
    for entity_type, name in parts:
        if entity_type not in (USER, CLIENT_ID, IP):
            raise InvalidRequestError(f"Unhandled client quota entity type: {entity_type}")
        names[entity_type] = sanitize(name)
        if name is not None and not name:
            raise InvalidRequestError(f"Empty {entity_type} not supported")
    user, client, ip = names.get(USER), names.get(CLIENT_ID), names.get(IP)
    if ip is not None:
        if user is not None or client is not None:
            raise InvalidRequestError("Invalid quota entity combination, IP entity should "
                                      "not be used with user/client ID entity.")
        if ip != DEFAULT_ENTITY and not _valid_ip(desanitize(ip) or ""):
            raise InvalidRequestError(f"{desanitize(ip)} is not a valid IP or resolvable host.")
        return f"ips/{ip}"
    if user is not None and client is not None:
        return f"users/{user}/clients/{client}"
    if user is not None:
        return f"users/{user}"
    assert client is not None
    return f"clients/{client}"


def entity_of_path(entity_path: str) -> Entity:
    """The ClientQuotaEntity stored at ``entity_path``. Raises ValueError for a path that is
    not a quota entity's."""
    parts = entity_path.split("/")
    if len(parts) == 2 and parts[0] == "users":
        return ((USER, desanitize(parts[1])),)
    if len(parts) == 4 and parts[0] == "users" and parts[2] == "clients":
        return ((CLIENT_ID, desanitize(parts[3])), (USER, desanitize(parts[1])))
    if len(parts) == 2 and parts[0] == "clients":
        return ((CLIENT_ID, desanitize(parts[1])),)
    if len(parts) == 2 and parts[0] == "ips":
        return ((IP, desanitize(parts[1])),)
    raise ValueError(f"not a client quota entity path: {entity_path!r}")


def _valid_ip(host: str) -> bool:
    """Kafka's ``DynamicConfig.Ip.isValidIpEntity``: an IP address or a resolvable host."""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False
    return True


def _quota_only(entity_path: str, config: Mapping[str, str]) -> dict[str, str]:
    keys = quota_keys_of(entity_path)
    return {k: v for k, v in config.items() if k in keys}


Update = Callable[[dict[str, str]], None]
"""Changes an entity's whole config map in place (keys it does not own left alone)."""


class ClientQuotaStore(abc.ABC):
    """Durable client quota configs (see the module doc)."""

    blocking = False
    """Whether ``alter`` and ``snapshot`` block (call them from a worker thread)."""

    def __init__(self) -> None:
        self._configs: dict[str, dict[str, str]] = {}
        self.version = 0

    @property
    def configs(self) -> Mapping[str, Mapping[str, str]]:
        """Entity path -> its quota keys (entities without any left out)."""
        return self._configs

    def _set_local(self, entity_path: str, config: Mapping[str, str]) -> None:
        # Copy on write: the ZooKeeper store updates from worker threads while the event
        # loop may be iterating the previous map.
        configs = dict(self._configs)
        quotas = _quota_only(entity_path, config)
        if quotas:
            configs[entity_path] = quotas
        else:
            configs.pop(entity_path, None)
        self._configs = configs
        self.version += 1

    @abc.abstractmethod
    def alter(self, entity_path: str, update: Update) -> dict[str, str]:
        """Apply ``update`` to the entity's config durably; the new config (all keys)."""

    def snapshot(self) -> dict[str, dict[str, str]]:
        """Every entity's quota keys as stored now (blocking in ZooKeeper mode, where it
        reads ZooKeeper as Kafka's describeClientQuotas does)."""
        return {p: dict(c) for p, c in self._configs.items()}


class FileClientQuotaStore(ClientQuotaStore):
    """The single broker's store: one JSON document (see the module doc).

    Raises (constructor): ValueError if the document exists but cannot be read."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.path = Path(directory) / QUOTA_FILE
        self._all: dict[str, dict[str, str]] = {}
        if self.path.exists():
            try:
                doc = json.loads(self.path.read_text("utf-8"))
                if doc.get("version") != _FORMAT_VERSION:
                    raise ValueError(f"unknown format version {doc.get('version')!r}")
                for entity_path, config in doc["entities"].items():
                    entity_of_path(entity_path)
                    self._all[entity_path] = {str(k): str(v) for k, v in config.items()}
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
                raise ValueError(f"{self.path}: cannot read the client quotas: {e}") from e
        for entity_path, config in self._all.items():
            self._set_local(entity_path, config)

    def alter(self, entity_path: str, update: Update) -> dict[str, str]:
        config = dict(self._all.get(entity_path, {}))
        update(config)
        entities = dict(self._all)
        if config:
            entities[entity_path] = config
        else:
            entities.pop(entity_path, None)
        data = json.dumps({"version": _FORMAT_VERSION, "entities": entities}, indent=1,
                          sort_keys=True).encode()
        write_atomically(self.path, data)
        self._all = entities
        self._set_local(entity_path, config)
        return config


class ZkClientQuotaStore(ClientQuotaStore):
    """The ZooKeeper-mode store over a kazoo client (see the module doc). Every method
    blocks (kazoo round trips): call them from worker threads."""

    blocking = True

    def __init__(self, zk: Any) -> None:
        super().__init__()
        self.zk = zk

    def load(self) -> None:
        """Read every quota entity (at start; notifications keep ``configs`` current)."""
        for entity_path, config in self._read_all().items():
            self._set_local(entity_path, config)

    def reload(self, entity_path: str) -> None:
        """A change notification for ``entity_path``: re-read it. Raises ValueError for
        a path that is no quota entity's."""
        entity_of_path(entity_path)
        self._set_local(entity_path, self._read(entity_path)[0])
        log.info("Client quotas of %s are %s (config change notification)", entity_path,
                 self._configs.get(entity_path, {}))

    def snapshot(self) -> dict[str, dict[str, str]]:
        return {p: q for p, c in self._read_all().items() if (q := _quota_only(p, c))}

    def _read(self, entity_path: str) -> tuple[dict[str, str], int | None]:
        """The entity's whole config and its znode's version (None: no znode)."""
        try:
            data, stat = self.zk.get(f"/config/{entity_path}")
        except NoNodeError:
            return {}, None
        return config_decode(data), int(stat.version)

    def _children(self, path: str) -> list[str]:
        try:
            return sorted(self.zk.get_children(path))
        except NoNodeError:
            return []

    def _read_all(self) -> dict[str, dict[str, str]]:
        paths = []
        for user in self._children("/config/users"):
            paths.append(f"users/{user}")
            paths.extend(f"users/{user}/clients/{client}"
                         for client in self._children(f"/config/users/{user}/clients"))
        paths.extend(f"clients/{c}" for c in self._children("/config/clients"))
        paths.extend(f"ips/{ip}" for ip in self._children("/config/ips"))
        out = {}
        for entity_path in paths:
            config, version = self._read(entity_path)
            if version is not None:
                out[entity_path] = config
        return out

    def alter(self, entity_path: str, update: Update) -> dict[str, str]:
        path = f"/config/{entity_path}"
        for _ in range(_RMW_ATTEMPTS):
            config, version = self._read(entity_path)
            update(config)
            data = config_encode(config)
            try:
                if version is None:
                    self.zk.create(path, data, makepath=True)
                else:
                    self.zk.set(path, data, version=version)
            except (BadVersionError, NodeExistsError):
                # Someone else (a SCRAM credential change, another broker) wrote the znode
                # between our read and write: read it again.
                continue
            break
        else:
            raise UnknownServerError(f"{path} kept changing: {_RMW_ATTEMPTS} attempts failed")
        entity_type, _, entity = entity_path.partition("/")
        self.zk.create(f"{CONFIG_CHANGES_PATH}/{CONFIG_CHANGE_PREFIX}",
                       config_change_encode(entity_type, entity), sequence=True, makepath=True)
        self._set_local(entity_path, config)
        return config
