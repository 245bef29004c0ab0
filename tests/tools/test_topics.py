"""``kafkapy topics`` end to end: the tool runs as a subprocess (``python -m kafkapy.tools``)
against a real broker (``kafkapy.Broker`` in-process, one for the module: every test uses topic
names of its own), and what it prints is compared line for line with Kafka 3.7's
TopicCommand output for the state a client (confluent-kafka's AdminClient, independently of the
tool) reads back. One 3-broker ``kafkapy.Cluster`` test covers RF 3 and a stopped broker."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest
from confluent_kafka import Consumer, Producer, TopicCollection
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

import kafkapy
from kafkapy.cluster import Cluster
from tests.tools.support import Run, run_tool

ROOT = Path(__file__).resolve().parents[2]
WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or "
           "underscore ('_') could collide. To avoid issues it is best to use either, but not "
           "both.")
ERROR = "Error while executing topic command : "


def tool(*args: str, prelude: str | None = None) -> Run:
    """``python -m kafkapy.tools topics <args>``."""
    return run_tool("topics", *args, prelude=prelude)


def eventually(run: Callable[[], Run], expected: Callable[[Run], bool],
               timeout: float = 30.0) -> Run:
    """Run the tool until its output is the expected one (metadata propagates
    asynchronously); the last run either way."""
    deadline = time.monotonic() + timeout
    while True:
        done = run()
        if expected(done) or time.monotonic() > deadline:
            return done
        time.sleep(0.5)


def kafka_topic_id(admin: AdminClient, topic: str) -> str:
    """The topic id as Kafka prints it (URL-safe base64), from confluent-kafka's own string
    (standard base64): an independent derivation of what the tool computes from the bits."""
    description = admin.describe_topics(TopicCollection([topic]))[topic].result(30)
    return str(description.topic_id).replace("+", "-").replace("/", "_").rstrip("=")


def partition_line(topic: str, partition: int, leader: int | str, replicas: str,
                   isr: str) -> str:
    return (f"\tTopic: {topic}\tPartition: {partition}\tLeader: {leader}"
            f"\tReplicas: {replicas}\tIsr: {isr}")


@attrs.frozen
class Env:
    bootstrap: str
    admin: AdminClient
    node: int

    def topics(self, *args: str) -> Run:
        return tool("--bootstrap-server", self.bootstrap, *args)

    def listed(self) -> set[str]:
        return set(self.admin.list_topics(timeout=30).topics)

    def overrides(self, topic: str) -> dict[str, str]:
        resource = ConfigResource(ResourceType.TOPIC, topic)
        entries = self.admin.describe_configs([resource])[resource].result(30)
        return {e.name: e.value for e in entries.values() if not e.is_default}

    def wait_gone(self, topic: str) -> None:
        deadline = time.monotonic() + 30
        while topic in self.listed():
            assert time.monotonic() < deadline, f"{topic} still listed"
            time.sleep(0.2)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    settings = {"offsets.topic.num.partitions": "1", "num.partitions": "2"}
    with kafkapy.Broker(settings, data_dir=tmp_path_factory.mktemp("topics")) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        [node] = admin.describe_cluster().result(30).nodes
        # A committed offset makes the broker create __consumer_offsets (internal).
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
        producer.produce("seed", b"x")
        assert producer.flush(30) == 0
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers,
                             "group.id": "seed-group", "auto.offset.reset": "earliest"})
        consumer.subscribe(["seed"])
        deadline = time.monotonic() + 30
        while (msg := consumer.poll(0.5)) is None or msg.error():
            assert time.monotonic() < deadline, "no record consumed"
        consumer.commit(msg, asynchronous=False)
        consumer.close()
        yield Env(broker.bootstrap_servers, admin, node.id)


# ============================================================================= create

def test_create_then_describe_as_kafka_prints_it(env: Env) -> None:
    done = env.topics("--create", "--topic", "orders", "--partitions", "3",
                      "--replication-factor", "1", "--config", "cleanup.policy=compact",
                      "--config", "retention.ms = 60000")
    assert (done.code, done.out, done.err) == (0, ["Created topic orders."], [])
    # The client sees what the tool asked for.
    assert len(env.admin.list_topics("orders", timeout=30).topics["orders"].partitions) == 3
    assert env.overrides("orders") == {"cleanup.policy": "compact", "retention.ms": "60000"}

    done = env.topics("--describe", "--topic", "orders")
    n = env.node
    assert done.code == 0
    assert done.out == [
        f"Topic: orders\tTopicId: {kafka_topic_id(env.admin, 'orders')}\tPartitionCount: 3"
        f"\tReplicationFactor: 1\tConfigs: cleanup.policy=compact,retention.ms=60000",
        partition_line("orders", 0, n, str(n), str(n)),
        partition_line("orders", 1, n, str(n), str(n)),
        partition_line("orders", 2, n, str(n), str(n)),
    ]

    done = env.topics("--describe", "--topic", "orders", "--output", "json")
    assert done.json() == [
        {"type": "topic", "topic": "orders", "topicId": kafka_topic_id(env.admin, "orders"),
         "partitionCount": 3, "replicationFactor": 1,
         "configs": {"cleanup.policy": "compact", "retention.ms": "60000"}},
        *({"type": "partition", "topic": "orders", "partition": p, "leader": n,
           "replicas": [n], "isr": [n]} for p in range(3)),
    ]


def test_create_uses_the_broker_defaults_and_warns_about_collisions(env: Env) -> None:
    done = env.topics("--create", "--topic", "with.dot")
    assert (done.code, done.out) == (0, [WARNING, "Created topic with.dot."])
    # num.partitions=2 on this broker; no overrides.
    assert len(env.admin.list_topics("with.dot", timeout=30).topics["with.dot"].partitions) \
        == 2
    assert env.overrides("with.dot") == {}
    done = env.topics("--describe", "--topic", "with\\.dot")
    assert done.out[0].endswith("\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: ")


def test_create_an_existing_topic(env: Env) -> None:
    assert env.topics("--create", "--topic", "twice").code == 0
    done = env.topics("--create", "--topic", "twice", "--partitions", "5")
    assert (done.code, done.out) == (1, [ERROR + "Topic 'twice' already exists."])
    # --if-not-exists: the request still goes, the error is swallowed, nothing printed.
    done = env.topics("--create", "--topic", "twice", "--partitions", "5", "--if-not-exists")
    assert (done.code, done.out, done.err) == (0, [], [])
    assert len(env.admin.list_topics("twice", timeout=30).topics["twice"].partitions) == 2


def test_create_with_a_replica_assignment(env: Env) -> None:
    n = env.node
    done = env.topics("--create", "--topic", "assigned", "--replica-assignment",
                      f"{n},{n},{n}")
    assert (done.code, done.out) == (0, ["Created topic assigned."])
    done = env.topics("--describe", "--topic", "assigned")
    assert done.out[1:] == [partition_line("assigned", p, n, str(n), str(n)) for p in range(3)]
    # A broker that does not exist: the broker's refusal, nothing created.
    done = env.topics("--create", "--topic", "nowhere", "--replica-assignment", f"{n + 7}")
    assert done.code == 1
    assert done.out == [ERROR + f"The manual partition assignment includes broker {n + 7}, "
                                "but no such broker is registered."]
    assert "nowhere" not in env.listed()


@pytest.mark.parametrize(("args", "message"), [
    (("--config", "no-such.config=1"), "Unknown topic config name: no-such.config"),
    (("--config", "retention.ms"),
     'requirement failed: Invalid topic config: all configs to be added must be in the '
     'format "key=val".'),
    (("--config", "retention.ms=1=2"),
     'requirement failed: Invalid topic config: all configs to be added must be in the '
     'format "key=val".'),
    (("--replication-factor", "0"), "The replication factor must be between 1 and 32767 "
                                    "inclusive"),
    (("--partitions", "0"), "The partitions must be greater than 0"),
    (("--replica-assignment", "1:1"),
     "Partition replica lists may not contain duplicate entries: 1"),
    (("--replica-assignment", "1:2,1"), "Partition 1 has different replication factor: [1]"),
])
def test_create_refused(env: Env, args: tuple[str, ...], message: str) -> None:
    done = env.topics("--create", "--topic", "refused", *args)
    assert (done.code, done.out) == (1, [ERROR + message])
    assert "refused" not in env.listed()


# ============================================================================== alter

def test_alter_adds_partitions(env: Env) -> None:
    n = env.node
    assert env.topics("--create", "--topic", "grows", "--partitions", "1").code == 0
    done = env.topics("--alter", "--topic", "grows", "--partitions", "3")
    # Kafka's tool prints nothing when the partitions were added.
    assert (done.code, done.out, done.err) == (0, [], [])
    assert len(env.admin.list_topics("grows", timeout=30).topics["grows"].partitions) == 3
    # With an assignment: the replicas of the partitions after the current ones.
    done = env.topics("--alter", "--topic", "grows", "--partitions", "4",
                      "--replica-assignment", f"{n},{n},{n},{n}")
    assert (done.code, done.out) == (0, [])
    done = eventually(lambda: env.topics("--describe", "--topic", "grows"),
                      lambda run: len(run.out) == 5)
    assert done.out[0].split("\t")[2] == "PartitionCount: 4"
    assert done.out[4] == partition_line("grows", 3, n, str(n), str(n))
    # Fewer partitions: the broker's message.
    done = env.topics("--alter", "--topic", "grows", "--partitions", "2")
    assert (done.code, done.out) == (
        1, [ERROR + "The topic grows currently has 4 partition(s); 2 would not be an "
                    "increase."])


def test_alter_refuses_configs_and_missing_topics(env: Env) -> None:
    assert env.topics("--create", "--topic", "unaltered").code == 0
    done = env.topics("--alter", "--topic", "unaltered", "--partitions", "3",
                      "--config", "retention.ms=1")
    assert (done.code, done.out) == (1, [])
    assert done.err == ['Option combination "[bootstrap-server],[config]" can\'t be used '
                        'with option "[alter]" (To alter topic configurations, the '
                        'kafka-configs tool can be used.)']
    assert env.overrides("unaltered") == {}
    assert len(env.admin.list_topics("unaltered", timeout=30).topics["unaltered"]
               .partitions) == 2

    done = env.topics("--alter", "--topic", "missing", "--partitions", "3")
    assert (done.code, done.out) == (1, [ERROR + "Topic 'missing' does not exist as expected"])
    done = env.topics("--alter", "--topic", "missing", "--partitions", "3", "--if-exists")
    assert (done.code, done.out) == (0, [])


# ============================================================================= delete

def test_delete_by_regular_expression(env: Env) -> None:
    for name in ("old-1", "old-2", "older", "kept-old-1"):
        assert env.topics("--create", "--topic", name).code == 0
    # Kafka's IncludeList: the whole name must match; "," is "|".
    done = env.topics("--delete", "--topic", "old-[0-9],older")
    assert (done.code, done.out, done.err) == (0, [], [])
    for name in ("old-1", "old-2", "older"):
        env.wait_gone(name)
    assert "kept-old-1" in env.listed()

    done = env.topics("--delete", "--topic", "old-1")
    assert (done.code, done.out) == (1, [ERROR + "Topic 'old-1' does not exist as expected"])
    done = env.topics("--delete", "--topic", "old-1", "--if-exists")
    assert (done.code, done.out) == (0, [])
    done = env.topics("--delete", "--topic", "[")
    assert (done.code, done.out) == (1, [ERROR + "[ is an invalid regex."])


def test_delete_json(env: Env) -> None:
    assert env.topics("--create", "--topic", "gone-json").code == 0
    done = env.topics("--delete", "--topic", "gone-json", "--output", "json")
    assert (done.code, done.json()) == (0, [{"type": "deleted", "topic": "gone-json"}])
    env.wait_gone("gone-json")


# ============================================================================== list

def test_list_is_sorted_with_internal_topics_unless_excluded(env: Env) -> None:
    for name in ("list-b", "list-a", "list-c"):
        assert env.topics("--create", "--topic", name).code == 0
    expected = sorted(env.listed())
    assert "__consumer_offsets" in expected
    done = env.topics("--list")
    assert (done.code, done.out) == (0, expected)
    done = env.topics("--list", "--exclude-internal")
    assert done.out == [t for t in expected if t != "__consumer_offsets"]
    done = env.topics("--list", "--topic", "list-.*")
    assert done.out == ["list-a", "list-b", "list-c"]
    done = env.topics("--list", "--topic", "list-.*", "--output", "json")
    assert done.json() == [{"type": "topic", "topic": t} for t in ("list-a", "list-b",
                                                                     "list-c")]
    # Nothing matches: Kafka's println of an empty string.
    done = env.topics("--list", "--topic", "nothing-.*")
    assert (done.code, done.out) == (0, [""])


# ========================================================================== describe

def test_describe_report_options(env: Env) -> None:
    n = env.node
    assert env.topics("--create", "--topic", "minisr-2", "--partitions", "1",
                      "--config", "min.insync.replicas=2").code == 0
    assert env.topics("--create", "--topic", "minisr-1", "--partitions", "1").code == 0
    line2 = partition_line("minisr-2", 0, n, str(n), str(n))
    line1 = partition_line("minisr-1", 0, n, str(n), str(n))
    # One in-sync replica: under min.insync.replicas=2, at the default of 1.
    done = env.topics("--describe", "--topic", "minisr-.*", "--under-min-isr-partitions")
    assert (done.code, done.out) == (0, [line2])
    done = env.topics("--describe", "--topic", "minisr-.*", "--at-min-isr-partitions")
    assert (done.code, done.out) == (0, [line1])
    # One broker, every replica in sync and led.
    for report in ("--under-replicated-partitions", "--unavailable-partitions"):
        done = env.topics("--describe", "--topic", "minisr-.*", report)
        assert (done.code, done.out) == (0, [])
    # Only the topic lines of topics with overrides, no partitions.
    done = env.topics("--describe", "--topic", "minisr-.*", "--topics-with-overrides")
    assert done.out == [f"Topic: minisr-2\tTopicId: {kafka_topic_id(env.admin, 'minisr-2')}"
                        "\tPartitionCount: 1\tReplicationFactor: 1"
                        "\tConfigs: min.insync.replicas=2"]


def test_describe_all_and_exclude_internal(env: Env) -> None:
    done = env.topics("--describe")
    topics = [line.split("\t")[0].removeprefix("Topic: ") for line in done.out
              if line.startswith("Topic: ")]
    assert done.code == 0
    assert topics == sorted(env.listed())
    assert "__consumer_offsets" in topics
    done = env.topics("--describe", "--exclude-internal")
    assert "Topic: __consumer_offsets" not in {line.split("\t")[0] for line in done.out}
    assert "\tTopic: __consumer_offsets" not in {line.split("\t", 2)[1] for line in done.out
                                                 if line.startswith("\t")}


def test_describe_missing_topic(env: Env) -> None:
    done = env.topics("--describe", "--topic", "absent")
    assert (done.code, done.out) == (1, [ERROR + "Topic 'absent' does not exist as expected"])
    done = env.topics("--describe", "--topic", "absent", "--if-exists")
    assert (done.code, done.out) == (0, [])


# ====================================================================== command line

@pytest.mark.parametrize(("args", "message"), [
    ((), "Command must include exactly one action: --list, --describe, --create, --alter or "
         "--delete"),
    (("--list", "--describe"), "Command must include exactly one action: --list, --describe, "
                               "--create, --alter or --delete"),
    (("--create",), 'Missing required argument "[topic]"'),
    (("--alter", "--topic", "t"), 'Missing required argument "[partitions]"'),
    (("--describe", "--if-exists"), "--topic or --topic-id is required to describe a topic"),
    (("--describe", "--partitions", "3"),
     'Option "[partitions]" can\'t be used with option "[describe]"'),
    (("--create", "--topic", "t", "--replica-assignment", "1", "--partitions", "2"),
     'Option "[replica-assignment]" can\'t be used with option "[partitions]"'),
    (("--alter", "--topic", "t", "--partitions", "2", "--replication-factor", "1"),
     'Option "[replication-factor]" can\'t be used with option "[alter]"'),
    (("--describe", "--under-replicated-partitions", "--topics-with-overrides"),
     'Option "[under-replicated-partitions]" can\'t be used with option '
     '"[topics-with-overrides]"'),
    (("--create", "--topic", "t", "--if-exists"),
     'Option "[if-exists]" can\'t be used with option "[create]"'),
    (("--delete", "--topic", "t", "--exclude-internal"),
     'Option "[exclude-internal]" can\'t be used with option "[delete]"'),
])
def test_command_line_checks(env: Env, args: tuple[str, ...], message: str) -> None:
    done = env.topics(*args)
    assert (done.code, done.out, done.err) == (1, [], [message])


def test_bootstrap_server_is_required() -> None:
    done = tool("--list")
    assert (done.code, done.err) == (1, ["--bootstrap-server must be specified"])


def test_command_config_is_passed_to_the_client(env: Env, tmp_path: Path) -> None:
    good = tmp_path / "client.properties"
    good.write_text("# a comment\n! another\nclient.id = kafkapy-topics-test\n"
                    "socket.timeout.ms: 20000\n")
    done = env.topics("--command-config", str(good), "--list", "--topic", "orders")
    assert (done.code, done.out) == (0, ["orders"])
    bad = tmp_path / "bad.properties"
    bad.write_text("no.such.client.property=1\n")
    done = env.topics("--command-config", str(bad), "--list")
    assert done.code == 1
    assert done.err == ["Invalid --command-config: No such configuration property: "
                        '"no.such.client.property"']


def test_without_confluent_kafka_the_tool_says_how_to_install_it(env: Env) -> None:
    # A None entry in sys.modules makes `import confluent_kafka` raise ImportError.
    done = tool("--bootstrap-server", env.bootstrap, "--list",
                prelude="import sys; sys.modules['confluent_kafka'] = None")
    assert (done.code, done.out) == (1, [])
    assert done.err == ["kafkapy topics needs confluent-kafka: pip install 'kafkapy[tools]'"]


# ====================================================================== a 3-broker cluster

def test_cluster_describe_rf3_and_a_stopped_broker(tmp_path: Path) -> None:
    with Cluster(3, data_dir=tmp_path / "cluster") as cluster:
        def topics(*args: str) -> Run:
            return tool("--bootstrap-server", cluster.bootstrap_servers, *args)

        done = topics("--create", "--topic", "rf3", "--partitions", "3",
                      "--replication-factor", "3", "--config", "min.insync.replicas=2")
        assert (done.code, done.out) == (0, ["Created topic rf3."])
        # A partition whose only replica is broker 3: leaderless while 3 is down.
        done = topics("--create", "--topic", "on-3", "--replica-assignment", "3")
        assert done.code == 0
        for p in range(3):
            cluster.wait_for_isr("rf3", p, 3)
        cluster.wait_for_leader("on-3", 0)

        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        # The assignments as a client reads them, while every broker is up: a stopped broker
        # changes no assignment, and a client asked while one is down may wait on it.
        replicas_of = {topic: assignment(admin, topic) for topic in ("rf3", "on-3")}

        def lines(topic: str, partitions: int) -> list[str]:
            """The partition lines for the state in ZooKeeper (the controller's truth)."""
            out = []
            for p in range(partitions):
                state = cluster.partition_state(topic, p)
                assert state is not None
                leader = state.leader if state.leader >= 0 else "none"
                replicas = ",".join(map(str, replicas_of[topic][p]))
                out.append(partition_line(topic, p, leader, replicas,
                                          ",".join(map(str, state.isr))))
            return out

        expected = [f"Topic: rf3\tTopicId: {kafka_topic_id(admin, 'rf3')}\tPartitionCount: 3"
                    "\tReplicationFactor: 3\tConfigs: min.insync.replicas=2", *lines("rf3", 3)]
        done = eventually(lambda: topics("--describe", "--topic", "rf3"),
                          lambda run: run.out == expected)
        assert done.out == expected
        assert all(sorted(line.split("\tReplicas: ")[1].split("\t")[0].split(",")) ==
                   ["1", "2", "3"] for line in done.out[1:])
        done = topics("--describe", "--under-replicated-partitions")
        assert (done.code, done.out) == (0, [])

        cluster.stop(3)
        for p in range(3):
            cluster.wait_for_isr("rf3", p, 2)
        under = lines("rf3", 3)
        assert all("3" not in line.split("\tIsr: ")[1] for line in under)
        done = eventually(lambda: topics("--describe", "--topic", "rf3",
                                         "--under-replicated-partitions"),
                          lambda run: run.out == under)
        assert done.out == under
        # Two in-sync replicas: at min.insync.replicas=2, not under it.
        done = topics("--describe", "--topic", "rf3", "--at-min-isr-partitions")
        assert done.out == under
        done = topics("--describe", "--topic", "rf3", "--under-min-isr-partitions")
        assert done.out == []
        assert cluster.leader_of("on-3", 0) is None
        leaderless = lines("on-3", 1)
        assert leaderless[0].startswith(partition_line("on-3", 0, "none", "3", ""))
        done = eventually(lambda: topics("--describe", "--unavailable-partitions"),
                          lambda run: run.out == leaderless)
        assert done.out == leaderless

        cluster.restart(3)
        for p in range(3):
            cluster.wait_for_isr("rf3", p, 3)
        done = eventually(lambda: topics("--describe", "--under-replicated-partitions"),
                          lambda run: run.out == [])
        assert (done.code, done.out) == (0, [])
        done = eventually(lambda: topics("--describe", "--unavailable-partitions"),
                          lambda run: run.out == [])
        assert done.out == []


def assignment(admin: AdminClient, topic: str) -> dict[int, list[int]]:
    """The topic's replicas per partition as a client reads them (confluent-kafka)."""
    description = admin.describe_topics(TopicCollection([topic]))[topic].result(30)
    return {p.id: [n.id for n in p.replicas] for p in description.partitions}
