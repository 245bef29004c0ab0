"""A recording peer for controller tests: a tiny broker that only answers the controller's
requests (LeaderAndIsr, UpdateMetadata, StopReplica) with success, records every request it
decoded, and registers in ZooKeeper like a broker (its own kazoo session), so the controller
connects to it as to any live broker.

It runs its own Trio loop in a thread: tests drive a ``kafkapy.Cluster`` synchronously.
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Callable
from typing import Any

import trio

from kafkapy.protocol import ApiKey, decode_request, encode_response
from kafkapy.protocol.message_classes import (
    LeaderAndIsrPartitionError,
    LeaderAndIsrResponse,
    LeaderAndIsrTopicError,
    StopReplicaPartitionError,
    StopReplicaResponse,
    UpdateMetadataResponse,
)
from kafkapy.zk.kafka_zk_client import KafkaZkClient
from kafkapy.zk.zk_data import BrokerRegistration

_SIZE = struct.Struct(">i")
_CONTROLLER_REQUESTS = (ApiKey.LEADER_AND_ISR, ApiKey.UPDATE_METADATA, ApiKey.STOP_REPLICA)


def _answer(api_key: int, body: Any) -> Any:
    if api_key == ApiKey.LEADER_AND_ISR:
        return LeaderAndIsrResponse(topics=[
            LeaderAndIsrTopicError(topic_id=t.topic_id, partition_errors=[
                LeaderAndIsrPartitionError(partition_index=p.partition_index)
                for p in t.partition_states]) for t in body.topic_states])
    if api_key == ApiKey.UPDATE_METADATA:
        return UpdateMetadataResponse()
    if api_key == ApiKey.STOP_REPLICA:
        return StopReplicaResponse(partition_errors=[
            StopReplicaPartitionError(topic_name=t.topic_name, partition_index=p.partition_index)
            for t in body.topic_states for p in t.partition_states])
    raise ValueError(f"the recording broker does not answer API {api_key}")


class RecordingBroker:
    """``RecordingBroker(broker_id, zookeeper_connect).start()``; ``requests`` is the list of
    ``(api_key, api_version, body)`` received, in order."""

    def __init__(self, broker_id: int, zookeeper_connect: str, *, rack: str | None = None,
                 answer: bool = True) -> None:
        self.broker_id = broker_id
        self.connect = zookeeper_connect
        self.rack = rack
        self.answer = answer
        self.requests: list[tuple[int, int, Any]] = []
        self.port = 0
        self.epoch = -1
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self._ready = threading.Event()
        self.zk: KafkaZkClient | None = None

    def start(self) -> RecordingBroker:
        self._thread = threading.Thread(target=trio.run, args=(self._main,), daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise TimeoutError("the recording broker did not start")
        self.register()
        return self

    def register(self) -> int:
        self.zk = KafkaZkClient(self.connect, session_timeout_ms=6000)
        self.zk.start()
        self.epoch = self.zk.register_broker(BrokerRegistration(
            self.broker_id, (("PLAINTEXT", "PLAINTEXT", "127.0.0.1", self.port),),
            rack=self.rack))
        return self.epoch

    def unregister(self) -> None:
        if self.zk is not None:
            self.zk.close()
            self.zk = None

    def close(self) -> None:
        self.unregister()
        if self._token is not None and self._cancel is not None:
            cancel = self._cancel
            try:
                self._token.run_sync_soon(cancel.cancel)
            except trio.RunFinishedError:
                pass
        if self._thread is not None:
            self._thread.join(10)

    def received(self, api_key: int | None = None) -> list[tuple[int, int, Any]]:
        with self._lock:
            return [r for r in self.requests if api_key is None or r[0] == api_key]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def wait_for(self, condition: Callable[[], Any], what: str, timeout: float = 15) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {what}; received "
                                   f"{[(ApiKey(k).name, v) for k, v, _ in self.received()]}")
            time.sleep(0.02)

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            self._cancel = scope
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
            self.port = listeners[0].socket.getsockname()[1]
            self._ready.set()
            await trio.serve_listeners(self._serve, listeners)

    async def _serve(self, stream: trio.SocketStream) -> None:
        buf = bytearray()
        try:
            while True:
                while len(buf) < 4 or len(buf) < 4 + _SIZE.unpack_from(buf)[0]:
                    chunk = await stream.receive_some(1 << 16)
                    if not chunk:
                        return
                    buf += chunk
                size = _SIZE.unpack_from(buf)[0]
                frame, buf = bytes(buf[4:4 + size]), buf[4 + size:]
                request = decode_request(frame)
                header = request.header
                if header.api_key not in _CONTROLLER_REQUESTS:
                    # Real brokers follow the partitions this fake broker "leads": their
                    # fetchers' requests are not the controller's; the connection closes and
                    # they back off, as from a broker that is away.
                    return
                with self._lock:
                    self.requests.append((header.api_key, header.api_version, request.body))
                if not self.answer:
                    return
                out = encode_response(header.api_key, header.api_version,
                                      header.correlation_id,
                                      _answer(header.api_key, request.body))
                await stream.send_all(_SIZE.pack(len(out)) + out)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
