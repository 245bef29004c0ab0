"""ControllerMutationQuotaManager: Kafka's controller mutation quota (KIP-599),
``controller_mutation_rate`` per (user, client-id): the partitions a client creates
(CreateTopics, CreatePartitions) or deletes (DeleteTopics) per second.

The quota of a client is found as for the other client quotas (``ClientQuotaManager.quota``:
the same entity lookup and the same metering tags). It is metered by Kafka's ``TokenBucket``:
the bucket holds at most ``burst = controller.quota.window.num *
controller.quota.window.size.seconds * quota`` tokens, starts full, refills at ``quota``
tokens per second; each mutated partition takes one token, and the tokens may go negative.

Per request, one ``ControllerMutationQuota`` (Kafka's ``newQuotaFor(request,
strictSinceVersion)``):

- strict (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+): before each topic the
  bucket is checked; if it is already negative, the topic is refused with
  ``ThrottlingQuotaExceededError`` (THROTTLING_QUOTA_EXCEEDED, 89) and is not recorded;
  otherwise its partitions are recorded (possibly taking the bucket below zero, so one topic
  is never refused for its own size). Kafka's ``StrictControllerMutationQuota``.
- permissive (older versions, which know no error 89): every topic is recorded and accepted;
  a bucket below zero only throttles the response. Kafka's
  ``PermissiveControllerMutationQuota``.

The throttle time of a negative bucket is the time it takes to refill to zero,
``round(-tokens / quota * 1000)`` ms (Kafka's ``ControllerMutationQuotaManager.throttleTimeMs``);
``throttle_time_ms()`` deducts the time passed since it was measured, as Kafka does for a
response that waited in the purgatory. Without a quota: nothing recorded, never throttled.

Everything runs on the event loop: no locks.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkapy.errors import ThrottlingQuotaExceededError
from kafkapy.network.request_channel import Request
from kafkapy.server.client_quota_manager import (
    ClientQuotaManager,
    QuotaMetric,
    user_of_principal,
)
from kafkapy.server.client_quota_store import ClientQuotaStore, sanitize

__all__ = ["ControllerMutationQuota", "ControllerMutationQuotaManager", "TokenBucket"]

QUOTA_KEY = "controller_mutation_rate"


class TokenBucket:
    """Kafka's ``TokenBucket`` stat: ``tokens`` refilled at ``rate`` per second up to
    ``burst``; a new bucket is full (Kafka's starts empty at time 0, so its first refill
    fills it)."""

    def __init__(self) -> None:
        self.tokens = float("inf")
        self.last_ms = 0

    def _refill(self, rate: float, burst: float, now_ms: int) -> None:
        self.tokens = min(burst, self.tokens + rate * max(0, now_ms - self.last_ms) / 1000.0)
        self.last_ms = now_ms

    def measure(self, rate: float, burst: float, now_ms: int) -> float:
        self._refill(rate, burst, now_ms)
        return self.tokens

    def record(self, value: float, rate: float, burst: float, now_ms: int) -> float:
        self._refill(rate, burst, now_ms)
        self.tokens = min(burst, self.tokens - value)
        return self.tokens


class ControllerMutationQuota:
    """The controller mutation quota of one request (strict or permissive)."""

    def __init__(self, manager: ControllerMutationQuotaManager,
                 found: tuple[tuple[str, str], float] | None, strict: bool) -> None:
        self._manager = manager
        self._found = found
        self.strict = strict
        self._throttle_ms = 0
        self._measured_ms = 0

    def _throttled(self, tokens: float, rate: float, now_ms: int) -> None:
        self._throttle_ms = round(-tokens / rate * 1000) if rate > 0 \
            else self._manager.max_throttle_ms()
        self._measured_ms = now_ms

    def record(self, partitions: int) -> None:
        """Count ``partitions`` mutated by one topic of the request.

        Raises:
            ThrottlingQuotaExceededError: strict, and the client's bucket is already below
                zero: the topic must be refused (nothing was recorded).
        """
        if self._found is None:
            return
        tags, rate = self._found
        manager = self._manager
        now = manager.clock()
        bucket = manager.bucket(tags)
        burst = manager.burst(rate)
        if self.strict:
            tokens = bucket.measure(rate, burst, now)
            if tokens < 0:
                self._throttled(tokens, rate, now)
                # Kafka's message is the error's generic one: no message on the wire.
                raise ThrottlingQuotaExceededError()
            bucket.record(partitions, rate, burst, now)
            manager.meter(tags, partitions)
            return
        tokens = bucket.record(partitions, rate, burst, now)
        manager.meter(tags, partitions)
        if tokens < 0:
            self._throttled(tokens, rate, now)

    def throttle_time_ms(self) -> int:
        """The throttle time to answer with: the last one measured, less the time since."""
        if self._throttle_ms <= 0:
            return 0
        return max(0, self._throttle_ms - (self._manager.clock() - self._measured_ms))

    def throttle(self, request: Request, throttle_ms: int) -> None:
        """Kafka's ``ClientQuotaManager.throttle`` for this quota: ``throttle_ms`` recorded
        in the client's ``throttle-time``, the connection muted that long once answered."""
        if throttle_ms <= 0:
            return
        if self._found is not None:
            self._manager.record_throttle(self._found[0], throttle_ms)
        request.throttle(throttle_ms)


class ControllerMutationQuotaManager:
    """The buckets of the clients with a ``controller_mutation_rate`` quota."""

    def __init__(self, store: Callable[[], ClientQuotaStore],
                 samples: Callable[[], int], window_s: Callable[[], int],
                 clock: Callable[[], int]) -> None:
        # Only its entity lookup is used (quota()), never its rates.
        self._lookup = ClientQuotaManager(store, QUOTA_KEY, samples, window_s, clock)
        self._samples = samples
        self._window_s = window_s
        self.clock = clock
        self._buckets: dict[tuple[str, str], TokenBucket] = {}

    def burst(self, rate: float) -> float:
        """Kafka's TokenBucket burst: all the samples' windows' worth of the quota."""
        return self._samples() * self._window_s() * rate

    def max_throttle_ms(self) -> int:
        return max(2, self._samples()) * self._window_s() * 1000

    def meter(self, tags: tuple[str, str], partitions: float) -> None:
        """Count ``partitions`` mutations in the ``mutation-rate`` of ``tags``."""
        self._lookup.meter(tags, partitions)

    def record_throttle(self, tags: tuple[str, str], throttle_ms: int) -> None:
        self._lookup.record_throttle(tags, throttle_ms)

    def metric_values(self) -> list[QuotaMetric]:
        """Kafka's ControllerMutation sensors of every metered client: ``mutation-rate``,
        ``throttle-time`` and ``tokens`` (what is left in the client's bucket)."""
        out = self._lookup.metric_values()
        now = self.clock()
        for tags, bucket in self._buckets.items():
            rate = self._quota_of_tags(tags)
            if rate is None:        # the quota is gone or moved to another entity
                continue
            tokens = bucket.measure(rate, self.burst(rate), now)
            out.append(QuotaMetric("ControllerMutation", "tokens",
                                   sanitize(tags[0]) if tags[0] else "", tags[1], tokens))
        return out

    def _quota_of_tags(self, tags: tuple[str, str]) -> float | None:
        """The quota metered as ``tags`` (a member's lookup: tags with an empty user or
        client id were matched at the client or user level)."""
        found = self._lookup.quota(*tags)
        return found[1] if found is not None and found[0] == tags else None

    def bucket(self, tags: tuple[str, str]) -> TokenBucket:
        bucket = self._buckets.get(tags)
        if bucket is None:
            bucket = self._buckets[tags] = TokenBucket()
        return bucket

    def new_quota_for(self, principal: str, client_id: str, api_version: int,
                      strict_since_version: int) -> ControllerMutationQuota:
        """Kafka's ``newQuotaFor``: strict from ``strict_since_version`` on."""
        found = self._lookup.quota(user_of_principal(principal), client_id)
        return ControllerMutationQuota(self, found, api_version >= strict_since_version)
