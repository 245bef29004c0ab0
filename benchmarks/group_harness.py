"""Consumer group harness: rebalance time of 3 members, and the synchronous offset commit rate.

    PYTHONPATH=. python -m benchmarks.group_harness [--rounds N] [--delays 0,3000]
                                                    [--messages N] [--commit-rounds N]

Prints a markdown table for docs/performance.md (median, min-max, every round).

Rebalance (one embedded broker per ``group.initial.rebalance.delay.ms`` in ``--delays``; a
6-partition topic; a fresh group id per round; librdkafka's default eager assignors and
timeouts): three confluent-kafka consumers subscribe at once and poll until all three have their
assignment. Measured on the broker, in this process, without touching kafkapy's code:

- a logging handler on the coordinator's logger stamps "Stabilized group ..." (the join phase
  is over: JoinGroup answers given) and "Assignment received from leader ..." (the leader's
  SyncGroup stored, every waiting SyncGroup answered);
- ``GroupCoordinator.join_group`` and ``sync_group`` are wrapped (on the class, in this process
  only) to stamp each JoinGroup that enters the group (not one answered at once with an error,
  such as the MEMBER_ID_REQUIRED round trip of KIP-394) and each SyncGroup answered at once
  because the group is already stable (a follower that syncs after the leader).

"last join -> all assigned" is from the last JoinGroup of the final generation (the first with
three members) to the later of "Assignment received" and any follower's late SyncGroup answer.
It splits into the join phase (last join -> Stabilized: the initial delay at work) and the sync
phase (Stabilized -> all assigned: one round trip, JoinGroup answers out, the leader's
assignment in). The answers are handed to the waiting handler tasks at those instants; the
bytes go out when those tasks next run (microseconds later: the flush policy's check is all
that runs in between). The target is the initial delay plus one round trip, i.e. delay + the
measured sync phase. The client view is from the first ``subscribe()`` to the last of the
three ``on_assign`` callbacks that completes a disjoint cover of the 6 partitions.

Why threads for the three consumers: librdkafka runs the whole group protocol (FindCoordinator,
Join/Sync, heartbeats) in its own C threads, which never take the GIL; the Python threads only
sit in ``poll()`` (GIL released) and stamp ``perf_counter`` in the callback. The broker must be
in this process for the broker-side stamps, and separate processes would add three
interpreter start-ups per round and nothing measured.

Commit rate (a broker in a child process, as in e2e_harness, so that kafka-python's Python work
does not share the broker's GIL; one broker with default settings, one with
``log.flush.interval.messages=1``): ``--messages`` messages pre-produced into a 1-partition
topic; one consumer per round (fresh group) subscribes, reads the first message and commits it
(group join and connections off the clock), then reads the rest, committing each message's
offset + 1 synchronously before polling the next. commits/s = commits / elapsed. Afterwards the
committed offset is checked against the end of the topic. Rows: confluent-kafka
(``commit(message=..., asynchronous=False)``) and kafka-python (``commit({tp: offset})``). Both
brokers run side by side and the rounds interleave them, with a reference per round: raw
150-byte appends each followed by ``os.fsync`` on the same file system (fsyncs/s).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from benchmarks.e2e_harness import BrokerProcess
from kafkapy.coordinator.group.group_coordinator import GroupCoordinator
from kafkapy.testing import BrokerHandle

MEMBERS = 3
PARTITIONS = 6
COORDINATOR_LOGGER = "kafkapy.coordinator.group.group_coordinator"
# librdkafka's defaults but for these: max.poll.interval.ms is the member's rebalance timeout
# (the longest a join phase may wait for members to rejoin), 300 s by default; 15 s bounds a
# stalled rebalance so that it shows as a number, not a hang (session.timeout.ms must not be
# larger, so 10 s rather than 45 s).
MEMBER_TIMEOUTS = {"session.timeout.ms": 10_000, "max.poll.interval.ms": 15_000}


# ================================================================= broker-side probe


class GroupProbe(logging.Handler):
    """Stamps (perf_counter) of the coordinator's rebalance milestones, per group id.

    ``install()`` wraps the two public coordinator entry points on the class and attaches
    itself to the coordinator's logger; ``uninstall()`` undoes both."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.stamps_lock = threading.Lock()
        self.joins: dict[str, list[float]] = {}                         # entered the group
        self.late_syncs: dict[str, list[tuple[float, int]]] = {}        # (t, generation)
        self.stabilized: dict[str, list[tuple[float, int, int]]] = {}   # (t, generation, n)
        self.assigned: dict[str, list[tuple[float, int, int]]] = {}
        self._saved: dict[str, Callable[..., Any]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        now = time.perf_counter()
        msg, args = str(record.msg), record.args
        if not isinstance(args, tuple):
            return
        with self.stamps_lock:
            if msg.startswith("Stabilized group "):
                group, generation, members = args[0], args[1], args[2]
                self.stabilized.setdefault(group, []).append((now, generation, members))
            elif msg.startswith("Assignment received from leader "):
                group, generation, members = args[1], args[2], args[3]
                self.assigned.setdefault(group, []).append((now, generation, members))

    def install(self) -> None:
        join, sync = GroupCoordinator.join_group, GroupCoordinator.sync_group
        self._saved = {"join_group": join, "sync_group": sync}
        probe = self

        def join_group(coordinator: GroupCoordinator, **kw: Any) -> Any:
            now = time.perf_counter()
            reply = join(coordinator, **kw)
            # Answered at once with an error = not part of the rebalance (MEMBER_ID_REQUIRED
            # and the like). A join answered at once without one is the join that completed
            # the join phase (or a stable group's no-op rejoin, which precedes the rebalance).
            if not reply.answered or not reply.result.error:
                with probe.stamps_lock:
                    probe.joins.setdefault(kw["group_id"], []).append(now)
            return reply

        def sync_group(coordinator: GroupCoordinator, **kw: Any) -> Any:
            reply = sync(coordinator, **kw)
            if reply.answered and not reply.result.error:
                now = time.perf_counter()
                with probe.stamps_lock:
                    probe.late_syncs.setdefault(kw["group_id"], []).append(
                        (now, kw["generation_id"]))
            return reply

        GroupCoordinator.join_group = join_group  # type: ignore[method-assign]
        GroupCoordinator.sync_group = sync_group  # type: ignore[method-assign]
        logger = logging.getLogger(COORDINATOR_LOGGER)
        self._level = logger.level
        logger.setLevel(logging.INFO)
        logger.addHandler(self)

    def uninstall(self) -> None:
        for name, fn in self._saved.items():
            setattr(GroupCoordinator, name, fn)
        logger = logging.getLogger(COORDINATOR_LOGGER)
        logger.removeHandler(self)
        logger.setLevel(self._level)

    def rebalance(self, group: str) -> dict[str, float]:
        """Milestones of ``group``'s first generation with all members (ms)."""
        with self.stamps_lock:
            assigned = [a for a in self.assigned.get(group, []) if a[2] == MEMBERS]
            if not assigned:
                raise RuntimeError(f"{group}: no assignment with {MEMBERS} members")
            t_assigned, generation, _ = assigned[0]
            [(t_stable, _, _)] = [s for s in self.stabilized[group] if s[1] == generation]
            joins = self.joins[group]
            last_join = max(t for t in joins if t < t_stable)
            done = max([t_assigned] + [t for t, g in self.late_syncs.get(group, [])
                                       if g == generation])
        ms = 1000.0
        return {"generations": generation,
                "last_join_to_assigned": (done - last_join) * ms,
                "join_phase": (t_stable - last_join) * ms,
                "sync_phase": (done - t_stable) * ms,
                "first_join_to_assigned": (done - min(joins)) * ms,
                "join_spread": (last_join - min(joins)) * ms}


# ======================================================================== rebalance


def rebalance_round(bootstrap: str, topic: str, group: str, timeout: float = 60.0) -> float:
    """Three consumers subscribe at once; seconds from the first subscribe() to the moment
    their assignments cover the topic's partitions, disjointly."""
    lock = threading.Lock()
    owned: dict[int, set[int]] = {}
    done = threading.Event()
    stamps: dict[str, float] = {}
    go = threading.Barrier(MEMBERS + 1)
    stop = threading.Event()
    errors: list[BaseException] = []

    def member(i: int) -> None:
        try:
            consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                                 "client.id": f"member-{i}", "enable.auto.commit": False,
                                 "auto.offset.reset": "earliest", **MEMBER_TIMEOUTS})

            def on_assign(_c: object, partitions: list[TopicPartition]) -> None:
                now = time.perf_counter()
                with lock:
                    owned[i] = {p.partition for p in partitions}
                    parts = [owned.get(j, set()) for j in range(MEMBERS)]
                    if all(parts) and sum(map(len, parts)) == PARTITIONS and \
                            len(set().union(*parts)) == PARTITIONS and not done.is_set():
                        stamps["assigned"] = now
                        done.set()

            def on_revoke(_c: object, _partitions: list[TopicPartition]) -> None:
                with lock:
                    owned[i] = set()

            go.wait()
            with lock:
                stamps.setdefault("subscribe", time.perf_counter())
            consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
            while not stop.is_set():
                consumer.poll(0.05)
            consumer.close()
        except BaseException as e:          # reported by the caller
            errors.append(e)
            done.set()

    threads = [threading.Thread(target=member, args=(i,), daemon=True) for i in range(MEMBERS)]
    for t in threads:
        t.start()
    go.wait()
    ok = done.wait(timeout)
    stop.set()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0]
    if not ok:
        raise RuntimeError(f"{group}: not all members assigned within {timeout} s: {owned}")
    return stamps["assigned"] - stamps["subscribe"]


def measure_rebalance(delays: Sequence[int], rounds: int) -> dict[int, list[dict[str, float]]]:
    probe = GroupProbe()
    probe.install()
    results: dict[int, list[dict[str, float]]] = {}
    try:
        for delay in delays:
            with tempfile.TemporaryDirectory(prefix="kafkapy-group-") as tmp, \
                    BrokerHandle(tmp, {"group.initial.rebalance.delay.ms": str(delay)}) as b:
                topic = "rebalance"
                b.create_topic(topic, PARTITIONS)
                # __consumer_offsets is created by the first FindCoordinator: off the clock.
                rebalance_round(b.bootstrap_servers, topic, f"warm-up-{delay}")
                results[delay] = []
                for r in range(rounds):
                    group = f"rebalance-{delay}-{r}"
                    client = rebalance_round(b.bootstrap_servers, topic, group)
                    row = probe.rebalance(group)
                    row["client"] = client * 1000
                    results[delay].append(row)
                    print(f"  delay {delay} ms round {r}: " + ", ".join(
                        f"{k} {v:.1f}" for k, v in row.items()), file=sys.stderr)
    finally:
        probe.uninstall()
    return results


# ====================================================================== commit rate

# BrokerProcess (benchmarks.e2e_harness): a broker in a child process with given settings.


def produce(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, b"m%d" % i)
    if producer.flush(60):
        raise RuntimeError("messages left undelivered")


def commit_round_confluent(bootstrap: str, topic: str, group: str, count: int) -> float:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])

    def next_message() -> Any:
        deadline = time.perf_counter() + 60
        while time.perf_counter() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            return msg
        raise RuntimeError(f"{group}: no message within 60 s")

    consumer.commit(message=next_message(), asynchronous=False)     # joined, off the clock
    started = time.perf_counter()
    for _ in range(count - 1):
        consumer.commit(message=next_message(), asynchronous=False)
    elapsed = time.perf_counter() - started
    [tp] = consumer.committed([TopicPartition(topic, 0)], timeout=10)
    consumer.close()
    if tp.offset != count:
        raise RuntimeError(f"{group}: committed {tp.offset}, expected {count}")
    return (count - 1) / elapsed


def commit_round_kafka_python(bootstrap: str, topic: str, group: str, count: int) -> float:
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             max_poll_records=1)
    tp = KTopicPartition(topic, 0)
    messages = iter(consumer)
    first = next(messages)
    consumer.commit({tp: OffsetAndMetadata(first.offset + 1, "", -1)})   # off the clock
    started = time.perf_counter()
    for _ in range(count - 1):
        msg = next(messages)
        consumer.commit({tp: OffsetAndMetadata(msg.offset + 1, "", -1)})
    elapsed = time.perf_counter() - started
    committed = consumer.committed(tp)
    consumer.close()
    if committed != count:
        raise RuntimeError(f"{group}: committed {committed}, expected {count}")
    return (count - 1) / elapsed


CLIENTS: dict[str, Callable[[str, str, str, int], float]] = {
    "confluent-kafka": commit_round_confluent,
    "kafka-python": commit_round_kafka_python,
}
FLUSH_SETTINGS = {"default flush policy": {},
                  "log.flush.interval.messages=1": {"log.flush.interval.messages": "1"}}


def measure_commits(count: int, rounds: int) -> dict[tuple[str, str], list[float]]:
    """commits/s per (client, flush setting), every round; and per round the raw fsync rate.

    Both brokers run side by side and every round runs every (setting, client) pair back to
    back, then the raw fsync reference: this disk's fsync latency drifts by 10x within
    minutes, and only an interleaved comparison survives that."""
    results: dict[tuple[str, str], list[float]] = {}
    with contextlib.ExitStack() as stack:
        brokers = {}
        for setting, extra in FLUSH_SETTINGS.items():
            # No initial delay: the one member's join is off the clock anyway.
            config = {"num.partitions": "1", "group.initial.rebalance.delay.ms": "0", **extra}
            brokers[setting] = stack.enter_context(BrokerProcess(config))
            produce(brokers[setting], "commits", count)
        for r in range(rounds):
            for setting, bootstrap in brokers.items():
                for client, fn in CLIENTS.items():
                    rate = fn(bootstrap, "commits", f"commit-{client}-{r}", count)
                    results.setdefault((client, setting), []).append(rate)
                    print(f"  {setting}, {client}, round {r}: {rate:,.0f} commits/s",
                          file=sys.stderr)
            results.setdefault(("raw 150-byte append + os.fsync", "(no broker)"), []).append(
                fsync_rate(min(count, 500)))
    return results


def fsync_rate(count: int) -> float:
    """Appends of 150 bytes (about one offset commit batch) each followed by ``os.fsync``,
    per second, in a temporary directory on the same file system as the brokers' data: what
    one flush per commit costs before any broker work."""
    record = os.urandom(150)
    with tempfile.TemporaryDirectory(prefix="kafkapy-group-") as tmp:
        fd = os.open(Path(tmp) / "fsync", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            started = time.perf_counter()
            for _ in range(count):
                os.write(fd, record)
                os.fsync(fd)
            return count / (time.perf_counter() - started)
        finally:
            os.close(fd)


# =========================================================================== report


def _cell(values: Sequence[float], fmt: str) -> str:
    return (f"{statistics.median(values):{fmt}} | {min(values):{fmt}}-{max(values):{fmt}} | "
            + ", ".join(f"{v:{fmt}}" for v in values))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rebalance rounds per delay")
    ap.add_argument("--delays", default="0,3000",
                    help="group.initial.rebalance.delay.ms values, comma-separated")
    ap.add_argument("--messages", type=int, default=2000, help="messages per commit round")
    ap.add_argument("--commit-rounds", type=int, default=None,
                    help="commit rounds per client and setting (default: --rounds)")
    ap.add_argument("--skip-rebalance", action="store_true")
    ap.add_argument("--skip-commits", action="store_true")
    args = ap.parse_args(argv)
    delays = [int(d) for d in args.delays.split(",") if d]
    commit_rounds = args.commit_rounds or args.rounds

    rebalance = {} if args.skip_rebalance else measure_rebalance(delays, args.rounds)
    commits = {} if args.skip_commits else measure_commits(args.messages, commit_rounds)

    if rebalance:
        print(f"\nRebalance of {MEMBERS} confluent-kafka consumers, {PARTITIONS}-partition "
              f"topic, {args.rounds} rounds per delay (ms; median | min-max | rounds):\n")
        print("| initial delay | what | median | min-max | rounds |")
        print("|---|---|---|---|---|")
        labels = [
            ("last_join_to_assigned", "broker: last JoinGroup -> all members assigned"),
            ("join_phase", "broker: join phase (last JoinGroup -> Stabilized)"),
            ("sync_phase", "broker: sync phase (Stabilized -> all assigned), one round trip"),
            ("first_join_to_assigned", "broker: first JoinGroup -> all assigned"),
            ("join_spread", "broker: first -> last JoinGroup"),
            ("client", "client: first subscribe() -> last on_assign"),
            ("generations", "generations until all 3 assigned"),
        ]
        for delay, rows in rebalance.items():
            for key, label in labels:
                fmt = ".0f" if key == "generations" else ".1f"
                print(f"| {delay} ms | {label} | " + _cell([r[key] for r in rows], fmt) + " |")
            target = [delay + r["sync_phase"] for r in rows]
            excess = [r["last_join_to_assigned"] - t for r, t in zip(rows, target, strict=True)]
            print(f"| {delay} ms | target: delay + one round trip (= delay + sync phase) | "
                  + _cell(target, ".1f") + " |")
            print(f"| {delay} ms | measured - target | " + _cell(excess, ".1f") + " |")
    if commits:
        print(f"\nSynchronous commit after every message, {args.messages:,} messages, "
              f"{commit_rounds} rounds (commits/s; median | min-max | rounds):\n")
        print("| client | broker flush policy | median | min-max | rounds |")
        print("|---|---|---|---|---|")
        for (client, setting), values in commits.items():
            print(f"| {client} | {setting} | " + _cell(values, ",.0f") + " |")
        flushed = list(FLUSH_SETTINGS)[1]
        print(f"\nPer-round ratio {flushed} / default (the cost of durability; < 1 is slower):"
              "\n")
        print("| client | median | min-max | rounds |")
        print("|---|---|---|---|")
        for client in CLIENTS:
            ratios = [b / a for a, b in zip(commits[(client, "default flush policy")],
                                            commits[(client, flushed)], strict=True)]
            print(f"| {client} | " + _cell(ratios, ".2f") + " |")


if __name__ == "__main__":
    main()
