"""The package's layering (style.md), checked on the import statements of every module.

- ``protocol`` is sans-IO: of kafkapy it imports only itself, ``errors`` and the compiled
  ``_codec`` / ``_records``; never trio.
- ``log`` never imports ``network``, ``server`` or the coordinators; of its modules only
  ``log_manager`` (which owns the background tasks) imports trio, so the Spark reader, which
  uses ``log`` without a broker, pulls in no event loop.
- ``network`` knows frames, not Kafka APIs: of kafkapy it imports only itself, the compiled
  framer and the errors (never protocol messages, the server or the log).
- nothing in ``kafkapy`` imports pyspark (the DataSource lives outside the package).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kafkapy"


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "kafkapy":       # from kafkapy import _codec
                names.update(f"kafkapy.{alias.name}" for alias in node.names)
            else:
                names.add(node.module)
    return names


def modules(subpackage: str) -> list[Path]:
    found = sorted((PACKAGE / subpackage).rglob("*.py")) + \
        sorted((PACKAGE / subpackage).rglob("*.pyx"))
    assert found, f"no modules under {subpackage}"
    return found


def _rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


@pytest.mark.parametrize("path", modules("protocol"), ids=_rel)
def test_protocol_is_sans_io(path: Path) -> None:
    allowed = ("kafkapy.protocol", "kafkapy.errors", "kafkapy._codec", "kafkapy._records")
    for name in imports_of(path):
        if name.startswith("kafkapy"):
            assert name.startswith(allowed), f"{_rel(path)} imports {name}"
        assert name.split(".")[0] not in ("trio", "socket", "pyspark"), \
            f"{_rel(path)} imports {name}"


@pytest.mark.parametrize("path", modules("log"), ids=_rel)
def test_log_depends_on_nothing_above_it(path: Path) -> None:
    for name in imports_of(path):
        assert not name.startswith(("kafkapy.network", "kafkapy.server",
                                    "kafkapy.coordinator", "kafkapy.controller")), \
            f"{_rel(path)} imports {name}"
        if name.split(".")[0] == "trio":
            assert path.name == "log_manager.py", f"{_rel(path)} imports trio"
        assert name.split(".")[0] != "pyspark", f"{_rel(path)} imports {name}"


@pytest.mark.parametrize("path", modules("network"), ids=_rel)
def test_network_imports_no_api_layer(path: Path) -> None:
    allowed = ("kafkapy.network", "kafkapy._frames", "kafkapy.errors")
    for name in imports_of(path):
        if name.startswith("kafkapy"):
            assert name.startswith(allowed), f"{_rel(path)} imports {name}"


def test_the_checks_see_real_imports() -> None:
    # Guard against a parser that finds nothing: known imports must be seen.
    assert "trio" in imports_of(PACKAGE / "log" / "log_manager.py")
    assert "kafkapy.protocol.records" in imports_of(PACKAGE / "log" / "log.py")
    assert "kafkapy._frames" in imports_of(PACKAGE / "network" / "socket_server.py")


@pytest.mark.parametrize("path", modules("server/handlers"), ids=_rel)
def test_handlers_depend_on_the_contract_not_on_kafka_apis(path: Path) -> None:
    """Handlers import the leaf ``server.request_context``; ``server.kafka_apis`` imports
    them plainly, so an import of kafka_apis here would be a cycle."""
    assert "kafkapy.server.kafka_apis" not in imports_of(path), _rel(path)


def test_request_context_is_a_leaf() -> None:
    """``request_context`` names KafkaApis and KafkaServer for the type checker only."""
    path = PACKAGE / "server" / "request_context.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    runtime: set[str] = set()
    for node in tree.body:      # module-level statements; ``if TYPE_CHECKING:`` is skipped
        if isinstance(node, ast.ImportFrom) and node.module:
            runtime.add(node.module)
        elif isinstance(node, ast.Import):
            runtime.update(alias.name for alias in node.names)
    server = {name for name in runtime if name.startswith("kafkapy.server")}
    assert not server, f"request_context imports {server} at run time"
