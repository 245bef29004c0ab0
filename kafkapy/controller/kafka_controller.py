"""KafkaController, its election: which broker of a ZooKeeper cluster is the controller, at which
controller epoch (Kafka's ``KafkaController.elect`` / ``ControllerChangeHandler``, 2.8-3.x).

Theory of operation
-------------------
- Every broker with ``zookeeper.connect`` runs one, after its registration. It tries to become
  controller (``KafkaZkClient.register_controller_and_increment_epoch``: the ephemeral
  ``/controller`` and ``/controller_epoch`` + 1 in one multi-op), and watches ``/controller``.
  Whoever wins is the controller at the new epoch and keeps the epoch's znode version, which
  fences all its later writes (a deposed controller's writes fail, see ``KafkaZkClient``).
- When ``/controller`` goes away (the controller stopped, or ZooKeeper expired its session
  after a SIGKILL or a long pause) every broker's watch fires and each tries again; exactly one
  wins. When it changes to another broker, this one is not the controller.
- A broker whose own session expired has lost ``/controller`` with it: it resigns at once
  (``active`` is false from the moment kazoo reports the loss) and, once kazoo has a new
  session, competes again like any other broker, so a controller paused past its session comes
  back as an ordinary broker.
- The controller's duties (partition state, LeaderAndIsr, ...) are not here yet: this module is
  the election they will hang off (``on_elected`` / ``on_resigned`` hooks).

kazoo calls back on its own threads; the callbacks only schedule work on the Trio loop
(``TrioToken.run_sync_soon``); the blocking ZooKeeper calls run in worker threads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import trio
from kazoo.client import KazooState

from kafkapy.common.time import Time
from kafkapy.zk.kafka_zk_client import ControllerMovedError, KafkaZkClient
from kafkapy.zk.zk_data import CONTROLLER_PATH

__all__ = ["KafkaController"]

log = logging.getLogger(__name__)

_RETRY_S = 1.0


class KafkaController:
    """The election of one broker (``broker_id``) over its ZooKeeper session."""

    def __init__(self, client: KafkaZkClient, broker_id: int, time: Time, *,
                 on_elected: Callable[[int], None] | None = None,
                 on_resigned: Callable[[], None] | None = None) -> None:
        self.client = client
        self.broker_id = broker_id
        self.time = time
        self.on_elected = on_elected
        self.on_resigned = on_resigned
        self.active = False             # this broker is the controller
        self.epoch = -1                 # the controller epoch it won (when active)
        self.epoch_zk_version = -1      # /controller_epoch's version then: the write fence
        self.controller_id: int | None = None
        self._changed = trio.Event()
        self._token: trio.lowlevel.TrioToken | None = None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Compete for the controller until cancelled."""
        self._token = trio.lowlevel.current_trio_token()
        self.client.add_state_listener(self._on_state)
        # Fires now and on every change of /controller (kazoo re-arms it after a new session).
        self.client.zk.DataWatch(CONTROLLER_PATH, self._on_controller_change)
        task_status.started()
        try:
            while True:
                await self._changed.wait()
                self._changed = trio.Event()
                try:
                    await self._elect()
                except Exception as e:     # ZooKeeper away: the next change tries again
                    log.warning("Controller election failed (%s); retrying", e)
                    await trio.sleep(_RETRY_S)
                    self._changed.set()
        finally:
            self._resign()

    async def _elect(self) -> None:
        current = await trio.to_thread.run_sync(self.client.get_controller_id)
        if current is not None:
            self.controller_id = current
            if current != self.broker_id:
                self._resign()
            return
        try:
            epoch, version = await trio.to_thread.run_sync(
                self.client.register_controller_and_increment_epoch, self.broker_id,
                self.time.milliseconds())
        except ControllerMovedError:
            self.controller_id = await trio.to_thread.run_sync(self.client.get_controller_id)
            self._resign()
            return
        self.active, self.epoch, self.epoch_zk_version = True, epoch, version
        self.controller_id = self.broker_id
        log.info("Broker %d is the controller (controller epoch %d)", self.broker_id, epoch)
        if self.on_elected is not None:
            self.on_elected(epoch)

    def _resign(self) -> None:
        if self.active:
            self.active = False
            log.info("Broker %d is no longer the controller (it was at epoch %d)",
                     self.broker_id, self.epoch)
            if self.on_resigned is not None:
                self.on_resigned()

    # ----------------------------------------------------------- kazoo's threads

    def _on_controller_change(self, data: bytes | None, stat: Any) -> None:
        self._schedule(self._changed_now)

    def _on_state(self, state: KazooState) -> None:
        if state == KazooState.LOST:
            self._schedule(self._session_lost)
        elif state == KazooState.CONNECTED:
            self._schedule(self._changed_now)

    def _schedule(self, fn: Callable[[], None]) -> None:
        if self._token is not None:
            try:
                self._token.run_sync_soon(fn)
            except trio.RunFinishedError:
                pass                        # the broker has stopped

    # ------------------------------------------------------------- Trio's thread

    def _changed_now(self) -> None:
        self._changed.set()

    def _session_lost(self) -> None:
        # /controller, ephemeral, went with the session: whatever ZooKeeper says later, this
        # broker is not the controller any more.
        self._resign()
        self.controller_id = None
