"""``lochkit serve``'s request-limit options (the "request limits" group of ``serve --help``) and
the :class:`~rest_server.limits.RequestLimits` they make."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TypeVar

if TYPE_CHECKING:
    from rest_server.limits import RequestLimits

N = TypeVar("N", int, float)
_KIB: Final = 1024
_SIZE: Final = re.compile(r"(\d+)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?")
_UNIT: Final = {"b": 1, "k": _KIB, "m": _KIB**2, "g": _KIB**3}
SIZE_FORMS: Final = "bytes (10485760) or with a binary unit (512KiB, 10MiB, 1GiB; K, M, G alike)"
_OFF: Final = "0 turns it off"


#: Each option: the RequestLimits field it sets, its parser, metavar and help (with the default,
#: which the field's own default is; a test keeps the two equal).
_OPTIONS: Final = (
    (
        "--max-body-size",
        "max_body_size",
        "SIZE",
        f"largest request body as sent, compressed or not: 413 (default 10MiB, as Nessie's; {_OFF})",
    ),
    (
        "--max-decompressed-size",
        "max_decompressed_size",
        "SIZE",
        f"largest gzip/deflate body once inflated, stopped there: 413 (default 10MiB, as Nessie's; {_OFF})",
    ),
    (
        "--max-keys",
        "max_keys",
        "N",
        (
            "most content keys, commit operations or transplanted hashes one request may name: 400 "
            f"(default 10000; {_OFF})"
        ),
    ),
    (
        "--max-page-size",
        "max_page_size",
        "N",
        (
            "most records a page holds: a larger or missing max-records is lowered to it and clients "
            f"page on with the token (default 10000; the log keeps Nessie's 250; {_OFF})"
        ),
    ),
    (
        "--body-timeout",
        "body_timeout",
        "DURATION",
        f"longest a client may take to send its body: 408 (default 30s; {_OFF})",
    ),
    (
        "--read-timeout",
        "read_timeout",
        "DURATION",
        (
            "longest a read (GET) may run before its client is answered 503; the work itself "
            f"finishes unseen, and writes are never cut short (default 60s; {_OFF})"
        ),
    ),
    (
        "--max-concurrent-requests",
        "max_concurrent_requests",
        "N",
        f"requests in progress at once; more are answered 503 at once (default 500; {_OFF})",
    ),
    (
        "--header-timeout",
        "header_timeout",
        "DURATION",
        (
            "longest a client may take to send a request's line and headers: the connection is "
            f"closed (default 10s; {_OFF})"
        ),
    ),
    (
        "--keep-alive-timeout",
        "keep_alive_timeout",
        "DURATION",
        "how long an idle connection stays open (default 5s)",
    ),
    (
        "--max-header-size",
        "max_header_size",
        "SIZE",
        "largest request line plus headers; larger is answered 400 (default 16KiB)",
    ),
)
#: Limits that cannot be turned off (uvicorn needs a value).
_ALWAYS_ON: Final = frozenset({"keep_alive_timeout", "max_header_size"})


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "request limits",
        "What one request may send, name and take; a refusal is Nessie's error answer naming the "
        "limit and the option that raises it.",
    )
    parsers = {"SIZE": _size, "N": _count, "DURATION": _duration}
    for option, field, metavar, help_text in _OPTIONS:
        group.add_argument(
            option,
            dest=field,
            type=parsers[metavar](option, zero_is_off=field not in _ALWAYS_ON),
            # Absent unless given: the defaults are RequestLimits' own.
            default=argparse.SUPPRESS,
            metavar=metavar,
            help=help_text,
        )


def limits_from_args(args: argparse.Namespace) -> RequestLimits:
    """The limits the options give, each one not given at its default."""
    from rest_server.limits import RequestLimits

    given = {field: getattr(args, field) for _, field, _, _ in _OPTIONS if hasattr(args, field)}
    return RequestLimits(**given)


def parse_size(text: str, option: str) -> int:
    """Bytes from :data:`SIZE_FORMS`."""
    match = _SIZE.fullmatch(text.strip().lower())
    if match is None:
        raise ValueError(f"{option} '{text}' is not a size: use {SIZE_FORMS}")
    number, unit = match.groups()
    return int(number) * _UNIT[(unit or "b")[0]]


def _size(option: str, *, zero_is_off: bool) -> Callable[[str], int | None]:
    def parse(text: str) -> int | None:
        try:
            size = parse_size(text, option)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return _positive(size, text, option, zero_is_off)

    return parse


def _count(option: str, *, zero_is_off: bool) -> Callable[[str], int | None]:
    def parse(text: str) -> int | None:
        if not re.fullmatch(r"\s*\d+\s*", text):
            raise argparse.ArgumentTypeError(f"{option} '{text}' is not a whole number (0 turns it off)")
        return _positive(int(text), text, option, zero_is_off)

    return parse


def _duration(option: str, *, zero_is_off: bool) -> Callable[[str], float | None]:
    def parse(text: str) -> float | None:
        from loadgen.durations import parse_duration
        from persist_spi.errors import InputError

        try:
            seconds = parse_duration(text, option)
        except InputError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return _positive(seconds, text, option, zero_is_off)

    return parse


def _positive(value: N, text: str, option: str, zero_is_off: bool) -> N | None:
    if value > 0:
        return value
    if zero_is_off:
        return None
    raise argparse.ArgumentTypeError(f"{option} '{text}' must be more than 0")


__all__ = ["SIZE_FORMS", "add_limit_arguments", "limits_from_args", "parse_size"]
