"""Incremental fetch sessions (KIP-227): the leader's side, Kafka's ``FetchSession``,
``FetchSessionCache`` and ``FetchManager`` with its fetch contexts.

A fetcher (a follower, or a consumer that supports it) that sends a full Fetch with
SessionEpoch 0 gets a session id; later fetches name the session and the next epoch and
list only the partitions whose fetch position changed (and ``ForgottenTopicsData`` for those
it stopped fetching); the broker reads every partition of the session, as the fetch it stands
for, and answers only those with something new: records, a high watermark, last stable
offset or log start offset other than last sent, a diverging epoch, a preferred read
replica, an error. A follower of a broker leading many quiet partitions (the 50 of
``__consumer_offsets``) thus sends and receives one partition per round instead of all.

- ``new_context`` (Kafka's ``FetchManager.newContext``): SessionEpoch -1 is sessionless (a
  session id with it closes that session); 0 is full, creating a session when the answer is
  built (``FullFetchContext``) if the cache has room or can evict (``max.incremental.fetch
  .session.cache.slots``, Kafka's eviction: a session unused for 2 minutes, else a less
  valuable one: unprivileged before a follower's, then the smaller); any other epoch is
  incremental: FETCH_SESSION_ID_NOT_FOUND for an unknown id, INVALID_FETCH_SESSION_EPOCH for
  an epoch other than the session's (the answer then has no partitions). A session left with
  no partitions is closed and the fetch answered sessionless.
- The session's epoch moves on when the incremental context is made; the answer checks it
  is still the one expected (a duplicate request in between gets INVALID_FETCH_SESSION_EPOCH).

Everything runs on the event loop: no locks.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import (
    FetchSessionIdNotFoundError,
    InvalidFetchSessionEpochError,
    KafkaError,
)

__all__ = [
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "INVALID_SESSION_ID",
    "CachedPartition",
    "FetchContext",
    "FetchSessionCache",
    "next_epoch",
]

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_INT32_MAX = 2**31 - 1
EVICTION_MS = 120_000       # Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS


def next_epoch(epoch: int) -> int:
    """Kafka's ``FetchMetadata.nextEpoch``: -1 stays -1; the epoch wraps to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _INT32_MAX else epoch + 1


@attrs.define(eq=False)
class CachedPartition:
    """A partition of a session: the fetcher's last request parameters, and what the last
    answer carried (-1: nothing yet, so the next answer includes it)."""

    tp: TopicPartition
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int
    last_fetched_epoch: int
    log_start_offset: int           # the fetcher's
    high_watermark: int = -1
    last_stable_offset: int = -1
    local_log_start_offset: int = -1

    def update_request(self, fetch_offset: int, max_bytes: int, current_leader_epoch: int,
                       last_fetched_epoch: int, log_start_offset: int) -> None:
        self.fetch_offset = fetch_offset
        self.max_bytes = max_bytes
        self.current_leader_epoch = current_leader_epoch
        self.last_fetched_epoch = last_fetched_epoch
        self.log_start_offset = log_start_offset

    def must_respond(self, has_records: bool, high_watermark: int, last_stable_offset: int,
                     log_start_offset: int, error: bool, diverging: bool,
                     preferred_replica: bool) -> bool:
        """Kafka's ``maybeUpdateResponseData`` (updating what was last sent)."""
        respond = has_records or diverging or preferred_replica
        if self.high_watermark != high_watermark:
            self.high_watermark = high_watermark
            respond = True
        if self.last_stable_offset != last_stable_offset:
            self.last_stable_offset = last_stable_offset
            respond = True
        if self.local_log_start_offset != log_start_offset:
            self.local_log_start_offset = log_start_offset
            respond = True
        if error:
            # Sent again once the error is gone.
            self.high_watermark = -1
            respond = True
        return respond


@attrs.define(eq=False)
class FetchSession:
    id: int
    privileged: bool
    partitions: dict[TopicPartition, CachedPartition]
    creation_ms: int
    last_used_ms: int
    epoch: int


@attrs.define(eq=False)
class FetchContext:
    """What one Fetch request is, session-wise (Kafka's Sessionless / Full / Incremental /
    SessionError fetch contexts): ``partitions`` to read, in order, as (partition, fetch
    offset, max bytes, current leader epoch, last fetched epoch, log start offset);
    ``error`` for a session error (nothing is read)."""

    kind: str                                   # "sessionless", "full", "incremental", "error"
    partitions: list[CachedPartition]
    session: FetchSession | None = None
    expected_epoch: int = 0
    error: KafkaError | None = None


class FetchSessionCache:
    """The broker's sessions, by id (Kafka's ``FetchSessionCache`` and ``FetchManager``)."""

    def __init__(self, max_entries: int, eviction_ms: int = EVICTION_MS) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self.sessions: dict[int, FetchSession] = {}
        self._random = random.Random()

    def __len__(self) -> int:
        return len(self.sessions)

    # =============================================================== contexts

    def new_context(self, session_id: int, epoch: int, requested: Sequence[CachedPartition],
                    forgotten: Iterable[TopicPartition], now_ms: int) -> FetchContext:
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != INVALID_SESSION_ID:
                self.sessions.pop(session_id, None)     # a full fetch closes its session
            return FetchContext("sessionless" if epoch == FINAL_EPOCH else "full",
                                list(requested))
        session = self.sessions.get(session_id)
        if session is None:
            return FetchContext("error", [], error=FetchSessionIdNotFoundError(
                f"fetch session {session_id} not found"))
        if session.epoch != epoch:
            return FetchContext("error", [], error=InvalidFetchSessionEpochError(
                f"fetch session {session_id} is at epoch {session.epoch}, not {epoch}"))
        cached = session.partitions
        for part in requested:
            known = cached.get(part.tp)
            if known is None:
                cached[part.tp] = part
            else:
                known.update_request(part.fetch_offset, part.max_bytes,
                                     part.current_leader_epoch, part.last_fetched_epoch,
                                     part.log_start_offset)
        for tp in forgotten:
            cached.pop(tp, None)
        if not cached:
            del self.sessions[session.id]
            return FetchContext("sessionless", list(requested))
        session.last_used_ms = now_ms
        session.epoch = next_epoch(session.epoch)
        return FetchContext("incremental", list(cached.values()), session, session.epoch)

    def maybe_create_session(self, partitions: list[CachedPartition], privileged: bool,
                             now_ms: int) -> int:
        """A new session for a full fetch's partitions (their answer already recorded in
        them); its id, or INVALID_SESSION_ID when the cache is full of sessions worth more."""
        if self.max_entries <= 0:
            return INVALID_SESSION_ID
        if len(self.sessions) >= self.max_entries and \
                not self._try_evict(privileged, len(partitions), now_ms):
            return INVALID_SESSION_ID
        while True:
            session_id = self._random.randint(1, _INT32_MAX)
            if session_id not in self.sessions:
                break
        self.sessions[session_id] = FetchSession(
            session_id, privileged, {p.tp: p for p in partitions}, now_ms, now_ms,
            next_epoch(INITIAL_EPOCH))
        return session_id

    def _try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        """Kafka's ``tryEvict``: the least recently used session if stale; else the least
        valuable evictable one (unprivileged first, then smaller, then lower id) if it is
        worth less than the newcomer. Sessions younger than the eviction time are kept
        (privileged newcomers may still evict young unprivileged ones)."""
        if not self.sessions:
            return False
        oldest = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - oldest.last_used_ms > self.eviction_ms:
            del self.sessions[oldest.id]
            return True
        candidates = [s for s in self.sessions.values()
                      if now_ms - s.creation_ms > self.eviction_ms or
                      (privileged and not s.privileged)]
        if not candidates:
            return False
        weakest = min(candidates, key=lambda s: (s.privileged, len(s.partitions), s.id))
        if (privileged, size) <= (weakest.privileged, len(weakest.partitions)):
            return False
        del self.sessions[weakest.id]
        return True
