"""Metrics of a replicated cluster (kafkapy.Cluster: a real ZooKeeper, three broker
processes, each with its Prometheus endpoint): exactly one broker reports
ActiveControllerCount 1; once a follower stops, the leader reports its partition
under-replicated, and once it is back in the ISR, fully replicated with one ISR expansion."""

from __future__ import annotations

import kafkapy
from kafkapy.zk.zookeeper_server import free_port
from tests.server.metrics.support import scrape

TIMEOUT = 60.0
TOPIC = "replicated"


def test_active_controller_and_under_replicated_partitions() -> None:
    ports = {b: free_port("127.0.0.1") for b in (1, 2, 3)}
    settings = {"offsets.topic.num.partitions": 1, "auto.leader.rebalance.enable": "false",
                "kafkapy.metrics.host": "127.0.0.1"}
    with kafkapy.Cluster(3, settings, timeout=TIMEOUT, broker_settings={
            b: {"kafkapy.metrics.port": port} for b, port in ports.items()}) as c:
        c.create_topic(TOPIC, {0: [1, 2, 3]})
        c.wait_for_isr(TOPIC, 0, 3)
        leader = c.wait_for_leader(TOPIC, 0)

        def gauge(broker: int, name: str) -> float:
            return scrape(ports[broker])[name]

        def one_controller() -> bool:
            counts = [gauge(b, "kafka_controller_kafkacontroller_activecontrollercount")
                      for b in (1, 2, 3)]
            return sorted(counts) == [0, 0, 1]

        c.wait_until(one_controller, "exactly one broker reporting ActiveControllerCount 1")
        controller = c.controller()
        assert gauge(controller, "kafka_controller_kafkacontroller_activecontrollercount") \
            == 1
        assert gauge(leader, "kafka_server_replicamanager_underreplicatedpartitions") == 0
        # The followers' fetches count as FetchFollower on the leader, once answered (each
        # long-polls up to replica.fetch.wait.max.ms).
        follower_fetches = 'kafka_network_requestmetrics_totaltimems_count{request="FetchFollower"}'
        c.wait_until(lambda: scrape(ports[leader]).get(follower_fetches, 0) >= 2,
                     "the leader to count its followers' fetches")
        leader_scrape = scrape(ports[leader])
        assert leader_scrape['kafka_network_requestmetrics_totaltimems_count{request="Fetch"}'] \
            >= leader_scrape[follower_fetches]
        assert leader_scrape.get('kafka_network_requestmetrics_totaltimems_count'
                                 '{request="FetchConsumer"}', 0) == 0
        assert leader_scrape["kafka_server_brokertopicmetrics_totalfetchrequests_total"] >= 2
        assert gauge(controller, "kafka_controller_kafkacontroller_offlinepartitionscount") \
            == 0
        follower = next(b for b in (1, 2, 3) if b not in (leader, controller))
        c.stop(follower)
        c.wait_for_isr(TOPIC, 0, 2)
        c.wait_until(lambda: gauge(leader, "kafka_server_replicamanager_"
                                           "underreplicatedpartitions") == 1,
                     "the leader to report its partition under-replicated")
        assert gauge(leader, "kafka_server_replicamanager_leadercount") >= 1
        # The controller still counts once, on the same broker.
        assert sum(gauge(b, "kafka_controller_kafkacontroller_activecontrollercount")
                   for b in (1, 2, 3) if b != follower) == 1
        # Back: it catches up and the leader adds it to the ISR through AlterPartition.
        assert gauge(leader, "kafka_server_replicamanager_isrexpands_total") == 0
        c.restart(follower)
        c.wait_for_isr(TOPIC, 0, 3)
        c.wait_until(lambda: gauge(leader, "kafka_server_replicamanager_"
                                           "underreplicatedpartitions") == 0,
                     "the leader to see its partition fully replicated again")
        assert gauge(leader, "kafka_server_replicamanager_isrexpands_total") == 1
