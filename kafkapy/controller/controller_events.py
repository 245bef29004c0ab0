"""The controller's events (Kafka's ``ControllerEvent`` classes and ``ControllerEventManager``'s
queue): everything the controller does is one of these, processed one at a time by one Trio
task.

kazoo's watch callbacks (on kazoo's threads) and request handlers (on the Trio loop) only
enqueue; the event task processes. Events carrying a request (AlterPartition,
ControlledShutdown, ElectLeaders) carry a ``Reply`` the handler awaits.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import attrs
import trio

__all__ = [
    "AlterPartitionEvent",
    "AutoRebalance",
    "BrokerChange",
    "ControlledShutdownEvent",
    "ControllerEvent",
    "ElectLeadersEvent",
    "LegacyReassignment",
    "PartitionModifications",
    "ReassignmentsEvent",
    "Reply",
    "Startup",
    "StopReplicaAnswered",
    "TopicChange",
    "TopicDeletion",
    "UpdateFeaturesEvent",
]

T = TypeVar("T")


class Reply(Generic[T]):
    """A one-shot answer from the event task to the task that asked."""

    def __init__(self) -> None:
        self._done = trio.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def set(self, value: T) -> None:
        if not self._done.is_set():
            self._value = value
            self._done.set()

    def fail(self, error: BaseException) -> None:
        if not self._done.is_set():
            self._error = error
            self._done.set()

    async def wait(self) -> T:
        await self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


class ControllerEvent:
    """Base of every event."""


@attrs.frozen
class Startup(ControllerEvent):
    epoch: int                          # the controller epoch this broker just won


@attrs.frozen
class BrokerChange(ControllerEvent):
    pass


@attrs.frozen
class TopicChange(ControllerEvent):
    pass


@attrs.frozen
class PartitionModifications(ControllerEvent):
    topic: str


@attrs.frozen
class TopicDeletion(ControllerEvent):
    pass


@attrs.frozen
class StopReplicaAnswered(ControllerEvent):
    broker_id: int
    request: Any
    response: Any


@attrs.frozen(eq=False)
class AlterPartitionEvent(ControllerEvent):
    request: Any                        # AlterPartitionRequest
    version: int
    reply: Reply[Any]


@attrs.frozen(eq=False)
class ControlledShutdownEvent(ControllerEvent):
    broker_id: int
    broker_epoch: int
    reply: Reply[Any]


@attrs.frozen(eq=False)
class ElectLeadersEvent(ControllerEvent):
    election_type: int                  # 0 preferred, 1 unclean
    partitions: Any                     # list of TopicPartition, or None: all
    reply: Reply[Any]


@attrs.frozen(eq=False)
class UpdateFeaturesEvent(ControllerEvent):
    """UpdateFeatures: ``updates`` (a list of common.features.FeatureUpdate); answered with
    (the /feature znode version now, per feature None or the error)."""
    updates: Any
    validate_only: bool
    atomic: bool
    reply: Reply[Any]


@attrs.frozen
class AutoRebalance(ControllerEvent):
    pass


@attrs.frozen(eq=False)
class ReassignmentsEvent(ControllerEvent):
    """AlterPartitionReassignments: ``targets`` maps each partition to its target replicas,
    None to cancel."""
    targets: Any                        # dict[TopicPartition, tuple[int, ...] | None]
    reply: Reply[Any]


@attrs.frozen
class LegacyReassignment(ControllerEvent):
    """``/admin/reassign_partitions`` was written."""
