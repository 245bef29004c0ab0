"""``dump-log``'s ``--offsets-decoder`` and ``--transaction-log-decoder``: the coordinators'
records as Kafka 3.9's DumpLogSegments prints them.

What it owns: turning one record's key and value into the ``(key, payload)`` strings Kafka
prints after ``key:`` and ``payload:``. The byte formats are the coordinators' own
(kafkapy.coordinator.group.records, kafkapy.coordinator.transaction.records); nothing here
knows a field layout.

- Offsets (Kafka 3.8+ ``OffsetsMessageParser``): the key as ``{"type":"<key version>",
  "data":{...}}`` and the value as ``{"version":"<value version>","data":{...}}``, where data is
  what Kafka's generated ``*JsonConverter.write`` makes of the record at its version
  (``kafka_json``); in a GroupMetadataValue of protocol type ``consumer`` each member's
  subscription and assignment bytes are replaced by their decoded ConsumerProtocol JSON. A
  null value is ``<DELETE>``; a key version that names no group coordinator record is
  ``Unknown record type <v> at offset <o>, skipping.``; a malformed record ``Error at offset
  <o>, skipping. <reason>``, both with no payload.
- Transactions (3.x ``TransactionLog.formatRecordKeyAndValue``):
  ``transaction_metadata::transactionalId=<id>`` and ``producerId:<p>,producerEpoch:<e>,
  state=<State>,partitions=[t-0,...],txnLastUpdateTimestamp=<ms>,txnTimeoutMs=<ms>``;
  ``<DELETE>`` for a tombstone, ``unknown::version=<v>`` (no payload) for an unknown key.
  Kafka prints the partitions in hash-set order; they are sorted here.

Invariant: pure functions of bytes; a record that does not decode yields Kafka's skip
message, never an exception (except a null key with the offsets decoder, which Kafka refuses:
``DecodeError``).
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

from kafkapy.coordinator.group import records as group_records
from kafkapy.coordinator.record_format import read_body, read_version
from kafkapy.coordinator.transaction import records as txn_records
from kafkapy.protocol.messages.consumer_protocol import ASSIGNMENT, SUBSCRIPTION
from kafkapy.protocol.schema import BYTES, MISSING, UUID, Array, Message, Primitive, Struct

__all__ = ["DecodeError", "format_offsets_record", "format_transaction_record", "kafka_json"]

# TransactionState ids -> names (Kafka's TransactionState case objects).
TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
                      "CompleteAbort", "Dead", "PrepareEpochFence")

_CONSUMER_PROTOCOL_TYPE = "consumer"

# Key version -> (key message, value message), as Kafka's CoordinatorRecordSerde dispatches.
_GROUP_RECORDS: dict[int, tuple[Message, Message]] = {
    0: (group_records.OFFSET_COMMIT_KEY, group_records.OFFSET_COMMIT_VALUE),
    1: (group_records.OFFSET_COMMIT_KEY, group_records.OFFSET_COMMIT_VALUE),
    2: (group_records.GROUP_METADATA_KEY, group_records.GROUP_METADATA_VALUE),
    group_records.CONSUMER_GROUP_METADATA: (
        group_records.CONSUMER_GROUP_KEYS[group_records.CONSUMER_GROUP_METADATA],
        group_records.CONSUMER_GROUP_METADATA_VALUE),
    group_records.CONSUMER_GROUP_PARTITION_METADATA: (
        group_records.CONSUMER_GROUP_KEYS[group_records.CONSUMER_GROUP_PARTITION_METADATA],
        group_records.CONSUMER_GROUP_PARTITION_METADATA_VALUE),
    group_records.CONSUMER_GROUP_MEMBER_METADATA: (
        group_records.CONSUMER_GROUP_KEYS[group_records.CONSUMER_GROUP_MEMBER_METADATA],
        group_records.CONSUMER_GROUP_MEMBER_METADATA_VALUE),
    group_records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: (
        group_records.CONSUMER_GROUP_KEYS[
            group_records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA],
        group_records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    group_records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: (
        group_records.CONSUMER_GROUP_KEYS[group_records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER],
        group_records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    group_records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: (
        group_records.CONSUMER_GROUP_KEYS[
            group_records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT],
        group_records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
}


class DecodeError(Exception):
    """A record the decoder refuses outright (Kafka's tool stops with an exception)."""


def _json_name(name: str) -> str:
    # Kafka's FieldSpec.camelCaseName: the spec's name with its first letter in lower case.
    return name[:1].lower() + name[1:]


def _uuid_text(value: uuid.UUID) -> str:
    # Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding.
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def _value_json(ftype: Primitive | Array | Struct, version: int, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(ftype, Struct):
        return kafka_json(ftype, version, value)
    if isinstance(ftype, Array):
        return [_value_json(ftype.element, version, v) for v in value]
    if ftype is BYTES:
        # Jackson's BinaryNode: standard base64 with padding.
        return base64.b64encode(bytes(value)).decode("ascii")
    if ftype is UUID:
        return _uuid_text(value)
    return value


def kafka_json(struct: Struct, version: int, body: Any) -> dict[str, Any]:
    """``body`` (decoded by kafkapy's codec at ``version``) as Kafka's generated
    ``JsonConverter.write`` makes it: the fields present in ``version`` in declaration order,
    camelCase names, tagged fields only when they differ from their defaults, bytes in base64,
    UUIDs as Kafka prints them."""
    out: dict[str, Any] = {}
    for f in struct.fields:
        if version not in f.versions:
            continue
        value = getattr(body, f.attr)
        if version in f.tagged:
            default = f.default
            if default is MISSING:
                default = f.type.default if isinstance(f.type, Primitive) else []
            if value == default or (isinstance(f.type, Array) and not value and default == []):
                continue
        out[_json_name(f.name)] = _value_json(f.type, version, value)
    return out


def _dumps(obj: Any) -> str:
    # Jackson's ObjectNode.toString: compact, non-ASCII characters as they are.
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _consumer_protocol_json(message: Message, data: str | None) -> Any:
    """A member's subscription or assignment (base64 in the converter's JSON) decoded as
    ConsumerProtocol ``message``; None if it does not decode (Kafka keeps the bytes then)."""
    if data is None:
        return None
    raw = memoryview(base64.b64decode(data))
    try:
        version = read_version(raw, message.name)
        if version not in message.valid:
            return None
        body = read_body(message, version, raw, message.name)
        return kafka_json(message.body, version, body)
    except Exception:   # Kafka swallows any RuntimeException here and keeps the bytes
        return None


def _group_value_json(version: int, body: Any) -> dict[str, Any]:
    out = kafka_json(group_records.GROUP_METADATA_VALUE.body, version, body)
    if out.get("protocolType") == _CONSUMER_PROTOCOL_TYPE:
        for member in out.get("members") or []:
            for name, message in (("subscription", SUBSCRIPTION), ("assignment", ASSIGNMENT)):
                if name in member:
                    decoded = _consumer_protocol_json(message, member[name])
                    if decoded is not None:
                        member[name] = decoded
    return out


def format_offsets_record(offset: int, key: bytes | None, value: bytes | None
                          ) -> tuple[str | None, str | None]:
    """The ``(key, payload)`` Kafka 3.9's offsets decoder prints for a ``__consumer_offsets``
    record at ``offset`` (see the module doc). DecodeError for a record without a key."""
    if key is None:
        raise DecodeError(f"Failed to decode message at offset {offset} using offset topic "
                          f"decoder (message had a missing key)")
    try:
        key_view = memoryview(key)
        key_version = read_version(key_view, "key")
        messages = _GROUP_RECORDS.get(key_version)
        if messages is None:
            return f"Unknown record type {key_version} at offset {offset}, skipping.", None
        key_message, value_message = messages
        key_body = read_body(key_message, key_version, key_view, key_message.name)
        key_text = _dumps({"type": str(key_version),
                           "data": kafka_json(key_message.body, key_version, key_body)})
        if value is None:
            return key_text, "<DELETE>"
        value_view = memoryview(value)
        value_version = read_version(value_view, value_message.name)
        if value_version not in value_message.valid:
            raise ValueError(f"Unknown version {value_version} of {value_message.name}")
        value_body = read_body(value_message, value_version, value_view, value_message.name)
        if value_message is group_records.GROUP_METADATA_VALUE:
            data = _group_value_json(value_version, value_body)
        else:
            data = kafka_json(value_message.body, value_version, value_body)
        return key_text, _dumps({"version": str(value_version), "data": data})
    except Exception as e:      # Kafka: "Error at offset ..., skipping." for any Throwable
        return f"Error at offset {offset}, skipping. {e}", None


def format_transaction_record(key: bytes | None, value: bytes | None
                              ) -> tuple[str | None, str | None]:
    """The ``(key, payload)`` Kafka 3.x's transaction log decoder prints for a
    ``__transaction_state`` record (see the module doc). DecodeError for a record that does
    not decode (Kafka's tool stops with the exception)."""
    if key is None:
        raise DecodeError("transaction log record without a key")
    try:
        txn_key = txn_records.read_key(key)
        if isinstance(txn_key, txn_records.UnknownKey):
            return f"unknown::version={txn_key.version}", None
        key_text = f"transaction_metadata::transactionalId={txn_key.transactional_id}"
        if value is None:
            return key_text, "<DELETE>"
        v = txn_records.read_transaction_log_value(value)
    except Exception as e:
        raise DecodeError(f"cannot decode a transaction log record: {e}") from e
    partitions = ",".join(f"{tp.topic}-{tp.partition}" for tp in sorted(v.topic_partitions))
    return key_text, (f"producerId:{v.producer_id},producerEpoch:{v.producer_epoch},"
                      f"state={TRANSACTION_STATES[v.state]},partitions=[{partitions}],"
                      f"txnLastUpdateTimestamp={v.txn_last_update_timestamp},"
                      f"txnTimeoutMs={v.txn_timeout_ms}")
