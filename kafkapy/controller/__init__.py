"""The controller of a ZooKeeper-mode cluster (Kafka's ``kafka.controller``, 2.8-3.x): so far
its election (``kafka_controller``)."""
