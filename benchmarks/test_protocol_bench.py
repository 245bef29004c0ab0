"""Protocol layer speed (pytest-benchmark; run ``pytest benchmarks/ --benchmark-only``).

Targets from issue 2 (reported, never asserted):
- decoding a Produce request that carries 1 MiB in 100 record batches, including the CRC32C
  check of every batch: >= 1 GB/s on one core (record bytes are touched only by the CRC);
- a Metadata response with 1,000 partitions and a Fetch request for 100 partitions, encoded
  and decoded: >= 10x kafka-python 3.0's protocol classes on the same message, same run;
- CRC32C GB/s against the ``crc32c`` package on the same buffer: benchmarks/test_records_bench.py.

Each comparison is a pair of benchmarks in one group, so the report shows both medians side by
side; ``benchmarks/report.py`` prints the ratios.
"""

from __future__ import annotations

import os

import pytest
from kafka.protocol.consumer.fetch import FetchRequest as KpFetchRequest
from kafka.protocol.metadata.metadata import MetadataResponse as KpMetadataResponse

from kafkapy.protocol import API_KEYS, decode, decode_request, encode
from kafkapy.protocol.classes import class_for
from kafkapy.protocol.codec import Request, RequestHeader, encode_request
from kafkapy.protocol.records import build_batch, scan_batches

METADATA = API_KEYS[3].response
FETCH = API_KEYS[1].request
METADATA_VERSION = 12
FETCH_VERSION = 12


def _element(message, *path):
    struct = message.body
    for name in path:
        f = next(f for f in struct.fields if f.name == name)
        struct = getattr(f.type, "element", f.type)
    return class_for(struct)


def metadata_response_1000_partitions():
    broker = _element(METADATA, "Brokers")
    topic = _element(METADATA, "Topics")
    partition = _element(METADATA, "Topics", "Partitions")
    return class_for(METADATA.body)(
        brokers=[broker(node_id=i, host=f"broker-{i}.example.com", port=9092, rack=None)
                 for i in range(3)],
        cluster_id="kafkapy-cluster",
        controller_id=0,
        topics=[
            topic(error_code=0, name=f"topic-{t}", is_internal=False,
                  topic_authorized_operations=-2147483648,
                  partitions=[partition(error_code=0, partition_index=p, leader_id=p % 3,
                                        leader_epoch=5, replica_nodes=[0, 1, 2],
                                        isr_nodes=[0, 1, 2], offline_replicas=[])
                              for p in range(100)])
            for t in range(10)
        ],
    )


def fetch_request_100_partitions():
    topic = _element(FETCH, "Topics")
    partition = _element(FETCH, "Topics", "Partitions")
    return class_for(FETCH.body)(
        replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=52428800, isolation_level=0,
        session_id=0, session_epoch=-1,
        topics=[topic(topic=f"topic-{t}",
                      partitions=[partition(partition=p, current_leader_epoch=5,
                                            fetch_offset=123456789, last_fetched_epoch=-1,
                                            log_start_offset=-1, partition_max_bytes=1048576)
                                  for p in range(10)])
                for t in range(10)],
        forgotten_topics_data=[], rack_id="",
    )


CASES = {
    "metadata-1000-partitions": (METADATA, METADATA_VERSION, metadata_response_1000_partitions,
                                 KpMetadataResponse),
    "fetch-100-partitions": (FETCH, FETCH_VERSION, fetch_request_100_partitions,
                             KpFetchRequest),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("impl", ["kafkapy", "kafka-python"])
def test_decode(benchmark, case, impl):
    message, version, make, kp_class = CASES[case]
    data = encode(message, version, make())
    benchmark.group = f"decode {case}"
    if impl == "kafkapy":
        result = benchmark(decode, message, version, data)
        assert result == make()
    else:
        result = benchmark(kp_class.decode, data, version=version)
        assert result is not None


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("impl", ["kafkapy", "kafka-python"])
def test_encode(benchmark, case, impl):
    message, version, make, kp_class = CASES[case]
    value = make()
    data = encode(message, version, value)
    benchmark.group = f"encode {case}"
    if impl == "kafkapy":
        assert benchmark(encode, message, version, value) == data
    else:
        kp_value = kp_class.decode(data, version=version)
        assert benchmark(kp_value._struct.encode, kp_value, version=version,
                         compact=version >= 9, tagged=version >= 9) == data


def _kafkapy_round_trip(message, version, value):
    return decode(message, version, encode(message, version, value))


def _kafka_python_round_trip(kp_class, kp_value, version):
    flexible = version >= 9
    data = kp_value._struct.encode(kp_value, version=version, compact=flexible, tagged=flexible)
    return kp_class.decode(data, version=version)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("impl", ["kafkapy", "kafka-python"])
def test_round_trip(benchmark, case, impl):
    """Encode then decode the same message: the issue's "encode and decode" as one number."""
    message, version, make, kp_class = CASES[case]
    value = make()
    benchmark.group = f"encode+decode {case}"
    if impl == "kafkapy":
        assert benchmark(_kafkapy_round_trip, message, version, value) == value
    else:
        kp_value = kp_class.decode(encode(message, version, value), version=version)
        assert benchmark(_kafka_python_round_trip, kp_class, kp_value, version) == kp_value


def produce_request_1mib_100_batches() -> bytes:
    batches = []
    for b in range(100):
        # ~10 KiB per batch: 10 records of 1 KiB of incompressible bytes.
        records = [(f"key-{b}-{i}".encode(), os.urandom(1024), [], 1_700_000_000_000 + i)
                   for i in range(10)]
        batches.append(build_batch(records))
    body = b"".join(batches)
    produce = API_KEYS[0].request
    topic = class_for(produce.body.fields[3].type.element)
    partition = class_for(produce.body.fields[3].type.element.fields[2].type.element)
    # 100 batches over 10 partitions: Produce v3+ carries one batch set per partition.
    per = len(batches) // 10
    request_body = class_for(produce.body)(
        transactional_id=None, acks=-1, timeout_ms=30000,
        topic_data=[topic(name="bench", partition_data=[
            partition(index=p, records=b"".join(batches[p * per:(p + 1) * per]))
            for p in range(10)])])
    header = RequestHeader(api_key=0, api_version=9, correlation_id=1, client_id="bench")
    frame = encode_request(Request(header, request_body))
    assert len(body) > 1_000_000
    return frame


def _decode_and_verify(frame: bytes) -> int:
    request = decode_request(frame)
    total = 0
    for topic in request.body.topic_data:
        for partition in topic.partition_data:
            total += scan_batches(partition.records).valid_bytes
    return total


def test_produce_request_decode_with_crc(benchmark):
    frame = produce_request_1mib_100_batches()
    benchmark.group = "produce request 1 MiB / 100 batches: decode + CRC"
    benchmark.extra_info["bytes"] = len(frame)
    total = benchmark(_decode_and_verify, frame)
    assert total > 1_000_000
