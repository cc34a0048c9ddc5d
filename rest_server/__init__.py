"""lochkit's server for Nessie's REST API v2 (``lochkit serve``): any Nessie client, an Iceberg
catalog or a Spark job can use a lochkit version store on any backend.

:func:`create_app` builds the ASGI application over a store (anything satisfying
:class:`~persist_spi.versionstore.api.VersionStoreApi`); :mod:`rest_server.runner` serves it with
uvicorn. JSON shapes come from :mod:`persist_spi.versionstore.nessie_json`, the module lochkit's
REST client uses too. See ``docs/rest.md``.
"""

from rest_server.app import PREFIX, SPEC_VERSION, StoreSource, create_app
from rest_server.runner import BackgroundServer, serve_forever

__all__ = ["PREFIX", "SPEC_VERSION", "BackgroundServer", "StoreSource", "create_app", "serve_forever"]
