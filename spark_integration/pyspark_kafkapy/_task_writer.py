"""One Spark task's write into Kafka: a transaction per task, fenced and made idempotent.

Runs in an executor's Python worker, once per task (``write()`` of the sink's writers).

Exactly once (``exactlyOnce=true``, the default). A task is identified by ``(write id,
partition id, batch id)``: the write id is the streaming query's id (kept in its checkpoint,
the same after a restart) or a batch write's ``writeId``; the partition id is the Spark task's
partition; the batch id the micro-batch's (0 for a batch write). The task:

1. starts a producer with ``transactional.id = <prefix>-<write id>-<partition id>`` and calls
   ``init_transactions``. That fences every earlier producer with that id (a previous attempt
   of this task, still running or dead, or the task of an earlier micro-batch): the
   coordinator bumps the epoch and completes the predecessor's transaction (an open one is
   aborted, one already committing is finished), so none of them can write afterwards.
2. reads the **marker**: the offset committed by the consumer group ``<prefix>-<write
   id>-<partition id>`` for partition 0 of the marker topic (the ``topic`` option, or the topic
   of the task's first row). The marker is ``batch id + 1`` of the last micro-batch this
   partition committed. If it is already past this batch, an earlier attempt committed this
   very task (and then died, or its driver did, before Spark recorded it): nothing is written,
   and the task reports the rows that attempt wrote (kept in the marker's metadata).
3. otherwise produces every row inside one transaction, adds the new marker to the same
   transaction (``send_offsets_to_transaction``: KIP-98's transactional offset commit, the
   mechanism Kafka Streams uses for its input offsets) and commits. The records and the
   marker become visible together, or neither does.

So for each (micro-batch, partition) exactly one attempt's records are committed, whatever
fails in between, provided a replayed micro-batch hands the same rows to the same partition
id (Spark's deterministic replay: true of kafkapy-log input, of stateful aggregations, of
any deterministic plan; not of ``rand()``, ``current_timestamp()`` or options changed between
runs). The driver's ``commit`` (``sink``) only checks the reports: Kafka cannot commit several
producers' transactions atomically, so a read_committed consumer may see some partitions of a
micro-batch before the others (each partition all or nothing), and never sees one twice.

The marker is an offset of a consumer group that consumes nothing: it appears in
``kafka-consumer-groups --list`` and expires like any empty group's offsets
(``offsets.retention.minutes``, 7 days), after which a replay of that batch would write again.
The open transaction of a task killed outright blocks read_committed consumers of its
partitions until the task's retry (or the driver's abort) fences it, at the latest until
``transaction.timeout.ms`` (10 minutes by default here).

At least once (``exactlyOnce=false``): an idempotent producer (acks=all) per task, flushed
before the task ends, as Spark's own Kafka sink; a retried task writes its rows again.

Errors: a row the sink cannot write (``_sink_rows``), a failed delivery (the broker's error
code and message, e.g. ``MSG_SIZE_TOO_LARGE``), a failed commit or a fenced producer raise
``KafkaWriteError`` naming the task and the transactional id; the transaction is aborted
first. Spark retries the task up to ``spark.task.maxFailures`` times and then fails the job
with that message. Failed deliveries are found without a delivery callback in a transaction:
librdkafka makes the transaction abortable at the first record the broker refuses, and
``commit_transaction`` raises that error (code, topic-partition and the broker's message);
at least once, the producer reports failed deliveries only (``delivery.report.only.error``)
and the task checks them after ``flush``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import WriterCommitMessage

if TYPE_CHECKING:
    import pyarrow as pa

    from pyspark_kafkapy._sink_options import SinkOptions
    from pyspark_kafkapy._sink_rows import SinkColumns

__all__ = ["KafkaWriteError", "TaskReport", "fence", "transactional_id", "write_task"]

TIMEOUT = 120.0      # seconds: any single client call (init, commit, offsets); never forever


class KafkaWriteError(RuntimeError):
    """A task could not write its rows to Kafka (the broker's or the client's error)."""


@dataclass
class TaskReport(WriterCommitMessage):
    """What one task reports to the driver (Spark's WriterCommitMessage)."""

    write_id: str        # the streaming query's id, or the batch write's
    partition_id: int
    attempt: int
    batch_id: int
    rows: int
    bytes: int
    # The task's rows are in Kafka: committed by this attempt (exactly once), flushed
    # (at least once), or committed by an earlier attempt (``skipped``).
    committed: bool
    skipped: bool
    transactional_id: str | None
    topics: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"write_id": self.write_id, "partition_id": self.partition_id,
                "attempt": self.attempt, "batch_id": self.batch_id, "rows": self.rows,
                "bytes": self.bytes,
                "committed": self.committed, "skipped": self.skipped,
                "transactional_id": self.transactional_id, "topics": list(self.topics)}


def transactional_id(options: SinkOptions, write_id: str, partition_id: int) -> str:
    """The transactional id (and marker group) of a task (module doc)."""
    return f"{options.transactional_id_prefix}-{write_id}-{partition_id}"


class _Deliveries:
    """The first failed delivery, for at-least-once tasks (failures only:
    ``delivery.report.only.error``, so a success makes no Python call; it still costs the
    record a state object and a GIL round trip in confluent-kafka's ``poll``, which is why
    transactional tasks have no callback)."""

    def __init__(self) -> None:
        self.error: Any = None
        self.failed = 0

    def __call__(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.failed += 1
            if self.error is None:
                self.error = (err, msg.topic(), msg.partition())

    def describe(self) -> str:
        if self.error is None:
            return ""
        err, topic, partition = self.error
        return (f"{self.failed} record(s) not delivered; first to {topic}-{partition}: "
                f"{err.name()}: {err.str()}")


def _first_rows(batches: Iterable[pa.RecordBatch]) -> tuple[pa.RecordBatch | None,
                                                            Iterator[pa.RecordBatch]]:
    it = iter(batches)
    for batch in it:
        if batch.num_rows:
            return batch, it
    return None, it


def write_task(batches: Iterable[pa.RecordBatch], options: SinkOptions, cols: SinkColumns,
               write_id: str, batch_id: int) -> TaskReport:
    """Write one task's Arrow batches (module doc); returns its report."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    partition_id = ctx.partitionId() if ctx is not None else 0
    attempt = ctx.attemptNumber() if ctx is not None else 0
    first, rest = _first_rows(batches)
    if first is None:
        # Nothing to write: no transaction, no marker (a replay of this task is empty too).
        return TaskReport(write_id, partition_id, attempt, batch_id, 0, 0, True, False, None,
                          ())
    if options.exactly_once:
        return _write_transaction(first, rest, options, cols, write_id, batch_id,
                                  partition_id, attempt)
    return _write_at_least_once(first, rest, options, cols, write_id, batch_id, partition_id,
                                attempt)


class _Progress:
    """Rows handed to the producer so far (for the error of a task that fails part way)."""

    rows = 0


def _produce_all(producer: Any, first: pa.RecordBatch, rest: Iterator[pa.RecordBatch],
                 options: SinkOptions, cols: SinkColumns,
                 progress: _Progress | None = None) -> tuple[int, int, set[str]]:
    from pyspark_kafkapy._sink_rows import batch_bytes, produce_batch

    progress = progress or _Progress()
    size = 0
    topics: set[str] = set()
    produce, poll = producer.produce, producer.poll
    for batch in chain((first,), rest):
        topics |= produce_batch(produce, poll, batch, cols, options.topic)
        progress.rows += batch.num_rows
        size += batch_bytes(batch, cols)
    return progress.rows, size, topics


def _note_aborted(exc: BaseException, where: str, progress: _Progress) -> None:
    """Say in the task's error how far it got (Python 3.11+ shows notes in tracebacks)."""
    if hasattr(exc, "add_note"):
        exc.add_note(f"{where}: failed after producing {progress.rows} rows in its "
                     "transaction, which was aborted (none of them is committed)")


def _write_at_least_once(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch],
                         options: SinkOptions, cols: SinkColumns, write_id: str,
                         batch_id: int, partition_id: int, attempt: int) -> TaskReport:
    import confluent_kafka

    deliveries = _Deliveries()
    producer = confluent_kafka.Producer({**options.producer, "delivery.report.only.error": True,
                                         "on_delivery": deliveries})
    try:
        rows, size, topics = _produce_all(producer, first, rest, options, cols)
        remaining = producer.flush()     # bounded by delivery.timeout.ms
    except confluent_kafka.KafkaException as exc:
        raise KafkaWriteError(f"kafkapy sink: task {partition_id} (attempt {attempt}) failed: "
                              f"{_describe(exc)} {deliveries.describe()}") from exc
    if deliveries.error is not None or remaining:
        raise KafkaWriteError(f"kafkapy sink: task {partition_id} (attempt {attempt}) failed: "
                              f"{deliveries.describe() or f'{remaining} records not delivered'}")
    return TaskReport(write_id, partition_id, attempt, batch_id, rows, size, True, False,
                      None, tuple(sorted(topics)))


def _describe(exc: BaseException) -> str:
    err: Any = exc.args[0] if exc.args else None
    if err is not None and hasattr(err, "name") and hasattr(err, "str"):
        return f"{err.name()}: {err.str()}"
    return str(exc)


def _marker_topic(options: SinkOptions, cols: SinkColumns, first: pa.RecordBatch) -> str:
    if options.topic is not None:
        return options.topic
    assert cols.topic is not None
    topic = first.column(cols.topic)[0].as_py()
    if not topic:
        raise ValueError("Null topic present in the data. Use the topic option for setting a "
                         "topic.")
    return str(topic)


def _write_transaction(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch],
                       options: SinkOptions, cols: SinkColumns, write_id: str, batch_id: int,
                       partition_id: int, attempt: int) -> TaskReport:
    import confluent_kafka

    tid = transactional_id(options, write_id, partition_id)
    where = f"kafkapy sink: task {partition_id} (attempt {attempt}, transactional.id {tid})"
    # No delivery callback: a record that fails makes the transaction abortable, and
    # commit_transaction then raises the broker's error for it (module doc). A callback, even
    # one for failures only, costs every record a state object and a GIL round trip in poll.
    producer = confluent_kafka.Producer({**options.producer, "transactional.id": tid})
    marker_tp = confluent_kafka.TopicPartition(_marker_topic(options, cols, first), 0)
    consumer: Any = None
    in_transaction = False
    progress = _Progress()
    try:
        producer.init_transactions(TIMEOUT)          # fences every predecessor (module doc)
        consumer = confluent_kafka.Consumer({
            **options.consumer, "group.id": tid, "enable.auto.commit": False,
            # read_committed: OffsetFetch with RequireStable (KIP-447), so an offset a
            # transaction still holds is waited for, never missed.
            "isolation.level": "read_committed"})
        done = consumer.committed([marker_tp], timeout=TIMEOUT)[0]
        if done.error is not None:
            raise confluent_kafka.KafkaException(done.error)
        # The group's metadata is a copy that outlives the consumer: close it now rather than
        # keep its client threads and connection through the task's producing.
        group = consumer.consumer_group_metadata()
        consumer.close()
        consumer = None
        if done.offset > batch_id:
            # An earlier attempt committed this task's transaction (module doc). The input
            # is still read to its end, as Spark expects of a task.
            for _ in rest:
                pass
            before = json.loads(done.metadata or "{}")
            return TaskReport(write_id, partition_id, attempt, batch_id,
                              int(before.get("rows", 0)),
                              int(before.get("bytes", 0)), True, True, tid,
                              tuple(before.get("topics", ())))
        producer.begin_transaction()
        in_transaction = True
        rows, size, topics = _produce_all(producer, first, rest, options, cols, progress)
        marker = json.dumps({"rows": rows, "bytes": size, "topics": sorted(topics),
                             "attempt": attempt})
        producer.send_offsets_to_transaction(
            [confluent_kafka.TopicPartition(marker_tp.topic, 0, batch_id + 1,
                                            metadata=marker)],
            group, TIMEOUT)
        producer.commit_transaction(TIMEOUT)
        in_transaction = False
        return TaskReport(write_id, partition_id, attempt, batch_id, rows, size, True, False,
                          tid, tuple(sorted(topics)))
    except confluent_kafka.KafkaException as exc:
        _abort(producer, in_transaction)
        raise KafkaWriteError(f"{where} failed: {_describe(exc)}") from exc
    except BaseException as exc:
        if in_transaction:
            _note_aborted(exc, where, progress)
        _abort(producer, in_transaction)
        raise
    finally:
        if consumer is not None:
            consumer.close()


def _abort(producer: Any, in_transaction: bool) -> None:
    """Abort the open transaction so read_committed consumers need not wait for its timeout
    (best effort: a fenced or failed producer cannot, and its successor's init will)."""
    if not in_transaction:
        return
    try:
        producer.abort_transaction(30)
    except Exception:   # the original error is the one to report
        pass


def fence(options: SinkOptions, write_id: str, partition_ids: Iterable[int]) -> None:
    """Driver side, after failed tasks: fence their transactional ids, which aborts any
    transaction a killed task left open (module doc). Best effort: errors are ignored."""
    import confluent_kafka

    for pid in partition_ids:
        try:
            producer = confluent_kafka.Producer({
                **options.producer, "transactional.id": transactional_id(options, write_id, pid)})
            producer.init_transactions(30)
        except Exception:   # best effort: the task's retry fences too
            continue
