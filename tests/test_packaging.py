"""What a user installs: the sdist, a wheel built from that sdist, the wheel in a fresh venv.

One test, the way a release is made and used: the source tree (the files git tracks or would
track, none of the compiled modules lying in the checkout) → ``python -m build --sdist`` → the
sdist unpacked → ``python -m build --wheel`` in an isolated build environment (setuptools and
Cython from the declared build requirements only) → a fresh venv with no compiler on PATH and no
Cython, the wheel installed ``--no-deps`` and then its runtime dependencies as binary wheels →
tests/smoke.py imports every compiled module of the installed package and calls one function
of each, and both console scripts print the version. The compiled modules are enumerated from
the wheel's contents and compared with the .pyx files of this checkout, so a new extension that
setup.py forgets (or smoke.py does not exercise) fails here.

Slow by nature (two isolated builds, the Cython compile of every extension): about a minute
on two cores; needs the package index for the isolated build environments.
"""

from __future__ import annotations

import email.parser
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import kafkapy

if sys.version_info >= (3, 11):
    import tomllib
else:   # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
BUILD_TIMEOUT = 900.0


def _run(argv: list[str | Path], *, cwd: Path, env: dict[str, str] | None = None,
         timeout: float = BUILD_TIMEOUT) -> str:
    done = subprocess.run([str(arg) for arg in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _source_tree(dest: Path) -> Path:
    """The checkout as a clean clone would have it (tracked and untracked-but-not-ignored
    files): no compiled modules, no generated C, no build directories."""
    listed = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                  cwd=ROOT)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():        # a tracked file deleted in the work tree is not copied
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def _extension_name(member: str) -> str | None:
    """``_codec`` for ``kafkapy/_codec.cpython-311-x86_64-linux-gnu.so``."""
    directory, _, filename = member.rpartition("/")
    if directory != "kafkapy":
        return None
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:   # most specific first
        if filename.endswith(suffix):
            return filename[: -len(suffix)]
    return None


def _without_compiler_env(venv: Path) -> dict[str, str]:
    """The environment of a user's fresh venv: its bin/ alone on PATH (no cc, gcc, ...), no
    PYTHONPATH pointing back at this checkout."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"PYTHONPATH", "VIRTUAL_ENV", "CC", "CXX", "LDSHARED"}}
    env["PATH"] = str(venv / "bin")
    for compiler in ("cc", "gcc", "clang", "c99"):
        assert shutil.which(compiler, path=env["PATH"]) is None, compiler
    return env


@pytest.mark.timeout(3 * BUILD_TIMEOUT)
def test_wheel_from_sdist_installs_and_runs_without_build_tools(tmp_path: Path) -> None:
    pyx = {path.stem for path in (ROOT / "kafkapy").glob("*.pyx")}
    assert pyx, "no .pyx in the checkout"
    assert importlib.util.find_spec("build"), "no `python -m build`: pip install -e '.[test]'"

    # The sdist, from the source tree alone.
    source = _source_tree(tmp_path / "source")
    _run([sys.executable, "-m", "build", "--sdist", "--outdir", tmp_path / "dist", source],
         cwd=tmp_path)
    [sdist] = (tmp_path / "dist").glob("kafkapy-*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = {name.partition("/")[2] for name in archive.getnames()}
        # tarfile's "data" filter: no absolute paths, links out of the tree, devices
        archive.extractall(tmp_path / "unpacked", filter="data")
    needed = {"pyproject.toml", "setup.py", "README.md", "LICENSE"}
    for path in (ROOT / "kafkapy").iterdir():
        if path.suffix in {".pyx", ".pxd", ".h", ".pyi"} or path.name == "py.typed":
            needed.add(f"kafkapy/{path.name}")
    assert needed <= members, sorted(needed - members)

    # The wheel, from the unpacked sdist, in an isolated build environment.
    [unpacked] = (tmp_path / "unpacked").iterdir()
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", tmp_path / "wheels", unpacked],
         cwd=tmp_path)
    [wheel] = (tmp_path / "wheels").glob("kafkapy-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [metadata_name] = [name for name in names if name.endswith(".dist-info/METADATA")]
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode())
    compiled = {name for name in map(_extension_name, names) if name is not None}
    assert compiled == pyx
    assert not [name for name in names if name.endswith(".c")], "generated C in the wheel"
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names), names
    # The version has one source, kafkapy/__init__.py, read by setuptools at build time.
    assert metadata["Version"] == kafkapy.__version__
    assert metadata["License-Expression"] == "Apache-2.0"
    runtime = [requirement for requirement in metadata.get_all("Requires-Dist", [])
               if "extra ==" not in requirement]
    assert runtime, "no runtime dependencies declared"

    # A fresh venv: no compiler reachable, no Cython; the wheel needs neither.
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    env = _without_compiler_env(venv)
    python = venv / "bin" / "python"
    pip = [python, "-m", "pip", "install", "--quiet", "--only-binary", ":all:"]
    _run([*pip, "--no-deps", wheel], cwd=tmp_path, env=env)
    _run([*pip, *runtime], cwd=tmp_path, env=env)
    no_cython = ("import importlib.util, sys; "
                 "sys.exit(importlib.util.find_spec('Cython') is not None)")
    _run([python, "-c", no_cython], cwd=tmp_path, env=env)

    out = _run([python, ROOT / "tests" / "smoke.py"], cwd=tmp_path, env=env, timeout=120)
    for name in pyx:
        assert f"ok kafkapy.{name} " in out, out
    assert f"from {venv}" in out, out      # the installed package, not this checkout

    for script in ("kafkapy", "kafkapy-server"):
        version = _run([venv / "bin" / script, "--version"], cwd=tmp_path, env=env, timeout=120)
        assert version.startswith(f"{script} {kafkapy.__version__} "), version


def test_one_version_and_one_python_list() -> None:
    """The version is not written in pyproject (setuptools reads kafkapy.__version__), and the
    Pythons the wheels are built for are the ones the classifiers announce, from
    requires-python up."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = pyproject["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    dynamic = pyproject["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "kafkapy.__version__"}
    classifiers = {match.group(1) for classifier in project["classifiers"]
                   if (match := re.fullmatch(r"Programming Language :: Python :: (3\.\d+)",
                                              classifier))}
    built = {f"3.{minor}" for minor in
             re.findall(r"cp3(\d+)-\*", pyproject["tool"]["cibuildwheel"]["build"])}
    assert built == classifiers
    assert project["requires-python"] == f">={min(built, key=lambda v: int(v[2:]))}"
