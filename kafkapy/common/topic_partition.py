"""TopicPartition: the name of one partition of one topic (Kafka's
``org.apache.kafka.common.TopicPartition``).

Immutable, hashable and ordered by (topic, partition); ``str()`` is Kafka's ``topic-partition``
spelling, which is also the name of the partition's folder in a log directory.

A named tuple, so that hashing and comparing one is C code: a TopicPartition is a dict key
several times in every produce and fetch (the partition look-up, the request's entries and
results, the purgatory watches), and an attrs class's ``__hash__`` and ``__eq__`` are Python
calls even with the hash cached (about a tenth of the poll task's Python time on one-record
produce requests). It is a tuple, so it also equals ``(topic, partition)``; nothing mixes
the two as keys.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["TopicPartition"]


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"
