"""Which replica a read of several log directories uses (``pyspark_kafkapy._replicas``), on
fabricated log directories (empty segment files and checkpoints: enough to plan on), and how
``load()``'s path or paths become the directories (``_options.log_dirs``). The same against
a real cluster is tests/spark/test_cluster.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyspark_kafkapy._options import log_dirs, parse_options
from pyspark_kafkapy._planner import partition_states, plan

from kafkapy.common.topic_partition import TopicPartition


def _dir(root: Path, name: str, segments: dict[TopicPartition, list[int]],
         hws: dict[TopicPartition, int], starts: dict[TopicPartition, int] | None = None
         ) -> Path:
    d = root / name
    d.mkdir()
    for tp, bases in segments.items():
        pdir = d / f"{tp.topic}-{tp.partition}"
        pdir.mkdir()
        for base in bases:
            (pdir / f"{base:020d}.log").touch()
    for file, offsets in (("replication-offset-checkpoint", hws),
                          ("log-start-offset-checkpoint", starts or {})):
        lines = [f"{tp.topic} {tp.partition} {o}" for tp, o in offsets.items()]
        (d / file).write_text("\n".join(["0", str(len(lines)), *lines]) + "\n")
    return d


def tp(p: int) -> TopicPartition:
    return TopicPartition("t", p)


@pytest.fixture
def brokers(tmp_path: Path) -> list[Path]:
    """Three brokers' log dirs of topic t:

    - t-0 on all three: HW 100 on b, 80 on a, no checkpoint entry on c;
    - t-1 on a and c, neither with an entry (created after the last checkpoints);
    - t-2 on a and b, HW 50 on both, b's log starting at 10 (a kept more);
    - t-3 on b and c, HW 30 on both, same start: the first directory given wins;
    - t-4 on c only, HW 20, its log start checkpointed at 25 (above the stale HW).
    """
    a = _dir(tmp_path, "a", {tp(0): [0], tp(1): [0], tp(2): [0]}, {tp(0): 80, tp(2): 50})
    b = _dir(tmp_path, "b", {tp(0): [0, 60], tp(2): [10], tp(3): [0]},
             {tp(0): 100, tp(2): 50, tp(3): 30})
    c = _dir(tmp_path, "c", {tp(0): [0], tp(1): [0], tp(3): [0], tp(4): [0]},
             {tp(3): 30, tp(4): 20}, {tp(4): 25})
    return [a, b, c]


def _plan(dirs: list[Path], **options: str) -> dict[int, tuple[str, int, int]]:
    opts = parse_options({"paths": _json(dirs), "subscribe": "t", **options})
    return {r.partition: (Path(r.directory).parent.name, r.start, r.end) for r in plan(opts)}


def _json(dirs: list[Path]) -> str:
    import json

    return json.dumps([str(d) for d in dirs])


def test_the_most_advanced_replica_is_read_to_its_high_watermark(brokers: list[Path]) -> None:
    a, b, c = brokers
    assert _plan([a, b, c]) == {0: ("b", 0, 100), 2: ("a", 0, 50), 3: ("b", 0, 30)}
    # t-1 (no entry anywhere: HW 0) and t-4 (HW below its log start) have nothing to read;
    # the order of the directories changes only ties of HW and log start.
    assert _plan([c, b, a]) == {0: ("b", 0, 100), 2: ("a", 0, 50), 3: ("c", 0, 30)}
    states = partition_states(parse_options({"paths": _json([a, b, c]), "subscribe": "t"}))
    assert {p.partition: (s.directory.parent.name, s.earliest, s.latest, s.segments, s.replicas)
            for p, s in states.items()} == {
        0: ("b", 0, 100, [0, 60], 3), 1: ("a", 0, 0, [0], 2), 2: ("a", 0, 50, [0], 2),
        3: ("b", 0, 30, [0], 2), 4: ("c", 25, 25, [0], 1)}


def test_planning_uses_the_chosen_replicas_bounds(brokers: list[Path]) -> None:
    a, b, c = brokers
    # minPartitions cuts at the chosen replica's segment bases (b's 60 for t-0).
    got = sorted(_plan_ranges([a, b, c], minPartitions="8"))
    assert ("b", 0, 0, 60) in got and ("b", 0, 60, 100) in got
    # An ending offset above the HW is cut to the chosen replica's HW.
    ends = '{"t":{"0":500,"1":-1,"2":-1,"3":-1,"4":-1}}'
    assert _plan([a, b, c], endingOffsets=ends)[0] == ("b", 0, 100)
    # A single directory keeps its own view: a's t-0 reads to a's HW.
    assert _plan([a])[0] == ("a", 0, 80)


def _plan_ranges(dirs: list[Path], **options: str) -> list[tuple[str, int, int, int]]:
    opts = parse_options({"paths": _json(dirs), "subscribe": "t", **options})
    return [(Path(r.directory).parent.name, r.partition, r.start, r.end) for r in plan(opts)]


def test_path_forms(brokers: list[Path], tmp_path: Path) -> None:
    a, b, c = brokers
    want = _plan([a, b, c])
    for options in ({"path": f"{a},{b},{c}"}, {"path": f" {a} , {b},{c},"},
                    {"path": str(a), "paths": _json([b, c])}):
        opts = parse_options({**options, "subscribe": "t"})
        assert {r.partition: (Path(r.directory).parent.name, r.start, r.end)
                for r in plan(opts)} == want
    # One directory named twice (or through a symlink) is one replica, not two.
    os.symlink(b, tmp_path / "b-link")
    assert log_dirs({"paths": _json([a, a, b])}) == (str(a), str(b))
    states = partition_states(parse_options(
        {"paths": _json([a, b, tmp_path / "b-link", a]), "subscribe": "t"}))
    assert states[tp(0)].replicas == 2


@pytest.mark.parametrize(("options", "message"), [
    ({}, r"give them to load\(<log dir>\)"),
    ({"path": " , "}, "give them to load"),
    ({"paths": "/a"}, "option 'paths': expected a JSON array"),
    ({"paths": '["/a", 1]'}, "option 'paths'"),
])
def test_invalid_paths(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_options({**options, "subscribe": "t"})


def test_a_directory_that_is_not_there(brokers: list[Path], tmp_path: Path) -> None:
    opts = parse_options({"path": f"{brokers[0]},{tmp_path / 'gone'}", "subscribe": "t"})
    with pytest.raises(ValueError, match="gone is not a directory"):
        plan(opts)
