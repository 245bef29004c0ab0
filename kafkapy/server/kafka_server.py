"""KafkaServer: one broker's components, started and stopped in dependency order.

Kafka's ``BrokerServer.startup`` / ``shutdown`` on one Trio nursery:

startup (``run``, with ``nursery.start``):
1. the metadata store (topics, dynamic configs) and the dynamic broker configs it holds;
2. the LogManager loads every log dir (recovery in worker threads after a crash); logs of
   topics that no longer exist, or whose topic id differs from the store's (deleted and
   re-created while down), are deleted;
3. the ReplicaManager leads every partition of every topic; its purgatory reapers start;
   the GroupCoordinator starts loading ``__consumer_offsets`` and the TransactionCoordinator
   ``__transaction_state`` in the background (their groups and transactional ids answer
   COORDINATOR_LOAD_IN_PROGRESS until then);
4. with `authorizer.class.name`, the AclAuthorizer loads the ACLs (and follows changes in
   cluster mode); the log manager's background tasks (flush, retention, checkpoints, cleaner);
5. KafkaApis and the handler pool, then the SocketServer binds every listener; advertised
   endpoints with port 0 take the bound port of the listener of the same name, an empty host
   the machine's name. ``task_status.started()`` fires once clients can connect.
6. With ``kafkapy.metrics.port`` >= 0 (or ``kafkapy.metrics.enabled``) the broker records
   its metrics (``self.metrics``, :mod:`kafkapy.server.metrics`: the request channel's
   observer, the log manager's flush observer, a Trio instrument timing the loop's idle
   time) and, with a port, serves them to Prometheus from a thread; off, ``self.metrics``
   is None and nothing is recorded.

shutdown (``shutdown()``, also on SIGTERM for the standalone server): stop accepting
(connections finish their in-flight request), complete parked operations, flush every log,
write the checkpoints and the clean-shutdown marker, then cancel the remaining tasks; the
metrics endpoint closes with the listeners.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import time
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING

import trio

from kafkapy.clients.network_client import Authenticate
from kafkapy.common.features import registration_ranges
from kafkapy.common.time import SYSTEM_TIME, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig, Endpoint
from kafkapy.controller.kafka_controller import KafkaController
from kafkapy.coordinator.group.group_coordinator import GroupCoordinator
from kafkapy.coordinator.group.group_metadata_manager import OFFSETS_TOPIC
from kafkapy.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from kafkapy.coordinator.transaction.transaction_state_manager import TRANSACTION_STATE_TOPIC
from kafkapy.errors import InvalidConfigError
from kafkapy.log.log_manager import LogManager, MetaPropertiesError, read_meta_properties
from kafkapy.network.request_channel import RequestChannel
from kafkapy.network.socket_server import SocketServer
from kafkapy.network.ssl_factory import ReconfigurableSslContext
from kafkapy.protocol import API_KEYS, ApiKey
from kafkapy.security.authorizer.acl import AuthorizerPolicy, parse_super_users
from kafkapy.security.authorizer.acl_store import AclStore, FileAclStore, ZkAclStore
from kafkapy.security.authorizer.authorizer import AclAuthorizer
from kafkapy.security.credential_cache import CredentialCache
from kafkapy.security.listener_sasl import inter_broker_authenticator, sasl_authenticator_factory
from kafkapy.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager
from kafkapy.server.admin_manager import AdminManager
from kafkapy.server.channel_builders import (
    inter_broker_ssl_context,
    reconfigure_ssl,
    security_protocols,
    ssl_listeners,
)
from kafkapy.server.client_quota_manager import ClientQuotaManager
from kafkapy.server.client_quota_store import (
    ClientQuotaStore,
    FileClientQuotaStore,
    ZkClientQuotaStore,
)
from kafkapy.server.config_change_listener import ConfigChangeListener
from kafkapy.server.connection_quotas import INT32_MAX, ConnectionQuotas
from kafkapy.server.controlled_shutdown import controlled_shutdown
from kafkapy.server.controller_mutation_quota import ControllerMutationQuotaManager
from kafkapy.server.coordinator_partitions import BrokerCoordinatorPartitions
from kafkapy.server.fetch_session import FetchSessionCache
from kafkapy.server.finalized_feature_cache import FinalizedFeatureCache
from kafkapy.server.handler_pool import KafkaRequestHandlerPool
from kafkapy.server.kafka_apis import KafkaApis, error_response_frame
from kafkapy.server.kafka_healthcheck import KafkaHealthcheck
from kafkapy.server.metadata_cache import BrokerInfo, MetadataCache, ZkMetadataCache
from kafkapy.server.metadata_store import FileMetadataStore, MetadataStore, ZkMetadataStore
from kafkapy.server.metrics import BrokerMetrics
from kafkapy.server.password_encoder import decode_dynamic_passwords
from kafkapy.server.replica_manager import ReplicaManager
from kafkapy.zk.zk_data import BrokerRegistration, topic_id_encode

if TYPE_CHECKING:
    from kafkapy.server.metrics.metrics_server import MetricsServer

__all__ = ["KafkaServer"]

log = logging.getLogger(__name__)


class KafkaServer:
    """A broker from a ``BrokerConfig``. ``await nursery.start(server.run)`` starts it and
    returns when it accepts connections; ``await server.shutdown()`` stops it cleanly."""

    def __init__(self, config: BrokerConfig, clock: Time = SYSTEM_TIME) -> None:
        self.static_config = config
        self.time = clock
        self.config = config
        self.node_id = config.node_id
        self.metadata_store: MetadataStore
        self.client_quota_store: ClientQuotaStore
        self.produce_quotas = self._quota_manager("producer_byte_rate")
        self.fetch_quotas = self._quota_manager("consumer_byte_rate")
        self.request_quotas = self._quota_manager("request_percentage")
        self.controller_mutation_quotas = ControllerMutationQuotaManager(
            lambda: self.client_quota_store,
            lambda: self.config.controller_quota_window_num,
            lambda: self.config.controller_quota_window_size_seconds,
            self.time.milliseconds)
        self.log_manager: LogManager
        self.replica_manager: ReplicaManager
        self.group_coordinator: GroupCoordinator
        self.transaction_coordinator: TransactionCoordinator
        self.add_partitions_to_txn_manager: AddPartitionsToTxnManager
        self.metadata_cache: MetadataCache | ZkMetadataCache
        self.admin = AdminManager(self)
        self.coordinator_partitions = BrokerCoordinatorPartitions(self)
        self.healthcheck: KafkaHealthcheck | None = None
        self.controller: KafkaController | None = None      # with zookeeper.connect
        self.features = FinalizedFeatureCache()
        self.fetch_sessions = FetchSessionCache(config.max_incremental_fetch_session_cache_slots)
        self.socket_server: SocketServer | None = None
        # The TLS context of this broker's connections to the others when the inter-broker
        # listener is SSL (its listener.name.<listener>.ssl.* settings), else None. Built now
        # so a bad store stops the start; reconfigured in place once the dynamic configs are
        # read (run) and on each dynamic update of the inter-broker listener's stores.
        self.inter_broker_ssl_context = _reconfigurable(inter_broker_ssl_context(config))
        self.request_channel: RequestChannel | None = None
        # Recorded only when asked for: off, the request and produce/fetch paths skip it.
        self.metrics: BrokerMetrics | None = None
        if config.kafkapy_metrics_enabled or config.kafkapy_metrics_port >= 0:
            self.metrics = BrokerMetrics(self, {key: api.name for key, api in API_KEYS.items()})
        self._metrics_server: MetricsServer | None = None
        # With authorizer.class.name: the ACLs (ZooKeeper in cluster mode, else the log dir).
        self.authorizer: AclAuthorizer | None = None
        # The SCRAM credentials SASL listeners authenticate against: filled from the store at
        # start, then by AlterUserScramCredentials and /config/users change notifications.
        self.credentials = CredentialCache()
        # SASL on the inter-broker listener: what this broker's connections to the others run
        # first (None for a PLAINTEXT one). Raises InvalidConfigError for an unusable setup.
        self.inter_broker_authenticate: Authenticate | None = \
            inter_broker_authenticator(config)
        self._scope: trio.CancelScope | None = None
        self._stopped = trio.Event()
        self._sockets_done = trio.Event()
        self._shutting_down = False
        self.started_ms = -1

    # ================================================================= configuration

    def _quota_manager(self, key: str) -> ClientQuotaManager:
        """Client byte-rate quotas of ``key``, over the quota store and the live config."""
        return ClientQuotaManager(lambda: self.client_quota_store, key,
                                  lambda: self.config.quota_window_num,
                                  lambda: self.config.quota_window_size_seconds,
                                  self.time.milliseconds)

    def broker_log_props(self) -> Mapping[str, object]:
        """The broker settings topic configs fall back to (``log.*``, ``message.max.bytes``,
        ...), dynamic values included."""
        return self.config.props

    def topic_overrides(self, topic: str) -> Mapping[str, object]:
        if isinstance(self.metadata_store, ZkMetadataStore):
            # /config/topics/<t> as last read: a LeaderAndIsr may create a topic's logs
            # before the UpdateMetadata that puts the topic in the cache.
            return self.metadata_store.topic_configs(topic)
        record = self.metadata_store.topics.get(topic)
        return {} if record is None else record.configs

    def validate_dynamic_configs(self, config: BrokerConfig) -> None:
        """What ``apply_dynamic_configs`` would refuse, checked before a change is stored:
        an SSL listener's new key store that cannot be read or is for another identity; a
        listener's connection limit or creation rate changed to 0 or less.

        Raises:
            InvalidConfigError: naming the listener and the reason.
        """
        _check_listener_limits(self.config, config)
        if self.socket_server is not None:
            reconfigure_ssl(config, self.socket_server.ssl_listeners)

    def apply_dynamic_configs(self, config: BrokerConfig) -> None:
        """Make ``config`` (with new dynamic values) the live one: logs follow at once, and
        SSL listeners whose key store changed serve new connections with it."""
        self.config = config
        self.log_manager.reconfigure_broker(config.props)
        if self.socket_server is not None:
            # max.connection.creation.rate needs nothing here: ConnectionQuotas reads the
            # live config on every connection.
            self.socket_server.update_connection_limits(
                max_connections=config.max_connections,
                max_connections_per_ip=config.max_connections_per_ip,
                max_connections_per_ip_overrides=config.max_connections_per_ip_overrides,
                max_connections_per_listener=_listener_max_connections(config))
        self.reload_ssl()

    def reload_ssl(self) -> None:
        """Rebuild the TLS context of every SSL listener whose key or trust store settings
        or files changed (a bad new store is logged and the old one kept); when the
        inter-broker listener is one, this broker's new connections to the others use its
        new stores too (open ones keep theirs, as in Kafka)."""
        if self.socket_server is None:
            return
        try:
            changed = reconfigure_ssl(self.config, self.socket_server.ssl_listeners)
            client = inter_broker_ssl_context(self.config) \
                if self.config.inter_broker_listener_name in changed else None
        except InvalidConfigError as e:
            log.error("Keeping the current TLS settings: %s", e.message)
            return
        for name, tls in changed.items():
            self.socket_server.update_ssl_listener(name, tls)
            log.info("Listener %s: new TLS key store loaded (%s)", name, tls.subject)
        if client is not None and self.inter_broker_ssl_context is not None:
            self.inter_broker_ssl_context.reconfigure(client)
            log.info("Inter-broker connections: new TLS key and trust stores for new "
                     "connections (listener %s)", self.config.inter_broker_listener_name)

    @property
    def advertised_endpoints(self) -> dict[str, Endpoint]:
        assert self.socket_server is not None
        bound = {e.name: e for e in self.socket_server.bound_endpoints}
        out = {}
        for e in self.config.advertised_listeners:
            port = e.port or (bound[e.name].port if e.name in bound else 0)
            host = e.host or socket.getfqdn()
            out[e.name] = Endpoint(e.name, host, port)
        return out

    # ======================================================================= startup

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        started = time.monotonic()
        cfg = self.config
        cfg.log_dirs[0].mkdir(parents=True, exist_ok=True)
        cluster_id = cfg.cluster_id
        store: MetadataStore
        if cfg.zookeeper_connect:
            self.healthcheck = KafkaHealthcheck(cfg)
            await self.healthcheck.connect()
            try:
                cluster_id = await self.healthcheck.cluster_id(self._proposed_cluster_id())
                # ZooKeeper mode: the cache is fed by the controller's UpdateMetadata, the
                # store reads and writes ZooKeeper (dynamic broker configs read here).
                self.metadata_cache = ZkMetadataCache(cluster_id, self.node_id)
                store = ZkMetadataStore(self.healthcheck.client, self.metadata_cache,
                                        self.node_id)
                await trio.to_thread.run_sync(store.load)
                quotas = ZkClientQuotaStore(self.healthcheck.client.zk)
                await trio.to_thread.run_sync(quotas.load)
                self.client_quota_store = quotas
                self.features.watch(self.healthcheck.client.zk)
            except BaseException:
                with trio.CancelScope(shield=True):     # no kazoo thread left behind
                    await self.healthcheck.close()
                raise
        else:
            store = FileMetadataStore(cfg.log_dirs[0])
            self.client_quota_store = FileClientQuotaStore(cfg.log_dirs[0])
            self.features.update(*store.finalized_features)
        self.metadata_store = store
        dynamic = store.broker_configs
        if dynamic.get(""):
            cfg = cfg.with_updates(dynamic[""], cluster_default=True)
        if dynamic.get(str(self.node_id)):
            cfg = cfg.with_updates(decode_dynamic_passwords(cfg, dynamic[str(self.node_id)]))
        self.config = cfg
        if self.inter_broker_ssl_context is not None and cfg is not self.static_config:
            # The inter-broker listener's stores may have been changed dynamically before
            # this start: its connections use the same ones as the listener.
            client = inter_broker_ssl_context(cfg)
            if client is not None:
                self.inter_broker_ssl_context.reconfigure(client)
        self.log_manager = LogManager(cfg.log_dirs, node_id=self.node_id,
                                      cluster_id=cluster_id, broker_props=cfg.props,
                                      topic_overrides=self.topic_overrides,
                                      clock=self.time.milliseconds)
        try:
            await trio.to_thread.run_sync(self.log_manager.load)
        except MetaPropertiesError as e:
            if self.healthcheck is None:
                raise
            await self.healthcheck.close()
            raise MetaPropertiesError(
                f"The cluster id {cluster_id} in ZooKeeper ({cfg.zookeeper_connect}) does not "
                f"match this broker's log dirs: the broker is trying to join the wrong "
                f"cluster; zookeeper.connect may be wrong ({e})") from e
        assert self.log_manager.cluster_id is not None
        self.replica_manager = ReplicaManager(self.node_id, self.log_manager, server=self,
                                              clock=self.time.milliseconds)
        self.add_partitions_to_txn_manager = AddPartitionsToTxnManager(self)
        if self.healthcheck is None:
            # In ZooKeeper mode the controller's LeaderAndIsr says what this broker leads and
            # follows (and StopReplica what it deletes): nothing is led at start.
            self._reconcile_logs()
        self.group_coordinator = GroupCoordinator(self.coordinator_partitions,
                                                  lambda: self.config, self.time)
        self.coordinator_partitions.register(OFFSETS_TOPIC, self.group_coordinator)
        self.coordinator_partitions.register_txn_completion(self.group_coordinator)
        self.transaction_coordinator = TransactionCoordinator(
            self.coordinator_partitions, self.coordinator_partitions,
            self.coordinator_partitions, lambda: self.config, self.time)
        self.coordinator_partitions.register(TRANSACTION_STATE_TOPIC,
                                             self.transaction_coordinator)
        for user, user_config in store.user_configs.items():
            self.credentials.apply_user_config(user, user_config)
        channel = self.request_channel = RequestChannel(cfg.queued_max_requests)
        if self.metrics is not None:
            channel.observer = self.metrics
            self.log_manager.flush_observer = self.metrics.log_flushed
            trio.lowlevel.add_instrument(self.metrics.idle)
        if cfg.authorizer_class_name:
            acl_store: AclStore = (ZkAclStore(self.healthcheck.client)
                                   if self.healthcheck is not None
                                   else FileAclStore(cfg.log_dirs[0]))
            self.authorizer = AclAuthorizer(acl_store, AuthorizerPolicy(
                parse_super_users(cfg.super_users), cfg.allow_everyone_if_no_acl_found))
        self.apis = KafkaApis(server=self)
        protocols = security_protocols(cfg)
        api_versions = self.apis.advertised(ApiKey.API_VERSIONS)
        authenticators = {
            e.name: sasl_authenticator_factory(
                cfg, e.name, self.credentials,
                max_api_versions_version=api_versions.high if api_versions else 0,
                error_response=error_response_frame)
            for e in cfg.listeners if protocols[e.name] in ("SASL_PLAINTEXT", "SASL_SSL")}
        pool = KafkaRequestHandlerPool(channel, self.apis, cfg.num_io_threads)
        self.socket_server = SocketServer(
            channel, [(e.name, e.host, e.port) for e in cfg.listeners],
            max_request_size=cfg.socket_request_max_bytes,
            connections_max_idle_ms=cfg.connections_max_idle_ms,
            max_connections=cfg.max_connections,
            max_connections_per_ip=cfg.max_connections_per_ip,
            max_connections_per_ip_overrides=cfg.max_connections_per_ip_overrides,
            max_connections_per_listener=_listener_max_connections(cfg),
            connection_quotas=ConnectionQuotas(
                lambda: self.config, lambda: self.client_quota_store,
                [e.name for e in cfg.listeners], self.time.milliseconds),
            inter_broker_listener=cfg.inter_broker_listener_name,
            send_buffer_bytes=cfg.socket_send_buffer_bytes,
            receive_buffer_bytes=cfg.socket_receive_buffer_bytes,
            listen_backlog_size=cfg.socket_listen_backlog_size,
            ssl_listeners=ssl_listeners(cfg), security_protocols=security_protocols(cfg),
            authenticators=authenticators)
        try:
            async with trio.open_nursery() as nursery:
                self._scope = nursery.cancel_scope
                if self.authorizer is not None:
                    # The ACLs are loaded before the first request can be authorized.
                    await nursery.start(self.authorizer.run)
                await nursery.start(self.replica_manager.run)
                await nursery.start(self.log_manager.run)
                await nursery.start(self.group_coordinator.run)
                await nursery.start(self.transaction_coordinator.run)
                self.coordinator_partitions.start()
                await nursery.start(pool.run)
                await nursery.start(self._serve_sockets)
                if not isinstance(store, ZkMetadataStore):
                    self.metadata_cache = MetadataCache(
                        self.log_manager.cluster_id,
                        BrokerInfo(self.node_id, self.advertised_endpoints, cfg.broker_rack),
                        store, self.replica_manager.partitions)
                if self.healthcheck is not None:
                    assert isinstance(store, ZkMetadataStore)
                    await self.healthcheck.register(self._registration)
                    await nursery.start(self.healthcheck.run)
                    await nursery.start(ConfigChangeListener(self, store).run)
                    self.controller = KafkaController(
                        self.healthcheck.client, self.node_id, self.time,
                        config=lambda: self.config, ssl_context=self.inter_broker_ssl_context,
                        authenticate=self.inter_broker_authenticate)
                    await nursery.start(self.controller.run)
                if self.metrics is not None and cfg.kafkapy_metrics_port >= 0:
                    from kafkapy.server.metrics.metrics_server import MetricsServer

                    self._metrics_server = MetricsServer(self.metrics, cfg.kafkapy_metrics_host,
                                                         cfg.kafkapy_metrics_port)
                    self._metrics_server.start()
                self.started_ms = self.time.milliseconds()
                log.info("kafkapy broker %d started in %.0f ms (cluster %s), listening on %s",
                         self.node_id, (time.monotonic() - started) * 1000,
                         self.log_manager.cluster_id,
                         ", ".join(f"{e.name}://{e.host}:{e.port}"
                                   for e in self.socket_server.bound_endpoints))
                task_status.started()
                await self._stopped.wait()
                nursery.cancel_scope.cancel()
        finally:
            if self.metrics is not None:
                with contextlib.suppress(KeyError):     # added once the logs were loaded
                    trio.lowlevel.remove_instrument(self.metrics.idle)
            if self._metrics_server is not None:        # cancelled without shutdown()
                self._metrics_server.stop()
            if self.healthcheck is not None:
                # The registration goes with the session: the cluster sees this broker leave.
                with trio.CancelScope(shield=True):
                    await self.healthcheck.close()
            if hasattr(self, "log_manager") and not self.log_manager._closed:
                # Cancelled from outside without shutdown(): still close the logs cleanly,
                # nothing is lost (the page cache holds every acknowledged write).
                with trio.CancelScope(shield=True):
                    self.replica_manager.shutdown()
                    if hasattr(self, "group_coordinator"):
                        self.group_coordinator.shutdown()
                    if hasattr(self, "transaction_coordinator"):
                        self.transaction_coordinator.shutdown()
                    await self.log_manager.shutdown()

    def _proposed_cluster_id(self) -> str:
        """The cluster id this broker offers ZooKeeper if ``/cluster/id`` does not exist yet:
        the configured one, else its log dirs' (``meta.properties``), else a new one."""
        if self.config.cluster_id:
            return self.config.cluster_id
        for d in self.config.log_dirs:
            stored = read_meta_properties(d).get("cluster.id")
            if stored:
                return stored
        return topic_id_encode(uuid.uuid4())

    def _registration(self) -> BrokerRegistration:
        protocols = self.config.listener_security_protocol_map
        return BrokerRegistration(
            self.node_id,
            tuple((e.name, protocols.get(e.name, e.name), e.host, e.port)
                  for e in self.advertised_endpoints.values()),
            rack=self.config.broker_rack, timestamp_ms=self.time.milliseconds(),
            features=registration_ranges())

    async def _serve_sockets(self, *, task_status: trio.TaskStatus[None]) -> None:
        assert self.socket_server is not None
        try:
            await self.socket_server.run(task_status=task_status)
        finally:
            self._sockets_done.set()

    def _reconcile_logs(self) -> None:
        """Lead every partition of every topic; delete logs no topic owns any more."""
        topics = self.metadata_store.topics
        for tp in list(self.log_manager.logs):
            record = topics.get(tp.topic)
            stale = record is None or tp.partition >= record.partitions
            if not stale and record is not None:
                on_disk = self.log_manager.topic_id_of(tp)
                stale = on_disk is not None and on_disk != record.topic_id
            if stale:
                log.warning("Deleting the log of %s: its topic no longer exists", tp)
                self.log_manager.delete_log(tp)
        for record in topics.values():
            for p in range(record.partitions):
                self.replica_manager.make_leader(TopicPartition(record.name, p),
                                                 record.topic_id)

    # ====================================================================== shutdown

    async def shutdown(self) -> None:
        """Controlled shutdown: stop accepting, let in-flight requests finish, complete parked
        operations, flush and checkpoint every log, mark the dirs cleanly shut down."""
        if self._shutting_down:
            await self._stopped.wait()
            return
        self._shutting_down = True
        log.info("Broker %d shutting down", self.node_id)
        if self.healthcheck is not None and self.socket_server is not None:
            # ZooKeeper mode: leadership moves away first (listeners still open: this broker
            # may be the controller answering its own request).
            await controlled_shutdown(self)
        if self._metrics_server is not None:
            metrics_server, self._metrics_server = self._metrics_server, None
            # Its thread's shutdown waits for the serving loop's next poll: not on this loop.
            await trio.to_thread.run_sync(metrics_server.stop)
        if self.socket_server is not None:
            await self.socket_server.stop_accepting()
            self.replica_manager.shutdown()
            self.group_coordinator.shutdown()
            self.transaction_coordinator.shutdown()
            await self.add_partitions_to_txn_manager.close()
            # Connections finish the request they have in flight and close.
            with trio.move_on_after(max(self.config.request_timeout_ms, 1000) / 1000):
                await self._sockets_done.wait()
        if hasattr(self, "log_manager"):
            await self.log_manager.shutdown()
        self._stopped.set()
        log.info("Broker %d shut down", self.node_id)

    @property
    def cluster_id(self) -> str:
        cid = self.log_manager.cluster_id
        assert cid is not None
        return cid

    def topic_id(self, topic: str) -> uuid.UUID | None:
        record = self.metadata_store.topics.get(topic)
        return None if record is None else record.topic_id


def _listener_max_connections(cfg: BrokerConfig) -> dict[str, int]:
    """Each listener's ``max.connections``: its ``listener.name.<l>.max.connections``, else
    the broker-wide value, as Kafka's ListenerConnectionQuota takes it (which matters for the
    protected inter-broker listener, exempt from the broker-wide limit but not from its own);
    unlimited ones are left out."""
    limits: dict[str, int] = {}
    for endpoint in cfg.listeners:
        value = cfg.listener_setting(endpoint.name, "max.connections")
        if isinstance(value, int) and value < INT32_MAX:
            limits[endpoint.name] = value
    return limits


def _check_listener_limits(old: BrokerConfig, new: BrokerConfig) -> None:
    """Kafka's ListenerConnectionQuota.validateReconfiguration: a listener whose
    ``max.connections`` or ``max.connection.creation.rate`` (its override, else the
    broker-wide value) changes must get a positive one (a broker-wide 0 is refused too)."""
    for endpoint in new.listeners:
        for name in ("max.connections", "max.connection.creation.rate"):
            value = new.listener_setting(endpoint.name, name)
            if value == old.listener_setting(endpoint.name, name):
                continue
            if isinstance(value, int) and value <= 0:
                raise InvalidConfigError(f"Invalid {name} {value}")


def _reconfigurable(context: ssl.SSLContext | None) -> ReconfigurableSslContext | None:
    return ReconfigurableSslContext(context) if context is not None else None
