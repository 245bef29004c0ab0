"""KafkaHealthcheck: a broker's membership of its ZooKeeper cluster (``zookeeper.connect``).

Kafka's ``KafkaHealthcheck`` / ``KafkaServer``'s ZooKeeper start-up (2.8-3.x, ZooKeeper mode):

- ``connect``: the ZooKeeper session is opened within ``zookeeper.connection.timeout.ms``
  (default: the session timeout), else the broker fails to start with one line saying which
  ensemble it could not reach. Kafka's persistent paths are created.
- ``cluster_id``: ``/cluster/id`` is created once, by the first broker (with the configured
  ``cluster.id``, else the one already in this broker's ``meta.properties``, else a new one);
  every broker then uses that id, and a broker whose log dirs' ``meta.properties`` carry
  another refuses to start (Kafka's InconsistentClusterIdException: the broker is trying to join
  the wrong cluster).
- ``register``: the ephemeral ``/brokers/ids/<broker.id>`` with Kafka's v5 JSON (advertised
  endpoints, ``listener_security_protocol_map``, ``broker.rack``); its czxid is the broker epoch
  (KIP-380). A ``broker.id`` already registered by a live broker is refused.
- ``run``: watches the session. ZooKeeper lost for a while changes nothing for the broker
  (it keeps serving what it leads); a session that *expired* lost the registration, so once
  kazoo has a new session the broker registers again, with a new epoch.
- ``close``: ends the session; ZooKeeper removes the registration at once.

Blocking kazoo calls run in worker threads (``trio.to_thread``); kazoo's session callbacks come
back into Trio with ``TrioToken.run_sync_soon`` (never blocking kazoo's event thread).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio
from kazoo.client import KazooState
from kazoo.handlers.threading import KazooTimeoutError

from kafkapy.config import BrokerConfig
from kafkapy.zk.kafka_zk_client import KafkaZkClient
from kafkapy.zk.zk_data import BrokerRegistration

__all__ = ["KafkaHealthcheck", "ZooKeeperUnavailableError"]

log = logging.getLogger(__name__)

_RETRY_S = 1.0


class ZooKeeperUnavailableError(RuntimeError):
    """ZooKeeper could not be reached at start."""


class KafkaHealthcheck:
    """One broker's ZooKeeper session and registration."""

    def __init__(self, config: BrokerConfig) -> None:
        assert config.zookeeper_connect
        self.connect_string = config.zookeeper_connect
        self.connection_timeout_ms = config.zookeeper_connection_timeout_ms or \
            config.zookeeper_session_timeout_ms
        self.client = KafkaZkClient(config.zookeeper_connect,
                                    session_timeout_ms=config.zookeeper_session_timeout_ms,
                                    connection_timeout_ms=self.connection_timeout_ms)
        self.broker_epoch = -1
        self._registration: Callable[[], BrokerRegistration] | None = None
        self._expired = trio.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._was_lost = False
        self._closing = False

    async def connect(self) -> None:
        """Raises ZooKeeperUnavailableError after ``zookeeper.connection.timeout.ms``."""
        self._token = trio.lowlevel.current_trio_token()
        self.client.add_state_listener(self._on_state)
        try:
            await trio.to_thread.run_sync(self.client.start)
        except KazooTimeoutError:
            await trio.to_thread.run_sync(self.client.close)
            raise ZooKeeperUnavailableError(
                f"Timed out waiting for connection to ZooKeeper at {self.connect_string} "
                f"(zookeeper.connection.timeout.ms={self.connection_timeout_ms})") from None

    async def cluster_id(self, proposed: str) -> str:
        return await trio.to_thread.run_sync(self.client.get_or_create_cluster_id, proposed)

    async def register(self, registration: Callable[[], BrokerRegistration]) -> int:
        """Register (and later re-register) what ``registration()`` returns; the broker
        epoch. Raises BrokerIdInUseError."""
        self._registration = registration
        self.broker_epoch = await trio.to_thread.run_sync(self.client.register_broker,
                                                          registration())
        log.info("Registered broker %d in ZooKeeper at %s (broker epoch %d)",
                 registration().broker_id, self.connect_string, self.broker_epoch)
        return self.broker_epoch

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Re-register after every session expiry, until cancelled."""
        task_status.started()
        while True:
            await self._expired.wait()
            self._expired = trio.Event()
            while self._registration is not None:
                try:
                    await self.register(self._registration)
                    break
                except Exception as e:        # ZooKeeper still away: try again
                    log.warning("Re-registering in ZooKeeper failed (%s); retrying", e)
                    await trio.sleep(_RETRY_S)

    def _on_state(self, state: KazooState) -> None:
        # kazoo's event thread: never block here.
        if self._closing:
            return              # our own close ends the session: nothing was lost
        if state == KazooState.LOST:
            self._was_lost = True
            log.warning("ZooKeeper session expired: this broker's registration is gone")
        elif state == KazooState.SUSPENDED:
            log.warning("Lost the connection to ZooKeeper at %s; still serving",
                        self.connect_string)
        elif state == KazooState.CONNECTED and self._was_lost:
            self._was_lost = False
            if self._token is not None:
                self._token.run_sync_soon(self._signal_expired)

    def _signal_expired(self) -> None:          # on the Trio thread
        self._expired.set()

    async def close(self) -> None:
        self._closing = True
        await trio.to_thread.run_sync(self.client.close)
