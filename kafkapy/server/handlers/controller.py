"""The APIs only the active controller answers (ZooKeeper mode): ControlledShutdown (7),
AlterPartition (56), ElectLeaders (43), AlterPartitionReassignments (45) and
ListPartitionReassignments (46).

Served only by a broker with ``zookeeper.connect`` (see ``kafka_apis.CLUSTER_HANDLER_MODULES``).
Each hands the request to the controller's event queue (``server.controller``) and answers
what the controller decided; a broker that is not the active controller (or stops being it
while the request waits) answers NOT_CONTROLLER, as Kafka's ZooKeeper-mode brokers do.

With an authorizer (Kafka's checks): AlterPartition and ControlledShutdown need
CLUSTER_ACTION, ElectLeaders and AlterPartitionReassignments ALTER,
ListPartitionReassignments DESCRIBE on the cluster (else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.kafka_controller import KafkaController
from kafkapy.errors import KafkaError, NotControllerError, RequestTimedOutError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    AlterPartitionRequest,
    AlterPartitionResponse,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    ElectLeadersPartitionResult,
    ElectLeadersReplicaElectionResult,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from kafkapy.security.authorizer.acl import AclOperation
from kafkapy.server.auth_helper import authorize_cluster_operation
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS"]


def _active_controller(context: RequestContext[Any]) -> KafkaController | None:
    controller = context.server.controller
    return controller if controller is not None and controller.active else None


async def handle_alter_partition(context: RequestContext[AlterPartitionRequest]
                                 ) -> AlterPartitionResponse:
    authorize_cluster_operation(context, AclOperation.CLUSTER_ACTION)
    controller = _active_controller(context)
    if controller is not None:
        try:
            return await controller.alter_partition(context.body, context.api_version)
        except KafkaError as e:
            return AlterPartitionResponse(error_code=e.code)
    return AlterPartitionResponse(error_code=NotControllerError.code)


async def handle_controlled_shutdown(context: RequestContext[ControlledShutdownRequest]
                                     ) -> ControlledShutdownResponse:
    authorize_cluster_operation(context, AclOperation.CLUSTER_ACTION)
    controller = _active_controller(context)
    if controller is not None:
        try:
            return await controller.controlled_shutdown(context.body.broker_id,
                                                        context.body.broker_epoch)
        except KafkaError as e:
            return ControlledShutdownResponse(error_code=e.code)
    return ControlledShutdownResponse(error_code=NotControllerError.code)


async def handle_elect_leaders(context: RequestContext[ElectLeadersRequest]
                               ) -> ElectLeadersResponse:
    """Kafka's handleElectLeaders: per partition NONE or its error; with null partitions
    (all of them) the partitions that needed no election are left out of the answer."""
    authorize_cluster_operation(context, AclOperation.ALTER)
    body = context.body
    everything = body.topic_partitions is None
    asked = None if body.topic_partitions is None else [
        TopicPartition(t.topic, p) for t in body.topic_partitions for p in t.partition_id]
    controller = _active_controller(context)
    results: dict[TopicPartition, KafkaError | None] = {}
    top = 0
    if controller is None:
        top = NotControllerError.code
        results = {tp: NotControllerError() for tp in asked or ()}
    else:
        election_type = body.election_type if context.api_version >= 1 else 0
        try:
            elected = await controller.elect_leaders(election_type, asked)
        except KafkaError as e:
            top = e.code
            results = {tp: e for tp in asked or ()}
        else:
            results = await _wait_for_leaders(context, elected, body.timeout_ms)
    response = ElectLeadersResponse(error_code=top)
    by_topic: dict[str, ElectLeadersReplicaElectionResult] = {}
    for tp, error in results.items():
        if everything and error is not None and error.name == "ELECTION_NOT_NEEDED":
            continue
        topic = by_topic.get(tp.topic)
        if topic is None:
            topic = by_topic[tp.topic] = ElectLeadersReplicaElectionResult(topic=tp.topic)
            response.replica_election_results.append(topic)
        topic.partition_result.append(ElectLeadersPartitionResult(
            partition_id=tp.partition, error_code=0 if error is None else error.code,
            error_message=None if error is None else error.message))
    return response


async def _wait_for_leaders(context: RequestContext[ElectLeadersRequest],
                            elected: dict[TopicPartition, KafkaError | int], timeout_ms: int
                            ) -> dict[TopicPartition, KafkaError | None]:
    """Kafka's DelayedElectLeader: the answer waits until this broker's metadata names each
    elected leader (the controller's UpdateMetadata reached it), ``timeout_ms`` at most;
    the partitions still waiting then answer REQUEST_TIMED_OUT, as Kafka's do."""
    cache = context.server.metadata_cache
    leaders = {tp: r for tp, r in elected.items() if isinstance(r, int)}

    def known(tp: TopicPartition) -> bool:
        info = cache.partition_info(tp)
        return info is not None and info.leader == leaders[tp]

    await context.server.admin.wait_for(lambda: all(known(tp) for tp in leaders), timeout_ms)
    return {tp: (r if not isinstance(r, int) else None if known(tp) else
                 RequestTimedOutError(f"the election of {tp} was written, but leader {r} was "
                                      f"not known here within {timeout_ms} ms"))
            for tp, r in elected.items()}


def _api_message(error: KafkaError | None) -> str | None:
    return None if error is None or error.message == error.description else error.message


async def handle_alter_partition_reassignments(
        context: RequestContext[AlterPartitionReassignmentsRequest]
) -> AlterPartitionReassignmentsResponse:
    """Answered once each reassignment has started (or was refused), per partition."""
    authorize_cluster_operation(context, AclOperation.ALTER)
    controller = _active_controller(context)
    if controller is None:
        return AlterPartitionReassignmentsResponse(error_code=NotControllerError.code)
    targets: dict[TopicPartition, tuple[int, ...] | None] = {}
    for asked in context.body.topics:
        for p in asked.partitions:
            targets[TopicPartition(asked.name, p.partition_index)] = \
                None if p.replicas is None else tuple(p.replicas)
    try:
        results = await controller.alter_reassignments(targets)
    except KafkaError as e:
        return AlterPartitionReassignmentsResponse(error_code=e.code,
                                                   error_message=_api_message(e))
    response = AlterPartitionReassignmentsResponse()
    by_topic: dict[str, ReassignableTopicResponse] = {}
    for tp in targets:
        error = results.get(tp)
        topic = by_topic.get(tp.topic)
        if topic is None:
            topic = by_topic[tp.topic] = ReassignableTopicResponse(name=tp.topic)
            response.responses.append(topic)
        topic.partitions.append(ReassignablePartitionResponse(
            partition_index=tp.partition, error_code=0 if error is None else error.code,
            error_message=_api_message(error)))
    return response


async def handle_list_partition_reassignments(
        context: RequestContext[ListPartitionReassignmentsRequest]
) -> ListPartitionReassignmentsResponse:
    authorize_cluster_operation(context, AclOperation.DESCRIBE)
    controller = _active_controller(context)
    if controller is None:
        return ListPartitionReassignmentsResponse(error_code=NotControllerError.code)
    asked = None if context.body.topics is None else [
        TopicPartition(t.name, p) for t in context.body.topics for p in t.partition_indexes]
    try:
        ongoing = controller.list_reassignments(asked)
    except KafkaError as e:
        return ListPartitionReassignmentsResponse(error_code=e.code)
    response = ListPartitionReassignmentsResponse()
    by_topic: dict[str, OngoingTopicReassignment] = {}
    for tp, assignment in sorted(ongoing.items()):
        topic = by_topic.get(tp.topic)
        if topic is None:
            topic = by_topic[tp.topic] = OngoingTopicReassignment(name=tp.topic)
            response.topics.append(topic)
        topic.partitions.append(OngoingPartitionReassignment(
            partition_index=tp.partition, replicas=list(assignment.replicas),
            adding_replicas=list(assignment.adding),
            removing_replicas=list(assignment.removing)))
    return response


HANDLERS: dict[int, Handler] = {
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: handle_alter_partition_reassignments,
    ApiKey.LIST_PARTITION_REASSIGNMENTS: handle_list_partition_reassignments,
    ApiKey.ELECT_LEADERS: handle_elect_leaders,
    ApiKey.CONTROLLED_SHUTDOWN: handle_controlled_shutdown,
    ApiKey.ALTER_PARTITION: handle_alter_partition,
}
