"""``kafkapy console-consumer`` end to end: a real broker (``kafkapy.Broker`` in-process),
records with known keys, values, headers and CreateTime timestamps produced by
confluent-kafka, the tool run as a subprocess; its lines (Kafka's DefaultMessageFormatter:
timestamp, partition, offset, headers, key, value) and its ``Processed a total of N
messages`` asserted exactly; a console-producer -> console-consumer round trip."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer

from tests.tools.records import WAIT_S, broker, log_messages, read_topic
from tests.tools.support import ROOT, Run, run_tool

T0 = 1_700_000_000_000
TOPICS = {"known": 2, "appended": 1, "inc-a": 1, "inc-b": 1, "other": 1, "roundtrip": 1,
          "grouped": 1, "txn": 1}
CONFIGS = {"appended": {"message.timestamp.type": "LogAppendTime"}}
# partition -> (key, value, headers) at offsets 0, 1, ... (timestamps T0 + offset)
KNOWN = {
    0: [(b"k0", b"v0", [("h1", b"v1"), ("h2", None)]),
        (None, b"no key", []),
        (b"k2", None, [("only", b"one")])],
    1: [(b"p1", b"first of 1", [])],
}
ALL = ("print.timestamp", "print.partition", "print.offset", "print.headers", "print.key")


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    for bs in broker(tmp_path_factory.mktemp("console-consumer"), TOPICS, CONFIGS):
        producer = Producer({"bootstrap.servers": bs, "linger.ms": 0})
        for partition, records in KNOWN.items():
            for offset, (key, value, headers) in enumerate(records):
                producer.produce("known", value, key, partition=partition,
                                 timestamp=T0 + offset, headers=headers or None)
        producer.produce("appended", b"stamped by the broker", timestamp=T0)
        for topic in ("inc-a", "inc-b", "other"):
            producer.produce(topic, topic.encode())
        for n in range(5):
            producer.produce("grouped", b"g%d" % n)
        assert producer.flush(WAIT_S) == 0
        transactional = Producer({"bootstrap.servers": bs, "transactional.id": "console-txn"})
        transactional.init_transactions(WAIT_S)
        for value, commit in ((b"committed", True), (b"aborted", False)):
            transactional.begin_transaction()
            transactional.produce("txn", value)
            transactional.flush(WAIT_S)
            if commit:
                transactional.commit_transaction(WAIT_S)
            else:
                transactional.abort_transaction(WAIT_S)
        yield bs


def consume(bs: str, *args: str) -> Run:
    return run_tool("console-consumer", "--bootstrap-server", bs, *args)


def props(*names: str) -> list[str]:
    return [arg for name in names for arg in ("--property", f"{name}=true")]


def test_values_by_default(bootstrap: str) -> None:
    result = consume(bootstrap, "--topic", "known", "--partition", "0", "--offset", "earliest",
                     "--max-messages", "3")
    assert result.code == 0
    assert result.out == ["v0", "no key", "null"]
    assert result.err == ["Processed a total of 3 messages"]


def test_every_field_in_kafkas_order(bootstrap: str) -> None:
    result = consume(bootstrap, "--topic", "known", "--from-beginning", "--max-messages", "4",
                     *props(*ALL))
    assert result.code == 0
    # partitions interleave as the client fetches them: compare as a set of lines
    assert sorted(result.out) == sorted([
        f"CreateTime:{T0}\tPartition:0\tOffset:0\th1:v1,h2:null\tk0\tv0",
        f"CreateTime:{T0 + 1}\tPartition:0\tOffset:1\tNO_HEADERS\tnull\tno key",
        f"CreateTime:{T0 + 2}\tPartition:0\tOffset:2\tonly:one\tk2\tnull",
        f"CreateTime:{T0}\tPartition:1\tOffset:0\tNO_HEADERS\tp1\tfirst of 1"])
    assert result.err == ["Processed a total of 4 messages"]


def test_separators_and_null_literal(bootstrap: str) -> None:
    result = consume(bootstrap, "--topic", "known", "--partition", "0", "--offset", "earliest",
                     "--max-messages", "3", *props("print.key", "print.headers", "print.offset"),
                     "--property", "key.separator= | ", "--property", "headers.separator=;",
                     "--property", "null.literal=<nil>", "--property", "line.separator=$\n")
    assert result.out == ["Offset:0 | h1:v1;h2:<nil> | k0 | v0$",
                          "Offset:1 | NO_HEADERS | <nil> | no key$",
                          "Offset:2 | only:one | k2 | <nil>$"]


def test_key_without_value(bootstrap: str) -> None:
    result = consume(bootstrap, "--topic", "known", "--partition", "0", "--offset", "1",
                     "--max-messages", "2", "--property", "print.key=true",
                     "--property", "print.value=false", "--property", "print.partition=true")
    assert result.out == ["Partition:0\tnull", "Partition:0\tk2"]


def test_log_append_time(bootstrap: str) -> None:
    [record] = read_topic(bootstrap, "appended", 1, 1)
    assert record.timestamp[0] == 2 and record.timestamp[1] != T0
    result = consume(bootstrap, "--topic", "appended", "--from-beginning", "--max-messages",
                     "1", *props("print.timestamp"))
    assert result.out == [f"LogAppendTime:{record.timestamp[1]}\tstamped by the broker"]


def test_include_pattern_matches_whole_names(bootstrap: str) -> None:
    result = consume(bootstrap, "--include", "inc-.", "--from-beginning", "--max-messages",
                     "2", "--timeout-ms", "20000")
    assert sorted(result.out) == ["inc-a", "inc-b"]
    result = consume(bootstrap, "--include", "inc", "--from-beginning", "--timeout-ms", "3000")
    assert result.out == [] and result.err[-1] == "Processed a total of 0 messages"


def test_timeout_from_latest(bootstrap: str) -> None:
    result = consume(bootstrap, "--topic", "known", "--partition", "0", "--timeout-ms", "1500")
    assert result.code == 0
    assert result.out == []
    assert log_messages(result.err) == [
        ("ERROR", "Error processing message, terminating consumer process:  "
                  "(org.apache.kafka.tools.consumer.ConsoleConsumer)"),
        ("", "org.apache.kafka.common.errors.TimeoutException"),
        ("", "Processed a total of 0 messages")]


def test_a_group_resumes_where_it_stopped(bootstrap: str) -> None:
    first = consume(bootstrap, "--topic", "grouped", "--group", "readers", "--from-beginning",
                    "--max-messages", "2")
    assert first.out == ["g0", "g1"]
    # from the committed offset: from the start or the end would print other records
    rest = consume(bootstrap, "--topic", "grouped", "--group", "readers", "--max-messages",
                   "3", "--timeout-ms", str(int(WAIT_S * 1000)))
    assert rest.out == ["g2", "g3", "g4"]
    assert rest.err[-1] == "Processed a total of 3 messages"


def test_isolation_level(bootstrap: str) -> None:
    everything = consume(bootstrap, "--topic", "txn", "--partition", "0", "--offset",
                         "earliest", "--max-messages", "2")
    assert everything.out == ["committed", "aborted"]
    committed = consume(bootstrap, "--topic", "txn", "--partition", "0", "--offset",
                        "earliest", "--isolation-level", "read_committed", "--timeout-ms",
                        "3000")
    assert committed.out == ["committed"]
    assert committed.err[-1] == "Processed a total of 1 messages"


def test_json_output(bootstrap: str) -> None:
    result = consume(bootstrap, "--topic", "known", "--partition", "0", "--offset", "earliest",
                     "--max-messages", "2", "--output", "json")
    assert result.json() == [
        {"topic": "known", "partition": 0, "offset": 0, "timestamp_type": "CreateTime",
         "timestamp": T0, "key": "k0", "value": "v0", "headers": [["h1", "v1"], ["h2", None]]},
        {"topic": "known", "partition": 0, "offset": 1, "timestamp_type": "CreateTime",
         "timestamp": T0 + 1, "key": None, "value": "no key", "headers": []}]


def test_round_trip_through_console_producer(bootstrap: str) -> None:
    lines = ["h1:a,h2:b\tkey-1\tvalue 1", "NO_HEADERS\tkey-2\tvalue 2", "x:y\tnull\tnull"]
    produced = run_tool("console-producer", "--bootstrap-server", bootstrap, "--topic",
                        "roundtrip", "--property", "parse.key=true", "--property",
                        "parse.headers=true", "--property", "null.marker=null",
                        stdin="\n".join(line.replace("NO_HEADERS", "null") for line in lines))
    assert (produced.code, produced.err) == (0, [])
    result = consume(bootstrap, "--topic", "roundtrip", "--from-beginning", "--max-messages",
                     "3", *props("print.headers", "print.key"))
    assert result.out == lines


def test_usage_errors(bootstrap: str) -> None:
    cases = {
        ("--topic", "known", "--offset", "1"):
            "The partition is required when offset is specified.",
        ("--topic", "known", "--include", "k.*"):
            "Exactly one of the following arguments is required: [topic], [include]",
        ("--topic", "known", "--partition", "0", "--offset", "-3"):
            "The provided offset value '-3' is incorrect. Valid values are 'earliest', "
            "'latest', or a non-negative long.",
        ("--topic", "known", "--partition", "0", "--offset", "1", "--from-beginning"):
            "Options from-beginning and offset cannot be specified together.",
        ("--topic", "known", "--partition", "0", "--group", "g"):
            "Options group and partition cannot be specified together.",
        ("--topic", "known", "--group", "a", "--consumer-property", "group.id=b"):
            "The group ids provided in different places (directly using '--group', via "
            "'--consumer-property', or via '--consumer.config') do not match. Detected group "
            "ids: 'a', 'b'",
        ("--include", "a["):
            "java.util.regex.PatternSyntaxException: unterminated character set at position 1",
        ("--topic", "known", "--from-beginning", "--consumer-property",
         "auto.offset.reset=latest"):
            "Can't simultaneously specify --from-beginning and 'auto.offset.reset=latest', "
            "please remove one option",
    }
    for args, message in cases.items():
        result = consume(bootstrap, *args)
        assert (result.code, result.out, result.err) == (1, [], [message]), args


def test_without_confluent_kafka(bootstrap: str) -> None:
    result = run_tool("console-consumer", "--bootstrap-server", bootstrap, "--topic", "known",
                      prelude="import sys; sys.modules['confluent_kafka'] = None")
    assert (result.code, result.err) == (
        1, ["kafkapy console-consumer needs confluent-kafka: pip install 'kafkapy[tools]'"])


def test_sigterm_closes_and_reports_the_total(bootstrap: str) -> None:
    """Kafka's shutdown hook: a consumer told to stop still prints its total."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafkapy.tools", "console-consumer", "--bootstrap-server",
         bootstrap, "--topic", "known", "--partition", "1", "--offset", "earliest"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        # the only record of partition 1, then the tool waits for more (no timeout)
        ready, _, _ = select.select([proc.stdout], [], [], WAIT_S)
        assert ready, "no record printed"
        assert proc.stdout.readline() == "first of 1\n"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=WAIT_S)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 143
    assert out == ""
    assert [line for line in err.splitlines() if not line.startswith("%")] == \
        ["Processed a total of 1 messages"]
