"""The JAAS configuration text of Kafka's ``sasl.jaas.config`` settings, parsed as Kafka's
``JaasConfig`` reads it (a ``java.io.StreamTokenizer`` over JAAS syntax).

Syntax: ``<LoginModuleClass> <flag> [<key>=<value> ...];`` per login module, flag one of
``required``, ``requisite``, ``sufficient``, ``optional``; values are double-quoted strings
(backslash escapes) or bare words; ``//`` and ``/* */`` comments are skipped. As in Kafka, a
``sasl.jaas.config`` value must hold exactly one login module.
"""

from __future__ import annotations

import re

import attrs

from kafkapy.errors import InvalidConfigError

__all__ = ["JaasModule", "parse_jaas_config"]

_FLAGS = ("required", "requisite", "sufficient", "optional")
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<quoted>"(?:[^"\\]|\\.)*")
  | (?P<word>[^\s="';]+)
  | (?P<symbol>[=;])
""", re.VERBOSE | re.DOTALL)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "b": "\b"}


@attrs.frozen
class JaasModule:
    """One login module entry: its class, control flag and options."""

    login_module: str
    flag: str
    options: dict[str, str]


def _tokens(text: str, setting: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise InvalidConfigError(f"Invalid JAAS configuration in {setting}: unexpected "
                                     f"{text[pos]!r} at position {pos}")
        pos = match.end()
        kind = match.lastgroup
        assert kind is not None
        if kind in ("space", "comment"):
            continue
        value = match.group()
        if kind == "quoted":
            value = _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), value[1:-1])
        out.append((kind, value))
    return out


def parse_jaas_config(text: str, setting: str = "sasl.jaas.config") -> JaasModule:
    """The one login module of a ``sasl.jaas.config`` value.

    Raises:
        InvalidConfigError: not JAAS syntax, an unknown flag, or not exactly one module
            (Kafka's messages).
    """
    tokens = _tokens(text, setting)
    modules: list[JaasModule] = []
    i = 0
    while i < len(tokens):
        kind, login_module = tokens[i]
        if kind != "word":
            raise InvalidConfigError(f"Invalid JAAS configuration in {setting}: expected a "
                                     f"login module class, found {login_module!r}")
        if i + 1 >= len(tokens) or tokens[i + 1][0] != "word":
            raise InvalidConfigError(f"Invalid JAAS configuration in {setting}: login module "
                                     f"control flag not specified")
        flag = tokens[i + 1][1].lower()
        if flag not in _FLAGS:
            raise InvalidConfigError(f"Invalid JAAS configuration in {setting}: invalid login "
                                     f"module control flag {tokens[i + 1][1]!r}")
        i += 2
        options: dict[str, str] = {}
        while True:
            if i >= len(tokens):
                raise InvalidConfigError(f"Invalid JAAS configuration in {setting}: the login "
                                         f"module entry must end with ';'")
            kind, value = tokens[i]
            if kind == "symbol" and value == ";":
                i += 1
                break
            if (kind != "word" or i + 2 >= len(tokens) or tokens[i + 1] != ("symbol", "=")
                    or tokens[i + 2][0] not in ("word", "quoted")):
                raise InvalidConfigError(f"Invalid JAAS configuration in {setting}: expected "
                                         f"key=value, found {value!r}")
            options[value] = tokens[i + 2][1]
            i += 3
        modules.append(JaasModule(login_module, flag, options))
    if len(modules) != 1:
        raise InvalidConfigError(f"JAAS config property contains {len(modules)} login modules, "
                                 f"should be 1 module")
    return modules[0]
