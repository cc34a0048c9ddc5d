"""``lochkit serve``'s request limits as a user runs them: a compression bomb is refused without
the server's memory growing with it, uvicorn's own limits are on, and bad option values are usage
errors naming the option and the forms it takes."""

from __future__ import annotations

import socket
import struct
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from lochkit.cli import main
from provisioning.servers.process import free_port

from .serve_process import start_serve
from .wire import read_raw_answer

MIB = 1 << 20
#: The inflated size of the bomb, and how far the server's peak memory may grow while refusing it.
BOMB_INFLATES_TO = 1024 * MIB
GROWTH_ALLOWED = 100 * MIB


def gzip_bomb(megabytes: int) -> bytes:
    """A valid gzip stream of ``megabytes`` MiB of zero bytes in about a KiB per MiB. Each MiB is
    compressed once and its deflate blocks repeated: a full flush ends a MiB with the compressor's
    state reset, so the next MiB compresses to the same bytes (built in well under a second, where
    compressing 1 GiB takes many)."""
    zeros = bytes(MIB)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: the gzip frame is written here
    one_mib = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(megabytes):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, (megabytes * MIB) & 0xFFFFFFFF)
    return header + one_mib * megabytes + deflate.flush() + trailer


def test_the_bomb_builder_makes_valid_gzip() -> None:
    assert zlib.decompress(gzip_bomb(3), wbits=31) == bytes(3 * MIB)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, int]]:
    """``lochkit serve`` over in-memory storage with its default limits but for the connection
    limits uvicorn enforces (set below their defaults, to be seen applied): (v2 base URI, server pid)."""
    port = free_port()
    connection_limits = [
        "--max-header-size",
        "8KiB",
        "--keep-alive-timeout",
        "0.5s",
        "--header-timeout",
        "1s",
    ]
    uri = f"http://127.0.0.1:{port}/api/v2"
    process = start_serve(["--backend", "inmemory", "--port", str(port), *connection_limits], f"{uri}/config")
    try:
        yield uri, process.pid
    finally:
        process.terminate()
        process.communicate(timeout=30)


def _peak_rss(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def test_a_gzip_bomb_is_refused_with_the_servers_memory_bounded(served: tuple[str, int]) -> None:
    uri, pid = served
    bomb = gzip_bomb(BOMB_INFLATES_TO // MIB)
    assert len(bomb) < 1.1 * MIB
    gzipped = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    # A small compressed request first: the code paths are loaded before the peak is read.
    small = zlib.compress(b'{"requestedKeys": [{"elements": ["t"]}]}', wbits=31)
    assert requests.post(f"{uri}/trees/main/contents", data=small, headers=gzipped, timeout=60).ok
    before = _peak_rss(pid)
    started = time.monotonic()
    answer = requests.post(f"{uri}/trees/main/contents", data=bomb, headers=gzipped, timeout=300)
    took = time.monotonic() - started
    growth = _peak_rss(pid) - before
    print(
        f"\n{len(bomb) / MIB:.2f} MiB gzip inflating to {BOMB_INFLATES_TO / MIB:.0f} MiB: "
        f"answered {answer.status_code} in {took:.2f} s; server peak RSS {before / MIB:.0f} MiB "
        f"-> {(before + growth) / MIB:.0f} MiB (+{growth / MIB:.1f} MiB)"
    )
    assert answer.status_code == 413, answer.text
    message = answer.json()["message"]
    assert "inflates to more than the server's limit of 10485760 bytes" in message
    assert "--max-decompressed-size" in message
    assert growth < GROWTH_ALLOWED
    assert requests.get(f"{uri}/config", timeout=60).json()["defaultBranch"] == "main"


def _connect(uri: str) -> socket.socket:
    port = int(uri.split(":")[2].split("/")[0])
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def test_headers_over_the_header_limit_are_refused(served: tuple[str, int]) -> None:
    """The server buffers at most --max-header-size (8 KiB here) of a header block it is still
    waiting to see the end of; past that, the connection is answered 400 and closed."""
    uri, _ = served
    with _connect(uri) as client:
        client.sendall(b"GET /api/v2/config HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"x" * 12_000)
        answer = read_raw_answer(client)
    assert answer.startswith(b"HTTP/1.1 400"), answer
    assert requests.get(f"{uri}/config", headers={"X-Padding": "x" * 4_000}, timeout=60).ok


def test_an_idle_connection_is_closed_after_the_keep_alive_timeout(served: tuple[str, int]) -> None:
    uri, _ = served
    with _connect(uri) as client:
        client.sendall(b"GET /api/v2/config HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_raw_answer(client).startswith(b"HTTP/1.1 200")
        time.sleep(1.5)
        assert client.recv(65536) == b""  # closed by the server (0.5 s here)


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET /api/v2/config HTTP/1.1\r\nHost: x\r\n"],
    ids=["nothing", "headers-without-their-end"],
)
def test_a_connection_without_complete_headers_is_closed_after_the_header_timeout(
    served: tuple[str, int], sent: bytes
) -> None:
    uri, _ = served
    with _connect(uri) as client:
        client.sendall(sent)
        assert client.recv(65536) == b""  # closed by the server after 1 s (recv would wait 10 s)
    # Headers completed within the time are answered.
    with _connect(uri) as client:
        client.sendall(b"GET /api/v2/config HTTP/1.1\r\nHost: x\r\n")
        time.sleep(0.3)
        client.sendall(b"\r\n")
        assert client.recv(65536).startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-body-size", "ten"], "--max-body-size 'ten' is not a size: use bytes"),
        (["--max-decompressed-size", "5 parsecs"], "--max-decompressed-size '5 parsecs' is not a size"),
        (["--max-keys", "-1"], "--max-keys '-1' is not a whole number"),
        (["--max-page-size", "2.5"], "--max-page-size '2.5' is not a whole number"),
        (["--body-timeout", "soon"], "--body-timeout 'soon' is not a duration"),
        (["--keep-alive-timeout", "0"], "--keep-alive-timeout '0' must be more than 0"),
        (["--max-header-size", "0"], "--max-header-size '0' must be more than 0"),
    ],
)
def test_bad_limit_values_are_usage_errors_naming_the_option(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--backend", "inmemory", *argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_limit_options_make_the_limits_and_zero_turns_one_off() -> None:
    from lochkit.cli import build_parsers
    from lochkit.serve_limits import limits_from_args
    from rest_server.limits import RequestLimits

    parser = build_parsers()[1]["serve"]
    assert limits_from_args(parser.parse_args(["--backend", "inmemory"])) == RequestLimits()
    given = parser.parse_args(
        [
            "--backend",
            "inmemory",
            "--max-body-size",
            "1MiB",
            "--max-keys",
            "0",
            "--read-timeout",
            "2m",
            "--max-header-size",
            "32k",
        ]
    )
    assert limits_from_args(given) == RequestLimits(
        max_body_size=MIB, max_keys=None, read_timeout=120.0, max_header_size=32 * 1024
    )


def test_each_option_help_shows_its_default() -> None:
    from lochkit.cli import build_parsers
    from rest_server.limits import RequestLimits

    parser = build_parsers()[1]["serve"]
    shown = {a.dest: a.help or "" for a in parser._actions}
    defaults = RequestLimits()
    expected = {
        "max_body_size": f"default {defaults.max_body_size // MIB}MiB" if defaults.max_body_size else "",
        "max_decompressed_size": f"default {(defaults.max_decompressed_size or 0) // MIB}MiB",
        "max_keys": f"default {defaults.max_keys}",
        "max_page_size": f"default {defaults.max_page_size}",
        "body_timeout": f"default {defaults.body_timeout:g}s",
        "read_timeout": f"default {defaults.read_timeout:g}s",
        "max_concurrent_requests": f"default {defaults.max_concurrent_requests}",
        "keep_alive_timeout": f"default {defaults.keep_alive_timeout:g}s",
        "header_timeout": f"default {defaults.header_timeout:g}s",
        "max_header_size": f"default {defaults.max_header_size // 1024}KiB",
    }
    for dest, text in expected.items():
        assert text in shown[dest], (dest, shown[dest])
