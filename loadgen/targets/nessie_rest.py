"""The ``nessie`` target: a Nessie server through lochkit's REST API v2 client."""

from __future__ import annotations

from collections.abc import Mapping

from loadgen.targets.target import RequestTimer, Target
from nessie_client.client import NessieRestClient


def nessie_target(
    uri: str,
    *,
    provisioning: str,
    options: Mapping[str, str] | None = None,
    server_version: str = "",
) -> Target:
    """A target over the Nessie server at ``uri`` (the REST API v2 base). Asks the server for its
    configuration first, so an unreachable or wrong address fails here with a clear message."""
    timer = RequestTimer()
    client = NessieRestClient(uri, options=options, on_request=timer)
    try:
        client.config()
        version = server_version or client.server_version()
    except BaseException:
        client.close()
        raise
    target = Target(
        client,
        kind="nessie",
        backend="nessie",
        server_version=version,
        provisioning=provisioning,
        url=uri,
        request_timer=timer,
    )
    target.on_close(client.close)
    return target
