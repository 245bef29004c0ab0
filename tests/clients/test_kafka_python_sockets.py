"""kafka-python 3.0.12 leaks the socket of a failed connect; ``tests/conftest.py`` mends it.

The suite fails on every warning, and a leaked socket is reported as an unraisable
ResourceWarning in whichever test the garbage collector next runs in: a flake in an
unrelated test. These tests pin both halves: the unmended library leaks (so the mend is still
needed with the pinned version) and the mended one closes the socket.
"""

from __future__ import annotations

import gc
import socket
import warnings
from collections.abc import Iterator

import pytest
from kafka import errors
from kafka.net import inet
from kafka.net.selector import NetworkSelector

from tests.conftest import UNMENDED_SOCK_CONNECT, close_on_failed_connect


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port with nothing listening (bound, never listened on)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield holder.getsockname()[1]


def unclosed_sockets_after_a_refused_connect(port: int) -> list[str]:
    net = NetworkSelector()
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", ResourceWarning)
            with pytest.raises(errors.KafkaConnectionError):
                net.run(inet.create_connection, net, "127.0.0.1", port)
            gc.collect()
        return [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]
    finally:
        net.close()


def test_the_unmended_library_leaks_the_socket(refused_port: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inet.KafkaNetSocket, "sock_connect", UNMENDED_SOCK_CONNECT)
    leaked = unclosed_sockets_after_a_refused_connect(refused_port)
    assert len(leaked) == 1 and "unclosed <socket.socket" in leaked[0], leaked


def test_the_mend_closes_it(refused_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inet.KafkaNetSocket, "sock_connect",
                        close_on_failed_connect(UNMENDED_SOCK_CONNECT))
    assert unclosed_sockets_after_a_refused_connect(refused_port) == []


def test_the_suite_runs_mended() -> None:
    assert getattr(inet.KafkaNetSocket.sock_connect, "mends_the_leak", False)
