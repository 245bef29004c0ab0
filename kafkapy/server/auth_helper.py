"""AuthHelper: what a handler asks the authorizer, as Kafka's ``kafka.server.AuthHelper``.

- ``principal_of(context)``: the request's principal, its connection's: Kafka's
  ``User:ANONYMOUS`` on a PLAINTEXT listener, ``User:<name>`` once a SASL listener has
  authenticated the connection.
- ``authorize(context, operation, resource_type, name)``: True when the broker has no
  authorizer (``authorizer.class.name`` empty: everything is allowed, as Kafka), else the
  authorizer's decision for the principal connected from the request's client address.
- ``filter_by_authorized(context, operation, resource_type, names)``: the names allowed
  (one decision per distinct name: never per record).
- ``authorized_operations(context, resource_type, name, operations, everything)``: the
  AclOperation bit set of ``operations`` allowed on the resource (``everything`` without an
  authorizer), for the ``*AuthorizedOperations`` fields.
- ``authorize_cluster_operation(context, operation)``: raises
  ``ClusterAuthorizationFailedError`` (Kafka's "Request ... is not authorized.") when the
  operation on the cluster resource is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafkapy.errors import ClusterAuthorizationFailedError
from kafkapy.protocol import API_KEYS
from kafkapy.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkapy.server.request_context import RequestContext

__all__ = ["ANONYMOUS", "authorize", "authorize_by_resource_type",
           "authorize_cluster_operation", "authorized_operations", "filter_by_authorized",
           "principal_of"]

ANONYMOUS = "User:ANONYMOUS"


def principal_of(context: RequestContext[Any]) -> str:
    """The authenticated principal of the request's connection: ``User:ANONYMOUS`` on a
    PLAINTEXT listener, the SASL user on a SASL one."""
    return context.request.principal


def authorize(context: RequestContext[Any], operation: AclOperation,
              resource_type: ResourceType, name: str) -> bool:
    authorizer = context.server.authorizer
    if authorizer is None:
        return True
    return authorizer.authorize(principal_of(context), context.request.client_host, operation,
                                resource_type, name)


def authorize_by_resource_type(context: RequestContext[Any], operation: AclOperation,
                               resource_type: ResourceType) -> bool:
    """May the principal do ``operation`` on some resource of the type (Kafka's
    ``authorizeByResourceType``)? True without an authorizer."""
    authorizer = context.server.authorizer
    if authorizer is None:
        return True
    return authorizer.authorize_by_resource_type(principal_of(context),
                                                 context.request.client_host, operation,
                                                 resource_type)


def filter_by_authorized(context: RequestContext[Any], operation: AclOperation,
                         resource_type: ResourceType, names: Iterable[str]) -> set[str]:
    wanted = set(names)
    authorizer = context.server.authorizer
    if authorizer is None:
        return wanted
    principal, host = principal_of(context), context.request.client_host
    return {name for name in wanted
            if authorizer.authorize(principal, host, operation, resource_type, name)}


def authorized_operations(context: RequestContext[Any], resource_type: ResourceType,
                          name: str, operations: Iterable[int], everything: int) -> int:
    if context.server.authorizer is None:
        return everything
    return sum(1 << op for op in operations
               if authorize(context, AclOperation(op), resource_type, name))


def authorize_cluster_operation(context: RequestContext[Any], operation: AclOperation) -> None:
    if not authorize(context, operation, ResourceType.CLUSTER, CLUSTER_NAME):
        raise ClusterAuthorizationFailedError(
            f"Request {API_KEYS[context.api_key].name} v{context.api_version} (correlation id "
            f"{context.correlation_id}) from {principal_of(context)} is not authorized.")
