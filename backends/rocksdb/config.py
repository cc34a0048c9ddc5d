"""URL and options of the RocksDB backend: ``rocksdb:///path/to/dir`` (or a plain path), ``sync``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from persist_spi.errors import BackendConfigError


def parse_options(url: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options of ``options`` and the URL's query (``options`` wins); refuses other schemes and
    unknown options."""
    opts: dict[str, Any] = dict(options or {})
    parsed = urlparse(url)
    if parsed.scheme not in ("", "rocksdb", "file"):
        raise BackendConfigError(
            "rocksdb",
            url,
            f"unsupported URL scheme '{parsed.scheme}'",
            "use rocksdb:///path/to/dir or a plain directory path",
        )
    for key, values in parse_qs(parsed.query).items():
        opts.setdefault(key, values[-1])
    unknown = set(opts) - {"sync"}
    if unknown:
        raise BackendConfigError(
            "rocksdb",
            url,
            f"unknown option(s) {', '.join(sorted(unknown))}",
            "the only option is sync=true|false",
        )
    return opts


def data_directory(url: str) -> Path:
    """The directory a ``rocksdb:///path`` URL (or plain path) names; its query is not part of it."""
    parsed = urlparse(url)
    return Path((parsed.netloc + parsed.path) if parsed.scheme else url)


def flag(value: Any) -> bool:
    return str(value).lower() in ("1", "true", "yes") if value is not None else False
