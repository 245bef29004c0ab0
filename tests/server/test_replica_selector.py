"""KIP-392 replica selection (pure logic, over real partitions and logs, no brokers): Kafka's
RackAwareReplicaSelector and LeaderSelector, the candidates the leader offers them
(findPreferredReadReplica: alive, in the committed ISR, holding the fetch offset), the leader
meaning "no redirect", ``replica.selector.class`` validation, and a follower's ReplicaManager
serving Fetch v11+ consumers up to its own high watermark / LSO (v10: leader only)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import REPLICA_SELECTOR_CLASSES, BrokerConfig
from kafkapy.errors import (
    InvalidConfigError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    UnknownLeaderEpochError,
)
from kafkapy.log.config import LogConfig
from kafkapy.log.log import Log
from kafkapy.log.log_manager import LogManager
from kafkapy.protocol.message_classes import LeaderAndIsrPartitionState, LeaderAndIsrRequest
from kafkapy.protocol.records import build_batch, scan_batches
from kafkapy.server.partition import READ_COMMITTED, Partition, PartitionState
from kafkapy.server.replica_manager import (
    FetchParams,
    FetchPartitionRequest,
    FetchPartitionResult,
    ReplicaManager,
)
from kafkapy.server.replica_selector import (
    LEADER_SELECTOR,
    RACK_AWARE_SELECTOR,
    SELECTORS,
    ClientMetadata,
    LeaderSelector,
    PartitionView,
    RackAwareReplicaSelector,
    ReplicaSelector,
    ReplicaView,
    create_replica_selector,
    preferred_read_replica,
)

TP = TopicPartition("t", 0)
RACKS: dict[int, str | None] = {1: "r1", 2: "r2", 3: "r3", 4: "r2"}


def view(broker: int, leo: int = 10, lag_ms: int = 0) -> ReplicaView:
    return ReplicaView(broker, RACKS.get(broker), leo, lag_ms)


def select(rack: str, replicas: list[ReplicaView], leader: ReplicaView) -> int | None:
    chosen = RackAwareReplicaSelector().select("t", 0, ClientMetadata(rack),
                                               PartitionView(tuple(replicas), leader))
    return None if chosen is None else chosen.broker_id


# ================================================================= the selectors


def test_rack_aware_picks_the_replica_in_the_clients_rack() -> None:
    leader = view(1)
    assert select("r2", [leader, view(2), view(3)], leader) == 2
    assert select("r3", [leader, view(2), view(3)], leader) == 3


def test_rack_aware_prefers_the_leader_in_its_rack_or_without_a_match() -> None:
    leader = view(1)
    assert select("r1", [leader, view(2), view(3)], leader) == 1      # the leader's rack
    assert select("r9", [leader, view(2), view(3)], leader) == 1      # no replica there
    assert select("", [leader, view(2), view(3)], leader) == 1        # no client.rack
    # A leader without a rack, a client rack no replica has: the leader.
    rackless = ReplicaView(5, None, 10, 0)
    assert select("r7", [rackless, view(2)], rackless) == 5


def test_rack_aware_ties_go_to_the_most_caught_up() -> None:
    leader = view(1, leo=20)
    # Brokers 2 and 4 are both in r2: the larger log end offset wins...
    assert select("r2", [leader, view(2, leo=15), view(4, leo=12)], leader) == 2
    assert select("r2", [leader, view(2, leo=12), view(4, leo=15)], leader) == 4
    # ... then the more recent catch-up ...
    assert select("r2", [leader, view(2, 15, lag_ms=50), view(4, 15, lag_ms=10)], leader) == 4
    assert select("r2", [leader, view(2, 15, lag_ms=10), view(4, 15, lag_ms=50)], leader) == 2
    # ... then the larger broker id (Kafka's comparator, max over it).
    assert select("r2", [leader, view(2, 15, 10), view(4, 15, 10)], leader) == 4


def test_leader_selector_always_answers_the_leader() -> None:
    leader = view(1)
    chosen = LeaderSelector().select("t", 0, ClientMetadata("r2"),
                                     PartitionView((leader, view(2)), leader))
    assert chosen == leader


def test_selector_names_are_kafkas_and_agree_with_the_config() -> None:
    assert set(SELECTORS) == set(REPLICA_SELECTOR_CLASSES) == {
        "org.apache.kafka.common.replica.RackAwareReplicaSelector",
        "org.apache.kafka.common.replica.LeaderSelector"}
    assert create_replica_selector(None) is None
    assert isinstance(create_replica_selector(RACK_AWARE_SELECTOR), RackAwareReplicaSelector)
    assert isinstance(create_replica_selector(LEADER_SELECTOR), LeaderSelector)
    with pytest.raises(ValueError, match="not one kafkapy implements"):
        create_replica_selector("com.example.MySelector")


# ======================================================== replica.selector.class


def test_the_setting_defaults_to_none_and_takes_kafkas_class_names() -> None:
    assert BrokerConfig().replica_selector_class is None
    for name in (RACK_AWARE_SELECTOR, LEADER_SELECTOR):
        config = BrokerConfig.from_properties({"replica.selector.class": name})
        assert config.replica_selector_class == name
        (entry,) = config.describe(["replica.selector.class"])
        assert entry.value == name


@pytest.mark.parametrize("name", ["com.example.MySelector", "RackAwareReplicaSelector", ""])
def test_an_unknown_selector_class_is_a_config_error(name: str) -> None:
    with pytest.raises(InvalidConfigError) as e:
        BrokerConfig.from_properties({"replica.selector.class": name})
    message = str(e.value)
    assert f"Invalid value {name!r} for configuration replica.selector.class" in message
    assert "cannot load Java classes" in message and RACK_AWARE_SELECTOR in message


# ============================================ findPreferredReadReplica on a partition


def leader_partition(tmp: Path, isr: tuple[int, ...] = (1, 2, 3), records: int = 10
                     ) -> Partition:
    """Broker 1 leads t-0 (replicas 1, 2, 3) with ``records`` records at time 1000."""
    log = Log.open(tmp / "t-0", LogConfig.resolve({}))
    p = Partition(TP, uuid.uuid4(), log, 1, leader=False)
    p.alter_isr = lambda _partition, _change: True
    p.make_leader(PartitionState(1, 0, isr, 0, (1, 2, 3)), now_ms=1000)
    p.append_records_to_leader(bytearray(build_batch(
        [(None, b"v%d" % i, None, 1_700_000_000_000) for i in range(records)])), 1)
    return p


def preferred(p: Partition, rack: str, fetch_offset: int = 0,
              racks: dict[int, str | None] | None = None,
              selector: ReplicaSelector | None = None) -> int | None:
    return preferred_read_replica(
        selector or RackAwareReplicaSelector(), p, ClientMetadata(rack), fetch_offset, 2000,
        RACKS if racks is None else racks)


def test_the_leader_redirects_to_the_in_sync_follower_in_the_clients_rack(tmp_path: Path
                                                                          ) -> None:
    p = leader_partition(tmp_path)
    p.update_follower_fetch_state(2, 10, 0, 1500, 10)
    p.update_follower_fetch_state(3, 10, 0, 1500, 10)
    assert preferred(p, "r2") == 2
    assert preferred(p, "r3") == 3
    # The leader's own rack, no client rack, an unknown rack, the LeaderSelector: no redirect.
    assert preferred(p, "r1") is None
    assert preferred(p, "") is None
    assert preferred(p, "r9") is None
    assert preferred(p, "r2", selector=LeaderSelector()) is None


def test_only_alive_in_sync_replicas_holding_the_offset_are_candidates(tmp_path: Path
                                                                       ) -> None:
    p = leader_partition(tmp_path, isr=(1, 3))          # 2 is out of the ISR
    p.update_follower_fetch_state(2, 10, 0, 1500, 10)
    p.update_follower_fetch_state(3, 4, 0, 1500, 10)    # 3 holds offsets [0, 4]
    assert preferred(p, "r2") is None                   # caught up, but not in the ISR
    assert preferred(p, "r3", fetch_offset=4) == 3
    assert preferred(p, "r3", fetch_offset=5) is None   # beyond its log end
    # Not alive (not in the metadata cache's live brokers on this listener): not offered.
    assert preferred(p, "r3", fetch_offset=4, racks={1: "r1", 2: "r2"}) is None
    # Below the follower's log start offset.
    p.update_follower_fetch_state(3, 4, 3, 1600, 10)
    assert preferred(p, "r3", fetch_offset=2) is None
    assert preferred(p, "r3", fetch_offset=3) == 3


def test_a_follower_with_an_unknown_position_is_not_offered(tmp_path: Path) -> None:
    p = leader_partition(tmp_path)          # no follower fetched yet: their LEO is unknown
    assert preferred(p, "r2") is None


def test_only_the_leader_redirects(tmp_path: Path) -> None:
    log = Log.open(tmp_path / "t-0", LogConfig.resolve({}))
    p = Partition(TP, uuid.uuid4(), log, 2, leader=False)
    p.make_follower(PartitionState(1, 0, (1, 2, 3), 0, (1, 2, 3)))
    assert preferred_read_replica(RackAwareReplicaSelector(), p, ClientMetadata("r3"), 0,
                                  2000, RACKS) is None


# ================================================ a follower serving consumers (KIP-392)


def follower_manager(tmp: Path) -> tuple[ReplicaManager, LogManager]:
    """Broker 2 follows t-0 (leader 1, not fetching: no live leader is named) and holds
    offsets 0-4 plain, 5-6 of an open transaction, with the high watermark at 7."""
    lm = LogManager([tmp], broker_props={})
    lm.load()
    rm = ReplicaManager(2, lm)
    answer = rm.become_leader_or_follower(LeaderAndIsrRequest(
        controller_id=1, controller_epoch=1, ungrouped_partition_states=[
            LeaderAndIsrPartitionState(topic_name="t", partition_index=0, leader=1,
                                       leader_epoch=0, isr=[1, 2], replicas=[1, 2])]), 1)
    assert answer.partition_errors[0].error_code == 0
    p = rm.partitions[TP]
    assert not p.is_leader
    p.append_as_follower(build_batch([(None, b"v%d" % i, None, 1_700_000_000_000)
                                      for i in range(5)], partition_leader_epoch=0))
    p.append_as_follower(build_batch([(None, b"t%d" % i, None, 1_700_000_000_000)
                                      for i in range(2)], base_offset=5, producer_id=7,
                                     producer_epoch=0, base_sequence=0,
                                     is_transactional=True, partition_leader_epoch=0))
    p.log.update_high_watermark(7)
    return rm, lm


def read(rm: ReplicaManager, offset: int, *, client: ClientMetadata | None,
         isolation: int = 0, epoch: int = -1) -> FetchPartitionResult:
    params = FetchParams(max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                         isolation_level=isolation, client_metadata=client)
    ((_tp, result),) = rm.read_from_log(params, [FetchPartitionRequest(TP, offset, 1 << 20,
                                                                       epoch)])
    return result


def read_offsets(result: FetchPartitionResult) -> list[int]:
    assert result.error is None and result.data is not None
    raw = b"".join(s.read() for s in result.data.slices)
    return [o for b in scan_batches(raw).batches for o in range(b.base_offset, b.next_offset)]


def test_a_follower_serves_v11_consumers_up_to_its_high_watermark_and_lso(tmp_path: Path
                                                                         ) -> None:
    rm, lm = follower_manager(tmp_path)
    try:
        # No client metadata (Fetch v10 and older): leader only, as before KIP-392.
        assert isinstance(read(rm, 0, client=None).error, NotLeaderOrFollowerError)
        client = ClientMetadata("r2")
        assert read_offsets(read(rm, 0, client=client)) == list(range(7))        # to the HW
        committed = read(rm, 0, client=client, isolation=READ_COMMITTED)
        assert committed.last_stable_offset == 5
        assert read_offsets(committed) == list(range(5))                         # to the LSO
        assert read_offsets(read(rm, 7, client=client)) == []
        # Kafka's errors: past the log end, a stale or unknown leader epoch.
        assert isinstance(read(rm, 8, client=client).error, OffsetOutOfRangeError)
        assert read_offsets(read(rm, 0, client=client, epoch=0)) == list(range(7))
        assert isinstance(read(rm, 0, client=client, epoch=1).error, UnknownLeaderEpochError)
        # A follower never names a preferred replica, selector or not.
        rm.replica_selector = RackAwareReplicaSelector()
        assert read(rm, 0, client=client).preferred_read_replica == -1
    finally:
        lm.close()
