"""ReplicationQuotaManager's window math (Kafka's SimpleRate over replication.quota.window.*)
and which replicas a topic's leader/follower.replication.throttled.replicas name, with an
injected clock (pure logic: no broker)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from kafkapy.config import BrokerConfig
from kafkapy.errors import InvalidConfigError
from kafkapy.log.config import LONG_MAX, LogConfig
from kafkapy.server.replica_manager import ReplicaManager
from kafkapy.server.replication_quota_manager import ReplicationQuotaManager, SimpleRate


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


def manager(bound: int, samples: int = 11, window_s: int = 1) -> tuple[ReplicationQuotaManager,
                                                                       Clock]:
    clock = Clock()
    return ReplicationQuotaManager(True, lambda: bound, samples, window_s, clock), clock


def test_rate_is_measured_over_at_least_one_window() -> None:
    rate = SimpleRate(11, 1000, 0)
    rate.record(1000.0, 0)
    # SimpleRate: at least one window, not num-1 of them as client quotas' Rate
    assert rate.window_size_ms(100) == 1000
    assert rate.rate(100) == pytest.approx(1000.0)
    assert rate.window_size_ms(4000) == 4000
    assert rate.rate(4000) == pytest.approx(250.0)


def test_old_samples_expire_after_the_whole_span() -> None:
    rate = SimpleRate(3, 1000, 0)
    rate.record(3000.0, 0)
    rate.record(600.0, 1500)                    # a new sample in the second window
    assert rate.rate(2000) == pytest.approx(3600.0 / 2.0)
    # the first sample is 3 windows old at 3000 ms: forgotten, only the second counts
    assert rate.rate(3000) == pytest.approx(600.0 / 1.5)


def test_quota_exceeded_above_the_bound_only() -> None:
    quota, clock = manager(1000)
    assert not quota.is_quota_exceeded()        # nothing recorded
    quota.record(1000)
    assert not quota.is_quota_exceeded()        # exactly the bound is acceptable
    quota.record(1)
    assert quota.is_quota_exceeded()
    clock.ms += 1500                            # 1001 bytes over 1.5 s
    assert quota.rate() == pytest.approx(1001 / 1.5)
    assert not quota.is_quota_exceeded()


def test_a_burst_throttles_until_the_average_falls() -> None:
    quota, clock = manager(100_000)
    quota.record(1_000_000)                     # one 1 MB fetch
    waited = 0
    while quota.is_quota_exceeded():
        clock.ms += 100
        waited += 100
    # 1 MB at 100 KB/s: 10 s before the next fetch may go
    assert waited == 10_000


def test_default_bound_never_exceeded() -> None:
    quota, _ = manager(LONG_MAX)
    quota.record(2**62)
    assert not quota.is_quota_exceeded()


def test_zero_bound_throttles_after_any_byte() -> None:
    quota, _ = manager(0)
    assert not quota.is_quota_exceeded()
    quota.record(1)
    assert quota.is_quota_exceeded()


def test_bound_is_read_live() -> None:
    bound = [10]
    clock = Clock()
    quota = ReplicationQuotaManager(False, lambda: bound[0], clock=clock)
    quota.record(100)
    assert quota.is_quota_exceeded()
    bound[0] = LONG_MAX                         # the throttle removed by a config change
    assert not quota.is_quota_exceeded()


def test_throttled_replicas_config() -> None:
    config = LogConfig.resolve({"leader.replication.throttled.replicas": "0:1, 1:2",
                                "follower.replication.throttled.replicas": "*"})
    assert config.throttles(True, 0, 1) and config.throttles(True, 1, 2)
    assert not config.throttles(True, 0, 2) and not config.throttles(True, 2, 1)
    assert config.throttles(False, 7, 3)
    assert config.to_topic_configs()["leader.replication.throttled.replicas"] == "0:1,1:2"
    assert not LogConfig().throttles(True, 0, 1) and not LogConfig().throttles(False, 0, 1)


@pytest.mark.parametrize("value", ["0:1,x", "0:1,*", "0-1", "a:1"])
def test_throttled_replicas_refused(value: str) -> None:
    with pytest.raises(InvalidConfigError) as info:
        LogConfig.resolve({"leader.replication.throttled.replicas": value})
    assert info.value.message.endswith(
        "leader.replication.throttled.replicas must be the literal '*' or a list of replicas "
        "in the following format: [partitionId],[brokerId]:[partitionId],[brokerId]:...")


def test_a_leading_wildcard_throttles_every_replica() -> None:
    # Kafka's validator accepts anything after a leading "*"
    config = LogConfig.resolve({"follower.replication.throttled.replicas": "*, 0:1"})
    assert config.throttles(False, 5, 9)


def test_the_broker_takes_its_rates_from_the_dynamic_configs() -> None:
    # Kafka's BrokerConfigHandler: per-broker dynamic over the cluster-wide dynamic default;
    # server.properties has no such setting in Kafka's ConfigDef
    server = SimpleNamespace(config=BrokerConfig.from_properties(
        {"leader.replication.throttled.rate": "5"}))
    manager = ReplicaManager(1, cast(Any, None), server=cast(Any, server))
    assert manager.leader_quota.upper_bound == LONG_MAX
    server.config = server.config.with_updates(
        {"leader.replication.throttled.rate": "1000"}, cluster_default=True)
    assert manager.leader_quota.upper_bound == 1000
    server.config = server.config.with_updates({"leader.replication.throttled.rate": "2000",
                                                "follower.replication.throttled.rate": "30"})
    assert (manager.leader_quota.upper_bound, manager.follower_quota.upper_bound) == (2000, 30)
    with pytest.raises(InvalidConfigError):
        server.config.with_updates({"follower.replication.throttled.rate": "-1"})
