"""``kafkapy producer-perf-test`` end to end: a real broker (``kafkapy.Broker`` in-process),
the tool run as a subprocess; its lines checked against Kafka's ProducerPerformance formats
(regular expressions: the numbers are measurements) and its record counts and payloads
verified by reading the topic back."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from kafkapy.tools.producer_perf_test import Stats
from tests.tools.records import WAIT_S, broker, end_offsets, read_topic
from tests.tools.support import Run, run_tool

TOPICS = {"sized": 2, "throttled": 1, "file": 1, "monotonic": 1, "txn": 1, "js": 1}
WINDOW = re.compile(r"(\d+) records sent, \d+\.\d records/sec \(\d+\.\d\d MB/sec\), "
                    r"\d+\.\d ms avg latency, (\d+)\.0 ms max latency\.")
TOTAL = re.compile(r"(\d+) records sent, \d+\.\d{6} records/sec \(\d+\.\d\d MB/sec\), "
                   r"\d+\.\d\d ms avg latency, (\d+)\.00 ms max latency, (\d+) ms 50th, "
                   r"(\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.")


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from broker(tmp_path_factory.mktemp("producer-perf"), TOPICS)


def perf(bs: str, topic: str, *args: str) -> Run:
    return run_tool("producer-perf-test", "--topic", topic, "--producer-props",
                    f"bootstrap.servers={bs}", "acks=all", "linger.ms=5", *args)


def check_total(line: str, records: int) -> None:
    match = TOTAL.fullmatch(line)
    assert match is not None, line
    count, max_latency, p50, p95, p99, p999 = map(int, match.groups())
    assert count == records
    assert p50 <= p95 <= p99 <= p999 <= max_latency


def test_record_size_unthrottled(bootstrap: str) -> None:
    result = perf(bootstrap, "sized", "--num-records", "3000", "--record-size", "100",
                  "--throughput", "-1")
    assert (result.code, result.err) == (0, [])
    assert all(WINDOW.fullmatch(line) for line in result.out[:-1]), result.out
    check_total(result.out[-1], 3000)
    assert sum(end_offsets(bootstrap, "sized", 2)) == 3000
    records = read_topic(bootstrap, "sized", 2, 3000)
    assert all(r.key is None and r.value is not None and len(r.value) == 100
               and re.fullmatch(rb"[A-Z]+", r.value) for r in records)


def test_throttled_run_prints_windows(bootstrap: str) -> None:
    # 6000 records at 1000/s take at least 6 s: at least one 5 s window is reported
    result = perf(bootstrap, "throttled", "--num-records", "6000", "--record-size", "10",
                  "--throughput", "1000")
    assert result.code == 0
    windows = [WINDOW.fullmatch(line) for line in result.out[:-1]]
    assert windows and all(windows), result.out
    assert sum(int(m.group(1)) for m in windows if m) <= 6000
    check_total(result.out[-1], 6000)
    assert end_offsets(bootstrap, "throttled", 1) == [6000]


def test_payload_file(bootstrap: str, tmp_path: Path) -> None:
    payloads = tmp_path / "payloads.txt"
    payloads.write_text("alpha,beta,,gamma")
    result = perf(bootstrap, "file", "--num-records", "60", "--payload-file", str(payloads),
                  "--payload-delimiter", ",", "--throughput", "-1")
    assert result.code == 0
    assert result.out[:2] == [f"Reading payloads from: {payloads}", "Number of messages read: 3"]
    check_total(result.out[-1], 60)
    values = {r.value for r in read_topic(bootstrap, "file", 1, 60)}
    assert values <= {b"alpha", b"beta", b"gamma"} and len(values) > 1


def test_payload_monotonic(bootstrap: str) -> None:
    result = perf(bootstrap, "monotonic", "--num-records", "50", "--payload-monotonic",
                  "--throughput", "-1", "--producer-props", "max.in.flight=1")
    assert result.code == 0
    check_total(result.out[-1], 50)
    assert [r.value for r in read_topic(bootstrap, "monotonic", 1, 50)] == \
        [str(n).encode() for n in range(50)]


def test_transactions(bootstrap: str) -> None:
    result = perf(bootstrap, "txn", "--num-records", "400", "--record-size", "20",
                  "--throughput", "1000", "--transactional-id", "perf-txn",
                  "--transaction-duration-ms", "100")
    assert (result.code, result.err) == (0, [])
    check_total(result.out[-1], 400)
    # every record committed: a read_committed consumer sees all 400
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "txn-check",
                         "isolation.level": "read_committed"})
    consumer.assign([TopicPartition("txn", 0, 0)])
    seen = 0
    try:
        for _ in range(int(WAIT_S)):
            seen += sum(1 for m in consumer.consume(500, 1.0) if m.error() is None)
            if seen >= 400:
                break
    finally:
        consumer.close()
    assert seen == 400
    # each transaction ends with a commit marker: more offsets than records
    assert end_offsets(bootstrap, "txn", 1)[0] > 400


def test_json_output(bootstrap: str) -> None:
    result = perf(bootstrap, "js", "--num-records", "100", "--record-size", "10",
                  "--throughput", "-1", "--output", "json")
    assert result.code == 0
    total = result.json()[-1]
    assert total["type"] == "total" and total["records"] == 100
    assert set(total) == {"type", "records", "records_per_sec", "mb_per_sec", "avg_latency_ms",
                          "max_latency_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms"}


def test_usage_errors(bootstrap: str) -> None:
    def error(*args: str) -> list[str]:
        result = run_tool("producer-perf-test", *args)
        assert result.code == 1 and result.out == []
        return result.err

    base = ("--topic", "js", "--throughput", "-1")
    props = ("--producer-props", f"bootstrap.servers={bootstrap}")
    assert error(*base, *props, "--num-records", "0", "--record-size", "1") == \
        ["producer-performance: error: --num-records should be greater than zero"]
    assert error(*base, "--num-records", "1", "--record-size", "1") == \
        ["producer-performance: error: Either --producer-props or --producer.config must be "
         "specified."]
    assert error(*base, *props, "--num-records", "1") == \
        ["producer-performance: error: one of the arguments --record-size --payload-file "
         "--payload-monotonic is required"]
    assert error(*base, *props, "--num-records", "1", "--record-size", "1",
                 "--payload-monotonic") == \
        ["producer-performance: error: argument --payload-monotonic: not allowed with "
         "argument --record-size"]


def test_without_confluent_kafka(bootstrap: str) -> None:
    result = run_tool("producer-perf-test", "--topic", "js", "--num-records", "1",
                      "--record-size", "1", "--throughput", "-1", "--producer-props",
                      f"bootstrap.servers={bootstrap}",
                      prelude="import sys; sys.modules['confluent_kafka'] = None")
    assert (result.code, result.err) == (
        1, ["kafkapy producer-perf-test needs confluent-kafka: pip install 'kafkapy[tools]'"])


def test_stats_as_kafka_computes_them() -> None:
    out = io.StringIO()
    stats = Stats(4, out)
    stats.start_ms -= 2000          # a run of (at least) 2 s
    for latency in (5, 1, 3, 2):
        stats.record(latency, 100, stats.start_ms)      # no window is due
    stats.print_total()
    match = TOTAL.fullmatch(out.getvalue().rstrip("\n"))
    assert match is not None, out.getvalue()
    # Kafka's percentile is the sorted sample at index int(p * n): [1, 2, 3, 5]
    assert match.groups() == ("4", "5", "3", "5", "5", "5")
    assert " 2.75 ms avg latency, " in out.getvalue()
    # nothing acknowledged: Java's 0 / 0, and the zero-filled sample's 0
    empty = io.StringIO()
    Stats(1, empty).print_total()
    assert " records/sec (" in empty.getvalue() and \
        " MB/sec), NaN ms avg latency, 0.00 ms max latency, 0 ms 50th, 0 ms 95th, 0 ms 99th, " \
        "0 ms 99.9th." in empty.getvalue()
    # one in num_records // 500000 latencies is sampled
    assert Stats(1_500_000, out).sampling == 3
