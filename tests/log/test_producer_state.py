"""ProducerStateManager (kafkapy.log.producer_state): Kafka's per-partition producer state.

Batches are real record batches (``build_batch`` / ``build_control_batch``) given offsets as
the log would. The rules checked are reference section 6.2 and Kafka's ProducerAppendInfo;
snapshot files are compared with bytes packed here with ``struct`` in Kafka's layout
(reference section 8 and ProducerStateManager.writeSnapshot), with a bitwise CRC-32C written
here, independent of the compiled one.
"""

from __future__ import annotations

import logging
import struct
from pathlib import Path

import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    InvalidProducerEpochError,
    InvalidRecordError,
    InvalidTxnStateError,
    OutOfOrderSequenceNumberError,
    TransactionCoordinatorFencedError,
)
from kafkapy.log.producer_state import (
    NO_PRODUCER_EPOCH,
    NO_SEQUENCE,
    AppendOrigin,
    BatchMetadata,
    CompletedTxn,
    CorruptSnapshotError,
    ProducerAppendInfo,
    ProducerStateEntry,
    ProducerStateManager,
    decode_snapshot,
    encode_snapshot,
)
from kafkapy.protocol.records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    BatchHeader,
    build_batch,
    build_control_batch,
)

INT32_MAX = 2**31 - 1
TP = TopicPartition("t", 0)
CLIENT = AppendOrigin.CLIENT
COORDINATOR = AppendOrigin.COORDINATOR
REPLICATION = AppendOrigin.REPLICATION


def crc32c_reference(data: bytes) -> int:
    """CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), one bit at a time."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def kafka_snapshot(entries: list[tuple[int, int, int, int, int, int, int, int]]) -> bytes:
    """Kafka's snapshot file: version 1, CRC-32C of what follows the CRC, the count, then
    (producerId, epoch, lastSequence, lastOffset, offsetDelta, timestamp, coordinatorEpoch,
    currentTxnFirstOffset) per producer."""
    body = struct.pack(">i", len(entries)) + b"".join(
        struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", 1, crc32c_reference(body)) + body


def test_crc_reference_is_crc32c() -> None:
    assert crc32c_reference(b"123456789") == 0xE3069283     # the CRC-32C check value


class Clock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def manager(directory: Path, expiration_ms: int = 86_400_000,
            clock: Clock | None = None) -> ProducerStateManager:
    return ProducerStateManager(TP, directory, expiration_ms, clock or Clock())


def data(offset: int, pid: int, epoch: int, seq: int, count: int = 1, *,
         txn: bool = False, ts: int = 1_000_000) -> BatchHeader:
    return BatchHeader(build_batch([(b"k", b"v", None, ts)] * count, base_offset=offset,
                                   producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                                   is_transactional=txn))


def marker(offset: int, pid: int, epoch: int, *, abort: bool, coordinator_epoch: int = 0,
           ts: int = 1_000_000) -> BatchHeader:
    return BatchHeader(build_control_batch(CONTROL_ABORT if abort else CONTROL_COMMIT,
                                           coordinator_epoch, producer_id=pid,
                                           producer_epoch=epoch, base_offset=offset,
                                           timestamp_ms=ts))


def append(psm: ProducerStateManager, *batches: BatchHeader,
           origin: AppendOrigin = CLIENT) -> list[CompletedTxn]:
    """One producer's batches appended as the log does: check all, then update, then complete
    the transactions the markers ended."""
    info = psm.prepare_update(batches[0].producer_id, origin)
    done = [t for t in (info.append(b) for b in batches) if t is not None]
    psm.update(info)
    psm.update_map_end_offset(batches[-1].next_offset)
    for t in done:
        psm.complete_txn(t)
    return done


def entry_of(psm: ProducerStateManager, pid: int) -> ProducerStateEntry:
    entry = psm.last_entry(pid)
    assert entry is not None
    return entry


@pytest.fixture
def psm(tmp_path: Path) -> ProducerStateManager:
    return manager(tmp_path)


# ------------------------------------------------------------------------- sequences

def test_batch_metadata_sequences_wrap() -> None:
    meta = BatchMetadata(last_seq=2, last_offset=50, offset_delta=4, timestamp=0)
    assert meta.first_seq == INT32_MAX - 1 and meta.first_offset == 46
    assert BatchMetadata(9, 50, 4, 0).first_seq == 5


def test_duplicates_among_the_last_five_batches(psm: ProducerStateManager) -> None:
    offset = 0
    for seq in range(0, 12, 2):                       # six batches of two records
        append(psm, data(offset, 1, 0, seq, 2))
        offset += 2
    entry = psm.last_entry(1)
    assert entry is not None and len(entry.batch_metadata) == 5
    assert (entry.first_seq, entry.last_seq) == (2, 11)
    assert (entry.first_data_offset, entry.last_data_offset) == (2, 11)
    # A retry carries the same sequences; its offsets are those of the original.
    dup = entry.find_duplicate_batch(data(500, 1, 0, 4, 2))
    assert dup == BatchMetadata(last_seq=5, last_offset=5, offset_delta=1, timestamp=1_000_000)
    assert dup.first_offset == 4
    assert entry.find_duplicate_batch(data(500, 1, 0, 10, 2)) is not None
    assert entry.find_duplicate_batch(data(500, 1, 0, 0, 2)) is None     # the sixth-oldest
    assert entry.find_duplicate_batch(data(500, 1, 0, 4, 1)) is None     # another range
    assert entry.find_duplicate_batch(data(500, 1, 1, 4, 2)) is None     # another epoch


def test_out_of_order_sequence(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 0, 0, 2))
    for seq in (3, 1, 0, 100):
        with pytest.raises(OutOfOrderSequenceNumberError):
            append(psm, data(2, 1, 0, seq))
    entry = psm.last_entry(1)
    assert entry is not None and entry.last_seq == 1 and len(entry.batch_metadata) == 1
    append(psm, data(2, 1, 0, 2))
    assert entry_of(psm, 1).last_seq == 2


def test_sequences_within_one_append(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 0, 0))
    info = psm.prepare_update(1, CLIENT)
    info.append(data(1, 1, 0, 1, 3))
    with pytest.raises(OutOfOrderSequenceNumberError):
        info.append(data(4, 1, 0, 5))        # 4 expected after the first batch of the append
    info = psm.prepare_update(1, CLIENT)
    info.append(data(1, 1, 0, 1, 3))
    info.append(data(4, 1, 0, 4))
    assert entry_of(psm, 1).last_seq == 0  # not yet installed
    psm.update(info)
    assert entry_of(psm, 1).last_seq == 4
    assert len(entry_of(psm, 1).batch_metadata) == 3


def test_unknown_producer_is_not_checked_within_its_first_append(
        psm: ProducerStateManager) -> None:
    # Kafka compares with the state before the append, which has no epoch: any sequence.
    info = psm.prepare_update(1, CLIENT)
    info.append(data(0, 1, 0, 0, 3))
    info.append(data(3, 1, 0, 9))
    psm.update(info)
    assert entry_of(psm, 1).last_seq == 9


def test_sequence_wraps_at_int32_max(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 0, INT32_MAX - 1, 3))      # INT32_MAX-1, INT32_MAX, 0
    entry = psm.last_entry(1)
    assert entry is not None and entry.last_seq == 0 and entry.first_seq == INT32_MAX - 1
    assert entry.find_duplicate_batch(data(9, 1, 0, INT32_MAX - 1, 3)) is not None
    with pytest.raises(OutOfOrderSequenceNumberError):
        append(psm, data(3, 1, 0, 2))
    append(psm, data(3, 1, 0, 1))
    append(psm, data(10, 2, 0, INT32_MAX - 1, 2))      # ends exactly at INT32_MAX
    append(psm, data(12, 2, 0, 0))                     # ... then 0
    assert entry_of(psm, 2).last_seq == 0


def test_new_epoch_must_start_at_zero(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 0, 0, 5))
    with pytest.raises(OutOfOrderSequenceNumberError):
        append(psm, data(5, 1, 1, 5))
    append(psm, data(5, 1, 1, 0))
    entry = psm.last_entry(1)
    assert entry is not None and entry.producer_epoch == 1
    assert list(entry.batch_metadata) == [BatchMetadata(0, 5, 0, 1_000_000)]   # old ones gone


def test_older_epoch_is_refused(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 3, 0))
    with pytest.raises(InvalidProducerEpochError):
        append(psm, data(1, 1, 2, 0))
    with pytest.raises(InvalidProducerEpochError):
        append(psm, data(1, 1, 2, 0), origin=COORDINATOR)
    append(psm, data(1, 1, 2, 7), origin=REPLICATION)       # a follower takes what it gets
    assert entry_of(psm, 1).producer_epoch == 2


def test_unknown_producer_accepts_any_sequence(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 4, 42))
    assert entry_of(psm, 1).last_seq == 42
    with pytest.raises(OutOfOrderSequenceNumberError):
        append(psm, data(1, 1, 4, 44))
    # An entry without an epoch (loaded from a snapshot written before the producer wrote
    # data, or kept by a marker) accepts any sequence too.
    info = ProducerAppendInfo(TP, 9, ProducerStateEntry.empty(9), CLIENT, 0)
    info.append(data(5, 9, 0, 1234))
    assert info.to_entry().last_seq == 1234


def test_coordinator_origin_skips_sequences(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 0, 0))
    append(psm, data(1, 1, 0, 10), origin=COORDINATOR)
    append(psm, data(2, 1, 0, NO_SEQUENCE), origin=COORDINATOR)
    assert entry_of(psm, 1).last_seq == NO_SEQUENCE


def test_replication_origin_checks_nothing(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 5, 0))
    append(psm, data(1, 1, 5, 99), data(2, 1, 4, 3), origin=REPLICATION)
    entry = psm.last_entry(1)
    assert entry is not None and (entry.producer_epoch, entry.last_seq) == (4, 3)


def test_batch_without_timestamp_takes_the_clock(tmp_path: Path) -> None:
    psm = manager(tmp_path, clock=Clock(777))
    append(psm, data(0, 1, 0, 0, ts=-1))
    assert entry_of(psm, 1).last_timestamp == 777


# ---------------------------------------------------------------------- transactions

def test_transaction_start_and_commit(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 0, 0))                            # idempotent, not transactional
    assert psm.first_unstable_offset() is None
    append(psm, data(1, 1, 0, 1, 2, txn=True))
    assert psm.first_unstable_offset() == 1 and psm.has_ongoing_txn(1)
    append(psm, data(3, 1, 0, 3, txn=True))                  # same transaction
    assert entry_of(psm, 1).current_txn_first_offset == 1
    with pytest.raises(InvalidTxnStateError):
        append(psm, data(4, 1, 0, 4))                        # not transactional while open
    info = psm.prepare_update(1, COORDINATOR)
    done = info.append(marker(4, 1, 0, abort=False))
    assert done == CompletedTxn(1, 1, 4, is_aborted=False)
    assert info.started_transactions == []
    psm.update(info)
    assert psm.last_stable_offset(done) == 5
    psm.complete_txn(done)
    assert psm.first_unstable_offset() is None and not psm.has_ongoing_txn(1)
    entry = psm.last_entry(1)
    assert entry is not None and entry.current_txn_first_offset == -1
    assert entry.last_seq == 3                    # a marker leaves the batches of its epoch
    with pytest.raises(ValueError):
        psm.complete_txn(done)                    # not ongoing any more


def test_started_transactions(psm: ProducerStateManager) -> None:
    info = psm.prepare_update(1, CLIENT)
    info.append(data(10, 1, 0, 0, txn=True))
    info.append(data(11, 1, 0, 1, txn=True))
    assert info.started_transactions == [(1, 10)]
    assert psm.first_unstable_offset() is None    # registered by update only
    psm.update(info)
    assert psm.first_unstable_offset() == 10


def test_last_stable_offset_with_two_producers(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 0, 0, txn=True))
    append(psm, data(1, 2, 0, 0, txn=True))
    append(psm, data(2, 1, 0, 1, txn=True))
    assert psm.first_unstable_offset() == 0
    info = psm.prepare_update(1, COORDINATOR)
    t1 = info.append(marker(3, 1, 0, abort=True))
    psm.update(info)
    assert t1 == CompletedTxn(1, 0, 3, True)
    assert psm.last_stable_offset(t1) == 1        # producer 2's transaction is still open
    psm.complete_txn(t1)
    assert psm.first_unstable_offset() == 1
    info = psm.prepare_update(2, COORDINATOR)
    t2 = info.append(marker(4, 2, 0, abort=False))
    psm.update(info)
    assert t2 is not None and psm.last_stable_offset(t2) == 5
    psm.complete_txn(t2)
    assert psm.first_unstable_offset() is None


def test_lso_is_computed_before_completion(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 0, 0, txn=True))
    append(psm, data(1, 2, 0, 0, txn=True))
    info = psm.prepare_update(1, COORDINATOR)
    t = info.append(marker(2, 1, 0, abort=True))
    psm.update(info)
    assert t is not None and psm.last_stable_offset(t) == 1     # producer 2 is still open
    psm.complete_txn(t)
    assert psm.first_unstable_offset() == 1


def test_marker_without_transaction(psm: ProducerStateManager) -> None:
    info = psm.prepare_update(1, COORDINATOR)
    assert info.append(marker(0, 1, 2, abort=True, coordinator_epoch=3)) is None
    psm.update(info)
    entry = psm.last_entry(1)
    assert entry is not None
    assert (entry.producer_epoch, entry.coordinator_epoch) == (2, 3)


def test_coordinator_epoch_fencing(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 0, 0, txn=True))
    append(psm, marker(1, 1, 0, abort=False, coordinator_epoch=5), origin=COORDINATOR)
    append(psm, data(2, 1, 0, 1, txn=True))
    with pytest.raises(TransactionCoordinatorFencedError):
        append(psm, marker(3, 1, 0, abort=True, coordinator_epoch=4), origin=COORDINATOR)
    assert psm.has_ongoing_txn(1)
    done = append(psm, marker(3, 1, 0, abort=True, coordinator_epoch=5), origin=COORDINATOR)
    assert done == [CompletedTxn(1, 2, 3, True)]
    # a follower applies the zombie's marker anyway
    append(psm, data(4, 1, 0, 2, txn=True))
    done = append(psm, marker(5, 1, 0, abort=True, coordinator_epoch=1), origin=REPLICATION)
    assert done == [CompletedTxn(1, 4, 5, True)]
    assert entry_of(psm, 1).coordinator_epoch == 1


def test_marker_with_an_older_producer_epoch(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 3, 0, txn=True))
    with pytest.raises(InvalidProducerEpochError):
        append(psm, marker(1, 1, 2, abort=True), origin=COORDINATOR)
    # a marker with a newer epoch (the coordinator bumped it to fence the producer) ends the
    # transaction and forgets the batches of the old epoch
    done = append(psm, marker(1, 1, 4, abort=True), origin=COORDINATOR)
    assert done == [CompletedTxn(1, 0, 1, True)]
    entry = psm.last_entry(1)
    assert entry is not None and entry.producer_epoch == 4 and entry.is_empty


def test_control_batch_that_is_not_a_marker(psm: ProducerStateManager) -> None:
    batch = BatchHeader(build_control_batch(2, 0, producer_id=1, producer_epoch=0,
                                            base_offset=0, timestamp_ms=0))
    with pytest.raises(InvalidRecordError):
        psm.prepare_update(1, COORDINATOR).append(batch)


def test_update_refuses_no_producer_id(psm: ProducerStateManager) -> None:
    with pytest.raises(ValueError):
        psm.update(psm.prepare_update(-1, CLIENT))


# ----------------------------------------------------------------------------- replay

def history() -> list[BatchHeader]:
    return [
        data(0, 1, 0, 0, 2),
        data(2, 2, 0, 0, txn=True),
        BatchHeader(build_batch([(b"k", b"v", None, 5)], base_offset=3)),   # no producer id
        data(4, 3, 0, 0, txn=True),
        marker(5, 2, 0, abort=True, coordinator_epoch=1),
        data(6, 1, 0, 2),
        data(7, 2, 0, 1, txn=True),
        marker(8, 3, 0, abort=False, coordinator_epoch=1),
        marker(9, 2, 0, abort=True, coordinator_epoch=1),
    ]


def test_apply_batches_replays_without_checks(psm: ProducerStateManager) -> None:
    seen: list[tuple[CompletedTxn, int]] = []
    done = psm.apply_batches(history(), on_complete=lambda t, lso: seen.append((t, lso)))
    assert done == [CompletedTxn(2, 2, 5, True), CompletedTxn(3, 4, 8, False),
                    CompletedTxn(2, 7, 9, True)]
    # LSOs at each marker: producer 3's transaction (4) was open at 5; at 8 producer 2's
    # second one (7); at 9 none.
    assert seen == [(done[0], 4), (done[1], 7), (done[2], 10)]
    assert psm.map_end_offset == 10
    assert psm.first_unstable_offset() is None
    assert sorted(psm.producers) == [1, 2, 3]
    assert entry_of(psm, 1).last_seq == 2
    assert entry_of(psm, 2).coordinator_epoch == 1
    # the replay accepts what a client append would refuse
    psm.apply_batches([data(10, 1, 0, 50), data(11, 1, 0, 7)])
    assert entry_of(psm, 1).last_seq == 7
    assert psm.map_end_offset == 12


def test_apply_batches_leaves_open_transactions_ongoing(psm: ProducerStateManager) -> None:
    psm.apply_batches(history()[:4])
    assert psm.first_unstable_offset() == 2
    assert psm.has_ongoing_txn(2) and psm.has_ongoing_txn(3) and not psm.has_ongoing_txn(1)
    assert psm.map_end_offset == 5


# -------------------------------------------------------------------------- snapshots

def test_snapshot_bytes_are_kafkas(tmp_path: Path) -> None:
    psm = manager(tmp_path)
    append(psm, data(0, 1000, 2, 10, 3, ts=5000))               # seq 10..12, offsets 0..2
    append(psm, data(3, 2000, 0, 0, 2, txn=True, ts=6000))      # open txn from 3
    append(psm, marker(5, 3000, 1, abort=False, coordinator_epoch=7, ts=7000),
           origin=COORDINATOR)                                  # no batches: -1, -1, 0
    path = psm.take_snapshot()
    assert path == tmp_path / "00000000000000000006.snapshot"
    expected = kafka_snapshot([
        (1000, 2, 12, 2, 2, 5000, -1, -1),
        (2000, 0, 1, 4, 1, 6000, -1, 3),
        (3000, 1, -1, -1, 0, 7000, 7, -1),
    ])
    assert path.read_bytes() == expected
    assert not list(tmp_path.glob("*.tmp"))
    assert psm.take_snapshot() is None              # nothing applied since
    assert psm.latest_snapshot_offset() == psm.oldest_snapshot_offset() == 6


def test_snapshot_round_trip(tmp_path: Path) -> None:
    psm = manager(tmp_path)
    psm.apply_batches(history()[:7])
    psm.take_snapshot()
    again = manager(tmp_path)
    again.truncate_and_reload(0, 8)
    assert again.map_end_offset == 8
    assert sorted(again.producers) == [1, 2, 3]
    for pid, entry in psm.producers.items():
        loaded = again.producers[pid]
        assert (loaded.producer_epoch, loaded.coordinator_epoch, loaded.last_timestamp,
                loaded.current_txn_first_offset, loaded.last_seq, loaded.last_data_offset) == \
            (entry.producer_epoch, entry.coordinator_epoch, entry.last_timestamp,
             entry.current_txn_first_offset, entry.last_seq, entry.last_data_offset)
        assert len(loaded.batch_metadata) <= 1      # as Kafka: the last batch only
    assert again.first_unstable_offset() == psm.first_unstable_offset() == 4
    # the replay goes on from the snapshot
    done = again.apply_batches(history()[7:])
    assert done == [CompletedTxn(3, 4, 8, False), CompletedTxn(2, 7, 9, True)]
    assert again.first_unstable_offset() is None


def test_encode_decode_round_trip() -> None:
    entries = [ProducerStateEntry(7, 2, 3, 1234, 50, [BatchMetadata(9, 60, 2, 1234)]),
               ProducerStateEntry(8, 0)]
    assert decode_snapshot(encode_snapshot(entries)) == entries
    assert encode_snapshot([]) == kafka_snapshot([])


def test_hand_built_snapshot_is_loaded(tmp_path: Path) -> None:
    (tmp_path / "00000000000000000100.snapshot").write_bytes(kafka_snapshot([
        (5, 3, 40, 90, 4, 1_000_000, 2, -1),
        (6, 0, 7, 99, 0, 1_000_000, 4, 95),
        (7, 1, -1, -1, 0, 1_000_000, 9, -1),
    ]))
    psm = manager(tmp_path)
    psm.truncate_and_reload(0, 100)
    assert psm.map_end_offset == 100
    e5 = psm.last_entry(5)
    assert e5 is not None and list(e5.batch_metadata) == [BatchMetadata(40, 90, 4, 1_000_000)]
    assert (e5.producer_epoch, e5.coordinator_epoch, e5.first_seq) == (3, 2, 36)
    assert psm.first_unstable_offset() == 95 and psm.has_ongoing_txn(6)
    e7 = psm.last_entry(7)
    assert e7 is not None and e7.is_empty and e7.coordinator_epoch == 9
    # the loaded state checks the next client batch
    with pytest.raises(OutOfOrderSequenceNumberError):
        append(psm, data(100, 5, 3, 42))
    append(psm, data(100, 5, 3, 41))
    with pytest.raises(InvalidTxnStateError):
        append(psm, data(101, 6, 0, 8))


def test_decode_rejects_damaged_snapshots() -> None:
    good = kafka_snapshot([(5, 3, 40, 90, 4, 1000, 2, -1)])
    assert decode_snapshot(good)[0].producer_id == 5
    flipped = bytearray(good)
    flipped[20] ^= 1
    bad_version = struct.pack(">h", 2) + good[2:]
    for damaged in (bytes(flipped), bad_version, good[:-1], good[:5], b""):
        with pytest.raises(CorruptSnapshotError):
            decode_snapshot(damaged)
    # a count that does not match the entries, with a valid CRC
    body = struct.pack(">i", 2) + good[10:]
    with pytest.raises(CorruptSnapshotError):
        decode_snapshot(struct.pack(">hI", 1, crc32c_reference(body)) + body)


def write_snapshots(directory: Path, offsets: list[int]) -> None:
    for i, offset in enumerate(offsets):
        (directory / f"{offset:020d}.snapshot").write_bytes(
            kafka_snapshot([(i + 1, 0, 0, offset - 1, 0, 1_000_000, -1, -1)]))


def snapshot_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("*.snapshot"))


def test_corrupt_snapshot_is_skipped_and_deleted(tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    write_snapshots(tmp_path, [10, 20])
    damaged = bytearray((tmp_path / "00000000000000000020.snapshot").read_bytes())
    damaged[-1] ^= 0xFF
    (tmp_path / "00000000000000000020.snapshot").write_bytes(bytes(damaged))
    psm = manager(tmp_path)
    with caplog.at_level(logging.WARNING, logger="kafkapy.log"):
        psm.truncate_and_reload(0, 30)
    assert "00000000000000000020.snapshot" in caplog.text
    assert psm.map_end_offset == 10 and list(psm.producers) == [1]
    assert snapshot_files(tmp_path) == ["00000000000000000010.snapshot"]


def test_truncate_and_reload_picks_the_snapshot(tmp_path: Path) -> None:
    write_snapshots(tmp_path, [10, 20, 30])
    psm = manager(tmp_path)
    psm.truncate_and_reload(0, 25)             # 30 is past the end
    assert psm.map_end_offset == 20 and list(psm.producers) == [2]
    assert snapshot_files(tmp_path) == ["00000000000000000010.snapshot",
                                        "00000000000000000020.snapshot"]
    psm.truncate_and_reload(0, 20)             # exactly at the end: kept and used
    assert psm.map_end_offset == 20 and list(psm.producers) == [2]
    psm.truncate_and_reload(10, 15)            # the start is not kept either (as Kafka)
    assert psm.map_end_offset == 10 and psm.producers == {}
    assert snapshot_files(tmp_path) == []


def test_truncate_and_reload_at_the_map_end_keeps_the_state(tmp_path: Path) -> None:
    write_snapshots(tmp_path, [10])
    psm = manager(tmp_path)
    psm.truncate_and_reload(0, 10)
    append(psm, data(10, 9, 0, 0))
    assert psm.map_end_offset == 11
    psm.truncate_and_reload(5, 11)             # the log start moved; the state stays
    assert sorted(psm.producers) == [1, 9] and psm.map_end_offset == 11
    psm.truncate_and_reload(0, 10)             # truncation below the map end: reload
    assert sorted(psm.producers) == [1] and psm.map_end_offset == 10


def test_empty_directory_reload(tmp_path: Path) -> None:
    psm = manager(tmp_path)
    psm.truncate_and_reload(40, 100)
    assert psm.map_end_offset == 40 and psm.latest_snapshot_offset() is None
    assert psm.take_snapshot() is None       # 40 was not applied since a snapshot: Kafka
    psm.apply_batches([data(40, 1, 0, 0)])
    assert psm.take_snapshot() == tmp_path / "00000000000000000041.snapshot"


def test_snapshot_housekeeping(tmp_path: Path) -> None:
    write_snapshots(tmp_path, [10, 20, 30])
    (tmp_path / "00000000000000000040.snapshot.tmp").write_bytes(b"half")
    psm = manager(tmp_path)
    assert not (tmp_path / "00000000000000000040.snapshot.tmp").exists()
    assert (psm.oldest_snapshot_offset(), psm.latest_snapshot_offset()) == (10, 30)
    psm.delete_snapshots_before(30)
    assert snapshot_files(tmp_path) == ["00000000000000000030.snapshot"]
    psm.truncate_and_reload(0, 30)
    psm.update_map_end_offset(35)
    assert psm.take_snapshot() == tmp_path / "00000000000000000035.snapshot"
    psm.truncate_fully_and_start_at(50)
    assert snapshot_files(tmp_path) == [] and psm.producers == {}
    assert psm.map_end_offset == 50 and psm.first_unstable_offset() is None
    assert psm.take_snapshot() == tmp_path / "00000000000000000050.snapshot"


def test_truncate_fully_forgets_transactions(psm: ProducerStateManager) -> None:
    append(psm, data(0, 1, 0, 0, txn=True))
    psm.truncate_fully_and_start_at(100)
    assert psm.first_unstable_offset() is None and not psm.has_ongoing_txn(1)
    append(psm, data(100, 1, 0, 5))            # unknown again: any sequence


# ----------------------------------------------------------------------------- expiry

def test_expiry(tmp_path: Path) -> None:
    clock = Clock(10_000)
    psm = manager(tmp_path, expiration_ms=100, clock=clock)
    append(psm, data(0, 1, 0, 0, ts=1000))
    append(psm, data(1, 2, 0, 0, ts=1050))
    append(psm, data(2, 3, 0, 0, txn=True, ts=500))
    psm.remove_expired_producers(1099)
    assert sorted(psm.producers) == [1, 2, 3]
    psm.remove_expired_producers(1100)
    assert sorted(psm.producers) == [2, 3]
    psm.remove_expired_producers(10**9)
    assert sorted(psm.producers) == [3]        # an open transaction keeps its producer
    assert [e.producer_id for e in psm.active_producers()] == [3]


def test_expired_producers_are_not_loaded(tmp_path: Path) -> None:
    (tmp_path / "00000000000000000010.snapshot").write_bytes(kafka_snapshot([
        (1, 0, 0, 1, 0, 1000, -1, -1),
        (2, 0, 0, 2, 0, 1900, -1, -1),
        (3, 0, 0, 3, 0, 0, -1, 3),
    ]))
    psm = manager(tmp_path, expiration_ms=1000, clock=Clock(2000))
    psm.truncate_and_reload(0, 10)
    assert sorted(psm.producers) == [2, 3]


def test_entry_keeps_five_batches() -> None:
    entry = ProducerStateEntry(1, 0, batch_metadata=[BatchMetadata(i, i, 0, 0)
                                                     for i in range(8)])
    assert [b.last_seq for b in entry.batch_metadata] == [3, 4, 5, 6, 7]
    entry.add_batch(0, 8, 8, 0, 0)
    assert [b.last_seq for b in entry.batch_metadata] == [4, 5, 6, 7, 8]
    assert ProducerStateEntry.empty(3).producer_epoch == NO_PRODUCER_EPOCH

