"""The SASL server contract and the errors of an exchange, as Kafka's ``javax.security.sasl``
use: what every mechanism module implements.

- ``SaslServer``: ``evaluate(token) -> challenge``; ``complete`` once the client is
  authenticated; ``authorization_id`` then names it (the principal ``User:<id>``).
- ``SaslException``: the exchange failed for a reason not to be told to an unauthenticated
  client (unknown user, wrong proof, malformed message); the authenticator answers Kafka's
  generic "Authentication failed during authentication due to invalid credentials with SASL
  mechanism <m>".
- ``SaslAuthenticationError``: a failure whose message the client may see (Kafka's
  ``SaslAuthenticationException``: PLAIN's "Invalid username or password", ...).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["SaslAuthenticationError", "SaslException", "SaslServer"]


class SaslException(Exception):
    """A failed exchange whose reason stays on the broker (logged, never sent)."""


class SaslAuthenticationError(Exception):
    """A failed exchange whose message is sent to the client."""


class SaslServer(Protocol):
    """One authentication exchange with one client."""

    @property
    def mechanism_name(self) -> str: ...

    @property
    def complete(self) -> bool: ...

    @property
    def authorization_id(self) -> str | None: ...

    @property
    def credential_expiry_ms(self) -> int | None:
        """When the credential presented expires (epoch ms; OAUTHBEARER's token), None if it
        does not: a session never outlives its credential (KIP-368)."""
        ...

    def evaluate(self, token: bytes) -> bytes:
        """The challenge to send for the client's ``token`` (may be empty).

        Raises:
            SaslException, SaslAuthenticationError: the exchange failed.
        """
        ...
