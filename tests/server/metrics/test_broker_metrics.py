"""The Prometheus endpoint of a real broker, scraped over HTTP after real confluent-kafka
traffic of known size, parsed with prometheus_client's parser; the same values from
``kafkapy.Broker.metrics()``; every metric the Grafana dashboard queries exists.

Traffic (module fixture, once):
- topic ``flushed`` (flush.messages=1: an fsync per append): ``ONE_BY_ONE`` records, each
  in a Produce request of its own (linger.ms 0 and a flush after each);
- topic ``bulk``: ``BULK`` records of ``VALUE`` bytes, batched;
- a consumer group reads ``bulk`` to the end (then long-polls a while) and commits offset
  ``COMMITTED``;
- topic ``txn``: a record in a committed transaction (``txn-done``), one in a transaction left
  open (``txn-open``).
"""

from __future__ import annotations

import socket
import time
import urllib.error
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kafkapy
from tests.server.metrics.support import dashboard_metric_names, names, scrape

ONE_BY_ONE = 20
BULK = 1000
VALUE = 100
COMMITTED = 980
GROUP = "metrics-group"


def _log_bytes(data_dir: Path, topic: str) -> int:
    """The size of a one-partition topic's segment files: the record batches appended."""
    return sum(f.stat().st_size for f in (data_dir / f"{topic}-0").glob("*.log"))


class Traffic:
    def __init__(self, broker: kafkapy.Broker) -> None:
        self.broker = broker
        servers = broker.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": servers})
        futures = admin.create_topics([
            NewTopic("flushed", 1, 1, config={"flush.messages": "1"}),
            NewTopic("bulk", 1, 1)])
        for f in futures.values():
            f.result(timeout=30)
        producer = Producer({"bootstrap.servers": servers, "linger.ms": 0, "acks": 1})
        for i in range(ONE_BY_ONE):
            producer.produce("flushed", f"record {i:04d}".encode())
            assert producer.flush(30) == 0
        batched = Producer({"bootstrap.servers": servers, "linger.ms": 20, "acks": "all"})
        for i in range(BULK):
            batched.produce("bulk", b"v" * VALUE, key=str(i).encode())
        assert batched.flush(30) == 0
        consumer = Consumer({"bootstrap.servers": servers, "group.id": GROUP,
                             "auto.offset.reset": "earliest", "enable.auto.commit": False,
                             "fetch.wait.max.ms": 100})
        consumer.subscribe(["bulk"])
        read = 0
        deadline = time.monotonic() + 60
        while read < BULK and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                read += 1
        assert read == BULK
        # At the end of the log: the next fetches long-poll (parked for fetch.wait.max.ms).
        assert consumer.poll(1.0) is None
        consumer.commit(offsets=[CkTopicPartition("bulk", 0, COMMITTED)], asynchronous=False)
        consumer.close()
        # Two transactional ids: one transaction committed, one left open.
        committed = Producer({"bootstrap.servers": servers, "transactional.id": "txn-done"})
        committed.init_transactions(30)
        committed.begin_transaction()
        committed.produce("txn", b"in a transaction")
        committed.commit_transaction(30)
        self.open_txn = Producer({"bootstrap.servers": servers, "transactional.id": "txn-open",
                                  "transaction.timeout.ms": 300000})
        self.open_txn.init_transactions(30)
        self.open_txn.begin_transaction()
        self.open_txn.produce("txn", b"never committed")
        assert self.open_txn.flush(30) == 0
        metadata = admin.list_topics(timeout=30)
        self.partitions = sum(len(t.partitions) for t in metadata.topics.values())
        self.bulk_bytes = _log_bytes(broker.data_dir, "bulk")
        self.flushed_bytes = _log_bytes(broker.data_dir, "flushed")


@pytest.fixture(scope="module")
def traffic() -> Iterator[Traffic]:
    with kafkapy.Broker(kafkapy_metrics_port=0, kafkapy_metrics_host="127.0.0.1") as broker:
        yield Traffic(broker)


@pytest.fixture(scope="module")
def scraped(traffic: Traffic) -> dict[str, float]:
    server = traffic.broker.server._metrics_server
    assert server is not None
    return scrape(server.port)


def _requests(samples: dict[str, float], api: str) -> float:
    return sum(v for k, v in samples.items()
               if k.startswith("kafka_network_requestmetrics_requests_total{")
               and f'request="{api}"' in k)


def test_broker_topic_metrics_match_the_traffic(traffic: Traffic,
                                                 scraped: dict[str, float]) -> None:
    m = scraped
    assert m['kafka_server_brokertopicmetrics_messagesin_total{topic="bulk"}'] == BULK
    assert m['kafka_server_brokertopicmetrics_messagesin_total{topic="flushed"}'] == ONE_BY_ONE
    # The all-topics series: no topic label. (The coordinator's own appends to
    # __consumer_offsets do not take the produce path: not counted, docs/metrics.md.)
    assert m['kafka_server_brokertopicmetrics_messagesin_total{topic="txn"}'] == 2
    assert m["kafka_server_brokertopicmetrics_messagesin_total"] == BULK + ONE_BY_ONE + 2
    assert m['kafka_server_brokertopicmetrics_bytesin_total{topic="bulk"}'] == \
        traffic.bulk_bytes
    assert m['kafka_server_brokertopicmetrics_bytesin_total{topic="flushed"}'] == \
        traffic.flushed_bytes
    assert traffic.bulk_bytes > BULK * VALUE
    # One Produce request per record for "flushed": one partition append each.
    assert m['kafka_server_brokertopicmetrics_totalproducerequests_total{topic="flushed"}'] \
        == ONE_BY_ONE
    # The consumer read every batch of "bulk" once.
    assert m['kafka_server_brokertopicmetrics_bytesout_total{topic="bulk"}'] == \
        traffic.bulk_bytes
    assert m['kafka_server_brokertopicmetrics_totalfetchrequests_total{topic="bulk"}'] >= 1
    for topic in ("bulk", "flushed"):
        assert m[f'kafka_server_brokertopicmetrics_failedproducerequests_total'
                 f'{{topic="{topic}"}}'] == 0
    assert m["kafka_server_brokertopicmetrics_failedfetchrequests_total"] == 0


def test_request_metrics_count_every_request(scraped: dict[str, float]) -> None:
    m = scraped
    produce = _requests(m, "Produce")
    # ONE_BY_ONE requests for "flushed", at least one for "bulk".
    assert ONE_BY_ONE + 1 <= produce <= ONE_BY_ONE + BULK
    assert _requests(m, "Fetch") >= 1
    # As in Kafka, a Fetch counts as Fetch and as FetchConsumer (no follower here).
    assert _requests(m, "FetchConsumer") == _requests(m, "Fetch")
    assert _requests(m, "FetchFollower") == 0
    assert m['kafka_network_requestmetrics_totaltimems_count{request="FetchConsumer"}'] == \
        _requests(m, "Fetch")
    assert _requests(m, "OffsetCommit") == 1
    assert _requests(m, "CreateTopics") == 1
    for stage in ("totaltimems", "requestqueuetimems", "localtimems", "remotetimems",
                  "responsequeuetimems", "responsesendtimems"):
        name = f"kafka_network_requestmetrics_{stage}"
        assert m[f'{name}_count{{request="Produce"}}'] == produce
        values = [m[f'{name}{{quantile="{q}",request="Produce"}}']
                  for q in ("0.50", "0.75", "0.95", "0.98", "0.99", "0.999")]
        assert values == sorted(values) and values[0] >= 0
    # A request's total time covers its local time.
    assert m['kafka_network_requestmetrics_totaltimems{quantile="0.999",request="Produce"}'] \
        >= m['kafka_network_requestmetrics_localtimems{quantile="0.50",request="Produce"}']
    # acks=all on one replica completes at once; a long-poll Fetch waits (remote time).
    assert m['kafka_network_requestmetrics_remotetimems{quantile="0.999",request="Fetch"}'] > 0


def test_gauges_read_the_broker_state(traffic: Traffic, scraped: dict[str, float]) -> None:
    m = scraped
    assert m["kafka_server_replicamanager_partitioncount"] == traffic.partitions
    assert m["kafka_server_replicamanager_leadercount"] == traffic.partitions
    assert m["kafka_server_replicamanager_underreplicatedpartitions"] == 0
    assert m["kafka_controller_kafkacontroller_activecontrollercount"] == 1
    assert m["kafka_controller_kafkacontroller_offlinepartitionscount"] == 0
    assert m["kafka_network_requestchannel_requestqueuesize"] == 0
    assert 0 <= m["kafka_network_socketserver_networkprocessoravgidlepercent"] <= 1
    # flush.messages=1: every append to "flushed" was fsynced before its answer.
    assert m["kafka_log_logflushstats_logflushrateandtimems_count"] >= ONE_BY_ONE
    assert m["kafka_coordinator_group_groupmetadatamanager_numgroups"] == 1
    assert m["kafka_coordinator_group_groupmetadatamanager_numgroupsempty"] == 1
    assert m["kafka_coordinator_group_groupmetadatamanager_numoffsets"] == 1
    labels = f'consumergroup="{GROUP}",partition="0",topic="bulk"'
    assert m[f"kafka_consumergroup_current_offset{{{labels}}}"] == COMMITTED
    assert m[f"kafka_consumergroup_lag{{{labels}}}"] == BULK - COMMITTED
    txns = {k.split('"')[1]: v for k, v in m.items()
            if k.startswith("kafkapy_coordinator_transactions{")}
    assert txns == {"Empty": 0, "Ongoing": 1, "PrepareCommit": 0, "PrepareAbort": 0,
                    "CompleteCommit": 1, "CompleteAbort": 0, "Dead": 0, "PrepareEpochFence": 0}


def test_python_api_gives_the_same_values(traffic: Traffic,
                                          scraped: dict[str, float]) -> None:
    direct = traffic.broker.metrics()
    compared = 0
    for key, value in scraped.items():
        if any(f"_{c}_total" in key for c in ("messagesin", "bytesin", "totalproducerequests")) \
                or "replicamanager" in key or "consumergroup" in key:
            # Produce counters and state gauges: the produce traffic has ended. (A parked
            # fetch of the closed consumer may still complete: fetch counters may move.)
            assert direct[key] == value, key
            compared += 1
    assert compared >= 10
    assert set(names(scraped)) == set(names(direct))


def test_every_dashboard_metric_is_served(scraped: dict[str, float]) -> None:
    used = dashboard_metric_names()
    assert len(used) >= 20
    assert used - names(scraped) == set()


def test_the_endpoint_is_off_by_default_and_closes_with_the_broker() -> None:
    with kafkapy.Broker() as broker:
        assert broker.server.metrics is None and broker.server._metrics_server is None
        with pytest.raises(RuntimeError, match="records no metrics"):
            broker.metrics()
    with kafkapy.Broker(kafkapy_metrics_port=0, kafkapy_metrics_host="127.0.0.1") as broker:
        server = broker.server._metrics_server
        assert server is not None
        port = server.port
        assert "kafka_server_replicamanager_partitioncount" in names(scrape(port))
    with pytest.raises((urllib.error.URLError, ConnectionError)), \
            socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


def test_enabled_without_a_port_records_for_python_only() -> None:
    with kafkapy.Broker(kafkapy_metrics_enabled=True) as broker:
        assert broker.server._metrics_server is None
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
        producer.produce("solo", b"x")
        assert producer.flush(30) == 0
        assert broker.metrics()['kafka_server_brokertopicmetrics_messagesin_total'
                                '{topic="solo"}'] == 1


def test_response_send_time_lasts_until_a_slow_reader_has_the_answer() -> None:
    """ResponseSendTimeMs (Kafka's: the response dequeued -> its send completed) of a Fetch
    answer of several MB that the client reads a second late is about that second: the
    selector's send completing counts, not the answer handed to it."""
    from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse

    late_s = 1.0
    with kafkapy.Broker(kafkapy_metrics_enabled=True) as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers,
                             "linger.ms": 50})
        for _ in range(8_000):
            producer.produce("big", b"v" * 1000)
        assert producer.flush(60) == 0
        part = FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=0,
                                                      partition_max_bytes=16 << 20)
        request = FetchRequest(version=4, replica_id=-1, max_wait_ms=0, min_bytes=1,
                               max_bytes=16 << 20, isolation_level=0,
                               topics=[FetchRequest.FetchTopic(topic="big",
                                                               partitions=[part])])
        request.with_header(correlation_id=7, client_id="slow-reader")
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        with socket.socket() as sock:
            # a small receive buffer: most of the ~8 MB answer waits in the broker's send
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            sock.settimeout(30)
            sock.connect((host, int(port)))
            sock.sendall(request.encode(header=True, framed=True))
            time.sleep(late_s)
            size = int.from_bytes(sock.recv(4, socket.MSG_WAITALL), "big")
            frame = bytearray()
            while len(frame) < size:
                chunk = sock.recv(min(1 << 20, size - len(frame)))
                assert chunk, "the broker closed the connection"
                frame += chunk
        answer = FetchResponse.decode(bytes(frame), version=4, header=True)
        [[partition]] = [t.partitions for t in answer.responses]
        assert partition.error_code == 0 and len(partition.records) > 4 << 20
        name = "kafka_network_requestmetrics_responsesendtimems"

        def send_times() -> tuple[float, float]:
            m = broker.metrics()
            return (m[f'{name}_count{{request="FetchConsumer"}}'],
                    m[f'{name}{{request="FetchConsumer",quantile="0.999"}}'])
        # the metrics are recorded by the connection's task once the send completes
        deadline = time.monotonic() + 30
        while send_times()[0] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        count, slowest = send_times()
        assert count == 1
        assert late_s * 1000 * 0.8 <= slowest <= 30_000, slowest
