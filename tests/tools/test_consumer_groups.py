"""``kafkapy consumer-groups`` end to end: a real broker (``kafkapy.Broker`` in-process), real
confluent-kafka producers and consumers making a known state (records per partition with known
timestamps, offsets committed by a live consumer), and the tool run as a subprocess
(``python -m kafkapy.tools consumer-groups``). The lines asserted are Kafka 3.x's
ConsumerGroupCommand formats, with the column widths worked out here from the values.
Pure helpers (datetime/duration parsing, the CSV plan, the state messages) are unit-tested
at the end."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as ClientTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kafkapy
from kafkapy.tools import consumer_groups as cg
from kafkapy.tools.command_config import load_properties
from tests.tools.support import run_tool

ROOT = Path(__file__).resolve().parents[2]
BROKER_ID = 7
T0 = 1_700_000_000_000
WAIT_S = 30.0
NO_EXECUTE_WARNING = (
    "WARN: No action will be performed as the --execute option is missing.In a future major "
    "release, the default behavior of this command will be to prompt the user before "
    "executing the reset rather than doing a dry run. You should add the --dry-run option "
    "explicitly if you are scripting this command and want to keep the current default "
    "behavior without prompting.")


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[kafkapy.Broker]:
    settings = {"broker.id": str(BROKER_ID), "offsets.topic.num.partitions": "1",
                "group.initial.rebalance.delay.ms": "0"}
    with kafkapy.Broker(settings, data_dir=tmp_path_factory.mktemp("groups")) as b:
        yield b


def make_topic(bootstrap: str, topic: str, counts: list[int]) -> None:
    """A topic with ``counts[p]`` records in partition p; record i of partition p has
    timestamp T0 + 10 * i + p."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, len(counts), 1)]).values():
        future.result(WAIT_S)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for partition, count in enumerate(counts):
        for i in range(count):
            producer.produce(topic, f"{partition}-{i}".encode(), partition=partition,
                             timestamp=T0 + 10 * i + partition)
    assert producer.flush(WAIT_S) == 0


def subscribe(bootstrap: str, group: str, topic: str, client_id: str) -> Consumer:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "client.id": client_id, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    return consumer


def join(bootstrap: str, group: str, topic: str, client_id: str) -> Consumer:
    """A consumer of the group that has joined and been assigned partitions (the records
    its polls return meanwhile are dropped: it commits explicit offsets)."""
    consumer = subscribe(bootstrap, group, topic, client_id)
    deadline = time.monotonic() + WAIT_S
    while not consumer.assignment():
        assert time.monotonic() < deadline, "the consumer was never assigned partitions"
        consumer.poll(0.2)
    return consumer


def first_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The offset a new member of the group starts each partition at (its first record)."""
    consumer = subscribe(bootstrap, group, topic, "checker")
    first: dict[int, int] = {}
    deadline = time.monotonic() + WAIT_S
    try:
        while len(first) < partitions:
            assert time.monotonic() < deadline, f"records seen only from {first}"
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                first.setdefault(message.partition(), message.offset())
    finally:
        consumer.close()
    return first


def offsets_line(widths: tuple[int, int, int, int], *cells: object) -> str:
    group_w, topic_w, consumer_w, host_w = widths
    g, t, p, cur, end, lag, cid, host, client = (str(c) for c in cells)
    return (f"{g:<{group_w}} {t:<{topic_w}} {p:<10} {cur:<15} {end:<15} {lag:<15} "
            f"{cid:<{consumer_w}} {host:<{host_w}} {client}")


def plan(group: str, topic: str, offsets: dict[int, int]) -> list[str]:
    """Kafka's printOffsetsToReset lines for one group."""
    return ["", f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} {'NEW-OFFSET':<15}"] + [
        f"{group:<30} {topic:<30} {p:<10} {o:<15}" for p, o in sorted(offsets.items())]


def test_group_lifecycle(broker: kafkapy.Broker, tmp_path: Path) -> None:
    bs = broker.bootstrap_servers
    base = ["consumer-groups", "--bootstrap-server", bs]
    topic, group = "orders", "billing"
    make_topic(bs, topic, [5, 3])
    consumer = join(bs, group, topic, "reader-1")
    member = consumer.memberid()
    assert member
    # committed 3 of partition 0's 5 records and 1 of partition 1's 3: lag 2 and 2
    consumer.commit(offsets=[ClientTopicPartition(topic, 0, 3),
                             ClientTopicPartition(topic, 1, 1)], asynchronous=False)

    # ---- active: describe shows the member on each partition
    host, client = "127.0.0.1", "reader-1"
    widths = (15, 15, max(15, len(member)), 15)
    described = run_tool(*base, "--describe", "--group", group)
    assert described.code == 0, described
    assert described.out == [
        "",
        offsets_line(widths, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET",
                     "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"),
        offsets_line(widths, group, topic, 0, 3, 5, 2, member, host, client),
        offsets_line(widths, group, topic, 1, 1, 3, 2, member, host, client),
    ]
    assert described.err == []

    members = run_tool(*base, "--describe", "--group", group, "--members", "--verbose")
    mw = max(15, len(member))
    assert members.out == [
        "",
        f"{'GROUP':<15} {'CONSUMER-ID':<{mw}} {'HOST':<15} {'CLIENT-ID':<15} "
        f"{'#PARTITIONS':<15} ASSIGNMENT",
        f"{group:<15} {member:<{mw}} {host:<15} {client:<15} {2:<15} {topic}(0,1)",
    ]
    members = run_tool(*base, "--describe", "--group", group, "--members")
    assert members.out[2] == f"{group:<15} {member:<{mw}} {host:<15} {client:<15} {1 + 1:<15} "

    state = run_tool(*base, "--describe", "--group", group, "--state")
    coordinator = f"127.0.0.1:{broker.port} ({BROKER_ID})"
    cw = max(25, len(coordinator))
    assert state.out == [
        "",
        f"{'GROUP':<{cw}} {'COORDINATOR (ID)':<25} {'ASSIGNMENT-STRATEGY':<20} "
        f"{'STATE':<15} #MEMBERS",
        f"{group:<{cw}} {coordinator:<25} {'range':<20} {'Stable':<15} 1",
    ]

    as_json = run_tool(*base, "--describe", "--group", group, "--output", "json")
    assert [json.loads(line) for line in as_json.out] == [
        {"group": group, "topic": topic, "partition": p, "currentOffset": cur,
         "logEndOffset": end, "lag": end - cur, "consumerId": member, "host": host,
         "clientId": client, "state": "Stable"}
        for p, cur, end in ((0, 3, 5), (1, 1, 3))]

    listed = run_tool(*base, "--list")
    assert group in listed.out
    by_state = run_tool(*base, "--list", "--state", "stable")
    assert by_state.out[0] == f"{'GROUP':<15} STATE"
    assert f"{group:<15} Stable" in by_state.out
    assert run_tool(*base, "--list", "--state", "empty").out.count(f"{group:<15} Stable") == 0

    # ---- active: reset and delete are refused with Kafka's messages
    refused = run_tool(*base, "--reset-offsets", "--group", group, "--topic", topic,
                       "--to-earliest", "--execute")
    assert refused.code == 1
    assert refused.out == [
        "", f"Error: Assignments can only be reset if the group '{group}' is inactive, but "
            f"the current state is Stable.",
        "", f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} {'NEW-OFFSET':<15}"]
    not_deleted = run_tool(*base, "--delete", "--group", group)
    assert not_deleted.code == 1
    assert not_deleted.out == [
        "", "Error: Deletion of some consumer groups failed:",
        f"* Group '{group}' could not be deleted due to: java.util.concurrent."
        f"ExecutionException: org.apache.kafka.common.errors.GroupNotEmptyException: "
        f"The group is not empty."]

    # ---- closed: the group is empty, the committed offsets stay
    consumer.close()
    empty = run_tool(*base, "--describe", "--group", group)
    assert empty.code == 0
    assert empty.err == ["", f"Consumer group '{group}' has no active members."]
    assert empty.out[2:] == [offsets_line((15, 15, 15, 15), group, topic, 0, 3, 5, 2, "-", "-",
                                          "-"),
                             offsets_line((15, 15, 15, 15), group, topic, 1, 1, 3, 2, "-", "-",
                                          "-")]
    empty_members = run_tool(*base, "--describe", "--group", group, "--members")
    assert empty_members.out == [] and empty_members.err == [
        "", f"Consumer group '{group}' has no active members."]

    # ---- every strategy's plan (dry run: nothing changes)
    def dry(*how: str) -> list[str]:
        result = run_tool(*base, "--reset-offsets", "--group", group, *how)
        assert result.code == 0, result
        assert result.err[0] == NO_EXECUTE_WARNING
        return result.out

    assert dry("--topic", topic, "--to-earliest") == plan(group, topic, {0: 0, 1: 0})
    assert dry("--topic", topic, "--to-latest") == plan(group, topic, {0: 5, 1: 3})
    assert dry("--all-topics", "--to-current") == plan(group, topic, {0: 3, 1: 1})
    assert dry("--topic", f"{topic}:1", "--to-offset", "2") == plan(group, topic, {1: 2})
    assert dry("--all-topics", "--shift-by", "-2") == plan(group, topic, {0: 1, 1: 0})
    # datetime T0 + 15 (UTC): partition 0's first record at or after it is i=2 (T0+20),
    # partition 1's is i=2 (T0+21)
    assert dry("--topic", topic, "--to-datetime", "2023-11-14T22:13:20.015") == \
        plan(group, topic, {0: 2, 1: 2})
    assert dry("--topic", topic, "--to-datetime", "2023-11-14T23:13:20.015+01:00") == \
        plan(group, topic, {0: 2, 1: 2})
    # every record is years old: no offset after now - 1 day, Kafka falls back to the end
    by_duration = dry("--topic", topic, "--by-duration", "P1DT0H0M0S")
    assert by_duration == [
        "", f"Warn: Partition 0 from topic {topic} is empty. Falling back to latest known "
            f"offset.",
        "", f"Warn: Partition 1 from topic {topic} is empty. Falling back to latest known "
            f"offset.", *plan(group, topic, {0: 5, 1: 3})]
    # out of range: clamped, with Kafka's warnings
    clamped = run_tool(*base, "--reset-offsets", "--group", group, "--topic", topic,
                       "--to-offset", "4", "--dry-run")
    assert clamped.out == plan(group, topic, {0: 4, 1: 3})
    assert clamped.err == [f"WARN New offset (4) is higher than latest offset for topic "
                           f"partition {topic}-1. Value will be set to 3"]
    # --export: Kafka's CSV (one group: topic,partition,offset), then --from-file reads it
    exported = run_tool(*base, "--reset-offsets", "--group", group, "--topic", topic,
                        "--to-offset", "1", "--dry-run", "--export")
    assert exported.out == [f"{topic},0,1", f"{topic},1,1", ""]
    plan_file = tmp_path / "plan.csv"
    plan_file.write_text("\n".join(exported.out))
    assert dry("--from-file", str(plan_file)) == plan(group, topic, {0: 1, 1: 1})
    # nothing was committed by the dry runs
    assert run_tool(*base, "--describe", "--group", group).out[2].split()[3] == "3"

    # ---- --execute commits; a new consumer starts where the plan says
    executed = run_tool(*base, "--reset-offsets", "--group", group, "--topic",
                        f"{topic}:0", "--to-offset", "4", "--execute")
    assert executed.code == 0 and executed.err == []
    assert executed.out == plan(group, topic, {0: 4})
    executed = run_tool(*base, "--reset-offsets", "--group", group, "--topic",
                        f"{topic}:1", "--shift-by", "1", "--execute", "--output", "json")
    assert [json.loads(line) for line in executed.out] == [
        {"group": group, "topic": topic, "partition": 1, "newOffset": 2, "executed": True}]
    assert first_offsets(bs, group, topic, 2) == {0: 4, 1: 2}

    # ---- delete: the checker closed without committing, the group is empty
    deleted = run_tool(*base, "--delete", "--group", group)
    assert deleted.code == 0
    assert deleted.out == [f"Deletion of requested consumer groups ('{group}') was successful."]
    gone = run_tool(*base, "--describe", "--group", group)
    assert gone.code == 1
    assert gone.out == ["", f"Error: Consumer group '{group}' does not exist."]



def test_rebalancing_group(broker: kafkapy.Broker) -> None:
    """A second member joins while the first does not poll: the group stays in
    PreparingRebalance (the first must rejoin), and describe warns as Kafka does; members
    have no assignment then, so the committed partition shows without a member."""
    bs = broker.bootstrap_servers
    base = ["consumer-groups", "--bootstrap-server", bs, "--describe", "--group", "rebal"]
    topic = "rebal-topic"
    make_topic(bs, topic, [4])
    first = join(bs, "rebal", topic, "first")
    first.commit(offsets=[ClientTopicPartition(topic, 0, 1)], asynchronous=False)
    second = subscribe(bs, "rebal", topic, "second")
    try:
        warning = ["", "Warning: Consumer group 'rebal' is rebalancing."]
        deadline = time.monotonic() + WAIT_S
        while True:
            second.poll(0.2)
            described = run_tool(*base)
            if described.err == warning:
                break
            assert time.monotonic() < deadline, described
        assert described.code == 0
        assert described.out[2:] == [offsets_line((15, 15, 15, 15), "rebal", topic, 0, 1, 4, 3,
                                                  "-", "-", "-")]
        as_json = run_tool(*base, "--output", "json")
        assert json.loads(as_json.out[0])["consumerId"] is None
        assert json.loads(as_json.out[0])["state"] in ("PreparingRebalance",
                                                       "CompletingRebalance")
        state = run_tool(*base, "--state")
        assert state.err == warning
        assert state.out[2].split()[-2] in ("PreparingRebalance", "CompletingRebalance")
        assert state.out[2].split()[-1] == "2"
    finally:
        second.close()
        first.close()

def test_reset_of_a_new_group_and_several_groups(broker: kafkapy.Broker, tmp_path: Path
                                                 ) -> None:
    """A group with no members and no offsets (Dead) can be given offsets, as in Kafka;
    --export for several groups writes group,topic,partition,offset."""
    bs = broker.bootstrap_servers
    base = ["consumer-groups", "--bootstrap-server", bs]
    topic = "events"
    make_topic(bs, topic, [2])
    result = run_tool(*base, "--reset-offsets", "--group", "fresh-a", "--group", "fresh-b",
                      "--topic", topic, "--to-latest", "--dry-run", "--export")
    assert result.out == [f"fresh-a,{topic},0,2", f"fresh-b,{topic},0,2", ""]
    plan_file = tmp_path / "plan.csv"
    plan_file.write_text(f"fresh-a,{topic},0,1\nfresh-b,{topic},0,0\n")
    result = run_tool(*base, "--reset-offsets", "--group", "fresh-a", "--group", "fresh-b",
                      "--from-file", str(plan_file), "--execute")
    assert result.code == 0, result
    assert result.out == ["", f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} "
                              f"{'NEW-OFFSET':<15}",
                          f"{'fresh-a':<30} {topic:<30} {0:<10} {1:<15}",
                          f"{'fresh-b':<30} {topic:<30} {0:<10} {0:<15}"]
    assert first_offsets(bs, "fresh-a", topic, 1) == {0: 1}
    listed = run_tool(*base, "--list", "--state", "--output", "json")
    states = {o["group"]: o["state"] for o in map(json.loads, listed.out)}
    assert states["fresh-b"] == "Empty"
    both = run_tool(*base, "--delete", "--group", "fresh-a", "--group", "fresh-b")
    assert both.out == ["Deletion of requested consumer groups ('fresh-a', 'fresh-b') was "
                        "successful."]
    missing = run_tool(*base, "--delete", "--group", "fresh-a", "--output", "json")
    assert missing.code == 1
    assert json.loads(missing.out[0]) == {
        "group": "fresh-a", "deleted": False,
        "error": "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors."
                 "GroupIdNotFoundException: The group id does not exist."}



def test_reset_progress(broker: kafkapy.Broker) -> None:
    """A reset of many partitions says how far it got on stderr; the plan is committed."""
    bs = broker.bootstrap_servers
    partitions = cg.PROGRESS_MIN_PARTITIONS
    admin = AdminClient({"bootstrap.servers": bs})
    for future in admin.create_topics([NewTopic("many", partitions, 1)]).values():
        future.result(WAIT_S)
    base = ["consumer-groups", "--bootstrap-server", bs]
    result = run_tool(*base, "--reset-offsets", "--group", "many-g", "--group", "many-h",
                      "--topic", "many", "--to-latest", "--execute")
    assert result.code == 0, result
    assert result.err == [f"Reset {partitions}/{2 * partitions} partitions (group many-g)",
                          f"Reset {2 * partitions}/{2 * partitions} partitions (group many-h)"]
    assert len(result.out) == 2 + 2 * partitions
    described = run_tool(*base, "--describe", "--group", "many-h", "--output", "json")
    assert len(described.out) == partitions
    assert {json.loads(line)["currentOffset"] for line in described.out} == {0}

def test_usage_errors(broker: kafkapy.Broker) -> None:
    base = ["consumer-groups", "--bootstrap-server", broker.bootstrap_servers]
    cases = {
        (): "Command must include exactly one action: --list, --describe, --delete, "
            "--reset-offsets, --delete-offsets",
        ("--describe",): "Option [describe] takes one of these options: [group], "
                         "[all-groups]",
        ("--reset-offsets", "--group", "g", "--to-earliest"):
            "One of the reset scopes should be defined: --all-topics, --topic.",
        ("--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--to-latest"):
            'Option "[to-earliest]" can\'t be used with option "[to-latest]"',
        ("--reset-offsets", "--group", "g", "--all-topics", "--execute", "--dry-run"):
            "Option [reset-offsets] only accepts one of [execute] and [dry-run]",
        ("--list", "--state", "bogus"):
            "Invalid state list 'bogus'. Valid states are: PreparingRebalance, "
            "CompletingRebalance, Stable, Dead, Empty",
        ("--describe", "--group", "g", "--members", "--state"):
            "Option [describe] takes at most one of these options: [members], [offsets], "
            "[state]",
    }
    for args, message in cases.items():
        result = run_tool(*base, *args)
        assert (result.code, result.out, result.err) == (1, [], [message]), args
    no_server = run_tool("consumer-groups", "--list")
    assert (no_server.code, no_server.err) == (1, ['Missing required argument '
                                                   '"[bootstrap-server]"'])


def test_missing_extra_says_how_to_install(broker: kafkapy.Broker) -> None:
    """Without confluent_kafka the tool says how to install it (one line, exit code 1)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    for tool in ("consumer-groups", "get-offsets"):
        code = ("import sys; sys.modules['confluent_kafka'] = None; "
                "from kafkapy.tools.main import main; "
                f"sys.exit(main(['{tool}', '--bootstrap-server', "
                f"'{broker.bootstrap_servers}', '--list' if '{tool}' == 'consumer-groups' "
                "else '--time=-1']))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60, env=env)
        assert done.returncode == 1
        assert done.stdout == ""
        assert done.stderr.splitlines() == [
            f"kafkapy {tool} needs confluent-kafka: pip install 'kafkapy[tools]'"]


# ------------------------------------------------------------------------------ pure logic


def test_parse_datetime() -> None:
    assert cg.parse_datetime("2023-11-14T22:13:20.005") == T0 + 5
    assert cg.parse_datetime("2023-11-14T22:13:20.005Z") == T0 + 5
    assert cg.parse_datetime("2023-11-15T00:13:20.005+02:00") == T0 + 5
    assert cg.parse_datetime("2023-11-15T00:13:20.005+0200") == T0 + 5
    assert cg.parse_datetime("2023-11-14T20:13:20.005-02") == T0 + 5
    for bad in ("2023-11-14", "2023-11-14T22:13:20", "2023-13-14T22:13:20.005"):
        with pytest.raises(cg.CommandError):
            cg.parse_datetime(bad)


def test_parse_duration() -> None:
    assert cg.parse_duration_ms("PT1H") == 3_600_000
    assert cg.parse_duration_ms("P1DT2H3M4.5S") == 86_400_000 + 7_200_000 + 180_000 + 4_500
    assert cg.parse_duration_ms("pt15m") == 900_000
    assert cg.parse_duration_ms("-PT1S") == -1000
    for bad in ("P", "PT", "1H", "P1H"):
        with pytest.raises(cg.CommandError):
            cg.parse_duration_ms(bad)


def test_reset_plan_csv_round_trip() -> None:
    plans = {"g1": {("t", 0): 5, ("t", 1): 7}, "g2": {("u", 3): 0}}
    several = cg.export_csv(plans, single_group=False)
    assert several == "g1,t,0,5\ng1,t,1,7\ng2,u,3,0\n"
    assert cg.parse_reset_plan(several, ["g1", "g2"]) == plans
    one = cg.export_csv({"g1": plans["g1"]}, single_group=True)
    assert one == "t,0,5\nt,1,7\n"
    assert cg.parse_reset_plan(one, ["g1"]) == {"g1": plans["g1"]}
    with pytest.raises(cg.CommandError):
        cg.parse_reset_plan("g1,t,x,5\n", ["g1", "g2"])


def test_state_messages() -> None:
    def check(state: str, rows: int | None) -> tuple[bool, str, str, bool]:
        out, err = io.StringIO(), io.StringIO()
        output = cg.Output(False, out, err)
        shown = cg.should_print(output, "g", state, rows)
        return shown, out.getvalue(), err.getvalue(), output.failed

    assert check("Stable", 2) == (True, "", "", False)
    assert check("Empty", 0) == (False, "", "\nConsumer group 'g' has no active members.\n",
                                 False)
    assert check("PreparingRebalance", 1) == (
        True, "", "\nWarning: Consumer group 'g' is rebalancing.\n", False)
    assert check("CompletingRebalance", 1)[2] == \
        "\nWarning: Consumer group 'g' is rebalancing.\n"
    assert check("Dead", 0) == (False, "\nError: Consumer group 'g' does not exist.\n", "",
                                True)
    assert check("Stable", None) == (
        False, "\nError: The consumer group 'g' does not exist.\n", "", True)


def test_formats_widen_to_the_longest_value() -> None:
    long_topic = "t" * 20
    rows = [cg.PartitionRow("g", long_topic, 0, 1, 3, 2, "c", "h", "client"),
            cg.PartitionRow("g", "x", 1, None, None, None, None, None, None)]
    assert cg.format_offsets(rows)[2:] == [
        f"{'g':<15} {long_topic} {0:<10} {1:<15} {3:<15} {2:<15} {'c':<15} {'h':<15} client",
        f"{'g':<15} {'x':<20} {1:<10} {'-':<15} {'-':<15} {'-':<15} {'-':<15} {'-':<15} -"]
    assert cg.assignment_text([("b", 2), ("a", 1), ("b", 0)]) == "a(1), b(0,2)"
    assert cg.assignment_text([]) == "-"
    members = [cg.MemberRow("g", "m1", "static-1", "h", "c", (("t", 0),))]
    assert cg.format_members(members, verbose=False)[1] == (
        f"{'GROUP':<15} {'CONSUMER-ID':<15} {'GROUP-INSTANCE-ID':<17} {'HOST':<15} "
        f"{'CLIENT-ID':<15} {'#PARTITIONS':<15} ")
    assert cg.format_group_states([("a-very-long-group-name", "Empty")]) == [
        f"{'GROUP':<22} STATE", "a-very-long-group-name Empty"]


def test_command_config(broker: kafkapy.Broker, tmp_path: Path) -> None:
    """--command-config passes client properties (Java properties syntax) to the client; one
    librdkafka does not know is an error, not a traceback."""
    base = ["consumer-groups", "--bootstrap-server", broker.bootstrap_servers, "--list"]
    good = tmp_path / "client.properties"
    good.write_text("# the client's settings\nsecurity.protocol=PLAINTEXT\n"
                    "client.id : from-config\n")
    assert run_tool(*base, "--command-config", str(good)).code == 0
    bad = tmp_path / "bad.properties"
    bad.write_text("no.such.property=1\n")
    result = run_tool(*base, "--command-config", str(bad))
    assert result.code == 1
    assert result.out[:1] == [""]
    assert result.out[1].startswith("Error: Executing consumer group command failed due to ")
    assert "no.such.property" in result.out[1]
    assert load_properties(str(good)) == {"security.protocol": "PLAINTEXT",
                                             "client.id": "from-config"}


def test_registered_with_kafkas_flags(capsys: pytest.CaptureFixture[str]) -> None:
    from kafkapy.tools import main as tools_main

    for tool, flags in (("consumer-groups", ("--bootstrap-server", "--command-config",
                                             "--reset-offsets", "--to-datetime", "--export")),
                        ("get-offsets", ("--bootstrap-server", "--topic-partitions", "--time",
                                         "--exclude-internal-topics"))):
        with pytest.raises(SystemExit) as done:
            tools_main.main([tool, "--help"])
        assert done.value.code == 0
        text = capsys.readouterr().out
        assert all(flag in text for flag in flags), tool
