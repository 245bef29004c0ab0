"""SocketServer: the broker's listeners and client connections.

Kafka's ``SocketServer`` with Trio tasks instead of threads: a task per listener plays the
Acceptor; the Processor is one task per server, the *poll task*, over the compiled selector
(``kafkapy._selector``, Kafka's ``Selector``) for every connection, PLAINTEXT, SSL, SASL_PLAINTEXT
and SASL_SSL alike. All run in the nursery of ``SocketServer.run``.
The server knows frames, not Kafka APIs: it moves size-prefixed byte frames between sockets
and the ``RequestChannel``.

Theory of operation:

- Acceptor (``_accept_loop``): one listening socket per endpoint ``(name, host, port)``; host
  ``""`` listens on every interface (IPv6 dual stack where available), port 0 picks a free port
  (``bound_endpoints`` tells which). Each accepted connection goes through Kafka's
  ``ConnectionQuotas.inc``: first the connection creation rates (``connection_quotas``,
  KIP-612): over the broker-wide or the listener's rate the acceptor sleeps the throttle time
  before going on (accepting nothing else meanwhile). Then it waits for a connection slot
  (``_wait_for_slot``): while the listener has ``max_connections_per_listener`` connections, or
  the broker ``max_connections`` (all listeners together), the acceptor holds the connection
  unserved and accepts nothing more (the next clients wait in the kernel's listen backlog) until
  a connection closes or a limit is raised. The inter-broker listener, when the broker has more
  than one (``inter_broker_listener``, Kafka's protected listener), waits only for its own
  listener limit: it may take the broker over ``max_connections``, and then the broker closes
  its lowest-priority connections on the other listeners until it is back within it (Kafka's
  ``closeExcessConnections``: connections with no request in flight first, then the least
  recently active, by ``ConnectionLink.last_request_ns``); the same happens when
  ``max_connections`` is lowered below the open connections. Then the IP's rate: over it the
  connection is kept open, unserved, for the throttle time, then closed. Last,
  ``max_connections_per_ip`` (or the override for the address): a connection over it is closed
  at once, with Kafka's log line "Rejected connection from /ip, address already has the
  configured maximum of N connections." ``update_connection_limits`` changes every limit while
  running (dynamic broker configs): a raised limit wakes a waiting acceptor at once; a lowered
  per-IP or listener limit keeps the connections already open. Accepted sockets get TCP_NODELAY,
  keep-alive and ``send_buffer_bytes``; the listening socket carries ``receive_buffer_bytes``
  (inherited by accepted sockets). -1 leaves a buffer at the OS default.
- Processor (``_poll_loop``): each connection is registered with the server's ``Selector``,
  a TLS one after its handshake; its ``_serve`` task then sleeps until the connection
  closes, and logs why. The poll task waits for the selector's one descriptor
  (``trio.lowlevel.wait_readable``), then one compiled ``poll()`` reads every ready socket
  into the selector's receive buffer (1 MiB, shared: an idle connection holds none), cuts the
  frames (``FrameSplitter``) and completes pending writes; a connection that delivers frames
  is muted until they are all answered. The poll task serves each connection's frames in
  order itself (``_drive``): run inline if a handler slot is free and nothing is queued
  (``ConnectionLink.run_inline``), else submitted; answered; written with ``Selector.send``
  (one ``sendmsg`` for the held answers, the prefix, the payload and copied slices, then
  ``sendfile``). The answers to the pipelined Produce frames of one read are held and go out
  in one send, but for a client learnt to wait at a fixed window the first goes out at once
  (``_request``, ``_judge_probes``). So a request costs no wait and no wake of a task of its
  own. A request
  whose answer is not there at once (parked on a delayed operation, or taken by a handler
  task) leaves its connection muted and *parked* (``_park``): the answer's arrival
  (``ConnectionLink.notify``, in the task that delivers it, typically the poll task itself
  completing a fetch or an acks=all produce) puts the connection on the poll task's ready
  queue, which the poll task answers and serves on after its next poll, with no task woken
  for it. Whatever else must wait goes to a task of its own (``_resume``) and the poll task
  goes on with the others: a full channel, a write that met EAGAIN, a quota throttle, and
  every request the poll task must
  not run because its handler may wait for another connection or broker
  (``_never_waits``: only Fetch, ApiVersions and non-transactional Produce run in the poll
  task; SASL authentication too goes to a task). That task serves the rest of the frames,
  unmutes the connection and ends. This is Kafka's muting: one request per connection in the
  handlers, responses in request order, and while the connection waits it is not read, so
  TCP flow control holds the client back instead of the broker buffering. Per connection
  the broker holds at most the frames of one ``recv`` plus one partial frame. Each
  connection gets a turn of ``TURN_S`` (0.5 ms) per poll: frames left after it wait, still
  muted, until the next poll's connections have had theirs (round robin, as Kafka's
  Processor hands out one request per channel per poll), and a poll task that has served
  requests for ``TURN_S`` without waiting passes through the scheduler, so one busy client
  cannot starve the rest of the broker.
- Writing a ``SendResponse``: when its file slices hold at most ``COPY_SLICES_BYTES`` (32 KiB),
  the slices are read (``os.pread``) and the whole response goes out in one write instead of
  one per part. On loopback and fast networks a send costs the sender the
  receiver's TCP work too, so a follower's or a long-polling consumer's small fetch answer
  (prefix and header, the records, the rest of the body) in three sends cost the leader about
  three times one (issue 18's latency profile: sends were a quarter of the leader's CPU).
  Larger responses keep zero copy: on a plaintext connection the selector writes the
  buffers with ``sendmsg`` and the file slices with ``sendfile``, resuming a partial write
  when the socket drains (``Selector.send``); on a TLS connection it copies them (below).
  (Reading the file may still touch the disk on a page-cache miss, as it does in Kafka's
  network threads.)
- TLS (listeners given an ``SslListener``, the SSL protocol): the accepted socket is wrapped
  with the listener's ``ssl.SSLContext`` as a non-blocking ``ssl.SSLSocket`` (OpenSSL reads
  and writes the socket itself: no Python copy between the kernel and OpenSSL, as a
  ``MemoryBIO`` would add). The handshake runs first, in the connection's own task
  (``SSLWantReadError`` / ``SSLWantWriteError`` wait with ``wait_readable`` /
  ``wait_writable``), bounded by ``HANDSHAKE_TIMEOUT_S``; a failed one (a plaintext client,
  an untrusted or expired client certificate under ``ssl.client.auth=required``, random
  bytes) closes that connection with one log line, as Kafka's "Failed authentication with
  /ip (SSL handshake failed)". The principal is then the client certificate's
  (``ssl_principal_mapper``), and the connection is registered with the selector with its
  ``SSLSocket``, which the selector reads and writes through from then on
  (``kafkapy._selector``'s TLS channels): a read takes every TLS record already received
  (one ``SSL_read`` returns at most one record), so a large produce costs one pass through
  the splitter, not one per 16 KiB. There is no ``sendfile`` through TLS (kernel TLS, which
  would allow it, is not exposed by Python's ssl before 3.12): a large response's file
  slices are read with ``os.preadv`` into the selector's pooled chunks and written through
  OpenSSL. Everything above the selector is the same for both transports.
- Authentication (SASL listeners): a listener with an ``AuthenticatorFactory``
  (:mod:`kafkapy.network.authenticator`) gives each connection an authenticator; until it
  is complete every frame goes to it first, and it says whether to hand the frame to the
  handlers (ApiVersions), write a reply, close, or wait (a failed authentication is answered
  after Kafka's delay, then closed). Until then the framer accepts frames of at most the
  authenticator's ``max_receive_size`` (``sasl.server.max.receive.size``); a larger one
  closes the connection. Once complete, the link's ``principal`` is the authenticated one and
  every later request carries it; the authenticator still gets the frames it ``intercepts``
  (a SaslHandshake re-authenticating the connection, KIP-368, or any request once the
  session has expired, which closes it). The authenticator sees frames, not bytes, so it
  sits on either transport: a SASL_SSL listener has both an ``SslListener`` and an
  authenticator factory, the TLS handshake comes first, and the SASL principal replaces the
  certificate's (Kafka's DefaultKafkaPrincipalBuilder takes the SASL authorization id).
- Closing: a size prefix that is negative or above ``max_request_size`` closes the connection
  after the frames before it are answered, with one warning naming the client and the size; a
  connection with nothing to do for ``connections_max_idle_ms`` (waiting to read a request, or
  writing a response without progress) is closed; ``CloseConnection`` from a handler closes it;
  an I/O error closes it. No error on one connection reaches another or the server.
- Graceful stop: ``stop_accepting`` closes the listeners; each connection finishes the request
  it has already handed to the channel (its response is written), then closes; frames read
  but not yet handed over are dropped. ``run`` returns when the last connection is closed.
  Cancelling ``run`` instead closes everything at once.

Every method runs on the broker's Trio event loop; nothing here is thread-safe.
"""

from __future__ import annotations

import collections
import errno
import functools
import ipaddress
import itertools
import logging
import math
import os
import socket
import ssl
import struct
import time
from collections.abc import Hashable, Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple, Protocol

import trio

from kafkapy._frames import size_prefixed
from kafkapy._selector import Channel, FileRegionError, Selector
from kafkapy.errors import InvalidRequestError
from kafkapy.network.authenticator import Authenticator, AuthenticatorFactory
from kafkapy.network.request_channel import (
    CloseConnection,
    ConnectionLink,
    FileSliceLike,
    NoResponse,
    Request,
    RequestChannel,
    Response,
    SendResponse,
)
from kafkapy.network.ssl_factory import SslListener
from kafkapy.network.ssl_principal_mapper import NoMatchingRule, principal_of_certificate

__all__ = ["Endpoint", "SocketServer"]

log = logging.getLogger(__name__)

RECEIVE_SIZE = 1 << 20   # at most what one recv_into takes
# How long a connection task may answer requests without letting the other tasks run (the
# inline ones need not yield at all): a few short requests, or one large one.
TURN_S = 0.0005
INT32_MAX = 2**31 - 1
# The longest a TLS handshake may take (Kafka bounds it by connections.max.idle.ms only; a
# client that connects and sends nothing should not hold a connection slot for ten minutes).
HANDSHAKE_TIMEOUT_S = 10.0
# The early answer (see ``SocketServer._request``): given to the first frame of a read of at
# most this size, on the only connection with frames in the last CALM_READS polls, whose
# client had after its last read as many requests in flight as it has most often (its
# window), by a lead of CALM_READS reads or more (``SocketServer._judge_probes``). A Java
# producer's default batch (16 KiB) is under the size; with 32 KiB or larger frames the
# broker is busy anyway (docs/performance.md).
EARLY_ANSWER_BYTES = 20480
CALM_READS = 8
# A read's probe counts only when the next poll comes this soon after its answers went out:
# sooner than a client over loopback reads them and sends again (10-15 µs at the quickest
# here), so that what the poll finds was sent before.
PROBE_S = 10e-6


def window_vote(window: int, lead: int, in_flight: int) -> tuple[int, int]:
    """One step of a majority vote (Boyer-Moore's) over a client's requests in flight after
    each read (``SocketServer._judge_probes``): the number seen most often (``window``) and
    its lead, after ``in_flight`` is seen. The lead stops at twice CALM_READS, so that a
    client that stops waiting at a window loses the early answer within about CALM_READS
    reads; a number that leads by CALM_READS is a client that waits at it."""
    if in_flight == window:
        return window, min(lead + 1, 2 * CALM_READS)
    if lead > 1:
        return window, lead - 1
    return in_flight, 1


def _errnos(*names: str) -> frozenset[int]:
    return frozenset(getattr(errno, name) for name in names if hasattr(errno, name))


# accept() errors of a client that was gone before we accepted it, which cost nothing (as in
# trio.SocketListener); any other (EMFILE, ENOMEM, ...) is retried after 100 ms, as in
# trio.serve_listeners.
_GONE_ERRNOS = _errnos("ECONNABORTED", "EPROTO", "EPERM", "ENETDOWN", "ENOPROTOOPT",
                       "EHOSTDOWN", "ENONET", "EHOSTUNREACH", "EOPNOTSUPP", "ENETUNREACH",
                       "ETIMEDOUT", "ECONNRESET")
_NO_OVERRIDES: Mapping[str, int] = MappingProxyType({})
_NO_AUTHENTICATORS: Mapping[str, AuthenticatorFactory] = MappingProxyType({})
_NO_PROTOCOLS: Mapping[str, str] = MappingProxyType({})


class ConnectionRateQuotas(Protocol):
    """The connection creation rates (Kafka's ConnectionQuotas rates, KIP-612), kept by the
    server layer (``kafkapy.server.connection_quotas``)."""

    def record_connection(self, listener: str) -> int:
        """Record a new connection on ``listener``; the ms its acceptor waits first."""

    def record_ip(self, listener: str, host: str) -> int:
        """Record a new connection from ``host``; 0, or the ms after which it is closed."""


class Endpoint(NamedTuple):
    """A listener: its name (``PLAINTEXT``, ...), host (``""`` = every interface) and port."""

    name: str
    host: str
    port: int


# Responses whose file slices hold at most this many bytes are copied and sent at once.
COPY_SLICES_BYTES = 32 * 1024


# What serving a selected connection's frame came to (``SocketServer._drive``), and the stages a
# task of its own resumes a waiting request at (``SocketServer._resume``).
_GO_ON, _CLOSE, _DETACHED = 0, 1, 2
_START, _ANSWER, _SENT, _CLOSING = 0, 1, 2, 3


class _SliceFailed(Exception):
    """A file slice could not be sent in full (the file is shorter, closed, unreadable), after
    its size was already promised in the size prefix."""


class _WriteStalled(Exception):
    """The client took no bytes for connections.max.idle.ms."""


class _Connection:
    __slots__ = ("at_window", "auth", "channel", "early_at", "error", "frames",
                 "held", "intake", "lead", "link", "owner", "parked", "probe", "probe_at", "read",
                 "resume", "sock", "timed", "tls", "waiter", "window", "worker")

    def __init__(self, sock: socket.socket, link: ConnectionLink, *,
                 tls: SslListener | None = None, auth: Authenticator | None = None) -> None:
        # A non-blocking socket (an SSLSocket on a TLS listener), read and written by the
        # selector once registered; the TLS handshake before that waits on it with Trio.
        self.sock = sock
        self.link = link
        # The SSL listener's settings on a TLS connection (then ``sock`` is an SSLSocket).
        self.tls = tls
        # The connection's authenticator (SASL listeners), kept for re-authentication.
        self.auth = auth
        # The cancel scope of the phase a graceful stop may interrupt (the TLS handshake,
        # waiting for room in the channel, a throttle's mute), or None.
        self.intake: trio.CancelScope | None = None
        # Once registered with the selector (after a TLS handshake): its channel, the frames
        # read and not yet served (last first: popped from the end), the answers held for one
        # send, the connection's _serve task (parked until the connection closes), the task
        # parked waiting for a send to complete, whether a task of its own serves the
        # connection now (a request that waits), and the error that ends it.
        self.channel: Channel | None = None
        self.frames: list[bytearray] = []
        self.held: list[bytes] = []
        # The early answer (``SocketServer._request``): how many frames the last read
        # brought when several small ones (else 0, and 0 once a task of its own took the
        # connection: a read that waited tells nothing of the client); the answer to the frame
        # served while ``frames`` still holds ``early_at`` of them is written at once; the
        # answers of the read just served that the client has not seen (all but the early
        # one) and when they went out; the number of requests the client has most often in
        # flight after a read, that number's lead (a majority vote), and whether the client
        # had that many after the last read.
        self.read = 0
        self.early_at = 0
        self.probe = 0
        self.probe_at = 0.0
        self.window = 0
        self.lead = 0
        self.at_window = False
        self.owner: trio.lowlevel.Task | None = None
        self.waiter: trio.lowlevel.Task | None = None
        self.worker = False
        self.resume: tuple[int, bool] | None = None     # (stage, hold) handed to ``owner``
        # The poll task's request waits for its answer (``hold`` as ``_request``'s), which
        # puts the connection on the poll task's ready queue when it arrives.
        self.parked: bool | None = None
        self.error: BaseException | None = None
        # The observed requests whose answers are held or still being written by the
        # selector, each with when its connection took the answer: told to the observer once
        # they are written (``_report_sent``: ResponseSendTimeMs ends there). Every send
        # carries the held answers first, so a completed send has written them all.
        self.timed: list[tuple[Request, int]] = []


def _client_ip(host: str) -> str:
    """The canonical text of an address; an IPv4-mapped IPv6 address as plain IPv4."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


class SocketServer:
    """The listeners and connections of one broker, feeding ``channel``.

    Settings, with the Kafka broker configuration each one is:

    - ``listeners``: ``(name, host, port)`` per endpoint (``listeners``); names are unique.
    - ``max_request_size``: largest request frame, size prefix excluded
      (``socket.request.max.bytes``).
    - ``connections_max_idle_ms``: close a connection idle that long
      (``connections.max.idle.ms``); negative: never.
    - ``max_connections``, ``max_connections_per_ip``, ``max_connections_per_ip_overrides``
      (address or host name -> limit): ``max.connections``, ``max.connections.per.ip``,
      ``max.connections.per.ip.overrides``.
    - ``max_connections_per_listener``: listener name -> limit
      (``listener.name.<l>.max.connections``, which falls back to ``max.connections`` in
      Kafka); a listener not named has none of its own. At ``max_connections`` or its
      listener's limit an acceptor waits for a connection to close, as Kafka's does.
    - ``inter_broker_listener``: the listener brokers connect to (``inter.broker.listener.name``),
      exempt from ``max_connections`` when there is more than one listener (Kafka's protected
      listener; see the module docstring). All four limits change with
      ``update_connection_limits``.
    - ``connection_quotas``: the connection creation rates (``max.connection.creation.rate``,
      per listener, per IP ``connection_creation_rate``); None: no rate limits.
    - ``send_buffer_bytes``, ``receive_buffer_bytes``: SO_SNDBUF / SO_RCVBUF, -1 for the OS
      default (``socket.send.buffer.bytes``, ``socket.receive.buffer.bytes``).
    - ``listen_backlog_size``: the listen queue (``socket.listen.backlog.size``).
    - ``ssl_listeners``: listener name -> ``SslListener`` for the listeners whose protocol is
      SSL or SASL_SSL (``ssl_factory``); the others serve plaintext.
    - ``security_protocols``: listener name -> its protocol (``listener.security.protocol.map``),
      which each connection's link carries (default: SSL for the ``ssl_listeners``, PLAINTEXT
      for the others).
    - ``authenticators``: listener name -> the factory of its connections' authenticators
      (SASL listeners, over plaintext or TLS).

    Raises:
        ValueError: an invalid setting, or two listeners with the same name.
    """

    def __init__(self, channel: RequestChannel, listeners: Sequence[tuple[str, str, int]], *,
                 max_request_size: int = 104857600,
                 connections_max_idle_ms: int = 600000,
                 max_connections: int = INT32_MAX,
                 max_connections_per_ip: int = INT32_MAX,
                 max_connections_per_ip_overrides: Mapping[str, int] = _NO_OVERRIDES,
                 max_connections_per_listener: Mapping[str, int] = _NO_OVERRIDES,
                 connection_quotas: ConnectionRateQuotas | None = None,
                 inter_broker_listener: str | None = None,
                 send_buffer_bytes: int = 102400,
                 receive_buffer_bytes: int = 102400,
                 listen_backlog_size: int = 50,
                 ssl_listeners: Mapping[str, SslListener] | None = None,
                 security_protocols: Mapping[str, str] = _NO_PROTOCOLS,
                 authenticators: Mapping[str, AuthenticatorFactory] = _NO_AUTHENTICATORS
                 ) -> None:
        endpoints = tuple(Endpoint(*listener) for listener in listeners)
        names = [endpoint.name for endpoint in endpoints]
        if len(set(names)) != len(names):
            raise ValueError(f"listener names must be unique: {names}")
        for endpoint in endpoints:
            if not 0 <= endpoint.port <= 65535:
                raise ValueError(f"invalid port in {endpoint}")
        if not 0 <= max_request_size <= INT32_MAX:
            raise ValueError(f"max_request_size must be in [0, {INT32_MAX}]")
        _check_limits(max_connections, max_connections_per_ip,
                      max_connections_per_ip_overrides, max_connections_per_listener)
        for name, value in (("send_buffer_bytes", send_buffer_bytes),
                            ("receive_buffer_bytes", receive_buffer_bytes)):
            if value != -1 and value <= 0:
                raise ValueError(f"{name} must be positive or -1, not {value}")
        if listen_backlog_size < 1:
            raise ValueError("listen_backlog_size must be at least 1")
        self._channel = channel
        self._endpoints = endpoints
        self._max_request_size = max_request_size
        self._idle_s = (math.inf if connections_max_idle_ms < 0
                        else connections_max_idle_ms / 1000)
        self._max_connections = max_connections
        self._max_per_ip = max_connections_per_ip
        self._override_config = dict(max_connections_per_ip_overrides)
        self._overrides: dict[str, int] = {}
        self._max_per_listener = dict(max_connections_per_listener)
        self._per_listener: dict[str, int] = {}
        # Kafka's protectedListener: the inter-broker listener of a broker with several.
        self._protected = inter_broker_listener if len(endpoints) > 1 else None
        # Set (and replaced) when a connection closes or a limit changes: wakes acceptors
        # waiting for a slot.
        self._slot_freed = trio.Event()
        # Each connection task's cancel scope (closing a connection from outside it, for
        # closeExcessConnections), and the connections so closed but not yet gone.
        self._scopes: dict[_Connection, trio.CancelScope] = {}
        self._evicting: set[_Connection] = set()
        # Where host-name overrides are resolved after a live update (the connections'
        # nursery while running), and which update's resolution is the latest.
        self._nursery: trio.Nursery | None = None
        self._overrides_version = 0
        self._rates = connection_quotas
        self._send_buffer_bytes = send_buffer_bytes
        self._receive_buffer_bytes = receive_buffer_bytes
        self._backlog = listen_backlog_size
        self._ssl = dict(ssl_listeners or {})
        self._protocols = {e.name: security_protocols.get(
            e.name, "SSL" if e.name in self._ssl else "PLAINTEXT") for e in endpoints}
        self._authenticators = dict(authenticators)
        self._bound: tuple[Endpoint, ...] = ()
        self._connections: set[_Connection] = set()
        self._per_ip: dict[str, int] = {}
        self._ids = itertools.count()
        self._started = False
        self._draining = False
        self._accept_scope: trio.CancelScope | None = None
        self._listeners_closed = trio.Event()
        # The connections' selector, whether its poll task sleeps on the selector's
        # descriptor (``_wake_poller`` then makes it readable: ``Selector.wakeup``, no cancel
        # scope per wait), and the count of selected connections not yet closed (the poll
        # task ends at zero when the server drains). The tasks that serve a waiting request
        # run in ``_nursery``, the connections' nursery.
        self._selector: Selector | None = None
        self._poll_sleeps = False
        self._selected = 0
        # Selected connections whose frames the poll task left unserved after their turn
        # (TURN_S): served again, round robin, after the next poll, so that a client with
        # thousands of requests in one read cannot hold back the others (Kafka's Processor
        # hands out one request per channel per poll).
        self._turns_over: collections.deque[_Connection] = collections.deque()
        # Parked connections whose answer has arrived (``_park``): answered by the poll
        # task after its next poll, then served on.
        self._ready: collections.deque[_Connection] = collections.deque()
        # Connections whose read of several frames the poll task has just answered: the next
        # poll shows whether their clients sent more meanwhile (``_judge_probes``).
        self._probes: list[_Connection] = []
        # The connection that alone had frames in the last polls with any, and in how many
        # polls in a row (``_poll_loop``'s ``alone``).
        self._solo: Hashable | None = None
        self._solo_polls = 0

    @property
    def bound_endpoints(self) -> tuple[Endpoint, ...]:
        """The endpoints with their real ports, once ``run`` has started (empty before)."""
        return self._bound

    @property
    def ssl_listeners(self) -> Mapping[str, SslListener]:
        """The TLS settings new connections of each SSL listener get."""
        return MappingProxyType(self._ssl)

    def update_ssl_listener(self, name: str, tls: SslListener) -> None:
        """Serve the SSL listener ``name``'s new connections with ``tls`` (a dynamic key store
        update); connections already open keep the context they were made with, as in Kafka.

        Raises:
            KeyError: ``name`` is not an SSL listener of this server.
        """
        if name not in self._ssl:
            raise KeyError(name)
        self._ssl[name] = tls

    def update_connection_limits(self, *, max_connections: int, max_connections_per_ip: int,
                                 max_connections_per_ip_overrides: Mapping[str, int],
                                 max_connections_per_listener: Mapping[str, int]) -> None:
        """Apply new connection limits now (Kafka's dynamic ``max.connections``,
        ``max.connections.per.ip``, its overrides and ``listener.name.<l>.max.connections``):
        acceptors waiting for a slot look again at once; over a lowered ``max_connections``
        the lowest-priority connections of the unprotected listeners are closed (Kafka's
        processors do so on every poll); connections over a lowered per-IP or listener limit
        stay open. Overrides naming a host are resolved in the background (the previous ones
        hold meanwhile).

        Raises:
            ValueError: a negative limit.
        """
        _check_limits(max_connections, max_connections_per_ip,
                      max_connections_per_ip_overrides, max_connections_per_listener)
        changes = []
        if max_connections != self._max_connections:
            changes.append(f"max.connections={max_connections}")
        if max_connections_per_ip != self._max_per_ip:
            changes.append(f"max.connections.per.ip={max_connections_per_ip}")
        if dict(max_connections_per_ip_overrides) != self._override_config:
            changes.append("max.connections.per.ip.overrides=" + ",".join(
                f"{host}:{count}" for host, count in max_connections_per_ip_overrides.items()))
        if dict(max_connections_per_listener) != self._max_per_listener:
            changes.append("listener limits " + ",".join(
                f"{name}:{count}" for name, count in max_connections_per_listener.items()))
        if not changes:
            return
        log.info("Updating connection limits: %s", "; ".join(changes))
        self._max_connections = max_connections
        self._max_per_ip = max_connections_per_ip
        self._max_per_listener = dict(max_connections_per_listener)
        if dict(max_connections_per_ip_overrides) != self._override_config:
            self._override_config = dict(max_connections_per_ip_overrides)
            self._overrides_version += 1
            if all(_is_ip(host) for host in self._override_config):
                self._overrides = {_client_ip(host): count
                                   for host, count in self._override_config.items()}
            elif self._nursery is not None:
                self._nursery.start_soon(self._refresh_overrides, self._override_config,
                                         self._overrides_version)
        self._wake_acceptors()
        self._close_excess()

    @property
    def connection_count(self) -> int:
        """Open client connections."""
        return len(self._connections)

    def connection_count_from(self, host: str) -> int:
        """Open client connections from address ``host`` (what ``max_connections_per_ip``
        bounds)."""
        return self._per_ip.get(_client_ip(host), 0)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Listen on every endpoint and serve connections; use with ``nursery.start``, which
        returns once every listener is bound. Returns after ``stop_accepting`` when the last
        connection has closed; cancel it to close everything at once.

        Raises:
            OSError: a listener cannot be opened (address in use, unknown host, ...), or an
                override's host name does not resolve.
            RuntimeError: called more than once.
        """
        if self._started:
            raise RuntimeError("SocketServer.run can be called only once")
        self._started = True
        listening: list[tuple[Endpoint, trio.socket.SocketType]] = []
        try:
            self._overrides = await self._resolve_overrides(self._override_config)
            for endpoint in self._endpoints:
                listening.append((endpoint, await self._open_listener(endpoint)))
            self._bound = tuple(endpoint._replace(port=sock.getsockname()[1])
                                for endpoint, sock in listening)
            for endpoint in self._bound:
                log.info("Listening for connections on %s:%d (listener %s)",
                         endpoint.host, endpoint.port, endpoint.name)
            self._selector = Selector(RECEIVE_SIZE)
            async with trio.open_nursery() as connections:
                self._nursery = connections
                connections.start_soon(self._poll_loop, name="kafkapy-selector")
                with trio.CancelScope() as self._accept_scope:
                    if self._draining:
                        self._accept_scope.cancel()
                    async with trio.open_nursery() as acceptors:
                        for endpoint, (_, sock) in zip(self._bound, listening, strict=True):
                            acceptors.start_soon(self._accept_loop, endpoint, sock, connections)
                        task_status.started()
                for _, sock in listening:
                    sock.close()
                self._listeners_closed.set()
                log.info("Stopped accepting connections; %d open", len(self._connections))
        finally:
            for _, sock in listening:
                sock.close()
            self._accept_scope = None
            self._nursery = None
            self._listeners_closed.set()
            if self._selector is not None:
                self._selector.close()

    async def stop_accepting(self) -> None:
        """Close the listeners (returns once they are closed) and start the graceful stop:
        every connection finishes the request it has in flight, writes its response and
        closes; idle connections close now. ``run`` returns when all are closed."""
        self._draining = True
        if self._accept_scope is not None:
            self._accept_scope.cancel()
        for conn in self._connections:
            if conn.intake is not None:
                conn.intake.cancel()
        self._wake_poller()
        if self._started:
            await self._listeners_closed.wait()
        else:
            await trio.lowlevel.checkpoint()

    # Acceptor

    async def _resolve_overrides(self, config: Mapping[str, int]) -> dict[str, int]:
        resolved: dict[str, int] = {}
        for host, count in config.items():
            if _is_ip(host):
                resolved[_client_ip(host)] = count
                continue
            for *_, sockaddr in await trio.socket.getaddrinfo(
                    host, None, type=trio.socket.SOCK_STREAM):
                resolved[_client_ip(str(sockaddr[0]))] = count
        return resolved

    async def _refresh_overrides(self, config: Mapping[str, int], version: int) -> None:
        """Resolve live-updated overrides naming hosts; a later update wins over this one."""
        try:
            resolved = await self._resolve_overrides(config)
        except (OSError, UnicodeError) as exc:     # unknown host, or a name IDNA refuses
            log.error("Cannot resolve max.connections.per.ip.overrides %s: %s; keeping the "
                      "previous overrides", dict(config), exc)
            return
        if version == self._overrides_version:
            self._overrides = resolved

    async def _open_listener(self, endpoint: Endpoint) -> trio.socket.SocketType:
        if endpoint.host == "":
            try:
                return await self._bind(trio.socket.AF_INET6, ("::", endpoint.port),
                                        dual_stack=True)
            except OSError as exc:  # no IPv6 here: IPv4 only
                if exc.errno == errno.EADDRINUSE:
                    raise
                return await self._bind(trio.socket.AF_INET, ("0.0.0.0", endpoint.port))
        infos = await trio.socket.getaddrinfo(endpoint.host, endpoint.port,
                                              type=trio.socket.SOCK_STREAM,
                                              flags=trio.socket.AI_PASSIVE)
        family, _, _, _, address = infos[0]
        return await self._bind(family, address)

    async def _bind(self, family: int, address: object, *, dual_stack: bool = False
                    ) -> trio.socket.SocketType:
        sock = trio.socket.socket(family, trio.socket.SOCK_STREAM)
        try:
            if os.name != "nt":
                sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_REUSEADDR, 1)
            if dual_stack:
                sock.setsockopt(trio.socket.IPPROTO_IPV6, trio.socket.IPV6_V6ONLY, 0)
            if self._receive_buffer_bytes != -1:
                sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_RCVBUF,
                                self._receive_buffer_bytes)
            await sock.bind(address)
            sock.listen(self._backlog)
        except BaseException:
            sock.close()
            raise
        return sock

    async def _accept_loop(self, endpoint: Endpoint, listener: trio.socket.SocketType,
                           connections: trio.Nursery) -> None:
        while True:
            try:
                sock, address = await listener.accept()
            except OSError as exc:
                if exc.errno in _GONE_ERRNOS:
                    log.debug("Accepting on listener %s: %s", endpoint.name, exc)
                    await trio.lowlevel.checkpoint()
                else:  # out of descriptors or memory, or unexpected: wait rather than spin
                    log.error("Accepting on listener %s failed: %s; retrying in 100 ms",
                              endpoint.name, exc)
                    await trio.sleep(0.1)
                continue
            try:
                throttled_ms = await self._wait_for_slot(endpoint, address)
                if throttled_ms > 0:
                    connections.start_soon(self._close_later, sock, throttled_ms)
                    continue
            except BaseException:
                sock.close()
                raise
            if not self._admit(sock, address):
                continue
            conn = self._new_connection(endpoint, sock, address)
            if conn is not None:
                scope = self._scopes[conn] = trio.CancelScope()
                connections.start_soon(self._run_connection, conn, scope,
                                       name=conn.link.connection_id)
                # Only a protected listener's connection can take the broker over.
                self._close_excess()

    async def _wait_for_slot(self, endpoint: Endpoint, address: object) -> int:
        """Kafka's ``ConnectionQuotas.inc`` up to the count checks: record the connection on
        the broker and listener rates and wait (this listener's acceptor accepts nothing
        meanwhile) for their throttle time and for a free slot under the listener's and the
        broker's ``max.connections`` (``_slot_available``); then record it on its IP's rate.
        0: go on; > 0: the IP is over its rate, close the connection after that many ms."""
        if self._rates is not None:
            wait_ms = self._rates.record_connection(endpoint.name)
            if wait_ms > 0:
                log.debug("Connection rate of listener %s over its quota: accepting again "
                          "in %d ms", endpoint.name, wait_ms)
                await trio.sleep(wait_ms / 1000)
        while not self._slot_available(endpoint.name):
            # Kafka's acceptor blocks too: the next clients wait in the listen backlog.
            await self._slot_freed.wait()
        if self._rates is not None:
            host, _ = _peer(address)
            throttle_ms = self._rates.record_ip(endpoint.name, host)
            if throttle_ms > 0:
                log.debug("Delaying closing of connection from %s for %d ms", host,
                          throttle_ms)
                return throttle_ms
        return 0

    async def _close_later(self, sock: trio.socket.SocketType, delay_ms: int) -> None:
        """Kafka's throttled-socket close: an IP over its connection rate gets its connection
        closed only after the throttle time, so that it does not reconnect at once."""
        try:
            await trio.sleep(delay_ms / 1000)
        finally:
            sock.close()

    def _slot_available(self, listener: str) -> bool:
        """Kafka's ``connectionSlotAvailable``: under the listener's limit and, unless the
        listener is protected, under the broker's."""
        limit = self._max_per_listener.get(listener)
        if limit is not None and self._per_listener.get(listener, 0) >= limit:
            return False
        return listener == self._protected or len(self._connections) < self._max_connections

    def _wake_acceptors(self) -> None:
        self._slot_freed.set()
        self._slot_freed = trio.Event()

    def _close_excess(self) -> None:
        """Kafka's ``closeExcessConnections``: while the broker has more than
        ``max_connections`` (a protected listener's connection, or a lowered limit), close
        the lowest-priority connections of the other listeners: those with no request in
        flight first, then the least recently active (the oldest last request: Kafka's
        selector picks its least recently used channel). Connections already being closed
        count as gone."""
        excess = len(self._connections) - len(self._evicting) - self._max_connections
        if excess <= 0:
            return
        candidates = [conn for conn in self._scopes
                      if conn not in self._evicting and conn.link.listener_name != self._protected]
        candidates.sort(key=lambda conn: (conn.link.in_flight, conn.link.last_request_ns))
        for conn in candidates[:excess]:
            link = conn.link
            log.info("Closing connection %s from %s:%d on listener %s: the broker has more "
                     "than max.connections=%d connections", link.connection_id,
                     link.client_host, link.client_port, link.listener_name,
                     self._max_connections)
            self._evicting.add(conn)
            self._scopes[conn].cancel()

    async def _run_connection(self, conn: _Connection, scope: trio.CancelScope) -> None:
        """The connection's task: ``_serve`` inside a scope ``_close_excess`` may cancel (its
        cleanup, which frees the slot, runs either way)."""
        try:
            with scope:
                await self._serve(conn)
        finally:
            del self._scopes[conn]
            self._evicting.discard(conn)

    def _admit(self, sock: trio.socket.SocketType, address: object) -> bool:
        """False, and ``sock`` closed, when its address is at its connection limit
        (``max.connections.per.ip`` or its override: Kafka's TooManyConnectionsException,
        closed at once with Kafka's log line)."""
        host, _ = _peer(address)
        limit = self._overrides.get(host, self._max_per_ip)
        if self._per_ip.get(host, 0) < limit:
            return True
        log.info("Rejected connection from /%s, address already has the configured maximum "
                 "of %d connections.", host, limit)
        sock.close()
        return False

    def _new_connection(self, endpoint: Endpoint, sock: trio.socket.SocketType,
                        address: object) -> _Connection | None:
        host, port = _peer(address)
        try:
            sock.setsockopt(trio.socket.IPPROTO_TCP, trio.socket.TCP_NODELAY, 1)
            sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_KEEPALIVE, 1)
            if self._send_buffer_bytes != -1:
                sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_SNDBUF,
                                self._send_buffer_bytes)
            local_host, local_port = _peer(sock.getsockname())
        except OSError as exc:  # the client is already gone
            log.debug("Dropping connection from %s:%d: %s", host, port, exc)
            sock.close()
            return None
        connection_id = f"{local_host}:{local_port}-{host}:{port}-{next(self._ids)}"
        raw = socket.socket(fileno=sock.detach())
        raw.setblocking(False)
        tls = self._ssl.get(endpoint.name)
        if tls is not None:
            try:
                raw = tls.context.wrap_socket(raw, server_side=True,
                                              do_handshake_on_connect=False)
            except OSError as exc:
                log.debug("Dropping connection from %s:%d: %s", host, port, exc)
                raw.close()
                return None
        factory = self._authenticators.get(endpoint.name)
        conn = _Connection(raw, ConnectionLink(
            self._channel, connection_id, endpoint.name, host, port,
            security_protocol=self._protocols[endpoint.name]),
            tls=tls, auth=None if factory is None else factory(connection_id, host))
        self._connections.add(conn)
        self._per_ip[host] = self._per_ip.get(host, 0) + 1
        self._per_listener[endpoint.name] = self._per_listener.get(endpoint.name, 0) + 1
        return conn

    # Processor

    async def _serve(self, conn: _Connection) -> None:
        link = conn.link
        log.debug("Accepted connection %s on listener %s", link.connection_id,
                  link.listener_name)
        try:
            if conn.tls is None or await self._handshake(conn):
                await self._serve_selected(conn)
        except InvalidRequestError as exc:
            log.warning("Closing connection %s from %s:%d on listener %s: %s",
                        link.connection_id, link.client_host, link.client_port,
                        link.listener_name, exc.message)
        except (_SliceFailed, FileRegionError) as exc:
            log.warning("Closing connection %s from %s:%d: %s", link.connection_id,
                        link.client_host, link.client_port, exc)
        except _WriteStalled:
            log.info("Closing connection %s from %s:%d: the client read nothing for %s ms",
                     link.connection_id, link.client_host, link.client_port,
                     int(self._idle_s * 1000))
        except EOFError:
            log.debug("Connection %s closed by the client", link.connection_id)
        except OSError as exc:
            log.debug("Closing connection %s: %s", link.connection_id, exc)
        except Exception:
            log.exception("Unexpected error on connection %s from %s:%d; closing it",
                          link.connection_id, link.client_host, link.client_port)
        finally:
            link.close()
            if conn.channel is not None:
                self._end(conn)
            conn.sock.close()
            self._connections.discard(conn)
            left = self._per_ip[link.client_host] - 1
            if left:
                self._per_ip[link.client_host] = left
            else:
                del self._per_ip[link.client_host]
            self._per_listener[link.listener_name] -= 1
            self._slot_freed.set()
            self._slot_freed = trio.Event()

    async def _handshake(self, conn: _Connection) -> bool:
        """The TLS handshake of a new connection, and its principal from the client
        certificate: True when it may serve requests; False (logged) when it must close."""
        link, sock, tls = conn.link, conn.sock, conn.tls
        assert isinstance(sock, ssl.SSLSocket) and tls is not None
        scope = self._intake(conn, trio.current_time() + HANDSHAKE_TIMEOUT_S)
        reason: str | None = None
        try:
            with scope:
                while True:
                    try:
                        sock.do_handshake()
                        break
                    except ssl.SSLWantReadError:
                        await trio.lowlevel.wait_readable(sock)
                    except ssl.SSLWantWriteError:
                        await trio.lowlevel.wait_writable(sock)
        except (ssl.SSLEOFError, ssl.SSLZeroReturnError) as exc:
            # The client went away mid-handshake (as Kafka, a disconnection, not a failed
            # authentication: a peer that gave up, a broker's channel being replaced).
            log.debug("Connection %s from %s:%d closed during the TLS handshake: %s",
                      link.connection_id, link.client_host, link.client_port, exc)
            return False
        except ssl.SSLError as exc:
            reason = str(exc) or type(exc).__name__
        except OSError as exc:
            log.debug("Connection %s from %s:%d failed during the TLS handshake: %s",
                      link.connection_id, link.client_host, link.client_port, exc)
            return False
        finally:
            conn.intake = None
        if scope.cancelled_caught:
            if self._draining:
                return False
            reason = f"no handshake within {HANDSHAKE_TIMEOUT_S:g} s"
        if reason is None:
            try:
                link.principal = principal_of_certificate(
                    tls.principal_mapper, sock.getpeercert(binary_form=True))
            except NoMatchingRule as exc:
                log.info("Failed authentication with /%s (%s) on listener %s, connection %s",
                         link.client_host, exc, link.listener_name, link.connection_id)
                return False
            except ValueError as exc:     # a certificate cryptography cannot read
                reason = f"unreadable client certificate: {exc}"
            else:
                log.debug("TLS connection %s: %s, %s, principal %s", link.connection_id,
                          sock.version(), sock.cipher(), link.principal)
                return True
        log.info("Failed authentication with /%s (SSL handshake failed) on listener %s, "
                 "connection %s: %s", link.client_host, link.listener_name,
                 link.connection_id, reason)
        return False

    # Processor: one poll task over the selector

    async def _serve_selected(self, conn: _Connection) -> None:
        """The connection's own task while the poll task serves it: registers it, then sleeps
        until it is closed (``_end``), and raises the error that closed it, if any, for
        ``_serve`` to log. Meanwhile it serves the connection's requests that must wait,
        when the poll task hands them over (``_detach``): a task that already exists, woken
        directly, costs less than a new one per waiting request."""
        if self._draining or self._selector is None:
            return
        limit = self._max_request_size if conn.auth is None else \
            min(self._max_request_size, conn.auth.max_receive_size)
        sock = conn.sock
        conn.channel = self._selector.register(
            sock.fileno(), conn, limit, sock if isinstance(sock, ssl.SSLSocket) else None)
        self._selected += 1
        self._wake_poller()     # its bytes may already be there: no edge would say so
        try:
            while True:
                conn.owner = trio.lowlevel.current_task()

                def abort(_: object) -> trio.lowlevel.Abort:
                    conn.owner = None
                    return trio.lowlevel.Abort.SUCCEEDED

                await trio.lowlevel.wait_task_rescheduled(abort)
                if conn.channel is None or conn.resume is None:
                    break
                stage, hold = conn.resume
                conn.resume = None
                await self._resume(conn, stage, hold)
                if conn.channel is None:
                    break
        finally:
            self._selected -= 1
            self._end(conn)
            if self._draining:
                self._wake_poller()     # it ends with the last selected connection
        if conn.error is not None:
            raise conn.error

    def _end(self, conn: _Connection, error: BaseException | None = None) -> None:
        """Close a selected connection: unregistered at once, its ``_serve`` task woken to
        close the socket and log ``error``. Idempotent (the first error counts)."""
        channel, conn.channel = conn.channel, None
        if channel is None:
            return
        if self._solo is conn:
            self._solo = None
        if conn.error is None:
            conn.error = error
        assert self._selector is not None
        self._selector.unregister(channel)
        conn.link.close()
        if conn.timed:
            # Answers the connection will never write are still answered requests (Kafka's
            # processDisconnected records its in-flight responses' metrics too).
            self._report_sent(conn)
        for task in (conn.owner, conn.waiter):      # the same task never sits in both
            if task is not None:
                trio.lowlevel.reschedule(task)
        conn.owner = conn.waiter = None
        if self._draining:
            self._wake_poller()

    def _wake_poller(self) -> None:
        if self._poll_sleeps and self._selector is not None:
            self._poll_sleeps = False
            self._selector.wakeup()

    async def _poll_loop(self) -> None:
        """The selected connections' Processor: take every ready connection's frames and
        completed sends, serve the frames here (``_drive``) as far as they need no wait, and
        wait for the selector's descriptor only when a poll finds nothing (the bytes of the
        next requests often arrive while these are served: no pass through Trio's epoll)."""
        selector = self._selector
        assert selector is not None
        fd = selector.fileno()
        async with trio.open_nursery() as expiry:
            expiry.start_soon(self._expire_loop, selector)
            turn = time.perf_counter()
            while True:
                if self._draining:
                    for open_conn in list(self._connections):
                        if open_conn.channel is not None and not open_conn.worker and \
                                open_conn.parked is None:
                            log.debug("Closing connection %s: the server is stopping",
                                      open_conn.link.connection_id)
                            self._end(open_conn)
                    if not self._selected:
                        break
                results = selector.poll()
                if self._probes:
                    self._judge_probes(results)
                turns_over = self._turns_over
                ready = self._ready
                # One connection's frames and nothing else to do, for CALM_READS polls in a
                # row: its early answer (see ``_request``) lets a client that waits turn
                # round while the rest are served (with others to serve the broker is busy
                # anyway, and it would only add a send).
                if results:
                    solo = results[0][0] if len(results) == 1 else None
                    if solo is None or solo is not self._solo:
                        self._solo, self._solo_polls = solo, 0
                    elif self._solo_polls < CALM_READS:
                        self._solo_polls += 1
                alone = self._solo_polls >= CALM_READS and len(results) == 1 and \
                    not turns_over and not ready
                if not results and not selector.pending and not turns_over and not ready:
                    self._poll_sleeps = True
                    try:
                        await trio.lowlevel.wait_readable(fd)
                    finally:
                        self._poll_sleeps = False
                    turn = time.perf_counter()
                    continue
                for key, frames, sent, error in results:
                    conn = key
                    assert isinstance(conn, _Connection)
                    if conn.channel is None:
                        continue
                    if frames:
                        frames.reverse()
                        conn.frames = frames
                        if len(frames) > 1 and len(frames[-1]) <= EARLY_ANSWER_BYTES:
                            conn.read = len(frames)     # small frames: the early answer's case
                            if alone and conn.at_window and conn.lead >= CALM_READS:
                                conn.early_at = conn.read
                    if error is not None:
                        conn.error = error      # after the frames read before it
                    if sent and conn.timed and conn.waiter is None and \
                            not conn.channel.sending:
                        self._report_sent(conn)     # written, and no task waits to tell it
                    if conn.worker:
                        # Its own task serves it: wake it if it waits for a send
                        if (sent or error is not None) and conn.waiter is not None:
                            waiter, conn.waiter = conn.waiter, None
                            trio.lowlevel.reschedule(waiter)
                        continue
                    if conn.parked is not None:
                        continue        # muted until its answer comes (then ``ready``)
                    try:
                        await self._drive(conn, poller=True)
                    except Exception as exc:
                        self._end(conn, exc)
                for _ in range(len(turns_over)):
                    conn = turns_over.popleft()
                    if conn.channel is None or conn.worker:
                        continue
                    try:
                        await self._drive(conn, poller=True)
                    except Exception as exc:
                        self._end(conn, exc)
                for _ in range(len(ready)):
                    conn = ready.popleft()
                    hold, conn.parked = conn.parked, None
                    if conn.channel is None or hold is None:
                        continue
                    try:
                        await self._carry_on(
                            conn, await self._answer(conn, poller=True, hold=hold),
                            poller=True)
                    except Exception as exc:
                        self._end(conn, exc)
                if time.perf_counter() - turn > TURN_S:
                    await trio.lowlevel.checkpoint()
                    turn = time.perf_counter()
            expiry.cancel_scope.cancel()

    async def _expire_loop(self, selector: Selector) -> None:
        if self._idle_s == math.inf:
            return
        while True:
            await trio.sleep(min(1.0, self._idle_s / 4))
            self._expire(selector)

    def _expire(self, selector: Selector) -> None:
        """Close the connections idle for connections.max.idle.ms: waiting for a request, or
        writing to a client that takes nothing."""
        for conn in selector.expired(self._idle_s):
            assert isinstance(conn, _Connection)
            link = conn.link
            if conn.channel is not None and conn.channel.sending:
                self._end(conn, _WriteStalled())
            else:
                log.debug("Closing connection %s from %s:%d: idle for more than %s ms",
                          link.connection_id, link.client_host, link.client_port,
                          int(self._idle_s * 1000))
                self._end(conn)

    def _detach(self, conn: _Connection, stage: int, *, hold: bool = False) -> int:
        """Hand ``conn`` to its own task from ``stage`` on (the poll task must not wait on
        one connection); ``hold``: as ``_request``'s."""
        owner, conn.owner = conn.owner, None
        assert owner is not None, "the connection's task sleeps while the poll task serves it"
        conn.worker = True
        conn.read = conn.early_at = 0      # (see ``_Connection.read``)
        conn.resume = (stage, hold)
        trio.lowlevel.reschedule(owner)
        return _DETACHED

    def _park(self, conn: _Connection, hold: bool) -> int:
        """The poll task's request waits for its answer (a parked request, or one in a
        handler task): the connection stays muted and the poll task goes on; the answer's
        arrival puts it on the ready queue (no task waits for it)."""
        conn.parked = hold
        conn.link.notify(functools.partial(self._answered, conn))
        return _DETACHED

    def _answered(self, conn: _Connection) -> None:
        if conn.channel is not None:
            self._ready.append(conn)
            self._wake_poller()

    async def _resume(self, conn: _Connection, stage: int, hold: bool) -> None:
        """A selected connection's request that waits (for a handler, room in the channel, a
        parked answer, a slow client, a throttle, an authentication delay), then the frames
        after it, in a task of its own; back to the poll task once it unmutes."""
        try:
            if stage == _ANSWER:
                status = await self._answer(conn, poller=False, hold=hold)
            elif stage == _SENT:
                await self._sent(conn)
                status = await self._after_answer(conn, poller=False)
            elif stage == _CLOSING:
                status = _CLOSE
            else:
                status = _GO_ON
            await self._carry_on(conn, status, poller=False)
        except Exception as exc:
            self._end(conn, exc)
        finally:
            conn.worker = False

    async def _carry_on(self, conn: _Connection, status: int, *, poller: bool) -> None:
        """After an answer: serve the connection's next frames (_GO_ON), close it (_CLOSE),
        or nothing (_DETACHED: its own task or the ready queue has it now)."""
        if status == _GO_ON:
            await self._drive(conn, poller=poller)
        elif status == _CLOSE:
            await self._close_selected(conn, poller=poller)

    async def _drive(self, conn: _Connection, *, poller: bool) -> None:
        """Serve ``conn``'s frames in order, then unmute it (or close it: an error read after
        them, a graceful stop). In the poll task (``poller``), whatever must wait goes to a
        task of its own (``_detach``)."""
        channel = conn.channel
        frames = conn.frames
        turn_ends = time.perf_counter() + TURN_S
        while frames:
            if channel is None or conn.channel is None:
                return
            if time.perf_counter() > turn_ends:
                if poller:
                    # Its turn is over: the rest after the others' (still muted, so unread).
                    if conn.held:
                        self._send(conn, self._take_held(conn))
                    self._turns_over.append(conn)
                    return
                # The connection's own task: the others' turn (the poll task's) comes first.
                await trio.lowlevel.checkpoint()
                turn_ends = time.perf_counter() + TURN_S
            auth = conn.auth
            frame = frames[-1]
            authenticating = auth is not None and (not auth.complete or auth.intercepts(frame))
            # The next frame, already read, is a Produce: see ``_request``.
            hold = len(frames) > 1 and len(frames) != conn.early_at and \
                _is_produce(frames[-2])
            answered = None if authenticating or self._draining else \
                conn.link.answer_now(frame)
            if answered is not None:
                # Answered within this step (nothing was waited for): written now, or held
                # for the next frame's answer.
                frames.pop()
                response, request = answered
                if request is None and type(response) is SendResponse \
                        and not response.file_slices and not conn.link.throttled_until:
                    # The common answer (nobody times it, nothing to read from files, no
                    # throttle): ``_write_answer`` and ``_after_answer``'s work for it without
                    # their two coroutines, a few percent of a small request's broker CPU.
                    if self._hold_or_send(conn, size_prefixed(response.payload), hold):
                        continue
                    if poller:
                        self._detach(conn, _SENT)
                        return
                    await self._sent(conn)
                    status = await self._after_answer(conn, poller=False)
                else:
                    status = await self._write_answer(conn, response, request, poller=poller,
                                                      hold=hold)
            elif poller and (authenticating or not _never_waits(frame)):
                # It may wait on something only another connection (or broker) brings, or
                # for Kafka's authentication failure delay: not in the poll task.
                self._detach(conn, _START)
                return
            elif authenticating:
                status = await self._authenticate_selected(conn, frames.pop())
            else:
                frames.pop()
                status = await self._request(conn, frame, hold=hold, poller=poller)
            if status == _DETACHED:
                return
            if status == _CLOSE:
                await self._close_selected(conn, poller=poller)
                return
        if conn.channel is None:
            return
        if conn.error is not None or self._draining:
            await self._close_selected(conn, poller=poller)
            return
        assert self._selector is not None
        if conn.read and poller:
            conn.probe = conn.read - 1 if conn.early_at else conn.read
            conn.probe_at = time.perf_counter()
            self._probes.append(conn)
        conn.read = conn.early_at = 0
        self._selector.unmute(conn.channel)
        if not poller and self._selector.pending:
            self._wake_poller()

    def _judge_probes(self, results: list[tuple[Hashable, list[bytearray], bool,
                                                BaseException | None]]) -> None:
        """Whether each client of ``_probes`` waits at its window (``_request``'s early
        answer), from the poll just after its read's answers were written. Its requests in
        flight then are the answers it has not seen yet and the frames it sent meanwhile
        (the poll's). A client with a fixed window (5 in flight) that waits for its answers
        has that many whenever it waits, one that sends as its batches fill (librdkafka)
        whatever it had. A majority vote (``window_vote``) finds the number it has most
        often: when the client has that many again and the number leads by ``CALM_READS``
        reads or more, it is taken to wait. A probe whose poll came later than ``PROBE_S``
        after the send tells nothing (the client may have seen the answers and sent
        again)."""
        found = {key: len(frames) for key, frames, _, _ in results}
        now = time.perf_counter()
        for conn in self._probes:
            if now - conn.probe_at > PROBE_S:
                continue
            in_flight = conn.probe + found.get(conn, 0)
            conn.window, conn.lead = window_vote(conn.window, conn.lead, in_flight)
            conn.at_window = in_flight == conn.window
        self._probes.clear()

    async def _close_selected(self, conn: _Connection, *, poller: bool) -> None:
        """Close after the held answers (and any send pending) are written."""
        if conn.held:
            self._send(conn, self._take_held(conn))
        if conn.channel is not None and conn.channel.sending:
            if poller:
                self._detach(conn, _CLOSING)
                return
            await self._sent(conn)
        self._end(conn)

    async def _request(self, conn: _Connection, frame: bytearray, *, hold: bool,
                       poller: bool) -> int:
        """One request that was not answered within the step (``_drive`` tries
        ``answer_now`` first): run inline (a handler slot free) or submitted, then answered
        (``_answer``).

        ``hold`` (the next frame, already read, is a Produce): a plain answer joins the
        connection's ``held`` answers instead of being written now, and they go out in one
        send with a later answer. A pipelining producer gets its answers in order, a few per
        send, and the broker pays the loopback wake-up of the client once per read instead
        of once per request. The first answer of a read is written at once (the early
        answer) only when the client waits for its answers (a fixed window, such as a Java
        producer's 5 in flight): it then sends its next request while the broker serves
        the rest, and client and broker overlap on two cores. A client that does not wait
        (librdkafka) keeps one send per read: for it the early answer would be a second
        wake-up per read, and it is often the bottleneck (docs/performance.md, "The early
        answer withdrawn" and "The early answer for clients that wait"). Which kind a
        client is shows after each read of several frames (``_judge_probes``); early only
        for small frames (``EARLY_ANSWER_BYTES``) and a connection alone in its polls, where
        the broker would otherwise idle. Only a Produce may follow a held answer: its
        handling is short (it never parks waiting on another client), whereas a Fetch may
        wait for data for fetch.max.wait.ms. Every other path writes ``held`` first."""
        link = conn.link
        if self._draining:
            return _CLOSE
        if await link.run_inline(frame):
            pass
        elif not link.try_submit(frame):
            if poller:                  # the channel is full: wait in a task of its own
                conn.frames.append(frame)
                self._detach(conn, _START)
                return _DETACHED
            if conn.held:
                self._send(conn, self._take_held(conn))
                await self._sent(conn)
            stopping = self._intake(conn)
            try:
                with stopping:
                    await link.submit(frame)
            finally:
                conn.intake = None
            if stopping.cancelled_caught:
                return _CLOSE
        return await self._answer(conn, poller=poller, hold=hold)

    async def _answer(self, conn: _Connection, *, poller: bool, hold: bool = False) -> int:
        """The in-flight request's answer: written, held (``hold``) or acted on."""
        link = conn.link
        if poller and not link.answered:
            return self._park(conn, hold)       # parked, or in a handler task
        observer = self._channel.observer
        request = None if observer is None else link.in_flight_request
        return await self._write_answer(conn, await link.response(), request, poller=poller,
                                        hold=hold)

    async def _write_answer(self, conn: _Connection, response: Response,
                            request: Request | None, *, poller: bool, hold: bool) -> int:
        """``_answer`` once the answer is here (``request``: the request the observer is
        told of, None when nothing is timed)."""
        link = conn.link
        held = conn.held
        done = True
        if request is not None and isinstance(response, SendResponse):
            conn.timed.append((request, time.monotonic_ns()))
            request = None          # told when written (``_send``, ``_sent``)
        ready_ns = 0 if request is None else time.monotonic_ns()
        try:
            if isinstance(response, SendResponse):
                if not response.file_slices:
                    done = self._hold_or_send(conn, size_prefixed(response.payload), hold)
                else:
                    parts = self._take_held(conn)
                    parts += _response_parts(response)
                    done = self._send(conn, parts)
            elif isinstance(response, CloseConnection):
                log.debug("Closing connection %s: asked by the request handler",
                          link.connection_id)
                return _CLOSE
            else:
                assert isinstance(response, NoResponse)
                if not hold and held:
                    done = self._send(conn, self._take_held(conn))
        finally:
            observer = self._channel.observer
            if request is not None and observer is not None:   # nothing to write
                observer.request_done(request, ready_ns, time.monotonic_ns())
        if not done:
            if poller:
                return self._detach(conn, _SENT)
            await self._sent(conn)
        return await self._after_answer(conn, poller=poller)

    async def _after_answer(self, conn: _Connection, *, poller: bool) -> int:
        """A quota throttle (KIP-219) mutes the connection once its answer is out."""
        link = conn.link
        if link.throttled_until:
            if conn.held:
                if not self._send(conn, self._take_held(conn)):
                    if poller:
                        return self._detach(conn, _SENT)
                    await self._sent(conn)
            if poller:
                return self._detach(conn, _SENT)    # _SENT's wait is over at once
            await self._mute(conn)
        return _CLOSE if self._draining else _GO_ON

    async def _authenticate_selected(self, conn: _Connection, frame: bytearray) -> int:
        """``_authenticate`` for a selected connection (in a task of its own)."""
        auth = conn.auth
        assert auth is not None and conn.channel is not None
        step = auth.receive(frame)
        if step.forward:
            return await self._request(conn, frame, hold=False, poller=False)
        if conn.held:
            self._send(conn, self._take_held(conn))
            await self._sent(conn)
        if step.delay_s > 0 and step.close:
            await trio.sleep(step.delay_s)      # connection.failed.authentication.delay.ms
        if step.reply is not None and conn.channel is not None:
            self._send(conn, [size_prefixed(step.reply)])
            await self._sent(conn)
        if step.close or self._draining:
            return _CLOSE
        if auth.complete and conn.channel is not None:
            conn.link.principal = auth.principal
            conn.channel.raise_limit(self._max_request_size)
        return _GO_ON

    def _hold_or_send(self, conn: _Connection, answer: bytes, hold: bool) -> bool:
        """``answer`` (size-prefixed) after the held ones: kept to go out with the next
        frame's (``hold``, not while draining) or written with them now. True when nothing
        is left to write."""
        conn.held.append(answer)
        if hold and not self._draining:
            return True
        return self._send(conn, self._take_held(conn))

    @staticmethod
    def _take_held(conn: _Connection) -> list[bytes | FileSliceLike]:
        parts: list[bytes | FileSliceLike] = list(conn.held)
        conn.held.clear()
        return parts

    def _send(self, conn: _Connection, parts: list[bytes | FileSliceLike]) -> bool:
        """Write ``parts`` through the selector: True when all is written now."""
        if conn.channel is None:
            return True
        assert self._selector is not None
        done = self._selector.send(conn.channel, parts)
        if done and conn.timed:
            self._report_sent(conn)
        return done

    def _report_sent(self, conn: _Connection) -> None:
        """Tell the observer that the answers of ``conn.timed`` are written."""
        timed, conn.timed = conn.timed, []
        observer = self._channel.observer
        if observer is not None:
            now = time.monotonic_ns()
            for request, ready_ns in timed:
                observer.request_done(request, ready_ns, now)

    async def _sent(self, conn: _Connection) -> None:
        """Wait until the connection's pending send is written (the poll task wakes us);
        raises what ended the connection meanwhile (a socket error, a stalled client)."""
        while conn.channel is not None and conn.channel.sending:
            conn.waiter = trio.lowlevel.current_task()

            def abort(_: object) -> trio.lowlevel.Abort:
                conn.waiter = None
                return trio.lowlevel.Abort.SUCCEEDED

            await trio.lowlevel.wait_task_rescheduled(abort)
            if conn.error is not None and not isinstance(conn.error, EOFError):
                raise conn.error
        if conn.channel is None and conn.error is not None:
            raise conn.error
        if conn.timed:
            self._report_sent(conn)

    async def _mute(self, conn: _Connection) -> None:
        """A client quota's throttle (KIP-219): the answer is out (what is held goes now),
        then nothing is read until ``throttled_until``, or a graceful stop."""
        until, conn.link.throttled_until = conn.link.throttled_until, 0.0
        scope = self._intake(conn, until)
        try:
            with scope:
                await trio.sleep_forever()
        finally:
            conn.intake = None

    def _intake(self, conn: _Connection, deadline: float = math.inf) -> trio.CancelScope:
        """A cancel scope that a graceful stop cancels (see ``_Connection.intake``); the
        caller enters it and resets ``conn.intake`` to None after."""
        scope = trio.CancelScope(deadline=deadline)
        if self._draining:
            scope.cancel()
        conn.intake = scope
        return scope


def _response_parts(response: SendResponse) -> list[bytes | FileSliceLike]:
    """A response as the selector writes it (gathered into one sendmsg, file slices with
    sendfile): slices holding at most COPY_SLICES_BYTES are read and sent with the rest
    instead (see the module doc)."""
    slices = response.file_slices
    if not slices:
        return [size_prefixed(response.payload)]
    parts: list[bytes | FileSliceLike] = [struct.pack(">i", response.size), response.payload]
    if sum(p.size for p in slices if not isinstance(p, bytes)) <= COPY_SLICES_BYTES:
        parts += [piece if isinstance(piece, bytes) else _read_slice(piece) for piece in slices]
    else:
        parts += slices
    return parts


def _read_slice(piece: FileSliceLike) -> bytes:
    try:
        data = os.pread(piece.fd, piece.size, piece.position)
    except OSError as exc:
        raise _SliceFailed(f"file slice (fd {piece.fd}, position {piece.position}, size "
                           f"{piece.size}) failed: {exc}") from exc
    if len(data) != piece.size:
        raise _SliceFailed(
            f"file slice (fd {piece.fd}, position {piece.position}, size {piece.size}) ends "
            f"{piece.size - len(data)} bytes early: the file is shorter")
    return data


def _check_limits(max_connections: int, max_per_ip: int, overrides: Mapping[str, int],
                  per_listener: Mapping[str, int]) -> None:
    if max_connections < 0 or max_per_ip < 0:
        raise ValueError("connection limits must not be negative")
    if any(count < 0 for count in overrides.values()):
        raise ValueError("connection limit overrides must not be negative")
    if any(count < 0 for count in per_listener.values()):
        raise ValueError("listener connection limits must not be negative")


def _never_waits(frame: bytes | bytearray) -> bool:
    """The request is one the poll task may run itself: its handler never waits, whatever
    waits (for other clients or brokers, or for an fsync: flush.messages / flush.ms) is
    ``Parked`` and so served by the connection's own task: Fetch,
    ApiVersions, and a Produce without a transactional id (a transactional one may ask its
    coordinator on another broker first, KIP-890). Any other request gets a task of its own,
    so that the poll task never waits on, say, a controller that needs this broker's answer
    to another connection's request."""
    if len(frame) < 10 or frame[0]:
        return False
    key = frame[1]
    if key in (1, 18):
        return True
    if key:
        return False
    version = frame[2] << 8 | frame[3]
    if version < 3:                     # no transactional id before Produce v3
        return True
    client_id = frame[8] << 8 | frame[9]
    at = 10 + (client_id if client_id < 0x8000 else 0)
    if version >= 9:                    # flexible: header tags (none), compact nullable string
        return len(frame) > at + 1 and frame[at] == 0 and frame[at + 1] == 0
    return frame[at:at + 2] == b"\xff\xff"


def _is_produce(frame: bytes | bytearray) -> bool:
    """The frame is a Produce request (API key 0, the first INT16 of the request header)."""
    return len(frame) >= 2 and frame[0] == 0 and frame[1] == 0


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _peer(address: object) -> tuple[str, int]:
    """(host, port) of a socket address of any IP family."""
    assert isinstance(address, tuple) and len(address) >= 2
    return _client_ip(str(address[0])), int(address[1])
