"""kafkapy: a Kafka-compatible broker in Python.

``kafkapy.Broker`` runs one embedded (``with kafkapy.Broker() as broker: ...``);
``kafkapy.BrokerConfig`` holds Kafka's broker settings; ``kafkapy.Cluster`` runs a ZooKeeper and
several broker processes (``with kafkapy.Cluster(3) as cluster: ...``). Each is imported on
first use, so ``import kafkapy.protocol`` alone does not load the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0.dev0"
__all__ = ["Broker", "BrokerConfig", "Cluster", "__version__"]

if TYPE_CHECKING:
    from kafkapy.broker import Broker
    from kafkapy.cluster import Cluster
    from kafkapy.config import BrokerConfig


def __getattr__(name: str) -> Any:
    if name == "Broker":
        from kafkapy.broker import Broker
        return Broker
    if name == "Cluster":
        from kafkapy.cluster import Cluster
        return Cluster
    if name == "BrokerConfig":
        from kafkapy.config import BrokerConfig
        return BrokerConfig
    raise AttributeError(f"module 'kafkapy' has no attribute {name!r}")
