"""TransactionIndex: a segment's ``.txnindex``, the aborted transactions whose markers it holds.

Byte layout (Kafka's AbortedTxn; big-endian, no header, entries back to back)::

    version INT16 (0) | producerId INT64 | firstOffset INT64 | lastOffset INT64
    | lastStableOffset INT64                                              34 bytes an entry

``firstOffset`` is the transaction's first offset (it may lie in an earlier segment),
``lastOffset`` the offset of its ABORT marker (in this segment), ``lastStableOffset`` the
partition's LSO right after the abort was written.

Theory of operation (Kafka's TransactionIndex):

- The file ``<base offset, 20 digits>.txnindex`` is created lazily, by the first ``append``:
  most segments never see an aborted transaction and have no file. Entries are appended in
  marker order, so ``lastOffset`` rises strictly; ``append`` refuses one that does not (Kafka's
  check, here against every entry, including those loaded from the file).
- Entries are read from the file once, on first use, and kept in memory (a segment's aborted
  transactions are few). Writes go to the file with ``os.write`` on a descriptor opened on the
  first append (``O_APPEND``); nothing is fsynced here: the log's flush job fsyncs the file
  (``flush_fd``), and recovery rebuilds the index of every recovered segment from the batches
  (``reset``, then appends driven by the producer-state replay).
- ``collect_aborted_txns`` answers read_committed fetches (Kafka's collectAbortedTxns): the
  entries with ``lastOffset >= fetch offset`` and ``firstOffset < upper bound``, scanning in
  order and stopping at the first entry whose ``lastStableOffset >= upper bound`` (it is
  included if it overlaps): no later segment can hold an abort the fetch must know about, and
  the result says so (``found_last``). The scan starts by binary search, not at the front.

Used from the thread that owns the log (the event loop); ``flush_fd`` hands a descriptor to the
flush job, which may fsync it from a worker thread.

Errors: ``ValueError`` for an append that does not increase (a caller bug);
``CorruptIndexError`` (KAFKA_STORAGE_ERROR) from ``sanity_check`` and for an entry of an
unknown version met on load; ``KafkaStorageError`` when the file cannot be written.
"""

from __future__ import annotations

import bisect
import os
import struct
from pathlib import Path
from typing import NamedTuple

import attrs

from kafkapy.errors import KafkaStorageError
from kafkapy.log.index import CorruptIndexError

__all__ = [
    "ABORTED_TXN_SIZE",
    "TXN_INDEX_SUFFIX",
    "AbortedTxn",
    "TransactionIndex",
    "TxnIndexSearchResult",
    "txn_index_path",
]

TXN_INDEX_SUFFIX = ".txnindex"
_ENTRY = struct.Struct(">hqqqq")
ABORTED_TXN_SIZE = _ENTRY.size      # 34
_CURRENT_VERSION = 0


def txn_index_path(directory: Path, base_offset: int) -> Path:
    return directory / f"{base_offset:020d}{TXN_INDEX_SUFFIX}"


@attrs.frozen
class AbortedTxn:
    """One ``.txnindex`` entry (what a FetchResponse's AbortedTransactions is built from)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def to_bytes(self) -> bytes:
        return _ENTRY.pack(_CURRENT_VERSION, self.producer_id, self.first_offset,
                           self.last_offset, self.last_stable_offset)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, offset: int = 0) -> AbortedTxn:
        """Decode the entry at ``offset``. Raises CorruptIndexError for a version other than
        0 (Kafka refuses a version newer than it knows; 0 is the only one)."""
        version, pid, first, last, lso = _ENTRY.unpack_from(data, offset)
        if version != _CURRENT_VERSION:
            raise CorruptIndexError(f"aborted transaction entry of unknown version {version}")
        return cls(pid, first, last, lso)


class TxnIndexSearchResult(NamedTuple):
    """``collect_aborted_txns``' answer: the overlapping aborted transactions, and whether
    the scan met an entry with ``lastStableOffset >= upper bound`` (later segments need not be
    searched). Unpacks as ``(aborted, found_last)``."""

    aborted: list[AbortedTxn]
    found_last: bool


class TransactionIndex:
    """A segment's aborted transactions. The file exists only once one was appended."""

    def __init__(self, path: Path, base_offset: int) -> None:
        self.path = Path(path)
        self.base_offset = base_offset
        self._fd: int | None = None
        self._entries: list[AbortedTxn] | None = None     # None until loaded
        self._last_offsets: list[int] = []                # for the binary search
        self._max_lso: list[int] = []                     # running maximum of the LSOs
        self._sorted = True         # last offsets rise (always, unless the file says otherwise)
        self._file_length = 0       # bytes in the file when loaded (sanity_check)

    # ------------------------------------------------------------------------ loading

    def _load(self) -> list[AbortedTxn]:
        if self._entries is not None:
            return self._entries
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        except OSError as e:
            raise KafkaStorageError(f"cannot read the transaction index {self.path}: {e}") \
                from e
        self._file_length = len(data)
        # A torn last entry (a crash mid-write) is not an entry: Kafka's reader stops short
        # of it too; sanity_check reports the length.
        entries = [AbortedTxn.from_bytes(data, pos)
                   for pos in range(0, len(data) - ABORTED_TXN_SIZE + 1, ABORTED_TXN_SIZE)]
        self._set_entries(entries)
        assert self._entries is not None
        return self._entries

    def _set_entries(self, entries: list[AbortedTxn]) -> None:
        self._entries = entries
        self._last_offsets = [t.last_offset for t in entries]
        self._max_lso = []
        top = -(2**63)
        for t in entries:
            top = max(top, t.last_stable_offset)
            self._max_lso.append(top)
        lasts = self._last_offsets
        self._sorted = all(lasts[i] < lasts[i + 1] for i in range(len(lasts) - 1))

    # ------------------------------------------------------------------------ appends

    def _open_fd(self) -> int:
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            except OSError as e:
                raise KafkaStorageError(f"cannot open the transaction index {self.path}: {e}") \
                    from e
        return self._fd

    def append(self, txn: AbortedTxn) -> None:
        """Add an aborted transaction (its marker is the newest in the segment).

        Raises ValueError if ``txn.last_offset`` is not greater than the last entry's (Kafka's
        check), KafkaStorageError if the file cannot be written (nothing is added then).
        """
        entries = self._load()
        if entries and txn.last_offset <= entries[-1].last_offset:
            raise ValueError(f"{self.path}: the last offset of appended transactions must "
                             f"increase, but {txn.last_offset} is not greater than "
                             f"{entries[-1].last_offset}")
        fd = self._open_fd()
        data = txn.to_bytes()
        start = os.fstat(fd).st_size
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
        except OSError as e:
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass
            raise KafkaStorageError(f"{self.path}: write failed: {e}") from e
        entries.append(txn)
        self._last_offsets.append(txn.last_offset)
        self._max_lso.append(max(self._max_lso[-1], txn.last_stable_offset)
                             if self._max_lso else txn.last_stable_offset)
        self._file_length += len(data)

    # -------------------------------------------------------------------------- reads

    def all_entries(self) -> list[AbortedTxn]:
        return list(self._load())

    @property
    def is_empty(self) -> bool:
        return not self._load()

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int
                             ) -> TxnIndexSearchResult:
        """The aborted transactions overlapping [``fetch_offset``, ``upper_bound_offset``):
        ``last_offset >= fetch_offset`` and ``first_offset < upper_bound_offset``, scanned in
        order up to and including the first entry with ``last_stable_offset >=
        upper_bound_offset``, where the scan stops (``found_last``: no later segment needs
        searching)."""
        entries = self._load()
        n = len(entries)
        if not self._sorted:
            out = []
            for t in entries:
                if t.last_offset >= fetch_offset and t.first_offset < upper_bound_offset:
                    out.append(t)
                if t.last_stable_offset >= upper_bound_offset:
                    return TxnIndexSearchResult(out, True)
            return TxnIndexSearchResult(out, False)
        # The first entry where the scan stops: the running maximum of the LSOs rises, so
        # the first position where it reaches the bound is the first entry that does.
        stop = bisect.bisect_left(self._max_lso, upper_bound_offset)
        start = bisect.bisect_left(self._last_offsets, fetch_offset)
        end = min(stop + 1, n)
        out = [t for t in entries[start:end] if t.first_offset < upper_bound_offset]
        return TxnIndexSearchResult(out, stop < n)

    def sanity_check(self) -> None:
        """Kafka's check (no entry ends below the segment's base offset) and whole entries
        only. Raises CorruptIndexError."""
        entries = self._load()
        if self._file_length % ABORTED_TXN_SIZE:
            raise CorruptIndexError(f"{self.path}: length {self._file_length} is not a "
                                    f"multiple of {ABORTED_TXN_SIZE}")
        for t in entries:
            if t.last_offset < self.base_offset:
                raise CorruptIndexError(f"{self.path}: last offset of aborted transaction "
                                        f"{t} is below the base offset {self.base_offset}")

    # --------------------------------------------------------------------- truncation

    def _truncate_file(self, length: int) -> None:
        try:
            if self._fd is not None:
                os.ftruncate(self._fd, length)
            elif self.path.exists():
                os.truncate(self.path, length)
        except OSError as e:
            raise KafkaStorageError(f"cannot truncate the transaction index {self.path}: {e}") \
                from e
        self._file_length = length

    def truncate_to(self, offset: int) -> None:
        """Drop the first entry with ``last_offset >= offset`` and every entry after it (log
        truncation to ``offset``)."""
        entries = self._load()
        keep = next((i for i, t in enumerate(entries) if t.last_offset >= offset), len(entries))
        if keep < len(entries) or self._file_length > keep * ABORTED_TXN_SIZE:
            self._truncate_file(keep * ABORTED_TXN_SIZE)
            self._set_entries(entries[:keep])

    def reset(self) -> None:
        """Remove every entry (before a rebuild). An existing file is kept, emptied (as
        Kafka)."""
        self._truncate_file(0)
        self._set_entries([])

    # ------------------------------------------------------------------ file handling

    def flush(self) -> None:
        """fsync the file if it exists (synchronous: tools and tests; the log flushes through
        ``flush_fd``)."""
        fd = self.flush_fd()
        if fd is not None:
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def flush_fd(self) -> int | None:
        """A new descriptor of the file for a flush job to fsync and close, or None when
        there is no file."""
        try:
            return os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None

    def rename(self, path: Path) -> None:
        """Rename the file (if there is one) and keep using the new name; an open descriptor
        follows the file."""
        path = Path(path)
        try:
            os.rename(self.path, path)
        except FileNotFoundError:
            pass
        self.path = path

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def delete(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)
        self._set_entries([])
        self._file_length = 0

    def __repr__(self) -> str:
        return f"TransactionIndex({self.path})"
