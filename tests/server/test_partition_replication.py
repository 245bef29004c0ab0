"""Partition's replication rules over a real log, without brokers (pure logic): the high
watermark over the maximal ISR (KIP-497), Kafka's caught-up rule, ISR expansion and shrink
proposals, the controller's answers, follower appends that keep the leader's bytes."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import NotEnoughReplicasError, NotLeaderOrFollowerError
from kafkapy.log.config import LogConfig
from kafkapy.log.log import Log
from kafkapy.protocol.records import build_batch
from kafkapy.server.partition import Partition, PartitionState, PendingIsr

TP = TopicPartition("t", 0)


def batch(n: int = 1) -> bytearray:
    return bytearray(build_batch([(None, b"v%d" % i, None, 1_700_000_000_000)
                                  for i in range(n)]))


class Recorder:
    def __init__(self, accept: bool = True) -> None:
        self.changes: list[PendingIsr] = []
        self.accept = accept

    def __call__(self, partition: Partition, change: PendingIsr) -> bool:
        self.changes.append(change)
        return self.accept


def new_partition(tmp: Path, node: int = 1, **config: object) -> tuple[Partition, Recorder]:
    log = Log.open(tmp / "t-0", LogConfig.resolve(config))
    p = Partition(TP, uuid.uuid4(), log, node, leader=False)
    rec = Recorder()
    p.alter_isr = rec
    return p, rec


def test_the_high_watermark_waits_for_the_maximal_isr(tmp_path: Path) -> None:
    p, rec = new_partition(tmp_path)
    assert p.make_leader(PartitionState(1, 0, (1, 2), 0, (1, 2, 3)), now_ms=1000)
    p.append_records_to_leader(batch(3), 1)
    assert (p.log_end_offset, p.high_watermark) == (3, 0)
    assert p.update_follower_fetch_state(2, 2, 0, 1100, 3)
    assert p.high_watermark == 2
    # Follower 3 is not in the ISR, and below the HW: it holds nothing back, joins nothing.
    assert not p.update_follower_fetch_state(3, 1, 0, 1100, 3)
    assert rec.changes == [] and p.high_watermark == 2
    # 3 catches up to the HW (>= the epoch's start offset 0): an expansion is proposed; while
    # it is pending, 3 counts for the high watermark.
    assert not p.update_follower_fetch_state(3, 2, 0, 1200, 3)
    assert rec.changes == [PendingIsr((1, 2, 3), 0, 0)]
    assert p.maximal_isr == [1, 2, 3] and p.isr == [1, 2]
    assert not p.update_follower_fetch_state(2, 3, 0, 1300, 3)
    assert p.high_watermark == 2                    # 3 is at 2
    # Only one change at a time.
    p.maybe_shrink_isr(1_000_000, 10)
    assert len(rec.changes) == 1
    # The controller commits it.
    change = rec.changes[0]
    assert not p.on_alter_partition(change, 0, 0, [1, 2, 3], 1, 1400)
    assert (p.isr, p.partition_epoch, p.pending_isr) == ([1, 2, 3], 1, None)
    assert p.update_follower_fetch_state(3, 3, 0, 1500, 3)
    assert p.high_watermark == 3


def test_caught_up_is_kafkas_rule_and_shrink_drops_laggards(tmp_path: Path) -> None:
    p, rec = new_partition(tmp_path)
    p.make_leader(PartitionState(1, 0, (1, 2, 3), 4, (1, 2, 3)), now_ms=0)
    p.append_records_to_leader(batch(), 1)                  # LEO 1
    p.update_follower_fetch_state(2, 1, 0, 100, 1)          # at the LEO: caught up at 100
    p.update_follower_fetch_state(3, 0, 0, 100, 1)          # behind: not caught up
    p.append_records_to_leader(batch(), 1)                  # LEO 2
    # 3 now fetches offset 1: the leader's LEO at its previous fetch: caught up as of 100.
    p.update_follower_fetch_state(3, 1, 0, 900, 2)
    assert p.followers[3].last_caught_up_ms == 100
    assert p.followers[2].last_caught_up_ms == 100
    p.update_follower_fetch_state(2, 2, 0, 1000, 2)
    assert p.out_of_sync_replicas(1150, 1000) == [3]
    p.maybe_shrink_isr(1150, 1000)
    assert rec.changes == [PendingIsr((1, 2), 0, 4)]
    # While the shrink is pending, 3 still holds the HW (maximal ISR = committed ISR).
    assert p.maximal_isr == [1, 2, 3] and p.high_watermark == 1
    assert p.on_alter_partition(rec.changes[0], 0, 0, [1, 2], 5, 1200)
    assert (p.isr, p.high_watermark) == ([1, 2], 2)


def test_controller_refusals(tmp_path: Path) -> None:
    p, rec = new_partition(tmp_path)
    p.make_leader(PartitionState(1, 2, (1, 2), 7, (1, 2)), now_ms=0)
    p.maybe_shrink_isr(10_000, 1000)
    [change] = rec.changes
    # INVALID_UPDATE_VERSION: the change stays pending (Kafka: it may have been applied);
    # nothing more is proposed until a LeaderAndIsr.
    assert not p.on_alter_partition(change, 95, -1, [], -1, 10_000)
    assert p.pending_isr is change and p.isr == [1, 2]
    p.maybe_shrink_isr(20_000, 1000)
    assert len(rec.changes) == 1
    p.make_leader(PartitionState(1, 3, (1, 2), 8, (1, 2)), now_ms=20_000)
    p.maybe_shrink_isr(40_000, 1000)
    assert rec.changes[-1] == PendingIsr((1,), 3, 8)
    # An answer for an older leader epoch is not applied.
    assert not p.on_alter_partition(rec.changes[-1], 0, 2, [1], 9, 40_000)
    assert p.isr == [1, 2]


def test_followers_refuse_produce_and_keep_the_leaders_bytes(tmp_path: Path) -> None:
    leader, _ = new_partition(tmp_path / "a")
    leader.make_leader(PartitionState(1, 5, (1,), 0, (1, 2)), now_ms=0)
    leader.append_records_to_leader(batch(2), 1)
    leader.append_records_to_leader(batch(3), 1)
    data = leader.read(0, 1 << 20, 0, True, replica=True).read()
    follower, _ = new_partition(tmp_path / "b", node=2)
    follower.make_follower(PartitionState(1, 5, (1,), 0, (1, 2)))
    with pytest.raises(NotLeaderOrFollowerError):
        follower.append_records_to_leader(batch(), 1)
    # A fetch response cut in the middle of the second batch: only the first is appended.
    follower.append_as_follower(memoryview(data)[:len(data) - 5])
    assert follower.log_end_offset == 2
    follower.append_as_follower(memoryview(data)[follower.log.size:])
    assert follower.log_end_offset == 5
    assert follower.log.read(0, 1 << 20, None).read() == data
    assert [(e.epoch, e.start_offset) for e in follower.log.epochs.entries] == [(5, 0)]
    # min.insync.replicas for acks=all on the leader.
    strict, _ = new_partition(tmp_path / "c", **{"min.insync.replicas": "2"})
    strict.make_leader(PartitionState(1, 0, (1,), 0, (1, 2)), now_ms=0)
    with pytest.raises(NotEnoughReplicasError):
        strict.append_records_to_leader(batch(), -1)
    strict.append_records_to_leader(batch(), 1)


def test_end_offset_for_epoch_is_kafkas(tmp_path: Path) -> None:
    p, _ = new_partition(tmp_path)
    cache = p.log.epochs
    assert cache.end_offset_for(3, 100) == (-1, -1)             # no entries
    for epoch, start in ((2, 10), (4, 20), (7, 50)):
        cache.assign(epoch, start)
    assert cache.end_offset_for(7, 100) == (7, 100)             # the latest: the LEO
    assert cache.end_offset_for(4, 100) == (4, 50)
    assert cache.end_offset_for(5, 100) == (4, 50)              # between: the floor epoch
    assert cache.end_offset_for(1, 100) == (1, 10)              # older than every entry
    assert cache.end_offset_for(8, 100) == (-1, -1)             # newer than the latest
    assert cache.end_offset_for(-1, 100) == (-1, -1)


@pytest.mark.parametrize("error", [95, 74, 6, 3])
def test_a_refused_expansion_still_holds_the_high_watermark(tmp_path: Path, error: int) -> None:
    """Kafka's handleAlterPartitionError: after INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH,
    NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION the controller may have applied the
    expansion (or put the new member in the ISR of a later epoch, even made it leader), so
    the member keeps counting for the high watermark until a LeaderAndIsr."""
    p, rec = new_partition(tmp_path)
    p.make_leader(PartitionState(1, 0, (1, 2), 0, (1, 2, 3)), now_ms=0)
    p.append_records_to_leader(batch(2), 1)                 # LEO 2
    p.update_follower_fetch_state(2, 2, 0, 100, 2)          # HW 2
    p.update_follower_fetch_state(3, 2, 0, 100, 2)          # caught up: expansion proposed
    [change] = rec.changes
    assert change.new_isr == (1, 2, 3) and p.high_watermark == 2
    assert not p.on_alter_partition(change, error, -1, [], -1, 200)
    assert p.maximal_isr == [1, 2, 3]
    p.append_records_to_leader(batch(3), 1)                 # LEO 5; 3 stays at 2
    assert not p.update_follower_fetch_state(2, 5, 0, 300, 5)
    assert p.high_watermark == 2                            # not past 3's log end
    # Only OPERATION_NOT_ATTEMPTED / INELIGIBLE_REPLICA say it was not applied anywhere.


@pytest.mark.parametrize("error", [55, 107])
def test_an_expansion_certainly_not_applied_goes_back(tmp_path: Path, error: int) -> None:
    p, rec = new_partition(tmp_path)
    p.make_leader(PartitionState(1, 0, (1, 2), 0, (1, 2, 3)), now_ms=0)
    p.update_follower_fetch_state(3, 0, 0, 100, 0)
    [change] = rec.changes
    assert not p.on_alter_partition(change, error, -1, [], -1, 200)
    assert p.pending_isr is None and p.maximal_isr == [1, 2]


@pytest.mark.parametrize("error", [55, 107])
def test_a_refused_expansion_releases_the_high_watermark(tmp_path: Path, error: int) -> None:
    """A shutting-down broker, caught up, is proposed for the ISR and dies; the leader's
    appends reach the other in-sync follower but the HW waits for the pending member. The
    refusal (INELIGIBLE_REPLICA from the new controller) moves the HW at once: no further
    fetch need change a log end for acks=all produces to complete."""
    p, rec = new_partition(tmp_path)
    p.make_leader(PartitionState(1, 0, (1, 3), 0, (1, 2, 3)), now_ms=0)
    p.update_follower_fetch_state(2, 0, 0, 100, 0)          # 2 caught up: proposed
    [change] = rec.changes
    p.append_records_to_leader(batch(4), 1)                 # LEO 4
    assert not p.update_follower_fetch_state(3, 4, 0, 200, 4)
    assert p.high_watermark == 0                            # 2 (pending) is at 0
    assert not p.update_follower_fetch_state(3, 4, 0, 300, 4)
    assert p.on_alter_partition(change, error, -1, [], -1, 400)
    assert p.high_watermark == 4 and p.maximal_isr == [1, 3]
