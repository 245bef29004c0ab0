"""Interop tests against real Kafka client libraries (kafka-python, confluent-kafka), talking
to kafkapy over real sockets on 127.0.0.1."""
