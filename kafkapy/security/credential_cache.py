"""CredentialCache: the SCRAM credentials this broker authenticates against (Kafka's
``CredentialCache`` filled by ``ClientQuotaManager``/``DynamicConfigManager`` from
``/config/users/<user>``), keyed by user then mechanism.

The broker's storage (ZooKeeper or the log directory's metadata) is the truth; this cache is
rebuilt from it at start and updated on every change notification, so an authentication
never waits for storage. ``user_config`` / ``apply_user_config`` convert to and from the
per-user config map Kafka stores (``{"SCRAM-SHA-256": "salt=...,stored_key=...,..."}``);
keys that are not SCRAM mechanisms (quotas) are kept out of this cache.

Everything runs on the broker's event loop; nothing here is thread-safe.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from kafkapy.security.scram import ScramCredential, ScramMechanism

__all__ = ["CredentialCache"]

log = logging.getLogger(__name__)


class CredentialCache:
    """``{user: {mechanism: ScramCredential}}``."""

    def __init__(self) -> None:
        self._users: dict[str, dict[ScramMechanism, ScramCredential]] = {}

    def get(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        return self._users.get(user, {}).get(mechanism)

    def users(self) -> dict[str, dict[ScramMechanism, ScramCredential]]:
        """A copy of every user's credentials."""
        return {user: dict(creds) for user, creds in self._users.items()}

    def put(self, user: str, mechanism: ScramMechanism, credential: ScramCredential) -> None:
        self._users.setdefault(user, {})[mechanism] = credential

    def remove(self, user: str, mechanism: ScramMechanism) -> bool:
        """Forget one credential; False if there was none."""
        creds = self._users.get(user)
        if not creds or mechanism not in creds:
            return False
        del creds[mechanism]
        if not creds:
            del self._users[user]
        return True

    def apply_user_config(self, user: str, config: Mapping[str, str]) -> None:
        """Replace ``user``'s credentials with those of its stored config map (entries that do
        not parse are logged and skipped, as Kafka's ScramCredentialUtils would fail them)."""
        creds: dict[ScramMechanism, ScramCredential] = {}
        for key, value in config.items():
            mechanism = ScramMechanism.from_name(key)
            if mechanism is None:
                continue
            try:
                creds[mechanism] = ScramCredential.from_kafka_string(value)
            except ValueError as exc:
                log.warning("Ignoring the %s credential of user %s: %s", key, user, exc)
        if creds:
            self._users[user] = creds
        else:
            self._users.pop(user, None)

    def user_config(self, user: str) -> dict[str, str]:
        """``user``'s credentials as Kafka's config map."""
        return {mechanism.value: credential.to_kafka_string()
                for mechanism, credential in sorted(self._users.get(user, {}).items(),
                                                    key=lambda item: item[0].value)}
