"""Model-based test of the Log: a hypothesis state machine drives a real Log in a temporary
directory and a plain in-memory model side by side, and compares them after every step.

The model is the list of batches the log should hold on disk (their exact bytes, built here
with ``build_batch`` and given offsets by ``assign_offsets``, and their records as plain
tuples), the offsets (log start, log end, high watermark, recovery point), the leader epoch
list, the segment base offsets and the segments waiting for deletion. Segment rolls on append
are the one thing the model does not predict: it takes the layout the log chose and checks
that the roll was allowed (and forced when the segment was full). Everything else, including
which segments retention deletes, is predicted and compared exactly.

Rules: appends (1-3 batches of 1-5 records, some compressed, some refused as too large, leader
epochs kept, bumped or absent), reads (any start around the range, byte limits, the high
watermark or another bound, with and without min_one_message), timestamp lookups (ordinary and
special), roll, high watermark, DeleteRecords, truncation (batch boundaries, mid-batch, below
the log start), retention passes with the clock moving, removal of ``.deleted`` files, flush,
and clean and unclean restarts (an unclean one from any recovery point at or below the real
one: nothing was lost, so everything must come back).

After every step: the offsets and the leader epoch list match; the segment files hold exactly
the model's batches (byte for byte, CRC-valid, each segment starting at its base offset, only
the last one may be empty, none over ``segment.bytes``); the offset and time indexes point at
real batches and the time index holds running maxima; each segment's maximum timestamp is the
true one; the directory holds exactly the live and ``.deleted`` files expected (20-digit
names); a read from the log start offset returns exactly the model's records.

A failure prints the steps (and a reproduce blob); regressions it found are plain tests at the
end of the file.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, Phase, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from kafkapy.errors import MessageTooLargeError, OffsetOutOfRangeError, RecordListTooLargeError
from kafkapy.log.checkpoints import EpochEntry
from kafkapy.log.config import LogConfig
from kafkapy.log.index import NO_TIMESTAMP, TimestampOffset
from kafkapy.log.log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    Log,
)
from kafkapy.log.segment import LogSegment
from kafkapy.protocol.records import assign_offsets, build_batch, scan_batches

START_MS = 1_700_000_000_000
DEFAULT_SEGMENT_MS = 604800000

RecordTuple = tuple[int, int, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]


@attrs.frozen
class MBatch:
    """One batch as the log must store it: its final bytes and its records."""

    base: int
    records: tuple[RecordTuple, ...]
    data: bytes
    epoch: int      # partitionLeaderEpoch, -1 for none

    @property
    def last(self) -> int:
        return self.base + len(self.records) - 1

    @property
    def next(self) -> int:
        return self.last + 1

    @property
    def max_ts(self) -> int:
        return max(r[1] for r in self.records)

    @property
    def size(self) -> int:
        return len(self.data)


def _record_tuples(buf: bytes) -> list[RecordTuple]:
    scan = scan_batches(buf, verify_crc=True)
    assert scan.error is None, scan.error
    return [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers))
            for b in scan.batches for r in b.records()]


configs = st.builds(
    LogConfig,
    segment_bytes=st.integers(300, 3000),
    index_interval_bytes=st.sampled_from([0, 0, 100]) | st.integers(0, 200),
    # 64 bytes: 8 offset entries, 5 time entries; so "index full" rolls happen.
    segment_index_bytes=st.sampled_from([64, 64, 80, 100]) | st.integers(64, 400),
    segment_ms=st.sampled_from([DEFAULT_SEGMENT_MS, 100_000, 20_000]),
    retention_ms=st.sampled_from([-1, 0, 30_000, 120_000, 600_000]),
    retention_bytes=st.sampled_from([-1, -1, 0, 500, 2000, 6000]),
    file_delete_delay_ms=st.sampled_from([0, 0, 1_000, 60_000]),
    max_message_bytes=st.sampled_from([1048588, 1048588, 400]),
    cleanup_policy=st.sampled_from([("delete",), ("delete",), ("compact",),
                                    ("compact", "delete")]),
)

headers = st.lists(st.tuples(st.text(max_size=3), st.none() | st.binary(max_size=4)),
                   max_size=2).map(tuple)
# (key, value, headers, timestamp relative to the clock)
record_specs = st.tuples(st.none() | st.binary(max_size=8), st.none() | st.binary(max_size=60),
                         headers, st.integers(-150_000, 150_000))
epoch_choices = st.sampled_from(["same", "same", "bump", "none"])
batch_specs = st.tuples(st.lists(record_specs, min_size=1, max_size=5),
                        st.sampled_from([0, 0, 0, 0, 0, 1, 2, 3, 4]))


class LogMachine(RuleBasedStateMachine):
    """A real Log next to the model (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="kafkapy-log-model-"))
        self.dir = self.root / "topic-0"
        self.log: Log | None = None

    # ------------------------------------------------------------------ setup and helpers

    @initialize(config=configs)
    def open_log(self, config: LogConfig) -> None:
        self.config = config
        self.now = START_MS
        self.batches: list[MBatch] = []    # every batch still on disk, in offset order
        self.lso = self.leo = self.hw = self.rp = 0
        self.epoch = 0
        self.stamped = False
        self.epochs: list[tuple[int, int]] = []
        self.bases = [0]
        self.pending: list[tuple[int, int]] = []     # (due ms, base) of .deleted segments
        self.log = self._open(clean=True, recovery_point=0)

    def _reopen(self, *, clean: bool, recovery_point: int) -> None:
        self.pending = []       # .deleted files: removed by close, or by the load
        self.log = None
        self.log = self._open(clean=clean, recovery_point=recovery_point)
        # Kafka's LogLoader: recovery re-assigns the epochs of the batches it walks (from the
        # segment holding the recovery point on), then the list is cut to [log start, log
        # end): an entry starting at the end (DeleteRecords or retention moved it to a log
        # start equal to the end) holds no record and goes.
        if not clean:
            first = max(i for i, base in enumerate(self.bases)
                        if base <= recovery_point or i == 0)
            for b in self.batches:
                if b.base >= self.bases[first]:
                    self._assign_epoch(b.epoch, b.base)
        # The start cut first, so that an entry it moves up to a log start equal to the end
        # goes with the end cut, as the comment above says.
        self._epochs_from_start(self.lso)
        self.epochs = [e for e in self.epochs if e[1] < self.leo]
        self.rp = self.leo if clean else min(recovery_point, self.leo)

    def _open(self, *, clean: bool, recovery_point: int) -> Log:
        return Log.open(self.dir, self.config, recovery_point=recovery_point,
                        log_start_offset=self.lso, high_watermark=self.hw,
                        had_clean_shutdown=clean, clock=lambda: self.now)

    def teardown(self) -> None:
        if self.log is not None:
            self.log.close_unclean()
        shutil.rmtree(self.root, ignore_errors=True)

    def _batch_at(self, offset: int) -> int:
        """Index of the first model batch whose last offset is >= ``offset``."""
        for i, b in enumerate(self.batches):
            if b.last >= offset:
                return i
        return len(self.batches)

    def _segment_batches(self) -> list[list[MBatch]]:
        """The model's batches split by the segment bases."""
        out: list[list[MBatch]] = [[] for _ in self.bases]
        for b in self.batches:
            i = max(i for i, base in enumerate(self.bases) if base <= b.base)
            out[i].append(b)
        return out

    def _set_lso(self, lso: int) -> None:
        if lso > self.lso:
            self.lso = lso
            self._epochs_from_start(lso)

    def _epochs_from_start(self, lso: int) -> None:
        """Kafka's truncateFromStart: the entry covering ``lso`` now starts there."""
        covering = [e for e in self.epochs if e[1] <= lso]
        self.epochs = ([(covering[-1][0], lso)] if covering else []) + \
            [e for e in self.epochs if e[1] > lso]

    def _assign_epoch(self, epoch: int, start: int) -> None:
        """Kafka's assign: a newer epoch replaces the entries starting at or after it."""
        if epoch >= 0 and (not self.epochs or epoch > self.epochs[-1][0]):
            self.epochs = [e for e in self.epochs if e[1] < start] + [(epoch, start)]

    def _delete_later(self, base: int) -> None:
        self.pending.append((self.now + self.config.file_delete_delay_ms, base))

    def _expect_read(self, start: int, max_bytes: int, bound: int, min_one: bool) -> bytes:
        whole = [b.data for b in self.batches[self._batch_at(start):] if b.last < bound]
        if min_one and whole and len(whole[0]) > max_bytes:
            return whole[0]
        return b"".join(whole)[:max_bytes]

    # -------------------------------------------------------------------------- appends

    @rule(specs=st.lists(batch_specs, min_size=1, max_size=3), epoch=epoch_choices)
    def append(self, specs: list, epoch: str) -> None:
        self._append(specs, epoch)

    @rule(appends=st.lists(st.tuples(st.lists(batch_specs, min_size=1, max_size=3),
                                     epoch_choices), min_size=2, max_size=8),
          advance=st.sampled_from([0, 0, 1_000, 25_000]))
    def append_many(self, appends: list, advance: int) -> None:
        """Several produce requests, the clock moving between them: grows the log quickly."""
        for specs, epoch in appends:
            self._append(specs, epoch)
            self.now += advance

    def _append(self, specs: list, epoch: str) -> None:
        assert self.log is not None
        if epoch == "bump":
            self.epoch += 1
        if epoch == "none" and self.stamped:
            # A leader stamps every batch once it has an epoch (Kafka's appendAsLeader). Batches
            # with no epoch after stamped ones leave the epoch of their offsets undefined:
            # after a crash the cache rebuilt from the batches and the one from an unflushed
            # checkpoint can then both be right and still differ, so the model does not go there.
            epoch = "same"
        self.stamped = self.stamped or epoch != "none"
        leader_epoch = -1 if epoch == "none" else self.epoch
        built = []
        for recs, compression in specs:
            # A compacted log's leader refuses keyless records (KIP-467,
            # tests/log/test_log_validator.py): the model gives them an empty key there.
            rows = [(b"" if k is None and self.config.compact else k, v, list(h),
                     max(0, self.now + d)) for k, v, h, d in recs]
            built.append((rows, build_batch(rows, compression=compression)))
        buf = bytearray(b"".join(data for _rows, data in built))
        sizes = [len(data) for _rows, data in built]
        if max(sizes) > self.config.max_message_bytes:
            with pytest.raises(MessageTooLargeError):
                self.log.append_as_leader(buf, leader_epoch)
            return
        if sum(sizes) > self.config.segment_bytes:
            with pytest.raises(RecordListTooLargeError):
                self.log.append_as_leader(buf, leader_epoch)
            return

        expected = bytearray(buf)
        assign_offsets(expected, self.leo,
                       partition_leader_epoch=leader_epoch if leader_epoch >= 0 else None)
        new: list[MBatch] = []
        pos, offset = 0, self.leo
        for (rows, _data), size in zip(built, sizes, strict=True):
            recs = tuple((offset + i, ts, k, v, tuple(h)) for i, (k, v, h, ts) in enumerate(rows))
            new.append(MBatch(offset, recs, bytes(expected[pos:pos + size]), leader_epoch))
            pos += size
            offset += len(rows)
        # assign_offsets is the log's own code: check its output independently.
        assert _record_tuples(expected) == [r for b in new for r in b.records]

        active = self.log.active_segment
        before = (active.base_offset, active.size, active.offset_index.entries,
                  active.offset_index.max_entries, active.time_index.entries,
                  active.time_index.max_entries)
        info = self.log.append_as_leader(buf, leader_epoch)

        first = self.leo
        assert (info.first_offset, info.last_offset) == (first, new[-1].last)
        assert (info.batches, info.records, info.valid_bytes) == \
            (len(new), sum(len(b.records) for b in new), sum(sizes))
        assert info.log_start_offset == self.lso

        # The roll decision (Kafka's shouldRoll), against the state before the append.
        _base, size, o_entries, o_max, t_entries, t_max = before
        bases_now = [s.base_offset for s in self.log.segments]
        rolled = bases_now != self.bases or self.log.active_segment is not active
        seg_batches = self._segment_batches()[-1]
        size_rule = size > self.config.segment_bytes - sum(sizes)
        # Kafka: the append's largest timestamp against the segment's first batch's
        time_rule = bool(seg_batches) and \
            max(b.max_ts for b in new) - seg_batches[0].max_ts > self.config.segment_ms
        index_rule = o_entries + len(new) > o_max or t_entries + len(new) > t_max
        if size_rule or time_rule or index_rule:
            assert rolled, (size_rule, time_rule, index_rule)
        if rolled:
            assert size_rule or time_rule or index_rule
            event("append rolled: " + "+".join(
                name for name, hit in (("size", size_rule), ("time", time_rule),
                                       ("index", index_rule)) if hit))
            if size == 0:    # an empty active segment is replaced at the same base
                assert bases_now == self.bases
            else:
                assert bases_now == [*self.bases, first]
        else:
            assert bases_now == self.bases
        self.bases = bases_now

        self.batches.extend(new)
        self.leo = new[-1].next
        self._assign_epoch(leader_epoch, first)

    # ----------------------------------------------------------------------------- reads

    @rule(data=st.data())
    def read(self, data: st.DataObject) -> None:
        assert self.log is not None
        boundaries = [b.base for b in self.batches if b.base >= self.lso]
        start = data.draw(st.sampled_from([self.lso, *boundaries]) |
                          st.integers(max(0, self.lso - 3), self.leo + 3), label="start")
        max_bytes = data.draw(st.sampled_from([0, 1, 60, 200, 500, 1500, 10**6]) |
                              st.integers(0, 3000), label="max_bytes")
        kind = data.draw(st.sampled_from(["none", "hw", "offset"]), label="max_offset kind")
        max_offset = None if kind == "none" else self.hw if kind == "hw" else \
            data.draw(st.integers(self.lso, self.leo + 1), label="max_offset")
        min_one = data.draw(st.booleans(), label="min_one_message")
        if start < self.lso or start > self.leo:
            with pytest.raises(OffsetOutOfRangeError):
                self.log.read(start, max_bytes, max_offset, min_one)
            return
        fetched = self.log.read(start, max_bytes, max_offset, min_one)
        bound = self.leo if max_offset is None else min(max_offset, self.leo)
        got = fetched.read()
        assert got == self._expect_read(start, max_bytes, bound, min_one)
        assert fetched.size == len(got)
        assert (fetched.log_start_offset, fetched.log_end_offset, fetched.high_watermark) == \
            (self.lso, self.leo, self.hw)
        # What a client decodes: the whole batches (a cut trailing one is dropped).
        scan = scan_batches(got, verify_crc=True)
        assert scan.error is None or scan.truncated, scan.error
        event(f"read: {len(scan.batches) if len(scan.batches) < 3 else 'many'} batches"
              f"{', cut tail' if scan.truncated else ''}")
        first = self._batch_at(start)
        want = self.batches[first:first + len(scan.batches)]
        assert [r for b in want for r in b.records] == \
            [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers))
             for b in scan.batches for r in b.records()]

    @rule(data=st.data())
    def fetch_offset_by_timestamp(self, data: st.DataObject) -> None:
        assert self.log is not None
        stamps = [r[1] for b in self.batches for r in b.records]
        choices = [st.sampled_from([EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP,
                                    LATEST_TIMESTAMP, MAX_TIMESTAMP]),
                   st.integers(0, self.now + 200_000)]
        if stamps:
            choices.append(st.builds(lambda t, d: max(0, t + d), st.sampled_from(stamps),
                                     st.sampled_from([-1, 0, 0, 1])))
            # the records around the log start (those just below it must not be answered)
            near = self._batch_at(self.lso)
            around = [r[1] for b in self.batches[max(0, near - 1):near + 2] for r in b.records]
            if around:
                choices.append(st.sampled_from(around))
        t = data.draw(st.one_of(choices), label="timestamp")
        held = self.batches[self._batch_at(self.lso):self._batch_at(self.lso) + 1]
        if held and held[0].base < self.lso:
            event("fetch by timestamp: log start mid-batch")
        got = self.log.fetch_offset_by_timestamp(t)
        if t in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            assert got == TimestampOffset(NO_TIMESTAMP, self.lso)
        elif t == LATEST_TIMESTAMP:
            assert got == TimestampOffset(NO_TIMESTAMP, self.leo)
        elif t == MAX_TIMESTAMP:
            # Kafka's rule: the segment with the largest timestamp among those reaching the
            # log start offset (records of that segment below the start count), and in it the
            # first record with that timestamp.
            recs = [r for seg in self._segment_batches() if seg and seg[-1].last >= self.lso
                    for b in seg for r in b.records]
            if not recs:
                assert got is None
            else:
                top = max(r[1] for r in recs)
                r = next(r for r in recs if r[1] == top)
                assert got == TimestampOffset(top, r[0])
        else:
            want = next((TimestampOffset(r[1], r[0]) for b in self.batches for r in b.records
                         if r[0] >= self.lso and r[1] >= t), None)
            assert got == want

    # ----------------------------------------------------------------- offsets, truncation

    @rule()
    def roll(self) -> None:
        assert self.log is not None
        active = self.log.active_segment
        self.log.roll()
        if active.size:
            self.bases.append(self.leo)

    @rule(data=st.data())
    def update_high_watermark(self, data: st.DataObject) -> None:
        assert self.log is not None
        offset = data.draw(st.just(self.leo) | st.integers(0, self.leo + 2),
                           label="high watermark")
        self.hw = min(max(offset, self.lso), self.leo)
        assert self.log.update_high_watermark(offset) == self.hw

    @rule(data=st.data())
    def delete_records(self, data: st.DataObject) -> None:
        assert self.log is not None
        offset = data.draw(st.integers(self.lso, self.hw) | st.integers(0, self.leo + 2),
                           label="delete records to")
        if offset > self.hw:
            with pytest.raises(OffsetOutOfRangeError):
                self.log.delete_records(offset)
            return
        self._set_lso(offset)
        assert self.log.delete_records(offset) == self.lso

    @rule(data=st.data())
    def truncate_to(self, data: st.DataObject) -> None:
        assert self.log is not None
        boundaries = [b.base for b in self.batches]
        target = data.draw(st.integers(0, self.leo + 2) |
                           st.sampled_from([self.lso, self.leo, *boundaries]) |
                           st.integers(0, max(self.lso - 1, 0)), label="truncate to")
        changed = self.log.truncate_to(target)
        if target >= self.leo:
            assert not changed
            # Kafka's truncateTo cuts the epoch cache at the end even so: an entry starting
            # there (retention or DeleteRecords moved it up to a log start equal to the end)
            # holds no record.
            self.epochs = [e for e in self.epochs if e[1] < self.leo]
            return
        assert changed
        event("truncate: full" if target < self.lso else "truncate: partial")
        if target < self.lso:
            for base in self.bases:
                self._delete_later(base)
            self.bases = [target]
            self.batches = []
            self.lso = self.leo = self.hw = self.rp = target
            self.epochs = []
            return
        for base in [b for b in self.bases if b > target]:
            self._delete_later(base)
        self.bases = [b for b in self.bases if b <= target]
        keep = self._batch_at(target)
        self.leo = self.batches[keep].base
        if self.leo < self.lso:
            event("truncate: below the log start")
        self.batches = self.batches[:keep]
        self.lso = min(self.lso, self.leo)     # the batch holding the start went whole
        self.hw = min(self.hw, self.leo)
        self.rp = min(self.rp, self.leo)
        self.epochs = [e for e in self.epochs if e[1] < self.leo]

    # ------------------------------------------------------------------------- retention

    @rule(advance=st.sampled_from([0, 1, 1_000, 30_001, 120_001, 600_001]),
          hw_to_end=st.booleans())
    def delete_old_segments(self, advance: int, hw_to_end: bool) -> None:
        assert self.log is not None
        self.now += advance
        if hw_to_end:   # the usual case: replication caught up
            self.hw = self.log.update_high_watermark(self.leo)
        segs = [{"base": base, "size": sum(b.size for b in bs),
                 "max_ts": max((b.max_ts for b in bs), default=NO_TIMESTAMP)}
                for base, bs in zip(self.bases, self._segment_batches(), strict=True)]
        deleted: list[int] = []

        def sweep(pred) -> None:     # Kafka's deleteOldSegments loop, oldest first
            doomed = []
            for i, seg in enumerate(segs):
                nxt = segs[i + 1] if i + 1 < len(segs) else None
                upper = nxt["base"] if nxt else self.leo
                if (nxt is None and seg["size"] == 0) or self.hw < upper or \
                        not pred(seg, nxt):
                    break
                doomed.append(seg)
            if not doomed:
                return
            if len(doomed) == len(segs):
                segs.append({"base": self.leo, "size": 0, "max_ts": NO_TIMESTAMP})
            for seg in doomed:
                segs.remove(seg)
                deleted.append(seg["base"])
            self._set_lso(segs[0]["base"])

        lso = self.lso
        sweep(lambda seg, nxt: nxt is not None and nxt["base"] <= lso)
        if self.config.delete:
            if self.config.retention_ms >= 0:
                sweep(lambda seg, nxt: self.now - seg["max_ts"] > self.config.retention_ms)
            if self.config.retention_bytes >= 0:
                excess = [sum(s["size"] for s in segs) - self.config.retention_bytes]

                def over(seg: dict, nxt: object) -> bool:
                    if excess[0] - seg["size"] >= 0:
                        excess[0] -= seg["size"]
                        return True
                    return False
                sweep(over)

        old_lso = self.log.log_start_offset
        assert self.log.delete_old_segments() == len(deleted)
        event(f"retention deleted {min(len(deleted), 3)} segments")
        assert self.log.log_start_offset >= old_lso
        for base in deleted:
            self._delete_later(base)
        self.bases = [s["base"] for s in segs]
        # nothing at or above the high watermark is ever deleted
        assert all(b.next <= self.hw for b in self.batches if b.base < self.bases[0])
        self.batches = [b for b in self.batches if b.base >= self.bases[0]]

    @rule(advance=st.sampled_from([0, 999, 1_000, 60_000]))
    def remove_deleted_segments(self, advance: int) -> None:
        assert self.log is not None
        self.now += advance
        due = [p for p in self.pending if p[0] <= self.now]
        self.pending = [p for p in self.pending if p[0] > self.now]
        assert self.log.remove_deleted_segments() == len(due)

    # --------------------------------------------------------------------- flush, restart

    @rule(data=st.data())
    def flush(self, data: st.DataObject) -> None:
        assert self.log is not None
        upto = data.draw(st.none() | st.integers(0, self.leo + 2), label="flush upto")
        self.log.flush(upto)
        self.rp = max(self.rp, self.leo if upto is None else min(upto, self.leo))

    @rule()
    def restart_clean(self) -> None:
        assert self.log is not None
        rp = self.log.recovery_point
        self.log.close()
        self._reopen(clean=True, recovery_point=rp)

    @rule(data=st.data())
    def restart_unclean(self, data: st.DataObject) -> None:
        # The process did not really die: every byte reached the files, so recovery from any
        # recovery point must give back exactly the same log.
        assert self.log is not None
        rp = data.draw(st.integers(0, self.log.recovery_point), label="recovery point")
        self.log.close_unclean()
        self._reopen(clean=False, recovery_point=rp)

    # ------------------------------------------------------------------------ invariants

    @invariant()
    def offsets_match(self) -> None:
        if self.log is None:
            return
        log = self.log
        assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == \
            (self.lso, self.leo, self.hw)
        assert log.recovery_point == self.rp
        assert self.lso <= self.hw <= self.leo
        assert [(e.epoch, e.start_offset) for e in log.epochs.entries] == self.epochs
        assert log.epochs.entries == [EpochEntry(*e) for e in self.epochs]

    @invariant()
    def segments_match(self) -> None:
        if self.log is None:
            return
        log = self.log
        assert [s.base_offset for s in log.segments] == self.bases
        assert log._bases == self.bases
        assert self.bases == sorted(set(self.bases))
        assert self.bases[0] <= self.lso
        per_segment = self._segment_batches()
        for i, (seg, bs) in enumerate(zip(log.segments, per_segment, strict=True)):
            assert seg.path.name == f"{seg.base_offset:020d}.log"
            assert bs or i == len(log.segments) - 1, "only the active segment may be empty"
            if bs:
                assert bs[0].base == seg.base_offset
            if i + 1 < len(log.segments):
                assert seg.next_offset <= log.segments[i + 1].base_offset
            _check_segment(seg, bs, self.config)
        assert log.size == sum(b.size for b in self.batches)
        # consecutive offsets, no gaps, ending at the LEO
        for a, b in zip(self.batches, self.batches[1:], strict=False):
            assert a.next == b.base
        if self.batches:
            assert self.batches[-1].next == self.leo

    @invariant()
    def directory_matches(self) -> None:
        if self.log is None:
            return
        names = {p.name for p in self.dir.iterdir()}
        want = {f"{b:020d}{suffix}" for b in self.bases
                for suffix in (".log", ".index", ".timeindex")}
        want |= {f"{b:020d}{suffix}.deleted" for _due, b in self.pending
                 for suffix in (".log", ".index", ".timeindex")}
        # Producer-state snapshots (Kafka's, written at rolls and clean closes) are named by
        # an offset the log reached; the producer-state tests check their contents.
        snapshots = {n for n in names if n.endswith(".snapshot")}
        assert all(int(n[:20]) <= self.leo for n in snapshots), (snapshots, self.leo)
        assert names - {"leader-epoch-checkpoint"} - snapshots == want

    @invariant()
    def read_all(self) -> None:
        if self.log is None:
            return
        fetched = self.log.read(self.lso, 10**9)
        got = fetched.read()
        assert got == b"".join(b.data for b in self.batches[self._batch_at(self.lso):])
        for hw_bound in (self.hw,):
            assert self.log.read(self.lso, 10**9, hw_bound).read() == \
                self._expect_read(self.lso, 10**9, hw_bound, True)


def _check_segment(seg: LogSegment, batches: list[MBatch], config: LogConfig) -> None:
    """The segment's file holds exactly ``batches``; its indexes and maxima agree with them."""
    data = seg.read_bytes(0, seg.size)
    assert data == b"".join(b.data for b in batches)
    assert seg.size <= config.segment_bytes
    assert seg.next_offset == (batches[-1].next if batches else seg.base_offset)
    positions, pos = {}, 0
    for b in batches:
        positions[pos] = b
        pos += b.size
    # Offset index: (last offset of a batch, its position), offsets strictly rising.
    oidx = seg.offset_index
    entries = [oidx.entry(i) for i in range(oidx.entries)]
    assert [e.offset for e in entries] == sorted({e.offset for e in entries})
    for e in entries:
        assert e.position in positions, e
        assert positions[e.position].last == e.offset, e
    # Time index: running maxima, strictly rising, each at the last offset of the first batch
    # that reached it.
    tidx = seg.time_index
    tentries = [tidx.entry(i) for i in range(tidx.entries)]
    assert [e.timestamp for e in tentries] == sorted({e.timestamp for e in tentries})
    running = NO_TIMESTAMP
    firsts = {}
    for b in batches:
        if b.max_ts > running:
            running = b.max_ts
            firsts[b.last] = running
    for e in tentries:
        assert firsts.get(e.offset) == e.timestamp, (e, firsts)
    if batches:
        top = max(b.max_ts for b in batches)
        assert seg.max_timestamp == top
        assert seg.offset_of_max_timestamp == next(b.last for b in batches if b.max_ts == top)
    else:
        assert seg.max_timestamp == NO_TIMESTAMP


LogMachine.TestCase.settings = settings(
    max_examples=70,
    stateful_step_count=40,
    deadline=None,
    database=None,
    print_blob=True,
    # no explain phase: it traces every line and makes a failing run take minutes
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TestLogModel = LogMachine.TestCase


# ------------------------------------------------------- regressions found by the machine


def _clock() -> int:
    return START_MS


def test_roll_age_counts_from_the_first_batch(tmp_path: Path) -> None:
    """segment.ms counts from the segment's first batch's max timestamp (Kafka's
    rollingBasedTimestamp), the same whether the segment was just written or reloaded. The
    segment used to take the largest timestamp of its first append (two batches here) until a
    restart re-read the first batch."""
    config = LogConfig(segment_ms=20_000)
    for restart in (False, True):
        d = tmp_path / f"t-{int(restart)}"
        log = Log.open(d, config, clock=_clock)
        log.append_as_leader(build_batch([(None, b"a", None, START_MS)]) +
                             build_batch([(None, b"b", None, START_MS + 30_000)]))
        if restart:
            log.close()
            log = Log.open(d, config, had_clean_shutdown=True, clock=_clock)
        log.append_as_leader(build_batch([(None, b"c", None, START_MS + 25_000)]))
        assert [s.base_offset for s in log.segments] == [0, 2], restart
        log.close()


def test_truncate_inside_the_batch_holding_the_log_start(tmp_path: Path) -> None:
    """DeleteRecords leaves the log start mid-batch; a truncation to an offset of that batch
    drops the batch whole, and the log start comes down to the new end (it used to stay past
    it, so a read from the log start was out of range and a restart wiped the log)."""
    log = Log.open(tmp_path / "t-0", LogConfig(), clock=_clock)
    log.append_as_leader(build_batch([(None, b"%d" % i, None, START_MS) for i in range(5)]))
    log.update_high_watermark(5)
    log.delete_records(3)
    assert log.truncate_to(4)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (0, 0, 0)
    assert log.read(log.log_start_offset, 1000).read() == b""
    assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP) == TimestampOffset(NO_TIMESTAMP, 0)
    log.append_as_leader(build_batch([(None, b"x", None, START_MS)]))
    assert _record_tuples(log.read(0, 1000).read()) == [(0, START_MS, None, b"x", ())]
