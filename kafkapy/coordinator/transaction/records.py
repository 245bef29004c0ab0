"""The records of the transaction coordinator in ``__transaction_state``: key and value.

Theory of operation
-------------------
This module owns the byte formats, nothing else: what the transaction coordinator appends to a
``__transaction_state`` partition and what it reads back when it loads one. It is pure (no I/O,
no state) and may be called from any task or thread.

Every key and every value starts with an INT16 version. A null value (a tombstone, handled by
the caller) removes the transactional id the key names. The schemas are Kafka's
(``transaction-coordinator/src/main/resources/common/message/TransactionLogKey.json`` and
``TransactionLogValue.json``; before 4.0 under ``core/src/main/resources/common/message``)::

    key version 0: TransactionLogKey      TransactionalId STRING
    any other key version: UnknownKey (Kafka's loader warns and skips the record)

    TransactionLogValue v0 (non-flexible):
        ProducerId INT64, ProducerEpoch INT16, TransactionTimeoutMs INT32,
        TransactionStatus INT8 (the TransactionState id, 0-7),
        TransactionPartitions [Topic STRING, PartitionIds [INT32]] (nullable),
        TransactionLastUpdateTimestampMs INT64, TransactionStartTimestampMs INT64
    TransactionLogValue v1 (flexible): the same fields with compact strings and arrays
        (UNSIGNED_VARINT length + 1, 0 for a null array), a tagged-field section after each
        partitions entry and at the end of the value, where
            tag 0 PreviousProducerId INT64        default -1
            tag 1 NextProducerId INT64            default -1
            tag 2 ClientTransactionVersion INT16  default 0
        appear only when they differ from their defaults, in tag order.

Which value version Kafka 4.0 writes (``TransactionLog.valueToBytes``): the cluster's finalized
``transaction.version`` decides (``TransactionVersion.transactionLogValueVersion``: v1 from
TV_1 on, v0 under TV_0); the client's own transaction version only fills
ClientTransactionVersion. A classic client (AddPartitionsToTxn v0-3, EndTxn v0-4, which is
what kafkapy serves) is TV_0 to Kafka (``transactionVersionForEndTxn`` /
``transactionVersionForAddPartitionsToTxn``), so its ClientTransactionVersion is the default 0
and is not written. Kafka 4.0 never sets PreviousProducerId or NextProducerId when it writes
(they stay -1 and are not written either); it reads them. kafkapy writes as a TV_1 cluster
does: ``TRANSACTION_LOG_VALUE_VERSION`` = 1, with an empty tagged-field section for classic
clients; ``log_value_version`` gives the rule for other levels. Both versions are read.

Partitions: an Empty transaction is written with a null partitions array (writing Empty with
partitions is refused, as Kafka throws); any other state with an array, empty after a
completion. Topics are written sorted by name and each topic's partitions in ascending order
(Kafka groups by topic in hash order; readers do not care). On reading, an Empty value's
partitions are ignored as Kafka ignores them, and a null array in another state reads as no
partitions (Kafka's loader would fail on it).

Reading ignores bytes after the body, as Kafka's readers do. A TransactionStatus outside 0-7 is
a CorruptMessageError (Kafka's ``TransactionState.fromId`` throws).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.record_format import (
    UnknownKey,
    read_body,
    read_version,
    read_versioned,
    versioned,
)
from kafkapy.errors import CorruptMessageError
from kafkapy.protocol.classes import class_for, struct_classes
from kafkapy.protocol.schema import INT8, INT16, INT32, INT64, STRING, Array, Message, field

__all__ = [
    "TRANSACTION_LOG_KEY_VERSION",
    "TRANSACTION_LOG_VALUE_VERSION",
    "TransactionKey",
    "TransactionLogValue",
    "UnknownKey",
    "log_value_version",
    "read_key",
    "read_transaction_log_value",
    "transaction_log_key",
    "transaction_log_value",
]

TRANSACTION_LOG_KEY = Message.declare(
    "TransactionLogKey",
    [field("TransactionalId", STRING, "0")],
    kind="data", valid="0", flexible="none",
)

TRANSACTION_LOG_VALUE = Message.declare(
    "TransactionLogValue",
    [
        field("ProducerId", INT64),
        # Tagged fields may be declared anywhere: the codec writes them after the body, in
        # tag order. Ignorable, so that a value with them set still writes as v0 (dropped).
        field("PreviousProducerId", INT64, "1+", default=-1, tag=0, ignorable=True),
        field("NextProducerId", INT64, "1+", default=-1, tag=1, ignorable=True),
        field("ProducerEpoch", INT16),
        field("TransactionTimeoutMs", INT32),
        field("TransactionStatus", INT8),
        field("TransactionPartitions", ("PartitionsSchema", [
            field("Topic", STRING),
            field("PartitionIds", Array(INT32)),
        ]), nullable="0+"),
        field("TransactionLastUpdateTimestampMs", INT64),
        field("TransactionStartTimestampMs", INT64),
        field("ClientTransactionVersion", INT16, "1+", default=0, tag=2, ignorable=True),
    ],
    kind="data", valid="0-1", flexible="1+",
)

TRANSACTION_LOG_KEY_VERSION = 0
TRANSACTION_LOG_VALUE_VERSION = 1

_EMPTY_STATE = 0            # TransactionState.EMPTY's id
_STATE_IDS = range(8)       # Empty .. PrepareEpochFence

_KeyBody = class_for(TRANSACTION_LOG_KEY.body)
_ValueBody = class_for(TRANSACTION_LOG_VALUE.body)
_PartitionsBody = struct_classes(TRANSACTION_LOG_VALUE.body)["PartitionsSchema"]


@attrs.frozen
class TransactionKey:
    """The key of a transactional id's record."""

    transactional_id: str


@attrs.frozen
class TransactionLogValue:
    """A transactional id's state as stored (TransactionLogValue). ``state`` is the
    TransactionState id; timestamps are epoch milliseconds (-1: none)."""

    producer_id: int
    producer_epoch: int
    txn_timeout_ms: int
    state: int
    topic_partitions: frozenset[TopicPartition]
    txn_last_update_timestamp: int
    txn_start_timestamp: int
    previous_producer_id: int = -1      # v1 tag 0; never written by Kafka 4.0 or kafkapy
    next_producer_id: int = -1          # v1 tag 1; never written by Kafka 4.0 or kafkapy
    client_transaction_version: int = 0  # v1 tag 2; 0 for classic clients


def log_value_version(transaction_version: int) -> int:
    """The value version a cluster at finalized ``transaction.version`` writes (Kafka's
    ``TransactionVersion.transactionLogValueVersion``): 1 from TV_1 on, else 0."""
    return 1 if transaction_version >= 1 else 0


def transaction_log_key(transactional_id: str) -> bytes:
    """The key of ``transactional_id``'s record (version 0). Raises ValueError for an id
    longer than 32767 UTF-8 bytes."""
    return versioned(TRANSACTION_LOG_KEY_VERSION, TRANSACTION_LOG_KEY,
                     _KeyBody(transactional_id=transactional_id))


def _partitions(tps: Iterable[TopicPartition]) -> list[object]:
    ordered = sorted(tps)
    return [_PartitionsBody(topic=topic, partition_ids=[tp.partition for tp in group])
            for topic, group in groupby(ordered, key=lambda tp: tp.topic)]


def transaction_log_value(value: TransactionLogValue,
                          version: int = TRANSACTION_LOG_VALUE_VERSION) -> bytes:
    """``value`` as TransactionLogValue ``version`` (0 or 1; default 1, see the module).

    Raises ValueError for an Empty state with partitions (Kafka's IllegalStateException), a
    version other than 0 or 1, or a topic name longer than 32767 UTF-8 bytes; OverflowError
    for numbers outside their wire types."""
    if version not in TRANSACTION_LOG_VALUE.valid:
        raise ValueError(f"TransactionLogValue has no version {version}")
    if value.state == _EMPTY_STATE and value.topic_partitions:
        raise ValueError(f"an Empty transaction has no partitions, not "
                         f"{sorted(value.topic_partitions)}")
    body = _ValueBody(
        producer_id=value.producer_id,
        previous_producer_id=value.previous_producer_id,
        next_producer_id=value.next_producer_id,
        producer_epoch=value.producer_epoch,
        transaction_timeout_ms=value.txn_timeout_ms,
        transaction_status=value.state,
        transaction_partitions=None if value.state == _EMPTY_STATE
        else _partitions(value.topic_partitions),
        transaction_last_update_timestamp_ms=value.txn_last_update_timestamp,
        transaction_start_timestamp_ms=value.txn_start_timestamp,
        client_transaction_version=value.client_transaction_version,
    )
    return versioned(version, TRANSACTION_LOG_VALUE, body)


def read_key(data: bytes | memoryview) -> TransactionKey | UnknownKey:
    """Decode a record key: version 0 is a transactional id's, any other an UnknownKey
    (the loader skips it). Raises CorruptMessageError for a key too short for its version or
    a malformed body (truncated, invalid UTF-8, a null id)."""
    view = memoryview(data)
    version = read_version(view, "key")
    if version in TRANSACTION_LOG_KEY.valid:
        body = read_body(TRANSACTION_LOG_KEY, version, view, "transaction log key")
        return TransactionKey(body.transactional_id)
    return UnknownKey(version)


def read_transaction_log_value(data: bytes | memoryview) -> TransactionLogValue:
    """Decode a value of either version (0 or 1). Raises CorruptMessageError for another
    version, a malformed body, or a TransactionStatus that is no TransactionState."""
    v = read_versioned(TRANSACTION_LOG_VALUE, data, "transaction log value")
    if v.transaction_status not in _STATE_IDS:
        raise CorruptMessageError(
            f"transaction log value: unknown transaction state id {v.transaction_status}")
    partitions: frozenset[TopicPartition] = frozenset()
    if v.transaction_status != _EMPTY_STATE and v.transaction_partitions is not None:
        partitions = frozenset(TopicPartition(p.topic, pid)
                               for p in v.transaction_partitions for pid in p.partition_ids)
    return TransactionLogValue(
        producer_id=v.producer_id,
        producer_epoch=v.producer_epoch,
        txn_timeout_ms=v.transaction_timeout_ms,
        state=v.transaction_status,
        topic_partitions=partitions,
        txn_last_update_timestamp=v.transaction_last_update_timestamp_ms,
        txn_start_timestamp=v.transaction_start_timestamp_ms,
        previous_producer_id=v.previous_producer_id,
        next_producer_id=v.next_producer_id,
        client_transaction_version=v.client_transaction_version,
    )
