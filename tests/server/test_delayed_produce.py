"""DelayedProduce over a real Partition and Log (pure logic, no broker): an acks=all append
is answered without error only once the high watermark has passed it.

The regression (issue 18's clean bounce): a broker stopping with acks=all produces parked
force-completed them through the purgatory's shutdown, and they were answered as written
although no follower had them; the new leader lacked them, so acknowledged records were lost.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import NotLeaderOrFollowerError
from kafkapy.log.config import LogConfig
from kafkapy.log.log import Log
from kafkapy.protocol.records import build_batch
from kafkapy.server.delayed_produce import DelayedProduce
from kafkapy.server.partition import Partition, PartitionState
from kafkapy.server.replica_manager import ProducePartitionResult

TP = TopicPartition("t", 0)


class Partitions:
    """What DelayedProduce reads of the ReplicaManager: its partitions."""

    def __init__(self, partition: Partition) -> None:
        self.partitions = {partition.tp: partition}


def parked(tmp: Path) -> tuple[Partition, DelayedProduce, ProducePartitionResult]:
    log = Log.open(tmp / "t-0", LogConfig.resolve({}))
    p = Partition(TP, uuid.uuid4(), log, 1, leader=False)
    p.alter_isr = lambda partition, change: True
    p.make_leader(PartitionState(1, 0, (1, 2), 0, (1, 2)), now_ms=0)
    info = p.append_records_to_leader(
        bytearray(build_batch([(None, b"v", None, 1_700_000_000_000)] * 3)), 1)
    result = ProducePartitionResult(base_offset=info.first_offset,
                                    last_offset=info.last_offset)
    op = DelayedProduce(30_000, Partitions(p), {TP: result})  # type: ignore[arg-type]
    return p, op, result


def test_replicated_then_answered_without_error(tmp_path: Path) -> None:
    p, op, result = parked(tmp_path)
    assert not op.try_complete()                    # follower 2 has nothing yet
    p.update_follower_fetch_state(2, 3, 0, 10, 3)
    assert op.try_complete()
    assert result.error is None


def test_force_completed_before_replication_is_not_answered_as_written(tmp_path: Path) -> None:
    _p, op, result = parked(tmp_path)
    assert not op.try_complete()
    op.force_complete()                             # what the purgatory's shutdown does
    assert isinstance(result.error, NotLeaderOrFollowerError)
