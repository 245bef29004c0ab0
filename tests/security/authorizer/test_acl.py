"""The pure ACL logic (kafkapy.security.authorizer.acl): Kafka's filter matching and
AclAuthorizer.authorize, as a matrix of cases (no broker, no mocks)."""

from __future__ import annotations

from typing import Any

import pytest

from kafkapy.security.authorizer.acl import (
    ANY_FILTER,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AuthorizerPolicy,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    authorize,
    camel_name,
    parse_principal,
    parse_super_users,
    supported_operations,
)

T, G, C = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
Op = AclOperation
HOST = "10.0.0.1"


def table(*acls: tuple[ResourceType, str, PatternType, str, str, AclOperation,
                        AclPermissionType]
          ) -> dict[ResourcePattern, set[AccessControlEntry]]:
    out: dict[ResourcePattern, set[AccessControlEntry]] = {}
    for rtype, name, ptype, principal, host, op, perm in acls:
        out.setdefault(ResourcePattern(rtype, name, ptype), set()).add(
            AccessControlEntry(principal, host, op, perm))
    return out


ALICE_READ_T = (T, "t", LIT, "User:alice", "*", Op.READ, ALLOW)

# (acls, principal, host, operation, resource name, expected)
CASES = [
    # a literal ALLOW grants its operation on that name only
    ([ALICE_READ_T], "User:alice", HOST, Op.READ, "t", True),
    ([ALICE_READ_T], "User:alice", HOST, Op.WRITE, "t", False),
    ([ALICE_READ_T], "User:bob", HOST, Op.READ, "t", False),
    ([ALICE_READ_T], "User:alice", HOST, Op.READ, "t2", False),
    # implied operations: Describe by Read/Write/Delete/Alter, DescribeConfigs by AlterConfigs
    ([ALICE_READ_T], "User:alice", HOST, Op.DESCRIBE, "t", True),
    ([(T, "t", LIT, "User:alice", "*", Op.WRITE, ALLOW)], "User:alice", HOST, Op.DESCRIBE, "t",
     True),
    ([(T, "t", LIT, "User:alice", "*", Op.DELETE, ALLOW)], "User:alice", HOST, Op.DESCRIBE, "t",
     True),
    ([(T, "t", LIT, "User:alice", "*", Op.ALTER, ALLOW)], "User:alice", HOST, Op.DESCRIBE, "t",
     True),
    ([(T, "t", LIT, "User:alice", "*", Op.CREATE, ALLOW)], "User:alice", HOST, Op.DESCRIBE, "t",
     False),
    ([(T, "t", LIT, "User:alice", "*", Op.ALTER_CONFIGS, ALLOW)], "User:alice", HOST,
     Op.DESCRIBE_CONFIGS, "t", True),
    ([(T, "t", LIT, "User:alice", "*", Op.DESCRIBE, ALLOW)], "User:alice", HOST, Op.READ, "t",
     False),
    # ALL grants everything
    ([(T, "t", LIT, "User:alice", "*", Op.ALL, ALLOW)], "User:alice", HOST, Op.DELETE, "t", True),
    # a DENY wins over any ALLOW, also through ALL; an implication never denies
    ([ALICE_READ_T, (T, "t", LIT, "User:alice", "*", Op.READ, DENY)], "User:alice", HOST,
     Op.READ, "t", False),
    ([ALICE_READ_T, (T, "*", LIT, "User:*", "*", Op.ALL, DENY)], "User:alice", HOST, Op.READ,
     "t", False),
    ([(T, "t", LIT, "User:alice", "*", Op.ALL, ALLOW),
      (T, "t", LIT, "User:alice", "*", Op.READ, DENY)], "User:alice", HOST, Op.DESCRIBE, "t",
     True),
    # the wildcard principal and the wildcard resource
    ([(T, "t", LIT, "User:*", "*", Op.READ, ALLOW)], "User:bob", HOST, Op.READ, "t", True),
    ([(T, "*", LIT, "User:alice", "*", Op.READ, ALLOW)], "User:alice", HOST, Op.READ, "any",
     True),
    ([(G, "*", LIT, "User:alice", "*", Op.READ, ALLOW)], "User:alice", HOST, Op.READ, "t",
     False),
    # prefixed: every name starting with it, no other
    ([(T, "sales-", PRE, "User:alice", "*", Op.WRITE, ALLOW)], "User:alice", HOST, Op.WRITE,
     "sales-eu", True),
    ([(T, "sales-", PRE, "User:alice", "*", Op.WRITE, ALLOW)], "User:alice", HOST, Op.WRITE,
     "sales-", True),
    ([(T, "sales-", PRE, "User:alice", "*", Op.WRITE, ALLOW)], "User:alice", HOST, Op.WRITE,
     "sales", False),
    ([(T, "sales-", PRE, "User:alice", "*", Op.WRITE, ALLOW),
      (T, "sal", PRE, "User:alice", "*", Op.WRITE, DENY)], "User:alice", HOST, Op.WRITE,
     "sales-eu", False),
    # a literal "*" with PREFIXED pattern is a prefix, not a wildcard
    ([(T, "*", PRE, "User:alice", "*", Op.READ, ALLOW)], "User:alice", HOST, Op.READ, "t", False),
    # hosts
    ([(T, "t", LIT, "User:alice", HOST, Op.READ, ALLOW)], "User:alice", HOST, Op.READ, "t", True),
    ([(T, "t", LIT, "User:alice", "10.0.0.2", Op.READ, ALLOW)], "User:alice", HOST, Op.READ,
     "t", False),
    ([ALICE_READ_T, (T, "t", LIT, "User:alice", HOST, Op.READ, DENY)], "User:alice", HOST,
     Op.READ, "t", False),
    ([ALICE_READ_T, (T, "t", LIT, "User:alice", "10.9.9.9", Op.READ, DENY)], "User:alice",
     HOST, Op.READ, "t", True),
    # no ACL for the resource at all: allow.everyone.if.no.acl.found (false here)
    ([], "User:alice", HOST, Op.READ, "t", False),
    ([(T, "other", LIT, "User:bob", "*", Op.READ, ALLOW)], "User:alice", HOST, Op.READ, "t",
     False),
]


@pytest.mark.parametrize(("acls", "principal", "host", "operation", "name", "expected"), CASES)
def test_authorize_matrix(acls: list[tuple[Any, ...]], principal: str, host: str,
                          operation: AclOperation, name: str, expected: bool) -> None:
    # every case asks about a topic (a GROUP ACL must not apply to it)
    assert authorize(table(*acls), AuthorizerPolicy(), principal, host, operation, T,
                     name) is expected


@pytest.mark.parametrize(("acls", "expected"), [
    ([], True),                                    # no ACL for the resource: everyone
    ([(T, "other", LIT, "User:bob", "*", Op.READ, ALLOW)], True),     # ACLs elsewhere only
    ([(T, "t", LIT, "User:bob", "*", Op.READ, ALLOW)], False),        # some ACL applies
])
def test_allow_everyone_if_no_acl_found(acls: list[tuple[Any, ...]], expected: bool) -> None:
    policy = AuthorizerPolicy(allow_everyone_if_no_acl_found=True)
    assert authorize(table(*acls), policy, "User:alice", HOST, Op.READ, T, "t") is expected


def test_super_users_bypass_acls_and_denies() -> None:
    acls = table((T, "t", LIT, "User:admin", "*", Op.ALL, DENY))
    policy = AuthorizerPolicy(super_users=parse_super_users(" User:admin ; User:ops"))
    assert authorize(acls, policy, "User:admin", HOST, Op.WRITE, T, "t")
    assert authorize(acls, policy, "User:ops", HOST, Op.WRITE, C, "kafka-cluster")
    assert not authorize(acls, policy, "User:alice", HOST, Op.WRITE, T, "t")


def test_parse_super_users_and_principals() -> None:
    assert parse_super_users(None) == frozenset()
    assert parse_super_users("User:a;;User:b;") == {"User:a", "User:b"}
    assert parse_principal("User:CN=x,O=y") == ("User", "CN=x,O=y")
    with pytest.raises(ValueError, match="principalType:principalName"):
        parse_principal("alice")
    with pytest.raises(ValueError):
        parse_super_users("User:a;bob")


# ResourcePatternFilter.matches: Kafka's ResourcePatternFilterTest cases
PATTERN_FILTER_CASES = [
    ((T, "t", LIT), (T, "t", LIT), True),
    ((T, "t", LIT), (G, "t", LIT), False),
    ((ResourceType.ANY, "t", LIT), (G, "t", LIT), True),
    ((T, None, LIT), (T, "x", LIT), True),
    ((T, "t", PRE), (T, "t", LIT), False),
    ((T, "t", PatternType.ANY), (T, "t", PRE), True),
    ((T, "t", PatternType.ANY), (T, "*", LIT), False),     # ANY compares names exactly
    ((T, "t", PatternType.MATCH), (T, "t", LIT), True),
    ((T, "t", PatternType.MATCH), (T, "*", LIT), True),
    ((T, "tea", PatternType.MATCH), (T, "te", PRE), True),
    ((T, "tea", PatternType.MATCH), (T, "tea", PRE), True),
    ((T, "te", PatternType.MATCH), (T, "tea", PRE), False),
    ((T, "tea", PatternType.MATCH), (T, "te", LIT), False),
    ((T, "*", LIT), (T, "t", LIT), False),                # a filter's "*" is a name
]


@pytest.mark.parametrize(("flt", "pattern", "expected"), PATTERN_FILTER_CASES)
def test_resource_pattern_filter(flt: tuple[Any, ...], pattern: tuple[Any, ...],
                                 expected: bool) -> None:
    assert ResourcePatternFilter(*flt).matches(ResourcePattern(*pattern)) is expected


def test_entry_filter_and_binding_filter() -> None:
    entry = AccessControlEntry("User:alice", "*", Op.READ, ALLOW)
    binding = AclBinding(ResourcePattern(T, "t", LIT), entry)
    assert ANY_FILTER.matches(binding)
    assert AccessControlEntryFilter("User:alice", None, Op.ANY, AclPermissionType.ANY).matches(
        entry)
    assert not AccessControlEntryFilter("User:bob", None, Op.ANY,
                                        AclPermissionType.ANY).matches(entry)
    assert not AccessControlEntryFilter(None, "1.2.3.4", Op.ANY,
                                        AclPermissionType.ANY).matches(entry)
    assert not AccessControlEntryFilter(None, None, Op.WRITE,
                                        AclPermissionType.ANY).matches(entry)
    assert not AccessControlEntryFilter(None, None, Op.ANY, DENY).matches(entry)
    only_groups = AclBindingFilter(ResourcePatternFilter(G, None, PatternType.ANY),
                                   ANY_FILTER.entry_filter)
    assert not only_groups.matches(binding)


def test_indefinite_fields_and_unknown() -> None:
    assert ResourcePatternFilter(T, "t", LIT).find_indefinite_field() is None
    assert ResourcePatternFilter(ResourceType.ANY, "t", LIT).find_indefinite_field() == \
        "Resource type is ANY."
    assert ResourcePatternFilter(T, None, LIT).find_indefinite_field() == \
        "Resource name is NULL."
    assert ResourcePatternFilter(T, "t", PatternType.MATCH).find_indefinite_field() == \
        "Resource pattern type is MATCH."
    assert AclBindingFilter(ResourcePatternFilter(ResourceType.UNKNOWN, "t", LIT),
                            ANY_FILTER.entry_filter).is_unknown


def test_concrete_acls_refuse_any_and_match() -> None:
    with pytest.raises(ValueError, match="resourceType must not be ANY"):
        ResourcePattern(ResourceType.ANY, "t", LIT)
    with pytest.raises(ValueError, match="patternType must not be MATCH"):
        ResourcePattern(T, "t", PatternType.MATCH)
    with pytest.raises(ValueError, match="operation must not be ANY"):
        AccessControlEntry("User:a", "*", Op.ANY, ALLOW)
    with pytest.raises(ValueError, match="permissionType must not be ANY"):
        AccessControlEntry("User:a", "*", Op.READ, AclPermissionType.ANY)


def test_kafka_strings_and_names() -> None:
    assert str(ResourcePattern(T, "t", LIT)) == \
        "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)"
    assert str(AccessControlEntry("User:alice", "*", Op.READ, ALLOW)) == \
        "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
    assert str(ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY)) == \
        "ResourcePattern(resourceType=ANY, name=<any>, patternType=ANY)"
    assert camel_name(ResourceType.TRANSACTIONAL_ID) == "TransactionalId"
    assert camel_name(Op.DESCRIBE_CONFIGS) == "DescribeConfigs"
    assert ResourceType.from_string("TransactionalId") is ResourceType.TRANSACTIONAL_ID
    assert ResourceType.from_string("topic") is T
    assert Op.from_string("IdempotentWrite") is Op.IDEMPOTENT_WRITE
    assert ResourceType.from_code(99) is ResourceType.UNKNOWN
    with pytest.raises(ValueError):
        PatternType.from_string("regex")
    assert Op.IDEMPOTENT_WRITE in supported_operations(C)
    assert Op.READ not in supported_operations(C)
    assert Op.ALL in supported_operations(ResourceType.DELEGATION_TOKEN)


@pytest.mark.parametrize(("acls", "expected"), [
    ([], False),
    ([(T, "t", LIT, "User:alice", "*", Op.WRITE, ALLOW)], True),
    ([(T, "t", LIT, "User:*", "*", Op.ALL, ALLOW)], True),
    ([(T, "t", LIT, "User:bob", "*", Op.WRITE, ALLOW)], False),
    ([(T, "t", LIT, "User:alice", "*", Op.READ, ALLOW)], False),
    ([(T, "t", LIT, "User:alice", "*", Op.WRITE, ALLOW),
      (T, "t", LIT, "User:alice", "*", Op.WRITE, DENY)], False),
    ([(T, "t", LIT, "User:alice", "*", Op.WRITE, ALLOW),
      (T, "*", LIT, "User:alice", "*", Op.ALL, DENY)], False),
    ([(T, "ab", PRE, "User:alice", "*", Op.WRITE, ALLOW),
      (T, "a", PRE, "User:alice", "*", Op.WRITE, DENY)], False),
    ([(T, "a", PRE, "User:alice", "*", Op.WRITE, ALLOW),
      (T, "ab", PRE, "User:alice", "*", Op.WRITE, DENY)], True),
    ([(G, "g", LIT, "User:alice", "*", Op.ALL, ALLOW)], False),       # another type
])
def test_authorize_by_resource_type(acls: list[tuple[Any, ...]], expected: bool) -> None:
    from kafkapy.security.authorizer.acl import authorize_by_resource_type
    assert authorize_by_resource_type(table(*acls), AuthorizerPolicy(), "User:alice", HOST,
                                      Op.WRITE, T) is expected
    # a super user, or no ACL at all with allow.everyone.if.no.acl.found, may always
    assert authorize_by_resource_type(table(*acls), AuthorizerPolicy(frozenset({"User:alice"})),
                                      "User:alice", HOST, Op.WRITE, T)
