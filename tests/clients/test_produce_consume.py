"""Real clients produce to and consume from kafkapy over real sockets.

confluent-kafka (librdkafka), kafka-python and aiokafka, each as producer and as consumer,
crossed (what one library writes another reads), with exact equality on offsets, keys,
values, headers and timestamps; the broker's log is checked too (``read_all``, straight from
the segment files), including the codec each batch was stored with. Consumers ``assign``
partitions: consumer groups are not implemented yet.

Most tests share the session broker (``kafka_broker_session``) with a topic of their own; the
message-size tests use a broker whose ``message.max.bytes`` they set, the long-poll tests a
fresh broker so that the only parked fetch is their consumer's.
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from collections.abc import Iterator

import aiokafka
import aiokafka.errors
import confluent_kafka
import kafka
import kafka.errors
import pytest
from confluent_kafka.admin import AdminClient, OffsetSpec

from kafkapy.server.handlers.metadata import INTERNAL_TOPICS
from kafkapy.testing import BrokerHandle
from tests.clients.client_support import (
    CLIENTS,
    CODEC_IDS,
    CODECS,
    CONSUMERS,
    PRODUCERS,
    Msg,
    confluent_consumer,
    expected,
    kafka_python_consumer,
)

T0 = 1_700_000_000_000


def sample(producer: str) -> list[Msg]:
    """Every shape of record a client may send, as far as ``producer`` can send it."""
    msgs = [
        Msg(b"key-1", b"value-1", [], T0),
        Msg(None, b"null key", [], T0 + 1),
        Msg(b"null value", None, [], T0 + 2),
        Msg(b"empty value", b"", [], T0 + 3),
        Msg(b"", b"empty key", [], T0 + 4),
        Msg(b"headers", b"h", [("a", b"1"), ("b", b""), ("a", b"2"), ("a", b"1")], T0 + 5),
        Msg(b"binary", bytes(range(256)) * 4, [("bin\u00e9", bytes(range(256)))], T0 + 6),
        # Timestamps need not rise: the earlier one is stored as given.
        Msg(b"earlier", b"timestamp", [], T0 - 86_400_000),
        Msg(b"k" * 1000, b"v" * 5000, [("h" * 100, b"x" * 1000)], T0 + 8),
    ]
    if producer != "kafka-python":
        # kafka-python refuses null header values ("must be (str, bytes) tuples")
        msgs.append(Msg(b"null header value", b"v", [("n", None), ("n", b"")], T0 + 9))
    if producer == "confluent":
        # kafka-python and aiokafka refuse a record with neither key nor value
        msgs.append(Msg(None, None, [], T0 + 10))
    return msgs


def topic_name(request: pytest.FixtureRequest) -> str:
    """A topic per test (and parameter set): legal characters only."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in request.node.name)[:200]


@pytest.fixture
def topic(request: pytest.FixtureRequest, kafka_broker_session: BrokerHandle) -> str:
    name = topic_name(request)
    kafka_broker_session.create_topic(name)
    return name


def check_log(broker: BrokerHandle, topic: str, msgs: list[Msg], offsets: list[int],
              codec: int | None = None) -> None:
    """The log holds exactly ``msgs`` at ``offsets`` (and, given ``codec``, in batches of
    that codec)."""
    records = broker.read_all(topic)
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in records] == \
        [(g.offset, g.key, g.value, g.headers, g.timestamp)
         for g in expected(msgs, offsets)]
    if codec is not None:
        assert {r.compression for r in records} == {codec}


# ================================================================== round trips, crossed


@pytest.mark.parametrize("consumer", CLIENTS)
@pytest.mark.parametrize("producer", CLIENTS)
def test_round_trip(kafka_broker_session: BrokerHandle, topic: str, producer: str,
                    consumer: str) -> None:
    bootstrap = kafka_broker_session.bootstrap_servers
    msgs = sample(producer)
    offsets = PRODUCERS[producer](bootstrap, topic, msgs)
    assert offsets == list(range(len(msgs)))
    check_log(kafka_broker_session, topic, msgs, offsets, codec=0)
    assert CONSUMERS[consumer](bootstrap, topic, len(msgs)) == expected(msgs, offsets)


# librdkafka enables its LZ4 feature only when the broker advertises FindCoordinator (a proxy
# for "Kafka >= 0.8.2" in rdkafka_feature.c): confluent-lz4 proves the group APIs' presence too.
COMPRESSION_CASES = [pytest.param(producer, codec, id=f"{producer}-{codec}")
                     for producer in CLIENTS for codec in CODECS]


@pytest.mark.parametrize(("producer", "codec"), COMPRESSION_CASES)
def test_compression(kafka_broker_session: BrokerHandle, topic: str, producer: str,
                     codec: str) -> None:
    """Each codec from each producer is stored as sent (the broker does not recompress)
    and read back by the next library (confluent -> kafka-python -> aiokafka -> confluent),
    starting in the middle of a compressed batch."""
    bootstrap = kafka_broker_session.bootstrap_servers
    msgs = sample(producer) + [Msg(b"k%d" % i, b"compressible " * 50, [], T0 + 100 + i)
                               for i in range(50)]
    offsets = PRODUCERS[producer](bootstrap, topic, msgs, compression=codec)
    assert offsets == list(range(len(msgs)))
    check_log(kafka_broker_session, topic, msgs, offsets, codec=CODEC_IDS[codec])
    consumer = CLIENTS[(CLIENTS.index(producer) + 1) % len(CLIENTS)]
    assert CONSUMERS[consumer](bootstrap, topic, len(msgs) - 3, start=3) == \
        expected(msgs, offsets)[3:]


@pytest.mark.parametrize("acks", ["0", "1", "all"])
@pytest.mark.parametrize("producer", CLIENTS)
def test_acks(kafka_broker_session: BrokerHandle, topic: str, producer: str,
              acks: str) -> None:
    bootstrap = kafka_broker_session.bootstrap_servers
    msgs = [Msg(b"k%d" % i, b"v%d" % i, [("i", b"%d" % i)], T0 + i) for i in range(20)]
    results = PRODUCERS[producer](bootstrap, topic, msgs, acks=acks)
    assert not [r for r in results if isinstance(r, Exception)]
    if acks != "0":     # acks=0 has no response, so no offsets to report
        assert results == list(range(20))
    # acks=0 is acknowledged by nobody: wait until the broker has appended everything.
    records = kafka_broker_session.wait_for_records(topic, 20)
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in records] == \
        [(g.offset, g.key, g.value, g.headers, g.timestamp)
         for g in expected(msgs, range(20))]
    assert kafka_broker_session.end_offsets(topic) == {0: 20}


def test_partitions(kafka_broker_session: BrokerHandle, request: pytest.FixtureRequest
                    ) -> None:
    """Three partitions, each produced explicitly and consumed on its own; offsets count per
    partition."""
    broker = kafka_broker_session
    topic = topic_name(request)
    broker.create_topic(topic, partitions=3)
    sent = {}
    for p in range(3):
        msgs = [Msg(b"p%d-%d" % (p, i), b"v", [], T0 + i) for i in range(p + 2)]
        assert PRODUCERS[CLIENTS[p]](broker.bootstrap_servers, topic, msgs, partition=p) == \
            list(range(p + 2))
        sent[p] = msgs
    assert broker.end_offsets(topic) == {0: 2, 1: 3, 2: 4}
    for p in range(3):
        got = CONSUMERS[CLIENTS[(p + 1) % 3]](broker.bootstrap_servers, topic, p + 2,
                                              partition=p)
        assert got == expected(sent[p], range(p + 2), partition=p)
        assert [(r.partition, r.offset, r.key) for r in broker.read_all(topic, p)] == \
            [(p, i, m.key) for i, m in enumerate(sent[p])]


def test_auto_created_topic(kafka_broker_session: BrokerHandle,
                            request: pytest.FixtureRequest) -> None:
    """A producer's Metadata request creates a missing topic (auto.create.topics.enable)."""
    topic = topic_name(request)
    assert topic not in kafka_broker_session.topics()
    assert PRODUCERS["confluent"](kafka_broker_session.bootstrap_servers, topic,
                                  [Msg(b"k", b"v", [], T0)]) == [0]
    assert kafka_broker_session.topics()[topic] == 1
    assert [(r.key, r.value) for r in kafka_broker_session.read_all(topic)] == [(b"k", b"v")]


# ========================================================================== message size

MAX_MESSAGE_BYTES = 1_100_000     # room for a 1 MiB record and its batch
MiB = 1024 * 1024
PRODUCER_LIMITS = {
    "confluent": {"message.max.bytes": 3_000_000},
    "kafka-python": {"max_request_size": 3_000_000},
    "aiokafka": {"max_request_size": 3_000_000},
}
CONSUMER_LIMITS = {
    "confluent": {"fetch.message.max.bytes": 2_000_000, "fetch.max.bytes": 3_000_000,
                  "receive.message.max.bytes": 4_000_000},
    "kafka-python": {"max_partition_fetch_bytes": 2_000_000, "fetch_max_bytes": 3_000_000},
    "aiokafka": {"max_partition_fetch_bytes": 2_000_000, "fetch_max_bytes": 3_000_000},
}


def is_message_too_large(producer: str, error: object) -> bool:
    if producer == "confluent":
        assert isinstance(error, confluent_kafka.KafkaException)
        return bool(error.args[0].code() == confluent_kafka.KafkaError.MSG_SIZE_TOO_LARGE)
    if producer == "kafka-python":
        return isinstance(error, kafka.errors.MessageSizeTooLargeError)
    return isinstance(error, aiokafka.errors.MessageSizeTooLargeError)


@pytest.fixture(scope="module")
def size_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    with BrokerHandle(tmp_path_factory.mktemp("size"),
                      message_max_bytes=MAX_MESSAGE_BYTES) as broker:
        yield broker


@pytest.mark.parametrize("producer", CLIENTS)
def test_large_messages(size_broker: BrokerHandle, request: pytest.FixtureRequest,
                        producer: str) -> None:
    """1 MiB records go through; one above message.max.bytes is refused with
    MESSAGE_TOO_LARGE, takes no offset, and the same producer carries on."""
    topic = topic_name(request)
    size_broker.create_topic(topic)
    big = [bytes([i]) * MiB for i in range(3)]
    msgs = [Msg(b"small", b"s", [], T0), Msg(b"big-0", big[0], [], T0 + 1),
            Msg(b"too big", b"x" * (MAX_MESSAGE_BYTES + 1), [], T0 + 2),
            Msg(b"big-1", big[1], [("h", b"after")], T0 + 3),
            Msg(b"small-2", b"s2", [], T0 + 4), Msg(b"big-2", big[2], [], T0 + 5)]
    results = PRODUCERS[producer](size_broker.bootstrap_servers, topic, msgs,
                                  config=PRODUCER_LIMITS[producer], one_by_one=True)
    assert results[:2] == [0, 1]
    assert is_message_too_large(producer, results[2]), results[2]
    assert results[3:] == [2, 3, 4]
    stored = [m for i, m in enumerate(msgs) if i != 2]
    check_log(size_broker, topic, stored, [0, 1, 2, 3, 4], codec=0)
    consumer = CLIENTS[(CLIENTS.index(producer) + 1) % len(CLIENTS)]
    assert CONSUMERS[consumer](size_broker.bootstrap_servers, topic, 5,
                               config=CONSUMER_LIMITS[consumer]) == \
        expected(stored, [0, 1, 2, 3, 4])


def test_topic_max_message_bytes(kafka_broker_session: BrokerHandle,
                                 request: pytest.FixtureRequest) -> None:
    """The topic's max.message.bytes overrides the broker's message.max.bytes."""
    topic = topic_name(request)
    kafka_broker_session.create_topic(topic, config={"max.message.bytes": "2000"})
    msgs = [Msg(b"a", b"x" * 1000, [], T0), Msg(b"b", b"x" * 3000, [], T0),
            Msg(b"c", b"x" * 1500, [], T0)]
    results = PRODUCERS["confluent"](kafka_broker_session.bootstrap_servers, topic, msgs,
                                     one_by_one=True)
    assert results[0] == 0 and results[2] == 1
    assert is_message_too_large("confluent", results[1])
    assert [r.key for r in kafka_broker_session.read_all(topic)] == [b"a", b"c"]


# =========================================================================== ListOffsets

# Offset 5 carries the largest timestamp, out of order: lookups by time find the first
# record at or after the time, not a position in a sorted list.
TIMES = [T0 + 10 * i for i in range(10)]
TIMES[5] = T0 + 1000


@pytest.fixture
def timed_topic(kafka_broker_session: BrokerHandle, topic: str) -> str:
    msgs = [Msg(b"t%d" % i, b"v", [], ts) for i, ts in enumerate(TIMES)]
    assert PRODUCERS["confluent"](kafka_broker_session.bootstrap_servers, topic, msgs) == \
        list(range(10))
    return topic


# target time -> (offset, its timestamp), or None: no record at or after it
LOOKUPS: dict[int, tuple[int, int] | None] = {
    0: (0, T0),                      # before everything: the first record
    T0: (0, T0),
    T0 + 15: (2, T0 + 20),
    T0 + 45: (5, T0 + 1000),         # offset 4 is older, 5 is the first at or after it
    T0 + 995: (5, T0 + 1000),
    T0 + 1000: (5, T0 + 1000),
    T0 + 1001: None,                 # after everything
}


def test_list_offsets_confluent(kafka_broker_session: BrokerHandle, timed_topic: str
                                ) -> None:
    consumer = confluent_consumer(kafka_broker_session.bootstrap_servers)
    try:
        assert consumer.get_watermark_offsets(
            confluent_kafka.TopicPartition(timed_topic, 0), timeout=5, cached=False) == (0, 10)
        for target, want in LOOKUPS.items():
            [found] = consumer.offsets_for_times(
                [confluent_kafka.TopicPartition(timed_topic, 0, target)], timeout=5)
            assert found.error is None
            # librdkafka reports "no such record" as the end offset (-1)
            assert found.offset == (-1 if want is None else want[0]), target
    finally:
        consumer.close()
    admin = AdminClient({"bootstrap.servers": kafka_broker_session.bootstrap_servers})
    tp = confluent_kafka.TopicPartition(timed_topic, 0)
    specs = {"earliest": OffsetSpec.earliest(), "latest": OffsetSpec.latest(),
             "max": OffsetSpec.max_timestamp(), "t+15": OffsetSpec.for_timestamp(T0 + 15)}
    answers = {}
    for name, spec in specs.items():
        result = admin.list_offsets({tp: spec}, request_timeout=5)[tp].result(timeout=10)
        answers[name] = (result.offset, result.timestamp)
    assert answers == {"earliest": (0, -1), "latest": (10, -1), "max": (5, T0 + 1000),
                       "t+15": (2, T0 + 20)}


def test_list_offsets_kafka_python(kafka_broker_session: BrokerHandle, timed_topic: str
                                   ) -> None:
    consumer = kafka_python_consumer(kafka_broker_session.bootstrap_servers)
    try:
        tp = kafka.TopicPartition(timed_topic, 0)
        assert consumer.beginning_offsets([tp]) == {tp: 0}
        assert consumer.end_offsets([tp]) == {tp: 10}
        for target, want in LOOKUPS.items():
            found = consumer.offsets_for_times({tp: target})[tp]
            if want is None:
                assert found is None, target
            else:
                assert (found.offset, found.timestamp) == want, target
                assert found.leader_epoch == 0
    finally:
        consumer.close()


def test_list_offsets_aiokafka(kafka_broker_session: BrokerHandle, timed_topic: str) -> None:
    async def main() -> None:
        consumer = aiokafka.AIOKafkaConsumer(
            bootstrap_servers=kafka_broker_session.bootstrap_servers, group_id=None)
        await consumer.start()
        try:
            tp = aiokafka.TopicPartition(timed_topic, 0)
            assert await consumer.beginning_offsets([tp]) == {tp: 0}
            assert await consumer.end_offsets([tp]) == {tp: 10}
            for target, want in LOOKUPS.items():
                found = (await consumer.offsets_for_times({tp: target}))[tp]
                if want is None:
                    assert found is None, target
                else:
                    assert (found.offset, found.timestamp) == want, target
        finally:
            await consumer.stop()

    asyncio.run(main())


def test_list_offsets_unknown_partition(kafka_broker_session: BrokerHandle,
                                        timed_topic: str) -> None:
    consumer = confluent_consumer(kafka_broker_session.bootstrap_servers)
    try:
        with pytest.raises(confluent_kafka.KafkaException) as info:
            consumer.get_watermark_offsets(confluent_kafka.TopicPartition(timed_topic, 7),
                                           timeout=5, cached=False)
        assert info.value.args[0].code() in (
            confluent_kafka.KafkaError.UNKNOWN_TOPIC_OR_PART,
            confluent_kafka.KafkaError._UNKNOWN_PARTITION)
    finally:
        consumer.close()


# ============================================================================== Metadata


def test_metadata_confluent(kafka_broker_session: BrokerHandle,
                            request: pytest.FixtureRequest) -> None:
    broker = kafka_broker_session
    topic = topic_name(request)
    broker.create_topic(topic, partitions=3)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    md = admin.list_topics(timeout=5)
    node = broker.server.node_id
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    assert md.cluster_id == broker.server.cluster_id
    assert md.controller_id == node
    assert {b.id: (b.host, b.port) for b in md.brokers.values()} == {node: (host, int(port))}
    assert {name: len(t.partitions) for name, t in md.topics.items()} == broker.topics()
    t = md.topics[topic]
    assert t.error is None
    assert {p.id: (p.leader, p.replicas, p.isrs, p.error)
            for p in t.partitions.values()} == {p: (node, [node], [node], None)
                                                for p in range(3)}


def test_metadata_unknown_topic_not_created(kafka_broker_session: BrokerHandle,
                                            request: pytest.FixtureRequest) -> None:
    """A consumer's Metadata request does not create topics (allow.auto.create.topics is
    false for librdkafka consumers): the topic is reported unknown and stays absent."""
    topic = topic_name(request)
    consumer = confluent_consumer(kafka_broker_session.bootstrap_servers)
    try:
        md = consumer.list_topics(topic, timeout=5)
        assert md.topics[topic].error.code() == \
            confluent_kafka.KafkaError.UNKNOWN_TOPIC_OR_PART
    finally:
        consumer.close()
    assert topic not in kafka_broker_session.topics()


def test_metadata_kafka_python_and_aiokafka(kafka_broker_session: BrokerHandle,
                                            request: pytest.FixtureRequest) -> None:
    broker = kafka_broker_session
    topic = topic_name(request)
    broker.create_topic(topic, partitions=4)
    consumer = kafka_python_consumer(broker.bootstrap_servers)
    try:
        # kafka-python leaves internal topics out (exclude_internal_topics=True).
        assert consumer.topics() == set(broker.topics()) - INTERNAL_TOPICS
        assert consumer.partitions_for_topic(topic) == {0, 1, 2, 3}
    finally:
        consumer.close()

    async def main() -> tuple[set[str], set[int]]:
        # aiokafka's consumer caches only the topics it reads; its producer looks one up.
        c = aiokafka.AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers,
                                      group_id=None)
        p = aiokafka.AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers)
        await c.start()
        await p.start()
        try:
            return await c.topics(), await p.partitions_for(topic)
        finally:
            await p.stop()
            await c.stop()

    assert asyncio.run(main()) == (set(broker.topics()) - INTERNAL_TOPICS, {0, 1, 2, 3})


# ============================================================================= long poll

TRIALS = 5
LONG_POLL_MAX_WAIT_MS = 5000
LATENCY_LIMIT = 0.050


def wait_until_parked(broker: BrokerHandle, timeout: float = 5.0) -> None:
    """Until a fetch is parked in the broker's purgatory: the consumer is long-polling, so
    without the append waking it the message would wait ``LONG_POLL_MAX_WAIT_MS``."""
    purgatory = broker.server.replica_manager.fetch_purgatory
    deadline = time.monotonic() + timeout
    while broker.call(lambda: purgatory.delayed) < 1:
        assert time.monotonic() < deadline, "the consumer's fetch never parked"
        time.sleep(0.002)


def long_poll_producer(bootstrap: str, topic: str) -> confluent_kafka.Producer:
    """A producer connected ahead (its metadata fetched), so that the latency measured is
    the broker's, not a handshake."""
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all"})
    producer.list_topics(topic, timeout=5)
    return producer


class ProduceOnceParked(threading.Thread):
    """From another thread, once the consumer's fetch is parked, produce one message;
    ``acked`` is when its ack arrived. (The consumer polls meanwhile: kafka-python sends
    fetches only from inside ``poll``.)"""

    def __init__(self, broker: BrokerHandle, producer: confluent_kafka.Producer, topic: str,
                 value: bytes) -> None:
        super().__init__()
        self.broker, self.producer, self.topic, self.value = broker, producer, topic, value
        self.acked: float | None = None
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            wait_until_parked(self.broker)
            self.producer.produce(self.topic, self.value, partition=0,
                                  on_delivery=self._on_delivery)
            assert self.producer.flush(5) == 0
        except BaseException as e:     # re-raised by the test thread in join()
            self.error = e

    def _on_delivery(self, err: object, msg: object) -> None:
        assert err is None, err
        self.acked = time.monotonic()

    def join(self, timeout: float | None = None) -> None:
        super().join(timeout)
        if self.error is not None:
            raise self.error
        assert self.acked is not None, "the produce was never acknowledged"


def check_latencies(latencies: list[float]) -> None:
    print("long-poll latencies (ms):", [round(x * 1000, 2) for x in latencies])
    assert len(latencies) == TRIALS
    median = statistics.median(latencies)
    assert median < LATENCY_LIMIT, \
        f"long poll: median {median * 1000:.1f} ms from ack to receipt " \
        f"(trials: {[round(x * 1000, 1) for x in latencies]} ms)"


def test_long_poll_confluent(kafka_broker: BrokerHandle) -> None:
    topic = "long-poll"
    kafka_broker.create_topic(topic)
    bootstrap = kafka_broker.bootstrap_servers
    producer = long_poll_producer(bootstrap, topic)
    consumer = confluent_consumer(bootstrap, {"fetch.wait.max.ms": LONG_POLL_MAX_WAIT_MS})
    latencies = []
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        for trial in range(TRIALS):
            thread = ProduceOnceParked(kafka_broker, producer, topic, b"m%d" % trial)
            m = consumer.poll(LONG_POLL_MAX_WAIT_MS / 1000)
            received = time.monotonic()
            thread.join()
            assert m is not None and m.error() is None
            assert (m.offset(), m.value()) == (trial, b"m%d" % trial)
            latencies.append(received - thread.acked)  # type: ignore[operator]
    finally:
        consumer.close()
    check_latencies(latencies)


def test_long_poll_kafka_python(kafka_broker: BrokerHandle) -> None:
    topic = "long-poll"
    kafka_broker.create_topic(topic)
    bootstrap = kafka_broker.bootstrap_servers
    producer = long_poll_producer(bootstrap, topic)
    consumer = kafka_python_consumer(bootstrap, {"fetch_max_wait_ms": LONG_POLL_MAX_WAIT_MS})
    latencies = []
    try:
        tp = kafka.TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        for trial in range(TRIALS):
            thread = ProduceOnceParked(kafka_broker, producer, topic, b"m%d" % trial)
            got = consumer.poll(timeout_ms=LONG_POLL_MAX_WAIT_MS, max_records=1)
            received = time.monotonic()
            thread.join()
            [records] = got.values()
            assert [(r.offset, r.value) for r in records] == [(trial, b"m%d" % trial)]
            latencies.append(received - thread.acked)  # type: ignore[operator]
    finally:
        consumer.close()
    check_latencies(latencies)


def test_long_poll_aiokafka(kafka_broker: BrokerHandle) -> None:
    topic = "long-poll"
    kafka_broker.create_topic(topic)
    bootstrap = kafka_broker.bootstrap_servers

    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=0,
                                             acks="all")
        consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                                             fetch_max_wait_ms=LONG_POLL_MAX_WAIT_MS)
        await producer.start()
        await consumer.start()
        latencies = []
        try:
            tp = aiokafka.TopicPartition(topic, 0)
            consumer.assign([tp])
            consumer.seek(tp, 0)
            for trial in range(TRIALS):
                receive = asyncio.ensure_future(consumer.getone(tp))
                # The check blocks on the broker's thread: keep this loop free meanwhile.
                await loop.run_in_executor(None, wait_until_parked, kafka_broker)
                await producer.send_and_wait(topic, b"m%d" % trial, partition=0)
                acked = time.monotonic()
                record = await asyncio.wait_for(receive, LONG_POLL_MAX_WAIT_MS / 1000)
                received = time.monotonic()
                assert (record.offset, record.value) == (trial, b"m%d" % trial)
                # The receipt may be noticed after the ack only because both share one loop.
                latencies.append(max(0.0, received - acked))
        finally:
            await consumer.stop()
            await producer.stop()
        return latencies

    check_latencies(asyncio.run(main()))



def test_kafka_python_default_idempotence(kafka_broker_session: BrokerHandle, topic: str
                                          ) -> None:
    """kafka-python's producer with its defaults (idempotent, acks=all)."""
    producer = kafka.KafkaProducer(bootstrap_servers=kafka_broker_session.bootstrap_servers)
    try:
        future = producer.send(topic, b"v", key=b"k", partition=0)
        producer.flush(5)
        assert future.exception is None, future.exception
        assert future.get(5).offset == 0
    finally:
        producer.close(timeout=5)
    assert [r.key for r in kafka_broker_session.read_all(topic)] == [b"k"]
