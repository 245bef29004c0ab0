"""How long a 3-broker cluster takes to move leadership, measured (not asserted).

For each round, on a fresh RF-3 topic of ``--partitions`` partitions:

- **kill**: SIGKILL the broker leading partition 0; the time until every partition it led has
  a new leader (read from ZooKeeper's state znodes), minus the session timeout, is what the
  controller adds to ZooKeeper's detection;
- **stop**: SIGTERM the broker leading partition 0 (a controlled shutdown); how long the stop
  takes, and how many samples (every 10 ms) saw a partition without a leader (must be 0).

The broker comes back and every ISR is full again before the next round. Prints medians and
ranges.

    python benchmarks/cluster_failover.py --rounds 5 --session-ms 6000
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

import kafkapy


def create(admin: AdminClient, topic: str, partitions: int) -> None:
    """CreateTopics, again after NOT_CONTROLLER: librdkafka hands that error to the caller
    when its metadata still names a controller that has since moved (as with Kafka)."""
    for _ in range(20):
        try:
            admin.create_topics([NewTopic(topic, partitions, 3)])[topic].result(30)
            return
        except KafkaException as e:
            if e.args[0].code() != KafkaError.NOT_CONTROLLER:
                raise
            admin.list_topics(timeout=10)       # a metadata refresh finds the new one
            time.sleep(0.5)
    raise RuntimeError(f"could not create {topic}: the controller kept moving")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=12)
    parser.add_argument("--session-ms", type=int, default=6000)
    args = parser.parse_args()
    settings = {"zookeeper.session.timeout.ms": args.session_ms,
                "auto.leader.rebalance.enable": "false"}
    kill_extra: list[float] = []
    stop_s: list[float] = []
    leaderless = 0
    with kafkapy.Cluster(3, settings, timeout=90) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        for r in range(args.rounds):
            for kind in ("kill", "stop"):
                topic = f"{kind}-{r}"
                create(admin, topic, args.partitions)
                for p in range(args.partitions):
                    cluster.wait_for_isr(topic, p, 3, timeout=30)
                victim = cluster.leader_of(topic, 0)
                assert victim is not None
                led = [p for p in range(args.partitions) if cluster.leader_of(topic, p) == victim]
                started = time.monotonic()
                if kind == "kill":
                    cluster.kill(victim)
                    for p in led:
                        cluster.wait_for_leader(topic, p, not_in=[victim], timeout=60)
                    kill_extra.append(time.monotonic() - started - args.session_ms / 1000)
                else:
                    seen: list[int] = []
                    done = threading.Event()

                    def watch(topic: str = topic, seen: list[int] = seen,
                              done: threading.Event = done) -> None:
                        while not done.is_set():
                            seen.extend(p for p in range(args.partitions)
                                        if cluster.leader_of(topic, p) is None)
                            time.sleep(0.01)

                    watcher = threading.Thread(target=watch)
                    watcher.start()
                    cluster.stop(victim)
                    stop_s.append(time.monotonic() - started)
                    done.set()
                    watcher.join()
                    leaderless += len(seen)
                cluster.restart(victim)
                for p in range(args.partitions):
                    cluster.wait_for_isr(topic, p, 3, timeout=60)
    print(f"SIGKILL of a leader: new leaders {statistics.median(kill_extra):.2f} s after the "
          f"{args.session_ms} ms session timeout (median of {len(kill_extra)}; "
          f"{min(kill_extra):.2f}-{max(kill_extra):.2f} s)")
    print(f"SIGTERM of a leader: stopped in {statistics.median(stop_s):.2f} s (median; "
          f"{min(stop_s):.2f}-{max(stop_s):.2f} s); leaderless samples: {leaderless}")


if __name__ == "__main__":
    main()
