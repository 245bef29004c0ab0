"""KafkaZkClient: what a kafkapy broker and controller do in ZooKeeper, as Kafka 2.8-3.x's
``kafka.zk.KafkaZkClient`` does it, over kazoo.

Theory of operation
-------------------
- **Blocking calls on kazoo's threading handler.** Every method blocks until ZooKeeper answers
  (or kazoo's retry gives up). A broker on Trio calls them through ``trio.to_thread.run_sync``;
  watch callbacks arrive on kazoo's threads and must re-enter Trio with
  ``trio.from_thread.run_sync``. Nothing here knows Trio.
- **Membership** (Kafka's KafkaHealthcheck / ``registerBroker``): ``/brokers/ids/<id>`` is an
  ephemeral znode holding the broker's JSON; its ``czxid`` is the broker epoch (KIP-380). A
  registration that finds the znode owned by another session fails with
  ``BrokerIdInUseError``; one owned by this very session (a retry after a connection loss) is
  accepted, as Kafka's ``checkedEphemeralCreate`` does.
- **The cluster id** is created once in ``/cluster/id`` (``get_or_create_cluster_id``); the
  caller checks it against its log dirs' ``meta.properties``.
- **Controller election** (``register_controller_and_increment_epoch``): one multi-op creates
  the ephemeral ``/controller`` and sets ``/controller_epoch`` to epoch + 1 on the condition that
  its znode version is still the one read, so two brokers racing cannot both win and epochs
  never repeat. The winner keeps the new znode version of ``/controller_epoch``: every later
  controller write (``controller_transaction``) carries a check on it, so a controller that was
  deposed (its session expired, someone else bumped the epoch) changes nothing: its writes fail
  with ``ControllerMovedError``.
- **Partition state**: the state znode's version is the partition epoch; updates are
  conditional on it (a stale leader's or controller's view is refused).
- **Producer id blocks** (``allocate_producer_id_block``, Kafka's ``ZkProducerIdManager``):
  read ``/latest_producer_id_block``, write the next block conditionally on the znode version,
  retry on a lost race: blocks never overlap across brokers.

Errors: ZooKeeper failures surface as kazoo's exceptions (``ConnectionLoss``,
``SessionExpiredError``, ...) unless listed above; the caller decides whether to retry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, RolledBackError
from kazoo.protocol.states import ZnodeStat

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import NotControllerError
from kafkapy.zk.zk_data import (
    BROKER_IDS_PATH,
    CLUSTER_ID_PATH,
    CONTROLLER_EPOCH_PATH,
    CONTROLLER_PATH,
    DELETE_TOPICS_PATH,
    FEATURE_PATH,
    PERSISTENT_PATHS,
    PRODUCER_ID_BLOCK_PATH,
    REASSIGN_PARTITIONS_PATH,
    TOPICS_PATH,
    BrokerRegistration,
    ControllerRegistration,
    FeatureZNode,
    LeaderAndIsr,
    ProducerIdBlock,
    TopicAssignment,
    broker_path,
    cluster_id_decode,
    cluster_id_encode,
    config_decode,
    config_path,
    controller_epoch_decode,
    controller_epoch_encode,
    delete_topic_path,
    partition_state_path,
    reassignment_decode,
    reassignment_encode,
    topic_path,
)

__all__ = ["BrokerIdInUseError", "ControllerMovedError", "KafkaZkClient", "RegisteredBroker"]

log = logging.getLogger(__name__)


class BrokerIdInUseError(RuntimeError):
    """Another live broker (another ZooKeeper session) holds this broker id: this broker
    must not start (Kafka fails its startup the same way)."""


class ControllerMovedError(NotControllerError):
    """A controller write was fenced: another broker has become controller since."""


@attrs.frozen
class RegisteredBroker:
    registration: BrokerRegistration
    epoch: int                          # the znode's czxid (KIP-380)


class KafkaZkClient:
    """Kafka's ZooKeeper operations over one kazoo session."""

    def __init__(self, connect: str, *, session_timeout_ms: int = 18_000,
                 connection_timeout_ms: int | None = None) -> None:
        chroot = connect.partition("/")[2]
        self.connect = connect
        self.chroot = f"/{chroot}" if chroot else ""
        self.session_timeout_s = session_timeout_ms / 1000
        self.connection_timeout_s = (connection_timeout_ms if connection_timeout_ms is not None
                                     else session_timeout_ms) / 1000
        self.zk = KazooClient(hosts=connect, timeout=session_timeout_ms / 1000)
        self._listeners: list[Callable[[KazooState], None]] = []

    # ==================================================================== session

    def start(self) -> None:
        """Connect within ``zookeeper.connection.timeout.ms`` (kazoo's timeout error
        otherwise), create the chroot if any, then Kafka's persistent paths."""
        if self.chroot:
            # The chroot must exist before a client rooted in it can create anything.
            root = KazooClient(hosts=self.connect.partition("/")[0],
                               timeout=self.session_timeout_s)
            try:
                root.start(timeout=self.connection_timeout_s)
                root.ensure_path(self.chroot)
            finally:
                root.stop()
                root.close()
        self.zk.start(timeout=self.connection_timeout_s)
        for path in PERSISTENT_PATHS:
            self.zk.ensure_path(path)

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()

    @property
    def session_id(self) -> int:
        session: tuple[int, bytes] | None = self.zk.client_id
        return session[0] if session else -1

    def add_state_listener(self, listener: Callable[[KazooState], None]) -> None:
        """``listener(state)`` on kazoo's thread when the session is LOST (expired),
        SUSPENDED (connection lost) or CONNECTED again."""
        self.zk.add_listener(listener)

    # ================================================================= cluster id

    def get_or_create_cluster_id(self, proposed: str) -> str:
        """The cluster's id: ``/cluster/id`` if it exists, else ``proposed``, written."""
        try:
            self.zk.create(CLUSTER_ID_PATH, cluster_id_encode(proposed), makepath=True)
            return proposed
        except NodeExistsError:
            data, _ = self.zk.get(CLUSTER_ID_PATH)
            return cluster_id_decode(data)

    # ==================================================================== brokers

    def register_broker(self, registration: BrokerRegistration) -> int:
        """Create ``/brokers/ids/<id>`` (ephemeral); the broker epoch. Raises
        BrokerIdInUseError when another session holds the id."""
        path = broker_path(registration.broker_id)
        try:
            self.zk.create(path, registration.encode(), ephemeral=True, makepath=True)
        except NodeExistsError:
            try:
                _, stat = self.zk.get(path)
            except NoNodeError:             # the other owner's session ended meanwhile
                return self.register_broker(registration)
            if stat.ephemeralOwner != self.session_id:
                raise BrokerIdInUseError(
                    f"broker.id {registration.broker_id} is already registered in ZooKeeper "
                    f"({self.connect}, {path}, session 0x{stat.ephemeralOwner:x}): another "
                    "broker is running with this id") from None
            self.zk.set(path, registration.encode())
            return int(stat.czxid)
        _, stat = self.zk.get(path)
        return int(stat.czxid)

    def get_all_brokers(self) -> dict[int, RegisteredBroker]:
        out: dict[int, RegisteredBroker] = {}
        for child in self.zk.get_children(BROKER_IDS_PATH):
            try:
                data, stat = self.zk.get(f"{BROKER_IDS_PATH}/{child}")
            except NoNodeError:
                continue                    # gone between the listing and the read
            out[int(child)] = RegisteredBroker(BrokerRegistration.decode(int(child), data),
                                               int(stat.czxid))
        return out

    # ================================================================= controller

    def get_controller_id(self) -> int | None:
        try:
            data, _ = self.zk.get(CONTROLLER_PATH)
        except NoNodeError:
            return None
        return ControllerRegistration.decode(data).broker_id

    def get_controller_epoch(self) -> tuple[int, int] | None:
        """(epoch, znode version of ``/controller_epoch``), None if never written."""
        try:
            data, stat = self.zk.get(CONTROLLER_EPOCH_PATH)
        except NoNodeError:
            return None
        return controller_epoch_decode(data), int(stat.version)

    def register_controller_and_increment_epoch(self, broker_id: int, timestamp_ms: int
                                                ) -> tuple[int, int]:
        """Become controller: (new controller epoch, its ``/controller_epoch`` znode
        version, which fences every later write). Raises ControllerMovedError when another
        broker is controller or won the race."""
        current = self.get_controller_epoch()
        if current is None:
            try:
                self.zk.create(CONTROLLER_EPOCH_PATH, controller_epoch_encode(0))
            except NodeExistsError:
                pass
            current = self.get_controller_epoch()
            assert current is not None
        epoch, version = current
        txn = self.zk.transaction()
        txn.create(CONTROLLER_PATH, ControllerRegistration(broker_id, timestamp_ms).encode(),
                   ephemeral=True)
        txn.set_data(CONTROLLER_EPOCH_PATH, controller_epoch_encode(epoch + 1), version)
        results = txn.commit()
        if not any(isinstance(r, Exception) for r in results):
            return epoch + 1, version + 1
        # Lost: someone else is controller, or the epoch moved under us. (Kafka also accepts
        # the case where /controller is ours from an earlier attempt of this same session.)
        try:
            data, stat = self.zk.get(CONTROLLER_PATH)
            owner = ControllerRegistration.decode(data).broker_id
            mine = stat.ephemeralOwner == self.session_id and owner == broker_id
        except NoNodeError:
            owner, mine = -1, False
        latest = self.get_controller_epoch()
        if mine and latest is not None:
            return latest
        raise ControllerMovedError(f"broker {owner} is the controller (election lost by "
                                   f"broker {broker_id})")

    def controller_transaction(self, epoch_zk_version: int,
                               build: Callable[[Any], None]) -> list[Any]:
        """Run the operations ``build(txn)`` adds to a transaction, fenced by a check that
        ``/controller_epoch`` is still at ``epoch_zk_version``. Raises ControllerMovedError
        if it is not (this broker is no longer the controller); other failed operations come
        back as exceptions in the results, as kazoo reports them."""
        txn = self.zk.transaction()
        txn.check(CONTROLLER_EPOCH_PATH, epoch_zk_version)
        build(txn)
        results: list[Any] = txn.commit()
        if isinstance(results[0], BadVersionError | NoNodeError):
            raise ControllerMovedError("the controller epoch moved: this broker is no longer "
                                       "the controller")
        return results[1:]

    # ===================================================================== topics

    def get_all_topics(self) -> list[str]:
        return sorted(self.zk.get_children(TOPICS_PATH))

    def get_topic_assignment(self, topic: str) -> TopicAssignment | None:
        try:
            data, _ = self.zk.get(topic_path(topic))
        except NoNodeError:
            return None
        return TopicAssignment.decode(topic, data)

    def create_topic(self, assignment: TopicAssignment, config: bytes) -> None:
        """``/config/topics/<t>`` then ``/brokers/topics/<t>`` (Kafka's order: the config
        exists before the controller sees the topic). Raises NodeExistsError."""
        self.zk.create(config_path("topics", assignment.topic), config, makepath=True)
        self.zk.create(topic_path(assignment.topic), assignment.encode(), makepath=True)

    def get_partition_states(self, tps: Sequence[TopicPartition]
                             ) -> dict[TopicPartition, LeaderAndIsr]:
        out: dict[TopicPartition, LeaderAndIsr] = {}
        for tp in tps:
            try:
                data, stat = self.zk.get(partition_state_path(tp))
            except NoNodeError:
                continue
            out[tp] = LeaderAndIsr.decode(tp, data, int(stat.version))
        return out

    def create_partition_states(self, epoch_zk_version: int,
                                states: Mapping[TopicPartition, LeaderAndIsr]) -> None:
        """The controller's first state of new partitions, fenced by its epoch."""
        def build(txn: Any) -> None:
            for tp, state in states.items():
                base = partition_state_path(tp).rsplit("/", 1)[0]
                for path in (base.rsplit("/", 1)[0], base):
                    if self.zk.exists(path) is None:
                        txn.create(path, b"")
                txn.create(partition_state_path(tp), state.encode())
        self._raise_first(self.controller_transaction(epoch_zk_version, build))

    def update_partition_states(self, epoch_zk_version: int,
                                states: Mapping[TopicPartition, LeaderAndIsr]
                                ) -> dict[TopicPartition, LeaderAndIsr | Exception]:
        """Conditional updates, each on its partition epoch (``partition_epoch``); per
        partition the new state (partition epoch + 1) or the error (BadVersionError: a
        stale view). One transaction: if any update fails, none is applied."""
        def build(txn: Any) -> None:
            for tp, state in states.items():
                txn.set_data(partition_state_path(tp), state.encode(), state.partition_epoch)
        results = self.controller_transaction(epoch_zk_version, build)
        out: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        for (tp, state), result in zip(states.items(), results, strict=True):
            if isinstance(result, Exception):
                out[tp] = result
            else:
                assert isinstance(result, ZnodeStat)
                out[tp] = attrs.evolve(state, partition_epoch=int(result.version))
        return out

    def get_topic_config(self, topic: str) -> dict[str, str]:
        """The topic's overrides in ``/config/topics/<t>`` ({} if none)."""
        try:
            data, _ = self.zk.get(config_path("topics", topic))
        except NoNodeError:
            return {}
        return config_decode(data)

    def load_topics(self, topics: Sequence[str]
                    ) -> tuple[dict[str, TopicAssignment], dict[TopicPartition, LeaderAndIsr]]:
        """Every named topic's assignment (topics gone meanwhile are left out) and the state
        of each of its partitions that has one: what a controller loads."""
        assignments: dict[str, TopicAssignment] = {}
        for topic in topics:
            assignment = self.get_topic_assignment(topic)
            if assignment is not None:
                assignments[topic] = assignment
        tps = [TopicPartition(t, p) for t, a in assignments.items() for p in a.partitions]
        return assignments, self.get_partition_states(tps)

    def set_topic_assignment(self, epoch_zk_version: int, assignment: TopicAssignment) -> None:
        """Rewrite ``/brokers/topics/<t>`` (a topic id given to an old topic, a
        reassignment's progress), fenced by the controller epoch."""
        def build(txn: Any) -> None:
            txn.set_data(topic_path(assignment.topic), assignment.encode())
        self._raise_first(self.controller_transaction(epoch_zk_version, build))

    def get_topic_deletions(self) -> list[str]:
        """The topics marked for deletion (children of ``/admin/delete_topics``)."""
        try:
            return sorted(self.zk.get_children(DELETE_TOPICS_PATH))
        except NoNodeError:
            return []

    def delete_topic_deletions(self, epoch_zk_version: int, topics: Sequence[str]) -> None:
        """Remove deletion markers (a refused or finished deletion), fenced."""
        for topic in topics:
            def build(txn: Any, topic: str = topic) -> None:
                txn.delete(delete_topic_path(topic))
            results = self.controller_transaction(epoch_zk_version, build)
            if results and isinstance(results[0], Exception) and \
                    not isinstance(results[0], NoNodeError):
                raise results[0]

    def delete_topic_znodes(self, epoch_zk_version: int, topic: str) -> None:
        """A deleted topic's last step (Kafka's TopicDeletionManager): remove
        ``/brokers/topics/<t>`` with its partition states, ``/config/topics/<t>`` and the
        deletion marker, each fenced by the controller epoch."""
        paths: list[str] = []

        def walk(path: str) -> None:
            try:
                children = self.zk.get_children(path)
            except NoNodeError:
                return
            for child in children:
                walk(f"{path}/{child}")
            paths.append(path)

        walk(topic_path(topic))
        for path in (config_path("topics", topic), delete_topic_path(topic)):
            if self.zk.exists(path) is not None:
                paths.append(path)

        def build(txn: Any) -> None:
            for path in paths:
                txn.delete(path)
        if paths:
            self._raise_first(self.controller_transaction(epoch_zk_version, build))

    def get_legacy_reassignment(self) -> dict[TopicPartition, tuple[int, ...]] | None:
        """``/admin/reassign_partitions`` (the pre-KIP-455 way to ask for a reassignment),
        None when absent."""
        try:
            data, _ = self.zk.get(REASSIGN_PARTITIONS_PATH)
        except NoNodeError:
            return None
        return reassignment_decode(data)

    def set_legacy_reassignment(self, epoch_zk_version: int,
                                remaining: Mapping[TopicPartition, Sequence[int]]) -> None:
        """Rewrite ``/admin/reassign_partitions`` with what is still in progress, or delete
        it when nothing is; fenced by the controller epoch."""
        if self.zk.exists(REASSIGN_PARTITIONS_PATH) is None:
            return

        def build(txn: Any) -> None:
            if remaining:
                txn.set_data(REASSIGN_PARTITIONS_PATH, reassignment_encode(remaining))
            else:
                txn.delete(REASSIGN_PARTITIONS_PATH)
        results = self.controller_transaction(epoch_zk_version, build)
        if results and isinstance(results[0], Exception) and \
                not isinstance(results[0], NoNodeError):
            raise results[0]

    @staticmethod
    def _raise_first(results: Sequence[Any]) -> None:
        for result in results:
            # The other operations of a failed transaction come back as RolledBackError:
            # the cause is the one that is not.
            if isinstance(result, Exception) and not isinstance(result, RolledBackError):
                raise result

    # =================================================================== features

    def get_feature_znode(self) -> tuple[FeatureZNode, int] | None:
        """``/feature`` and its znode version (the finalized features' epoch); None when
        absent."""
        try:
            data, stat = self.zk.get(FEATURE_PATH)
        except NoNodeError:
            return None
        return FeatureZNode.decode(data), int(stat.version)

    def write_feature_znode(self, epoch_zk_version: int, node: FeatureZNode,
                            expected_version: int | None) -> int:
        """Create ``/feature`` (``expected_version`` None) or replace it at that version,
        fenced by the controller epoch; the new znode version. Raises BadVersionError or
        NodeExistsError when someone else changed it first."""
        def build(txn: Any) -> None:
            if expected_version is None:
                txn.create(FEATURE_PATH, node.encode())
            else:
                txn.set_data(FEATURE_PATH, node.encode(), expected_version)
        self._raise_first(self.controller_transaction(epoch_zk_version, build))
        return 0 if expected_version is None else expected_version + 1

    # =============================================================== producer ids

    def allocate_producer_id_block(self, broker_id: int, block_size: int) -> int:
        """The first id of a fresh block of ``block_size`` producer ids for ``broker_id``,
        reserved in ``/latest_producer_id_block`` (Kafka's ZkProducerIdManager)."""
        while True:
            try:
                data, stat = self.zk.get(PRODUCER_ID_BLOCK_PATH)
            except NoNodeError:
                self.zk.ensure_path(PRODUCER_ID_BLOCK_PATH)
                continue
            start = 0 if not data else ProducerIdBlock.decode(data).block_end + 1
            block = ProducerIdBlock(broker_id, start, start + block_size - 1)
            try:
                self.zk.set(PRODUCER_ID_BLOCK_PATH, block.encode(), stat.version)
            except BadVersionError:
                log.debug("lost a race for a producer id block; trying again")
                continue
            return start
