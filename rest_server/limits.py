"""Bounded requests: how much a client may send, how many keys and records one request may touch,
and how long it may take, each answered in Nessie's error shape naming the limit and the
``lochkit serve`` option that raises it.

A body is read as it arrives: its size on the wire is checked against ``Content-Length`` before a
byte is read and counted while reading (chunked bodies have no length), and a ``gzip`` or
``deflate`` body is inflated piece by piece, never past the decompressed limit, so a small
compressed request cannot grow into gigabytes in the server's memory.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from rest_server.errors import ApiError

KIB: Final = 1024
MIB: Final = 1024 * KIB
#: Largest piece inflated at a time: the memory a request's inflation needs beyond its body.
_INFLATE_PIECE: Final = MIB


@dataclass(frozen=True)
class RequestLimits:
    """The limits ``lochkit serve`` applies; ``None`` turns one off. The defaults are ``lochkit
    serve``'s; :data:`UNBOUNDED` is what an application created without limits applies."""

    #: Bytes of a request body as sent (compressed or not): 413 (Quarkus' default under Nessie).
    max_body_size: int | None = 10 * MIB
    #: Bytes of a gzip or deflate body once inflated: 413 (Nessie's server counts these too).
    max_decompressed_size: int | None = 10 * MIB
    #: Content keys, operations or hashes one request may name: 400.
    max_keys: int | None = 10_000
    #: Records of one page: a larger ``max-records``, or none, is lowered to it (as Nessie caps its log).
    max_page_size: int | None = 10_000
    #: Seconds a client may take to send its body: 408.
    body_timeout: float | None = 30.0
    #: Seconds a read (GET) may take before the client is answered 503 (the work finishes unseen).
    read_timeout: float | None = 60.0
    #: Requests in progress at once; more are answered 503 at once.
    max_concurrent_requests: int | None = 500
    #: Seconds an idle keep-alive connection stays open (uvicorn's option).
    keep_alive_timeout: float = 5.0
    #: Seconds a client may take to send a request's line and headers: the connection is closed.
    header_timeout: float | None = 10.0
    #: Bytes of a request line plus headers (uvicorn's h11 option): larger is answered 400.
    max_header_size: int = 16 * KIB

    def uvicorn_options(self) -> dict[str, Any]:
        """What uvicorn enforces: idle connections, header sizes (h11 bounds headers; httptools,
        uvicorn's other parser, has no such option) and, through our protocol, header time."""
        from rest_server.header_deadline import header_deadline_protocol

        return {
            "http": "h11" if self.header_timeout is None else header_deadline_protocol(self.header_timeout),
            "timeout_keep_alive": self.keep_alive_timeout,
            "h11_max_incomplete_event_size": self.max_header_size,
        }


#: No limit at all: an application created without ``limits=`` behaves as before limits existed.
UNBOUNDED: Final = RequestLimits(
    max_body_size=None,
    max_decompressed_size=None,
    max_keys=None,
    max_page_size=None,
    body_timeout=None,
    read_timeout=None,
    max_concurrent_requests=None,
    header_timeout=None,
)

#: The ``lochkit serve`` option of each limit, named in every refusal.
OPTIONS: Final = {
    "max_body_size": "--max-body-size",
    "max_decompressed_size": "--max-decompressed-size",
    "max_keys": "--max-keys",
    "max_page_size": "--max-page-size",
    "body_timeout": "--body-timeout",
    "read_timeout": "--read-timeout",
    "max_concurrent_requests": "--max-concurrent-requests",
}

#: Lists in request bodies that name keys or commits, by the JSON field that holds them.
_COUNTED_FIELDS: Final = ("requestedKeys", "operations", "hashesToTransplant", "keyMergeModes")


def _refusal(status: int, message: str, field: str) -> ApiError:
    """A refusal saying what crossed which limit, and the ``lochkit serve`` option that raises it.
    A 4xx is the request's fault (``BAD_REQUEST``, so Nessie's clients raise their bad-request
    error); a 503 is the server's state, which Nessie's model calls ``UNKNOWN``."""
    code = "BAD_REQUEST" if status < 500 else "UNKNOWN"
    return ApiError(status, code, f"{message} ({OPTIONS[field]} raises it)")


async def read_body(request: Request, limits: RequestLimits) -> bytes:
    """The body as JSON text: inflated when it is gzip or deflate, within every size and time limit."""
    max_wire = limits.max_body_size
    declared = request.headers.get("content-length")
    if declared is not None and max_wire is not None:
        try:
            length = int(declared)
        except ValueError:
            raise ApiError(400, "BAD_REQUEST", f"Content-Length '{declared}' is not a number") from None
        if length > max_wire:
            raise _refusal(
                413,
                f"The request body of {length} bytes is over the server's limit of {max_wire} bytes",
                "max_body_size",
            )
    inflater = _inflater(request.headers.get("content-encoding", "identity"), limits.max_decompressed_size)
    body = bytearray()
    received = 0
    refused: ApiError | None = None
    try:
        async with asyncio.timeout(limits.body_timeout):
            async for chunk in request.stream():
                received += len(chunk)
                if max_wire is not None and received > max_wire:
                    raise _refusal(
                        413,
                        f"The request body is over the server's limit of {max_wire} bytes",
                        "max_body_size",
                    )
                if refused is not None:
                    continue  # read to its end (within the wire limit) so the client reads the answer
                if inflater is None:
                    body += chunk
                else:
                    try:
                        inflater.feed(chunk, body)
                    except ApiError as e:
                        refused = e
                        body.clear()
    except TimeoutError:
        raise _refusal(
            408,
            f"The request body did not arrive within the server's limit of {limits.body_timeout:g} s",
            "body_timeout",
        ) from None
    except ClientDisconnect:
        raise ApiError(400, "BAD_REQUEST", "The client disconnected before sending its whole body") from None
    if refused is not None:
        raise refused
    if inflater is not None:
        inflater.finish()
    return bytes(body)


class _Inflater:
    """Inflates a gzip or deflate stream piece by piece, refusing at ``limit`` bytes of output."""

    def __init__(self, encoding: str, limit: int | None) -> None:
        # 32 + 15 window bits: a gzip or zlib header, detected; 15: a zlib header (HTTP's deflate).
        self._stream = zlib.decompressobj(wbits=47 if encoding == "gzip" else 15)
        self._encoding = encoding
        self._limit = limit
        self._size = 0

    def feed(self, data: bytes, into: bytearray) -> None:
        while data and not self._stream.eof:
            piece = (
                _INFLATE_PIECE if self._limit is None else min(_INFLATE_PIECE, self._limit - self._size + 1)
            )
            try:
                out = self._stream.decompress(data, piece)
            except zlib.error as e:
                raise self._invalid(e) from None
            self._size += len(out)
            if self._limit is not None and self._size > self._limit:
                raise _refusal(
                    413,
                    f"The {self._encoding} request body inflates to more than the server's limit "
                    f"of {self._limit} bytes",
                    "max_decompressed_size",
                )
            into += out
            data = self._stream.unconsumed_tail

    def finish(self) -> None:
        if not self._stream.eof:
            raise self._invalid("incomplete or truncated stream")

    def _invalid(self, reason: object) -> ApiError:
        return ApiError(400, "BAD_REQUEST", f"The request body is not valid {self._encoding} data: {reason}")


def _inflater(header: str, limit: int | None) -> _Inflater | None:
    encoding = header.strip().lower()
    if encoding in ("gzip", "deflate"):  # Nessie's Java client compresses request bodies
        return _Inflater(encoding, limit)
    if encoding != "identity":
        raise ApiError(400, "BAD_REQUEST", f"Unsupported Content-Encoding '{encoding}' (gzip, deflate)")
    return None


def check_counts(query: Mapping[str, list[str]], body: Any, limits: RequestLimits) -> None:
    """Refuses a request naming more keys, operations or hashes than ``max_keys`` (400)."""
    limit = limits.max_keys
    if limit is None:
        return
    counted = [("'key' parameters", len(query.get("key", ())))]
    if isinstance(body, dict):
        counted += [
            (f"'{name}'", len(body[name])) for name in _COUNTED_FIELDS if isinstance(body.get(name), list)
        ]
    for what, count in counted:
        if count > limit:
            raise _refusal(
                400, f"The request has {count} {what}, over the server's limit of {limit}", "max_keys"
            )


def cap_page_size(query: dict[str, list[str]], limits: RequestLimits) -> None:
    """Lowers ``max-records`` to ``max_page_size`` (and sets it when absent or not positive), as
    Nessie caps its log's pages; a value that is not a number is left for the handler to refuse."""
    cap = limits.max_page_size
    if cap is None:
        return
    raw = query.get("max-records", [""])[-1].strip()
    try:
        asked = int(raw) if raw else 0
    except ValueError:
        return
    query["max-records"] = [str(asked if 0 < asked <= cap else cap)]


async def within_read_timeout(
    method: str, work: Awaitable[dict[str, Any]], limits: RequestLimits
) -> dict[str, Any]:
    """The result of ``work``, or a 503 once a read took longer than ``read_timeout``.

    The thread doing the work cannot be stopped: it finishes and its result is dropped. Writes
    are never cut short, because a client answered 503 could not know whether its commit landed.
    """
    task = asyncio.ensure_future(work)
    if method != "GET" or limits.read_timeout is None:
        return await task
    done, _ = await asyncio.wait({task}, timeout=limits.read_timeout)
    if not done:
        task.add_done_callback(lambda finished: finished.cancelled() or finished.exception())
        raise _refusal(
            503,
            f"The read took longer than the server's limit of {limits.read_timeout:g} s; try a "
            "smaller page or a narrower filter",
            "read_timeout",
        )
    return task.result()


class ConcurrencyLimit:
    """ASGI middleware: at most ``limit`` HTTP requests in progress; more are answered 503 at
    once, in Nessie's error shape, with ``Retry-After``."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self._app = app
        self._limit = limit
        self._in_progress = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        if self._in_progress >= self._limit:
            error = _refusal(
                503,
                f"The server is at its limit of {self._limit} requests in progress; retry shortly",
                "max_concurrent_requests",
            )
            await JSONResponse(error.body(), status_code=503, headers={"Retry-After": "1"})(
                scope, receive, send
            )
            return
        self._in_progress += 1
        try:
            await self._app(scope, receive, send)
        finally:
            self._in_progress -= 1


def bounded(limits: RequestLimits) -> list[Middleware]:
    """The middleware ``limits`` needs in front of the application."""
    if limits.max_concurrent_requests is None:
        return []
    return [Middleware(ConcurrencyLimit, limit=limits.max_concurrent_requests)]


__all__ = [
    "OPTIONS",
    "UNBOUNDED",
    "ConcurrencyLimit",
    "RequestLimits",
    "bounded",
    "cap_page_size",
    "check_counts",
    "read_body",
    "within_read_timeout",
]
