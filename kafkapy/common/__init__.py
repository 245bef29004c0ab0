"""What every layer of the broker shares, below all of them (Kafka's ``org.apache.kafka.common``
and ``server-common``): the ``TopicPartition`` name of a log and the purgatory of delayed
operations that ReplicaManager and the coordinators both use, neither owning it.

Nothing here imports another kafkapy package except ``errors``.
"""
