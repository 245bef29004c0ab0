"""UpdateFeatures (57) and the features in ApiVersions on a single broker, with kafka-python's
admin client (``describe_features`` / ``update_features``, which sends v2) and raw v0/v1
requests for the per-feature answers.

- A new broker finalizes every supported feature at its highest level (group.version 1,
  epoch 0); ApiVersions v4 lists group.version 0-1 as supported, v3 leaves it out (its lowest
  level is 0: KAFKA-17011).
- validate_only checks and changes nothing; a SAFE downgrade of group.version to 0 deletes it
  (epoch 1): ConsumerGroupHeartbeat then answers UNSUPPORTED_VERSION and ApiVersions no longer
  advertises 68/69; an upgrade back serves KIP-848 again (epoch 2). The levels and the epoch
  survive a restart (the metadata file).
- Refusals keep the levels: v0/v1 answer per feature, applying the valid updates beside the
  refused ones; v2 applies none and answers the first refusal at the top.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka.admin import KafkaAdminClient
from kafka.errors import InvalidRequestError as KPInvalidRequestError

from kafkapy import Broker
from kafkapy.protocol import API_KEYS, ApiKey
from kafkapy.protocol.classes import struct_classes
from kafkapy.protocol.message_classes import (
    ApiVersionsRequest,
    FeatureUpdateKey,
    UpdateFeaturesRequest,
)
from tests.clients.client_support import RawClient

GV = "group.version"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    with Broker(data_dir=tmp_path / "data") as b:
        yield b


@contextlib.contextmanager
def admin(broker: Broker) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers,
                              request_timeout_ms=10000)
    try:
        yield client
    finally:
        client.close()


def api_versions(broker: Broker, version: int = 4) -> Any:
    with RawClient(broker.bootstrap_servers) as c:
        return c.request(ApiKey.API_VERSIONS, version, ApiVersionsRequest(
            client_software_name="kafkapy-tests", client_software_version="1.0"))


def heartbeat_error(broker: Broker) -> int:
    c = struct_classes(API_KEYS[ApiKey.CONSUMER_GROUP_HEARTBEAT].request.body)
    body = c["ConsumerGroupHeartbeatRequest"](
        group_id="g", member_id="m-1", member_epoch=0, rebalance_timeout_ms=30000,
        subscribed_topic_names=["t"], topic_partitions=[])
    with RawClient(broker.bootstrap_servers) as client:
        response = client.request(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, body)
    code: int = response.error_code
    return code


def update(broker: Broker, version: int, *updates: tuple[str, int, int],
           validate_only: bool = False) -> Any:
    """Raw UpdateFeatures: ``(feature, level, upgrade type)`` (v0: type 2 = AllowDowngrade)."""
    keys = [FeatureUpdateKey(feature=f, max_version_level=level,
                             allow_downgrade=version == 0 and kind == 2,
                             upgrade_type=kind if version >= 1 else 1)
            for f, level, kind in updates]
    with RawClient(broker.bootstrap_servers) as c:
        return c.request(ApiKey.UPDATE_FEATURES, version, UpdateFeaturesRequest(
            timeout_ms=10000, feature_updates=keys, validate_only=validate_only))


def served_keys(broker: Broker) -> set[int]:
    return {k.api_key for k in api_versions(broker).api_keys}


def test_new_broker_finalizes_group_version_1(broker: Broker) -> None:
    with admin(broker) as a:
        assert a.describe_features() == {
            GV: {"supported": (0, 1), "finalized": (1, 1), "finalized_epoch": 0}}
    v4 = api_versions(broker, 4)
    assert [(f.name, f.min_version, f.max_version) for f in v4.supported_features] == \
        [(GV, 0, 1)]
    assert [(f.name, f.min_version_level, f.max_version_level)
            for f in v4.finalized_features] == [(GV, 1, 1)]
    assert v4.finalized_features_epoch == 0 and v4.zk_migration_ready is False
    v3 = api_versions(broker, 3)
    assert v3.supported_features == [] and v3.finalized_features_epoch == 0
    assert {ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE,
            ApiKey.UPDATE_FEATURES} <= {k.api_key for k in v4.api_keys}
    assert heartbeat_error(broker) == 0


def test_group_version_gates_kip_848_and_survives_a_restart(broker: Broker,
                                                            tmp_path: Path) -> None:
    with admin(broker) as a:
        assert a.update_features({GV: ("SAFE_DOWNGRADE", 0)}, validate_only=True) == \
            {GV: "OK"}
        assert a.describe_features()[GV]["finalized"] == (1, 1)     # nothing changed
        assert a.update_features({GV: ("SAFE_DOWNGRADE", 0)}) == {GV: "OK"}
        assert a.describe_features() == {GV: {"supported": (0, 1)}}
    assert api_versions(broker).finalized_features_epoch == 1
    assert heartbeat_error(broker) == 35                             # UNSUPPORTED_VERSION
    assert not {ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE} & \
        served_keys(broker)
    broker.stop()
    with Broker(data_dir=tmp_path / "data") as broker:
        check_after_restart(broker)


def check_after_restart(broker: Broker) -> None:
    assert heartbeat_error(broker) == 35
    assert api_versions(broker).finalized_features_epoch == 1
    with admin(broker) as a:
        assert a.update_features({GV: 1}) == {GV: "OK"}
        assert a.describe_features()[GV] == {"supported": (0, 1), "finalized": (1, 1),
                                             "finalized_epoch": 2}
    assert heartbeat_error(broker) == 0
    assert ApiKey.CONSUMER_GROUP_HEARTBEAT in served_keys(broker)


def test_refusals_per_feature_v0_v1_and_atomic_v2(broker: Broker) -> None:
    # v0: AllowDowngrade=false to level 0 is not a deletion.
    r = update(broker, 0, (GV, 0, 1))
    assert r.error_code == 0
    assert [(x.feature, x.error_code) for x in r.results] == [(GV, 42)]
    assert "without setting the SAFE downgradeType" in r.results[0].error_message
    # v1: an unknown feature is refused, the valid deletion beside it applied.
    r = update(broker, 1, ("no.such.feature", 1, 1), (GV, 0, 2))
    assert {x.feature: (x.error_code, x.error_message) for x in r.results} == {
        "no.such.feature": (42, "Could not apply finalized feature update because the "
                                "provided feature is not supported."),
        GV: (0, None)}
    assert api_versions(broker).finalized_features == []
    # v1: an unknown upgrade type.
    r = update(broker, 1, (GV, 1, 7))
    assert [(x.error_code, x.error_message) for x in r.results] == [
        (42, "Received unknown upgrade type.")]
    # v2: one refusal, nothing applied, the refusal at the top, no per-feature results.
    r = update(broker, 2, (GV, 1, 1), ("no.such.feature", 1, 1))
    assert (r.error_code, r.results) == (42, [])
    assert "not supported" in r.error_message
    assert api_versions(broker).finalized_features == []
    with admin(broker) as a:
        with pytest.raises(KPInvalidRequestError, match="outside the supported range"):
            a.update_features({GV: 2})
        assert a.update_features({GV: 1}) == {GV: "OK"}
        with pytest.raises(KPInvalidRequestError, match="to the same value"):
            a.update_features({GV: 1})
    assert api_versions(broker).finalized_features_epoch == 2
