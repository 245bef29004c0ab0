"""Fault scenarios against a 3-broker ``kafkapy.Cluster``, each judged by the checker.

Shared by the CI tests (``test_replication_faults.py``) and the soak
(``benchmarks/resilience_soak.py``). A scenario takes a running cluster whose brokers are all
up, makes a fresh RF-3 topic of one partition, runs an idempotent ``acks=all`` confluent-kafka
producer in a thread (``Workload``) while it injects its faults, then stops the producer, puts
the cluster back together (every broker up, the partition's ISR full: ``restore``) and reads
the partition back twice: through a consumer, and from each replica's segment files
(``replica_records``: kafka-python's record reader over the ``.log`` files, an independent
reader), once every replica has the same log end. The checker then counts lost, duplicated,
reordered, inconsistent and failed-but-read records; a scenario returns its ``Outcome``.

Every wait is bounded (``FAILOVER_S`` for a leader to move after a SIGKILL: the ZooKeeper
session plus a margin; ``RECOVER_S`` for a broker to rejoin an ISR).
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as CKTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.record.memory_records import MemoryRecords

from kafkapy.cluster import Cluster
from tests.resilience.checker import Read, Record, Report, check

SESSION_MS = 6000
SETTINGS: dict[str, object] = {
    "zookeeper.session.timeout.ms": SESSION_MS,
    "replica.lag.time.max.ms": 4000,
    "min.insync.replicas": 2,
    "unclean.leader.election.enable": "false",
    "offsets.topic.num.partitions": 3,
    "transaction.state.log.num.partitions": 3,
    # Leadership moves only when a scenario moves it.
    "auto.leader.rebalance.enable": "false",
}
FAILOVER_S = SESSION_MS / 1000 + 10
RECOVER_S = 60.0
# Errors after which the record may still have been written (Kafka: a timeout is an unknown
# outcome; NOT_ENOUGH_REPLICAS_AFTER_APPEND is written to the leader's log but not acked).
MAYBE_WRITTEN = {KafkaError._MSG_TIMED_OUT, KafkaError._TIMED_OUT,
                 KafkaError.REQUEST_TIMED_OUT, KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                 KafkaError._TIMED_OUT_QUEUE}


class FatalProducerError(Exception):
    """The idempotent producer stopped on a fatal error (the broker broke its contract)."""


@dataclass
class Outcome:
    name: str
    report: Report
    seconds: float
    errors: dict[str, int] = field(default_factory=dict)     # delivery errors by name
    notes: list[str] = field(default_factory=list)
    fatal: str | None = None                                  # the producer's fatal error

    @property
    def ok(self) -> bool:
        return self.report.ok and self.fatal is None

    def __str__(self) -> str:
        errors = f" delivery errors {self.errors}" if self.errors else ""
        notes = "".join(f"\n  {n}" for n in self.notes)
        fatal = f"\n  FATAL producer error: {self.fatal}" if self.fatal else ""
        return f"{self.name}: {self.report} ({self.seconds:.1f} s){errors}{fatal}{notes}"


def step(what: str) -> None:
    """A progress line on stderr (pytest shows it for a failed or hung test)."""
    print(f"{time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- the workload


class Workload:
    """An idempotent acks=all producer in a thread, sending ``<tag>-<seq>`` to partition 0 at
    about ``rate`` records/s until ``stop``; keeps every delivery report."""

    def __init__(self, cluster: Cluster, topic: str, tag: str, rate: float = 400.0,
                 config: dict[str, object] | None = None) -> None:
        self.topic = topic
        self.tag = tag
        self.rate = rate
        self.acked: dict[bytes, tuple[int, int]] = {}
        self.failed: list[bytes] = []
        self.errors: dict[str, int] = {}
        self.sent = 0
        self.fatal: KafkaError | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.producer = Producer({
            "bootstrap.servers": cluster.bootstrap_servers,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 5,
            # Long enough to outlast any failover a scenario makes: a message is reported
            # failed only when the broker said so.
            "message.timeout.ms": 120_000,
            # A paused (SIGSTOPped) leader keeps its connections open: librdkafka gives up on
            # a request to it after socket.timeout.ms (60 s by default) and only then moves
            # its idempotent sequence to the new leader.
            "socket.timeout.ms": 10_000,
            "request.timeout.ms": 8000,
            "error_cb": self._on_error,
            **(config or {}),
        })
        self._thread = threading.Thread(target=self._run, name=f"workload-{tag}", daemon=True)

    def _on_error(self, err: KafkaError) -> None:
        if err.fatal():
            self.fatal = err

    def _on_delivery(self, err: KafkaError | None, msg: object) -> None:
        value = msg.value()                                   # type: ignore[attr-defined]
        with self._lock:
            if err is None:
                self.acked[value] = (msg.partition(), msg.offset())  # type: ignore[attr-defined]
                return
            self.errors[err.name()] = self.errors.get(err.name(), 0) + 1
            if err.code() not in MAYBE_WRITTEN:
                self.failed.append(value)

    def _run(self) -> None:
        interval = 1.0 / self.rate
        next_at = time.monotonic()
        while not self._stop.is_set() and self.fatal is None:
            value = f"{self.tag}-{self.sent}".encode()
            try:
                self.producer.produce(self.topic, value=value, key=b"k", partition=0,
                                      on_delivery=self._on_delivery)
            except BufferError:
                self.producer.poll(0.1)
                continue
            except KafkaException as e:
                # After a fatal error produce() raises it (error_cb may not have run yet).
                self.fatal = e.args[0]
                break
            self.sent += 1
            self.producer.poll(0)
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def start(self) -> Workload:
        self._thread.start()
        return self

    def stop(self, timeout: float = 130.0) -> None:
        """Stop sending and wait (bounded) for every delivery report."""
        step(f"{self.tag}: stopping the producer ({len(self.acked)} acked)")
        self._stop.set()
        self._thread.join(10)
        if self.fatal is not None:
            # Nothing more will be delivered: fail what is left without waiting for it.
            self.producer.purge()
            self.producer.poll(1)
            return
        remaining = self.producer.flush(timeout)
        assert remaining == 0, f"{remaining} messages without a delivery report after {timeout} s"

    def wait_acked(self, count: int, timeout: float = 30.0) -> None:
        """Until at least ``count`` more records are acknowledged than now."""
        target = len(self.acked) + count
        deadline = time.monotonic() + timeout
        while len(self.acked) < target:
            if self.fatal is not None:
                raise FatalProducerError(str(self.fatal))
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.tag}: {len(self.acked)} of {target} acknowledged "
                                   f"within {timeout} s; errors {self.errors}")
            time.sleep(0.05)


# ----------------------------------------------------------------------------- the cluster


def create_topic(cluster: Cluster, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for _ in range(20):
        try:
            admin.create_topics([NewTopic(topic, partitions, 3)],
                                operation_timeout=30)[topic].result(30)
            break
        except KafkaException as e:
            # librdkafka passes NOT_CONTROLLER on when its metadata names a controller that
            # has moved; a metadata refresh finds the new one (Kafka behaves alike).
            if e.args[0].code() != KafkaError.NOT_CONTROLLER:
                raise
            admin.list_topics(timeout=10)
            time.sleep(0.2)
    for p in range(partitions):
        cluster.wait_for_isr(topic, p, 3, timeout=RECOVER_S)


def restore_brokers(cluster: Cluster) -> None:
    """Every broker running: resumed if paused, started if down (also after a scenario
    failed half-way, so the next one starts from a whole cluster)."""
    for broker_id, broker in cluster.brokers.items():
        if broker.running:
            cluster.resume(broker_id)
        else:
            # A SIGKILLed broker's registration lives until its session expires; a broker
            # started before that refuses to (broker.id in use), as Kafka's does.
            cluster.wait_for_unregistered(broker_id, timeout=FAILOVER_S)
            cluster.restart(broker_id)
    for broker_id in cluster.brokers:
        cluster.wait_for_broker(broker_id, timeout=RECOVER_S)


def restore(cluster: Cluster, topic: str) -> None:
    """Every broker running and the topic's partition-0 ISR full."""
    restore_brokers(cluster)
    cluster.wait_for_isr(topic, 0, 3, timeout=RECOVER_S)


# ----------------------------------------------------------------------------- reading back


def consume(cluster: Cluster, topic: str, timeout: float = 60.0) -> list[Record]:
    """Partition 0 from the start to its high watermark, through a consumer."""
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                         "group.id": f"readback-{topic}", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "enable.partition.eof": True})
    try:
        tp = CKTopicPartition(topic, 0)
        _low, high = consumer.get_watermark_offsets(tp, timeout=10)
        consumer.assign([CKTopicPartition(topic, 0, 0)])
        records: list[Record] = []
        deadline = time.monotonic() + timeout
        last = -1
        while last < high - 1:
            if time.monotonic() > deadline:
                raise TimeoutError(f"read {len(records)} records of {topic} up to {last}, "
                                   f"high watermark {high}, in {timeout} s")
            for msg in consumer.consume(1000, timeout=1.0):
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise KafkaException(err)
                records.append((msg.offset(), msg.key(), msg.value()))
                last = msg.offset()
        return records
    finally:
        consumer.close()


def replica_records(cluster: Cluster, broker_id: int, topic: str) -> list[Record]:
    """Partition 0's records in ``broker_id``'s segment files, read with kafka-python."""
    directory = Path(cluster.brokers[broker_id].data_dir) / f"{topic}-0"
    records: list[Record] = []
    for segment in sorted(directory.glob("*.log")):
        batches = MemoryRecords(segment.read_bytes())
        while True:
            batch = batches.next_batch()
            if batch is None:
                break
            for record in batch:
                records.append((record.offset, record.key, record.value))
    return records


def replica_reads(cluster: Cluster, topic: str, timeout: float = 30.0) -> list[Read]:
    """Each replica's log, once all have the same end offset (the producer has stopped and
    the ISR is full, so they converge; bounded)."""
    deadline = time.monotonic() + timeout
    while True:
        logs = {b: replica_records(cluster, b, topic) for b in cluster.brokers}
        ends = {b: (recs[-1][0] + 1 if recs else 0) for b, recs in logs.items()}
        if len(set(ends.values())) == 1 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    return [(f"broker-{b}", 0, recs) for b, recs in logs.items()]


def judge(cluster: Cluster, name: str, topic: str, acked: dict[bytes, tuple[int, int]],
          failed: list[bytes], errors: dict[str, int], started: float,
          notes: list[str] | None = None, fatal: KafkaError | None = None) -> Outcome:
    step(f"{name}: restoring")
    restore(cluster, topic)
    step(f"{name}: reading back")
    reads: list[Read] = [("consumer", 0, consume(cluster, topic))]
    replicas = replica_reads(cluster, topic)
    reads += replicas
    notes = list(notes or [])
    ends = {src: (recs[-1][0] + 1 if recs else 0) for src, _, recs in replicas}
    if len(set(ends.values())) != 1:
        notes.append(f"replica log ends differ: {ends}")
    report = check(acked, failed, reads)
    if len(set(ends.values())) != 1:
        report.add("inconsistent", f"replica log ends differ after the ISR is full: {ends}")
    return Outcome(name, report, time.monotonic() - started, dict(errors), notes,
                   None if fatal is None else str(fatal))


# ----------------------------------------------------------------------------- scenarios

_topics = iter(range(1_000_000))


def fresh_topic(name: str) -> str:
    return f"{name}-{time.time_ns() % 10**9}-{next(_topics)}"


def bounce(cluster: Cluster, name: str, rounds: int,
           victim: Callable[[Cluster, str], int], fault: Callable[[Cluster, int], None],
           wait_moved: Callable[[Cluster, str, int], None]) -> Outcome:
    started = time.monotonic()
    topic = fresh_topic(name)
    create_topic(cluster, topic)
    workload = Workload(cluster, topic, name).start()
    try:
        workload.wait_acked(200)
        for r in range(rounds):
            broker = victim(cluster, topic)
            step(f"{name} round {r}: fault on broker {broker} (leader "
                 f"{cluster.leader_of(topic, 0)}, controller {cluster.controller()})")
            fault(cluster, broker)
            wait_moved(cluster, topic, broker)
            step(f"{name}: moved, leader {cluster.leader_of(topic, 0)}")
            workload.wait_acked(100, timeout=FAILOVER_S + 20)
            cluster.restart(broker)
            step(f"{name}: broker {broker} restarted")
            cluster.wait_for_isr(topic, 0, 3, timeout=RECOVER_S)
            step(f"{name}: ISR full")
            workload.wait_acked(100)
    except FatalProducerError as e:
        step(f"{workload.tag}: the producer failed: {e}")
    finally:
        workload.stop()
    return judge(cluster, name, topic, workload.acked, workload.failed, workload.errors,
                 started, fatal=workload.fatal)


def _leader(cluster: Cluster, topic: str) -> int:
    leader = cluster.leader_of(topic, 0)
    assert leader is not None, f"{topic}-0 has no leader"
    return leader


def _controller(cluster: Cluster, topic: str) -> int:
    return cluster.wait_for_controller()


def _leader_moved(cluster: Cluster, topic: str, old: int) -> None:
    cluster.wait_for_leader(topic, 0, not_in={old}, timeout=FAILOVER_S)


def _controller_moved(cluster: Cluster, topic: str, old: int) -> None:
    cluster.wait_for_controller(not_in={old}, timeout=FAILOVER_S)
    cluster.wait_for_leader(topic, 0, not_in={old}, timeout=FAILOVER_S)


def hard_bounce(cluster: Cluster, rounds: int = 3) -> Outcome:
    """SIGKILL the partition's leader and restart it, ``rounds`` times, while producing."""
    return bounce(cluster, "hard-bounce", rounds, _leader, Cluster.kill, _leader_moved)


def clean_bounce(cluster: Cluster, rounds: int = 3) -> Outcome:
    """SIGTERM (controlled shutdown) the partition's leader and restart it."""
    return bounce(cluster, "clean-bounce", rounds, _leader, Cluster.stop, _leader_moved)


def controller_bounce(cluster: Cluster, rounds: int = 3) -> Outcome:
    """SIGKILL the controller and restart it. The test partition's leader is put on the
    controller first, so that each round also moves a leader the controller led."""
    def victim(c: Cluster, topic: str) -> int:
        return c.wait_for_controller()

    def moved(c: Cluster, topic: str, old: int) -> None:
        c.wait_for_controller(not_in={old}, timeout=FAILOVER_S)
        if c.leader_of(topic, 0) in (None, old):
            c.wait_for_leader(topic, 0, not_in={old}, timeout=FAILOVER_S)

    return bounce(cluster, "controller-bounce", rounds, victim, Cluster.kill, moved)


def paused_leader(cluster: Cluster, rounds: int = 1) -> Outcome:
    """SIGSTOP the leader past its ZooKeeper session while producing, then SIGCONT: the
    stale leader wakes up deposed; nothing it (or anyone) acknowledged may be lost."""
    started = time.monotonic()
    topic = fresh_topic("paused-leader")
    create_topic(cluster, topic)
    workload = Workload(cluster, topic, "paused-leader").start()
    try:
        workload.wait_acked(200)
        for r in range(rounds):
            leader = _leader(cluster, topic)
            step(f"paused-leader round {r}: SIGSTOP leader {leader}")
            cluster.pause(leader)
            cluster.wait_for_leader(topic, 0, not_in={leader}, timeout=FAILOVER_S)
            step(f"paused-leader: new leader {cluster.leader_of(topic, 0)}")
            workload.wait_acked(100, timeout=FAILOVER_S + 20)
            step(f"paused-leader: SIGCONT {leader}")
            cluster.resume(leader)
            cluster.wait_for_isr(topic, 0, 3, timeout=RECOVER_S)
            workload.wait_acked(100)
    except FatalProducerError as e:
        step(f"{workload.tag}: the producer failed: {e}")
    finally:
        workload.stop()
    return judge(cluster, "paused-leader", topic, workload.acked, workload.failed,
                 workload.errors, started, fatal=workload.fatal)


def deleted_log_dir(cluster: Cluster, rounds: int = 1) -> Outcome:
    """Stop a follower, delete its whole log directory (a lost disk), start it again: it
    rebuilds the partition from the leader and rejoins the ISR with identical data."""
    started = time.monotonic()
    topic = fresh_topic("deleted-log-dir")
    create_topic(cluster, topic)
    workload = Workload(cluster, topic, "deleted-log-dir").start()
    try:
        workload.wait_acked(500)
        for _ in range(rounds):
            leader = _leader(cluster, topic)
            follower = min(b for b in cluster.brokers if b != leader)
            cluster.stop(follower)
            shutil.rmtree(cluster.brokers[follower].data_dir)
            workload.wait_acked(300)
            cluster.restart(follower)
            cluster.wait_for_isr(topic, 0, 3, timeout=RECOVER_S)
            workload.wait_acked(100)
    except FatalProducerError as e:
        step(f"{workload.tag}: the producer failed: {e}")
    finally:
        workload.stop()
    return judge(cluster, "deleted-log-dir", topic, workload.acked, workload.failed,
                 workload.errors, started, fatal=workload.fatal)


# ------------------------------------------------------------------- min.insync.replicas


def _produce_once(cluster: Cluster, topic: str, value: bytes, acks: str,
                  timeout: float = 15.0) -> KafkaError | tuple[int, int]:
    """One record, no retries (so the broker's own error comes back); the error or
    (partition, offset)."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": acks,
                         "enable.idempotence": False, "retries": 0,
                         "message.timeout.ms": int(timeout * 1000),
                         "request.timeout.ms": int(timeout * 1000)})
    result: list[KafkaError | tuple[int, int]] = []

    def report(err: KafkaError | None, msg: object) -> None:
        result.append(err if err is not None else
                      (msg.partition(), msg.offset()))          # type: ignore[attr-defined]

    producer.produce(topic, value=value, key=b"k", partition=0, on_delivery=report)
    producer.flush(timeout + 5)
    assert result, f"no delivery report for {value!r} within {timeout + 5} s"
    return result[0]


def min_insync_replicas(cluster: Cluster) -> Outcome:
    """Two of three brokers down: acks=all fails with NOT_ENOUGH_REPLICAS (at first it may
    time out while the ISR shrinks; Kafka's answer once it has shrunk is
    NOT_ENOUGH_REPLICAS), acks=1 still works; one broker back and acks=all works again."""
    started = time.monotonic()
    topic = fresh_topic("min-isr")
    create_topic(cluster, topic)
    acked: dict[bytes, tuple[int, int]] = {}
    failed: list[bytes] = []
    errors: dict[str, int] = {}
    notes: list[str] = []
    seq = 0

    def send(acks: str) -> KafkaError | tuple[int, int]:
        nonlocal seq
        value = f"min-isr-{seq}".encode()
        seq += 1
        got = _produce_once(cluster, topic, value, acks)
        if isinstance(got, KafkaError):
            errors[got.name()] = errors.get(got.name(), 0) + 1
            if got.code() not in MAYBE_WRITTEN:
                failed.append(value)
        else:
            acked[value] = got
        return got

    for _ in range(10):
        assert isinstance(send("all"), tuple)
    leader = _leader(cluster, topic)
    down = [b for b in cluster.brokers if b != leader]
    for b in down:
        cluster.kill(b)
    cluster.wait_for_isr(topic, 0, 1, timeout=FAILOVER_S + 10)
    deadline = time.monotonic() + 30
    while True:
        got = send("all")
        if isinstance(got, KafkaError) and got.code() == KafkaError.NOT_ENOUGH_REPLICAS:
            break
        assert not isinstance(got, tuple), "acks=all acknowledged with one in-sync replica"
        assert time.monotonic() < deadline, f"acks=all never got NOT_ENOUGH_REPLICAS: {got}"
    notes.append(f"acks=all with ISR {cluster.isr_of(topic, 0)}: NOT_ENOUGH_REPLICAS")
    for _ in range(5):
        got = send("1")
        assert isinstance(got, tuple), f"acks=1 with one broker up failed: {got}"
    cluster.wait_for_unregistered(down[0], timeout=FAILOVER_S)
    cluster.restart(down[0])
    cluster.wait_for_isr(topic, 0, 2, timeout=RECOVER_S)
    for _ in range(10):
        got = send("all")
        assert isinstance(got, tuple), f"acks=all with two in-sync replicas failed: {got}"

    return judge(cluster, "min-insync-replicas", topic, acked, failed, errors, started,
                 notes)


SCENARIOS: dict[str, Callable[..., Outcome]] = {
    "hard-bounce": hard_bounce,
    "clean-bounce": clean_bounce,
    "controller-bounce": controller_bounce,
    "paused-leader": paused_leader,
    "min-insync-replicas": lambda cluster, rounds=1: min_insync_replicas(cluster),
    "deleted-log-dir": deleted_log_dir,
}
