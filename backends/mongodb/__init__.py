"""MongoDB backend through pymongo; also runs on FerretDB (see ``docs/backends/mongodb.md``).

``adapter`` holds the adapter, ``statements`` the documents, filters and ids, ``schema`` the
collections, indexes and schema version, ``config`` URL and option parsing, ``errors`` pymongo's
errors mapped to lochkit's, ``capabilities`` what the backend declares (per server) and ``factory``
the entry point. pymongo is imported only when an adapter is created.
"""

from backends.mongodb.factory import MongoBackendFactory

__all__ = ["MongoBackendFactory"]
