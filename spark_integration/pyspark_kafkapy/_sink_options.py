"""The ``kafkapy`` sink's options, parsed and checked once on the driver.

Names are case-insensitive (Spark hands a case-insensitive map; plain dicts are lowered
here), values strings. As in Spark's Kafka sink, every ``kafka.``-prefixed option goes to the
producer without its prefix (``kafka.linger.ms`` -> ``linger.ms``): librdkafka's names, which
are Kafka's for everything the two share (``acks``, ``compression.type``, ``linger.ms``,
``batch.size``, ``security.protocol``, ``sasl.*``, most ``ssl.*``). An unknown name fails when
the write is planned: ``check_producer_config`` builds a producer from it on the driver.

Invariants the sink relies on (``ValueError`` naming the option otherwise):

- ``kafka.bootstrap.servers`` is given;
- ``kafka.key.serializer`` / ``kafka.value.serializer`` are refused (Spark's sink refuses them:
  keys and values are written as the bytes of the column), and so is
  ``kafka.transactional.id``: the sink derives one per task (``_task_writer``);
- with ``exactlyOnce`` (the default) the producer is idempotent with ``acks=all``: an option
  saying otherwise is an error, since Kafka transactions need both;
- without it, the producer is idempotent with ``acks=all`` unless ``kafka.acks`` asks for less
  (idempotence needs ``acks=all``; an explicit ``kafka.enable.idempotence`` still wins).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SinkOptions", "check_producer_config", "parse_sink_options"]

_REFUSED = {
    "key.serializer": "keys are written as the bytes of the key column (binary, or string as "
                      "UTF-8)",
    "value.serializer": "values are written as the bytes of the value column (binary, or "
                        "string as UTF-8)",
    "transactional.id": "the sink derives a transactional id per Spark task from "
                        "transactionalIdPrefix, the query id and the partition id",
}
# librdkafka settings a consumer shares with the producer: connection and security. The sink's
# marker consumer (``_task_writer``) gets only these, so that librdkafka does not warn about
# producer settings handed to a consumer.
_CONNECTION = re.compile(r"(bootstrap\.servers|metadata\.broker\.list|security\.protocol|"
                         r"sasl\..*|ssl\..*|ssl_.*|client\..*|socket\..*|broker\..*|"
                         r"reconnect\..*|connections\..*|api\.version\..*|"
                         r"topic\.metadata\..*|metadata\..*|enable\.ssl\..*|debug|log_level|"
                         r"oauthbearer_token_refresh_cb|error_cb|log_cb|resolve_cb)")
_IDENT = re.compile(r"[A-Za-z0-9._-]+")
_DEFAULT_PREFIX = "kafkapy-sink"
# Kafka's broker default transaction.max.timeout.ms is 15 minutes; librdkafka's producer
# default transaction.timeout.ms (60 s) would abort a transaction of a task that writes for
# longer than a minute. A task killed mid-transaction is fenced by its retry (or by the driver's
# abort) long before this, so a long timeout costs nothing in the common failures.
_TRANSACTION_TIMEOUT_MS = "600000"
_LINGER_MS = "20"


@dataclass(frozen=True)
class SinkOptions:
    # The ``topic`` option (overrides the topic column, as in Spark's sink), or None.
    topic: str | None
    # librdkafka settings of every task's producer (``kafka.*`` without the prefix, and the
    # sink's defaults), without transactional.id.
    producer: Mapping[str, str] = field(default_factory=dict)
    exactly_once: bool = True
    transactional_id_prefix: str = _DEFAULT_PREFIX
    # Batch writes: the id in the transactional ids and marker groups (a random one per write
    # unless given: the same writeId makes a re-run of the whole job skip the tasks that
    # committed). Streaming writes use the query's id instead (kept in the checkpoint).
    write_id: str | None = None
    # Batch writes: the micro-batch of a ``foreachBatch`` writing through ``df.write`` (needs
    # ``writeId``, the query's id): the same protocol as the streaming writer's, so a replayed
    # micro-batch's tasks skip. Update output mode goes through this (Spark 4.3 refuses
    # update mode for Python data source sinks).
    batch_id: int = 0
    # A directory where the driver writes each committed write's task reports (diagnostics,
    # tests).
    write_stats_dir: str | None = None

    @property
    def consumer(self) -> dict[str, str]:
        """The producer's connection and security settings (for the marker consumer)."""
        return {k: v for k, v in self.producer.items() if _CONNECTION.fullmatch(k)}


def _flag(opts: Mapping[str, str], name: str, default: bool) -> bool:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    value = str(raw).strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"option {name!r} must be true or false, not {raw!r}")
    return value == "true"


def parse_sink_options(options: Mapping[str, Any]) -> SinkOptions:
    """The sink's options from Spark's (module doc); raises ValueError on a bad one."""
    opts = {str(k).lower(): str(v) for k, v in options.items()}
    producer: dict[str, str] = {}
    for key, value in opts.items():
        if not key.startswith("kafka."):
            continue
        name = key[len("kafka."):]
        if name in _REFUSED:
            raise ValueError(f"Kafka option '{name}' is not supported: {_REFUSED[name]}")
        producer[name] = value
    if not producer.get("bootstrap.servers", "").strip():
        raise ValueError("Option 'kafka.bootstrap.servers' must be specified for configuring "
                         "the Kafka producer")
    exactly_once = _flag(opts, "exactlyOnce", True)
    acks = producer.get("acks", "all").strip().lower()
    idempotence = producer.get("enable.idempotence", "").strip().lower()
    if exactly_once:
        if acks not in ("all", "-1"):
            raise ValueError(f"option 'kafka.acks'={producer['acks']!r} cannot be used with "
                             "exactlyOnce=true: Kafka transactions need acks=all (set "
                             "exactlyOnce=false for at-least-once writes with other acks)")
        if idempotence == "false":
            raise ValueError("option 'kafka.enable.idempotence'=false cannot be used with "
                             "exactlyOnce=true: Kafka transactions need an idempotent producer")
        producer.setdefault("transaction.timeout.ms", _TRANSACTION_TIMEOUT_MS)
    producer["acks"] = acks if acks != "-1" else "all"
    if not idempotence:
        producer["enable.idempotence"] = "true" if producer["acks"] == "all" else "false"
    # Java's default partitioner (murmur2 of the key; Spark's sink uses it), not librdkafka's
    # CRC32 one: a key lands in the partition a Java producer would choose.
    producer.setdefault("partitioner", "murmur2_random")
    # A task writes in bulk, and its end (commit_transaction, flush) sends what lingers at
    # once, so a longer linger costs a task no latency; it gives fuller batches (several
    # tasks share the broker: half the requests at 20 ms than at librdkafka's 5 ms, measured
    # in benchmarks/spark_sink_harness.py).
    producer.setdefault("linger.ms", _LINGER_MS)
    prefix = opts.get("transactionalidprefix", _DEFAULT_PREFIX)
    if not _IDENT.fullmatch(prefix):
        raise ValueError(f"option 'transactionalIdPrefix'={prefix!r} may hold only letters, "
                         "digits, '.', '_' and '-'")
    write_id = opts.get("writeid")
    if write_id is not None and not _IDENT.fullmatch(write_id):
        raise ValueError(f"option 'writeId'={write_id!r} may hold only letters, digits, '.', "
                         "'_' and '-'")
    raw_batch = opts.get("batchid")
    batch_id = 0
    if raw_batch is not None:
        if write_id is None:
            raise ValueError("option 'batchId' needs option 'writeId' (the streaming query's "
                             "id, e.g. from foreachBatch)")
        try:
            batch_id = int(raw_batch)
        except ValueError:
            batch_id = -1
        if batch_id < 0:
            raise ValueError(f"option 'batchId'={raw_batch!r} must be an integer >= 0")
    topic = opts.get("topic")
    if topic is not None and not topic.strip():
        raise ValueError("option 'topic' must not be empty")
    return SinkOptions(topic=topic, producer=producer, exactly_once=exactly_once,
                       transactional_id_prefix=prefix, write_id=write_id, batch_id=batch_id,
                       write_stats_dir=opts.get("writestatsdir"))


def check_producer_config(options: SinkOptions) -> None:
    """Build (and close) a producer from the settings, so that a setting librdkafka does not
    know, or a bad value, fails on the driver with librdkafka's message."""
    import confluent_kafka

    config: dict[str, Any] = dict(options.producer)
    if options.exactly_once:
        # Checks the transactional settings too; a producer with a transactional id does
        # not connect until init_transactions, which is never called here.
        config["transactional.id"] = f"{options.transactional_id_prefix}-config-check"
    try:
        producer = confluent_kafka.Producer(config)
    except confluent_kafka.KafkaException as exc:
        raise ValueError(f"invalid kafka.* option: {exc.args[0].str()}") from None
    producer.flush(0)
