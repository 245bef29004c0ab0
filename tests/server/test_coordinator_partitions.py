"""The broker's transaction markers (``BrokerCoordinatorPartitions.write_txn_markers``, the
coordinators' ``TxnMarkerWriter``), through WriteTxnMarkers (27) over a raw socket to a real
broker: a marker from a coordinator elsewhere ends the producer's transaction in each
partition (LSO, aborted transactions for read_committed fetches), and the partition's errors
are Kafka's. The transaction coordinator's own markers take the same path."""

from __future__ import annotations

from typing import Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.log.producer_state import AppendOrigin
from kafkapy.protocol import API_KEYS
from kafkapy.protocol.classes import struct_classes
from kafkapy.protocol.records import build_batch
from kafkapy.testing import BrokerHandle
from tests.clients.client_support import RawClient

REQ = {key: struct_classes(API_KEYS[key].request.body) for key in (1, 27)}
NONE, UNKNOWN_TOPIC_OR_PARTITION, TRANSACTION_COORDINATOR_FENCED = 0, 3, 52
PID, EPOCH = 4242, 3


def open_transaction(broker: BrokerHandle, tp: TopicPartition, count: int) -> None:
    """A transactional batch of producer PID, as if its coordinator had added ``tp``."""
    batch = build_batch([(None, b"v%d" % i, None, 1000) for i in range(count)],
                        producer_id=PID, producer_epoch=EPOCH, base_sequence=0,
                        is_transactional=True)

    def append() -> None:
        broker.server.replica_manager.get_partition(tp).append_records_to_leader(
            batch, -1, AppendOrigin.COORDINATOR)
    broker.call(append)


def markers(client: RawClient, commit: bool, partitions: list[int], coordinator_epoch: int,
            topic: str = "t") -> Any:
    C = REQ[27]
    return client.request(27, 1, C["WriteTxnMarkersRequest"](markers=[C["WritableTxnMarker"](
        producer_id=PID, producer_epoch=EPOCH, transaction_result=commit,
        coordinator_epoch=coordinator_epoch,
        topics=[C["WritableTxnMarkerTopic"](name=topic, partition_indexes=partitions)])]))


def fetch_committed(client: RawClient, partition: int) -> Any:
    C = REQ[1]
    r = client.request(1, 11, C["FetchRequest"](
        replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=1,
        session_id=0, session_epoch=-1, topics=[C["FetchTopic"](topic="t", partitions=[
            C["FetchPartition"](partition=partition, current_leader_epoch=-1, fetch_offset=0,
                                log_start_offset=-1, partition_max_bytes=1 << 20)])],
        forgotten_topics_data=[], rack_id=""))
    return r.responses[0].partitions[0]


def test_markers_end_the_transaction_in_each_partition(kafka_broker: BrokerHandle) -> None:
    kafka_broker.create_topic("t", partitions=2)
    open_transaction(kafka_broker, TopicPartition("t", 0), 3)
    open_transaction(kafka_broker, TopicPartition("t", 1), 2)
    with RawClient(kafka_broker.bootstrap_servers) as c:
        before = fetch_committed(c, 0)
        assert (before.high_watermark, before.last_stable_offset) == (3, 0)
        r = markers(c, False, [0], coordinator_epoch=5)
        assert [(p.partition_index, p.error_code)
                for p in r.markers[0].topics[0].partitions] == [(0, NONE)]
        aborted = fetch_committed(c, 0)
        assert (aborted.high_watermark, aborted.last_stable_offset) == (4, 4)
        assert [(t.producer_id, t.first_offset) for t in aborted.aborted_transactions] == \
            [(PID, 0)]
        # Partition 1 is still open; an older coordinator epoch is fenced there too now
        # (the producer's entry remembers epoch 5), and an unknown partition is reported.
        assert fetch_committed(c, 1).last_stable_offset == 0
        r = markers(c, True, [1, 7], coordinator_epoch=4)
        assert [(p.partition_index, p.error_code)
                for p in r.markers[0].topics[0].partitions] == \
            [(1, NONE), (7, UNKNOWN_TOPIC_OR_PARTITION)]
        committed = fetch_committed(c, 1)
        assert committed.last_stable_offset == committed.high_watermark == 3
        assert list(committed.aborted_transactions) == []
        # Another transaction in partition 0, then a marker from an older coordinator.
        open_transaction(kafka_broker, TopicPartition("t", 0), 1)
        r = markers(c, True, [0], coordinator_epoch=1)
        assert r.markers[0].topics[0].partitions[0].error_code == \
            TRANSACTION_COORDINATOR_FENCED
        assert fetch_committed(c, 0).last_stable_offset == 4


def test_deleting_an_internal_topic_unloads_its_coordinator(kafka_broker: BrokerHandle) -> None:
    """Deleting ``__consumer_offsets`` resigns its partitions: the group coordinator forgets
    what it loaded from the deleted logs (before, the old offsets stayed cached and were
    answered from memory). As in Kafka, the group's requests answer NOT_COORDINATOR until a
    FindCoordinator creates the topic again; the client's retry then starts afresh."""
    import time

    from confluent_kafka import Consumer, KafkaException
    from confluent_kafka import TopicPartition as KTopicPartition
    from confluent_kafka.admin import AdminClient

    kafka_broker.create_topic("t", partitions=1)
    consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers,
                         "group.id": "g", "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[KTopicPartition("t", 0, 5)], asynchronous=False)
        assert kafka_broker.committed_offsets("g") == {("t", 0): 5}
        admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
        admin.delete_topics(["__consumer_offsets"])["__consumer_offsets"].result(30)
        assert kafka_broker.committed_offsets("g") == {}
        deadline = time.monotonic() + 30
        while True:
            try:
                consumer.commit(offsets=[KTopicPartition("t", 0, 7)], asynchronous=False)
                break
            except KafkaException as e:
                assert e.args[0].name() == "NOT_COORDINATOR", e
                assert time.monotonic() < deadline, "the commit never found its coordinator"
                time.sleep(0.1)
        assert kafka_broker.committed_offsets("g") == {("t", 0): 7}
        [committed] = consumer.committed([KTopicPartition("t", 0)], timeout=30)
        assert committed.offset == 7
    finally:
        consumer.close()
