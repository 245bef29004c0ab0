"""SASL/OAUTHBEARER with Kafka's unsecured JWS validator (kafkapy.security.oauthbearer)."""

from __future__ import annotations

import base64
import json

import pytest

from kafkapy.security.oauthbearer import OAuthBearerSaslServer, UnsecuredJwsValidator
from kafkapy.security.sasl_server import SaslAuthenticationError, SaslException

NOW = 1_700_000_000.0


def _b64(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def _jws(claims: dict[str, object], header: dict[str, object] | None = None,
         signature: str = "") -> str:
    return f"{_b64(header or {'alg': 'none'})}.{_b64(claims)}.{signature}"


def _message(token: str, authzid: str = "", extensions: str = "") -> bytes:
    a = f"a={authzid}" if authzid else ""
    return f"n,{a},\x01auth=Bearer {token}\x01{extensions}\x01".encode()


def _server(**options: str) -> OAuthBearerSaslServer:
    return OAuthBearerSaslServer(UnsecuredJwsValidator(options, clock=lambda: NOW))


def test_valid_token() -> None:
    server = _server()
    token = _jws({"sub": "alice", "exp": NOW + 60, "iat": NOW - 1})
    assert server.evaluate(_message(token, extensions="traceId=abc\x01")) == b""
    assert server.complete and server.authorization_id == "alice"


def test_principal_claim_and_required_scope_options() -> None:
    server = _server(unsecuredValidatorPrincipalClaimName="client",
                     unsecuredValidatorRequiredScope="read,write")
    token = _jws({"client": "svc", "exp": NOW + 60, "scope": ["read", "write", "x"]})
    server.evaluate(_message(token))
    assert server.authorization_id == "svc"


@pytest.mark.parametrize(("claims", "header", "signature"), [
    ({"sub": "a", "exp": NOW - 1}, None, ""),                   # expired
    ({"sub": "a"}, None, ""),                                   # no exp
    ({"exp": NOW + 60}, None, ""),                              # no principal
    ({"sub": "a", "exp": NOW + 60, "iat": NOW + 30}, None, ""),  # issued in the future
    ({"sub": "a", "exp": NOW + 60}, {"alg": "HS256"}, ""),      # not unsecured
    ({"sub": "a", "exp": NOW + 60}, None, "c2ln"),              # has a signature
])
def test_invalid_token_gets_the_json_challenge_then_fails(
        claims: dict[str, object], header: dict[str, object] | None, signature: str) -> None:
    server = _server()
    challenge = server.evaluate(_message(_jws(claims, header, signature)))
    assert json.loads(challenge) == {"status": "invalid_token"}
    assert not server.complete
    with pytest.raises(SaslAuthenticationError, match="invalid_token"):
        server.evaluate(b"\x01")


def test_missing_scope_is_insufficient_scope() -> None:
    server = _server(unsecuredValidatorRequiredScope="kafka")
    challenge = server.evaluate(_message(_jws({"sub": "a", "exp": NOW + 60, "scope": "x"})))
    assert json.loads(challenge) == {"status": "insufficient_scope", "scope": "[kafka]"}


def test_clock_skew_option() -> None:
    server = _server(unsecuredValidatorAllowableClockSkewMs="5000")
    server.evaluate(_message(_jws({"sub": "a", "exp": NOW - 2})))
    assert server.complete


@pytest.mark.parametrize("message", [b"n,,auth=Bearer x", b"garbage",
                                     b"n,,\x01auth=Basic abc\x01\x01",
                                     b"n,,\x01other=1\x01\x01"])
def test_malformed_messages(message: bytes) -> None:
    with pytest.raises(SaslException):
        _server().evaluate(message)


def test_authzid_must_match_principal() -> None:
    token = _jws({"sub": "alice", "exp": NOW + 60})
    with pytest.raises(SaslAuthenticationError, match="different from the token's principal"):
        _server().evaluate(_message(token, authzid="bob"))
