"""TopicPartition: the name of one partition of one topic (Kafka's
``org.apache.kafka.common.TopicPartition``).

Immutable, hashable and ordered by (topic, partition); ``str()`` is Kafka's ``topic-partition``
spelling, which is also the name of the partition's folder in a log directory.
"""

from __future__ import annotations

import attrs

__all__ = ["TopicPartition"]


# The hash is cached: a TopicPartition is a dict key on every fetch, for every partition of
# the fetch (purgatory watches, partition lookups).
@attrs.frozen(order=True, cache_hash=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"
