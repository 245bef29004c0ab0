"""The KIP-848 consumer group APIs: ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69).

Wire shapes only: each handler turns the request into a call on the group coordinator's
:class:`~kafkapy.coordinator.group.consumer_group_coordinator.ConsumerGroupCoordinator` and its
answer into the
response of the request's version (Kafka's ``KafkaApis.handleConsumerGroupHeartbeat`` /
``handleConsumerGroupDescribe``). A heartbeat's error is raised, so KafkaApis answers with the
API's error response (ErrorCode and ErrorMessage, MemberId null, epoch and interval 0), as
Kafka's ``GroupCoordinatorService`` does. Assignments go out by topic id.

Authorization (with an authorizer): the heartbeat needs READ, the describe DESCRIBE on the
group (GROUP_AUTHORIZATION_FAILED); a heartbeat's subscribed topic names all need DESCRIBE
(else TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.common.features import GROUP_VERSION
from kafkapy.coordinator.group.consumer_group import (
    DescribedTopicPartitions,
    HeartbeatRequest,
)
from kafkapy.coordinator.group.consumer_group_coordinator import ConsumerGroupCoordinator
from kafkapy.errors import (
    GroupAuthorizationFailedError,
    KafkaError,
    TopicAuthorizationFailedError,
    UnsupportedVersionError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupDescribeResponseAssignment,
    ConsumerGroupDescribeResponseDescribedGroup,
    ConsumerGroupDescribeResponseTopicPartitions,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatResponseAssignment,
    ConsumerGroupHeartbeatResponseTopicPartitions,
    Member,
)
from kafkapy.security.authorizer.acl import AclOperation, ResourceType
from kafkapy.server.auth_helper import authorize, authorized_operations, filter_by_authorized
from kafkapy.server.handlers.group_and_offsets import (
    GROUP_OPERATION_CODES,
    GROUP_OPERATIONS,
    NOT_REQUESTED,
)
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS"]




def _groups(context: RequestContext[Any]) -> ConsumerGroupCoordinator:
    """The consumer groups, or UNSUPPORTED_VERSION while ``group.version`` is below 1 (Kafka
    4.0's ``isConsumerGroupProtocolEnabled``: the whole request is answered with it)."""
    if not context.server.features.consumer_group_protocol:
        raise UnsupportedVersionError(
            f"{ApiKey(context.api_key).name} is not served: the cluster's finalized "
            f"group.version is {context.server.features.level(GROUP_VERSION)}, the consumer "
            f"group protocol (KIP-848) needs 1")
    return context.server.group_coordinator.consumer_groups


async def handle_consumer_group_heartbeat(
        context: RequestContext[ConsumerGroupHeartbeatRequest]) -> ConsumerGroupHeartbeatResponse:
    # Kafka: READ on the group (GROUP_AUTHORIZATION_FAILED).
    if not authorize(context, AclOperation.READ, ResourceType.GROUP, context.body.group_id):
        raise GroupAuthorizationFailedError(
            f"Not authorized to access group: {context.body.group_id}")
    subscribed = context.body.subscribed_topic_names
    if subscribed:
        # Clients may not learn of topics they may not DESCRIBE (Kafka's check).
        refused = set(subscribed) - filter_by_authorized(
            context, AclOperation.DESCRIBE, ResourceType.TOPIC, subscribed)
        if refused:
            raise TopicAuthorizationFailedError(
                f"Not authorized to access topics: [{', '.join(sorted(refused))}]")
    request = HeartbeatRequest.from_body(context.body, context.api_version, context.client_id,
                                         context.request.client_host)
    response = _groups(context).heartbeat(request)
    # The group's records were appended: the log's flush policy runs before the answer.
    await context.server.group_coordinator.manager.flush_if_due(request.group_id)
    assignment = None
    if response.assignment is not None:
        assignment = ConsumerGroupHeartbeatResponseAssignment(topic_partitions=[
            ConsumerGroupHeartbeatResponseTopicPartitions(topic_id=topic_id, partitions=partitions)
            for topic_id, partitions in response.assignment])
    return ConsumerGroupHeartbeatResponse(
        throttle_time_ms=0, error_code=response.error_code,
        error_message=response.error_message, member_id=response.member_id,
        member_epoch=response.member_epoch,
        heartbeat_interval_ms=response.heartbeat_interval_ms, assignment=assignment)


def _assignment(parts: list[DescribedTopicPartitions]) -> ConsumerGroupDescribeResponseAssignment:
    return ConsumerGroupDescribeResponseAssignment(topic_partitions=[
        ConsumerGroupDescribeResponseTopicPartitions(
            topic_id=p.topic_id, topic_name=p.topic_name, partitions=list(p.partitions))
        for p in parts])


async def handle_consumer_group_describe(
        context: RequestContext[ConsumerGroupDescribeRequest]) -> ConsumerGroupDescribeResponse:
    body = context.body
    groups = _groups(context)
    out = []
    for group_id in body.group_ids:
        try:
            if not authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
                raise GroupAuthorizationFailedError(f"Not authorized to access group: "
                                                    f"{group_id}")
            g = groups.describe(group_id)
        except KafkaError as e:
            out.append(ConsumerGroupDescribeResponseDescribedGroup(
                error_code=e.code, error_message=e.message, group_id=group_id,
                group_state="", group_epoch=0, assignment_epoch=0, assignor_name="",
                members=[], authorized_operations=NOT_REQUESTED))
            continue
        out.append(ConsumerGroupDescribeResponseDescribedGroup(
            error_code=0, error_message=None, group_id=g.group_id, group_state=g.group_state,
            group_epoch=g.group_epoch, assignment_epoch=g.assignment_epoch,
            assignor_name=g.assignor_name, members=[
                Member(member_id=m.member_id, instance_id=m.instance_id,
                       rack_id=m.rack_id, member_epoch=m.member_epoch,
                       client_id=m.client_id, client_host=m.client_host,
                       subscribed_topic_names=list(m.subscribed_topic_names),
                       subscribed_topic_regex=m.subscribed_topic_regex,
                       assignment=_assignment(m.assignment),
                       target_assignment=_assignment(m.target_assignment),
                       member_type=m.member_type)
                for m in g.members],
            authorized_operations=authorized_operations(
                context, ResourceType.GROUP, g.group_id, GROUP_OPERATION_CODES,
                GROUP_OPERATIONS) if body.include_authorized_operations else NOT_REQUESTED))
    return ConsumerGroupDescribeResponse(throttle_time_ms=0, groups=out)


HANDLERS: dict[int, Handler] = {
    ApiKey.CONSUMER_GROUP_HEARTBEAT: handle_consumer_group_heartbeat,
    ApiKey.CONSUMER_GROUP_DESCRIBE: handle_consumer_group_describe,
}
