"""The broker: KafkaServer, request handling (KafkaApis and its handlers), replica management,
the delayed produce and fetch operations, the broker side of the coordinators' port and its
ZooKeeper membership."""
