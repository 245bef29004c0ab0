"""Replicas: which log directory's copy of a partition a read uses, and up to where.

A read is given one log directory or several (``load([dir1, dir2, ...])``: the ``log.dirs``
of several brokers of a cluster, a broker possibly having more than one). A partition folder
``<topic>-<partition>`` found in several of them is a set of replicas of one partition, and
exactly one is read. The rule, per partition:

1. Each replica's high watermark (HW) is the entry of its own log directory's
   ``replication-offset-checkpoint``. A replica without an entry has HW 0, as Kafka's (and
   kafkapy's) LogManager loads it: every broker checkpoints the HW of every log it holds,
   leader or follower, so a missing entry means the log was created after the last
   checkpoint of that directory, and nothing of it is known to be committed. The HW is
   then raised to the replica's log start offset, as Kafka does when it loads a log (a
   replica whose start moved past a stale checkpoint has nothing below its start to read).
2. The replica with the highest HW is read, up to that HW and never past it (nor past the
   last stable offset rebuilt from that replica's files, for read_committed). Below the HW
   every in-sync replica holds the same records at the same offsets (that is what the HW
   means), so the most advanced replica's HW bounds what a consumer of the partition may
   see as of the checkpoints, and reading its copy returns each committed record once.
   Records a replica holds beyond its HW are not read: acks=all writes the followers have
   not yet fetched, or a deposed leader's tail that the new leader does not have and that
   the old one will truncate when it follows again. A follower's HW is the leader's as of
   its last fetch (never above it) and a deposed leader's HW only counted records every ISR
   member had, so no replica's checkpointed HW is beyond committed data (unclean leader
   election aside, where Kafka itself loses committed records).
3. Ties (equal HW): the replica with the lowest log start offset (retention runs on each
   replica on its own; the one that kept more reads more), then the first in the order the
   directories were given. The log start offset and the segments are the chosen replica's:
   planning (splits at segment bases, timestamps, the ``.txnindex`` of aborted
   transactions) and the read all use that one folder.

A single directory (one broker, no replication) is the one-replica case: its own checkpointed
HW, as before. A replica that is behind (a stopped broker, a follower out of the ISR) is
simply not chosen, neither shortening nor duplicating the result.

The choice is made again at every planning (each batch read, each micro-batch), from the
checkpoints on disk then: a stream may read one micro-batch from one broker's copy and the
next from another's, which is the same records (the max HW over the replicas only grows,
as the brokers' checkpoints do).

Plain functions on the files (``_logdir``); nothing is written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkapy.common.topic_partition import TopicPartition
from pyspark_kafkapy import _logdir

__all__ = ["Replica", "choose", "holders", "log_dirs"]


@dataclass(frozen=True)
class Replica:
    """One log directory's copy of a partition: its folder, segment bases, log start offset
    and checkpointed high watermark (0 without an entry, raised to the log start)."""

    tp: TopicPartition
    log_dir: Path
    directory: Path
    segments: list[int]
    earliest: int
    high_watermark: int


def log_dirs(dirs: Sequence[str]) -> list[Path]:
    """The directories to read, each checked, a directory named twice (the same folder by
    another spelling or a symlink) kept once. Raises ValueError for one that is not a
    directory."""
    out: dict[str, Path] = {}
    for d in dirs:
        path = Path(d)
        if not path.is_dir():
            raise ValueError(f"{path} is not a directory (kafkapy-log reads a broker's "
                             f"log.dirs)")
        out.setdefault(os.path.realpath(path), path)
    return list(out.values())


def holders(dirs: Iterable[Path]) -> dict[TopicPartition, list[Path]]:
    """Every partition found, with the log directories holding a folder of it, in order."""
    out: dict[TopicPartition, list[Path]] = {}
    for d in dirs:
        for tp in _logdir.list_partitions(d):
            out.setdefault(tp, []).append(d)
    return dict(sorted(out.items()))


class _Checkpoints:
    """Each log directory's HW and log start checkpoints, read once per planning."""

    def __init__(self) -> None:
        self._hws: dict[Path, dict[TopicPartition, int]] = {}
        self._starts: dict[Path, dict[TopicPartition, int]] = {}

    def high_watermark(self, d: Path, tp: TopicPartition) -> int:
        if d not in self._hws:
            self._hws[d] = _logdir.high_watermarks(d)
        return self._hws[d].get(tp, 0)

    def log_start(self, d: Path, tp: TopicPartition) -> int | None:
        if d not in self._starts:
            self._starts[d] = _logdir.log_start_offsets(d)
        return self._starts[d].get(tp)


def _replica(tp: TopicPartition, d: Path, checkpoints: _Checkpoints) -> Replica:
    pdir = _logdir.partition_dir(d, tp)
    segments = _logdir.list_segments(pdir)
    earliest = _logdir.earliest_offset(segments, checkpoints.log_start(d, tp))
    hw = max(checkpoints.high_watermark(d, tp), earliest)
    return Replica(tp, d, pdir, segments, earliest, hw)


def choose(placement: dict[TopicPartition, list[Path]], tps: Iterable[TopicPartition]
           ) -> dict[TopicPartition, Replica]:
    """The replica to read of each of ``tps`` (each held by at least one directory of
    ``placement``), by the rule of the module doc."""
    checkpoints = _Checkpoints()
    out = {}
    for tp in tps:
        replicas = [_replica(tp, d, checkpoints) for d in placement[tp]]
        # max() keeps the first of equals: the order the directories were given.
        out[tp] = max(replicas, key=lambda r: (r.high_watermark, -r.earliest))
    return out
