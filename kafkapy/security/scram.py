"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's ScramSaslServer does them.

What this module owns:

- ``ScramMechanism``: the two mechanisms, their hash and Kafka's iteration bounds
  (``min_iterations`` 4096, as ``ScramMechanism.minIterations``; at most 16384 through
  AlterUserScramCredentials, as Kafka's ``ControllerApis``/``ZkAdminManager`` check).
- ``ScramCredential``: salt, stored key, server key and iterations; ``to_kafka_string`` /
  ``from_kafka_string`` are Kafka's ``ScramCredentialUtils`` form
  ``salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>``, the value kept under the
  mechanism's name in ZooKeeper's ``/config/users/<user>``.
- The key derivations (``salted_password``, ``credential_from_salted``, ...), pure functions.
- ``ScramSaslServer``: the server side of one exchange, a two-step state machine
  (client-first -> server-first, client-final -> server-final). Failures raise
  ``SaslException`` (answered with Kafka's generic "invalid credentials" message) or
  ``SaslAuthenticationError`` (its message goes to the client), as in Kafka.

Invariants: only gs2 header ``n`` (no channel binding), as Kafka; extensions in the client-first
message are accepted and ignored, except ``tokenauth`` (delegation tokens), which kafkapy does
not have: a token-authenticated login fails like an unknown token id in Kafka. The
auth message uses the client's messages as sent (RFC 5802), which is what Kafka rebuilds for
clients that send no extensions.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable

import attrs

from kafkapy.security.sasl_server import SaslAuthenticationError, SaslException

__all__ = [
    "MAX_ITERATIONS",
    "ScramCredential",
    "ScramMechanism",
    "ScramSaslServer",
    "credential_from_password",
    "credential_from_salted",
    "salted_password",
]

# Kafka's upper bound for AlterUserScramCredentials (ScramMechanism has none; the broker's
# admin path refuses more: "Too many iterations").
MAX_ITERATIONS = 16384


class ScramMechanism(enum.Enum):
    """A SCRAM mechanism: ``value`` is its SASL name; ``type_id`` Kafka's wire id (1, 2)."""

    SCRAM_SHA_256 = "SCRAM-SHA-256"
    SCRAM_SHA_512 = "SCRAM-SHA-512"

    @property
    def hash_name(self) -> str:
        return "sha256" if self is ScramMechanism.SCRAM_SHA_256 else "sha512"

    @property
    def type_id(self) -> int:
        """``ScramMechanism.type()`` in Kafka: the Mechanism field of the SCRAM admin APIs."""
        return 1 if self is ScramMechanism.SCRAM_SHA_256 else 2

    @property
    def min_iterations(self) -> int:
        return 4096

    @classmethod
    def from_name(cls, name: str) -> ScramMechanism | None:
        for mechanism in cls:
            if mechanism.value == name:
                return mechanism
        return None

    @classmethod
    def from_type(cls, type_id: int) -> ScramMechanism | None:
        for mechanism in cls:
            if mechanism.type_id == type_id:
                return mechanism
        return None


@attrs.frozen
class ScramCredential:
    """What the broker keeps of a SCRAM password (never the password itself)."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_kafka_string(self) -> str:
        """Kafka's ``ScramCredentialUtils.credentialToString``."""
        def b64(data: bytes) -> str:
            return base64.b64encode(data).decode("ascii")
        return (f"salt={b64(self.salt)},stored_key={b64(self.stored_key)},"
                f"server_key={b64(self.server_key)},iterations={self.iterations}")

    @classmethod
    def from_kafka_string(cls, text: str) -> ScramCredential:
        """Kafka's ``ScramCredentialUtils.credentialFromString``.

        Raises:
            ValueError: not that form (a missing key, bad base64, a non-numeric count).
        """
        fields: dict[str, str] = {}
        for part in text.split(","):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"invalid SCRAM credential {text!r}")
            fields[key] = value
        try:
            return cls(salt=base64.b64decode(fields["salt"], validate=True),
                       stored_key=base64.b64decode(fields["stored_key"], validate=True),
                       server_key=base64.b64decode(fields["server_key"], validate=True),
                       iterations=int(fields["iterations"]))
        except (KeyError, binascii.Error, ValueError) as exc:
            raise ValueError(f"invalid SCRAM credential {text!r}: {exc}") from exc


def _hmac(mechanism: ScramMechanism, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, mechanism.hash_name).digest()


def _hash(mechanism: ScramMechanism, data: bytes) -> bytes:
    return hashlib.new(mechanism.hash_name, data).digest()


def salted_password(mechanism: ScramMechanism, password: bytes, salt: bytes,
                    iterations: int) -> bytes:
    """RFC 5802 ``Hi(password, salt, i)``: PBKDF2 with the mechanism's HMAC."""
    return hashlib.pbkdf2_hmac(mechanism.hash_name, password, salt, iterations)


def credential_from_salted(mechanism: ScramMechanism, salted: bytes, salt: bytes,
                           iterations: int) -> ScramCredential:
    """The stored credential from a salted password (what AlterUserScramCredentials sends)."""
    client_key = _hmac(mechanism, salted, b"Client Key")
    return ScramCredential(salt=salt, stored_key=_hash(mechanism, client_key),
                           server_key=_hmac(mechanism, salted, b"Server Key"),
                           iterations=iterations)


def credential_from_password(mechanism: ScramMechanism, password: str, *,
                             salt: bytes | None = None, iterations: int = 4096
                             ) -> ScramCredential:
    """A credential for ``password`` (a random 32-byte salt unless given). Kafka's
    ``ScramFormatter.generateCredential`` normalises nothing either (no SASLprep)."""
    salt = secrets.token_bytes(32) if salt is None else salt
    salted = salted_password(mechanism, password.encode("utf-8"), salt, iterations)
    return credential_from_salted(mechanism, salted, salt, iterations)


# Kafka's ScramMessages patterns (Java's [\x01-\x7F&&[^=,]] classes spelled out).
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_B64C = r"[a-zA-Z0-9/+]"
_BASE64 = rf"(?:{_B64C}{{4}})*(?:{_B64C}{{3}}=|{_B64C}{{2}}==)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,(?P<bare>(?:m={_VALUE},)?n=(?P<saslname>{_SASLNAME}),"
    rf"r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS}))")
_CLIENT_FINAL = re.compile(
    rf"(?P<without_proof>c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS}),"
    rf"p=(?P<proof>{_BASE64})")


def username(sasl_name: str) -> str:
    """Kafka's ``ScramFormatter.username``: ``=2C`` is ``,`` and ``=3D`` is ``=``."""
    return sasl_name.replace("=2C", ",").replace("=3D", "=")


def _extensions(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in text.split(",")[1:]:
        key, _, value = item.partition("=")
        found[key] = value
    return found


CredentialLookup = Callable[[str, ScramMechanism], ScramCredential | None]


class ScramSaslServer:
    """One SCRAM exchange on the server side (Kafka's ``ScramSaslServer``).

    ``ScramSaslServer(mechanism, lookup)``: ``lookup(user, mechanism)`` returns the user's
    credential or None. ``evaluate(token)`` returns the challenge to send; after the second
    call ``complete`` is true and ``authorization_id`` the authenticated user.
    """

    def __init__(self, mechanism: ScramMechanism, lookup: CredentialLookup, *,
                 nonce: Callable[[], str] | None = None) -> None:
        self.mechanism = mechanism
        self._lookup = lookup
        # Kafka's ScramFormatter.secureRandomString: a random BigInteger in base 36.
        self._new_nonce = nonce or (lambda: secrets.token_urlsafe(24).replace("-", "a")
                                    .replace("_", "b"))
        self._state = "first"
        self._credential: ScramCredential | None = None
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self.authorization_id: str | None = None
        self.credential_expiry_ms: int | None = None

    @property
    def mechanism_name(self) -> str:
        return self.mechanism.value

    @property
    def complete(self) -> bool:
        return self._state == "complete"

    def evaluate(self, token: bytes) -> bytes:
        """The server's next message for the client's ``token``.

        Raises:
            SaslException: a malformed message, an unknown user, a wrong proof (the client
                sees Kafka's generic message).
            SaslAuthenticationError: an authorization id other than the user (the client sees
                this message).
        """
        try:
            if self._state == "first":
                return self._first(token)
            if self._state == "final":
                return self._final(token)
            raise SaslException(f"Unexpected challenge in Sasl server state {self._state}")
        except (SaslException, SaslAuthenticationError):
            self._state = "failed"
            self._credential = None
            raise

    def _first(self, token: bytes) -> bytes:
        message = token.decode("utf-8", "replace")
        match = _CLIENT_FIRST.fullmatch(message)
        if match is None:
            raise SaslException(f"Invalid SCRAM client first message format: {message}")
        extensions = _extensions(match.group("extensions"))
        user = username(match.group("saslname"))
        if extensions.get("tokenauth", "").lower() == "true":
            # Delegation tokens are not implemented: every token id is unknown.
            raise SaslException(f"Token Authentication failed: Invalid tokenId : {user}")
        credential = self._lookup(user, self.mechanism)
        if credential is None:
            raise SaslException("Authentication failed: Invalid user credentials")
        authzid = match.group("authzid") or ""
        if authzid and authzid != user:
            raise SaslAuthenticationError("Authentication failed: Client requested an "
                                          "authorization id that is different from username")
        if credential.iterations < self.mechanism.min_iterations:
            raise SaslException(f"Iterations {credential.iterations} is less than the minimum "
                                f"{self.mechanism.min_iterations} for {self.mechanism.value}")
        self._credential = credential
        self.authorization_id = user
        self._client_first_bare = match.group("bare")
        self._nonce = match.group("nonce") + self._new_nonce()
        salt = base64.b64encode(credential.salt).decode("ascii")
        self._server_first = f"r={self._nonce},s={salt},i={credential.iterations}"
        self._state = "final"
        return self._server_first.encode("ascii")

    def _final(self, token: bytes) -> bytes:
        message = token.decode("utf-8", "replace")
        match = _CLIENT_FINAL.fullmatch(message)
        if match is None:
            raise SaslException(f"Invalid SCRAM client final message format: {message}")
        # RFC 5802 wants the nonce echoed exactly; librdkafka before 2.6.1 (Debian's kcat,
        # many installed clients) sends its own nonce once more in front of it. Kafka 3.8.1 to
        # 3.9 accept that (endsWith, apache/kafka 0a00456), and so does kafkapy: the random
        # server part must still be there, so a replayed exchange still fails.
        if not match.group("nonce").endswith(self._nonce):
            raise SaslException("Invalid client nonce in the final client message.")
        credential = self._credential
        assert credential is not None
        auth_message = ",".join((self._client_first_bare, self._server_first,
                                 match.group("without_proof"))).encode("utf-8")
        proof = base64.b64decode(match.group("proof"))
        client_signature = _hmac(self.mechanism, credential.stored_key, auth_message)
        if len(proof) != len(client_signature):
            raise SaslException("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature, strict=True))
        if not hmac.compare_digest(_hash(self.mechanism, client_key), credential.stored_key):
            raise SaslException("Invalid client credentials")
        signature = _hmac(self.mechanism, credential.server_key, auth_message)
        self._credential = None
        self._state = "complete"
        return b"v=" + base64.b64encode(signature)
