"""SASL/OAUTHBEARER (RFC 7628) with Kafka's unsecured JWS validator, for development:
Kafka's ``OAuthBearerSaslServer`` with its default server callback handler,
``OAuthBearerUnsecuredValidatorCallbackHandler``.

The client's first message is
``n,[a=<authzid>],\\x01auth=Bearer <token>\\x01[key=value\\x01...]\\x01`` (Kafka's
``OAuthBearerClientInitialResponse``); the token must be an unsecured JWS
(``alg: none``, three dot-separated base64url parts, the last empty) whose claims carry an
``exp`` (seconds) in the future, an optional ``iat`` not in the future, the principal claim
(``unsecuredValidatorPrincipalClaimName``, default ``sub``) and, if required
(``unsecuredValidatorRequiredScope``), the scopes in ``unsecuredValidatorScopeClaimName``
(default ``scope``); ``unsecuredValidatorAllowableClockSkewMs`` (default 0) loosens both times.
These are options of the listener's ``OAuthBearerLoginModule`` JAAS entry, as in Kafka.

A token that fails validation is answered, as RFC 7628 says and Kafka does, with a JSON error
challenge (``{"status":"invalid_token"}``, or ``insufficient_scope`` with the scope); the
client acknowledges with ``\\x01`` and the exchange then fails with that JSON as the message.
A malformed message is a ``SaslException`` (Kafka's generic message to the client).

The token's expiry bounds the session (KIP-368, ``credential_expiry_ms``).

Not implemented: Kafka's OIDC validation (``sasl.oauthbearer.jwks.endpoint.url`` and the
``OAuthBearerValidatorCallbackHandler``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
from collections.abc import Callable, Mapping

from kafkapy.security.sasl_server import SaslAuthenticationError, SaslException

__all__ = ["OAUTHBEARER", "OAuthBearerSaslServer", "UnsecuredJwsValidator"]

OAUTHBEARER = "OAUTHBEARER"
_SEP = "\x01"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7e \t\r\n]+\x01)*"
_INITIAL = re.compile(rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_KVPAIRS})\x01")
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_.a-zA-Z0-9]+)")


class InvalidToken(Exception):
    """A token the validator refuses: ``status`` and ``scope`` go into the JSON challenge."""

    def __init__(self, message: str, status: str = "invalid_token",
                 scope: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.scope = scope


def _b64url_json(part: str) -> dict[str, object]:
    try:
        data = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError) as exc:
        raise InvalidToken("malformed Base64 URL encoded value") from exc
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise InvalidToken("malformed JSON") from exc
    if not isinstance(value, dict):
        raise InvalidToken("malformed JSON")
    return value


class UnsecuredJwsValidator:
    """Kafka's ``OAuthBearerUnsecuredValidatorCallbackHandler`` with its JAAS ``options``."""

    def __init__(self, options: Mapping[str, str], *,
                 clock: Callable[[], float] = time.time) -> None:
        self.principal_claim = options.get("unsecuredValidatorPrincipalClaimName", "sub").strip()
        self.scope_claim = options.get("unsecuredValidatorScopeClaimName", "scope").strip()
        required = options.get("unsecuredValidatorRequiredScope", "")
        self.required_scope = [s.strip() for s in required.split(",") if s.strip()]
        self.skew_ms = int(options.get("unsecuredValidatorAllowableClockSkewMs", "0") or 0)
        self._clock = clock

    def validate(self, token: str) -> tuple[str, int]:
        """The principal name of a valid ``token`` and its expiry (epoch ms).

        Raises:
            InvalidToken: with Kafka's validation message.
        """
        if ".." in token:
            raise InvalidToken("Malformed compact serialization contains '..'")
        parts = token.split(".")
        if len(parts) != 3:
            raise InvalidToken("Unsecured JWS compact serializations must have 3 "
                               "dot-separated Base64URL-encoded values")
        header, claims = _b64url_json(parts[0]), _b64url_json(parts[1])
        if header.get("alg") != "none":
            raise InvalidToken("Unsecured JWS must have 'none' for an algorithm")
        if parts[2]:
            raise InvalidToken("Unsecured JWS must not contain a digital signature")
        now_ms = int(self._clock() * 1000)
        exp = claims.get("exp")
        if exp is None:
            raise InvalidToken("No expiration time in JWT")
        if not isinstance(exp, int | float) or isinstance(exp, bool):
            raise InvalidToken("The 'exp' claim was not of type Number")
        principal = claims.get(self.principal_claim)
        if not isinstance(principal, str) or not principal.strip():
            raise InvalidToken(f"No principal name in JWT claim: {self.principal_claim}")
        iat = claims.get("iat")
        if iat is not None:
            if not isinstance(iat, int | float) or isinstance(iat, bool):
                raise InvalidToken("The 'iat' claim was not of type Number")
            if round(iat * 1000) > now_ms + self.skew_ms:
                raise InvalidToken(f"The Issued At value ({iat} seconds) was after the "
                                   f"indicated time ({now_ms} ms) plus allowable clock skew "
                                   f"({self.skew_ms} ms)")
        if now_ms - self.skew_ms >= round(exp * 1000):
            raise InvalidToken(f"The indicated time ({now_ms} ms) minus allowable clock skew "
                               f"({self.skew_ms} ms) was on or after the Expiration Time value "
                               f"({exp} seconds)")
        if iat is not None and round(exp * 1000) <= round(iat * 1000):
            raise InvalidToken(f"The Expiration Time time ({exp} seconds) was not after the "
                               f"Issued At time ({iat} seconds)")
        if self.required_scope:
            raw = claims.get(self.scope_claim)
            scopes = {raw.strip()} if isinstance(raw, str) and raw.strip() else \
                {str(s).strip() for s in raw} if isinstance(raw, list) else set()
            missing = [s for s in self.required_scope if s not in scopes]
            if missing:
                raise InvalidToken(f"The provided scope ({sorted(scopes)}) was missing a "
                                   f"required scope ({missing[0]}). All required scope "
                                   f"elements: {self.required_scope}",
                                   status="insufficient_scope",
                                   scope=f"[{', '.join(self.required_scope)}]")
        return principal, round(exp * 1000)


class OAuthBearerSaslServer:
    """The server side of one OAUTHBEARER exchange (see the module doc)."""

    mechanism_name = OAUTHBEARER

    def __init__(self, validator: UnsecuredJwsValidator) -> None:
        self._validator = validator
        self._complete = False
        self._error: str | None = None
        self.authorization_id: str | None = None
        self.credential_expiry_ms: int | None = None

    @property
    def complete(self) -> bool:
        return self._complete

    def evaluate(self, token: bytes) -> bytes:
        """An empty challenge on success, the JSON error challenge for an invalid token.

        Raises:
            SaslException: a malformed client message.
            SaslAuthenticationError: the client's ``\\x01`` after an error challenge, or an
                authorization id other than the token's principal.
        """
        if token == b"\x01" and self._error is not None:
            raise SaslAuthenticationError(self._error)
        self._error = None
        message = token.decode("utf-8", "replace")
        match = _INITIAL.fullmatch(message)
        if match is None:
            raise SaslException("Invalid OAUTHBEARER client first message")
        pairs = dict(item.split("=", 1) for item in match.group("kvpairs").split(_SEP) if item)
        auth = pairs.get("auth")
        if auth is None:
            raise SaslException("Invalid OAUTHBEARER client first message: 'auth' not "
                                "specified")
        auth_match = _AUTH.fullmatch(auth)
        if auth_match is None:
            raise SaslException("Invalid OAUTHBEARER client first message: invalid 'auth' "
                                "format")
        if auth_match.group("scheme").lower() != "bearer":
            raise SaslException(f"Invalid scheme in OAUTHBEARER client first message: "
                                f"{auth_match.group('scheme')}")
        try:
            principal, expiry_ms = self._validator.validate(auth_match.group("token"))
        except InvalidToken as exc:
            error = {"status": exc.status}
            if exc.scope is not None:
                error["scope"] = exc.scope
            self._error = json.dumps(error, separators=(", ", ":"))
            return self._error.encode("utf-8")
        authzid = match.group("authzid") or ""
        if authzid and authzid != principal:
            raise SaslAuthenticationError(
                f"Authentication failed: Client requested an authorization id ({authzid}) "
                f"that is different from the token's principal name ({principal})")
        self.authorization_id = principal
        self.credential_expiry_ms = expiry_ms
        self._complete = True
        return b""
