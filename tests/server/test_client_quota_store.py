"""ClientQuotaStore and the client-quota rules (pure logic and the single-broker file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkapy.errors import InvalidRequestError, UnsupportedVersionError
from kafkapy.protocol.message_classes import ComponentData
from kafkapy.server.client_quota_store import (
    QUOTA_FILE,
    FileClientQuotaStore,
    desanitize,
    entity_of_path,
    path_of_entity,
    sanitize,
)
from kafkapy.server.handlers.client_quotas import (
    MATCH_ANY,
    MATCH_DEFAULT,
    MATCH_EXACT,
    alter_entity,
    describe,
)


def test_sanitize_is_kafkas_url_encoding() -> None:
    assert sanitize("alice") == "alice"
    assert sanitize(None) == "<default>"
    assert sanitize("CN=a b,O=x*~") == "CN%3Da%20b%2CO%3Dx%2A%7E"
    assert sanitize("a.b-c_d") == "a.b-c_d"
    for name in ("CN=a b,O=x*~", "é/ü", None):
        assert desanitize(sanitize(name)) == name


def test_entity_paths() -> None:
    assert path_of_entity([("user", "alice")]) == "users/alice"
    assert path_of_entity([("client-id", "c1"), ("user", "alice")]) == "users/alice/clients/c1"
    assert path_of_entity([("user", None), ("client-id", None)]) == \
        "users/<default>/clients/<default>"
    assert path_of_entity([("client-id", "c/1")]) == "clients/c%2F1"
    assert path_of_entity([("ip", "127.0.0.1")]) == "ips/127.0.0.1"
    assert path_of_entity([("ip", None)]) == "ips/<default>"
    assert entity_of_path("users/alice/clients/c%2F1") == (("client-id", "c/1"),
                                                           ("user", "alice"))
    assert entity_of_path("ips/<default>") == (("ip", None),)
    with pytest.raises(ValueError):
        entity_of_path("topics/t")


@pytest.mark.parametrize(("entity", "message"), [
    ([], "Invalid empty client quota entity"),
    ([("group", "g")], "Unhandled client quota entity type: group"),
    ([("user", "")], "Empty user not supported"),
    ([("user", "a"), ("ip", "1.2.3.4")],
     "Invalid quota entity combination, IP entity should not be used with user/client ID "
     "entity."),
    ([("ip", "no such host.invalid")], "no such host.invalid is not a valid IP or resolvable "
                                       "host."),
])
def test_invalid_entities(entity: list[tuple[str, str | None]], message: str) -> None:
    with pytest.raises(InvalidRequestError) as e:
        path_of_entity(entity)
    assert e.value.message == message


def test_alter_entity_types_and_keys() -> None:
    config = {"SCRAM-SHA-256": "salt=...", "consumer_byte_rate": "1"}
    alter_entity(config, "users/alice", [("producer_byte_rate", 1024.0),
                                         ("request_percentage", 50.0),
                                         ("controller_mutation_rate", 1e7),
                                         ("consumer_byte_rate", None)])
    assert config == {"SCRAM-SHA-256": "salt=...", "producer_byte_rate": "1024",
                      "request_percentage": "50.0", "controller_mutation_rate": "1.0E7"}
    with pytest.raises(InvalidRequestError, match="Configuration producer_byte_rate must be "
                                                  "a LONG value"):
        alter_entity({}, "users/a", [("producer_byte_rate", 1.5)])
    with pytest.raises(InvalidRequestError, match="Invalid configuration key bogus"):
        alter_entity({}, "users/a", [("bogus", 1.0)])
    with pytest.raises(InvalidRequestError, match="Invalid configuration key "
                                                  "connection_creation_rate"):
        alter_entity({}, "users/a", [("connection_creation_rate", 1.0)])
    ip: dict[str, str] = {}
    alter_entity(ip, "ips/1.2.3.4", [("connection_creation_rate", 10.0)])
    assert ip == {"connection_creation_rate": "10"}
    with pytest.raises(InvalidRequestError, match="must be a INT value"):
        alter_entity({}, "ips/1.2.3.4", [("connection_creation_rate", 0.5)])


CONFIGS = {
    "users/alice": {"producer_byte_rate": "1024"},
    "users/alice/clients/c1": {"consumer_byte_rate": "2048"},
    "users/<default>": {"producer_byte_rate": "10"},
    "clients/c1": {"request_percentage": "12.5"},
    "clients/<default>/x": {},
    "ips/1.2.3.4": {"connection_creation_rate": "5"},
}
CONFIGS.pop("clients/<default>/x")


def _c(entity_type: str, match_type: int, match: str | None = None) -> ComponentData:
    return ComponentData(entity_type=entity_type, match_type=match_type, match=match)


def _paths(components: list[ComponentData], strict: bool) -> list[dict[str, str | None]]:
    return [dict(entity) for entity, _ in describe(CONFIGS, components, strict)]


def test_describe_filters_as_kafka() -> None:
    everything = _paths([], False)
    assert len(everything) == 5
    assert _paths([], True) == []
    assert _paths([_c("user", MATCH_EXACT, "alice")], False) == [
        {"user": "alice"}, {"user": "alice", "client-id": "c1"}]
    assert _paths([_c("user", MATCH_EXACT, "alice")], True) == [{"user": "alice"}]
    assert _paths([_c("user", MATCH_DEFAULT)], True) == [{"user": None}]
    assert _paths([_c("user", MATCH_ANY)], True) == [{"user": None}, {"user": "alice"}]
    assert _paths([_c("client-id", MATCH_ANY)], False) == [
        {"client-id": "c1"}, {"user": "alice", "client-id": "c1"}]
    assert _paths([_c("user", MATCH_ANY), _c("client-id", MATCH_EXACT, "c1")], True) == [
        {"user": "alice", "client-id": "c1"}]
    assert _paths([_c("ip", MATCH_ANY)], False) == [{"ip": "1.2.3.4"}]
    [(_, values)] = describe(CONFIGS, [_c("client-id", MATCH_EXACT, "c1")], True)
    assert values == {"request_percentage": 12.5}


@pytest.mark.parametrize(("components", "error", "message"), [
    ([_c("user", 2), _c("user", 0, "a")], InvalidRequestError,
     "Duplicate user filter component entity type"),
    ([_c("client-id", 2), _c("client-id", 2)], InvalidRequestError,
     "Duplicate client filter component entity type"),
    ([_c("", 2)], InvalidRequestError, "Unexpected empty filter component entity type"),
    ([_c("group", 2)], UnsupportedVersionError, "Custom entity type 'group' not supported"),
    ([_c("user", 2), _c("ip", 2)], InvalidRequestError,
     "Invalid entity filter component combination, IP filter component should not be used "
     "with user or clientId filter component."),
])
def test_describe_refuses_bad_filters(components: list[ComponentData], error: type,
                                      message: str) -> None:
    with pytest.raises(error) as e:
        describe(CONFIGS, components, False)
    assert e.value.message == message


def test_file_store_keeps_other_keys_and_survives_reopen(tmp_path: Path) -> None:
    store = FileClientQuotaStore(tmp_path)
    store.alter("users/alice", lambda c: c.update({"SCRAM-SHA-512": "x", "producer_byte_rate":
                                                   "1024"}))
    version = store.version
    store.alter("users/alice", lambda c: c.pop("producer_byte_rate"))
    assert store.version > version
    assert store.configs == {}
    reopened = FileClientQuotaStore(tmp_path)
    assert reopened.configs == {}
    reopened.alter("users/alice", lambda c: c.update({"consumer_byte_rate": "7"}))
    assert FileClientQuotaStore(tmp_path).configs == {"users/alice": {"consumer_byte_rate": "7"}}
    assert '"SCRAM-SHA-512": "x"' in (tmp_path / QUOTA_FILE).read_text()


def test_file_store_refuses_a_corrupt_document(tmp_path: Path) -> None:
    (tmp_path / QUOTA_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="cannot read the client quotas"):
        FileClientQuotaStore(tmp_path)
