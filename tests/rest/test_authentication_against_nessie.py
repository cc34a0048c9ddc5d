"""The 401 answers lochkit's authentication is pinned to (``data/nessie_unauthenticated.json``) are
what Nessie 0.99 answers: a Nessie server with authentication on (its OIDC extension checking JWTs
against a local public key) gets the same requests. The recording is compared with lochkit on every
run; this re-check against a live server runs when ``LOCHKIT_NESSIE_RECORDINGS=1`` (after a Nessie
version change, or when the recording is made again)."""

from __future__ import annotations

import os

import pytest

from . import auth_cases as cases

pytestmark = pytest.mark.skipif(
    os.environ.get("LOCHKIT_NESSIE_RECORDINGS") != "1",
    reason="re-checks the recorded Nessie answers against a live Nessie server when "
    "LOCHKIT_NESSIE_RECORDINGS=1 (Java 21+, a 245 MB jar)",
)


def test_nessie_answers_every_credential_as_recorded() -> None:
    from provisioning.servers.nessie import start_server
    from provisioning.workdir import make_workdir, remove_workdir

    key = cases.signing_key()
    where = make_workdir("nessie-authentication")
    server = start_server(
        where,
        {
            "nessie.version.store.type": "IN_MEMORY",
            "nessie.server.authentication.enabled": "true",
            # Quarkus checks JWTs against this key without an OIDC server.
            "quarkus.oidc.public-key": cases.public_key_base64(key),
            "quarkus.oidc.token.issuer": cases.ISSUER,
            "quarkus.oidc.token.audience": cases.AUDIENCE,
        },
    )
    try:
        assert cases.answers((server.url or "").removesuffix("/api/v2"), key) == cases.recorded()
    finally:
        server.stop()
        remove_workdir(where)
