"""ClientQuotaManager: Kafka's client quotas (``producer_byte_rate`` for Produce,
``consumer_byte_rate`` for consumers' Fetch, ``request_percentage`` for the time handlers
spend on a client's requests), per (user, client-id), enforced by throttling.

Which quota applies (Kafka's ``DefaultQuotaCallback``): the first of these entities in the
``ClientQuotaStore`` that sets the key, for user ``u`` and client id ``c``::

    users/u/clients/c, users/u/clients/<default>, users/u,
    users/<default>/clients/c, users/<default>/clients/<default>, users/<default>,
    clients/c, clients/<default>

The match decides who shares the rate (Kafka's metric tags): a (user, client) match is
metered per (u, c), a user-level one per user (every client of ``u`` together), a
client-level one per client id; a default is still metered per user / client id, never
shared across them. No match: no quota, nothing recorded.

The rate is Kafka's ``Rate`` over a ``SampledStat``: ``quota.window.num`` (11) samples of
``quota.window.size.seconds`` (1 s); a sample is replaced when its window is over, samples
older than the whole span are reset; the rate is the sum of the samples over the elapsed time
since the oldest sample began, counted as at least ``num - 1`` full windows. When a recorded
value takes the rate above the quota, the throttle time is Kafka's
``QuotaUtils.throttleTime``: ``round((rate - quota) / quota * window)`` ms, ``window`` the
elapsed time the rate was measured over; the caller puts it in the response's
``throttle_time_ms`` and mutes the connection that long (KIP-219).

What ``request_percentage`` measures (Kafka's ``ClientRequestQuotaManager`` records
``Request.requestThreadTimeNanos``: from the moment a handler thread dequeued the request to
the moment ``KafkaApis.handle`` returned, the time the request held a handler thread): here
the wall time of the handler's ``await`` in ``KafkaApis.handle``, i.e. the time the request
held one of the ``num.io.threads`` handler slots, including a wait on a thread (an fsync) as
it holds a Kafka handler thread. A request whose answer waits on a purgatory (an acks=all
Produce waiting for the ISR, a long-poll Fetch waiting for ``fetch.min.bytes``) returns
``Parked`` and frees its slot: the wait is not recorded, as Kafka's delayed operations do not
hold a handler thread. Kafka also adds the network thread's time for the request (after the
answer is sent, ``recordNoThrottle``); here the event loop's socket work is not split per
request, so it is not recorded. A consumer's Fetch records its request time when its answer is
built (Kafka's ``handleFetchRequest`` callback), so that a request-time throttle empties the
answer and fills its ``throttle_time_ms`` as a byte-rate throttle does.

Metrics (Kafka's quota sensors, ``kafka.server:type=<quota type>,user=u,client-id=c``, the
empty tag left out as Kafka's JmxReporter leaves it out): per metered (user, client-id) the
rate (``byte-rate`` for Produce and Fetch, ``request-time`` for Request) over the quota
window, and ``throttle-time``, the average throttle time (ms) of the throttles recorded in the
quota window (Kafka's ``Avg``: NaN with none). ``metric_values`` gives them; ``BrokerMetrics``
exposes them as the Prometheus JMX exporter names them (``kafka_server_quota_byte_rate`` ...).
Only clients with a quota are metered (Kafka meters every client once any quota of the type
exists: an unlimited client shows there with a NaN throttle-time).

Everything runs on the event loop: plain dicts, no locks. The quota of a (user, client) pair
is cached until the store's ``version`` changes; rates idle for an hour are forgotten (checked
when a new client appears and there are many), as Kafka expires inactive sensors.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs

from kafkapy.network.request_channel import Request
from kafkapy.server.client_quota_store import ClientQuotaStore, sanitize

__all__ = ["DEFAULT_PRINCIPAL", "NANOS_TO_PERCENTAGE", "QUOTA_TYPES", "ClientQuotaManager",
           "QuotaMetric", "SampledAvg", "SampledRate", "user_of_principal"]

DEFAULT_PRINCIPAL = "User:ANONYMOUS"
# Kafka's ClientRequestQuotaManager.NanosToPercentagePerSecond: request_percentage counts
# handler time as a percentage of one second.
NANOS_TO_PERCENTAGE = 100.0 / 1_000_000_000
_INACTIVE_EXPIRY_MS = 3600 * 1000        # Kafka's InactiveSensorExpirationTimeSeconds
_EXPIRY_CHECK_SIZE = 1024                # look for idle rates only once there are many

# Kafka's QuotaType of each quota key (the metrics' group, JMX ``type=``) and the name of the
# quota sensor's rate metric (ClientQuotaManager / ClientRequestQuotaManager /
# ControllerMutationQuotaManager ``clientQuotaMetricName`` / ``clientRateMetricName``).
QUOTA_TYPES: dict[str, tuple[str, str]] = {
    "producer_byte_rate": ("Produce", "byte-rate"),
    "consumer_byte_rate": ("Fetch", "byte-rate"),
    "request_percentage": ("Request", "request-time"),
    "controller_mutation_rate": ("ControllerMutation", "mutation-rate"),
}


@attrs.frozen
class QuotaMetric:
    """One quota metric value: ``kafka.server:type=<quota_type>,user=<user>,
    client-id=<client_id>`` attribute ``name`` (``user`` sanitized, "" when the metric is not
    per user, ``client_id`` "" when not per client id)."""

    quota_type: str
    name: str
    user: str
    client_id: str
    value: float


def user_of_principal(principal: str) -> str:
    """Kafka's ``KafkaPrincipal.getName``: the name after the type (``User:alice`` -> alice)."""
    return principal.partition(":")[2] if ":" in principal else principal


@attrs.define
class _Sample:
    start_ms: int
    value: float = 0.0
    count: int = 0


class SampledRate:
    """Kafka's ``Rate`` (per second) over ``samples`` windows of ``window_ms``."""

    def __init__(self, samples: int, window_ms: int, now_ms: int) -> None:
        self.samples_wanted = max(2, samples)
        self.window_ms = max(1, window_ms)
        self._samples = [_Sample(now_ms)]
        self._current = 0
        self.last_used_ms = now_ms

    def _purge(self, now_ms: int) -> None:
        expire = self.samples_wanted * self.window_ms
        for sample in self._samples:
            if now_ms - sample.start_ms >= expire:
                sample.start_ms, sample.value, sample.count = now_ms, 0.0, 0

    def record(self, value: float, now_ms: int) -> None:
        sample = self._samples[self._current]
        if now_ms - sample.start_ms >= self.window_ms:        # the window is over: advance
            self._current = (self._current + 1) % self.samples_wanted
            if self._current >= len(self._samples):
                self._samples.append(_Sample(now_ms))
            else:
                self._samples[self._current].start_ms = now_ms
                self._samples[self._current].value = 0.0
                self._samples[self._current].count = 0
            sample = self._samples[self._current]
        sample.value += value
        sample.count += 1

    def unrecord(self, value: float, now_ms: int) -> None:
        self.record(-value, now_ms)

    def window_size_ms(self, now_ms: int) -> int:
        self._purge(now_ms)
        elapsed = now_ms - min(s.start_ms for s in self._samples)
        full = elapsed // self.window_ms
        if full < self.samples_wanted - 1:
            elapsed += (self.samples_wanted - 1 - full) * self.window_ms
        return elapsed

    def rate(self, now_ms: int) -> float:
        window = self.window_size_ms(now_ms)
        return sum(s.value for s in self._samples) / (window / 1000.0)


class SampledAvg(SampledRate):
    """Kafka's ``Avg`` over the same samples: the mean of the values recorded in the
    samples not yet expired, NaN when there are none (a throttle-time never throttled)."""

    def avg(self, now_ms: int) -> float:
        self._purge(now_ms)
        count = sum(s.count for s in self._samples)
        return sum(s.value for s in self._samples) / count if count else math.nan


class ClientQuotaManager:
    """One quota type (a key of ``QUOTA_TYPES``: ``producer_byte_rate``,
    ``consumer_byte_rate``, ``request_percentage``) for one broker."""

    def __init__(self, store: Callable[[], ClientQuotaStore], key: str,
                 samples: Callable[[], int], window_s: Callable[[], int],
                 clock: Callable[[], int]) -> None:
        self._store = store
        self.key = key
        self.quota_type, self.rate_metric = QUOTA_TYPES.get(key, (key, "rate"))
        self._samples = samples
        self._window_s = window_s
        self._clock = clock
        self._version = -1
        # Whether any entity sets this quota type (Kafka's quotasEnabled): when none does, a
        # request costs one version check, not a look-up per (user, client).
        self._enabled = False
        self._quotas: dict[tuple[str, str], tuple[tuple[str, str], float] | None] = {}
        self._rates: dict[tuple[str, str], SampledRate] = {}
        # throttle-time (Kafka's throttleTimeSensor), per metered tags
        self._throttles: dict[tuple[str, str], SampledAvg] = {}
        self._expired_ms = 0

    def quota(self, user: str, client_id: str) -> tuple[tuple[str, str], float] | None:
        """The (metered-as tags, quota) of ``user`` / ``client_id``; None: unlimited."""
        store = self._store()
        if store.version != self._version:
            self._refresh(store)
        found = self._quotas.get((user, client_id), ())
        if found != ():
            return found                  # type: ignore[return-value]
        configs = store.configs
        u, c = sanitize(user), sanitize(client_id)
        d = "<default>"
        candidates = (
            (f"users/{u}/clients/{c}", (user, client_id)),
            (f"users/{u}/clients/{d}", (user, client_id)),
            (f"users/{u}", (user, "")),
            (f"users/{d}/clients/{c}", (user, client_id)),
            (f"users/{d}/clients/{d}", (user, client_id)),
            (f"users/{d}", (user, "")),
            (f"clients/{c}", ("", client_id)),
            (f"clients/{d}", ("", client_id)),
        )
        result: tuple[tuple[str, str], float] | None = None
        for path, tags in candidates:
            value = configs.get(path, {}).get(self.key)
            if value is not None:
                try:
                    result = (tags, float(value))
                except ValueError:
                    continue
                break
        self._quotas[(user, client_id)] = result
        return result

    @property
    def enabled(self) -> bool:
        """Some entity sets this quota type (Kafka's ``quotasEnabled``): without one no
        request is ever throttled by it."""
        store = self._store()
        if store.version != self._version:
            self._refresh(store)
        return self._enabled

    def _refresh(self, store: ClientQuotaStore) -> None:
        self._version = store.version
        self._quotas.clear()
        self._enabled = any(self.key in config for config in store.configs.values())

    def _quota_of(self, principal: str, client_id: str
                  ) -> tuple[tuple[str, str], float] | None:
        """``quota`` of a principal (``User:name``), at the cost of a version check when no
        entity sets this quota type."""
        store = self._store()
        if store.version != self._version:
            self._refresh(store)
        if not self._enabled:
            return None
        return self.quota(user_of_principal(principal), client_id)

    def _rate(self, tags: tuple[str, str], now_ms: int) -> SampledRate:
        rate = self._rates.get(tags)
        if rate is None:
            if len(self._rates) >= _EXPIRY_CHECK_SIZE and \
                    now_ms - self._expired_ms >= _INACTIVE_EXPIRY_MS // 60:
                self._expire(now_ms)
            rate = self._rates[tags] = SampledRate(self._samples(),
                                                   self._window_s() * 1000, now_ms)
        rate.last_used_ms = now_ms
        return rate

    def _expire(self, now_ms: int) -> None:
        """Forget the rates of clients idle for an hour (Kafka expires inactive quota sensors
        after an hour) and the cached quota lookups, so that client ids that come and go do
        not grow the maps for ever."""
        self._expired_ms = now_ms
        self._rates = {tags: rate for tags, rate in self._rates.items()
                       if now_ms - rate.last_used_ms < _INACTIVE_EXPIRY_MS}
        self._throttles = {tags: avg for tags, avg in self._throttles.items()
                           if tags in self._rates}
        self._quotas.clear()

    def record_and_get_throttle_time_ms(self, principal: str, client_id: str,
                                        value: float) -> int:
        """Record ``value`` bytes for the client; the throttle time (0 within its quota, and
        always 0 without a quota)."""
        found = self._quota_of(principal, client_id)
        if found is None:
            return 0
        tags, bound = found
        now = self._clock()
        rate = self._rate(tags, now)
        rate.record(value, now)
        observed = rate.rate(now)
        if observed <= bound:
            return 0
        if bound <= 0:
            # Kafka's division by a zero quota gives an unbounded throttle; a connection muted
            # for ever helps nobody: one whole quota span instead.
            return rate.samples_wanted * rate.window_ms
        return round((observed - bound) / bound * rate.window_size_ms(now))

    def meter(self, tags: tuple[str, str], value: float) -> None:
        """Record ``value`` for the metered ``tags`` without checking the quota (the
        controller mutation quota's ``mutation-rate``: its throttling is a token bucket)."""
        now = self._clock()
        self._rate(tags, now).record(value, now)

    def throttle(self, request: Request, principal: str, client_id: str,
                 throttle_ms: int) -> None:
        """Kafka's ``ClientQuotaManager.throttle``: record ``throttle_ms`` in the client's
        ``throttle-time`` and mute ``request``'s connection that long once it is answered
        (KIP-219). Nothing for 0."""
        if throttle_ms <= 0:
            return
        found = self._quota_of(principal, client_id)
        if found is not None:
            self.record_throttle(found[0], throttle_ms)
        request.throttle(throttle_ms)

    def record_throttle(self, tags: tuple[str, str], throttle_ms: int) -> None:
        """Record a throttle of ``throttle_ms`` in the ``throttle-time`` of ``tags``."""
        now = self._clock()
        avg = self._throttles.get(tags)
        if avg is None:
            avg = self._throttles[tags] = SampledAvg(self._samples(), self._window_s() * 1000,
                                                     now)
        avg.record(throttle_ms, now)

    def metric_values(self) -> list[QuotaMetric]:
        """The quota metrics of every metered client, as of now: the rate (``byte-rate``,
        ``request-time``, ``mutation-rate``) and ``throttle-time`` (NaN: no throttle in the
        quota window). Tags as Kafka's: the user sanitized, "" where not metered by it."""
        now = self._clock()
        out: list[QuotaMetric] = []
        for tags, rate in self._rates.items():
            user, client_id = sanitize(tags[0]) if tags[0] else "", tags[1]
            avg = self._throttles.get(tags)
            out.append(QuotaMetric(self.quota_type, self.rate_metric, user, client_id,
                                   rate.rate(now)))
            out.append(QuotaMetric(self.quota_type, "throttle-time", user, client_id,
                                   math.nan if avg is None else avg.avg(now)))
        return out

    def unrecord(self, principal: str, client_id: str, value: float) -> None:
        """Take back a value recorded for a response that was not sent (a throttled Fetch
        answers empty)."""
        found = self._quota_of(principal, client_id)
        if found is not None:
            now = self._clock()
            self._rate(found[0], now).unrecord(value, now)

    def max_value_in_window(self, principal: str, client_id: str) -> float | None:
        """Kafka's ``getMaxValueInQuotaWindow``: quota * window seconds * (samples - 1),
        the most a Fetch may return at once; None without a quota."""
        found = self._quota_of(principal, client_id)
        if found is None:
            return None
        return found[1] * self._window_s() * (self._samples() - 1)
