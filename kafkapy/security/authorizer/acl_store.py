"""Where ACLs are kept, as Kafka keeps them: ZooKeeper in cluster mode (Kafka's ``ZkAclStore``,
``ResourceZNode`` and ``ZkAclChangeStore`` of ``kafka.zk.ZkData`` with
``KafkaZkClient``'s ACL calls), a file in the first log dir for a single broker.

The znodes (under the chroot of ``zookeeper.connect``, if any)::

    /kafka-acl/<Type>/<name>                         LITERAL patterns (Type: Topic, Group,
                                                     Cluster, TransactionalId,
                                                     DelegationToken, User)
    /kafka-acl-extended/prefixed/<Type>/<name>       PREFIXED patterns
        both hold {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",
                                        "operation":"Read","host":"*"}]}
    /kafka-acl-changes/acl_changes_<seq>             "TOPIC:<name>" (a changed LITERAL resource)
    /kafka-acl-extended-changes/acl_changes_<seq>    {"version":1,"resourceType":"TOPIC",
                                                      "name":"<name>","patternType":"PREFIXED"}

A change (``update``) is a read-modify-write of one resource's znode made conditional on the
znode version, retried when another broker changed it in between (Kafka's
``updateResourceAcls``); a resource left with no ACL has its znode deleted; then a sequential
change notification names the resource, and every broker re-reads it (``authorizer``).

The single broker's file, ``__kafkapy_acls.json`` beside ``__kafkapy_metadata.json`` (a file
of its own: the ACLs change on their own schedule, and the log loader ignores plain files),
holds every resource with its ACLs in the same JSON per resource, rewritten atomically (a
temporary file, fsync, rename, fsync of the directory) on every change: a crash leaves the old
or the new set of ACLs, never a mix.

Everything here blocks (file or ZooKeeper I/O): the authorizer calls it from worker threads.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from kafkapy.common.atomic_file import write_atomically
from kafkapy.errors import UnknownServerError
from kafkapy.security.authorizer.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    camel_name,
)
from kafkapy.zk.kafka_zk_client import KafkaZkClient

__all__ = [
    "ACL_CHANGE_PREFIX",
    "ACL_FILE",
    "EXTENDED_ACL_CHANGES_PATH",
    "EXTENDED_ACL_PATH",
    "LITERAL_ACL_CHANGES_PATH",
    "LITERAL_ACL_PATH",
    "AclStore",
    "FileAclStore",
    "ZkAclStore",
    "acls_decode",
    "acls_encode",
    "change_decode",
    "change_encode",
    "resource_path",
]

ACL_FILE = "__kafkapy_acls.json"
LITERAL_ACL_PATH = "/kafka-acl"
EXTENDED_ACL_PATH = "/kafka-acl-extended"
LITERAL_ACL_CHANGES_PATH = "/kafka-acl-changes"
EXTENDED_ACL_CHANGES_PATH = "/kafka-acl-extended-changes"
ACL_CHANGE_PREFIX = "acl_changes_"

Entries = frozenset[AccessControlEntry]
# The resource types that have a folder in ZooKeeper (Kafka's createAclPaths: every type but
# ANY and UNKNOWN).
_STORED_TYPES = tuple(t for t in ResourceType if t not in (ResourceType.ANY,
                                                            ResourceType.UNKNOWN))


def _store_path(pattern_type: PatternType) -> str:
    if pattern_type is PatternType.LITERAL:
        return LITERAL_ACL_PATH
    return f"{EXTENDED_ACL_PATH}/{pattern_type.name.lower()}"


def resource_path(pattern: ResourcePattern) -> str:
    """The znode of ``pattern``'s ACLs (Kafka's ``ResourceZNode.path``)."""
    return f"{_store_path(pattern.pattern_type)}/{camel_name(pattern.resource_type)}/" \
           f"{pattern.name}"


def acls_encode(entries: Entries) -> bytes:
    """Kafka's ``AclEntry.toJsonCompatibleMap`` as compact JSON (sorted: stable bytes)."""
    acls = [{"principal": e.principal, "permissionType": camel_name(e.permission_type),
             "operation": camel_name(e.operation), "host": e.host} for e in sorted(entries)]
    return json.dumps({"version": 1, "acls": acls}, separators=(",", ":")).encode()


def _entries_from(doc: Any) -> Entries:
    return frozenset(
        AccessControlEntry(str(a["principal"]), str(a["host"]),
                           AclOperation.from_string(str(a["operation"])),
                           AclPermissionType.from_string(str(a["permissionType"])))
        for a in doc["acls"])


def acls_decode(data: bytes | None) -> Entries:
    """Kafka's ``AclEntry.fromBytes``; empty for an empty znode. Raises UnknownServerError
    naming the bytes when they are not that JSON."""
    if not data:
        return frozenset()
    try:
        return _entries_from(json.loads(data))
    except (ValueError, KeyError, TypeError) as e:
        raise UnknownServerError(f"not Kafka's ACL JSON: {data!r} ({e})") from e


def change_encode(pattern: ResourcePattern) -> tuple[str, bytes]:
    """(the sequential znode to create, its data) for a change of ``pattern``'s ACLs
    (Kafka's ``LiteralAclChangeStore`` / ``ExtendedAclChangeStore``)."""
    if pattern.pattern_type is PatternType.LITERAL:
        return (f"{LITERAL_ACL_CHANGES_PATH}/{ACL_CHANGE_PREFIX}",
                f"{pattern.resource_type.name}:{pattern.name}".encode())
    return (f"{EXTENDED_ACL_CHANGES_PATH}/{ACL_CHANGE_PREFIX}",
            json.dumps({"version": 1, "resourceType": pattern.resource_type.name,
                        "name": pattern.name, "patternType": pattern.pattern_type.name},
                       separators=(",", ":")).encode())


def change_decode(changes_path: str, data: bytes) -> ResourcePattern:
    """The resource a change notification under ``changes_path`` names. Raises ValueError
    for data that is not a notification."""
    text = data.decode()
    if changes_path == LITERAL_ACL_CHANGES_PATH:
        rtype, sep, name = text.partition(":")
        if not sep:
            raise ValueError(f"expected a string in format ResourceType:ResourceName but got "
                             f"{text}")
        return ResourcePattern(ResourceType.from_string(rtype), name, PatternType.LITERAL)
    event = json.loads(text)
    if int(event.get("version", 1)) > 1:
        raise ValueError(f"Acl change event received for unsupported version: "
                         f"{event['version']}")
    return ResourcePattern(ResourceType.from_string(str(event["resourceType"])),
                           str(event["name"]), PatternType.from_string(str(event["patternType"])))


class AclStore(abc.ABC):
    """Durable ACLs by resource pattern. Every method blocks."""

    @abc.abstractmethod
    def load_all(self) -> dict[ResourcePattern, Entries]:
        """Every resource that has ACLs."""

    @abc.abstractmethod
    def read(self, pattern: ResourcePattern) -> Entries:
        """The ACLs stored now for one resource (empty if none)."""

    @abc.abstractmethod
    def update(self, pattern: ResourcePattern, change: Callable[[Entries], Entries]) -> Entries:
        """Replace ``pattern``'s ACLs with ``change(current)``, durably; the new set. ``change``
        may be called more than once (a lost race is retried with the newer ACLs) and must
        not have other effects than its result."""


class FileAclStore(AclStore):
    """The single broker's ACLs: ``__kafkapy_acls.json`` in ``directory``.

    Raises (constructor): ValueError when the file exists but cannot be read (it is never
    silently replaced: ACLs would be lost)."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / ACL_FILE
        self._acls: dict[ResourcePattern, Entries] = {}
        if self.path.exists():
            try:
                doc = json.loads(self.path.read_text("utf-8"))
                if doc.get("version") != 1:
                    raise ValueError(f"unknown format version {doc.get('version')!r}")
                for r in doc["resources"]:
                    pattern = ResourcePattern(ResourceType.from_string(r["resourceType"]),
                                              str(r["name"]),
                                              PatternType.from_string(r["patternType"]))
                    self._acls[pattern] = _entries_from(r)
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
                raise ValueError(f"{self.path}: cannot read the ACLs: {e}") from e

    def load_all(self) -> dict[ResourcePattern, Entries]:
        return dict(self._acls)

    def read(self, pattern: ResourcePattern) -> Entries:
        return self._acls.get(pattern, frozenset())

    def update(self, pattern: ResourcePattern, change: Callable[[Entries], Entries]) -> Entries:
        current = self.read(pattern)
        new = frozenset(change(current))
        if new == current:
            return current
        before = dict(self._acls)
        if new:
            self._acls[pattern] = new
        else:
            self._acls.pop(pattern, None)
        try:
            self._write()
        except BaseException:
            self._acls = before
            raise
        return new

    def _write(self) -> None:
        resources = []
        for pattern in sorted(self._acls):
            doc = json.loads(acls_encode(self._acls[pattern]))
            resources.append({"resourceType": camel_name(pattern.resource_type),
                              "name": pattern.name, "patternType": pattern.pattern_type.name,
                              **doc})
        data = json.dumps({"version": 1, "resources": resources}, indent=1).encode()
        write_atomically(self.path, data)


class ZkAclStore(AclStore):
    """The cluster's ACLs in ZooKeeper (see the module doc). Raises kazoo's errors when
    ZooKeeper is away, UnknownServerError for a znode that is not Kafka's JSON."""

    def __init__(self, client: KafkaZkClient) -> None:
        self.client = client

    @property
    def zk(self) -> Any:
        return self.client.zk

    def create_paths(self) -> None:
        """Kafka's ``createAclPaths``: every store's folder per resource type, and the two
        change folders."""
        for pattern_type in (PatternType.LITERAL, PatternType.PREFIXED):
            for rtype in _STORED_TYPES:
                self.zk.ensure_path(f"{_store_path(pattern_type)}/{camel_name(rtype)}")
        self.zk.ensure_path(LITERAL_ACL_CHANGES_PATH)
        self.zk.ensure_path(EXTENDED_ACL_CHANGES_PATH)

    def load_all(self) -> dict[ResourcePattern, Entries]:
        out: dict[ResourcePattern, Entries] = {}
        for pattern_type in (PatternType.LITERAL, PatternType.PREFIXED):
            for rtype in _STORED_TYPES:
                folder = f"{_store_path(pattern_type)}/{camel_name(rtype)}"
                try:
                    names = self.zk.get_children(folder)
                except NoNodeError:
                    continue
                for name in names:
                    pattern = ResourcePattern(rtype, name, pattern_type)
                    entries = self.read(pattern)
                    if entries:
                        out[pattern] = entries
        return out

    def _read_versioned(self, pattern: ResourcePattern) -> tuple[Entries, int | None]:
        try:
            data, stat = self.zk.get(resource_path(pattern))
        except NoNodeError:
            return frozenset(), None
        return acls_decode(data), stat.version

    def read(self, pattern: ResourcePattern) -> Entries:
        return self._read_versioned(pattern)[0]

    def update(self, pattern: ResourcePattern, change: Callable[[Entries], Entries]) -> Entries:
        path = resource_path(pattern)
        while True:
            current, version = self._read_versioned(pattern)
            new = frozenset(change(current))
            if new == current:
                return current
            try:
                if version is None:
                    self.zk.create(path, acls_encode(new), makepath=True)
                elif new:
                    self.zk.set(path, acls_encode(new), version=version)
                else:
                    self.zk.delete(path, version=version)
            except (BadVersionError, NodeExistsError, NoNodeError):
                continue            # another broker changed it meanwhile: again, from its ACLs
            break
        changes, data = change_encode(pattern)
        self.zk.create(changes, data, sequence=True, makepath=True)
        return new

