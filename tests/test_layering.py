"""The package's layering (docs/architecture.md), checked on the import statements of every
module, and shown to fail on deliberate violations.

The layers, bottom up; a layer imports only what is listed for it (and itself):

- compiled modules (``_codec``, ``_records``, ``_frames``, ``_log``, ``_arrow``,
  ``_legacy``, ``_selector``, ``_fetch``, ``_produce``) and ``errors``: the floor; the one
  compiled module of the server layer, ``_replica`` (the leader's append over the replica
  manager's partitions), is imported by ``server`` only;
- ``common`` (TopicPartition, the clock, the purgatory): ``errors``;
- ``protocol``, sans-IO: ``errors``, ``_codec``, ``_records``, ``_legacy``; never trio or a socket;
- ``log``: ``common``, ``protocol``, ``errors``, ``_log``, ``_records``; never ``network``,
  ``server``, the coordinators; of its modules only ``log_manager`` (which owns the background
  tasks) imports trio, so the Spark reader pulls in no event loop;
- ``config``: ``log.config`` (topic-level settings), ``common`` (Java's number formats),
  ``errors``, ``kafka_broker_settings``
  (Kafka's own settings table, generated data that imports nothing);
- ``zk`` (Kafka's znode formats, a ZooKeeper to run beside brokers): ``common``, ``errors``;
- ``clients`` (this broker as a client of other brokers: inter-broker requests): ``common``,
  ``protocol``, ``errors``;
- ``controller`` (the ZooKeeper-mode controller): ``common``, ``zk``, ``config``,
  ``protocol``, ``clients``, ``errors``; never ``server``;
- ``network`` knows frames, not Kafka APIs: ``errors``, ``_frames``, ``_selector``;
- ``coordinator``: ``common``, ``protocol``, ``log`` (record formats, producer-state
  origins), ``config``, ``errors``, the compiled codec; **never ``server``**: it reaches the
  broker through ``coordinator.partition_port``;
- ``security``: authentication (the SASL state machine and mechanisms: ``protocol`` for the
  SASL requests, ``network`` for the authenticator contract, ``config`` for listener
  settings) and authorization (ACLs, their store: ``common``, ``zk``), ``errors``; never
  ``server``;
- ``server``: everything above;
- ``server.metrics`` (the metrics registry and the Prometheus endpoint): ``errors`` only; it
  reads the broker's state through the ``KafkaServer`` it is given, duck-typed, so the
  components it counts for can all call into it;
- ``tools`` (the ``kafkapy <tool>`` commands): ``common``, ``protocol``, ``log``,
  ``coordinator`` (record formats), ``errors``, the compiled modules; never ``server`` or
  ``network``: an offline tool reads files with the log's readers, and the network tools will
  be clients of a client library, not of the broker's internals;
- the façade (``broker``, ``cli``, ``testing``, ``__init__``): everything.

Besides the layers:

- the Spark reader (``spark_integration/pyspark_kafkapy``) imports of kafkapy only ``log``,
  ``protocol``, ``common.topic_partition``, ``errors`` and the compiled modules;
- no module imports a private name (``_x``) from a module of another package;
- no import cycle inside ``kafkapy`` (imports under ``if TYPE_CHECKING:`` excepted: they never
  run);
- nothing in ``kafkapy`` imports pyspark (the DataSource lives outside the package).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kafkapy"
SPARK = ROOT / "spark_integration" / "pyspark_kafkapy"

COMPILED = ("kafkapy._codec", "kafkapy._records", "kafkapy._frames", "kafkapy._log",
            "kafkapy._arrow", "kafkapy._legacy", "kafkapy._selector", "kafkapy._fetch",
            "kafkapy._produce")
# Compiled, but the server layer's: the bodies of ReplicaManager's and Partition's append.
SERVER_COMPILED = ("kafkapy._replica",)

# layer -> the kafkapy modules/packages it may import (besides itself)
ALLOWED: dict[str, tuple[str, ...]] = {
    "kafkapy.common": ("kafkapy.errors",),
    "kafkapy.protocol": ("kafkapy.errors", "kafkapy._codec", "kafkapy._records",
                         "kafkapy._legacy"),
    "kafkapy.log": ("kafkapy.common", "kafkapy.protocol", "kafkapy.errors", "kafkapy._log",
                    "kafkapy._records"),
    "kafkapy.config": ("kafkapy.log.config", "kafkapy.common", "kafkapy.errors",
                       "kafkapy.kafka_broker_settings"),
    "kafkapy.kafka_broker_settings": (),
    "kafkapy.zk": ("kafkapy.common", "kafkapy.errors"),
    "kafkapy.clients": ("kafkapy.common", "kafkapy.protocol", "kafkapy.errors"),
    "kafkapy.controller": ("kafkapy.common", "kafkapy.zk", "kafkapy.config", "kafkapy.protocol",
                           "kafkapy.clients", "kafkapy.errors"),
    "kafkapy.network": ("kafkapy.errors", "kafkapy._frames", "kafkapy._selector"),
    "kafkapy.coordinator": ("kafkapy.common", "kafkapy.protocol", "kafkapy.log",
                            "kafkapy.config", "kafkapy.errors", *COMPILED),
    "kafkapy.security": ("kafkapy.common", "kafkapy.zk", "kafkapy.protocol", "kafkapy.network",
                         "kafkapy.config", "kafkapy.errors"),
    "kafkapy.server": ("kafkapy.common", "kafkapy.protocol", "kafkapy.log", "kafkapy.config",
                       "kafkapy.network", "kafkapy.clients", "kafkapy.coordinator", "kafkapy.zk",
                       "kafkapy.controller", "kafkapy.security", "kafkapy.errors", *COMPILED,
                       *SERVER_COMPILED),
    "kafkapy.server.metrics": ("kafkapy.errors",),
    "kafkapy.tools": ("kafkapy.common", "kafkapy.protocol", "kafkapy.log",
                      "kafkapy.coordinator", "kafkapy.errors", *COMPILED),
}
SPARK_ALLOWED = ("kafkapy.log", "kafkapy.protocol", "kafkapy.common.topic_partition",
                 "kafkapy.errors", *COMPILED)
# Third-party modules a layer must not import.
FORBIDDEN_THIRD_PARTY: dict[str, tuple[str, ...]] = {
    "kafkapy.protocol": ("trio", "socket", "pyspark"),
    "kafkapy.log": ("pyspark",),
    "kafkapy": ("pyspark",),
}


@attrs.frozen
class Import:
    module: str          # the importing module, dotted
    target: str          # the imported module (or the package a name comes from), dotted
    names: tuple[str, ...]
    type_checking: bool  # under ``if TYPE_CHECKING:``
    line: int


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_in(source: str, module: str, *, is_package: bool = False) -> list[Import]:
    """Every import statement of ``source`` (the text of ``module``), relative ones resolved,
    at any depth (function-level imports count: a lazy import is still a dependency)."""
    tree = ast.parse(source)
    found: list[Import] = []

    def visit(node: ast.AST, type_checking: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_checking)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(module, alias.name, (), type_checking, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[:len(package) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            found.append(Import(module, base, tuple(a.name for a in node.names),
                                type_checking, node.lineno))
        for sub in ast.iter_child_nodes(node):
            visit(sub, type_checking)

    visit(tree, False)
    return found


def sources(root: Path, package_dir: Path) -> Iterator[tuple[str, Path, str]]:
    for path in sorted(package_dir.rglob("*.py")):
        yield module_name(path, root), path, path.read_text(encoding="utf-8")


KAFKAPY_MODULES = {name: (path, text) for name, path, text in sources(ROOT, PACKAGE)}
KNOWN = {*KAFKAPY_MODULES, *COMPILED, *SERVER_COMPILED}


def all_imports(modules: dict[str, tuple[Path, str]]) -> list[Import]:
    out: list[Import] = []
    for name, (path, text) in modules.items():
        out.extend(imports_in(text, name, is_package=path.name == "__init__.py"))
    return out


def imported_modules(imp: Import, known: Iterable[str]) -> list[str]:
    """The kafkapy modules an import names: ``from kafkapy.a import b`` is module
    ``kafkapy.a.b`` when that is a module, else the package ``kafkapy.a``."""
    known = set(known)
    if not imp.names:
        return [imp.target]
    out = [f"{imp.target}.{n}" for n in imp.names if f"{imp.target}.{n}" in known]
    if len(out) < len(imp.names):
        out.append(imp.target)
    return out


def _within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def layer_of(module: str) -> str | None:
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if _within(module, [layer]):
            return layer
    return None


def layer_violations(imports: Iterable[Import], known: Iterable[str]) -> list[str]:
    known = list(known)
    bad = []
    for imp in imports:
        layer = layer_of(imp.module)
        if layer is None:
            continue
        for target in imported_modules(imp, known):
            if not target.startswith("kafkapy") or _within(target, [layer]):
                continue
            if target == "kafkapy":         # from kafkapy import _codec
                continue
            if not _within(target, ALLOWED[layer]):
                bad.append(f"{imp.module}:{imp.line} imports {target} (layer {layer})")
    return bad


def third_party_violations(imports: Iterable[Import]) -> list[str]:
    bad = []
    for imp in imports:
        top = imp.target.split(".")[0]
        for layer, forbidden in FORBIDDEN_THIRD_PARTY.items():
            if _within(imp.module, [layer]) and top in forbidden:
                bad.append(f"{imp.module}:{imp.line} imports {imp.target}")
        if _within(imp.module, ["kafkapy.log"]) and top == "trio" and \
                imp.module != "kafkapy.log.log_manager":
            bad.append(f"{imp.module}:{imp.line} imports trio")
    return bad


def spark_violations(imports: Iterable[Import], known: Iterable[str]) -> list[str]:
    bad = []
    for imp in imports:
        for target in imported_modules(imp, known):
            if target.startswith("kafkapy") and target != "kafkapy" and \
                    not _within(target, SPARK_ALLOWED):
                bad.append(f"{imp.module}:{imp.line} imports {target}")
    return bad


def _package(module: str, known_packages: set[str]) -> str:
    return module if module in known_packages else module.rsplit(".", 1)[0]


def private_name_violations(imports: Iterable[Import], known_packages: set[str]) -> list[str]:
    """``from kafkapy.x.y import _name`` where the importer lives in another package than
    ``kafkapy.x.y`` (the compiled modules are the implementation of their packages' public
    modules and are imported by module, not by private name)."""
    bad = []
    for imp in imports:
        if not imp.target.startswith("kafkapy"):
            continue
        for name in imp.names:
            if name.startswith("_") and not name.startswith("__") and \
                    f"kafkapy.{name}" not in (*COMPILED, *SERVER_COMPILED):
                if _package(imp.module, known_packages) != _package(imp.target, known_packages):
                    bad.append(f"{imp.module}:{imp.line} imports {imp.target}.{name}")
    return bad


def import_cycles(imports: Iterable[Import], known: Iterable[str]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing
    itself) in the graph of runtime imports between kafkapy modules."""
    known = set(known)
    graph: dict[str, set[str]] = {m: set() for m in known}     # compiled modules: no edges
    for imp in imports:
        if imp.type_checking:
            continue
        for target in imported_modules(imp, known):
            if target in known and imp.module in known:
                graph[imp.module].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0

    def strongconnect(v: str) -> None:       # Tarjan's algorithm
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return cycles


# ================================================================== the real tree

IMPORTS = all_imports(KAFKAPY_MODULES)
PACKAGES = {name for name, (path, _) in KAFKAPY_MODULES.items() if path.name == "__init__.py"}


def test_layers() -> None:
    assert layer_violations(IMPORTS, KNOWN) == []


def test_forbidden_third_party_imports() -> None:
    assert third_party_violations(IMPORTS) == []


def test_spark_reader_uses_only_log_and_protocol() -> None:
    spark = {name: (path, text) for name, path, text in sources(SPARK.parent, SPARK)}
    assert spark, "no Spark reader modules found"
    assert spark_violations(all_imports(spark), KNOWN) == []


def test_no_private_names_across_packages() -> None:
    spark = {name: (path, text) for name, path, text in sources(SPARK.parent, SPARK)}
    assert private_name_violations([*IMPORTS, *all_imports(spark)], PACKAGES) == []


def test_no_import_cycles() -> None:
    assert import_cycles(IMPORTS, KNOWN) == []


# ===================================================== the checks see violations

def _imports(module: str, source: str) -> list[Import]:
    return imports_in(source, module)


def test_the_checks_see_real_imports() -> None:
    # Guard against a parser that finds nothing: known imports must be seen.
    targets = {(i.module, i.target) for i in IMPORTS}
    assert ("kafkapy.log.log_manager", "trio") in targets
    assert ("kafkapy.log.log", "kafkapy.protocol.records") in targets
    assert ("kafkapy.network.socket_server", "kafkapy._frames") in targets
    assert len(IMPORTS) > 500


@pytest.mark.parametrize(("module", "source"), [
    ("kafkapy.coordinator.group.group_coordinator",
     "from kafkapy.server.kafka_server import KafkaServer\n"),
    ("kafkapy.coordinator.group.group_coordinator",
     "def f():\n    from kafkapy.server import replica_manager\n"),
    ("kafkapy.coordinator.transaction.txn_markers",
     "from typing import TYPE_CHECKING\n"
     "if TYPE_CHECKING:\n    from kafkapy.server.partition import Partition\n"),
    ("kafkapy.log.log", "from kafkapy.network.socket_server import SocketServer\n"),
    ("kafkapy.protocol.codec", "import kafkapy.log.log\n"),
    ("kafkapy.network.socket_server", "from kafkapy.protocol import API_KEYS\n"),
    ("kafkapy.common.purgatory", "from kafkapy.server.replica_manager import ReplicaManager\n"),
    ("kafkapy.coordinator.group.records", "from ...server import kafka_apis\n"),
    ("kafkapy.tools.dump_log", "from kafkapy.server.replica_manager import ReplicaManager\n"),
    ("kafkapy.tools.dump_log", "from kafkapy.network import socket_server\n"),
    ("kafkapy.tools.dump_log", "from kafkapy.broker import Broker\n"),
    ("kafkapy.log.log", "from kafkapy import _replica\n"),
    ("kafkapy.coordinator.group.group_coordinator", "from kafkapy._replica import append_now\n"),
    ("kafkapy.server.metrics.broker_metrics",
     "from kafkapy.server.replica_manager import ReplicaManager\n"),
])
def test_layer_violations_are_seen(module: str, source: str) -> None:
    known = {*KNOWN, module}
    assert layer_violations(_imports(module, source), known) != []


def test_allowed_imports_are_not_violations() -> None:
    imports = _imports("kafkapy.coordinator.group.group_coordinator",
                       "from kafkapy.coordinator.partition_port import CoordinatorPartitions\n"
                       "from kafkapy.common.purgatory import DelayedOperationPurgatory\n"
                       "from kafkapy import _codec\n")
    assert layer_violations(imports, KNOWN) == []


@pytest.mark.parametrize(("module", "source"), [
    ("kafkapy.protocol.codec", "import trio\n"),
    ("kafkapy.log.segment", "import trio\n"),
    ("kafkapy.server.kafka_apis", "import pyspark.sql\n"),
])
def test_third_party_violations_are_seen(module: str, source: str) -> None:
    assert third_party_violations(_imports(module, source)) != []


def test_spark_violation_is_seen() -> None:
    imports = _imports("pyspark_kafkapy._logdir",
                       "from kafkapy.server.replica_manager import ReplicaManager\n")
    assert spark_violations(imports, KNOWN) != []
    allowed = _imports("pyspark_kafkapy._logdir",
                       "from kafkapy.log.checkpoints import read_offsets\n"
                       "from kafkapy import _arrow\n")
    assert spark_violations(allowed, KNOWN) == []


def test_private_name_violation_is_seen() -> None:
    across = _imports("kafkapy.coordinator.transaction.records",
                      "from kafkapy.coordinator.group.records import _body\n")
    assert private_name_violations(across, PACKAGES) != []
    within = _imports("kafkapy.coordinator.group.group_coordinator",
                      "from kafkapy.coordinator.group.records import _body\n")
    assert private_name_violations(within, PACKAGES) == []


def test_import_cycle_is_seen() -> None:
    a = _imports("kafkapy.x.a", "from kafkapy.x import b\n")
    b = _imports("kafkapy.x.b", "def f():\n    import kafkapy.x.c\n")
    c = _imports("kafkapy.x.c", "from kafkapy.x.a import thing\n")
    known = {"kafkapy.x", "kafkapy.x.a", "kafkapy.x.b", "kafkapy.x.c"}
    assert import_cycles([*a, *b, *c], known) == [["kafkapy.x.a", "kafkapy.x.b",
                                                   "kafkapy.x.c"]]
    # The same cycle only under TYPE_CHECKING is no cycle at run time.
    c_typing = _imports("kafkapy.x.c", "from typing import TYPE_CHECKING\n"
                        "if TYPE_CHECKING:\n    from kafkapy.x.a import thing\n")
    assert import_cycles([*a, *b, *c_typing], known) == []
