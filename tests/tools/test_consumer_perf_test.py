"""``kafkapy consumer-perf-test`` end to end: a real broker (``kafkapy.Broker`` in-process),
records of known sizes produced by confluent-kafka, the tool run as a subprocess; Kafka's
header printed exactly, its CSV result line checked field by field (the sizes and counts
exactly, the rates and times as numbers in Kafka's formats), detailed stats, a timeout."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafkapy.cluster import Cluster
from kafkapy.tools.consumer_perf_test import java_date
from tests.tools.records import WAIT_S, broker, end_offsets
from tests.tools.support import Run, run_tool

TOPICS = {"perf": 3, "perf-two": 1}
RECORDS = 2000
KEYED = 1000            # the first KEYED records have a 4-byte key
VALUE = 100
BYTES = RECORDS * VALUE + KEYED * 4
HEADER = ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, "
          "nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
DETAIL_HEADER = ("time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, "
                 "nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}"
RATE = r"(?:\d+\.\d{4}|Infinity|NaN)"
TOTAL = re.compile(rf"({DATE}), ({DATE}), (\d+\.\d{{4}}), {RATE}, (\d+), {RATE}, (\d+), "
                   rf"(-?\d+), {RATE}, {RATE}")
DETAIL = re.compile(rf"{DATE}, 0, (\d+\.\d{{4}}), {RATE}, (\d+), {RATE}, (\d+), (-?\d+), "
                    rf"{RATE}, {RATE}")


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    for bs in broker(tmp_path_factory.mktemp("consumer-perf"), TOPICS):
        producer = Producer({"bootstrap.servers": bs, "linger.ms": 5})
        for n in range(RECORDS):
            producer.produce("perf", b"v" * VALUE, b"keys" if n < KEYED else None,
                             partition=n % 3)
        producer.produce("perf-two", b"x" * 10)
        assert producer.flush(WAIT_S) == 0
        yield bs


def perf(bs: str, *args: str) -> Run:
    return run_tool("consumer-perf-test", "--bootstrap-server", bs, *args)


def test_header_and_result(bootstrap: str) -> None:
    result = perf(bootstrap, "--topic", "perf", "--messages", str(RECORDS))
    assert (result.code, result.err) == (0, [])
    assert result.out[0] == HEADER
    assert len(result.out) == 2
    match = TOTAL.fullmatch(result.out[1])
    assert match is not None, result.out[1]
    start, end, mb, count, rebalance_ms, fetch_ms = match.groups()
    assert mb == f"{BYTES / 1024 / 1024:.4f}" and int(count) == RECORDS
    # the run's time is the group's join (rebalance) plus fetching, to the millisecond
    elapsed = datetime.strptime(end, "%Y-%m-%d %H:%M:%S:%f") - \
        datetime.strptime(start, "%Y-%m-%d %H:%M:%S:%f")
    assert int(rebalance_ms) >= 0
    assert int(rebalance_ms) + int(fetch_ms) == round(elapsed.total_seconds() * 1000)


def test_hide_header_and_date_format(bootstrap: str) -> None:
    result = perf(bootstrap, "--topic", "perf", "--messages", str(RECORDS), "--hide-header",
                  "--date-format", "yyyy-MM-dd'T'HH")
    assert len(result.out) == 1
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d, \d{4}-\d\d-\d\dT\d\d, ", result.out[0])


def test_timeout_before_enough_messages(bootstrap: str) -> None:
    # the timeout runs from the start, as in Kafka: long enough for the group's join
    result = perf(bootstrap, "--include", "perf-t.o", "--messages", "5", "--timeout", "6000")
    assert result.code == 0
    assert result.out[:2] == [HEADER, "WARNING: Exiting before consuming the expected number "
                                      "of messages: timeout (6000 ms) exceeded. You can use "
                                      "the --timeout option to increase the timeout."]
    match = TOTAL.fullmatch(result.out[2])
    assert match is not None and int(match.group(4)) == 1


def test_detailed_stats(bootstrap: str) -> None:
    result = perf(bootstrap, "--topic", "perf", "--messages", str(RECORDS),
                  "--show-detailed-stats", "--reporting-interval", "1")
    assert result.code == 0
    assert result.out[0] == DETAIL_HEADER
    # the first poll with records comes after the group's join (longer than 1 ms)
    details = [DETAIL.fullmatch(line) for line in result.out[1:]]
    assert details and all(details), result.out
    counts = [int(m.group(2)) for m in details if m]
    assert counts == sorted(counts) and counts[-1] <= RECORDS


def test_json_output(bootstrap: str) -> None:
    result = perf(bootstrap, "--topic", "perf", "--messages", str(RECORDS), "--output", "json")
    [total] = result.json()
    assert total["type"] == "total"
    assert total["data_consumed_msgs"] == RECORDS
    assert total["data_consumed_mb"] == pytest.approx(BYTES / 1024 / 1024)


def test_usage_errors(bootstrap: str) -> None:
    cases = {("--topic", "perf"): 'Missing required argument "[messages]"',
             ("--messages", "1"):
                 "Exactly one of the following arguments is required: [topic], [include]",
             ("--messages", "1", "--topic", "perf", "--reporting-interval", "0"):
                 "Reporting interval must be greater than 0.",
             ("--messages", "1", "--include", "a["):
                 "java.util.regex.PatternSyntaxException: unterminated character set at "
                 "position 1"}
    for args, message in cases.items():
        result = perf(bootstrap, *args)
        assert (result.code, result.out, result.err) == (1, [], [message]), args


def test_without_confluent_kafka(bootstrap: str) -> None:
    result = run_tool("consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", "perf",
                      "--messages", "1",
                      prelude="import sys; sys.modules['confluent_kafka'] = None")
    assert (result.code, result.err) == (
        1, ["kafkapy consumer-perf-test needs confluent-kafka: pip install 'kafkapy[tools]'"])


def test_java_date() -> None:
    import time
    ms = int(time.mktime((2024, 3, 5, 7, 8, 9, 0, 0, -1))) * 1000 + 42
    assert java_date("yyyy-MM-dd HH:mm:ss:SSS", ms) == "2024-03-05 07:08:09:042"
    assert java_date("yy MMM d 'at' H''", ms) == "24 Mar 5 at 7'"


# ====================================================================== a 3-broker cluster

def test_cluster_perf_round_trip(tmp_path: Path) -> None:
    """Replicated partitions: producer-perf-test with acks=all, then both consuming tools
    read every record back from the partition leaders."""
    with Cluster(3, data_dir=tmp_path / "cluster") as cluster:
        bs = cluster.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bs})
        new = NewTopic("replicated", 2, 3, config={"min.insync.replicas": "2"})
        admin.create_topics([new])["replicated"].result(WAIT_S)
        for p in range(2):
            cluster.wait_for_isr("replicated", p, 3)
        produced = run_tool("producer-perf-test", "--topic", "replicated", "--num-records",
                            "3000", "--record-size", "50", "--throughput", "-1",
                            "--bootstrap-server", bs, "--producer-props", "acks=all")
        assert (produced.code, produced.err) == (0, [])
        assert produced.out[-1].startswith("3000 records sent, ")
        consumed = perf(bs, "--topic", "replicated", "--messages", "3000", "--hide-header")
        match = TOTAL.fullmatch(consumed.out[0])
        assert match is not None and int(match.group(4)) == 3000
        assert match.group(3) == f"{3000 * 50 / 1024 / 1024:.4f}"
        console = run_tool("console-consumer", "--bootstrap-server", bs, "--topic",
                           "replicated", "--from-beginning", "--max-messages", "3000",
                           "--property", "print.value=false", "--property",
                           "print.partition=true")
        assert console.err == ["Processed a total of 3000 messages"]
        # librdkafka's sticky partitioner may put every record in one partition: compare
        # with the partitions' log end offsets
        ends = end_offsets(bs, "replicated", 2)
        assert sum(ends) == 3000
        assert Counter(console.out) == {f"Partition:{p}": n for p, n in enumerate(ends) if n}
