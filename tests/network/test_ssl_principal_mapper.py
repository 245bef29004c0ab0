"""SslPrincipalMapper: Kafka's ssl.principal.mapping.rules as pure logic (the cases of Kafka's
SslPrincipalMapperTest), and the principal of a real certificate's subject."""

from __future__ import annotations

import pytest
import trustme

from kafkapy.network.ssl_principal_mapper import (
    ANONYMOUS,
    NoMatchingRule,
    SslPrincipalMapper,
    principal_of_certificate,
    subject_dn,
)

DN = "CN=alice,OU=eng,O=acme,C=US"


def name(rules: str, dn: str = DN) -> str:
    return SslPrincipalMapper.from_rules(rules).get_name(dn)


def test_default_keeps_the_distinguished_name() -> None:
    assert name("DEFAULT") == DN
    assert SslPrincipalMapper.from_rules(None).get_name(DN) == DN


@pytest.mark.parametrize(("rules", "expected"), [
    ("RULE:^CN=(.*?),OU=(.*?),O=(.*?),C=(.*?)$/$1@$3/", "alice@acme"),
    ("RULE:^CN=(.*?),OU=(.*?),O=(.*?),C=(.*?)$/$1@$3/U", "ALICE@ACME"),
    ("RULE:^CN=(.*?),.*$/$1/L", "alice"),
    ("RULE:^cn=(.*?),.*$/$1/, DEFAULT", DN),             # no match: the next rule
    ("RULE:^CN=(.*?),.*$/$1/,RULE:^.*$/never/", "alice"),  # the first that applies wins
    ("RULE:^CN=(.*),OU=.*$/$1 $5/", "alice $5"),          # a group it lacks: literal
    ("RULE:^CN=(.*?),.*$/\\$1 is $1/", "$1 is alice"),     # \$ is a literal dollar
    ("RULE:^CN=([a-z]+)(.*)$/$12/", "alice2"),            # $12 with 2 groups: $1 then 2
    ("  RULE:^CN=(.*?),.*$/$1/  ,  DEFAULT  ", "alice"),   # blanks around rules
])
def test_rules_as_kafka_applies_them(rules: str, expected: str) -> None:
    assert name(rules) == expected


def test_a_rule_with_escaped_slashes() -> None:
    assert name("RULE:^CN=([^,]+),.*$/user\\/$1/", DN) == "user/alice"


def test_no_matching_rule_is_refused() -> None:
    with pytest.raises(NoMatchingRule, match="No rules apply to CN=alice"):
        name("RULE:^CN=bob,.*$/bob/")


@pytest.mark.parametrize("rules", ["RULE:^CN=(.*?),.*$/$1", "RULE:abc", "DEFAULTS",
                                   "RULE:^CN=(.*?),.*$/$1/X", "RULE:(/x/"])
def test_invalid_rules_are_refused(rules: str) -> None:
    with pytest.raises(ValueError, match="Invalid rule"):
        SslPrincipalMapper.from_rules(rules)


def test_the_principal_of_a_certificate_is_its_subject_most_specific_first() -> None:
    ca = trustme.CA()
    cert = ca.issue_cert("alice.example", common_name="alice", organization_name="acme",
                         organization_unit_name="eng")
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    der = x509.load_pem_x509_certificate(cert.cert_chain_pems[0].bytes()).public_bytes(
        Encoding.DER)
    assert subject_dn(der) == "CN=alice,OU=eng,O=acme"
    assert principal_of_certificate(SslPrincipalMapper.from_rules("DEFAULT"), der) == \
        "User:CN=alice,OU=eng,O=acme"
    assert principal_of_certificate(
        SslPrincipalMapper.from_rules("RULE:^CN=([^,]+),.*$/$1/U"), der) == "User:ALICE"
    assert principal_of_certificate(SslPrincipalMapper.from_rules("DEFAULT"), None) == \
        ANONYMOUS == "User:ANONYMOUS"


def test_attributes_without_an_rfc2253_keyword_are_hex_as_java_writes_them() -> None:
    # Java's X500Principal.getName() for this subject (the emailAddress and serialNumber
    # values as #hex of their DER: IA5String 0x16, PrintableString 0x13).
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    name = x509.Name([
        x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "acme, inc"),
        x509.NameAttribute(NameOID.COMMON_NAME, "alice"),
        x509.NameAttribute(NameOID.EMAIL_ADDRESS, "a@x.org"),
        x509.NameAttribute(NameOID.SERIAL_NUMBER, "42")])
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(
        key.public_key()).serial_number(1).not_valid_before(now).not_valid_after(
        now + datetime.timedelta(days=1)).sign(key, hashes.SHA256())
    der = cert.public_bytes(serialization.Encoding.DER)
    assert subject_dn(der) == ("2.5.4.5=#13023432,1.2.840.113549.1.9.1=#1607614078"
                               "2e6f7267,CN=alice,O=acme\\, inc,C=US")
