"""MkDocs hooks: the two generated pages of the documentation site.

- ``configuration.md``, the configuration reference, from ``kafkapy.config.SETTINGS`` (the one
  table every default, type, range and update mode is written in): every setting, grouped by
  what it is about, with its type, kafkapy's default (and Kafka's where they differ), the valid
  values, Kafka's update mode, whether kafkapy applies a change without a restart, and whether
  kafkapy acts on it at all (``Setting.used``); then, in a section of their own, the settings
  of Kafka's broker ConfigDef that kafkapy accepts but does not act on
  (``kafkapy.config.KAFKA_SETTINGS``): name, type, Kafka's default and update mode.
- ``cli.md``, the command-line reference, from the argparse parsers themselves:
  ``kafkapy.cli``'s for ``kafkapy-server`` and ``kafkapy.tools.main.parser()`` for
  ``kafkapy <tool>``, walked recursively, so a tool added to ``TOOLS`` appears with no edit
  here.

Nothing is written into ``docs/``: the pages are handed to MkDocs as generated files
(``on_files``), so they cannot go stale in the repository. The hook imports kafkapy from the
checkout beside this file (it is put first on ``sys.path``), so the site describes this
checkout's code, not whatever kafkapy happens to be installed. This file lives in ``docs/``
but is excluded from the site (``exclude_docs`` in mkdocs.yml) and from the runtime package.

argparse keeps its actions in private attributes (``_actions``, ``_action_groups``); reading
them is what every argparse documentation generator does, and the build fails loudly if a
Python release changes them.
"""

from __future__ import annotations

import argparse
import html
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from mkdocs.structure.files import File, Files  # noqa: E402

CONFIGURATION_PAGE = "configuration.md"
CLI_PAGE = "cli.md"


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, CONFIGURATION_PAGE, content=configuration_page()))
    files.append(File.generated(config, CLI_PAGE, content=cli_page()))
    return files


# ============================================================================ markdown helpers


def _cell(text: str) -> str:
    """Text made inert for a Markdown table cell: no emphasis, links, code or column breaks."""
    text = html.escape(" ".join(text.split()), quote=False)
    for char, entity in (("|", "&#124;"), ("*", "&#42;"), ("_", "&#95;"), ("`", "&#96;"),
                         ("[", "&#91;"), ("]", "&#93;"), ("\\", "&#92;")):
        text = text.replace(char, entity)
    return text


def _code(text: str) -> str:
    """An inline code span that survives a table cell (a ``|`` would split the column)."""
    return "<code>" + html.escape(text).replace("|", "&#124;") + "</code>"


# ============================================================================ configuration

# Groups by name, first match wins; a setting no rule claims lands in "Other settings", so a
# new setting is never left out of the reference.
_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Identity", "Who this broker is.",
     ("node.id", "broker.id", "cluster.id", "broker.rack")),
    ("Cluster: ZooKeeper and the controller",
     "Cluster mode (see [Running a cluster](cluster.md)): unset `zookeeper.connect` and the "
     "broker is a one-node cluster and none of these matter.",
     ("zookeeper.", "controlled.shutdown.", "auto.leader.rebalance.", "leader.imbalance.",
      "controller.", "inter.broker.")),
    ("Replication", "Followers fetching from leaders, and the ISR.",
     ("replica.", "num.replica.fetchers")),
    ("Listeners and connections", "The socket server and the request channel.",
     ("listeners", "advertised.listeners", "listener.", "num.network.threads",
      "num.io.threads", "queued.", "request.timeout.ms", "socket.", "connections.",
      "max.connection")),
    ("Topics and requests",
     "Defaults of new topics and limits of produce and fetch requests.",
     ("message.max.bytes", "fetch.max.bytes", "max.incremental.fetch.", "auto.create.",
      "delete.topic.", "max.request.partition.", "num.partitions",
      "default.replication.factor", "min.insync.replicas", "unclean.leader.",
      "compression.type")),
    ("Logs", "The log directories and the broker-wide defaults of topic settings "
     "(a topic's own setting, e.g. `retention.ms`, overrides `log.retention.ms`).",
     ("log.", "num.recovery.threads.")),
    ("Consumer groups and committed offsets", "The group coordinator and `__consumer_offsets`.",
     ("group.", "offsets.", "offset.")),
    ("Transactions and producer ids",
     "The transaction coordinator, `__transaction_state` and idempotent producers' state.",
     ("transaction.", "transactional.", "producer.id.")),
)
_OTHER = ("Other settings", "Settings no group above claims.")


def _group_of(name: str) -> str:
    for title, _intro, prefixes in _GROUPS:
        if name.startswith(prefixes):
            return title
    return _OTHER[0]


_TYPE_NAMES = {"BOOLEAN": "boolean", "STRING": "string", "INT": "int (32-bit)",
               "SHORT": "short (16-bit)", "LONG": "long (64-bit)", "DOUBLE": "double",
               "LIST": "list", "CLASS": "class (a Java class name)",
               "PASSWORD": "password (never shown)"}


def _valid_values(setting: Any) -> str:
    from kafkapy.config import REPLICA_SELECTOR_CLASSES
    from kafkapy.log import config as log_config

    kind = setting.kind
    if kind in ("int", "short", "long"):
        low, high = setting.at_least, setting.at_most
        if low is not None and high is not None:
            return f"[{low}, {high}]"
        if low is not None:
            return f"&ge; {low}"
        if high is not None:
            return f"&le; {high}"
        return f"any {kind}"
    if kind == "bool":
        return "<code>true</code>, <code>false</code>"
    if kind == "ratio":
        return "[0.0, 1.0]"
    if kind == "policy":
        return "<code>delete</code>, <code>compact</code>, or both (comma-separated)"
    if kind == "tstype":
        return "<code>CreateTime</code>, <code>LogAppendTime</code>"
    if kind == "compression":
        return ", ".join(_code(c) for c in log_config._COMPRESSION)
    if kind == "msgversion":
        return "a Kafka version, e.g. <code>2.8</code> or <code>3.0-IV1</code>"
    if setting.name == "replica.selector.class":
        return ", ".join(_code(c) for c in sorted(REPLICA_SELECTOR_CLASSES))
    if kind == "list":
        return "a comma-separated list"
    return "a string"


def _default(value: str | None) -> str:
    return "<em>unset</em>" if value is None else _code(value) if value else "<em>empty</em>"


def configuration_page() -> str:
    from kafkapy.config import SETTINGS

    by_group: dict[str, list[Any]] = {}
    for setting in SETTINGS.values():
        by_group.setdefault(_group_of(setting.name), []).append(setting)
    unused = [s.name for s in SETTINGS.values() if not s.used]
    dynamic = [s.name for s in SETTINGS.values() if s.dynamic]
    out = [
        "# Configuration reference",
        "",
        "<!-- Generated by docs/_hooks.py from kafkapy/config.py's SETTINGS table: "
        "edit the table, not this page. -->",
        "",
        f"Every broker setting kafkapy knows: {len(SETTINGS)} of them, with Apache Kafka's "
        "names, types, defaults and ranges. They go in a Kafka `server.properties` file, "
        "`kafkapy-server server.properties --override key=value`, or keyword arguments of "
        "`kafkapy.Broker` (`_` for `.`): see [Running it standalone](standalone.md). This "
        "page is generated from the table in `kafkapy/config.py` when the site is built, so "
        "it is always the code's.",
        "",
        "- **Default** is kafkapy's. Where Kafka's differs, Kafka's is given too: kafkapy's "
        "defaults make a broker started with no file at all a standalone broker on "
        "localhost.",
        "- **Update mode** is Kafka's (`read-only`: a restart is needed; `per-broker` / "
        "`cluster-wide`: `kafkapy configs --alter` / IncrementalAlterConfigs may change it "
        "for one broker or for all). **Applied live** says whether kafkapy applies such a "
        f"change without a restart: {len(dynamic)} settings are. kafkapy refuses a dynamic "
        "change of any other setting (INVALID_REQUEST, \"Cannot update these configs "
        "dynamically\"), even where Kafka's update mode allows one: set it in "
        "`server.properties` and restart.",
        f"- **kafkapy acts on it**: {len(SETTINGS) - len(unused)} settings are acted on. "
        f"{len(unused)} ({', '.join(f'`{n}`' for n in unused) or 'none'}) are accepted and "
        "validated, so a Kafka `server.properties` loads unchanged, but nothing in kafkapy "
        "reads them.",
        "- Every other setting of Kafka's broker is accepted too: see "
        "[Kafka settings kafkapy does not act on](#kafka-only-settings). A setting in neither "
        "table is logged once at start and ignored, as Kafka warns about unknown settings. An "
        "invalid value stops the broker with one error line.",
        "",
    ]
    groups = [*((t, i) for t, i, _p in _GROUPS), _OTHER]
    for title, intro in groups:
        settings = by_group.get(title)
        if not settings:
            continue
        out += [f"## {title}", "", intro, ""]
        for s in settings:
            default = _default(s.default)
            if s.kafka_default != s.default:
                default += f" (Kafka: {_default(s.kafka_default)})"
            live = "yes" if s.dynamic else "no"
            used = "yes" if s.used else "**no**: accepted and ignored"
            out += [
                f"### `{s.name}` {{#{s.name}}}",
                "",
                _cell(s.doc),
                "",
                "| type | default | valid values | update mode | applied live "
                "| kafkapy acts on it |",
                "| --- | --- | --- | --- | --- | --- |",
                f"| {_TYPE_NAMES.get(s.config_type.name, s.config_type.name.lower())} "
                f"| {default} | {_valid_values(s)} | {s.update_mode} | {live} | {used} |",
                "",
            ]
    return "\n".join(out + _kafka_only_section())


def _kafka_only_section() -> list[str]:
    from kafkapy.config import KAFKA_SETTINGS
    from kafkapy.kafka_broker_settings import KAFKA_TAG

    public = [k for k in KAFKA_SETTINGS.values() if not k.internal]
    internal = [k.name for k in KAFKA_SETTINGS.values() if k.internal]
    out = [
        "## Kafka settings kafkapy does not act on {#kafka-only-settings}",
        "",
        f"The other {len(public)} settings of Apache Kafka's broker (its ConfigDef at "
        f"`{KAFKA_TAG}`, read from Kafka's sources into `kafkapy/kafka_broker_settings.py` by "
        "`scripts/kafka_broker_settings.py`), so that a Kafka `server.properties` loads "
        "unchanged. kafkapy accepts each one, checks its type as Kafka does, and its range or "
        "valid values where Kafka's check is one of those (a bad value stops the broker), lists those that are set in one log line at start (\"Kafka "
        "settings kafkapy accepts but does not act on: ...\"), keeps it, and describes it "
        "(DescribeConfigs, `kafkapy configs --describe`) with Kafka's type, default and "
        "source; a password's value is never shown. Nothing in kafkapy reads them.",
        "",
        "A `per-broker` or `cluster-wide` one may be changed with IncrementalAlterConfigs / "
        "AlterConfigs and is stored like any dynamic setting (ZooKeeper "
        "`/config/brokers/<id>` or `<default>`, or the single broker's log directory), so "
        "it survives a restart; a `read-only` one is refused (\"Cannot update these configs "
        "dynamically\"). A password is stored encrypted with `password.encoder.secret`, as "
        "Kafka stores it (refused when that is not set); keystore and truststore settings "
        "change per listener only, as in Kafka. Listener overrides `listener.name.<listener>.<setting>` (and "
        "`listener.name.<listener>.<mechanism>.<setting>` for the SASL mechanism settings) "
        "are accepted likewise. When kafkapy starts acting on a setting it moves to the "
        "tables above.",
        "",
        "| setting | type | Kafka's default | update mode |",
        "| --- | --- | --- | --- |",
    ]
    for k in public:
        type_name = _TYPE_NAMES.get(k.config_type.name, k.config_type.name.lower())
        out.append(f"| {_code(k.name)} | {type_name} | {_default(k.default)} "
                   f"| {k.update_mode} |")
    out += ["", f"Kafka's internal settings are accepted too (and described when set): "
            f"{', '.join(_code(n) for n in internal)}.", ""]
    return out


# ============================================================================ command line


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[argparse._SubParsersAction[Any]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield action


def _flag(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    formatter = parser._get_formatter()
    if not action.option_strings:
        return _code(formatter._metavar_formatter(action, action.dest)(1)[0])
    args = ""
    if action.nargs != 0:
        args = " " + formatter._format_args(action, action.dest.upper())
    return ", ".join(_code(o + args) for o in action.option_strings)


def _help(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    text = parser._get_formatter()._expand_help(action) if action.help else ""
    extra = []
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        extra.append("one of " + ", ".join(_code(str(c)) for c in action.choices))
    if action.required and action.option_strings:
        extra.append("required")
    return " ".join([_cell(text), *(f"({e})" for e in extra)]).strip()


def _options(parser: argparse.ArgumentParser) -> Iterable[str]:
    for group in parser._action_groups:
        actions = [a for a in group._group_actions
                   if a.help != argparse.SUPPRESS
                   and not isinstance(a, argparse._SubParsersAction)]
        if not actions:
            continue
        title = group.title or "options"
        yield f"**{_cell(title)}**"
        yield ""
        yield "| argument | description |"
        yield "| --- | --- |"
        for action in actions:
            yield f"| {_flag(action, parser)} | {_help(action, parser) or '&nbsp;'} |"
        yield ""


def _command(parser: argparse.ArgumentParser, level: int) -> list[str]:
    name = parser.prog
    out = [f"{'#' * level} `{name}` {{#{name.replace(' ', '-')}}}", ""]
    if parser.description:
        out += [_cell(parser.description), ""]
    out += ["```text", parser.format_usage().strip(), "```", ""]
    out += list(_options(parser))
    if parser.epilog:
        out += [_cell(parser.epilog), ""]
    for action in _subparsers(parser):
        for sub in dict.fromkeys(action.choices.values()):   # aliases share one parser
            out += _command(sub, min(level + 1, 4))
    return out


def cli_page() -> str:
    from kafkapy import cli
    from kafkapy.tools import main as tools_main

    tools = tools_main.parser()
    # name -> its section's anchor (an alias links to the section of the parser it names)
    links = [(name, sub.prog.replace(" ", "-")) for action in _subparsers(tools)
             for name, sub in action.choices.items()]
    out = [
        "# Command-line reference",
        "",
        "<!-- Generated by docs/_hooks.py from the argparse parsers of kafkapy/cli.py and "
        "kafkapy/tools/: edit the parsers, not this page. -->",
        "",
        "Every command, subcommand and flag, generated from the programs' own argument "
        "parsers when the site is built. What the tools print and where they differ from "
        "Kafka's scripts: [Tools](tools.md).",
        "",
        "- `kafkapy-server` (also `python -m kafkapy`): the broker.",
        f"- `kafkapy <tool>`: {', '.join(f'[`{n}`](#{a})' for n, a in links)}.",
        "",
    ]
    out += _command(cli._parser("kafkapy-server"), 2)
    out += _command(tools, 2)
    return "\n".join(out)
