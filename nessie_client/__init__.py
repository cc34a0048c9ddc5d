"""lochkit's client for Nessie's REST API v2: a :class:`~persist_spi.versionstore.api.VersionStoreApi`
over HTTP (see :mod:`nessie_client.client`)."""

from nessie_client.client import DEFAULT_URI, NessieRestClient, NessieUnreachable

__all__ = ["DEFAULT_URI", "NessieRestClient", "NessieUnreachable"]
