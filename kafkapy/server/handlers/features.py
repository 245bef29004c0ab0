"""UpdateFeatures (API key 57): change the cluster's finalized feature levels (KIP-584).

Kafka's ``KafkaApis.handleUpdateFeatures`` (ZooKeeper mode) and, for the single broker, what
a KRaft controller does in one process; the rules are :mod:`kafkapy.common.features`'.

- ZooKeeper mode: only the active controller answers (any other broker: NOT_CONTROLLER at the
  top, clients then find the controller); the controller checks every update against
  ``/feature``, its own supported ranges and every registered broker's, writes the result and
  this broker answers once its own cache (``/feature``'s watch) has the new epoch, within the
  request's ``timeoutMs`` (else FEATURE_UPDATE_FAILED for the applied updates, as Kafka's
  ``waitUntilFeatureEpochOrThrow`` fails them).
- The single broker: the same checks, the levels stored in its metadata file.
- v0: AllowDowngrade true means a SAFE downgrade; v1 brings UpgradeType (an unknown one is
  INVALID_REQUEST for that feature) and ValidateOnly (checked, nothing written); v0-1 apply the
  valid updates and answer per feature; v2 (no per-feature results) applies all or none and
  answers the first failure at the top.

With an authorizer, UpdateFeatures needs ALTER on the cluster (else
CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

import logging

from kafkapy.common.features import (
    FeatureUpdate,
    UpgradeType,
    apply_feature_updates,
    registration_ranges,
)
from kafkapy.errors import FeatureUpdateFailedError, KafkaError, NotControllerError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    UpdatableFeatureResult,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)
from kafkapy.security.authorizer.acl import AclOperation
from kafkapy.server.auth_helper import authorize_cluster_operation
from kafkapy.server.metadata_store import FileMetadataStore
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "handle_update_features"]

log = logging.getLogger(__name__)


def _updates(context: RequestContext[UpdateFeaturesRequest]) -> list[FeatureUpdate]:
    v1 = context.api_version >= 1
    return [FeatureUpdate(u.feature, u.max_version_level,
                          u.upgrade_type if v1 else
                          UpgradeType.SAFE_DOWNGRADE if u.allow_downgrade else UpgradeType.UPGRADE)
            for u in context.body.feature_updates]


async def _apply(context: RequestContext[UpdateFeaturesRequest], updates: list[FeatureUpdate],
                 validate_only: bool, atomic: bool) -> dict[str, KafkaError | None]:
    server = context.server
    store = server.metadata_store
    if isinstance(store, FileMetadataStore):
        levels, _ = store.finalized_features
        target, errors = apply_feature_updates(levels, updates, [registration_ranges()],
                                               atomic=atomic)
        if not validate_only and target != levels:
            server.features.update(target, store.set_finalized_features(target))
        return errors
    controller = server.controller
    if controller is None or not controller.active:
        raise NotControllerError(f"broker {server.node_id} is not the controller")
    epoch, errors = await controller.update_features(updates, validate_only, atomic)
    if validate_only or all(e is not None for e in errors.values()):
        return errors
    timeout_s = max(context.body.timeout_ms, 0) / 1000
    if not await server.features.wait_for_epoch(epoch, timeout_s):
        log.warning("UpdateFeatures: the finalized features' epoch %d did not reach this "
                    "broker within %d ms", epoch, context.body.timeout_ms)
        failed = FeatureUpdateFailedError(f"timed out waiting for the finalized features' "
                                          f"epoch {epoch}")
        return {f: failed if e is None else e for f, e in errors.items()}
    return errors


async def handle_update_features(context: RequestContext[UpdateFeaturesRequest]
                                 ) -> UpdateFeaturesResponse:
    authorize_cluster_operation(context, AclOperation.ALTER)
    version = context.api_version
    body = context.body
    updates = _updates(context)
    response = UpdateFeaturesResponse(throttle_time_ms=0, error_code=0, error_message=None,
                                      results=[])
    try:
        errors = await _apply(context, updates, version >= 1 and body.validate_only,
                              atomic=version >= 2)
    except KafkaError as e:
        # Kafka's createWithErrors(topLevelError, emptyMap): no per-feature results.
        response.error_code, response.error_message = e.code, e.message
        return response
    if version >= 2:
        first = next((e for e in errors.values() if e is not None), None)
        if first is not None:
            response.error_code, response.error_message = first.code, first.message
        return response
    response.results = [
        UpdatableFeatureResult(feature=name, error_code=0 if e is None else e.code,
                               error_message=None if e is None else e.message)
        for name, e in errors.items()]
    return response


HANDLERS: dict[int, Handler] = {ApiKey.UPDATE_FEATURES: handle_update_features}
