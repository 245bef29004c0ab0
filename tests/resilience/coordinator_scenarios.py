"""Coordinators that fail over: a consumer group and a transactional producer whose
coordinator is SIGKILLed, against the same 3-broker cluster as ``scenarios.py``.

The group coordinator for group G is the leader of ``__consumer_offsets`` partition
``abs(hash(G)) % offsets.topic.num.partitions`` (the transaction coordinator likewise, over
``__transaction_state``); killing that broker moves the coordinator to the partition's next
leader, which must load the group's offsets (or the transactional id's state) from the
replicated log and carry on:

- ``group_coordinator_bounce``: a consumer commits synchronously after every batch while its
  coordinator is killed; a second consumer of the group, started after yet another kill,
  must resume exactly from the offsets the coordinators acknowledged (``GroupHistory``:
  lost, rewound, skipped);
- ``txn_coordinator_bounce``: a transactional producer runs transactions of ten records over
  three partitions while its coordinator is killed; a read_committed consumer must then read
  every committed transaction whole, once, in order, nothing of an aborted one, and each
  transaction whose outcome the producer never learned whole or not at all
  (``check_transactions``). The partitions' last stable offsets must reach their high
  watermarks: a transaction the dead coordinator left open is finished by the next one.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Self

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as CKTopicPartition

from kafkapy.cluster import Cluster
from kafkapy.coordinator.internal_topic import partition_for
from tests.resilience.checker import GroupHistory, Read, Txn, check_transactions
from tests.resilience.scenarios import (
    FAILOVER_S,
    RECOVER_S,
    SETTINGS,
    Outcome,
    create_topic,
    fresh_topic,
    restore_brokers,
    step,
)

OFFSETS_TOPIC = "__consumer_offsets"
TXN_TOPIC = "__transaction_state"
PARTITIONS = 3


def _coordinator(cluster: Cluster, internal_topic: str, key: str) -> tuple[int, int]:
    """(the internal topic's partition for ``key``, its leader: the coordinator)."""
    setting = ("offsets.topic.num.partitions" if internal_topic == OFFSETS_TOPIC
               else "transaction.state.log.num.partitions")
    partition = partition_for(key, int(str(SETTINGS[setting])))
    return partition, cluster.wait_for_leader(internal_topic, partition, timeout=FAILOVER_S)


def _kill_coordinator(cluster: Cluster, internal_topic: str, key: str, name: str) -> int:
    """SIGKILL the coordinator of ``key``; returns it once the partition has a new leader."""
    partition, victim = _coordinator(cluster, internal_topic, key)
    step(f"{name}: SIGKILL broker {victim}, leader of {internal_topic}-{partition}")
    cluster.kill(victim)
    new = cluster.wait_for_leader(internal_topic, partition, not_in={victim},
                                  timeout=FAILOVER_S)
    step(f"{name}: {internal_topic}-{partition} now led by {new}")
    return victim


def _bring_back(cluster: Cluster, broker: int, internal_topic: str, key: str) -> None:
    cluster.wait_for_unregistered(broker, timeout=FAILOVER_S)
    cluster.restart(broker)
    cluster.wait_for_broker(broker, timeout=RECOVER_S)
    partition, _ = _coordinator(cluster, internal_topic, key)
    cluster.wait_for_isr(internal_topic, partition, 3, timeout=RECOVER_S)


def _wait(check: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout} s")
        time.sleep(0.05)


class _Worker:
    """A client loop (``_run``) in a daemon thread: ``start``, ``stop`` (bounded join; an
    exception of the loop is raised here), and ``wait_for`` a count the loop raises."""

    name = "worker"
    join_s = FAILOVER_S + 40

    def __init__(self) -> None:
        self.failure: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._guarded, name=self.name, daemon=True)

    def _run(self) -> None:
        raise NotImplementedError

    def _guarded(self) -> None:
        try:
            self._run()
        except BaseException as e:           # surfaced by stop() / wait_for()
            self.failure = e

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(self.join_s)
        assert not self._thread.is_alive(), f"{self.name} did not stop"
        self._stopped()
        if self.failure is not None:
            raise self.failure

    def _stopped(self) -> None:
        """After the loop ended (close clients)."""

    def wait_for(self, count: Callable[[], int], more: int, what: str, timeout: float
                 ) -> None:
        target = count() + more
        _wait(lambda: count() >= target or self.failure is not None,
              f"{self.name}: {more} more {what}", timeout)
        if self.failure is not None:
            raise self.failure


def _produce_all(cluster: Cluster, topic: str, count: int) -> list[tuple[int, int]]:
    """``count`` records over the topic's partitions (acks=all, idempotent); their
    (partition, offset)s."""
    placed: list[tuple[int, int]] = []
    errors: list[KafkaError] = []

    def report(err: KafkaError | None, msg: object) -> None:
        if err is not None:
            errors.append(err)
        else:
            placed.append((msg.partition(), msg.offset()))      # type: ignore[attr-defined]

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                         "enable.idempotence": True, "linger.ms": 5})
    for seq in range(count):
        producer.produce(topic, value=f"g-{seq}".encode(), key=str(seq).encode(),
                         on_delivery=report)
        producer.poll(0)
    assert producer.flush(60) == 0, "records without a delivery report after 60 s"
    assert not errors, f"producing the group's input failed: {errors[:3]}"
    return placed


# ----------------------------------------------------------------------------- the group


class GroupReader(_Worker):
    """One consumer of the group in a thread: consume a batch, note it, commit it
    synchronously (again and again while the coordinator is away), ``pace`` s per batch."""

    def __init__(self, cluster: Cluster, topic: str, group: str, history: GroupHistory,
                 name: str, pace: float = 0.1) -> None:
        self.name = name
        super().__init__()
        self.topic = topic
        self.history = history
        self.pace = pace
        self.commits = 0
        self.errors: dict[str, int] = {}
        self.consumer = Consumer({
            "bootstrap.servers": cluster.bootstrap_servers, "group.id": group,
            "enable.auto.commit": False, "auto.offset.reset": "earliest",
            # Long enough that the member outlives a coordinator failover: the new
            # coordinator must know the group it loaded, not a group rebuilt from scratch.
            "session.timeout.ms": 45_000, "heartbeat.interval.ms": 1000,
        })

    def _count(self, err: KafkaError) -> None:
        self.errors[err.name()] = self.errors.get(err.name(), 0) + 1

    def _commit(self, offsets: list[CKTopicPartition]) -> None:
        for tp in offsets:
            self.history.attempted(tp.partition, tp.offset)
        deadline = time.monotonic() + FAILOVER_S + 30
        while not self._stop.is_set():
            try:
                result = self.consumer.commit(offsets=offsets, asynchronous=False)
            except KafkaException as e:
                err = e.args[0]
                self._count(err)
                if err.code() in (KafkaError.ILLEGAL_GENERATION, KafkaError.UNKNOWN_MEMBER_ID,
                                  KafkaError.REBALANCE_IN_PROGRESS,
                                  KafkaError._ASSIGNMENT_LOST):
                    return          # the partitions are re-read from the last commit
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
                continue
            for tp in result or []:
                if tp.error is not None:
                    raise KafkaException(tp.error)
                self.history.committed(tp.partition, tp.offset)
            self.commits += 1
            return

    def _run(self) -> None:
        self.consumer.subscribe([self.topic])
        while not self._stop.is_set():
            messages = self.consumer.consume(100, timeout=0.5)
            last: dict[int, int] = {}
            for msg in messages:
                err = msg.error()
                if err is not None:
                    self._count(err)
                    continue
                self.history.consumed(msg.partition(), msg.offset(), self.name)
                last[msg.partition()] = msg.offset()
            if last:
                self._commit([CKTopicPartition(self.topic, p, o + 1)
                              for p, o in sorted(last.items())])
                time.sleep(self.pace)

    def _stopped(self) -> None:
        self.consumer.close()

    def wait_commits(self, more: int, timeout: float) -> None:
        self.wait_for(lambda: self.commits, more, "commits", timeout)


def group_coordinator_bounce(cluster: Cluster, rounds: int = 1) -> Outcome:
    """Kill the group's coordinator ``rounds`` times under a committing consumer, stop it,
    kill the coordinator once more, and let a new consumer of the group finish the topic."""
    started = time.monotonic()
    name = "group-coordinator"
    topic = fresh_topic(name)
    create_topic(cluster, topic, partitions=PARTITIONS)
    produced = _produce_all(cluster, topic, 20_000)
    group = f"group-{topic}"
    history = GroupHistory()
    notes: list[str] = []
    first = GroupReader(cluster, topic, group, history, "consumer-1").start()
    try:
        first.wait_commits(5, timeout=60)
        for _ in range(rounds):
            victim = _kill_coordinator(cluster, OFFSETS_TOPIC, group, name)
            first.wait_commits(5, timeout=FAILOVER_S + 60)
            _bring_back(cluster, victim, OFFSETS_TOPIC, group)
            first.wait_commits(2, timeout=60)
    finally:
        first.stop()
    notes.append(f"consumer-1: {len(history.read)} read, {first.commits} commits, "
                 f"errors {first.errors}")
    victim = _kill_coordinator(cluster, OFFSETS_TOPIC, group, name)
    second = GroupReader(cluster, topic, group, history, "consumer-2", pace=0).start()
    try:
        _wait(lambda: len(history.read) >= len(produced) or second.failure is not None,
              f"{name}: consumer-2 reading the rest", FAILOVER_S + 90)
    finally:
        second.stop()
    notes.append(f"consumer-2: {second.commits} commits, errors {second.errors}")
    _bring_back(cluster, victim, OFFSETS_TOPIC, group)
    report = history.finish(produced)
    return Outcome(name, report, time.monotonic() - started, {}, notes)


# ------------------------------------------------------------------------- transactions


class TxnWorkload(_Worker):
    """A transactional producer in a thread running transaction after transaction of
    ``size`` records (values ``<tag><n>-<i>``, keys spread over the partitions), noting what
    it was told about each (``Txn``); on a fatal error it is replaced by a new producer with
    the same transactional id, whose init fences the old one and finishes what it left."""

    name = "txn-workload"
    join_s = FAILOVER_S + 90

    def __init__(self, cluster: Cluster, topic: str, transactional_id: str,
                 size: int = 10) -> None:
        super().__init__()
        self.cluster = cluster
        self.topic = topic
        self.transactional_id = transactional_id
        self.size = size
        self.txns: list[Txn] = []
        self.committed = 0
        self.errors: dict[str, int] = {}
        self.producers = 0
        self.abandoned: list[Producer] = []     # kept alive: fenced, never used again
        self._armed: tuple[Callable[[], None], bool, threading.Event] | None = None

    def _count(self, err: KafkaError) -> None:
        self.errors[err.name()] = self.errors.get(err.name(), 0) + 1

    def _producer(self) -> Producer:
        self.producers += 1
        producer = Producer({"bootstrap.servers": self.cluster.bootstrap_servers,
                             "transactional.id": self.transactional_id, "linger.ms": 2,
                             "transaction.timeout.ms": 60_000,
                             "socket.timeout.ms": 10_000})
        deadline = time.monotonic() + FAILOVER_S + 60
        while True:
            try:
                producer.init_transactions(15)
                return producer
            except KafkaException as e:
                err = e.args[0]
                self._count(err)
                if err.fatal() or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _finish(self, producer: Producer, txn: Txn) -> bool:
        """Commit ``txn``; abort it if Kafka says so. False if the producer must go."""
        while True:
            try:
                producer.commit_transaction(15)
                txn.outcome = "committed"
                self.committed += 1
                return True
            except KafkaException as e:
                err = e.args[0]
                self._count(err)
                if err.retriable() and not self._stop.is_set():
                    continue                  # librdkafka: call commit again
                if err.txn_requires_abort():
                    try:
                        producer.abort_transaction(15)
                        txn.outcome = "aborted"
                        return True
                    except KafkaException as abort_error:
                        self._count(abort_error.args[0])
                return False

    def arm(self, fault: Callable[[], None], abandon: bool) -> threading.Event:
        """Run ``fault`` during the next commit: after the transaction's records are
        acknowledged, a few milliseconds (random, up to 5) after EndTxn is sent, so the
        fault lands somewhere between PrepareCommit and CompleteCommit. With ``abandon`` the
        producer then gives up on the commit at once and is replaced, as a client that dies
        mid-commit: whoever coordinates next must finish the transaction alone. The event
        is set once the fault ran."""
        done = threading.Event()
        self._armed = (fault, abandon, done)
        return done

    def _commit_with_fault(self, producer: Producer, txn: Txn) -> bool:
        assert self._armed is not None
        fault, abandon, done = self._armed
        self._armed = None
        producer.flush(30)

        def run() -> None:
            try:
                fault()
            finally:
                done.set()

        threading.Timer(random.uniform(0, 0.005), run).start()
        if not abandon:
            return self._finish(producer, txn)
        try:
            producer.commit_transaction(0.05)
            txn.outcome = "committed"
            self.committed += 1
        except KafkaException as e:
            self._count(e.args[0])
        done.wait(10)
        self.abandoned.append(producer)
        return False

    def _run(self) -> None:
        producer = self._producer()
        n = 0
        while not self._stop.is_set():
            txn = Txn(n, [f"txn{n}-{i}".encode() for i in range(self.size)])
            self.txns.append(txn)
            n += 1
            try:
                producer.begin_transaction()
                for i, value in enumerate(txn.values):
                    producer.produce(self.topic, value=value, key=str(i).encode())
                if self._armed is not None:
                    ok = self._commit_with_fault(producer, txn)
                else:
                    ok = self._finish(producer, txn)
            except KafkaException as e:
                self._count(e.args[0])
                ok = False
            if not ok:
                step(f"txn-coordinator: replacing the producer after txn {txn.number} "
                     f"({self.errors})")
                producer = self._producer()

    def wait_committed(self, more: int, timeout: float) -> None:
        self.wait_for(lambda: self.committed, more, "committed transactions", timeout)


def read_committed(cluster: Cluster, topic: str, timeout: float = 60.0
                   ) -> tuple[list[Read], list[str]]:
    """Every partition from the start to its high watermark with isolation.level
    read_committed; and the partitions whose last stable offset stayed below the high
    watermark (a hanging transaction: the consumer reaches the end but not the HW)."""
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                         "group.id": f"readback-{topic}", "enable.auto.commit": False,
                         "isolation.level": "read_committed",
                         "auto.offset.reset": "earliest", "enable.partition.eof": True})
    reads: list[Read] = []
    hanging: list[str] = []
    try:
        highs = {p: consumer.get_watermark_offsets(CKTopicPartition(topic, p), timeout=10)[1]
                 for p in range(PARTITIONS)}
        consumer.assign([CKTopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        records: dict[int, list[tuple[int, bytes | None, bytes | None]]] = {
            p: [] for p in range(PARTITIONS)}
        done: set[int] = set()
        deadline = time.monotonic() + timeout
        while len(done) < PARTITIONS and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=0.5):
                err = msg.error()
                if err is None:
                    records[msg.partition()].append((msg.offset(), msg.key(), msg.value()))
                elif err.code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(err)
            for p in range(PARTITIONS):
                # The position passes the trailing markers once the LSO reaches the HW.
                position = consumer.position([CKTopicPartition(topic, p)])[0].offset
                if position >= highs[p]:
                    done.add(p)
        for p in range(PARTITIONS):
            if p not in done:
                position = consumer.position([CKTopicPartition(topic, p)])[0].offset
                hanging.append(f"{topic}-{p}: read_committed position {position}, high "
                               f"watermark {highs[p]} after {timeout} s")
            reads.append(("read_committed", p, records[p]))
    finally:
        consumer.close()
    return reads, hanging


def txn_coordinator_bounce(cluster: Cluster, rounds: int = 2) -> Outcome:
    """Kill the transactional id's coordinator ``rounds`` times while transactions run."""
    started = time.monotonic()
    name = "txn-coordinator"
    topic = fresh_topic(name)
    create_topic(cluster, topic, partitions=PARTITIONS)
    transactional_id = f"txn-{topic}"
    workload = TxnWorkload(cluster, topic, transactional_id).start()
    notes: list[str] = []
    try:
        workload.wait_committed(20, timeout=60)
        for r in range(rounds):
            partition, victim = _coordinator(cluster, TXN_TOPIC, transactional_id)
            abandon = r % 2 == 1
            step(f"{name} round {r}: SIGKILL coordinator {victim} mid-commit"
                 f"{' (and abandon the producer)' if abandon else ''}")
            killed = workload.arm(lambda v=victim: cluster.kill(v), abandon)    # type: ignore[misc]
            if not killed.wait(60):
                raise TimeoutError(f"{name}: no commit within 60 s to kill {victim} in")
            new = cluster.wait_for_leader(TXN_TOPIC, partition, not_in={victim},
                                          timeout=FAILOVER_S)
            step(f"{name}: {TXN_TOPIC}-{partition} now led by {new}")
            workload.wait_committed(10, timeout=FAILOVER_S + 60)
            _bring_back(cluster, victim, TXN_TOPIC, transactional_id)
            workload.wait_committed(10, timeout=60)
    finally:
        workload.stop()
    restore_brokers(cluster)
    outcomes = {o: sum(t.outcome == o for t in workload.txns)
                for o in ("committed", "aborted", "unknown")}
    notes.append(f"transactions {outcomes}, producers {workload.producers}, "
                 f"errors {workload.errors}")
    reads, hanging = read_committed(cluster, topic)
    report = check_transactions(workload.txns, reads, hanging)
    return Outcome(name, report, time.monotonic() - started, dict(workload.errors), notes)


COORDINATOR_SCENARIOS: dict[str, Callable[..., Outcome]] = {
    "group-coordinator": group_coordinator_bounce,
    "txn-coordinator": txn_coordinator_bounce,
}
