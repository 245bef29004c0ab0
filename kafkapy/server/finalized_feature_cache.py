"""FinalizedFeatureCache: the cluster's finalized feature levels as this broker knows them,
with their epoch (Kafka's ``FinalizedFeatureCache`` and, for ZooKeeper mode, its
``FinalizedFeatureChangeListener``).

- ZooKeeper mode: :meth:`FinalizedFeatureCache.watch` sets a kazoo DataWatch on ``/feature``;
  every change (the callback runs on kazoo's thread and only hands the bytes to the event
  loop through the Trio token) replaces the levels and sets the epoch to the znode's version.
  An absent or disabled znode is "not known": no levels, epoch -1. A znode that does not
  decode keeps the last good levels (logged), rather than dropping the cluster's features.
- The single broker: the levels and epoch come from its metadata file
  (``FileMetadataStore.finalized_features``) and change with its UpdateFeatures.

Invariants: the epoch only grows while levels are known; ``wait_for_epoch`` wakes on every
update (no polling) and is bounded by its timeout. Readers (ApiVersions, the KIP-848 APIs)
see one consistent (levels, epoch) pair: both are replaced together.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import attrs
import trio

from kafkapy.common.features import GROUP_VERSION
from kafkapy.zk.zk_data import FEATURE_PATH, FeatureZNode, ZkDataError

__all__ = ["FinalizedFeatureCache", "FinalizedFeatures"]

log = logging.getLogger(__name__)


@attrs.frozen
class FinalizedFeatures:
    levels: Mapping[str, int] = attrs.field(factory=dict)
    epoch: int = -1                     # -1: not known


class FinalizedFeatureCache:
    def __init__(self) -> None:
        self.current = FinalizedFeatures()
        self._changed = trio.Event()
        self._token: trio.lowlevel.TrioToken | None = None

    def level(self, feature: str) -> int:
        """The finalized level of ``feature``; 0 when it is not finalized."""
        return self.current.levels.get(feature, 0)

    @property
    def consumer_group_protocol(self) -> bool:
        """KIP-848's consumer groups are served (Kafka 4.0: group.version >= 1)."""
        return self.level(GROUP_VERSION) >= 1

    def update(self, levels: Mapping[str, int], epoch: int) -> None:
        """Replace the levels (on the event loop)."""
        if epoch >= 0 and epoch < self.current.epoch:
            return                      # a stale read that lost a race with a newer one
        new = FinalizedFeatures(dict(levels), epoch)
        if new != self.current:
            log.info("Finalized features %s (epoch %d)", dict(levels) or "none", epoch)
        self.current = new
        self._changed.set()
        self._changed = trio.Event()

    async def wait_for_epoch(self, epoch: int, timeout_s: float) -> bool:
        """Until the cache holds ``epoch`` or a later one; False after ``timeout_s``."""
        with trio.move_on_after(timeout_s):
            while self.current.epoch < epoch:
                await self._changed.wait()
            return True
        return False

    # =========================================================== ZooKeeper mode

    def watch(self, zk: Any) -> None:
        """Follow ``/feature`` through ``zk`` (a KazooClient); call on the event loop."""
        self._token = trio.lowlevel.current_trio_token()
        zk.DataWatch(FEATURE_PATH, self._on_znode)

    def _on_znode(self, data: bytes | None, stat: Any) -> None:
        # kazoo's thread.
        if data is None or stat is None:
            levels: dict[str, int] = {}
            epoch = -1
        else:
            try:
                node = FeatureZNode.decode(data)
            except ZkDataError as e:
                log.error("Ignoring an unreadable %s: %s", FEATURE_PATH, e)
                return
            levels = dict(node.features) if node.status == 1 else {}
            epoch = int(stat.version) if node.status == 1 else -1
        token = self._token
        if token is not None:
            try:
                token.run_sync_soon(self.update, levels, epoch)
            except trio.RunFinishedError:
                pass                    # the broker has stopped
