"""``kafkapy delete-records`` end to end: a real broker (``kafkapy.Broker`` in-process), records
produced by confluent-kafka; the tool runs as a subprocess with an offset JSON file, its lines
(Kafka's DeleteRecordsCommand) are asserted exactly and the new log start offsets read back
with ListOffsets (earliest)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

import kafkapy
from tests.tools.support import Run, run_tool

WAIT_S = 30.0
RECORDS = {0: 5, 1: 2, 2: 4, 3: 3}     # partition of "d" -> records produced


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with kafkapy.Broker({}, data_dir=tmp_path_factory.mktemp("delete")) as broker:
        bs = broker.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bs})
        for future in admin.create_topics([NewTopic("d", len(RECORDS), 1)]).values():
            future.result(WAIT_S)
        producer = Producer({"bootstrap.servers": bs, "linger.ms": 0})
        for partition, count in RECORDS.items():
            for _ in range(count):
                producer.produce("d", b"v", partition=partition)
        assert producer.flush(WAIT_S) == 0
        yield bs


def delete_records(bootstrap: str, tmp_path: Path, offsets: object, *args: str) -> Run:
    path = tmp_path / "offsets.json"
    path.write_text(offsets if isinstance(offsets, str) else json.dumps(offsets))
    return run_tool("delete-records", "--bootstrap-server", bootstrap,
                    "--offset-json-file", str(path), *args)


def log_start(bootstrap: str, partition: int) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition("d", partition)
    return int(admin.list_offsets({tp: OffsetSpec.earliest()})[tp].result(WAIT_S).offset)


def test_delete(bootstrap: str, tmp_path: Path) -> None:
    offsets = {"partitions": [{"topic": "d", "partition": 1, "offset": 9},
                              {"topic": "d", "partition": 0, "offset": 3},
                              {"topic": "d", "partition": 2, "offset": -1}],
               "version": 1}
    result = delete_records(bootstrap, tmp_path, offsets)
    assert (result.code, result.err) == (0, [])
    assert result.out == [
        "Executing records delete operation",
        "Records delete operation completed:",
        "partition: d-0\tlow_watermark: 3",
        "partition: d-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: The "
        "requested offset is not within the range of offsets maintained by the server.",
        "partition: d-2\tlow_watermark: 4",          # -1: the high watermark
    ]
    assert [log_start(bootstrap, p) for p in range(3)] == [3, 0, 4]


def test_json(bootstrap: str, tmp_path: Path) -> None:
    # no "version": 1 is the default
    result = delete_records(bootstrap, tmp_path,
                            {"partitions": [{"topic": "d", "partition": 3, "offset": 1}]},
                            "--output", "json")
    assert result.code == 0
    assert result.json() == [{"topic": "d", "partition": 3, "low_watermark": 1}]
    assert log_start(bootstrap, 3) == 1


def test_errors(bootstrap: str, tmp_path: Path) -> None:
    twice = {"partitions": [{"topic": "d", "partition": 3, "offset": 2},
                            {"topic": "d", "partition": 3, "offset": 3}]}
    cases = [
        (twice, "Offset json file contains duplicate topic partitions: d-3"),
        ("{not json", "The input string is not a valid JSON"),
        ({"partitions": [], "version": 2}, "Not supported version field value 2"),
        ({"version": 1}, "Missing partitions field"),
    ]
    for offsets, message in cases:
        result = delete_records(bootstrap, tmp_path, offsets)
        assert (result.code, result.out, result.err) == (1, [], [message]), offsets
    assert log_start(bootstrap, 3) == 1         # nothing half-done
    result = run_tool("delete-records", "--bootstrap-server", bootstrap)
    assert (result.code, result.err) == (1, ['Missing required argument "[offset-json-file]"'])
    missing = str(tmp_path / "absent.json")
    result = run_tool("delete-records", "--bootstrap-server", bootstrap,
                      "--offset-json-file", missing)
    assert (result.code, result.err) == (1, [f"{missing} (No such file or directory)"])


def test_without_confluent_kafka(bootstrap: str, tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    path.write_text(json.dumps({"partitions": [{"topic": "d", "partition": 0, "offset": 4}]}))
    result = run_tool("delete-records", "--bootstrap-server", bootstrap,
                      "--offset-json-file", str(path),
                      prelude="import sys\nsys.modules['confluent_kafka'] = None")
    assert (result.code, result.out, result.err) == (
        1, [], ["kafkapy delete-records needs confluent-kafka: pip install 'kafkapy[tools]'"])
