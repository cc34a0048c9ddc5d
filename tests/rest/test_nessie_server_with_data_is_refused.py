"""The version-store suites reset a Nessie server's repository before every test, so they refuse
a Nessie server given by address that holds anything. The server here is lochkit serve, which
speaks the same API; no Java needed."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager

from conformance.rest_harness import holds_data
from nessie_client import NessieRestClient
from persist_spi.versionstore.refs import RefKind, branch


def test_a_server_holding_a_branch_is_refused_and_keeps_it(
    served_inmemory: Callable[[], AbstractContextManager[str]],
) -> None:
    with served_inmemory() as uri, NessieRestClient(uri) as client:
        main = client.reference(branch("main")).hash
        client.create_reference(branch("dev"), main)
        suite = subprocess.run(
            [
                sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--pyargs", "conformance.all",
                "--backend", "nessie", "--backend-url", f"nessie={uri}", "-k", "VersionStoreReferences",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )  # fmt: skip
        output = suite.stdout + suite.stderr
        assert suite.returncode == 1, output
        assert "refusing to run the suites against the Nessie server" in output, output
        assert "branch dev" in output, output
        names = {r.named_ref.name for r in client.list_references((RefKind.BRANCH,))}
        assert names == {"main", "dev"}


def test_what_a_server_holds_is_named() -> None:
    from backends.inmemory import InMemoryBackendFactory
    from loadgen.targets.in_process import in_process_target
    from rest_server import BackgroundServer, create_app

    with in_process_target(
        InMemoryBackendFactory().create(), backend="inmemory", provisioning="embedded", url=None
    ) as target:
        api = target.api
        with BackgroundServer(create_app(lambda: api)) as server, NessieRestClient(server.uri) as client:
            assert holds_data(client) == ""
            client.create_reference(branch("dev"), client.reference(branch("main")).hash)
            assert holds_data(client) == "branch dev"
