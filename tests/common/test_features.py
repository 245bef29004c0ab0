"""The KIP-584 rules of an UpdateFeatures request (pure), as Kafka's ZooKeeper-mode controller
applies them: every refusal INVALID_REQUEST with its reason, valid updates applied beside
refused ones unless the request is atomic (v2)."""

from __future__ import annotations

import pytest

from kafkapy.common.features import (
    GROUP_VERSION,
    FeatureUpdate,
    UpgradeType,
    apply_feature_updates,
    default_finalized,
    registration_ranges,
)
from kafkapy.errors import InvalidRequestError

SUPPORTED = {GROUP_VERSION: (0, 1), "x.version": (1, 4)}
UP, SAFE, UNSAFE = UpgradeType.UPGRADE, UpgradeType.SAFE_DOWNGRADE, UpgradeType.UNSAFE_DOWNGRADE


def apply(existing: dict[str, int], *updates: FeatureUpdate, brokers: list | None = None,
          atomic: bool = False) -> tuple[dict[str, int], dict[str, str | None]]:
    target, errors = apply_feature_updates(existing, updates, brokers or [],
                                           supported=SUPPORTED, atomic=atomic)
    for e in errors.values():
        assert e is None or isinstance(e, InvalidRequestError)
    return target, {f: None if e is None else e.message for f, e in errors.items()}


def test_defaults_and_registration() -> None:
    assert default_finalized(SUPPORTED) == {GROUP_VERSION: 1, "x.version": 4}
    assert default_finalized({"z": (0, 0)}) == {}
    # ZooKeeper holds levels >= 1: a range from 0 is registered from 1.
    assert registration_ranges(SUPPORTED) == {
        GROUP_VERSION: {"min_version": 1, "max_version": 1},
        "x.version": {"min_version": 1, "max_version": 4}}


def test_upgrade_downgrade_delete() -> None:
    assert apply({}, FeatureUpdate("x.version", 2)) == ({"x.version": 2}, {"x.version": None})
    assert apply({"x.version": 2}, FeatureUpdate("x.version", 4)) == \
        ({"x.version": 4}, {"x.version": None})
    assert apply({"x.version": 4}, FeatureUpdate("x.version", 3, SAFE)) == \
        ({"x.version": 3}, {"x.version": None})
    for kind in (SAFE, UNSAFE):
        assert apply({GROUP_VERSION: 1}, FeatureUpdate(GROUP_VERSION, 0, kind)) == \
            ({}, {GROUP_VERSION: None})


@pytest.mark.parametrize(("existing", "update", "reason"), [
    ({}, FeatureUpdate("", 1), "Feature name can not be empty."),
    ({}, FeatureUpdate("x.version", 2, 9), "Received unknown upgrade type."),
    ({}, FeatureUpdate(GROUP_VERSION, 0, SAFE), "Can not delete non-existing finalized feature."),
    ({GROUP_VERSION: 1}, FeatureUpdate(GROUP_VERSION, 0),
     "Can not provide maxVersionLevel: 0 less than 1 without setting the SAFE downgradeType "
     "in the request."),
    ({"x.version": 2}, FeatureUpdate("x.version", 2),
     "Can not upgrade a finalized feature from existing maxVersionLevel:2 to the same value."),
    ({"x.version": 2}, FeatureUpdate("x.version", 2, SAFE),
     "Can not downgrade a finalized feature from existing maxVersionLevel:2 to the same "
     "value."),
    ({"x.version": 3}, FeatureUpdate("x.version", 2),
     "Can not downgrade finalized feature from existing maxVersionLevel:3 to provided "
     "maxVersionLevel:2 without setting the downgradeType to SAFE in the request."),
    ({"x.version": 3}, FeatureUpdate("x.version", 2, UNSAFE),
     "Can not downgrade finalized feature from existing maxVersionLevel:3 to provided "
     "maxVersionLevel:2 without setting the downgradeType to SAFE in the request."),
    ({"x.version": 2}, FeatureUpdate("x.version", 3, SAFE),
     "When the downgradeType is set to SAFE in the request, the provided maxVersionLevel:3 "
     "can not be greater than existing maxVersionLevel:2."),
    ({}, FeatureUpdate("metadata.version", 7),
     "Could not apply finalized feature update because the provided feature is not "
     "supported."),
    ({}, FeatureUpdate("x.version", 5),
     "Could not apply finalized feature update because the provided versionLevel:5 is "
     "outside the supported range [1, 4]."),
])
def test_refusals(existing: dict[str, int], update: FeatureUpdate, reason: str) -> None:
    assert apply(existing, update) == (existing, {update.feature: reason})


def test_every_registered_broker_must_support_the_level() -> None:
    old = {"x.version": {"min_version": 1, "max_version": 2}}
    current = registration_ranges(SUPPORTED)
    assert apply({}, FeatureUpdate("x.version", 2), brokers=[current, old]) == \
        ({"x.version": 2}, {"x.version": None})
    target, errors = apply({}, FeatureUpdate("x.version", 3), brokers=[current, old])
    assert target == {} and errors["x.version"] == (
        "Could not apply finalized feature update because brokers were found to have "
        "incompatible versions for the feature.")
    # A broker that does not know the feature at all.
    assert apply({}, FeatureUpdate("x.version", 1), brokers=[current, {}])[0] == {}
    # Deleting needs no broker's support.
    assert apply({"x.version": 1}, FeatureUpdate("x.version", 0, SAFE), brokers=[{}])[0] == {}


def test_partial_unless_atomic() -> None:
    good, bad = FeatureUpdate("x.version", 3), FeatureUpdate(GROUP_VERSION, 2)
    target, errors = apply({GROUP_VERSION: 1}, good, bad)
    assert target == {GROUP_VERSION: 1, "x.version": 3}
    assert errors["x.version"] is None and errors[GROUP_VERSION] is not None
    target, errors = apply({GROUP_VERSION: 1}, good, bad, atomic=True)
    assert target == {GROUP_VERSION: 1}
    assert errors["x.version"] is None and errors[GROUP_VERSION] is not None
