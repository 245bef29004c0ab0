"""FetchSessionHandler: the fetcher's side of an incremental fetch session (KIP-227), Kafka's
``org.apache.kafka.clients.FetchSessionHandler`` as a follower uses it.

The handler remembers what the leader's session holds for each partition (what was last
sent and acknowledged). ``build`` turns the partitions wanted now into the next request:

- no session (epoch 0): a full fetch of every partition, SessionEpoch 0 (with the old
  session's id, if any, which the leader then closes);
- a session: only the partitions that are new or whose request changed (fetch offset, log
  start offset, leader epochs, max bytes), and the ones no longer wanted as forgotten.

``handle_response`` moves the session on: a full fetch answered with a session id starts the
session at epoch 1 (with id 0 the leader kept none: the next fetch is full again); an
incremental answer bumps the epoch. A session error (FETCH_SESSION_ID_NOT_FOUND,
INVALID_FETCH_SESSION_EPOCH, or any other top-level error), or an answer for another session,
drops the session: the next fetch is full. ``handle_error`` (the connection failed) does the
same and asks the leader to close the old session.

A partition request is a plain tuple ``(topic id, fetch offset, log start offset, current
leader epoch, last fetched epoch, max bytes)``: compared as a whole, cheaply, every round.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import attrs

from kafkapy.common.topic_partition import TopicPartition

__all__ = ["FINAL_EPOCH", "INITIAL_EPOCH", "FetchBuild", "FetchSessionHandler",
           "PartitionRequest"]

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_INT32_MAX = 2**31 - 1

PartitionRequest = tuple[uuid.UUID, int, int, int, int, int]


@attrs.frozen
class FetchBuild:
    """One request's session view: ``to_send`` the partitions it lists, ``forgotten`` those
    it drops, ``wanted`` everything the session covers once it is answered."""

    session_id: int
    epoch: int
    to_send: dict[TopicPartition, PartitionRequest]
    forgotten: list[TopicPartition]
    wanted: dict[TopicPartition, PartitionRequest]

    @property
    def full(self) -> bool:
        return self.epoch == INITIAL_EPOCH


class FetchSessionHandler:
    def __init__(self) -> None:
        self.session_id = 0
        self.epoch = INITIAL_EPOCH
        self.sent: dict[TopicPartition, PartitionRequest] = {}

    def build(self, wanted: Mapping[TopicPartition, PartitionRequest]) -> FetchBuild:
        wanted = dict(wanted)
        if self.epoch == INITIAL_EPOCH:
            return FetchBuild(self.session_id, INITIAL_EPOCH, wanted, [], wanted)
        sent = self.sent
        to_send = {tp: r for tp, r in wanted.items() if sent.get(tp) != r}
        forgotten = [tp for tp in sent if tp not in wanted]
        return FetchBuild(self.session_id, self.epoch, to_send, forgotten, wanted)

    def handle_response(self, build: FetchBuild, error_code: int, session_id: int) -> bool:
        """Whether the answer can be used; the session moves on (or is dropped)."""
        if error_code != 0:
            self._reset(close=error_code not in (70, 71))
            return False
        if build.full:
            self.sent = dict(build.wanted)
            self.session_id = session_id
            self.epoch = INITIAL_EPOCH if session_id == 0 else 1
            return True
        if session_id != build.session_id:
            self._reset(close=True)
            return False
        self.sent = dict(build.wanted)
        self.epoch = 1 if self.epoch == _INT32_MAX else self.epoch + 1
        return True

    def handle_error(self) -> None:
        """The request failed on the way: start over with a full fetch that closes the old
        session."""
        self._reset(close=True)

    def _reset(self, *, close: bool) -> None:
        if not close:
            self.session_id = 0         # the leader does not know it any more
        self.epoch = INITIAL_EPOCH
        self.sent = {}
