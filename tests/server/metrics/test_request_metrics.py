"""RequestMetrics and Timer: the arithmetic behind the exported percentiles (pure logic)."""

from __future__ import annotations

import math

from kafkapy.server.metrics.request_metrics import (
    REQUEST_TIMES,
    RESERVOIR,
    RequestMetrics,
    Timer,
    quantiles,
)


def test_quantiles_follow_yammers_snapshot() -> None:
    # Yammer's Snapshot.getValue: position q * (n + 1) in the sorted values, interpolated.
    got = dict(quantiles([float(v) for v in range(100, 0, -1)]))
    assert got["0.50"] == 50.5
    assert got["0.75"] == 75.75
    assert math.isclose(got["0.99"], 99.99)  # position 99.99: between the last two
    assert got["0.999"] == 100.0         # position 100.9: past the end, clamped


def test_quantiles_of_nothing_are_nan_and_of_one_value_that_value() -> None:
    assert all(math.isnan(v) for _, v in quantiles([]))
    assert {v for _, v in quantiles([7.0])} == {7.0}


def test_record_splits_a_request_into_kafkas_seven_times() -> None:
    m = RequestMetrics()
    ms = 1_000_000
    # received 0, dequeued 1 ms, handler returned 3 ms, parked answer complete 10 ms,
    # connection took it 10.5 ms, written 12 ms.
    m.record("Produce", 9, 0, 1 * ms, 3 * ms, 10 * ms, 10 * ms + ms // 2, 12 * ms,
             throttle_ms=250)
    m.record("Produce", 7, 0, 0, 0, 0, 0, 0)
    assert m.requests() == [("Produce", 7, 1), ("Produce", 9, 1)]
    times = {name: (count, dict(q)) for name, api, count, q in m.times()}
    assert set(times) == set(REQUEST_TIMES)
    assert all(count == 2 for count, _ in times.values())
    # Two samples: p99 is the larger one.
    assert times["TotalTimeMs"][1]["0.99"] == 12.0
    assert times["RequestQueueTimeMs"][1]["0.99"] == 1.0
    assert times["LocalTimeMs"][1]["0.99"] == 2.0
    assert times["RemoteTimeMs"][1]["0.99"] == 7.0
    assert times["ResponseQueueTimeMs"][1]["0.99"] == 0.5
    assert times["ResponseSendTimeMs"][1]["0.99"] == 1.5
    # the quota throttle the answer carried (Kafka's apiThrottleTimeMs), not a span of time
    assert times["ThrottleTimeMs"][1]["0.99"] == 250.0
    assert times["ThrottleTimeMs"][1]["0.50"] == 125.0


def test_the_reservoir_keeps_the_last_samples_and_the_count_all() -> None:
    t = Timer()
    for v in range(RESERVOIR + 500):
        t.update(float(v))
    assert t.count == RESERVOIR + 500
    assert len(t.samples) == RESERVOIR
    assert min(t.samples) == 500.0       # the oldest were dropped
