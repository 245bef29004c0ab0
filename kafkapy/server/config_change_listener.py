"""ConfigChangeListener: a broker's watch on ``/config/changes`` (ZooKeeper mode), Kafka's
``ZkConfigManager`` / ``DynamicConfigManager`` with its ``ZkNodeChangeNotificationListener``.

Whoever changes a config (``AdminZkClient.change_configs``, from AlterConfigs or
IncrementalAlterConfigs on any broker, or Kafka's own tools) writes the entity's znode, then a
sequential ``/config/changes/config_change_<seq>`` naming it. Every broker:

- at start, notes the highest notification sequence number already there (everything older is
  covered by the configs it reads at start: ``ZkMetadataStore.load`` for broker configs, the
  UpdateMetadata handler for the topics that appear);
- watches the children of ``/config/changes`` (a kazoo ChildrenWatch: the callback, on
  kazoo's thread, only wakes this task through the Trio token), and for every notification
  newer than the last one processed, in sequence order, re-reads the entity's config
  (version 2 ``{"entity_path": "topics/<t>"}``; version 1 ``{"entity_type", "entity_name"}``
  is read too) and applies it:
  - ``topics/<t>``: the store's copy of the topic's configs, then its logs
    (``LogManager.reconfigure_topic``: the same path an AlterConfigs takes on a single
    broker);
  - ``brokers/<default>`` and ``brokers/<this broker's id>``: the store's copy, then the
    broker's dynamic config rebuilt from the static one with both layers
    (``KafkaServer.apply_dynamic_configs``); other brokers' ids are not this broker's
    business;
  - ``users/<sanitized user>``: the store's copy, then the SCRAM credentials the broker
    authenticates against (``KafkaServer.credentials``), as Kafka's ``UserConfigHandler``;
  - other entity types (clients, ips: quotas) are ignored: kafkapy has no quotas.

After each round of processing, notifications older than 15 minutes are deleted, by every
broker, as Kafka's ``purgeObsoleteNotifications`` does (a broker that starts later has
already read the configs themselves; without the purge ``/config/changes`` grows by one
znode per config change for ever). ZooKeeper reads run in worker threads; the configs are
applied on the event loop, between two awaits.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import trio
from kazoo.exceptions import NoNodeError

from kafkapy.errors import KafkaError
from kafkapy.server.metadata_store import ZkMetadataStore
from kafkapy.server.password_encoder import decode_dynamic_passwords
from kafkapy.zk.admin_zk_client import CONFIG_CHANGE_PREFIX, DEFAULT_ENTITY
from kafkapy.zk.zk_data import CONFIG_CHANGES_PATH, desanitize

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer

__all__ = ["CHANGE_EXPIRATION_MS", "ConfigChangeListener", "purge_obsolete_notifications"]

log = logging.getLogger(__name__)

_RETRY_S = 1.0
CHANGE_EXPIRATION_MS = 15 * 60 * 1000          # Kafka's ZkConfigManager.changeExpirationMs


def purge_obsolete_notifications(zk: Any, now_ms: int,
                                 expiration_ms: int = CHANGE_EXPIRATION_MS) -> list[str]:
    """Delete the config change notifications created more than ``expiration_ms`` before
    ``now_ms`` (blocking: a worker thread); the names deleted. One that another broker
    deleted first is skipped."""
    deleted = []
    for child in sorted(zk.get_children(CONFIG_CHANGES_PATH), key=_sequence):
        if not child.startswith(CONFIG_CHANGE_PREFIX):
            continue
        path = f"{CONFIG_CHANGES_PATH}/{child}"
        stat = zk.exists(path)
        if stat is None or now_ms - stat.ctime <= expiration_ms:
            continue
        try:
            zk.delete(path)
        except NoNodeError:
            continue
        deleted.append(child)
    return deleted


def _sequence(child: str) -> int:
    try:
        return int(child[len(CONFIG_CHANGE_PREFIX):])
    except ValueError:
        return -1


class ConfigChangeListener:
    """One broker's processing of config change notifications (see the module doc)."""

    def __init__(self, server: KafkaServer, store: ZkMetadataStore) -> None:
        self.server = server
        self.store = store
        self.last_seen = -1
        self._changed = trio.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._closed = False

    @property
    def _zk(self) -> Any:
        return self.store.client.zk

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        self._token = trio.lowlevel.current_trio_token()
        children = await trio.to_thread.run_sync(self._zk.get_children, CONFIG_CHANGES_PATH)
        self.last_seen = max((_sequence(c) for c in children), default=-1)
        await trio.to_thread.run_sync(self._watch)
        task_status.started()
        try:
            while True:
                await self._changed.wait()
                self._changed = trio.Event()
                try:
                    changes = await trio.to_thread.run_sync(self._read_new)
                except Exception as e:        # ZooKeeper away: retry shortly
                    log.warning("Reading config change notifications failed: %s", e)
                    await trio.sleep(_RETRY_S)
                    self._changed.set()
                    continue
                for entity_type, entity, configs in changes:
                    self._apply(entity_type, entity, configs)
        finally:
            self._closed = True

    def _watch(self) -> None:
        def on_children(_children: list[str]) -> bool | None:
            # kazoo's thread: only wake the Trio task.
            if self._closed or self._token is None:
                return False
            try:
                self._token.run_sync_soon(self._changed.set)
            except trio.RunFinishedError:
                return False
            return None
        self._zk.ChildrenWatch(CONFIG_CHANGES_PATH, on_children)

    def _read_new(self) -> list[tuple[str, str, dict[str, str]]]:
        """The notifications newer than ``last_seen``, in order, each with the entity's
        config as it is now (blocking: a worker thread)."""
        children = sorted((c for c in self._zk.get_children(CONFIG_CHANGES_PATH)
                           if c.startswith(CONFIG_CHANGE_PREFIX)), key=_sequence)
        out = []
        # ``last_seen`` moves only once every notification has been read: a failure part
        # way leaves them all for the next attempt.
        last_seen = self.last_seen
        for child in children:
            seq = _sequence(child)
            if seq <= last_seen:
                continue
            last_seen = seq
            try:
                data, _ = self._zk.get(f"{CONFIG_CHANGES_PATH}/{child}")
                notification = json.loads(data)
            except NoNodeError:
                continue
            except ValueError:
                log.warning("Ignoring config change notification %s: not JSON", child)
                continue
            if notification.get("version") == 2:
                entity_type, _, entity = str(notification.get("entity_path", "")).partition("/")
            else:
                entity_type = str(notification.get("entity_type", ""))
                entity = str(notification.get("entity_name", ""))
            if entity_type not in ("topics", "brokers", "users") or not entity:
                continue
            if entity_type == "brokers" and entity not in (DEFAULT_ENTITY,
                                                           str(self.server.node_id)):
                continue
            out.append((entity_type, entity,
                        self.store.admin_zk.fetch_entity_config(entity_type, entity)))
        self.last_seen = last_seen
        try:
            purged = purge_obsolete_notifications(self._zk, int(time.time() * 1000))
        except Exception as e:               # the next change tries again
            log.warning("Purging old config change notifications failed: %s", e)
        else:
            if purged:
                log.info("Purged %d config change notifications older than %d ms",
                         len(purged), CHANGE_EXPIRATION_MS)
        return out

    def _apply(self, entity_type: str, entity: str, configs: Mapping[str, str]) -> None:
        server = self.server
        if entity_type == "topics":
            self.store.set_topic_configs_local(entity, configs)
            if entity in self.store.topics:
                server.log_manager.reconfigure_topic(entity)
            log.info("Topic %s has the config overrides %s (config change notification)",
                     entity, dict(configs))
            return
        if entity_type == "users":
            user = desanitize(entity)
            self.store.set_user_configs_local(user, configs)
            server.credentials.apply_user_config(user, configs)
            log.info("User %s has the SCRAM mechanisms %s (config change notification)",
                     user, sorted(k for k in configs if k.startswith("SCRAM-")))
            return
        resource = "" if entity == DEFAULT_ENTITY else entity
        self.store.set_broker_configs_local(resource, configs)
        dynamic = self.store.broker_configs
        try:
            config = server.static_config
            if dynamic.get(""):
                config = config.with_updates(dynamic[""], cluster_default=True)
            if dynamic.get(str(server.node_id)):
                config = config.with_updates(
                    decode_dynamic_passwords(config, dynamic[str(server.node_id)]))
        except KafkaError as e:
            log.error("Cannot apply the dynamic broker configs %s: %s", dict(dynamic), e)
            return
        server.apply_dynamic_configs(config)
        log.info("Dynamic broker configs of %s are now %s (config change notification)",
                 "the cluster default" if not resource else f"broker {resource}",
                 dict(configs))
