"""Exactly once across task retries: a write task whose first attempt fails part way through
its rows (an exception, or its Python worker killed mid-transaction) is retried by Spark, and
a read_committed consumer sees every row once.

Spark retries tasks only with ``spark.task.maxFailures`` > 1, which in local mode is the
master string ``local[N,F]``: the job (``sink_retry_job.py``) runs in its own JVM with
``local[2,3]``. The raise case also proves that the failed attempt really produced records
(the task's error says how many rows it had produced in its aborted transaction), so the
test is not vacuous.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from kafkapy.testing import BrokerHandle
from tests.spark.conftest import ROOT, SPARK_INTEGRATION, consume

ROWS = 4000


def test_failed_attempts_are_fenced_and_retries_write_each_row_once(
        broker: BrokerHandle, tmp_path: Path) -> None:
    broker.create_topic("retry-raise", 2)
    broker.create_topic("retry-kill", 2)
    stats = tmp_path / "stats"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(SPARK_INTEGRATION)])}
    out = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("sink_retry_job.py")),
         broker.bootstrap_servers, "retry-raise", "retry-kill", str(stats), str(ROWS)],
        capture_output=True, text=True, env=env, timeout=240, check=False)
    assert out.returncode == 0 and out.stdout.strip().endswith("done"), out.stderr[-3000:]
    for topic, mode, failed_partition in (("retry-raise", "raise", 0),
                                          ("retry-kill", "kill", 1)):
        committed = Counter(int(r[4]) for r in consume(broker, topic,
                                                       isolation="read_committed"))
        assert committed == Counter(range(ROWS)), mode
        report = json.loads((stats / f"write-{mode}.json").read_text())
        attempts = {t["partition_id"]: t["attempt"] for t in report["tasks"]}
        assert attempts[failed_partition] >= 1, report      # Spark did retry that task
        assert report["rows"] == ROWS
    # The raise case's first attempt produced part of its rows (1,499 before the bad one, in
    # Arrow batches of 200: at least 1,400) in its transaction, which was aborted.
    produced = re.findall(r"failed after producing (\d+) rows", out.stderr)
    assert produced and all(1400 <= int(n) < ROWS // 2 for n in produced), out.stderr[-3000:]
    assert len(consume(broker, "retry-raise")) >= ROWS
