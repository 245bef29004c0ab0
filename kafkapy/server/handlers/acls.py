"""ACL administration: DescribeAcls (29), CreateAcls (30) and DeleteAcls (31), v0-3, as Kafka
3.x's ``KafkaApis`` / ``AclApis`` serve them over the broker's ``AclAuthorizer``.

- No authorizer (``authorizer.class.name`` empty): SECURITY_DISABLED, with Kafka's messages
  ("No Authorizer is configured on the broker" for DescribeAcls as its top-level error; "No
  Authorizer is configured." on every creation / filter result).
- The request's principal needs DESCRIBE (DescribeAcls) or ALTER (CreateAcls, DeleteAcls) on
  the cluster resource, else the whole request is CLUSTER_AUTHORIZATION_FAILED (Kafka's
  ``authorizeClusterOperation``). On PLAINTEXT the principal is ``User:ANONYMOUS``: put it in
  ``super.users`` (or allow it with an ACL) to administer ACLs, as with Kafka.
- CreateAcls: per creation, INVALID_REQUEST for a CLUSTER resource not named
  ``kafka-cluster`` ("The only valid name for the CLUSTER resource is kafka-cluster"), an
  empty name ("Invalid empty resource name"), a name with ``/``, unknown codes, ANY or MATCH
  where a concrete ACL is needed, or a principal without a type. Kafka rejects the last three
  while parsing the request (closing the connection or failing every creation); kafkapy
  answers INVALID_REQUEST for the offending creation only, which is what Kafka's clients
  report either way.
- DescribeAcls: the ACLs the filter matches, grouped by resource pattern (sorted); a filter
  with unknown codes is INVALID_REQUEST (top-level).
- DeleteAcls: per filter, the ACLs it deleted (a binding several filters match is reported
  for the first); a filter with unknown codes is INVALID_REQUEST for that filter.

v0 requests carry no pattern type: they mean LITERAL (the generated classes' default 3).
"""

from __future__ import annotations

import logging
from typing import Any

from kafkapy.errors import (
    InvalidRequestError,
    KafkaError,
    SecurityDisabledError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AclCreation,
    AclCreationResult,
    AclDescription,
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsFilter,
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsRequest,
    DescribeAclsResource,
    DescribeAclsResponse,
)
from kafkapy.security.authorizer.acl import (
    CLUSTER_NAME,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    parse_principal,
)
from kafkapy.security.authorizer.authorizer import AclAuthorizer
from kafkapy.server.auth_helper import authorize_cluster_operation
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "handle_create_acls", "handle_delete_acls", "handle_describe_acls"]

log = logging.getLogger(__name__)

NO_AUTHORIZER = "No Authorizer is configured."
NO_AUTHORIZER_DESCRIBE = "No Authorizer is configured on the broker"


def _authorizer(context: RequestContext[Any], message: str = NO_AUTHORIZER
                ) -> AclAuthorizer:
    authorizer = context.server.authorizer
    if authorizer is None:
        raise SecurityDisabledError(message)
    return authorizer


def _binding(c: AclCreation) -> AclBinding:
    """The creation as an ACL; raises InvalidRequestError saying what is wrong with it."""
    rtype = ResourceType.from_code(c.resource_type)
    ptype = PatternType.from_code(c.resource_pattern_type)
    operation = AclOperation.from_code(c.operation)
    permission = AclPermissionType.from_code(c.permission_type)
    if rtype is ResourceType.UNKNOWN or ptype is PatternType.UNKNOWN or \
            operation is AclOperation.UNKNOWN or permission is AclPermissionType.UNKNOWN:
        raise InvalidRequestError("CreatableAcls contain unknown elements")
    if rtype is ResourceType.CLUSTER and c.resource_name != CLUSTER_NAME:
        raise InvalidRequestError(f"The only valid name for the CLUSTER resource is "
                                  f"{CLUSTER_NAME}")
    if not c.resource_name:
        raise InvalidRequestError("Invalid empty resource name")
    try:
        principal_type, name = parse_principal(c.principal)
        return AclBinding(ResourcePattern(rtype, c.resource_name, ptype),
                          AccessControlEntry(f"{principal_type}:{name}", c.host, operation,
                                             permission))
    except ValueError as e:
        raise InvalidRequestError(str(e)) from None


async def handle_create_acls(context: RequestContext[CreateAclsRequest]) -> CreateAclsResponse:
    authorizer = _authorizer(context)
    authorize_cluster_operation(context, AclOperation.ALTER)
    creations = context.body.creations
    errors: list[KafkaError | None] = [None] * len(creations)
    valid: list[tuple[int, AclBinding]] = []
    for i, creation in enumerate(creations):
        try:
            valid.append((i, _binding(creation)))
        except KafkaError as e:
            log.debug("CreateAcls: refusing %s: %s", creation, e)
            errors[i] = e
    created = await authorizer.create_acls([binding for _, binding in valid])
    for (i, _), error in zip(valid, created, strict=True):
        errors[i] = error
    return CreateAclsResponse(throttle_time_ms=0, results=[
        AclCreationResult(error_code=0, error_message=None) if e is None else
        AclCreationResult(error_code=e.code, error_message=e.message) for e in errors])


def _filter(rtype: int, name: str | None, ptype: int, principal: str | None,
            host: str | None, operation: int, permission: int) -> AclBindingFilter:
    """A request's filter; raises InvalidRequestError for unknown codes."""
    flt = AclBindingFilter(
        ResourcePatternFilter(ResourceType.from_code(rtype), name,
                              PatternType.from_code(ptype)),
        AccessControlEntryFilter(principal, host, AclOperation.from_code(operation),
                                 AclPermissionType.from_code(permission)))
    if flt.is_unknown:
        raise InvalidRequestError(f"The filter contains UNKNOWN elements: resource type "
                                  f"{rtype}, pattern type {ptype}, operation {operation}, "
                                  f"permission type {permission}")
    return flt


async def handle_describe_acls(
        context: RequestContext[DescribeAclsRequest]) -> DescribeAclsResponse:
    body = context.body
    if context.server.authorizer is None:
        error = SecurityDisabledError(NO_AUTHORIZER_DESCRIBE)
        return DescribeAclsResponse(throttle_time_ms=0, error_code=error.code,
                                    error_message=error.message, resources=[])
    authorizer = _authorizer(context, NO_AUTHORIZER_DESCRIBE)
    authorize_cluster_operation(context, AclOperation.DESCRIBE)
    try:
        flt = _filter(body.resource_type_filter, body.resource_name_filter,
                      body.pattern_type_filter, body.principal_filter, body.host_filter,
                      body.operation, body.permission_type)
    except InvalidRequestError as e:
        return DescribeAclsResponse(throttle_time_ms=0, error_code=e.code,
                                    error_message=e.message, resources=[])
    resources: dict[ResourcePattern, list[AclDescription]] = {}
    for binding in authorizer.acls(flt):
        entry = binding.entry
        resources.setdefault(binding.pattern, []).append(AclDescription(
            principal=entry.principal, host=entry.host, operation=int(entry.operation),
            permission_type=int(entry.permission_type)))
    return DescribeAclsResponse(throttle_time_ms=0, error_code=0, error_message=None,
                                resources=[
        DescribeAclsResource(resource_type=int(p.resource_type), resource_name=p.name,
                             pattern_type=int(p.pattern_type), acls=acls)
        for p, acls in resources.items()])


async def handle_delete_acls(context: RequestContext[DeleteAclsRequest]) -> DeleteAclsResponse:
    authorizer = _authorizer(context)
    authorize_cluster_operation(context, AclOperation.ALTER)
    filters: list[DeleteAclsFilter] = context.body.filters
    results: list[DeleteAclsFilterResult | None] = [None] * len(filters)
    valid: list[tuple[int, AclBindingFilter]] = []
    for i, f in enumerate(filters):
        try:
            valid.append((i, _filter(f.resource_type_filter, f.resource_name_filter,
                                     f.pattern_type_filter, f.principal_filter, f.host_filter,
                                     f.operation, f.permission_type)))
        except InvalidRequestError as e:
            results[i] = DeleteAclsFilterResult(error_code=e.code, error_message=e.message)
    deleted = await authorizer.delete_acls([flt for _, flt in valid])
    for (i, _), matched in zip(valid, deleted, strict=True):
        results[i] = DeleteAclsFilterResult(error_code=0, error_message=None, matching_acls=[
            DeleteAclsMatchingAcl(
                error_code=0 if error is None else error.code,
                error_message=None if error is None else error.message,
                resource_type=int(b.pattern.resource_type), resource_name=b.pattern.name,
                pattern_type=int(b.pattern.pattern_type), principal=b.entry.principal,
                host=b.entry.host, operation=int(b.entry.operation),
                permission_type=int(b.entry.permission_type))
            for b, error in matched])
    return DeleteAclsResponse(throttle_time_ms=0,
                              filter_results=[r for r in results if r is not None])


HANDLERS: dict[int, Handler] = {
    ApiKey.DESCRIBE_ACLS: handle_describe_acls,
    ApiKey.CREATE_ACLS: handle_create_acls,
    ApiKey.DELETE_ACLS: handle_delete_acls,
}
