"""FileMetadataStore: topics and dynamic configs survive a reopen; the document is replaced
atomically; a corrupt document is refused, never overwritten."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from kafkapy.errors import (
    InvalidPartitionsError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from kafkapy.server.metadata_store import METADATA_FILE, FileMetadataStore, TopicRecord


def test_changes_survive_a_reopen(tmp_path: Path) -> None:
    store = FileMetadataStore(tmp_path)
    a = store.create_topic("a", 3, {"retention.ms": "1000"})
    b = store.create_topic("b", 1, {}, topic_id=uuid.UUID(int=7))
    store.set_partition_count("a", 5)
    store.set_topic_configs("b", {"cleanup.policy": "compact"})
    store.set_broker_configs("", {"log.retention.ms": "5"})
    store.set_broker_configs("1", {"message.max.bytes": "2000000"})
    store.delete_topic("a")
    store.create_topic("a", 2, {})           # re-created: a new id
    again = FileMetadataStore(tmp_path)
    assert dict(again.topics) == dict(store.topics)
    assert again.topics["b"] == TopicRecord("b", uuid.UUID(int=7), 1,
                                            {"cleanup.policy": "compact"})
    assert again.topics["a"].partitions == 2 and again.topics["a"].topic_id != a.topic_id
    assert b.topic_id == uuid.UUID(int=7)
    assert again.broker_configs == {"": {"log.retention.ms": "5"},
                                    "1": {"message.max.bytes": "2000000"}}
    store.set_broker_configs("1", {})
    assert FileMetadataStore(tmp_path).broker_configs == {"": {"log.retention.ms": "5"}}
    assert not (tmp_path / (METADATA_FILE + ".tmp")).exists()


def test_refusals_change_nothing(tmp_path: Path) -> None:
    store = FileMetadataStore(tmp_path)
    store.create_topic("t", 2, {})
    before = (tmp_path / METADATA_FILE).read_bytes()
    with pytest.raises(TopicAlreadyExistsError):
        store.create_topic("t", 4, {})
    with pytest.raises(InvalidPartitionsError):
        store.create_topic("u", 0, {})
    with pytest.raises(InvalidPartitionsError):
        store.set_partition_count("t", 2)
    with pytest.raises(UnknownTopicOrPartitionError):
        store.delete_topic("nope")
    with pytest.raises(UnknownTopicOrPartitionError):
        store.set_topic_configs("nope", {})
    assert (tmp_path / METADATA_FILE).read_bytes() == before
    assert list(store.topics) == ["t"]


def test_a_failed_write_leaves_memory_and_file_as_they_were(tmp_path: Path) -> None:
    store = FileMetadataStore(tmp_path)
    store.create_topic("t", 1, {})
    before = (tmp_path / METADATA_FILE).read_bytes()
    # A directory where the temporary file goes: the write fails.
    (tmp_path / (METADATA_FILE + ".tmp")).mkdir()
    with pytest.raises(OSError):
        store.create_topic("u", 1, {})
    assert list(store.topics) == ["t"]
    assert (tmp_path / METADATA_FILE).read_bytes() == before


@pytest.mark.parametrize("content", ["", "{", "[]", json.dumps({"version": 99}),
                                     json.dumps({"version": 1, "topics": {"t": {}}})])
def test_a_corrupt_document_is_refused(tmp_path: Path, content: str) -> None:
    (tmp_path / METADATA_FILE).write_text(content)
    with pytest.raises(ValueError, match="cannot read the cluster metadata"):
        FileMetadataStore(tmp_path)
    assert (tmp_path / METADATA_FILE).read_text() == content
