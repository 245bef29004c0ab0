"""The ``kafkapy`` console script: declared in pyproject, one subcommand per tool."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from kafkapy.tools import main as tools_main

if sys.version_info >= (3, 11):
    import tomllib
else:   # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_console_scripts_are_declared() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kafkapy-server"] == "kafkapy.cli:main"
    module, _, function = scripts["kafkapy"].partition(":")
    assert getattr(importlib.import_module(module), function) is tools_main.main


def test_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        tools_main.main(["dump-log", "--help"])
    assert done.value.code == 0
    assert "--files" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        tools_main.main([])                 # a tool is required
    assert done.value.code == 2
    with pytest.raises(SystemExit) as done:
        tools_main.main(["no-such-tool"])
    assert done.value.code == 2
    assert "dump-log" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import kafkapy

    with pytest.raises(SystemExit) as done:
        tools_main.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"kafkapy {kafkapy.__version__} (Python ")
