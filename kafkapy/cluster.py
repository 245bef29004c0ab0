"""Cluster: a real ZooKeeper and N kafkapy brokers as processes on this machine, for tests,
demos and scripts, with the faults a resilience test injects.

    with kafkapy.Cluster(3) as cluster:
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
        ...
        cluster.kill(2)                 # SIGKILL: the controller learns it from ZooKeeper
        cluster.wait_for_unregistered(2)
        cluster.restart(2)              # same broker.id, data, port

Theory of operation
-------------------
- ZooKeeper is a ``ZooKeeperServer`` (Debian's package or ``$ZOOKEEPER_HOME``; a clear error
  otherwise), unless ``zookeeper_connect`` names a running ensemble; either way the cluster
  lives under a chroot of its own (``/kafkapy-<n>``), so several clusters can share one
  ZooKeeper.
- Broker ``i`` (ids 1..N) is ``python -m kafkapy`` with ``broker.id=i``, a port reserved at
  construction (kept across restarts, so clients' bootstrap lists stay valid), its own
  ``log.dirs`` under the cluster's directory, ``zookeeper.connect`` and the caller's settings
  (``settings`` for all, ``broker_settings`` per id, e.g. ``broker.rack``).
  Its log goes to ``broker-<i>.log`` there. ``CLUSTER_DEFAULTS`` are the settings it gives
  brokers unless told otherwise (a short controlled-shutdown backoff, so that stopping the
  last broker, which cannot hand its leaderships to anyone, does not take 10 s). ``start``
  returns once every broker has registered in ZooKeeper (``/brokers/ids/<i>``) and accepts
  connections; every wait is bounded by
  ``timeout`` and fails with the end of the broker's log.
- Faults: ``kill`` (SIGKILL: no shutdown at all; ZooKeeper drops the registration after
  ``zookeeper.session.timeout.ms``), ``stop`` (SIGTERM: the broker's clean shutdown),
  ``pause`` / ``resume`` (SIGSTOP / SIGCONT: a broker frozen past its session timeout comes back
  to find its session expired), ``restart``; the same for ZooKeeper itself through
  ``zookeeper``.
- Inspection reads ZooKeeper directly: ``registered()`` (broker ids with a live registration),
  ``broker_epoch(i)``, ``controller()`` and ``controller_epoch()``.
- Partitions, as the controller keeps them in ZooKeeper (the state znodes are the truth):
  ``partition_state(topic, p)`` (a ``LeaderAndIsr``: leader, leader_epoch, isr,
  controller_epoch, partition_epoch = the znode version; None before the controller wrote
  it), ``leader_of(topic, p)`` (None when the partition has no leader), ``isr_of(topic, p)``,
  ``wait_for_leader(topic, p, not_in=(), timeout=None)`` (until a leader not in ``not_in``;
  its id), ``wait_for_isr(topic, p, n, timeout=None)`` (until the ISR has exactly ``n``
  members; the ISR).
- Topics the way Kafka's AdminZkClient makes them: ``create_topic(topic, {p: [replicas]},
  config)`` writes ``/config/topics/<t>`` then ``/brokers/topics/<t>`` (with a new topic id)
  and the controller does the rest; ``delete_topic(topic)`` marks it in
  ``/admin/delete_topics``.

Not thread-safe: one owner drives it. ``close()`` (or leaving the ``with`` block) stops every
broker cleanly (SIGKILL after a grace period), then ZooKeeper, and removes a directory it made;
first it logs (ERROR) the exit code and the end of the log of every broker that exited when
nobody told it to (``ClusterBroker.unexpected_exit``).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol import (
    ApiKey,
    Request,
    RequestHeader,
    decode_response,
    encode_request,
    request_class,
)
from kafkapy.zk.zk_data import (
    ControllerRegistration,
    LeaderAndIsr,
    ReplicaAssignment,
    TopicAssignment,
    config_encode,
    config_path,
    delete_topic_path,
    partition_state_path,
    topic_path,
)
from kafkapy.zk.zookeeper_server import (
    ZooKeeperServer,
    four_letter_word,
    free_port,
    wait_stopped,
)

__all__ = ["Cluster", "ClusterBroker"]

log = logging.getLogger(__name__)

T = TypeVar("T")

# Settings a Cluster gives its brokers unless the caller sets them: the last broker to stop
# cannot hand its leaderships to anyone, so its controlled shutdown retries until it gives up
# (3 attempts 5 s apart with Kafka's defaults); a test cluster gives up sooner.
CLUSTER_DEFAULTS = {"controlled.shutdown.retry.backoff.ms": "200"}
_chroots = itertools.count()


class ClusterBroker:
    """One broker process of a Cluster."""

    def __init__(self, cluster: Cluster, broker_id: int, port: int) -> None:
        self.cluster = cluster
        self.broker_id = broker_id
        self.port = port
        self.data_dir = cluster.dir / f"broker-{broker_id}"
        self.log_path = cluster.dir / f"broker-{broker_id}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        # SIGTERM or SIGKILL was sent since the last start: an exit is expected.
        self.told_to_end = False

    @property
    def bootstrap(self) -> str:
        return f"{self.cluster.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def argv(self) -> list[str]:
        settings: dict[str, str] = {
            "broker.id": str(self.broker_id),
            "listeners": f"PLAINTEXT://{self.cluster.host}:{self.port}",
            "log.dirs": str(self.data_dir),
            "zookeeper.connect": self.cluster.zookeeper_connect,
            **{k: str(v) for k, v in self.cluster.settings.items()},
            **{k: str(v) for k, v in
               self.cluster.broker_settings.get(self.broker_id, {}).items()},
        }
        for key, value in CLUSTER_DEFAULTS.items():
            settings.setdefault(key, value)
        argv = [sys.executable, "-m", "kafkapy", "--log-level", self.cluster.log_level]
        for key, value in settings.items():
            argv += ["--override", f"{key}={value}"]
        return argv

    def start(self) -> None:
        if self.running:
            raise RuntimeError(f"broker {self.broker_id} is already running")
        self.told_to_end = False
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         env=self.cluster.env, cwd=self.cluster.dir)

    def log_tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def signal(self, sig: int) -> None:
        if self.running:
            assert self.proc is not None
            if sig in (signal.SIGTERM, signal.SIGKILL):
                self.told_to_end = True
            os.kill(self.proc.pid, sig)

    def unexpected_exit(self) -> str | None:
        """How the broker ended when nobody told it to (no SIGTERM or SIGKILL through
        ``signal`` since its start): its exit code and the end of its log. None while it
        runs, before its start, or after an exit it was told to make."""
        if self.proc is None or self.told_to_end or self.proc.poll() is None:
            return None
        return (f"broker {self.broker_id} exited on its own with {self.proc.returncode}; "
                f"the end of its log:\n{self.log_tail()}")


class Cluster:
    """A ZooKeeper and ``brokers`` kafkapy broker processes (ids 1..brokers)."""

    def __init__(self, brokers: int = 3, settings: Mapping[str, object] | None = None, *,
                 broker_settings: Mapping[int, Mapping[str, object]] | None = None,
                 data_dir: str | os.PathLike[str] | None = None,
                 zookeeper_connect: str | None = None, host: str = "127.0.0.1",
                 timeout: float = 60.0, log_level: str = "INFO") -> None:
        if brokers < 1:
            raise ValueError(f"a cluster has at least one broker, not {brokers}")
        self.host = host
        self.timeout = timeout
        self.log_level = log_level
        self.settings: dict[str, object] = dict(settings or {})
        # Per broker id, over ``settings`` (broker.rack, say).
        self.broker_settings = {i: dict(s) for i, s in (broker_settings or {}).items()}
        self._own_dir = data_dir is None
        self.dir = Path(data_dir).resolve() if data_dir is not None else \
            Path(tempfile.mkdtemp(prefix="kafkapy-cluster-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.zookeeper: ZooKeeperServer | None = None
        self._external_zk = zookeeper_connect
        self._chroot = f"/kafkapy-{os.getpid()}-{next(_chroots)}"
        self.brokers = {i: ClusterBroker(self, i, free_port(host))
                        for i in range(1, brokers + 1)}
        # Brokers import kafkapy from where this process did (a source tree or site-packages).
        # They run in the cluster's directory (``ClusterBroker.start``), since ``python -m``
        # puts the working directory before PYTHONPATH: started from another source tree's
        # root they would import that tree. So this process's relative entries are made
        # absolute here, and empty ones (the working directory) dropped.
        package_root = str(Path(__file__).resolve().parent.parent)
        path = [str(Path(p).resolve())
                for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_root, *path])}
        self._zk_client: Any = None

    # ===================================================================== lifecycle

    @property
    def zookeeper_connect(self) -> str:
        if self._external_zk is not None:
            return self._external_zk.rstrip("/") + self._chroot
        assert self.zookeeper is not None, "the cluster is not started"
        return self.zookeeper.connect_string + self._chroot

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values())

    def start(self) -> Cluster:
        """Start ZooKeeper (unless external) and every broker; returns once all are
        registered and accept connections. Raises (with the broker's log) otherwise."""
        try:
            if self._external_zk is None:
                self.zookeeper = ZooKeeperServer(self.dir / "zookeeper", host=self.host,
                                                 timeout=self.timeout).start()
            for broker in self.brokers.values():
                broker.start()
            for broker_id in self.brokers:
                self.wait_for_broker(broker_id)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        for broker in self.brokers.values():
            # Said before the directory with its log goes: a test that fails because a
            # broker died shows why in its teardown log.
            report = broker.unexpected_exit()
            if report is not None:
                log.error("%s", report)
        for broker_id in self.brokers:
            with contextlib.suppress(Exception):
                self.stop(broker_id)
        if self._zk_client is not None:
            client, self._zk_client = self._zk_client, None
            with contextlib.suppress(Exception):
                client.stop()
                client.close()
        if self.zookeeper is not None:
            self.zookeeper.stop()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ===================================================================== faults

    def kill(self, broker_id: int) -> None:
        """SIGKILL: the broker stops dead, its ZooKeeper session expires later."""
        broker = self.brokers[broker_id]
        broker.signal(signal.SIGCONT)
        broker.signal(signal.SIGKILL)
        if broker.proc is not None:
            broker.proc.wait()

    def stop(self, broker_id: int, grace: float | None = None) -> None:
        """SIGTERM and wait for the broker's clean shutdown (SIGKILL after ``grace``)."""
        broker = self.brokers[broker_id]
        if not broker.running:
            return
        assert broker.proc is not None
        broker.signal(signal.SIGCONT)
        broker.signal(signal.SIGTERM)
        try:
            broker.proc.wait(self.timeout if grace is None else grace)
        except subprocess.TimeoutExpired:
            self.kill(broker_id)

    def pause(self, broker_id: int) -> None:
        """SIGSTOP: the broker freezes (no heartbeats to ZooKeeper, no answers); returns once
        it is stopped."""
        broker = self.brokers[broker_id]
        broker.signal(signal.SIGSTOP)
        if broker.proc is not None:
            wait_stopped(broker.proc.pid)

    def resume(self, broker_id: int) -> None:
        self.brokers[broker_id].signal(signal.SIGCONT)

    def restart(self, broker_id: int) -> None:
        """Stop the broker if it runs, start it again (same id, data and port) and wait for
        its registration."""
        self.stop(broker_id)
        self.brokers[broker_id].start()
        self.wait_for_broker(broker_id)

    # ================================================================= inspection

    def _zk(self) -> Any:
        # Rooted at the ensemble's top, not at the cluster's chroot: the chroot may not exist
        # before the first broker creates it (kazoo warns about a missing chroot).
        if self._zk_client is None:
            client = KazooClient(hosts=self.zookeeper_connect.partition("/")[0], timeout=10)
            client.start(timeout=self.timeout)
            self._zk_client = client
        return self._zk_client

    def _path(self, path: str) -> str:
        return "/" + self.zookeeper_connect.partition("/")[2] + path

    def registered(self) -> set[int]:
        """The broker ids registered in ZooKeeper now."""
        client = self._zk()
        try:
            children = client.get_children(self._path("/brokers/ids"))
        except NoNodeError:
            return set()
        return {int(c) for c in children}

    def controller(self) -> int | None:
        """The broker id in ``/controller`` now (None: no controller at this moment)."""
        try:
            data, _ = self._zk().get(self._path("/controller"))
        except NoNodeError:
            return None
        return ControllerRegistration.decode(data).broker_id

    def controller_epoch(self) -> int | None:
        try:
            data, _ = self._zk().get(self._path("/controller_epoch"))
        except NoNodeError:
            return None
        return int(data.decode())

    def wait_for_controller(self, not_in: Iterable[int] = (), timeout: float | None = None
                            ) -> int:
        """Until a broker not in ``not_in`` is the controller; its id."""
        excluded = set(not_in)

        def found() -> tuple[int] | None:   # a tuple: broker id 0 is a controller too
            c = self.controller()
            return (c,) if c is not None and c not in excluded else None

        result = self.wait_until(
            found, f"a controller other than {sorted(excluded)}" if excluded else "a controller",
            timeout)
        assert result is not None           # wait_until returns only a true value
        return result[0]

    def broker_epoch(self, broker_id: int) -> int | None:
        """The czxid of the broker's registration (KIP-380's broker epoch), None if absent."""
        stat = self._zk().exists(self._path(f"/brokers/ids/{broker_id}"))
        return None if stat is None else int(stat.czxid)

    def wait_until(self, condition: Callable[[], T], what: str,
                   timeout: float | None = None, broker_id: int | None = None) -> T:
        """Poll ``condition`` until it is true; its value. Raises TimeoutError naming
        ``what`` (with the broker's log when one is named)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                tail = "" if broker_id is None else \
                    f"\nbroker {broker_id}'s log:\n{self.brokers[broker_id].log_tail()}"
                raise TimeoutError(f"timed out waiting for {what}{tail}")
            time.sleep(0.05)

    def wait_for_broker(self, broker_id: int, timeout: float | None = None) -> None:
        """Until the broker is registered, answers on its port and has heard from the
        controller (its Metadata names a controller and lists itself): what a client needs
        to use it. Raises RuntimeError at once if its process exited."""
        broker = self.brokers[broker_id]

        def ready() -> bool:
            if broker.proc is not None and broker.proc.poll() is not None:
                raise RuntimeError(f"broker {broker_id} exited with {broker.proc.returncode}:"
                                   f"\n{broker.log_tail()}")
            if broker_id not in self.registered():
                return False
            try:
                controller, brokers = self.broker_metadata(broker_id)
            except OSError:
                return False
            return controller >= 0 and broker_id in brokers

        self.wait_until(ready, f"broker {broker_id} to register, listen and know the "
                        f"controller", timeout, broker_id)

    def broker_metadata(self, broker_id: int) -> tuple[int, set[int]]:
        """What the broker's Metadata answer says now: the controller id (-1: none known)
        and the live brokers. Raises OSError if it does not answer."""
        broker = self.brokers[broker_id]
        frame = encode_request(Request(
            RequestHeader(api_key=ApiKey.METADATA, api_version=12, correlation_id=1,
                          client_id="kafkapy-cluster"),
            request_class(ApiKey.METADATA)(topics=[], allow_auto_topic_creation=False)))
        with socket.create_connection((self.host, broker.port), timeout=5) as sock:
            sock.sendall(len(frame).to_bytes(4, "big") + frame)
            data = b""
            while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
                chunk = sock.recv(65536)
                if not chunk:
                    raise ConnectionError(f"broker {broker_id} closed the connection")
                data += chunk
        body = decode_response(ApiKey.METADATA, 12, data[4:]).body
        return body.controller_id, {b.node_id for b in body.brokers}

    def wait_for_unregistered(self, broker_ids: int | Iterable[int],
                              timeout: float | None = None) -> None:
        ids = {broker_ids} if isinstance(broker_ids, int) else set(broker_ids)
        self.wait_until(lambda: not ids & self.registered(),
                        f"broker(s) {sorted(ids)} to leave ZooKeeper", timeout)

    def zookeeper_ok(self) -> bool:
        return self.zookeeper is not None and \
            four_letter_word(self.zookeeper.host, self.zookeeper.port, "ruok") == "imok"

    # ================================================================= partitions

    def create_topic(self, topic: str, assignment: Mapping[int, Iterable[int]],
                     config: Mapping[str, str] | None = None) -> uuid.UUID:
        """Create a topic as Kafka's AdminZkClient does (config znode, then the assignment
        with a new topic id); the controller elects its leaders. Returns the topic id.
        Raises kazoo's NodeExistsError if it exists."""
        topic_id = uuid.uuid4()
        client = self._zk()
        client.create(self._path(config_path("topics", topic)), config_encode(config or {}),
                      makepath=True)
        client.create(self._path(topic_path(topic)), TopicAssignment(
            topic, topic_id, {p: ReplicaAssignment(tuple(r))
                              for p, r in assignment.items()}).encode(), makepath=True)
        return topic_id

    def delete_topic(self, topic: str) -> None:
        """Mark the topic for deletion (``/admin/delete_topics/<t>``)."""
        self._zk().create(self._path(delete_topic_path(topic)), b"", makepath=True)

    def partition_state(self, topic: str, partition: int) -> LeaderAndIsr | None:
        """The partition's state znode, None while it has none."""
        tp = TopicPartition(topic, partition)
        try:
            data, stat = self._zk().get(self._path(partition_state_path(tp)))
        except NoNodeError:
            return None
        return LeaderAndIsr.decode(tp, data, int(stat.version))

    def leader_of(self, topic: str, partition: int) -> int | None:
        state = self.partition_state(topic, partition)
        return None if state is None or state.leader < 0 else state.leader

    def isr_of(self, topic: str, partition: int) -> tuple[int, ...]:
        state = self.partition_state(topic, partition)
        return () if state is None else state.isr

    def wait_for_leader(self, topic: str, partition: int, not_in: Iterable[int] = (),
                        timeout: float | None = None) -> int:
        """Until the partition has a leader not in ``not_in``; its id."""
        excluded = set(not_in)

        def found() -> tuple[int] | None:
            leader = self.leader_of(topic, partition)
            return (leader,) if leader is not None and leader not in excluded else None

        result = self.wait_until(found, f"a leader of {topic}-{partition} not in "
                                 f"{sorted(excluded)}", timeout)
        assert result is not None
        return result[0]

    def wait_for_isr(self, topic: str, partition: int, n: int,
                     timeout: float | None = None) -> tuple[int, ...]:
        """Until the partition's ISR has exactly ``n`` members; the ISR."""
        def found() -> tuple[tuple[int, ...]] | None:
            isr = self.isr_of(topic, partition)
            return (isr,) if len(isr) == n else None

        result = self.wait_until(found, f"{n} in-sync replicas of {topic}-{partition}",
                                 timeout)
        assert result is not None
        return result[0]
