"""The resilience checker: what a producer was told against what was later read.

Pure logic, no cluster: the scenarios (``test_replication_faults.py``) and the soak
(``benchmarks/resilience_soak.py``) feed it, ``test_checker.py`` tests it.

Every value a scenario produces is unique (``<tag>-<seq>``, ``seq`` counting up per producer
and partition), so a value names one send. The inputs:

- ``acked``: value -> (partition, offset) for each send whose delivery report said success;
- ``failed``: values whose delivery report said failure (the client gave up on them);
- ``reads``: a list of reads, each (source, partition, [(offset, key, value), ...]); a
  source is a consumer read-back or one replica's log files.

The counts (Jepsen's and Kafka's ``replication_test`` vocabulary):

- LOST: acknowledged, read by no read;
- DUPLICATED: one value at two offsets (of one partition or two);
- REORDERED: within one read of a partition, a producer's sequence numbers not increasing
  with the offset (an idempotent producer's retries must keep its order);
- INCONSISTENT: two different values at one (partition, offset) across reads, or a value read
  at an offset other than the one its acknowledgement gave;
- FAILED_BUT_READ: a send reported failed whose value was read anyway. (Kafka allows this for
  a produce that timed out after the leader appended it: a timed-out request is not a
  failure, only an unknown; the scenarios count a failure only when the client was told an
  error, so the count must be zero.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

Record = tuple[int, bytes | None, bytes | None]          # offset, key, value
Read = tuple[str, int, list[Record]]                     # source, partition, records

KINDS = ("lost", "duplicated", "reordered", "inconsistent", "failed_but_read")


def split_value(value: bytes) -> tuple[str, int] | None:
    """``b"<tag>-<seq>"`` -> (tag, seq); None for a value not in that form."""
    tag, sep, seq = value.rpartition(b"-")
    if not sep or not seq.isdigit():
        return None
    return tag.decode(errors="replace"), int(seq)


@dataclass
class Report:
    """The counts and a few examples of each (for the failure message)."""

    acked: int = 0
    read: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    examples: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KINDS})

    def add(self, kind: str, example: str) -> None:
        self.counts[kind] += 1
        if len(self.examples[kind]) < 5:
            self.examples[kind].append(example)

    @property
    def ok(self) -> bool:
        return not any(self.counts.values())

    def __str__(self) -> str:
        counts = " ".join(f"{k.upper()}={v}" for k, v in self.counts.items())
        text = f"acked={self.acked} read={self.read} {counts}"
        for kind, examples in self.examples.items():
            if examples:
                text += f"\n  {kind}: " + "; ".join(examples)
        return text


def check(acked: Mapping[bytes, tuple[int, int]], failed: Iterable[bytes],
          reads: Iterable[Read]) -> Report:
    """Count what went wrong; see the module docstring."""
    report = Report(acked=len(acked))
    at: dict[tuple[int, int], tuple[bytes | None, str]] = {}      # (p, offset) -> value, source
    where: dict[bytes, set[tuple[int, int]]] = {}                 # value -> {(p, offset)}
    for source, partition, records in reads:
        last_seq: dict[str, tuple[int, int]] = {}                 # tag -> (seq, offset)
        for offset, _key, value in records:
            key = (partition, offset)
            seen = at.get(key)
            if seen is None:
                at[key] = (value, source)
            elif seen[0] != value:
                report.add("inconsistent", f"p{partition}@{offset}: {seen[0]!r} in {seen[1]}, "
                                           f"{value!r} in {source}")
            if value is None:
                continue
            where.setdefault(value, set()).add(key)
            parsed = split_value(value)
            if parsed is not None:
                tag, seq = parsed
                prev = last_seq.get(tag)
                # An equal sequence is a duplicate (counted below); only a step back is disorder.
                if prev is not None and seq < prev[0]:
                    report.add("reordered", f"{source} p{partition}: {tag}-{prev[0]}@{prev[1]} "
                                            f"before {tag}-{seq}@{offset}")
                elif prev is None or seq > prev[0]:
                    last_seq[tag] = (seq, offset)
    report.read = len(where)
    for value, places in where.items():
        if len(places) > 1:
            report.add("duplicated", f"{value!r} at {sorted(places)}")
    for value, (partition, offset) in acked.items():
        places = where.get(value)
        if not places:
            report.add("lost", f"{value!r} acked at p{partition}@{offset}")
        elif (partition, offset) not in places:
            report.add("inconsistent", f"{value!r} acked at p{partition}@{offset}, read at "
                                       f"{sorted(places)}")
    for value in failed:
        if value in where:
            report.add("failed_but_read", f"{value!r} failed, read at {sorted(where[value])}")
    return report


# ------------------------------------------------------------------------ transactions

TXN_KINDS = ("lost", "duplicated", "reordered", "aborted_read", "partial", "hanging")


@dataclass
class Txn:
    """One transaction a transactional producer ran: its values and what it was told.
    ``outcome`` is "committed" (commit_transaction returned), "aborted" (abort_transaction
    returned) or "unknown" (neither: the producer failed or was replaced half-way; Kafka
    then commits it or aborts it, all or nothing)."""

    number: int
    values: list[bytes]
    outcome: str = "unknown"


def check_transactions(txns: Iterable[Txn], reads: Iterable[Read],
                       hanging: Iterable[str] = ()) -> Report:
    """What a read_committed consumer read against what the producer was told.

    LOST: a value of a committed transaction not read; DUPLICATED: a value read twice;
    REORDERED: within a partition, a transaction read after a later one (one producer runs
    its transactions one after another); ABORTED_READ: a value of an aborted transaction
    read; PARTIAL: a transaction of which some values were read but not all (atomicity);
    HANGING: a partition whose last stable offset never reached its high watermark (an open
    transaction nobody finishes), as given by the caller.
    """
    report = Report(counts=dict.fromkeys(TXN_KINDS, 0),
                    examples={k: [] for k in TXN_KINDS})
    by_value: dict[bytes, Txn] = {}
    for txn in txns:
        report.acked += len(txn.values) if txn.outcome == "committed" else 0
        for value in txn.values:
            by_value[value] = txn
    seen: dict[bytes, list[tuple[int, int]]] = {}
    for source, partition, records in reads:
        last: tuple[int, int] | None = None                  # (txn number, offset)
        for offset, _key, value in records:
            if value is None:
                continue
            seen.setdefault(value, []).append((partition, offset))
            txn = by_value.get(value)
            if txn is None:
                continue
            if last is not None and txn.number < last[0]:
                report.add("reordered", f"{source} p{partition}: txn {last[0]}@{last[1]} "
                                        f"before txn {txn.number}@{offset}")
            else:
                last = (txn.number, offset)
    report.read = len(seen)
    for value, places in seen.items():
        if len(places) > 1:
            report.add("duplicated", f"{value!r} at {sorted(places)}")
    done: set[int] = set()
    for txn in by_value.values():
        if txn.number in done:
            continue
        done.add(txn.number)
        read = [v for v in txn.values if v in seen]
        if txn.outcome == "aborted" and read:
            report.add("aborted_read", f"txn {txn.number}: {len(read)} of "
                                       f"{len(txn.values)} read")
        if txn.outcome == "committed":
            for value in txn.values:
                if value not in seen:
                    report.add("lost", f"txn {txn.number} (committed): {value!r}")
        elif 0 < len(read) < len(txn.values):
            report.add("partial", f"txn {txn.number} ({txn.outcome}): {len(read)} of "
                                  f"{len(txn.values)} read")
    for what in hanging:
        report.add("hanging", what)
    return report


# ----------------------------------------------------------------------- consumer groups

GROUP_KINDS = ("lost", "rewound", "skipped")


@dataclass
class GroupHistory:
    """What the consumers of one group did, in order, told by the consumers themselves:
    ``consumed(p, offset)`` for every record handed over, ``committed(p, next)`` when a
    synchronous commit of ``next`` succeeded, ``attempted(p, next)`` before every commit.

    A reposition (a record whose offset is not the previous one plus one, e.g. after a
    rebalance or a new consumer) must land at or after the last committed offset (else a
    commit the coordinator acknowledged was lost: REWOUND) and at or before the highest
    attempted one (else records were skipped: SKIPPED; they also count LOST if nobody read
    them)."""

    position: dict[int, int] = field(default_factory=dict)
    committed_at: dict[int, int] = field(default_factory=dict)
    attempted_at: dict[int, int] = field(default_factory=dict)
    read: set[tuple[int, int]] = field(default_factory=set)
    report: Report = field(default_factory=lambda: Report(
        counts=dict.fromkeys(GROUP_KINDS, 0), examples={k: [] for k in GROUP_KINDS}))

    def consumed(self, partition: int, offset: int, who: str) -> None:
        expected = self.position.get(partition)
        if expected is None or offset != expected:
            low = self.committed_at.get(partition, 0)
            high = max(self.attempted_at.get(partition, 0), expected or 0)
            if offset < low:
                self.report.add("rewound", f"{who} p{partition}: at {offset}, committed "
                                           f"{low} (acknowledged)")
            elif offset > high:
                self.report.add("skipped", f"{who} p{partition}: at {offset}, committed at "
                                           f"most {high}")
        self.position[partition] = offset + 1
        self.read.add((partition, offset))

    def attempted(self, partition: int, offset: int) -> None:
        self.attempted_at[partition] = max(offset, self.attempted_at.get(partition, 0))

    def committed(self, partition: int, offset: int) -> None:
        self.committed_at[partition] = max(offset, self.committed_at.get(partition, 0))

    def finish(self, produced: Iterable[tuple[int, int]]) -> Report:
        """Count the produced (partition, offset)s no consumer read."""
        produced = set(produced)
        self.report.acked = len(produced)
        self.report.read = len(self.read)
        for p, offset in sorted(produced - self.read):
            self.report.add("lost", f"p{p}@{offset} never consumed")
        return self.report
