"""Consumer-group members of the three Python client libraries, each in its own process.

A ``Member`` is one group consumer (confluent-kafka, kafka-python or aiokafka) running this
module as a child process (``python -m tests.clients.group_support <spec as JSON>``). The child
subscribes to one topic with a group id and then loops: poll, report what it got, commit it
synchronously with explicit offsets (the offset after the last record of each partition), report
whether the commit succeeded. Rebalance callbacks report every partition gained or lost. Every
report is a JSON line on the child's stdout stamped with ``time.monotonic()`` (CLOCK_MONOTONIC,
one clock for every process of the machine), so the parent can put the events of all members on
one time line. The parent speaks to the child through stdin: ``close`` closes the consumer
(LeaveGroup for a dynamic member) and exits; ``hold`` stops its commits. ``Member.crash()`` is
SIGKILL: the member stops heartbeating without a LeaveGroup, the honest crash.

Why a child process per member: the only real crash is a process that dies; and the three
libraries keep background threads (librdkafka, kafka-python's network thread) or an event loop
(aiokafka) that must not share one interpreter with the broker under test.

What a child reports (``Event.kind``):

- ``started``: subscribed.
- ``assigned`` / ``revoked`` / ``lost``: from the rebalance callback, with the partitions gained
  or lost and ``owned``, the member's whole assignment after the callback. (Eager protocols
  revoke everything and assign the new set; librdkafka's cooperative-sticky changes increments.)
- ``consumed``: records returned by one poll, ``[partition, offset, key]`` each. The stamp is
  taken when the poll returned, before any other callback of the library can run.
- ``committed``: records of a poll whose offsets the coordinator accepted (stamped after the
  commit returned); ``commit_failed``: those it refused, with the error. A refused record of a
  partition the member still owns goes with its next commit (the library will not deliver it
  again, and a later offset committed covers it), retried at every poll until accepted.
  Records of a partition revoked before their commit are not committed (the member no longer
  owns them): another member will read them again, which the group's at-least-once contract
  allows.
- ``idle``: ``max_records`` records were consumed; the member stops polling records.
- ``holding``: the member took the ``hold`` command: it goes on consuming but commits no more.
- ``closed``: ``close()`` returned. ``error``: anything else the library raised or reported.

``Group`` owns the members of a test and checks their history (``check_history``): at every
instant the live members' assignments are disjoint; no record is committed by two members; no
member reads a record after someone committed it; every record produced was committed once.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = ("confluent", "kafka-python", "aiokafka")
WAIT = 20.0     # default deadline of a wait on the group (rebalances are sub-second locally)
# How long the members' pipes may take to deliver an event after another member's later one
# (each has its own reader thread; under load one may lag the others: more than a second
# was seen in CI, a revocation arriving after the other member's next assignment)
DELIVERY_LAG = 5.0

# The assignors of each library, by the name the group protocol uses.
ASSIGNORS = {
    "confluent": ("range", "roundrobin", "cooperative-sticky"),
    "kafka-python": ("range", "roundrobin"),
    "aiokafka": ("range", "roundrobin"),
}

Record = tuple[int, int, str]          # partition, offset, key


@attrs.frozen
class Event:
    member: str
    kind: str
    t: float
    data: Mapping[str, Any]


# =========================================================================== parent side


class Member:
    """One group consumer in a child process. Create it through ``Group.start``."""

    def __init__(self, group: Group, name: str, spec: Mapping[str, Any]) -> None:
        self.group = group
        self.name = name
        self.spec = dict(spec)
        self.library: str = spec["library"]
        self.stderr_path = group.log_dir / f"{name}.stderr"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.clients.group_support", json.dumps(self.spec)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=ROOT,
                env=env)
        self.ended_at: float | None = None    # kill or close time: it owns nothing after
        self.crashed = False
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        name=f"member-{name}")
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                raw = json.loads(line)
            except ValueError:
                raw = {"e": "error", "t": time.monotonic(), "error": f"bad line {line!r}"}
            kind, t = raw.pop("e"), raw.pop("t")
            self.group._deliver(Event(self.name, kind, t, raw))
        self.group._deliver(Event(self.name, "exited", time.monotonic(), {}))

    # ---------------------------------------------------------------- what it did

    def events(self, *kinds: str) -> list[Event]:
        return [e for e in self.group.events_of(self.name) if not kinds or e.kind in kinds]

    @property
    def owned(self) -> frozenset[int]:
        """The partitions of its latest rebalance callback (empty once closed or killed)."""
        if self.ended_at is not None:
            return frozenset()
        changes = self.events("assigned", "revoked", "lost")
        return frozenset(changes[-1].data["owned"]) if changes else frozenset()

    def consumed(self) -> list[Record]:
        return [tuple(r) for e in self.events("consumed")  # type: ignore[misc]
                for r in e.data["records"]]

    def committed(self) -> list[Record]:
        return [tuple(r) for e in self.events("committed")  # type: ignore[misc]
                for r in e.data["records"]]

    def stderr_tail(self, size: int = 3000) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-size:]
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.ended_at is None and self.process.poll() is None

    # ------------------------------------------------------------------- commands

    def close(self, timeout: float = WAIT) -> None:
        """``consumer.close()`` in the child (LeaveGroup unless static); waits for its exit."""
        assert self.process.stdin is not None
        self.process.stdin.write(b"close\n")
        self.process.stdin.flush()
        self.group.wait(lambda: bool(self.events("closed")), timeout,
                        f"{self.name} to close")
        self.ended_at = self.events("closed")[-1].t
        self.process.wait(timeout)
        self._release()
        assert self.process.returncode == 0, \
            f"{self.name} exited {self.process.returncode}: {self.stderr_tail()}"

    def hold_commits(self) -> float:
        """From now on the member consumes without committing (a crash then leaves records
        consumed but not committed, with no commit in flight). Returns when the child has
        taken the command (after any commit it had started), with that time."""
        assert self.process.stdin is not None
        self.process.stdin.write(b"hold\n")
        self.process.stdin.flush()
        self.group.wait(lambda: bool(self.events("holding")), WAIT,
                        f"{self.name} to stop committing")
        return self.events("holding")[0].t

    def crash(self) -> float:
        """SIGKILL: no LeaveGroup, no commit, no close. Returns the time of the kill."""
        self.ended_at = time.monotonic()
        self.crashed = True
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        self._release()
        return self.ended_at

    def kill_quietly(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        if self.ended_at is None:
            self.ended_at = time.monotonic()
        self._release()

    def _release(self) -> None:
        """Close the pipes of an exited child (the reader stops at its EOF first)."""
        self._reader.join(10)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


class Group:
    """The members of one consumer group in a test, and the history of their events.

    Use as a context manager: members still running at the end are killed (so a failed test
    leaves no process behind)."""

    def __init__(self, bootstrap: str, group_id: str, topic: str, log_dir: Path,
                 partitions: int, *, session_timeout_ms: int = 3000,
                 heartbeat_interval_ms: int = 300, max_poll_interval_ms: int = 10000) -> None:
        self.bootstrap = bootstrap
        self.group_id = group_id
        self.topic = topic
        self.log_dir = log_dir
        self.partitions = partitions
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_poll_interval_ms = max_poll_interval_ms
        self.members: dict[str, Member] = {}
        self._events: list[Event] = []
        self._cond = threading.Condition()

    def __enter__(self) -> Group:
        return self

    def __exit__(self, *exc: object) -> None:
        for m in self.members.values():
            m.kill_quietly()

    # ------------------------------------------------------------------ members

    def start(self, name: str, library: str, *, assignor: str = "range",
              instance_id: str | None = None, max_records: int | None = None,
              commit: bool = True, config: Mapping[str, Any] | None = None,
              wait_started: bool = True) -> Member:
        """A new member called ``name`` (its client id too)."""
        assert name not in self.members, f"member name {name} reused"
        spec = {"library": library, "name": name, "bootstrap": self.bootstrap,
                "group": self.group_id, "topic": self.topic, "assignor": assignor,
                "instance_id": instance_id, "max_records": max_records, "commit": commit,
                "session_timeout_ms": self.session_timeout_ms,
                "heartbeat_interval_ms": self.heartbeat_interval_ms,
                "max_poll_interval_ms": self.max_poll_interval_ms,
                "config": dict(config or {})}
        member = Member(self, name, spec)
        self.members[name] = member
        if wait_started:
            self.wait(lambda: bool(member.events("started")), WAIT, f"{name} to subscribe")
        return member

    def live(self) -> list[Member]:
        return [m for m in self.members.values() if m.ended_at is None]

    # ------------------------------------------------------------------- events

    def _deliver(self, event: Event) -> None:
        with self._cond:
            self._events.append(event)
            self._cond.notify_all()

    def events_of(self, name: str) -> list[Event]:
        with self._cond:
            return [e for e in self._events if e.member == name]

    def all_events(self) -> list[Event]:
        with self._cond:
            return sorted(self._events, key=lambda e: e.t)

    def wait(self, condition: Callable[[], bool], timeout: float, what: str,
             seen: Callable[[], object] | None = None) -> None:
        """Until ``condition()``; on the deadline fails with ``what``, ``seen()`` and the
        members' errors. A member that exits unexpectedly fails the wait at once."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if condition():
                    return
                for m in self.members.values():
                    if m.ended_at is None and any(e.kind == "exited" for e in self._events
                                                  if e.member == m.name) \
                            and not any(e.kind == "closed" for e in self._events
                                        if e.member == m.name):
                        raise AssertionError(
                            f"waiting for {what}: member {m.name} exited "
                            f"({m.process.poll()}): {m.stderr_tail()}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        f"no {what} within {timeout} s; seen: "
                        f"{seen() if seen else self.summary()}\n{self.errors()}")
                self._cond.wait(min(remaining, 0.1))

    def summary(self) -> str:
        return "; ".join(
            f"{m.name}{'(crashed)' if m.crashed else ''}{'(ended)' if m.ended_at else ''}: "
            f"owns {sorted(m.owned)}, consumed {len(m.consumed())}, "
            f"committed {len(m.committed())}" for m in self.members.values())

    def errors(self) -> str:
        errs = [f"{e.member}: {e.kind} {dict(e.data)}" for e in self.all_events()
                if e.kind in ("error", "commit_failed")]
        return "member errors: " + ("; ".join(errs[-20:]) if errs else "none")

    def assignments(self) -> dict[str, list[int]]:
        return {m.name: sorted(m.owned) for m in self.live()}

    def wait_balanced(self, members: Sequence[Member], timeout: float = WAIT
                      ) -> dict[str, frozenset[int]]:
        """Until exactly ``members`` own partitions, disjointly, covering every partition, each
        as many (``partitions / len(members)``, which divides in these tests); returns them.
        Disjointness is also asserted on the way (an overlap fails at once)."""
        want = self.partitions // len(members)
        names = {m.name for m in members}

        def done() -> bool:
            owned = {m.name: m.owned for m in self.live()}
            if self._overlapping(owned):
                # Each member's events come through its own pipe and reader thread, so one
                # member's revocation can be delivered after another's later assignment:
                # look again once the pipes have caught up. An overlap that stays is real;
                # a brief one that was real is still caught by check_history, which orders
                # the events by their own clock.
                lagging = time.monotonic() + DELIVERY_LAG
                while self._overlapping(owned) and time.monotonic() < lagging:
                    time.sleep(0.1)
                    owned = {m.name: m.owned for m in self.live()}
                self._assert_disjoint(owned)
            return (all(len(owned.get(n, ())) == want for n in names)
                    and all(not v for n, v in owned.items() if n not in names)
                    and set().union(*owned.values()) == set(range(self.partitions)))

        self.wait(done, timeout, f"a balanced assignment of {self.partitions} partitions over "
                  f"{sorted(names)}", self.assignments)
        return {m.name: m.owned for m in members}

    @staticmethod
    def _overlapping(owned: Mapping[str, Iterable[int]]) -> list[int]:
        counts = Counter(p for parts in owned.values() for p in parts)
        return sorted(p for p, n in counts.items() if n > 1)

    @classmethod
    def _assert_disjoint(cls, owned: Mapping[str, Iterable[int]]) -> None:
        twice = cls._overlapping(owned)
        assert not twice, f"partitions {twice} owned by two members at once: {dict(owned)}"

    # ------------------------------------------------------------------- checks

    def check_history(self, produced: Iterable[tuple[int, int]]) -> None:
        """The group's whole history, on the events' shared clock:

        1. at every instant, the live members' assignments are disjoint (a member owns
           nothing after its kill or close);
        2. no record is committed by two members, or twice;
        3. no member consumed a record after a member had committed it (a committed record is
           consumed by the group once: redelivery is only of uncommitted records);
        4. the committed records are exactly ``produced`` (partition, offset) (every produced
           record was consumed and committed once).
        """
        events = self.all_events()
        # 1. ownership time line
        owned: dict[str, frozenset[int]] = {}
        ends = sorted((m.ended_at, m.name) for m in self.members.values()
                      if m.ended_at is not None)
        timeline: list[tuple[float, str, frozenset[int] | None]] = [
            (e.t, e.member, frozenset(e.data["owned"])) for e in events
            if e.kind in ("assigned", "revoked", "lost")]
        timeline += [(t, name, None) for t, name in ends]
        ended: set[str] = set()
        for t, name, parts in sorted(timeline, key=lambda x: x[0]):
            if parts is None:
                ended.add(name)
                owned.pop(name, None)
            elif name not in ended:
                owned[name] = parts
            counts = Counter(p for ps in owned.values() for p in ps)
            twice = sorted(p for p, n in counts.items() if n > 1)
            assert not twice, (f"at t={t:.3f} partitions {twice} were owned by two members: "
                               f"{ {k: sorted(v) for k, v in owned.items()} }")
        # 2. committed once
        commits: dict[tuple[int, int], list[tuple[str, float]]] = {}
        for e in events:
            if e.kind == "committed":
                for p, o, _ in e.data["records"]:
                    commits.setdefault((p, o), []).append((e.member, e.t))
        double = {r: c for r, c in commits.items() if len(c) > 1}
        assert not double, f"records committed more than once: {dict(list(double.items())[:10])}"
        # 3. nothing consumed after its commit
        late = []
        for e in events:
            if e.kind == "consumed":
                for p, o, _ in e.data["records"]:
                    c = commits.get((p, o))
                    if c and e.t > c[0][1]:
                        late.append(((p, o), e.member, f"consumed at {e.t:.3f}",
                                     f"committed by {c[0][0]} at {c[0][1]:.3f}"))
        assert not late, f"committed records consumed again: {late[:10]}"
        # 4. all produced records committed
        want = set(produced)
        got = set(commits)
        assert got == want, (f"committed records differ from produced: missing "
                             f"{sorted(want - got)[:20]} ({len(want - got)}), unexpected "
                             f"{sorted(got - want)[:20]}")

    def wait_all_committed(self, produced: Iterable[tuple[int, int]],
                           timeout: float = WAIT) -> None:
        want = set(produced)

        def got() -> set[tuple[int, int]]:
            return {(p, o) for m in self.members.values() for p, o, _ in m.committed()}

        self.wait(lambda: want <= got(), timeout,
                  f"all {len(want)} produced records committed",
                  lambda: f"{len(want - got())} missing, e.g. {sorted(want - got())[:10]}; "
                          f"{self.summary()}")


# ============================================================================ child side


class _Child:
    """What every library's loop shares: the event writer and the stdin command reader."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec = spec
        self.commit: bool = spec["commit"]
        self.owned: set[int] = set()
        # Records consumed whose commit failed, of partitions still owned: the library does
        # not deliver them again (its position is past them), so they go with the next commit.
        self.uncommitted: list[list[Any]] = []
        self.consumed_count = 0
        self.idle_sent = False
        self._stdin_buf = b""

    def emit(self, kind: str, **data: Any) -> None:
        line = json.dumps({"e": kind, "t": time.monotonic(), **data})
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def command(self) -> str | None:
        """The next command from the parent, if one is waiting (EOF means close). ``hold``
        is handled here: it stops the commits."""
        cmd = self._read_command()
        if cmd == "hold":
            self.commit = False
            self.emit("holding")
            return None
        return cmd

    def _read_command(self) -> str | None:
        if b"\n" not in self._stdin_buf:
            ready, _, _ = select.select([0], [], [], 0)
            if ready:
                chunk = os.read(0, 4096)
                if not chunk:
                    return "close"
                self._stdin_buf += chunk
        if b"\n" in self._stdin_buf:
            line, self._stdin_buf = self._stdin_buf.split(b"\n", 1)
            return line.decode().strip()
        return None

    def want(self) -> int:
        """How many more records to poll for (0 once ``max_records`` is reached)."""
        limit = self.spec["max_records"]
        if limit is None:
            return 500
        left = limit - self.consumed_count
        if left <= 0 and not self.idle_sent:
            self.idle_sent = True
            self.emit("idle")
        return max(left, 0)

    def on_change(self, kind: str, parts: Iterable[int]) -> None:
        parts = sorted(parts)
        if kind == "assigned":
            self.owned |= set(parts)
        else:
            self.owned -= set(parts)
            # Another member (or this one, assigned again) reads them from the group's offset.
            self.uncommitted = [r for r in self.uncommitted if r[0] in self.owned]
        self.emit(kind, partitions=parts, owned=sorted(self.owned))

    def consumed(self, records: list[list[Any]]) -> list[list[Any]]:
        """Report a poll's records; returns what to commit: those still owned, after the
        owned ones an earlier commit failed for (retried even when the poll was empty)."""
        if records:
            self.consumed_count += len(records)
            self.emit("consumed", records=records)
        return self.uncommitted + [r for r in records if r[0] in self.owned]

    @staticmethod
    def next_offsets(records: list[list[Any]]) -> dict[int, int]:
        offsets: dict[int, int] = {}
        for p, o, _ in records:
            offsets[p] = max(offsets.get(p, 0), o + 1)
        return offsets

    def report_commit(self, records: list[list[Any]], failed: Mapping[int, str]) -> None:
        """A commit of the offsets after ``records`` returned, refused for the partitions in
        ``failed``. A refused commit is retried with the next (Kafka's offsets are positions:
        a later commit of the partition covers every record before it, these too), until it
        is accepted or the partition is revoked."""
        self.uncommitted = [r for r in records if r[0] in failed and r[0] in self.owned]
        ok = [r for r in records if r[0] not in failed]
        if ok:
            self.emit("committed", records=ok, offsets=self.next_offsets(ok))
        bad = [r for r in records if r[0] in failed]
        if bad:
            self.emit("commit_failed", records=bad, errors={str(k): v for k, v in
                                                            failed.items()})


def _key(key: bytes | None) -> str:
    return "" if key is None else key.decode(errors="replace")


def _run_confluent(spec: Mapping[str, Any]) -> None:
    import confluent_kafka

    child = _Child(spec)
    conf: dict[str, Any] = {
        "bootstrap.servers": spec["bootstrap"], "group.id": spec["group"],
        "client.id": spec["name"], "enable.auto.commit": False,
        "enable.auto.offset.store": False, "auto.offset.reset": "earliest",
        "session.timeout.ms": spec["session_timeout_ms"],
        "heartbeat.interval.ms": spec["heartbeat_interval_ms"],
        "max.poll.interval.ms": spec["max_poll_interval_ms"],
        "partition.assignment.strategy": spec["assignor"], "fetch.wait.max.ms": 100,
        "error_cb": lambda err: child.emit("error", error=str(err)),
    }
    if spec["instance_id"]:
        conf["group.instance.id"] = spec["instance_id"]
    conf.update(spec["config"])
    consumer = confluent_kafka.Consumer(conf)
    topic = spec["topic"]

    def parts_of(partitions: list[Any]) -> list[int]:
        return [tp.partition for tp in partitions]

    consumer.subscribe(
        [topic],
        on_assign=lambda c, ps: child.on_change("assigned", parts_of(ps)),
        on_revoke=lambda c, ps: child.on_change("revoked", parts_of(ps)),
        on_lost=lambda c, ps: child.on_change("lost", parts_of(ps)))
    child.emit("started")
    while True:
        if child.command() == "close":
            consumer.close()
            child.emit("closed")
            return
        n = child.want()
        if n == 0:
            time.sleep(0.05)
            continue
        # poll() one message at a time: a rebalance callback runs inside poll, so every
        # record poll returns was read while its partition was owned.
        batch: list[list[Any]] = []
        msg = consumer.poll(0.1)
        while msg is not None:
            if msg.error():
                child.emit("error", error=str(msg.error()))
            else:
                batch.append([msg.partition(), msg.offset(), _key(msg.key())])
                if len(batch) >= n:
                    break
            msg = consumer.poll(0)
        to_commit = child.consumed(batch)
        if not (child.commit and to_commit):
            continue
        offsets = child.next_offsets(to_commit)
        failed: dict[int, str] = {}
        try:
            result = consumer.commit(
                offsets=[confluent_kafka.TopicPartition(topic, p, o) for p, o in
                         offsets.items()], asynchronous=False)
            for tp in result or ():
                if tp.error is not None:
                    failed[tp.partition] = str(tp.error)
        except confluent_kafka.KafkaException as e:
            failed = {p: str(e) for p in offsets}
        child.report_commit(to_commit, failed)


def _run_kafka_python(spec: Mapping[str, Any]) -> None:
    import kafka
    import kafka.errors
    from kafka import ConsumerRebalanceListener, OffsetAndMetadata, TopicPartition
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    child = _Child(spec)
    assignor = {"range": RangePartitionAssignor,
                "roundrobin": RoundRobinPartitionAssignor}[spec["assignor"]]
    consumer = kafka.KafkaConsumer(
        bootstrap_servers=spec["bootstrap"], group_id=spec["group"], client_id=spec["name"],
        enable_auto_commit=False, auto_offset_reset="earliest",
        session_timeout_ms=spec["session_timeout_ms"],
        heartbeat_interval_ms=spec["heartbeat_interval_ms"],
        max_poll_interval_ms=spec["max_poll_interval_ms"],
        partition_assignment_strategy=[assignor], group_instance_id=spec["instance_id"],
        fetch_max_wait_ms=100, **spec["config"])
    topic = spec["topic"]

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            child.on_change("revoked", [tp.partition for tp in revoked])

        def on_partitions_assigned(self, assigned: Any) -> None:
            child.on_change("assigned", [tp.partition for tp in assigned])

        def on_partitions_lost(self, lost: Any) -> None:
            child.on_change("lost", [tp.partition for tp in lost])

    consumer.subscribe([topic], listener=Listener())
    child.emit("started")
    while True:
        if child.command() == "close":
            consumer.close()
            child.emit("closed")
            return
        n = child.want()
        if n == 0:
            time.sleep(0.05)
            continue
        try:
            polled = consumer.poll(timeout_ms=100, max_records=n)
        except kafka.errors.KafkaError as e:
            child.emit("error", error=repr(e))
            continue
        batch = [[r.partition, r.offset, _key(r.key)] for records in polled.values()
                 for r in records]
        to_commit = child.consumed(batch)
        if not (child.commit and to_commit):
            continue
        offsets = child.next_offsets(to_commit)
        failed: dict[int, str] = {}
        try:
            consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1)
                             for p, o in offsets.items()})
        except kafka.errors.KafkaError as e:
            failed = {p: repr(e) for p in offsets}
        child.report_commit(to_commit, failed)


def _run_aiokafka(spec: Mapping[str, Any]) -> None:
    import asyncio

    import aiokafka.errors
    from aiokafka import AIOKafkaConsumer
    from aiokafka.abc import ConsumerRebalanceListener
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from aiokafka.structs import TopicPartition

    child = _Child(spec)
    assignor = {"range": RangePartitionAssignor,
                "roundrobin": RoundRobinPartitionAssignor}[spec["assignor"]]
    topic = spec["topic"]

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            child.on_change("revoked", [tp.partition for tp in revoked])

        def on_partitions_assigned(self, assigned: Any) -> None:
            child.on_change("assigned", [tp.partition for tp in assigned])

    async def main() -> None:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=spec["bootstrap"], group_id=spec["group"],
            client_id=spec["name"], enable_auto_commit=False, auto_offset_reset="earliest",
            session_timeout_ms=spec["session_timeout_ms"],
            heartbeat_interval_ms=spec["heartbeat_interval_ms"],
            max_poll_interval_ms=spec["max_poll_interval_ms"],
            rebalance_timeout_ms=spec["max_poll_interval_ms"],
            partition_assignment_strategy=(assignor,),
            group_instance_id=spec["instance_id"], fetch_max_wait_ms=100,
            **spec["config"])
        await consumer.start()
        consumer.subscribe([topic], listener=Listener())
        child.emit("started")
        while True:
            if child.command() == "close":
                await consumer.stop()
                child.emit("closed")
                return
            n = child.want()
            if n == 0:
                await asyncio.sleep(0.05)
                continue
            try:
                polled = await consumer.getmany(timeout_ms=100, max_records=n)
            except aiokafka.errors.KafkaError as e:
                child.emit("error", error=repr(e))
                continue
            # No await between getmany's return and this report: the rebalance task cannot
            # have revoked anything in between.
            batch = [[r.partition, r.offset, _key(r.key)] for records in polled.values()
                     for r in records]
            to_commit = child.consumed(batch)
            if not (child.commit and to_commit):
                continue
            offsets = child.next_offsets(to_commit)
            failed: dict[int, str] = {}
            try:
                await consumer.commit({TopicPartition(topic, p): o for p, o in offsets.items()})
            except (aiokafka.errors.KafkaError, aiokafka.errors.IllegalStateError) as e:
                failed = {p: repr(e) for p in offsets}
            child.report_commit(to_commit, failed)

    asyncio.run(main())


def main(argv: Sequence[str]) -> None:
    spec = json.loads(argv[1])
    run = {"confluent": _run_confluent, "kafka-python": _run_kafka_python,
           "aiokafka": _run_aiokafka}[spec["library"]]
    try:
        run(spec)
    except Exception as e:  # reported, then the exit code says it failed
        sys.stdout.write(json.dumps({"e": "error", "t": time.monotonic(),
                                     "error": f"fatal: {e!r}"}) + "\n")
        sys.stdout.flush()
        raise


if __name__ == "__main__":
    main(sys.argv)
