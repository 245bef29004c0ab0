"""Checkpoint and marker files: Kafka's exact text format, atomic replacement, strict reading."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import KafkaStorageError
from kafkapy.log.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    CheckpointError,
    EpochEntry,
    read_clean_shutdown,
    read_leader_epochs,
    read_offsets,
    read_partition_metadata,
    write_clean_shutdown,
    write_leader_epochs,
    write_offsets,
    write_partition_metadata,
)

# A replication-offset-checkpoint as a Kafka 3.x broker writes it (format of
# OffsetCheckpointFile: version, count, "topic partition offset" lines, "\n" line ends).
KAFKA_OFFSETS = "0\n3\n__consumer_offsets 17 0\norders 0 1234567890123\norders 1 5\n"
KAFKA_EPOCHS = "0\n2\n0 0\n3 4711\n"


def test_reads_kafka_offsets_file(tmp_path: Path) -> None:
    path = tmp_path / RECOVERY_POINT_CHECKPOINT
    path.write_text(KAFKA_OFFSETS)
    assert read_offsets(path) == {
        TopicPartition("__consumer_offsets", 17): 0,
        TopicPartition("orders", 0): 1234567890123,
        TopicPartition("orders", 1): 5,
    }


def test_writes_exactly_kafkas_bytes(tmp_path: Path) -> None:
    path = tmp_path / RECOVERY_POINT_CHECKPOINT
    write_offsets(path, {TopicPartition("orders", 1): 5, TopicPartition("orders", 0): 1234567890123,
                         TopicPartition("__consumer_offsets", 17): 0})
    assert path.read_text() == KAFKA_OFFSETS
    assert not (tmp_path / (RECOVERY_POINT_CHECKPOINT + ".tmp")).exists()


def test_empty_and_missing(tmp_path: Path) -> None:
    path = tmp_path / RECOVERY_POINT_CHECKPOINT
    assert read_offsets(path) == {}
    write_offsets(path, {})
    assert path.read_text() == "0\n0\n"
    assert read_offsets(path) == {}


def test_leader_epochs_round_trip(tmp_path: Path) -> None:
    path = tmp_path / LEADER_EPOCH_CHECKPOINT
    path.write_text(KAFKA_EPOCHS)
    entries = read_leader_epochs(path)
    assert entries == [EpochEntry(0, 0), EpochEntry(3, 4711)]
    path.unlink()
    write_leader_epochs(path, entries)
    assert path.read_text() == KAFKA_EPOCHS


@pytest.mark.parametrize("text", [
    "",                                   # no header
    "0\n",                                # no count
    "1\n0\n",                             # unknown version
    "0\n2\norders 0 5\n",                 # fewer entries than announced
    "0\n1\norders 0 5\norders 1 6\n",     # more entries than announced
    "0\n1\norders 0\n",                   # missing field
    "0\n1\norders 0 5 9\n",               # extra field
    "0\n1\norders x 5\n",                 # partition not a number
    "0\n1\norders 0 5.0\n",               # offset not an integer
    "0\n1\n\n",                           # blank entry
    "0\nten\n",                           # count not a number
    "0\n-1\n",                            # negative count
    "0\n2\norders 0 5\norders 0 6\n",     # the same partition twice
])
def test_corrupt_offsets_file_is_a_storage_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / RECOVERY_POINT_CHECKPOINT
    path.write_text(text)
    with pytest.raises(CheckpointError) as info:
        read_offsets(path)
    assert isinstance(info.value, KafkaStorageError)
    assert info.value.code == 56
    assert str(path) in str(info.value)


def test_topic_names_that_cannot_be_written_are_refused(tmp_path: Path) -> None:
    path = tmp_path / RECOVERY_POINT_CHECKPOINT
    write_offsets(path, {TopicPartition("a", 0): 1})
    with pytest.raises(ValueError, match="cannot be written"):
        write_offsets(path, {TopicPartition("a b", 0): 1})
    assert read_offsets(path) == {TopicPartition("a", 0): 1}   # the old file is untouched


def test_a_crash_mid_write_leaves_the_old_file(tmp_path: Path) -> None:
    # A real process is killed after it wrote the .tmp file but before the rename: the
    # checkpoint still holds the old entries, and the next write replaces the stale .tmp.
    path = tmp_path / RECOVERY_POINT_CHECKPOINT
    write_offsets(path, {TopicPartition("orders", 0): 1})
    script = f"""
import os
from pathlib import Path
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.common import atomic_file
from kafkapy.log import checkpoints
def crash(src, dst):
    os.kill(os.getpid(), 9)
atomic_file.os.replace = crash
checkpoints.write_offsets(Path({str(path)!r}), {{TopicPartition("orders", 0): 2}})
"""
    proc = subprocess.run([sys.executable, "-c", script], check=False,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert proc.returncode == -9
    assert (tmp_path / (RECOVERY_POINT_CHECKPOINT + ".tmp")).read_text() == "0\n1\norders 0 2\n"
    assert read_offsets(path) == {TopicPartition("orders", 0): 1}
    write_offsets(path, {TopicPartition("orders", 0): 3})
    assert read_offsets(path) == {TopicPartition("orders", 0): 3}


def test_clean_shutdown_marker(tmp_path: Path) -> None:
    assert read_clean_shutdown(tmp_path) is False
    write_clean_shutdown(tmp_path, broker_epoch=42)
    assert (tmp_path / ".kafka_cleanshutdown").read_text() == '{"version": 0, "brokerEpoch": 42}'
    assert read_clean_shutdown(tmp_path) is True
    (tmp_path / ".kafka_cleanshutdown").write_text("")       # Kafka 2.x: an empty marker
    assert read_clean_shutdown(tmp_path) is True
    (tmp_path / ".kafka_cleanshutdown").write_text("{broken")
    with pytest.raises(CheckpointError):
        read_clean_shutdown(tmp_path)


def test_partition_metadata_uses_kafkas_uuid_text(tmp_path: Path) -> None:
    # Kafka's Uuid.toString is URL-safe base64 of the 16 bytes without padding; the expected
    # text was computed outside Python: xxd -r -p | base64 | tr '+/' '-_', "==" dropped.
    topic_id = uuid.UUID("d4f6a3c8-0b53-4a5c-9a56-2f7e8c1d0b9e")
    write_partition_metadata(tmp_path, topic_id)
    assert (tmp_path / "partition.metadata").read_text() == \
        "version: 0\ntopic_id: 1PajyAtTSlyaVi9-jB0Lng\n"
    assert read_partition_metadata(tmp_path) == topic_id
    (tmp_path / "partition.metadata").write_text("version: 1\ntopic_id: x\n")
    with pytest.raises(CheckpointError):
        read_partition_metadata(tmp_path)
    assert read_partition_metadata(tmp_path / "missing") is None
