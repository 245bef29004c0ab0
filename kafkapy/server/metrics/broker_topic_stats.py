"""BrokerTopicStats: Kafka's ``BrokerTopicMetrics`` meters, per topic and for all topics.

Kafka's ``kafka.server.BrokerTopicStats`` keeps one ``BrokerTopicMetrics`` per topic plus one
without a topic tag (all topics). Its meters (``MessagesInPerSec``, ``BytesInPerSec``, ...)
are exported by the JMX exporter's rule ``kafka.(\\w+)<type=(.+), name=(.+)PerSec\\w*,
(.+)=(.+)><>Count`` as ``kafka_server_brokertopicmetrics_<name>_total{topic="t"}``, and the
all-topics meter as the same name without labels. Here a meter is a plain integer: the
per-second rates of the MBean are what Prometheus's ``rate()`` computes from the count.

Who bumps what (as Kafka's ReplicaManager and KafkaApis do):

- ``produced`` / ``produce_failed``: ``ReplicaManager.append_records``, once per partition
  appended (TotalProduceRequests, MessagesIn, BytesIn) or refused (TotalProduceRequests, and
  FailedProduceRequests unless the error is one Kafka's ``appendToLocalLog`` expects:
  ``PRODUCE_EXPECTED_ERRORS``);
- ``fetched``: the Fetch handler, once per partition in the response (TotalFetchRequests,
  FailedFetchRequests unless the error is one Kafka's ``readFromLocalLog`` expects:
  ``FETCH_EXPECTED_ERRORS``; BytesOut for consumers, ReplicationBytesOut, all topics only,
  for followers).

Invariant: the all-topics counters are the sums of the per-topic ones (ReplicationBytesOut
has no per-topic counter). Runs on the broker's event loop; nothing here is thread-safe (the
scrape reads it on the loop too).
"""

from __future__ import annotations

__all__ = ["FETCH_EXPECTED_ERRORS", "PRODUCE_EXPECTED_ERRORS", "TOPIC_METERS",
           "BrokerTopicStats", "TopicCounters"]

# Error codes Kafka does not count as failed requests (ReplicaManager.appendToLocalLog:
# UnknownTopicOrPartition, NotLeaderOrFollower, RecordTooLarge, RecordBatchTooLarge,
# CorruptRecord, KafkaStorage; readFromLocalLog: UnknownTopicOrPartition, NotLeaderOrFollower,
# ReplicaNotAvailable, KafkaStorage, OffsetOutOfRange, FencedLeaderEpoch, UnknownLeaderEpoch).
PRODUCE_EXPECTED_ERRORS = frozenset({3, 6, 10, 18, 2, 56})
FETCH_EXPECTED_ERRORS = frozenset({3, 6, 9, 56, 1, 74, 75})

# attribute -> the MBean name's stem (JMX exporter: lowercased, "PerSec" dropped, "_total")
TOPIC_METERS: dict[str, str] = {
    "messages_in": "MessagesIn",
    "bytes_in": "BytesIn",
    "bytes_out": "BytesOut",
    "failed_produce_requests": "FailedProduceRequests",
    "failed_fetch_requests": "FailedFetchRequests",
    "total_produce_requests": "TotalProduceRequests",
    "total_fetch_requests": "TotalFetchRequests",
}


class TopicCounters:
    """One topic's (or all topics') counters."""

    __slots__ = ("bytes_in", "bytes_out", "failed_fetch_requests", "failed_produce_requests",
                 "messages_in", "total_fetch_requests", "total_produce_requests")

    def __init__(self) -> None:
        self.messages_in = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.failed_produce_requests = 0
        self.failed_fetch_requests = 0
        self.total_produce_requests = 0
        self.total_fetch_requests = 0

    def as_dict(self) -> dict[str, int]:
        return {attr: getattr(self, attr) for attr in TOPIC_METERS}


class BrokerTopicStats:
    """The per-topic and all-topics counters of one broker."""

    def __init__(self) -> None:
        self.all_topics = TopicCounters()
        self.topics: dict[str, TopicCounters] = {}
        self.replication_bytes_out = 0
        self.replication_bytes_in = 0

    def _topic(self, topic: str) -> TopicCounters:
        counters = self.topics.get(topic)
        if counters is None:
            counters = self.topics[topic] = TopicCounters()
        return counters

    def produced(self, topic: str, messages: int, size: int) -> None:
        """One partition's records appended as leader: ``messages`` records, ``size`` bytes
        of record batches."""
        t, a = self._topic(topic), self.all_topics
        t.total_produce_requests += 1
        a.total_produce_requests += 1
        t.messages_in += messages
        a.messages_in += messages
        t.bytes_in += size
        a.bytes_in += size

    def produce_failed(self, topic: str, error_code: int) -> None:
        """One partition's append refused with ``error_code``."""
        t, a = self._topic(topic), self.all_topics
        t.total_produce_requests += 1
        a.total_produce_requests += 1
        if error_code not in PRODUCE_EXPECTED_ERRORS:
            t.failed_produce_requests += 1
            a.failed_produce_requests += 1

    def fetched(self, topic: str, size: int, error_code: int, *, follower: bool) -> None:
        """One partition of a Fetch response: ``size`` bytes of records sent, ``error_code``
        its error (0: none)."""
        t, a = self._topic(topic), self.all_topics
        t.total_fetch_requests += 1
        a.total_fetch_requests += 1
        if error_code and error_code not in FETCH_EXPECTED_ERRORS:
            t.failed_fetch_requests += 1
            a.failed_fetch_requests += 1
        if follower:
            # Kafka: what a follower fetches counts in ReplicationBytesOut (all topics only).
            self.replication_bytes_out += size
        else:
            t.bytes_out += size
            a.bytes_out += size

    def remove_topic(self, topic: str) -> None:
        """A deleted topic's meters go (Kafka's removeMetrics); the all-topics ones stay."""
        self.topics.pop(topic, None)
