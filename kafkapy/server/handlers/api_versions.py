"""ApiVersions (API key 18): the API keys and version ranges this broker serves.

Kafka's ``KafkaApis.handleApiVersionsRequest``, for v0-4 (the protocol reference, section 3.2):

- the answer lists what ``KafkaApis`` advertises (``context.apis.api_versions``: the APIs with a
  handler, at their recommended ranges), ThrottleTimeMs 0 (v1+), and no feature tagged fields
  (v3+), so clients see no finalized features and use the classic protocols;
- v3+ requests carry ClientSoftwareName / ClientSoftwareVersion, which must match Kafka's
  ``SOFTWARE_NAME_VERSION_PATTERN``; otherwise the answer is INVALID_REQUEST (42) with no API
  keys, at the request's version (``ApiVersionsRequest.isValid`` / ``getErrorResponse``).
  librdkafka then retries with v0.

A version newer than v4 never reaches this handler: ``KafkaApis`` answers it with the v0
UNSUPPORTED_VERSION fallback without reading the body.
"""

from __future__ import annotations

import re

from kafkapy.errors import InvalidRequestError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import ApiVersion, ApiVersionsRequest, ApiVersionsResponse
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
    return ApiVersionsResponse(
        error_code=0,
        api_keys=[ApiVersion(api_key=key, min_version=low, max_version=high)
                  for key, low, high in context.apis.api_versions],
        throttle_time_ms=0,
    )


HANDLERS: dict[int, Handler] = {ApiKey.API_VERSIONS: handle_api_versions}
