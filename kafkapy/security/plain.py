"""SASL/PLAIN (RFC 4616) as Kafka's ``PlainSaslServer`` with its default
``PlainServerCallbackHandler``: users and passwords are the ``user_<name>="<password>"``
options of the listener's ``PlainLoginModule`` JAAS entry.

Invariants: one token ``authzid NUL authcid NUL passwd`` completes the exchange; an
authorization id, if given, must equal the user name; passwords are compared in constant time.
Every failure is a ``SaslAuthenticationError`` with Kafka's message (PLAIN's messages reveal
nothing a guesser could use).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from kafkapy.security.sasl_server import SaslAuthenticationError

__all__ = ["PLAIN", "PlainSaslServer", "plain_users"]

PLAIN = "PLAIN"
_USER_PREFIX = "user_"


def plain_users(options: Mapping[str, str]) -> dict[str, str]:
    """``{user: password}`` from a PlainLoginModule's options (``user_alice="secret"``)."""
    return {key[len(_USER_PREFIX):]: value for key, value in options.items()
            if key.startswith(_USER_PREFIX)}


class PlainSaslServer:
    """The server side of one PLAIN exchange against ``users`` (``{user: password}``)."""

    mechanism_name = PLAIN

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self._complete = False
        self.authorization_id: str | None = None
        self.credential_expiry_ms: int | None = None

    @property
    def complete(self) -> bool:
        return self._complete

    def evaluate(self, token: bytes) -> bytes:
        """Check the client's one message; an empty challenge on success.

        Raises:
            SaslAuthenticationError: malformed, missing name/password, wrong password, or an
                authorization id other than the user.
        """
        text = token.decode("utf-8", "replace")
        tokens = text.split("\x00")
        if len(tokens) != 3:
            raise SaslAuthenticationError(f"Invalid SASL/PLAIN response: expected 3 tokens, "
                                          f"got {len(tokens)}")
        authzid, user, password = tokens
        if not user:
            raise SaslAuthenticationError("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationError("Authentication failed: password not specified")
        expected = self._users.get(user)
        if expected is None or not hmac.compare_digest(expected.encode("utf-8"),
                                                       password.encode("utf-8")):
            raise SaslAuthenticationError("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise SaslAuthenticationError("Authentication failed: Client requested an "
                                          "authorization id that is different from username")
        self.authorization_id = user
        self._complete = True
        return b""
