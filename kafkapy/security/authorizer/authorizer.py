"""AclAuthorizer: the broker's ACLs in memory, their changes, and its decisions (Kafka 3.x's
``kafka.security.authorizer.AclAuthorizer``; ``StandardAuthorizer``'s name is accepted too and
served by the same code, as its rules are the same).

Theory of operation
-------------------
- **The cache** (``ResourcePattern -> frozenset[AccessControlEntry]``) answers ``authorize``
  and ``acls(filter)`` synchronously, with no I/O. It is replaced per resource, never mutated
  in place; every change rebuilds its ``AclIndex`` (lookups by resource) and empties the
  memo of decisions, so a decision on the produce / fetch path is one dictionary lookup once
  made (the memo holds at most ``DECISION_MEMO_SIZE`` decisions, then starts over).
- **Changes** (``create_acls``, ``delete_acls``) take one lock (Kafka's ``lock synchronized``),
  write the store in a worker thread resource by resource (``AclStore.update``: a conditional
  read-modify-write in ZooKeeper, a rewrite of the file for a single broker), then put the
  stored result in the cache. A failure is that resource's bindings' error; the other
  resources still change (as Kafka's per-binding results).
- **Other brokers' changes** (cluster mode, ``run``): a watch on ``/kafka-acl-changes`` and
  ``/kafka-acl-extended-changes`` (kazoo's thread only wakes this task); every notification
  newer than the last processed one, in sequence order, names a resource whose ACLs are
  re-read from ZooKeeper into the cache, under the same lock as local changes, so a re-read
  can never overwrite a newer local write with older ACLs. At start every notification
  present is processed too (after the full load: re-reads are idempotent). Notifications
  older than 15 minutes are deleted (Kafka's ``ZkNodeChangeNotificationListener``
  ``changeExpirationMs``).

Errors: ``create_acls`` / ``delete_acls`` return Kafka's per-binding errors (KafkaError
instances); they raise only Trio's cancellation.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import trio
from kazoo.exceptions import NoNodeError

from kafkapy.errors import InvalidRequestError, KafkaError, UnknownServerError
from kafkapy.security.authorizer.acl import (
    AclBinding,
    AclBindingFilter,
    AclIndex,
    AclOperation,
    AuthorizerPolicy,
    ResourcePattern,
    ResourceType,
    authorize_by_resource_type,
)
from kafkapy.security.authorizer.acl_store import (
    ACL_CHANGE_PREFIX,
    EXTENDED_ACL_CHANGES_PATH,
    LITERAL_ACL_CHANGES_PATH,
    AclStore,
    Entries,
    ZkAclStore,
    change_decode,
)

__all__ = ["CHANGE_EXPIRATION_MS", "DECISION_MEMO_SIZE", "AclAuthorizer"]

log = logging.getLogger(__name__)

CHANGE_EXPIRATION_MS = 15 * 60 * 1000
DECISION_MEMO_SIZE = 100_000
_RETRY_S = 1.0
_CHANGE_PATHS = (LITERAL_ACL_CHANGES_PATH, EXTENDED_ACL_CHANGES_PATH)


def _sequence(child: str) -> int:
    try:
        return int(child[len(ACL_CHANGE_PREFIX):])
    except ValueError:
        return -1


def _api_error(e: BaseException) -> KafkaError:
    return e if isinstance(e, KafkaError) else UnknownServerError(f"{type(e).__name__}: {e}")


class AclAuthorizer:
    """See the module doc. ``await nursery.start(authorizer.run)`` loads the ACLs (and, in
    cluster mode, starts following other brokers' changes)."""

    def __init__(self, store: AclStore, policy: AuthorizerPolicy) -> None:
        self.store = store
        self.policy = policy
        self._acls: dict[ResourcePattern, Entries] = {}
        self._index = AclIndex.build({})
        self._decisions: dict[tuple[str, str, AclOperation, ResourceType, str], bool] = {}
        self._lock = trio.Lock()
        self._changed = trio.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._closed = False
        self._last_seen = {path: -1 for path in _CHANGE_PATHS}

    # ===================================================================== decisions

    def authorize(self, principal: str, host: str, operation: AclOperation,
                  resource_type: ResourceType, name: str) -> bool:
        key = (principal, host, operation, resource_type, name)
        decision = self._decisions.get(key)
        if decision is None:
            decision = self._index.authorize(self.policy, principal, host, operation,
                                             resource_type, name)
            if len(self._decisions) >= DECISION_MEMO_SIZE:
                self._decisions.clear()
            self._decisions[key] = decision
        return decision

    def authorize_by_resource_type(self, principal: str, host: str, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        return authorize_by_resource_type(self._acls, self.policy, principal, host, operation,
                                          resource_type)

    def acls(self, flt: AclBindingFilter) -> list[AclBinding]:
        """Every ACL the filter matches (Kafka's ``Authorizer.acls``), sorted."""
        return sorted(AclBinding(pattern, entry)
                      for pattern, entries in self._acls.items()
                      if flt.pattern_filter.matches(pattern)
                      for entry in entries if flt.entry_filter.matches(entry))

    # ======================================================================= changes

    async def _update(self, pattern: ResourcePattern, change: Any) -> None:
        new = await trio.to_thread.run_sync(self.store.update, pattern, change)
        self._set(pattern, new)

    def _set(self, pattern: ResourcePattern, entries: Entries) -> None:
        if entries:
            self._acls[pattern] = entries
        else:
            self._acls.pop(pattern, None)
        self._reindex()

    def _reindex(self) -> None:
        self._index = AclIndex.build(self._acls)
        self._decisions = {}

    async def create_acls(self, bindings: Sequence[AclBinding]) -> list[KafkaError | None]:
        """Add the bindings; one result per binding (None: created or already there)."""
        results: list[KafkaError | None] = [None] * len(bindings)
        by_pattern: dict[ResourcePattern, list[int]] = {}
        for i, binding in enumerate(bindings):
            # Kafka's AclAuthorizer.validateAclBinding, wrapped as its createAcls does.
            reason = None
            if binding.is_unknown:
                reason = "ACL binding contains unknown elements"
            elif "/" in binding.pattern.name:
                reason = (f"ACL binding contains invalid resource name: "
                          f"{binding.pattern.name}")
            if reason is not None:
                results[i] = InvalidRequestError(f"Failed to create ACL: {reason}")
                continue
            by_pattern.setdefault(binding.pattern, []).append(i)
        async with self._lock:
            for pattern, indexes in by_pattern.items():
                added = frozenset(bindings[i].entry for i in indexes)
                try:
                    await self._update(pattern, lambda current, a=added: current | a)
                except Exception as e:
                    log.warning("Creating ACLs for %s failed: %s", pattern, e)
                    for i in indexes:
                        results[i] = _api_error(e)
                else:
                    log.info("Added ACLs for %s: %s", pattern,
                             ", ".join(str(e) for e in sorted(added)))
        return results

    async def delete_acls(self, filters: Sequence[AclBindingFilter]
                          ) -> list[list[tuple[AclBinding, KafkaError | None]]]:
        """Delete what the filters match; per filter, the bindings it deleted (a binding
        matched by several filters counts for the first), each with its error or None
        (Kafka's AclAuthorizer.deleteAcls)."""
        deleted: dict[AclBinding, int] = {}
        errors: dict[AclBinding, KafkaError] = {}
        async with self._lock:
            # The patterns to look at: those in the cache, and those a definite filter names
            # (another broker may have added ACLs this one has not heard of yet).
            patterns = set(self._acls)
            for flt in filters:
                pf = flt.pattern_filter
                if pf.find_indefinite_field() is None and pf.name is not None:
                    patterns.add(ResourcePattern(pf.resource_type, pf.name, pf.pattern_type))
            for pattern in sorted(patterns):
                matching = [(i, f) for i, f in enumerate(filters)
                            if f.pattern_filter.matches(pattern)]
                if not matching:
                    continue
                being_deleted: dict[AclBinding, int] = {}

                def change(current: Entries, pattern: ResourcePattern = pattern,
                           matching: list[tuple[int, AclBindingFilter]] = matching,
                           being_deleted: dict[AclBinding, int] = being_deleted) -> Entries:
                    being_deleted.clear()
                    keep = set()
                    for entry in current:
                        first = next((i for i, f in matching if f.entry_filter.matches(entry)),
                                     None)
                        if first is None:
                            keep.add(entry)
                        else:
                            being_deleted[AclBinding(pattern, entry)] = first
                    return frozenset(keep)

                try:
                    await self._update(pattern, change)
                except Exception as e:
                    log.warning("Deleting ACLs of %s failed: %s", pattern, e)
                    for binding in being_deleted:
                        errors.setdefault(binding, _api_error(e))
                else:
                    if being_deleted:
                        log.info("Removed ACLs for %s: %s", pattern,
                                 ", ".join(str(b.entry) for b in sorted(being_deleted)))
                for binding, index in being_deleted.items():
                    deleted.setdefault(binding, index)
        results: list[list[tuple[AclBinding, KafkaError | None]]] = [[] for _ in filters]
        for binding, index in sorted(deleted.items()):
            results[index].append((binding, errors.get(binding)))
        return results

    # ===================================================================== lifecycle

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        store = self.store
        if not isinstance(store, ZkAclStore):
            self._acls = await trio.to_thread.run_sync(store.load_all)
            self._reindex()
            log.info("Loaded ACLs of %d resources", len(self._acls))
            task_status.started()
            return
        self._token = trio.lowlevel.current_trio_token()
        await trio.to_thread.run_sync(store.create_paths)
        await trio.to_thread.run_sync(self._watch, store.zk)
        self._acls = await trio.to_thread.run_sync(store.load_all)
        self._reindex()
        log.info("Loaded ACLs of %d resources from ZooKeeper", len(self._acls))
        task_status.started()
        try:
            while True:
                await self._changed.wait()
                self._changed = trio.Event()
                async with self._lock:
                    try:
                        changed = await trio.to_thread.run_sync(self._read_changes, store)
                    except Exception as e:      # ZooKeeper away: again shortly
                        log.warning("Reading ACL change notifications failed: %s", e)
                        changed = None
                    for pattern, entries in changed or ():
                        self._set(pattern, entries)
                        log.info("ACLs of %s reloaded (change notification): %d", pattern,
                                 len(entries))
                if changed is None:
                    await trio.sleep(_RETRY_S)
                    self._changed.set()
        finally:
            self._closed = True

    def _watch(self, zk: Any) -> None:
        def on_children(_children: list[str]) -> bool | None:
            # kazoo's thread: only wake the Trio task.
            if self._closed or self._token is None:
                return False
            try:
                self._token.run_sync_soon(self._changed.set)
            except trio.RunFinishedError:
                return False
            return None
        for path in _CHANGE_PATHS:
            zk.ChildrenWatch(path, on_children)

    def _read_changes(self, store: ZkAclStore) -> list[tuple[ResourcePattern, Entries]]:
        """The resources named by notifications newer than the last processed, re-read
        (blocking: a worker thread); then the purge of old notifications."""
        zk = store.zk
        patterns: list[ResourcePattern] = []
        last_seen = dict(self._last_seen)
        for path in _CHANGE_PATHS:
            children = sorted((c for c in zk.get_children(path)
                               if c.startswith(ACL_CHANGE_PREFIX)), key=_sequence)
            for child in children:
                seq = _sequence(child)
                if seq <= last_seen[path]:
                    continue
                last_seen[path] = seq
                try:
                    data, _ = zk.get(f"{path}/{child}")
                    pattern = change_decode(path, data)
                except NoNodeError:
                    continue
                except ValueError as e:
                    log.warning("Ignoring ACL change notification %s/%s: %s", path, child, e)
                    continue
                if pattern not in patterns:
                    patterns.append(pattern)
        out = [(p, store.read(p)) for p in patterns]
        # Only once every resource was read: a failure leaves them all for the next attempt.
        self._last_seen = last_seen
        self._purge(zk)
        return out

    def _purge(self, zk: Any) -> None:
        now_ms = int(time.time() * 1000)
        try:
            for path in _CHANGE_PATHS:
                for child in zk.get_children(path):
                    stat = zk.exists(f"{path}/{child}")
                    if stat is not None and now_ms - stat.ctime > CHANGE_EXPIRATION_MS:
                        try:
                            zk.delete(f"{path}/{child}")
                        except NoNodeError:
                            pass
        except Exception as e:           # the next change tries again
            log.warning("Purging old ACL change notifications failed: %s", e)
