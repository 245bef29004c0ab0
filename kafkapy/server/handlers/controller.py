"""The APIs only the active controller answers (ZooKeeper mode): ControlledShutdown (7),
AlterPartition (56), and the admin APIs that act on leadership and replica placement.

Served only by a broker with ``zookeeper.connect`` (see ``kafka_apis.CLUSTER_HANDLER_MODULES``);
a broker that is not the controller answers NOT_CONTROLLER, as Kafka's ZooKeeper-mode brokers do.
Not implemented yet: the table is empty.
"""

from __future__ import annotations

from kafkapy.server.request_context import Handler

__all__ = ["HANDLERS"]

HANDLERS: dict[int, Handler] = {}
