"""URL and options of the RocksDB backend: ``rocksdb:///path/to/dir`` (or a plain path), ``sync``,
``layout``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, urlparse

from persist_spi.errors import BackendConfigError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout, parse_layout

OFFERED_LAYOUTS: Final = (LOCHKIT_LAYOUT.name, NESSIE_LAYOUT.name)


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
    unknown = set(opts) - {"sync", "layout"}
    if unknown:
        raise BackendConfigError(
            "rocksdb",
            url,
            f"unknown option(s) {', '.join(sorted(unknown))}",
            "the options are sync=true|false and layout=lochkit|nessie",
        )
    return opts


def layout_option(url: str, opts: Mapping[str, Any]) -> StorageLayout:
    """The layout ``layout=`` names: lochkit's own (the default) or Nessie's RocksDB layout."""
    return parse_layout("rocksdb", url, opts.get("layout"), OFFERED_LAYOUTS)


def data_directory(url: str) -> Path:
    """The directory a ``rocksdb:///path`` URL (or plain path) names; its query is not part of it."""
    parsed = urlparse(url)
    return Path((parsed.netloc + parsed.path) if parsed.scheme else url)


def flag(value: Any) -> bool:
    return str(value).lower() in ("1", "true", "yes") if value is not None else False
