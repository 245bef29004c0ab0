"""The group APIs: FindCoordinator (10), JoinGroup (11), SyncGroup (14), Heartbeat (12),
LeaveGroup (13), OffsetCommit (8), OffsetFetch (9), DescribeGroups (15), ListGroups (16),
DeleteGroups (42), OffsetDelete (47).

Wire shapes only: each handler turns the request into a call on the broker's
:class:`~kafkapy.coordinator.group.group_coordinator.GroupCoordinator` and its answer into the
response of the request's version (Kafka's ``KafkaApis.handle*Request`` for these keys).
JoinGroup and SyncGroup answers that wait for a rebalance are returned ``Parked``, so the
handler task is free meanwhile. OffsetCommit and the leader's SyncGroup answer after the
``__consumer_offsets`` log's flush policy ran (``flush.messages`` / ``flush.ms``).

Authorization (with ``authorizer.class.name``, Kafka's checks): FindCoordinator needs DESCRIBE
on the group or transactional id (GROUP_ / TRANSACTIONAL_ID_AUTHORIZATION_FAILED for that
key); JoinGroup, SyncGroup, Heartbeat, LeaveGroup and OffsetCommit need READ on the group
(OffsetCommit READ on each topic too: TOPIC_AUTHORIZATION_FAILED for its partitions),
OffsetFetch DESCRIBE (GROUP_AUTHORIZATION_FAILED, per group from OffsetFetch v8); DescribeGroups
DESCRIBE and DeleteGroups DELETE per group; ListGroups lists every group with DESCRIBE on the
cluster, else only the groups the principal may DESCRIBE; OffsetFetch DESCRIBE on each topic
(refused topics asked for by name are TOPIC_AUTHORIZATION_FAILED, left out of an all-topics
fetch); OffsetDelete DELETE on the group and READ on each topic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group.classic_group import Reply
from kafkapy.coordinator.group.group_coordinator import GroupCoordinator
from kafkapy.coordinator.group.group_metadata_manager import OFFSETS_TOPIC
from kafkapy.coordinator.group.records import OffsetAndMetadata
from kafkapy.coordinator.internal_topic import partition_for
from kafkapy.coordinator.transaction.transaction_state_manager import TRANSACTION_STATE_TOPIC
from kafkapy.errors import (
    CoordinatorNotAvailableError,
    GroupAuthorizationFailedError,
    GroupIdNotFoundError,
    InvalidGroupIdError,
    InvalidRequestError,
    KafkaError,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
    UnstableOffsetCommitError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    Coordinator,
    DeletableGroupResult,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    DescribeGroupsResponseDescribedGroup,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListedGroup,
    ListGroupsRequest,
    ListGroupsResponse,
    MemberResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafkapy.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkapy.server.auth_helper import authorize, authorized_operations, filter_by_authorized
from kafkapy.server.metadata_cache import ZkMetadataCache
from kafkapy.server.request_context import Handler, Parked, RequestContext

__all__ = ["HANDLERS"]


GROUP_KEY, TRANSACTION_KEY = 0, 1
# READ, DELETE, DESCRIBE (Kafka's AclOperation codes): everything, without an authorizer.
GROUP_OPERATION_CODES = (3, 6, 8)
GROUP_OPERATIONS = sum(1 << op for op in GROUP_OPERATION_CODES)
NOT_REQUESTED = -(1 << 31)


def _coordinator(context: RequestContext[Any]) -> GroupCoordinator:
    return context.server.group_coordinator


def _authorize_group(context: RequestContext[Any], group_id: str,
                     operation: AclOperation = AclOperation.READ) -> None:
    """Raise GROUP_AUTHORIZATION_FAILED unless the principal may do ``operation`` on it."""
    if not authorize(context, operation, ResourceType.GROUP, group_id):
        raise GroupAuthorizationFailedError(f"Not authorized to access group: {group_id}")


# =========================================================================== FindCoordinator


async def handle_find_coordinator(
        context: RequestContext[FindCoordinatorRequest]) -> FindCoordinatorResponse:
    body, version = context.body, context.api_version
    key_type = body.key_type if version >= 1 else GROUP_KEY
    keys = list(body.coordinator_keys) if version >= 4 else [body.key]
    brokers = context.server.metadata_cache.brokers(context.request.listener_name)
    answers: list[tuple[str, int, str, int, int, str | None]] = []
    cache = context.server.metadata_cache
    if isinstance(cache, ZkMetadataCache):
        answers = [_zk_coordinator(context, cache, key_type, key) for key in keys]
        keys = []
    for key in keys:
        error: KafkaError | None = None
        if key_type == GROUP_KEY:
            try:
                _coordinator(context).manager.ensure_topic()
            except KafkaError as e:
                error = CoordinatorNotAvailableError(f"{OFFSETS_TOPIC} is not available: {e}")
        elif key_type == TRANSACTION_KEY:
            try:
                context.server.transaction_coordinator.state.ensure_topic()
            except KafkaError as e:
                error = CoordinatorNotAvailableError(f"__transaction_state is not available: "
                                                     f"{e}")
        else:
            error = InvalidRequestError(f"Unknown coordinator type {key_type}")
        if error is None and not brokers:
            error = CoordinatorNotAvailableError("no endpoint on this listener")
        if error is None:
            node, host, port, _rack = brokers[0]
            answers.append((key, node, host, port, 0, None))
        else:
            answers.append((key, -1, "", -1, error.code, error.message))
    if context.server.authorizer is not None and key_type in (GROUP_KEY, TRANSACTION_KEY):
        rtype = ResourceType.GROUP if key_type == GROUP_KEY else ResourceType.TRANSACTIONAL_ID
        refused: KafkaError = (
            GroupAuthorizationFailedError("Group authorization failed.")
            if key_type == GROUP_KEY else
            TransactionalIdAuthorizationFailedError("Transactional Id authorization failed."))
        answers = [a if authorize(context, AclOperation.DESCRIBE, rtype, a[0]) else
                   (a[0], -1, "", -1, refused.code, refused.message) for a in answers]
    if version >= 4:
        return FindCoordinatorResponse(throttle_time_ms=0, coordinators=[
            Coordinator(key=k, node_id=n, host=h, port=p, error_code=e, error_message=m)
            for k, n, h, p, e, m in answers])
    (_k, node, host, port, code, message) = answers[0]
    return FindCoordinatorResponse(throttle_time_ms=0, error_code=code,
                                   error_message=message, node_id=node, host=host,
                                   port=port)


def _zk_coordinator(context: RequestContext[FindCoordinatorRequest], cache: ZkMetadataCache,
                    key_type: int, key: str) -> tuple[str, int, str, int, int, str | None]:
    """ZooKeeper mode (Kafka's ``KafkaApis.getCoordinator``): the leader of the key's
    partition of the internal topic, from the metadata cache, at its endpoint on the
    request's listener. A missing topic is created in ZooKeeper (Kafka's
    AutoTopicCreationManager, no clamping of the replication factor: with fewer live brokers
    than the factor the answer is COORDINATOR_NOT_AVAILABLE and nothing is created);
    COORDINATOR_NOT_AVAILABLE until the partition has a live leader."""
    server = context.server
    cfg = server.config
    if key_type == GROUP_KEY:
        topic, partitions = OFFSETS_TOPIC, cfg.offsets_topic_num_partitions
        factor, setting = cfg.offsets_topic_replication_factor, \
            "offsets.topic.replication.factor"
    elif key_type == TRANSACTION_KEY:
        topic, partitions = TRANSACTION_STATE_TOPIC, cfg.transaction_state_log_num_partitions
        factor, setting = cfg.transaction_state_log_replication_factor, \
            "transaction.state.log.replication.factor"
    else:
        error: KafkaError = InvalidRequestError(f"Unknown coordinator type {key_type}")
        return (key, -1, "", -1, error.code, error.message)
    record = cache.topic(topic)
    if record is None:
        live = len(cache.alive_broker_ids())
        if live < factor:
            error = CoordinatorNotAvailableError(
                f"Number of alive brokers '{live}' does not meet the required replication "
                f"factor '{factor}' for auto creation of topic '{topic}' which is configured "
                f"by {setting}. This error can be ignored if the cluster is starting up and "
                f"not all brokers are up yet.")
            return (key, -1, "", -1, error.code, error.message)
        try:
            server.admin.create_topic(topic, partitions, factor,
                                      configs=_internal_topic_configs(context, topic))
        except TopicAlreadyExistsError:
            pass
        except KafkaError as e:
            error = CoordinatorNotAvailableError(f"{topic} is not available: {e}")
            return (key, -1, "", -1, error.code, error.message)
        error = CoordinatorNotAvailableError()
        return (key, -1, "", -1, error.code, error.message)
    tp = TopicPartition(topic, partition_for(key, record.partitions))
    info = cache.partition_info(tp)
    endpoint = None if info is None else \
        cache.broker_endpoint(info.leader, context.request.listener_name)
    if info is None or endpoint is None:
        error = CoordinatorNotAvailableError()
        return (key, -1, "", -1, error.code, error.message)
    return (key, info.leader, endpoint.host, endpoint.port, 0, None)


def _internal_topic_configs(context: RequestContext[FindCoordinatorRequest],
                            topic: str) -> dict[str, str]:
    """The configs Kafka gives the internal topics (``offsetsTopicConfigs`` /
    ``transactionTopicConfigs``; min.insync.replicas = transaction.state.log.min.isr,
    unclamped in ZooKeeper mode)."""
    cfg = context.server.config
    if topic == OFFSETS_TOPIC:
        return {"cleanup.policy": "compact",
                "segment.bytes": str(cfg.offsets_topic_segment_bytes),
                "compression.type": "producer"}
    return {"cleanup.policy": "compact", "compression.type": "uncompressed",
            "unclean.leader.election.enable": "false",
            "min.insync.replicas": str(cfg.transaction_state_log_min_isr),
            "segment.bytes": str(cfg.transaction_state_log_segment_bytes)}


# ================================================================================ JoinGroup


async def handle_join_group(
        context: RequestContext[JoinGroupRequest]) -> JoinGroupResponse | Parked:
    body, version = context.body, context.api_version
    _authorize_group(context, body.group_id)
    rebalance_timeout = body.rebalance_timeout_ms if version >= 1 else body.session_timeout_ms
    reply = _coordinator(context).join_group(
        group_id=body.group_id, member_id=body.member_id,
        group_instance_id=body.group_instance_id if version >= 5 else None,
        require_known_member_id=version >= 4 and
        (version < 5 or body.group_instance_id is None),
        support_skip_assignment=version >= 9,
        client_id=context.client_id, client_host=context.request.client_host,
        rebalance_timeout_ms=rebalance_timeout, session_timeout_ms=body.session_timeout_ms,
        protocol_type=body.protocol_type,
        protocols=[(p.name, bytes(p.metadata)) for p in body.protocols])

    def answer(result: Any) -> JoinGroupResponse:
        members = [JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=d)
                   for m, i, d in result.members]
        return JoinGroupResponse(
            throttle_time_ms=0, error_code=result.error, generation_id=result.generation_id,
            protocol_type=result.protocol_type,
            protocol_name=result.protocol_name if version >= 7 else
            (result.protocol_name or ""),
            leader=result.leader_id, skip_assignment=result.skip_assignment,
            member_id=result.member_id, members=members)

    return _answer_when(reply, answer)


def _answer_when(reply: Reply,
                 answer: Callable[[Any], JoinGroupResponse]) -> JoinGroupResponse | Parked:
    if reply.answered:
        return answer(reply.result)

    async def finish() -> JoinGroupResponse:
        return answer(await reply.wait())
    return Parked(finish)


# ================================================================================ SyncGroup


async def handle_sync_group(
        context: RequestContext[SyncGroupRequest]) -> SyncGroupResponse | Parked:
    body, version = context.body, context.api_version
    _authorize_group(context, body.group_id)
    coordinator = _coordinator(context)
    reply = coordinator.sync_group(
        group_id=body.group_id, generation_id=body.generation_id, member_id=body.member_id,
        group_instance_id=body.group_instance_id if version >= 3 else None,
        protocol_type=body.protocol_type if version >= 5 else None,
        protocol_name=body.protocol_name if version >= 5 else None,
        assignments={a.member_id: bytes(a.assignment) for a in body.assignments})

    def answer(result: Any) -> SyncGroupResponse:
        return SyncGroupResponse(throttle_time_ms=0, error_code=result.error,
                                 protocol_type=result.protocol_type,
                                 protocol_name=result.protocol_name,
                                 assignment=result.assignment)

    if reply.answered:
        return answer(reply.result)

    async def finish() -> SyncGroupResponse:
        result = await reply.wait()
        if not result.error:
            await coordinator.manager.flush_if_due(body.group_id)
        return answer(result)
    return Parked(finish)


# ================================================================================ Heartbeat


async def handle_heartbeat(context: RequestContext[HeartbeatRequest]) -> HeartbeatResponse:
    body, version = context.body, context.api_version
    _authorize_group(context, body.group_id)
    code = _coordinator(context).heartbeat(
        group_id=body.group_id, member_id=body.member_id,
        group_instance_id=body.group_instance_id if version >= 3 else None,
        generation_id=body.generation_id)
    return HeartbeatResponse(throttle_time_ms=0, error_code=code)


# =============================================================================== LeaveGroup


async def handle_leave_group(context: RequestContext[LeaveGroupRequest]) -> LeaveGroupResponse:
    body, version = context.body, context.api_version
    _authorize_group(context, body.group_id)
    if version >= 3:
        leaving = [(m.member_id, m.group_instance_id) for m in body.members]
    else:
        leaving = [(body.member_id, None)]
    top, errors = _coordinator(context).leave_group(body.group_id, leaving)
    if version < 3:
        code = top or (errors[0] if errors else 0)
        return LeaveGroupResponse(throttle_time_ms=0, error_code=code)
    members = [] if top else [
        MemberResponse(member_id=m, group_instance_id=i, error_code=e)
        for (m, i), e in zip(leaving, errors, strict=True)]
    return LeaveGroupResponse(throttle_time_ms=0, error_code=top, members=members)


# ============================================================================= OffsetCommit


async def handle_offset_commit(
        context: RequestContext[OffsetCommitRequest]) -> OffsetCommitResponse:
    body, version = context.body, context.api_version
    _authorize_group(context, body.group_id)
    coordinator = _coordinator(context)
    now = context.server.time.milliseconds()
    retention = body.retention_time_ms if 2 <= version <= 4 else -1
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    names = {t.name for t in body.topics}
    denied = names - filter_by_authorized(context, AclOperation.READ, ResourceType.TOPIC, names)
    for topic in body.topics:
        if topic.name in denied:
            continue
        for p in topic.partitions:
            # v1 may carry the commit time; v2-4 a retention, counted from now (Kafka's).
            commit_ts = p.commit_timestamp if version == 1 and p.commit_timestamp != -1 \
                else now
            expire = now + retention if retention != -1 else -1
            offsets[TopicPartition(topic.name, p.partition_index)] = OffsetAndMetadata(
                p.committed_offset, p.committed_leader_epoch if version >= 6 else -1,
                p.committed_metadata or "", commit_ts, expire)
    try:
        results = coordinator.commit_offsets(
            group_id=body.group_id, member_id=body.member_id if version >= 1 else "",
            group_instance_id=body.group_instance_id if version >= 7 else None,
            generation_id=body.generation_id_or_member_epoch if version >= 1 else -1,
            offsets=offsets, api_version=version) if offsets or not denied else {}
        await coordinator.manager.flush_if_due(body.group_id)
    except KafkaError as e:
        results = dict.fromkeys(offsets, e.code)
    for topic in body.topics:
        if topic.name in denied:
            for p in topic.partitions:
                results[TopicPartition(topic.name, p.partition_index)] = \
                    TopicAuthorizationFailedError.code
    topics = []
    for topic in body.topics:
        topics.append(OffsetCommitResponseTopic(name=topic.name, partitions=[
            OffsetCommitResponsePartition(
                partition_index=p.partition_index,
                error_code=results[TopicPartition(topic.name, p.partition_index)])
            for p in topic.partitions]))
    return OffsetCommitResponse(throttle_time_ms=0, topics=topics)


# ============================================================================== OffsetFetch


_Fetched = list[tuple[str, list[tuple[int, OffsetAndMetadata | None, int]]]]


def _fetch_group(coordinator: GroupCoordinator, group_id: str,
                 topics: list[tuple[str, list[int]]] | None,
                 member_id: str | None = None, member_epoch: int = -1,
                 require_stable: bool = False) -> tuple[int, _Fetched]:
    """(group error, [(topic, [(partition, committed or None, error)])]). With
    ``require_stable`` (v7+) a partition an open transaction holds an offset of answers
    UNSTABLE_OFFSET_COMMIT, so the consumer retries until the transaction ends."""
    tps = None if topics is None else \
        [TopicPartition(t, p) for t, parts in topics for p in parts]
    try:
        found = coordinator.fetch_offsets(group_id, tps, member_id, member_epoch)
    except KafkaError as e:
        return e.code, []
    if tps is None:
        tps = sorted(found)
    out: dict[str, list[tuple[int, OffsetAndMetadata | None, int]]] = {}
    for tp in tps:
        if require_stable and coordinator.has_pending_txn_offset(group_id, tp):
            out.setdefault(tp.topic, []).append((tp.partition, None,
                                                 UnstableOffsetCommitError.code))
        else:
            out.setdefault(tp.topic, []).append((tp.partition, found.get(tp), 0))
    return 0, list(out.items())


async def handle_offset_fetch(context: RequestContext[OffsetFetchRequest]) -> OffsetFetchResponse:
    body, version = context.body, context.api_version
    coordinator = _coordinator(context)
    if version >= 8:
        groups = []
        for g in body.groups:
            topics = None if g.topics is None else \
                [(t.name, list(t.partition_indexes)) for t in g.topics]
            if not authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id):
                groups.append(OffsetFetchResponseGroup(
                    group_id=g.group_id, error_code=GroupAuthorizationFailedError.code,
                    topics=[]))
                continue
            # v9+: a KIP-848 member fetches with its member id and epoch.
            code, result = _fetch_group(coordinator, g.group_id, topics,
                                        g.member_id if version >= 9 else None,
                                        g.member_epoch if version >= 9 else -1,
                                        body.require_stable)
            result = _authorized_fetched(context, result, explicit=topics is not None)
            groups.append(OffsetFetchResponseGroup(
                group_id=g.group_id, error_code=code, topics=[
                    OffsetFetchResponseTopics(name=name, partitions=[
                        OffsetFetchResponsePartitions(**_partition(p, om, err))
                        for p, om, err in parts])
                    for name, parts in result]))
        return OffsetFetchResponse(throttle_time_ms=0, groups=groups)
    _authorize_group(context, body.group_id, AclOperation.DESCRIBE)
    topics = None if body.topics is None else \
        [(t.name, list(t.partition_indexes)) for t in body.topics]
    code, result = _fetch_group(coordinator, body.group_id, topics,
                                require_stable=version >= 7 and body.require_stable)
    result = _authorized_fetched(context, result, explicit=topics is not None)
    if code:
        if version < 2:
            # No top-level error before v2: every partition carries it.
            result = [(name, [(p, None, code) for p in parts])
                      for name, parts in (topics or [])]
        else:
            result = []
    response_topics = [
        OffsetFetchResponseTopic(name=name, partitions=[
            OffsetFetchResponsePartition(**_partition(p, om, err))
            for p, om, err in parts])
        for name, parts in result]
    return OffsetFetchResponse(throttle_time_ms=0, topics=response_topics,
                               error_code=code)


def _authorized_fetched(context: RequestContext[Any], result: _Fetched, *, explicit: bool
                        ) -> _Fetched:
    """Kafka's OffsetFetch topic check: DESCRIBE on each topic; a refused topic's partitions
    are TOPIC_AUTHORIZATION_FAILED when asked for by name, left out of an all-topics fetch."""
    if context.server.authorizer is None:
        return result
    allowed = filter_by_authorized(context, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                   {name for name, _ in result})
    if not explicit:
        return [(name, parts) for name, parts in result if name in allowed]
    return [(name, parts if name in allowed else
             [(p, None, TopicAuthorizationFailedError.code) for p, _om, _err in parts])
            for name, parts in result]


def _partition(p: int, om: OffsetAndMetadata | None, error: int = 0) -> dict[str, Any]:
    if om is None:
        return dict(partition_index=p, committed_offset=-1, committed_leader_epoch=-1,
                    metadata="", error_code=error)
    return dict(partition_index=p, committed_offset=om.offset,
                committed_leader_epoch=om.leader_epoch, metadata=om.metadata,
                error_code=error)


# ========================================================================== DescribeGroups


async def handle_describe_groups(
        context: RequestContext[DescribeGroupsRequest]) -> DescribeGroupsResponse:
    body, version = context.body, context.api_version
    coordinator = _coordinator(context)
    include_ops = version >= 3 and body.include_authorized_operations
    out = []
    for group_id in body.groups:
        try:
            _authorize_group(context, group_id, AclOperation.DESCRIBE)
            s = coordinator.describe_group(group_id)
            out.append(DescribeGroupsResponseDescribedGroup(
                error_code=0, error_message=None, group_id=group_id, group_state=s.state,
                protocol_type=s.protocol_type, protocol_data=s.protocol_data,
                members=[DescribedGroupMember(
                    member_id=m, group_instance_id=i, client_id=c, client_host=h,
                    member_metadata=meta, member_assignment=a)
                    for m, i, c, h, meta, a in s.members],
                authorized_operations=authorized_operations(
                    context, ResourceType.GROUP, group_id, GROUP_OPERATION_CODES,
                    GROUP_OPERATIONS) if include_ops else NOT_REQUESTED))
        except KafkaError as e:
            code = e.code
            message: str | None = e.message
            if isinstance(e, GroupIdNotFoundError) and version < 6:
                # Before v6 an unknown group is described as Dead, without an error.
                code, message = 0, None
            elif isinstance(e, InvalidGroupIdError) and version < 6:
                message = None
            out.append(DescribeGroupsResponseDescribedGroup(
                error_code=code, error_message=message, group_id=group_id, group_state="Dead",
                protocol_type="", protocol_data="", members=[],
                authorized_operations=NOT_REQUESTED))
    return DescribeGroupsResponse(throttle_time_ms=0, groups=out)


# ============================================================================== ListGroups


async def handle_list_groups(context: RequestContext[ListGroupsRequest]) -> ListGroupsResponse:
    body, version = context.body, context.api_version
    states = {s.lower() for s in body.states_filter} if version >= 4 else set()
    types = {t.lower() for t in body.types_filter} if version >= 5 else set()
    groups = []
    # Kafka: DESCRIBE on the cluster lists every group, else the groups one may DESCRIBE.
    everything = authorize(context, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)

    def listed(group_id: str) -> bool:
        return everything or authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP,
                                       group_id)

    for g in _coordinator(context).list_groups():
        if not listed(g.group_id):
            continue
        if states and g.state.value.lower() not in states:
            continue
        if types and "classic" not in types:
            continue
        groups.append(ListedGroup(group_id=g.group_id,
                                  protocol_type=g.protocol_type or "",
                                  group_state=g.state.value, group_type="classic"))
    # KIP-848 consumer groups (consumer_group_coordinator.py), as Kafka lists them.
    for group_id, state in _coordinator(context).consumer_groups.listed():
        if not listed(group_id):
            continue
        if (states and state.lower() not in states) or (types and "consumer" not in types):
            continue
        groups.append(ListedGroup(group_id=group_id, protocol_type="consumer",
                                  group_state=state, group_type="consumer"))
    return ListGroupsResponse(throttle_time_ms=0, error_code=0, groups=groups)


# ============================================================================ DeleteGroups


async def handle_delete_groups(
        context: RequestContext[DeleteGroupsRequest]) -> DeleteGroupsResponse:
    coordinator = _coordinator(context)
    names = list(context.body.groups_names)
    allowed = [n for n in names if authorize(context, AclOperation.DELETE, ResourceType.GROUP, n)]
    results = coordinator.delete_groups(allowed) if allowed else {}
    results.update({n: GroupAuthorizationFailedError.code for n in names if n not in allowed})
    for name in names:
        if not results.get(name):
            await coordinator.manager.flush_if_due(name)
    return DeleteGroupsResponse(throttle_time_ms=0, results=[
        DeletableGroupResult(group_id=n, error_code=results[n]) for n in names])


# ============================================================================ OffsetDelete


async def handle_offset_delete(
        context: RequestContext[OffsetDeleteRequest]) -> OffsetDeleteResponse:
    body = context.body
    # Kafka's handleOffsetDeleteRequest: DELETE on the group, READ on each topic.
    _authorize_group(context, body.group_id, AclOperation.DELETE)
    coordinator = _coordinator(context)
    names = {t.name for t in body.topics}
    denied = names - filter_by_authorized(context, AclOperation.READ, ResourceType.TOPIC, names)
    tps = [TopicPartition(t.name, p.partition_index) for t in body.topics for p in t.partitions
           if t.name not in denied]
    results = coordinator.delete_offsets(body.group_id, tps)
    await coordinator.manager.flush_if_due(body.group_id)
    return OffsetDeleteResponse(error_code=0, throttle_time_ms=0, topics=[
        OffsetDeleteResponseTopic(name=t.name, partitions=[
            OffsetDeleteResponsePartition(
                partition_index=p.partition_index,
                error_code=TopicAuthorizationFailedError.code if t.name in denied
                else results[TopicPartition(t.name, p.partition_index)])
            for p in t.partitions])
        for t in body.topics])


HANDLERS: dict[int, Handler] = {
    ApiKey.FIND_COORDINATOR: handle_find_coordinator,
    ApiKey.JOIN_GROUP: handle_join_group,
    ApiKey.SYNC_GROUP: handle_sync_group,
    ApiKey.HEARTBEAT: handle_heartbeat,
    ApiKey.LEAVE_GROUP: handle_leave_group,
    ApiKey.OFFSET_COMMIT: handle_offset_commit,
    ApiKey.OFFSET_FETCH: handle_offset_fetch,
    ApiKey.DESCRIBE_GROUPS: handle_describe_groups,
    ApiKey.LIST_GROUPS: handle_list_groups,
    ApiKey.DELETE_GROUPS: handle_delete_groups,
    ApiKey.OFFSET_DELETE: handle_offset_delete,
}
