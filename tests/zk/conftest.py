"""One real ZooKeeper for the tests of kafkapy.zk (started once, from Debian's package or
$ZOOKEEPER_HOME); each test works under a chroot of its own, so tests never see each other's
znodes."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from kafkapy.zk.zookeeper_server import ZooKeeperServer

_chroots = itertools.count()


@pytest.fixture(scope="session")
def zookeeper_server() -> Iterator[ZooKeeperServer]:
    with ZooKeeperServer() as zk:
        yield zk


@pytest.fixture
def zk_connect(zookeeper_server: ZooKeeperServer) -> str:
    """A ``zookeeper.connect`` string with a chroot no other test uses."""
    return f"{zookeeper_server.connect_string}/kafkapy-test-{next(_chroots)}"
