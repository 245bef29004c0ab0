"""``./dev``, the README's test command: which Debian packages it finds missing and what it
tells the user to run. Nothing here runs apt-get: the checks run on a PATH made for the test
(``check-deps`` needs only bash builtins), and ``./dev test`` with ``KAFKAPY_DEV_NO_APT=1``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BASH = shutil.which("bash") or "/bin/bash"


@pytest.fixture
def zookeeper_home(tmp_path: Path) -> Path:
    """An Apache ZooKeeper release as ``$ZOOKEEPER_HOME`` is read: ``lib/*.jar``."""
    home = tmp_path / "zookeeper"
    (home / "lib").mkdir(parents=True)
    (home / "lib" / "zookeeper-3.8.4.jar").write_bytes(b"")
    return home


def _bin_with(tmp_path: Path, *commands: str) -> Path:
    """A PATH directory holding only ``commands`` (empty executables: ./dev only looks)."""
    directory = tmp_path / "bin"
    directory.mkdir(parents=True, exist_ok=True)
    for command in commands:
        (directory / command).write_text("#!/bin/sh\nexit 0\n")
        (directory / command).chmod(0o755)
    return directory


def _dev(script: Path, *args: str, path: Path, zookeeper_home: Path,
         **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, str(script), *args], capture_output=True, text=True, timeout=60, check=False,
        env={"PATH": str(path), "ZOOKEEPER_HOME": str(zookeeper_home), **env})


def test_check_deps_names_what_is_missing(tmp_path: Path, zookeeper_home: Path) -> None:
    path = _bin_with(tmp_path, "javac")
    done = _dev(ROOT / "dev", "check-deps", path=path, zookeeper_home=zookeeper_home)
    assert done.returncode == 1, done.stderr
    assert "missing Debian packages: kcat\n" in done.stderr
    command = "apt-get update && apt-get install -y kcat"
    assert done.stdout.strip() in {command, command.replace("apt-get", "sudo apt-get")}

    done = _dev(ROOT / "dev", "check-deps", path=_bin_with(tmp_path / "none"),
                zookeeper_home=zookeeper_home)
    assert done.returncode == 1
    assert "missing Debian packages: default-jdk-headless kcat\n" in done.stderr


def test_check_deps_passes_when_all_are_there(tmp_path: Path, zookeeper_home: Path) -> None:
    done = _dev(ROOT / "dev", "check-deps", path=_bin_with(tmp_path, "javac", "kcat"),
                zookeeper_home=zookeeper_home)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and "missing" not in done.stderr


def test_zookeeper_home_without_jars_is_reported(tmp_path: Path) -> None:
    # kafkapy/zk/zookeeper_server.py uses $ZOOKEEPER_HOME alone when it is set
    done = _dev(ROOT / "dev", "check-deps", path=_bin_with(tmp_path, "javac", "kcat"),
                zookeeper_home=tmp_path)
    assert done.returncode == 1
    assert f"ZOOKEEPER_HOME={tmp_path} holds no ZooKeeper jars" in done.stderr


def test_dev_test_says_what_to_run_instead_of_installing(tmp_path: Path,
                                                        zookeeper_home: Path) -> None:
    # A copy, so that a mistake here could only ever create tmp_path/.venv.
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copy2(ROOT / "dev", clone / "dev")
    done = _dev(clone / "dev", "test", "-k", "nothing", path=_bin_with(tmp_path, "javac"),
                zookeeper_home=zookeeper_home, KAFKAPY_DEV_NO_APT="1")
    assert done.returncode == 1, done.stderr
    assert "apt-get install -y kcat" in done.stdout
    assert not (clone / ".venv").exists()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
                if line and not line.startswith(("#", "set ", "cd "))]
    assert commands == ["exec ./dev test"]
    readme = (ROOT / "README.md").read_text()
    assert "\n./dev test\n" in readme.partition("```sh\n")[2].partition("```")[0]
