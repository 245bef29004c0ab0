"""ReplicationQuotaManager: Kafka's replication throttles (KIP-73), one for this broker as a
leader (``leader.replication.throttled.rate``) and one as a follower
(``follower.replication.throttled.rate``).

What it owns: the byte rate of the throttled partitions' replication traffic and whether it is
above the broker's setting. Which partitions are throttled is their topic's
``leader/follower.replication.throttled.replicas`` (``LogConfig.throttles``: ``*`` or
``partition:broker`` entries naming this broker), read from the partition's live LogConfig.

The rate is Kafka's ``SimpleRate`` over ``replication.quota.window.num`` (11) samples of
``replication.quota.window.size.seconds`` (1 s): the sum of the samples over the time since the
oldest sample began, counted as at least one window (not ``num - 1`` windows as client quotas'
``Rate``: a replication throttle starts biting within the first second). The quota is
exceeded when that rate is above the setting (Kafka's ``Quota.upperBound``: the bound itself
is acceptable). Recording never refuses (Kafka records with QuotaEnforcementType.NONE): the
callers decide per partition per fetch whether to send / fetch it.

Invariants (Kafka 3.x): throttling never applies to a replica in the ISR (the leader checks
the follower against the partition's ISR, the follower its own lag); the leader records the
bytes it sends for throttled partitions (whether the replica is in sync or not), the follower
the bytes it appends for them. Everything runs on the event loop: no locks.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kafkapy.server.client_quota_manager import SampledRate

__all__ = ["ReplicationQuotaManager", "SimpleRate"]


class SimpleRate(SampledRate):
    """Kafka's ``SimpleRate``: the elapsed time since the oldest sample, at least one
    window."""

    def window_size_ms(self, now_ms: int) -> int:
        self._purge(now_ms)
        elapsed = now_ms - min(s.start_ms for s in self._samples)
        return max(elapsed, self.window_ms)


class ReplicationQuotaManager:
    """One direction's replication throttle: ``leader`` (a leader answering followers) or
    not (a follower fetching). ``bound`` gives the live setting in bytes per second (the
    broker config is swapped whole on a dynamic change, so it is read each time)."""

    def __init__(self, leader: bool, bound: Callable[[], int], samples: int = 11,
                 window_seconds: int = 1, clock: Callable[[], int] | None = None) -> None:
        self.leader = leader
        self._bound = bound
        self._samples = samples
        self._window_ms = window_seconds * 1000
        self._clock = clock
        self._rate: SampledRate | None = None

    def _now_ms(self) -> int:
        if self._clock is not None:
            return self._clock()
        return int(time.monotonic() * 1000)

    def _sensor(self, now_ms: int) -> SampledRate:
        if self._rate is None:
            self._rate = SimpleRate(self._samples, self._window_ms, now_ms)
        return self._rate

    @property
    def upper_bound(self) -> int:
        return self._bound()

    def record(self, value: int) -> None:
        """Bytes of throttled partitions sent (leader) or appended (follower)."""
        if value <= 0:
            return
        now = self._now_ms()
        self._sensor(now).record(float(value), now)

    def rate(self) -> float:
        """The measured bytes per second (0 before anything was recorded)."""
        now = self._now_ms()
        return self._sensor(now).rate(now)

    def is_quota_exceeded(self) -> bool:
        """Kafka's checkQuotas: the rate is above the bound (never with the default
        Long.MAX_VALUE, which skips measuring)."""
        bound = self._bound()
        if bound >= 2**63 - 1:
            return False
        return self.rate() > bound
