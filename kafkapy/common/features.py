"""Feature versioning (KIP-584): what a broker supports, what the cluster has finalized, and
the rules of an UpdateFeatures request (Kafka's ``BrokerFeatures``, ``FinalizedFeatures`` and
the ZooKeeper-mode controller's ``validateFeatureUpdate``).

Pure: no clock, no I/O. The controller (ZooKeeper mode) and the single broker apply updates
with :func:`apply_feature_updates` and store the result (``/feature``, the metadata file).

The features kafkapy knows (``SUPPORTED_FEATURES``):

- ``group.version`` 0-1, Kafka 4.0's: at 1 the KIP-848 consumer group protocol
  (ConsumerGroupHeartbeat, ConsumerGroupDescribe) is served and advertised; at 0 (the feature
  not finalized) it is not, and those APIs answer UNSUPPORTED_VERSION. A new cluster starts
  at each feature's highest level (``default_finalized``), as Kafka bootstraps one.

Levels. A finalized level is >= 1; level 0 is the feature's absence (ZooKeeper's ``/feature``
cannot hold a 0, and KIP-584 deletes a feature by asking for a level below 1). A broker's
supported range may start at 0 (KAFKA-17011, ApiVersions v4); ApiVersions v3 omits such
features, and the ZooKeeper registration writes its range from 1 (older readers reject 0).

The rules (Kafka 3.x ZooKeeper mode, every failure INVALID_REQUEST with Kafka's message):
an empty name; an unknown upgrade type; deleting a feature that is not finalized; a level
below 1 without a downgrade type; the level it already has; a lower level without SAFE
downgrade (UNSAFE is not a ZooKeeper-mode downgrade); a higher level with a downgrade type; a
feature or level this broker does not support; one that a registered broker does not
support. Valid updates of a request apply even if others fail (v0-1, per-feature results);
:func:`apply_feature_updates` with ``atomic`` applies none when one fails (v2, Kafka 4's
all-or-nothing answer).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

import attrs

from kafkapy.errors import InvalidRequestError, KafkaError

__all__ = [
    "GROUP_VERSION",
    "SUPPORTED_FEATURES",
    "FeatureUpdate",
    "UpgradeType",
    "apply_feature_updates",
    "default_finalized",
    "registration_ranges",
]

GROUP_VERSION = "group.version"

# name -> (min level, max level) this broker supports.
SUPPORTED_FEATURES: Mapping[str, tuple[int, int]] = {GROUP_VERSION: (0, 1)}


class UpgradeType(enum.IntEnum):
    """UpdateFeatures v1+ ``UpgradeType`` (v0: AllowDowngrade false / true = 1 / 2)."""

    UPGRADE = 1
    SAFE_DOWNGRADE = 2
    UNSAFE_DOWNGRADE = 3


@attrs.frozen
class FeatureUpdate:
    feature: str
    max_version_level: int
    upgrade_type: int = UpgradeType.UPGRADE

    @property
    def is_delete(self) -> bool:
        return self.max_version_level < 1 and self.upgrade_type != UpgradeType.UPGRADE


def default_finalized(supported: Mapping[str, tuple[int, int]] = SUPPORTED_FEATURES
                      ) -> dict[str, int]:
    """A new cluster's finalized features: every supported feature at its highest level
    (Kafka's ``BrokerFeatures.defaultFinalizedFeatures``); levels below 1 are absences."""
    return {name: high for name, (_, high) in supported.items() if high >= 1}


def registration_ranges(supported: Mapping[str, tuple[int, int]] = SUPPORTED_FEATURES
                        ) -> dict[str, dict[str, int]]:
    """The ``features`` of a ``/brokers/ids/<id>`` registration: the finalizable levels (>= 1)
    of each feature, as ``{"min_version": .., "max_version": ..}``."""
    return {name: {"min_version": max(low, 1), "max_version": high}
            for name, (low, high) in supported.items() if high >= 1}


def _supports(ranges: Mapping[str, Mapping[str, int]], feature: str, level: int) -> bool:
    r = ranges.get(feature)
    return r is not None and int(r.get("min_version", 1)) <= level <= int(r["max_version"])


def _check(update: FeatureUpdate, existing: int | None,
           supported: Mapping[str, tuple[int, int]],
           brokers: Iterable[Mapping[str, Mapping[str, int]]]) -> KafkaError | None:
    level = update.max_version_level
    if not update.feature:
        return InvalidRequestError("Feature name can not be empty.")
    if update.upgrade_type not in tuple(UpgradeType):
        return InvalidRequestError("Received unknown upgrade type.")
    if update.is_delete:
        if existing is None:
            return InvalidRequestError("Can not delete non-existing finalized feature.")
        return None
    if level < 1:
        return InvalidRequestError(
            f"Can not provide maxVersionLevel: {level} less than 1 without setting the SAFE "
            f"downgradeType in the request.")
    if existing is not None:
        if level == existing:
            verb = "downgrade" if update.upgrade_type == UpgradeType.SAFE_DOWNGRADE \
                else "upgrade"
            return InvalidRequestError(
                f"Can not {verb} a finalized feature from existing maxVersionLevel:{existing} "
                f"to the same value.")
        if level < existing and update.upgrade_type != UpgradeType.SAFE_DOWNGRADE:
            return InvalidRequestError(
                f"Can not downgrade finalized feature from existing maxVersionLevel:{existing} "
                f"to provided maxVersionLevel:{level} without setting the downgradeType to "
                f"SAFE in the request.")
        if level > existing and update.upgrade_type != UpgradeType.UPGRADE:
            return InvalidRequestError(
                f"When the downgradeType is set to SAFE in the request, the provided "
                f"maxVersionLevel:{level} can not be greater than existing "
                f"maxVersionLevel:{existing}.")
    own = supported.get(update.feature)
    if own is None:
        return InvalidRequestError("Could not apply finalized feature update because the "
                                   "provided feature is not supported.")
    low, high = own
    if not low <= level <= high:
        return InvalidRequestError(
            f"Could not apply finalized feature update because the provided versionLevel:"
            f"{level} is outside the supported range [{low}, {high}].")
    if any(not _supports(b, update.feature, level) for b in brokers):
        return InvalidRequestError("Could not apply finalized feature update because brokers "
                                   "were found to have incompatible versions for the feature.")
    return None


def apply_feature_updates(existing: Mapping[str, int], updates: Iterable[FeatureUpdate],
                          brokers: Iterable[Mapping[str, Mapping[str, int]]] = (), *,
                          supported: Mapping[str, tuple[int, int]] = SUPPORTED_FEATURES,
                          atomic: bool = False
                          ) -> tuple[dict[str, int], dict[str, KafkaError | None]]:
    """The finalized features after ``updates`` and each update's error (None: applied).

    ``brokers``: every registered broker's supported ranges (``registration_ranges`` form); a
    level one of them does not support is refused. ``atomic``: one failure keeps
    ``existing`` whole (the valid updates get no error: nothing was wrong with them)."""
    target = dict(existing)
    errors: dict[str, KafkaError | None] = {}
    registered = list(brokers)
    for update in updates:
        error = _check(update, existing.get(update.feature), supported, registered)
        errors[update.feature] = error
        if error is None:
            if update.is_delete:
                target.pop(update.feature, None)
            else:
                target[update.feature] = update.max_version_level
    if atomic and any(e is not None for e in errors.values()):
        return dict(existing), errors
    return target, errors
