"""``pipelines/topic_totals.py``: a topic in (``kafkapy-log``), per-key totals out to another
topic (``kafkapy``), streaming, restarted mid-way, each result written once.

The job runs in the shared session: ``main(--available-now)`` over the first records, then,
from the same checkpoint, a ``processingTime`` query over more records stopped mid-way, then
the checkpoint is left as a driver that died after its tasks committed a micro-batch (its
commit file removed), then ``--available-now`` finishes. The oracle is computed in Python
from what a read_committed consumer reads of the input; the output, read_committed, must hold
every key's successive totals once each (``records`` never repeated, and rising in offset
order for a keyed record's partition) and end at the oracle's totals.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

from kafkapy.testing import BrokerHandle
from tests.spark.conftest import SPARK_INTEGRATION, consume, flush, producer, wait_for_checkpoint

TIMEOUT = 90


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "kafkapy_pipeline_topic_totals", SPARK_INTEGRATION / "pipelines" / "topic_totals.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


topic_totals = _load()


def _produce(broker: BrokerHandle, start: int, stop: int) -> None:
    p = producer(broker)
    for i in range(start, stop):
        key = None if i % 13 == 0 else f"acct-{i % 9}".encode()
        value = (None if i % 11 == 0 else b"n/a" if i % 7 == 0
                 else f"{i % 50}.25".encode())
        p.produce("tt-in", value, key, partition=i % 2)
    flush(p)
    wait_for_checkpoint(broker, ["tt-in"])


def _expected(broker: BrokerHandle) -> dict[bytes | None, dict[str, Any]]:
    out: dict[bytes | None, dict[str, Any]] = {}
    for r in consume(broker, "tt-in", isolation="read_committed"):
        t = out.setdefault(r[3], {"records": 0, "numeric_records": 0, "text_records": 0,
                                  "tombstones": 0, "amount_sum": 0.0, "amount_max": None})
        t["records"] += 1
        if r[4] is None:
            t["tombstones"] += 1
        elif r[4] == b"n/a":
            t["text_records"] += 1
        else:
            amount = float(r[4])
            t["numeric_records"] += 1
            t["amount_sum"] += amount
            t["amount_max"] = amount if t["amount_max"] is None else max(t["amount_max"],
                                                                          amount)
    return out


def _args(broker: BrokerHandle, checkpoint: Path, *extra: str) -> list[str]:
    return [str(broker.data_dir), "tt-in", "tt-out", "--bootstrap-servers",
            broker.bootstrap_servers, "--checkpoint", str(checkpoint),
            "--max-offsets-per-trigger", "400", "--state-partitions", "2",
            "--producer-option", "compression.type=lz4", *extra]


def test_restarted_mid_way_the_output_holds_each_result_once(spark: Any, broker: BrokerHandle,
                                                             tmp_path: Path) -> None:
    broker.create_topic("tt-in", 2)
    broker.create_topic("tt-out", 2)
    ckpt = tmp_path / "ckpt"
    _produce(broker, 0, 1200)
    assert topic_totals.main(_args(broker, ckpt, "--available-now"), spark=spark) == 0
    _produce(broker, 1200, 2400)
    query = topic_totals.start(spark, topic_totals.build_parser().parse_args(
        _args(broker, ckpt, "--trigger-interval", "200 milliseconds")))
    deadline = time.monotonic() + TIMEOUT
    while (query.lastProgress or {}).get("batchId", -1) < 3:
        assert time.monotonic() < deadline and query.isActive, query.exception()
        time.sleep(0.05)
    query.stop()                                       # mid-way: 2400 records need 6 batches
    commits = sorted(int(p.name) for p in (ckpt / "commits").iterdir() if p.name.isdigit())
    assert commits[-1] < 5, commits
    # As if the driver died after the tasks committed this micro-batch, before Spark did.
    # Its checksum too: Hadoop's local file system refuses to write a commit over a stale
    # .crc ("Multiple streaming queries are concurrently using ..."), which would fail the
    # restart whenever it re-runs this batch rather than a later, uncommitted one.
    (ckpt / "commits" / str(commits[-1])).unlink()
    (ckpt / "commits" / f".{commits[-1]}.crc").unlink(missing_ok=True)
    assert topic_totals.main(_args(broker, ckpt, "--available-now"), spark=spark) == 0

    expected = _expected(broker)
    updates: dict[bytes | None, list[dict[str, Any]]] = defaultdict(list)
    for r in consume(broker, "tt-out", isolation="read_committed"):   # offset order
        assert r[7] == [("source", b"tt-in")]
        updates[r[3]].append(json.loads(r[4]))
    assert set(updates) == set(expected)
    for key, seq in updates.items():
        counts = [u["records"] for u in seq]
        assert len(counts) == len(set(counts)), f"{key!r}: a total written twice: {counts}"
        if key is not None:       # one partition (murmur2 of the key): in offset order
            assert counts == sorted(counts), f"{key!r}: {counts}"
        # (null keys go to a random partition each, as with Java's partitioner)
        last = max(seq, key=lambda u: u["records"])
        want = expected[key]
        assert {k: last[k] for k in ("records", "numeric_records", "text_records",
                                     "tombstones")} == {k: want[k] for k in (
            "records", "numeric_records", "text_records", "tombstones")}
        assert abs(last["amount_sum"] - want["amount_sum"]) < 1e-6
        assert last["amount_max"] == want["amount_max"]
    # Restarted twice and replayed once, the job still wrote more than one update per key.
    assert all(len(seq) >= 3 for seq in updates.values())
