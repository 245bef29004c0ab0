"""kafkapy.server.password_encoder: dynamic password settings encrypted at rest as Kafka's
EncryptingPasswordEncoder does. The encoded form is checked field by field and decrypted here
independently (``cryptography``'s own PBKDF2 and AES, not the module's code), so a value
kafkapy writes is one Kafka can read; then Kafka's refusals and the decode failures.
"""

from __future__ import annotations

import base64
import logging

import pytest
from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

from kafkapy.config import BrokerConfig
from kafkapy.errors import InvalidConfigError
from kafkapy.server.password_encoder import (
    decode_dynamic_passwords,
    decode_password,
    encode_dynamic_passwords,
    encode_password,
)

SECRET = "encoder-secret"
PASSWORD = "s3cr\u00e9t-passw0rd"


def config(**extra: str) -> BrokerConfig:
    return BrokerConfig.from_properties({"password.encoder.secret": SECRET, **extra})


def fields(encoded: str) -> dict[str, str]:
    return dict(item.split(":", 1) for item in encoded.split(","))


def independent_key(f: dict[str, str], algorithm: hashes.HashAlgorithm) -> bytes:
    kdf = PBKDF2HMAC(algorithm=algorithm, length=int(f["keyLength"]) // 8,
                     salt=base64.b64decode(f["salt"]), iterations=int(f["iterations"]))
    return kdf.derive(SECRET.encode())


def test_cbc_default_as_kafka_writes_it() -> None:
    f = fields(encode_password(config(), PASSWORD))
    assert set(f) == {"keyFactoryAlgorithm", "cipherAlgorithm", "keyLength", "salt",
                      "iterations", "encryptedPassword", "passwordLength",
                      "initializationVector"}
    assert (f["keyFactoryAlgorithm"], f["cipherAlgorithm"], f["keyLength"], f["iterations"],
            f["passwordLength"]) == ("PBKDF2WithHmacSHA512", "AES/CBC/PKCS5Padding", "128",
                                     "4096", str(len(PASSWORD)))
    assert len(base64.b64decode(f["salt"])) == 256
    key = independent_key(f, hashes.SHA512())
    decryptor = Cipher(algorithms.AES(key),
                       modes.CBC(base64.b64decode(f["initializationVector"]))).decryptor()
    padded = decryptor.update(base64.b64decode(f["encryptedPassword"])) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    assert (unpadder.update(padded) + unpadder.finalize()).decode() == PASSWORD


def test_gcm_and_settings_are_honoured() -> None:
    cfg = config(**{"password.encoder.cipher.algorithm": "AES/GCM/NoPadding",
                    "password.encoder.key.length": "256",
                    "password.encoder.iterations": "2048",
                    "password.encoder.keyfactory.algorithm": "PBKDF2WithHmacSHA256"})
    f = fields(encode_password(cfg, PASSWORD))
    assert (f["cipherAlgorithm"], f["keyLength"], f["iterations"],
            f["authenticationTagLength"]) == ("AES/GCM/NoPadding", "256", "2048", "128")
    key = independent_key(f, hashes.SHA256())
    plain = AESGCM(key).decrypt(base64.b64decode(f["initializationVector"]),
                                base64.b64decode(f["encryptedPassword"]), None)
    assert plain.decode() == PASSWORD
    assert decode_password(cfg, ",".join(f"{k}:{v}" for k, v in f.items())) == PASSWORD


def test_round_trip_and_fresh_salt() -> None:
    cfg = config()
    first, second = encode_password(cfg, PASSWORD), encode_password(cfg, PASSWORD)
    assert fields(first)["salt"] != fields(second)["salt"]
    assert decode_password(cfg, first) == decode_password(cfg, second) == PASSWORD


def test_layers_encode_only_passwords() -> None:
    cfg = config()
    layer = {"sasl.kerberos.min.time.before.relogin": "90000",
             "listener.name.plaintext.sasl.jaas.config": "x required;"}
    stored = encode_dynamic_passwords(cfg, layer, cluster_default=False)
    assert stored["sasl.kerberos.min.time.before.relogin"] == "90000"
    assert "x required" not in stored["listener.name.plaintext.sasl.jaas.config"]
    assert decode_dynamic_passwords(cfg, stored) == layer


@pytest.mark.parametrize(("cfg", "cluster_default", "message"), [
    (BrokerConfig(), False, "Password encoder secret not configured"),
    (config(), True, "Password config can be defined only at broker level"),
    (config(**{"password.encoder.cipher.algorithm": "DES"}), False,
     "Unsupported password encoder cipher algorithm DES"),
])
def test_refusals(cfg: BrokerConfig, cluster_default: bool, message: str) -> None:
    with pytest.raises(InvalidConfigError) as e:
        encode_dynamic_passwords(cfg, {"sasl.jaas.config": "x"}, cluster_default)
    assert e.value.message.startswith(message)


def test_an_undecodable_password_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    stored = encode_dynamic_passwords(config(), {"sasl.jaas.config": "x",
                                                 "quota.window.num": "3"}, False)
    other = BrokerConfig.from_properties({"password.encoder.secret": "another"})
    caplog.set_level(logging.ERROR, logger="kafkapy.server.password_encoder")
    assert decode_dynamic_passwords(other, stored) == {"quota.window.num": "3"}
    assert "Dynamic password config sasl.jaas.config could not be decoded" in caplog.text
    with pytest.raises(InvalidConfigError, match="Password could not be decoded"):
        decode_password(config(), "garbage")
