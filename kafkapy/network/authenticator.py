"""What a connection needs from an authenticator (Kafka's ``Authenticator`` on a
``KafkaChannel``): the network layer's side of the contract, implemented by
:mod:`kafkapy.security.authenticator` (SASL). The network knows frames only: the authenticator
gets each frame the connection reads until it is ``complete`` and says what to do with it
(``AuthStep``); it sits on top of whatever byte transport the connection has.

Invariants: an authenticator is used by the one task that owns its connection; once
``complete``, ``principal`` names the client (``User:<name>``) and it sees only the frames it
``intercepts`` (re-authentication, an expired session), after which it may be incomplete
again until the re-authentication completes.
"""

from __future__ import annotations

from typing import Protocol

import attrs

__all__ = ["AuthStep", "Authenticator", "AuthenticatorFactory"]


@attrs.frozen
class AuthStep:
    """What to do with one frame read before authentication completed.

    ``forward``: hand the frame to the request handlers like any request (ApiVersions).
    ``reply``: a response frame (no size prefix) to write. ``close``: close the connection
    after writing ``reply``. ``delay_s``: wait that long before writing ``reply`` and closing
    (Kafka's ``connection.failed.authentication.delay.ms``). A raw SASL token (SaslHandshake
    v0 mode) is a ``reply`` like any other: every frame is size-prefixed.
    """

    forward: bool = False
    reply: bytes | None = None
    close: bool = False
    delay_s: float = 0.0


class Authenticator(Protocol):
    """One connection's authentication (see the module doc)."""

    @property
    def max_receive_size(self) -> int:
        """The largest frame accepted before authentication (``sasl.server.max.receive.size``)."""
        ...

    @property
    def complete(self) -> bool: ...

    @property
    def principal(self) -> str:
        """``User:<name>`` once complete."""
        ...

    def receive(self, frame: bytes | bytearray) -> AuthStep:
        """What to do with the next frame read from the client."""
        ...

    def intercepts(self, frame: bytes | bytearray) -> bool:
        """Once complete: whether ``frame`` goes to ``receive`` again instead of the handlers
        (a re-authentication starting, or a session that has expired)."""
        ...


class AuthenticatorFactory(Protocol):
    """Makes the authenticator of each new connection of a listener."""

    def __call__(self, connection_id: str, client_host: str) -> Authenticator: ...
