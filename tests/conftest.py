"""Test-suite configuration: enables kafkapy's pytest plugin (``kafkapy.testing``).

An installed kafkapy (``pip install -e .``, as CI does) loads the plugin through its
``pytest11`` entry point; a bare checkout run with PYTHONPATH has no entry point, so the
plugin is registered here, under the entry point's name, unless it already is. (Not
``pytest_plugins = ["kafkapy.testing"]``: with the entry point loaded too, pytest would
import the module a second time for assertion rewriting and stop with "Module already
imported so cannot be rewritten".)

It also mends a socket leak in kafka-python 3.0.12, the test oracle: a connection attempt
that fails (a broker just stopped, a port refused) drops its socket without closing it, and
the suite's ``filterwarnings = error`` then fails whichever test the garbage collector
happens to run in with "unclosed <socket.socket ... laddr=('0.0.0.0', ...)>".
``tests/clients/test_kafka_python_sockets.py`` shows the leak and that the mend closes it.
"""

from __future__ import annotations

import functools
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from kafka.net import inet


def close_on_failed_connect(
    connect: Callable[..., Awaitable[socket.socket]],
) -> Callable[..., Awaitable[socket.socket]]:
    """``KafkaNetSocket.sock_connect`` that closes the socket when the connect fails."""

    @functools.wraps(connect)
    async def sock_connect(self: Any, net: Any, sock: socket.socket, *args: Any,
                           **kwargs: Any) -> socket.socket:
        try:
            return await connect(self, net, sock, *args, **kwargs)
        except BaseException:
            sock.close()
            raise

    sock_connect.mends_the_leak = True  # type: ignore[attr-defined]
    return sock_connect


UNMENDED_SOCK_CONNECT = inet.KafkaNetSocket.sock_connect
if not getattr(UNMENDED_SOCK_CONNECT, "mends_the_leak", False):
    inet.KafkaNetSocket.sock_connect = close_on_failed_connect(UNMENDED_SOCK_CONNECT)


def pytest_configure(config: pytest.Config) -> None:
    import kafkapy.testing

    if not config.pluginmanager.is_registered(kafkapy.testing):
        config.pluginmanager.register(kafkapy.testing, "kafkapy")
