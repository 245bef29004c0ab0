"""LeaderEpochCache: which leader epoch wrote which offsets of one partition.

Kafka's LeaderEpochFileCache: an ordered list of (epoch, start offset), epochs strictly rising
and start offsets non-decreasing, persisted in the partition's ``leader-epoch-checkpoint``
(kafkapy.log.checkpoints). The log adds an entry when a batch carries a newer epoch than the
last one, and trims the list when it truncates (from the end) or moves its start (from the
start). ``end_offset_for`` answers OffsetsForLeaderEpoch for followers.

Changes are kept in memory and written by ``flush`` (atomically): the log calls it after an
append that changed the epoch, after truncation and on close, so a crash leaves either the
old or the new list; recovery drops the entries from its first segment on and rebuilds them
from the batches, so a checkpoint that missed a truncation is corrected.
"""

from __future__ import annotations

from pathlib import Path

from kafkapy.log.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    EpochEntry,
    read_leader_epochs,
    write_leader_epochs,
)

__all__ = ["LeaderEpochCache"]


class LeaderEpochCache:
    def __init__(self, partition_dir: Path) -> None:
        self.path = partition_dir / LEADER_EPOCH_CHECKPOINT
        self.entries: list[EpochEntry] = read_leader_epochs(self.path)
        self.dirty = False

    @property
    def latest_epoch(self) -> int:
        return self.entries[-1].epoch if self.entries else -1

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset`` if it is newer than the latest."""
        if epoch < 0 or epoch <= self.latest_epoch:
            return
        # An epoch that starts below the previous one's start replaces those entries (a
        # follower that truncated and refetched).
        while self.entries and self.entries[-1].start_offset >= start_offset:
            self.entries.pop()
        self.entries.append(EpochEntry(epoch, start_offset))
        self.dirty = True

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop every entry starting at or after ``end_offset`` (log truncated there)."""
        keep = [e for e in self.entries if e.start_offset < end_offset]
        if len(keep) != len(self.entries):
            self.entries = keep
            self.dirty = True

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at ``start_offset``: entries wholly before it go, and the one
        covering it is moved up to start there."""
        covering = None
        rest = []
        for e in self.entries:
            if e.start_offset <= start_offset:
                covering = e
            else:
                rest.append(e)
        new = ([EpochEntry(covering.epoch, start_offset)] if covering else []) + rest
        if new != self.entries:
            self.entries = new
            self.dirty = True

    def clear(self) -> None:
        if self.entries:
            self.entries = []
            self.dirty = True

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """Kafka's endOffsetFor: for the latest epoch, (it, the LEO); else (the largest epoch
        <= ``epoch``, the start of the first epoch above it), and when ``epoch`` is older
        than every entry, (``epoch``, the first entry's start: the data before is gone);
        (-1, -1) for -1, for an epoch newer than the latest, or without entries."""
        if epoch < 0 or not self.entries:
            return (-1, -1)
        if epoch == self.latest_epoch:
            return (epoch, log_end_offset)
        floor = None
        for e in self.entries:
            if e.epoch > epoch:
                return (epoch if floor is None else floor.epoch, e.start_offset)
            floor = e
        return (-1, -1)

    def flush(self) -> None:
        if self.dirty:
            write_leader_epochs(self.path, self.entries)
            self.dirty = False
