"""ListConfigResources (API key 74): the config resources of the cluster, by type (KIP-1142;
v0 is KIP-714's ListClientMetricsResources).

Kafka 4.1's ``KafkaApis.handleListConfigResources``:

- The types asked for (v1 ``ResourceTypes``; empty: all the version supports). v0 supports
  client metrics (16) only; v1 topics (2), brokers (4), broker loggers (8), client metrics
  (16) and groups (32). A type outside those fails the request with UNSUPPORTED_VERSION and
  no resources.
- Per type: groups with dynamic group configs, client metrics subscriptions, each live
  broker's id (once as a broker logger, once as a broker, from the brokers with an endpoint
  on the request's listener), every topic. kafkapy has neither group configs nor client
  metrics subscriptions (DescribeConfigs refuses both types), so those lists are empty, as a
  Kafka broker without any answers.
- Authorization: DESCRIBE_CONFIGS on the cluster (with an authorizer; else
  CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from kafkapy.errors import UnsupportedVersionError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    ConfigResource,
    ListConfigResourcesRequest,
    ListConfigResourcesResponse,
)
from kafkapy.security.authorizer.acl import AclOperation
from kafkapy.server.auth_helper import authorize_cluster_operation
from kafkapy.server.handlers.configs import BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP, TOPIC
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "handle_list_config_resources"]

_SUPPORTED = {0: frozenset({CLIENT_METRICS}),
              1: frozenset({TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP})}


async def handle_list_config_resources(
        context: RequestContext[ListConfigResourcesRequest]) -> ListConfigResourcesResponse:
    authorize_cluster_operation(context, AclOperation.DESCRIBE_CONFIGS)
    supported = _SUPPORTED[min(context.api_version, 1)]
    types = set(context.body.resource_types) or set(supported)
    if types - supported:
        return ListConfigResourcesResponse(throttle_time_ms=0,
                                           error_code=UnsupportedVersionError.code)
    resources: list[ConfigResource] = []
    # Groups (32) and client metrics (16): kafkapy has no such config resources.
    cache = context.server.metadata_cache
    broker_ids = [str(node) for node, _host, _port, _rack in
                  cache.brokers(context.request.listener_name)]
    for resource_type in (BROKER_LOGGER, BROKER):
        if resource_type in types:
            resources += [ConfigResource(resource_name=node, resource_type=resource_type)
                          for node in broker_ids]
    if TOPIC in types:
        resources += [ConfigResource(resource_name=name, resource_type=TOPIC)
                      for name in sorted(cache.topics)]
    return ListConfigResourcesResponse(throttle_time_ms=0, error_code=0,
                                       config_resources=resources)


HANDLERS: dict[int, Handler] = {ApiKey.LIST_CONFIG_RESOURCES: handle_list_config_resources}
