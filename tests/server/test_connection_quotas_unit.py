"""ConnectionQuotas' rate arithmetic as pure logic (a hand-driven clock): the broker-wide
rate, the per-listener override, the inter-broker listener's exemption from the broker-wide
rate, and the per-IP quota taking a refused connection back from every rate."""

from __future__ import annotations

from pathlib import Path

from kafkapy.config import BrokerConfig
from kafkapy.server.client_quota_store import FileClientQuotaStore
from kafkapy.server.connection_quotas import ConnectionQuotas


def _quotas(tmp_path: Path, **settings: str) -> tuple[ConnectionQuotas, FileClientQuotaStore,
                                                      list[int]]:
    config = BrokerConfig.from_properties({
        "node.id": 1, "log.dirs": str(tmp_path),
        "listeners": "PLAINTEXT://localhost:0,BROKER://localhost:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT",
        "inter.broker.listener.name": "BROKER",
        "quota.window.num": "2", "quota.window.size.seconds": "1", **settings})
    store = FileClientQuotaStore(tmp_path)
    now = [1_000_000]
    return (ConnectionQuotas(lambda: config, lambda: store, ["PLAINTEXT", "BROKER"],
                             lambda: now[0]), store, now)


def test_broker_rate_throttles_but_not_the_inter_broker_listener(tmp_path: Path) -> None:
    quotas, _, now = _quotas(tmp_path, **{
        "max.connection.creation.rate": "2",
        "listener.name.broker.max.connection.creation.rate": "100"})
    assert [quotas.record_connection("PLAINTEXT") for _ in range(2)] == [0, 0]
    # 3 in a (minimum) 1 s window at a quota of 2/s: (3 - 2) / 2 * 1000 ms
    assert quotas.record_connection("PLAINTEXT") == 500
    # the inter-broker listener is out of the broker-wide rate, under its own 100/s
    assert [quotas.record_connection("BROKER") for _ in range(10)] == [0] * 10
    now[0] += 5_000                         # the windows are over
    assert quotas.record_connection("PLAINTEXT") == 0


def test_listener_rate_defaults_to_the_broker_value(tmp_path: Path) -> None:
    quotas, _, _ = _quotas(tmp_path, **{"max.connection.creation.rate": "1"})
    assert quotas.record_connection("BROKER") == 0
    assert quotas.record_connection("BROKER") > 0   # its own listener rate, 1/s


def test_ip_quota_refusal_is_taken_back_from_every_rate(tmp_path: Path) -> None:
    quotas, store, _ = _quotas(tmp_path, **{"max.connection.creation.rate": "3"})
    store.alter("ips/127.0.0.1", lambda c: c.update(connection_creation_rate="1"))
    store.alter("ips/<default>", lambda c: c.update(connection_creation_rate="50"))
    assert quotas.ip_quota("127.0.0.1") == 1 and quotas.ip_quota("10.0.0.1") == 50
    assert quotas.record_connection("PLAINTEXT") == 0
    assert quotas.record_ip("PLAINTEXT", "127.0.0.1") == 0
    for _ in range(3):
        assert quotas.record_connection("PLAINTEXT") == 0   # refused ones were taken back
        assert quotas.record_ip("PLAINTEXT", "127.0.0.1") == 1000   # capped at a window
    # another address, under the <default> quota: accepted, and now the broker's 3/s is full
    assert quotas.record_connection("PLAINTEXT") == 0
    assert quotas.record_ip("PLAINTEXT", "10.0.0.1") == 0
    assert quotas.record_connection("PLAINTEXT") == 0
    assert quotas.record_connection("PLAINTEXT") > 0
