"""MetricsServer: the Prometheus endpoint of a broker (``kafkapy.metrics.port``).

``prometheus_client``'s threaded HTTP server (``start_http_server``) serves ``/metrics`` from
a registry holding one collector, which on every scrape hops onto the broker's Trio event loop
(``trio.from_thread.run_sync``) to copy the raw values there (``BrokerMetrics.capture``),
then builds the samples in its own thread: the broker's state is only ever read on its own
loop, the loop is held only for the copies, and nothing is computed between scrapes.

Lifecycle: ``start()`` (from the event loop, at broker start) binds ``host:port`` (port 0: a
free port, then ``port`` says which) and returns; ``stop()`` (at shutdown) closes the socket
and joins the thread. A scrape that arrives while the loop is gone gets an empty page.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import trio
from prometheus_client.core import Metric
from prometheus_client.registry import Collector, CollectorRegistry

from kafkapy.server.metrics.broker_metrics import BrokerMetrics, families

__all__ = ["MetricsServer"]

log = logging.getLogger(__name__)


class _Collector(Collector):
    def __init__(self, metrics: BrokerMetrics, token: trio.lowlevel.TrioToken) -> None:
        self._metrics = metrics
        self._token = token

    def collect(self) -> Iterator[Metric]:
        try:
            captured = trio.from_thread.run_sync(self._metrics.capture, trio_token=self._token)
        except (trio.RunFinishedError, RuntimeError):
            return          # the broker has stopped
        for family in families(captured):       # in this thread, off the event loop
            metric = Metric(family.name, family.help, family.kind)
            for s in family.samples:
                metric.add_sample(s.name, dict(s.labels), s.value)
            yield metric


class MetricsServer:
    """Serves ``metrics`` on ``host:port`` over HTTP (``host`` "": every interface)."""

    def __init__(self, metrics: BrokerMetrics, host: str, port: int) -> None:
        self._metrics = metrics
        self.host = host or "0.0.0.0"
        self.port = port
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Bind and serve (call on the broker's event loop, whose token the scrapes use).

        Raises:
            OSError: the address cannot be bound.
        """
        from prometheus_client import start_http_server

        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Collector(self._metrics, trio.lowlevel.current_trio_token()))
        self._server, self._thread = start_http_server(self.port, addr=self.host,
                                                       registry=registry)
        self.port = self._server.server_port
        log.info("Prometheus metrics on http://%s:%d/metrics", self.host, self.port)

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
