"""Generate ``kafkapy/kafka_broker_settings.py`` from Apache Kafka's own sources.

Why a script (and why here): the list of Kafka's broker settings is Kafka's, not ours. It is
read from the Java/Scala sources of a Kafka release (a git checkout, read with ``git show`` at a
tag, nothing compiled) and written out as a checked-in Python module, so the broker never needs
Kafka's sources at run time. It lives in ``scripts/`` because it is a maintainer's tool run
against an external checkout: not part of the package, not a benchmark.

What it reads (Kafka 3.9):

- every ``.define(...)`` / ``.defineInternal(...)`` of the ConfigDefs merged into
  ``AbstractKafkaConfig.CONFIG_DEF`` (the broker's ConfigDef: ``KafkaConfig.configDef``), with
  name, type and default. Names and defaults are Java expressions (constants from other
  classes, ``"a" + B``, ``8 * 1024 * 1024``, ``TimeUnit.DAYS.toMillis(7)``, ...): a small
  expression evaluator resolves them through the classes' ``static final`` fields and
  imports. Whatever it cannot evaluate is listed (``--verbose``) and must be in
  ``HAND_RESOLVED`` below, resolved by reading the source, with a comment.
- the update mode from ``core/.../DynamicBrokerConfig.scala``: a name in ``AllDynamicConfigs``
  is dynamic, "per-broker" if in ``PerBrokerConfigs`` else "cluster-wide"; any other name is
  "read-only" (Kafka's ``DynamicBrokerConfig.dynamicConfigUpdateModes``, which the docs'
  "Update Mode" column shows).

Usage: ``python scripts/kafka_broker_settings.py --repo PATH [--tag TAG] [--check]``, PATH a
git clone of apache/kafka (or ``$KAFKA_SOURCE_REPO``)
(``--check`` exits 1 when the checked-in module differs from what would be generated).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

DEFAULT_TAG = "3.9.0-rc2"
OUTPUT = Path(__file__).resolve().parent.parent / "kafkapy" / "kafka_broker_settings.py"

# Source roots holding the classes the ConfigDefs and their constants come from.
ROOTS = ("clients/src/main/java", "server/src/main/java", "server-common/src/main/java",
         "storage/src/main/java", "group-coordinator/src/main/java", "raft/src/main/java",
         "transaction-coordinator/src/main/java", "metadata/src/main/java",
         "storage/api/src/main/java", "group-coordinator/group-coordinator-api/src/main/java")

# The ConfigDefs merged by AbstractKafkaConfig.CONFIG_DEF, in its order: (class, field or
# "configDef()" for a static method returning the ConfigDef).
CONFIG_DEFS = (
    ("RemoteLogManagerConfig", "configDef()"),
    ("ZkConfigs", "CONFIG_DEF"),
    ("ServerConfigs", "CONFIG_DEF"),
    ("KRaftConfigs", "CONFIG_DEF"),
    ("SocketServerConfigs", "CONFIG_DEF"),
    ("ReplicationConfigs", "CONFIG_DEF"),
    ("GroupCoordinatorConfig", "GROUP_COORDINATOR_CONFIG_DEF"),
    ("GroupCoordinatorConfig", "NEW_GROUP_CONFIG_DEF"),
    ("GroupCoordinatorConfig", "OFFSET_MANAGEMENT_CONFIG_DEF"),
    ("GroupCoordinatorConfig", "CONSUMER_GROUP_CONFIG_DEF"),
    ("GroupCoordinatorConfig", "SHARE_GROUP_CONFIG_DEF"),
    ("CleanerConfig", "CONFIG_DEF"),
    ("LogConfig", "SERVER_CONFIG_DEF"),
    ("ShareGroupConfig", "CONFIG_DEF"),
    ("TransactionLogConfigs", "CONFIG_DEF"),
    ("TransactionStateManagerConfigs", "CONFIG_DEF"),
    ("QuorumConfig", "CONFIG_DEF"),
    ("MetricConfigs", "CONFIG_DEF"),
    ("QuotaConfigs", "CONFIG_DEF"),
    ("BrokerSecurityConfigs", "CONFIG_DEF"),
    ("DelegationTokenManagerConfigs", "CONFIG_DEF"),
    ("PasswordEncoderConfigs", "CONFIG_DEF"),
)
ABSTRACT_KAFKA_CONFIG = ("server/src/main/java/org/apache/kafka/server/config/"
                         "AbstractKafkaConfig.java")
DYNAMIC_BROKER_CONFIG = "core/src/main/scala/kafka/server/DynamicBrokerConfig.scala"
LOG_CLEANER = "core/src/main/scala/kafka/log/LogCleaner.scala"
SOCKET_SERVER = "core/src/main/scala/kafka/network/SocketServer.scala"

# Defaults the evaluator cannot compute, resolved by reading Kafka 3.9's source.
# key: (class, setting name) -> the default as DescribeConfigs shows it (None: null).
HAND_RESOLVED: dict[str, str | None] = {
    # LogConfig.DEFAULT_COMPRESSION_TYPE = BrokerCompressionType.PRODUCER.name, "producer".
    "ServerConfigs:compression.type": "producer",
    # CompressionType.GZIP.defaultLevel() = Deflater.DEFAULT_COMPRESSION (java.util.zip) = -1.
    "ServerConfigs:compression.gzip.level": "-1",
    # CompressionType.LZ4's DEFAULT_LEVEL = 9; ZSTD's DEFAULT_LEVEL = 3 (CompressionType.java).
    "ServerConfigs:compression.lz4.level": "9",
    "ServerConfigs:compression.zstd.level": "3",
    # SocketServerConfigs.LISTENER_SECURITY_PROTOCOL_MAP_DEFAULT: SecurityProtocol.values()
    # streamed as "name:name" joined by ","; the enum's order is PLAINTEXT, SSL,
    # SASL_PLAINTEXT, SASL_SSL but the stream goes through a HashMap (ListenerName keys), whose
    # iteration order Kafka's docs show as this one.
    "SocketServerConfigs:listener.security.protocol.map":
        "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
    # ReplicationConfigs.INTER_BROKER_SECURITY_PROTOCOL_DEFAULT =
    # SecurityProtocol.PLAINTEXT.toString() (Enum.toString: its name).
    "ReplicationConfigs:security.inter.broker.protocol": "PLAINTEXT",
    # MetadataVersion.latestProduction() = LATEST_PRODUCTION = IBP_3_9_IV0, version() "3.9-IV0".
    "ReplicationConfigs:inter.broker.protocol.version": "3.9-IV0",
    # Group.GroupType.CLASSIC.toString() = "classic" (the enum's name field), one element list.
    "GroupCoordinatorConfig:group.coordinator.rebalance.protocols": "classic",
    # (int) CompressionType.NONE.id = 0.
    "GroupCoordinatorConfig:offsets.topic.compression.codec": "0",
    # UniformAssignor.class.getName(), RangeAssignor.class.getName()
    # (org.apache.kafka.coordinator.group.assignor).
    "GroupCoordinatorConfig:group.consumer.assignors":
        "org.apache.kafka.coordinator.group.assignor.UniformAssignor,"
        "org.apache.kafka.coordinator.group.assignor.RangeAssignor",
    # ConsumerGroupMigrationPolicy.DISABLED.toString() = its name field, "disabled".
    "GroupCoordinatorConfig:group.consumer.migration.policy": "disabled",
    # CleanerConfig.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND = Double.MAX_VALUE.
    "CleanerConfig:log.cleaner.io.max.bytes.per.second": "1.7976931348623157E308",
    # ServerLogConfigs.LOG_MESSAGE_FORMAT_VERSION_DEFAULT = IBP_3_0_IV1.version() = "3.0-IV1".
    "LogConfig:log.message.format.version": "3.0-IV1",
    # Sensor.RecordingLevel.INFO.toString() (no override: the name) = "INFO".
    "MetricConfigs:metrics.recording.level": "INFO",
    # SslClientAuth.NONE.toString() = name lower-cased = "none".
    "BrokerSecurityConfigs:ssl.client.auth": "none",
    # SslConfigs' static block: Java 11+ gives "TLSv1.3" and "TLSv1.2,TLSv1.3" (Kafka 3.9 needs
    # Java 11 for the broker).
    "BrokerSecurityConfigs:ssl.protocol": "TLSv1.3",
    "BrokerSecurityConfigs:ssl.enabled.protocols": "TLSv1.2,TLSv1.3",
    # KeyManagerFactory/TrustManagerFactory.getDefaultAlgorithm(): the JVM's, "SunX509" and
    # "PKIX" on OpenJDK (what Kafka's docs show).
    "BrokerSecurityConfigs:ssl.keymanager.algorithm": "SunX509",
    "BrokerSecurityConfigs:ssl.trustmanager.algorithm": "PKIX",
    # Collections.singletonList(SaslConfigs.GSSAPI_MECHANISM) = [GSSAPI].
    "BrokerSecurityConfigs:sasl.enabled.mechanisms": "GSSAPI",
    # Collections.singletonList(DEFAULT_SSL_PRINCIPAL_MAPPING_RULES) = [DEFAULT].
    "BrokerSecurityConfigs:sasl.kerberos.principal.to.local.rules": "DEFAULT",
}

TYPES = ("BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD")
IMPORTANCE = ("HIGH", "MEDIUM", "LOW")
INT_MAX, LONG_MAX = 2**31 - 1, 2**63 - 1


class Unresolved(Exception):
    pass


# ============================================================================ sources


class Sources:
    """Java classes of a Kafka tag, read lazily with ``git show``."""

    def __init__(self, repo: str, tag: str) -> None:
        self.repo, self.tag = repo, tag
        out = self._git("ls-tree", "-r", "--name-only", tag, "--", *ROOTS)
        self.paths: dict[str, list[str]] = {}
        for path in out.splitlines():
            if path.endswith(".java"):
                self.paths.setdefault(Path(path).stem, []).append(path)
        self._text: dict[str, str] = {}
        self._classes: dict[str, JavaClass] = {}

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", self.repo, *args], check=True,
                              capture_output=True, text=True).stdout

    def text(self, path: str) -> str:
        if path not in self._text:
            self._text[path] = self._git("show", f"{self.tag}:{path}")
        return self._text[path]

    def klass(self, name: str, near: str | None = None) -> JavaClass:
        """The class ``name`` (simple or fully qualified); ``near`` (a path) settles
        ambiguity by package imports."""
        if "." in name:
            simple = name.rsplit(".", 1)[1]
            wanted = name.replace(".", "/") + ".java"
            paths = [p for p in self.paths.get(simple, []) if p.endswith(wanted)]
        else:
            paths = self.paths.get(name, [])
            if len(paths) > 1 and near is not None:
                imports = self.text(near)
                paths = [p for p in paths
                         if _package_of(p) + "." + name in imports
                         or _package_of(p) == _package_of(near)] or paths
        if not paths:
            raise Unresolved(f"class {name} not found")
        path = paths[0]
        if path not in self._classes:
            self._classes[path] = JavaClass(self, path)
        return self._classes[path]


def _package_of(path: str) -> str:
    for root in ROOTS:
        if path.startswith(root + "/"):
            return str(Path(path[len(root) + 1:]).parent).replace("/", ".")
    return ""


_CONST = re.compile(r"^[ \t]*(?:(?:public|private|protected|static|final)\s+)*"
                    r"(?:[\w.]+(?:<[\w<>, ?.]*>)?(?:\[\])?)\s+([A-Z][A-Z0-9_]*)\s*=",
                    re.MULTILINE)
_STATIC_IMPORT = re.compile(r"^import\s+static\s+([\w.]+)\.(\w+|\*)\s*;", re.MULTILINE)
_IMPORT = re.compile(r"^import\s+([\w.]+)\.(\w+)\s*;", re.MULTILINE)


def _strip_comments(text: str) -> str:
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "'" :
            j = i + 1
            while text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append(" ")
            i = j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _until_semicolon(text: str, start: int) -> str:
    """The expression from ``start`` to the ``;`` that ends it (strings, brackets skipped)."""
    depth, i = 0, start
    while True:
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "'":
            i += 1
            while text[i] != "'":
                i += 2 if text[i] == "\\" else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            return text[start:i]
        i += 1


class JavaClass:
    def __init__(self, sources: Sources, path: str) -> None:
        self.sources, self.path, self.name = sources, path, Path(path).stem
        self.text = _strip_comments(sources.text(path))
        self.raw: dict[str, str] = {}
        for m in _CONST.finditer(self.text):
            self.raw.setdefault(m.group(1), _until_semicolon(self.text, m.end()).strip())
        self.static_imports = [(m.group(1), m.group(2)) for m in
                               _STATIC_IMPORT.finditer(self.text)]
        self.imports = {m.group(2): f"{m.group(1)}.{m.group(2)}" for m in
                        _IMPORT.finditer(self.text)}
        self.values: dict[str, Any] = {}

    def constant(self, name: str) -> Any:
        if name in self.values:
            return self.values[name]
        if name in self.raw:
            self.values[name] = Evaluator(self).evaluate(self.raw[name])
            return self.values[name]
        for owner, member in self.static_imports:
            if member in (name, "*"):
                try:
                    return self.sources.klass(owner).constant(name)
                except Unresolved:
                    continue
        # An interface or superclass constant: try the classes this one extends/implements.
        m = re.search(r"\b(?:class|interface)\s+" + self.name + r"\b[^{]*\{", self.text)
        if m:
            for parent in re.findall(r"\b([A-Z]\w+)\b", m.group(0))[1:]:
                try:
                    return self.klass(parent).constant(name)
                except Unresolved:
                    continue
        raise Unresolved(f"{self.name}.{name}")

    def klass(self, name: str) -> JavaClass:
        if name == self.name:
            return self
        return self.sources.klass(self.imports.get(name, name), near=self.path)

    def fqcn(self, name: str) -> str:
        if name in self.imports:
            return self.imports[name]
        return f"{_package_of(self.path)}.{name}"


# ============================================================================ expressions


_TOKEN = re.compile(r"""\s*(?:
    (?P<str>"(?:\\.|[^"\\])*")
  | (?P<num>(?:0[xX][0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)[lLdDfF]?)
  | (?P<name>[A-Za-z_$][\w$]*)
  | (?P<op>[-+*/%(),.<>\[\]{}?:!=&|])
)""", re.VERBOSE)

_TIME_UNITS = {"NANOSECONDS": 1e-6, "MICROSECONDS": 1e-3, "MILLISECONDS": 1, "SECONDS": 1000,
               "MINUTES": 60_000, "HOURS": 3_600_000, "DAYS": 86_400_000}


class JavaDouble(float):
    """A Java double (so ``"" + d`` and the default print as Java prints them)."""


class JavaClassRef(str):
    """A ``Foo.class`` literal: its fully qualified name."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out, i = [], 0
    text = text.strip()
    while i < len(text):
        m = _TOKEN.match(text, i)
        if not m or m.end() == i:
            raise Unresolved(f"cannot tokenize {text[i:i + 30]!r}")
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind)))
        i = m.end()
        while i < len(text) and text[i].isspace():
            i += 1
    return out


def _unescape(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", lambda m: chr(int(m.group(1)[1:], 16))
                  if m.group(1).startswith("u") else {"n": "\n", "t": "\t", "r": "\r"}
                  .get(m.group(1), m.group(1)), body)


def java_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, JavaDouble):
        return java_double(value)
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    return str(value)


def java_double(x: float) -> str:
    """Java's Double.toString: plain between 10^-3 and 10^7, else d.dddE<n>; the shortest
    digits that round-trip (Python's repr), as Java 19+ prints them."""
    if x != x:
        return "NaN"
    if x == 0:
        return "0.0"
    if 1e-3 <= abs(x) < 1e7:
        return repr(float(x))
    sign, digits, exponent = Decimal(repr(float(x))).normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits))
    return f"{'-' if sign else ''}{mantissa[0]}.{mantissa[1:] or '0'}E" \
           f"{exponent + len(digits) - 1}"


class Evaluator:
    """Recursive descent over one Java expression, in the scope of ``klass``."""

    def __init__(self, klass: JavaClass) -> None:
        self.klass = klass
        self.toks: list[tuple[str, str]] = []
        self.i = 0

    def evaluate(self, text: str) -> Any:
        self.toks, self.i = _tokens(text), 0
        value = self.expr()
        if self.i != len(self.toks):
            raise Unresolved(f"trailing tokens in {text!r}")
        return value

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise Unresolved("unexpected end")
        tok = self.toks[self.i]
        if expected is not None and tok[1] != expected:
            raise Unresolved(f"expected {expected!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def expr(self) -> Any:
        value = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            right = self.term()
            if op == "+" and (isinstance(value, str) or isinstance(right, str)):
                value = java_str(value) + java_str(right)
            elif op == "+":
                value = self.arith(value, right, lambda a, b: a + b)
            else:
                value = self.arith(value, right, lambda a, b: a - b)
        return value

    def term(self) -> Any:
        value = self.unary()
        while self.peek() in ("*", "/", "%"):
            op = self.take()[1]
            right = self.unary()
            if op == "*":
                value = self.arith(value, right, lambda a, b: a * b)
            elif op == "/":
                value = self.arith(value, right, lambda a, b: a / b
                                   if isinstance(a, float) or isinstance(b, float)
                                   else int(a / b))
            else:
                value = self.arith(value, right, lambda a, b: a % b)
        return value

    @staticmethod
    def arith(a: Any, b: Any, f: Callable[[Any, Any], Any]) -> Any:
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
            raise Unresolved(f"arithmetic on {a!r}, {b!r}")
        result = f(a, b)
        return JavaDouble(result) if isinstance(result, float) else result

    def unary(self) -> Any:
        if self.peek() == "-":
            self.take()
            return self.arith(0, self.unary(), lambda a, b: a - b)
        if self.peek() == "(" and self.i + 2 < len(self.toks) and \
                self.toks[self.i + 1][1] in ("int", "long", "short", "double") and \
                self.toks[self.i + 2][1] == ")":
            self.take()
            cast = self.take()[1]
            self.take(")")
            value = self.unary()
            return JavaDouble(value) if cast == "double" else int(value)
        return self.primary()

    def args(self) -> list[Any]:
        self.take("(")
        out = []
        while self.peek() != ")":
            out.append(self.expr())
            if self.peek() == ",":
                self.take()
        self.take(")")
        return out

    def primary(self) -> Any:
        kind, tok = self.take()
        if kind == "str":
            return _unescape(tok)
        if kind == "num":
            text = tok.replace("_", "")
            if text[-1] in "dDfF" and not text.lower().startswith("0x"):
                return JavaDouble(float(text[:-1]))
            if text[-1] in "lL":
                text = text[:-1]
            if "." in text or ("e" in text.lower() and not text.lower().startswith("0x")):
                return JavaDouble(float(text))
            return int(text, 0) if not text.lower().startswith("0x") else int(text, 16)
        if tok == "(":
            value = self.expr()
            self.take(")")
            return self.postfix(value)
        if kind != "name":
            raise Unresolved(f"unexpected {tok!r}")
        if tok in ("true", "false"):
            return tok == "true"
        if tok == "null":
            return None
        if tok == "new":
            return self.new()
        # a dotted name: Class.CONST, CONST, TimeUnit.X.toMillis(..), Foo.class.getName(), ...
        parts = [tok]
        while self.peek() == "." and self.i + 1 < len(self.toks):
            self.take(".")
            parts.append(self.take()[1])
            if self.peek() == "(":
                break
        if self.peek() == "(":
            return self.postfix(self.call(parts[:-1], parts[-1], self.args()))
        return self.postfix(self.name(parts))

    def new(self) -> Any:
        parts = [self.take()[1]]
        while self.peek() == ".":
            self.take(".")
            parts.append(self.take()[1])
        if self.peek() == "<":
            while self.take()[1] != ">":
                pass
        args = self.args()
        if parts[-1] in ("ArrayList", "HashSet", "LinkedHashSet") and len(args) <= 1:
            return list(args[0]) if args else []
        raise Unresolved(f"new {'.'.join(parts)}")

    def postfix(self, value: Any) -> Any:
        while self.peek() == ".":
            self.take(".")
            method = self.take()[1]
            args = self.args() if self.peek() == "(" else None
            value = self.method(value, method, args)
        return value

    def method(self, value: Any, method: str, args: list[Any] | None) -> Any:
        if method == "toString" or (method == "getName" and isinstance(value, JavaClassRef)):
            return java_str(value) if not isinstance(value, JavaClassRef) else str(value)
        if method in ("name", "toLowerCase") and isinstance(value, str):
            return value.lower() if method == "toLowerCase" else value
        if method == "doubleValue":
            return JavaDouble(value)
        if method == "version" and isinstance(value, str):       # MetadataVersion.X.version()
            return value
        raise Unresolved(f"method {method} on {value!r}")

    def name(self, parts: list[str]) -> Any:
        if parts[-1] == "class":
            return JavaClassRef(self.klass.fqcn(".".join(parts[:-1])))
        if len(parts) == 1:
            return self.klass.constant(parts[0])
        owner, member = ".".join(parts[:-1]), parts[-1]
        special = {("Long", "MAX_VALUE"): LONG_MAX, ("Integer", "MAX_VALUE"): INT_MAX,
                   ("Short", "MAX_VALUE"): 2**15 - 1, ("Long", "MIN_VALUE"): -(2**63),
                   ("Integer", "MIN_VALUE"): -(2**31)}
        if (owner, member) in special:
            return special[(owner, member)]
        if owner == "TimeUnit":
            return ("TimeUnit", member)
        # An enum constant (SecurityProtocol.PLAINTEXT, MetadataVersion.IBP_3_0_IV1, ...):
        # its name, which is what ConfigDef gets from .name / .toString for Kafka's enums.
        try:
            return self.klass.klass(owner).constant(member)
        except Unresolved:
            enum = self._enum(owner, member)
            if enum is not None:
                return enum
            raise

    def _enum(self, owner: str, member: str) -> str | None:
        try:
            klass = self.klass.klass(owner)
        except Unresolved:
            return None
        if re.search(r"\benum\s+" + klass.name + r"\b", klass.text) and \
                re.search(r"\b" + member + r"\s*[(,;]", klass.text):
            return member
        return None

    def call(self, target: list[str], method: str, args: list[Any]) -> Any:
        owner = ".".join(target)
        if len(target) == 2 and target[0] == "TimeUnit":
            unit = _TIME_UNITS[target[1]]
            scale = {"toMillis": 1, "toSeconds": 1000, "toMinutes": 60_000,
                     "toHours": 3_600_000, "toDays": 86_400_000}[method]
            return int(args[0] * unit // scale)
        if owner in ("Collections", "") and method in ("emptyList", "emptySet"):
            return []
        if owner in ("Arrays", "List", "Utils", "Set") and method in ("asList", "of", "mkSet",
                                                                    "mkList"):
            return list(args)
        if owner == "String" and method == "join":
            items = args[1] if len(args) == 2 and isinstance(args[1], list) else args[1:]
            return str(args[0]).join(java_str(v) for v in items)
        if owner in ("Utils", "String") and method == "join" and len(args) == 2:
            return str(args[1]).join(java_str(v) for v in args[0])
        if owner == "Integer" and method == "valueOf":
            return int(args[0])
        if owner == "ServerTopicConfigSynonyms" and method == "serverSynonym":
            return topic_config_synonyms(self.klass.sources)[args[0]]
        if owner == "Math" and method in ("max", "min"):
            return (max if method == "max" else min)(args)
        raise Unresolved(f"call {owner}.{method}({args!r})")


# ============================================================================ ConfigDefs


def _split_args(text: str) -> list[str]:
    out, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
        i += 1
    out.append(text[start:].strip())
    return out


def _define_calls(chain: str) -> Iterator[tuple[str, list[str]]]:
    """``(method, [argument texts])`` for each ``.define``/``.defineInternal`` in ``chain``."""
    for m in re.finditer(r"\.(define|defineInternal)\s*\(", chain):
        start = m.end()
        depth, i = 1, start
        while depth:
            c = chain[i]
            if c == '"':
                i += 1
                while chain[i] != '"':
                    i += 2 if chain[i] == "\\" else 1
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            i += 1
        yield m.group(1), _split_args(chain[start:i - 1])


def _config_def_text(klass: JavaClass, field: str) -> str:
    if field.endswith("()"):
        m = re.search(r"static\s+ConfigDef\s+" + re.escape(field[:-2]) + r"\s*\(\s*\)\s*\{"
                      r"\s*return\s+", klass.text)
        if m is None:
            raise Unresolved(f"{klass.name}.{field}")
        return _until_semicolon(klass.text, m.end())
    return klass.raw[field]


def _type_name(text: str) -> str:
    name = text.rsplit(".", 1)[-1]
    if name not in TYPES:
        raise Unresolved(f"type {text}")
    return name


def describe_default(value: Any, config_type: str) -> str | None:
    """ConfigDef.parseType then convertToString, as DescribeConfigs shows a default."""
    if value is None:
        return None
    if config_type == "LIST":
        items = value if isinstance(value, list) else \
            ([] if str(value).strip() == "" else re.split(r"\s*,\s*", str(value).strip()))
        return ",".join(java_str(v) for v in items)
    if config_type == "DOUBLE":
        return java_double(float(value))
    if config_type == "BOOLEAN":
        if isinstance(value, str):
            return value.strip().lower()
        return "true" if value else "false"
    if config_type in ("INT", "LONG", "SHORT") and isinstance(value, str):
        return str(int(value.strip()))
    if config_type in ("STRING", "CLASS", "PASSWORD") and isinstance(value, str):
        return value.strip() if config_type == "CLASS" else value
    return java_str(value)


def extract_settings(sources: Sources) -> tuple[list[dict[str, Any]], list[str]]:
    """Every setting of the broker's ConfigDef, first definition winning (ConfigDef refuses a
    name twice; Utils.mergeConfigs keeps one), and the list of unresolved expressions."""
    merged = sources.text(ABSTRACT_KAFKA_CONFIG)
    for owner, member in CONFIG_DEFS:       # the script's list must be Kafka's list
        ref = f"{owner}.{member}"
        if ref not in merged:
            raise SystemExit(f"{ref} is not merged by AbstractKafkaConfig.CONFIG_DEF any more")
    problems: list[str] = []
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for class_name, field in CONFIG_DEFS:
        klass = sources.klass(class_name)
        for method, args in _define_calls(_config_def_text(klass, field)):
            name = Evaluator(klass).evaluate(args[0])
            config_type = _type_name(args[1])
            has_default = len(args) >= 4 and args[2].rsplit(".", 1)[-1] not in IMPORTANCE
            default: str | None
            if not has_default:
                default = None
            else:
                try:
                    default = describe_default(Evaluator(klass).evaluate(args[2]), config_type)
                except Unresolved as e:
                    key = f"{class_name}:{name}"
                    if key not in HAND_RESOLVED:
                        problems.append(f"{key}: default {args[2]!r}: {e}")
                        continue
                    default = HAND_RESOLVED[key]
            if name in seen:
                continue
            seen.add(name)
            validator = None
            if has_default and len(args) >= 6 and \
                    args[3].rsplit(".", 1)[-1] not in IMPORTANCE:
                validator = _validator(klass, args[3])
            rows.append({"name": name, "type": config_type, "default": default,
                         "internal": method == "defineInternal", "validator": validator})
    return rows, problems


_SIMPLE_VALIDATORS = {"atLeast": "at_least", "between": "between", "ValidString.in": "one_of",
                      "CaseInsensitiveValidString.in": "one_of_ignore_case",
                      "ValidList.in": "each_of"}


def _validator(klass: JavaClass, text: str) -> tuple[Any, ...] | None:
    """The ConfigDef validators kafkapy re-checks, as ``(kind, *arguments)``: Range.atLeast
    and between, ValidString.in, CaseInsensitiveValidString.in and ValidList.in with values
    the evaluator resolves. Any other validator (Kafka's own classes, lambdas, enum option
    lists) gives None: the value is then only type-checked."""
    m = re.fullmatch(r"(?:ConfigDef\.)?(?:Range\.)?([\w.]+)\((.*)\)", text.strip(), re.DOTALL)
    if m is None or m.group(1) not in _SIMPLE_VALIDATORS:
        return None
    try:
        values = [Evaluator(klass).evaluate(a) for a in _split_args(m.group(2)) if a]
    except Unresolved:
        return None
    kind = _SIMPLE_VALIDATORS[m.group(1)]
    if kind in ("at_least", "between"):
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return None
        return (kind, *(float(v) if isinstance(v, JavaDouble) else v for v in values))
    if not all(isinstance(v, str) for v in values):
        return None
    return (kind, tuple(values))


# ============================================================================ update modes


def _scala_set(text: str, start_pattern: str) -> list[str]:
    """The ``Class.CONST`` members of the ``Set(...)`` literal after ``start_pattern``."""
    m = re.search(start_pattern + r"\s*(?::\s*Set\[String\]\s*)?=\s*Set\(", text)
    if m is None:
        raise SystemExit(f"{start_pattern} not found")
    depth, i = 1, m.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    body = re.sub(r"//[^\n]*", "", text[m.end():i - 1])
    return [item.strip() for item in body.split(",") if item.strip()]


def _resolve_member(sources: Sources, ref: str) -> str:
    owner, member = ref.rsplit(".", 1)
    value = sources.klass(owner).constant(member)
    assert isinstance(value, str), ref
    return value


def update_modes(sources: Sources) -> tuple[dict[str, str], set[str]]:
    """name -> "per-broker" | "cluster-wide" for Kafka's AllDynamicConfigs, and
    DynamicSecurityConfigs (dynamic only with a listener prefix)."""
    dbc = _strip_comments(sources.text(DYNAMIC_BROKER_CONFIG))
    cleaner = _strip_comments(sources.text(LOG_CLEANER))
    socket = _strip_comments(sources.text(SOCKET_SERVER))

    def names(text: str, pattern: str) -> set[str]:
        return {_resolve_member(sources, ref) for ref in _scala_set(text, pattern)}

    # The expressions this reproduces must still be Kafka's (else update this function).
    for expected in ("val DynamicSecurityConfigs = SslConfigs.RECONFIGURABLE_CONFIGS.asScala",
                     "val AllDynamicConfigs = DynamicSecurityConfigs ++\n"
                     "    LogCleaner.ReconfigurableConfigs ++\n"
                     "    DynamicLogConfig.ReconfigurableConfigs ++\n"
                     "    DynamicThreadPool.ReconfigurableConfigs ++\n"
                     "    Set(MetricConfigs.METRIC_REPORTER_CLASSES_CONFIG) ++\n"
                     "    DynamicListenerConfig.ReconfigurableConfigs ++\n"
                     "    SocketServer.ReconfigurableConfigs ++\n"
                     "    DynamicProducerStateManagerConfig ++\n"
                     "    DynamicRemoteLogConfig.ReconfigurableConfigs",
                     "val PerBrokerConfigs = (DynamicSecurityConfigs ++ "
                     "DynamicListenerConfig.ReconfigurableConfigs).diff(\n"
                     "    ClusterLevelListenerConfigs)",
                     "val NonReconfigrableLogConfigs: Set[String] = "
                     "Set(TopicConfig.MESSAGE_FORMAT_VERSION_CONFIG)"):
        if expected not in dbc:
            raise SystemExit(f"DynamicBrokerConfig.scala changed: {expected!r} not found")

    ssl = sources.klass("SslConfigs")
    security = {_resolve_member(sources, ref if "." in ref else f"SslConfigs.{ref}")
                for ref in _split_args(re.search(
                    r"RECONFIGURABLE_CONFIGS\s*=\s*Utils\.mkSet\((.*?)\);", ssl.text,
                    re.DOTALL).group(1))}    # type: ignore[union-attr]
    producer_state = names(dbc, r"val DynamicProducerStateManagerConfig")
    cluster_level_listener = names(dbc, r"val ClusterLevelListenerConfigs")
    listener = names(dbc[dbc.index("object DynamicListenerConfig"):],
                     r"val ReconfigurableConfigs")
    thread_pool = names(dbc[dbc.index("object DynamicThreadPool"):],
                        r"val ReconfigurableConfigs")
    remote = names(dbc[dbc.index("object DynamicRemoteLogConfig"):],
                   r"val ReconfigurableConfigs")
    log_cleaner = names(cleaner[cleaner.index("object LogCleaner"):],
                        r"val ReconfigurableConfigs")
    socket_server = names(socket[socket.index("object SocketServer"):],
                          r"val ReconfigurableConfigs")
    metric = {_resolve_member(sources, "MetricConfigs.METRIC_REPORTER_CLASSES_CONFIG")}
    dynamic_log = _dynamic_log_configs(sources)

    all_dynamic = (security | log_cleaner | dynamic_log | thread_pool | metric | listener
                   | socket_server | producer_state | remote)
    per_broker = (security | listener) - cluster_level_listener
    return ({n: "per-broker" if n in per_broker else "cluster-wide" for n in all_dynamic},
            security)


def _dynamic_log_configs(sources: Sources) -> set[str]:
    """DynamicLogConfig.ReconfigurableConfigs: the first broker synonym of each topic config
    but message.format.version (NonReconfigrableLogConfigs)."""
    excluded = sources.klass("TopicConfig").constant("MESSAGE_FORMAT_VERSION_CONFIG")
    return {broker for topic, broker in topic_config_synonyms(sources).items()
            if topic != excluded}


def topic_config_synonyms(sources: Sources) -> dict[str, str]:
    """ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS: topic config -> its first broker
    synonym, from the helper calls building ALL_TOPIC_CONFIG_SYNONYMS."""
    klass = sources.klass("ServerTopicConfigSynonyms")
    text = klass.raw["ALL_TOPIC_CONFIG_SYNONYMS"]
    body = text[text.index("mkMap(") + len("mkMap("):]
    prefixes = {"LogPrefix": klass.constant("LOG_PREFIX"),
                "LogCleanerPrefix": klass.constant("LOG_CLEANER_PREFIX")}
    out = {}
    for entry in _split_args(body.rstrip().rstrip(")")):
        if not entry:
            continue
        m = re.fullmatch(r"(\w+)\((.*)\)", entry, re.DOTALL)
        assert m, entry
        helper, args = m.group(1), _split_args(m.group(2))
        topic = Evaluator(klass).evaluate(args[0])
        prefix = next((p for suffix, p in prefixes.items() if helper.endswith(suffix)), "")
        if helper.startswith("sameName"):
            broker = prefix + topic
        elif helper.startswith("single"):
            broker = prefix + Evaluator(klass).evaluate(args[1])
        elif helper.startswith("list"):
            first = re.fullmatch(r'new\s+ConfigSynonym\((.*?)(?:,.*)?\)', args[1], re.DOTALL)
            assert first, args[1]
            broker = prefix + Evaluator(klass).evaluate(first.group(1))
        else:
            raise SystemExit(f"ServerTopicConfigSynonyms: unknown helper {helper}")
        out[topic] = broker
    return out


# ============================================================================ output


def render(rows: list[dict[str, Any]], modes: dict[str, str], listener_only: set[str],
           tag: str) -> str:
    script_hash = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    unknown_dynamic = sorted(set(modes) - {r["name"] for r in rows})
    if unknown_dynamic:
        raise SystemExit(f"dynamic names not in the ConfigDef: {unknown_dynamic}")
    version = tag.split("-")[0]
    lines = [
        f'"""Every broker setting of Apache Kafka {version} (its broker ConfigDef), as'
        " DescribeConfigs",
        "shows it.",
        "",
        f"GENERATED by scripts/kafka_broker_settings.py from Kafka's sources at tag ``{tag}``:"
        " do not",
        "edit. Regenerate with ``python scripts/kafka_broker_settings.py``; a test fails when"
        " this file",
        "is stale (tests/test_kafka_broker_settings.py).",
        "",
        "``KAFKA_BROKER_SETTINGS``: ``(name, type, default, update_mode, sensitive)`` per"
        " setting:",
        "",
        "- ``type``: the name of Kafka's ConfigDef.Type, which is ``kafkapy.config.ConfigType``'s"
        " member",
        "  name (this module imports nothing, so kafkapy.config can import it);",
        "- ``default``: as Kafka's ``ConfigDef.convertToString`` shows it (None: null);",
        "- ``update_mode``: Kafka's ``read-only``, ``per-broker`` or ``cluster-wide``;",
        "- ``sensitive``: a PASSWORD setting (DescribeConfigs shows no value).",
        "",
        "``KAFKA_INTERNAL_BROKER_SETTINGS``: the same for the ``defineInternal`` settings"
        " (accepted by",
        "Kafka, never described).",
        "",
        "``KAFKA_BROKER_SETTING_VALIDATORS``: name -> the ConfigDef validator, where it is one"
        " kafkapy",
        "re-checks: ``('at_least', n)``, ``('between', low, high)``, ``('one_of', values)``,",
        "``('one_of_ignore_case', values)`` or ``('each_of', values)`` (a list's items).",
        "",
        "``KAFKA_LISTENER_ONLY_DYNAMIC_SETTINGS``: DynamicSecurityConfigs, which Kafka changes"
        " dynamically",
        "only with a listener prefix (``listener.name.<l>.<setting>``).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        f'GENERATOR_SHA256: Final = "{script_hash}"',
        f'KAFKA_TAG: Final = "{tag}"',
        "",
        "KAFKA_BROKER_SETTINGS: Final[tuple[tuple[str, str, str | None, str, bool], ...]] = (",
    ]
    lines.extend(_row_lines(rows, modes, internal=False))
    lines.append(")")
    lines.append("")
    lines.append("KAFKA_INTERNAL_BROKER_SETTINGS: Final[tuple[tuple[str, str, str | None, str,"
                 " bool], ...]] = (")
    lines.extend(_row_lines(rows, modes, internal=True))
    lines.append(")")
    lines.append("")
    lines.append("")
    lines.append("KAFKA_BROKER_SETTING_VALIDATORS: Final[dict[str, tuple[object, ...]]] = {")
    for r in sorted((r for r in rows if r["validator"] is not None), key=lambda r: r["name"]):
        line = f"    {r['name']!r}: {r['validator']!r},"
        if len(line) > 100:
            line = f"    {r['name']!r}:\n        {r['validator']!r},"
        lines.append(line)
    lines.append("}")
    lines.append("")
    lines.append("KAFKA_LISTENER_ONLY_DYNAMIC_SETTINGS: Final[frozenset[str]] = frozenset({")
    lines.extend(f"    {name!r}," for name in sorted(listener_only))
    lines.append("})")
    return "\n".join(lines) + "\n"


def _row_lines(rows: list[dict[str, Any]], modes: dict[str, str], internal: bool) -> list[str]:
    """The rows as tuple literals; one longer than the project's line length gets a line a
    field (the default split at its commas, as adjacent string literals)."""
    out = []
    for r in sorted((r for r in rows if r["internal"] == internal), key=lambda r: r["name"]):
        fields = [repr(r["name"]), repr(r["type"]), repr(r["default"]),
                  repr(modes.get(r["name"], "read-only")), repr(r["type"] == "PASSWORD")]
        line = f"    ({', '.join(fields)}),"
        if len(line) <= 100:
            out.append(line)
            continue
        out.append("    (")
        for field in fields:
            if len(field) > 90 and field.startswith("'"):
                parts = field[1:-1].split(",")
                out.extend(f"        {(p + ',' if i < len(parts) - 1 else p)!r}"
                           for i, p in enumerate(parts))
                out[-1] += ","
            else:
                out.append(f"        {field},")
        out.append("    ),")
    return out


def generate(repo: str, tag: str, verbose: bool = False) -> str:
    sources = Sources(repo, tag)
    rows, problems = extract_settings(sources)
    if problems:
        raise SystemExit("Unresolved defaults (resolve them in HAND_RESOLVED):\n  "
                         + "\n  ".join(problems))
    modes, listener_only = update_modes(sources)
    if verbose:
        print(f"{len(rows)} settings ({sum(r['internal'] for r in rows)} internal), "
              f"{len(modes)} dynamic", file=sys.stderr)
    return render(rows, modes, listener_only, tag)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", default=os.environ.get("KAFKA_SOURCE_REPO"),
                        required="KAFKA_SOURCE_REPO" not in os.environ,
                        help="a git clone of apache/kafka (default: $KAFKA_SOURCE_REPO)")
    parser.add_argument("--tag", default=DEFAULT_TAG)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the checked-in module is not what would be generated")
    parser.add_argument("--verbose", "-v", action="store_true")
    args = parser.parse_args()
    text = generate(args.repo, args.tag, args.verbose)
    if args.check:
        current = OUTPUT.read_text() if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is stale: run {__file__}", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
