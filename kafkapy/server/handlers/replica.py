"""The controller's requests to a replica (ZooKeeper mode): LeaderAndIsr (4) and StopReplica (5).

Served only by a broker with ``zookeeper.connect`` (see ``kafka_apis.CLUSTER_HANDLER_MODULES``).
Thin: the ReplicaManager creates the new replicas' logs off the event loop (``create_logs``),
checks the controller and broker epochs, makes leaders and followers
(``become_leader_or_follower``) or stops replicas (``stop_replicas``) and builds the answer at
the request's version.

With an authorizer, both need CLUSTER_ACTION on the cluster (Kafka's
authorizeClusterOperation; else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    StopReplicaRequest,
    StopReplicaResponse,
)
from kafkapy.security.authorizer.acl import AclOperation
from kafkapy.server.auth_helper import authorize_cluster_operation
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "handle_leader_and_isr", "handle_stop_replica"]


async def handle_leader_and_isr(context: RequestContext[LeaderAndIsrRequest]
                                ) -> LeaderAndIsrResponse:
    authorize_cluster_operation(context, AclOperation.CLUSTER_ACTION)
    replica_manager = context.server.replica_manager
    created = await replica_manager.create_logs(context.body)
    try:
        return replica_manager.become_leader_or_follower(context.body, context.api_version)
    finally:
        replica_manager.drop_unused_logs(created)


async def handle_stop_replica(context: RequestContext[StopReplicaRequest]
                              ) -> StopReplicaResponse:
    authorize_cluster_operation(context, AclOperation.CLUSTER_ACTION)
    return context.server.replica_manager.stop_replicas(context.body, context.api_version)


HANDLERS: dict[int, Handler] = {
    ApiKey.LEADER_AND_ISR: handle_leader_and_isr,
    ApiKey.STOP_REPLICA: handle_stop_replica,
}
