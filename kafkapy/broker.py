"""Broker: kafkapy embedded in a Python program or a test suite.

``with kafkapy.Broker() as broker:`` from plain synchronous code runs the broker's Trio event
loop in a background thread and returns once it accepts connections; ``async with
kafkapy.Broker() as broker:`` from Trio code runs it in the caller's loop. Either way
``broker.bootstrap_servers`` is what clients connect to, and leaving the block is a controlled
shutdown (in-flight requests finish, logs are flushed and checkpointed).

Settings are Kafka's broker settings. ``Broker(num_partitions=3, log_retention_hours=1)``:
keyword arguments with ``_`` for ``.``; ``Broker(config={"auto.create.topics.enable":
"false"})`` for the exact names; or a ``BrokerConfig``. Two conveniences: ``port`` (default 0,
a free port, on 127.0.0.1) and ``data_dir`` (default: a temporary directory removed on exit;
give one to keep the data across runs).

``broker.metrics()`` returns the broker's metrics as the Prometheus endpoint serves them
(``{'kafka_server_brokertopicmetrics_messagesin_total{topic="t"}': 10.0, ...}``), recorded
when ``kafkapy_metrics_enabled=True`` or ``kafkapy_metrics_port`` is set (docs/metrics.md).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import trio

from kafkapy.config import BrokerConfig
from kafkapy.server.kafka_server import KafkaServer
from kafkapy.server.metrics.broker_metrics import families, samples_of

__all__ = ["Broker"]


class Broker:
    def __init__(self, config: BrokerConfig | Mapping[str, object] | None = None, *,
                 port: int = 0, host: str = "127.0.0.1", data_dir: str | Path | None = None,
                 **overrides: object) -> None:
        self._tmp: str | None = None
        if isinstance(config, BrokerConfig):
            if overrides or data_dir is not None:
                raise TypeError("pass settings either in a BrokerConfig or as arguments")
            self.config = config
        else:
            props: dict[str, object] = {}
            if "listeners" not in (config or {}):
                props["listeners"] = f"PLAINTEXT://{host}:{port}"
            if data_dir is None and "log.dirs" not in (config or {}) \
                    and "log.dir" not in (config or {}):
                self._tmp = tempfile.mkdtemp(prefix="kafkapy-")
                data_dir = self._tmp
            if data_dir is not None:
                props["log.dirs"] = str(data_dir)
            props.update(config or {})
            props.update({k.replace("_", "."): v for k, v in overrides.items()})
            self.config = BrokerConfig.from_properties(props)
        self.server = KafkaServer(self.config)
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._error: BaseException | None = None
        self._running = False

    # ------------------------------------------------------------------------ info

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` of every listener (comma-separated), for clients."""
        if not self._running:
            raise RuntimeError("the broker is not running")
        return ",".join(f"{e.host}:{e.port}"
                        for e in self.server.advertised_endpoints.values())

    @property
    def port(self) -> int:
        """The port of the first listener (the bound one, when 0 was asked)."""
        endpoints = list(self.server.advertised_endpoints.values())
        return endpoints[0].port

    @property
    def data_dir(self) -> Path:
        return Path(self.config.log_dirs[0])

    # ------------------------------------------------------------------- sync use

    def start(self) -> Broker:
        """Start in a background thread; returns when clients can connect. Raises what the
        broker failed to start with (a port in use, a bad log dir, ...)."""
        if self._running or self._thread is not None:
            raise RuntimeError("the broker is already running")
        ready = threading.Event()

        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            try:
                async with trio.open_nursery() as nursery:
                    await nursery.start(self.server.run)
                    self._running = True
                    ready.set()
            except BaseException as e:  # kept for the starting thread
                self._error = e
                raise
            finally:
                self._running = False
                ready.set()

        def thread_main() -> None:
            try:
                trio.run(main)
            except BaseException as e:  # reported to the starting thread
                self._error = self._error or e

        self._thread = threading.Thread(target=thread_main, name="kafkapy-broker", daemon=True)
        self._thread.start()
        ready.wait()
        if not self._running:
            self._thread.join()
            self._thread = None
            self._cleanup()
            error = self._error
            assert error is not None
            raise _unwrap(error)
        return self

    def stop(self) -> None:
        """Controlled shutdown; returns when the broker has stopped. Idempotent."""
        thread = self._thread
        if thread is None:
            return
        if self._running and self._token is not None:
            try:
                trio.from_thread.run(self.server.shutdown, trio_token=self._token)
            except trio.RunFinishedError:
                pass
        thread.join()
        self._thread = None
        self._cleanup()

    def call(self, fn: Any, *args: Any) -> Any:
        """Run ``fn(*args)`` on the broker's event loop (from another thread) and return its
        result: how test helpers inspect a running broker safely."""
        if not self._running or self._token is None:
            raise RuntimeError("the broker is not running")
        return trio.from_thread.run_sync(fn, *args, trio_token=self._token)

    def metrics(self) -> dict[str, float]:
        """Every metric sample, ``'name{label="value",...}' -> value``: the values the
        Prometheus endpoint serves (docs/metrics.md), read on the broker's event loop.
        Callable from any thread, or from the Trio task that entered ``async with``.

        Raises:
            RuntimeError: the broker is not running, or records no metrics (set
                ``kafkapy.metrics.enabled`` or ``kafkapy.metrics.port``).
        """
        metrics = self.server.metrics
        if metrics is None:
            raise RuntimeError("this broker records no metrics: start it with "
                               "kafkapy_metrics_enabled=True or a kafkapy_metrics_port")
        if self._thread is None and self._running:
            return metrics.samples()            # async use: we are on the broker's loop
        return samples_of(families(self.call(metrics.capture)))

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # ------------------------------------------------------------------ async use

    async def __aenter__(self) -> Broker:
        if self._running:
            raise RuntimeError("the broker is already running")
        self._nursery_manager = trio.open_nursery()
        nursery = await self._nursery_manager.__aenter__()
        try:
            await nursery.start(self.server.run)
        except BaseException as e:
            await self._nursery_manager.__aexit__(None, None, None)
            self._cleanup()
            raise _unwrap(e) from None
        self._running = True
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        try:
            await self.server.shutdown()
            self._running = False
            return await self._nursery_manager.__aexit__(exc_type, exc, tb)
        finally:
            self._running = False
            self._cleanup()

    def _cleanup(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


def _unwrap(error: BaseException) -> BaseException:
    """The one error inside Trio's exception groups (a failed start has exactly one), so the
    caller sees the OSError or InvalidConfigError itself."""
    while isinstance(getattr(error, "exceptions", None), tuple) and \
            len(error.exceptions) == 1:  # type: ignore[attr-defined]
        error = error.exceptions[0]  # type: ignore[attr-defined]
    return error
