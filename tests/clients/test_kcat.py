"""kcat (Debian's package, librdkafka inside) against kafkapy: -L, -P, -C -e and -Q.

kcat is a test dependency installed from the OS (``apt-get install -y kcat``); without it
these tests fail with that instruction rather than skip. Outputs are compared exactly, mostly
through kcat's JSON output (``-J``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from typing import Any

import pytest

from kafkapy.testing import BrokerHandle

T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def kcat() -> str:
    path = shutil.which("kcat")
    if path is None:
        pytest.fail("kcat is not installed: `apt-get install -y kcat` (Debian/Ubuntu); "
                    "./dev test installs it (./dev check-deps lists what is missing)")
    return path


def run(kcat: str, broker: BrokerHandle, *args: str, stdin: str | None = None) -> str:
    """kcat's stdout; fails with its stderr if it exits non-zero."""
    result = subprocess.run([kcat, "-b", broker.bootstrap_servers, *args], input=stdin,
                            capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 0, f"kcat {' '.join(args)}: exit {result.returncode}\n" \
                                   f"{result.stderr}"
    return result.stdout


def topic_for(request: pytest.FixtureRequest) -> str:
    return "kcat-" + "".join(c if c.isalnum() else "-" for c in request.node.name)


def test_list_metadata(kcat: str, kafka_broker: BrokerHandle) -> None:
    broker = kafka_broker
    broker.create_topic("two", partitions=2)
    broker.create_topic("one")
    node = broker.server.node_id
    md = json.loads(run(kcat, broker, "-L", "-J"))
    assert md["controllerid"] == node
    assert md["brokers"] == [{"id": node, "name": broker.bootstrap_servers}]
    assert {t["topic"]: t["partitions"] for t in md["topics"]} == {
        name: [{"partition": p, "leader": node, "replicas": [{"id": node}],
                "isrs": [{"id": node}]} for p in range(count)]
        for name, count in {"two": 2, "one": 1}.items()}
    text = run(kcat, broker, "-L")
    assert f'broker {node} at {broker.bootstrap_servers} (controller)' in text
    assert ' topic "two" with 2 partitions:' in text
    assert "    partition 1, leader 1, replicas: 1, isrs: 1" in text


@pytest.mark.kafka_broker(auto_create_topics_enable="false")
def test_list_one_unknown_topic(kcat: str, kafka_broker: BrokerHandle) -> None:
    """``-L -t`` for a missing topic with auto-creation off: the topic's error, not a
    created topic."""
    broker = kafka_broker
    md = json.loads(run(kcat, broker, "-L", "-J", "-t", "missing"))
    [topic] = md["topics"]
    assert topic["topic"] == "missing"
    assert topic["error"] == "Broker: Unknown topic or partition"
    assert "missing" not in broker.topics()


# lz4: librdkafka compresses with it only when the broker advertises FindCoordinator.
PRODUCE_CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@pytest.mark.parametrize("codec", PRODUCE_CODECS)
def test_produce(kcat: str, kafka_broker_session: BrokerHandle,
                 request: pytest.FixtureRequest, codec: str) -> None:
    broker = kafka_broker_session
    topic = topic_for(request)
    broker.create_topic(topic, partitions=2)
    lines = [f"key-{i}:{'compressible text ' * (5 + i)}" for i in range(20)] + [":no key"]
    # One batch: librdkafka sends a batch uncompressed when compressing does not shrink it,
    # as it would not for a batch of the last, short line alone (CI saw that, on a slow
    # machine, with the default linger). All 21 lines are queued well within 500 ms.
    run(kcat, broker, "-P", "-t", topic, "-p", "1", "-K", ":", "-H", "h=1", "-H", "h=2",
        "-H", "other=x", "-z", codec, "-X", "linger.ms=500",
        stdin="\n".join(lines) + "\n")
    records = broker.read_all(topic)
    assert [(r.partition, r.offset, r.key, r.value, r.headers) for r in records] == [
        (1, i, line.split(":", 1)[0].encode(), line.split(":", 1)[1].encode(),
         [("h", b"1"), ("h", b"2"), ("other", b"x")]) for i, line in enumerate(lines)]
    assert {r.compression for r in records} == {CODEC_IDS[codec]}
    assert broker.end_offsets(topic) == {0: 0, 1: len(lines)}


def test_consume_to_end(kcat: str, kafka_broker_session: BrokerHandle,
                        request: pytest.FixtureRequest) -> None:
    broker = kafka_broker_session
    topic = topic_for(request)
    broker.create_topic(topic)
    sent: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]] = [
        (b"k0", b"plain", []),
        (None, b"null key", [("a", b"1"), ("a", b"2")]),
        (b"k2", b"", [("empty", b"")]),
        (b"k3", b"zstd", []),
    ]
    for i, (key, value, headers) in enumerate(sent):
        broker.produce(topic, value, key=key, headers=headers, timestamp=T0 + i,
                       compression=4 if value == b"zstd" else 0)
    out = run(kcat, broker, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-J",
              "-q")
    got = [json.loads(line) for line in out.splitlines()]

    def want(i: int) -> dict[str, Any]:
        key, value, headers = sent[i]
        flat: list[str] = [s for k, v in headers for s in (k, (v or b"").decode())]
        msg: dict[str, Any] = {
            "topic": topic, "partition": 0, "offset": i, "tstype": "create", "ts": T0 + i,
            "broker": broker.server.node_id, "key": None if key is None else key.decode(),
            "payload": None if value is None else value.decode()}
        if flat:
            msg["headers"] = flat
        return msg

    assert got == [want(i) for i in range(len(sent))]
    # From an offset, a given number of records, with kcat's format string.
    out = run(kcat, broker, "-C", "-t", topic, "-p", "0", "-o", "2", "-c", "2", "-e",
              "-f", "%o|%k|%s|%T\\n", "-q")
    assert out == f"2|k2||{T0 + 2}\n3|k3|zstd|{T0 + 3}\n"


def test_consume_waits_for_new_records(kcat: str, kafka_broker: BrokerHandle,
                                       request: pytest.FixtureRequest) -> None:
    """``-o end -c 1`` (no -e): kcat long-polls until a record arrives. (A broker of its own:
    a parked fetch seen in the purgatory must be kcat's.)"""
    broker = kafka_broker
    topic = topic_for(request)
    broker.create_topic(topic)
    broker.produce(topic, b"old")
    with subprocess.Popen(
            [kcat, "-b", broker.bootstrap_servers, "-C", "-t", topic, "-p", "0", "-o", "end",
             "-c", "1", "-f", "%o:%s\\n", "-q"], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True) as consumer:
        try:
            purgatory = broker.server.replica_manager.fetch_purgatory
            deadline = time.monotonic() + 10
            # Until its fetch is parked at the end of the log.
            while broker.call(lambda: purgatory.delayed) == 0:
                assert consumer.poll() is None, "kcat exited before waiting"
                assert time.monotonic() < deadline, "kcat never waited at the end of the log"
                time.sleep(0.01)
            broker.produce(topic, b"new")
            out, err = consumer.communicate(timeout=20)
        finally:
            if consumer.poll() is None:
                consumer.kill()
    assert consumer.returncode == 0, err
    assert out == "1:new\n"


def test_query_offsets_by_time(kcat: str, kafka_broker_session: BrokerHandle,
                               request: pytest.FixtureRequest) -> None:
    broker = kafka_broker_session
    topic = topic_for(request)
    broker.create_topic(topic)
    for i in range(5):
        broker.produce(topic, b"v%d" % i, timestamp=T0 + 100 * i)
    answers = {}
    for ts in (T0 - 1, T0 + 150, T0 + 400, T0 + 401):
        out = json.loads(run(kcat, broker, "-Q", "-t", f"{topic}:0:{ts}", "-J"))
        answers[ts] = out[topic]["0"]["offset"]
    # -1: no record at or after the time (librdkafka's OFFSET_END)
    assert answers == {T0 - 1: 0, T0 + 150: 2, T0 + 400: 4, T0 + 401: -1}
