"""SASL/PLAIN (kafkapy.security.plain) and the JAAS parser (kafkapy.security.jaas)."""

from __future__ import annotations

import pytest

from kafkapy.errors import InvalidConfigError
from kafkapy.security.jaas import parse_jaas_config
from kafkapy.security.plain import PlainSaslServer, plain_users
from kafkapy.security.sasl_server import SaslAuthenticationError

USERS = {"alice": "alice-secret", "admin": "admin-secret"}


def test_plain_success_and_authzid() -> None:
    server = PlainSaslServer(USERS)
    assert server.evaluate(b"\x00alice\x00alice-secret") == b""
    assert server.complete and server.authorization_id == "alice"
    server = PlainSaslServer(USERS)
    server.evaluate(b"alice\x00alice\x00alice-secret")
    assert server.authorization_id == "alice"


@pytest.mark.parametrize(("token", "message"), [
    (b"\x00alice\x00wrong", "Authentication failed: Invalid username or password"),
    (b"\x00mallory\x00alice-secret", "Authentication failed: Invalid username or password"),
    (b"\x00\x00pw", "Authentication failed: username not specified"),
    (b"\x00alice\x00", "Authentication failed: password not specified"),
    (b"alice\x00alice-secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
    (b"admin\x00alice\x00alice-secret", "authorization id that is different from username"),
])
def test_plain_failures(token: bytes, message: str) -> None:
    server = PlainSaslServer(USERS)
    with pytest.raises(SaslAuthenticationError, match=message):
        server.evaluate(token)
    assert not server.complete


def test_jaas_kafka_example() -> None:
    module = parse_jaas_config(
        'org.apache.kafka.common.security.plain.PlainLoginModule required\n'
        '    username="admin" password="admin-secret"\n'
        '    user_admin="admin-secret" user_alice="alice-secret";')
    assert module.login_module == "org.apache.kafka.common.security.plain.PlainLoginModule"
    assert module.flag == "required"
    assert plain_users(module.options) == {"admin": "admin-secret", "alice": "alice-secret"}
    assert module.options["username"] == "admin"


def test_jaas_quotes_escapes_comments_bare_words() -> None:
    module = parse_jaas_config(
        '/* comment */ x.Module optional // line comment\n'
        ' a="with \\"quote\\" and ; = ," b=bare_word;')
    assert module.flag == "optional"
    assert module.options == {"a": 'with "quote" and ; = ,', "b": "bare_word"}


@pytest.mark.parametrize(("text", "message"), [
    ("x.Module required a=\"1\"", "must end with ';'"),
    ("x.Module sometimes;", "invalid login module control flag"),
    ("x.Module required; y.Module required;", "contains 2 login modules, should be 1"),
    ("", "contains 0 login modules"),
    ("x.Module required a=;", "expected key=value"),
])
def test_jaas_errors(text: str, message: str) -> None:
    with pytest.raises(InvalidConfigError, match=message):
        parse_jaas_config(text)
