"""The RocksDB backend's factory: a new store (or a temporary one), or one that is already there."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from backends.rocksdb.adapter import RocksDBAdapter
from backends.rocksdb.capabilities import CAPABILITIES
from backends.rocksdb.config import data_directory, flag, layout_option, parse_options
from backends.rocksdb.schema import refuse_foreign_families, store_problem
from backends.rocksdb.statements import row_format
from persist_spi.adapter import Capabilities
from persist_spi.errors import BackendConfigError, BackendStoreMissing
from persist_spi.registry import BackendFactory

#: What open_existing looked for, in its error message.
_STORE_NAMES = {
    "lochkit": "lochkit RocksDB store",
    "nessie": "RocksDB store in Nessie's layout (layout=nessie)",
}


class RocksDBBackendFactory(BackendFactory):
    """``rocksdb:///path/to/dir`` (or a plain path); no URL gives a temporary directory removed on
    close. Option ``sync=true`` fsyncs every write (slower, survives an OS crash); ``layout=nessie``
    stores Nessie's column families, keys and values, so that a Nessie server can open the
    directory (one process at a time)."""

    name = "rocksdb"
    description = "Embedded RocksDB (rocksdict): durable, single process, nothing to start"
    required_modules = ("rocksdict",)
    extra = "rocksdb"
    default_url = None

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> RocksDBAdapter:
        if not url:
            given = dict(options or {})
            layout = layout_option("rocksdb://(temporary)", given)
            path = Path(tempfile.mkdtemp(prefix="lochkit-rocksdb-"))
            return RocksDBAdapter(
                path, sync_writes=flag(given.get("sync")), remove_on_close=True, layout=layout
            )
        opts = parse_options(url, options)
        return RocksDBAdapter(
            data_directory(url), sync_writes=flag(opts.get("sync")), layout=layout_option(url, opts)
        )

    def store_url_in(self, directory: Path) -> str:
        return str(directory)

    def open_existing(
        self, url: str | None = None, options: Mapping[str, Any] | None = None, *, read_only: bool = True
    ) -> RocksDBAdapter:
        if not url:
            raise BackendConfigError(
                "rocksdb", "(no directory)", "no directory was given", "give the store's directory as --url"
            )
        opts = parse_options(url, options)
        layout = layout_option(url, opts)
        path = data_directory(url)
        refuse_foreign_families(path, row_format(layout))
        problem = store_problem(path, row_format(layout))
        if problem is not None:
            raise BackendStoreMissing(
                "rocksdb",
                str(path),
                f"{path} is not a {_STORE_NAMES[layout.name]}: {problem}",
                "Nothing was created. The load commands and lochkit serve write one (by default in "
                ".lochkit/data/rocksdb of the directory they ran in); give the directory of one "
                "(--url rocksdb:///path/to/dir)",
            )
        return RocksDBAdapter(
            path, sync_writes=flag(opts.get("sync")), existing=True, read_only=read_only, layout=layout
        )
