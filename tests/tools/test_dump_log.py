"""``kafkapy dump-log`` end to end: a real broker (``kafkapy.Broker`` in-process) writes the
segment files through real clients (confluent-kafka: keys, null keys and values, headers, the
four compression codecs, an idempotent producer, a transaction committed and one aborted, a
consumer group committing an offset), the broker stops, and the tool runs as a subprocess
(``python -m kafkapy.tools``) on the files it left. The lines asserted are Kafka 3.9's
DumpLogSegments formats; the CRCs are recomputed independently (the ``crc32c`` package)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import crc32c
import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as ClientTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kafkapy
from tests.tools.support import Run, run_tool

ROOT = Path(__file__).resolve().parents[2]
# Near now: a batch timestamped more than segment.ms (7 days) from the segment's first one
# rolls a new segment (Kafka's rule), and the transaction markers carry the broker's clock.
T0 = int(time.time() * 1000) - 60_000
CODECS = ("gzip", "snappy", "lz4", "zstd")
SEGMENT = "00000000000000000000"
GROUP = "dump-group"
TXN_ID = "dump-txn"


def dump(*args: str) -> Run:
    return run_tool("dump-log", *args, timeout=60)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The log directory a broker left after this traffic (then a clean shutdown)."""
    root = tmp_path_factory.mktemp("dump-log")
    settings = {"offsets.topic.num.partitions": "1",
                "transaction.state.log.num.partitions": "1",
                # an offset index entry for every batch
                "log.index.interval.bytes": "1"}
    with kafkapy.Broker(settings, data_dir=root) as broker:
        bootstrap = broker.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_topics(
                [NewTopic(t, 1, 1) for t in ("plain", "comp", "txn")]).values():
            future.result(30)
        # Producer ids are handed out from 0: the idempotent producer gets 0, the
        # transactional one 1.
        idempotent = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                               "linger.ms": 0})
        idempotent.produce("plain", b"v0", key=b"k0", headers=[("h1", b"x"), ("h2", None)],
                           timestamp=T0)
        assert idempotent.flush(30) == 0
        idempotent.produce("plain", None, key=b"tomb", timestamp=T0 + 1)
        assert idempotent.flush(30) == 0
        idempotent.produce("plain", "ünïcode".encode(), timestamp=T0 + 2)
        assert idempotent.flush(30) == 0
        for codec in CODECS:
            # Compressible values: librdkafka sends a batch uncompressed when compression
            # does not make it smaller.
            compressing = Producer({"bootstrap.servers": bootstrap, "compression.type": codec,
                                    "linger.ms": 1000})
            for i in range(3):
                compressing.produce("comp", f"{codec}-{i}-".encode() * 50,
                                    key=f"{codec}{i}".encode(), timestamp=T0 + 10 + i)
            assert compressing.flush(30) == 0
        transactional = Producer({"bootstrap.servers": bootstrap,
                                  "transactional.id": TXN_ID})
        transactional.init_transactions(30)
        transactional.begin_transaction()
        transactional.produce("txn", b"committed", key=b"c", timestamp=T0 + 20)
        transactional.commit_transaction(30)
        transactional.begin_transaction()
        transactional.produce("txn", b"aborted", key=b"a", timestamp=T0 + 21)
        assert transactional.flush(30) == 0
        transactional.abort_transaction(30)
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe(["plain"])
        seen = 0
        deadline = time.monotonic() + 60
        while seen < 3 and time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is not None and message.error() is None:
                seen += 1
        assert seen == 3
        consumer.commit(offsets=[ClientTopicPartition("plain", 0, 3)], asynchronous=False)
        consumer.close()
        del idempotent, compressing, transactional
    yield root
    shutil.rmtree(root, ignore_errors=True)


def seg(data_dir: Path, partition: str, suffix: str) -> Path:
    return data_dir / partition / f"{SEGMENT}{suffix}"


BATCH = re.compile(
    r"baseOffset: (?P<baseOffset>\d+) lastOffset: (?P<lastOffset>\d+) count: (?P<count>\d+) "
    r"baseSequence: (?P<baseSequence>-?\d+) lastSequence: (?P<lastSequence>-?\d+) "
    r"producerId: (?P<producerId>-?\d+) producerEpoch: (?P<producerEpoch>-?\d+) "
    r"partitionLeaderEpoch: (?P<partitionLeaderEpoch>-?\d+) "
    r"isTransactional: (?P<isTransactional>true|false) isControl: (?P<isControl>true|false) "
    r"deleteHorizonMs: OptionalLong.empty position: (?P<position>\d+) "
    r"CreateTime: (?P<maxTimestamp>\d+) size: (?P<size>\d+) magic: 2 "
    r"compresscodec: (?P<codec>none|gzip|snappy|lz4|zstd) crc: (?P<crc>\d+) "
    r"isvalid: (?P<isvalid>true|false)$")


def batches(lines: list[str]) -> list[dict[str, str]]:
    found = []
    for line in lines:
        if line.startswith("baseOffset:"):
            match = BATCH.match(line)
            assert match, line
            found.append(match.groupdict())
    return found


def check_crcs(log: Path, found: list[dict[str, str]]) -> None:
    data = log.read_bytes()
    for b in found:
        start, size = int(b["position"]), int(b["size"])
        # CRC-32C over the batch from its attributes (byte 21) on, as Kafka defines it.
        assert int(b["crc"]) == crc32c.crc32c(data[start + 21:start + size])
    assert sum(int(b["size"]) for b in found) == len(data)


# ----------------------------------------------------------------------------- .log


def test_log_with_data(data_dir: Path) -> None:
    log = seg(data_dir, "plain-0", ".log")
    run = dump("--files", str(log), "--print-data-log")
    assert run.code == 0 and run.err == []
    assert run.out[:2] == [f"Dumping {log}", "Log starting offset: 0"]
    records = [line for line in run.out if line.startswith("|")]
    assert records == [
        f"| offset: 0 CreateTime: {T0} keySize: 2 valueSize: 2 sequence: 0 "
        f"headerKeys: [h1,h2] key: k0 payload: v0",
        f"| offset: 1 CreateTime: {T0 + 1} keySize: 4 valueSize: -1 sequence: 1 "
        f"headerKeys: [] key: tomb",
        f"| offset: 2 CreateTime: {T0 + 2} keySize: -1 valueSize: 9 sequence: 2 "
        f"headerKeys: [] payload: ünïcode",
    ]
    found = batches(run.out)
    assert [(b["baseOffset"], b["lastOffset"], b["count"], b["baseSequence"],
             b["lastSequence"], b["producerId"], b["producerEpoch"], b["isTransactional"],
             b["isControl"], b["maxTimestamp"], b["codec"], b["isvalid"]) for b in found] == [
        (str(i), str(i), "1", str(i), str(i), "0", "0", "false", "false", str(T0 + i),
         "none", "true") for i in range(3)]
    assert [int(b["position"]) for b in found] == \
        [0, int(found[0]["size"]), int(found[0]["size"]) + int(found[1]["size"])]
    check_crcs(log, found)
    # Exactly batch lines and record lines after the two header lines.
    assert len(run.out) == 2 + 3 + 3


def test_shallow_and_deep_iteration(data_dir: Path) -> None:
    log = seg(data_dir, "plain-0", ".log")
    shallow = dump("--files", str(log))
    assert shallow.code == 0
    assert len(batches(shallow.out)) == 3
    assert not any(line.startswith("|") for line in shallow.out)
    deep = dump("--files", str(log), "--deep-iteration")
    records = [line for line in deep.out if line.startswith("|")]
    assert records[0] == (f"| offset: 0 CreateTime: {T0} keySize: 2 valueSize: 2 sequence: 0 "
                          f"headerKeys: [h1,h2]")
    assert len(records) == 3 and not any("payload" in r or "key:" in r for r in records)
    skipped = dump("--files", str(log), "--print-data-log", "--skip-record-metadata")
    # Kafka prints the "| " indent only before metadata or a key: a record with neither is
    # " payload: ..." alone.
    assert [line for line in skipped.out[2:] if not line.startswith("baseOffset")] == [
        "| key: k0 payload: v0", "| key: tomb", " payload: ünïcode"]


def test_compressed_batches_decode(data_dir: Path) -> None:
    log = seg(data_dir, "comp-0", ".log")
    run = dump("--files", str(log), "--print-data-log")
    assert run.code == 0 and run.err == []
    found = batches(run.out)
    assert {b["codec"] for b in found} == set(CODECS)
    check_crcs(log, found)
    # Every record under a batch of codec c is one of c's records, in order.
    codec = None
    payloads: dict[str, list[str]] = {c: [] for c in CODECS}
    for line in run.out[2:]:
        if line.startswith("baseOffset:"):
            codec = BATCH.match(line)["codec"]   # type: ignore[index]
            continue
        match = re.fullmatch(r"\| offset: (\d+) CreateTime: (\d+) keySize: (\d+) "
                             r"valueSize: (\d+) sequence: -1 headerKeys: \[\] "
                             r"key: (\w+) payload: (\S+)", line)
        assert match, line
        assert codec is not None and match[5].startswith(codec)
        payloads[codec].append(match[6])
    for c in CODECS:
        assert payloads[c] == [f"{c}-{i}-" * 50 for i in range(3)]


def test_transaction_markers_and_txnindex(data_dir: Path) -> None:
    log = seg(data_dir, "txn-0", ".log")
    run = dump("--files", f"{log},{seg(data_dir, 'txn-0', '.txnindex')}", "--print-data-log")
    assert run.code == 0 and run.err == []
    found = batches(run.out)
    assert [(b["baseOffset"], b["producerId"], b["isTransactional"], b["isControl"])
            for b in found] == [("0", "1", "true", "false"), ("1", "1", "true", "true"),
                                ("2", "1", "true", "false"), ("3", "1", "true", "true")]
    records = [line for line in run.out if line.startswith("|")]
    assert records[0] == (f"| offset: 0 CreateTime: {T0 + 20} keySize: 1 valueSize: 9 "
                          f"sequence: 0 headerKeys: [] key: c payload: committed")
    assert re.fullmatch(r"\| offset: 1 CreateTime: \d+ keySize: 4 valueSize: 6 sequence: -1 "
                        r"headerKeys: \[\] endTxnMarker: COMMIT coordinatorEpoch: 0",
                        records[1]), records[1]
    assert records[2] == (f"| offset: 2 CreateTime: {T0 + 21} keySize: 1 valueSize: 7 "
                          f"sequence: 1 headerKeys: [] key: a payload: aborted")
    assert re.fullmatch(r"\| offset: 3 CreateTime: \d+ keySize: 4 valueSize: 6 sequence: -1 "
                        r"headerKeys: \[\] endTxnMarker: ABORT coordinatorEpoch: 0",
                        records[3]), records[3]
    txnindex = run.out[run.out.index(f"Dumping {seg(data_dir, 'txn-0', '.txnindex')}") + 1:]
    assert txnindex == ["version: 0 producerId: 1 firstOffset: 2 lastOffset: 3 "
                        "lastStableOffset: 4"]


def test_producer_snapshot(data_dir: Path) -> None:
    [snapshot] = sorted((data_dir / "plain-0").glob("*.snapshot"))
    run = dump("--files", str(snapshot))
    assert run.code == 0 and run.err == []
    assert run.out == [
        f"Dumping {snapshot}",
        f"producerId: 0 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: "
        f"OptionalLong.empty lastTimestamp: {T0 + 2} firstSequence: 2 lastSequence: 2 "
        f"lastOffset: 2 offsetDelta: 0 timestamp: {T0 + 2}"]


def test_offsets_decoder(data_dir: Path) -> None:
    run = dump("--files", str(seg(data_dir, "__consumer_offsets-0", ".log")),
               "--offsets-decoder")
    assert run.code == 0 and run.err == []
    decoded = []
    for line in run.out:
        if line.startswith("|"):
            match = re.search(r" key: (\{.*\}) payload: (\{.*\})$", line)
            assert match, line
            decoded.append((json.loads(match[1]), json.loads(match[2])))
    commits = [(k, v) for k, v in decoded if k["type"] == "1"]
    assert len(commits) == 1
    key, value = commits[0]
    assert key == {"type": "1", "data": {"group": GROUP, "topic": "plain", "partition": 0}}
    assert value["version"] == "3"
    assert value["data"]["offset"] == 3 and value["data"]["metadata"] == ""
    assert list(value["data"]) == ["offset", "leaderEpoch", "metadata", "commitTimestamp"]
    groups = [v for k, v in decoded if k == {"type": "2", "data": {"group": GROUP}}]
    stable = [g for g in groups if g["data"]["members"]]
    assert stable, groups
    member = stable[0]["data"]["members"][0]
    assert stable[0]["data"]["protocolType"] == "consumer"
    assert stable[0]["data"]["generation"] == 1
    assert member["subscription"]["topics"] == ["plain"]
    assert member["assignment"]["assignedPartitions"] == [{"topic": "plain",
                                                           "partitions": [0]}]
    # The consumer left before the broker stopped: the last group record has no members.
    assert groups[-1]["data"]["members"] == []


def test_transaction_log_decoder(data_dir: Path) -> None:
    run = dump("--files", str(seg(data_dir, "__transaction_state-0", ".log")),
               "--transaction-log-decoder")
    assert run.code == 0 and run.err == []
    states = []
    for line in run.out:
        if line.startswith("|"):
            match = re.search(r" key: transaction_metadata::transactionalId=(\S+) payload: "
                              r"producerId:1,producerEpoch:0,state=(\w+),partitions=\[(.*)\],"
                              r"txnLastUpdateTimestamp=\d+,txnTimeoutMs=60000$", line)
            assert match, line
            assert match[1] == TXN_ID
            states.append((match[2], match[3]))
    assert states == [("Empty", ""), ("Ongoing", "txn-0"), ("PrepareCommit", "txn-0"),
                      ("CompleteCommit", ""), ("Ongoing", "txn-0"),
                      ("PrepareAbort", "txn-0"), ("CompleteAbort", "")]


def test_json_output(data_dir: Path) -> None:
    log = seg(data_dir, "plain-0", ".log")
    run = dump("--files", f"{log},{seg(data_dir, 'plain-0', '.index')}", "--print-data-log",
               "--output", "json")
    assert run.code == 0 and run.err == []
    objects = [json.loads(line) for line in run.out]
    assert [o["type"] for o in objects] == ["file", "log", "batch", "record", "batch", "record",
                                            "batch", "record", "file", "index_entry",
                                            "index_entry"]
    records = [o for o in objects if o["type"] == "record"]
    assert records[0] == {"type": "record", "offset": 0, "timestampType": "CreateTime",
                          "timestamp": T0, "keySize": 2, "valueSize": 2, "sequence": 0,
                          "headerKeys": ["h1", "h2"], "key": "k0", "payload": "v0"}
    assert (records[1]["key"], records[1]["payload"]) == ("tomb", None)
    assert (records[2]["key"], records[2]["payload"]) == (None, "ünïcode")
    first = objects[2]
    assert (first["baseOffset"], first["producerId"], first["compresscodec"],
            first["isvalid"], first["deleteHorizonMs"]) == (0, 0, "none", True, None)
    positions = [o["position"] for o in objects if o["type"] == "batch"]
    assert [(o["offset"], o["position"]) for o in objects if o["type"] == "index_entry"] == \
        [(1, positions[1]), (2, positions[2])]


# ----------------------------------------------------------------------------- indexes


def test_offset_and_time_index(data_dir: Path) -> None:
    log = seg(data_dir, "plain-0", ".log")
    positions = [int(b["position"]) for b in batches(dump("--files", str(log)).out)]
    index, time_index = seg(data_dir, "plain-0", ".index"), seg(data_dir, "plain-0",
                                                                ".timeindex")
    run = dump("--files", f"{index},{time_index}")
    assert run.code == 0 and run.err == []
    # The first batch is not indexed (Kafka indexes once index.interval.bytes were written).
    assert run.out == [f"Dumping {index}",
                       f"offset: 1 position: {positions[1]}",
                       f"offset: 2 position: {positions[2]}",
                       f"Dumping {time_index}",
                       f"timestamp: {T0 + 1} offset: 1",
                       f"timestamp: {T0 + 2} offset: 2"]
    verify = dump("--files", f"{index},{time_index}", "--verify-index-only")
    assert verify.code == 0 and verify.err == []
    assert verify.out == [f"Dumping {index}", f"Dumping {time_index}"]
    sane = dump("--files", f"{index},{time_index}", "--index-sanity-check")
    assert sane.out == [f"Dumping {index}", f"{index} passed sanity check.",
                        f"Dumping {time_index}", f"{time_index} passed sanity check."]


def _copy_segment(data_dir: Path, tmp_path: Path) -> Path:
    for suffix in (".log", ".index", ".timeindex"):
        shutil.copy(seg(data_dir, "plain-0", suffix), tmp_path / f"{SEGMENT}{suffix}")
    return tmp_path


def test_corrupted_index_entries_are_found(data_dir: Path, tmp_path: Path) -> None:
    copy = _copy_segment(data_dir, tmp_path)
    index = copy / f"{SEGMENT}.index"
    original = index.read_bytes()
    first_position = struct.unpack_from(">ii", original, 0)[1]
    # Entry 0 says offset 2 is at the position of the batch of offset 1.
    index.write_bytes(struct.pack(">ii", 2, first_position) + original[8:])
    time_index = copy / f"{SEGMENT}.timeindex"
    times = time_index.read_bytes()
    # Entry 1 (offset 2) gets a timestamp the log does not have, below the previous one.
    time_index.write_bytes(times[:12] + struct.pack(">qi", T0 - 5, 2))
    run = dump("--files", f"{index},{time_index}")
    assert run.code == 0
    assert run.out[1] == f"offset: 2 position: {first_position}"
    assert run.out[-1] == f"timestamp: {T0 - 5} offset: 2"
    assert run.err == [f"Mismatches in :{index.absolute()}",
                       "  Index offset: 2, log offset: 1",
                       f"Found timestamp mismatch in :{time_index.absolute()}",
                       f"  Index timestamp: {T0 - 5}, log timestamp: {T0 + 2}",
                       f"Found out of order timestamp in :{time_index.absolute()}",
                       f"  Index timestamp: {T0 - 5}, Previously indexed timestamp: "
                       f"{T0 + 1}"]
    assert index.read_bytes()[8:] == original[8:]     # the tool changed nothing


def test_index_sanity_check_fails_on_a_torn_index(data_dir: Path, tmp_path: Path) -> None:
    copy = _copy_segment(data_dir, tmp_path)
    index = copy / f"{SEGMENT}.index"
    torn = index.read_bytes() + b"\x00\x00\x00"
    index.write_bytes(torn)
    run = dump("--files", str(index), "--index-sanity-check")
    assert run.code == 1
    assert run.err == [f"Index file {index.absolute()} is corrupt, found {len(torn)} bytes "
                       f"which is neither positive nor a multiple of 8"]
    assert index.read_bytes() == torn


def test_damaged_log(data_dir: Path, tmp_path: Path) -> None:
    copy = _copy_segment(data_dir, tmp_path)
    log = copy / f"{SEGMENT}.log"
    data = bytearray(log.read_bytes())
    data[-1] ^= 0xFF                      # the last record's last value byte
    log.write_bytes(bytes(data) + b"garbage!!!")
    run = dump("--files", str(log))
    assert run.code == 0
    assert [b["isvalid"] for b in batches(run.out)] == ["true", "true", "false"]
    assert run.out[-1] == f"Found 10 invalid bytes at the end of {SEGMENT}.log"


# ----------------------------------------------------------------------------- errors


def test_unknown_missing_and_unsupported(data_dir: Path, tmp_path: Path) -> None:
    unknown = tmp_path / f"{SEGMENT}.deleted"
    unknown.write_bytes(b"")
    run = dump("--files", str(unknown))
    # Kafka's tool skips a file of unknown kind with a message and exits 0.
    assert (run.code, run.out, run.err) == (0, [f"Dumping {unknown}"],
                                            [f"Ignoring unknown file {unknown}"])
    checkpoint = data_dir / "plain-0" / "leader-epoch-checkpoint"
    run = dump("--files", str(checkpoint))
    assert run.code == 1 and "has no file suffix" in run.err[0]
    missing = tmp_path / "00000000000000000042.log"
    run = dump("--files", f"{missing},{seg(data_dir, 'plain-0', '.log')}")
    assert run.code == 1
    assert run.out == [f"Dumping {missing}"]       # it stops at the failing file, as Kafka
    assert run.err == [f"Error: {missing} does not exist"]
    run = dump()
    assert run.code == 1 and run.err[0] == 'Missing required argument "[files]"'
    log = str(seg(data_dir, "plain-0", ".log"))
    run = dump("--files", log, "--value-decoder-class", "kafka.serializer.LongDecoder")
    assert run.code == 1 and "not supported" in run.err[0] and run.out == []
    old = dump("--files", log, "--key-decoder-class", "kafka.serializer.StringDecoder")
    assert old.code == 0
    assert old.out[1] == ("kafka.serializer.StringDecoder is deprecated. Please use "
                          "org.apache.kafka.tools.api.StringDecoder instead")
    assert f"| offset: 0 CreateTime: {T0} keySize: 2 valueSize: 2 sequence: 0 " \
           f"headerKeys: [h1,h2] key: k0 payload: v0" in old.out


def test_findings_in_json_and_offsets_not_found(data_dir: Path, tmp_path: Path) -> None:
    copy = _copy_segment(data_dir, tmp_path)
    index = copy / f"{SEGMENT}.index"
    original = index.read_bytes()
    index.write_bytes(struct.pack(">ii", 2, struct.unpack_from(">ii", original, 0)[1]) +
                      original[8:])
    time_index = copy / f"{SEGMENT}.timeindex"
    time_index.write_bytes(struct.pack(">qi", T0, 7))     # no batch ends at offset 7
    run = dump("--files", f"{index},{time_index}", "--output", "json")
    assert run.code == 0 and run.err == []
    objects = [json.loads(line) for line in run.out]
    assert {"type": "index_mismatch", "file": str(index.absolute()), "indexOffset": 2,
            "logOffset": 1} in objects
    assert {"type": "time_index_offset_not_found", "file": str(time_index.absolute()),
            "indexOffset": 7, "logOffset": -1} in objects
    text = dump("--files", str(time_index), "--verify-index-only")
    assert text.out == [f"Dumping {time_index}"]
    assert text.err == ["The following indexed offsets are not found in the log.",
                        "Indexed offset: 7, found log offset: -1"]


def test_non_consecutive_offsets(data_dir: Path, tmp_path: Path) -> None:
    # Offsets 0-2 of one partition followed by offsets 0.. of another: 2 is followed by 0.
    log = tmp_path / f"{SEGMENT}.log"
    log.write_bytes(seg(data_dir, "plain-0", ".log").read_bytes() +
                    seg(data_dir, "comp-0", ".log").read_bytes())
    run = dump("--files", str(log), "--deep-iteration")
    assert run.code == 0
    assert run.err == [f"Non-consecutive offsets in {log.absolute()}", "  2 is followed by 0"]
