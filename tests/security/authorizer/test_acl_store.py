"""The ACL stores' formats (Kafka's znode JSON and change notifications) and the single
broker's file, with the AclAuthorizer over it (real files, no broker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from kafkapy.errors import InvalidRequestError
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
)
from kafkapy.security.authorizer.acl_store import (
    ACL_FILE,
    FileAclStore,
    acls_decode,
    acls_encode,
    change_decode,
    change_encode,
    resource_path,
)
from kafkapy.security.authorizer.authorizer import AclAuthorizer

T = ResourceType.TOPIC
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED
ALICE_READ = AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)
BOB_DC = AccessControlEntry("User:bob", "10.0.0.1", AclOperation.DESCRIBE_CONFIGS,
                            AclPermissionType.DENY)


def test_znode_paths_and_json_are_kafkas() -> None:
    assert resource_path(ResourcePattern(T, "t", LIT)) == "/kafka-acl/Topic/t"
    assert resource_path(ResourcePattern(ResourceType.TRANSACTIONAL_ID, "tx", PRE)) == \
        "/kafka-acl-extended/prefixed/TransactionalId/tx"
    data = acls_encode(frozenset({ALICE_READ}))
    assert json.loads(data) == {"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read",
         "host": "*"}]}
    # what Kafka writes decodes (its camel names)
    kafka = (b'{"version":1,"acls":[{"principal":"User:bob","permissionType":"Deny",'
             b'"operation":"DescribeConfigs","host":"10.0.0.1"}]}')
    assert acls_decode(kafka) == {BOB_DC}
    assert acls_decode(acls_encode(frozenset({ALICE_READ, BOB_DC}))) == {ALICE_READ, BOB_DC}


def test_change_notifications_are_kafkas() -> None:
    literal = ResourcePattern(T, "t:1", LIT)
    path, data = change_encode(literal)
    assert (path, data) == ("/kafka-acl-changes/acl_changes_", b"TOPIC:t:1")
    assert change_decode("/kafka-acl-changes", data) == literal
    prefixed = ResourcePattern(ResourceType.GROUP, "g-", PRE)
    path, data = change_encode(prefixed)
    assert path == "/kafka-acl-extended-changes/acl_changes_"
    assert json.loads(data) == {"version": 1, "resourceType": "GROUP", "name": "g-",
                                "patternType": "PREFIXED"}
    assert change_decode("/kafka-acl-extended-changes", data) == prefixed
    with pytest.raises(ValueError):
        change_decode("/kafka-acl-changes", b"no-separator")


def test_file_store_survives_reopen_and_refuses_corruption(tmp_path: Path) -> None:
    store = FileAclStore(tmp_path)
    pattern = ResourcePattern(T, "t", LIT)
    assert store.update(pattern, lambda cur: cur | {ALICE_READ}) == {ALICE_READ}
    assert FileAclStore(tmp_path).load_all() == {pattern: {ALICE_READ}}
    assert store.update(pattern, lambda cur: frozenset()) == frozenset()
    assert FileAclStore(tmp_path).load_all() == {}
    (tmp_path / ACL_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="cannot read the ACLs"):
        FileAclStore(tmp_path)


def test_authorizer_over_the_file_store(tmp_path: Path) -> None:
    async def main() -> None:
        auth = AclAuthorizer(FileAclStore(tmp_path), AuthorizerPolicy())
        await auth.run()
        t, pre = ResourcePattern(T, "t", LIT), ResourcePattern(T, "t", PRE)
        results = await auth.create_acls([
            AclBinding(t, ALICE_READ), AclBinding(pre, BOB_DC),
            AclBinding(ResourcePattern(T, "a/b", LIT), ALICE_READ),
            AclBinding(ResourcePattern(ResourceType.UNKNOWN, "x", LIT), ALICE_READ)])
        assert results[:2] == [None, None]
        assert isinstance(results[2], InvalidRequestError)
        assert isinstance(results[3], InvalidRequestError)
        assert auth.authorize("User:alice", "1.2.3.4", AclOperation.READ, T, "t")
        assert auth.acls(ANY_FILTER) == sorted([AclBinding(t, ALICE_READ),
                                                AclBinding(pre, BOB_DC)])
        # a new authorizer over the same directory sees them (restart)
        again = AclAuthorizer(FileAclStore(tmp_path), AuthorizerPolicy())
        await again.run()
        assert again.acls(ANY_FILTER) == auth.acls(ANY_FILTER)
        # delete: the first matching filter gets the binding, the others nothing
        bob_only = AclBindingFilter(ResourcePatternFilter(T, "t", PatternType.MATCH),
                                    AccessControlEntryFilter("User:bob", None, AclOperation.ANY,
                                                             AclPermissionType.ANY))
        deleted = await auth.delete_acls([bob_only, ANY_FILTER])
        assert deleted == [[(AclBinding(pre, BOB_DC), None)], [(AclBinding(t, ALICE_READ),
                                                                 None)]]
        assert auth.acls(ANY_FILTER) == []
        assert not auth.authorize("User:alice", "1.2.3.4", AclOperation.READ, T, "t")

    trio.run(main)
