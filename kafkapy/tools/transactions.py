"""``kafkapy transactions``: Kafka's ``kafka-transactions.sh``
(``org.apache.kafka.tools.TransactionsCommand`` of Kafka 3.x), a client of a running cluster.

What it owns: the tool's five commands, flagged as Kafka's (``--bootstrap-server`` and
``--command-config`` before the command):

- ``list``: every transaction of every broker's coordinator (ListTransactions),
  ``TransactionalId Coordinator ProducerId TransactionState``;
- ``describe --transactional-id x``: DescribeTransactions at its coordinator, ``CoordinatorId
  TransactionalId ProducerId ProducerEpoch TransactionState TransactionTimeoutMs
  CurrentTransactionStartTimeMs TransactionDurationMs TopicPartitions``;
- ``describe-producers --topic t --partition p [--broker-id n]``: DescribeProducers at the
  leader (or that replica), ``ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence
  LastTimestamp CurrentTransactionStartOffset``;
- ``find-hanging (--broker-id n | --topic t [--partition p]) [--max-transaction-timeout m]``:
  open transactions older than ``m`` minutes (default 15) whose producer's transactional id
  the coordinators no longer know or whose coordinator no longer lists the partition;
- ``abort --topic t --partition p (--start-offset o | --producer-id --producer-epoch
  --coordinator-epoch)``: an abort marker written by the partition leader (WriteTxnMarkers,
  as Kafka's ``Admin.abortTransaction`` sends it; the producer found by DescribeProducers
  from the transaction's start offset).

Tables as Kafka's ``prettyPrintTable`` prints them: every cell padded to its column's width,
each followed by a tab. Rows are sorted (Kafka's come in hash order). Failures are Kafka's
``<what failed>: <message>. Enable debug logging for additional detail.`` on stderr, exit code
1. ``--output json`` prints one object per row (the header names as keys) instead.

None of these APIs is in confluent-kafka's AdminClient: kafka-python's
(``kafkapy.tools.kafka_python_admin``) sends them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from kafkapy.tools.kafka_python_admin import ClientMissing, error_message, kafka_python_admin

__all__ = ["add_parser", "pretty_table", "run"]

TOOL = "transactions"
LIST_HEADERS = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState")
DESCRIBE_HEADERS = ("CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch",
                    "TransactionState", "TransactionTimeoutMs", "CurrentTransactionStartTimeMs",
                    "TransactionDurationMs", "TopicPartitions")
PRODUCERS_HEADERS = ("ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
                     "LastTimestamp", "CurrentTransactionStartOffset")
HANGING_HEADERS = ("Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch",
                   "StartOffset", "LastTimestamp", "Duration(min)")
# Kafka's states that a coordinator still completes (the partitions it lists get markers).
ACTIVE_STATES = frozenset({"Ongoing", "PrepareCommit", "PrepareAbort"})


class CommandFailed(Exception):
    """Kafka's printErrorAndExit: the message on stderr, exit code 1."""


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        TOOL, help="Kafka's kafka-transactions.sh: list, describe and abort transactions",
        description="This tool is used to analyze the transactional state of producers in "
                    "the cluster. It can be used to detect and recover from hanging "
                    "transactions.")
    p.add_argument("--command-config", metavar="FILE",
                   help="property file containing configs to be passed to admin client")
    p.add_argument("--bootstrap-server", metavar="host:port", required=True,
                   help="hostname and port for the broker to connect to, in the form "
                        "`host:port` (multiple comma-separated entries can be given)")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="text: Kafka's tables (the default); json: one JSON object per row "
                        "(kafkapy's addition).")
    commands = p.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    commands.required = True
    commands.add_parser("list", help="list transactions")
    describe = commands.add_parser("describe",
                                   help="describe the state of an active transactional-id")
    describe.add_argument("--transactional-id", required=True, help="transactional id")
    producers = commands.add_parser(
        "describe-producers", help="describe the states of active producers for a topic "
                                   "partition")
    producers.add_argument("--broker-id", type=int,
                           help="optional broker id to describe the producer state on a "
                                "specific replica")
    producers.add_argument("--topic", required=True, help="topic name")
    producers.add_argument("--partition", type=int, required=True, help="partition number")
    abort = commands.add_parser(
        "abort", help="abort a hanging transaction (requires administrative privileges)")
    abort.add_argument("--topic", required=True, help="topic name")
    abort.add_argument("--partition", type=int, required=True, help="partition number")
    new = abort.add_argument_group("Brokers on versions 3.0 and above",
                                   "For newer brokers, only the start offset of the "
                                   "transaction to be aborted is required")
    new.add_argument("--start-offset", type=int,
                     help="start offset of the transaction to abort")
    old = abort.add_argument_group("Brokers on versions older than 3.0",
                                   "For older brokers, you must provide all of these arguments")
    old.add_argument("--producer-id", type=int, help="producer id")
    old.add_argument("--producer-epoch", type=int, help="producer epoch")
    old.add_argument("--coordinator-epoch", type=int, help="coordinator epoch")
    hanging = commands.add_parser("find-hanging", help="find hanging transactions")
    hanging.add_argument("--broker-id", type=int,
                         help="broker id to search for hanging transactions")
    hanging.add_argument("--max-transaction-timeout", type=int, default=15,
                         help="maximum transaction timeout in minutes to limit the scope of "
                              "the search")
    hanging.add_argument("--topic", help="topic name to limit search to")
    hanging.add_argument("--partition", type=int, help="partition number")
    p.set_defaults(run=run, parser=p)


# ================================================================================ output

def pretty_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Kafka's prettyPrintTable: each cell left-justified to its column's widest value and
    followed by a tab (the last one too)."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    return ["".join(cell.ljust(w) + "\t" for cell, w in zip(row, widths, strict=True))
            for row in (tuple(headers), *rows)]


def emit(opts: argparse.Namespace, out: TextIO, headers: Sequence[str],
         rows: Sequence[Sequence[str]]) -> None:
    if opts.output == "json":
        for row in rows:
            out.write(json.dumps(dict(zip(headers, row, strict=True))) + "\n")
    else:
        for line in pretty_table(headers, rows):
            out.write(line + "\n")


def fail(what: str, exc: BaseException) -> CommandFailed:
    return CommandFailed(f"{what}: {error_message(exc)}. Enable debug logging for additional "
                         f"detail.")


def _state(state: Any) -> str:
    """Kafka's TransactionState.toString (``Ongoing``, ``CompleteCommit``, ...)."""
    return str(getattr(state, "value", state))


def _tp(tp: Any) -> str:
    return f"{tp.topic}-{tp.partition}"


def _is_kafka_error(exc: BaseException) -> bool:
    return type(exc).__module__.startswith("kafka.")


# ============================================================================== commands

def list_transactions(admin: Any) -> list[list[str]]:
    try:
        by_broker = admin.list_transactions()
    except Exception as e:
        if _is_kafka_error(e):
            raise fail("Failed to list transactions", e) from None
        raise
    rows = []
    for broker in sorted(by_broker):
        for listing in sorted(by_broker[broker], key=lambda x: str(x.transactional_id)):
            rows.append([listing.transactional_id, str(broker), str(listing.producer_id),
                         _state(listing.state)])
    return rows


def describe_transaction(admin: Any, transactional_id: str) -> list[list[str]]:
    try:
        result = admin.describe_transactions([transactional_id])[transactional_id]
    except Exception as e:
        if _is_kafka_error(e):
            raise fail(f"Failed to describe transaction state of transactional-id "
                       f"`{transactional_id}`", e) from None
        raise
    start = result.transaction_start_time_ms
    started = start is not None and start >= 0
    return [[str(result.coordinator_id), transactional_id, str(result.producer_id),
             str(result.producer_epoch), _state(result.state),
             str(result.transaction_timeout_ms),
             str(start) if started else "None",
             str(int(time.time() * 1000) - start) if started else "None",
             ",".join(sorted(_tp(tp) for tp in result.topic_partitions))]]


def active_producers(admin: Any, kafka: Any, topic: str, partition: int,
                     broker_id: int | None, what: str) -> list[Any]:
    tp = kafka.TopicPartition(topic, partition)
    try:
        result = admin.describe_producers([tp], broker_id=broker_id)[tp]
    except Exception as e:
        if _is_kafka_error(e):
            raise fail(what, e) from None
        raise
    return sorted(result.active_producers, key=lambda s: int(s.producer_id))


def producer_rows(states: Sequence[Any]) -> list[list[str]]:
    rows = []
    for s in states:
        start = s.current_transaction_start_offset
        rows.append([str(s.producer_id), str(s.producer_epoch), str(s.coordinator_epoch),
                     str(s.last_sequence), str(s.last_timestamp),
                     str(start) if start is not None and start >= 0 else "None"])
    return rows


def abort(admin: Any, kafka: Any, opts: argparse.Namespace) -> None:
    tp_text = f"{opts.topic}-{opts.partition}"
    if opts.start_offset is None and opts.producer_id is None:
        raise CommandFailed("The transaction to abort must be identified either with "
                            "--start-offset (for brokers on 3.0 or above) or with "
                            "--producer-id, --producer-epoch, and --coordinator-epoch (for "
                            "older brokers)")
    if opts.start_offset is None:
        if opts.producer_epoch is None:
            raise CommandFailed("Missing required argument --producer-epoch")
        if opts.coordinator_epoch is None:
            raise CommandFailed("Missing required argument --coordinator-epoch")
        producer_id, producer_epoch = opts.producer_id, opts.producer_epoch
        # a hanging transaction of a new producer id has coordinator epoch -1: Kafka uses 0,
        # which no leader epoch is below
        coordinator_epoch = max(opts.coordinator_epoch, 0)
    else:
        states = active_producers(admin, kafka, opts.topic, opts.partition, None,
                                  f"Failed to validate producer state for partition "
                                  f"{tp_text}")
        found = [s for s in states if s.current_transaction_start_offset == opts.start_offset]
        if not found:
            raise CommandFailed(f"Could not find any open transactions starting at offset "
                                f"{opts.start_offset} on partition {tp_text}")
        producer_id, producer_epoch = found[0].producer_id, found[0].producer_epoch
        coordinator_epoch = max(found[0].coordinator_epoch, 0)
    spec = kafka.admin.AbortTransactionSpec(kafka.TopicPartition(opts.topic, opts.partition),
                                            producer_id, producer_epoch, coordinator_epoch)
    try:
        admin.abort_transaction(spec)
    except Exception as e:
        if _is_kafka_error(e):
            raise fail(f"Failed to abort transaction AbortTransactionSpec(topicPartition="
                       f"{tp_text}, producerId={producer_id}, producerEpoch={producer_epoch}, "
                       f"coordinatorEpoch={coordinator_epoch})", e) from None
        raise


def find_hanging(admin: Any, kafka: Any, opts: argparse.Namespace) -> list[list[str]]:
    if opts.topic is None and opts.broker_id is None:
        raise CommandFailed("The `find-hanging` command requires either --topic or "
                            "--broker-id to limit the scope of the search")
    if opts.partition is not None and opts.topic is None:
        raise CommandFailed("The --partition argument requires --topic to be provided")
    max_timeout_ms = opts.max_transaction_timeout * 60_000
    # the partitions to search: the one asked for, or those with a replica on the broker
    if opts.topic is not None and opts.partition is not None:
        partitions = [(opts.topic, opts.partition)]
    else:
        try:
            topics = [opts.topic] if opts.topic is not None else sorted(admin.list_topics())
            described = admin.describe_topics(topics)
        except Exception as e:
            if _is_kafka_error(e):
                raise fail("Failed to describe topics", e) from None
            raise
        partitions = []
        for topic in described:
            # Kafka's listTopics leaves the internal topics out
            if opts.topic is None and topic.get("is_internal"):
                continue
            if topic.get("error_code", 0):
                raise CommandFailed(f"Failed to describe 1 topics: "
                                    f"{error_message(kafka.errors.for_code(topic['error_code'])())}"
                                    f". Enable debug logging for additional detail.")
            for p in topic["partitions"]:
                if opts.broker_id is None or opts.broker_id in p["replica_nodes"]:
                    partitions.append((topic["name"], int(p["partition_index"])))
    candidates: list[tuple[Any, Any]] = []
    now = int(time.time() * 1000)
    if partitions:
        tps = [kafka.TopicPartition(t, p) for t, p in sorted(partitions)]
        try:
            by_partition = admin.describe_producers(tps, broker_id=opts.broker_id)
        except Exception as e:
            if _is_kafka_error(e):
                raise fail(f"Failed to describe producers for {len(tps)} partitions on broker "
                           f"{opts.broker_id}", e) from None
            raise
        for tp in tps:
            for s in by_partition[tp].active_producers:
                start = s.current_transaction_start_offset
                if start is not None and start >= 0 and now - s.last_timestamp > max_timeout_ms:
                    candidates.append((tp, s))
    hanging = []
    if candidates:
        producer_ids = sorted({int(s.producer_id) for _, s in candidates})
        try:
            listings = admin.list_transactions(producer_id_filters=producer_ids)
            ids = {int(x.producer_id): x.transactional_id
                   for broker in listings.values() for x in broker}
        except Exception as e:
            if _is_kafka_error(e):
                raise fail(f"Failed to list transactions for {len(producer_ids)} producers",
                           e) from None
            raise
        descriptions: dict[str, Any] = {}
        for tid in sorted(set(ids.values())):
            try:
                descriptions[tid] = admin.describe_transactions([tid])[tid]
            except Exception as e:
                if type(e).__name__ != "TransactionalIdNotFoundError":
                    if _is_kafka_error(e):
                        raise fail("Failed to describe 1 transactions", e) from None
                    raise
        for tp, s in candidates:
            tid = ids.get(int(s.producer_id))
            description = descriptions.get(tid) if tid is not None else None
            # the coordinator still writes markers to the partitions it lists
            if description is None or tp not in description.topic_partitions:
                hanging.append((tp, s))
    return [[tp.topic, str(tp.partition), str(s.producer_id), str(s.producer_epoch),
             str(s.coordinator_epoch), str(s.current_transaction_start_offset),
             str(s.last_timestamp), str((now - s.last_timestamp) // 60_000)]
            for tp, s in hanging]


def execute(opts: argparse.Namespace, out: TextIO) -> None:
    admin = kafka_python_admin(TOOL, opts.bootstrap_server, opts.command_config,
                               "transactions-tool")
    kafka = sys.modules["kafka"]
    try:
        if opts.command == "list":
            emit(opts, out, LIST_HEADERS, list_transactions(admin))
        elif opts.command == "describe":
            emit(opts, out, DESCRIBE_HEADERS,
                 describe_transaction(admin, opts.transactional_id))
        elif opts.command == "describe-producers":
            where = "leader" if opts.broker_id is None else f"broker {opts.broker_id}"
            states = active_producers(admin, kafka, opts.topic, opts.partition, opts.broker_id,
                                      f"Failed to describe producers for partition "
                                      f"{opts.topic}-{opts.partition} on {where}")
            emit(opts, out, PRODUCERS_HEADERS, producer_rows(states))
        elif opts.command == "abort":
            abort(admin, kafka, opts)
        else:
            emit(opts, out, HANGING_HEADERS, find_hanging(admin, kafka, opts))
    finally:
        admin.close()


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        execute(opts, out)
    except (ClientMissing, CommandFailed) as e:
        err.write(f"{e}\n")
        return 1
    except OSError as e:
        err.write(f"Failed to load admin client properties: {e.strerror or e}. Enable debug "
                  f"logging for additional detail.\n")
        return 1
    except Exception as e:
        if _is_kafka_error(e):
            err.write(f"{error_message(e)}\n")
            return 1
        raise
    return 0
