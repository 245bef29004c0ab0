"""Log: one partition's log, a sorted run of segments in ``<log dir>/<topic>-<partition>/``.

Kafka's UnifiedLog and LocalLog in one class, without tiered storage. It owns:

- the offsets: log start offset (first readable), log end offset (LEO, next to assign), high
  watermark (set by the partition; reads for consumers stop there; retention never deletes
  past it) and recovery point (everything below it is fsynced);
- appends: ``append_as_leader`` checks every batch (framing and CRC-32C in compiled code, size
  against ``max.message.bytes``, record count), assigns offsets by rewriting baseOffset (and
  the timestamp for LogAppendTime) in place, rolls if needed and appends;
  ``append_as_follower`` takes batches that already carry offsets and refuses offsets that
  go backwards. A refused append touches nothing already stored.
- reads (``read``): file slices for ``os.sendfile``, from a batch boundary;
- ``fetch_offset_by_timestamp`` for ListOffsets, ``truncate_to`` /
  ``truncate_fully_and_start_at`` for followers, ``delete_records`` for DeleteRecords;
- segment roll (size, age, full index, relative-offset overflow) and retention by time, size
  and log start offset; deleted segments are renamed ``.deleted`` and removed
  ``file.delete.delay.ms`` later (``remove_deleted_segments``);
- flushing as FlushJobs: ``begin_flush`` (event loop) collects duplicated descriptors,
  ``FlushJob.run`` fsyncs them (a worker thread), ``end_flush`` (event loop) advances the
  recovery point. The flush policy (``flush.messages``, ``flush.ms``) is reported by
  ``flush_due``; kafkapy.log.log_manager runs the jobs off the event loop.
- loading and recovery (``Log.open``): see ``_load``;
- replica moves between log dirs (AlterReplicaLogDirs): a *future* log lives in
  ``<topic>-<partition>.<id>-future`` (``is_future``) and is filled with
  ``append_as_follower``; ``truncated_below`` tells its copier how far this log was truncated
  since it last looked; ``take_over_from`` gives a caught-up future log the current one's log
  start, high watermark, epochs and producer state; ``rename_dir`` renames an open log;
- the producer state (kafkapy.log.producer_state): idempotent producers' sequences and epochs
  checked on every client append that carries a producer id (a duplicate batch is answered
  with its first offsets and not appended again), open transactions and the last stable
  offset (LSO), transaction markers completing them, aborted transactions indexed in the
  segments' ``.txnindex`` files for read_committed fetches; a ``.snapshot`` on every roll and
  on clean close, and after a crash the state is the latest snapshot plus the batches after it.

Threading: every method is for the one thread that owns the log (the broker's event loop),
except ``FlushJob.run``. No method blocks on fsync but ``close``, whose caller flushes first:
a new log's ``partition.metadata`` and a changed leader-epoch checkpoint are written by the
next flush job.
"""

from __future__ import annotations

import bisect
import logging
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import attrs

from kafkapy._log import append_as_leader as compiled_append_as_leader
from kafkapy._log import log_append
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    CorruptMessageError,
    InvalidRecordError,
    KafkaStorageError,
    OffsetOutOfRangeError,
    RecordListTooLargeError,
)
from kafkapy.log.checkpoints import (
    PARTITION_METADATA_FILE,
    EpochEntry,
    read_partition_metadata,
    write_leader_epochs,
    write_partition_metadata,
)
from kafkapy.log.config import LONG_MAX, LogConfig
from kafkapy.log.index import NO_TIMESTAMP, TimestampOffset
from kafkapy.log.leader_epoch import LeaderEpochCache
from kafkapy.log.producer_state import (
    AppendOrigin,
    CompletedTxn,
    ProducerAppendInfo,
    ProducerStateManager,
)
from kafkapy.log.segment import DELETED_SUFFIX, FileSlice, LogSegment, offset_from_file_name
from kafkapy.log.transaction_index import AbortedTxn
from kafkapy.protocol.records import BatchHeader, scan_batches

__all__ = [
    "EARLIEST_LOCAL_TIMESTAMP",
    "EARLIEST_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "MAX_TIMESTAMP",
    "FetchData",
    "FlushJob",
    "Log",
    "LogAppendInfo",
    "UnexpectedAppendOffsetError",
    "future_dir_name",
    "parse_log_dir_name",
    "parse_topic_partition",
]

logger = logging.getLogger("kafkapy.log")

Buffer = bytes | bytearray | memoryview

# ListOffsets' special timestamps.
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
MAX_DIR_NAME_LENGTH = 255        # the longest file name of common file systems (ext4, xfs)


class UnexpectedAppendOffsetError(InvalidRecordError):
    """A follower append whose offsets go backwards (below the log end offset, or within the
    appended batches). Kafka's UnexpectedAppendOffsetException / OffsetsOutOfOrderException."""


def parse_topic_partition(name: str) -> TopicPartition:
    """``my-topic-3`` -> TopicPartition("my-topic", 3) (the partition is after the last '-')."""
    topic, sep, partition = name.rpartition("-")
    if not sep or not topic or not partition.isdigit():
        raise ValueError(f"{name!r} is not a <topic>-<partition> directory name")
    return TopicPartition(topic, int(partition))


def parse_log_dir_name(name: str) -> tuple[TopicPartition, str]:
    """A log's directory name -> (partition, kind): kind is "" for ``<topic>-<partition>``,
    "-future" / "-delete" for Kafka's ``<topic>-<partition>.<32 hex digits><suffix>`` (a
    future log of AlterReplicaLogDirs, a log awaiting removal). Raises ValueError otherwise."""
    for suffix in (FUTURE_DIR_SUFFIX, DELETE_DIR_SUFFIX):
        if name.endswith(suffix):
            base, dot, unique = name[: -len(suffix)].rpartition(".")
            if not dot or len(unique) != 32 or not all(c in "0123456789abcdef"
                                                       for c in unique):
                raise ValueError(f"{name!r} is not a <topic>-<partition>.<id>{suffix} name")
            return parse_topic_partition(base), suffix
    return parse_topic_partition(name), ""


def future_dir_name(tp: TopicPartition) -> str:
    """Kafka's ``UnifiedLog.logFutureDirName``: ``<topic>-<partition>.<uuid hex>-future``."""
    return f"{tp}.{uuid.uuid4().hex}{FUTURE_DIR_SUFFIX}"


def delete_dir_name(tp: TopicPartition) -> str:
    """Kafka's ``LocalLog.logDeleteDirName``: ``<topic>-<partition>.<uuid hex>-delete``, the
    topic cut short so that the name stays within 255 characters (a topic name may have 249,
    and file systems refuse longer names)."""
    suffix = f"-{tp.partition}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"
    return tp.topic[:MAX_DIR_NAME_LENGTH - len(suffix)] + suffix


def _now_ms() -> int:
    return int(time.time() * 1000)


class LogAppendInfo(NamedTuple):
    """What an append did. Offsets are -1 when nothing was appended (empty input).

    A named tuple, not an attrs class: one is made per append, and a frozen attrs class's
    ``__init__`` (an ``object.__setattr__`` per field) costs three times as much."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int        # -1 unless the topic uses LogAppendTime
    log_start_offset: int
    batches: int
    records: int
    valid_bytes: int
    duplicate: bool = False     # an idempotent producer's retry: answered, not appended


@attrs.frozen
class FetchData:
    """A read: ``slices`` in order, each from a batch boundary; the last may end mid-batch
    when ``max_bytes`` cut it (clients drop a partial trailing batch, as with Kafka)."""

    start_offset: int
    slices: list[FileSlice]
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    size: int                   # of all the slices (a fetch asks several times)
    aborted_transactions: list[AbortedTxn] | None = None   # read_committed reads only

    def read(self) -> bytes:
        return b"".join(s.read() for s in self.slices)


@attrs.define
class FlushJob:
    """fsyncs prepared on the event loop, run anywhere (a worker thread), finished by
    ``Log.end_flush``. Holds duplicated descriptors, so segments may close meanwhile."""

    upto: int
    fds: list[int]
    epochs: tuple[Path, list[EpochEntry]] | None = None   # a leader-epoch-checkpoint to write
    # A partition.metadata to write (the log's directory and topic id), before the fsyncs:
    # Kafka has it on disk before the log data it flushes.
    partition_metadata: tuple[Path, uuid.UUID] | None = None
    ran: bool = False
    # The epoch checkpoint's (or partition.metadata's) directory was gone when the job wrote
    # it: the log was deleted or renamed meanwhile (``Log.end_flush`` decides which).
    epochs_missed: FileNotFoundError | None = None
    metadata_missed: FileNotFoundError | None = None

    @property
    def empty(self) -> bool:
        """Nothing to fsync or write: the caller need not hand it to a thread."""
        return not self.fds and self.epochs is None and self.partition_metadata is None

    def run(self) -> None:
        """The fsyncs (and the epoch checkpoint and partition.metadata); cheap when ``empty``,
        so callers may run an empty job inline instead of handing it to a thread."""
        try:
            if self.partition_metadata is not None:
                try:
                    write_partition_metadata(*self.partition_metadata)
                except FileNotFoundError as e:
                    self.metadata_missed = e
            for fd in self.fds:
                os.fsync(fd)
            if self.epochs is not None:
                try:
                    write_leader_epochs(*self.epochs)
                except FileNotFoundError as e:
                    self.epochs_missed = e
        finally:
            for fd in self.fds:
                os.close(fd)
            self.fds = []
        self.ran = True


class Log:
    """One partition's log. Use ``Log.open``."""

    def __init__(self, directory: Path, config: LogConfig,
                 clock: Callable[[], int] = _now_ms,
                 producer_id_expiration_ms: int = 86400000) -> None:
        self.dir = Path(directory)
        self.topic_partition, kind = parse_log_dir_name(self.dir.name)
        # A future log (AlterReplicaLogDirs) until it replaces the current one.
        self.is_future = kind == FUTURE_DIR_SUFFIX
        self.config = config
        self.clock = clock
        self.segments: list[LogSegment] = []
        self._bases: list[int] = []
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.high_watermark = 0
        self.recovery_point = 0
        self.last_flush_ms = clock()
        self.epochs = LeaderEpochCache(self.dir)
        self.producer_state = ProducerStateManager(self.topic_partition, self.dir,
                                                   producer_id_expiration_ms, clock)
        self._pending_deletes: list[tuple[int, LogSegment]] = []
        self._dir_dirty = False     # a file was created or renamed since the last flush
        # The topic id, when Log.open was given one (else see LogManager.topic_id_of), and
        # whether partition.metadata is still to be written with it: by the next flush job
        # (a worker thread), as Kafka's PartitionMetadataFile is flushed by its scheduler,
        # so that creating thousands of partitions does not wait on the disk.
        self.topic_id: uuid.UUID | None = None
        self._partition_metadata_unsynced = False
        self._partition_metadata_on_disk = False    # the file was there when loaded
        self._unsynced_snapshots: list[Path] = []
        # The lowest offset this log was truncated to since its future copy (a replica
        # move) last looked: the copy must drop what it holds from there on.
        self.truncated_below: int | None = None
        self.closed = False

    # =============================================================== opening and recovery

    @classmethod
    def open(cls, directory: Path, config: LogConfig, *, recovery_point: int = 0,
             log_start_offset: int = 0, high_watermark: int = 0,
             had_clean_shutdown: bool = False, topic_id: uuid.UUID | None = None,
             clock: Callable[[], int] = _now_ms,
             producer_id_expiration_ms: int = 86400000) -> Log:
        """Open (creating if needed) the log in ``directory`` and bring it to a consistent
        state: after an unclean shutdown, every segment from the one holding
        ``recovery_point`` on is recovered (see ``_load``)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        log = cls(directory, config, clock, producer_id_expiration_ms)
        if topic_id is not None:
            log.topic_id = topic_id
            log._partition_metadata_unsynced = read_partition_metadata(directory) != topic_id
        log._load(recovery_point, log_start_offset, high_watermark, had_clean_shutdown)
        return log

    def assign_topic_id(self, topic_id: uuid.UUID) -> None:
        """Kafka's assignTopicId, for a log loaded without a ``partition.metadata`` (created
        just before a crash, before a flush job wrote it): the id is kept and the file
        written by the next flush job. A log with the file keeps what the file says."""
        if self.topic_id is None and not self._partition_metadata_on_disk:
            self.topic_id = topic_id
            self._partition_metadata_unsynced = True

    def _load(self, recovery_point: int, log_start_offset: int, high_watermark: int,
              clean: bool) -> None:
        """Kafka's LogLoader.

        1. Remove ``.cleaned`` and ``.deleted`` leftovers; complete ``.swap`` replacements.
        2. Open every segment. Indexes that are missing or fail their sanity check are
           rebuilt; after a clean shutdown the rest are trusted. (Stricter than Kafka, which
           skips the check: every index is read once here; all are unmapped at the end of
           the load, to be mapped again on first use.)
        3. Unclean: recover each segment from the one holding the recovery point on (CRC
           checks, index rebuild); at the first invalid or partial batch the segment is
           truncated there and every later segment deleted.
        4. LEO = the end of the last valid batch; the leader epoch cache is cut to
           [log start, LEO]; the high watermark is clamped into that range.
        5. The producer state: the latest snapshot at or below the LEO (after a crash: at or
           below the first recovered segment), then the batches after it replayed; the
           recovered segments' ``.txnindex`` files are rebuilt by that replay.
        """
        d = self.dir
        # One listing of the directory serves every step (a broker loads thousands of logs).
        names = os.listdir(d)
        for name in names:
            if name.endswith(DELETED_SUFFIX) or name.endswith(CLEANED_SUFFIX):
                (d / name).unlink(missing_ok=True)
        if any(name.endswith(".log" + SWAP_SUFFIX) for name in names):
            self._complete_swaps()
            names = os.listdir(d)
        present = set(names)
        self._partition_metadata_on_disk = PARTITION_METADATA_FILE in present
        bases = sorted(offset_from_file_name(name) for name in names
                       if name.endswith(".log") and name[:20].isdigit())
        missing_index = []
        for i, base in enumerate(bases):
            idx_missing = f"{base:020d}.index" not in present or \
                f"{base:020d}.timeindex" not in present
            seg = LogSegment.open(d, base, self.config, active=i == len(bases) - 1)
            self._add_segment(seg)
            if idx_missing and seg.size:
                missing_index.append(seg)
        for seg in missing_index:
            logger.info("%s: rebuilding the missing indexes of %s", self.topic_partition,
                        seg.path.name)
            self._recover_segment(seg)
        needs_recovery: list[LogSegment] = []
        bad_txn_index: list[LogSegment] = []
        if not clean and self.segments:
            first = max(0, bisect.bisect_right(self._bases, recovery_point) - 1)
            needs_recovery = self.segments[first:]
        for seg in self.segments:
            if seg in needs_recovery:
                continue
            try:
                seg.offset_index.sanity_check(seg.size)
                seg.time_index.sanity_check()
                seg.restore_state()
            except (KafkaStorageError, CorruptMessageError) as e:
                logger.warning("%s: %s; rebuilding the segment's indexes",
                               self.topic_partition, e)
                # Kafka's recoverSegment: this segment alone (truncated at its first invalid
                # batch, if any); later segments are not deleted for it.
                self._recover_segment(seg)
            try:
                seg.txn_index.sanity_check()
            except KafkaStorageError as e:
                logger.warning("%s: %s; rebuilding the segment's transaction index",
                               self.topic_partition, e)
                bad_txn_index.append(seg)      # rebuilt by the producer-state replay
        recovered_from = None
        if bad_txn_index:
            # Rebuilt by the producer-state replay from that segment on.
            recovered_from = min(s.base_offset for s in bad_txn_index)
        if needs_recovery:
            first = min(s.base_offset for s in needs_recovery)
            recovered_from = first if recovered_from is None else min(recovered_from, first)
            self._recover(sorted(needs_recovery, key=lambda s: s.base_offset))
        if not self.segments:
            self._add_segment(LogSegment.open(d, log_start_offset, self.config, active=True,
                                              create=True, now_ms=self.clock()))
        self.log_end_offset = self.segments[-1].next_offset
        self.log_start_offset = max(log_start_offset, self.segments[0].base_offset)
        if self.log_start_offset > self.log_end_offset:
            # The checkpointed start is past everything on disk (DeleteRecords beyond data
            # that was then lost): start afresh there, as Kafka does.
            self.truncate_fully_and_start_at(self.log_start_offset)
        self.recovery_point = min(recovery_point, self.log_end_offset)
        if clean:
            self.recovery_point = self.log_end_offset
        self.high_watermark = min(max(high_watermark, self.log_start_offset),
                                  self.log_end_offset)
        # From the start first: an entry the start moved up to the log end (retention or
        # DeleteRecords emptied the log) holds no record and then goes with the end cut,
        # whether or not the checkpoint on disk had seen the move.
        self.epochs.truncate_from_start(self.log_start_offset)
        self.epochs.truncate_from_end(self.log_end_offset)
        self.epochs.flush()
        self._load_producer_state(recovered_from)
        # Loaded and checked: every index, the active segment's too, is mapped again on its
        # first use (Kafka's LazyIndex), so an idle partition holds no mapping and no
        # touched index page (8 KiB of RSS a partition otherwise).
        for seg in self.segments:
            seg.unmap_indexes()

    def _load_producer_state(self, recovered_from: int | None = None) -> None:
        """Kafka's loadProducerState: the latest usable snapshot, then the batches after it.
        ``recovered_from``: the first recovered segment's base offset; the state is rebuilt
        from a snapshot at or below it so that the replay sees every transaction marker of
        the recovered segments, whose ``.txnindex`` files it rebuilds."""
        state = self.producer_state
        end = self.log_end_offset if recovered_from is None else \
            min(recovered_from, self.log_end_offset)
        state.truncate_and_reload(self.log_start_offset, end)
        rebuilt = [s for s in self.segments
                   if recovered_from is not None and s.base_offset >= recovered_from]
        for seg in rebuilt:
            seg.txn_index.reset()
        self._replay(state.map_end_offset, set(rebuilt))
        state.update_map_end_offset(self.log_end_offset)

    def _replay(self, start: int, index_into: set[LogSegment]) -> None:
        """Apply the batches from ``start`` to the LEO to the producer state (no checks);
        aborted transactions whose marker is in a segment of ``index_into`` are indexed."""
        state = self.producer_state
        if start >= self.log_end_offset:
            return
        first = max(0, bisect.bisect_right(self._bases, start) - 1)
        for seg in self.segments[first:]:
            loc = seg.translate_offset(start) if seg.base_offset < start else None
            position = loc.position if loc is not None else 0
            batches = (b for b in seg.batches(position) if b.last_offset >= start)
            state.apply_batches(batches, on_complete=seg.update_txn_index
                                if seg in index_into else None)

    def _complete_swaps(self) -> None:
        """A ``.swap`` segment is a finished compaction output that was about to replace the
        segments it covers: finish the replacement."""
        for swap in sorted(self.dir.glob("*.log" + SWAP_SUFFIX)):
            base = offset_from_file_name(swap.name)
            final = swap.with_name(swap.name[: -len(SWAP_SUFFIX)])
            data = swap.read_bytes()
            scan = scan_batches(data, verify_crc=False)
            end = scan.batches[-1].next_offset if scan.batches else base
            for p in list(self.dir.glob("*.log")):
                b = offset_from_file_name(p.name)
                if base <= b < end and p != final:
                    for suffix in (".log", ".index", ".timeindex", ".txnindex"):
                        (self.dir / f"{b:020d}{suffix}").unlink(missing_ok=True)
            for suffix in (".index", ".timeindex", ".txnindex"):
                (self.dir / f"{base:020d}{suffix}").unlink(missing_ok=True)
                (self.dir / f"{base:020d}{suffix}{SWAP_SUFFIX}").unlink(missing_ok=True)
            os.replace(swap, final)

    def _recover(self, segments: list[LogSegment]) -> None:
        total_bytes = sum(s.size for s in segments)
        started = time.monotonic()
        last_report = started
        done_bytes = 0
        logger.info("%s: recovering %d segment(s), %.1f MB, after an unclean shutdown",
                    self.topic_partition, len(segments), total_bytes / 1e6)
        # The batches are the truth for the recovered range: the epoch checkpoint on disk
        # may predate a truncation (it is written by the flush job, not by truncate_to), so
        # its entries from the first recovered segment on are rebuilt from the batches.
        self.epochs.truncate_from_end(segments[0].base_offset)
        for i, seg in enumerate(segments):
            if seg not in self.segments:
                continue
            # Kafka's LogLoader line, one per segment, so a long recovery shows where it is
            logger.info("Recovering unflushed segment %d. %d/%d recovered for %s.",
                        seg.base_offset, i, len(segments), self.topic_partition)
            size = seg.size
            cut = self._recover_segment(seg)
            done_bytes += size
            now = time.monotonic()
            if now - last_report >= 1.0 or i == len(segments) - 1:
                elapsed = max(now - started, 1e-9)
                logger.info("%s: recovered %d/%d segments, %.1f of %.1f MB, %.0f MB/s",
                            self.topic_partition, i + 1, len(segments), done_bytes / 1e6,
                            total_bytes / 1e6, done_bytes / 1e6 / elapsed)
                last_report = now
            if cut:
                later = [s for s in self.segments if s.base_offset > seg.base_offset]
                if later:
                    logger.warning("%s: deleting %d segment(s) after the truncation point",
                                   self.topic_partition, len(later))
                for s in later:
                    self._remove_segment(s)
                    s.delete_files()
                if later:
                    # The truncated segment is the active one now: its indexes were trimmed as
                    # an inactive segment's; make them appendable (Kafka resizes the active
                    # segment's indexes after recovery).
                    seg.make_active()
                break

    def _recover_segment(self, seg: LogSegment) -> int:
        cut, result = seg.recover()
        if cut:
            logger.warning("%s: %s: truncated %d bytes at byte %d: %s",
                           self.topic_partition, seg.path.name, cut, seg.size, result.reason)
        for epoch, offset in result.epochs:
            self.epochs.assign(epoch, offset)
        if seg is not self.segments[-1]:
            seg.on_become_inactive()
        return cut

    def _add_segment(self, seg: LogSegment) -> None:
        i = bisect.bisect_left(self._bases, seg.base_offset)
        self._bases.insert(i, seg.base_offset)
        self.segments.insert(i, seg)

    def _remove_segment(self, seg: LogSegment) -> None:
        i = self.segments.index(seg)
        del self.segments[i]
        del self._bases[i]

    # ============================================================================ appends

    @property
    def active_segment(self) -> LogSegment:
        return self.segments[-1]

    def _check_total(self, size: int) -> None:
        if size > self.config.segment_bytes:
            raise RecordListTooLargeError(
                f"{self.topic_partition}: {size} bytes of batches exceed segment.bytes "
                f"{self.config.segment_bytes}")

    def append_as_leader(self, records: Buffer, leader_epoch: int = -1,
                         origin: AppendOrigin = AppendOrigin.CLIENT) -> LogAppendInfo:
        """Append a client's (or coordinator's) batches, assigning offsets from the LEO.

        One compiled pass checks every batch as Kafka's leader does (framing, magic 2,
        CRC-32C, ``max.message.bytes``, record count) and assigns offsets in place (and the
        leader epoch, and the timestamp for LogAppendTime). ``records`` is changed in place
        if writable, else copied. Raises CorruptMessageError (bad CRC, length or framing),
        UnsupportedForMessageFormatError (magic != 2), MessageTooLargeError,
        RecordListTooLargeError, InvalidRecordError, RecordValidationError (particular records
        refused: no key on a compacted topic, a CreateTime timestamp outside
        ``message.timestamp.before/after.max.ms``, LogAppendTime set by the producer; see
        :mod:`kafkapy.log.log_validator`), KafkaStorageError, and for batches
        with a producer id the producer state's errors (OutOfOrderSequenceNumberError,
        InvalidProducerEpochError, InvalidTxnStateError, TransactionCoordinatorFencedError);
        in every case nothing is appended. ``origin`` COORDINATOR: transaction markers and
        coordinators' own records (no sequence checks; control batches allowed).
        """
        return compiled_append_as_leader(self, records, leader_epoch, origin)

    def _append_with_producer_state(self, buf: Buffer, first: int, last: int, batches: int,
                                    records: int, size: int, max_timestamp: int,
                                    append_time: int | None, now: int,
                                    origin: AppendOrigin) -> LogAppendInfo:
        """Kafka's analyzeAndValidateProducerState, per batch (never per record): checks
        every batch carrying a producer id against that producer's state before anything is
        written; a client's retry of one of the producer's last five batches is answered with
        the original offsets and nothing is appended."""
        state = self.producer_state
        batch_list = scan_batches(buf, verify_crc=False).batches
        if origin is AppendOrigin.CLIENT and len(batch_list) == 1 and \
                state.follows_in_sequence(batch_list[0]):
            # The common case (one idempotent batch, next in sequence) without an append info.
            result = self._append(buf, first, last, batches, records, size, max_timestamp,
                                  -1 if append_time is None else append_time, now)
            state.record_in_sequence(batch_list[0])
            state.update_map_end_offset(self.log_end_offset)
            return result
        updates: dict[int, ProducerAppendInfo] = {}
        completed: list[CompletedTxn] = []
        for batch in batch_list:
            pid = batch.producer_id
            if origin is AppendOrigin.CLIENT:
                if batch.is_control:
                    raise InvalidRecordError(f"{self.topic_partition}: clients may not write "
                                             f"control batches")
                if pid >= 0 and batch.base_sequence < 0:
                    raise InvalidRecordError(
                        f"{self.topic_partition}: invalid sequence number "
                        f"{batch.base_sequence} in a batch of producer id {pid}")
            if pid < 0:
                if batch.is_transactional or batch.is_control:
                    raise InvalidRecordError(f"{self.topic_partition}: a transactional or "
                                             f"control batch without a producer id")
                continue
            if origin is AppendOrigin.CLIENT:
                entry = state.last_entry(pid)
                dup = entry.find_duplicate_batch(batch) if entry is not None else None
                if dup is not None:
                    return LogAppendInfo(dup.first_offset, dup.last_offset, dup.timestamp,
                                         dup.last_offset, -1, self.log_start_offset, 0, 0, 0,
                                         duplicate=True)
            info = updates.get(pid)
            if info is None:
                info = updates[pid] = state.prepare_update(pid, origin)
            txn = info.append(batch)
            if txn is not None:
                completed.append(txn)
        result = self._append(buf, first, last, batches, records, size, max_timestamp,
                              -1 if append_time is None else append_time, now)
        for info in updates.values():
            state.update(info)
        for txn in completed:
            # The marker is in the active segment: its aborted transactions are indexed there
            # (Kafka's LogSegment.updateTxnIndex), with the LSO once the transaction is done.
            self.active_segment.update_txn_index(txn, state.last_stable_offset(txn))
            state.complete_txn(txn)
        state.update_map_end_offset(self.log_end_offset)
        return result

    def append_as_follower(self, records: Buffer) -> LogAppendInfo:
        """Append batches that carry their offsets (a replica fetch, a restore), as they
        are: no byte is rewritten; a partial batch at the end is left out.

        Raises UnexpectedAppendOffsetError if the first offset is below the LEO or offsets go
        backwards; CorruptMessageError / UnsupportedForMessageFormatError for bad batches,
        RecordListTooLargeError, KafkaStorageError. Nothing is appended then.
        """
        scan = scan_batches(records, verify_crc=True)
        if scan.error is not None and not scan.truncated:
            raise scan.error
        batches: list[BatchHeader] = scan.batches
        if not batches:
            return self._empty_append_info()
        if scan.truncated:
            # A fetch response cut by its byte limit ends in part of a batch: the next fetch
            # brings it whole.
            records = memoryview(records)[:scan.valid_bytes]
        self._check_total(scan.valid_bytes)
        expect = self.log_end_offset
        for b in batches:
            if b.base_offset < expect or b.last_offset_delta < 0:
                raise UnexpectedAppendOffsetError(
                    f"{self.topic_partition}: appended batch at offset {b.base_offset} is "
                    f"below the expected {expect}; nothing appended")
            expect = b.last_offset + 1
        info = self._append(records, batches[0].base_offset, batches[-1].last_offset,
                            len(batches), sum(b.record_count for b in batches),
                            scan.valid_bytes, max(b.max_timestamp for b in batches), -1,
                            self.clock())
        self.producer_state.apply_batches(batches,
                                          on_complete=self.active_segment.update_txn_index)
        self.producer_state.update_map_end_offset(self.log_end_offset)
        return info

    def _empty_append_info(self) -> LogAppendInfo:
        return LogAppendInfo(-1, -1, NO_TIMESTAMP, -1, -1, self.log_start_offset, 0, 0, 0)

    def _append(self, buf: Buffer, first_offset: int, last_offset: int, batches: int,
                records: int, size: int, max_timestamp: int, append_time: int,
                now: int) -> LogAppendInfo:
        """Roll if needed, append to the active segment, move the LEO, record the leader
        epochs (compiled: ``_log.log_append``)."""
        return log_append(self, buf, first_offset, last_offset, batches, records, size,
                          max_timestamp, append_time, now)

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Close the active segment for appends and start a new one at
        max(``expected_next_offset``, LEO) (Kafka's roll)."""
        new_base = max(expected_next_offset or 0, self.log_end_offset)
        active = self.active_segment
        # Kafka snapshots the producer state at every roll, named by the new segment's base:
        # after a crash only the segments from the latest snapshot on are replayed.
        self.producer_state.update_map_end_offset(new_base)
        snapshot = self.producer_state.take_snapshot(sync=False)
        if snapshot is not None:
            self._unsynced_snapshots.append(snapshot)    # fsynced by the next flush job
        if active.base_offset == new_base:
            if active.size:
                raise KafkaStorageError(f"{self.topic_partition}: cannot roll to {new_base}: "
                                        f"the active segment already starts there")
            self._remove_segment(active)
            active.delete_files()
        else:
            active.on_become_inactive()
        seg = LogSegment.open(self.dir, new_base, self.config, active=True, create=True,
                              now_ms=self.clock())
        self._add_segment(seg)
        self._dir_dirty = True
        return seg

    # ============================================================================== reads

    def read(self, start_offset: int, max_bytes: int, max_offset: int | None = None,
             min_one_message: bool = True, include_aborted_txns: bool = False) -> FetchData:
        """Up to ``max_bytes`` of batches from the one holding ``start_offset``, stopping at
        ``max_offset`` (exclusive: the high watermark or last stable offset for consumers,
        None for the LEO). With ``min_one_message`` the first batch is returned whole even if
        it is larger than ``max_bytes`` (Kafka's rule, so a consumer always progresses).
        ``include_aborted_txns`` (a read_committed consumer): the answer lists the aborted
        transactions the batches read may hold, an empty list when nothing was read (Kafka's
        LocalLog.read and emptyFetchDataInfo).

        Raises OffsetOutOfRangeError if ``start_offset`` is below the log start offset or
        above the LEO.
        """
        leo = self.log_end_offset
        if start_offset < self.log_start_offset or start_offset > leo:
            raise OffsetOutOfRangeError(
                f"{self.topic_partition}: offset {start_offset} is out of range "
                f"[{self.log_start_offset}, {leo}]")
        bound = leo if max_offset is None else min(max_offset, leo)
        slices: list[FileSlice] = []
        if start_offset >= bound:       # a caught-up reader: nothing to look up
            return FetchData(start_offset, slices, self.log_start_offset, leo,
                             self.high_watermark, 0, [] if include_aborted_txns else None)
        remaining = max_bytes
        i = max(0, bisect.bisect_right(self._bases, start_offset) - 1)
        offset = start_offset
        while offset < bound and i < len(self.segments) and (remaining > 0 or
                                                             (min_one_message and not slices)):
            seg = self.segments[i]
            max_position = None
            if bound < seg.next_offset:
                loc = seg.translate_offset(bound)
                max_position = loc.position if loc is not None else seg.size
            sl = seg.read(offset, max(remaining, 0), max_position,
                          min_one_message and not slices)
            if sl is not None and sl.size > 0:
                slices.append(sl)
                remaining -= sl.size
            i += 1
            if i < len(self.segments):
                offset = max(offset, self.segments[i].base_offset)
        aborted = None
        if include_aborted_txns:
            aborted = self.collect_aborted_transactions(
                start_offset, self.fetch_upper_bound(start_offset)) if slices else []
        return FetchData(start_offset, slices, self.log_start_offset, leo,
                         self.high_watermark, max_bytes - remaining, aborted)

    def fetch_offset_by_timestamp(self, timestamp: int) -> TimestampOffset | None:
        """ListOffsets: EARLIEST_TIMESTAMP (-2) and EARLIEST_LOCAL_TIMESTAMP (-4): the log
        start offset; LATEST_TIMESTAMP (-1): the LEO; MAX_TIMESTAMP (-3): the record with
        the largest timestamp; t >= 0: the first record with timestamp >= t at or after the
        log start offset. Timestamps in the answer are -1 for the special values but -3.
        None if no record qualifies."""
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            return TimestampOffset(NO_TIMESTAMP, self.log_start_offset)
        if timestamp == LATEST_TIMESTAMP:
            return TimestampOffset(NO_TIMESTAMP, self.log_end_offset)
        if timestamp == MAX_TIMESTAMP:
            return self._max_timestamp_offset()
        if timestamp < 0:
            raise ValueError(f"unsupported special timestamp {timestamp}")
        for seg in self.segments:
            if seg.max_timestamp >= timestamp and seg.next_offset > self.log_start_offset:
                found = seg.find_offset_by_timestamp(timestamp, self.log_start_offset)
                if found is not None:
                    return found
        return None

    def legacy_offsets_before(self, timestamp: int, max_num_offsets: int, now_ms: int
                              ) -> list[int]:
        """ListOffsets v0 (Kafka's ``legacyFetchOffsetsBefore``): candidate offsets, each
        segment's base (raised to the log start) with the segment file's last-modified
        time, plus the log end offset at ``now_ms`` when the active segment holds data;
        LATEST_TIMESTAMP starts from the last, EARLIEST_TIMESTAMP from the first, a
        timestamp from the last one modified at or before it; then up to
        ``max_num_offsets`` of them going back, in descending order."""
        candidates = [(max(seg.base_offset, self.log_start_offset),
                       os.fstat(seg.fd).st_mtime_ns // 1_000_000) for seg in self.segments]
        if self.segments and self.segments[-1].size > 0:
            candidates.append((self.log_end_offset, now_ms))
        if timestamp == LATEST_TIMESTAMP:
            start = len(candidates) - 1
        elif timestamp == EARLIEST_TIMESTAMP:
            start = 0
        else:
            start = len(candidates) - 1
            while start >= 0 and candidates[start][1] > timestamp:
                start -= 1
        count = max(0, min(max_num_offsets, start + 1))
        return sorted((candidates[start - j][0] for j in range(count)), reverse=True)

    def _max_timestamp_offset(self) -> TimestampOffset | None:
        best = None
        for seg in self.segments:
            if seg.next_offset <= self.log_start_offset:
                continue
            if best is None or seg.max_timestamp > best.max_timestamp:
                best = seg
        if best is None or best.max_timestamp == NO_TIMESTAMP:
            return None
        loc = best.translate_offset(best.offset_of_max_timestamp)
        if loc is not None:
            header = BatchHeader(best.read_bytes(loc.position, loc.size))
            for record in header.records():
                if record.timestamp == best.max_timestamp:
                    return TimestampOffset(record.timestamp, record.offset)
        return TimestampOffset(best.max_timestamp, best.offset_of_max_timestamp)

    # ======================================================================= offsets

    def update_high_watermark(self, offset: int) -> int:
        """Set the high watermark, clamped into [log start offset, LEO]; returns it."""
        self.high_watermark = min(max(offset, self.log_start_offset), self.log_end_offset)
        return self.high_watermark

    @property
    def last_stable_offset(self) -> int:
        """The LSO: the first offset of the oldest open transaction, never above the high
        watermark (the high watermark when no transaction is open)."""
        first_unstable = self.producer_state.first_unstable_offset()
        if first_unstable is None or first_unstable > self.high_watermark:
            return self.high_watermark
        return max(first_unstable, self.log_start_offset)

    def collect_aborted_transactions(self, start_offset: int, upper_bound: int
                                     ) -> list[AbortedTxn]:
        """The aborted transactions a read_committed reader of [start_offset, upper_bound)
        must drop (Kafka's collectAbortedTransactions): from the ``.txnindex`` of the segment
        holding ``start_offset`` on, until an entry's LSO passes the bound."""
        out: list[AbortedTxn] = []
        first = max(0, bisect.bisect_right(self._bases, start_offset) - 1)
        for seg in self.segments[first:]:
            found, complete = seg.collect_aborted_txns(start_offset, upper_bound)
            out.extend(found)
            if complete or seg.base_offset >= upper_bound:
                break
        return out

    def fetch_upper_bound(self, start_offset: int) -> int:
        """Kafka's bound for the aborted transactions of a read from ``start_offset``: the
        base of the segment after the one holding it, or the LEO."""
        i = bisect.bisect_right(self._bases, start_offset)
        return self._bases[i] if i < len(self._bases) else self.log_end_offset

    def delete_records(self, offset: int) -> int:
        """DeleteRecords: advance the log start offset to ``offset`` (never backwards).

        Raises OffsetOutOfRangeError if ``offset`` is above the high watermark. Segments wholly
        below the new start are deleted by the next retention pass.
        """
        if offset > self.high_watermark:
            raise OffsetOutOfRangeError(
                f"{self.topic_partition}: cannot move the log start offset to {offset}, "
                f"above the high watermark {self.high_watermark}")
        if offset > self.log_start_offset:
            self.log_start_offset = offset
            self.epochs.truncate_from_start(offset)
        return self.log_start_offset

    def truncate_to(self, target: int) -> bool:
        """Follower truncation: drop every batch holding an offset >= ``target`` (a batch
        holding ``target`` goes whole). Returns whether anything was removed."""
        if target < 0:
            raise ValueError(f"cannot truncate to a negative offset {target}")
        if target >= self.log_end_offset:
            # No batch to drop, but an epoch may start at the end: a leader that took a new
            # epoch and appended nothing before it lost the leadership. Left, the follower
            # keeps sending it as LastFetchedEpoch, the new leader keeps answering a
            # DivergingEpoch and never counts it caught up: the high watermark stalls until
            # it leaves the ISR (Kafka's UnifiedLog.truncateTo truncates the cache here too).
            self.epochs.truncate_from_end(self.log_end_offset)
            return False
        self._note_truncation(target)
        if target < self.log_start_offset:
            self.truncate_fully_and_start_at(target)
            return True
        for seg in [s for s in self.segments if s.base_offset > target]:
            self._remove_segment(seg)
            self._delete_later(seg)
        active = self.active_segment
        active.truncate_to(target, self.clock())
        active.make_active()
        self.log_end_offset = active.next_offset
        # A target inside the batch holding the log start offset (DeleteRecords can leave it
        # mid-batch) takes that whole batch: the start must not stay past the end (Kafka's
        # truncateTo lowers it too: logStartOffset = min(target, logStartOffset)).
        self.log_start_offset = min(self.log_start_offset, self.log_end_offset)
        self.high_watermark = min(self.high_watermark, self.log_end_offset)
        self.recovery_point = min(self.recovery_point, self.log_end_offset)
        self.epochs.truncate_from_end(self.log_end_offset)
        # Kafka's rebuildProducerState: a snapshot at or below the new end, then replay.
        self._load_producer_state()
        return True

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete every segment and start empty at ``offset`` (a follower far behind)."""
        self._note_truncation(min(offset, self.log_end_offset))
        for seg in list(self.segments):
            self._remove_segment(seg)
            self._delete_later(seg)
        self._add_segment(LogSegment.open(self.dir, offset, self.config, active=True,
                                          create=True, now_ms=self.clock()))
        self._dir_dirty = True
        self.log_start_offset = self.log_end_offset = offset
        self.high_watermark = self.recovery_point = offset
        self.epochs.clear()
        self.producer_state.truncate_fully_and_start_at(offset)

    def _note_truncation(self, offset: int) -> None:
        if self.truncated_below is None or offset < self.truncated_below:
            self.truncated_below = offset

    # ================================================================ replica moves

    def rename_dir(self, new_dir: Path) -> None:
        """Rename this open log's directory (Kafka's ``renameDir``): the directory, then every
        path the segments, indexes, epoch checkpoint and producer snapshots remember. Open
        descriptors and index mappings stay valid across the rename (POSIX)."""
        new_dir = Path(new_dir)
        os.rename(self.dir, new_dir)
        self.dir = new_dir
        # The partition stays (a -delete name may carry only a prefix of the topic).
        _tp, kind = parse_log_dir_name(new_dir.name)
        self.is_future = kind == FUTURE_DIR_SUFFIX
        for seg in self.segments + [seg for _due, seg in self._pending_deletes]:
            seg.directory = new_dir
            for idx in (seg.offset_index, seg.time_index):
                idx.path = new_dir / idx.path.name
            seg.txn_index.path = new_dir / seg.txn_index.path.name
        self.epochs.path = new_dir / self.epochs.path.name
        self.producer_state.move_to(new_dir)
        self._unsynced_snapshots = [new_dir / p.name for p in self._unsynced_snapshots]

    def take_over_from(self, current: Log) -> None:
        """A future log that has caught up with ``current`` (the same log end offset) takes
        over what the copied batches do not carry: the log start offset and high watermark,
        the leader epoch cache (entries whose batches were deleted before the copy), the
        producer state (producers whose batches are gone, KIP-360), snapshotted here so a
        restart finds it. Called on the event loop with appends to ``current`` held."""
        if current.log_end_offset != self.log_end_offset:
            raise ValueError(f"{self.topic_partition}: the future log ends at "
                             f"{self.log_end_offset}, the current one at "
                             f"{current.log_end_offset}")
        if current.log_start_offset > self.log_start_offset:
            self.log_start_offset = current.log_start_offset
        self.high_watermark = min(max(current.high_watermark, self.log_start_offset),
                                  self.log_end_offset)
        self.epochs.entries = list(current.epochs.entries)
        self.epochs.dirty = True
        self.producer_state.take_over_from(current.producer_state)
        snapshot = self.producer_state.take_snapshot(sync=False)
        if snapshot is not None:
            self._unsynced_snapshots.append(snapshot)

    # ===================================================================== retention

    def delete_old_segments(self) -> int:
        """One retention pass (Kafka's deleteOldSegments): segments breaching the log start
        offset, then (with ``cleanup.policy`` delete) ``retention.ms``, then
        ``retention.bytes``. Only whole segments below the high watermark go, oldest first.
        Returns how many were deleted."""
        now = self.clock()
        start = self.log_start_offset
        deleted = self._delete_segments(
            lambda seg, nxt: nxt is not None and nxt.base_offset <= start)
        if not self.config.delete:
            return deleted
        retention_ms = self.config.retention_ms
        if retention_ms >= 0:
            deleted += self._delete_segments(
                lambda seg, nxt: now - seg.largest_timestamp() > retention_ms)
        retention_bytes = self.config.retention_bytes
        if retention_bytes >= 0:
            excess = [self.size - retention_bytes]

            def over(seg: LogSegment, nxt: LogSegment | None) -> bool:
                if excess[0] - seg.size >= 0:
                    excess[0] -= seg.size
                    return True
                return False
            deleted += self._delete_segments(over)
        return deleted

    def _delete_segments(self, predicate: Callable[[LogSegment, LogSegment | None], bool]
                         ) -> int:
        doomed = []
        for i, seg in enumerate(self.segments):
            nxt = self.segments[i + 1] if i + 1 < len(self.segments) else None
            upper = nxt.base_offset if nxt is not None else self.log_end_offset
            last_and_empty = nxt is None and seg.size == 0
            if not last_and_empty and self.high_watermark >= upper and predicate(seg, nxt):
                doomed.append(seg)
            else:
                break
        if not doomed:
            return 0
        if len(doomed) == len(self.segments):
            self.roll()     # never leave the log without an active segment
        for seg in doomed:
            self._remove_segment(seg)
            self._delete_later(seg)
        if self.segments[0].base_offset > self.log_start_offset:
            self.log_start_offset = self.segments[0].base_offset
            self.epochs.truncate_from_start(self.log_start_offset)
        # Snapshots of deleted segments go, but never the latest: producers whose batches were
        # all deleted keep their state (KIP-360), as Kafka keeps it.
        latest = self.producer_state.latest_snapshot_offset()
        if latest is not None:
            self.producer_state.delete_snapshots_before(
                min(latest, self.segments[0].base_offset))
        return len(doomed)

    def _delete_later(self, seg: LogSegment) -> None:
        seg.rename_to_deleted()
        self._dir_dirty = True
        self._pending_deletes.append((self.clock() + self.config.file_delete_delay_ms, seg))

    def take_due_deletions(self, force: bool = False) -> list[LogSegment]:
        """The ``.deleted`` segments whose ``file.delete.delay.ms`` has passed, handed over for
        ``LogSegment.delete_files`` (which the log manager runs off the event loop)."""
        now = self.clock()
        due = [seg for when, seg in self._pending_deletes if force or when <= now]
        self._pending_deletes = [(when, seg) for when, seg in self._pending_deletes
                                 if not (force or when <= now)]
        return due

    def remove_deleted_segments(self, force: bool = False) -> int:
        """Remove ``.deleted`` files whose ``file.delete.delay.ms`` has passed, now."""
        due = self.take_due_deletions(force)
        for seg in due:
            seg.delete_files()
        return len(due)

    def replace_segments(self, old: list[LogSegment], cleaned: Path) -> LogSegment | None:
        """Swap compaction output in for the consecutive segments ``old`` (Kafka's
        replaceSegments): ``cleaned`` (a fsynced ``<base>.log.cleaned``) is renamed
        ``.swap``, the old segments go to ``.deleted``, the swap file becomes the segment and
        its indexes are built. A crash at any step is completed or undone by ``_load``.
        Returns None, changing nothing but removing ``cleaned``, if a segment of ``old`` is
        no longer in the log (retention or truncation got there first)."""
        if self.closed or not old or any(s not in self.segments for s in old) \
                or old[-1] is self.active_segment:
            cleaned.unlink(missing_ok=True)
            return None
        base = old[0].base_offset
        final = self.dir / f"{base:020d}.log"
        swap = final.with_name(final.name + SWAP_SUFFIX)
        os.replace(cleaned, swap)
        for seg in old:
            self._remove_segment(seg)
            self._delete_later(seg)
        os.replace(swap, final)
        seg = LogSegment.open(self.dir, base, self.config, active=False)
        seg.recover(verify_crc=False)
        seg.on_become_inactive()
        self._add_segment(seg)
        self._dir_dirty = True
        return seg

    # ========================================================================= flushing

    @property
    def unflushed_messages(self) -> int:
        return self.log_end_offset - self.recovery_point

    @property
    def flushes_on_append(self) -> bool:
        """The flush policy may fsync on the produce path (``flush.messages`` or
        ``flush.ms`` set): an append may then wait for a worker thread before its answer."""
        return self.config.flush_messages < LONG_MAX or self.config.flush_ms < LONG_MAX

    def flush_due(self) -> bool:
        """Whether the flush policy asks for a flush now: ``flush.messages`` unflushed
        offsets or ``flush.ms`` since the last flush (Kafka's defaults never do: the OS
        writes back, and recovery covers a crash)."""
        if self.unflushed_messages <= 0:
            return False
        if self.unflushed_messages >= self.config.flush_messages:
            return True
        return self.clock() - self.last_flush_ms >= self.config.flush_ms

    @property
    def roll_flush_due(self) -> bool:
        """A segment was rolled, created or renamed, or the leader epochs changed, since the
        last flush: Kafka flushes a rolled segment (and the directory) in the background soon
        after the roll; the epoch checkpoint is written by the same flush job."""
        return self._dir_dirty or self.epochs.dirty or self._partition_metadata_unsynced

    def begin_flush(self, upto: int | None = None) -> FlushJob:
        """Prepare the fsync of everything below ``upto`` (default: the LEO)."""
        upto = self.log_end_offset if upto is None else min(upto, self.log_end_offset)
        if upto <= self.recovery_point and not self._unsynced_snapshots \
                and not self._dir_dirty and not self.epochs.dirty \
                and not self._partition_metadata_unsynced:
            # Everything below is on disk already (Kafka's flush returns early too): no
            # descriptors, no fsync (a clean shutdown of 10,000 idle logs would otherwise
            # fsync 30,000 unchanged files).
            return FlushJob(upto, [])
        fds: list[int] = []
        for i, seg in enumerate(self.segments):
            nxt = self._bases[i + 1] if i + 1 < len(self._bases) else None
            if (nxt is None or nxt > self.recovery_point) and seg.base_offset < upto:
                fds.append(seg.dup_for_flush())
                for idx in (seg.offset_index, seg.time_index):
                    # fsync of the index file writes the mapping's dirty pages (Linux), and
                    # does so without holding the GIL, unlike mmap.flush.
                    fds.append(os.open(idx.path, os.O_RDONLY))
                txn_fd = seg.txn_index_flush_fd()
                if txn_fd is not None:
                    fds.append(txn_fd)
        for snapshot in self._unsynced_snapshots:
            try:
                fds.append(os.open(snapshot, os.O_RDONLY))
            except FileNotFoundError:
                pass        # deleted since (retention, truncation)
        self._unsynced_snapshots = []
        if self._dir_dirty:
            fds.append(os.open(self.dir, os.O_RDONLY))
            self._dir_dirty = False
        epochs = None
        if self.epochs.dirty:
            # Written by the job, off the event loop; a crash before it is repaired on load
            # (the cache is cut to the log and rebuilt from the batches recovered).
            epochs = (self.epochs.path, list(self.epochs.entries))
            self.epochs.dirty = False
        metadata = None
        if self._partition_metadata_unsynced:
            assert self.topic_id is not None
            metadata = (self.dir, self.topic_id)
            self._partition_metadata_unsynced = False
        return FlushJob(upto, fds, epochs, metadata)

    def end_flush(self, job: FlushJob) -> None:
        if job.epochs_missed is not None and not self.closed:
            if job.epochs is not None and job.epochs[0] == self.epochs.path:
                # Still this log's directory and not there: a failed log dir, not a race.
                raise job.epochs_missed
            # Renamed while the job ran (a replica move): written at the new place next time.
            self.epochs.dirty = True
        if job.metadata_missed is not None and not self.closed:
            if job.partition_metadata is not None and job.partition_metadata[0] == self.dir:
                raise job.metadata_missed
            self._partition_metadata_unsynced = True
        # A closed log was deleted while the job ran (its directory renamed away, as Kafka's
        # asyncDelete does): nothing of it is to be kept.
        if job.ran and job.upto > self.recovery_point:
            self.recovery_point = min(job.upto, self.log_end_offset)
        self.last_flush_ms = self.clock()

    def flush(self, upto: int | None = None) -> None:
        """Flush synchronously (tools, tests, shutdown); the broker runs jobs off the loop."""
        job = self.begin_flush(upto)
        job.run()
        self.end_flush(job)

    # ============================================================================ misc

    @property
    def size(self) -> int:
        return sum(s.size for s in self.segments)

    def change_config(self, config: LogConfig) -> None:
        self.config = config
        for seg in self.segments:
            seg.change_config(config)

    def close(self) -> None:
        """Clean close (no flush: the caller flushes first, off the event loop)."""
        if self.closed:
            return
        self.epochs.flush()
        if self._partition_metadata_unsynced:
            # Kafka's close flushes the file too: a log closed before any flush job ran.
            assert self.topic_id is not None
            write_partition_metadata(self.dir, self.topic_id)
            self._partition_metadata_unsynced = False
        # Kafka snapshots the producer state at the LEO on close: a clean restart replays
        # nothing.
        self.producer_state.update_map_end_offset(self.log_end_offset)
        self.producer_state.take_snapshot()
        for seg in self.segments:
            seg.close()
        self.remove_deleted_segments(force=True)
        self.closed = True

    def close_unclean(self) -> None:
        """Close without the clean-close work (tests that simulate a crash, deletion)."""
        for seg in self.segments:
            seg.close_without_trim()
        for _due, seg in self._pending_deletes:
            seg.close_without_trim()
        self.closed = True

    def delete(self) -> None:
        """Close and remove every file of this log (the directory itself is the caller's)."""
        self.close_unclean()
        for seg in self.segments:
            seg.delete_files()
        self.remove_deleted_segments(force=True)

    def __repr__(self) -> str:
        return (f"Log({self.topic_partition}, start={self.log_start_offset}, "
                f"end={self.log_end_offset}, hw={self.high_watermark}, "
                f"segments={len(self.segments)})")

