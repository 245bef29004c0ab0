"""ZooKeeperServer (kafkapy.zk.zookeeper_server): a real ZooKeeper from Debian's package (or
$ZOOKEEPER_HOME), reached with kazoo, as the cluster tests will use it: Kafka's znodes written
and read back, ephemeral registrations gone with their session, and the faults a resilience
test injects (SIGSTOP, SIGKILL) seen by a client."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from kafkapy.zk.zk_data import BROKER_IDS_PATH, BrokerRegistration, broker_path
from kafkapy.zk.zookeeper_server import (
    ZooKeeperNotFound,
    ZooKeeperServer,
    four_letter_word,
    free_port,
    zookeeper_classpath,
)


@pytest.fixture
def zookeeper(zookeeper_server: ZooKeeperServer) -> ZooKeeperServer:
    return zookeeper_server


def client(server: ZooKeeperServer, session_timeout: float = 4.0) -> KazooClient:
    zk = KazooClient(hosts=server.connect_string, timeout=session_timeout)
    zk.start(timeout=10)
    return zk


def test_a_broker_registration_lives_as_long_as_its_session(zookeeper: ZooKeeperServer
                                                              ) -> None:
    reg = BrokerRegistration(1, (("PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092),),
                             timestamp_ms=1)
    broker, observer = client(zookeeper), client(zookeeper)
    try:
        broker.ensure_path(BROKER_IDS_PATH)
        broker.create(broker_path(1), reg.encode(), ephemeral=True)
        data, stat = observer.get(broker_path(1))
        assert BrokerRegistration.decode(1, data) == reg
        assert stat.czxid > 0 and stat.ephemeralOwner == broker.client_id[0]
        # A second broker with the same id is refused (Kafka's NodeExists -> refuse to start).
        with pytest.raises(NodeExistsError):
            observer.create(broker_path(1), reg.encode(), ephemeral=True)
        broker.stop()
        assert observer.exists(broker_path(1)) is None
        # Re-registration gets a new czxid: the broker epoch of KIP-380 moves on.
        observer.create(broker_path(1), reg.encode(), ephemeral=True)
        assert observer.exists(broker_path(1)).czxid > stat.czxid
    finally:
        for zk in (broker, observer):
            zk.stop()
            zk.close()      # kazoo's wake-up socket pair is closed only here


def test_four_letter_words(zookeeper: ZooKeeperServer) -> None:
    assert four_letter_word(zookeeper.host, zookeeper.port, "ruok") == "imok"
    assert "Mode: standalone" in four_letter_word(zookeeper.host, zookeeper.port, "srvr")


def test_pause_and_kill_are_seen_by_clients(tmp_path: Path) -> None:
    with ZooKeeperServer(tmp_path / "zk") as server:
        zk = client(server)
        try:
            zk.create("/probe", b"1")
            server.pause()
            assert four_letter_word(server.host, server.port, "ruok", timeout=1.0) == ""
            server.resume()
            deadline = time.monotonic() + 10
            while four_letter_word(server.host, server.port, "ruok") != "imok":
                assert time.monotonic() < deadline, "ZooKeeper did not come back from SIGCONT"
                time.sleep(0.1)
            assert zk.get("/probe")[0] == b"1"
            server.kill()
            assert server.proc is not None and server.proc.returncode == -9
            assert four_letter_word(server.host, server.port, "ruok", timeout=1.0) == ""
        finally:
            zk.stop()
            zk.close()
    # The data directory given by the caller is kept (and holds what ZooKeeper wrote).
    assert (tmp_path / "zk" / "data").is_dir()


def test_a_missing_installation_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ZooKeeperNotFound, match="holds no ZooKeeper jars"):
        zookeeper_classpath(str(tmp_path))


def test_free_ports_lie_below_the_ephemeral_range_and_are_handed_once() -> None:
    """An outgoing connection's local port comes from the ephemeral range; a port chosen
    there could be taken before the server binds it (seen in CI as "address already in
    use"). Ports below the range are only taken by a bind."""
    ephemeral_low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = [free_port("127.0.0.1") for _ in range(50)]
    assert len(set(ports)) == 50
    assert all(20000 <= p < ephemeral_low for p in ports)
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))     # free now, as promised
