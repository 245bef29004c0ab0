"""ACLs and the decision they make: Kafka's ``org.apache.kafka.common.acl`` /
``org.apache.kafka.common.resource`` value classes (ResourcePattern, AccessControlEntry,
AclBinding and their filters) and the pure logic of ``kafka.security.authorizer.AclAuthorizer
.authorize`` (Kafka 3.x), with no I/O: who keeps the ACLs is ``acl_store``'s business.

Invariants and rules, as Kafka's:

- The enums carry Kafka's wire codes (ResourceType 0-7, PatternType 0-4, AclOperation 0-14,
  AclPermissionType 0-3); ``UNKNOWN`` is what a code this broker does not know decodes to.
- A ``ResourcePattern`` / ``AccessControlEntry`` / ``AclBinding`` is one concrete ACL: its
  resource type is not ANY, its pattern type is LITERAL or PREFIXED (never ANY or MATCH), its
  operation and permission are not ANY. Filters may hold ANY (and MATCH, and ``None`` names).
- A filter matches as Kafka's ``ResourcePatternFilter.matches`` /
  ``AccessControlEntryFilter.matches``: MATCH finds every pattern that would apply to the named
  resource (the literal one, the literal wildcard ``*``, every prefix); ANY and a definite
  pattern type compare names exactly.
- ``authorize``: a super user (``super.users``, semicolon-separated principals) may do
  anything; otherwise the ACLs that apply to the resource are the literal ones of its name,
  the literal wildcard ``*`` of its type and the PREFIXED ones whose name is a prefix of its
  name. None apply: ``allow.everyone.if.no.acl.found`` decides. Else a DENY that matches
  principal (or ``User:*``), host (or ``*``) and operation (or ALL) refuses; otherwise an
  ALLOW that matches grants, where DESCRIBE is implied by READ, WRITE, DELETE and ALTER, and
  DESCRIBE_CONFIGS by ALTER_CONFIGS (implications grant, they never deny).

Everything here is immutable (attrs frozen classes) and safe to share.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import TypeVar

import attrs

__all__ = [
    "ANY_FILTER",
    "CLUSTER_NAME",
    "WILDCARD_HOST",
    "WILDCARD_PRINCIPAL",
    "WILDCARD_RESOURCE",
    "AccessControlEntry",
    "AccessControlEntryFilter",
    "AclBinding",
    "AclBindingFilter",
    "AclIndex",
    "AclOperation",
    "AclPermissionType",
    "AuthorizerPolicy",
    "PatternType",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
    "authorize",
    "authorize_by_resource_type",
    "camel_name",
    "matching_acls",
    "parse_principal",
    "parse_super_users",
    "supported_operations",
]

WILDCARD_RESOURCE = "*"
WILDCARD_PRINCIPAL = "User:*"
WILDCARD_HOST = "*"
CLUSTER_NAME = "kafka-cluster"       # the only name of the CLUSTER resource


_E = TypeVar("_E", bound="_KafkaEnum")


class _KafkaEnum(enum.IntEnum):
    @classmethod
    def from_code(cls: type[_E], code: int) -> _E:
        """The member with Kafka's wire ``code``; UNKNOWN for a code not known here (as
        Kafka's ``fromCode``)."""
        try:
            return cls(code)
        except ValueError:
            return cls.__members__["UNKNOWN"]

    @classmethod
    def from_string(cls: type[_E], text: str) -> _E:
        """By name, case-insensitively, with or without underscores (``TRANSACTIONAL_ID``,
        ``TransactionalId``: Kafka's ``fromString`` and ``SecurityUtils`` camel names).
        Raises ValueError for any other text."""
        key = text.replace("_", "").upper()
        for member in cls:
            if member.name.replace("_", "") == key:
                return member
        raise ValueError(f"{text!r} is not a {cls.__name__}")


class ResourceType(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4

    @property
    def is_specific(self) -> bool:
        return self in (PatternType.LITERAL, PatternType.PREFIXED)


class AclOperation(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


def camel_name(member: enum.Enum) -> str:
    """Kafka's ``SecurityUtils`` names in ZooKeeper: ``TRANSACTIONAL_ID`` -> ``TransactionalId``,
    ``DESCRIBE_CONFIGS`` -> ``DescribeConfigs``, ``ALLOW`` -> ``Allow``."""
    return "".join(part.capitalize() for part in member.name.split("_"))


# Kafka's AclEntry.supportedOperations (ALL is accepted on every resource type besides).
_SUPPORTED: Mapping[ResourceType, frozenset[AclOperation]] = {
    ResourceType.TOPIC: frozenset({AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE,
                                   AclOperation.DESCRIBE, AclOperation.DELETE,
                                   AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
                                   AclOperation.ALTER_CONFIGS}),
    ResourceType.GROUP: frozenset({AclOperation.READ, AclOperation.DESCRIBE,
                                   AclOperation.DELETE}),
    ResourceType.CLUSTER: frozenset({AclOperation.CREATE, AclOperation.CLUSTER_ACTION,
                                     AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
                                     AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
                                     AclOperation.DESCRIBE}),
    ResourceType.TRANSACTIONAL_ID: frozenset({AclOperation.DESCRIBE, AclOperation.WRITE}),
    ResourceType.DELEGATION_TOKEN: frozenset({AclOperation.DESCRIBE}),
    ResourceType.USER: frozenset({AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS}),
}


def supported_operations(resource_type: ResourceType) -> frozenset[AclOperation]:
    """The operations an ACL on ``resource_type`` may name (Kafka's
    ``AclEntry.supportedOperations``), ALL included."""
    return _SUPPORTED.get(resource_type, frozenset()) | {AclOperation.ALL}


def parse_principal(text: str) -> tuple[str, str]:
    """``"User:alice"`` -> ``("User", "alice")`` (Kafka's ``SecurityUtils.parseKafkaPrincipal``).
    Raises ValueError, with Kafka's message, for text without a type."""
    principal_type, sep, name = text.partition(":")
    if not text or not sep:
        raise ValueError(f"expected a string in format principalType:principalName but got "
                         f"{text}")
    return principal_type, name


def parse_super_users(text: str | None) -> frozenset[str]:
    """``super.users``: principals separated by ``;``, blanks around each ignored (Kafka's
    ``AclAuthorizer.configure``). Raises ValueError for an entry that is not a principal."""
    if not text:
        return frozenset()
    out = set()
    for raw in text.split(";"):
        entry = raw.strip()
        if entry:
            principal_type, name = parse_principal(entry)
            out.add(f"{principal_type}:{name}")
    return frozenset(out)


# ============================================================================= values


@attrs.frozen(order=True)
class ResourcePattern:
    """An ACL's resource: ``TOPIC`` named ``t``, LITERAL (``*`` is the wildcard) or PREFIXED.

    Raises ValueError (Kafka's IllegalArgumentException) for ANY as resource type, ANY or MATCH
    as pattern type."""

    resource_type: ResourceType = attrs.field(converter=ResourceType)
    name: str
    pattern_type: PatternType = attrs.field(converter=PatternType)

    def __attrs_post_init__(self) -> None:
        if self.resource_type is ResourceType.ANY:
            raise ValueError("resourceType must not be ANY")
        if self.pattern_type in (PatternType.MATCH, PatternType.ANY):
            raise ValueError(f"patternType must not be {self.pattern_type.name}")

    def __str__(self) -> str:
        return (f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
                f"patternType={self.pattern_type.name})")

    @property
    def is_unknown(self) -> bool:
        return self.resource_type is ResourceType.UNKNOWN or \
            self.pattern_type is PatternType.UNKNOWN


@attrs.frozen(order=True)
class AccessControlEntry:
    """Who (principal ``Type:name``), from where (host, ``*`` for anywhere), what (operation),
    allowed or denied. Raises ValueError for ANY as operation or permission type."""

    principal: str
    host: str
    operation: AclOperation = attrs.field(converter=AclOperation)
    permission_type: AclPermissionType = attrs.field(converter=AclPermissionType)

    def __attrs_post_init__(self) -> None:
        if self.operation is AclOperation.ANY:
            raise ValueError("operation must not be ANY")
        if self.permission_type is AclPermissionType.ANY:
            raise ValueError("permissionType must not be ANY")

    def __str__(self) -> str:
        return (f"(principal={self.principal}, host={self.host}, "
                f"operation={self.operation.name}, "
                f"permissionType={self.permission_type.name})")

    @property
    def is_unknown(self) -> bool:
        return self.operation is AclOperation.UNKNOWN or \
            self.permission_type is AclPermissionType.UNKNOWN


@attrs.frozen(order=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    @property
    def is_unknown(self) -> bool:
        return self.pattern.is_unknown or self.entry.is_unknown

    def __str__(self) -> str:
        return f"(pattern={self.pattern}, entry={self.entry})"


# ============================================================================ filters


@attrs.frozen
class ResourcePatternFilter:
    """Kafka's ResourcePatternFilter: ANY resource type, a ``None`` name (any), ANY or MATCH
    pattern types are allowed here."""

    resource_type: ResourceType = attrs.field(converter=ResourceType)
    name: str | None
    pattern_type: PatternType = attrs.field(converter=PatternType)

    def matches(self, pattern: ResourcePattern) -> bool:
        if self.resource_type is not ResourceType.ANY and \
                self.resource_type is not pattern.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and \
                self.pattern_type is not pattern.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type is PatternType.ANY or self.pattern_type is pattern.pattern_type:
            return self.name == pattern.name
        # MATCH: the patterns that apply to a resource of this name.
        if pattern.pattern_type is PatternType.LITERAL:
            return self.name == pattern.name or pattern.name == WILDCARD_RESOURCE
        if pattern.pattern_type is PatternType.PREFIXED:
            return self.name.startswith(pattern.name)
        return False

    def find_indefinite_field(self) -> str | None:
        """Why this filter may match more than one pattern (None: it names exactly one)."""
        if self.resource_type is ResourceType.ANY:
            return "Resource type is ANY."
        if self.resource_type is ResourceType.UNKNOWN:
            return "Resource type is UNKNOWN."
        if self.name is None:
            return "Resource name is NULL."
        if self.pattern_type is PatternType.MATCH:
            return "Resource pattern type is MATCH."
        if self.pattern_type is PatternType.UNKNOWN:
            return "Resource pattern type is UNKNOWN."
        return None

    @property
    def is_unknown(self) -> bool:
        return self.resource_type is ResourceType.UNKNOWN or \
            self.pattern_type is PatternType.UNKNOWN

    def __str__(self) -> str:
        name = "<any>" if self.name is None else self.name
        return (f"ResourcePattern(resourceType={self.resource_type.name}, name={name}, "
                f"patternType={self.pattern_type.name})")


@attrs.frozen
class AccessControlEntryFilter:
    """Kafka's AccessControlEntryFilter: ``None`` principal / host match any; ANY operation
    and permission type match any."""

    principal: str | None
    host: str | None
    operation: AclOperation = attrs.field(converter=AclOperation)
    permission_type: AclPermissionType = attrs.field(converter=AclPermissionType)

    def matches(self, entry: AccessControlEntry) -> bool:
        if self.principal is not None and self.principal != entry.principal:
            return False
        if self.host is not None and self.host != entry.host:
            return False
        if self.operation is not AclOperation.ANY and self.operation is not entry.operation:
            return False
        return self.permission_type is AclPermissionType.ANY or \
            self.permission_type is entry.permission_type

    @property
    def is_unknown(self) -> bool:
        return self.operation is AclOperation.UNKNOWN or \
            self.permission_type is AclPermissionType.UNKNOWN


@attrs.frozen
class AclBindingFilter:
    pattern_filter: ResourcePatternFilter
    entry_filter: AccessControlEntryFilter

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern_filter.matches(binding.pattern) and \
            self.entry_filter.matches(binding.entry)

    @property
    def is_unknown(self) -> bool:
        return self.pattern_filter.is_unknown or self.entry_filter.is_unknown


ANY_FILTER = AclBindingFilter(
    ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY),
    AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY))


# ============================================================================ authorize


@attrs.frozen
class AuthorizerPolicy:
    """The authorizer's settings: ``super.users`` and ``allow.everyone.if.no.acl.found``."""

    super_users: frozenset[str] = frozenset()
    allow_everyone_if_no_acl_found: bool = False


AclTable = Mapping[ResourcePattern, AbstractSet[AccessControlEntry]]

# An ALLOW of any of these grants the operation asked for (Kafka's AclAuthorizer.authorize:
# Describe is implied by Read, Write, Delete and Alter; DescribeConfigs by AlterConfigs).
_IMPLIED_BY: Mapping[AclOperation, frozenset[AclOperation]] = {
    AclOperation.DESCRIBE: frozenset({AclOperation.DESCRIBE, AclOperation.READ,
                                      AclOperation.WRITE, AclOperation.DELETE,
                                      AclOperation.ALTER}),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.DESCRIBE_CONFIGS,
                                              AclOperation.ALTER_CONFIGS}),
}


class AclIndex:
    """The ACLs arranged for lookups by resource: literal ones by (type, name), prefixed ones
    by type as (prefix, entries) pairs. Built once per change of the ACLs (``build``), it makes
    a decision cost a few dictionary lookups, not objects per prefix."""

    __slots__ = ("literal", "prefixed")

    def __init__(self, literal: dict[tuple[ResourceType, str], frozenset[AccessControlEntry]],
                 prefixed: dict[ResourceType, tuple[tuple[str, frozenset[AccessControlEntry]],
                                                    ...]]) -> None:
        self.literal = literal
        self.prefixed = prefixed

    @classmethod
    def build(cls, acls: AclTable) -> AclIndex:
        literal: dict[tuple[ResourceType, str], frozenset[AccessControlEntry]] = {}
        prefixed: dict[ResourceType, list[tuple[str, frozenset[AccessControlEntry]]]] = {}
        for pattern, entries in acls.items():
            if not entries:
                continue
            if pattern.pattern_type is PatternType.LITERAL:
                literal[pattern.resource_type, pattern.name] = frozenset(entries)
            elif pattern.pattern_type is PatternType.PREFIXED:
                prefixed.setdefault(pattern.resource_type, []).append(
                    (pattern.name, frozenset(entries)))
        return cls(literal, {t: tuple(p) for t, p in prefixed.items()})

    def matching(self, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
        """The ACLs that apply to the resource ``name`` of ``resource_type``: its literal ACLs,
        the literal wildcard's, and the PREFIXED ones whose prefix starts ``name``."""
        out: list[AccessControlEntry] = []
        found = self.literal.get((resource_type, name))
        if found:
            out.extend(found)
        if name != WILDCARD_RESOURCE:
            found = self.literal.get((resource_type, WILDCARD_RESOURCE))
            if found:
                out.extend(found)
        for prefix, entries in self.prefixed.get(resource_type, ()):
            if name.startswith(prefix):
                out.extend(entries)
        return out

    def authorize(self, policy: AuthorizerPolicy, principal: str, host: str,
                  operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        """See ``authorize``."""
        if principal in policy.super_users:
            return True
        entries = self.matching(resource_type, name)
        if not entries:
            return policy.allow_everyone_if_no_acl_found
        if _matching_exists(entries, (operation,), principal, host, AclPermissionType.DENY):
            return False
        allowed_by = _IMPLIED_BY.get(operation, (operation,))
        return _matching_exists(entries, allowed_by, principal, host, AclPermissionType.ALLOW)


def matching_acls(acls: AclTable, resource_type: ResourceType, name: str
                  ) -> list[AccessControlEntry]:
    """The ACLs of ``acls`` that apply to the resource ``name`` of ``resource_type``."""
    return AclIndex.build(acls).matching(resource_type, name)


def _matching_exists(entries: Iterable[AccessControlEntry],
                     operations: AbstractSet[AclOperation] | tuple[AclOperation, ...],
                     principal: str, host: str, permission: AclPermissionType) -> bool:
    return any(entry.permission_type is permission
               and entry.principal in (principal, WILDCARD_PRINCIPAL)
               and (entry.operation in operations or entry.operation is AclOperation.ALL)
               and entry.host in (host, WILDCARD_HOST)
               for entry in entries)


def authorize(acls: AclTable, policy: AuthorizerPolicy, principal: str, host: str,
              operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
    """May ``principal`` connected from ``host`` (an IP address) do ``operation`` on the
    resource ``name`` of ``resource_type``? (See the module doc; the broker decides with an
    ``AclIndex`` kept current, this builds one.)"""
    return AclIndex.build(acls).authorize(policy, principal, host, operation, resource_type,
                                          name)


def authorize_by_resource_type(acls: AclTable, policy: AuthorizerPolicy, principal: str,
                               host: str, operation: AclOperation,
                               resource_type: ResourceType) -> bool:
    """May the principal do ``operation`` on *some* resource of ``resource_type``? (Kafka's
    ``Authorizer.authorizeByResourceType``, used by InitProducerId: an idempotent producer
    needs IDEMPOTENT_WRITE on the cluster or WRITE on any topic.)

    Allowed when an arbitrary name would be (super users; ``allow.everyone.if.no.acl.found``
    with no ACL applying), else denied by a DENY on the literal wildcard ``*``, else allowed by
    an ALLOW (operation or ALL, the principal or ``User:*``, the host or ``*``) on a literal
    name that no DENY on the same name or on a prefix of it covers, or on a prefix that no
    DENY on a prefix of it covers."""
    if authorize(acls, policy, principal, host, operation, resource_type, "hardcode"):
        return True

    def applies(entry: AccessControlEntry, permission: AclPermissionType) -> bool:
        return (entry.permission_type is permission
                and entry.principal in (principal, WILDCARD_PRINCIPAL)
                and entry.operation in (operation, AclOperation.ALL)
                and entry.host in (host, WILDCARD_HOST))

    denied_literal: set[str] = set()
    denied_prefixed: set[str] = set()
    allowed: list[ResourcePattern] = []
    for pattern, entries in acls.items():
        if pattern.resource_type is not resource_type:
            continue
        if any(applies(e, AclPermissionType.DENY) for e in entries):
            (denied_literal if pattern.pattern_type is PatternType.LITERAL
             else denied_prefixed).add(pattern.name)
        if any(applies(e, AclPermissionType.ALLOW) for e in entries):
            allowed.append(pattern)
    if WILDCARD_RESOURCE in denied_literal:
        return False
    for pattern in allowed:
        if pattern.pattern_type is PatternType.LITERAL and pattern.name in denied_literal:
            continue
        if any(pattern.name.startswith(prefix) for prefix in denied_prefixed):
            continue
        return True
    return False
