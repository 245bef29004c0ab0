"""The controller of a ZooKeeper-mode cluster (Kafka's ``kafka.controller``, 2.8-3.x).

- ``kafka_controller``: ``KafkaController``, the election and every duty of the active
  controller (one event task; broker failure and startup, new topics and partitions, topic
  deletion, AlterPartition, ControlledShutdown, ElectLeaders, reassignment, auto rebalance);
- ``controller_context``: what the active controller knows (Kafka's ``ControllerContext``);
- ``controller_events``: its events and the replies request handlers await;
- ``controller_channel_manager``: connections and senders to the brokers, and the request
  batch of one event (LeaderAndIsr, UpdateMetadata, StopReplica);
- ``partition_leader_election``: the election algorithms (pure functions).
"""
