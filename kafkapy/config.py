"""BrokerConfig: every broker setting kafkapy uses, with Apache Kafka's names, types, defaults and
validation, read from Java ``.properties`` text.

Theory of operation
-------------------

*Three layers of raw strings, one table, typed attributes derived from both.*

- ``SETTINGS`` is the table: one ``Setting`` per broker setting kafkapy knows, in Kafka's words
  (name, ConfigDef type, default as DescribeConfigs shows it, range, Kafka's "update mode") plus
  whether kafkapy can apply a change while running. It is the only place a default is written.
- A ``BrokerConfig`` holds raw ``key -> str`` layers, lowest precedence first: ``static`` (the
  ``.properties`` file with ``--override`` applied over it), ``dynamic_default`` (cluster-wide
  IncrementalAlterConfigs, resource name "") and ``dynamic`` (IncrementalAlterConfigs for this
  broker). This is Kafka's DynamicBrokerConfig order: per-broker dynamic over cluster-default
  dynamic over static over the default. ``props`` is the merge of the layers: the effective raw
  settings, unknown keys included, handed on as-is to ``LogManager(broker_props=...)``.
- Construction parses every known setting of the merge (or takes its default), checks it like
  Kafka's ConfigDef and KafkaConfig.validateValues do, and sets the typed attributes
  (``num_partitions: int``, ``listeners: list[Endpoint]``, ``log_dirs: list[Path]``, ...). The
  broker's topic defaults are finally resolved by ``LogConfig.resolve(None, props)`` and kept
  as ``log_config``: the ``log.*`` settings are parsed by ``kafkapy.log.config``'s parser (the
  one implementation of value parsing) and whatever BrokerConfig accepts, LogManager accepts.
- Any bad value raises ``InvalidConfigError`` (Kafka error 40) naming the key and the value;
  nothing is half-built. Unknown keys are not errors (Kafka only warns): they stay in
  ``props`` and ``unknown``, and ``from_properties``/``load`` log one warning listing them.
- *Kafka's other settings*: ``KAFKA_SETTINGS`` is every other setting of Kafka 3.9's broker
  ConfigDef (``kafkapy.kafka_broker_settings``, generated from Kafka's sources; SETTINGS
  wins where both have a name). Such a setting, or a listener override
  ``listener.name.<l>.<setting>`` of one, is not unknown: it is type-checked as Kafka's
  ConfigDef.parseType does, kept in the layers (``kafka_only``), listed in one log line by
  ``from_properties``, described with Kafka's type, default and sensitivity, and changed by
  ``with_updates`` where Kafka's update mode allows it. Nothing in kafkapy reads it.
- A BrokerConfig is frozen. ``with_updates`` (IncrementalAlterConfigs) returns a new one with a
  changed dynamic layer, validated in full, so the server swaps configs whole.

*Where kafkapy's defaults differ from Kafka's*: ``node.id``/``broker.id`` default to 1 (Kafka
requires ``node.id``), ``listeners`` to ``PLAINTEXT://localhost:9092`` (Kafka:
``PLAINTEXT://:9092``) and ``log.dir`` to ``./kafkapy-data`` (Kafka: ``/tmp/kafka-logs``), so a
broker started with no file at all (``BrokerConfig.load(None)``, the embedded default) is a
standalone broker on localhost keeping its data in the working directory. The ``log.*`` defaults
are LogConfig's (Kafka 4.0's, but for the ``segment.bytes`` minimum: 14 bytes, not 1 MiB, so
small segments stay possible).

*Accepted but not used*: ``num.network.threads`` (kafkapy has no network thread pool: each
connection is a Trio task). ``offsets.topic.replication.factor`` and
``transaction.state.log.replication.factor`` keep Kafka's default 3; clamping them to the number
of live brokers when the internal topic is created is the coordinators' job, not the config's.

*Security*: PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL listeners (SASL_SSL: the SSL
listener's TLS, then the SASL authenticator on top). Per-listener overrides
``listener.name.<listener lower-case>.<setting>`` (and the per-mechanism
``listener.name.<l>.<mechanism>.sasl.jaas.config``) are known keys, parsed like their setting
(the error naming the whole key); ``BrokerConfig.listener_setting`` resolves them. The PASSWORD
settings (``ssl.*`` passwords and PEM, ``sasl.jaas.config``) are sensitive: DescribeConfigs
shows no value for them; a dynamic one (``is_password_setting``) is held in clear here, the
server encrypts it when storing it (kafkapy.server.password_encoder).

*Properties syntax*: ``parse_properties`` implements ``java.util.Properties.load`` (logical lines,
``#``/``!`` comments, ``=``/``:``/whitespace separators, backslash continuations, escapes,
``\\uXXXX``). ``load`` decodes files as UTF-8 (BOM skipped), falling back to ISO-8859-1, which is
what Java uses for an InputStream; pure ASCII files (the norm) read the same either way.

Everything here is immutable after construction and safe to share between tasks and threads.
"""

from __future__ import annotations

import enum
import ipaddress
import logging
import re
import types
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

import attrs

from kafkapy.common.java_double import java_double
from kafkapy.errors import InvalidConfigError
from kafkapy.kafka_broker_settings import (
    KAFKA_BROKER_SETTING_VALIDATORS as _KAFKA_VALIDATORS,
)
from kafkapy.kafka_broker_settings import KAFKA_BROKER_SETTINGS as _KAFKA_BROKER_SETTINGS
from kafkapy.kafka_broker_settings import KAFKA_INTERNAL_BROKER_SETTINGS as _KAFKA_INTERNAL_SETTINGS
from kafkapy.kafka_broker_settings import (
    KAFKA_LISTENER_ONLY_DYNAMIC_SETTINGS as _KAFKA_LISTENER_ONLY_DYNAMIC,
)
from kafkapy.log.config import LONG_MAX, LogConfig
from kafkapy.log.config import TOPIC_CONFIG_SPEC as _TOPIC_SPEC
from kafkapy.log.config import parse_value as _parse_log_value

__all__ = [
    "AUTHORIZER_CLASSES",
    "KAFKA_SETTINGS",
    "REPLICA_SELECTOR_CLASSES",
    "SETTINGS",
    "BrokerConfig",
    "ConfigEntry",
    "ConfigSource",
    "ConfigSynonym",
    "ConfigType",
    "Endpoint",
    "KafkaSetting",
    "Setting",
    "is_password_setting",
    "kafka_setting",
    "parse_properties",
]

logger = logging.getLogger("kafkapy.config")

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1

# ============================================================================ .properties


_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")
_BLANK = " \t\f"          # Java's whitespace for .properties (line terminators aside)
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_HEX = frozenset("0123456789abcdefABCDEF")
_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``.properties`` text exactly as ``java.util.Properties.load`` reads it.

    - Natural lines end at ``\\n``, ``\\r`` or ``\\r\\n``. Leading spaces, tabs and form feeds are
      skipped; a line that is then empty is blank, one starting with ``#`` or ``!`` is a comment
      (a comment never continues onto the next line).
    - A line ending in an odd number of backslashes continues on the next natural line, whose
      leading whitespace is dropped. A backslash ending the text is dropped. Corner cases follow
      the JDK 9+ reader (Kafka's): a continuation from nothing starts a fresh line (it may be a
      comment), and a lone backslash at the very end makes an empty key.
    - The key runs to the first unescaped ``=``, ``:`` or whitespace. Whitespace after it is
      skipped, then at most one ``=`` or ``:``, then whitespace again; the rest of the line is the
      value (trailing whitespace kept; an absent value is ``""``).
    - In keys and values ``\\t \\n \\r \\f`` and ``\\uXXXX`` are escapes and a backslash before any
      other character is dropped (``\\= \\: \\# \\! \\\\`` and escaped spaces). ``\\uXXXX`` pairs
      forming a UTF-16 surrogate pair give the one character Java's String would hold.
    - A key given twice keeps its last value.

    Errors: ``ValueError`` naming the line for a malformed ``\\uXXXX`` escape, the only input Java
    refuses.
    """
    props: dict[str, str] = {}
    parts = _LINE_BREAK.split(text)
    lines, breaks = parts[0::2], parts[1::2]
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(_BLANK)
        i += 1
        if not line or line[0] in "#!":
            continue
        starts = [(0, i)]        # (offset in the logical line, natural line number)
        while (len(line) - len(line.rstrip("\\"))) % 2:
            line = line[:-1]
            if not line:
                # Nothing before the backslash: the next natural line starts afresh (so it
                # may be blank or a comment), as in Java 9+. A backslash ending the text, or
                # followed by a single \n or \r, is a line of its own there: an empty key.
                if i >= len(lines) or (i == len(lines) - 1 and not lines[i]
                                       and breaks[i - 1] != "\r\n"):
                    props[""] = ""
                break
            if i >= len(lines):
                break
            starts.append((len(line), i + 1))
            line += lines[i].lstrip(_BLANK)
            i += 1
        if not line:
            continue
        key, value = _split_logical_line(line, starts)
        props[key] = value
    return props


def _split_logical_line(line: str, starts: list[tuple[int, int]]) -> tuple[str, str]:
    n = len(line)
    end = n
    has_separator = False
    escaped = False
    for k, c in enumerate(line):
        if not escaped and c in "=:":
            end, has_separator = k, True
            break
        if not escaped and c in _BLANK:
            end = k
            break
        escaped = c == "\\" and not escaped
    j = min(end + 1, n)
    while j < n:
        c = line[j]
        if c not in _BLANK:
            if has_separator or c not in "=:":
                break
            has_separator = True
        j += 1
    return _unescape(line[:end], 0, starts), _unescape(line[j:], j, starts)


def _unescape(raw: str, base: int, starts: list[tuple[int, int]]) -> str:
    if "\\" not in raw:
        return raw
    out: list[str] = []
    k, n = 0, len(raw)
    while k < n:
        c = raw[k]
        k += 1
        if c != "\\":
            out.append(c)
            continue
        if k == n:               # only a backslash ending the text can be left here: dropped
            break
        c = raw[k]
        k += 1
        if c != "u":
            out.append(_ESCAPES.get(c, c))
            continue
        digits = raw[k:k + 4]
        if len(digits) < 4 or not _HEX.issuperset(digits):
            position = base + k - 2
            line_no = max(no for offset, no in starts if offset <= position)
            raise ValueError(f"line {line_no}: malformed \\uxxxx encoding "
                             f"{raw[k - 2:k + 4]!r}")
        out.append(chr(int(digits, 16)))
        k += 4
    text = "".join(out)
    if _SURROGATE.search(text):
        # Java strings are UTF-16: an escaped high+low surrogate pair is one character.
        try:
            text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        except UnicodeDecodeError:
            pass                 # a lone surrogate stays as Java would keep it
    return text


# ============================================================================ DescribeConfigs


class ConfigSource(enum.IntEnum):
    """Kafka's DescribeConfigsResponse.ConfigSource ids (the ``ConfigSource`` int8 on the wire)."""

    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ConfigType(enum.IntEnum):
    """Kafka's DescribeConfigsResponse.ConfigType ids (``ConfigType``, DescribeConfigs v3+)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


@attrs.frozen
class ConfigSynonym:
    """One place a setting's value can come from, in precedence order (DescribeConfigs v1+)."""

    name: str
    value: str | None
    source: ConfigSource


@attrs.frozen
class ConfigEntry:
    """One row of DescribeConfigs for the broker resource.

    ``is_default`` is what v0 sends (true when the source is DEFAULT_CONFIG); ``read_only`` is
    true unless kafkapy can change the setting at runtime; ``sensitive`` entries have no value.
    """

    name: str
    value: str | None
    source: ConfigSource
    is_default: bool
    read_only: bool
    sensitive: bool
    synonyms: tuple[ConfigSynonym, ...]
    config_type: ConfigType = ConfigType.UNKNOWN
    documentation: str | None = None


@attrs.frozen
class Endpoint:
    """A listener: ``name`` (upper-cased, as Kafka's ListenerName.normalised), ``host`` (``""``
    for all interfaces; IPv6 without brackets) and ``port`` (0 asks the OS for a free port).

    For an advertised endpoint, ``""`` and port 0 are resolved when the broker starts (Kafka:
    the canonical host name and the bound port), not here.
    """

    name: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


# ============================================================================ the settings


_SAME: Final = "\x00same-as-kafka"


@attrs.frozen
class Setting:
    """A broker setting as Kafka's ConfigDef declares it, plus what kafkapy does with it.

    ``default`` is kafkapy's default as DescribeConfigs shows it (None: no value); it equals
    ``kafka_default`` except where the module docstring says otherwise. ``update_mode`` is
    Kafka's ("read-only", "per-broker" or "cluster-wide"); ``dynamic`` says whether kafkapy
    applies a change without a restart (IncrementalAlterConfigs). ``attr`` is the BrokerConfig
    attribute holding the parsed value. ``used`` is false for a setting kafkapy accepts and
    validates (so a Kafka ``server.properties`` loads unchanged) but that nothing in kafkapy
    acts on; the documentation site's configuration reference shows it.
    """

    name: str
    config_type: ConfigType
    default: str | None
    doc: str
    kind: str
    at_least: int | None
    at_most: int | None
    update_mode: str
    dynamic: bool
    kafka_default: str | None
    attr: str | None
    used: bool = True


_KIND_OF_TYPE = {ConfigType.BOOLEAN: "bool", ConfigType.STRING: "string", ConfigType.INT: "int",
                 ConfigType.SHORT: "short", ConfigType.LONG: "long", ConfigType.DOUBLE: "ratio",
                 ConfigType.LIST: "list", ConfigType.PASSWORD: "password"}


def _s(name: str, config_type: ConfigType, default: str | None, doc: str, *,
       kind: str | None = None, at_least: int | None = None, at_most: int | None = None,
       mode: str = "read-only", dynamic: bool = False, kafka_default: str | None = _SAME,
       attr: str | None = _SAME, used: bool = True) -> Setting:
    return Setting(
        name=name, config_type=config_type, default=default, doc=doc,
        kind=kind or _KIND_OF_TYPE[config_type], at_least=at_least, at_most=at_most,
        update_mode=mode, dynamic=dynamic,
        kafka_default=default if kafka_default == _SAME else kafka_default,
        attr=name.replace(".", "_") if attr == _SAME else attr, used=used)


_B, _S, _I, _SH, _L, _D, _LI = (ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT,
                                 ConfigType.SHORT, ConfigType.LONG, ConfigType.DOUBLE,
                                 ConfigType.LIST)
_PW = ConfigType.PASSWORD
_CW = "cluster-wide"
_LMAX = str(LONG_MAX)
_IMAX = str(_INT_MAX)

# Defaults, types and ranges: Kafka's ServerConfigs, SocketServerConfigs, ServerLogConfigs and
# LogConfig.SERVER_CONFIG_DEF, ReplicationConfigs, CleanerConfig, GroupCoordinatorConfig,
# TransactionLogConfig and TransactionStateManagerConfig. Update modes: DynamicBrokerConfig
# (AllDynamicConfigs; per-broker = listener configs). Dynamic in kafkapy: the topic defaults the
# LogManager re-resolves (reconfigure_broker), the connection limits and the handler count.
_TABLE: tuple[Setting, ...] = (
    # ---------------------------------------------------------------- identity
    _s("node.id", _I, "1", "The id of this node. kafkapy defaults to 1 so a standalone broker "
       "needs no setting (Kafka requires it). broker.id is accepted as an alias.",
       at_least=0, kafka_default="-1", attr=None),
    _s("broker.id", _I, "1", "Alias of node.id: Kafka copies one to the other when only one is "
       "set; when both are set they must be equal.", at_least=0, kafka_default="-1", attr=None),
    _s("cluster.id", _S, None, "kafkapy only (Kafka keeps it in meta.properties, written by "
       "kafka-storage format): the cluster id each log dir's meta.properties must carry, a Kafka "
       "Uuid (22 characters of URL-safe base64). Unset: read from meta.properties, or generated "
       "for a new log dir.", kafka_default=None),
    _s("broker.rack", _S, None, "Rack of the broker, returned in Metadata responses."),
    # ---------------------------------------------------------------- cluster (ZooKeeper)
    _s("zookeeper.connect", _S, None, "host:port[,host:port...][/chroot] of the ZooKeeper "
       "ensemble of a cluster (Kafka's ZooKeeper mode, 2.8-3.x). Unset: a one-node cluster "
       "without ZooKeeper (the embedded default).", kafka_default=None),
    _s("zookeeper.session.timeout.ms", _I, "18000", "ZooKeeper session timeout: a broker "
       "that stops heartbeating for this long loses its registration (and its partitions' "
       "leadership).", at_least=1),
    _s("zookeeper.connection.timeout.ms", _I, None, "How long a broker waits to connect to "
       "ZooKeeper at start before it fails; unset, zookeeper.session.timeout.ms.",
       kafka_default=None),
    _s("controlled.shutdown.enable", _B, "true", "On a clean stop, ask the controller to move "
       "this broker's leaderships away first (ControlledShutdown)."),
    _s("controlled.shutdown.max.retries", _I, "3", "Attempts of a controlled shutdown before "
       "the broker stops without it.", at_least=0),
    _s("controlled.shutdown.retry.backoff.ms", _L, "5000", "Wait between controlled shutdown "
       "attempts.", at_least=0),
    _s("auto.leader.rebalance.enable", _B, "true", "The controller moves leadership back to "
       "each partition's preferred replica when the imbalance passes "
       "leader.imbalance.per.broker.percentage."),
    _s("leader.imbalance.check.interval.seconds", _L, "300", "How often the controller checks "
       "the leader imbalance.", at_least=1),
    _s("leader.imbalance.per.broker.percentage", _I, "10", "Share of a broker's partitions not "
       "led by their preferred replica above which the controller rebalances.", at_least=0),
    _s("controller.socket.timeout.ms", _I, "30000", "How long the controller waits for a "
       "broker to answer LeaderAndIsr, UpdateMetadata or StopReplica before it reconnects.",
       at_least=1),
    _s("inter.broker.listener.name", _S, None, "The listener brokers use to talk to each other "
       "(replica fetches, the controller's requests). Unset: the listener named after "
       "security.inter.broker.protocol; when that is not set either, the listener named "
       "PLAINTEXT, else the first listener (kafkapy: Kafka requires a PLAINTEXT listener "
       "then). Cannot be set together with security.inter.broker.protocol.",
       kafka_default=None),
    _s("security.inter.broker.protocol", _S, "PLAINTEXT", "Security protocol brokers use to "
       "talk to each other (PLAINTEXT or SSL): the inter-broker listener is the one of that "
       "name. Cannot be set together with inter.broker.listener.name.", attr=None),
    # ---------------------------------------------------------------- replication
    _s("num.replica.fetchers", _I, "1", "Fetcher tasks per source broker that replicate its "
       "partitions to this one.", at_least=1),
    _s("replica.lag.time.max.ms", _L, "30000", "A follower that has not caught up with the "
       "leader's log end for this long leaves the ISR.", at_least=1),
    _s("replica.fetch.max.bytes", _I, "1048576", "Bytes a follower asks for per partition "
       "(at least one batch is returned).", at_least=0),
    _s("replica.fetch.min.bytes", _I, "1", "Bytes a follower fetch waits for.", at_least=1),
    _s("replica.fetch.wait.max.ms", _I, "500", "Longest wait of a follower fetch on the "
       "leader (below replica.lag.time.max.ms).", at_least=0),
    _s("replica.fetch.backoff.ms", _I, "1000", "Sleep of a fetcher after a fetch error.",
       at_least=0),
    _s("replica.alter.log.dirs.io.max.bytes.per.second", _L, _LMAX, "Bytes per second a "
       "replica move between log dirs (AlterReplicaLogDirs) may copy.", at_least=1,
       mode="per-broker", dynamic=True, attr=None),
    _s("replica.fetch.response.max.bytes", _I, "10485760", "Bytes a follower asks for per "
       "fetch, all partitions together.", at_least=0),
    _s("replica.socket.timeout.ms", _I, "30000", "Socket timeout of follower fetches.",
       at_least=1),
    _s("replica.selector.class", _S, None, "The ReplicaSelector that picks the replica a "
       "consumer with client.rack (Fetch v11+) should fetch from (KIP-392). Unset: consumers "
       "read from the leader only. kafkapy cannot load Java classes: it implements "
       "org.apache.kafka.common.replica.RackAwareReplicaSelector (the replica in the "
       "consumer's rack) and org.apache.kafka.common.replica.LeaderSelector, and refuses "
       "other names.", kafka_default=None),
    # ---------------------------------------------------------------- socket server
    _s("listeners", _LI, "PLAINTEXT://localhost:9092", "Comma-separated NAME://host:port URIs "
       "to listen on. An empty host binds all interfaces, port 0 an ephemeral port, IPv6 hosts "
       "go in brackets. Each name must map to PLAINTEXT or SASL_PLAINTEXT in "
       "listener.security.protocol.map.",
       mode="per-broker", kafka_default="PLAINTEXT://:9092", attr=None),
    _s("advertised.listeners", _LI, None, "Addresses given to clients, if different from "
       "listeners (the default). Names must be among the listeners'; 0.0.0.0 is refused.",
       attr=None),
    _s("listener.security.protocol.map", _S,
       "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
       "LISTENER:PROTOCOL pairs (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).", mode="per-broker",
       attr=None),
    _s("num.network.threads", _I, "3", "Accepted for compatibility and unused: kafkapy has no "
       "network thread pool, each connection is a Trio task.", at_least=1, mode=_CW,
       used=False),
    _s("num.io.threads", _I, "8", "Number of request handler tasks draining the request "
       "channel. A dynamic change may at most halve or double it.", at_least=1, mode=_CW,
       dynamic=True),
    _s("queued.max.requests", _I, "500", "Requests the request channel queues before "
       "connections stop reading.", at_least=1),
    _s("queued.max.request.bytes", _L, "-1", "Bytes of queued requests before connections stop "
       "reading (-1: no limit).", used=False),
    _s("request.timeout.ms", _I, "30000", "How long the broker waits for a response to a "
       "request it sends itself."),
    _s("socket.send.buffer.bytes", _I, "102400", "SO_SNDBUF of the sockets; -1 keeps the OS "
       "default.", at_least=-1),
    _s("socket.receive.buffer.bytes", _I, "102400", "SO_RCVBUF of the sockets; -1 keeps the OS "
       "default.", at_least=-1),
    _s("socket.request.max.bytes", _I, "104857600", "Largest request frame accepted; a larger "
       "size prefix closes the connection.", at_least=1),
    _s("socket.listen.backlog.size", _I, "50", "Pending connections the listening socket "
       "queues.", at_least=1),
    _s("connections.max.idle.ms", _L, "600000", "Connections idle for longer are closed."),
    _s("max.connections", _I, _IMAX, "Connections allowed at once, all listeners together: at "
       "the limit the acceptors wait for a slot (the inter-broker listener may exceed it, "
       "and then the least recently active connection of another listener is closed).",
       at_least=0, mode=_CW, dynamic=True),
    _s("max.connections.per.ip", _I, _IMAX, "Connections allowed from one address. 0 is "
       "allowed only with max.connections.per.ip.overrides.", at_least=0, mode=_CW,
       dynamic=True),
    _s("max.connections.per.ip.overrides", _S, "", "host:count pairs overriding "
       "max.connections.per.ip, e.g. hostName:100,127.0.0.1:200.", mode=_CW, dynamic=True,
       attr=None),
    _s("max.connection.creation.rate", _I, _IMAX, "New connections per second the broker "
       "accepts (KIP-612), all listeners but the inter-broker one together; per listener: "
       "listener.name.<l>.max.connection.creation.rate (default: this value). Over it, the "
       "acceptor waits.", at_least=0, mode=_CW, dynamic=True),
    # ---------------------------------------------------------------- security: ssl
    # Kafka's SslConfigs and BrokerSecurityConfigs. Each may be set per listener as
    # listener.name.<listener lower-case>.<name> (BrokerConfig.listener_setting). The key and
    # trust store ones may change while running (Kafka's dynamic SSL update, KIP-226): new
    # connections get the new certificate (channel_builders.reconfigure_ssl).
    _s("ssl.keystore.type", _S, "JKS", "File format of the key store: PEM or PKCS12. JKS "
       "(Kafka's default) files cannot be read by kafkapy (convert them with keytool "
       "-importkeystore -deststoretype PKCS12); a PKCS12 file under type JKS is read, as the "
       "JDK does.", mode="per-broker", dynamic=True, attr=None),
    _s("ssl.keystore.location", _S, None, "Key store file: PEM (certificate chain and private "
       "key) or PKCS12.", mode="per-broker", dynamic=True, attr=None),
    _s("ssl.keystore.password", _PW, None, "Password of a PKCS12 key store (not allowed with "
       "PEM).", kind="password", mode="per-broker", dynamic=True, attr=None),
    _s("ssl.key.password", _PW, None, "Password of the private key (an encrypted PEM key).",
       kind="password", mode="per-broker", dynamic=True, attr=None),
    _s("ssl.keystore.certificate.chain", _PW, None, "The certificate chain in PEM, inline "
       "(ssl.keystore.type=PEM).", kind="password", mode="per-broker", dynamic=True, attr=None),
    _s("ssl.keystore.key", _PW, None, "The private key in PEM (PKCS#8), inline "
       "(ssl.keystore.type=PEM).", kind="password", mode="per-broker", dynamic=True, attr=None),
    _s("ssl.truststore.type", _S, "JKS", "File format of the trust store: PEM or PKCS12 (JKS "
       "as for ssl.keystore.type).", mode="per-broker", dynamic=True, attr=None),
    _s("ssl.truststore.location", _S, None, "Trust store file (the CAs a client's or a peer "
       "broker's certificate must chain to). Unset: the system's default CAs.",
       mode="per-broker", dynamic=True, attr=None),
    _s("ssl.truststore.password", _PW, None, "Password of a PKCS12 trust store.",
       kind="password", mode="per-broker", dynamic=True, attr=None),
    _s("ssl.truststore.certificates", _PW, None, "Trusted certificates in PEM, inline "
       "(ssl.truststore.type=PEM).", kind="password", mode="per-broker", dynamic=True, attr=None),
    _s("ssl.client.auth", _S, "none", "Client certificates on SSL listeners: none, requested "
       "(verified if sent) or required (mutual TLS). The principal is the certificate's "
       "subject mapped by ssl.principal.mapping.rules. A SASL_SSL listener takes only its "
       "own listener.name.<listener>.ssl.client.auth (none otherwise), as in Kafka; its "
       "principal is the SASL user.", mode="per-broker", attr=None),
    _s("ssl.enabled.protocols", _LI, "TLSv1.2,TLSv1.3", "TLS versions allowed (TLSv1.2, "
       "TLSv1.3; TLSv1 and TLSv1.1 if the platform's OpenSSL still allows them).",
       mode="per-broker", attr=None),
    _s("ssl.cipher.suites", _LI, None, "Cipher suites allowed (unset: OpenSSL's defaults): "
       "OpenSSL names or the IANA names of the TLS 1.2 ECDHE/DHE AEAD and SHA-2 suites. "
       "TLS 1.3 suites cannot be narrowed; a list without any disables TLS 1.3.",
       mode="per-broker", attr=None),
    _s("ssl.endpoint.identification.algorithm", _S, "https", "https: the broker checks the "
       "host name of a broker it connects to (inter-broker) against its certificate; empty: "
       "no host name check.", mode="per-broker", attr=None),
    _s("ssl.principal.mapping.rules", _S, "DEFAULT", "Rules mapping a client certificate's "
       "subject (RFC 2253, e.g. CN=alice,OU=eng,O=acme,C=US) to a principal name: "
       "RULE:pattern/replacement/[LU] entries, DEFAULT keeps the subject.", attr=None),
    _s("ssl.allow.dn.changes", _B, "false", "Whether a dynamic update of a listener's key "
       "store may change its certificate's subject DN (false: such an update is refused with "
       "Kafka's \"Keystore DistinguishedName does not match\"). Static, may be set per "
       "listener.", attr=None),
    _s("ssl.allow.san.changes", _B, "false", "Whether a dynamic update of a listener's key "
       "store may drop subject alternative names from its certificate (false: the new "
       "certificate must keep every SAN of the current one; it may add more).", attr=None),
    _s("ssl.protocol", _S, "TLSv1.3", "Accepted and unused: the versions come from "
       "ssl.enabled.protocols (Python's ssl has no per-protocol context).", mode="per-broker",
       used=False, attr=None),
    # ---------------------------------------------------------------- authorizer
    _s("authorizer.class.name", _S, "", "The authorizer of every request's principal "
       "(empty: none, and CreateAcls / DescribeAcls / DeleteAcls answer SECURITY_DISABLED). "
       "kafkapy cannot load Java classes: it implements "
       "kafka.security.authorizer.AclAuthorizer and "
       "org.apache.kafka.metadata.authorizer.StandardAuthorizer (one implementation: ACLs "
       "kept in ZooKeeper in cluster mode, in the first log dir for a single broker) and "
       "refuses other names."),
    _s("super.users", _S, None, "Principals the authorizer allows everything, separated by "
       "';' (e.g. User:admin;User:ops).", kafka_default=None),
    _s("allow.everyone.if.no.acl.found", _B, "false", "Whether the authorizer allows an "
       "operation on a resource no ACL applies to."),
    # ---------------------------------------------------------------- security: sasl
    _s("sasl.enabled.mechanisms", _LI, "GSSAPI", "SASL mechanisms the SASL listeners offer "
       "(per listener: listener.name.<listener>.sasl.enabled.mechanisms). kafkapy implements "
       "PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512; a SASL listener with another mechanism enabled "
       "(GSSAPI, Kafka's default, or OAUTHBEARER) is refused at start.", mode="per-broker",
       attr=None),
    _s("sasl.jaas.config", ConfigType.PASSWORD, None, "JAAS login context of the SASL "
       "listeners: for PLAIN, PlainLoginModule with user_<name>=\"<password>\" options. Usually "
       "given per listener and mechanism: listener.name.<listener>.plain.sasl.jaas.config.",
       kind="string", mode="per-broker", attr=None),
    _s("sasl.mechanism.inter.broker.protocol", _S, "GSSAPI", "SASL mechanism brokers use "
       "with each other when the inter-broker listener is a SASL one (PLAIN, SCRAM-SHA-256 or "
       "SCRAM-SHA-512, enabled on that listener); the credentials are the username and "
       "password options of its JAAS entry there.", mode="per-broker", attr=None),
    _s("sasl.server.max.receive.size", _I, "524288", "Largest frame read from a client before "
       "it is authenticated; a larger one closes the connection.", attr=None),
    _s("connections.max.reauth.ms", _L, "0", "Lifetime of an authenticated SASL session "
       "(KIP-368): a client must re-authenticate within it or its connection is closed at its "
       "next request; 0 disables it (an OAUTHBEARER token's expiry still ends the session). "
       "Per listener and mechanism: listener.name.<listener>.<mechanism>.connections.max."
       "reauth.ms.", at_least=0, attr=None),
    _s("connection.failed.authentication.delay.ms", _I, "100", "How long the broker waits "
       "after a failed authentication before it answers and closes the connection.",
       at_least=0, attr=None),
    # ---------------------------------------------------------------- requests and topics
    _s("message.max.bytes", _I, "1048588", "Largest record batch accepted (after compression); "
       "the default of topics' max.message.bytes.", at_least=0, mode=_CW, dynamic=True),
    _s("fetch.max.bytes", _I, "57671680", "Most bytes returned by one fetch.", at_least=1024),
    _s("max.incremental.fetch.session.cache.slots", _I, "1000", "Most incremental fetch "
       "sessions (KIP-227) the broker keeps; 0 refuses every session.", at_least=0),
    _s("auto.create.topics.enable", _B, "true", "Create a topic when a client asks for an "
       "unknown one in a Metadata request."),
    _s("delete.topic.enable", _B, "true", "Allow DeleteTopics; false refuses it."),
    _s("max.request.partition.size.limit", _I, "2000", "Most partitions one "
       "DescribeTopicPartitions response describes (the request's limit is capped by it).",
       at_least=1),
    _s("num.partitions", _I, "1", "Partitions of a topic created without a count.",
       at_least=1),
    _s("default.replication.factor", _I, "1", "Replication factor of a topic created without "
       "one."),
    _s("min.insync.replicas", _I, "1", "Replicas that must have a write for acks=all.",
       at_least=1, mode=_CW, dynamic=True),
    _s("unclean.leader.election.enable", _B, "false", "Allow an out-of-sync replica to become "
       "leader.", mode=_CW, dynamic=True),
    _s("compression.type", _S, "producer", "Final compression of topics: producer (keep the "
       "producer's), uncompressed, gzip, snappy, lz4 or zstd.", kind="compression", mode=_CW,
       dynamic=True),
    _s("replica.high.watermark.checkpoint.interval.ms", _L, "5000", "How often the high "
       "watermarks are checkpointed."),
    # ---------------------------------------------------------------- logs
    _s("log.dirs", _LI, None, "Comma-separated directories holding the logs; if unset, "
       "log.dir is used. Relative paths are relative to the working directory.", attr=None),
    _s("log.dir", _LI, "./kafkapy-data", "The log directory used when log.dirs is unset.",
       kafka_default="/tmp/kafka-logs", attr=None),
    # Kafka 4.0 raised the minimum of log.segment.bytes to 1 MiB (KIP-1030); kafkapy keeps
    # LogConfig's 14 bytes (one empty batch header) so tests can roll small segments.
    _s("log.segment.bytes", _I, "1073741824", "Largest size of a segment file.", at_least=14,
       mode=_CW, dynamic=True),
    _s("log.roll.ms", _L, None, "Longest time before a new segment is rolled; if unset, "
       "log.roll.hours is used.", mode=_CW, dynamic=True),
    _s("log.roll.hours", _I, "168", "Longest time before a new segment is rolled, in hours; "
       "secondary to log.roll.ms.", at_least=1),
    _s("log.roll.jitter.ms", _L, None, "Most jitter subtracted from the roll time; if unset, "
       "log.roll.jitter.hours is used.", mode=_CW, dynamic=True),
    _s("log.roll.jitter.hours", _I, "0", "Most roll jitter in hours; secondary to "
       "log.roll.jitter.ms.", at_least=0),
    _s("log.retention.ms", _L, None, "How long a segment is kept; -1 keeps it forever. If "
       "unset, log.retention.minutes is used.", mode=_CW, dynamic=True),
    _s("log.retention.minutes", _I, None, "Retention in minutes; secondary to "
       "log.retention.ms. If unset, log.retention.hours is used."),
    _s("log.retention.hours", _I, "168", "Retention in hours; tertiary to log.retention.ms."),
    _s("log.retention.bytes", _L, "-1", "Largest size of a partition's log before old "
       "segments are deleted; -1: no limit.", mode=_CW, dynamic=True),
    _s("log.retention.check.interval.ms", _L, "300000", "How often the retention pass runs.",
       at_least=1),
    _s("log.cleanup.policy", _LI, "delete", "delete, compact or both, for segments beyond the "
       "retention window.", kind="policy", mode=_CW, dynamic=True),
    _s("log.index.size.max.bytes", _I, "10485760", "Largest size of an offset or time index.",
       at_least=4, mode=_CW, dynamic=True),
    _s("log.index.interval.bytes", _I, "4096", "Bytes of log between two offset index "
       "entries.", at_least=0, mode=_CW, dynamic=True),
    _s("log.flush.interval.messages", _L, _LMAX, "Messages appended to a partition before it "
       "is fsynced.", at_least=1, mode=_CW, dynamic=True),
    _s("log.flush.interval.ms", _L, None, "Longest time appended data stays unflushed; if "
       "unset, log.flush.scheduler.interval.ms is used.", mode=_CW, dynamic=True),
    _s("log.flush.scheduler.interval.ms", _L, _LMAX, "How often the flusher checks whether a "
       "log needs flushing."),
    _s("log.flush.offset.checkpoint.interval.ms", _I, "60000", "How often the recovery-point "
       "checkpoint is written.", at_least=0),
    _s("log.flush.start.offset.checkpoint.interval.ms", _I, "60000", "How often the "
       "log-start-offset checkpoint is written.", at_least=0),
    _s("log.segment.delete.delay.ms", _L, "60000", "Delay before a deleted segment's files "
       "are removed from disk.", at_least=0, mode=_CW, dynamic=True),
    _s("log.preallocate", _B, "false", "Preallocate segment files when creating them.",
       mode=_CW, dynamic=True),
    _s("log.message.timestamp.type", _S, "CreateTime", "CreateTime or LogAppendTime.",
       kind="tstype", mode=_CW, dynamic=True),
    _s("log.message.downconversion.enable", _B, "true", "Answer Fetch v0-3 (message formats "
       "0 and 1) by converting batches down; false answers UNSUPPORTED_VERSION.", mode=_CW,
       dynamic=True),
    _s("log.message.format.version", _S, "3.0-IV1", "Deprecated (Kafka 3.0): accepted and "
       "ignored, the log always stores message format v2.", kind="msgversion", used=False),
    _s("log.message.timestamp.before.max.ms", _L, _LMAX, "How far a CreateTime timestamp may "
       "be behind the broker's clock.", at_least=0, mode=_CW, dynamic=True),
    # Kafka 4.0's default (KIP-1030), as LogConfig applies it.
    _s("log.message.timestamp.after.max.ms", _L, "3600000", "How far a CreateTime timestamp may "
       "be ahead of the broker's clock.", at_least=0, mode=_CW, dynamic=True,
       kafka_default="3600000"),
    _s("log.cleaner.enable", _B, "true", "Run the log cleaner (compaction)."),
    _s("log.cleaner.backoff.ms", _L, "15000", "Sleep of the cleaner when no log needs "
       "cleaning.", at_least=0, mode=_CW),
    _s("log.cleaner.delete.retention.ms", _L, "86400000", "How long tombstones are kept in "
       "compacted logs.", at_least=0, mode=_CW, dynamic=True),
    _s("log.cleaner.min.compaction.lag.ms", _L, "0", "Shortest time a record stays "
       "uncompacted.", at_least=0, mode=_CW, dynamic=True),
    _s("log.cleaner.max.compaction.lag.ms", _L, _LMAX, "Longest time a record stays "
       "uncompacted.", at_least=1, mode=_CW, dynamic=True),
    _s("log.cleaner.min.cleanable.ratio", _D, "0.5", "Dirty ratio above which a log is "
       "compacted.", mode=_CW, dynamic=True),
    _s("num.recovery.threads.per.data.dir", _I, "2", "Logs recovered at once per log dir "
       "after an unclean shutdown.", at_least=1, mode=_CW),
    # ---------------------------------------------------------------- group coordinator
    _s("group.initial.rebalance.delay.ms", _I, "3000", "Wait for more members before the "
       "first rebalance of a new group."),
    _s("group.min.session.timeout.ms", _I, "6000", "Shortest session timeout a member may "
       "ask for."),
    _s("group.max.session.timeout.ms", _I, "1800000", "Longest session timeout a member may "
       "ask for."),
    _s("group.max.size", _I, _IMAX, "Most members of a classic group.", at_least=1),
    _s("group.consumer.heartbeat.interval.ms", _I, "5000", "Heartbeat interval given to the "
       "members of a consumer (KIP-848) group.", at_least=1),
    _s("group.consumer.session.timeout.ms", _I, "45000", "A consumer group member that does "
       "not heartbeat for this long is removed.", at_least=1),
    _s("group.consumer.min.session.timeout.ms", _I, "45000", "Lower bound of "
       "group.consumer.session.timeout.ms.", at_least=1),
    _s("group.consumer.max.session.timeout.ms", _I, "60000", "Upper bound of "
       "group.consumer.session.timeout.ms.", at_least=1),
    _s("group.consumer.max.size", _I, _IMAX, "Most members of a consumer group.", at_least=1),
    _s("group.consumer.assignors", _LI, "uniform,range", "The server-side assignors of "
       "consumer groups (built-in names: uniform, range); the first is the default."),
    _s("offsets.topic.num.partitions", _I, "50", "Partitions of __consumer_offsets (do not "
       "change after deployment).", at_least=1),
    _s("offsets.topic.replication.factor", _SH, "3", "Replication factor of "
       "__consumer_offsets; the coordinator clamps it to the number of brokers, so a single "
       "broker works with the default.", at_least=1),
    _s("offsets.topic.segment.bytes", _I, "104857600", "Segment size of __consumer_offsets.",
       at_least=1),
    _s("offsets.retention.minutes", _I, "10080", "How long committed offsets of an empty "
       "group are kept.", at_least=1),
    _s("offsets.retention.check.interval.ms", _L, "600000", "How often stale offsets are "
       "looked for.", at_least=1),
    _s("offsets.commit.timeout.ms", _I, "5000", "Longest wait for an offset commit to be "
       "written.", at_least=1),
    _s("offset.metadata.max.bytes", _I, "4096", "Largest metadata string of an offset "
       "commit."),
    # ---------------------------------------------------------------- transactions
    _s("transaction.state.log.num.partitions", _I, "50", "Partitions of "
       "__transaction_state.", at_least=1),
    _s("transaction.state.log.replication.factor", _SH, "3", "Replication factor of "
       "__transaction_state; clamped to the number of brokers by the coordinator.",
       at_least=1),
    _s("transaction.state.log.min.isr", _I, "2", "min.insync.replicas of "
       "__transaction_state.", at_least=1),
    _s("transaction.state.log.segment.bytes", _I, "104857600", "Segment size of "
       "__transaction_state.", at_least=1),
    _s("transactional.id.expiration.ms", _I, "604800000", "Idle time after which a "
       "transactional id expires.", at_least=1),
    _s("transaction.max.timeout.ms", _I, "900000", "Longest transaction timeout a producer "
       "may ask for.", at_least=1),
    _s("transaction.abort.timed.out.transaction.cleanup.interval.ms", _I, "10000", "How often "
       "timed-out transactions are aborted.", at_least=1),
    _s("transaction.remove.expired.transaction.cleanup.interval.ms", _I, "3600000", "How "
       "often expired transactional ids are removed.", at_least=1),
    _s("producer.id.expiration.ms", _I, "86400000", "Idle time after which a producer id's "
       "state is dropped.", at_least=1, mode=_CW),
    _s("producer.id.expiration.check.interval.ms", _I, "600000", "How often idle producer "
       "ids' state is looked for (Kafka's internal setting).", at_least=1),
    # ---------------------------------------------------------------- client quotas
    _s("quota.window.num", _I, "11", "The number of samples kept for client quotas "
       "(producer_byte_rate, consumer_byte_rate).", at_least=1),
    _s("quota.window.size.seconds", _I, "1", "The time span of each sample for client "
       "quotas.", at_least=1),
    _s("controller.quota.window.num", _I, "11", "The number of samples kept for the "
       "controller mutation quota (controller_mutation_rate, KIP-599).", at_least=1),
    _s("controller.quota.window.size.seconds", _I, "1", "The time span of each sample for "
       "the controller mutation quota.", at_least=1),
    # ---------------------------------------------------------------- replication quotas
    # Kafka's DynamicConfig.Broker (set per broker with IncrementalAlterConfigs, as
    # kafka-reassign-partitions.sh does) and ReplicationConfigs' windows; the throttled
    # replicas are the topic configs leader/follower.replication.throttled.replicas.
    _s("leader.replication.throttled.rate", _L, _LMAX, "Bytes per second this broker, as a "
       "leader, sends to followers of the partitions listed in their topic's "
       "leader.replication.throttled.replicas (only to replicas out of the ISR). Acted on "
       "when set dynamically (per broker, or as the cluster-wide default), as in Kafka.",
       at_least=0, mode=_CW, dynamic=True),
    _s("follower.replication.throttled.rate", _L, _LMAX, "Bytes per second this broker, as "
       "a follower, fetches for the partitions listed in their topic's "
       "follower.replication.throttled.replicas (only while it has not caught up). Acted "
       "on when set dynamically (per broker, or as the cluster-wide default), as in Kafka.",
       at_least=0, mode=_CW, dynamic=True),
    _s("replication.quota.window.num", _I, "11", "The number of samples kept for "
       "replication quotas.", at_least=1),
    _s("replication.quota.window.size.seconds", _I, "1", "The time span of each sample for "
       "replication quotas.", at_least=1),
    # ---------------------------------------------------------------- metrics (kafkapy only)
    # Kafka exposes its metrics over JMX, which a Prometheus JMX exporter agent turns into
    # the names kafkapy serves itself here (docs/metrics.md).
    _s("kafkapy.metrics.port", _I, "-1", "kafkapy only: the port of the Prometheus "
       "endpoint (http://host:port/metrics, names as the Prometheus JMX exporter gives "
       "Kafka's MBeans). -1: no endpoint (the default: an embedded broker serves no HTTP); "
       "0: a free port. Setting it records the metrics too.", at_least=-1, at_most=65535,
       kafka_default=None),
    _s("kafkapy.metrics.host", _S, "", "kafkapy only: the address the Prometheus endpoint "
       "binds; empty: every interface.", kafka_default=None),
    _s("kafkapy.metrics.enabled", _B, "false", "kafkapy only: record the broker's metrics "
       "(kafkapy.Broker.metrics()) even without an endpoint; implied by "
       "kafkapy.metrics.port >= 0. Off, the produce and fetch paths pay nothing for "
       "metrics.", kafka_default=None),
)

SETTINGS: Mapping[str, Setting] = types.MappingProxyType({s.name: s for s in _TABLE})

# Broker settings that are synonyms (DynamicBrokerConfig.brokerConfigSynonyms), in precedence
# order: a finer unit wins, and log.flush.scheduler.interval.ms stands in for an unset
# log.flush.interval.ms.
_SYNONYM_GROUPS = (("log.roll.ms", "log.roll.hours"),
                   ("log.roll.jitter.ms", "log.roll.jitter.hours"),
                   ("log.retention.ms", "log.retention.minutes", "log.retention.hours"))
_BROKER_SYNONYMS: dict[str, tuple[str, ...]] = {
    name: group for group in _SYNONYM_GROUPS for name in group}
_BROKER_SYNONYMS["log.flush.interval.ms"] = ("log.flush.interval.ms",
                                             "log.flush.scheduler.interval.ms")

# Kafka's DynamicThreadPool rule: a thread count may change to between half and double.
_THREAD_COUNTS = ("num.io.threads",)

_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# The security protocols a listener may use here.
_SERVED_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# List settings Kafka allows empty (their default is null).
_EMPTY_LISTS = frozenset({"ssl.cipher.suites"})
_CLIENT_AUTH = ("none", "requested", "required")
_LISTENER_PREFIX = "listener.name."
_LISTENER_URI = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_JAVA_TRIM = "".join(map(chr, range(33)))          # String.trim: every char <= ' '
_LIST_SPLIT = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")   # Java's \s*,\s*
# The replica.selector.class values kafkapy implements (kafkapy.server.replica_selector).
REPLICA_SELECTOR_CLASSES: Final = frozenset({
    "org.apache.kafka.common.replica.RackAwareReplicaSelector",
    "org.apache.kafka.common.replica.LeaderSelector"})
# The authorizer.class.name values kafkapy implements (kafkapy.security.authorizer).
AUTHORIZER_CLASSES: Final = frozenset({
    "kafka.security.authorizer.AclAuthorizer",
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer"})
_CLUSTER_ID = re.compile(r"[A-Za-z0-9_-]{22}(==)?")
_RANGES = {"int": (_INT_MIN, _INT_MAX), "short": (-(2**15), 2**15 - 1),
           "long": (-(2**63), LONG_MAX)}
_NAMES = {"int": "32-bit integer", "short": "16-bit integer", "long": "64-bit integer"}


def _invalid(name: str, value: object, reason: str) -> InvalidConfigError:
    return InvalidConfigError(f"Invalid value {value!r} for configuration {name}: {reason}")


def _split_list(text: str) -> list[str]:
    return _LIST_SPLIT.split(text) if text else []


def _parse_value(setting: Setting, raw: str) -> object:
    """One raw value, parsed and range-checked as Kafka's ConfigDef does (values are trimmed)."""
    name, kind = setting.name, setting.kind
    text = raw.strip(_JAVA_TRIM)
    if kind in _RANGES:
        low, high = _RANGES[kind]
        if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
            raise _invalid(name, text, f"not a {_NAMES[kind]}")
        value = _parse_log_value(name, "long" if kind == "long" else "int", text)
        assert isinstance(value, int)
        if setting.at_least is not None and value < setting.at_least:
            raise _invalid(name, text, f"Value must be at least {setting.at_least}")
        if setting.at_most is not None and value > setting.at_most:
            raise _invalid(name, text, f"Value must be no more than {setting.at_most}")
        if name in ("socket.send.buffer.bytes", "socket.receive.buffer.bytes") and value == 0:
            raise _invalid(name, text, "must be -1 (the OS default) or positive")
        return value
    if kind in ("string", "password"):
        return text
    if kind == "list":
        items = _split_list(text)
        if not items and name in _EMPTY_LISTS:
            return []
        if not items:
            raise _invalid(name, text, "must not be empty")
        if "" in items:
            raise _invalid(name, text, "has an empty entry")
        if len(set(items)) != len(items):
            raise _invalid(name, text, "values must not be duplicated")
        return items
    # bool, ratio, policy, tstype, compression: the log config's parser.
    return _parse_log_value(name, kind, text)


def _describe_value(value: object) -> str | None:
    """A parsed value as DescribeConfigs shows it (Kafka's ConfigDef.convertToString)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


_DEFAULT_VALUES: dict[str, object] = {
    s.name: None if s.default is None else _parse_value(s, s.default) for s in _TABLE}


def _to_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(_to_text(v)) for v in value)
    return str(value)


def _props(mapping: Mapping[str, object] | None) -> Mapping[str, str]:
    """A read-only ``key -> str`` copy; None values (unset) are dropped."""
    out = {}
    for key, value in (mapping or {}).items():
        text = _to_text(value)
        if text is not None:
            out[str(key)] = text
    return types.MappingProxyType(out)


def _props_repr(props: Mapping[str, str]) -> str:
    return repr(dict(props))


def _csv_map(name: str, text: str) -> list[tuple[str, str]]:
    """Kafka's Csv.parseCsvMap: ``k:v`` pairs split at the last colon (so IPv6 keys work)."""
    pairs = []
    items = _split_list(text)
    while items and items[-1] == "":       # Java's String.split drops trailing empty strings
        items.pop()
    for item in items:
        key, sep, value = item.rpartition(":")
        if not sep or not key.strip():
            raise _invalid(name, text, f"entry {item!r} is not key:value")
        pairs.append((key.strip(), value.strip()))
    return pairs


def _protocol_map(text: str) -> dict[str, str]:
    name = "listener.security.protocol.map"
    protocols = {}
    for listener, protocol in _csv_map(name, text):
        if protocol.upper() not in _PROTOCOLS:
            raise _invalid(name, text, f"unknown security protocol {protocol!r} (one of "
                                       f"{', '.join(_PROTOCOLS)})")
        protocols[listener.upper()] = protocol.upper()
    return protocols


def _ip_overrides(text: str) -> dict[str, int]:
    name = "max.connections.per.ip.overrides"
    overrides = {}
    for host, count in _csv_map(name, text):
        if not _INTEGER.fullmatch(count) or not 0 <= int(count) <= _INT_MAX:
            raise _invalid(name, text, f"connection count {count!r} of {host} is not a "
                                       f"non-negative 32-bit integer")
        overrides[host] = int(count)
    return overrides


def _endpoints(name: str, entries: list[str], protocols: Mapping[str, str]) -> list[Endpoint]:
    endpoints = []
    for entry in entries:
        match = _LISTENER_URI.fullmatch(entry)
        if match is None or not match.group(1):
            raise _invalid(name, ",".join(entries),
                           f"unable to parse {entry!r} as NAME://host:port")
        listener, host, port = match.group(1).upper(), match.group(2), int(match.group(3))
        if not 0 <= port <= 65535:
            raise _invalid(name, ",".join(entries), f"port {port} of {entry!r} is not within "
                                                    f"0..65535")
        protocol = protocols.get(listener)
        if protocol is None:
            raise _invalid(name, ",".join(entries),
                           f"no security protocol defined for listener {listener} in "
                           f"listener.security.protocol.map")
        if protocol not in _SERVED_PROTOCOLS:
            raise _invalid(name, ",".join(entries),
                           f"listener {listener} uses {protocol}: kafkapy serves "
                           f"{', '.join(_SERVED_PROTOCOLS)} listeners only")
        endpoints.append(Endpoint(listener, host, port))
    names = [e.name for e in endpoints]
    if len(set(names)) != len(names):
        raise _invalid(name, ",".join(entries), "each listener must have a different name")
    return endpoints


def _listener_override_setting(key: str) -> Setting | None:
    """The setting a ``listener.name.<listener>.<setting>`` key overrides, if it is one; also
    ``listener.name.<listener>.<mechanism>.<setting>`` (the SASL per-mechanism form)."""
    if not key.startswith(_LISTENER_PREFIX):
        return None
    _, _, name = key[len(_LISTENER_PREFIX):].partition(".")
    if name in SETTINGS:
        return SETTINGS[name]
    return SETTINGS.get(name.partition(".")[2])


def _is_listener_override(key: str) -> bool:
    """A per-listener key kafkapy knows: an override of a setting, or a per-mechanism JAAS
    config (``listener.name.<l>.<mechanism>.sasl.jaas.config``)."""
    if _listener_override_setting(key) is not None:
        return True
    return key.startswith(_LISTENER_PREFIX) and key.endswith(".sasl.jaas.config")


def _ip_version(host: str) -> int | None:
    try:
        return ipaddress.ip_address(host).version
    except ValueError:
        return None


def _check_listener_ports(entries: list[str], endpoints: list[Endpoint]) -> None:
    by_port: dict[int, list[Endpoint]] = {}
    for e in endpoints:
        if e.port != 0:                     # each port-0 listener gets its own port
            by_port.setdefault(e.port, []).append(e)
    for port, group in by_port.items():
        ip_pair = len(group) == 2 and {_ip_version(e.host) for e in group} == {4, 6}
        if len(group) > 1 and not ip_pair:
            raise _invalid("listeners", ",".join(entries),
                           f"each listener must have a different port unless exactly one "
                           f"has an IPv4 address and the other an IPv6 address (port {port})")


def _check_cluster_id(text: str) -> None:
    # Kafka's Uuid.fromString: URL-safe base64 of 16 bytes, i.e. 22 characters (+ "==").
    if not _CLUSTER_ID.fullmatch(text):
        raise _invalid("cluster.id", text, "not a Kafka Uuid (22 characters of URL-safe "
                                           "base64 encoding 16 bytes)")


# The consumer group assignors kafkapy has (kafkapy.coordinator.group.assignors); Kafka also
# accepts class names of custom assignors.
_CONSUMER_GROUP_ASSIGNORS = ("uniform", "range")


def _check_consumer_group_settings(values: Mapping[str, object]) -> None:
    """Kafka's GroupCoordinatorConfig requirements between the group.consumer.* settings."""
    session = values["group.consumer.session.timeout.ms"]
    low = values["group.consumer.min.session.timeout.ms"]
    high = values["group.consumer.max.session.timeout.ms"]
    heartbeat = values["group.consumer.heartbeat.interval.ms"]
    assert isinstance(session, int) and isinstance(low, int) and isinstance(high, int)
    assert isinstance(heartbeat, int)
    if high < low:
        raise _invalid("group.consumer.max.session.timeout.ms", high, "must be greater than "
                       "or equal to group.consumer.min.session.timeout.ms")
    if not low <= session <= high:
        raise _invalid("group.consumer.session.timeout.ms", session, "must be between "
                       "group.consumer.min.session.timeout.ms and "
                       "group.consumer.max.session.timeout.ms")
    if heartbeat >= session:
        raise _invalid("group.consumer.heartbeat.interval.ms", heartbeat, "must be less than "
                       "group.consumer.session.timeout.ms")
    assignors = values["group.consumer.assignors"]
    assert isinstance(assignors, list)
    for name in assignors:
        if name not in _CONSUMER_GROUP_ASSIGNORS:
            raise _invalid("group.consumer.assignors", ",".join(assignors),
                           f"{name} is not an assignor kafkapy has (it has "
                           f"{', '.join(_CONSUMER_GROUP_ASSIGNORS)})")


# ==================================================================== Kafka's other settings


@attrs.frozen
class KafkaSetting:
    """A setting of Kafka's broker ConfigDef that kafkapy accepts but does not act on.

    Every name of ``kafkapy.kafka_broker_settings`` (generated from Kafka 3.9's sources) that
    SETTINGS does not have: SETTINGS always wins, so a setting kafkapy starts acting on moves
    there and leaves this table by itself. Such a setting is type-checked as Kafka's
    ConfigDef.parseType does, then checked by its ``validator`` where Kafka's is a range or a
    list of valid strings (``KAFKA_BROKER_SETTING_VALIDATORS``; Kafka's other validators are
    Java classes and not reproduced), stored in the
    config layers like any other, described with Kafka's type, default and sensitivity, and
    changeable dynamically when Kafka's ``update_mode`` allows it (nothing in kafkapy reads it,
    so a change takes effect at once, trivially). ``internal`` ones (Kafka's
    ``defineInternal``) are accepted and described only when set, as Kafka does.
    """

    name: str
    config_type: ConfigType
    default: str | None
    update_mode: str
    sensitive: bool
    internal: bool
    validator: tuple[object, ...] | None = None


KAFKA_SETTINGS: Final[Mapping[str, KafkaSetting]] = types.MappingProxyType({
    name: KafkaSetting(name, ConfigType[type_name], default, mode, sensitive, internal,
                       _KAFKA_VALIDATORS.get(name))
    for rows, internal in ((_KAFKA_BROKER_SETTINGS, False), (_KAFKA_INTERNAL_SETTINGS, True))
    for name, type_name, default, mode, sensitive in rows if name not in SETTINGS})

# DynamicBrokerConfig: listener overrides ``listener.name.<listener>.<setting>``; the SASL
# mechanism ones are ``listener.name.<listener>.<mechanism>.<setting>`` (ListenerMechanismConfigs);
# a listener override is per-broker unless its setting is one of ClusterLevelListenerConfigs.
_LISTENER_OVERRIDE = re.compile(r"listener\.name\.([^.]+)\.(.+)")
_LISTENER_MECHANISM_SETTINGS = ("sasl.jaas.config", "sasl.login.callback.handler.class",
                                "sasl.login.class", "sasl.server.callback.handler.class",
                                "connections.max.reauth.ms")
_CLUSTER_LEVEL_LISTENER_SETTINGS = ("max.connections", "max.connection.creation.rate",
                                    "num.network.threads")
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
                          r"[fFdD]?)")
_KAFKA_DOC = ("Apache Kafka's broker setting: kafkapy accepts, stores and describes it but does "
              "not act on it.")


def _listener_base(name: str) -> str | None:
    """The setting a ``listener.name.<l>.<setting>`` override names, if kafkapy or Kafka
    knows it (``<mechanism>.<setting>`` for the SASL mechanism settings)."""
    match = _LISTENER_OVERRIDE.fullmatch(name)
    if match is None:
        return None
    base = match.group(2)
    if base in SETTINGS or base in KAFKA_SETTINGS:
        return base
    mechanism, _dot, rest = base.partition(".")
    if mechanism and rest in _LISTENER_MECHANISM_SETTINGS:
        return rest
    return None


def kafka_setting(name: str) -> KafkaSetting | None:
    """The Kafka-only setting ``name`` is, itself or as a listener override; None for a
    SETTINGS name (or an override of one) and for an unknown name."""
    if name in SETTINGS:
        return None
    setting = KAFKA_SETTINGS.get(name)
    if setting is not None:
        return setting
    base = _listener_base(name)
    return None if base is None else KAFKA_SETTINGS.get(base)


def is_password_setting(name: str) -> bool:
    """Whether ``name`` (a setting, or a listener override of one) is of Kafka's PASSWORD type:
    described without its value, and encrypted when stored as a dynamic config."""
    setting = SETTINGS.get(name)
    if setting is None:
        base = _listener_base(name)
        setting = SETTINGS.get(base) if base is not None else None
    if setting is not None:
        return setting.config_type is ConfigType.PASSWORD
    kafka = kafka_setting(name)
    return kafka is not None and kafka.sensitive


def _is_known(name: str) -> bool:
    return name in SETTINGS or name in KAFKA_SETTINGS or _listener_base(name) is not None


def _parse_kafka_value(setting: KafkaSetting, name: str, raw: str) -> object:
    """Kafka's ConfigDef.parseType for one raw value (string values are trimmed, but for a
    password), then its validator. Errors: ``InvalidConfigError`` with Kafka's reason."""
    value = _parse_kafka_type(setting, name, raw)
    if setting.validator is not None:
        _check_kafka_validator(setting.validator, name, value)
    return value


def _check_kafka_validator(validator: tuple[object, ...], name: str, value: object) -> None:
    """ConfigDef.Range, ValidString, CaseInsensitiveValidString, ValidList: Kafka's messages."""
    kind = validator[0]
    if kind in ("at_least", "between"):
        assert isinstance(value, (int, float))
        low = validator[1]
        assert isinstance(low, (int, float))
        if value < low:
            raise _invalid(name, _describe_value(value), f"Value must be at least {low}")
        if kind == "between":
            high = validator[2]
            assert isinstance(high, (int, float))
            if value > high:
                raise _invalid(name, _describe_value(value),
                               f"Value must be no more than {high}")
        return
    valid = validator[1]
    assert isinstance(valid, tuple)
    if kind == "one_of_ignore_case":
        if str(value).upper() not in {v.upper() for v in valid}:
            raise _invalid(name, value, "String must be one of (case insensitive): "
                           + ", ".join(valid))
        return
    for item in value if isinstance(value, list) else [value]:      # each_of: every item
        if item not in valid:
            raise _invalid(name, item, "String must be one of: " + ", ".join(valid))


def _parse_kafka_type(setting: KafkaSetting, name: str, raw: str) -> object:
    kind = setting.config_type
    if kind is ConfigType.PASSWORD:
        return raw
    text = raw.strip(_JAVA_TRIM)
    if kind is ConfigType.BOOLEAN:
        if text.lower() not in ("true", "false"):
            raise _invalid(name, text, "Expected value to be either true or false")
        return text.lower() == "true"
    if kind in (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG):
        low, high = _RANGES[kind.name.lower()]
        if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
            raise _invalid(name, text, f"Not a number of type {kind.name}")
        return int(text)
    if kind is ConfigType.DOUBLE:
        if not _JAVA_DOUBLE.fullmatch(text):
            raise _invalid(name, text, "Not a number of type DOUBLE")
        return float(text.rstrip("fFdD").replace("Infinity", "inf"))
    if kind is ConfigType.LIST:
        return _split_list(text)
    return text                     # STRING, CLASS (kafkapy loads no Java class)


def _describe_kafka_value(setting: KafkaSetting, value: object) -> str | None:
    """Kafka's ConfigDef.convertToString; a sensitive value is never shown."""
    if setting.sensitive:
        return None
    return _describe_value(value)


def _check_other_setting(name: str, raw: str) -> None:
    """Type-check a set value of a name not in SETTINGS: a Kafka setting, or a listener
    override of a SETTINGS or Kafka setting; unknown names are not checked."""
    kafka = kafka_setting(name)
    if kafka is not None:
        _parse_kafka_value(kafka, name, raw)
        return
    base = _listener_base(name)
    if base is not None and base in SETTINGS:
        _parse_value(attrs.evolve(SETTINGS[base], name=name), raw)


def _dynamic(name: str) -> bool:
    """Whether a known setting may be changed by IncrementalAlterConfigs: kafkapy applies it
    live (``Setting.dynamic``), or kafkapy does not act on it and Kafka's update mode allows a
    change."""
    if name in SETTINGS:
        return SETTINGS[name].dynamic
    base = _listener_base(name)
    if base is not None and base in SETTINGS:
        return SETTINGS[base].dynamic
    kafka = kafka_setting(name)
    return kafka is not None and kafka.update_mode != "read-only"


def _per_broker(name: str) -> bool:
    """Kafka's DynamicBrokerConfig.perBrokerConfigs: refused at the cluster-default level."""
    if name in SETTINGS:
        return SETTINGS[name].update_mode == "per-broker"
    base = _listener_base(name)
    if base is not None:
        return base not in _CLUSTER_LEVEL_LISTENER_SETTINGS
    kafka = KAFKA_SETTINGS.get(name)
    return kafka is not None and kafka.update_mode == "per-broker"


@attrs.frozen
class BrokerConfig:
    """The broker's settings: raw layers in, typed attributes out (see the module docstring).

    ``BrokerConfig()`` is the standalone default; ``from_properties`` and ``load`` are the usual
    constructors. Attributes are named after Kafka's keys with dots as underscores
    (``log.retention.hours`` -> ``log_retention_hours``), ``None`` where Kafka's value is null.
    List and dict attributes are fresh per instance; treat them as read-only.

    Errors: ``InvalidConfigError`` naming the key and value for anything Kafka would refuse.
    """

    static: Mapping[str, str] = attrs.field(factory=dict, converter=_props, repr=_props_repr)
    dynamic_default: Mapping[str, str] = attrs.field(factory=dict, converter=_props,
                                                     repr=_props_repr)
    dynamic: Mapping[str, str] = attrs.field(factory=dict, converter=_props, repr=_props_repr)

    # identity
    node_id: int = attrs.field(init=False, eq=False, repr=False)
    broker_id: int = attrs.field(init=False, eq=False, repr=False)
    cluster_id: str | None = attrs.field(init=False, eq=False, repr=False)
    broker_rack: str | None = attrs.field(init=False, eq=False, repr=False)
    # cluster (ZooKeeper); zookeeper_connection_timeout_ms is None when unset (the session's)
    zookeeper_connect: str | None = attrs.field(init=False, eq=False, repr=False)
    zookeeper_session_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    zookeeper_connection_timeout_ms: int | None = attrs.field(init=False, eq=False, repr=False)
    controlled_shutdown_enable: bool = attrs.field(init=False, eq=False, repr=False)
    controlled_shutdown_max_retries: int = attrs.field(init=False, eq=False, repr=False)
    controlled_shutdown_retry_backoff_ms: int = attrs.field(init=False, eq=False, repr=False)
    auto_leader_rebalance_enable: bool = attrs.field(init=False, eq=False, repr=False)
    leader_imbalance_check_interval_seconds: int = attrs.field(init=False, eq=False,
                                                               repr=False)
    leader_imbalance_per_broker_percentage: int = attrs.field(init=False, eq=False,
                                                              repr=False)
    controller_socket_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    inter_broker_listener_name: str | None = attrs.field(init=False, eq=False, repr=False)
    num_replica_fetchers: int = attrs.field(init=False, eq=False, repr=False)
    replica_lag_time_max_ms: int = attrs.field(init=False, eq=False, repr=False)
    replica_fetch_max_bytes: int = attrs.field(init=False, eq=False, repr=False)
    replica_fetch_min_bytes: int = attrs.field(init=False, eq=False, repr=False)
    replica_fetch_wait_max_ms: int = attrs.field(init=False, eq=False, repr=False)
    replica_fetch_backoff_ms: int = attrs.field(init=False, eq=False, repr=False)
    replica_fetch_response_max_bytes: int = attrs.field(init=False, eq=False, repr=False)
    replica_socket_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    replica_selector_class: str | None = attrs.field(init=False, eq=False, repr=False)
    # socket server
    listeners: list[Endpoint] = attrs.field(init=False, eq=False, repr=False)
    advertised_listeners: list[Endpoint] = attrs.field(init=False, eq=False, repr=False)
    listener_security_protocol_map: dict[str, str] = attrs.field(init=False, eq=False,
                                                                 repr=False)
    num_network_threads: int = attrs.field(init=False, eq=False, repr=False)
    num_io_threads: int = attrs.field(init=False, eq=False, repr=False)
    queued_max_requests: int = attrs.field(init=False, eq=False, repr=False)
    queued_max_request_bytes: int = attrs.field(init=False, eq=False, repr=False)
    request_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    socket_send_buffer_bytes: int = attrs.field(init=False, eq=False, repr=False)
    socket_receive_buffer_bytes: int = attrs.field(init=False, eq=False, repr=False)
    socket_request_max_bytes: int = attrs.field(init=False, eq=False, repr=False)
    socket_listen_backlog_size: int = attrs.field(init=False, eq=False, repr=False)
    connections_max_idle_ms: int = attrs.field(init=False, eq=False, repr=False)
    max_connections: int = attrs.field(init=False, eq=False, repr=False)
    max_connections_per_ip: int = attrs.field(init=False, eq=False, repr=False)
    max_connections_per_ip_overrides: dict[str, int] = attrs.field(init=False, eq=False,
                                                                   repr=False)
    max_connection_creation_rate: int = attrs.field(init=False, eq=False, repr=False)
    # authorizer ("" when there is none)
    authorizer_class_name: str = attrs.field(init=False, eq=False, repr=False)
    super_users: str | None = attrs.field(init=False, eq=False, repr=False)
    allow_everyone_if_no_acl_found: bool = attrs.field(init=False, eq=False, repr=False)
    # requests and topics
    message_max_bytes: int = attrs.field(init=False, eq=False, repr=False)
    fetch_max_bytes: int = attrs.field(init=False, eq=False, repr=False)
    max_incremental_fetch_session_cache_slots: int = attrs.field(init=False, eq=False,
                                                                 repr=False)
    auto_create_topics_enable: bool = attrs.field(init=False, eq=False, repr=False)
    delete_topic_enable: bool = attrs.field(init=False, eq=False, repr=False)
    max_request_partition_size_limit: int = attrs.field(init=False, eq=False, repr=False)
    num_partitions: int = attrs.field(init=False, eq=False, repr=False)
    default_replication_factor: int = attrs.field(init=False, eq=False, repr=False)
    min_insync_replicas: int = attrs.field(init=False, eq=False, repr=False)
    unclean_leader_election_enable: bool = attrs.field(init=False, eq=False, repr=False)
    compression_type: str = attrs.field(init=False, eq=False, repr=False)
    replica_high_watermark_checkpoint_interval_ms: int = attrs.field(init=False, eq=False,
                                                                     repr=False)
    # logs (log_dirs: log.dirs, else log.dir)
    log_dirs: list[Path] = attrs.field(init=False, eq=False, repr=False)
    log_segment_bytes: int = attrs.field(init=False, eq=False, repr=False)
    log_roll_ms: int | None = attrs.field(init=False, eq=False, repr=False)
    log_roll_hours: int = attrs.field(init=False, eq=False, repr=False)
    log_roll_jitter_ms: int | None = attrs.field(init=False, eq=False, repr=False)
    log_roll_jitter_hours: int = attrs.field(init=False, eq=False, repr=False)
    log_retention_ms: int | None = attrs.field(init=False, eq=False, repr=False)
    log_retention_minutes: int | None = attrs.field(init=False, eq=False, repr=False)
    log_retention_hours: int = attrs.field(init=False, eq=False, repr=False)
    log_retention_bytes: int = attrs.field(init=False, eq=False, repr=False)
    log_retention_check_interval_ms: int = attrs.field(init=False, eq=False, repr=False)
    log_cleanup_policy: tuple[str, ...] = attrs.field(init=False, eq=False, repr=False)
    log_index_size_max_bytes: int = attrs.field(init=False, eq=False, repr=False)
    log_index_interval_bytes: int = attrs.field(init=False, eq=False, repr=False)
    log_flush_interval_messages: int = attrs.field(init=False, eq=False, repr=False)
    log_flush_interval_ms: int | None = attrs.field(init=False, eq=False, repr=False)
    log_flush_scheduler_interval_ms: int = attrs.field(init=False, eq=False, repr=False)
    log_flush_offset_checkpoint_interval_ms: int = attrs.field(init=False, eq=False,
                                                               repr=False)
    log_flush_start_offset_checkpoint_interval_ms: int = attrs.field(init=False, eq=False,
                                                                     repr=False)
    log_segment_delete_delay_ms: int = attrs.field(init=False, eq=False, repr=False)
    log_preallocate: bool = attrs.field(init=False, eq=False, repr=False)
    log_message_timestamp_type: str = attrs.field(init=False, eq=False, repr=False)
    log_message_downconversion_enable: bool = attrs.field(init=False, eq=False, repr=False)
    log_message_format_version: str = attrs.field(init=False, eq=False, repr=False)
    log_message_timestamp_before_max_ms: int = attrs.field(init=False, eq=False, repr=False)
    log_message_timestamp_after_max_ms: int = attrs.field(init=False, eq=False, repr=False)
    log_cleaner_enable: bool = attrs.field(init=False, eq=False, repr=False)
    log_cleaner_backoff_ms: int = attrs.field(init=False, eq=False, repr=False)
    log_cleaner_delete_retention_ms: int = attrs.field(init=False, eq=False, repr=False)
    log_cleaner_min_compaction_lag_ms: int = attrs.field(init=False, eq=False, repr=False)
    log_cleaner_max_compaction_lag_ms: int = attrs.field(init=False, eq=False, repr=False)
    log_cleaner_min_cleanable_ratio: float = attrs.field(init=False, eq=False, repr=False)
    num_recovery_threads_per_data_dir: int = attrs.field(init=False, eq=False, repr=False)
    # group coordinator
    group_initial_rebalance_delay_ms: int = attrs.field(init=False, eq=False, repr=False)
    group_min_session_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    group_max_session_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    group_max_size: int = attrs.field(init=False, eq=False, repr=False)
    group_consumer_heartbeat_interval_ms: int = attrs.field(init=False, eq=False, repr=False)
    group_consumer_session_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    group_consumer_min_session_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    group_consumer_max_session_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    group_consumer_max_size: int = attrs.field(init=False, eq=False, repr=False)
    group_consumer_assignors: list[str] = attrs.field(init=False, eq=False, repr=False)
    offsets_topic_num_partitions: int = attrs.field(init=False, eq=False, repr=False)
    offsets_topic_replication_factor: int = attrs.field(init=False, eq=False, repr=False)
    offsets_topic_segment_bytes: int = attrs.field(init=False, eq=False, repr=False)
    offsets_retention_minutes: int = attrs.field(init=False, eq=False, repr=False)
    offsets_retention_check_interval_ms: int = attrs.field(init=False, eq=False, repr=False)
    offsets_commit_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    offset_metadata_max_bytes: int = attrs.field(init=False, eq=False, repr=False)
    # transactions
    transaction_state_log_num_partitions: int = attrs.field(init=False, eq=False, repr=False)
    transaction_state_log_replication_factor: int = attrs.field(init=False, eq=False,
                                                                repr=False)
    transaction_state_log_min_isr: int = attrs.field(init=False, eq=False, repr=False)
    transaction_state_log_segment_bytes: int = attrs.field(init=False, eq=False, repr=False)
    transactional_id_expiration_ms: int = attrs.field(init=False, eq=False, repr=False)
    transaction_max_timeout_ms: int = attrs.field(init=False, eq=False, repr=False)
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int = attrs.field(
        init=False, eq=False, repr=False)
    transaction_remove_expired_transaction_cleanup_interval_ms: int = attrs.field(
        init=False, eq=False, repr=False)
    producer_id_expiration_ms: int = attrs.field(init=False, eq=False, repr=False)
    producer_id_expiration_check_interval_ms: int = attrs.field(init=False, eq=False,
                                                                repr=False)
    # metrics (kafkapy only)
    quota_window_num: int = attrs.field(init=False, eq=False, repr=False)
    quota_window_size_seconds: int = attrs.field(init=False, eq=False, repr=False)
    controller_quota_window_num: int = attrs.field(init=False, eq=False, repr=False)
    controller_quota_window_size_seconds: int = attrs.field(init=False, eq=False, repr=False)
    # replication quotas
    leader_replication_throttled_rate: int = attrs.field(init=False, eq=False, repr=False)
    follower_replication_throttled_rate: int = attrs.field(init=False, eq=False, repr=False)
    replication_quota_window_num: int = attrs.field(init=False, eq=False, repr=False)
    replication_quota_window_size_seconds: int = attrs.field(init=False, eq=False,
                                                             repr=False)
    kafkapy_metrics_port: int = attrs.field(init=False, eq=False, repr=False)
    kafkapy_metrics_host: str = attrs.field(init=False, eq=False, repr=False)
    kafkapy_metrics_enabled: bool = attrs.field(init=False, eq=False, repr=False)
    # derived
    log_config: LogConfig = attrs.field(init=False, eq=False, repr=False)
    """The broker-level topic defaults: ``LogConfig.resolve(None, props)``."""
    unknown: dict[str, str] = attrs.field(init=False, eq=False, repr=False)
    """Settings neither kafkapy nor Kafka knows (kept in ``props``, otherwise ignored)."""
    kafka_only: dict[str, str] = attrs.field(init=False, eq=False, repr=False)
    """The Kafka settings (``KAFKA_SETTINGS``, listener overrides included) that are set:
    accepted, checked, stored and described, not acted on."""
    _values: dict[str, object] = attrs.field(init=False, eq=False, repr=False)
    _listener_values: dict[str, dict[str, object]] = attrs.field(init=False, eq=False,
                                                                 repr=False)
    _override_keys: frozenset[str] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        for layer in (self.static, self.dynamic_default):
            for key, raw in layer.items():      # each layer must be valid on its own
                if key in SETTINGS:
                    _parse_value(SETTINGS[key], raw)
        for layer in (self.static, self.dynamic_default, self.dynamic):
            for key, raw in layer.items():
                if key not in SETTINGS:
                    _check_other_setting(key, raw)
        effective = self.props
        values = {s.name: _parse_value(s, effective[s.name]) if s.name in effective
                  else _DEFAULT_VALUES[s.name] for s in _TABLE}
        put = object.__setattr__        # frozen: only construction sets attributes
        for s in _TABLE:
            if s.attr is not None:
                put(self, s.attr, values[s.name])

        # node.id and broker.id are one setting (Kafka's KafkaConfig.populateSynonyms).
        node = values["node.id"] if "node.id" in effective else None
        broker = values["broker.id"] if "broker.id" in effective else None
        if node is not None and broker is not None and node != broker:
            raise InvalidConfigError(f"Invalid value {effective['broker.id']!r} for "
                                     f"configuration broker.id: it must equal node.id "
                                     f"({effective['node.id']!r}), of which it is an alias")
        node_id = node if node is not None else broker if broker is not None else \
            _DEFAULT_VALUES["node.id"]
        put(self, "node_id", node_id)
        put(self, "broker_id", node_id)
        for key in ("cluster.id", "broker.rack"):      # an empty string is no value
            if values[key] == "":
                values[key] = None
                put(self, key.replace(".", "_"), None)
        if values["cluster.id"] is not None:
            _check_cluster_id(str(values["cluster.id"]))
        selector = values["replica.selector.class"]
        if selector is not None and selector not in REPLICA_SELECTOR_CLASSES:
            raise _invalid("replica.selector.class", selector,
                           "kafkapy cannot load Java classes; it implements only "
                           + " and ".join(sorted(REPLICA_SELECTOR_CLASSES)))

        authorizer = values["authorizer.class.name"]
        if authorizer and authorizer not in AUTHORIZER_CLASSES:
            raise _invalid("authorizer.class.name", authorizer,
                           "kafkapy cannot load Java classes; it implements only "
                           + " and ".join(sorted(AUTHORIZER_CLASSES)))
        super_users = values["super.users"]
        if super_users:
            for entry in str(super_users).split(";"):
                if entry.strip() and ":" not in entry:
                    raise _invalid("super.users", super_users,
                                   f"expected principals in format principalType:principalName"
                                   f" separated by ';', but got {entry.strip()}")

        dirs = values["log.dirs"] if values["log.dirs"] is not None else values["log.dir"]
        assert isinstance(dirs, list)
        put(self, "log_dirs", [Path(d) for d in dirs])

        protocols = _protocol_map(str(values["listener.security.protocol.map"]))
        put(self, "listener_security_protocol_map", protocols)
        entries = values["listeners"]
        assert isinstance(entries, list)
        listeners = _endpoints("listeners", entries, protocols)
        _check_listener_ports(entries, listeners)
        put(self, "listeners", listeners)
        advertised = list(listeners)
        advertised_entries = values["advertised.listeners"]
        if advertised_entries is not None:
            assert isinstance(advertised_entries, list)
            advertised = _endpoints("advertised.listeners", advertised_entries, protocols)
            extra = sorted({e.name for e in advertised} - {e.name for e in listeners})
            if extra:
                raise _invalid("advertised.listeners", ",".join(advertised_entries),
                               f"listener names must be among those of listeners; "
                               f"{', '.join(extra)} is not")
        if any(e.host == "0.0.0.0" for e in advertised):
            raise _invalid("advertised.listeners" if advertised_entries is not None
                           else "listeners", ",".join(advertised_entries or entries),
                           "advertised.listeners cannot use the nonroutable meta-address "
                           "0.0.0.0; set advertised.listeners to a routable address")
        put(self, "advertised_listeners", advertised)
        names = [e.name for e in advertised]
        inter = values["inter.broker.listener.name"]
        inter_protocol = str(values["security.inter.broker.protocol"]).upper()
        protocol_set = "security.inter.broker.protocol" in effective
        if inter not in (None, "") and protocol_set:
            raise _invalid("security.inter.broker.protocol", inter_protocol,
                           "inter.broker.listener.name and security.inter.broker.protocol "
                           "should not be set at the same time")
        if inter_protocol not in _PROTOCOLS:
            raise _invalid("security.inter.broker.protocol", inter_protocol,
                           f"one of {', '.join(_PROTOCOLS)}")
        if inter in (None, "") and protocol_set:
            # Kafka: the listener named after the protocol (ListenerName.forSecurityProtocol)
            inter = inter_protocol
            if inter not in names:
                raise _invalid("security.inter.broker.protocol", inter_protocol,
                               f"the inter-broker listener {inter} must be one of the "
                               f"advertised listeners ({', '.join(names)})")
        elif inter in (None, ""):
            inter = "PLAINTEXT" if "PLAINTEXT" in names else names[0] if names else None
        else:
            inter = str(inter).upper()
            if inter not in names:
                raise _invalid("inter.broker.listener.name", str(inter),
                               f"it must be one of the advertised listeners "
                               f"({', '.join(names)})")
        put(self, "inter_broker_listener_name", inter)

        overrides = _ip_overrides(str(values["max.connections.per.ip.overrides"]))
        put(self, "max_connections_per_ip_overrides", overrides)
        if values["max.connections.per.ip"] == 0 and not overrides:
            raise _invalid("max.connections.per.ip", "0", "can be 0 only if "
                           "max.connections.per.ip.overrides is set")

        _check_consumer_group_settings(values)
        per_listener, override_keys = _listener_overrides(effective)
        put(self, "_listener_values", per_listener)
        put(self, "_override_keys", override_keys)
        put(self, "log_config", _resolve_log_config(effective))
        put(self, "unknown", {k: v for k, v in effective.items()
                              if not _is_known(k) and not _is_listener_override(k)})
        put(self, "kafka_only", {k: v for k, v in effective.items()
                                 if kafka_setting(k) is not None})
        for key, raw in effective.items():      # listener.name.<l>.<mechanism>.<setting> too
            setting = _listener_override_setting(key)
            if setting is not None:
                _parse_value(setting, raw)
        put(self, "_values", values)
        for listener in sorted({e.name for e in listeners}):
            auth = self.listener_setting(listener, "ssl.client.auth")
            if str(auth).lower() not in _CLIENT_AUTH:
                key = f"listener.name.{listener.lower()}.ssl.client.auth" \
                    if "ssl.client.auth" in per_listener.get(listener, {}) \
                    else "ssl.client.auth"
                raise _invalid(key, auth, f"one of {', '.join(_CLIENT_AUTH)}")

    def listener_setting(self, listener: str, name: str) -> object:
        """The typed value of setting ``name`` for ``listener``: Kafka's per-listener
        override ``listener.name.<listener lower-case>.<name>`` if set (parsed like the
        setting), else the broker-wide value.

        Raises:
            KeyError: ``name`` is not a setting kafkapy knows.
        """
        if name not in SETTINGS:
            raise KeyError(name)
        per_listener = self._listener_values.get(listener.upper(), {})
        return per_listener[name] if name in per_listener else self._values[name]

    def listener_protocol(self, listener: str) -> str:
        """The security protocol of ``listener`` (listener.security.protocol.map)."""
        return self.listener_security_protocol_map[listener.upper()]

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_properties(cls, properties: Mapping[str, object]) -> BrokerConfig:
        """A config from static settings (Kafka names). Values may be strings or Python values
        (``True``, ``3``, ``Path``, lists for list settings); None means unset.

        Logs one warning listing the keys neither kafkapy nor Kafka knows (they are kept), and
        one line listing the Kafka settings set that kafkapy does not act on.

        Errors: ``InvalidConfigError``.
        """
        config = cls(static=properties)
        if config.unknown:
            logger.warning("Unknown broker settings, kept but not used by kafkapy: %s",
                           ", ".join(sorted(config.unknown)))
        if config.kafka_only:
            logger.info("Kafka settings kafkapy accepts but does not act on: %s",
                        ", ".join(sorted(config.kafka_only)))
        return config

    @classmethod
    def load(cls, path: str | Path | None = None, overrides: Sequence[str] = ()) -> BrokerConfig:
        """Read a ``server.properties`` file and apply ``key=value`` overrides over it (the
        ``--override`` options of ``kafkapy-server``, last one winning).

        With ``path`` None there is no file: the embedded default is an empty file, so every
        setting takes its default, which makes a standalone broker (node 1 on
        ``PLAINTEXT://localhost:9092``, data in ``./kafkapy-data``).

        Errors: ``OSError`` if the file cannot be read; ``InvalidConfigError`` for a malformed
        ``\\uXXXX`` escape (with the file and line), an override without ``=`` and any invalid
        setting.
        """
        props: dict[str, str] = {}
        if path is not None:
            data = Path(path).read_bytes()
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError:
                text = data.decode("iso-8859-1")
            try:
                props = parse_properties(text)
            except ValueError as e:
                raise InvalidConfigError(f"{path}: {e}") from e
        for override in overrides:
            key, sep, value = override.partition("=")
            if not sep or not key.strip():
                raise InvalidConfigError(f"Invalid override {override!r}: expected key=value")
            props[key.strip()] = value
        return cls.from_properties(props)

    # ------------------------------------------------------------------ views

    @property
    def props(self) -> dict[str, str]:
        """The effective raw settings (dynamic over cluster-default dynamic over static), unknown
        keys included: what ``LogManager(broker_props=...)`` and ``LogConfig.resolve`` take."""
        return {**self.static, **self.dynamic_default, **self.dynamic}

    def with_updates(self, updates: Mapping[str, object], *,
                     cluster_default: bool = False) -> BrokerConfig:
        """A new config with dynamic settings changed (IncrementalAlterConfigs on this broker,
        or with ``cluster_default`` on the cluster-wide default, resource name ""). A None value
        removes the dynamic value, so the setting falls back to the next layer.

        Only settings kafkapy can change while running are accepted (``Setting.dynamic``), and
        the Kafka settings kafkapy does not act on whose Kafka update mode is not read-only. A
        thread count may change to between half and double its current value, as in Kafka.

        Errors: ``InvalidConfigError`` for an unknown or non-dynamic key, an invalid value, or
        an invalid resulting config; ``self`` is unchanged.
        """
        unknown = sorted(k for k in updates if not _is_known(k))
        if unknown:
            raise InvalidConfigError(f"Unknown broker configs: {', '.join(unknown)}")
        fixed = sorted(k for k in updates if not _dynamic(k))
        if fixed:
            raise InvalidConfigError(f"Cannot update these configs dynamically: "
                                     f"{', '.join(fixed)}")
        # Kafka's DynamicSecurityConfigs (keystores, truststores) change per listener only.
        # Checked here for the ones kafkapy does not act on; a SETTINGS row decides for itself.
        unprefixed = sorted(k for k, v in updates.items() if v is not None and
                            k in _KAFKA_LISTENER_ONLY_DYNAMIC and k in KAFKA_SETTINGS)
        if unprefixed:
            raise InvalidConfigError("These security configs can be dynamically updated only "
                                     "per-listener using the listener prefix: "
                                     + ", ".join(unprefixed))
        if cluster_default:
            per_broker = sorted(k for k in updates if _per_broker(k))
            if per_broker:
                raise InvalidConfigError("Cannot update these configs at default cluster "
                                         "level, broker id must be specified: "
                                         + ", ".join(per_broker))
        layer = dict(self.dynamic_default if cluster_default else self.dynamic)
        for key, value in updates.items():
            text = _to_text(value)
            if text is None:
                layer.pop(key, None)
            else:
                layer[key] = text
        new = attrs.evolve(self, dynamic_default=layer) if cluster_default \
            else attrs.evolve(self, dynamic=layer)
        for key in _THREAD_COUNTS:
            attr = SETTINGS[key].attr
            assert attr is not None
            old_count, new_count = getattr(self, attr), getattr(new, attr)
            if new_count != old_count:
                if new_count < old_count // 2:
                    raise _invalid(key, new_count, f"value should be at least half the "
                                                   f"current value {old_count}")
                if new_count > old_count * 2:
                    raise _invalid(key, new_count, f"value should not be greater than double "
                                                   f"the current value {old_count}")
        return new

    def describe(self, names: Iterable[str] | None = None, *, include_synonyms: bool = True,
                 cluster_default: bool = False) -> list[ConfigEntry]:
        """DescribeConfigs for this broker: every known setting, then the unknown keys (which,
        as in Kafka, are sensitive with no value since their type is unknown). ``names``
        keeps only those keys (unknown names are left out). With ``cluster_default`` (resource
        name "") only the settings set at the cluster-default level are listed.

        Sources follow Kafka's ConfigHelper: the first of the setting's synonyms found in the
        dynamic, cluster-default, static and default layers, counting only from the setting
        itself on (``log.retention.hours`` is not sourced from a set ``log.retention.ms``).
        """
        wanted = None if names is None else set(names)
        # Kafka describes its ConfigDef's public settings and whatever else is set.
        candidates: list[str] = list(self.dynamic_default) if cluster_default \
            else [*SETTINGS, *(n for n, k in KAFKA_SETTINGS.items() if not k.internal),
                  *(n for n in self.props if n not in SETTINGS and (
                      n not in KAFKA_SETTINGS or KAFKA_SETTINGS[n].internal))]
        entries = []
        for name in candidates:
            if wanted is not None and name not in wanted:
                continue
            entry = self._entry(name, cluster_default)
            if not include_synonyms:
                entry = attrs.evolve(entry, synonyms=())
            entries.append(entry)
        return entries

    def _entry(self, name: str, cluster_default: bool) -> ConfigEntry:
        if name in self._override_keys:
            return self._listener_entry(name)
        setting = SETTINGS.get(name)
        kafka = kafka_setting(name) if setting is None else None
        if kafka is not None:
            return self._kafka_entry(name, kafka, cluster_default)
        if setting is None:          # only static: with_updates refuses unknown keys
            source = ConfigSource.STATIC_BROKER_CONFIG
            return ConfigEntry(name, None, source, False, True, True,
                               (ConfigSynonym(name, None, source),))
        value: str | None
        if name in ("node.id", "broker.id"):
            value = str(self.node_id)
            is_set = "node.id" in self.static or "broker.id" in self.static
            synonyms: list[ConfigSynonym] = []
            if is_set:
                synonyms.append(ConfigSynonym(name, value, ConfigSource.STATIC_BROKER_CONFIG))
            synonyms.append(ConfigSynonym(name, setting.default, ConfigSource.DEFAULT_CONFIG))
        else:
            value = _describe_value(self._values[name])
            synonyms = self._synonyms(name)
        if cluster_default:
            synonyms = [s for s in synonyms
                        if s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
        sensitive = setting.config_type == ConfigType.PASSWORD
        if sensitive:                   # Kafka never shows a password's value
            value = None
            synonyms = [attrs.evolve(s, value=None) for s in synonyms]
        return ConfigEntry(name=name, value=value, source=source,
                           is_default=source == ConfigSource.DEFAULT_CONFIG,
                           read_only=not setting.dynamic, sensitive=sensitive,
                           synonyms=tuple(synonyms), config_type=setting.config_type,
                           documentation=setting.doc)

    def _listener_entry(self, name: str) -> ConfigEntry:
        """A ``listener.name.<listener>.<setting>`` override, as Kafka describes one: its
        own value first, then the synonyms of the setting it overrides."""
        setting = _known(name)
        own = [ConfigSynonym(name, _describe_value(_parse_value(
                   attrs.evolve(setting, name=name), layer[name])), source)
               for layer, source in ((self.dynamic, ConfigSource.DYNAMIC_BROKER_CONFIG),
                                     (self.dynamic_default,
                                      ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                                     (self.static, ConfigSource.STATIC_BROKER_CONFIG))
               if name in layer]
        synonyms = [*own, *self._synonyms(setting.name)]
        sensitive = setting.config_type == ConfigType.PASSWORD
        if sensitive:
            synonyms = [attrs.evolve(s, value=None) for s in synonyms]
        return ConfigEntry(name=name, value=synonyms[0].value, source=synonyms[0].source,
                           is_default=False, read_only=not setting.dynamic,
                           sensitive=sensitive, synonyms=tuple(synonyms),
                           config_type=setting.config_type, documentation=setting.doc)

    def _kafka_entry(self, name: str, kafka: KafkaSetting,
                     cluster_default: bool) -> ConfigEntry:
        """A Kafka setting kafkapy does not act on (or a listener override of one): its
        synonyms are the setting itself, then for an override the setting it overrides
        (Kafka's brokerConfigSynonyms), in each layer, then Kafka's default."""
        synonyms = []
        names = [name] if name == kafka.name else [name, kafka.name]
        for n in names:
            for layer, source in (
                    (self.dynamic, ConfigSource.DYNAMIC_BROKER_CONFIG),
                    (self.dynamic_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                    (self.static, ConfigSource.STATIC_BROKER_CONFIG)):
                if n in layer and not (cluster_default and
                                       source != ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG):
                    value = _describe_kafka_value(kafka, _parse_kafka_value(kafka, n, layer[n]))
                    synonyms.append(ConfigSynonym(n, value, source))
        if kafka.default is not None and not cluster_default:
            synonyms.append(ConfigSynonym(kafka.name, None if kafka.sensitive else kafka.default,
                                          ConfigSource.DEFAULT_CONFIG))
        first = synonyms[0] if synonyms else None
        source = first.source if first is not None else ConfigSource.DEFAULT_CONFIG
        value = first.value if first is not None else None
        return ConfigEntry(name=name, value=value, source=source,
                           is_default=source == ConfigSource.DEFAULT_CONFIG,
                           read_only=kafka.update_mode == "read-only",
                           sensitive=kafka.sensitive, synonyms=tuple(synonyms),
                           config_type=kafka.config_type, documentation=_KAFKA_DOC)

    def _synonyms(self, name: str) -> list[ConfigSynonym]:
        names = _BROKER_SYNONYMS.get(name, (name,))
        found = []
        for layer, source in ((self.dynamic, ConfigSource.DYNAMIC_BROKER_CONFIG),
                              (self.dynamic_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                              (self.static, ConfigSource.STATIC_BROKER_CONFIG)):
            for n in names:
                if n in layer:
                    value = _describe_value(_parse_value(SETTINGS[n], layer[n]))
                    found.append(ConfigSynonym(n, value, source))
        for n in names:
            if SETTINGS[n].default is not None:
                found.append(ConfigSynonym(n, _describe_value(_DEFAULT_VALUES[n]),
                                           ConfigSource.DEFAULT_CONFIG))
        while found and found[0].name != name:
            found.pop(0)
        return found


def _base_setting(key: str) -> Setting | None:
    """The setting ``key`` names: itself, or for ``listener.name.<listener>.<setting>`` the
    setting after the prefix; None if kafkapy knows neither."""
    if key in SETTINGS:
        return SETTINGS[key]
    match = _LISTENER_OVERRIDE.fullmatch(key)
    return SETTINGS.get(match.group(2)) if match is not None else None


def _known(key: str) -> Setting:
    setting = _base_setting(key)
    assert setting is not None
    return setting


def _listener_overrides(effective: Mapping[str, str]
                        ) -> tuple[dict[str, dict[str, object]], frozenset[str]]:
    """The ``listener.name.<listener>.<setting>`` keys naming a known setting, parsed (each
    checked like the setting, the error naming the whole key): listener (upper-case) ->
    setting -> value, and the set of those keys."""
    found: dict[str, dict[str, object]] = {}
    keys = []
    for key, raw in effective.items():
        match = _LISTENER_OVERRIDE.fullmatch(key)
        if match is None or match.group(2) not in SETTINGS:
            continue
        listener, name = match.group(1).upper(), match.group(2)
        found.setdefault(listener, {})[name] = _parse_value(
            attrs.evolve(SETTINGS[name], name=key), raw)
        keys.append(key)
    return found, frozenset(keys)


def _resolve_log_config(props: Mapping[str, str]) -> LogConfig:
    """The broker's topic defaults, checked by LogConfig itself (one set of rules)."""
    try:
        return LogConfig.resolve(None, props)
    except InvalidConfigError as e:
        # Name the broker settings behind a derived topic value LogConfig refused.
        sources = [f"{broker}={props[broker]}" for topic, (_a, _k, _d, brokers)
                   in _TOPIC_SPEC.items() if f"configuration {topic}:" in e.message
                   for broker, _scale in brokers if broker in props]
        if not sources:
            raise
        raise InvalidConfigError(f"{e.message} (from the broker setting "
                                 f"{', '.join(sources)})") from e
