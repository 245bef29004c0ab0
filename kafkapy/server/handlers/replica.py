"""The controller's requests to a replica (ZooKeeper mode): LeaderAndIsr (4) and StopReplica (5).

Served only by a broker with ``zookeeper.connect`` (see ``kafka_apis.CLUSTER_HANDLER_MODULES``).
Not implemented yet: the table is empty.
"""

from __future__ import annotations

from kafkapy.server.request_context import Handler

__all__ = ["HANDLERS"]

HANDLERS: dict[int, Handler] = {}
