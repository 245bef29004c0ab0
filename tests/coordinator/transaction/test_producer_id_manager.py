"""Producer ids (kafkapy.coordinator.transaction.producer_id_manager) and the durable block
counter behind them (FileMetadataStore.allocate_producer_id_block), on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkapy.coordinator.transaction.producer_id_manager import (
    PRODUCER_ID_BLOCK_SIZE,
    ProducerIdManager,
)
from kafkapy.errors import UnknownServerError
from kafkapy.server.metadata_store import METADATA_FILE, FileMetadataStore

MAX = 2**63 - 1


def test_blocks_follow_each_other_from_0(tmp_path: Path) -> None:
    store = FileMetadataStore(tmp_path)
    assert [store.allocate_producer_id_block(n) for n in (1000, 1, 500)] == [0, 1000, 1001]
    assert json.loads((tmp_path / METADATA_FILE).read_text())["next_producer_id"] == 1501


def test_the_counter_survives_a_reopen(tmp_path: Path) -> None:
    FileMetadataStore(tmp_path).allocate_producer_id_block(1000)
    assert FileMetadataStore(tmp_path).allocate_producer_id_block(1000) == 1000


def test_a_document_without_the_counter_starts_at_0(tmp_path: Path) -> None:
    # A document written before producer ids existed (topics survive, ids start afresh).
    store = FileMetadataStore(tmp_path)
    store.create_topic("t", 1, {})
    doc = json.loads((tmp_path / METADATA_FILE).read_text())
    del doc["next_producer_id"]
    (tmp_path / METADATA_FILE).write_text(json.dumps(doc))
    reopened = FileMetadataStore(tmp_path)
    assert set(reopened.topics) == {"t"}
    assert reopened.allocate_producer_id_block(10) == 0
    # Other changes keep the counter.
    reopened.create_topic("u", 1, {})
    assert FileMetadataStore(tmp_path).allocate_producer_id_block(1) == 10


@pytest.mark.parametrize("bad", ['"12"', "-1", "1.5", "true"])
def test_a_bad_counter_is_refused(tmp_path: Path, bad: str) -> None:
    FileMetadataStore(tmp_path).allocate_producer_id_block(1)
    doc = (tmp_path / METADATA_FILE).read_text().replace('"next_producer_id": 1',
                                                          f'"next_producer_id": {bad}')
    (tmp_path / METADATA_FILE).write_text(doc)
    with pytest.raises(ValueError, match="next_producer_id"):
        FileMetadataStore(tmp_path)


@pytest.mark.parametrize("size", [0, -5])
def test_blocks_have_ids(tmp_path: Path, size: int) -> None:
    with pytest.raises(ValueError):
        FileMetadataStore(tmp_path).allocate_producer_id_block(size)
    with pytest.raises(ValueError):
        ProducerIdManager(FileMetadataStore(tmp_path), block_size=size)


def test_the_ids_run_out_at_int64(tmp_path: Path) -> None:
    FileMetadataStore(tmp_path).allocate_producer_id_block(1)
    doc = json.loads((tmp_path / METADATA_FILE).read_text())
    doc["next_producer_id"] = MAX - 9
    (tmp_path / METADATA_FILE).write_text(json.dumps(doc))
    store = FileMetadataStore(tmp_path)
    with pytest.raises(UnknownServerError, match="exhausted"):
        store.allocate_producer_id_block(11)
    assert store.allocate_producer_id_block(10) == MAX - 9      # the last id is MAX
    with pytest.raises(UnknownServerError):
        store.allocate_producer_id_block(1)


def test_a_failed_write_reserves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    store = FileMetadataStore(tmp_path)
    store.allocate_producer_id_block(5)

    def fail() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "_write", fail)
    with pytest.raises(OSError):
        store.allocate_producer_id_block(5)
    monkeypatch.undo()
    assert store.allocate_producer_id_block(5) == 5
    assert FileMetadataStore(tmp_path).allocate_producer_id_block(1) == 10


def test_manager_ids_never_repeat_across_reopens(tmp_path: Path) -> None:
    first = ProducerIdManager(FileMetadataStore(tmp_path))
    assert first.block_size == PRODUCER_ID_BLOCK_SIZE == 1000
    ids = [first.generate_producer_id() for _ in range(1500)]
    assert ids == list(range(1500))                     # two blocks, handed out in order
    # A restart: the rest of the second block is lost, the ids stay unique.
    second = ProducerIdManager(FileMetadataStore(tmp_path))
    more = [second.generate_producer_id() for _ in range(1001)]
    assert more[0] == 2000 and more[-1] == 3000
    third = ProducerIdManager(FileMetadataStore(tmp_path), block_size=3)
    last = [third.generate_producer_id() for _ in range(4)]
    assert last == [4000, 4001, 4002, 4003]
    everything = ids + more + last
    assert len(set(everything)) == len(everything)


def test_manager_reserves_a_block_only_when_needed(tmp_path: Path) -> None:
    store = FileMetadataStore(tmp_path)
    manager = ProducerIdManager(store, block_size=2)
    assert store.allocate_producer_id_block(1) == 0      # nothing reserved before the first id
    assert [manager.generate_producer_id() for _ in range(3)] == [1, 2, 3]
    assert store.allocate_producer_id_block(1) == 5


def test_manager_retries_after_a_failed_reservation(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    store = FileMetadataStore(tmp_path)
    manager = ProducerIdManager(store, block_size=1)
    assert manager.generate_producer_id() == 0

    def fail() -> None:
        raise OSError(5, "I/O error")

    monkeypatch.setattr(store, "_write", fail)
    with pytest.raises(OSError):
        manager.generate_producer_id()
    monkeypatch.undo()
    assert manager.generate_producer_id() == 1
