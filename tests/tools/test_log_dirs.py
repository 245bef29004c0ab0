"""``kafkapy log-dirs`` end to end: a real broker (``kafkapy.Broker`` in-process) with known
topics; the tool runs as a subprocess and its three lines (Kafka's LogDirsCommand) are
asserted exactly, each partition's ``size`` checked against the segment files on disk."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

import kafkapy
from tests.tools.support import Run, run_tool

WAIT_S = 30.0


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("logdirs")
    with kafkapy.Broker({}, data_dir=data) as b:
        bs = b.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bs})
        for future in admin.create_topics([NewTopic("a", 2, 1), NewTopic("b", 1, 1)]).values():
            future.result(WAIT_S)
        producer = Producer({"bootstrap.servers": bs, "linger.ms": 0})
        for i in range(3):
            producer.produce("a", b"value-%d" % i, partition=1)
        producer.produce("b", b"v", partition=0)
        assert producer.flush(WAIT_S) == 0
        yield bs, data


def log_dirs(bootstrap: str, *args: str) -> Run:
    return run_tool("log-dirs", "--bootstrap-server", bootstrap, *args)


def size(data: Path, partition: str) -> int:
    """The partition's log size as the broker reports it: its segments' bytes."""
    return sum(f.stat().st_size for f in (data / partition).glob("*.log"))


def entry(data: Path, partition: str) -> dict[str, object]:
    return {"partition": partition, "size": size(data, partition), "offsetLag": 0,
            "isFuture": False}


def test_describe(broker: tuple[str, Path]) -> None:
    bs, data = broker
    result = log_dirs(bs, "--describe")
    assert result.code == 0 and result.err == []
    assert size(data, "a-1") > 0 and size(data, "a-0") == 0
    assert result.out[:2] == ["Querying brokers for log directories information",
                              "Received log directory information from brokers 1"]
    assert len(result.out) == 3
    # Kafka's Jackson line: no spaces, keys in Kafka's order
    expected = {"brokers": [{"broker": 1, "logDirs": [{
        "partitions": [entry(data, p) for p in ("a-0", "a-1", "b-0")],
        "error": None, "logDir": str(data)}]}], "version": 1}
    assert result.out[2] == json.dumps(expected, separators=(",", ":"))


def test_topic_and_broker_lists(broker: tuple[str, Path]) -> None:
    bs, data = broker
    result = log_dirs(bs, "--describe", "--topic-list", "b", "--broker-list", "1")
    assert result.code == 0
    assert json.loads(result.out[2])["brokers"][0]["logDirs"][0]["partitions"] == \
        [entry(data, "b-0")]


def test_json(broker: tuple[str, Path]) -> None:
    bs, data = broker
    result = log_dirs(bs, "--describe", "--topic-list", "a,b", "--output", "json")
    assert result.code == 0
    assert result.json() == [{"broker": 1, "logDir": str(data), "error": None,
                              "partitions": [entry(data, p) for p in ("a-0", "a-1", "b-0")]}]


def test_errors(broker: tuple[str, Path]) -> None:
    bs, _ = broker
    result = log_dirs(bs, "--describe", "--broker-list", "1,7,5")
    assert (result.code, result.out, result.err) == (1, [], [
        "ERROR: The given brokers do not exist from --broker-list: 5,7. Current existent "
        "brokers: 1"])
    result = log_dirs(bs)
    assert (result.code, result.err) == (1, ['Missing required argument "[describe]"'])
    result = run_tool("log-dirs", "--describe")
    assert (result.code, result.err) == (1, ['Missing required argument "[bootstrap-server]"'])


def test_without_kafka_python(broker: tuple[str, Path]) -> None:
    result = run_tool("log-dirs", "--bootstrap-server", broker[0], "--describe",
                      prelude="import sys\nsys.modules['kafka'] = None")
    assert (result.code, result.out, result.err) == (
        1, [], ["kafkapy log-dirs needs kafka-python: pip install 'kafkapy[tools]'"])
