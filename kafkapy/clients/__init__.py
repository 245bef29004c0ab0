"""kafkapy as a client of other brokers (Kafka's clients module, the part a broker uses)."""
