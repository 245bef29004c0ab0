"""Running a ``kafkapy <tool>`` as the user does: a subprocess (``python -m kafkapy.tools``)
with this checkout first on its path; what it printed, line by line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parents[2]


@attrs.frozen
class Run:
    code: int
    out: list[str]
    err: list[str]

    def json(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out]


def run_tool(tool: str, *args: str, prelude: str | None = None, timeout: float = 120,
             stdin: str | None = None) -> Run:
    """``python -m kafkapy.tools <tool> <args>``; with ``prelude``, Python run first through a
    ``-c`` wrapper (e.g. hiding confluent_kafka); ``stdin`` its standard input. librdkafka's
    own log lines (``%4|...``) are left out of ``err``: they are not the tool's output."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if prelude is None:
        argv = [sys.executable, "-m", "kafkapy.tools", tool, *args]
    else:
        argv = [sys.executable, "-c",
                f"{prelude}\nimport sys\nfrom kafkapy.tools.main import main\n"
                f"sys.exit(main(sys.argv[1:]))", tool, *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                          input=stdin)
    err = [line for line in done.stderr.splitlines() if not line.startswith("%")]
    return Run(done.returncode, done.stdout.splitlines(), err)
