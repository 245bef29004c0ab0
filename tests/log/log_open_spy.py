"""A spy on ``Log.open`` for tests that check where logs are created: which directory, which
thread, and whether on a Trio event loop (a worker thread of ``trio.to_thread`` is not)."""

from __future__ import annotations

import threading
from pathlib import Path

import attrs
import pytest
import trio

from kafkapy.log.log import Log


@attrs.frozen
class OpenCall:
    name: str               # the directory's name
    thread: int
    on_event_loop: bool

    @property
    def log_name(self) -> str:
        """``<topic>-<partition>`` of a log opened as ``<topic>-<partition>.<id>-future``."""
        return self.name.rsplit(".", 1)[0] if self.name.endswith("-future") else self.name


def _on_event_loop() -> bool:
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True


def spy_log_open(monkeypatch: pytest.MonkeyPatch, prefix: str = "") -> list[OpenCall]:
    """Record every ``Log.open`` of a directory named ``prefix...`` from now on."""
    calls: list[OpenCall] = []
    real = Log.open.__func__        # type: ignore[attr-defined]

    def spy(cls: type[Log], directory: Path, *args: object, **kwargs: object) -> Log:
        name = Path(directory).name
        if name.startswith(prefix):
            calls.append(OpenCall(name, threading.get_ident(), _on_event_loop()))
        return real(cls, directory, *args, **kwargs)       # type: ignore[no-any-return]
    monkeypatch.setattr(Log, "open", classmethod(spy))
    return calls
