"""The checker on hand-made histories: each kind of fault counted once, a clean history zero."""

from __future__ import annotations

from tests.resilience.checker import check, split_value


def recs(*pairs: tuple[int, bytes]) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(offset, None, value) for offset, value in pairs]


def test_split_value() -> None:
    assert split_value(b"hard-3-17") == ("hard-3", 17)
    assert split_value(b"plain") is None
    assert split_value(b"x-") is None


def test_a_clean_history_counts_nothing() -> None:
    acked = {b"a-0": (0, 0), b"a-1": (0, 1), b"b-0": (1, 0)}
    reads = [("consumer", 0, recs((0, b"a-0"), (1, b"a-1"), (2, b"a-2"))),
             ("broker-2", 0, recs((0, b"a-0"), (1, b"a-1"))),
             ("consumer", 1, recs((0, b"b-0")))]
    report = check(acked, [b"c-0"], reads)
    assert report.ok, str(report)
    assert report.acked == 3 and report.read == 4


def test_lost() -> None:
    report = check({b"a-0": (0, 0), b"a-1": (0, 1)}, [], [("c", 0, recs((0, b"a-0")))])
    assert report.counts["lost"] == 1 and not report.ok
    assert "a-1" in str(report) and "LOST=1" in str(report)


def test_duplicated() -> None:
    report = check({b"a-0": (0, 0)}, [], [("c", 0, recs((0, b"a-0"), (1, b"a-0")))])
    assert report.counts["duplicated"] == 1
    assert report.counts["reordered"] == 0


def test_reordered() -> None:
    report = check({}, [], [("c", 0, recs((0, b"a-0"), (1, b"a-2"), (2, b"a-1"),
                                          (3, b"b-0")))])
    assert report.counts == {**dict.fromkeys(report.counts, 0), "reordered": 1}


def test_inconsistent_across_reads() -> None:
    reads = [("broker-1", 0, recs((0, b"a-0"), (1, b"a-1"))),
             ("broker-2", 0, recs((0, b"a-0"), (1, b"z-1")))]
    report = check({}, [], reads)
    assert report.counts["inconsistent"] == 1


def test_inconsistent_with_the_acknowledged_offset() -> None:
    report = check({b"a-0": (0, 5)}, [], [("c", 0, recs((0, b"a-0")))])
    assert report.counts["inconsistent"] == 1 and report.counts["lost"] == 0


def test_failed_but_read() -> None:
    report = check({}, [b"a-1"], [("c", 0, recs((0, b"a-0"), (1, b"a-1")))])
    assert report.counts["failed_but_read"] == 1
