"""The APIs only the active controller answers (ZooKeeper mode): ControlledShutdown (7),
AlterPartition (56).

Served only by a broker with ``zookeeper.connect`` (see ``kafka_apis.CLUSTER_HANDLER_MODULES``).
Each hands the request to the controller's event queue (``server.controller``) and answers
what the controller decided; a broker that is not the active controller (or stops being it
while the request waits) answers NOT_CONTROLLER, as Kafka's ZooKeeper-mode brokers do.
"""

from __future__ import annotations

from typing import Any

from kafkapy.controller.kafka_controller import KafkaController
from kafkapy.errors import KafkaError, NotControllerError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
)
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS"]


def _active_controller(context: RequestContext[Any]) -> KafkaController | None:
    controller = context.server.controller
    return controller if controller is not None and controller.active else None


async def handle_alter_partition(context: RequestContext[AlterPartitionRequest]
                                 ) -> AlterPartitionResponse:
    controller = _active_controller(context)
    if controller is not None:
        try:
            return await controller.alter_partition(context.body, context.api_version)
        except KafkaError as e:
            return AlterPartitionResponse(error_code=e.code)
    return AlterPartitionResponse(error_code=NotControllerError.code)


async def handle_controlled_shutdown(context: RequestContext[ControlledShutdownRequest]
                                     ) -> ControlledShutdownResponse:
    controller = _active_controller(context)
    if controller is not None:
        try:
            return await controller.controlled_shutdown(context.body.broker_id,
                                                        context.body.broker_epoch)
        except KafkaError as e:
            return ControlledShutdownResponse(error_code=e.code)
    return ControlledShutdownResponse(error_code=NotControllerError.code)


HANDLERS: dict[int, Handler] = {
    ApiKey.CONTROLLED_SHUTDOWN: handle_controlled_shutdown,
    ApiKey.ALTER_PARTITION: handle_alter_partition,
}
