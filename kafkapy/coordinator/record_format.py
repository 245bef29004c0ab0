"""The record format both coordinators' internal topics share: a version, then a body.

Byte layout of every key and every non-null value in ``__consumer_offsets`` (the group
coordinator's, kafkapy.coordinator.group.records) and ``__transaction_state`` (the transaction
coordinator's, kafkapy.coordinator.transaction.records)::

    version  INT16   for a key: which record it is (the loader dispatches on it);
                     for a value: how its body is laid out
    body     ...     the key's or value's schema at that version (Kafka's
                     ``*Key.json`` / ``*Value.json`` data specs, declared with kafkapy's
                     schema language and encoded by the generic codec)

A null value (a tombstone) deletes what its key names; the callers handle it. Like Kafka's
readers, these read the body and ignore any bytes after it.

Theory of operation: this module owns the framing only, not any record's schema: each
coordinator's ``records`` module declares its schemas, the versions it writes and the Python
objects it returns, and builds them on ``versioned`` (write) and ``read_version``,
``read_body`` and ``read_versioned`` (read). A key version a loader does not know becomes an
``UnknownKey``, which the loader skips (as Kafka's loaders do). Pure: no I/O, no state; any
task or thread may call it. Malformed bytes raise CorruptMessageError only.
"""

from __future__ import annotations

from typing import Any

import attrs

from kafkapy import _codec
from kafkapy.errors import CorruptMessageError, InvalidRequestError
from kafkapy.protocol.codec import encode, message_plan
from kafkapy.protocol.schema import Message

__all__ = ["UnknownKey", "read_body", "read_version", "read_versioned", "versioned"]


@attrs.frozen
class UnknownKey:
    """A key of a record type the reading coordinator does not know (the new coordinator's
    consumer, share and streams group records; a later Kafka's transaction records); a
    loader skips such records."""

    version: int


def versioned(version: int, message: Message, body: Any) -> bytes:
    """The INT16 ``version`` followed by ``body`` encoded as ``message`` at that version.

    Raises what the codec raises for a body that does not fit its schema (ValueError,
    OverflowError)."""
    return version.to_bytes(2, "big", signed=True) + encode(message, version, body)


def read_version(view: memoryview, what: str) -> int:
    """The INT16 version a key or value starts with; CorruptMessageError (naming it
    ``what``) if it has fewer than two bytes."""
    if view.nbytes < 2:
        raise CorruptMessageError(f"{what} of {view.nbytes} bytes has no version")
    return int.from_bytes(view[:2], "big", signed=True)


def read_body(message: Message, version: int, view: memoryview, what: str) -> Any:
    """The body after the version, decoded as ``message`` at ``version``; bytes after it are
    ignored. CorruptMessageError for a malformed body."""
    # Not codec.decode: Kafka's readers stop where the body ends and ignore anything after it.
    try:
        body, _end = _codec.decode_struct(message_plan(message, version), view, 2)
    except InvalidRequestError as e:
        raise CorruptMessageError(f"{what} v{version}: {e.message}") from e
    return body


def read_versioned(message: Message, data: bytes | memoryview, what: str | None = None) -> Any:
    """The body of a value of ``message`` in the version it starts with; CorruptMessageError
    for a version Kafka never defined or a malformed body."""
    view = memoryview(data)
    what = what or message.name
    version = read_version(view, what)
    if version not in message.valid:
        raise CorruptMessageError(
            f"{what} has unknown version {version} (known: {message.valid})")
    return read_body(message, version, view, what)
