"""Checkpoint files: the small text files that record where a log directory stands.

Theory of operation
-------------------
Kafka keeps per-log-dir offsets in text files of one shape (``CheckpointFile``)::

    0                          <- version
    N                          <- number of entries
    <entry>                    <- N lines, fields separated by single spaces

- ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
  ``replication-offset-checkpoint`` (high watermarks), ``cleaner-offset-checkpoint``: entries
  are ``<topic> <partition> <offset>``  (``OffsetCheckpointFile``).
- ``leader-epoch-checkpoint`` in each partition folder: entries ``<epoch> <start offset>``
  (``LeaderEpochCheckpointFile``).

Writes are atomic and durable, as Kafka's: the content goes to ``<name>.tmp``, which is
fsynced, renamed over ``<name>``, and the directory is fsynced so the rename itself survives a
crash. A reader therefore sees the old file or the new one, never a mix.

Reading is strict: a wrong version, a count that disagrees with the lines, or a malformed line
raises ``CheckpointError`` (KAFKA_STORAGE_ERROR) naming the file and the line. What to do about
it is the caller's decision (Kafka resets a corrupt recovery-point checkpoint and recovers every
segment; it refuses to start on a corrupt leader-epoch checkpoint). A missing file reads as no
entries, as Kafka creates an empty one.

Also here, the other small marker files of a log dir: ``.kafka_cleanshutdown`` and a partition's
``partition.metadata``. These are blocking file operations: the log manager runs them in
``trio.to_thread``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import uuid
from pathlib import Path

import attrs

from kafkapy.common.atomic_file import write_atomically
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import KafkaStorageError

__all__ = [
    "CLEANER_OFFSET_CHECKPOINT",
    "CLEAN_SHUTDOWN_FILE",
    "LEADER_EPOCH_CHECKPOINT",
    "LOG_START_OFFSET_CHECKPOINT",
    "PARTITION_METADATA_FILE",
    "RECOVERY_POINT_CHECKPOINT",
    "REPLICATION_OFFSET_CHECKPOINT",
    "CheckpointError",
    "EpochEntry",
    "read_clean_shutdown",
    "read_leader_epochs",
    "read_offsets",
    "read_partition_metadata",
    "read_small_file",
    "write_atomically",
    "write_clean_shutdown",
    "write_leader_epochs",
    "write_offsets",
    "write_partition_metadata",
]

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
PARTITION_METADATA_FILE = "partition.metadata"

_VERSION = 0
# Kafka splits entry lines on "\s+"; topic names cannot hold white space (legal characters are
# [a-zA-Z0-9._-]), so a line has exactly the fields it should or it is malformed.
_WS = re.compile(r"\s+")


class CheckpointError(KafkaStorageError):
    """A checkpoint or marker file exists but cannot be read as its format says."""


@attrs.frozen
class EpochEntry:
    """From ``start_offset`` on, the log was written under leader epoch ``epoch``."""

    epoch: int
    start_offset: int


# --------------------------------------------------------------------------- the common shape

def read_small_file(path: Path) -> bytes:
    """A small file's bytes in three system calls (open, read, close), where
    ``Path.read_bytes`` makes nine: the broker reads a few such files per partition when it
    loads thousands of logs. Raises OSError (FileNotFoundError) as ``open`` does."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def _text(data: bytes) -> str:
    # What read_text gave: UTF-8 with universal newlines.
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def _read_entries(path: Path, fields: int) -> list[list[str]]:
    try:
        text = _text(read_small_file(path))
    except FileNotFoundError:
        return []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 2:
        raise CheckpointError(f"{path}: truncated: {len(lines)} line(s), no header")
    if lines[0].strip() != str(_VERSION):
        raise CheckpointError(f"{path}: unrecognised version {lines[0]!r}")
    count = _int(path, lines[1].strip(), lines[1])
    entries = lines[2:]
    if count < 0 or count != len(entries):
        raise CheckpointError(f"{path}: expected {count} entries but found {len(entries)}")
    out = []
    for line in entries:
        parts = _WS.split(line.strip())
        if len(parts) != fields:
            raise CheckpointError(f"{path}: malformed line {line!r}")
        out.append(parts)
    return out


def _write_entries(path: Path, lines: list[str]) -> None:
    header = [str(_VERSION), str(len(lines))]
    write_atomically(path, "".join(f"{line}\n" for line in [*header, *lines]))


def _int(path: Path, text: str, line: str) -> int:
    # Java's Integer/Long.parseLong: optional sign, decimal digits, nothing else.
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise CheckpointError(f"{path}: malformed line {line!r}")
    return int(text)


# ------------------------------------------------------------------------ offset checkpoints

def read_offsets(path: Path) -> dict[TopicPartition, int]:
    """Entries of an offset checkpoint file; {} if it does not exist."""
    out: dict[TopicPartition, int] = {}
    for topic, partition, offset in _read_entries(path, 3):
        line = f"{topic} {partition} {offset}"
        tp = TopicPartition(topic, _int(path, partition, line))
        if tp in out:
            raise CheckpointError(f"{path}: {tp} appears twice")
        out[tp] = _int(path, offset, line)
    return out


def write_offsets(path: Path, offsets: dict[TopicPartition, int]) -> None:
    for tp in offsets:
        if not tp.topic or _WS.search(tp.topic):
            raise ValueError(f"topic name {tp.topic!r} cannot be written to a checkpoint")
    _write_entries(path, [f"{tp.topic} {tp.partition} {offset}"
                          for tp, offset in sorted(offsets.items())])


# ------------------------------------------------------------------ leader epoch checkpoint

def read_leader_epochs(path: Path) -> list[EpochEntry]:
    """The epoch entries as stored, in file order; [] if the file does not exist.

    Entries that do not increase are returned as they are: like Kafka's LeaderEpochFileCache,
    the epoch cache assigns them one by one and a later entry supersedes earlier conflicting
    ones. That is the cache's rule, not the file format's.
    """
    return [EpochEntry(_int(path, e, f"{e} {o}"), _int(path, o, f"{e} {o}"))
            for e, o in _read_entries(path, 2)]


def write_leader_epochs(path: Path, entries: list[EpochEntry]) -> None:
    _write_entries(path, [f"{e.epoch} {e.start_offset}" for e in entries])


# ------------------------------------------------------------------------- clean shutdown

def write_clean_shutdown(log_dir: Path, broker_epoch: int = -1) -> None:
    """Mark ``log_dir`` as cleanly shut down: the next start skips recovery."""
    write_atomically(log_dir / CLEAN_SHUTDOWN_FILE,
                     json.dumps({"version": 0, "brokerEpoch": broker_epoch}))


def read_clean_shutdown(log_dir: Path) -> bool:
    """True if the last shutdown of ``log_dir`` was clean. The marker is consumed (deleted) by
    the caller once the logs are loaded, so that a later crash is not mistaken for clean."""
    path = log_dir / CLEAN_SHUTDOWN_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    # Kafka 2.x wrote an empty marker; 3.x+ writes JSON. Either means "clean".
    if text.strip():
        try:
            json.loads(text)
        except ValueError as e:
            raise CheckpointError(f"{path}: not JSON: {text!r}") from e
    return True


# ---------------------------------------------------------------------- partition.metadata

def write_partition_metadata(partition_dir: Path, topic_id: uuid.UUID) -> None:
    write_atomically(partition_dir / PARTITION_METADATA_FILE,
                     f"version: 0\ntopic_id: {_uuid_to_base64(topic_id)}\n")


def read_partition_metadata(partition_dir: Path) -> uuid.UUID | None:
    """The topic id recorded for the partition, or None if there is no file."""
    path = partition_dir / PARTITION_METADATA_FILE
    try:
        text = _text(read_small_file(path))
    except FileNotFoundError:
        return None
    m = re.fullmatch(r"version: 0\ntopic_id: ([A-Za-z0-9_-]{22})\n?", text)
    if m is None:
        raise CheckpointError(f"{path}: malformed: {text!r}")
    return uuid.UUID(bytes=base64.urlsafe_b64decode(m.group(1) + "=="))


def _uuid_to_base64(u: uuid.UUID) -> str:
    # Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding.
    return base64.urlsafe_b64encode(u.bytes).decode("ascii").rstrip("=")
