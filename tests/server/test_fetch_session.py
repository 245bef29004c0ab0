"""The leader's fetch session cache (Kafka's FetchSessionCache / FetchManager contexts):
pure bookkeeping; the wire behaviour is in tests/server/test_replication.py (followers) and
the kafka-python consumers of tests/clients (which use sessions)."""

from __future__ import annotations

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import FetchSessionIdNotFoundError, InvalidFetchSessionEpochError
from kafkapy.server.fetch_session import (
    INVALID_SESSION_ID,
    CachedPartition,
    FetchSessionCache,
    next_epoch,
)

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def cp(tp: TopicPartition, offset: int = 0) -> CachedPartition:
    return CachedPartition(tp, offset, 4096, 3, 2, 0)


def test_epochs() -> None:
    assert (next_epoch(-1), next_epoch(0), next_epoch(5), next_epoch(2**31 - 1)) == \
        (-1, 1, 6, 1)


def test_full_then_incremental() -> None:
    cache = FetchSessionCache(10)
    full = cache.new_context(0, 0, [cp(A0), cp(A1)], [], 1000)
    assert full.kind == "full" and [p.tp for p in full.partitions] == [A0, A1]
    sid = cache.maybe_create_session(full.partitions, True, 1000)
    assert sid != INVALID_SESSION_ID and cache.sessions[sid].epoch == 1
    # Incremental: A0 moved, B0 added, A1 forgotten; the session's partitions are read.
    inc = cache.new_context(sid, 1, [cp(A0, 7), cp(B0)], [A1], 1100)
    assert inc.kind == "incremental" and inc.expected_epoch == 2
    assert [(p.tp, p.fetch_offset) for p in inc.partitions] == [(A0, 7), (B0, 0)]
    assert cache.sessions[sid].epoch == 2 and cache.sessions[sid].last_used_ms == 1100
    # Wrong epoch, unknown id: errors, nothing read.
    bad = cache.new_context(sid, 1, [], [], 1200)
    assert bad.kind == "error" and isinstance(bad.error, InvalidFetchSessionEpochError)
    gone = cache.new_context(sid + 1, 1, [], [], 1200)
    assert isinstance(gone.error, FetchSessionIdNotFoundError)
    # Forgetting everything closes the session; the fetch is answered sessionless.
    last = cache.new_context(sid, 2, [], [A0, B0], 1300)
    assert last.kind == "sessionless" and sid not in cache.sessions


def test_a_full_fetch_closes_its_old_session_and_final_epoch_is_sessionless() -> None:
    cache = FetchSessionCache(10)
    sid = cache.maybe_create_session([cp(A0)], True, 0)
    assert cache.new_context(sid, 0, [cp(A0)], [], 10).kind == "full"
    assert sid not in cache.sessions
    sid = cache.maybe_create_session([cp(A0)], True, 0)
    assert cache.new_context(sid, -1, [cp(A0)], [], 10).kind == "sessionless"
    assert sid not in cache.sessions


def test_only_partitions_with_news_are_answered() -> None:
    p = cp(A0)
    assert p.must_respond(False, 10, 10, 0, False, False, False)       # first answer
    assert not p.must_respond(False, 10, 10, 0, False, False, False)   # nothing new
    assert p.must_respond(True, 10, 10, 0, False, False, False)        # records
    assert p.must_respond(False, 11, 10, 0, False, False, False)       # high watermark
    assert p.must_respond(False, 11, 11, 0, False, False, False)       # last stable offset
    assert p.must_respond(False, 11, 11, 3, False, False, False)       # log start
    assert p.must_respond(False, 11, 11, 3, False, True, False)        # diverging epoch
    assert p.must_respond(False, 11, 11, 3, False, False, True)        # preferred replica
    assert p.must_respond(False, 11, 11, 3, True, False, False)        # an error...
    assert p.must_respond(False, 11, 11, 3, False, False, False)       # ...then sent again


def test_eviction_is_kafkas() -> None:
    cache = FetchSessionCache(2, eviction_ms=1000)
    consumer = cache.maybe_create_session([cp(A0)], False, 0)
    follower = cache.maybe_create_session([cp(A0), cp(A1)], True, 0)
    # Full, nothing stale: a consumer cannot evict; a follower evicts the consumer's session.
    assert cache.maybe_create_session([cp(A0)], False, 500) == INVALID_SESSION_ID
    newcomer = cache.maybe_create_session([cp(B0)], True, 500)
    assert newcomer != INVALID_SESSION_ID and consumer not in cache.sessions
    # A session unused for longer than the eviction time goes first, to anyone.
    cache.sessions[follower].last_used_ms = 400
    cache.sessions[newcomer].last_used_ms = 1600
    late = cache.maybe_create_session([cp(A0)], False, 1500)
    assert late != INVALID_SESSION_ID and follower not in cache.sessions
    assert FetchSessionCache(0).maybe_create_session([cp(A0)], True, 0) == INVALID_SESSION_ID
