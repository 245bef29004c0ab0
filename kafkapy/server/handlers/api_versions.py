"""ApiVersions (API key 18): the API keys and version ranges this broker serves.

Kafka's ``KafkaApis.handleApiVersionsRequest``, for v0-4 (the protocol reference, section 3.2):

- the answer lists what ``KafkaApis`` advertises (``context.apis.api_versions``: the APIs with a
  handler, at their recommended ranges) less ConsumerGroupHeartbeat and ConsumerGroupDescribe
  while ``group.version`` is not finalized at 1 or more (Kafka 4.0 does not serve KIP-848 groups
  then; an API not served is not advertised), and ThrottleTimeMs 0 (v1+);
- v3+ (tagged fields, KIP-584): the features this broker supports (``SUPPORTED_FEATURES``;
  before v4, as Kafka, without those whose lowest level is 0: KAFKA-17011, older clients
  reject them), the cluster's finalized levels (each with MinVersionLevel = MaxVersionLevel,
  as Kafka writes them) and their epoch (-1 while not known), ZkMigrationReady false;
- v3+ requests carry ClientSoftwareName / ClientSoftwareVersion, which must match Kafka's
  ``SOFTWARE_NAME_VERSION_PATTERN``; otherwise the answer is INVALID_REQUEST (42) with no API
  keys, at the request's version (``ApiVersionsRequest.isValid`` / ``getErrorResponse``).
  librdkafka then retries with v0.

A version newer than v4 never reaches this handler: ``KafkaApis`` answers it with the v0
UNSUPPORTED_VERSION fallback without reading the body.
"""

from __future__ import annotations

import re

from kafkapy.common.features import SUPPORTED_FEATURES
from kafkapy.errors import InvalidRequestError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    FinalizedFeatureKey,
    SupportedFeatureKey,
)
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "SOFTWARE_NAME_VERSION", "handle_api_versions"]

# Kafka's ApiVersionsRequest.SOFTWARE_NAME_VERSION_PATTERN, matched against the whole string
# (Java's Matcher.matches): letters, digits, '-' and '.', starting and ending alphanumeric.
SOFTWARE_NAME_VERSION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


async def handle_api_versions(
        context: RequestContext[ApiVersionsRequest]) -> ApiVersionsResponse:
    """The ApiVersions response for ``context``.

    Raises:
        InvalidRequestError: v3+ with a client software name or version that does not match
            ``SOFTWARE_NAME_VERSION`` (KafkaApis answers INVALID_REQUEST).
    """
    if context.api_version >= 3:
        body = context.body
        for what, value in (("name", body.client_software_name),
                            ("version", body.client_software_version)):
            if SOFTWARE_NAME_VERSION.fullmatch(value) is None:
                raise InvalidRequestError(f"invalid client software {what} {value!r}")
    try:
        features = context.server.features
    except RuntimeError:
        features = None                 # a handler-only KafkaApis (tests): no broker
    hidden: tuple[int, ...] = ()
    if features is not None and not features.consumer_group_protocol:
        hidden = (ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE)
    response = ApiVersionsResponse(
        error_code=0,
        api_keys=[ApiVersion(api_key=key, min_version=low, max_version=high)
                  for key, low, high in context.apis.api_versions if key not in hidden],
        throttle_time_ms=0,
    )
    if context.api_version >= 3 and features is not None:
        response.supported_features = [
            SupportedFeatureKey(name=name, min_version=low, max_version=high)
            for name, (low, high) in sorted(SUPPORTED_FEATURES.items())
            if low >= 1 or context.api_version >= 4]
        finalized = features.current
        response.finalized_features_epoch = finalized.epoch
        response.finalized_features = [
            FinalizedFeatureKey(name=name, max_version_level=level, min_version_level=level)
            for name, level in sorted(finalized.levels.items())]
    return response


HANDLERS: dict[int, Handler] = {ApiKey.API_VERSIONS: handle_api_versions}
