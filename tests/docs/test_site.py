"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build --strict`` (any
warning, e.g. a broken link or anchor between pages, fails), and its two generated pages cover
the code: every setting of ``kafkapy.config.SETTINGS`` in the configuration reference, with its
default and whether kafkapy acts on it, then the Kafka settings kafkapy accepts but does not
act on in a section of their own, and every ``kafkapy`` tool and flag in the CLI
reference. The site is built once per module, into a temporary directory, by a subprocess: the
same command a developer runs.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kafkapy import cli
from kafkapy.config import KAFKA_SETTINGS, SETTINGS
from kafkapy.tools import main as tools_main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    # NO_MKDOCS_2_WARNING: Material prints a banner about its successor on every build.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    assert "WARNING" not in log, log
    return out


def _page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


def _sections(page: str, tag: str) -> dict[str, str]:
    """Heading id -> the HTML from that heading to the next heading matching ``tag`` (or an
    h1/h2)."""
    parts = re.split(rf"(?=<{tag} id=)", page)
    out = {}
    for part in parts[1:]:
        match = re.match(rf'<{tag} id="([^"]+)"', part)
        assert match is not None
        # A section also ends where a higher-level one starts (the last h3 before an h2).
        out[html.unescape(match.group(1))] = re.split(r"(?=<h[12] id=)", part[1:])[0]
    return out


def test_the_site_builds_with_every_page(site: Path) -> None:
    for page in ("configuration", "cli", "embedded", "standalone", "cluster", "tools",
                 "operations", "architecture", "spark", "performance", "security"):
        assert (site / page / "index.html").is_file(), page
    assert (site / "index.html").is_file()
    assert (site / "search" / "search_index.json").is_file()


def test_every_heading_of_a_page_is_rendered_as_one(site: Path) -> None:
    """A code fence left open swallows the rest of its page without a warning: every
    ``##``/``###`` heading outside fences must come out as a heading."""
    for md in DOCS.glob("*.md"):
        wanted, fenced = 0, False
        for line in md.read_text().splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced and re.match(r"#{2,3} ", line):
                wanted += 1
        name = "" if md.stem in ("index", "README") else md.stem
        page = site / name / "index.html" if name else site / "index.html"
        if not page.is_file():
            continue
        built = len(re.findall(r"<h[23][ >]", page.read_text()))
        assert not fenced, f"{md.name}: a code fence is never closed"
        assert built == wanted, md.name


def test_every_setting_is_in_the_configuration_reference(site: Path) -> None:
    sections = _sections(_page(site, "configuration"), "h3")
    assert set(sections) == set(SETTINGS)
    for name, setting in SETTINGS.items():
        text = sections[name]
        assert f"<code>{name}</code>" in text
        if setting.default:
            assert f"<code>{html.escape(setting.default)}</code>" in text, name
        cells = [re.sub(r"<[^>]+>", "", c).strip()
                 for c in re.findall(r"<td>(.*?)</td>", text, flags=re.S)]
        # type | default | valid values | update mode | applied live | kafkapy acts on it
        assert len(cells) == 6, (name, cells)
        assert cells[3] == setting.update_mode, name
        assert cells[4] == ("yes" if setting.dynamic else "no"), name
        assert cells[5].startswith("yes" if setting.used else "no"), name


def test_kafka_only_settings_are_in_their_own_section(site: Path) -> None:
    section = _sections(_page(site, "configuration"), "h2")["kafka-only-settings"]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", section, flags=re.S):
        cells = re.findall(r"<td>(.*?)</td>", row, flags=re.S)
        if cells:
            rows[html.unescape(re.sub(r"<[^>]+>", "", cells[0]))] = cells
    public = {n: k for n, k in KAFKA_SETTINGS.items() if not k.internal}
    assert set(rows) == set(public)
    for name, kafka in public.items():
        _name, type_cell, default, mode = rows[name]
        assert type_cell.startswith(kafka.config_type.name.lower()), name
        if kafka.default:
            assert default == f"<code>{html.escape(kafka.default)}</code>", name
        assert mode.strip() == kafka.update_mode, name
    for name, kafka in KAFKA_SETTINGS.items():
        if kafka.internal:
            assert f"<code>{name}</code>" in section, name


def _commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _commands(sub)
    return found


def test_every_tool_and_flag_is_in_the_cli_reference(site: Path) -> None:
    sections = _sections(_page(site, "cli"), "h[2-4]")
    tools = _commands(tools_main.parser())
    assert len(tools) > 1
    for parser in [cli._parser("kafkapy-server"), *tools]:
        anchor = parser.prog.replace(" ", "-")
        assert anchor in sections, parser.prog
        text = sections[anchor]
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:
                continue
            for option in action.option_strings:
                assert f"<code>{option}" in text, (parser.prog, option)


def test_readme_links_into_docs_resolve() -> None:
    # README.md is outside the site (GitHub shows it), so mkdocs does not check its links.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)#\s]+)[^)]*\)", readme)
               if "://" not in t]
    assert any(t.startswith("docs/") for t in targets)
    for target in targets:
        assert (ROOT / target).exists(), target
