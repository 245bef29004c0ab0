"""UpdateMetadata (6): the controller's view of the cluster (live brokers, every partition's
leader, replicas and ISR), which feeds this broker's metadata cache (ZooKeeper mode).

Served only by a broker with ``zookeeper.connect`` (see ``kafka_apis.CLUSTER_HANDLER_MODULES``).
Not implemented yet: the table is empty.
"""

from __future__ import annotations

from kafkapy.server.request_context import Handler

__all__ = ["HANDLERS"]

HANDLERS: dict[int, Handler] = {}
