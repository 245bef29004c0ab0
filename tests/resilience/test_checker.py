"""The checker on hand-made histories: each kind of fault counted once, a clean history zero."""

from __future__ import annotations

from tests.resilience.checker import GroupHistory, Txn, check, check_transactions, split_value


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


def test_transactions_clean() -> None:
    txns = [Txn(0, [b"t0-0", b"t0-1"], "committed"), Txn(1, [b"t1-0", b"t1-1"], "aborted"),
            Txn(2, [b"t2-0", b"t2-1"], "unknown"), Txn(3, [b"t3-0"], "unknown")]
    reads = [("rc", 0, recs((0, b"t0-0"), (5, b"t2-0"))), ("rc", 1, recs((0, b"t0-1"),
                                                                      (4, b"t2-1")))]
    report = check_transactions(txns, reads)
    assert report.ok, str(report)
    assert report.acked == 2 and report.read == 4


def test_transactions_each_fault() -> None:
    txns = [Txn(0, [b"t0-0", b"t0-1"], "committed"), Txn(1, [b"t1-0"], "aborted"),
            Txn(2, [b"t2-0", b"t2-1"], "unknown"), Txn(3, [b"t3-0"], "committed")]
    reads = [("rc", 0, recs((0, b"t0-0"), (1, b"t1-0"), (2, b"t3-0"), (3, b"t2-0"),
                            (4, b"t3-0")))]
    report = check_transactions(txns, reads, hanging=["p1: LSO 3 < HW 5"])
    assert report.counts == {"lost": 1, "duplicated": 1, "reordered": 1, "aborted_read": 1,
                             "partial": 1, "hanging": 1}, str(report)


def test_group_history_clean() -> None:
    h = GroupHistory()
    for o in range(3):
        h.consumed(0, o, "a")
    h.attempted(0, 3)
    h.committed(0, 3)
    h.consumed(0, 3, "a")
    h.attempted(0, 4)                  # the commit's answer was lost: either side is fine
    h.consumed(0, 3, "b")              # a new consumer re-reads from the acked commit
    h.consumed(0, 4, "b")
    report = h.finish([(0, o) for o in range(5)])
    assert report.ok, str(report)


def test_group_history_faults() -> None:
    h = GroupHistory()
    for o in range(4):
        h.consumed(0, o, "a")
    h.attempted(0, 4)
    h.committed(0, 4)
    h.consumed(0, 2, "b")              # behind an acknowledged commit
    h.consumed(1, 3, "b")              # nothing committed on p1: starts past 0
    report = h.finish([(0, o) for o in range(4)] + [(1, o) for o in range(4)])
    assert report.counts == {"lost": 3, "rewound": 1, "skipped": 1}, str(report)
