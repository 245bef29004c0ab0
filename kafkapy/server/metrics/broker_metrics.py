"""BrokerMetrics: the one metrics registry of a broker, and every sample it exposes.

What it owns:

- the counters the broker's components bump as they work: ``topic_stats``
  (BrokerTopicMetrics), ``requests`` (RequestMetrics: ``request_done`` is the
  socket server's ``RequestObserver``), ``log_flush`` (LogFlushStats), ``isr_shrinks`` /
  ``isr_expands`` (ReplicaManager's IsrShrinksPerSec / IsrExpandsPerSec, bumped when the
  controller accepted an ISR change);
- the event loop's idle time (``IdleTimeInstrument``, a Trio instrument timing the loop's
  waits for I/O): Kafka's NetworkProcessorAvgIdlePercent, since here one event loop does
  what Kafka's network processor threads do;
- the gauges, read from the broker's state only when someone asks (``snapshot``), so an
  unscraped broker pays nothing for them: ReplicaManager (UnderReplicatedPartitions,
  PartitionCount, LeaderCount), KafkaController (ActiveControllerCount,
  OfflinePartitionsCount), RequestChannel (RequestQueueSize), GroupMetadataManager (NumGroups
  by state, NumOffsets) and the consumer lag of the groups this broker coordinates.

``capture()`` copies the raw values on the loop (cheap), ``families(captured)`` turns them
into ``Family`` objects anywhere (the HTTP thread: sorting percentiles and building samples
never holds the event loop); ``snapshot()`` is both. The families are named exactly as the
Prometheus JMX exporter's example configuration for Kafka
(``example_configs/kafka-2_0_0.yml``) names Kafka's MBeans
(docs/metrics.md lists them with the rule each follows). Consumer lag has no Kafka MBean:
it follows the widely used kafka_exporter's ``kafka_consumergroup_lag``. Names starting
``kafkapy_`` have no Kafka counterpart.

The broker's state is read through the ``server`` object given at construction (a
``KafkaServer``), duck-typed: this package sits below the server in the layering and imports
none of it. Everything here runs on the broker's event loop: ``snapshot`` must be called
there (the HTTP endpoint and ``kafkapy.Broker.metrics`` hop onto the loop to call
``capture``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import attrs
import trio

from kafkapy.server.metrics.broker_topic_stats import TOPIC_METERS, BrokerTopicStats
from kafkapy.server.metrics.request_metrics import (
    NO_VARIANT,
    REQUEST_TIMES,
    VARIANT_NAMES,
    RequestMetrics,
    Stamps,
    Timer,
    quantiles,
    times_ms,
)

__all__ = ["BrokerMetrics", "Captured", "Family", "IdleTimeInstrument", "Sample", "families",
           "samples_of"]

Labels = tuple[tuple[str, str], ...]


@attrs.frozen
class Sample:
    """One exposed value: ``name{labels} value``."""

    name: str
    labels: Labels
    value: float

    def key(self) -> str:
        """The sample as the text exposition writes it, without its value."""
        if not self.labels:
            return self.name
        inner = ",".join(f'{k}="{v}"' for k, v in self.labels)
        return f"{self.name}{{{inner}}}"


@attrs.frozen
class Family:
    """A metric family: ``kind`` is "counter", "gauge" or "summary"."""

    name: str
    kind: str
    help: str
    samples: tuple[Sample, ...]


class _ObservedRequest(Protocol):
    """What ``request_done`` reads of a channel request."""

    @property
    def frame(self) -> bytes | bytearray: ...

    @property
    def receive_time_ns(self) -> int: ...

    @property
    def timings(self) -> list[int] | None: ...


class IdleTimeInstrument(trio.abc.Instrument):
    """Sums the time the Trio event loop spends waiting for I/O with nothing to run."""

    def __init__(self) -> None:
        self.idle_ns = 0
        self._since = 0

    def before_io_wait(self, timeout: float) -> None:
        if timeout > 0:         # a zero timeout is a poll between runnable tasks, not idle
            self._since = time.monotonic_ns()

    def after_io_wait(self, timeout: float) -> None:
        if timeout > 0:
            self.idle_ns += time.monotonic_ns() - self._since


class BrokerMetrics:
    """A broker's metrics. ``server`` is the ``KafkaServer`` whose state the gauges read;
    ``api_names`` maps API keys to Kafka's API names (the ``request`` label)."""

    def __init__(self, server: Any, api_names: Mapping[int, str]) -> None:
        self._server = server
        self._api_names = dict(api_names)
        self.topic_stats = BrokerTopicStats()
        self.requests = RequestMetrics()
        self.log_flush = Timer()
        self.isr_shrinks = 0
        self.isr_expands = 0
        self.idle = IdleTimeInstrument()
        self._idle_mark = (time.monotonic_ns(), 0)

    # ============================================================ what the broker calls

    def request_done(self, request: _ObservedRequest, ready_ns: int, sent_ns: int) -> None:
        """The socket server's ``RequestObserver``: ``request``'s response was taken by its
        connection at ``ready_ns`` and written by ``sent_ns``. ``request.timings`` holds what
        KafkaApis marked after its variant (``timings[0]``, set by the Fetch handler: a
        consumer's or a follower's fetch) and its throttle time (``timings[1]``, ms, set by
        ``Request.throttle``): handling started, the handler returned, the
        answer completed (missing for a request refused before a handler: then those are
        ``ready_ns``). A Fetch counts as "Fetch" and as "FetchConsumer" or
        "FetchFollower", as in Kafka's ``RequestChannel.updateRequestMetrics``."""
        frame = request.frame
        if len(frame) < 4:
            return
        key = (frame[0] << 8) | frame[1]
        name = self._api_names.get(key)
        if name is None:
            return
        version = (frame[2] << 8) | frame[3]
        marks: Sequence[int] = request.timings or (NO_VARIANT, 0)
        n = len(marks)
        throttle_ms = marks[1] if n > 1 else 0
        dequeued = marks[2] if n > 2 else ready_ns
        local_done = marks[3] if n > 3 else dequeued
        completed = marks[4] if n > 4 else local_done
        received = request.receive_time_ns
        self.requests.record(name, version, received, dequeued, local_done, completed,
                             ready_ns, sent_ns, throttle_ms)
        variant = VARIANT_NAMES.get(marks[0])
        if variant is not None:
            self.requests.record(variant, version, received, dequeued, local_done,
                                 completed, ready_ns, sent_ns, throttle_ms)

    def log_flushed(self, seconds: float) -> None:
        """A log's fsync took ``seconds`` (LogFlushStats.LogFlushRateAndTimeMs)."""
        self.log_flush.update(seconds * 1000)

    def isr_changed(self, old: Iterable[int], new: Iterable[int]) -> None:
        """The controller accepted a partition's ISR change from ``old`` to ``new``."""
        before, after = set(old), set(new)
        if after - before:
            self.isr_expands += 1
        if before - after:
            self.isr_shrinks += 1

    # ================================================================= what is exposed

    def capture(self) -> Captured:
        """The raw values of every metric as of now: on the broker's event loop, and no
        more than copies, so the loop is held as briefly as possible; ``families`` turns
        them into samples anywhere (the HTTP thread)."""
        stats = self.topic_stats
        rm = getattr(self._server, "replica_manager", None)
        partitions = list(rm.partitions.values()) if rm is not None else []
        led = [p for p in partitions if p.is_leader]
        coordinator = getattr(self._server, "group_coordinator", None)
        groups = list(coordinator.groups.values()) if coordinator is not None else []
        txn = getattr(self._server, "transaction_coordinator", None)
        channel = getattr(self._server, "request_channel", None)
        now = time.monotonic_ns()
        then, idle_then = self._idle_mark
        idle_now = self.idle.idle_ns
        self._idle_mark = (now, idle_now)
        lag: list[tuple[str, str, int, int, int | None]] = []
        for g in groups:
            for tp, committed in g.offsets.items():
                partition = rm.partitions.get(tp) if rm is not None else None
                # As kafka_exporter: lag from the high watermark (what a consumer can read),
                # known only where this broker leads the partition.
                hw = partition.high_watermark if partition is not None and \
                    partition.is_leader else None
                lag.append((g.group_id, tp.topic, tp.partition, committed.offset, hw))
        return Captured(
            all_topics=stats.all_topics.as_dict(),
            topics={t: c.as_dict() for t, c in stats.topics.items()},
            replication_bytes_out=stats.replication_bytes_out,
            requests=[(api, dict(e.versions), e.count, list(e.stamps))
                      for api, e in self.requests.apis.items()],
            partitions=len(partitions), leaders=len(led),
            under_replicated=sum(1 for p in led if len(p.isr) < len(p.replicas)),
            isr_shrinks=self.isr_shrinks, isr_expands=self.isr_expands,
            controller=self._controller_state(),
            request_queue=channel.queued if channel is not None else 0,
            idle_ratio=min(1.0, (idle_now - idle_then) / (now - then)) if now > then else 1.0,
            log_flush=(self.log_flush.count, list(self.log_flush.samples)),
            group_states=[g.state.value for g in groups],
            offsets=sum(len(g.offsets) for g in groups),
            loading=(0 if coordinator is None else len(coordinator.manager.loading),
                     0 if txn is None else len(txn.state.loading)),
            lag=lag,
            txn_states=[] if txn is None else [m.state.kafka_name
                                               for m in txn.state.loaded_transactions()],
            quotas=self._quota_values())

    def _quota_values(self) -> list[tuple[str, str, str, str, float]]:
        """The client quota managers' metrics (``metric_values()``: byte-rate,
        request-time, mutation-rate, tokens, throttle-time per metered client)."""
        out = []
        for attr in _QUOTA_MANAGERS:
            manager = getattr(self._server, attr, None)
            if manager is None:
                continue
            out += [(m.quota_type, m.name, m.user, m.client_id, m.value)
                    for m in manager.metric_values()]
        return out

    def _controller_state(self) -> tuple[int, int]:
        """(ActiveControllerCount, OfflinePartitionsCount)."""
        controller = getattr(self._server, "controller", None)
        if controller is None:
            # Without ZooKeeper the broker is its own, only controller: it elects nobody,
            # and leads every partition it hosts.
            return 1, 0
        if not controller.active:
            return 0, 0
        ctx = controller.context
        if ctx is None:
            return 1, 0
        return 1, sum(1 for tp, s in ctx.states.items()
                      if not ctx.is_deleting(tp) and (s.leader < 0 or not ctx.is_alive(s.leader)))

    def snapshot(self) -> list[Family]:
        """Every family as of now (call on the broker's event loop)."""
        return families(self.capture())

    def samples(self) -> dict[str, float]:
        """Every sample of ``snapshot()``: ``'name{label="v",...}' -> value``."""
        return samples_of(families(self.capture()))


# The broker's client quota managers (KafkaServer attributes), each with ``metric_values()``.
_QUOTA_MANAGERS = ("produce_quotas", "fetch_quotas", "request_quotas",
                   "controller_mutation_quotas")
# Kafka's quota metrics, in the order their families are exposed.
QUOTA_METRICS = ("byte-rate", "request-time", "mutation-rate", "tokens", "throttle-time")


# TransactionState's names, as kafka-transactions.sh prints them (the metrics layer does not
# import the coordinators: it reads their state through the server it is given).
TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
                      "CompleteAbort", "Dead", "PrepareEpochFence")


@attrs.frozen
class Captured:
    """Copies of every metric's raw values (``BrokerMetrics.capture``)."""

    all_topics: dict[str, int]
    topics: dict[str, dict[str, int]]
    replication_bytes_out: int
    requests: list[tuple[str, dict[int, int], int, list[Stamps]]]
    partitions: int
    leaders: int
    under_replicated: int
    isr_shrinks: int
    isr_expands: int
    controller: tuple[int, int]
    request_queue: int
    idle_ratio: float
    log_flush: tuple[int, list[float]]
    group_states: list[str]
    offsets: int
    loading: tuple[int, int]
    lag: list[tuple[str, str, int, int, int | None]]
    txn_states: list[str] = attrs.field(factory=list)
    # (quota type, metric, sanitized user, client id, value) of every metered client
    quotas: list[tuple[str, str, str, str, float]] = attrs.field(factory=list)


def samples_of(fams: Iterable[Family]) -> dict[str, float]:
    """``'name{label="v",...}' -> value`` of every sample of ``fams``."""
    return {s.key(): s.value for f in fams for s in f.samples}


def families(c: Captured) -> list[Family]:
    """The exposed families of ``c`` (pure: any thread)."""
    out: list[Family] = []
    for attr, stem in TOPIC_METERS.items():
        name = f"kafka_server_brokertopicmetrics_{stem.lower()}"
        topic_samples = [Sample(f"{name}_total", (), c.all_topics[attr])]
        topic_samples += [Sample(f"{name}_total", (("topic", topic),), values[attr])
                          for topic, values in sorted(c.topics.items())]
        out.append(Family(name, "counter", f"BrokerTopicMetrics {stem}PerSec count",
                          tuple(topic_samples)))
    out.append(_counter("kafka_server_brokertopicmetrics_replicationbytesout",
                        "BrokerTopicMetrics ReplicationBytesOutPerSec count",
                        c.replication_bytes_out))
    out += _request_families(c)
    prefix = "kafka_server_replicamanager_"
    out += [
        _gauge(prefix + "underreplicatedpartitions",
               "Partitions led here whose ISR is smaller than their replicas",
               c.under_replicated),
        _gauge(prefix + "partitioncount", "Partitions hosted here", c.partitions),
        _gauge(prefix + "leadercount", "Partitions led here", c.leaders),
        _counter(prefix + "isrshrinks", "ReplicaManager IsrShrinksPerSec count", c.isr_shrinks),
        _counter(prefix + "isrexpands", "ReplicaManager IsrExpandsPerSec count", c.isr_expands),
    ]
    prefix = "kafka_controller_kafkacontroller_"
    out += [_gauge(prefix + "activecontrollercount",
                   "1 on the broker that is the active controller", c.controller[0]),
            _gauge(prefix + "offlinepartitionscount",
                   "Partitions without a live leader (active controller only)", c.controller[1])]
    out += [_gauge("kafka_network_requestchannel_requestqueuesize",
                   "Requests waiting for a handler", c.request_queue),
            _gauge("kafka_network_socketserver_networkprocessoravgidlepercent",
                   "Share of time the event loop waited for I/O since the last read",
                   c.idle_ratio)]
    out.append(_summary("kafka_log_logflushstats_logflushrateandtimems",
                        "Log flush (fsync) time in ms (LogFlushStats).", (),
                        c.log_flush[0], quantiles(c.log_flush[1])))
    out += _group_families(c)
    out += _quota_families(c)
    return out


def _quota_families(c: Captured) -> list[Family]:
    """Kafka's client quota sensors, MBeans ``kafka.server:type=<quota type>,user=<u>,
    client-id=<c>`` (JmxReporter leaves out an empty tag) as the exporter's quota rules name
    them: ``kafka_server_quota_<attribute>`` ('-' made '_'), labels ``resource`` (the quota
    type), ``user`` and ``clientId`` where the MBean has them. A metric of neither (a null
    client id metered per client) has no MBean key the rules match: not exposed."""
    by_name: dict[str, list[Sample]] = {m: [] for m in QUOTA_METRICS}
    for quota_type, metric, user, client_id, value in sorted(c.quotas):
        if not user and not client_id:
            continue
        labels: list[tuple[str, str]] = []
        if client_id:
            labels.append(("clientId", client_id))
        labels.append(("resource", quota_type))
        if user:
            labels.append(("user", user))
        name = "kafka_server_quota_" + metric.replace("-", "_")
        by_name.setdefault(metric, []).append(Sample(name, tuple(labels), value))
    return [Family("kafka_server_quota_" + metric.replace("-", "_"), "gauge",
                   f"Client quota {metric} per user/client-id (Kafka's quota sensors)",
                   tuple(samples)) for metric, samples in by_name.items()]


def _request_families(c: Captured) -> list[Family]:
    name = "kafka_network_requestmetrics_requests"
    samples = tuple(Sample(f"{name}_total", (("request", api), ("version", str(v))), n)
                    for api, versions, _, _ in sorted(c.requests)
                    for v, n in sorted(versions.items()))
    out = [Family(name, "counter", "RequestMetrics RequestsPerSec count", samples)]
    by_histogram: dict[str, list[Sample]] = {}
    for api, _, count, stamps in sorted(c.requests):
        rows = [times_ms(s) for s in stamps]
        columns: list[tuple[float, ...]] = list(zip(*rows, strict=True)) if rows else \
            [()] * len(REQUEST_TIMES)
        for i, histogram in enumerate(REQUEST_TIMES):
            fam = f"kafka_network_requestmetrics_{histogram.lower()}"
            samples_of_fam = by_histogram.setdefault(fam, [])
            samples_of_fam += [Sample(fam, (("request", api), ("quantile", q)), v)
                               for q, v in quantiles(columns[i])]
            samples_of_fam.append(Sample(f"{fam}_count", (("request", api),), count))
    for fam, fam_samples in by_histogram.items():
        out.append(Family(fam, "summary", "RequestMetrics time in ms", tuple(fam_samples)))
    return out


def _group_families(c: Captured) -> list[Family]:
    states = {"Empty": 0, "PreparingRebalance": 0, "CompletingRebalance": 0, "Stable": 0,
              "Dead": 0}
    for state in c.group_states:
        states[state] = states.get(state, 0) + 1
    prefix = "kafka_coordinator_group_groupmetadatamanager_"
    out = [_gauge(prefix + "numgroups", "Groups this coordinator has", len(c.group_states)),
           _gauge(prefix + "numoffsets", "Committed offsets this coordinator has", c.offsets)]
    out += [_gauge(f"{prefix}numgroups{state.lower()}", f"Groups in state {state}", n)
            for state, n in states.items()]
    loading = "kafkapy_coordinator_partitions_loading"
    out.append(Family(loading, "gauge", "Coordinator partitions being loaded (kafkapy only)",
                      (Sample(loading, (("coordinator", "group"),), c.loading[0]),
                       Sample(loading, (("coordinator", "transaction"),), c.loading[1]))))
    # Kafka has no MBean counting transactions; kafka-transactions.sh list is the way there.
    # One gauge per state, as the group states are exposed.
    txns = dict.fromkeys(TRANSACTION_STATES, 0)
    for state in c.txn_states:
        txns[state] = txns.get(state, 0) + 1
    name = "kafkapy_coordinator_transactions"
    out.append(Family(name, "gauge", "Transactional ids this coordinator has, by state "
                      "(kafkapy only)",
                      tuple(Sample(name, (("state", state),), n) for state, n in txns.items())))
    current, lag = [], []
    for group, topic, partition, committed, hw in sorted(c.lag, key=lambda r: r[:3]):
        labels = (("consumergroup", group), ("partition", str(partition)), ("topic", topic))
        current.append(Sample("kafka_consumergroup_current_offset", labels, committed))
        if hw is not None:
            lag.append(Sample("kafka_consumergroup_lag", labels, max(0, hw - committed)))
    out += [Family("kafka_consumergroup_current_offset", "gauge",
                   "Committed offset of a group on a partition", tuple(current)),
            Family("kafka_consumergroup_lag", "gauge",
                   "High watermark minus the committed offset (partitions led here)",
                   tuple(lag))]
    return out


def _gauge(name: str, doc: str, value: float) -> Family:
    return Family(name, "gauge", doc, (Sample(name, (), value),))


def _counter(name: str, doc: str, value: float) -> Family:
    return Family(name, "counter", doc, (Sample(f"{name}_total", (), value),))


def _summary(name: str, doc: str, labels: tuple[tuple[str, str], ...], count: int,
             quantiles: list[tuple[str, float]]) -> Family:
    samples = [Sample(name, (*labels, ("quantile", q)), v) for q, v in quantiles]
    samples.append(Sample(f"{name}_count", labels, count))
    return Family(name, "summary", doc, tuple(samples))

