"""Dynamic password settings at rest: Kafka's EncryptingPasswordEncoder.

A PASSWORD setting changed by IncrementalAlterConfigs / AlterConfigs (``ssl.keystore.password``
of a listener, ``sasl.jaas.config``, ...) is never written in clear: as Kafka's
DynamicBrokerConfig.toPersistentProps does, it is encrypted with a key derived from the static
``password.encoder.secret`` and stored (ZooKeeper ``/config/brokers/<id>``, or the single
broker's metadata file) as Kafka's ``k:v,...`` string (keyFactoryAlgorithm, cipherAlgorithm,
keyLength, salt, iterations, encryptedPassword, passwordLength, initializationVector and, for
GCM, authenticationTagLength; binary values in standard base64), so a Kafka broker and kafkapy
read each other's values.

- encode: refused without ``password.encoder.secret`` ("Password encoder secret not
  configured") and at the cluster-default level ("Password config can be defined only at broker
  level"), as Kafka does. A fresh 256-byte salt and IV each time; the key is PBKDF2 over the
  secret (``password.encoder.keyfactory.algorithm``, default PBKDF2WithHmacSHA512),
  ``password.encoder.key.length`` bits, ``password.encoder.iterations`` rounds; the cipher
  ``password.encoder.cipher.algorithm``: AES/CBC/PKCS5Padding (Kafka's default) or
  AES/GCM/NoPadding.
- decode: the parameters come from the stored string itself; a value that cannot be decoded
  (another secret, a corrupt value) is dropped with an error line, as Kafka ignores an invalid
  persisted password at startup, so the broker still starts. ``password.encoder.old.secret``
  (Kafka's re-encoding after a secret change) is not implemented: a value encoded with the old
  secret is dropped the same way.

Plain functions over ``key -> str`` layers; nothing here keeps state.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from collections.abc import Mapping

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kafkapy.config import BrokerConfig, is_password_setting
from kafkapy.errors import InvalidConfigError

log = logging.getLogger(__name__)

_KEY_FACTORIES = {"PBKDF2WithHmacSHA512": "sha512", "PBKDF2WithHmacSHA256": "sha256",
                  "PBKDF2WithHmacSHA1": "sha1"}
_DEFAULT_KEY_FACTORY = "PBKDF2WithHmacSHA512"
_CBC, _GCM = "AES/CBC/PKCS5Padding", "AES/GCM/NoPadding"
_GCM_TAG_BITS = 128        # Java's default GCMParameterSpec tag length for AES


def _derive_key(secret: str, key_factory: str, key_length: int, salt: bytes,
                iterations: int) -> bytes:
    digest = _KEY_FACTORIES.get(key_factory)
    if digest is None:
        raise InvalidConfigError(f"Unsupported password encoder key factory algorithm "
                                 f"{key_factory} (kafkapy has {', '.join(_KEY_FACTORIES)})")
    return hashlib.pbkdf2_hmac(digest, secret.encode("utf-8"), salt, iterations,
                               dklen=key_length // 8)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def encode_password(config: BrokerConfig, password: str) -> str:
    """One password as Kafka's EncryptingPasswordEncoder.encode writes it."""
    props = config.props
    secret = props.get("password.encoder.secret")
    if secret is None:
        raise InvalidConfigError("Password encoder secret not configured")
    key_factory = props.get("password.encoder.keyfactory.algorithm") or _DEFAULT_KEY_FACTORY
    cipher_name = props.get("password.encoder.cipher.algorithm", _CBC).strip()
    key_length = int(props.get("password.encoder.key.length", "128"))
    iterations = int(props.get("password.encoder.iterations", "4096"))
    salt = os.urandom(256)
    key = _derive_key(secret, key_factory, key_length, salt, iterations)
    data = password.encode("utf-8")
    params = {"keyFactoryAlgorithm": key_factory, "cipherAlgorithm": cipher_name,
              "keyLength": str(key_length), "salt": _b64(salt), "iterations": str(iterations),
              "passwordLength": str(len(password))}
    if cipher_name == _CBC:
        iv = os.urandom(16)
        padder = padding.PKCS7(128).padder()
        encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        encrypted = encryptor.update(padder.update(data) + padder.finalize()) + \
            encryptor.finalize()
        params["initializationVector"] = _b64(iv)
    elif cipher_name == _GCM:
        iv = os.urandom(12)
        encrypted = AESGCM(key).encrypt(iv, data, None)   # ciphertext + tag, as Java's
        params["initializationVector"] = _b64(iv)
        params["authenticationTagLength"] = str(_GCM_TAG_BITS)
    else:
        raise InvalidConfigError(f"Unsupported password encoder cipher algorithm "
                                 f"{cipher_name} (kafkapy has {_CBC} and {_GCM})")
    params["encryptedPassword"] = _b64(encrypted)
    return ",".join(f"{k}:{v}" for k, v in params.items())


def decode_password(config: BrokerConfig, encoded: str) -> str:
    """Kafka's EncryptingPasswordEncoder.decode. Errors: ``InvalidConfigError``."""
    secret = config.props.get("password.encoder.secret")
    if secret is None:
        raise InvalidConfigError("Password encoder secret not configured")
    try:
        params = dict(item.rsplit(":", 1) for item in encoded.split(","))
        key = _derive_key(secret, params.get("keyFactoryAlgorithm") or _DEFAULT_KEY_FACTORY,
                          int(params["keyLength"]), base64.b64decode(params["salt"]),
                          int(params["iterations"]))
        encrypted = base64.b64decode(params["encryptedPassword"])
        iv = base64.b64decode(params["initializationVector"])
        if params["cipherAlgorithm"].startswith("AES/GCM/"):
            data = AESGCM(key).decrypt(iv, encrypted, None)
        else:
            decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
            unpadder = padding.PKCS7(128).unpadder()
            data = unpadder.update(decryptor.update(encrypted) + decryptor.finalize()) + \
                unpadder.finalize()
        password = data.decode("utf-8")
    except InvalidConfigError:
        raise
    except Exception as e:          # any malformed field, wrong key or bad padding
        raise InvalidConfigError("Password could not be decoded") from e
    if len(password) != int(params["passwordLength"]):
        raise InvalidConfigError("Password could not be decoded, sanity check of length "
                                 "failed")
    return password


def encode_dynamic_passwords(config: BrokerConfig, layer: Mapping[str, str],
                             cluster_default: bool) -> dict[str, str]:
    """A dynamic layer as it is persisted: its password settings encoded (Kafka's
    toPersistentProps). Errors: ``InvalidConfigError``."""
    out = dict(layer)
    for name, value in layer.items():
        if is_password_setting(name):
            if cluster_default:
                raise InvalidConfigError("Password config can be defined only at broker level")
            out[name] = encode_password(config, value)
    return out


def decode_dynamic_passwords(config: BrokerConfig, layer: Mapping[str, str]) -> dict[str, str]:
    """A persisted dynamic layer with its password settings decoded; one that cannot be is
    left out, with an error line (Kafka's fromPersistentProps at startup)."""
    out = dict(layer)
    for name, value in layer.items():
        if is_password_setting(name):
            try:
                out[name] = decode_password(config, value)
            except InvalidConfigError as e:
                log.error("Dynamic password config %s could not be decoded, ignoring: %s",
                          name, e.message)
                del out[name]
    return out
