"""Transactions with real clients: visibility, exactly-once consume-transform-produce, fencing,
timeouts, broker restarts and crashes, and the admin APIs.

What is proven:

- Visibility (transactional producers of confluent-kafka, kafka-python and aiokafka; readers of
  all three libraries): on one partition, plain records, a committed transaction, an aborted
  one, an open one, then plain records again. While the last transaction is open a
  read_committed reader gets the plain and committed records only: not the aborted ones, not
  the open ones, and not the plain records written after the open transaction began (they lie
  beyond the last stable offset); its position stops at or before the open transaction's first
  offset and, where the library reports it, its end offset (ListOffsets latest,
  read_committed) is that first offset. A read_uncommitted reader gets everything. A raw
  read_committed Fetch reports the LSO and lists the aborted transaction (producer id, first
  offset). After the commit, read_committed readers get everything but the aborted records;
  the log holds COMMIT, ABORT, COMMIT markers, in control batches of the producer id.
- librdkafka's default consumer (read_committed) on a topic that never saw a transaction
  works as usual: every record, long-poll wake-ups, LSO = high watermark.
- Consume-transform-produce (confluent-kafka and kafka-python, a group consumer with
  read_committed): 15 input records transformed to an output topic in rounds of 5, the input
  offsets sent to each transaction: abort, commit, abort (the consumer rewinds after an
  abort), commit, commit. The group's committed offsets (read from the coordinator) do not
  move while a transaction is open nor on abort, and move to the transaction's offsets on
  commit; the consumer's own OffsetFetch agrees; the output has each input exactly once, in
  order, for read_committed readers, and the aborted rounds' records too for read_uncommitted
  readers; after a broker restart the group's offsets are the same (the transactional offset
  commits and their markers in ``__consumer_offsets`` are replayed).
- Fencing: a second producer with the same transactional.id fences the first; the first
  one's next commit fails with the fenced error (confluent: fatal KafkaError _FENCED /
  PRODUCER_FENCED / INVALID_PRODUCER_EPOCH; kafka-python: ProducerFencedError or
  InvalidProducerEpochError); its open transaction is aborted; the new producer commits.
- Timeout: a producer with ``transaction.timeout.ms`` 2000 opens a transaction and goes quiet;
  the broker (cleanup interval lowered) aborts it no earlier than the timeout: a read_committed
  reader, blocked at the LSO meanwhile, then gets the plain record written after it, never the
  transaction's; the old producer cannot commit it any more.
- Clean restart (``BrokerHandle.restart``) in the middle of a transaction over two partitions:
  the same producer commits it afterwards (the coordinator reloaded it) and all of it becomes
  visible; a second one is aborted after a restart and none of it is visible; a plain record
  after it is visible (the reader is not stuck).
- kill -9 (a broker in a child process, behind the proxy of tests/clients/proxy.py so that the
  test sees the EndTxn request reach the broker): a transaction open at the crash is aborted
  after recovery (by its timeout, or by a new producer with the same transactional.id, whose
  own transaction then commits); committed transactions before it stay visible; and killing
  the broker just after EndTxn(commit) reached it, at several delays, leaves each transaction
  either wholly visible on both its partitions or wholly invisible (committed if the client
  was told so); readers are never stuck.
- Admin: ListTransactions, DescribeTransactions and DescribeProducers through kafka-python's
  KafkaAdminClient (confluent-kafka 2.16's AdminClient has none of them): an open transaction
  is listed Ongoing with its producer id, described with its timeout, start time and
  partitions; each partition describes its producers (the transactional one with its last
  sequence and the transaction's first offset, an idempotent one with -1); after the commit
  the transaction is CompleteCommit without partitions and the producers show no open
  transaction; an unknown transactional id is TRANSACTIONAL_ID_NOT_FOUND.

Producers of the three libraries sit behind one small synchronous interface (``TxnProducer``),
readers behind ``read_partition``; kafka-python's commit and abort wait without a limit, so
they run in a thread with a deadline (``bounded``).
"""

from __future__ import annotations

import asyncio
import json
import os
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs
import confluent_kafka
import kafka
import kafka.errors
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition as AioTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import KafkaAdminClient

from kafkapy.protocol.api_keys import ApiKey
from kafkapy.testing import BrokerFactory, BrokerHandle
from tests.clients.proxy import Proxy
from tests.clients.test_durability import ChildBroker
from tests.clients.test_idempotence import FAST_RECONNECT, BatchInfo, fetch_batches

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 10.0
END_TXN = ApiKey.END_TXN
READ_COMMITTED, READ_UNCOMMITTED = "read_committed", "read_uncommitted"
CONTROL_ABORT, CONTROL_COMMIT = 0, 1

# Three __transaction_state partitions rather than 50: quicker to create, same code paths;
# timed-out transactions looked for every 200 ms rather than 10 s.
FAST_TXN = {"transaction.state.log.num.partitions": "3",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"}
FAST_GROUPS = {"group.initial.rebalance.delay.ms": "100", "offsets.topic.num.partitions": "3"}

T = TypeVar("T")


def bounded(fn: Callable[[], T], what: str, timeout: float = 2 * TIMEOUT) -> T:
    """``fn()`` in a thread; its result or its exception, or AssertionError if it has not
    returned within ``timeout`` (the thread is left behind, a daemon)."""
    result: list[Any] = []

    def run() -> None:
        try:
            result.append((True, fn()))
        except BaseException as e:      # handed to the caller
            result.append((False, e))

    thread = threading.Thread(target=run, daemon=True, name=what)
    thread.start()
    thread.join(timeout)
    if not result:
        raise AssertionError(f"{what} did not return within {timeout} s")
    ok, value = result[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


# ========================================================================== producers


class TxnProducer:
    """A transactional producer (one library) behind one synchronous interface. ``send``
    queues a record (key = value); ``flush`` returns once every queued record is acknowledged
    (written to the log) and raises if one failed."""

    library = ""

    def begin(self) -> None:
        raise NotImplementedError

    def send(self, topic: str, value: bytes, partition: int = 0) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        raise NotImplementedError

    def commit(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def send_offsets(self, topic: str, partition: int, offset: int, consumer: Any) -> None:
        """``offset`` of the group ``consumer`` belongs to, into the transaction."""
        raise NotImplementedError

    def send_all(self, topic: str, values: Sequence[bytes], partition: int = 0) -> None:
        for v in values:
            self.send(topic, v, partition)


def _unwrap(e: BaseException) -> BaseException:
    """librdkafka's fatal errors sometimes surface as a SystemError around the
    KafkaException (raised from inside a callback): the KafkaException."""
    if isinstance(e, SystemError) and isinstance(e.__cause__ or e.__context__,
                                                 confluent_kafka.KafkaException):
        return e.__cause__ or e.__context__  # type: ignore[return-value]
    return e


class ConfluentTxn(TxnProducer):
    library = "confluent"

    def __init__(self, bootstrap: str, transactional_id: str, *, timeout_ms: int = 60_000,
                 config: dict[str, Any] | None = None) -> None:
        self.reports: list[tuple[Any, confluent_kafka.Message]] = []
        self.producer = confluent_kafka.Producer({
            "bootstrap.servers": bootstrap, "transactional.id": transactional_id,
            "transaction.timeout.ms": timeout_ms, "linger.ms": 5, "log_level": 3,
            **FAST_RECONNECT, **(config or {})})
        self._call(self.producer.init_transactions, TIMEOUT)

    @staticmethod
    def _call(fn: Callable[..., T], *args: Any) -> T:
        try:
            return fn(*args)
        except SystemError as e:
            raise _unwrap(e) from e

    def _report(self, err: Any, msg: confluent_kafka.Message) -> None:
        # Nothing but keep them: see test_idempotence.flush_or_fail.
        self.reports.append((err, msg))

    def begin(self) -> None:
        self._call(self.producer.begin_transaction)

    def send(self, topic: str, value: bytes, partition: int = 0) -> None:
        self.producer.produce(topic, value, value, partition=partition,
                              on_delivery=self._report)

    def flush(self) -> None:
        left = self._call(self.producer.flush, TIMEOUT)
        reports, self.reports = self.reports, []
        failed = [(msg.value(), err) for err, msg in reports if err is not None]
        assert left == 0 and not failed, f"{left} not delivered, failed: {failed}"

    def commit(self, timeout: float = TIMEOUT) -> None:
        self._call(self.producer.commit_transaction, timeout)

    def abort(self) -> None:
        self._call(self.producer.abort_transaction, TIMEOUT)

    def send_offsets(self, topic: str, partition: int, offset: int, consumer: Any) -> None:
        self._call(self.producer.send_offsets_to_transaction,
                   [confluent_kafka.TopicPartition(topic, partition, offset)],
                   consumer.consumer_group_metadata(), TIMEOUT)

    def close(self) -> None:
        try:
            self.producer.flush(0)
        except (confluent_kafka.KafkaException, SystemError):
            pass            # a fenced or failed producer: nothing left to deliver
        del self.producer


class KafkaPythonTxn(TxnProducer):
    library = "kafka-python"

    def __init__(self, bootstrap: str, transactional_id: str, *, timeout_ms: int = 60_000,
                 config: dict[str, Any] | None = None) -> None:
        self.futures: list[Any] = []
        self.producer = kafka.KafkaProducer(
            bootstrap_servers=bootstrap, transactional_id=transactional_id,
            transaction_timeout_ms=timeout_ms, linger_ms=5, request_timeout_ms=int(TIMEOUT * 1000),
            max_block_ms=int(TIMEOUT * 1000), reconnect_backoff_ms=10, retry_backoff_ms=10,
            **(config or {}))
        try:
            bounded(self.producer.init_transactions, "kafka-python init_transactions")
        except BaseException:
            self.producer.close(timeout=TIMEOUT)
            raise

    def begin(self) -> None:
        self.producer.begin_transaction()

    def send(self, topic: str, value: bytes, partition: int = 0) -> None:
        self.futures.append(self.producer.send(topic, value, value, partition=partition))

    def flush(self) -> None:
        self.producer.flush(TIMEOUT)
        futures, self.futures = self.futures, []
        for f in futures:
            f.get(TIMEOUT)

    def commit(self) -> None:
        bounded(self.producer.commit_transaction, "kafka-python commit_transaction")
        self.futures.clear()

    def abort(self) -> None:
        bounded(self.producer.abort_transaction, "kafka-python abort_transaction")
        self.futures.clear()

    def send_offsets(self, topic: str, partition: int, offset: int, consumer: Any) -> None:
        offsets = {kafka.TopicPartition(topic, partition): kafka.OffsetAndMetadata(offset, "",
                                                                                  -1)}
        bounded(lambda: self.producer.send_offsets_to_transaction(
            offsets, consumer.group_metadata()), "kafka-python send_offsets_to_transaction")

    def close(self) -> None:
        self.producer.close(timeout=TIMEOUT)


class AioTxn(TxnProducer):
    """aiokafka (InitProducerId, AddPartitionsToTxn and EndTxn v0) on an event loop of its
    own thread."""

    library = "aiokafka"

    def __init__(self, bootstrap: str, transactional_id: str, *, timeout_ms: int = 60_000
                 ) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name="aiokafka-txn")
        self.thread.start()
        self.futures: list[asyncio.Future[Any]] = []

        async def make() -> AIOKafkaProducer:
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap,
                                        transactional_id=transactional_id,
                                        transaction_timeout_ms=timeout_ms, linger_ms=5,
                                        request_timeout_ms=int(TIMEOUT * 1000))
            try:
                # start() finds the coordinator and gets the producer id, retrying forever
                await asyncio.wait_for(producer.start(), TIMEOUT)
            except BaseException:
                await producer.stop()
                raise
            return producer

        try:
            self.producer = self._run(make())
        except TimeoutError as e:
            self._stop_loop()
            raise AssertionError(f"aiokafka's transactional producer did not start "
                                 f"(InitProducerId) within {TIMEOUT} s") from e
        except BaseException:
            self._stop_loop()
            raise

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(2 * TIMEOUT)

    def begin(self) -> None:
        self._run(self.producer.begin_transaction())

    def send(self, topic: str, value: bytes, partition: int = 0) -> None:
        self.futures.append(self._run(self.producer.send(topic, value, value,
                                                         partition=partition)))

    def flush(self) -> None:
        futures, self.futures = self.futures, []

        async def wait() -> None:
            for f in futures:
                await asyncio.wait_for(f, TIMEOUT)

        self._run(wait())

    def commit(self) -> None:
        self._run(self.producer.commit_transaction())

    def abort(self) -> None:
        self._run(self.producer.abort_transaction())

    def close(self) -> None:
        try:
            self._run(self.producer.stop())
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        async def cancel_the_rest() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            self._run(cancel_the_rest())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(TIMEOUT)
        self.loop.close()


def txn_producer(library: str, bootstrap: str, transactional_id: str, *,
                 timeout_ms: int = 60_000) -> TxnProducer:
    if library == "confluent":
        return ConfluentTxn(bootstrap, transactional_id, timeout_ms=timeout_ms)
    if library == "kafka-python":
        return KafkaPythonTxn(bootstrap, transactional_id, timeout_ms=timeout_ms)
    return AioTxn(bootstrap, transactional_id, timeout_ms=timeout_ms)


# ============================================================================ readers


@attrs.frozen
class Read:
    """What a reader got: the values in order, its position afterwards, and its end offset
    for its isolation level (ListOffsets latest; None where the library does not tell)."""

    values: list[bytes]
    position: int
    end: int | None


def read_partition(library: str, bootstrap: str, topic: str, isolation: str, want: int, *,
                   partition: int = 0, until: bytes | None = None, settle: float = 0.5,
                   timeout: float = TIMEOUT) -> Read:
    """Assign ``topic``-``partition`` from offset 0 and poll until ``want`` records came (or
    the value ``until``), then ``settle`` seconds more for any that should not come; returns
    what came by ``timeout`` in any case (the caller compares)."""
    def enough(values: list[bytes]) -> bool:
        return until in values if until is not None else len(values) >= want

    if library == "confluent":
        return _read_confluent(bootstrap, topic, partition, isolation, enough, settle, timeout)
    if library == "kafka-python":
        return _read_kafka_python(bootstrap, topic, partition, isolation, enough, settle,
                                  timeout)
    return asyncio.run(_read_aiokafka(bootstrap, topic, partition, isolation, enough, settle,
                                      timeout))


class _Clock:
    """Polling deadline: ``timeout`` overall, ``settle`` more once the reader has enough."""

    def __init__(self, settle: float, timeout: float) -> None:
        self.deadline = time.monotonic() + timeout
        self.settle = settle
        self.settled_at: float | None = None

    def go_on(self, enough: bool) -> bool:
        now = time.monotonic()
        if enough and self.settled_at is None:
            self.settled_at = now + self.settle
        return now < (self.settled_at or self.deadline)


def _read_confluent(bootstrap: str, topic: str, partition: int, isolation: str,
                    enough: Callable[[list[bytes]], bool], settle: float, timeout: float
                    ) -> Read:
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": "txn-readers", "enable.auto.commit": False,
        "enable.auto.offset.store": False, "isolation.level": isolation,
        "fetch.wait.max.ms": 50, "log_level": 3})
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, partition, 0)])
        values: list[bytes] = []
        clock = _Clock(settle, timeout)
        while clock.go_on(enough(values)):
            msg = consumer.poll(0.05)
            if msg is None:
                continue
            if msg.error():
                raise confluent_kafka.KafkaException(msg.error())
            values.append(msg.value())
        [tp] = consumer.position([confluent_kafka.TopicPartition(topic, partition)])
        return Read(values, tp.offset, None)
    finally:
        consumer.close()


def _read_kafka_python(bootstrap: str, topic: str, partition: int, isolation: str,
                       enough: Callable[[list[bytes]], bool], settle: float, timeout: float
                       ) -> Read:
    consumer = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                                   enable_auto_commit=False, isolation_level=isolation,
                                   fetch_max_wait_ms=50)
    try:
        tp = kafka.TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        values: list[bytes] = []
        clock = _Clock(settle, timeout)
        while clock.go_on(enough(values)):
            for records in consumer.poll(timeout_ms=50).values():
                values.extend(r.value for r in records)
        return Read(values, consumer.position(tp), consumer.end_offsets([tp])[tp])
    finally:
        consumer.close()


async def _read_aiokafka(bootstrap: str, topic: str, partition: int, isolation: str,
                         enough: Callable[[list[bytes]], bool], settle: float, timeout: float
                         ) -> Read:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                                enable_auto_commit=False, isolation_level=isolation,
                                fetch_max_wait_ms=50)
    await consumer.start()
    try:
        tp = AioTopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        values: list[bytes] = []
        clock = _Clock(settle, timeout)
        while clock.go_on(enough(values)):
            for records in (await consumer.getmany(timeout_ms=50)).values():
                values.extend(r.value for r in records)
        end = (await consumer.end_offsets([tp]))[tp]
        return Read(values, await consumer.position(tp), end)
    finally:
        await consumer.stop()


READERS = ("confluent", "kafka-python", "aiokafka")


def control_types(batches: Sequence[BatchInfo]) -> list[tuple[int, int]]:
    """(producer id, marker type) of every control batch, in log order."""
    out = []
    for b in batches:
        if b.control:
            assert b.transactional, f"a control batch that is not transactional: {b}"
            [(_, key, _)] = b.records
            assert key is not None
            version, kind = struct.unpack(">hh", key[:4])
            assert version == 0, b
            out.append((b.producer_id, kind))
    return out


def values_of(batches: Sequence[BatchInfo]) -> list[bytes | None]:
    return [v for b in batches if not b.control for _, _, v in b.records]


def offsets_of(broker: BrokerHandle, topic: str, partition: int = 0) -> dict[bytes, int]:
    return {r.value: r.offset for r in broker.read_all(topic, partition) if r.value is not None}


def names(prefix: str, count: int) -> list[bytes]:
    return [b"%s-%d" % (prefix.encode(), i) for i in range(count)]


# ========================================================================== visibility


@pytest.mark.parametrize("library", ["confluent", "kafka-python", "aiokafka"])
def test_read_committed_sees_committed_records_only(kafka_broker_factory: BrokerFactory,
                                                    library: str) -> None:
    broker = kafka_broker_factory(FAST_TXN)
    topic = "visibility"
    broker.create_topic(topic)
    plain, committed, aborted, open_, late = (names(p, n) for p, n in (
        ("plain", 2), ("committed", 3), ("aborted", 3), ("open", 3), ("late", 2)))
    for v in plain:
        broker.produce(topic, v)
    producer = txn_producer(library, broker.bootstrap_servers, f"visibility-{library}")
    try:
        producer.begin()
        producer.send_all(topic, committed)
        producer.commit()
        producer.begin()
        producer.send_all(topic, aborted)
        producer.flush()
        producer.abort()
        producer.begin()
        producer.send_all(topic, open_)
        producer.flush()
        for v in late:             # plain records, but after the open transaction's first
            broker.produce(topic, v)

        offsets = offsets_of(broker, topic)
        lso = offsets[b"open-0"]
        hw = broker.end_offsets(topic)[0]
        everything = plain + committed + aborted + open_ + late
        assert list(offsets) == everything      # all of it is in the log, in this order
        for reader in READERS:
            got = read_partition(reader, broker.bootstrap_servers, topic, READ_COMMITTED,
                                 len(plain + committed))
            assert got.values == plain + committed, f"{reader} read_committed"
            assert offsets[b"committed-2"] + 1 <= got.position <= lso, \
                f"{reader} read_committed position {got.position}, LSO {lso}"
            assert got.end in (None, lso), f"{reader} read_committed end offset {got.end}"
            got = read_partition(reader, broker.bootstrap_servers, topic, READ_UNCOMMITTED,
                                 len(everything))
            assert got.values == everything, f"{reader} read_uncommitted"
            assert got.end in (None, hw)

        fetched = fetch_batches(broker.bootstrap_servers, topic, isolation_level=1)
        assert fetched.last_stable_offset == lso
        assert values_of(fetched.batches) == plain + committed + aborted
        pids = {b.producer_id for b in fetched.batches if b.transactional}
        assert len(pids) == 1, pids
        [pid] = pids
        assert fetched.aborted == [(pid, offsets[b"aborted-0"])]

        producer.commit()
    finally:
        producer.close()

    hw = broker.end_offsets(topic)[0]
    visible = plain + committed + open_ + late
    for reader in READERS:
        got = read_partition(reader, broker.bootstrap_servers, topic, READ_COMMITTED,
                             len(visible))
        assert got.values == visible, f"{reader} read_committed after the commit"
        # Past the last record; past the COMMIT marker too, for libraries that count it.
        assert hw - 1 <= got.position <= hw, f"{reader} position {got.position}, HW {hw}"
        assert got.end in (None, hw)
    fetched = fetch_batches(broker.bootstrap_servers, topic, isolation_level=1)
    assert fetched.last_stable_offset == fetched.high_watermark == hw
    assert fetched.aborted == [(pid, offsets[b"aborted-0"])]
    everything_batches = fetch_batches(broker.bootstrap_servers, topic).batches
    assert control_types(everything_batches) == [
        (pid, CONTROL_COMMIT), (pid, CONTROL_ABORT), (pid, CONTROL_COMMIT)]
    for b in everything_batches:
        assert b.transactional == (b.producer_id == pid), b
    # The COMMIT of the open transaction came after the late plain records.
    assert everything_batches[-1].control and everything_batches[-1].base_offset == hw - 1


def test_default_librdkafka_consumer_without_transactions(kafka_broker: BrokerHandle) -> None:
    """librdkafka reads read_committed by default: with no transaction anywhere the LSO is
    the high watermark, and waiting consumers are woken by new records."""
    topic = "no-transactions"
    kafka_broker.create_topic(topic)
    values = names("plain", 5)
    for v in values:
        kafka_broker.produce(topic, v)
    consumer = confluent_kafka.Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers,
                                         "group.id": "default-reader",
                                         "enable.auto.commit": False, "fetch.wait.max.ms": 500})
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        got: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < 5 and time.monotonic() < deadline:
            msg = consumer.poll(0.1)
            if msg is not None:
                assert not msg.error(), msg.error()
                got.append(msg.value())
        assert got == values
        assert consumer.poll(0.5) is None
        # A record written while the consumer long-polls reaches it.
        threading.Timer(0.3, lambda: kafka_broker.produce(topic, b"later")).start()
        msg = consumer.poll(5)
        assert msg is not None and not msg.error() and msg.value() == b"later"
        [tp] = consumer.position([confluent_kafka.TopicPartition(topic, 0)])
        assert tp.offset == 6
    finally:
        consumer.close()
    fetched = fetch_batches(kafka_broker.bootstrap_servers, topic, isolation_level=1)
    assert fetched.last_stable_offset == fetched.high_watermark == 6
    assert fetched.aborted == []
    assert read_partition("kafka-python", kafka_broker.bootstrap_servers, topic,
                          READ_COMMITTED, 6, settle=0).end == 6


# ============================================================ consume-transform-produce


class GroupReader:
    """A group consumer (subscribe, read_committed) of one library, for the
    consume-transform-produce loop."""

    def __init__(self, library: str, bootstrap: str, group: str, topic: str) -> None:
        self.library = library
        self.topic = topic
        self.buffered: list[tuple[int, bytes]] = []
        if library == "confluent":
            self.consumer: Any = confluent_kafka.Consumer({
                "bootstrap.servers": bootstrap, "group.id": group,
                "enable.auto.commit": False, "auto.offset.reset": "earliest",
                "isolation.level": READ_COMMITTED, "fetch.wait.max.ms": 50, "log_level": 3})
            self.consumer.subscribe([topic])
        else:
            self.consumer = kafka.KafkaConsumer(
                topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                auto_offset_reset="earliest", isolation_level=READ_COMMITTED,
                fetch_max_wait_ms=50)

    def take(self, n: int, timeout: float = 20.0) -> list[tuple[int, bytes]]:
        """The next ``n`` records (offset, value) of partition 0."""
        deadline = time.monotonic() + timeout
        while len(self.buffered) < n and time.monotonic() < deadline:
            if self.library == "confluent":
                msg = self.consumer.poll(0.1)
                if msg is not None:
                    if msg.error():
                        raise confluent_kafka.KafkaException(msg.error())
                    self.buffered.append((msg.offset(), msg.value()))
            else:
                for records in self.consumer.poll(timeout_ms=100,
                                                  max_records=n - len(self.buffered)).values():
                    self.buffered.extend((r.offset, r.value) for r in records)
        assert len(self.buffered) >= n, f"{self.library}: {len(self.buffered)} of {n} records"
        taken, self.buffered = self.buffered[:n], self.buffered[n:]
        return taken

    def rewind(self, offset: int) -> None:
        self.buffered.clear()
        if self.library == "confluent":
            self.consumer.seek(confluent_kafka.TopicPartition(self.topic, 0, offset))
        else:
            self.consumer.seek(kafka.TopicPartition(self.topic, 0), offset)

    def committed(self) -> int | None:
        """The group's committed offset, as the consumer fetches it (OffsetFetch)."""
        if self.library == "confluent":
            [tp] = self.consumer.committed([confluent_kafka.TopicPartition(self.topic, 0)],
                                           timeout=TIMEOUT)
            return None if tp.offset < 0 else int(tp.offset)
        offset = self.consumer.committed(kafka.TopicPartition(self.topic, 0))
        return None if offset is None else int(offset)

    def close(self) -> None:
        self.consumer.close()


@pytest.mark.parametrize("library", ["confluent", "kafka-python"])
def test_consume_transform_produce_exactly_once(kafka_broker_factory: BrokerFactory,
                                                library: str) -> None:
    broker = kafka_broker_factory({**FAST_TXN, **FAST_GROUPS})
    source, sink, group = "ctp-in", "ctp-out", f"ctp-{library}"
    broker.create_topic(source)
    broker.create_topic(sink)
    inputs = names("in", 15)
    for v in inputs:
        broker.produce(source, v)
    producer = txn_producer(library, broker.bootstrap_servers, f"ctp-{library}")
    reader = GroupReader(library, broker.bootstrap_servers, group, source)
    try:
        committed: dict[tuple[str, int], int] = {}

        def one_round(n: int, commit: bool) -> None:
            records = reader.take(n)
            producer.begin()
            producer.send_all(sink, [b"out-" + v for _, v in records])
            next_offset = records[-1][0] + 1
            producer.send_offsets(source, 0, next_offset, reader.consumer)
            producer.flush()
            assert broker.committed_offsets(group) == committed, \
                "offsets of an open transaction are already committed"
            if commit:
                producer.commit()
                committed[(source, 0)] = next_offset
            else:
                producer.abort()
                reader.rewind(records[0][0])
            assert broker.committed_offsets(group) == committed, \
                f"after {'commit' if commit else 'abort'}"

        one_round(5, commit=False)
        one_round(5, commit=True)
        one_round(5, commit=False)
        one_round(5, commit=True)
        one_round(5, commit=True)
        assert committed == {(source, 0): 15}
        assert reader.committed() == 15
    finally:
        reader.close()
        producer.close()

    outputs = [b"out-" + v for v in inputs]
    got = read_partition("confluent", broker.bootstrap_servers, sink, READ_COMMITTED,
                         len(outputs))
    assert got.values == outputs
    # Rounds: abort 0-4, commit 0-4, abort 5-9, commit 5-9, commit 10-14.
    every = outputs[:5] * 2 + outputs[5:10] * 2 + outputs[10:]
    got = read_partition("confluent", broker.bootstrap_servers, sink, READ_UNCOMMITTED,
                         len(every))
    assert got.values == every
    # The offsets went to __consumer_offsets inside the transactions (with the COMMIT and
    # ABORT markers there too): a restarted coordinator comes back to the same offsets.
    broker.restart()
    deadline = time.monotonic() + TIMEOUT
    while broker.committed_offsets(group) != {(source, 0): 15} and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    assert broker.committed_offsets(group) == {(source, 0): 15}


# ============================================================================ fencing


def is_fenced(library: str, error: BaseException) -> bool:
    if library == "confluent":
        if not isinstance(error, confluent_kafka.KafkaException):
            return False
        err = error.args[0]
        return bool(err.fatal()) and err.code() in (
            confluent_kafka.KafkaError._FENCED, confluent_kafka.KafkaError.PRODUCER_FENCED,
            confluent_kafka.KafkaError.INVALID_PRODUCER_EPOCH)
    return isinstance(error, kafka.errors.ProducerFencedError |
                      kafka.errors.InvalidProducerEpochError)


@pytest.mark.parametrize("library", ["confluent", "kafka-python"])
def test_second_producer_fences_the_first(kafka_broker_factory: BrokerFactory,
                                          library: str) -> None:
    broker = kafka_broker_factory(FAST_TXN)
    topic = "fencing"
    broker.create_topic(topic)
    txn_id = f"fenced-{library}"
    old = txn_producer(library, broker.bootstrap_servers, txn_id)
    new: TxnProducer | None = None
    try:
        old.begin()
        old.send(topic, b"zombie")
        old.flush()
        new = txn_producer(library, broker.bootstrap_servers, txn_id)
        with pytest.raises(Exception) as raised:
            old.commit()
        assert is_fenced(library, _unwrap(raised.value)), repr(raised.value)
        new.begin()
        new.send(topic, b"new")
        new.commit()
    finally:
        old.close()
        if new is not None:
            new.close()
    assert read_partition(library, broker.bootstrap_servers, topic, READ_COMMITTED, 1
                          ).values == [b"new"]
    assert read_partition(library, broker.bootstrap_servers, topic, READ_UNCOMMITTED, 2
                          ).values == [b"zombie", b"new"]
    batches = fetch_batches(broker.bootstrap_servers, topic).batches
    [zombie] = [b for b in batches if not b.control and b.records[0][2] == b"zombie"]
    [fresh] = [b for b in batches if not b.control and b.records[0][2] == b"new"]
    # The new producer keeps the producer id with a higher epoch (or got a new id).
    assert (fresh.producer_id, fresh.producer_epoch) != (zombie.producer_id,
                                                         zombie.producer_epoch)
    markers = control_types(batches)
    assert markers[0] == (zombie.producer_id, CONTROL_ABORT), markers
    assert markers[-1] == (fresh.producer_id, CONTROL_COMMIT), markers


# ============================================================================ timeout


@pytest.mark.parametrize("library", ["confluent", "kafka-python"])
def test_timed_out_transaction_is_aborted(kafka_broker_factory: BrokerFactory,
                                          library: str) -> None:
    broker = kafka_broker_factory(FAST_TXN)
    topic = "timeout"
    broker.create_topic(topic)
    stale = names("stale", 3)
    producer = txn_producer(library, broker.bootstrap_servers, f"slow-{library}",
                            timeout_ms=2000)
    try:
        started = time.monotonic()
        producer.begin()
        producer.send_all(topic, stale)
        producer.flush()
        broker.produce(topic, b"after")
        # Blocked at the LSO until the broker aborts the transaction, then "after" shows.
        got = read_partition("confluent", broker.bootstrap_servers, topic, READ_COMMITTED, 1,
                             timeout=15)
        waited = time.monotonic() - started
        assert got.values == [b"after"], f"after {waited:.1f} s: {got}"
        assert waited >= 1.9, f"aborted after {waited:.2f} s, before its 2 s timeout"
        with pytest.raises(Exception) as raised:     # whichever error: the commit fails
            producer.commit()
        assert not isinstance(raised.value, AssertionError), raised.value   # not a hang
    finally:
        producer.close()
    for reader in READERS:
        assert read_partition(reader, broker.bootstrap_servers, topic, READ_COMMITTED, 1
                              ).values == [b"after"], reader
    assert read_partition("confluent", broker.bootstrap_servers, topic, READ_UNCOMMITTED, 4
                          ).values == [*stale, b"after"]
    fetched = fetch_batches(broker.bootstrap_servers, topic, isolation_level=1)
    [pid] = {b.producer_id for b in fetched.batches if b.transactional}
    assert fetched.aborted == [(pid, 0)]
    assert control_types(fetch_batches(broker.bootstrap_servers, topic).batches) == [
        (pid, CONTROL_ABORT)]


# ==================================================================== clean restart


def test_clean_restart_in_the_middle_of_a_transaction(kafka_broker_factory: BrokerFactory,
                                                      tmp_path: Path) -> None:
    broker = kafka_broker_factory(FAST_TXN, data_dir=tmp_path / "data")
    topic = "restart"
    broker.create_topic(topic, partitions=2)
    first = {p: names(f"first-p{p}", 4) for p in (0, 1)}
    second = {p: names(f"second-p{p}", 3) for p in (0, 1)}
    third = {p: names(f"third-p{p}", 2) for p in (0, 1)}
    producer = ConfluentTxn(broker.bootstrap_servers, "restart-txn")
    try:
        producer.begin()
        for p in (0, 1):
            producer.send_all(topic, first[p], p)
        producer.flush()
        broker.restart()
        producer.commit()       # the coordinator reloaded the open transaction
        producer.begin()
        for p in (0, 1):
            producer.send_all(topic, second[p], p)
        producer.flush()
        broker.restart()
        producer.abort()
        producer.begin()        # the producer's state survived: it goes on
        for p in (0, 1):
            producer.send_all(topic, third[p], p)
        producer.commit()
    finally:
        producer.close()
    for p in (0, 1):
        broker.produce(topic, b"plain", partition=p)
        want = first[p] + third[p] + [b"plain"]
        got = read_partition("confluent", broker.bootstrap_servers, topic, READ_COMMITTED,
                             len(want), partition=p)
        assert got.values == want, f"partition {p}"
    broker.restart()
    for p in (0, 1):
        got = read_partition("kafka-python", broker.bootstrap_servers, topic, READ_COMMITTED,
                             len(first[p] + third[p]) + 1, partition=p)
        assert got.values == first[p] + third[p] + [b"plain"], f"partition {p}, 3rd restart"


# ========================================================================= kill -9

_CHILD = """
import json, sys
from kafkapy.broker import Broker
with Broker(json.loads(sys.argv[2]), data_dir=sys.argv[1]) as broker:
    bound = broker.server.socket_server.bound_endpoints[0]
    print("bootstrap", f"{bound.host}:{bound.port}", flush=True)
    sys.stdin.read()
"""


class ProxiedChildBroker(ChildBroker):
    """A broker in a child process (as test_durability's), advertising a proxy of this
    process in front of it: ``bootstrap`` for clients (the proxy), ``direct`` for raw
    requests, ``proxy`` to watch the requests go by."""

    def __init__(self, data_dir: Path, settings: dict[str, str]) -> None:
        self.proxy = Proxy()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        config = {**settings, "advertised.listeners": self.proxy.advertised_listener}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(data_dir), json.dumps(config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=ROOT)
        self.direct = self._read_bootstrap(timeout=30)
        host, port = self.direct.rsplit(":", 1)
        self.proxy.start(host, int(port))
        self.bootstrap = self.proxy.address

    def kill(self) -> None:
        super().kill()
        self.proxy.stop()


CRASH_SETTINGS = {**FAST_TXN, "num.partitions": "2"}


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(TIMEOUT)


def plain_produce(bootstrap: str, topic: str, value: bytes, partition: int) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap,
                                         "enable.idempotence": False, "log_level": 3})
    producer.produce(topic, value, partition=partition)
    assert producer.flush(TIMEOUT) == 0


def test_kill_9_with_an_open_transaction(tmp_path: Path) -> None:
    data_dir, topic = tmp_path / "data", "crash"
    done = {p: names(f"done-p{p}", 3) for p in (0, 1)}
    hanging = {p: names(f"hanging-p{p}", 4) for p in (0, 1)}
    child = ProxiedChildBroker(data_dir, CRASH_SETTINGS)
    producer: ConfluentTxn | None = None
    try:
        create_topic(child.bootstrap, topic, 2)
        producer = ConfluentTxn(child.bootstrap, "crash-txn", timeout_ms=3000)
        producer.begin()
        for p in (0, 1):
            producer.send_all(topic, done[p], p)
        producer.commit()
        producer.begin()
        for p in (0, 1):
            producer.send_all(topic, hanging[p], p)
        producer.flush()
    finally:
        child.kill()
        if producer is not None:
            bounded(producer.close, "closing a producer whose broker died")

    child = ProxiedChildBroker(data_dir, CRASH_SETTINGS)
    try:
        for p in (0, 1):
            plain_produce(child.bootstrap, topic, b"after", p)
        started = time.monotonic()
        for p in (0, 1):
            # The hanging transaction ends by its timeout: the reader gets past it.
            got = read_partition("confluent", child.bootstrap, topic, READ_COMMITTED, 0,
                                 partition=p, until=b"after", timeout=20)
            assert got.values == done[p] + [b"after"], \
                f"partition {p} after {time.monotonic() - started:.1f} s"
            got = read_partition("confluent", child.bootstrap, topic, READ_UNCOMMITTED, 0,
                                 partition=p, until=b"after")
            assert got.values == done[p] + hanging[p] + [b"after"]
            fetched = fetch_batches(child.direct, topic, p, isolation_level=1)
            pid = fetched.batches[0].producer_id
            assert fetched.aborted == [(pid, len(done[p]) + 1)], f"partition {p}"
        # The transactional id is usable again: a new producer commits.
        again = ConfluentTxn(child.bootstrap, "crash-txn", timeout_ms=3000)
        try:
            again.begin()
            for p in (0, 1):
                again.send(topic, b"new", p)
            again.commit()
        finally:
            again.close()
        for p in (0, 1):
            got = read_partition("confluent", child.bootstrap, topic, READ_COMMITTED, 0,
                                 partition=p, until=b"new")
            assert got.values == done[p] + [b"after", b"new"]
    finally:
        child.kill()


def test_kill_9_just_after_commit_is_all_or_nothing(tmp_path: Path) -> None:
    data_dir, topic = tmp_path / "data", "commit-crash"
    told: dict[int, bool] = {}         # round -> the client was told the commit succeeded
    delays = (0.0, 0.002, 0.01)
    for round_, delay in enumerate(delays):
        child = ProxiedChildBroker(data_dir, CRASH_SETTINGS)
        outcome: list[bool] = []
        committer: threading.Thread | None = None
        producer: ConfluentTxn | None = None
        try:
            if round_ == 0:
                create_topic(child.bootstrap, topic, 2)
            producer = ConfluentTxn(child.bootstrap, f"commit-crash-{round_}",
                                    timeout_ms=3000)
            producer.begin()
            for p in (0, 1):
                producer.send_all(topic, names(f"r{round_}-p{p}", 3), p)
            producer.flush()
            before = child.proxy.forwarded(END_TXN)

            def commit(producer: ConfluentTxn = producer, outcome: list[bool] = outcome
                       ) -> None:
                try:
                    producer.commit(timeout=2)
                    outcome.append(True)
                except (confluent_kafka.KafkaException, SystemError):
                    outcome.append(False)

            committer = threading.Thread(target=commit, daemon=True)
            committer.start()
            child.proxy.wait_forwarded(END_TXN, before + 1, TIMEOUT)
            time.sleep(delay)
        finally:
            child.kill()
        assert committer is not None and producer is not None
        committer.join(TIMEOUT)
        assert outcome, "commit_transaction(timeout=2) did not return"
        told[round_] = outcome == [True]
        bounded(producer.close, "closing a producer whose broker died")

    child = ProxiedChildBroker(data_dir, CRASH_SETTINGS)
    try:
        for p in (0, 1):
            plain_produce(child.bootstrap, topic, b"after", p)
        seen = {}
        for p in (0, 1):
            got = read_partition("confluent", child.bootstrap, topic, READ_COMMITTED, 0,
                                 partition=p, until=b"after", timeout=20)
            assert got.values[-1:] == [b"after"], f"partition {p}: stuck? {got}"
            seen[p] = got.values
        for round_ in range(len(delays)):
            visible = [names(f"r{round_}-p{p}", 3)[0] in seen[p] for p in (0, 1)]
            for p in (0, 1):
                mine = [v for v in seen[p] if v.startswith(b"r%d-" % round_)]
                assert mine in ([], names(f"r{round_}-p{p}", 3)), \
                    f"round {round_}, partition {p}: half a transaction: {mine}"
            assert visible[0] == visible[1], f"round {round_}: visible on one partition only"
            if told[round_]:
                assert visible[0], f"round {round_}: the client was told it committed"
    finally:
        child.kill()


# ============================================================================= admin


def test_admin_lists_and_describes_transactions_and_producers(
        kafka_broker_factory: BrokerFactory) -> None:
    broker = kafka_broker_factory(FAST_TXN)
    topic = "described"
    broker.create_topic(topic, partitions=2)
    idempotent = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers,
                                           "enable.idempotence": True, "log_level": 3})
    for i in range(3):
        idempotent.produce(topic, b"idempotent-%d" % i, partition=0)
    assert idempotent.flush(TIMEOUT) == 0
    del idempotent

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers,
                             request_timeout_ms=int(TIMEOUT * 1000))
    producer = ConfluentTxn(broker.bootstrap_servers, "described-txn", timeout_ms=45_000)
    tps = [kafka.TopicPartition(topic, 0), kafka.TopicPartition(topic, 1)]
    try:
        before = int(time.time() * 1000)
        producer.begin()
        producer.send_all(topic, names("txn-p0", 2), 0)
        producer.send_all(topic, names("txn-p1", 3), 1)
        producer.flush()

        listed = [t for ts in admin.list_transactions().values() for t in ts]
        [mine] = [t for t in listed if t.transactional_id == "described-txn"]
        assert mine.state.value == "Ongoing"
        pid = mine.producer_id
        ongoing = [t.transactional_id for ts in admin.list_transactions(
            state_filters=["Ongoing"]).values() for t in ts]
        assert ongoing == ["described-txn"]
        assert not [t for ts in admin.list_transactions(
            state_filters=["CompleteCommit"]).values() for t in ts]
        assert [t.transactional_id for ts in admin.list_transactions(
            producer_id_filters=[pid]).values() for t in ts] == ["described-txn"]

        desc = admin.describe_transactions(["described-txn"])["described-txn"]
        assert desc.state.value == "Ongoing"
        assert desc.producer_id == pid and desc.producer_epoch >= 0
        assert desc.transaction_timeout_ms == 45_000
        assert desc.topic_partitions == set(tps)
        assert before - 1000 <= desc.transaction_start_time_ms <= time.time() * 1000 + 1000

        producers = admin.describe_producers(tps)
        by_pid = {s.producer_id: s for s in producers[tps[0]].active_producers}
        assert set(by_pid) >= {pid} and len(by_pid) == 2, by_pid
        txn0 = by_pid.pop(pid)
        [idem] = by_pid.values()
        assert (txn0.producer_epoch, txn0.last_sequence, txn0.current_transaction_start_offset
                ) == (desc.producer_epoch, 1, 3)
        assert (idem.last_sequence, idem.current_transaction_start_offset) == (2, -1)
        assert before - 60_000 <= txn0.last_timestamp <= time.time() * 1000 + 1000
        [txn1] = producers[tps[1]].active_producers
        assert (txn1.producer_id, txn1.last_sequence, txn1.current_transaction_start_offset
                ) == (pid, 2, 0)
        # The producer ids agree with the batches in the log.
        assert {b.producer_id for b in fetch_batches(broker.bootstrap_servers, topic, 1
                                                     ).batches} == {pid}

        producer.commit()

        desc = admin.describe_transactions(["described-txn"])["described-txn"]
        assert desc.state.value == "CompleteCommit"
        assert desc.topic_partitions == set()
        assert not [t for ts in admin.list_transactions(state_filters=["Ongoing"]).values()
                    for t in ts]
        producers = admin.describe_producers(tps)
        for tp in tps:
            [state] = [s for s in producers[tp].active_producers if s.producer_id == pid]
            assert state.current_transaction_start_offset == -1, (tp, state)
        with pytest.raises(kafka.errors.TransactionalIdNotFoundError):
            admin.describe_transactions(["no-such-transactional-id"])
    finally:
        producer.close()
        admin.close()
