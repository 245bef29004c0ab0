"""``kafkapy get-offsets`` end to end: a real broker (``kafkapy.Broker`` in-process), records
produced by confluent-kafka with known timestamps, the log start moved by DeleteRecords, a
group commit creating ``__consumer_offsets``; the tool runs as a subprocess and its
``topic:partition:offset`` lines (Kafka's GetOffsetShell order: by the string
``topic-partition``) are asserted exactly for each ``--time``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, Producer
from confluent_kafka import TopicPartition as ClientTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kafkapy
from tests.tools.support import Run, run_tool

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000_000
WAIT_S = 30.0
# Partition -> record timestamps (offsets 0, 1, ...) of topic "clicks": partition 0's largest
# timestamp is its offset 1, not its last record.
CLICKS = {0: [T0 + 5, T0 + 50, T0 + 7], 1: [T0 + 1, T0 + 2], 2: []}
WIDE = 11       # partitions of "wide": 10 sorts before 2, as Kafka sorts ("wide-10" < "wide-2")


def get_offsets(bootstrap: str, *args: str) -> Run:
    return run_tool("get-offsets", "--bootstrap-server", bootstrap, *args)


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = {"offsets.topic.num.partitions": "1"}
    with kafkapy.Broker(settings, data_dir=tmp_path_factory.mktemp("offsets")) as broker:
        bs = broker.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bs})
        for future in admin.create_topics([NewTopic("clicks", len(CLICKS), 1),
                                           NewTopic("wide", WIDE, 1)]).values():
            future.result(WAIT_S)
        producer = Producer({"bootstrap.servers": bs, "linger.ms": 0})
        for partition, stamps in CLICKS.items():
            for ts in stamps:
                producer.produce("clicks", b"v", partition=partition, timestamp=ts)
        for partition in range(WIDE):
            producer.produce("wide", b"v", partition=partition, timestamp=T0)
        assert producer.flush(WAIT_S) == 0
        # the log start of wide-3 moves to 1
        for future in admin.delete_records([ClientTopicPartition("wide", 3, 1)]).values():
            future.result(WAIT_S)
        # a committed offset makes the broker create __consumer_offsets
        request = ConsumerGroupTopicPartitions("g", [ClientTopicPartition("clicks", 0, 1)])
        for future in admin.alter_consumer_group_offsets([request]).values():
            future.result(WAIT_S)
        yield bs


def wide(offsets: dict[int, int]) -> list[str]:
    return [f"wide:{p}:{o}" for p, o in sorted(offsets.items(), key=lambda x: str(x[0]))]


def test_latest_is_the_default(bootstrap: str) -> None:
    result = get_offsets(bootstrap, "--topic", "clicks|wide")
    assert result.code == 0 and result.err == []
    assert result.out == ["clicks:0:3", "clicks:1:2", "clicks:2:0",
                          *wide(dict.fromkeys(range(WIDE), 1))]
    assert get_offsets(bootstrap, "--topic", "clicks|wide", "--time", "-1").out == result.out
    assert get_offsets(bootstrap, "--topic", "clicks|wide", "--time", "latest").out == \
        result.out


def test_earliest(bootstrap: str) -> None:
    expected = [f"wide:{p}:{1 if p == 3 else 0}" for p in sorted(range(WIDE), key=str)]
    assert get_offsets(bootstrap, "--topic", "wide", "--time", "-2").out == expected
    assert get_offsets(bootstrap, "--topic", "wide", "--time", "earliest").out == expected


def test_max_timestamp(bootstrap: str) -> None:
    # an empty partition has no record with the largest timestamp: no line, as in Kafka
    result = get_offsets(bootstrap, "--topic", "clicks", "--time", "-3")
    assert result.out == ["clicks:0:1", "clicks:1:1"]
    assert get_offsets(bootstrap, "--topic", "clicks", "--time", "max-timestamp").out == \
        result.out


def test_timestamp(bootstrap: str) -> None:
    # the first offset whose timestamp is at or after the one asked for
    assert get_offsets(bootstrap, "--topic", "clicks", "--time", str(T0 + 6)).out == \
        ["clicks:0:1"]
    assert get_offsets(bootstrap, "--topic", "clicks", "--time", str(T0 + 2)).out == \
        ["clicks:0:0", "clicks:1:1"]
    assert get_offsets(bootstrap, "--topic", "clicks", "--time", str(T0 + 51)).out == []


def test_partition_filters(bootstrap: str) -> None:
    assert get_offsets(bootstrap, "--topic", "clicks", "--partitions", "0,2").out == \
        ["clicks:0:3", "clicks:2:0"]
    assert get_offsets(bootstrap, "--topic-partitions", "clicks:1-,wide:9").out == \
        ["clicks:1:2", "clicks:2:0", "wide:9:1"]
    assert get_offsets(bootstrap, "--topic-partitions", "wid.*:-2").out == \
        ["wide:0:1", "wide:1:1"]
    # --topic is a regular expression over the whole name
    assert get_offsets(bootstrap, "--topic", "click").code == 1


def test_internal_topics(bootstrap: str) -> None:
    everything = get_offsets(bootstrap)
    assert "__consumer_offsets:0:1" in everything.out
    assert len(everything.out) == len(CLICKS) + WIDE + 1
    external = get_offsets(bootstrap, "--exclude-internal-topics")
    assert external.out == [line for line in everything.out
                            if not line.startswith("__consumer_offsets:")]


def test_json(bootstrap: str) -> None:
    result = get_offsets(bootstrap, "--topic", "clicks", "--output", "json")
    assert [json.loads(line) for line in result.out] == [
        {"topic": "clicks", "partition": p, "offset": o} for p, o in ((0, 3), (1, 2), (2, 0))]


def test_errors(bootstrap: str) -> None:
    cases = {
        ("--topic", "nothing-like-this"):
            "Error occurred: Could not match any topic-partitions with the specified filters",
        ("--time", "yesterday"):
            "Error occurred: Malformed time argument yesterday. Please use -1 or latest / -2 "
            "or earliest / -3 or max-timestamp, or a specified long format timestamp",
        ("--partitions", "1,x"):
            "Error occurred: --partitions expects a comma separated list of numeric partition "
            "ids, but received: 1,x",
        ("--topic-partitions", "clicks", "--topic", "clicks"):
            "Error occurred: --topic-partitions cannot be used with --topic or --partitions",
        ("--topic-partitions", "clicks:x"): "Error occurred: Invalid rule specification: "
                                            "clicks:x",
    }
    for args, message in cases.items():
        result = get_offsets(bootstrap, *args)
        assert (result.code, result.out, result.err) == (1, [], [message]), args
