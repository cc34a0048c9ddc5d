"""Running the version-store suites over REST.

``serve:BACKEND``: one lochkit REST server per session, on a background thread and a free loopback
port, answers for whichever store the current test installs (the test's own fresh repository, so
tests stay isolated and can still look at the storage under the store). Requests go through
lochkit's Nessie REST client and real HTTP, exactly as any other client's would.

``nessie``: a real Nessie server, provisioned once per session; before each test its repository is
put back to empty: every reference but the default branch deleted, the default branch assigned to
the empty commit. Commits of earlier tests stay in its storage, unreachable, and content ids are
random, so tests do not see each other.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from nessie_client import NessieRestClient
from persist_spi.ids import EMPTY_OBJ_ID
from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.refs import RefKind


class StoreSwitch:
    """The store the REST server answers for; set for the length of one test."""

    def __init__(self) -> None:
        self._store: VersionStoreApi | None = None
        self._lock = threading.Lock()

    def __call__(self) -> VersionStoreApi:
        with self._lock:
            store = self._store
        if store is None:
            raise RuntimeError("lochkit's test REST server got a request while no test was running")
        return store

    @contextlib.contextmanager
    def serving(self, store: VersionStoreApi) -> Iterator[None]:
        with self._lock:
            self._store = store
        try:
            yield
        finally:
            with self._lock:
                self._store = None


class ServeHarness:
    """lochkit's REST server over a switchable store, and clients for it."""

    def __init__(self) -> None:
        from rest_server import BackgroundServer, create_app

        self.switch = StoreSwitch()
        self.server = BackgroundServer(create_app(self.switch)).start()

    @property
    def uri(self) -> str:
        return self.server.uri

    @contextlib.contextmanager
    def client_for(self, store: VersionStoreApi) -> Iterator[NessieRestClient]:
        with self.switch.serving(store), NessieRestClient(self.uri) as client:
            yield client

    def close(self) -> None:
        self.server.stop()


def reset_nessie(client: NessieRestClient) -> None:
    """An empty repository: only the default branch, pointing at the empty commit."""
    default = client.default_branch()
    for info in list(client.list_references()):
        ref = info.named_ref
        if ref.kind is RefKind.BRANCH and ref.name == default:
            if info.hash != EMPTY_OBJ_ID:
                client.assign(ref, info.hash, EMPTY_OBJ_ID)
        else:
            client.delete_reference(ref, info.hash)


def holds_data(client: NessieRestClient) -> str:
    """What a Nessie server holds beyond an empty default branch, in words ("" if nothing): what
    :func:`reset_nessie` would delete."""
    default = client.default_branch()
    others = []
    for info in client.list_references():
        ref = info.named_ref
        if ref.kind is RefKind.BRANCH and ref.name == default:
            if info.hash != EMPTY_OBJ_ID:
                others.append(f"commits on {default}")
        else:
            others.append(f"{ref.kind.name.lower()} {ref.name}")
    if not others:
        return ""
    return ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")


__all__ = ["ServeHarness", "StoreSwitch", "holds_data", "reset_nessie"]
