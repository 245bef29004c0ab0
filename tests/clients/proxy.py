"""A TCP proxy between Kafka clients and a broker that drops every connection on demand, or
after every N forwarded requests: so that a producer has to retry requests in flight.

Theory of operation
-------------------
``Proxy()`` binds its listening socket on 127.0.0.1 at once, on a free port, *before* the
broker starts. The broker is then started with ``advertised.listeners`` set to the proxy's
address (``PLAINTEXT://127.0.0.1:<proxy port>``) while it listens on a port of its own, and
``proxy.start(broker_host, broker_port)`` points the proxy at the port the broker bound.
Why: a client only bootstraps from the address it is given; every later connection goes to
the host:port the broker advertises in its Metadata answers. With the broker's own address
advertised, a client would reconnect around the proxy after the first Metadata and nothing
would ever be dropped again. Advertising the proxy needs no rewriting of Metadata (or
FindCoordinator) responses, which would mean decoding every version of both; the broker says
what a broker behind a load balancer or NAT says. ``proxied_broker`` below does the
arrangement. Consequences: ``BrokerHandle.bootstrap_servers`` of such a broker is the proxy's
address (what clients should use), and ``BrokerHandle.restart`` must not be used (it would
pin the advertised port, the proxy's, as the broker's listening port); ``broker_address``
gives the broker's own bound address for raw connections that bypass the proxy.

Each accepted client connection gets its own upstream connection to the broker and two
threads:

- client -> broker: the bytes are cut into whole requests (a Kafka frame is a 4-byte
  big-endian size and that many bytes; the request header starts with the INT16 api key).
  Only whole requests are forwarded, so the broker never sees half a request: a drop loses
  responses, never the tail of a request. After forwarding a request the thread counts it
  (all requests, or only those whose api key is in ``count_api_keys``).
- broker -> client: bytes as they come.

``drop_after(n)``: when the n-th counted request since the last drop has been forwarded, the
proxy *arms* a drop: from that instant nothing more is forwarded in either direction, on any
connection (responses the broker sends meanwhile are discarded, as are requests the clients
send); ``drop_delay`` seconds later (default 50 ms: the broker has appended what it got) every
connection is closed (both sockets shut down and closed). The clients see their connections
close with requests unanswered, reconnect through the proxy and retry; the counter starts
again. ``drop_now()`` drops every connection at once. ``stop()`` closes the listener and every
connection and joins the threads.

Counters (``requests``, ``drops``, ``connections``) let a test assert that the chaos it asked
for happened; ``versions`` counts the (api key, api version) of every request forwarded, so a
test can tell which version of an API a client really used.

Thread safety: one lock guards the connection set and the counters; socket errors end a
connection quietly (a dropped connection is the point), they are never raised into the test.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections import Counter
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kafkapy.testing import BrokerFactory, BrokerHandle

__all__ = ["Proxy", "broker_address", "proxied_broker"]

_CHUNK = 1 << 16


class _Pair:
    """One client connection and its upstream connection to the broker."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self._closed = False
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for s in (self.client, self.upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


class Proxy:
    """See the module docstring. A context manager: ``stop()`` on exit."""

    def __init__(self, host: str = "127.0.0.1", *, drop_delay: float = 0.05) -> None:
        self.host = host
        self.drop_delay = drop_delay
        self._listener = socket.create_server((host, 0))
        self.port: int = self._listener.getsockname()[1]
        self._target: tuple[str, int] | None = None
        self._lock = threading.Lock()
        self._forwarded = threading.Condition(self._lock)
        self._pairs: set[_Pair] = set()
        self._threads: list[threading.Thread] = []
        self._stopped = False
        self._every: int | None = None
        self._count_keys: frozenset[int] | None = None
        self._since_drop = 0
        self._armed = False
        self.requests = 0          # counted requests forwarded, in all
        self.drops = 0             # times every connection was dropped
        self.connections = 0       # client connections accepted
        self.versions: Counter[tuple[int, int]] = Counter()  # (api key, version) forwarded

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def advertised_listener(self) -> str:
        """The ``advertised.listeners`` value that sends clients through this proxy."""
        return f"PLAINTEXT://{self.host}:{self.port}"

    # ------------------------------------------------------------------- lifecycle

    def start(self, target_host: str, target_port: int) -> Proxy:
        """Forward every connection to ``target_host:target_port`` from now on."""
        self._target = (target_host, target_port)
        accept = threading.Thread(target=self._accept_loop, name="proxy-accept", daemon=True)
        self._threads.append(accept)
        accept.start()
        return self

    def stop(self) -> None:
        """Close the listener and every connection; wait for the threads. Idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            pairs = list(self._pairs)
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        for pair in pairs:
            pair.close()
        for t in list(self._threads):
            t.join(5)

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def forwarded(self, api_key: int) -> int:
        """How many requests of ``api_key`` have been forwarded to the broker."""
        with self._lock:
            return sum(n for (key, _), n in self.versions.items() if key == api_key)

    def wait_forwarded(self, api_key: int, count: int, timeout: float) -> None:
        """Until ``count`` requests of ``api_key`` have been forwarded (whole, in the broker's
        socket); AssertionError after ``timeout`` seconds."""
        def done() -> bool:
            return sum(n for (key, _), n in self.versions.items() if key == api_key) >= count

        with self._forwarded:
            if not self._forwarded.wait_for(done, timeout):
                raise AssertionError(f"fewer than {count} requests of API {api_key} "
                                     f"forwarded within {timeout} s")

    # ---------------------------------------------------------------------- chaos

    def drop_after(self, every: int | None, api_keys: Collection[int] | None = None) -> None:
        """Drop every connection after each ``every`` forwarded requests (None: never
        again). ``api_keys``: count only requests of these APIs (e.g. ``{0}`` for Produce);
        None counts every request."""
        with self._lock:
            self._every = every
            self._count_keys = None if api_keys is None else frozenset(api_keys)
            self._since_drop = 0

    def drop_now(self) -> None:
        """Close every current connection (clients reconnect through the proxy)."""
        with self._lock:
            pairs = list(self._pairs)
            self._pairs.clear()
            self.drops += 1
        for pair in pairs:
            pair.close()

    def _arm_drop(self) -> None:
        # Caller holds the lock.
        self._armed = True
        timer = threading.Timer(self.drop_delay, self._fire_drop)
        timer.daemon = True
        self._threads.append(timer)
        timer.start()

    def _fire_drop(self) -> None:
        with self._lock:
            pairs = list(self._pairs)
            self._pairs.clear()
            self.drops += 1
            self._armed = False
            self._since_drop = 0
        for pair in pairs:
            pair.close()

    # --------------------------------------------------------------------- pumping

    def _accept_loop(self) -> None:
        assert self._target is not None
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return      # stopped
            try:
                upstream = socket.create_connection(self._target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            pair = _Pair(client, upstream)
            with self._lock:
                if self._stopped:
                    pair.close()
                    return
                self._pairs.add(pair)
                self.connections += 1
                n = self.connections
            for target, name in ((self._client_to_broker, "up"),
                                 (self._broker_to_client, "down")):
                t = threading.Thread(target=target, args=(pair,), daemon=True,
                                     name=f"proxy-{name}-{n}")
                with self._lock:
                    self._threads.append(t)
                t.start()

    def _client_to_broker(self, pair: _Pair) -> None:
        buf = bytearray()
        try:
            while True:
                data = pair.client.recv(_CHUNK)
                if not data:
                    break
                buf += data
                while len(buf) >= 4:
                    (size,) = struct.unpack_from(">i", buf)
                    if size < 0 or len(buf) < 4 + size:
                        break
                    frame = bytes(buf[:4 + size])
                    del buf[:4 + size]
                    with self._lock:
                        if self._armed:
                            continue        # lost with the connection about to drop
                    pair.upstream.sendall(frame)
                    self._count(frame)
        except OSError:
            pass
        finally:
            self._forget(pair)

    def _forget(self, pair: _Pair) -> None:
        with self._lock:
            self._pairs.discard(pair)
        pair.close()

    def _count(self, frame: bytes) -> None:
        api_key, version = struct.unpack_from(">hh", frame, 4) if len(frame) >= 8 else (-1, -1)
        with self._lock:
            self.versions[(api_key, version)] += 1
            self._forwarded.notify_all()
            if self._count_keys is not None and api_key not in self._count_keys:
                return
            self.requests += 1
            self._since_drop += 1
            if self._every is not None and not self._armed and \
                    self._since_drop >= self._every:
                self._arm_drop()

    def _broker_to_client(self, pair: _Pair) -> None:
        try:
            while True:
                data = pair.upstream.recv(_CHUNK)
                if not data:
                    break
                with self._lock:
                    armed = self._armed
                if not armed:
                    pair.client.sendall(data)
        except OSError:
            pass
        finally:
            self._forget(pair)


def broker_address(broker: BrokerHandle) -> tuple[str, int]:
    """The host and port the broker really listens on (not the advertised ones)."""
    socket_server = broker.server.socket_server
    assert socket_server is not None
    endpoint = socket_server.bound_endpoints[0]
    return (endpoint.host or "127.0.0.1", endpoint.port)


@contextmanager
def proxied_broker(factory: BrokerFactory, config: dict[str, Any] | None = None, *,
                   data_dir: str | Path | None = None, drop_delay: float = 0.05
                   ) -> Iterator[tuple[BrokerHandle, Proxy]]:
    """A broker from ``factory`` that advertises a proxy in front of it, and the proxy.
    Clients bootstrap from ``broker.bootstrap_servers`` (the proxy's address)."""
    with Proxy(drop_delay=drop_delay) as proxy:
        broker = factory({**(config or {}),
                          "advertised.listeners": proxy.advertised_listener},
                         data_dir=data_dir)
        assert broker.bootstrap_servers == proxy.address, broker.bootstrap_servers
        proxy.start(*broker_address(broker))
        try:
            yield broker, proxy
        finally:
            proxy.stop()
