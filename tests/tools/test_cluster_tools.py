"""The tools that need more than one broker, end to end on a 3-broker ``kafkapy.Cluster``
(ZooKeeper mode, module-scoped): ``kafkapy reassign-partitions`` (generate, execute with a
replication throttle, verify until done and the throttle cleared, list, cancel) and ``kafkapy
leader-election`` (PREFERRED after a broker restart moved the leadership away). Every wait is
bounded; the printed lines are asserted exactly for the known state, and the cluster's state
read back from ZooKeeper."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, ConfigResource

import kafkapy
from kafkapy.cluster import Cluster
from tests.tools.support import Run, run_tool

WAIT_S = 60.0
SETTINGS = {"offsets.topic.num.partitions": 1, "auto.leader.rebalance.enable": "false",
            "default.replication.factor": 1}
RUN_VERIFY = ("Warning: You must run --verify periodically, until the reassignment completes, "
              "to ensure the throttle is removed.")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with kafkapy.Cluster(3, SETTINGS, timeout=WAIT_S) as c:
        c.create_topic("r", {0: [1, 2], 1: [2, 3]})
        c.create_topic("e", {0: [1, 2]})
        c.create_topic("f", {0: [1, 3]})
        for topic, partition in (("r", 0), ("r", 1), ("e", 0), ("f", 0)):
            c.wait_for_leader(topic, partition, timeout=WAIT_S)
            c.wait_for_isr(topic, partition, 2, timeout=WAIT_S)
        producer = Producer({"bootstrap.servers": c.bootstrap_servers, "linger.ms": 0})
        for partition in (0, 1):
            for _ in range(20):
                producer.produce("r", b"x" * 100, partition=partition)
        assert producer.flush(WAIT_S) == 0
        yield c


def describe(admin: AdminClient, resource: ConfigResource) -> dict[str, str | None]:
    entries = admin.describe_configs([resource])[resource].result(timeout=WAIT_S)
    return {name: entry.value for name, entry in entries.items()}


def reassign(c: Cluster, *args: str) -> Run:
    return run_tool("reassign-partitions", "--bootstrap-server", c.bootstrap_servers, *args)


def assignment_json(assignment: dict[tuple[str, int], list[int]]) -> str:
    partitions = [{"topic": t, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)}
                  for (t, p), r in sorted(assignment.items())]
    return json.dumps({"version": 1, "partitions": partitions}, separators=(",", ":"))


def test_reassign_partitions(cluster: Cluster, tmp_path: Path) -> None:
    assert reassign(cluster, "--list").out == ["No partition reassignments found."]

    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"topics": [{"topic": "r"}], "version": 1}))
    generated = reassign(cluster, "--generate", "--topics-to-move-json-file", str(topics),
                         "--broker-list", "1,2,3")
    assert generated.code == 0
    assert generated.out[:4] == ["Current partition replica assignment",
                                 assignment_json({("r", 0): [1, 2], ("r", 1): [2, 3]}), "",
                                 "Proposed partition reassignment configuration"]
    proposed = json.loads(generated.out[4])["partitions"]
    assert [(p["topic"], p["partition"]) for p in proposed] == [("r", 0), ("r", 1)]
    for p in proposed:      # two distinct live brokers each; leaders round-robin
        assert len(set(p["replicas"])) == 2 and set(p["replicas"]) <= {1, 2, 3}
    assert proposed[0]["replicas"][0] != proposed[1]["replicas"][0]

    target = {("r", 0): [3, 1], ("r", 1): [2, 3]}
    plan = tmp_path / "plan.json"
    plan.write_text(assignment_json(target))
    rollback_lines = [
        "Current partition replica assignment", "",
        assignment_json({("r", 0): [1, 2], ("r", 1): [2, 3]}), "",
        "Save this to use as the --reassignment-json-file option during rollback"]
    # with a throttle: the rates on the brokers involved, the replicas on the topic, then the
    # reassignment (a generous rate: the few KB here move at once)
    executed = reassign(cluster, "--execute", "--reassignment-json-file", str(plan),
                        "--throttle", "50000000")
    assert (executed.code, executed.err) == (0, [])
    assert executed.out == [*rollback_lines, RUN_VERIFY,
                            "The inter-broker throttle limit was set to 50000000 B/s",
                            "Successfully started partition reassignments for r-0,r-1"]
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    topic_configs = describe(admin, ConfigResource("TOPIC", "r"))
    # Kafka's modifyReassignmentThrottle: the current replicas throttle as leaders, the new
    # ones as followers
    assert topic_configs["leader.replication.throttled.replicas"] == "0:1,0:2,1:2,1:3"
    assert topic_configs["follower.replication.throttled.replicas"] == "0:3"
    for broker in (1, 2, 3):
        broker_configs = describe(admin, ConfigResource("BROKER", str(broker)))
        assert broker_configs["leader.replication.throttled.rate"] == "50000000"
        assert broker_configs["follower.replication.throttled.rate"] == "50000000"
    # --verify until done (bounded), showing progress each time
    deadline = time.monotonic() + WAIT_S
    while True:
        verified = reassign(cluster, "--verify", "--reassignment-json-file", str(plan))
        assert verified.code == 0 and verified.out[0] == "Status of partition reassignment:"
        if "Reassignment of partition r-0 is completed." in verified.out:
            break
        assert verified.out[1] == "Reassignment of partition r-0 is still in progress."
        assert time.monotonic() < deadline, verified.out
        time.sleep(0.5)
    assert verified.out == [
        "Status of partition reassignment:",
        "Reassignment of partition r-0 is completed.",
        "Reassignment of partition r-1 is completed.",
        "Clearing broker-level throttles on brokers 1,2,3",
        "Clearing topic-level throttles on topic r"]
    # the throttles are gone once done: at once on the broker that took the change, on the
    # others when ZooKeeper's change notification reaches them (a topic's DescribeConfigs may
    # go to any broker), so within a bounded wait
    deadline = time.monotonic() + WAIT_S
    throttled = ("leader.replication.throttled.replicas",
                 "follower.replication.throttled.replicas")
    while any((topic_configs := describe(admin, ConfigResource("TOPIC", "r")))[name]
              for name in throttled):
        assert time.monotonic() < deadline, topic_configs
        time.sleep(0.1)
    assert [topic_configs[name] for name in throttled] == ["", ""]
    assert describe(admin, ConfigResource("BROKER", "1"))[
        "leader.replication.throttled.rate"] == str(2**63 - 1)
    state = cluster.partition_state("r", 0)
    assert state is not None
    cluster.wait_for_isr("r", 0, 2, timeout=WAIT_S)
    assert set(cluster.isr_of("r", 0)) == {1, 3}

    assert reassign(cluster, "--list").out == ["No partition reassignments found."]
    cancelled = reassign(cluster, "--cancel", "--reassignment-json-file", str(plan))
    assert cancelled.out == [
        "None of the specified partition reassignments are active.",
        "None of the specified partition moves are active.Clearing broker-level throttles on "
        "brokers 1,2,3",
        "Clearing topic-level throttles on topic r"]
    # the plan applied: a --verify of the old assignment says so
    rollback = tmp_path / "rollback.json"
    rollback.write_text(executed.out[2])
    assert reassign(cluster, "--verify", "--reassignment-json-file", str(rollback),
                    "--preserve-throttles").out == [
        "Status of partition reassignment:",
        "There is no active reassignment of partition r-0, but replica set is 3,1 rather "
        "than 1,2.",
        "Reassignment of partition r-1 is completed."]


def test_reassign_json(cluster: Cluster, tmp_path: Path) -> None:
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"topics": [{"topic": "e"}]}))
    result = reassign(cluster, "--generate", "--topics-to-move-json-file", str(topics),
                      "--broker-list", "2,3", "--output", "json")
    assert result.code == 0
    current, proposed = result.json()
    assert current == {"assignment": "current", "topic": "e", "partition": 0,
                       "replicas": [1, 2]}
    assert proposed["assignment"] == "proposed" and sorted(proposed["replicas"]) == [2, 3]
    assert reassign(cluster, "--list", "--output", "json").out == []


def test_reassign_errors(cluster: Cluster, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(assignment_json({("r", 1): [2, 9]}))
    result = reassign(cluster, "--execute", "--reassignment-json-file", str(plan))
    assert (result.code, result.out) == (1, ["Error: Unknown broker id 9"])
    plan.write_text(json.dumps({"partitions": [{"topic": "r", "partition": 1,
                                                "replicas": [2, 2]}]}))
    result = reassign(cluster, "--execute", "--reassignment-json-file", str(plan))
    assert (result.code, result.out) == (1, [
        "Error: Partition replica lists may not contain duplicate entries: r-1 contains "
        "multiple entries for 2"])
    plan.write_text(assignment_json({("gone", 0): [1, 2]}))
    result = reassign(cluster, "--verify", "--reassignment-json-file", str(plan),
                      "--preserve-throttles")
    assert (result.code, result.out) == (0, [
        "Status of partition reassignment:",
        "There is no active reassignment of partition gone-0, but replica set is  rather "
        "than 1,2."])
    result = reassign(cluster, "--execute", "--reassignment-json-file", str(plan))
    assert (result.code, result.out[-1]) == (1, "Error: org.apache.kafka.common.errors."
                                                "UnknownTopicOrPartitionException: Topic gone "
                                                "not found.")
    result = reassign(cluster, "--list", "--execute")
    assert (result.code, result.err) == (1, [
        "Command must include exactly one action: --generate, --execute, --verify, --cancel, "
        "--list"])
    result = reassign(cluster, "--verify")
    assert (result.code, result.err) == (1, [
        'Missing required argument "[reassignment-json-file]"'])
    result = reassign(cluster, "--list", "--throttle", "5")
    assert (result.code, result.err) == (1, ['Option "[throttle]" can\'t be used with action '
                                             '"[list]"'])


def elect(c: Cluster, *args: str) -> Run:
    return run_tool("leader-election", "--bootstrap-server", c.bootstrap_servers, *args)


def test_preferred_leader_election(cluster: Cluster, tmp_path: Path) -> None:
    assert cluster.leader_of("e", 0) == 1
    # the preferred leader restarts: broker 2 leads, and stays leader once 1 is back in sync
    # (auto.leader.rebalance.enable=false)
    cluster.restart(1)
    cluster.wait_for_leader("e", 0, not_in=(1,), timeout=WAIT_S)
    cluster.wait_for_isr("e", 0, 2, timeout=WAIT_S)
    assert cluster.leader_of("e", 0) == 2

    result = elect(cluster, "--election-type", "PREFERRED", "--topic", "e", "--partition", "0")
    assert (result.code, result.out, result.err) == (
        0, ["Successfully completed leader election (PREFERRED) for partitions e-0"], [])
    assert cluster.leader_of("e", 0) == 1

    partitions = tmp_path / "partitions.json"
    partitions.write_text(json.dumps({"partitions": [{"topic": "e", "partition": 0}]}))
    again = elect(cluster, "--election-type", "preferred", "--path-to-json-file",
                  str(partitions), "--output", "json")
    assert again.json() == [{"topic": "e", "partition": 0, "result": "not_needed"}]
    text = elect(cluster, "--election-type", "preferred", "--path-to-json-file",
                 str(partitions))
    assert text.out == ["Valid replica already elected for partitions e-0"]

    missing = elect(cluster, "--election-type", "PREFERRED", "--topic", "nope",
                    "--partition", "0")
    assert missing.code == 1
    assert missing.out == ["Error completing leader election (PREFERRED) for partition: "
                           "nope-0: org.apache.kafka.common.errors."
                           "UnknownTopicOrPartitionException: This server does not host this "
                           "topic-partition."]
    assert missing.err == ["1 replica(s) could not be elected"]


def test_all_topic_partitions(cluster: Cluster) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})

    def not_preferred() -> list[str]:
        return sorted(f"{t}-{p}" for t, md in admin.list_topics(timeout=WAIT_S).topics.items()
                      for p, partition in md.partitions.items()
                      if cluster.leader_of(t, p) != partition.replicas[0])

    # f-0 ([1, 3]) lost its leader when broker 1 restarted (test_preferred_leader_election)
    cluster.wait_for_isr("f", 0, 2, timeout=WAIT_S)
    elected = not_preferred()
    assert "f-0" in elected
    result = elect(cluster, "--election-type", "PREFERRED", "--all-topic-partitions")
    # without a partition list the controller reports only the partitions it elected (no
    # ELECTION_NOT_NEEDED, as Kafka's KafkaApis)
    assert (result.code, result.out, result.err) == (
        0, [f"Successfully completed leader election (PREFERRED) for partitions "
            f"{', '.join(elected)}"], [])
    assert not_preferred() == []
    again = elect(cluster, "--election-type", "PREFERRED", "--all-topic-partitions",
                  "--output", "json")
    assert (again.code, again.out) == (0, [])


def test_leader_election_usage(cluster: Cluster) -> None:
    cases = {
        ("--topic", "e", "--partition", "0"): "Missing required option(s): election-type",
        ("--election-type", "PREFERRED"): "One and only one of the following options is "
                                          "required: topic, all-topic-partitions, "
                                          "path-to-json-file",
        ("--election-type", "PREFERRED", "--topic", "e"): "Missing required option(s): "
                                                          "partition",
        ("--election-type", "PREFERRED", "--all-topic-partitions", "--partition", "0"):
            "Option partition is only allowed if topic is used",
    }
    for args, message in cases.items():
        result = elect(cluster, *args)
        assert (result.code, result.out, result.err) == (1, [], [message]), args


def test_without_the_client_libraries() -> None:
    hide = "import sys\nsys.modules[{!r}] = None"
    result = run_tool("reassign-partitions", "--bootstrap-server", "127.0.0.1:1", "--list",
                      prelude=hide.format("kafka"))
    assert (result.code, result.out, result.err) == (
        1, [], ["kafkapy reassign-partitions needs kafka-python: pip install 'kafkapy[tools]'"])
    result = run_tool("leader-election", "--bootstrap-server", "127.0.0.1:1",
                      "--election-type", "PREFERRED", "--all-topic-partitions",
                      prelude=hide.format("confluent_kafka"))
    assert (result.code, result.out, result.err) == (
        1, [], ["kafkapy leader-election needs confluent-kafka: pip install 'kafkapy[tools]'"])
