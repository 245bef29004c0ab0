"""Where a broker process stops answering: loaded into every ``python -m kafkapy`` started
with this directory on PYTHONPATH and ``KAFKAPY_PAUSES_DIR`` set (diagnosis only).

    KAFKAPY_PAUSES_DIR=/tmp/pauses PYTHONPATH=benchmarks/pauses python benchmarks/latency_tail.py

Each broker writes ``<pid>.log`` at exit (its command line first, then one line per event):

- ``step <start> <seconds> <task> cpu=<ms>``: a Trio task step longer than 1.5 ms, with the
  thread CPU it used (wall >> CPU: the process was not running, descheduled by the kernel);
- ``gc <start> <seconds> <generation>``: a collection longer than 0.5 ms;
- with ``KAFKAPY_PAUSES_SAMPLE=<ms>``, ``<pid>.samples``: the main thread's stack, sampled
  every millisecond while a step has run for more than that many ms (the sampler needs the
  GIL, so a step that holds it in C shows only where it released it).

Times are ``time.perf_counter()`` (CLOCK_MONOTONIC, one clock for every process), so they line
up with ``latency_tail.py``'s per-message times. Other processes ignore this file.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import time
from typing import Any

_DIR = os.environ.get("KAFKAPY_PAUSES_DIR", "")

if _DIR and sys.argv[:1] == ["-m"]:          # the broker: python -m kafkapy
    import trio
    import trio.abc

    _events: list[tuple[str, float, float, str]] = []
    _clock = time.perf_counter
    _gc_start = [0.0]

    def _on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            _gc_start[0] = _clock()
            return
        took = _clock() - _gc_start[0]
        if took > 0.0005:
            _events.append(("gc", _gc_start[0], took, str(info["generation"])))

    gc.callbacks.append(_on_gc)

    class _Steps(trio.abc.Instrument):
        def __init__(self) -> None:
            self.start = 0.0
            self.cpu = 0.0

        def before_task_step(self, task: trio.lowlevel.Task) -> None:
            self.start = _clock()
            self.cpu = time.thread_time()

        def after_task_step(self, task: trio.lowlevel.Task) -> None:
            took = _clock() - self.start
            if took > 0.0015:
                cpu = (time.thread_time() - self.cpu) * 1e3
                _events.append(("step", self.start, took, f"{task.name} cpu={cpu:.1f}ms"))
            self.start = 0.0

    _steps = _Steps()
    _trio_run = trio.run

    def _run(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("instruments", []).append(_steps)
        return _trio_run(*args, **kwargs)

    trio.run = _run  # type: ignore[assignment]
    _samples: list[tuple[float, str]] = []

    _sample_after = float(os.environ.get("KAFKAPY_PAUSES_SAMPLE", "0") or 0) / 1e3
    if _sample_after > 0:
        import threading

        _main = threading.main_thread().ident

        def _sample() -> None:
            while True:
                time.sleep(0.001)
                if _steps.start and _clock() - _steps.start > _sample_after:
                    frame = sys._current_frames().get(_main or 0)
                    stack: list[str] = []
                    while frame is not None and len(stack) < 16:
                        stack.append(f"{os.path.basename(frame.f_code.co_filename)}:"
                                     f"{frame.f_code.co_name}:{frame.f_lineno}")
                        frame = frame.f_back
                    _samples.append((_clock(), " <- ".join(stack)))

        threading.Thread(target=_sample, daemon=True).start()

    def _dump() -> None:
        with open(os.path.join(_DIR, f"{os.getpid()}.log"), "w") as f:
            f.write(" ".join(sys.argv) + "\n")
            for kind, start, took, what in _events:
                f.write(f"{kind} {start:.6f} {took:.6f} {what}\n")
        if _samples:
            with open(os.path.join(_DIR, f"{os.getpid()}.samples"), "w") as f:
                for at, stack in _samples:
                    f.write(f"{at:.4f} {stack}\n")

    atexit.register(_dump)
