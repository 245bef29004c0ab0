"""Smoke test of an installed kafkapy wheel: every compiled module imports and works.

Run as a script (``python tests/smoke.py``) by cibuildwheel against each wheel it builds and by
tests/test_packaging.py in a fresh venv; it needs neither pytest nor the test dependencies nor
this checkout on the path (it must import the *installed* package). It finds the compiled
modules among the installed package's files, so a new extension is noticed: the set must equal
the shipped ``.pyx`` sources and the modules that ``CHECKS`` knows how to call.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import kafkapy


def _check_codec(codec: ModuleType) -> None:
    assert codec.read_int16_pair(b"\x00\x12\x00\x03") == (18, 3)


def _check_records(records: ModuleType) -> None:
    # CRC-32C's check value (RFC 3720 B.4)
    assert records.crc32c(b"123456789") == 0xE3069283
    batch = records.build_batch([(b"k", b"v", [], 1_700_000_000_000)])
    [header] = records.scan_batches(batch).batches
    assert [record.value for record in header.records()] == [b"v"]


def _check_frames(frames: ModuleType) -> None:
    assert frames.size_prefixed(b"abc") == b"\x00\x00\x00\x03abc"


def _check_log(log: ModuleType) -> None:
    index = b"".join(struct.pack(">ii", relative, position)
                     for relative, position in ((0, 0), (10, 100), (20, 200)))
    assert log.largest_lower_bound(index, 3, 8, 15) == 1


def _check_arrow(arrow: ModuleType) -> None:
    assert arrow.utf8_repair(b"ok\xff") == "ok\ufffd".encode()


def _check_legacy(legacy: ModuleType) -> None:
    from kafkapy import _records

    batch = _records.build_batch([(b"k", b"v", [], 1_700_000_000_000)])
    message_set = legacy.down_convert(batch, 1, 0)
    [header] = _records.scan_batches(bytes(legacy.up_convert(message_set))).batches
    assert [(record.key, record.value) for record in header.records()] == [(b"k", b"v")]


def _check_selector(selector: ModuleType) -> None:
    import socket

    if not sys.platform.startswith("linux"):   # built everywhere, epoll only on Linux
        try:
            selector.Selector()
        except OSError as exc:
            assert "needs Linux epoll" in str(exc)
            return
        raise AssertionError("Selector() should need Linux")
    sel = selector.Selector()
    server, client = socket.socketpair()
    try:
        server.setblocking(False)
        sel.register(server.fileno(), "c", 100)
        client.sendall(b"\x00\x00\x00\x02ok")
        import select

        select.select([sel.fileno()], [], [], 5)
        assert sel.poll() == [("c", [bytearray(b"ok")], False, None)]
    finally:
        sel.close()
        server.close()
        client.close()


def _check_fetch(fetch: ModuleType) -> None:
    # Fetch v4, MaxWaitMs 500, MinBytes 1, MaxBytes 100, one topic "t", partition 0 at offset 7
    body = (b"\xff\xff\xff\xff" + b"\x00\x00\x01\xf4" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x64"
            + b"\x00" + b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\x00\x00\x00\x01"
            + b"\x00\x00\x00\x00" + b"\x00" * 7 + b"\x07" + b"\x00\x00\x00\x64")
    decoded = fetch.decode_fetch_request(body, 0, 4)
    assert decoded[8] == [("t", None, [(0, -1, 7, -1, -1, 100)])], decoded
    assert fetch.encode_fetch_response(4, 7, 0, 0, 0, []) == [b"\x00\x00\x00\x07" + b"\x00" * 8]


def _check_produce(produce: ModuleType) -> None:
    from kafkapy import _records

    batch = _records.build_batch([(b"k", b"v", [], 1_700_000_000_000)])
    # Produce v3: null transactional id, acks 1, 100 ms, topic "t" partition 0
    body = (b"\xff\xff\x00\x01\x00\x00\x00\x64\x00\x00\x00\x01\x00\x01t"
            b"\x00\x00\x00\x01\x00\x00\x00\x00" + struct.pack(">i", len(batch)) + batch)
    transactional_id, acks, _, [(name, [(index, view, header)])], end = \
        produce.decode_produce(body, 0, 3)
    assert (transactional_id, acks, name, index, bytes(view)) == (None, 1, "t", 0, batch)
    assert end == len(body)
    assert header.batch_length == len(batch) - 12
    assert produce.encode_produce_response(3, 7, 0, []) == b"\x00\x00\x00\x07" + b"\x00" * 8


def _check_replica(replica: ModuleType) -> None:
    from types import SimpleNamespace

    from kafkapy.errors import InvalidRequiredAcksError

    try:
        replica.append_to_leaders(None, 2, {})
    except InvalidRequiredAcksError:
        pass
    else:
        raise AssertionError("acks=2 was not refused")
    manager = SimpleNamespace(partitions={}, server=None)
    assert replica.append_to_leaders(manager, 1, {}) == ({}, [])


CHECKS: dict[str, Callable[[ModuleType], None]] = {
    "_codec": _check_codec,
    "_records": _check_records,
    "_frames": _check_frames,
    "_log": _check_log,
    "_arrow": _check_arrow,
    "_legacy": _check_legacy,
    "_selector": _check_selector,
    "_fetch": _check_fetch,
    "_produce": _check_produce,
    "_replica": _check_replica,
}


def compiled_modules(package: Path) -> set[str]:
    """Names of the extension modules installed in ``package`` (``_codec`` for
    ``_codec.cpython-311-x86_64-linux-gnu.so``)."""
    names = set()
    for path in package.iterdir():
        # most specific first (".cpython-311-x86_64-linux-gnu.so", ".abi3.so", ".so")
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if path.name.endswith(suffix):
                names.add(path.name[: -len(suffix)])
                break
    return names


def main() -> int:
    package = Path(kafkapy.__file__).parent
    compiled = compiled_modules(package)
    sources = {path.stem for path in package.glob("*.pyx")}
    assert compiled == sources == set(CHECKS), (compiled, sources, sorted(CHECKS))
    for name in sorted(compiled):
        module = importlib.import_module(f"kafkapy.{name}")
        assert isinstance(module.__spec__.loader, importlib.machinery.ExtensionFileLoader), module
        CHECKS[name](module)
        print(f"ok kafkapy.{name} {Path(module.__file__ or '').name}")
    from kafkapy.protocol import API_KEYS, decode_request, encode_request, request_class
    from kafkapy.protocol.codec import Request, RequestHeader

    header = RequestHeader(api_key=18, api_version=3, correlation_id=7, client_id="smoke")
    assert decode_request(encode_request(Request(header, request_class(18)()))).header == header
    print(f"kafkapy {kafkapy.__version__} smoke ok: {len(compiled)} compiled modules, "
          f"{len(API_KEYS)} APIs, from {package}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
