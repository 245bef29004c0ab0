"""ConnectionQuotas: Kafka's connection creation rate quotas (KIP-612), the rates behind
``SocketServer``'s acceptors (the counts, ``max.connections*``, stay in the socket server).

Three rates, each Kafka's ``Rate`` over ``quota.window.num`` samples of
``quota.window.size.seconds`` (``SampledRate``), each recording one per new connection:

- broker-wide, bounded by ``max.connection.creation.rate``; the inter-broker listener is
  exempt from it when the broker has more than one listener (Kafka's ``protectedListener``);
- per listener, bounded by ``listener.name.<l>.max.connection.creation.rate``, which falls
  back to the broker-wide value (Kafka configures each listener's quota with
  ``valuesWithPrefixOverride``);
- per client IP, bounded by the ``connection_creation_rate`` quota of ``ips/<ip>``, else of
  ``ips/<default>`` (the client quota store); none: no rate kept.

``record_connection`` is Kafka's ``recordConnectionAndGetThrottleTimeMs``: it records the
connection on the broker and listener rates and returns how long the acceptor must wait
before taking it (the longer of the two throttles; 0 within the quotas). ``record_ip`` is
``recordIpConnectionMaybeThrottle``: over the IP's quota it returns the throttle time, after
taking the connection back from all three rates (the socket server then closes it once that
time is over). A throttle is Kafka's ``QuotaUtils.boundedThrottleTime``:
``(rate - quota) / quota * window``, at most ``quota.window.size.seconds``.
Unlimited quotas (Kafka's ``Int.MaxValue``) keep no rate. Everything runs on the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kafkapy.config import BrokerConfig
from kafkapy.server.client_quota_manager import SampledRate
from kafkapy.server.client_quota_store import ClientQuotaStore, sanitize

__all__ = ["ConnectionQuotas"]

INT32_MAX = 2**31 - 1
IP_QUOTA_KEY = "connection_creation_rate"
_IP_RATES_MAX = 4096            # forget idle IPs' rates past this many (Kafka expires them)
_IP_IDLE_MS = 3600 * 1000


class ConnectionQuotas:
    """The connection creation rates of one broker."""

    def __init__(self, config: Callable[[], BrokerConfig],
                 store: Callable[[], ClientQuotaStore], listeners: Sequence[str],
                 clock: Callable[[], int]) -> None:
        self._config = config
        self._store = store
        self._listeners = tuple(listeners)
        self._clock = clock
        self._broker: SampledRate | None = None
        self._per_listener: dict[str, SampledRate] = {}
        self._per_ip: dict[str, SampledRate] = {}

    def _new_rate(self, now_ms: int) -> SampledRate:
        cfg = self._config()
        return SampledRate(cfg.quota_window_num, cfg.quota_window_size_seconds * 1000, now_ms)

    def _protected(self, listener: str) -> bool:
        return listener == self._config().inter_broker_listener_name and \
            len(self._listeners) > 1

    def _throttle_ms(self, rate: SampledRate, bound: float, now_ms: int) -> int:
        observed = rate.rate(now_ms)
        if observed <= bound:
            return 0
        max_ms = self._config().quota_window_size_seconds * 1000
        if bound <= 0:
            return max_ms
        return min(max_ms, round((observed - bound) / bound * rate.window_size_ms(now_ms)))

    def _listener_bound(self, listener: str) -> int:
        value = self._config().listener_setting(listener, "max.connection.creation.rate")
        assert isinstance(value, int)
        return value

    def record_connection(self, listener: str) -> int:
        """Record a new connection on ``listener``; the time (ms) the acceptor waits."""
        now = self._clock()
        throttle = 0
        if not self._protected(listener):
            bound = self._config().max_connection_creation_rate
            if bound < INT32_MAX:
                if self._broker is None:
                    self._broker = self._new_rate(now)
                self._broker.record(1, now)
                throttle = self._throttle_ms(self._broker, bound, now)
        bound = self._listener_bound(listener)
        if bound < INT32_MAX:
            rate = self._per_listener.get(listener)
            if rate is None:
                rate = self._per_listener[listener] = self._new_rate(now)
            rate.record(1, now)
            throttle = max(throttle, self._throttle_ms(rate, bound, now))
        return throttle

    def ip_quota(self, host: str) -> int | None:
        """The ``connection_creation_rate`` of ``host`` (its own, else ``<default>``)."""
        configs = self._store().configs
        for path in (f"ips/{sanitize(host)}", "ips/<default>"):
            value = configs.get(path, {}).get(IP_QUOTA_KEY)
            if value is not None:
                try:
                    return int(float(value))
                except ValueError:
                    continue
        return None

    def record_ip(self, listener: str, host: str) -> int:
        """Record a new connection from ``host``; 0, or the throttle time (ms) after which
        the connection must be closed (it was taken back from every rate)."""
        bound = self.ip_quota(host)
        if bound is None or bound >= INT32_MAX:
            return 0
        now = self._clock()
        rate = self._per_ip.get(host)
        if rate is None:
            if len(self._per_ip) >= _IP_RATES_MAX:
                self._per_ip = {ip: r for ip, r in self._per_ip.items()
                                if now - r.last_used_ms < _IP_IDLE_MS}
            rate = self._per_ip[host] = self._new_rate(now)
        rate.last_used_ms = now
        rate.record(1, now)
        throttle = self._throttle_ms(rate, bound, now)
        if throttle > 0:
            # Kafka's updateListenerMetrics: a refused connection counts in no rate.
            rate.unrecord(1, now)
            if self._broker is not None and not self._protected(listener):
                self._broker.unrecord(1, now)
            listener_rate = self._per_listener.get(listener)
            if listener_rate is not None:
                listener_rate.unrecord(1, now)
        return throttle
