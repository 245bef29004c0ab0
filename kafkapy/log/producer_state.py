"""ProducerStateManager: one partition's idempotent and transactional producer state.

Kafka's ProducerStateManager, ProducerAppendInfo and ProducerStateEntry (storage/.../log).

What it owns, per producer id (PID) that wrote to the partition: the epoch, the metadata of
its last 5 batches (sequence range, offsets, timestamp: enough to answer a retried batch with
its original offset), the epoch of the transaction coordinator that wrote its last marker,
and the first offset of its open transaction, if any. Across producers it keeps the ongoing
transactions ordered by first offset (the first of them bounds the last stable offset) and
the ``.snapshot`` files of the partition directory.

Theory of operation:

- An append goes through a ``ProducerAppendInfo`` per PID (``prepare_update``): ``append`` is
  called once per batch, *after* the log assigned offsets, and validates the batch against the
  producer's state as it stands after the previous batches of the same append: for a CLIENT
  append the epoch (an older one is INVALID_PRODUCER_EPOCH), the sequence (a new epoch must
  start at 0; within an epoch each batch must follow the last, INT32_MAX wrapping to 0; with
  no state for the PID any sequence goes), and the transaction state (a non-transactional batch
  while a transaction is open is INVALID_TXN_STATE). COORDINATOR appends (offset commits, the
  coordinator's own markers) skip the sequence check; REPLICATION (followers, recovery) checks
  nothing. Nothing is changed until the log has written the batches and calls ``update``;
  a refused append leaves the state as it was.
- Duplicates are found by the caller before offsets are assigned, with
  ``ProducerStateEntry.find_duplicate_batch`` on ``last_entry(pid)``: a batch whose epoch and
  sequence range match one of the 5 cached batches is answered with that batch's offsets.
- A transaction marker (control batch) returns a ``CompletedTxn`` if the producer had a
  transaction open. The log then computes ``last_stable_offset(completed)``, writes the
  aborted transaction to the segment's ``.txnindex`` and only then ``complete_txn``s it, as
  Kafka does, so a failed index write leaves the transaction ongoing.
- Snapshots: ``take_snapshot`` writes the whole map to ``<map end offset, 20 digits>.snapshot``
  (Kafka's format, below; written to ``.tmp``, fsynced, renamed). ``truncate_and_reload`` drops
  the snapshots outside the log and loads the newest valid one; the log replays the batches
  from ``map_end_offset`` to its end with ``apply_batches``.

Snapshot layout (Kafka's ProducerStateManager.writeSnapshot, version 1; big-endian)::

    version INT16 (1) | crc UINT32 (CRC-32C of every byte after this field) | count INT32
    count x ( producerId INT64 | epoch INT16 | lastSequence INT32 | lastOffset INT64
              | offsetDelta INT32 | timestamp INT64 | coordinatorEpoch INT32
              | currentTxnFirstOffset INT64 (-1: none) )                       46 bytes each

A loaded entry has one batch (its last), or none if ``lastOffset`` is -1, as in Kafka.

Differences from Kafka: no "unreplicated transactions" (completed transactions whose marker is
above the high watermark, which Kafka keeps in the first unstable offset until the high
watermark passes them): ``first_unstable_offset`` is the first *undecided* offset; the log
bounds the LSO by the high watermark. No transaction-verification state (KIP-890).

All methods are for the thread that owns the log. ``take_snapshot`` and
``truncate_and_reload`` do blocking file I/O (one small file each).

Errors raised by ``ProducerAppendInfo.append``: InvalidProducerEpochError (47),
OutOfOrderSequenceNumberError (45), InvalidTxnStateError (48),
TransactionCoordinatorFencedError (52), InvalidRecordError (87) for a control batch that is not
a transaction marker. Snapshot I/O failures raise KafkaStorageError.
"""

from __future__ import annotations

import enum
import logging
import os
import struct
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidProducerEpochError,
    InvalidRecordError,
    InvalidTxnStateError,
    KafkaStorageError,
    OutOfOrderSequenceNumberError,
    TransactionCoordinatorFencedError,
)
from kafkapy.log.checkpoints import read_small_file
from kafkapy.protocol.records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    BatchHeader,
    crc32c,
    decode_control_record,
)

__all__ = [
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NUM_BATCHES_TO_RETAIN",
    "SNAPSHOT_SUFFIX",
    "AppendOrigin",
    "BatchMetadata",
    "CompletedTxn",
    "CorruptSnapshotError",
    "ProducerAppendInfo",
    "ProducerStateEntry",
    "ProducerStateManager",
    "decode_snapshot",
    "encode_snapshot",
    "last_sequence",
    "snapshot_path",
]

logger = logging.getLogger("kafkapy.log")

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
NUM_BATCHES_TO_RETAIN = 5
INT32_MAX = 2**31 - 1

SNAPSHOT_SUFFIX = ".snapshot"
_TMP_SUFFIX = ".tmp"
_SNAPSHOT_VERSION = 1
_HEADER = struct.Struct(">hIi")             # version, crc, count
_CRC_START = 6                              # the CRC covers everything after itself
_ENTRY = struct.Struct(">qhiqiqiq")


def _increment_sequence(sequence: int, increment: int) -> int:
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def _decrement_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


def last_sequence(batch: BatchHeader) -> int:
    """The sequence of the batch's last record (sequences wrap from INT32_MAX to 0, and follow
    the offset deltas); NO_SEQUENCE for a batch without one."""
    if batch.base_sequence == NO_SEQUENCE:
        return NO_SEQUENCE
    return _increment_sequence(batch.base_sequence, batch.last_offset_delta)


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


def snapshot_path(directory: Path, offset: int) -> Path:
    return directory / f"{offset:020d}{SNAPSHOT_SUFFIX}"


class AppendOrigin(enum.Enum):
    """Who appends, which decides what is checked: everything for CLIENT, the epoch for
    COORDINATOR (its appends carry no sequences), nothing for REPLICATION (followers and the
    replay on load: the leader checked)."""

    CLIENT = "client"
    COORDINATOR = "coordinator"
    REPLICATION = "replication"


class BatchMetadata(NamedTuple):
    """What is kept of one of a producer's recent batches. A NamedTuple, not an attrs
    class: one is made per appended batch of every idempotent producer, and a tuple is
    several times cheaper to build."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return _decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


def _batches(items: Iterable[BatchMetadata]) -> deque[BatchMetadata]:
    return deque(items, maxlen=NUM_BATCHES_TO_RETAIN)


@attrs.define(on_setattr=attrs.setters.NO_OP)
class ProducerStateEntry:
    """One producer's state; ``batch_metadata`` holds its last batches, oldest first, at most
    NUM_BATCHES_TO_RETAIN (older ones fall off). Attribute writes are plain (no converter
    pipeline on setattr): the produce path updates an entry per batch."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int = -1
    last_timestamp: int = NO_TIMESTAMP
    current_txn_first_offset: int = -1
    batch_metadata: deque[BatchMetadata] = attrs.field(factory=deque, converter=_batches)

    @classmethod
    def empty(cls, producer_id: int) -> ProducerStateEntry:
        return cls(producer_id, NO_PRODUCER_EPOCH)

    @property
    def is_empty(self) -> bool:
        return not self.batch_metadata

    @property
    def first_seq(self) -> int:
        return self.batch_metadata[0].first_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self.batch_metadata[-1].last_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def first_data_offset(self) -> int:
        return self.batch_metadata[0].first_offset if self.batch_metadata else -1

    @property
    def last_data_offset(self) -> int:
        return self.batch_metadata[-1].last_offset if self.batch_metadata else -1

    @property
    def last_offset_delta(self) -> int:
        return self.batch_metadata[-1].offset_delta if self.batch_metadata else 0

    def maybe_update_producer_epoch(self, producer_epoch: int) -> bool:
        """A new epoch forgets the batches of the old one."""
        if self.producer_epoch != producer_epoch:
            self.batch_metadata.clear()
            self.producer_epoch = producer_epoch
            return True
        return False

    def add_batch(self, producer_epoch: int, last_seq: int, last_offset: int,
                  offset_delta: int, timestamp: int) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        self.batch_metadata.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def update(self, nxt: ProducerStateEntry) -> None:
        """Take on ``nxt`` (what an append produced): its epoch, its batches after ours, its
        coordinator epoch, timestamp and transaction."""
        self.maybe_update_producer_epoch(nxt.producer_epoch)
        self.batch_metadata.extend(nxt.batch_metadata)
        self.coordinator_epoch = nxt.coordinator_epoch
        self.current_txn_first_offset = nxt.current_txn_first_offset
        self.last_timestamp = nxt.last_timestamp

    def find_duplicate_batch(self, batch: BatchHeader) -> BatchMetadata | None:
        """The cached batch with ``batch``'s epoch and exact sequence range, if any: a retry
        of a batch already in the log."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        return self.batch_with_sequence_range(batch.base_sequence, last_sequence(batch))

    def batch_with_sequence_range(self, first_seq: int, last_seq: int) -> BatchMetadata | None:
        for meta in self.batch_metadata:
            if meta.last_seq == last_seq and meta.first_seq == first_seq:
                return meta
        return None


@attrs.frozen
class CompletedTxn:
    """A transaction ended by a marker: from its first offset to the marker's offset."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


class ProducerAppendInfo:
    """One producer's part of one append: checks its batches in order against the state left
    by the previous ones, and builds the entry ``ProducerStateManager.update`` installs.

    ``clock_ms`` stands in for the timestamp of a batch that has none (maxTimestamp -1), so
    that such a producer does not look idle since 1970 to ``remove_expired_producers``.
    """

    def __init__(self, tp: TopicPartition, producer_id: int,
                 current_entry: ProducerStateEntry | None, origin: AppendOrigin,
                 clock_ms: int) -> None:
        self.topic_partition = tp
        self.producer_id = producer_id
        self.current_entry = current_entry if current_entry is not None else \
            ProducerStateEntry.empty(producer_id)
        self.origin = origin
        self.clock_ms = clock_ms
        cur = self.current_entry
        # The batches of this append only; update() adds them after the current ones.
        self._updated = ProducerStateEntry(producer_id, cur.producer_epoch,
                                           cur.coordinator_epoch, cur.last_timestamp,
                                           cur.current_txn_first_offset)
        self._transactions: list[tuple[int, int]] = []

    @property
    def started_transactions(self) -> list[tuple[int, int]]:
        """(producer id, first offset) of each transaction this append started."""
        return list(self._transactions)

    def to_entry(self) -> ProducerStateEntry:
        return self._updated

    def append(self, batch: BatchHeader) -> CompletedTxn | None:
        """Check and record one batch of this producer (offsets already assigned).

        Returns the transaction a marker completed, or None (a data batch; a marker with no
        transaction open; an empty control batch, whose transaction compaction removed).
        Raises InvalidProducerEpochError, OutOfOrderSequenceNumberError, InvalidTxnStateError,
        TransactionCoordinatorFencedError, InvalidRecordError (see the module doc).
        """
        if batch.is_control:
            records = batch.records()
            if not records:
                return None
            marker = decode_control_record(records[0])
            if marker.type not in (CONTROL_ABORT, CONTROL_COMMIT):
                raise InvalidRecordError(
                    f"{self.topic_partition}: control record type {marker.type} at offset "
                    f"{batch.base_offset} is not a transaction marker")
            return self.append_end_txn_marker(marker.type == CONTROL_ABORT,
                                              marker.coordinator_epoch, batch.producer_epoch,
                                              batch.base_offset, records[0].timestamp)
        timestamp = batch.max_timestamp
        self.append_data_batch(batch.producer_epoch, batch.base_sequence, last_sequence(batch),
                               timestamp if timestamp != NO_TIMESTAMP else self.clock_ms,
                               batch.base_offset, batch.last_offset, batch.is_transactional)
        return None

    def append_data_batch(self, epoch: int, first_seq: int, last_seq: int, timestamp: int,
                          first_offset: int, last_offset: int, is_transactional: bool) -> None:
        self._check_producer_epoch(epoch, first_offset)
        if self.origin is AppendOrigin.CLIENT:
            self._check_sequence(epoch, first_seq, first_offset)
        entry = self._updated
        entry.add_batch(epoch, last_seq, last_offset, last_offset - first_offset, timestamp)
        if entry.current_txn_first_offset >= 0 and not is_transactional:
            raise InvalidTxnStateError(
                f"expected a transactional write from producer {self.producer_id} at offset "
                f"{first_offset} in {self.topic_partition}: it has a transaction open")
        if entry.current_txn_first_offset < 0 and is_transactional:
            entry.current_txn_first_offset = first_offset
            self._transactions.append((self.producer_id, first_offset))

    def append_end_txn_marker(self, is_abort: bool, coordinator_epoch: int, producer_epoch: int,
                              offset: int, timestamp: int) -> CompletedTxn | None:
        # Markers are checked as Kafka checks transaction version 0/1 markers (the marker's
        # epoch may equal the producer's).
        self._check_producer_epoch(producer_epoch, offset)
        entry = self._updated
        if entry.coordinator_epoch > coordinator_epoch:
            message = (f"invalid coordinator epoch for producer {self.producer_id} at offset "
                       f"{offset} in {self.topic_partition}: {coordinator_epoch} (zombie), "
                       f"{entry.coordinator_epoch} (current)")
            if self.origin is not AppendOrigin.REPLICATION:
                raise TransactionCoordinatorFencedError(message)
            logger.info("%s", message)
        completed = None
        if entry.current_txn_first_offset >= 0:
            completed = CompletedTxn(self.producer_id, entry.current_txn_first_offset, offset,
                                     is_abort)
        # Kafka's ProducerStateEntry.update(epoch, coordinatorEpoch, timestamp): the marker
        # closes the transaction; an epoch change forgets the batches.
        entry.maybe_update_producer_epoch(producer_epoch)
        entry.coordinator_epoch = coordinator_epoch
        entry.current_txn_first_offset = -1
        entry.last_timestamp = timestamp
        return completed

    def _check_producer_epoch(self, epoch: int, offset: int) -> None:
        current = self._updated.producer_epoch
        if epoch < current:
            message = (f"epoch of producer {self.producer_id} at offset {offset} in "
                       f"{self.topic_partition} is {epoch}, older than the last seen epoch "
                       f"{current}")
            if self.origin is AppendOrigin.REPLICATION:
                logger.warning("%s", message)
            else:
                raise InvalidProducerEpochError(message)

    def _check_sequence(self, epoch: int, first_seq: int, offset: int) -> None:
        updated = self._updated
        if epoch != updated.producer_epoch:
            # A new epoch starts at sequence 0, unless the producer had no epoch at all.
            if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceNumberError(
                    f"invalid sequence number for new epoch of producer {self.producer_id} at "
                    f"offset {offset} in {self.topic_partition}: {epoch} (request epoch), "
                    f"{first_seq} (seq. number), {updated.producer_epoch} (current epoch)")
            return
        if not updated.is_empty:
            last_seq = updated.last_seq
        elif epoch == self.current_entry.producer_epoch:
            last_seq = self.current_entry.last_seq
        else:
            last_seq = NO_SEQUENCE
        # No epoch known (the producer's batches were all deleted, or it expired): any
        # sequence is accepted.
        if self.current_entry.producer_epoch != NO_PRODUCER_EPOCH \
                and not _in_sequence(last_seq, first_seq):
            raise OutOfOrderSequenceNumberError(
                f"out of order sequence number for producer {self.producer_id} at offset "
                f"{offset} in {self.topic_partition}: {first_seq} (incoming seq. number), "
                f"{last_seq} (current end sequence number)")

    def __repr__(self) -> str:
        e = self._updated
        return (f"ProducerAppendInfo(producer_id={self.producer_id}, epoch={e.producer_epoch}, "
                f"first_seq={e.first_seq}, last_seq={e.last_seq}, "
                f"current_txn_first_offset={e.current_txn_first_offset}, "
                f"started={self._transactions})")


class CorruptSnapshotError(KafkaStorageError):
    """A ``.snapshot`` file that cannot be trusted (CRC, version or length)."""


def encode_snapshot(entries: Iterable[ProducerStateEntry]) -> bytes:
    """The snapshot file's bytes for ``entries`` (see the module doc)."""
    body = bytearray()
    count = 0
    for e in entries:
        body += _ENTRY.pack(e.producer_id, e.producer_epoch, e.last_seq, e.last_data_offset,
                            e.last_offset_delta, e.last_timestamp, e.coordinator_epoch,
                            e.current_txn_first_offset)
        count += 1
    data = bytearray(_HEADER.pack(_SNAPSHOT_VERSION, 0, count)) + body
    struct.pack_into(">I", data, 2, crc32c(memoryview(data)[_CRC_START:]))
    return bytes(data)


def decode_snapshot(data: bytes) -> list[ProducerStateEntry]:
    """The entries of a snapshot file's bytes. Raises CorruptSnapshotError."""
    if len(data) < _HEADER.size:
        raise CorruptSnapshotError(f"snapshot of {len(data)} bytes is shorter than its header")
    version, crc, count = _HEADER.unpack_from(data)
    if version != _SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"snapshot has unknown version {version}")
    computed = crc32c(memoryview(data)[_CRC_START:])
    if crc != computed:
        raise CorruptSnapshotError(f"snapshot is corrupt: stored CRC {crc}, computed "
                                   f"{computed}")
    if count < 0 or len(data) != _HEADER.size + count * _ENTRY.size:
        raise CorruptSnapshotError(f"snapshot of {len(data)} bytes cannot hold {count} "
                                   f"entries")
    out = []
    for pid, epoch, seq, offset, delta, ts, coord, txn in _ENTRY.iter_unpack(
            memoryview(data)[_HEADER.size:]):
        batches = [BatchMetadata(seq, offset, delta, ts)] if offset >= 0 else []
        out.append(ProducerStateEntry(pid, epoch, coord, ts, txn if txn >= 0 else -1, batches))
    return out


class ProducerStateManager:
    """The producer state of one partition (see the module doc)."""

    def __init__(self, tp: TopicPartition, log_dir: Path, producer_id_expiration_ms: int,
                 clock: Callable[[], int]) -> None:
        self.topic_partition = tp
        self.log_dir = Path(log_dir)
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self.clock = clock
        self.producers: dict[int, ProducerStateEntry] = {}
        self._ongoing: dict[int, int] = {}      # first offset -> producer id
        self.map_end_offset = 0
        self._last_snap_offset = 0
        self._snapshots: dict[int, Path] = self._list_snapshots()

    def _list_snapshots(self) -> dict[int, Path]:
        found: dict[int, Path] = {}
        if not self.log_dir.is_dir():
            return found
        for p in self.log_dir.iterdir():
            name = p.name
            if name.endswith(SNAPSHOT_SUFFIX + _TMP_SUFFIX):
                p.unlink(missing_ok=True)       # a snapshot write that did not finish
            elif name.endswith(SNAPSHOT_SUFFIX) and name[:-len(SNAPSHOT_SUFFIX)].isdigit() \
                    and p.is_file():
                found[int(name[:-len(SNAPSHOT_SUFFIX)])] = p
        return found

    # ------------------------------------------------------------------------ appends

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    def prepare_update(self, producer_id: int, origin: AppendOrigin) -> ProducerAppendInfo:
        return ProducerAppendInfo(self.topic_partition, producer_id,
                                  self.producers.get(producer_id), origin, self.clock())

    def update(self, info: ProducerAppendInfo) -> None:
        """Install what ``info`` checked (after the log wrote its batches) and register the
        transactions it started as ongoing."""
        if info.producer_id == NO_PRODUCER_ID:
            raise ValueError(f"{self.topic_partition}: no producer state for producer id -1")
        entry = info.to_entry()
        current = self.producers.get(info.producer_id)
        if current is not None:
            current.update(entry)
        else:
            self.producers[info.producer_id] = entry
        for pid, first_offset in info.started_transactions:
            self._ongoing[first_offset] = pid

    def follows_in_sequence(self, batch: BatchHeader) -> bool:
        """Whether ``batch`` is the common case of an idempotent client's append: a data
        batch outside any transaction, of a producer with batches at the batch's epoch, whose
        first sequence follows the last one. Such a batch passes every check of
        ``ProducerAppendInfo.append`` and is no duplicate (a cached batch's range ends at or
        before the last sequence), so the log records it with ``record_in_sequence`` after
        writing it, without an append info; anything else takes the general path."""
        entry = self.producers.get(batch.producer_id)
        if entry is None or not entry.batch_metadata or batch.is_transactional or \
                batch.is_control or entry.current_txn_first_offset >= 0 or \
                batch.producer_epoch != entry.producer_epoch:
            return False
        return batch.base_sequence == _increment_sequence(entry.batch_metadata[-1].last_seq, 1)

    def record_in_sequence(self, batch: BatchHeader) -> None:
        """Record a batch ``follows_in_sequence`` accepted, once the log has written it."""
        entry = self.producers[batch.producer_id]
        timestamp = batch.max_timestamp
        if timestamp == NO_TIMESTAMP:
            timestamp = self.clock()
        entry.batch_metadata.append(BatchMetadata(last_sequence(batch), batch.last_offset,
                                                  batch.last_offset_delta, timestamp))
        entry.last_timestamp = timestamp

    def update_map_end_offset(self, offset: int) -> None:
        self.map_end_offset = offset

    # ------------------------------------------------------------------- transactions

    def first_unstable_offset(self) -> int | None:
        """The first offset of the oldest ongoing transaction (Kafka's first undecided
        offset), None without one."""
        return min(self._ongoing) if self._ongoing else None

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """The LSO once ``completed`` is complete (call before ``complete_txn``): the first
        offset of the oldest ongoing transaction of another producer, else the offset after
        the marker."""
        for first_offset in sorted(self._ongoing):
            if self._ongoing[first_offset] != completed.producer_id:
                return first_offset
        return completed.last_offset + 1

    def complete_txn(self, completed: CompletedTxn) -> None:
        """``completed`` is no longer ongoing. Raises ValueError if it was never started."""
        pid = self._ongoing.pop(completed.first_offset, None)
        if pid is None:
            raise ValueError(f"{self.topic_partition}: cannot complete {completed}: it was "
                             f"not started")
        entry = self.producers.get(completed.producer_id)
        if entry is not None and entry.current_txn_first_offset == completed.first_offset:
            entry.current_txn_first_offset = -1

    def has_ongoing_txn(self, producer_id: int) -> bool:
        entry = self.producers.get(producer_id)
        return entry is not None and entry.current_txn_first_offset >= 0

    def apply_batches(self, batches: Iterable[BatchHeader], *,
                      on_complete: Callable[[CompletedTxn, int], None] | None = None
                      ) -> list[CompletedTxn]:
        """Replay batches already in the log (recovery, followers) without checks
        (REPLICATION origin); ``map_end_offset`` follows each batch. Returns the transactions
        the markers completed, in order, after completing them. ``on_complete(txn, lso)``,
        if given, is called for each before it is completed, with its LSO (Kafka's
        LogSegment.recover uses that moment to rebuild the ``.txnindex``)."""
        completed: list[CompletedTxn] = []
        for batch in batches:
            pid = batch.producer_id
            if pid != NO_PRODUCER_ID:
                info = self.prepare_update(pid, AppendOrigin.REPLICATION)
                txn = info.append(batch)
                self.update(info)
                if txn is not None:
                    if on_complete is not None:
                        on_complete(txn, self.last_stable_offset(txn))
                    self.complete_txn(txn)
                    completed.append(txn)
            self.map_end_offset = batch.next_offset
        return completed

    # ----------------------------------------------------------------------- expiry

    def _is_expired(self, entry: ProducerStateEntry, now_ms: int) -> bool:
        return entry.current_txn_first_offset < 0 and \
            now_ms - entry.last_timestamp >= self.producer_id_expiration_ms

    def remove_expired_producers(self, now_ms: int) -> None:
        """Forget producers idle for ``producer.id.expiration.ms`` (never one with a
        transaction open)."""
        for pid in [pid for pid, e in self.producers.items() if self._is_expired(e, now_ms)]:
            del self.producers[pid]

    def active_producers(self) -> list[ProducerStateEntry]:
        return list(self.producers.values())

    # -------------------------------------------------------------------- snapshots

    def take_snapshot(self, sync: bool = True) -> Path | None:
        """Write the state at ``map_end_offset`` to ``<map end offset>.snapshot`` unless no
        batch was applied since the last snapshot taken or loaded, or the file exists.
        ``sync`` False (a roll, on the event loop): no fsync here, the caller has the file
        fsynced later (Kafka's takeSnapshot(false)); a crash before that leaves at worst a
        snapshot that fails its CRC and is skipped for an older one. Returns the file
        written, or None. Raises KafkaStorageError."""
        offset = self.map_end_offset
        path = snapshot_path(self.log_dir, offset)
        if offset <= self._last_snap_offset or path.exists():
            return None
        data = encode_snapshot(self.producers.values())
        tmp = path.with_name(path.name + _TMP_SUFFIX)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                written = 0
                while written < len(data):
                    written += os.write(fd, data[written:])
                if sync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise KafkaStorageError(f"{self.topic_partition}: cannot write the producer "
                                    f"snapshot {path}: {e}") from e
        self._snapshots[offset] = path
        self._last_snap_offset = offset
        return path

    def latest_snapshot_offset(self) -> int | None:
        return max(self._snapshots) if self._snapshots else None

    def oldest_snapshot_offset(self) -> int | None:
        return min(self._snapshots) if self._snapshots else None

    def snapshot_offsets(self) -> list[int]:
        return sorted(self._snapshots)

    def _delete_snapshot(self, offset: int) -> None:
        path = self._snapshots.pop(offset, None)
        if path is not None:
            try:
                path.unlink(missing_ok=True)
            except OSError as e:
                raise KafkaStorageError(f"{self.topic_partition}: cannot delete the producer "
                                        f"snapshot {path}: {e}") from e

    def delete_snapshots_before(self, offset: int) -> None:
        """Delete the snapshots at offsets below ``offset`` (the log start moved)."""
        for snap in [o for o in self._snapshots if o < offset]:
            self._delete_snapshot(snap)

    def _clear(self) -> None:
        self.producers.clear()
        self._ongoing.clear()

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int) -> None:
        """Bring the state in line with a log now spanning [``log_start_offset``,
        ``log_end_offset``) (Kafka's truncateAndReload, on load and after truncation).

        Deletes the snapshots above the log end or at or below the log start (as Kafka: a
        snapshot at the start holds only producers whose batches are gone). Then, unless the
        state already ends at ``log_end_offset``, clears it and loads the newest snapshot
        left (a corrupt one is logged, deleted, and the next older tried), without the
        producers expired by now; ``map_end_offset`` becomes the snapshot's offset, or
        ``log_start_offset`` without one. The caller replays the batches from there to the
        log end (``apply_batches``). Raises KafkaStorageError on an I/O error.
        """
        for offset in [o for o in self._snapshots
                       if o > log_end_offset or o <= log_start_offset]:
            self._delete_snapshot(offset)
        if log_end_offset != self.map_end_offset:
            self._clear()
            self._load_from_snapshot(log_start_offset)
        else:
            # Kafka's onLogStartOffsetIncremented.
            self.map_end_offset = max(self.map_end_offset, log_start_offset)
            latest = self.latest_snapshot_offset()
            self._last_snap_offset = latest if latest is not None else log_start_offset

    def _load_from_snapshot(self, log_start_offset: int) -> None:
        now = self.clock()
        while self._snapshots:
            offset = max(self._snapshots)
            path = self._snapshots[offset]
            try:
                entries = decode_snapshot(read_small_file(path))
            except FileNotFoundError:
                del self._snapshots[offset]
                continue
            except CorruptSnapshotError as e:
                logger.warning("%s: cannot load the producer snapshot %s: %s; deleting it",
                               self.topic_partition, path, e)
                self._delete_snapshot(offset)
                continue
            except OSError as e:
                raise KafkaStorageError(f"{self.topic_partition}: cannot read the producer "
                                        f"snapshot {path}: {e}") from e
            logger.info("%s: loaded producer state from snapshot %s", self.topic_partition,
                        path.name)
            for entry in entries:
                if not self._is_expired(entry, now):
                    self._load_entry(entry)
            self._last_snap_offset = self.map_end_offset = offset
            return
        self._last_snap_offset = self.map_end_offset = log_start_offset

    def _load_entry(self, entry: ProducerStateEntry) -> None:
        self.producers[entry.producer_id] = entry
        if entry.current_txn_first_offset >= 0:
            self._ongoing[entry.current_txn_first_offset] = entry.producer_id

    def move_to(self, log_dir: Path) -> None:
        """The log's directory was renamed (a replica move): snapshots are there now."""
        self.log_dir = Path(log_dir)
        self._snapshots = {o: self.log_dir / p.name for o, p in self._snapshots.items()}

    def take_over_from(self, other: ProducerStateManager) -> None:
        """Adopt ``other``'s producers (a future log replacing the current one, at the same
        log end offset): the current log's state includes producers whose batches were
        deleted before the copy began, which replaying the copied batches cannot rebuild."""
        self._clear()
        for entry in other.producers.values():
            self._load_entry(entry)
        self.map_end_offset = other.map_end_offset

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Forget everything, snapshots included; the state now ends at ``offset``."""
        self._clear()
        for snap in list(self._snapshots):
            self._delete_snapshot(snap)
        self._last_snap_offset = 0
        self.map_end_offset = offset

    def __repr__(self) -> str:
        return (f"ProducerStateManager({self.topic_partition}, producers="
                f"{len(self.producers)}, ongoing={len(self._ongoing)}, "
                f"map_end_offset={self.map_end_offset})")
