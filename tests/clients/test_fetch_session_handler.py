"""The fetcher's side of an incremental fetch session (Kafka's FetchSessionHandler): pure
bookkeeping, checked request by request."""

from __future__ import annotations

import uuid

from kafkapy.clients.fetch_session_handler import FetchSessionHandler
from kafkapy.common.topic_partition import TopicPartition

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
T = uuid.uuid4()


def req(offset: int, start: int = 0, epoch: int = 3) -> tuple[uuid.UUID, int, int, int, int, int]:
    return (T, offset, start, epoch, epoch - 1, 4096)


def test_full_then_only_what_changed() -> None:
    h = FetchSessionHandler()
    first = h.build({A0: req(0), A1: req(0), B0: req(5)})
    assert (first.session_id, first.epoch, first.full) == (0, 0, True)
    assert set(first.to_send) == {A0, A1, B0} and first.forgotten == []
    assert h.handle_response(first, 0, 77)
    assert (h.session_id, h.epoch) == (77, 1)
    # Nothing moved: an empty incremental fetch (the leader reads its whole session).
    quiet = h.build({A0: req(0), A1: req(0), B0: req(5)})
    assert (quiet.session_id, quiet.epoch, quiet.full) == (77, 1, False)
    assert quiet.to_send == {} and quiet.forgotten == []
    assert h.handle_response(quiet, 0, 77) and h.epoch == 2
    # A0 appended, B0's log start moved, A1 backs off (no longer wanted): forgotten.
    moved = h.build({A0: req(9), B0: req(5, start=2)})
    assert moved.to_send == {A0: req(9), B0: req(5, start=2)} and moved.forgotten == [A1]
    assert h.handle_response(moved, 0, 77) and h.epoch == 3
    assert h.sent == {A0: req(9), B0: req(5, start=2)}
    back = h.build({A0: req(9), A1: req(0), B0: req(5, start=2)})
    assert back.to_send == {A1: req(0)} and back.forgotten == []


def test_no_session_from_the_leader_keeps_fetching_in_full() -> None:
    h = FetchSessionHandler()
    first = h.build({A0: req(0)})
    assert h.handle_response(first, 0, 0)
    again = h.build({A0: req(1)})
    assert again.full and again.to_send == {A0: req(1)} and again.session_id == 0


def test_session_errors_start_over() -> None:
    for error, keeps_id in ((70, False), (71, False), (58, True)):
        h = FetchSessionHandler()
        assert h.handle_response(h.build({A0: req(0)}), 0, 5)
        incremental = h.build({A0: req(3)})
        assert not h.handle_response(incremental, error, 0)
        # Not found / bad epoch: the leader has no such session; otherwise it is closed by
        # the next full fetch, which names it.
        nxt = h.build({A0: req(3)})
        assert nxt.full and nxt.to_send == {A0: req(3)}
        assert nxt.session_id == (5 if keeps_id else 0)


def test_an_answer_for_another_session_or_a_failed_request_starts_over() -> None:
    h = FetchSessionHandler()
    assert h.handle_response(h.build({A0: req(0)}), 0, 5)
    assert not h.handle_response(h.build({A0: req(1)}), 0, 6)
    assert h.build({A0: req(1)}).full
    assert h.handle_response(h.build({A0: req(1)}), 0, 8)
    h.handle_error()
    nxt = h.build({A0: req(1)})
    assert nxt.full and nxt.session_id == 8          # closes session 8 on the leader
