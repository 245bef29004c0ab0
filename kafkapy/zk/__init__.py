"""kafkapy and ZooKeeper, as Kafka 2.8-3.x uses it in ZooKeeper mode: the znodes' paths and
JSON formats (``zk_data``) and a real ZooKeeper to run beside brokers in tests and local
clusters (``zookeeper_server``).

Of kafkapy this package imports only ``common`` and ``errors``.
"""
