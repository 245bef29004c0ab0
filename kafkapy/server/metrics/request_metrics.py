"""RequestMetrics: Kafka's ``kafka.network.RequestMetrics`` per API, and the timers they use.

Kafka's ``RequestChannel.Request.updateRequestMetrics`` marks, when a response has been sent,
``RequestsPerSec{request=<api>, version=<v>}`` and updates seven histograms per API, from the
timestamps the request carried through the broker (and its throttle):

- ``RequestQueueTimeMs``: received -> a handler took it (here: ``KafkaApis.handle`` began);
- ``LocalTimeMs``: handler took it -> the handler returned (the answer, or ``Parked``);
- ``RemoteTimeMs``: handler returned -> a parked answer completed (acks=all waiting for the
  followers, a long-poll fetch waiting for data); 0 for an answer made at once;
- ``ResponseQueueTimeMs``: answer complete -> the connection task took it;
- ``ResponseSendTimeMs``: the connection task took it -> written to the socket (a pipelined
  Produce's answer held to be written with the next one counts only its own hand-over);
- ``TotalTimeMs``: received -> written;
- ``ThrottleTimeMs``: the client quota throttle the request got (Kafka's
  ``apiThrottleTimeMs``, the ``throttle_time_ms`` of its answer: since KIP-219 the answer is
  sent at once and the connection muted after it, so this is not part of the total).

The JMX exporter exports a Yammer histogram's ``Count`` and ``<n>thPercentile`` attributes:
``kafka_network_requestmetrics_totaltimems_count{request="Produce"}`` and
``kafka_network_requestmetrics_totaltimems{request="Produce",quantile="0.99"}`` for the
50th, 75th, 95th, 98th, 99th and 999th percentiles (quantile "0.50" ... "0.999"). A
request's seven times, and ``Timer`` (LogFlushStats), keep what those need: a count and the
last ``RESERVOIR`` samples (Yammer's histograms keep 1028 samples in an exponentially
decaying reservoir biased to the last five minutes; a sliding window of the last 1028 is the
simple equivalent for a broker whose scrape interval is seconds).

Cost: per request, a dict increment and one tuple of six timestamps and the throttle appended
(on the connection task, after the response is written); the times are subtracted and sorted
only at scrape time. Like the exporter's (which lacks it), no ``_sum`` is kept for request
times.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence

__all__ = ["CONSUMER_FETCH", "FOLLOWER_FETCH", "NO_VARIANT", "QUANTILES", "REQUEST_TIMES",
           "RESERVOIR", "VARIANT_NAMES", "RequestMetrics", "Stamps", "Timer", "quantiles",
           "times_ms"]

RESERVOIR = 1028
# One request's received, dequeued, local-done, completed, ready and sent timestamps (ns) and
# its throttle time (ms).
Stamps = tuple[int, int, int, int, int, int, int]
# ``Request.timings[0]``: the second name a request's metrics also count under (Kafka's
# RequestMetrics.consumerFetchMetricName / followFetchMetricName), set by the Fetch handler.
NO_VARIANT, CONSUMER_FETCH, FOLLOWER_FETCH = 0, 1, 2
VARIANT_NAMES = {CONSUMER_FETCH: "FetchConsumer", FOLLOWER_FETCH: "FetchFollower"}
# Yammer's percentile attributes and the quantile label the exporter gives them
QUANTILES: tuple[tuple[float, str], ...] = ((0.50, "0.50"), (0.75, "0.75"), (0.95, "0.95"),
                                            (0.98, "0.98"), (0.99, "0.99"), (0.999, "0.999"))
# the histograms of RequestMetrics, in the order of ``RequestMetrics.times``
REQUEST_TIMES = ("TotalTimeMs", "RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs",
                 "ResponseQueueTimeMs", "ResponseSendTimeMs", "ThrottleTimeMs")


def quantiles(samples: Sequence[float]) -> list[tuple[str, float]]:
    """Yammer's ``Snapshot.getValue(q)`` over ``samples``: the value at position q * (n + 1)
    of the sorted samples, interpolated; NaN with no sample (as Prometheus summaries)."""
    values = sorted(samples)
    n = len(values)
    out = []
    for q, label in QUANTILES:
        if not n:
            out.append((label, float("nan")))
            continue
        pos = q * (n + 1)
        if pos < 1:
            v = values[0]
        elif pos >= n:
            v = values[-1]
        else:
            lower = values[int(pos) - 1]
            v = lower + (pos - int(pos)) * (values[int(pos)] - lower)
        out.append((label, float(v)))
    return out


class Timer:
    """A Yammer timer/histogram as the exporter sees it: a count and recent samples (ms)."""

    __slots__ = ("count", "samples")

    def __init__(self) -> None:
        self.count = 0
        self.samples: collections.deque[float] = collections.deque(maxlen=RESERVOIR)

    def update(self, ms: float) -> None:
        self.count += 1
        self.samples.append(ms)

    def quantiles(self) -> list[tuple[str, float]]:
        return quantiles(self.samples)


class _Api:
    __slots__ = ("count", "stamps", "versions")

    def __init__(self) -> None:
        self.versions: dict[int, int] = {}      # RequestsPerSec per version
        self.count = 0
        # the last RESERVOIR requests' six timestamps (ns) and throttle (ms), as ``record``
        # takes them
        self.stamps: collections.deque[Stamps] = collections.deque(maxlen=RESERVOIR)


def times_ms(stamps: Stamps) -> tuple[float, ...]:
    """The seven times of ``REQUEST_TIMES`` from one request's timestamps and throttle."""
    received, dequeued, local_done, completed, ready, sent, throttle_ms = stamps
    return ((sent - received) / 1e6, (dequeued - received) / 1e6,
            (local_done - dequeued) / 1e6, (completed - local_done) / 1e6,
            (ready - completed) / 1e6, (sent - ready) / 1e6, float(throttle_ms))


class RequestMetrics:
    """The request counters and times of every API, keyed by Kafka's API name."""

    def __init__(self) -> None:
        self.apis: dict[str, _Api] = {}

    def record(self, api: str, version: int, received_ns: int, dequeued_ns: int,
               local_done_ns: int, completed_ns: int, ready_ns: int, sent_ns: int,
               throttle_ms: int = 0) -> None:
        """One request answered (timestamps: ``time.monotonic_ns()``, in order; the
        throttle time it got, ms)."""
        entry = self.apis.get(api)
        if entry is None:
            entry = self.apis[api] = _Api()
        versions = entry.versions
        versions[version] = versions.get(version, 0) + 1
        entry.count += 1
        entry.stamps.append((received_ns, dequeued_ns, local_done_ns, completed_ns, ready_ns,
                             sent_ns, throttle_ms))

    def requests(self) -> list[tuple[str, int, int]]:
        """``(api, version, count)`` of every API and version seen."""
        return [(api, v, n) for api, e in sorted(self.apis.items())
                for v, n in sorted(e.versions.items())]

    def times(self) -> list[tuple[str, str, int, list[tuple[str, float]]]]:
        """``(histogram, api, count, [(quantile, ms)])`` for every API seen."""
        out = []
        for api, e in sorted(self.apis.items()):
            rows = [times_ms(stamps) for stamps in e.stamps]
            columns: list[tuple[float, ...]] = list(zip(*rows, strict=True)) if rows else \
                [()] * len(REQUEST_TIMES)
            for i, name in enumerate(REQUEST_TIMES):
                out.append((name, api, e.count, quantiles(columns[i])))
        return out
