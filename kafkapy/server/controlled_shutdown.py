"""The broker side of a controlled shutdown (ZooKeeper mode; Kafka's
``KafkaServer.controlledShutdown``): before a broker stops, it asks the controller to move
leadership of its partitions to other in-sync replicas, so no partition is leaderless while
it goes.

With ``controlled.shutdown.enable`` and ``zookeeper.connect``, ``KafkaServer.shutdown`` calls
``controlled_shutdown(server)`` first (the listeners still open: the broker may be the
controller and answer its own request). It finds the controller in ZooKeeper (``/controller``,
then its ``/brokers/ids/<id>`` endpoint on the inter-broker listener), sends
ControlledShutdown v3 (broker id, broker epoch), and repeats up to
``controlled.shutdown.max.retries`` times, ``controlled.shutdown.retry.backoff.ms`` apart,
until the answer has no error and no remaining partition. Every attempt is bounded by
``controller.socket.timeout.ms``. When all attempts fail the broker stops anyway (Kafka's
"unclean shutdown"): the controller then learns it from ZooKeeper.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from kafkapy.clients.network_client import BrokerConnection
from kafkapy.errors import error_name
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import ControlledShutdownRequest

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer

__all__ = ["controlled_shutdown"]

log = logging.getLogger(__name__)

CONTROLLED_SHUTDOWN_VERSION = 3


async def _controller_endpoint(server: KafkaServer) -> tuple[int, str, int] | None:
    assert server.healthcheck is not None
    client = server.healthcheck.client
    controller_id = await trio.to_thread.run_sync(client.get_controller_id)
    if controller_id is None:
        return None
    brokers = await trio.to_thread.run_sync(client.get_all_brokers)
    broker = brokers.get(controller_id)
    if broker is None:
        return None
    listener = server.config.inter_broker_listener_name
    for name, _, host, port in broker.registration.endpoints:
        if name == listener:
            return controller_id, host, port
    return None


async def controlled_shutdown(server: KafkaServer) -> bool:
    """Ask the controller to move this broker's leaderships away; True once it has (or
    when there is nothing to do), False when every attempt failed. Never raises."""
    cfg = server.config
    if not cfg.controlled_shutdown_enable or server.healthcheck is None:
        return True
    attempts = max(cfg.controlled_shutdown_max_retries, 1)
    for attempt in range(1, attempts + 1):
        reason = ""
        try:
            found = await _controller_endpoint(server)
            if found is None:
                reason = "no controller is known"
            else:
                controller_id, host, port = found
                conn = BrokerConnection(host, port, client_id=f"broker-{server.node_id}",
                                        timeout_s=cfg.controller_socket_timeout_ms / 1000,
                                        ssl_context=server.inter_broker_ssl_context,
                                        authenticate=server.inter_broker_authenticate)
                try:
                    response = await conn.request(
                        ApiKey.CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN_VERSION,
                        ControlledShutdownRequest(broker_id=server.node_id,
                                                  broker_epoch=server.healthcheck.broker_epoch))
                finally:
                    await conn.close()
                if response.error_code:
                    reason = f"controller {controller_id} answered " \
                             f"{error_name(response.error_code)}"
                elif response.remaining_partitions:
                    reason = (f"{len(response.remaining_partitions)} partitions still led here: "
                              + ", ".join(f"{p.topic_name}-{p.partition_index}"
                                          for p in response.remaining_partitions[:10]))
                else:
                    log.info("Controlled shutdown of broker %d succeeded (controller %d)",
                             server.node_id, controller_id)
                    return True
        except Exception as e:          # ZooKeeper or the controller away: try again
            reason = f"{type(e).__name__}: {e}"
        log.warning("Controlled shutdown of broker %d, attempt %d of %d: %s", server.node_id,
                    attempt, attempts, reason)
        if attempt < attempts:
            await trio.sleep(cfg.controlled_shutdown_retry_backoff_ms / 1000)
    log.warning("Proceeding to an unclean shutdown of broker %d: every controlled shutdown "
                "attempt failed", server.node_id)
    return False
