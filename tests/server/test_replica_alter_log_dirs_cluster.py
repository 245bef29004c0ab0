"""AlterReplicaLogDirs (34) on a replicated cluster (kafkapy.Cluster: a real ZooKeeper, broker
processes with two log dirs each), through kafka-python's admin client:

- the leader's and the follower's replica of one partition move at the same time while a
  producer writes with acks=all (min.insync.replicas 2) and a consumer reads: nothing lost,
  duplicated or reordered, the ISR stays whole, the files are in the new dirs only;
- a broker that does not host a replica answers REPLICA_NOT_AVAILABLE and remembers the dir:
  when a reassignment later gives it the replica (LeaderAndIsr), its log is created there.
"""

from __future__ import annotations

from pathlib import Path

import kafka.errors as kerrors
from kafka import TopicPartition as KTopicPartition

import kafkapy
from tests.server.test_replica_alter_log_dirs_manager import (
    TOPIC,
    Workload,
    admin_for,
    alter,
    anomalies,
    holding,
    wait_until,
)

TIMEOUT = 60.0


def test_leader_and_follower_move_under_load(tmp_path: Path) -> None:
    dirs = {b: [tmp_path / f"b{b}-one", tmp_path / f"b{b}-two"] for b in (1, 2)}
    settings = {"offsets.topic.num.partitions": 1, "offsets.topic.replication.factor": 2,
                "auto.leader.rebalance.enable": "false", "min.insync.replicas": 2,
                "log.segment.bytes": 1 << 20, "log.segment.delete.delay.ms": 200,
                "replica.alter.log.dirs.io.max.bytes.per.second": 30_000_000}
    with kafkapy.Cluster(2, settings, timeout=TIMEOUT, broker_settings={
            b: {"log.dirs": ",".join(map(str, d))} for b, d in dirs.items()}) as c:
        c.create_topic(TOPIC, {0: [1, 2]})
        assert c.wait_for_leader(TOPIC, 0, timeout=TIMEOUT) == 1
        c.wait_for_isr(TOPIC, 0, 2, timeout=TIMEOUT)
        admin = admin_for(c.bootstrap_servers)
        moves = {}
        with Workload(c.bootstrap_servers) as work:
            wait_until(lambda: len(work.acked) >= 8_000 or work.errors, "8,000 records")
            for b, (one, two) in dirs.items():
                src = one if f"{TOPIC}-0" in holding(one) else two
                moves[b] = (src, two if src == one else one)
            result = admin.alter_replica_log_dirs(
                {(TOPIC, 0, b): str(dst) for b, (_src, dst) in moves.items()})
            assert {tpr.broker_id: e.errno for tpr, e in result.items()} == {1: 0, 2: 0}
            wait_until(lambda: all(holding(dst) == [f"{TOPIC}-0"]
                                   for _src, dst in moves.values()) or work.errors,
                       "both replicas in their new dirs")
            moved_at = len(work.acked)
            wait_until(lambda: len(work.acked) >= moved_at + 2_000 or work.errors,
                       "records produced after the moves")
        assert not work.errors, work.errors
        assert anomalies(work.acked, work.seen) == (0, 0, 0)
        assert work.seen[:len(work.acked)] == work.acked
        assert c.wait_for_isr(TOPIC, 0, 2, timeout=TIMEOUT) in ((1, 2), (2, 1))
        for src, _dst in moves.values():
            wait_until(lambda s=src: holding(s) == [], "the old copies removed")
        admin.close()


def test_replica_not_hosted_here_gets_its_dir_later(tmp_path: Path) -> None:
    dirs = {b: [tmp_path / f"b{b}-one", tmp_path / f"b{b}-two"] for b in (1, 2)}
    with kafkapy.Cluster(2, {"offsets.topic.num.partitions": 1,
                             "offsets.topic.replication.factor": 1,
                             "auto.leader.rebalance.enable": "false"}, timeout=TIMEOUT,
                         broker_settings={b: {"log.dirs": ",".join(map(str, d))}
                                          for b, d in dirs.items()}) as c:
        c.create_topic("solo", {0: [1]})
        assert c.wait_for_leader("solo", 0, timeout=TIMEOUT) == 1
        admin = admin_for(c.bootstrap_servers)
        # Broker 2's metadata knows the partition: wait for it (UNKNOWN_TOPIC_OR_PARTITION
        # before the controller's UpdateMetadata arrives).
        chosen = dirs[2][1]

        def asked() -> int | None:
            code = alter(admin, {("solo", 0): str(chosen)}, broker_id=2)[("solo", 0)]
            return code if code != kerrors.UnknownTopicOrPartitionError.errno else None
        assert wait_until(asked, "broker 2 to know the partition") == \
            kerrors.ReplicaNotAvailableError.errno == 9
        assert holding(dirs[2][0], "solo-0") == holding(chosen, "solo-0") == []
        result = admin.alter_partition_reassignments({KTopicPartition("solo", 0): [1, 2]})
        assert all(e is None or e is kerrors.NoError for e in result.values()), result
        wait_until(lambda: holding(chosen, "solo-0") == ["solo-0"],
                   "the new replica's log in the remembered dir")
        assert holding(dirs[2][0], "solo-0") == []
        c.wait_for_isr("solo", 0, 2, timeout=TIMEOUT)
        admin.close()
