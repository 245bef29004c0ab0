"""SaslServerAuthenticator: the SASL state machine of one connection, as Kafka 3.x's
``SaslServerAuthenticator``, sans-IO (frames in, ``AuthStep`` out; the connection task of
:mod:`kafkapy.network.socket_server` does the I/O and the delays).

States (Kafka's ``SaslState``): INITIAL_REQUEST -> HANDSHAKE_OR_VERSIONS_REQUEST ->
HANDSHAKE_REQUEST (after an ApiVersions) -> AUTHENTICATE -> COMPLETE, or FAILED.

- Before the handshake only ApiVersions and SaslHandshake (v0, v1) are read; anything else
  closes the connection at once without an answer (Kafka throws InvalidRequestException
  "Unexpected Kafka request of type <API> during SASL handshake." and the Selector closes the
  channel). ApiVersions is handed to the request handlers (``AuthStep.forward``), once; a
  second one closes the connection, as Kafka's IllegalStateException does; an ApiVersions of
  a version the broker does not serve (answered UNSUPPORTED_VERSION) or an invalid one
  (INVALID_REQUEST: a bad client software name) may be retried.
- SaslHandshake with an enabled mechanism: NONE and the enabled list, then tokens. v0 means
  raw tokens (KIP-43: each client token a size-prefixed frame, each challenge likewise); v1
  means SaslAuthenticate requests (KIP-152). A mechanism not enabled:
  UNSUPPORTED_SASL_MECHANISM with the enabled list, then close.
- In AUTHENTICATE with v1, a request other than SaslAuthenticate fails the authentication:
  it is answered with that API's error response, ILLEGAL_SASL_STATE (``error_response``,
  given by the broker, which knows every API's error shape), after the failure delay, and
  the connection closes.
- A failed exchange: SASL_AUTHENTICATION_FAILED with Kafka's message (the mechanism's own
  for a ``SaslAuthenticationError``, else "Authentication failed during authentication due to
  invalid credentials with SASL mechanism <m>"), written after
  ``connection.failed.authentication.delay.ms``, then the connection closes. In v0 mode
  nothing is written (there is no error frame), the connection closes after the delay.
- Frames above ``sasl.server.max.receive.size`` never get here: the connection's framer has
  that limit until authentication completes, and closes the connection (Kafka:
  "Failing SASL authentication due to invalid receive size").

Re-authentication (KIP-368): with ``connections.max.reauth.ms`` above 0 for the mechanism
(or an OAUTHBEARER token's expiry, whichever comes first) a session has a lifetime, sent in
SaslAuthenticate v1+ as SessionLifetimeMs. After it, the next request closes the connection
(Kafka's "Disconnecting expired channel"), unless it is a SaslHandshake from a client that
spoke SaslAuthenticate v1+ (it knows re-authentication): that re-authenticates the
connection in place (``intercepts`` tells the connection to hand such frames back here). The
mechanism must be the one first used and the principal must not change; a failure closes the
connection as a first authentication's does. Requests wait while it runs (one request at a
time per connection anyway).

Not implemented: GSSAPI (Kerberos).
"""

from __future__ import annotations

import enum
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence

from kafkapy.errors import IllegalSaslStateError, KafkaError
from kafkapy.network.authenticator import AuthStep
from kafkapy.protocol import API_KEYS, ApiKey, decode, decode_request_header, encode_response
from kafkapy.protocol.message_classes import (
    SaslAuthenticateResponse,
    SaslHandshakeResponse,
)
from kafkapy.security.sasl_server import SaslAuthenticationError, SaslException, SaslServer

__all__ = ["SaslServerAuthenticator", "SaslState"]

log = logging.getLogger(__name__)

_UNSUPPORTED_SASL_MECHANISM = 33
_SASL_AUTHENTICATION_FAILED = 58
# SaslHandshake v0-1 and SaslAuthenticate v0-2: what Kafka 3.x serves.
_HANDSHAKE_VERSIONS = range(0, 2)
_AUTHENTICATE_VERSIONS = range(0, 3)


class SaslState(enum.Enum):
    INITIAL_REQUEST = "INITIAL_REQUEST"
    HANDSHAKE_OR_VERSIONS_REQUEST = "HANDSHAKE_OR_VERSIONS_REQUEST"
    HANDSHAKE_REQUEST = "HANDSHAKE_REQUEST"
    AUTHENTICATE = "AUTHENTICATE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"
    REAUTH_BAD_MECHANISM = "REAUTH_BAD_MECHANISM"


class SaslServerAuthenticator:
    """The authenticator of one connection on a SASL listener.

    ``enabled_mechanisms``: the listener's ``sasl.enabled.mechanisms`` (only those kafkapy
    implements); ``new_server(mechanism)`` starts an exchange; ``max_api_versions_version``:
    the newest ApiVersions version the broker answers normally (an older client retries after
    UNSUPPORTED_VERSION); ``failed_delay_ms``: ``connection.failed.authentication.delay.ms``;
    ``error_response(frame, error)``: the response frame answering request ``frame`` with
    ``error`` (None: no answer, just close); ``reauth_ms``: ``connections.max.reauth.ms`` per
    mechanism (absent or 0: sessions do not expire, but for an OAUTHBEARER token's expiry).
    """

    def __init__(self, *, enabled_mechanisms: Sequence[str],
                 new_server: Callable[[str], SaslServer], max_receive_size: int = 524288,
                 failed_delay_ms: int = 100, max_api_versions_version: int = 4,
                 connection_id: str = "", client_host: str = "",
                 error_response: Callable[[bytes | bytearray, KafkaError], bytes | None]
                 | None = None, reauth_ms: Mapping[str, int] | None = None,
                 clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000) -> None:
        self._enabled = list(enabled_mechanisms)
        self._new_server = new_server
        self._max_receive_size = max_receive_size
        self._delay_s = failed_delay_ms / 1000
        self._max_api_versions = max_api_versions_version
        self._connection_id = connection_id
        self._client_host = client_host
        self._error_response = error_response
        self._reauth_ms = dict(reauth_ms or {})
        self._clock_ms = clock_ms
        # KIP-368: when the session ends (ms, the clock_ms clock), whether the client can
        # re-authenticate (it sent SaslAuthenticate v1+), and what a re-authentication must
        # keep (None while none is running).
        self._expires_ms: int | None = None
        self._client_reauthenticates = False
        self._reauth_of: tuple[str, str] | None = None       # (mechanism, principal)
        self._rejected_mechanism = ""       # a re-authentication's other mechanism
        self.state = SaslState.INITIAL_REQUEST
        self._server: SaslServer | None = None
        self._headers = False           # SaslHandshake v1+: tokens in SaslAuthenticate
        self._principal = "User:ANONYMOUS"

    @property
    def max_receive_size(self) -> int:
        return self._max_receive_size

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    @property
    def principal(self) -> str:
        return self._principal

    @property
    def mechanism(self) -> str | None:
        return None if self._server is None else self._server.mechanism_name

    @property
    def session_expires_ms(self) -> int | None:
        """When the session ends (epoch ms), None if it does not."""
        return self._expires_ms

    def intercepts(self, frame: bytes | bytearray) -> bool:
        """Once complete: must ``frame`` come here rather than go to the handlers? Yes for a
        SaslHandshake that starts a re-authentication, and for any request once the session
        has expired. Cheap: called for every request of a SASL connection."""
        if self._expires_ms is None:
            return False
        if self._client_reauthenticates and _is_handshake(frame):
            return True
        return self._clock_ms() > self._expires_ms

    def receive(self, frame: bytes | bytearray) -> AuthStep:
        """The step for the next frame (see the module doc)."""
        if self.state is SaslState.AUTHENTICATE:
            return self._token(frame) if self._headers else self._raw_token(frame)
        if self.state is SaslState.REAUTH_BAD_MECHANISM:
            assert self._reauth_of is not None
            return self._fail(None, f"SASL mechanism '{self._rejected_mechanism}' requested by "
                                    f"client is not supported for re-authentication of "
                                    f"mechanism '{self._reauth_of[0]}'")
        if self.state is SaslState.COMPLETE:
            if self._client_reauthenticates and _is_handshake(frame):
                assert self._server is not None
                self._reauth_of = (self._server.mechanism_name, self._principal)
                self.state = SaslState.HANDSHAKE_REQUEST
                log.debug("Beginning re-authentication of connection %s (%s)",
                          self._connection_id, self._principal)
                return self._kafka_request(frame)
            self.state = SaslState.FAILED
            log.debug("Disconnecting expired channel %s (%s): the session ended at %s",
                      self._connection_id, self._principal, self._expires_ms)
            return AuthStep(close=True)
        if self.state is SaslState.FAILED:
            raise RuntimeError("SASL authentication has failed")
        return self._kafka_request(frame)

    # before the handshake

    def _close(self, reason: str) -> AuthStep:
        self.state = SaslState.FAILED
        log.info("Closing connection %s from %s during SASL authentication: %s",
                 self._connection_id, self._client_host, reason)
        return AuthStep(close=True)

    def _fail(self, reply: bytes | None, reason: str) -> AuthStep:
        self.state = SaslState.FAILED
        log.info("Failed authentication with %s (channelId=%s) (%s)", self._client_host,
                 self._connection_id, reason)
        return AuthStep(reply=reply, close=True, delay_s=self._delay_s)

    def _kafka_request(self, frame: bytes | bytearray) -> AuthStep:
        try:
            header, offset = decode_request_header(frame)
        except Exception as exc:
            if self.state is SaslState.INITIAL_REQUEST:
                return self._close(f"Invalid request, potential reasons: kafka client "
                                   f"configured with the wrong security protocol, it does not "
                                   f"support KIP-43 or it is not a kafka client. ({exc})")
            return self._close(f"unreadable request header ({exc})")
        key = header.api_key
        if key not in (ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE):
            return self._close(f"Unexpected Kafka request of type {ApiKey(key).name} during "
                               f"SASL handshake.")
        if key == ApiKey.API_VERSIONS:
            if self.state is SaslState.HANDSHAKE_REQUEST:
                return self._close("Unexpected ApiVersions request received during SASL "
                                   "authentication state HANDSHAKE_REQUEST")
            self.state = SaslState.HANDSHAKE_OR_VERSIONS_REQUEST
            if header.api_version <= self._max_api_versions and \
                    _valid_api_versions(frame, header.api_version, offset):
                self.state = SaslState.HANDSHAKE_REQUEST
            return AuthStep(forward=True)
        version = header.api_version
        if version not in _HANDSHAKE_VERSIONS:
            return self._close(f"SaslHandshake v{version} is not supported")
        try:
            body = decode(API_KEYS[ApiKey.SASL_HANDSHAKE].request, version,
                          memoryview(frame)[offset:])
        except (KafkaError, ValueError) as exc:
            return self._close(f"SaslHandshake v{version} does not decode ({exc})")
        self._headers = version >= 1
        mechanism = body.mechanism
        if mechanism not in self._enabled:
            reply = encode_response(ApiKey.SASL_HANDSHAKE, version, header.correlation_id,
                                    SaslHandshakeResponse(
                                        error_code=_UNSUPPORTED_SASL_MECHANISM,
                                        mechanisms=list(self._enabled)))
            return self._fail(reply, f"Unsupported SASL mechanism {mechanism}")
        if self._reauth_of is not None and mechanism != self._reauth_of[0]:
            # Kafka answers the handshake, then fails on the first token.
            self._rejected_mechanism = mechanism
            self.state = SaslState.REAUTH_BAD_MECHANISM
        else:
            self._server = self._new_server(mechanism)
            self.state = SaslState.AUTHENTICATE
        return AuthStep(reply=encode_response(
            ApiKey.SASL_HANDSHAKE, version, header.correlation_id,
            SaslHandshakeResponse(error_code=0, mechanisms=list(self._enabled))))

    # tokens

    def _evaluate(self, token: bytes) -> bytes:
        """The mechanism's challenge; on completion, the principal and the session's end.

        Raises:
            SaslException, SaslAuthenticationError: the mechanism's, or a re-authentication
                that would change the principal.
        """
        server = self._server
        assert server is not None
        challenge = server.evaluate(token)
        if server.complete:
            principal = f"User:{server.authorization_id}"
            if self._reauth_of is not None and principal != self._reauth_of[1]:
                raise SaslAuthenticationError(f"Cannot change principals during "
                                              f"re-authentication from {self._reauth_of[1]}: "
                                              f"{principal}")
            self.state = SaslState.COMPLETE
            self._principal = principal
            self._expires_ms = self._session_end(server)
            log.debug("Connection %s from %s %s as %s with %s (session ends at %s)",
                      self._connection_id, self._client_host,
                      "re-authenticated" if self._reauth_of else "authenticated",
                      principal, server.mechanism_name, self._expires_ms)
            self._reauth_of = None
        return challenge

    def _session_end(self, server: SaslServer) -> int | None:
        """Kafka's ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs."""
        now = self._clock_ms()
        reauth = self._reauth_ms.get(server.mechanism_name, 0)
        credential = server.credential_expiry_ms
        if credential is None and reauth <= 0:
            return None
        lifetime = reauth if credential is None else credential - now if reauth <= 0 \
            else min(credential - now, reauth)
        return now + max(lifetime, 0)

    def _session_lifetime_ms(self) -> int:
        """SessionLifetimeMs of the completing SaslAuthenticate response (0: none)."""
        if self.state is not SaslState.COMPLETE or self._expires_ms is None:
            return 0
        return max(self._expires_ms - self._clock_ms(), 0)

    def _raw_token(self, frame: bytes | bytearray) -> AuthStep:
        try:
            return AuthStep(reply=self._evaluate(bytes(frame)))
        except (SaslException, SaslAuthenticationError) as exc:
            return self._fail(None, str(exc))

    def _token(self, frame: bytes | bytearray) -> AuthStep:
        try:
            header, offset = decode_request_header(frame)
        except Exception as exc:
            return self._fail(None, f"unreadable request header ({exc})")
        key, version = header.api_key, header.api_version
        if key != ApiKey.SASL_AUTHENTICATE:
            message = (f"Unexpected Kafka request of type {ApiKey(key).name} during SASL "
                       f"authentication.")
            reply = None if self._error_response is None else \
                self._error_response(frame, IllegalSaslStateError(message))
            return self._fail(reply, message)
        if version not in _AUTHENTICATE_VERSIONS:
            return self._fail(None, f"Version {version} is not supported for apiKey "
                                    f"SASL_AUTHENTICATE")
        try:
            body = decode(API_KEYS[key].request, version, memoryview(frame)[offset:])
        except (KafkaError, ValueError) as exc:
            return self._fail(None, f"SaslAuthenticate v{version} does not decode ({exc})")
        mechanism = self.mechanism
        if version >= 1:
            self._client_reauthenticates = True
        try:
            challenge = self._evaluate(bytes(body.auth_bytes))
        except SaslAuthenticationError as exc:
            return self._fail(self._failed(version, header.correlation_id, str(exc)), str(exc))
        except SaslException as exc:
            message = (f"Authentication failed during authentication due to invalid "
                       f"credentials with SASL mechanism {mechanism}")
            return self._fail(self._failed(version, header.correlation_id, message),
                              f"{message}: {exc}")
        return AuthStep(reply=encode_response(
            key, version, header.correlation_id,
            SaslAuthenticateResponse(error_code=0, error_message=None, auth_bytes=challenge,
                                     session_lifetime_ms=self._session_lifetime_ms())))

    @staticmethod
    def _failed(version: int, correlation_id: int, message: str) -> bytes:
        return encode_response(ApiKey.SASL_AUTHENTICATE, version, correlation_id,
                               SaslAuthenticateResponse(
                                   error_code=_SASL_AUTHENTICATION_FAILED,
                                   error_message=message, auth_bytes=b""))


# Kafka's ApiVersionsRequest.SOFTWARE_NAME_VERSION_PATTERN (the handler checks the same).
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def _valid_api_versions(frame: bytes | bytearray, version: int, offset: int) -> bool:
    """The ApiVersions request is one the handlers answer without error (Kafka's
    ``isValid``): only then does the SASL state move on; after UNSUPPORTED_VERSION or
    INVALID_REQUEST the client may send another."""
    if version < 3:
        return True
    try:
        body = decode(API_KEYS[ApiKey.API_VERSIONS].request, version, memoryview(frame)[offset:])
    except (KafkaError, ValueError):
        return False
    return all(_SOFTWARE.fullmatch(value) is not None
               for value in (body.client_software_name, body.client_software_version))


def _is_handshake(frame: bytes | bytearray) -> bool:
    """The frame is a SaslHandshake request (API key 17, the first INT16 of the header)."""
    return len(frame) >= 2 and frame[0] == 0 and frame[1] == ApiKey.SASL_HANDSHAKE
