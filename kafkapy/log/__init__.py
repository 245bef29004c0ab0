"""Kafka's log: segments, indexes, checkpoints and recovery, in Apache Kafka's on-disk format."""
