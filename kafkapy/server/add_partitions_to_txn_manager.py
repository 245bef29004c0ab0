"""AddPartitionsToTxnManager: transactional produce verification with a coordinator on
another broker (KIP-890 part 1; Kafka's ``AddPartitionsToTxnManager``, 3.6+).

A leader appends a transactional batch to a partition only if the transaction's coordinator
has that partition in the producer's open transaction; otherwise a late or confused producer
could start a transaction on the partition that no coordinator knows to end, and the
partition's last stable offset would stay behind it for ever (a hanging transaction). When
the coordinator is this broker the produce handler asks it directly; on a cluster it is
usually another broker, and this manager asks it with AddPartitionsToTxn v4
(``verify_only``), as Kafka's does.

Invariants
----------
- Only the first transactional batch of a transaction on a partition is verified: a partition
  whose producer state already has this producer's transaction open (the same epoch) needs
  none (``needs_verification``), as Kafka's ``maybeStartTransactionVerification``.
- A verification guard per (partition, producer id) closes the race between the answer and
  the append: ``start_guard`` before asking, ``on_marker`` (a COMMIT/ABORT marker appended
  for the producer) drops it, and the append happens only if ``guard_holds`` still, checked
  with no await between the check and the append. A transaction that ended while the answer
  was on its way is thus not reopened (Kafka's ``VerificationGuard``).
- Errors are Kafka's: the coordinator's INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING,
  INVALID_PRODUCER_EPOCH (PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH, which producers
  expect here); a coordinator that cannot answer now (CONCURRENT_TRANSACTIONS, NOT_COORDINATOR,
  COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, a network error) becomes
  NOT_ENOUGH_REPLICAS, which every client retries without a metadata refresh (Kafka's
  ReplicaManager does the same translation).

One connection per coordinator broker, one request at a time on it (Kafka keeps one request
in flight per node). Runs on the broker's Trio loop.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kafkapy.clients.network_client import BrokerConnection
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    ConcurrentTransactionsError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    InvalidProducerEpochError,
    KafkaError,
    NetworkError,
    NotCoordinatorError,
    NotEnoughReplicasError,
    ProducerFencedError,
    error_class,
)
from kafkapy.log.log import Log
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)

if TYPE_CHECKING:
    from kafkapy.server.kafka_server import KafkaServer

__all__ = ["VERIFY_VERSION", "AddPartitionsToTxnManager", "needs_verification"]

log = logging.getLogger(__name__)

VERIFY_VERSION = 4
_TXN_TOPIC = "__transaction_state"
# Verification errors a client could not act on: retry the produce later instead.
_RETRIABLE = (ConcurrentTransactionsError, NotCoordinatorError,
              CoordinatorLoadInProgressError, CoordinatorNotAvailableError, NetworkError)


def needs_verification(log_: Log, producer_id: int, producer_epoch: int) -> bool:
    """Whether a transactional batch of this producer must be verified before it is
    appended: no transaction of its current epoch is open on the partition yet."""
    entry = log_.producer_state.last_entry(producer_id)
    return entry is None or entry.current_txn_first_offset < 0 or \
        entry.producer_epoch != producer_epoch


def for_produce(tp: TopicPartition, error: KafkaError) -> KafkaError:
    """A verification error as the producer is told it (see the module doc)."""
    if isinstance(error, ProducerFencedError):
        return InvalidProducerEpochError(f"{tp}: {error.message}")
    if isinstance(error, _RETRIABLE):
        return NotEnoughReplicasError(
            f"Unable to verify the partition {tp} has been added to the transaction. "
            f"Underlying error: {error.name}")
    return error


class AddPartitionsToTxnManager:
    """Verification requests to transaction coordinators; see the module docstring."""

    def __init__(self, server: KafkaServer) -> None:
        self._server = server
        self._connections: dict[int, BrokerConnection] = {}
        self._guards: dict[tuple[TopicPartition, int], object] = {}

    # ================================================================ guards

    def start_guard(self, tp: TopicPartition, producer_id: int) -> object:
        guard = object()
        self._guards[(tp, producer_id)] = guard
        return guard

    def guard_holds(self, tp: TopicPartition, producer_id: int, guard: object) -> bool:
        return self._guards.get((tp, producer_id)) is guard

    def end_guard(self, tp: TopicPartition, producer_id: int, guard: object) -> None:
        if self._guards.get((tp, producer_id)) is guard:
            del self._guards[(tp, producer_id)]

    def on_marker(self, tp: TopicPartition, producer_id: int) -> None:
        """A transaction marker of ``producer_id`` was appended to ``tp``: a verification
        under way for it is stale."""
        self._guards.pop((tp, producer_id), None)

    # ================================================================ verification

    async def verify(self, transactional_id: str, producer_id: int, producer_epoch: int,
                     partitions: Iterable[TopicPartition]) -> dict[TopicPartition, KafkaError]:
        """Ask the id's coordinator whether ``partitions`` are in the producer's open
        transaction; the partitions that are not, each with the error for the producer."""
        tps = sorted(partitions)
        try:
            errors = await self._ask(transactional_id, producer_id, producer_epoch, tps)
        except KafkaError as e:
            errors = dict.fromkeys(tps, e)
        return {tp: for_produce(tp, e) for tp, e in errors.items()}

    def _coordinator(self, transactional_id: str) -> int:
        server = self._server
        partition = server.transaction_coordinator.state.partition_for(transactional_id)
        info = server.metadata_cache.partition_info(TopicPartition(_TXN_TOPIC, partition))
        if info is None or info.leader < 0:
            raise CoordinatorNotAvailableError(
                f"{_TXN_TOPIC}-{partition}, the coordinator of {transactional_id}, has no "
                f"leader")
        return info.leader

    def _connection(self, broker_id: int) -> BrokerConnection:
        server = self._server
        endpoint = server.metadata_cache.broker_endpoint(
            broker_id, server.config.inter_broker_listener_name or "")
        if endpoint is None:
            raise CoordinatorNotAvailableError(f"broker {broker_id} is not alive")
        conn = self._connections.get(broker_id)
        if conn is None or (conn.host, conn.port) != (endpoint.host, endpoint.port):
            conn = BrokerConnection(endpoint.host, endpoint.port,
                                    client_id=f"broker-{server.node_id}-txn-verification",
                                    timeout_s=server.config.request_timeout_ms / 1000,
                                    ssl_context=server.inter_broker_ssl_context,
                                    authenticate=server.inter_broker_authenticate)
            self._connections[broker_id] = conn
        return conn

    async def _ask(self, transactional_id: str, producer_id: int, producer_epoch: int,
                   tps: list[TopicPartition]) -> dict[TopicPartition, KafkaError]:
        coordinator = self._coordinator(transactional_id)
        by_topic: dict[str, list[int]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        request = AddPartitionsToTxnRequest(transactions=[AddPartitionsToTxnTransaction(
            transactional_id=transactional_id, producer_id=producer_id,
            producer_epoch=producer_epoch, verify_only=True,
            topics=[AddPartitionsToTxnTopic(name=t, partitions=ps)
                    for t, ps in by_topic.items()])])
        try:
            response = await self._connection(coordinator).request(
                ApiKey.ADD_PARTITIONS_TO_TXN, VERIFY_VERSION, request)
        except KafkaError as e:
            log.warning("Verifying %s of %s with coordinator %d failed: %s", tps,
                        transactional_id, coordinator, e)
            raise NetworkError(f"verification with broker {coordinator}: {e}") from e
        if response.error_code:
            raise error_class(response.error_code)(
                f"coordinator {coordinator} refused the verification")
        errors: dict[TopicPartition, KafkaError] = {}
        answered: set[TopicPartition] = set()
        for result in response.results_by_transaction:
            for topic in result.topic_results:
                for p in topic.results_by_partition:
                    tp = TopicPartition(topic.name, p.partition_index)
                    answered.add(tp)
                    if p.partition_error_code:
                        errors[tp] = error_class(p.partition_error_code)(
                            f"coordinator {coordinator}: {tp} is not verified")
        for tp in tps:
            if tp not in answered:
                errors[tp] = NetworkError(f"coordinator {coordinator} did not answer for {tp}")
        return errors

    async def close(self) -> None:
        for conn in self._connections.values():
            await conn.close()
        self._connections.clear()
