"""kafkapy's pytest plugin: a real Kafka broker per test, in-process, with inspection helpers.

Installed with kafkapy (entry point ``pytest11``), so a project that depends on kafkapy gets
these fixtures with no configuration; inside kafkapy's own tree ``tests/conftest.py`` enables
it with ``pytest_plugins = ["kafkapy.testing"]``.

Usage::

    from confluent_kafka import Producer

    def test_orders_are_published(kafka_broker):
        kafka_broker.create_topic("orders", partitions=3)
        app = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
        app.produce("orders", b"book", key=b"alice", partition=1)
        app.flush(5)
        [record] = kafka_broker.read_all("orders")
        assert (record.partition, record.offset, record.key, record.value) == \\
            (1, 0, b"alice", b"book")

    @pytest.mark.kafka_broker(num_partitions=4, auto_create_topics_enable="false")
    def test_with_settings(kafka_broker): ...

    def test_two_brokers(kafka_broker_factory):
        small = kafka_broker_factory(message_max_bytes=2000)
        keeps = kafka_broker_factory(config={"log.segment.bytes": "65536"})

Fixtures:

- ``kafka_broker`` (function scope): a fresh broker on a free port of 127.0.0.1 with its own
  data directory, stopped after the test. ``@pytest.mark.kafka_broker(**settings)`` passes
  Kafka broker settings (``_`` for ``.``; a mapping as the first argument for exact names).
- ``kafka_broker_session`` (session scope): one broker shared by every test that asks for it;
  use unique topic names there.
- ``kafka_broker_factory`` (function scope): ``factory(config=None, *, data_dir=None,
  port=0, **settings)`` starts another broker; all of them stop after the test. A
  ``data_dir`` of a stopped broker starts a broker on the same data.
- ``kafka_cluster`` (function scope): a ``kafkapy.Cluster``, a real ZooKeeper and broker
  processes (three unless ``@pytest.mark.kafka_cluster(brokers=N, **settings)``), with
  ``kill`` / ``stop`` / ``restart`` / ``pause`` / ``resume`` per broker id and the ZooKeeper
  view (``registered()``, ``broker_epoch(id)``); see :mod:`kafkapy.cluster`.

Each yields a ``BrokerHandle``: ``bootstrap_servers``, ``data_dir``, ``server``, ``call`` (run a
function on the broker's event loop), ``stop``/``restart`` (same data dir and port), and
helpers that go straight to the broker's partitions rather than over the wire:
``create_topic``, ``topics``, ``topic_config``, ``produce``, ``end_offsets``, ``read_all``,
``wait_for_records``. ``produce`` takes the broker's own append path (the ReplicaManager, as a
Produce request does), so waiting consumers are woken as by any producer. ``read_all`` decodes
the log's batches one record at a time in Python: an inspection helper, not a fast path.
Control records (transaction markers) are not returned.

``committed_offsets(group)`` reads a consumer group's committed offsets straight from the
group coordinator: ``{(topic, partition): offset}``.

Errors: the helpers raise ``kafkapy.errors.KafkaError`` subclasses with Kafka's codes
(``UnknownTopicOrPartitionError`` for a topic the broker does not have,
``MessageSizeTooLargeError`` from ``produce``, ...); ``TimeoutError`` from
``wait_for_records``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

import attrs
import pytest
import trio

from kafkapy.broker import Broker
from kafkapy.cluster import Cluster
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import UnknownTopicOrPartitionError
from kafkapy.protocol.records import (
    COMPRESSION_NONE,
    TIMESTAMP_LOG_APPEND_TIME,
    build_batch,
    scan_batches,
)
from kafkapy.server.kafka_server import KafkaServer

__all__ = ["BrokerFactory", "BrokerHandle", "LogRecord"]

# Bytes read from a log per call onto the broker's loop: small enough not to stall the broker
# noticeably, large enough that a 1 MiB record needs one call (the first batch of a read is
# always returned whole anyway).
_READ_CHUNK = 4 * 1024 * 1024
_PRODUCE_TIMEOUT_MS = 30_000


@attrs.frozen
class LogRecord:
    """One record as stored in a partition's log.

    ``timestamp`` is what a consumer sees (the batch's append time for LogAppendTime topics),
    ``timestamp_type`` 0 for CreateTime and 1 for LogAppendTime, ``headers`` in record order
    (duplicate keys kept), ``compression`` the codec of the batch that holds the record
    (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp_type: int = 0
    compression: int = COMPRESSION_NONE


class BrokerHandle:
    """An embedded broker with test helpers. ``BrokerHandle(data_dir, ...)`` takes the
    arguments of ``kafkapy.Broker`` (the data directory is required, so that ``restart`` can
    find the data again); ``start()`` or ``with`` starts it."""

    def __init__(self, data_dir: str | Path, config: Mapping[str, object] | None = None, *,
                 port: int = 0, **settings: object) -> None:
        self._data_dir = Path(data_dir)
        self._config = dict(config or {})
        self._port = port
        self._settings = settings
        self._broker: Broker | None = None
        self._token: trio.lowlevel.TrioToken | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> BrokerHandle:
        """Start the broker; returns once clients can connect. Raises what the broker failed
        to start with (a port in use, a bad setting, ...)."""
        if self._broker is not None:
            raise RuntimeError("the broker is already running")
        # Keyword settings map to Kafka's names exactly as Broker(**overrides) maps them.
        config = {**self._config,
                  **{k.replace("_", "."): v for k, v in self._settings.items()}}
        broker = Broker(config, port=self._port, data_dir=self._data_dir)
        broker.start()
        self._broker = broker
        # Pin the port: a restart comes back where clients already point.
        self._port = broker.port
        # The loop's token lets helpers await the broker's own coroutines from this thread.
        self._token = broker.call(trio.lowlevel.current_trio_token)
        return self

    def stop(self) -> None:
        """Controlled shutdown (logs flushed and checkpointed). Idempotent."""
        broker, self._broker, self._token = self._broker, None, None
        if broker is not None:
            broker.stop()

    def restart(self) -> BrokerHandle:
        """Stop, then start a new broker on the same data directory and port."""
        self.stop()
        return self.start()

    def __enter__(self) -> BrokerHandle:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # ----------------------------------------------------------------------- info

    @property
    def broker(self) -> Broker:
        """The running ``kafkapy.Broker``. Raises RuntimeError when stopped."""
        if self._broker is None:
            raise RuntimeError("the broker is not running")
        return self._broker

    @property
    def server(self) -> KafkaServer:
        return self.broker.server

    @property
    def bootstrap_servers(self) -> str:
        return self.broker.bootstrap_servers

    @property
    def port(self) -> int:
        return self.broker.port

    @property
    def data_dir(self) -> Path:
        return self._data_dir

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the broker's event loop; its result."""
        return self.broker.call(fn, *args)

    def _run(self, afn: Callable[[], Any]) -> Any:
        """Await ``afn()`` on the broker's event loop."""
        self.broker  # noqa: B018 - raises when stopped
        assert self._token is not None
        return trio.from_thread.run(afn, trio_token=self._token)

    # --------------------------------------------------------------------- topics

    def create_topic(self, name: str, partitions: int = 1,
                     config: Mapping[str, str] | None = None) -> uuid.UUID:
        """Create ``name`` with Kafka's validation (CreateTopics' errors: TopicAlreadyExists,
        InvalidTopic, InvalidConfig, ...); returns its topic id."""
        server = self.server
        record = self.call(lambda: server.admin.create_topic(
            name, partitions, -1, (), dict(config or {})))
        return record.topic_id  # type: ignore[no-any-return]

    def topics(self) -> dict[str, int]:
        """Every topic and its partition count."""
        server = self.server
        topics: dict[str, int] = self.call(lambda: {
            name: record.partitions for name, record in server.metadata_store.topics.items()})
        return topics

    def topic_config(self, name: str) -> dict[str, str]:
        """The topic's config overrides (what CreateTopics or AlterConfigs set)."""
        server = self.server

        def get() -> dict[str, str]:
            record = server.metadata_store.topics.get(name)
            if record is None:
                raise UnknownTopicOrPartitionError(f"no topic {name!r}")
            return dict(record.configs)

        return self.call(get)  # type: ignore[no-any-return]

    def _partition_count(self, topic: str) -> int:
        count = self.topics().get(topic)
        if count is None:
            raise UnknownTopicOrPartitionError(f"no topic {topic!r}")
        return count

    # -------------------------------------------------------------------- records

    def produce(self, topic: str, value: bytes | None, key: bytes | None = None,
                partition: int = 0, headers: Sequence[tuple[str, bytes | None]] | None = None,
                timestamp: int | None = None, *, compression: int = COMPRESSION_NONE) -> int:
        """Append one record with acks=all; returns its offset. A missing topic is created
        first when ``auto.create.topics.enable`` is on (as a producer's Metadata request
        would), else UnknownTopicOrPartitionError. ``timestamp`` defaults to now (ms)."""
        ts = int(time.time() * 1000) if timestamp is None else timestamp
        batch = build_batch([(key, value, list(headers or ()), ts)], compression=compression)
        tp = TopicPartition(topic, partition)
        server = self.server

        async def append() -> int:
            if topic not in server.metadata_store.topics and \
                    server.config.auto_create_topics_enable:
                server.admin.create_topic(topic)
            results, parked = await server.replica_manager.append_records(
                _PRODUCE_TIMEOUT_MS, -1, {tp: batch})
            if parked is not None:
                await parked.wait()     # fills in ``results``
            result = results[tp]
            if result.error is not None:
                raise result.error
            return result.base_offset

        return self._run(append)  # type: ignore[no-any-return]

    def end_offsets(self, topic: str) -> dict[int, int]:
        """Each partition's high watermark (the offset the next record gets)."""
        count = self._partition_count(topic)
        rm = self.server.replica_manager

        def get() -> dict[int, int]:
            return {p: rm.get_partition(TopicPartition(topic, p)).high_watermark
                    for p in range(count)}

        return self.call(get)  # type: ignore[no-any-return]

    def committed_offsets(self, group: str) -> dict[tuple[str, int], int]:
        """The committed offset of every partition ``group`` has one for (empty for a group
        the coordinator does not know)."""

        def get() -> dict[tuple[str, int], int]:
            offsets = self.server.group_coordinator.committed_offsets(group)
            return {(tp.topic, tp.partition): om.offset for tp, om in offsets.items()}
        committed: dict[tuple[str, int], int] = self.call(get)
        return committed

    def read_all(self, topic: str, partition: int | None = None) -> list[LogRecord]:
        """Every record up to the high watermark, read from the log files: one partition, or
        all of them in partition then offset order."""
        partitions = range(self._partition_count(topic)) if partition is None else [partition]
        out: list[LogRecord] = []
        for p in partitions:
            out.extend(self._read_partition(TopicPartition(topic, p)))
        return out

    def wait_for_records(self, topic: str, count: int, partition: int | None = None,
                         timeout: float = 10.0) -> list[LogRecord]:
        """``read_all`` once it has at least ``count`` records (for acks=0 producers and
        other writes nobody acknowledges). Raises TimeoutError with what it has seen."""
        deadline = time.monotonic() + timeout
        while True:
            records = self.read_all(topic, partition) if topic in self.topics() else []
            if len(records) >= count:
                return records
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: {len(records)} of {count} records after "
                                   f"{timeout} s")
            time.sleep(0.01)

    def _read_partition(self, tp: TopicPartition) -> list[LogRecord]:
        rm = self.server.replica_manager

        def chunk(offset: int) -> tuple[int, int, bytes]:
            # On the loop, so that no append, roll or retention runs meanwhile; the bytes are
            # copied out here and decoded in the calling thread.
            partition = rm.get_partition(tp)
            start = max(offset, partition.log_start_offset)
            end = partition.high_watermark
            if start >= end:
                return start, end, b""
            data = partition.log.read(start, _READ_CHUNK, end, True)
            return start, end, data.read()

        out: list[LogRecord] = []
        offset, end, buf = self.call(chunk, 0)
        stop = end      # records appended while reading are left for the next call
        while buf:
            scan = scan_batches(buf)
            if not scan.batches:
                raise AssertionError(f"{tp}: no whole batch at offset {offset} ({scan.error})")
            for batch in scan.batches:
                if batch.is_control:
                    continue
                log_append = batch.timestamp_type == TIMESTAMP_LOG_APPEND_TIME
                for r in batch.records():
                    if offset <= r.offset < stop:
                        out.append(LogRecord(
                            tp.topic, tp.partition, r.offset,
                            batch.max_timestamp if log_append else r.timestamp,
                            r.key, r.value, list(r.headers), batch.timestamp_type,
                            batch.compression))
            offset = scan.batches[-1].next_offset
            if offset >= stop:
                break
            offset, _, buf = self.call(chunk, offset)
        return out


class BrokerFactory(Protocol):
    """``kafka_broker_factory``: starts a broker per call, stops them all after the test."""

    def __call__(self, config: Mapping[str, object] | None = None, *,
                 data_dir: str | Path | None = None, port: int = 0,
                 **settings: object) -> BrokerHandle: ...


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "kafka_broker(config=None, **settings): Kafka broker settings for the "
                   "kafka_broker fixture (``_`` for ``.`` in keyword names)")
    config.addinivalue_line(
        "markers", "kafka_cluster(brokers=3, config=None, **settings): the size and the "
                   "brokers' settings of the kafka_cluster fixture")


@pytest.fixture
def kafka_broker_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerFactory]:
    """A factory of started brokers, each in its own data directory unless given one."""
    started: list[BrokerHandle] = []

    def factory(config: Mapping[str, object] | None = None, *,
                data_dir: str | Path | None = None, port: int = 0,
                **settings: object) -> BrokerHandle:
        directory = tmp_path_factory.mktemp("kafka") if data_dir is None else Path(data_dir)
        handle = BrokerHandle(directory, config, port=port, **settings)
        handle.start()
        started.append(handle)
        return handle

    yield factory
    for handle in reversed(started):
        handle.stop()


@pytest.fixture
def kafka_broker(request: pytest.FixtureRequest,
                 kafka_broker_factory: BrokerFactory) -> BrokerHandle:
    """A fresh broker for this test (settings from ``@pytest.mark.kafka_broker``)."""
    marker = request.node.get_closest_marker("kafka_broker")
    if marker is None:
        return kafka_broker_factory()
    config = marker.args[0] if marker.args else None
    return kafka_broker_factory(config, **marker.kwargs)


@pytest.fixture(scope="session")
def kafka_broker_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    """One broker for the whole session: give each test its own topics."""
    with BrokerHandle(tmp_path_factory.mktemp("kafka-session")) as handle:
        yield handle


@pytest.fixture
def kafka_cluster(request: pytest.FixtureRequest,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A real ZooKeeper and broker processes (``kafkapy.Cluster``), stopped after the test.
    ``@pytest.mark.kafka_cluster(brokers=3, config=None, **settings)`` sets the size and the
    brokers' Kafka settings (``_`` for ``.`` in keyword names). Needs ZooKeeper: Debian's
    ``zookeeper`` package or ``$ZOOKEEPER_HOME``."""
    marker = request.node.get_closest_marker("kafka_cluster")
    kwargs = dict(marker.kwargs) if marker is not None else {}
    brokers = int(kwargs.pop("brokers", 3))
    config = dict(kwargs.pop("config", None) or {})
    config.update({k.replace("_", "."): v for k, v in kwargs.items()})
    with Cluster(brokers, config, data_dir=tmp_path_factory.mktemp("cluster")) as cluster:
        yield cluster

