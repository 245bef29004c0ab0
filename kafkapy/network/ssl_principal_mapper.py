"""SslPrincipalMapper and the SSL half of DefaultKafkaPrincipalBuilder: the principal of a TLS
connection, from its client certificate.

Kafka's rules (``ssl.principal.mapping.rules``, KIP-371), as pure logic:

- The rules are a comma-separated list tried in order; the first that applies gives the name.
  ``DEFAULT`` applies to every name and keeps the distinguished name as it is.
  ``RULE:pattern/replacement/`` applies when the (Java) regular expression ``pattern`` matches
  the whole DN, and gives the DN with every match of ``pattern`` replaced (Java's
  ``String.replaceAll``: ``$n`` is group n, ``\\x`` a literal x; a ``$n`` naming a group the
  pattern does not have is literal, as Kafka escapes it); a trailing ``L`` or ``U``
  (``RULE:.../.../L``) lower- or upper-cases the result. No rule applies: the connection is
  refused (Kafka's NoMatchingRule), which the socket server treats as a failed authentication.
- The DN is the certificate subject in RFC 2253 form, most specific attribute first, as Java's
  ``X500Principal.getName()`` writes it: ``CN=alice,OU=eng,O=acme,C=US`` (``Name.rfc4514_string``
  of ``cryptography``, the same format: RFC 4514 obsoletes 2253 without changing it).
- No client certificate (``ssl.client.auth`` none, or requested and the client sent none):
  ``User:ANONYMOUS``.

Java regular expressions are run by Python's ``re``; the constructs rules use in practice
(groups, classes, lazy and greedy quantifiers, anchors) mean the same in both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

__all__ = ["ANONYMOUS", "NoMatchingRule", "SslPrincipalMapper", "principal_of_certificate",
           "subject_dn"]

ANONYMOUS = "User:ANONYMOUS"

# Kafka's SslPrincipalMapper.RULE_PATTERN and RULE_SPLITTER, unchanged.
_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)")
_PARSER = re.compile(_RULE)


class NoMatchingRule(ValueError):
    """No rule of ``ssl.principal.mapping.rules`` applies to a distinguished name."""


@attrs.frozen
class _Rule:
    pattern: re.Pattern[str] | None      # None: DEFAULT
    replacement: str = ""
    case: str = ""                       # "", "L" or "U"

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        result = self.pattern.sub(lambda m: _expand(self.replacement, m), dn)
        if self.case == "L":
            return result.lower()
        if self.case == "U":
            return result.upper()
        return result

    def __str__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        return f"RULE:{self.pattern.pattern}/{self.replacement}" + \
            (f"/{self.case}" if self.case else "")


def _expand(template: str, match: re.Match[str]) -> str:
    """Java's Matcher.appendReplacement after Kafka's escapeLiteralBackReferences."""
    groups = match.re.groups
    out: list[str] = []
    i = 0
    while i < len(template):
        c = template[i]
        if c == "\\" and i + 1 < len(template):
            out.append(template[i + 1])
            i += 2
            continue
        if c == "$" and i + 1 < len(template) and template[i + 1].isdigit() \
                and int(template[i + 1]) <= groups:
            # Java reads as many digits as still name an existing group.
            number = int(template[i + 1])
            i += 2
            while i < len(template) and template[i].isdigit() \
                    and number * 10 + int(template[i]) <= groups:
                number = number * 10 + int(template[i])
                i += 1
            out.append(match.group(number) or "")
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _parse(rules: str) -> tuple[_Rule, ...]:
    texts = [m.group(1) for m in _SPLITTER.finditer(rules.strip())]
    parsed: list[_Rule] = []
    for text in texts:
        match = _PARSER.match(text)
        assert match is not None            # the last alternative matches anything
        if match.end() != len(text):
            raise ValueError(f"Invalid rule: `{text}`, unmatched substring: "
                             f"`{text[match.end():]}`")
        if match.group(1) is not None:
            parsed.append(_Rule(None))
        elif match.group(2) is not None:
            try:
                pattern = re.compile(match.group(2))
            except re.error as exc:
                raise ValueError(f"Invalid rule: `{text}`: {exc}") from exc
            parsed.append(_Rule(pattern, match.group(4), match.group(6)))
        # an empty rule is ignored, as in Kafka
    return tuple(parsed)


@attrs.frozen
class SslPrincipalMapper:
    """``SslPrincipalMapper.from_rules("RULE:^CN=(.*?),.*$/$1/L,DEFAULT")``.

    Raises:
        ValueError: a rule that does not parse (Kafka refuses it at start-up too).
    """

    rules: tuple[_Rule, ...]

    @classmethod
    def from_rules(cls, rules: str | Sequence[str] | None) -> SslPrincipalMapper:
        if rules is None:
            rules = "DEFAULT"
        elif not isinstance(rules, str):
            rules = ",".join(rules)       # a LIST setting, already split at commas
        return cls(_parse(rules))

    def get_name(self, dn: str) -> str:
        """The principal name for ``dn``.

        Raises:
            NoMatchingRule: no rule applies.
        """
        for rule in self.rules:
            name = rule.apply(dn)
            if name is not None:
                return name
        raise NoMatchingRule(f"No rules apply to {dn}, rules "
                             f"[{', '.join(str(r) for r in self.rules)}]")


# The attribute keywords Java's X500Principal.getName() (RFC 2253) writes by name; any other
# attribute is written as its OID and the hex of its DER value (RFC 2253, 2.4).
_KEYWORDS = frozenset({"2.5.4.3", "2.5.4.6", "2.5.4.7", "2.5.4.8", "2.5.4.10", "2.5.4.11",
                       "2.5.4.9", "0.9.2342.19200300.100.1.25", "0.9.2342.19200300.100.1.1"})
# ASN.1 universal tags of the string types a name attribute may have
_TAGS = {"UTF8String": 12, "PrintableString": 19, "T61String": 20, "IA5String": 22,
         "VisibleString": 26, "UniversalString": 28, "BMPString": 30, "NumericString": 18}
_ENCODINGS = {"BMPString": "utf-16-be", "UniversalString": "utf-32-be"}


def _der_value(attribute: object) -> bytes:
    """The DER encoding of a name attribute's string value (tag, length, content)."""
    kind = getattr(attribute, "_type").name     # noqa: B009 - cryptography keeps it private
    value = getattr(attribute, "value")         # noqa: B009
    content = value.encode(_ENCODINGS.get(kind, "utf-8")) if isinstance(value, str) \
        else bytes(value)
    n = len(content)
    length = bytes([n]) if n < 0x80 else \
        bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8,
                                                                  "big")
    return bytes([_TAGS.get(kind, 12)]) + length + content


def subject_dn(der: bytes) -> str:
    """The subject of a DER certificate as Java's ``X500Principal.getName()`` writes it (RFC
    2253): most specific attribute first (``CN=alice,OU=eng,O=acme,C=US``), the RFC's
    keywords (CN, C, L, ST, O, OU, STREET, DC, UID) by name with their special characters
    escaped, any other attribute (emailAddress, serialNumber, ...) as ``OID=#<hex of DER>``."""
    from cryptography import x509  # imported here: only TLS connections need it

    rdns = []
    for rdn in reversed(list(x509.load_der_x509_certificate(der).subject.rdns)):
        parts = []
        for attribute in rdn:
            oid = attribute.oid.dotted_string
            if oid in _KEYWORDS:
                parts.append(attribute.rfc4514_string())
            else:
                parts.append(f"{oid}=#{_der_value(attribute).hex()}")
        rdns.append("+".join(parts))
    return ",".join(rdns)


def principal_of_certificate(mapper: SslPrincipalMapper, der: bytes | None) -> str:
    """``User:<name>`` for a client certificate (``der``), ``User:ANONYMOUS`` without one
    (DefaultKafkaPrincipalBuilder).

    Raises:
        NoMatchingRule: no mapping rule applies to the certificate's subject.
    """
    if der is None:
        return ANONYMOUS
    return "User:" + mapper.get_name(subject_dn(der))
