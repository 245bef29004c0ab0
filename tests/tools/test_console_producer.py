"""``kafkapy console-producer`` end to end: a real broker (``kafkapy.Broker`` in-process), the
tool run as a subprocess with known lines on standard input, the records read back with
confluent-kafka and compared exactly (keys, values, headers, the null marker); the reader's
errors and a broker's refusal reported as Kafka's tool reports them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkapy.tools.console_producer import LineReader, ReaderError
from tests.tools.records import broker, end_offsets, log_messages, read_topic
from tests.tools.support import Run, run_tool

TOPICS = {"plain": 1, "keyed": 1, "custom": 1, "halt": 1, "loose": 1, "small": 1, "sync": 1,
          "js": 1, "roundtrip": 3}
SMALL = {"small": {"max.message.bytes": "200"}, "sync": {"max.message.bytes": "200"}}
CALLBACK = "(org.apache.kafka.clients.producer.internals.ErrorLoggingCallback)"


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from broker(tmp_path_factory.mktemp("console-producer"), TOPICS, SMALL)


def produce(bs: str, topic: str, stdin: str, *args: str) -> Run:
    return run_tool("console-producer", "--bootstrap-server", bs, "--topic", topic, *args,
                    stdin=stdin)


def test_each_line_is_a_value(bootstrap: str) -> None:
    result = produce(bootstrap, "plain", "one\ntwo words\r\n\nlast without newline")
    assert (result.code, result.out, result.err) == (0, [], [])
    records = read_topic(bootstrap, "plain", 1, 4)
    assert [(r.key, r.value, r.headers) for r in records] == [
        (None, b"one", []), (None, b"two words", []), (None, b"", []),
        (None, b"last without newline", [])]
    assert all(r.timestamp[0] == 1 for r in records)     # CreateTime, set by the producer


def test_keys_headers_and_the_null_marker(bootstrap: str) -> None:
    lines = ("h1:v1,h2:NULL\tk1\tv1\n"
             "NULL\tk2\tNULL\n"
             "h:x\tNULL\tv3\n"
             "a:1,b:2,\tk4\tvalue\twith tab\n")
    result = produce(bootstrap, "keyed", lines, "--property", "parse.key=true",
                     "--property", "parse.headers=true", "--property", "null.marker=NULL")
    assert (result.code, result.err) == (0, [])
    assert [(r.key, r.value, r.headers) for r in read_topic(bootstrap, "keyed", 1, 4)] == [
        (b"k1", b"v1", [("h1", b"v1"), ("h2", None)]),
        (b"k2", None, []),
        (None, b"v3", [("h", b"x")]),
        # Java's split drops the trailing empty header; the value keeps its own tab
        (b"k4", b"value\twith tab", [("a", b"1"), ("b", b"2")])]


def test_custom_separators_from_a_reader_config(bootstrap: str, tmp_path: Path) -> None:
    config = str(tmp_path / "reader.properties")
    with open(config, "w") as f:
        f.write("parse.key=true\nkey.separator=::\nparse.headers=true\n"
                "headers.delimiter=|\nheaders.key.separator==\n")
    # --property wins over the file; headers.separator is a regular expression
    result = produce(bootstrap, "custom", "a=1;b=2|key::value\nc=3;;;d=|k2::v2\n",
                     "--reader-config", config, "--property", "headers.separator=;+")
    assert (result.code, result.err) == (0, [])
    assert [(r.key, r.value, r.headers) for r in read_topic(bootstrap, "custom", 1, 2)] == [
        (b"key", b"value", [("a", b"1"), ("b", b"2")]),
        (b"k2", b"v2", [("c", b"3"), ("d", b"")])]


def test_a_line_without_separator_stops_the_tool(bootstrap: str) -> None:
    result = produce(bootstrap, "halt", "k\tv\nnovalue\nk3\tv3\n", "--property",
                     "parse.key=true")
    assert result.code == 1
    assert result.err == ["org.apache.kafka.common.KafkaException: No key separator found on "
                          "line number 2: 'novalue'"]
    # the line before it was sent (the producer is closed, so flushed, on the way out)
    assert [(r.key, r.value) for r in read_topic(bootstrap, "halt", 1, 1)] == [(b"k", b"v")]


def test_ignore_error(bootstrap: str) -> None:
    result = produce(bootstrap, "loose", "novalue\nk\tv\n", "--property", "parse.key=true",
                     "--property", "ignore.error=true")
    assert (result.code, result.err) == (0, [])
    assert [(r.key, r.value) for r in read_topic(bootstrap, "loose", 1, 2)] == [
        (None, b"novalue"), (b"k", b"v")]


def test_a_refused_record_is_logged_and_the_exit_code_is_0(bootstrap: str) -> None:
    assert produce(bootstrap, "small", "first\n").code == 0
    # alone on its line of input: librdkafka, unlike the Java producer, does not split a
    # refused batch, so a record batched with it would fail with it
    result = produce(bootstrap, "small", "x" * 500 + "\n", "--property", "parse.key=true",
                     "--property", "ignore.error=true")
    assert result.code == 0
    assert log_messages(result.err) == [
        ("ERROR", f"Error when sending message to topic small with key: null, value: 500 "
                  f"bytes with error: {CALLBACK}"),
        ("", "org.apache.kafka.common.errors.RecordTooLargeException: The request included a "
             "message larger than the max message size the server will accept.")]
    assert [r.value for r in read_topic(bootstrap, "small", 1, 1)] == [b"first"]
    assert end_offsets(bootstrap, "small", 1) == [1]


def test_sync_stops_at_the_first_failure(bootstrap: str) -> None:
    result = produce(bootstrap, "sync", f"first\n{'y' * 500}\nnever\n", "--sync")
    assert result.code == 1
    assert result.err[-1] == ("java.util.concurrent.ExecutionException: org.apache.kafka."
                              "common.errors.RecordTooLargeException: The request included a "
                              "message larger than the max message size the server will "
                              "accept.")
    assert [r.value for r in read_topic(bootstrap, "sync", 1, 1)] == [b"first"]


def test_json_output(bootstrap: str) -> None:
    result = produce(bootstrap, "js", "a\nb\n", "--output", "json")
    assert result.code == 0
    assert result.json() == [{"topic": "js", "partition": 0, "offset": 0},
                             {"topic": "js", "partition": 0, "offset": 1}]


def test_usage_errors(bootstrap: str) -> None:
    assert run_tool("console-producer", "--bootstrap-server", bootstrap, stdin="").err == \
        ['Missing required argument "[topic]"']
    result = produce(bootstrap, "plain", "", "--property", "headers.delimiter=,")
    assert (result.code, result.err) == (
        1, ["org.apache.kafka.common.KafkaException: headers.delimiter and headers.separator "
            "may not be equal"])
    # an unknown property is ignored with the Java client's warning; a bad value is an error
    result = produce(bootstrap, "plain", "", "--producer-property", "no-such.setting=1")
    assert result.code == 0
    assert log_messages(result.err) == [
        ("WARN", "These configurations '[no-such.setting]' were supplied but are not used "
                 "yet. (org.apache.kafka.clients.producer.ProducerConfig)")]
    result = produce(bootstrap, "plain", "", "--producer-property", "acks=banana")
    assert result.code == 1 and "acks" in result.err[-1]


def test_without_confluent_kafka(bootstrap: str) -> None:
    result = run_tool("console-producer", "--bootstrap-server", bootstrap, "--topic", "plain",
                      prelude="import sys; sys.modules['confluent_kafka'] = None", stdin="")
    assert (result.code, result.err) == (
        1, ["kafkapy console-producer needs confluent-kafka: pip install 'kafkapy[tools]'"])


def test_reader_parses_as_kafka() -> None:
    reader = LineReader.configure({"parse.key": "true", "parse.headers": "true",
                                   "null.marker": "-"})
    assert reader.parse("x:1,y:-\tk\tv", 1) == (b"k", b"v", [("x", b"1"), ("y", None)])
    assert reader.parse("-\t-\t-", 1) == (None, None, [])
    with pytest.raises(ReaderError, match="No headers delimiter found on line number 7"):
        reader.parse("no delimiter", 7)
    with pytest.raises(ReaderError, match="No header key separator found in pair 'x'"):
        reader.parse("x\tk\tv", 1)
    with pytest.raises(ReaderError, match="Header keys should not be equal to the null "
                                          "marker '-'"):
        reader.parse("-:1\tk\tv", 1)
    with pytest.raises(ReaderError, match=r"null\.marker and key\.separator may not be equal"):
        LineReader.configure({"null.marker": "\t"})
